"""Where the closed loop spends its time: `perf record` of `rollout.simulate` with numba symbols.

numba's JIT code has no symbols for `perf`, so this script writes a perf map
(`/tmp/perf-<pid>.map`) for every cached kernel library it loads (the object code numba caches is
read with `nm`), then records itself with `perf record` while it plays `--hands` hands on one
thread and prints `perf report`'s flat profile.  Needs Linux `perf` and `nm`, and a warm numba
cache (run the simulation once first, e.g. `python benchmarks/simulate.py --no-compile`).

    python benchmarks/perf_profile.py [--preset caribbean] [--agents greedy] [--hands 10000]

Anonymous `[JIT]` addresses a few bytes apart near the top are numba's NRT_incref/NRT_decref
(atomic reference counting, paid per array argument on every call of a kernel compiled with NRT).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time

import numba.core.codegen as _cg

_LIBS = []
_orig_unserialize = _cg.CPUCodeLibrary._unserialize.__func__


def _unserialize(cls, codegen, state):
    lib = _orig_unserialize(cls, codegen, state)
    if state[1] == "object":
        _LIBS.append((lib, state[2][0]))
    return lib


_cg.CPUCodeLibrary._unserialize = classmethod(_unserialize)


def _write_perf_map():
    rows = []
    for lib, obj in _LIBS:
        with tempfile.NamedTemporaryFile(suffix=".o", delete=False) as f:
            f.write(obj)
        try:
            out = subprocess.run(["nm", "-S", "--defined-only", f.name], capture_output=True,
                                 text=True).stdout
        finally:
            os.unlink(f.name)
        ent = []
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 4 and parts[2] in "tTWw":
                ent.append((int(parts[0], 16), int(parts[1], 16), parts[3], parts[2]))
        base = None
        for v, _, name, kind in ent:
            if kind == "T":
                a = lib.get_pointer_to_function(name)
                if a:
                    base = a - v
                    break
        if base is not None:
            rows += [(base + v, size, name) for v, size, name, _ in ent]
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as f:
        for a, size, name in sorted(set(rows)):
            f.write(f"{a:x} {size:x} {name}\n")
    return len(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="caribbean")
    ap.add_argument("--agents", default="greedy", help="policy of all four seats")
    ap.add_argument("--hands", type=int, default=10_000)
    ap.add_argument("--out", default="/tmp/kalooki_perf.data")
    ap.add_argument("--percent-limit", default="0.5")
    args = ap.parse_args(argv)
    import numba

    from kalooki_sim import load_rules
    from kalooki_sim.runtime.rollout import simulate
    rules = load_rules(args.preset)
    pols = [args.agents] * 4
    simulate(rules, 4, pols, n_games=64, seed=1, first_game_id=10**9)   # load / compile
    numba.set_num_threads(1)
    print("symbols", _write_perf_map(), flush=True)
    rec = subprocess.Popen(["perf", "record", "-o", args.out, "-p", str(os.getpid())],
                           stderr=subprocess.DEVNULL)
    time.sleep(1)
    t0 = time.perf_counter()
    simulate(rules, 4, pols, n_games=args.hands, seed=1)
    dt = time.perf_counter() - t0
    rec.send_signal(2)
    rec.wait()
    print(f"{args.hands / dt:.0f} hands/s (under perf)", flush=True)
    rep = subprocess.run(["perf", "report", "-i", args.out, "--no-children", "--stdio", "-g", "none",
                          "--percent-limit", args.percent_limit], capture_output=True, text=True).stdout
    print(rep)


if __name__ == "__main__":
    main()
