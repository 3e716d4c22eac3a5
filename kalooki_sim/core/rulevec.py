"""Index layout of ``Rules.to_vector()``: the integer form of a variant that compiled kernels read.

Every variant shares one compiled kernel because the rules arrive as data.  Scalars come first
(bools as 0/1, enums as the index of the value in ``ENUMS``, ``None`` as -1), then the value
tables, the per-round deal sizes and contracts, and a table derived from the run rules (the best
run windows of every suit pattern, ``R_WINDOWS``).  Module-level ints are compile-time constants
for numba, so kernels write ``rv[R_SET_MIN_SIZE]`` and ``rv[R_TIE_RULE] == TIE_RULE_SHARED``.

The indices and enum values are generated from ``SCALAR_KNOBS`` and ``ENUMS`` (and the table
offsets from the tables' lengths), so adding or moving a knob cannot leave a hand-typed number
behind: ``R_<KNOB>`` is the knob's position, ``<KNOB>_<VALUE>`` the value's position in its enum.
"""

from __future__ import annotations

# The values of each enum knob, in the order the vector numbers them (``rules`` validates configs
# against them and re-exports this table).
ENUMS: dict[str, tuple[str, ...]] = {
    "play_direction": ("left", "right"),
    "dealer_rotation": ("left", "right"),
    "joker_meld_value": ("represented",),
    "opening_mode": ("contract", "points"),
    "opening_counts_layoffs": ("never", "with_new_meld"),
    "discard_draw_before_opening": ("any", "if_used_in_opening", "if_used_in_meld_now", "never"),
    "discard_draw_after_opening": ("any", "if_used_in_opening", "if_used_in_meld_now", "never"),
    "run_growth_rule": ("either_end", "up_until_ace_then_down"),
    "joker_swap": ("none", "move_within_run", "retrieve"),
    "set_joker_swap": ("never", "one_for_one_3card", "both_missing_suits"),
    "calls_limit_scope": ("game", "hand"),
    "call_priority": ("play_order_after_active", "random"),
    "after_allowed_call_active_draws": ("stock", "stock_or_new_top"),
    "stock_exhaustion": ("reshuffle_unlimited", "reshuffle_then_void", "void_immediately"),
    "match_mode": ("fixed_hands_low_total", "elimination_pool", "per_hand_points", "per_hand_cards"),
    "buy_back_reset": ("max_active_total",),
    "buy_back_order": ("from_hand_winner_left",),
    "tie_rule": ("shared", "fewest_points_last_hand", "most_hands_won"),
}

SCALAR_KNOBS = (
    "players_min",
    "players_max",
    "n_decks",
    "n_jokers",
    "play_direction",
    "dealer_rotation",
    "n_hands",
    "upcard",
    "dealer_may_swap_upcard",
    "cut_joker_to_cutter",
    "ace_high",
    "ace_low",
    "ace_wrap",
    "allow_both_aces_in_run",
    "ace_low_meld_value",
    "joker_meld_value",
    "joker_set_meld_value",
    "set_min_size",
    "set_max_size",
    "set_allow_duplicate_suit",
    "set_min_naturals",
    "run_min_size",
    "run_min_naturals",
    "run_adjacent_jokers",
    "allow_all_joker_meld",
    "declare_joker_meaning",
    "opening_mode",
    "contract_distinct_set_ranks",
    "contract_distinct_run_suits",
    "contract_allow_extra_melds",
    "opening_min_points",
    "opening_counts_layoffs",
    "new_melds_after_opening",
    "kalooki_exempt_from_opening_min",
    "discard_draw_before_opening",
    "discard_draw_after_opening",
    "first_turn_free_upcard",
    "forbid_discard_of_taken_discard",
    "allow_discard_joker",
    "announce_low_hand",
    "layoff_requires_opened",
    "layoff_max_per_run_end_per_turn",
    "layoff_max_per_run_per_turn",
    "run_growth_rule",
    "table_manipulation",
    "taken_cards_must_be_used_same_turn",
    "joker_swap",
    "joker_swap_requires_opened",
    "freed_joker_must_be_used_same_turn",
    "joker_swap_from_run_end",
    "set_joker_swap",
    "jokers_locked_in_4card_set",
    "end_take_may_take_joker",
    "others_may_layoff_after_out",
    "going_out_requires_discard",
    "kalooki_enabled",
    "kalooki_penalty_multiplier",
    "down_and_out_multiplier",
    "calls_enabled",
    "max_calls_per_player",
    "calls_limit_scope",
    "count_denied_calls",
    "calls_per_turn",
    "call_penalty_cards",
    "call_priority",
    "deny_requires_not_opened",
    "after_allowed_call_active_draws",
    "stock_exhaustion",
    "max_reshuffles_per_hand",
    "keep_top_discard_on_reshuffle",
    "max_void_replays",
    "max_turns_per_hand",
    "match_mode",
    "elimination_at",
    "buy_back_limit",
    "buy_back_min_other_active",
    "buy_back_reset",
    "buy_back_order",
    "stake_ante",
    "stake_rip",
    "stake_kalooki",
    "stake_buy_back",
    "pay_per_penalty_point",
    "pay_per_card",
    "pay_per_joker",
    "kalooki_payment_multiplier",
    "tie_rule",
)


def _define(name: str, value: int) -> None:
    if name in globals():
        raise ValueError(f"rulevec: {name} is defined twice")
    globals()[name] = value


# ``R_<KNOB>``: where the vector holds a scalar knob, its position in ``SCALAR_KNOBS``.
for _i, _knob in enumerate(SCALAR_KNOBS):
    _define("R_" + _knob.upper(), _i)
# ``<KNOB>_<VALUE>``: an enum knob's value as the vector holds it, its position in ``ENUMS[knob]``
# (``rv[R_DEALER_ROTATION] == DEALER_ROTATION_LEFT``, never a bare ordinal).
for _knob, _values in ENUMS.items():
    if _knob not in SCALAR_KNOBS:
        raise ValueError(f"rulevec: enum knob {_knob} is not a scalar knob")
    for _i, _value in enumerate(_values):
        _define(f"{_knob}_{_value}".upper(), _i)
del _i, _knob, _values, _value
# ``engine.legality.draw_mode`` reads either knob, so both must encode their modes alike
assert ENUMS["discard_draw_before_opening"] == ENUMS["discard_draw_after_opening"]


N_SCALARS = len(SCALAR_KNOBS)
MAX_ROUNDS = 16
N_PENALTY = 53          # penalty of each card type
N_MELD_VALUE = 15       # meld value by run position 0..14
R_PENALTY = N_SCALARS
R_MELD_VALUE = R_PENALTY + N_PENALTY
R_N_ROUNDS = R_MELD_VALUE + N_MELD_VALUE
# per round r (0-based): deal size for 2..6 players, then threes and fours of the contract
R_ROUND_BASE = R_N_ROUNDS + 1
ROUND_STRIDE = 7
# then the best run windows of every held-position mask of a suit (``positions.run_tables``)
R_WINDOWS = R_ROUND_BASE + MAX_ROUNDS * ROUND_STRIDE
N_WINDOW_MASKS = 1 << 14
# then the fewest missing alone, 4 bits a mask (15: no window), 16 to a word (``fewest_of``)
R_FEWEST = R_WINDOWS + N_WINDOW_MASKS
R_VEC_LEN = R_FEWEST + N_WINDOW_MASKS // 16


def round_deal_index(round_index: int, n_players: int) -> int:
    return R_ROUND_BASE + round_index * ROUND_STRIDE + (n_players - 2)


def round_contract_index(round_index: int) -> int:
    """Index of the round's number of threes; the number of fours follows it."""
    return R_ROUND_BASE + round_index * ROUND_STRIDE + 5


__all__ = sorted(k for k in globals() if not k.startswith("_") and k not in ("annotations",))
