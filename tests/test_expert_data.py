"""studies.expert_data: the labelled decisions of cloning, DAgger and expert iteration.

A shard's rows are exactly the env's learner decisions (the observation and legal actions
recovered from the sparse rows equal the env's, the label is the teacher's choice there), the
search can be the teacher, a network checkpoint can play the seat, and the study runner's Ray
backend writes the local backend's rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kalooki_sim import load_rules
from kalooki_sim.runtime.env import N_ACTIONS, OBS_DIM, KalookiVecEnv
from kalooki_sim.studies.expert_data import label_shard, read_decisions, shard_first_game
from kalooki_sim.studies.records import RunDir
from kalooki_sim.studies.runner import Task, run_tasks


def _replay(variant, players, mode, opponents, teacher, first_game, steps, batch, seed):
    """The decisions a teacher-played shard must record, from the env directly (dense)."""
    env = KalookiVecEnv(load_rules(variant), players, batch=batch, lineup=["learner", *opponents], rotate=True,
                        seed=seed, first_game_id=first_game, episode="match" if mode == "matches" else "hand",
                        reward="match" if mode == "matches" else "hand")
    obs, mask, _ = env.reset()
    O, M, Y = [], [], []
    for _ in range(steps):
        a = env.compiled_actions(teacher)
        keep = mask.sum(1) > 1
        O.append(obs[keep].copy()), M.append(mask[keep].copy()), Y.append(a[keep])
        obs, mask, *_ = env.step(a)
    return np.concatenate(O), np.concatenate(M), np.concatenate(Y)


@pytest.mark.parametrize("variant,players,mode", [("caribbean", 3, "hands"), ("k40", 4, "matches")])
def test_a_shard_records_the_env_decisions_and_reads_back_dense(tmp_path, variant, players, mode):
    opponents = ("greedy",) * (players - 1)
    run = RunDir.create(tmp_path, {}, 5)
    args = (variant, players, mode, opponents, "sharp", None, shard_first_game(0, 0, 8, 12), 12, 8, 5, 0, 0)
    run.write_shard("decisions/round_00", 0, label_shard(*args)["decisions"])
    O, M, Y = _replay(variant, players, mode, opponents, "sharp", args[6], 12, 8, 5)
    data = read_decisions(tmp_path, ["decisions/round_00"])
    assert len(data) == Y.size > 0
    obs, mask, label = data.batch(np.arange(len(data)), OBS_DIM, N_ACTIONS)
    np.testing.assert_array_equal(obs, O)
    np.testing.assert_array_equal(mask, M)
    np.testing.assert_array_equal(label, Y)
    # a subset, out of order, is those rows
    idx = np.array([len(data) - 1, 0, len(data) // 2])
    o2, m2, y2 = data.batch(idx, OBS_DIM, N_ACTIONS)
    np.testing.assert_array_equal(o2, O[idx]), np.testing.assert_array_equal(m2, M[idx])
    np.testing.assert_array_equal(y2, Y[idx])


def test_shards_of_different_rounds_never_share_a_deal():
    for batch, steps in ((8, 1), (256, 16)):
        a = [shard_first_game(r, s, batch, steps) for r in range(3) for s in range(50)]
        spans = sorted((x, x + batch * (steps + 1)) for x in a)
        assert all(hi <= lo for (_, hi), (lo, _) in zip(spans, spans[1:]))
        assert max(hi for _, hi in spans) < 10**12          # below the evaluation deals


def _tasks(checkpoint=None, round_=0):
    args = lambda shard: ("k40", 3, "hands", ("sharp-k40", "greedy"), "search-k40", checkpoint,
                          shard_first_game(round_, shard, 4, 3), 3, 4, 11, round_, shard)
    return [Task(("d", round_, s), label_shard, args(s), (("decisions", f"decisions/round_{round_:02d}"),), s, 12)
            for s in range(2)]


@pytest.fixture(scope="module")
def policy_file(tmp_path_factory):
    torch = pytest.importorskip("torch", reason='learned agents need the learn extra (pip install -e ".[learn]")')
    from kalooki_sim.agents.learned import PolicyValueNet, save_checkpoint

    torch.manual_seed(0)
    return save_checkpoint(tmp_path_factory.mktemp("net") / "net.pt", PolicyValueNet(hidden=(16,)), load_rules("k40"))


def test_search_teacher_and_network_learner_on_local_and_ray_give_the_same_rows(tmp_path, policy_file):
    """The search labels (legal, repeatable), a network plays the learner's seat in round 1 (its
    states), and Ray workers write the local rows."""
    ray = pytest.importorskip("ray", reason='the Ray backend needs the dist extra (pip install -e ".[dist]")')
    from kalooki_sim.studies.backends import RayBackend

    local = RunDir.create(tmp_path / "local", {}, 11)
    run_tasks(local, _tasks() + _tasks(str(policy_file), 1), progress=False)
    rows = {r: local.read_table(f"decisions/round_{r:02d}") for r in (0, 1)}
    for df in rows.values():
        assert len(df) > 0
        assert all(lab in set(leg) for lab, leg in zip(df["label"], df["legal"]))
    be = RayBackend(num_cpus=2)
    try:
        remote = RunDir.create(tmp_path / "ray", {}, 11)
        run_tasks(remote, _tasks() + _tasks(str(policy_file), 1), backend=be, progress=False)
    finally:
        be.close()
        ray.shutdown()
    for r in (0, 1):
        pd.testing.assert_frame_equal(remote.read_table(f"decisions/round_{r:02d}"), rows[r])
    local.write_shard("again", 0, label_shard(*_tasks()[0].args)["decisions"])
    again = local.read_table("again")
    pd.testing.assert_frame_equal(again, rows[0].iloc[:len(again)].reset_index(drop=True))
