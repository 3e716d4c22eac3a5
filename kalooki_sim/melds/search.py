"""Exact best lay-down search (compiled): the lay-down that leaves the least penalty in hand.

Depth-first search over the hand's card types in a fixed order (suit-major, ace first).  The lowest
undecided natural either stays in hand, or is placed in a meld built from undecided cards and
jokers: every meld has a lowest natural, so every lay-down is reached exactly by this scheme.
Branches are cut by an upper bound (penalty already placed + penalty still undecided), by the
contract's structure (melds still needed versus suits, ranks and cards left) and, for points
variants, by the most value the undecided cards could still add.

A run may take a joker where the hand holds the natural, to free that natural for another meld
("borrowing").  That is only ever useful when the freed natural can still join some other meld, so
borrowing is tried only then: the search stays exact while skipping hopeless substitutions.

Jokers beyond a set's minimum are not branched on when sets have no maximum size (Caribbean): at
the leaf every spare joker joins a set, which is always at least as good.  All-joker sets
(American) are formed at the leaf from the spare jokers.

Meld records (int64[8]): kind 0 = set (rank, count per suit x4, jokers), 1 = run (suit, lo, hi,
joker-position bit mask), 2 = joker set (jokers in slot 6).
"""

from __future__ import annotations

import numpy as np

from ..bits import (
    lowest_bit, popcount, rank_count_of, rank_count_words, rank_tops_above, ranks_above_masked,
    ranks_above_words, spread_bits8,
)
from ..jit import njit
from ..rulevec import (
    R_ACE_HIGH, R_ACE_LOW, R_ALLOW_ALL_JOKER_MELD, R_ALLOW_BOTH_ACES_IN_RUN,
    R_CONTRACT_ALLOW_EXTRA_MELDS, R_CONTRACT_DISTINCT_RUN_SUITS, R_CONTRACT_DISTINCT_SET_RANKS,
    R_JOKER_SET_MELD_VALUE, R_MELD_VALUE, R_OPENING_MIN_POINTS, R_OPENING_MODE, R_PENALTY,
    R_ROUND_BASE, R_RUN_ADJACENT_JOKERS, R_RUN_MIN_NATURALS, R_RUN_MIN_SIZE,
    R_SET_ALLOW_DUPLICATE_SUIT, R_SET_MAX_SIZE, R_SET_MIN_NATURALS, R_SET_MIN_SIZE, ROUND_STRIDE,
)
from ..views import c_view
from .legality import run_max_len
from .positions import fewest_missing_in_runs, fewest_of, pos_type, run_mask

MAX_MELDS = 12
REC = 8
K_SET = 0
K_RUN = 1
K_JSET = 2

# prm indices: rule values the search reads at every node, unpacked once per call
P_CONTRACT = 0
P_T = 1
P_F = 2
P_MINPTS = 3
P_SET_MIN = 4
P_SET_MAX = 5
P_SET_MIN_NAT = 6
P_SET_DUP = 7
P_RUN_MIN = 8
P_RUN_MAX = 9
P_RUN_MIN_NAT = 10
P_ADJ_OK = 11
P_LO_MIN = 12
P_HI_MAX = 13
P_BOTH_OK = 14
P_EXTRA = 15
P_DIST_RANK = 16
P_DIST_SUIT = 17
P_PJ = 18
P_JSET = 19
P_JSET_VAL = 20
P_MAXJVAL = 21
P_UB_SETS = 22      # runs-first search: most penalty the contract's sets could hold (whole hand)
P_RUN_UB = 23       # ... and most penalty k more runs in suits s..3 could hold: slot 5 * s + k
                    # (s, k = 0..4; 25 slots, ``_run_bounds``)
P_RUN_JK = 48       # ... and fewest jokers k more runs in suits s..3 need: slot 5 * s + k (25)
P_HELD = 73         # general search: bit t set when the root pool holds natural t
P_MUST = 74         # a natural every lay-down places every copy of (-1: none known)
P_FIT_PM = 75       # ``_runs_then_sets_fit``: each suit's held run positions (4)
P_FIT_TOPS = 79     # ... the byte masks of the ranks sets may use (2), and their number
N_PRM = 82

SET_KEY_BASE = 1 << 40   # set keys sort after every run key

# best[] slots
B_USED = 0
B_N = 1
B_VAL = 2
B_NODES = 3


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


@njit
def make_params(rv, round_idx):
    prm = np.zeros(N_PRM, dtype=np.int64)
    fill_params(rv, round_idx, prm)
    return prm


@njit(_nrt=False)
def fill_params(rv, round_idx, prm):
    contract = rv[R_OPENING_MODE] == 0
    prm[P_CONTRACT] = 1 if contract else 0
    prm[P_T] = 0
    prm[P_F] = 0
    if contract:
        base = R_ROUND_BASE + round_idx * ROUND_STRIDE + 5
        prm[P_T] = rv[base]
        prm[P_F] = rv[base + 1]
    prm[P_MINPTS] = rv[R_OPENING_MIN_POINTS]
    prm[P_SET_MIN] = rv[R_SET_MIN_SIZE]
    prm[P_SET_MAX] = rv[R_SET_MAX_SIZE]
    prm[P_SET_MIN_NAT] = rv[R_SET_MIN_NATURALS]
    prm[P_SET_DUP] = rv[R_SET_ALLOW_DUPLICATE_SUIT]
    prm[P_RUN_MIN] = rv[R_RUN_MIN_SIZE]
    prm[P_RUN_MAX] = run_max_len(rv)
    prm[P_RUN_MIN_NAT] = rv[R_RUN_MIN_NATURALS]
    prm[P_ADJ_OK] = rv[R_RUN_ADJACENT_JOKERS]
    prm[P_LO_MIN] = 1 if rv[R_ACE_LOW] == 1 else 2
    prm[P_HI_MAX] = 14 if rv[R_ACE_HIGH] == 1 else 13
    prm[P_BOTH_OK] = rv[R_ALLOW_BOTH_ACES_IN_RUN]
    prm[P_EXTRA] = rv[R_CONTRACT_ALLOW_EXTRA_MELDS]
    prm[P_DIST_RANK] = rv[R_CONTRACT_DISTINCT_SET_RANKS]
    prm[P_DIST_SUIT] = rv[R_CONTRACT_DISTINCT_RUN_SUITS]
    prm[P_PJ] = rv[R_PENALTY + 52]
    prm[P_JSET] = rv[R_ALLOW_ALL_JOKER_MELD]
    prm[P_JSET_VAL] = rv[R_JOKER_SET_MELD_VALUE]
    mx = 0
    for p in range(1, 15):
        if rv[R_MELD_VALUE + p] > mx:
            mx = rv[R_MELD_VALUE + p]
    if prm[P_JSET] == 1 and prm[P_JSET_VAL] > mx:
        mx = prm[P_JSET_VAL]
    prm[P_MAXJVAL] = mx


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


@njit(_nrt=False, inline="always")
def _move_run(pool, s, nat, sign):
    """A run of suit ``s`` whose naturals sit at the positions ``nat`` (bit mask) leaves the pool
    (``sign`` -1) or returns to it (1), natural by natural."""
    while nat != 0:
        pool[pos_type(s, lowest_bit(nat))] += sign
        nat &= nat - 1


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


@njit(_nrt=False)
def _next_same_popcount(mask):
    """The next larger integer with as many set bits as ``mask`` (> 0): Gosper's hack, its
    division by the lowest set bit done as a shift (a 64-bit division takes tens of cycles)."""
    c = mask & -mask
    rr = mask + c
    return (((rr ^ mask) >> 2) >> lowest_bit(c)) | rr


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


@njit(_nrt=False)
def _contract_needs_more_jokers(hand, prm, rv):
    """Does every lay-down meeting the contract need more jokers than ``hand`` holds?

    A lower bound on the jokers one needs, against the jokers held: runs: each of the F distinct
    suits needs a run window with at most that many missing naturals; sets: T distinct ranks, a
    rank held only twice needs one joker.  Borrowing and shared naturals only ever need more
    jokers."""
    return _needs_more_jokers(hand, prm[P_T], prm[P_F], rv, prm[P_SET_MIN], prm[P_SET_MIN_NAT])


@njit(_nrt=False, inline="always")
def _needs_more_jokers(hand, T, F, rv, smin, snat):
    """``_contract_needs_more_jokers`` from the rule values themselves (any integer counts).  The
    sets are counted first: when they alone need more jokers than are held, the runs (four suits'
    windows) need not be looked at."""
    jk = hand[52]
    sets = _sets_need(hand, T, smin, snat)
    if sets > jk or F == 0:
        return sets > jk
    return sets + fewest_missing_in_runs(hand, F, rv) > jk


@njit(_nrt=False, inline="always")
def _sets_need(hand, T, smin, snat):
    """Fewest jokers T sets of distinct ranks need from ``hand`` (99 if fewer than T ranks hold
    ``snat`` naturals): a rank short of ``smin`` naturals takes at least one."""
    if T == 0:
        return 0
    lo, hi = rank_count_words(hand)
    return _sets_need_words(lo, hi, T, smin, snat)


@njit(_nrt=False, inline="always")
def _sets_need_words(rc_lo, rc_hi, T, smin, snat):
    """``_sets_need`` from the naturals per rank (``bits.rank_count_words``' layout)."""
    full = ranks_above_words(rc_lo, rc_hi, smin - 1)
    usable = ranks_above_words(rc_lo, rc_hi, snat - 1)
    return max(T - full, 0) if usable >= T else 99


@njit(_nrt=False)
def contract_out_of_reach(hand, rv, round_idx):
    """Does the round's contract need more jokers than ``hand`` (counts by card type, any integer
    type) holds?  Then it has no opening: this is the search's own first test
    (``_contract_needs_more_jokers``), asked without the search's set-up, for callers that ask about
    every draw of a player who has not laid down (most such hands are far from the contract).
    False whenever the test does not apply (points openings, extra melds, repeated set ranks or
    run suits)."""
    if (rv[R_OPENING_MODE] != 0 or rv[R_CONTRACT_ALLOW_EXTRA_MELDS] != 0
            or rv[R_CONTRACT_DISTINCT_SET_RANKS] != 1 or rv[R_CONTRACT_DISTINCT_RUN_SUITS] != 1):
        return False
    base = R_ROUND_BASE + round_idx * ROUND_STRIDE + 5
    return _needs_more_jokers(hand, rv[base], rv[base + 1], rv, rv[R_SET_MIN_SIZE],
                              rv[R_SET_MIN_NATURALS])


@njit(_nrt=False, inline="always")
def _set_fits(hand, r, jk, set_min_nat, set_min, set_dup):
    """Could a held natural of rank index r sit in a set with the hand's other naturals of its rank
    and its jokers?  The set holds one natural per suit holding the rank, or every copy when a set
    may repeat a suit (the same for every held card of the rank)."""
    n = 0
    for s2 in range(4):
        c = np.int64(hand[s2 * 13 + r])
        n += c if set_dup != 0 else min(c, 1)
    return n >= set_min_nat and n + jk >= set_min


@njit(_nrt=False, inline="always")
def _run_reach(held_s, jk, w, lo_from, lo_to, adj_ok):
    """Run positions of a suit covered by some window of ``w`` positions starting at
    ``lo_from..lo_to`` whose gaps (positions not in ``held_s``) jokers can fill: at most ``jk`` of
    them, none adjacent unless ``adj_ok``."""
    win = (np.int64(1) << w) - 1
    reach = np.int64(0)
    for lo in range(lo_from, lo_to + 1):
        gaps = (win << lo) & ~held_s
        if popcount(gaps) <= jk and (adj_ok == 1 or (gaps & (gaps >> 1)) == 0):
            reach |= win << lo
    return reach


@njit(_nrt=False, inline="always")
def _positions_of(r, lo_min, hi_max):
    """Run positions a natural of rank index r can take: an ace low and/or high where allowed."""
    if r != 0:
        return np.int64(1) << (r + 1)
    return (np.int64(1 << 1) if lo_min == 1 else np.int64(0)) | (np.int64(1 << 14) if hi_max == 14
                                                                 else np.int64(0))


@njit(_nrt=False, inline="always")
def _fits_some_meld(hand, t, held_s, set_min_nat, set_min, set_dup, run_min, lo_min, hi_max, adj_ok):
    """Can natural t (in this hand) sit in any meld at all, with the hand's other cards and its
    jokers (``hand[52]``)?  A set needs enough partners of its rank; a run some window of
    ``run_min`` positions through t with no more gaps than jokers.  ``held_s``: the run positions
    of t's suit held (``positions.run_mask``)."""
    jk = np.int64(hand[52])
    if _set_fits(hand, t % 13, jk, set_min_nat, set_min, set_dup):
        return True
    at = _positions_of(t % 13, lo_min, hi_max)
    while at != 0:                       # (an ace: low and high apart, each counted as held)
        p = lowest_bit(at)
        at &= at - 1
        # only the windows through p
        reach = _run_reach(held_s | (np.int64(1) << p), jk, run_min, max(lo_min, p - run_min + 1),
                           min(p, hi_max - run_min + 1), adj_ok)
        if (reach >> p) & 1:
            return True
    return False


@njit(_nrt=False)
def natural_meldable(hand, rv, t):
    """``_fits_some_meld`` under the rule vector: False means no lay-down of ``hand`` (int64 or int8
    counts by card type, jokers at 52) can place natural ``t`` (one it holds), so the search need
    not run for a hand that differs from one without a lay-down only by t
    (``engine.core._certificate_verdict``)."""
    lo_min = 1 if rv[R_ACE_LOW] == 1 else 2
    hi_max = 14 if rv[R_ACE_HIGH] == 1 else 13
    return natural_meldable_held(hand, rv, t, run_mask(hand, t // 13, lo_min, hi_max))


@njit(_nrt=False, inline="always")
def natural_meldable_held(hand, rv, t, held_s):
    """``natural_meldable`` given ``held_s``, the run positions of t's suit the hand holds
    (``positions.run_mask``; t's own position may be missing): a caller asking about many cards
    of one hand reads each suit once."""
    lo_min = 1 if rv[R_ACE_LOW] == 1 else 2
    hi_max = 14 if rv[R_ACE_HIGH] == 1 else 13
    return _fits_some_meld(hand, t, held_s, rv[R_SET_MIN_NATURALS], rv[R_SET_MIN_SIZE],
                           rv[R_SET_ALLOW_DUPLICATE_SUIT], rv[R_RUN_MIN_SIZE], lo_min, hi_max,
                           rv[R_RUN_ADJACENT_JOKERS])


# ------------------------------------------------------------------------------------------------
# Contracts with one run per suit, one set per rank and sets of any size (Caribbean): runs first,
# then the sets in closed form.

@njit(_nrt=False)
def _sets_leaf_01(jk, used, nsets, nruns, rmask, rc_lo, rc_hi, depth, ws, stack, rv, T, buf):
    """``_sets_leaf`` when a set needs at most one joker (Caribbean: 3 cards, 2 naturals): take the
    best ``T - k`` ranks that need none and the best ``k`` that need one, for the best k <= jokers."""
    prm = ws[_WS_PRM:_WS_NATVAL]
    pool = ws[_WS_POOL:_WS_BEST]
    best = ws[_WS_BEST:_WS_STACK]
    pen = rv[R_PENALTY:R_PENALTY + 53]
    # buf rows: 0 = penalties of joker-free ranks (sorted desc), 1 = their ranks, 2/3 the same for
    # ranks that need a joker; only the best T of each are kept
    n0 = 0
    n1 = 0
    for r in range(13):
        if (rmask >> r) & 1:
            continue
        n_r = rank_count_of(rc_lo, rc_hi, r)
        if n_r < prm[P_SET_MIN_NAT]:
            continue
        p_r = pool[r] * pen[r] + pool[13 + r] * pen[13 + r] + pool[26 + r] * pen[26 + r] + pool[39 + r] * pen[39 + r]
        row = 0 if n_r >= prm[P_SET_MIN] else 2
        n = n0 if row == 0 else n1
        i = n if n < T else T - 1
        if n >= T and p_r <= buf[row, T - 1]:
            continue
        while i > 0 and buf[row, i - 1] < p_r:
            buf[row, i] = buf[row, i - 1]
            buf[row + 1, i] = buf[row + 1, i - 1]
            i -= 1
        buf[row, i] = p_r
        buf[row + 1, i] = r
        if row == 0:
            n0 = min(n0 + 1, T)
        else:
            n1 = min(n1 + 1, T)
    best_k = -1
    best_v = -1
    for k in range(min(T, jk, n1) + 1):
        if T - k > n0:
            continue
        v = 0
        for i in range(T - k):
            v += buf[0, i]
        for i in range(k):
            v += buf[2, i]
        if v > best_v:
            best_v = v
            best_k = k
    if best_k < 0 or used + best_v + jk * prm[P_PJ] <= best[B_USED]:
        return
    d = depth
    for i in range(T):
        from_one = i >= T - best_k
        r = buf[3, i - (T - best_k)] if from_one else buf[1, i]
        stack[d, 0] = K_SET
        stack[d, 1] = r
        for s2 in range(4):
            stack[d, 2 + s2] = pool[s2 * 13 + r]
        stack[d, 6] = 1 if from_one else 0
        stack[d, 7] = 0
        d += 1
    _leaf(jk - best_k, used + best_v + best_k * prm[P_PJ], 0, nsets + T, nruns, d, ws, stack, rv)


@njit(_nrt=False)
def _sets_leaf(jk, used, nsets, nruns, rmask, rc_lo, rc_hi, depth, ws, stack, rv, dp, pick):
    """Best choice of the contract's remaining sets from what the runs left, exactly.

    With the runs fixed, a set of rank r best takes every remaining natural of r (nothing else can
    use them), needs ``max(0, set_min - n_r)`` jokers, and spare jokers join any set.  So the sets
    are a pick of T ranks maximising penalty under a joker budget: a tiny knapsack (dp).
    ``rc_lo``/``rc_hi``: the pool's naturals per rank (``bits.rank_count_words``' layout)."""
    prm = ws[_WS_PRM:_WS_NATVAL]
    pool = ws[_WS_POOL:_WS_BEST]
    best = ws[_WS_BEST:_WS_STACK]
    pen = rv[R_PENALTY:R_PENALTY + 53]
    T = prm[P_T] - nsets
    if T <= 0:
        _leaf(jk, used, 0, nsets, nruns, depth, ws, stack, rv)
        return
    if prm[P_SET_MIN] - prm[P_SET_MIN_NAT] <= 1:
        # (its own pass over the ranks bounds as tightly as the one below would)
        _sets_leaf_01(jk, used, nsets, nruns, rmask, rc_lo, rc_hi, depth, ws, stack, rv, T, dp)
        return
    # quick bound first: the T richest eligible ranks, jokers ignored
    t1 = t2 = t3 = t4 = 0
    n_ok = 0
    for r in range(13):
        if (rmask >> r) & 1:
            continue
        n_r = rank_count_of(rc_lo, rc_hi, r)
        if n_r < prm[P_SET_MIN_NAT]:
            continue
        n_ok += 1
        p_r = pool[r] * pen[r] + pool[13 + r] * pen[13 + r] + pool[26 + r] * pen[26 + r] + pool[39 + r] * pen[39 + r]
        t1, t2, t3, t4 = _keep_top4(p_r, t1, t2, t3, t4)
    if n_ok < T:
        return
    if T <= 4:
        top = t1 + (t2 if T > 1 else 0) + (t3 if T > 2 else 0) + (t4 if T > 3 else 0)
        if used + top + jk * prm[P_PJ] <= best[B_USED]:
            return
    # dp[k, b]: best penalty of k picked ranks using b jokers, over ranks 0..r; pick[r, k, b] marks it
    NEG = -(1 << 40)
    for k in range(T + 1):
        for b in range(jk + 1):
            dp[k, b] = NEG
    dp[0, 0] = 0
    for r in range(13):
        if (rmask >> r) & 1:
            for k in range(T + 1):
                for b in range(jk + 1):
                    pick[r, k, b] = 0
            continue
        n_r = rank_count_of(rc_lo, rc_hi, r)
        p_r = pool[r] * pen[r] + pool[13 + r] * pen[13 + r] + pool[26 + r] * pen[26 + r] + pool[39 + r] * pen[39 + r]
        c_r = prm[P_SET_MIN] - n_r
        if c_r < 0:
            c_r = 0
        ok = n_r >= prm[P_SET_MIN_NAT]
        for k in range(T, -1, -1):
            for b in range(jk, -1, -1):
                pick[r, k, b] = 0
                if ok and k > 0 and b >= c_r and dp[k - 1, b - c_r] > NEG:
                    v = dp[k - 1, b - c_r] + p_r
                    if v > dp[k, b]:
                        dp[k, b] = v
                        pick[r, k, b] = 1
    bb = -1
    bv = NEG
    for b in range(jk + 1):
        if dp[T, b] > bv:
            bv = dp[T, b]
            bb = b
    if bv == NEG or used + bv + jk * prm[P_PJ] <= best[B_USED]:
        return
    # walk the choices back and push the set records
    k = T
    b = bb
    d = depth
    for r in range(12, -1, -1):
        if k > 0 and pick[r, k, b] == 1:
            n_r = rank_count_of(rc_lo, rc_hi, r)
            c_r = max(prm[P_SET_MIN] - n_r, 0)
            stack[d, 0] = K_SET
            stack[d, 1] = r
            for s2 in range(4):
                stack[d, 2 + s2] = pool[s2 * 13 + r]
            stack[d, 6] = c_r
            stack[d, 7] = 0
            d += 1
            k -= 1
            b -= c_r
    _leaf(jk - bb, used + bv + bb * prm[P_PJ], 0, nsets + T, nruns, d, ws, stack, rv)


@njit(_nrt=False)
def _runs_then_sets_fit(hand, prm, jleft):
    """Necessary condition for a contract of F runs (distinct suits) and T sets (distinct ranks):
    some run window of ``run_min_size`` positions in each of F suits whose gaps plus the sets'
    joker floor without the windows' naturals (``_fit_from``) fit in ``jleft`` jokers.

    Every lay-down meeting the contract passes: each of its runs holds such a window, with no
    fewer jokers than the window's gaps; its sets can only use naturals outside its runs, except
    naturals a run replaces by a joker ("borrowing"), and each of those saves its set at most the
    one joker the run spends on it.  The sum-of-parts bound (``_contract_needs_more_jokers``) counts a
    card for a run and a set at once; this one does not, and settles most hands of the mixed
    contracts that pass that bound but cannot lay down, at a fraction of the search.

    The naturals per rank travel as two words of byte counts (``bits.rank_count_words``' layout),
    so a window takes its naturals out with two subtractions and the floor is a few popcounts;
    the suits' held positions and the ranks the sets may use are set up here, in ``prm``."""
    for s in range(4):
        prm[P_FIT_PM + s] = run_mask(hand, s, prm[P_LO_MIN], prm[P_HI_MAX])
    rc_lo, rc_hi = rank_count_words(hand)
    # the ranks the sets may use: held at least set_min_naturals times
    tops_lo, tops_hi = rank_tops_above(rc_lo, rc_hi, prm[P_SET_MIN_NAT] - 1)
    prm[P_FIT_TOPS] = tops_lo
    prm[P_FIT_TOPS + 1] = tops_hi
    prm[P_FIT_TOPS + 2] = popcount(tops_lo) + popcount(tops_hi)
    return _fit_from(prm, rc_lo, rc_hi, np.int64(0), np.int64(0), np.int64(jleft))


@njit(_nrt=False)
def _sets_joker_floor(prm, rc_lo, rc_hi):
    """Fewest jokers the contract's T sets need when the ranks have the naturals ``rc_lo``/
    ``rc_hi`` (bytes, ``bits.rank_count_words``' layout) left for them (99 if fewer than T ranks
    qualify): the T smallest ``max(set_min - left, 0)`` over the ranks the hand holds at least
    ``set_min_naturals`` times (``_runs_then_sets_fit``'s ``P_FIT_TOPS``).  A rank needs at most
    v jokers when it has ``set_min - v`` naturals left: the ranks per need are popcounts."""
    T = prm[P_T]
    smin = prm[P_SET_MIN]
    left = T
    total = 0
    n_at_most = 0                    # qualifying ranks needing at most v - 1 jokers
    for v in range(smin + 1):
        n = prm[P_FIT_TOPS + 2] if v == smin else ranks_above_masked(
            rc_lo, rc_hi, smin - v - 1, prm[P_FIT_TOPS], prm[P_FIT_TOPS + 1])
        take = min(n - n_at_most, left)
        total += take * v
        left -= take
        n_at_most = n
        if left == 0:
            return total
    return 99


@njit(_nrt=False)
def _fit_from(prm, rc_lo, rc_hi, k, s_from, jleft):
    """``_runs_then_sets_fit`` with k runs chosen (in suits before ``s_from``), their naturals
    out of ``rc_lo``/``rc_hi`` and ``jleft`` jokers left."""
    F = prm[P_F]
    if k == F:
        return _sets_joker_floor(prm, rc_lo, rc_hi) <= jleft
    w = prm[P_RUN_MIN]
    lo_min = prm[P_LO_MIN]
    hi_max = prm[P_HI_MAX]
    win = (np.int64(1) << w) - 1
    for s in range(s_from, 4):
        if 4 - s < F - k:
            break
        pm = prm[P_FIT_PM + s]
        prev = np.int64(-1)
        for a in range(lo_min, hi_max - w + 2):
            held = pm & (win << a)
            g = w - popcount(held)
            if g > jleft or held == prev:
                continue        # (the windows holding the same naturals are neighbours: one is enough)
            prev = held
            # the window's naturals leave their ranks' bytes: positions 2..13 are ranks 1..12,
            # an ace sits at 1 or 14 (rank 0, byte 0 of the first word)
            ranks = (held >> 1) & 0x1FFE
            aces = ((held >> 1) & 1) + ((held >> 14) & 1)
            if _fit_from(prm, rc_lo - spread_bits8(ranks & 0xFF) - aces,
                         rc_hi - spread_bits8(ranks >> 5), k + 1, s + 1, jleft - g):
                return True
    return False


@njit(_nrt=False)
def _keep_top4(p, t1, t2, t3, t4):
    """The four largest of ``t1 >= t2 >= t3 >= t4`` and ``p``, in order."""
    if p > t1:
        return p, t1, t2, t3
    if p > t2:
        return t1, p, t2, t3
    if p > t3:
        return t1, t2, p, t3
    return t1, t2, t3, max(p, t4)


@njit(_nrt=False)
def _top_rank_penalty(hand, pen, T, min_nat):
    """Sum of the T largest per-rank penalties among ranks held at least ``min_nat`` times: one
    pass keeping the four largest (no preset's contract has more sets), else rank by rank."""
    if T == 0:
        return 0
    if T <= 4:
        t1 = t2 = t3 = t4 = np.int64(0)
        for r in range(13):
            if hand[r] + hand[13 + r] + hand[26 + r] + hand[39 + r] >= min_nat:
                t1, t2, t3, t4 = _keep_top4(hand[r] * pen[r] + hand[13 + r] * pen[13 + r]
                                            + hand[26 + r] * pen[26 + r] + hand[39 + r] * pen[39 + r],
                                            t1, t2, t3, t4)
        return t1 + (t2 if T > 1 else 0) + (t3 if T > 2 else 0) + (t4 if T > 3 else 0)
    total = 0
    taken = 0
    for _ in range(T):
        best_r = -1
        best_p = -1
        for r in range(13):
            if (taken >> r) & 1:
                continue
            n_r = hand[r] + hand[13 + r] + hand[26 + r] + hand[39 + r]
            if n_r < min_nat:
                continue
            p_r = hand[r] * pen[r] + hand[13 + r] * pen[13 + r] + hand[26 + r] * pen[26 + r] + hand[39 + r] * pen[39 + r]
            if p_r > best_p:
                best_p = p_r
                best_r = r
        if best_r < 0:
            break
        taken |= 1 << best_r
        total += best_p
    return total


@njit(_nrt=False)
def _run_bounds(hand, pen, prm, rv):
    """Fill, for the runs-first search's bounds, ``prm[P_RUN_UB + 5 * s + k]``: the most penalty
    k runs in distinct suits among s..3 could hold, and ``prm[P_RUN_JK + 5 * s + k]``: the fewest
    jokers they need (99: not enough suits with a window), for k <= F.  Runs chosen in suits
    before s leave suits s..3 as the hand holds them, so both hold at every node.

    A run of suit s holds at most one natural per position, and only at positions some window
    reaches with the hand's jokers (``_run_reach``); a suit's most is the penalty of those (an
    ace counted at most as often as it is held and reached), and k runs hold at most the k
    largest of the suits' mosts.  Borrowed naturals leave a run for a set, whose bound counts
    them already, so this stays an upper bound while the pool shrinks and jokers are spent.  A
    run needs at least its suit's fewest missing naturals in any window (``fewest_of``, the rules'
    table of ``best_windows``)."""
    jk = np.int64(hand[52])
    F = prm[P_F]             # (the search asks for at most F runs: k > F is never read)
    for k in range(F + 1):
        prm[P_RUN_UB + 20 + k] = 0
        prm[P_RUN_JK + 20 + k] = 0 if k == 0 else 99
    for s in range(3, -1, -1):
        prm[P_RUN_UB + 5 * s] = 0
        prm[P_RUN_JK + 5 * s] = 0
        if F == 0:
            continue
        pm = run_mask(hand, s, prm[P_LO_MIN], prm[P_HI_MAX])
        reach = pm & _run_reach(pm, jk, prm[P_RUN_MIN], prm[P_LO_MIN],
                                prm[P_HI_MAX] - prm[P_RUN_MIN] + 1, prm[P_ADJ_OK])
        most = np.int64(0)
        mid = (reach >> 2) & 0xFFF           # positions 2..13: bit i is rank i + 1
        while mid != 0:
            most += pen[s * 13 + lowest_bit(mid) + 1]
            mid &= mid - 1
        aces = ((reach >> 1) & 1) + ((reach >> 14) & 1)
        most += min(aces, np.int64(hand[s * 13])) * pen[s * 13]
        # k runs from suits s..3: with a run in suit s or without one, whichever holds more
        row = P_RUN_UB + 5 * s
        for k in range(1, F + 1):
            prm[row + k] = max(most + prm[row + 5 + k - 1], prm[row + 5 + k])
        # ... and whichever needs fewer jokers (99: not enough suits or windows)
        gaps = fewest_of(rv, pm)
        row = P_RUN_JK + 5 * s
        for k in range(1, F + 1):
            prm[row + k] = min(gaps + prm[row + 5 + k - 1], prm[row + 5 + k], 99)


@njit(_nrt=False)
def _set_could_use(u, rc_lo, rc_hi, prm):
    """Could natural u still go into one of the contract's sets (enough of its rank in the pool,
    whose naturals per rank are ``rc_lo``/``rc_hi``)?"""
    if prm[P_T] == 0:
        return False
    return rank_count_of(rc_lo, rc_hi, u % 13) >= prm[P_SET_MIN_NAT]


@njit(_nrt=False)
def _runs_first(s, jk, used, rem_pen, nruns, rc_lo, rc_hi, depth, ws, stack, rv, dp, pick):
    """Choose the contract's runs suit by suit (or no run in suit s), then the sets exactly.

    Arguments as for ``_dfs`` (few arrays; no run in suit s is the loop's next pass, not a
    recursion); ``rc_lo``/``rc_hi``: the pool's naturals per rank, a byte each
    (``bits.rank_count_words``' layout: the sets' tests read them instead of four pool entries a
    rank); ``dp``/``pick``: ``_sets_leaf``'s tables."""
    prm = ws[_WS_PRM:_WS_NATVAL]
    pool = ws[_WS_POOL:_WS_BEST]
    best = ws[_WS_BEST:_WS_STACK]
    pen = rv[R_PENALTY:R_PENALTY + 53]
    while True:
        best[B_NODES] += 1
        if used + rem_pen + jk * prm[P_PJ] <= best[B_USED]:
            return 0
        F = prm[P_F]
        # a copy of the natural every lay-down places that no run took must go into a set
        mu = prm[P_MUST]
        if (mu >= 0 and pool[mu] > 0 and (s > mu // 13 or nruns == F)
                and not _set_could_use(mu, rc_lo, rc_hi, prm)):
            return 0
        # the runs still to choose lie in suits s..3, the sets hold at most the T richest ranks
        if used + prm[P_UB_SETS] + prm[P_RUN_UB + 5 * s + F - nruns] + jk * prm[P_PJ] <= best[B_USED]:
            return 0
        # the runs still to choose and the sets need more jokers than are left: no lay-down below
        if (prm[P_RUN_JK + 5 * s + F - nruns]
                + _sets_need_words(rc_lo, rc_hi, prm[P_T], prm[P_SET_MIN], prm[P_SET_MIN_NAT]) > jk):
            return 0
        if nruns == F:
            _sets_leaf(jk, used, 0, nruns, 0, rc_lo, rc_hi, depth, ws, stack, rv, dp, pick)
            return 0
        if 4 - s < F - nruns:
            return 0
        row = _WS_SCRATCH + depth * SCRATCH_W
        slots = ws[row:row + SCRATCH_W]
        lo_min = prm[P_LO_MIN]
        hi_max = prm[P_HI_MAX]
        # which positions of suit s hold a natural (both aces need two copies)
        avail = run_mask(pool, s, lo_min, hi_max)
        # ... and whose natural a run may leave to a set, a joker taking its place: only for a
        # set of exactly set_min_naturals naturals, so its rank must have that many in the pool
        # (see ``_borrow_useful``)
        borrow = np.int64(0)
        if prm[P_T] > 0:
            x = avail
            while x != 0:
                q = lowest_bit(x)
                x &= x - 1
                if rank_count_of(rc_lo, rc_hi, pos_type(s, q) % 13) >= prm[P_SET_MIN_NAT]:
                    borrow |= np.int64(1) << q
        ace = s * 13
        w = prm[P_RUN_MIN]
        for lo in range(lo_min, hi_max - w + 2):
            # the shortest run from lo must fit the jokers; then reach up as far as the jokers allow
            first = ((1 << (lo + w)) - 1) ^ ((1 << lo) - 1)
            gaps = w - popcount(avail & first)
            if gaps > jk:
                continue
            hi_reach = lo + w - 1
            for q in range(lo + w, min(hi_max, lo + prm[P_RUN_MAX] - 1) + 1):
                if ((avail >> q) & 1) == 0:
                    if gaps == jk:
                        break
                    gaps += 1
                hi_reach = q
            for hi in range(hi_reach, lo + w - 2, -1):
                if lo == 1 and hi == 14 and prm[P_BOTH_OK] == 0:
                    continue
                n = hi - lo + 1
                window = ((1 << (hi + 1)) - 1) ^ ((1 << lo) - 1)
                have = avail & window
                both_aces = lo == 1 and hi == 14
                if both_aces and pool[ace] < 2 and (have >> 1) & 1 and (have >> 14) & 1:
                    have &= ~(1 << 14)          # one ace copy cannot sit at both ends
                forced = n - popcount(have)
                if forced > jk or n - forced < prm[P_RUN_MIN_NAT]:
                    continue
                # a natural next to either end that no set could use only fits this run: the run
                # one card longer is strictly better and is searched too
                if n < prm[P_RUN_MAX] and not both_aces:
                    if hi + 1 <= hi_max and (avail >> (hi + 1)) & 1 and not (lo == 1 and hi + 1 == 14):
                        if not _set_could_use(pos_type(s, hi + 1), rc_lo, rc_hi, prm):
                            continue
                    if lo - 1 >= lo_min and (avail >> (lo - 1)) & 1 and not (lo - 1 == 1 and hi == 14):
                        if not _set_could_use(pos_type(s, lo - 1), rc_lo, rc_hi, prm):
                            continue
                # the naturals of the window a joker may replace (``borrow``), in order
                m = 0
                lend = have & borrow
                while lend != 0:
                    slots[16 + m] = lowest_bit(lend)
                    lend &= lend - 1
                    m += 1
                kmax = min(jk - forced, m)
                for k in range(kmax + 1):
                    if n - forced - k < prm[P_RUN_MIN_NAT]:
                        break
                    if k > 0 and jk - forced - k < prm[P_SET_MIN] - prm[P_SET_MIN_NAT]:
                        break            # the set a borrowed natural goes to would lack a joker
                    mask = 0 if k == 0 else (1 << k) - 1
                    while mask < (1 << m):
                        jmask = window & ~have
                        bits = mask
                        while bits != 0:
                            jmask |= 1 << slots[16 + lowest_bit(bits)]
                            bits &= bits - 1
                        if prm[P_ADJ_OK] == 1 or (jmask & (jmask >> 1)) == 0:
                            nj = forced + k
                            # the run's naturals (visited by their bits, not position by position)
                            nat = window & ~jmask
                            add_pen = nj * prm[P_PJ]
                            x = nat
                            while x != 0:
                                add_pen += pen[pos_type(s, lowest_bit(x))]
                                x &= x - 1
                            # ... leave their ranks' bytes (an ace at 1 or 14 is rank 0; a run of
                            # both aces takes two)
                            ranks = (nat >> 1) & 0x1FFE
                            aces = ((nat >> 1) & 1) + ((nat >> 14) & 1)
                            c_lo = rc_lo - spread_bits8(ranks & 0xFF) - aces
                            c_hi = rc_hi - spread_bits8(ranks >> 5)
                            # the child's bound and joker tests, asked before the call: about half
                            # the children fail one of them at once (the call would return 0)
                            if (used + add_pen + prm[P_UB_SETS] + prm[P_RUN_UB + 5 * s + 5 + F - nruns - 1]
                                    + (jk - nj) * prm[P_PJ] > best[B_USED]
                                    and prm[P_RUN_JK + 5 * s + 5 + F - nruns - 1]
                                    + _sets_need_words(c_lo, c_hi, prm[P_T], prm[P_SET_MIN],
                                                       prm[P_SET_MIN_NAT]) <= jk - nj):
                                _move_run(pool, s, nat, -1)
                                stack[depth, 0] = K_RUN
                                stack[depth, 1] = s
                                stack[depth, 2] = lo
                                stack[depth, 3] = hi
                                stack[depth, 4] = jmask
                                _runs_first(s + 1, jk - nj, used + add_pen,
                                            rem_pen - (add_pen - nj * prm[P_PJ]), nruns + 1, c_lo, c_hi,
                                            depth + 1, ws, stack, rv, dp, pick)
                                _move_run(pool, s, nat, 1)
                        if k == 0:
                            break
                        mask = _next_same_popcount(mask)
        # no run in suit s
        s += 1


# workspace layout (int64): rule params, natural values, the pool, best[], meld stack (and the
# best lay-down's records), per-depth scratch
_WS_PRM = 0
_WS_NATVAL = _WS_PRM + N_PRM
_WS_POOL = _WS_NATVAL + 53
_WS_BEST = _WS_POOL + 53              # the search's own best[] (copied out at the end)
_WS_STACK = _WS_BEST + 4              # meld stack, then the best lay-down's records
_WS_SCRATCH = _WS_STACK + 2 * MAX_MELDS * REC
SCRATCH_W = 48
_WS_DP = _WS_SCRATCH + MAX_MELDS * SCRATCH_W
_DP_T = 8           # sets per contract the closed-form set choice handles
_DP_J = 8           # jokers in hand it handles
_WS_PICK = _WS_DP + (_DP_T + 1) * (_DP_J + 1)
WS_LEN = _WS_PICK + 13 * (_DP_T + 1) * (_DP_J + 1)


@njit
def new_workspace():
    """Scratch memory for ``best_lay_down_ws``; callers in hot loops keep one and reuse it."""
    return np.zeros(WS_LEN, dtype=np.int64)


@njit
def best_lay_down_counts(hand, rv, round_idx, best_stack, best):
    """Search entry: ``hand`` int64[53] counts, at most three of a natural (a deck has at most
    three packs; ``_dfs`` relies on it).  Fills ``best_stack``/``best``; returns the penalty placed
    on the table, or -1 when the hand cannot lay down."""
    return best_lay_down_ws(hand, rv, round_idx, best_stack, best, new_workspace())


@njit(_nrt=False)
def best_lay_down_ws(hand, rv, round_idx, best_stack, best, ws):
    """``best_lay_down_counts`` with caller-owned scratch memory ``ws`` (int64[WS_LEN]): no
    allocation per call, which matters when the engine asks once per turn."""
    return best_lay_down_min(hand, rv, round_idx, np.int64(-1), best_stack, best, ws)


@njit(_nrt=False)
def best_lay_down_min(hand, rv, round_idx, min_points, best_stack, best, ws):
    """``best_lay_down_ws`` under the rules' opening (``min_points`` < 0), or with new melds worth
    at least ``min_points`` instead (1: any melds; the engine's search after an opening and for a
    kalooki), without a modified copy of the rule vector."""
    return best_lay_down_must(hand, rv, round_idx, min_points, np.int64(-1), best_stack, best, ws)


@njit(_nrt=False)
def best_lay_down_must(hand, rv, round_idx, min_points, must, best_stack, best, ws):
    """``best_lay_down_min`` told that every lay-down of ``hand`` places every copy of natural
    ``must`` (-1: nothing known), as when the hand is one without a lay-down plus that card
    (``engine.core._certificate_verdict``).  The search then skips the branches that keep a copy in
    hand; they hold no lay-down, so the result is the same."""
    return best_lay_down_known(hand, rv, round_idx, min_points, must, np.bool_(False), best_stack, best,
                               ws)


@njit(_nrt=False)
def best_lay_down_known(hand, rv, round_idx, min_points, must, in_reach, best_stack, best, ws):
    """``best_lay_down_must``, also told whether the caller found the contract in reach already
    (``contract_out_of_reach`` said no: the engine asks it first of every draw), so that the search
    does not ask its first test again.  (Callers pass a bool, never a literal: a literal compiles
    a copy of the search's set-up for it.)"""
    prm = ws[_WS_PRM:_WS_NATVAL]
    fill_params(rv, round_idx, prm)
    prm[P_MUST] = must
    if min_points >= 0:
        prm[P_CONTRACT] = 0
        prm[P_T] = 0
        prm[P_F] = 0
        prm[P_MINPTS] = min_points
    best[B_USED] = -1
    best[B_N] = 0
    best[B_VAL] = -1
    best[B_NODES] = 0
    wbest = ws[_WS_BEST:_WS_STACK]      # the search's own (``_dfs``), handed out by ``_best_out``
    for k in range(4):
        wbest[k] = best[k]
    contract = prm[P_CONTRACT] == 1
    if contract and prm[P_EXTRA] == 0 and prm[P_DIST_RANK] == 1 and prm[P_DIST_SUIT] == 1:
        if not in_reach and _contract_needs_more_jokers(hand, prm, rv):
            return -1
    pen = rv[R_PENALTY:R_PENALTY + 53]
    natval = ws[_WS_NATVAL:_WS_POOL]
    pool = ws[_WS_POOL:_WS_BEST]
    stack = c_view(ws[_WS_STACK:_WS_SCRATCH], (2 * MAX_MELDS, REC))
    zero = np.int64(0)
    if (contract and prm[P_EXTRA] == 0 and prm[P_DIST_RANK] == 1 and prm[P_DIST_SUIT] == 1
            and prm[P_SET_MAX] < 0 and prm[P_T] <= _DP_T and hand[52] <= _DP_J):
        # runs first, sets in closed form: cheap enough that the unmeldable-card filter below
        # would cost more than it saves
        if prm[P_T] > 0 and prm[P_F] > 0 and prm[P_JSET] == 0 and hand[52] <= 2:
            if not _runs_then_sets_fit(hand, prm, np.int64(hand[52])):
                return -1
        rem_pen = zero      # never a literal 0: see the note above ``_dfs``
        for t in range(52):
            pool[t] = hand[t]
            rem_pen += hand[t] * pen[t]
        pool[52] = 0
        _run_bounds(hand, pen, prm, rv)
        # (with no runs to choose the root is the only node, and nothing found yet to prune by)
        prm[P_UB_SETS] = 0 if prm[P_F] == 0 else _top_rank_penalty(hand, pen, prm[P_T],
                                                                    prm[P_SET_MIN_NAT])
        dp = c_view(ws[_WS_DP:_WS_PICK], (_DP_T + 1, _DP_J + 1))
        pick = c_view(ws[_WS_PICK:WS_LEN], (13, _DP_T + 1, _DP_J + 1))
        rc_lo, rc_hi = rank_count_words(hand)
        _runs_first(zero, np.int64(hand[52]), zero, rem_pen, zero, rc_lo, rc_hi, zero, ws, stack, rv, dp,
                    pick)
        return _best_out(ws, stack, best_stack, best)
    rem_pen = zero
    rem_cnt = zero
    rem_val = zero
    pool[52] = 0
    # natural values by rank.  Naturals no meld could hold stay in hand, out of the search (which
    # also tightens its bound): ``_fits_some_meld``, with each suit's run reach computed once (a
    # held card's position is in its suit's ``run_mask`` already)
    jk = np.int64(hand[52])
    for r in range(13):
        natval[r] = _natural_value(rv, r)
    set_ranks = np.int64(0)             # (the set test is the same for each held card of a rank)
    for r in range(13):
        if _set_fits(hand, r, jk, prm[P_SET_MIN_NAT], prm[P_SET_MIN], prm[P_SET_DUP]):
            set_ranks |= np.int64(1) << r
    for t in range(52):
        pool[t] = 0
    held = np.int64(0)
    for s in range(4):
        pm = run_mask(hand, s, prm[P_LO_MIN], prm[P_HI_MAX])
        reach = _run_reach(pm, jk, prm[P_RUN_MIN], prm[P_LO_MIN], prm[P_HI_MAX] - prm[P_RUN_MIN] + 1,
                           prm[P_ADJ_OK])
        # the ranks of suit s held (positions 2..13 are ranks 1..12, an ace at 1 or 14) that some
        # run or set could hold: only these enter the pool, visited by their bits (``_dfs`` reads
        # natval only for pool types, or multiplied by a count of zero)
        ranks = ((pm >> 1) & 0x1FFE) | (1 if hand[s * 13] > 0 else 0)
        fit = ((reach >> 1) & 0x1FFE) | (1 if (reach & ((1 << 1) | (1 << 14))) != 0 else 0)
        keep = ranks & (fit | set_ranks)
        held |= keep << (s * 13)
        while keep != 0:
            r = lowest_bit(keep)
            keep &= keep - 1
            t = s * 13 + r
            c = np.int64(hand[t])
            natval[t] = natval[r]
            pool[t] = c
            rem_pen += c * pen[t]
            rem_cnt += c
            rem_val += c * natval[r]
    prm[P_HELD] = held
    if not contract and rem_val + hand[52] * prm[P_MAXJVAL] < prm[P_MINPTS]:
        return -1
    _dfs(zero, zero, np.int64(hand[52]), zero, rem_pen, rem_cnt, zero, rem_val, zero, zero, zero, zero,
         zero, ws, stack, rv)
    return _best_out(ws, stack, best_stack, best)


@njit(_nrt=False)
def _best_out(ws, stack, best_stack, best):
    """Hand the search's result to the caller: its best[] (in ``ws``) and the best lay-down's
    records (``stack``'s rows from ``MAX_MELDS`` on).  Returns the penalty placed, -1 if none."""
    wbest = ws[_WS_BEST:_WS_STACK]
    for k in range(4):
        best[k] = wbest[k]
    for i in range(wbest[B_N]):
        for k in range(REC):
            best_stack[i, k] = stack[MAX_MELDS + i, k]
    return best[B_USED]


@njit
def best_lay_down_batch(hands, rv, round_idx, out_used):
    """Batch entry point (benchmarks, engine): best placed penalty per hand, -1 if none."""
    best_stack = np.zeros((MAX_MELDS, REC), dtype=np.int64)
    best = np.zeros(4, dtype=np.int64)
    ws = new_workspace()
    for i in range(hands.shape[0]):
        out_used[i] = best_lay_down_ws(hands[i], rv, round_idx, best_stack, best, ws)
