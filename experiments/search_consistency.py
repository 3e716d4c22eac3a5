#!/usr/bin/env python
"""How much of the search's departures from its base a state determines: every searched decision
searched again on other random streams.

The search (``agents/search.py``) departs from its base's action when a candidate's paired mean
gain over W sampled worlds is one standard error above zero, so some departures are the noise of
close calls. A network trained on its choices (``experiments/train_selfplay.py``) can only learn
what the state determines: a departure the same state repeats on another stream of worlds. Here
a search seat plays ``--games`` episodes (hands or matches) in lockstep against ``--opponents``;
at each of its decisions where the search compared candidates, the same state is searched again
``--repeats`` times with the seat's random key changed, and the table gives, by the kind of the
base's action, how often the search departed, how often a departure repeated (the same action
again) and how often a second search departs where the first did not (the noise's rate)::

    python experiments/search_consistency.py --variant caribbean --mode matches \\
        --search search-caribbean --opponents sharp-caribbean,sharp,greedy --games 64 --steps 150 \\
        --out runs/search-consistency

Writes ``consistency.csv`` (one row per searched decision), ``consistency.md`` (the table, with
the decisions it rests on) and ``meta.json`` (arguments, seed, version, git commit) into ``--out``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

# a repeat's key is the seat's key xor this times the repeat's number (mod 2**64): another stream of worlds
_KEY_STEP = 0x9E3779B97F4A7C15


def search_again(env, searcher, rows: np.ndarray, repeats: int) -> np.ndarray:
    """The search's actions at ``rows`` on ``repeats`` other random streams (int64[repeats, rows]);
    the seats' keys and counters are left as they were."""
    keys, ctrs = env.la.keys.copy(), env.la.ctrs.copy()
    out = np.empty((repeats, rows.size), dtype=np.int64)
    try:
        for k in range(repeats):
            env.la.keys[:] = keys ^ np.uint64(_KEY_STEP * (k + 1) % 2**64)
            env.la.ctrs[:] = ctrs
            out[k] = searcher.search(env.la, env.rv, rows).actions
    finally:
        env.la.keys[:], env.la.ctrs[:] = keys, ctrs
    return out


def collect(variant: str, mode: str, search, opponents: tuple, games: int, steps: int, repeats: int,
            seed: int, progress: bool = True):
    """One row per decision the search (a ``runtime.strategies.Strategy``) compared candidates at:
    the base's action, the search's choice and its choices on the other streams."""
    import pandas as pd
    from tqdm import tqdm

    from kalooki_sim import load_rules
    from kalooki_sim.runtime.env import KalookiVecEnv
    from kalooki_sim.runtime.policy_play import checked_actions
    from kalooki_sim.runtime.strategies import learned_policy

    rules = load_rules(variant)
    searcher = learned_policy(search, rules)
    episode = "match" if mode == "matches" else "hand"
    env = KalookiVecEnv(rules, 1 + len(opponents), batch=games, lineup=["learner", *opponents], rotate=True, seed=seed,
                        episode_games=np.arange(games, dtype=np.int64), episode=episode, reward=episode)
    env.reset()
    rows = []
    for _ in tqdm(range(steps), disable=not progress, desc="search consistency", unit=" steps"):
        live = np.flatnonzero(~env.parked)
        if not live.size:
            break
        found = searcher.search(env.la, env.rv, live)
        compared = np.flatnonzero(found.n_candidates >= 2)
        if compared.size:
            again = search_again(env, searcher, live[compared], repeats)
            rows.append(pd.DataFrame({"base": found.candidates[compared, 0], "first": found.actions[compared],
                                      **{f"repeat_{k + 1}": again[k] for k in range(repeats)}}))
        play = np.zeros(env.batch, dtype=np.int64)
        play[live] = checked_actions(search.name, found.actions, env.mask[live])
        env.step(play)
    cols = ["base", "first", *(f"repeat_{k + 1}" for k in range(repeats))]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=cols, dtype=np.int64)


def summarise(decisions):
    """The table by the kind of the base's action: departures, and how often they repeat."""
    import pandas as pd

    from kalooki_sim.studies.expert_data import action_kind

    repeats = [c for c in decisions.columns if c.startswith("repeat_")]
    out = []
    for kind, d in decisions.assign(kind=action_kind(decisions["base"].to_numpy())).groupby("kind"):
        departed = d["first"] != d["base"]
        again = d.loc[departed, repeats]
        out.append({"base's action": kind, "decisions": len(d), "departed": departed.mean(),
                    "repeated (same action)": (again.to_numpy() == d.loc[departed, ["first"]].to_numpy()).mean()
                    if departed.any() else np.nan,
                    "departs where the first did not":
                    (d.loc[~departed, repeats].to_numpy() != d.loc[~departed, ["base"]].to_numpy()).mean()
                    if (~departed).any() else np.nan})
    return pd.DataFrame(out).sort_values("decisions", ascending=False, ignore_index=True)


def main(argv=None) -> int:
    from kalooki_sim.analysis.stats import markdown_table
    from kalooki_sim.runtime.strategies import StrategyError, load_strategy
    from kalooki_sim.studies.records import git_state, package_versions

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="caribbean")
    ap.add_argument("--mode", choices=("hands", "matches"), default="matches")
    ap.add_argument("--search", default="search-caribbean", help="a search strategy (name or TOML)")
    ap.add_argument("--opponents", default="sharp-caribbean,sharp,greedy")
    ap.add_argument("--games", type=int, default=64, help="episodes played in lockstep")
    ap.add_argument("--steps", type=int, default=150, help="steps of the lockstep batch (the search seat's decisions)")
    ap.add_argument("--repeats", type=int, default=2, help="other streams each compared decision is searched on")
    ap.add_argument("--seed", type=int, default=777)
    ap.add_argument("--out", default="runs/search-consistency")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    for name in ("games", "steps", "repeats"):
        if getattr(args, name) < 1:
            ap.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    try:
        strategy = load_strategy(args.search)
    except StrategyError as e:
        ap.error(f"--search: {e}")
    if not strategy.driven:
        ap.error(f"--search {args.search}: not a search strategy (its agent is {strategy.agent!r})")
    opponents = tuple(x.strip() for x in args.opponents.split(",") if x.strip())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "meta.json").write_text(json.dumps({"args": vars(args), "seed": args.seed, "git": git_state(),
                                               "versions": package_versions()}, indent=2, default=str) + "\n")
    decisions = collect(args.variant, args.mode, strategy, opponents, args.games, args.steps, args.repeats,
                        args.seed, progress=not args.quiet)
    decisions.to_csv(out / "consistency.csv", index=False)
    table = summarise(decisions)
    text = "\n".join([
        f"# How often `{args.search}`'s departures repeat ({args.variant} {args.mode})", "",
        f"Rests on {len(decisions):,} decisions where the search compared candidates: {args.games} episodes in "
        f"lockstep against {', '.join(opponents)}, {args.steps} steps, seed {args.seed}; each searched again on "
        f"{args.repeats} other random streams. `departed`: the search chose another action than its base's; "
        "`repeated`: a repeat chose that same action again; `departs where the first did not`: the rate "
        "a repeat departs from the base where the first search kept it (the noise a single search's "
        "label carries).", "",
        markdown_table(table, digits=3), ""])
    (out / "consistency.md").write_text(text)
    if not args.quiet:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
