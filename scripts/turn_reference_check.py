#!/usr/bin/env python
"""The engine's play phase against the turn reference, at length (issue 37 item 6).

Plays many hands of every points preset and every house overlay with the compiled random and expert
agents and a biased random driver (``turn_reference.biased_choice``: prefers melding, laying off and
manipulating to discarding), and at every play-phase decision compares the engine's
``legal_mask()`` with ``kalooki_sim.engine.turn_reference.TurnModel`` in both directions, and after
every action the table, hand and bookkeeping.  Prints the number of decisions compared and every
disagreement with the position text (the turn's start as ``Game.from_text`` text, and the turn's
actions up to it).  Exit status 1 when anything disagrees.

    python scripts/turn_reference_check.py                      # 300 hands per rule set and driver
    python scripts/turn_reference_check.py --games 1000 --rules k40 na15+v2 --drivers biased
    python scripts/turn_reference_check.py --hypothesis 5000    # also random positions (tests' strategy)

The bounded version of this run is tests/test_turn_reference.py.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kalooki_sim import load_rules  # noqa: E402
from kalooki_sim.runtime.turn_comparison import Report, check_game  # noqa: E402

PRESETS = ["k40", "k51", "k101", "na15", "american"]
OVERLAYS = ["k40+v1", "k40+v2", "k40+v3", "k40+v4", "k40+v5", "k40+v6", "k40+v7",
            "k51+v2", "k101+v4", "na15+v1", "na15+v2", "na15+v3", "na15+v7",
            "american+v1", "american+v2", "american+v3", "american+v7"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", nargs="*", default=PRESETS + OVERLAYS, help="rule sets (preset+overlays)")
    ap.add_argument("--drivers", default="random,expert,biased", help="comma list: random, expert, greedy, biased")
    ap.add_argument("--games", type=int, default=300, help="hands per rule set and driver")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--players", default="3,4,5", help="comma list of table sizes, used in turn")
    ap.add_argument("--hypothesis", type=int, default=0,
                    help="also check this many random positions (the tests' hypothesis strategy)")
    ap.add_argument("--show", type=int, default=20, help="disagreements printed in full")
    ap.add_argument("--json", default="", help="write the disagreements to this file")
    args = ap.parse_args(argv)

    from tqdm import tqdm

    drivers = [d for d in args.drivers.split(",") if d]
    sizes = [int(x) for x in args.players.split(",") if x]
    jobs = [(name, d, args.seed + i) for name in args.rules for d in drivers for i in range(args.games)]
    total = Report()
    per = {}
    t0 = time.time()
    bar = tqdm(jobs, unit="hand", smoothing=0.05, mininterval=2.0)
    for name, driver, seed in bar:
        rules = load_rules(name)
        n = sizes[seed % len(sizes)]
        n = min(max(n, rules.players_min), rules.players_max)
        rep = Report()
        check_game(rules, n, seed, driver, rep, label=name)
        key = (name, driver)
        d = per.setdefault(key, [0, 0, 0, 0, 0.0])
        d[0] += 1
        d[1] += rep.turns
        d[2] += rep.decisions
        d[3] += len(rep.problems)
        total.add(rep)
        bar.set_postfix(decisions=total.decisions, disagreements=len(total.problems), refresh=False)
    elapsed = time.time() - t0
    if args.hypothesis:
        total.add(_hypothesis(args.hypothesis, args.seed))
    print()
    print(f"{'rules':<14} {'driver':<8} {'hands':>6} {'turns':>8} {'decisions':>10} {'disagree':>9}")
    for (name, driver), (h, tu, de, pr, _) in per.items():
        print(f"{name:<14} {driver:<8} {h:>6} {tu:>8} {de:>10} {pr:>9}")
    print(f"total: {total.turns} turns, {total.decisions} decisions compared, {total.actions} actions, "
          f"{len(total.problems)} disagreements ({elapsed:.0f} s for the played hands)")
    if total.problems:
        kinds = Counter((p["rules"], p["kind"]) for p in total.problems)
        print("by rule set and kind:", dict(kinds))
        seen = set()
        shown = 0
        for p in total.problems:
            sig = (p["kind"], json.dumps(p["detail"], default=str)[:120])
            if sig in seen:
                continue
            seen.add(sig)
            shown += 1
            if shown > args.show:
                break
            print("\n" + "-" * 100)
            print(f"[{p['rules']}] {p['kind']}: {p['detail']}")
            print(p["position"])
            print("turn's actions before it:", p["actions"])
        if args.json:
            Path(args.json).write_text(json.dumps(total.problems, indent=1, default=str))
    return 1 if total.problems else 0


def _hypothesis(n: int, seed: int) -> Report:
    """Random positions from the tests' hypothesis strategy, each followed for a turn."""
    import numpy as np
    from hypothesis import HealthCheck, given, settings

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_turn_reference import R, positions  # noqa: E402

    from kalooki_sim.runtime.game import Game
    from kalooki_sim.runtime.turn_comparison import check_position

    rep = Report()

    @settings(max_examples=n, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(positions())
    def run(case):
        name, text, s = case
        try:
            g = Game.from_text(text, R(name))
        except ValueError:
            return
        if g.phase != "play" or g.terminal:
            return
        before = len(rep.problems)
        check_position(g, rep, np.random.default_rng(s + seed), label=name + " (position)")
        for p in rep.problems[before:]:
            p["position"] = text + "\n# turn start above; the followed actions: " + str(p["actions"])

    run()
    print(f"hypothesis positions: {n} examples, {rep.decisions} decisions")
    return rep


if __name__ == "__main__":
    sys.exit(main())
