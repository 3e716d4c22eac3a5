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


def _replay(variant, players, mode, opponents, teacher, first_game, episodes, seed):
    """The decisions a teacher-played shard must record, from the env directly (dense): every
    decision of each whole episode."""
    episode = "match" if mode == "matches" else "hand"
    env = KalookiVecEnv(load_rules(variant), players, batch=episodes, lineup=["learner", *opponents], rotate=True,
                        seed=seed, episode_games=first_game + np.arange(episodes), episode=episode, reward=episode)
    obs, mask, info = env.reset()
    O, M, Y, G, ends = [], [], [], [], 0
    while not env.parked.all():
        a = env.compiled_actions(teacher)
        keep = (mask.sum(1) > 1) & ~env.parked
        O.append(obs[keep].copy()), M.append(mask[keep].copy()), Y.append(a[keep])
        G.append(first_game + info["game_id"][keep])
        obs, mask, _, dones, info = env.step(a)
        ends += int(dones.sum())
    assert ends == episodes                         # each deal played once, to its end
    return np.concatenate(O), np.concatenate(M), np.concatenate(Y), np.concatenate(G)


@pytest.mark.parametrize("variant,players,mode", [("caribbean", 3, "hands"), ("k40", 4, "matches")])
def test_a_shard_records_whole_episodes_and_reads_back_dense(tmp_path, variant, players, mode):
    opponents = ("greedy",) * (players - 1)
    run = RunDir.create(tmp_path, {}, 5)
    args = (variant, players, mode, opponents, "sharp", None, shard_first_game(0, 3, 6), 6, 5, 0, 3)
    df = label_shard(*args)["decisions"]
    run.write_shard("decisions/round_00", 0, df)
    O, M, Y, G = _replay(variant, players, mode, opponents, "sharp", args[6], 6, 5)
    data = read_decisions(tmp_path, ["decisions/round_00"])
    assert len(data) == Y.size > 0
    obs, mask, label = data.batch(np.arange(len(data)), OBS_DIM, N_ACTIONS)
    np.testing.assert_array_equal(obs, O)
    np.testing.assert_array_equal(mask, M)
    np.testing.assert_array_equal(label, Y)
    np.testing.assert_array_equal(df["game_id"], G)
    assert set(G) == set(range(18, 24))                 # the shard's deals, every one of them
    # a subset, out of order, is those rows
    idx = np.array([len(data) - 1, 0, len(data) // 2])
    o2, m2, y2 = data.batch(idx, OBS_DIM, N_ACTIONS)
    np.testing.assert_array_equal(o2, O[idx]), np.testing.assert_array_equal(m2, M[idx])
    np.testing.assert_array_equal(y2, Y[idx])
    # a compiled teacher compares nothing; a shard written before the search's columns existed reads the same
    assert data.cand_ptr[-1] == 0 and data.searched(idx)[0].size == 0
    run.write_shard("decisions/old", 0, df.drop(columns=["candidates", "gain", "gain_se"]))
    old = read_decisions(tmp_path, ["decisions/old", "decisions/round_00"])
    assert len(old) == 2 * len(data) and old.cand_ptr[-1] == 0
    np.testing.assert_array_equal(old.batch(idx, OBS_DIM, N_ACTIONS)[0], O[idx])


def test_shards_of_different_rounds_never_share_a_deal():
    for episodes in (1, 8, 64):
        a = [shard_first_game(r, s, episodes) for r in range(3) for s in range(50)]
        spans = sorted((x, x + episodes) for x in a)
        assert all(hi <= lo for (_, hi), (lo, _) in zip(spans, spans[1:]))
        assert max(hi for _, hi in spans) < 10**12          # below the evaluation deals


def _tasks(checkpoint=None, round_=0):
    args = lambda shard: ("k40", 3, "hands", ("sharp-k40", "greedy"), "search-k40", checkpoint,
                          shard_first_game(round_, shard, 3), 3, 11, round_, shard)
    return [Task(("d", round_, s), label_shard, args(s), (("decisions", f"decisions/round_{round_:02d}"),), s, 12)
            for s in range(2)]


def test_the_search_teacher_records_what_it_compared_and_chose_by_its_rule(tmp_path):
    """Where the search compared candidates the shard holds them with their paired gains over the
    base's action (the base first, gain and error 0), every candidate legal, and the label is
    the one the search's rule picks from those gains: the highest gain at least ``confidence``
    (1) standard errors above zero, else the base's action."""
    run = RunDir.create(tmp_path, {}, 11)
    run.write_shard("decisions/round_00", 0, label_shard(*_tasks()[0].args)["decisions"])
    data = read_decisions(tmp_path, ["decisions/round_00"])
    n = np.diff(data.cand_ptr)
    assert (n >= 2).sum() > 10 and set(np.unique(n)) <= {0, 2, 3, 4}       # top 3, and laying down
    _, mask, label = data.batch(np.arange(len(data)), OBS_DIM, N_ACTIONS)
    departed = 0
    for k in np.flatnonzero(n):
        lo, hi = data.cand_ptr[k], data.cand_ptr[k + 1]
        cand, gain, se = data.candidates[lo:hi], data.gain[lo:hi], data.gain_se[lo:hi]
        assert mask[k, cand].all() and np.unique(cand).size == cand.size
        assert gain[0] == 0 and se[0] == 0 and (se >= 0).all()
        if np.any(np.abs(gain[1:] - se[1:]) < 1e-5) or np.unique(np.round(gain, 5)).size < gain.size:
            continue                    # within the float32 storage's rounding of the rule's edge
        ahead = gain > se
        ahead[0] = False
        want = cand[np.argmax(np.where(ahead, gain, -np.inf))] if ahead.any() else cand[0]
        assert label[k] == want
        departed += want != cand[0]
    assert departed > 0


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


def test_action_kind_names_every_kind_and_keep_base_labels_reverts_only_those_kinds():
    from kalooki_sim.engine import layout as L
    from kalooki_sim.studies.expert_data import ACTION_KINDS, Decisions, action_kind

    ids = [L.A_PASS, L.A_CALL, L.A_ALLOW, L.A_DENY, L.A_DRAW_STOCK, L.A_DRAW_DISCARD, L.A_LAY, L.A_DISCARD + 52,
           L.A_TACK + 3, L.A_END_TURN]
    assert list(action_kind(ids)) == list(ACTION_KINDS)
    # four decisions: a call the search passed, a discard it changed, an unsearched one, a draw it kept
    d7, d9 = L.A_DISCARD + 7, L.A_DISCARD + 9
    cand = np.array([L.A_CALL, L.A_PASS, d7, d9, L.A_DRAW_STOCK, L.A_DRAW_DISCARD])
    empty = np.zeros(5, dtype=np.int64)
    data = Decisions(obs_ptr=empty, obs_index=empty[:0], obs_value=np.zeros(0, np.float32), legal_ptr=empty,
                     legal=empty[:0], label=np.array([L.A_PASS, d9, d7, L.A_DRAW_STOCK]), round=np.ones(4, np.int32),
                     cand_ptr=np.array([0, 2, 4, 4, 6]), candidates=cand, gain=np.zeros(6), gain_se=np.zeros(6))
    assert data.keep_base_labels(("call",)) == 1
    assert list(data.label) == [L.A_CALL, d9, d7, L.A_DRAW_STOCK]
    assert data.keep_base_labels(("discard", "draw-stock")) == 1
    assert list(data.label) == [L.A_CALL, d7, d7, L.A_DRAW_STOCK]
    with pytest.raises(ValueError, match="unknown kinds of action \\['calls'\\]"):
        data.keep_base_labels(("calls",))
