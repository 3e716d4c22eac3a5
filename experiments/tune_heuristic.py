#!/usr/bin/env python
"""Tune a compiled heuristic's parameter row with CMA-ES against a fixed field, on common deals.

    python experiments/tune_heuristic.py --variant caribbean --strategy greedy --save-as greedy-tuned-caribbean
    python experiments/tune_heuristic.py --config configs/experiments/tune_caribbean.toml [--resume] [--backend ray]

Every candidate of a generation plays the same fresh deals, each in every seating of the table
(candidate + field), in one batch of the compiled loop (``tournament.entrant_mean``: one task per
candidate, in this process or on Ray, ``--backend``), so candidates are compared on identical cards; its fitness is its mean win share (or mean penalty / score, by
``objective``) over single hands or, with ``mode = "matches"``, over whole matches (Caribbean: 9
hands, lowest total wins; the K40 family: to elimination, for money), which is what a player of
the variant is after: a setting tuned for hands won may lose matches by holding more when it loses.  CMA-ES (the ``cma`` package) searches the parameters named by ``params`` within
``agents.base.PARAM_BOUNDS``, scaled to [0, 1].  After every generation the optimiser's state and
the learning curve are written atomically to ``out``, so an interrupted run resumes where it
stopped (``--resume``): no generation is lost or played twice.  (A resumed run continues from the
pickled optimiser; its later samples are not guaranteed to equal an uninterrupted run's.)  At the end the tuned row (CMA's
favourite mean) is saved as a named strategy ``configs/agents/<save_as>.toml``, and a fresh
duplicate tournament on deals never used for tuning (``check_seed``) compares it with its untuned
self: ``check/results.md`` has the paired difference and its 95 % interval.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pickle
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kalooki_sim.studies.backends import add_backend_arguments, backend_options


@dataclass
class TuneArgs:
    variant: str = "caribbean"
    strategy: str = "greedy"                 # whose parameter row is tuned (a named strategy or base agent)
    field: tuple[str, ...] = ("greedy", "greedy", "greedy")   # the fixed opponents
    params: tuple[str, ...] = ("call_threshold", "draw_threshold", "gap_weight")   # names to tune
    objective: str = "win_share"             # win_share (higher) | penalty (lower; hands) | score (matches)
    mode: str = "hands"                      # hands | matches (whole matches, as the tournament plays them)
    max_hands: int = 60                      # matches: hand cap of an elimination match
    generations: int = 12
    popsize: int = 8
    sigma0: float = 0.25                     # in the [0, 1]-scaled space
    deals_per_generation: int = 300
    seed: int = 0
    out: str = "runs/tune"
    save_as: str | None = None               # configs/agents/<save_as>.toml
    check_deals: int = 2000
    check_seed: int = 1
    strategies_dir: str = "configs/agents"


def load_args(path: str, **overrides) -> TuneArgs:
    with open(path, "rb") as f:
        data = tomllib.load(f)
    known = {f.name for f in dataclasses.fields(TuneArgs)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise SystemExit(f"{path}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    for k in ("field", "params"):
        if k in data:
            data[k] = tuple(data[k])
    data.update({k: v for k, v in overrides.items() if v is not None})
    return TuneArgs(**data)


def _atomic(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class Problem:
    """The candidate's parameter row from a point of the scaled search space, and its fitness."""

    def __init__(self, a: TuneArgs):
        from kalooki_sim import load_rules
        from kalooki_sim.agents.base import PARAM_BOUNDS, PARAM_NAMES
        from kalooki_sim.runtime.strategies import lineup

        self.a = a
        self.rules = load_rules(a.variant)
        strats, ids, params = lineup((a.strategy,) + tuple(a.field))
        self.base = strats[0]
        names = PARAM_NAMES[self.base.agent_id]
        bad = [p for p in a.params if p not in names]
        if bad or not a.params:
            raise SystemExit(f"params: {self.base.agent} has parameters {', '.join(names)}; got {', '.join(a.params) or 'none'}")
        self.idx = [names.index(p) for p in a.params]
        bounds = PARAM_BOUNDS[self.base.agent_id]
        self.lo = np.array([bounds[i][0] for i in self.idx])
        self.hi = np.array([bounds[i][1] for i in self.idx])
        self.ids, self.params = ids, params
        self.n = len(ids)
        from kalooki_sim.studies.tournament import OUTCOMES

        if a.mode not in OUTCOMES:
            raise SystemExit(f"mode must be one of {', '.join(OUTCOMES)}, not {a.mode!r}")
        if a.objective not in OUTCOMES[a.mode]:
            raise SystemExit(f"objective in {a.mode} mode must be one of {', '.join(OUTCOMES[a.mode])}, "
                             f"not {a.objective!r}")
        # the direction of the objective: win share and money up, penalties and totals down
        self.higher = a.objective == "win_share" or (a.objective == "score"
                                                     and self.rules.match_mode != "fixed_hands_low_total")
        self.extra = {}
        if a.mode == "matches" and self.rules.match_mode == "elimination_pool":
            self.extra = dict(max_hands=a.max_hands)

    def row(self, z) -> np.ndarray:
        r = self.params[0].copy()
        r[self.idx] = self.lo + np.clip(np.asarray(z), 0.0, 1.0) * (self.hi - self.lo)
        return r

    def start(self) -> np.ndarray:
        x = self.params[0][self.idx]
        return np.clip((x - self.lo) / np.where(self.hi > self.lo, self.hi - self.lo, 1.0), 0.0, 1.0)

    def evaluate(self, zs, generation: int, backend) -> np.ndarray:
        """Fitness (lower is better) of every candidate, all on the generation's common deals: one
        task per candidate (candidate + field, every seating), run on ``backend`` (local or Ray)."""
        from kalooki_sim.studies.runner import Task
        from kalooki_sim.studies.tournament import entrant_mean

        a = self.a
        deals = np.arange(generation * a.deals_per_generation, (generation + 1) * a.deals_per_generation)
        tasks = [Task((generation, i), entrant_mean,
                      (self.rules, self.n, self.ids, np.vstack([self.row(z), self.params[1:]]), deals, a.seed,
                       a.mode, a.objective, self.extra.get("max_hands")), (), i)
                 for i, z in enumerate(zs)]
        v = np.zeros(len(tasks))
        for task, mean in backend.run(tasks):
            v[task.shard] = mean
        return -v if self.higher else v


def tune(a: TuneArgs, resume: bool = False, progress: bool = True, backend="local", **backend_opts) -> dict:
    """Run (or resume) the tuning; every generation's candidates are tasks on ``backend`` ("local",
    "ray" with its ``backend_opts``: ``kalooki_sim.studies.backends``), which give the same fitness."""
    import cma
    from tqdm import tqdm

    from kalooki_sim.studies.backends import check_backend, make_backend
    from kalooki_sim.studies.records import first_difference

    check_backend(backend, **backend_opts)
    prob = Problem(a)
    out = Path(a.out)
    state_file = out / "state.pkl"
    if state_file.exists() and not resume:
        raise SystemExit(f"{out} already holds a tuning run; pass --resume to continue it")
    out.mkdir(parents=True, exist_ok=True)
    if state_file.exists():
        st = pickle.loads(state_file.read_bytes())
        diff = first_difference("arguments", st["args"], dataclasses.asdict(a))
        if diff:
            raise SystemExit(f"cannot resume {out}: {diff}")
        es, history = st["es"], st["history"]
    else:
        from kalooki_sim.studies.records import git_state, package_versions

        (out / "meta.json").write_text(json.dumps({"args": dataclasses.asdict(a), "git": git_state(),
                                                   "versions": package_versions()}, indent=2, default=str))
        es = cma.CMAEvolutionStrategy(prob.start(), a.sigma0,
                                      {"bounds": [0.0, 1.0], "popsize": a.popsize, "seed": a.seed + 1,
                                       "verbose": -9})
        history = []
    be = make_backend(backend, **backend_opts) if isinstance(backend, str) else backend
    with tqdm(total=a.generations, initial=len(history), disable=not progress, desc=f"CMA-ES ({be.name})",
              unit=" gen") as bar:
        while len(history) < a.generations:
            g = len(history)
            # cma samples from numpy's global generator: seeding it per generation makes a resumed
            # run draw what an uninterrupted one draws
            np.random.seed((a.seed * 1_000_003 + g) % 2**32)
            zs = es.ask()
            f = prob.evaluate(zs, g, be)
            es.tell(zs, list(f))
            fav = prob.row(es.result.xfavorite)
            history.append({"generation": g, "best": float(f.min()), "mean": float(f.mean()),
                            "favourite": [float(x) for x in fav[prob.idx]], "sigma": float(es.sigma)})
            _atomic(state_file, pickle.dumps({"args": dataclasses.asdict(a), "es": es, "history": history}))
            bar.set_postfix_str(f"best {-f.min() if prob.higher else f.min():.4f}")
            bar.update(1)
    if isinstance(backend, str):
        be.close()
    _curve(out, history, a, prob.higher)
    tuned = prob.row(es.result.xfavorite)
    result = {"params": dict(zip(a.params, [float(x) for x in tuned[prob.idx]])), "history": history}
    (out / "result.json").write_text(json.dumps(result, indent=2))
    if a.save_as:
        result["strategy_file"] = str(save_strategy(a, prob, tuned))
        result["check"] = check(a, out)
    return result


def _curve(out: Path, history, a: TuneArgs, higher: bool) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sign = -1 if higher else 1
    g = [h["generation"] for h in history]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(g, [sign * h["best"] for h in history], marker="o", label="best of the generation")
    ax.plot(g, [sign * h["mean"] for h in history], marker=".", label="generation mean")
    ax.set_xlabel(f"generation ({a.deals_per_generation} common deals each, every seating, {a.mode})")
    ax.set_ylabel(f"candidate's {a.objective.replace('_', ' ')} ({'higher' if higher else 'lower'} is better)")
    ax.set_title(f"CMA-ES tuning of {a.strategy} ({a.variant}) against {', '.join(a.field)}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "learning_curve.png", dpi=120, bbox_inches="tight")
    plt.close(fig)


def save_strategy(a: TuneArgs, prob: Problem, row) -> Path:
    from kalooki_sim.agents.base import PARAM_NAMES

    names = PARAM_NAMES[prob.base.agent_id]
    lines = [f"# Tuned by experiments/tune_heuristic.py: CMA-ES over {', '.join(a.params)} of {a.strategy}",
             f"# against {', '.join(a.field)} in {a.variant} ({a.generations} generations of {a.popsize},",
             f"# {a.deals_per_generation} common deals each, seed {a.seed}); objective {a.objective} ({a.mode}).",
             f'agent = "{prob.base.agent}"',
             f'description = "{a.strategy} tuned for {a.variant} by CMA-ES ({a.objective} against {", ".join(a.field)})"',
             "", "[params]"]
    lines += [f"{n} = {float(v):.6g}" for n, v in zip(names, row)]
    path = Path(a.strategies_dir) / f"{a.save_as}.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def check(a: TuneArgs, out: Path) -> dict:
    """A fresh duplicate tournament (seed ``check_seed``: deals never used in tuning), in the
    tuning's mode: tuned vs untuned among the field; returns the paired difference of their
    objective (tuned minus untuned) with its 95 % interval."""
    from kalooki_sim.studies.tournament import TournamentConfig, entrant_labels, run_tournament

    path = Path(a.strategies_dir) / f"{a.save_as}.toml"
    cfg = TournamentConfig(variant=a.variant, players=len(a.field) + 1,
                           agents=(str(path), a.strategy) + tuple(a.field[1:]), deals=a.check_deals,
                           seed=a.check_seed, out=str(out / "check"), mode=a.mode,
                           max_hands=a.max_hands if a.mode == "matches" else None)
    run = run_tournament(cfg, resume=(out / "check" / "meta.json").exists(), progress=False)
    import pandas as pd

    tab = pd.read_csv(run.path / "results.csv")
    name = "win share" if a.objective == "win_share" else a.objective
    diff = tab[(tab["table"] == f"{name}: paired differences")]
    tuned, untuned = entrant_labels(cfg.agents)[:2]     # the entrants' labels in the tables
    row = diff[((diff["a"] == tuned) & (diff["b"] == untuned)) | ((diff["b"] == tuned) & (diff["a"] == untuned))]
    r = row.iloc[0]
    sign = 1 if r["a"] == tuned else -1
    lo, hi = sorted((sign * r["lo"], sign * r["hi"]))
    res = {"objective": a.objective, "mode": a.mode, "diff": float(sign * r["diff"]), "lo": float(lo),
           "hi": float(hi), "n_deals": int(r["n_deals"])}
    (out / "check.json").write_text(json.dumps(res, indent=2))
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", help="a TOML file of TuneArgs fields")
    for f in dataclasses.fields(TuneArgs):
        flag = "--" + f.name.replace("_", "-")
        if f.name in ("field", "params"):
            ap.add_argument(flag, help="comma-separated")
        else:
            ap.add_argument(flag, type=type(f.default) if f.default is not None else str)
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--quiet", action="store_true")
    add_backend_arguments(ap)
    args = ap.parse_args(argv)
    ns = vars(args).copy()
    resume, quiet, config = ns.pop("resume"), ns.pop("quiet"), ns.pop("config")
    for k in ("backend", "address", "num_cpus"):
        ns.pop(k)
    for k in ("field", "params"):
        if ns.get(k):
            ns[k] = tuple(x.strip() for x in ns[k].split(","))
    a = load_args(config, **ns) if config else TuneArgs(**{k: v for k, v in ns.items() if v is not None})
    result = tune(a, resume=resume, progress=not quiet, **backend_options(args))
    print(json.dumps({k: v for k, v in result.items() if k != "history"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
