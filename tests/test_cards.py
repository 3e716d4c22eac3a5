"""Card types and their text form (RULES.md §1.2, §1.3; kalooki_sim/core/cards.py)."""

from __future__ import annotations

import numpy as np
import pytest

from kalooki_sim.core import cards as C
from kalooki_sim.core.cards import (
    JOKER, N_TYPES, Card, card_text, cards_of_counts, counts_of, format_cards, is_red, make_type, parse_card,
    parse_cards, physical_to_type, rank_of, suit_of, type_text,
)

RANK_TOKENS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
SUIT_TOKENS = ["C", "D", "H", "S"]
ALL_TEXT = [r + s for s in SUIT_TOKENS for r in RANK_TOKENS] + ["JK"]


# ------------------------------------------------------------------------------------------------
# Encoding constants


def test_type_layout_constants():
    assert N_TYPES == 53
    assert JOKER == 52
    assert C.SUITS == "CDHS"
    assert C.RANKS == tuple(RANK_TOKENS)


@pytest.mark.parametrize(
    "text, suit, rank_index",
    [("AC", 0, 0), ("2C", 0, 1), ("KC", 0, 12), ("AD", 1, 0), ("10D", 1, 9),
     ("AH", 2, 0), ("6H", 2, 5), ("QH", 2, 11), ("JS", 3, 10), ("KS", 3, 12)],
)
def test_type_is_suit_times_13_plus_rank(text, suit, rank_index):
    t = parse_card(text).type
    assert t == suit * 13 + rank_index == make_type(suit, rank_index)
    assert suit_of(t) == suit
    assert rank_of(t) == rank_index


# ------------------------------------------------------------------------------------------------
# Round trips text <-> type for all 53 types


@pytest.mark.parametrize("t", range(N_TYPES), ids=ALL_TEXT)
def test_type_text_round_trip(t):
    text = type_text(t)
    assert text == ALL_TEXT[t]
    card = parse_card(text)
    assert card == Card(t) and card.type == t and card.as_type == -1
    assert card_text(card) == text
    assert card_text(t) == text
    assert str(card) == text
    assert parse_cards([text]) == [Card(t)]
    assert card.is_joker == (t == JOKER)


def test_all_types_parse_from_one_text():
    text = " ".join(ALL_TEXT)
    assert [c.type for c in parse_cards(text)] == list(range(N_TYPES))
    assert format_cards(parse_cards(text)) == text


@pytest.mark.parametrize("t", range(52), ids=ALL_TEXT[:52])
def test_declared_joker_round_trip(t):
    token = "JK=" + ALL_TEXT[t]
    card = parse_card(token)
    assert card == Card(JOKER, t)
    assert card.is_joker
    assert card_text(card) == token
    assert parse_card(card_text(card)) == card


def test_examples_from_rules_text():
    assert parse_card("AH") == Card(26)
    assert parse_card("10S") == Card(3 * 13 + 9)
    assert parse_card("QD") == Card(13 + 11)
    assert parse_card("JK") == Card(JOKER)
    assert parse_card("JK=6H") == Card(JOKER, 2 * 13 + 5)


def test_output_always_uses_10_not_T():
    # "T" is tolerated on input (cards.py), output is always "10"
    assert parse_card("TS") == parse_card("10S")
    assert card_text(parse_card("TS")) == "10S"


def test_whitespace_and_case_are_tolerated():
    assert parse_card(" ah ") == parse_card("AH")
    assert parse_card("jk=6h") == parse_card("JK=6H")


def test_type_text_rejects_out_of_range():
    with pytest.raises(ValueError):
        type_text(53)
    with pytest.raises(ValueError):
        type_text(-1)


# ------------------------------------------------------------------------------------------------
# Parsing text with brackets and commas, lists of tokens, mixed inputs


def test_parse_meld_text_with_brackets():
    got = parse_cards("[5H JK=6H 7H JK=8H]")
    assert got == [Card(2 * 13 + 4), Card(JOKER, 2 * 13 + 5), Card(2 * 13 + 6), Card(JOKER, 2 * 13 + 7)]


def test_parse_text_with_commas_and_several_melds():
    got = parse_cards("[KC, KD, KD] [5H,6H,7H,8H]")
    assert format_cards(got) == "KC KD KD 5H 6H 7H 8H"
    assert parse_cards("KC,KD , KD") == parse_cards("KC KD KD")


def test_parse_list_of_tokens_equals_text():
    tokens = ["8C", "8C", "JK", "QH", "JK=5D", "10S"]
    assert parse_cards(tokens) == parse_cards(" ".join(tokens))
    assert parse_cards(tuple(tokens)) == parse_cards(tokens)


def test_parse_mixed_cards_and_type_ids():
    got = parse_cards(["AH", Card(JOKER, 3), 0, np.int64(52)])
    assert got == [Card(26), Card(JOKER, 3), Card(0), Card(JOKER)]


def test_parse_empty_inputs():
    assert parse_cards("") == []
    assert parse_cards("[ ]") == []
    assert parse_cards([]) == []


def test_parse_rejects_out_of_range_type_id():
    with pytest.raises(ValueError, match="53"):
        parse_cards([53])
    with pytest.raises(ValueError):
        parse_cards([-1])


def test_format_cards():
    assert format_cards([Card(0), Card(JOKER, 31), 52, 9]) == "AC JK=6H JK 10C"


# ------------------------------------------------------------------------------------------------
# Colour


@pytest.mark.parametrize("t", range(N_TYPES), ids=ALL_TEXT)
def test_is_red(t):
    text = ALL_TEXT[t]
    expected = text != "JK" and text[-1] in "DH"
    assert is_red(t) is expected


def test_red_and_black_aces():
    # the colour matters for Caribbean ace penalties (AC/AS 15, AD/AH 1)
    assert not is_red(parse_card("AC").type)
    assert not is_red(parse_card("AS").type)
    assert is_red(parse_card("AD").type)
    assert is_red(parse_card("AH").type)
    assert not is_red(JOKER)


# ------------------------------------------------------------------------------------------------
# Errors name the bad token


@pytest.mark.parametrize(
    "bad",
    ["1H", "ZZ", "JK=JK", "11C", "10", "A", "H", "JK=", "JK=1H", "AX", "0S", "1", "JKK", "KJ"],
)
def test_unparseable_token_raises_value_error_naming_it(bad):
    with pytest.raises(ValueError) as ei:
        parse_card(bad)
    assert bad in str(ei.value)


@pytest.mark.parametrize("bad", ["1H", "ZZ", "JK=JK", "11C", "10"])
def test_bad_token_inside_text_is_named(bad):
    with pytest.raises(ValueError) as ei:
        parse_cards(f"[AH {bad} QD]")
    assert bad in str(ei.value)
    with pytest.raises(ValueError) as ei:
        parse_cards(["AH", bad, "QD"])
    assert bad in str(ei.value)
    with pytest.raises(ValueError):
        counts_of(f"AH {bad}")


def test_non_text_token_is_rejected():
    with pytest.raises(ValueError):
        parse_card(None)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        parse_cards([1.5])


# ------------------------------------------------------------------------------------------------
# Count vectors


def test_counts_of_hand():
    counts = counts_of("JK AS AH KD 7C JK=6H 7C")
    assert counts.shape == (53,)
    assert counts.dtype == np.int64
    assert counts[JOKER] == 2  # declarations are dropped
    assert counts[parse_card("7C").type] == 2
    assert counts[parse_card("AS").type] == 1
    assert counts.sum() == 7


def test_cards_of_counts_is_in_type_order():
    got = cards_of_counts(counts_of("JK KD AC 7C AC"))
    assert format_cards(got) == "AC AC 7C KD JK"


def test_counts_round_trip_random():
    rng = np.random.default_rng(12345)
    for _ in range(200):
        counts = rng.integers(0, 3, size=N_TYPES).astype(np.int64)
        counts[JOKER] = rng.integers(0, 5)
        cards = cards_of_counts(counts)
        assert len(cards) == counts.sum()
        assert np.array_equal(counts_of(cards), counts)
        assert np.array_equal(counts_of(format_cards(cards)), counts)


def test_text_round_trip_through_counts():
    text = "2C 2C 10D QH KS JK JK"
    assert format_cards(cards_of_counts(counts_of(text))) == text


def test_empty_counts():
    assert cards_of_counts(np.zeros(N_TYPES, dtype=np.int64)) == []
    assert counts_of([]).sum() == 0


# ------------------------------------------------------------------------------------------------
# Physical ids (RULES.md §1.2) -> types


@pytest.mark.parametrize("n_decks, n_jokers", [(2, 2), (2, 4), (3, 8), (1, 2)])
def test_physical_to_type_matches_rules_encoding(n_decks, n_jokers):
    # natural id = deck*52 + suit*13 + (rank-1); joker id = 52*n_decks + j
    for deck in range(n_decks):
        for suit in range(4):
            for rank in range(1, 14):
                cid = deck * 52 + suit * 13 + (rank - 1)
                t = physical_to_type(cid, n_decks)
                assert t == make_type(suit, rank - 1)
                assert suit_of(t) == suit and rank_of(t) == rank - 1
    for j in range(n_jokers):
        assert physical_to_type(52 * n_decks + j, n_decks) == JOKER


def test_physical_to_type_examples():
    assert physical_to_type(0, 2) == 0
    assert physical_to_type(52, 2) == 0
    assert physical_to_type(103, 2) == 51
    assert physical_to_type(104, 2) == JOKER
    assert physical_to_type(107, 2) == JOKER
    assert physical_to_type(104, 3) == 0
    assert physical_to_type(155, 3) == 51
    assert physical_to_type(156, 3) == JOKER


def test_full_deck_has_n_decks_copies_of_each_natural():
    n_decks, n_jokers = 2, 4
    types = [physical_to_type(i, n_decks) for i in range(52 * n_decks + n_jokers)]
    counts = np.bincount(types, minlength=N_TYPES)
    assert (counts[:52] == n_decks).all()
    assert counts[JOKER] == n_jokers


def test_ids_round_trip_helpers():
    from kalooki_sim.core.cards import to_ids, to_text

    assert to_ids("AH 10S JK") == [26, 48, 52]
    assert to_text([26, 48, 52]) == "AH 10S JK"
    assert to_text(to_ids("2C KS JK=6H")) == "2C KS JK"      # ids are card types: declarations drop
