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
is *always buy back when allowed* (``BUY_BACK_ALWAYS``); ``MatchScore`` also accepts "never", one
flag per seat, a callable, or a per-hand override.  See docs/match-scoring.md.

``settle_hand`` also fills ``events[P, N_EV]`` with what happened to each seat in this hand (penalty
added, unit change, status, buy-back offer order, players counted at the buy-back check, total at
elimination), so tests and records can read the sequence without re-deriving it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .cards import JOKER, parse_cards
from .jit import njit
from .rules import Rules, load_rules
from .rulevec import (
    MATCH_MODE_ELIMINATION_POOL, MATCH_MODE_FIXED_HANDS_LOW_TOTAL, MATCH_MODE_PER_HAND_CARDS,
    MATCH_MODE_PER_HAND_POINTS, PLAY_DIRECTION_LEFT, R_BUY_BACK_LIMIT, R_BUY_BACK_MIN_OTHER_ACTIVE,
    R_DOWN_AND_OUT_MULTIPLIER, R_ELIMINATION_AT, R_KALOOKI_PAYMENT_MULTIPLIER, R_KALOOKI_PENALTY_MULTIPLIER, R_MATCH_MODE,
    R_PAY_PER_CARD, R_PAY_PER_JOKER, R_PAY_PER_PENALTY_POINT, R_PLAY_DIRECTION, R_STAKE_ANTE,
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
    "HandResult", "HandState", "MatchScore", "score_match",
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


# ------------------------------------------------------------------------------------------------
# Readable wrapper


@dataclass(frozen=True)
class HandResult:
    """One hand as the match scorer sees it.  Seats are 0-based (P1 = seat 0).

    ``winner``: seat that went out, ``None`` for a void hand.  ``how``: "rip", "kalooki",
    "down_and_out" or "void".  ``penalties``: value of each player's cards left in hand (winner 0),
    before the kalooki or down-and-out multiplier.  ``cards`` / ``jokers``: cards (jokers included) / jokers left per seat, needed by
    ``per_hand_cards`` only.  ``buy_back``: optional per-seat decisions for this hand, overriding the
    match's buy-back policy.
    """

    winner: int | None
    how: str = "rip"
    penalties: tuple[int, ...] = ()
    cards: tuple[int, ...] = ()
    jokers: tuple[int, ...] = ()
    buy_back: tuple[bool, ...] | None = None

    def __post_init__(self):
        for name in ("penalties", "cards", "jokers"):
            object.__setattr__(self, name, tuple(int(x) for x in getattr(self, name)))
        if self.buy_back is not None:
            object.__setattr__(self, "buy_back", tuple(bool(b) for b in self.buy_back))

    @classmethod
    def void(cls) -> "HandResult":
        return cls(None, "void")

    @classmethod
    def from_cards(cls, rules, winner: int, how: str, hands: Sequence[str | Iterable],
                   buy_back=None) -> "HandResult":
        """Penalties, card and joker counts from the cards each seat holds (text such as ``"JK AS 7C"``)."""
        r = rules if isinstance(rules, Rules) else load_rules(rules)
        pens, cards, jokers = [], [], []
        for h in hands:
            cs = parse_cards(h)
            pens.append(sum(r.penalty_value[c.type] for c in cs))
            cards.append(len(cs))
            jokers.append(sum(1 for c in cs if c.type == JOKER))
        return cls(winner, how, tuple(pens), tuple(cards), tuple(jokers),
                   None if buy_back is None else tuple(bool(b) for b in buy_back))

    @classmethod
    def coerce(cls, h: Any) -> "HandResult":
        """Accept a ``HandResult``, a mapping of its fields, or ``(winner, how, penalties[, cards, jokers])``."""
        if isinstance(h, HandResult):
            return h
        if isinstance(h, Mapping):
            return cls(**h)
        if isinstance(h, (tuple, list)):
            return cls(*h)
        raise TypeError(f"cannot read a hand result from {h!r}")


@dataclass(frozen=True)
class HandState:
    """The score sheet after one hand (``hand`` = 0: after the antes).  Seats are 0-based.

    ``status`` per seat is one of ``STATUS_NAMES``; ``offer_order`` / ``others_in`` describe the
    buy-back checks of this hand (0 / -1 when a seat was not checked).  ``money`` = units - ante -
    buy-backs x stake + pool for the game winner (only sums to zero once the game is over).
    """

    hand: int
    winner: int | None
    how: str
    totals: tuple[int, ...]
    units: tuple[int, ...]
    active: tuple[bool, ...]
    buybacks: tuple[int, ...]
    pool: int
    penalties: tuple[int, ...]
    payments: tuple[int, ...]
    status: tuple[str, ...]
    offer_order: tuple[int, ...]
    others_in: tuple[int, ...]
    total_at_elimination: tuple[int, ...]
    match_winner: int | None
    money: tuple[int, ...]

    @property
    def over(self) -> bool:
        return self.match_winner is not None

    @property
    def eliminated(self) -> tuple[int, ...]:
        """Seats eliminated by this hand (whether or not they bought back)."""
        return tuple(p for p, t in enumerate(self.total_at_elimination) if t > 0)

    @property
    def bought_back(self) -> tuple[int, ...]:
        return tuple(p for p, s in enumerate(self.status) if s == "bought_back")


BuyBackPolicy = str | bool | Sequence[bool] | Callable[["MatchScore", int], bool]


class MatchScore:
    """Score sheet of one game, driven hand by hand through the compiled kernels.

    ``buy_back`` is the buy-back policy of the simulated players: ``"always"`` (default: buy back
    whenever the rules allow), ``"never"``, a bool, one bool per seat, or a callable
    ``f(match, seat) -> bool`` asked for every seat before each hand is settled (the answer is
    used only if that seat is eliminated by the hand).  ``HandResult.buy_back`` overrides it for
    one hand.
    """

    def __init__(self, rules, n_players: int, buy_back: BuyBackPolicy = BUY_BACK_ALWAYS):
        self.rules = rules if isinstance(rules, Rules) else load_rules(rules)
        r = self.rules
        if not isinstance(n_players, (int, np.integer)) or not r.players_min <= n_players <= r.players_max:
            raise ValueError(f"{r.name}: n_players must be in {r.players_min}..{r.players_max}, got {n_players!r}")
        self.n_players = int(n_players)
        self.buy_back = buy_back
        if not callable(buy_back):
            self._policy_flags(buy_back)       # validate early
        self.rv = r.to_vector()
        n = self.n_players
        self.active = np.zeros(n, np.int64)
        self.totals = np.zeros(n, np.int64)
        self.units = np.zeros(n, np.int64)
        self.buybacks = np.zeros(n, np.int64)
        self.pool = np.zeros(1, np.int64)
        self.events = np.zeros((n, N_EV), np.int64)
        self.hands_played = 0
        self.match_winner: int | None = None
        start_match(self.rv, n, self.active, self.totals, self.units, self.buybacks, self.pool)
        self.history: list[HandState] = [self._state(None, "start")]

    @classmethod
    def from_sheet(cls, rules, totals: Sequence[int], *, units: Sequence[int] | None = None,
                   active: Sequence[bool] | None = None, buybacks: Sequence[int] | None = None,
                   pool: int | None = None, buy_back: BuyBackPolicy = BUY_BACK_ALWAYS) -> "MatchScore":
        """A game in progress, set up from a score sheet (tests, resuming): one value per seat.

        Defaults: units 0, everyone in, no buy-backs used, pool = antes + buy-backs already paid.
        """
        n = len(totals)
        m = cls(rules, n, buy_back)
        for arr, vals, what in ((m.totals, totals, "totals"), (m.units, units, "units"),
                                (m.active, active, "active"), (m.buybacks, buybacks, "buybacks")):
            if vals is not None:
                if len(vals) != n:
                    raise ValueError(f"{what} must give {n} values (one per seat), got {len(vals)}")
                arr[:] = [int(v) for v in vals]
        if pool is not None:
            m.pool[0] = int(pool)
        elif m.rules.match_mode == "elimination_pool":
            m.pool[0] += int(m.buybacks.sum()) * m.rules.stake_buy_back
        if m.rules.match_mode == "elimination_pool":
            lim = m.rules.elimination_at
            bad = [p for p in range(n) if m.active[p] and m.totals[p] >= lim]
            if bad:
                raise ValueError(f"P{bad[0] + 1} is in the game with a total >= elimination_at ({lim})")
            if not m.active.any():
                raise ValueError("nobody is in the game")
        w = match_winner_of(m.rv, n, m.active)
        m.match_winner = None if w == MATCH_ON else int(w)
        m.history = [m._state(None, "start")]
        return m

    # --------------------------------------------------------------------------------------------
    @property
    def over(self) -> bool:
        return self.match_winner is not None

    def money(self) -> tuple[int, ...]:
        out = np.zeros(self.n_players, np.int64)
        final_money(self.rv, self.n_players, self.active, self.units, self.buybacks, self.pool, out)
        return tuple(int(x) for x in out)

    def play(self, hand) -> HandState:
        """Settle one hand (a ``HandResult`` or anything ``HandResult.coerce`` reads); returns the new state."""
        h = HandResult.coerce(hand)
        n = self.n_players
        if self.over:
            raise ValueError(f"the game is over (P{self.match_winner + 1} won after hand {self.hands_played})")
        how = _HOW_BY_NAME.get(h.how)
        if how is None:
            raise ValueError(f"how must be one of {sorted(_HOW_BY_NAME)}, got {h.how!r}")
        void = how == HOW_VOID or h.winner is None
        if not void:
            if not 0 <= h.winner < n:
                raise ValueError(f"winner seat {h.winner} is not in 0..{n - 1}")
            if not self.active[h.winner]:
                raise ValueError(f"winner P{h.winner + 1} is not in the game")
        pens = self._per_seat(h.penalties, "penalties", required=not void)
        mode = self.rules.match_mode
        cards = self._per_seat(h.cards, "cards", required=not void and mode == "per_hand_cards")
        jokers = self._per_seat(h.jokers, "jokers", required=False)
        if not void:
            if pens[h.winner] != 0:
                raise ValueError(f"the winner P{h.winner + 1} cannot have penalty points ({pens[h.winner]})")
            if (pens < 0).any() or (cards < 0).any() or (jokers < 0).any():
                raise ValueError("penalties, cards and jokers must be >= 0")
            if mode == "per_hand_cards" and (jokers > cards).any():
                raise ValueError("a seat cannot hold more jokers than cards (cards count jokers too)")
        wants = self._policy_flags(h.buy_back if h.buy_back is not None else self.buy_back)
        w = -1 if void else int(h.winner)
        res = settle_hand(self.rv, n, self.active, self.totals, self.units, self.buybacks, self.pool,
                          w, how if not void else HOW_VOID, pens, cards, jokers, wants, self.events)
        if res == ERR_BAD_WINNER:            # guarded above; kept for safety
            raise ValueError(f"winner P{w + 1} is not in the game")
        self.hands_played += 1
        self.match_winner = None if res == MATCH_ON else int(res)
        st = self._state(None if void else w, "void" if void else h.how)
        self.history.append(st)
        return st

    # --------------------------------------------------------------------------------------------
    def _per_seat(self, values, what: str, required: bool) -> np.ndarray:
        n = self.n_players
        if values is None or len(values) == 0:
            if required:
                raise ValueError(f"{what} needed for every seat ({n} values)")
            return np.zeros(n, np.int64)
        if len(values) != n:
            raise ValueError(f"{what} must give {n} values (one per seat), got {len(values)}")
        return np.asarray([int(v) for v in values], dtype=np.int64)

    def _policy_flags(self, policy) -> np.ndarray:
        n = self.n_players
        if isinstance(policy, str):
            if policy not in (BUY_BACK_ALWAYS, BUY_BACK_NEVER):
                raise ValueError(f"buy-back policy must be 'always', 'never', bools or a callable, got {policy!r}")
            return np.full(n, 1 if policy == BUY_BACK_ALWAYS else 0, np.int8)
        if isinstance(policy, (bool, np.bool_)):
            return np.full(n, int(policy), np.int8)
        if callable(policy):
            return np.asarray([1 if policy(self, p) else 0 for p in range(n)], np.int8)
        flags = list(policy)
        if len(flags) != n:
            raise ValueError(f"buy-back decisions must give {n} values (one per seat), got {len(flags)}")
        return np.asarray([1 if f else 0 for f in flags], np.int8)

    def _state(self, winner, how) -> HandState:
        ev = self.events
        started = how == "start"
        n = self.n_players
        col = lambda c, d: tuple(d for _ in range(n)) if started else tuple(int(x) for x in ev[:, c])
        status = (tuple("in" if a else "out" for a in self.active) if started
                  else tuple(STATUS_NAMES[int(s)] for s in ev[:, EV_STATUS]))
        return HandState(
            hand=self.hands_played, winner=winner, how=how,
            totals=tuple(int(x) for x in self.totals), units=tuple(int(x) for x in self.units),
            active=tuple(bool(x) for x in self.active), buybacks=tuple(int(x) for x in self.buybacks),
            pool=int(self.pool[0]), penalties=col(EV_PENALTY, 0), payments=col(EV_PAYMENT, 0),
            status=status, offer_order=col(EV_OFFER, 0), others_in=col(EV_OTHERS_IN, -1),
            total_at_elimination=col(EV_TOTAL_AT_ELIMINATION, 0),
            match_winner=self.match_winner, money=self.money(),
        )


def score_match(rules, n_players: int, hands: Iterable, buy_back: BuyBackPolicy = BUY_BACK_ALWAYS) -> list[HandState]:
    """Score a whole game; ``states[k]`` is the score-sheet row "after hand k" (``states[0]``: antes).

    ``hands``: ``HandResult`` values (or ``(winner, how, penalties[, cards, jokers])`` tuples /
    mappings), seats 0-based.  Raises ``ValueError`` for a hand after the game is over, a winner
    who is not in the game, or per-seat lists of the wrong length.
    """
    m = MatchScore(rules, n_players, buy_back)
    for h in hands:
        m.play(h)
    return list(m.history)
