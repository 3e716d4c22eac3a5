"""Asking a seat's compiled agent for its action: ``seat_action`` (the closed loops' one way) and
``choose_action`` (given a legal mask), dispatching on the agent id to the kernel the agent
declared (``agents/registry.py``).

numba needs the kernels as compile-time constants, so dispatch has ``MAX_AGENTS`` fixed slots
filled from the registry at import (a *driven* agent's slot stays empty: it is played from Python,
``agents/declare.py``): an id compare and a direct call per slot, and no code here
names an agent.  The one *hot* agent (declared ``hot=True``: greedy, which most studies play) is
inlined into the closed loop; the slots sit in one out-of-line function (``_act``).  Inlining
them all made greedy's closed loop 4 % slower (docs/benchmark-history.md): eight call sites of
twenty-one arguments in the loop's hottest code.

Randomness comes only from the counter-based generator of ``kalooki_sim.core.rng``: the caller passes
the seat's stream key (``rng_key(seed, game_id, core.STREAM_POLICY_BASE + seat)``) and a one-element
``int64`` counter array that is advanced in place, so a game's decisions depend on (seed, game id)
only — never on threads or batches.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.engine.layout import N_ACTIONS

from .declare import MAX_AGENTS
from .known import KNOWN_GEN, forget_known, is_legal, remember
from .registry import AGENTS

__all__ = ["KNOWN_LEN", "HOT_ID", "choose_action", "seat_action"]

# a seat's decision memory: enough for every registered agent
KNOWN_LEN = max(a.memory for a in AGENTS)


@njit(_nrt=False)
def _no_agent(params, state, rv, g, seat, known, mask, key, ctr):
    return -1


def _slots():
    by_id = {a.id: a.kernel for a in AGENTS if not a.driven}
    return [by_id.get(i, _no_agent) for i in range(MAX_AGENTS)]


assert MAX_AGENTS == 8, "dispatch below has 8 slots"
_K0, _K1, _K2, _K3, _K4, _K5, _K6, _K7 = _slots()
_HOT = [a for a in AGENTS if a.hot]
HOT_ID = _HOT[0].id if _HOT else -2             # -2: no agent id (EXTERNAL is -1)
_KH = _HOT[0].kernel if _HOT else _no_agent


@njit
def _act(policy_id, params, state, rv, g, seat, known, mask, key, ctr):
    """The kernel of agent ``policy_id`` (-1 for an id without one)."""
    if policy_id == 0:
        return _K0(params, state, rv, g, seat, known, mask, key, ctr)
    if policy_id == 1:
        return _K1(params, state, rv, g, seat, known, mask, key, ctr)
    if policy_id == 2:
        return _K2(params, state, rv, g, seat, known, mask, key, ctr)
    if policy_id == 3:
        return _K3(params, state, rv, g, seat, known, mask, key, ctr)
    if policy_id == 4:
        return _K4(params, state, rv, g, seat, known, mask, key, ctr)
    if policy_id == 5:
        return _K5(params, state, rv, g, seat, known, mask, key, ctr)
    if policy_id == 6:
        return _K6(params, state, rv, g, seat, known, mask, key, ctr)
    if policy_id == 7:
        return _K7(params, state, rv, g, seat, known, mask, key, ctr)
    return -1


@njit(_nrt=False, inline="always")
def _checked(known, a, state, rv, g):
    """``a`` if it is an action id and legal here (asked through the decision's cache), else -1."""
    if a < 0 or a >= N_ACTIONS or not is_legal(known, a, state, rv, g):
        return -1
    return a


@njit(_nrt=False, inline="always")
def seat_action(policy_id, params, state, rv, g, seat, known, mask, key, ctr):
    """What the compiled agent of ``seat`` plays in game ``g`` (-1: nothing legal was chosen).

    The closed loops' one way to ask an agent.  An action it returns has been checked legal in this
    very state, so callers apply it with ``core.apply_action`` instead of checking it again: the
    check goes through ``known`` (the seat's decision memory, forgotten here), which already
    holds the answers the agent asked for, so greedy's choice costs no second check."""
    forget_known(known)
    if policy_id == HOT_ID:
        a = _KH(params, state, rv, g, seat, known, mask, key, ctr)
    else:
        a = _act(policy_id, params, state, rv, g, seat, known, mask, key, ctr)
    return _checked(known, a, state, rv, g)


@njit
def choose_action(policy_id, params, state, rv, g, seat, mask, n_legal, key, ctr):
    """Action of compiled agent ``policy_id`` for ``seat`` in game ``g`` given its legal mask
    (``core.legal_mask``, ``n_legal`` set).  ``key`` is the seat's stream key and ``ctr`` (int64[1])
    its counter, advanced in place.  Returns -1 for an unknown id, an empty mask or a choice
    outside the mask."""
    if n_legal <= 0:
        return -1
    known = np.zeros(KNOWN_LEN, dtype=np.int64)
    known[KNOWN_GEN] = 1
    for a in range(N_ACTIONS):
        remember(known, a, mask[a])
    scratch = mask.copy()               # a kernel may fill its mask argument; the caller's stays
    a = _act(policy_id, params, state, rv, g, seat, known, scratch, key, ctr)
    if a < 0 or a >= N_ACTIONS or not mask[a]:
        return -1
    return a
