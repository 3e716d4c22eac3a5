"""Cheap necessary conditions, asked before any search: can the contract still be reached with the
hand's jokers (``contract_out_of_reach``), and can a natural join any meld with the hand's cards
(``natural_meldable``)?  Both are filters, never answers: the engine skips a search only when they
say no, and tests check that they say yes whenever the search melds.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.bits import lowest_bit, popcount, rank_count_words, ranks_above_words
from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import (
    OPENING_MODE_CONTRACT, R_ACE_HIGH, R_ACE_LOW, R_CONTRACT_ALLOW_EXTRA_MELDS, R_CONTRACT_DISTINCT_RUN_SUITS,
    R_CONTRACT_DISTINCT_SET_RANKS, R_OPENING_MODE, R_ROUND_BASE, R_RUN_ADJACENT_JOKERS, R_RUN_MIN_SIZE,
    R_SET_ALLOW_DUPLICATE_SUIT, R_SET_MIN_NATURALS, R_SET_MIN_SIZE, ROUND_STRIDE,
)

from .positions import fewest_missing_in_runs, run_mask
from .workspace import P_F, P_SET_MIN, P_SET_MIN_NAT, P_T


@njit(_nrt=False)
def _contract_needs_more_jokers(hand, prm, rv):
    """Does every lay-down meeting the contract need more jokers than ``hand`` holds?

    A lower bound on the jokers one needs, against the jokers held: runs: each of the F distinct
    suits needs a run window with at most that many missing naturals; sets: T distinct ranks, a
    rank held only twice needs one joker.  Borrowing and shared naturals only ever need more
    jokers."""
    return _needs_more_jokers(hand, prm[P_T], prm[P_F], rv, prm[P_SET_MIN], prm[P_SET_MIN_NAT])


@njit(_nrt=False, inline="always")
def _needs_more_jokers(hand, T, F, rv, smin, snat):
    """``_contract_needs_more_jokers`` from the rule values themselves (any integer counts).  The
    sets are counted first: when they alone need more jokers than are held, the runs (four suits'
    windows) need not be looked at."""
    jk = hand[52]
    sets = _sets_need(hand, T, smin, snat)
    if sets > jk or F == 0:
        return sets > jk
    return sets + fewest_missing_in_runs(hand, F, rv) > jk


@njit(_nrt=False, inline="always")
def _sets_need(hand, T, smin, snat):
    """Fewest jokers T sets of distinct ranks need from ``hand`` (99 if fewer than T ranks hold
    ``snat`` naturals): a rank short of ``smin`` naturals takes at least one."""
    if T == 0:
        return 0
    lo, hi = rank_count_words(hand)
    return _sets_need_words(lo, hi, T, smin, snat)


@njit(_nrt=False, inline="always")
def _sets_need_words(rc_lo, rc_hi, T, smin, snat):
    """``_sets_need`` from the naturals per rank (``bits.rank_count_words``' layout)."""
    full = ranks_above_words(rc_lo, rc_hi, smin - 1)
    usable = ranks_above_words(rc_lo, rc_hi, snat - 1)
    return max(T - full, 0) if usable >= T else 99


@njit(_nrt=False)
def contract_out_of_reach(hand, rv, round_idx):
    """Does the round's contract need more jokers than ``hand`` (counts by card type, any integer
    type) holds?  Then it has no opening: this is the search's own first test
    (``_contract_needs_more_jokers``), asked without the search's set-up, for callers that ask about
    every draw of a player who has not laid down (most such hands are far from the contract).
    False whenever the test does not apply (points openings, extra melds, repeated set ranks or
    run suits)."""
    if (rv[R_OPENING_MODE] != OPENING_MODE_CONTRACT or rv[R_CONTRACT_ALLOW_EXTRA_MELDS] != 0
            or rv[R_CONTRACT_DISTINCT_SET_RANKS] != 1 or rv[R_CONTRACT_DISTINCT_RUN_SUITS] != 1):
        return False
    base = R_ROUND_BASE + round_idx * ROUND_STRIDE + 5
    return _needs_more_jokers(hand, rv[base], rv[base + 1], rv, rv[R_SET_MIN_SIZE],
                              rv[R_SET_MIN_NATURALS])


@njit(_nrt=False, inline="always")
def _set_fits(hand, r, jk, set_min_nat, set_min, set_dup):
    """Could a held natural of rank index r sit in a set with the hand's other naturals of its rank
    and its jokers?  The set holds one natural per suit holding the rank, or every copy when a set
    may repeat a suit (the same for every held card of the rank)."""
    n = 0
    for s2 in range(4):
        c = np.int64(hand[s2 * 13 + r])
        n += c if set_dup != 0 else min(c, 1)
    return n >= set_min_nat and n + jk >= set_min


@njit(_nrt=False, inline="always")
def _run_reach(held_s, jk, w, lo_from, lo_to, adj_ok):
    """Run positions of a suit covered by some window of ``w`` positions starting at
    ``lo_from..lo_to`` whose gaps (positions not in ``held_s``) jokers can fill: at most ``jk`` of
    them, none adjacent unless ``adj_ok``."""
    win = (np.int64(1) << w) - 1
    reach = np.int64(0)
    for lo in range(lo_from, lo_to + 1):
        gaps = (win << lo) & ~held_s
        if popcount(gaps) <= jk and (adj_ok == 1 or (gaps & (gaps >> 1)) == 0):
            reach |= win << lo
    return reach


@njit(_nrt=False, inline="always")
def _positions_of(r, lo_min, hi_max):
    """Run positions a natural of rank index r can take: an ace low and/or high where allowed."""
    if r != 0:
        return np.int64(1) << (r + 1)
    return (np.int64(1 << 1) if lo_min == 1 else np.int64(0)) | (np.int64(1 << 14) if hi_max == 14
                                                                 else np.int64(0))


@njit(_nrt=False, inline="always")
def _fits_some_meld(hand, t, held_s, set_min_nat, set_min, set_dup, run_min, lo_min, hi_max, adj_ok):
    """Can natural t (in this hand) sit in any meld at all, with the hand's other cards and its
    jokers (``hand[52]``)?  A set needs enough partners of its rank; a run some window of
    ``run_min`` positions through t with no more gaps than jokers.  ``held_s``: the run positions
    of t's suit held (``positions.run_mask``)."""
    jk = np.int64(hand[52])
    if _set_fits(hand, t % 13, jk, set_min_nat, set_min, set_dup):
        return True
    at = _positions_of(t % 13, lo_min, hi_max)
    while at != 0:                       # (an ace: low and high apart, each counted as held)
        p = lowest_bit(at)
        at &= at - 1
        # only the windows through p
        reach = _run_reach(held_s | (np.int64(1) << p), jk, run_min, max(lo_min, p - run_min + 1),
                           min(p, hi_max - run_min + 1), adj_ok)
        if (reach >> p) & 1:
            return True
    return False


@njit(_nrt=False, specialise_constants=False)
def natural_meldable(hand, rv, t):
    """``_fits_some_meld`` under the rule vector: False means no lay-down of ``hand`` (int64 or int8
    counts by card type, jokers at 52) can place natural ``t`` (one it holds), so the search need
    not run for a hand that differs from one without a lay-down only by t
    (``engine.plans._certificate_verdict``)."""
    lo_min = 1 if rv[R_ACE_LOW] == 1 else 2
    hi_max = 14 if rv[R_ACE_HIGH] == 1 else 13
    return natural_meldable_held(hand, rv, t, run_mask(hand, t // 13, lo_min, hi_max))


@njit(_nrt=False, inline="always")
def natural_meldable_held(hand, rv, t, held_s):
    """``natural_meldable`` given ``held_s``, the run positions of t's suit the hand holds
    (``positions.run_mask``; t's own position may be missing): a caller asking about many cards
    of one hand reads each suit once."""
    lo_min = 1 if rv[R_ACE_LOW] == 1 else 2
    hi_max = 14 if rv[R_ACE_HIGH] == 1 else 13
    return _fits_some_meld(hand, t, held_s, rv[R_SET_MIN_NATURALS], rv[R_SET_MIN_SIZE],
                           rv[R_SET_ALLOW_DUPLICATE_SUIT], rv[R_RUN_MIN_SIZE], lo_min, hi_max,
                           rv[R_RUN_ADJACENT_JOKERS])
