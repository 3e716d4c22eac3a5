"""Where a card fits on a table meld, and laying it off there (tacks; docs/rules.md A12, A21/V2).

``_run_fit`` and ``_set_fit`` are the one definition of what may go where: legality, the joker moves
and table manipulation (``manipulation``) and the opening completed by lay-offs (``plans``, A43)
all ask them, so a lay-off is judged the same way wherever it comes up.  ``_apply_tack`` is the one
place a lay-off changes a meld; ``_save_meld``/``_load_meld`` let a check try one and take it back.
``meld_value_of`` values a table meld (points openings, the invariant checks).
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import (
    R_ACE_HIGH, R_ACE_LOW, R_ALLOW_BOTH_ACES_IN_RUN, R_JOKER_SET_MELD_VALUE, R_LAYOFF_MAX_PER_RUN_END_PER_TURN,
    R_LAYOFF_MAX_PER_RUN_PER_TURN, R_LAYOFF_REQUIRES_OPENED, R_MELD_VALUE, R_RUN_ADJACENT_JOKERS, R_RUN_GROWTH_RULE,
    R_SET_ALLOW_DUPLICATE_SUIT, R_SET_MAX_SIZE, RUN_GROWTH_RULE_UP_UNTIL_ACE_THEN_DOWN,
)
from kalooki_sim.melds.legality import KIND_RUN, KIND_SET, meld_best_value, run_max_len
from kalooki_sim.melds.positions import pos_type

from .layout import (
    E_ACE_RULE, E_ADJACENT_JOKERS, E_GROWTH, E_KIND, E_LAYOFF_LIMIT, E_NO_FREE_POS, E_NOT_ADJACENT, E_ONE_END,
    E_SET_FULL, E_WRONG_RANK, E_WRONG_SUIT, G_N_MELDS, G_OPEN_DEBT, JOKER, L_MAX, MELD_W, MI_HI, MI_KEY, MI_KIND,
    MI_LEN, MI_LO, MI_NJ, MI_T_ALL, MI_T_HI, MI_T_LO, MK_JSET, MK_RUN, MK_SET, N_TYPES, NMI, PS_LAID,
)


@njit(_nrt=False)
def _pos_ok(q, lo, hi, rv):
    """Error code for extending run [lo, hi] to position q (0 = fine)."""
    if q < 1 or q > 14:
        return E_NO_FREE_POS
    if q == 14 and rv[R_ACE_HIGH] == 0:
        return E_ACE_RULE
    if q == 1 and rv[R_ACE_LOW] == 0:
        return E_ACE_RULE
    nlo = q if q < lo else lo
    nhi = q if q > hi else hi
    if nlo == 1 and nhi == 14 and rv[R_ALLOW_BOTH_ACES_IN_RUN] == 0:
        return E_ACE_RULE
    if nhi - nlo + 1 > run_max_len(rv):
        return E_NO_FREE_POS
    return 0


@njit(_nrt=False)
def _growth_ends(hi, rv):
    """(high end open, low end open) under run_growth_rule (A12: an ace on top, natural or joker,
    closes the high end and opens the low end)."""
    if rv[R_RUN_GROWTH_RULE] == RUN_GROWTH_RULE_UP_UNTIL_ACE_THEN_DOWN:
        return hi != 14, hi == 14
    return True, True


@njit(_nrt=False)
def _limit_err(minfo, rv, g, m, side):
    """``E_LAYOFF_LIMIT`` when run ``m`` has had its cards for this turn at its high (``side`` 0)
    or low (1) end, or in all (A21, V2), else 0."""
    lim = rv[R_LAYOFF_MAX_PER_RUN_END_PER_TURN]
    if lim >= 0 and (minfo[g, m, MI_T_HI] if side == 0 else minfo[g, m, MI_T_LO]) >= lim:
        return E_LAYOFF_LIMIT
    lim = rv[R_LAYOFF_MAX_PER_RUN_PER_TURN]
    if lim >= 0 and minfo[g, m, MI_T_ALL] >= lim:
        return E_LAYOFF_LIMIT
    return 0


@njit(_nrt=False)
def _joker_end_err(minfo, mcards, rv, g, m, side):
    """0 if a joker may be laid off now at the high (``side`` 0) or low (1) end of run ``m``: the
    growth rule, the position and ace rules, adjacent jokers and this turn's lay-off limits."""
    lo = minfo[g, m, MI_LO]
    hi = minfo[g, m, MI_HI]
    up, down = _growth_ends(hi, rv)
    if (side == 0 and not up) or (side == 1 and not down):
        return E_GROWTH
    q = hi + 1 if side == 0 else lo - 1
    e = _pos_ok(q, lo, hi, rv)
    if e != 0:
        return e
    if rv[R_RUN_ADJACENT_JOKERS] == 0 and mcards[g, m, hi if side == 0 else lo] == JOKER:
        return E_ADJACENT_JOKERS
    return _limit_err(minfo, rv, g, m, side)


@njit(_nrt=False)
def _joker_side(minfo, mcards, rv, g, m):
    """The end a plain joker lay-off (``A_TACK``) goes to on run ``m``: the high end (0) when it can
    take the joker, else the low end (1); minus an error code when neither can.  The player picks
    the low end of a run open at both ends with ``A_TACK_LOW`` (A21: either end)."""
    e0 = _joker_end_err(minfo, mcards, rv, g, m, 0)
    if e0 == 0:
        return 0
    e1 = _joker_end_err(minfo, mcards, rv, g, m, 1)
    if e1 == 0:
        return 1
    return -(e1 if e1 != E_GROWTH else e0)


@njit(_nrt=False)
def _low_joker_err(minfo, mcards, rv, g, m):
    """0 if ``A_TACK_LOW`` (a joker at the low end of run ``m``) is legal: both ends could take the
    joker now (at one end only, the plain lay-off is that move), else the ``E_*`` code."""
    if minfo[g, m, MI_KIND] != MK_RUN:
        return E_KIND
    e = _joker_end_err(minfo, mcards, rv, g, m, 1)
    if e != 0:
        return e
    return E_ONE_END if _joker_end_err(minfo, mcards, rv, g, m, 0) != 0 else 0


@njit(_nrt=False)
def _run_fit(minfo, mcards, rv, g, m, t):
    """Position (1..14) where natural ``t`` would go on run ``m`` now, or minus an error code: an
    ace that fits both ends goes to the low one unless this turn's lay-offs have closed it (A21;
    jokers: ``_joker_side``)."""
    s = minfo[g, m, MI_KEY]
    lo = minfo[g, m, MI_LO]
    hi = minfo[g, m, MI_HI]
    up, down = _growth_ends(hi, rv)
    if t // 13 != s:
        return -E_WRONG_SUIT
    r = t % 13
    err = E_NOT_ADJACENT
    for c in range(2):
        if r == 0:
            q = 1 if c == 0 else 14
        elif c == 0:
            q = r + 1
        else:
            break
        if q == hi + 1:
            if not up:
                err = E_GROWTH
                continue
        elif q == lo - 1:
            if not down:
                err = E_GROWTH
                continue
        else:
            continue
        e = _pos_ok(q, lo, hi, rv)
        if e == 0:
            e = _limit_err(minfo, rv, g, m, 1 if q < lo else 0)
        if e != 0:
            err = e
            continue
        return q
    return -err


@njit(_nrt=False)
def _set_fit(minfo, mcards, rv, g, m, t):
    """Slot where card type ``t`` would go on set ``m``, or minus an error code.  In distinct-suit
    sets a natural must have a suit no natural of the set has; a joker's recorded suit never blocks
    it (jokers stand for the missing suits, §2.2: ``_apply_tack`` re-declares them)."""
    n = minfo[g, m, MI_LEN]
    if minfo[g, m, MI_KIND] == MK_JSET:
        if t != JOKER:
            return -E_WRONG_RANK
        if n >= 4:
            return -E_SET_FULL
        return n
    if rv[R_SET_MAX_SIZE] >= 0 and n >= rv[R_SET_MAX_SIZE]:
        return -E_SET_FULL
    if n >= L_MAX:
        return -E_SET_FULL
    if t != JOKER and t % 13 != minfo[g, m, MI_KEY]:
        return -E_WRONG_RANK
    if rv[R_SET_ALLOW_DUPLICATE_SUIT] == 0:
        if n >= 4:
            return -E_SET_FULL
        if t != JOKER:
            for i in range(n):
                if mcards[g, m, i] != JOKER and mcards[g, m, i] // 13 == t // 13:
                    return -E_WRONG_SUIT
    return n


@njit
def set_joker_meaning(minfo, mas, g, m):
    """The natural a joker added to set ``m`` stands for: the set's rank, least-held suit.

    Public because ``Game.from_text`` (``runtime.position_text``) declares the jokers of the sets it lays out
    with the meaning the engine would give them."""
    cnt = np.zeros(4, dtype=np.int64)
    for i in range(minfo[g, m, MI_LEN]):
        x = mas[g, m, i]
        if x >= 0:
            cnt[x // 13] += 1
    s = 0
    for k in range(1, 4):
        if cnt[k] < cnt[s]:
            s = k
    return s * 13 + minfo[g, m, MI_KEY]


@njit(_nrt=False)
def _move_target(minfo, mcards, rv, g, m, p):
    """Where the joker at position ``p`` of run ``m`` goes when its natural replaces it: the
    growth end of the same four (A12 iv).  Minus an error code if it cannot move."""
    lo = minfo[g, m, MI_LO]
    hi = minfo[g, m, MI_HI]
    up, down = _growth_ends(hi, rv)
    err = E_NO_FREE_POS
    for side in range(2):
        if side == 0:
            if not up:
                continue
            q = hi + 1
        else:
            if not down:
                continue
            q = lo - 1
        e = _pos_ok(q, lo, hi, rv)
        if e != 0:
            err = e
            continue
        if rv[R_RUN_ADJACENT_JOKERS] == 0:
            nb = q - 1 if q > hi else q + 1
            if nb != p and mcards[g, m, nb] == JOKER:
                err = E_ADJACENT_JOKERS
                continue
        return q
    return -err


@njit(_nrt=False)
def tack_may_fit(minfo, g, m, t):
    """False when natural ``t`` certainly cannot be laid off onto table meld ``m`` (wrong suit or
    not next to a run end, wrong rank for a set, a natural for an all-joker set): the cases where
    ``fit._run_fit``/``fit._set_fit`` return an error whatever else holds, so ``check_action``
    would reject the tack.  Jokers and everything else are left to ``check_action``.

    Public because the legal mask tries only the lay-offs it allows (a hand of a dozen cards
    against a table of ten melds is 120 questions to ``check_action`` otherwise, and nearly all
    fail here), and the agents judge lay-offs by it (greedy reads it as ``_tack_candidates``'
    masks, which tests hold equal to it)."""
    if t == JOKER:
        return True
    kind = minfo[g, m, MI_KIND]
    if kind == MK_RUN:
        if t // 13 != minfo[g, m, MI_KEY]:
            return False
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
        r = t % 13
        if r == 0:
            return lo - 1 == 1 or hi + 1 == 1 or lo - 1 == 14 or hi + 1 == 14
        q = r + 1
        return q == lo - 1 or q == hi + 1
    if kind == MK_SET:
        return t % 13 == minfo[g, m, MI_KEY]
    return kind != MK_JSET


@njit(_nrt=False)
def _fit_err(minfo, mcards, mas, rv, g, m, t):
    """0 if card type ``t`` can be laid off onto table meld ``m`` now (fit, growth rule and the
    per-turn lay-off limits of runs, A21/V2), else the ``E_*`` code."""
    if minfo[g, m, MI_KIND] == MK_RUN:
        if t == JOKER:
            side = _joker_side(minfo, mcards, rv, g, m)
            return -side if side < 0 else 0
        q = _run_fit(minfo, mcards, rv, g, m, t)
        return -q if q < 0 else 0
    q = _set_fit(minfo, mcards, rv, g, m, t)
    return -q if q < 0 else 0


@njit(_nrt=False)
def _may_layoff(ps, rv, g, p):
    return ps[g, p, PS_LAID] == 1 or rv[R_LAYOFF_REQUIRES_OPENED] == 0


@njit(_nrt=False)
def _save_meld(minfo, mcards, mas, g, m, buf, o):
    """Copy table meld ``m`` into ``buf[o:o + MELD_W]`` (moves are tried on the state and undone)."""
    for j in range(NMI):
        buf[o + j] = minfo[g, m, j]
    for j in range(L_MAX):
        buf[o + NMI + j] = mcards[g, m, j]
        buf[o + NMI + L_MAX + j] = mas[g, m, j]


@njit(_nrt=False)
def _load_meld(minfo, mcards, mas, g, m, buf, o):
    """Restore table meld ``m`` saved by ``_save_meld``."""
    for j in range(NMI):
        minfo[g, m, j] = buf[o + j]
    for j in range(L_MAX):
        mcards[g, m, j] = buf[o + NMI + j]
        mas[g, m, j] = buf[o + NMI + L_MAX + j]


@njit(_nrt=False)
def _redeclare_set_jokers(minfo, mcards, mas, g, m):
    """Jokers of set ``m`` stand for suits the naturals lack (after a lay-off or a substitution
    changed the naturals)."""
    for i in range(minfo[g, m, MI_LEN]):
        if mcards[g, m, i] == JOKER:
            mas[g, m, i] = -1
    for i in range(minfo[g, m, MI_LEN]):
        if mcards[g, m, i] == JOKER:
            mas[g, m, i] = set_joker_meaning(minfo, mas, g, m)


@njit(_nrt=False)
def _apply_tack(minfo, mcards, mas, rv, g, m, t, low=False):
    """Lay card type ``t`` off onto table meld ``m`` (``_fit_err`` said it fits; with ``low``, a
    joker at the low end of a run, ``_low_joker_err`` said so); returns its value as part of that
    meld (A43 counts it toward the opening)."""
    if minfo[g, m, MI_KIND] == MK_RUN:
        if t == JOKER:
            side = 1 if low else _joker_side(minfo, mcards, rv, g, m)
            q = minfo[g, m, MI_HI] + 1 if side == 0 else minfo[g, m, MI_LO] - 1
        else:
            q = _run_fit(minfo, mcards, rv, g, m, t)
        if q < minfo[g, m, MI_LO]:
            minfo[g, m, MI_T_LO] += 1
        else:
            minfo[g, m, MI_T_HI] += 1
        minfo[g, m, MI_T_ALL] += 1
        mcards[g, m, q] = t
        mas[g, m, q] = pos_type(minfo[g, m, MI_KEY], q)
        if q < minfo[g, m, MI_LO]:
            minfo[g, m, MI_LO] = q
        if q > minfo[g, m, MI_HI]:
            minfo[g, m, MI_HI] = q
        value = rv[R_MELD_VALUE + q]
    else:
        q = _set_fit(minfo, mcards, rv, g, m, t)
        if t == JOKER:
            mas[g, m, q] = set_joker_meaning(minfo, mas, g, m) if minfo[g, m, MI_KIND] == MK_SET else -1
        else:
            mas[g, m, q] = t
        mcards[g, m, q] = t
        minfo[g, m, MI_HI] = q
        if t != JOKER and rv[R_SET_ALLOW_DUPLICATE_SUIT] == 0 and minfo[g, m, MI_NJ] > 0:
            minfo[g, m, MI_LEN] += 1                     # (the jokers are re-declared over the new length)
            _redeclare_set_jokers(minfo, mcards, mas, g, m)
            minfo[g, m, MI_LEN] -= 1
        if minfo[g, m, MI_KIND] == MK_SET:
            r = minfo[g, m, MI_KEY]
            value = rv[R_MELD_VALUE + (14 if r == 0 else r + 1)]
        else:
            value = rv[R_JOKER_SET_MELD_VALUE]
    minfo[g, m, MI_LEN] += 1
    if t == JOKER:
        minfo[g, m, MI_NJ] += 1
    return value


@njit
def _layoff_bound(gs, hands, minfo, mcards, mas, rv, g, p):
    """Points seat ``p`` can lay off onto the table now: a greedy sequence (first card that fits,
    again and again), played on the state and undone, so a lower bound of the best sequence."""
    nm = gs[g, G_N_MELDS]
    if nm == 0:
        return 0
    buf = np.empty(nm * MELD_W + N_TYPES, dtype=np.int64)
    for m in range(nm):
        _save_meld(minfo, mcards, mas, g, m, buf, m * MELD_W)
    for t in range(N_TYPES):
        buf[nm * MELD_W + t] = hands[g, p, t]
    total = 0
    found = True
    while found:
        found = False
        for t in range(N_TYPES):
            if hands[g, p, t] <= 0:
                continue
            for m in range(nm):
                if _fit_err(minfo, mcards, mas, rv, g, m, t) == 0:
                    total += _apply_tack(minfo, mcards, mas, rv, g, m, t)
                    hands[g, p, t] -= 1
                    found = True
                    break
    for m in range(nm):
        _load_meld(minfo, mcards, mas, g, m, buf, m * MELD_W)
    for t in range(N_TYPES):
        hands[g, p, t] = buf[nm * MELD_W + t]
    return total


@njit
def _debt_tack_ok(gs, hands, minfo, mcards, mas, rv, g, p, m, t, low=False):
    """While an A43 opening is incomplete: does laying ``t`` off onto ``m`` (``low``: a joker at a
    run's low end) keep the missing points reachable (by the greedy sequence from there)?  Tries
    it and undoes it."""
    buf = np.empty(MELD_W, dtype=np.int64)
    _save_meld(minfo, mcards, mas, g, m, buf, 0)
    v = _apply_tack(minfo, mcards, mas, rv, g, m, t, low)
    hands[g, p, t] -= 1
    ok = v + _layoff_bound(gs, hands, minfo, mcards, mas, rv, g, p) >= gs[g, G_OPEN_DEBT]
    hands[g, p, t] += 1
    _load_meld(minfo, mcards, mas, g, m, buf, 0)
    return ok


@njit
def meld_value_of(minfo, mcards, mas, rv, g, m):
    """Legality of table meld ``m`` through the meld kernel (-1 = illegal), jokers declared."""
    nat = np.zeros(52, dtype=np.int64)
    ndecl = 0
    kind = minfo[g, m, MI_KIND]
    if kind == MK_RUN:
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
    else:
        lo = 0
        hi = minfo[g, m, MI_LEN] - 1
    decl = np.zeros(hi - lo + 1, dtype=np.int64)
    nfree = 0
    for q in range(lo, hi + 1):
        c = mcards[g, m, q]
        if c == JOKER:
            if mas[g, m, q] >= 0:
                decl[ndecl] = mas[g, m, q]
                ndecl += 1
            else:
                nfree += 1
        elif c >= 0:
            nat[c] += 1
    return meld_best_value(nat, nfree, decl[:ndecl], rv, KIND_RUN if kind == MK_RUN else KIND_SET)
