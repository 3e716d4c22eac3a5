"""Greedy table manipulation (M1-M5) for the compiled greedy agent (``agents.compiled``).

Every move greedy makes here sheds cards: a split (M3), a shift (M1) or a set substitution (M4)
puts a card from the hand on the table, and the card it takes must be placed again this turn (the
engine only offers a take whose card can be placed), so the hand shrinks by at least one.  A
plain take (M2 end card, M5 from a 4-card set) is only worth it when the taken card goes into a
*new* meld together with cards from the hand — a lay-off elsewhere would just move it — so greedy
takes only when the best new melds of the hand with that card use it.  Jokers are never shifted
onto the table (they are worth more in the hand).

Legality is asked through the decision's cache (``agents.known``), so the manipulation greedy picks
is not checked a second time when the decision is returned.  Candidates exist only in variants
with ``table_manipulation`` and only after opening; still, a K40 hand asks about fifteen times for
a manipulation that is not there, so candidates the check's cheap structural part would refuse
(a split or take leaving a run short, a substitution of a suit the set holds or for one it does
not) are not asked about at all.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import R_ACE_HIGH, R_ACE_LOW, R_RUN_MIN_SIZE, R_TABLE_MANIPULATION
from kalooki_sim.engine.core import hand_plan_places
from kalooki_sim.engine.layout import (
    A_SETSUB, A_SETTAKE, A_SHIFT, A_SPLIT, A_TAKE_END, G_N_MELDS, JOKER, MI_HI, MI_KEY, MI_KIND, MI_LEN, MI_LO, MK_RUN,
    MK_SET, PS_LAID,
)
from kalooki_sim.melds.positions import pos_type, run_mask
from kalooki_sim.melds.search import natural_meldable_held

from .known import is_legal

__all__ = ["greedy_manipulation"]


@njit(_nrt=False)
def greedy_manipulation(state, rv, g, seat, known):
    """A legal manipulation that sheds cards (module docstring), or -1.  ``known``: the decision's
    legality cache (``agents.known.forget_known`` was called for this decision)."""
    gs, ps, hands, minfo, mcards, work = state.gs, state.ps, state.hands, state.minfo, state.mcards, state.work
    if rv[R_TABLE_MANIPULATION] == 0 or ps[g, seat, PS_LAID] == 0:
        return -1
    nm = gs[g, G_N_MELDS]
    rmin = rv[R_RUN_MIN_SIZE]
    for m in range(nm):
        kind = minfo[g, m, MI_KIND]
        if kind == MK_RUN:
            s = minfo[g, m, MI_KEY]
            # a split keeps at least rmin cards on each side of the card it doubles
            for q in range(max(minfo[g, m, MI_LO] + 1, minfo[g, m, MI_LO] + rmin - 1),
                           min(minfo[g, m, MI_HI], minfo[g, m, MI_HI] - rmin + 2)):
                if hands[g, seat, pos_type(s, q)] > 0:
                    a = A_SPLIT + m * 15 + q
                    if is_legal(known, a, state, rv, g):
                        return a
            lo = minfo[g, m, MI_LO]
            hi = minfo[g, m, MI_HI]
            for side in range(2):
                # the natural that extends the far end must be in hand (the cheap part of the check)
                q_add = hi + 1 if side == 0 else lo - 1
                if q_add < 1 or q_add > 14 or hands[g, seat, pos_type(s, q_add)] == 0:
                    continue
                a = A_SHIFT + m * 4 + side * 2                 # a natural, never a joker
                if is_legal(known, a, state, rv, g):
                    return a
        elif kind == MK_SET and minfo[g, m, MI_LEN] == 3:
            suits = _set_suits(minfo, mcards, g, m)
            for s_add in range(4):
                # a suit the set does not hold, its natural in hand, for one the set holds
                if (suits >> s_add) & 1 or hands[g, seat, s_add * 13 + minfo[g, m, MI_KEY]] == 0:
                    continue
                for s_take in range(4):
                    if (suits >> s_take) & 1:
                        a = A_SETSUB + m * 16 + s_add * 4 + s_take
                        if is_legal(known, a, state, rv, g):
                            return a
    # the hand's run positions by suit, for the takes' "could it join a new meld" test (asked
    # about every end card and every card of a 4-card set: some ninety times a K40 hand)
    lo_min = 1 if rv[R_ACE_LOW] == 1 else 2
    hi_max = 14 if rv[R_ACE_HIGH] == 1 else 13
    hand = hands[g, seat]
    held = (run_mask(hand, 0, lo_min, hi_max), run_mask(hand, 1, lo_min, hi_max),
            run_mask(hand, 2, lo_min, hi_max), run_mask(hand, 3, lo_min, hi_max))
    for m in range(nm):
        kind = minfo[g, m, MI_KIND]
        if kind == MK_RUN and minfo[g, m, MI_HI] - minfo[g, m, MI_LO] >= rmin:   # rmin cards stay
            for side in range(2):
                a = A_TAKE_END + m * 2 + side
                c = np.int64(mcards[g, m, minfo[g, m, MI_HI] if side == 0 else minfo[g, m, MI_LO]])
                if c == JOKER or not _joins_new_meld(hand, rv, c, held):
                    continue
                if is_legal(known, a, state, rv, g):
                    if hand_plan_places(hands, ps, rv, gs, work[g], g, seat, c, -1, c):
                        return a
        elif kind == MK_SET and minfo[g, m, MI_LEN] == 4:
            for s in range(4):
                a = A_SETTAKE + m * 4 + s
                c = s * 13 + minfo[g, m, MI_KEY]
                if not _joins_new_meld(hand, rv, c, held):
                    continue
                if is_legal(known, a, state, rv, g):
                    if hand_plan_places(hands, ps, rv, gs, work[g], g, seat, c, -1, c):
                        return a
    return -1


@njit(_nrt=False, inline="always")
def _joins_new_meld(hand, rv, c, held):
    """``core.could_join_new_meld`` for natural ``c`` from the table (not in ``hand``), with the
    hand's run positions by suit ``held`` (``positions.run_mask``, a 4-tuple) read once."""
    hand[c] += 1
    ok = natural_meldable_held(hand, rv, c, held[c // 13])
    hand[c] -= 1
    return ok


@njit(_nrt=False)
def _set_suits(minfo, mcards, g, m):
    """The suits of set ``m``'s naturals, as bits."""
    suits = 0
    for i in range(minfo[g, m, MI_LEN]):
        c = mcards[g, m, i]
        if c != JOKER:
            suits |= 1 << (c // 13)
    return suits
