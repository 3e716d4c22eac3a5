"""Tests of the reference itself (``kalooki_sim.melds.reference``), so the oracle is not taken on trust.

* RULES.md §6.1-§6.4 vectors and further hand-checked meld / contract / opening cases;
* best lay-downs worked out by hand (the reasoning is in each row's comment);
* an even more naive brute force (every assignment of every card to a meld slot or to the hand) on
  small hands, with custom small contracts and low opening minimums so that lay-downs are common;
* the reference's own lay-downs on random hands are valid (``testing.lay_down_problems``);
* the generators of ``kalooki_sim.testing`` respect the deck and the size range.
"""

from __future__ import annotations

import zlib
from collections import Counter
from functools import lru_cache
from itertools import product

import numpy as np
import pytest

from kalooki_sim import load_rules
from kalooki_sim.core.cards import counts_of
from kalooki_sim.melds import reference as R
from kalooki_sim.melds.reference import (
    ref_best_lay_down, ref_hand_penalty, ref_is_legal_meld, ref_meanings, ref_meets_contract, ref_meld_value,
    ref_opening_value,
)
from kalooki_sim.testing import lay_down_problems, random_meld_candidate, random_test_hand

PRESETS = ["caribbean", "k40", "k51", "k101", "na15", "american", "k40+v4"]


@lru_cache(maxsize=None)
def rules_of(name: str):
    return load_rules(name)


def melds_of(text: str) -> list[list[str]]:
    """``"[a b c] [d e f]"`` -> ``[["a","b","c"], ["d","e","f"]]``."""
    return [part.split() for part in text.replace("[", "]").split("]") if part.strip()]


# ------------------------------------------------------------------------------------------------
# Single melds

LEGAL = [
    # (variant, cards, kind, legal) - RULES.md §6.1 ids where they exist
    ("caribbean", "5H 5H 5S", "set", True),            # T01
    ("caribbean", "5H 5H 5S", "run", False),
    ("caribbean", "3C JK JK", "set", False),           # T02: fewer than 2 naturals
    ("caribbean", "3C 3D JK JK", "set", True),
    ("caribbean", "QH QC JK=QH", "set", True),         # declared duplicate suit is fine in Caribbean
    ("caribbean", "QH QC JK=KH", "set", False),        # declared as another rank
    ("caribbean", "KH KH KS KD KC", "set", True),      # T04
    ("caribbean", "KH KH KS KD KC JK JK JK JK", "set", True),
    ("caribbean", "KH KH KS KD KC JK JK JK JK JK", None, False),   # 5 jokers: more than the deck
    ("caribbean", "5H 5H 5H", None, False),            # 3 copies: more than 2 decks
    ("caribbean", "AS 2S 3S 4S", "run", True),         # T05
    ("caribbean", "JS QS KS AS", "run", True),         # T06
    ("caribbean", "KS AS 2S 3S", "run", False),        # wrap
    ("caribbean", "5H JK=6H 7H JK=8H", "run", True),   # T08
    ("caribbean", "AH JK JK 4H", "run", False),        # only reading has adjacent jokers
    ("caribbean", "AH JK=2H 3H JK=4H", "run", True),
    ("caribbean", "5H 6H 7H", "run", False),           # T10: fours need 4 cards
    ("caribbean", "5H 6H 7D 8H", "run", False),        # T11
    ("caribbean", "5H JK=6D 7H 8H", "run", False),     # declared in another suit
    ("caribbean", "5H JK=9H 7H 8H", "run", False),     # declared at a wrong position
    ("caribbean", "AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH", "run", True),   # A13
    ("caribbean", "JK AH 2H JK", "run", False),        # AH must be low (2H is present): jokers at 3, 4
    ("k40", "5H 5H 5S", "set", False),                 # T12: distinct suits
    ("k40", "6S 6H 6D 6C JK", "set", False),           # 5 cards
    ("k40", "6S 6H 6D JK", "set", True),
    ("k40", "6S 6H JK=6S", "set", False),              # declared suit already present
    ("k40", "6S JK JK", "set", True),                  # 1 natural is enough (A32)
    ("k40", "QD KD AD", "run", True),                  # T14
    ("k40", "AH 2H 3H", None, False),                  # T15
    ("k40+v4", "AH 2H 3H", "run", True),               # T15 with V4
    ("k40+v4", "AH 2H JK=AH", "run", False),           # a declared ace sits at 1 or 14, never at 3
    ("k40+v4", "QH KH AH 2H", "run", False),           # wrap
    ("k40", "KD AD 2D", None, False),                  # T16
    ("na15", "KD AD 2D", None, False),                 # T16
    ("caribbean", "KD AD 2D JK", None, False),         # T16
    ("na15", "AS 2S 3S", "run", True),                 # T20
    ("na15", "QS KS AS", "run", True),                 # T20
    ("na15", "AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS", "run", True),
    ("k40", "2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS", "run", True),
    ("k40", "JK JK JK", None, False),
    ("american", "JK JK JK", "set", True),             # joker set counts as a set
    ("american", "JK JK JK JK", None, True),
    ("american", "JK JK JK", "run", False),
    ("american", "JK JK", None, False),
    ("american", "JK JK JK JK JK", None, False),       # 5 jokers: too many for the meld and the deck
    ("american", "JK JK JK=5H", None, False),          # joker sets have only undeclared jokers
    ("american", "5H JK JK", "run", True),
    ("k40", "", None, False),
]


@pytest.mark.parametrize("variant, cards, kind, legal", LEGAL)
def test_meld_legality(variant, cards, kind, legal):
    assert ref_is_legal_meld(rules_of(variant), cards, kind) is legal


VALUES = [
    ("k40", "QD KD AD", 31),                           # T14
    ("k40+v4", "AH 2H 3H", 6),                         # T15 with V4: low ace counts 1
    ("k40+v4", "JH QH KH AH", 41),                     # high ace still 11
    ("na15", "AS 2S 3S", 20),                          # T20
    ("na15", "QS KS AS", 35),                          # T20
    ("k40", "5H JK JK", 18),                           # best reading: run 5H 6H 7H
    ("k40", "JK JK KH", 31),                           # run KH JK=AH? needs QH: JK=QH KH JK=AH = 31
    ("k40", "JK QH JK", 31),                           # QH KH AH = 31 beats sets / lower runs (30)
    ("k40", "AS AH AD", 33),                           # set of aces counts the high ace
    ("american", "JK JK JK JK", 60),                   # 15 per joker
    ("k40", "10H JH QH", 30),                          # T37
    ("k40", "7S 7D 7C", 21),                           # T37
]


@pytest.mark.parametrize("variant, cards, value", VALUES)
def test_meld_value(variant, cards, value):
    assert ref_meld_value(rules_of(variant), cards) == value


def test_meld_value_of_illegal_meld_raises():
    with pytest.raises(ValueError):
        ref_meld_value(rules_of("k40"), "5H 5H 5S")


def test_meanings_enumerate_every_reading():
    # [5H JK JK] in K40: a set of fives, or runs 3-5, 4-6, 5-7 of hearts.
    got = {(m.kind, m.key, m.value) for m in ref_meanings(rules_of("k40"), "5H JK JK")}
    assert got == {("set", 4, 15), ("run", (2, 3, 5), 12), ("run", (2, 4, 6), 15), ("run", (2, 5, 7), 18)}
    # declared jokers pin the reading
    got = {(m.kind, m.key) for m in ref_meanings(rules_of("k40"), "5H JK=6H JK")}
    assert got == {("run", (2, 4, 6)), ("run", (2, 5, 7))}


def test_unknown_kind_raises():
    with pytest.raises(ValueError):
        ref_is_legal_meld(rules_of("k40"), "5H 6H 7H", "sequence")


# ------------------------------------------------------------------------------------------------
# Contracts and opening values

CONTRACTS = [
    (3, "[KC KD KD] [5H 6H 7H 8H] [9S 10S JS QS]", True),              # T21
    (2, "[5C 5D 5H] [9S 9D 9C] [3H 4H 5H 6H]", True),                  # T24
    (7, "[8C 8C JK] [QH QS QD] [3D 4D JK=5D 6D] [9S 10S JS QS]", True),  # T25
    (1, "[4C 4D 4H] [8S 8S 8D] [QH QC JK]", True),                     # T27
    (1, "[4C 4D 4H] [4S 4S JK] [QH QC JK]", False),                    # two threes of 4s
    (7, "[8C 8C JK] [QH QS QD] [3D 4D 5D 6D] [9D 10D JD QD]", False),  # two fours of diamonds
    (2, "[5C 5D 5H] [9S 9D 9C]", False),                               # the four is missing
    (1, "[4C 4D 4H] [8S 8S 8D] [QH QC JK] [2C 2D 2H]", False),         # no extra melds (A4)
    (1, "[4C 4D 4H] [8S 8S 8D] [QH JK JK]", False),                    # an illegal three
    (6, "[4C 4D 4H 4S 4C] [8S 8S 8D] [QH QC JK] [2D 3D 4D 5D 6D 7D]", True),   # longer melds are fine
    (1, "[4C 4D 4H] [4C 4D 4H] [4C 4S JK]", False),                    # ranks repeat and deck exceeded
]


@pytest.mark.parametrize("round_no, melds, met", CONTRACTS)
def test_meets_contract(round_no, melds, met):
    assert ref_meets_contract(rules_of("caribbean"), round_no, melds_of(melds)) is met


def test_meets_contract_needs_a_contract_variant_and_round():
    with pytest.raises(ValueError):
        ref_meets_contract(rules_of("k40"), 1, melds_of("[5H 6H 7H]"))
    with pytest.raises(ValueError):
        ref_meets_contract(rules_of("caribbean"), 10, melds_of("[5H 6H 7H 8H]"))


def test_opening_values():
    k40 = rules_of("k40")
    assert ref_opening_value(k40, melds_of("[10H JH QH] [7S 7D 7C]")) == 51          # T37
    assert ref_opening_value(k40, melds_of("[QS KS AS]")) == 31                      # T38
    assert ref_opening_value(k40, melds_of("[8D 9D 10D] [4S 4H 4C]")) == 39          # T40 (own melds)
    assert ref_opening_value(rules_of("na15"), melds_of("[KS KH KD]")) == 30         # T41 (own meld)
    with pytest.raises(ValueError):
        ref_opening_value(k40, melds_of("[10H JH QH] [7S 7S 7C]"))                   # illegal set
    with pytest.raises(ValueError):
        ref_opening_value(k40, melds_of("[5H 6H 7H] [5H 6H 7H] [5H 6H 7H]"))         # 3 copies


def test_meld_groups_accept_text():
    assert ref_opening_value(rules_of("k40"), "[10H JH QH] [7S 7D 7C]") == 51
    assert ref_opening_value(rules_of("k40"), "QS KS AS") == 31
    assert ref_meets_contract(rules_of("caribbean"), 3, "[KC KD KD] [5H 6H 7H 8H] [9S 10S JS QS]")


def test_penalties():
    hand = "JK AS AH KD 7C"
    assert ref_hand_penalty(rules_of("caribbean"), hand) == 83                      # T29
    assert ref_hand_penalty(rules_of("k40"), hand) == 54                            # T31
    assert ref_hand_penalty(rules_of("na15"), hand) == 62                           # T32


# ------------------------------------------------------------------------------------------------
# Best lay-downs checked by hand

LAY_DOWNS = [
    # (variant, round, hand, expected penalty left or None)
    # R1 three threes: 4s, 8s and QH QC + JK use 9 cards; 7D fits no three -> 7 left.
    ("caribbean", 1, "4C 4D 4H 8S 8S 8D QH QC JK 7D", 7),
    # R1: pairs of 4s, 8s, Qs but a single joker completes only one of them.
    ("caribbean", 1, "4C 4D 8S 8S QH QC JK 7D 9C", None),
    # R4 three fours, 12 cards exactly.
    ("caribbean", 4, "5H 6H 7H 8H 2S 3S 4S 5S 9D 10D JD QD", 0),
    # R2: threes of 7s and 9s (9S 9D + JK), four 3H-6H; KC fits nowhere -> 10.
    ("caribbean", 2, "7C 7D 7H 9S 9D JK 3H 4H 5H 6H KC", 10),
    # R5 four threes from duplicate cards.
    ("caribbean", 5, "5C 5C 5D 6H 6H 6S 7D 7D 7C 8S 8S 8H", 0),
    # R9 four fours each needing a joker at one end.
    ("caribbean", 9, "JK JK JK JK 5H 6H 7H 5D 6D 7D 5C 6C 7C 5S 6S 7S", 0),
    # R8 (1 three, 3 fours) from the same cards: every three needs 2 naturals of one rank, leaving
    # two short suits that cannot both be fours -> impossible.
    ("caribbean", 8, "JK JK JK JK 5H 6H 7H 5D 6D 7D 5C 6C 7C 5S 6S 7S", None),
    # R1: one heart run is not a contract of threes.
    ("caribbean", 1, "5H 6H 7H 8H 9H 10H JH QH KH", None),
    # R3: two 5Hs, one in the three 5H 5C 5D and one in the four 2H-5H; 9S-QS. Nothing left.
    ("caribbean", 3, "5H 5C 5D 2H 3H 4H 5H 9S 10S JS QS", 0),
    # K40: 30 + 21 = 51 >= 40; 2C and 9D stay -> 11.
    ("k40", None, "10H JH QH 7S 7D 7C 2C 9D", 11),
    # K40: 31 < 40 and nothing else melds.
    ("k40", None, "QS KS AS 2C 3D 5H", None),
    # K40: 10H-KH is 40 on its own, 2C 3C 4C adds a meld; 9S 9D stay -> 18.
    ("k40", None, "10H JH QH KH 2C 3C 4C 9S 9D", 18),
    # K40: run 5-7H 18 + set of 5s 15 = 33 < 40, kings cannot meld.
    ("k40", None, "5H 6H 7H 5C 5D 5S KD KC", None),
    # K40: ace high only, so one AS is left over from the 2S..AS run -> 11.
    ("k40", None, "AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS", 11),
    # NA15: both aces in one run (A13) -> 0.
    ("na15", None, "AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS", 0),
    # American: [2C JK JK] [9D 9S 9H JK] [KD KS KH] [4C 5C 6C] = 87 -> everything laid.
    ("american", None, "JK JK JK 2C 9D 9S 9H KD KS KH 4C 5C 6C", 0),
    # American (ace low worth 11): [JK=AC 2C JK=3C] 16 + [KD KS KH JK] 40 = 56 -> everything laid.
    ("american", None, "JK JK JK 2C KD KS KH", 0),
    # K51 (ace high only): with 2C laid at most 9 + 40 = 49 < 51, but [JK=QD KD JK=AD] 31 +
    # [KS KH JK] 30 = 61 leaves 2C.
    ("k51", None, "JK JK JK 2C KD KS KH", 2),
    # American: the joker set is worth 60 >= 51, 2C stays (2C with jokers makes at most 25).
    ("american", None, "JK JK JK JK 2C", 2),
    # K51: no joker sets, and 2C with 4 jokers is at most 2C..6C = 20 or JK=AC.. not allowed -> None.
    ("k51", None, "JK JK JK JK 2C", None),
]


@pytest.mark.parametrize("variant, round_no, hand, expected", LAY_DOWNS)
def test_best_lay_down_by_hand(variant, round_no, hand, expected):
    rules = rules_of(variant)
    found = ref_best_lay_down(rules, hand, round_no)
    if expected is None:
        assert found is None
        return
    assert found is not None and found[0] == expected
    assert lay_down_problems(rules, hand.split(), round_no, found[1], found[2], found[0]) == []


def test_best_lay_down_output_form():
    penalty, melds, left = ref_best_lay_down(rules_of("caribbean"), "4C 4D 4H 8S 8S 8D QH QC JK 7D", 1)
    assert sorted(melds) == [["4C", "4D", "4H"], ["8D", "8S", "8S"], ["QC", "QH", "JK=QD"]]
    assert left == ["7D"] and penalty == 7
    penalty, melds, left = ref_best_lay_down(rules_of("caribbean"), "JK JK JK JK 5H 6H 7H 5D 6D 7D 5C 6C 7C 5S 6S 7S", 9)
    assert all(m[0].startswith("JK=4") or m[-1].startswith("JK=8") for m in melds)   # runs low to high


def test_best_lay_down_argument_errors():
    with pytest.raises(ValueError):
        ref_best_lay_down(rules_of("caribbean"), "5H 6H 7H 8H")                     # round required
    with pytest.raises(ValueError):
        ref_best_lay_down(rules_of("k40"), "5H 5H 5H 6H 7H")                        # 3 copies


# ------------------------------------------------------------------------------------------------
# Brute force on small hands: every card goes to one of k meld slots or stays in hand

BRUTE_HANDS = 60
SMALL_CONTRACTS = dict(contracts=((1, 0), (0, 1), (1, 1), (2, 0)), hand_size=(7, 7, 8, 8), n_hands=4)
BRUTE_VARIANTS = [
    ("caribbean-small", lambda: load_rules("caribbean", **SMALL_CONTRACTS)),
    ("k40-min20", lambda: load_rules("k40", opening_min_points=20)),
    ("na15-min25", lambda: load_rules("na15", opening_min_points=25)),
    ("american-min20", lambda: load_rules("american", opening_min_points=20)),
    ("k40+v4-min15", lambda: load_rules("k40+v4", opening_min_points=15)),
]


def brute_best_penalty(rules, hand: list[str], round_no) -> int | None:
    """Minimum penalty left over every assignment of the cards to meld slots, checked with the
    single-meld and contract functions only (no candidate generation, no search)."""
    contract = rules.opening_mode == "contract"
    n_slots = sum(rules.contract(round_no)) if contract else len(hand) // 3
    legal = lru_cache(maxsize=None)(lambda m: ref_is_legal_meld(rules, list(m)))
    value = lru_cache(maxsize=None)(lambda m: ref_meld_value(rules, list(m)))
    best = None
    for slots in product(range(n_slots + 1), repeat=len(hand)):     # slot n_slots = stays in hand
        melds = [tuple(sorted(c for c, s in zip(hand, slots) if s == k)) for k in range(n_slots)]
        melds = [m for m in melds if m]
        if not melds or not all(legal(m) for m in melds):
            continue
        if contract:
            if not ref_meets_contract(rules, round_no, [list(m) for m in melds]):
                continue
        elif sum(value(m) for m in melds) < rules.opening_min_points:
            continue
        left = ref_hand_penalty(rules, [c for c, s in zip(hand, slots) if s == n_slots])
        best = left if best is None or left < best else best
    return best


@pytest.mark.parametrize("name, make", BRUTE_VARIANTS, ids=[n for n, _ in BRUTE_VARIANTS])
def test_reference_matches_brute_force_on_small_hands(name, make):
    rules = make()
    rng = np.random.default_rng([7, zlib.crc32(name.encode())])
    failures, feasible = [], 0
    for i in range(BRUTE_HANDS):
        round_no = i % rules.n_rounds + 1 if rules.opening_mode == "contract" else None
        size = int(rng.integers(6, 9)) if rules.opening_mode == "points" else rules.deal_size(round_no) + int(rng.integers(0, 2))
        hand = random_test_hand(rules, rng, round_no=round_no, size=size,
                                family="target" if i % 3 else "joker_heavy")
        expected = brute_best_penalty(rules, hand, round_no)
        found = ref_best_lay_down(rules, hand, round_no)
        feasible += expected is not None
        if (found[0] if found else None) != expected:
            failures.append(f"round {round_no} hand {' '.join(hand)}: brute force {expected}, reference {found}")
    assert not failures, "\n".join(failures)
    assert BRUTE_HANDS // 4 <= feasible <= BRUTE_HANDS - 3, f"{feasible} of {BRUTE_HANDS} feasible: too one-sided"


# ------------------------------------------------------------------------------------------------
# The reference's own answers are valid lay-downs; packed multisets behave like tuples


@pytest.mark.parametrize("preset", PRESETS)
def test_reference_lay_downs_are_valid(preset):
    rules = rules_of(preset)
    rng = np.random.default_rng([11, PRESETS.index(preset)])
    failures = []
    for i in range(300):
        round_no = i % 9 + 1 if rules.opening_mode == "contract" else None
        hand = random_test_hand(rules, rng, round_no=round_no)
        found = ref_best_lay_down(rules, hand, round_no)
        if found is not None:
            problems = lay_down_problems(rules, hand, round_no, found[1], found[2], found[0])
            if problems:
                failures.append(f"{' '.join(hand)}: {found} -> {problems}")
    assert not failures, "\n".join(failures[:5])


def test_packed_multisets_match_tuples():
    rng = np.random.default_rng(3)
    n = 17
    guard = R._guard(n)
    for _ in range(2000):
        rem = tuple(int(x) for x in rng.integers(0, 9, size=n))
        meld = tuple(int(x) for x in rng.integers(0, 3, size=n) * (rng.random(n) < 0.3))
        assert R._unpack(R._pack(rem), n) == rem
        after = R._contains(R._pack(rem), R._pack(meld), guard)
        if all(m <= r for m, r in zip(meld, rem)):
            assert after is not None and R._unpack(after, n) == tuple(r - m for r, m in zip(rem, meld))
        else:
            assert after is None


# ------------------------------------------------------------------------------------------------
# Generators


@pytest.mark.parametrize("preset", PRESETS)
def test_generators_respect_deck_and_sizes(preset):
    rules = rules_of(preset)
    rng = np.random.default_rng([5, PRESETS.index(preset)])
    sizes = Counter()
    for i in range(400):
        round_no = i % 9 + 1 if rules.opening_mode == "contract" else None
        hand = random_test_hand(rules, rng, round_no=round_no)
        c = counts_of(hand)
        assert c[:52].max() <= rules.n_decks and c[52] <= rules.n_jokers, hand
        assert 9 <= len(hand) <= 16, hand
        sizes[len(hand)] += 1
        meld = random_meld_candidate(rules, rng)
        c = counts_of(meld)
        assert meld and c[:52].max() <= rules.n_decks and c[52] <= rules.n_jokers, meld
    assert len(sizes) >= 6, sizes


def test_generators_are_reproducible():
    rules = rules_of("caribbean")
    a = [random_test_hand(rules, np.random.default_rng(9), round_no=r) for r in range(1, 10)]
    b = [random_test_hand(rules, np.random.default_rng(9), round_no=r) for r in range(1, 10)]
    assert a == b
