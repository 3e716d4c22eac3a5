"""Closed-loop simulation: whole hands or matches played by compiled policies (DESIGN.md §5).

One ``prange`` kernel plays every game of a chunk to the end, asking the compiled policy of the seat
that must act (``gs[g, G_TO_ACT]``, through ``agents.compiled.seat_action``) and applying its
already-checked choice with ``apply_and_tally``.  Every game is
a pure function of (rules, seat policies, params, seed, game id): the deal comes from the engine's
streams and each seat's policy randomness from stream ``core.STREAM_POLICY_BASE + seat`` of
(seed, game id), so results are identical for any thread count, batch size or ``first_game_id``
split.

``simulate`` returns numpy column arrays, one row per (game, hand, seat); in ``"matches"`` mode also
one row per (game, seat) with the match total and the (shared) match win.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .agents.base import params_matrix, policy_id
from .agents.compiled import KNOWN_LEN, seat_action
from .engine.core import (
    STREAM_POLICY_BASE, apply_action, check_invariants, deal_hand, match_winners, reset_game, start_game,
    step,
)
from .engine.layout import (
    A_ALLOW, A_DENY, A_DISCARD, A_LAY, EV_VOID, G_CALLER, G_DEALER, G_HAND_NO, G_HANDS_DONE,
    G_LAST_EVENT, G_TERMINAL, G_TO_ACT, G_TOTAL_RESHUFFLES, G_TOTAL_VOIDS, G_TURN, H_MAX, N_ACTIONS, P_MAX,
    PS_TOTAL,
)
from .engine.state import State
from .jit import njit, pnjit
from .rng import rng_key
from .rulevec import R_COUNT_DENIED_CALLS, R_N_ROUNDS

__all__ = ["simulate", "HAND_COLUMNS", "MATCH_COLUMNS", "ERR_MAX_STEPS", "ERR_ILLEGAL"]

# the kernel writes the hand rows themselves, column by column: out_rows[column, game, hand, seat]
# (one int64 plane per column of ``HAND_COLUMNS``, then ``_R_VALID``), so ``simulate`` hands out
# views of those planes instead of repeating and gathering per-hand and per-seat blocks into rows
# (that cost about 2 % of a greedy run)
_R_GAME, _R_HAND_NO, _R_ROUND, _R_SEAT, _R_POLICY, _R_DEALER, _R_PEN, _R_WON = range(8)
_R_WIN_SHARE, _R_LAID, _R_LAID_TURN, _R_CALLS, _R_TURNS, _R_RESH, _R_VOIDS, _R_EVENT = range(8, 16)
_R_VALID = 16      # 1 for a hand that was played (a match may stop before its last hand)
_NR = 17

ERR_MAX_STEPS = 1          # max_steps reached before the game ended
ERR_ILLEGAL = 2            # a policy returned an action outside the legal mask
# 1000 + INV_* : invariant failure (check=True); 2000 + E_* : step rejected the action (check=True)

HAND_COLUMNS = ("game_id", "hand_no", "round", "seat", "policy_id", "dealer", "penalty", "won",
                "win_share", "laid_down", "laid_down_turn", "calls_used", "turns", "reshuffles",
                "voids", "end_event")        # (in the order of the planes ``_R_*``)
# the columns that are not int64, and their types
_NARROW = {"won": np.int8, "win_share": np.float64, "laid_down": np.int8, "end_event": np.int8}
MATCH_COLUMNS = ("game_id", "seat", "policy_id", "total", "match_win_share")

_CHUNK = 4096
_LANES = 64        # games of a chunk are played by this many lanes, each with its own state row
                   # and scratch (start_game resets a row completely)


@njit
def _new_lane():
    """Per-lane scratch of ``_play_game``: legal mask, per-seat policy keys and counters, per-seat
    lay-down turns and calls, greedy's legality cache and the match winners' flags."""
    return (np.zeros(N_ACTIONS, dtype=np.bool_), np.zeros(P_MAX, dtype=np.uint64),
            np.zeros(P_MAX, dtype=np.int64), np.full(P_MAX, -1, dtype=np.int64),
            np.zeros(P_MAX, dtype=np.int64), np.zeros(KNOWN_LEN, dtype=np.int64),
            np.zeros(P_MAX, dtype=np.bool_))


@njit(inline="always")        # inlined into both loops: sharing it adds no call per step
def apply_and_tally(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore,
                    hwin, rv, b, seat, a, check, mask, laid_turn, calls, count_denied):
    """One step of a closed loop: apply ``seat``'s chosen action ``a`` and keep the hand's tallies
    per seat, the turn it laid down and the calls it was allowed (denied ones too when the rules
    count them).  ``seat_action`` only returns actions checked legal in this very state, so they go
    to ``core.apply_action`` unchecked; ``check`` (tests) sends them through ``core.step``, which
    stops on an illegal one, and checks the engine invariants after it.  Returns 0,
    ``2000 + E_*`` or ``1000 + INV_*``."""
    turn = gs[b, G_TURN]
    caller = gs[b, G_CALLER]
    if check:
        e = step(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                 rv, b, a)
    else:
        e = apply_action(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                         hscore, hwin, rv, b, a)
    if e != 0:
        return 2000 + e
    if check:
        r = check_invariants(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                             hscore, hwin, rv, b, True, mask)
        if r != 0:
            return 1000 + r
    if a >= A_LAY and a < A_DISCARD:
        laid_turn[seat] = turn
    elif a == A_ALLOW:
        calls[caller] += 1
    elif a == A_DENY and count_denied:
        calls[caller] += 1
    return 0


@njit(_nrt=False)
def _play_game(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
               rv, b, n_players, seat_pol, params, seed, game_id, hands_mode, n_hands, max_steps, check,
               out_rows, out_tot, out_mwin, o, lane):
    """Play game ``game_id`` to the end on state row ``b``, its results in row ``o`` of the
    outputs (``out_rows``: planes ``_R_*``); returns 0 or an error code.

    ``lane`` (``_new_lane``) is scratch reused from game to game, so a game allocates nothing and
    the loop runs without reference counting: the state arrays it hands to the policy and the
    engine at every step cost no atomic increments.  Nothing in it carries over between games
    (greedy's legality cache is invalidated by generation, see ``agents.known.forget_known``)."""
    mask, keys, ctrs, laid_turn, calls, known, flags = lane
    if hands_mode:
        reset_game(gs, ps, hscore, hwin, rv, b, n_players, -1, seed, game_id, 1)
        rnd = game_id % rv[R_N_ROUNDS]
        deal_hand(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                  rv, b, rnd, gs[b, G_DEALER])
    else:
        start_game(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                   rv, b, n_players, -1, seed, game_id, n_hands)
    for p in range(P_MAX):
        keys[p] = 0
        if p < n_players:
            keys[p] = rng_key(seed, game_id, STREAM_POLICY_BASE + p)
        ctrs[p] = 0
        laid_turn[p] = -1
        calls[p] = 0
    resh0 = gs[b, G_TOTAL_RESHUFFLES]
    voids0 = gs[b, G_TOTAL_VOIDS]
    hidx = 0
    err = ERR_MAX_STEPS
    count_denied = rv[R_COUNT_DENIED_CALLS] == 1
    for it in range(max_steps):
        if gs[b, G_TERMINAL] != 0:
            err = 0
            break
        seat = gs[b, G_TO_ACT]
        a = seat_action(seat_pol[seat], params[seat], gs, ps, hands, stock, disc, disc_by, minfo, mcards,
                        mas, plan, plan_n, hscore, hwin, rv, b, seat, known, mask, keys[seat],
                        ctrs[seat:seat + 1])
        if a < 0 or a >= N_ACTIONS:
            err = ERR_ILLEGAL
            break
        turn = gs[b, G_TURN]
        hd = gs[b, G_HANDS_DONE]
        hno = gs[b, G_HAND_NO]
        dealer = gs[b, G_DEALER]
        e = apply_and_tally(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                            hscore, hwin, rv, b, seat, a, check, mask, laid_turn, calls, count_denied)
        if e != 0:
            err = e
            break
        if gs[b, G_HANDS_DONE] > hd:
            if hidx < n_hands:
                hs = hno if hno < H_MAX else H_MAX - 1
                w = hwin[b, hs]
                for p in range(n_players):
                    out_rows[_R_GAME, o, hidx, p] = game_id
                    out_rows[_R_HAND_NO, o, hidx, p] = hno
                    out_rows[_R_ROUND, o, hidx, p] = hno % rv[R_N_ROUNDS] + 1
                    out_rows[_R_SEAT, o, hidx, p] = p
                    out_rows[_R_POLICY, o, hidx, p] = seat_pol[p]
                    out_rows[_R_DEALER, o, hidx, p] = dealer
                    out_rows[_R_PEN, o, hidx, p] = hscore[b, hs, p]
                    out_rows[_R_WON, o, hidx, p] = 1 if w == p else 0
                    out_rows[_R_WIN_SHARE, o, hidx, p] = 1 if w == p else 0   # one winner or none
                    out_rows[_R_LAID, o, hidx, p] = 1 if laid_turn[p] >= 0 else 0
                    out_rows[_R_LAID_TURN, o, hidx, p] = laid_turn[p]
                    out_rows[_R_CALLS, o, hidx, p] = calls[p]
                    out_rows[_R_TURNS, o, hidx, p] = turn + 1
                    out_rows[_R_RESH, o, hidx, p] = gs[b, G_TOTAL_RESHUFFLES] - resh0
                    out_rows[_R_VOIDS, o, hidx, p] = gs[b, G_TOTAL_VOIDS] - voids0
                    out_rows[_R_EVENT, o, hidx, p] = gs[b, G_LAST_EVENT]
                    out_rows[_R_VALID, o, hidx, p] = 1
            hidx += 1
            resh0 = gs[b, G_TOTAL_RESHUFFLES]
            voids0 = gs[b, G_TOTAL_VOIDS]
            for p in range(P_MAX):
                laid_turn[p] = -1
                calls[p] = 0
        elif gs[b, G_LAST_EVENT] == EV_VOID:
            # the deal was voided and is replayed: lay-downs and calls of the void deal do not count
            for p in range(P_MAX):
                laid_turn[p] = -1
                calls[p] = 0
    nw = match_winners(gs, ps, hscore, hwin, rv, b, flags)
    for p in range(n_players):
        out_tot[o, p] = ps[b, p, PS_TOTAL]
        out_mwin[o, p] = 1.0 / nw if (flags[p] and nw > 0) else 0.0
    return err


@pnjit
def _rollout_kernel(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                    rv, n_players, seat_pol, params, seed, first_game_id, hands_mode, n_hands, max_steps,
                    check, out_rows, out_tot, out_mwin, out_err, o_from, o_to):
    """Games ``first_game_id + o`` for ``o`` in ``o_from .. o_to - 1``, into row ``o`` of the
    outputs."""
    n_lanes = gs.shape[0]
    for i in prange(n_lanes):
        ln = np.uint64(i)       # one signature for _play_game (see ``jit.pnjit``)
        lane = _new_lane()
        for o in range(o_from + ln, o_to, n_lanes):
            out_err[o] = _play_game(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan,
                                    plan_n, hscore, hwin, rv, ln, n_players, seat_pol, params, seed,
                                    first_game_id + o, hands_mode, n_hands, max_steps, check,
                                    out_rows, out_tot, out_mwin, o, lane)


def simulate(rules, n_players, seat_policies, params=None, n_games=1, seed=0, mode="hands",
             first_game_id=0, hands_per_game=None, max_steps=None, check=False, max_hands=None,
             buy_back="always"):
    """Play ``n_games`` games (ids ``first_game_id ..``) with compiled policies, one per seat.

    ``seat_policies``: policy ids or names (``agents.base``), one per seat.  ``params``: float64
    ``[n_seats, k]`` (``None`` or zeros = each policy's defaults).  ``mode="hands"``: every game is
    one hand of round ``(game_id % n_rounds) + 1`` with a random dealer; ``"matches"``: a whole
    match.  ``check=True`` verifies the engine invariants after every step (slow; tests).

    Matches depend on the rules' ``match_mode``: Caribbean (``fixed_hands_low_total``) plays
    ``hands_per_game`` (default: the rules' ``n_hands``) hands, lowest total wins; the points
    variants are played on the score sheet of ``kalooki_sim.match`` by
    ``match_rollout.simulate_points_matches`` (elimination matches to the last player in, capped
    at ``max_hands``; per-hand matches of ``hands_per_game`` hands; ``buy_back`` = "always",
    "never" or one flag per player), with extra columns (``POINTS_HAND_COLUMNS``,
    ``POINTS_MATCH_COLUMNS``).

    Returns a dict of numpy columns (``HAND_COLUMNS``), one row per (game, hand, seat), ordered
    by game, hand, seat; in ``"matches"`` mode a tuple ``(hands, matches)`` whose second dict has
    one row per (game, seat) (``MATCH_COLUMNS``).  Raises ``RuntimeError`` if a game fails
    (illegal action, invariant failure, ``max_steps`` reached).
    """
    if mode not in ("hands", "matches"):
        raise ValueError(f"mode must be 'hands' or 'matches', not {mode!r}")
    if mode == "matches" and rules.match_mode != "fixed_hands_low_total":
        from .match_rollout import simulate_points_matches

        return simulate_points_matches(rules, n_players, seat_policies, params, n_games, seed,
                                       first_game_id=first_game_id, hands_per_game=hands_per_game,
                                       max_hands=max_hands, buy_back=buy_back, max_steps=max_steps,
                                       check=check)
    n_players = int(n_players)
    if len(seat_policies) != n_players:
        raise ValueError(f"{len(seat_policies)} seat policies for {n_players} players")
    if not 2 <= n_players <= P_MAX:
        raise ValueError(f"n_players must be 2..{P_MAX}")
    pol = np.array([policy_id(p) for p in seat_policies], dtype=np.int64)
    pm = params_matrix(list(pol), params)
    rv = np.ascontiguousarray(rules.to_vector(), dtype=np.int64)
    hands_mode = mode == "hands"
    if hands_mode:
        if hands_per_game not in (None, 1):
            raise ValueError("mode 'hands' plays exactly one hand per game")
        n_hands = 1
    else:
        n_hands = int(hands_per_game) if hands_per_game is not None else int(rules.n_hands)
        if not 1 <= n_hands <= H_MAX:
            raise ValueError(f"hands_per_game must be 1..{H_MAX}")
    if max_steps is None:
        max_steps = n_hands * (int(rules.max_turns_per_hand) + 1) * (6 * n_players + 60) * 4
    n_games = int(n_games)
    first_game_id = int(first_game_id)
    seed = int(seed)
    out_rows = np.zeros((_NR, n_games, n_hands, n_players), dtype=np.int64)
    out_tot = np.zeros((n_games, n_players), dtype=np.int64)
    out_mwin = np.zeros((n_games, n_players), dtype=np.float64)
    out_err = np.zeros(n_games, dtype=np.int64)
    # one state row per lane, reused game after game
    st = State.empty(min(n_games, _LANES))
    for c0 in range(0, n_games, _CHUNK):
        _rollout_kernel(*st.arrays(), rv, n_players, pol, pm, seed, first_game_id, hands_mode, n_hands,
                        int(max_steps), bool(check), out_rows, out_tot, out_mwin, out_err, c0,
                        min(n_games, c0 + _CHUNK))
    bad = np.nonzero(out_err)[0]
    if bad.size:
        i = int(bad[0])
        raise RuntimeError(f"{bad.size} game(s) failed; first: game_id {first_game_id + i} with code "
                           f"{int(out_err[i])} (1 = max_steps, 2 = illegal action, 1000+ invariant, "
                           f"2000+ engine error)")
    # ---- rows (game, hand, seat): the planes as they are when every game played all its hands
    # (always so in "hands" mode), else their played hands
    valid = out_rows[_R_VALID, :, :, 0] == 1                    # [G, H]
    complete = bool(valid.all())
    rows = {}
    for i, name in enumerate(HAND_COLUMNS):
        col = out_rows[i].reshape(-1) if complete else out_rows[i][valid].reshape(-1)
        rows[name] = col.astype(_NARROW[name]) if name in _NARROW else col
    if hands_mode:
        return rows
    gm = np.repeat(np.arange(n_games, dtype=np.int64), n_players)
    sm = np.tile(np.arange(n_players, dtype=np.int64), n_games)
    matches = {
        "game_id": first_game_id + gm,
        "seat": sm,
        "policy_id": pol[sm] if n_games else np.zeros(0, dtype=np.int64),
        "total": out_tot.reshape(-1).copy(),
        "match_win_share": out_mwin.reshape(-1).copy(),
    }
    return rows, matches
