"""What the engine's lay-down searches after draws cost in greedy play, by outcome.

After every draw of a player who has not laid down, the closed loop searches his new hand for the
opening (``engine.core.compute_plans``); in Caribbean that is about a third of a hand's time.  This
script records those hands from greedy self-play (one hand per game, the rounds in turn, as
`benchmarks/simulate.py` plays them) and times on them, in compiled loops on one core:

* ``contract_out_of_reach``, the joker-count pre-test that settles most of them, and
* the search itself (``best_lay_down_must``, told nothing), split by outcome: hands the pre-test
  settles, hands with a lay-down, and the rest, with the search's node counts.

It prints one JSON line per (round, outcome) and a total line.  A change to the search is measured
here after a compile of seconds, instead of the simulator's full recompile; the closed loop's own
figures are `benchmarks/simulate.py` and `benchmarks/decision_costs.py`.

    python benchmarks/draw_searches.py [--preset caribbean] [--games 900] [--seed 5] [--reps 20]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from kalooki_sim import load_rules
from kalooki_sim.agents.base import GREEDY, default_params
from kalooki_sim.agents.compiled import choose_action
from kalooki_sim.core.jit import njit
from kalooki_sim.core.rng import rng_key
from kalooki_sim.engine import core, layout as L
from kalooki_sim.engine.state import State
from kalooki_sim.melds.search import B_NODES, MAX_MELDS, REC, best_lay_down_must, contract_out_of_reach, new_workspace

# a recorded draw: round index, seat, then the hand's 53 counts
_ROUND, _SEAT, _HAND = 0, 1, 2


def record_draw_hands(rules, n_games: int, seed: int) -> np.ndarray:
    """The hands searched after draws of players not yet down, in greedy 4-player play: game g is
    one hand of round ``g % n_rounds``, as in `benchmarks/simulate.py`."""
    rv = np.ascontiguousarray(rules.to_vector(), dtype=np.int64)
    st = State.empty(1)
    arrs = st.arrays()
    gs, ps, hands = st.gs, st.ps, st.hands
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    params = default_params(GREEDY)
    rows = []
    for game in range(n_games):
        rnd = game % int(rules.n_rounds)
        core.start_game(arrs, rv, 0, 4, -1, seed, game, 1)
        core.deal_hand(arrs, rv, 0, rnd, int(gs[0, L.G_DEALER]))
        keys = [np.uint64(rng_key(seed, game, core.STREAM_POLICY_BASE + p)) for p in range(4)]
        ctrs = [np.zeros(1, dtype=np.int64) for _ in range(4)]
        while not gs[0, L.G_TERMINAL]:
            seat = int(gs[0, L.G_TO_ACT])
            drawing = gs[0, L.G_PHASE] == L.PH_DRAW and ps[0, seat, L.PS_LAID] == 0
            n_legal = core.legal_mask(arrs, rv, 0, mask)
            a = choose_action(GREEDY, params, arrs, rv, 0, seat, mask, n_legal, keys[seat], ctrs[seat])
            err = core.step(arrs, rv, 0, a)
            if err:
                raise RuntimeError(f"game {game}: greedy's action {a} was refused ({err})")
            if drawing and gs[0, L.G_PHASE] == L.PH_PLAY and gs[0, L.G_ACTIVE] == seat:
                rows.append(np.concatenate([[rnd, seat], hands[0, seat].astype(np.int64)]))
    return np.array(rows, dtype=np.int64).reshape(-1, _HAND + L.N_TYPES)


@njit(cache=False)   # compiled per run: a cached copy would not notice edits to the search
def _outcomes(draws, rv, out_pre, out_found, out_nodes):
    best_stack = np.zeros((MAX_MELDS, REC), dtype=np.int64)
    best = np.zeros(4, dtype=np.int64)
    ws = new_workspace()
    hand = np.zeros(L.N_TYPES, dtype=np.int64)
    for i in range(draws.shape[0]):
        for t in range(L.N_TYPES):
            hand[t] = draws[i, _HAND + t]
        out_pre[i] = contract_out_of_reach(hand, rv, draws[i, _ROUND])
        out_found[i] = best_lay_down_must(hand, rv, draws[i, _ROUND], -1, -1, best_stack, best, ws) >= 0
        out_nodes[i] = best[B_NODES]


@njit(cache=False)
def _timed_loop(draws, rv, reps, search):
    """``reps`` passes over the draws: the search (``search``) or only the pre-test."""
    best_stack = np.zeros((MAX_MELDS, REC), dtype=np.int64)
    best = np.zeros(4, dtype=np.int64)
    ws = new_workspace()
    hand = np.zeros(L.N_TYPES, dtype=np.int64)
    acc = 0
    for _ in range(reps):
        for i in range(draws.shape[0]):
            for t in range(L.N_TYPES):
                hand[t] = draws[i, _HAND + t]
            if search:
                acc += best_lay_down_must(hand, rv, draws[i, _ROUND], -1, -1, best_stack, best, ws)
            else:
                acc += contract_out_of_reach(hand, rv, draws[i, _ROUND])
    return acc


def _ns_per_hand(draws, rv, reps, search: bool) -> float:
    if len(draws) == 0:
        return 0.0
    t0 = time.perf_counter_ns()
    _timed_loop(draws, rv, reps, search)
    return (time.perf_counter_ns() - t0) / reps / len(draws)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="caribbean")
    ap.add_argument("--games", type=int, default=900, help="greedy hands to record draws from")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--reps", type=int, default=20, help="timing passes over the recorded hands")
    args = ap.parse_args(argv)
    rules = load_rules(args.preset)
    rv = np.ascontiguousarray(rules.to_vector(), dtype=np.int64)
    draws = record_draw_hands(rules, args.games, args.seed)
    n = len(draws)
    pre = np.zeros(n, dtype=np.bool_)
    found = np.zeros(n, dtype=np.bool_)
    nodes = np.zeros(n, dtype=np.int64)
    _outcomes(draws, rv, pre, found, nodes)
    _timed_loop(draws[:1], rv, 1, True)     # compile before timing
    base = {"bench": "draw_searches", "variant": args.preset, "games": args.games, "seed": args.seed}
    outcomes = {"settled_by_pretest": pre, "lay_down": found & ~pre, "no_lay_down": ~found & ~pre}
    total_ns = 0.0
    rows = []
    for rnd in range(int(rules.n_rounds)):
        in_round = draws[:, _ROUND] == rnd
        for name, sel in outcomes.items():
            m = in_round & sel
            if not m.any():
                continue
            ns = _ns_per_hand(draws[m], rv, args.reps, True)
            total_ns += ns * m.sum()
            rows.append(dict(base, round=rnd + 1, outcome=name, hands=int(m.sum()),
                             share_of_draws=round(m.sum() / n, 4), search_ns=round(ns, 1),
                             nodes_mean=round(float(nodes[m].mean()), 2), _total=ns * m.sum()))
    for row in rows:
        row["share_of_search_time"] = round(row.pop("_total") / total_ns, 4) if total_ns else 0.0
        print(json.dumps(row))
    print(json.dumps(dict(base, draws=n, draws_per_game=round(n / max(args.games, 1), 2),
                          settled_by_pretest=round(float(pre.mean()), 4) if n else 0.0,
                          lay_down=round(float((found & ~pre).mean()), 4) if n else 0.0,
                          pretest_ns=round(_ns_per_hand(draws, rv, args.reps, False), 1),
                          search_ns_mean=round(total_ns / n, 1) if n else 0.0,
                          nodes_total=int(nodes.sum()))))


if __name__ == "__main__":
    main()
