"""The `kalooki` command's error handling and its per-agent / per-seat summary (issue 28, item 6),
driven through the real CLI with tiny runs."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from kalooki_sim.cli import main


def _kalooki(*args):
    return subprocess.run([sys.executable, "-m", "kalooki_sim.cli", *args], capture_output=True, text=True,
                          timeout=900)


# ------------------------------------------------------------------------------------------------
# replay of a file that is missing or not a replay: one line, exit 2, no traceback

def test_replay_of_a_missing_file_is_a_one_line_error(tmp_path):
    missing = tmp_path / "nope.jsonl"
    r = _kalooki("replay", str(missing))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1
    assert str(missing) in r.stderr and "no such file" in r.stderr


@pytest.mark.parametrize("content", ["not json at all\n", '{"a": 1}\n', '[1, 2]\n', '{"type": "action"}\n', "",
                                     b"\xff\xfe\x00binary"])
def test_replay_of_a_file_that_is_not_a_replay(tmp_path, capsys, content):
    f = tmp_path / "bad.jsonl"
    (f.write_bytes if isinstance(content, bytes) else f.write_text)(content)
    assert main(["replay", str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and "not a replay file" in err and err.count("\n") == 1


def test_replay_of_a_directory(tmp_path, capsys):
    assert main(["replay", str(tmp_path)]) == 2
    assert "not a file" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------
# option validation names the flags

@pytest.mark.parametrize("args, message", [
    (["--hands", "0"], "--hands must be a positive integer, got 0"),
    (["--hands", "-5"], "--hands must be a positive integer, got -5"),
    (["--matches", "0"], "--matches must be a positive integer, got 0"),
    (["--shard-size", "0"], "--shard-size must be a positive integer, got 0"),
    (["--players", "0"], "--players must be a positive integer, got 0"),
    (["--seed", "-1"], "--seed must be an integer in 0..2**63-1, got -1"),
    (["--matches", "3", "--hands-per-match", "0"], "--hands-per-match must be a positive integer, got 0"),
    (["--variant", "k40", "--matches", "3", "--max-hands", "0"], "--max-hands must be a positive integer, got 0"),
    (["--record", "-1"], "--record must be 0 or more, got -1"),
    (["--players", "9", "--agents", "greedy," * 8 + "greedy"], "--players: caribbean is played by"),
])
def test_simulate_flags_are_validated_by_name(tmp_path, capsys, args, message):
    out = tmp_path / "run"
    assert main(["simulate", *args, "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "games and shard_size" not in err
    assert not out.exists()


def test_library_config_errors_name_the_flag_too():
    from kalooki_sim.core.rules import load_rules
    from kalooki_sim.studies.simulate import SimulationConfig, _check

    with pytest.raises(ValueError, match=r"games \(--hands\) must be a positive integer, got 0"):
        _check(SimulationConfig(games=0), load_rules("caribbean"))
    with pytest.raises(ValueError, match=r"shard_size \(--shard-size\)"):
        _check(SimulationConfig(shard_size=-1), load_rules("caribbean"))


# ------------------------------------------------------------------------------------------------
# the summary: header, per agent and per seat, clustered by game; penalties.png labels

def test_simulate_summary_has_a_header_and_agent_and_seat_rows(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["simulate", "--hands", "40", "--seed", "3", "--quiet", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    header = text.splitlines()[0]
    for part in ("caribbean", "4 players", "greedy, greedy, random, random", "40 hands", "seed 3", "40 deals",
                 "160 rows", "clustered"):
        assert part in header, part
    assert "win rate (95% CI)" in text and "seat  0 (greedy)" in text
    s = pd.read_csv(out / "summary.csv")
    assert list(s["by"]) == ["agent", "agent", "seat", "seat", "seat", "seat"]
    assert list(s["group"].astype(str)) == ["greedy", "random", "0", "1", "2", "3"]
    assert list(s["agent"]) == ["greedy", "random", "greedy", "greedy", "random", "random"]
    assert list(s["n_rows"]) == [80, 80, 40, 40, 40, 40] and (s["n_deals"] == 40).all()
    assert (s["win_lo"] <= s["win_rate"]).all() and (s["win_rate"] <= s["win_hi"]).all()
    # the clustered interval is the one of kalooki_sim.analysis.stats on the parquet rows
    from kalooki_sim.analysis.stats import clustered_mean

    hands = pd.concat(pd.read_parquet(p) for p in sorted((out / "hands").glob("*.parquet")))
    g = hands[hands["agent"] == "greedy"]
    est = clustered_mean(g["penalty"], g["game_id"])
    assert s.loc[0, "penalty_lo"] == pytest.approx(est["lo"]) and s.loc[0, "penalty_hi"] == pytest.approx(est["hi"])
    assert json.loads((out / "meta.json").read_text())["config"]["games"] == 40


def test_matches_summary_is_clustered_by_match(tmp_path, capsys):
    out = tmp_path / "m"
    assert main(["simulate", "--matches", "4", "--players", "3", "--agents", "greedy,random,greedy", "--seed", "1",
                 "--quiet", "--out", str(out)]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "4 matches" in header and "clustered by match" in header and "36 deals" in header
    s = pd.read_csv(out / "summary.csv")
    assert list(s["by"]) == ["agent", "agent", "seat", "seat", "seat"] and (s["match_n_deals"] == 4).all()


def test_penalty_plot_labels_fit_in_the_figure():
    import numpy as np

    from kalooki_sim.studies.simulate import penalty_figure

    rng = np.random.default_rng(0)
    hands = pd.DataFrame({"agent": np.repeat(["greedy", "random"], 200), "penalty": rng.integers(0, 250, 400)})
    fig = penalty_figure(hands)
    fig.canvas.draw()
    ax = fig.axes[0]
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    for label in (ax.yaxis.label, ax.xaxis.label, ax.title):
        e = label.get_window_extent(renderer)
        assert box.x0 <= e.x0 and e.x1 <= box.x1 and box.y0 <= e.y0 and e.y1 <= box.y1, label.get_text()
