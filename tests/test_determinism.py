"""Results depend only on (rules, seed, game id, agents): never on batch size or thread count."""

import numba
import numpy as np
import pytest

from kalooki_sim import load_rules
from kalooki_sim.runtime.rollout import simulate

SEATS = ["greedy", "greedy", "random", "random"]


def _concat(parts):
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


@pytest.mark.parametrize("mode", ["hands", "matches"])
def test_batch_of_64_equals_64_batches_of_1(mode):
    r = load_rules("caribbean")
    n = 64 if mode == "hands" else 8
    whole = simulate(r, 4, SEATS, None, n, 11, mode=mode)
    ones = [simulate(r, 4, SEATS, None, 1, 11, mode=mode, first_game_id=i) for i in range(n)]
    if mode == "matches":
        whole_h, whole_m = whole
        ones_h = _concat([o[0] for o in ones])
        ones_m = _concat([o[1] for o in ones])
        for k in whole_m:
            np.testing.assert_array_equal(whole_m[k], ones_m[k], err_msg=k)
        whole = whole_h
        ones = ones_h
    else:
        ones = _concat(ones)
    for k in whole:
        np.testing.assert_array_equal(whole[k], ones[k], err_msg=k)


def test_one_thread_equals_all_threads_for_matches():
    r = load_rules("caribbean")
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        a_h, a_m = simulate(r, 4, SEATS, None, 12, 5, mode="matches")
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        b_h, b_m = simulate(r, 4, SEATS, None, 12, 5, mode="matches")
    finally:
        numba.set_num_threads(before)
    for k in a_h:
        np.testing.assert_array_equal(a_h[k], b_h[k], err_msg=k)
    for k in a_m:
        np.testing.assert_array_equal(a_m[k], b_m[k], err_msg=k)


def test_a_different_seed_gives_different_games():
    r = load_rules("caribbean")
    a = simulate(r, 4, SEATS, None, 18, 1)
    b = simulate(r, 4, SEATS, None, 18, 2)
    assert not np.array_equal(a["penalty"], b["penalty"])
