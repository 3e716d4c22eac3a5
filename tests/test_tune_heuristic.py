"""experiments/tune_heuristic.py on tiny settings: it runs, saves a named strategy, checks it on
fresh deals, and an interrupted run resumes without losing or replaying a generation."""

from __future__ import annotations

import json

import pytest

from kalooki_sim.runtime.strategies import load_strategy
from load_script import load_script


def _module():
    return load_script("experiments/tune_heuristic.py")


def test_tiny_tuning_run_saves_and_checks_a_strategy(tmp_path):
    tune = _module()
    a = tune.TuneArgs(generations=2, popsize=4, deals_per_generation=12, out=str(tmp_path / "run"),
                      save_as="greedy-tiny", strategies_dir=str(tmp_path / "agents"), check_deals=16)
    res = tune.tune(a, progress=False)
    assert set(res["params"]) == {"call_threshold", "draw_threshold", "gap_weight"}
    assert (tmp_path / "run" / "learning_curve.png").stat().st_size > 0
    s = load_strategy(str(tmp_path / "agents" / "greedy-tiny.toml"))
    assert s.agent == "greedy"
    assert s.params[1] == pytest.approx(res["params"]["call_threshold"], rel=1e-5)
    chk = json.loads((tmp_path / "run" / "check.json").read_text())
    assert chk["n_deals"] == 16 and chk["lo"] <= chk["diff"] <= chk["hi"]
    assert (tmp_path / "run" / "check" / "results.md").exists()


def test_tuning_resumes_where_it_stopped(tmp_path):
    tune = _module()
    kw = dict(popsize=4, deals_per_generation=10)
    whole = tune.tune(tune.TuneArgs(generations=3, out=str(tmp_path / "whole"), **kw), progress=False)
    # stop after one generation (as an interrupted run would leave it), then resume to three
    tune.tune(tune.TuneArgs(generations=1, out=str(tmp_path / "cut"), **kw), progress=False)
    state = tmp_path / "cut" / "state.pkl"
    import pickle

    st = pickle.loads(state.read_bytes())
    st["args"]["generations"] = 3                  # the same run, asked for all its generations
    state.write_bytes(pickle.dumps(st))
    with pytest.raises(SystemExit):
        tune.tune(tune.TuneArgs(generations=3, out=str(tmp_path / "cut"), **kw), progress=False)
    again = tune.tune(tune.TuneArgs(generations=3, out=str(tmp_path / "cut"), **kw), resume=True, progress=False)
    # the finished generation is kept, not played again; the run goes on to its end
    assert [h["generation"] for h in again["history"]] == [0, 1, 2]
    assert again["history"][0] == whole["history"][0]


def test_tuning_on_whole_matches_by_their_score(tmp_path):
    """``mode = "matches"``: candidates play whole Caribbean matches, the fitness is the match total
    (lower wins), and the check compares tuned and untuned by the same objective."""
    tune = _module()
    a = tune.TuneArgs(strategy="sharp", params=("defense", "call_max_shortfall"), mode="matches",
                      objective="score", generations=2, popsize=4, deals_per_generation=3,
                      out=str(tmp_path / "run"), save_as="sharp-tiny", strategies_dir=str(tmp_path / "agents"),
                      check_deals=4)
    res = tune.tune(a, progress=False)
    assert len(res["history"]) == 2 and all(h["best"] > 0 for h in res["history"])   # totals, not shares
    chk = json.loads((tmp_path / "run" / "check.json").read_text())
    assert chk["objective"] == "score" and chk["mode"] == "matches" and chk["n_deals"] == 4
    assert chk["lo"] <= chk["diff"] <= chk["hi"]
    assert load_strategy(str(tmp_path / "agents" / "sharp-tiny.toml")).agent == "expert"


def test_objective_must_fit_the_mode(tmp_path):
    tune = _module()
    with pytest.raises(SystemExit, match="objective in matches mode"):
        tune.Problem(tune.TuneArgs(mode="matches", objective="penalty"))
    with pytest.raises(SystemExit, match="mode must be"):
        tune.Problem(tune.TuneArgs(mode="tricks"))
