"""Named strategies: a compiled agent and a parameter row, under a name people can type.

A strategy is data (``configs/agents/<name>.toml``, installed as ``kalooki_sim.strategy_configs``)::

    agent = "greedy"                      # the base compiled agent (agents/base.py)
    description = "greedy that calls only at usefulness >= 2"
    [params]                              # by name (agents.base.PARAM_NAMES); the rest keep defaults
    call_threshold = 2.0

so a tuned or hand-written setting is a file, never a recompile.  ``base = "<strategy>"`` starts
the row from another strategy's values of the parameters both agents have (``search-caribbean``
searches with ``sharp-caribbean``'s settings as its base strategy), ``[params]`` then overrides.
The base agents themselves (``random``, ``greedy``) are strategies with their default parameters.  Every command that takes
``--agents`` resolves names here; an unknown name is an error that lists the known ones.  A path
to a TOML file works as a name too.

**A checkpoint as an agent.**  A strategy file may name a trained network instead of a compiled
agent::

    checkpoint = "../../runs/selfplay/policy.pt"   # relative to this file's directory (or absolute)
    description = "self-play policy, 40M decisions"

and a bare path ending in ``.pt`` works as a name as well.  Such a *learned* strategy has
``checkpoint`` set (an absolute path) and agent id ``EXTERNAL``; ``learned_policy(strategy, rules)``
loads it (once per file and rules) as ``LearnedPolicy(net, greedy=True)``: deterministic argmax
play, checked against the command's rules (``CheckpointMismatch``).  The commands play learned
seats through ``policy_play.play_policies`` and compiled-only lineups on the compiled loop as
before; torch is imported only when a learned strategy is loaded (the ``learn`` extra).

**Any Python policy.**  ``package.module:factory`` names a callable that returns an object with
the ``Policy`` protocol (``act(obs, legal, rng) -> actions``, ``agents.base.Policy``; a policy
object itself works too); ``factory(rules)`` when it takes an argument, else ``factory()``.  Such a
strategy plays like a checkpoint (an external seat, asked from Python), so every command that
takes ``--agents`` (and ``play --opponents``) seats it.  The module is imported when the name is
resolved, so a missing module or name fails before any work, naming it.
"""

from __future__ import annotations

import importlib
import inspect
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from kalooki_sim.agents.base import (
    EXTERNAL, N_PARAMS, PARAM_NAMES, POLICY_NAMES, agent, check_params, default_params, policy_id,
)

__all__ = ["Strategy", "StrategyError", "load_strategy", "known_strategies", "lineup", "learned_policy",
           "learned_policies", "is_learned", "checkpoint_digests"]

LEARNED = "learned"          # the ``agent`` shown for a strategy that is a checkpoint
PYTHON = "python"            # ... and for a Python policy (package.module:factory)
_FACTORY = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*$")


class StrategyError(ValueError):
    """A strategy name or file that cannot be used (the message says why)."""


@dataclass(frozen=True)
class Strategy:
    name: str
    agent: str                 # base compiled agent
    agent_id: int
    params: tuple[float, ...]  # the full parameter row of the base agent
    description: str = ""
    checkpoint: str | None = None   # a learned strategy: the checkpoint file (absolute path)
    factory: str | None = None      # a Python policy: "package.module:factory"

    @property
    def learned(self) -> bool:
        """Played from Python (a checkpoint, a Python policy, or a driven compiled agent: the
        search, ``agents/declare.py``), not inside the closed loop."""
        return self.checkpoint is not None or self.factory is not None or self.driven

    @property
    def driven(self) -> bool:
        """A compiled agent played from Python through the env (``agents.search_policy``)."""
        return self.agent_id != EXTERNAL and agent(self.agent_id).driven

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


def _from_checkpoint(name: str, path: Path, description: str, where: str | None = None) -> Strategy:
    path = path.expanduser().absolute()
    if not path.is_file():
        what = f"{where}: checkpoint" if where else "checkpoint"
        raise StrategyError(f"{what} {path}: " + ("not a file" if path.exists() else "no such file"))
    return Strategy(name, LEARNED, EXTERNAL, (), description or f"learned policy {path.name}", str(path))


def _from_toml(name: str, text: str, where: str, base: Path | None = None) -> Strategy:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise StrategyError(f"{where}: not valid TOML ({e})") from None
    if "checkpoint" in doc:
        unknown = set(doc) - {"checkpoint", "description"}
        if unknown:
            raise StrategyError(f"{where}: a checkpoint strategy takes only checkpoint and description, not "
                                f"{', '.join(sorted(unknown))}")
        if not isinstance(doc["checkpoint"], str) or not doc["checkpoint"].strip():
            raise StrategyError(f"{where}: checkpoint must be a path (a string)")
        path = Path(doc["checkpoint"]).expanduser()
        if not path.is_absolute():
            path = (base or Path.cwd()) / path
        return _from_checkpoint(name, path, str(doc.get("description", "")), where)
    unknown = set(doc) - {"agent", "description", "params", "base"}
    if unknown:
        raise StrategyError(f"{where}: unknown key(s) {', '.join(sorted(unknown))} (agent, description, params, "
                            f"base; or checkpoint, description)")
    if "agent" not in doc:
        raise StrategyError(f"{where}: needs 'agent = \"<base agent>\"' (one of "
                            f"{', '.join(v for k, v in sorted(POLICY_NAMES.items()) if k != EXTERNAL)})")
    try:
        pid = policy_id(doc["agent"])
    except ValueError as e:
        raise StrategyError(f"{where}: {e}") from None
    names = PARAM_NAMES[pid]
    row = [float(x) for x in default_params(pid)]
    if "base" in doc:                   # start from another strategy's values of the parameters both have
        if not isinstance(doc["base"], str) or doc["base"].strip().lower() == name:
            raise StrategyError(f"{where}: base must name another strategy (a string)")
        try:
            b = load_strategy(doc["base"])
        except StrategyError as e:
            raise StrategyError(f"{where}: base {doc['base']!r}: {e}") from None
        if b.learned:
            raise StrategyError(f"{where}: base {doc['base']!r} is played from Python (a checkpoint, a Python "
                                f"policy, a search), not a compiled setting")
        for key, value in zip(PARAM_NAMES[b.agent_id], b.params):
            if key in names:
                row[names.index(key)] = float(value)
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
    try:
        check_params(pid, np.asarray(row, dtype=np.float64), where)
    except ValueError as e:
        raise StrategyError(str(e)) from None
    return Strategy(name, POLICY_NAMES[pid], pid, tuple(row), str(doc.get("description", "")))


def _factory_of(spec: str):
    """The callable ``spec`` ("package.module:factory") names, or a ``StrategyError`` naming what is
    missing."""
    module, _, attr = spec.partition(":")
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        raise StrategyError(f"agent {spec!r}: no module named {e.name!r} (a Python policy is "
                            f"package.module:factory, importable from here)") from None
    except Exception as e:
        raise StrategyError(f"agent {spec!r}: importing {module} failed ({type(e).__name__}: {e})") from None
    obj = getattr(mod, attr, None)
    if obj is None:
        raise StrategyError(f"agent {spec!r}: module {module} has no {attr!r}")
    if not callable(obj) and not callable(getattr(obj, "act", None)):
        raise StrategyError(f"agent {spec!r}: {attr} is neither a factory nor a policy (an object with "
                            f"act(obs, legal, rng))")
    return obj


def _from_factory(spec: str) -> Strategy:
    obj = _factory_of(spec)
    doc = (inspect.getdoc(obj) or "").strip().splitlines()
    return Strategy(spec, PYTHON, EXTERNAL, (), doc[0] if doc else f"Python policy {spec}", factory=spec)


def load_strategy(name: str | Path) -> Strategy:
    """The strategy called ``name`` (a base agent, a file of ``configs/agents``, a TOML path, a
    checkpoint path ending in ``.pt``, or a Python policy ``package.module:factory``)."""
    key = str(name).strip()
    if _FACTORY.match(key):
        return _from_factory(key)
    path = Path(key).expanduser()
    if key.endswith(".toml"):
        if not path.is_file():
            raise StrategyError(f"strategy file {key}: no such file" + (" (it is a directory)" if path.is_dir() else ""))
        return _from_toml(path.stem, path.read_text(), str(path), path.absolute().parent)
    if key.endswith(".pt"):
        return _from_checkpoint(key, path, "")
    low = key.lower()
    files = _files()
    if low in files:
        f = files[low]
        base = Path(f).parent if isinstance(f, Path) else None     # a zipped install has no directory
        return _from_toml(low, f.read_text(), f"configs/agents/{low}.toml", base)
    try:
        pid = policy_id(low)
    except ValueError:
        pid = None
    if pid is None or pid == EXTERNAL:
        hint = (" (a strategy file is a path ending in .toml, a checkpoint one ending in .pt)"
                if "/" in key or "\\" in key or path.exists() else "")
        raise StrategyError(f"unknown agent {key!r}{hint}; known agents: {', '.join(known_strategies())}")
    return Strategy(POLICY_NAMES[pid], POLICY_NAMES[pid], pid, tuple(float(x) for x in default_params(pid)),
                    "the base agent with its default parameters")


def is_learned(names) -> bool:
    """Does any of ``names`` resolve to a strategy played from Python (``Strategy.learned``)?"""
    return any(load_strategy(n).learned for n in names)


def checkpoint_digests(strats) -> dict[str, str]:
    """``{checkpoint path: sha256}`` of the learned ``strats`` (empty for compiled ones): run
    directories keep it in their config, so a resume refuses a checkpoint that changed under the
    same path (no torch needed)."""
    import hashlib

    out = {}
    for s in strats:
        if s.checkpoint is not None and s.checkpoint not in out:
            try:
                out[s.checkpoint] = hashlib.sha256(Path(s.checkpoint).read_bytes()).hexdigest()
            except OSError as e:
                raise StrategyError(f"checkpoint {s.checkpoint}: cannot read it ({e.strerror or e})") from None
    return out


_POLICIES: dict = {}


def _python_policy(s: Strategy, rules):
    """The policy a ``package.module:factory`` strategy makes (a new one per call)."""
    obj = _factory_of(s.factory)
    if callable(getattr(obj, "act", None)) and not inspect.isclass(obj):
        return obj                                      # a policy object itself
    try:
        takes = [p for p in inspect.signature(obj).parameters.values()
                 if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        takes = []
    try:
        pol = obj(rules) if takes else obj()
    except Exception as e:
        raise StrategyError(f"agent {s.factory!r}: the factory failed ({type(e).__name__}: {e})") from None
    if not callable(getattr(pol, "act", None)):
        raise StrategyError(f"agent {s.factory!r}: the factory returned {type(pol).__name__}, not a policy (an "
                            f"object with act(obs, legal, rng))")
    if not getattr(pol, "name", None):
        try:
            pol.name = s.factory
        except AttributeError:
            pass
    return pol


def learned_policy(strategy: Strategy | str, rules):
    """The policy of a strategy played from Python: a checkpoint's ``LearnedPolicy(net,
    greedy=True)``, loaded for ``rules`` (cached per file, modification time and rules), what a
    Python policy's factory returns, or a search strategy's ``SearchPolicy``.  Errors are
    ``StrategyError`` with a one-line message: torch missing, a file that is not a checkpoint, a
    ``CheckpointMismatch``, a factory that fails or returns no policy."""
    s = strategy if isinstance(strategy, Strategy) else load_strategy(strategy)
    if not s.learned:
        raise StrategyError(f"{s.name} is a compiled agent ({s.agent}), not a checkpoint")
    if s.factory is not None:
        return _python_policy(s, rules)
    if s.driven:
        from kalooki_sim.agents.search_policy import SearchPolicy

        return SearchPolicy(s.params, name=s.name)
    path = Path(s.checkpoint)
    try:
        key = (str(path), path.stat().st_mtime_ns, rules.digest())
    except OSError as e:
        raise StrategyError(f"checkpoint {path}: cannot read it ({e.strerror or e})") from None
    if key in _POLICIES:
        return _POLICIES[key]
    try:
        import torch  # noqa: F401
    except ImportError:
        raise StrategyError(f"{s.name} is a learned agent (checkpoint {path}), which needs torch: "
                            "install the learn extra: pip install -e .[learn]") from None
    from kalooki_sim.agents.learned import CheckpointMismatch, LearnedPolicy, load_checkpoint

    try:
        net, _ = load_checkpoint(path, rules)
    except CheckpointMismatch as e:
        raise StrategyError(str(e)) from None
    except Exception as e:          # torch.load of a file that is not a checkpoint: pickle, zip, key errors
        raise StrategyError(f"checkpoint {path}: not a readable checkpoint ({type(e).__name__}: {e})") from None
    pol = LearnedPolicy(net, name=s.name, greedy=True)
    _POLICIES[key] = pol
    return pol


def learned_policies(strats, rules) -> dict:
    """``{index: policy}`` of the strategies among ``strats`` played from Python, each loaded and
    checked against ``rules`` (``learned_policy``); empty when all play in the closed loop (torch
    untouched)."""
    return {i: learned_policy(s, rules) for i, s in enumerate(strats) if s.learned}


def lineup(names) -> tuple[list[Strategy], np.ndarray, np.ndarray]:
    """Strategies of ``names`` with their agent ids ``int64[n]`` and parameter rows ``float64[n, k]``
    for the closed loop (a strategy played from Python, ``Strategy.learned``, has id ``EXTERNAL``
    and an empty row there)."""
    loaded: dict = {}                 # each distinct name read once (a batch repeats a few names)
    strats = [loaded[n] if n in loaded else loaded.setdefault(n, load_strategy(n)) for n in names]
    k = max([1] + [N_PARAMS[s.agent_id] for s in strats if not s.learned])
    ids = np.array([EXTERNAL if s.learned else s.agent_id for s in strats], dtype=np.int64)
    params = np.stack([np.zeros(k) if s.learned else s.row(k) for s in strats]) if strats else np.zeros((0, k))
    return strats, ids, params
