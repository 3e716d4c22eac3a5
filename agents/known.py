"""A decision's legality cache: greedy asks the engine about the few actions it considers, each at
most once per decision, wherever in the agent (``agents.compiled``, ``agents.manipulation``) the
question comes from.

``known`` (int64, ``agents.compiled.KNOWN_LEN`` long, zeros when created) holds
``2 * generation + legal`` per action and the current generation at ``KNOWN_GEN``, so forgetting
every answer is one increment instead of clearing ``N_ACTIONS`` entries at every decision (a
measurable share of a greedy hand).
"""

from __future__ import annotations

from kalooki_sim.core.jit import njit
from kalooki_sim.engine.core import NEEDS_TABLE, check_action, check_flow_action
from kalooki_sim.engine.layout import N_ACTIONS

__all__ = ["KNOWN_GEN", "forget_known", "remember", "is_legal"]

KNOWN_GEN = N_ACTIONS


@njit(_nrt=False)
def forget_known(known):
    """Start a new decision: every answer cached in ``known`` becomes unknown."""
    known[KNOWN_GEN] += 1


@njit(_nrt=False, inline="always")
def remember(known, a, legal):
    """Record whether action ``a`` is legal in this decision (an agent that already knows saves the
    caller's check)."""
    known[a] = 2 * known[KNOWN_GEN] + (1 if legal else 0)


@njit(inline="always")
def _check(known, a, state, rv, g):
    gs, ps, hands, disc_by = state.gs, state.ps, state.hands, state.disc_by
    # the flow check (five arrays to pass, not 14) answers all but lay-downs, lay-offs and moves
    e = check_flow_action(gs, ps, hands, disc_by, rv, g, a)
    if e == NEEDS_TABLE:
        e = check_action(state, rv, g, a)
    remember(known, a, e == 0)
    return 1 if e == 0 else 0


@njit(inline="always")
def is_legal(known, a, state, rv, g):
    """Is action ``a`` legal?  Asks ``core.check_action`` once per decision and remembers it."""
    k = known[a]
    if (k >> 1) != known[KNOWN_GEN]:
        return _check(known, a, state, rv, g) == 1
    return (k & 1) == 1
