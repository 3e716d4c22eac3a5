"""The main job: simulate many hands (or matches) with compiled agents and log what happened.

Work is split into shards of consecutive game ids, the tasks of the study runner (``runner``:
in this process or on Ray).  Every game is fully determined by (rules, seed, game id, agents), so
shards can run in any order, on any number of threads or machines, and an interrupted run resumes
by skipping the shards already on disk: nothing is lost or counted twice.
Results go to a run directory (``records.RunDir``): the per-hand (and per-match) parquet tables,
``meta.json`` with everything needed to reproduce them, ``summary.csv`` and a penalty histogram
(points-variant matches also a money histogram, ``money.png``).

Matches: Caribbean plays 9 hands (lowest total wins); K40/K51/K101 play to elimination (capped at
``max_hands`` hands, default 200; a capped match has ``finished = 0`` and no winner); NA15/AMER play
``hands_per_match`` hands (default: the rules' ``n_hands``, else 10).  See docs/match-scoring.md.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kalooki_sim.analysis.stats import _sort_key, cluster_codes, clustered_mean, summarize_clustered
from kalooki_sim.core.rules import load_rules

from .backends import check_backend
from .records import RunDir
from .runner import Task, run_tasks, shard_ranges


@dataclass(frozen=True)
class SimulationConfig:
    variant: str = "caribbean"
    players: int = 4
    agents: tuple[str, ...] = ("greedy", "greedy", "random", "random")
    games: int = 1000
    mode: str = "hands"          # "hands": one hand per game; "matches": whole matches
    seed: int = 0
    shard_size: int = 20_000
    out: str = "runs/simulate"
    hands_per_match: int | None = None   # matches: hands of a Caribbean / NA15 / AMER match
    max_hands: int | None = None         # matches: hand cap of an elimination match (K40 family)
    buy_back: str = "always"             # matches: buy-back policy of every player ("always"/"never")


# fields added after the first release: left out of meta.json while they have their default, so
# run directories written before them still resume
_LATE_DEFAULTS = {"hands_per_match": None, "max_hands": None, "buy_back": "always"}


def config_dict(cfg: SimulationConfig) -> dict:
    d = asdict(cfg)
    for k, v in _LATE_DEFAULTS.items():
        if d.get(k) == v:
            d.pop(k)
    return d


def points_matches(cfg: SimulationConfig, rules) -> bool:
    """Matches played on the score sheet of ``kalooki_sim.engine.match`` (every variant but Caribbean)."""
    return cfg.mode == "matches" and rules.match_mode != "fixed_hands_low_total"


SEED_MAX = 2**63 - 1


def _positive(value, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def _check(cfg: SimulationConfig, rules) -> None:
    """Validate a config; messages name the config field and the ``kalooki simulate`` flag."""
    from kalooki_sim.runtime.game import check_supported

    check_supported(rules)
    _positive(cfg.players, "players (--players)")
    if not rules.players_min <= cfg.players <= rules.players_max:
        raise ValueError(f"--players: {rules.name} is played by {rules.players_min}-{rules.players_max} players, "
                         f"not {cfg.players}")
    if len(cfg.agents) != cfg.players:
        raise ValueError(f"{len(cfg.agents)} agents given for {cfg.players} seats (one agent per seat)")
    if cfg.mode not in ("hands", "matches"):
        raise ValueError(f"mode must be 'hands' or 'matches', not {cfg.mode!r}")
    _positive(cfg.games, "games (--hands)" if cfg.mode == "hands" else "games (--matches)")
    _positive(cfg.shard_size, "shard_size (--shard-size)")
    if isinstance(cfg.seed, bool) or not isinstance(cfg.seed, (int, np.integer)) or not 0 <= cfg.seed <= SEED_MAX:
        raise ValueError(f"seed (--seed) must be an integer in 0..2**63-1, got {cfg.seed!r}")
    if cfg.mode != "matches" and (cfg.hands_per_match is not None or cfg.max_hands is not None):
        raise ValueError("hands_per_match / max_hands only apply to matches")
    if cfg.hands_per_match is not None:
        _positive(cfg.hands_per_match, "hands_per_match (--hands-per-match)")
    if cfg.max_hands is not None:
        _positive(cfg.max_hands, "max_hands (--max-hands)")
    if cfg.buy_back not in ("always", "never"):
        raise ValueError(f"buy_back must be 'always' or 'never', not {cfg.buy_back!r}")
    if cfg.mode == "matches":
        if rules.match_mode == "fixed_hands_low_total":
            if cfg.max_hands is not None:
                raise ValueError(f"{rules.name} matches have a fixed number of hands; max_hands does not apply")
        else:
            from kalooki_sim.runtime.rollout import match_length

            match_length(rules, "matches", cfg.hands_per_match, cfg.max_hands)     # raises on a bad value


def play_shard(cfg: SimulationConfig, rules, first: int, n: int) -> dict[str, pd.DataFrame]:
    """The rows of games ``first .. first + n - 1``: ``{"hands": ...}`` (and ``"matches"``), a pure
    function of its arguments.  Learned seats (checkpoints) act from Python through the lockstep
    env; compiled seats stay compiled inside it."""
    from kalooki_sim.runtime.policy_play import play_policies
    from kalooki_sim.runtime.rollout import simulate
    from kalooki_sim.runtime.strategies import learned_policies, lineup

    strats, ids, params = lineup(cfg.agents)       # named strategies: an agent and its parameters
    policies = learned_policies(strats, rules)
    extra = {}
    if cfg.mode == "matches":
        extra = dict(hands_per_game=cfg.hands_per_match)
        if points_matches(cfg, rules):
            extra.update(max_hands=cfg.max_hands, buy_back=cfg.buy_back)
    if policies:
        seats = [policies.get(i, name) for i, name in enumerate(cfg.agents)]
        out = play_policies(rules, cfg.players, seats, n, cfg.seed, mode=cfg.mode, first_game_id=first, **extra)
    else:
        out = simulate(rules, cfg.players, ids, params, n, cfg.seed, mode=cfg.mode, first_game_id=first, **extra)
    rows, match_rows = (out if isinstance(out, tuple) else (out, None))
    tables = {"hands": pd.DataFrame(rows)}
    if match_rows is not None:
        tables["matches"] = pd.DataFrame(match_rows)
    for df in tables.values():
        df["agent"] = [cfg.agents[s] for s in df["seat"]]
    return tables


def tasks(cfg: SimulationConfig, rules) -> list[Task]:
    """The run's shards of consecutive game ids as tasks of the study runner ("hands" written last)."""
    tables = (("matches", "matches"), ("hands", "hands")) if cfg.mode == "matches" else (("hands", "hands"),)
    return [Task((shard,), play_shard, (cfg, rules, first, n), tables, shard, n)
            for shard, first, n in shard_ranges(cfg.games, cfg.shard_size)]


def run_simulation(cfg: SimulationConfig, resume: bool = False, progress: bool = True, backend="local",
                   **backend_opts) -> RunDir:
    """Run (or resume) a simulation on the study runner (``backend``: "local", "ray" with its
    ``backend_opts``, or a backend object) and write its run directory; returns it."""
    from kalooki_sim.runtime.strategies import checkpoint_digests, learned_policies, lineup

    rules = load_rules(cfg.variant)
    _check(cfg, rules)
    check_backend(backend, **backend_opts)
    strats, _, _ = lineup(cfg.agents)
    # checkpoints are loaded (and checked against the rules) before the run directory exists
    learned = bool(learned_policies(strats, rules))
    config = config_dict(cfg)
    if learned:                            # a resume must find the same networks under those paths
        config["checkpoints"] = checkpoint_digests(strats)
    run = RunDir.create(cfg.out, config, cfg.seed, rules, resume=resume)
    run_tasks(run, tasks(cfg, rules), backend=backend, progress=progress, desc=f"{rules.name} {cfg.mode}",
              unit=" matches" if cfg.mode == "matches" else " hands",
              warm=None if learned else (lambda: play_shard(cfg, rules, 0, 1)), **backend_opts)
    write_summary(run, cfg)
    return run


def write_summary(run: RunDir, cfg: SimulationConfig) -> pd.DataFrame:
    """summary.csv and the plots of a run; returns the summary.

    One row per agent and one per seat (column ``by`` = "agent" / "seat", ``group`` = the agent or
    the seat number, ``agent``: the agent of the row), with ``n_rows`` and ``n_deals`` (games the
    row rests on), the win rate and mean penalty with 95 % intervals clustered by game (the seats
    of one game share the cards, and in matches all hands of one match are one cluster: CR1
    standard errors, t with n_games - 1 df; ``kalooki_sim.analysis.stats.summarize_clustered``) and penalty
    quantiles.  Matches add ``match_*`` columns: win rate with its interval and the mean total; for
    the points variants also mean money (with its interval), mean buy-backs, elimination rate and
    the share of finished matches (``match_finished``), and a money histogram (``money.png``).
    ``summary.attrs["header"]`` says what the table is about (printed by ``format_summary``).
    """
    hands = run.read_table("hands")
    summary = summarize_clustered(hands, by=("agent", "seat"), cluster="game_id", share="win_share",
                                  score="penalty")
    n_deals, n_rows = summary.attrs["n_deals"], summary.attrs["n_rows"]
    n_hands = int(hands.groupby(["game_id", "hand_no"]).ngroups) if len(hands) else 0
    if cfg.mode == "matches":
        matches = run.read_table("matches")
        ms = summarize_clustered(matches, by=("agent", "seat"), cluster="game_id", share="match_win_share",
                                 score="total")
        if "money" in matches.columns:
            ms = ms.merge(summarize_points_matches(matches), on=["by", "group"])
        ms = ms.drop(columns=["agent"], errors="ignore")
        summary = summary.merge(ms.rename(columns=lambda c: c if c in ("by", "group") else f"match_{c}"),
                                on=["by", "group"])
        if "money" in matches.columns:
            plot_money(matches, Path(run.path) / "money.png")
    summary.to_csv(Path(run.path) / "summary.csv", index=False)
    plot_penalties(hands, Path(run.path) / "penalties.png")
    summary.attrs.update(n_deals=n_deals, n_rows=n_rows, header=summary_header(cfg, n_deals, n_rows, n_hands))
    return summary


def summary_header(cfg: SimulationConfig, n_clusters: int, n_rows: int, n_hands: int | None = None) -> str:
    """The line above the printed summary: what it is about and what its intervals rest on."""
    who = f"{cfg.variant}, {cfg.players} players ({', '.join(cfg.agents)})"
    if cfg.mode == "matches":
        return (f"{who}, {cfg.games} matches, seed {cfg.seed}; 95 % intervals clustered by match: "
                f"{n_clusters} matches ({n_hands if n_hands is not None else '?'} deals), {n_rows} hand rows")
    return (f"{who}, {cfg.games} hands, seed {cfg.seed}; 95 % intervals clustered by deal: "
            f"{n_clusters} deals, {n_rows} rows")


def summarize_points_matches(matches: pd.DataFrame, by=("agent", "seat")) -> pd.DataFrame:
    """Per agent and per seat (columns ``by``, ``group``): mean money with its 95 % interval
    (clustered by match), mean buy-backs, elimination and finished rates, mean hands."""
    codes = cluster_codes(matches, "game_id")
    rows = []
    for lev in by:
        keys = matches[lev].to_numpy()
        for key in sorted(pd.unique(keys), key=_sort_key):
            mask = keys == key
            g = matches[mask]
            est = clustered_mean(g["money"].to_numpy(float), codes[mask])
            rows.append({"by": lev, "group": key, "money_mean": est["mean"], "money_lo": est["lo"],
                         "money_hi": est["hi"], "buy_backs_mean": float(g["buy_backs"].mean()),
                         "eliminated_rate": float(g["eliminated"].mean()),
                         "finished": float(g["finished"].mean()),
                         "hands_mean": float(g["match_hands"].mean())})
    return pd.DataFrame(rows)


def plot_money(matches: pd.DataFrame, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    lo = float(matches["money"].quantile(0.005))
    hi = float(matches["money"].quantile(0.995))
    if hi <= lo:
        hi = lo + 1
    bins = np.linspace(lo, hi, 40)
    for agent, g in matches.groupby("agent"):
        x = g["money"].clip(lo, hi)
        ax.hist(x, bins=bins, histtype="step", weights=np.full(len(x), 1.0 / len(x)),
                label=f"{agent} (n={len(g)}, mean {g['money'].mean():+.2f})")
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_xlabel("money at the end of the match (units; outer bins: 0.5 % tails)")
    ax.set_ylabel("share of the agent's matches")
    ax.set_title("Money per match by agent")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def penalty_figure(hands: pd.DataFrame):
    """The figure of ``penalties.png`` (returned open, for tests; ``plot_penalties`` saves it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    top = max(1, int(hands["penalty"].quantile(0.99)))
    bins = np.linspace(0, top, 40)
    for agent, g in hands.groupby("agent"):
        x = g["penalty"].clip(upper=top)
        ax.hist(x, bins=bins, histtype="step", weights=np.full(len(x), 1.0 / len(x)), label=f"{agent} (n={len(g)})")
    ax.set_xlabel("penalty points left in hand at the end of the hand\n(last bin: 99th percentile and above)")
    ax.set_ylabel("share of the agent's hands")
    ax.set_title("Penalty per hand by agent")
    ax.legend()
    fig.tight_layout()
    return fig


def plot_penalties(hands: pd.DataFrame, path: Path) -> None:
    import matplotlib.pyplot as plt

    fig = penalty_figure(hands)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def format_summary(summary: pd.DataFrame) -> str:
    """The summary as printed by ``kalooki simulate``: a header line (variant, players, hands or
    matches, seed, deals the intervals rest on), then one line per agent and one per seat."""
    lines = []
    if summary.attrs.get("header"):
        lines.append(summary.attrs["header"])
    lines.append(f"{'per':5s} {'':16s} {'n':>9s}  {'win rate (95% CI)':26s} {'penalty mean (95% CI)':28s} "
                 f"{'p10/p50/p90':>14s}")
    for _, r in summary.iterrows():
        label = str(r.group) if r.by != "seat" else f"{r.group} ({r.agent})"
        ci = f"{r.win_rate:.4f} [{r.win_lo:.4f}, {r.win_hi:.4f}]"
        pen = f"{r.penalty_mean:8.2f} [{r.penalty_lo:.2f}, {r.penalty_hi:.2f}]"
        q = f"{r.penalty_q10:.0f}/{r.penalty_q50:.0f}/{r.penalty_q90:.0f}"
        lines.append(f"{r.by:5s} {label:16s} {int(r.n_rows):9d}  {ci:26s} {pen:28s} {q:>14s}")
        if "match_win_rate" in summary.columns:
            line = (f"{'':5s} {'':16s} {'matches':>9s}  {r.match_win_rate:.4f} [{r.match_win_lo:.4f}, "
                    f"{r.match_win_hi:.4f}]")
            if "match_money_mean" in summary.columns:
                line += (f"  money {r.match_money_mean:+.2f} [{r.match_money_lo:+.2f}, {r.match_money_hi:+.2f}]"
                         f"  buy-backs {r.match_buy_backs_mean:.2f}  eliminated {r.match_eliminated_rate:.3f}"
                         f"  finished {r.match_finished:.3f}")
            lines.append(line)
    return "\n".join(lines)
