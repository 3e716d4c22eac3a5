"""A masked policy/value network over the lockstep environment's observation, and its checkpoints.

**Action encoding: one fixed head over the engine's own action ids** (``N_ACTIONS`` logits, the
illegal ones masked to the lowest float before the softmax).  Why this rather than DouZero-style
scoring of candidate actions (one forward pass per legal action, with an action encoding as input):

* the environment already hands out exactly this: ``Discrete(N_ACTIONS)`` and a legal mask per row,
  the spaces of the Gymnasium/PettingZoo wrappers and of ``sb3_contrib.MaskablePPO``; a fixed head is
  one matrix product for a whole batch, with no ragged candidate lists to build in Python;
* the ids are already semantic and compact where it matters: a lay-down is one of ``K_PLANS`` plans
  the engine ranks (``A_LAY + k``), a discard or a tack names a card type (and a table meld), so
  the head's rows specialise by card and meld slot, and most decisions have a handful of legal
  actions, which the mask leaves;
* the cost is the last layer (``hidden x 3730`` weights, about 1 M at 256 units), small on a CPU,
  and a candidate-scoring net would pay one pass per legal action (tens in a play phase).
The price: actions that are rare (manipulations M1-M5, far meld slots) get few gradient updates.

**Checkpoints** carry what makes a network meaningful: the rules digest (``Rules.digest``: a
policy learned on one variant is not a policy for another), the observation version
(``observation.OBS_VERSION``: the layout its inputs had) and the sizes.  ``load_checkpoint``
refuses a mismatch with ``CheckpointMismatch`` saying which and how to fix it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from kalooki_sim.engine.layout import N_ACTIONS
from kalooki_sim.observation import OBS_DIM, OBS_VERSION

__all__ = ["PolicyValueNet", "LearnedPolicy", "save_checkpoint", "load_checkpoint", "CheckpointMismatch",
           "CHECKPOINT_FORMAT"]

CHECKPOINT_FORMAT = 1


class CheckpointMismatch(ValueError):
    """A checkpoint that does not fit these rules or this build's observation (the message says which)."""


class PolicyValueNet(nn.Module):
    """MLP trunk, a masked policy head over all action ids, and a value head (module docstring)."""

    def __init__(self, obs_dim: int = OBS_DIM, n_actions: int = N_ACTIONS, hidden=(256, 256)):
        super().__init__()
        self.obs_dim, self.n_actions, self.hidden = int(obs_dim), int(n_actions), tuple(int(h) for h in hidden)
        layers, d = [], self.obs_dim
        for h in self.hidden:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        self.trunk = nn.Sequential(*layers)
        self.pi = nn.Linear(d, self.n_actions)
        self.v = nn.Linear(d, 1)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor):
        """``(logits, value)``: logits of illegal actions at the lowest float, so the softmax gives
        them probability 0 and an argmax never picks them (a row needs one legal action)."""
        z = self.trunk(obs)
        logits = self.pi(z).masked_fill(~mask, torch.finfo(torch.float32).min)
        return logits, self.v(z).squeeze(-1)

    def distribution(self, obs: torch.Tensor, mask: torch.Tensor):
        logits, value = self(obs, mask)
        return torch.distributions.Categorical(logits=logits), value


class LearnedPolicy:
    """A network as a ``Policy`` (``agents.base``): ``act(obs, legal, rng)`` samples each row's action
    from the masked softmax with the Gumbel-max trick on ``rng`` (the only randomness, so a seeded
    run repeats), or takes the argmax when ``greedy``."""

    def __init__(self, net: PolicyValueNet, name: str = "learned", greedy: bool = False):
        self.net, self.name, self.greedy = net.eval(), name, bool(greedy)

    @torch.no_grad()
    def act(self, obs: np.ndarray, legal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal = np.asarray(legal, dtype=np.bool_)
        if not legal.any(axis=1).all():
            raise ValueError("every row needs at least one legal action")
        logits, _ = self.net(torch.as_tensor(obs, dtype=torch.float32), torch.as_tensor(legal))
        # only the legal entries are scored (a handful of the 3730 per row): Gumbel noise on all
        # of them cost more than the network's forward pass
        B, A = legal.shape
        flat = np.flatnonzero(legal)
        rows = flat // A
        score = logits.numpy().reshape(-1)[flat].astype(np.float64)
        if not self.greedy:
            u = np.clip(rng.random(flat.size), 1e-300, 1.0 - 1e-16)
            score -= np.log(-np.log(u))
        order = np.lexsort((-score, rows))          # by row, best first
        counts = np.bincount(rows, minlength=B)
        first = np.cumsum(counts) - counts
        return flat[order[first]] - np.arange(B, dtype=np.int64) * A


def save_checkpoint(path, net: PolicyValueNet, rules, *, extra: dict | None = None) -> Path:
    """Write ``net`` with the rules digest, observation version and sizes (module docstring)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = {"format": CHECKPOINT_FORMAT, "rules_digest": rules.digest(), "rules_name": rules.name,
            "obs_version": OBS_VERSION, "obs_dim": net.obs_dim, "n_actions": net.n_actions,
            "hidden": list(net.hidden), "state_dict": net.state_dict(), "extra": dict(extra or {})}
    tmp = path.with_name(path.name + ".tmp")
    torch.save(blob, tmp)
    tmp.replace(path)                   # a reader never sees half a file
    return path


def load_checkpoint(path, rules) -> tuple[PolicyValueNet, dict]:
    """The network of ``path`` and its metadata, or ``CheckpointMismatch`` when it was trained for
    other rules or another observation layout."""
    path = Path(path)
    blob = torch.load(path, map_location="cpu", weights_only=True)
    if blob.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointMismatch(f"{path}: checkpoint format {blob.get('format')!r}, this build reads "
                                 f"format {CHECKPOINT_FORMAT}")
    if blob["rules_digest"] != rules.digest():
        raise CheckpointMismatch(
            f"{path} was trained on rules {blob['rules_name']!r} (digest {blob['rules_digest']}), not on "
            f"{rules.name!r} (digest {rules.digest()}): a policy is only valid for the rules it learned; "
            f"load it with those rules or train one for these")
    if blob["obs_version"] != OBS_VERSION or blob["obs_dim"] != OBS_DIM:
        raise CheckpointMismatch(
            f"{path} expects observation version {blob['obs_version']} ({blob['obs_dim']} features) but "
            f"this build encodes version {OBS_VERSION} ({OBS_DIM} features): retrain, or use the build "
            f"it was trained with")
    if blob["n_actions"] != N_ACTIONS:
        raise CheckpointMismatch(f"{path} has {blob['n_actions']} action logits, this engine {N_ACTIONS} "
                                 f"actions: retrain for this engine")
    net = PolicyValueNet(blob["obs_dim"], blob["n_actions"], blob["hidden"])
    net.load_state_dict(blob["state_dict"])
    meta = {k: v for k, v in blob.items() if k != "state_dict"}
    return net, meta
