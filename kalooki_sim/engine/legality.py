"""Which actions are legal: ``check_flow_action``, ``check_action`` and ``legal_mask``.

Illegal actions return an error code (``layout.E_*``) and leave the state untouched: ``step``
first runs ``check_action`` (the single definition of legality, also used by ``legal_mask``) and
only then mutates.  ``check_flow_action`` answers the actions of the turn's flow from five arrays
instead of fourteen (agents ask it about every action they consider); it defers the rest to
``check_action`` with ``NEEDS_TABLE``.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import (
    AFTER_ALLOWED_CALL_ACTIVE_DRAWS_STOCK, DISCARD_DRAW_BEFORE_OPENING_ANY,
    DISCARD_DRAW_BEFORE_OPENING_IF_USED_IN_MELD_NOW, DISCARD_DRAW_BEFORE_OPENING_NEVER, JOKER_SWAP_NONE,
    JOKER_SWAP_RETRIEVE, R_AFTER_ALLOWED_CALL_ACTIVE_DRAWS, R_ALLOW_DISCARD_JOKER, R_DISCARD_DRAW_AFTER_OPENING,
    R_DISCARD_DRAW_BEFORE_OPENING, R_FIRST_TURN_FREE_UPCARD, R_FORBID_DISCARD_OF_TAKEN_DISCARD,
    R_FREED_JOKER_MUST_BE_USED_SAME_TURN, R_GOING_OUT_REQUIRES_DISCARD, R_JOKER_SWAP, R_JOKER_SWAP_FROM_RUN_END,
    R_JOKER_SWAP_REQUIRES_OPENED, R_LAYOFF_REQUIRES_OPENED, R_SET_ALLOW_DUPLICATE_SUIT, R_SET_JOKER_SWAP,
    R_TABLE_MANIPULATION, SET_JOKER_SWAP_NEVER, SET_JOKER_SWAP_ONE_FOR_ONE_3CARD,
)
from kalooki_sim.melds.positions import pos_type

from .common import _hand_count, _holds_any, _holds_more_than
from .fit import _debt_tack_ok, _fit_err, _low_joker_err, _may_layoff, _move_target, tack_may_fit
from .flow import _allow_ok, _caller_ok, _deny_ok
from .layout import (
    A_ALLOW, A_CALL, A_DENY, A_DISCARD, A_DRAW_DISCARD, A_DRAW_STOCK, A_END_TURN, A_LAY, A_MOVE, A_PASS, A_SETSUB,
    A_SETSWAP, A_SETTAKE, A_SHIFT, A_SPLIT, A_TACK, A_TACK_LOW, A_TAKE_END, A_UPSWAP, E_AFTER_CALL_STOCK,
    E_ALREADY_LAID, E_BAD_ACTION, E_CAN_DISCARD, E_CAN_TACK, E_CANNOT_ALLOW, E_CANNOT_DENY, E_DISCARD_DRAW,
    E_EMPTY_DISCARD, E_HAND_EMPTY, E_JOKER_DISCARD, E_MUST_DISCARD, E_MUST_PLACE, E_NO_CARD, E_NO_JOKER, E_NO_MELD,
    E_NO_PLAN, E_NOT_ELIGIBLE, E_NOT_LAID, E_NOT_USABLE, E_OPENING_SHORT, E_SWAP_DISABLED, E_SWAP_END,
    E_SWAP_FROM_TABLE, E_TABLE_FULL, E_TAKEN_DISCARD, E_TERMINAL, E_WRONG_PHASE, E_WRONG_SUIT, G_ACTIVE, G_AFTER_ALLOW,
    G_DISC_N, G_FREED, G_N_MELDS, G_OPEN_DEBT, G_OWED, G_PHASE, G_TAKEN, G_TAKEN_MUST, G_TERMINAL, G_TO_ACT, G_TURN,
    JOKER, M_MAX, MI_HI, MI_KEY, MI_KIND, MI_LEN, MI_LO, MI_NJ, MK_RUN, MK_SET, N_ACTIONS, N_TYPES, PH_ALLOW,
    PH_CALL, PH_DRAW, PH_PLAY, PH_UPSWAP, PS_LAID,
)
from .manipulation import _freed_joker_placeable, _manip_err, _placed_type, _set_swap_slot
from .plans import _done_laying, plan_count, a43_opening_places, hand_plan_places


@njit(_nrt=False)
def _discard_err(gs, hands, rv, g, p, t):
    if hands[g, p, t] <= 0:
        return E_NO_CARD
    if t == JOKER and rv[R_ALLOW_DISCARD_JOKER] == 0:
        return E_JOKER_DISCARD
    if rv[R_FORBID_DISCARD_OF_TAKEN_DISCARD] == 1 and gs[g, G_TAKEN] == t and hands[g, p, t] < 2:
        return E_TAKEN_DISCARD
    return 0


@njit(_nrt=False)
def _has_discard(gs, hands, rv, g, p):
    for t in range(N_TYPES):
        if hands[g, p, t] > 0 and _discard_err(gs, hands, rv, g, p, t) == 0:
            return True
    return False


@njit(_nrt=False, inline="always")     # the tack branch of ``check_action``: as inline as it was
def _tack_err(gs, ps, hands, minfo, mcards, mas, rv, g, p, m, t):
    """``check_action``'s answer for tacking card type ``t`` on table meld ``m`` (no card pending,
    no opening debt), also asked by ``_has_tack``: one definition of a legal lay-off."""
    if rv[R_LAYOFF_REQUIRES_OPENED] == 1 and ps[g, p, PS_LAID] == 0:
        return E_NOT_LAID
    if hands[g, p, t] <= 0:
        return E_NO_CARD
    if m >= gs[g, G_N_MELDS]:
        return E_NO_MELD
    if rv[R_GOING_OUT_REQUIRES_DISCARD] == 1 and not _holds_more_than(hands, g, p, 1):
        return E_MUST_DISCARD                        # the last card must be discarded
    return _fit_err(minfo, mcards, mas, rv, g, m, t)


@njit(_nrt=False)
def _has_tack(gs, ps, hands, minfo, mcards, mas, rv, g, p):
    """Could seat ``p`` tack any card he holds on any table meld?  Then he may not end his turn
    without a discard (A15/A54: only when nothing can be discarded *and* nothing tacked)."""
    for t in range(N_TYPES):
        if hands[g, p, t] > 0:
            for m in range(gs[g, G_N_MELDS]):
                if (tack_may_fit(minfo, g, m, t)
                        and _tack_err(gs, ps, hands, minfo, mcards, mas, rv, g, p, m, t) == 0):
                    return True
    return False


@njit(_nrt=False)
def draw_mode(gs, ps, rv, g, p):
    """discard_draw_* mode that applies to seat ``p`` now, as ``DISCARD_DRAW_BEFORE_OPENING_*``
    (both knobs encode their modes alike; first_turn_free_upcard: the first turn of a hand is free).

    Public because greedy (``agents``) reads it to judge a restricted discard draw before it asks
    ``check_action`` about one."""
    if ps[g, p, PS_LAID] == 1:
        mode = rv[R_DISCARD_DRAW_AFTER_OPENING]
    else:
        mode = rv[R_DISCARD_DRAW_BEFORE_OPENING]
    if (mode != DISCARD_DRAW_BEFORE_OPENING_ANY and rv[R_FIRST_TURN_FREE_UPCARD] == 1
            and gs[g, G_TURN] == 0):
        mode = DISCARD_DRAW_BEFORE_OPENING_ANY
    return mode


@njit(_nrt=False)
def _discard_usable(gs, ps, hands, minfo, mcards, mas, work, rv, g, p, t, mode):
    """Can seat ``p`` meld the top discard ``t`` this turn as a restricted draw requires?

    Engine decision: the card must be placed by the best lay-down of the hand with it (the plan
    the engine then offers), or — for an opened player under "if_used_in_meld_now" or after his
    opening — fit a table meld as a lay-off.  Only then is the draw offered, so the turn can
    always be finished."""
    if hand_plan_places(hands, ps, rv, gs, work, g, p, t, -1, t):
        return True
    if a43_opening_places(gs, ps, hands, minfo, mcards, mas, work, rv, g, p, t, t):
        return True
    if _may_layoff(ps, rv, g, p) and (mode == DISCARD_DRAW_BEFORE_OPENING_IF_USED_IN_MELD_NOW
                                      or ps[g, p, PS_LAID] == 1):
        for m in range(gs[g, G_N_MELDS]):
            if _fit_err(minfo, mcards, mas, rv, g, m, t) == 0:
                return True
    return False


@njit(_nrt=False)
def _pending(gs, g):
    """Card type that must be placed before anything else (-1: none): a discard taken under a
    restriction, a freed joker, or a card taken from the table."""
    if gs[g, G_TAKEN_MUST] == 1 and gs[g, G_TAKEN] >= 0:
        return gs[g, G_TAKEN]
    if gs[g, G_FREED] > 0:
        return JOKER
    return gs[g, G_OWED]


# ``check_flow_action``'s answer when the table decides (``check_action`` does)
NEEDS_TABLE = -1


@njit(_nrt=False)
def check_flow_action(gs, ps, hands, disc_by, rv, g, a):
    """``check_action`` for the actions of the turn's flow (call window, allow/deny, draws, the
    discard and ending the turn) from the five arrays they read; ``NEEDS_TABLE`` for the rest
    (lay-downs, lay-offs and joker moves, the dealer's upcard swap, a restricted discard draw),
    which only ``check_action`` answers.

    It exists because passing arguments is most of the cost of such a check: numba passes each
    state array as a dozen machine words, so a call with all 14 costs about 20 ns (a microbenchmark
    of an empty kernel: 24 ns against 7 ns with four), while a hand asks a hundred of these."""
    if gs[g, G_TERMINAL] != 0:
        return E_TERMINAL
    if a < 0 or a >= N_ACTIONS:
        return E_BAD_ACTION
    ph = gs[g, G_PHASE]
    if ph == PH_UPSWAP:
        return NEEDS_TABLE
    if A_UPSWAP <= a < A_TACK_LOW:
        return E_WRONG_PHASE
    if a == A_PASS or a == A_CALL:
        if ph != PH_CALL:
            return E_WRONG_PHASE
        if a == A_CALL and not _caller_ok(gs, ps, disc_by, rv, g, gs[g, G_TO_ACT]):
            return E_NOT_ELIGIBLE
        return 0
    if a == A_ALLOW:
        if ph != PH_ALLOW:
            return E_WRONG_PHASE
        return 0 if _allow_ok(gs, rv, g) else E_CANNOT_ALLOW
    if a == A_DENY:
        if ph != PH_ALLOW:
            return E_WRONG_PHASE
        return 0 if _deny_ok(gs, ps, rv, g) else E_CANNOT_DENY
    if a == A_DRAW_STOCK:
        return 0 if ph == PH_DRAW else E_WRONG_PHASE
    if a == A_DRAW_DISCARD:
        if ph != PH_DRAW:
            return E_WRONG_PHASE
        if gs[g, G_DISC_N] == 0:
            return E_EMPTY_DISCARD
        mode = draw_mode(gs, ps, rv, g, gs[g, G_ACTIVE])
        if mode == DISCARD_DRAW_BEFORE_OPENING_NEVER:
            return E_DISCARD_DRAW
        if (gs[g, G_AFTER_ALLOW] == 1
                and rv[R_AFTER_ALLOWED_CALL_ACTIVE_DRAWS] == AFTER_ALLOWED_CALL_ACTIVE_DRAWS_STOCK):
            return E_AFTER_CALL_STOCK
        return NEEDS_TABLE if mode != DISCARD_DRAW_BEFORE_OPENING_ANY else 0
    if ph != PH_PLAY:
        return E_WRONG_PHASE
    if a != A_END_TURN and (a < A_DISCARD or a >= A_TACK):
        return NEEDS_TABLE
    p = gs[g, G_ACTIVE]
    # (a hand holding the card to discard is not empty: the common case needs no count)
    if (a == A_END_TURN or hands[g, p, a - A_DISCARD] <= 0) and not _holds_any(hands, g, p):
        return E_HAND_EMPTY
    if gs[g, G_OPEN_DEBT] > 0:                           # A43: only lay-offs until the opening is complete
        return E_OPENING_SHORT
    if _pending(gs, g) >= 0:                             # a card that must be placed first
        return E_MUST_PLACE
    if a == A_END_TURN:
        if _has_discard(gs, hands, rv, g, p):
            return E_CAN_DISCARD
        # a tack would also forbid it (A15/A54): only ``check_action`` sees the table
        return NEEDS_TABLE if gs[g, G_N_MELDS] > 0 and _may_layoff(ps, rv, g, p) else 0
    return _discard_err(gs, hands, rv, g, p, a - A_DISCARD)


@njit(_nrt=False, specialise_constants=False)   # (agents ask ``check_flow_action`` first, by constant)
def check_action(state, rv, g, a):
    """0 if action ``a`` is legal in game ``g``, else the ``E_*`` code saying why not.  Pure but
    for the engine's caches: a check that searches a hand leaves its memo in the search scratch and
    certifies the hand when it has no lay-down (``hand_plan_places``); neither changes an answer."""
    gs, ps, hands, disc, disc_by, minfo = state.gs, state.ps, state.hands, state.disc, state.disc_by, state.minfo
    mcards, mas, plan, plan_n, work = state.mcards, state.mas, state.plan, state.plan_n, state.work
    e = check_flow_action(gs, ps, hands, disc_by, rv, g, a)
    if e != NEEDS_TABLE:
        return e
    ph = gs[g, G_PHASE]
    act = gs[g, G_ACTIVE]
    if ph == PH_UPSWAP:                  # the dealer keeps the upcard (pass) or swaps it
        if a == A_PASS:
            return 0
        if a < A_UPSWAP or a >= A_TACK_LOW:
            return E_WRONG_PHASE
        return 0 if hands[g, gs[g, G_TO_ACT], a - A_UPSWAP] > 0 else E_NO_CARD
    if a == A_DRAW_DISCARD:              # restricted: only if it goes into melds this turn
        if not _discard_usable(gs, ps, hands, minfo, mcards, mas, work[g], rv, g, act,
                               np.int64(disc[g, gs[g, G_DISC_N] - 1]), draw_mode(gs, ps, rv, g, act)):
            return E_NOT_USABLE
        return 0
    p = act
    if not _holds_any(hands, g, p):
        return E_HAND_EMPTY
    last_card_needs_discard = rv[R_GOING_OUT_REQUIRES_DISCARD] == 1
    # a restricted discard draw or a freed joker must be placed before anything else happens
    if gs[g, G_OPEN_DEBT] > 0:                           # A43: only lay-offs until the opening is complete
        low = a >= A_TACK_LOW
        if low:
            m = a - A_TACK_LOW
            t = JOKER
        elif a < A_TACK or a >= A_MOVE:
            return E_OPENING_SHORT
        else:
            m = (a - A_TACK) // N_TYPES
            t = (a - A_TACK) % N_TYPES
        if hands[g, p, t] <= 0:
            return E_NO_CARD
        if m >= gs[g, G_N_MELDS]:
            return E_NO_MELD
        e = _low_joker_err(minfo, mcards, rv, g, m) if low else _fit_err(minfo, mcards, mas, rv, g, m, t)
        if e != 0:
            return e
        return 0 if _debt_tack_ok(gs, hands, minfo, mcards, mas, rv, g, p, m, t, low) else E_OPENING_SHORT
    pend = _pending(gs, g)
    if pend >= 0:
        if a == A_LAY:
            if plan_n[g, 0] < 0 or plan_count(plan[g], plan_n[g, 0], pend) == 0:
                return E_MUST_PLACE
        elif _placed_type(gs, minfo, g, a) != pend:
            return E_MUST_PLACE
    if gs[g, G_OWED] >= 0 and a >= A_MOVE and a < A_SHIFT:
        return E_SWAP_FROM_TABLE                         # A45: a swap's natural comes from the hand
    if a == A_END_TURN:                                  # nothing to discard (the flow check)
        return E_CAN_TACK if _has_tack(gs, ps, hands, minfo, mcards, mas, rv, g, p) else 0
    if a < A_DISCARD:                                    # lay down the plan (discards:
                                                         # ``check_flow_action``)
        if _done_laying(ps, rv, g, p):
            return E_ALREADY_LAID
        if plan_n[g, 0] < 0:
            return E_NO_PLAN
        if gs[g, G_N_MELDS] + plan_n[g, 0] > M_MAX:
            return E_TABLE_FULL
        if last_card_needs_discard and plan_n[g, 1] >= _hand_count(hands, g, p):
            return E_MUST_DISCARD
        return 0
    if a < A_MOVE or a >= A_TACK_LOW:                    # tack t on m (A_TACK_LOW: a joker, low end)
        low = a >= A_TACK_LOW
        m = a - A_TACK_LOW if low else (a - A_TACK) // N_TYPES
        e = _tack_err(gs, ps, hands, minfo, mcards, mas, rv, g, p, m, JOKER if low else (a - A_TACK) % N_TYPES)
        return e if e != 0 or not low else _low_joker_err(minfo, mcards, rv, g, m)
    if a >= A_SHIFT:                                     # table manipulation M1-M5
        return _manip_err(gs, ps, hands, minfo, mcards, mas, work[g], rv, g, p, a)
    if a >= A_SETSWAP:                                   # natural of suit s replaces a set joker
        m = (a - A_SETSWAP) // 4
        s = (a - A_SETSWAP) % 4
        if rv[R_JOKER_SWAP] == JOKER_SWAP_NONE or rv[R_SET_JOKER_SWAP] != SET_JOKER_SWAP_ONE_FOR_ONE_3CARD:
            return E_SWAP_DISABLED
        if rv[R_JOKER_SWAP_REQUIRES_OPENED] == 1 and ps[g, p, PS_LAID] == 0:
            return E_NOT_LAID
        if m >= gs[g, G_N_MELDS]:
            return E_NO_MELD
        if minfo[g, m, MI_KIND] != MK_SET:
            return E_SWAP_DISABLED
        if minfo[g, m, MI_NJ] == 0:
            return E_NO_JOKER
        if minfo[g, m, MI_LEN] != 3:                     # one_for_one_3card: 4-card sets locked
            return E_SWAP_DISABLED
        nat = s * 13 + minfo[g, m, MI_KEY]
        if hands[g, p, nat] <= 0:
            return E_NO_CARD
        if rv[R_SET_ALLOW_DUPLICATE_SUIT] == 0:
            for i in range(minfo[g, m, MI_LEN]):
                if mcards[g, m, i] == nat:
                    return E_WRONG_SUIT
        if rv[R_FREED_JOKER_MUST_BE_USED_SAME_TURN] == 1:
            slot = _set_swap_slot(minfo, mcards, mas, g, m, nat)
            if not _freed_joker_placeable(gs, ps, hands, minfo, mcards, mas, work[g], rv, g, p, m, slot,
                                          nat):
                return E_NOT_USABLE
        return 0
    # move joker at position q of run m
    m = (a - A_MOVE) // 15
    q = (a - A_MOVE) % 15
    if rv[R_JOKER_SWAP] == JOKER_SWAP_NONE:
        return E_SWAP_DISABLED
    if rv[R_JOKER_SWAP_REQUIRES_OPENED] == 1 and ps[g, p, PS_LAID] == 0:
        return E_NOT_LAID
    if m >= gs[g, G_N_MELDS]:
        return E_NO_MELD
    if minfo[g, m, MI_KIND] != MK_RUN:
        return E_SWAP_DISABLED
    lo = minfo[g, m, MI_LO]
    hi = minfo[g, m, MI_HI]
    if q < lo or q > hi or mcards[g, m, q] != JOKER:
        return E_NO_JOKER
    if rv[R_JOKER_SWAP_FROM_RUN_END] == 0 and (q == lo or q == hi):
        return E_SWAP_END
    nat = pos_type(minfo[g, m, MI_KEY], q)
    if hands[g, p, nat] <= 0:
        return E_NO_CARD
    if rv[R_JOKER_SWAP] == JOKER_SWAP_RETRIEVE:             # (M6): the joker goes to the hand
        if rv[R_FREED_JOKER_MUST_BE_USED_SAME_TURN] == 1:
            if not _freed_joker_placeable(gs, ps, hands, minfo, mcards, mas, work[g], rv, g, p, m, q,
                                          nat):
                return E_NOT_USABLE
        return 0
    if last_card_needs_discard and not _holds_more_than(hands, g, p, 1):
        return E_MUST_DISCARD
    dest = _move_target(minfo, mcards, rv, g, m, q)
    return -dest if dest < 0 else 0


@njit
def legal_mask(state, rv, g, out):
    """Write the legal actions of game ``g`` into ``out`` (bool[N_ACTIONS]); return their number.

    Empty only when the game is terminal.  Only plausible candidates are tested (cards held,
    melds on the table), each with ``check_action``, so mask and step can never disagree.
    """
    gs, ps, hands, minfo, mcards = state.gs, state.ps, state.hands, state.minfo, state.mcards
    for a in range(N_ACTIONS):
        out[a] = False
    if gs[g, G_TERMINAL] != 0:
        return 0
    cnt = 0
    ph = gs[g, G_PHASE]
    if ph == PH_UPSWAP:
        out[A_PASS] = True
        cnt = 1
        for t in range(N_TYPES):
            if hands[g, gs[g, G_TO_ACT], t] > 0:
                out[A_UPSWAP + t] = True
                cnt += 1
        return cnt
    if ph == PH_CALL:
        lo_a = A_PASS
        hi_a = A_CALL
    elif ph == PH_ALLOW:
        lo_a = A_ALLOW
        hi_a = A_DENY
    elif ph == PH_DRAW:
        lo_a = A_DRAW_STOCK
        hi_a = A_DRAW_DISCARD
    else:
        lo_a = 1
        hi_a = 0
    for a in range(lo_a, hi_a + 1):
        if check_action(state, rv, g, a) == 0:
            out[a] = True
            cnt += 1
    if ph != PH_PLAY:
        return cnt
    p = gs[g, G_ACTIVE]
    cands = np.empty(N_ACTIONS, dtype=np.int64)
    nc = 0
    cands[nc] = A_END_TURN
    nc += 1
    cands[nc] = A_LAY
    nc += 1
    nm = gs[g, G_N_MELDS]
    layoff = _may_layoff(ps, rv, g, p)
    for t in range(N_TYPES):
        if hands[g, p, t] > 0:
            cands[nc] = A_DISCARD + t
            nc += 1
            if layoff:
                for m in range(nm):
                    if tack_may_fit(minfo, g, m, t):
                        cands[nc] = A_TACK + m * N_TYPES + t
                        nc += 1
                    if t == JOKER and minfo[g, m, MI_KIND] == MK_RUN:
                        cands[nc] = A_TACK_LOW + m
                        nc += 1
    if ps[g, p, PS_LAID] == 1 or rv[R_JOKER_SWAP_REQUIRES_OPENED] == 0:
        for m in range(nm):
            if minfo[g, m, MI_KIND] == MK_RUN and minfo[g, m, MI_NJ] > 0:
                for q in range(minfo[g, m, MI_LO], minfo[g, m, MI_HI] + 1):
                    if mcards[g, m, q] == JOKER:
                        cands[nc] = A_MOVE + m * 15 + q
                        nc += 1
        if rv[R_SET_JOKER_SWAP] != SET_JOKER_SWAP_NEVER:
            for m in range(nm):
                if minfo[g, m, MI_KIND] == MK_SET and minfo[g, m, MI_NJ] > 0:
                    for s_ in range(4):
                        cands[nc] = A_SETSWAP + m * 4 + s_
                        nc += 1
    if rv[R_TABLE_MANIPULATION] == 1 and ps[g, p, PS_LAID] == 1:
        for m in range(nm):
            if minfo[g, m, MI_KIND] == MK_RUN:
                for j in range(4):
                    cands[nc] = A_SHIFT + m * 4 + j
                    nc += 1
                for j in range(2):
                    cands[nc] = A_TAKE_END + m * 2 + j
                    nc += 1
                for q in range(minfo[g, m, MI_LO] + 1, minfo[g, m, MI_HI]):
                    if hands[g, p, pos_type(minfo[g, m, MI_KEY], q)] > 0:
                        cands[nc] = A_SPLIT + m * 15 + q
                        nc += 1
            elif minfo[g, m, MI_KIND] == MK_SET:
                if minfo[g, m, MI_LEN] == 3:
                    for j in range(16):
                        cands[nc] = A_SETSUB + m * 16 + j
                        nc += 1
                elif minfo[g, m, MI_LEN] == 4:
                    for j in range(4):
                        cands[nc] = A_SETTAKE + m * 4 + j
                        nc += 1
    for i in range(nc):
        a = cands[i]
        if check_action(state, rv, g, a) == 0:
            out[a] = True
            cnt += 1
    return cnt
