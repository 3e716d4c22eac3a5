"""``experiments/departure_value.py``: the search's measured gain of a chooser's actions, counted by
hand on made-up decisions, and a tiny run on a shard and a checkpoint written here, which names
bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kalooki_sim.engine import layout as L
from kalooki_sim.studies.expert_data import Decisions
from load_script import load_script

D5, D7, D9, D11 = (L.A_DISCARD + k for k in (5, 7, 9, 11))
S, U = L.A_DRAW_STOCK, L.A_DRAW_DISCARD
# five decisions: two draws and two discards the search compared, one draw it did not
CAND = [[S, U], [S, U], [D7, D9, D11], [D7, D9, D11], [S]]
GAIN = [[0.0, 0.02], [0.0, -0.01], [0.0, -0.01, 0.03], [0.0, 0.05, 0.04], [0.0]]
LEGAL = [[S, U], [S, U], [D5, D7, D9, D11], [D5, D7, D9, D11], [S, U]]


def _decisions():
    ptr = np.concatenate([[0], np.cumsum([len(c) for c in CAND])])
    lptr = np.concatenate([[0], np.cumsum([len(c) for c in LEGAL])])
    return Decisions(obs_ptr=np.zeros(6, np.int64), obs_index=np.zeros(0, np.int64), obs_value=np.zeros(0, np.float32),
                     legal_ptr=lptr, legal=np.concatenate(LEGAL), label=np.array([U, S, D11, D9, S]),
                     round=np.ones(5, np.int32), cand_ptr=ptr, candidates=np.concatenate(CAND),
                     gain=np.concatenate(GAIN), gain_se=np.full(ptr[-1], 0.01))


def test_the_table_counts_departures_and_their_measured_gains():
    mod = load_script("experiments/departure_value.py")
    data = _decisions()
    rows = mod.compared_rows(data)
    assert list(rows) == [0, 1, 2, 3]                       # the unsearched draw is not judged
    assert list(mod.compared_rows(data, ("discard",))) == [2, 3]
    # the chooser takes the upcard once (+0.02), keeps the base once, plays D11 (+0.03) and D5 (not compared)
    t = mod.departure_value(data, rows, np.array([U, S, D11, D5])).set_index("base's action")
    assert t.loc["draw-stock", "decisions"] == 2 and t.loc["draw-stock", "departed"] == 0.5
    assert t.loc["draw-stock", "gain per 1,000 decisions"] == pytest.approx(1000 * (0.02 + 0.0) / 2)
    assert t.loc["draw-stock", "gain per departure"] == pytest.approx(0.02)
    assert t.loc["discard", "departed"] == 1.0 and t.loc["discard", "not compared"] == 1
    assert t.loc["discard", "gain per 1,000 decisions"] == pytest.approx(30.0)
    assert np.isnan(t.loc["discard", "se"])                 # one known gain: no spread
    assert t.loc["all", "decisions"] == 4 and t.loc["all", "not compared"] == 1
    assert t.loc["all", "gain per 1,000 decisions"] == pytest.approx(1000 * 0.05 / 3)
    assert t.loc["all", "se"] == pytest.approx(1000 * np.std([0.02, 0.0, 0.03], ddof=1) / np.sqrt(3))
    # the base's own actions gain nothing, by definition
    base = mod.departure_value(data, rows, np.array([S, S, D7, D7])).set_index("base's action")
    assert (base["departed"] == 0).all() and (base["gain per 1,000 decisions"] == 0).all()


def test_a_tiny_run_judges_a_network_and_names_bad_input(tmp_path, capsys):
    torch = pytest.importorskip("torch", reason='learned agents need the learn extra (pip install -e ".[learn]")')
    from kalooki_sim import load_rules
    from kalooki_sim.agents.learned import save_checkpoint
    from kalooki_sim.agents.learned.policy import PolicyValueNet

    mod = load_script("experiments/departure_value.py")
    shard = tmp_path / "data" / "decisions" / "round_01"
    shard.mkdir(parents=True)
    pd.DataFrame({"obs_index": [[0]] * 5, "obs_value": [[1.0]] * 5, "legal": LEGAL, "label": [U, S, D11, D9, S],
                  "round": [1] * 5, "candidates": CAND, "gain": GAIN, "gain_se": [[0.01] * len(c) for c in CAND]}
                 ).to_parquet(shard / "shard-000000.parquet")
    torch.manual_seed(0)
    ckpt = save_checkpoint(tmp_path / "net.pt", PolicyValueNet(hidden=(8,)), load_rules("caribbean"))
    out = tmp_path / "out"
    argv = ["--data", str(tmp_path / "data"), "--tables", "decisions/round_01", "--checkpoints", str(ckpt),
            "--out", str(out), "--quiet"]
    assert mod.main(argv) == 0
    table = pd.read_csv(out / "departure_value.csv")
    assert list(table["base's action"]) == ["draw-stock", "discard", "all"]
    assert (table["decisions"] == [2, 2, 4]).all() and (table["checkpoint"] == str(ckpt)).all()
    assert "Rests on 4 decisions" in (out / "departure_value.md").read_text()
    assert (out / "meta.json").is_file()
    for bad, says in ((["--kinds", "drawstock"], "unknown kinds of action ['drawstock']"),
                      (["--checkpoints", str(tmp_path / "none.pt")], "no such file"),
                      (["--tables", "decisions/round_09"], "no shards of decisions/round_09")):
        with pytest.raises(SystemExit):
            mod.main(argv + bad)
        assert says in capsys.readouterr().err
