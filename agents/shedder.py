"""The shedder: a penalty-minded baseline, and the compiled-agent recipe's example (docs/recipes.md
shows this file whole).

It lays down as soon as it may, discards its highest-penalty card (with probability ``shed``), and
otherwise plays a uniformly random legal action.  Everything a compiled agent needs is here: a
kernel of the shared signature (``agents/declare.py``), its parameters, its declaration; the one
other line is its name in ``agents/registry.py``.
"""

from __future__ import annotations

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rng import rng_uniform
from kalooki_sim.core.rulevec import R_PENALTY
from kalooki_sim.engine.core import legal_mask
from kalooki_sim.engine.layout import A_DISCARD, A_LAY, N_TYPES

from .declare import CompiledAgent, Param, param_index
from .random_agent import random_action

PARAMS = (
    Param("shed", 1.0, (0.0, 1.0), "probability of discarding the highest-penalty card, not a random legal action"),
)
P_SHED = param_index(PARAMS, "shed")


@njit(_nrt=False)
def shedder_action(params, state, rv, g, seat, known, mask, key, ctr):
    """Lay down if it may; else shed the highest-penalty card; else a random legal action."""
    n = legal_mask(state, rv, g, mask)
    if n <= 0:
        return -1
    if mask[A_LAY]:
        return A_LAY
    worst = -1
    for t in range(N_TYPES):
        if mask[A_DISCARD + t] and (worst < 0 or rv[R_PENALTY + t] > rv[R_PENALTY + worst]):
            worst = t
    if worst >= 0:
        u = rng_uniform(key, ctr[0])
        ctr[0] += 1
        if u < params[P_SHED]:
            return A_DISCARD + worst
    return random_action(mask, n, key, ctr)


AGENT = CompiledAgent("shedder", 3, shedder_action, PARAMS,
                      doc="Lays down as soon as it may, discards its highest-penalty card, otherwise plays at "
                          "random: a baseline that holds far fewer penalty points than random, and the "
                          "compiled-agent recipe's example (docs/recipes.md).")
