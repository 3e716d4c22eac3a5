"""The A/A harness (``studies.aa``) on real games, small: copies of one strategy beside different
neighbours; their intervals cover zero about as often as stated, the sequential test rarely accepts
a difference that is not there, and a run resumes.  The full validation is
``experiments/aa_validation.py`` (docs/statistics.md)."""

import math

import pandas as pd
import pytest

from kalooki_sim.studies.aa import AAConfig, aa_lineup, run_aa, summarise


def test_lineup_holds_two_copies_beside_different_neighbours():
    names, a, b = aa_lineup(AAConfig(players=5))
    assert names[:2] == ["greedy-explore", "greedy-explore"] and (a, b) == ("greedy-explore#1", "greedy-explore#2")
    assert len(set(names[2:])) == 3
    names, a, b = aa_lineup(AAConfig(players=4, weaker="random"))
    assert (a, b) == ("greedy-explore", "random")
    with pytest.raises(ValueError, match="neighbours"):
        aa_lineup(AAConfig(players=6, neighbours=("random",)))


@pytest.mark.parametrize("players,mode", [(3, "hands"), (4, "matches")])
def test_copies_are_equal_within_their_intervals(tmp_path, players, mode):
    cfg = AAConfig(players=players, mode=mode, runs=60 if mode == "hands" else 25, deals=24 if mode == "hands" else 8,
                   out=str(tmp_path / "aa"))
    run, summary = run_aa(cfg, progress=False)
    runs = run.read_table("runs")
    assert len(runs) == cfg.runs * 3 and (runs.loc[runs.outcome != "sprt", "se"] > 0).all()   # copies differ
    cover = summary.set_index("outcome")["rate"]
    n = cfg.runs
    for outcome in [o for o in cover.index if "interval" in o]:
        # nominal 95 %: a small run only rules out gross failures (about 4 standard errors)
        assert cover[outcome] >= 0.95 - 4 * math.sqrt(0.05 * 0.95 / n), (outcome, cover[outcome])
    assert cover["sprt (H1 accepted)"] <= 0.05 + 4 * math.sqrt(0.05 * 0.95 / n)
    assert "Rests on" in (run.path / "results.md").read_text()


def test_power_run_sees_a_real_difference(tmp_path):
    cfg = AAConfig(players=4, strategy="greedy", weaker="random", runs=6, deals=40, out=str(tmp_path / "p"))
    _, summary = run_aa(cfg, progress=False)
    s = summary.set_index("outcome")
    assert s.loc["sprt (H1 accepted)", "rate"] == 1.0                  # greedy beats random by far more than 2 points
    assert s.loc["win_share (interval covers 0)", "rate"] == 0.0


def test_an_interrupted_validation_resumes_to_the_same_runs(tmp_path):
    cfg = AAConfig(players=3, runs=8, deals=10, out=str(tmp_path / "a"))
    run, _ = run_aa(cfg, progress=False)
    whole = run.read_table("runs")
    shards = sorted((run.path / "runs").glob("shard-*.parquet"))
    for f in shards[3:]:
        f.unlink()
    again, _ = run_aa(cfg, resume=True, progress=False)
    pd.testing.assert_frame_equal(again.read_table("runs"), whole)
    with pytest.raises(ValueError, match="seed"):
        run_aa(AAConfig(**{**cfg.__dict__, "seed": 5}), resume=True, progress=False)


def test_summary_counts_decisions():
    runs = pd.DataFrame({"run": [0, 0, 1, 1], "seed": [0, 0, 1, 1], "outcome": ["win_share", "sprt"] * 2,
                         "diff": [0.0] * 4, "se": [0.1] * 4, "lo": [-1, None, 0.1, None], "hi": [1, None, 1, None],
                         "n_deals": [10, 10, 10, 40], "covers_zero": [True, True, False, False],
                         "decision": [None, "H0", None, "H1"]})
    s = summarise(runs, AAConfig(runs=2, deals=10)).set_index("outcome")
    assert s.loc["win_share (interval covers 0)", "rate"] == 0.5
    assert s.loc["sprt (H1 accepted)", "rate"] == 0.5 and s.loc["sprt (H1 accepted)", "h0_rate"] == 0.5
    assert s.loc["sprt (H1 accepted)", "mean_deals"] == 25
