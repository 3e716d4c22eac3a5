"""Compiled (numba) policies for the closed loop (``kalooki_sim.runtime.rollout``): the names drivers and
tests import, re-exported from the modules that hold them.

* ``dispatch`` — ``seat_action`` (the closed loops' one way to ask a seat's policy) and
  ``choose_action`` (given a legal mask), by the agent ids of ``agents/registry.py``, and the size
  of a seat's decision memory ``KNOWN_LEN`` (the most any registered agent declares).
* ``random_agent`` — ``random_action``: uniform over the legal actions.
* ``greedy`` — ``greedy_action``, the heuristic (its docstring says it in words).
* ``expert`` — ``expert_action``, greedy plus counting, defence, dumping, call and lay-down timing
  (its docstring).
* ``shedder`` — ``shedder_action``, the compiled-agent recipe's example (docs/recipes.md).
* ``measures`` — what the agents and the observation measure of a hand and the table:
  ``contract_shortfall``, ``card_usefulness``, ``live_potential``, ``feed_share``, ...
* ``discard`` — greedy's discard pick.
* ``manipulation`` — greedy's table manipulation (M1-M5); ``known`` — the legality cache.
"""

from __future__ import annotations

from .dispatch import KNOWN_LEN, choose_action, seat_action
from .expert import expert_action
from .greedy import greedy_action
from .known import forget_known
from .measures import card_usefulness, contract_shortfall
from .random_agent import random_action

__all__ = ["seat_action", "choose_action", "random_action", "greedy_action", "expert_action", "card_usefulness",
           "contract_shortfall", "KNOWN_LEN", "forget_known"]
