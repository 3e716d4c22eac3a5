"""Table manipulation M1-M5 (docs/rules.md §2.2; actions ``A_SHIFT`` .. ``A_SETTAKE``, ``layout.py``)
and the joker swaps (M6 and 3-card sets, ``A_MOVE``/``A_SETSWAP`` under ``joker_swap = "retrieve"``).

A card taken from the table goes to the hand but is *owed* (``G_OWED``): until it is placed again
(lay-down plan, lay-off, shift, split, substitution or swap that puts that card type on the
table) nothing else is legal, and a take is only offered when the taken card can be placed at
once (a lay-off that fits, or the best new melds of the hand with it), so a turn can never get
stuck.  One owed card at a time keeps the bookkeeping exact; longer chains (take, take, lay)
are played as take-place, take-place (engine decision D23).  Likewise a joker freed by a swap is
only offered when it can be placed at once (``_freed_joker_placeable``).
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import (
    R_ACE_HIGH, R_ACE_LOW, R_ALLOW_BOTH_ACES_IN_RUN, R_END_TAKE_MAY_TAKE_JOKER, R_GOING_OUT_REQUIRES_DISCARD,
    R_RUN_MIN_SIZE, R_TABLE_MANIPULATION, R_TAKEN_CARDS_MUST_BE_USED_SAME_TURN,
)
from kalooki_sim.melds.positions import pos_type

from .common import _hand_count
from .fit import (
    _fit_err, _growth_ends, _limit_err, _load_meld, _may_layoff, _redeclare_set_jokers, _save_meld, meld_value_of,
)
from .layout import (
    A_MOVE, A_SETSUB, A_SETSWAP, A_SETTAKE, A_SHIFT, A_SPLIT, A_TACK, A_TACK_LOW, A_TAKE_END, E_ACE_RULE, E_BREAKS_MELD,
    E_GROWTH, E_KIND, E_MANIP_CAP, E_NO_CARD, E_NO_FREE_POS, E_NO_MANIP, E_NO_MELD, E_NOT_IN_MELD, E_NOT_LAID,
    E_NOT_USABLE, E_TABLE_FULL, E_TAKE_JOKER, E_WRONG_SUIT, G_MANIPS, G_N_MELDS, JOKER, L_MAX, M_MAX,
    MANIP_MAX_PER_TURN, MELD_W, MI_HI, MI_KEY, MI_KIND, MI_LEN, MI_LO, MI_NJ, MI_OWNER, MI_T_ALL, MI_T_HI, MI_T_LO,
    MK_RUN, MK_SET, N_TYPES, NMI, PS_LAID, W_LEN, W_MANIP,
)
from .plans import hand_plan_places


@njit(_nrt=False)
def _swap_joker_out(hands, minfo, mcards, mas, g, p, m, slot, nat):
    """M6: natural ``nat`` from seat ``p``'s hand takes the joker's place at ``slot`` of meld
    ``m``; the joker goes to the hand."""
    mcards[g, m, slot] = nat
    mas[g, m, slot] = nat
    minfo[g, m, MI_NJ] -= 1
    hands[g, p, nat] -= 1
    hands[g, p, JOKER] += 1


@njit(_nrt=False)
def _freed_joker_placeable(gs, ps, hands, minfo, mcards, mas, work, rv, g, p, m, slot, nat):
    """After the natural ``nat`` replaces the joker at ``slot`` of meld ``m``, could the freed
    joker be placed this turn (lay-off onto a table meld, or in the best new melds)?  Applies the
    swap temporarily and undoes it."""
    old_c = mcards[g, m, slot]
    old_a = mas[g, m, slot]
    _swap_joker_out(hands, minfo, mcards, mas, g, p, m, slot, nat)
    ok = False
    if _may_layoff(ps, rv, g, p):
        for m2 in range(gs[g, G_N_MELDS]):
            if _fit_err(minfo, mcards, mas, rv, g, m2, JOKER) == 0:
                ok = True
                break
    if not ok:
        ok = hand_plan_places(hands, ps, rv, gs, work, g, p, -1, -1, JOKER)
    hands[g, p, JOKER] -= 1
    hands[g, p, nat] += 1
    minfo[g, m, MI_NJ] += 1
    mcards[g, m, slot] = old_c
    mas[g, m, slot] = old_a
    return ok


@njit(_nrt=False)
def _set_swap_slot(minfo, mcards, mas, g, m, nat):
    """Joker slot of set ``m`` that natural ``nat`` replaces: the joker declared as ``nat`` if
    any, else the first joker."""
    first = -1
    for i in range(minfo[g, m, MI_LEN]):
        if mcards[g, m, i] == JOKER:
            if mas[g, m, i] == nat:
                return i
            if first < 0:
                first = i
    return first


@njit(_nrt=False, specialise_constants=False)
def _placed_type(gs, minfo, g, a):
    """Card type that play action ``a`` moves from the hand to the table (-1: none or unknown;
    lay-downs may place several cards, callers ask the plan)."""
    if a >= A_TACK_LOW:
        return JOKER
    if a >= A_TACK and a < A_MOVE:
        return (a - A_TACK) % N_TYPES
    if a < A_MOVE or a >= A_SETTAKE:
        return -1
    nm = gs[g, G_N_MELDS]
    if a < A_SETSWAP:
        m = (a - A_MOVE) // 15
        if m >= nm or minfo[g, m, MI_KIND] != MK_RUN:
            return -1
        return pos_type(minfo[g, m, MI_KEY], (a - A_MOVE) % 15)
    if a < A_SHIFT:
        m = (a - A_SETSWAP) // 4
        return ((a - A_SETSWAP) % 4) * 13 + minfo[g, m, MI_KEY] if m < nm else -1
    if a < A_TAKE_END:
        x = a - A_SHIFT
        m = x >> 2
        if m >= nm or minfo[g, m, MI_KIND] != MK_RUN:
            return -1
        if x & 1:
            return JOKER
        q = minfo[g, m, MI_HI] + 1 if (x >> 1) & 1 == 0 else minfo[g, m, MI_LO] - 1
        return pos_type(minfo[g, m, MI_KEY], q) if 1 <= q <= 14 else -1
    if a < A_SPLIT:
        return -1
    if a < A_SETSUB:
        m = (a - A_SPLIT) // 15
        if m >= nm or minfo[g, m, MI_KIND] != MK_RUN:
            return -1
        return pos_type(minfo[g, m, MI_KEY], (a - A_SPLIT) % 15)
    m = (a - A_SETSUB) // 16
    if m >= nm or minfo[g, m, MI_KIND] != MK_SET:
        return -1
    return (((a - A_SETSUB) // 4) % 4) * 13 + minfo[g, m, MI_KEY]


@njit(_nrt=False)
def _set_slot_of(minfo, mcards, g, m, t):
    """Slot of natural ``t`` in set ``m`` (-1: not there)."""
    for i in range(minfo[g, m, MI_LEN]):
        if mcards[g, m, i] == t:
            return i
    return -1


@njit(_nrt=False)
def _recount_jokers(minfo, mcards, g, m, lo, hi):
    nj = 0
    for q in range(lo, hi + 1):
        if mcards[g, m, q] == JOKER:
            nj += 1
    minfo[g, m, MI_NJ] = nj


@njit(_nrt=False)
def _manip_apply(gs, hands, minfo, mcards, mas, g, p, a):
    """Carry out manipulation ``a`` (structurally checked by ``_manip_err``) on the table and on
    seat ``p``'s hand.  Returns the card type taken into the hand (-1: none)."""
    if a < A_TAKE_END:                                   # M1 shift
        x = a - A_SHIFT
        m = x >> 2
        side = (x >> 1) & 1
        s = minfo[g, m, MI_KEY]
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
        if side == 0:
            q_add = hi + 1
            q_take = lo
        else:
            q_add = lo - 1
            q_take = hi
        t_add = JOKER if x & 1 else pos_type(s, q_add)
        c = np.int64(mcards[g, m, q_take])
        mcards[g, m, q_add] = t_add
        mas[g, m, q_add] = pos_type(s, q_add)
        mcards[g, m, q_take] = -1
        mas[g, m, q_take] = -1
        if side == 0:
            minfo[g, m, MI_LO] = lo + 1
            minfo[g, m, MI_HI] = q_add
            minfo[g, m, MI_T_HI] += 1
        else:
            minfo[g, m, MI_LO] = q_add
            minfo[g, m, MI_HI] = hi - 1
            minfo[g, m, MI_T_LO] += 1
        minfo[g, m, MI_T_ALL] += 1
        _recount_jokers(minfo, mcards, g, m, minfo[g, m, MI_LO], minfo[g, m, MI_HI])
        hands[g, p, t_add] -= 1
        hands[g, p, c] += 1
        return c
    if a < A_SPLIT:                                      # M2 take an end card
        x = a - A_TAKE_END
        m = x >> 1
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
        q = hi if x & 1 == 0 else lo
        c = np.int64(mcards[g, m, q])
        mcards[g, m, q] = -1
        mas[g, m, q] = -1
        if q == hi:
            minfo[g, m, MI_HI] = hi - 1
        else:
            minfo[g, m, MI_LO] = lo + 1
        minfo[g, m, MI_LEN] -= 1
        if c == JOKER:
            minfo[g, m, MI_NJ] -= 1
        hands[g, p, c] += 1
        return c
    if a < A_SETSUB:                                     # M3 split
        m = (a - A_SPLIT) // 15
        q = (a - A_SPLIT) % 15
        s = minfo[g, m, MI_KEY]
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
        n2 = gs[g, G_N_MELDS]
        nat = pos_type(s, q)
        for j in range(L_MAX):
            mcards[g, n2, j] = -1
            mas[g, n2, j] = -1
        for j in range(NMI):
            minfo[g, n2, j] = 0
        minfo[g, n2, MI_KIND] = MK_RUN
        minfo[g, n2, MI_OWNER] = minfo[g, m, MI_OWNER]
        minfo[g, n2, MI_KEY] = s
        minfo[g, n2, MI_LO] = q
        minfo[g, n2, MI_HI] = hi
        minfo[g, n2, MI_LEN] = hi - q + 1
        mcards[g, n2, q] = nat
        mas[g, n2, q] = nat
        for r in range(q + 1, hi + 1):
            mcards[g, n2, r] = mcards[g, m, r]
            mas[g, n2, r] = mas[g, m, r]
            mcards[g, m, r] = -1
            mas[g, m, r] = -1
        minfo[g, m, MI_HI] = q
        minfo[g, m, MI_LEN] = q - lo + 1
        # this turn's lay-off counts follow the ends (D28): the upper part keeps the run's high end
        # and its count, the lower part its low end's; the two new ends start at 0
        minfo[g, n2, MI_T_HI] = minfo[g, m, MI_T_HI]
        minfo[g, n2, MI_T_ALL] = minfo[g, m, MI_T_HI]
        minfo[g, m, MI_T_HI] = 0
        minfo[g, m, MI_T_ALL] = minfo[g, m, MI_T_LO]
        _recount_jokers(minfo, mcards, g, m, lo, q)
        _recount_jokers(minfo, mcards, g, n2, q, hi)
        gs[g, G_N_MELDS] = n2 + 1
        hands[g, p, nat] -= 1
        return -1
    r = minfo[g, (a - A_SETSUB) // 16, MI_KEY] if a < A_SETTAKE else minfo[g, (a - A_SETTAKE) // 4, MI_KEY]
    if a < A_SETTAKE:                                    # M4 set substitution
        x = a - A_SETSUB
        m = x // 16
        t_add = ((x // 4) % 4) * 13 + r
        c = (x % 4) * 13 + r
        i = _set_slot_of(minfo, mcards, g, m, c)
        mcards[g, m, i] = t_add
        mas[g, m, i] = t_add
        _redeclare_set_jokers(minfo, mcards, mas, g, m)
        hands[g, p, t_add] -= 1
        hands[g, p, c] += 1
        return c
    m = (a - A_SETTAKE) // 4                             # M5 take from a 4-card set
    c = ((a - A_SETTAKE) % 4) * 13 + r
    i = _set_slot_of(minfo, mcards, g, m, c)
    n = minfo[g, m, MI_LEN]
    for j in range(i, n - 1):
        mcards[g, m, j] = mcards[g, m, j + 1]
        mas[g, m, j] = mas[g, m, j + 1]
    mcards[g, m, n - 1] = -1
    mas[g, m, n - 1] = -1
    minfo[g, m, MI_LEN] = n - 1
    minfo[g, m, MI_HI] = n - 2
    hands[g, p, c] += 1
    return c


@njit(_nrt=False)
def _owed_placeable(gs, ps, hands, minfo, mcards, mas, work, rv, g, p, c):
    """Could card ``c`` (just taken into seat ``p``'s hand) be placed now: as a lay-off onto a
    table meld, or in the best new melds of the hand (the plan the engine will offer)?"""
    if rv[R_GOING_OUT_REQUIRES_DISCARD] == 1 and _hand_count(hands, g, p) <= 1:
        return False
    for m2 in range(gs[g, G_N_MELDS]):
        if _fit_err(minfo, mcards, mas, rv, g, m2, c) == 0:
            return True
    return hand_plan_places(hands, ps, rv, gs, work, g, p, -1, -1, c)


@njit(_nrt=False)
def _manip_shape_err(gs, ps, hands, minfo, mcards, rv, g, p, a):
    """Structural checks of manipulation ``a`` (no state change): 0 or an ``E_*`` code."""
    if rv[R_TABLE_MANIPULATION] == 0:
        return E_NO_MANIP
    if ps[g, p, PS_LAID] == 0:
        return E_NOT_LAID                                # A23: only after the opening
    if gs[g, G_MANIPS] >= MANIP_MAX_PER_TURN:
        return E_MANIP_CAP
    nm = gs[g, G_N_MELDS]
    rmin = rv[R_RUN_MIN_SIZE]
    if a < A_SPLIT:                                      # M1 shift / M2 end take: a run
        if a < A_TAKE_END:
            x = a - A_SHIFT
            m = x >> 2
        else:
            x = a - A_TAKE_END
            m = x >> 1
        if m >= nm:
            return E_NO_MELD
        if minfo[g, m, MI_KIND] != MK_RUN:
            return E_KIND
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
        if a < A_TAKE_END:
            side = (x >> 1) & 1
            up, down = _growth_ends(hi, rv)
            if (side == 0 and not up) or (side == 1 and not down):
                return E_GROWTH
            q_add = hi + 1 if side == 0 else lo - 1
            q_take = lo if side == 0 else hi
            if q_add < 1 or q_add > 14:
                return E_NO_FREE_POS
            if (q_add == 14 and rv[R_ACE_HIGH] == 0) or (q_add == 1 and rv[R_ACE_LOW] == 0):
                return E_ACE_RULE
            nlo = lo + 1 if side == 0 else q_add
            nhi = q_add if side == 0 else hi - 1
            if nlo == 1 and nhi == 14 and rv[R_ALLOW_BOTH_ACES_IN_RUN] == 0:
                return E_ACE_RULE
            t_add = JOKER if x & 1 else pos_type(minfo[g, m, MI_KEY], q_add)
            if hands[g, p, t_add] <= 0:
                return E_NO_CARD
            e = _limit_err(minfo, rv, g, m, side)        # M1 places a card at its end (A21)
            if e != 0:
                return e
        else:
            q_take = hi if x & 1 == 0 else lo
            if hi - lo < rmin:                           # rmin cards must remain
                return E_BREAKS_MELD
        if mcards[g, m, q_take] == JOKER and rv[R_END_TAKE_MAY_TAKE_JOKER] == 0:
            return E_TAKE_JOKER
        return 0
    if a < A_SETSUB:                                     # M3 split
        m = (a - A_SPLIT) // 15
        q = (a - A_SPLIT) % 15
        if m >= nm:
            return E_NO_MELD
        if minfo[g, m, MI_KIND] != MK_RUN:
            return E_KIND
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
        if q - lo + 1 < rmin or hi - q + 1 < rmin:
            return E_BREAKS_MELD
        if hands[g, p, pos_type(minfo[g, m, MI_KEY], q)] <= 0:
            return E_NO_CARD
        if nm >= M_MAX:
            return E_TABLE_FULL
        return 0
    if a < A_SETTAKE:                                    # M4 substitution in a 3-card set
        x = a - A_SETSUB
        m = x // 16
        if m >= nm:
            return E_NO_MELD
        if minfo[g, m, MI_KIND] != MK_SET or minfo[g, m, MI_LEN] != 3:
            return E_KIND
        r = minfo[g, m, MI_KEY]
        s_add = (x // 4) % 4
        s_take = x % 4
        if s_add == s_take or _set_slot_of(minfo, mcards, g, m, s_add * 13 + r) >= 0:
            return E_WRONG_SUIT
        if _set_slot_of(minfo, mcards, g, m, s_take * 13 + r) < 0:
            return E_NOT_IN_MELD
        if hands[g, p, s_add * 13 + r] <= 0:
            return E_NO_CARD
        return 0
    m = (a - A_SETTAKE) // 4                             # M5 take from a 4-card set
    if m >= nm:
        return E_NO_MELD
    if minfo[g, m, MI_KIND] != MK_SET or minfo[g, m, MI_LEN] != 4:
        return E_KIND
    if _set_slot_of(minfo, mcards, g, m, ((a - A_SETTAKE) % 4) * 13 + minfo[g, m, MI_KEY]) < 0:
        return E_NOT_IN_MELD
    return 0


@njit(_nrt=False, specialise_constants=False)   # (``check_action``'s flow-action copies never call it)
def _manip_err(gs, ps, hands, minfo, mcards, mas, work, rv, g, p, a):
    """0 if manipulation ``a`` is legal now, else the ``E_*`` code.  Tries the move on the state
    and undoes it: every meld it touches must stay legal, and a taken card must be placeable."""
    e = _manip_shape_err(gs, ps, hands, minfo, mcards, rv, g, p, a)
    if e != 0:
        return e
    if a < A_TAKE_END:
        m = (a - A_SHIFT) >> 2
    elif a < A_SPLIT:
        m = (a - A_TAKE_END) >> 1
    elif a < A_SETSUB:
        m = (a - A_SPLIT) // 15
    elif a < A_SETTAKE:
        m = (a - A_SETSUB) // 16
    else:
        m = (a - A_SETTAKE) // 4
    nm = gs[g, G_N_MELDS]
    m2 = nm if nm < M_MAX else m                         # the row a split fills
    buf = work[W_MANIP:W_LEN]          # engine scratch (W_*)
    _save_meld(minfo, mcards, mas, g, m, buf, 0)
    _save_meld(minfo, mcards, mas, g, m2, buf, MELD_W)
    for t in range(N_TYPES):
        buf[2 * MELD_W + t] = hands[g, p, t]
    c = _manip_apply(gs, hands, minfo, mcards, mas, g, p, a)
    err = 0
    if meld_value_of(minfo, mcards, mas, rv, g, m) < 0:
        err = E_BREAKS_MELD
    elif gs[g, G_N_MELDS] > nm and meld_value_of(minfo, mcards, mas, rv, g, nm) < 0:
        err = E_BREAKS_MELD
    elif c >= 0 and rv[R_TAKEN_CARDS_MUST_BE_USED_SAME_TURN] == 1:
        if not _owed_placeable(gs, ps, hands, minfo, mcards, mas, work, rv, g, p, c):
            err = E_NOT_USABLE
    gs[g, G_N_MELDS] = nm
    _load_meld(minfo, mcards, mas, g, m2, buf, MELD_W)
    _load_meld(minfo, mcards, mas, g, m, buf, 0)
    for t in range(N_TYPES):
        hands[g, p, t] = buf[2 * MELD_W + t]
    return err
