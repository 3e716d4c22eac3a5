"""Run positions shared by the meld search, the engine and the agents (compiled helpers).

Position 1 is a low ace, 2..13 the two to the king, 14 a high ace; the card type of a position in
suit s is ``s * 13 + rank_index`` (ace = rank index 0 at both ends).
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.bits import highest_bit, lowest_bit, positive_bits8
from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import N_WINDOW_MASKS, R_ACE_HIGH, R_ACE_LOW, R_FEWEST, R_WINDOWS

NOT_A_VALUE = 1 << 40       # ``smallest4``'s next value when all four are summed


@njit(_nrt=False)
def pos_type(s, q):
    """Card type at run position q (1..14) of suit s."""
    return s * 13 + (0 if (q == 1 or q == 14) else q - 1)


@njit(_nrt=False, inline="always")
def suit_ranks_held(hand, s):
    """Bit r set for each rank r of suit ``s`` held in ``hand`` (counts by card type): the suit's
    13 counts as two overlapping 8-byte loads (``bits.positive_bits8``)."""
    b = s * 13
    return positive_bits8(hand, b) | (positive_bits8(hand, b + 5) << 5)


@njit(_nrt=False, inline="always")
def run_mask(hand, s, lo_min, hi_max):
    """Run positions of suit ``s`` held in ``hand`` (counts by card type) as bits ``lo_min..hi_max``:
    bit q for position q, an ace at bit 1 when ``lo_min`` is 1 and at bit 14 when ``hi_max`` is 14
    (bits 0 and 15 stay clear)."""
    held = suit_ranks_held(hand, s)
    m = (held & 0x1FFE) << 1
    if lo_min == 1:
        m |= (held & 1) << 1
    if hi_max == 14:
        m |= (held & 1) << 14
    return m


@njit(_nrt=False, inline="always")
def _keep_plane(starts, plane, weight):
    """One step of ``best_windows``' maximum: the starts whose count has this bit, if any (and the
    bit's weight), else all of them (and 0)."""
    x = starts & plane
    if x != 0:
        return x, weight
    return starts, 0


@njit(_nrt=False, inline="always")
def best_windows(pm, w, lo_min, hi_max):
    """The run windows of ``w`` positions within ``lo_min..hi_max`` missing the fewest of the held
    positions ``pm`` (``run_mask``): (fewest missing, 99 if no window fits; the positions every
    such window covers; the positions some such window covers).

    A card added at an empty position q lowers the suit's fewest missing exactly when some best
    window covers q; a held card taken away raises it exactly when every best window covers it.

    Branch-free (a scan of the windows mispredicted its comparisons, about 30 ns a suit): bit a of
    the four bit planes ``p0..p3`` counts the held positions of the window starting at a (a
    bit-sliced adder of ``pm`` shifted by 0..w-1; w <= 14 fits in four planes); the best starts
    are then kept plane by plane from the top, and the windows between the first and the last
    best start are what every best window covers."""
    hi_start = hi_max - w + 1
    if hi_start < lo_min:
        return 99, np.int64(0), np.int64(0)
    p0 = np.int64(0)
    p1 = np.int64(0)
    p2 = np.int64(0)
    p3 = np.int64(0)
    for i in range(w):
        c = pm >> i
        n0 = p0 ^ c
        c &= p0
        p0 = n0
        n1 = p1 ^ c
        c &= p1
        p1 = n1
        n2 = p2 ^ c
        c &= p2
        p2 = n2
        p3 ^= c
    starts = ((np.int64(1) << (hi_start + 1)) - 1) & ~((np.int64(1) << lo_min) - 1)
    starts, h3 = _keep_plane(starts, p3, 8)
    starts, h2 = _keep_plane(starts, p2, 4)
    starts, h1 = _keep_plane(starts, p1, 2)
    starts, h0 = _keep_plane(starts, p0, 1)
    held = h3 + h2 + h1 + h0
    some = np.int64(0)
    for i in range(w):
        some |= starts << i
    every = (((np.int64(1) << (lowest_bit(starts) + w)) - 1)
             & ~((np.int64(1) << highest_bit(starts)) - 1))
    return w - held, every, some


@njit
def window_table(w, lo_min, hi_max):
    """``best_windows`` of every held-position mask, for ``Rules.to_vector()`` (``R_WINDOWS``):
    entry ``pm >> 1`` packs (fewest missing, every, some) as ``b | every << 8 | some << 24``.

    The greedy agent and the engine's contract pre-test ask for a suit's best windows hundreds of
    times a hand, always with the rules' own window length and ace positions: a lookup in the
    rules vector every kernel already receives costs a load where the count costs about 30 cycles.
    A suit's masks use bits 1..14 only, so 2**14 entries cover them all."""
    out = np.empty(N_WINDOW_MASKS, dtype=np.int64)
    for i in range(N_WINDOW_MASKS):
        b, every, some = best_windows(np.int64(i) << 1, w, lo_min, hi_max)
        out[i] = b | (every << 8) | (some << 24)
    return out


def run_tables(w, lo_min, hi_max):
    """The rules vector's tail from ``R_WINDOWS``: ``window_table``, then each entry's fewest
    missing again, 4 bits each (15 for 99: no window fits), 16 to an int64 word (``R_FEWEST``).

    The engine's contract pre-test and greedy's wishes ask for the fewest missing alone several
    times a decision: its 8 KB stay in the first-level cache, where the whole table (128 KB) does
    not (a lookup there was the slowest instruction of greedy's wish)."""
    windows = window_table(w, lo_min, hi_max)
    b = np.minimum(windows & 255, 15).astype(np.uint64).reshape(-1, 16)
    words = np.zeros(b.shape[0], dtype=np.uint64)
    for i in range(16):
        words |= b[:, i] << np.uint64(4 * i)
    return np.concatenate([windows, words.view(np.int64)])


@njit(_nrt=False, inline="always")
def windows_of(rv, pm):
    """``best_windows(pm, run_min_size, lo_min, hi_max)`` of the rules ``rv``, from their table."""
    e = rv[R_WINDOWS + (pm >> 1)]
    return e & 255, (e >> 8) & 0xFFFF, (e >> 24) & 0xFFFF


@njit(_nrt=False, inline="always")
def fewest_of(rv, pm):
    """``windows_of(rv, pm)[0]``: the fewest missing alone, from its own small table
    (``run_tables``: 4 bits a mask, 15 standing for 99)."""
    x = (rv[R_FEWEST + (pm >> 5)] >> (((pm >> 1) & 15) << 2)) & 15
    return x + ((x + 1) >> 4) * 84


@njit(_nrt=False, inline="always")
def suit_mask(hand, s, rv):
    """``run_mask`` with the ace positions of the rules ``rv``."""
    return run_mask(hand, s, 1 if rv[R_ACE_LOW] == 1 else 2, 14 if rv[R_ACE_HIGH] == 1 else 13)


@njit(_nrt=False, inline="always")
def best_window_covers(hand, s, rv, q0):
    """(``suit_fewest_missing``, does a window attaining it cover position ``q0``?): a card added
    at an empty ``q0`` lowers the suit's fewest missing exactly when one does."""
    best, _, some = windows_of(rv, suit_mask(hand, s, rv))
    return best, q0 >= 0 and ((some >> q0) & 1) == 1


@njit(_nrt=False, inline="always")
def suit_fewest_missing(hand, s, rv):
    """Fewest naturals of suit ``s`` missing from any run window of the rules ``rv`` (``hand``:
    counts by card type; 99 if no window fits)."""
    return fewest_of(rv, suit_mask(hand, s, rv))


@njit(_nrt=False)
def smallest4(a0, a1, a2, a3, k):
    """``(sum of the k (0..4) smallest of four values, the (k + 1)-th smallest)``, the second
    ``NOT_A_VALUE`` when k is 4.  The next value tells what raising one of the four by one does
    to the sum: it grows by one exactly when that value is below the next (``agents.compiled``'s
    shortfall workspace asks this of each suit, after one sort)."""
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
    nxt = a0 if k == 0 else a1 if k == 1 else a2 if k == 2 else a3 if k == 3 else NOT_A_VALUE
    return t, nxt


@njit(_nrt=False)
def sum_smallest4(a0, a1, a2, a3, k):
    """Sum of the ``k`` (0..4) smallest of four values."""
    return smallest4(a0, a1, a2, a3, k)[0]


@njit(_nrt=False)
def fewest_missing_in_runs(hand, n_suits_wanted, rv):
    """Sum over the ``n_suits_wanted`` best suits of ``suit_fewest_missing``.

    Used as the run part of a lower bound on the jokers a contract needs (meld search) and of the
    greedy agent's distance to its contract."""
    return sum_smallest4(suit_fewest_missing(hand, 0, rv), suit_fewest_missing(hand, 1, rv),
                         suit_fewest_missing(hand, 2, rv), suit_fewest_missing(hand, 3, rv),
                         n_suits_wanted)
