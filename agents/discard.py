"""Greedy's discard: the natural whose loss hurts the hand least (shortfall after the discard,
then usefulness, then the highest penalty), computed for all held naturals at once as bit masks.

Kept out of ``greedy`` because it is the largest and hottest part of a decision: a card at a time
it cost about 25 cycles a card, the masks a few per hand.  ``_discard_fallback`` covers the rare
turn where neither of the two cards picked is legal.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.bits import float_bits, lowest_bit, twice_bits8
from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import R_ACE_HIGH, R_ACE_LOW, R_PENALTY, R_SET_ALLOW_DUPLICATE_SUIT
from kalooki_sim.engine.layout import A_DISCARD, A_END_TURN, JOKER, N_ACTIONS
from kalooki_sim.melds.positions import run_mask

from .known import is_legal
from .measures import (
    _SFW_COV, _SFW_DSET, _SFW_PM, _SFW_RUN_DROP, _SFW_RUN_SAME, _SFW_SB, _SFW_SB_ACE, _SFW_U_GAPW, _SFW_U_ORDER,
    sf_prepare, shortfall_with, card_usefulness, contract_shortfall,
)

# Greedy's discard pick works on the held naturals as bit masks, four 16-bit lanes to a word:
# natural (s, r) is bit 16 * s + r (suit-major like the card types, so the lowest bit of a mask is
# its first card type).  A lane holds the suit's ranks, or (``_suit_lanes``) its run positions.
_LANE_BIT0 = 0x0001000100010001       # bit 0 of each lane (the aces, in rank lanes)
_LANE_RANKS = 0x1FFE1FFE1FFE1FFE      # bits 1..12 of each lane (the ranks 2..K)
_LANE_COPY = 0x0001000100010001       # multiplier: a 13-bit rank mask into every lane


@njit(_nrt=False, inline="always")
def _lane_type(b):
    """Card type of bit ``b`` of a lane mask."""
    return 13 * (b >> 4) + (b & 15)


@njit(_nrt=False, inline="always")
def _add_bit(p0, p1, p2, x):
    """The 3-bit counters ``p2 p1 p0`` (one per bit position) plus the bits of ``x`` (no counter
    may pass 7)."""
    c0 = p0 & x
    c1 = p1 & c0
    return p0 ^ x, p1 ^ c0, p2 | c1


@njit(_nrt=False, inline="always")
def _usefulness_planes(held, pos, twice, ace_low, ace_high, dup):
    """``card_usefulness``'s two counts for every held natural at once (lane masks: ``held`` the
    naturals, ``pos`` each suit's run positions, ``twice`` the naturals held twice or more;
    ``ace_low``/``ace_high`` all ones or zero): ``n_one + 1`` as three bit planes and ``n_gap`` as
    two.  ``n_one + 1`` is the suits holding the rank, the natural's own included, plus a second
    copy (when sets may repeat a suit) and the same-suit neighbours one rank away; ``n_gap`` the
    neighbours two ranks away.  A natural of rank r sits at run position r + 1, so its neighbours
    are the positions r, r + 2 (one away) and r - 1, r + 3 (two away): shifts of ``pos``; an ace's
    are 2 and 13, 3 and 12, as far as the ends it may take."""
    h0 = held & 0x1FFF
    h1 = (held >> 16) & 0x1FFF
    h2 = (held >> 32) & 0x1FFF
    h3 = (held >> 48) & 0x1FFF
    a0 = h0 ^ h1
    a1 = h0 & h1
    b0 = h2 ^ h3
    b1 = h2 & h3
    carry = a0 & b0
    p0 = (a0 ^ b0) * _LANE_COPY
    p1 = (a1 ^ b1 ^ carry) * _LANE_COPY
    p2 = ((a1 & b1) | (carry & (a1 ^ b1))) * _LANE_COPY
    one_lo = (pos & _LANE_RANKS) | (ace_low & (pos >> 2) & _LANE_BIT0)
    one_hi = ((pos >> 2) & _LANE_RANKS) | (ace_high & (pos >> 13) & _LANE_BIT0)
    gap_lo = ((pos << 1) & _LANE_RANKS) | (ace_low & (pos >> 3) & _LANE_BIT0)
    gap_hi = ((pos >> 3) & _LANE_RANKS) | (ace_high & (pos >> 12) & _LANE_BIT0)
    p0, p1, p2 = _add_bit(p0, p1, p2, twice & dup)
    p0, p1, p2 = _add_bit(p0, p1, p2, one_lo)
    p0, p1, p2 = _add_bit(p0, p1, p2, one_hi)
    return p0, p1, p2, gap_lo ^ gap_hi, gap_lo & gap_hi


@njit(_nrt=False)
def _usefulness_order(gapw, sfw):
    """Fill ``sfw[_SFW_U_ORDER:]`` with the 21 pairs (n_one 0..6, n_gap 0..2: the most
    ``card_usefulness`` counts) in the order of ``n_one + gapw * n_gap``, each as
    ``(n_one + 1) | n_gap << 3 | last << 5``, ``last`` marking the end of a run of equal values
    (cards of equal usefulness are told apart by their penalty).  Kept, with
    ``_usefulness_key(gapw)`` in ``sfw[_SFW_U_GAPW]``, until the gap weight changes (a seat's gap
    weight is fixed, so the caller's check finds it there and this runs about once a game)."""
    k = 0
    done = np.int64(0)
    while k < 21:
        low = 1e300
        for i in range(21):
            if ((done >> i) & 1) == 0:
                low = min(low, np.float64(i // 3) + gapw * np.float64(i % 3))
        for i in range(21):
            if ((done >> i) & 1) == 0 and np.float64(i // 3) + gapw * np.float64(i % 3) == low:
                done |= np.int64(1) << i
                sfw[_SFW_U_ORDER + k] = (i // 3 + 1) | ((i % 3) << 3)
                k += 1
        sfw[_SFW_U_ORDER + k - 1] |= 1 << 5
    sfw[_SFW_U_GAPW] = _usefulness_key(gapw)


@njit(_nrt=False, inline="always")
def _usefulness_key(gapw):
    """What ``sfw[_SFW_U_GAPW]`` holds once ``_usefulness_order`` has filled it for ``gapw``."""
    return float_bits(gapw) + 1


@njit(_nrt=False, inline="always")
def _counts_equal(p0, p1, p2, g0, g1, code):
    """The bits whose counts (``_usefulness_planes``) are the pair ``code`` (``_usefulness_order``)."""
    return ~((p0 ^ -(code & 1)) | (p1 ^ -((code >> 1) & 1)) | (p2 ^ -((code >> 2) & 1))
             | (g0 ^ -((code >> 3) & 1)) | (g1 ^ -((code >> 4) & 1)))


@njit(_nrt=False, inline="always")
def _suit_lanes(hand, sfw, want_twice):
    """(held naturals, run positions, naturals held twice or more) of ``hand`` as lane masks, from
    the suits' run positions in ``sfw`` (an ace's rank bit from the hand: it may sit at no end);
    the third only when ``want_twice`` (else 0)."""
    pos = (sfw[_SFW_PM] | (sfw[_SFW_PM + 1] << 16) | (sfw[_SFW_PM + 2] << 32)
           | (sfw[_SFW_PM + 3] << 48))
    aces = ((1 if hand[0] > 0 else 0) | ((1 if hand[13] > 0 else 0) << 16)
            | ((1 if hand[26] > 0 else 0) << 32) | ((1 if hand[39] > 0 else 0) << 48))
    twice = np.int64(0)
    for s in range(4 if want_twice else 0):
        twice |= (twice_bits8(hand, 13 * s) | (twice_bits8(hand, 13 * s + 5) << 5)) << (16 * s)
    return ((pos >> 1) & _LANE_RANKS) | np.int64(aces), pos, twice


@njit(_nrt=False, inline="always")
def _shortfall_classes(sfw, held, twice):
    """The held naturals whose discard leaves the shortfall as it is, one more, two more (lane
    masks), from ``sf_prepare``'s workspace.  A natural's loss raises the set term when its rank
    is in ``_SFW_DSET``, and the run term when its suit's best window then grows
    (``_SFW_RUN_DROP``): for a natural other than an ace, its last copy at a position every best
    window covers; for an ace, when the suit's best without it (``_SFW_SB_ACE``) is worse."""
    run = np.int64(0)
    aces = np.int64(0)
    for s in range(4):
        grows = -(sfw[_SFW_RUN_DROP + s] - sfw[_SFW_RUN_SAME])          # all ones or zero
        run |= (grows & ((sfw[_SFW_COV + s] >> 1) & 0x1FFE)) << (16 * s)
        aces |= (grows & (1 if sfw[_SFW_SB_ACE + s] != sfw[_SFW_SB + s] else 0)) << (16 * s)
    run = (run & ~twice) | aces
    sets = sfw[_SFW_DSET] * _LANE_COPY
    return held & ~(run | sets), held & (run ^ sets), held & run & sets


@njit(_nrt=False)
def _shortfall_classes_slow(hands, rv, g, seat, rnd, held):
    """``_shortfall_classes`` from ``shortfall_with`` card by card (a set minimum beyond the
    workspace)."""
    base = contract_shortfall(hands, rv, g, seat, rnd)
    c1 = np.int64(0)
    c2 = np.int64(0)
    left = held
    while left != 0:
        b = lowest_bit(left)
        left &= left - 1
        d = shortfall_with(hands, rv, g, seat, rnd, _lane_type(b), -1) - base
        c1 |= (np.int64(1) << b) if d == 1 else 0
        c2 |= (np.int64(1) << b) if d >= 2 else 0
    return held & ~(c1 | c2), c1, c2


@njit(_nrt=False)
def _discard_pick(hands, rv, g, seat, rnd, laid, contract, gapw, sfw):
    """The two naturals greedy would discard first, ``(best, runner_up)`` (-1 where none), legal
    or not, by the measure of ``greedy_action``.  When ``best`` is legal it is the best legal
    card; when it is not (usually the card just taken, which may not go back) ``runner_up`` is the
    best of the others, hence the best legal card if it is legal, and only then does greedy check
    every card.  ``sfw``: scratch, int64[SFW_LEN] (``sf_prepare``'s workspace).

    The measure orders by the shortfall after the discard, then usefulness, then penalty (highest
    first), then card type.  The first two are computed for all held naturals at once, as bit
    masks (``_shortfall_classes``: the shortfall grows by 0, 1 or 2; ``_usefulness_planes``: the
    usefulness counts), and the masks are visited in the measure's order until two cards are
    found; only those in the groups visited are looked at one by one, for their penalty.  A card
    at a time cost about 25 cycles each (a hand holds some 14 naturals; about half of them keep the
    shortfall).  Penalties are at most 1000 (``rules`` checks), which the 10-bit field relies on."""
    use_sf = not laid and contract
    fast = use_sf and sf_prepare(hands, rv, g, seat, rnd, sfw)
    use_u = not laid or not contract
    ace_low = -np.int64(1 if rv[R_ACE_LOW] == 1 else 0)
    ace_high = -np.int64(1 if rv[R_ACE_HIGH] == 1 else 0)
    dup = -np.int64(1 if rv[R_SET_ALLOW_DUPLICATE_SUIT] != 0 else 0)
    hand = hands[g, seat]
    if not fast:                     # (``sf_prepare`` stored them)
        for s in range(4):
            sfw[_SFW_PM + s] = run_mask(hand, s, 2 + ace_low, 13 - ace_high)
    held, pos, twice = _suit_lanes(hand, sfw, fast or (use_u and dup != 0))
    if fast:
        c0, c1, c2 = _shortfall_classes(sfw, held, twice)
    elif use_sf:
        c0, c1, c2 = _shortfall_classes_slow(hands, rv, g, seat, rnd, held)
    else:
        c0, c1, c2 = held, np.int64(0), np.int64(0)
    p0 = p1 = p2 = g0 = g1 = np.int64(0)
    if use_u:
        if sfw[_SFW_U_GAPW] != _usefulness_key(gapw):
            _usefulness_order(gapw, sfw)
        p0, p1, p2, g0, g1 = _usefulness_planes(held, pos, twice, ace_low, ace_high, dup)
    none = np.int64(1) << 62
    best = none
    second = none
    group = np.int64(0)             # the groups' order, ahead of the penalty and type in the keys
    for k in range(3):
        rest = c0 if k == 0 else c1 if k == 1 else c2
        i = 0
        while rest != 0 and second == none:
            cand = rest
            if use_u and i < 21:
                # the cards of the next usefulness value (the 21 pairs cover every card)
                same = np.int64(0)
                while True:
                    code = sfw[_SFW_U_ORDER + i]
                    i += 1
                    same |= _counts_equal(p0, p1, p2, g0, g1, code)
                    if (code >> 5) != 0:
                        break
                cand = rest & same
            rest &= ~cand
            group += 1
            while cand != 0:
                b = lowest_bit(cand)
                cand &= cand - 1
                t = _lane_type(b)
                key = (group << 20) | ((1023 - rv[R_PENALTY + t]) << 8) | t
                second = min(second, max(best, key))
                best = min(best, key)
    return (-1 if best == none else best & 255), (-1 if second == none else second & 255)


@njit(_nrt=False)
def _discard_fallback(known, state, rv, g, seat, rnd, laid, contract, gapw):
    """Greedy's discard when neither of ``_discard_pick``'s two cards is legal (rare): the best
    legal natural by the same measure, else a joker, else ending the turn, else the first legal
    action."""
    hands = state.hands
    best = -1
    best_sf = 1 << 40
    best_u = 1e300
    best_pen = -1
    for t in range(JOKER):
        if hands[g, seat, t] == 0 or not is_legal(known, A_DISCARD + t, state, rv, g):
            continue
        pen = rv[R_PENALTY + t]
        sf = 0
        u = 0.0
        if not laid:
            # keep what brings the contract closer, then what sits near other cards
            if contract:
                sf = shortfall_with(hands, rv, g, seat, rnd, t, -1)
            u = card_usefulness(hands, rv, g, seat, t, 1, gapw)
        elif not contract:
            # points variants keep building new melds after the opening: keep partners
            u = card_usefulness(hands, rv, g, seat, t, 1, gapw)
        if (sf < best_sf or (sf == best_sf and u < best_u)
                or (sf == best_sf and u == best_u and pen > best_pen)):
            best = t
            best_sf = sf
            best_u = u
            best_pen = pen
    if best >= 0:
        return A_DISCARD + best
    if is_legal(known, A_DISCARD + JOKER, state, rv, g):
        return A_DISCARD + JOKER
    if is_legal(known, A_END_TURN, state, rv, g):
        return A_END_TURN
    return _first_legal(known, state, rv, g)


@njit(_nrt=False)
def _first_legal(known, state, rv, g):
    """The first legal action (-1 if none): greedy's answer where its rules choose nothing."""
    for a in range(N_ACTIONS):
        if is_legal(known, a, state, rv, g):
            return a
    return -1
