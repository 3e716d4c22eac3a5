"""Plots of the estimates in ``kalooki_sim.analysis.stats`` and ``kalooki_sim.analysis.ratings`` (PNG files).

Every figure is laid out with ``bbox_inches="tight"`` so axis labels are never cut off, and says in
its title how many deals (clusters) it rests on when that is known.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path) -> Path:
    path = Path(path)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    _plt().close(fig)
    return path


def _rests_on(frame: pd.DataFrame) -> str:
    d, r = frame.attrs.get("n_deals"), frame.attrs.get("n_rows")
    return f" ({d:,} deals, {r:,} rows)" if d is not None and r is not None else ""


def plot_estimates(est: pd.DataFrame, path, by: str | None = None, value: str = "mean", lo: str = "lo",
                   hi: str = "hi", xlabel: str = "win share", title: str | None = None) -> Path:
    """Horizontal dot-and-whisker chart of one estimate per group with its interval (e.g. the
    output of ``clustered_summary``: win share per agent with its clustered 95 % CI)."""
    plt = _plt()
    by = by or est.columns[0]
    labels = [str(v) for v in est[by]]
    y = np.arange(len(est))[::-1]
    m = est[value].to_numpy(float)
    err = np.vstack([m - est[lo].to_numpy(float), est[hi].to_numpy(float) - m])
    fig, ax = plt.subplots(figsize=(7, 1.2 + 0.45 * len(est)))
    ax.errorbar(m, y, xerr=err, fmt="o", capsize=4)
    ax.set_yticks(y, labels)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(by)
    ax.grid(axis="x", alpha=0.3)
    ax.set_title((title or f"{xlabel} per {by}, 95 % CI") + _rests_on(est))
    return _save(fig, path)


def plot_distribution(df: pd.DataFrame, path, value: str = "penalty", by: str = "agent", kind: str = "box",
                      ylabel: str | None = None, title: str | None = None) -> Path:
    """Box (``kind="box"``) or violin plots of ``value`` per group (penalty per agent)."""
    plt = _plt()
    groups = [(k, g[value].to_numpy(float)) for k, g in df.groupby(by, sort=True)]
    fig, ax = plt.subplots(figsize=(max(5, 1.2 * len(groups) + 2), 4))
    data = [x for _, x in groups]
    labels = [f"{k}\n(n={len(x):,})" for k, x in groups]
    if kind == "violin":
        ax.violinplot(data, showmedians=True)
        ax.set_xticks(np.arange(1, len(data) + 1), labels)
    elif kind == "box":
        ax.boxplot(data, showmeans=True)
        ax.set_xticks(np.arange(1, len(data) + 1), labels)
    else:
        raise ValueError(f"kind must be 'box' or 'violin', not {kind!r}")
    ax.set_xlabel(by)
    ax.set_ylabel(ylabel or value)
    ax.set_title(title or f"{value} per {by}")
    return _save(fig, path)


def plot_ratings(ratings: pd.DataFrame, path, by: str | None = None, value: str = "strength", lo: str = "lo",
                 hi: str = "hi", ylabel: str = "log strength (mean 0)", title: str | None = None) -> Path:
    """Bar chart of ratings with interval whiskers, strongest first (``plackett_luce_mle`` or
    ``bradley_terry`` output; for openskill pass ``value="mu"`` and intervals of your choice)."""
    plt = _plt()
    by = by or ratings.columns[0]
    r = ratings.sort_values(value, ascending=False)
    m = r[value].to_numpy(float)
    x = np.arange(len(r))
    fig, ax = plt.subplots(figsize=(max(5, 0.9 * len(r) + 2), 4))
    yerr = None
    if lo in r.columns and hi in r.columns:
        yerr = np.vstack([m - r[lo].to_numpy(float), r[hi].to_numpy(float) - m])
    ax.bar(x, m, yerr=yerr, capsize=4, color="tab:blue", alpha=0.8)
    ax.set_xticks(x, [str(v) for v in r[by]])
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel(by)
    ax.set_ylabel(ylabel)
    ax.set_title((title or "Ratings with 95 % intervals") + _rests_on(ratings))
    return _save(fig, path)
