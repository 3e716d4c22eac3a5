"""Rule-variant balance, the statistics: a study's rows (``balance``) turned into the per-cell
numbers with 95 % intervals clustered by deal (``cell_statistics``), the paired differences of knob
cells against their base (``effects``), the skill ladder's strengths (``skill_statistics``), and
the summary tables of a whole run (``summarise``, read back by ``read_summary``) from which
``balance_report`` draws the report.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from .balance import (
    CELL_TABLES, EV_KALOOKI, EV_TURN_CAP, EV_VOID_CAP, EV_WENT_OUT, BalanceConfig, Cell, expand, load_cell,
)

__all__ = ["cell_statistics", "effects", "skill_statistics", "summarise", "read_summary", "hand_level",
           "HAND_METRICS", "METRIC_LABELS"]


def hand_level(hands: pd.DataFrame, count_denied: bool = False) -> pd.DataFrame:
    """One row per hand (deal, hand_no) with the hand's outcomes: turns, how it ended, whether the
    winner went out in the turn he first laid down (kalooki / rip / down-and-out), calls made,
    allowed and denied (``count_denied``: the rules count denied calls against the limit, so the
    ``calls_used`` column holds them too), mean penalty of the losers."""
    g = hands.groupby(["deal", "hand_no"], sort=True)
    first = g.first()
    won = hands[hands["won"] == 1].set_index(["deal", "hand_no"])
    out = pd.DataFrame({"turns": first["turns"].astype(float)})
    ev = first["end_event"]
    out["stock_ran_out"] = ((first["reshuffles"] > 0) | (first["voids"] > 0)).astype(float)
    out["reshuffled"] = (first["reshuffles"] > 0).astype(float)
    out["voided"] = (first["voids"] > 0).astype(float)
    out["void_cap"] = (ev == EV_VOID_CAP).astype(float)
    out["turn_cap"] = (ev == EV_TURN_CAP).astype(float)
    out["no_winner"] = (~ev.isin([EV_WENT_OUT, EV_KALOOKI])).astype(float)
    one = pd.Series(0.0, index=out.index)
    if len(won):
        w = won[~won.index.duplicated()]
        hit = (w["laid_down_turn"] == w["turns"] - 1) | (w["end_event"] == EV_KALOOKI)
        one.loc[w.index] = hit.astype(float).to_numpy()
    out["out_in_one_turn"] = one
    denied = g["calls_denied"].sum().astype(float)
    allowed = g["calls_used"].sum().astype(float) - (denied if count_denied else 0.0)
    out["calls_per_hand"] = allowed
    out["denied_calls_per_hand"] = denied
    out["calls_made_per_hand"] = allowed + denied
    los = hands[hands["won"] == 0]
    out["loser_penalty"] = los.groupby(["deal", "hand_no"])["penalty"].mean().reindex(out.index).astype(float)
    out["dealer_left_won"] = hands[hands["rel_seat"] == 1].groupby(["deal", "hand_no"])["won"].sum() \
        .reindex(out.index).fillna(0).astype(float)
    out["round"] = first["round"]
    return out.reset_index()


HAND_METRICS = ("turns", "stock_ran_out", "voided", "void_cap", "turn_cap", "no_winner", "out_in_one_turn",
                "calls_per_hand", "denied_calls_per_hand", "calls_made_per_hand", "loser_penalty",
                "dealer_left_won")
METRIC_LABELS = {
    "turns": "turns per hand", "stock_ran_out": "share of hands where the stock ran out",
    "voided": "share of hands voided (redealt)", "void_cap": "share ended by the void cap (no winner)",
    "turn_cap": "share ended by the turn cap (no winner)", "no_winner": "share of hands without a winner",
    "out_in_one_turn": "going out in one turn (kalooki / down and out)", "calls_per_hand": "allowed calls per hand",
    "denied_calls_per_hand": "denied calls per hand", "calls_made_per_hand": "calls made per hand",
    "loser_penalty": "mean penalty of a loser", "dealer_left_won": "win share of the dealer's left neighbour",
    "win_share": "win share", "penalty": "penalty", "score": "match score (money / total)",
    "score_abs": "mean absolute match score (money won or lost)",
}


def _est(y, clusters, **extra) -> dict:
    from kalooki_sim.analysis.stats import clustered_mean

    y = np.asarray(y, dtype=float)
    ok = ~np.isnan(y)
    e = clustered_mean(y[ok], np.asarray(clusters)[ok])
    return {"mean": e["mean"], "lo": e["lo"], "hi": e["hi"], "se": e["se"], "n_rows": e["n_rows"],
            "n_deals": e["n_clusters"], **extra}


def cell_statistics(cfg: BalanceConfig, cell: Cell, rows: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """The numbers of one cell, every one with its 95 % interval clustered by deal.

    Returns long tables (one row per estimate, columns ``cell``, ``metric``, ``group``, ``mean``,
    ``lo``, ``hi``, ``se``, ``n_rows``, ``n_deals``): ``metrics`` (hand-level outcomes, win share
    by seat relative to the dealer, penalties, calls), ``laydown`` (Caribbean: per round and table
    turn, the probability of having laid down), ``dist`` (histograms of turns, penalty, score)."""
    tag = {"cell": cell.id}
    metrics, laydown, dist = [], [], []
    if cell.kind == "skill":
        return {"metrics": pd.DataFrame(), "laydown": pd.DataFrame(), "dist": pd.DataFrame()}
    hands = rows["hands"]
    n = cell.players
    hl = hand_level(hands, cell.rules().count_denied_calls)
    for m in HAND_METRICS:
        metrics.append(_est(hl[m], hl["deal"], metric=m, group="", **tag))
    for s in range(n):
        sel = hands["rel_seat"].to_numpy() == s
        metrics.append(_est(hands["win_share"].to_numpy()[sel], hands["deal"].to_numpy()[sel], metric="win_share",
                            group=f"dealer+{s}", **tag))
    metrics.append(_est(hands["penalty"], hands["deal"], metric="penalty", group="all seats", **tag))
    metrics.append(_est(hands["calls_used"], hands["deal"], metric="calls_per_player", group="", **tag))
    if cell.kind == "match":
        m = rows["matches"]
        metrics.append(_est(m["score"], m["deal"], metric="score", group="", **tag))
        # money sums to zero over a table: its size is the stake at play
        metrics.append(_est(m["score"].abs(), m["deal"], metric="score_abs", group="", **tag))
        for s in range(n):
            sel = m["seat"].to_numpy() == s
            metrics.append(_est(m["match_win_share"].to_numpy()[sel], m["deal"].to_numpy()[sel],
                                metric="match_win_share", group=f"seat {s}", **tag))
        metrics.append(_est(m.groupby("deal")["match_hands"].first() if "match_hands" in m else
                            hands.groupby("deal")["hand_no"].nunique(),
                            np.arange(m["deal"].nunique()), metric="hands_per_match", group="", **tag))
        if "payment" in hands.columns:
            metrics.append(_est(hands["payment"], hands["deal"], metric="payment_per_hand", group="", **tag))
        dist += _hist(m["score"], "score", tag)
    dist += _hist(hl["turns"], "turns", tag)
    dist += _hist(hands.loc[hands["won"] == 0, "penalty"], "penalty", tag)
    if cell.preset == "caribbean" and cell.mode == "hands":
        laydown = _laydown(hands, n, cfg.laydown_turns, tag)
    return {"metrics": pd.DataFrame(metrics), "laydown": pd.DataFrame(laydown), "dist": pd.DataFrame(dist)}


def _hist(x, what: str, tag: dict) -> list[dict]:
    x = np.asarray(x, dtype=float)
    x = x[~np.isnan(x)]
    if not x.size:
        return []
    lo, hi = float(np.floor(x.min())), float(np.ceil(np.quantile(x, 0.995)))
    if hi <= lo:
        hi = lo + 1
    edges = np.linspace(lo, hi, 41)
    counts, _ = np.histogram(np.clip(x, lo, hi), bins=edges)
    return [{"what": what, "left": float(edges[i]), "right": float(edges[i + 1]), "share": counts[i] / x.size,
             "n": int(x.size), **tag} for i in range(len(counts))]


def _laydown(hands: pd.DataFrame, n: int, T: int, tag: dict) -> list[dict]:
    """P(a player has laid down by his table turn t) per Caribbean round, clustered by deal.

    Table turn t = the t-th time the turn comes round (``laid_down_turn // n + 1``); a player who
    never laid down, or whose hand ended first, counts as not laid down by t (the unconditional
    curve: what a player at the table sees)."""
    from kalooki_sim.analysis.stats import cluster_codes

    out = []
    lt = hands["laid_down_turn"].to_numpy().astype(np.int64)     # (stored narrow: int8 would overflow below)
    own = np.where(lt >= 0, lt // n + 1, np.iinfo(np.int64).max)
    for r in sorted(hands["round"].unique()):
        sel = hands["round"].to_numpy() == r
        codes = cluster_codes(hands[sel], "deal")
        o = own[sel]
        for t in range(1, T + 1):
            e = _est((o <= t).astype(float), codes, metric="laid_down_by", group=f"round {int(r)}", **tag)
            e.update(round=int(r), t=t)
            out.append(e)
    return out


def effects(cfg: BalanceConfig, cell: Cell, base_rows: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """Paired differences (knob cell - base cell) over the deals both played, per hand-level
    metric and per seat's win share: one per deal, t interval over deals (``stats.paired_differences``).
    Match cells compare match scores and hand outcomes per match."""
    from kalooki_sim.analysis.stats import paired_differences

    a = hand_level(rows, cell.rules().count_denied_calls)
    from kalooki_sim.core.rules import load_rules

    b = hand_level(base_rows, load_rules(cell.preset).count_denied_calls)   # a base cell is the bare preset
    cols = list(HAND_METRICS)
    per = []
    for lab, frame in (("knob", a), ("base", b)):
        d = frame.groupby("deal")[cols].mean()
        d["group"] = lab
        per.append(d.reset_index())
    for lab, src in (("knob", rows), ("base", base_rows)):
        ws = src.pivot_table(index="deal", columns="rel_seat", values="win_share", aggfunc="mean")
        ws.columns = [f"win_share_dealer+{c}" for c in ws.columns]
        per[0 if lab == "knob" else 1] = per[0 if lab == "knob" else 1].merge(ws.reset_index(), on="deal")
    long = pd.concat(per, ignore_index=True)
    out = []
    for m in [c for c in long.columns if c not in ("deal", "group")]:
        pdf = paired_differences(long[["deal", "group", m]].dropna(), m, cluster="deal", group="group",
                                 pairs=[("knob", "base")])
        if not len(pdf):
            continue
        r = pdf.iloc[0].to_dict()
        out.append({"cell": cell.id, "base": cell.base, "preset": cell.preset, "players": cell.players,
                    "knob": cell.knob, "metric": m, "base_mean": r["mean_b"], "knob_mean": r["mean_a"],
                    "diff": r["diff"], "lo": r["lo"], "hi": r["hi"], "se": r["se"], "n_deals": r["n_deals"],
                    "n_separated": r["n_separated"]})
    return pd.DataFrame(out)


ELO = 400 / math.log(10)      # Plackett-Luce / Bradley-Terry log-strength -> Elo points


def skill_statistics(cell: Cell, seats: pd.DataFrame, n_boot: int = 30, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Skill measures of a skill cell (the ladder on duplicate deals).

    * the win-share gap between the strongest and every weaker agent: paired over deals (restricted
      play: how much a better policy wins on the same cards);
    * the spread of maximum-likelihood Plackett-Luce strengths over the ladder (strongest minus
      weakest, log scale and Elo points), with a percentile bootstrap over deals: the "skill and
      chance" measure of Duersch, Lambrecht & Oechssler (2020), who read the dispersion of fitted
      ratings as the room skill has in a game (zero in a game of pure chance)."""
    from kalooki_sim.analysis.ratings import finishing_orders, plackett_luce_mle
    from kalooki_sim.analysis.stats import clustered_summary, paired_differences

    ladder = list(dict.fromkeys(cell.agents))
    ws = clustered_summary(seats, "win_share", cluster="deal", by="agent")
    ws.insert(0, "cell", cell.id)
    ws.insert(1, "preset", cell.preset)
    pairs = [(ladder[0], w) for w in ladder[1:]]
    gap = paired_differences(seats, "win_share", cluster="deal", group="agent", pairs=pairs)
    gap.insert(0, "cell", cell.id)
    gap.insert(1, "preset", cell.preset)
    orders = finishing_orders(seats, game=("deal", "seating"), group="agent", win="win_share", penalty="penalty",
                              cluster="deal")
    pl = plackett_luce_mle(orders, "agent")
    th = dict(zip(pl["agent"], pl["strength"]))
    spread = th[ladder[0]] - th[ladder[-1]]
    sd = float(np.std([th[a] for a in ladder]))
    rng = np.random.default_rng(seed)
    codes = orders["cluster"].to_numpy()
    G = int(codes.max()) + 1
    starts = np.searchsorted(np.sort(codes), np.arange(G))
    order_idx = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=G)
    boots = []
    for _ in range(n_boot):
        pick = rng.integers(0, G, G)
        idx = np.concatenate([order_idx[starts[p]:starts[p] + sizes[p]] for p in pick])
        o = orders.iloc[idx].copy()
        # a drawn deal's games become new games
        rep = np.repeat(np.arange(G), sizes[pick])
        # dense codes (the fitter sizes its arrays by the largest game code)
        key = rep.astype(np.int64) * (int(orders["game"].max()) + 1) + o["game"].to_numpy()
        o["game"] = np.unique(key, return_inverse=True)[1].astype(np.int64)
        o["cluster"] = rep
        o.attrs = orders.attrs
        try:
            b = plackett_luce_mle(o, "agent")
        except Exception:           # a resample where the ladder is not identifiable
            continue
        tb = dict(zip(b["agent"], b["strength"]))
        boots.append(tb[ladder[0]] - tb[ladder[-1]])
    lo, hi = (np.quantile(boots, [0.025, 0.975]) if len(boots) >= 10 else (math.nan, math.nan))
    spread_row = pd.DataFrame([{"cell": cell.id, "preset": cell.preset, "strong": ladder[0], "weak": ladder[-1],
                                "spread": spread, "lo": float(lo), "hi": float(hi), "sd_strength": sd,
                                "spread_elo": spread * ELO, "lo_elo": float(lo) * ELO, "hi_elo": float(hi) * ELO,
                                "n_boot": len(boots), "n_deals": G, "n_games": int(orders["game"].nunique())}])
    pl = pl.assign(cell=cell.id, preset=cell.preset)
    return {"skill_win_share": ws, "skill_gap": gap, "skill_spread": spread_row, "skill_pl": pl}


def summarise(run_path, cfg: BalanceConfig, progress: bool = False) -> dict[str, pd.DataFrame]:
    """Every statistic of the study from the run's rows, written as parquet under ``summary/``
    (the tables the report and the notebook read): ``cells``, ``metrics``, ``laydown``, ``dist``,
    ``effects``, ``skill_*``."""
    from tqdm import tqdm

    cells = expand(cfg)
    byid = {c.id: c for c in cells}
    out: dict[str, list] = {k: [] for k in ("metrics", "laydown", "dist", "effects", "skill_win_share",
                                            "skill_gap", "skill_spread", "skill_pl")}
    cell_rows = []
    cache: dict[str, pd.DataFrame] = {}

    def rows_of(c: Cell) -> dict[str, pd.DataFrame]:
        return {t: load_cell(run_path, c, t) for t in CELL_TABLES[c.kind]}

    for c in tqdm(cells, disable=not progress, desc="statistics"):
        rows = rows_of(c)
        main = rows[CELL_TABLES[c.kind][-1]]
        played = int(main["deal"].nunique()) if len(main) else 0
        hands = (int(main.groupby(["deal", "hand_no"]).ngroups) if c.kind in ("match",) and len(main) else
                 played * (c.players if c.kind == "skill" else 1))
        cell_rows.append({"cell": c.id, "kind": c.kind, "preset": c.preset, "players": c.players,
                          "agents": ",".join(c.agents), "knob": c.knob, "base": c.base or "", "mode": c.mode,
                          "deals_planned": c.deals, "deals": played, "hands": hands, "rows": len(main),
                          "overlays": "+".join(c.overlays), "overrides": ", ".join(f"{k}={v}" for k, v in c.overrides)})
        if not len(main):
            continue
        if c.kind == "skill":
            for k, v in skill_statistics(c, main, seed=cfg.seed).items():
                out[k].append(v)
            continue
        for k, v in cell_statistics(cfg, c, rows).items():
            out[k].append(v)
        if c.kind in ("players", "knob") and c.base is None:
            cache[c.id] = main
        if c.base is not None and c.base in byid:
            base_rows = cache.get(c.base)
            if base_rows is None:
                base_rows = load_cell(run_path, byid[c.base], "hands")
                cache[c.base] = base_rows
            if len(base_rows):
                out["effects"].append(effects(cfg, c, base_rows, rows["hands"]))
    tables = {k: (pd.concat([x for x in v if len(x)], ignore_index=True) if any(len(x) for x in v) else pd.DataFrame())
              for k, v in out.items()}
    tables["cells"] = pd.DataFrame(cell_rows)
    d = Path(run_path) / "summary"
    d.mkdir(parents=True, exist_ok=True)
    for k, v in tables.items():
        v.to_parquet(d / f"{k}.parquet", index=False)
    return tables


def read_summary(run_path) -> dict[str, pd.DataFrame]:
    """The ``summary/*.parquet`` tables of a finished study (what the notebook reads)."""
    d = Path(run_path) / "summary"
    return {p.stem: pd.read_parquet(p) for p in sorted(d.glob("*.parquet"))}
