"""Which of two builds plays greedy hands faster, on a machine too noisy to time them one by one.

On a shared 2-core machine one run of greedy Caribbean hands swings by 20 % from one minute to the
next, more than most changes to the kernels are worth, so two builds timed back to back see
different minutes.  This runs them at the same time instead, one process pinned to each core
(cores swapped every round), so both see the same minute; the ratio of a round is what changed.
Two copies of one build (an A/A run) show how far a round's ratio strays on its own: up to 11 %
on that machine, so a few per cent wants ten rounds or more.

    python benchmarks/compare_builds.py REV_A REV_B [--rounds 10] [--preset caribbean]
        [--hands 18000] [--runs 5]

A revision is anything ``git worktree add`` takes (a commit, a branch) or ``.`` for the working
tree as it is.  Each is checked out once into ``~/.cache/kalooki-sim/builds/<commit>`` and kept,
so its compiled kernels are reused by the next comparison (the first one compiles both builds,
several minutes each).  A worker imports the package from its build only (it checks where every
module came from: an editable install would otherwise hand it the working tree's agents).

Prints one JSON line per round (each build's median hands/s over ``--runs`` runs on one thread,
and their ratio B/A) and a summary line: the mean ratio, a 95 % interval of it (t distribution),
and the rounds B won.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILDS = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kalooki-sim" / "builds"

# two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom (then about 2.0)
_T95 = [12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23, 2.20, 2.18, 2.16, 2.14, 2.13,
        2.12, 2.11, 2.10, 2.09, 2.09, 2.08, 2.07, 2.07, 2.06, 2.06, 2.06, 2.05, 2.05, 2.05, 2.04]


def build_tree(rev: str) -> Path:
    """A source tree of ``rev``: the working tree for ``.``, else a kept worktree of its commit."""
    if rev == ".":
        return ROOT
    try:
        sha = subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.strip()
    except subprocess.CalledProcessError:
        sys.exit(f"compare_builds: unknown revision {rev!r}")
    tree = BUILDS / sha[:12]
    if not (tree / "kalooki_sim").is_dir():
        BUILDS.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), sha], cwd=ROOT, check=True,
                       capture_output=True)
    # the package maps ``kalooki_sim.agents`` to the top-level agents/ folder (pyproject); a tree
    # imported from PYTHONPATH finds it through this link instead
    link = tree / "kalooki_sim" / "agents"
    if not link.exists():
        link.symlink_to(Path("..") / "agents")
    return tree


def worker(args) -> None:
    """In a child process: time greedy hands of this build on one pinned core, print JSON."""
    import numba

    os.sched_setaffinity(0, {args.core})
    numba.set_num_threads(1)
    import importlib

    import kalooki_sim.agents.compiled
    from kalooki_sim import load_rules

    tree = Path(args.tree).resolve()
    # builds from before the package was grouped by job (issue 39) keep the driver at the top
    grouped = (tree / "kalooki_sim" / "runtime").is_dir()
    rollout = importlib.import_module("kalooki_sim.runtime.rollout" if grouped else "kalooki_sim.rollout")
    simulate = rollout.simulate
    for mod in (sys.modules["kalooki_sim"], kalooki_sim.agents.compiled, rollout):
        if tree not in Path(mod.__file__).resolve().parents:
            sys.exit(f"compare_builds: {mod.__name__} came from {mod.__file__}, not from {tree}")
    rules = load_rules(args.preset)
    ids = ["greedy"] * 4
    simulate(rules, 4, ids, None, 64, 1, mode="hands", first_game_id=10**9)   # compiled (or loaded)
    rates = []
    for i in range(args.runs):
        t0 = time.perf_counter()
        simulate(rules, 4, ids, None, args.hands, 1 + i, mode="hands")
        rates.append(args.hands / (time.perf_counter() - t0))
    # (--runs 0 only compiles)
    print(json.dumps({"median": statistics.median(rates) if rates else None}))


def _spawn(tree: Path, core: int, args, runs: int | None = None) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_NUM_THREADS="1")
    env.pop("NUMBA_CACHE_DIR", None)         # each build its own cache (named after its sources)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--tree", str(tree),
           "--core", str(core), "--preset", args.preset, "--hands", str(args.hands),
           "--runs", str(args.runs if runs is None else runs)]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)


def _medians(procs: list[subprocess.Popen]) -> list:
    """Each worker's median hands/s; if one fails, the others are stopped, not left running."""
    try:
        out = []
        for proc in procs:
            text, _ = proc.communicate()
            if proc.returncode != 0:
                sys.exit(f"compare_builds: a worker failed (exit {proc.returncode})")
            out.append(json.loads(text.strip().splitlines()[-1])["median"])
        return out
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev_a", nargs="?")
    ap.add_argument("rev_b", nargs="?")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--preset", default="caribbean")
    ap.add_argument("--hands", type=int, default=18000, help="hands per timed run")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per round and build (median)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--tree", help=argparse.SUPPRESS)
    ap.add_argument("--core", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    if args.rev_a is None or args.rev_b is None:
        ap.error("two revisions are needed (REV_A REV_B)")
    if args.rounds < 2 or args.hands < 1 or args.runs < 1:
        ap.error("--rounds must be at least 2, --hands and --runs at least 1")
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        sys.exit("compare_builds: needs two cores (it runs the builds side by side)")
    trees = [build_tree(args.rev_a), build_tree(args.rev_b)]
    # compile (or load) both builds first, so that no round times one build while the other compiles
    _medians([_spawn(t, c, args, runs=0) for t, c in zip(trees, cores)])
    ratios = []
    for r in range(args.rounds):
        ca, cb = (cores[0], cores[1]) if r % 2 == 0 else (cores[1], cores[0])
        a, b = _medians([_spawn(trees[0], ca, args), _spawn(trees[1], cb, args)])
        ratios.append(b / a)
        row = {"bench": "compare_builds", "round": r, "preset": args.preset, "a": args.rev_a,
               "b": args.rev_b, "hands_per_s_a": round(a), "hands_per_s_b": round(b),
               "ratio_b_over_a": round(b / a, 4)}
        print(json.dumps(row), flush=True)
    n = len(ratios)
    mean = statistics.fmean(ratios)
    half = _T95[min(n - 1, len(_T95)) - 1] * statistics.stdev(ratios) / math.sqrt(n)
    print(json.dumps({"bench": "compare_builds", "summary": True, "rounds": n, "a": args.rev_a,
                      "b": args.rev_b, "mean_ratio_b_over_a": round(mean, 4),
                      "ci95": [round(mean - half, 4), round(mean + half, 4)],
                      "b_faster_rounds": sum(x > 1 for x in ratios)}))


if __name__ == "__main__":
    main()
