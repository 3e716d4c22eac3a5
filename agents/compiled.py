"""Compiled (numba) policies for the closed loop (``kalooki_sim.rollout``).

``choose_action`` dispatches on the policy id of ``agents/base.py`` (``RANDOM``, ``GREEDY``) and
returns one action id that is set in the legal ``mask`` the caller computed with
``core.legal_mask`` for the deciding seat (``gs[g, G_TO_ACT]``).

Randomness comes only from the counter-based generator of ``kalooki_sim.rng``: the caller passes
the seat's stream key (``rng_key(seed, game_id, core.STREAM_POLICY_BASE + seat)``) and a one-element
``int64`` counter array that is advanced in place, so a game's decisions depend on (seed, game id)
only — never on threads or batches.

Greedy, in words:

* call window: call when the top discard is useful (same rank held, or a same-suit card one rank
  away; two ranks away counts ``gap_weight``) — usefulness >= ``call_threshold``; else pass;
* allow/deny: deny (take the card as the draw) when the card is useful and denying is legal,
  otherwise allow (a player who cannot deny never does);
* draw: the top discard when useful (>= ``draw_threshold``) and legal, else the stock;
* upcard swap (American dealer): take the upcard when it is more useful than the least useful
  natural in hand (which is turned up instead);
* play: lay down as soon as the engine offers plan 0 (the exact best lay-down); then tack every
  card it can and take jokers by moves; then discard — before the lay-down the least useful card
  (cards with no same-rank partner and no same-suit card within two ranks first), highest penalty
  first, never a joker; after the lay-down simply the highest penalty card; end the turn without a
  discard only when that is the only legal action.

Points variants (``opening_mode = "points"``, the Kalooki 40 family) replace the contract measure
(``contract_shortfall``) by usefulness alone: a restricted discard draw is taken whenever the engine
offers it (it is offered only when the card goes into the lay-down or a lay-off at once); plan 0
(the opening, later any new melds) is laid whenever offered; every possible lay-off is made, and
joker swaps (runs and 3-card sets) are taken whenever the engine offers them (the natural is held
and the freed joker can be placed); the discard is the card with the fewest partners (same rank,
same suit nearby), highest penalty first, also after the opening.  Table manipulation (M1-M5)
follows ``agents.manipulation``: splits, shifts and set substitutions whenever offered, and takes
only when the taken card goes into a new meld with cards from the hand.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.engine.layout import (
    A_ALLOW, A_CALL, A_DENY, A_DISCARD, A_DRAW_DISCARD, A_DRAW_STOCK, A_END_TURN, A_LAY, A_MOVE,
    A_PASS, A_TACK, G_DISC_N, G_N_MELDS, G_PHASE, G_ROUND, JOKER, K_PLANS, N_ACTIONS, N_TYPES,
    PH_ALLOW, PH_CALL, PH_DRAW, PH_PLAY, PS_LAID, M_MAX, MI_HI, MI_KEY, MI_KIND, MI_LO, MI_NJ, MK_JSET, MK_RUN, MK_SET,
    A_SETSWAP, A_UPSWAP, PH_UPSWAP,
)
from kalooki_sim.engine.core import _draw_mode, legal_mask
from kalooki_sim.bits import (
    byte_tops, float_bits, lowest_bit, rank_count_words, rank_tops_above, ranks_above,
    ranks_above_words, twice_bits8,
)
from kalooki_sim.jit import njit
from kalooki_sim.melds.positions import (
    best_window_covers, fewest_missing_in_runs, fewest_of, pos_type, run_mask, smallest4,
    suit_fewest_missing, suit_ranks_held, sum_smallest4, windows_of,
)
from kalooki_sim.rng import rng_below, rng_uniform
from kalooki_sim.rulevec import (
    R_ACE_HIGH, R_ACE_LOW, R_OPENING_MODE, R_PENALTY, R_ROUND_BASE,
    R_SET_ALLOW_DUPLICATE_SUIT, R_SET_MIN_SIZE, R_TABLE_MANIPULATION, ROUND_STRIDE,
)

from .base import GREEDY, RANDOM
from .known import KNOWN_GEN, forget_known, is_legal
from .manipulation import greedy_manipulation

__all__ = ["seat_action", "choose_action", "random_action", "greedy_action", "card_usefulness",
           "KNOWN_LEN", "forget_known"]


@njit
def _param(params, i, default):
    """``params[i]`` if present and > 0, else ``default`` (an all-zero row = default agent)."""
    if i < params.shape[0] and params[i] > 0.0:
        return params[i]
    return default


@njit
def random_action(mask, n_legal, key, ctr):
    """Uniformly random legal action (counter ``ctr[0]`` advanced by one)."""
    j = rng_below(key, ctr[0], n_legal)
    ctr[0] += 1
    for a in range(N_ACTIONS):
        if mask[a]:
            if j == 0:
                return a
            j -= 1
    return -1


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
def _shortfall_with(hands, rv, g, p, round_idx, t, delta):
    """Shortfall after adding (delta = 1) or removing (delta = -1) one card of type t."""
    hands[g, p, t] += delta
    v = contract_shortfall(hands, rv, g, p, round_idx)
    hands[g, p, t] -= delta
    return v


# Incremental shortfall: the greedy agent asks for the shortfall of the hand with one card more or
# less (every discard candidate, every offered discard).  A one-card change touches one suit of the
# run part and one rank of the set part, so the rest is computed once per decision into a small
# workspace ``sfw`` (int64[_SFW_LEN]) and each candidate costs a few lookups (a natural other than
# an ace leaving) or one rescan of its suit's positions.  The result is exactly
# ``contract_shortfall`` of the changed hand (tests/test_greedy_fast.py checks that).
_SFW_SB = 0          # fewest missing naturals in a run window, per suit (4)
_SFW_COV = 4         # per suit: positions every best run window covers (bit mask; 0 if none fits)
_SFW_PM = 8          # per suit: run positions held (``positions.run_mask``)
_SFW_HIST = 12       # ranks per set need 0..smin (smin + 2 <= _SFW_HMAX)
_SFW_HMAX = 15
_SFW_BASE = _SFW_HIST + _SFW_HMAX   # the unchanged hand's shortfall
# ... and the two terms after one card leaves, which depend only on its suit and its rank's count:
_SFW_RUN_SAME = _SFW_BASE + 1        # run term when no suit's best window loses a card
_SFW_RUN_DROP = _SFW_RUN_SAME + 1    # run term when suit s's best grows by one (4)
_SFW_SET_MINUS = _SFW_RUN_DROP + 4   # set term when a rank held c times loses one (c = 1..smin;
                                     # c = smin + 1 stands for "more than smin": unchanged)
# ``_discard_pick``'s own part:
_SFW_SB_ACE = _SFW_SET_MINUS + _SFW_HMAX  # per suit: fewest missing once an ace leaves (4)
_SFW_DSET = _SFW_SB_ACE + 4              # bit r: one natural of rank r leaving raises the set term
_SFW_U_ORDER = _SFW_DSET + 1             # the 21 usefulness counts in order (``_usefulness_order``)
_SFW_U_GAPW = _SFW_U_ORDER + 21          # ... for this gap weight (float bits + 1; 0: none yet)
_SFW_LEN = _SFW_U_GAPW + 1


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
def _sf_prepare(hands, rv, g, p, round_idx, sfw):
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
    sfw[_SFW_BASE] = total
    sfw[_SFW_DSET] = dset
    return True


@njit(_nrt=False, inline="always")
def _rank_count(hands, g, p, r):
    """Naturals of rank ``r`` seat ``p`` holds."""
    return np.int64(hands[g, p, r]) + hands[g, p, 13 + r] + hands[g, p, 26 + r] + hands[g, p, 39 + r]


@njit(_nrt=False, inline="always")
def _sf_changed(hands, rv, g, p, round_idx, t, delta, sfw):
    """``_shortfall_with(hands, rv, g, p, round_idx, t, delta)`` from a workspace filled by
    ``_sf_prepare`` for the unchanged hand (which is left unchanged)."""
    if t == JOKER:
        return sfw[_SFW_BASE] - delta
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


# A seat's decision memory: the legality cache (``agents.known``: an entry per action, then the
# generation), then the greedy discard's scratch, so that no decision allocates.
_KNOWN_SCRATCH = KNOWN_GEN + 1
_KNOWN_FITS = _KNOWN_SCRATCH + _SFW_LEN    # per table meld: the cards it may take (``_tack_candidates``)
KNOWN_LEN = _KNOWN_FITS + M_MAX


@njit(_nrt=False)
def _tack_may_fit(minfo, g, m, t):
    """False when natural ``t`` certainly cannot be laid off onto table meld ``m`` (wrong suit or
    not next to a run end, wrong rank for a set, a natural for an all-joker set): the cases where
    ``core._run_fit``/``core._set_fit`` return an error whatever else holds, so ``check_action``
    would reject the tack.  Jokers and everything else are left to ``check_action``.  (The rule
    card by card; greedy reads it as ``_tack_candidates``' masks, which tests hold equal to it.)"""
    if t == JOKER:
        return True
    kind = minfo[g, m, MI_KIND]
    if kind == MK_RUN:
        if t // 13 != minfo[g, m, MI_KEY]:
            return False
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
        r = t % 13
        if r == 0:
            return lo - 1 == 1 or hi + 1 == 1 or lo - 1 == 14 or hi + 1 == 14
        q = r + 1
        return q == lo - 1 or q == hi + 1
    if kind == MK_SET:
        return t % 13 == minfo[g, m, MI_KEY]
    return kind != MK_JSET


@njit(_nrt=False, inline="always")
def _tack_candidates(hands, minfo, g, p, nm, fits):
    """The lay-offs greedy may try, from the melds' open ends instead of asking every held card
    about every meld.  Fills ``fits[m]`` (m < ``nm``) with bit t for each card type ``t`` that
    ``_tack_may_fit`` table meld m (a joker always), and returns (bit t for each type seat ``p``
    holds that some meld may take, bit m for each run holding a joker: the joker moves to try)."""
    joker = np.int64(1) << JOKER
    may = joker
    jruns = np.int64(0)
    for m in range(nm):
        kind = minfo[g, m, MI_KIND]
        key = minfo[g, m, MI_KEY]
        f = joker
        if kind == MK_RUN:
            lo = minfo[g, m, MI_LO]
            hi = minfo[g, m, MI_HI]
            if lo - 1 >= 1:
                f |= np.int64(1) << pos_type(key, lo - 1)
            if hi + 1 <= 14:
                f |= np.int64(1) << pos_type(key, hi + 1)
            if minfo[g, m, MI_NJ] != 0:
                jruns |= np.int64(1) << m
        elif kind == MK_SET:
            f |= ((np.int64(1) << key) | (np.int64(1) << (13 + key)) | (np.int64(1) << (26 + key))
                  | (np.int64(1) << (39 + key)))
        elif kind != MK_JSET:
            f = (np.int64(1) << N_TYPES) - 1
        fits[m] = f
        may |= f
    hand = hands[g, p]
    held = np.int64(1 if hand[JOKER] > 0 else 0) << JOKER
    for s in range(4):
        held |= suit_ranks_held(hand, s) << (13 * s)
    return may & held, jruns


@njit
def _random_known(known, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                  hscore, hwin, rv, g, key, ctr):
    """Uniform legal action when greedy explores (epsilon): completes the mask first."""
    mask = np.zeros(N_ACTIONS, dtype=np.bool_)
    n = legal_mask(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                   rv, g, mask)
    if n == 0:
        return -1
    return random_action(mask, n, key, ctr)


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
    """``_shortfall_with(.., t, 1) < contract_shortfall(..)``: does card ``t`` bring the contract
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
    masks), from ``_sf_prepare``'s workspace.  A natural's loss raises the set term when its rank
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
    """``_shortfall_classes`` from ``_shortfall_with`` card by card (a set minimum beyond the
    workspace)."""
    base = contract_shortfall(hands, rv, g, seat, rnd)
    c1 = np.int64(0)
    c2 = np.int64(0)
    left = held
    while left != 0:
        b = lowest_bit(left)
        left &= left - 1
        d = _shortfall_with(hands, rv, g, seat, rnd, _lane_type(b), -1) - base
        c1 |= (np.int64(1) << b) if d == 1 else 0
        c2 |= (np.int64(1) << b) if d >= 2 else 0
    return held & ~(c1 | c2), c1, c2


@njit(_nrt=False)
def _discard_pick(hands, rv, g, seat, rnd, laid, contract, gapw, sfw):
    """The two naturals greedy would discard first, ``(best, runner_up)`` (-1 where none), legal
    or not, by the measure of ``greedy_action``.  When ``best`` is legal it is the best legal
    card; when it is not (usually the card just taken, which may not go back) ``runner_up`` is the
    best of the others, hence the best legal card if it is legal, and only then does greedy check
    every card.  ``sfw``: scratch, int64[_SFW_LEN] (``_sf_prepare``'s workspace).

    The measure orders by the shortfall after the discard, then usefulness, then penalty (highest
    first), then card type.  The first two are computed for all held naturals at once, as bit
    masks (``_shortfall_classes``: the shortfall grows by 0, 1 or 2; ``_usefulness_planes``: the
    usefulness counts), and the masks are visited in the measure's order until two cards are
    found; only those in the groups visited are looked at one by one, for their penalty.  A card
    at a time cost about 25 cycles each (a hand holds some 14 naturals; about half of them keep the
    shortfall).  Penalties are at most 1000 (``rules`` checks), which the 10-bit field relies on."""
    use_sf = not laid and contract
    fast = use_sf and _sf_prepare(hands, rv, g, seat, rnd, sfw)
    use_u = not laid or not contract
    ace_low = -np.int64(1 if rv[R_ACE_LOW] == 1 else 0)
    ace_high = -np.int64(1 if rv[R_ACE_HIGH] == 1 else 0)
    dup = -np.int64(1 if rv[R_SET_ALLOW_DUPLICATE_SUIT] != 0 else 0)
    hand = hands[g, seat]
    if not fast:                     # (``_sf_prepare`` stored them)
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
def _upswap_pick(hands, rv, g, seat, top, gapw):
    """Greedy's upcard swap (American dealer): take the upcard when it is more useful than the
    least useful natural in hand, which is turned up instead.  Out of ``greedy_action``'s line,
    like the other rare decisions: inlined, its code would crowd the closed loop's hot path."""
    worst = -1
    worst_u = 1e300
    worst_pen = -1
    for t in range(JOKER):
        if hands[g, seat, t] > 0:
            u = card_usefulness(hands, rv, g, seat, t, 1, gapw)
            pen = rv[R_PENALTY + t]
            if u < worst_u or (u == worst_u and pen > worst_pen):
                worst = t
                worst_u = u
                worst_pen = pen
    if top >= 0 and worst >= 0 and card_usefulness(hands, rv, g, seat, top, 0, gapw) > worst_u:
        return A_UPSWAP + worst
    return A_PASS


@njit(_nrt=False)
def _discard_fallback(known, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                      hscore, hwin, rv, g, seat, rnd, laid, contract, gapw):
    """Greedy's discard when neither of ``_discard_pick``'s two cards is legal (rare): the best
    legal natural by the same measure, else a joker, else ending the turn, else the first legal
    action."""
    best = -1
    best_sf = 1 << 40
    best_u = 1e300
    best_pen = -1
    for t in range(JOKER):
        if hands[g, seat, t] == 0 or not is_legal(known, A_DISCARD + t, gs, ps, hands, stock, disc,
                                                  disc_by, minfo, mcards, mas, plan, plan_n, hscore,
                                                  hwin, rv, g):
            continue
        pen = rv[R_PENALTY + t]
        sf = 0
        u = 0.0
        if not laid:
            # keep what brings the contract closer, then what sits near other cards
            if contract:
                sf = _shortfall_with(hands, rv, g, seat, rnd, t, -1)
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
    if is_legal(known, A_DISCARD + JOKER, gs, ps, hands, stock, disc, disc_by,
                minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
        return A_DISCARD + JOKER
    if is_legal(known, A_END_TURN, gs, ps, hands, stock, disc, disc_by,
                minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
        return A_END_TURN
    return _first_legal(known, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                        hscore, hwin, rv, g)


@njit(_nrt=False)
def _first_legal(known, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore,
                 hwin, rv, g):
    """The first legal action (-1 if none): greedy's answer where its rules choose nothing."""
    for a in range(N_ACTIONS):
        if is_legal(known, a, gs, ps, hands, stock, disc, disc_by,
                    minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
            return a
    return -1


@njit(_nrt=False, inline="always")
def greedy_action(params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                  hscore, hwin, rv, g, seat, known, key, ctr):
    """The greedy heuristic (module docstring); always returns a legal action (-1 if none).

    ``known`` (``forget_known``) caches legality, so greedy only checks the few actions it
    considers instead of building the whole legal mask at every decision."""
    eps = _param(params, 0, 0.0)
    if eps > 0.0:
        u = rng_uniform(key, ctr[0])
        ctr[0] += 1
        if u < eps:
            return _random_known(known, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                                      hscore, hwin, rv, g, key, ctr)
    call_thr = _param(params, 1, 1.0)
    draw_thr = _param(params, 2, 1.0)
    gapw = _param(params, 3, 0.5)
    ph = gs[g, G_PHASE]
    contract = rv[R_OPENING_MODE] == 0
    rnd = gs[g, G_ROUND]
    nd = gs[g, G_DISC_N]
    top = -1
    if nd > 0:
        top = np.int64(disc[g, nd - 1])
    # a call or deny needs both the wish and legality: the cheaper wish is asked first (the seat
    # asked to call is eligible, so the check would mostly pass anyway)
    if ph == PH_CALL:
        if top >= 0 and _wants(hands, rv, g, seat, rnd, top, contract, gapw, call_thr):
            if is_legal(known, A_CALL, gs, ps, hands, stock, disc, disc_by,
                        minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
                return A_CALL
        if is_legal(known, A_PASS, gs, ps, hands, stock, disc, disc_by,
                    minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
            return A_PASS
    elif ph == PH_ALLOW:
        if top >= 0 and _wants(hands, rv, g, seat, rnd, top, contract, gapw, draw_thr):
            if is_legal(known, A_DENY, gs, ps, hands, stock, disc, disc_by,
                        minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
                return A_DENY
        if is_legal(known, A_ALLOW, gs, ps, hands, stock, disc, disc_by,
                    minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
            return A_ALLOW
        if is_legal(known, A_DENY, gs, ps, hands, stock, disc, disc_by,
                    minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
            return A_DENY
    elif ph == PH_DRAW:
        # the wish before the legality, as in the call window: most draws do not want the
        # discard, and a draw mode of "never" (3; after a contract lay-down) rules it out at once.
        # Points variants: a restricted discard draw (mode 1, 2) is only legal when the card goes
        # into the lay-down (or a lay-off) at once, so it is always worth taking
        mode = _draw_mode(gs, ps, rv, g, seat)
        if (top >= 0 and mode != 3
                and (_wants(hands, rv, g, seat, rnd, top, contract, gapw, draw_thr)
                     or (not contract and mode != 0))
                and is_legal(known, A_DRAW_DISCARD, gs, ps, hands, stock, disc, disc_by,
                             minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g)):
            return A_DRAW_DISCARD
        if is_legal(known, A_DRAW_STOCK, gs, ps, hands, stock, disc, disc_by,
                    minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
            return A_DRAW_STOCK
        if is_legal(known, A_DRAW_DISCARD, gs, ps, hands, stock, disc, disc_by,
                    minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
            return A_DRAW_DISCARD
    elif ph == PH_UPSWAP:
        return _upswap_pick(hands, rv, g, seat, top, gapw)
    elif ph == PH_PLAY:
        for k in range(K_PLANS):
            if plan_n[g, k, 0] < 0:
                continue                 # no plan k: check_action says E_NO_PLAN (or must-place)
            if is_legal(known, A_LAY + k, gs, ps, hands, stock, disc, disc_by,
                        minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
                return A_LAY + k
        nm = gs[g, G_N_MELDS]
        if ps[g, seat, PS_LAID] == 1:
            # tack every card it can (naturals first, jokers last), then take jokers by moves;
            # only the held cards some meld may take are tried, on the melds that may take them
            # (``_tack_candidates``), in the same order
            fits = known[_KNOWN_FITS:_KNOWN_FITS + M_MAX]
            cand, jruns = _tack_candidates(hands, minfo, g, seat, nm, fits)
            while cand != 0:
                t = lowest_bit(cand)
                cand &= cand - 1
                for m in range(nm):
                    if ((fits[m] >> t) & 1) == 0:
                        continue
                    a = A_TACK + m * N_TYPES + t
                    if is_legal(known, a, gs, ps, hands, stock, disc, disc_by,
                                minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
                        return a
            while jruns != 0:
                m = lowest_bit(jruns)
                jruns &= jruns - 1
                for q in range(minfo[g, m, MI_LO], minfo[g, m, MI_HI] + 1):
                    # (a move needs the natural the joker stands for: the cheap part of the check)
                    if (mcards[g, m, q] == JOKER
                            and hands[g, seat, pos_type(minfo[g, m, MI_KEY], q)] > 0):
                        a = A_MOVE + m * 15 + q
                        if is_legal(known, a, gs, ps, hands, stock, disc, disc_by,
                                    minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
                            return a
            if not contract:
                # joker swaps in 3-card sets (the engine offers them only when the freed joker
                # can be placed this turn)
                for m in range(nm):
                    if minfo[g, m, MI_KIND] == MK_SET and minfo[g, m, MI_NJ] > 0:
                        for s_ in range(4):
                            if hands[g, seat, s_ * 13 + minfo[g, m, MI_KEY]] == 0:
                                continue         # the natural to swap in is not in hand
                            a = A_SETSWAP + m * 4 + s_
                            if is_legal(known, a, gs, ps, hands, stock, disc, disc_by,
                                        minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
                                return a
            if rv[R_TABLE_MANIPULATION] != 0:
                a = greedy_manipulation(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan,
                                        plan_n, hscore, hwin, rv, g, seat, known)
                if a >= 0:
                    return a
        laid = ps[g, seat, PS_LAID] == 1
        best, runner_up = _discard_pick(hands, rv, g, seat, rnd, laid, contract, gapw,
                                        known[_KNOWN_SCRATCH:_KNOWN_FITS])
        if best >= 0 and is_legal(known, A_DISCARD + best, gs, ps, hands, stock, disc, disc_by, minfo,
                                  mcards, mas, plan, plan_n, hscore, hwin, rv, g):
            return A_DISCARD + best
        if runner_up >= 0 and is_legal(known, A_DISCARD + runner_up, gs, ps, hands, stock, disc,
                                       disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
            return A_DISCARD + runner_up
        return _discard_fallback(known, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan,
                                 plan_n, hscore, hwin, rv, g, seat, rnd, laid, contract, gapw)
    return _first_legal(known, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                        hscore, hwin, rv, g)


@njit
def choose_action(policy_id, params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan,
                  plan_n, hscore, hwin, rv, g, seat, mask, n_legal, key, ctr):
    """Action of compiled policy ``policy_id`` (``base.RANDOM``/``base.GREEDY``) for ``seat`` in
    game ``g``.  ``mask``/``n_legal`` come from ``core.legal_mask``; ``key`` is the seat's policy
    stream key and ``ctr`` (int64[1]) its counter, advanced in place.  Returns -1 only for an
    unknown policy id or an empty mask."""
    if n_legal <= 0:
        return -1
    if policy_id == RANDOM:
        return random_action(mask, n_legal, key, ctr)
    if policy_id == GREEDY:
        known = np.zeros(KNOWN_LEN, dtype=np.int64)
        known[KNOWN_GEN] = 1
        for a in range(N_ACTIONS):
            known[a] = 3 if mask[a] else 2
        return greedy_action(params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan,
                             plan_n, hscore, hwin, rv, g, seat, known, key, ctr)
    return -1


@njit(_nrt=False, inline="always")
def seat_action(policy_id, params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                hscore, hwin, rv, g, seat, known, mask, key, ctr):
    """What the compiled policy of ``seat`` plays in game ``g`` (-1: nothing legal was chosen).

    The closed loops' one way to ask a policy.  An action it returns has been checked legal in this
    very state, so callers apply it with ``core.apply_action`` instead of checking it again: greedy
    checks only the actions it considers (``known`` caches the answers, and its choice is among
    them or checked last); other policies get the full legal mask (written into ``mask``) and a
    choice outside it counts as none."""
    if policy_id == GREEDY:
        forget_known(known)
        a = greedy_action(params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                          hscore, hwin, rv, g, seat, known, key, ctr)
        if a < 0 or a >= N_ACTIONS or not is_legal(known, a, gs, ps, hands, stock, disc, disc_by, minfo,
                                                   mcards, mas, plan, plan_n, hscore, hwin, rv, g):
            return -1
        return a
    k = legal_mask(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                   rv, g, mask)
    a = choose_action(policy_id, params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan,
                      plan_n, hscore, hwin, rv, g, seat, mask, k, key, ctr)
    if a >= 0 and a < N_ACTIONS and not mask[a]:
        return -1
    return a
