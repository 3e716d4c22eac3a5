#!/usr/bin/env python
"""Strength against compute: the search agent at several numbers of worlds (W) and candidates (k).

Each point is a search over ``--base`` with W worlds and k candidates (its strategy file written
into the run), played in a duplicate tournament on the balanced design (``kalooki tournament``:
every deal in the 12 seatings of 4 players) against the base and the lineup's other entrants,
on the same deals for every point; its strength is the paired difference of win share (or score)
against the base, 95 % clustered by deal, and its cost the median time of one decision of the
search seat on one core (``benchmarks/search.py``'s timing: all the seat's decisions, searched or
not).  W varies at k = ``--at-candidates`` and k at W = ``--at-worlds``; k of 64 is "all" (the
base's every distinct choice)::

    python experiments/search_curve.py --variant caribbean --base sharp --worlds 4 16 64 256 \\
        --candidates 2 3 8 64 --deals 40 --seed 400 --out runs/search-curve

Writes ``curve.csv``, ``curve.md`` (the table with the deals it rests on), ``curve.png`` and
``meta.json`` (the arguments, seed, version and git commit) into ``--out``; each point's tournament
is its own run directory there (resumable: a finished point is read back, not replayed).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _points(worlds, candidates, at_worlds, at_candidates):
    """The grid: W at the fixed k, then k at the fixed W, each point once, in order."""
    out = []
    for p in [(w, at_candidates) for w in worlds] + [(at_worlds, k) for k in candidates]:
        if p not in out:
            out.append(p)
    return out


def _strategy_file(out: Path, base: str, worlds: int, candidates: int, extra: dict) -> Path:
    path = out / f"search-w{worlds}-k{candidates}.toml"
    params = {"worlds": worlds, "candidates": candidates, **extra}
    lines = ['agent = "search"', f'base = "{base}"',
             f'description = "search over {base}: W {worlds}, k {candidates} (experiments/search_curve.py)"',
             "", "[params]"] + [f"{k} = {v}" for k, v in params.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def _cost(variant: str, strategy: Path, base: str, hands: int, seed: int) -> dict:
    """``benchmarks/search.py``'s timing of one search seat among copies of its base (one core),
    in this process (its kernels are loaded already)."""
    import contextlib
    import importlib.util
    import io

    import numba

    spec = importlib.util.spec_from_file_location("_search_bench", ROOT / "benchmarks" / "search.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    threads, printed = numba.get_num_threads(), io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            bench.main(["--variant", variant, "--search", str(strategy), "--base", base, "--hands", str(hands),
                        "--seed", str(seed)])
    finally:
        numba.set_num_threads(threads)          # the benchmark times one core
    return json.loads(printed.getvalue().strip().splitlines()[-1])


def main(argv=None) -> int:
    import pandas as pd

    from kalooki_sim import load_rules
    from kalooki_sim.studies.records import git_state, package_versions
    from kalooki_sim.studies.tournament import OUTCOMES, TournamentConfig, analyse, entrant_labels, run_tournament

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="caribbean")
    ap.add_argument("--mode", choices=("hands", "matches"), default="hands")
    ap.add_argument("--base", default="sharp")
    ap.add_argument("--others", default="sharp-caribbean,greedy", help="the lineup's other entrants")
    ap.add_argument("--worlds", type=int, nargs="+", default=[4, 16, 64, 256])
    ap.add_argument("--candidates", type=int, nargs="+", default=[2, 3, 8, 64])
    ap.add_argument("--at-worlds", type=int, default=16, help="W of the points that vary k")
    ap.add_argument("--at-candidates", type=int, default=3, help="k of the points that vary W")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="another search parameter of every point (e.g. match_sigma=30)")
    ap.add_argument("--deals", type=int, default=40)
    ap.add_argument("--seed", type=int, default=400)
    ap.add_argument("--cost-hands", type=int, default=20, help="hands timed for each point's cost")
    ap.add_argument("--out", default="runs/search-curve")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    extra = {}
    for kv in args.param:
        name, _, value = kv.partition("=")
        try:
            extra[name.strip()] = float(value)
        except ValueError:
            ap.error(f"--param {kv!r}: expected NAME=NUMBER")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "meta.json").write_text(json.dumps({"args": vars(args), "seed": args.seed, "git": git_state(),
                                               "versions": package_versions()}, indent=2, default=str) + "\n")
    rules = load_rules(args.variant)
    others = [x.strip() for x in args.others.split(",") if x.strip()]
    share, score = OUTCOMES[args.mode]
    rows = []
    for worlds, candidates in _points(args.worlds, args.candidates, args.at_worlds, args.at_candidates):
        strategy = _strategy_file(out, args.base, worlds, candidates, extra)
        agents = (str(strategy), args.base, *others)
        label, base_label = entrant_labels(agents)[:2]
        cfg = TournamentConfig(variant=args.variant, players=4, agents=agents, deals=args.deals, mode=args.mode,
                               seed=args.seed, shard_deals=max(1, args.deals // 4),
                               out=str(out / f"w{worlds}-k{candidates}"))
        run = run_tournament(cfg, progress=not args.quiet, resume=(Path(cfg.out) / "meta.json").exists())
        tables = analyse(run, cfg, rules)
        row = {"worlds": worlds, "candidates": candidates}
        for what, key in ((share, "win share: paired differences"), (score, f"{score}: paired differences")):
            d = tables[key]
            pair = d[(d["a"] == label) & (d["b"] == base_label)]
            sign = 1.0
            if pair.empty:
                pair, sign = d[(d["a"] == base_label) & (d["b"] == label)], -1.0
            r = pair.iloc[0]
            lo, hi = sorted((sign * r["lo"], sign * r["hi"]))
            row.update({f"{what}_diff": sign * r["diff"], f"{what}_lo": lo, f"{what}_hi": hi})
            row["deals"] = int(r["n_deals"])
        cost = _cost(args.variant, strategy, args.base, args.cost_hands, args.seed)
        row["median_ms_per_decision"] = cost["median_ms_per_decision"]
        row["median_ms_per_searched_decision"] = cost["median_ms_per_searched_decision"]
        rows.append(row)
        if not args.quiet:
            print(json.dumps(row), flush=True)
    curve = pd.DataFrame(rows)
    curve.to_csv(out / "curve.csv", index=False)
    _write_table(curve, out, args, share, score)
    _plot(curve, out, args, share)
    return 0


def _write_table(curve, out: Path, args, share: str, score: str) -> None:
    scale = 100.0                       # win share in points
    lines = [f"# Search over {args.base}: strength against compute ({args.variant} {args.mode})", "",
             f"Each row: a duplicate tournament of {int(curve['deals'].iloc[0])} deals x 12 seatings (seed "
             f"{args.seed}), the search against its base `{args.base}` beside {args.others}; 95 % intervals "
             "clustered by deal; cost: median ms per decision of the search seat on one core.", "",
             f"| W | k | {share} - base (points) | {score} - base | ms per decision | ms per searched decision |",
             "|---:|---:|---|---|---:|---:|"]
    for r in curve.itertuples():
        d = r._asdict()
        lines.append(f"| {r.worlds} | {'all' if r.candidates >= 64 else r.candidates} | "
                     f"{scale * d[f'{share}_diff']:+.1f} [{scale * d[f'{share}_lo']:+.1f}, {scale * d[f'{share}_hi']:+.1f}] | "
                     f"{d[f'{score}_diff']:+.1f} [{d[f'{score}_lo']:+.1f}, {d[f'{score}_hi']:+.1f}] | "
                     f"{r.median_ms_per_decision:.2f} | {r.median_ms_per_searched_decision:.2f} |")
    (out / "curve.md").write_text("\n".join(lines) + "\n")


def _plot(curve, out: Path, args, share: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for (what, fixed), part in ((("W", args.at_candidates), curve[curve["candidates"] == args.at_candidates]),
                                (("k", args.at_worlds), curve[curve["worlds"] == args.at_worlds])):
        part = part.sort_values("median_ms_per_decision")
        y = 100 * part[f"{share}_diff"]
        err = [y - 100 * part[f"{share}_lo"], 100 * part[f"{share}_hi"] - y]
        ax.errorbar(part["median_ms_per_decision"], y, yerr=err, marker="o", capsize=3,
                    label=f"{what} varies ({'k' if what == 'W' else 'W'} = {fixed})")
        for x, yy, w, k in zip(part["median_ms_per_decision"], y, part["worlds"], part["candidates"]):
            ax.annotate(f"W{w} k{'all' if k >= 64 else k}", (x, yy), textcoords="offset points", xytext=(4, 4),
                        fontsize=7)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("median ms per decision (one core)")
    ax.set_ylabel(f"{share} - {args.base} (points, 95 %)")
    ax.set_title(f"search over {args.base}, {args.variant} {args.mode}: {int(curve['deals'].iloc[0])} deals a point")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "curve.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
