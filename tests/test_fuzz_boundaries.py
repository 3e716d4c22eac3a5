"""Issue 38 item 1: no crash from any input to a public function.

The compiled kernels trust their inputs, so every public boundary checks first and refuses with a
one-line error naming the problem (``IllegalActionError`` for action ids, a ``ValueError`` or
``TypeError`` naming the key, line or argument otherwise), leaving the state as it was.  Each
boundary has explicit cases (the ones issue 38 reported) and a bounded hypothesis fuzz; the fuzz
most likely to crash the process (``Game.from_text``) runs in a subprocess, so a segfault fails a
test instead of the suite.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as hs

from kalooki_sim.engine import layout as L
from kalooki_sim.engine.errors import IllegalActionError
from kalooki_sim.runtime.game import Game

FUZZ = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# ------------------------------------------------------------------------------------------------
# 1. action ids: Game.apply / Game.check / KalookiVecEnv.step

CLUBS_RUN = """
round: 1
active: P1
phase: play
P1: 9H 4H 9S 2C 7D | laid
P2: 7S 7C 3D
P3: 2D 3S
P4: KD KH
table: P1 [5C 6C 7C 8C]
discard: 3C 9D
"""


@lru_cache(maxsize=None)
def _clubs_game() -> Game:
    return Game.from_text(CLUBS_RUN, "caribbean")


def _snapshot(game: Game):
    la = game._loop
    return [a.copy() for a in (*game.state.arrays(), *la.sheet, *la.seating, la.ctx, *la.lane)]


def _same(before, game: Game) -> bool:
    after = _snapshot(game)
    return len(before) == len(after) and all(np.array_equal(a, b) for a, b in zip(before, after))


BAD_IDS = [2557, 4.9, 4.0, b"9", 2 ** 63, -2 ** 63, 2 ** 70, float("nan"), float("inf"), None, True, False,
           np.bool_(True), -1, L.N_ACTIONS, np.int64(-5), np.uint64(2 ** 63), np.float64(4.0), [4], (4,),
           np.array([4]), 1j, object()]


@pytest.mark.parametrize("bad", BAD_IDS, ids=lambda x: "object()" if type(x) is object else repr(x))
def test_bad_action_ids_are_illegal_actions_and_change_nothing(bad):
    game = _clubs_game().copy()
    if isinstance(bad, (int, np.integer)) and not isinstance(bad, (bool, np.bool_)) and 0 <= int(bad) < L.N_ACTIONS:
        assert game.check(bad) != 0                     # an id, illegal in this position
    else:
        with pytest.raises(IllegalActionError):
            game.check(bad)
    before = _snapshot(game)
    with pytest.raises(IllegalActionError) as e:
        game.apply(bad)
    assert "\n" not in str(e.value)
    assert _same(before, game)
    assert game.apply("discard 7D") is game             # and the game goes on


@pytest.mark.parametrize("bad", BAD_IDS + ["discard 7D"], ids=lambda x: "object()" if type(x) is object else repr(x))
def test_action_text_names_every_id_and_refuses_the_rest(bad):
    game = _clubs_game()
    if isinstance(bad, (int, np.integer)) and not isinstance(bad, (bool, np.bool_)) and 0 <= int(bad) < L.N_ACTIONS:
        assert game.action_text(bad)
    else:
        with pytest.raises(IllegalActionError):
            game.action_text(bad)


def test_action_text_of_every_id_in_played_positions():
    """Every id has a text in every position (its own, or "action N" where the position gives it
    no meaning): a menu or a log never fails on an id."""
    for variant in ("caribbean", "k40"):
        g = Game(variant, 4, seed=3, agents=["greedy"] * 4)
        for step in range(300):
            if g.terminal:
                break
            if step % 25 == 0:
                texts = [g.action_text(a) for a in range(L.N_ACTIONS)]
                assert all(isinstance(t, str) and t for t in texts)
                assert all(texts[a] != f"action {a}" for a in g.legal_actions())
            g.apply(g.agent_action())


def test_text_and_integer_ids_still_work():
    game = _clubs_game().copy()
    a = game.action_id("discard 7D")
    assert game.check(np.int16(a)) == 0 and game.check("discard 7D") == 0
    game.apply(np.int64(a))
    assert game.history[-1][1] == "discard 7D"


@given(action=hs.one_of(hs.integers(-2 ** 70, 2 ** 70), hs.integers(0, L.N_ACTIONS - 1),
                        hs.floats(allow_nan=True, allow_infinity=True), hs.binary(max_size=4),
                        hs.text(max_size=12), hs.none(), hs.booleans()))
@FUZZ
def test_fuzz_game_apply(action):
    game = _clubs_game().copy()
    before = _snapshot(game)
    try:
        game.apply(action)
    except IllegalActionError as e:
        assert "\n" not in str(e)
        assert _same(before, game)
    else:
        assert isinstance(action, (str, int)) and not isinstance(action, bool)


@lru_cache(maxsize=None)
def _env():
    from kalooki_sim.runtime.env import KalookiVecEnv
    env = KalookiVecEnv("caribbean", 4, batch=3, seed=5)
    env.reset()
    return env


def _env_same(before, env) -> bool:
    after = env.state_dict()
    return all(np.array_equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize("bad", [np.array([0.0, 1.0, 2.0]), [4.9, 4, 4], [b"9", b"9", b"9"], [2 ** 63] * 3,
                                 [2 ** 70] * 3, [None] * 3, [True] * 3, np.array([2 ** 63] * 3, dtype=np.uint64),
                                 [-1, 0, 0], "abc", None, [[1, 2], [3]]], ids=repr)
def test_env_step_refuses_bad_action_arrays_whole(bad):
    env = _env()
    before = env.state_dict()
    with pytest.raises(IllegalActionError) as e:
        env.step(bad)
    assert "\n" not in str(e.value)
    assert _env_same(before, env)


def test_env_step_checks_every_row_before_any():
    env = _env()
    legal = env.random_actions(np.random.default_rng(0))
    before = env.state_dict()
    for row in range(env.batch):
        bad = legal.copy()
        bad[row] = int(np.flatnonzero(~env.mask[row])[0])
        with pytest.raises(IllegalActionError, match=f"in row {row} "):
            env.step(bad)
        assert _env_same(before, env)
    with pytest.raises(ValueError, match="one action per row"):
        env.step(legal[:2])
    assert _env_same(before, env)


@given(actions=hs.lists(hs.one_of(hs.integers(-2 ** 64, 2 ** 64), hs.floats(), hs.none()), min_size=0, max_size=4))
@FUZZ
def test_fuzz_env_step(actions):
    env = _env()
    before = env.state_dict()
    try:
        env.step(actions)
    except (IllegalActionError, ValueError) as e:
        assert "\n" not in str(e)
        assert _env_same(before, env)
    else:                                      # legal: play it back (the env is shared)
        env.load_state_dict(before)


# ------------------------------------------------------------------------------------------------
# 2. Card and the meld functions' inputs; 3. oversized hands

from kalooki_sim.core.cards import Card, parse_cards  # noqa: E402
from kalooki_sim.melds import api as melds_api  # noqa: E402
from kalooki_sim.melds.api import (  # noqa: E402,E501
    best_lay_down, is_legal_meld, max_hand_size, meets_contract, meld_value, opening_value,
)


@pytest.mark.parametrize("args", [(-1,), (53,), (52, 2 ** 70), (52, 52), (52, -2), (50, 3), (0, 0), (2 ** 70,),
                                  (True,), (52, True), (1.0,), ("AH",), (None,)], ids=repr)
def test_card_refuses_what_is_not_a_card(args):
    with pytest.raises((ValueError, TypeError)) as e:
        Card(*args)
    assert "\n" not in str(e.value)


def test_card_accepts_cards():
    assert Card(np.int64(5)) == Card(5) == (5, -1)
    assert Card(52, 31).as_type == 31 and Card(52).as_type == -1 and str(Card(52, 31)) == "JK=6H"


def test_card_minus_one_is_not_the_king_of_spades():
    with pytest.raises(ValueError):
        is_legal_meld("k40", [Card(-1), Card(50), Card(49)])
    # a tuple built around the constructor is checked again at the boundary
    sneaky = tuple.__new__(Card, (-1, -1))
    with pytest.raises(ValueError, match="card type -1"):
        is_legal_meld("k40", [sneaky, Card(50), Card(49)])
    with pytest.raises(ValueError, match="card type -1"):
        best_lay_down("k40", [sneaky] + parse_cards("QS KS AS 5H 5D 5C"))


@pytest.mark.parametrize("call", [
    lambda: is_legal_meld("k40", None), lambda: is_legal_meld("k40", 5), lambda: is_legal_meld("k40", b"AH 2H 3H"),
    lambda: is_legal_meld("k40", "AH 2H 3H", kind=["run"]), lambda: is_legal_meld("k40", "AH 2H 3H", kind="runs"),
    lambda: is_legal_meld("k40", [True, 1, 2]), lambda: is_legal_meld("k40", [1.0, 2, 3]),
    lambda: meld_value("k40", "AH 2H 9C"), lambda: opening_value("k40", 7), lambda: opening_value("k40", None),
    lambda: meets_contract("caribbean", 1.5, "[AH AD AS]"), lambda: meets_contract("caribbean", 99, "[AH AD AS]"),
    lambda: meets_contract("caribbean", None, "[AH AD AS]"), lambda: meets_contract("k40", 1, "[AH AD AS]"),
    lambda: best_lay_down("caribbean", "AH 2H 3H"), lambda: best_lay_down("caribbean", "AH 2H 3H", 1.0),
    lambda: best_lay_down("caribbean", "AH 2H 3H", 0), lambda: best_lay_down("caribbean", "AH 2H 3H", 2 ** 70),
    lambda: best_lay_down("k40", "AH AH AH"), lambda: best_lay_down("k40", 12),
], ids=range(20))
def test_meld_functions_refuse_bad_inputs(call):
    with pytest.raises((ValueError, TypeError)) as e:
        call()
    assert "\n" not in str(e.value)


def test_melds_longer_than_any_meld_or_deck_are_illegal_not_slow():
    assert not is_legal_meld("k40", ["AH"] * 500)
    assert not is_legal_meld("k40", ["JK"] * 500)
    assert not is_legal_meld("caribbean", "AH AH AH AD AD AD AC AC AC AS AS AS JK JK JK JK JK")


@pytest.mark.parametrize("preset", ["caribbean", "k40", "american", "k51", "na15", "k101"])
def test_oversized_hands_are_refused_naming_the_bound(preset):
    cap = max_hand_size(preset)
    assert 15 <= cap <= 40
    deck = [t for t in range(52) for _ in range(2)] + [52] * 2
    with pytest.raises(ValueError, match=f"no .* player holds more than {cap}"):
        best_lay_down(preset, deck[:cap + 1], 1)
    with pytest.raises(ValueError, match=f"more than {cap}"):
        best_lay_down(preset, deck[:60], 1)


@given(preset=hs.sampled_from(["caribbean", "k40"]), seed=hs.integers(0, 2 ** 32 - 1), extra=hs.integers(-8, 3))
@FUZZ
def test_fuzz_best_lay_down_sizes(preset, seed, extra):
    """Any hand up to the bound is answered (quickly); past it, refused."""
    rules = melds_api._rules(preset)
    n = max_hand_size(rules) + extra
    deck = [t for t in range(52) for _ in range(rules.n_decks)] + [52] * rules.n_jokers
    hand = list(np.random.default_rng(seed).choice(deck, n, replace=False))
    if extra > 0:
        with pytest.raises(ValueError, match="holds more than"):
            best_lay_down(rules, hand, 1)
    else:
        best_lay_down(rules, hand, 1)


@given(tokens=hs.lists(hs.one_of(hs.integers(-3, 60), hs.sampled_from(["AH", "JK", "JK=5H", "KS", "JK=JK", "1H", ""]),
                                 hs.integers(0, 51).map(Card), hs.none(), hs.floats()), max_size=8),
       kind=hs.sampled_from([None, "set", "run", "bogus"]))
@FUZZ
def test_fuzz_is_legal_meld(tokens, kind):
    try:
        is_legal_meld("k40", tokens, kind)
    except (ValueError, TypeError) as e:
        assert "\n" not in str(e)


# ------------------------------------------------------------------------------------------------
# 4. rule knobs

import dataclasses  # noqa: E402

from kalooki_sim.core.rules import Rules, RulesError, load_rules  # noqa: E402

KNOBS = [f.name for f in dataclasses.fields(Rules) if f.name != "name"]


@pytest.mark.parametrize("kw, key", [
    (dict(meld_value=[-5] * 15), "meld_value"), (dict(meld_value=[2 ** 62] * 15), "meld_value"),
    (dict(meld_value=["x"] * 15), "meld_value"), (dict(meld_value=[float("nan")] * 15), "meld_value"),
    (dict(meld_value=[5] * 14), "meld_value"), (dict(penalty_value=[5] * 52), "penalty_value"),
    (dict(penalty_value=[float("inf")] * 53), "penalty_value"), (dict(contracts=[[2 ** 62, 1]]), "contracts"),
    (dict(hand_size=2 ** 70), "hand_size"), (dict(n_jokers=float("nan")), "n_jokers"),
    (dict(players_min="2"), "players_min"), (dict(ace_high=1), "ace_high"), (dict(joker_swap=None), "joker_swap"),
    (dict(stake_ante=10 ** 9), "stake_ante"), (dict(opening_min_points=-1), "opening_min_points"),
])
def test_bad_knobs_are_refused_naming_the_key(kw, key):
    with pytest.raises(RulesError, match=key) as e:
        load_rules("k40", **kw)
    assert e.value.key == key and "\n" not in str(e.value)


def test_bad_variant_arguments():
    for call in (lambda: load_rules(None), lambda: load_rules(5), lambda: load_rules("k40", overlays=[5]),
                 lambda: load_rules("k40", overlays=5), lambda: load_rules("k40", bogus=1)):
        with pytest.raises(RulesError):
            call()


_ANY_VALUE = hs.one_of(hs.none(), hs.booleans(), hs.integers(-2 ** 70, 2 ** 70), hs.integers(-3, 40),
                       hs.floats(), hs.text(max_size=6), hs.lists(hs.integers(-2 ** 64, 2 ** 64), max_size=16),
                       hs.lists(hs.integers(0, 30), min_size=15, max_size=15),
                       hs.lists(hs.lists(hs.integers(-1, 40), max_size=3), max_size=4),
                       hs.dictionaries(hs.sampled_from(["A", "K", "JK", "2", "x", "3"]), hs.integers(-5, 2000)))


@given(knob=hs.sampled_from(KNOBS), value=_ANY_VALUE, preset=hs.sampled_from(["k40", "caribbean"]))
@FUZZ
def test_fuzz_rule_knobs(knob, value, preset):
    try:
        rules = load_rules(preset, **{knob: value})
    except RulesError as e:
        assert e.key is not None and "\n" not in str(e)
        return
    from kalooki_sim.core import rulevec
    vec = rules.to_vector()[:rulevec.R_WINDOWS]     # (the run tables after it are bit masks)
    assert np.abs(vec).max() <= 1_000_000          # the int64 rules vector keeps its headroom


# ------------------------------------------------------------------------------------------------
# 5. env seeds and state dicts: check first, change after


@pytest.mark.parametrize("seed", [2 ** 63, -2 ** 63 - 1, 2 ** 70, 1.5, float("nan"), "7", True, [1]], ids=repr)
def test_env_reset_refuses_a_bad_seed_and_keeps_the_old_one(seed):
    env = _env()
    before = env.state_dict()
    with pytest.raises((ValueError, TypeError), match="seed") as e:
        env.reset(seed)
    assert "\n" not in str(e.value)
    assert env.seed == 5 and _env_same(before, env)


def test_env_constructor_refuses_bad_seeds():
    from kalooki_sim.runtime.env import KalookiVecEnv
    for kw in (dict(seed=2 ** 63), dict(seed=1.5), dict(first_game_id=-1), dict(first_game_id=2 ** 70)):
        with pytest.raises((ValueError, TypeError)):
            KalookiVecEnv("caribbean", 4, batch=2, **kw)


def test_env_load_state_dict_checks_everything_first():
    env = _env()
    good = env.state_dict()
    keys = sorted(good)
    for broken in ({k: v for k, v in good.items() if k != keys[-1]},                     # a key missing (the last)
                   {k: v for k, v in good.items() if k != "meta.seed"},
                   good | {keys[-1]: np.zeros((1,))},                                     # wrong shape
                   good | {keys[-1]: np.full(np.shape(good[keys[-1]]), "x")},             # wrong kind
                   good | {"meta.seed": np.float64(2.5)}, good | {"meta.ready": None}):
        mutated = {k: (v + 1 if isinstance(v, np.ndarray) and v.dtype.kind in "iuf" and k in broken else v)
                   for k, v in broken.items()}
        with pytest.raises((ValueError, TypeError)) as e:
            env.load_state_dict(mutated)
        assert "\n" not in str(e.value)
        assert _env_same(good, env)                  # nothing was overwritten
    with pytest.raises(TypeError):
        env.load_state_dict([1, 2])
    env.load_state_dict(good)
    assert _env_same(good, env)


@given(seed=hs.one_of(hs.integers(-2 ** 70, 2 ** 70), hs.floats(), hs.text(max_size=3), hs.none()))
@FUZZ
def test_fuzz_env_reset_seed(seed):
    env = _env()
    before = env.state_dict()
    try:
        env.reset(seed)
    except (ValueError, TypeError) as e:
        assert "\n" not in str(e)
        assert _env_same(before, env)
    finally:
        env.load_state_dict(before)


# ------------------------------------------------------------------------------------------------
# 6. strategy parameters

from kalooki_sim.agents.base import PARAM_BOUNDS, check_params, params_matrix  # noqa: E402
from kalooki_sim.runtime.strategies import StrategyError, _from_toml  # noqa: E402


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 1e308, 101.0])
def test_strategy_parameters_outside_their_bounds_are_refused(value):
    row = [0.0, 1.0, 1.0, 0.5]
    row[0] = value                                   # epsilon: 0..0.5
    with pytest.raises(ValueError, match="epsilon|finite") as e:
        params_matrix(["greedy"] * 4, row)
    assert "\n" not in str(e.value)
    with pytest.raises(ValueError):
        Game("caribbean", 4, agents=["greedy"] * 4, params=[row] * 4)
    with pytest.raises(ValueError):
        _clubs_game().with_agent(0, "greedy", row)
    with pytest.raises(StrategyError, match="epsilon|finite"):
        _from_toml("x", f'agent = "greedy"\n[params]\nepsilon = {value!r}'.replace("nan", "nan").replace(
            "inf", "inf"), "x.toml")


def test_strategy_parameters_in_bounds_pass_and_zero_is_zero():
    params_matrix(["expert"] * 4, [hi for _, hi in PARAM_BOUNDS[2]])
    pm = params_matrix(["greedy", "random"], [[0.0, 0.0, 0.0, 0.0], [7.0, 7.0, 7.0, 7.0]])   # random reads none
    assert pm[0].tolist() == [0.0, 0.0, 0.0, 0.0]
    with pytest.raises(ValueError, match="epsilon = -1.0 is outside 0.0"):
        params_matrix(["greedy"], [-1.0, 1.0, 1.0, 0.5])               # no value means "the default"


def test_env_compiled_actions_params_checked():
    env = _env()
    with pytest.raises(ValueError, match="finite"):
        env.compiled_actions("greedy", [float("nan"), 1.0, 1.0, 0.5])


@given(row=hs.lists(hs.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=15),
       agent=hs.sampled_from(["greedy", "expert", "random"]))
@FUZZ
def test_fuzz_strategy_parameters(row, agent):
    try:
        pm = params_matrix([agent] * 2, row)
    except ValueError as e:
        assert "\n" not in str(e)
    else:
        assert np.isfinite(pm).all()
        check_params(2 if agent == "expert" else 1 if agent == "greedy" else 0, pm)


# ------------------------------------------------------------------------------------------------
# 7. Game.from_text

import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402

BAD_POSITIONS = {
    "active 50": "active: 50\nP1: AS\nP2: KD", "active P99": "active: P99\nP1: AS\nP2: KD",
    "to_act P50": "phase: call\nto_act: P50\nP1: AS\nP2: KD\ndiscard: 3C",
    "hand negative": "hand: -99999999999\nP1: AS\nP2: KD",
    "players 3 active P7": "players: 3\nactive: P7\nP1: AS\nP2: KD",
    "caller P9": "phase: allow\ncaller: P9\nP1: AS\nP2: KD\ndiscard: 3C",
    "P0": "P0: AS\nP1: KD", "unknown key": "phse: play\nP1: AS\nP2: KD",
    "seat P999": "P999: AS", "calls huge": "P1: AS | calls=99999999999999999999\nP2: KD",
    "turn huge": "turn: 99999999999\nP1: AS", "seed text": "seed: x\nP1: AS", "freed": "freed: 9\nP1: AS",
    "owner P9": "P1: AS\ntable: P9 [5H 6H 7H 8H]",
}
_PLAYING = "round: 1\nactive: P1\nphase: play\nP1: 7C 8D 9H | laid\nP2: KD 2S\ntable: P1 [5C 6C JK 8C]\ndiscard: 3C"
BAD_POSITIONS.update({       # what the active player owes this turn must fit the position
    "taken in the draw phase": _PLAYING.replace("phase: play", "phase: draw") + "\ntaken: 9H",
    "taken_must without taken": _PLAYING + "\ntaken_must: yes",
    "taken_must card not held": _PLAYING + "\ntaken: QS\ntaken_must: yes",
    "owed card not held": _PLAYING + "\nowed: QS",
    "owed before laying down": _PLAYING.replace("| laid", "").replace("\ntable: P1 [5C 6C JK 8C]", "") + "\nowed: 7C",
    "freed jokers not held": _PLAYING + "\nfreed: 1",
})


@pytest.mark.parametrize("name", sorted(BAD_POSITIONS))
def test_from_text_refuses_bad_positions_naming_the_line(name):
    with pytest.raises(ValueError) as e:
        Game.from_text(BAD_POSITIONS[name], "caribbean")
    assert "\n" not in str(e.value)


def test_from_text_accepts_what_is_owed_when_it_fits():
    g = Game.from_text(_PLAYING.replace("P1: 7C", "P1: 9C 7C") + "\ntaken: 9C\ntaken_must: yes", "caribbean")
    assert g.legal_actions() and all("9C" in g.action_text(a) for a in g.legal_actions())
    g = Game.from_text(_PLAYING.replace("P1: 7C", "P1: 9C 7C") + "\nowed: 9C\nmanipulations: 1", "caribbean")
    assert [g.action_text(a) for a in g.legal_actions()] == ["tack 9C on 1"]


def test_from_text_reads_not_laid_back_as_not_laid():
    g = _clubs_game()
    again = Game.from_text("round: 1\nactive: P1\nphase: play\n" + "\n".join(
        line for line in str(g).splitlines() if line.startswith("P")) + "\ntable: P1 [5C 6C 7C 8C]\ndiscard: 3C 9D",
        "caribbean")
    assert again.laid_down == g.laid_down == [True, False, False, False]


_FUZZ_SCRIPT = textwrap.dedent("""
    import sys, json
    from hypothesis import given, settings, strategies as hs
    from kalooki_sim.runtime.game import Game
    keys = ["round", "active", "phase", "discard", "discard_by", "stock", "players", "dealer", "hand", "last_hand",
            "to_act", "caller", "taken", "turn", "freed", "owed", "manipulations", "phse", "P1", "P2", "P3", "P7",
            "table"]
    vals = hs.one_of(hs.sampled_from(["P1", "P2", "P4", "P7", "P50", "50", "-1", "none", "0", "1", "3",
                                      "-99999999999", "99999999999", "play", "call", "allow", "draw", "AS",
                                      "2C rest", "rest", "3C 9D", "JK", "AS KD | laid", "7H | not laid",
                                      "P2 [5H 6H 7H 8H]", "[KC KD KH]", "AS | calls=7", "x"]),
                     hs.text(max_size=6))
    @settings(max_examples=int(sys.argv[1]), deadline=None, derandomize=True, database=None)
    @given(hs.lists(hs.tuples(hs.sampled_from(keys), vals), max_size=8))
    def run(pairs):
        text = "\\n".join(f"{k}: {v}" for k, v in pairs)
        try:
            g = Game.from_text(text, "caribbean")
        except (ValueError, TypeError, NotImplementedError) as e:
            assert "\\n" not in str(e), (text, e)
            return
        assert g.invariants(full_deck=False) == 0
    run()
    print("ok")
""")


def test_fuzz_from_text_in_a_subprocess():
    """Segfaults and hangs fail this test (not the suite)."""
    r = subprocess.run([sys.executable, "-c", _FUZZ_SCRIPT, "150"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), (r.returncode, r.stderr[-3000:])


# ------------------------------------------------------------------------------------------------
# 8. replay files and command lines, fuzzed in subprocesses (a crash fails the test, not the suite)

_REPLAY_FUZZ = textwrap.dedent("""
    import sys, json, copy
    from hypothesis import given, settings, strategies as hs
    from kalooki_sim.runtime.replay import ReplayError, record_games, validate_replay, render_replay
    base = record_games("k40", 3, ["greedy", "random", "greedy"], 4, [0], mode="matches", max_hands=4,
                        buy_back="never")
    base = json.loads(json.dumps(base))
    junk = hs.one_of(hs.integers(-2 ** 70, 2 ** 70), hs.floats(), hs.text(max_size=4), hs.none(), hs.booleans(),
                     hs.lists(hs.integers(-3, 60), max_size=5), hs.dictionaries(hs.text(max_size=2), hs.integers(),
                                                                                max_size=2))
    @settings(max_examples=int(sys.argv[1]), deadline=None, derandomize=True, database=None)
    @given(edits=hs.lists(hs.tuples(hs.integers(0, len(base) - 1), hs.integers(0, 40), junk), min_size=1, max_size=3),
           cut=hs.integers(0, len(base)))
    def run(edits, cut):
        events = copy.deepcopy(base)
        for i, k, v in edits:
            keys = sorted(events[i])
            events[i][keys[k % len(keys)]] = v
        events = events[:cut] if cut < len(base) // 2 else events
        lines = [json.dumps(e) for e in events]
        try:
            validate_replay(lines)
        except ReplayError as e:
            assert "\\n" not in str(e), e
        try:
            render_replay(lines)       # people may look at a damaged file: an error, never a crash
        except (ReplayError, KeyError, TypeError, ValueError, IndexError, AttributeError):
            pass
    run()
    print("ok")
""")


def test_fuzz_replay_files_in_a_subprocess():
    """Mutated K40 match replays (every event, any field, any JSON value; cut short) are refused
    with a one-line ``ReplayError`` or accepted, never crash."""
    r = subprocess.run([sys.executable, "-c", _REPLAY_FUZZ, "120"], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), (r.returncode, r.stderr[-3000:])


_CLI_FUZZ = textwrap.dedent("""
    import sys, os, tempfile, contextlib, io
    from hypothesis import given, settings, strategies as hs
    from kalooki_sim.cli import main
    os.chdir(tempfile.mkdtemp())
    values = hs.sampled_from(["-1", "0", "1", "2", str(2 ** 63), "1e3", "nan", "", "x", "k" * 300, "greedy,x",
                              "greedy,greedy", "caribbean", "k40", "/proc/nope/x", "sharp,,", "-0", "3.5"])
    flags = {"simulate": ["--hands", "--matches", "--players", "--agents", "--variant", "--seed", "--out",
                          "--record", "--max-hands", "--hands-per-match", "--buy-back", "--shard-size"],
             "tournament": ["--deals", "--agents", "--variant", "--seed", "--out", "--players", "--max-hands"],
             "demo": ["--hands", "--seed", "--variant"],
             "replay": ["--check"]}
    @settings(max_examples=int(sys.argv[1]), deadline=None, derandomize=True, database=None)
    @given(cmd=hs.sampled_from(sorted(flags)), data=hs.data())
    def run(cmd, data):
        args = [cmd]
        if cmd == "replay":
            args.append(data.draw(values))
        for f in data.draw(hs.lists(hs.sampled_from(flags[cmd]), max_size=4, unique=True)):
            args += [f] if f == "--check" else [f, data.draw(values)]
        if cmd in ("simulate", "tournament"):
            args.append("--quiet")
            if "--hands" not in args and "--matches" not in args and "--deals" not in args:
                args += ["--deals" if cmd == "tournament" else "--hands", "2"]
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                code = main(args)
            except SystemExit as e:                       # argparse: usage + exit 2
                code = e.code
        assert code in (0, 2), (args, code, err.getvalue()[-500:])
        assert "Traceback" not in err.getvalue(), (args, err.getvalue()[-2000:])
    run()
    print("ok")
""")


def test_fuzz_cli_arguments_in_a_subprocess():
    """Junk values for the flags of simulate, tournament, demo and replay: exit 0 or 2, no traceback."""
    r = subprocess.run([sys.executable, "-c", _CLI_FUZZ, "80"], capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), (r.returncode, r.stderr[-3000:])
