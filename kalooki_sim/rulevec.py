"""Index layout of ``Rules.to_vector()``: the integer form of a variant that compiled kernels read.

Every variant shares one compiled kernel because the rules arrive as data.  Scalars come first
(bools as 0/1, enums as the index of the value in ``rules.ENUMS``, ``None`` as -1), then the value
tables, the per-round deal sizes and contracts, and a table derived from the run rules (the best
run windows of every suit pattern, ``R_WINDOWS``).  Module-level ints are compile-time constants
for numba, so kernels write ``rv[R_SET_MIN_SIZE]``.
"""

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

R_PLAYERS_MIN = 0
R_PLAYERS_MAX = 1
R_N_DECKS = 2
R_N_JOKERS = 3
R_PLAY_DIRECTION = 4
R_DEALER_ROTATION = 5
R_N_HANDS = 6
R_UPCARD = 7
R_DEALER_MAY_SWAP_UPCARD = 8
R_CUT_JOKER_TO_CUTTER = 9
R_ACE_HIGH = 10
R_ACE_LOW = 11
R_ACE_WRAP = 12
R_ALLOW_BOTH_ACES_IN_RUN = 13
R_ACE_LOW_MELD_VALUE = 14
R_JOKER_MELD_VALUE = 15
R_JOKER_SET_MELD_VALUE = 16
R_SET_MIN_SIZE = 17
R_SET_MAX_SIZE = 18
R_SET_ALLOW_DUPLICATE_SUIT = 19
R_SET_MIN_NATURALS = 20
R_RUN_MIN_SIZE = 21
R_RUN_MIN_NATURALS = 22
R_RUN_ADJACENT_JOKERS = 23
R_ALLOW_ALL_JOKER_MELD = 24
R_DECLARE_JOKER_MEANING = 25
R_OPENING_MODE = 26
R_CONTRACT_DISTINCT_SET_RANKS = 27
R_CONTRACT_DISTINCT_RUN_SUITS = 28
R_CONTRACT_ALLOW_EXTRA_MELDS = 29
R_OPENING_MIN_POINTS = 30
R_OPENING_COUNTS_LAYOFFS = 31
R_NEW_MELDS_AFTER_OPENING = 32
R_KALOOKI_EXEMPT_FROM_OPENING_MIN = 33
R_DISCARD_DRAW_BEFORE_OPENING = 34
R_DISCARD_DRAW_AFTER_OPENING = 35
R_FIRST_TURN_FREE_UPCARD = 36
R_FORBID_DISCARD_OF_TAKEN_DISCARD = 37
R_ALLOW_DISCARD_JOKER = 38
R_ANNOUNCE_LOW_HAND = 39
R_LAYOFF_REQUIRES_OPENED = 40
R_LAYOFF_MAX_PER_RUN_END_PER_TURN = 41
R_LAYOFF_MAX_PER_RUN_PER_TURN = 42
R_RUN_GROWTH_RULE = 43
R_TABLE_MANIPULATION = 44
R_TAKEN_CARDS_MUST_BE_USED_SAME_TURN = 45
R_JOKER_SWAP = 46
R_JOKER_SWAP_REQUIRES_OPENED = 47
R_FREED_JOKER_MUST_BE_USED_SAME_TURN = 48
R_JOKER_SWAP_FROM_RUN_END = 49
R_SET_JOKER_SWAP = 50
R_JOKERS_LOCKED_IN_4CARD_SET = 51
R_END_TAKE_MAY_TAKE_JOKER = 52
R_OTHERS_MAY_LAYOFF_AFTER_OUT = 53
R_GOING_OUT_REQUIRES_DISCARD = 54
R_KALOOKI_ENABLED = 55
R_KALOOKI_PENALTY_MULTIPLIER = 56
R_DOWN_AND_OUT_MULTIPLIER = 57
R_CALLS_ENABLED = 58
R_MAX_CALLS_PER_PLAYER = 59
R_CALLS_LIMIT_SCOPE = 60
R_COUNT_DENIED_CALLS = 61
R_CALLS_PER_TURN = 62
R_CALL_PENALTY_CARDS = 63
R_CALL_PRIORITY = 64
R_DENY_REQUIRES_NOT_OPENED = 65
R_AFTER_ALLOWED_CALL_ACTIVE_DRAWS = 66
R_STOCK_EXHAUSTION = 67
R_MAX_RESHUFFLES_PER_HAND = 68
R_KEEP_TOP_DISCARD_ON_RESHUFFLE = 69
R_MAX_VOID_REPLAYS = 70
R_MAX_TURNS_PER_HAND = 71
R_MATCH_MODE = 72
R_ELIMINATION_AT = 73
R_BUY_BACK_LIMIT = 74
R_BUY_BACK_MIN_OTHER_ACTIVE = 75
R_BUY_BACK_RESET = 76
R_BUY_BACK_ORDER = 77
R_STAKE_ANTE = 78
R_STAKE_RIP = 79
R_STAKE_KALOOKI = 80
R_STAKE_BUY_BACK = 81
R_PAY_PER_PENALTY_POINT = 82
R_PAY_PER_CARD = 83
R_PAY_PER_JOKER = 84
R_KALOOKI_PAYMENT_MULTIPLIER = 85
R_TIE_RULE = 86

N_SCALARS = 87
MAX_ROUNDS = 16
# penalty of each card type (53), meld value by run position 0..14 (15)
R_PENALTY = 87
R_MELD_VALUE = 87 + 53
R_N_ROUNDS = 87 + 53 + 15
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
