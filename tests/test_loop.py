"""The one turn loop (kalooki_sim.runtime.loop): per-game seating, seats played from Python, and the
closed loop and the loop stepped from Python playing the same games."""

from __future__ import annotations

import numpy as np
import pytest

from kalooki_sim import load_rules
from kalooki_sim.agents.base import EXTERNAL, GREEDY, RANDOM, params_matrix
from kalooki_sim.agents.compiled import random_action
from kalooki_sim.core.rng import rng_key
from kalooki_sim.engine import layout as L
from kalooki_sim.engine.context import CX_STATUS
from kalooki_sim.engine.core import STREAM_POLICY_BASE
from kalooki_sim.runtime import loop
from kalooki_sim.runtime.game import Game
from kalooki_sim.runtime.rollout import match_length, max_steps_per_hand, seating_table, simulate

PRESETS = ("caribbean", "k40", "k51", "k101", "na15", "american")
LINEUP = [GREEDY, RANDOM, GREEDY, RANDOM]


def _rows_of(out, game_ids):
    """The rows of the given game ids, as a dict of columns."""
    keep = np.isin(out["game_id"], game_ids)
    return {k: v[keep] for k, v in out.items()}


def _same(a: dict, b: dict):
    assert set(a) == set(b)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


@pytest.mark.parametrize("preset", ["caribbean", "k40"])
def test_per_game_seating_plays_each_rotation_as_its_own_lineup(preset):
    """One batch holding every rotation of a lineup (game g: rotation g % 4) gives exactly the games
    that a batch with that rotation fixed gives for the same game ids."""
    r = load_rules(preset)
    n_games = 24
    eps = params_matrix(LINEUP)
    eps[0, 0] = 0.3                                  # seat 0's greedy explores: parameters rotate too
    table = np.array([np.roll(LINEUP, g % 4) for g in range(n_games)])
    params = np.array([np.roll(eps, g % 4, axis=0) for g in range(n_games)])
    mixed = simulate(r, 4, table, params, n_games, 3)
    for rot in range(4):
        fixed = simulate(r, 4, list(np.roll(LINEUP, rot)), np.roll(eps, rot, axis=0), n_games, 3)
        ids = np.arange(rot, n_games, 4)
        _same(_rows_of(mixed, ids), _rows_of(fixed, ids))
    assert (mixed["policy_id"].reshape(n_games, 4) == table).all()


def test_per_game_seating_errors():
    r = load_rules("caribbean")
    with pytest.raises(ValueError, match="3 x 4"):
        simulate(r, 4, np.zeros((2, 4), dtype=int), None, 3, 1)
    with pytest.raises(ValueError, match="unknown agent"):
        simulate(r, 4, ["greedy", "nope", "random", "random"], None, 3, 1)
    with pytest.raises(ValueError, match="external"):
        simulate(r, 4, ["greedy", "external", "random", "random"], None, 3, 1)


def _stepped(rules, n_players, seats, seed, game_id, mode):
    """One game on the loop stepped from Python: every decision the seat's compiled agent's."""
    first = game_id % rules.n_rounds if mode == "hands" else None
    n_hands = 1 if mode == "hands" else match_length(rules, "matches", None, 40)
    g = Game(rules, n_players=n_players, seed=seed, game_id=game_id, agents=seats, first_hand=first,
             n_hands=n_hands)
    steps = 0
    while not g.terminal:
        a = g.agent_action()
        assert g.legal_mask()[a], (game_id, steps, a)
        g.apply(a)
        steps += 1
    return g, steps


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("mode", ["hands", "matches"])
def test_stepped_loop_plays_the_closed_loops_games(preset, mode):
    """``Game`` driven decision by decision with ``agent_action`` ends where ``simulate`` ends:
    the same totals, hand winners and number of hands (points matches capped at 40 hands)."""
    r = load_rules(preset)
    n = 4 if preset != "na15" else 3
    seats = LINEUP[:n]
    n_games = 6 if mode == "hands" else 2
    kw = dict(mode=mode, max_hands=40) if (mode == "matches" and r.match_mode == "elimination_pool") \
        else dict(mode=mode)
    out = simulate(r, n, seats, None, n_games, 9, **kw)
    hands = out if mode == "hands" else out[0]
    for gid in range(n_games):
        g, _ = _stepped(r, n, seats, 9, gid, mode)
        rows = _rows_of(hands, [gid])
        assert g.state.gs[0, L.G_HANDS_DONE] == len(np.unique(rows["hand_no"]))
        if mode == "matches":
            m = _rows_of(out[1], [gid])
            np.testing.assert_array_equal(m["total"], g._loop.sp[0, 1, :n])   # SP_TOTAL
            assert sorted(np.flatnonzero(m["match_win_share"] > 0)) == sorted(g.winners())
        else:
            h = int(rows["hand_no"][0])
            np.testing.assert_array_equal(rows["penalty"], g.state.hscore[0, h, :n])
            assert int(g.state.hwin[0, h]) == (int(np.flatnonzero(rows["won"])[0]) if rows["won"].any() else -1)


def test_external_seat_played_from_python_is_the_compiled_seat():
    """Seat 0 external, played from Python by the compiled random agent's own function on that
    seat's stream, in a lockstep batch (``advance_rows`` / ``act_rows``): the games equal the closed
    loop's with the random agent in that seat."""
    r = load_rules("caribbean")
    rv = r.to_vector()
    B, n, seed = 12, 4, 5
    seats = [RANDOM, GREEDY, RANDOM, GREEDY]
    want = simulate(r, n, seats, None, B, seed)
    la = loop.LoopArrays(B, 4)
    out = la.outputs(B, 1, n)
    ext = np.array([EXTERNAL] + seats[1:], dtype=np.int64)
    pm = params_matrix(list(ext))
    wants = np.ones(L.P_MAX, dtype=np.int64)
    for b in range(B):
        lineup = loop.Lineup(ext, pm, np.arange(n, dtype=np.int64), wants)
        loop.start(la.state.arrays(), rv, b, la.sheet, la.seating, la.ctx, lineup, -1, seed, b, b % 9, 1,
                   max_steps_per_hand(r, n), b, False, False)
    keys = [np.uint64(rng_key(seed, b, STREAM_POLICY_BASE + 0)) for b in range(B)]
    ctrs = [np.zeros(1, dtype=np.int64) for _ in range(B)]
    args = (la.state.arrays(), rv, *la.loop_arrays(), out)
    status = np.zeros(B, dtype=np.int64)
    loop.advance_rows(*args, np.arange(B, dtype=np.int64), status)
    decisions = 0
    while (status == loop.ST_WAITING).any():
        which = np.flatnonzero(status == loop.ST_WAITING).astype(np.int64)
        acts = np.zeros(len(which), dtype=np.int64)
        for k, b in enumerate(which):
            assert la.state.gs[b, L.G_TO_ACT] == 0            # only seat 0 is external
            m = la.mask[b]
            acts[k] = random_action(m, int(m.sum()), keys[b], ctrs[b])
        res = np.zeros(len(which), dtype=np.int64)
        loop.act_rows(*args, which, acts, res)
        assert (res == 0).all()
        status[which] = la.ctx[which, CX_STATUS]
        decisions += len(which)
    assert (status == loop.ST_OVER).all() and decisions > B
    got = {"penalty": out.rows[loop.R_PEN].reshape(-1), "won": out.rows[loop.R_WON].reshape(-1),
           "turns": out.rows[loop.R_TURNS].reshape(-1), "laid_down_turn": out.rows[loop.R_LAID_TURN].reshape(-1)}
    for k, v in got.items():
        np.testing.assert_array_equal(v, want[k], err_msg=k)


def test_external_illegal_action_is_refused_and_changes_nothing():
    r = load_rules("caribbean")
    g = Game(r, n_players=4, seed=1, agents=["external"] * 4)
    before = [a.copy() for a in g.state.arrays()]
    illegal = int(np.flatnonzero(~g.legal_mask())[0])
    from kalooki_sim.engine import IllegalActionError
    with pytest.raises(IllegalActionError):
        g.apply(illegal)
    for a, b in zip(before, g.state.arrays()):
        np.testing.assert_array_equal(a, b)
    assert g.agent_action() == -1                    # no compiled agent sits there


def test_seating_table_shapes():
    seats, pm = seating_table(["greedy", "random"], 3, 2)
    assert seats.shape == (3, 2) and pm.shape[:2] == (3, 2)
    seats, pm = seating_table(np.array([[1, 0], [0, 1]]), 2, 2, np.ones((2, 2, 4)))
    assert (seats == [[1, 0], [0, 1]]).all() and pm.shape == (2, 2, 4)


def test_calls_made_allowed_and_denied_are_tallied_per_caller():
    """``calls_denied`` counts each seat's denied calls and ``calls_used`` its allowed ones (the
    rules count denied calls too only with ``count_denied_calls``): the loop's rows against the
    calls and answers of the same games stepped from Python."""
    for overrides in ({}, {"count_denied_calls": True}):
        r = load_rules("caribbean", **overrides)
        out = simulate(r, 4, ["greedy"] * 4, None, 40, 21)
        denied_total = 0
        for gid in range(40):
            first = gid % r.n_rounds
            g = Game(r, n_players=4, seed=21, game_id=gid, agents=["greedy"] * 4, first_hand=first, n_hands=1)
            allowed, denied = np.zeros(4, int), np.zeros(4, int)
            while not g.terminal:
                a = g.agent_action()
                caller = int(g.state.gs[0, L.G_CALLER])
                if a == L.A_ALLOW:
                    allowed[caller] += 1
                elif a == L.A_DENY:
                    denied[caller] += 1
                g.apply(a)
            rows = _rows_of(out, [gid])
            np.testing.assert_array_equal(rows["calls_denied"], denied)
            used = allowed + (denied if overrides else 0)
            np.testing.assert_array_equal(rows["calls_used"], used)
            denied_total += denied.sum()
        assert denied_total > 0
