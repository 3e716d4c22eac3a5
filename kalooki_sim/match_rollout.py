"""Whole matches of the points variants (K40, K51, K101, NA15, AMER) in the closed loop.

``rollout.simulate(..., mode="matches")`` calls :func:`simulate_points_matches` for every rules
object whose ``match_mode`` is not ``fixed_hands_low_total`` (Caribbean keeps the engine's own hand
sequencing in ``rollout``).  One ``prange`` kernel plays each match hand by hand and writes every
hand on the compiled score sheet of ``kalooki_sim.match`` (``start_match`` / ``settle_hand`` /
``final_money``):

* ``elimination_pool`` (K40, K51, K101): hands are dealt until one player is left (he takes the
  pool), or until ``max_hands`` hands have been played (the match is then reported with
  ``finished = 0``: nobody takes the pool and nobody wins it).  Only the players still in the game
  are dealt in: engine seat ``i`` of a hand is the ``i``-th player still in (real players keep their
  order, so the direction of play is unchanged).  The first dealer is drawn from the game's own
  stream (as ``engine.core.start_game`` does); after every hand the deal passes, in the rules'
  ``dealer_rotation`` direction, to the next player still in.  Buy-backs follow a per-player flag
  (default: always buy back when the rules allow it, ``match.BUY_BACK_ALWAYS``).
* ``per_hand_points`` (NA15) and ``per_hand_cards`` (AMER): a match is ``hands_per_game`` hands
  (default ``rules.n_hands``, or :data:`DEFAULT_HANDS_PER_MATCH` when the rules leave it open) with
  everybody dealt in; each hand is paid as it ends.  The match is won by the highest money (ties
  shared).

A hand that ends without a winner (turn cap, void cap) is played and recorded but changes nothing on
the sheet (docs/match-scoring.md MS8); the deal still passes on.  Policies, parameters and policy
RNG streams belong to the real player (``seat`` in every output is the real player), so every match
is a pure function of (rules, policies, params, buy-back flags, seed, game id): identical for any
thread count, chunk size or ``first_game_id`` split.  Successive deals of a match use successive
engine deal streams (``G_DEAL_NO``).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .agents.base import params_matrix, policy_id
from .agents.compiled import KNOWN_LEN, seat_action
from .engine.core import STREAM_POLICY_BASE, deal_hand, hand_penalty_of, start_game
from .engine.layout import (
    EV_KALOOKI, EV_WENT_OUT, G_DEALER, G_HANDS_DONE,
    G_LAID_THIS_TURN, G_LAST_EVENT, G_NP, G_TERMINAL, G_TO_ACT, G_TOTAL_RESHUFFLES, G_TOTAL_VOIDS,
    G_TURN, H_MAX, JOKER, N_ACTIONS, N_TYPES, NPS, P_MAX, PS_CALLS, PS_TOTAL,
)
from .engine.state import State
from .jit import njit, pnjit
from .match import (
    BUY_BACK_ALWAYS, BUY_BACK_NEVER, ERR_BAD_WINNER, EV_PAYMENT, EV_PENALTY, EV_STATUS, HOW_KALOOKI,
    HOW_RIP, HOW_VOID, MATCH_ON, N_EV,
    final_money, settle_hand, start_match,
)
from .rng import rng_key
from .rollout import _LANES, apply_and_tally
from .rulevec import (
    DEALER_ROTATION_LEFT, MATCH_MODE_ELIMINATION_POOL, R_COUNT_DENIED_CALLS, R_DEALER_ROTATION,
    R_DOWN_AND_OUT_MULTIPLIER, R_KALOOKI_PENALTY_MULTIPLIER, R_MATCH_MODE,
)

__all__ = ["simulate_points_matches", "POINTS_HAND_COLUMNS", "POINTS_MATCH_COLUMNS",
           "DEFAULT_HANDS_PER_MATCH", "DEFAULT_MAX_HANDS", "ERR_WINNER", "ERR_SCORE", "ERR_SHEET"]

DEFAULT_HANDS_PER_MATCH = 10     # per-hand modes when rules.n_hands is "none" (NA15, AMER)
DEFAULT_MAX_HANDS = 200          # hand cap of an elimination match

ERR_MAX_STEPS = 1                # a hand took more than the step budget
ERR_ILLEGAL = 2                  # a policy returned an action outside the legal mask
ERR_WINNER = 3                   # internal: the hand's winner could not be identified
ERR_SCORE = 4                    # internal: reconstructed penalties differ from the engine's hscore
ERR_SHEET = 5                    # internal: settle_hand refused the winner (not in the game)
# 1000 + INV_* : invariant failure (check=True); 2000 + E_* : step rejected the action (check=True)

# per (hand, real player) outputs out_seat[o, h, p, *]
(_S_IN, _S_SEAT, _S_PEN, _S_VALUE, _S_CARDS, _S_JOKERS, _S_WON, _S_LAID, _S_LAID_TURN, _S_CALLS,
 _S_SHEET_PEN, _S_PAY, _S_TOTAL, _S_STATUS) = range(14)
_NS = 14
# per hand out_hand[o, h, *]
_H_VALID, _H_NO, _H_DEALER, _H_TURNS, _H_RESH, _H_EVENT, _H_WINNER, _H_VOIDS, _H_NIN, _H_POOL = range(10)
_NH = 10
# per (game, real player) out_pl[o, p, *]
_M_TOTAL, _M_UNITS, _M_MONEY, _M_BB, _M_ACTIVE, _M_HANDS, _M_RIPS, _M_KALOOKIS = range(8)
_NM = 8
# per game out_game[o, *]
_X_POOL, _X_FINISHED, _X_WINNER, _X_HANDS = range(4)
_NX = 4

POINTS_HAND_COLUMNS = (
    "game_id", "hand_no", "round", "seat", "policy_id", "dealer", "penalty", "won", "win_share",
    "laid_down", "laid_down_turn", "calls_used", "turns", "reshuffles", "voids", "end_event",
    # points matches only
    "engine_seat", "players", "hand_value", "cards_left", "jokers_left", "sheet_penalty", "payment",
    "total", "status", "pool",
)
POINTS_MATCH_COLUMNS = (
    "game_id", "seat", "policy_id", "total", "match_win_share",
    # points matches only
    "units", "money", "buy_backs", "eliminated", "hands_played", "rips", "kalookis", "pool",
    "finished", "match_hands",
)

_CELLS = 4_000_000               # int64 cells of out_seat per chunk (~32 MB)


@njit
def _play_match(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                rv, b, n_players, seat_pol, params, seed, game_id, hand_limit, steps_per_hand, check,
                wants_bb, out_seat, out_hand, out_pl, out_game, o):
    """Play match ``game_id`` to its end (or the hand cap) on state row ``b``, its results in row
    ``o`` of the outputs; returns 0 or an error code."""
    n = n_players
    elim = rv[R_MATCH_MODE] == MATCH_MODE_ELIMINATION_POOL
    # ---- the score sheet, indexed by real player
    active = np.zeros(P_MAX, dtype=np.int64)
    totals = np.zeros(P_MAX, dtype=np.int64)
    units = np.zeros(P_MAX, dtype=np.int64)
    bbused = np.zeros(P_MAX, dtype=np.int64)
    pool = np.zeros(1, dtype=np.int64)
    events = np.zeros((P_MAX, N_EV), dtype=np.int64)
    pens = np.zeros(P_MAX, dtype=np.int64)
    ncards = np.zeros(P_MAX, dtype=np.int64)
    njok = np.zeros(P_MAX, dtype=np.int64)
    wants = np.zeros(P_MAX, dtype=np.int8)
    money = np.zeros(P_MAX, dtype=np.int64)
    played = np.zeros(P_MAX, dtype=np.int64)
    rips = np.zeros(P_MAX, dtype=np.int64)
    kals = np.zeros(P_MAX, dtype=np.int64)
    for p in range(n):
        wants[p] = wants_bb[p]
    start_match(rv, n, active, totals, units, bbused, pool)
    # ---- policies: per real player
    keys = np.zeros(P_MAX, dtype=np.uint64)
    ctrs = np.zeros(P_MAX, dtype=np.int64)
    for p in range(n):
        keys[p] = rng_key(seed, game_id, STREAM_POLICY_BASE + p)
    # ---- engine seat i <-> real player act[i]
    act = np.zeros(P_MAX, dtype=np.int64)
    calls_real = np.zeros(P_MAX, dtype=np.int64)
    laid_turn = np.full(P_MAX, -1, dtype=np.int64)
    calls = np.zeros(P_MAX, dtype=np.int64)
    mask = np.zeros(N_ACTIONS, dtype=np.bool_)
    known = np.zeros(KNOWN_LEN, dtype=np.int64)
    count_denied = rv[R_COUNT_DENIED_CALLS] == 1
    rot = 1 if rv[R_DEALER_ROTATION] == DEALER_ROTATION_LEFT else -1
    kal_mult = rv[R_KALOOKI_PENALTY_MULTIPLIER]
    dao_mult = rv[R_DOWN_AND_OUT_MULTIPLIER]

    start_game(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
               rv, b, n, -1, seed, game_id, 1)
    dealer = gs[b, G_DEALER]             # hand 0: everybody is in, engine seat = real player
    n_in = n
    for i in range(n):
        act[i] = i
    mwin = MATCH_ON
    h = 0
    while h < hand_limit:
        if h > 0:
            # calls of scope "game" stay with the real player
            for i in range(n_in):
                calls_real[act[i]] = ps[b, i, PS_CALLS]
            for k in range(1, n + 1):
                q = ((dealer + rot * k) % n + n) % n
                if active[q] != 0:
                    dealer = q
                    break
            n_in = 0
            dseat = 0
            for p in range(n):
                if active[p] != 0:
                    if p == dealer:
                        dseat = n_in
                    act[n_in] = p
                    n_in += 1
            for i in range(P_MAX):
                for j in range(NPS):
                    ps[b, i, j] = 0
            for i in range(n_in):
                ps[b, i, PS_CALLS] = calls_real[act[i]]
                ps[b, i, PS_TOTAL] = totals[act[i]]
            gs[b, G_NP] = n_in
            deal_hand(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore,
                      hwin, rv, b, h, dseat)
        # ---- play the hand
        for i in range(P_MAX):
            laid_turn[i] = -1
            calls[i] = 0
        resh0 = gs[b, G_TOTAL_RESHUFFLES]
        voids0 = gs[b, G_TOTAL_VOIDS]
        hd = gs[b, G_HANDS_DONE]
        err = ERR_MAX_STEPS
        last_seat = -1
        last_turn = 0
        for it in range(steps_per_hand):
            if gs[b, G_TERMINAL] != 0:
                err = ERR_WINNER
                break
            seat = gs[b, G_TO_ACT]
            p = act[seat]
            a = seat_action(seat_pol[p], params[p], gs, ps, hands, stock, disc, disc_by, minfo, mcards,
                            mas, plan, plan_n, hscore, hwin, rv, b, seat, known, mask, keys[p],
                            ctrs[p:p + 1])
            if a < 0 or a >= N_ACTIONS:
                err = ERR_ILLEGAL
                break
            turn = gs[b, G_TURN]
            v0 = gs[b, G_TOTAL_VOIDS]
            e = apply_and_tally(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                                hscore, hwin, rv, b, seat, a, check, mask, laid_turn, calls, count_denied)
            if e != 0:
                err = e
                break
            if gs[b, G_HANDS_DONE] > hd:
                err = 0
                last_seat = seat
                last_turn = turn
                break
            if gs[b, G_TOTAL_VOIDS] > v0:
                # the deal was voided and is replayed: lay-downs and calls of the void deal do not count
                for i in range(P_MAX):
                    laid_turn[i] = -1
                    calls[i] = 0
        if err != 0:
            return err
        # ---- read the hand's result (the engine stopped: it was the last hand it was told about)
        ev = gs[b, G_LAST_EVENT]
        wseat = -1
        if ev == EV_WENT_OUT or ev == EV_KALOOKI:
            wseat = last_seat
            left = 0
            for t in range(N_TYPES):
                left += hands[b, wseat, t]
            if left != 0:
                return ERR_WINNER
        if h < H_MAX and hwin[b, h] != wseat:
            return ERR_WINNER
        sheet_mult = 1
        if ev == EV_WENT_OUT and gs[b, G_LAID_THIS_TURN] == 1:
            sheet_mult = dao_mult            # down and out (no kalooki in these rules)
        eng_mult = kal_mult if ev == EV_KALOOKI else sheet_mult
        for p in range(P_MAX):
            pens[p] = 0
            ncards[p] = 0
            njok[p] = 0
        for i in range(n_in):
            p = act[i]
            val = hand_penalty_of(hands, rv, b, i)
            c = 0
            for t in range(N_TYPES):
                c += hands[b, i, t]
            ncards[p] = c
            njok[p] = hands[b, i, JOKER]
            eng_pen = 0 if i == wseat else val * eng_mult
            pens[p] = 0 if i == wseat else val * sheet_mult
            if h < H_MAX and hscore[b, h, i] != eng_pen:
                return ERR_SCORE
            out_seat[o, h, p, _S_IN] = 1
            out_seat[o, h, p, _S_SEAT] = i
            out_seat[o, h, p, _S_PEN] = eng_pen
            out_seat[o, h, p, _S_VALUE] = val
            out_seat[o, h, p, _S_CARDS] = c
            out_seat[o, h, p, _S_JOKERS] = njok[p]
            out_seat[o, h, p, _S_WON] = 1 if i == wseat else 0
            out_seat[o, h, p, _S_LAID] = 1 if laid_turn[i] >= 0 else 0
            out_seat[o, h, p, _S_LAID_TURN] = laid_turn[i]
            out_seat[o, h, p, _S_CALLS] = calls[i]
            played[p] += 1
        wreal = act[wseat] if wseat >= 0 else -1
        how = HOW_VOID
        if wreal >= 0:
            how = HOW_KALOOKI if ev == EV_KALOOKI else HOW_RIP
            if ev == EV_KALOOKI:
                kals[wreal] += 1
            else:
                rips[wreal] += 1
        res = settle_hand(rv, n, active, totals, units, bbused, pool, wreal, how, pens, ncards, njok,
                          wants, events)
        if res == ERR_BAD_WINNER:
            return ERR_SHEET
        for i in range(n_in):
            p = act[i]
            out_seat[o, h, p, _S_SHEET_PEN] = events[p, EV_PENALTY]
            out_seat[o, h, p, _S_PAY] = events[p, EV_PAYMENT]
            out_seat[o, h, p, _S_TOTAL] = totals[p]
            out_seat[o, h, p, _S_STATUS] = events[p, EV_STATUS]
        out_hand[o, h, _H_VALID] = 1
        out_hand[o, h, _H_NO] = h
        out_hand[o, h, _H_DEALER] = dealer
        out_hand[o, h, _H_TURNS] = last_turn + 1
        out_hand[o, h, _H_RESH] = gs[b, G_TOTAL_RESHUFFLES] - resh0
        out_hand[o, h, _H_EVENT] = ev
        out_hand[o, h, _H_WINNER] = wreal
        out_hand[o, h, _H_VOIDS] = gs[b, G_TOTAL_VOIDS] - voids0
        out_hand[o, h, _H_NIN] = n_in
        out_hand[o, h, _H_POOL] = pool[0]
        h += 1
        if elim and res >= 0:
            mwin = res
            break
    final_money(rv, n, active, units, bbused, pool, money)
    for p in range(n):
        out_pl[o, p, _M_TOTAL] = totals[p]
        out_pl[o, p, _M_UNITS] = units[p]
        out_pl[o, p, _M_MONEY] = money[p]
        out_pl[o, p, _M_BB] = bbused[p]
        out_pl[o, p, _M_ACTIVE] = active[p]
        out_pl[o, p, _M_HANDS] = played[p]
        out_pl[o, p, _M_RIPS] = rips[p]
        out_pl[o, p, _M_KALOOKIS] = kals[p]
    out_game[o, _X_POOL] = pool[0]
    out_game[o, _X_FINISHED] = 1 if (mwin >= 0 or not elim) else 0
    out_game[o, _X_WINNER] = mwin
    out_game[o, _X_HANDS] = h
    return 0


@pnjit
def _match_kernel(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                  rv, n_players, seat_pol, params, seed, first_game_id, hand_limit, steps_per_hand, check,
                  wants_bb, out_seat, out_hand, out_pl, out_game, out_err):
    n = out_err.shape[0]
    n_lanes = gs.shape[0]                # one state row per lane, reused match after match
    for i in prange(n_lanes):
        ln = np.uint64(i)                # one signature for _play_match (see ``jit.pnjit``)
        for o in range(ln, n, n_lanes):
            out_err[o] = _play_match(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan,
                                     plan_n, hscore, hwin, rv, ln, n_players, seat_pol, params, seed,
                                     first_game_id + o, hand_limit, steps_per_hand, check, wants_bb,
                                     out_seat, out_hand, out_pl, out_game, o)


def _buy_back_flags(buy_back, n_players: int) -> np.ndarray:
    """Per-player buy-back flags from "always" / "never" / a bool / one bool per player."""
    if isinstance(buy_back, str):
        if buy_back not in (BUY_BACK_ALWAYS, BUY_BACK_NEVER):
            raise ValueError(f"buy_back must be 'always', 'never', a bool or one bool per player, not {buy_back!r}")
        return np.full(n_players, 1 if buy_back == BUY_BACK_ALWAYS else 0, dtype=np.int8)
    if isinstance(buy_back, (bool, np.bool_)):
        return np.full(n_players, int(buy_back), dtype=np.int8)
    flags = list(buy_back)
    if len(flags) != n_players:
        raise ValueError(f"buy_back must give {n_players} values (one per player), got {len(flags)}")
    return np.asarray([1 if f else 0 for f in flags], dtype=np.int8)


def hands_per_match(rules, hands_per_game=None, max_hands=None) -> int:
    """Hands a match may last: the cap of an elimination match, or the fixed length of a per-hand match."""
    if rules.match_mode == "elimination_pool":
        if hands_per_game is not None:
            raise ValueError(f"{rules.name} plays each match to elimination; use max_hands to cap it, "
                             "not hands_per_game")
        n = DEFAULT_MAX_HANDS if max_hands is None else int(max_hands)
        what = "max_hands"
    else:
        if hands_per_game is not None:
            n = int(hands_per_game)
        elif rules.n_hands is not None:
            n = int(rules.n_hands)
        else:
            n = DEFAULT_HANDS_PER_MATCH
        what = "hands_per_game"
    if not 1 <= n <= 100_000:
        raise ValueError(f"{what} must be 1..100000, got {n}")
    return n


def simulate_points_matches(rules, n_players, seat_policies, params=None, n_games=1, seed=0,
                            first_game_id=0, hands_per_game=None, max_hands=None, buy_back=BUY_BACK_ALWAYS,
                            max_steps=None, check=False):
    """Whole matches of a points variant; returns ``(hands, matches)`` dicts of numpy columns.

    ``hands``: one row per (game, hand, player dealt into that hand), ordered by game, hand, seat
    (``POINTS_HAND_COLUMNS``; ``seat`` is the real player, ``engine_seat`` his seat in that hand).
    ``matches``: one row per (game, player) (``POINTS_MATCH_COLUMNS``).  ``max_hands`` caps an
    elimination match (default ``DEFAULT_MAX_HANDS``); ``hands_per_game`` is the length of a
    per-hand match; ``buy_back``: "always" (default), "never", a bool or one bool per player;
    ``max_steps``: step budget per hand.  Raises ``RuntimeError`` if a game fails.
    """
    if rules.match_mode == "fixed_hands_low_total":
        raise ValueError("Caribbean matches are played by rollout.simulate")
    n_players = int(n_players)
    if len(seat_policies) != n_players:
        raise ValueError(f"{len(seat_policies)} seat policies for {n_players} players")
    if not 2 <= n_players <= P_MAX:
        raise ValueError(f"n_players must be 2..{P_MAX}")
    pol = np.array([policy_id(p) for p in seat_policies], dtype=np.int64)
    pm = params_matrix(list(pol), params)
    rv = np.ascontiguousarray(rules.to_vector(), dtype=np.int64)
    wants = _buy_back_flags(buy_back, n_players)
    H = hands_per_match(rules, hands_per_game, max_hands)
    if max_steps is None:
        max_steps = (int(rules.max_turns_per_hand) + 1) * (6 * n_players + 60) * 4 * (int(rules.max_void_replays) + 1)
    n_games = int(n_games)
    first_game_id = int(first_game_id)
    seed = int(seed)
    chunk = max(1, min(4096, _CELLS // (H * P_MAX * _NS)))
    hand_parts, match_parts = [], []
    for c0 in range(0, n_games, chunk):
        c1 = min(n_games, c0 + chunk)
        B = c1 - c0
        st = State.empty(min(B, _LANES))
        out_seat = np.zeros((B, H, P_MAX, _NS), dtype=np.int64)
        out_hand = np.zeros((B, H, _NH), dtype=np.int64)
        out_pl = np.zeros((B, P_MAX, _NM), dtype=np.int64)
        out_game = np.zeros((B, _NX), dtype=np.int64)
        out_err = np.zeros(B, dtype=np.int64)
        _match_kernel(*st.arrays(), rv, n_players, pol, pm, seed, first_game_id + c0, H, int(max_steps),
                      bool(check), wants, out_seat, out_hand, out_pl, out_game, out_err)
        bad = np.nonzero(out_err)[0]
        if bad.size:
            i = int(bad[0])
            raise RuntimeError(f"{bad.size} match(es) failed; first: game_id {first_game_id + c0 + i} with "
                               f"code {int(out_err[i])} (1 = max_steps, 2 = illegal action, 3/4/5 = internal "
                               f"scoring error, 1000+ invariant, 2000+ engine error)")
        hand_parts.append(_hand_rows(rules, pol, first_game_id + c0, out_seat, out_hand))
        match_parts.append(_match_rows(rules, pol, n_players, first_game_id + c0, out_pl, out_game))
    if not hand_parts:
        hand_parts.append(_hand_rows(rules, pol, first_game_id, np.zeros((0, H, P_MAX, _NS), np.int64),
                                     np.zeros((0, H, _NH), np.int64)))
        match_parts.append(_match_rows(rules, pol, n_players, first_game_id,
                                       np.zeros((0, P_MAX, _NM), np.int64), np.zeros((0, _NX), np.int64)))
    hands = {k: np.concatenate([d[k] for d in hand_parts]) for k in POINTS_HAND_COLUMNS}
    matches = {k: np.concatenate([d[k] for d in match_parts]) for k in POINTS_MATCH_COLUMNS}
    return hands, matches


def _hand_rows(rules, pol, first, out_seat, out_hand):
    dealt = (out_hand[:, :, _H_VALID] == 1)[:, :, None] & (out_seat[:, :, :, _S_IN] == 1)
    gi, hi, si = np.nonzero(dealt)                               # C order: game, hand, real seat
    sb = out_seat[gi, hi, si]
    hb = out_hand[gi, hi]
    won = sb[:, _S_WON]
    hand_no = hb[:, _H_NO]
    return {
        "game_id": (first + gi).astype(np.int64),
        "hand_no": hand_no.astype(np.int64),
        "round": (hand_no % int(rules.n_rounds) + 1).astype(np.int64),
        "seat": si.astype(np.int64),
        "policy_id": pol[si].astype(np.int64),
        "dealer": hb[:, _H_DEALER].copy(),
        "penalty": sb[:, _S_PEN].copy(),
        "won": won.astype(np.int8),
        "win_share": won.astype(np.float64),
        "laid_down": sb[:, _S_LAID].astype(np.int8),
        "laid_down_turn": sb[:, _S_LAID_TURN].copy(),
        "calls_used": sb[:, _S_CALLS].copy(),
        "turns": hb[:, _H_TURNS].copy(),
        "reshuffles": hb[:, _H_RESH].copy(),
        "voids": hb[:, _H_VOIDS].copy(),
        "end_event": hb[:, _H_EVENT].astype(np.int8),
        "engine_seat": sb[:, _S_SEAT].astype(np.int8),
        "players": hb[:, _H_NIN].astype(np.int8),
        "hand_value": sb[:, _S_VALUE].copy(),
        "cards_left": sb[:, _S_CARDS].astype(np.int16),
        "jokers_left": sb[:, _S_JOKERS].astype(np.int8),
        "sheet_penalty": sb[:, _S_SHEET_PEN].copy(),
        "payment": sb[:, _S_PAY].copy(),
        "total": sb[:, _S_TOTAL].copy(),
        "status": sb[:, _S_STATUS].astype(np.int8),
        "pool": hb[:, _H_POOL].copy(),
    }


def _match_rows(rules, pol, n_players, first, out_pl, out_game):
    G = out_pl.shape[0]
    pl = out_pl[:, :n_players]
    elim = rules.match_mode == "elimination_pool"
    money = pl[:, :, _M_MONEY]
    if elim:
        share = np.zeros((G, n_players), dtype=np.float64)
        w = out_game[:, _X_WINNER]
        ok = w >= 0
        share[np.nonzero(ok)[0], w[ok]] = 1.0
    else:                                                       # highest money wins, ties shared
        best = money == money.max(axis=1, keepdims=True) if G else np.zeros((0, n_players), bool)
        share = best / np.maximum(best.sum(axis=1, keepdims=True), 1)
    gm = np.repeat(np.arange(G, dtype=np.int64), n_players)
    sm = np.tile(np.arange(n_players, dtype=np.int64), G)
    rep = lambda col: np.repeat(out_game[:, col], n_players)
    return {
        "game_id": first + gm,
        "seat": sm,
        "policy_id": pol[sm].astype(np.int64),
        "total": pl[:, :, _M_TOTAL].reshape(-1).copy(),
        "match_win_share": share.reshape(-1).astype(np.float64),
        "units": pl[:, :, _M_UNITS].reshape(-1).copy(),
        "money": money.reshape(-1).copy(),
        "buy_backs": pl[:, :, _M_BB].reshape(-1).astype(np.int8),
        "eliminated": (1 - pl[:, :, _M_ACTIVE]).reshape(-1).astype(np.int8),
        "hands_played": pl[:, :, _M_HANDS].reshape(-1).copy(),
        "rips": pl[:, :, _M_RIPS].reshape(-1).copy(),
        "kalookis": pl[:, :, _M_KALOOKIS].reshape(-1).copy(),
        "pool": rep(_X_POOL).astype(np.int64),
        "finished": rep(_X_FINISHED).astype(np.int8),
        "match_hands": rep(_X_HANDS).astype(np.int64),
    }

