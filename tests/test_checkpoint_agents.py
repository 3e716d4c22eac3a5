"""A trained checkpoint is an agent like any other (issue 29, item 2): strategies resolve it,
``kalooki simulate`` and ``kalooki tournament`` play it; torch stays optional elsewhere."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.learn
torch = pytest.importorskip("torch", reason='learned agents need the learn extra (pip install -e ".[learn]")')

from kalooki_sim.agents.base import EXTERNAL  # noqa: E402
from kalooki_sim.core.rules import load_rules  # noqa: E402
from kalooki_sim.runtime import strategies  # noqa: E402
from kalooki_sim.runtime.strategies import StrategyError, learned_policy, lineup, load_strategy  # noqa: E402


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory):
    from kalooki_sim.agents.learned import PolicyValueNet, save_checkpoint

    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("ckpt") / "tiny.pt"
    save_checkpoint(path, PolicyValueNet(hidden=(16,)), load_rules("caribbean"))
    return path


def _net(path):
    from kalooki_sim.agents.learned import LearnedPolicy, load_checkpoint

    net, _ = load_checkpoint(path, load_rules("caribbean"))
    return LearnedPolicy(net, greedy=True)


# ---- resolution

def test_bare_path_and_toml_resolve_to_a_learned_strategy(ckpt, tmp_path):
    s = load_strategy(str(ckpt))
    assert s.learned and s.agent_id == EXTERNAL and s.checkpoint == str(ckpt) and s.params == ()
    sub = tmp_path / "conf"
    sub.mkdir()
    toml = sub / "mine.toml"
    rel = "../" + ckpt.name
    (tmp_path / ckpt.name).write_bytes(ckpt.read_bytes())
    toml.write_text(f'checkpoint = "{rel}"\ndescription = "a tiny net"\n')
    t = load_strategy(str(toml))
    assert t.name == "mine" and t.learned and t.description == "a tiny net"
    assert t.checkpoint == str((sub / rel).absolute())        # relative to the TOML's directory
    strats, ids, params = lineup([str(toml), "greedy"])
    assert ids.tolist() == [EXTERNAL, 1] and not params[0].any()
    pol = learned_policy(t, load_rules("caribbean"))
    assert pol.greedy
    assert learned_policy(t, load_rules("caribbean")) is pol              # loaded once


def test_errors_are_one_line(ckpt, tmp_path, monkeypatch):
    with pytest.raises(StrategyError, match="nope.pt: no such file"):
        load_strategy(str(tmp_path / "nope.pt"))
    toml = tmp_path / "gone.toml"
    toml.write_text('checkpoint = "missing/x.pt"\n')
    with pytest.raises(StrategyError, match=r"gone.toml: checkpoint .*missing/x.pt: no such file"):
        load_strategy(str(toml))
    toml.write_text(f'checkpoint = "{ckpt}"\nagent = "greedy"\n')
    with pytest.raises(StrategyError, match="only checkpoint and description"):
        load_strategy(str(toml))
    with pytest.raises(StrategyError, match="not on 'k40'"):                  # CheckpointMismatch's message
        learned_policy(str(ckpt), load_rules("k40"))
    junk = tmp_path / "junk.pt"
    junk.write_text("not a checkpoint")
    with pytest.raises(StrategyError, match="not a readable checkpoint"):
        learned_policy(str(junk), load_rules("caribbean"))
    copy = tmp_path / "copy.pt"
    copy.write_bytes(ckpt.read_bytes())
    monkeypatch.setitem(sys.modules, "torch", None)                          # torch not installed
    with pytest.raises(StrategyError, match=r"install the learn extra: pip install -e \.\[learn\]"):
        learned_policy(str(copy), load_rules("caribbean"))


def test_cli_reports_errors_without_traceback(ckpt, tmp_path, capsys):
    from kalooki_sim.cli import main

    rc = main(["simulate", "--agents", f"{tmp_path / 'nope.pt'},greedy,greedy,greedy", "--hands", "2",
               "--out", str(tmp_path / "r1"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "nope.pt: no such file" in err and "Traceback" not in err
    rc = main(["tournament", "--variant", "k40", "--agents", f"{ckpt},greedy", "--deals", "2",
               "--out", str(tmp_path / "r2"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "not on 'k40'" in err
    assert not (tmp_path / "r1").exists() and not (tmp_path / "r2").exists()


def test_agents_lists_learned_strategies(ckpt, tmp_path, monkeypatch, capsys):
    from kalooki_sim.cli import main

    toml = tmp_path / "mine.toml"
    toml.write_text(f'checkpoint = "{ckpt}"\ndescription = "a tiny net"\n')
    files = strategies._files()
    monkeypatch.setattr(strategies, "_files", lambda: {**files, "mine": toml})
    assert main(["agents"]) == 0
    line = [x for x in capsys.readouterr().out.splitlines() if x.startswith("mine ")][0]
    assert "learned" in line and "a tiny net" in line and str(ckpt) in line
    s = load_strategy("mine")                                  # by name, like any named strategy
    assert s.learned and s.checkpoint == str(ckpt)
    with pytest.raises(StrategyError, match=r"unknown agent 'nosuch'; known agents: .*greedy.*mine"):
        load_strategy("nosuch")


def test_compiled_commands_do_not_import_torch():
    code = ("import sys; import kalooki_sim.cli, kalooki_sim.studies.simulate, kalooki_sim.studies.tournament; "
            "from kalooki_sim.runtime.strategies import lineup, known_strategies, load_strategy; "
            "lineup(['greedy', 'sharp', 'random']); [load_strategy(n) for n in known_strategies()]; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---- simulate

def test_simulate_with_a_learned_seat_equals_play_policies(ckpt, tmp_path):
    from kalooki_sim.runtime.policy_play import play_policies
    from kalooki_sim.studies.simulate import SimulationConfig, run_simulation

    agents = (str(ckpt), "greedy", "greedy", "greedy")
    cfg = SimulationConfig(agents=agents, games=6, shard_size=4, out=str(tmp_path / "run"))
    run = run_simulation(cfg, progress=False)
    got = run.read_table("hands")
    assert (tmp_path / "run" / "summary.csv").is_file()
    direct = pd.DataFrame(play_policies(load_rules("caribbean"), 4, [_net(ckpt), "greedy", "greedy", "greedy"],
                                        6, 0))
    direct = direct.drop(columns=["batch_row"], errors="ignore")
    got = got.sort_values(["game_id", "hand_no", "seat"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got[direct.columns], direct, check_dtype=False)
    assert (got.loc[got.seat == 0, "policy_id"] == -1).all()
    assert got.loc[got.seat == 0, "agent"].eq(str(ckpt)).all()


def test_simulate_matches_with_a_learned_seat(ckpt, tmp_path):
    from kalooki_sim.studies.simulate import SimulationConfig, run_simulation

    cfg = SimulationConfig(agents=("greedy", str(ckpt), "greedy", "greedy"), games=1, mode="matches",
                           hands_per_match=2, out=str(tmp_path / "run"))
    run = run_simulation(cfg, progress=False)
    m = run.read_table("matches")
    assert len(m) == 4 and m.loc[m.seat == 1, "policy_id"].eq(-1).all()
    assert run.read_table("hands")["hand_no"].nunique() == 2


# ---- tournament

def test_tournament_with_a_learned_entrant(ckpt, tmp_path):
    from kalooki_sim.studies.tournament import TournamentConfig, run_tournament

    agents = (str(ckpt), "greedy", "random")            # 3 entrants at 4 seats: one table, every deal
    cfg = TournamentConfig(agents=agents, deals=3, shard_deals=2, out=str(tmp_path / "a"))
    seats = run_tournament(cfg, progress=False, results=False).read_table("seats")
    # every deal in every seating of the balanced design (12 at 4 seats), every seat
    assert sorted(seats.groupby(["deal", "seating"]).size().index) == [(d, r) for d in range(3) for r in range(12)]
    assert (seats.groupby(["deal", "seating"]).size() == 4).all()
    for (d, r), g in seats.groupby(["deal", "seating"]):
        assert (g["policy_id"] == -1).sum() == 2                        # the learned entrant sits twice
    # the same deal in every seating: its round and dealer seat do not change with it
    assert (seats.groupby("deal")[["round", "dealer"]].nunique() == 1).all().all()
    again = run_tournament(TournamentConfig(**{**cfg.__dict__, "out": str(tmp_path / "b")}), progress=False,
                           results=False).read_table("seats")
    pd.testing.assert_frame_equal(seats, again)                          # deterministic
    # an interrupted run (its last shard missing) resumes to the same table
    shards = sorted((tmp_path / "b" / "seats").glob("shard-*.parquet"))
    assert len(shards) == 2
    shards[-1].unlink()
    resumed = run_tournament(TournamentConfig(**{**cfg.__dict__, "out": str(tmp_path / "b")}), resume=True,
                             progress=False, results=False).read_table("seats")
    pd.testing.assert_frame_equal(seats, resumed)


def test_resume_refuses_a_changed_checkpoint(ckpt, tmp_path):
    from kalooki_sim.agents.learned import PolicyValueNet, save_checkpoint
    from kalooki_sim.studies.tournament import TournamentConfig, run_tournament

    mine = tmp_path / "mine.pt"
    mine.write_bytes(ckpt.read_bytes())
    cfg = TournamentConfig(agents=(str(mine), "greedy"), deals=1, out=str(tmp_path / "run"))
    run_tournament(cfg, progress=False, results=False)
    torch.manual_seed(1)
    save_checkpoint(mine, PolicyValueNet(hidden=(16,)), load_rules("caribbean"))     # another net, same path
    with pytest.raises(ValueError, match=r"config\.checkpoints\..*mine\.pt was .* there and is .* now"):
        run_tournament(cfg, resume=True, progress=False, results=False)


def test_tournament_mixes_compiled_and_learned_tables(ckpt):
    from kalooki_sim.studies.tournament import TournamentConfig, play_deals, schedules

    agents = ("greedy", "random", "greedy-picky", "sharp", str(ckpt))   # 5 entrants, 5 tables of 4
    cfg = TournamentConfig(agents=agents, deals=5)
    rules = load_rules("caribbean")
    seats, _ = play_deals(cfg, rules, 0, 5)
    sched = schedules(5, 4, np.arange(5))
    for d in range(5):
        for r in range(sched.shape[1]):
            g = seats[(seats.deal == d) & (seats.seating == r)].sort_values("seat")
            assert g["agent"].tolist() == [agents[e] for e in sched[d, r]]
            assert (g["policy_id"] == -1).sum() == int((sched[d, r] == 4).sum())
    # a compiled-only deal is exactly the compiled path's
    compiled = [d for d in range(5) if 4 not in sched[d, 0]]
    assert compiled
    only, _ = play_deals(TournamentConfig(agents=agents[:4] + ("counting",), deals=5), rules, 0, 5)
    a = seats[seats.deal.isin(compiled)].reset_index(drop=True)
    b = only[only.deal.isin(compiled)].reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


# ---- play

def test_play_against_a_learned_opponent(ckpt, tmp_path):
    import io

    from kalooki_sim.runtime.play import PlaySession
    from kalooki_sim.runtime.replay import validate_replay

    out = io.StringIO()
    save = tmp_path / "game.jsonl"
    PlaySession("caribbean", [str(ckpt), "greedy", "greedy"], seat=1, seed=0, hands=1, save=str(save),
                input=io.StringIO("1\n" * 3000), output=out).run()
    text = out.getvalue()
    assert "=== game over" in text and f"P1 ({ckpt})" in text         # the learned seat moved
    assert validate_replay(save)["hands"] == 1
    with pytest.raises(ValueError, match="--hint-agent must be a compiled agent"):
        PlaySession("caribbean", ["greedy", "greedy"], hint_agent=str(ckpt))


def test_env_refuses_a_checkpoint_as_a_compiled_seat(ckpt):
    """The env plays only compiled agents inside its kernel: a learned strategy in its lineup is
    an error that says how to seat it, not a silent learner seat."""
    from kalooki_sim.runtime.env import KalookiVecEnv

    with pytest.raises(ValueError, match="is a learned strategy"):
        KalookiVecEnv("caribbean", 4, batch=2, lineup=["learner", str(ckpt), "greedy", "greedy"])
