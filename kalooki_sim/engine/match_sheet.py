"""Match scoring for people: ``MatchScore`` keeps one game's score sheet in Python and applies hands
to it through the compiled kernels of ``match`` (the one implementation), ``score_match`` scores a
list of hands (docs/match-scoring.md).  Tests and examples read the sheet row by row here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from kalooki_sim.core.cards import JOKER, parse_cards
from kalooki_sim.core.rules import Rules, load_rules

from .match import (
    _HOW_BY_NAME, BUY_BACK_ALWAYS, BUY_BACK_NEVER, ERR_BAD_WINNER, EV_OFFER, EV_OTHERS_IN, EV_PAYMENT, EV_PENALTY,
    EV_STATUS, EV_TOTAL_AT_ELIMINATION, HOW_VOID, MATCH_ON, N_EV, STATUS_NAMES, final_money, match_winner_of,
    settle_hand, start_match,
)

__all__ = ["HandResult", "HandState", "MatchScore", "score_match"]


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
