"""Match scoring: one hand's result applied to the score sheet (docs/rules.md §2.2, §2.5, §2.6, §2.7).

The score sheet of a game is five small arrays per game (seat-indexed, ``n_players`` used):

``active[P]``        1 while the player is in the game (``elimination_pool``; always 1 otherwise)
``totals[P]``        cumulative penalty points (the sheet's *points* columns; reset on a buy-back)
``units[P]``         running net of hand payments (the *units* columns; antes and buy-backs are not
                     booked here, docs/rules.md §2.2 "Score sheet")
``buybacks_used[P]`` buy-backs taken this game
``pool[1]``          antes + buy-back payments (the *pool* column, as a running total)

Three compiled kernels work on them (every variant shares them: the rules arrive as
``Rules.to_vector()``):

* ``start_match`` clears the sheet and collects the antes;
* ``settle_hand`` applies one hand per ``match_mode`` and returns the match winner (or ``MATCH_ON``);
* ``final_money`` gives each player's money: units - ante - buy-backs x stake + pool (game winner).

``match_mode`` decides which knobs take part:

``elimination_pool`` (K40, K51, K101)
    Losers' penalties (x ``kalooki_penalty_multiplier`` when the hand ended in kalooki, V6) are added
    to their totals; every loser who was in the game at the start of the hand pays ``stake_rip`` to
    the winner, or ``stake_kalooki`` instead of it after a kalooki (A25) -- a player eliminated by
    that very hand still pays.  A loser whose total reaches ``elimination_at`` is eliminated (A18).
    Buy-backs are then offered one at a time to the players eliminated by this hand, from the
    winner's left in the direction of play (A27, A35); a player may buy back when he wants to, has
    used fewer than ``buy_back_limit`` buy-backs, and at least ``buy_back_min_other_active`` other
    players are in the game at that moment (earlier buy-backs of the same sequence count).  He pays
    ``stake_buy_back`` into the pool and his total becomes the highest total among the players in
    the game.  The game is over when one player is left; he takes the pool.
``per_hand_points`` (NA15)
    Each loser pays ``pay_per_penalty_point`` per penalty point to the winner; no kalooki extra.
``per_hand_cards`` (AMER)
    Each loser pays ``pay_per_card`` per natural card and ``pay_per_joker`` per joker left in hand;
    the whole payment is multiplied by ``kalooki_payment_multiplier`` after a kalooki.
``fixed_hands_low_total`` (CARIB)
    Penalties are added to the totals, nothing else -- also after a hand stopped without a winner
    (turn cap, void cap), which Caribbean scores as it stands; the winner of the match is chosen by
    ``engine.match_flow.match_winners`` after ``n_hands`` hands.

Totals accumulate in every mode (informational in the per-hand modes).  Antes, pool, elimination,
buy-backs and rip/kalooki stakes exist only in ``elimination_pool``; the payment knobs of the other
modes are ignored there (and vice versa).  A void hand (``how = HOW_VOID``) or a hand without a
winner changes nothing.

**Buy-back decisions.**  The kernel does not decide: it reads ``wants_buy_back[P]`` (1 = this player
buys back if he is eliminated by this hand and the rules allow it).  The simulator's default policy
is *always buy back when allowed* (``BUY_BACK_ALWAYS``); ``match_sheet.MatchScore`` also accepts "never", one
flag per seat, a callable, or a per-hand override.  See docs/match-scoring.md.

``settle_hand`` also fills ``events[P, N_EV]`` with what happened to each seat in this hand (penalty
added, unit change, status, buy-back offer order, players counted at the buy-back check, total at
elimination), so tests and records can read the sequence without re-deriving it.
"""

from __future__ import annotations

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import (
    MATCH_MODE_ELIMINATION_POOL, MATCH_MODE_FIXED_HANDS_LOW_TOTAL, MATCH_MODE_PER_HAND_CARDS,
    MATCH_MODE_PER_HAND_POINTS, PLAY_DIRECTION_LEFT, R_BUY_BACK_LIMIT, R_BUY_BACK_MIN_OTHER_ACTIVE,
    R_DOWN_AND_OUT_MULTIPLIER, R_ELIMINATION_AT, R_KALOOKI_PAYMENT_MULTIPLIER, R_KALOOKI_PENALTY_MULTIPLIER,
    R_MATCH_MODE, R_PAY_PER_CARD, R_PAY_PER_JOKER, R_PAY_PER_PENALTY_POINT, R_PLAY_DIRECTION, R_STAKE_ANTE,
    R_STAKE_BUY_BACK, R_STAKE_KALOOKI, R_STAKE_RIP,
)

__all__ = [
    "HOW_VOID", "HOW_RIP", "HOW_KALOOKI", "HOW_DOWN_AND_OUT", "MATCH_ON", "ERR_BAD_WINNER",
    "MATCH_MODE_FIXED_HANDS_LOW_TOTAL", "MATCH_MODE_ELIMINATION_POOL", "MATCH_MODE_PER_HAND_POINTS",
    "MATCH_MODE_PER_HAND_CARDS",
    "ST_IN", "ST_OUT", "ST_BOUGHT_BACK", "ST_DECLINED", "ST_REFUSED_LIMIT", "ST_REFUSED_FEW_PLAYERS",
    "STATUS_NAMES", "EV_PENALTY", "EV_PAYMENT", "EV_STATUS", "EV_OFFER", "EV_OTHERS_IN",
    "EV_TOTAL_AT_ELIMINATION", "N_EV", "BUY_BACK_ALWAYS", "BUY_BACK_NEVER",
    "start_match", "settle_hand", "final_money", "match_winner_of", "penalty_multiplier",
]

# How a hand ended (argument ``how``).  "Down and out": the winner laid his first cards in the turn
# he went out, where the rules have no kalooki (Caribbean's ``down_and_out_multiplier``); with
# ``kalooki_enabled`` that ending is a kalooki.
HOW_VOID = -1
HOW_RIP = 0
HOW_KALOOKI = 1
HOW_DOWN_AND_OUT = 2
_HOW_BY_NAME = {"void": HOW_VOID, "rip": HOW_RIP, "kalooki": HOW_KALOOKI, "down_and_out": HOW_DOWN_AND_OUT}
_HOW_NAMES = {v: k for k, v in _HOW_BY_NAME.items()}

# Return values of settle_hand (>= 0: seat of the match winner).
MATCH_ON = -1
ERR_BAD_WINNER = -2

# Status of a seat after a hand (events[:, EV_STATUS]).  Every ST_* >= ST_OUT means "not in the game".
ST_IN = 0                    # in the game after this hand (incl. the hand winner)
ST_BOUGHT_BACK = 1           # eliminated by this hand and bought back: in the game
ST_OUT = 2                   # was already out before this hand
ST_DECLINED = 3              # eliminated by this hand; allowed to buy back but did not want to
ST_REFUSED_LIMIT = 4         # eliminated by this hand; buy_back_limit used up
ST_REFUSED_FEW_PLAYERS = 5   # eliminated by this hand; fewer than buy_back_min_other_active others in
STATUS_NAMES = ("in", "bought_back", "out", "declined", "refused_limit", "refused_few_players")

# Columns of events[P, N_EV].
EV_PENALTY = 0               # penalty points added to the total (after the kalooki multiplier)
EV_PAYMENT = 1               # change of the units column in this hand (+ received, - paid)
EV_STATUS = 2                # ST_*
EV_OFFER = 3                 # 1, 2, ... order in which the buy-back check reached him (0: none)
EV_OTHERS_IN = 4             # other players in the game counted at his buy-back check (-1: none)
EV_TOTAL_AT_ELIMINATION = 5  # his total when eliminated, before any reset (0: not eliminated)
N_EV = 6

BUY_BACK_ALWAYS = "always"
BUY_BACK_NEVER = "never"


# ------------------------------------------------------------------------------------------------
# Compiled kernels


@njit(_nrt=False)
def penalty_multiplier(rv, how):
    """What a loser's card values are multiplied by after a hand that ended ``how``.

    The one place the kalooki (A24/V6) and down-and-out multipliers are applied: the engine scores
    its hands with it and the score sheet settles them with it."""
    if how == HOW_KALOOKI:
        return rv[R_KALOOKI_PENALTY_MULTIPLIER]
    if how == HOW_DOWN_AND_OUT:
        return rv[R_DOWN_AND_OUT_MULTIPLIER]
    return 1


@njit
def start_match(rv, n_players, active, totals, units, buybacks_used, pool):
    """Clear the sheet for a new game; in ``elimination_pool`` every player pays the ante into the pool."""
    for p in range(n_players):
        active[p] = 1
        totals[p] = 0
        units[p] = 0
        buybacks_used[p] = 0
    if rv[R_MATCH_MODE] == MATCH_MODE_ELIMINATION_POOL:
        pool[0] = n_players * rv[R_STAKE_ANTE]
    else:
        pool[0] = 0


@njit
def match_winner_of(rv, n_players, active):
    """Seat of the game winner (the last player in) in ``elimination_pool``, else ``MATCH_ON``."""
    if rv[R_MATCH_MODE] != MATCH_MODE_ELIMINATION_POOL:
        return MATCH_ON
    last = -1
    n_in = 0
    for p in range(n_players):
        if active[p] != 0:
            n_in += 1
            last = p
    return last if n_in == 1 else MATCH_ON


@njit
def settle_hand(rv, n_players, active, totals, units, buybacks_used, pool,
                winner, how, penalties, cards_left, jokers_left, wants_buy_back, events):
    """Apply one hand's result to the sheet; returns the match winner's seat or ``MATCH_ON``.

    ``winner``: seat that went out (< 0: no winner, the hand changes nothing); ``how``: ``HOW_RIP``,
    ``HOW_KALOOKI``, ``HOW_DOWN_AND_OUT`` or ``HOW_VOID``; ``penalties[P]``: value of the cards each
    loser holds (before ``penalty_multiplier``; the winner's entry is ignored); ``cards_left[P]`` / ``jokers_left[P]``:
    cards (jokers included) and jokers each loser holds (only ``per_hand_cards`` reads them);
    ``wants_buy_back[P]``: 1 = buys back when eliminated by this hand and allowed.

    A finished game is sticky: the sheet is left alone and the winner returned again.  A winner who
    is not in the game (or not a seat) changes nothing and returns ``ERR_BAD_WINNER``.
    """
    mode = rv[R_MATCH_MODE]
    for p in range(n_players):
        events[p, EV_PENALTY] = 0
        events[p, EV_PAYMENT] = 0
        events[p, EV_STATUS] = ST_IN if active[p] != 0 else ST_OUT
        events[p, EV_OFFER] = 0
        events[p, EV_OTHERS_IN] = -1
        events[p, EV_TOTAL_AT_ELIMINATION] = 0

    done = match_winner_of(rv, n_players, active)
    if done != MATCH_ON:
        return done
    if how == HOW_VOID or winner < 0:
        if mode == MATCH_MODE_FIXED_HANDS_LOW_TOTAL:
            # Caribbean scores a hand stopped without a winner (turn cap, void cap) as it stands:
            # everybody's cards count (the engine's A52 rule); the other modes settle nothing (MS8)
            for p in range(n_players):
                totals[p] += penalties[p]
                events[p, EV_PENALTY] = penalties[p]
        return MATCH_ON
    if winner >= n_players or active[winner] == 0:
        return ERR_BAD_WINNER

    kalooki = how == HOW_KALOOKI
    pen_mult = penalty_multiplier(rv, how)

    # --- payments and penalties: losers in the game at the start of the hand ---------------------
    for p in range(n_players):
        if p == winner or active[p] == 0:
            continue
        pen = penalties[p] * pen_mult
        pay = 0
        if mode == MATCH_MODE_ELIMINATION_POOL:
            pay = rv[R_STAKE_KALOOKI] if kalooki else rv[R_STAKE_RIP]
        elif mode == MATCH_MODE_PER_HAND_POINTS:
            pay = rv[R_PAY_PER_PENALTY_POINT] * pen
        elif mode == MATCH_MODE_PER_HAND_CARDS:
            pay = (rv[R_PAY_PER_CARD] * (cards_left[p] - jokers_left[p])
                   + rv[R_PAY_PER_JOKER] * jokers_left[p])
            if kalooki:
                pay *= rv[R_KALOOKI_PAYMENT_MULTIPLIER]
        totals[p] += pen
        units[p] -= pay
        units[winner] += pay
        events[p, EV_PENALTY] = pen
        events[p, EV_PAYMENT] = -pay
        events[winner, EV_PAYMENT] += pay

    if mode != MATCH_MODE_ELIMINATION_POOL:
        return MATCH_ON

    # --- elimination (A18: total >= elimination_at) ----------------------------------------------
    limit = rv[R_ELIMINATION_AT]
    n_elim = 0
    for p in range(n_players):
        if p != winner and active[p] != 0 and totals[p] >= limit:
            active[p] = 0
            events[p, EV_TOTAL_AT_ELIMINATION] = totals[p]
            events[p, EV_STATUS] = ST_DECLINED   # refined by the buy-back check below
            n_elim += 1

    # --- buy-backs, one at a time from the winner's left in the direction of play (A27, A35) -----
    if n_elim > 0:
        step = 1 if rv[R_PLAY_DIRECTION] == PLAY_DIRECTION_LEFT else -1
        offer = 0
        for k in range(1, n_players):
            p = (winner + step * k) % n_players
            if events[p, EV_TOTAL_AT_ELIMINATION] == 0:
                continue                           # not eliminated by this hand
            offer += 1
            others = 0
            high = 0
            for q in range(n_players):
                if q != p and active[q] != 0:
                    others += 1
                    if totals[q] > high:
                        high = totals[q]
            events[p, EV_OFFER] = offer
            events[p, EV_OTHERS_IN] = others
            if buybacks_used[p] >= rv[R_BUY_BACK_LIMIT]:
                events[p, EV_STATUS] = ST_REFUSED_LIMIT
            elif others < rv[R_BUY_BACK_MIN_OTHER_ACTIVE]:
                events[p, EV_STATUS] = ST_REFUSED_FEW_PLAYERS
            elif wants_buy_back[p] == 0:
                events[p, EV_STATUS] = ST_DECLINED
            else:
                active[p] = 1
                buybacks_used[p] += 1
                totals[p] = high                   # buy_back_reset = "max_active_total"
                pool[0] += rv[R_STAKE_BUY_BACK]
                events[p, EV_STATUS] = ST_BOUGHT_BACK

    return match_winner_of(rv, n_players, active)


@njit
def final_money(rv, n_players, active, units, buybacks_used, pool, out):
    """Money of each player (docs/rules.md §2.2): units - ante - buy-backs x stake + pool for the game winner.

    Before the game is over nobody holds the pool, so the amounts only sum to zero at the end.
    Per-hand modes have no ante, buy-back or pool: money = units.
    """
    pool_mode = rv[R_MATCH_MODE] == MATCH_MODE_ELIMINATION_POOL
    ante = rv[R_STAKE_ANTE] if pool_mode else 0
    w = match_winner_of(rv, n_players, active)
    for p in range(n_players):
        m = units[p]
        if pool_mode:
            m -= ante + buybacks_used[p] * rv[R_STAKE_BUY_BACK]
            if p == w:
                m += pool[0]
        out[p] = m
