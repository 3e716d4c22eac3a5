"""The batched engine state: a plain container of numpy arrays (structure of arrays).

Kernels never see this class: ``State.arrays()`` hands them its arrays as one ``StateArrays``
(a named tuple, which numba types field by field and caches like any argument), so a kernel takes
``state, rv, g, ...`` and binds the fields it reads (``gs, hands = state.gs, state.hands``): two
arrays cannot be passed in each other's place, and a new field is added here, not at every call.

Named views (``laid_down``, ``calls_used``, ``phase``, ...) are numpy views into the packed
``gs``/``ps`` columns, so reading and writing them from Python is cheap and always consistent.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from . import layout as L

class StateArrays(NamedTuple):
    """The kernels' view of a ``State``: the same fields, in the same order (checked below)."""

    gs: np.ndarray
    ps: np.ndarray
    hands: np.ndarray
    stock: np.ndarray
    disc: np.ndarray
    disc_by: np.ndarray
    minfo: np.ndarray
    mcards: np.ndarray
    mas: np.ndarray
    plan: np.ndarray
    plan_n: np.ndarray
    hscore: np.ndarray
    hwin: np.ndarray
    work: np.ndarray
    shown: np.ndarray


ARRAY_FIELDS = StateArrays._fields


@dataclass
class State:
    """Arrays of ``B`` games (layout: ``engine.layout`` module docstring)."""

    gs: np.ndarray
    ps: np.ndarray
    hands: np.ndarray
    stock: np.ndarray
    disc: np.ndarray
    disc_by: np.ndarray
    minfo: np.ndarray
    mcards: np.ndarray
    mas: np.ndarray
    plan: np.ndarray
    plan_n: np.ndarray
    hscore: np.ndarray
    hwin: np.ndarray
    work: np.ndarray
    shown: np.ndarray

    @classmethod
    def empty(cls, batch: int) -> "State":
        B = int(batch)
        return cls(
            gs=np.zeros((B, L.NG), dtype=np.int64),
            ps=np.zeros((B, L.P_MAX, L.NPS), dtype=np.int64),
            hands=np.zeros((B, L.P_MAX, L.N_TYPES), dtype=np.int8),
            stock=np.full((B, L.DECK_MAX), -1, dtype=np.int8),
            disc=np.full((B, L.DECK_MAX), -1, dtype=np.int8),
            disc_by=np.full((B, L.DECK_MAX), -1, dtype=np.int8),
            minfo=np.zeros((B, L.M_MAX, L.NMI), dtype=np.int64),
            mcards=np.full((B, L.M_MAX, L.L_MAX), -1, dtype=np.int8),
            mas=np.full((B, L.M_MAX, L.L_MAX), -1, dtype=np.int8),
            plan=np.zeros((B, L.PLAN_MELDS, L.PLAN_REC), dtype=np.int64),
            plan_n=np.full((B, 2), -1, dtype=np.int64),
            hscore=np.zeros((B, L.H_MAX, L.P_MAX), dtype=np.int64),
            hwin=np.full((B, L.H_MAX), -1, dtype=np.int64),
            work=np.zeros((B, L.W_LEN), dtype=np.int64),
            shown=np.zeros((B, L.P_MAX, L.N_TYPES), dtype=np.int8),
        )

    def arrays(self) -> StateArrays:
        """The kernels' ``state`` argument."""
        return StateArrays(*(getattr(self, f) for f in ARRAY_FIELDS))

    def copy(self) -> "State":
        return State(*(a.copy() for a in self.arrays()))

    def take(self, rows) -> "State":
        """A new State holding copies of the given game rows."""
        return State(*(a[rows].copy() for a in self.arrays()))

    @property
    def batch(self) -> int:
        return self.gs.shape[0]

    # ---- named views of the packed columns
    phase = property(lambda s: s.gs[:, L.G_PHASE])
    n_players = property(lambda s: s.gs[:, L.G_NP])
    current_player = property(lambda s: s.gs[:, L.G_ACTIVE])
    to_act = property(lambda s: s.gs[:, L.G_TO_ACT])
    dealer = property(lambda s: s.gs[:, L.G_DEALER])
    hand_no = property(lambda s: s.gs[:, L.G_HAND_NO])
    round_index = property(lambda s: s.gs[:, L.G_ROUND])
    turn = property(lambda s: s.gs[:, L.G_TURN])
    stock_n = property(lambda s: s.gs[:, L.G_STOCK_N])
    discard_n = property(lambda s: s.gs[:, L.G_DISC_N])
    n_melds = property(lambda s: s.gs[:, L.G_N_MELDS])
    terminal = property(lambda s: s.gs[:, L.G_TERMINAL])
    laid_down = property(lambda s: s.ps[:, :, L.PS_LAID])
    calls_used = property(lambda s: s.ps[:, :, L.PS_CALLS])
    totals = property(lambda s: s.ps[:, :, L.PS_TOTAL])


# the readable dataclass and the kernels' tuple are two views of one layout: they cannot drift apart
assert tuple(f.name for f in fields(State)) == ARRAY_FIELDS, "State and StateArrays list different arrays"
