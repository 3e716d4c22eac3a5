"""Named strategies: a compiled agent and a parameter row, under a name people can type.

A strategy is data (``configs/agents/<name>.toml``, installed as ``kalooki_sim.strategy_configs``)::

    agent = "greedy"                      # the base compiled agent (agents/base.py)
    description = "greedy that calls only at usefulness >= 2"
    [params]                              # by name (agents.base.PARAM_NAMES); the rest keep defaults
    call_threshold = 2.0

so a tuned or hand-written setting is a file, never a recompile.  The base agents themselves
(``random``, ``greedy``) are strategies with their default parameters.  Every command that takes
``--agents`` resolves names here; an unknown name is an error that lists the known ones.  A path
to a TOML file works as a name too.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from .agents.base import EXTERNAL, N_PARAMS, PARAM_NAMES, POLICY_NAMES, default_params, policy_id

__all__ = ["Strategy", "StrategyError", "load_strategy", "known_strategies", "lineup"]


class StrategyError(ValueError):
    """A strategy name or file that cannot be used (the message says why)."""


@dataclass(frozen=True)
class Strategy:
    name: str
    agent: str                 # base compiled agent
    agent_id: int
    params: tuple[float, ...]  # the full parameter row of the base agent
    description: str = ""

    def row(self, k: int) -> np.ndarray:
        out = np.zeros(max(k, 1), dtype=np.float64)
        out[:len(self.params)] = self.params
        return out


def _files() -> dict[str, object]:
    root = resources.files("kalooki_sim.strategy_configs")
    return {p.name[:-5]: p for p in root.iterdir() if p.name.endswith(".toml")}


def known_strategies() -> list[str]:
    """Base agents and named strategies, sorted."""
    base = [v for k, v in POLICY_NAMES.items() if k != EXTERNAL]
    return sorted(set(base) | set(_files()))


def _from_toml(name: str, text: str, where: str) -> Strategy:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise StrategyError(f"{where}: not valid TOML ({e})") from None
    unknown = set(doc) - {"agent", "description", "params"}
    if unknown:
        raise StrategyError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (agent, description, params)")
    if "agent" not in doc:
        raise StrategyError(f"{where}: needs 'agent = \"<base agent>\"' (one of "
                            f"{', '.join(v for k, v in sorted(POLICY_NAMES.items()) if k != EXTERNAL)})")
    try:
        pid = policy_id(doc["agent"])
    except ValueError as e:
        raise StrategyError(f"{where}: {e}") from None
    names = PARAM_NAMES[pid]
    row = [float(x) for x in default_params(pid)]
    given = doc.get("params", {})
    if not isinstance(given, dict):
        raise StrategyError(f"{where}: [params] must be a table of name = number")
    for key, value in given.items():
        if key not in names:
            raise StrategyError(f"{where}: {doc['agent']} has no parameter {key!r} "
                                f"(its parameters: {', '.join(names) or 'none'})")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise StrategyError(f"{where}: parameter {key} must be a number, got {value!r}")
        row[names.index(key)] = float(value)
    return Strategy(name, POLICY_NAMES[pid], pid, tuple(row), str(doc.get("description", "")))


def load_strategy(name: str | Path) -> Strategy:
    """The strategy called ``name`` (a base agent, a file of ``configs/agents``, or a TOML path)."""
    key = str(name).strip()
    path = Path(key)
    if key.endswith(".toml") and path.is_file():
        return _from_toml(path.stem, path.read_text(), str(path))
    low = key.lower()
    files = _files()
    if low in files:
        return _from_toml(low, files[low].read_text(), f"configs/agents/{low}.toml")
    try:
        pid = policy_id(low)
    except ValueError:
        pid = None
    if pid is None or pid == EXTERNAL:
        raise StrategyError(f"unknown agent {key!r}; known agents: {', '.join(known_strategies())}")
    return Strategy(POLICY_NAMES[pid], POLICY_NAMES[pid], pid, tuple(float(x) for x in default_params(pid)),
                    "the base agent with its default parameters")


def lineup(names) -> tuple[list[Strategy], np.ndarray, np.ndarray]:
    """Strategies of ``names`` with their agent ids ``int64[n]`` and parameter rows ``float64[n, k]``."""
    strats = [load_strategy(n) for n in names]
    k = max([1] + [N_PARAMS[s.agent_id] for s in strats])
    ids = np.array([s.agent_id for s in strats], dtype=np.int64)
    params = np.stack([s.row(k) for s in strats]) if strats else np.zeros((0, k))
    return strats, ids, params
