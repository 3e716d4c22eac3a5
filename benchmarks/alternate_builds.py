"""Which of two builds plays greedy hands faster, timed in turns on one core.

``compare_builds.py`` runs the two builds at the same time, one per core; when someone else's
bursty jobs share the machine they land on one core more than the other and a round's ratio
strays by 10-40 %.  This keeps one warm process per build pinned to the *same* core and times
short runs of each in turn (A B, B A, ...), so both see nearly the same second; the summary is the
geometric mean of the pairs' ratios B/A with a 95 % interval.  Run it on each core at once to use
the machine and get two independent answers.

    python benchmarks/alternate_builds.py REV_A REV_B [--preset caribbean] [--pairs 80]
        [--hands 20000] [--core 0]

Revisions as in ``compare_builds.py`` (each checked out once into the kept build folder and its
kernels compiled there on the first use).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys

from compare_builds import _T95, build_tree

_WORKER = r"""
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
import numba
numba.set_num_threads(1)
import importlib
import kalooki_sim, kalooki_sim.agents.compiled
from kalooki_sim import load_rules
tree = os.path.realpath(sys.argv[3])
# builds from before the package was grouped by job (issue 39) keep the driver at the top
grouped = os.path.isdir(os.path.join(tree, "kalooki_sim", "runtime"))
rollout = importlib.import_module("kalooki_sim.runtime.rollout" if grouped else "kalooki_sim.rollout")
simulate = rollout.simulate
for mod in (kalooki_sim, kalooki_sim.agents.compiled, rollout):
    if not os.path.realpath(mod.__file__).startswith(tree + os.sep):
        sys.exit(f"alternate_builds: {mod.__name__} came from {mod.__file__}, not from {tree}")
rules = load_rules(sys.argv[2])
ids = ["greedy"] * 4
simulate(rules, 4, ids, None, 64, 1, mode="hands", first_game_id=10**9)    # compiled (or loaded)
print("ready", flush=True)
for line in sys.stdin:
    n, seed = map(int, line.split())
    t0 = time.perf_counter()
    simulate(rules, 4, ids, None, n, seed, mode="hands")
    print(n / (time.perf_counter() - t0), flush=True)
"""


def _spawn(tree, core: int, preset: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_NUM_THREADS="1")
    env.pop("NUMBA_CACHE_DIR", None)          # each build its own cache (named after its sources)
    proc = subprocess.Popen([sys.executable, "-c", _WORKER, str(core), preset, str(tree)], env=env,
                            cwd=str(tree), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if proc.stdout.readline().strip() != "ready":
        sys.exit("alternate_builds: a worker failed to start")
    return proc


def _rate(proc: subprocess.Popen, hands: int, seed: int) -> float:
    proc.stdin.write(f"{hands} {seed}\n")
    proc.stdin.flush()
    return float(proc.stdout.readline())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev_a")
    ap.add_argument("rev_b")
    ap.add_argument("--preset", default="caribbean")
    ap.add_argument("--pairs", type=int, default=80)
    ap.add_argument("--hands", type=int, default=20000, help="hands per timed run")
    ap.add_argument("--core", type=int, default=0)
    args = ap.parse_args()
    procs = [_spawn(build_tree(rev), args.core, args.preset) for rev in (args.rev_a, args.rev_b)]
    logs = []
    try:
        for i in range(args.pairs):
            order = (0, 1) if i % 2 == 0 else (1, 0)
            rates = {k: _rate(procs[k], args.hands, 1 + i) for k in order}
            logs.append(math.log(rates[1] / rates[0]))
            print(json.dumps({"bench": "alternate_builds", "pair": i, "hands_per_s_a": round(rates[0]),
                              "hands_per_s_b": round(rates[1]),
                              "ratio_b_over_a": round(rates[1] / rates[0], 4)}), flush=True)
    finally:
        for proc in procs:
            proc.stdin.close()
            proc.wait()
    mean = statistics.mean(logs)
    n = len(logs)
    half = _T95[min(n - 1, len(_T95)) - 1] * statistics.stdev(logs) / math.sqrt(n)
    print(json.dumps({"bench": "alternate_builds", "summary": True, "preset": args.preset, "core": args.core,
                      "pairs": n, "a": args.rev_a, "b": args.rev_b,
                      "geo_mean_ratio_b_over_a": round(math.exp(mean), 4),
                      "ci95": [round(math.exp(mean - half), 4), round(math.exp(mean + half), 4)],
                      "b_faster_pairs": sum(x > 0 for x in logs)}))


if __name__ == "__main__":
    main()
