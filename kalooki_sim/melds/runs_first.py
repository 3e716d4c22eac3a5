"""The search for contracts with one run per suit, one set per rank and sets of any size
(Caribbean): the runs are searched first, then the sets chosen in closed form at each leaf.

It is exact for those contracts only, and much cheaper there than the general search (``dfs``),
which ``search.best_lay_down_known`` runs for everything else.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.bits import (
    lowest_bit, popcount, rank_count_of, rank_count_words, rank_tops_above, ranks_above_masked, spread_bits8,
)
from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import R_PENALTY

from .leaf import _leaf, _move_run, _next_same_popcount
from .positions import fewest_of, pos_type, run_mask
from .reach import _run_reach, _sets_need_words
from .workspace import (
    _WS_BEST, _WS_NATVAL, _WS_POOL, _WS_PRM, _WS_SCRATCH, _WS_STACK, B_NODES, B_USED, K_RUN, K_SET, P_ADJ_OK, P_BOTH_OK,
    P_F, P_FIT_PM, P_FIT_TOPS, P_HI_MAX, P_LO_MIN, P_MUST, P_PJ, P_RUN_JK, P_RUN_MAX, P_RUN_MIN, P_RUN_MIN_NAT,
    P_RUN_UB, P_SET_MIN, P_SET_MIN_NAT, P_T, P_UB_SETS, SCRATCH_W,
)


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
