"""The balance study's report: ``report.md`` with PNG figures, from the ``summary/*.parquet`` tables.

Every figure is a function of the summary tables alone (``balance_stats.read_summary``), so the notebook
``notebooks/variant_balance.ipynb`` draws the same figures from the same parquet files.  The
findings are written from the numbers, one per question of issue 30, each with its 95 % interval
(clustered by deal; knob effects are paired differences over common deals).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["write_report", "fig_seat_advantage", "fig_hand_length", "fig_skill", "fig_effects", "fig_laydown",
           "fig_scores", "FIGURES", "findings"]

_KNOB_METRICS = (("turns", "turns per hand"), ("no_winner", "hands without a winner"),
                 ("loser_penalty", "loser's penalty"), ("win_share_dealer+1", "win share, dealer's left"))


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _colour(preset: str):
    """One colour per preset in every figure."""
    from .balance import PRESETS

    i = PRESETS.index(preset) if preset in PRESETS else len(PRESETS)
    return f"C{i % 10}"


def _base_cells(t, players=None):
    c = t["cells"]
    sel = (c["kind"] == "players")
    if players is not None:
        sel &= c["players"] == players
    return c[sel]


def fig_seat_advantage(t: dict, knob_players: int = 4):
    """Win share by seat relative to the dealer (0 = dealer, 1 = his left: first to play), per
    preset, one panel per player count, with 95 % intervals and the fair share 1/n."""
    plt = _plt()
    cells = _base_cells(t)
    counts = sorted(cells["players"].unique())
    fig, axes = plt.subplots(1, len(counts), figsize=(3.6 * len(counts), 3.6), squeeze=False, sharey=True)
    m = t["metrics"]
    for ax, n in zip(axes[0], counts):
        cs = cells[cells["players"] == n]
        presets = list(cs["preset"])
        for j, (cid, preset) in enumerate(zip(cs["cell"], presets)):
            w = m[(m["cell"] == cid) & (m["metric"] == "win_share")].copy()
            w["s"] = w["group"].str.replace("dealer+", "", regex=False).astype(int)
            w = w.sort_values("s")
            x = w["s"] + (j - (len(presets) - 1) / 2) * 0.1
            ax.errorbar(x, w["mean"], yerr=[w["mean"] - w["lo"], w["hi"] - w["mean"]], fmt="o", ms=3, capsize=2,
                        label=preset, color=_colour(preset))
        ax.axhline(1 / n, color="grey", lw=0.8, ls="--")
        ax.set_title(f"{n} players")
        ax.set_xlabel("seat after the dealer (0 = dealer)")
        ax.set_xticks(range(n))
    axes[0][0].set_ylabel("win share (95 % CI)")
    axes[0][-1].legend(fontsize=7)
    fig.suptitle("Seat advantage: win share by seat relative to the dealer (identical agents)")
    fig.tight_layout()
    return fig


def fig_hand_length(t: dict, knob_players: int = 4):
    """Distribution of turns per hand, per preset, at ``knob_players`` players."""
    plt = _plt()
    d = t["dist"]
    cells = _base_cells(t, knob_players)
    fig, ax = plt.subplots(figsize=(7, 4))
    for cid, preset in zip(cells["cell"], cells["preset"]):
        h = d[(d["cell"] == cid) & (d["what"] == "turns")]
        if len(h):
            ax.step((h["left"] + h["right"]) / 2, h["share"] / (h["right"] - h["left"]), where="mid", label=preset,
                    color=_colour(preset))
    ax.set_xlabel("turns per hand (all players' turns; last bin: 99.5th percentile and above)")
    ax.set_ylabel("density")
    ax.set_title(f"Hand length, {knob_players} players, identical agents")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def fig_skill(t: dict):
    """Skill per variant: the win-share gap strongest - weakest (and - middle) agent, paired on
    duplicate deals, and the Plackett-Luce strength spread in Elo points (bootstrap over deals)."""
    plt = _plt()
    gap, spread = t.get("skill_gap"), t.get("skill_spread")
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    if gap is not None and len(gap):
        weak = list(dict.fromkeys(gap["b"]))
        presets = list(dict.fromkeys(gap["preset"]))
        for j, b in enumerate(weak):
            g = gap[gap["b"] == b].set_index("preset").reindex(presets)
            x = np.arange(len(presets)) + (j - (len(weak) - 1) / 2) * 0.2
            axes[0].errorbar(x, g["diff"], yerr=[g["diff"] - g["lo"], g["hi"] - g["diff"]], fmt="o", capsize=3,
                             label=f"{g['a'].iloc[0]} - {b}")
        axes[0].set_xticks(range(len(presets)), presets, rotation=30)
        axes[0].axhline(0, color="grey", lw=0.8)
        axes[0].set_ylabel("win-share gap (95 % CI)")
        axes[0].set_title("Restricted play: strong minus weaker agent")
        axes[0].legend(fontsize=8)
    if spread is not None and len(spread):
        s = spread
        axes[1].errorbar(np.arange(len(s)), s["spread_elo"], yerr=[s["spread_elo"] - s["lo_elo"],
                                                                   s["hi_elo"] - s["spread_elo"]], fmt="s", capsize=3)
        axes[1].set_xticks(range(len(s)), s["preset"], rotation=30)
        axes[1].set_ylabel("Elo points (95 % bootstrap CI)")
        axes[1].set_title(f"Rating spread {s['strong'].iloc[0]} - {s['weak'].iloc[0]} (Plackett-Luce)")
    fig.tight_layout()
    return fig


def fig_effects(t: dict):
    """Each house rule's / knob's effect against its base cell: paired differences with 95 % CI,
    one panel per metric."""
    plt = _plt()
    e = t.get("effects")
    if e is None or not len(e):
        fig, ax = plt.subplots()
        ax.text(0.5, 0.5, "no knob cells", ha="center")
        return fig
    e = e[e["cell"].map(lambda c: "/matches" not in c)]
    labels = list(dict.fromkeys(e["cell"]))
    fig, axes = plt.subplots(1, len(_KNOB_METRICS), figsize=(4 * len(_KNOB_METRICS), 0.22 * len(labels) + 1.5),
                             sharey=True)
    y = np.arange(len(labels))
    for ax, (m, name) in zip(axes, _KNOB_METRICS):
        g = e[e["metric"] == m].set_index("cell").reindex(labels)
        ax.errorbar(g["diff"], y, xerr=[g["diff"] - g["lo"], g["hi"] - g["diff"]], fmt="o", ms=3, capsize=2)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("knob - base (95 % CI)")
    axes[0].set_yticks(y, [lab.replace("/greedy", "") for lab in labels], fontsize=7)
    axes[0].invert_yaxis()
    fig.suptitle("House rules and knobs: paired effect against the preset as written (common deals)")
    fig.tight_layout()
    return fig


def fig_laydown(t: dict, knob_players: int = 4):
    """Caribbean: probability of having laid down by table turn t, per round (base cell)."""
    plt = _plt()
    ld = t.get("laydown")
    fig, ax = plt.subplots(figsize=(7, 4))
    if ld is not None and len(ld):
        cid = f"caribbean/{knob_players}p/"
        cells = [c for c in ld["cell"].unique() if c.startswith(cid) and c.count("/") == 2]
        if cells:
            g = ld[ld["cell"] == cells[0]]
            for r, h in g.groupby("round"):
                ax.plot(h["t"], h["mean"], label=f"round {r}")
                ax.fill_between(h["t"], h["lo"], h["hi"], alpha=0.2)
            ax.set_title(f"Caribbean, {knob_players} players: P(laid down by table turn t)")
    ax.set_xlabel("table turn t (each player's t-th turn)")
    ax.set_ylabel("probability (95 % CI)")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig


def fig_scores(t: dict):
    """Penalty per losing hand and score per match (money where the variant pays, else the total)."""
    plt = _plt()
    d = t["dist"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for cid in [c for c in d["cell"].unique() if c.count("/") == 2 and c.endswith("4p/greedy")]:
        h = d[(d["cell"] == cid) & (d["what"] == "penalty")]
        axes[0].step((h["left"] + h["right"]) / 2, h["share"], where="mid", label=cid.split("/")[0])
    axes[0].set_xlabel("penalty of a losing player (last bin: 99.5th percentile and above)")
    axes[0].set_ylabel("share")
    axes[0].set_title("Penalty per losing hand, 4 players")
    axes[0].legend(fontsize=8)
    for cid in [c for c in d["cell"].unique() if c.endswith("/matches")]:
        h = d[(d["cell"] == cid) & (d["what"] == "score")]
        axes[1].step((h["left"] + h["right"]) / 2, h["share"], where="mid", label=cid.split("/")[0])
    axes[1].set_xlabel("score per match: money (K40 family, NA15, AMER) or total (Caribbean)")
    axes[1].set_title("Match score distribution")
    axes[1].legend(fontsize=8)
    fig.tight_layout()
    return fig


FIGURES = {"seat_advantage.png": fig_seat_advantage, "hand_length.png": fig_hand_length, "skill.png": fig_skill,
           "knob_effects.png": fig_effects, "laydown.png": fig_laydown, "scores.png": fig_scores}


# ------------------------------------------------------------------------------------------------
# findings

def _ci(mean, lo, hi, pct=False, digits=2):
    if pct:
        return f"{100 * mean:.1f} % (95 % CI {100 * lo:.1f}–{100 * hi:.1f})"
    return f"{mean:.{digits}f} (95 % CI {lo:.{digits}f}–{hi:.{digits}f})"


def _pm(d, lo, hi, pct=False):
    half = (hi - lo) / 2
    if pct:
        return f"{100 * d:+.1f} ± {100 * half:.1f} points"
    return f"{d:+.2f} ± {half:.2f}"


def _metric(t, cell, metric, group=""):
    m = t["metrics"]
    r = m[(m["cell"] == cell) & (m["metric"] == metric) & (m["group"] == group)]
    return r.iloc[0] if len(r) else None


def findings(t: dict, knob_players: int = 4) -> list[str]:
    """One plain-language finding per question of issue 30, with numbers and intervals."""
    out = []
    m = t["metrics"]
    base = _base_cells(t)
    # fairness
    ws = m[(m["metric"] == "win_share") & m["cell"].isin(base["cell"])].merge(base[["cell", "preset", "players"]],
                                                                             on="cell")
    if len(ws):
        ws = ws.assign(dev=ws["mean"] - 1 / ws["players"])
        top = ws.loc[ws["dev"].abs().idxmax()]
        sig = ws[(ws["lo"] > 1 / ws["players"]) | (ws["hi"] < 1 / ws["players"])]
        four = ws[ws["players"] == knob_players]
        left = four[four["group"] == "dealer+1"]
        parts = [f"{r.preset} {_ci(r['mean'], r.lo, r.hi, pct=True)}" for _, r in left.iterrows()]
        out.append(f"**Seat fairness.** With {knob_players} identical players the dealer's left neighbour (first to "
                   f"play) wins {'; '.join(parts)} against a fair {100 / knob_players:.0f} %. The largest seat "
                   f"effect in any cell: {top.preset}, {int(top.players)} players, seat {top.group}: "
                   f"{_ci(top['mean'], top.lo, top.hi, pct=True)} vs fair {100 / top.players:.1f} %; "
                   f"{len(sig)} of {len(ws)} seat shares have an interval that excludes the fair share.")
    # length and endings
    rows = []
    for _, c in _base_cells(t, knob_players).iterrows():
        tr, so, nw, one = (_metric(t, c.cell, k) for k in ("turns", "stock_ran_out", "no_winner", "out_in_one_turn"))
        if tr is not None:
            rows.append(f"{c.preset} {tr['mean']:.1f} turns (± {(tr.hi - tr.lo) / 2:.1f}), stock ran out in "
                        f"{100 * so['mean']:.1f} %, no winner in {100 * nw['mean']:.1f} %, out in one turn "
                        f"{100 * one['mean']:.1f} % (± {100 * (one.hi - one.lo) / 2:.1f})")
    if rows:
        out.append(f"**Length and endings** ({knob_players} players): " + "; ".join(rows) + ".")
    # caribbean lay-down
    ld = t.get("laydown")
    if ld is not None and len(ld):
        cell = f"caribbean/{knob_players}p/"
        g = ld[ld["cell"].str.startswith(cell) & (ld["cell"].str.count("/") == 2)]
        if len(g):
            tt = min(10, int(g["t"].max()))
            t10 = g[g["t"] == tt].sort_values("round")
            if len(t10):
                lo_r, hi_r = t10.loc[t10["mean"].idxmin()], t10.loc[t10["mean"].idxmax()]
                out.append(f"**Caribbean lay-downs.** By the {tt}th table turn a player has laid down with probability "
                           f"{_ci(hi_r['mean'], hi_r.lo, hi_r.hi, pct=True)} in round {int(hi_r['round'])} but only "
                           f"{_ci(lo_r['mean'], lo_r.lo, lo_r.hi, pct=True)} in round {int(lo_r['round'])}.")
    # scores and calls
    c0 = f"caribbean/{knob_players}p/"
    cb = base[base["cell"].str.startswith(c0)]
    if len(cb):
        cid = cb["cell"].iloc[0]
        cp, lp = _metric(t, cid, "calls_per_hand"), _metric(t, cid, "loser_penalty")
        cm, cd = _metric(t, cid, "calls_made_per_hand"), _metric(t, cid, "denied_calls_per_hand")
        if cp is not None:
            made = (f"{_ci(cm['mean'], cm.lo, cm.hi)} calls made, " if cm is not None else "")
            denied = (f", {_ci(cd['mean'], cd.lo, cd.hi)} denied" if cd is not None else "")
            out.append(f"**Scores and calls.** In Caribbean ({knob_players} players) a hand sees {made}"
                       f"{_ci(cp['mean'], cp.lo, cp.hi)} allowed{denied}, and a loser keeps "
                       f"{_ci(lp['mean'], lp.lo, lp.hi, digits=1)} penalty points.")
    ms = m[(m["metric"] == "score_abs") & m["cell"].str.endswith("/matches")]
    if len(ms):
        parts = [f"{r.cell.split('/')[0]} {_ci(r['mean'], r.lo, r.hi, digits=1)}" for _, r in ms.iterrows()]
        out.append("**Match scores** (mean absolute score per player and match: money won or lost in the paying "
                   "variants, the penalty total in Caribbean; distributions in scores.png): " + "; ".join(parts) + ".")
    # skill
    gap, spread = t.get("skill_gap"), t.get("skill_spread")
    if gap is not None and len(gap):
        weakest = gap["b"].iloc[-1]
        g = gap[gap["b"] == weakest].sort_values("diff")
        sp = spread.set_index("preset") if spread is not None and len(spread) else None
        parts = []
        for _, r in g.iterrows():
            s = f"{r.preset} {_pm(r['diff'], r.lo, r.hi, pct=True)}"
            if sp is not None and r.preset in sp.index:
                q = sp.loc[r.preset]
                s += f" ({q.spread_elo:.0f} Elo, {q.lo_elo:.0f}–{q.hi_elo:.0f})"
            parts.append(s)
        out.append(f"**Skill.** The win-share gap {g['a'].iloc[0]} − {weakest} on duplicate deals (and the "
                   f"Plackett-Luce rating spread): " + "; ".join(parts) + f". Least room for skill: "
                   f"{g['preset'].iloc[0]}; most: {g['preset'].iloc[-1]}.")
        mid = gap[gap["b"] != weakest]
        for b, rows in mid.groupby("b", sort=False):      # one sentence per weaker rung of the ladder
            parts = [f"{r.preset} {_pm(r['diff'], r.lo, r.hi, pct=True)}" for _, r in rows.iterrows()]
            out.append(f"**Skill among good agents.** {rows['a'].iloc[0]} − {b}: " + "; ".join(parts) + ".")
    # house rules
    e = t.get("effects")
    if e is not None and len(e):
        for m_, what in (("turns", "turns"), ("win_share_dealer+1", "the dealer's left neighbour's win share"),
                         ("loser_penalty", "a loser's penalty"), ("no_winner", "hands without a winner")):
            g = e[(e["metric"] == m_) & ((e["lo"] > 0) | (e["hi"] < 0))]
            if not len(g):
                out.append(f"**House rules / knobs, {what}:** no knob moves it beyond its 95 % interval.")
                continue
            g = g.reindex(g["diff"].abs().sort_values(ascending=False).index).head(4)
            pct = m_ in ("win_share_dealer+1", "no_winner")
            parts = [f"{r.preset} ({int(r.players)}p) {r.knob} {_pm(r['diff'], r.lo, r.hi, pct=pct)}" for _, r in g.iterrows()]
            n_sig = int(((e["metric"] == m_) & ((e["lo"] > 0) | (e["hi"] < 0))).sum())
            out.append(f"**House rules / knobs, {what}:** {n_sig} of {int((e['metric'] == m_).sum())} knob cells "
                       f"change it beyond the 95 % interval; largest: " + "; ".join(parts) + ".")
    return out


# ------------------------------------------------------------------------------------------------

def _table(df: pd.DataFrame, digits: int = 3) -> str:
    from kalooki_sim.analysis.stats import markdown_table

    return markdown_table(df, digits)


def write_report(run_path, cfg, tables: dict | None = None) -> Path:
    """Compute the statistics (``balance_stats.summarise``) unless given, draw the figures and write
    ``report.md`` in the run directory; returns its path."""
    from .balance_stats import METRIC_LABELS, summarise

    run_path = Path(run_path)
    t = tables if tables is not None else summarise(run_path, cfg)
    plt = _plt()
    for name, f in FIGURES.items():
        fig = f(t)
        fig.savefig(run_path / name, dpi=100, bbox_inches="tight")
        plt.close(fig)
    cells = t["cells"]
    timing = []
    tf = run_path / "timing.jsonl"
    if tf.exists():
        timing = [json.loads(x) for x in tf.read_text().splitlines() if x.strip()]
    secs = sum(x["seconds"] for x in timing)
    played = sum(x["hands"] for x in timing)
    total = int(cells["hands"].sum())
    m = t["metrics"]
    ws = m[m["metric"] == "win_share"]
    md = ["# Rule-variant balance study", "",
          f"Run `{run_path}`: seed {cfg.seed}, {len(cells)} cells, **{total:,} hands** in all "
          f"({int(cells['deals'].sum()):,} deals). Agents: homogeneous tables of `{cfg.mixes[0]}` "
          f"(mixes {', '.join(cfg.mixes)}); skill ladder (strongest first): {', '.join(cfg.ladder)}.",
          f"Hands per cell: players/knob cells {cfg.deals:,}, skill cells {cfg.skill_deals:,} deals × "
          f"{cfg.knob_players} seatings, match cells {cfg.match_deals:,} matches.",
          "All intervals are 95 %: clustered by deal (CR1, t on deals − 1 df) for per-cell numbers; knob effects "
          "are paired differences over the deals both cells played (same seed and deal ids, so the same cards "
          "wherever the knob leaves the deck alone); the rating spread has a percentile bootstrap over deals.", ""]
    if timing:
        md += [f"Wall time of the play: {secs:.0f} s for {played:,} hands over {len(timing)} session(s) "
               f"({played / max(secs, 1e-9):,.0f} hands/s, backend {', '.join(sorted({x['backend'] for x in timing}))}).", ""]
    if len(ws):
        half = (ws["hi"] - ws["lo"]) / 2
        md += [f"CI widths reached: seat win shares ± {100 * half.median():.1f} points (median; "
               f"{100 * half.min():.1f}–{100 * half.max():.1f}); turns per hand ± "
               f"{((m[m.metric == 'turns'].hi - m[m.metric == 'turns'].lo) / 2).median():.2f} (median).", ""]
    md += ["## Findings", ""] + [f"- {f}" for f in findings(t, cfg.knob_players)] + [""]
    md += ["## Figures", ""]
    for name, f in FIGURES.items():
        md += [f"![{name}]({name})", "", f"*{' '.join((f.__doc__ or '').split())}*", ""]
    md += ["## Seat advantage", "", "Win share by seat after the dealer (dealer+1 plays first), identical agents.", ""]
    seat = ws.merge(cells[["cell", "preset", "players", "kind"]], on="cell")
    seat = seat[seat["kind"] == "players"]
    if len(seat):
        wide = seat.assign(v=[f"{100 * a:.1f} [{100 * b:.1f}, {100 * c:.1f}]" for a, b, c in
                              zip(seat["mean"], seat["lo"], seat["hi"])])
        wide = wide.pivot_table(index=["preset", "players"], columns="group", values="v", aggfunc="first")
        md += [_table(wide.reset_index().fillna("")), ""]
    md += ["## Per cell", "", "Hand-level numbers with 95 % intervals (clustered by deal).", ""]
    show = ("turns", "stock_ran_out", "no_winner", "out_in_one_turn", "calls_made_per_hand", "calls_per_hand",
            "denied_calls_per_hand", "loser_penalty")
    pm = m[m["metric"].isin(show)]
    if len(pm):
        wide = pm.assign(v=[f"{a:.3g} [{b:.3g}, {c:.3g}]" for a, b, c in zip(pm["mean"], pm["lo"], pm["hi"])])
        wide = wide.pivot_table(index="cell", columns="metric", values="v", aggfunc="first").reindex(
            columns=[s for s in show if s in set(pm["metric"])])
        wide = wide.reindex([c for c in cells["cell"] if c in wide.index])
        hands = cells.set_index("cell")["hands"]
        wide.insert(0, "hands", [f"{int(hands[c]):,}" for c in wide.index])
        md += [_table(wide.reset_index()), ""]
        md += ["Columns: " + "; ".join(f"{k} = {METRIC_LABELS[k]}" for k in show) + ".", ""]
    e = t.get("effects")
    if e is not None and len(e):
        md += ["## House rules and knobs: paired effects", "",
               "knob − base over common deals (same seed and deal ids); `*` = interval excludes 0.", ""]
        sel = e[e["metric"].isin([k for k, _ in _KNOB_METRICS] + ["out_in_one_turn", "stock_ran_out", "calls_per_hand"])]
        v = sel.assign(v=[f"{d:+.3g} [{lo:+.3g}, {hi:+.3g}]{'*' if (lo > 0 or hi < 0) else ''}"
                          for d, lo, hi in zip(sel["diff"], sel["lo"], sel["hi"])])
        wide = v.pivot_table(index=["preset", "players", "knob"], columns="metric", values="v", aggfunc="first")
        md += [_table(wide.reset_index().fillna("")), ""]
    for name, title in (("skill_win_share", "Skill: win share per agent (duplicate deals)"),
                        ("skill_gap", "Skill: paired win-share gaps"),
                        ("skill_spread", "Skill: Plackett-Luce strength spread (Duersch et al. 2020)")):
        s = t.get(name)
        if s is not None and len(s):
            md += [f"## {title}", "", _table(s.drop(columns=["cell"], errors="ignore")), ""]
    md += ["## Cells", "", _table(cells.drop(columns=["agents"])), "",
           "## Limits", "",
           "- In single-hand cells every deal is a fresh game, so `calls per hand` vs per game and elimination "
           "(V5) act only in the match cells.",
           "- `k101` plays its hands as `k40` does (it differs in the match: elimination at 101, stakes): its "
           "hand-level numbers equal k40's on the same deals.",
           "- The deck knobs (jokers, three decks) change the cards, so their differences are paired on the deal "
           "ids but not on identical cards.", ""]
    path = run_path / "report.md"
    path.write_text("\n".join(md))
    return path
