#!/usr/bin/env python
"""Tournament throughput against raw ``simulate`` for the same number of hands (JSON lines).

A duplicate tournament plays every deal in every seating of its table, in shards written as parquet,
and computes its statistics at the end; the target (issue 28) is at least 80 % of what ``simulate``
plays in the same time.  Both run the same lineup on one thread, alternating, ``--repeats`` times
each; the figures are hands per second per core (the tournament's play, and play plus its tables
and plots) and the ratios, the medians of the runs::

    python benchmarks/tournament.py --variant caribbean --hands 40000

With ``--learned NAME`` (a checkpoint or learned strategy, e.g. ``learned-caribbean``) it times a
tournament with that entrant in place of the first instead: its learned deals are one lockstep
batch (``policy_play.play_schedule``), against the way they were played before, one
``play_policies`` call per run of deals with the same table and per seating (the baseline,
``_per_call``, timed in the same run on the same deals).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time

import numba

from kalooki_sim import load_rules
from kalooki_sim.runtime.rollout import simulate
from kalooki_sim.runtime.strategies import lineup
from kalooki_sim.studies.tournament import TournamentConfig, analyse, run_tournament


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="caribbean")
    ap.add_argument("--agents", default="greedy,greedy-picky,greedy-explore,greedy")
    ap.add_argument("--hands", type=int, default=40_000, help="hands per timed run (a multiple of 4)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--learned", default=None, metavar="NAME", help="time a tournament with this learned entrant")
    ap.add_argument("--learned-deals", type=int, default=300)
    ap.add_argument("--players", type=int, default=4, help="with --learned: seats (entrants may be more)")
    args = ap.parse_args(argv)
    if args.learned:
        return _learned(args)
    numba.set_num_threads(args.threads)
    rules = load_rules(args.variant)
    agents = tuple(a.strip() for a in args.agents.split(","))
    _, ids, params = lineup(agents)
    n = len(agents)
    deals = args.hands // n
    simulate(rules, n, list(ids), params, 64, 0)                      # compile / load the kernels
    cfg = lambda out: TournamentConfig(variant=args.variant, players=n, agents=agents, deals=deals,
                                       shard_deals=max(1, deals // 4), out=out)
    with tempfile.TemporaryDirectory() as tmp:
        run_tournament(TournamentConfig(variant=args.variant, players=n, agents=agents, deals=8,
                                        out=f"{tmp}/warm"), progress=False)
        sim, tour, whole = [], [], []
        for r in range(args.repeats):
            t0 = time.perf_counter()
            simulate(rules, n, list(ids), params, deals * n, 1 + r)
            sim.append(deals * n / (time.perf_counter() - t0) / args.threads)
            t0 = time.perf_counter()
            run = run_tournament(cfg(f"{tmp}/t{r}"), progress=False, results=False)
            t1 = time.perf_counter()
            analyse(run, cfg(f"{tmp}/t{r}"), rules)
            t2 = time.perf_counter()
            tour.append(deals * n / (t1 - t0) / args.threads)
            whole.append(deals * n / (t2 - t0) / args.threads)
    med = statistics.median
    out = {"bench": "tournament", "variant": args.variant, "agents": agents, "hands": deals * n,
           "threads": args.threads, "simulate_hands_per_s_per_core": round(med(sim)),
           "tournament_play_hands_per_s_per_core": round(med(tour)),
           "tournament_with_results_hands_per_s_per_core": round(med(whole)),
           "ratio_play": round(med(tour) / med(sim), 3), "ratio_with_results": round(med(whole) / med(sim), 3),
           "runs_simulate": [round(x) for x in sim], "runs_tournament_play": [round(x) for x in tour]}
    print(json.dumps(out))
    return 0


def _per_call(rules, n, labels, names, policies, deals, seed):
    """The learned deals as they were played before issue 40: one ``play_policies`` call per run
    of consecutive deals with the same table and per seating."""
    from kalooki_sim.runtime.policy_play import play_policies
    from kalooki_sim.studies.tournament import schedules

    sched = schedules(len(labels), n, deals)
    runs, start = [], 0
    for j in range(1, len(deals) + 1):
        if j == len(deals) or not (sched[j, 0] == sched[start, 0]).all():
            runs.append((start, j))
            start = j
    for a, b in runs:
        for r in range(sched.shape[1]):
            seats = [policies[e] if e in policies else names[e] for e in sched[a, r]]
            if any(not isinstance(x, str) for x in seats):
                play_policies(rules, n, seats, b - a, seed, first_game_id=int(deals[a]))


def _learned(args) -> int:
    from kalooki_sim.runtime.strategies import learned_policies
    from kalooki_sim.studies.tournament import entrant_labels, play_seatings, seatings_per_deal

    numba.set_num_threads(args.threads)
    rules = load_rules(args.variant)
    names = [args.learned] + [a.strip() for a in args.agents.split(",")][1:]
    strats, ids, params = lineup(names)
    policies = learned_policies(strats, rules)
    n = args.players
    labels = entrant_labels(names)
    deals = __import__("numpy").arange(args.learned_deals)
    play = lambda d, s: play_seatings(rules, n, labels, ids, params, d, s, "hands", strategy_names=names,
                                      policies=policies, agent_names=names)
    play(deals[:2], 0)                                                    # compile / load
    _per_call(rules, n, labels, names, policies, deals[:2], 0)
    new, old = [], []
    hands = len(deals) * seatings_per_deal(n)           # single hands: one per game
    for r in range(args.repeats):
        t0 = time.perf_counter()
        play(deals, 1 + r)
        new.append(hands / (time.perf_counter() - t0) / args.threads)
        t0 = time.perf_counter()
        _per_call(rules, n, labels, names, policies, deals, 1 + r)
        old.append(hands / (time.perf_counter() - t0) / args.threads)
    med = statistics.median
    print(json.dumps({"bench": "tournament_learned", "variant": args.variant, "entrants": names, "players": n,
                      "deals": len(deals), "hands": hands, "threads": args.threads,
                      "batched_hands_per_s_per_core": round(med(new)),
                      "per_call_hands_per_s_per_core": round(med(old)), "speedup": round(med(new) / med(old), 2),
                      "runs_batched": [round(x) for x in new], "runs_per_call": [round(x) for x in old]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
