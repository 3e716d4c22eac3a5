"""Sequential probability ratio tests on paired per-deal differences, as chess-engine testing does.

A tournament asks whether entrant ``a`` is better than ``b`` by at least an amount worth caring
about.  The user states an indifference zone: H0, the difference is ``h0`` (usually 0), against
H1, it is ``h1`` (say +0.02 of win share, two points), with error rates ``alpha`` (accepting H1
when H0 holds) and ``beta`` (accepting H0 when H1 holds).  Deals are played in order and after
every deal the log-likelihood ratio of the two hypotheses is updated; the test stops at the first
deal where it leaves Wald's bounds ``(log(beta / (1 - alpha)), log((1 - beta) / alpha))``.

The statistic is a deal's paired difference (``a``'s mean over the deal's seatings minus ``b``'s,
as in ``stats.paired_differences``); deals are independent, so the differences are too.  Their
distribution is not known, so the ratio is the generalised SPRT's normal one with the variance
estimated from the deals so far (what fishtest does with its pentanomial model, without the
model): ``LLR_n = (h1 - h0) / s_n^2 * sum_i (x_i - (h0 + h1) / 2)``.  A plug-in variance is noisy
on few deals, so no decision is taken before ``min_deals``.  The error rates this achieves are
measured, not assumed: ``studies.aa`` runs the test on many A/A tournaments (false positives) and
on a known difference (power); ``docs/statistics.md`` has the figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["SPRT", "sprt_bounds", "sprt_llr_path", "sprt_decide"]


@dataclass(frozen=True)
class SPRT:
    """The stated test: H0 ``h0`` against H1 ``h1`` (differences of ``a`` minus ``b``), error rates
    ``alpha`` and ``beta``, no decision before ``min_deals`` deals."""

    h1: float = 0.02
    h0: float = 0.0
    alpha: float = 0.05
    beta: float = 0.05
    min_deals: int = 30

    def __post_init__(self):
        for name in ("h0", "h1", "alpha", "beta"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ValueError(f"sprt {name} must be a finite number, got {v!r}")
        if self.h1 == self.h0:
            raise ValueError(f"sprt h1 must differ from h0 (both {self.h0})")
        for name in ("alpha", "beta"):
            if not 0.0 < getattr(self, name) < 0.5:
                raise ValueError(f"sprt {name} must be in (0, 0.5), got {getattr(self, name)}")
        if isinstance(self.min_deals, bool) or not isinstance(self.min_deals, int) or self.min_deals < 2:
            raise ValueError(f"sprt min_deals must be an int >= 2, got {self.min_deals!r}")


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's bounds on the log-likelihood ratio: below the first accept H0, above the second H1."""
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def sprt_llr_path(x, h0: float, h1: float) -> np.ndarray:
    """The log-likelihood ratio after each of the differences ``x`` (in deal order); NaN while
    fewer than two deals or no spread give no variance."""
    x = np.asarray(x, dtype=np.float64)
    n = np.arange(1, x.size + 1)
    s1 = np.cumsum(x)
    s2 = np.cumsum(x * x)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = (s2 - s1 * s1 / n) / np.maximum(n - 1, 1)
        llr = (h1 - h0) / var * (s1 - n * (h0 + h1) / 2.0)
    llr[(n < 2) | ~(var > 0)] = np.nan
    return llr


def sprt_decide(x, test: SPRT) -> dict:
    """The test run over the differences ``x`` in deal order: ``{"decision": "H1" | "H0" |
    "undecided", "deals": deals used (the deal of the decision, else all), "llr": the ratio
    then, "lower", "upper": the bounds}``."""
    lo, hi = sprt_bounds(test.alpha, test.beta)
    llr = sprt_llr_path(x, test.h0, test.h1)
    n = llr.size
    idx = np.arange(n)
    live = (idx + 1 >= test.min_deals) & np.isfinite(llr)
    cross = np.flatnonzero(live & ((llr >= hi) | (llr <= lo)))
    if cross.size:
        k = int(cross[0])
        return {"decision": "H1" if llr[k] >= hi else "H0", "deals": k + 1, "llr": float(llr[k]),
                "lower": lo, "upper": hi}
    last = float(llr[-1]) if n else math.nan
    return {"decision": "undecided", "deals": n, "llr": last, "lower": lo, "upper": hi}
