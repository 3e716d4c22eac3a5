"""experiments/train_selfplay.py on a tiny budget: it runs end to end (behaviour cloning, PPO,
evaluation, tensorboard and CSV logs, checkpoints that load), and a run interrupted and resumed
ends with exactly the weights of an uninterrupted run."""

from __future__ import annotations

import csv
import importlib.util
import json
import sys
from pathlib import Path

import torch

from kalooki_sim import load_rules
from kalooki_sim.agents.learned import load_checkpoint

ROOT = Path(__file__).resolve().parents[1]


def _module():
    spec = importlib.util.spec_from_file_location("train_selfplay", ROOT / "experiments" / "train_selfplay.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod            # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def _argv(out, *extra):
    return ["--out", str(out), "--players", "3", "--opponents", "greedy,greedy", "--hidden", "32",
            "--num-envs", "8", "--rollout-len", "8", "--minibatch", "32", "--update-epochs", "2",
            "--bc-decisions", "64", "--bc-epochs", "1", "--dagger-rounds", "1", "--total-decisions", "256", "--eval-every", "2",
            "--eval-deals", "6", "--checkpoint-every", "1", "--no-progress", *extra]


def _rows(out):
    with open(out / "progress.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_tiny_run_and_resume_equals_uninterrupted(tmp_path):
    mod = _module()
    rules = load_rules("caribbean")
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    assert mod.main(_argv(whole)) == 0
    assert mod.main(_argv(parts, "--stop-after", "2")) == 0          # "interrupted" after 2 of 4 updates
    assert json.loads((parts / "latest.json").read_text())["update"] == 2
    assert mod.main(_argv(parts, "--resume")) == 0
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
    assert any((whole / "tb").iterdir())
