"""Card types, their text form, and per-variant value tables.

The two (or three) physical copies of a natural card are interchangeable for every rule, so the
engine works with *card types*: ``suit * 13 + rank_index`` for the 52 naturals (rank index 0 = ace,
1 = two, ..., 12 = king; suits C, D, H, S) and ``JOKER = 52``.  A hand is a count vector over the
53 types.  Text uses the notation of docs/rules.md §1.3: ``AH 10S QD JK`` and declared jokers ``JK=6H``.
"""

from __future__ import annotations

from typing import Iterable, NamedTuple, Sequence

import numpy as np

SUITS = "CDHS"
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
N_SUITS = 4
N_RANKS = 13
N_NATURAL = 52
JOKER = 52
N_TYPES = 53
JOKER_TEXT = "JK"

_RANK_INDEX = {r: i for i, r in enumerate(RANKS)}
_RANK_INDEX["T"] = 9  # tolerated alias for 10 on input; output always uses "10"


def _card_int(x, what: str) -> int:
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"Card {what} must be an integer, not {type(x).__name__} {x!r}")
    return int(x)


class _CardFields(NamedTuple):
    type: int
    as_type: int = -1


class Card(_CardFields):
    """One card as written in a meld: its type and, for a joker, the natural it stands for.

    ``as_type`` is -1 for naturals and for undeclared jokers.  ``type`` must be 0..52 and
    ``as_type`` -1 or, for a joker only, a natural 0..51 (``ValueError``/``TypeError`` otherwise:
    the kernels index tables with them).
    """

    __slots__ = ()

    def __new__(cls, type: int, as_type: int = -1):
        t = _card_int(type, "type")
        a = _card_int(as_type, "as_type")
        if not 0 <= t < N_TYPES:
            raise ValueError(f"card type {type!r} is not in 0..52 (52 = joker)")
        if a != -1:
            if t != JOKER:
                raise ValueError(f"as_type {as_type!r} given for the natural {type_text(t)}: only a joker "
                                 "stands for another card (use -1)")
            if not 0 <= a < N_NATURAL:
                raise ValueError(f"a joker's as_type {as_type!r} is not -1 or a natural 0..51")
        return super().__new__(cls, t, a)

    @property
    def is_joker(self) -> bool:
        return self.type == JOKER

    def __str__(self) -> str:
        return card_text(self)


def suit_of(card_type: int) -> int:
    return card_type // N_RANKS


def rank_of(card_type: int) -> int:
    """Rank index 0..12 (0 = ace)."""
    return card_type % N_RANKS


def make_type(suit: int, rank_index: int) -> int:
    return suit * N_RANKS + rank_index


def is_red(card_type: int) -> bool:
    """Diamonds and hearts; matters only for Caribbean ace penalties."""
    return card_type != JOKER and suit_of(card_type) in (1, 2)


def type_text(card_type: int) -> str:
    if card_type == JOKER:
        return JOKER_TEXT
    if not 0 <= card_type < N_NATURAL:
        raise ValueError(f"card type {card_type} is not in 0..52")
    return RANKS[rank_of(card_type)] + SUITS[suit_of(card_type)]


def card_text(card: Card | int) -> str:
    if isinstance(card, Card):
        if card.type == JOKER and card.as_type >= 0:
            return f"{JOKER_TEXT}={type_text(card.as_type)}"
        return type_text(card.type)
    return type_text(int(card))


def _parse_natural(token: str, whole: str) -> int:
    t = token.strip().upper()
    if len(t) < 2 or t[-1] not in SUITS or t[:-1] not in _RANK_INDEX:
        raise ValueError(f"cannot parse card token {whole!r}")
    return make_type(SUITS.index(t[-1]), _RANK_INDEX[t[:-1]])


def parse_card(token: str) -> Card:
    """``"AH"`` -> Card(26, -1); ``"JK=6H"`` -> Card(52, 31).  Raises ValueError naming the token."""
    if not isinstance(token, str):
        raise ValueError(f"cannot parse card token {token!r}: expected text")
    t = token.strip().upper()
    if t == JOKER_TEXT:
        return Card(JOKER)
    if t.startswith(JOKER_TEXT + "="):
        return Card(JOKER, _parse_natural(t[3:], token))
    return Card(_parse_natural(t, token))


def parse_cards(cards: str | Iterable[str | Card | int]) -> list[Card]:
    """Text (``"5H JK=6H 7H"``, brackets and commas ignored) or a sequence of tokens/Cards/type ids."""
    if isinstance(cards, str):
        tokens: Sequence = cards.replace("[", " ").replace("]", " ").replace(",", " ").split()
    elif isinstance(cards, (bytes, bytearray, Card)) or not isinstance(cards, Iterable):
        raise TypeError(f"cards must be a text or a sequence of tokens, Cards or type ids, "
                        f"not {type(cards).__name__}")
    else:
        tokens = list(cards)
    out = []
    for tok in tokens:
        if isinstance(tok, Card):
            out.append(Card(tok.type, tok.as_type))     # (re-checked: a tuple can be built around __new__)
        elif isinstance(tok, (bool, np.bool_)):
            raise TypeError(f"card token {tok!r}: a bool is not a card")
        elif isinstance(tok, (int, np.integer)):
            if not 0 <= int(tok) < N_TYPES:
                raise ValueError(f"card type {tok!r} is not in 0..52")
            out.append(Card(int(tok)))
        else:
            out.append(parse_card(tok))
    return out


def format_cards(cards: Iterable[Card | int]) -> str:
    return " ".join(card_text(c) for c in cards)


def to_ids(cards: str | Iterable[str | Card | int]) -> list[int]:
    """Card type ids of a text or token list (``"AH 10S JK"`` -> ``[26, 48, 52]``)."""
    return [c.type for c in parse_cards(cards)]


def to_text(ids: Iterable[int | Card]) -> str:
    """Text of card type ids or Cards (``[26, 48, 52]`` -> ``"AH 10S JK"``)."""
    return format_cards(parse_cards(list(ids)))


def counts_of(cards: str | Iterable[str | Card | int]) -> np.ndarray:
    """Count vector (int64[53]) of a hand; joker declarations are dropped."""
    counts = np.zeros(N_TYPES, dtype=np.int64)
    for c in parse_cards(cards):
        counts[c.type] += 1
    return counts


def cards_of_counts(counts: np.ndarray) -> list[Card]:
    """Inverse of counts_of, in type order (naturals by suit then rank, jokers last)."""
    return [Card(t) for t in range(N_TYPES) for _ in range(int(counts[t]))]


def physical_to_type(card_id: int, n_decks: int) -> int:
    """Map a physical card id of docs/rules.md §1.2 (deck copies, jokers after the naturals) to its type."""
    return JOKER if card_id >= N_NATURAL * n_decks else card_id % N_NATURAL


def penalty_table(rules) -> np.ndarray:
    """Penalty of each card type left in hand (int64[53]) for a variant."""
    return np.asarray(rules.penalty_value, dtype=np.int64)


def meld_value_table(rules) -> np.ndarray:
    """Opening-count value by run position (int64[15]): index 1 = low ace, 2..13, 14 = high ace."""
    return np.asarray(rules.meld_value, dtype=np.int64)
