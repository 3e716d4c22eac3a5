#!/usr/bin/env python
"""What the search agent costs: its decisions timed one by one, against the closed loop (JSON lines).

One searching seat (``--search``, default ``search-caribbean``) among copies of its base strategy
(``--base``) plays ``--hands`` single hands, stepped from Python so that every decision of the
searching seat is timed on its own (one core).  Printed: the median and 90th percentile cost of
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
from kalooki_sim.agents.compiled import KNOWN_LEN, choose_action
from kalooki_sim.agents.known import KNOWN_GEN
from kalooki_sim.agents.search import planned_rollouts, search_action
from kalooki_sim.core.rng import rng_key
from kalooki_sim.engine import core, layout as L
from kalooki_sim.engine.state import State
from kalooki_sim.runtime.rollout import simulate
from kalooki_sim.runtime.strategies import lineup, load_strategy


def _timed_hands(rules, n, search, base, hands, seed):
    rv = np.ascontiguousarray(rules.to_vector(), dtype=np.int64)
    _, ids, params = lineup([base] * n)
    srow = np.asarray(load_strategy(search).params, dtype=np.float64)
    g = np.uint64(0)                    # the loop's row type: the kernels compiled for it are reused
    st = State.empty(1)
    A = st.arrays()
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    known = np.zeros(KNOWN_LEN, dtype=np.int64)
    known[KNOWN_GEN] = 1
    costs, searched, rollouts = [], [], 0
    t0 = time.perf_counter()
    for game in range(hands):
        core.start_game(A, rv, 0, n, -1, seed, game, 1)
        ctrs = np.zeros((n, 1), dtype=np.int64)
        keys = [rng_key(seed, game, core.STREAM_POLICY_BASE + p) for p in range(n)]
        while not st.gs[0, L.G_TERMINAL]:
            seat = int(st.gs[0, L.G_TO_ACT])
            k = core.legal_mask(A, rv, 0, mask)
            if seat == 0:
                known[KNOWN_GEN] += 1
                r = planned_rollouts(srow, A, rv, g, seat, known, mask.copy(), keys[0], ctrs[0].copy())
                known[KNOWN_GEN] += 1
                t = time.perf_counter()
                a = search_action(srow, A, rv, g, seat, known, mask, keys[0], ctrs[0])
                dt = time.perf_counter() - t
                costs.append(dt)
                if r:
                    searched.append(dt)
                    rollouts += r
            else:
                a = choose_action(ids[seat], params[seat], A, rv, 0, seat, mask, k, keys[seat], ctrs[seat])
            assert core.step(A, rv, 0, a) == 0
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
