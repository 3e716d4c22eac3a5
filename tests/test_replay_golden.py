"""Replays (kalooki_sim.runtime.replay): golden playthroughs, record -> validate -> render, corruption.

The golden files pin whole games move by move, so any change of rules, engine or agents that
alters play shows up as a readable diff.  The record tests check the two promises of the format:
records are the simulator's games (penalties equal ``simulate``'s), and ``validate_replay``
rejects a file that is not what the engine would do, naming the line.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kalooki_sim import load_rules
from kalooki_sim.core.cards import parse_card
from kalooki_sim.engine import layout as L
from kalooki_sim.runtime.replay import FORMAT, ReplayError, read_replay, record_games, render_replay, validate_replay
from kalooki_sim.runtime.rollout import simulate
from load_script import load_script

ROOT = Path(__file__).resolve().parent.parent
GGRR = ["greedy", "greedy", "random", "random"]


def _load_make_golden():
    return load_script("scripts/make_golden.py")


make_golden = _load_make_golden()


# ------------------------------------------------------------------------------------------------
# golden playthroughs


@pytest.mark.parametrize("name", sorted(make_golden.GOLDEN))
def test_golden_playthrough(name):
    path = ROOT / "tests" / "golden" / name
    assert path.exists(), f"{path} is missing: run `python scripts/make_golden.py`"
    want = path.read_text(encoding="utf-8")
    got = make_golden.render_golden(name)
    if got != want:
        old, new = want.splitlines(), got.splitlines()
        first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
        pytest.fail(
            f"the playthrough of {name} changed (first difference at line {first + 1}:\n"
            f"  golden: {old[first] if first < len(old) else '<end>'}\n"
            f"  now:    {new[first] if first < len(new) else '<end>'})\n"
            "If rules, engine or agents changed on purpose: run `python scripts/make_golden.py`, "
            "review `git diff tests/golden/` move by move, and commit the new files with the change.",
            pytrace=False)


def test_golden_games_are_the_documented_ones():
    # hands mode, round chosen by game id: game 0 -> round 1, game 3 -> round 4
    g0 = (ROOT / "tests" / "golden" / "caribbean_seed7_game0.txt").read_text()
    g3 = (ROOT / "tests" / "golden" / "caribbean_seed11_game3.txt").read_text()
    assert "seed 7, hands mode, 4 players" in g0 and "round 1 (" in g0
    assert "seed 11, hands mode, 4 players" in g3 and "round 4 (" in g3
    for text in (g0, g3):
        assert "seats: P1 greedy, P2 greedy, P3 random, P4 random" in text


# ------------------------------------------------------------------------------------------------
# record -> validate -> render


@pytest.fixture(scope="module")
def five(tmp_path_factory):
    """Five recorded hands (seed 5, game ids 0-4), written once per module."""
    path = tmp_path_factory.mktemp("replay") / "five.jsonl"
    record_games("caribbean", 4, GGRR, 5, range(5), path=path)
    return path


def test_record_five_games_validate_and_match_simulate(five):
    events = [ev for _, ev in read_replay(five)]
    assert validate_replay(five) == {"games": 5, "hands": 5, "actions": sum(ev["type"] == "action" for ev in events)}
    headers = [ev for ev in events if ev["type"] == "game"]
    assert [h["game_id"] for h in headers] == [0, 1, 2, 3, 4]
    assert all(h["format"] == FORMAT and h["agents"] == GGRR and h["mode"] == "hands" for h in headers)
    # penalties (and the other per-hand results) are simulate's for the same game ids
    sim = simulate(load_rules("caribbean"), 4, GGRR, None, 5, 5)
    ends = [ev for ev in events if ev["type"] == "hand_end"]
    np.testing.assert_array_equal(np.array([e["penalties"] for e in ends]), sim["penalty"].reshape(5, 4))
    np.testing.assert_array_equal([e["turns"] for e in ends], sim["turns"].reshape(5, 4)[:, 0])
    np.testing.assert_array_equal([e["round"] for e in ends], sim["round"].reshape(5, 4)[:, 0])
    won = np.array([[1 if e["winner"] == p else 0 for p in range(4)] for e in ends])
    np.testing.assert_array_equal(won, sim["won"].reshape(5, 4))
    # every game: header, deal, actions, hand_end, game_end; totals = penalties in hands mode
    for h, e, end in zip(headers, ends, [ev for ev in events if ev["type"] == "game_end"]):
        assert e["round"] == h["game_id"] % 9 + 1
        assert end["totals"] == e["penalties"] and end["steps"] > 0


def test_record_returns_events_and_file_is_json_lines(five, tmp_path):
    events = record_games("caribbean", 4, GGRR, 5, [2])
    lines = five.read_text().splitlines()
    assert all(json.loads(x)["type"] for x in lines)
    block = [json.loads(x) for x in lines if json.loads(x)["game_id"] == 2]
    assert block == json.loads(json.dumps(events))
    # the same games, given as dicts or as JSON text, validate and render alike
    assert validate_replay(events)["games"] == 1
    assert render_replay(events) == render_replay([json.dumps(e) for e in events])


def test_render_shows_the_game(five):
    text = render_replay(five)
    assert text.count("=== game ") == 10                    # a header and an end line per game
    assert "--- hand 1, round 1 (contract 3 threes), dealer" in text
    assert "draw stock: " in text and "discard " in text and "went out after" in text
    assert "totals: P1 " in text
    # every action event gives one line
    n_actions = sum(ev["type"] == "action" for _, ev in read_replay(five))
    assert sum(1 for line in text.splitlines() if line[:6].strip().isdigit()) == n_actions


def test_matches_mode_and_custom_rules(tmp_path):
    # a whole match: several deals, totals and match winners checked against the engine
    path = tmp_path / "match.jsonl"
    events = record_games("caribbean", 3, ["greedy", "greedy", "random"], 1, [0], "matches", path)
    assert validate_replay(path, check_agents=True) == {
        "games": 1, "hands": 9, "actions": sum(ev["type"] == "action" for ev in events)}
    end = events[-1]
    assert end["type"] == "game_end" and end["hands"] == 9 and "winners" in end
    ends = [ev for ev in events if ev["type"] == "hand_end"]
    assert [e["hand_no"] for e in ends] == list(range(9))
    assert end["totals"] == list(np.sum([e["penalties"] for e in ends], axis=0))
    assert "winner(s) " in render_replay(path)
    # rules that are no preset are carried in the header (down and out doubles, short hands)
    rules = load_rules("caribbean").replace(down_and_out_multiplier=2, max_turns_per_hand=40)
    ev2 = record_games(rules, 4, ["greedy"] * 4, 5, range(12), path=tmp_path / "custom.jsonl")
    assert validate_replay(tmp_path / "custom.jsonl")["games"] == 12
    hand_ends = [e for e in ev2 if e["type"] == "hand_end"]
    assert {e["end"] for e in hand_ends} >= {"went_out", "turn_cap"}


# ------------------------------------------------------------------------------------------------
# corrupted files fail with a clear error


def _lines(path):
    return [json.loads(x) for x in Path(path).read_text().splitlines()]


def _write(tmp_path, events):
    p = tmp_path / "bad.jsonl"
    p.write_text("".join(json.dumps(e) + "\n" for e in events))
    return p


def _first(events, pred):
    return next(i for i, e in enumerate(events) if pred(e))


def test_corrupted_illegal_action(five, tmp_path):
    ev = _lines(five)
    i = _first(ev, lambda e: e["type"] == "action" and e["text"].startswith("discard "))
    ev[i]["action"] = L.A_DISCARD + L.JOKER                 # never legal in Caribbean
    ev[i]["text"] = "discard JK"
    with pytest.raises(ReplayError, match=rf"line {i + 1}: illegal action 'discard JK' .* by P\d: "
                                          r"(jokers may not be discarded|the player does not hold that card)"):
        validate_replay(_write(tmp_path, ev))
    # ending the turn while a discard is possible (A15/A54)
    ev = _lines(five)
    i = _first(ev, lambda e: e["type"] == "action" and e["text"].startswith("discard ") and e["hand_size"] > 0)
    ev[i]["action"], ev[i]["text"] = L.A_END_TURN, "end turn"
    with pytest.raises(ReplayError, match=rf"line {i + 1}: illegal action 'end turn'.*can only end without a discard"):
        validate_replay(_write(tmp_path, ev))


def test_corrupted_other_legal_choice(five, tmp_path):
    # a legal move other than the one played: the line itself passes, the game then diverges
    ev = _lines(five)
    i = next(i for i, e in enumerate(ev[:-1]) if e["type"] == "action" and e["text"] == "draw stock"
             and e["drawn"] != ["JK"] and ev[i + 1]["text"].startswith("discard ")
             and ev[i + 1]["text"] != f"discard {e['drawn'][0]}" and ev[i + 1]["hand_size"] > 0)
    card = ev[i]["drawn"][0]
    ev[i + 1]["action"] = L.A_DISCARD + parse_card(card).type
    ev[i + 1]["text"] = f"discard {card}"
    with pytest.raises(ReplayError, match=r"line \d+: ") as e:
        validate_replay(_write(tmp_path, ev))
    assert int(str(e.value).split()[1].rstrip(":")) > i + 2


def test_corrupted_wrong_seat_and_text(five, tmp_path):
    ev = _lines(five)
    i = _first(ev, lambda e: e["type"] == "action" and e["text"] == "draw stock")
    ev[i]["seat"] = (ev[i]["seat"] + 1) % 4
    with pytest.raises(ReplayError, match=rf"line {i + 1}: P\d acts, but it is P\d's decision"):
        validate_replay(_write(tmp_path, ev))
    ev = _lines(five)
    ev[i]["text"] = "draw discard"
    with pytest.raises(ReplayError, match=rf"line {i + 1}: action 4 is 'draw stock' here"):
        validate_replay(_write(tmp_path, ev))


@pytest.mark.parametrize("what", ["penalty", "total", "deal", "drawn"])
def test_corrupted_scores_and_cards(five, tmp_path, what):
    ev = _lines(five)
    if what == "penalty":
        i = _first(ev, lambda e: e["type"] == "hand_end")
        ev[i]["penalties"][(ev[i]["winner"] + 1) % 4] += 1
        field = "penalties"
    elif what == "total":
        i = _first(ev, lambda e: e["type"] == "game_end")
        ev[i]["totals"][0] -= 1
        field = "totals"
    elif what == "deal":
        i = _first(ev, lambda e: e["type"] == "deal")
        ev[i]["hands"][0][0] = "JK" if ev[i]["hands"][0][0] != "JK" else "2C"
        field = "hands"
    else:
        i = _first(ev, lambda e: e["type"] == "action" and e["text"] == "draw stock")
        ev[i]["drawn"] = ["AS"] if ev[i]["drawn"] != ["AS"] else ["KS"]
        field = "drawn"
    with pytest.raises(ReplayError, match=rf"line {i + 1}: \w+ field '{field}' is .*, the engine says"):
        validate_replay(_write(tmp_path, ev))


def test_a_format_2_replay_reads_its_zero_parameters_as_the_defaults(five, tmp_path):
    """Before format 3 a parameter <= 0 meant its default: such a file still checks against the
    agents (and the header is compared as written)."""
    ev = _lines(five)
    headers = [i for i, e in enumerate(ev) if e["type"] == "game"]
    old = [dict(e) for e in ev]
    for i in headers:
        assert old[i]["params"][0][1:] == [1.0, 1.0, 0.5]          # greedy's defaults, written out
        old[i] = dict(old[i], format=2, params=[[0.0, 0.0, -1.0, 0.0]] * 2 + old[i]["params"][2:])
    assert validate_replay(_write(tmp_path, old), check_agents=True)["games"] == 5


def test_corrupted_structure(five, tmp_path):
    ev = _lines(five)
    with pytest.raises(ReplayError, match="ends early"):
        validate_replay(_write(tmp_path, ev[:-1]))
    bad = [dict(ev[0], format=FORMAT + 1)] + ev[1:]
    with pytest.raises(ReplayError, match=f"line 1: replay format {FORMAT + 1}"):
        validate_replay(_write(tmp_path, bad))
    bad = [dict(ev[0], rules_digest="0" * 16)] + ev[1:]
    with pytest.raises(ReplayError, match="line 1: rules digest"):
        validate_replay(_write(tmp_path, bad))
    p = tmp_path / "junk.jsonl"
    p.write_text(five.read_text() + "{not json\n")
    with pytest.raises(ReplayError, match=r"line \d+: not a JSON object"):
        validate_replay(p)
    with pytest.raises(ReplayError, match="no games"):
        validate_replay([])
