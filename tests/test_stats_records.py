"""Confidence intervals and run directories (metadata, atomic shards, resume)."""

import json

import numpy as np
import pandas as pd
import pytest

from kalooki_sim import load_rules
from kalooki_sim.analysis.stats import mean_interval, summarize, wilson_interval, win_rate
from kalooki_sim.studies.records import RunDir


def test_wilson_matches_textbook_value():
    lo, hi = wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0)


def test_interval_covers_true_rate_about_95_percent():
    rng = np.random.default_rng(3)
    hits = 0
    for _ in range(2000):
        k = rng.binomial(200, 0.3)
        lo, hi = wilson_interval(k, 200)
        hits += lo <= 0.3 <= hi
    assert 0.93 < hits / 2000 < 0.97


def test_shared_wins_use_mean_interval():
    rate, lo, hi = win_rate([1, 0, 0.5, 0.5, 1, 0])
    assert rate == pytest.approx(0.5) and lo < 0.5 < hi
    m, mlo, mhi = mean_interval([1.0, 2.0, 3.0])
    assert m == 2.0 and mlo < 2.0 < mhi


def test_summarize_one_row_per_agent():
    df = pd.DataFrame({"agent": ["a", "a", "b", "b"], "win_share": [1, 0, 0, 1], "penalty": [0, 10, 20, 0]})
    s = summarize(df)
    assert list(s["agent"]) == ["a", "b"] and list(s["n"]) == [2, 2]
    assert s.loc[0, "penalty_mean"] == 5.0


def test_run_dir_metadata_shards_and_resume(tmp_path):
    rules = load_rules("caribbean")
    run = RunDir.create(tmp_path / "r", {"hands": 10}, seed=7, rules=rules)
    meta = json.loads((tmp_path / "r" / "meta.json").read_text())
    assert meta["seed"] == 7 and meta["rules_digest"] == rules.digest() and "numpy" in meta["versions"]
    assert "commit" in meta["git"]
    run.write_shard("hands", 0, pd.DataFrame({"x": [1, 2]}))
    run.write_shard("hands", 1, pd.DataFrame({"x": [3]}))
    assert run.done_shards("hands") == {0, 1}
    assert list(run.read_table("hands")["x"]) == [1, 2, 3]
    with pytest.raises(FileExistsError):
        RunDir.create(tmp_path / "r", {"hands": 10}, seed=7, rules=rules)
    again = RunDir.create(tmp_path / "r", {"hands": 10}, seed=7, rules=rules, resume=True)
    assert again.done_shards("hands") == {0, 1}
    with pytest.raises(ValueError, match="seed"):
        RunDir.create(tmp_path / "r", {"hands": 10}, seed=8, rules=rules, resume=True)
