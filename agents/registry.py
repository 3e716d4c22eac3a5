"""The compiled agents, one line each: the module that declares ``AGENT``
(``agents/declare.py`` says what it declares).

Adding an agent: write its module (a kernel and an ``AGENT = CompiledAgent(...)``; the recipe is
``docs/recipes.md``) and add its name here.  Dispatch slots follow the ids, not this order.
"""

from __future__ import annotations

from importlib import import_module

from .declare import MAX_AGENTS, CompiledAgent

AGENT_MODULES = (
    "random_agent",
    "greedy",
    "expert",
    "shedder",
    "search",
)


def _load(name: str) -> CompiledAgent:
    agent = getattr(import_module(f".{name}", __package__), "AGENT", None)
    if not isinstance(agent, CompiledAgent):
        raise ImportError(f"agents/registry.py: module {name!r} declares no AGENT = CompiledAgent(...)")
    return agent


AGENTS: tuple[CompiledAgent, ...] = tuple(_load(m) for m in AGENT_MODULES)

if len({a.id for a in AGENTS}) != len(AGENTS) or len({a.name for a in AGENTS}) != len(AGENTS):
    raise ImportError(f"agents/registry.py: ids and names must be unique: {[(a.id, a.name) for a in AGENTS]}")
if sum(a.hot for a in AGENTS) > 1:
    raise ImportError(f"agents/registry.py: at most one hot agent (inlined into the loop), got "
                      f"{[a.name for a in AGENTS if a.hot]}")
if len(AGENTS) > MAX_AGENTS:
    raise ImportError(f"agents/registry.py: {len(AGENTS)} agents, dispatch has {MAX_AGENTS} slots")
