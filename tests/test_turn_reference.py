"""The engine's play phase against the turn reference (issue 37 item 6).

``kalooki_sim.engine.turn_reference.TurnModel`` is a slow plain-Python model of one turn's
bookkeeping written from the rules (docs/rules.md §2.2-§2.6, A19-A23, A40, A43, A45, A53, A54; D9-D12,
D19-D26).  At every play-phase decision its legal actions are compared with the engine's
``legal_mask()`` in both directions, and after every action its table, hand and bookkeeping (owed,
freed, drawn card, manipulations, opening debt, per-turn lay-off counts) with the engine's:

(a) turns played by the random, expert and a biased random driver in every points preset and every
    house overlay (bounded; ``scripts/turn_reference_check.py`` is the long run);
(b) hypothesis positions: tables of legal runs and sets with jokers, hands, owed/drawn/freed
    bookkeeping, built with ``Game.from_text``;
(c) the positions of issue 37 (A45, D19, set jokers for any missing suit, a joker at either run
    end, the lay-off counts after a split) and a few §6 vectors, as explicit tests.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from kalooki_sim import load_rules
from kalooki_sim.core.cards import JOKER, parse_cards, type_text
from kalooki_sim.engine import layout as L
from kalooki_sim.engine.turn_reference import A_TACK_LOW, TurnModel, pos_type
from kalooki_sim.runtime.game import Game
from kalooki_sim.runtime.turn_comparison import (
    Report, action_texts, check_game, check_position, compare_legal, compare_state, engine_plan_records, position_text,
)

POINTS_PRESETS = ("k40", "k51", "k101", "na15", "american")
# every house overlay on the base game, and those that change a turn on the A43 variants too
OVERLAYS = ("k40+v1", "k40+v2", "k40+v3", "k40+v4", "k40+v5", "k40+v6", "k40+v7",
            "na15+v1", "na15+v2", "na15+v3", "american+v2", "american+v3")


@lru_cache(maxsize=None)
def R(name="k40"):
    return load_rules(name)


def _fmt(problems, k=3):
    out = []
    for p in problems[:k]:
        out.append(f"[{p['rules']}] {p['kind']}: {p['detail']}\n{p['position']}\nactions: {p['actions']}")
    return "\n\n".join(out)


# ------------------------------------------------------------------------------------------------
# (a) played turns


@pytest.mark.parametrize("name", POINTS_PRESETS + OVERLAYS)
def test_played_turns_agree(name):
    """Random, expert and biased-random hands (4 players): every play decision compared."""
    rules = R(name)
    rep = Report()
    for seed in range(8):
        for driver in ("random", "expert"):
            check_game(rules, 4, 1000 + seed, driver, rep, label=name)
    for seed in range(16):
        check_game(rules, 4 if seed % 2 else 3, 2000 + seed, "biased", rep, label=name)
    assert rep.decisions > 2000, rep.decisions
    # (restricted discard draws for an A43 opening: test_D9_restricted_draw_for_an_A43_opening)
    problems = [p for p in rep.problems if p["kind"] != "draw discard (A43 opening)"]
    assert not problems, f"{len(problems)} disagreements in {rep.decisions} decisions\n" + _fmt(problems)


# ------------------------------------------------------------------------------------------------
# (c) explicit positions (issue 37 and §6 vectors)


def position(hand, table, extra="", name="k40", laid=True):
    text = f"""
active: P1
phase: play
P1: {hand}{' | laid' if laid else ''}
P2: 2S 4S | laid
P3: 2D 3S
P4: 3C 4D
table: {table}
discard: QS
{extra}
"""
    return Game.from_text(text, R(name))


def action_id(g, text):
    """Action id of a text; the low-end joker lay-off by its issue-37 id (older engines lack it)."""
    t = " ".join(text.lower().split())
    if t.startswith("tack jk on") and t.endswith("low end"):
        return A_TACK_LOW + int(t.split()[3]) - 1
    return g.action_id(text)


def agree(g, model):
    """The engine's legal actions and state equal the model's (both directions)."""
    only_model, only_engine = compare_legal(model, g)
    assert not only_model and not only_engine, (
        f"model only {action_texts(g, only_model)}, engine only {action_texts(g, only_engine)}\n"
        + position_text(g))
    diffs = compare_state(model, g)
    assert not diffs, diffs


def follow(g, actions, model=None):
    """Play ``actions`` (texts) in the engine and the model, checking agreement at every step;
    returns the model at the end (the engine's ``g`` has played them too).  Pass the returned
    model back to go on with the same turn: the model is set up from the engine only once."""
    if model is None:
        model = TurnModel.from_game(g)
    agree(g, model)
    for text in actions:
        a = action_id(g, text)
        assert a in model.legal(), f"the model refuses {text!r}\n{position_text(g)}"
        plan = engine_plan_records(g.state) if a == L.A_LAY else None
        model.apply(a, plan)
        g.apply(a)
        if not model.over:
            agree(g, model)
    return model


def legal_texts(g, model):
    return set(action_texts(g, model.legal()))


# ---- 1. A45: a card taken from the table never frees a joker


@pytest.mark.parametrize("table, take, swap", [
    # the position: after the take the set [JD JK JS] has 3 cards, but JH came from the table
    ("P2 [JD JK JH JS]", "take JH from 1", "swap JH for joker in 1"),
    # a natural taken from a run end would free a run joker elsewhere
    ("P2 [5H 6H 7H 8H], P3 [3H 4H JK=5H]", "take 5H from 1", "move joker in 2"),
    # ... a joker of a 3-card set
    ("P2 [6S 6H 6D 6C], P3 [6S JK 6D]", "take 6H from 1", "swap 6H for joker in 2"),
    # ... one of two jokers of a set
    ("P2 [KS KH KD KC], P3 [KD JK JK]", "take KS from 1", "swap KS for joker in 2"),
])
def test_A45_a_card_taken_from_the_table_never_frees_a_joker(table, take, swap):
    g = position("2C 9S", table)
    model = follow(g, [take])
    assert action_id(g, swap) not in model.legal()
    assert not any(t.startswith(("swap", "move joker")) for t in legal_texts(g, model))


def test_A45_the_hands_own_copy_swaps_once_the_taken_card_is_back():
    g = position("6H 2C 9S", "P2 [6S 6H 6D 6C], P3 [6S JK 6D]")
    model = follow(g, ["take 6H from 1"])
    assert "swap 6H for joker in 2" not in legal_texts(g, model)       # the hand's 6H waits too
    model = follow(g, ["tack 6H on 1"], model)
    assert "swap 6H for joker in 2" in legal_texts(g, model)


# ---- 2. D19: the card drawn from the pile is not thrown back by a chain


def test_D19_the_drawn_card_is_not_thrown_back_by_a_chain():
    g = position("7S 2C 9D", "P2 [7S 8S 9S 10S]", "taken: 7S")
    model = follow(g, ["take 10S from 1", "shift 10S on 1", "tack 7S on 1"])
    assert model.taken is not None and type_text(model.taken) == "7S"
    assert "discard 7S" not in legal_texts(g, model)      # the 7S in hand is the one drawn
    assert "discard 2C" in legal_texts(g, model)


def test_D19_a_copy_from_the_hand_lifts_the_ban():
    g = position("7S 7S 2C", "P2 [8S 9S 10S]", "taken: 7S")
    model = follow(g, [])
    assert "discard 7S" in legal_texts(g, model)          # another copy in hand (A53)
    model = follow(g, ["tack 7S on 1"], model)
    assert model.taken is None
    assert "discard 7S" in legal_texts(g, model)          # a copy from the hand was laid


def test_D19_only_one_copy_and_it_went_back_from_the_hand():
    g = position("7S 2C", "P2 [8S 9S 10S]", "taken: 7S")
    model = follow(g, [])
    assert "discard 7S" not in legal_texts(g, model)
    follow(g, ["tack 7S on 1"], model)


# ---- 3. a set joker stands for any missing suit


@pytest.mark.parametrize("recorded", ["KC", "KS"])
def test_a_set_joker_stands_for_any_missing_suit(recorded):
    g = position("KS KC 2C 9S", f"P2 [KD KH JK={recorded}]")
    model = follow(g, [])
    texts = legal_texts(g, model)
    for t in ("tack KS on 1", "tack KC on 1", "substitute KC for KD in 1", "substitute KS for KD in 1",
              "swap KC for joker in 1", "swap KS for joker in 1"):
        assert t in texts, t
    other = "KS" if recorded == "KC" else "KC"
    model = follow(g, [f"tack {recorded} on 1"], model)
    assert f"tack {other} on 1" not in legal_texts(g, model)      # four cards: full


def test_a_set_joker_blocks_no_take_that_needs_its_suit():
    g = position("2C 9S", "P2 [KS KH KD KC], P3 [KD KH JK=KC]")
    model = follow(g, [])
    assert "take KC from 1" in legal_texts(g, model)
    follow(g, ["take KC from 1", "tack KC on 2"], model)


# ---- 4. a joker laid off at either end of a run


def test_a_joker_goes_to_either_end_of_a_run():
    g = position("JK 2C 9S", "P2 [5H 6H 7H]")
    model = follow(g, [])
    assert {"tack JK on 1", "tack JK on 1 low end"} <= legal_texts(g, model)
    follow(g.copy(), ["tack JK on 1"])
    follow(g.copy(), ["tack JK on 1 low end"])


def test_two_cards_at_the_high_end_send_the_joker_low():
    g = position("8H 9H JK 2C 9S", "P2 [5H 6H 7H]")
    model = follow(g, ["tack 8H on 1", "tack 9H on 1"])
    texts = legal_texts(g, model)
    assert "tack JK on 1" in texts and "tack JK on 1 low end" not in texts
    model = follow(g, ["tack JK on 1"], model)
    assert model.table[0].tokens() == ["JK=4H", "5H", "6H", "7H", "8H", "9H"]


def test_a_run_topped_by_an_ace_takes_a_joker_only_low():
    g = position("JK 2C 9S", "P2 [QH KH AH]")
    model = follow(g, ["tack JK on 1"])
    assert model.table[0].tokens() == ["JK=JH", "QH", "KH", "AH"]


# ---- 5. a split: each part keeps its end's lay-off count (D28)


def test_after_a_split_each_part_keeps_its_ends_lay_off_count():
    g = position("10D JD 7D 8D 6D QD 2C", "P2 [5D 6D 7D 8D 9D]")
    model = follow(g, ["tack 10D on 1", "tack JD on 1", "split 1 with 7D"])
    texts = legal_texts(g, model)
    assert "tack QD on 2" not in texts                    # the table's high end had its two cards
    assert {"tack 8D on 1", "tack 6D on 2"} <= texts      # new ends


def test_V2_after_a_split_each_part_keeps_its_ends_count_per_run():
    g = position("10D 7D 8D 6D 4D 2C", "P2 [5D 6D 7D 8D 9D]", name="k40+v2")
    model = follow(g, ["tack 10D on 1", "tack 4D on 1", "split 1 with 7D"])
    assert (model.table[0].t_all, model.table[1].t_all) == (1, 1)
    texts = legal_texts(g, model)
    assert {"tack 8D on 1", "tack 6D on 2"} <= texts


# ---- §6 vectors through the model


def test_T57_T58_freed_joker_must_be_placeable():
    g = position("5H 7S 7D", "P2 [3H 4H JK=5H]")
    model = follow(g, ["move joker in 1"])
    assert model.freed == 1
    assert all(t.startswith(("lay down", "tack JK", "shift JK")) for t in legal_texts(g, model))
    follow(g, ["lay down [7S 7D JK]"], model)
    g = position("5H 9C", "P2 [3H 4H JK=5H]")
    model = follow(g, [])
    # the freed joker could go back onto the run (at its low end, or high end after 5H): offered
    assert "move joker in 1" in legal_texts(g, model)


def test_T59_joker_in_a_4_card_set_is_locked():
    g = position("6C 2C", "P2 [6S 6H 6D JK]")
    model = follow(g, [])
    assert not any(t.startswith("swap") for t in legal_texts(g, model))


def test_T61_end_joker_is_never_taken():
    g = position("2C 9S 4H", "P2 [4H 5H 6H JK=7H]")
    model = follow(g, [])
    texts = legal_texts(g, model)
    assert "take 4H from 1" in texts and not any(t.startswith("take JK") for t in texts)


def test_T49_two_per_end_per_turn():
    g = position("2S 3S 7S 8S 9S 5C", "P2 [4S 5S 6S]")
    model = follow(g, ["tack 3S on 1", "tack 2S on 1", "tack 7S on 1", "tack 8S on 1"])
    assert "tack 9S on 1" not in legal_texts(g, model)


def test_manipulation_cap():
    g = position("2C 9S", "P2 [6S 6H 6D 6C]")
    model = follow(g, ["take 6H from 1", "tack 6H on 1"] * L.MANIP_MAX_PER_TURN)
    assert not any(t.startswith(("take", "shift", "split", "substitute")) for t in legal_texts(g, model))


def test_A43_opening_completed_by_lay_offs():
    # NA15: [KS KH KD] = 30, lay-offs QC KC on [9C 10C JC] = 20 -> 50 < 51 (T41); with AC (15) -> 65
    g = position("KS KH KD QC KC 3D", "P2 [9C 10C JC]", name="na15", laid=False)
    model = follow(g, [])
    assert L.A_LAY not in model.legal()                        # T41: 30 + 20 = 50 < 51
    g = position("KS KH KD QC KC 3D 5H", "P2 [9C 10C JC], P2 [6H 7H 8H 9H]", name="na15", laid=False)
    model = follow(g, [])
    assert model.plan()[1] == 11                               # [KS KH KD KC] 40: 11 to lay off
    model = follow(g, ["lay down"], model)
    assert model.debt == 11
    assert all(t.startswith("tack") for t in legal_texts(g, model))
    model = follow(g, ["tack 5H on 2"], model)
    assert model.debt == 6
    model = follow(g, ["tack QC on 1"], model)
    assert model.debt == 0 and "discard 3D" in legal_texts(g, model)


# ------------------------------------------------------------------------------------------------
# (b) hypothesis positions


HYP_RULES = ("k40", "k51", "na15", "american", "k40+v1", "k40+v2", "k40+v3", "k40+v4", "na15+v1", "na15+v2",
             "american+v3")


@st.composite
def positions(draw):
    name = draw(st.sampled_from(HYP_RULES))
    rules = R(name)
    supply = {t: rules.n_decks for t in range(52)}
    supply[JOKER] = rules.n_jokers

    def take(t):
        if supply[t] <= 0:
            return False
        supply[t] -= 1
        return True

    melds = []
    for _ in range(draw(st.integers(1, 5))):
        owner = draw(st.sampled_from(["P1", "P2", "P2", "P3"]))
        if draw(st.booleans()):                               # a run
            suit = draw(st.integers(0, 3))
            q_min = 1 if rules.ace_low else 2
            length = draw(st.integers(rules.run_min_size, 7))
            lo = draw(st.integers(q_min, 14 - length + 1))
            qs = list(range(lo, lo + length))
            jokers = set(draw(st.lists(st.sampled_from(qs), max_size=2, unique=True)))
            if len(jokers) >= length:
                continue
            toks, ok = [], True
            for q in qs:
                t = JOKER if q in jokers else pos_type(suit, q)
                if not take(t):
                    ok = False
                    break
                toks.append(f"JK={type_text(pos_type(suit, q))}" if t == JOKER else type_text(t))
            if ok:
                melds.append(f"{owner} [{' '.join(toks)}]")
        else:                                                 # a set
            rank = draw(st.integers(0, 12))
            size = draw(st.integers(3, 4))
            suits = draw(st.permutations(range(4)))[:size]
            nj = draw(st.integers(0, min(2, size - 1)))
            toks, ok = [], True
            for i, s in enumerate(suits):
                t = JOKER if i < nj else s * 13 + rank
                if not take(t):
                    ok = False
                    break
                toks.append(f"JK={type_text(s * 13 + rank)}" if t == JOKER else type_text(t))
            if ok:
                melds.append(f"{owner} [{' '.join(toks)}]")
    assume(melds)
    pool = [t for t in range(53) for _ in range(supply[t])]
    hand = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=9))
    hand = [t for t in hand if take(t)]
    assume(hand)
    others = [t for t in (8, 20, 33) if take(t)]
    laid = draw(st.integers(0, 5)) > 0
    extra = []
    naturals = [t for t in hand if t != JOKER]
    if laid and naturals and draw(st.integers(0, 3)) == 0:
        extra.append(f"owed: {type_text(draw(st.sampled_from(naturals)))}")
    elif draw(st.integers(0, 2)) == 0:
        extra.append(f"taken: {type_text(draw(st.sampled_from(hand)))}")
        if not laid or draw(st.integers(0, 3)) == 0:
            extra.append("taken_must: yes")
    if laid and JOKER in hand and not extra and draw(st.booleans()):
        extra.append("freed: 1")
    if laid and draw(st.integers(0, 4)) == 0:
        extra.append(f"manipulations: {draw(st.integers(1, L.MANIP_MAX_PER_TURN))}")
    text = "\n".join([
        "active: P1", "phase: play",
        "P1: " + " ".join(type_text(t) for t in hand) + (" | laid" if laid else ""),
        f"P2: {type_text(others[0]) if others else '-'} | laid",
        f"P3: {type_text(others[1]) if len(others) > 1 else '-'}",
        f"P4: {type_text(others[2]) if len(others) > 2 else '-'}",
        "table: " + ", ".join(melds),
        "discard: -",
    ] + extra)
    seed = draw(st.integers(0, 2**31 - 1))
    return name, text, seed


@settings(max_examples=600, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(positions())
def test_hypothesis_positions_agree(case):
    name, text, seed = case
    try:
        g = Game.from_text(text, R(name))
    except ValueError:
        assume(False)
        return
    if g.phase != "play" or g.terminal:
        return
    rep = Report()
    check_position(g, rep, np.random.default_rng(seed), label=name)
    assert not rep.problems, "\n" + text + "\n\n" + _fmt(rep.problems)


# ------------------------------------------------------------------------------------------------
# disagreements with the engine that the reference found on the issue-37 engine (now fixed: an ace goes to the
# end that can still take it; a restricted draw sees the A43 opening)


def test_an_ace_goes_to_the_end_that_can_still_take_it():
    g = position("3H 2H AH 9C 9S", "P2 [4H 5H 6H 7H 8H 9H 10H JH QH KH]", name="na15")
    model = TurnModel.from_game(g)
    for text in ("tack 3H on 1", "tack 2H on 1"):
        a = g.action_id(text)
        model.apply(a)
        g.apply(a)
    assert "tack AH on 1" in legal_texts(g, model)        # the model: at the high end
    agree(g, model)


def test_D9_restricted_draw_for_an_A43_opening():
    text = """
active: P3
phase: draw
players: 4
turn: 6
P1: 2C 7D JD 3H 8H 5S 9S KS | laid
P2: 4C 9C JC KC AD 3D QD KD AH 2H KH 4S 5S 7S JS
P3: 3C 5C 6C 8C 8C QC 2D 6D 10D KD KH AS 3S 6S JK
P4: 10C 5D 6D 8D 2H 4H 5H 7H 9H 2S 3S 4S 8S QS JK
table: P1 [AC AH JK=AD], P1 [10C 10D JK=10S 10H]
discard: 2D 7C QD 4H 7C 10S
"""
    g = Game.from_text(text, R("na15"))
    model = TurnModel.from_game(g)
    ten_spades = parse_cards(["10S"])[0].type
    # the model: with 10S the best melds are [6C 6D 6S] [10D 10S JK] = 48 < 51, completed by a lay-off
    # (A43, D26), so 10S is used in the opening laid this turn
    assert model.draw_discard_legal(ten_spades, "if_used_in_opening")
    # the engine's own plan of that hand in the play phase is that A43 opening, 10S in it
    play = Game.from_text(text.replace("phase: draw", "phase: play").replace("JK\nP4", "JK 10S\nP4")
                          .replace("7C 10S\n", "7C\n"), R("na15"))
    assert "lay down [6C 6D 6S] [10D 10S JK=10C]" in play.legal_action_texts()
    assert g.legal_mask()[L.A_DRAW_DISCARD]


def test_an_ace_taken_from_the_low_end_can_go_to_the_high_end():
    g = position("2H AH 9C 9S", "P2 [3H 4H 5H 6H 7H 8H 9H 10H JH QH KH]", name="na15")
    model = TurnModel.from_game(g)
    for text in ("tack 2H on 1", "tack AH on 1"):
        a = g.action_id(text)
        model.apply(a)
        g.apply(a)
    assert model.table[0].lo == 1                          # the ace went low (its first end)
    assert "take AH from 1" in legal_texts(g, model)       # ... and may come back at the high end
    agree(g, model)
