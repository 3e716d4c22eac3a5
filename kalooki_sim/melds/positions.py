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


@njit(_nrt=False)
def fewest_missing_in_runs(hand, n_suits_wanted, w, lo_min, hi_max):
    """Sum over the ``n_suits_wanted`` best suits of the fewest naturals missing from any run of
    ``w`` positions in ``lo_min..hi_max`` (``hand``: counts by card type).

    Used as the run part of a lower bound on the jokers a contract needs (meld search) and of the
    greedy agent's distance to its contract."""
    m0 = m1 = m2 = m3 = 99
    for s in range(4):
        best = 99
        m = 0
        for q in range(lo_min, hi_max + 1):
            if hand[pos_type(s, q)] == 0:
                m += 1
            if q - lo_min >= w and hand[pos_type(s, q - w)] == 0:
                m -= 1
            if q - lo_min >= w - 1 and m < best:
                best = m
        if best < m0:
            m0, m1, m2, m3 = best, m0, m1, m2
        elif best < m1:
            m1, m2, m3 = best, m1, m2
        elif best < m2:
            m2, m3 = best, m2
        elif best < m3:
            m3 = best
    total = 0
    if n_suits_wanted > 0:
        total += m0
    if n_suits_wanted > 1:
        total += m1
    if n_suits_wanted > 2:
        total += m2
    if n_suits_wanted > 3:
        total += m3
    return total
