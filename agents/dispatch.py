"""Asking a seat's compiled policy for its action: ``seat_action`` (the closed loops' one way) and
``choose_action`` (given a legal mask), dispatching on the policy id of ``agents/base.py``
(``RANDOM``, ``GREEDY``, ``EXPERT``).

Randomness comes only from the counter-based generator of ``kalooki_sim.rng``: the caller passes
the seat's stream key (``rng_key(seed, game_id, core.STREAM_POLICY_BASE + seat)``) and a one-element
``int64`` counter array that is advanced in place, so a game's decisions depend on (seed, game id)
only — never on threads or batches.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.engine.core import legal_mask
from kalooki_sim.engine.layout import N_ACTIONS
from kalooki_sim.jit import njit

from .base import EXPERT, GREEDY, RANDOM
from .expert import KNOWN_LEN, expert_action
from .greedy import greedy_action
from .known import KNOWN_GEN, forget_known, is_legal
from .random_agent import random_action


@njit
def choose_action(policy_id, params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan,
                  plan_n, hscore, hwin, rv, g, seat, mask, n_legal, key, ctr):
    """Action of compiled policy ``policy_id`` (``base.RANDOM``/``base.GREEDY``) for ``seat`` in
    game ``g``.  ``mask``/``n_legal`` come from ``core.legal_mask``; ``key`` is the seat's policy
    stream key and ``ctr`` (int64[1]) its counter, advanced in place.  Returns -1 only for an
    unknown policy id or an empty mask."""
    if n_legal <= 0:
        return -1
    if policy_id == RANDOM:
        return random_action(mask, n_legal, key, ctr)
    if policy_id == GREEDY or policy_id == EXPERT:
        known = np.zeros(KNOWN_LEN, dtype=np.int64)
        known[KNOWN_GEN] = 1
        for a in range(N_ACTIONS):
            known[a] = 3 if mask[a] else 2
        if policy_id == EXPERT:
            return expert_action(params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan,
                                 plan_n, hscore, hwin, rv, g, seat, known, key, ctr)
        return greedy_action(params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan,
                             plan_n, hscore, hwin, rv, g, seat, known, key, ctr)
    return -1


@njit(_nrt=False, inline="always")
def _checked(known, a, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
             rv, g):
    """``a`` if it is an action id and legal here (asked through the decision's cache), else -1."""
    if a < 0 or a >= N_ACTIONS or not is_legal(known, a, gs, ps, hands, stock, disc, disc_by, minfo, mcards,
                                               mas, plan, plan_n, hscore, hwin, rv, g):
        return -1
    return a


@njit(_nrt=False, inline="always")
def seat_action(policy_id, params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                hscore, hwin, rv, g, seat, known, mask, key, ctr):
    """What the compiled policy of ``seat`` plays in game ``g`` (-1: nothing legal was chosen).

    The closed loops' one way to ask a policy.  An action it returns has been checked legal in this
    very state, so callers apply it with ``core.apply_action`` instead of checking it again: greedy
    and the expert check only the actions they consider (``known`` caches the answers, and the
    choice is among them or checked last); other policies get the full legal mask (written into
    ``mask``) and a choice outside it counts as none."""
    if policy_id == GREEDY:             # the hot path, on its own: the expert's call stays out of it
        forget_known(known)
        a = greedy_action(params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                          hscore, hwin, rv, g, seat, known, key, ctr)
        return _checked(known, a, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                        hscore, hwin, rv, g)
    if policy_id == EXPERT:
        forget_known(known)
        a = expert_action(params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                          hscore, hwin, rv, g, seat, known, key, ctr)
        return _checked(known, a, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                        hscore, hwin, rv, g)
    k = legal_mask(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                   rv, g, mask)
    # random_action, not choose_action: its own inlined greedy would be compiled with every loop
    if policy_id != RANDOM or k <= 0:
        return -1
    a = random_action(mask, k, key, ctr)
    if a >= 0 and a < N_ACTIONS and not mask[a]:
        return -1
    return a
