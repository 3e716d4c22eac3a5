"""The general search: depth-first over the hand's card types in a fixed order (suit-major, ace
first), for every contract and for points openings.

The lowest undecided natural either stays in hand, or is placed in a meld built from undecided cards
and jokers: every meld has a lowest natural, so every lay-down is reached exactly by this scheme.
Branches are cut by an upper bound (penalty already placed + penalty still undecided), by the
contract's structure (melds still needed versus suits, ranks and cards left) and, for points
variants, by the most value the undecided cards could still add.

A run may take a joker where the hand holds the natural, to free that natural for another meld
("borrowing").  That is only ever useful when the freed natural can still join some other meld, so
borrowing is tried only then: the search stays exact while skipping hopeless substitutions.

Jokers beyond a set's minimum are not branched on when sets have no maximum size (Caribbean): at
the leaf every spare joker joins a set, which is always at least as good.  All-joker sets
(American) are formed at the leaf from the spare jokers.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.bits import lowest_bit, popcount
from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import R_MELD_VALUE, R_PENALTY

from .leaf import _leaf, _move_run, _natural_pos, _next_same_popcount, _set_rank_value
from .positions import pos_type, run_mask
from .workspace import (
    _WS_BEST, _WS_NATVAL, _WS_POOL, _WS_PRM, _WS_SCRATCH, _WS_STACK, B_NODES, B_USED, K_RUN, K_SET, MAX_MELDS, P_ADJ_OK,
    P_BOTH_OK, P_CONTRACT, P_DIST_RANK, P_DIST_SUIT, P_EXTRA, P_F, P_HELD, P_HI_MAX, P_LO_MIN, P_MAXJVAL, P_MINPTS,
    P_MUST, P_PJ, P_RUN_MAX, P_RUN_MIN, P_RUN_MIN_NAT, P_SET_DUP, P_SET_MAX, P_SET_MIN, P_SET_MIN_NAT, P_T, SCRATCH_W,
    SET_KEY_BASE,
)


@njit(_nrt=False)
def _contract_hopeless(t, pool, jk, nsets, nruns, rmask, smask, rem_cnt, prm):
    """Cheap necessary conditions for the contract to still be reachable from this node."""
    sets_needed = prm[P_T] - nsets
    runs_needed = prm[P_F] - nruns
    if sets_needed < 0:
        sets_needed = 0
    if runs_needed < 0:
        runs_needed = 0
    if rem_cnt + jk < sets_needed * prm[P_SET_MIN] + runs_needed * prm[P_RUN_MIN]:
        return True
    s0 = t // 13
    if runs_needed > 0:
        free_suits = 0
        for s in range(s0, 4):
            if prm[P_DIST_SUIT] == 0 or ((smask >> s) & 1) == 0:
                for u in range(max(t, s * 13), s * 13 + 13):
                    if pool[u] > 0:
                        free_suits += 1
                        break
        if prm[P_DIST_SUIT] == 1 and free_suits < runs_needed:
            return True
    if sets_needed > 0:
        ranks = 0
        seen = 0
        for u in range(t, 52):
            if pool[u] > 0:
                r = u % 13
                if ((seen >> r) & 1) == 0 and (prm[P_DIST_RANK] == 0 or ((rmask >> r) & 1) == 0):
                    seen |= 1 << r
                    ranks += 1
        if prm[P_DIST_RANK] == 1 and ranks < sets_needed:
            return True
        if ranks == 0:
            return True
    return False


@njit(_nrt=False)
def _borrow_useful(u, t, pool, jk_after, outside_same_suit, nsets, rmask, prm):
    """Is it worth putting a joker in a run where the hand holds the natural ``u``?

    Only if ``u`` then goes into another meld M in which it cannot trade places with that joker,
    i.e. M holds no more naturals than its minimum: otherwise the same cards laid with ``u`` in the
    run and the joker in M are an equally good lay-down that the search finds anyway (a joker is
    worth the card it stands for, so values do not change either).  Such an M needs
    ``min size - min naturals`` jokers of its own."""
    ru = u % 13
    same_rank = 0
    for s2 in range(4):
        same_rank += pool[s2 * 13 + ru]
    if u == t:
        same_rank -= 1   # the copy of t this run holds is not free
    set_ok = jk_after >= prm[P_SET_MIN] - prm[P_SET_MIN_NAT] and same_rank >= prm[P_SET_MIN_NAT]
    if prm[P_CONTRACT] == 1:
        if prm[P_EXTRA] == 0 and nsets >= prm[P_T]:
            set_ok = False
        if prm[P_DIST_RANK] == 1 and ((rmask >> ru) & 1) == 1:
            set_ok = False
        if prm[P_DIST_SUIT] == 1:
            return set_ok   # one run per suit: the freed card can only join a set
    run_ok = jk_after >= prm[P_RUN_MIN] - prm[P_RUN_MIN_NAT] and outside_same_suit >= prm[P_RUN_MIN_NAT] - 1
    return set_ok or run_ok


@njit(_nrt=False, inline="always")     # called at every node of ``_dfs``: no arguments to push
def _avail_mask(t, s, p, pool, prm):
    """Bit q set when run position q of suit s can hold an undecided natural (p holds t itself):
    a position held in the pool whose type comes after t, or t's other ace position when the
    pool holds a second copy of the ace."""
    if t % 13 != 0:
        later = ((1 << 14) - 1) & ~((1 << (p + 1)) - 1)        # positions p+1..13
    else:
        later = ((1 << 14) - 1) & ~((1 << 2) - 1)              # positions 2..13
        if pool[t] > 1:
            later |= (1 << 14) if p == 1 else (1 << 1)
    return (run_mask(pool, s, prm[P_LO_MIN], prm[P_HI_MAX]) & later) | (1 << p)


@njit(_nrt=False)
def _run_slots(t, s, p, lo, hi, pool, slots):
    """Mark which positions of [lo, hi] can take an undecided natural (slots[q] = 1) and list
    them in slots[16:]; return (forced jokers, number of optional naturals)."""
    forced = 0
    m = 0
    for q in range(lo, hi + 1):
        if q == p:
            slots[q] = 1
            continue
        u = pos_type(s, q)
        a = 0 if u < t else pool[u] - (1 if u == t else 0)
        if a > 0:
            slots[q] = 1
            slots[16 + m] = q
            m += 1
        else:
            slots[q] = 0
            forced += 1
    return forced, m


@njit(_nrt=False, inline="always")     # called at every node of ``_dfs``: no arguments to push
def _run_joker_mask(t, s, lo, hi, nj, mask, m, slots, pool, jk, nsets, rmask, prm, suit_total):
    """Joker positions of the run for this borrowing choice, or -1 if it is illegal or useless."""
    jmask = 0
    for q in range(lo, hi + 1):
        if slots[q] == 0:
            jmask |= 1 << q
    for i in range(m):
        if (mask >> i) & 1:
            jmask |= 1 << slots[16 + i]
    if prm[P_ADJ_OK] == 0 and (jmask & (jmask >> 1)) != 0:
        return -1
    if mask != 0:
        outside = suit_total - (hi - lo + 1 - nj) - 1
        for i in range(m):
            if (mask >> i) & 1:
                if not _borrow_useful(pos_type(s, slots[16 + i]), t, pool, jk - nj, outside, nsets,
                                      rmask, prm):
                    return -1
    return jmask


@njit(_nrt=False, inline="always")     # called at every node of ``_dfs``: no arguments to push
def _set_caps(t, s, r, pool, prm, cap, take_min, nruns, smask):
    """How many more copies of rank r each suit can add to a set holding one copy of t.

    In a contract with distinct set ranks, a same-rank natural kept out of this set can only be
    left in hand or join a later run of its suit; when no such run can come any more, keeping it
    out is never better, so the set takes every copy (``take_min = cap``)."""
    n_combo = 1
    runs_open = prm[P_EXTRA] == 1 or nruns < prm[P_F]
    for s2 in range(4):
        if s2 < s:
            a = 0
        else:
            a = pool[s2 * 13 + r] - (1 if s2 == s else 0)
            if prm[P_SET_DUP] == 0:
                a = 0 if s2 == s else (1 if a > 0 else 0)
        cap[s2] = a
        take_min[s2] = 0
        if prm[P_CONTRACT] == 1 and prm[P_DIST_RANK] == 1:
            if not runs_open or (prm[P_DIST_SUIT] == 1 and ((smask >> s2) & 1) == 1):
                take_min[s2] = a
        n_combo *= a - take_min[s2] + 1
    return n_combo


@njit(_nrt=False, inline="always")     # called at every node of ``_dfs``: no arguments to push
def _absorbable(t, stack, depth, prm):
    """Could one copy of natural t be added to a meld on the stack, keeping it legal?"""
    s = t // 13
    r = t % 13
    for i in range(depth):
        kind = stack[i, 0]
        if kind == K_SET:
            if stack[i, 1] != r:
                continue
            size = stack[i, 2] + stack[i, 3] + stack[i, 4] + stack[i, 5] + stack[i, 6]
            if prm[P_SET_MAX] >= 0 and size >= prm[P_SET_MAX]:
                continue
            if prm[P_SET_DUP] == 0 and (stack[i, 2 + s] > 0 or size >= 4):
                continue
            return True
        elif kind == K_RUN:
            if stack[i, 1] != s:
                continue
            lo = stack[i, 2]
            hi = stack[i, 3]
            if hi - lo + 1 >= prm[P_RUN_MAX]:
                continue
            for pi in range(2):
                p = _natural_pos(r, pi, prm)
                if p < 0:
                    continue
                if p == lo - 1 and not (p == 1 and hi == 14 and prm[P_BOTH_OK] == 0):
                    return True
                if p == hi + 1 and not (lo == 1 and p == 14 and prm[P_BOTH_OK] == 0):
                    return True
    return False


# The recursive kernels (``_dfs``, ``_runs_first``, ``_fit_from``) must only ever be
# called with plain int64 scalars.  A literal argument (``x = 0`` before a loop that adds to it is
# typed ``Literal[int](0)`` on numba's first inference pass) compiles a second overload whose
# recursion calls the first one: that "type-varying" recursion is linked through a
# ``.numba.unresolved$`` symbol, and a process that later loads the cached object without having
# compiled the other overload itself aborts in LLVM (numba issues #6061, #9129; it crashed pytest
# workers).  tests/test_search_recursion.py checks that none has a literal overload.
@njit(_nrt=False)
def _dfs(t, kmin, jk, used, rem_pen, rem_cnt, val, rem_val, nsets, nruns, rmask, smask, depth, ws,
         stack, rv):
    """``kmin``: melds holding another copy of t are taken in non-decreasing key order, so two
    melds sharing a duplicated card are not explored twice (once in each order).

    ``ws``: the workspace (``best_lay_down_must``: pool, parameters, best[] and per-depth scratch
    at their ``_WS_*`` offsets); ``stack``: the meld stack, rows ``MAX_MELDS`` on holding the best
    lay-down found.  Three arrays, not nine: every array argument is seven or nine machine words
    pushed at each recursion, which was a quarter of this function's time.  Leaving t in hand is
    the loop's next pass rather than a recursion; the counts it took out of the pool are kept in
    two bit planes (a type is held at most three times) and put back on the way out."""
    prm = ws[_WS_PRM:_WS_NATVAL]
    natval = ws[_WS_NATVAL:_WS_POOL]
    pool = ws[_WS_POOL:_WS_BEST]
    best = ws[_WS_BEST:_WS_STACK]
    pen = rv[R_PENALTY:R_PENALTY + 53]
    kept_lo = np.int64(0)       # bit u: bit 0 of the count of type u this call left in hand
    kept_hi = np.int64(0)       # ... and its bit 1
    while True:
        best[B_NODES] += 1
        if pool[t] == 0:
            # the next undecided natural: only types in the root pool (``P_HELD``) can be undecided
            kmin = 0
            left = prm[P_HELD] & ~((np.int64(1) << t) - 1)
            t = 52
            while left != 0:
                u = lowest_bit(left)
                if pool[u] > 0:
                    t = u
                    break
                left &= left - 1
        if t == 52:
            _leaf(jk, used, val, nsets, nruns, depth, ws, stack, rv)
            break
        if used + rem_pen + jk * prm[P_PJ] <= best[B_USED]:
            break
        contract = prm[P_CONTRACT] == 1
        if contract:
            if _contract_hopeless(t, pool, jk, nsets, nruns, rmask, smask, rem_cnt, prm):
                break
        elif val + rem_val + jk * prm[P_MAXJVAL] < prm[P_MINPTS]:
            break
        if depth >= MAX_MELDS - 2:
            break
        s = t // 13
        r = t % 13
        pj = prm[P_PJ]
        row = _WS_SCRATCH + depth * SCRATCH_W
        slots = ws[row:row + SCRATCH_W]

        # ---- runs whose lowest undecided natural is t (an ace may sit low or high)
        run_ok = True
        if contract:
            if prm[P_EXTRA] == 0 and nruns >= prm[P_F]:
                run_ok = False
            if prm[P_DIST_SUIT] == 1 and ((smask >> s) & 1) == 1:
                run_ok = False
        if run_ok and jk == 0 and r != 0:
            # without jokers a run whose lowest undecided natural is t (not an ace: the positions
            # below it hold decided cards) starts at t and holds the next run_min - 1 cards of its suit
            if r + prm[P_RUN_MIN] - 1 > 12:
                run_ok = False
            else:
                for u in range(t + 1, t + prm[P_RUN_MIN]):
                    if pool[u] == 0:
                        run_ok = False
                        break
        if run_ok:
            suit_total = 0                  # (read only when jokers stand in for naturals)
            if jk > 0:
                for u in range(s * 13, s * 13 + 13):
                    suit_total += pool[u]
            for pi in range(2):
                p = _natural_pos(r, pi, prm)
                if p < 0:
                    continue
                avail = _avail_mask(t, s, p, pool, prm)
                # the furthest a run through p can reach on each side with the jokers in hand
                lo_eff = p
                gaps = 0
                for q in range(p - 1, max(prm[P_LO_MIN], p - prm[P_RUN_MAX] + 1) - 1, -1):
                    if ((avail >> q) & 1) == 0:
                        gaps += 1
                        if gaps > jk:
                            break
                    lo_eff = q
                hi_eff = p
                gaps = 0
                for q in range(p + 1, min(prm[P_HI_MAX], p + prm[P_RUN_MAX] - 1) + 1):
                    if ((avail >> q) & 1) == 0:
                        gaps += 1
                        if gaps > jk:
                            break
                    hi_eff = q
                if hi_eff - lo_eff + 1 < prm[P_RUN_MIN]:
                    continue
                for lo in range(lo_eff, p + 1):
                    hi_top = min(hi_eff, lo + prm[P_RUN_MAX] - 1)
                    for hi in range(hi_top, p - 1, -1):
                        n = hi - lo + 1
                        if n < prm[P_RUN_MIN] or (lo == 1 and hi == 14 and prm[P_BOTH_OK] == 0):
                            continue
                        window = ((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)
                        if n - popcount(avail & window) > jk:
                            continue
                        forced, m = _run_slots(t, s, p, lo, hi, pool, slots)
                        if forced > jk:
                            continue
                        kmax = min(jk - forced, m)
                        for k in range(kmax + 1):
                            nj = forced + k
                            if n - nj < prm[P_RUN_MIN_NAT]:
                                break
                            mask = 0 if k == 0 else (1 << k) - 1
                            while mask < (1 << m):
                                jmask = _run_joker_mask(t, s, lo, hi, nj, mask, m, slots, pool, jk,
                                                        nsets, rmask, prm, suit_total)
                                key = (((pi * 16 + lo) * 16 + (15 - hi)) << 16) | jmask
                                if jmask >= 0 and key >= kmin:
                                    add_pen = nj * pj
                                    add_val = 0
                                    sub_val = 0
                                    for q in range(lo, hi + 1):
                                        add_val += rv[R_MELD_VALUE + q]
                                        if ((jmask >> q) & 1) == 0:
                                            u = pos_type(s, q)
                                            add_pen += pen[u]
                                            sub_val += natval[u]
                                    nat = (((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)) & ~jmask
                                    _move_run(pool, s, nat, -1)
                                    stack[depth, 0] = K_RUN
                                    stack[depth, 1] = s
                                    stack[depth, 2] = lo
                                    stack[depth, 3] = hi
                                    stack[depth, 4] = jmask
                                    _dfs(t, key, jk - nj, used + add_pen, rem_pen - (add_pen - nj * pj),
                                         rem_cnt - (n - nj), val + add_val, rem_val - sub_val, nsets,
                                         nruns + 1, rmask, smask | (1 << s), depth + 1, ws, stack, rv)
                                    _move_run(pool, s, nat, 1)
                                if k == 0:
                                    break
                                mask = _next_same_popcount(mask)

        # ---- sets whose lowest undecided natural is t, with any choice of same-rank naturals
        set_ok = True
        if contract:
            if prm[P_EXTRA] == 0 and nsets >= prm[P_T]:
                set_ok = False
            if prm[P_DIST_RANK] == 1 and ((rmask >> r) & 1) == 1:
                set_ok = False
        if set_ok:
            # the most naturals a set holding t can have (``_set_caps``' caps, summed): too few for
            # any set, and the set choices below would all be skipped
            n_max = 1
            for s2 in range(s, 4):
                a = pool[s2 * 13 + r] - (1 if s2 == s else 0)
                if prm[P_SET_DUP] == 0:
                    a = 0 if s2 == s else min(a, 1)
                n_max += a
            if n_max < prm[P_SET_MIN_NAT] or n_max + jk < prm[P_SET_MIN]:
                set_ok = False
        if set_ok:
            cap = slots[32:36]
            take = slots[36:40]
            take_min = slots[40:44]
            n_combo = _set_caps(t, s, r, pool, prm, cap, take_min, nruns, smask)
            rank_val = _set_rank_value(rv, r)
            # every take[s2] in take_min[s2]..cap[s2], suit 0 counting fastest (an odometer)
            for s2 in range(4):
                take[s2] = take_min[s2]
            take[0] -= 1
            for code in range(n_combo):
                s2 = 0
                take[0] += 1
                while take[s2] > cap[s2] and s2 < 3:
                    take[s2] = take_min[s2]
                    s2 += 1
                    take[s2] += 1
                n_nat = 1 + take[0] + take[1] + take[2] + take[3]
                if n_nat < prm[P_SET_MIN_NAT]:
                    continue
                jmin = max(prm[P_SET_MIN] - n_nat, 0)
                if prm[P_SET_MAX] < 0:
                    jmax = jmin       # spare jokers join a set at the leaf
                else:
                    jmax = min(prm[P_SET_MAX] - n_nat, jk)
                if prm[P_SET_DUP] == 0 and n_nat + jmax > 4:
                    jmax = 4 - n_nat
                if jmin > jk or jmin > jmax:
                    continue
                skey = SET_KEY_BASE + (((take[0] * 4 + take[1]) * 4 + take[2]) * 4 + take[3]) * 16
                if skey + jmax < kmin:
                    continue
                add_pen = pen[t]
                sub_val = natval[t]
                pool[t] -= 1
                for s2 in range(4):
                    u = s2 * 13 + r
                    pool[u] -= take[s2]
                    add_pen += take[s2] * pen[u]
                    sub_val += take[s2] * natval[u]
                for nj in range(jmax, jmin - 1, -1):
                    if skey + nj < kmin:
                        break
                    stack[depth, 0] = K_SET
                    stack[depth, 1] = r
                    for s2 in range(4):
                        stack[depth, 2 + s2] = take[s2] + (1 if s2 == s else 0)
                    stack[depth, 6] = nj
                    stack[depth, 7] = 0
                    _dfs(t, skey + nj, jk - nj, used + add_pen + nj * pj, rem_pen - add_pen, rem_cnt - n_nat,
                         val + (n_nat + nj) * rank_val, rem_val - sub_val, nsets + 1, nruns,
                         rmask | (1 << r), smask, depth + 1, ws, stack, rv)
                pool[t] += 1
                for s2 in range(4):
                    pool[s2 * 13 + r] += take[s2]

        # ---- every remaining copy of t stays in hand -- unless t is the natural every lay-down
        # places (no lay-down down this branch), or a meld already laid could take t: then the same
        # lay-down with t added is strictly better and is searched in another branch.  (The next
        # pass is the recursion ``_dfs(t + 1, 0, ..)`` was: same depth, t's copies out of the pool.)
        if t == prm[P_MUST] or _absorbable(t, stack, depth, prm):
            break
        c = pool[t]
        kept_lo |= (c & 1) << t
        kept_hi |= ((c >> 1) & 1) << t
        pool[t] = 0
        rem_pen -= c * pen[t]
        rem_cnt -= c
        rem_val -= c * natval[t]
        t += 1
        kmin = np.int64(0)
    kept = kept_lo | kept_hi
    while kept != 0:
        u = lowest_bit(kept)
        kept &= kept - 1
        pool[u] = ((kept_lo >> u) & 1) + 2 * ((kept_hi >> u) & 1)
    return 0
