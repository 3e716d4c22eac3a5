"""The balanced seating designs (``studies.seatings``): balanced for seat and order at every table
size, as small as a balanced design can be where a sharply 2-transitive set exists, and the checker
refuses what rotations alone give."""

import itertools

import numpy as np
import pytest

from kalooki_sim.studies.seatings import (
    MAX_PLAYERS, balanced_seatings, check_balanced, position_counts, seat_counts,
)


@pytest.mark.parametrize("n", range(2, MAX_PLAYERS + 1))
def test_every_size_is_balanced_for_seat_and_order(n):
    d = balanced_seatings(n)
    check_balanced(d)
    S = len(d)
    assert (seat_counts(d) == S // n).all()
    pos = position_counts(d)
    for i, j in itertools.permutations(range(n), 2):
        assert (pos[i, j, 1:] == S // (n - 1)).all()
        assert pos[i, j, 0] == 0
    assert np.array_equal(d[0], np.arange(n))          # the table as given comes first
    assert len({tuple(r) for r in d}) == S              # no seating twice


@pytest.mark.parametrize("n,size", [(2, 2), (3, 6), (4, 12), (5, 20), (6, 120)])
def test_design_sizes(n, size):
    """n (n - 1) is the least a balanced design can have (a multiple of n for the seats, of n - 1
    for the positions), reached for 2..5; 6 has no sharply 2-transitive set (no projective plane
    of order 6), so its design is PGL(2, 5) on the six points of the projective line."""
    assert len(balanced_seatings(n)) == size
    if n <= 5:
        assert size == n * (n - 1)


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_small_designs_are_sharply_two_transitive(n):
    """Every ordered pair of places lands on every ordered pair of seats exactly once."""
    d = balanced_seatings(n)
    seen = {}
    for row in d:
        seat_of = np.argsort(row)
        for i, j in itertools.permutations(range(n), 2):
            key = (i, j, int(seat_of[i]), int(seat_of[j]))
            seen[key] = seen.get(key, 0) + 1
    assert set(seen.values()) == {1} and len(seen) == (n * (n - 1)) ** 2


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_rotations_alone_are_refused(n):
    """The old design: the n rotations keep the cyclic order (every place after the same one)."""
    rot = np.array([np.roll(np.arange(n), -r) for r in range(n)])
    assert (seat_counts(rot) == 1).all()            # the seats were balanced
    with pytest.raises(ValueError, match="relative positions unbalanced"):
        check_balanced(rot)


def test_checker_refuses_non_permutations_and_bad_sizes():
    with pytest.raises(ValueError, match="not a permutation"):
        check_balanced(np.array([[0, 0, 1]]))
    with pytest.raises(ValueError, match="seats unbalanced"):
        check_balanced(np.array([[0, 1, 2], [0, 2, 1]]))
    with pytest.raises(ValueError, match="balanced seatings for"):
        balanced_seatings(7)
    with pytest.raises(TypeError):
        balanced_seatings(4.0)
    with pytest.raises(ValueError):
        balanced_seatings(4)[0, 0] = 3           # read-only: a caller cannot spoil the shared design
