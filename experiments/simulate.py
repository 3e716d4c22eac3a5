"""Run a simulation experiment described by a TOML file (configs/experiments/*.toml).

    python experiments/simulate.py configs/experiments/caribbean_greedy_vs_random.toml [--resume] [--backend ray]

Keys are the fields of ``kalooki_sim.studies.simulate.SimulationConfig``; an unknown key is an error.  The
run directory gets the config, seed, rules, versions and git commit next to the results.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tomllib

from kalooki_sim.studies.backends import add_backend_arguments, backend_options
from kalooki_sim.studies.simulate import SimulationConfig, format_summary, run_simulation, write_summary


def load_config(path: str) -> SimulationConfig:
    with open(path, "rb") as f:
        data = tomllib.load(f)
    known = {f.name for f in dataclasses.fields(SimulationConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise SystemExit(f"{path}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    if "agents" in data:
        data["agents"] = tuple(data["agents"])
    return SimulationConfig(**data)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config")
    ap.add_argument("--resume", action="store_true")
    add_backend_arguments(ap)
    args = ap.parse_args(argv)
    cfg = load_config(args.config)
    run = run_simulation(cfg, resume=args.resume, **backend_options(args))
    print(format_summary(write_summary(run, cfg)))
    print(f"results: {run.path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
