"""Cold compile of the closed loop: how long it takes and which kernels it spends it on.

Prints JSON lines.  In a fresh process with an empty ``NUMBA_CACHE_DIR`` (a temp dir) it times the
first call of ``rollout.simulate`` on 8 greedy Caribbean hands (which compiles everything the
closed loop needs) and records numba's compile events (``numba:compile``, one per overload
compiled; ``numba:llvm_lock``, the time spent holding the LLVM lock: optimising and emitting
machine code).  A kernel's compile includes the compiles of the callees it types first, so each
overload is charged its *self* time (its span minus its callees' spans) and the LLVM time spent
while it was the innermost compile.  Lines:

* ``{"what": "total", ...}``: the first call, a second (cached in memory) call, the import, and
  the sums of the compile and LLVM time;
* ``{"what": "function", ...}``: the top ``--top`` kernels by self compile time, with their
  slowest numba passes (``passes_s``; ``native_lowering`` holds the LLVM optimisation) and
  overload counts (``literal``: overloads with a literal-constant argument type, see
  ``specialise_constants`` in ``kalooki_sim/core/jit.py``);
* ``{"what": "overloads", ...}``: every kernel compiled more than once, with its signatures.

    python benchmarks/compile_cost.py [--top 20] [--n-games 8]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict


def _child(args) -> None:
    t0 = time.perf_counter()
    from numba.core import event, types

    from kalooki_sim import load_rules
    from kalooki_sim.runtime.rollout import simulate
    t_import = time.perf_counter() - t0

    rules = load_rules("caribbean")
    with event.install_recorder("numba:compile") as rec_c, \
            event.install_recorder("numba:llvm_lock") as rec_l:
        t0 = time.perf_counter()
        simulate(rules, 4, ["greedy"] * 4, n_games=args.n_games, seed=1)
        first = time.perf_counter() - t0
    t0 = time.perf_counter()
    simulate(rules, 4, ["greedy"] * 4, n_games=args.n_games, seed=1)
    second = time.perf_counter() - t0

    timeline = sorted([(ts, 0, ev) for ts, ev in rec_c.buffer] + [(ts, 1, ev) for ts, ev in rec_l.buffer],
                      key=lambda x: x[0])
    stack = []                  # open compiles: [name, args, start, child time, llvm time]
    lock_depth, lock_start = 0, 0.0
    per = defaultdict(lambda: {"self_s": 0.0, "llvm_s": 0.0, "child_s": 0.0, "events": 0, "failed": 0})
    total_top, llvm_total, llvm_outside = 0.0, 0.0, 0.0
    for ts, is_lock, ev in timeline:
        start = ev.status == event.EventStatus.START
        if is_lock:
            if start:
                lock_depth += 1
                if lock_depth == 1:
                    lock_start = ts
            else:
                lock_depth -= 1
                if lock_depth == 0:
                    llvm_total += ts - lock_start
                    if stack:
                        stack[-1][4] += ts - lock_start
                    else:
                        llvm_outside += ts - lock_start
            continue
        if start:
            d = ev.data["dispatcher"]
            name = f"{d.py_func.__module__}.{d.py_func.__qualname__}"
            stack.append([name, ev.data["args"], ts, 0.0, 0.0])
            continue
        name, _, t_start, child, llvm = stack.pop()
        span = ts - t_start
        p = per[name]
        p["self_s"] += span - child
        p["child_s"] += child
        p["llvm_s"] += llvm
        p["events"] += 1
        # (numba 0.68's Event.is_failed is inverted: True when no exception)
        p["failed"] += ev._exc_details is not None     # e.g. retyped with literal arguments
        if stack:
            stack[-1][3] += span
        else:
            total_top += span

    import kalooki_sim.core.jit as jit
    overloads, passes = {}, {}
    for d in _dispatchers():
        name = f"{d.py_func.__module__}.{d.py_func.__qualname__}"
        if name in per:
            sigs = list(d.signatures)
            overloads[name] = (len(sigs), sum(any(isinstance(t, types.Literal) for t in s) for s in sigs), sigs)
            passes[name] = _pass_times(d, per[name]["child_s"])
    print(json.dumps({
        "what": "total", "first_call_s": round(first, 1), "second_call_s": round(second, 3),
        "import_s": round(t_import, 1), "compile_s": round(total_top, 1),
        "compile_self_sum_s": round(sum(p["self_s"] for p in per.values()), 1),
        "llvm_lock_s": round(llvm_total, 1), "llvm_lock_outside_compiles_s": round(llvm_outside, 1),
        "functions": len(per), "compile_events": sum(p["events"] for p in per.values()),
        "failed_events": sum(p["failed"] for p in per.values()),
        "overloads": sum(n for n, _, _ in overloads.values()),
        "literal_overloads": sum(k for _, k, _ in overloads.values()),
        "opt_level": jit._opt_level(), "cache_dir": jit.cache_dir(), "cpus": os.cpu_count()}), flush=True)
    ranked = sorted(per.items(), key=lambda kv: -kv[1]["self_s"])
    for name, p in ranked[:args.top]:
        n, lit, _ = overloads.get(name, (0, 0, []))
        print(json.dumps({"what": "function", "name": name, "self_s": round(p["self_s"], 1),
                          "llvm_s": round(p["llvm_s"], 1), "overloads": n, "literal": lit,
                          "compile_events": p["events"], "failed": p["failed"],
                          "passes_s": passes.get(name, {})}), flush=True)
    for name, (n, lit, sigs) in sorted(overloads.items(), key=lambda kv: -kv[1][0]):
        if n > 1:
            print(json.dumps({"what": "overloads", "name": name, "overloads": n, "literal": lit,
                              "self_s": round(per[name]["self_s"], 1),
                              "signatures": [str(s) for s in sigs]}), flush=True)


def _pass_times(disp, child_s: float, top: int = 6) -> dict:
    """The kernel's slowest numba compiler passes (run time summed over its overloads).  Callees
    are compiled while the kernel is typed: their time (``child_s``) is taken off the type
    inference pass, so the figures are the kernel's own."""
    tot = defaultdict(float)
    for cres in disp.overloads.values():
        for pipeline in (cres.metadata or {}).get("pipeline_times", {}).values():
            for pname, t in pipeline.items():
                tot[pname.split("_", 1)[1]] += t.init + t.run + t.finalize
    if "nopython_type_inference" in tot:
        tot["nopython_type_inference"] -= child_s
    return {k: round(v, 1) for k, v in sorted(tot.items(), key=lambda kv: -kv[1])[:top]}


def _dispatchers():
    """Every project dispatcher alive in this process."""
    import gc

    from kalooki_sim.core.jit import KernelDispatcher
    return [o for o in gc.get_objects() if isinstance(o, KernelDispatcher)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--n-games", type=int, default=8)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        _child(args)
        return
    with tempfile.TemporaryDirectory(prefix="kalooki-compile-cost-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--child", "--top", str(args.top),
                        "--n-games", str(args.n_games)], env=env, check=True)
        print(json.dumps({"what": "process", "wall_s": round(time.perf_counter() - t0, 1)}), flush=True)


if __name__ == "__main__":
    main()
