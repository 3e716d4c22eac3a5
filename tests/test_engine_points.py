"""Kalooki 40 family in the compiled engine (RULES.md §2.2-§2.6, §6.6, §6.8, T49/T50, A21, A24).

Points openings, restricted discard draws, lay-offs with per-turn limits, joker swaps (M6
"retrieve") in runs and 3-card sets, discardable jokers, rip vs kalooki, stock exhaustion, deal
sizes by player count, and closed-loop invariants / determinism for every points preset.  Table
manipulation M1-M5 has its own file (test_engine_manipulation.py).  Positions are written with
``Game.from_text``; seats are P1..Pn (P1 active).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from kalooki_sim import load_rules
from kalooki_sim.engine import core, layout as L
from kalooki_sim.engine.playout import random_playout
from kalooki_sim.runtime.game import Game, check_supported
from kalooki_sim.runtime.rollout import simulate

POINTS_PRESETS = ("k40", "k51", "k101", "na15", "american")
GGRR = ["greedy", "greedy", "random", "random"]


@lru_cache(maxsize=None)
def R(name="k40", **kw):
    return load_rules(name, **kw)


def G(text, name="k40", **kw):
    return Game.from_text(text, R(name, **kw))


def code(game, action):
    return game.check(action)


def has(game, text):
    return text in game.legal_action_texts()


# ------------------------------------------------------------------------------------------------
# presets are accepted; what is not offered is said


@pytest.mark.parametrize("name", POINTS_PRESETS + ("caribbean",))
def test_presets_supported(name):
    check_supported(R(name))
    if name in ("k40", "k51"):                     # every house variation applies to these two
        check_supported(R(name + "+v1+v2+v3+v4+v5+v6+v7"))


# ------------------------------------------------------------------------------------------------
# §6.6 jokers (M6 retrieve)

SWAP = """
active: P1
phase: play
P1: 5H 7S 7D 9C | laid
P2: 2C 3C | laid
P3: 2D 3S
P4: KD KH
table: P2 [3H 4H JK=5H]
discard: 3C
"""


def test_T57_swap_then_lay_freed_joker():
    g = G(SWAP)
    assert code(g, "move joker in 1") == 0
    g.apply("move joker in 1")
    assert g.table[0][1] == ["3H", "4H", "5H"]
    assert g.hand(0).count("JK") == 1
    # the freed joker must be placed before anything else
    assert code(g, "discard 9C") == L.E_MUST_PLACE
    assert code(g, "end turn") == L.E_MUST_PLACE
    texts = g.legal_action_texts()
    # only actions that place the joker: a lay-down with it, a lay-off, a shift that adds it
    assert all(t.startswith(("lay down", "tack JK", "shift JK")) for t in texts), texts
    lay = [t for t in texts if t.startswith("lay down")]
    assert lay and "7D" in lay[0] and "7S" in lay[0] and "JK" in lay[0]
    g.apply(lay[0])
    assert "JK" not in g.hand(0)
    assert g.hand(0) == ["9C"]
    assert code(g, "discard 9C") == 0


def test_T58_freed_joker_cannot_be_kept():
    g = G(SWAP.replace("5H 7S 7D 9C", "5H 9C 2S"))
    g.apply("move joker in 1")
    assert code(g, "discard 9C") == L.E_MUST_PLACE
    assert code(g, "end turn") == L.E_MUST_PLACE
    assert set(g.legal_action_texts()) == {"tack JK on 1", "tack JK on 1 low end", "shift JK on 1 high",
                                           "shift JK on 1 low"}
    g.apply("tack JK on 1")
    assert code(g, "discard 9C") == 0


def test_T58_swap_not_offered_when_freed_joker_cannot_be_placed():
    # a full run 2H..AH: after the swap the joker fits nowhere and makes no meld with the hand
    g = G("""
active: P1
phase: play
P1: 6H 9C 2S | laid
P2: 2C 3C | laid
P3: 2D 3S
P4: KD KH
table: P2 [2H 3H 4H 5H JK=6H 7H 8H 9H 10H JH QH KH AH]
discard: 3C
""")
    assert code(g, "move joker in 1") == L.E_NOT_USABLE
    assert not any(t.startswith("move joker") for t in g.legal_action_texts())


def test_T59_joker_in_four_card_set_locked():
    g = G("""
active: P1
phase: play
P1: 6C 9C | laid
P2: 2C 3C | laid
P3: 2D 3S
P4: KD KH
table: P2 [6S 6H 6D JK]
discard: 3C
""")
    assert code(g, "swap 6C for joker in 1") == L.E_SWAP_DISABLED


def test_set_joker_swap_three_card_set_one_for_one():
    g = G("""
active: P1
phase: play
P1: 6D 9C 9D | laid
P2: 2C 3C | laid
P3: 2D 3S
P4: KD KH
table: P2 [6S 6H JK]
discard: 3C
""")
    assert code(g, "swap 6D for joker in 1") == 0
    assert code(g, "swap 6S for joker in 1") == L.E_NO_CARD
    g.apply("swap 6D for joker in 1")
    assert sorted(g.table[0][1]) == ["6D", "6H", "6S"]
    assert code(g, "discard 9C") == L.E_MUST_PLACE
    assert has(g, "tack JK on 1")


def test_T61_end_joker_needs_natural_and_V3():
    text = """
active: P1
phase: play
P1: 9C 2S | laid
P2: 2C 3C | laid
P3: 2D 3S
P4: KD KH
table: P2 [4H 5H 6H JK=7H]
discard: 3C
"""
    g = G(text)
    # no natural 7H: the end joker cannot be taken, by a swap or by an end take (A19); 4H can
    assert code(g, "move joker in 1") == L.E_NO_CARD
    assert code(g, "take JK from 1") == L.E_TAKE_JOKER
    assert code(g, "take 4H from 1") == 0
    g.apply("take 4H from 1")
    assert g.table[0][1] == ["5H", "6H", "JK=7H"]
    assert code(g, "discard 9C") == L.E_MUST_PLACE        # 4H must be used this turn
    g = G(text.replace("9C 2S", "7H 9C 2S"))
    assert code(g, "move joker in 1") == 0
    g = G(text.replace("9C 2S", "7H 9C 2S"), joker_swap_from_run_end=False)   # V3
    assert code(g, "move joker in 1") == L.E_SWAP_END


def test_swap_requires_opened():
    g = G(SWAP.replace("5H 7S 7D 9C | laid", "5H 7S 7D 9C"))
    assert code(g, "move joker in 1") == L.E_NOT_LAID


# ------------------------------------------------------------------------------------------------
# jokers and taken cards in discards (A49, T70)


def test_jokers_may_be_discarded_in_k40():
    g = G(SWAP.replace("5H 7S 7D 9C", "JK 9C"))
    assert code(g, "discard JK") == 0


def test_T70_taken_discard_not_discarded_again():
    g = G("""
active: P1
phase: draw
turn: 4
P1: 2S 5D KC | laid
P2: 2C 3C | laid
P3: 2D 3S
P4: KD KH
table: P2 [4H 5H 6H]
discard: 3C 9C
""")
    assert code(g, "draw discard") == 0        # after opening: any
    g.apply("draw discard")
    assert code(g, "discard 9C") == L.E_TAKEN_DISCARD
    assert code(g, "discard KC") == 0


# ------------------------------------------------------------------------------------------------
# §6.8 drawing before the opening (T71, T72), first turn, AMER (T75)

OPEN = """
active: P1
phase: draw
turn: 5
P1: 7S 7D 10C JC QC 2H 3D 5S 9S KH 4C 8D 6H
P2: 2C 3C
P3: 2D 3H
P4: 5D 6D
discard: 9D {top}
"""


def test_T71_discard_taken_for_the_opening():
    g = G(OPEN.format(top="7H"))
    assert code(g, "draw discard") == 0
    g.apply("draw discard")
    texts = g.legal_action_texts()
    assert texts == ["lay down [10C JC QC] [7D 7H 7S]"]
    assert code(g, "discard 2H") == L.E_MUST_PLACE
    g.apply(texts[0])
    assert g.laid_down[0]
    assert code(g, "discard 2H") == 0


def test_T72_discard_not_usable_in_the_opening():
    g = G(OPEN.format(top="2C"))
    assert code(g, "draw discard") == L.E_NOT_USABLE
    assert g.legal_action_texts() == ["draw stock"]


def test_opening_minimum_points():
    # 10C JC QC + 7S 7D 7H = 51 >= 40 (K40) and >= 51 (K51); without the sevens 30 < 40
    g = G(OPEN.format(top="7H"), "k51")
    assert code(g, "draw discard") == 0
    g = G(OPEN.format(top="7H").replace("7S 7D", "2S 3S"))
    assert code(g, "draw discard") == L.E_NOT_USABLE


def test_first_turn_free_upcard():
    g = G(OPEN.format(top="2C").replace("turn: 5", "turn: 0"))
    assert code(g, "draw discard") == 0
    g.apply("draw discard")
    assert code(g, "discard 2H") == 0          # free: nothing must be melded
    assert code(g, "discard 2C") == L.E_TAKEN_DISCARD
    g = G(OPEN.format(top="2C").replace("turn: 5", "turn: 0"), "american")   # AMER: no free upcard
    assert code(g, "draw discard") == L.E_NOT_USABLE


AMER = """
active: P1
phase: draw
turn: 6
P1: 2S 5D KC 9H | laid
P2: 2C 3C | laid
P3: 2D 3S
P4: KD KH
table: P2 [4H 5H 6H]
discard: 3C {top}
"""


def test_T75_amer_opened_player_must_meld_the_discard():
    g = G(AMER.format(top="QD"), "american")
    assert code(g, "draw discard") == L.E_NOT_USABLE
    g = G(AMER.format(top="7H"), "american")   # fits the run as a lay-off
    assert code(g, "draw discard") == 0
    g.apply("draw discard")
    assert code(g, "discard 2S") == L.E_MUST_PLACE
    assert set(g.legal_action_texts()) == {"tack 7H on 1", "shift 7H on 1"}
    g.apply("tack 7H on 1")
    assert code(g, "discard 2S") == 0
    # K40 after the opening: any discard may be taken
    g = G(AMER.format(top="QD"))
    assert code(g, "draw discard") == 0


# ------------------------------------------------------------------------------------------------
# T49 / T50: lay-off limits per turn (A21, V2)

LAYOFF = """
active: P1
phase: play
P1: 2S 3S 7S 8S 9S KD | laid
P2: 10S 2C | laid
P3: 2D 3H
P4: 5D 6D
table: P2 [4S 5S 6S]
discard: 3C
"""


def test_T49_two_per_end_per_turn():
    g = G(LAYOFF)
    for t in ("tack 3S on 1", "tack 2S on 1", "tack 7S on 1", "tack 8S on 1"):
        assert code(g, t) == 0, t
        g.apply(t)
    assert code(g, "tack 9S on 1") == L.E_LAYOFF_LIMIT
    assert g.table[0][1] == ["2S", "3S", "4S", "5S", "6S", "7S", "8S"]
    # 7S 8S 9S may instead be laid as a new run (plan 0 after the opening)
    g2 = G(LAYOFF)
    assert any(t.startswith("lay down") and "9S" in t for t in g2.legal_action_texts())
    g2.apply("tack 7S on 1")
    g2.apply("tack 8S on 1")
    assert code(g2, "tack 9S on 1") == L.E_LAYOFF_LIMIT


def test_T49_limit_resets_next_turn():
    g = G(LAYOFF.replace("P2: 10S 2C", "P2: 9S 2C"))
    g.apply("tack 7S on 1")
    g.apply("tack 8S on 1")
    assert code(g, "tack 9S on 1") == L.E_LAYOFF_LIMIT
    g.apply("discard KD")
    g.apply("draw stock")
    assert g.current_player == 1
    assert code(g, "tack 9S on 1") == 0


def test_T50_V2_limit_per_run_per_turn():
    g = G(LAYOFF, layoff_max_per_run_per_turn=2)
    g.apply("tack 3S on 1")
    g.apply("tack 7S on 1")
    assert code(g, "tack 2S on 1") == L.E_LAYOFF_LIMIT
    assert code(g, "tack 8S on 1") == L.E_LAYOFF_LIMIT


def test_sets_distinct_suits_up_to_four():
    g = G("""
active: P1
phase: play
P1: 6S 6C 6D 9C | laid
P2: 2C 3C | laid
P3: 2D 3H
P4: 5D 6H
table: P2 [6S 6H JK=6D]
discard: 3C
""")
    assert code(g, "tack 6S on 1") == L.E_WRONG_SUIT
    assert code(g, "tack 6C on 1") == 0
    g.apply("tack 6C on 1")
    assert code(g, "tack 6D on 1") == L.E_SET_FULL


def test_either_end_growth():
    g = G("""
active: P1
phase: play
P1: 4H 8H KD 9C | laid
P2: 2C 3C | laid
P3: 2D 3H
P4: 5D 6D
table: P2 [5H 6H 7H]
discard: 3C
""")
    assert code(g, "tack 4H on 1") == 0       # low end (Caribbean T44: illegal)
    assert code(g, "tack 8H on 1") == 0


# ------------------------------------------------------------------------------------------------
# going out: rip and kalooki (A24, V6)

KAL = """
active: P1
phase: draw
turn: 7
P1: 2H 3H 4H 5H 6H 7H 8H 9H 10H KS KD KC KH
P2: 2C 3C QS
P3: 2D 3S
P4: 5D 6D
discard: 3C
stock: 5C rest
"""


def _kalooki(g):
    g.apply("draw stock")
    g.apply(g.legal_action_texts()[[t.startswith("lay") for t in g.legal_action_texts()].index(True)])
    assert g.hand(0) == ["5C"]
    g.apply("discard 5C")


def test_kalooki_detected():
    g = G(KAL)
    _kalooki(g)
    assert g.last_event == "kalooki"
    assert g.hand_winners[-1] == 0
    assert g.hand_scores[-1] == [0, 2 + 3 + 10, 2 + 3, 5 + 6]


def test_kalooki_penalty_multiplier_V6():
    g = G(KAL, kalooki_penalty_multiplier=2)
    _kalooki(g)
    assert g.last_event == "kalooki"
    assert g.hand_scores[-1] == [0, 30, 10, 22]


def test_rip_when_laid_before():
    g = G("""
active: P1
phase: play
P1: 7S 9C | laid
P2: 2C 3C | laid
P3: 2D 3H
P4: 5D 6H
table: P2 [4S 5S 6S]
discard: 3C
""")
    g.apply("tack 7S on 1")
    g.apply("discard 9C")
    assert g.last_event == "went out"
    assert g.hand_winners[-1] == 0


# ------------------------------------------------------------------------------------------------
# T76 stock exhaustion


STOCK = """
active: P1
phase: draw
turn: 9
P1: 2S 5D KC | laid
P2: 2C 3C | laid
P3: 2D 3S
P4: KD KH
table: P2 [4H 5H 6H]
discard: 3C 9D 5S
stock: -
"""


def test_T76_reshuffle_then_void():
    g = G(STOCK)
    dealer = g._gs(L.G_DEALER)
    g.apply("draw stock")
    assert g.discard_pile == ["5S"]
    assert g._gs(L.G_STOCK_N) == 1
    assert g._gs(L.G_RESHUFFLES) == 1
    # second exhaustion in the same hand: void, same dealer deals again
    g.apply("discard 2S")
    g.state.gs[0, L.G_STOCK_N] = 0
    g.state.gs[0, L.G_DISC_N] = 2
    g.apply("draw stock")
    assert g.last_event == "void (redeal)"
    assert g._gs(L.G_DEALER) == dealer
    assert [len(g.hand(p)) for p in range(4)] == [13] * 4


def test_T76_V7_void_immediately():
    g = G(STOCK, stock_exhaustion="void_immediately", max_reshuffles_per_hand=0)
    g.apply("draw stock")
    assert g.last_event == "void (redeal)"


# ------------------------------------------------------------------------------------------------
# deal sizes (hand_size map) and the AMER cut joker


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_na15_deal_size_by_players(n):
    r = R("na15")
    g = Game(r, n_players=n, seed=3)
    assert [len(g.hand(p)) for p in range(n)] == [r.deal_size(1, n)] * n
    assert r.deal_size(1, n) == {2: 15, 3: 15, 4: 15, 5: 13, 6: 11}[n]


def test_k40_deal_13_and_american_cut_joker():
    g = Game(R("k40"), n_players=4, seed=1)
    assert [len(g.hand(p)) for p in range(4)] == [13] * 4
    got = 0
    for seed in range(120):
        g = Game(R("american"), n_players=4, seed=seed)
        assert [len(g.hand(p)) for p in range(4)] == [15] * 4
        mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
        assert core.check_invariants(g.state.arrays(), g.rv, 0, True, mask) == 0
        cutter = (g._gs(L.G_DEALER) - 1) % 4
        got += "JK" in g.hand(cutter)
    assert got > 0


# ------------------------------------------------------------------------------------------------
# closed loop: invariants on every state, mask == check_action, determinism


@pytest.mark.parametrize("name", POINTS_PRESETS)
def test_invariants_300_hands_random_and_greedy(name):
    r = R(name)
    out = simulate(r, 4, GGRR, None, 300, 5, check=True)
    ev = out["end_event"].reshape(300, 4)[:, 0]
    assert set(np.unique(ev)) <= {L.EV_WENT_OUT, L.EV_KALOOKI, L.EV_TURN_CAP, L.EV_VOID_CAP}
    won = out["won"].reshape(300, 4)
    out_ = (ev == L.EV_WENT_OUT) | (ev == L.EV_KALOOKI)
    assert (won[out_].sum(axis=1) == 1).all()
    assert (out["penalty"][out["won"] == 1] == 0).all()
    assert out_.mean() > 0.5
    # all random, 3 players: also every state checked
    simulate(r, 3, ["random"] * 3, None, 60, 9, check=True)


@pytest.mark.parametrize("name", POINTS_PRESETS)
def test_mask_agrees_with_check_action(name):
    r = R(name)
    rv = r.to_vector()
    for gid in range(2):
        g = Game(r, n_players=4, seed=11, game_id=gid)
        stats = np.zeros(8, dtype=np.int64)
        res = random_playout(g.state.arrays(), rv, 0, 5, 3000, 2, stats, 0.6)
        assert res == 0, res


def test_k40_deterministic():
    r = R("k40")
    a = simulate(r, 4, GGRR, None, 200, 17)
    b = simulate(r, 4, GGRR, None, 200, 17)
    c1 = simulate(r, 4, GGRR, None, 120, 17)
    c2 = simulate(r, 4, GGRR, None, 80, 17, first_game_id=120)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
        np.testing.assert_array_equal(a[k], np.concatenate([c1[k], c2[k]]))


def test_cli_records_points_matches(tmp_path, capsys):
    # `simulate --record` with named strategies in a K40 match to elimination, then `replay --check`
    from kalooki_sim.cli import main

    out = tmp_path / "run"
    assert main(["simulate", "--variant", "k40", "--agents", "sharp-k40,greedy,greedy,random", "--matches", "2",
                 "--max-hands", "30", "--buy-back", "never", "--record", "2", "--quiet", "--out", str(out)]) == 0
    assert "replays: " in capsys.readouterr().out
    path = out / "replays.jsonl"
    assert main(["replay", str(path), "--check-agents"]) == 0
    err = capsys.readouterr()
    assert "valid: 2 games" in err.err and "P1 sharp-k40 (expert)" in err.out and "money P1 " in err.out


@pytest.mark.parametrize("name", ("k40", "american"))
def test_replay_record_and_validate(tmp_path, name):
    from kalooki_sim.runtime.replay import read_replay, record_games, render_replay, validate_replay

    path = tmp_path / "r.jsonl"
    record_games(R(name), 4, GGRR, 3, range(4), mode="hands", path=path)
    c = validate_replay(path, check_agents=True)
    assert c["games"] == 4 and c["hands"] == 4
    assert "open with" in render_replay([ev for _, ev in read_replay(path)])
