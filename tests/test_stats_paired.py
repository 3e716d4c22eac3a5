"""Statistics for strategy tournaments on synthetic data (no simulator, no compile): clustered
means, paired differences, the variance reduction of duplicate deals, A/A coverage, ratings and
the results writer.  Each estimator is checked against a slow by-hand formula."""

import functools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize
from scipy.stats import t as student_t

from kalooki_sim.analysis.ratings import (
    bradley_terry, compare_ratings, finishing_orders, openskill_ratings, plackett_luce_mle, simulate_plackett_luce,
)
from kalooki_sim.analysis.stats import (
    aa_coverage, cluster_bootstrap_mean, clustered_mean, clustered_summary, naive_difference, paired_differences,
    summarize_clustered, synthetic_duplicate, variance_reduction, write_results,
)


def _random_clustered(seed, n_clusters=40, max_size=6):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, max_size + 1, n_clusters)
    c = np.repeat(rng.permutation(n_clusters) * 7 + 3, sizes)      # labels need not be 0..G-1
    y = rng.normal(size=n_clusters)[np.searchsorted(np.cumsum(sizes), np.arange(sizes.sum()), side="right")]
    return y + rng.normal(size=y.size), c


# ------------------------------------------------------------------------------------------------
# clustered means

@pytest.mark.parametrize("seed", range(5))
def test_clustered_se_equals_a_by_hand_loop(seed):
    y, c = _random_clustered(seed)
    est = clustered_mean(y, c)
    m = sum(y) / len(y)
    total = 0.0
    labels = sorted(set(c.tolist()))
    for lab in labels:
        s = sum(yi - m for yi, ci in zip(y, c) if ci == lab)
        total += s * s
    g, n = len(labels), len(y)
    se = math.sqrt(g / (g - 1) * total) / n
    assert est["mean"] == pytest.approx(m) and est["se"] == pytest.approx(se, rel=1e-12)
    assert est["n_clusters"] == g and est["n_rows"] == n
    half = student_t.ppf(0.975, g - 1) * se
    assert est["lo"] == pytest.approx(m - half) and est["hi"] == pytest.approx(m + half)


def test_one_row_per_cluster_is_the_ordinary_standard_error():
    y = np.random.default_rng(1).exponential(size=37)
    est = clustered_mean(y, np.arange(y.size))
    n = y.size
    hc0 = math.sqrt(((y - y.mean()) ** 2).sum()) / n         # the unclustered sandwich (ddof 0)
    assert est["se"] == pytest.approx(hc0 * math.sqrt(n / (n - 1)))
    assert est["se"] == pytest.approx(y.std(ddof=1) / math.sqrt(n))


def test_cluster_bootstrap_is_close_to_the_t_interval_for_many_deals_and_reproducible():
    y, c = _random_clustered(7, n_clusters=1500)
    est = clustered_mean(y, c)
    lo, hi = cluster_bootstrap_mean(y, c, n_boot=3000, seed=11)
    half = est["hi"] - est["mean"]
    assert abs(lo - est["lo"]) < 0.1 * half and abs(hi - est["hi"]) < 0.1 * half
    assert cluster_bootstrap_mean(y, c, n_boot=300, seed=5) == cluster_bootstrap_mean(
        y, c, n_boot=300, seed=np.random.default_rng(5))


def test_cluster_bootstrap_resamples_whole_clusters():
    # two clusters of very different sizes: every replicate mean is a ratio of drawn cluster sums
    y = np.array([0.0, 0.0, 0.0, 10.0])
    c = np.array([1, 1, 1, 2])
    _, draws = cluster_bootstrap_mean(y, c, n_boot=500, seed=0, return_draws=True)
    assert set(np.round(draws, 9)) <= {0.0, 10.0, 2.5}


def test_clustered_summary_per_group():
    t = synthetic_duplicate(3, n_deals=50)
    s = clustered_summary(t, "value", "deal", "agent", n_boot=200, seed=1)
    assert list(s["agent"]) == ["A", "B", "C", "D"] and (s["n_deals"] == 50).all() and (s["n_rows"] == 200).all()
    a = t[t.agent == "A"]
    assert s.loc[0, "se"] == pytest.approx(clustered_mean(a["value"], a["deal"])["se"])
    assert s.attrs["n_deals"] == 50 and s.attrs["n_rows"] == len(t)
    assert (s["boot_lo"] < s["mean"]).all() and (s["mean"] < s["boot_hi"]).all()


def test_summarize_clustered_agent_and_seat_rows():
    rng = np.random.default_rng(0)
    n = 300
    win = np.zeros((n, 4))
    win[np.arange(n), rng.integers(0, 2, n)] = 1.0             # only seats 0 and 1 ever win
    df = pd.DataFrame({"game_id": np.repeat(np.arange(n), 4), "seat": np.tile(np.arange(4), n),
                       "win_share": win.ravel(), "penalty": rng.integers(0, 100, 4 * n)})
    df["agent"] = np.where(df["seat"] < 2, "greedy", "random")
    s = summarize_clustered(df)
    assert list(zip(s["by"], s["group"])) == [("agent", "greedy"), ("agent", "random"), ("seat", 0), ("seat", 1),
                                             ("seat", 2), ("seat", 3)]
    assert list(s["agent"]) == ["greedy", "random", "greedy", "greedy", "random", "random"]
    g = s.iloc[0]
    # greedy holds two seats and always wins exactly one of them: its rate is 0.5 in every game
    assert g.win_rate == pytest.approx(0.5) and g.win_hi - g.win_lo < 1e-12 and g.n_deals == n
    r = s.iloc[1]                                               # never won: Wilson over the deals
    assert r.win_rate == 0 and r.win_lo == 0 and 0 < r.win_hi < 0.02
    assert s.attrs["n_deals"] == n and s.attrs["n_rows"] == 4 * n


# ------------------------------------------------------------------------------------------------
# paired differences and the duplicate design

def _slow_paired(df, a, b):
    d = []
    for deal in sorted(df["deal"].unique()):
        rows = df[df["deal"] == deal]
        xa = [v for v, g in zip(rows["value"], rows["agent"]) if g == a]
        xb = [v for v, g in zip(rows["value"], rows["agent"]) if g == b]
        if xa and xb:
            d.append(sum(xa) / len(xa) - sum(xb) / len(xb))
    return np.array(d)


def test_paired_differences_match_a_slow_loop():
    t = synthetic_duplicate(5, n_deals=25, agents=("A", "B", "C"))
    rng = np.random.default_rng(2)
    t = t.drop(index=rng.choice(len(t), 60, replace=False))   # some deals lose some of an agent's rows
    t = t[~((t["agent"] == "B") & (t["deal"] < 3))]           # ... or all of them
    p = paired_differences(t, "value", "deal", "agent", n_boot=400, seed=3)
    assert list(zip(p["a"], p["b"])) == [("A", "B"), ("A", "C"), ("B", "C")]
    for _, r in p.iterrows():
        d = _slow_paired(t, r.a, r.b)
        assert r.n_deals == d.size and r["diff"] == pytest.approx(d.mean())
        assert r.se == pytest.approx(d.std(ddof=1) / math.sqrt(d.size))
        half = student_t.ppf(0.975, d.size - 1) * r.se
        assert r.lo == pytest.approx(r["diff"] - half) and r.hi == pytest.approx(r["diff"] + half)
        assert r.n_separated == int((np.abs(d) > 0).sum())
        assert r.boot_lo < r["diff"] < r.boot_hi
    assert p.loc[0, "n_deals"] == 22                          # B missing from deals 0-2


def test_n_separated_counts_deals_where_the_pair_differs():
    df = pd.DataFrame({"deal": [0, 0, 1, 1, 2, 2], "agent": list("ababab"), "value": [1, 1, 2, 3, 0, 0.5]})
    p = paired_differences(df, "value")
    assert p.loc[0, "n_separated"] == 2 and p.loc[0, "diff"] == pytest.approx(-0.5)
    assert paired_differences(df, "value", tol=0.6).loc[0, "n_separated"] == 1


def test_variance_reduction_formula_by_hand():
    t = synthetic_duplicate(8, n_deals=30, agents=("A", "B"))
    v = variance_reduction(t, "value", "deal", "agent").iloc[0]
    d = _slow_paired(t, "A", "B")
    ya, yb = t.loc[t.agent == "A", "value"], t.loc[t.agent == "B", "value"]
    vi = ya.var(ddof=1) / len(ya) + yb.var(ddof=1) / len(yb)
    vp = d.var(ddof=1) / d.size
    assert v.var_paired == pytest.approx(vp) and v.var_independent == pytest.approx(vi)
    assert v.variance_ratio == pytest.approx(vp / vi) and v.effective_sample_multiplier == pytest.approx(vi / vp)


def test_duplicate_deals_reduce_variance_when_deal_effects_are_strong():
    strong = [variance_reduction(synthetic_duplicate(s, n_deals=80, deal_sd=2.0, deal_seat_sd=2.0, noise_sd=0.5),
                                 "value")["effective_sample_multiplier"].mean() for s in range(10)]
    none = [variance_reduction(synthetic_duplicate(s, n_deals=80, deal_sd=0.0, deal_seat_sd=0.0, noise_sd=1.0),
                               "value")["effective_sample_multiplier"].mean() for s in range(10)]
    assert np.mean(strong) > 3
    assert 0.85 < np.mean(none) < 1.15


# ------------------------------------------------------------------------------------------------
# A/A checks

AA_TABLE = functools.partial(synthetic_duplicate, n_deals=30, deal_sd=1.0, deal_seat_sd=1.0,
                             seat_effects=[0.3, 0.0, 0.0, -0.3], interaction_sd=1.0, noise_sd=1.0)


def test_aa_paired_interval_covers_zero_95_percent():
    cov = aa_coverage(AA_TABLE, range(400))
    assert cov["n_intervals"] == 400 * 6
    assert 0.92 <= cov["coverage"] <= 0.98


def test_aa_unclustered_intervals_under_cover():
    # per-agent means (truth 0): rows of one deal share the deal effects; treating rows as
    # independent under-covers badly, clustering by deal does not
    rows = aa_coverage(AA_TABLE, range(400), lambda t: clustered_summary(t.assign(row=np.arange(len(t))), "value",
                                                                         "row", "agent"))
    deals = aa_coverage(AA_TABLE, range(400), lambda t: clustered_summary(t, "value", "deal", "agent"))
    assert rows["coverage"] < 0.88
    assert 0.92 <= deals["coverage"] <= 0.98
    # differences with every game (rotation) taken as independent: the agent-by-deal interaction is
    # shared by the rotations of a deal, so this under-covers too
    games = aa_coverage(AA_TABLE, range(400), lambda t: paired_differences(t, "value", "game", "agent"))
    assert games["coverage"] < 0.92


def test_a_true_difference_is_detected():
    mk = functools.partial(AA_TABLE, n_deals=60, agent_effects=[1.0, 0.0, 0.0, 0.0])
    hits = null_hits = 0
    for s in range(40):
        p = paired_differences(mk(s), "value")
        hits += int((p[p.a == "A"]["lo"] > 0).all())
        b = p[(p.a == "B") & (p.b == "C")].iloc[0]
        null_hits += int(b["lo"] > 0 or b["hi"] < 0)
    assert hits >= 36 and null_hits <= 6


def test_naive_difference_ignores_deals():
    t = synthetic_duplicate(2, n_deals=20, agents=("A", "B"))
    n = naive_difference(t, "value").iloc[0]
    a, b = t.loc[t.agent == "A", "value"], t.loc[t.agent == "B", "value"]
    assert n["diff"] == pytest.approx(a.mean() - b.mean())
    assert n["se"] == pytest.approx(math.sqrt(a.var() / len(a) + b.var() / len(b)))


# ------------------------------------------------------------------------------------------------
# ratings

TRUE = np.array([0.9, 0.4, 0.0, -0.5, -0.8]) - 0.0


def test_finishing_orders_rank_wins_then_penalty_with_ties():
    df = pd.DataFrame({"game_id": [1, 1, 1, 1, 0, 0, 0, 0], "hand_no": 0,
                       "agent": ["g", "g", "r", "r", "g", "r", "g", "r"],
                       "win_share": [1, 0, 0, 0, .5, .5, 0, 0], "penalty": [0, 10, 20, 10, 0, 0, 5, 5]})
    o = finishing_orders(df)
    assert list(o["game"]) == [0, 0, 0, 0, 1, 1, 1, 1]
    assert list(o["rank"]) == [1, 1, 3, 3, 1, 2, 2, 4]
    assert list(o["agent"]) == ["g", "r", "g", "r", "g", "g", "r", "r"]


def _slow_pl_loglik(orders, theta_of):
    ll = 0.0
    for _, g in orders.groupby("game"):
        ranks = sorted(set(g["rank"]))
        for r in ranks:
            rem = g[g["rank"] >= r]
            tied = g[g["rank"] == r]
            if len(rem) == 1:
                continue
            denom = sum(math.exp(theta_of[a]) for a in rem["agent"])
            ll += sum(theta_of[a] for a in tied["agent"]) - len(tied) * math.log(denom)
    return ll


def test_plackett_luce_mle_maximises_the_breslow_likelihood():
    o = simulate_plackett_luce([0.5, 0.0, -0.5], 120, seed=4)
    o["rank"] = (o["rank"] + 1) // 2                           # ties: ranks 1,2,3 -> 1,1,2
    o["rank"] = o.groupby("game")["rank"].rank(method="min").astype(int)
    fit = plackett_luce_mle(o)
    agents = list(fit["agent"])

    def nll(x):
        th = np.r_[x, -x.sum()]
        return -_slow_pl_loglik(o, dict(zip(agents, th)))

    res = optimize.minimize(nll, np.zeros(len(agents) - 1), method="BFGS", options={"gtol": 1e-8})
    th = np.r_[res.x, -res.x.sum()]
    np.testing.assert_allclose(fit["strength"], th, atol=1e-4)
    assert fit.attrs["loglik"] == pytest.approx(-res.fun, abs=1e-6)


def test_plackett_luce_mle_recovers_known_strengths():
    th = TRUE - TRUE.mean()
    o = simulate_plackett_luce(th, 4000, seats=4, seed=1)
    o["cluster"] = o["game"] // 4
    fit = plackett_luce_mle(o, n_boot=50, seed=0)
    err = fit["strength"].to_numpy() - th
    assert np.all(np.abs(err) < 4 * fit["se"].to_numpy()) and np.abs(err).max() < 0.12
    assert fit["strength"].sum() == pytest.approx(0, abs=1e-9)
    assert list(fit["rank"]) == [1, 2, 3, 4, 5] and fit.attrs["converged"]
    assert fit["se_cluster"].notna().all() and (fit["boot_lo"] < fit["strength"]).all()
    assert fit.attrs["n_deals"] == 1000


def test_openskill_and_bradley_terry_agree_with_the_mle():
    o = simulate_plackett_luce(TRUE, 3000, seats=4, seed=2)
    cmp = compare_ratings(o)
    assert cmp["same_order"] and cmp["kendall_tau"] == pytest.approx(1.0)
    assert list(cmp["table"]["rank_bt"]) == [1, 2, 3, 4, 5]
    again = openskill_ratings(o)
    pd.testing.assert_frame_equal(again, openskill_ratings(o))        # deterministic
    bt = bradley_terry(o)
    assert bt["strength"].is_monotonic_decreasing


def test_ratings_refuse_an_agent_that_never_loses():
    o = pd.DataFrame({"game": [0, 0, 1, 1], "agent": ["a", "b", "a", "b"], "rank": [1, 2, 1, 2]})
    with pytest.raises(ValueError, match="not identifiable"):
        plackett_luce_mle(o, group="agent")


# ------------------------------------------------------------------------------------------------
# results tables and plots

def test_write_results_states_deals_and_rows(tmp_path):
    t = synthetic_duplicate(1, n_deals=12)
    s = clustered_summary(t, "value", "deal", "agent")
    p = paired_differences(t, "value")
    other = pd.DataFrame({"x": [1.5]})
    csv, md = write_results(tmp_path, {"per agent": s, "pairs": p, "other": other}, title="T",
                            counts={"other": (3, 4)})
    text = md.read_text()
    assert text.count("Rests on 12 deals (clusters) and 192 rows.") == 2 and "Rests on 3 deals" in text
    assert "| agent | n_rows |" in text
    back = pd.read_csv(csv)
    assert set(back["table"]) == {"per agent", "pairs", "other"} and (back["table_n_deals"] > 0).all()
    with pytest.raises(ValueError, match="deals and rows"):
        write_results(tmp_path, {"bare": other})


def test_plots_write_pngs(tmp_path):
    from kalooki_sim.analysis.stats_plots import plot_distribution, plot_estimates, plot_ratings

    t = synthetic_duplicate(1, n_deals=12)
    s = clustered_summary(t, "value", "deal", "agent")
    o = simulate_plackett_luce([0.3, 0, -0.3], 300, seed=0)
    for path in (plot_estimates(s, tmp_path / "e.png", xlabel="win share"),
                 plot_distribution(t, tmp_path / "b.png", value="value", kind="box"),
                 plot_distribution(t, tmp_path / "v.png", value="value", kind="violin"),
                 plot_ratings(plackett_luce_mle(o), tmp_path / "r.png")):
        assert path.stat().st_size > 1000


def test_a_cluster_can_be_named_by_several_columns():
    t = synthetic_duplicate(0, n_deals=20)
    t["seed"], t["deal_id"] = t["deal"] % 3, t["deal"] // 3          # a deal = (seed, deal id)
    for fn in (paired_differences, variance_reduction, clustered_summary):
        a, b = fn(t, "value", "deal"), fn(t, "value", ["seed", "deal_id"])
        num = a.select_dtypes("number").columns
        np.testing.assert_allclose(a[num].to_numpy(float), b[num].to_numpy(float), rtol=1e-12)
        assert b.attrs["n_deals"] == 20
