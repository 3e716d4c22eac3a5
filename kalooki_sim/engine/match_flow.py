"""The match flow: hand after hand on one score sheet, for every match mode (docs/rules.md §2.2, §2.5-§2.7).

The engine plays one hand and stops (``core._finish_hand``: the hand is scored, the state
terminal).  Everything between hands happens here and nowhere else: the hand's result goes on the
score sheet of ``kalooki_sim.engine.match`` (``settle_hand``, which applies the one
``penalty_multiplier``), the sheet says whether the match goes on, and if it does the next hand is
dealt, by the next dealer, to the players still in.

* ``fixed_hands_low_total`` (Caribbean): hands ``0 .. G_LAST_HAND``, everybody in; lowest total
  wins (ties per ``tie_rule``, ``match_winners``).
* ``elimination_pool`` (K40, K51, K101): hands until one player is left (he takes the pool) or the
  hand cap ``G_LAST_HAND`` (the match is then unfinished: nobody takes the pool or wins).  Only the
  players still in are dealt in: engine seat ``i`` of a hand is the ``i``-th player still in (real
  players keep their order, so the direction of play is unchanged).  Buy-backs follow the
  per-player flags ``SP_WANTS`` (docs/match-scoring.md).
* ``per_hand_points`` / ``per_hand_cards`` (NA15, AMER): a fixed number of hands, everybody in,
  each paid as it ends; the highest money wins (ties shared).

After every hand the deal passes, in the rules' ``dealer_rotation`` direction, to the next player
still in.  Calls of scope "game" stay with the real player.  A hand without a winner (turn cap,
void cap) changes nothing on the sheet but still counts as played.

The sheet of a game is three arrays (``new_sheet`` makes them for a batch; the kernels here take
one game's rows), indexed by *real* player: ``sp[SP_*, p]`` (one row per quantity, so
``sp[SP_TOTAL]`` is the contiguous vector ``settle_hand`` takes), ``sx[SX_*]`` (scalars) and
``sev[p, match.EV_*]`` (what the last hand did to each player).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import (
    DEALER_ROTATION_LEFT, R_DEALER_ROTATION, R_MATCH_MODE, R_TIE_RULE, TIE_RULE_FEWEST_POINTS_LAST_HAND,
    TIE_RULE_SHARED,
)

from .core import deal_hand, hand_penalty_of, reset_game, start_game
from .layout import (
    G_DEALER, G_HAND_HOW, G_HAND_NO, G_HAND_WINNER, G_HANDS_DONE, G_LAST_HAND, G_NP, H_MAX, JOKER, N_TYPES, NPS, P_MAX,
    PS_CALLS, PS_TOTAL,
)
from .match import (
    HOW_KALOOKI, MATCH_MODE_ELIMINATION_POOL, MATCH_MODE_FIXED_HANDS_LOW_TOTAL, MATCH_ON, N_EV, final_money,
    settle_hand, start_match,
)

__all__ = [
    "SP_ACTIVE", "SP_TOTAL", "SP_UNITS", "SP_BB", "SP_WANTS", "SP_VALUE", "SP_CARDS", "SP_JOKERS",
    "SP_MONEY", "SP_PLAYED", "SP_RIPS", "SP_KALOOKIS", "SP_CALLS", "SP_REAL", "SP_SEAT", "SP_MWIN", "NSP",
    "SX_N", "SX_N_IN", "SX_DEALER", "SX_POOL", "SX_HANDS", "SX_WINNER", "SX_OVER", "SX_FINISHED",
    "SX_N_MWIN", "NSX",
    "Sheet", "new_sheet", "match_winners", "begin_match", "begin_from_position", "end_hand", "next_hand",
]

# sp[SP_*, p]: per real player p (SP_REAL is per engine seat: the real player in that seat)
(SP_ACTIVE, SP_TOTAL, SP_UNITS, SP_BB, SP_WANTS, SP_VALUE, SP_CARDS, SP_JOKERS, SP_MONEY, SP_PLAYED,
 SP_RIPS, SP_KALOOKIS, SP_CALLS, SP_REAL, SP_SEAT, SP_MWIN) = range(16)
NSP = 16
# sx[SX_*]
# (SX_DEALER: the real player dealing the current hand)
SX_N, SX_N_IN, SX_DEALER, SX_POOL, SX_HANDS, SX_WINNER, SX_OVER, SX_FINISHED, SX_N_MWIN = range(9)
NSX = 9


class Sheet(NamedTuple):
    """The score sheets of a batch, as the loop's kernels take them: per player (``sp[B, SP_*,
    P_MAX]``), per match (``sx[B, SX_*]``) and the last hand's events (``sev[B, P_MAX, EV_*]``)."""

    sp: np.ndarray
    sx: np.ndarray
    sev: np.ndarray


def new_sheet(batch: int) -> Sheet:
    """Empty sheets for ``batch`` games."""
    return Sheet(np.zeros((batch, NSP, P_MAX), dtype=np.int64), np.zeros((batch, NSX), dtype=np.int64),
                 np.zeros((batch, P_MAX, N_EV), dtype=np.int64))


@njit(_nrt=False)
def _open_sheet(gs, rv, g, sp, sx, wants):
    n = gs[g, G_NP]
    for j in range(NSP):
        for p in range(P_MAX):
            sp[j, p] = 0
    for j in range(NSX):
        sx[j] = 0
    start_match(rv, n, sp[SP_ACTIVE], sp[SP_TOTAL], sp[SP_UNITS], sp[SP_BB],
                sx[SX_POOL:SX_POOL + 1])
    for p in range(P_MAX):
        sp[SP_REAL, p] = p if p < n else -1
        sp[SP_SEAT, p] = p if p < n else -1
        sp[SP_WANTS, p] = wants[p] if p < n else 0
    sx[SX_N] = n
    sx[SX_N_IN] = n
    sx[SX_DEALER] = gs[g, G_DEALER]
    sx[SX_WINNER] = MATCH_ON


@njit(_nrt=False)
def begin_match(state, rv, g, sp, sx, n_players, dealer, seed, game_id, first_hand, hand_limit, wants):
    """Start game ``game_id`` on row ``g`` and deal its first hand.

    ``first_hand < 0``: a whole match of at most ``hand_limit`` hands.  ``first_hand >= 0``: that
    one hand alone (its round is ``first_hand % n_rounds``), as a study of single hands wants.
    ``dealer < 0`` draws the first dealer from the game's own stream.  ``wants``: the per-player
    buy-back flags (elimination matches)."""
    gs, ps, hscore, hwin = state.gs, state.ps, state.hscore, state.hwin
    if first_hand >= 0:
        reset_game(gs, ps, hscore, hwin, rv, g, n_players, dealer, seed, game_id, 1)
        deal_hand(state, rv, g, first_hand, gs[g, G_DEALER])
    else:
        start_game(state, rv, g, n_players, dealer, seed, game_id, hand_limit)
    _open_sheet(gs, rv, g, sp, sx, wants)


@njit(_nrt=False)
def begin_from_position(gs, ps, rv, g, sp, sx, wants):
    """A sheet for a position built by hand (``Game.from_text``): everybody in, the totals the
    position gives; its match ends after ``G_LAST_HAND``."""
    _open_sheet(gs, rv, g, sp, sx, wants)
    for p in range(gs[g, G_NP]):
        sp[SP_TOTAL, p] = ps[g, p, PS_TOTAL]


@njit(_nrt=False)
def end_hand(gs, ps, hands, hscore, hwin, rv, g, sp, sx, sev):
    """Settle the hand the engine just ended on the sheet; return 1 if the match is over.

    Fills ``SP_VALUE``/``SP_CARDS``/``SP_JOKERS`` (what each player dealt in held at the end) and
    ``sev`` (``match.EV_*``: penalty, payment, status)."""
    n = sx[SX_N]
    n_in = sx[SX_N_IN]
    for p in range(P_MAX):
        sp[SP_VALUE, p] = 0
        sp[SP_CARDS, p] = 0
        sp[SP_JOKERS, p] = 0
    wseat = gs[g, G_HAND_WINNER]
    for i in range(n_in):
        p = sp[SP_REAL, i]
        c = 0
        for t in range(N_TYPES):
            c += hands[g, i, t]
        sp[SP_VALUE, p] = 0 if i == wseat else hand_penalty_of(hands, rv, g, i)
        sp[SP_CARDS, p] = c
        sp[SP_JOKERS, p] = hands[g, i, JOKER]
        sp[SP_PLAYED, p] += 1
    how = gs[g, G_HAND_HOW]
    wreal = sp[SP_REAL, wseat] if wseat >= 0 else -1
    if wreal >= 0:
        if how == HOW_KALOOKI:
            sp[SP_KALOOKIS, wreal] += 1
        else:
            sp[SP_RIPS, wreal] += 1
    res = settle_hand(rv, n, sp[SP_ACTIVE], sp[SP_TOTAL], sp[SP_UNITS], sp[SP_BB],
                      sx[SX_POOL:SX_POOL + 1], wreal, how, sp[SP_VALUE], sp[SP_CARDS],
                      sp[SP_JOKERS], sp[SP_WANTS], sev)
    sx[SX_HANDS] += 1
    elim = rv[R_MATCH_MODE] == MATCH_MODE_ELIMINATION_POOL
    over = gs[g, G_HAND_NO] >= gs[g, G_LAST_HAND]
    if elim and res >= 0:
        sx[SX_WINNER] = res
        over = True
    if over:
        _close(gs, ps, hscore, hwin, rv, g, sp, sx)
    return 1 if over else 0


@njit
def match_winners(gs, ps, hscore, hwin, rv, g, out):
    """Mark the match winners of game ``g`` in ``out`` (bool[P_MAX]); return how many.

    Lowest total wins; ties per ``tie_rule``: 0 "shared" (A14), 1 fewest points in the last
    hand, 2 most hands won (a tie that the rule cannot break stays shared).
    """
    n = gs[g, G_NP]
    best = ps[g, 0, PS_TOTAL]
    for p in range(n):
        if ps[g, p, PS_TOTAL] < best:
            best = ps[g, p, PS_TOTAL]
    for p in range(P_MAX):
        out[p] = p < n and ps[g, p, PS_TOTAL] == best
    rule = rv[R_TIE_RULE]
    last = gs[g, G_HANDS_DONE] - 1
    if last >= H_MAX:
        last = H_MAX - 1
    if rule != TIE_RULE_SHARED and last >= 0:
        key = np.zeros(P_MAX, dtype=np.int64)
        for p in range(n):
            if rule == TIE_RULE_FEWEST_POINTS_LAST_HAND:
                key[p] = hscore[g, last, p]
            else:
                w = 0
                for h in range(last + 1):
                    if hwin[g, h] == p:
                        w += 1
                key[p] = -w
        kbest = 1 << 62
        for p in range(n):
            if out[p] and key[p] < kbest:
                kbest = key[p]
        for p in range(n):
            if out[p] and key[p] != kbest:
                out[p] = False
    c = 0
    for p in range(n):
        if out[p]:
            c += 1
    return c


@njit(_nrt=False)
def _close(gs, ps, hscore, hwin, rv, g, sp, sx):
    """The match is over: money, finished flag and the match winners (``SP_MWIN``)."""
    n = sx[SX_N]
    mode = rv[R_MATCH_MODE]
    sx[SX_OVER] = 1
    final_money(rv, n, sp[SP_ACTIVE], sp[SP_UNITS], sp[SP_BB], sx[SX_POOL:SX_POOL + 1],
                sp[SP_MONEY])
    nw = 0
    if mode == MATCH_MODE_ELIMINATION_POOL:
        w = sx[SX_WINNER]
        sx[SX_FINISHED] = 1 if w >= 0 else 0
        for p in range(n):
            sp[SP_MWIN, p] = 1 if p == w else 0
            nw += sp[SP_MWIN, p]
    elif mode == MATCH_MODE_FIXED_HANDS_LOW_TOTAL:
        sx[SX_FINISHED] = 1
        nw = match_winners(gs, ps, hscore, hwin, rv, g, sp[SP_MWIN])
    else:                                       # per-hand modes: highest money, ties shared
        sx[SX_FINISHED] = 1
        best = sp[SP_MONEY, 0]
        for p in range(n):
            if sp[SP_MONEY, p] > best:
                best = sp[SP_MONEY, p]
        for p in range(n):
            sp[SP_MWIN, p] = 1 if sp[SP_MONEY, p] == best else 0
            nw += sp[SP_MWIN, p]
    sx[SX_N_MWIN] = nw


@njit(_nrt=False)
def next_hand(state, rv, g, sp, sx):
    """Deal the match's next hand: the deal passes to the next player still in, who are seated in
    their order; their calls (scope "game") and totals come with them."""
    gs, ps = state.gs, state.ps
    n = sx[SX_N]
    for i in range(sx[SX_N_IN]):
        sp[SP_CALLS, sp[SP_REAL, i]] = ps[g, i, PS_CALLS]
    rot = 1 if rv[R_DEALER_ROTATION] == DEALER_ROTATION_LEFT else -1
    dealer = sx[SX_DEALER]
    for k in range(1, n + 1):
        q = ((dealer + rot * k) % n + n) % n
        if sp[SP_ACTIVE, q] != 0:
            dealer = q
            break
    sx[SX_DEALER] = dealer
    n_in = 0
    dseat = 0
    for p in range(P_MAX):
        sp[SP_SEAT, p] = -1
        sp[SP_REAL, p] = -1
    for p in range(n):
        if sp[SP_ACTIVE, p] != 0:
            if p == dealer:
                dseat = n_in
            sp[SP_REAL, n_in] = p
            sp[SP_SEAT, p] = n_in
            n_in += 1
    sx[SX_N_IN] = n_in
    for i in range(P_MAX):
        for j in range(NPS):
            ps[g, i, j] = 0
    for i in range(n_in):
        ps[g, i, PS_CALLS] = sp[SP_CALLS, sp[SP_REAL, i]]
        ps[g, i, PS_TOTAL] = sp[SP_TOTAL, sp[SP_REAL, i]]
    gs[g, G_NP] = n_in
    deal_hand(state, rv, g, gs[g, G_HAND_NO] + 1, dseat)
