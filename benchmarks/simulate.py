"""Throughput of the closed-loop simulator: hands per second per core, and the parallel speed-up.

Prints JSON lines: for random and greedy 4-player Caribbean hands (single hands, rounds 1-9 in
turn, so the figure averages over the 9 rounds) the hands/s on 1 thread and on all cores with the
speed-up, each the median of `--repeats` timed runs (all of them listed too); the same on one
core for the other presets (`--presets`); cold and cached compile time in fresh processes; and,
when `open_spiel` is installed (`pip install .[bench]`), OpenSpiel's gin_rummy random games/s
measured in the same run.

    python benchmarks/simulate.py [--hands 200000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

from kalooki_sim import load_rules
from kalooki_sim.agents.base import policy_id
from kalooki_sim.runtime.rollout import simulate


def hands_per_second(rules, agents, n, threads, seed=1, repeats=3):
    """Hands/s of ``repeats`` timed runs of the same ``n`` hands (after a small run that loads the
    kernels), as a list.  One run of a second or less swings by a few per cent from one to the
    next, the first of a process most (a 64-game warm-up does not settle caches and predictors),
    so the figures quoted are the medians."""
    numba.set_num_threads(threads)
    ids = [policy_id(a) for a in agents]
    params = None                                 # every seat's defaults
    simulate(rules, len(ids), ids, params, 64, seed, mode="hands", first_game_id=10**9)  # compiled
    rates = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        simulate(rules, len(ids), ids, params, n, seed, mode="hands")
        rates.append(n / (time.perf_counter() - t0))
    return rates


def open_spiel_games_per_second(n=500):
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("gin_rummy")
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for _ in range(n):
        s = game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                s.apply_action(outcomes[rng.integers(len(outcomes))][0])
            else:
                acts = s.legal_actions()
                s.apply_action(acts[rng.integers(len(acts))])
    return n / (time.perf_counter() - t0)


_SNIPPET = ("import time; t=time.perf_counter(); import numpy as np; from kalooki_sim import load_rules; "
            "from kalooki_sim.runtime.rollout import simulate; "
            "simulate(load_rules('caribbean'), 4, [1,1,0,0], np.zeros((4,1)), 8, 0, mode='hands'); "
            "print(time.perf_counter()-t)")


def compile_times():
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        runs = [float(subprocess.run([sys.executable, "-c", _SNIPPET], env=env, capture_output=True, text=True,
                                     check=True).stdout.strip().splitlines()[-1]) for _ in range(2)]
    return {"bench": "simulate_compile", "cold_s": round(runs[0], 2), "cached_s": round(runs[1], 2)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=36_000, help="greedy hands per measurement")
    ap.add_argument("--random-hands", type=int, default=3_600,
                    help="random hands per measurement (random play runs to the turn cap: slow)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="timed runs per measurement; the median is reported (and every run)")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--presets", default="k40,k51,k101,na15,american",
                    help="other presets to measure on one core (greedy and random; '' for none)")
    args = ap.parse_args(argv)
    rules = load_rules("caribbean")
    cores = numba.config.NUMBA_NUM_THREADS
    ospiel = open_spiel_games_per_second()
    for agents, n in ((("random",) * 4, args.random_hands), (("greedy",) * 4, args.hands)):
        ones = hands_per_second(rules, agents, n, 1, repeats=args.repeats)
        manys = hands_per_second(rules, agents, n, cores, repeats=args.repeats)
        one = statistics.median(ones)
        many = statistics.median(manys)
        row = {"bench": "simulate", "variant": "caribbean", "players": 4, "agents": agents[0], "hands": n,
               "repeats": args.repeats, "hands_per_s_1_thread": round(one),
               "hands_per_s_1_thread_runs": [round(x) for x in ones], "threads": cores,
               "hands_per_s_all_threads": round(many),
               "hands_per_s_all_threads_runs": [round(x) for x in manys],
               "speedup": round(many / one, 2), "hands_per_s_per_core": round(one)}
        if ospiel is not None:
            # OpenSpiel plays gin rummy (2 players, C++ engine driven from Python, random play)
            row["open_spiel_gin_rummy_random_games_per_s"] = round(ospiel, 1)
            row["ratio_vs_open_spiel"] = round(one / ospiel, 2)
        print(json.dumps(row), flush=True)
    for name in [p for p in args.presets.split(",") if p]:
        r = load_rules(name)
        for agents, n in ((("random",) * 4, args.random_hands), (("greedy",) * 4, args.hands // 4)):
            one = statistics.median(hands_per_second(r, agents, n, 1, repeats=args.repeats))
            print(json.dumps({"bench": "simulate", "variant": name, "players": 4, "agents": agents[0],
                              "hands": n, "hands_per_s_per_core": round(one)}), flush=True)
    if not args.no_compile:
        print(json.dumps(compile_times()), flush=True)


if __name__ == "__main__":
    main()
