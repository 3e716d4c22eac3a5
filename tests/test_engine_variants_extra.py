"""Rules of the Kalooki 40 family beyond the core turn: house rule V1 (kalooki without the opening
minimum), the American dealer's upcard swap, NA15 lay-offs counting toward the opening (A43).

Positions are written with ``Game.from_text`` (P1 active).
"""

from __future__ import annotations

from functools import lru_cache

from play_positions import play_position

from kalooki_sim import load_rules
from kalooki_sim.engine import layout as L
from kalooki_sim.runtime.game import Game, check_supported


@lru_cache(maxsize=None)
def R(name="k40", **kw):
    return load_rules(name, **kw)


def G(hand, name="k40", table="", extra="", **kw):
    return play_position(R(name, **kw), hand, table=table, extra=extra)


# ------------------------------------------------------------------------------------------------
# V1: a player who goes kalooki does not need the opening minimum


def test_V1_kalooki_below_the_minimum():
    hand = "2C 3C 4C 5D 5H 5S 9S"                     # 9 + 15 = 24 points, all but the discard
    check_supported(R("k40+v1"))
    assert G(hand).check("lay down") == L.E_NO_PLAN   # plain K40: 24 < 40
    g = G(hand, "k40+v1")
    assert g.check("lay down") == 0
    g.apply("lay down")
    assert g.hand(0) == ["9S"]
    g.apply("discard 9S")
    assert g.last_event == "kalooki"


def test_V1_needs_the_whole_hand():
    g = G("2C 3C 4C 5D 5H 5S 9S KC", "k40+v1")        # two cards would stay in hand
    assert g.check("lay down") == L.E_NO_PLAN


# ------------------------------------------------------------------------------------------------
# American: right after the deal the dealer may swap the upcard (RULES.md §2.6)


def top_card(g):
    return int(g.state.disc[0, g.state.gs[0, L.G_DISC_N] - 1])


def test_american_dealer_upcard_swap():
    g = Game(R("american"), n_players=4, seed=3, game_id=0, dealer=0)
    assert g.phase == "upcard" and g.to_act == 0 and g.current_player == 1
    texts = g.legal_action_texts()
    held = g.hand(0)
    assert sorted(texts) == sorted({"keep upcard"} | {f"swap upcard for {c}" for c in held})
    before = g.hand_counts(0).copy()
    up = top_card(g)
    give = g.hand_counts(0).nonzero()[0][0]
    g.apply(L.A_UPSWAP + int(give))
    after = g.hand_counts(0)
    expect = before.copy()
    expect[up] += 1
    expect[give] -= 1
    assert (after == expect).all()
    assert top_card(g) == give
    # then the player to the dealer's left starts
    assert g.phase in ("draw", "call") and g.current_player == 1 and g.to_act == 1
    assert g.check(f"swap upcard for {held[-1]}") == L.E_WRONG_PHASE


def test_american_dealer_may_keep_the_upcard_and_others_never_swap():
    g = Game(R("american"), n_players=4, seed=3, game_id=0, dealer=0)
    top = top_card(g)
    g.apply("keep upcard")
    assert top_card(g) == top
    assert g.phase == "draw" and g.to_act == 1
    k = Game(R("k40"), n_players=4, seed=3, game_id=0, dealer=0)
    assert k.phase != "upcard"


# ------------------------------------------------------------------------------------------------
# A43 (NA15): lay-offs count toward the 51 in the opening turn, with at least one new meld


A43_TABLE = "P2 [10H JH QH]"


def test_A43_opening_completed_by_layoffs():
    hand = "7C 7D 7S 2C 2D 2S KH AH 9S"               # melds 21 + 6 = 27; lay-offs KH 10 + AH 15
    g = G(hand, "na15", table=A43_TABLE)
    assert g.check("lay down") == 0
    g.apply("lay down")
    assert g.state.gs[0, L.G_OPEN_DEBT] == 51 - 27
    # the turn cannot go on until the lay-offs are made
    assert g.check("discard 9S") == L.E_OPENING_SHORT
    g.apply("tack KH on 1")
    assert g.state.gs[0, L.G_OPEN_DEBT] == 14
    g.apply("tack AH on 1")
    assert g.state.gs[0, L.G_OPEN_DEBT] == 0
    assert g.check("discard 9S") == 0


def test_A43_not_enough_layoffs_or_not_na15():
    g = G("7C 7D 7S 2C 2D 2S KH 9S 4D", "na15", table=A43_TABLE)     # 27 + 10 < 51
    assert g.check("lay down") == L.E_NO_PLAN
    g = G("7C 7D 7S 2C 2D 2S KH AH 9S", "k51", table=A43_TABLE)      # lay-offs never count
    assert g.check("lay down") == L.E_NO_PLAN
