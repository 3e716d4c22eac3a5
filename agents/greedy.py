"""The greedy heuristic (``greedy_action``) and its decision memory (``KNOWN_LEN``).

Greedy, in words:

* call window: call when the top discard is useful (same rank held, or a same-suit card one rank
  away; two ranks away counts ``gap_weight``) — usefulness >= ``call_threshold``; else pass;
* allow/deny: deny (take the card as the draw) when the card is useful and denying is legal,
  otherwise allow (a player who cannot deny never does);
* draw: the top discard when useful (>= ``draw_threshold``) and legal, else the stock;
* upcard swap (American dealer): take the upcard when it is more useful than the least useful
  natural in hand (which is turned up instead);
* play: lay down as soon as the engine offers plan 0 (the exact best lay-down); then tack every
  card it can and take jokers by moves; then discard — before the lay-down the least useful card
  (cards with no same-rank partner and no same-suit card within two ranks first), highest penalty
  first, never a joker; after the lay-down simply the highest penalty card; end the turn without a
  discard only when that is the only legal action.

Points variants (``opening_mode = "points"``, the Kalooki 40 family) replace the contract measure
(``contract_shortfall``) by usefulness alone: a restricted discard draw is taken whenever the engine
offers it (it is offered only when the card goes into the lay-down or a lay-off at once); plan 0
(the opening, later any new melds) is laid whenever offered; every possible lay-off is made, and
joker swaps (runs and 3-card sets) are taken whenever the engine offers them (the natural is held
and the freed joker can be placed); the discard is the card with the fewest partners (same rank,
same suit nearby), highest penalty first, also after the opening.  Table manipulation (M1-M5)
follows ``agents.manipulation``: splits, shifts and set substitutions whenever offered, and takes
only when the taken card goes into a new meld with cards from the hand.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.bits import lowest_bit
from kalooki_sim.core.jit import njit
from kalooki_sim.core.rng import rng_uniform
from kalooki_sim.core.rulevec import (
    DISCARD_DRAW_BEFORE_OPENING_ANY, DISCARD_DRAW_BEFORE_OPENING_NEVER, OPENING_MODE_CONTRACT, R_OPENING_MODE,
    R_PENALTY, R_TABLE_MANIPULATION,
)
from kalooki_sim.engine.core import draw_mode
from kalooki_sim.engine.layout import (
    A_ALLOW, A_CALL, A_DENY, A_DISCARD, A_DRAW_DISCARD, A_DRAW_STOCK, A_LAY, A_MOVE, A_PASS, A_SETSWAP, A_TACK,
    A_UPSWAP, G_DISC_N, G_N_MELDS, G_PHASE, G_ROUND, JOKER, M_MAX, MI_HI, MI_KEY, MI_KIND, MI_LO, MI_NJ,
    MK_JSET, MK_RUN, MK_SET, N_ACTIONS, N_TYPES, PH_ALLOW, PH_CALL, PH_DRAW, PH_PLAY, PH_UPSWAP, PS_LAID,
)
from kalooki_sim.melds.positions import pos_type, suit_ranks_held

from .declare import CompiledAgent, Param, param_index
from .discard import _discard_fallback, _discard_pick, _first_legal
from .known import KNOWN_GEN, is_legal
from .manipulation import greedy_manipulation
from .measures import SFW_LEN, _wants, card_usefulness
from .random_agent import random_legal

# greedy's parameters (``agents/declare.py``); the expert's row starts with them
PARAMS = (
    Param("epsilon", 0.0, (0.0, 0.5), "probability of a uniformly random legal action instead of greedy's"),
    Param("call_threshold", 1.0, (0.0, 4.0), "minimum usefulness of the top discard to call it"),
    Param("draw_threshold", 1.0, (0.0, 4.0), "minimum usefulness of the top discard to draw it or deny a call "
          "for it"),
    Param("gap_weight", 0.5, (0.0, 1.0), "usefulness of a same-suit card two ranks away (a same-rank card or a "
          "same-suit card one rank away counts 1)"),
)
P_EPSILON = param_index(PARAMS, "epsilon")
P_CALL_THRESHOLD = param_index(PARAMS, "call_threshold")
P_DRAW_THRESHOLD = param_index(PARAMS, "draw_threshold")
P_GAP_WEIGHT = param_index(PARAMS, "gap_weight")


# A seat's decision memory: the legality cache (``agents.known``: an entry per action, then the
# generation), then the greedy discard's scratch, so that no decision allocates.
_KNOWN_SCRATCH = KNOWN_GEN + 1
_KNOWN_FITS = _KNOWN_SCRATCH + SFW_LEN    # per table meld: the cards it may take (``_tack_candidates``)
KNOWN_LEN = _KNOWN_FITS + M_MAX


@njit(_nrt=False, inline="always")
def _tack_candidates(hands, minfo, g, p, nm, fits):
    """The lay-offs greedy may try, from the melds' open ends instead of asking every held card
    about every meld.  Fills ``fits[m]`` (m < ``nm``) with bit t for each card type ``t`` that
    ``tack_may_fit`` table meld m (a joker always), and returns (bit t for each type seat ``p``
    holds that some meld may take, bit m for each run holding a joker: the joker moves to try)."""
    joker = np.int64(1) << JOKER
    may = joker
    jruns = np.int64(0)
    for m in range(nm):
        kind = minfo[g, m, MI_KIND]
        key = minfo[g, m, MI_KEY]
        f = joker
        if kind == MK_RUN:
            lo = minfo[g, m, MI_LO]
            hi = minfo[g, m, MI_HI]
            if lo - 1 >= 1:
                f |= np.int64(1) << pos_type(key, lo - 1)
            if hi + 1 <= 14:
                f |= np.int64(1) << pos_type(key, hi + 1)
            if minfo[g, m, MI_NJ] != 0:
                jruns |= np.int64(1) << m
        elif kind == MK_SET:
            f |= ((np.int64(1) << key) | (np.int64(1) << (13 + key)) | (np.int64(1) << (26 + key))
                  | (np.int64(1) << (39 + key)))
        elif kind != MK_JSET:
            f = (np.int64(1) << N_TYPES) - 1
        fits[m] = f
        may |= f
    hand = hands[g, p]
    held = np.int64(1 if hand[JOKER] > 0 else 0) << JOKER
    for s in range(4):
        held |= suit_ranks_held(hand, s) << (13 * s)
    return may & held, jruns


@njit(_nrt=False, inline="always")
def explores(params, key, ctr):
    """Does the seat explore this decision (probability ``epsilon``)?  Draws from the stream only
    when ``epsilon`` > 0, so greedy's games at 0 do not depend on it."""
    eps = params[P_EPSILON]
    if eps > 0.0:
        u = rng_uniform(key, ctr[0])
        ctr[0] += 1
        return u < eps
    return False


@njit
def explore_pick(state, rv, g, key, ctr):
    """An exploring seat's uniformly random legal action (-1: none), out of line and with its own
    mask: with the pick inlined and the kernel's mask passed down, greedy's closed loop measured
    4 % slower (docs/benchmark-history.md)."""
    mask = np.zeros(N_ACTIONS, dtype=np.bool_)
    return random_legal(state, rv, g, mask, key, ctr)


@njit(_nrt=False)
def _upswap_pick(hands, rv, g, seat, top, gapw):
    """Greedy's upcard swap (American dealer): take the upcard when it is more useful than the
    least useful natural in hand, which is turned up instead.  Out of ``greedy_action``'s line,
    like the other rare decisions: inlined, its code would crowd the closed loop's hot path."""
    worst = -1
    worst_u = 1e300
    worst_pen = -1
    for t in range(JOKER):
        if hands[g, seat, t] > 0:
            u = card_usefulness(hands, rv, g, seat, t, 1, gapw)
            pen = rv[R_PENALTY + t]
            if u < worst_u or (u == worst_u and pen > worst_pen):
                worst = t
                worst_u = u
                worst_pen = pen
    if top >= 0 and worst >= 0 and card_usefulness(hands, rv, g, seat, top, 0, gapw) > worst_u:
        return A_UPSWAP + worst
    return A_PASS


@njit(_nrt=False, inline="always")
def flow_action(state, rv, g, ph, want, known):
    """A call window, allow/deny or draw decided by the wish ``want`` for the top discard (call
    it, deny the call by taking it, draw it): the wished action when legal, else the plain one
    (pass, allow, the stock), else the other.  -1 when nothing here is legal.  Greedy and the
    expert differ only in the wish."""
    if ph == PH_CALL:
        if want and is_legal(known, A_CALL, state, rv, g):
            return A_CALL
        if is_legal(known, A_PASS, state, rv, g):
            return A_PASS
    elif ph == PH_ALLOW:
        if want and is_legal(known, A_DENY, state, rv, g):
            return A_DENY
        if is_legal(known, A_ALLOW, state, rv, g):
            return A_ALLOW
        if is_legal(known, A_DENY, state, rv, g):
            return A_DENY
    elif ph == PH_DRAW:
        if want and is_legal(known, A_DRAW_DISCARD, state, rv, g):
            return A_DRAW_DISCARD
        if is_legal(known, A_DRAW_STOCK, state, rv, g):
            return A_DRAW_STOCK
        if is_legal(known, A_DRAW_DISCARD, state, rv, g):
            return A_DRAW_DISCARD
    return -1


@njit(_nrt=False, inline="always")
def play_melds(state, rv, g, seat, known, contract, may_lay):
    """Greedy's play phase up to the discard: lay the plan when offered (if ``may_lay``), then once
    laid down tack every card it can (naturals first, jokers last), take jokers by moves, swap
    jokers out of 3-card sets (points variants) and manipulate the table (``agents.manipulation``).
    Returns the action, or -1 when only the discard is left.  (The expert shares it, holding a
    lay-down back with ``may_lay = False``.)"""
    gs, ps, hands, minfo, mcards, plan_n = state.gs, state.ps, state.hands, state.minfo, state.mcards, state.plan_n
    if may_lay:
        # no plan: check_action says E_NO_PLAN (or must-place)
        if plan_n[g, 0] >= 0 and is_legal(known, A_LAY, state, rv, g):
            return A_LAY
    nm = gs[g, G_N_MELDS]
    if ps[g, seat, PS_LAID] == 1:
        # only the held cards some meld may take are tried, on the melds that may take them
        # (``_tack_candidates``), in the same order
        fits = known[_KNOWN_FITS:_KNOWN_FITS + M_MAX]
        cand, jruns = _tack_candidates(hands, minfo, g, seat, nm, fits)
        while cand != 0:
            t = lowest_bit(cand)
            cand &= cand - 1
            for m in range(nm):
                if ((fits[m] >> t) & 1) == 0:
                    continue
                a = A_TACK + m * N_TYPES + t
                if is_legal(known, a, state, rv, g):
                    return a
        while jruns != 0:
            m = lowest_bit(jruns)
            jruns &= jruns - 1
            for q in range(minfo[g, m, MI_LO], minfo[g, m, MI_HI] + 1):
                # (a move needs the natural the joker stands for: the cheap part of the check)
                if (mcards[g, m, q] == JOKER
                        and hands[g, seat, pos_type(minfo[g, m, MI_KEY], q)] > 0):
                    a = A_MOVE + m * 15 + q
                    if is_legal(known, a, state, rv, g):
                        return a
        if not contract:
            # joker swaps in 3-card sets (the engine offers them only when the freed joker
            # can be placed this turn)
            for m in range(nm):
                if minfo[g, m, MI_KIND] == MK_SET and minfo[g, m, MI_NJ] > 0:
                    for s_ in range(4):
                        if hands[g, seat, s_ * 13 + minfo[g, m, MI_KEY]] == 0:
                            continue         # the natural to swap in is not in hand
                        a = A_SETSWAP + m * 4 + s_
                        if is_legal(known, a, state, rv, g):
                            return a
        if rv[R_TABLE_MANIPULATION] != 0:
            a = greedy_manipulation(state, rv, g, seat, known)
            if a >= 0:
                return a
    return -1


@njit(_nrt=False, inline="always")
def greedy_discard(state, rv, g, seat, known, rnd, contract, gapw):
    """Greedy's discard (module docstring): ``_discard_pick``'s best card if legal, else its
    runner-up, else the fallback's search over every card."""
    ps, hands = state.ps, state.hands
    laid = ps[g, seat, PS_LAID] == 1
    best, runner_up = _discard_pick(hands, rv, g, seat, rnd, laid, contract, gapw,
                                    known[_KNOWN_SCRATCH:_KNOWN_FITS])
    if best >= 0 and is_legal(known, A_DISCARD + best, state, rv, g):
        return A_DISCARD + best
    if runner_up >= 0 and is_legal(known, A_DISCARD + runner_up, state, rv, g):
        return A_DISCARD + runner_up
    return _discard_fallback(known, state, rv, g, seat, rnd, laid, contract, gapw)


@njit(_nrt=False, inline="always")
def greedy_action(params, state, rv, g, seat, known, mask, key, ctr):
    """The greedy heuristic (module docstring); always returns a legal action (-1 if none).

    ``known`` (``forget_known``) caches legality, so greedy only checks the few actions it
    considers instead of building the whole legal mask at every decision."""
    gs, ps, hands, disc = state.gs, state.ps, state.hands, state.disc
    if explores(params, key, ctr):
        return explore_pick(state, rv, g, key, ctr)
    call_thr = params[P_CALL_THRESHOLD]
    draw_thr = params[P_DRAW_THRESHOLD]
    gapw = params[P_GAP_WEIGHT]
    ph = gs[g, G_PHASE]
    contract = rv[R_OPENING_MODE] == OPENING_MODE_CONTRACT
    rnd = gs[g, G_ROUND]
    nd = gs[g, G_DISC_N]
    top = -1
    if nd > 0:
        top = np.int64(disc[g, nd - 1])
    if ph == PH_CALL or ph == PH_ALLOW or ph == PH_DRAW:
        # the wish before the legality: most draws do not want the discard, and a draw mode of
        # "never" (3; after a contract lay-down) rules it out at once.  Points variants: a
        # restricted discard draw (mode 1, 2) is only legal when the card goes into the lay-down
        # (or a lay-off) at once, so it is always worth taking
        want = False
        if top >= 0:
            if ph == PH_CALL:
                want = _wants(hands, rv, g, seat, rnd, top, contract, gapw, call_thr)
            elif ph == PH_ALLOW:
                want = _wants(hands, rv, g, seat, rnd, top, contract, gapw, draw_thr)
            else:
                mode = draw_mode(gs, ps, rv, g, seat)
                want = mode != DISCARD_DRAW_BEFORE_OPENING_NEVER and (
                    _wants(hands, rv, g, seat, rnd, top, contract, gapw, draw_thr)
                    or (not contract and mode != DISCARD_DRAW_BEFORE_OPENING_ANY))
        a = flow_action(state, rv, g, ph, want, known)
        if a >= 0:
            return a
    elif ph == PH_UPSWAP:
        return _upswap_pick(hands, rv, g, seat, top, gapw)
    elif ph == PH_PLAY:
        a = play_melds(state, rv, g, seat, known, contract, True)
        if a >= 0:
            return a
        return greedy_discard(state, rv, g, seat, known, rnd, contract, gapw)
    return _first_legal(known, state, rv, g)


AGENT = CompiledAgent("greedy", 1, greedy_action, PARAMS, memory=KNOWN_LEN, hot=True,
                      doc="The heuristic baseline: calls and draws the discards that help, lays down as soon as it "
                          "can, lays off everything, discards the least useful card (`agents/greedy.py` says it "
                          "in words).")
