"""Throughput of the exact best lay-down search: compiled kernel versus the Python reference.

Prints one JSON line per case: per-hand time of the kernel (median, mean, p99, in µs, one core,
measured through a compiled repeat loop so Python call overhead is not what is measured), calls
per second per core, the reference's mean time on a subset, and their ratio; then the compile
time of the kernels, cold (empty numba cache) and cached, each in a fresh process.

    python benchmarks/melds.py [--hands 2000] [--ref-hands 150] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from kalooki_sim import load_rules
from kalooki_sim.core.cards import counts_of
from kalooki_sim.core.jit import njit
from kalooki_sim.melds.reference import ref_best_lay_down
from kalooki_sim.melds.search import MAX_MELDS, REC, best_lay_down_counts, best_lay_down_ws, new_workspace
from kalooki_sim.testing import random_test_hand, uniform_hand


@njit(cache=False)   # compiled per run: a cached copy would not notice edits to the search
def _repeat(hand, rv, round_idx, reps):
    """The engine's way of calling the search: one reused workspace, no allocation per call."""
    best_stack = np.zeros((MAX_MELDS, REC), dtype=np.int64)
    best = np.zeros(4, dtype=np.int64)
    ws = new_workspace()
    acc = 0
    for _ in range(reps):
        acc += best_lay_down_ws(hand, rv, round_idx, best_stack, best, ws)
    return acc


def _per_hand_us(hands, rv, ridx, reps):
    out = np.empty(len(hands))
    for i, h in enumerate(hands):
        t0 = time.perf_counter_ns()
        _repeat(h, rv, ridx, reps)
        out[i] = (time.perf_counter_ns() - t0) / reps / 1000.0
    return out


def bench_case(variant, round_no, size, family, n_hands, n_ref, seed, reps):
    rules = load_rules(variant)
    rv = rules.to_vector()
    ridx = (round_no - 1) if round_no else 0
    rng = np.random.default_rng(seed)
    make = (lambda: uniform_hand(rules, rng, size)) if family == "uniform" else \
        (lambda: random_test_hand(rules, rng, round_no, size))
    tokens = [make() for _ in range(n_hands)]
    hands = [counts_of(t) for t in tokens]
    _repeat(hands[0], rv, ridx, 1)                       # compiled before timing
    us = _per_hand_us(hands, rv, ridx, reps)
    feasible = np.mean([best_lay_down_counts(h, rv, ridx, np.zeros((MAX_MELDS, REC), np.int64),
                                             np.zeros(4, np.int64)) >= 0 for h in hands])
    t0 = time.perf_counter()
    for t in tokens[:n_ref]:
        ref_best_lay_down(rules, t, round_no)
    ref_us = (time.perf_counter() - t0) / n_ref * 1e6
    mean = float(us[:n_ref].mean())   # same hands as the reference for the ratio
    return {
        "bench": "best_lay_down", "variant": variant, "round": round_no, "hand_size": size,
        "hands": family, "n": n_hands, "feasible_share": round(float(feasible), 3),
        "kernel_us_median": round(float(np.median(us)), 3), "kernel_us_mean": round(float(us.mean()), 3),
        "kernel_us_p99": round(float(np.percentile(us, 99)), 3),
        "kernel_calls_per_s_per_core": round(1e6 / float(us.mean())),
        "reference_us_mean": round(ref_us, 1), "reference_n": n_ref,
        "speedup_vs_reference": round(ref_us / mean, 1),
    }


_COMPILE_SNIPPET = (
    "import time; t=time.perf_counter(); "
    "from kalooki_sim.melds import best_lay_down; best_lay_down('caribbean', '5H 6H 7H 8H', 4); "
    "best_lay_down('k40', 'QS KS AS'); print(time.perf_counter()-t)"
)


def compile_times():
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        runs = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-c", _COMPILE_SNIPPET], env=env, capture_output=True,
                                 text=True, check=True)
            runs.append(float(out.stdout.strip().splitlines()[-1]))
    return {"bench": "compile", "cold_s": round(runs[0], 2), "cached_s": round(runs[1], 2)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=2000)
    ap.add_argument("--ref-hands", type=int, default=150)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-compile", action="store_true", help="skip the cold/cached compile timing")
    args = ap.parse_args(argv)
    cases = [("caribbean", 1, 9), ("caribbean", 5, 12), ("caribbean", 9, 16)]
    cases += [("caribbean", r, 13) for r in range(1, 10)]
    cases += [("k40", None, 13), ("k40", None, 14)]
    for family in ("built", "uniform"):
        for variant, rnd, size in cases:
            row = bench_case(variant, rnd, size, family, args.hands, args.ref_hands, args.seed, args.reps)
            print(json.dumps(row), flush=True)
    if not args.no_compile:
        print(json.dumps(compile_times()), flush=True)


if __name__ == "__main__":
    main()
