"""Duplicate-deal tournaments: strategies compared on identical cards, with honest statistics.

Every deal (seed, deal id: the same cards, the same dealer seat) is played once for every seating
of its table in a design balanced for seat and order (``seatings.balanced_seatings``: every
entrant in every seat equally often, and every ordered pair of entrants at every relative position
equally often; 12 seatings at 4 players).  Rotations alone would keep the lineup's cyclic order,
every entrant always after the same neighbour, and seat copies of one strategy points apart.
With more entrants than seats each deal gets one table (``n`` of the entrants, the tables taking
turns so every table plays equally often); with fewer, the entrants repeat around the table.  All seatings of a deal
run in one batch of the one compiled loop (``rollout.simulate`` with a per-game seating and the
deal id as game id), so differences between entrants are paired on the same cards, and every
interval is clustered by deal (``kalooki_sim.analysis.stats``): the rows of one deal are never counted as
independent.

``run_tournament`` writes a run directory (``records.RunDir``): ``meta.json``, the parquet table
``seats`` (one row per deal x seating x seat; in "matches" mode also per hand in ``hands``),
``results.md`` / ``results.csv`` (per entrant, pairwise differences, variance reduction, ratings)
and plots.  Shards of deals are written atomically, so an interrupted tournament resumes where it
stopped and ends with the same tables as one that never stopped.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from kalooki_sim.analysis.sprt import SPRT, sprt_decide
from kalooki_sim.core.rules import load_rules
from kalooki_sim.runtime.strategies import checkpoint_digests, learned_policies, lineup as resolve_lineup

from .backends import check_backend
from .records import RunDir
from .runner import Task, run_tasks, shard_ranges
from .seatings import balanced_seatings

__all__ = ["TournamentConfig", "entrant_labels", "schedule", "schedules", "seatings_per_deal", "tested_pairs",
           "sequential_tests", "play_deals", "play_seatings", "entrant_mean", "play_shard",
           "tasks", "run_tournament", "analyse", "OUTCOMES"]

# the outcome columns of a seat row, per mode; "score" is what ranks a seat after the win share
OUTCOMES = {"hands": ("win_share", "penalty"), "matches": ("win_share", "score")}
_MAX_TABLES = 252          # every table of up to 10 entrants at 4 seats (210), 10 at 5 (252)


@dataclass(frozen=True)
class TournamentConfig:
    variant: str = "caribbean"
    players: int = 4
    agents: tuple[str, ...] = ("greedy", "greedy-picky", "greedy-explore", "random")
    deals: int = 1000
    mode: str = "hands"                  # "hands": single hands; "matches": whole matches
    seed: int = 0
    shard_deals: int = 250
    out: str = "runs/tournament"
    max_hands: int | None = None         # matches: hand cap of an elimination match
    hands_per_match: int | None = None   # matches: hands of a fixed-length match
    buy_back: str = "always"
    # sequential testing (``--until-decided``): play deals in order until every asked pair is
    # decided by its SPRT (H0: difference 0, H1: ``sprt_h1`` of win share), ``deals`` at most
    until_decided: bool = False
    sprt_h1: float = 0.02
    sprt_alpha: float = 0.05
    sprt_beta: float = 0.05
    sprt_min_deals: int = 30
    sprt_pairs: tuple[str, ...] = ()     # "a:b" (entrant labels); default the first against every other

    @property
    def sprt(self) -> SPRT:
        return SPRT(h1=self.sprt_h1, alpha=self.sprt_alpha, beta=self.sprt_beta, min_deals=self.sprt_min_deals)


def entrant_labels(names) -> list[str]:
    """One label per entrant: a name given more than once becomes ``name#1``, ``name#2``, ... (copies
    of one strategy are separate entrants, as an A/A comparison needs)."""
    names = [str(n).strip() for n in names]
    seen: dict[str, int] = {}
    out = []
    for n in names:
        if names.count(n) > 1:
            seen[n] = seen.get(n, 0) + 1
            out.append(f"{n}#{seen[n]}")
        else:
            out.append(n)
    return out


def seatings_per_deal(n_players: int) -> int:
    """How many seatings every deal is played in (the balanced design's size)."""
    return len(balanced_seatings(n_players))


def schedule(n_entrants: int, n_players: int, deal: int) -> np.ndarray:
    """The seatings of one deal: ``int64[S, n_players]``, row ``r`` giving the entrant index in each
    seat for seating ``r`` of the balanced design (``seatings.balanced_seatings``)."""
    return schedules(n_entrants, n_players, [deal])[0]


def schedules(n_entrants: int, n_players: int, deals) -> np.ndarray:
    """``schedule`` of every deal at once: ``int64[len(deals), S, n_players]``."""
    n = n_players
    deals = np.asarray(deals, dtype=np.int64)
    if n_entrants >= n:
        tables = np.array(_tables(n_entrants, n), dtype=np.int64)
        table = tables[deals % len(tables)]                                   # [D, n]
    else:
        table = np.tile(np.arange(n, dtype=np.int64) % n_entrants, (len(deals), 1))
    return table[:, balanced_seatings(n)]                                     # [D, S, n]


def _tables(k: int, n: int) -> list[tuple[int, ...]]:
    """The tables the deals cycle through: every ``n``-subset of ``k`` entrants when there are few
    (up to ``_MAX_TABLES``), else a cyclic design (``n`` consecutive entrants, every start).  The
    cyclic design seats together only the pairs less than ``n`` apart in the entrant list; the
    others are compared through the ratings alone (the pairwise tables have no deal for them)."""
    if k == n:
        return [tuple(range(n))]
    if math.comb(k, n) <= _MAX_TABLES:
        return list(itertools.combinations(range(k), n))
    return [tuple((s + i) % k for i in range(n)) for s in range(k)]


def _check(cfg: TournamentConfig, rules) -> None:
    from kalooki_sim.runtime.game import check_supported

    check_supported(rules)
    if not rules.players_min <= cfg.players <= rules.players_max:
        raise ValueError(f"--players: {rules.name} is played by {rules.players_min}-{rules.players_max} players, "
                         f"not {cfg.players}")
    if len(cfg.agents) < 2:
        raise ValueError(f"--agents: a tournament needs at least two entrants, got {len(cfg.agents)}")
    for what, v in (("deals (--deals)", cfg.deals), ("shard_deals (--shard-deals)", cfg.shard_deals)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{what} must be a positive integer, got {v!r}")
    if cfg.mode not in OUTCOMES:
        raise ValueError(f"--mode must be 'hands' or 'matches', not {cfg.mode!r}")
    if cfg.until_decided:
        cfg.sprt                                      # a bad test is refused before any work
        tested_pairs(cfg)


def play_deals(cfg: TournamentConfig, rules, first_deal: int, n_deals: int) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Every seating of deals ``first_deal ..``: the seat rows (and in "matches" mode the hand rows)."""
    strats, ids, params = resolve_lineup(cfg.agents)
    policies = learned_policies(strats, rules)
    return play_seatings(rules, cfg.players, entrant_labels(cfg.agents), ids, params,
                         np.arange(first_deal, first_deal + n_deals, dtype=np.int64), cfg.seed, cfg.mode,
                         strategy_names=[s.name for s in strats], max_hands=cfg.max_hands,
                         hands_per_match=cfg.hands_per_match, buy_back=cfg.buy_back, policies=policies,
                         agent_names=list(cfg.agents))


def entrant_mean(rules, n_players: int, ids, params, deals, seed: int, mode: str, outcome: str,
                 max_hands=None) -> float:
    """Entrant 0's mean ``outcome`` over ``deals``, each in every seating of the table
    (``play_seatings``): a candidate's fitness in the tuner, as a task a backend can run."""
    labels = [f"e{i}" for i in range(n_players)]
    seats, _ = play_seatings(rules, n_players, labels, ids, params, deals, seed, mode, max_hands=max_hands)
    return float(seats.loc[seats["agent"] == labels[0], outcome].mean())


def play_seatings(rules, n_players: int, labels, ids, params, deals, seed: int, mode: str = "hands",
                  strategy_names=None, max_hands=None, hands_per_match=None, buy_back="always", policies=None,
                  agent_names=None):
    """The entrants ``labels`` (compiled agent ``ids[i]`` with parameter row ``params[i]``) on the
    given deals, each deal in every seating of its table (``schedule``), in one batch of the loop.

    ``policies`` (``{entrant index: Policy}``, e.g. a checkpoint's ``LearnedPolicy``) makes those
    entrants learned: the deals whose table seats one of them are played through
    ``policy_play.play_policies`` instead (``_play_mixed``), the compiled seats of those tables by
    the strategy names ``agent_names``; the other deals keep the compiled batch.

    Returns ``(seats, hands)``: one row per deal x seating x seat (``deal``, ``seating``, ``agent``,
    ``strategy`` and the outcome columns of ``OUTCOMES[mode]``); in "matches" mode also the hand rows."""
    from kalooki_sim.runtime.rollout import simulate

    n = n_players
    if policies:
        return _play_mixed(rules, n, labels, ids, params, deals, seed, mode, strategy_names, max_hands,
                           hands_per_match, buy_back, policies, agent_names)
    ids = np.asarray(ids, dtype=np.int64)
    params = np.asarray(params, dtype=np.float64)
    deals = np.asarray(deals, dtype=np.int64)
    names = np.asarray(strategy_names if strategy_names is not None else labels, dtype=object)
    labels = np.asarray(labels, dtype=object)
    n_seatings = seatings_per_deal(n)
    seatings = schedules(len(labels), n, deals).reshape(-1, n)
    game_ids = np.repeat(deals, n_seatings)
    # an entrant's random stream is its own, whatever seat it takes (copies of one agent differ)
    out = simulate(rules, n, ids[seatings], params[seatings], len(game_ids), seed, mode=mode,
                   game_ids=game_ids, streams=seatings,
                   **_match_extra(rules, mode, max_hands, hands_per_match, buy_back))

    def where(rows):            # a batch row's seating, and its seat -> entrant table
        r = np.asarray(rows["batch_row"])
        return r % n_seatings, seatings[r]

    return _frames(rules, out, mode, where, labels, names)


def _match_extra(rules, mode, max_hands, hands_per_match, buy_back) -> dict:
    if mode != "matches":
        return {}
    if rules.match_mode == "elimination_pool":
        return dict(max_hands=max_hands, buy_back=buy_back)
    return dict(hands_per_game=hands_per_match)


def _frames(rules, out, mode, where, labels, names):
    """``(seats, hands)`` frames of a batch's output (``simulate``'s or ``play_policies``' columns):
    each row labelled with its deal, seating, entrant (``agent``) and, in the seat rows, strategy;
    ``where(columns)`` gives every row's seating and its table (seat -> entrant).  In "matches"
    mode the seat rows are the match rows, with ``win_share`` and the ``score`` that ranks a
    player (money where the variant plays for money, else the total)."""
    hands, match = (out, None) if mode == "hands" else out

    def label(cols, with_strategy):
        seating, table = where(cols)
        df = pd.DataFrame(cols).drop(columns=["batch_row"], errors="ignore")
        entrant = np.take_along_axis(table, df["seat"].to_numpy()[:, None], axis=1)[:, 0]
        df.insert(0, "deal", df.pop("game_id"))
        df.insert(1, "seating", seating)
        df.insert(2, "agent", labels[entrant])
        if with_strategy:
            df.insert(3, "strategy", names[entrant])
        return df

    base = label(hands if match is None else match, True)
    if match is None:
        return base, None
    base = base.rename(columns={"match_win_share": "win_share"})
    base["score"] = base["money"] if rules.match_mode != "fixed_hands_low_total" else base["total"]
    return base, label(hands, False)


def _play_mixed(rules, n, labels, ids, params, deals, seed, mode, strategy_names, max_hands, hands_per_match,
                buy_back, policies, agent_names):
    """``play_seatings`` with learned entrants: the deals whose table has none run in the compiled
    batch as usual; every seating of every other deal is an episode of one lockstep batch
    (``policy_play.play_schedule``, the deal id as game id), where each network acts once per step
    over all its rows.  The compiled seats of those tables draw on their entrant's own random
    stream, as in the compiled batch, so the rows are those of the compiled path (``policy_id`` -1
    for a learned seat), ordered by deal and seating."""
    from kalooki_sim.runtime.policy_play import play_schedule

    if agent_names is None:
        raise ValueError("learned entrants need agent_names (the strategy name of every entrant)")
    deals = np.asarray(deals, dtype=np.int64)
    labels = np.asarray(labels, dtype=object)
    names = np.asarray(strategy_names if strategy_names is not None else labels, dtype=object)
    sched = schedules(len(labels), n, deals)                       # [D, seating, seat] -> entrant
    learned = np.isin(sched[:, 0, :], list(policies)).any(axis=1)
    seat_parts, hand_parts = [], []
    if (~learned).any():
        a, b = play_seatings(rules, n, labels, ids, params, deals[~learned], seed, mode, strategy_names, max_hands,
                             hands_per_match, buy_back)
        seat_parts.append(a)
        hand_parts.append(b)
    if learned.any():
        S = sched.shape[1]
        seatings = sched[learned].reshape(-1, n)
        entrants = [policies[e] if e in policies else str(agent_names[e]) for e in range(len(labels))]
        out = play_schedule(rules, n, entrants, seatings, np.repeat(deals[learned], S), seed, mode=mode,
                            **_match_extra(rules, mode, max_hands, hands_per_match, buy_back))

        def where(cols):                        # an episode's seating, and its seat -> entrant table
            r = np.asarray(cols["batch_row"])
            return r % S, seatings[r]

        a, b = _frames(rules, out, mode, where, labels, names)
        seat_parts.append(a)
        hand_parts.append(b)

    def join(parts):
        df = pd.concat(parts, ignore_index=True)
        return df.sort_values(["deal", "seating"], kind="stable").reset_index(drop=True)

    seats_df = join(seat_parts)
    return seats_df, (None if mode == "hands" else join(hand_parts))


def tested_pairs(cfg: TournamentConfig) -> list[tuple[str, str]]:
    """The pairs the sequential test decides: ``cfg.sprt_pairs`` ("a:b", entrant labels: is a
    better than b?), by default the first entrant against every other."""
    labels = entrant_labels(cfg.agents)
    if not cfg.sprt_pairs:
        return [(labels[0], b) for b in labels[1:]]
    out = []
    for spec in cfg.sprt_pairs:
        a, sep, b = str(spec).partition(":")
        if not sep or a not in labels or b not in labels or a == b:
            raise ValueError(f"--sprt-pairs: {spec!r} is not 'a:b' of two different entrants "
                             f"({', '.join(labels)})")
        out.append((a, b))
    return out


def sequential_tests(seats: pd.DataFrame, cfg: TournamentConfig, upto: int | None = None) -> pd.DataFrame:
    """Each tested pair's SPRT (``analysis.sprt``) on its per-deal win-share differences in deal
    order, over the deals below ``upto`` (the deals played without a gap: a decision never depends
    on which shard finished first).  Columns: a, b, decision, deals, diff, llr, lower, upper."""
    from kalooki_sim.analysis.stats import deal_means

    d = seats if upto is None else seats[seats["deal"] < upto]
    means, _ = deal_means(d, "win_share", "deal", "agent")
    rows = []
    for a, b in tested_pairs(cfg):
        x = (means[a] - means[b]).dropna().to_numpy(float) if a in means and b in means else np.zeros(0)
        dec = sprt_decide(x, cfg.sprt)
        rows.append({"a": a, "b": b, "decision": dec["decision"], "deals": dec["deals"],
                     "diff": float(x[:dec["deals"]].mean()) if dec["deals"] else math.nan,
                     "llr": dec["llr"], "lower": dec["lower"], "upper": dec["upper"]})
    out = pd.DataFrame(rows)
    out.attrs.update(n_deals=int(d["deal"].nunique()), n_rows=len(d))
    return out


def _played_without_gap(cfg: TournamentConfig, shards: set[int]) -> int:
    """The number of deals from deal 0 on whose shards are all done."""
    k = 0
    while k in shards:
        k += 1
    return min(cfg.deals, k * cfg.shard_deals)


def play_shard(cfg: TournamentConfig, rules, first_deal: int, n_deals: int) -> dict[str, pd.DataFrame]:
    """``play_deals`` as the study runner's tables: ``{"seats": ...}`` (and ``"hands"`` of matches)."""
    seats, hands = play_deals(cfg, rules, first_deal, n_deals)
    return {"seats": seats} if hands is None else {"hands": hands, "seats": seats}


def tasks(cfg: TournamentConfig, rules) -> list[Task]:
    """The tournament's shards of deals as tasks of the study runner ("seats" written last)."""
    tables = (("hands", "hands"), ("seats", "seats")) if cfg.mode == "matches" else (("seats", "seats"),)
    return [Task((shard,), play_shard, (cfg, rules, first, k), tables, shard, k)
            for shard, first, k in shard_ranges(cfg.deals, cfg.shard_deals)]


def run_tournament(cfg: TournamentConfig, resume: bool = False, progress: bool = True, results: bool = True,
                   backend="local", **backend_opts) -> RunDir:
    """Play (or resume) a tournament into its run directory on the study runner (``backend``:
    "local", "ray" with its ``backend_opts``, or a backend object), then (``results``) write its
    tables and plots (``analyse``); returns the run directory."""
    rules = load_rules(cfg.variant)
    _check(cfg, rules)
    check_backend(backend, **backend_opts)
    strats, _, _ = resolve_lineup(cfg.agents)        # unknown names fail here, before any work
    config = asdict(cfg)
    if learned_policies(strats, rules):              # and checkpoints that do not fit these rules
        config["checkpoints"] = checkpoint_digests(strats)   # a resume must find the same networks
    run = RunDir.create(cfg.out, config, cfg.seed, rules, resume=resume)
    win: dict[str, tuple[float, int]] = {}

    def leader(task, tables, bar):
        for a, v in tables["seats"].groupby("agent")["win_share"]:
            s, c = win.get(a, (0.0, 0))
            win[a] = (s + float(v.sum()), c + len(v))
        lead = max(win, key=lambda a: win[a][0] / win[a][1])
        bar.set_postfix_str(f"leader {lead} {win[lead][0] / win[lead][1]:.3f}")

    on_result, stop = leader, None
    if cfg.until_decided:
        on_result, stop = _until_decided(run, cfg, leader)
    if stop is None or not stop():                   # (a resumed run may have decided already)
        run_tasks(run, tasks(cfg, rules), backend=backend, progress=progress, desc=f"{rules.name} tournament",
                  unit=" deals", warm=lambda: play_deals(cfg, rules, 0, 1), on_result=on_result, stop=stop,
                  **backend_opts)
    if results:
        analyse(run, cfg, rules)
    return run


def _until_decided(run: RunDir, cfg: TournamentConfig, leader):
    """The runner's hooks of a sequential tournament: ``on_result`` keeps every shard's rows,
    ``stop`` asks the tests on the deals played without a gap whether every pair is decided."""
    done = run.done_shards("seats")
    frames = [run.read_table("seats")] if done else []

    def on_result(task, tables, bar):
        leader(task, tables, bar)
        done.add(task.shard)
        frames.append(tables["seats"])

    def stop() -> bool:
        upto = _played_without_gap(cfg, done)
        return bool(upto) and (sequential_tests(pd.concat(frames), cfg, upto)["decision"] != "undecided").all()

    return on_result, stop


def analyse(run: RunDir, cfg: TournamentConfig, rules=None, write: bool = True) -> dict[str, pd.DataFrame]:
    """The tournament's tables from its ``seats`` rows: per entrant (win share and score, clustered
    by deal), pairwise paired differences, the variance reduction of the duplicate design against
    independent deals, and ratings (openskill Plackett-Luce, cross-checked by a maximum-likelihood
    Plackett-Luce fit).  With ``write``: ``results.md``, ``results.csv`` and plots in the run."""
    from kalooki_sim.analysis.ratings import compare_ratings, finishing_orders, plackett_luce_mle
    from kalooki_sim.analysis.stats import (
        clustered_summary, order_effects, paired_differences, variance_reduction, write_results,
    )

    rules = rules or load_rules(cfg.variant)
    seats = run.read_table("seats")
    share, score = OUTCOMES[cfg.mode]
    # a higher score is better only where players win money
    score_up = cfg.mode == "matches" and rules.match_mode != "fixed_hands_low_total"
    tables = {}
    tables["win share"] = clustered_summary(seats, share, cluster="deal", by="agent")
    tables[f"mean {score}"] = clustered_summary(seats, score, cluster="deal", by="agent")
    tables["win share: paired differences"] = paired_differences(seats, share, cluster="deal")
    tables[f"{score}: paired differences"] = paired_differences(seats, score, cluster="deal")
    for name in ("win share: paired differences", f"{score}: paired differences"):
        tables[name].attrs.update(n_deals=int(seats["deal"].nunique()), n_rows=len(seats), level=0.95)
    vr = pd.concat([variance_reduction(seats, share, cluster="deal").assign(outcome=share),
                    variance_reduction(seats, score, cluster="deal").assign(outcome=score)], ignore_index=True)
    vr.attrs.update(n_deals=int(seats["deal"].nunique()), n_rows=len(seats))
    tables["variance reduction of the duplicate design"] = vr
    order = order_effects(seats, share, cfg.players)
    order.attrs.update(n_deals=int(seats["deal"].nunique()), n_rows=len(seats))
    tables["win share: order effect"] = order
    if cfg.until_decided:
        upto = _played_without_gap(cfg, run.done_shards("seats"))
        tables["sequential test (SPRT)"] = sequential_tests(seats, cfg, upto)
    ranked = seats.assign(_rank_score=seats[score] if not score_up else -seats[score])
    orders = finishing_orders(ranked, game=("deal", "seating"), group="agent", win=share, penalty="_rank_score",
                              cluster="deal")
    cmp = compare_ratings(orders, "agent")
    ratings = cmp["table"]
    pl = plackett_luce_mle(orders, "agent")
    ratings = ratings.merge(pl[["agent", "lo_cluster", "hi_cluster"]] if "lo_cluster" in pl else pl[["agent"]],
                            on="agent", how="left")
    ratings.attrs.update(n_deals=int(seats["deal"].nunique()), n_rows=len(seats))
    tables["ratings"] = ratings
    notes = {"ratings": f"openskill (Plackett-Luce) against a maximum-likelihood Plackett-Luce fit: Kendall's "
                        f"tau {cmp['kendall_tau']:.3f}, same order: {cmp['same_order']}.",
             "win share: order effect":
                 f"a's win share minus b's on the deals' seatings with b `position` seats after a in the order of "
                 f"play; `max - min` is the spread a design that fixes the order would leave in the paired "
                 f"difference. Every deal is played in the {seatings_per_deal(cfg.players)} seatings of a design "
                 f"balanced for seat and order, so the paired differences above average it out.",
             "sequential test (SPRT)":
                 f"H0: a's win share minus b's is 0, H1: it is "
                 f"{cfg.sprt_h1:+g}; alpha {cfg.sprt_alpha}, beta {cfg.sprt_beta}, no decision before "
                 f"{cfg.sprt_min_deals} deals. `deals`: the deals the test used (its decision's deal, or all "
                 f"played); the test reads deals in order, so the shards' finishing order does not matter.",
             "variance reduction of the duplicate design":
                 "variance_ratio: the variance of a paired difference over deals divided by the variance the "
                 "same number of rows would give from independent deals (below 1: the duplicate design helps); "
                 "effective_sample_multiplier = 1 / variance_ratio."}
    if write:
        title = (f"{rules.name} tournament: {cfg.players} players, {cfg.mode}, {seats['deal'].nunique():,} deals "
                 f"x {seatings_per_deal(cfg.players)} seatings (balanced for seat and order), seed {cfg.seed}")
        write_results(run.path, tables, title=title, notes=notes)
        _plots(run.path, seats, tables, score, pl)
    return tables


def _plots(path: Path, seats, tables, score, pl) -> None:
    from kalooki_sim.analysis.stats_plots import plot_distribution, plot_estimates, plot_ratings

    plot_estimates(tables["win share"], path / "win_share.png", by="agent")
    plot_distribution(seats, path / f"{score}.png", value=score, by="agent")
    plot_ratings(pl, path / "ratings.png", by="agent")
