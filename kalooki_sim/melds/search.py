"""Exact best lay-down search (compiled): the lay-down that leaves the least penalty in hand.

The entry points (``best_lay_down_*``) unpack the rules once, apply the cheap filters (``reach``)
and run one of two searches: runs first with the sets in closed form (``runs_first``) for contracts
of one run per suit and one set per rank, else the general depth-first search (``dfs``), which the
docstring of ``dfs`` describes.  Records, params and the workspace are laid out in ``workspace``;
this module also re-exports the names the engine, the agents and the benchmarks use.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.bits import lowest_bit, rank_count_words
from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import R_PENALTY
from kalooki_sim.core.views import c_view

from .dfs import _dfs
from .leaf import _natural_value
from .positions import run_mask
from .reach import (  # noqa: F401
    _contract_needs_more_jokers, _run_reach, _set_fits, contract_out_of_reach, natural_meldable, natural_meldable_held,
)
from .runs_first import _run_bounds, _runs_first, _runs_then_sets_fit, _top_rank_penalty
from .workspace import (  # noqa: F401  (re-exported)
    _DP_J, _DP_T, _WS_BEST, _WS_DP, _WS_NATVAL, _WS_PICK, _WS_POOL, _WS_PRM, _WS_SCRATCH, _WS_STACK, B_N, B_NODES,
    B_USED, B_VAL, K_JSET, K_RUN, K_SET, MAX_MELDS, P_ADJ_OK, P_CONTRACT, P_DIST_RANK, P_DIST_SUIT, P_EXTRA, P_F,
    P_HELD, P_HI_MAX, P_JSET, P_LO_MIN, P_MAXJVAL, P_MINPTS, P_MUST, P_RUN_MIN, P_SET_DUP, P_SET_MAX, P_SET_MIN,
    P_SET_MIN_NAT, P_T, P_UB_SETS, REC, WS_LEN, fill_params, make_params, new_workspace,
)

__all__ = [
    "best_lay_down_counts", "best_lay_down_ws", "best_lay_down_min", "best_lay_down_must",
    "best_lay_down_known", "best_lay_down_batch", "new_workspace", "make_params", "fill_params",
    "contract_out_of_reach", "natural_meldable", "natural_meldable_held",
    "MAX_MELDS", "REC", "K_SET", "K_RUN", "K_JSET", "B_NODES", "WS_LEN",
]


@njit
def best_lay_down_counts(hand, rv, round_idx, best_stack, best):
    """Search entry: ``hand`` int64[53] counts, at most three of a natural (a deck has at most
    three packs; ``_dfs`` relies on it).  Fills ``best_stack``/``best``; returns the penalty placed
    on the table, or -1 when the hand cannot lay down."""
    return best_lay_down_ws(hand, rv, round_idx, best_stack, best, new_workspace())


@njit(_nrt=False)
def best_lay_down_ws(hand, rv, round_idx, best_stack, best, ws):
    """``best_lay_down_counts`` with caller-owned scratch memory ``ws`` (int64[WS_LEN]): no
    allocation per call, which matters when the engine asks once per turn."""
    return best_lay_down_min(hand, rv, round_idx, np.int64(-1), best_stack, best, ws)


@njit(_nrt=False)
def best_lay_down_min(hand, rv, round_idx, min_points, best_stack, best, ws):
    """``best_lay_down_ws`` under the rules' opening (``min_points`` < 0), or with new melds worth
    at least ``min_points`` instead (1: any melds; the engine's search after an opening and for a
    kalooki), without a modified copy of the rule vector."""
    return best_lay_down_must(hand, rv, round_idx, min_points, np.int64(-1), best_stack, best, ws)


@njit(_nrt=False)
def best_lay_down_must(hand, rv, round_idx, min_points, must, best_stack, best, ws):
    """``best_lay_down_min`` told that every lay-down of ``hand`` places every copy of natural
    ``must`` (-1: nothing known), as when the hand is one without a lay-down plus that card
    (``engine.plans._certificate_verdict``).  The search then skips the branches that keep a copy in
    hand; they hold no lay-down, so the result is the same."""
    return best_lay_down_known(hand, rv, round_idx, min_points, must, np.bool_(False), best_stack, best,
                               ws)


@njit(_nrt=False, specialise_constants=False)
def best_lay_down_known(hand, rv, round_idx, min_points, must, in_reach, best_stack, best, ws):
    """``best_lay_down_must``, also told whether the caller found the contract in reach already
    (``contract_out_of_reach`` said no: the engine asks it first of every draw), so that the search
    does not ask its first test again.  (Callers pass a bool, never a literal: a literal compiles
    a copy of the search's set-up for it.)"""
    prm = ws[_WS_PRM:_WS_NATVAL]
    fill_params(rv, round_idx, prm)
    prm[P_MUST] = must
    if min_points >= 0:
        prm[P_CONTRACT] = 0
        prm[P_T] = 0
        prm[P_F] = 0
        prm[P_MINPTS] = min_points
    best[B_USED] = -1
    best[B_N] = 0
    best[B_VAL] = -1
    best[B_NODES] = 0
    wbest = ws[_WS_BEST:_WS_STACK]      # the search's own (``_dfs``), handed out by ``_best_out``
    for k in range(4):
        wbest[k] = best[k]
    contract = prm[P_CONTRACT] == 1
    if contract and prm[P_EXTRA] == 0 and prm[P_DIST_RANK] == 1 and prm[P_DIST_SUIT] == 1:
        if not in_reach and _contract_needs_more_jokers(hand, prm, rv):
            return -1
    pen = rv[R_PENALTY:R_PENALTY + 53]
    natval = ws[_WS_NATVAL:_WS_POOL]
    pool = ws[_WS_POOL:_WS_BEST]
    stack = c_view(ws[_WS_STACK:_WS_SCRATCH], (2 * MAX_MELDS, REC))
    zero = np.int64(0)
    if (contract and prm[P_EXTRA] == 0 and prm[P_DIST_RANK] == 1 and prm[P_DIST_SUIT] == 1
            and prm[P_SET_MAX] < 0 and prm[P_T] <= _DP_T and hand[52] <= _DP_J):
        # runs first, sets in closed form: cheap enough that the unmeldable-card filter below
        # would cost more than it saves
        if prm[P_T] > 0 and prm[P_F] > 0 and prm[P_JSET] == 0 and hand[52] <= 2:
            if not _runs_then_sets_fit(hand, prm, np.int64(hand[52])):
                return -1
        rem_pen = zero      # never a literal 0: see the note above ``dfs._dfs``
        for t in range(52):
            pool[t] = hand[t]
            rem_pen += hand[t] * pen[t]
        pool[52] = 0
        _run_bounds(hand, pen, prm, rv)
        # (with no runs to choose the root is the only node, and nothing found yet to prune by)
        prm[P_UB_SETS] = 0 if prm[P_F] == 0 else _top_rank_penalty(hand, pen, prm[P_T],
                                                                    prm[P_SET_MIN_NAT])
        dp = c_view(ws[_WS_DP:_WS_PICK], (_DP_T + 1, _DP_J + 1))
        pick = c_view(ws[_WS_PICK:WS_LEN], (13, _DP_T + 1, _DP_J + 1))
        rc_lo, rc_hi = rank_count_words(hand)
        _runs_first(zero, np.int64(hand[52]), zero, rem_pen, zero, rc_lo, rc_hi, zero, ws, stack, rv, dp,
                    pick)
        return _best_out(ws, stack, best_stack, best)
    rem_pen = zero
    rem_cnt = zero
    rem_val = zero
    pool[52] = 0
    # natural values by rank.  Naturals no meld could hold stay in hand, out of the search (which
    # also tightens its bound): ``_fits_some_meld``, with each suit's run reach computed once (a
    # held card's position is in its suit's ``run_mask`` already)
    jk = np.int64(hand[52])
    for r in range(13):
        natval[r] = _natural_value(rv, r)
    set_ranks = np.int64(0)             # (the set test is the same for each held card of a rank)
    for r in range(13):
        if _set_fits(hand, r, jk, prm[P_SET_MIN_NAT], prm[P_SET_MIN], prm[P_SET_DUP]):
            set_ranks |= np.int64(1) << r
    for t in range(52):
        pool[t] = 0
    held = np.int64(0)
    for s in range(4):
        pm = run_mask(hand, s, prm[P_LO_MIN], prm[P_HI_MAX])
        reach = _run_reach(pm, jk, prm[P_RUN_MIN], prm[P_LO_MIN], prm[P_HI_MAX] - prm[P_RUN_MIN] + 1,
                           prm[P_ADJ_OK])
        # the ranks of suit s held (positions 2..13 are ranks 1..12, an ace at 1 or 14) that some
        # run or set could hold: only these enter the pool, visited by their bits (``_dfs`` reads
        # natval only for pool types, or multiplied by a count of zero)
        ranks = ((pm >> 1) & 0x1FFE) | (1 if hand[s * 13] > 0 else 0)
        fit = ((reach >> 1) & 0x1FFE) | (1 if (reach & ((1 << 1) | (1 << 14))) != 0 else 0)
        keep = ranks & (fit | set_ranks)
        held |= keep << (s * 13)
        while keep != 0:
            r = lowest_bit(keep)
            keep &= keep - 1
            t = s * 13 + r
            c = np.int64(hand[t])
            natval[t] = natval[r]
            pool[t] = c
            rem_pen += c * pen[t]
            rem_cnt += c
            rem_val += c * natval[r]
    prm[P_HELD] = held
    if not contract and rem_val + hand[52] * prm[P_MAXJVAL] < prm[P_MINPTS]:
        return -1
    _dfs(zero, zero, np.int64(hand[52]), zero, rem_pen, rem_cnt, zero, rem_val, zero, zero, zero, zero,
         zero, ws, stack, rv)
    return _best_out(ws, stack, best_stack, best)


@njit(_nrt=False)
def _best_out(ws, stack, best_stack, best):
    """Hand the search's result to the caller: its best[] (in ``ws``) and the best lay-down's
    records (``stack``'s rows from ``MAX_MELDS`` on).  Returns the penalty placed, -1 if none."""
    wbest = ws[_WS_BEST:_WS_STACK]
    for k in range(4):
        best[k] = wbest[k]
    for i in range(wbest[B_N]):
        for k in range(REC):
            best_stack[i, k] = stack[MAX_MELDS + i, k]
    return best[B_USED]


@njit
def best_lay_down_batch(hands, rv, round_idx, out_used):
    """Batch entry point (benchmarks, engine): best placed penalty per hand, -1 if none."""
    best_stack = np.zeros((MAX_MELDS, REC), dtype=np.int64)
    best = np.zeros(4, dtype=np.int64)
    ws = new_workspace()
    for i in range(hands.shape[0]):
        out_used[i] = best_lay_down_ws(hands[i], rv, round_idx, best_stack, best, ws)
