"""Carrying out a legal action: ``step`` (check, then apply) and ``apply_action`` (apply only, for
callers that took the action from a legal mask they computed).
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import (
    DISCARD_DRAW_BEFORE_OPENING_ANY, JOKER_SWAP_RETRIEVE, R_CALL_PENALTY_CARDS, R_COUNT_DENIED_CALLS,
    R_FREED_JOKER_MUST_BE_USED_SAME_TURN, R_JOKER_SWAP, R_KEEP_TOP_DISCARD_ON_RESHUFFLE, R_NEW_MELDS_AFTER_OPENING,
    R_TAKEN_CARDS_MUST_BE_USED_SAME_TURN,
)
from kalooki_sim.melds.positions import pos_type

from .common import _dir, _holds_any, _steps_between
from .fit import _apply_tack, _move_target, set_joker_meaning
from .flow import _end_turn, _enter_play, _finish_hand, _next_caller, _pop_stock, _start_turn, _void_deal
from .layout import (
    A_ALLOW, A_CALL, A_DENY, A_DISCARD, A_DRAW_DISCARD, A_DRAW_STOCK, A_END_TURN, A_MOVE, A_PASS, A_SETSWAP,
    A_SHIFT, A_TACK, A_TACK_LOW, A_UPSWAP, EV_NONE, EV_WENT_OUT, G_ACTIVE, G_AFTER_ALLOW, G_CALL_DONE, G_CALLER,
    G_DISC_N, G_FREED, G_LAID_THIS_TURN, G_LAST_EVENT, G_MANIPS, G_N_MELDS, G_NP, G_OPEN_DEBT, G_OWED, G_PHASE,
    G_PLAN_DEBT, G_STEPS, G_TAKEN, G_TAKEN_MUST, G_TO_ACT, JOKER, L_MAX, MI_HI, MI_KEY, MI_KIND, MI_LEN, MI_LO, MI_NJ,
    MI_OWNER, MK_JSET, MK_RUN, MK_SET, N_TYPES, PH_ALLOW, PH_DRAW, PH_UPSWAP, PS_CALLS, PS_LAID, W_HELD,
)
from .legality import check_action, draw_mode
from .manipulation import _manip_apply, _placed_type, _set_swap_slot, _swap_joker_out
from .plans import _K_RUN, _K_SET, _clear_plans, plan_count, compute_plans


@njit(_nrt=False)
def _settle_placed(gs, g, t, n):
    """``n`` copies of card type ``t`` went from the hand to the table: they settle, in this order,
    the card owed to the table (``G_OWED``), freed jokers (``G_FREED``), and the ban on throwing
    back the card drawn from the pile (``G_TAKEN``).  A copy that only goes back where it was
    taken from releases nothing (D19, A40/A53: only a copy from the hand lifts the ban)."""
    if n > 0 and gs[g, G_OWED] == t:
        gs[g, G_OWED] = -1
        n -= 1
    if n > 0 and t == JOKER and gs[g, G_FREED] > 0:
        k = n if n < gs[g, G_FREED] else gs[g, G_FREED]
        gs[g, G_FREED] -= k
        n -= k
    if n > 0 and gs[g, G_TAKEN] == t:
        gs[g, G_TAKEN] = -1


@njit(_nrt=False, inline="always")
def _unshow(shown, g, p, t, n):
    """``n`` copies of type ``t`` left seat ``p``'s hand: that many fewer are known to be there
    (the copies of a type look alike, so any of them may have been the one seen taken)."""
    k = shown[g, p, t] - n
    shown[g, p, t] = k if k > 0 else 0


@njit(_nrt=False)
def _apply_lay(gs, ps, hands, shown, minfo, mcards, mas, plan, plan_n, g):
    """Put the offered plan on the table as new melds owned by the active player."""
    p = gs[g, G_ACTIVE]
    for i in range(plan_n[g, 0]):
        m = gs[g, G_N_MELDS]
        kind = plan[g, i, 0]
        for j in range(L_MAX):
            mcards[g, m, j] = -1
            mas[g, m, j] = -1
        minfo[g, m, MI_OWNER] = p
        if kind == _K_RUN:
            s = plan[g, i, 1]
            lo = plan[g, i, 2]
            hi = plan[g, i, 3]
            jmask = plan[g, i, 4]
            nj = 0
            for q in range(lo, hi + 1):
                typ = pos_type(s, q)
                mas[g, m, q] = typ
                if (jmask >> q) & 1:
                    mcards[g, m, q] = JOKER
                    hands[g, p, JOKER] -= 1
                    _unshow(shown, g, p, JOKER, 1)
                    nj += 1
                else:
                    mcards[g, m, q] = typ
                    hands[g, p, typ] -= 1
                    _unshow(shown, g, p, typ, 1)
            minfo[g, m, MI_KIND] = MK_RUN
            minfo[g, m, MI_KEY] = s
            minfo[g, m, MI_LO] = lo
            minfo[g, m, MI_HI] = hi
            minfo[g, m, MI_LEN] = hi - lo + 1
            minfo[g, m, MI_NJ] = nj
        elif kind == _K_SET:
            r = plan[g, i, 1]
            n = 0
            for s in range(4):
                typ = s * 13 + r
                for c in range(plan[g, i, 2 + s]):
                    mcards[g, m, n] = typ
                    mas[g, m, n] = typ
                    hands[g, p, typ] -= 1
                    _unshow(shown, g, p, typ, 1)
                    n += 1
            minfo[g, m, MI_KIND] = MK_SET
            minfo[g, m, MI_KEY] = r
            minfo[g, m, MI_LO] = 0
            minfo[g, m, MI_LEN] = n
            nj = plan[g, i, 6]
            for c in range(nj):
                mas[g, m, n] = set_joker_meaning(minfo, mas, g, m)
                mcards[g, m, n] = JOKER
                hands[g, p, JOKER] -= 1
                _unshow(shown, g, p, JOKER, 1)
                n += 1
                minfo[g, m, MI_LEN] = n
            minfo[g, m, MI_HI] = n - 1
            minfo[g, m, MI_NJ] = nj
        else:
            nj = plan[g, i, 6]
            for c in range(nj):
                mcards[g, m, c] = JOKER
                hands[g, p, JOKER] -= 1
                _unshow(shown, g, p, JOKER, 1)
            minfo[g, m, MI_KIND] = MK_JSET
            minfo[g, m, MI_KEY] = -1
            minfo[g, m, MI_LO] = 0
            minfo[g, m, MI_HI] = nj - 1
            minfo[g, m, MI_LEN] = nj
            minfo[g, m, MI_NJ] = nj
        gs[g, G_N_MELDS] = m + 1
    if ps[g, p, PS_LAID] == 0:
        ps[g, p, PS_LAID] = 1
        gs[g, G_LAID_THIS_TURN] = 1
    _clear_plans(plan_n, g)


@njit(_nrt=False)
def step(state, rv, g, a):
    """Apply action ``a`` to game ``g``.  Returns 0, or an ``E_*`` code (state unchanged)."""
    err = check_action(state, rv, g, a)
    if err != 0:
        return err
    return apply_action(state, rv, g, a)


@njit(_nrt=False, inline="always")
def apply_action(state, rv, g, a):
    """``step`` without its legality check, for callers that already asked ``check_action`` about
    this very state (the closed loops, whose ``seat_action`` returns only checked actions): the
    check is a sizeable share of a hand.  An unchecked illegal action corrupts the state."""
    gs, ps, hands, stock, disc, disc_by = state.gs, state.ps, state.hands, state.stock, state.disc, state.disc_by
    minfo, mcards, mas, plan, plan_n = state.minfo, state.mcards, state.mas, state.plan, state.plan_n
    hscore, hwin, work, shown = state.hscore, state.hwin, state.work, state.shown
    gs[g, G_STEPS] += 1
    gs[g, G_LAST_EVENT] = EV_NONE
    act = gs[g, G_ACTIVE]
    n = gs[g, G_NP]
    d = _dir(rv)
    if gs[g, G_PHASE] == PH_UPSWAP:
        if a != A_PASS:
            dealer = gs[g, G_TO_ACT]
            t = a - A_UPSWAP
            top = gs[g, G_DISC_N] - 1
            hands[g, dealer, disc[g, top]] += 1
            shown[g, dealer, disc[g, top]] += 1
            hands[g, dealer, t] -= 1
            _unshow(shown, g, dealer, t, 1)
            disc[g, top] = t
        _start_turn(gs, ps, disc_by, minfo, plan_n, rv, g, act)
        return 0
    if a == A_PASS:
        c = _next_caller(gs, ps, disc_by, rv, g, _steps_between(act, gs[g, G_TO_ACT], n, d) + 1)
        if c >= 0:
            gs[g, G_TO_ACT] = c
        else:
            gs[g, G_PHASE] = PH_DRAW
            gs[g, G_TO_ACT] = act
    elif a == A_CALL:
        gs[g, G_CALLER] = gs[g, G_TO_ACT]
        gs[g, G_PHASE] = PH_ALLOW
        gs[g, G_TO_ACT] = act
    elif a == A_ALLOW:
        c = gs[g, G_CALLER]
        top = gs[g, G_DISC_N] - 1
        hands[g, c, disc[g, top]] += 1
        shown[g, c, disc[g, top]] += 1
        disc[g, top] = -1
        disc_by[g, top] = -1
        gs[g, G_DISC_N] = top
        for i in range(rv[R_CALL_PENALTY_CARDS]):
            x = _pop_stock(gs, stock, disc, disc_by, rv, g, False)
            if x >= 0:
                hands[g, c, x] += 1
        ps[g, c, PS_CALLS] += 1
        gs[g, G_CALL_DONE] = 1
        gs[g, G_AFTER_ALLOW] = 1
        gs[g, G_CALLER] = -1
        gs[g, G_PHASE] = PH_DRAW
        gs[g, G_TO_ACT] = act
    elif a == A_DENY:
        c = gs[g, G_CALLER]
        top = gs[g, G_DISC_N] - 1
        t = np.int64(disc[g, top])
        hands[g, act, t] += 1
        shown[g, act, t] += 1
        disc[g, top] = -1
        disc_by[g, top] = -1
        gs[g, G_DISC_N] = top
        gs[g, G_TAKEN] = t
        if rv[R_COUNT_DENIED_CALLS] == 1:
            ps[g, c, PS_CALLS] += 1
        gs[g, G_CALL_DONE] = 1
        gs[g, G_CALLER] = -1
        _enter_play(gs, ps, hands, minfo, mcards, mas, plan, plan_n, work, rv, g)
    elif a == A_DRAW_STOCK:
        x = _pop_stock(gs, stock, disc, disc_by, rv, g, rv[R_KEEP_TOP_DISCARD_ON_RESHUFFLE] == 1)
        if x < 0:
            _void_deal(gs, ps, hands, shown, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin, rv, g)
            return 0
        hands[g, act, x] += 1
        _enter_play(gs, ps, hands, minfo, mcards, mas, plan, plan_n, work, rv, g)
    elif a == A_DRAW_DISCARD:
        if draw_mode(gs, ps, rv, g, act) != DISCARD_DRAW_BEFORE_OPENING_ANY:
            gs[g, G_TAKEN_MUST] = 1          # must be melded this turn (only such actions allowed)
        top = gs[g, G_DISC_N] - 1
        t = np.int64(disc[g, top])
        hands[g, act, t] += 1
        shown[g, act, t] += 1
        disc[g, top] = -1
        disc_by[g, top] = -1
        gs[g, G_DISC_N] = top
        gs[g, G_TAKEN] = t
        _enter_play(gs, ps, hands, minfo, mcards, mas, plan, plan_n, work, rv, g)
    elif a == A_END_TURN:
        _end_turn(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin, rv, g)
    else:
        # an opened player with no new melds who gains no card: a sub-hand has no melds either, so
        # there is nothing to recompute (not so before the opening: V1's kalooki may appear)
        no_plan = ps[g, act, PS_LAID] == 1 and plan_n[g, 0] < 0 and gs[g, G_PLAN_DEBT] == 0
        gained = False
        # the cards that move from the hand to the table: what they settle, settled here
        if a < A_DISCARD:
            owed = gs[g, G_OWED]
            taken = gs[g, G_TAKEN]
            if owed >= 0:
                _settle_placed(gs, g, owed, plan_count(plan[g], plan_n[g, 0], owed))
            if owed != JOKER:
                _settle_placed(gs, g, JOKER, plan_count(plan[g], plan_n[g, 0], JOKER))
            if taken >= 0 and taken != owed and taken != JOKER:
                _settle_placed(gs, g, taken, plan_count(plan[g], plan_n[g, 0], taken))
        else:
            placed = _placed_type(gs, minfo, g, a)
            if placed >= 0:
                _settle_placed(gs, g, placed, 1)
        if a < A_DISCARD:
            if ps[g, act, PS_LAID] == 0:
                gs[g, G_OPEN_DEBT] = gs[g, G_PLAN_DEBT]      # A43: lay-offs complete the opening
            _apply_lay(gs, ps, hands, shown, minfo, mcards, mas, plan, plan_n, g)
        elif a < A_TACK:
            t = a - A_DISCARD
            hands[g, act, t] -= 1
            _unshow(shown, g, act, t, 1)
            k = gs[g, G_DISC_N]
            disc[g, k] = t
            disc_by[g, k] = act
            gs[g, G_DISC_N] = k + 1
            if _holds_any(hands, g, act):
                _end_turn(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore,
                          hwin, rv, g)
                return 0
        elif a < A_MOVE or a >= A_TACK_LOW:              # a lay-off (A_TACK_LOW: a joker, low end)
            low = a >= A_TACK_LOW
            m = a - A_TACK_LOW if low else (a - A_TACK) // N_TYPES
            t = JOKER if low else (a - A_TACK) % N_TYPES
            v = _apply_tack(minfo, mcards, mas, rv, g, m, t, low)
            if gs[g, G_OPEN_DEBT] > 0:
                gs[g, G_OPEN_DEBT] = gs[g, G_OPEN_DEBT] - v if gs[g, G_OPEN_DEBT] > v else 0
            hands[g, act, t] -= 1
            _unshow(shown, g, act, t, 1)
        elif a >= A_SHIFT:                               # table manipulation M1-M5
            for t in range(N_TYPES):
                work[g, W_HELD + t] = hands[g, act, t]
            c = _manip_apply(gs, hands, minfo, mcards, mas, g, act, a)
            if c >= 0:                                   # the card taken from the table, in sight
                shown[g, act, c] += 1
                work[g, W_HELD + c] += 1
            for t in range(N_TYPES):                     # ... and what the hand gave up for it
                if hands[g, act, t] < work[g, W_HELD + t]:
                    _unshow(shown, g, act, t, work[g, W_HELD + t] - hands[g, act, t])
            gs[g, G_MANIPS] += 1
            gained = c >= 0
            if c >= 0 and rv[R_TAKEN_CARDS_MUST_BE_USED_SAME_TURN] == 1:
                gs[g, G_OWED] = c
        elif a >= A_SETSWAP:
            gained = True
            m = (a - A_SETSWAP) // 4
            nat = ((a - A_SETSWAP) % 4) * 13 + minfo[g, m, MI_KEY]
            _swap_joker_out(hands, minfo, mcards, mas, g, act, m,
                            _set_swap_slot(minfo, mcards, mas, g, m, nat), nat)
            _unshow(shown, g, act, nat, 1)
            shown[g, act, JOKER] += 1
            if rv[R_FREED_JOKER_MUST_BE_USED_SAME_TURN] == 1:
                gs[g, G_FREED] += 1
        elif rv[R_JOKER_SWAP] == JOKER_SWAP_RETRIEVE:
            gained = True
            m = (a - A_MOVE) // 15
            q = (a - A_MOVE) % 15
            nat = pos_type(minfo[g, m, MI_KEY], q)
            _swap_joker_out(hands, minfo, mcards, mas, g, act, m, q, nat)
            _unshow(shown, g, act, nat, 1)
            shown[g, act, JOKER] += 1
            if rv[R_FREED_JOKER_MUST_BE_USED_SAME_TURN] == 1:
                gs[g, G_FREED] += 1
        else:
            m = (a - A_MOVE) // 15
            q = (a - A_MOVE) % 15
            dest = _move_target(minfo, mcards, rv, g, m, q)
            nat = pos_type(minfo[g, m, MI_KEY], q)
            mcards[g, m, q] = nat
            hands[g, act, nat] -= 1
            _unshow(shown, g, act, nat, 1)
            mcards[g, m, dest] = JOKER
            mas[g, m, dest] = pos_type(minfo[g, m, MI_KEY], dest)
            if dest < minfo[g, m, MI_LO]:
                minfo[g, m, MI_LO] = dest
            if dest > minfo[g, m, MI_HI]:
                minfo[g, m, MI_HI] = dest
            minfo[g, m, MI_LEN] += 1
        if not _holds_any(hands, g, act):                # went out (A3)
            _finish_hand(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin,
                         rv, g, act, EV_WENT_OUT)
        elif rv[R_NEW_MELDS_AFTER_OPENING] == 1 and (gained or not no_plan):
            compute_plans(gs, ps, hands, plan, plan_n, work[g], rv, g)   # the hand changed: new plans
    return 0
