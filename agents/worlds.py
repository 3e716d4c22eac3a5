"""Worlds a seat cannot tell from the real one: the search agent's samples (``agents.search``).

A seat sees its own hand, the table, the discard pile, every hand's size, the stock's size and the
cards each other seat is known to hold (``state.shown``: taken in sight and not put down since).
Everything else -- the rest of the other hands and the stock's order -- is one pool of cards it
cannot place.  ``sample_world`` deals that pool afresh: every other hand keeps its known cards and
its size, the stock its size.

The pool is gathered by card type (counts), never in the order the real cards lie, so the
world drawn for a key is a function of what the seat knows and nothing else: re-dealing the
hidden cards of the real game cannot change it (``tests/test_search.py``).
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rng import rng_below, rng_u64
from kalooki_sim.engine.layout import G_NP, G_SEED, G_STOCK_N, N_TYPES, PS_CERT

__all__ = ["copy_row", "sample_world", "scratch_state"]


@njit
def scratch_state(rows, like):
    """A state of ``rows`` game rows shaped like ``like`` (``StateArrays``), for trying things out."""
    return type(like)(
        np.zeros((rows,) + like.gs.shape[1:], dtype=like.gs.dtype),
        np.zeros((rows,) + like.ps.shape[1:], dtype=like.ps.dtype),
        np.zeros((rows,) + like.hands.shape[1:], dtype=like.hands.dtype),
        np.zeros((rows,) + like.stock.shape[1:], dtype=like.stock.dtype),
        np.zeros((rows,) + like.disc.shape[1:], dtype=like.disc.dtype),
        np.zeros((rows,) + like.disc_by.shape[1:], dtype=like.disc_by.dtype),
        np.zeros((rows,) + like.minfo.shape[1:], dtype=like.minfo.dtype),
        np.zeros((rows,) + like.mcards.shape[1:], dtype=like.mcards.dtype),
        np.zeros((rows,) + like.mas.shape[1:], dtype=like.mas.dtype),
        np.zeros((rows,) + like.plan.shape[1:], dtype=like.plan.dtype),
        np.zeros((rows,) + like.plan_n.shape[1:], dtype=like.plan_n.dtype),
        np.zeros((rows,) + like.hscore.shape[1:], dtype=like.hscore.dtype),
        np.zeros((rows,) + like.hwin.shape[1:], dtype=like.hwin.dtype),
        np.zeros((rows,) + like.work.shape[1:], dtype=like.work.dtype),
        np.zeros((rows,) + like.shown.shape[1:], dtype=like.shown.dtype),
    )


@njit
def copy_row(src, g, dst, r):
    """Row ``g`` of state ``src`` into row ``r`` of ``dst`` (every array)."""
    dst.gs[r] = src.gs[g]
    dst.ps[r] = src.ps[g]
    dst.hands[r] = src.hands[g]
    dst.stock[r] = src.stock[g]
    dst.disc[r] = src.disc[g]
    dst.disc_by[r] = src.disc_by[g]
    dst.minfo[r] = src.minfo[g]
    dst.mcards[r] = src.mcards[g]
    dst.mas[r] = src.mas[g]
    dst.plan[r] = src.plan[g]
    dst.plan_n[r] = src.plan_n[g]
    dst.hscore[r] = src.hscore[g]
    dst.hwin[r] = src.hwin[g]
    dst.work[r] = src.work[g]
    dst.shown[r] = src.shown[g]


@njit(_nrt=False)
def sample_world(state, g, seat, key, pool, counts):
    """Re-deal, in row ``g``, the cards ``seat`` cannot place (module docstring) with random
    stream ``key``; ``pool`` (int64[DECK_MAX]) and ``counts`` (int64[N_TYPES]) are scratch.  The
    row's seed is redrawn too, so a reshuffle of the pile in the world is not the real game's."""
    gs, ps, hands, stock, shown = state.gs, state.ps, state.hands, state.stock, state.shown
    n = gs[g, G_NP]
    ns = gs[g, G_STOCK_N]
    for t in range(N_TYPES):
        counts[t] = 0
    for i in range(ns):
        counts[stock[g, i]] += 1
    for o in range(n):
        if o != seat:
            for t in range(N_TYPES):
                counts[t] += hands[g, o, t] - shown[g, o, t]
    k = 0
    for t in range(N_TYPES):
        for c in range(counts[t]):
            pool[k] = t
            k += 1
    for i in range(k - 1, 0, -1):                   # Fisher-Yates over the pool in type order
        j = rng_below(key, i, i + 1)
        x = pool[i]
        pool[i] = pool[j]
        pool[j] = x
    at = 0
    for o in range(n):
        if o == seat:
            continue
        size = 0
        for t in range(N_TYPES):
            size += hands[g, o, t] - shown[g, o, t]
            hands[g, o, t] = shown[g, o, t]
        for i in range(size):
            hands[g, o, pool[at + i]] += 1
        at += size
        ps[g, o, PS_CERT] = 0                       # the engine's no-lay-down certificate was of the old hand
    for i in range(ns):
        stock[g, i] = pool[at + i]
    gs[g, G_SEED] = np.int64(rng_u64(key, k) >> np.uint64(2))
