"""Seatings balanced for seat and order: the designs a duplicate tournament plays every deal in.

Rotating a lineup around the table keeps its cyclic order: every entrant always sits just after the
same neighbour, and in Kalooki the player before you decides what you may pick up and call, so
identical strategies came out points apart by where they sat (issue 40).  A *balanced* design is a
set of seatings of the ``n`` places of a table (entrant ``table[i]`` at place ``i``) in which

* every place sits in every seat equally often, and
* every ordered pair of places (i, j) sits at every relative position equally often: ``j`` one
  seat after ``i`` in the order of play, two seats after, ..., ``n - 1`` seats after.

A design that puts every ordered pair of places on every ordered pair of seats equally often has
both properties (the seats of ``i`` and ``j`` then range uniformly over the ordered seat pairs, and
each relative position is ``n`` of them), and a set of permutations that is *sharply 2-transitive*
does so with one permutation per ordered seat pair, ``n (n - 1)`` in all, which is also the least
any balanced design can have (a multiple of ``n`` for the seats, of ``n - 1`` for the positions):

* ``n`` a prime power (2, 3, 4, 5): the affine maps ``x -> a x + b`` of the field with ``n``
  elements (``a != 0``), ``n (n - 1)`` seatings: 2, 6, 12, 20.
* ``n = 6``: no sharply 2-transitive set of degree 6 exists (it would give a projective plane of
  order 6, which Tarry's theorem rules out).  The Mobius maps ``x -> (a x + b) / (c x + d)`` of the
  projective line over the field of 5 (six points) form a sharply 3-transitive group, which puts
  every ordered pair of places on every ordered pair of seats 4 times: 120 seatings.  (A design
  balanced only for seats and relative positions might do with 30 or 60; none is known here.)

``check_balanced`` verifies both properties by counting, and the tests run it for every size.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

__all__ = ["balanced_seatings", "seat_counts", "position_counts", "check_balanced", "MAX_PLAYERS"]

MAX_PLAYERS = 6

# multiplication in GF(4) = GF(2)[x] / (x^2 + x + 1), elements 0, 1, x, x + 1 as 0..3; addition is xor
_GF4_MUL = np.array([[0, 0, 0, 0], [0, 1, 2, 3], [0, 2, 3, 1], [0, 3, 1, 2]], dtype=np.int64)


def _affine(q: int) -> np.ndarray:
    """The maps ``x -> a x + b`` of GF(q), ``q`` a prime or 4, as rows of images."""
    x = np.arange(q)
    rows = []
    for a in range(1, q):
        for b in range(q):
            if q == 4:
                rows.append(_GF4_MUL[a, x] ^ b)
            else:
                rows.append((a * x + b) % q)
    return np.array(rows, dtype=np.int64)


def _mobius_on_six() -> np.ndarray:
    """PGL(2, 5) on the projective line {0, .., 4, infinity = 5}: 120 permutations."""
    p, inf = 5, 5
    inv = {v: pow(v, -1, p) for v in range(1, p)}
    seen = set()
    for a, b, c, d in itertools.product(range(p), repeat=4):
        if (a * d - b * c) % p == 0:
            continue
        img = []
        for x in range(6):
            if x == inf:
                num, den = a, c
            else:
                num, den = (a * x + b) % p, (c * x + d) % p
            img.append(inf if den == 0 else num * inv[den] % p)
        seen.add(tuple(img))
    return np.array(sorted(seen), dtype=np.int64)


@functools.cache
def _design(n: int) -> np.ndarray:
    if n == 1:
        return np.zeros((1, 1), dtype=np.int64)
    if n in (2, 3, 4, 5):
        d = _affine(n)
    elif n == 6:
        d = _mobius_on_six()
    else:
        raise ValueError(f"balanced seatings for 1..{MAX_PLAYERS} players, not {n}")
    d.flags.writeable = False
    return d


def balanced_seatings(n: int) -> np.ndarray:
    """The design for ``n`` seats: ``int64[S, n]``, row ``r`` giving the place (the index into the
    table of entrants) sitting in each seat in seating ``r``; the first row is the table as given.
    Read-only; ``S`` is 2, 6, 12, 20, 120 for 2..6 seats."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an int, got {type(n).__name__}")
    return _design(int(n))


def seat_counts(design: np.ndarray) -> np.ndarray:
    """``int64[n, n]``: how often place ``i`` sits in seat ``s``."""
    design = np.asarray(design)
    S, n = design.shape
    out = np.zeros((n, n), dtype=np.int64)
    np.add.at(out, (design, np.broadcast_to(np.arange(n), (S, n))), 1)
    return out


def position_counts(design: np.ndarray) -> np.ndarray:
    """``int64[n, n, n]``: how often place ``j`` sits ``d`` seats after place ``i`` in the order of
    play (``[i, j, d]``; ``d = 0`` only for ``i = j``)."""
    design = np.asarray(design)
    S, n = design.shape
    seat_of = np.argsort(design, axis=1)                        # [r, place] -> seat
    d = (seat_of[:, None, :] - seat_of[:, :, None]) % n          # [r, i, j]
    out = np.zeros((n, n, n), dtype=np.int64)
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    for r in range(S):
        np.add.at(out, (i, j, d[r]), 1)
    return out


def check_balanced(design: np.ndarray) -> None:
    """Raise ``ValueError`` unless every row is a permutation, every place sits in every seat
    equally often and every ordered pair of places at every relative position equally often."""
    design = np.asarray(design)
    if design.ndim != 2:
        raise ValueError(f"a design is [seatings, seats], got shape {design.shape}")
    S, n = design.shape
    if not (np.sort(design, axis=1) == np.arange(n)).all():
        raise ValueError("a seating is not a permutation of the places")
    seats = seat_counts(design)
    if (seats != S // n).any() or S % n:
        raise ValueError(f"seats unbalanced: counts {sorted(set(seats.ravel().tolist()))} over {S} seatings")
    if n < 2:
        return
    pos = position_counts(design)
    off = pos[~np.eye(n, dtype=bool)][:, 1:]                    # [ordered pair, position 1..n-1]
    if S % (n - 1) or (off != S // (n - 1)).any():
        raise ValueError(f"relative positions unbalanced: counts {sorted(set(off.ravel().tolist()))}")
