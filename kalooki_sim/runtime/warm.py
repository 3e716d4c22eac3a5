"""Compile the kernels ahead of use, side by side: ``kalooki compile``.

The first run on an empty kernel cache compiles for minutes (the closed loop with every compiled
agent, the lockstep env, the single-game front end, the search), and every process that starts
on that empty cache compiles the same kernels again: two test workers, a batch of CLI runs or a
study's worker processes each pay the whole cold compile at once.  ``compile_kernels`` has tiny
games make numba compile each group of kernels, the groups spread over ``jobs`` fresh processes,
so that later processes only load them from the cache (about a second).  After an install or an
edit to a kernel module, run it once instead of waiting in the first command (or in each of the
processes a study or a batch of commands starts at once).
"""

from __future__ import annotations

import multiprocessing as mp
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

__all__ = ["GROUPS", "compile_kernels"]


def _loop() -> None:
    """The closed loop (``rollout.simulate``): single hands and matches, every compiled agent."""
    import numpy as np

    from kalooki_sim.agents.base import AGENTS
    from kalooki_sim.core.rules import load_rules

    from .rollout import simulate

    ids = [a.id for a in AGENTS if not a.driven]
    for preset in ("caribbean", "k40"):
        rules = load_rules(preset)
        n = min(4, rules.players_max)
        seats = np.array([ids[i % len(ids)] for i in range(n)], dtype=np.int64)
        simulate(rules, n, seats, None, 2, 0)
        simulate(rules, n, seats, None, 1, 0, mode="matches", max_hands=2)


def _game() -> None:
    """The single-game front end (``runtime.game.Game``: stepping, legality, text) and replays."""
    from .game import Game

    g = Game("caribbean", 4, seed=0, agents=["greedy"] * 4)
    for _ in range(40):
        if g.terminal:
            break
        a = g.agent_action()
        g.check(a)
        g.action_text(a)
        g.apply(a)
    str(g)
    p = Game.from_text("round: 1\nactive: P1\nphase: play\nP1: 9H 4H 9S 2C 7D | laid\nP2: 7S 7C 3D\n"
                       "P3: 2D 3S\nP4: KD KH\ntable: P1 [5H 6H 7H 8H]\ndiscard: 3C 9D\n")
    p.check("tack 4H on 1")
    p.apply("tack 9H on 1")
    p.legal_action_texts()


def _env() -> None:
    """The lockstep env (reset, step, a compiled agent's choice, the observation encoder)."""
    import numpy as np

    from .env import KalookiVecEnv

    env = KalookiVecEnv("caribbean", 4, batch=2, seed=0)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(3):
        env.compiled_actions("greedy")
        env.step(env.random_actions(rng))


def _search() -> None:
    """The search agent's driver (``agents.search_policy``), played through the env."""
    from kalooki_sim.core.rules import load_rules

    from .policy_play import play_policies
    from .strategies import learned_policy

    rules = load_rules("caribbean")
    play_policies(rules, 3, [learned_policy("search-caribbean", rules), "greedy", "greedy"], 1, 0, batch=1)


# in the order a job takes them (the biggest first); each runs in a fresh process
GROUPS = {"loop": _loop, "search": _search, "env": _env, "game": _game}


def _run(name: str) -> tuple[str, float]:
    t = time.perf_counter()
    GROUPS[name]()
    return name, time.perf_counter() - t


def compile_kernels(groups=None, jobs: int = 2, progress: bool = True) -> dict[str, float]:
    """Compile the kernel ``groups`` (default all of ``GROUPS``) into the cache, ``jobs`` at a
    time, each in a fresh process; returns the seconds each took."""
    names = list(GROUPS) if groups is None else list(groups)
    unknown = [g for g in names if g not in GROUPS]
    if unknown:
        raise ValueError(f"unknown kernel group(s) {', '.join(unknown)}; known: {', '.join(GROUPS)}")
    if int(jobs) < 1:
        raise ValueError(f"jobs must be >= 1, got {jobs}")
    from tqdm import tqdm

    out: dict[str, float] = {}
    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(max_workers=int(jobs), mp_context=ctx, max_tasks_per_child=1) as pool, \
            tqdm(total=len(names), desc="compiling kernels", unit=" groups", disable=not progress) as bar:
        for f in as_completed([pool.submit(_run, g) for g in names]):
            name, secs = f.result()
            out[name] = secs
            bar.set_postfix_str(f"{name} {secs:.0f} s")
            bar.update()
    return out
