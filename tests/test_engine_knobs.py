"""Caribbean knobs of RULES.md §4 flipped one at a time: the engine reads each from the rules.

Positions use ``Game.from_text`` (see kalooki_sim/runtime/game.py); ``legal_texts`` lists what the
engine offers, so each test says what a knob allows or forbids.
"""

from __future__ import annotations

from functools import lru_cache

import pytest

from kalooki_sim import load_rules
from kalooki_sim.engine import IllegalActionError, common, layout as L
from kalooki_sim.runtime.game import Game


@lru_cache(maxsize=None)
def _rules(items):
    return load_rules("caribbean", **dict(items))


def G(text, **kw):
    return Game.from_text(text, _rules(tuple(sorted(kw.items()))))


def legal_texts(g):
    return {g.action_text(a) for a in g.legal_actions()}


CALL_WINDOW = """
round: 1
active: P1
phase: call
to_act: P2
P1: 2C 3C 4C 9D
P2: 7S 7C 3D
P3: 2D 3S 5H
P4: KD KH QS
discard: 3H 7H
discard_by: P4
"""


def test_calls_enabled_off_means_no_call_window():
    g = G(CALL_WINDOW.replace("phase: call\nto_act: P2", "phase: draw"))
    assert "call" not in legal_texts(g)
    g2 = G(CALL_WINDOW)
    assert "call" in legal_texts(g2)
    # with calls off the turn starts straight at the draw, nobody is offered a call
    off = Game.from_text(CALL_WINDOW.replace("phase: call\nto_act: P2", "phase: draw"),
                         _rules((("calls_enabled", False), ("calls_per_turn", 0))))
    off.apply("draw stock")
    off.apply("discard 9D")
    assert "call" not in legal_texts(off)


def test_max_calls_per_player():
    full = CALL_WINDOW.replace("P2: 7S 7C 3D", "P2: 7S 7C 3D | calls=1")
    assert "call" in legal_texts(G(full))
    assert "call" not in legal_texts(G(full, max_calls_per_player=1))


PLAY_AFTER_DISCARD_DRAW = """
round: 1
active: P1
phase: play
taken: 9D
P1: 2C 3C 9D JK 5S
P2: 7S 7C 3D
P3: 2D 3S 5H
P4: KD KH QS
discard: 3H
"""


def test_forbid_discard_of_taken_discard():
    g = G(PLAY_AFTER_DISCARD_DRAW)
    assert "discard 9D" not in legal_texts(g)                       # A40 (default)
    g2 = G(PLAY_AFTER_DISCARD_DRAW, forbid_discard_of_taken_discard=False)
    assert "discard 9D" in legal_texts(g2)


def test_allow_discard_joker():
    assert "discard JK" not in legal_texts(G(PLAY_AFTER_DISCARD_DRAW))   # T56 default
    assert "discard JK" in legal_texts(G(PLAY_AFTER_DISCARD_DRAW, allow_discard_joker=True))


DRAW = """
round: 1
active: P1
phase: draw
P1: 2C 3C 9D 5S | laid
P2: 7S 7C 3D
P3: 2D 3S 5H
P4: KD KH QS
table: P1 [4H 4D 4S] [8C 8D 8H] [QC QD QH]
discard: 3H
"""


def test_discard_draw_after_lay_down_knob():
    assert "draw discard" not in legal_texts(G(DRAW))                # T74 default "never"
    assert "draw discard" in legal_texts(G(DRAW, discard_draw_after_opening="any"))


def test_discard_draw_before_lay_down_knob():
    before = DRAW.replace(" | laid", "").replace("table: P1 [4H 4D 4S] [8C 8D 8H] [QC QD QH]\n", "")
    assert "draw discard" in legal_texts(G(before))                  # default "any"
    assert "draw discard" not in legal_texts(G(before, discard_draw_before_opening="never"))


TACK = """
round: 1
active: P1
phase: play
P1: 9H 2C 7D
P2: 7S 7C 3D
P3: 2D 3S
P4: KD KH
table: P2 [5H 6H 7H 8H]
discard: 3C
"""


def test_layoff_requires_opened():
    assert "tack 9H on 1" not in legal_texts(G(TACK))                # T51 default
    assert "tack 9H on 1" in legal_texts(G(TACK, layoff_requires_opened=False))


JOKER_FOUR = """
round: 1
active: P1
phase: play
P1: 6H 2C 7D
P2: 7S 7C 3D
P3: 2D 3S
P4: KD KH
table: P2 [5H JK=6H 7H 8H]
discard: 3C
"""


def test_joker_swap_knobs():
    laid = JOKER_FOUR.replace("P1: 6H 2C 7D", "P1: 6H 2C 7D | laid")
    assert any(t.startswith("move joker") for t in legal_texts(G(laid)))          # T52
    assert not any(t.startswith("move joker") for t in legal_texts(G(laid, joker_swap="none")))
    assert not any(t.startswith("move joker") for t in legal_texts(G(JOKER_FOUR)))  # not laid down
    assert any(t.startswith("move joker")
               for t in legal_texts(G(JOKER_FOUR, joker_swap_requires_opened=False)))


def test_play_direction_right_reverses_turn_order():
    text = """
    round: 1
    active: P1
    phase: play
    P1: 2C 3C 9D
    P2: 7S 7C 3D
    P3: 2D 3S 5H
    P4: KD KH QS
    discard: 3H
    """
    left = G(text, calls_enabled=False, calls_per_turn=0)
    left.apply("discard 9D")
    right = G(text, calls_enabled=False, calls_per_turn=0, play_direction="right")
    right.apply("discard 9D")
    assert left.state.gs[0, L.G_ACTIVE] == 1      # P2
    assert right.state.gs[0, L.G_ACTIVE] == 3     # P4


def test_seat_steps_wrap_around_the_table_both_ways():
    """``common._seat_after`` (comparisons for steps within a round) is the modulo it replaced, and
    ``common._steps_between`` its inverse."""
    for n in range(1, 7):
        for seat in range(n):
            for d in (1, -1):
                for k in range(-3 * n, 3 * n + 1):
                    assert common._seat_after(seat, k, n, d) == (seat + d * k) % n, (n, seat, d, k)
            for other in range(n):
                for d in (1, -1):
                    steps = common._steps_between(seat, other, n, d)
                    assert 0 <= steps < n and common._seat_after(seat, steps, n, d) == other


def test_three_decks_and_eight_jokers_deal():
    r = load_rules("caribbean", n_decks=3, n_jokers=8)
    g = Game(r, n_players=6, seed=3)
    total = sum(int(x) for x in g.state.hands[0, :6].sum(axis=1))
    assert total == 6 * 9                      # round 1, six players
    assert g.state.hands[0].max() <= 3 and g.state.hands[0, :6, 52].sum() <= 8


def test_illegal_knob_combination_is_refused_clearly():
    with pytest.raises(Exception) as e:
        load_rules("caribbean", calls_per_turn=0)
    assert "calls_per_turn" in str(e.value)
    with pytest.raises(IllegalActionError):
        G(PLAY_AFTER_DISCARD_DRAW).apply("discard JK")
