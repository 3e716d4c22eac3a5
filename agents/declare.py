"""How a compiled agent declares itself: one ``CompiledAgent`` per agent module, listed once in
``agents/registry.py``.  Dispatch (``agents/dispatch.py``), the parameter tables and checks
(``agents/base.py``), the named strategies, the tuner and ``docs/agents.md`` all read it, so adding
an agent is one new module and one registration line (``docs/recipes.md``).

A kernel has the one signature every compiled agent shares::

    kernel(params, state, rv, g, seat, known, mask, key, ctr) -> action id (-1: none)

``state`` is the engine's arrays (``engine.state.StateArrays``: a kernel binds the fields it reads)
and ``params`` the seat's parameter row, already holding every declared value (defaults are filled
when the row is built, so a kernel reads ``params[i]`` and 0 means 0); ``known`` is the seat's
decision memory (``memory`` int64 entries: the legality cache of ``agents.known`` first, then
whatever the agent keeps); ``mask`` is bool scratch of ``N_ACTIONS`` entries; ``key`` / ``ctr`` are
the seat's random stream (``kalooki_sim.core.rng``), the only randomness a kernel may use.  The caller
checks the returned action legal (through ``known``), so a kernel may return any action it likes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kalooki_sim.engine.layout import N_ACTIONS

from .known import KNOWN_GEN

__all__ = ["Param", "CompiledAgent", "MAX_AGENTS", "MIN_MEMORY", "param_index"]

# dispatch has this many slots (agents/dispatch.py): ids 0 .. MAX_AGENTS - 1
MAX_AGENTS = 8
# the legality cache every agent's memory starts with (``agents.known``)
MIN_MEMORY = KNOWN_GEN + 1
assert MIN_MEMORY == N_ACTIONS + 1


@dataclass(frozen=True)
class Param:
    """One tunable number of an agent: its row position is its place in ``CompiledAgent.params``.

    ``bounds`` is the range the tuner searches (``experiments/tune_heuristic.py``); a hand-set value
    may go past its top (``base.PARAM_LIMIT`` times it) but never below its bottom."""

    name: str
    default: float
    bounds: tuple[float, float]
    doc: str = ""

    def __post_init__(self):
        lo, hi = self.bounds
        if not (self.name.isidentifier() and math.isfinite(lo) and math.isfinite(hi) and lo <= self.default
                and lo <= hi):
            raise ValueError(f"parameter {self.name!r}: needs an identifier name and finite bounds lo <= hi "
                             f"with lo <= default, got bounds {self.bounds}, default {self.default}")


def param_index(params: tuple[Param, ...], name: str) -> int:
    """Row position of parameter ``name`` among ``params`` (kernels keep it as a module constant)."""
    for i, p in enumerate(params):
        if p.name == name:
            return i
    raise ValueError(f"no parameter {name!r} among {', '.join(p.name for p in params) or 'none'}")


@dataclass(frozen=True)
class CompiledAgent:
    """A compiled agent: what dispatch, the parameter tables and the docs need to know of it."""

    name: str
    id: int
    kernel: object                      # a kalooki_sim.core.jit.njit function of the signature above
    params: tuple[Param, ...] = ()
    memory: int = MIN_MEMORY            # length of ``known`` the kernel uses
    doc: str = ""
    # the closed loop inlines this agent's kernel (itself ``inline="always"``); at most one agent
    # is hot, every other one is called through one out-of-line dispatch (``agents/dispatch.py``)
    hot: bool = False
    # played from Python through the lockstep env (``runtime.policy_play``), one compiled call per
    # batch of decisions, and left out of the closed loop's dispatch: a kernel so large (the search,
    # which rolls whole hands out with another agent) that compiling it into every closed loop would
    # multiply every loop's cold compile.  Its strategies are played like learned ones.
    driven: bool = False

    def __post_init__(self):
        if not 0 <= self.id < MAX_AGENTS:
            raise ValueError(f"agent {self.name!r}: id {self.id} is not in 0..{MAX_AGENTS - 1} (dispatch's slots)")
        if self.hot and self.driven:
            raise ValueError(f"agent {self.name!r}: a driven agent is not in the loop, so it cannot be hot")
        if self.memory < MIN_MEMORY:
            raise ValueError(f"agent {self.name!r}: memory {self.memory} < {MIN_MEMORY} (the legality cache)")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise ValueError(f"agent {self.name!r}: parameter names repeat: {names}")

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    @property
    def bounds(self) -> tuple[tuple[float, float], ...]:
        return tuple(p.bounds for p in self.params)

    def defaults(self) -> np.ndarray:
        return np.array([p.default for p in self.params], dtype=np.float64)

    def index(self, name: str) -> int:
        try:
            return param_index(self.params, name)
        except ValueError as e:
            raise ValueError(f"agent {self.name!r}: {e}") from None
