"""Counter-based RNG (kalooki_sim.core.rng) and thread-count / batch independence of the engine."""

from __future__ import annotations

import numba
import numpy as np

from kalooki_sim import load_rules
from kalooki_sim.core.rng import rng_below, rng_key, rng_u64, rng_uniform, shuffle_prefix
from kalooki_sim.engine import core, layout as L
from kalooki_sim.engine.batch import random_playouts
from kalooki_sim.engine.state import ARRAY_FIELDS, State


def test_rng_is_a_pure_function_of_key_and_counter():
    k = np.uint64(rng_key(1, 2, 3))      # keys are uint64; from Python pass them as np.uint64
    assert rng_u64(k, 5) == rng_u64(k, 5)
    assert rng_key(1, 2, 3) != rng_key(1, 2, 4) != rng_key(1, 3, 3)
    assert len({rng_u64(k, i) for i in range(1000)}) == 1000
    u = [rng_uniform(k, i) for i in range(2000)]
    assert 0.0 <= min(u) and max(u) < 1.0 and abs(np.mean(u) - 0.5) < 0.03


def test_rng_below_is_roughly_uniform():
    k = np.uint64(rng_key(9, 0, 0))
    counts = np.bincount([rng_below(k, i, 6) for i in range(60000)], minlength=6)
    assert counts.min() > 9500 and counts.max() < 10500


def test_shuffle_is_a_permutation_and_reproducible():
    a = np.arange(108, dtype=np.int8)
    b = a.copy()
    shuffle_prefix(a, 108, np.uint64(rng_key(5, 6, 7)))
    shuffle_prefix(b, 108, np.uint64(rng_key(5, 6, 7)))
    assert (a == b).all() and sorted(a.tolist()) == list(range(108)) and (a != np.arange(108)).any()


def _run(n_games, gids, threads):
    rv = load_rules("caribbean", max_turns_per_hand=50).to_vector()
    st = State.empty(n_games)
    core.start_games(st.arrays(), rv, 4, np.full(n_games, -1, dtype=np.int64),
                     np.full(n_games, 42, dtype=np.int64), np.asarray(gids, dtype=np.int64), 3)
    err = np.zeros(n_games, dtype=np.int64)
    stats = np.zeros((n_games, 8), dtype=np.int64)
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        random_playouts(st.arrays(), rv, 7, 10**6, 0, 0.5, err, stats)
    finally:
        numba.set_num_threads(old)
    assert (err == 0).all()
    return st, stats


def test_thread_count_and_batch_composition_do_not_change_results():
    one, s1 = _run(8, range(8), 1)
    many, s2 = _run(8, range(8), numba.config.NUMBA_NUM_THREADS)
    for a, b in zip(one.arrays(), many.arrays()):
        assert (a == b).all()
    assert (s1 == s2).all()
    sub, _ = _run(3, [6, 2, 5], 1)          # other batch, other order
    for a, b in zip(one.take([6, 2, 5]).arrays(), sub.arrays()):
        assert (a == b).all()


def test_reset_game_then_deal_hand_is_start_game_then_deal_hand():
    """Single-hand rollouts reset a row (``core.reset_game``) and deal the hand they study with
    ``deal_hand``; ``Game`` and the replays start the game (which deals a first hand) and then deal
    the same hand.  The skipped deal must change nothing: same dealer, same cards, every array of
    the row equal, for every round and player count."""
    rules = load_rules("caribbean")
    rv = rules.to_vector()
    for n_players in (3, 4, 6):
        for game_id in range(0, 45, 4):
            a, b = State.empty(1), State.empty(1)
            core.start_game(a.arrays(), rv, 0, n_players, -1, 7, game_id, 1)
            core.reset_game(b.gs, b.ps, b.hscore, b.hwin, rv, 0, n_players, -1, 7, game_id, 1)
            dealer = int(a.gs[0, L.G_DEALER])
            assert dealer == int(b.gs[0, L.G_DEALER])
            for st in (a, b):
                core.deal_hand(st.arrays(), rv, 0, game_id % rules.n_rounds, dealer)
            for name, x, y in zip(ARRAY_FIELDS, a.arrays(), b.arrays()):
                assert np.array_equal(x, y), (n_players, game_id, name)
            assert b.hands[0].sum() > 0
