"""Compiled Kalooki engine: deal, legal mask, step, scoring (docs/rules.md §2.1-§2.6, §4, §5).

One kernel set plays Caribbean Kalooki (contracts, calls) and the Kalooki 40 family (points
openings, restricted discard draws, lay-off limits, table manipulation M1-M6, kalooki, the
American upcard swap, A43 openings completed by lay-offs, V1), all read from the rules vector
(decisions in docs/rules-decisions.md D9-D26).

Every kernel works on one game ``g`` of a batch held as plain arrays (layout in ``layout.py``), so
a closed-loop simulator can run ``prange`` over games and call ``legal_mask``/``step`` per game
without any Python objects.  All kernels share the argument prefix

    state, rv, g

(``state.State.arrays()`` returns the first 13 in this order; ``rv`` is ``Rules.to_vector()``).

This module is the engine's public face: it re-exports the kernels and constants that agents,
drivers and tests use, so they need not know where each lives.  The kernels sit in modules by
job, each importing only those above it in this list:

* ``common`` — seats in the direction of play, hand counts, ``hand_penalty_of``.
* ``fit`` — where a card fits on a table meld and laying it off (tacks, lay-off limits),
  ``meld_value_of``.
* ``plans`` — lay-down plans (``compute_plans``), the search's certificate and memo
  (``hand_plan_places``).
* ``flow`` — turn structure (its docstring walks through a turn), calls, the stock, dealing, the
  end of a hand; ``start_game``, ``reset_game``, ``deal_hand``, ``start_games``, ``resume``.
* ``manipulation`` — table manipulation M1-M5 and the joker swaps.
* ``legality`` — ``check_flow_action``, ``check_action``, ``legal_mask``.
* ``apply`` — ``step`` and ``apply_action``.
* ``invariants`` — ``check_invariants``, ``mask_consistent``, ``INV_*``.

The engine plays one hand and stops.  Above it, not re-exported here: ``match_flow`` (the score
sheet, the next deal, the match winners: every match mode) and ``playout`` (random playouts of
whole matches, for tests); every game with agents is played by ``kalooki_sim.runtime.loop``.
"""

from __future__ import annotations

from .apply import apply_action, step
from .common import hand_penalty_of
from .fit import meld_value_of, set_joker_meaning
from .flow import (
    STREAM_DEALER, STREAM_POLICY_BASE, STREAM_STRIDE, deal_hand, may_call, reset_game, resume, start_game, start_games,
)
from .invariants import (
    INV_CALLS, INV_CONSERVATION, INV_DECK_EXCEEDED, INV_MASK_EMPTY, INV_MELD_ILLEGAL, INV_MELD_LAYOUT,
    INV_MELD_OF_UNLAID, INV_NEGATIVE, INV_OK, INV_SHOWN, INV_TURN_CAP, check_invariants, mask_consistent,
)
from .legality import NEEDS_TABLE, check_action, check_flow_action, draw_mode, legal_mask
from .plans import CERT_NO_PLAN, compute_plans, could_join_new_meld, hand_plan_places

__all__ = [
    "apply_action", "step", "hand_penalty_of", "meld_value_of", "set_joker_meaning",
    "STREAM_DEALER", "STREAM_POLICY_BASE", "STREAM_STRIDE", "deal_hand", "may_call", "reset_game",
    "resume", "start_game", "start_games",
    "INV_CALLS", "INV_CONSERVATION", "INV_DECK_EXCEEDED", "INV_MASK_EMPTY", "INV_MELD_ILLEGAL",
    "INV_MELD_LAYOUT", "INV_MELD_OF_UNLAID", "INV_NEGATIVE", "INV_OK", "INV_SHOWN", "INV_TURN_CAP",
    "check_invariants", "mask_consistent",
    "NEEDS_TABLE", "check_action", "check_flow_action", "draw_mode", "legal_mask",
    "CERT_NO_PLAN", "compute_plans", "could_join_new_meld", "hand_plan_places",
]
