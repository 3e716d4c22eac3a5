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
    float_bits, lowest_bit, rank_count_of, rank_count_words, ranks_above, ranks_above_words,
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
_SFW_RC = 12         # naturals held per rank (13)
_SFW_HIST = 25       # ranks per set need 0..smin (smin + 2 <= _SFW_HMAX)
_SFW_HMAX = 15
_SFW_BASE = _SFW_HIST + _SFW_HMAX   # the unchanged hand's shortfall
# ... and the two terms after one card leaves, which depend only on its suit and its rank's count:
_SFW_RUN_SAME = _SFW_BASE + 1        # run term when no suit's best window loses a card
_SFW_RUN_DROP = _SFW_RUN_SAME + 1    # run term when suit s's best grows by one (4)
_SFW_SET_MINUS = _SFW_RUN_DROP + 4   # set term when a rank held c times loses one (c = 1..smin;
                                     # c = smin + 1 stands for "more than smin": unchanged)
# ``_discard_pick``'s own part:
_SFW_SB_ACE = _SFW_SET_MINUS + _SFW_HMAX  # per suit: fewest missing once an ace leaves (4)
_SFW_U_RANK = _SFW_SB_ACE + 4            # order of n_one + gapw * n_gap, index 3 * n_one + n_gap
_SFW_U_GAPW = _SFW_U_RANK + 21           # ... for this gap weight (float bits + 1; 0: none yet)
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
    # naturals per rank, and ranks per set need (need 0: held smin times or more; smin: not
    # held), bytewise (``bits.rank_count_words``): a rank-by-rank count with a histogram
    # increment per rank chained its loads and stores
    lo, hi = rank_count_words(hand)
    for r in range(13):
        sfw[_SFW_RC + r] = rank_count_of(lo, hi, r)
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
    if T > 0:
        same = _sets_part(sfw[_SFW_HIST:_SFW_HIST + smin + 1], smin, T)
        # a rank held c times (1..smin) loses one: its need v = smin - c grows by one, and the sum
        # of the T smallest needs grows with it exactly when no rank left out of those T has need
        # <= v, i.e. when at most T ranks have need <= v (are held c times or more)
        n_le = 0
        for c in range(smin, 0, -1):
            n_le += sfw[_SFW_HIST + smin - c]
            sfw[_SFW_SET_MINUS + c] = same + (1 if n_le <= T else 0)
        sfw[_SFW_SET_MINUS + smin + 1] = same
        total += same
    sfw[_SFW_BASE] = total
    return True


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
        c = min(sfw[_SFW_RC + r], rv[R_SET_MIN_SIZE] + 1)
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
        c = sfw[_SFW_RC + r]
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
    are always very useful.  (The counts are summed as integers and weighted once, so
    ``_usefulness_counts`` gives exactly the same float.)
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


@njit(_nrt=False, inline="always")
def _usefulness_counts(r, h, held, suits, pm, ace_low, ace_high, dup):
    """``card_usefulness``'s two counts ``(n_one, n_gap)`` for a natural of rank ``r`` held ``h``
    times, from its suit's run positions ``pm`` (``positions.run_mask``) and the number of suits
    of its rank held (``suits``): a few bit tests instead of a neighbour scan, both ends of an ace
    chosen by select."""
    q = r + 1
    n_one = (suits - (1 if h > 0 else 0) + dup * (1 if h - held > 0 else 0)
             + (ace_low * ((pm >> 2) & 1) + ace_high * ((pm >> 13) & 1) if r == 0
                else ((pm >> (q - 1)) & 1) + ((pm >> (q + 1)) & 1)))
    n_gap = (ace_low * ((pm >> 3) & 1) + ace_high * ((pm >> 12) & 1) if r == 0
             else ((pm >> (q - 2)) & 1) + ((pm >> (q + 2)) & 1))
    return n_one, n_gap


@njit(_nrt=False)
def _usefulness_masked(hands, g, p, t, held, pm, ace_low, ace_high, dup, gapw):
    """``card_usefulness`` of natural ``t`` by ``_usefulness_counts`` (tests hold the two equal)."""
    r = t % 13
    suits = ((1 if hands[g, p, r] > 0 else 0) + (1 if hands[g, p, 13 + r] > 0 else 0)
             + (1 if hands[g, p, 26 + r] > 0 else 0) + (1 if hands[g, p, 39 + r] > 0 else 0))
    n_one, n_gap = _usefulness_counts(r, np.int64(hands[g, p, t]), held, suits, pm, ace_low, ace_high,
                                      1 if dup else 0)
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
            c = hands[g, p, r] + hands[g, p, 13 + r] + hands[g, p, 26 + r] + hands[g, p, 39 + r]
            if max(smin - c, 0) == need:
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
        c_r = hands[g, p, r] + hands[g, p, 13 + r] + hands[g, p, 26 + r] + hands[g, p, 39 + r]
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


@njit(_nrt=False)
def _usefulness_ranks(gapw, sfw):
    """Fill ``sfw[_SFW_U_RANK + 3 * n_one + n_gap]`` with the order of the usefulness
    ``n_one + gapw * n_gap`` (n_one 0..6, n_gap 0..2: the most ``_usefulness_counts`` gives)
    among all 21, equal values equal: an integer that compares like the float.  Kept, with
    ``_usefulness_key(gapw)`` in ``sfw[_SFW_U_GAPW]``, until the gap weight changes (a seat's gap
    weight is fixed, so the caller's check finds it there and this runs about once a game)."""
    for i in range(21):
        ui = np.float64(i // 3) + gapw * np.float64(i % 3)
        below = 0
        for j in range(21):
            below += 1 if np.float64(j // 3) + gapw * np.float64(j % 3) < ui else 0
        sfw[_SFW_U_RANK + i] = below
    sfw[_SFW_U_GAPW] = _usefulness_key(gapw)


@njit(_nrt=False, inline="always")
def _usefulness_key(gapw):
    """What ``sfw[_SFW_U_GAPW]`` holds once ``_usefulness_ranks`` has filled it for ``gapw``."""
    return float_bits(gapw) + 1


@njit(_nrt=False, inline="always")
def _held_ranks(hand, sfw, s):
    """Bit r set for each rank r of suit ``s`` in ``hand``, from its run positions in ``sfw``."""
    return ((sfw[_SFW_PM + s] >> 1) & 0x1FFE) | (1 if hand[13 * s] > 0 else 0)


@njit(_nrt=False)
def _discard_pick(hands, rv, g, seat, rnd, laid, contract, gapw, sfw):
    """The two naturals greedy would discard first, ``(best, runner_up)`` (-1 where none), legal
    or not, by the measure of ``greedy_action``.  When ``best`` is legal it is the best legal
    card; when it is not (usually the card just taken, which may not go back) ``runner_up`` is the
    best of the others, hence the best legal card if it is legal, and only then does greedy check
    every card.  ``sfw``: scratch, int64[_SFW_LEN] (``_sf_prepare``'s workspace).

    The measure (shortfall, usefulness, -penalty, the first card on ties) is packed into one
    integer per card, so the pick is two running minima without a branch: comparing the three
    parts one after another mispredicted about half the time.  Penalties are at most 1000
    (``rules`` checks), which the 10-bit field relies on.  The held cards are visited by the set
    bits of one word (each suit's ranks, from its run positions), not by a scan of all 52 types."""
    use_sf = not laid and contract
    fast = use_sf and _sf_prepare(hands, rv, g, seat, rnd, sfw)
    use_u = not laid or not contract
    ace_low = np.int64(1) if rv[R_ACE_LOW] == 1 else np.int64(0)
    ace_high = np.int64(1) if rv[R_ACE_HIGH] == 1 else np.int64(0)
    dup = np.int64(1) if rv[R_SET_ALLOW_DUPLICATE_SUIT] != 0 else np.int64(0)
    hand = hands[g, seat]
    if not fast:                     # (``_sf_prepare`` stored them)
        for s in range(4):
            sfw[_SFW_PM + s] = run_mask(hand, s, 2 - ace_low, 13 + ace_high)
    # the ranks held in each suit (the run positions 2..13 are ranks 1..12): per rank the suits
    # holding it (usefulness), four bit tests instead of four loads
    held0 = _held_ranks(hand, sfw, 0)
    held1 = _held_ranks(hand, sfw, 1)
    held2 = _held_ranks(hand, sfw, 2)
    held3 = _held_ranks(hand, sfw, 3)
    if use_u and sfw[_SFW_U_GAPW] != _usefulness_key(gapw):
        _usefulness_ranks(gapw, sfw)
    smin1 = rv[R_SET_MIN_SIZE] + 1
    F = rv[R_ROUND_BASE + rnd * ROUND_STRIDE + 6]
    base_sf = -np.int64(hand[JOKER]) + sfw[_SFW_RUN_SAME]
    none = np.int64(1) << 62
    best = none
    second = none
    # every held natural in one loop, by the set bits of one word (suit-major, so the same order
    # as the types): a loop per suit mispredicted its exit four times a call
    left = held0 | (held1 << 13) | (held2 << 26) | (held3 << 39)
    while left != 0:
        t = lowest_bit(left)
        left &= left - 1
        s = (t * 5) >> 6                     # t // 13 for t < 52
        r = t - 13 * s
        h = np.int64(hand[t])
        sf = np.int64(0)
        if fast:
            run_drop = sfw[_SFW_RUN_DROP + s] - sfw[_SFW_RUN_SAME]
            if r == 0:
                # ``_sf_changed(.., ace, -1, ..)``: without the ace the suit's fewest missing is
                # one more or the same (a window holds at most one of its two positions), so the
                # run term is the one of a suit one worse (``_SFW_RUN_DROP``) or unchanged
                sf = -np.int64(hand[JOKER]) + sfw[_SFW_SET_MINUS + min(sfw[_SFW_RC], smin1)]
                if F > 0:
                    sf += sfw[_SFW_RUN_SAME] + (run_drop if sfw[_SFW_SB_ACE + s] != sfw[_SFW_SB + s]
                                                else 0)
            else:
                # ``_sf_changed(.., t, -1, ..)`` for a natural other than an ace, spelled out
                drop = ((sfw[_SFW_COV + s] >> (r + 1)) & 1) * (1 if h == 1 else 0)
                sf = base_sf + drop * run_drop + sfw[_SFW_SET_MINUS + min(sfw[_SFW_RC + r], smin1)]
        elif use_sf:
            sf = _shortfall_with(hands, rv, g, seat, rnd, t, -1)
        u_rank = np.int64(0)
        if use_u:
            suits = (((held0 >> r) & 1) + ((held1 >> r) & 1) + ((held2 >> r) & 1)
                     + ((held3 >> r) & 1))
            n_one, n_gap = _usefulness_counts(r, h, 1, suits, sfw[_SFW_PM + s], ace_low, ace_high,
                                              dup)
            u_rank = sfw[_SFW_U_RANK + 3 * n_one + n_gap]
        key = ((sf + 2048) << 48) | (u_rank << 40) | ((1023 - rv[R_PENALTY + t]) << 8) | t
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
