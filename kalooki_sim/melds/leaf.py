"""Pieces both searches use: a natural's run position and value, the leaf that values a finished
branch (spare jokers joining melds, all-joker sets), and the moves of a branch over a suit's cards.
"""

from __future__ import annotations

from kalooki_sim.core.bits import lowest_bit
from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import R_ACE_HIGH, R_ACE_LOW, R_MELD_VALUE

from .positions import pos_type
from .workspace import (
    _WS_BEST, _WS_NATVAL, _WS_PRM, _WS_STACK, B_N, B_USED, B_VAL, K_JSET, K_RUN, K_SET, MAX_MELDS, P_ADJ_OK, P_BOTH_OK,
    P_CONTRACT, P_EXTRA, P_F, P_HI_MAX, P_JSET, P_JSET_VAL, P_LO_MIN, P_MINPTS, P_PJ, P_RUN_MAX, P_SET_DUP, P_SET_MAX,
    P_T, REC,
)


@njit(_nrt=False)
def _natural_pos(r, pi, prm):
    """Run position of a natural of rank index r in pass pi (0, 1), or -1: an ace is tried low
    (pass 0) and high (pass 1) where the variant allows; other ranks have one position."""
    if r == 0:
        p = 1 if pi == 0 else 14
        if (p == 1 and prm[P_LO_MIN] != 1) or (p == 14 and prm[P_HI_MAX] != 14):
            return -1
        return p
    return r + 1 if pi == 0 else -1


@njit(_nrt=False)
def _natural_value(rv, t):
    """Largest opening value a natural can have (an ace may be low or high)."""
    r = t % 13
    if r == 0:
        a = rv[R_MELD_VALUE + 14] if rv[R_ACE_HIGH] == 1 else 0
        b = rv[R_MELD_VALUE + 1] if rv[R_ACE_LOW] == 1 else 0
        return a if a > b else b
    return rv[R_MELD_VALUE + r + 1]


@njit(_nrt=False)
def _set_rank_value(rv, r):
    return rv[R_MELD_VALUE + (14 if r == 0 else r + 1)]


@njit(_nrt=False)
def _usable_jokers(jk):
    """Most jokers that split into all-joker sets of 3 or 4."""
    if jk < 3:
        return 0
    if jk == 5:
        return 4
    return jk


@njit(_nrt=False)
def _joker_absorbable(stack, depth, prm):
    """Could a spare joker join a meld on the stack (a set below its maximum, a run end)?"""
    for i in range(depth):
        if stack[i, 0] == K_SET:
            size = stack[i, 2] + stack[i, 3] + stack[i, 4] + stack[i, 5] + stack[i, 6]
            if size < prm[P_SET_MAX] and (prm[P_SET_DUP] == 1 or size < 4):
                return True
        elif stack[i, 0] == K_RUN:
            lo = stack[i, 2]
            hi = stack[i, 3]
            if hi - lo + 1 >= prm[P_RUN_MAX]:
                continue
            jm = stack[i, 4]
            if lo - 1 >= prm[P_LO_MIN] and not (lo - 1 == 1 and hi == 14 and prm[P_BOTH_OK] == 0):
                if prm[P_ADJ_OK] == 1 or ((jm >> lo) & 1) == 0:
                    return True
            if hi + 1 <= prm[P_HI_MAX] and not (lo == 1 and hi + 1 == 14 and prm[P_BOTH_OK] == 0):
                if prm[P_ADJ_OK] == 1 or ((jm >> hi) & 1) == 0:
                    return True
    return False


@njit(_nrt=False)
def _leaf(jk, used, val, nsets, nruns, depth, ws, stack, rv):
    """A lay-down is complete (``stack[:depth]``, spare jokers ``jk``): keep it in ``stack``'s rows
    from ``MAX_MELDS`` on if it beats the best so far (arrays as for ``_dfs``)."""
    prm = ws[_WS_PRM:_WS_NATVAL]
    best = ws[_WS_BEST:_WS_STACK]
    best_stack = stack[MAX_MELDS:]
    if jk > 0 and prm[P_SET_MAX] >= 0 and prm[P_JSET] == 0 and _joker_absorbable(stack, depth, prm):
        return   # a spare joker fits a meld: that richer lay-down is searched in another branch
    if prm[P_CONTRACT] == 1:
        if prm[P_EXTRA] == 1:
            if nsets < prm[P_T] or nruns < prm[P_F]:
                return
        elif nsets != prm[P_T] or nruns != prm[P_F]:
            return
    extra_used = 0
    extra_val = 0
    absorb_into = -1
    n_jsets = 0
    if jk > 0:
        if prm[P_SET_MAX] < 0 and nsets > 0:
            bestv = -1
            for i in range(depth):
                if stack[i, 0] == K_SET:
                    v = _set_rank_value(rv, stack[i, 1])
                    if v > bestv:
                        bestv = v
                        absorb_into = i
            extra_used = jk * prm[P_PJ]
            extra_val = jk * bestv
        elif prm[P_JSET] == 1:
            u = _usable_jokers(jk)
            if u > 0:
                n_jsets = 1
                extra_used = u * prm[P_PJ]
                extra_val = u * prm[P_JSET_VAL]
    if prm[P_CONTRACT] == 0:
        if depth + n_jsets == 0 or val + extra_val < prm[P_MINPTS]:
            return
    total = used + extra_used
    if total > best[B_USED]:
        best[B_USED] = total
        best[B_VAL] = val + extra_val
        for i in range(depth):
            for k in range(REC):
                best_stack[i, k] = stack[i, k]
            if stack[i, 0] == K_RUN:
                for k in range(5, REC):
                    best_stack[i, k] = 0     # unused by runs: no leftovers of earlier searches
        if absorb_into >= 0:
            best_stack[absorb_into, 6] += jk
        n = depth
        left = _usable_jokers(jk) if n_jsets > 0 else 0
        while left > 0:
            take = 4 if (left == 4 or left == 7 or left >= 8) else 3
            for k in range(REC):
                best_stack[n, k] = 0
            best_stack[n, 0] = K_JSET
            best_stack[n, 6] = take
            left -= take
            n += 1
        best[B_N] = n


@njit(_nrt=False, inline="always")
def _move_run(pool, s, nat, sign):
    """A run of suit ``s`` whose naturals sit at the positions ``nat`` (bit mask) leaves the pool
    (``sign`` -1) or returns to it (1), natural by natural."""
    while nat != 0:
        pool[pos_type(s, lowest_bit(nat))] += sign
        nat &= nat - 1


@njit(_nrt=False)
def _next_same_popcount(mask):
    """The next larger integer with as many set bits as ``mask`` (> 0): Gosper's hack, its
    division by the lowest set bit done as a shift (a 64-bit division takes tens of cycles)."""
    c = mask & -mask
    rr = mask + c
    return (((rr ^ mask) >> 2) >> lowest_bit(c)) | rr
