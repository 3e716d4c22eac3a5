"""Run positions shared by the meld search, the engine and the agents (compiled helpers).

Position 1 is a low ace, 2..13 the two to the king, 14 a high ace; the card type of a position in
suit s is ``s * 13 + rank_index`` (ace = rank index 0 at both ends).
"""

from __future__ import annotations

from ..jit import njit


@njit(_nrt=False)
def pos_type(s, q):
    """Card type at run position q (1..14) of suit s."""
    return s * 13 + (0 if (q == 1 or q == 14) else q - 1)


@njit(_nrt=False, inline="always")
def best_window_covers(hand, s, w, lo_min, hi_max, q0):
    """(``suit_fewest_missing``, does a window attaining it cover position ``q0``?) in one pass:
    a card added at an empty ``q0`` lowers the suit's fewest missing exactly when one does."""
    best = 99
    covered = False
    m = 0
    for q in range(lo_min, hi_max + 1):
        if hand[pos_type(s, q)] == 0:
            m += 1
        if q - lo_min >= w and hand[pos_type(s, q - w)] == 0:
            m -= 1
        if q - lo_min >= w - 1:
            c = q - w + 1 <= q0 and q0 <= q
            if m < best:
                best = m
                covered = c
            elif m == best and c:
                covered = True
    return best, covered


@njit(_nrt=False, inline="always")
def suit_fewest_missing(hand, s, w, lo_min, hi_max):
    """Fewest naturals of suit ``s`` missing from any run of ``w`` positions in ``lo_min..hi_max``
    (``hand``: counts by card type; 99 if no window fits)."""
    return best_window_covers(hand, s, w, lo_min, hi_max, -1)[0]


@njit(_nrt=False)
def sum_smallest4(a0, a1, a2, a3, k):
    """Sum of the ``k`` (0..4) smallest of four values."""
    if a1 < a0:
        a0, a1 = a1, a0
    if a3 < a2:
        a2, a3 = a3, a2
    if a2 < a0:
        a0, a2 = a2, a0
    if a3 < a1:
        a1, a3 = a3, a1
    if a2 < a1:
        a1, a2 = a2, a1
    t = 0
    if k > 0:
        t += a0
    if k > 1:
        t += a1
    if k > 2:
        t += a2
    if k > 3:
        t += a3
    return t


@njit(_nrt=False)
def fewest_missing_in_runs(hand, n_suits_wanted, w, lo_min, hi_max):
    """Sum over the ``n_suits_wanted`` best suits of ``suit_fewest_missing``.

    Used as the run part of a lower bound on the jokers a contract needs (meld search) and of the
    greedy agent's distance to its contract."""
    return sum_smallest4(suit_fewest_missing(hand, 0, w, lo_min, hi_max),
                         suit_fewest_missing(hand, 1, w, lo_min, hi_max),
                         suit_fewest_missing(hand, 2, w, lo_min, hi_max),
                         suit_fewest_missing(hand, 3, w, lo_min, hi_max), n_suits_wanted)
