#!/usr/bin/env python
"""Lockstep environment throughput (JSON lines): learner decisions per second per core.

For every batch size ``B`` (default 1, 64, 1024, 4096) a ``KalookiVecEnv`` of Caribbean hands
(4 players) runs ``reset`` and then ``step`` with a uniformly random legal learner (numpy, no
network: ``KalookiVecEnv.random_actions``) until ``--seconds`` have passed; one line per setting:

* ``lineup=vs_greedy``: one learner seat and three compiled greedy seats (the compiled seats'
  turns are played inside the kernel and are part of the cost);
* ``lineup=selfplay``: four learner seats (every decision comes out: the env's own cost);

with ``decisions_per_s`` (learner decisions, per core), ``step_ms``, ``pick_ms`` (the numpy random
pick alone: one index per row into the env's ``legal_ids``; ``pick=mask`` lines at B = 1024 scan
the mask in numpy instead), and ``batch_bytes`` (every array the batch holds,
``KalookiVecEnv.nbytes``).

With torch installed (``--network``, on by default), the same with the shipped network choosing
the learner's actions (``lineup=vs_greedy_network``, every ``B``; ``net=learned-caribbean``, the
strategy ``configs/agents/learned-caribbean``, for Caribbean with 4 players, else an untrained
``PolicyValueNet`` of ``agents/learned``), and ``what=train``: training samples per second of a
PPO-style update (forward, clipped loss, backward, Adam step) on minibatches of 1024 recorded
decisions.

Then the closed-loop simulator in the same run: ``rollout.simulate`` of greedy Caribbean hands,
hands/s, and its decisions/s = hands/s x the decisions of a greedy hand, counted by playing the
same games through the environment with every seat a learner answered by compiled greedy
(``compiled_actions``; the environment plays exactly ``simulate``'s games, tests/test_env.py)::

    python benchmarks/env.py --seconds 5
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time

import numba
import numpy as np

from kalooki_sim import load_rules
from kalooki_sim.runtime.env import KalookiVecEnv
from kalooki_sim.runtime.rollout import simulate


def _line(**kw):
    print(json.dumps(kw), flush=True)


def _pick_from_mask(env, rng):
    """A random legal action per row read from the mask in numpy (what a learner that ignores
    ``legal_ids`` pays): all rows' legal ids by one ``flatnonzero`` of the flat mask (a 2-d
    ``nonzero`` and ``bincount`` cost 3.7x as much), then one pick per row."""
    m = env.mask
    flat = np.flatnonzero(m)
    counts = np.count_nonzero(m, axis=1)
    first = np.cumsum(counts) - counts
    pick = first + (rng.random(env.batch) * counts).astype(np.int64)
    return flat[pick] - np.arange(env.batch, dtype=np.int64) * m.shape[1]


def _run_env(rules, n, B, lineup, seconds, seed, from_mask=False):
    env = KalookiVecEnv(rules, n, batch=B, lineup=lineup, seed=seed)
    choose = (lambda r: _pick_from_mask(env, r)) if from_mask else env.random_actions
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    env.reset()
    reset_s = time.perf_counter() - t0
    for _ in range(3):                          # warm: the first steps of a hand are its cheapest
        env.step(choose(rng))
    steps = pick = 0.0
    episodes = 0
    t0 = time.perf_counter()
    while True:
        p0 = time.perf_counter()
        a = choose(rng)
        pick += time.perf_counter() - p0
        _, _, _, done, _ = env.step(a)
        episodes += int(done.sum())
        steps += 1
        el = time.perf_counter() - t0
        if el >= seconds and steps >= 5:
            break
    return dict(decisions_per_s=round(B * steps / el / numba.get_num_threads()), steps=int(steps),
                step_ms=round(1e3 * el / steps, 3), pick_ms=round(1e3 * pick / steps, 3),
                hands_per_s=round(episodes / el, 1), reset_s=round(reset_s, 3), batch_bytes=env.nbytes())


SHIPPED = "learned-caribbean"


def _network(rules, n, seed):
    """The shipped policy where it fits the rules (its checkpoint names them), else an untrained
    network of the same class; and its name."""
    import torch

    from kalooki_sim.agents.learned import LearnedPolicy, PolicyValueNet
    from kalooki_sim.runtime.strategies import StrategyError, learned_policy

    if n == 4:
        try:
            return learned_policy(SHIPPED, rules), SHIPPED
        except StrategyError:
            pass
    torch.manual_seed(seed)
    return LearnedPolicy(PolicyValueNet()), "untrained"


def _run_env_network(rules, n, B, seconds, seed):
    pol, name = _network(rules, n, seed)
    env = KalookiVecEnv(rules, n, batch=B, lineup=["learner"] + ["greedy"] * (n - 1), seed=seed)
    rng = np.random.default_rng(seed)
    obs, mask, _ = env.reset()
    steps, net_s = 0, 0.0
    t0 = time.perf_counter()
    while True:
        p0 = time.perf_counter()
        a = pol.act(obs, mask, rng)
        net_s += time.perf_counter() - p0
        obs, mask, *_ = env.step(a)
        steps += 1
        el = time.perf_counter() - t0
        if el >= seconds and steps >= 3:
            break
    return dict(net=name, decisions_per_s=round(B * steps / el), steps=steps, step_ms=round(1e3 * el / steps, 3),
                network_ms=round(1e3 * net_s / steps, 3))


def _train_samples_per_s(rules, n, seconds, seed, minibatch=1024):
    import torch

    from kalooki_sim.agents.learned import PolicyValueNet

    torch.manual_seed(seed)
    net = PolicyValueNet()
    opt = torch.optim.Adam(net.parameters(), lr=3e-4)
    env = KalookiVecEnv(rules, n, batch=minibatch, lineup=["learner"] + ["greedy"] * (n - 1), seed=seed)
    obs, mask, _ = env.reset()
    obs_t, mask_t = torch.as_tensor(obs.copy()), torch.as_tensor(mask.copy())
    act = torch.as_tensor(env.random_actions(np.random.default_rng(seed)))
    adv, ret, old_logp = torch.randn(minibatch), torch.randn(minibatch), torch.full((minibatch,), -1.0)
    updates = 0
    t0 = time.perf_counter()
    while True:
        dist, value = net.distribution(obs_t, mask_t)
        ratio = torch.exp(dist.log_prob(act) - old_logp)
        loss = (-torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean() + 0.5 * ((value - ret) ** 2).mean()
                - 0.01 * dist.entropy().mean())
        opt.zero_grad()
        loss.backward()
        opt.step()
        updates += 1
        el = time.perf_counter() - t0
        if el >= seconds and updates >= 3:
            break
    return dict(samples_per_s=round(updates * minibatch / el), minibatch=minibatch, update_ms=round(1e3 * el / updates, 1))


def _decisions_per_greedy_hand(rules, n, seed, hands=512):
    """Decisions of all seats in greedy hands: ``simulate``'s games, stepped through the env."""
    B = 64
    env = KalookiVecEnv(rules, n, batch=B, lineup=["learner"] * n, seed=seed)
    env.reset()
    per_row = np.zeros(B, dtype=np.int64)
    counted = decisions = 0
    while counted < hands:
        before = env.game_id.copy()
        env.step(env.compiled_actions("greedy"))
        per_row += 1
        ended = env.game_id != before
        decisions += int(per_row[ended].sum())
        counted += int(ended.sum())
        per_row[ended] = 0
    return decisions / counted


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="caribbean")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--batches", default="1,64,1024,4096")
    ap.add_argument("--seconds", type=float, default=5.0, help="timed stepping per setting")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--network", action=argparse.BooleanOptionalAction, default=True,
                    help="also time the torch network of agents/learned (needs the learn extra)")
    args = ap.parse_args(argv)
    numba.set_num_threads(args.threads)
    rules = load_rules(args.variant)
    n = args.players
    t0 = time.perf_counter()
    KalookiVecEnv(rules, n, batch=2).reset()                      # compile / load the kernels
    simulate(rules, n, ["greedy"] * n, None, 16, 0)
    _line(what="setup", variant=rules.name, players=n, threads=args.threads, load_s=round(time.perf_counter() - t0, 2),
          machine=platform.machine(), python=platform.python_version(), numba=numba.__version__)
    lineups = {"vs_greedy": ["learner"] + ["greedy"] * (n - 1), "selfplay": ["learner"] * n}
    for B in (int(x) for x in args.batches.split(",")):
        for name, lineup in lineups.items():
            r = _run_env(rules, n, B, lineup, args.seconds, args.seed)
            _line(what="env", lineup=name, batch=B, pick="legal_ids", **r,
                  batch_mib=round(r["batch_bytes"] / 2**20, 1))
            if B == 1024:
                r = _run_env(rules, n, B, lineup, args.seconds, args.seed, from_mask=True)
                _line(what="env", lineup=name, batch=B, pick="mask", **r, batch_mib=round(r["batch_bytes"] / 2**20, 1))
    if args.network:
        import torch

        torch.set_num_threads(args.threads)
        for B in (int(x) for x in args.batches.split(",")):
            _line(what="env", lineup="vs_greedy_network", batch=B, **_run_env_network(rules, n, B, args.seconds, args.seed))
        _line(what="train", **_train_samples_per_s(rules, n, args.seconds, args.seed))
    per_hand = _decisions_per_greedy_hand(rules, n, args.seed)
    hands = max(2000, int(20_000 * args.seconds / 5))
    t0 = time.perf_counter()
    simulate(rules, n, ["greedy"] * n, None, hands, args.seed + 1)
    el = time.perf_counter() - t0
    hps = hands / el / args.threads
    _line(what="simulate", agents="greedy", hands=hands, hands_per_s=round(hps), decisions_per_hand=round(per_hand, 2),
          decisions_per_s=round(hps * per_hand))
    _line(what="memory", max_rss_mib=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
