#!/usr/bin/env python
"""Train a Kalooki policy: behaviour cloning of a compiled heuristic, then PPO with action masking.

    python experiments/train_selfplay.py --variant caribbean --players 4 --total-decisions 2000000
    python experiments/train_selfplay.py --out runs/x --resume          # go on after an interruption
    python experiments/train_selfplay.py --variant caribbean --mode matches --warmup-teacher sharp-caribbean \
        --bc-teacher search-caribbean --dagger-rounds 2 --total-decisions 0   # expert iteration (no PPO)

One file, CleanRL style (``cleanrl/ppo.py``): a dataclass of arguments, a seeding block, a run name
``{variant}__{exp}__{seed}__{time}``, tensorboard scalars under ``charts/``, ``losses/``, ``eval/``
and the same per-update figures in ``progress.csv``.

1. **Behaviour cloning, DAgger, expert iteration.** The learner sits at the table with the
   opponents and plays what the teacher ``--bc-teacher`` (default ``greedy``; a compiled strategy
   or the search, ``search-caribbean``) would play in its seat (the teacher's own choice, on its
   own random stream), so the recorded states are the teacher's; the network
   (``agents.learned.PolicyValueNet``) learns those choices by cross-entropy over the masked
   logits.  ``--dagger-rounds`` then lets the network play and the teacher label the states it
   reaches (DAgger), so it learns to recover from its own mistakes, which cloning alone never
   shows it; with the search as the teacher this is expert iteration.  ``--warmup-teacher``
   makes round 0 clone a cheap strategy first (the search's base).  The labelled decisions are a
   study on the runner (``studies.expert_data``: ``--backend local`` or ``ray``), each shard
   ``--shard-episodes`` whole hands or matches so every stage of a game is seen as often as play
   reaches it (the opening turns alone teach neither laying down nor the late calls), kept in
   ``out/expert_data`` with each round's network in ``out/expert``, so this phase resumes by round
   and shard.  ``--total-decisions 0`` stops after it.  With ``--upcard-hidden`` the network has an
   upcard term (``agents.learned.upcard``) and the rounds after round 0 fit only it, regressed on
   the search's gains of the upcard where its base draws from the stock (``fit_upcard``): how
   ``learned-caribbean-2`` was trained, from ``search-caribbean-draws`` (docs/learned-agents.md).
2. **PPO** (clipped objective, GAE, value loss, entropy bonus, masked logits, CleanRL's target-KL
   stop; ``--value-warmup`` updates first fit the critic alone: cloning trains no value, and
   advantages from an untrained one moved the cloned policy far in one update) on ``--num-envs``
   games in lockstep (``kalooki_sim.runtime.env``: the opponents are compiled agents played inside the
   loop), one learner seat a game, seats rotated game by game.  The reward is the learner's hand
   win (1 when it goes out), so a hand's return is its win share, what the evaluation measures;
   with ``--mode matches`` an episode is a whole match (9 hands in Caribbean) and the reward its
   match win share, because a Caribbean game is the match: the best heuristic there
   (``sharp-caribbean``) keeps its calls for later hands and loses single hands to win matches.
   Why PPO on 2 CPU cores: the environment gives ~200,000 decisions/s, the network's forward and
   backward passes are the cost (``benchmarks/env.py``), and PPO reuses each batch for several
   epochs, where a value-based method over 3,730 actions would need a replay buffer and more
   passes per sample.

Opponents: ``--opponents`` names one per other seat: compiled strategies (the heuristic family of
``configs/agents``) or ``pool``, a seat played by a past version of the network.  The pool starts
with the cloned network and gains a snapshot every ``--pool-every`` updates (the newest
``--pool-size`` kept, saved with the run); each update draws one member to play every pool seat of
its rollout.  Those seats are learner seats of the environment decided by the rival network; their
decisions are not trained on, and their rewards and episode ends go to the learner's decision
before them (``_advantages``).  During cloning a pool seat plays the teacher.

**Evaluation** (after cloning, every ``--eval-every`` updates and at the end): the argmax policy
against ``--eval-opponents`` (fixed heuristics; by default ``--opponents``, a pool seat
``greedy``) on ``--eval-deals`` deals never used in training (game ids from
``EVAL_FIRST_GAME``), each deal played with the learner in every seat (duplicate style); win
share with a 95 % interval clustered by deal (``stats.clustered_mean``) against the fair share ``1 / players``.

**Checkpoints and resume.** Every ``--checkpoint-every`` updates the run writes, each atomically:
the policy (``agents.learned.save_checkpoint``: rules digest, observation version),
``train_state.pt`` (optimizer, update counter, torch and numpy random states) and ``env_state.npz``
(every array of the batch, ``KalookiVecEnv.state_dict``), then ``latest.json`` naming them.
``--resume`` restores all of it and truncates ``progress.csv`` to the last saved update, so a
resumed run computes what an uninterrupted one does (tests/test_train_selfplay.py checks the
weights are equal).
"""

from __future__ import annotations

import argparse
import copy
import csv
import dataclasses
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import torch

from kalooki_sim import load_rules
from kalooki_sim.agents.learned import LearnedPolicy, PolicyValueNet, export_policy, load_checkpoint, save_checkpoint
from kalooki_sim.analysis.stats import clustered_mean
from kalooki_sim.agents.learned.upcard import upcard_features
from kalooki_sim.engine.layout import A_CALL, A_DRAW_DISCARD, A_DRAW_STOCK
from kalooki_sim.runtime.env import N_ACTIONS, OBS_DIM, KalookiVecEnv
from kalooki_sim.runtime.policy_play import play_policies
from kalooki_sim.studies.backends import backend_options
from kalooki_sim.studies.expert_data import check_action_kinds, label_shard, read_decisions, shard_first_game
from kalooki_sim.studies.records import RunDir
from kalooki_sim.studies.runner import Task, run_tasks

EVAL_FIRST_GAME = 10**12        # evaluation deals: training game ids never get near this
CSV_FIELDS = ("update", "global_step", "samples_per_s", "train_win_share", "pg_loss", "v_loss", "entropy",
              "approx_kl", "clipfrac", "eval_win_share", "eval_lo", "eval_hi", "bc_loss", "bc_accuracy")


@dataclass
class Args:
    exp_name: str = "train_selfplay"
    variant: str = "caribbean"
    players: int = 4
    opponents: tuple[str, ...] = ("greedy", "greedy", "greedy")
    mode: str = "hands"                 # "hands": an episode is a hand; "matches": a whole match (module docstring)
    eval_opponents: tuple[str, ...] = ()   # the evaluation's fixed field (default: --opponents, pool seats greedy)
    pool_every: int = 10                # a snapshot of the network joins the pool every this many updates
    pool_size: int = 8                  # the newest snapshots kept
    seed: int = 1
    out: str = ""                       # run directory (default runs/{run name})
    resume: bool = False
    torch_threads: int = 1
    hidden: tuple[int, ...] = (256, 256)
    # behaviour cloning
    bc_teacher: str = "greedy"
    bc_decisions: int = 200_000
    bc_epochs: int = 3
    bc_lr: float = 1e-3
    gain_temperature: float = 0.0       # searched decisions: fit softmax((gain - c * se) / T) over the search's candidates
    gain_confidence: float = 1.0        #   (0: its choice); c: standard errors a gain is discounted by
    call_weight: float = 1.0            # the weight of a decision where a call is legal (the call windows) in the fit
    base_labels: tuple[str, ...] = ()   # kinds of the base's action (studies.expert_data.ACTION_KINDS) where the
                                        #   search's departures are not taught: the label is the base's action
    upcard_hidden: int = 0              # the network's upcard term (agents.learned.upcard), 0: none; with it the
                                        #   rounds after round 0 fit only the term, to the search's gains at draws
    upcard_margin: float = 0.005        # the term takes the upcard where its predicted gain is above this
    upcard_scale: float = 0.02          # the term's logit units: a gain of this is one logit
    upcard_epochs: int = 20             # epochs of the term's fit
    dagger_rounds: int = 0              # DAgger rounds after cloning (the network plays, the teacher labels)
    warmup_teacher: str = ""            # round 0 clones this (cheap) strategy instead; the rounds after, --bc-teacher
    warmup_decisions: int = 0           # round 0's decisions with --warmup-teacher (0: --bc-decisions)
    shard_episodes: int = 64            # whole episodes (hands or matches) per data task (a shard of the study runner)
    backend: str = "local"              # where the data tasks run: "local" or "ray"
    address: str = ""                   # ray: a running cluster's address (default: a local instance)
    num_cpus: int = 0                   # ray: CPUs of a local instance (0: all)
    # PPO
    total_decisions: int = 2_000_000
    num_envs: int = 256
    rollout_len: int = 32
    lr: float = 2.5e-4
    gamma: float = 1.0
    gae_lambda: float = 0.95
    minibatch: int = 1024
    update_epochs: int = 3
    clip: float = 0.2
    ent_coef: float = 0.01
    target_kl: float = 0.015            # an update stops its epochs once the policy moved this far (0: never)
    value_warmup: int = 0               # first updates fit the value head alone (the cloned policy kept)
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    # evaluation, checkpoints
    eval_deals: int = 500
    eval_every: int = 20
    checkpoint_every: int = 10
    stop_after: int = 0                 # stop (as if interrupted) after this many updates (tests)
    export: str = ""                    # at the end, write the policy to this file (float16, no critic) to ship
    progress: bool = True


def parse_args(argv=None) -> Args:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for f in dataclasses.fields(Args):
        name = "--" + f.name.replace("_", "-")
        if f.type == "bool" or isinstance(f.default, bool):
            ap.add_argument(name, action=argparse.BooleanOptionalAction, default=f.default)
        elif isinstance(f.default, tuple):
            kind = type(f.default[0]) if f.default else str
            ap.add_argument(name, type=lambda s, k=kind: tuple(k(x) for x in s.split(",")), default=f.default,
                            help="comma-separated")
        else:
            ap.add_argument(name, type=type(f.default), default=f.default)
    args = Args(**vars(ap.parse_args(argv)))
    try:
        check_action_kinds(args.base_labels)
    except ValueError as e:
        ap.error(f"--base-labels: {e}")
    return args


POOL = "pool"            # an opponent seat played by a past checkpoint (module docstring)


def _eval_field(args: Args) -> tuple[str, ...]:
    """The evaluation's opponents: ``--eval-opponents``, or ``--opponents`` with a pool seat greedy."""
    return tuple(args.eval_opponents) or tuple("greedy" if x == POOL else x for x in args.opponents)


def _tables(n, opponents):
    """One learner seat per game, every seat in turn (game g: the learner in seat g % n)."""
    if len(opponents) != n - 1:
        raise ValueError(f"{len(opponents)} opponents for {n} players")
    if POOL in opponents:
        raise ValueError("the evaluation field is fixed heuristics: --eval-opponents may not name 'pool'")
    return [list(opponents[:r]) + ["learner"] + list(opponents[r:]) for r in range(n)]


def make_env(args: Args, rules) -> KalookiVecEnv:
    """The training batch: the learner and the opponents, the lineup rotated one seat a game."""
    if len(args.opponents) != args.players - 1:
        raise ValueError(f"{len(args.opponents)} opponents for {args.players} players")
    if args.mode not in ("hands", "matches"):
        raise ValueError(f"--mode must be 'hands' or 'matches', not {args.mode!r}")
    matches = args.mode == "matches"
    lineup = ["learner", *("learner" if x == POOL else x for x in args.opponents)]
    return KalookiVecEnv(rules, args.players, batch=args.num_envs, lineup=lineup, rotate=True,
                         seed=args.seed, episode="match" if matches else "hand", reward="match" if matches else "hand")


def evaluate(net, args: Args, rules) -> tuple[float, float, float]:
    """Win share of the argmax policy against the opponents on held-out deals, every seat."""
    pol = LearnedPolicy(net, greedy=True)
    wins, deals = [], []
    for r, row in enumerate(_tables(args.players, _eval_field(args))):
        seats = [pol if x == "learner" else x for x in row]
        out = play_policies(rules, args.players, seats, args.eval_deals, seed=args.seed, batch=min(256, args.eval_deals),
                            first_game_id=EVAL_FIRST_GAME, mode=args.mode)
        if args.mode == "matches":
            out = out[1]                                   # (hands, matches): the match rows
            won = out["match_win_share"]
        else:
            won = out["won"]
        mine = out["seat"] == r
        wins.append(won[mine].astype(np.float64))
        deals.append(out["game_id"][mine])
    res = clustered_mean(np.concatenate(wins), np.concatenate(deals))
    return float(res["mean"]), float(res["lo"]), float(res["hi"])


def _data_config(args: Args) -> dict:
    """What the expert data depend on: a resumed run refuses to mix data of other settings."""
    keys = ("variant", "players", "mode", "opponents", "bc_teacher", "bc_decisions", "warmup_teacher",
            "warmup_decisions", "shard_episodes", "hidden", "bc_epochs", "bc_lr", "minibatch", "gain_temperature",
            "gain_confidence", "call_weight", "base_labels", "upcard_hidden", "upcard_margin", "upcard_scale",
            "upcard_epochs")
    return {k: getattr(args, k) for k in keys}


def _round_table(r: int) -> str:
    return f"decisions/round_{r:02d}"


def _round_teacher(args: Args, r: int) -> tuple[str, int]:
    """Who labels round ``r`` and how many decisions it plays: ``--warmup-teacher`` in round 0
    when given, else ``--bc-teacher``."""
    if r == 0 and args.warmup_teacher:
        return args.warmup_teacher, args.warmup_decisions or args.bc_decisions
    return args.bc_teacher, args.bc_decisions


def _label_tasks(args: Args, r: int, checkpoint, n_shards: int) -> list[Task]:
    """Round ``r``'s first ``n_shards`` data tasks (``studies.expert_data.label_shard``), each
    ``--shard-episodes`` whole episodes; pool seats are played like the learner's."""
    teacher, _ = _round_teacher(args, r)
    opponents = tuple("learner" if x == POOL else x for x in args.opponents)
    return [Task(("decisions", r, shard), label_shard,
                 (args.variant, args.players, args.mode, opponents, teacher,
                  None if checkpoint is None else str(checkpoint),
                  shard_first_game(r, shard, args.shard_episodes), args.shard_episodes, args.seed, r, shard),
                 (("decisions", _round_table(r)),), shard, args.shard_episodes)
            for shard in range(n_shards)]


def _label_round(run: RunDir, args: Args, r: int, checkpoint, backend: dict) -> None:
    """Play round ``r``'s data: its first shard, then as many more as that shard's decisions say
    reach the round's number (``--bc-decisions``; an episode's decisions are not known before it
    is played).  Deterministic, so a resumed run plans the same shards."""
    teacher, decisions = _round_teacher(args, r)
    desc = f"round {r}: {teacher} labels"
    run_tasks(run, _label_tasks(args, r, checkpoint, 1), progress=args.progress, unit=" episodes", desc=desc,
              **backend)
    first = len(pd.read_parquet(run.shard_file(_round_table(r), 0), columns=["label"]))
    n_shards = max(1, -(-decisions // max(1, first)))
    run_tasks(run, _label_tasks(args, r, checkpoint, n_shards), progress=args.progress, unit=" episodes",
              desc=desc, **backend)


def _agreement(net, data, idx, chunk=4096) -> float:
    """Share of the decisions ``idx`` where the network's argmax is the teacher's choice."""
    same = 0
    with torch.no_grad():
        for i in range(0, idx.size, chunk):
            o, m, y = (torch.as_tensor(x) for x in data.batch(idx[i:i + chunk], OBS_DIM, N_ACTIONS))
            same += int((net(o, m)[0].argmax(1) == y).sum())
    return same / max(1, idx.size)


def bc_loss(logits, label, searched, temperature: float, confidence: float = 1.0, weight=None):
    """The cloning loss of a minibatch: cross-entropy of the masked ``logits`` against the teacher's
    choice ``label``, except at the decisions the search compared candidates (``searched`` =
    ``Decisions.searched``'s ``(row, candidate, gain, se)``) when ``temperature`` > 0: there the
    target is ``softmax((gain - confidence * se) / temperature)`` over its candidates (the base's
    action has gain and error 0).  A single choice per state carries the noise of a close call;
    the gains say how far apart the candidates were, so states where the search was sure weigh
    more than those it split by luck.  Each gain is discounted by ``confidence`` standard errors
    as the search's own rule does (``agents.search``): following the rollouts' mean gains plays
    worse than the base (docs/search.md), and a target at the plain gains taught a network to
    play 13 points below its teacher (docs/learned-agents.md).  As the temperature goes to 0 the
    target is the search's own choice.  ``weight`` per row (default 1): the loss is the weighted
    mean."""
    logp = torch.log_softmax(logits, dim=1)
    loss = -logp.gather(1, label[:, None]).squeeze(1)
    if temperature > 0 and searched is not None and searched[0].numel():
        row, cand, gain, se = searched
        z = (gain - confidence * se) / temperature
        top = torch.full((logits.shape[0],), -torch.inf, dtype=z.dtype).scatter_reduce(0, row, z, "amax")
        e = torch.exp(z - top[row])
        p = e / torch.zeros_like(top).index_add(0, row, e)[row]
        soft = torch.zeros_like(top).index_add(0, row, -p * logp[row, cand].to(p.dtype))
        hit = torch.zeros(logits.shape[0], dtype=torch.bool)
        hit[row] = True
        loss = torch.where(hit, soft.to(loss.dtype), loss)
    if weight is None:
        return loss.mean()
    return (loss * weight).sum() / weight.sum()


def _fit(net, opt, data, args, gen, desc="fit"):
    from tqdm import tqdm

    loss_v = acc = 0.0
    per_epoch = -(-len(data) // args.minibatch)
    bar = tqdm(total=args.bc_epochs * per_epoch, disable=not args.progress, desc=desc, unit=" minibatches")
    for _ in range(args.bc_epochs):
        order = gen.permutation(len(data))
        for i in range(0, len(order), args.minibatch):
            idx = np.sort(order[i:i + args.minibatch])
            o, m, y = (torch.as_tensor(x) for x in data.batch(idx, OBS_DIM, N_ACTIONS))
            # the search's comparisons are read only when the loss uses them
            searched = tuple(torch.as_tensor(x) for x in data.searched(idx)) if args.gain_temperature > 0 else None
            weight = None if args.call_weight == 1.0 else 1.0 + (args.call_weight - 1.0) * m[:, A_CALL].float()
            logits, _ = net(o, m)
            loss = bc_loss(logits, y, searched, args.gain_temperature, args.gain_confidence, weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_v = float(loss.detach())
            acc = float((logits.argmax(1) == y).float().mean())
            bar.update(1)
    bar.close()
    return loss_v, acc


def upcard_gains(data) -> tuple[np.ndarray, np.ndarray]:
    """The decisions where the search's base drew from the stock and the search also rolled out
    the upcard, and the search's paired gain of the upcard there: the upcard term's targets."""
    rows = np.flatnonzero(np.diff(data.cand_ptr) >= 2)
    rows = rows[data.candidates[data.cand_ptr[rows]] == A_DRAW_STOCK]
    at, cand, gain, _ = data.searched(rows)
    up = cand == A_DRAW_DISCARD
    return rows[at[up]], gain[up]


def fit_upcard(net, data, args, gen, chunk: int = 8192) -> dict:
    """Fit the upcard term alone (``agents.learned.upcard``; the trunk stays as the round before
    left it): its output regressed on the search's gain of the upcard divided by
    ``--upcard-scale`` (mean squared error) where the base drew from the stock, then its margin set
    to ``--upcard-margin`` in those units.  A regression averages the noise of single gains out
    over states alike in the upcard's relations to the hand; a softmax on single choices follows
    it (docs/learned-agents.md, session 39)."""
    rows, gain = upcard_gains(data)
    if not rows.size:
        raise ValueError("no decision where the search compared the upcard with its base's draw from the stock: "
                         "the upcard term needs a search teacher that searches draws (search_draw = 1)")
    x = torch.cat([upcard_features(torch.as_tensor(data.batch(rows[i:i + chunk], OBS_DIM, N_ACTIONS)[0]))
                   for i in range(0, rows.size, chunk)])
    y = torch.as_tensor(gain / args.upcard_scale, dtype=torch.float32)
    term = net.upcard.net
    opt = torch.optim.Adam(term.parameters(), lr=1e-3, weight_decay=1e-4)
    for _ in range(args.upcard_epochs):
        order = torch.as_tensor(gen.permutation(rows.size))
        for i in range(0, rows.size, 512):
            b = order[i:i + 512]
            loss = ((term(x[b]).squeeze(1) - y[b]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    net.upcard.margin.fill_(args.upcard_margin / args.upcard_scale)
    with torch.no_grad():
        predicted = term(x).squeeze(1)
    return {"upcard_draws": int(rows.size), "upcard_mse": float(((predicted - y) ** 2).mean()),
            "upcard_departs": float((predicted > net.upcard.margin).float().mean())}


def behaviour_cloning(net, args: Args, rules, out: Path, log) -> dict:
    """Round 0: the teacher plays the learner's seat and its decisions are recorded; rounds 1 to
    ``--dagger-rounds``: the network of the round before plays and the teacher labels the states
    it reaches (DAgger; with the search as the teacher, expert iteration).  After each round the
    network fits every decision its round's teacher labelled so far.  With ``--warmup-teacher``
    round 0 clones that strategy instead (the search's base: cheap labels, and a network that
    already plays near the base's level), and the later rounds move it towards ``--bc-teacher``
    on the states it reaches.  The data are study tasks (``studies.expert_data``) on
    ``--backend``, kept in ``out/expert_data``; each round's network and optimizer are saved, so an
    interrupted run resumes at the round and shard where it stopped."""
    run = RunDir.create(out / "expert_data", _data_config(args), args.seed, rules=rules, resume=True)
    rounds = out / "expert"
    rounds.mkdir(exist_ok=True)
    opt = torch.optim.Adam(net.parameters(), lr=args.bc_lr)
    # the runner's keywords, as every study's command builds them (0 and "" here mean "not given")
    backend = backend_options(SimpleNamespace(backend=args.backend, address=args.address or None,
                                              num_cpus=args.num_cpus or None))
    metrics: dict = {}
    history = []                                # every round's figures, rewritten to rounds.jsonl
    for r in range(args.dagger_rounds + 1):
        policy, state = rounds / f"round_{r:02d}.pt", rounds / f"round_{r:02d}.train.pt"
        if state.exists():                      # this round was fitted before an interruption
            fitted = load_checkpoint(policy, rules)[0]
            if fitted.obs_dim != net.obs_dim:
                raise ValueError(f"{policy}: a network of {fitted.obs_dim} inputs (an earlier observation version), "
                                 f"this build's have {net.obs_dim}: fit it again (delete {policy.name} and "
                                 f"{state.name}; the data are kept) or start a new --out")
            net.load_state_dict(fitted.state_dict())
            st = torch.load(state, weights_only=True)
            opt.load_state_dict(st["optimizer"])
            metrics = st["metrics"]
            history.append(metrics)
            continue
        before = None if r == 0 else rounds / f"round_{r - 1:02d}.pt"
        teacher, _ = _round_teacher(args, r)
        _label_round(run, args, r, before, backend)
        data = read_decisions(run.path, [_round_table(k) for k in range(r + 1) if _round_teacher(args, k)[0] == teacher])
        kept = data.keep_base_labels(args.base_labels) if args.base_labels else 0
        metrics = {"round": r, "teacher": teacher, "decisions": len(data), "base_labels_kept": kept}
        if r > 0:
            metrics["agreement"] = _agreement(net, data, np.flatnonzero(data.round == r))
        if r > 0 and args.upcard_hidden > 0:
            metrics.update(fit_upcard(net, data, args, np.random.default_rng([args.seed, r])))
            metrics["bc_loss"], metrics["bc_accuracy"] = history[-1]["bc_loss"], history[-1]["bc_accuracy"]
        else:
            metrics["bc_loss"], metrics["bc_accuracy"] = _fit(net, opt, data, args,
                                                               np.random.default_rng([args.seed, r]),
                                                               desc=f"round {r}: fit")
        save_checkpoint(policy, net, rules, extra={"round": r, "teacher": teacher})
        _atomic_torch_save({"optimizer": opt.state_dict(), "metrics": metrics}, state)
        history.append(metrics)
        (rounds / "rounds.jsonl.tmp").write_text("".join(json.dumps(m) + "\n" for m in history))
        (rounds / "rounds.jsonl.tmp").replace(rounds / "rounds.jsonl")
        mine = "its own states" if r else "the teacher's states"
        agree = f", the network agreed on {metrics['agreement']:.3f} of them before fitting" if r else ""
        log(f"round {r}: {teacher} labelled {len(data)} decisions so far ({mine}{agree}); "
            f"loss {metrics['bc_loss']:.4f}, accuracy {metrics['bc_accuracy']:.3f}")
    return {"bc_loss": metrics["bc_loss"], "bc_accuracy": metrics["bc_accuracy"]}


def _advantages(rew, done, val, mine, next_v, next_mine, gamma, lam):
    """GAE over the learner's own decisions ([T, B] tensors).  A step where a pool rival decided
    (``mine`` 0) is not the learner's: its reward and its end of episode belong to the learner's
    decision before it.  When the rollout ends on a rival's decision (``next_mine`` False) the
    learner's next value is not at hand and its last decision's own value stands in for it.
    With every step the learner's this is CleanRL's GAE."""
    T, B = rew.shape
    adv = torch.zeros((T, B))
    last = torch.zeros(B)
    nv = next_v.clone()
    unknown = torch.as_tensor(~np.asarray(next_mine, dtype=np.bool_))
    acc_r = torch.zeros(B)
    acc_d = torch.zeros(B)
    for t in reversed(range(T)):
        r = rew[t] + (1.0 - done[t]) * acc_r
        d = torch.maximum(done[t], acc_d)
        m = mine[t] > 0
        nv = torch.where(m & unknown, val[t], nv)
        unknown = unknown & ~m
        nonterm = 1.0 - d
        delta = r + gamma * nv * nonterm - val[t]
        gae = delta + gamma * lam * nonterm * last
        adv[t] = torch.where(m, gae, torch.zeros(B))
        last = torch.where(m, gae, last)
        nv = torch.where(m, val[t], nv)
        acc_r = torch.where(m, torch.zeros(B), r)
        acc_d = torch.where(m, torch.zeros(B), d)
    return adv


def plot_progress(out: Path, args: Args) -> Path:
    """``learning_curve.png`` in the run directory: the held-out win share with its 95 % interval
    against the decisions trained on (cloning at 0), the fair share, and the training rollouts'
    own win share (sampled actions, so below the argmax policy's)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(out / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    ev = [r for r in rows if r["eval_win_share"]]
    tr = [r for r in rows if r["train_win_share"]]
    fig, ax = plt.subplots(figsize=(7, 4))
    if tr:
        ax.plot([int(r["global_step"]) for r in tr], [float(r["train_win_share"]) for r in tr], color="0.7", lw=0.8,
                label="training rollouts (sampled)")
    if ev:
        x = [int(r["global_step"]) for r in ev]
        y = [float(r["eval_win_share"]) for r in ev]
        lo = [float(r["eval_win_share"]) - float(r["eval_lo"]) for r in ev]
        hi = [float(r["eval_hi"]) - float(r["eval_win_share"]) for r in ev]
        ax.errorbar(x, y, yerr=[lo, hi], fmt="o-", capsize=3,
                    label=f"held-out, argmax ({args.eval_deals} deals x {args.players} seats, 95 % CI)")
    ax.axhline(1 / args.players, color="k", ls="--", lw=0.8, label="fair share")
    field = ",".join(_eval_field(args))
    ax.set_xlabel("PPO decisions (0: after behaviour cloning)")
    ax.set_ylabel("match win share" if args.mode == "matches" else "hand win share")
    ax.set_title(f"{args.variant}, {args.mode}: learner against {field}", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "learning_curve.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _atomic_torch_save(obj, path: Path):
    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    tmp.replace(path)


def save_run(out: Path, net, opt, env, rules, update, global_step, np_rng, args, pool):
    ck = save_checkpoint(out / "checkpoints" / f"update_{update:06d}.pt", net, rules,
                         extra={"update": update, "global_step": global_step, "args": json.dumps(dataclasses.asdict(args))})
    _atomic_torch_save({"optimizer": opt.state_dict(), "update": update, "global_step": global_step,
                        "torch_rng": torch.get_rng_state(), "np_rng": json.dumps(np_rng.bit_generator.state),
                        "pool": pool},
                       out / "train_state.pt")
    tmp = out / "env_state.tmp.npz"
    np.savez(tmp, **env.state_dict())
    tmp.replace(out / "env_state.npz")
    latest = {"checkpoint": str(ck.relative_to(out)), "update": update, "global_step": global_step}
    (out / "latest.json.tmp").write_text(json.dumps(latest))
    (out / "latest.json.tmp").replace(out / "latest.json")


def main(argv=None) -> int:
    args = parse_args(argv) if not isinstance(argv, Args) else argv
    rules = load_rules(args.variant)
    run_name = f"{args.variant}__{args.exp_name}__{args.seed}__{int(time.time())}"
    out = Path(args.out or f"runs/{run_name}")
    out.mkdir(parents=True, exist_ok=True)
    log = (lambda msg: print(msg, file=sys.stderr, flush=True)) if args.progress else (lambda msg: None)

    # ---- seeding
    torch.set_num_threads(args.torch_threads)
    torch.manual_seed(args.seed)
    np_rng = np.random.default_rng(args.seed)
    torch.use_deterministic_algorithms(True)

    net = PolicyValueNet(hidden=args.hidden, upcard_hidden=args.upcard_hidden)
    env = make_env(args, rules)
    update, global_step = 0, 0
    fresh = not (args.resume and (out / "latest.json").exists())
    if fresh:
        (out / "args.json").write_text(json.dumps(dataclasses.asdict(args), indent=1))
        bc = behaviour_cloning(net, args, rules, out, log) if args.bc_decisions > 0 else {}
        obs, mask, info = env.reset()
        with open(out / "progress.csv", "w", newline="") as f:
            csv.DictWriter(f, CSV_FIELDS).writeheader()
    opt = torch.optim.Adam(net.parameters(), lr=args.lr, eps=1e-5)
    pool = [copy.deepcopy(net.state_dict())]       # the cloned network is the pool's first member
    if fresh:
        save_run(out, net, opt, env, rules, 0, 0, np_rng, args, pool)
        row0 = {"update": 0, "global_step": 0, **bc}
        if args.eval_every > 0:             # where cloning left it: what PPO starts from
            row0["eval_win_share"], row0["eval_lo"], row0["eval_hi"] = evaluate(net, args, rules)
            log(f"after cloning: eval win share {row0['eval_win_share']:.4f} [{row0['eval_lo']:.4f}, "
                f"{row0['eval_hi']:.4f}] (fair {1 / args.players:.4f})")
        with open(out / "progress.csv", "a", newline="") as f:
            csv.DictWriter(f, CSV_FIELDS).writerow(row0)
    else:
        latest = json.loads((out / "latest.json").read_text())
        loaded, _ = load_checkpoint(out / latest["checkpoint"], rules)
        net.load_state_dict(loaded.state_dict())
        st = torch.load(out / "train_state.pt", weights_only=True)
        opt.load_state_dict(st["optimizer"])
        update, global_step = int(st["update"]), int(st["global_step"])
        torch.set_rng_state(st["torch_rng"])
        pool = st["pool"]
        np_rng.bit_generator.state = json.loads(st["np_rng"])
        with np.load(out / "env_state.npz") as z:
            env.load_state_dict(dict(z))
        obs, mask, info = env.obs, env.mask, {"seat": env.seat, "game_id": env.game_id}
        with open(out / "progress.csv", newline="") as f:           # drop rows after the saved update
            rows = [r for r in csv.DictReader(f) if int(r["update"]) <= update]
        with open(out / "progress.csv", "w", newline="") as f:
            w = csv.DictWriter(f, CSV_FIELDS)
            w.writeheader()
            w.writerows(rows)
        log(f"resumed {out} at update {update} ({global_step} decisions)")

    from torch.utils.tensorboard import SummaryWriter

    writer = SummaryWriter(str(out / "tb"), purge_step=global_step if not fresh else None)
    B, T = args.num_envs, args.rollout_len
    n_updates = max(1, args.total_decisions // (B * T)) if args.total_decisions > 0 else 0   # 0: cloning only
    D, A = env.obs.shape[1], env.mask.shape[1]
    obs_b = torch.zeros((T, B, D))
    mask_b = torch.zeros((T, B, A), dtype=torch.bool)
    act_b = torch.zeros((T, B), dtype=torch.long)
    logp_b, rew_b, done_b, val_b, mine_b = (torch.zeros((T, B)) for _ in range(5))
    pooled = POOL in args.opponents
    rival = None
    if pooled:
        with torch.random.fork_rng():   # its initial weights are overwritten: draw none from the run's stream
            rival = PolicyValueNet(hidden=args.hidden, upcard_hidden=args.upcard_hidden)
    try:
        from tqdm import tqdm
        bar = tqdm(total=n_updates, initial=update, disable=not args.progress, desc="ppo")
    except ImportError:             # pragma: no cover - tqdm is a dependency
        bar = None
    stopped_at = 0
    while update < n_updates:
        t0 = time.perf_counter()
        # ---- rollout
        if pooled:                      # this update's rival: a pool member drawn at random
            rival.load_state_dict(pool[int(np_rng.integers(len(pool)))])
            rival_pol = LearnedPolicy(rival)
        with torch.no_grad():
            for t in range(T):
                o, m = torch.as_tensor(obs.copy()), torch.as_tensor(mask.copy())
                dist, v = net.distribution(o, m)
                a = dist.sample()
                # the learner is lineup seat 0, rotated: game g seats it at g % n
                me = np.array(info["game_id"] % args.players, copy=True)
                mine = info["seat"] == me
                if pooled and not mine.all():
                    a[~mine] = torch.as_tensor(rival_pol.act(obs[~mine], mask[~mine], np_rng))
                obs_b[t], mask_b[t], act_b[t], logp_b[t], val_b[t] = o, m, a, dist.log_prob(a), v
                mine_b[t] = torch.as_tensor(mine.astype(np.float32))
                obs, mask, rew, done, info = env.step(a.numpy())
                rew_b[t] = torch.as_tensor(rew[np.arange(B), me])
                done_b[t] = torch.as_tensor(done.astype(np.float32))
            _, next_v = net(torch.as_tensor(obs.copy()), torch.as_tensor(mask.copy()))
            adv = _advantages(rew_b, done_b, val_b, mine_b, next_v, info["seat"] == info["game_id"] % args.players,
                              args.gamma, args.gae_lambda)
            ret = adv + val_b
        # ---- update
        fo, fm, fa = obs_b.reshape(T * B, D), mask_b.reshape(T * B, A), act_b.reshape(-1)
        flp, fadv, fret = logp_b.reshape(-1), adv.reshape(-1), ret.reshape(-1)
        own = np.flatnonzero(mine_b.reshape(-1).numpy())         # the learner's decisions (not the rival's)
        stats = {"pg": [], "v": [], "ent": [], "kl": [], "clip": []}
        for _ in range(args.update_epochs):
            if args.target_kl > 0 and stats["kl"] and np.mean(stats["kl"][-n_mb:]) > args.target_kl:
                break                   # CleanRL's early stop: a cloned policy is easily pushed off
            n_mb = 0
            order = torch.as_tensor(np_rng.permutation(own))
            for i in range(0, len(own), args.minibatch):
                idx = order[i:i + args.minibatch]
                dist, v = net.distribution(fo[idx], fm[idx])
                lr_ = dist.log_prob(fa[idx]) - flp[idx]
                ratio = lr_.exp()
                mb_adv = fadv[idx]
                mb_adv = (mb_adv - mb_adv.mean()) / (mb_adv.std(correction=0) + 1e-8)
                pg = torch.max(-mb_adv * ratio, -mb_adv * ratio.clamp(1 - args.clip, 1 + args.clip)).mean()
                vl = 0.5 * ((v - fret[idx]) ** 2).mean()
                ent = dist.entropy().mean()
                if update < args.value_warmup:
                    loss = args.vf_coef * vl
                else:
                    loss = pg - args.ent_coef * ent + args.vf_coef * vl
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
                opt.step()
                n_mb += 1
                with torch.no_grad():
                    stats["pg"].append(float(pg))
                    stats["v"].append(float(vl))
                    stats["ent"].append(float(ent))
                    stats["kl"].append(float(((ratio - 1) - lr_).mean()))
                    stats["clip"].append(float(((ratio - 1.0).abs() > args.clip).float().mean()))
        update += 1
        global_step += T * B
        row = {"update": update, "global_step": global_step,
               "samples_per_s": round(T * B / (time.perf_counter() - t0), 1),
               "train_win_share": round(float(rew_b.sum() / max(1.0, float(done_b.sum()))), 5),
               "pg_loss": np.mean(stats["pg"]), "v_loss": np.mean(stats["v"]), "entropy": np.mean(stats["ent"]),
               "approx_kl": np.mean(stats["kl"]), "clipfrac": np.mean(stats["clip"])}
        if update % args.eval_every == 0 or update == n_updates:
            row["eval_win_share"], row["eval_lo"], row["eval_hi"] = evaluate(net, args, rules)
            log(f"update {update}: eval win share {row['eval_win_share']:.4f} "
                f"[{row['eval_lo']:.4f}, {row['eval_hi']:.4f}] (fair {1 / args.players:.4f})")
        for k, v in row.items():
            if k in ("update", "global_step"):
                continue
            ns = "eval" if k.startswith("eval") else ("charts" if k in ("samples_per_s", "train_win_share") else "losses")
            writer.add_scalar(f"{ns}/{k}", float(v), global_step)
        with open(out / "progress.csv", "a", newline="") as f:
            csv.DictWriter(f, CSV_FIELDS).writerow(row)
        if pooled and update % args.pool_every == 0:
            pool = (pool + [copy.deepcopy(net.state_dict())])[-args.pool_size:]
        if update % args.checkpoint_every == 0 or update == n_updates:
            save_run(out, net, opt, env, rules, update, global_step, np_rng, args, pool)
        if bar is not None:
            bar.update(1)
        stopped_at += 1
        if args.stop_after and stopped_at >= args.stop_after:
            break
    writer.close()
    if bar is not None:
        bar.close()
    plot_progress(out, args)
    if args.export and update >= n_updates:
        latest = json.loads((out / "latest.json").read_text())
        log(f"exported {export_policy(out / latest['checkpoint'], args.export, rules)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
