"""The engine answers most draws of a player far from his contract without counting
(``engine.core._still_short``): a hand short of k > 1 cards at its last draw is still out of reach
after one card more.  That rests on three properties of the count it keeps,
``melds.search.contract_cards_short``, checked here against a plain-Python version of the full
count (``_plain_cards_short``, no shortcuts):

* the compiled count is positive exactly when the search's own pre-test says "out of reach", and
  never above the full count (it skips the runs when the sets settle it);
* the full count is positive only for hands the pre-test rejects;
* a card more lowers the full count by at most one, and a card less never lowers it.

Then, on the states of real games, the count a seat keeps never exceeds the full count of the
hand it holds while no call has brought it cards.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from kalooki_sim import load_rules
from kalooki_sim.agents.base import GREEDY, RANDOM
from kalooki_sim.agents.compiled import choose_action
from kalooki_sim.cards import counts_of
from kalooki_sim.engine import core
from kalooki_sim.engine import layout as L
from kalooki_sim.engine.state import State
from kalooki_sim.melds.search import contract_cards_short, contract_out_of_reach
from kalooki_sim.rng import rng_key
from kalooki_sim.testing import random_test_hand

CONTRACT_PRESETS = [p for p in ("caribbean", "american") if load_rules(p).opening_mode == "contract"]


def _plain_cards_short(counts, rules, round_no) -> int:
    """The cards a hand is short of its contract, counted in full: the larger of the ranks that
    must still become usable for the sets, and the jokers missing from the sum of the sets' and
    the runs' needs (halved, rounded up, when the contract has both)."""
    T, F = rules.contracts[round_no - 1]
    rc = [int(sum(counts[s * 13 + r] for s in range(4))) for r in range(13)]
    ranks_short = max(T - sum(c >= rules.set_min_naturals for c in rc), 0) if T else 0
    need = max(T - sum(c >= rules.set_min_size for c in rc), 0) if T else 0
    if F:
        w = rules.run_min_size
        lo_min = 1 if rules.ace_low else 2
        hi_max = 14 if rules.ace_high else 13
        best = []
        for s in range(4):
            held = {q for q in range(lo_min, hi_max + 1)
                    if counts[s * 13 + (0 if q in (1, 14) else q - 1)] > 0}
            best.append(min(sum(q not in held for q in range(lo, lo + w))
                            for lo in range(lo_min, hi_max - w + 2)))
        need += sum(sorted(best)[:F])
    jokers_short = need - int(counts[52])
    if T and F:
        jokers_short = -(-jokers_short // 2)
    return max(ranks_short, jokers_short, 0)


def _rng(preset, purpose):
    return np.random.default_rng([20261202, zlib.crc32(preset.encode()), zlib.crc32(purpose.encode())])


@pytest.mark.parametrize("preset", CONTRACT_PRESETS)
def test_cards_short_is_the_pretest_and_moves_by_at_most_one_a_card(preset):
    rules = load_rules(preset)
    rv = np.ascontiguousarray(rules.to_vector(), dtype=np.int64)
    rng = _rng(preset, "hands")
    n_decks_types = [rules.n_decks] * 52 + [rules.n_jokers]
    short_seen = {0: 0, 1: 0, 2: 0}
    for i in range(3000):
        round_no = i % len(rules.contracts) + 1
        counts = counts_of(random_test_hand(rules, rng, round_no=round_no)).astype(np.int64)
        rnd = round_no - 1
        got = contract_cards_short(counts, rv, rnd)
        assert got == contract_cards_short(counts.astype(np.int8), rv, rnd)
        full = _plain_cards_short(counts, rules, round_no)
        out = contract_out_of_reach(counts, rv, rnd)
        assert (got > 0) == out, (round_no, counts.tolist())
        assert got <= full, (round_no, got, full, counts.tolist())
        assert (full > 0) == out, (round_no, full, counts.tolist())
        short_seen[min(full, 2)] += 1
        # one card more (any type the decks still hold) and one card less
        t = int(rng.integers(53))
        if counts[t] < n_decks_types[t]:
            counts[t] += 1
            assert _plain_cards_short(counts, rules, round_no) >= full - 1, (round_no, t)
            counts[t] -= 1
        held = np.nonzero(counts)[0]
        t = int(held[rng.integers(held.size)])
        counts[t] -= 1
        assert _plain_cards_short(counts, rules, round_no) >= full, (round_no, t)
    assert min(short_seen.values()) >= 100, short_seen      # both answers, and counts beyond one


@pytest.mark.parametrize("preset", CONTRACT_PRESETS)
def test_kept_count_never_exceeds_the_hand_it_stands_for(preset):
    rules = load_rules(preset)
    rv = np.ascontiguousarray(rules.to_vector(), dtype=np.int64)
    st = State.empty(1)
    A = st.arrays()
    gs, ps, hands = A[0], A[1], A[2]
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    params = np.zeros(1)
    kept = 0
    for game in range(30):
        core.start_game(*A, rv, 0, 4, -1, 11, game, 1)
        keys = np.array([rng_key(11, game, core.STREAM_POLICY_BASE + p) for p in range(4)], dtype=np.uint64)
        ctrs = np.zeros(4, dtype=np.int64)
        pol = [GREEDY, GREEDY, GREEDY, RANDOM]
        for _ in range(3000):
            if gs[0, L.G_TERMINAL]:
                break
            seat = gs[0, L.G_TO_ACT]
            k = core.legal_mask(*A, rv, 0, mask)
            a = choose_action(pol[seat], params, *A, rv, 0, seat, mask, k, keys[seat], ctrs[seat:seat + 1])
            assert core.step(*A, rv, 0, a) == 0
            round_no = gs[0, L.G_ROUND] + 1
            for p in range(4):
                short = ps[0, p, L.PS_SHORT]
                if ps[0, p, L.PS_LAID] == 1 or ps[0, p, L.PS_SHORT_CALLS] != ps[0, p, L.PS_CALLS]:
                    continue
                if short > 1:
                    kept += 1
                full = _plain_cards_short(hands[0, p].astype(np.int64), rules, round_no)
                assert short <= full, (game, p, short, full)
    assert kept >= 200, kept
