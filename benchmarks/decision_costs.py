"""Where a hand's time goes, by decision: cycles per policy decision and per engine step, split by
phase, action kind and whether the seat has laid down.

`perf_profile.py` says which kernels are hot; this says which *decisions* are, in the closed loop
itself (the costs of one decision include the cache and branch-predictor misses it meets there,
which a kernel timed alone in a tight loop does not).  It plays single hands like
`benchmarks/simulate.py` (rounds in turn) with its own copy of the loop that reads the CPU's cycle
counter around `agents.compiled.seat_action` and `engine.core.apply_action`, and prints one JSON
line per (phase, kind, laid) row and a total line.  The counter reads (about 20 cycles each) are
included in the figures.

    python benchmarks/decision_costs.py [--preset caribbean] [--agents greedy] [--hands 20000]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from kalooki_sim import load_rules
from kalooki_sim.agents.base import params_matrix, policy_id
from kalooki_sim.agents.compiled import KNOWN_LEN, seat_action
from kalooki_sim.core.jit import njit
from kalooki_sim.core.rng import rng_key
from kalooki_sim.core.rulevec import R_N_ROUNDS
from kalooki_sim.engine import layout as L
from kalooki_sim.engine.core import STREAM_POLICY_BASE, apply_action, deal_hand, reset_game
from kalooki_sim.engine.state import State

PHASES = {L.PH_CALL: "call", L.PH_ALLOW: "allow", L.PH_DRAW: "draw", L.PH_PLAY: "play",
          L.PH_UPSWAP: "upswap"}
KINDS = ("flow", "lay", "discard", "tack", "table")   # pass/call/allow/deny/draw/end, then by range
N_PHASES = 6


@intrinsic
def _cycles(typingctx):
    """The CPU's cycle counter (``llvm.readcyclecounter``; the TSC on x86-64)."""
    def codegen(context, builder, sig, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(64), []),
                                            "llvm.readcyclecounter")
        return builder.call(fn, [])
    return types.int64(), codegen


@njit(_nrt=False)
def _kind(a):
    if a < L.A_LAY:
        return 0
    if a < L.A_DISCARD:
        return 1
    if a < L.A_TACK:
        return 2
    if a < L.A_MOVE:
        return 3
    return 4


@njit(_nrt=False)
def _play(state, rv, seat_pol, n_players, seed, first_game, n_games, policy_cyc, step_cyc, count, mask, keys,
          ctrs, known, params):
    """Play games ``first_game ..`` as single hands; add cycles and counts per (phase, kind, laid)."""
    gs, ps, hscore, hwin = state.gs, state.ps, state.hscore, state.hwin
    t_all = _cycles()
    for gid in range(first_game, first_game + n_games):
        reset_game(gs, ps, hscore, hwin, rv, 0, n_players, -1, seed, gid, 1)
        deal_hand(state, rv, 0, gid % rv[R_N_ROUNDS], gs[0, L.G_DEALER])
        for p in range(n_players):
            keys[p] = rng_key(seed, gid, STREAM_POLICY_BASE + p)
            ctrs[p] = 0
        for _ in range(100_000):
            if gs[0, L.G_TERMINAL] != 0:
                break
            seat = gs[0, L.G_TO_ACT]
            ph = gs[0, L.G_PHASE]
            laid = ps[0, seat, L.PS_LAID]
            t0 = _cycles()
            a = seat_action(seat_pol[seat], params[seat], state, rv, 0, seat, known, mask, keys[seat],
                            ctrs[seat:seat + 1])
            t1 = _cycles()
            if a < 0 or apply_action(state, rv, 0, a) != 0:
                return -1
            t2 = _cycles()
            k = _kind(a)
            policy_cyc[ph, k, laid] += t1 - t0
            step_cyc[ph, k, laid] += t2 - t1
            count[ph, k, laid] += 1
    return _cycles() - t_all


def _cycles_per_second():
    @njit
    def now():
        return _cycles()
    now()
    c0, t0 = now(), time.perf_counter()
    time.sleep(0.5)
    return (now() - c0) / (time.perf_counter() - t0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="caribbean")
    ap.add_argument("--agents", default="greedy", help="one policy for all seats, or a comma list")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--hands", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    names = args.agents.split(",")
    if len(names) == 1:
        names = names * args.players
    if len(names) != args.players:
        ap.error(f"--agents names {len(names)} policies for {args.players} players")
    rv = np.ascontiguousarray(load_rules(args.preset).to_vector(), dtype=np.int64)
    arrays = State.empty(1).arrays()
    seat_pol = np.array([policy_id(n) for n in names], dtype=np.int64)
    rows = params_matrix(list(seat_pol))                  # every seat's default parameters
    params = np.zeros((L.P_MAX, rows.shape[1]))
    params[:len(rows)] = rows
    scratch = (np.zeros(L.N_ACTIONS, np.bool_), np.zeros(L.P_MAX, np.uint64), np.zeros(L.P_MAX, np.int64),
               np.zeros(KNOWN_LEN, np.int64), params)
    sums = [np.zeros((N_PHASES, len(KINDS), 2), np.int64) for _ in range(3)]
    # compile and warm up on other games, then measure
    if _play(arrays, rv, seat_pol, args.players, args.seed, 10**9, 50, *sums, *scratch) < 0:
        raise SystemExit("a policy chose no legal action")
    for s in sums:
        s[:] = 0
    total = _play(arrays, rv, seat_pol, args.players, args.seed, 0, args.hands, *sums, *scratch)
    if total < 0:
        raise SystemExit("a policy chose no legal action")
    hz = _cycles_per_second()
    policy_cyc, step_cyc, count = sums
    n = args.hands
    base = {"bench": "decision_costs", "variant": args.preset, "agents": ",".join(names)}
    for ph, ph_name in PHASES.items():
        for k, kind in enumerate(KINDS):
            for laid in (0, 1):
                c = int(count[ph, k, laid])
                if c == 0:
                    continue
                print(json.dumps({**base, "phase": ph_name, "kind": kind, "laid": laid,
                                  "per_hand": round(c / n, 2),
                                  "policy_cycles": round(policy_cyc[ph, k, laid] / c),
                                  "step_cycles": round(step_cyc[ph, k, laid] / c),
                                  "share": round((policy_cyc[ph, k, laid] + step_cyc[ph, k, laid]) / total, 3)}),
                      flush=True)
    print(json.dumps({**base, "hands": n, "cycles_per_hand": round(total / n),
                      "policy_share": round(policy_cyc.sum() / total, 3),
                      "step_share": round(step_cyc.sum() / total, 3),
                      "counter_hz": round(hz), "hands_per_s": round(hz * n / total)}), flush=True)


if __name__ == "__main__":
    main()
