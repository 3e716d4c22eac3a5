#!/usr/bin/env python
"""Digests of what the closed-loop simulator plays, to show a speed change plays the same games.

A kernel change meant only to be faster must leave every game as it was.  The golden playthroughs
(``tests/golden``) cover two games; this covers thousands: for each preset, 1,500 greedy hands,
300 hands of greedy against random and 800 three-player hands of greedy exploring (epsilon 0.2),
100 Caribbean matches and 30 matches of K40, NA15 and American, and 400 Caribbean and K40 hands of
four expert strategies (``configs/agents``), each reduced to a digest of ``rollout.simulate``'s columns.

    python scripts/fingerprint.py > before.json        # on the old build
    python scripts/fingerprint.py --check before.json  # on the new one: exits 1 on a difference

Run it on one thread (``NUMBA_NUM_THREADS=1``) if you like; the results do not depend on it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

import numpy as np

from kalooki_sim import load_rules
from kalooki_sim.runtime.rollout import simulate
from kalooki_sim.runtime.strategies import lineup

EXPERTS = ("sharp", "defensive", "patient", "counting")
PRESETS = ("caribbean", "k40", "k51", "k101", "na15", "american")


# columns added after the stored digests were made: they describe the same games, so they stay out
ADDED_COLUMNS = frozenset({"calls_denied"})


def digest(columns) -> str:
    """A digest of ``simulate``'s output: a dict of columns, or a tuple of them (matches)."""
    h = hashlib.sha256()
    if isinstance(columns, tuple):
        for part in columns:
            h.update(digest(part).encode())
        return h.hexdigest()[:16]
    for name in sorted(set(columns) - ADDED_COLUMNS):
        h.update(name.encode())
        h.update(np.ascontiguousarray(columns[name]).tobytes())
    return h.hexdigest()[:16]


def fingerprint() -> dict[str, str]:
    out = {}
    explore = np.tile([0.2, 1.0, 1.0, 0.5], (3, 1))   # greedy's defaults but epsilon 0.2
    for name in PRESETS:
        rules = load_rules(name)
        out[f"{name}/greedy4"] = digest(simulate(rules, 4, ["greedy"] * 4, None, 1500, 11))
        out[f"{name}/gr_rand"] = digest(simulate(rules, 4, ["greedy", "random"] * 2, None, 300, 12))
        out[f"{name}/eps3"] = digest(simulate(rules, 3, ["greedy"] * 3, explore, 800, 13))
    out["caribbean/matches"] = digest(simulate(load_rules("caribbean"), 4, ["greedy"] * 4, None, 100, 14,
                                               mode="matches"))
    for name in ("k40", "na15", "american"):     # the points variants' match flows
        out[f"{name}/matches"] = digest(simulate(load_rules(name), 4, ["greedy", "greedy", "random", "greedy"],
                                                 None, 30, 15, mode="matches", max_hands=60))
    _, ids, rows = lineup(EXPERTS)
    for name in ("caribbean", "k40"):
        out[f"{name}/experts"] = digest(simulate(load_rules(name), 4, ids, rows, 400, 16))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", metavar="FILE", help="compare with an earlier output; exit 1 on a difference")
    args = ap.parse_args(argv)
    out = fingerprint()
    if not args.check:
        print(json.dumps(out, indent=1))
        return 0
    with open(args.check) as f:
        want = json.load(f)
    differ = sorted(k for k in set(want) | set(out) if want.get(k) != out.get(k))
    for k in differ:
        print(f"{k}: {want.get(k)} -> {out.get(k)}")
    print("same games" if not differ else f"{len(differ)} of {len(out)} digests differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
