#!/usr/bin/env python
"""What a decision costs each kind of agent, measured the same way for all: the ladder's cost column.

Each agent of ``--agents`` (a compiled strategy, a network checkpoint or the search) sits in
seat 0 of a lockstep env (``runtime.env.KalookiVecEnv``, the lineup rotated game by game, the
other seats ``--field``), and only its own choice at each of its decisions is timed (the env's
steps are not), asked as the expert data ask a teacher (``studies.expert_data.strategy_chooser``):
compiled strategies through ``env.compiled_actions``, a network or the search through
``policy_play.policy_actions``, as tournaments ask them.  One core (numba and torch
set to one thread).  Printed, one JSON line per agent: the median and mean cost of a decision
asked one at a time (a batch of one row: a compiled agent's figure is then mostly the call's
Python overhead, a few microseconds), and the mean cost per decision when ``--batch`` rows are
asked at once (how tournaments and training ask)::

    python benchmarks/agent_costs.py --variant caribbean --agents random,greedy,sharp,learned-caribbean,search-caribbean
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numba
import numpy as np

from kalooki_sim import load_rules
from kalooki_sim.runtime.env import KalookiVecEnv
from kalooki_sim.runtime.strategies import load_strategy
from kalooki_sim.studies.expert_data import strategy_chooser


def _kind(name) -> str:
    s = load_strategy(name)
    return "compiled" if not s.learned else "search" if s.driven else "network"


def time_agent(rules, players, name, field, decisions, batch, seed, mode):
    """Seconds per call of ``name``'s choice, over calls covering about ``decisions`` decisions."""
    choose, kind = strategy_chooser(name, rules), _kind(name)
    rng = np.random.default_rng(0)
    # the lineup's first seat is the env's learner seat (rotated): every step is one of its decisions
    episode = "match" if mode == "matches" else "hand"
    env = KalookiVecEnv(rules, players, batch=batch, lineup=["learner", *field], rotate=True, seed=seed,
                        episode=episode, reward=episode)
    env.reset()
    choose(env, rng)                # compile / load outside the timing
    costs = []
    for _ in range(max(1, decisions // batch)):
        t0 = time.perf_counter()
        a = choose(env, rng)
        costs.append(time.perf_counter() - t0)
        env.step(a)
    return kind, costs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--variant", default="caribbean")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--mode", choices=("hands", "matches"), default="hands")
    ap.add_argument("--agents", default="random,greedy,sharp,learned-caribbean,search-caribbean")
    ap.add_argument("--field", default="sharp", help="the strategy of every other seat")
    ap.add_argument("--decisions", type=int, default=2000, help="decisions timed one at a time, per agent")
    ap.add_argument("--batch", type=int, default=256, help="rows asked at once for the batched figure")
    ap.add_argument("--batch-decisions", type=int, default=8192, help="decisions timed in batches, per agent")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    numba.set_num_threads(1)
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    rules = load_rules(a.variant)
    field = [a.field] * (a.players - 1)
    for name in a.agents.split(","):
        kind, one = time_agent(rules, a.players, name, field, a.decisions, 1, a.seed, a.mode)
        _, many = time_agent(rules, a.players, name, field, a.batch_decisions, a.batch, a.seed, a.mode)
        print(json.dumps({"variant": a.variant, "agent": name, "kind": kind, "field": a.field,
                          "one_at_a_time": {"decisions": len(one), "median_us": round(statistics.median(one) * 1e6, 1),
                                            "mean_us": round(statistics.fmean(one) * 1e6, 1)},
                          "batched": {"batch": a.batch, "decisions": len(many) * a.batch,
                                      "mean_us": round(sum(many) / (len(many) * a.batch) * 1e6, 2)}}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
