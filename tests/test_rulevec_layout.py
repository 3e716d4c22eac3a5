"""The rule vector's layout is generated from the knob tables (``rulevec``), and ``Rules.to_vector``
writes each knob where the kernels read it: a knob added, removed or moved cannot leave an index or
an enum ordinal behind."""

from __future__ import annotations

import pytest

from kalooki_sim.core import rulevec
from kalooki_sim.core.rules import ENUMS, list_overlays, list_presets, load_rules

RULE_SETS = [*list_presets(), "k40+v4+v6", "k40+v1+v2"]


def test_every_scalar_knob_index_is_its_position():
    assert len(set(rulevec.SCALAR_KNOBS)) == len(rulevec.SCALAR_KNOBS)
    for i, knob in enumerate(rulevec.SCALAR_KNOBS):
        name = "R_" + knob.upper()
        assert getattr(rulevec, name) == i, knob
        assert name in rulevec.__all__
    assert rulevec.N_SCALARS == len(rulevec.SCALAR_KNOBS)


def test_tables_follow_the_scalars_by_their_lengths():
    assert rulevec.R_PENALTY == rulevec.N_SCALARS
    assert rulevec.R_MELD_VALUE == rulevec.R_PENALTY + rulevec.N_PENALTY
    assert rulevec.R_N_ROUNDS == rulevec.R_MELD_VALUE + rulevec.N_MELD_VALUE
    assert rulevec.R_ROUND_BASE == rulevec.R_N_ROUNDS + 1
    assert rulevec.R_WINDOWS == rulevec.R_ROUND_BASE + rulevec.MAX_ROUNDS * rulevec.ROUND_STRIDE
    assert rulevec.R_FEWEST == rulevec.R_WINDOWS + rulevec.N_WINDOW_MASKS
    assert rulevec.R_VEC_LEN == rulevec.R_FEWEST + rulevec.N_WINDOW_MASKS // 16


def test_every_enum_constant_is_the_index_of_its_value():
    for knob, values in ENUMS.items():
        assert knob in rulevec.SCALAR_KNOBS, knob
        for value in values:
            name = f"{knob}_{value}".upper()
            assert getattr(rulevec, name) == ENUMS[knob].index(value), name
            assert name in rulevec.__all__


@pytest.mark.parametrize("name", RULE_SETS)
def test_to_vector_puts_each_knob_at_its_index(name):
    rules = load_rules(name)
    vec = rules.to_vector()
    assert len(vec) == rulevec.R_VEC_LEN
    for knob in rulevec.SCALAR_KNOBS:
        value = getattr(rules, knob)
        if knob in ENUMS:
            want = ENUMS[knob].index(value)
        elif value is None:
            want = -1
        elif isinstance(value, bool):
            want = 1 if value else 0
        else:
            want = int(value)
        assert vec[getattr(rulevec, "R_" + knob.upper())] == want, (name, knob, value)


def test_the_rule_sets_cover_bools_enums_and_none():
    """The presets above exercise every kind of scalar (so the vector test means something)."""
    kinds = set()
    for name in RULE_SETS:
        rules = load_rules(name)
        for knob in rulevec.SCALAR_KNOBS:
            v = getattr(rules, knob)
            kinds.add("enum" if knob in ENUMS else "none" if v is None else type(v).__name__)
    assert {"enum", "none", "bool", "int"} <= kinds
    assert list_overlays()
