#!/usr/bin/env python
"""Rule-variant balance study: what each preset, house rule and knob does to the game (issue 30).

    python experiments/balance.py                      # the default study (configs/experiments/balance.toml)
    python experiments/balance.py --quick              # the same report at small sizes, a few minutes
    python experiments/balance.py --resume             # continue an interrupted run (nothing lost or counted twice)
    python experiments/balance.py --backend ray [--address ray://head:10001] [--num-cpus 2]
    python experiments/balance.py --report-only        # rewrite report.md from the rows on disk
    python experiments/balance.py --estimate 0.0625    # play 1/16 of every cell, project the play time

The grid, the cells and the statistics live in ``kalooki_sim.studies.balance``, the execution of shards in
``kalooki_sim.studies.backends``, the report in ``kalooki_sim.studies.balance_report``; this file only reads the
arguments.  The run directory (``out`` of the config, or ``--out``) gets ``meta.json``, the rows
of every cell (parquet shards), ``summary/*.parquet``, ``report.md`` and its figures.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from kalooki_sim.studies.backends import add_backend_arguments, backend_options

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "configs" / "experiments" / "balance.toml"
QUICK = ROOT / "configs" / "experiments" / "balance_quick.toml"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", help=f"study TOML (default {DEFAULT.relative_to(ROOT)})")
    ap.add_argument("--quick", action="store_true", help=f"use {QUICK.relative_to(ROOT)}")
    ap.add_argument("--out", help="run directory (default: the config's out)")
    ap.add_argument("--resume", action="store_true", help="continue the run in --out")
    add_backend_arguments(ap)
    ap.add_argument("--report-only", action="store_true", help="only (re)write the statistics and report.md")
    ap.add_argument("--list-cells", action="store_true", help="print the grid and exit")
    ap.add_argument("--estimate", type=float, metavar="FRACTION",
                    help="play this fraction of every cell (e.g. 0.0625) and project the study's play time")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)

    from kalooki_sim.studies.balance import estimate, expand, load_config, run_study, shards
    from kalooki_sim.studies.balance_report import write_report

    path = args.config or (QUICK if args.quick else DEFAULT)
    cfg = load_config(path, out=args.out)
    if args.list_cells:
        cells = expand(cfg)
        for c in cells:
            print(f"{c.kind:8s} {c.id:60s} deals {c.deals:>7,} shards {len(shards(cfg, c))}")
        print(f"{len(cells)} cells")
        return 0
    if args.estimate:
        est = estimate(cfg, args.estimate, progress=not args.no_progress)
        by = est.groupby("kind")[["projected_hands", "projected_seconds"]].sum()
        print(by.round(0).to_string())
        print(f"projected play: {est.attrs['hands']:,.0f} hands in {est.attrs['seconds']:,.0f} s on this process "
              f"({est.attrs['hands'] / est.attrs['seconds']:,.0f} hands/s)")
        return 0
    t0 = time.time()
    if args.report_only:
        report = write_report(cfg.out, cfg)
    else:
        try:
            run = run_study(cfg, resume=args.resume, progress=not args.no_progress, **backend_options(args))
        except KeyboardInterrupt:
            print("balance: interrupted; the finished shards are kept: the same command with --resume continues",
                  file=sys.stderr)
            return 130
        report = write_report(run.path, cfg)
    print(f"report: {report}  ({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
