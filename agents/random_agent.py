"""The random agent: a uniform choice among the legal actions (also greedy's exploration).

Randomness comes only from the counter-based generator of ``kalooki_sim.core.rng`` (the seat's stream
key and a counter advanced in place), so a game's decisions depend on (seed, game id) only.
"""

from __future__ import annotations

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rng import rng_below
from kalooki_sim.engine.core import legal_mask
from kalooki_sim.engine.layout import N_ACTIONS

from .declare import CompiledAgent
from .known import remember

__all__ = ["AGENT", "random_action", "random_legal", "random_kernel"]


@njit
def random_action(mask, n_legal, key, ctr):
    """Uniformly random action among the ``n_legal`` set in ``mask`` (counter advanced by one)."""
    j = rng_below(key, ctr[0], n_legal)
    ctr[0] += 1
    for a in range(N_ACTIONS):
        if mask[a]:
            if j == 0:
                return a
            j -= 1
    return -1


@njit
def random_legal(state, rv, g, mask, key, ctr):
    """Uniformly random legal action in game ``g`` (-1: none); ``mask`` is scratch it fills."""
    n = legal_mask(state, rv, g, mask)
    if n <= 0:
        return -1
    return random_action(mask, n, key, ctr)


@njit
def random_kernel(params, state, rv, g, seat, known, mask, key, ctr):
    """The random agent's kernel (``agents/declare.py``'s signature)."""
    a = random_legal(state, rv, g, mask, key, ctr)
    if a >= 0:
        remember(known, a, True)        # drawn from the legal mask: the caller's check costs nothing
    return a


AGENT = CompiledAgent("random", 0, random_kernel, doc="A uniformly random legal action at every decision.")
