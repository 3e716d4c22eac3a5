"""RULES.md §6.1-§6.4 test vectors (and hand-verified lay-downs) against the public meld API.

API under test (docs/meld-semantics.md): ``kalooki_sim.melds.is_legal_meld / meld_value /
opening_value / meets_contract / best_lay_down`` and ``kalooki_sim.core.scoring.hand_penalty``.
Every row carries its RULES.md vector ID as the pytest id; extra rows derived from the rule text
carry the ID of the vector they extend plus a suffix.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache

import pytest

from kalooki_sim import load_rules, melds as M

ALL_VARIANTS = ["caribbean", "k40", "k51", "k101", "na15", "american", "k40+v4", "k51+v4", "k101+v4"]


@lru_cache(maxsize=None)
def R(name: str):
    return load_rules(name)


def toks(text: str) -> list[str]:
    return text.replace("[", " ").replace("]", " ").replace(",", " ").split()


def melds_of(text: str) -> list[list[str]]:
    """``"[a b c] [d e f]"`` -> ``[["a","b","c"], ["d","e","f"]]``."""
    return [toks(part) for part in text.split("]") if part.strip(" [")]


def hand_penalty(rules, hand):
    from kalooki_sim.core.scoring import hand_penalty as hp

    return hp(rules, hand)


# ================================================================================================
# §6.1 Meld legality (and values)
#
# (id, variant, cards, kind, legal, value)  -- kind None = any kind; value checked when legal and given

LEGALITY = [
    ("T01", "caribbean", "5H 5H 5S", "set", True, None),
    ("T01-any-kind", "caribbean", "5H 5H 5S", None, True, None),
    ("T01-not-a-run", "caribbean", "5H 5H 5S", "run", False, None),
    ("T02", "caribbean", "3C JK JK", "set", False, None),
    ("T02-any-kind", "caribbean", "3C JK JK", None, False, None),
    ("T02-two-naturals", "caribbean", "3C 3D JK JK", "set", True, None),     # §2.1 example
    ("T02-two-naturals-1jk", "caribbean", "QH QC JK", "set", True, None),
    ("T02-declared", "caribbean", "QH QC JK=QH", "set", True, None),         # duplicates allowed (A1)
    ("T02-declared-wrong-rank", "caribbean", "QH QC JK=KH", "set", False, None),
    ("T04", "caribbean", "KH KH KS KD KC", "set", True, None),
    ("T04-with-4-jokers", "caribbean", "KH KH KS KD KC JK JK JK JK", "set", True, None),
    ("T04-5-jokers-exceed-deck", "caribbean", "KH KH KS KD KC JK JK JK JK JK", "set", False, None),
    ("T04-3-copies-exceed-deck", "caribbean", "5H 5H 5H", "set", False, None),
    ("T05", "caribbean", "AS 2S 3S 4S", "run", True, None),
    ("T05-any-kind", "caribbean", "AS 2S 3S 4S", None, True, None),
    ("T05-order-free", "caribbean", "3S AS 4S 2S", "run", True, None),      # a meld is a multiset
    ("T06", "caribbean", "JS QS KS AS", "run", True, None),
    ("T06-wrap", "caribbean", "KS AS 2S 3S", "run", False, None),           # §2.1 example
    ("T06-both-aces-14", "caribbean", "AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS", "run", True, None),  # A13
    ("T08", "caribbean", "5H JK=6H 7H JK=8H", "run", True, None),
    ("T08-undeclared", "caribbean", "5H JK 7H JK", "run", True, None),
    ("T08-ace-low", "caribbean", "AH JK=2H 3H JK=4H", "run", True, None),     # §2.1 example
    ("T08-adjacent", "caribbean", "AH JK JK 4H", "run", False, None),         # §2.1 example
    ("T08-adjacent-any-kind", "caribbean", "AH JK JK 4H", None, False, None),
    ("T08-adjacent-mid", "caribbean", "5H JK JK 8H", "run", False, None),
    ("T08-declared-wrong-suit", "caribbean", "5H JK=6D 7H 8H", "run", False, None),
    ("T08-declared-wrong-position", "caribbean", "5H JK=9H 7H 8H", "run", False, None),
    ("T08-declared-twice", "caribbean", "5H 6H JK=6H 7H", "run", False, None),
    ("T10", "caribbean", "5H 6H 7H", "run", False, None),
    ("T10-any-kind", "caribbean", "5H 6H 7H", None, False, None),
    ("T10-with-joker", "caribbean", "5H 6H 7H JK", "run", True, None),
    ("T11", "caribbean", "5H 6H 7D 8H", "run", False, None),
    ("T11-any-kind", "caribbean", "5H 6H 7D 8H", None, False, None),
    ("T12", "k40", "5H 5H 5S", "set", False, None),
    ("T12-any-kind", "k40", "5H 5H 5S", None, False, None),
    ("T12-distinct", "k40", "5H 5D 5S", "set", True, 15),
    ("T12-five-cards", "k40", "6S 6H 6D 6C JK", "set", False, None),       # §2.2 example
    ("T12-four-suits", "k40", "6S 6H 6D 6C", "set", True, 24),
    ("T12-joker-for-missing-suit", "k40", "7S 7D JK", "set", True, 21),
    ("T12-declared-missing-suit", "k40", "7S 7D JK=7H", "set", True, 21),
    ("T12-declared-present-suit", "k40", "7S 7D JK=7S", "set", False, None),
    ("T12-one-natural", "k40", "3C JK JK", "set", True, None),              # A32: K40 needs 1 natural
    ("T12-no-natural", "k40", "JK JK JK", None, False, None),               # all-joker melds only in AMER
    ("T12-aces", "k40", "AS AH AD", "set", True, 33),
    ("T14", "k40", "QD KD AD", "run", True, 31),
    ("T14-any-kind", "k40", "QD KD AD", None, True, 31),
    ("T14-joker-high-ace", "k40", "QH KH JK=AH", "run", True, 31),
    ("T14-joker-best-meaning", "k40", "QH KH JK", None, True, 31),          # JK=AH (31) beats JK=JH (30)
    ("T14-run-13", "k40", "2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS", "run", True, 95),
    ("T14-both-aces", "k40", "AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS", "run", False, None),
    ("T14-adjacent-jokers", "k40", "5H JK JK 8H", "run", True, 26),         # no adjacency rule in K40
    ("T14-joker-run-best", "k40", "JK JK 5H", None, True, 18),              # run 5-6-7 (18) > 3-4-5, set 15
    ("T14-one-natural-run", "k40", "3C JK JK", None, True, 12),             # run 3-4-5 (12) > set of 3s (9)
    ("T15", "k40", "AH 2H 3H", "run", False, None),
    ("T15-any-kind", "k40", "AH 2H 3H", None, False, None),
    ("T15-declared-low-ace", "k40", "JK=AH 2H 3H", "run", False, None),
    ("T15-V4", "k40+v4", "AH 2H 3H", "run", True, 6),
    ("T15-V4-any-kind", "k40+v4", "AH 2H 3H", None, True, 6),
    ("T15-V4-high-ace-still-11", "k40+v4", "QH KH AH", "run", True, 31),
    ("T15-V4-k51", "k51+v4", "AH 2H 3H 4H", "run", True, 10),
    ("T15-V4-k101", "k101+v4", "AH 2H 3H", "run", True, 6),
    ("T15-V4-joker-low-ace", "k40+v4", "JK=AH 2H 3H", "run", True, 6),
    ("T15-V4-aces-set", "k40+v4", "AS AH AD", "set", True, 33),            # a set of aces counts the high ace
    ("T20-low", "na15", "AS 2S 3S", "run", True, 20),
    ("T20-high", "na15", "QS KS AS", "run", True, 35),
    ("T20-both-aces", "na15", "AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS", "run", True, 114),
    ("T20-aces-set", "na15", "AS AH AD", "set", True, 45),
    ("T20-wrap", "na15", "KS AS 2S", None, False, None),                     # §2.5 example
    ("T20-amer-low", "american", "AS 2S 3S", "run", True, 16),             # A30: AMER ace 11 everywhere
    ("T20-amer-high", "american", "QS KS AS", "run", True, 31),
    ("T20-amer-joker-set-3", "american", "JK JK JK", "set", True, 45),     # A31/A32: JOKER_SET, 15 each
    ("T20-amer-joker-set-4", "american", "JK JK JK JK", None, True, 60),
    ("T20-amer-joker-set-not-run", "american", "JK JK JK", "run", False, None),
    ("T20-amer-joker-set-5", "american", "JK JK JK JK JK", None, False, None),
    ("T20-amer-two-jokers", "american", "JK JK", None, False, None),
    ("T20-na15-no-joker-set", "na15", "JK JK JK", None, False, None),
]

# T16: K-A-2 is never a run, in every variant.
LEGALITY += [(f"T16-{v}", v, "KD AD 2D", None, False, None) for v in ALL_VARIANTS]
LEGALITY += [(f"T16-{v}-jokers", v, "KD AD 2D JK", None, False, None) for v in ALL_VARIANTS]
LEGALITY += [(f"T16-{v}-declared", v, "KD JK=AD 2D", "run", False, None) for v in ALL_VARIANTS]


@pytest.mark.parametrize("vid, variant, cards, kind, legal, value", LEGALITY, ids=[r[0] for r in LEGALITY])
def test_meld_legality(vid, variant, cards, kind, legal, value):
    rules = R(variant)
    assert M.is_legal_meld(rules, toks(cards), kind) is legal
    # text and token input give the same answer
    assert M.is_legal_meld(rules, cards, kind=kind) is legal
    if kind is not None and legal:
        assert M.is_legal_meld(rules, toks(cards)) is True
    if value is not None:
        assert legal
        assert M.meld_value(rules, toks(cards)) == value
    if kind is None and not legal:
        with pytest.raises(ValueError):
            M.meld_value(rules, toks(cards))


# ================================================================================================
# §6.2 Caribbean contracts
#
# (id, round, melds, met)

CONTRACTS = [
    ("T21", 3, "[KC KD KD] [5H 6H 7H 8H] [9S 10S JS QS]", True),
    ("T21-same-suit-fours", 3, "[KC KD KD] [2H 3H 4H 5H] [9H 10H JH QH]", False),
    ("T21-short-four", 3, "[KC KD KD] [5H 6H 7H] [9S 10S JS QS]", False),
    ("T21-longer-melds", 3, "[KC KD KD KH] [5H 6H 7H 8H 9H] [9S 10S JS QS]", True),
    ("T21-order-of-melds", 3, "[9S 10S JS QS] [KC KD KD] [5H 6H 7H 8H]", True),
    ("T21-two-threes-one-four", 3, "[KC KD KD] [5C 5D 5H] [9S 10S JS QS]", False),
    ("T24", 2, "[5C 5D 5H] [9S 9D 9C] [3H 4H 5H 6H]", True),
    ("T24-same-rank-threes", 2, "[5C 5D 5H] [5S 5S 5D] [3H 4H 5H 6H]", False),
    ("T24-extra-meld", 2, "[5C 5D 5H] [9S 9D 9C] [3H 4H 5H 6H] [KC KD KS]", False),    # A4
    ("T24-extra-four", 2, "[5C 5D 5H] [9S 9D 9C] [3H 4H 5H 6H] [10C JC QC KC]", False),
    ("T24-missing-meld", 2, "[5C 5D 5H] [9S 9D 9C]", False),
    ("T24-short-four", 2, "[5C 5D 5H] [9S 9D 9C] [3H 4H 5H]", False),
    ("T24-three-threes", 2, "[5C 5D 5H] [9S 9D 9C] [KC KD KS]", False),
    ("T24-exceeds-deck", 2, "[5H 5H 5S] [9S 9D 9C] [2H 3H 4H 5H]", False),             # 3 x 5H > 2 decks
    ("T24-wrong-round", 1, "[5C 5D 5H] [9S 9D 9C] [3H 4H 5H 6H]", False),
    ("T25", 7, "[8C 8C JK] [QH QS QD] [3D 4D JK=5D 6D] [9S 10S JS QS]", True),
    ("T25-undeclared", 7, "[8C 8C JK] [QH QS QD] [3D 4D JK 6D] [9S 10S JS QS]", True),
    ("T25-five-jokers", 7, "[8C 8C JK JK] [QH QS JK] [3D JK=4D 5D 6D] [9S JK=10S JS QS]", False),
    ("T25-illegal-three", 7, "[8C JK JK] [QH QS QD] [3D 4D JK=5D 6D] [9S 10S JS QS]", False),
    ("T25-same-suit-fours", 7, "[8C 8C JK] [QH QS QD] [3D 4D JK=5D 6D] [9D 10D JD QD]", False),
    ("T27", 1, "[4C 4D 4H] [8S 8S 8D] [QH QC JK]", True),
    ("T27-two-threes-same-rank", 1, "[4C 4D 4H] [4S 4S 4D] [QH QC JK]", False),
    ("T27-extra-meld", 1, "[4C 4D 4H] [8S 8S 8D] [QH QC JK] [9C 9D 9H]", False),
    ("T27-two-threes", 1, "[4C 4D 4H] [8S 8S 8D]", False),
    ("T27-four-instead", 1, "[4C 4D 4H] [8S 8S 8D] [9H 10H JH QH]", False),
    ("R4-three-fours", 4, "[AS 2S 3S 4S] [JH QH KH AH] [5D 6D 7D 8D]", True),
    ("R4-two-fours-same-suit", 4, "[AS 2S 3S 4S] [JS QS KS AS] [5D 6D 7D 8D]", False),
    ("R5-four-threes", 5, "[2C 2D 2H] [7S 7S 7H] [JC JD JK] [AC AH AD]", True),
    ("R5-repeated-rank", 5, "[2C 2D 2H] [7S 7S 7H] [JC JD JK] [2S 2S 2H]", False),
    ("R9-four-fours", 9, "[AS 2S 3S 4S] [5H 6H 7H 8H] [9D 10D JD QD] [JC QC KC AC]", True),
    ("R9-two-fours-of-hearts", 9, "[AS 2S 3S 4S] [5H 6H 7H 8H] [9H 10H JH QH] [JC QC KC AC]", False),
    ("R9-a-three-not-a-four", 9, "[AS 2S 3S 4S] [5H 6H 7H 8H] [9D 10D JD QD] [KC KD KH KS]", False),
]


@pytest.mark.parametrize("vid, round_no, melds, met", CONTRACTS, ids=[r[0] for r in CONTRACTS])
def test_caribbean_contract(vid, round_no, melds, met):
    assert M.meets_contract(R("caribbean"), round_no, melds_of(melds)) is met


def test_meets_contract_rejects_points_variants():
    with pytest.raises(ValueError):
        M.meets_contract(R("k40"), 1, melds_of("[5C 5D 5H] [9S 9D 9C]"))


def test_contract_counts_of_T21_to_T27():
    # the melds of T25 use exactly 14 cards = the deal of round 7 (RULES.md §2.1 note)
    assert sum(len(m) for m in melds_of("[8C 8C JK] [QH QS QD] [3D 4D JK=5D 6D] [9S 10S JS QS]")) == 14
    assert R("caribbean").contract(7) == (2, 2)


# ================================================================================================
# §6.3 Penalty values (hand part only; T34/T35 are match scoring, tested with the engine)

PENALTIES = [
    ("T29", "caribbean", "JK AS AH KD 7C", 83),   # 50 + 15 + 1 + 10 + 7
    ("T31", "k40", "JK AS AH KD 7C", 54),         # 15 + 11 + 11 + 10 + 7
    ("T32", "na15", "JK AS AH KD 7C", 62),        # 15 + 15 + 15 + 10 + 7 (pays 62 units: 1 per point)
    ("T31-k51", "k51", "JK AS AH KD 7C", 54),
    ("T31-k101", "k101", "JK AS AH KD 7C", 54),
    ("T31-V4", "k40+v4", "JK AS AH KD 7C", 54),   # V4: a low ace counts 1 only in the opening
    ("T32-amer", "american", "JK AS AH KD 7C", 54),
    ("T29-all-aces", "caribbean", "AC AS AD AH", 32),
    ("T29-faces", "caribbean", "10C JD QH KS 2C 9D", 51),
    ("T29-declared-joker", "caribbean", "JK=5H", 50),
    ("T29-empty", "caribbean", "", 0),
    ("T31-empty", "k40", "", 0),
]


@pytest.mark.parametrize("vid, variant, hand, penalty", PENALTIES, ids=[r[0] for r in PENALTIES])
def test_hand_penalty(vid, variant, hand, penalty):
    assert hand_penalty(R(variant), toks(hand)) == penalty
    assert hand_penalty(R(variant), hand) == penalty


def test_T32_payment_is_one_unit_per_point():
    r = R("na15")
    assert r.pay_per_penalty_point * hand_penalty(r, toks("JK AS AH KD 7C")) == 62


# ================================================================================================
# §6.4 Opening value (points variants)
#
# For T40/T41/T43 only the value of the player's own new melds is tested: whether lay-offs count
# (never in K40; with an own new meld in NA15) is decided by the engine's turn logic.
#
# (id, variant, new melds, opening value, valid opening?)

OPENINGS = [
    ("T37-k40", "k40", "[10H JH QH] [7S 7D 7C]", 51, True),    # 30 + 21
    ("T37-k51", "k51", "[10H JH QH] [7S 7D 7C]", 51, True),    # 51 >= 51
    ("T38", "k40", "[QS KS AS]", 31, False),                   # 31 < 40
    ("T40", "k40", "[8D 9D 10D] [4S 4H 4C]", 39, False),       # 27 + 12; the 10S lay-off never counts
    ("T41", "na15", "[KS KH KD]", 30, False),                  # own meld 30 (+ lay-offs 20 = 50 < 51, below)
    ("T43", "na15", "", 0, False),                             # no own new meld: nothing to count
    ("T37-k40-joker", "k40", "[10H JK QH] [7S JK=7D 7C]", 51, True),   # jokers count as represented
    ("T38-V4", "k40+v4", "[AH 2H 3H] [QS KS AS]", 37, False),  # 6 + 31
    ("T38-V4-40", "k40+v4", "[AH 2H 3H 4H] [KS KD KC]", 40, True),
    ("T20-open", "na15", "[AS 2S 3S] [QS KS AS]", 55, True),   # 20 + 35
    ("T20-amer-open", "american", "[JK JK JK] [QS KS AS]", 76, True),  # 45 + 31
    ("T37-k51-short", "k51", "[10H JH QH] [7S 7D]", None, None),       # illegal meld -> ValueError
]


@pytest.mark.parametrize("vid, variant, melds, value, valid", OPENINGS, ids=[r[0] for r in OPENINGS])
def test_opening_value(vid, variant, melds, value, valid):
    rules = R(variant)
    if value is None:
        with pytest.raises(ValueError):
            M.opening_value(rules, melds_of(melds))
        return
    got = M.opening_value(rules, melds_of(melds))
    assert got == value
    assert (got >= rules.opening_min_points) is valid


def test_T41_layoffs_worth_20_still_below_51():
    # NA15: lay-offs count with an own new meld: [KS KH KD] = 30, QC + KC onto [9C 10C JC] add 20
    r = R("na15")
    gain = M.meld_value(r, toks("9C 10C JC QC KC")) - M.meld_value(r, toks("9C 10C JC"))
    assert gain == 20
    assert M.opening_value(r, melds_of("[KS KH KD]")) + gain == 50 < r.opening_min_points


def test_T40_layoff_would_have_reached_40():
    # K40: 39 + 10S would be 49, but lay-offs never count -> the opening value stays 39 < 40
    r = R("k40")
    assert r.opening_counts_layoffs == "never"
    assert M.opening_value(r, melds_of("[8D 9D 10D] [4S 4H 4C]")) == 39


def test_opening_value_names_the_illegal_meld():
    with pytest.raises(ValueError) as ei:
        M.opening_value(R("k40"), melds_of("[10H JH QH] [5H 5H 5S]"))
    assert "5S" in str(ei.value)


@pytest.mark.parametrize(
    "variant, melds",
    [
        ("k40", "[5H 6H 7H] [5H 6H 7H] [5H 8H 9H]"),       # three 5H from two decks
        ("american", "[JK JK JK] [JK JK JK]"),              # six jokers, the deck has four
        ("k40", "[7S 7D JK] [8S 8D JK] [9S 9D JK]"),        # three jokers, K40 has two
    ],
    ids=["T37-deck-naturals", "T20-amer-deck-jokers", "T37-deck-jokers"],
)
def test_opening_value_melds_together_must_fit_deck(variant, melds):
    with pytest.raises(ValueError):
        M.opening_value(R(variant), melds_of(melds))


# ================================================================================================
# best_lay_down: hand-verified cases
#
# (id, variant, round_no, hand, expected penalty or None, expected left or None (= not checked))

LAYDOWNS = [
    # T27: R1 (3 threes), 10 cards after the draw.  Threes need 2 naturals and distinct ranks; only
    # 4s (3), 8s (3), Qs (2 + JK) qualify, so all nine are forced and the 10th card is left.
    ("T27", "caribbean", 1, "4C 4D 4H 8S 8S 8D QH QC JK 9C", 9, ["9C"]),
    ("T27-fits-three", "caribbean", 1, "4C 4D 4H 8S 8S 8D QH QC JK 4S", 0, []),   # [4C 4D 4H 4S]
    ("T27-extra-joker", "caribbean", 1, "4C 4D 4H 8S 8S 8D QH QC JK JK", 0, []),  # [QH QC JK JK] (T47)
    ("T27-black-ace", "caribbean", 1, "4C 4D 4H 8S 8S 8D QH QC JK AS", 15, ["AS"]),
    ("T27-red-ace", "caribbean", 1, "4C 4D 4H 8S 8S 8D QH QC JK AD", 1, ["AD"]),
    ("T27-exact-9", "caribbean", 1, "4C 4D 4H 8S 8S 8D QH QC JK", 0, []),
    # only two ranks have 2+ naturals (Q with one natural + JK is not a three): no lay-down
    ("T27-no-third-three", "caribbean", 1, "4C 4D 4H 8S 8S 8D QH JK 9C 2D", None, None),
    # T25 hand exactly: R7 contract uses all 14 cards
    ("T25", "caribbean", 7, "8C 8C JK QH QS QD 3D 4D JK 6D 9S 10S JS QS", 0, []),
    # R9 needs four fours of four suits; spades A-4 is the only spade four, 7S stays (7)
    ("R9-four-suits", "caribbean", 9, "AS 2S 3S 4S 5H 6H 7H 8H 9D 10D JD QD JC QC KC AC 7S", 7, ["7S"]),
    ("R9-four-suits-fit", "caribbean", 9, "AS 2S 3S 4S 5H 6H 7H 8H 9D 10D JD QD JC QC KC AC 5S", 0, []),
    # two heart fours but no spade four: distinct suits make it impossible
    ("R9-two-heart-fours", "caribbean", 9, "2H 3H 4H 5H 9H 10H JH QH 5C 6C 7C 8C 5D 6D 7D 8D KS", None, None),
    ("R9-joker-alone-no-four", "caribbean", 9, "2H 3H 4H 5H 9H 10H JH QH 5C 6C 7C 8C 5D 6D 7D 8D JK", None, None),
    # the joker must complete the clubs four (JC QC KC + JK); putting it in spades (A..6 with JK=5S)
    # would leave clubs short, so 6S is left (6)
    ("R9-joker-to-clubs", "caribbean", 9, "AS 2S 3S 4S 5H 6H 7H 8H 9D 10D JD QD JC QC KC JK 6S", 6, ["6S"]),
    # ace high and low in one lay-down (R3: 1 three, 2 fours)
    ("R3-ace-low-and-high", "caribbean", 3, "AS 2S 3S 4S JH QH KH AH 7C 7D 7H 9D", 9, ["9D"]),
    ("R3-ace-low-and-high-fit", "caribbean", 3, "AS 2S 3S 4S JH QH KH AH 7C 7D 7H 5S", 0, []),
    # K-A-2-3 is no four (no wrap) and A-2-3 is only 3 cards: one four only -> None
    ("R3-wrap", "caribbean", 3, "KS AS 2S 3S 5H 6H 7H 8H 9C 9D 9H", None, None),
    # K40: 8D 9D 10D (27) + 4S 4H 4C (12) = 39 < 40 and 2H fits nothing -> None
    ("K40-39-points", "k40", None, "8D 9D 10D 4S 4H 4C 2H", None, None),
    ("T38-alone", "k40", None, "QS KS AS", None, None),
    # adding a joker reaches 40 (e.g. [8D 9D 10D JK=JD] 37 + 12 = 49); 2H cannot be melded
    # (a 2-set needs a second 2; 2H JK 4H would take 4H from the only set) -> left 2H
    ("K40-39-plus-joker", "k40", None, "8D 9D 10D 4S 4H 4C 2H JK", 2, ["2H"]),
    ("T37-k40", "k40", None, "10H JH QH 7S 7D 7C", 0, []),
    ("T37-k40-extra", "k40", None, "10H JH QH 7S 7D 7C 2C", 2, ["2C"]),
    ("T37-k51", "k51", None, "10H JH QH 7S 7D 7C", 0, []),
    ("T37-k51-short", "k51", None, "10H JH QH 7S 7D 6C", None, None),    # 30 + nothing < 51
    # K40 with four kings and a joker: a set holds at most 4 (distinct suits) and a second meld of
    # kings would need two more kings, so one card stays besides 2C.  Keeping the joker out
    # ([KS KH KD KC] = 40) costs 15 + 2 = 17; keeping a king out ([KS KH KD JK] = 40) costs 10 + 2 = 12.
    # (In K40 a joker can always replace a natural, whose penalty <= 11 < 15, so the best lay-down
    # never keeps a joker out.)
    ("K40-keep-king-not-joker", "k40", None, "KS KH KD KC JK 2C", 12, None),
    # with a second KS there are two king sets, [KS KH KD] + [KS KC JK] = 60, and only 2C stays
    ("K40-two-king-sets", "k40", None, "KS KH KD KC KS JK 2C", 2, ["2C"]),
    # ace high only in K40: A-2-3-4 is no run, 2H 3H 4H (9) + KS KD KC (30) = 39 -> None;
    # V4: [AH 2H 3H 4H] = 10, + 30 = 40 -> everything laid; K51+V4: 40 < 51 -> None;
    # NA15: [AH 2H 3H 4H] = 24 (ace 15) + 30 = 54 >= 51 -> everything laid
    ("T15-K40", "k40", None, "AH 2H 3H 4H KS KD KC", None, None),
    ("T15-V4", "k40+v4", None, "AH 2H 3H 4H KS KD KC", 0, []),
    ("T15-K51-V4", "k51+v4", None, "AH 2H 3H 4H KS KD KC", None, None),
    ("T20-NA15", "na15", None, "AH 2H 3H 4H KS KD KC", 0, []),
    # K40 ace high: [QH KH AH] 31 + [JS JD JC] 30 = 61; 2H 3H cannot join (no A-2-3) -> 5
    ("T14-high-only", "k40", None, "QH KH AH 2H 3H JS JD JC", 5, ["2H", "3H"]),
    # NA15: one AS cannot serve both [QS KS AS] (35) and [AS AH AD] (45); alone each < 51 -> None.
    # With a joker standing for the second AS: 35 + 45 = 80 -> everything laid.
    ("T20-one-ace-short", "na15", None, "QS KS AS AH AD", None, None),
    ("T20-joker-as-ace", "na15", None, "QS KS AS AH AD JK", 0, []),
    # AMER: [JK JK JK JK] alone is 60 but leaves AS (11); [JK=10S JK=JS JK=QS JK=KS AS] = 51 lays all
    ("T20-amer-jokers-run", "american", None, "JK JK JK JK AS", 0, []),
    # AMER: JOKER_SET 45 < 51 and 5C + 3 jokers is at most 26 -> None
    ("T20-amer-joker-set-short", "american", None, "JK JK JK 5C", None, None),
]


def _flatten_types(meld_lists):
    out = []
    for m in meld_lists:
        for t in m:
            out.append("JK" if t.upper().startswith("JK") else t.upper())
    return out


def _check_lay_down(rules, round_no, hand, res):
    """Invariants every lay-down must satisfy (docs/meld-semantics.md)."""
    assert Counter(_flatten_types(res.melds)) + Counter(t.upper() for t in res.left) == Counter(toks(hand))
    for m in res.melds:
        assert M.is_legal_meld(rules, m), m
    assert res.penalty == hand_penalty(rules, res.left)
    if rules.opening_mode == "contract":
        assert M.meets_contract(rules, round_no, res.melds)
    else:
        assert M.opening_value(rules, res.melds) >= rules.opening_min_points


@pytest.mark.parametrize("vid, variant, round_no, hand, penalty, left", LAYDOWNS, ids=[r[0] for r in LAYDOWNS])
def test_best_lay_down(vid, variant, round_no, hand, penalty, left):
    rules = R(variant)
    res = M.best_lay_down(rules, toks(hand), round_no) if round_no else M.best_lay_down(rules, toks(hand))
    if penalty is None:
        assert res is None
        return
    assert res is not None
    assert res.penalty == penalty
    if left is not None:
        assert sorted(res.left) == sorted(left)
    _check_lay_down(rules, round_no, hand, res)


def test_best_lay_down_joker_in_run_so_natural_goes_to_set():
    """Caribbean R2 (2 threes, 1 four).  Threes need 2 naturals and distinct ranks: only the 7s
    (7C 7H) and the Ks qualify, so the 7-three must hold both 7C and 7H plus a joker.  The hearts
    four 4H 5H 6H then cannot take the 7H and needs the second joker (JK=3H or JK=7H).  2C fits
    nothing: penalty 2."""
    rules = R("caribbean")
    hand = "7C 7H KS KD KC 4H 5H 6H JK JK 2C"
    res = M.best_lay_down(rules, toks(hand), 2)
    assert res is not None
    assert res.penalty == 2 and res.left == ["2C"]
    _check_lay_down(rules, 2, hand, res)
    sevens = [m for m in res.melds if "7C" in m]
    assert len(sevens) == 1 and "7H" in sevens[0]
    assert any(t.startswith("JK=7") for t in sevens[0])          # joker declared as a 7
    run = [m for m in res.melds if "4H" in m]
    assert len(run) == 1 and "7H" not in run[0]
    assert set(run[0]) & {"JK=3H", "JK=7H"}                       # joker declared by its position
    # runs are written low to high
    assert run[0] in (["JK=3H", "4H", "5H", "6H"], ["4H", "5H", "6H", "JK=7H"])


def test_best_lay_down_keeps_a_king_out_not_the_joker():
    res = M.best_lay_down(R("k40"), toks("KS KH KD KC JK 2C"))
    assert res is not None and res.penalty == 12
    assert "JK" not in res.left and "2C" in res.left
    assert len(res.left) == 2 and [t for t in res.left if t != "2C"][0][0] == "K"


def test_best_lay_down_no_joker_means_no_lay_down():
    # same hand with one joker: the 7-three takes it and the hearts four is one card short
    assert M.best_lay_down(R("caribbean"), toks("7C 7H KS KD KC 4H 5H 6H JK 2C 3C"), 2) is None


def test_best_lay_down_joker_set_run_declarations_amer():
    res = M.best_lay_down(R("american"), toks("JK JK JK JK AS"))
    assert res is not None and res.penalty == 0
    (run,) = res.melds
    assert run == ["JK=10S", "JK=JS", "JK=QS", "JK=KS", "AS"]


def test_best_lay_down_contract_needs_round():
    with pytest.raises((ValueError, TypeError)):
        M.best_lay_down(R("caribbean"), toks("4C 4D 4H 8S 8S 8D QH QC JK"))


def test_best_lay_down_accepts_text():
    res = M.best_lay_down(R("caribbean"), "4C 4D 4H 8S 8S 8D QH QC JK 9C", 1)
    assert res is not None and res.penalty == 9 and res.left == ["9C"]


def test_caribbean_and_british_kind_names():
    from kalooki_sim import load_rules
    from kalooki_sim.melds import is_legal_meld

    carib = load_rules("caribbean")
    assert is_legal_meld(carib, "5H 5H 5S", kind="three")
    assert not is_legal_meld(carib, "5H 5H 5S", kind="four")
    assert is_legal_meld(carib, "AS 2S 3S 4S", kind="four")
    k40 = load_rules("k40")
    assert is_legal_meld(k40, "7S 7D 7C", kind="group") and is_legal_meld(k40, "QD KD AD", kind="sequence")
    with pytest.raises(ValueError, match="kind"):
        is_legal_meld(carib, "5H 5H 5S", kind="pair")
