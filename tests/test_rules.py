"""Rule configs: presets match RULES.md §4, overlays §3, validation errors name file/key/reason."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

import kalooki_sim
from kalooki_sim import Rules, RulesError, load_rules
from kalooki_sim.core import rulevec as rv
from kalooki_sim.core.cards import JOKER, parse_card

PRESETS = ["caribbean", "k40", "k51", "k101", "na15", "american"]
POINTS_PRESETS = ["k40", "k51", "k101", "na15", "american"]
K40_FAMILY = ["k40", "k51", "k101"]
OVERLAYS = ["v1", "v2", "v3", "v4", "v5", "v6", "v7"]

CARIB_CONTRACTS = ((3, 0), (2, 1), (1, 2), (0, 3), (4, 0), (3, 1), (2, 2), (1, 3), (0, 4))
CARIB_DEALS = (9, 10, 11, 12, 12, 13, 14, 15, 16)
NA15_DEALS = {2: 15, 3: 15, 4: 15, 5: 13, 6: 11}


def knob(rules: Rules, spec: str):
    """Read a knob; ``pen:AC`` = penalty of a card, ``meld:A_high|A_low|K|2`` = opening value,
    ``deal:<round>:<players>`` = deal size."""
    if spec.startswith("pen:"):
        return rules.penalty_value[parse_card(spec[4:]).type] if spec[4:] != "JK" else rules.penalty_value[JOKER]
    if spec.startswith("meld:"):
        what = spec[5:]
        pos = {"A_high": 14, "A_low": 1, "K": 13, "Q": 12, "J": 11, "10": 10}.get(what)
        return rules.meld_value[pos if pos is not None else int(what)]
    if spec.startswith("deal:"):
        _, rnd, n = spec.split(":")
        return rules.deal_size(int(rnd), int(n))
    return getattr(rules, spec)


# ------------------------------------------------------------------------------------------------
# Preset values (RULES.md §4; one row per knob per preset)

_COMMON_K40 = [
    ("players_min", 3), ("players_max", 6), ("n_decks", 2), ("hand_size", 13), ("n_hands", None),
    ("ace_high", True), ("ace_low", False), ("ace_wrap", False),
    ("meld:A_high", 11), ("meld:K", 10), ("meld:10", 10), ("meld:2", 2), ("meld:9", 9),
    ("pen:JK", 15), ("pen:AS", 11), ("pen:AC", 11), ("pen:AD", 11), ("pen:AH", 11),
    ("pen:KD", 10), ("pen:10H", 10), ("pen:7C", 7), ("pen:2S", 2),
    ("set_min_size", 3), ("set_max_size", 4), ("set_allow_duplicate_suit", False), ("set_min_naturals", 1),
    ("run_min_size", 3), ("run_min_naturals", 1), ("run_adjacent_jokers", True), ("allow_all_joker_meld", False),
    ("opening_mode", "points"), ("contracts", ()), ("opening_counts_layoffs", "never"),
    ("new_melds_after_opening", True), ("kalooki_exempt_from_opening_min", False),
    ("discard_draw_before_opening", "if_used_in_opening"), ("discard_draw_after_opening", "any"),
    ("first_turn_free_upcard", True), ("forbid_discard_of_taken_discard", True), ("allow_discard_joker", True),
    ("announce_low_hand", True),
    ("layoff_requires_opened", True), ("layoff_max_per_run_end_per_turn", 2), ("layoff_max_per_run_per_turn", None),
    ("run_growth_rule", "either_end"), ("table_manipulation", True), ("taken_cards_must_be_used_same_turn", True),
    ("joker_swap", "retrieve"), ("freed_joker_must_be_used_same_turn", True), ("joker_swap_from_run_end", True),
    ("set_joker_swap", "one_for_one_3card"), ("jokers_locked_in_4card_set", True), ("end_take_may_take_joker", False),
    ("going_out_requires_discard", False), ("kalooki_enabled", True), ("kalooki_penalty_multiplier", 1),
    ("calls_enabled", False),
    ("stock_exhaustion", "reshuffle_then_void"), ("max_reshuffles_per_hand", 1), ("keep_top_discard_on_reshuffle", True),
    ("match_mode", "elimination_pool"), ("buy_back_limit", 2), ("buy_back_min_other_active", 2),
    ("buy_back_reset", "max_active_total"), ("buy_back_order", "from_hand_winner_left"),
    ("stake_ante", 5), ("stake_rip", 1), ("stake_buy_back", 5),
    ("pay_per_penalty_point", 0), ("pay_per_card", 0), ("pay_per_joker", 0), ("kalooki_payment_multiplier", 1),
]

_NA15_FAMILY = [
    ("players_min", 2), ("players_max", 6), ("n_decks", 2), ("n_jokers", 4), ("n_hands", None),
    ("deal:1:2", 15), ("deal:1:3", 15), ("deal:1:4", 15), ("deal:1:5", 13), ("deal:1:6", 11),
    ("ace_high", True), ("ace_low", True), ("ace_wrap", False), ("allow_both_aces_in_run", True),
    ("meld:K", 10), ("meld:2", 2), ("pen:JK", 15), ("pen:KD", 10), ("pen:7C", 7),
    ("set_max_size", 4), ("set_allow_duplicate_suit", False), ("set_min_naturals", 1), ("run_min_size", 3),
    ("opening_mode", "points"), ("opening_min_points", 51), ("opening_counts_layoffs", "with_new_meld"),
    ("stock_exhaustion", "reshuffle_then_void"), ("max_reshuffles_per_hand", 1),
    ("elimination_at", None), ("buy_back_limit", 0), ("stake_ante", 0), ("stake_rip", 0), ("stake_kalooki", 0),
    ("table_manipulation", True), ("joker_swap", "retrieve"),
]

PRESET_KNOBS: dict[str, list[tuple[str, object]]] = {
    "caribbean": [
        ("players_min", 3), ("players_max", 6), ("n_decks", 2), ("n_jokers", 4),
        ("play_direction", "left"), ("dealer_rotation", "left"),
        ("hand_size", CARIB_DEALS), ("n_hands", 9), ("upcard", True),
        ("dealer_may_swap_upcard", False), ("cut_joker_to_cutter", False),
        ("ace_high", True), ("ace_low", True), ("ace_wrap", False), ("allow_both_aces_in_run", True),
        ("pen:JK", 50), ("pen:AC", 15), ("pen:AS", 15), ("pen:AD", 1), ("pen:AH", 1),
        ("pen:KD", 10), ("pen:QS", 10), ("pen:JC", 10), ("pen:10H", 10), ("pen:9D", 9), ("pen:7C", 7), ("pen:2S", 2),
        ("set_min_size", 3), ("set_max_size", None), ("set_allow_duplicate_suit", True), ("set_min_naturals", 2),
        ("run_min_size", 4), ("run_min_naturals", 1), ("run_adjacent_jokers", False), ("allow_all_joker_meld", False),
        ("declare_joker_meaning", True),
        ("opening_mode", "contract"), ("contracts", CARIB_CONTRACTS),
        ("contract_distinct_set_ranks", True), ("contract_distinct_run_suits", True),
        ("contract_allow_extra_melds", False), ("new_melds_after_opening", False),
        ("discard_draw_before_opening", "any"), ("discard_draw_after_opening", "never"),
        ("forbid_discard_of_taken_discard", True), ("allow_discard_joker", False), ("announce_low_hand", False),
        ("layoff_requires_opened", True), ("layoff_max_per_run_end_per_turn", None), ("layoff_max_per_run_per_turn", None),
        ("run_growth_rule", "up_until_ace_then_down"), ("table_manipulation", False),
        ("joker_swap", "move_within_run"), ("joker_swap_requires_opened", True), ("joker_swap_from_run_end", True),
        ("set_joker_swap", "never"), ("others_may_layoff_after_out", False),
        ("going_out_requires_discard", False), ("kalooki_enabled", False), ("down_and_out_multiplier", 1),
        ("calls_enabled", True), ("max_calls_per_player", 3), ("calls_limit_scope", "game"),
        ("count_denied_calls", False), ("calls_per_turn", 1), ("call_penalty_cards", 1),
        ("call_priority", "play_order_after_active"), ("deny_requires_not_opened", True),
        ("after_allowed_call_active_draws", "stock"),
        ("stock_exhaustion", "reshuffle_unlimited"), ("max_reshuffles_per_hand", None),
        ("keep_top_discard_on_reshuffle", True), ("max_void_replays", 3),
        ("match_mode", "fixed_hands_low_total"), ("tie_rule", "shared"),
    ],
    "k40": _COMMON_K40 + [
        ("n_jokers", 2), ("opening_min_points", 40), ("elimination_at", 150), ("stake_kalooki", 2),
    ],
    "k51": _COMMON_K40 + [
        ("n_jokers", 4), ("opening_min_points", 51), ("elimination_at", 150), ("stake_kalooki", 2),
    ],
    "k101": _COMMON_K40 + [
        ("n_jokers", 2), ("opening_min_points", 40), ("elimination_at", 101), ("stake_kalooki", 3),
    ],
    "na15": _NA15_FAMILY + [
        ("meld:A_high", 15), ("meld:A_low", 15), ("ace_low_meld_value", 15),
        ("pen:AS", 15), ("pen:AH", 15), ("pen:AC", 15), ("pen:AD", 15),
        ("allow_all_joker_meld", False), ("dealer_may_swap_upcard", False), ("cut_joker_to_cutter", False),
        ("discard_draw_before_opening", "if_used_in_opening"), ("discard_draw_after_opening", "any"),
        ("first_turn_free_upcard", True),
        ("match_mode", "per_hand_points"), ("pay_per_penalty_point", 1), ("pay_per_card", 0), ("pay_per_joker", 0),
        ("kalooki_payment_multiplier", 1),
    ],
    "american": _NA15_FAMILY + [
        ("meld:A_high", 11), ("meld:A_low", 11), ("ace_low_meld_value", 11),
        ("pen:AS", 11), ("pen:AH", 11), ("pen:AC", 11), ("pen:AD", 11),
        ("allow_all_joker_meld", True), ("joker_set_meld_value", 15),
        ("dealer_may_swap_upcard", True), ("cut_joker_to_cutter", True),
        ("discard_draw_before_opening", "if_used_in_meld_now"), ("discard_draw_after_opening", "if_used_in_meld_now"),
        ("first_turn_free_upcard", False),
        ("match_mode", "per_hand_cards"), ("pay_per_penalty_point", 0), ("pay_per_card", 1), ("pay_per_joker", 2),
        ("kalooki_payment_multiplier", 2),
    ],
}

_KNOB_ROWS = [(p, k, v) for p, rows in PRESET_KNOBS.items() for k, v in rows]


@pytest.mark.parametrize("preset, spec, expected", _KNOB_ROWS, ids=[f"{p}-{k}" for p, k, _ in _KNOB_ROWS])
def test_preset_knob_matches_rules_md(preset, spec, expected):
    assert knob(load_rules(preset), spec) == expected


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_loads(preset):
    r = load_rules(preset)
    assert isinstance(r, Rules)
    assert r.name == preset
    assert load_rules(preset.upper()) == r  # preset names are case-insensitive


def test_list_presets_and_overlays():
    from kalooki_sim.core.rules import list_overlays, list_presets

    assert set(PRESETS) <= set(list_presets())
    assert set(OVERLAYS) <= set(list_overlays())


def test_default_variant_is_caribbean():
    assert load_rules() == load_rules("caribbean")


@pytest.mark.parametrize("preset", PRESETS)
def test_deck_size_and_deal_fit(preset):
    r = load_rules(preset)
    assert r.deck_size == 52 * r.n_decks + r.n_jokers
    assert r.deck_size == (106 if r.n_jokers == 2 else 108)
    for n in range(r.players_min, r.players_max + 1):
        for rnd in range(1, r.n_rounds + 1):
            assert n * r.deal_size(rnd, n) + 1 <= r.deck_size


def test_caribbean_rounds_contracts_and_deals():
    r = load_rules("caribbean")
    assert r.n_rounds == 9
    for rnd in range(1, 10):
        t, f = r.contract(rnd)
        assert (t, f) == CARIB_CONTRACTS[rnd - 1]
        # the minimum contract always uses exactly the number of cards dealt (RULES.md §2.1)
        assert 3 * t + 4 * f == r.deal_size(rnd, 6) == CARIB_DEALS[rnd - 1]
    # worst case 6 players, round 9: 97 <= 108, stock 11
    assert 108 - 6 * r.deal_size(9, 6) - 1 == 11
    with pytest.raises(ValueError):
        r.contract(10)
    with pytest.raises(ValueError):
        r.contract(0)


def test_points_presets_have_no_contract():
    for p in POINTS_PRESETS:
        with pytest.raises(ValueError):
            load_rules(p).contract(1)


def test_na15_deal_size_needs_player_count():
    r = load_rules("na15")
    with pytest.raises(ValueError):
        r.deal_size(1)
    assert {n: r.deal_size(1, n) for n in range(2, 7)} == NA15_DEALS


@pytest.mark.parametrize("preset", POINTS_PRESETS + ["k40+v4", "k51+v4", "k101+v4"])
def test_low_ace_meld_value_is_consistent(preset):
    """docs/meld-semantics.md: ``meld_value[1]`` is the low-ace value ``ace_low_meld_value``."""
    r = load_rules(preset)
    assert r.meld_value[1] == r.ace_low_meld_value


@pytest.mark.parametrize("preset", PRESETS)
def test_meld_value_table_layout(preset):
    r = load_rules(preset)
    assert len(r.meld_value) == 15
    assert r.meld_value[2:10] == tuple(range(2, 10))
    assert r.meld_value[10:14] == (10, 10, 10, 10)
    assert len(r.penalty_value) == 53


# ------------------------------------------------------------------------------------------------
# House-rule overlays (RULES.md §3)

OVERLAY_KNOBS = {
    "v1": {"kalooki_exempt_from_opening_min": True},
    "v2": {"layoff_max_per_run_per_turn": 2, "layoff_max_per_run_end_per_turn": 2},
    "v3": {"joker_swap_from_run_end": False},
    "v4": {"ace_low": True, "ace_low_meld_value": 1, "meld:A_low": 1, "meld:A_high": 11,
           "pen:AH": 11, "pen:AS": 11, "ace_high": True, "ace_wrap": False},
    "v5": {"elimination_at": 151},
    "v6": {"kalooki_penalty_multiplier": 2},
    "v7": {"stock_exhaustion": "void_immediately", "max_reshuffles_per_hand": 0},
}
_OVERLAY_ROWS = [(v, k, x) for v, d in OVERLAY_KNOBS.items() for k, x in d.items()]


@pytest.mark.parametrize("overlay, spec, expected", _OVERLAY_ROWS, ids=[f"k40+{v}-{k}" for v, k, _ in _OVERLAY_ROWS])
def test_overlay_sets_knob(overlay, spec, expected):
    assert knob(load_rules(f"k40+{overlay}"), spec) == expected


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_overlay_changes_only_its_knobs(overlay):
    base, r = load_rules("k40"), load_rules(f"k40+{overlay}")
    assert r.name == f"k40+{overlay}"
    changed = {f.name for f in dataclasses.fields(Rules) if getattr(base, f.name) != getattr(r, f.name)}
    allowed = {k.split(":")[0] for k in OVERLAY_KNOBS[overlay]} | {"name", "meld_value"}
    assert changed <= allowed
    assert changed - {"name"}, "the overlay changed nothing"


def test_overlays_combine_and_keyword_form_is_equal():
    r = load_rules("k40+v4+v6")
    assert r.ace_low and r.ace_low_meld_value == 1 and r.kalooki_penalty_multiplier == 2
    assert load_rules("k40", overlays=["v4", "v6"]) == r
    assert load_rules("k40+V4+V6") == r


@pytest.mark.parametrize("preset", K40_FAMILY)
def test_v4_applies_to_k40_family(preset):
    r = load_rules(f"{preset}+v4")
    assert r.ace_low and r.ace_low_meld_value == 1
    assert r.penalty_value[parse_card("AH").type] == 11  # low ace worth 1 in the opening, 11 as a penalty


def test_v5_alternatives_via_override():
    assert load_rules("k40", elimination_at=301).elimination_at == 301
    assert load_rules("k40", elimination_at=501).elimination_at == 501
    assert load_rules("k40+v5").elimination_at == 151


# ------------------------------------------------------------------------------------------------
# Overrides, immutability, hashing, vectors


def test_override_works_and_keeps_the_rest():
    base = load_rules("k40")
    r = load_rules("k40", elimination_at=301)
    assert r.elimination_at == 301
    assert dataclasses.replace(r, elimination_at=150) == base
    assert base.replace(elimination_at=301) == r


def test_rules_is_frozen():
    r = load_rules("k40")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.n_jokers = 4  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.elimination_at = 1  # type: ignore[misc]


@pytest.mark.parametrize("preset", PRESETS)
def test_rules_hashable_and_equal_configs_hash_equal(preset):
    a, b = load_rules(preset), load_rules(preset)
    assert a == b and hash(a) == hash(b)
    assert len({a, b}) == 1
    assert {a: 1}[b] == 1
    assert a.digest() == b.digest()


def test_equal_via_different_routes_hash_equal():
    a = load_rules("k40", elimination_at=151)
    b = load_rules("k40").replace(elimination_at=151)
    assert a == b and hash(a) == hash(b)
    # same knobs as the V5 overlay; only the name differs, so kernels see the same vector
    assert np.array_equal(a.to_vector(), load_rules("k40+v5").to_vector())


@pytest.mark.parametrize("preset", PRESETS)
def test_to_vector_shape_dtype_and_equal_for_equal_rules(preset):
    a, b = load_rules(preset), load_rules(preset)
    va, vb = a.to_vector(), b.to_vector()
    assert isinstance(va, np.ndarray)
    assert va.dtype == np.int64
    assert va.shape == (rv.R_VEC_LEN,)
    assert np.array_equal(va, vb)


def test_to_vector_differs_for_all_presets_and_overlays():
    names = PRESETS + [f"k40+{v}" for v in OVERLAYS] + ["k40+v4+v6"]
    vecs = {n: load_rules(n).to_vector() for n in names}
    vecs["k40 elim 301"] = load_rules("k40", elimination_at=301).to_vector()
    vecs["caribbean 3 calls per hand"] = load_rules("caribbean", calls_limit_scope="hand").to_vector()
    for (n1, v1), (n2, v2) in itertools.combinations(vecs.items(), 2):
        assert not np.array_equal(v1, v2), (n1, n2)


@pytest.mark.parametrize("preset", PRESETS)
def test_to_vector_slots(preset):
    r = load_rules(preset)
    v = r.to_vector()
    assert v[rv.R_N_JOKERS] == r.n_jokers
    assert v[rv.R_N_DECKS] == r.n_decks
    assert v[rv.R_SET_MIN_NATURALS] == r.set_min_naturals
    assert v[rv.R_RUN_MIN_SIZE] == r.run_min_size
    assert v[rv.R_ACE_LOW] == int(r.ace_low)
    assert v[rv.R_ACE_LOW_MELD_VALUE] == r.ace_low_meld_value
    assert v[rv.R_SET_MAX_SIZE] == (-1 if r.set_max_size is None else r.set_max_size)
    assert v[rv.R_OPENING_MIN_POINTS] == (-1 if r.opening_min_points is None else r.opening_min_points)
    assert list(v[rv.R_PENALTY:rv.R_PENALTY + 53]) == list(r.penalty_value)
    assert list(v[rv.R_MELD_VALUE:rv.R_MELD_VALUE + 15]) == list(r.meld_value)
    assert v[rv.R_N_ROUNDS] == r.n_rounds
    for rnd in range(r.n_rounds):
        for n in range(r.players_min, r.players_max + 1):
            assert v[rv.round_deal_index(rnd, n)] == r.deal_size(rnd + 1, n)
        if r.opening_mode == "contract":
            i = rv.round_contract_index(rnd)
            assert (v[i], v[i + 1]) == r.contract(rnd + 1)


def test_to_vector_caribbean_values():
    v = load_rules("caribbean").to_vector()
    assert v[rv.R_PENALTY + JOKER] == 50
    assert v[rv.R_PENALTY + parse_card("AC").type] == 15
    assert v[rv.R_PENALTY + parse_card("AD").type] == 1
    assert v[rv.R_N_ROUNDS] == 9


# ------------------------------------------------------------------------------------------------
# Loading from TOML files


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_load_from_file_extending_k40(tmp_path):
    p = _write(tmp_path, "house.toml", 'extends = "k40"\nelimination_at = 301\nstake_ante = 3\n')
    r = load_rules(p)
    assert r.elimination_at == 301 and r.stake_ante == 3
    assert r.opening_min_points == 40 and r.n_jokers == 2
    assert load_rules(str(p)) == r
    expected = load_rules("k40", elimination_at=301, stake_ante=3)
    assert np.array_equal(r.to_vector(), expected.to_vector())


def test_load_from_file_with_own_name(tmp_path):
    p = _write(tmp_path, "mine.toml", 'name = "mine"\nextends = "k40"\nn_jokers = 4\n')
    r = load_rules(p)
    assert r.name == "mine" and r.n_jokers == 4


def test_file_may_extend_a_file(tmp_path):
    a = _write(tmp_path, "a.toml", 'extends = "k40"\nelimination_at = 301\n')
    b = _write(tmp_path, "b.toml", f'extends = "{a}"\nstake_rip = 2\n')
    r = load_rules(b)
    assert r.elimination_at == 301 and r.stake_rip == 2 and r.opening_min_points == 40


def test_file_with_overrides_and_overlays(tmp_path):
    p = _write(tmp_path, "h.toml", 'extends = "k40"\nstake_ante = 3\n')
    r = load_rules(p, overlays=["v4"], elimination_at=501)
    assert r.stake_ante == 3 and r.ace_low and r.ace_low_meld_value == 1 and r.elimination_at == 501


# ------------------------------------------------------------------------------------------------
# Errors: RulesError names file, key and reason


def _check_error(excinfo, source_part, key, reason_part):
    e = excinfo.value
    assert isinstance(e, RulesError)
    assert isinstance(e, ValueError)
    assert source_part in e.source, (e.source, source_part)
    assert e.key == key
    assert reason_part.lower() in e.reason.lower(), (e.reason, reason_part)
    msg = str(e)
    assert e.source in msg and e.reason in msg
    if key is not None:
        assert key in msg


def test_rules_error_is_value_error():
    assert issubclass(RulesError, ValueError)
    assert kalooki_sim.RulesError is RulesError
    e = RulesError("x.toml", "n_jokers", "bad")
    assert (e.source, e.key, e.reason) == ("x.toml", "n_jokers", "bad")
    assert str(e) == "x.toml: n_jokers: bad"


def test_unknown_variant():
    with pytest.raises(RulesError) as ei:
        load_rules("k41")
    _check_error(ei, "k41", None, "unknown variant")
    assert "k40" in str(ei.value)  # lists the known presets


def test_unknown_overlay():
    with pytest.raises(RulesError) as ei:
        load_rules("k40+v9")
    _check_error(ei, "v9", None, "unknown overlay")


def test_overlay_not_applicable():
    with pytest.raises(RulesError) as ei:
        load_rules("na15+v4")
    _check_error(ei, "v4.toml", "applies_to", "does not apply")
    assert "na15" in str(ei.value)


@pytest.mark.parametrize("combo", ["caribbean+v1", "caribbean+v4", "american+v4", "na15+v6", "k101+v5"])
def test_other_non_applicable_overlays(combo):
    with pytest.raises(RulesError) as ei:
        load_rules(combo)
    assert ei.value.key == "applies_to"


def test_overlay_file_cannot_be_a_variant():
    # an overlay is not a preset: "v4" alone is an unknown variant
    with pytest.raises(RulesError):
        load_rules("v4")


def test_malformed_toml(tmp_path):
    p = _write(tmp_path, "bad.toml", 'extends = "k40"\nelimination_at = = 3\n')
    with pytest.raises(RulesError) as ei:
        load_rules(p)
    _check_error(ei, str(p), None, "malformed TOML")


def test_missing_file(tmp_path):
    with pytest.raises(RulesError) as ei:
        load_rules(tmp_path / "nope.toml")
    _check_error(ei, "nope.toml", None, "no such")


def test_unknown_key_in_file(tmp_path):
    p = _write(tmp_path, "typo.toml", 'extends = "k40"\nelimination_att = 301\n')
    with pytest.raises(RulesError) as ei:
        load_rules(p)
    _check_error(ei, str(p), "elimination_att", "unknown key")


def test_wrong_type_in_file(tmp_path):
    p = _write(tmp_path, "t.toml", 'extends = "k40"\nn_jokers = "two"\n')
    with pytest.raises(RulesError) as ei:
        load_rules(p)
    _check_error(ei, str(p), "n_jokers", "expected an integer")


def test_extends_unknown_preset(tmp_path):
    p = _write(tmp_path, "e.toml", 'extends = "k99"\n')
    with pytest.raises(RulesError) as ei:
        load_rules(p)
    assert "k99" in str(ei.value)


def test_missing_key_in_file_that_does_not_extend(tmp_path):
    p = _write(tmp_path, "bare.toml", 'name = "bare"\nplayers_min = 3\nplayers_max = 6\n')
    with pytest.raises(RulesError) as ei:
        load_rules(p)
    _check_error(ei, str(p), "n_decks", "missing")


def test_unknown_override_knob():
    with pytest.raises(RulesError) as ei:
        load_rules("k40", elimination_att=301)
    _check_error(ei, "k40", "elimination_att", "unknown")


@pytest.mark.parametrize(
    "preset, overrides, key, reason",
    [
        # wrong types
        ("k40", {"n_jokers": True}, "n_jokers", "expected an integer"),
        ("k40", {"elimination_at": False}, "elimination_at", "expected an integer"),
        ("k40", {"upcard": 1}, "upcard", "expected true or false"),
        ("k40", {"ace_low": 0}, "ace_low", "expected true or false"),
        ("k40", {"n_jokers": "4"}, "n_jokers", "expected an integer"),
        ("k40", {"elimination_at": "150"}, "elimination_at", "expected an integer"),
        ("k40", {"play_direction": 1}, "play_direction", "not one of"),
        # out of range
        ("k40", {"n_decks": 5}, "n_decks", "out of range"),
        ("k40", {"n_jokers": -1}, "n_jokers", "out of range"),
        ("k40", {"set_min_size": 2}, "set_min_size", "out of range"),
        ("k40", {"hand_size": 0}, "hand_size", "out of range"),
        # enum values not allowed
        ("k40", {"play_direction": "up"}, "play_direction", "not one of"),
        ("k40", {"stock_exhaustion": "reshuffle"}, "stock_exhaustion", "not one of"),
        ("caribbean", {"calls_limit_scope": "turn"}, "calls_limit_scope", "not one of"),
        # a deal that does not fit the deck
        ("caribbean", {"n_decks": 1}, "hand_size", "do not fit"),
        ("k40", {"n_decks": 1, "n_jokers": 0}, "hand_size", "do not fit"),
        ("na15", {"hand_size": {"2": 15, "3": 15, "4": 15, "5": 15, "6": 18}}, "hand_size", "do not fit"),
        # contradictory knobs
        ("k40", {"ace_high": False}, "ace_high", "high, low or both"),
        ("k40", {"set_min_size": 4, "set_max_size": 3}, "set_max_size", "set_min_size"),
        ("k40", {"max_reshuffles_per_hand": 0}, "max_reshuffles_per_hand", "stock_exhaustion"),
        ("k40", {"stock_exhaustion": "reshuffle_unlimited"}, "max_reshuffles_per_hand", "stock_exhaustion"),
        ("caribbean", {"max_reshuffles_per_hand": 1}, "max_reshuffles_per_hand", "stock_exhaustion"),
        ("k40", {"stock_exhaustion": "void_immediately"}, "max_reshuffles_per_hand", "stock_exhaustion"),
        ("k40", {"opening_min_points": None}, "opening_min_points", "opening minimum"),
        ("k40", {"opening_min_points": "none"}, "opening_min_points", "opening minimum"),
        ("k40", {"set_max_size": 5}, "set_max_size", "at most 4"),
        ("k40", {"set_max_size": None}, "set_max_size", "at most 4"),
        ("caribbean", {"hand_size": [9, 10]}, "hand_size", "contract rounds"),
        ("caribbean", {"set_min_naturals": 4}, "set_min_naturals", "naturals"),
        ("na15", {"hand_size": {"2": 15, "3": 15, "4": 15, "5": 13}}, "hand_size", "no deal size for 6"),
    ],
    ids=lambda x: str(x) if not isinstance(x, dict) else ",".join(f"{k}={v}" for k, v in x.items()),
)
def test_bad_override_raises(preset, overrides, key, reason):
    with pytest.raises(RulesError) as ei:
        load_rules(preset, **overrides)
    _check_error(ei, preset, key, reason)


@pytest.mark.parametrize(
    "body, key, reason",
    [
        ("n_jokers = true", "n_jokers", "expected an integer"),
        ("upcard = 1", "upcard", "expected true or false"),
        ('elimination_at = "lots"', "elimination_at", "expected an integer"),
        ("n_decks = 4", "n_decks", "out of range"),
        ('match_mode = "knockout"', "match_mode", "not one of"),
        ("n_decks = 1\nn_jokers = 0", "hand_size", "do not fit"),
        ("ace_high = false", "ace_high", "high, low or both"),
        ("set_max_size = 2", "set_max_size", None),
        ("max_reshuffles_per_hand = 0", "max_reshuffles_per_hand", "stock_exhaustion"),
        ('opening_min_points = "none"', "opening_min_points", "opening minimum"),
        ("set_max_size = 6", "set_max_size", "at most 4"),
        ("penalty_value = { A = 11 }", "penalty_value", "no value"),
        ("penalty_value = { A = 11, 2 = 2, 3 = 3, 4 = 4, 5 = 5, 6 = 6, 7 = 7, 8 = 8, 9 = 9, 10 = 10, "
         "J = 10, Q = 10, K = 2000, JK = 50 }", "penalty_value", "0..1000"),
        ("penalty_value = [" + ", ".join(["5"] * 52) + ", -1]", "penalty_value", "0..1000"),
        ("meld_value = { B = 3 }", "meld_value", "unknown rank"),
    ],
)
def test_bad_value_in_file_names_file_key_reason(tmp_path, body, key, reason):
    p = _write(tmp_path, "bad_value.toml", f'extends = "k40"\n{body}\n')
    with pytest.raises(RulesError) as ei:
        load_rules(p)
    e = ei.value
    assert e.source == str(p) and e.key == key
    if reason is not None:
        assert reason.lower() in e.reason.lower()
    assert str(p) in str(e) and key in str(e)


def test_contract_hand_size_list_length_in_file(tmp_path):
    p = _write(tmp_path, "carib.toml", 'extends = "caribbean"\nhand_size = [9, 10, 11]\n')
    with pytest.raises(RulesError) as ei:
        load_rules(p)
    _check_error(ei, str(p), "hand_size", "contract rounds")


def test_valid_changes_do_not_raise():
    # the other reading of A18 and the EXT 3-pack Caribbean setup are playable
    assert load_rules("caribbean", n_decks=3, n_jokers=8).deck_size == 164
    assert load_rules("caribbean", down_and_out_multiplier=2).down_and_out_multiplier == 2
    assert load_rules("k40", set_joker_swap="both_missing_suits").set_joker_swap == "both_missing_suits"
    assert load_rules("k40", elimination_at=None, match_mode="per_hand_points").elimination_at is None


def test_custom_file_descending_from_k40_takes_k40_overlays(tmp_path):
    """Overlays check the built-in preset a custom file descends from, not the file's own name."""
    from kalooki_sim import load_rules

    p = tmp_path / "mine.toml"
    p.write_text('name = "mine"\nextends = "k40"\nopening_min_points = 45\n')
    r = load_rules(str(p), overlays=("v4",))
    assert r.ace_low and r.opening_min_points == 45 and r.meld_value[1] == 1
