"""Slow, obviously-correct reference for the meld semantics of ``docs/meld-semantics.md``.

This module is the oracle that the compiled meld kernels are checked against, so it deliberately
avoids every clever idea the kernels use (window tables, greedy set choice, bounds, pruning):

* the legality of one meld is decided by trying **every** meaning - every rank for a set, every
  (suit, interval) for a run, every placement of the aces and declared jokers - and checking each
  rule of the document literally;
* the best lay-down enumerates **every** legal meld that is a sub-multiset of the hand (each candidate
  is confirmed by the meld-legality check above, the generator only has to be complete), then
  searches every packing of disjoint candidates, memoised on the multiset of cards still undecided.

Everything here is plain Python over card types (``kalooki_sim.core.cards``); nothing is compiled.  The
only concessions to speed (the differential tests run it on tens of thousands of hands) are a
per-variant memory of meld meanings and multisets packed into ints for the search (both tested in
tests/test_melds_reference.py); neither changes what is searched.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations, product
from typing import Iterable, NamedTuple

from kalooki_sim.core.cards import JOKER, N_RANKS, N_SUITS, Card, make_type, parse_cards, rank_of, suit_of, type_text

__all__ = [
    "Meaning",
    "ref_meanings",
    "ref_is_legal_meld",
    "ref_meld_value",
    "ref_opening_value",
    "ref_meets_contract",
    "ref_best_lay_down",
    "ref_hand_penalty",
    "ref_meld_text",
]

LOW_ACE, HIGH_ACE = 1, 14
KINDS = ("set", "run", "joker_set")


class Meaning(NamedTuple):
    """One way to read a meld.

    ``kind``: ``"set"``, ``"run"`` or ``"joker_set"``.  ``key``: the set's rank index (0 = ace ...
    12 = king), the run's ``(suit, lo, hi)`` in positions 1..14, or ``None`` for a joker set.
    ``jokers``: for a set the card types the jokers stand for (sorted; undeclared jokers get the
    suits the set lacks, in suit order); for a run the positions the jokers occupy (sorted).
    ``value``: the opening count of the meld read this way.
    """

    kind: str
    key: object
    jokers: tuple
    value: int


# ------------------------------------------------------------------------------------------------
# Small helpers


def _cards(cards) -> list[Card]:
    """Accept text, tokens, Cards or type ids (the public API accepts all of them)."""
    return parse_cards(cards)


def _position_value(rules, pos: int) -> int:
    """Opening value of a run position; the low ace has its own knob (doc: meld_value[1])."""
    return rules.ace_low_meld_value if pos == LOW_ACE else rules.meld_value[pos]


def _rank_value(rules, rank: int) -> int:
    """Opening value of one card of a set of ``rank``: aces count as the high ace."""
    return rules.meld_value[HIGH_ACE if rank == 0 else rank + 1]


def _positions_of(card_type: int) -> tuple[int, ...]:
    """Run positions a natural (or a joker declared as it) may occupy; the interval checks the ace knobs."""
    r = rank_of(card_type)
    return (LOW_ACE, HIGH_ACE) if r == 0 else (r + 1,)


def _type_at(suit: int, pos: int) -> int:
    """The natural card type sitting at run position ``pos`` of ``suit``."""
    return make_type(suit, 0 if pos in (LOW_ACE, HIGH_ACE) else pos - 1)


def _meld_list(melds) -> list[list[Card]]:
    """Melds as a list of token lists / texts, or one text ``"[5H 6H 7H] [9C 9D 9S]"``."""
    if isinstance(melds, str):
        text = melds.replace("]", "[")
        parts = [p for p in text.split("[") if p.strip()] if "[" in melds else [melds]
        return [_cards(p) for p in parts]
    return [_cards(m) for m in melds]


def _fits_deck(rules, cards: Iterable[Card]) -> bool:
    """No natural more often than there are decks, no more jokers than the deck holds."""
    counts = Counter(c.type for c in cards)
    return all(n <= (rules.n_jokers if t == JOKER else rules.n_decks) for t, n in counts.items())


def ref_hand_penalty(rules, hand) -> int:
    """Sum of ``penalty_value`` over the cards of a hand (declarations ignored)."""
    return sum(rules.penalty_value[c.type] for c in _cards(hand))


# ------------------------------------------------------------------------------------------------
# Meanings of one meld


def _set_meanings(rules, cards: list[Card]) -> list[Meaning]:
    """Every rank that makes ``cards`` a legal set, literally per the document."""
    n = len(cards)
    naturals = [c.type for c in cards if c.type != JOKER]
    declared = [c.as_type for c in cards if c.type == JOKER and c.as_type >= 0]
    n_free = sum(1 for c in cards if c.type == JOKER and c.as_type < 0)
    if n < rules.set_min_size or (rules.set_max_size is not None and n > rules.set_max_size):
        return []
    if len(naturals) < rules.set_min_naturals:
        return []
    out = []
    for rank in range(N_RANKS):
        if any(rank_of(t) != rank for t in naturals + declared):
            continue
        taken = [suit_of(t) for t in naturals + declared]
        if not rules.set_allow_duplicate_suit:
            if len(set(taken)) != len(taken) or n > N_SUITS:
                continue
        missing = [s for s in range(N_SUITS) if s not in taken]
        free_suits = [missing[i] if i < len(missing) else (missing[0] if missing else 0) for i in range(n_free)]
        jokers = tuple(sorted(declared + [make_type(s, rank) for s in free_suits]))
        out.append(Meaning("set", rank, jokers, n * _rank_value(rules, rank)))
    return out


def _interval_allowed(rules, lo: int, hi: int) -> bool:
    """Ace knobs and the no-wrap rule for a run occupying positions lo..hi."""
    if lo < LOW_ACE or hi > HIGH_ACE:
        return False
    if lo == LOW_ACE and not rules.ace_low:
        return False
    if hi == HIGH_ACE and not rules.ace_high:
        return False
    if lo == LOW_ACE and hi == HIGH_ACE and not rules.allow_both_aces_in_run:
        return False
    return True


def _run_meanings(rules, cards: list[Card]) -> list[Meaning]:
    """Every (suit, interval, joker placement) that makes ``cards`` a legal run."""
    n = len(cards)
    naturals = [c.type for c in cards if c.type != JOKER]
    declared = [c.as_type for c in cards if c.type == JOKER and c.as_type >= 0]
    if n < rules.run_min_size or len(naturals) < rules.run_min_naturals:
        return []
    placed = naturals + declared          # cards whose position is dictated by their rank
    is_declared = [False] * len(naturals) + [True] * len(declared)
    out = set()
    for suit in range(N_SUITS):
        if any(suit_of(t) != suit for t in placed):
            continue
        for lo in range(LOW_ACE, HIGH_ACE - n + 2):
            hi = lo + n - 1
            if not _interval_allowed(rules, lo, hi):
                continue
            options = [[p for p in _positions_of(t) if lo <= p <= hi] for t in placed]
            for choice in product(*options):
                if len(set(choice)) != len(choice):
                    continue                  # two cards on one position
                undeclared = [p for p in range(lo, hi + 1) if p not in choice]
                jokers = sorted(undeclared + [p for p, d in zip(choice, is_declared) if d])
                if not rules.run_adjacent_jokers and any(b - a == 1 for a, b in zip(jokers, jokers[1:])):
                    continue
                value = sum(_position_value(rules, p) for p in range(lo, hi + 1))
                out.add(Meaning("run", (suit, lo, hi), tuple(jokers), value))
    return sorted(out)


def _joker_set_meanings(rules, cards: list[Card]) -> list[Meaning]:
    """American all-joker meld: 3 or 4 undeclared jokers and nothing else."""
    if not rules.allow_all_joker_meld or not 3 <= len(cards) <= 4:
        return []
    if any(c.type != JOKER or c.as_type >= 0 for c in cards):
        return []
    return [Meaning("joker_set", None, (), len(cards) * rules.joker_set_meld_value)]


def ref_meanings(rules, cards) -> list[Meaning]:
    """All legal meanings of one meld (empty when the meld is illegal)."""
    cs = _cards(cards)
    if not cs or not _fits_deck(rules, cs):
        return []
    return _set_meanings(rules, cs) + _run_meanings(rules, cs) + _joker_set_meanings(rules, cs)


def _kind_matches(meaning: Meaning, kind: str | None) -> bool:
    """``kind="set"`` also admits the joker set (the document counts it under sets)."""
    if kind is None:
        return True
    if kind == "set":
        return meaning.kind in ("set", "joker_set")
    return meaning.kind == kind


def ref_is_legal_meld(rules, cards, kind: str | None = None) -> bool:
    """Some meaning of the asked kind (``None``, ``"set"``, ``"run"``, ``"joker_set"``) fits."""
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown meld kind {kind!r}; expected one of {KINDS} or None")
    return any(_kind_matches(m, kind) for m in ref_meanings(rules, cards))


def ref_meld_value(rules, cards) -> int:
    """Largest opening value over the legal meanings; ValueError if the meld is illegal."""
    meanings = ref_meanings(rules, cards)
    if not meanings:
        raise ValueError(f"illegal meld: {' '.join(map(str, _cards(cards)))}")
    return max(m.value for m in meanings)


def ref_opening_value(rules, melds) -> int:
    """Sum of the melds' values; ValueError for the first illegal meld or if together they exceed the deck."""
    parsed = _meld_list(melds)
    total = 0
    for m in parsed:
        total += ref_meld_value(rules, m)
    if not _fits_deck(rules, [c for m in parsed for c in m]):
        raise ValueError("the melds together use more copies of a card than the deck holds")
    return total


# ------------------------------------------------------------------------------------------------
# Contracts


def _contract_label(meaning: Meaning):
    """(kind, rank-or-suit) a meld contributes to a contract; a joker set counts as a rankless set."""
    if meaning.kind == "run":
        return ("run", meaning.key[0])
    if meaning.kind == "set":
        return ("set", meaning.key)
    return ("set", None)


def _labels_meet_contract(rules, round_no: int, labels) -> bool:
    """The count and distinctness conditions of a contract for one choice of meld labels."""
    threes, fours = rules.contract(round_no)
    set_keys = [k for kind, k in labels if kind == "set"]
    run_keys = [k for kind, k in labels if kind == "run"]
    if rules.contract_allow_extra_melds:
        if len(set_keys) < threes or len(run_keys) < fours:
            return False
    elif len(set_keys) != threes or len(run_keys) != fours:
        return False
    if rules.contract_distinct_set_ranks and len(set(set_keys)) != len(set_keys):
        return False
    if rules.contract_distinct_run_suits and len(set(run_keys)) != len(run_keys):
        return False
    return True


def ref_meets_contract(rules, round_no: int, melds) -> bool:
    """True when the melds can be read (each as a set or a run) so that they fulfil the round's contract."""
    if rules.opening_mode != "contract":
        raise ValueError(f"{rules.name}: variant has no contracts (opening_mode = {rules.opening_mode!r})")
    rules.contract(round_no)             # validates round_no
    parsed = _meld_list(melds)
    if not _fits_deck(rules, [c for m in parsed for c in m]):
        return False
    label_options = [sorted({_contract_label(x) for x in ref_meanings(rules, m)}, key=repr) for m in parsed]
    return any(_labels_meet_contract(rules, round_no, labels) for labels in product(*label_options))


# ------------------------------------------------------------------------------------------------
# Candidate melds of a hand


def _sub_multisets(counts: dict[int, int]):
    """Every sub-multiset of ``counts`` as a dict (including the empty one)."""
    types = sorted(counts)
    for picks in product(*(range(counts[t] + 1) for t in types)):
        yield {t: k for t, k in zip(types, picks) if k}


def _set_candidates(rules, hand: Counter):
    """Multisets that could be sets: naturals of one rank (any sub-multiset) plus 0..all jokers."""
    n_jk = hand[JOKER]
    for rank in range(N_RANKS):
        same_rank = {t: n for t, n in hand.items() if t != JOKER and rank_of(t) == rank}
        for nat in _sub_multisets(same_rank):
            if not nat:
                continue
            for j in range(n_jk + 1):
                yield {**nat, JOKER: j} if j else nat


def _run_candidates(rules, hand: Counter):
    """Multisets that could be runs: for every suit, interval and choice of joker positions, the
    naturals on the other positions.  Complete because every legal run has such a meaning."""
    n_jk = hand[JOKER]
    for suit in range(N_SUITS):
        held = {p: hand[_type_at(suit, p)] > 0 for p in range(LOW_ACE, HIGH_ACE + 1)}
        for lo in range(LOW_ACE, HIGH_ACE + 1):
            have, missing = [], []
            for hi in range(lo, HIGH_ACE + 1):
                (have if held[hi] else missing).append(hi)
                if len(missing) > n_jk:
                    break                     # longer intervals only miss more
                if hi - lo + 1 < rules.run_min_size or not _interval_allowed(rules, lo, hi):
                    continue
                positions = range(lo, hi + 1)
                for extra in range(n_jk - len(missing) + 1):
                    for more in combinations(have, extra):
                        jokers = set(missing) | set(more)
                        meld = Counter(_type_at(suit, p) for p in positions if p not in jokers)
                        if jokers:
                            meld[JOKER] = len(jokers)
                        if all(hand[t] >= k for t, k in meld.items()):
                            yield dict(meld)


def _joker_set_candidates(rules, hand: Counter):
    if rules.allow_all_joker_meld:
        for j in range(3, min(4, hand[JOKER]) + 1):
            yield {JOKER: j}


def _counts_to_cards(meld: dict[int, int]) -> list[Card]:
    return [Card(t) for t in sorted(meld) for _ in range(meld[t])]


class _Candidate(NamedTuple):
    vec: tuple          # counts over the hand's distinct types (compressed index)
    first: int          # index of the lowest type it uses
    penalty: int        # penalty removed from the hand when laid
    meanings: tuple     # legal meanings (undeclared jokers)


_MEANINGS_CACHE: dict = {}


def _meanings_cache(rules) -> dict:
    """Per-variant memory of ``ref_meanings``: the same small melds recur in every hand, and the
    answer depends only on (rules, multiset)."""
    cache = _MEANINGS_CACHE.setdefault(rules, {})
    if len(cache) > 200_000:
        cache.clear()
    return cache


def _cached_meanings(rules, cache: dict, meld_key: tuple) -> tuple:
    """``ref_meanings`` of a meld given as sorted (type, count) pairs, through ``cache``."""
    found = cache.get(meld_key)
    if found is None:
        found = cache[meld_key] = tuple(ref_meanings(rules, _counts_to_cards(dict(meld_key))))
    return found


def _candidates(rules, hand: Counter, types: list[int]) -> list[_Candidate]:
    """Every legal meld that is a sub-multiset of ``hand``, confirmed by ``ref_meanings``."""
    index = {t: i for i, t in enumerate(types)}
    cache = _meanings_cache(rules)
    seen, out = set(), []
    generators = (_set_candidates(rules, hand), _run_candidates(rules, hand), _joker_set_candidates(rules, hand))
    for gen in generators:
        for meld in gen:
            key = tuple(sorted(meld.items()))
            if key in seen:
                continue
            seen.add(key)
            meanings = _cached_meanings(rules, cache, key)
            if not meanings:
                continue
            vec = [0] * len(types)
            for t, k in meld.items():
                vec[index[t]] = k
            first = min(index[t] for t in meld)
            penalty = sum(rules.penalty_value[t] * k for t, k in meld.items())
            out.append(_Candidate(tuple(vec), first, penalty, meanings))
    return out


# ------------------------------------------------------------------------------------------------
# Exhaustive search over packings of disjoint candidates

# A multiset over the hand's distinct types is packed into one int, FIELD bits per type, so that the
# search can test "is this meld still in what is left?" in one subtraction: every field carries a
# guard bit on top of its count (counts stay below 2**(FIELD-1) = 16, more than any deck allows).
# With the guard bits set, ``(rem | GUARD) - meld`` clears a field's guard exactly when that field
# of ``meld`` exceeds the one of ``rem``, and never borrows across fields.  ``_pack`` /
# ``_unpack`` are tested against plain tuples in tests/test_melds_reference.py.
FIELD = 5
_COUNT_MASK = (1 << (FIELD - 1)) - 1


def _pack(vec) -> int:
    return sum(k << (FIELD * i) for i, k in enumerate(vec))


def _unpack(packed: int, n: int) -> tuple:
    return tuple((packed >> (FIELD * i)) & _COUNT_MASK for i in range(n))


def _guard(n: int) -> int:
    return _pack([1 << (FIELD - 1)] * n)


def _contains(rem: int, meld: int, guard: int) -> int | None:
    """``rem - meld`` if ``meld`` is a sub-multiset of ``rem``, else None."""
    diff = (rem | guard) - meld
    return diff ^ guard if diff & guard == guard else None


def _search(n_types: int, start: tuple, candidates: list[_Candidate], options_of, step, is_goal, initial):
    """Maximise the penalty laid over every packing of disjoint candidates.

    Every packing is visited through one canonical path: take the lowest card type still
    undecided; either one copy of it stays in hand, or it belongs to a meld whose lowest type it is.
    ``options_of(cand)`` lists the (label, gain) readings of a candidate, ``step(state, label, gain)``
    returns the new search state or None when the reading is not allowed, ``is_goal(state)`` says
    whether a finished packing is a valid lay-down.  Returns (penalty laid, [(cand, label), ...]) or
    None.  Memoised on (undecided multiset, state).
    """
    guard = _guard(n_types)
    by_first: dict[int, list] = {}
    for c in candidates:
        by_first.setdefault(c.first, []).append((c, _pack(c.vec), options_of(c)))
    memo: dict = {}

    def solve(rem: int, state):
        key = (rem, state)
        if key in memo:
            return memo[key]
        if rem == 0:
            result = (0, ()) if is_goal(state) else None
            memo[key] = result
            return result
        i = ((rem & -rem).bit_length() - 1) // FIELD                 # lowest type still undecided
        result = solve(rem - (1 << (FIELD * i)), state)               # one copy stays in hand
        for cand, packed, options in by_first.get(i, ()):
            after = _contains(rem, packed, guard)
            if after is None:
                continue                                              # not in what is left
            for label, gain in options:
                new_state = step(state, label, gain)
                if new_state is None:
                    continue
                sub = solve(after, new_state)
                if sub is not None and (result is None or sub[0] + cand.penalty > result[0]):
                    result = (sub[0] + cand.penalty, ((cand, label),) + sub[1])
        memo[key] = result
        return result

    return solve(_pack(start), initial)


def _contract_search(rules, round_no, start, candidates):
    """Exactly the round's threes and fours (distinct set ranks / run suits), per the knobs."""
    threes, fours = rules.contract(round_no)
    extra = rules.contract_allow_extra_melds

    def options_of(cand):
        return [(lab, 0) for lab in sorted({_contract_label(m) for m in cand.meanings}, key=repr)]

    def step(state, label, _gain):
        sets, runs = state
        kind, k = label
        if kind == "set":
            if (not extra and len(sets) >= threes) or (rules.contract_distinct_set_ranks and k in sets):
                return None
            return (tuple(sorted(sets + (k,), key=repr)), runs)
        if (not extra and len(runs) >= fours) or (rules.contract_distinct_run_suits and k in runs):
            return None
        return (sets, tuple(sorted(runs + (k,))))

    def is_goal(state):
        return len(state[0]) >= threes and len(state[1]) >= fours

    return _search(len(start), start, candidates, options_of, step, is_goal, ((), ()))


def _points_search(rules, start, candidates):
    """One or more melds whose values add up to at least ``opening_min_points``."""
    need0 = rules.opening_min_points

    def options_of(cand):
        return [("meld", max(m.value for m in cand.meanings))]

    def step(state, _label, gain):
        need, _ = state
        return (max(0, need - gain), True)

    def is_goal(state):
        return state[0] == 0 and state[1]

    return _search(len(start), start, candidates, options_of, step, is_goal, (need0, False))


# ------------------------------------------------------------------------------------------------
# Presenting a lay-down


def ref_meld_text(meld_cards, meaning: Meaning) -> list[str]:
    """Tokens of a meld read as ``meaning``: runs low to high with jokers declared by position, sets
    naturals first then jokers declared as the set's rank and a suit the set lacks."""
    cs = _cards(meld_cards)
    if meaning.kind == "joker_set":
        return ["JK"] * len(cs)
    if meaning.kind == "set":
        naturals = sorted(c.type for c in cs if c.type != JOKER)
        return [type_text(t) for t in naturals] + ["JK=" + type_text(t) for t in meaning.jokers]
    suit, lo, hi = meaning.key
    return [("JK=" if p in meaning.jokers else "") + type_text(_type_at(suit, p)) for p in range(lo, hi + 1)]


def _pick_meaning(cand: _Candidate, label, contract: bool) -> Meaning:
    """A meaning matching the search's reading: the contract label, or the highest value."""
    if contract:
        return next(m for m in cand.meanings if _contract_label(m) == label)
    return max(cand.meanings, key=lambda m: m.value)


def ref_best_lay_down(rules, hand, round_no: int | None = None):
    """Exact best first lay-down of ``hand``: ``None`` if impossible, else
    ``(penalty_left, melds as token lists, left as tokens)`` leaving the least penalty in hand."""
    cards = _cards(hand)
    if not _fits_deck(rules, cards):
        raise ValueError("the hand holds more copies of a card than the deck")
    counts = Counter(c.type for c in cards)
    types = sorted(counts)
    start = tuple(counts[t] for t in types)
    candidates = _candidates(rules, counts, types)
    contract = rules.opening_mode == "contract"
    if contract:
        if round_no is None:
            raise ValueError(f"{rules.name}: round_no is required for a contract variant")
        found = _contract_search(rules, round_no, start, candidates)
    else:
        found = _points_search(rules, start, candidates)
    if found is None:
        return None
    melds, left = [], Counter(counts)
    for cand, label in found[1]:
        meld = {types[i]: k for i, k in enumerate(cand.vec) if k}
        melds.append(ref_meld_text(_counts_to_cards(meld), _pick_meaning(cand, label, contract)))
        left.subtract(meld)
    left_tokens = [type_text(t) for t in sorted(left) for _ in range(left[t])]
    penalty_left = sum(rules.penalty_value[t] * k for t, k in left.items())
    assert penalty_left == sum(rules.penalty_value[t] * k for t, k in counts.items()) - found[0]
    return penalty_left, melds, left_tokens
