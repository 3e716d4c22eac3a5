"""The sequential probability ratio test (``analysis.sprt``): its ratio against a direct
computation, its bounds, its decisions on data with known truth, and its error rates on many
synthetic runs (the simulator's A/A runs measure them on real games: ``tests/test_aa.py``)."""

import math

import numpy as np
import pytest

from kalooki_sim.analysis.sprt import SPRT, sprt_bounds, sprt_decide, sprt_llr_path


def test_bounds_are_walds():
    lo, hi = sprt_bounds(0.05, 0.1)
    assert lo == pytest.approx(math.log(0.1 / 0.95)) and hi == pytest.approx(math.log(0.9 / 0.05))


def test_llr_path_is_the_normal_ratio_with_the_sample_variance():
    rng = np.random.default_rng(1)
    x = rng.normal(0.01, 0.1, size=50)
    path = sprt_llr_path(x, 0.0, 0.02)
    assert math.isnan(path[0])
    for n in (2, 10, 50):
        v = x[:n].var(ddof=1)
        direct = sum(((xi - 0.0) ** 2 - (xi - 0.02) ** 2) / (2 * v) for xi in x[:n])
        assert path[n - 1] == pytest.approx(direct)


def test_no_spread_is_no_evidence():
    assert np.isnan(sprt_llr_path(np.zeros(40), 0.0, 0.02)).all()
    assert sprt_decide(np.zeros(40), SPRT())["decision"] == "undecided"


def test_decisions_on_clear_data_and_min_deals():
    rng = np.random.default_rng(2)
    test = SPRT(h1=0.02, min_deals=30)
    better = rng.normal(0.05, 0.05, size=400)
    d = sprt_decide(better, test)
    assert d["decision"] == "H1" and 30 <= d["deals"] < 400 and d["llr"] >= d["upper"]
    same = rng.normal(-0.03, 0.05, size=400)
    d = sprt_decide(same, test)
    assert d["decision"] == "H0" and d["deals"] >= 30 and d["llr"] <= d["lower"]
    short = sprt_decide(better[:29], test)
    assert short["decision"] == "undecided" and short["deals"] == 29


@pytest.mark.parametrize("truth,want", [(0.0, "false positives"), (0.02, "power")])
def test_error_rates_on_synthetic_runs(truth, want):
    """Deal differences with heavy tails and the truth at H0 (0) or H1 (+2 points): H1 accepted in
    at most about alpha of the runs at H0, and in at least about 1 - beta at H1."""
    rng = np.random.default_rng(3)
    test = SPRT(h1=0.02, alpha=0.05, beta=0.05)
    runs = 400
    h1 = 0
    for _ in range(runs):
        x = truth + 0.08 * rng.standard_t(5, size=3000)
        h1 += sprt_decide(x, test)["decision"] == "H1"
    rate = h1 / runs
    se = math.sqrt(0.05 * 0.95 / runs)
    if truth == 0.0:
        assert rate <= 0.05 + 3 * se, rate
    else:
        assert rate >= 0.95 - 3 * se, rate


@pytest.mark.parametrize("bad", [dict(h1=0.0), dict(alpha=0.0), dict(beta=0.6), dict(min_deals=1),
                                 dict(h1=float("nan")), dict(alpha=True)])
def test_bad_tests_are_refused(bad):
    with pytest.raises(ValueError, match="sprt"):
        SPRT(**bad)
