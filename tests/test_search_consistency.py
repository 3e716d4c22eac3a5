"""``experiments/search_consistency.py``: its table counted by hand on made-up decisions, and a
tiny run that writes its files and leaves the seats' random streams as it found them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from kalooki_sim.engine import layout as L
from load_script import load_script


def _mod():
    return load_script("experiments/search_consistency.py")


def test_the_table_counts_departures_and_their_repeats():
    d7, d9 = L.A_DISCARD + 7, L.A_DISCARD + 9
    s, u = L.A_DRAW_STOCK, L.A_DRAW_DISCARD
    decisions = pd.DataFrame({
        "base":     [d7, d7, d7, d7, s, s, s],
        "first":    [d9, d9, d7, d7, u, s, s],
        "repeat_1": [d9, d7, d9, d7, s, s, u],
        "repeat_2": [d9, d7, d7, d7, s, s, s],
    })
    t = _mod().summarise(decisions).set_index("base's action")
    assert t.loc["discard", "decisions"] == 4 and t.loc["draw-stock", "decisions"] == 3
    assert t.loc["discard", "departed"] == 0.5
    assert t.loc["discard", "repeated (same action)"] == 2 / 4       # d9 again in 2 of the 4 repeats
    assert t.loc["discard", "departs where the first did not"] == 1 / 4
    assert t.loc["draw-stock", "departed"] == 1 / 3
    assert t.loc["draw-stock", "repeated (same action)"] == 0.0
    assert t.loc["draw-stock", "departs where the first did not"] == 1 / 4


def test_a_tiny_run_writes_its_files_and_restores_the_streams(tmp_path):
    mod = _mod()
    strategy = tmp_path / "search-tiny.toml"
    strategy.write_text('agent = "search"\nbase = "sharp-k40"\ndescription = "tiny"\n[params]\nworlds = 2\n'
                        'candidates = 2\n')
    out = tmp_path / "run"
    argv = ["--variant", "k40", "--mode", "hands", "--search", str(strategy), "--opponents", "sharp-k40,greedy,sharp",
            "--games", "2", "--steps", "12", "--repeats", "2", "--seed", "3", "--quiet", "--out", str(out)]
    assert mod.main(argv) == 0
    decisions = pd.read_csv(out / "consistency.csv")
    assert list(decisions.columns) == ["base", "first", "repeat_1", "repeat_2"] and len(decisions) > 0
    table = (out / "consistency.md").read_text()
    assert f"Rests on {len(decisions):,} decisions" in table
    meta = json.loads((out / "meta.json").read_text())
    assert meta["seed"] == 3 and "commit" in meta["git"]


def test_searching_again_leaves_keys_and_counters_and_repeats_itself():
    from kalooki_sim import load_rules
    from kalooki_sim.runtime.env import KalookiVecEnv
    from kalooki_sim.runtime.strategies import learned_policy, load_strategy

    mod = _mod()
    rules = load_rules("k40")
    env = KalookiVecEnv(rules, 4, batch=2, lineup=["learner", "sharp-k40", "greedy", "sharp"], rotate=True, seed=5)
    env.reset()
    searcher = learned_policy(load_strategy("search-k40"), rules)
    keys, ctrs = env.la.keys.copy(), env.la.ctrs.copy()
    rows = np.arange(2, dtype=np.int64)
    first = mod.search_again(env, searcher, rows, 2)
    assert np.array_equal(env.la.keys, keys) and np.array_equal(env.la.ctrs, ctrs)
    assert np.array_equal(mod.search_again(env, searcher, rows, 2), first)
    assert np.all(env.mask[rows[None, :].repeat(2, 0), first])


def test_a_search_that_is_not_one_is_refused_by_name(tmp_path, capsys):
    for name, says in (("greedy", "not a search strategy"), ("no-such-agent", "--search")):
        with pytest.raises(SystemExit):
            _mod().main(["--search", name, "--out", str(tmp_path / "x"), "--quiet"])
        assert says in capsys.readouterr().err
