"""Shortcuts of the compiled greedy agent (agents/compiled.py) against the definitions they stand for.

* ``sf_prepare``/``sf_changed`` (one-card change of the hand, one suit rescanned) must equal
  ``contract_shortfall`` of the changed hand, for every contract rule set and round;
* ``_usefulness_planes`` (the usefulness counts of every held card at once, as bit planes) must
  give ``card_usefulness`` for each, and ``_discard_pick``'s (best, runner-up) must be the first
  two cards of the measure computed from the definitions;
* ``tack_may_fit`` may only rule out lay-offs that ``fit._fit_err`` rejects, and
  ``_tack_candidates`` must hold every held card it lets through (checked on the tables of real
  games of every preset).
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from kalooki_sim import load_rules
from kalooki_sim.agents.base import GREEDY, RANDOM, default_params
from kalooki_sim.agents.compiled import card_usefulness, choose_action, contract_shortfall
from kalooki_sim.agents.discard import _discard_pick, _lane_type, _suit_lanes, _usefulness_planes
from kalooki_sim.agents.greedy import _tack_candidates
from kalooki_sim.agents.measures import (
    SFW_BASE, SFW_LEN, _SFW_PM, _closer_with, sf_changed, sf_prepare, shortfall_with,
)
from kalooki_sim.core.bits import (
    byte_tops, float_bits, highest_bit, lowest_bit, popcount, positive_bits8, rank_count_of, rank_count_words,
    rank_tops_above, ranks_above, ranks_above_masked, spread_bits8, twice_bits8,
)
from kalooki_sim.core.rng import rng_key
from kalooki_sim.core.rulevec import (
    N_WINDOW_MASKS, R_ACE_HIGH, R_ACE_LOW, R_N_ROUNDS, R_OPENING_MODE, R_PENALTY, R_RUN_MIN_SIZE,
    R_SET_ALLOW_DUPLICATE_SUIT, R_SET_MIN_SIZE, R_VEC_LEN, R_WINDOWS,
)
from kalooki_sim.engine import core, fit, layout as L
from kalooki_sim.engine.fit import tack_may_fit
from kalooki_sim.engine.state import State
from kalooki_sim.melds.positions import (
    NOT_A_VALUE, best_windows, fewest_of, pos_type, run_mask, run_tables, smallest4, sum_smallest4, windows_of,
)

PRESETS = ["caribbean", "k40", "k51", "k101", "na15", "american"]


KNOBS = [{}, {R_ACE_HIGH: 0}, {R_ACE_LOW: 0}, {R_RUN_MIN_SIZE: 3}, {R_RUN_MIN_SIZE: 5, R_SET_MIN_SIZE: 4},
         {R_SET_MIN_SIZE: 2, R_ACE_HIGH: 0, R_ACE_LOW: 1}]


def _caribbean_with(knobs):
    """Caribbean's rules vector with some slots set (beyond what rule validation allows), its
    window table rebuilt for the run rules it then has."""
    rv = np.array(load_rules("caribbean").to_vector(), dtype=np.int64)
    for i, v in knobs.items():
        rv[i] = v
    rv[R_WINDOWS:] = run_tables(rv[R_RUN_MIN_SIZE], 2 - rv[R_ACE_LOW], 13 + rv[R_ACE_HIGH])
    return rv


@pytest.mark.parametrize("knobs", KNOBS)
def test_incremental_shortfall_matches_full(knobs):
    rv = _caribbean_with(knobs)
    assert rv[R_OPENING_MODE] == 0
    rng = np.random.default_rng(3)
    hands = np.zeros((1, 4, L.N_TYPES), dtype=np.int8)
    sfw = np.zeros(SFW_LEN, dtype=np.int64)
    for rnd in range(rv[R_N_ROUNDS]):
        for _ in range(60):
            n = int(rng.integers(1, 20))
            hands[:] = 0
            for t in rng.integers(0, L.N_TYPES, size=n):
                if hands[0, 1, t] < 2:
                    hands[0, 1, t] += 1
            before = hands.copy()
            assert sf_prepare(hands, rv, 0, 1, rnd, sfw)
            assert sfw[SFW_BASE] == contract_shortfall(hands, rv, 0, 1, rnd)
            for t in range(L.N_TYPES):
                for delta in (1, -1):
                    if delta == -1 and hands[0, 1, t] == 0:
                        continue
                    if delta == 1:
                        assert _closer_with(hands, rv, 0, 1, rnd, t) == (
                            shortfall_with(hands, rv, 0, 1, rnd, t, 1) < contract_shortfall(hands, rv, 0, 1, rnd))
                    got = sf_changed(hands, rv, 0, 1, rnd, t, delta, sfw)
                    hands[0, 1, t] += delta
                    want = contract_shortfall(hands, rv, 0, 1, rnd)
                    hands[0, 1, t] -= delta
                    assert got == want, (rnd, t, delta)
            assert np.array_equal(hands, before)


@njit
def _bits_of(xs, fs, out):
    for i in range(xs.shape[0]):
        out[i, 0] = popcount(xs[i])
        out[i, 1] = lowest_bit(xs[i])
        out[i, 2] = highest_bit(xs[i])
        out[i, 3] = float_bits(fs[i])


@njit
def _count_bits_of(a, out):
    for i in range(a.shape[0] - 7):
        out[i, 0] = positive_bits8(a, i)
        out[i, 1] = twice_bits8(a, i)


@pytest.mark.parametrize("dtype", [np.int8, np.int64])
def test_count_bits8_mark_the_counts_at_least_one_and_two(dtype):
    """The word trick for int8 counts (one load, signs cleared) and the plain loads for other
    types both give bit k for ``a[start + k] > 0`` (``positive_bits8``) and ``>= 2``
    (``twice_bits8``), at every start and for every byte value."""
    rng = np.random.default_rng(9)
    lo, hi = (-128, 128) if dtype == np.int8 else (-5, 6)
    for trial in range(400):
        a = rng.integers(lo, hi, size=53).astype(dtype)
        if trial % 2:
            a = rng.integers(0, 4, size=53).astype(dtype)     # hands: counts 0..3
        a[rng.random(53) < 0.3] = 0
        out = np.zeros((46, 2), dtype=np.int64)
        _count_bits_of(a, out)
        for i in range(46):
            assert out[i, 0] == sum(1 << k for k in range(8) if a[i + k] > 0), (a[i:i + 8], i)
            assert out[i, 1] == sum(1 << k for k in range(8) if a[i + k] >= 2), (a[i:i + 8], i)


@njit
def _byte_tops_of(xs, out):
    for i in range(xs.shape[0]):
        out[i] = byte_tops(xs[i])


def test_byte_tops_gathers_the_top_bit_of_each_byte():
    """Every set of byte tops (the sign bit among them, where an arithmetic shift or a signed
    multiply would go wrong), in a loop and one by one."""
    tops = np.array([sum(((m >> k) & 1) << (8 * k + 7) for k in range(8)) for m in range(256)],
                    dtype=np.uint64).view(np.int64)
    out = np.zeros(256, dtype=np.int64)
    _byte_tops_of(tops, out)
    assert list(out) == list(range(256))
    for m in (0, 1, 128, 255):
        one = np.zeros(1, dtype=np.int64)
        _byte_tops_of(tops[m:m + 1], one)
        assert one[0] == m


@njit
def _ranks_above_of(hands, cs, ranks, out, counts):
    for i in range(hands.shape[0]):
        out[i, 0] = ranks_above(hands[i], cs[i])
        lo, hi = rank_count_words(hands[i])
        for r in range(13):
            counts[i, r] = rank_count_of(lo, hi, r)
        # the same count over the ranks of the bit set ``ranks[i]`` only (their bytes' top bits)
        tops_lo = np.int64(0)
        tops_hi = np.int64(0)
        for r in range(13):
            if (ranks[i] >> r) & 1:
                if r < 8:
                    tops_lo |= np.int64(0x80) << (8 * r)
                else:
                    tops_hi |= np.int64(0x80) << (8 * (r - 5))
        out[i, 1] = ranks_above_masked(lo, hi, cs[i], tops_lo, tops_hi)


def test_ranks_above_counts_ranks_holding_more():
    """The bytewise count of ranks with more than c naturals equals the count rank by rank, for
    counts up to 31 a card type (what it promises) and every c the counts make interesting; the
    bytewise counts of every rank are the sums of its four suits."""
    rng = np.random.default_rng(13)
    n = 4000
    hands = np.zeros((n, L.N_TYPES), dtype=np.int8)
    for i in range(n):
        top = [1, 2, 3, 31][i % 4]
        hands[i, :52] = rng.integers(0, top + 1, size=52) * (rng.random(52) < 0.4)
        hands[i, 52] = rng.integers(0, 100)          # jokers are not a rank
    cs = rng.integers(0, 14, size=n)
    cs[::5] = 0
    ranks = rng.integers(0, 1 << 13, size=n)
    ranks[::7] = (1 << 13) - 1
    out = np.zeros((n, 2), dtype=np.int64)
    got = np.zeros((n, 13), dtype=np.int64)
    _ranks_above_of(hands, cs, ranks, out, got)
    for i in range(n):
        counts = [int(hands[i, r]) + hands[i, 13 + r] + hands[i, 26 + r] + hands[i, 39 + r] for r in range(13)]
        assert out[i, 0] == sum(c > cs[i] for c in counts), (hands[i], cs[i])
        assert out[i, 1] == sum(c > cs[i] for r, c in enumerate(counts) if (ranks[i] >> r) & 1), (hands[i], cs[i])
        assert list(got[i]) == counts, hands[i]


@njit
def _smallest4_of(vals, out):
    for i in range(vals.shape[0]):
        a0, a1, a2, a3, k = vals[i]
        out[i, 0], out[i, 1] = smallest4(a0, a1, a2, a3, k)
        out[i, 2] = sum_smallest4(a0, a1, a2, a3, k)
        for s in range(4):          # the sum with value s raised by one
            b = vals[i, :4].copy()
            b[s] += 1
            out[i, 3 + s] = sum_smallest4(b[0], b[1], b[2], b[3], k)


def test_smallest4_sum_and_next_tell_what_raising_a_value_does():
    """The sum of the k smallest and the (k + 1)-th smallest of four (ties and the 99 of a suit
    without a window included); raising one value by one adds one to the sum exactly when it is
    below that next value (the greedy workspace's one-sort shortcut)."""
    rng = np.random.default_rng(21)
    vals = rng.integers(0, 6, size=(3000, 5))
    vals[:, :4][rng.random((3000, 4)) < 0.2] = 99
    vals[:, 4] = np.arange(3000) % 5
    out = np.zeros((3000, 7), dtype=np.int64)
    _smallest4_of(vals, out)
    for i in range(3000):
        a, k = sorted(int(v) for v in vals[i, :4]), int(vals[i, 4])
        assert out[i, 0] == out[i, 2] == sum(a[:k]), vals[i]
        assert out[i, 1] == (a[k] if k < 4 else NOT_A_VALUE), vals[i]
        for s in range(4):
            assert out[i, 3 + s] == out[i, 0] + (1 if vals[i, s] < out[i, 1] else 0), (vals[i], s)


@njit
def _spread_of(xs, out):
    for i in range(xs.shape[0]):
        out[i] = spread_bits8(xs[i])


def test_spread_bits8_puts_bit_k_in_byte_k():
    """Every byte value, in a loop (where LLVM once folded the sign bit away) and one by one."""
    xs = np.arange(256, dtype=np.int64)
    out = np.zeros(256, dtype=np.int64)
    _spread_of(xs, out)
    for x in range(256):
        want = sum(((x >> k) & 1) << (8 * k) for k in range(8))
        assert int(out[x]) == want, (x, hex(int(out[x])))
        one = np.zeros(1, dtype=np.int64)
        _spread_of(xs[x:x + 1], one)
        assert int(one[0]) == want, x


def test_bit_intrinsics_match_python():
    rng = np.random.default_rng(5)
    xs = np.concatenate([[0, 1, 2, 3, 1 << 14, (1 << 62) + 5, -1],
                         rng.integers(0, 1 << 40, size=500)]).astype(np.int64)
    fs = rng.random(xs.shape[0]) * 50
    out = np.zeros((xs.shape[0], 4), dtype=np.int64)
    _bits_of(xs, fs, out)
    for i, x in enumerate(int(v) for v in xs):
        u = x & ((1 << 64) - 1)
        assert out[i, 0] == bin(u).count("1")
        assert out[i, 1] == (64 if u == 0 else (u & -u).bit_length() - 1)
        assert out[i, 2] == u.bit_length() - 1
        assert out[i, 3] == np.float64(fs[i]).view(np.int64)
    order = np.argsort(fs, kind="stable")
    assert np.all(np.diff(out[order, 3]) >= 0)      # non-negative floats: bits order like values


def test_best_windows_match_a_scan_of_every_window():
    """``best_windows`` (bit-sliced window counts) against the windows listed one by one, for
    every window length the rules allow and one too long to fit."""
    rng = np.random.default_rng(11)
    hand = np.zeros(L.N_TYPES, dtype=np.int8)
    for _ in range(3000):
        hand[:] = 0
        for t in rng.integers(0, 52, size=int(rng.integers(0, 30))):
            hand[t] += 1
        s = int(rng.integers(0, 4))
        lo_min = int(rng.integers(1, 3))
        hi_max = int(rng.integers(13, 15))
        w = int(rng.integers(2, 16))
        missing = {a: sum(hand[pos_type(s, q)] == 0 for q in range(a, a + w))
                   for a in range(lo_min, hi_max - w + 2)}
        held = {q for q in range(lo_min, hi_max + 1) if hand[pos_type(s, q)] > 0}
        assert run_mask(hand, s, lo_min, hi_max) == sum(1 << q for q in held)
        best, every, some = best_windows(run_mask(hand, s, lo_min, hi_max), w, lo_min, hi_max)
        fewest = min(missing.values(), default=99)
        starts = [a for a, m in missing.items() if m == fewest]
        assert best == fewest
        assert every == (0 if not starts else
                         sum(1 << q for q in range(1, 15) if all(a <= q < a + w for a in starts)))
        assert some == sum(1 << q for q in range(1, 15) if any(a <= q < a + w for a in starts))


@njit
def _table_mismatches(rv, w, lo_min, hi_max):
    """(masks whose table entries differ from ``best_windows``, masks checked): every mask with
    ace bits only where the rules allow them."""
    bad = 0
    n = 0
    for i in range(N_WINDOW_MASKS):
        pm = np.int64(i) << 1
        if (lo_min == 2 and (pm >> 1) & 1) or (hi_max == 13 and (pm >> 14) & 1):
            continue
        n += 1
        b, every, some = best_windows(pm, w, lo_min, hi_max)
        b2, every2, some2 = windows_of(rv, pm)
        if b2 != b or every2 != every or some2 != some or fewest_of(rv, pm) != b:
            bad += 1
    return bad, n


@pytest.mark.parametrize("preset", PRESETS + ["k40+v4"])
def test_window_table_is_best_windows_of_every_mask(preset):
    """The rules vector's window table (``windows_of`` and ``fewest_of``, what the agent, the
    engine's pre-test and the search read) holds ``best_windows`` of every mask a suit can have,
    for the rules' own window length and aces."""
    r = load_rules(preset)
    rv = np.ascontiguousarray(r.to_vector(), dtype=np.int64)
    assert rv.shape == (R_VEC_LEN,)
    lo_min, hi_max = 1 if r.ace_low else 2, 14 if r.ace_high else 13
    assert _table_mismatches(rv, r.run_min_size, lo_min, hi_max) == (0, 1 << (hi_max - lo_min + 1))


@pytest.mark.parametrize("w", range(2, 16))
def test_window_table_holds_every_run_length(w):
    """Every window length and ace choice round-trips through the table, including lengths no
    window fits (fewest missing 99)."""
    rv = np.zeros(R_VEC_LEN, dtype=np.int64)
    for lo_min, hi_max in ((1, 14), (1, 13), (2, 14), (2, 13)):
        rv[R_WINDOWS:] = run_tables(w, lo_min, hi_max)
        assert _table_mismatches(rv, w, lo_min, hi_max) == (0, 1 << (hi_max - lo_min + 1))


def test_window_table_follows_the_run_rules():
    """Two rule sets that differ only in their run rules get different tables (the table is
    derived from the rules, never shared between them)."""
    a = load_rules("caribbean").to_vector()
    b = load_rules("caribbean", run_min_size=3).to_vector()
    c = load_rules("caribbean", ace_high=False).to_vector()
    assert not np.array_equal(a[R_WINDOWS:], b[R_WINDOWS:])
    assert not np.array_equal(a[R_WINDOWS:], c[R_WINDOWS:])
    assert np.array_equal(a[R_WINDOWS:], run_tables(4, 1, 14))


def _random_hand(rng, hands):
    hands[:] = 0
    for t in rng.integers(0, L.N_TYPES, size=int(rng.integers(1, 20))):
        if hands[0, 1, t] < 2:
            hands[0, 1, t] += 1


@njit(cache=False)
def _planes_usefulness(hands, rv, sfw, gapw, out):
    """``card_usefulness`` of each held natural of seat 1 by ``_usefulness_planes`` (out[t]; -1 for
    the others)."""
    al = -np.int64(1 if rv[R_ACE_LOW] == 1 else 0)
    ah = -np.int64(1 if rv[R_ACE_HIGH] == 1 else 0)
    dup = -np.int64(1 if rv[R_SET_ALLOW_DUPLICATE_SUIT] != 0 else 0)
    for s in range(4):
        sfw[_SFW_PM + s] = run_mask(hands[0, 1], s, 2 + al, 13 - ah)
    held, pos, twice = _suit_lanes(hands[0, 1], sfw, True)
    p0, p1, p2, g0, g1 = _usefulness_planes(held, pos, twice, al, ah, dup)
    out[:] = -1.0
    left = held
    while left != 0:
        b = lowest_bit(left)
        left &= left - 1
        n_one = ((p0 >> b) & 1) + 2 * ((p1 >> b) & 1) + 4 * ((p2 >> b) & 1) - 1
        n_gap = ((g0 >> b) & 1) + 2 * ((g1 >> b) & 1)
        out[_lane_type(b)] = np.float64(n_one) + gapw * np.float64(n_gap)


@pytest.mark.parametrize("knobs", KNOBS + [{R_SET_ALLOW_DUPLICATE_SUIT: 1}, {R_ACE_HIGH: 0, R_ACE_LOW: 0},
                                   {R_SET_MIN_SIZE: 14}])   # (beyond the workspace: the slow classes)
def test_masked_usefulness_and_discard_pick_match_definitions(knobs):
    rv = _caribbean_with(knobs)
    rng = np.random.default_rng(7)
    hands = np.zeros((1, 4, L.N_TYPES), dtype=np.int8)
    sfw = np.zeros(SFW_LEN, dtype=np.int64)
    planes = np.zeros(L.JOKER)
    n_runner_up = 0
    for gapw in (0.5, 0.3, 1.0, 1.7):   # 1.0: one gap equals one neighbour (ties)
        for rnd in range(rv[R_N_ROUNDS]):
            for _ in range(25):
                _random_hand(rng, hands)
                _planes_usefulness(hands, rv, sfw, gapw, planes)
                for t in range(L.JOKER):
                    want = card_usefulness(hands, rv, 0, 1, t, 1, gapw) if hands[0, 1, t] > 0 else -1.0
                    assert planes[t] == want, t
                for laid in (False, True):
                    for contract in (True, False):
                        def key(t):
                            sf = shortfall_with(hands, rv, 0, 1, rnd, t, -1) if (contract and not laid) else 0
                            u = card_usefulness(hands, rv, 0, 1, t, 1, gapw) if (not laid or not contract) else 0.0
                            return (sf, u, -rv[R_PENALTY + t], t)
                        order = sorted((t for t in range(L.JOKER) if hands[0, 1, t] > 0), key=key) + [-1, -1]
                        got = _discard_pick(hands, rv, 0, 1, rnd, laid, contract, gapw, sfw)
                        assert got == (order[0], order[1]), (laid, contract)
                        n_runner_up += order[1] >= 0
    assert n_runner_up > 1000


@pytest.mark.parametrize("preset", PRESETS)
def test_tack_prefilter_never_rules_out_a_fit(preset):
    rv = np.ascontiguousarray(load_rules(preset).to_vector(), dtype=np.int64)
    st = State.empty(1)
    A = st.arrays()
    gs, minfo = A[0], A[6]
    mcards, mas = A[7], A[8]
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    params = default_params(GREEDY)           # random reads none of it
    checked = 0
    n_cand = 0
    for game in range(6):
        core.start_game(A, rv, 0, 4, -1, 5, game, 1)
        keys = np.array([rng_key(5, game, core.STREAM_POLICY_BASE + p) for p in range(4)], dtype=np.uint64)
        ctrs = np.zeros(4, dtype=np.int64)
        pol = [GREEDY, GREEDY, GREEDY, RANDOM]
        for _ in range(3000):
            if gs[0, L.G_TERMINAL]:
                break
            if gs[0, L.G_PHASE] == L.PH_PLAY:
                nm = gs[0, L.G_N_MELDS]
                act = gs[0, L.G_ACTIVE]
                fits = np.zeros(L.M_MAX, dtype=np.int64)
                cand, jruns = _tack_candidates(A[2], minfo, 0, act, nm, fits)
                for m in range(nm):
                    assert ((jruns >> m) & 1) == (minfo[0, m, L.MI_KIND] == L.MK_RUN
                                                  and minfo[0, m, L.MI_NJ] > 0), m
                    for t in range(L.N_TYPES):
                        # the meld's mask is the prefilter, card by card
                        assert ((fits[m] >> t) & 1) == tack_may_fit(minfo, 0, m, t), (m, t)
                        if not tack_may_fit(minfo, 0, m, t):
                            assert fit._fit_err(minfo, mcards, mas, rv, 0, m, t) != 0, (m, t)
                            checked += 1
                        elif A[2][0, act, t] > 0:
                            assert (cand >> t) & 1, (m, t)     # candidates hold every possible tack
                            n_cand += 1
                assert all(A[2][0, act, t] > 0 for t in range(L.N_TYPES) if (cand >> t) & 1)
            seat = gs[0, L.G_TO_ACT]
            k = core.legal_mask(A, rv, 0, mask)
            a = choose_action(pol[seat], params, A, rv, 0, seat, mask, k, keys[seat], ctrs[seat:seat + 1])
            assert core.step(A, rv, 0, a) == 0
    assert checked > 0 and n_cand > 0
