"""Sizes, field indices, phases, action ids and error codes of the compiled engine.

Everything here is a module-level int, so numba treats it as a compile-time constant.

State layout (all arrays have a leading batch dimension ``B``; one row = one game):

* ``gs[B, NG]`` int64 — per-game scalars, columns ``G_*`` (phase, seats, counters, RNG key parts).
* ``ps[B, P_MAX, NPS]`` int64 — per-player scalars, columns ``PS_*`` (laid down, calls used, total,
  and the engine's certificate of a hand known to have no lay-down, see ``plans._certificate_verdict``).
* ``hands[B, P_MAX, 53]`` int8 — card-type counts (copies of a natural are interchangeable).
* ``shown[B, P_MAX, 53]`` int8 — of each seat's cards, the copies every player saw it take and
  knows it still holds: taken from the discard pile (draw, call, denied call, upcard swap) or
  from the table (a joker swapped out, a card taken by a manipulation), less one for every copy of
  that type it has since put down or thrown (copies of a type cannot be told apart, so a thrown
  copy may have been the seen one).  Public knowledge: observation, card counting, search worlds.
* ``stock[B, DECK_MAX]`` int8 — card types, the top card is ``stock[g, gs[g, G_STOCK_N] - 1]``.
* ``disc[B, DECK_MAX]`` int8 and ``disc_by[B, DECK_MAX]`` int8 — discard pile bottom -> top
  (top = index ``G_DISC_N - 1``) and the seat that threw each card (-1 = the upcard); A41 needs
  to know who discarded the card that is on top *now*, also after a draw exposed an older card.
* ``minfo[B, M_MAX, NMI]`` int64 — table melds, columns ``MI_*``; ``gs[g, G_N_MELDS]`` are in use.
* ``mcards[B, M_MAX, L_MAX]`` int8 and ``mas[B, M_MAX, L_MAX]`` int8 — meld contents.  A run is
  stored *by position*: slot ``q`` (1..14, 1 = low ace, 14 = high ace) holds the card type lying
  there (a natural, or 52 for a joker) and ``mas`` the natural that position stands for, so a
  joker's meaning is fixed by where it lies.  A set is stored as a list ``0..len-1``; ``mas`` of
  a joker is the set's rank with a suit the set lacked when the joker was laid (for display; in
  Caribbean a set joker only has to name the rank).  Empty slots are -1.
* ``plan[B, PLAN_MELDS, PLAN_REC]`` int64 and ``plan_n[B, 2]`` int64 — the lay-down offered to
  the active player this turn (records of ``melds.search``; ``plan_n[g, 0]`` = number of melds or
  -1 = no plan, ``plan_n[g, 1]`` = cards placed).  Computed once when the active player enters the
  play phase (his hand cannot change before he lays down), so the legal mask stays cheap.
* ``work[B, W_LEN]`` int64 — the engine's search scratch (``W_*`` below): the engine asks for
  lay-downs several times a turn and must not allocate each time.  It holds nothing a rule reads;
  only the memo of the last hypothetical search (``W_MEMO_*``), which is checked before use.
* ``hscore[B, H_MAX, P_MAX]`` int64 and ``hwin[B, H_MAX]`` int64 — penalty scored in each hand
  of the match and the hand's winner (-1 = no winner: turn cap or void cap).
"""

from __future__ import annotations

from kalooki_sim.melds.search import WS_LEN

# ---- sizes
P_MAX = 6            # players
DECK_MAX = 164       # 3 packs + 8 jokers (largest deck docs/rules.md allows)
M_MAX = 32           # table melds (Caribbean: at most 6 players x 4 contract melds = 24)
L_MAX = 24           # slots per meld: runs use positions 0..14; sets <= 3*4 naturals + 8 jokers
H_MAX = 16           # hands of a match stored in hscore/hwin (Caribbean plays 9)
PLAN_MELDS = 12      # = melds.search.MAX_MELDS
PLAN_REC = 8         # = melds.search.REC
N_TYPES = 53
JOKER = 52
MANIP_MAX_PER_TURN = 8   # M1-M5 per turn (engine cap, D23: a take and a put-back could loop forever)

# ---- per-game scalars gs[g, G_*]
G_PHASE = 0          # PH_*
G_NP = 1             # number of players
G_ACTIVE = 2         # seat whose turn it is
G_TO_ACT = 3         # seat that must choose the next action (-1 when terminal)
G_DEALER = 4
G_HAND_NO = 5        # 0-based hand of the match
G_ROUND = 6          # 0-based contract round of this hand
G_LAST_HAND = 7      # the match ends after this hand at the latest (read by engine.match_flow)
G_TURN = 8           # turns played in this hand (cap: max_turns_per_hand)
G_STOCK_N = 9
G_DISC_N = 10
G_N_MELDS = 11
G_TAKEN = 12         # card type taken from the discard pile this turn (A40/A53), -1 none
G_CALLER = 13        # seat whose call waits for allow/deny, -1 none
G_CALL_DONE = 14     # a call was resolved (allowed or denied) this turn
G_AFTER_ALLOW = 15   # the active player allowed a call this turn (A8: he draws from the stock)
G_LAID_THIS_TURN = 16  # the active player laid down this turn (down-and-out multiplier)
G_TERMINAL = 17      # sticky: once 1, nothing changes any more
G_SEED = 18
G_GAME_ID = 19
G_DEAL_NO = 20       # deals so far in this match (voided deals included): RNG stream of the deal
G_RESHUFFLES = 21    # stock rebuilds in this deal
G_VOIDS = 22         # voided deals of the current hand (cap: max_void_replays)
G_STEPS = 23         # accepted actions in the whole match
G_LAST_EVENT = 24    # EV_* of the last step that ended or voided a hand (for logs and tests)
G_HANDS_DONE = 25    # hands scored so far
G_TOTAL_RESHUFFLES = 26
G_TOTAL_VOIDS = 27
G_TAKEN_MUST = 28    # 1: G_TAKEN was taken under a restriction and must be melded this turn
G_FREED = 29         # jokers freed by a swap (M6 retrieve) this turn and not yet placed
G_OWED = 30          # card type taken from the table by M1/M2/M4/M5 and not yet placed (-1 none)
G_MANIPS = 31        # table manipulations M1-M5 made in this turn (cap: MANIP_MAX_PER_TURN)
G_OPEN_DEBT = 32     # A43: opening points still to be laid off this turn (0 = none)
G_PLAN_DEBT = 33     # A43: the G_OPEN_DEBT that laying plan 0 would leave (0: plan 0 opens alone)
G_HAND_WINNER = 34   # seat that went out in the hand that just ended (-1: none)
G_HAND_HOW = 35      # how it ended (match.HOW_*): what the score sheet settles
NG = 36

# ---- per-player scalars ps[g, p, PS_*]
PS_LAID = 0          # has laid down (opened) in this hand
PS_CALLS = 1         # calls counted against max_calls_per_player (per game or per hand)
PS_CALLS_BASE = 2    # PS_CALLS when this hand was first dealt (restored if the deal is void)
PS_TOTAL = 3         # cumulative penalty points of the match
PS_CERT = 4          # 1 + laid when PS_CERT_HAND holds a hand known to have no lay-down, else 0
PS_CERT_HAND = 5     # ... its card counts (53): the engine's search certificate
NPS = PS_CERT_HAND + 53

# ---- table meld columns minfo[g, m, MI_*]
MI_KIND = 0          # MK_*
MI_OWNER = 1         # seat that laid it
MI_KEY = 2           # run: suit; set: rank index (0 = ace)
MI_LO = 3            # run: lowest position (1..14); set: 0
MI_HI = 4            # run: highest position; set: len - 1
MI_LEN = 5           # cards in the meld
MI_NJ = 6            # jokers in the meld
MI_T_LO = 7          # cards placed at the low end of this run in the current turn (A21)
MI_T_HI = 8          # cards placed at the high end of this run in the current turn (A21)
MI_T_ALL = 9         # cards laid off onto this run in the current turn (V2)
NMI = 10

# engine scratch work[g, :W_LEN]: a hand's counts, a hypothetical plan, the
# search's result slots and workspace; two table melds and a hand saved while a manipulation is
# tried (MELD_W = one meld as saved by fit._save_meld); the memo of the last hypothetical search
# (W_MEMO_*: is W_OUT the plan of the hand in W_HAND, for which laid flag and round, and of how
# many melds; plans._memo_plan); the hand before a manipulation (W_HELD)
MELD_W = NMI + 2 * L_MAX
W_HAND = 0
W_OUT = W_HAND + 53
W_BEST = W_OUT + PLAN_MELDS * PLAN_REC
W_WS = W_BEST + 4
W_MANIP = W_WS + WS_LEN
W_MEMO_OK = W_MANIP + 2 * MELD_W + 53
W_MEMO_LAID = W_MEMO_OK + 1
W_MEMO_ROUND = W_MEMO_OK + 2
W_MEMO_NM = W_MEMO_OK + 3
W_HELD = W_MEMO_OK + 4   # the active hand before a manipulation (what it gave up leaves ``shown``)
W_LEN = W_HELD + 53

MK_SET = 0
MK_RUN = 1
MK_JSET = 2          # all-joker set (American; produced only if the rules allow it)

# ---- phases
PH_CALL = 0          # call window: G_TO_ACT (a non-active player) may call the top discard or pass
PH_ALLOW = 1         # the active player allows or denies G_CALLER's call
PH_DRAW = 2          # the active player draws
PH_PLAY = 3          # the active player lays down / tacks / moves jokers / discards
PH_OVER = 4          # hand over (terminal for the engine; engine.match_flow may deal the next)
PH_UPSWAP = 5        # right after the deal: the dealer may swap the upcard (dealer_may_swap_upcard)
PHASE_NAMES = ("call", "allow", "draw", "play", "over", "upcard")

# ---- events (G_LAST_EVENT)
EV_NONE = 0
EV_WENT_OUT = 1      # a player emptied his hand; hand scored with a winner
EV_VOID = 2          # stock empty and nothing to rebuild: deal voided and replayed (A6/A52)
EV_VOID_CAP = 3      # void replays exhausted: hand scored as it stands, no winner
EV_TURN_CAP = 4      # max_turns_per_hand reached: hand scored as it stands, no winner
EV_KALOOKI = 5       # went out by a kalooki (kalooki_enabled; nothing laid before that turn, A24)
EVENT_NAMES = ("none", "went out", "void (redeal)", "void cap (scored as it stands)",
               "turn cap (scored as it stands)", "kalooki")

# ---- actions
A_PASS = 0
A_CALL = 1
A_ALLOW = 2
A_DENY = 3
A_DRAW_STOCK = 4
A_DRAW_DISCARD = 5
A_END_TURN = 6       # only when no discard and no tack is possible (A15/A54)
A_LAY = 7                               # lay down the offered plan
A_DISCARD = A_LAY + 1                   # + card type t (0..52)
A_TACK = A_DISCARD + N_TYPES            # + m * 53 + t  (card type t onto table meld m)
A_MOVE = A_TACK + M_MAX * N_TYPES       # + m * 15 + q  (joker at position q of run m: move it
                                        #   within the run, or retrieve it with joker_swap "retrieve")
A_SETSWAP = A_MOVE + M_MAX * 15         # + m * 4 + s  (natural of suit s replaces a joker of set m)
# table manipulation M1-M5 (table_manipulation; only after opening).  A card taken from the table is
# owed (G_OWED): it goes to the hand but must be placed before anything else happens.
A_SHIFT = A_SETSWAP + M_MAX * 4         # M1 + (m * 2 + side) * 2 + joker: add the natural of the next
                                        #   position (joker = 1: a joker) at the high end (side 0) or
                                        #   the low end (side 1) of run m, take the card at the other end
A_TAKE_END = A_SHIFT + M_MAX * 4        # M2 + m * 2 + side: take the high (0) / low (1) end card of run m
A_SPLIT = A_TAKE_END + M_MAX * 2        # M3 + m * 15 + q: a duplicate natural of position q splits run m
                                        #   into [lo..q] (meld m) and [q..hi] (a new meld)
A_SETSUB = A_SPLIT + M_MAX * 15         # M4 + m * 16 + s_add * 4 + s_take: the natural of suit s_add
                                        #   replaces the natural of suit s_take in 3-card set m
A_SETTAKE = A_SETSUB + M_MAX * 16       # M5 + m * 4 + s: take the natural of suit s from 4-card set m
A_UPSWAP = A_SETTAKE + M_MAX * 4        # + t: the dealer takes the upcard and turns up card t instead
                                        #   (phase PH_UPSWAP; A_PASS there keeps the upcard)
A_TACK_LOW = A_UPSWAP + N_TYPES         # + m: a joker laid off at the low end of run m; offered only when
                                        #   the high end could take it too (``A_TACK + m * 53 + JOKER``
                                        #   puts it at the high end when it can go there, else the low end)
N_ACTIONS = A_TACK_LOW + M_MAX

# ---- error codes returned by step/check_action (0 = legal)
E_OK = 0
E_TERMINAL = 1
E_BAD_ACTION = 2
E_WRONG_PHASE = 3
E_NOT_ELIGIBLE = 4
E_CANNOT_DENY = 5
E_CANNOT_ALLOW = 6
E_DISCARD_DRAW = 7
E_EMPTY_DISCARD = 8
E_AFTER_CALL_STOCK = 9
E_NO_CARD = 10
E_JOKER_DISCARD = 11
E_TAKEN_DISCARD = 12
E_NOT_LAID = 13
E_ALREADY_LAID = 14
E_NO_PLAN = 15
E_NO_MELD = 16
E_WRONG_RANK = 17
E_WRONG_SUIT = 18
E_GROWTH = 19
E_ADJACENT_JOKERS = 20
E_NO_FREE_POS = 21
E_NO_JOKER = 22
E_SWAP_DISABLED = 23
E_MUST_DISCARD = 24
E_CAN_DISCARD = 25
E_TABLE_FULL = 26
E_SET_FULL = 27
E_ACE_RULE = 28
E_SWAP_END = 29
E_PLAN_STALE = 30
E_NOT_ADJACENT = 31
E_HAND_EMPTY = 32
E_LAYOFF_LIMIT = 33
E_MUST_PLACE = 34
E_NOT_USABLE = 35
E_NO_MANIP = 36
E_MANIP_CAP = 37
E_BREAKS_MELD = 38
E_TAKE_JOKER = 39
E_KIND = 40
E_NOT_IN_MELD = 41
E_OPENING_SHORT = 42
E_CAN_TACK = 43
E_SWAP_FROM_TABLE = 44
E_ONE_END = 45

ERROR_TEXT = {
    E_OK: "legal",
    E_TERMINAL: "the match is over",
    E_BAD_ACTION: "no such action id",
    E_WRONG_PHASE: "not available in this phase",
    E_NOT_ELIGIBLE: "this player may not call (laid down, no calls left, discarded the card himself, "
                    "a call was already made this turn, or the call could not be resolved)",
    E_CANNOT_DENY: "a player who has laid down cannot deny a call",
    E_CANNOT_ALLOW: "the call cannot be allowed: the stock cannot supply the caller's extra card (A51)",
    E_DISCARD_DRAW: "may not draw from the discard pile (only before laying down)",
    E_EMPTY_DISCARD: "the discard pile is empty",
    E_AFTER_CALL_STOCK: "after allowing a call the active player draws from the stock (A8)",
    E_NO_CARD: "the player does not hold that card",
    E_JOKER_DISCARD: "jokers may not be discarded",
    E_TAKEN_DISCARD: "the card taken from the discard pile this turn may not be discarded again (A40/A53)",
    E_NOT_LAID: "only a player who has laid down may do this (A17)",
    E_ALREADY_LAID: "the player has already laid down in this hand (no new melds after the lay-down, A4)",
    E_NO_PLAN: "the hand cannot meet this round's contract",
    E_NO_MELD: "no such table meld",
    E_WRONG_RANK: "the card does not have the rank of this three",
    E_WRONG_SUIT: "the card does not have the suit of this four",
    E_GROWTH: "a four grows at the high end until its top is an ace, then only at the low end (A12)",
    E_ADJACENT_JOKERS: "two jokers may not lie next to each other in a four",
    E_NO_FREE_POS: "the four has no free position for it",
    E_NO_JOKER: "there is no joker at that position of a four",
    E_SWAP_DISABLED: "joker moves are not allowed by these rules (jokers in threes never move)",
    E_MUST_DISCARD: "going out requires a discard (going_out_requires_discard)",
    E_CAN_DISCARD: "the turn can only end without a discard when nothing can be discarded (A15/A54)",
    E_CAN_TACK: "the turn can only end without a discard when no card can be tacked either (A15/A54)",
    E_TABLE_FULL: "the table has no room for more melds",
    E_SET_FULL: "the three has reached its maximum size",
    E_ACE_RULE: "the ace rules do not allow that position",
    E_SWAP_END: "jokers at the end of a four may not be moved (joker_swap_from_run_end = false)",
    E_PLAN_STALE: "internal: the lay-down plan does not match the hand",
    E_NOT_ADJACENT: "the card does not continue the four at either end",
    E_HAND_EMPTY: "the hand is empty",
    E_LAYOFF_LIMIT: "lay-off limit of this run reached for this turn (layoff_max_per_run_end_per_turn / "
                    "layoff_max_per_run_per_turn, A21)",
    E_MUST_PLACE: "the card taken from the discard pile, from the table or the freed joker must be placed "
                  "in a meld first (only actions that place it are allowed until then)",
    E_NO_MANIP: "table manipulation is not allowed by these rules (table_manipulation = false)",
    E_MANIP_CAP: f"at most {MANIP_MAX_PER_TURN} table manipulations per turn (engine cap, D23)",
    E_BREAKS_MELD: "the meld would not stay legal (a run keeps >= run_min_size cards, a set >= 3, "
                   "both parts of a split >= run_min_size, enough naturals)",
    E_TAKE_JOKER: "a joker leaves the table only by a joker swap (end_take_may_take_joker = false, A19)",
    E_KIND: "wrong kind of meld for this move (M1-M3 need a run, M4 a 3-card set, M5 a 4-card set)",
    E_NOT_IN_MELD: "the meld holds no natural of that suit",
    E_OPENING_SHORT: "the opening is not complete: lay off cards worth the missing points first (A43; "
                     "only lay-offs that keep the opening reachable are allowed)",
    E_SWAP_FROM_TABLE: "a joker swap's natural comes from the hand (A45): the card taken from the table "
                       "must be placed back first, and it can never free a joker",
    E_ONE_END: "the joker can go to one end of this run only: 'tack JK on N' puts it there (the low-end "
               "lay-off is a separate move only when both ends are open, A21)",
    E_NOT_USABLE: "the discard may only be taken when it can be melded this turn (it must be in the best "
                  "lay-down with it, or fit a table meld)",
}
