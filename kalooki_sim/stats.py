"""Honest numbers: win rates and means with confidence intervals.

Win shares are fractional when a hand or match is won jointly (ties shared, RULES.md A14), so a
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
