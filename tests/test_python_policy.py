"""Any Python policy from the command line: ``--agents package.module:factory`` in ``simulate``,
``tournament`` and ``play --opponents``, with one-line errors for a missing module or name, a
factory that returns no policy, and an illegal action."""

from __future__ import annotations

import io
import textwrap

import pytest

from kalooki_sim.cli import main
from kalooki_sim.runtime.play import PlaySession
from kalooki_sim.runtime.strategies import StrategyError, learned_policy, load_strategy

MODULE = textwrap.dedent('''
    import numpy as np

    class FirstLegal:
        """Plays the lowest legal action id."""
        name = "first-legal"

        def act(self, obs, legal, rng):
            return np.argmax(legal, axis=1)

    def with_rules(rules):
        """A factory that takes the rules."""
        p = FirstLegal()
        p.variant = rules.name
        return p

    def not_a_policy():
        return 42

    class Cheater:
        name = "cheater"

        def act(self, obs, legal, rng):
            return np.argmin(legal, axis=1)      # an illegal action (the first id that is not legal)

    ready = FirstLegal()
''')


@pytest.fixture()
def mod(tmp_path, monkeypatch):
    (tmp_path / "my_policies.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return "my_policies"


def test_a_factory_is_a_strategy(mod):
    from kalooki_sim import load_rules

    s = load_strategy(f"{mod}:FirstLegal")
    assert s.learned and s.factory == f"{mod}:FirstLegal" and s.agent == "python"
    assert s.description == "Plays the lowest legal action id."
    pol = learned_policy(s, load_rules("k40"))
    assert pol.name == "first-legal"
    assert learned_policy(f"{mod}:with_rules", load_rules("k40")).variant == load_rules("k40").name
    assert learned_policy(f"{mod}:ready", load_rules("k40")).name == "first-legal"     # an object itself


def test_simulate_seats_it(mod, tmp_path, capsys):
    rc = main(["simulate", "--agents", f"{mod}:FirstLegal,greedy,random,greedy", "--hands", "6", "--out",
               str(tmp_path / "sim"), "--quiet"])
    assert rc == 0
    import pandas as pd

    hands = pd.concat(pd.read_parquet(p) for p in (tmp_path / "sim" / "hands").glob("*.parquet"))
    assert (hands.loc[hands.seat == 0, "policy_id"] == -1).all() and len(hands) == 24


def test_tournament_seats_it(mod, tmp_path, capsys):
    rc = main(["tournament", "--agents", f"{mod}:with_rules,greedy,random,random", "--deals", "6", "--out",
               str(tmp_path / "t"), "--quiet"])
    assert rc == 0
    assert f"{mod}:with_rules" in capsys.readouterr().out


def test_play_seats_it_as_an_opponent(mod):
    out = io.StringIO()
    PlaySession("caribbean", [f"{mod}:FirstLegal", "greedy"], seat=0, seed=1, hands=1,
                input=io.StringIO("1\n" * 600), output=out).run()
    assert "game over" in out.getvalue()


@pytest.mark.parametrize("spec,msg", [
    ("no_such_module_xyz:Make", "no module named 'no_such_module_xyz'"),
    ("my_policies:Missing", "module my_policies has no 'Missing'"),
])
def test_unknown_module_or_name_fails_before_any_work(mod, tmp_path, capsys, spec, msg):
    rc = main(["tournament", "--agents", f"{spec},greedy", "--deals", "4", "--out", str(tmp_path / "x"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and msg in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()
    with pytest.raises(StrategyError, match=msg):
        load_strategy(spec)


def test_not_a_policy_and_wrong_action_are_named(mod, tmp_path, capsys):
    rc = main(["simulate", "--agents", f"{mod}:not_a_policy,greedy,greedy,greedy", "--hands", "2", "--out",
               str(tmp_path / "a"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "returned int, not a policy" in err
    rc = main(["simulate", "--agents", f"{mod}:Cheater,greedy,greedy,greedy", "--hands", "2", "--out",
               str(tmp_path / "b"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "policy cheater: action" in err and "is not legal" in err


def test_play_schedule_is_play_policies_per_episode_and_batch_free():
    """One lockstep batch of scheduled episodes (a tournament's learned deals) plays, episode by
    episode, the games play_policies plays one seating at a time (identity seating: the same
    streams), whatever the batch size."""
    import numpy as np

    from kalooki_sim import load_rules
    from kalooki_sim.runtime.policy_play import play_policies, play_schedule

    class FirstLegal:
        name = "first-legal"

        def act(self, obs, legal, rng):
            return np.argmax(legal, axis=1)

    rules = load_rules("caribbean")
    pol = FirstLegal()
    entrants = [pol, "greedy", "random", "greedy-picky"]
    games = np.array([5, 9, 9, 12, 3], dtype=np.int64)
    seatings = np.array([[0, 1, 2, 3], [0, 1, 2, 3], [1, 0, 3, 2], [0, 1, 2, 3], [2, 3, 0, 1]], dtype=np.int64)
    big = play_schedule(rules, 4, entrants, seatings, games, seed=7)
    small = play_schedule(rules, 4, entrants, seatings, games, seed=7, batch=2)
    for k in big:
        np.testing.assert_array_equal(big[k], small[k], err_msg=k)
    for e in (0, 1, 3):                              # identity seating: play_policies' game
        one = play_policies(rules, 4, entrants, 1, seed=7, first_game_id=int(games[e]))
        mine = big["batch_row"] == e
        np.testing.assert_array_equal(big["penalty"][mine], one["penalty"])
        np.testing.assert_array_equal(big["game_id"][mine], one["game_id"])
    assert (big["policy_id"][big["batch_row"] == 2][1] == -1)          # entrant 0 sits in seat 1 there
