"""Rules of the Kalooki 40 family beyond the core turn: house rule V1 (kalooki without the opening
minimum), the American dealer's upcard swap, NA15 lay-offs counting toward the opening (A43).

Positions are written with ``Game.from_text`` (P1 active).
"""

from __future__ import annotations

from functools import lru_cache

from kalooki_sim import load_rules
from kalooki_sim.engine import layout as L
from kalooki_sim.engine.game import Game, check_supported, not_offered


@lru_cache(maxsize=None)
def R(name="k40", **kw):
    return load_rules(name, **kw)


def G(hand, name="k40", table="", extra="", **kw):
    text = f"""
active: P1
phase: play
P1: {hand}
P2: 2S 4S | laid
P3: 2D 3S
P4: KD KH
{('table: ' + table) if table else ''}
discard: QS
{extra}
"""
    return Game.from_text(text, R(name, **kw))


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
