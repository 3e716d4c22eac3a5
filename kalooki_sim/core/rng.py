"""Counter-based random numbers keyed by ``(seed, game_id, stream)`` for compiled kernels.

Why counter-based: a result must depend only on (rules, seed, game index, policies) — never on
the number of threads, the batch a game sits in, or the order games finish (DESIGN.md §1.3).
numba's ``np.random`` keeps one hidden state per thread, so under ``prange`` the numbers a game
sees depend on scheduling.  Here every random number is a pure function

    u64 = mix(key + (counter + 1) * GAMMA),   key = rng_key(seed, game_id, stream)

(the splitmix64 output function applied to a Weyl sequence), so any game can draw its numbers
independently, in any order, on any thread, and get the same values.

Streams separate the independent uses inside one game (the deal of each hand, each reshuffle of
the discard pile, a random policy, ...); callers choose stream numbers so that they never collide.

All functions are small ``njit`` kernels (LLVM inlines them into callers) and are also callable
from Python; there, pass keys as ``np.uint64(key)`` (a plain Python int above 2**63 cannot be
converted to an already compiled int64 signature).  Integers are handled as ``uint64`` throughout: mixing signed and unsigned
64-bit integers in numba silently promotes to float64, which would ruin the bits.
"""

from __future__ import annotations

import numpy as np

from .jit import njit

__all__ = ["GAMMA", "mix64", "rng_key", "rng_u64", "rng_below", "rng_uniform", "shuffle_prefix"]

GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_S11 = np.uint64(11)


@njit
def mix64(z):
    """splitmix64 finaliser: a bijection on uint64 with full avalanche."""
    z = np.uint64(z)
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit
def rng_key(seed, game_id, stream):
    """Key of one random stream of one game.  Arguments are non-negative integers (< 2**63)."""
    k = mix64(np.uint64(seed) + GAMMA)
    k = mix64(k ^ (np.uint64(game_id) * _M2 + GAMMA))
    return mix64(k ^ (np.uint64(stream) * _M1 + GAMMA))


@njit
def rng_u64(key, counter):
    """The ``counter``-th 64-bit output of the stream ``key``."""
    return mix64(np.uint64(key) + (np.uint64(counter) + np.uint64(1)) * GAMMA)


@njit
def rng_below(key, counter, n):
    """An integer in ``[0, n)`` (``0 < n < 2**32``), multiply-shift on the high 32 bits.

    The bias is at most n / 2**32 (< 4e-8 for a 164-card deck): irrelevant for card games and
    far cheaper than rejection sampling, and it keeps exactly one output per counter.
    """
    hi = rng_u64(key, counter) >> _S32
    return np.int64((hi * np.uint64(n)) >> _S32)


@njit
def rng_uniform(key, counter):
    """A float in ``[0, 1)`` with 53 random bits."""
    return np.float64(rng_u64(key, counter) >> _S11) * (1.0 / 9007199254740992.0)


@njit
def shuffle_prefix(arr, n, key):
    """Fisher-Yates shuffle of ``arr[:n]`` in place, counters 0..n-2 of stream ``key``."""
    c = 0
    for i in range(n - 1, 0, -1):
        j = rng_below(key, c, i + 1)
        c += 1
        tmp = arr[i]
        arr[i] = arr[j]
        arr[j] = tmp
