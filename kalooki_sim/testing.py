"""Seeded random hands and melds for the tests and benchmarks of the meld kernels.

Uniformly dealt hands almost never hold a contract or an opening, so a differential test on them
would only ever compare "None" with "None".  The generators here build hands *around* a lay-down
(melds meeting a Caribbean contract, melds worth about the opening minimum) and then spoil them a
little (noise cards, a removed card), so that feasible and near-feasible hands are both common;
joker-heavy and duplicate-heavy families stress the corners where clever searches go wrong.

Every function takes a ``numpy.random.Generator`` and returns card tokens (``"10H"``, ``"JK"``,
``"JK=6H"``).  Hands never hold more copies of a natural than ``rules.n_decks`` nor more jokers
than ``rules.n_jokers``; hand sizes are 9..16.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.cards import JOKER, N_NATURAL, N_RANKS, N_SUITS, counts_of, make_type, parse_cards, type_text
from kalooki_sim.melds.reference import (
    ref_hand_penalty, ref_is_legal_meld, ref_meets_contract, ref_meld_value, ref_opening_value,
)

__all__ = [
    "MIN_HAND", "MAX_HAND",
    "CardPool",
    "build_set",
    "build_run",
    "contract_hand",
    "points_hand",
    "joker_heavy_hand",
    "duplicate_heavy_hand",
    "uniform_hand",
    "random_test_hand",
    "random_meld_candidate",
    "HAND_FAMILIES",
    "lay_down_problems",
    "crash_once",
]

MIN_HAND, MAX_HAND = 9, 16


# ------------------------------------------------------------------------------------------------
# Deck bookkeeping


class CardPool:
    """Copies of each card type still available, so a generated hand always fits the deck."""

    def __init__(self, rules):
        self.left = np.full(N_NATURAL + 1, rules.n_decks, dtype=np.int64)
        self.left[JOKER] = rules.n_jokers

    def take(self, card_type: int) -> bool:
        """Take one copy of ``card_type`` if one is left."""
        if self.left[card_type] <= 0:
            return False
        self.left[card_type] -= 1
        return True

    def give_back(self, card_type: int) -> None:
        self.left[card_type] += 1

    def take_random(self, rng: np.random.Generator, allow_jokers: bool = True) -> int:
        """One card drawn like from a shuffled stock (jokers only if ``allow_jokers``)."""
        weights = self.left.astype(float)
        if not allow_jokers:
            weights[JOKER] = 0.0
        total = weights.sum()
        if total <= 0:
            raise ValueError("the deck is exhausted")
        t = int(rng.choice(len(weights), p=weights / total))
        self.left[t] -= 1
        return t


def _tokens(types) -> list[str]:
    return [type_text(t) for t in types]


def _fill(pool: CardPool, rng, cards: list[int], size: int, allow_jokers: bool = True) -> list[int]:
    """Add stock-like noise cards until the hand has ``size`` cards."""
    while len(cards) < size:
        cards.append(pool.take_random(rng, allow_jokers))
    return cards


def _default_size(rules, rng, round_no: int | None) -> int:
    """Deal size of the round (or of a random player count), often plus a draw or calls, in 9..16."""
    if rules.opening_mode == "contract":
        base = rules.deal_size(round_no or 1)
    else:
        hs = rules.hand_size
        base = hs if isinstance(hs, int) else int(rng.choice([s for _, s in hs]) if isinstance(hs[0], tuple) else rng.choice(hs))
    roll = rng.random()
    if roll < 0.08:
        size = int(rng.integers(MIN_HAND, max(MIN_HAND, base - 1) + 1))     # short hand
    elif roll < 0.88:
        size = base + int(rng.choice([0, 1, 1, 1, 2, 3]))                  # deal, draw, calls
    else:
        size = int(rng.integers(MIN_HAND, MAX_HAND + 1))
    return int(min(MAX_HAND, max(MIN_HAND, size)))


# ------------------------------------------------------------------------------------------------
# Building melds from the pool


def _joker_positions(rules, rng, n: int, k: int) -> list[int] | None:
    """``k`` distinct offsets in 0..n-1 for jokers, never adjacent where the variant forbids it."""
    for _ in range(20):
        pos = sorted(rng.choice(n, size=k, replace=False).tolist()) if k else []
        if rules.run_adjacent_jokers or all(b - a > 1 for a, b in zip(pos, pos[1:])):
            return pos
    return None


def build_set(rules, pool: CardPool, rng, rank: int, n: int, n_jokers: int) -> list[int] | None:
    """A set of ``n`` cards of ``rank`` with ``n_jokers`` jokers taken from the pool (None if the pool
    cannot supply it; the pool is left untouched then)."""
    n_jokers = min(n_jokers, n - rules.set_min_naturals)
    suits = list(range(N_SUITS))
    taken: list[int] = []
    if rules.set_allow_duplicate_suit:
        choices = [s for s in suits for _ in range(int(pool.left[make_type(s, rank)]))]
        rng.shuffle(choices)
        nat = [make_type(s, rank) for s in choices[: n - n_jokers]]
    else:
        avail = [s for s in suits if pool.left[make_type(s, rank)] > 0]
        rng.shuffle(avail)
        nat = [make_type(s, rank) for s in avail[: n - n_jokers]]
    if len(nat) < n - n_jokers or pool.left[JOKER] < n_jokers:
        return None
    for t in nat + [JOKER] * n_jokers:
        pool.take(t)
        taken.append(t)
    return taken


def _position_type(suit: int, pos: int) -> int:
    return make_type(suit, 0 if pos in (1, 14) else pos - 1)


def build_run(rules, pool: CardPool, rng, suit: int, lo: int, n: int, n_jokers: int) -> list[int] | None:
    """A run of ``suit`` on positions lo..lo+n-1 with jokers at random allowed offsets; a natural the
    pool lacks becomes a joker if one is left.  None (pool untouched) if it cannot be built."""
    offsets = _joker_positions(rules, rng, n, min(n_jokers, n - rules.run_min_naturals))
    if offsets is None:
        return None
    cards = []
    for off in range(n):
        t = JOKER if off in offsets else _position_type(suit, lo + off)
        if not pool.take(t):
            if t != JOKER and pool.take(JOKER):
                t = JOKER
            else:
                for u in cards:
                    pool.give_back(u)
                return None
        cards.append(t)
    return cards


def _random_run_start(rules, rng, n: int) -> int:
    """A start position so that lo..lo+n-1 respects the variant's ace rules."""
    lo_min = 1 if rules.ace_low else 2
    hi_max = 14 if rules.ace_high else 13
    if lo_min == 1 and hi_max == 14 and not rules.allow_both_aces_in_run:
        hi_max = 14 if rng.random() < 0.5 else 13
        lo_min = 2 if hi_max == 14 else 1
    n = min(n, hi_max - lo_min + 1)
    return int(rng.integers(lo_min, hi_max - n + 2))


def _joker_count(rng, rate: float, cap: int) -> int:
    """0, 1 or 2 jokers for one meld; ``rate`` is the chance of each."""
    return int(min(cap, (rng.random() < rate) + (rng.random() < rate * rate)))


# ------------------------------------------------------------------------------------------------
# Hand families


def contract_hand(rules, rng, round_no: int, size: int, joker_rate: float = 0.25) -> list[str]:
    """Melds meeting the round's contract (distinct ranks / suits, sometimes longer than minimum,
    sometimes with jokers), then noise cards; a third of the time one meld card is swapped for noise."""
    threes, fours = rules.contract(round_no)
    pool = CardPool(rules)
    cards: list[int] = []
    slack = size - (threes * rules.set_min_size + fours * rules.run_min_size)
    ranks = rng.permutation(N_RANKS)[:threes]
    suits = rng.permutation(N_SUITS)[:fours]
    for rank in ranks:
        extra = int(slack > 0 and rng.random() < 0.3)
        slack -= extra
        meld = build_set(rules, pool, rng, int(rank), rules.set_min_size + extra, _joker_count(rng, joker_rate, 2))
        cards += meld or []
    for suit in suits:
        extra = int(rng.integers(0, 3)) if slack > 0 and rng.random() < 0.3 else 0
        extra = max(0, min(extra, slack))
        slack -= extra
        n = rules.run_min_size + extra
        meld = build_run(rules, pool, rng, int(suit), _random_run_start(rules, rng, n), n, _joker_count(rng, joker_rate, 2))
        cards += meld or []
    rng.shuffle(cards)
    while len(cards) > size:
        pool.give_back(cards.pop())
    if cards and rng.random() < 0.33:
        pool.give_back(cards.pop(int(rng.integers(len(cards)))))
    return _tokens(_fill(pool, rng, cards, size))


def points_hand(rules, rng, size: int, joker_rate: float = 0.2) -> list[str]:
    """Melds whose values add up to about the opening minimum (just over or just under), then noise."""
    pool = CardPool(rules)
    target = (rules.opening_min_points or 0) + int(rng.integers(-15, 12))
    cards: list[int] = []
    total = 0
    for _ in range(12):
        if total >= target or len(cards) >= size - 2:
            break
        meld = _random_meld_from_pool(rules, pool, rng, joker_rate)
        if meld is None:
            continue
        value = _value_or_none(rules, meld)
        if value is None or (total + value > target + 8 and rng.random() < 0.7) or len(cards) + len(meld) > size:
            for t in meld:
                pool.give_back(t)            # illegal (pool ran short) or overshoots a lot: try another
            continue
        cards += meld
        total += value
    rng.shuffle(cards)
    if cards and rng.random() < 0.25:
        pool.give_back(cards.pop(int(rng.integers(len(cards)))))
    return _tokens(_fill(pool, rng, cards, size))


def _value_or_none(rules, meld: list[int]) -> int | None:
    try:
        return ref_meld_value(rules, [type_text(t) for t in meld])
    except ValueError:
        return None


def _random_meld_from_pool(rules, pool: CardPool, rng, joker_rate: float) -> list[int] | None:
    """A random legal set or run (3-5 cards) taken from the pool, or None."""
    if rng.random() < 0.5:
        n = rules.set_min_size + int(rng.random() < 0.3)
        if rules.set_max_size is not None:
            n = min(n, rules.set_max_size)
        return build_set(rules, pool, rng, int(rng.integers(N_RANKS)), n, _joker_count(rng, joker_rate, 2))
    n = rules.run_min_size + int(rng.integers(0, 3))
    return build_run(rules, pool, rng, int(rng.integers(N_SUITS)), _random_run_start(rules, rng, n), n,
                     _joker_count(rng, joker_rate, 2))


def joker_heavy_hand(rules, rng, size: int, round_no: int | None = None) -> list[str]:
    """All (or all but one) jokers plus naturals bunched in two suits and a few ranks, so that runs and
    sets overlap and many joker placements compete."""
    if rules.opening_mode == "contract" and round_no is not None and rng.random() < 0.5:
        return contract_hand(rules, rng, round_no, size, joker_rate=0.6)
    pool = CardPool(rules)
    cards = [JOKER] * max(0, rules.n_jokers - int(rng.random() < 0.3))
    cards = [t for t in cards if pool.take(t)]
    suits = rng.choice(N_SUITS, size=2, replace=False)
    centre = int(rng.integers(0, N_RANKS))
    ranks = [(centre + d) % N_RANKS for d in range(-3, 4)]
    while len(cards) < size:
        if rng.random() < 0.75:
            t = make_type(int(rng.choice(suits)) if rng.random() < 0.7 else int(rng.integers(N_SUITS)),
                          int(rng.choice(ranks)))
            if pool.take(t):
                cards.append(t)
        else:
            cards.append(pool.take_random(rng, allow_jokers=False))
    rng.shuffle(cards)
    return _tokens(cards[:size])


def duplicate_heavy_hand(rules, rng, size: int, round_no: int | None = None) -> list[str]:
    """Many cards held in every copy the deck has.  Half the time a hand built around the contract /
    opening whose cards are then doubled (which copy goes to which meld matters), otherwise pairs
    bunched around a few ranks of one or two suits."""
    if rng.random() < 0.5:
        base_size = max(MIN_HAND - 3, size - int(rng.integers(2, 6)))
        if rules.opening_mode == "contract":
            threes, fours = rules.contract(round_no or 1)
            need = threes * rules.set_min_size + fours * rules.run_min_size
            base_size = min(size, max(base_size, need - int(rng.random() < 0.3)))
            base = contract_hand(rules, rng, round_no or 1, base_size)
        else:
            base = points_hand(rules, rng, base_size)
        return _with_duplicates(rules, rng, base, size)
    pool = CardPool(rules)
    cards: list[int] = []
    suit = int(rng.integers(N_SUITS))
    rank = int(rng.integers(N_RANKS))
    while len(cards) < size:
        roll = rng.random()
        if roll < 0.45:
            t = make_type(suit, (rank + int(rng.integers(-2, 4))) % N_RANKS)      # near-run area
        elif roll < 0.85:
            t = make_type(int(rng.integers(N_SUITS)), (rank + int(rng.integers(0, 2))) % N_RANKS)
        else:
            t = pool.take_random(rng)
            cards.append(t)
            continue
        while len(cards) < size and pool.take(t):
            cards.append(t)
    rng.shuffle(cards)
    return _tokens(cards[:size])


def _with_duplicates(rules, rng, base: list[str], size: int) -> list[str]:
    """``base`` plus further copies of its own naturals (deck permitting), then noise, up to ``size``."""
    pool = CardPool(rules)
    cards = [c.type for c in parse_cards(base)]
    for t in cards:
        pool.take(t)
    naturals = [t for t in cards if t != JOKER]
    for t in rng.permutation(naturals) if naturals else []:
        if len(cards) >= size:
            break
        if pool.take(int(t)):
            cards.append(int(t))
    _fill(pool, rng, cards, size)
    rng.shuffle(cards)
    return _tokens(cards)


def uniform_hand(rules, rng, size: int) -> list[str]:
    """A plain deal from a shuffled deck."""
    pool = CardPool(rules)
    return _tokens(_fill(pool, rng, [], size))


HAND_FAMILIES = ("target", "joker_heavy", "duplicate_heavy", "uniform")


def random_test_hand(rules, rng, round_no: int | None = None, size: int | None = None,
                     family: str | None = None) -> list[str]:
    """A hand from a mix of families: built around the contract/opening (55 %), joker-heavy (15 %),
    duplicate-heavy (15 %) and uniform (15 %).  Contract variants pick a random round when
    ``round_no`` is None; the size defaults to the round's deal size, often plus a draw or calls."""
    contract = rules.opening_mode == "contract"
    if contract and round_no is None:
        round_no = int(rng.integers(1, len(rules.contracts) + 1))
    if size is None:
        size = _default_size(rules, rng, round_no)
    if family is None:
        family = HAND_FAMILIES[int(rng.choice(4, p=[0.55, 0.15, 0.15, 0.15]))]
    if family == "target":
        return contract_hand(rules, rng, round_no, size) if contract else points_hand(rules, rng, size)
    if family == "joker_heavy":
        return joker_heavy_hand(rules, rng, size, round_no if contract else None)
    if family == "duplicate_heavy":
        return duplicate_heavy_hand(rules, rng, size, round_no if contract else None)
    if family == "uniform":
        return uniform_hand(rules, rng, size)
    raise ValueError(f"unknown hand family {family!r}; expected one of {HAND_FAMILIES}")


# ------------------------------------------------------------------------------------------------
# Meld candidates for legality tests


def _declare(rng, types: list[int], meanings: list[int], rate: float, wrong_rate: float) -> list[str]:
    """Tokens of a meld; each joker is declared with probability ``rate`` as its meaning (or, rarely,
    as a wrong card)."""
    out = []
    for t, m in zip(types, meanings):
        if t != JOKER or m < 0 or rng.random() >= rate:
            out.append(type_text(t))
            continue
        if rng.random() < wrong_rate:
            m = int(rng.integers(N_NATURAL))
        out.append("JK=" + type_text(m))
    return out


def _candidate_set(rules, rng) -> tuple[list[int], list[int]]:
    """Cards of one rank (suits random, so duplicates appear) with some jokers; meanings per card."""
    rank = int(rng.integers(N_RANKS))
    n = int(rng.integers(2, 7))
    k = int(rng.integers(0, min(n, 3) + 1))
    suits = rng.integers(N_SUITS, size=n - k) if rng.random() < 0.5 else rng.permutation(N_SUITS)[: n - k]
    types = [make_type(int(s), rank) for s in suits]
    missing = [s for s in range(N_SUITS) if s not in suits] or [0]
    meanings = list(types) + [make_type(missing[i % len(missing)], rank) for i in range(k)]
    return types + [JOKER] * k, meanings


def _candidate_run(rules, rng) -> tuple[list[int], list[int]]:
    """Consecutive positions of one suit, some replaced by jokers (adjacent ones too)."""
    suit = int(rng.integers(N_SUITS))
    n = int(rng.integers(max(2, rules.run_min_size - 1), 15))
    lo = int(rng.integers(1, 15 - n + 1))
    k = int(rng.integers(0, min(n, 4) + 1))
    joker_at = set(rng.choice(n, size=k, replace=False).tolist())
    types, meanings = [], []
    for off in range(n):
        nat = _position_type(suit, lo + off)
        types.append(JOKER if off in joker_at else nat)
        meanings.append(nat)
    return types, meanings


def _perturb(rng, types: list[int], meanings: list[int]) -> None:
    """One small edit that often breaks a legal meld: swap, add or drop a card."""
    roll = rng.random()
    if roll < 0.4 and types:
        i = int(rng.integers(len(types)))
        types[i] = int(rng.integers(N_NATURAL + 1))
        meanings[i] = -1
    elif roll < 0.75:
        t = JOKER if rng.random() < 0.4 else int(rng.integers(N_NATURAL))
        types.append(t)
        meanings.append(-1)
    elif types:
        i = int(rng.integers(len(types)))
        del types[i], meanings[i]


def _clip_to_deck(rules, types: list[int], meanings: list[int]) -> None:
    """Drop copies beyond what the deck holds (the deck rule is tested separately)."""
    seen: dict[int, int] = {}
    keep = []
    for i, t in enumerate(types):
        seen[t] = seen.get(t, 0) + 1
        if seen[t] <= (rules.n_jokers if t == JOKER else rules.n_decks):
            keep.append(i)
    types[:] = [types[i] for i in keep]
    meanings[:] = [meanings[i] for i in keep]


def random_meld_candidate(rules, rng) -> list[str]:
    """A random set, run or all-joker meld, legal or nearly so: built legal-looking, edited in 35 % of
    cases, jokers declared in 40 % of cases (rarely wrongly), written in random order half the time.
    Never uses more copies than the deck holds; never empty."""
    roll = rng.random()
    if roll < 0.45:
        types, meanings = _candidate_set(rules, rng)
    elif roll < 0.93:
        types, meanings = _candidate_run(rules, rng)
    else:
        k = int(rng.integers(2, 6))
        types, meanings = [JOKER] * k, [-1] * k
    if rng.random() < 0.35:
        _perturb(rng, types, meanings)
    _clip_to_deck(rules, types, meanings)
    if not types:
        types, meanings = [JOKER], [-1]
    declare_rate = 0.4 if rng.random() < 0.5 else 0.0
    tokens = _declare(rng, types, meanings, declare_rate, wrong_rate=0.15)
    if rng.random() < 0.5:
        tokens = [tokens[i] for i in rng.permutation(len(tokens))]
    return tokens


# ------------------------------------------------------------------------------------------------
# Checking a lay-down against the reference


def lay_down_problems(rules, hand, round_no, melds, left, penalty) -> list[str]:
    """Why a claimed lay-down of ``hand`` is not valid per the reference (empty list when it is):
    every meld legal, melds + left == hand as multisets, ``penalty`` == penalty of ``left``, and the
    contract met (contract variants) or the opening minimum reached with at least one meld."""
    problems = []
    for m in melds:
        if not ref_is_legal_meld(rules, m):
            problems.append(f"illegal meld [{' '.join(m)}]")
    used = sum((counts_of(m) for m in melds), counts_of([]))
    if not (used + counts_of(left) == counts_of(hand)).all():
        problems.append("melds + left differ from the hand as multisets")
    if penalty != ref_hand_penalty(rules, left):
        problems.append(f"penalty {penalty} != penalty of the cards left {ref_hand_penalty(rules, left)}")
    if problems:
        return problems
    if rules.opening_mode == "contract":
        if not ref_meets_contract(rules, round_no, melds):
            problems.append(f"contract of round {round_no} not met")
    elif not melds:
        problems.append("no meld laid")
    else:
        try:
            value = ref_opening_value(rules, melds)
        except ValueError as e:
            problems.append(str(e))
        else:
            if value < rules.opening_min_points:
                problems.append(f"opening value {value} < {rules.opening_min_points}")
    return problems


def crash_once(marker: str, fn, *args):
    """``fn(*args)``, but the first call anywhere (no file ``marker`` yet) writes the marker and
    kills its own process, as a crashed node would: a study runner task that the Ray backend must
    play again (tests/test_runner.py)."""
    import os

    if not os.path.exists(marker):
        with open(marker, "w") as f:
            f.write(str(os.getpid()))
        os._exit(1)
    return fn(*args)
