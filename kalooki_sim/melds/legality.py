"""Compiled legality and value of one meld (docs/meld-semantics.md), on count vectors.

A meld arrives as ``nat[52]`` (natural counts), ``n_free`` undeclared jokers and ``decl`` (the
natural type each declared joker stands for).  The answer is the best opening value over the legal
meanings of the asked kind, or -1 when no meaning fits, so one kernel serves both "is it legal?"
and "what is it worth?".
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import (
    R_ACE_HIGH, R_ACE_LOW, R_ALLOW_ALL_JOKER_MELD, R_ALLOW_BOTH_ACES_IN_RUN, R_JOKER_SET_MELD_VALUE, R_MELD_VALUE,
    R_N_DECKS, R_N_JOKERS, R_RUN_ADJACENT_JOKERS, R_RUN_MIN_NATURALS, R_RUN_MIN_SIZE, R_SET_ALLOW_DUPLICATE_SUIT,
    R_SET_MAX_SIZE, R_SET_MIN_NATURALS, R_SET_MIN_SIZE,
)

KIND_ANY = 0
KIND_SET = 1
KIND_RUN = 2


@njit
def run_max_len(rv) -> int:
    both = rv[R_ACE_LOW] == 1 and rv[R_ACE_HIGH] == 1 and rv[R_ALLOW_BOTH_ACES_IN_RUN] == 1
    return 14 if both else 13


@njit
def set_value(nat, n_free, decl, rv) -> int:
    """Value of the meld read as a set, -1 if it is not one."""
    n_nat = 0
    rank = -1
    for t in range(52):
        c = nat[t]
        if c > 0:
            if rank >= 0 and t % 13 != rank:
                return -1
            rank = t % 13
            n_nat += c
    for i in range(decl.shape[0]):
        r = decl[i] % 13
        if rank >= 0 and r != rank:
            return -1
        rank = r
    n = n_nat + n_free + decl.shape[0]
    if n_nat < rv[R_SET_MIN_NATURALS] or n < rv[R_SET_MIN_SIZE]:
        return -1
    if rv[R_SET_MAX_SIZE] >= 0 and n > rv[R_SET_MAX_SIZE]:
        return -1
    if rv[R_SET_ALLOW_DUPLICATE_SUIT] == 0:
        if n > 4:
            return -1
        seen = np.zeros(4, dtype=np.int64)
        for s in range(4):
            seen[s] = nat[s * 13 + rank]
            if seen[s] > 1:
                return -1
        for i in range(decl.shape[0]):
            s = decl[i] // 13
            if seen[s] > 0:
                return -1
            seen[s] = 1
    pos = 14 if rank == 0 else rank + 1
    return n * rv[R_MELD_VALUE + pos]


@njit
def run_value(nat, n_free, decl, rv) -> int:
    """Value of the meld read as a run, -1 if it is not one.  Aces (natural or declared) try both ends."""
    suit = -1
    n_nat = 0
    for t in range(52):
        c = nat[t]
        if c > 0:
            if suit >= 0 and t // 13 != suit:
                return -1
            suit = t // 13
            n_nat += c
    for i in range(decl.shape[0]):
        s = decl[i] // 13
        if suit >= 0 and s != suit:
            return -1
        suit = s
    n = n_nat + n_free + decl.shape[0]
    if n_nat < rv[R_RUN_MIN_NATURALS] or n < rv[R_RUN_MIN_SIZE] or n > run_max_len(rv):
        return -1
    occ = np.zeros(15, dtype=np.int64)
    jok = np.zeros(15, dtype=np.int64)   # declared-joker positions (never adjacent to each other)
    n_aces = 0
    n_decl_aces = 0
    for r in range(1, 13):
        c = nat[suit * 13 + r]
        if c > 1:
            return -1
        occ[r + 1] += c
    n_aces = nat[suit * 13]
    for i in range(decl.shape[0]):
        r = decl[i] % 13
        if r == 0:
            n_decl_aces += 1
        else:
            if occ[r + 1] > 0:
                return -1
            occ[r + 1] = 1
            jok[r + 1] = 1
    if n_aces + n_decl_aces > 2:
        return -1
    best = -1
    # each ace (natural first, then declared) goes low or high; try every assignment
    total_aces = n_aces + n_decl_aces
    for low_mask in range(1 << total_aces):
        lows = 0
        for b in range(total_aces):
            if (low_mask >> b) & 1:
                lows += 1
        highs = total_aces - lows
        if lows > 1 or highs > 1:
            continue
        if lows == 1 and rv[R_ACE_LOW] == 0:
            continue
        if highs == 1 and rv[R_ACE_HIGH] == 0:
            continue
        occ[1] = lows
        occ[14] = highs
        # which end holds a declared (joker) ace matters for adjacency: the bit order puts naturals first
        jlow = 0
        jhigh = 0
        for b in range(n_aces, total_aces):
            if (low_mask >> b) & 1:
                jlow = 1
            else:
                jhigh = 1
        # positions fixed by naturals only, for the adjacency test on jokers
        nat_occ = occ.copy()
        for p in range(2, 14):
            if jok[p] == 1:
                nat_occ[p] = 0
        if jlow == 1:
            nat_occ[1] = 0
        if jhigh == 1:
            nat_occ[14] = 0
        v = _run_value_with_decl(occ, nat_occ, n, rv)
        if v > best:
            best = v
    return best


@njit
def _run_value_with_decl(occ, nat_occ, n, rv) -> int:
    """Best value over placements of the interval; joker positions = interval minus natural positions."""
    lo_min = 1 if rv[R_ACE_LOW] == 1 else 2
    hi_max = 14 if rv[R_ACE_HIGH] == 1 else 13
    fmin = 15
    fmax = 0
    for p in range(1, 15):
        if occ[p] > 0:
            if p < fmin:
                fmin = p
            fmax = p
    best = -1
    for lo in range(lo_min, hi_max - n + 2):
        hi = lo + n - 1
        if fmin < lo or fmax > hi:
            continue
        if lo == 1 and hi == 14 and rv[R_ALLOW_BOTH_ACES_IN_RUN] == 0:
            continue
        if rv[R_RUN_ADJACENT_JOKERS] == 0:
            ok = True
            for p in range(lo, hi):
                if nat_occ[p] == 0 and nat_occ[p + 1] == 0:
                    ok = False
                    break
            if not ok:
                continue
        v = 0
        for p in range(lo, hi + 1):
            v += rv[R_MELD_VALUE + p]
        if v > best:
            best = v
    return best


@njit
def joker_set_value(nat, n_free, decl, rv) -> int:
    if rv[R_ALLOW_ALL_JOKER_MELD] == 0 or decl.shape[0] > 0:
        return -1
    for t in range(52):
        if nat[t] > 0:
            return -1
    if n_free < 3 or n_free > 4:
        return -1
    return n_free * rv[R_JOKER_SET_MELD_VALUE]


@njit
def meld_best_value(nat, n_free, decl, rv, kind) -> int:
    """Best opening value over the legal meanings of ``kind`` (KIND_ANY/SET/RUN); -1 if none."""
    for t in range(52):
        if nat[t] > rv[R_N_DECKS]:
            return -1
    if n_free + decl.shape[0] > rv[R_N_JOKERS]:
        return -1
    best = -1
    if kind != KIND_RUN:
        v = set_value(nat, n_free, decl, rv)
        if v > best:
            best = v
        v = joker_set_value(nat, n_free, decl, rv)
        if v > best:
            best = v
    if kind != KIND_SET:
        v = run_value(nat, n_free, decl, rv)
        if v > best:
            best = v
    return best
