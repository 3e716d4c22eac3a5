"""`kalooki play`: a person against the bots, driven by scripted input (kalooki_sim/runtime/play.py)."""

import io
import re
import subprocess
import sys

import numpy as np
import pytest

from kalooki_sim.core.rules import load_rules
from kalooki_sim.runtime.game import Game
from kalooki_sim.runtime.play import (
    PlaySession, hand_text, menu_text, move_phrase, parse_command, plan_game, render_position,
)
from kalooki_sim.runtime.replay import ReplayError, validate_replay

ONES = "1\n" * 600          # the first legal move at every prompt; more lines than any hand needs


@pytest.fixture(scope="module", autouse=True)
def _warm_kernels():
    """Compile the kernels the command uses in this process first (numba caches them on disk), so
    the subprocesses below load them instead of each compiling on a cold cache."""
    for variant in ("caribbean", "k40"):
        out = io.StringIO()
        PlaySession(variant, ["greedy", "random", "greedy"], seat=1, seed=0, hands=1,
                    input=io.StringIO("hint\n" + ONES), output=out).run()


def _play(*args, script="", timeout=1800):
    return subprocess.run([sys.executable, "-m", "kalooki_sim.cli", "play", *args], input=script,
                          capture_output=True, text=True, timeout=timeout)


# ------------------------------------------------------------------------------------------------
# the command, as a person would run it


def test_caribbean_hand_played_with_first_moves_shows_position_and_saves_valid_replay(tmp_path):
    path = tmp_path / "game.jsonl"
    r = _play("--variant", "caribbean", "--opponents", "greedy,greedy-picky,random", "--seed", "3",
              "--hands", "1", "--save", str(path), script="hint\n" + ONES)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "your hand (" in out and re.search(r"your hand \(\d+\): [CDHS]: ", out)
    assert "table:" in out and "discard top: " in out
    assert re.search(r"P2 greedy\s+\d+ cards?, (not )?laid down, calls \d/3, total 0", out)
    assert "contract 3 threes" in out and "phase: " in out
    assert "hint (sharp): " in out
    assert re.search(r"P\d \(\w[\w-]*\) (draws from the stock|discards \w+|passes on \w+)", out)
    assert "--- hand 1 over:" in out and "totals:" in out and "=== game over after 1 hand(s)" in out
    assert "winner(s): P" in out
    assert validate_replay(path)["games"] == 1
    c = subprocess.run([sys.executable, "-m", "kalooki_sim.cli", "replay", str(path), "--check"],
                       capture_output=True, text=True, timeout=1800)
    assert c.returncode == 0, c.stderr
    assert "valid: 1 games, 1 hands" in c.stderr and "P1 external" in c.stdout
    with pytest.raises(ReplayError, match="P1 were played from outside"):
        validate_replay(path, check_agents=True)


def test_mistakes_help_legal_and_hint_change_nothing(tmp_path):
    """Typos, illegal moves, menu numbers out of range, help, legal and hint print a message and
    leave the game as it was: the same seed played with and without them is the same game."""
    clean, noisy = tmp_path / "clean.jsonl", tmp_path / "noisy.jsonl"
    args = ("--variant", "caribbean", "--opponents", "greedy,random,greedy", "--seed", "11", "--hands", "1",
            "--seat", "2")
    a = _play(*args, "--save", str(clean), script=ONES)
    mistakes = "discard ZZ\ntack 9H on 12\nlegal\nhelp\n99\n\nhint\nhint\n"
    b = _play(*args, "--save", str(noisy), script=mistakes + ONES[:20] + mistakes + ONES)
    assert a.returncode == 0 and b.returncode == 0, (a.stderr, b.stderr)
    out = b.stdout
    assert "cannot read 'discard ZZ'" in out
    assert "illegal: 'tack 9H on 12'" in out
    assert "no move 99: choose 1.." in out
    assert "Type a move in the engine's words" in out          # help
    assert "moves:  1) " in out                                # legal
    assert "type a move, a number from the menu" in out        # empty line
    # after the mistakes the same prompt follows, without a new position: the first position is
    # shown once, followed directly by its messages and the next prompt
    first = out.split("your hand (", 2)
    assert "cannot read 'discard ZZ'" in first[1] and "no move 99" in first[1]
    assert clean.read_text() == noisy.read_text()
    assert a.stdout.count("your hand (") == b.stdout.count("your hand (")


def test_unknown_opponent_exits_2_listing_known_agents():
    r = _play("--opponents", "greedy,nosuchbot", script="quit\n", timeout=600)
    assert r.returncode == 2
    assert "unknown agent 'nosuchbot'" in r.stderr
    for known in ("greedy", "greedy-picky", "random"):
        assert known in r.stderr
    assert r.stderr.startswith("kalooki: error: ")


def test_bad_seat_and_player_count_exit_2():
    r = _play("--opponents", "greedy,greedy", "--seat", "4", script="quit\n", timeout=600)
    assert r.returncode == 2 and "--seat must be 1..3" in r.stderr
    r = _play("--opponents", "greedy", script="quit\n", timeout=600)
    assert r.returncode == 2 and "opponents" in r.stderr


def test_k40_single_hand_to_the_end(tmp_path):
    path = tmp_path / "k40.jsonl"
    r = _play("--variant", "k40", "--opponents", "greedy,random,greedy-picky", "--seed", "5", "--hands", "1",
              "--save", str(path), script=ONES)
    assert r.returncode == 0, r.stderr
    assert "opening minimum 40 points" in r.stdout
    assert "calls " not in r.stdout.split("your hand")[0]      # no call window in K40
    assert "--- hand 1 over:" in r.stdout and "=== game over after 1 hand(s)" in r.stdout
    assert validate_replay(path)["hands"] == 1


def test_points_match_is_saved_and_validates(tmp_path):
    """A K40 match to elimination, the person following the hints, saved as a replay that
    validates; the results name the players by their place in the lineup."""
    path = tmp_path / "k40.jsonl"
    out = io.StringIO()
    s = PlaySession("k40", ["greedy", "greedy", "greedy"], seat=2, seed=5, hands=40, hint_agent="greedy",
                    save=path, input=_HintFollower(out), output=out)
    assert s.run() == 0
    text = out.getvalue()
    assert "=== game over after" in text and "; money " in text and "saved: " in text
    assert re.search(r"totals: P1 \(greedy\) \d+, P2 \(greedy\) \d+, you \d+", text)
    counts = validate_replay(path)
    assert counts["games"] == 1 and counts["hands"] == s.events[-1]["hands"] > 1


def test_quit_stops_without_saving(tmp_path):
    path = tmp_path / "q.jsonl"
    r = _play("--opponents", "greedy,greedy,greedy", "--hands", "1", "--save", str(path), script="quit\n")
    assert r.returncode == 0 and "quit: the game is not finished" in r.stdout
    assert not path.exists()


# ------------------------------------------------------------------------------------------------
# in process


class _HintFollower(io.StringIO):
    """Input that asks for a hint at every prompt and then types the hinted move."""

    def __init__(self, out: io.StringIO):
        super().__init__()
        self.out, self.asked = out, False

    def readline(self, *_):
        self.asked = not self.asked
        if self.asked:
            return "hint\n"
        last = re.findall(r"hint \([\w-]+\): (.+?)(?:  \(move \d+\))?\n", self.out.getvalue())[-1]
        return last + "\n"


def test_following_the_hints_plays_the_hint_agents_game():
    """Typing what `hint` says at every prompt plays the game the hint agent would play in that
    seat: hints are asked on a copy, so the real game's random streams are untouched."""
    out = io.StringIO()
    s = PlaySession("caribbean", ["random", "greedy", "greedy"], seat=0, seed=7, hands=1, hint_agent="greedy",
                    input=_HintFollower(out), output=out)
    assert s.run() == 0
    assert "=== game over" in out.getvalue()
    from kalooki_sim.runtime.replay import open_table

    t, ref = open_table("caribbean", 4, ["greedy", "random", "greedy", "greedy"], 7, 0, "matches", hands_per_game=1)
    while not t.terminal:
        ref += t.play(t.game.agent_action())
    mine = [e for e in s.events if e["type"] == "action"]
    assert [(e["seat"], e["text"]) for e in mine] == [(e["seat"], e["text"]) for e in ref if e["type"] == "action"]


def test_with_agent_is_a_copy_and_leaves_streams_alone():
    g = Game("caribbean", 4, seed=2, agents=["external", "greedy", "greedy", "random"])
    while (a := g.agent_action()) != -1:                # the bots play up to P1's decision
        g.apply(a)
    assert g.to_act == 0
    ctrs, seats = g._loop.ctrs.copy(), g._loop.seats.copy()
    h = g.with_agent(0, "greedy")
    a = h.agent_action()
    assert a in g.legal_actions()
    assert np.array_equal(g._loop.ctrs, ctrs) and np.array_equal(g._loop.seats, seats)
    assert g.agent_action() == -1 and h._loop.seats[0, 0] == 1
    # a wider parameter row than the table's widens the copy only
    r = Game("caribbean", 3, seed=1, agents=["external", "random", "random"])
    w = r.with_agent(0, "greedy", [0.5, 1.0, 2.0, 3.0])
    assert w._loop.params.shape[2] == 4 and r._loop.params.shape[2] == 1
    assert list(w._loop.params[0, 0]) == [0.5, 1.0, 2.0, 3.0]


def test_hand_text_groups_by_suit_jokers_apart():
    assert hand_text(["QH", "4C", "JK", "10C", "AC", "2S", "JK", "KC"]) == "C: AC 4C 10C KC | H: QH | S: 2S | JK JK"
    assert hand_text([]) == "-"


def test_parse_command():
    assert parse_command(" 3 ").kind == "number" and parse_command("3").value == 3
    assert parse_command("Discard  7c").value == "Discard 7c" and parse_command("discard 7c").kind == "move"
    for word, kind in (("quit", "quit"), ("q", "quit"), ("help", "help"), ("?", "help"), ("legal", "legal"),
                       ("HINT", "hint"), ("   ", "empty")):
        assert parse_command(word).kind == kind


def test_move_phrase():
    assert move_phrase("draw stock") == "draws from the stock"
    assert move_phrase("draw discard", "7C") == "takes 7C from the discard pile"
    assert move_phrase("discard 7C") == "discards 7C"
    assert move_phrase("tack 9H on 3") == "tacks 9H on 3"
    assert move_phrase("lay down [4C 4D 4H]") == "lays down [4C 4D 4H]"
    assert move_phrase("pass", "7C") == "passes on 7C" and move_phrase("call", "7C") == "calls 7C"
    assert move_phrase("allow") == "allows the call" and move_phrase("end turn") == "ends the turn"
    assert move_phrase("move joker in 2") == "moves the joker in 2"


def test_menu_text_numbers_every_move():
    texts = [f"discard {c}" for c in ("AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC")]
    m = menu_text(texts)
    assert all(f"{i}) {t}" in m for i, t in enumerate(texts, 1))
    assert all(len(line) <= 100 for line in m.splitlines())


def test_plan_game():
    car, k40 = load_rules("caribbean"), load_rules("k40")
    assert plan_game(car, None) == plan_game(car, 9) and plan_game(car, None).n_hands == 9
    assert plan_game(car, 1).mode == "matches" and plan_game(car, 1).length() == {"hands_per_game": 1}
    assert plan_game(k40, 1).mode == "hands" and plan_game(k40, 1).length() == {}
    assert plan_game(k40, None).elimination and plan_game(k40, 7).length() == {"max_hands": 7}
    assert plan_game(load_rules("na15"), None).length() == {"hands_per_game": 10}
    with pytest.raises(ValueError):
        plan_game(car, 0)


def test_render_position_shows_everything_the_person_needs():
    g = Game.from_text("""
        round: 2
        active: P1
        phase: play
        P1: 4C 4D 4H 8S 8S 8D QH QC JK 5D
        P2: 7H 7S 9C | laid, calls=1
        P3: 2C 3C 4S 5S 6S 7D KD
        table: P2 [5H JK=6H 7H 8H], P2 [KC KD JK=KH]
        discard: 3C 9D
        stock: rest
    """)
    text = render_position(g, 0, ["you", "greedy", "random"], g.legal_action_texts())
    assert "round 2 (contract 2 threes + 1 four)" in text
    assert "phase: play" in text
    assert re.search(r"P2 greedy\s+3 cards, laid down, calls 1/3, total 0", text)
    assert re.search(r"P3 random\s+7 cards, not laid down", text)
    assert "  1: P2 four [5H JK=6H 7H 8H]" in text and "  2: P2 three [KC KD JK=KH]" in text
    assert "discard top: 9D" in text
    assert "your hand (10): C: 4C QC | D: 4D 5D 8D | H: 4H QH | S: 8S 8S | JK" in text
    assert "moves:  1) " in text
