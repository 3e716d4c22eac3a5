"""Compiled Kalooki engine (Caribbean, docs/rules.md §2.1, and the Kalooki 40 family §2.2-§2.6 with
table manipulation, the American upcard swap and A43 openings) and its readable Python layer.

* ``core`` — numba kernels of one hand on plain arrays: ``start_game``, ``legal_mask``,
  ``check_action``, ``step``, ``check_invariants``, re-exported from the modules that hold them by
  job (``flow``, ``plans``, ``fit``, ``manipulation``, ``legality``, ``apply``, ``invariants``;
  ``core``'s docstring maps them).
* ``match_flow`` — hand after hand on the score sheet, every match mode; ``match_winners``.
* ``playout`` — ``random_playout``: whole matches of random legal actions (tests, ``batch``).
* ``layout`` — array layout, phases, action ids, error codes.
* ``state.State`` — the batched arrays; ``State.arrays()`` is the kernels' argument prefix.
* ``match`` — the score sheet's kernels (``match_sheet``: the same for people, in Python).

``Game``, the readable game you can print and drive, is the runtime's (``kalooki_sim.runtime.game``):
it plays through the turn loop.
"""

from .errors import IllegalActionError
from .state import State

__all__ = ["IllegalActionError", "State"]
