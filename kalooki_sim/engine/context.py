"""The turn loop's context row of a game (``ctx[b, CX_*]``, int64[B, NCX]): the loop's bookkeeping
(output row, game id, seed, status, error, step budget, flags) and the public history of the deal
that the engine's state does not keep, which the observation encoder reads.

It sits with the engine, not the loop (``kalooki_sim.runtime.loop``), so the agents' observation
can read it without importing the runtime that plays games.
"""

from __future__ import annotations

from .layout import P_MAX

__all__ = [
    "CX_OUT", "CX_GAME", "CX_SEED", "CX_STATUS", "CX_ERR", "CX_STEPS", "CX_MAX_STEPS", "CX_CHECK", "CX_PAUSE",
    "CX_RESH0", "CX_VOIDS0", "CX_LAST", "CX_LAID", "CX_CALLS", "CX_TAKEN", "CX_DENIED", "NCX",
]

# ctx[b, CX_*]; CX_LAID + seat: turn the engine seat laid down (-1 not yet); CX_TAKEN + seat: the card
# types (bit t: type t) the engine seat took from the discard pile in this deal, public knowledge the
# observation encoder reads (``_pile_take``); CX_CALLS + seat: calls it was allowed (denied ones too
# when the rules count them) in this hand; CX_DENIED + seat: its calls that were denied (a call made
# is one allowed or denied)
(CX_OUT, CX_GAME, CX_SEED, CX_STATUS, CX_ERR, CX_STEPS, CX_MAX_STEPS, CX_CHECK, CX_PAUSE, CX_RESH0,
 CX_VOIDS0, CX_LAST) = range(12)
CX_LAID = 12
CX_CALLS = CX_LAID + P_MAX
CX_TAKEN = CX_CALLS + P_MAX
CX_DENIED = CX_TAKEN + P_MAX
NCX = CX_DENIED + P_MAX
