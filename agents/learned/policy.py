"""A masked policy/value network over the lockstep environment's observation, and its checkpoints.

**Action encoding: one fixed head over the engine's own action ids** (``N_ACTIONS`` logits, the
illegal ones masked to the lowest float before the softmax).  Why this rather than DouZero-style
scoring of candidate actions (one forward pass per legal action, with an action encoding as input):

* the environment already hands out exactly this: ``Discrete(N_ACTIONS)`` and a legal mask per row,
  the spaces of the Gymnasium/PettingZoo wrappers and of ``sb3_contrib.MaskablePPO``; a fixed head is
  one matrix product for a whole batch, with no ragged candidate lists to build in Python;
* the ids are already semantic and compact where it matters: a lay-down is the one plan the
  engine offers (``A_LAY``: its exact best), a discard or a tack names a card type (and a table meld), so
  the head's rows specialise by card and meld slot, and most decisions have a handful of legal
  actions, which the mask leaves;
* the cost is the last layer (``hidden x 3762`` weights, about 1 M at 256 units), small on a CPU,
  and a candidate-scoring net would pay one pass per legal action (tens in a play phase).
The price: actions that are rare (manipulations M1-M5, far meld slots) get few gradient updates.

Two structured terms are added to that head, because a plain MLP cloned from greedy matched only
85 % of its decisions and won 12 % of hands where greedy wins 25 % (docs/learned-agents.md):

* **a shared discard scorer**: the logit of discarding card type ``t`` gains ``h([f_t, c(z)])``,
  one small MLP applied to every type's features ``f_t`` (the observation's ``cards`` section: the
  shortfall its loss adds, usefulness, live potential, feed share, penalty, copies held) and a
  projection of the trunk's state.  The discard, the most consequential choice of a turn, is then
  one learned function of what the card does to the hand, the same for the seven of clubs as for
  the king of spades, instead of 53 separate rows learned from raw counts;
* **a family bias**: one logit per kind of action (pass, call, draw, lay, discard, tack, each
  manipulation, ...) from the trunk, shared by every id of the kind, so a rare tack or joker move
  is preferred or not as its kind is, before its own row has learned anything;
* **a take term** (format 3, observation version 5): the logit of taking a table card (a run's
  end card, a natural of a four-card set) gains ``k(z) * x_a``, ``x_a`` the observation's
  ``takes`` entry of that action (1 when the card would join a new meld with the hand) and
  ``k(z)`` one coefficient per kind of take from the trunk.  The relation between a table meld
  and the hand is what the plain head did not learn (docs/learned-agents.md);
* **an upcard term** (optional, ``upcard_hidden`` > 0; ``agents.learned.upcard``): a small network
  on the upcard's relations to the hand that raises the upcard's logit above the stock's where
  it predicts a gain, fitted to the search's gains at draws.  Checkpoints record its size; those
  written before it have none.

**Checkpoints** carry what makes a network meaningful: the rules digest (``Rules.digest``: a
policy learned on one variant is not a policy for another), the observation version
(``observation.OBS_VERSION``: the layout its inputs had) and the sizes.  ``load_checkpoint``
refuses a mismatch with ``CheckpointMismatch`` saying which and how to fix it.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch
from torch import nn

from kalooki_sim.agents.observation import N_CF, OBS_DIM, OBS_VERSION, OBS_WIDTHS, SECTIONS, TAKES_SET
from kalooki_sim.core.lanes import run_lanes
from kalooki_sim.engine import layout as L
from kalooki_sim.engine.layout import N_ACTIONS

from . import scores
from .sparse import fold_shared, sparse_affine
from .upcard import UpcardTerm, draw_pairs, raise_upcard

__all__ = ["PolicyValueNet", "LearnedPolicy", "save_checkpoint", "load_checkpoint", "export_policy",
           "CheckpointMismatch", "CHECKPOINT_FORMAT"]

CHECKPOINT_FORMAT = 3          # 2: the discard scorer and the family bias; 3: the take term
_FORMATS_READ = (2, 3)         # format 2 is read with a zero take term (it plays as it was trained)


# the first id of each kind of action (``engine.layout``'s blocks: the single actions, then the
# ranges ``A_LAY ..``, ``A_DISCARD ..``, ...): the family bias has one logit per kind
_FAMILY_STARTS = (L.A_PASS, L.A_CALL, L.A_ALLOW, L.A_DENY, L.A_DRAW_STOCK, L.A_DRAW_DISCARD, L.A_END_TURN, L.A_LAY,
                  L.A_DISCARD, L.A_TACK, L.A_MOVE, L.A_SETSWAP, L.A_SHIFT, L.A_TAKE_END, L.A_SPLIT, L.A_SETSUB,
                  L.A_SETTAKE, L.A_UPSWAP)
N_FAMILIES = len(_FAMILY_STARTS)


def _action_families() -> torch.Tensor:
    """The kind of every action id, as indices for the family bias."""
    assert list(_FAMILY_STARTS) == sorted(_FAMILY_STARTS) and _FAMILY_STARTS[0] == 0
    fam = torch.zeros(N_ACTIONS, dtype=torch.long)
    for i, a in enumerate(_FAMILY_STARTS):
        fam[a:] = i
    fam[L.A_TACK_LOW:] = _FAMILY_STARTS.index(L.A_TACK)     # a joker at a run's low end is a lay-off
    return fam

_CARDS_AT, _CARDS_LEN = SECTIONS["cards"]
_TAKES_AT, _TAKES_LEN = SECTIONS["takes"]
# the take term's kinds: (first action id, entries, where its entries start in the takes section)
_TAKE_KINDS = ((L.A_TAKE_END, TAKES_SET, 0), (L.A_SETTAKE, _TAKES_LEN - TAKES_SET, TAKES_SET))
# the engine's action count before the low-end joker lay-off was added (checkpoints of that engine
# are read with their head padded, ``load_checkpoint``)
_N_ACTIONS_BEFORE_LOW_JOKER = L.A_TACK_LOW


class CheckpointMismatch(ValueError):
    """A checkpoint that does not fit these rules or this build's observation (the message says which)."""


class PolicyValueNet(nn.Module):
    """MLP trunk and a masked policy head over all action ids, and a separate value MLP (module docstring)."""

    def __init__(self, obs_dim: int = OBS_DIM, n_actions: int = N_ACTIONS, hidden=(256, 256), card_hidden: int = 64,
                 card_context: int = 32, upcard_hidden: int = 0):
        super().__init__()
        self.upcard_hidden = int(upcard_hidden)
        self.upcard = UpcardTerm(self.upcard_hidden) if self.upcard_hidden > 0 else None
        self.obs_dim, self.n_actions, self.hidden = int(obs_dim), int(n_actions), tuple(int(h) for h in hidden)
        self.card_hidden, self.card_context = int(card_hidden), int(card_context)
        layers, d = [], self.obs_dim
        for h in self.hidden:
            layers += [nn.Linear(d, h), nn.ReLU()]
            d = h
        self.trunk = nn.Sequential(*layers)
        self.pi = nn.Linear(d, self.n_actions)
        # the critic has its own layers (as CleanRL's ppo.py): fitting values then never moves the
        # policy cloned from a heuristic
        layers, d_v = [], self.obs_dim
        for h in self.hidden:
            layers += [nn.Linear(d_v, h), nn.ReLU()]
            d_v = h
        self.v = nn.Sequential(*layers, nn.Linear(d_v, 1))
        self.family = nn.Linear(d, N_FAMILIES)
        self.context = nn.Linear(d, self.card_context)
        self.card = nn.Sequential(nn.Linear(N_CF + self.card_context, self.card_hidden), nn.ReLU(),
                                  nn.Linear(self.card_hidden, 1))
        self.take = nn.Linear(d, len(_TAKE_KINDS))
        self.register_buffer("families", _action_families(), persistent=False)

    @property
    def reads_takes(self) -> bool:
        """Does the network's input include the takes section (observation version 5 on)?"""
        return self.obs_dim >= _TAKES_AT + _TAKES_LEN

    def forward(self, obs: torch.Tensor, mask: torch.Tensor):
        """``(logits, value)``: logits of illegal actions at the lowest float, so the softmax gives
        them probability 0 and an argmax never picks them (a row needs one legal action)."""
        obs = obs[:, :self.obs_dim]         # a network of an earlier layout reads its prefix (OBS_WIDTHS)
        z = self.trunk(obs)
        logits = self.pi(z) + self.family(z)[:, self.families]
        cards = obs[:, _CARDS_AT:_CARDS_AT + _CARDS_LEN].reshape(obs.shape[0], L.N_TYPES, N_CF)
        ctx = self.context(z).unsqueeze(1).expand(-1, L.N_TYPES, -1)
        score = self.card(torch.cat([cards, ctx], dim=2)).squeeze(-1)
        logits = torch.cat([logits[:, :L.A_DISCARD], logits[:, L.A_DISCARD:L.A_TACK] + score, logits[:, L.A_TACK:]],
                           dim=1)
        if self.reads_takes:
            k = self.take(z)
            parts, at = [], 0
            for i, (a0, n, x0) in enumerate(_TAKE_KINDS):
                x = obs[:, _TAKES_AT + x0:_TAKES_AT + x0 + n]
                parts += [logits[:, at:a0], logits[:, a0:a0 + n] + k[:, i:i + 1] * x]
                at = a0 + n
            logits = torch.cat(parts + [logits[:, at:]], dim=1)
        if self.upcard is not None:
            r = torch.nonzero(mask[:, L.A_DRAW_STOCK] & mask[:, L.A_DRAW_DISCARD]).squeeze(1)
            if r.numel():
                up = raise_upcard(logits[r, L.A_DRAW_DISCARD], logits[r, L.A_DRAW_STOCK], self.upcard(obs[r]))
                logits = logits.index_put((r, torch.full_like(r, L.A_DRAW_DISCARD)), up)
        logits = logits.masked_fill(~mask, torch.finfo(torch.float32).min)
        return logits, self.v(obs).squeeze(-1)

    def legal_logits(self, obs: torch.Tensor, rows: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """``forward``'s logits at the pairs ``(rows[k], actions[k])`` only (equal up to float
        rounding).  A decision has a handful of legal actions among 3762: scoring just those skips
        the policy head's full product (hidden x 3762 per row) and the critic, most of a forward
        pass.  The differentiable reference of the compiled acting path (``LearnedPolicy.act``,
        ``agents.learned.scores``)."""
        obs = obs[:, :self.obs_dim]
        z = self.trunk(obs)
        out = (z[rows] * self.pi.weight[actions]).sum(dim=1) + self.pi.bias[actions]
        out = out + self.family(z)[rows, self.families[actions]]
        disc = (actions >= L.A_DISCARD) & (actions < L.A_TACK)
        if bool(disc.any()):
            r, t = rows[disc], actions[disc] - L.A_DISCARD
            cards = obs[r, _CARDS_AT:_CARDS_AT + _CARDS_LEN].reshape(-1, L.N_TYPES, N_CF)[torch.arange(r.shape[0]), t]
            ctx = self.context(z[r])
            out = out.clone()
            out[disc] += self.card(torch.cat([cards, ctx], dim=1)).squeeze(-1)
        if self.reads_takes:
            for i, (a0, n, x0) in enumerate(_TAKE_KINDS):
                hit = (actions >= a0) & (actions < a0 + n)
                if bool(hit.any()):
                    r = rows[hit]
                    x = obs[r, _TAKES_AT + x0 + actions[hit] - a0]
                    out = out.clone()
                    out[hit] += self.take(z[r])[:, i] * x
        return self.raise_upcards(obs, rows, actions, out)

    def raise_upcards(self, obs: torch.Tensor, rows: torch.Tensor, actions: torch.Tensor, out: torch.Tensor):
        """The upcard term (``agents.learned.upcard``) on scored pairs ``out`` of ``(rows[k],
        actions[k])``, where a row's pairs hold both draws; ``out`` itself without the term."""
        if self.upcard is None:
            return out
        up, stock, r = draw_pairs(rows, actions)
        if not up.numel():
            return out
        return out.index_put((up,), raise_upcard(out[up], out[stock], self.upcard(obs[r, :self.obs_dim])))

    def distribution(self, obs: torch.Tensor, mask: torch.Tensor):
        logits, value = self(obs, mask)
        return torch.distributions.Categorical(logits=logits), value


class _ActingWeights(NamedTuple):
    """The network's weights in the layouts the compiled acting path reads (``LearnedPolicy``)."""
    first_wt: np.ndarray        # the trunk's first layer, transposed (obs_dim x hidden)
    first_b: np.ndarray
    pi_w: np.ndarray            # the policy head (N_ACTIONS x hidden) and its bias
    pi_b: np.ndarray
    head: torch.Tensor          # per row from z: the family bias, the discard scorer's first layer
    head_b: torch.Tensor        #   at the row's context (composed: card[0]'s context part @ context), the take term
    families: np.ndarray
    card_w: np.ndarray          # the discard scorer's first layer, its card-feature part
    out_w: np.ndarray           # and its second layer
    out_b: float


class LearnedPolicy:
    """A network as a ``Policy`` (``agents.base``): ``act(obs, legal, rng)`` samples each row's action
    from the masked softmax with the Gumbel-max trick on ``rng`` (the only randomness, so a seeded
    run repeats), or takes the argmax when ``greedy``.

    Acting is compiled around the trunk (``agents.learned.sparse``: the first layer from the
    observation's non-zero entries; ``agents.learned.scores``: the logits of the legal entries),
    on weights laid out once and kept while they are unchanged: a training loop that acts between
    optimizer steps updates them in place, which moves their version counters."""

    def __init__(self, net: PolicyValueNet, name: str = "learned", greedy: bool = False):
        self.net, self.name, self.greedy = net.eval(), name, bool(greedy)
        self._key, self._w = None, None

    def _weights(self) -> _ActingWeights:
        net = self.net
        key = tuple((p.data_ptr(), p._version) for p in net.parameters())
        if key != self._key:
            f32 = lambda t: np.ascontiguousarray(t.detach().numpy(), dtype=np.float32)
            card0, card1 = net.card[0], net.card[2]
            w_ctx = card0.weight[:, N_CF:]
            head = torch.cat([net.family.weight, w_ctx @ net.context.weight, net.take.weight]).detach().contiguous()
            head_b = torch.cat([net.family.bias, w_ctx @ net.context.bias + card0.bias,
                                net.take.bias]).detach().contiguous()
            self._w = _ActingWeights(f32(net.trunk[0].weight.T), f32(net.trunk[0].bias), f32(net.pi.weight),
                                     f32(net.pi.bias), head, head_b, net.families.numpy().astype(np.int64),
                                     f32(card0.weight[:, :N_CF]), f32(card1.weight[0]), float(card1.bias[0]))
            self._key = key
        return self._w

    def _first_layer(self, obs: np.ndarray, rows: np.ndarray, w: _ActingWeights) -> torch.Tensor:
        """The trunk's first affine map of the rows ``rows`` of ``obs`` (float32, writeable), from
        their non-zero entries that the rows do not all share (``agents.learned.sparse``)."""
        d, h = w.first_wt.shape
        shared = np.empty(d, dtype=np.bool_)
        bias = np.empty(h, dtype=np.float32)
        fold_shared(obs, rows, w.first_wt, w.first_b, shared, bias)
        out = np.empty((rows.shape[0], h), dtype=np.float32)
        run_lanes(sparse_affine, rows.shape[0], obs, rows, w.first_wt, bias, shared, out, min_per_thread=64)
        return torch.from_numpy(out)

    @torch.no_grad()
    def legal_scores(self, obs: np.ndarray, choice: np.ndarray, rows: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """The network's logits (float32) of the pairs ``(rows[k], actions[k])``, ``rows`` indexing
        ``choice``, the rows of ``obs`` (float32, C-contiguous) that decide: the compiled
        counterpart of ``PolicyValueNet.legal_logits(obs[choice], rows, actions)``."""
        w = self._weights()
        z = self.net.trunk[1:](self._first_layer(obs, choice, w))
        head = torch.nn.functional.linear(z, w.head, w.head_b).numpy()
        out = np.empty(rows.size, dtype=np.float32)
        scores.legal_scores(z.numpy(), rows, actions, w.pi_w, w.pi_b, head, N_FAMILIES, w.families, obs, choice,
                            _CARDS_AT, N_CF, w.card_w, w.out_w, w.out_b, _TAKES_AT if self.net.reads_takes else -1,
                            TAKES_SET, out)
        if self.net.upcard is not None:
            rows_t = torch.from_numpy(np.asarray(rows, dtype=np.int64))
            out = self.net.raise_upcards(torch.from_numpy(obs[choice]), rows_t,
                                         torch.from_numpy(np.asarray(actions, dtype=np.int64)),
                                         torch.from_numpy(out)).numpy()
        return out

    @torch.no_grad()
    def act(self, obs: np.ndarray, legal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        legal = np.asarray(legal, dtype=np.bool_)
        if not legal.any(axis=1).all():
            raise ValueError("every row needs at least one legal action")
        obs = np.asarray(obs)
        if obs.dtype != np.float32 or not obs.flags.c_contiguous:
            obs = np.ascontiguousarray(obs, dtype=np.float32)
        # only the legal entries are scored (a handful of the 3762 per row): the full head and
        # Gumbel noise on every entry cost far more
        B, A = legal.shape
        flat = np.flatnonzero(legal)                # grouped by row, the rows in order
        rows = flat // A
        counts = np.bincount(rows, minlength=B)
        # a row with one legal action has nothing to choose (most call windows): no forward pass
        choice = np.flatnonzero(counts > 1)
        score = np.zeros(flat.size, dtype=np.float64)
        if choice.size:
            pick = counts[rows] > 1
            local = np.searchsorted(choice, rows[pick])         # the row's place among the choosing rows
            score[pick] = self.legal_scores(obs, choice, local, flat[pick] % A)
        if not self.greedy:
            u = np.clip(rng.random(flat.size), 1e-300, 1.0 - 1e-16)
            score -= np.log(-np.log(u))
        # each row's best entry, the first of equal scores (a row's entries are contiguous in ``flat``)
        first = np.cumsum(counts) - counts
        best = np.maximum.reduceat(score, first)
        at = np.where(score >= best[rows], np.arange(flat.size), flat.size)
        return flat[np.minimum.reduceat(at, first)] - np.arange(B, dtype=np.int64) * A


def _version_of(obs_dim: int) -> int:
    """The observation version a network of input width ``obs_dim`` was built for."""
    for version, width in OBS_WIDTHS.items():
        if width == obs_dim:
            return version
    raise ValueError(f"no observation version has {obs_dim} features (versions: {OBS_WIDTHS})")


def save_checkpoint(path, net: PolicyValueNet, rules, *, extra: dict | None = None) -> Path:
    """Write ``net`` with the rules digest, observation version and sizes (module docstring)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = {"format": CHECKPOINT_FORMAT, "rules_digest": rules.digest(), "rules_name": rules.name,
            "obs_version": _version_of(net.obs_dim), "obs_dim": net.obs_dim, "n_actions": net.n_actions,
            "hidden": list(net.hidden), "card_hidden": net.card_hidden, "card_context": net.card_context,
            "upcard_hidden": net.upcard_hidden, "state_dict": net.state_dict(), "extra": dict(extra or {})}
    tmp = path.with_name(path.name + ".tmp")
    torch.save(blob, tmp)
    tmp.replace(path)                   # a reader never sees half a file
    return path


def export_policy(src, dest, rules) -> Path:
    """Write the acting part of checkpoint ``src`` to ``dest``: the policy without its critic,
    in float16 (a third of the training checkpoint's size, small enough to ship in the
    repository).  Loaded back (``load_checkpoint``) the weights are float32 again, each within
    float16's rounding of the original, so measure the exported file, not the source, when its
    results are quoted."""
    net, meta = load_checkpoint(src, rules)
    blob = {k: v for k, v in meta.items()}
    blob["format"] = CHECKPOINT_FORMAT          # the network as loaded (a format-2 file gains its zero take term)
    blob["state_dict"] = {k: v.half() for k, v in net.state_dict().items() if not k.startswith("v.")}
    blob["policy_only"] = True
    blob["extra"] = dict(meta.get("extra") or {}, exported_from=str(src))
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    torch.save(blob, tmp)
    tmp.replace(dest)
    return dest


def load_checkpoint(path, rules) -> tuple[PolicyValueNet, dict]:
    """The network of ``path`` and its metadata, or ``CheckpointMismatch`` when it was trained for
    other rules or another observation layout."""
    path = Path(path)
    blob = torch.load(path, map_location="cpu", weights_only=True)
    if blob.get("format") not in _FORMATS_READ:
        raise CheckpointMismatch(f"{path}: checkpoint format {blob.get('format')!r}, this build reads "
                                 f"formats {list(_FORMATS_READ)}")
    if blob["rules_digest"] != rules.digest():
        raise CheckpointMismatch(
            f"{path} was trained on rules {blob['rules_name']!r} (digest {blob['rules_digest']}), not on "
            f"{rules.name!r} (digest {rules.digest()}): a policy is only valid for the rules it learned; "
            f"load it with those rules or train one for these")
    if OBS_WIDTHS.get(blob["obs_version"]) != blob["obs_dim"]:
        raise CheckpointMismatch(
            f"{path} expects observation version {blob['obs_version']} ({blob['obs_dim']} features) but "
            f"this build encodes version {OBS_VERSION} ({OBS_DIM} features) and reads versions "
            f"{sorted(OBS_WIDTHS)}: retrain, or use the build it was trained with")
    if blob["n_actions"] not in (N_ACTIONS, _N_ACTIONS_BEFORE_LOW_JOKER):
        raise CheckpointMismatch(f"{path} has {blob['n_actions']} action logits, this engine {N_ACTIONS} "
                                 f"actions: retrain for this engine")
    net = PolicyValueNet(blob["obs_dim"], N_ACTIONS, blob["hidden"], blob["card_hidden"], blob["card_context"],
                         blob.get("upcard_hidden", 0))       # written before the upcard term: none
    state = {k: v.float() for k, v in blob["state_dict"].items()}
    if blob["format"] == 2:             # before the take term: zero, so it plays as it was trained
        state["take.weight"], state["take.bias"] = torch.zeros_like(net.take.weight), torch.zeros_like(net.take.bias)
    if blob["n_actions"] != N_ACTIONS:
        # trained before the low-end joker lay-off (``A_TACK_LOW``) existed: those ids get no weight
        # and a bias that keeps them out of its choices (the plain lay-off of the same joker is
        # legal wherever they are), so the network plays as it was trained
        extra = N_ACTIONS - blob["n_actions"]
        w = state["pi.weight"]
        state["pi.weight"] = torch.cat([w, torch.zeros(extra, w.shape[1])])
        state["pi.bias"] = torch.cat([state["pi.bias"], torch.full((extra,), -1e4)])
    if blob.get("policy_only"):         # ``export_policy``: the critic was left out (it never acts)
        missing, unexpected = net.load_state_dict(state, strict=False)
        if unexpected or any(not k.startswith("v.") for k in missing):
            raise CheckpointMismatch(f"{path}: a policy-only checkpoint whose tensors do not fit this network")
    else:
        net.load_state_dict(state)
    meta = {k: v for k, v in blob.items() if k != "state_dict"}
    return net, meta
