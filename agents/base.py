"""Agent interfaces (DESIGN.md §6).

Two kinds of agents:

* **Python / torch policies** follow the :class:`Policy` protocol: ``act(obs, legal, rng)`` gets a
  batch of observations and legal masks and returns one action id per row.  They run in the
  lockstep environment (``env.py``); a torch policy masks illegal logits.
* **Compiled agents** run inside the closed loop (``kalooki_sim.runtime.rollout``).  Each declares itself
  once (``agents/declare.py``: name, id, kernel, parameters with default and bounds, memory) and is
  listed once in ``agents/registry.py``; the tables here (names, ids, parameter names, defaults,
  bounds) are read off those declarations.  A seat's parameters are a ``float64`` row, so they can
  be changed (tuned, swept) without recompiling.

Parameter rows are filled when they are built (``fill_params``, ``params_matrix``): a missing
entry (a row shorter than its agent's parameters) takes the parameter's default, every given value
is used as it is (0 means 0), and it must be finite and lie in the parameter's range.
``docs/agents.md`` lists every agent's parameters.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from .declare import CompiledAgent
from .registry import AGENTS

__all__ = [
    "Policy", "RANDOM", "GREEDY", "EXPERT", "EXTERNAL", "AGENTS", "POLICY_NAMES", "PARAM_NAMES", "PARAM_BOUNDS",
    "N_PARAMS", "policy_id", "policy_name", "agent", "default_params", "fill_params", "params_matrix",
    "check_params", "check_loop_agents", "DRIVEN", "seat_rows", "describe_agents",
]


@runtime_checkable
class Policy(Protocol):
    """A Python (numpy / torch) policy acting on a batch of decisions.

    ``obs`` is ``[B, ...]``, ``legal`` is ``bool[B, N_ACTIONS]``; the result is ``int64[B]`` action
    ids, each legal in its row.  ``rng`` is the only source of randomness the policy may use.
    """

    name: str

    def act(self, obs: np.ndarray, legal: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...


# ---- the compiled agents' tables, read off their declarations (agents/registry.py)
# a seat whose decisions come from outside the compiled loop (Python, torch, a person): the loop
# stops at its decisions (``kalooki_sim.runtime.loop``)
EXTERNAL = -1

_BY_ID: dict[int, CompiledAgent] = {a.id: a for a in AGENTS}
POLICY_NAMES = {**{a.id: a.name for a in AGENTS}, EXTERNAL: "external"}
_BY_NAME = {v: k for k, v in POLICY_NAMES.items()}
# per agent id: how many parameters it reads, their names in row order, the tuner's ranges
N_PARAMS = {**{a.id: len(a.params) for a in AGENTS}, EXTERNAL: 0}
PARAM_NAMES = {**{a.id: a.param_names for a in AGENTS}, EXTERNAL: ()}
PARAM_BOUNDS = {**{a.id: a.bounds for a in AGENTS}, EXTERNAL: ()}
_DEFAULTS = {**{a.id: a.defaults() for a in AGENTS}, EXTERNAL: np.zeros(0)}
# the ids of the agents that ship with the project, for code and tests that name them
RANDOM = _BY_NAME["random"]
GREEDY = _BY_NAME["greedy"]
EXPERT = _BY_NAME["expert"]


def policy_id(name: str | int) -> int:
    """Id of a compiled policy given by name (case-insensitive) or id.

    Raises ``ValueError`` naming the unknown agent and listing the known ones.
    """
    if isinstance(name, (int, np.integer)) and not isinstance(name, bool):
        if int(name) in POLICY_NAMES:
            return int(name)
        raise ValueError(f"unknown agent id {name!r}; known agents: "
                         + ", ".join(f"{v} ({k})" for k, v in sorted(POLICY_NAMES.items())))
    key = str(name).strip().lower()
    if key not in _BY_NAME:
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(sorted(_BY_NAME))}")
    return _BY_NAME[key]


# agents played from Python through the env (``CompiledAgent.driven``), never inside a closed loop
DRIVEN = np.array(sorted(a.id for a in AGENTS if a.driven), dtype=np.int64)


def check_loop_agents(ids, where: str) -> None:
    """Refuse a driven agent (the search) among the agent ids a closed loop would play: its
    dispatch slot is empty (``agents/dispatch.py``), so the seat would choose nothing."""
    bad = np.isin(np.asarray(ids, dtype=np.int64), DRIVEN)
    if bad.any():
        name = POLICY_NAMES[int(np.asarray(ids)[bad].flat[0])]
        raise ValueError(f"{where}: {name} is played from Python through the env, not inside the closed loop: "
                         f"seat its strategy by name in simulate/tournament (the CLI does), or use "
                         f"runtime.policy_play.play_policies with agents.search_policy.SearchPolicy")


def policy_name(pid: int) -> str:
    return POLICY_NAMES[policy_id(pid)]


def agent(name: str | int) -> CompiledAgent:
    """The declaration of a compiled agent (by name or id)."""
    pid = policy_id(name)
    if pid not in _BY_ID:
        raise ValueError(f"{POLICY_NAMES[pid]!r} is not a compiled agent")
    return _BY_ID[pid]


def default_params(pid: int | str) -> np.ndarray:
    """The declared default parameter row of a compiled agent."""
    return _DEFAULTS[policy_id(pid)].copy()


PARAM_LIMIT = 100.0


def _as_numbers(params, where: str) -> np.ndarray:
    """``params`` as finite ``float64`` numbers (a 0-d value as one entry), else ``ValueError``."""
    p = np.asarray(params)
    if p.dtype.kind not in "iuf" or p.dtype.kind == "b":
        raise ValueError(f"{where}: parameters must be numbers, got dtype {p.dtype}")
    p = p.astype(np.float64, copy=False)
    p = p.reshape(1) if p.ndim == 0 else p
    bad = ~np.isfinite(p)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{where}: parameter at {idx} is {p[idx]}: parameters must be finite numbers")
    return p


# per agent (row ``_ROW[id + 1]``): its parameter count, defaults and the range a value may take
# (from the bottom of its tuning range to PARAM_LIMIT times its top; unread columns take anything)
_WIDTH = max([1] + list(N_PARAMS.values()))
_ROW = np.full(max(POLICY_NAMES) + 2, -1, dtype=np.int64)
_NPAR = np.zeros(len(POLICY_NAMES), dtype=np.int64)
_DEF = np.zeros((len(POLICY_NAMES), _WIDTH))
_LO = np.full((len(POLICY_NAMES), _WIDTH), -np.inf)
_TOP = np.full((len(POLICY_NAMES), _WIDTH), np.inf)
for _i, _pid in enumerate(sorted(POLICY_NAMES)):
    _ROW[_pid + 1] = _i
    _NPAR[_i] = N_PARAMS[_pid]
    _DEF[_i, :N_PARAMS[_pid]] = _DEFAULTS[_pid]
    for _j, (_lo, _hi) in enumerate(PARAM_BOUNDS[_pid]):
        _LO[_i, _j], _TOP[_i, _j] = _lo, max(_hi, 1.0) * PARAM_LIMIT


def _rows_of(ids: np.ndarray, where: str) -> np.ndarray:
    """The table rows (``_ROW``) of agent ids, refusing unknown ones."""
    out = np.full(ids.shape, -1, dtype=np.int64)
    known = (ids >= -1) & (ids < _ROW.size - 1)
    out[known] = _ROW[ids[known] + 1]
    if (out < 0).any():
        raise ValueError(f"{where}: unknown agent id {int(ids[out < 0].flat[0])}")
    return out


def _check_rows(ids: np.ndarray, rows: np.ndarray, p: np.ndarray, where: str) -> None:
    need = int(_NPAR[rows].max()) if rows.size else 0
    if need > p.shape[-1]:
        pid = int(ids[_NPAR[rows] > p.shape[-1]].flat[0])
        raise ValueError(f"{where}: {POLICY_NAMES[pid]} reads {N_PARAMS[pid]} parameters, the rows hold "
                         f"{p.shape[-1]} (build them with agents.base.fill_params)")
    k = min(p.shape[-1], _WIDTH)
    v = p[..., :k]
    bad = (v < _LO[rows][..., :k]) | (v > _TOP[rows][..., :k])
    if bad.any():
        at = tuple(int(i) for i in np.argwhere(bad)[0])
        pid, j = int(ids[at[:-1]]), at[-1]
        lo, hi = PARAM_BOUNDS[pid][j]
        raise ValueError(f"{where}: {POLICY_NAMES[pid]} parameter {PARAM_NAMES[pid][j]} = {float(v[at])!r} is "
                         f"outside {lo}..{_TOP[rows[at[:-1]], j]} (tuning range {lo}..{hi})")


def check_params(seats, params, where: str = "params") -> None:
    """Refuse parameter rows the compiled agents cannot use: every value a finite number, each
    row as wide as its agent's parameters, each value in its declared range (from the bottom of
    ``bounds`` to ``PARAM_LIMIT`` times its top: the bounds are the tuner's search ranges, and
    hand-set rows go past them).  ``seats`` are agent ids broadcastable to ``params.shape[:-1]``.
    ``ValueError`` naming the seat and the parameter."""
    p = _as_numbers(params, where)
    ids = np.broadcast_to(np.asarray(seats, dtype=np.int64), p.shape[:-1])
    _check_rows(ids, _rows_of(ids, where), p, where)


def fill_params(seats, params=None, where: str = "params", width: int = 0) -> np.ndarray:
    """Complete parameter rows: ``float64[..., k]`` with ``k`` at least the widest agent's count,
    where a missing entry (a row shorter than its agent's parameters) takes the seat's agent's
    default (columns no agent reads: 0), every given value is kept, finite or refused,
    checked (``check_params``).  ``seats`` are agent ids of shape ``params.shape[:-1]`` (or
    broadcastable to it); ``params=None`` gives every seat its defaults; ``width`` widens the rows
    (a table where another agent may be swapped in).  Vectorised: a table of a million seats is
    filled in milliseconds."""
    ids = np.asarray(seats, dtype=np.int64)
    p = np.zeros(ids.shape + (0,)) if params is None else _as_numbers(params, where)
    shape = np.broadcast_shapes(ids.shape, p.shape[:-1])
    ids = np.broadcast_to(ids, shape)
    rows = _rows_of(ids, where)
    need = max(1, p.shape[-1], int(width), int(_NPAR[rows].max()) if rows.size else 0)
    out = np.zeros(shape + (need,))
    k = min(need, _WIDTH)
    out[..., :k] = _DEF[rows][..., :k]
    out[..., :p.shape[-1]] = p
    _check_rows(ids, rows, out, where)
    return out


def seat_rows(params, n_seats: int) -> np.ndarray:
    """``params`` as ``float64[n_seats, k]``: one row for every seat (``[k]``) or one per seat
    (``[n_seats, k]``), not yet filled (``fill_params`` does that)."""
    try:
        p = np.asarray(params, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"params must be numbers (one row per seat): {e}") from None
    if p.ndim == 1:
        p = np.tile(p, (n_seats, 1))
    if p.ndim != 2 or p.shape[0] != n_seats:
        raise ValueError(f"params must have one row per seat: got shape {p.shape} for {n_seats} seats")
    return p


def params_matrix(seat_policies, params=None) -> np.ndarray:
    """A ``float64[n_seats, k]`` parameter matrix for a lineup (names or ids): one row, or one row
    per seat, completed by ``fill_params``; ``None`` -> every seat's defaults."""
    ids = np.array([policy_id(x) for x in seat_policies], dtype=np.int64)
    return fill_params(ids, None if params is None else seat_rows(params, len(ids)))


def describe_agents() -> str:
    """The compiled agents and their parameters as Markdown (``docs/agents.md`` is this text)."""
    out = ["# Compiled agents", "",
           "Generated from the declarations in `agents/registry.py` by `agents.base.describe_agents()`",
           "(`python -m kalooki_sim.agents.base > docs/agents.md`); a test keeps it current.", ""]
    for a in sorted(AGENTS, key=lambda a: a.id):
        first = (a.doc or "").strip().split("\n\n")[0].replace("\n", " ")
        out += [f"## `{a.name}` (id {a.id})", "", first, "", f"Decision memory: {a.memory} int64 entries."
                + (" Inlined into the closed loop (the hot agent)." if a.hot else "")
                + (" Played from Python through the lockstep env (a driven agent), not in the closed loop."
                   if a.driven else ""), ""]
        if not a.params:
            out += ["No parameters.", ""]
            continue
        out += ["| # | parameter | default | tuning range | meaning |", "|---|---|---|---|---|"]
        out += [f"| {j} | `{p.name}` | {p.default:g} | {p.bounds[0]:g} .. {p.bounds[1]:g} | {p.doc} |"
                for j, p in enumerate(a.params)]
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(describe_agents(), end="")
