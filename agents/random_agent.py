"""The random policy: a uniform choice among the legal actions.

Randomness comes only from the counter-based generator of ``kalooki_sim.rng`` (the seat's stream
key and a counter advanced in place), so a game's decisions depend on (seed, game id) only.
"""

from __future__ import annotations

from kalooki_sim.engine.layout import N_ACTIONS
from kalooki_sim.jit import njit
from kalooki_sim.rng import rng_below


@njit
def random_action(mask, n_legal, key, ctr):
    """Uniformly random legal action (counter ``ctr[0]`` advanced by one)."""
    j = rng_below(key, ctr[0], n_legal)
    ctr[0] += 1
    for a in range(N_ACTIONS):
        if mask[a]:
            if j == 0:
                return a
            j -= 1
    return -1
