"""Parallel batch kernels over games (``prange``), the pattern the closed-loop simulator follows.

Each game row is independent and every random number comes from the game's own counter-based
streams (``kalooki_sim.rng``), so results do not depend on the thread count or on which other
games share the batch.  The state arrays arrive as plain arguments (never through tuple fields,
whose writes numba can lose inside ``prange``).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..jit import pnjit
from .playout import random_playout


@pnjit
def random_playouts(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                    rv, policy_seed, max_steps, check, bias, out_err, out_stats):
    """``playout.random_playout`` for every game of the batch in parallel.

    ``out_err[g]`` receives the playout's return code (0 = fine), ``out_stats[g]`` (int64[B, 8])
    its counters.
    """
    for i in prange(gs.shape[0]):
        g = np.uint64(i)                    # one signature for random_playout (see ``jit.pnjit``)
        out_err[g] = random_playout(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                                    hscore, hwin, rv, g, policy_seed, max_steps, check, out_stats[g], bias)
