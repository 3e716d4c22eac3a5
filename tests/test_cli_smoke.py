"""The `kalooki` command and the experiment script, run as a user would (tiny budgets)."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from kalooki_sim.cli import main


@pytest.fixture(scope="module", autouse=True)
def _warm_kernels():
    """Compile the simulator kernels in this process first: numba writes them to its disk cache,
    so the subprocesses below load them instead of compiling everything again alongside the other
    test worker (on a cold cache that alone can take many minutes on 2 cores)."""
    from kalooki_sim import load_rules
    from kalooki_sim.runtime.rollout import simulate

    simulate(load_rules("caribbean"), 4, ["greedy", "greedy", "random", "random"], n_games=2, seed=0)
    simulate(load_rules("caribbean"), 3, ["greedy", "random", "greedy"], n_games=1, seed=0, mode="matches")


def _kalooki(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "kalooki_sim.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=900)


def test_simulate_writes_run_dir_and_resumes_without_double_counting(tmp_path):
    out = tmp_path / "run"
    r = _kalooki("simulate", "--hands", "90", "--seed", "5", "--shard-size", "40", "--quiet", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "win rate (95% CI)" in r.stdout and "greedy" in r.stdout
    for f in ("meta.json", "summary.csv", "penalties.png"):
        assert (out / f).exists(), f
    meta = json.loads((out / "meta.json").read_text())
    assert meta["seed"] == 5 and meta["config"]["games"] == 90 and meta["rules_digest"]
    hands = pd.concat(pd.read_parquet(p) for p in sorted((out / "hands").glob("*.parquet")))
    assert len(hands) == 90 * 4 and hands["game_id"].nunique() == 90
    # an existing run is refused without --resume, and a resume adds nothing
    again = _kalooki("simulate", "--hands", "90", "--seed", "5", "--shard-size", "40", "--quiet", "--out", str(out))
    assert again.returncode == 2 and "--resume" in again.stderr
    resumed = _kalooki("simulate", "--hands", "90", "--seed", "5", "--shard-size", "40", "--quiet", "--out",
                       str(out), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    other = _kalooki("simulate", "--hands", "90", "--seed", "5", "--shard-size", "40", "--quiet", "--out",
                     str(out), "--resume", "--agents", "greedy,greedy,greedy,random")
    assert other.returncode == 2 and "config.agents was " in other.stderr and "'random'" in other.stderr
    hands2 = pd.concat(pd.read_parquet(p) for p in sorted((out / "hands").glob("*.parquet")))
    assert len(hands2) == len(hands)


def test_bad_input_gets_a_clear_error(tmp_path):
    r = _kalooki("simulate", "--variant", "k99", "--hands", "9", "--out", str(tmp_path / "x"))
    assert r.returncode == 2 and "unknown variant" in r.stderr and "k99" in r.stderr
    r = _kalooki("simulate", "--agents", "greedy,smart,random,random", "--hands", "9", "--out", str(tmp_path / "y"))
    assert r.returncode == 2 and "smart" in r.stderr
    r = _kalooki("simulate", "--players", "4", "--agents", "greedy,random", "--hands", "9", "--out", str(tmp_path / "z"))
    assert r.returncode == 2 and "seat" in r.stderr


def test_experiment_script_runs_a_toml_config(tmp_path):
    cfg = tmp_path / "exp.toml"
    cfg.write_text('variant = "caribbean"\nplayers = 3\nagents = ["greedy", "random", "greedy"]\n'
                   f'games = 4\nmode = "matches"\nseed = 2\nout = "{tmp_path / "exp_run"}"\n')
    r = subprocess.run([sys.executable, "experiments/simulate.py", str(cfg)], capture_output=True, text=True,
                       timeout=900)
    assert r.returncode == 0, r.stderr
    matches = pd.concat(pd.read_parquet(p) for p in sorted((tmp_path / "exp_run" / "matches").glob("*.parquet")))
    assert len(matches) == 4 * 3
    assert abs(matches.groupby("game_id")["match_win_share"].sum() - 1).max() < 1e-9


@pytest.mark.parametrize("argv, flag", [
    (["demo", "--hands", "-2"], "--hands"),
    (["demo", "--seed", "-1"], "--seed"),
    (["demo", "--players", "9"], "--players"),
    (["tournament", "--seed", "-1", "--deals", "1"], "--seed"),
    (["play", "--seed", "-1"], "--seed"),
])
def test_bad_flags_are_refused_naming_the_flag(argv, flag, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert flag in err and err.count("\n") == 1


def test_default_agents_follow_players():
    from kalooki_sim.cli import _DEFAULT_SIMULATE, _DEFAULT_TOURNAMENT, _agents

    assert _agents(None, 3, _DEFAULT_SIMULATE) == ("greedy", "greedy", "random")
    assert _agents(None, 6, _DEFAULT_TOURNAMENT) == ("sharp", "counting", "greedy", "random", "greedy", "random")
    assert _agents("a, b", 3, _DEFAULT_SIMULATE) == ("a", "b")


def test_simulate_records_named_strategies(tmp_path, capsys):
    out = tmp_path / "rec"
    assert main(["simulate", "--hands", "4", "--agents", "sharp,counting,greedy,random", "--record", "2",
                 "--out", str(out), "--quiet"]) == 0
    path = out / "replays.jsonl"
    header = json.loads(path.read_text().splitlines()[0])
    assert header["strategies"] == ["sharp", "counting", "greedy", "random"]
    assert header["agents"][:2] == ["expert", "expert"]
    capsys.readouterr()
    assert main(["replay", str(path), "--check", "--check-agents"]) == 0
    shown = capsys.readouterr().out
    assert "P1 sharp (expert)" in shown


def test_simulate_refuses_an_unknown_strategy_before_running(tmp_path, capsys):
    assert main(["simulate", "--hands", "4", "--agents", "sharp,nope,greedy,random", "--record", "1",
                 "--out", str(tmp_path / "x"), "--quiet"]) == 2
    assert "nope" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


@pytest.fixture(scope="module")
def recorded_hand(tmp_path_factory):
    from kalooki_sim.runtime.replay import record_games

    path = tmp_path_factory.mktemp("rp") / "one.jsonl"
    record_games("caribbean", 4, ["greedy", "greedy", "random", "random"], 3, [0], path=path)
    return path.read_text().splitlines()


@pytest.mark.parametrize("field, value", [
    ("seed", 2**64), ("game_id", 10**30), ("players", "4"), ("seed", {}), ("variant", "x" * 300),
    ("agents", 5), ("agents", ["greedy"] * 3), ("params", [["nan"]] * 4), ("dealer", -1), ("mode", "both"),
])
def test_replay_check_refuses_a_bad_header_in_one_line(recorded_hand, tmp_path, capsys, field, value):
    header = json.loads(recorded_hand[0])
    header[field] = value
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join([json.dumps(header)] + recorded_hand[1:]) + "\n")
    assert main(["replay", str(path), "--check"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kalooki: error:") and err.count("\n") == 1 and "valid:" not in err


def test_replay_check_refuses_changed_rule_knobs(recorded_hand, tmp_path, capsys):
    header = json.loads(recorded_hand[0])
    header["rules"]["n_decks"] = 3
    path = tmp_path / "knobs.jsonl"
    path.write_text("\n".join([json.dumps(header)] + recorded_hand[1:]) + "\n")
    assert main(["replay", str(path), "--check"]) == 2
    assert "n_decks" in capsys.readouterr().err


def test_replay_without_check_says_a_damaged_file_does_not_validate(recorded_hand, tmp_path, capsys):
    lines = list(recorded_hand)
    ev = json.loads(lines[5])
    lines[5] = json.dumps({**ev, "seat": (ev.get("seat", 0) + 1) % 4}) if ev["type"] == "action" else lines[5]
    lines = lines[:5] + lines[6:] if ev["type"] != "action" else lines
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(lines) + "\n")
    main(["replay", str(path)])
    assert "does not validate" in capsys.readouterr().err


def test_ctrl_c_prints_one_line_and_exits_130(monkeypatch, capsys):
    import kalooki_sim.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_simulate", interrupted)
    assert cli.main(["simulate", "--hands", "10"]) == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--resume" in err


@pytest.mark.parametrize("argv", [
    ["simulate", "--hands", "10", "--quiet", "--out", "/proc/nope/x"],
    ["simulate", "--hands", str(2**63), "--quiet"],
    ["simulate", "--hands", "10", "--quiet", "--variant", "k" * 300],
    ["simulate", "--hands", "10", "--quiet", "--agents", "g" * 300 + ",greedy,greedy,greedy"],
    ["tournament", "--deals", "2", "--quiet", "--out", "/proc/nope/x"],
    ["tournament", "--deals", "2", "--quiet", "--variant", "k" * 300],
])
def test_bad_cli_input_is_one_line_and_exit_2(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("kalooki: error:") and err.count("\n") == 1


def test_compile_first_shows_the_compile_and_restarts_the_clock(monkeypatch, tmp_path):
    import time

    from tqdm import tqdm

    import kalooki_sim.core.jit as jit
    from kalooki_sim.studies.records import compile_first

    monkeypatch.setattr(jit, "cache_dir", lambda: str(tmp_path))     # nothing compiled yet
    bar = tqdm(total=10, disable=True)
    shown = []
    monkeypatch.setattr(bar, "set_postfix_str", lambda s, refresh=True: shown.append(s))
    compile_first(bar, lambda: time.sleep(0.7))
    assert any(s.startswith("compiling the kernels") for s in shown) and shown[-1].startswith("compiled in")
    assert bar.n == 0
    (tmp_path / "k.nbi").write_text("")                                 # compiled: nothing to do
    ran = []
    compile_first(bar, lambda: ran.append(1))
    assert ran == []
    with pytest.raises(ZeroDivisionError):                              # a failure reaches the caller
        (tmp_path / "k.nbi").unlink()
        compile_first(bar, lambda: 1 / 0)
