"""RULES.md §6 vectors whose existing tests were partial (coverage audit).

* T40 / T41 / T43 (§6.4): the meld tests only check the value of the player's own new melds; here
  the compiled engine is asked whether the opening is offered when the lay-offs are really there.
* T55 (§6.6): the swap half was checked only as "some error"; here every spelling of the swap is
  refused for the rule's reason and the tack gives ``[9C 9D JK 9S]``.
* T83 (§6.9): the limit is checked inside a call window, and with ``calls_limit_scope = "hand"``
  the player may really call again in the next hand.

Positions are written with ``Game.from_text`` (P1 active, seats P1..Pn as in RULES.md §6.9).
"""

from __future__ import annotations

from functools import lru_cache

from play_positions import play_position

from kalooki_sim import load_rules
from kalooki_sim.engine import layout as L
from kalooki_sim.runtime.game import Game


@lru_cache(maxsize=None)
def R(name="k40", **kw):
    return load_rules(name, **kw)


def opening_position(hand, name, table, **kw):
    """P1 (not opened) in his play phase; P2 owns the table melds."""
    return play_position(R(name, **kw), hand, table=table)


# ------------------------------------------------------------------------------------------------
# §6.4 opening value with lay-offs on the table


def test_T40_k40_layoff_never_counts_toward_the_40():
    # [8D 9D 10D] 27 + [4S 4H 4C] 12 = 39; 10S would fit the table run [7S 8S 9S] (+10) but
    # lay-offs never count in K40, and a player who has not opened may not lay off at all.
    g = opening_position("8D 9D 10D 4S 4H 4C 10S 2C", "k40", "P2 [7S 8S 9S]")
    assert g.check("lay down") == L.E_NO_PLAN
    assert g.check("tack 10S on 1") == L.E_NOT_LAID
    assert not any(t.startswith(("lay", "tack")) for t in g.legal_action_texts())
    # control: with JD instead of 2C the own melds reach 49 >= 40 and the opening is offered
    g = opening_position("8D 9D 10D 4S 4H 4C 10S JD", "k40", "P2 [7S 8S 9S]")
    assert g.check("lay down") == 0


def test_T41_na15_layoffs_count_but_50_is_below_51():
    # own [KS KH KD] 30 (or [KS KH KD KC] 40) + lay-offs QC KC (or QC) on [9C 10C JC] = 50 < 51
    g = opening_position("KS KH KD QC KC 2H", "na15", "P2 [9C 10C JC]")
    assert g.check("lay down") == L.E_NO_PLAN
    assert g.check("tack QC on 1") == L.E_NOT_LAID
    assert not any(t.startswith(("lay", "tack")) for t in g.legal_action_texts())
    # control: one more lay-off (8D on [5D 6D 7D]) brings it to 58 >= 51 -> the opening is offered
    g = opening_position("KS KH KD QC KC 2H 8D", "na15", "P2 [9C 10C JC], P2 [5D 6D 7D]")
    assert g.check("lay down") == 0
    g.apply("lay down")
    assert g.laid_down[0]
    assert 0 < g.state.gs[0, L.G_OPEN_DEBT] <= 51 - 30        # the rest must come from lay-offs
    assert g.check("discard 2H") == L.E_OPENING_SHORT


T43_TABLE = "P2 [9C 10C JC], P2 [6H 7H 8H], P2 [QS QH QD], P3 [KS KH KD]"


def test_T43_na15_layoffs_alone_never_open():
    # lay-offs worth 10 + 10 + 8 + 7 + 4 + 5 + 9 + 10 = 63 (>= 60), but no own new meld is possible
    hand = "QC KC 8C 7C 4H 5H 9H 10H 2S"
    g = opening_position(hand, "na15", T43_TABLE)
    assert g.check("lay down") == L.E_NO_PLAN
    for t in ("tack QC on 3", "tack KC on 4", "tack 8C on 1", "tack 9H on 2"):
        assert g.check(t) == L.E_NOT_LAID, t
    assert not any(t.startswith(("lay", "tack")) for t in g.legal_action_texts())
    # control: with an own new meld ([2S 2H 2D] = 6) the same lay-offs complete the opening
    g = opening_position(hand + " 2H 2D", "na15", T43_TABLE)
    assert g.check("lay down") == 0


# ------------------------------------------------------------------------------------------------
# §6.6 jokers in Caribbean threes


def test_T55_joker_in_a_three_never_moves():
    g = Game.from_text("""
    round: 1
    active: P1
    phase: play
    P1: 9S 2C 3C | laid
    table: P2 [9C 9D JK]
    """, R("caribbean"))
    # swap: illegal whatever it is called, and never offered
    for text in ("swap 9S for joker in 1", "move joker in 1", "move joker JK=9S in 1"):
        assert g.check(text) == L.E_SWAP_DISABLED, text
    assert not any("joker" in t for t in g.legal_action_texts())
    # tack: legal -> [9C 9D JK 9S], the joker stays where it was, still a 9
    assert "tack 9S on 1" in g.legal_action_texts()
    g.apply("tack 9S on 1")
    toks = g.table[0][1]
    assert sorted(t.split("=")[0] for t in toks) == ["9C", "9D", "9S", "JK"]
    assert [t for t in toks if t.startswith("JK")][0].startswith("JK=9")
    assert sorted(g.hand(0)) == ["2C", "3C"]


# ------------------------------------------------------------------------------------------------
# §6.9 call limit


CALL_WINDOW = """
round: 1
active: P1
phase: call
P1: 2D 4H 7S
P2: 5S 6S 9H | calls=3
P3: 5D 8D 10D
P4: 8C 9C JC
discard: 3C 7H
discard_by: P4
stock: KS QS rest
"""

NEXT_HAND = """
round: 1
active: P1
phase: play
last_hand: 2
P1: 5D | laid
P2: 5S 6S
P3: 7D | calls=3
P4: 8C
table: P1 [4C 4D 4H]
"""


def test_T83_three_allowed_calls_per_game_then_no_more():
    for scope in ("game", "hand"):             # within the hand both readings refuse a 4th call
        g = Game.from_text(CALL_WINDOW, R("caribbean", calls_limit_scope=scope))
        assert not g.may_call(1)
        assert g.to_act == 2                    # P2 is skipped: P3 is asked first
        g = Game.from_text(CALL_WINDOW + "to_act: P2\n", R("caribbean", calls_limit_scope=scope))
        assert g.check("call") == L.E_NOT_ELIGIBLE


def test_T83_scope_game_carries_over_scope_hand_resets():
    # P3 used 3 allowed calls in hand 1; P1 goes out, hand 2 is dealt (P2 active, upcard on top).
    g = Game.from_text(NEXT_HAND, R("caribbean"))                 # default scope "game"
    g.apply("discard 5D")
    assert g.state.gs[0, L.G_HAND_NO] == 1 and g.phase == "call" and g.current_player == 1
    assert g.calls_used[2] == 3 and not g.may_call(2)
    assert g.to_act != 2
    g = Game.from_text(NEXT_HAND, R("caribbean", calls_limit_scope="hand"))
    g.apply("discard 5D")
    assert g.state.gs[0, L.G_HAND_NO] == 1 and g.phase == "call" and g.current_player == 1
    assert g.calls_used[2] == 0 and g.may_call(2)
    assert g.to_act == 2 and "call" in g.legal_action_texts()
    before = len(g.hand(2))
    g.play("call", "allow")
    assert len(g.hand(2)) == before + 2 and g.calls_used[2] == 1
