"""What the search kernels share: meld records, the rule params unpacked once per call (``P_*``),
the best[] slots and the layout of the caller-owned workspace.

Meld records (int64[8]): kind 0 = set (rank, count per suit x4, jokers), 1 = run (suit, lo, hi,
joker-position bit mask), 2 = joker set (jokers in slot 6).
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import (
    OPENING_MODE_CONTRACT, R_ACE_HIGH, R_ACE_LOW, R_ALLOW_ALL_JOKER_MELD, R_ALLOW_BOTH_ACES_IN_RUN,
    R_CONTRACT_ALLOW_EXTRA_MELDS, R_CONTRACT_DISTINCT_RUN_SUITS, R_CONTRACT_DISTINCT_SET_RANKS, R_JOKER_SET_MELD_VALUE,
    R_MELD_VALUE, R_OPENING_MIN_POINTS, R_OPENING_MODE, R_PENALTY, R_ROUND_BASE, R_RUN_ADJACENT_JOKERS,
    R_RUN_MIN_NATURALS, R_RUN_MIN_SIZE, R_SET_ALLOW_DUPLICATE_SUIT, R_SET_MAX_SIZE, R_SET_MIN_NATURALS, R_SET_MIN_SIZE,
    ROUND_STRIDE,
)

from .legality import run_max_len

MAX_MELDS = 12
REC = 8
K_SET = 0
K_RUN = 1
K_JSET = 2

# prm indices: rule values the search reads at every node, unpacked once per call
P_CONTRACT = 0
P_T = 1
P_F = 2
P_MINPTS = 3
P_SET_MIN = 4
P_SET_MAX = 5
P_SET_MIN_NAT = 6
P_SET_DUP = 7
P_RUN_MIN = 8
P_RUN_MAX = 9
P_RUN_MIN_NAT = 10
P_ADJ_OK = 11
P_LO_MIN = 12
P_HI_MAX = 13
P_BOTH_OK = 14
P_EXTRA = 15
P_DIST_RANK = 16
P_DIST_SUIT = 17
P_PJ = 18
P_JSET = 19
P_JSET_VAL = 20
P_MAXJVAL = 21
P_UB_SETS = 22      # runs-first search: most penalty the contract's sets could hold (whole hand)
P_RUN_UB = 23       # ... and most penalty k more runs in suits s..3 could hold: slot 5 * s + k
                    # (s, k = 0..4; 25 slots, ``_run_bounds``)
P_RUN_JK = 48       # ... and fewest jokers k more runs in suits s..3 need: slot 5 * s + k (25)
P_HELD = 73         # general search: bit t set when the root pool holds natural t
P_MUST = 74         # a natural every lay-down places every copy of (-1: none known)
P_FIT_PM = 75       # ``_runs_then_sets_fit``: each suit's held run positions (4)
P_FIT_TOPS = 79     # ... the byte masks of the ranks sets may use (2), and their number
N_PRM = 82

SET_KEY_BASE = 1 << 40   # set keys sort after every run key

# best[] slots
B_USED = 0
B_N = 1
B_VAL = 2
B_NODES = 3


@njit
def make_params(rv, round_idx):
    prm = np.zeros(N_PRM, dtype=np.int64)
    fill_params(rv, round_idx, prm)
    return prm


@njit(_nrt=False)
def fill_params(rv, round_idx, prm):
    contract = rv[R_OPENING_MODE] == OPENING_MODE_CONTRACT
    prm[P_CONTRACT] = 1 if contract else 0
    prm[P_T] = 0
    prm[P_F] = 0
    if contract:
        base = R_ROUND_BASE + round_idx * ROUND_STRIDE + 5
        prm[P_T] = rv[base]
        prm[P_F] = rv[base + 1]
    prm[P_MINPTS] = rv[R_OPENING_MIN_POINTS]
    prm[P_SET_MIN] = rv[R_SET_MIN_SIZE]
    prm[P_SET_MAX] = rv[R_SET_MAX_SIZE]
    prm[P_SET_MIN_NAT] = rv[R_SET_MIN_NATURALS]
    prm[P_SET_DUP] = rv[R_SET_ALLOW_DUPLICATE_SUIT]
    prm[P_RUN_MIN] = rv[R_RUN_MIN_SIZE]
    prm[P_RUN_MAX] = run_max_len(rv)
    prm[P_RUN_MIN_NAT] = rv[R_RUN_MIN_NATURALS]
    prm[P_ADJ_OK] = rv[R_RUN_ADJACENT_JOKERS]
    prm[P_LO_MIN] = 1 if rv[R_ACE_LOW] == 1 else 2
    prm[P_HI_MAX] = 14 if rv[R_ACE_HIGH] == 1 else 13
    prm[P_BOTH_OK] = rv[R_ALLOW_BOTH_ACES_IN_RUN]
    prm[P_EXTRA] = rv[R_CONTRACT_ALLOW_EXTRA_MELDS]
    prm[P_DIST_RANK] = rv[R_CONTRACT_DISTINCT_SET_RANKS]
    prm[P_DIST_SUIT] = rv[R_CONTRACT_DISTINCT_RUN_SUITS]
    prm[P_PJ] = rv[R_PENALTY + 52]
    prm[P_JSET] = rv[R_ALLOW_ALL_JOKER_MELD]
    prm[P_JSET_VAL] = rv[R_JOKER_SET_MELD_VALUE]
    mx = 0
    for p in range(1, 15):
        if rv[R_MELD_VALUE + p] > mx:
            mx = rv[R_MELD_VALUE + p]
    if prm[P_JSET] == 1 and prm[P_JSET_VAL] > mx:
        mx = prm[P_JSET_VAL]
    prm[P_MAXJVAL] = mx


# workspace layout (int64): rule params, natural values, the pool, best[], meld stack (and the
# best lay-down's records), per-depth scratch
_WS_PRM = 0
_WS_NATVAL = _WS_PRM + N_PRM
_WS_POOL = _WS_NATVAL + 53
_WS_BEST = _WS_POOL + 53              # the search's own best[] (copied out at the end)
_WS_STACK = _WS_BEST + 4              # meld stack, then the best lay-down's records
_WS_SCRATCH = _WS_STACK + 2 * MAX_MELDS * REC
SCRATCH_W = 48
_WS_DP = _WS_SCRATCH + MAX_MELDS * SCRATCH_W
_DP_T = 8           # sets per contract the closed-form set choice handles
_DP_J = 8           # jokers in hand it handles
_WS_PICK = _WS_DP + (_DP_T + 1) * (_DP_J + 1)
WS_LEN = _WS_PICK + 13 * (_DP_T + 1) * (_DP_J + 1)


@njit
def new_workspace():
    """Scratch memory for ``best_lay_down_ws``; callers in hot loops keep one and reuse it."""
    return np.zeros(WS_LEN, dtype=np.int64)
