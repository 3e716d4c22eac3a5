"""Caribbean engine core against RULES.md §6.5, §6.6, §6.8, §6.9, T27, T93 and the §5 decisions.

Positions are written with ``Game.from_text`` so each test reads like the rule it checks.  Seats
are P1..Pn as in RULES.md §6.9 (P1 active, play order P1 -> P2 -> P3 -> P4, P4 threw the top
discard).  Every row carries its RULES.md vector ID (or the ambiguity ID it pins down).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from kalooki_sim import load_rules
from kalooki_sim.core.cards import counts_of
from kalooki_sim.engine import IllegalActionError, core, layout as L
from kalooki_sim.engine.action_text import _meld_tokens
from kalooki_sim.engine.playout import random_playout
from kalooki_sim.engine.state import State
from kalooki_sim.melds import is_legal_meld
from kalooki_sim.runtime.game import Game


@lru_cache(maxsize=None)
def R(**kw):
    return load_rules("caribbean", **kw)


def rules(**kw):
    return R(**kw)


def G(text, **kw):
    return Game.from_text(text, rules(**kw))


def code(game, action):
    return game.check(action)


# A laid-down P1 in round 1 with spare cards; other seats hold a few cards.
BASE = """
round: 1
active: P1
phase: play
P1: 9H 4H 9S 2C 7D | laid
P2: 7S 7C 3D
P3: 2D 3S
P4: KD KH
table: P1 [5H 6H 7H 8H]
discard: 3C 9D
"""


# ------------------------------------------------------------------------------------------------
# §6.5 tacking


def test_T44_growth_rule_high_end_until_ace():
    g = G(BASE)
    with pytest.raises(IllegalActionError) as e:
        g.apply("tack 4H on 1")
    assert e.value.code == L.E_GROWTH and "high end" in str(e.value)
    g.apply("tack 9H on 1")
    assert g.table[0][1] == ["5H", "6H", "7H", "8H", "9H"]


def test_T46_low_ace_four_grows_only_upwards():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: 5S KS JK 2C 2D | laid
    table: P2 [AS 2S 3S 4S]
    """)
    assert code(g, "tack KS on 1") == L.E_NOT_ADJACENT
    g.apply("tack 5S on 1")
    g.apply("tack JK on 1")               # a joker also goes to the high end: JK=6S
    assert g.table[0][1] == ["AS", "2S", "3S", "4S", "5S", "JK=6S"]


def test_T46_high_ace_four_grows_only_downwards():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: 10S AS 9S 2C | laid
    table: P2 [JS QS KS AS]
    """)
    assert code(g, "tack AS on 1") in (L.E_GROWTH, L.E_NOT_ADJACENT, L.E_NO_FREE_POS)
    g.apply("tack 10S on 1")
    assert code(g, "tack 10S on 1") == L.E_NO_CARD
    g.apply("tack 9S on 1")
    assert g.table[0][1] == ["9S", "10S", "JS", "QS", "KS", "AS"]


def test_A12_joker_as_high_ace_closes_the_high_end():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: 10H JK AH 2C 3C | laid
    P2: 4D
    table: P2 [JH QH KH JK=AH]
    """)
    assert code(g, "tack AH on 1") != 0          # no free ace position at either end
    g.apply("tack JK on 1")                      # joker goes to the low end
    assert g.table[0][1] == ["JK=10H", "JH", "QH", "KH", "JK=AH"]
    assert code(g, "tack 10H on 1") == L.E_NOT_ADJACENT   # 10 is taken by the joker now


def test_A12_joker_tacked_on_king_becomes_high_ace_then_low_end():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: JK 9H 2C | laid
    table: P2 [10H JH QH KH]
    """)
    assert code(g, "tack 9H on 1") == L.E_GROWTH
    g.apply("tack JK on 1")
    assert g.table[0][1] == ["10H", "JH", "QH", "KH", "JK=AH"]
    g.apply("tack 9H on 1")
    assert g.table[0][1][0] == "9H"


def test_growth_adjacent_jokers_refused():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: JK 2C 3C | laid
    table: P2 [5H 6H 7H JK=8H]
    """)
    assert code(g, "tack JK on 1") == L.E_ADJACENT_JOKERS


def test_T47_joker_tacked_on_three():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: JK 2C 3C | laid
    table: P2 [QH QC JK]
    """)
    g.apply("tack JK on 1")
    toks = g.table[0][1]
    assert sorted(t[:2] for t in toks) == ["JK", "JK", "QC", "QH"]
    assert is_legal_meld(g.rules, toks)


def test_T51_tack_before_laying_down_is_illegal():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: 9H 2C 3C
    P2: 4D | laid
    table: P2 [5H 6H 7H 8H]
    """)
    with pytest.raises(IllegalActionError) as e:
        g.apply("tack 9H on 1")
    assert e.value.code == L.E_NOT_LAID
    assert "tack 9H on 1" in str(e.value)


# ------------------------------------------------------------------------------------------------
# §6.6 jokers


def test_T52_joker_moves_to_high_end_of_same_four():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: 6H 2C 3C | laid
    table: P2 [5H JK=6H 7H 8H]
    """)
    assert g.action_text(g.action_id("move joker in 1")) == "move joker in 1"
    g.apply("move joker in 1")
    assert g.table[0][1] == ["5H", "6H", "7H", "8H", "JK=9H"]
    assert g.hand(0) == ["2C", "3C"]


def test_joker_move_to_low_end_when_top_is_ace():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: QD 2C 3C | laid
    table: P2 [10D JD JK=QD KD AD]
    """)
    g.apply("move joker in 1")
    assert g.table[0][1] == ["JK=9D", "10D", "JD", "QD", "KD", "AD"]


def test_joker_move_illegal_next_to_other_joker_or_without_room():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: 6H AH 2C | laid
    table: P2 [5H JK=6H 7H JK=8H], P3 [AH JK=2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH JK=AH]
    """)
    # [5H 6H 7H JK=8H]: the freed joker would go to 9, next to the joker at 8
    assert code(g, "move joker JK=6H in 1") == L.E_ADJACENT_JOKERS
    # the full A..A four has no free position
    assert code(g, "move joker JK=AH in 2") == L.E_NO_FREE_POS


def test_T55_joker_in_three_never_moves_but_three_takes_tacks():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: 9S 2C 3C | laid
    table: P2 [9C 9D JK]
    """)
    assert code(g, "move joker in 1") != 0
    g.apply("tack 9S on 1")
    assert sorted(t[:2] for t in g.table[0][1]) == ["9C", "9D", "9S", "JK"]


def test_T56_joker_cannot_be_discarded():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: JK 5C 7D
    """)
    with pytest.raises(IllegalActionError) as e:
        g.apply("discard JK")
    assert e.value.code == L.E_JOKER_DISCARD
    assert "discard JK" not in g.legal_action_texts()


def test_A15_A54_only_jokers_left_turn_ends_without_discard():
    # nothing to discard (jokers) and nothing to tack: the four grows only upwards (A12) and a
    # joker may not lie next to its joker
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: JK JK | laid
    P2: 5C 6C
    table: P2 [5H 6H 7H JK=8H]
    """)
    texts = g.legal_action_texts()
    assert texts == ["end turn"]
    g.apply("end turn")
    assert g.current_player == 1


def test_A15_A54_jokers_that_can_be_tacked_do_not_end_the_turn():
    # A15/A54: the turn ends without a discard only when no card can be tacked either
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: JK JK | laid
    P2: 5C 6C
    table: P2 [5H 5D 5S]
    """)
    texts = g.legal_action_texts()
    assert "end turn" not in texts and "tack JK on 1" in texts
    assert code(g, "end turn") == L.E_CAN_TACK
    g.apply("tack JK on 1")
    assert code(g, "end turn") == L.E_CAN_TACK
    g.apply("tack JK on 1")         # the last card: the hand is won (A3)
    assert g.last_event == "went out" and g.hand_winners == [0]


def test_A15_A54_a_player_not_laid_down_cannot_tack_and_may_end_the_turn():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: JK
    P2: 5C 6C | laid
    table: P2 [5H 5D 5S]
    """)
    assert g.legal_action_texts() == ["end turn"]


def test_end_turn_refused_while_a_discard_is_possible():
    g = G(BASE)
    assert code(g, "end turn") == L.E_CAN_DISCARD


# ------------------------------------------------------------------------------------------------
# §6.8 drawing, discarding, stock


def test_T74_laid_down_player_cannot_draw_the_discard():
    g = G("""
    round: 1
    active: P1
    phase: draw
    P1: 9H 4H | laid
    discard: 3C 9D
    """)
    with pytest.raises(IllegalActionError) as e:
        g.apply("draw discard")
    assert e.value.code == L.E_DISCARD_DRAW
    assert g.legal_action_texts() == ["draw stock"]


def test_A40_A53_taken_card_not_discarded_unless_another_copy():
    text = """
    round: 1
    active: P1
    phase: draw
    P1: {hand}
    P2: 5S | laid
    discard: 3C 9C
    """
    g = G(text.format(hand="2D 4H 7S"))
    g.apply("draw discard")
    with pytest.raises(IllegalActionError) as e:
        g.apply("discard 9C")
    assert e.value.code == L.E_TAKEN_DISCARD
    g.apply("discard 7S")
    # A53: with a second 9C in hand the copy may go
    g = G(text.format(hand="2D 4H 9C"))
    g.apply("draw discard")
    g.apply("discard 9C")


def test_A40_applies_to_a_denied_call():
    g = G("""
    round: 1
    active: P1
    phase: call
    P1: 2D 4H 7S
    P2: 5S 6S
    P3: 5D | laid
    P4: 8C | laid
    discard: 3C 9C
    discard_by: P4
    """)
    g.play("call", "deny")
    assert code(g, "discard 9C") == L.E_TAKEN_DISCARD


def test_A6_reshuffle_keeps_top_discard():
    g = G("""
    round: 1
    active: P1
    phase: draw
    P1: 2D 4H 7S | laid
    discard: 3C 9D 5H
    stock: -
    """)
    assert g.stock == []
    g.apply("draw stock")
    assert g.discard_pile == ["5H"]
    assert len(g.stock) == 1
    assert sorted(g.hand(0) + g.stock) == sorted(["2D", "4H", "7S", "3C", "9D"])
    assert g.state.gs[0, L.G_RESHUFFLES] == 1


def test_A52_void_hand_is_redealt_by_same_dealer():
    g = G("""
    round: 3
    active: P1
    dealer: P4
    phase: draw
    P1: 2D 4H 7S | laid
    P2: 5S 6S
    P3: 7D
    P4: 8C
    discard: 5H
    stock: -
    """)
    g.apply("draw stock")
    assert g.last_event == "void (redeal)"
    gs = g.state.gs[0]
    assert gs[L.G_HAND_NO] == 2 and gs[L.G_ROUND] == 2 and gs[L.G_DEALER] == 3 and gs[L.G_VOIDS] == 1
    assert [len(g.hand(p)) for p in range(4)] == [11] * 4
    assert g.invariants() == 0                      # a full fresh deck was dealt
    assert g.totals == [0, 0, 0, 0] and g.hand_scores == []


def test_A52_void_cap_scores_the_hand_as_it_stands():
    g = G("""
    round: 1
    active: P1
    phase: draw
    P1: 2D 4H | laid
    P2: KS
    P3: 7D
    P4: JK
    discard: 5H
    stock: -
    """, max_void_replays=0)
    g.apply("draw stock")
    assert g.terminal and g.hand_winners == [-1]
    assert g.hand_scores == [[2 + 4, 10, 7, 50]]


def test_stock_exhaustion_void_immediately():
    g = G("""
    round: 1
    active: P1
    phase: draw
    P1: 2D 4H | laid
    discard: 3C 9D 5H
    stock: -
    """, stock_exhaustion="void_immediately", max_reshuffles_per_hand=0)
    g.apply("draw stock")
    assert g.last_event == "void (redeal)"


# ------------------------------------------------------------------------------------------------
# §6.9 calls

CALLS = """
round: 1
active: P1
phase: call
P1: 2D 4H 7S {p1flags}
P2: 5S 6S 9H {p2flags}
P3: 5D 8D 10D {p3flags}
P4: 8C 9C JC
discard: 3C 7H
discard_by: P4
stock: KS QS rest
"""


def calls_game(p1="", p2="", p3="", **kw):
    f = lambda s: ("| " + s) if s else ""     # noqa: E731
    return G(CALLS.format(p1flags=f(p1), p2flags=f(p2), p3flags=f(p3)), **kw)


def test_T79_allowed_call():
    g = calls_game()
    assert g.to_act == 1 and g.legal_action_texts() == ["pass", "call"]
    g.apply("call")
    assert g.phase == "allow" and g.to_act == 0
    g.apply("allow")
    assert sorted(g.hand(1)) == sorted(["5S", "6S", "9H", "7H", "KS"])   # called card + top stock card
    assert g.calls_used[1] == 1
    assert g.phase == "draw" and g.current_player == 0
    assert code(g, "draw discard") == L.E_AFTER_CALL_STOCK                  # A8
    g.apply("draw stock")
    assert "QS" in g.hand(0)


def test_T80_denied_call():
    g = calls_game()
    g.play("call", "deny")
    assert "7H" in g.hand(0) and g.phase == "play"
    assert sorted(g.hand(1)) == ["5S", "6S", "9H"]
    assert g.calls_used[1] == 0
    assert g.discard_pile == ["3C"]


def test_count_denied_calls_knob():
    g = calls_game(count_denied_calls=True)
    g.play("call", "deny")
    assert g.calls_used[1] == 1


def test_call_penalty_cards_knob():
    g = calls_game(call_penalty_cards=2)
    g.play("call", "allow")
    assert len(g.hand(1)) == 3 + 3


def test_laid_down_active_player_must_allow():
    g = calls_game(p1="laid")
    g.apply("call")
    assert g.legal_action_texts() == ["allow"]
    assert code(g, "deny") == L.E_CANNOT_DENY


def test_T82_laid_down_player_cannot_call():
    g = calls_game(p3="laid")
    assert not g.may_call(2)
    g.apply("pass")                     # P2 passes; P3 is skipped; P4 threw the card (A41)
    assert g.phase == "draw"
    g = G(CALLS.format(p1flags="", p2flags="", p3flags="| laid") + "to_act: P3\n")
    assert code(g, "call") == L.E_NOT_ELIGIBLE


def test_T83_call_limit_per_game_and_per_hand():
    text = """
    round: 1
    active: P1
    phase: play
    last_hand: 2
    P1: 5D | laid
    P2: 5S 6S | calls=3
    P3: 7D
    P4: 8C
    table: P1 [4C 4D 4H]
    """
    g = G(text)
    assert not g.may_call(1)
    g.apply("discard 5D")               # P1 goes out, hand 2 is dealt
    assert g.state.gs[0, L.G_HAND_NO] == 1 and not g.terminal
    assert g.calls_used[1] == 3 and not g.may_call(1)
    g = G(text, calls_limit_scope="hand")
    g.apply("discard 5D")
    assert g.calls_used[1] == 0


def test_T85_discarder_cannot_call_own_discard():
    g = G(CALLS.format(p1flags="", p2flags="| laid", p3flags="| laid"))
    assert not g.may_call(3)
    assert g.phase == "draw"             # nobody else eligible: the window is skipped
    g = G(CALLS.format(p1flags="", p2flags="", p3flags="") + "to_act: P4\n")
    assert code(g, "call") == L.E_NOT_ELIGIBLE


def test_A39_upcard_callable_in_first_window():
    g = Game(rules(), n_players=4, seed=11, dealer=3)
    assert g.current_player == 0 and g.discard_pile and g.state.disc_by[0, 0] == -1
    assert g.phase == "call" and g.to_act == 1
    g.play("call", "allow")
    assert len(g.hand(1)) == 9 + 2


def test_one_call_per_turn():
    g = calls_game()
    g.play("call", "allow")
    assert g.phase == "draw"
    g.apply("draw stock")
    assert g.phase == "play"


def test_A51_call_with_empty_stock_rebuilds_without_the_called_card():
    g = G("""
    round: 1
    active: P1
    phase: call
    P1: 2D 4H 7S
    P2: 5S 6S 9H
    P3: 5D | laid
    P4: 8C | laid
    discard: 3C 9D 7H
    discard_by: P4
    stock: -
    """)
    g.play("call", "allow")
    assert "7H" in g.hand(1) and len(g.hand(1)) == 5
    assert g.discard_pile == [] and len(g.stock) == 1


def test_A51_call_that_cannot_be_supplied():
    text = """
    round: 1
    active: P1
    phase: call
    P1: 2D 4H 7S {f}
    P2: 5S 6S 9H
    P3: 5D | laid
    P4: 8C | laid
    discard: 7H
    discard_by: P4
    stock: -
    """
    g = G(text.format(f=""))
    g.apply("call")
    assert g.legal_action_texts() == ["deny"]
    g = G(text.format(f="| laid"))      # must allow but cannot: the call is not offered
    assert g.phase == "draw"


def test_A55_top_discard_stays_callable_after_turn_without_discard():
    g = G("""
    round: 1
    active: P4
    phase: play
    P1: 2D 4H 7S
    P2: 5S 6S 9H
    P3: 5D 6D
    P4: JK | laid
    table: P4 [5H 6H 7H JK=8H]
    discard: 3C 7H
    discard_by: P3
    """)
    g.apply("end turn")
    assert g.current_player == 0 and g.phase == "call" and g.to_act == 1
    g.play("pass")
    assert g.phase == "draw"            # P3 threw 7H (A41), P4 is laid down


# ------------------------------------------------------------------------------------------------
# lay-down, going out, scoring


def test_T27_lay_down_contract_then_discard_goes_out():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: 4C 4D 4H 8S 8S 8D QH QC JK 5D
    P2: JK AS AH KD 7C
    P3: 2C 3C
    P4: KD KH
    """)
    g.apply("lay [4C 4D 4H] [8S 8S 8D] [QH QC JK]")
    assert g.laid_down[0] and g.hand(0) == ["5D"]
    g.apply("discard 5D")
    assert g.last_event == "went out" and g.terminal
    assert g.hand_winners == [0]
    assert g.hand_scores == [[0, 83, 5, 20]]          # T29 values: 50+15+1+10+7
    assert g.totals == [0, 83, 5, 20]
    assert g.winners() == [0]


def test_lay_down_text_must_match_the_offered_plan():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: 4C 4D 4H 8S 8S 8D QH QC JK 5D
    """)
    with pytest.raises(IllegalActionError):
        g.apply("lay [4C 4D 4H] [8S 8S 8D] [QH QC 5D]")


def test_going_out_by_tacking_last_card_A3():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: 9H | laid
    P2: 2C
    table: P1 [5H 6H 7H 8H]
    """)
    g.apply("tack 9H on 1")
    assert g.last_event == "went out" and g.hand_winners == [0]


def test_going_out_requires_discard_knob():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: 9H | laid
    P2: 2C
    table: P1 [5H 6H 7H 8H]
    """, going_out_requires_discard=True)
    assert code(g, "tack 9H on 1") == L.E_MUST_DISCARD
    g.apply("discard 9H")
    assert g.last_event == "went out"


def test_no_lay_down_without_contract_and_no_second_lay_down():
    g = G("""
    round: 2
    active: P1
    phase: play
    P1: 4C 4D 4H 8S 8S 8D QH QC JK 5D 2C
    """)
    assert code(g, "lay down") == L.E_NO_PLAN         # round 2 needs a four
    g = G(BASE)
    assert code(g, "lay down") == L.E_ALREADY_LAID    # A4


def test_A4_new_melds_after_opening_knob():
    text = """
    round: 1
    active: P1
    phase: draw
    P1: 7C 7D 7S 2H | laid
    P2: KD
    table: P1 [4C 4D 4H]
    stock: 9S rest
    """
    g = G(text)
    g.apply("draw stock")
    assert code(g, "lay down") == L.E_ALREADY_LAID
    g = G(text, new_melds_after_opening=True)
    g.apply("draw stock")
    assert g.action_text(L.A_LAY) == "lay down [7C 7D 7S]"
    g.apply("lay down")
    assert g.table[-1][1] == ["7C", "7D", "7S"] and sorted(g.hand(0)) == ["2H", "9S"]


def test_either_end_growth_knob():
    g = G(BASE, run_growth_rule="either_end")
    g.apply("tack 4H on 1")
    g.apply("tack 9H on 1")
    assert g.table[0][1] == ["4H", "5H", "6H", "7H", "8H", "9H"]


def test_down_and_out_multiplier():
    text = """
    round: 1
    active: P1
    phase: play
    P1: 4C 4D 4H 8S 8S 8D QH QC JK
    P2: KD
    P3: 2C 3C
    """
    g = G(text, down_and_out_multiplier=2)
    g.apply("lay down")
    assert g.hand_scores == [[0, 20, 10]]
    # went out in a later turn than the lay-down: no doubling
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: 5D | laid
    P2: KD
    P3: 2C 3C
    table: P1 [4C 4D 4H]
    """, down_and_out_multiplier=2)
    g.apply("discard 5D")
    assert g.hand_scores == [[0, 10, 5]]


def test_T93_lowest_total_wins_ties_shared():
    g = G("""
    round: 9
    active: P1
    phase: play
    P1: 5D | laid, total=120
    P2: 5C | total=90
    P3: KD | total=85
    P4: 2C | total=128
    table: P1 [5H 6H 7H 8H]
    """)
    g.apply("discard 5D")
    assert g.terminal and g.totals == [120, 95, 95, 130]
    assert g.winners() == [1, 2]
    assert "winner(s): P2 P3" in str(g)


def test_turn_cap_scores_hand_without_winner():
    g = G("""
    round: 1
    active: P1
    phase: play
    turn: 9
    P1: 5D 7C
    P2: KD
    P3: 2C 3C
    """, max_turns_per_hand=10)
    g.apply("discard 5D")
    assert g.last_event == "turn cap (scored as it stands)" and g.terminal
    assert g.hand_scores == [[7, 10, 5]]


# ------------------------------------------------------------------------------------------------
# deal sizes, dealer rotation, whole matches


def _random_until_next_hand(g, rng):
    h = g.state.gs[0, L.G_HANDS_DONE]
    while not g.terminal and g.state.gs[0, L.G_HANDS_DONE] == h:
        acts = g.legal_actions()
        prog = [a for a in acts if L.A_LAY <= a < L.A_DISCARD or a >= L.A_TACK]
        g.apply(int(rng.choice(prog if prog and rng.random() < 0.9 else acts)))


@pytest.mark.parametrize("n_players", [3, 6])
def test_deal_sizes_and_dealer_rotation(n_players):
    r = rules(max_turns_per_hand=40)
    g = Game(r, n_players=n_players, seed=5, dealer=0)
    rng = np.random.default_rng(0)
    for h in range(9):
        size = r.hand_size[h]
        gs = g.state.gs[0]
        assert gs[L.G_HAND_NO] == h and gs[L.G_ROUND] == h
        dealer = (0 + h) % n_players
        assert gs[L.G_DEALER] == dealer
        assert g.current_player == (dealer + 1) % n_players
        if g.state.gs[0, L.G_VOIDS] == 0 and gs[L.G_TURN] == 0:
            assert [len(g.hand(p)) for p in range(n_players)] == [size] * n_players
            assert len(g.stock) == 108 - n_players * size - 1
        assert g.invariants() == 0
        _random_until_next_hand(g, rng)
    assert g.terminal and len(g.hand_scores) == 9
    assert g.totals == [sum(s[p] for s in g.hand_scores) for p in range(n_players)]
    for s, w in zip(g.hand_scores, g.hand_winners):
        if w >= 0:
            assert s[w] == 0


def test_terminal_is_sticky():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: 5D | laid
    P2: KD
    table: P1 [4C 4D 4H]
    """)
    g.apply("discard 5D")
    assert g.terminal and g.legal_actions() == []
    before = g.state.copy()
    with pytest.raises(IllegalActionError) as e:
        g.apply("draw stock")
    assert e.value.code == L.E_TERMINAL
    assert all((a == b).all() for a, b in zip(before.arrays(), g.state.arrays()))


def test_illegal_action_leaves_state_unchanged():
    g = calls_game()
    before = g.state.copy()
    for bad in ("draw stock", "discard 2D", "allow", "tack 2D on 1", "lay down", L.N_ACTIONS + 5, -1):
        with pytest.raises(IllegalActionError):
            g.apply(bad)
    assert all((a == b).all() for a, b in zip(before.arrays(), g.state.arrays()))
    assert issubclass(IllegalActionError, ValueError)


def test_action_text_round_trip():
    g = Game(rules(), n_players=4, seed=2)
    rng = np.random.default_rng(1)
    for _ in range(300):
        if g.terminal:
            break
        for a in g.legal_actions():
            assert g.action_id(g.action_text(a)) == a
        acts = g.legal_actions()
        g.apply(int(rng.choice(acts)))


def test_printing_shows_the_position():
    g = G("""
    round: 1
    active: P1
    phase: play
    P1: 6H 2C 3C | laid, calls=1
    P2: 7D
    table: P2 [5H JK=6H 7H 8H], P3 [KC KD JK=KH]
    discard: 3C 9D
    """)
    s = str(g)
    for part in ("phase: play", "P1: 2C 3C 6H", "calls=1", "[5H JK=6H 7H 8H]", "[KC KD JK=KH]",
                 "top 9D", "stock:", "laid"):
        assert part in s, part


# ------------------------------------------------------------------------------------------------
# determinism and invariants over random games


def _batch(n, n_players, rv, seeds, gids, n_hands=0):
    st = State.empty(n)
    core.start_games(st.arrays(), rv, n_players, np.full(n, -1, dtype=np.int64),
                     np.asarray(seeds, dtype=np.int64), np.asarray(gids, dtype=np.int64), n_hands)
    return st


def test_results_do_not_depend_on_batch_composition():
    rv = rules(max_turns_per_hand=60).to_vector()
    st = _batch(6, 4, rv, [7] * 6, range(6))
    stats = np.zeros(8, dtype=np.int64)
    for g in range(6):
        assert random_playout(st.arrays(), rv, g, 3, 10**6, 0, stats, 0.5) == 0
    solo = _batch(1, 4, rv, [7], [4])
    assert random_playout(solo.arrays(), rv, 0, 3, 10**6, 0, stats, 0.5) == 0
    for a, b in zip(st.take([4]).arrays(), solo.arrays()):
        assert (a == b).all()


VARIANTS = [
    dict(),
    dict(calls_limit_scope="hand", count_denied_calls=True),
    dict(call_penalty_cards=2, keep_top_discard_on_reshuffle=False),
    dict(stock_exhaustion="reshuffle_then_void", max_reshuffles_per_hand=1, max_void_replays=1),
    dict(down_and_out_multiplier=2, going_out_requires_discard=True),
    dict(new_melds_after_opening=True, run_growth_rule="either_end", deny_requires_not_opened=False),
]


@pytest.mark.parametrize("vi", range(len(VARIANTS)))
def test_invariants_random_games_compiled(vi):
    """40 matches per variant (240 in all), players 3..6, every state checked in the kernel:
    card conservation, no card type beyond the deck, every table meld legal, mask non-empty."""
    r = rules(max_turns_per_hand=60, **VARIANTS[vi])
    rv = r.to_vector()
    stats = np.zeros(8, dtype=np.int64)
    for n_players in (3, 4, 5, 6):
        st = _batch(10, n_players, rv, [100 + vi] * 10, range(10))
        for g in range(10):
            bias = 0.0 if g % 2 == 0 else 0.9      # half uniform random, half eager to meld
            e = random_playout(st.arrays(), rv, g, 1, 10**6, 1, stats, bias)
            assert e == 0, (n_players, g, e)
            assert st.gs[g, L.G_TERMINAL] == 1 and st.gs[g, L.G_HANDS_DONE] == 9
            tot = st.hscore[g, :9, :n_players].sum(axis=0)
            assert (tot == st.ps[g, :n_players, L.PS_TOTAL]).all()
    assert stats[7] == 0
    assert stats[1] > 0 and stats[2] > 0 and stats[4] > 0 and stats[5] > 0 and stats[6] > 0


def test_mask_agrees_with_check_action_everywhere():
    rv = rules(max_turns_per_hand=30).to_vector()
    st = _batch(2, 4, rv, [3, 3], [0, 1], n_hands=2)
    stats = np.zeros(8, dtype=np.int64)
    for g in range(2):
        assert random_playout(st.arrays(), rv, g, 9, 10**6, 2, stats, 0.9) == 0


def test_invariants_random_games_python_side():
    """200 random hands (even: uniform, odd: eager to meld) through the kernels, checked from Python: conservation against
    the full deck, every table meld legal per ``melds.is_legal_meld`` (jokers as declared),
    mask non-empty unless terminal."""
    r = rules(max_turns_per_hand=25)
    rv = r.to_vector()
    deck = np.array([2] * 52 + [4])
    rng = np.random.default_rng(2024)
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    st = _batch(1, 4, rv, [0], [0], n_hands=1)
    A = st.arrays()
    melds_checked = 0
    for i in range(200):
        n_players = 3 + i % 4
        core.start_game(A, rv, 0, n_players, -1, 1000 + i, i, 1)
        core.deal_hand(A, rv, 0, i % 9, i % n_players)
        while True:
            k = core.legal_mask(A, rv, 0, mask)
            if st.gs[0, L.G_TERMINAL]:
                assert k == 0
                break
            assert k > 0
            acts = np.flatnonzero(mask)
            prog = [b for b in acts if L.A_LAY <= b < L.A_DISCARD or b >= L.A_TACK]
            if i % 2 == 1 and prog and rng.random() < 0.9:      # odd hands: eager to meld
                acts = prog
            a = int(rng.choice(acts))
            assert core.step(A, rv, 0, a) == 0
            if st.gs[0, L.G_TERMINAL]:
                continue
            cnt = st.hands[0].astype(np.int64).sum(axis=0)
            cnt += np.bincount(st.stock[0, :st.gs[0, L.G_STOCK_N]], minlength=53)
            cnt += np.bincount(st.disc[0, :st.gs[0, L.G_DISC_N]], minlength=53)
            for m in range(st.gs[0, L.G_N_MELDS]):
                toks = _meld_tokens(st, 0, m)
                cnt += counts_of(toks)
                if a >= L.A_LAY and a < L.A_DISCARD or a >= L.A_TACK:
                    kind = "run" if st.minfo[0, m, L.MI_KIND] == L.MK_RUN else "set"
                    assert is_legal_meld(r, toks, kind), toks
                    melds_checked += 1
            assert (cnt == deck).all()
    assert melds_checked > 50
