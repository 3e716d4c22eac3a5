#!/usr/bin/env python
"""What a network's departures from the search's base are worth, measured by the search itself on
decisions the network was not fitted to.

At every decision where the search compared candidates, the expert data keep each candidate's
paired gain over the base's action (rollouts on common worlds) and its standard error
(``studies.expert_data``). For a network that never saw those decisions, the mean of the gains
at the actions it picks is an unbiased estimate of what its departures win, in the search's value:
it tells a fit that learned the search's signal from one that learned its noise, without a
tournament, by the kind of the base's action. (The search's own choices on the same decisions
cannot be judged so: they were picked by those same noisy gains.) ::

    python experiments/departure_value.py --variant caribbean --data runs/RUN/expert_data \\
        --tables decisions/round_02 --checkpoints a.pt,b.pt --kinds draw-stock,draw-discard \\
        --out runs/departure-value

A network's choice is its greedy action (argmax of the masked logits, as ``LearnedPolicy(net,
greedy=True)`` plays). A choice that is not among the search's candidates has no measured gain:
it is counted (``not compared``) and left out of the means. Writes ``departure_value.csv``,
``departure_value.md`` (the table, with the decisions it rests on) and ``meta.json`` (arguments,
version, git commit) into ``--out``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def compared_rows(data, kinds=None) -> np.ndarray:
    """The decisions where the search compared candidates (two or more), of the base's kinds ``kinds``
    (``studies.expert_data.ACTION_KINDS``; None: every kind)."""
    from kalooki_sim.studies.expert_data import action_kind

    rows = np.flatnonzero(np.diff(data.cand_ptr) >= 2)
    if kinds is not None:
        rows = rows[np.isin(action_kind(data.candidates[data.cand_ptr[rows]]), list(kinds))]
    return rows


def departure_value(data, rows: np.ndarray, chosen: np.ndarray):
    """By the kind of the base's action at ``rows`` and over them all: how often ``chosen`` departs
    from the base, and the search's measured gain of ``chosen`` per decision (0 where it is the
    base's action) and per departure, with the standard error of the mean per decision (the
    decisions taken as independent: each gain comes from its own rollouts, but decisions of one
    game share its deal, so read it as a guide, not as a tournament's clustered interval)."""
    import pandas as pd

    from kalooki_sim.studies.expert_data import action_kind

    rows, chosen = np.asarray(rows, dtype=np.int64), np.asarray(chosen, dtype=np.int64)
    base = data.candidates[data.cand_ptr[rows]]
    at, cand, cand_gain, _ = data.searched(rows)
    hit = cand == chosen[at]
    gain = np.full(rows.size, np.nan)           # a choice the search did not compare: no measured gain
    gain[at[hit]] = cand_gain[hit]
    gain[chosen == base] = 0.0
    kind = action_kind(base)
    out = []
    for name, sel in [*((k, kind == k) for k in pd.unique(kind)), ("all", np.ones(rows.size, dtype=bool))]:
        g, dep = gain[sel], (chosen != base)[sel]
        known = ~np.isnan(g)
        n = int(known.sum())
        out.append({"base's action": name, "decisions": int(sel.sum()), "departed": dep.mean(),
                    "not compared": int((~known).sum()),
                    "gain per 1,000 decisions": 1000 * g[known].mean() if n else np.nan,
                    "se": 1000 * g[known].std(ddof=1) / np.sqrt(n) if n > 1 else np.nan,
                    "gain per departure": g[known & dep].mean() if (known & dep).any() else np.nan})
    return pd.DataFrame(out)


def network_choices(checkpoint, rules, data, rows: np.ndarray, chunk: int = 4096) -> np.ndarray:
    """The network's greedy action at each of ``rows`` (its masked logits' argmax)."""
    import torch

    from kalooki_sim.agents.learned import load_checkpoint
    from kalooki_sim.runtime.env import N_ACTIONS, OBS_DIM

    net, _ = load_checkpoint(checkpoint, rules)
    net.eval()
    out = []
    with torch.no_grad():
        for i in range(0, rows.size, chunk):
            obs, mask, _ = data.batch(rows[i:i + chunk], OBS_DIM, N_ACTIONS)
            out.append(net(torch.from_numpy(obs), torch.from_numpy(mask))[0].argmax(1).numpy())
    return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)


def main(argv=None) -> int:
    import pandas as pd
    from tqdm import tqdm

    from kalooki_sim import load_rules
    from kalooki_sim.analysis.stats import markdown_table
    from kalooki_sim.studies.expert_data import check_action_kinds, read_decisions
    from kalooki_sim.studies.records import git_state, package_versions

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="caribbean", help="the rules the checkpoints were trained for")
    ap.add_argument("--data", required=True, help="an expert-data directory (a training run's expert_data)")
    ap.add_argument("--tables", required=True, help="its tables, comma-separated (e.g. decisions/round_02)")
    ap.add_argument("--checkpoints", required=True, help="network checkpoints (.pt), comma-separated")
    ap.add_argument("--kinds", default="", help="kinds of the base's action to judge, comma-separated (default all)")
    ap.add_argument("--out", default="runs/departure-value")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    kinds = tuple(x.strip() for x in args.kinds.split(",") if x.strip()) or None
    checkpoints = [x.strip() for x in args.checkpoints.split(",") if x.strip()]
    try:
        if kinds is not None:
            check_action_kinds(kinds)
        data = read_decisions(args.data, [x.strip() for x in args.tables.split(",") if x.strip()])
    except (ValueError, FileNotFoundError) as e:
        ap.error(str(e))
    missing = [c for c in checkpoints if not Path(c).is_file()]
    if missing or not checkpoints:
        ap.error(f"--checkpoints: no such file {', '.join(missing)}" if missing else "--checkpoints: none given")
    rules = load_rules(args.variant)
    rows = compared_rows(data, kinds)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "meta.json").write_text(json.dumps({"args": vars(args), "git": git_state(),
                                               "versions": package_versions()}, indent=2, default=str) + "\n")
    tables = []
    for ckpt in tqdm(checkpoints, disable=args.quiet, desc="networks", unit=" checkpoints"):
        table = departure_value(data, rows, network_choices(ckpt, rules, data, rows))
        tables.append(table.assign(checkpoint=ckpt)[["checkpoint", *table.columns]])
    result = pd.concat(tables, ignore_index=True)
    result.to_csv(out / "departure_value.csv", index=False)
    text = "\n".join([
        "# What the networks' departures from the search's base are worth, by the search's gains", "",
        f"Rests on {rows.size:,} decisions where the search compared candidates ({args.tables} of {args.data}"
        f"{', base kinds ' + ', '.join(kinds) if kinds else ''}). `gain per 1,000 decisions`: the search's "
        "measured paired gain of the network's action (0 at the base's), summed per 1,000 decisions, in the "
        "search's value; `se` its standard error; `not compared`: choices that were not among the "
        "candidates (left out of the means). Unbiased only on decisions the network was not fitted to.", "",
        markdown_table(result, digits=4), ""])
    (out / "departure_value.md").write_text(text)
    if not args.quiet:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
