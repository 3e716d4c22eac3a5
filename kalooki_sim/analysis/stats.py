"""Honest numbers: win rates and means with confidence intervals.

Win shares are fractional when a hand or match is won jointly (ties shared, docs/rules.md A14), so a
win rate is the mean of per-game shares; its interval is Wilson's for whole wins and a normal
interval on the mean otherwise.  Everything returns plain floats / DataFrames for tables and plots.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

Z95 = 1.959963984540054


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (well behaved near 0 and 1)."""
    if n <= 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(x, z: float = Z95) -> tuple[float, float, float]:
    """(mean, low, high): normal interval on the mean, using the sample standard deviation."""
    a = np.asarray(x, dtype=float)
    if a.size == 0:
        return (math.nan, math.nan, math.nan)
    m = float(a.mean())
    if a.size < 2:
        return (m, math.nan, math.nan)
    half = z * float(a.std(ddof=1)) / math.sqrt(a.size)
    return (m, m - half, m + half)


def win_rate(shares) -> tuple[float, float, float]:
    """(rate, low, high) of per-game win shares in [0, 1]."""
    a = np.asarray(shares, dtype=float)
    if a.size and np.all((a == 0) | (a == 1)):
        lo, hi = wilson_interval(float(a.sum()), a.size)
        return (float(a.mean()), lo, hi)
    return mean_interval(a)


def summarize(df: pd.DataFrame, by: str = "agent", share: str = "win_share", score: str = "penalty",
              quantiles=(0.1, 0.5, 0.9)) -> pd.DataFrame:
    """One row per group: games, win rate with its 95 % interval, mean score and quantiles."""
    rows = []
    for key, g in df.groupby(by, sort=True):
        rate, lo, hi = win_rate(g[share])
        m, mlo, mhi = mean_interval(g[score])
        row = {by: key, "n": len(g), "win_rate": rate, "win_lo": lo, "win_hi": hi,
               f"{score}_mean": m, f"{score}_lo": mlo, f"{score}_hi": mhi}
        for q in quantiles:
            row[f"{score}_q{int(q * 100)}"] = float(g[score].quantile(q))
        rows.append(row)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------------
# clustered estimates: rows of one deal are not independent
#
# The seats of one hand share the cards, and in a duplicate tournament every rotation of the lineup
# over one deal shares them too, so a mean over rows is an average of correlated observations.  The
# estimators below treat the *deal* (any column or columns naming the cluster) as the independent
# unit: cluster-robust standard errors (CR1) with a t quantile on n_clusters - 1 degrees of freedom,
# and a bootstrap that resamples whole deals.  See docs/statistics.md.

def _as_list(cols) -> list[str]:
    return [cols] if isinstance(cols, str) else list(cols)


def cluster_codes(df: pd.DataFrame, cluster) -> np.ndarray:
    """Integer code 0..G-1 of each row's cluster (``cluster``: a column name or a list of them)."""
    cols = _as_list(cluster)
    if len(cols) == 1:
        return pd.factorize(df[cols[0]], sort=True)[0].astype(np.int64)
    return df.groupby(cols, sort=True).ngroup().to_numpy(np.int64)


def t_quantile(level: float, dof: float) -> float:
    """Two-sided ``level`` quantile of Student's t with ``dof`` degrees of freedom."""
    from scipy.stats import t

    if not dof >= 1:
        return math.nan
    return float(t.ppf(0.5 + level / 2, dof))


def clustered_mean(values, clusters, level: float = 0.95) -> dict:
    """Mean of ``values`` with a cluster-robust (CR1) standard error and a t interval.

    ``clusters``: one label per value (rows with equal labels are one deal).  The variance of the
    mean is ``G/(G-1) * sum_c (sum_{i in c} (y_i - ybar))**2 / N**2`` (the sandwich estimator of a
    regression on a constant with Stata's CR1 small-sample factor; for K = 1 regressor the
    ``(N-1)/(N-K)`` part is 1), and the interval uses t with ``G - 1`` degrees of freedom
    (Cameron & Miller 2015).  With one row per cluster it is the ordinary ``s / sqrt(N)``.
    Returns ``{"mean", "se", "lo", "hi", "n_rows", "n_clusters"}``.
    """
    y = np.asarray(values, dtype=float)
    c = pd.factorize(np.asarray(clusters), sort=True)[0] if len(y) else np.zeros(0, np.int64)
    n = y.size
    g = int(c.max()) + 1 if n else 0
    out = {"mean": math.nan, "se": math.nan, "lo": math.nan, "hi": math.nan, "n_rows": n, "n_clusters": g}
    if n == 0:
        return out
    m = float(y.mean())
    out["mean"] = m
    if g < 2:
        return out
    s = np.bincount(c, weights=y - m, minlength=g)
    se = math.sqrt(g / (g - 1) * float(s @ s)) / n
    half = t_quantile(level, g - 1) * se
    out.update(se=se, lo=m - half, hi=m + half)
    return out


def _rng(seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def cluster_bootstrap_mean(values, clusters, n_boot: int = 2000, level: float = 0.95, seed=0,
                           return_draws: bool = False):
    """Percentile interval ``(lo, hi)`` of the mean, resampling whole clusters with replacement.

    Each replicate draws G clusters out of the G observed (with replacement) and takes the mean
    over all their rows (sum of the drawn clusters' sums over the sum of their sizes).  ``seed``:
    an int or a ``numpy.random.Generator``.  With ``return_draws`` also the replicate means.
    """
    y = np.asarray(values, dtype=float)
    if y.size == 0 or n_boot < 1:
        return ((math.nan, math.nan), np.zeros(0)) if return_draws else (math.nan, math.nan)
    c = pd.factorize(np.asarray(clusters), sort=True)[0]
    g = int(c.max()) + 1
    sums = np.bincount(c, weights=y, minlength=g)
    sizes = np.bincount(c, minlength=g).astype(float)
    rng = _rng(seed)
    draws = np.empty(n_boot)
    block = max(1, 4_000_000 // g)           # replicates per batch (bounded memory)
    for start in range(0, n_boot, block):
        b = min(block, n_boot - start)
        idx = rng.integers(0, g, size=(b, g))
        draws[start:start + b] = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    alpha = (1 - level) / 2
    lo, hi = (float(v) for v in np.quantile(draws, [alpha, 1 - alpha]))
    return ((lo, hi), draws) if return_draws else (lo, hi)


def clustered_summary(df: pd.DataFrame, value: str, cluster="game_id", by: str = "agent",
                      level: float = 0.95, n_boot: int = 0, seed=0) -> pd.DataFrame:
    """Per group: mean of ``value`` with its clustered 95 % interval (and a deal bootstrap).

    Columns: ``by``, ``n_rows``, ``n_deals`` (clusters the group appears in), ``mean``, ``se``,
    ``lo``, ``hi`` and, with ``n_boot > 0``, ``boot_lo``, ``boot_hi``.  ``frame.attrs`` holds the
    whole table's ``n_rows`` and ``n_deals`` (for ``write_results``).
    """
    codes = cluster_codes(df, cluster)
    rng = _rng(seed)
    rows = []
    keys = df[by].to_numpy()
    values = df[value].to_numpy(float)
    for key in sorted(pd.unique(keys), key=_sort_key):
        mask = keys == key
        y = values[mask]
        c = codes[mask]
        est = clustered_mean(y, c, level)
        row = {by: key, "n_rows": est["n_rows"], "n_deals": est["n_clusters"], "mean": est["mean"],
               "se": est["se"], "lo": est["lo"], "hi": est["hi"]}
        if n_boot > 0:
            row["boot_lo"], row["boot_hi"] = cluster_bootstrap_mean(y, c, n_boot, level, rng)
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs.update(n_rows=len(df), n_deals=int(codes.max()) + 1 if len(df) else 0, value=value,
                     cluster=_as_list(cluster), level=level)
    return out


def _sort_key(v):
    """Sort mixed labels deterministically (numbers by value, then strings)."""
    return (0, float(v), "") if isinstance(v, (int, float, np.integer, np.floating)) else (1, 0.0, str(v))


# ------------------------------------------------------------------------------------------------
# paired differences between agents (duplicate deals)

def deal_means(df: pd.DataFrame, value: str, cluster="deal", group: str = "agent") -> tuple[pd.DataFrame, pd.DataFrame]:
    """(means, counts): deals x groups tables of each group's mean ``value`` over its rows in the
    deal and its number of rows there (NaN / 0 where the group did not play the deal)."""
    cols = _as_list(cluster)
    g = df.groupby(cols + [group], sort=True)[value]
    means = g.mean().unstack(group)
    counts = g.size().unstack(group).fillna(0).astype(np.int64)
    return means, counts


def _pairs(groups, pairs):
    if pairs is not None:
        return [tuple(p) for p in pairs]
    gs = sorted(groups, key=_sort_key)
    return [(a, b) for i, a in enumerate(gs) for b in gs[i + 1:]]


def paired_differences(df: pd.DataFrame, value: str, cluster="deal", group: str = "agent", pairs=None,
                       level: float = 0.95, n_boot: int = 0, seed=0, tol: float = 0.0) -> pd.DataFrame:
    """For every pair (a, b): the mean over deals of (a's mean in the deal - b's mean in the deal).

    Only deals where both played are used.  The interval is t over deals (``n_deals - 1`` degrees
    of freedom; the per-deal differences are independent because deals are); with ``n_boot > 0``
    also a percentile bootstrap over deals.  ``n_separated``: deals where the two per-deal means
    differ by more than ``tol`` (the deals that carry information about the pair).
    Columns: a, b, n_deals, n_separated, n_rows_a, n_rows_b, mean_a, mean_b, diff, se, lo, hi,
    [boot_lo, boot_hi].  ``pairs``: list of (a, b); default every pair, a < b.
    """
    means, counts = deal_means(df, value, cluster, group)
    rng = _rng(seed)
    rows = []
    for a, b in _pairs(means.columns, pairs):
        both = means[a].notna().to_numpy() & means[b].notna().to_numpy()
        ma = means[a].to_numpy()[both]
        mb = means[b].to_numpy()[both]
        d = ma - mb
        n = d.size
        row = {"a": a, "b": b, "n_deals": n, "n_separated": int((np.abs(d) > tol).sum()),
               "n_rows_a": int(counts[a].to_numpy()[both].sum()), "n_rows_b": int(counts[b].to_numpy()[both].sum()),
               "mean_a": float(ma.mean()) if n else math.nan, "mean_b": float(mb.mean()) if n else math.nan,
               "diff": float(d.mean()) if n else math.nan, "se": math.nan, "lo": math.nan, "hi": math.nan}
        if n >= 2:
            se = float(d.std(ddof=1)) / math.sqrt(n)
            half = t_quantile(level, n - 1) * se
            row.update(se=se, lo=row["diff"] - half, hi=row["diff"] + half)
        if n_boot > 0:
            row["boot_lo"], row["boot_hi"] = cluster_bootstrap_mean(d, np.arange(n), n_boot, level, rng)
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs.update(n_rows=len(df), n_deals=len(means), value=value, cluster=_as_list(cluster), level=level)
    return out


def order_effects(df: pd.DataFrame, value: str, n_seats: int, cluster="deal", game=("deal", "seating"),
                  group: str = "agent", seat: str = "seat") -> pd.DataFrame:
    """What the order of play is worth between two entrants: for every ordered pair (a, b) that
    share a table and every relative position ``position`` (b sits that many seats after a in the
    order of play), the mean over deals of a's ``value`` minus b's in the seatings with b there.

    A balanced design plays every pair at every position equally often, so the pairwise table
    averages these; the spread across positions (``order_effect`` in the summary rows,
    ``position = "max - min"``) is the bias a design that fixes the order (rotations) would have
    left in.  Seatings in which an entrant holds more than one seat are skipped.  Columns: a, b,
    position, diff, se, n_deals."""
    game = list(game)
    one = df.groupby(game + [group])[seat].transform("size") == 1
    d = df.loc[one, game + [group, seat, value] + [c for c in _as_list(cluster) if c not in game]]
    left = d.rename(columns={group: "a", seat: "seat_a", value: "value_a"})
    right = d.rename(columns={group: "b", seat: "seat_b", value: "value_b"})
    keys = game + [c for c in _as_list(cluster) if c not in game]
    pairs = left.merge(right[keys + ["b", "seat_b", "value_b"]], on=keys)
    pairs = pairs[pairs["a"] != pairs["b"]]
    pairs = pairs.assign(position=(pairs["seat_b"] - pairs["seat_a"]) % n_seats,
                         diff=pairs["value_a"] - pairs["value_b"])
    per_deal = pairs.groupby(["a", "b", "position"] + _as_list(cluster), sort=True)["diff"].mean().reset_index()
    rows = []
    for (a, b), grp in per_deal.groupby(["a", "b"], sort=False):
        if _sort_key(a) > _sort_key(b):
            continue
        means = []
        for pos, g in grp.groupby("position"):
            x = g["diff"].to_numpy(float)
            se = float(x.std(ddof=1)) / math.sqrt(x.size) if x.size >= 2 else math.nan
            rows.append({"a": a, "b": b, "position": str(int(pos)), "diff": float(x.mean()), "se": se,
                         "n_deals": int(x.size)})
            means.append(float(x.mean()))
        rows.append({"a": a, "b": b, "position": "max - min", "diff": max(means) - min(means), "se": math.nan,
                     "n_deals": int(grp[_as_list(cluster)[0]].nunique())})
    out = pd.DataFrame(rows, columns=["a", "b", "position", "diff", "se", "n_deals"])
    out.attrs.update(n_rows=len(df), value=value)
    return out


def variance_reduction(df: pd.DataFrame, value: str, cluster="deal", group: str = "agent", pairs=None) -> pd.DataFrame:
    """How much the paired (duplicate) design shrinks the variance of an estimated difference.

    For each pair, over the deals both played: ``var_paired = var(d) / n_deals`` (``d``: per-deal
    differences, as in ``paired_differences``) against ``var_independent = var_a / n_a + var_b /
    n_b``, the variance the difference of two means would have if the same numbers of rows
    (``n_a``, ``n_b``) came from independent deals (``var_a``, ``var_b``: the variances of the
    groups' rows, estimated from the same data).  ``variance_ratio = var_paired /
    var_independent`` (< 1: pairing helps); ``effective_sample_multiplier = 1 / variance_ratio``:
    how many times more independently dealt rows would give the same precision.
    """
    means, counts = deal_means(df, value, cluster, group)
    cols = _as_list(cluster)
    deal_of = pd.MultiIndex.from_frame(df[cols]) if len(cols) > 1 else pd.Index(df[cols[0]])
    rows = []
    for a, b in _pairs(means.columns, pairs):
        both = means[a].notna() & means[b].notna()
        used = deal_of.isin(means.index[both.to_numpy()])
        ya = df.loc[used & (df[group] == a).to_numpy(), value].to_numpy(float)
        yb = df.loc[used & (df[group] == b).to_numpy(), value].to_numpy(float)
        d = (means[a] - means[b])[both].to_numpy()
        n = d.size
        vp = float(d.var(ddof=1)) / n if n >= 2 else math.nan
        vi = (float(ya.var(ddof=1)) / ya.size + float(yb.var(ddof=1)) / yb.size
              if ya.size >= 2 and yb.size >= 2 else math.nan)
        ratio = vp / vi if vi > 0 else math.nan
        rows.append({"a": a, "b": b, "n_deals": n, "n_rows_a": ya.size, "n_rows_b": yb.size,
                     "var_paired": vp, "var_independent": vi, "variance_ratio": ratio,
                     "effective_sample_multiplier": 1 / ratio if ratio > 0 else math.nan})
    out = pd.DataFrame(rows)
    out.attrs.update(n_rows=len(df), n_deals=len(means), value=value, cluster=cols)
    return out


def naive_difference(df: pd.DataFrame, value: str, group: str = "agent", pairs=None,
                     level: float = 0.95) -> pd.DataFrame:
    """The interval that ignores the deals (every row independent): difference of the two groups'
    row means, normal interval with ``sqrt(s_a**2/n_a + s_b**2/n_b)``.  For comparison only."""
    z = _normal_quantile(level)
    rows = []
    groups = {k: g[value].to_numpy(float) for k, g in df.groupby(group, sort=True)}
    for a, b in _pairs(groups, pairs):
        ya, yb = groups[a], groups[b]
        diff = float(ya.mean() - yb.mean())
        se = math.sqrt(ya.var(ddof=1) / ya.size + yb.var(ddof=1) / yb.size)
        rows.append({"a": a, "b": b, "n_rows_a": ya.size, "n_rows_b": yb.size, "diff": diff, "se": se,
                     "lo": diff - z * se, "hi": diff + z * se})
    return pd.DataFrame(rows)


def _normal_quantile(level: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + level / 2)


# ------------------------------------------------------------------------------------------------
# A/A checks and synthetic duplicate data

def aa_coverage(make_table, seeds, estimate=None, truth: float = 0.0, lo: str = "lo", hi: str = "hi") -> dict:
    """How often intervals cover ``truth`` over tables made for many seeds (an A/A check).

    ``make_table(seed)`` returns a DataFrame; ``estimate(table)`` returns a frame with interval
    columns ``lo`` and ``hi`` (default: ``paired_differences(table, "value", "deal", "agent")``).
    ``truth``: the true value of every estimate (0 for differences when no agent is better).
    Returns ``{"coverage", "n_intervals", "n_covered", "mc_se"}`` (``mc_se``: the Monte Carlo
    standard error of the coverage, as if the intervals were independent).
    """
    if estimate is None:
        def estimate(t):
            return paired_differences(t, "value", "deal", "agent")
    n = covered = 0
    for s in seeds:
        est = estimate(make_table(s))
        ok = (est[lo].to_numpy(float) <= truth) & (truth <= est[hi].to_numpy(float))
        covered += int(ok.sum())
        n += len(est)
    p = covered / n if n else math.nan
    return {"coverage": p, "n_intervals": n, "n_covered": covered,
            "mc_se": math.sqrt(p * (1 - p) / n) if n else math.nan}


def synthetic_duplicate(seed, n_deals: int = 60, agents=("A", "B", "C", "D"), agent_effects=None,
                        deal_sd: float = 1.0, deal_seat_sd: float = 1.0, seat_effects=None,
                        interaction_sd: float = 0.0, noise_sd: float = 1.0) -> pd.DataFrame:
    """A duplicate-deal table with known truth, for tests and A/A checks (no simulator needed).

    Every deal is played once for each rotation of the lineup (rotation r puts agent
    ``agents[(s + r) % P]`` in seat s) and each row's ``value`` is
    ``agent_effect + deal_sd*N + deal_seat_sd*N[deal, seat] + seat_effect[seat]
    + interaction_sd*N[deal, agent] + noise_sd*N``: a deal effect shared by every row of the deal,
    the cards of each seat (shared by the rotations), a fixed seat advantage, an agent-by-deal
    interaction (mean 0) and independent noise.  Columns: deal, rotation, game, seat, agent, value.
    """
    rng = np.random.default_rng(seed)
    p = len(agents)
    eff = np.zeros(p) if agent_effects is None else np.asarray(agent_effects, float)
    seat_eff = np.zeros(p) if seat_effects is None else np.asarray(seat_effects, float)
    deal = np.repeat(np.arange(n_deals), p * p)
    rot = np.tile(np.repeat(np.arange(p), p), n_deals)
    seat = np.tile(np.arange(p), n_deals * p)
    who = (seat + rot) % p
    v = (eff[who] + deal_sd * rng.standard_normal(n_deals)[deal]
         + deal_seat_sd * rng.standard_normal((n_deals, p))[deal, seat] + seat_eff[seat]
         + interaction_sd * rng.standard_normal((n_deals, p))[deal, who]
         + noise_sd * rng.standard_normal(deal.size))
    return pd.DataFrame({"deal": deal, "rotation": rot, "game": deal * p + rot, "seat": seat,
                         "agent": np.asarray(agents, dtype=object)[who], "value": v})


# ------------------------------------------------------------------------------------------------
# results tables

def markdown_table(df: pd.DataFrame, digits: int = 4) -> str:
    """A GitHub markdown table (floats with ``digits`` significant digits, NaN as empty)."""
    def cell(v):
        if isinstance(v, (float, np.floating)):
            return "" if math.isnan(v) else f"{v:.{digits}g}"
        return str(v).replace("|", "\\|")

    cols = [str(c) for c in df.columns]
    right = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |",
             "|" + "|".join("---:" if r else ":---" for r in right) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    return "\n".join(lines)


def write_results(out_dir, tables, title: str | None = None, counts=None, notes=None, digits: int = 4):
    """Write ``results.csv`` (all tables stacked, tidy: a ``table`` column and the deals / rows each
    table rests on) and ``results.md`` (one markdown table per entry, each with a line saying how
    many deals and rows it rests on).  ``tables``: ``{name: DataFrame}``; the counts come from
    ``counts[name] = (n_deals, n_rows)`` or else from the frame's ``attrs`` (set by the estimators
    here).  ``notes``: optional ``{name: text}`` printed under a table's heading.
    Returns the two paths."""
    from pathlib import Path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    counts = dict(counts or {})
    notes = dict(notes or {})
    parts = []
    md = [f"# {title}", ""] if title else []
    for name, frame in tables.items():
        n_deals, n_rows = counts.get(name, (frame.attrs.get("n_deals"), frame.attrs.get("n_rows")))
        if n_deals is None or n_rows is None:
            raise ValueError(f"results table {name!r}: how many deals and rows it rests on is unknown; "
                             "pass counts={name: (n_deals, n_rows)}")
        ints = {c: "Int64" for c in frame.columns if pd.api.types.is_integer_dtype(frame[c])}
        parts.append(frame.astype(ints).assign(table=name, table_n_deals=int(n_deals), table_n_rows=int(n_rows)))
        md += [f"## {name}", "", f"Rests on {int(n_deals):,} deals (clusters) and {int(n_rows):,} rows."]
        level = frame.attrs.get("level")
        if level is not None:
            md[-1] += f" Intervals: {level:.0%}."
        if name in notes:
            md += ["", notes[name]]
        md += ["", markdown_table(frame, digits), ""]
    long = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if len(long):
        first = ["table", "table_n_deals", "table_n_rows"]
        long = long[first + [c for c in long.columns if c not in first]]
    csv_path, md_path = out / "results.csv", out / "results.md"
    long.to_csv(csv_path, index=False)
    md_path.write_text("\n".join(md).rstrip() + "\n")
    return csv_path, md_path


# ------------------------------------------------------------------------------------------------
# the summary of a simulation run: per agent and per seat, clustered by game

def summarize_clustered(df: pd.DataFrame, by=("agent", "seat"), cluster="game_id", share: str | None = "win_share",
                        score: str | None = "penalty", quantiles=(0.1, 0.5, 0.9), level: float = 0.95) -> pd.DataFrame:
    """Tidy per-group summary with intervals clustered by deal (``cluster``; default ``game_id``:
    the seats of one game share the cards, so its rows are not independent).

    One row per (``by`` level, group): ``by`` (e.g. "agent" or "seat"), ``group``, ``agent`` (the
    group itself for agent rows, the agent in the seat for seat rows when the table has an
    ``agent`` column and each seat holds one agent), ``n_rows``, ``n_deals``, ``win_rate``,
    ``win_lo``, ``win_hi`` (clustered t interval clipped to [0, 1]; for a group that never or always
    won, Wilson's interval with the number of deals as n), ``{score}_mean``,
    ``{score}_lo``, ``{score}_hi`` and the quantiles ``{score}_q10`` ...
    ``frame.attrs``: ``n_rows``, ``n_deals`` of the whole table, ``level``, ``cluster``.
    """
    codes = cluster_codes(df, cluster)
    rows = []
    for lev in _as_list(by):
        keys = df[lev].to_numpy()
        for key in sorted(pd.unique(keys), key=_sort_key):
            mask = keys == key
            c = codes[mask]
            row = {"by": lev, "group": key}
            if "agent" in df.columns:
                agents = pd.unique(df["agent"].to_numpy()[mask])
                row["agent"] = agents[0] if len(agents) == 1 else ",".join(sorted(map(str, agents)))
            row.update(n_rows=int(mask.sum()), n_deals=int(np.unique(c).size))
            if share is not None:
                w = clustered_mean(df[share].to_numpy(float)[mask], c, level)
                lo, hi = w["lo"], w["hi"]
                if w["mean"] in (0.0, 1.0) and w["n_clusters"] > 0:
                    # never / always won: the t interval collapses to a point; Wilson's interval on
                    # the number of deals (the independent units) is honest about the zero count
                    lo, hi = wilson_interval(w["mean"] * w["n_clusters"], w["n_clusters"], _normal_quantile(level))
                    lo, hi = min(lo, w["mean"]), max(hi, w["mean"])     # (exactly 0 / 1 at the edge)
                row.update(win_rate=w["mean"], win_lo=max(0.0, lo) if not math.isnan(lo) else math.nan,
                           win_hi=min(1.0, hi) if not math.isnan(hi) else math.nan)
            if score is not None:
                x = df[score].to_numpy(float)[mask]
                s = clustered_mean(x, c, level)
                row.update({f"{score}_mean": s["mean"], f"{score}_lo": s["lo"], f"{score}_hi": s["hi"]})
                for q in quantiles:
                    row[f"{score}_q{int(round(q * 100))}"] = float(np.quantile(x, q)) if x.size else math.nan
            rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs.update(n_rows=len(df), n_deals=int(codes.max()) + 1 if len(df) else 0, level=level,
                     cluster=_as_list(cluster))
    return out
