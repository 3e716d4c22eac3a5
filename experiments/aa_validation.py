#!/usr/bin/env python
"""A/A validation of the tournament's statistics (``kalooki_sim.studies.aa``): many small duplicate
tournaments of two copies of one strategy beside different neighbours, for each player count and
mode; prints (and writes) how often the 95 % intervals of copy-vs-copy differences cover zero and
how often the sequential test falsely accepts H1.  ``--power WEAKER`` measures the test's power
instead: the strategy against WEAKER.

    python experiments/aa_validation.py --players 3 4 5 6 --modes hands matches --runs 200 --deals 100
    python experiments/aa_validation.py --players 4 --modes hands --runs 200 --power greedy-explore \\
        --strategy greedy

Each (players, mode) is its own run directory under ``--out`` (resumable: ``--resume``); the
combined table goes to ``<out>/summary.md``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kalooki_sim.studies.backends import add_backend_arguments, backend_options


def main(argv=None) -> int:
    from kalooki_sim.analysis.stats import markdown_table
    from kalooki_sim.studies.aa import COVERAGE_BAND, AAConfig, run_aa

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="caribbean")
    ap.add_argument("--players", type=int, nargs="+", default=[3, 4, 5, 6])
    ap.add_argument("--modes", nargs="+", choices=("hands", "matches"), default=["hands", "matches"])
    ap.add_argument("--strategy", default=AAConfig.strategy)
    ap.add_argument("--neighbours", default=",".join(AAConfig.neighbours))
    ap.add_argument("--power", default=None, metavar="WEAKER", help="measure power against this strategy")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--deals", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sprt-h1", type=float, default=2.0, metavar="POINTS")
    ap.add_argument("--max-hands", type=int, default=None)
    ap.add_argument("--out", default="runs/aa")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    add_backend_arguments(ap)
    args = ap.parse_args(argv)
    parts = []
    for mode in args.modes:
        for n in args.players:
            cfg = AAConfig(variant=args.variant, players=n, strategy=args.strategy,
                           neighbours=tuple(x.strip() for x in args.neighbours.split(",") if x.strip()),
                           weaker=args.power, mode=mode, deals=args.deals, runs=args.runs, seed=args.seed,
                           sprt_h1=args.sprt_h1 / 100.0, max_hands=args.max_hands,
                           out=str(Path(args.out) / f"{args.variant}-{mode}-{n}p"))
            try:
                _, summary = run_aa(cfg, resume=args.resume, progress=not args.quiet, **backend_options(args))
            except (ValueError, FileExistsError) as e:
                print(f"aa_validation: error: {e}", file=sys.stderr)
                return 2
            parts.append(summary.assign(players=n, mode=mode, deals=cfg.deals,
                                        seatings=summary.attrs["seatings"]))
    import pandas as pd

    table = pd.concat(parts, ignore_index=True)[["mode", "players", "seatings", "deals", "outcome", "runs", "rate",
                                                 "mc_se", "h0_rate", "undecided", "mean_deals", "mean_diff"]]
    what = f"power against {args.power}" if args.power else "A/A"
    text = (f"# {what}: {args.variant}, {args.strategy}, {args.runs} tournaments of {args.deals} deals per row, "
            f"seed {args.seed}\n\n`rate`: share of runs whose interval covers 0 (target "
            f"{COVERAGE_BAND[0]:.0%}-{COVERAGE_BAND[1]:.0%}), or for the SPRT the share accepting H1 "
            f"(H1: +{args.sprt_h1:g} points of win share).\n\n" + markdown_table(table) + "\n")
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "summary.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
