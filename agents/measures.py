"""What the agents and the observation measure of a hand and of the table, in one module both use.

Of a hand: how far it is from the round's contract (``contract_shortfall``) and how much a card
helps it toward melds (``card_usefulness``).  Of the table, from the public cards only: the copies
of each card type whose place a seat knows (``seen_counts``), the unseen partners of a card
(``live_potential``), what each seat has thrown (``thrown_bits``) and the share of opponents a
discard would feed (``feed_share``).

Both are guides for the agent, not bounds the engine relies on.  Greedy asks the shortfall of the
hand with one card more or less for every candidate, so it is also kept incrementally
(``sf_prepare``/``sf_changed``); tests/test_greedy_fast.py holds each shortcut equal to the
definition it stands for.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.bits import byte_tops, rank_count_words, rank_tops_above, ranks_above, ranks_above_words
from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import (
    PLAY_DIRECTION_LEFT, R_ACE_HIGH, R_ACE_LOW, R_CALLS_ENABLED, R_MAX_CALLS_PER_PLAYER, R_N_DECKS, R_PLAY_DIRECTION,
    R_ROUND_BASE, R_SET_ALLOW_DUPLICATE_SUIT, R_SET_MIN_SIZE, ROUND_STRIDE,
)
from kalooki_sim.engine.fit import tack_may_fit
from kalooki_sim.engine.layout import (
    G_DISC_N, G_N_MELDS, G_NP, JOKER, MI_HI, MI_KIND, MI_LEN, MI_LO, MK_RUN, N_TYPES, P_MAX, PS_CALLS, PS_LAID,
)
from kalooki_sim.melds.positions import (
    best_window_covers, fewest_missing_in_runs, fewest_of, pos_type, run_mask, smallest4, suit_fewest_missing,
    sum_smallest4, windows_of,
)


@njit(_nrt=False)
def contract_shortfall(hands, rv, g, p, round_idx):
    """Cards seat ``p`` still misses for the round's contract, minus the jokers he holds.

    Runs: for each suit the fewest missing cards in any window of ``run_min_size`` positions, the
    ``F`` best suits counted; sets: for each rank ``set_min_size`` minus the naturals held, the
    ``T`` best ranks counted.  Runs and sets are judged apart (a card may count for both), so this
    is a guide for the greedy agent, not a bound the engine relies on.  Lower is closer."""
    base = R_ROUND_BASE + round_idx * ROUND_STRIDE + 5
    T = rv[base]
    F = rv[base + 1]
    total = -np.int64(hands[g, p, JOKER])
    if F > 0:
        total += fewest_missing_in_runs(hands[g, p], F, rv)
    if T > 0:
        total += _sets_need_sum(hands, g, p, rv[R_SET_MIN_SIZE], T)
    return total


@njit(_nrt=False)
def shortfall_with(hands, rv, g, p, round_idx, t, delta):
    """Shortfall after adding (delta = 1) or removing (delta = -1) one card of type t."""
    hands[g, p, t] += delta
    v = contract_shortfall(hands, rv, g, p, round_idx)
    hands[g, p, t] -= delta
    return v


# Incremental shortfall: the greedy agent asks for the shortfall of the hand with one card more or
# less (every discard candidate, every offered discard).  A one-card change touches one suit of the
# run part and one rank of the set part, so the rest is computed once per decision into a small
# workspace ``sfw`` (int64[SFW_LEN]) and each candidate costs a few lookups (a natural other than
# an ace leaving) or one rescan of its suit's positions.  The result is exactly
# ``contract_shortfall`` of the changed hand (tests/test_greedy_fast.py checks that).
_SFW_SB = 0          # fewest missing naturals in a run window, per suit (4)
_SFW_COV = 4         # per suit: positions every best run window covers (bit mask; 0 if none fits)
_SFW_PM = 8          # per suit: run positions held (``positions.run_mask``)
_SFW_HIST = 12       # ranks per set need 0..smin (smin + 2 <= _SFW_HMAX)
_SFW_HMAX = 15
SFW_BASE = _SFW_HIST + _SFW_HMAX   # the unchanged hand's shortfall
# ... and the two terms after one card leaves, which depend only on its suit and its rank's count:
_SFW_RUN_SAME = SFW_BASE + 1        # run term when no suit's best window loses a card
_SFW_RUN_DROP = _SFW_RUN_SAME + 1    # run term when suit s's best grows by one (4)
_SFW_SET_MINUS = _SFW_RUN_DROP + 4   # set term when a rank held c times loses one (c = 1..smin;
                                     # c = smin + 1 stands for "more than smin": unchanged)
# ``_discard_pick``'s own part:
_SFW_SB_ACE = _SFW_SET_MINUS + _SFW_HMAX  # per suit: fewest missing once an ace leaves (4)
_SFW_DSET = _SFW_SB_ACE + 4              # bit r: one natural of rank r leaving raises the set term
_SFW_U_ORDER = _SFW_DSET + 1             # the 21 usefulness counts in order (``_usefulness_order``)
_SFW_U_GAPW = _SFW_U_ORDER + 21          # ... for this gap weight (float bits + 1; 0: none yet)
SFW_LEN = _SFW_U_GAPW + 1


@njit(_nrt=False)
def _sets_part(hist, smin, T):
    left = T
    total = 0
    for need in range(smin + 1):
        if left == 0:
            break
        k = hist[need]
        take = min(k, left)
        total += take * need
        left -= take
    return total


@njit(_nrt=False, inline="always")     # once per discard: a call would pass some 30 words
def sf_prepare(hands, rv, g, p, round_idx, sfw):
    """Fill ``sfw`` for seat ``p``'s hand; returns False when the fast path does not apply
    (a set minimum beyond the workspace) and the caller must use ``contract_shortfall``."""
    base = R_ROUND_BASE + round_idx * ROUND_STRIDE + 5
    T = rv[base]
    F = rv[base + 1]
    smin = rv[R_SET_MIN_SIZE]
    if smin < 0 or smin + 2 > _SFW_HMAX:
        return False
    lo_min = 1 if rv[R_ACE_LOW] == 1 else 2
    hi_max = 14 if rv[R_ACE_HIGH] == 1 else 13
    hand = hands[g, p]
    for s in range(4):
        pm = run_mask(hand, s, lo_min, hi_max)
        sfw[_SFW_PM + s] = pm
        b = 0
        every = np.int64(0)
        if F > 0:
            b, every, _ = windows_of(rv, pm)
        sfw[_SFW_SB + s] = b
        sfw[_SFW_COV + s] = every if b != 99 else 0
        # an ace leaving changes the suit's positions only when it is the only one (at both ends)
        b_ace = b
        if F > 0 and hand[13 * s] == 1:
            bits = np.int64(0)
            if lo_min == 1:
                bits |= 1 << 1
            if hi_max == 14:
                bits |= 1 << 14
            b_ace = fewest_of(rv, pm & ~bits)
        sfw[_SFW_SB_ACE + s] = b_ace
    # ranks per set need (need 0: held smin times or more; smin: not held), from the naturals per
    # rank counted bytewise (``bits.rank_count_words``): a rank-by-rank count with a histogram
    # increment per rank chained its loads and stores
    lo, hi = rank_count_words(hand)
    fewer = np.int64(0)                      # ranks holding at least smin - need + 1
    for need in range(smin + 1):
        at_least = 13 if need == smin else ranks_above_words(lo, hi, smin - need - 1)
        sfw[_SFW_HIST + need] = at_least - fewer
        fewer = at_least
    total = -np.int64(hand[JOKER])
    for s in range(4):
        sfw[_SFW_RUN_DROP + s] = 0
    sfw[_SFW_RUN_SAME] = 0
    if F > 0:
        b0 = sfw[_SFW_SB]
        b1 = sfw[_SFW_SB + 1]
        b2 = sfw[_SFW_SB + 2]
        b3 = sfw[_SFW_SB + 3]
        # a suit's best growing by one adds one to the F best exactly when it was below the
        # (F + 1)-th best (``positions.smallest4``): one sort instead of five
        same, nxt = smallest4(b0, b1, b2, b3, F)
        sfw[_SFW_RUN_SAME] = same
        sfw[_SFW_RUN_DROP] = same + (1 if b0 < nxt else 0)
        sfw[_SFW_RUN_DROP + 1] = same + (1 if b1 < nxt else 0)
        sfw[_SFW_RUN_DROP + 2] = same + (1 if b2 < nxt else 0)
        sfw[_SFW_RUN_DROP + 3] = same + (1 if b3 < nxt else 0)
        total += sfw[_SFW_RUN_SAME]
    for c in range(smin + 2):
        sfw[_SFW_SET_MINUS + c] = 0
    dset = np.int64(0)
    if T > 0:
        same = _sets_part(sfw[_SFW_HIST:_SFW_HIST + smin + 1], smin, T)
        # a rank held c times (1..smin) loses one: its need v = smin - c grows by one, and the sum
        # of the T smallest needs grows with it exactly when no rank left out of those T has need
        # <= v, i.e. when at most T ranks have need <= v (are held c times or more)
        n_le = 0
        c_low = smin + 1          # the fewest naturals of a rank whose loss raises the term
        for c in range(smin, 0, -1):
            n_le += sfw[_SFW_HIST + smin - c]
            sfw[_SFW_SET_MINUS + c] = same + (1 if n_le <= T else 0)
            c_low = c if n_le <= T else c_low
        sfw[_SFW_SET_MINUS + smin + 1] = same
        total += same
        # n_le grows as c falls, so the ranks whose loss raises the term are those held c_low to
        # smin times
        from_lo, from_hi = rank_tops_above(lo, hi, c_low - 1)
        over_lo, over_hi = rank_tops_above(lo, hi, smin)
        dset = byte_tops(from_lo & ~over_lo) | (byte_tops(from_hi & ~over_hi) << 5)
    sfw[SFW_BASE] = total
    sfw[_SFW_DSET] = dset
    return True


@njit(_nrt=False, inline="always")
def _rank_count(hands, g, p, r):
    """Naturals of rank ``r`` seat ``p`` holds."""
    return np.int64(hands[g, p, r]) + hands[g, p, 13 + r] + hands[g, p, 26 + r] + hands[g, p, 39 + r]


@njit(_nrt=False, inline="always")
def sf_changed(hands, rv, g, p, round_idx, t, delta, sfw):
    """``shortfall_with(hands, rv, g, p, round_idx, t, delta)`` from a workspace filled by
    ``sf_prepare`` for the unchanged hand (which is left unchanged)."""
    if t == JOKER:
        return sfw[SFW_BASE] - delta
    s = t // 13
    r = t % 13
    h = np.int64(hands[g, p, t])
    if delta == -1 and r != 0 and h >= 1:
        # a natural (not an ace) leaves: both terms were prepared, no branch needed.  The run term
        # changes only if it was the suit's last copy and every best window of the suit covers its
        # position; the set term only by its rank's count (more than smin: no change)
        drop = ((sfw[_SFW_COV + s] >> (r + 1)) & 1) * (1 if h == 1 else 0)
        c = min(_rank_count(hands, g, p, r), rv[R_SET_MIN_SIZE] + 1)
        return (-np.int64(hands[g, p, JOKER]) + sfw[_SFW_RUN_SAME]
                + drop * (sfw[_SFW_RUN_DROP + s] - sfw[_SFW_RUN_SAME]) + sfw[_SFW_SET_MINUS + c])
    base = R_ROUND_BASE + round_idx * ROUND_STRIDE + 5
    T = rv[base]
    F = rv[base + 1]
    total = -np.int64(hands[g, p, JOKER])
    if F > 0:
        # the suit's held positions change only if the count crosses zero: rescan that suit
        pm = sfw[_SFW_PM + s]
        if h + delta == 0 or h == 0:
            lo_min = 1 if rv[R_ACE_LOW] == 1 else 2
            hi_max = 14 if rv[R_ACE_HIGH] == 1 else 13
            q = r + 1
            bits = np.int64(1) << q
            if r == 0:
                bits = np.int64(0)
                if lo_min == 1:
                    bits |= 1 << 1
                if hi_max == 14:
                    bits |= 1 << 14
            pm = pm & ~bits if h + delta == 0 else pm | bits
            b = fewest_of(rv, pm)
        else:
            b = sfw[_SFW_SB + s]
        b0 = b if s == 0 else sfw[_SFW_SB]
        b1 = b if s == 1 else sfw[_SFW_SB + 1]
        b2 = b if s == 2 else sfw[_SFW_SB + 2]
        b3 = b if s == 3 else sfw[_SFW_SB + 3]
        total += sum_smallest4(b0, b1, b2, b3, F)
    if T > 0:
        smin = rv[R_SET_MIN_SIZE]
        hist = sfw[_SFW_HIST:_SFW_HIST + smin + 1]
        c = _rank_count(hands, g, p, r)
        n_old = max(smin - c, 0)
        n_new = max(smin - (c + delta), 0)
        hist[n_old] -= 1
        hist[n_new] += 1
        total += _sets_part(hist, smin, T)
        hist[n_new] -= 1
        hist[n_old] += 1
    return total


@njit(_nrt=False, inline="always")
def card_usefulness(hands, rv, g, p, t, held, gapw):
    """How much natural ``t`` helps seat ``p``'s hand toward melds.

    Counts the other suits of its rank held (and a second copy when sets may repeat a suit) and
    same-suit cards one rank away (1 each) and two ranks away (``gapw`` each), aces at both
    ends where the rules allow.  ``held = 1`` when ``t`` itself is in the hand (excluded).  Jokers
    are always very useful.  (``_usefulness_planes`` counts the same for every held card at once.)
    """
    if t == JOKER:
        return 100.0
    s = t // 13
    r = t % 13
    n_one = 0
    n_gap = 0
    for s2 in range(4):
        c = np.int64(hands[g, p, s2 * 13 + r])
        if s2 == s:
            c -= held
            if rv[R_SET_ALLOW_DUPLICATE_SUIT] == 0:
                c = 0
        if c > 0:
            n_one += 1
    # run positions of the card (ace: 1 and 14)
    for k in range(2):
        if r == 0:
            q = 1 if k == 0 else 14
            if q == 1 and rv[R_ACE_LOW] == 0:
                continue
            if q == 14 and rv[R_ACE_HIGH] == 0:
                continue
        else:
            if k == 1:
                break
            q = r + 1
        for d in (-2, -1, 1, 2):
            q2 = q + d
            if q2 < 1 or q2 > 14:
                continue
            if q2 == 1 and rv[R_ACE_LOW] == 0:
                continue
            if q2 == 14 and rv[R_ACE_HIGH] == 0:
                continue
            if hands[g, p, pos_type(s, q2)] > 0:
                if d == 1 or d == -1:
                    n_one += 1
                else:
                    n_gap += 1
    return np.float64(n_one) + gapw * np.float64(n_gap)


@njit(_nrt=False)
def _sets_need_sum(hands, g, p, smin, T):
    """Set part of ``contract_shortfall``: the ``T`` smallest needs ``max(smin - held, 0)`` over the
    ranks (``_sets_part`` counts the same from a histogram)."""
    left = T
    total = 0
    for need in range(smin + 1):
        if left == 0:
            break
        k = 0
        for r in range(13):
            if max(smin - _rank_count(hands, g, p, r), 0) == need:
                k += 1
        take = min(k, left)
        total += take * need
        left -= take
    return total


@njit(_nrt=False, inline="always")
def _closer_with(hands, rv, g, p, round_idx, t):
    """``shortfall_with(.., t, 1) < contract_shortfall(..)``: does card ``t`` bring the contract
    closer?  A card more never raises the run or the set term, so the answer is yes exactly when
    one of them drops: the set term is recounted with t's rank, the run term only when t's suit
    gains a position (the other suits are scanned only if that suit's best window improved).
    The joker terms cancel."""
    if t == JOKER:
        return True                      # one joker more: shortfall - 1
    base = R_ROUND_BASE + round_idx * ROUND_STRIDE + 5
    T = rv[base]
    F = rv[base + 1]
    s = t // 13
    r = t % 13
    if T > 0:
        # the set term (sum of the T smallest needs) drops when rank r still needs cards
        # (holds fewer than set_min_size) and fewer than T other ranks need fewer: r's need then
        # sits among the T smallest.  A rank needs fewer exactly when it holds more naturals
        c_r = _rank_count(hands, g, p, r)
        if c_r < rv[R_SET_MIN_SIZE] and ranks_above(hands[g, p], c_r) < T:
            return True
    if F > 0 and hands[g, p, t] == 0:
        if r != 0:
            # t fills one position: suit s's best drops (by one) exactly when a window attaining
            # it covers that position, and the sum of the F best suits then drops exactly when
            # fewer than F other suits are strictly better
            b, covered = best_window_covers(hands[g, p], s, rv, r + 1)
            if not covered:
                return False
            if F >= 4:
                return True
            k = 0
            for s2 in range(4):
                if s2 != s and suit_fewest_missing(hands[g, p], s2, rv) < b:
                    k += 1
                    if k == F:
                        return False
            return True
        b = suit_fewest_missing(hands[g, p], s, rv)
        hands[g, p, t] += 1
        b_new = suit_fewest_missing(hands[g, p], s, rv)
        hands[g, p, t] -= 1
        if b_new < b:
            b0 = b if s == 0 else suit_fewest_missing(hands[g, p], 0, rv)
            b1 = b if s == 1 else suit_fewest_missing(hands[g, p], 1, rv)
            b2 = b if s == 2 else suit_fewest_missing(hands[g, p], 2, rv)
            b3 = b if s == 3 else suit_fewest_missing(hands[g, p], 3, rv)
            old = sum_smallest4(b0, b1, b2, b3, F)
            new = sum_smallest4(b_new if s == 0 else b0, b_new if s == 1 else b1,
                                 b_new if s == 2 else b2, b_new if s == 3 else b3, F)
            return new < old
    return False


@njit(_nrt=False)
def _wants(hands, rv, g, p, rnd, t, contract, gapw, threshold):
    """Take card t?  In contract variants: when it brings the contract closer; otherwise when it
    is useful enough to the melds in hand."""
    if contract:   # only asked while p has not laid down (calls and discard draws need that)
        return _closer_with(hands, rv, g, p, rnd, t)
    return card_usefulness(hands, rv, g, p, t, 0, gapw) >= threshold


# ---- the table, as a seat sees it

# what each seat has thrown this hand (``thrown_bits``): two words per seat
THROWN_LEN = 2 * P_MAX


@njit(_nrt=False)
def seen_counts(gs, hands, disc, minfo, mcards, g, seat, seen):
    """Copies of each card type whose place is public to ``seat``: own hand, pile, table."""
    for t in range(N_TYPES):
        seen[t] = hands[g, seat, t]
    for i in range(gs[g, G_DISC_N]):
        seen[disc[g, i]] += 1
    for m in range(gs[g, G_N_MELDS]):
        if minfo[g, m, MI_KIND] == MK_RUN:
            lo = minfo[g, m, MI_LO]
            hi = minfo[g, m, MI_HI]
        else:
            lo = 0
            hi = minfo[g, m, MI_LEN] - 1
        for q in range(lo, hi + 1):
            c = mcards[g, m, q]
            if c >= 0:
                seen[c] += 1


@njit(_nrt=False)
def add_shown(gs, shown, g, seat, seen):
    """Add to ``seen`` the cards the other seats are known to hold (``state.shown``: taken from
    the pile or the table in everyone's sight and not put down since): not coming to ``seat``."""
    for o in range(gs[g, G_NP]):
        if o != seat:
            for t in range(N_TYPES):
                seen[t] += shown[g, o, t]


@njit(_nrt=False)
def live_potential(rv, seen, t, gapw):
    """Unseen copies of the naturals that meld with ``t`` (its rank in the other suits — and its
    own suit where sets may repeat one —; its suit one rank away, and two ranks away at
    ``gapw``), each as a share of the copies in the deck: 0 when every partner is dead."""
    nd = rv[R_N_DECKS]
    if nd <= 0 or t == JOKER:
        return 0.0
    s = t // 13
    r = t % 13
    sets = 0
    for s2 in range(4):
        if s2 == s and rv[R_SET_ALLOW_DUPLICATE_SUIT] == 0:
            continue
        sets += max(nd - seen[s2 * 13 + r], 0)
    one = 0
    two = 0
    for k in range(2):
        if r == 0:
            q = 1 if k == 0 else 14
            if (q == 1 and rv[R_ACE_LOW] == 0) or (q == 14 and rv[R_ACE_HIGH] == 0):
                continue
        else:
            if k == 1:
                break
            q = r + 1
        for d in (-2, -1, 1, 2):
            q2 = q + d
            if q2 < 1 or q2 > 14 or (q2 == 1 and rv[R_ACE_LOW] == 0) or (q2 == 14 and rv[R_ACE_HIGH] == 0):
                continue
            left = max(nd - seen[pos_type(s, q2)], 0)
            if d == 1 or d == -1:
                one += left
            else:
                two += left
    return (np.float64(sets) / (4.0 * nd) + np.float64(one) / nd + gapw * np.float64(two) / nd)


@njit(_nrt=False)
def thrown_bits(gs, disc, disc_by, g, thrown):
    """What each seat ``o`` has thrown this hand (cards still in the pile), for ``_shunned``:
    ``thrown[2 o]`` bit r for each rank, ``thrown[2 o + 1]`` bit t for each natural.  One pass
    over the pile per decision; the discard then asks about every held card."""
    for k in range(THROWN_LEN):
        thrown[k] = 0
    for i in range(gs[g, G_DISC_N]):
        o = disc_by[g, i]
        c = np.int64(disc[g, i])
        if 0 <= o < P_MAX and 0 <= c < JOKER:
            thrown[2 * o] |= np.int64(1) << (c % 13)
            thrown[2 * o + 1] |= np.int64(1) << c


@njit(_nrt=False, inline="always")
def _shunned(thrown, o, t):
    """Has seat ``o`` thrown (``thrown_bits``) ``t``'s rank or a card of its suit within two
    ranks?  Then he is not collecting what ``t`` would feed."""
    s = t // 13
    r = t % 13
    if (thrown[2 * o] >> r) & 1:
        return True
    lo = max(r - 2, 0)
    hi = min(r + 2, 12)
    window = ((np.int64(1) << (hi - lo + 1)) - 1) << (13 * s + lo)
    return (thrown[2 * o + 1] & window) != 0


@njit(_nrt=False)
def feed_share(gs, ps, minfo, rv, g, seat, t, contract, thrown):
    """Share of opponents who could take discard ``t`` and want it (the defence of ``agents/expert.py``);
    ``thrown``: ``thrown_bits`` of this position."""
    n = gs[g, G_NP]
    if n <= 1:
        return 0.0
    nxt = (seat + (1 if rv[R_PLAY_DIRECTION] == PLAY_DIRECTION_LEFT else -1)) % n
    feed = 0
    for o in range(n):
        if o == seat:
            continue
        if ps[g, o, PS_LAID] == 1:
            if contract or o != nxt:
                continue                # no calls and no discard draws once laid down
            for m in range(gs[g, G_N_MELDS]):
                if tack_may_fit(minfo, g, m, t):
                    feed += 1
                    break
            continue
        if o != nxt:
            if not contract or rv[R_CALLS_ENABLED] == 0:
                continue
            if ps[g, o, PS_CALLS] >= rv[R_MAX_CALLS_PER_PLAYER]:
                continue
        if not _shunned(thrown, o, t):
            feed += 1
    return np.float64(feed) / np.float64(n - 1)
