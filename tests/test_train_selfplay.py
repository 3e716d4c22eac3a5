"""experiments/train_selfplay.py on a tiny budget: it runs end to end (behaviour cloning, PPO,
evaluation, tensorboard and CSV logs, checkpoints that load), and a run interrupted and resumed
ends with exactly the weights of an uninterrupted run."""

from __future__ import annotations

import csv
import json

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.learn
torch = pytest.importorskip("torch", reason='learned agents need the learn extra (pip install -e ".[learn]")')

from kalooki_sim import load_rules  # noqa: E402
from kalooki_sim.agents.learned import load_checkpoint  # noqa: E402
from load_script import load_script  # noqa: E402


def _module():
    return load_script("experiments/train_selfplay.py")


def _argv(out, *extra, opponents="greedy,greedy"):
    return ["--out", str(out), "--players", "3", "--opponents", opponents, "--hidden", "32",
            "--num-envs", "8", "--rollout-len", "8", "--minibatch", "32", "--update-epochs", "2",
            "--bc-decisions", "64", "--bc-epochs", "1", "--dagger-rounds", "1", "--total-decisions", "256", "--eval-every", "2",
            "--eval-deals", "6", "--checkpoint-every", "1", "--no-progress", *extra]


def _rows(out):
    with open(out / "progress.csv", newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("opponents", ["greedy,greedy", "pool,greedy"])
def test_tiny_run_and_resume_equals_uninterrupted(tmp_path, opponents):
    """With compiled opponents, and with a pool seat (a snapshot every update, two kept, so the
    rival changes and the pool must be saved for the resumed run to agree)."""
    mod = _module()
    rules = load_rules("caribbean")
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    pool = ("--pool-every", "1", "--pool-size", "2")
    assert mod.main(_argv(whole, *pool, opponents=opponents)) == 0
    assert mod.main(_argv(parts, *pool, "--stop-after", "2", opponents=opponents)) == 0   # "interrupted" after 2 of 4
    assert json.loads((parts / "latest.json").read_text())["update"] == 2
    assert mod.main(_argv(parts, *pool, "--resume", opponents=opponents)) == 0
    a, meta = load_checkpoint(whole / json.loads((whole / "latest.json").read_text())["checkpoint"], rules)
    b, _ = load_checkpoint(parts / json.loads((parts / "latest.json").read_text())["checkpoint"], rules)
    assert meta["extra"]["update"] == 4
    for (k, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        torch.testing.assert_close(x, y, rtol=0, atol=0, msg=k)
    ra, rb = _rows(whole), _rows(parts)
    assert [r["update"] for r in ra] == ["0", "1", "2", "3", "4"] == [r["update"] for r in rb]
    for x, y in zip(ra, rb):
        x.pop("samples_per_s"), y.pop("samples_per_s")
        assert x == y
    assert ra[2]["eval_win_share"] != "" and ra[4]["eval_lo"] != ""
    assert ra[0]["bc_accuracy"] != ""
    assert any((whole / "tb").iterdir()) and (whole / "learning_curve.png").stat().st_size > 0
    if "pool" in opponents:
        assert len(torch.load(whole / "train_state.pt", weights_only=True)["pool"]) == 2


def _gae(rew, done, val, next_v, gamma, lam):
    """CleanRL's GAE, for one row."""
    adv, last = [0.0] * len(rew), 0.0
    for t in reversed(range(len(rew))):
        nv = next_v if t == len(rew) - 1 else val[t + 1]
        nonterm = 1.0 - done[t]
        last = rew[t] + gamma * nv * nonterm - val[t] + gamma * lam * nonterm * last
        adv[t] = last
    return adv


def test_advantages_with_rival_steps_are_gae_over_the_learners_own_decisions():
    """Every step the learner's: CleanRL's GAE.  With a pool rival's steps in between, the same as
    GAE over the learner's decisions alone, each carrying the rewards and episode ends of the
    rival steps after it; a rollout ending on a rival step bootstraps from the learner's last
    value."""
    mod = _module()
    g = torch.Generator().manual_seed(3)
    T, B = 9, 5
    rew = (torch.rand((T, B), generator=g) < 0.2).float()
    done = (torch.rand((T, B), generator=g) < 0.15).float()
    val = torch.rand((T, B), generator=g)
    next_v = torch.rand(B, generator=g)
    mine = (torch.rand((T, B), generator=g) < 0.6).float()
    mine[:, 0] = 1.0
    next_mine = np.array([True, False, True, False, True])
    got = mod._advantages(rew, done, val, torch.ones((T, B)), next_v, np.ones(B, dtype=bool), 1.0, 0.95)
    for b in range(B):
        want = _gae(rew[:, b].tolist(), done[:, b].tolist(), val[:, b].tolist(), float(next_v[b]), 1.0, 0.95)
        np.testing.assert_allclose(got[:, b].numpy(), want, rtol=1e-5, atol=1e-6)
    got = mod._advantages(rew, done, val, mine, next_v, next_mine, 0.99, 0.9)
    for b in range(B):
        own = [t for t in range(T) if mine[t, b]]
        r, d = [], []
        for i, t in enumerate(own):
            end = own[i + 1] if i + 1 < len(own) else T
            acc, fin = 0.0, 0.0
            for u in range(t, end):          # rewards up to the first episode end count
                if not fin:
                    acc += float(rew[u, b])
                fin = max(fin, float(done[u, b]))
            r.append(acc)
            d.append(fin)
        v = [float(val[t, b]) for t in own]
        nv = float(next_v[b]) if next_mine[b] else v[-1]
        want = _gae(r, d, v, nv, 0.99, 0.9)
        np.testing.assert_allclose(got[own, b].numpy(), want, rtol=1e-5, atol=1e-6)
        assert all(float(got[t, b]) == 0.0 for t in range(T) if not mine[t, b])


def test_warmup_then_dagger_rounds_resume_by_round_and_shard(tmp_path):
    """``--warmup-teacher``: round 0 clones it, the DAgger round is labelled by ``--bc-teacher``
    and fits that teacher's decisions only; a run that lost its last round's network and one of
    its data shards (interrupted) resumes to the same weights, playing only the missing shard."""
    mod = _module()
    rules = load_rules("caribbean")
    argv = lambda out, *x: _argv(out, "--warmup-teacher", "greedy", "--bc-teacher", "sharp", "--shard-episodes", "1",
                                 "--call-weight", "5", "--base-labels", "call,draw-stock", "--bc-decisions", "150",
                                 "--total-decisions", "0", "--eval-every", "0", *x)
    whole = tmp_path / "whole"
    assert mod.main(argv(whole)) == 0
    rounds = [json.loads(line) for line in (whole / "expert" / "rounds.jsonl").read_text().splitlines()]
    assert [(r["round"], r["teacher"]) for r in rounds] == [(0, "greedy"), (1, "sharp")]
    assert rounds[1]["base_labels_kept"] == 0            # a strategy teacher compares no candidates
    r1 = sorted((whole / "expert_data" / "decisions" / "round_01").glob("shard-*.parquet"))
    assert len(r1) >= 2 and rounds[1]["decisions"] == sum(len(pd.read_parquet(f)) for f in r1)
    kept = {f.name: f.stat().st_mtime_ns for f in r1}
    (whole / "expert" / "round_01.pt").unlink()
    (whole / "expert" / "round_01.train.pt").unlink()
    r1[1].unlink()
    a, _ = load_checkpoint(whole / json.loads((whole / "latest.json").read_text())["checkpoint"], rules)
    (whole / "latest.json").unlink()                 # interrupted before the first checkpoint
    assert mod.main(argv(whole, "--resume")) == 0
    assert r1[0].stat().st_mtime_ns == kept[r1[0].name] and r1[1].exists()
    b, _ = load_checkpoint(whole / json.loads((whole / "latest.json").read_text())["checkpoint"], rules)
    for (k, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        torch.testing.assert_close(x, y, rtol=0, atol=0, msg=k)


def test_bc_loss_is_cross_entropy_or_the_softmax_of_the_searchs_gains():
    """Unsearched rows (and every row at temperature 0): cross-entropy against the label; searched
    rows at temperature T: cross-entropy against softmax((gain - c * se) / T) over the candidates,
    computed here by hand; a tiny T is the hard label of the best discounted gain (with c = 1 the
    search's own rule: here the base, as no gain is a standard error above zero); weights make a
    weighted mean."""
    bc_loss = _module().bc_loss
    gen = torch.Generator().manual_seed(3)
    logits = torch.randn(3, 6, generator=gen)
    mask = torch.tensor([[1, 1, 1, 0, 0, 1], [1, 0, 1, 1, 0, 0], [0, 1, 1, 1, 1, 1]], dtype=torch.bool)
    logits = logits.masked_fill(~mask, torch.finfo(torch.float32).min)
    label = torch.tensor([0, 2, 1])
    searched = (torch.tensor([1, 1, 1]), torch.tensor([2, 0, 3]), torch.tensor([0.0, 0.02, -0.01], dtype=torch.float64),
                torch.tensor([0.0, 0.01, 0.01], dtype=torch.float64))
    ce = torch.nn.functional.cross_entropy(logits, label, reduction="none")
    assert torch.allclose(bc_loss(logits, label, searched, 0.0), ce.mean())
    logp = torch.log_softmax(logits, 1)
    p = torch.softmax(torch.tensor([0.0, 0.02, -0.01]) / 0.01, 0)
    row1 = -(p * logp[1, [2, 0, 3]]).sum()
    assert torch.allclose(bc_loss(logits, label, searched, 0.01, 0.0), (ce[0] + row1 + ce[2]) / 3)
    p = torch.softmax(torch.tensor([0.0, 0.02 - 1.5 * 0.01, -0.01 - 1.5 * 0.01]) / 0.01, 0)
    row1c = -(p * logp[1, [2, 0, 3]]).sum()
    assert torch.allclose(bc_loss(logits, label, searched, 0.01, 1.5), (ce[0] + row1c + ce[2]) / 3)
    assert torch.allclose(bc_loss(logits, label, searched, 1e-6, 0.0), (ce[0] - logp[1, 0] + ce[2]) / 3)
    assert torch.allclose(bc_loss(logits, label, searched, 1e-6, 2.5), (ce[0] - logp[1, 2] + ce[2]) / 3)
    w = torch.tensor([1.0, 10.0, 1.0])
    assert torch.allclose(bc_loss(logits, label, searched, 0.01, 0.0, w), (ce[0] + 10 * row1 + ce[2]) / 12)


def test_base_labels_are_kinds_of_action():
    mod = _module()
    assert mod.parse_args(["--base-labels", "call,draw-stock"]).base_labels == ("call", "draw-stock")
    with pytest.raises(SystemExit):
        mod.parse_args(["--base-labels", "calls"])
