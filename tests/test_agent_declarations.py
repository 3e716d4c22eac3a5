"""The compiled agents' declarations (agents/declare.py, agents/registry.py) and the tables, rows
and docs that follow from them (agents/base.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kalooki_sim import load_rules
from kalooki_sim.agents.base import (
    EXPERT, GREEDY, N_PARAMS, PARAM_BOUNDS, PARAM_NAMES, POLICY_NAMES, RANDOM, check_params, default_params,
    describe_agents, fill_params, params_matrix,
)
from kalooki_sim.agents.declare import MAX_AGENTS, MIN_MEMORY, CompiledAgent, Param, param_index
from kalooki_sim.agents.dispatch import KNOWN_LEN
from kalooki_sim.agents.registry import AGENT_MODULES, AGENTS
from kalooki_sim.runtime.rollout import seating_table, simulate

ROOT = Path(__file__).resolve().parents[1]


def _kernel(*args):
    return -1


# ------------------------------------------------------------------------------------------------
# declarations refuse what dispatch and the tables could not use


@pytest.mark.parametrize("kw", [dict(name="1x"), dict(default=-1.0), dict(bounds=(2.0, 1.0)),
                                dict(bounds=(0.0, float("inf"))), dict(default=float("nan"))])
def test_a_parameter_needs_a_name_finite_bounds_and_a_default_in_them(kw):
    with pytest.raises(ValueError, match="parameter"):
        Param(**{**dict(name="x", default=0.5, bounds=(0.0, 1.0)), **kw})


def test_an_agent_needs_a_slot_the_legality_cache_and_distinct_parameter_names():
    p = Param("x", 0.0, (0.0, 1.0))
    with pytest.raises(ValueError, match="slots"):
        CompiledAgent("a", MAX_AGENTS, _kernel)
    with pytest.raises(ValueError, match="legality cache"):
        CompiledAgent("a", 3, _kernel, memory=MIN_MEMORY - 1)
    with pytest.raises(ValueError, match="repeat"):
        CompiledAgent("a", 3, _kernel, (p, p))
    with pytest.raises(ValueError, match="driven agent is not in the loop"):
        CompiledAgent("a", 3, _kernel, hot=True, driven=True)
    a = CompiledAgent("a", 3, _kernel, (p, Param("y", 2.0, (1.0, 4.0))))
    assert a.param_names == ("x", "y") and a.index("y") == 1 and param_index(a.params, "x") == 0
    assert a.defaults().tolist() == [0.0, 2.0] and a.bounds == ((0.0, 1.0), (1.0, 4.0))
    with pytest.raises(ValueError, match="no parameter 'z'"):
        a.index("z")


def test_the_tables_are_read_off_the_registered_declarations():
    assert len(AGENTS) == len(AGENT_MODULES)
    assert sorted(a.id for a in AGENTS) == list(range(len(AGENTS)))     # dispatch slots 0.. in use
    for a in AGENTS:
        assert POLICY_NAMES[a.id] == a.name and N_PARAMS[a.id] == len(a.params)
        assert PARAM_NAMES[a.id] == a.param_names and PARAM_BOUNDS[a.id] == a.bounds
        assert default_params(a.name).tolist() == [p.default for p in a.params]
        assert a.memory <= KNOWN_LEN
    assert (RANDOM, GREEDY, EXPERT) == (0, 1, 2)
    assert [a.name for a in AGENTS if a.hot] == ["greedy"]         # the one agent inlined into the loop
    assert [a.name for a in AGENTS if a.driven] == ["search"]       # played from Python, not in the loop
    from kalooki_sim.agents import dispatch

    slots = [getattr(dispatch, f"_K{i}") for i in range(MAX_AGENTS)]
    for a in AGENTS:                                # a driven agent's dispatch slot stays empty
        assert (slots[a.id] is dispatch._no_agent) == a.driven
    # the expert extends greedy: the same first four parameters, so its default row plays greedy
    assert PARAM_NAMES[EXPERT][:4] == PARAM_NAMES[GREEDY]
    assert default_params(EXPERT)[:4].tolist() == default_params(GREEDY).tolist()


def test_docs_agents_md_is_the_generated_text():
    assert (ROOT / "docs" / "agents.md").read_text() == describe_agents(), \
        "regenerate it: python -m kalooki_sim.agents.base > docs/agents.md"


# ------------------------------------------------------------------------------------------------
# rows are filled when they are built; kernels read them as they are


def test_missing_entries_take_the_default_and_every_given_value_is_kept():
    g = default_params(GREEDY)
    pm = params_matrix(["greedy", "expert", "random"], [0.1])
    assert pm.shape == (3, N_PARAMS[EXPERT])
    assert pm[0, :4].tolist() == [0.1, *g[1:]] and not pm[0, 4:].any()        # columns greedy does not read: 0
    assert pm[1].tolist() == [0.1, *default_params(EXPERT)[1:]]
    assert pm[2, 0] == 0.1                                                      # random reads nothing
    zero = params_matrix(["greedy"], [0.0, 0.0, 0.0, 0.0])
    assert zero.tolist() == [[0.0, 0.0, 0.0, 0.0]]                              # 0 is 0, not "the default"
    assert (params_matrix(["greedy", "expert"]) == fill_params([GREEDY, EXPERT])).all()
    assert fill_params(RANDOM).shape == (1,) and fill_params(GREEDY, width=9).shape == (9,)
    with pytest.raises(ValueError, match="finite"):
        fill_params(GREEDY, [np.nan])


def test_a_per_game_table_is_filled_seat_by_seat():
    seats = np.array([[GREEDY, EXPERT], [EXPERT, RANDOM]])
    given = np.zeros((2, 2, 2))
    _, pm = seating_table(seats, 2, 2, given)
    assert pm.shape == (2, 2, N_PARAMS[EXPERT])
    assert pm[0, 0].tolist()[:4] == [0.0, 0.0, *default_params(GREEDY)[2:]]
    assert pm[0, 1].tolist() == [0.0, 0.0, *default_params(EXPERT)[2:]]
    _, none = seating_table(seats, 2, 2, None)
    assert none[1, 0].tolist() == default_params(EXPERT).tolist()


@pytest.mark.parametrize("name", ["call_threshold", "draw_threshold", "gap_weight"])
def test_zero_is_reachable_where_the_tuning_range_starts_at_zero(name):
    """Before the declarations a value <= 0 meant the default, so the tuner's clip to 0 played the
    default; now 0 plays its own games, and the default row still plays the default's."""
    # a points variant with calls: only there do calls and discard draws read the thresholds
    r = load_rules("k40", calls_enabled=True, max_calls_per_player=3, calls_per_turn=1)
    row = default_params(GREEDY)
    assert PARAM_BOUNDS[GREEDY][PARAM_NAMES[GREEDY].index(name)][0] == 0.0
    row[PARAM_NAMES[GREEDY].index(name)] = 0.0
    base = simulate(r, 4, ["greedy"] * 4, None, 200, 3)
    same = simulate(r, 4, ["greedy"] * 4, default_params(GREEDY), 200, 3)
    zero = simulate(r, 4, ["greedy"] * 4, row, 200, 3)
    assert (base["penalty"] == same["penalty"]).all() and (base["turns"] == same["turns"]).all()
    assert (base["penalty"] != zero["penalty"]).any() or (base["turns"] != zero["turns"]).any()


def test_a_narrow_row_handed_to_a_kernel_is_refused_where_it_is_built():
    with pytest.raises(ValueError, match="reads 4 parameters, the rows hold 1"):
        check_params(GREEDY, np.zeros(1))

