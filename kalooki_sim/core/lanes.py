"""Lanes of a batch on threads: the one way the project runs a kernel over many games at once.

The drivers (``loop.closed_loop``, ``loop.advance_rows``/``act_rows``, ``engine.batch``) are plain
``nogil`` kernels that take a range of lanes; ``run_lanes`` splits the lanes over
``numba.get_num_threads()`` threads.  Why not ``prange``: numba compiles a parallel kernel's body
as a gufunc of its own and links, optimises and emits the whole closed loop into it and again into
the kernel around it, so every parallel driver cost a cold compile about two extra copies of the
engine (``benchmarks/compile_cost.py``; ``docs/benchmark-history.md``).  A game is a pure function
of (rules, seating, parameters, streams, seed, game id) and each lane owns its state row, so the
split never changes a result.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor

import numba

__all__ = ["run_lanes"]


@functools.cache
def _pool(n_threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=n_threads, thread_name_prefix="kalooki-lanes")


def run_lanes(kernel, n_lanes: int, *args, min_per_thread: int = 1) -> None:
    """``kernel(*args, lo, hi)`` over the lanes ``0 .. n_lanes - 1``, split into contiguous ranges,
    one per thread (at most ``numba.get_num_threads()``, and each range at least
    ``min_per_thread`` lanes: a lockstep step of a few rows is not worth a thread hop)."""
    n_lanes = int(n_lanes)
    threads = max(1, min(numba.get_num_threads(), n_lanes // max(1, int(min_per_thread))))
    if threads == 1:
        kernel(*args, 0, n_lanes)
        return
    cuts = [n_lanes * t // threads for t in range(threads + 1)]
    futures = [_pool(threads).submit(kernel, *args, cuts[t], cuts[t + 1]) for t in range(threads)]
    for f in futures:
        f.result()
