"""Batch kernels over games, run on threads by ``lanes.run_lanes`` (the closed loop's pattern).

Each game row is independent and every random number comes from the game's own counter-based
streams (``kalooki_sim.core.rng``), so results do not depend on the thread count or on which other
games share the batch.  The state arrays arrive as plain arguments (never through tuple fields,
whose writes numba can lose inside ``prange``).
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.lanes import run_lanes

from .playout import random_playout


@njit
def _random_playouts(state, rv, policy_seed, max_steps, check, bias, out_err, out_stats, g_from, g_to):
    for i in range(g_from, g_to):
        g = np.uint64(i)                    # the engine's kernels take the game row as uint64
        out_err[g] = random_playout(state, rv, g, policy_seed, max_steps, check, out_stats[g], bias)


def random_playouts(state, rv, policy_seed, max_steps, check, bias, out_err, out_stats):
    """``playout.random_playout`` for every game of the batch in parallel.

    ``out_err[g]`` receives the playout's return code (0 = fine), ``out_stats[g]`` (int64[B, 8])
    its counters.
    """
    gs = state.gs
    run_lanes(_random_playouts, gs.shape[0], state, rv, policy_seed, max_steps, check, bias, out_err, out_stats)
