"""Table manipulation M1-M5 of the Kalooki 40 family (RULES.md §2.2, §6.7 T62-T69, A19, A21, A23, D23).

Positions are written with ``Game.from_text`` (P1 active, in his play phase).  A card taken from
the table is *owed*: it sits in the hand but must be placed before anything else (T68), and a
take is only offered when it can be placed at once.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
from play_positions import play_position

from kalooki_sim import load_rules
from kalooki_sim.engine import layout as L
from kalooki_sim.engine.batch import random_playouts
from kalooki_sim.engine.core import start_games
from kalooki_sim.engine.state import State
from kalooki_sim.runtime.game import Game

POINTS_PRESETS = ("k40", "k51", "k101", "na15", "american")


@lru_cache(maxsize=None)
def R(name="k40", **kw):
    return load_rules(name, **kw)


def G(hand, table, name="k40", laid=True, **kw):
    return play_position(R(name, **kw), hand, table=table, laid=laid)


def melds(g):
    return [toks for _, toks in g.table]


# ------------------------------------------------------------------------------------------------
# §6.7 vectors


def test_T63_split():
    g = G("8D 2C 9S", "P2 [6D 7D 8D 9D 10D]")
    assert "split 1 with 8D" in g.legal_action_texts()
    g.apply("split 1 with 8D")
    assert melds(g) == [["6D", "7D", "8D"], ["8D", "9D", "10D"]]
    assert g.hand(0) == ["2C", "9S"]
    assert g.check("discard 2C") == 0                # nothing taken, nothing owed


def test_split_needs_two_legal_parts():
    g = G("7D 8D 2C 9S", "P2 [6D 7D 8D 9D]")
    assert g.check("split 1 with 7D") == L.E_BREAKS_MELD      # [6D 7D] would be left
    assert g.check("split 1 with 8D") == L.E_BREAKS_MELD      # [8D 9D] would be left
    g = G("2C 9S", "P2 [6D 7D 8D 9D 10D]")
    assert g.check("split 1 with 8D") == L.E_NO_CARD


def test_T65_end_take_leaving_two_cards_is_illegal():
    g = G("2C 9S", "P2 [3H 4H 5H]")
    assert g.check("take 5H from 1") == L.E_BREAKS_MELD
    assert g.check("take 3H from 1") == L.E_BREAKS_MELD


def test_T67_take_from_4_card_set_then_lay():
    g = G("7H 8H 2C", "P2 [6S 6H 6D 6C]")
    assert g.check("take 6H from 1") == 0
    g.apply("take 6H from 1")
    assert melds(g) == [["6S", "6D", "6C"]]
    assert "6H taken from the table" in str(g)
    # T68: the taken card must be placed before the turn can end
    assert g.check("discard 2C") == L.E_MUST_PLACE
    assert g.check("end turn") == L.E_MUST_PLACE
    lay = [t for t in g.legal_action_texts() if t.startswith("lay down")]
    assert lay == ["lay down [6H 7H 8H]"]
    g.apply(lay[0])
    assert melds(g) == [["6S", "6D", "6C"], ["6H", "7H", "8H"]]
    assert g.check("discard 2C") == 0


def test_T69_not_opened_player_cannot_manipulate():
    g = G("8D 6H 2C 9S", "P2 [6D 7D 8D 9D 10D], P2 [6S 6C 6D 6H]", laid=False)
    for text in ("split 1 with 8D", "take 10D from 1", "take 6D from 1", "shift JK on 1 high",
                 "take 6S from 2"):
        assert g.check(text) == L.E_NOT_LAID, text


def test_caribbean_has_no_manipulation():
    g = G("8D 2C 9S 4C", "P2 [6D 7D 8D 9D 10D]", name="caribbean")
    assert g.check("split 1 with 8D") == L.E_NO_MANIP
    assert g.check("take 10D from 1") == L.E_NO_MANIP


# ------------------------------------------------------------------------------------------------
# M1 shift, M2 end take


def test_M1_shift_combined_example():
    # RULES.md §2.2: table [3H 4H 5H], hand 2H 5D 5C -> add 2H below, take 5H -> [2H 3H 4H] and [5H 5D 5C]
    g = G("2H 5D 5C 9S", "P2 [3H 4H 5H]")
    assert g.action_text(g.action_id("shift 2H on 1")) == "shift 2H on 1"
    g.apply("shift 2H on 1")
    assert melds(g) == [["2H", "3H", "4H"]]
    assert sorted(g.hand(0)) == ["5C", "5D", "5H", "9S"]
    assert g.check("discard 9S") == L.E_MUST_PLACE
    g.apply("lay down [5H 5D 5C]")
    assert sorted(map(sorted, melds(g))) == [["2H", "3H", "4H"], ["5C", "5D", "5H"]]
    assert g.hand(0) == ["9S"]


def test_M1_shift_high_with_a_joker():
    g = G("JK 3C 3D 9S", "P2 [3H 4H 5H]")
    g.apply("shift JK on 1 high")
    assert melds(g) == [["4H", "5H", "JK=6H"]]
    g.apply("lay down [3H 3C 3D]")
    assert g.hand(0) == ["9S"]


def test_M1_never_takes_a_joker_and_counts_toward_the_end_limit():
    g = G("6H 2C 9S", "P2 [JK=3H 4H 5H]")
    assert g.check("shift 6H on 1") == L.E_TAKE_JOKER
    # A21: two cards already placed at the high end this turn -> a shift there is over the limit
    g = G("8H 9H 10H 3C 3D 9S", "P2 [3H 4H 5H 6H 7H]")
    g.apply("tack 8H on 1").apply("tack 9H on 1")
    assert g.check("shift 10H on 1") == L.E_LAYOFF_LIMIT


def test_M2_end_take_rules():
    g = G("9C 2S 5C 5D", "P2 [3H 4H 5H 6H]")
    assert g.check("take 6H from 1") == 0
    assert g.check("take 3H from 1") == 0
    g.apply("take 6H from 1")
    assert melds(g) == [["3H", "4H", "5H"]]
    assert g.check("take 5H from 1") == L.E_MUST_PLACE       # the taken 6H comes first
    g.apply("tack 6H on 1")
    assert melds(g) == [["3H", "4H", "5H", "6H"]]
    assert g.check("discard 9C") == 0


def test_take_not_offered_when_card_cannot_be_placed():
    # both high-end lay-offs of this turn are used, so 8H could not go back, and makes no meld
    g = G("7H 8H 9C 2S", "P2 [3H 4H 5H 6H]")
    g.apply("tack 7H on 1").apply("tack 8H on 1")
    assert g.check("take 8H from 1") == L.E_NOT_USABLE
    assert "take 8H from 1" not in g.legal_action_texts()


# ------------------------------------------------------------------------------------------------
# M4 substitution, M5 take from a 4-card set


def test_M4_substitution():
    g = G("6C 7H 8H 2C", "P2 [6S 6H 6D]")
    assert g.check("substitute 6C for 6H in 1") == 0
    g.apply("substitute 6C for 6H in 1")
    assert sorted(melds(g)[0]) == ["6C", "6D", "6S"]
    assert g.check("discard 2C") == L.E_MUST_PLACE
    g.apply("lay down [6H 7H 8H]")
    assert g.hand(0) == ["2C"]


def test_M4_needs_the_missing_suit_and_a_3_card_set():
    g = G("6D 6C 2C", "P2 [6S 6H 6D]")
    assert g.check("substitute 6D for 6H in 1") == L.E_WRONG_SUIT
    assert g.check("substitute 6C for 6C in 1") == L.E_WRONG_SUIT
    g = G("6D 6C 2C", "P2 [6S 6H JK=6D]")
    assert g.check("substitute 6C for 6D in 1") == L.E_NOT_IN_MELD   # a joker is swapped (M6), not taken
    g = G("6C 2C", "P2 [6S 6H 6D 6C]")
    assert g.check("substitute 6C for 6H in 1") == L.E_KIND


def test_M5_keeps_jokers_locked_and_three_naturals_enough():
    g = G("7H 8H 2C", "P2 [6S 6H 6D JK]")
    with pytest.raises(Exception):
        g.check("take JK from 1")                      # no such move: a joker leaves only by a swap
    assert g.check("take 6H from 1") == 0
    g.apply("take 6H from 1")
    assert sorted(t.split("=")[0] for t in melds(g)[0]) == ["6D", "6S", "JK"]
    g = G("2C 9S", "P2 [6S 6H 6D]")
    assert g.check("take 6H from 1") == L.E_KIND


def test_manipulation_cap_per_turn():
    g = G("2C 9S", "P2 [6S 6H 6D 6C]")
    for _ in range(L.MANIP_MAX_PER_TURN):
        g.apply("take 6H from 1").apply("tack 6H on 1")
    assert g.check("take 6H from 1") == L.E_MANIP_CAP


# ------------------------------------------------------------------------------------------------
# random play with manipulation: invariants on every state


@pytest.mark.parametrize("name", POINTS_PRESETS)
def test_random_play_invariants_with_manipulation(name):
    """2,000 random games per preset, every state checked (check=1): conservation, every meld
    legal, mask non-empty; the bias makes players meld, lay off and manipulate often (about 20 s
    per preset on one core)."""
    r = R(name)
    rv = r.to_vector()
    n = 2000
    st = State.empty(n)
    ids = np.arange(n, dtype=np.int64)
    start_games(st.arrays(), rv, 4, np.full(n, -1, dtype=np.int64), np.full(n, 3, dtype=np.int64), ids, 1)
    err = np.zeros(n, dtype=np.int64)
    stats = np.zeros((n, 9), dtype=np.int64)
    random_playouts(st.arrays(), rv, 21, 20000, 1, 0.7, err, stats)
    assert (err == 0).all(), err[err != 0][:5]
    assert (st.gs[:, L.G_TERMINAL] == 1).all()
    tot = stats.sum(axis=0)
    assert tot[8] > n // 2, tot                          # manipulations really happen
    assert tot[7] == 0


# ------------------------------------------------------------------------------------------------
# greedy uses manipulation to shed cards


def greedy_choice(g):
    from kalooki_sim.agents.base import GREEDY, default_params
    from kalooki_sim.agents.compiled import choose_action

    mask = g.legal_mask()
    a = choose_action(GREEDY, default_params(GREEDY), g.state.arrays(), g.rv, 0, g.to_act, mask, int(mask.sum()),
                      np.uint64(1), np.zeros(1, dtype=np.int64))
    assert mask[a]
    return g.action_text(a)


def greedy_turn(g):
    """Let greedy play P1's play phase to its discard; returns the action texts."""
    done = []
    while g.phase == "play" and g.to_act == 0 and not g.terminal and len(done) < 30:
        done.append(greedy_choice(g))
        g.apply(done[-1])
        if done[-1].startswith("discard"):
            break
    return done


def test_greedy_splits_and_takes_into_a_new_meld():
    # split: the duplicate 8D cannot be tacked anywhere
    g = G("8D 2C 9S", "P2 [6D 7D 8D 9D 10D]")
    assert greedy_choice(g) == "split 1 with 8D"
    # the combined example of §2.2: tack 2H below, take 5H off the top, lay [5H 5D 5C]
    g = G("2H 5D 5C 9S", "P2 [3H 4H 5H]")
    assert greedy_turn(g) == ["tack 2H on 1", "take 5H from 1", "lay down [5C 5D 5H]", "discard 9S"]
    assert sorted(map(sorted, melds(g))) == [["2H", "3H", "4H"], ["5C", "5D", "5H"]]
    # a plain take that would only move a card elsewhere is not made
    g = G("5D 9C 9S", "P2 [3H 4H 5H 6H]")
    assert greedy_turn(g)[0].startswith("discard")


def test_greedy_takes_from_a_4_card_set_for_a_new_run():
    g = G("7H 8H 2C", "P2 [6S 6H 6D 6C]")
    assert greedy_choice(g) == "take 6H from 1"
    g.apply("take 6H from 1")
    assert greedy_choice(g) == "lay down [6H 7H 8H]"


@pytest.mark.parametrize("name,kw", [("k40", {}), ("na15", {}), ("american", {}), ("k40+v4", {}),
                                     ("k40", {"set_allow_duplicate_suit": True})])
def test_meld_prefilter_never_hides_a_meld(name, kw):
    """``core.could_join_new_meld`` (cheap, skips the search in restricted-draw and owed-card
    checks; greedy's takes ask the same test through ``search.natural_meldable_held``) must be true
    whenever the exact best lay-down places the card: the card added to the hand (``held`` = 0) or
    already in it (``held`` = 1), before and after the opening."""
    from kalooki_sim.engine.plans import plan_count, _search_plan, could_join_new_meld

    r = R(name, **kw)
    rv = r.to_vector()
    n_rounds = len(r.contracts) if r.opening_mode == "contract" else 1
    hands = np.zeros((1, L.P_MAX, L.N_TYPES), dtype=np.int8)
    out = np.zeros((L.PLAN_MELDS, L.PLAN_REC), dtype=np.int64)
    work = np.zeros(L.W_LEN, dtype=np.int64)
    rng = np.random.default_rng(5)
    deck = np.array([t for t in range(52) for _ in range(r.n_decks)] + [L.JOKER] * r.n_jokers)
    hits = 0
    for i in range(4000):
        size = int(rng.integers(6, 14))
        cards = rng.choice(deck, size=size, replace=False)
        c = int(cards[0]) if cards[0] != L.JOKER else int(rng.integers(52))
        held = int(rng.integers(2))                  # 1: c is one of the cards, 0: c comes on top
        hand = np.bincount(cards if held else cards[1:], minlength=L.N_TYPES).astype(np.int64)
        if held and hand[c] == 0:
            continue
        hands[0, 0] = hand
        full = hand.copy()
        if not held:
            full[c] += 1
        laid = bool(i % 2) if r.new_melds_after_opening else False
        nm = _search_plan(full, laid, rv, i % n_rounds, out, work, -1, np.bool_(False))
        exact = nm >= 0 and plan_count(out, nm, c) > 0
        hits += exact
        if exact:
            assert could_join_new_meld(hands, rv, 0, 0, c, held), (sorted(cards.tolist()), c, held, laid)
    assert hits > 100


def test_position_text_names_runs_and_sets():
    g = G("8D 2C 9S", "P2 [6D 7D 8D 9D 10D], P2 [6S 6H 6D]")
    assert "1: P2 run [6D 7D 8D 9D 10D]" in str(g) and "2: P2 set [6S 6H 6D]" in str(g)


# ------------------------------------------------------------------------------------------------
# Issue 37: a swap's natural comes from the hand (A45), the card drawn from the pile is not thrown
# back by a chain (D19), set jokers stand for any missing suit, jokers at either end of a run, and
# the lay-off counts after a split (D28)


@pytest.mark.parametrize("table, take, swap", [
    # the position: a joker in a 4-card set is locked (A19/A20, T59)
    ("P2 [JD JK JH JS]", "take JH from 1", "swap JH for joker in 1"),
    # a natural taken from a run end would free a run joker elsewhere
    ("P2 [5H 6H 7H 8H], P3 [3H 4H JK=5H]", "take 5H from 1", "swap 5H for joker in 2"),
    # ... a joker of a 3-card set
    ("P2 [6S 6H 6D 6C], P3 [6S JK 6D]", "take 6H from 1", "swap 6H for joker in 2"),
    # ... one of two jokers of a set
    ("P2 [QS QH QD QC], P3 [QD JK=QC JK=QS]", "take QH from 1", "swap QH for joker in 2"),
])
def test_A45_a_card_taken_from_the_table_never_frees_a_joker(table, take, swap):
    g = G("2C 9S", table)
    g.apply(take)
    assert g.check(swap) == L.E_SWAP_FROM_TABLE
    assert not any(t.startswith(("swap", "move joker")) for t in g.legal_action_texts())


def test_A45_a_natural_from_the_hand_still_swaps_after_the_taken_card_is_back():
    g = G("6H 2C 9S", "P2 [6S 6H 6D 6C], P3 [6S JK 6D]")
    g.apply("take 6H from 1")
    assert g.check("swap 6H for joker in 2") == L.E_SWAP_FROM_TABLE   # the hand's copy waits too
    g.apply("tack 6H on 1")
    assert g.check("swap 6H for joker in 2") == 0                     # now from the hand


def test_D19_the_card_drawn_from_the_pile_is_not_thrown_back_by_a_chain():
    g = Game.from_text("""
active: P1
phase: play
taken: 7S
P1: 7S 2C 9D | laid
P2: 2S 4S | laid
P3: 2D 3S
P4: KD KH
table: P2 [7S 8S 9S 10S]
discard: QS
""", R())
    g.apply("take 10S from 1").apply("shift 10S on 1")
    assert melds(g) == [["8S", "9S", "10S"]]
    g.apply("tack 7S on 1")                              # the table's 7S goes back where it was
    assert melds(g) == [["7S", "8S", "9S", "10S"]]
    assert g.check("discard 7S") == L.E_TAKEN_DISCARD    # the 7S in hand is the one drawn
    assert g.check("discard 2C") == 0


def test_D19_a_copy_from_the_hand_still_lifts_the_ban():
    g = Game.from_text("""
active: P1
phase: play
taken: 7S
P1: 7S 7S 2C | laid
P2: 2S 4S | laid
P3: 2D 3S
P4: KD KH
table: P2 [8S 9S 10S]
discard: QS
""", R())
    assert g.check("discard 7S") == 0                    # another copy in hand (A53)
    g.apply("tack 7S on 1")
    assert g.check("discard 7S") == 0                    # a copy from the hand was laid (D19)


@pytest.mark.parametrize("recorded", ["KC", "KS"])
def test_a_set_joker_stands_for_any_missing_suit(recorded):
    g = G("KS KC 2C 9S", f"P2 [KD KH JK={recorded}]")
    assert g.check("tack KS on 1") == 0
    assert g.check("tack KC on 1") == 0
    assert g.check("substitute KC for KD in 1") == 0
    assert g.check("substitute KS for KD in 1") == 0
    assert g.check("swap KC for joker in 1") == 0
    assert g.check("swap KS for joker in 1") == 0
    g.apply(f"tack {recorded} on 1")
    other = "KS" if recorded == "KC" else "KC"
    assert sorted(melds(g)[0]) == sorted(["KD", "KH", recorded, f"JK={other}"])
    assert g.check(f"tack {other} on 1") == L.E_SET_FULL


def test_a_set_joker_blocks_no_take_that_needs_its_suit():
    # JC taken from the 4-card set can only go onto [JD JH JK=JC]: its joker stands for JC or JS
    g = G("2C 9S", "P2 [JS JH JD JC], P3 [JD JH JK=JC]")
    assert g.check("take JC from 1") == 0


def test_a_joker_is_laid_off_at_either_end_of_a_run():
    g = G("JK 2C 9S", "P2 [5H 6H 7H]")
    assert g.check("tack JK on 1 low end") == 0
    assert g.copy().apply("tack JK on 1").table[0][1] == ["5H", "6H", "7H", "JK=8H"]
    assert g.copy().apply("tack JK on 1 low end").table[0][1] == ["JK=4H", "5H", "6H", "7H"]
    # A21: the high end has had its two cards this turn: the plain lay-off goes low
    g = G("8H 9H JK 2C 9S", "P2 [5H 6H 7H]")
    g.apply("tack 8H on 1").apply("tack 9H on 1")
    assert g.check("tack JK on 1") == 0
    assert g.check("tack JK on 1 low end") == L.E_ONE_END   # one end open: the plain lay-off is it
    assert "tack JK on 1 low end" not in g.legal_action_texts()
    g.apply("tack JK on 1")
    assert melds(g) == [["JK=4H", "5H", "6H", "7H", "8H", "9H"]]


def test_the_low_end_joker_lay_off_is_never_offered_in_caribbean():
    # a four grows at its high end until an ace tops it (A12): one end at a time
    g = G("JK 2C 9S 4D", "P2 [5H 6H 7H 8H]", name="caribbean")
    assert g.check("tack JK on 1") == 0
    assert g.check("tack JK on 1 low end") == L.E_GROWTH


def test_D28_after_a_split_each_part_keeps_its_ends_lay_off_count():
    g = G("10D JD 7D 8D 6D QD 2C", "P2 [5D 6D 7D 8D 9D]")
    g.apply("tack 10D on 1").apply("tack JD on 1")       # the high end's two cards this turn
    g.apply("split 1 with 7D")
    assert melds(g) == [["5D", "6D", "7D"], ["7D", "8D", "9D", "10D", "JD"]]
    assert g.check("tack QD on 2") == L.E_LAYOFF_LIMIT   # the same end of the table (A21)
    assert g.check("tack 8D on 1") == 0                  # a new end
    assert g.check("tack 6D on 2") == 0                  # a new end
