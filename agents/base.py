"""Agent interfaces (DESIGN.md §6).

Two kinds of agents:

* **Python / torch policies** follow the :class:`Policy` protocol: ``act(obs, legal, rng)`` gets a
  batch of observations and legal masks and returns one action id per row.  They run in the
  lockstep environment (``env.py``); a torch policy masks illegal logits.
* **Compiled heuristics** run inside the closed loop (``kalooki_sim.rollout``).  They are
  registered here by an integer id and take a ``float64`` parameter row, so that parameters can be
  changed (tuned, swept) without recompiling.  The compiled code lives in ``agents/`` and is
  re-exported by ``agents/compiled.py`` (``dispatch.choose_action`` dispatches on the id).

Parameters of the compiled policies (a row of ``params[seat]``; missing entries and values
``<= 0`` mean "default", so an all-zero row is always the default agent):

``greedy``
    0. ``epsilon`` — probability of a uniformly random legal action instead of the greedy one
       (default 0).
    1. ``call_threshold`` — minimum usefulness of the top discard to call it (default 1.0).
    2. ``draw_threshold`` — minimum usefulness of the top discard to draw it / deny a call for it
       (default 1.0).
    3. ``gap_weight`` — usefulness of a same-suit card two ranks away (default 0.5); a same-rank
       card or a same-suit card one rank away counts 1.

``expert``
    greedy's four, then the ideas ``agents/expert.py`` documents, each off at 0 (so the all-zero
    row plays greedy's games): 4. ``count_weight`` (card counting), 5. ``defense`` (do not feed),
    6. ``dump_weight`` (penalty dumping), 7. ``threat_cards`` and 8. ``late_turns`` (when the hand
    looks near its end), 9. ``call_max_shortfall`` (call only near the contract), 10.
    ``hold_turns`` (hold a lay-down to go out in one turn), 11. ``call_use`` and 12. ``draw_use``
    (call / draw a useful card that does not bring the contract closer), 13. ``sf_weight`` (weigh
    the contract shortfall in the discard instead of putting it first), 14. ``call_budget``
    (restrict calls only while they are scarce for the hands left of the match).  The named strategies in
    ``configs/agents/`` are settings of it.

``random``
    no parameters (uniform over the legal actions).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

__all__ = [
    "Policy", "RANDOM", "GREEDY", "EXPERT", "EXTERNAL", "POLICY_NAMES", "PARAM_NAMES", "PARAM_BOUNDS", "N_PARAMS", "policy_id", "policy_name",
    "default_params", "params_matrix", "check_params",
]


@runtime_checkable
class Policy(Protocol):
    """A Python (numpy / torch) policy acting on a batch of decisions.

    ``obs`` is ``[B, ...]``, ``legal`` is ``bool[B, N_ACTIONS]``; the result is ``int64[B]`` action
    ids, each legal in its row.  ``rng`` is the only source of randomness the policy may use.
    """

    name: str

    def act(self, obs: np.ndarray, legal: np.ndarray, rng: np.random.Generator) -> np.ndarray: ...


# ---- registry of compiled policies (ids are compile-time constants of agents/dispatch.py)
RANDOM = 0
GREEDY = 1
EXPERT = 2
# a seat whose decisions come from outside the compiled loop (Python, torch, a person): the loop
# stops at its decisions (``kalooki_sim.loop``)
EXTERNAL = -1

POLICY_NAMES = {RANDOM: "random", GREEDY: "greedy", EXPERT: "expert", EXTERNAL: "external"}
_BY_NAME = {v: k for k, v in POLICY_NAMES.items()}

# length of the parameter row each compiled policy reads
_GREEDY_NAMES = ("epsilon", "call_threshold", "draw_threshold", "gap_weight")
_GREEDY_DEFAULTS = (0.0, 1.0, 1.0, 0.5)
_GREEDY_BOUNDS = ((0.0, 0.5), (0.0, 4.0), (0.0, 4.0), (0.0, 1.0))
N_PARAMS = {RANDOM: 0, GREEDY: 4, EXPERT: 15, EXTERNAL: 0}
_DEFAULTS = {RANDOM: (), GREEDY: _GREEDY_DEFAULTS, EXPERT: _GREEDY_DEFAULTS + (0.0,) * 11, EXTERNAL: ()}
# the names of those parameters, in row order (named strategies set them by name)
PARAM_NAMES = {RANDOM: (), GREEDY: _GREEDY_NAMES,
               EXPERT: _GREEDY_NAMES + ("count_weight", "defense", "dump_weight", "threat_cards", "late_turns",
                                        "call_max_shortfall", "hold_turns", "call_use", "draw_use", "sf_weight",
                                        "call_budget"),
               EXTERNAL: ()}
# the range in which tuning searches each of them (experiments/tune_heuristic.py)
PARAM_BOUNDS = {RANDOM: (), GREEDY: _GREEDY_BOUNDS,
                EXPERT: _GREEDY_BOUNDS + ((0.0, 4.0), (0.0, 4.0), (0.0, 4.0), (0.0, 12.0), (0.0, 20.0),
                                          (0.0, 6.0), (0.0, 10.0), (0.0, 4.0), (0.0, 4.0), (0.0, 20.0),
                                          (0.0, 3.0)),
                EXTERNAL: ()}


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


def policy_name(pid: int) -> str:
    return POLICY_NAMES[policy_id(pid)]


def default_params(pid: int | str) -> np.ndarray:
    """The documented default parameter row of a compiled policy (for display; zeros also work)."""
    return np.array(_DEFAULTS[policy_id(pid)], dtype=np.float64)


PARAM_LIMIT = 100.0


def check_params(seats, params, where: str = "params") -> None:
    """Refuse parameter rows the compiled agents cannot use: every value must be a finite number,
    and each parameter a policy reads must lie in its declared range ``PARAM_BOUNDS`` (a value
    ``<= 0`` is also accepted: it means the default).  ``seats`` are policy ids broadcastable to
    ``params.shape[:-1]``.  ``ValueError`` naming the seat and the parameter."""
    p = np.asarray(params)
    if p.dtype.kind not in "iuf" or p.dtype.kind == "b":
        raise ValueError(f"{where}: parameters must be numbers, got dtype {p.dtype}")
    p = p.astype(np.float64, copy=False)
    if p.ndim == 0:
        p = p.reshape(1)
    bad = ~np.isfinite(p)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{where}: parameter at {idx} is {p[idx]}: parameters must be finite numbers")
    ids = np.broadcast_to(np.asarray(seats, dtype=np.int64), p.shape[:-1])
    for pid in np.unique(ids):
        pid = int(pid)
        bounds = PARAM_BOUNDS.get(pid)
        if bounds is None:
            raise ValueError(f"{where}: unknown agent id {pid}")
        rows = p[ids == pid]
        for j, (lo, hi) in enumerate(bounds[:p.shape[-1]]):
            col = rows[:, j]
            # PARAM_BOUNDS are the tuner's search ranges; hand-set rows go past them (tests use a
            # gap_weight of 3), so the hard limit is PARAM_LIMIT times their width
            top = max(hi, 1.0) * PARAM_LIMIT
            out = (col > 0) & ((col < lo) | (col > top))
            if out.any():
                raise ValueError(f"{where}: {POLICY_NAMES[pid]} parameter {PARAM_NAMES[pid][j]} = {col[out][0]!r} is "
                                 f"outside {lo}..{top} (tuning range {lo}..{hi}; <= 0 means the default)")


def params_matrix(seat_policies, params=None) -> np.ndarray:
    """A ``float64[n_seats, k]`` parameter matrix (k >= 1); ``None`` -> all defaults (zeros)."""
    n = len(seat_policies)
    if params is None:
        return np.zeros((n, max(1, max(N_PARAMS[policy_id(p)] for p in seat_policies))), dtype=np.float64)
    try:
        p = np.asarray(params, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"params must be numbers (one row per seat): {e}") from None
    if p.ndim == 1:
        p = np.tile(p, (n, 1))
    if p.ndim != 2 or p.shape[0] != n:
        raise ValueError(f"params must have one row per seat: got shape {p.shape} for {n} seats")
    if p.shape[1] == 0:
        p = np.zeros((n, 1), dtype=np.float64)
    check_params([policy_id(x) for x in seat_policies], p)
    return np.ascontiguousarray(p)
