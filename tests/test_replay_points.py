"""Replays of points-variant matches (kalooki_sim.runtime.replay, docs/replay-format.md format 2).

A K40 match to elimination reseats the players still in after every elimination; the file numbers
everybody by real player (``null`` for a player not dealt in) and carries the score sheet, so the
recording must agree with ``simulate`` hand by hand (the recorder's drift check) and with the
engine on validation, and a changed sheet or buy-back choice must be caught.
"""

import json

import numpy as np
import pytest

from kalooki_sim.core.rules import load_rules
from kalooki_sim.runtime.replay import FORMAT, ReplayError, record_games, render_replay, validate_replay
from kalooki_sim.runtime.rollout import simulate

LINEUP = ["greedy", "greedy", "random", "greedy"]


@pytest.fixture(scope="module")
def k40():
    """A K40 match in which nobody buys back: two players are eliminated before the end."""
    return record_games("k40", 4, LINEUP, 3, [0], mode="matches", buy_back="never", max_hands=40)


def _of(events, typ):
    return [e for e in events if e["type"] == typ]


def test_elimination_match_reseats_by_real_player(k40):
    assert validate_replay(k40, check_agents=True)["hands"] == len(_of(k40, "hand_end"))
    hdr = k40[0]
    assert hdr["format"] == FORMAT and hdr["buy_back"] == [False] * 4 and hdr["hands"] == 40
    deals, ends = _of(k40, "deal"), _of(k40, "hand_end")
    out_before = set()
    for d, e in zip(deals, ends):
        dealt = {p for p, h in enumerate(d["hands"]) if h is not None}
        assert dealt == set(range(4)) - out_before                 # everybody still in is dealt in
        assert {p for p, x in enumerate(e["penalties"]) if x is not None} == dealt
        acts = [a for a in _of(k40, "action") if a["hand_no"] == d["hand_no"]]
        assert {a["seat"] for a in acts} <= dealt and d["dealer"] in dealt
        out_before |= {p for p, st in enumerate(e["sheet"]["status"]) if st not in ("in", "bought_back")}
    assert len(out_before) == 3 and any(h is None for h in deals[-1]["hands"])
    end = k40[-1]
    assert end["finished"] and end["winners"] == [p for p in range(4) if p not in out_before]
    assert end["eliminated"] == [p in out_before for p in range(4)]


def test_sheet_agrees_with_simulate_and_adds_up(k40):
    hands, matches = simulate(load_rules("k40"), 4, LINEUP, None, 1, 3, mode="matches", max_hands=40,
                              buy_back="never")
    ends = _of(k40, "hand_end")
    for e in ends:
        rows = np.flatnonzero(hands["hand_no"] == e["hand_no"])
        assert [e["sheet"]["payment"][p] for p in hands["seat"][rows]] == list(hands["payment"][rows])
        assert sum(e["sheet"]["payment"]) == 0                     # units only change hands
    units = np.cumsum([e["sheet"]["payment"] for e in ends], axis=0)
    assert list(units[-1]) == k40[-1]["units"] == list(matches["units"])
    assert k40[-1]["money"] == list(matches["money"])
    assert k40[-1]["totals"] == list(matches["total"])


@pytest.mark.parametrize("variant", ["na15", "american"])
def test_per_hand_points_matches(variant):
    events = record_games(variant, 3, ["greedy", "random", "greedy"], 2, [1], mode="matches", hands_per_game=3)
    assert validate_replay(events)["hands"] == 3
    assert "buy_back" not in events[0]
    assert all(None not in d["hands"] for d in _of(events, "deal"))
    text = render_replay(events)
    assert "units: P1 " in text and "; money P1 " in text


def test_corrupted_sheet_and_buy_back_choice(k40):
    lines = [json.loads(json.dumps(e)) for e in k40]
    i = next(k for k, e in enumerate(lines) if e["type"] == "hand_end")
    bad = [dict(e) for e in lines]
    bad[i] = dict(bad[i], sheet=dict(bad[i]["sheet"], units=[u + 1 for u in bad[i]["sheet"]["units"]]))
    with pytest.raises(ReplayError, match=rf"line {i + 1}: hand_end field 'sheet'"):
        validate_replay(bad)
    # had the eliminated players bought back, the next deal would have dealt them in
    bought = [dict(lines[0], buy_back=[True] * 4)] + lines[1:]
    with pytest.raises(ReplayError, match="field 'hands'|field 'sheet'"):
        validate_replay(bought)
    for hdr, msg in ((dict(lines[0], buy_back=[True, False]), "'buy_back' must hold one true/false per player"),
                     ({k: v for k, v in lines[0].items() if k != "buy_back"}, "'buy_back' belongs in"),
                     (dict(lines[0], hands=0), "'hands' must be an integer")):
        with pytest.raises(ReplayError, match=msg):
            validate_replay([hdr] + lines[1:])


def test_render_names_the_players_out(k40):
    text = render_replay(k40)
    assert "(out of the match)" in text and "eliminated: P" in text
    assert "money P1 " in text and "winner(s) P" in text
