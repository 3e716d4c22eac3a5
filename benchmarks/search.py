#!/usr/bin/env python
"""What the search agent costs: its decisions timed one by one, against the closed loop (JSON lines).

One searching seat (``--search``, default ``search-caribbean``) among copies of its base strategy
(``--base``) plays ``--hands`` single hands of every round, as a tournament deals them, stepped
from Python so that every decision of the searching seat is timed on its own, through the driver
the env uses (one core).  Printed: the median and 90th percentile cost of
all its decisions and of the searched ones (more than one candidate), rollouts per second (each
the rest of a hand), searched decisions per second, and in the same run the closed loop's hands
per second per core with the base strategy in every seat, and the search lineup's hands per second::

    python benchmarks/search.py --variant caribbean --hands 200
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numba
import numpy as np

from kalooki_sim import load_rules
from kalooki_sim.agents.base import EXTERNAL
from kalooki_sim.agents.compiled import KNOWN_LEN
from kalooki_sim.agents.known import KNOWN_GEN
from kalooki_sim.agents.search import planned_rollouts
from kalooki_sim.agents.search_policy import SearchPolicy
from kalooki_sim.engine import core, layout as L
from kalooki_sim.runtime.game import Game
from kalooki_sim.runtime.rollout import simulate
from kalooki_sim.runtime.strategies import lineup, load_strategy


def _timed_hands(rules, n, search, base, hands, seed):
    """Single hands of every round (a tournament's hand ``g`` is round ``g % n_rounds``), player 0
    the search, asked through its driver (``SearchPolicy.act_state``, as the env asks it) and timed
    decision by decision; the others its base, by the compiled agents."""
    s = load_strategy(search)
    pol = SearchPolicy(s.params, s.name)
    srow = pol.params
    _, ids, params = lineup([base] * n)
    seats = np.array([EXTERNAL] + list(ids[1:]), dtype=np.int64)
    rows = np.zeros(1, dtype=np.int64)
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    known = np.zeros(KNOWN_LEN, dtype=np.int64)
    known[KNOWN_GEN] = 1
    row = np.uint64(0)                  # the loop's row type: the kernels compiled for it are reused
    costs, searched, rollouts = [], [], 0
    t0 = time.perf_counter()
    for game in range(hands):
        g = Game(rules, n, seed=seed, game_id=game, agents=seats, params=params, first_hand=game % rules.n_rounds,
                 n_hands=1)
        la = g._loop
        while not g.terminal:
            a = g.agent_action()
            if a < 0:                   # player 0: the search
                seat = g.to_act
                known[KNOWN_GEN] += 1
                core.legal_mask(la.state.arrays(), g.rv, 0, mask)
                r = planned_rollouts(srow, la.state.arrays(), g.rv, row, seat, known, mask, la.keys[0, 0],
                                     la.ctrs[0, 0:1].copy())
                t = time.perf_counter()
                a = int(pol.act_state(la, g.rv, rows)[0])
                dt = time.perf_counter() - t
                costs.append(dt)
                if r:
                    searched.append(dt)
                    rollouts += r
            g.apply(a)
    return time.perf_counter() - t0, costs, searched, rollouts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="caribbean")
    ap.add_argument("--search", default=None, help="default: search-<variant> (search-caribbean, search-k40)")
    ap.add_argument("--base", default=None, help="default: sharp-<variant>")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--hands", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    numba.set_num_threads(1)
    family = "caribbean" if args.variant == "caribbean" else "k40"
    search = args.search or f"search-{family}"
    base = args.base or f"sharp-{family}"
    rules = load_rules(args.variant)
    n = args.players
    _timed_hands(rules, n, search, base, 2, args.seed + 1)                 # compile / load
    _, ids, params = lineup([base] * n)
    simulate(rules, n, ids, params, n_games=64, seed=0)
    wall, costs, searched, rollouts = _timed_hands(rules, n, search, base, args.hands, args.seed)
    t = time.perf_counter()
    loop_hands = 20_000
    simulate(rules, n, ids, params, n_games=loop_hands, seed=args.seed)
    loop_rate = loop_hands / (time.perf_counter() - t)
    s_time = sum(searched)
    ms = lambda xs, q: 1e3 * (statistics.quantiles(xs, n=10)[q] if len(xs) > 1 else (xs[0] if xs else 0.0))
    print(json.dumps({
        "variant": args.variant, "search": search, "base": base, "players": n, "hands": args.hands,
        "decisions": len(costs), "searched_decisions": len(searched),
        "median_ms_per_decision": round(1e3 * statistics.median(costs), 3),
        "median_ms_per_searched_decision": round(1e3 * statistics.median(searched), 3) if searched else None,
        "p90_ms_per_searched_decision": round(ms(searched, 8), 3) if searched else None,
        "rollouts_per_s_per_core": round(rollouts / s_time, 1) if s_time else None,
        "searched_decisions_per_s_per_core": round(len(searched) / s_time, 1) if s_time else None,
        "search_lineup_hands_per_s": round(args.hands / wall, 2),
        "closed_loop_hands_per_s_per_core": round(loop_rate, 1),
        "ratio_search_lineup_to_closed_loop": round(args.hands / wall / loop_rate, 6),
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
