"""Compiled Kalooki engine: deal, legal mask, step, scoring (RULES.md §2.1-§2.6, §4, §5).

One kernel set plays Caribbean Kalooki (contracts, calls) and the Kalooki 40 family (points
openings, restricted discard draws, lay-off limits, table manipulation M1-M6, kalooki, the
American upcard swap, A43 openings completed by lay-offs, V1), all read from the rules vector
(decisions in docs/rules-decisions.md D9-D26).

Every kernel works on one game ``g`` of a batch held as plain arrays (layout in ``layout.py``), so
a closed-loop simulator can run ``prange`` over games and call ``legal_mask``/``step`` per game
without any Python objects.  All kernels share the argument prefix

    gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g

(``state.State.arrays()`` returns the first 13 in this order; ``rv`` is ``Rules.to_vector()``).

Turn structure (one turn of the active player, phases ``PH_*``):

1. **call window** (``PH_CALL``): the top discard is offered, in play order after the active
   player, to each eligible player (not laid down, calls left, not the player who discarded it,
   A41; the upcard has no discarder, A39).  The first ``call`` stops the window (one call per turn,
   A9); everyone passing leads to the draw.  A player is only offered the call when it could be
   resolved: a laid-down active player must allow, so if the stock cannot supply the caller's
   extra card (A51) the call is not offered at all.
2. **allow/deny** (``PH_ALLOW``): allow -> the caller takes the card and ``call_penalty_cards``
   stock cards, his call counts; the active player then draws from the stock (A8).  Deny (only if
   the active player has not laid down) -> the active player takes the card as his draw.
3. **draw** (``PH_DRAW``): stock, or the top discard if the player has not laid down.
4. **play** (``PH_PLAY``): lay down the contract (plan 0 = exact best lay-down from the meld
   search), tack cards, move jokers in fours, then discard (no jokers; not the card just taken
   from the pile unless another copy is held, A40/A53).  With nothing discardable the turn may
   end without a discard (A15/A54).  An empty hand ends the hand at once (A3).

Points variants (knobs, not variant names): plan 0 is the exact best opening worth at least
``opening_min_points`` (after the opening: the best new melds of any value); the top discard is
offered under ``discard_draw_*_opening`` restrictions only when the card can be melded this turn,
and until it is, only actions that place it are legal (``G_TAKEN_MUST``); lay-offs go on either
end (``run_growth_rule``) within the per-turn limits of each run (``MI_T_*`` counters, A21/V2);
``joker_swap = "retrieve"`` turns the ``A_MOVE`` actions into M6 swaps (natural from the hand for
the joker, which goes to the hand) and ``A_SETSWAP`` swaps a joker of a 3-card set; a freed joker
must be placed before the turn can end (``G_FREED``); a hand won by a player who laid his first
cards in that turn is a kalooki (``EV_KALOOKI``, ``kalooki_penalty_multiplier``).  Table
manipulation M1-M5 (``A_SHIFT`` .. ``A_SETTAKE``) puts a taken card in the hand as *owed*
(``G_OWED``): only actions that place it are legal until it is placed, and a take is only offered
when it can be placed at once.  ``dealer_may_swap_upcard`` starts a hand with phase ``PH_UPSWAP``
(the dealer keeps or swaps the upcard); ``opening_counts_layoffs`` lets an opening short of the
minimum be completed by lay-offs in the same turn (``G_OPEN_DEBT``).

The stock is rebuilt from the discards (all but the top card) when a draw needs it (A6); if
nothing can be rebuilt the deal is void and replayed by the same dealer (A52) up to
``max_void_replays`` times, after which the hand is scored as it stands with no winner.  A hand
that reaches ``max_turns_per_hand`` is also scored as it stands, so no game can loop forever.

Illegal actions return an error code (``layout.E_*``) and leave the state untouched: ``step``
first runs ``check_action`` (the single definition of legality, also used by ``legal_mask``) and
only then mutates.
"""

from __future__ import annotations

import numpy as np

from ..bits import word8
from ..jit import njit
from ..melds.legality import KIND_RUN, KIND_SET, meld_best_value, run_max_len
from ..melds.positions import pos_type
from ..melds.search import best_lay_down_known, contract_out_of_reach, natural_meldable
from ..rng import rng_below, rng_key, rng_uniform, shuffle_prefix
from ..rulevec import (
    R_ACE_HIGH, R_ACE_LOW, R_AFTER_ALLOWED_CALL_ACTIVE_DRAWS, R_ALLOW_BOTH_ACES_IN_RUN,
    R_ALLOW_DISCARD_JOKER, R_CALL_PENALTY_CARDS, R_CUT_JOKER_TO_CUTTER, R_FIRST_TURN_FREE_UPCARD,
    R_FREED_JOKER_MUST_BE_USED_SAME_TURN, R_JOKERS_LOCKED_IN_4CARD_SET, R_KALOOKI_ENABLED,
    R_KALOOKI_PENALTY_MULTIPLIER, R_LAYOFF_MAX_PER_RUN_END_PER_TURN, R_LAYOFF_MAX_PER_RUN_PER_TURN,
    R_SET_JOKER_SWAP, R_CALLS_ENABLED, R_CALLS_LIMIT_SCOPE,
    R_CALLS_PER_TURN, R_COUNT_DENIED_CALLS, R_DEALER_ROTATION, R_DENY_REQUIRES_NOT_OPENED,
    R_DISCARD_DRAW_AFTER_OPENING, R_DISCARD_DRAW_BEFORE_OPENING, R_DOWN_AND_OUT_MULTIPLIER,
    R_FORBID_DISCARD_OF_TAKEN_DISCARD, R_GOING_OUT_REQUIRES_DISCARD, R_JOKER_SWAP,
    R_JOKER_SWAP_FROM_RUN_END, R_JOKER_SWAP_REQUIRES_OPENED, R_KEEP_TOP_DISCARD_ON_RESHUFFLE,
    R_LAYOFF_REQUIRES_OPENED, R_MAX_CALLS_PER_PLAYER, R_MAX_RESHUFFLES_PER_HAND,
    R_MAX_TURNS_PER_HAND, R_MAX_VOID_REPLAYS, R_N_DECKS, R_N_HANDS, R_N_JOKERS, R_N_ROUNDS,
    R_NEW_MELDS_AFTER_OPENING, R_OPENING_MIN_POINTS, R_OPENING_MODE,
    R_PENALTY, R_PLAY_DIRECTION, R_ROUND_BASE, R_RUN_ADJACENT_JOKERS, R_RUN_GROWTH_RULE,
    R_SET_ALLOW_DUPLICATE_SUIT, R_SET_MAX_SIZE, R_STOCK_EXHAUSTION, R_TIE_RULE, R_UPCARD,
    ROUND_STRIDE, R_END_TAKE_MAY_TAKE_JOKER, R_RUN_MIN_SIZE, R_TABLE_MANIPULATION,
    R_TAKEN_CARDS_MUST_BE_USED_SAME_TURN, R_KALOOKI_EXEMPT_FROM_OPENING_MIN, R_DEALER_MAY_SWAP_UPCARD,
    R_JOKER_SET_MELD_VALUE, R_MELD_VALUE, R_OPENING_COUNTS_LAYOFFS,
)
from ..match import HOW_DOWN_AND_OUT, HOW_KALOOKI, HOW_RIP, HOW_VOID, penalty_multiplier
from ..views import c_view
from .layout import (
    A_ALLOW, A_CALL, A_DENY, A_DISCARD, A_DRAW_DISCARD, A_DRAW_STOCK, A_END_TURN, A_LAY, A_MOVE,
    A_PASS, A_SETSWAP, A_TACK, DECK_MAX, E_LAYOFF_LIMIT, E_MUST_PLACE, E_NOT_USABLE, EV_KALOOKI,
    G_FREED, G_TAKEN_MUST, MI_T_ALL, MI_T_HI, MI_T_LO, E_ACE_RULE, E_ADJACENT_JOKERS, E_AFTER_CALL_STOCK, E_ALREADY_LAID,
    E_BAD_ACTION, E_CAN_DISCARD, E_CANNOT_ALLOW, E_CANNOT_DENY, E_DISCARD_DRAW, E_EMPTY_DISCARD,
    E_GROWTH, E_HAND_EMPTY, E_JOKER_DISCARD, E_MUST_DISCARD, E_NO_CARD, E_NO_FREE_POS, E_NO_JOKER,
    E_NO_MELD, E_NO_PLAN, E_NOT_ADJACENT, E_NOT_ELIGIBLE, E_NOT_LAID, E_PLAN_STALE, E_SET_FULL,
    E_SWAP_DISABLED, E_SWAP_END, E_TABLE_FULL, E_TAKEN_DISCARD, E_TERMINAL, E_WRONG_PHASE,
    E_WRONG_RANK, E_WRONG_SUIT, EV_NONE, EV_TURN_CAP, EV_VOID, EV_VOID_CAP, EV_WENT_OUT,
    G_ACTIVE, G_AFTER_ALLOW, G_CALL_DONE, G_CALLER, G_DEAL_NO, G_DEALER, G_DISC_N, G_GAME_ID,
    G_HAND_HOW, G_HAND_NO, G_HAND_WINNER, G_HANDS_DONE, G_LAID_THIS_TURN, G_LAST_EVENT, G_LAST_HAND, G_N_MELDS, G_NP,
    G_PHASE, G_RESHUFFLES, G_ROUND, G_SEED, G_STEPS, G_STOCK_N, G_TAKEN, G_TERMINAL, G_TO_ACT,
    G_TOTAL_RESHUFFLES, G_TOTAL_VOIDS, G_TURN, G_VOIDS, H_MAX, JOKER, K_PLANS, L_MAX, M_MAX,
    MI_HI, MI_KEY, MI_KIND, MI_LEN, MI_LO, MI_NJ, MI_OWNER, MK_JSET, MK_RUN, MK_SET, N_ACTIONS,
    N_TYPES, P_MAX, PH_ALLOW, PH_CALL, PH_DRAW, PH_OVER, PH_PLAY, PLAN_MELDS, PLAN_REC, PS_CALLS,
    PS_CERT, PS_CERT_HAND,
    MELD_W, W_BEST, W_FLAT, W_HAND, W_LEN, W_MANIP, W_MEMO_LAID, W_MEMO_NM, W_MEMO_OK, W_MEMO_ROUND,
    W_OUT, W_WS,
    PS_CALLS_BASE, PS_LAID, PS_TOTAL, A_SETSUB, A_SETTAKE, A_SHIFT, A_SPLIT, A_TAKE_END, E_BREAKS_MELD,
    E_KIND, E_MANIP_CAP, E_NO_MANIP, E_NOT_IN_MELD, E_TAKE_JOKER, G_MANIPS, G_OWED,
    MANIP_MAX_PER_TURN, NMI, A_UPSWAP, PH_UPSWAP, E_OPENING_SHORT, G_OPEN_DEBT, G_PLAN_DEBT,
)

# RNG streams of one game (rng.rng_key(seed, game_id, stream)).  Deal d uses stream
# d*STREAM_STRIDE, its k-th stock rebuild d*STREAM_STRIDE + 1 + k.  Streams from
# STREAM_POLICY_BASE up are free for policies (random agents, exploration).
STREAM_STRIDE = 1 << 16
STREAM_DEALER = 1 << 40
STREAM_POLICY_BASE = 1 << 41

# plan record kinds of melds.search
_K_SET = 0
_K_RUN = 1
_K_JSET = 2


# ------------------------------------------------------------------------------------------------
# small helpers


@njit(_nrt=False)
def _dir(rv):
    """Seat step of the direction of play: "left" = next seat (+1)."""
    return 1 if rv[R_PLAY_DIRECTION] == 0 else -1


@njit(_nrt=False)
def _seat_after(seat, k, n, d):
    """The seat ``k`` steps of ``d`` (+1/-1) after ``seat`` among ``n``.  Callers step less than a
    round from a seat, so one comparison replaces the two divisions of the modulo."""
    x = seat + d * k
    if 0 <= x < n:
        return x
    if n <= x < 2 * n:
        return x - n
    if -n <= x < 0:
        return x + n
    return (x % n + n) % n


@njit(_nrt=False)
def _steps_between(seat, other, n, d):
    """How many steps of ``d`` (+1/-1) lead from ``seat`` to ``other`` among ``n`` (0..n-1): the
    inverse of ``_seat_after``, with a comparison instead of two modulos."""
    x = (other - seat) * d
    return x + n if x < 0 else x


@njit(_nrt=False, inline="always")     # a few vector adds: cheaper than a call
def _hand_count(hands, g, p):
    c = 0
    for t in range(N_TYPES):
        c += hands[g, p, t]
    return c


@njit(_nrt=False, inline="always")
def _holds_any(hands, g, p):
    """``_holds_more_than(.., 0)``: seven 8-byte loads of the 53 int8 counts, or'ed (counts are
    never negative), instead of their sum (a vector reduction, inlined at every call)."""
    hand = hands[g, p]
    return (word8(hand, 0) | word8(hand, 8) | word8(hand, 16) | word8(hand, 24) | word8(hand, 32)
            | word8(hand, 40) | word8(hand, N_TYPES - 8)) != 0


@njit(_nrt=False, inline="always")
def _holds_more_than(hands, g, p, k):
    """``_hand_count(..) > k`` (legality checks ask for k = 0, 1 on every action).  The whole count,
    inline, is cheaper than a scan that stops early and a call."""
    return _hand_count(hands, g, p) > k


@njit(_nrt=False)
def hand_penalty_of(hands, rv, g, p):
    """Penalty of the cards player ``p`` holds (rules penalty table)."""
    s = 0
    for t in range(N_TYPES):
        s += hands[g, p, t] * rv[R_PENALTY + t]
    return s


@njit(_nrt=False)
def _rec_count(rec, i):
    """Cards placed by meld record ``rec[i]`` (``melds.search`` record layout)."""
    kind = rec[i, 0]
    if kind == _K_SET:
        return rec[i, 2] + rec[i, 3] + rec[i, 4] + rec[i, 5] + rec[i, 6]
    if kind == _K_RUN:
        return rec[i, 3] - rec[i, 2] + 1
    return rec[i, 6]


@njit(_nrt=False)
def _rec_cards(plan, g, k, i):
    return _rec_count(plan[g, k], i)


# ------------------------------------------------------------------------------------------------
# stock and discard pile


@njit(_nrt=False)
def _rebuild_permitted(gs, rv, g):
    """May the stock be rebuilt now (stock_exhaustion, max_reshuffles_per_hand)?"""
    if rv[R_STOCK_EXHAUSTION] == 2:          # void_immediately
        return False
    mx = rv[R_MAX_RESHUFFLES_PER_HAND]
    if mx >= 0 and gs[g, G_RESHUFFLES] >= mx:
        return False
    return True


@njit(_nrt=False)
def _rebuild(gs, stock, disc, disc_by, rv, g, keep_top):
    """Turn the discard pile (all but its top card if ``keep_top``) into a shuffled stock.

    Called only when the stock is empty.  Returns False when rebuilding is not permitted or
    there is nothing to rebuild from (the caller then voids the deal, A52).
    """
    if not _rebuild_permitted(gs, rv, g):
        return False
    n = gs[g, G_DISC_N]
    k = n - 1 if keep_top else n
    if k <= 0:
        return False
    for i in range(k):
        stock[g, i] = disc[g, i]
    if keep_top:
        disc[g, 0] = disc[g, n - 1]
        disc_by[g, 0] = disc_by[g, n - 1]
        gs[g, G_DISC_N] = 1
    else:
        gs[g, G_DISC_N] = 0
    key = rng_key(gs[g, G_SEED], gs[g, G_GAME_ID],
                  gs[g, G_DEAL_NO] * STREAM_STRIDE + 1 + gs[g, G_RESHUFFLES])
    shuffle_prefix(stock[g], k, key)
    gs[g, G_STOCK_N] = k
    gs[g, G_RESHUFFLES] += 1
    gs[g, G_TOTAL_RESHUFFLES] += 1
    return True


@njit(_nrt=False)
def _pop_stock(gs, stock, disc, disc_by, rv, g, keep_top):
    """Top stock card (rebuilding the stock first if it is empty); -1 if none can be had."""
    if gs[g, G_STOCK_N] == 0:
        if not _rebuild(gs, stock, disc, disc_by, rv, g, keep_top):
            return -1
    n = gs[g, G_STOCK_N] - 1
    gs[g, G_STOCK_N] = n
    return np.int64(stock[g, n])


# ------------------------------------------------------------------------------------------------
# calls


@njit(_nrt=False)
def _allow_ok(gs, rv, g):
    """Can the caller's extra stock cards be supplied (A51: rebuild from the pile minus the called card)?"""
    need = rv[R_CALL_PENALTY_CARDS]
    have = gs[g, G_STOCK_N]
    if have >= need:
        return True
    if _rebuild_permitted(gs, rv, g) and have + gs[g, G_DISC_N] - 1 >= need:
        return True
    return False


@njit(_nrt=False)
def _deny_ok(gs, ps, rv, g):
    if rv[R_DENY_REQUIRES_NOT_OPENED] == 1 and ps[g, gs[g, G_ACTIVE], PS_LAID] == 1:
        return False
    return True


@njit(_nrt=False, inline="always")     # asked for every seat after every discard and pass
def _caller_ok(gs, ps, disc_by, rv, g, seat):
    """May ``seat`` call the top discard in this turn's call window?"""
    if rv[R_CALLS_ENABLED] == 0 or rv[R_CALLS_PER_TURN] < 1:
        return False
    if gs[g, G_CALL_DONE] != 0:
        return False
    n = gs[g, G_DISC_N]
    if n == 0:
        return False
    if seat < 0 or seat == gs[g, G_ACTIVE]:
        return False
    if ps[g, seat, PS_LAID] == 1:
        return False
    if ps[g, seat, PS_CALLS] >= rv[R_MAX_CALLS_PER_PLAYER]:
        return False
    if disc_by[g, n - 1] == seat:            # A41 / A55
        return False
    if not _deny_ok(gs, ps, rv, g) and not _allow_ok(gs, rv, g):
        return False
    return True


@njit(_nrt=False, inline="always")     # after every discard and pass: cheaper than a call
def _next_caller(gs, ps, disc_by, rv, g, offset):
    """First eligible caller at play-order offset >= ``offset`` from the active player, else -1."""
    n = gs[g, G_NP]
    d = _dir(rv)
    act = gs[g, G_ACTIVE]
    for i in range(offset, n):
        seat = _seat_after(act, i, n, d)
        if _caller_ok(gs, ps, disc_by, rv, g, seat):
            return seat
    return -1


# ------------------------------------------------------------------------------------------------
# turn and hand flow


@njit(_nrt=False)
def _done_laying(ps, rv, g, p):
    """Has seat ``p`` laid down under rules that allow no new melds after it?  Then he has no
    plan to lay, and nothing to search for."""
    return ps[g, p, PS_LAID] == 1 and rv[R_NEW_MELDS_AFTER_OPENING] == 0


@njit(_nrt=False)
def _clear_plans(plan_n, g):
    for k in range(K_PLANS):
        plan_n[g, k, 0] = -1
        plan_n[g, k, 1] = 0


@njit(_nrt=False, inline="always")     # once a turn: cheaper than a call with seven arrays
def _start_turn(gs, ps, disc_by, minfo, plan_n, rv, g, seat):
    gs[g, G_ACTIVE] = seat
    gs[g, G_TAKEN] = -1
    gs[g, G_TAKEN_MUST] = 0
    gs[g, G_FREED] = 0
    gs[g, G_OWED] = -1
    gs[g, G_MANIPS] = 0
    gs[g, G_OPEN_DEBT] = 0
    gs[g, G_PLAN_DEBT] = 0
    for m in range(gs[g, G_N_MELDS]):
        minfo[g, m, MI_T_LO] = 0
        minfo[g, m, MI_T_HI] = 0
        minfo[g, m, MI_T_ALL] = 0
    gs[g, G_CALLER] = -1
    gs[g, G_CALL_DONE] = 0
    gs[g, G_AFTER_ALLOW] = 0
    gs[g, G_LAID_THIS_TURN] = 0
    _clear_plans(plan_n, g)
    c = _next_caller(gs, ps, disc_by, rv, g, 1)
    if c >= 0:
        gs[g, G_PHASE] = PH_CALL
        gs[g, G_TO_ACT] = c
    else:
        gs[g, G_PHASE] = PH_DRAW
        gs[g, G_TO_ACT] = seat


@njit(_nrt=False)
def _best_lay_down(hand, rv, round_idx, min_points, out, work, must, in_reach):
    """Best lay-down of the hand counts ``hand`` (int64[53]) into ``out`` ([PLAN_MELDS, PLAN_REC]):
    the rules' opening when ``min_points`` < 0, else new melds worth at least ``min_points`` (1:
    any melds at all).  ``work``: the game's search scratch, ``plan[g, 0, PLAN_MELDS:]`` flattened
    (layout ``W_*``; its hand and plan slots are not touched).  ``must``: a natural every such
    lay-down places every copy of (``_certificate_verdict``), or -1.  ``in_reach``: the caller
    found ``contract_out_of_reach`` false for this hand.
    Returns (number of melds or -1, their opening value)."""
    best = work[W_BEST:W_WS]
    if best_lay_down_known(hand, rv, round_idx, min_points, np.int64(must), in_reach, out, best,
                           work[W_WS:W_LEN]) < 0:
        return -1, 0
    return best[1], best[2]


@njit(_nrt=False)
def _search_plan(hand, laid, rv, round_idx, out, work, must, in_reach):
    """Best lay-down of the hand counts ``hand`` (int64[53]) into ``out`` ([PLAN_MELDS, PLAN_REC]).

    Not laid down: the opening (contract, or new melds worth >= opening_min_points).  Laid down:
    any new melds (points mode with minimum 1).  ``must``: ``_certificate_verdict``'s natural (it
    speaks of those lay-downs, not of the kalooki below), or -1.  ``in_reach``: the caller found
    ``contract_out_of_reach`` false for this hand.  Returns the number of melds, -1 if none."""
    nm, _ = _best_lay_down(hand, rv, round_idx, 1 if laid else -1, out, work, must, in_reach)
    if nm >= 0:
        return nm
    if laid or rv[R_KALOOKI_EXEMPT_FROM_OPENING_MIN] == 0 or rv[R_OPENING_MODE] != 1:
        return -1
    # V1: a kalooki needs no opening minimum -- offer melds of any value that leave at most the
    # final discard in hand (so the turn ends with an empty hand)
    nm, _ = _best_lay_down(hand, rv, round_idx, 1, out, work, -1, np.bool_(False))
    if nm < 0:
        return -1
    held = 0
    for t in range(N_TYPES):
        held += hand[t]
    placed = 0
    for i in range(nm):
        placed += _rec_count(out, i)
    return nm if placed >= held - 1 else -1


@njit(_nrt=False)
def _plan_count(rec, nm, t):
    """Cards of type ``t`` (a natural, or JOKER) that the plan records ``rec[:nm]`` place."""
    c = 0
    for i in range(nm):
        kind = rec[i, 0]
        if kind == _K_SET:
            if t == JOKER:
                c += rec[i, 6]
            elif rec[i, 1] == t % 13:
                c += rec[i, 2 + t // 13]
        elif kind == _K_RUN:
            s = rec[i, 1]
            lo = rec[i, 2]
            hi = rec[i, 3]
            jm = rec[i, 4]
            for q in range(lo, hi + 1):
                joker = (jm >> q) & 1
                if t == JOKER:
                    c += joker
                elif joker == 0 and pos_type(s, q) == t:
                    c += 1
        elif t == JOKER:
            c += rec[i, 6]
    return c


@njit(_nrt=False)
def could_join_new_meld(hands, rv, g, p, c, held):
    """Necessary condition for natural ``c`` to go into a new meld with cards of seat ``p``'s hand:
    the search's own filter (``melds.search.natural_meldable``: enough naturals of its rank for a
    set, or a run window through it with no more gaps than jokers).  ``held`` = 1 when one copy of
    ``c`` in ``hands`` is ``c`` itself, 0 when ``c`` would come on top (added for the test and
    taken back).

    Cheap, and false for most cards, so the exact lay-down search is skipped for hopeless ones
    (tests check that it holds whenever the search melds the card)."""
    if held == 1:
        return natural_meldable(hands[g, p], rv, c)
    hands[g, p, c] += 1
    ok = natural_meldable(hands[g, p], rv, c)
    hands[g, p, c] -= 1
    return ok


# ``_certificate_verdict``: the hand has no lay-down
CERT_NO_PLAN = -2


@njit(_nrt=False)
def _certificate_verdict(ps, rv, g, p, hand, laid):
    """What seat ``p``'s certificate (``_certify_no_plan``) tells, without a search, of the
    lay-downs of ``hand`` (the opening, or new melds after it, as ``laid`` says): ``CERT_NO_PLAN``
    (there is none), a natural t (every one places every copy of t), or -1 (nothing).

    Lay-downs are monotone: a lay-down of a hand is one of every hand holding it.  So no sub-hand
    of a certified hand F has one; and a hand with one card of type c more than F has only
    lay-downs that place every copy of c (one placing fewer lies within F), so none if c fits in
    no meld with the hand's cards (``melds.search.natural_meldable``, the search's own filter).
    That settles most searches of a hand that changes by a draw and a discard, and the search
    skips the branches keeping c in hand for the rest.

    A hand settled by the second argument becomes the certificate (as a searched hand without a
    lay-down does): the next hand to ask is this one after a discard and a draw, one card away
    from it but two from F."""
    if ps[g, p, PS_CERT] != 1 + laid:
        return -1
    # the cards held beyond F, and the type of the last of them (no branch per type)
    more = 0
    extra = -1
    for t in range(N_TYPES):
        d = max(hand[t] - ps[g, p, PS_CERT_HAND + t], 0)
        more += d
        extra = t if d > 0 else extra
    if more == 0:
        return CERT_NO_PLAN
    if more > 1 or extra == JOKER:
        return -1
    if natural_meldable(hand, rv, extra):
        return extra
    _certify_no_plan(ps, rv, g, p, hand, laid)
    return CERT_NO_PLAN


@njit(_nrt=False)
def _certify_no_plan(ps, rv, g, p, hand, laid):
    """Remember that ``hand`` has no lay-down for seat ``p`` (until the next deal).  Not under V1
    before the opening: a kalooki needs no minimum but must meld the whole hand, which is not
    monotone."""
    if not laid and rv[R_KALOOKI_EXEMPT_FROM_OPENING_MIN] == 1 and rv[R_OPENING_MODE] == 1:
        return
    ps[g, p, PS_CERT] = 1 + laid
    for t in range(N_TYPES):
        ps[g, p, PS_CERT_HAND + t] = hand[t]


@njit(_nrt=False)
def _hand_plan_places(hands, ps, rv, gs, plan, g, p, t_add, t_rem, want):
    """Would the best lay-down of seat ``p``'s hand plus ``t_add`` minus ``t_rem`` (-1 = none) place
    a card of type ``want``?  (Offer checks for restricted discard draws and joker swaps: the
    engine computes the same plan from the same hand once the action is taken.)"""
    if _done_laying(ps, rv, g, p):
        return False
    laid = ps[g, p, PS_LAID] == 1
    if want != JOKER and t_rem < 0 and (t_add == want or t_add < 0):
        if not could_join_new_meld(hands, rv, g, p, want, 0 if t_add == want else 1):
            return False
    work = c_view(plan[g, 0, PLAN_MELDS:], (W_FLAT,))     # search scratch (layout W_*)
    out = c_view(work[W_OUT:W_BEST], (PLAN_MELDS, PLAN_REC))
    if _memo_holds(hands, g, p, t_add, t_rem, laid, gs[g, G_ROUND], work):
        # the same question again (greedy's table takes ask it after the take's own check did)
        nm = work[W_MEMO_NM]
        return nm >= 0 and _plan_count(out, nm, want) > 0
    work[W_MEMO_OK] = 0
    hand = work[W_HAND:W_OUT]
    for t in range(N_TYPES):
        hand[t] = hands[g, p, t]
    if t_add >= 0:
        hand[t_add] += 1
    if t_rem >= 0:
        hand[t_rem] -= 1
    must = _certificate_verdict(ps, rv, g, p, hand, laid)
    if must == CERT_NO_PLAN:
        return False
    nm = _search_plan(hand, laid, rv, gs[g, G_ROUND], out, work, must, np.bool_(False))
    work[W_MEMO_OK] = 1
    work[W_MEMO_LAID] = 1 if laid else 0
    work[W_MEMO_ROUND] = gs[g, G_ROUND]
    work[W_MEMO_NM] = nm
    if nm < 0:
        if t_add >= 0 and t_rem < 0:
            # true whether or not the card is taken, and of every hand within (the seat's own);
            # not for hands a caller changed otherwise (a joker swap tried and taken back)
            _certify_no_plan(ps, rv, g, p, hand, laid)
        return False
    return _plan_count(out, nm, want) > 0


@njit(_nrt=False)
def _memo_holds(hands, g, p, t_add, t_rem, laid, rnd, work):
    """Was the last hypothetical search (``_hand_plan_places``) of seat ``p``'s hand plus ``t_add``
    minus ``t_rem`` (-1 = none), with this laid flag and round?  Its plan is then in ``work``: a
    plan is a pure function of those."""
    if (work[W_MEMO_OK] != 1 or work[W_MEMO_LAID] != (1 if laid else 0)
            or work[W_MEMO_ROUND] != rnd):
        return False
    for t in range(N_TYPES):
        h = np.int64(hands[g, p, t]) + (1 if t == t_add else 0) - (1 if t == t_rem else 0)
        if work[W_HAND + t] != h:
            return False
    return True


@njit(_nrt=False)
def _memo_plan(hands, plan, g, p, laid, rnd, work):
    """Copy into plan 0 the plan of seat ``p``'s hand if the last hypothetical search
    (``_hand_plan_places``) was of this very hand (``_memo_holds``) and return its number of melds
    (-1: none); -2 when there is no such search.  A restricted discard draw is checked with exactly
    the hand the draw then gives, so the engine need not search it twice."""
    if not _memo_holds(hands, g, p, -1, -1, laid, rnd, work):
        return -2
    nm = work[W_MEMO_NM]
    for i in range(nm):
        for k in range(PLAN_REC):
            plan[g, 0, i, k] = work[W_OUT + i * PLAN_REC + k]
    return nm


@njit(_nrt=False)
def compute_plans(gs, ps, hands, plan, plan_n, rv, g):
    """Fill the lay-down plans of the active player.

    Before his lay-down: the exact best opening (contract, or new melds worth at least
    ``opening_min_points``; none if the hand cannot open).  After it: nothing, unless
    ``new_melds_after_opening`` — then the placement of new melds (any legal melds, no contract or
    minimum) that leaves the least penalty in hand.
    """
    _clear_plans(plan_n, g)
    p = gs[g, G_ACTIVE]
    if _done_laying(ps, rv, g, p):
        return
    laid = ps[g, p, PS_LAID] == 1
    gs[g, G_PLAN_DEBT] = 0
    if not laid and contract_out_of_reach(hands[g, p], rv, gs[g, G_ROUND]):
        return          # the search's first test, without its set-up (most draws end here)
    work = c_view(plan[g, 0, PLAN_MELDS:], (W_FLAT,))     # search scratch (layout W_*)
    hand = work[W_HAND:W_OUT]                           # on a memo hit it holds this hand
    nm = _memo_plan(hands, plan, g, p, laid, gs[g, G_ROUND], work)
    if nm == -2:
        work[W_MEMO_OK] = 0
        for t in range(N_TYPES):
            hand[t] = hands[g, p, t]
        must = _certificate_verdict(ps, rv, g, p, hand, laid)
        if must == CERT_NO_PLAN:
            return
        nm = _search_plan(hand, laid, rv, gs[g, G_ROUND], plan[g, 0], work, must, not laid)
    if nm >= 0:
        _offer_plan(plan, plan_n, g, nm)
    else:
        _certify_no_plan(ps, rv, g, p, hand, laid)


@njit(_nrt=False)
def _offer_plan(plan, plan_n, g, nm):
    """Plan 0 holds ``nm`` meld records: offer it (its melds and the cards it places)."""
    placed = 0
    for i in range(nm):
        placed += _rec_cards(plan, g, 0, i)
    plan_n[g, 0, 0] = nm
    plan_n[g, 0, 1] = placed


@njit(_nrt=False, inline="always")     # once a turn: cheaper than a call with nine arrays
def _plans_in_play(gs, ps, hands, minfo, mcards, mas, plan, plan_n, rv, g):
    """``compute_plans``, and when the hand cannot open on its own under A43 (lay-offs count
    toward the opening), the opening completed by lay-offs (``_opening_with_layoffs``)."""
    compute_plans(gs, ps, hands, plan, plan_n, rv, g)
    p = gs[g, G_ACTIVE]
    if (plan_n[g, 0, 0] < 0 and ps[g, p, PS_LAID] == 0 and rv[R_OPENING_COUNTS_LAYOFFS] == 1
            and rv[R_OPENING_MODE] == 1):
        work = c_view(plan[g, 0, PLAN_MELDS:], (W_FLAT,))     # search scratch (layout W_*)
        work[W_MEMO_OK] = 0
        hand = work[W_HAND:W_OUT]
        for t in range(N_TYPES):
            hand[t] = hands[g, p, t]
        nm = _opening_with_layoffs(gs, hands, minfo, mcards, mas, rv, g, p, hand,
                                   plan[g, 0], work)
        if nm >= 0:
            _offer_plan(plan, plan_n, g, nm)


@njit(_nrt=False)
def _opening_with_layoffs(gs, hands, minfo, mcards, mas, rv, g, p, hand, out, work):
    """A43 (NA15): an opening whose new melds are worth less than the minimum, completed by
    lay-offs in the same turn.  The melds are the best lay-down of any value; they are offered when
    the lay-offs the rest of the hand can make onto the table (a greedy sequence, so a lower
    bound) cover the missing points.  Sets ``G_PLAN_DEBT``; returns the number of melds or -1."""
    nm, value = _best_lay_down(hand, rv, gs[g, G_ROUND], 1, out, work, -1, np.bool_(False))
    if nm < 0:
        return -1
    debt = rv[R_OPENING_MIN_POINTS] - value
    for t in range(N_TYPES):                 # lay-offs by the cards the melds leave in hand
        hands[g, p, t] -= _plan_count(out, nm, t)
    reach = _layoff_bound(gs, hands, minfo, mcards, mas, rv, g, p)
    for t in range(N_TYPES):
        hands[g, p, t] += _plan_count(out, nm, t)
    if reach < debt:
        return -1
    gs[g, G_PLAN_DEBT] = debt
    return nm


@njit(_nrt=False, inline="always")
def _enter_play(gs, ps, hands, minfo, mcards, mas, plan, plan_n, rv, g):
    gs[g, G_PHASE] = PH_PLAY
    gs[g, G_TO_ACT] = gs[g, G_ACTIVE]
    if _done_laying(ps, rv, g, gs[g, G_ACTIVE]):
        _clear_plans(plan_n, g)        # ``compute_plans``' answer, without the call
        return
    _plans_in_play(gs, ps, hands, minfo, mcards, mas, plan, plan_n, rv, g)


@njit(_nrt=False)
def _deal(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, rv, g, fresh):
    """Shuffle and deal the current hand (G_HAND_NO, G_ROUND, G_DEALER, G_DEAL_NO are set).

    ``fresh`` = first deal of this hand: calls are reset (scope "hand") or remembered (scope
    "game") as the hand's base; a replay after a void restores the base, so calls made in a
    voided deal do not count.
    """
    n = gs[g, G_NP]
    d = _dir(rv)
    for p in range(P_MAX):
        if fresh:
            if rv[R_CALLS_LIMIT_SCOPE] == 1:
                ps[g, p, PS_CALLS] = 0
            ps[g, p, PS_CALLS_BASE] = ps[g, p, PS_CALLS]
        else:
            ps[g, p, PS_CALLS] = ps[g, p, PS_CALLS_BASE]
        ps[g, p, PS_LAID] = 0
        ps[g, p, PS_CERT] = 0
        for t in range(N_TYPES):
            hands[g, p, t] = 0
    gs[g, G_N_MELDS] = 0
    # one array at a time: each loop is one block fill (interleaved, they were stored byte by byte)
    for m in range(M_MAX):
        for j in range(minfo.shape[2]):
            minfo[g, m, j] = 0
    for m in range(M_MAX):
        for j in range(L_MAX):
            mcards[g, m, j] = -1
    for m in range(M_MAX):
        for j in range(L_MAX):
            mas[g, m, j] = -1
    # the deck, shuffled with this deal's own stream
    k = 0
    for t in range(52):
        for c in range(rv[R_N_DECKS]):
            stock[g, k] = t
            k += 1
    for c in range(rv[R_N_JOKERS]):
        stock[g, k] = JOKER
        k += 1
    for i in range(k, DECK_MAX):
        stock[g, i] = -1
        disc[g, i] = -1
        disc_by[g, i] = -1
    key = rng_key(gs[g, G_SEED], gs[g, G_GAME_ID], gs[g, G_DEAL_NO] * STREAM_STRIDE)
    shuffle_prefix(stock[g], k, key)
    # one card at a time, starting with the dealer's left neighbour
    size = rv[R_ROUND_BASE + gs[g, G_ROUND] * ROUND_STRIDE + (n - 2)]
    dealer = gs[g, G_DEALER]
    cutter = -1
    if rv[R_CUT_JOKER_TO_CUTTER] == 1 and k > 0 and stock[g, 0] == JOKER:
        # A34: the bottom card of the cut-off packet (the bottom of the shuffled deck) is a joker:
        # the cutter (dealer's right) keeps it and is dealt one card fewer
        cutter = _seat_after(dealer, n - 1, n, d)
        hands[g, cutter, JOKER] += 1
        stock[g, 0] = stock[g, k - 1]
        stock[g, k - 1] = -1
        k -= 1
    for c in range(size):
        for i in range(1, n + 1):
            seat = _seat_after(dealer, i, n, d)
            if c == size - 1 and seat == cutter:
                continue
            k -= 1
            hands[g, seat, stock[g, k]] += 1
    gs[g, G_DISC_N] = 0
    if rv[R_UPCARD] == 1:
        k -= 1
        disc[g, 0] = stock[g, k]
        disc_by[g, 0] = -1
        gs[g, G_DISC_N] = 1
    gs[g, G_STOCK_N] = k
    gs[g, G_RESHUFFLES] = 0
    gs[g, G_TURN] = 0
    _start_turn(gs, ps, disc_by, minfo, plan_n, rv, g, _seat_after(dealer, 1, n, d))
    if rv[R_DEALER_MAY_SWAP_UPCARD] == 1 and gs[g, G_DISC_N] > 0:
        gs[g, G_PHASE] = PH_UPSWAP       # AMER: the dealer may swap the upcard first
        gs[g, G_TO_ACT] = dealer


@njit(_nrt=False)
def hand_ending(gs, rv, g, winner, event):
    """How the hand of game ``g`` ends when ``winner`` goes out with ``event`` (``match.HOW_*``).

    Going out in the turn of one's first lay-down is a kalooki where the rules have one (A24),
    else "down and out"; the multipliers of each are ``match.penalty_multiplier``'s."""
    if winner < 0:
        return HOW_VOID
    if gs[g, G_LAID_THIS_TURN] == 1:
        if rv[R_KALOOKI_ENABLED] == 1 and event == EV_WENT_OUT:
            return HOW_KALOOKI
        return HOW_DOWN_AND_OUT
    return HOW_RIP


@njit(_nrt=False)
def _finish_hand(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin, rv,
                 g, winner, event):
    """Score the hand (winner 0, the others the penalty of their cards) and end it.

    ``winner = -1``: no winner (turn cap, void cap) -- everyone scores his cards as they stand.
    The engine plays one hand: what comes next (another hand, who deals, who is still in) is the
    match flow's (``engine.match_flow``), so the state stays as the hand ended, terminal.
    """
    n = gs[g, G_NP]
    h = gs[g, G_HAND_NO]
    how = hand_ending(gs, rv, g, winner, event)
    if how == HOW_KALOOKI:
        event = EV_KALOOKI
    mult = penalty_multiplier(rv, how)
    for p in range(n):
        pen = 0
        if p != winner:
            pen = hand_penalty_of(hands, rv, g, p) * mult
        if h < H_MAX:
            hscore[g, h, p] = pen
        ps[g, p, PS_TOTAL] += pen
    if h < H_MAX:
        hwin[g, h] = winner
    gs[g, G_HAND_WINNER] = winner
    gs[g, G_HAND_HOW] = how
    gs[g, G_LAST_EVENT] = event
    gs[g, G_HANDS_DONE] += 1
    gs[g, G_PHASE] = PH_OVER
    gs[g, G_TERMINAL] = 1
    gs[g, G_TO_ACT] = -1
    _clear_plans(plan_n, g)


@njit(_nrt=False)
def _void_deal(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin, rv, g):
    """Stock empty and nothing to rebuild (A52): replay the hand (same dealer and contract)."""
    gs[g, G_VOIDS] += 1
    gs[g, G_TOTAL_VOIDS] += 1
    if gs[g, G_VOIDS] > rv[R_MAX_VOID_REPLAYS]:
        _finish_hand(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin,
                     rv, g, -1, EV_VOID_CAP)
        return
    gs[g, G_LAST_EVENT] = EV_VOID
    gs[g, G_DEAL_NO] += 1
    _deal(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, rv, g, False)


@njit(_nrt=False, inline="always")     # once a turn: the call would cost more than its common path
def _end_turn(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin, rv, g):
    gs[g, G_TURN] += 1
    if gs[g, G_TURN] >= rv[R_MAX_TURNS_PER_HAND]:
        _finish_hand(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin,
                     rv, g, -1, EV_TURN_CAP)
        return
    n = gs[g, G_NP]
    _start_turn(gs, ps, disc_by, minfo, plan_n, rv, g, _seat_after(gs[g, G_ACTIVE], 1, n, _dir(rv)))


# ------------------------------------------------------------------------------------------------
# table melds: where a card fits


@njit(_nrt=False)
def _pos_ok(q, lo, hi, rv):
    """Error code for extending run [lo, hi] to position q (0 = fine)."""
    if q < 1 or q > 14:
        return E_NO_FREE_POS
    if q == 14 and rv[R_ACE_HIGH] == 0:
        return E_ACE_RULE
    if q == 1 and rv[R_ACE_LOW] == 0:
        return E_ACE_RULE
    nlo = q if q < lo else lo
    nhi = q if q > hi else hi
    if nlo == 1 and nhi == 14 and rv[R_ALLOW_BOTH_ACES_IN_RUN] == 0:
        return E_ACE_RULE
    if nhi - nlo + 1 > run_max_len(rv):
        return E_NO_FREE_POS
    return 0


@njit(_nrt=False)
def _growth_ends(hi, rv):
    """(high end open, low end open) under run_growth_rule (A12: an ace on top, natural or joker,
    closes the high end and opens the low end)."""
    if rv[R_RUN_GROWTH_RULE] == 1:
        return hi != 14, hi == 14
    return True, True


@njit(_nrt=False)
def _run_fit(minfo, mcards, rv, g, m, t):
    """Position (1..14) where card type ``t`` would go on run ``m``, or minus an error code."""
    s = minfo[g, m, MI_KEY]
    lo = minfo[g, m, MI_LO]
    hi = minfo[g, m, MI_HI]
    up, down = _growth_ends(hi, rv)
    if t == JOKER:
        err = E_GROWTH
        for side in range(2):
            if side == 0:
                if not up:
                    continue
                q = hi + 1
                nb = hi
            else:
                if not down:
                    continue
                q = lo - 1
                nb = lo
            e = _pos_ok(q, lo, hi, rv)
            if e != 0:
                err = e
                continue
            if rv[R_RUN_ADJACENT_JOKERS] == 0 and mcards[g, m, nb] == JOKER:
                err = E_ADJACENT_JOKERS
                continue
            return q
        return -err
    if t // 13 != s:
        return -E_WRONG_SUIT
    r = t % 13
    err = E_NOT_ADJACENT
    for c in range(2):
        if r == 0:
            q = 1 if c == 0 else 14
        elif c == 0:
            q = r + 1
        else:
            break
        if q == hi + 1:
            if not up:
                err = E_GROWTH
                continue
        elif q == lo - 1:
            if not down:
                err = E_GROWTH
                continue
        else:
            continue
        e = _pos_ok(q, lo, hi, rv)
        if e != 0:
            err = e
            continue
        return q
    return -err


@njit(_nrt=False)
def _set_fit(minfo, mas, rv, g, m, t):
    """Slot where card type ``t`` would go on set ``m``, or minus an error code."""
    n = minfo[g, m, MI_LEN]
    if minfo[g, m, MI_KIND] == MK_JSET:
        if t != JOKER:
            return -E_WRONG_RANK
        if n >= 4:
            return -E_SET_FULL
        return n
    if rv[R_SET_MAX_SIZE] >= 0 and n >= rv[R_SET_MAX_SIZE]:
        return -E_SET_FULL
    if n >= L_MAX:
        return -E_SET_FULL
    if t != JOKER and t % 13 != minfo[g, m, MI_KEY]:
        return -E_WRONG_RANK
    if rv[R_SET_ALLOW_DUPLICATE_SUIT] == 0:
        if n >= 4:
            return -E_SET_FULL
        if t != JOKER:
            for i in range(n):
                if mas[g, m, i] // 13 == t // 13:
                    return -E_WRONG_SUIT
    return n


@njit
def _set_joker_meaning(minfo, mas, g, m):
    """The natural a joker added to set ``m`` stands for: the set's rank, least-held suit."""
    cnt = np.zeros(4, dtype=np.int64)
    for i in range(minfo[g, m, MI_LEN]):
        x = mas[g, m, i]
        if x >= 0:
            cnt[x // 13] += 1
    s = 0
    for k in range(1, 4):
        if cnt[k] < cnt[s]:
            s = k
    return s * 13 + minfo[g, m, MI_KEY]


@njit(_nrt=False)
def _move_target(minfo, mcards, rv, g, m, p):
    """Where the joker at position ``p`` of run ``m`` goes when its natural replaces it: the
    growth end of the same four (A12 iv).  Minus an error code if it cannot move."""
    lo = minfo[g, m, MI_LO]
    hi = minfo[g, m, MI_HI]
    up, down = _growth_ends(hi, rv)
    err = E_NO_FREE_POS
    for side in range(2):
        if side == 0:
            if not up:
                continue
            q = hi + 1
        else:
            if not down:
                continue
            q = lo - 1
        e = _pos_ok(q, lo, hi, rv)
        if e != 0:
            err = e
            continue
        if rv[R_RUN_ADJACENT_JOKERS] == 0:
            nb = q - 1 if q > hi else q + 1
            if nb != p and mcards[g, m, nb] == JOKER:
                err = E_ADJACENT_JOKERS
                continue
        return q
    return -err


# ------------------------------------------------------------------------------------------------
# legality


@njit(_nrt=False)
def _discard_err(gs, hands, rv, g, p, t):
    if hands[g, p, t] <= 0:
        return E_NO_CARD
    if t == JOKER and rv[R_ALLOW_DISCARD_JOKER] == 0:
        return E_JOKER_DISCARD
    if rv[R_FORBID_DISCARD_OF_TAKEN_DISCARD] == 1 and gs[g, G_TAKEN] == t and hands[g, p, t] < 2:
        return E_TAKEN_DISCARD
    return 0


@njit(_nrt=False)
def _has_discard(gs, hands, rv, g, p):
    for t in range(N_TYPES):
        if hands[g, p, t] > 0 and _discard_err(gs, hands, rv, g, p, t) == 0:
            return True
    return False


@njit(_nrt=False)
def _fit_err(minfo, mcards, mas, rv, g, m, t):
    """0 if card type ``t`` can be laid off onto table meld ``m`` now (fit, growth rule and the
    per-turn lay-off limits of runs, A21/V2), else the ``E_*`` code."""
    if minfo[g, m, MI_KIND] == MK_RUN:
        q = _run_fit(minfo, mcards, rv, g, m, t)
        if q < 0:
            return -q
        lim = rv[R_LAYOFF_MAX_PER_RUN_END_PER_TURN]
        if lim >= 0:
            c = minfo[g, m, MI_T_LO] if q < minfo[g, m, MI_LO] else minfo[g, m, MI_T_HI]
            if c >= lim:
                return E_LAYOFF_LIMIT
        lim = rv[R_LAYOFF_MAX_PER_RUN_PER_TURN]
        if lim >= 0 and minfo[g, m, MI_T_ALL] >= lim:
            return E_LAYOFF_LIMIT
        return 0
    q = _set_fit(minfo, mas, rv, g, m, t)
    return -q if q < 0 else 0


@njit(_nrt=False)
def _may_layoff(ps, rv, g, p):
    return ps[g, p, PS_LAID] == 1 or rv[R_LAYOFF_REQUIRES_OPENED] == 0


@njit(_nrt=False)
def _draw_mode(gs, ps, rv, g, p):
    """discard_draw_* mode that applies to seat ``p`` now: 0 any, 1 if_used_in_opening,
    2 if_used_in_meld_now, 3 never (first_turn_free_upcard: the first turn of a hand is free)."""
    if ps[g, p, PS_LAID] == 1:
        mode = rv[R_DISCARD_DRAW_AFTER_OPENING]
    else:
        mode = rv[R_DISCARD_DRAW_BEFORE_OPENING]
    if mode != 0 and rv[R_FIRST_TURN_FREE_UPCARD] == 1 and gs[g, G_TURN] == 0:
        mode = 0
    return mode


@njit(_nrt=False)
def _discard_usable(gs, ps, hands, minfo, mcards, mas, plan, rv, g, p, t, mode):
    """Can seat ``p`` meld the top discard ``t`` this turn as a restricted draw requires?

    Engine decision: the card must be placed by the best lay-down of the hand with it (the plan
    the engine then offers), or — for an opened player under "if_used_in_meld_now" or after his
    opening — fit a table meld as a lay-off.  Only then is the draw offered, so the turn can
    always be finished."""
    if _hand_plan_places(hands, ps, rv, gs, plan, g, p, t, -1, t):
        return True
    if _may_layoff(ps, rv, g, p) and (mode == 2 or ps[g, p, PS_LAID] == 1):
        for m in range(gs[g, G_N_MELDS]):
            if _fit_err(minfo, mcards, mas, rv, g, m, t) == 0:
                return True
    return False


@njit(_nrt=False)
def _swap_joker_out(hands, minfo, mcards, mas, g, p, m, slot, nat):
    """M6: natural ``nat`` from seat ``p``'s hand takes the joker's place at ``slot`` of meld
    ``m``; the joker goes to the hand."""
    mcards[g, m, slot] = nat
    mas[g, m, slot] = nat
    minfo[g, m, MI_NJ] -= 1
    hands[g, p, nat] -= 1
    hands[g, p, JOKER] += 1


@njit(_nrt=False)
def _freed_joker_placeable(gs, ps, hands, minfo, mcards, mas, plan, rv, g, p, m, slot, nat):
    """After the natural ``nat`` replaces the joker at ``slot`` of meld ``m``, could the freed
    joker be placed this turn (lay-off onto a table meld, or in the best new melds)?  Applies the
    swap temporarily and undoes it."""
    old_c = mcards[g, m, slot]
    old_a = mas[g, m, slot]
    _swap_joker_out(hands, minfo, mcards, mas, g, p, m, slot, nat)
    ok = False
    if _may_layoff(ps, rv, g, p):
        for m2 in range(gs[g, G_N_MELDS]):
            if _fit_err(minfo, mcards, mas, rv, g, m2, JOKER) == 0:
                ok = True
                break
    if not ok:
        ok = _hand_plan_places(hands, ps, rv, gs, plan, g, p, -1, -1, JOKER)
    hands[g, p, JOKER] -= 1
    hands[g, p, nat] += 1
    minfo[g, m, MI_NJ] += 1
    mcards[g, m, slot] = old_c
    mas[g, m, slot] = old_a
    return ok




@njit(_nrt=False)
def _save_meld(minfo, mcards, mas, g, m, buf, o):
    """Copy table meld ``m`` into ``buf[o:o + MELD_W]`` (moves are tried on the state and undone)."""
    for j in range(NMI):
        buf[o + j] = minfo[g, m, j]
    for j in range(L_MAX):
        buf[o + NMI + j] = mcards[g, m, j]
        buf[o + NMI + L_MAX + j] = mas[g, m, j]


@njit(_nrt=False)
def _load_meld(minfo, mcards, mas, g, m, buf, o):
    """Restore table meld ``m`` saved by ``_save_meld``."""
    for j in range(NMI):
        minfo[g, m, j] = buf[o + j]
    for j in range(L_MAX):
        mcards[g, m, j] = buf[o + NMI + j]
        mas[g, m, j] = buf[o + NMI + L_MAX + j]


@njit(_nrt=False)
def _apply_tack(minfo, mcards, mas, rv, g, m, t):
    """Lay card type ``t`` off onto table meld ``m`` (``_fit_err`` said it fits); returns its
    value as part of that meld (A43 counts it toward the opening)."""
    if minfo[g, m, MI_KIND] == MK_RUN:
        q = _run_fit(minfo, mcards, rv, g, m, t)
        if q < minfo[g, m, MI_LO]:
            minfo[g, m, MI_T_LO] += 1
        else:
            minfo[g, m, MI_T_HI] += 1
        minfo[g, m, MI_T_ALL] += 1
        mcards[g, m, q] = t
        mas[g, m, q] = pos_type(minfo[g, m, MI_KEY], q)
        if q < minfo[g, m, MI_LO]:
            minfo[g, m, MI_LO] = q
        if q > minfo[g, m, MI_HI]:
            minfo[g, m, MI_HI] = q
        value = rv[R_MELD_VALUE + q]
    else:
        q = _set_fit(minfo, mas, rv, g, m, t)
        if t == JOKER:
            mas[g, m, q] = _set_joker_meaning(minfo, mas, g, m) if minfo[g, m, MI_KIND] == MK_SET else -1
        else:
            mas[g, m, q] = t
        mcards[g, m, q] = t
        minfo[g, m, MI_HI] = q
        if minfo[g, m, MI_KIND] == MK_SET:
            r = minfo[g, m, MI_KEY]
            value = rv[R_MELD_VALUE + (14 if r == 0 else r + 1)]
        else:
            value = rv[R_JOKER_SET_MELD_VALUE]
    minfo[g, m, MI_LEN] += 1
    if t == JOKER:
        minfo[g, m, MI_NJ] += 1
    return value


@njit
def _layoff_bound(gs, hands, minfo, mcards, mas, rv, g, p):
    """Points seat ``p`` can lay off onto the table now: a greedy sequence (first card that fits,
    again and again), played on the state and undone, so a lower bound of the best sequence."""
    nm = gs[g, G_N_MELDS]
    if nm == 0:
        return 0
    buf = np.empty(nm * MELD_W + N_TYPES, dtype=np.int64)
    for m in range(nm):
        _save_meld(minfo, mcards, mas, g, m, buf, m * MELD_W)
    for t in range(N_TYPES):
        buf[nm * MELD_W + t] = hands[g, p, t]
    total = 0
    found = True
    while found:
        found = False
        for t in range(N_TYPES):
            if hands[g, p, t] <= 0:
                continue
            for m in range(nm):
                if _fit_err(minfo, mcards, mas, rv, g, m, t) == 0:
                    total += _apply_tack(minfo, mcards, mas, rv, g, m, t)
                    hands[g, p, t] -= 1
                    found = True
                    break
    for m in range(nm):
        _load_meld(minfo, mcards, mas, g, m, buf, m * MELD_W)
    for t in range(N_TYPES):
        hands[g, p, t] = buf[nm * MELD_W + t]
    return total


@njit
def _debt_tack_ok(gs, hands, minfo, mcards, mas, rv, g, p, m, t):
    """While an A43 opening is incomplete: does laying ``t`` off onto ``m`` keep the missing
    points reachable (by the greedy sequence from there)?  Tries it and undoes it."""
    buf = np.empty(MELD_W, dtype=np.int64)
    _save_meld(minfo, mcards, mas, g, m, buf, 0)
    v = _apply_tack(minfo, mcards, mas, rv, g, m, t)
    hands[g, p, t] -= 1
    ok = v + _layoff_bound(gs, hands, minfo, mcards, mas, rv, g, p) >= gs[g, G_OPEN_DEBT]
    hands[g, p, t] += 1
    _load_meld(minfo, mcards, mas, g, m, buf, 0)
    return ok


@njit(_nrt=False)
def _set_swap_slot(minfo, mcards, mas, g, m, nat):
    """Joker slot of set ``m`` that natural ``nat`` replaces: the joker declared as ``nat`` if
    any, else the first joker."""
    first = -1
    for i in range(minfo[g, m, MI_LEN]):
        if mcards[g, m, i] == JOKER:
            if mas[g, m, i] == nat:
                return i
            if first < 0:
                first = i
    return first


# ------------------------------------------------------------------------------------------------
# table manipulation M1-M5 (RULES.md §2.2; actions A_SHIFT .. A_SETTAKE, layout.py)
#
# A card taken from the table goes to the hand but is *owed* (G_OWED): until it is placed again
# (lay-down plan, lay-off, shift, split, substitution or swap that puts that card type on the
# table) nothing else is legal, and a take is only offered when the taken card can be placed at
# once (a lay-off that fits, or the best new melds of the hand with it), so a turn can never get
# stuck.  One owed card at a time keeps the bookkeeping exact; longer chains (take, take, lay)
# are played as take-place, take-place (engine decision D23).


@njit(_nrt=False, specialise_constants=False)
def _placed_type(gs, minfo, g, a):
    """Card type that play action ``a`` moves from the hand to the table (-1: none or unknown;
    lay-downs may place several cards, callers ask the plan)."""
    if a >= A_TACK and a < A_MOVE:
        return (a - A_TACK) % N_TYPES
    if a < A_MOVE or a >= A_SETTAKE:
        return -1
    nm = gs[g, G_N_MELDS]
    if a < A_SETSWAP:
        m = (a - A_MOVE) // 15
        if m >= nm or minfo[g, m, MI_KIND] != MK_RUN:
            return -1
        return pos_type(minfo[g, m, MI_KEY], (a - A_MOVE) % 15)
    if a < A_SHIFT:
        m = (a - A_SETSWAP) // 4
        return ((a - A_SETSWAP) % 4) * 13 + minfo[g, m, MI_KEY] if m < nm else -1
    if a < A_TAKE_END:
        x = a - A_SHIFT
        m = x >> 2
        if m >= nm or minfo[g, m, MI_KIND] != MK_RUN:
            return -1
        if x & 1:
            return JOKER
        q = minfo[g, m, MI_HI] + 1 if (x >> 1) & 1 == 0 else minfo[g, m, MI_LO] - 1
        return pos_type(minfo[g, m, MI_KEY], q) if 1 <= q <= 14 else -1
    if a < A_SPLIT:
        return -1
    if a < A_SETSUB:
        m = (a - A_SPLIT) // 15
        if m >= nm or minfo[g, m, MI_KIND] != MK_RUN:
            return -1
        return pos_type(minfo[g, m, MI_KEY], (a - A_SPLIT) % 15)
    m = (a - A_SETSUB) // 16
    if m >= nm or minfo[g, m, MI_KIND] != MK_SET:
        return -1
    return (((a - A_SETSUB) // 4) % 4) * 13 + minfo[g, m, MI_KEY]


@njit(_nrt=False)
def _set_slot_of(minfo, mcards, g, m, t):
    """Slot of natural ``t`` in set ``m`` (-1: not there)."""
    for i in range(minfo[g, m, MI_LEN]):
        if mcards[g, m, i] == t:
            return i
    return -1


@njit(_nrt=False)
def _recount_jokers(minfo, mcards, g, m, lo, hi):
    nj = 0
    for q in range(lo, hi + 1):
        if mcards[g, m, q] == JOKER:
            nj += 1
    minfo[g, m, MI_NJ] = nj


@njit(_nrt=False)
def _redeclare_set_jokers(minfo, mcards, mas, g, m):
    """Jokers of set ``m`` stand for suits the naturals lack (after a substitution changed them)."""
    for i in range(minfo[g, m, MI_LEN]):
        if mcards[g, m, i] == JOKER:
            mas[g, m, i] = -1
    for i in range(minfo[g, m, MI_LEN]):
        if mcards[g, m, i] == JOKER:
            mas[g, m, i] = _set_joker_meaning(minfo, mas, g, m)


@njit(_nrt=False)
def _manip_apply(gs, hands, minfo, mcards, mas, g, p, a):
    """Carry out manipulation ``a`` (structurally checked by ``_manip_err``) on the table and on
    seat ``p``'s hand.  Returns the card type taken into the hand (-1: none)."""
    if a < A_TAKE_END:                                   # M1 shift
        x = a - A_SHIFT
        m = x >> 2
        side = (x >> 1) & 1
        s = minfo[g, m, MI_KEY]
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
        if side == 0:
            q_add = hi + 1
            q_take = lo
        else:
            q_add = lo - 1
            q_take = hi
        t_add = JOKER if x & 1 else pos_type(s, q_add)
        c = np.int64(mcards[g, m, q_take])
        mcards[g, m, q_add] = t_add
        mas[g, m, q_add] = pos_type(s, q_add)
        mcards[g, m, q_take] = -1
        mas[g, m, q_take] = -1
        if side == 0:
            minfo[g, m, MI_LO] = lo + 1
            minfo[g, m, MI_HI] = q_add
            minfo[g, m, MI_T_HI] += 1
        else:
            minfo[g, m, MI_LO] = q_add
            minfo[g, m, MI_HI] = hi - 1
            minfo[g, m, MI_T_LO] += 1
        minfo[g, m, MI_T_ALL] += 1
        _recount_jokers(minfo, mcards, g, m, minfo[g, m, MI_LO], minfo[g, m, MI_HI])
        hands[g, p, t_add] -= 1
        hands[g, p, c] += 1
        return c
    if a < A_SPLIT:                                      # M2 take an end card
        x = a - A_TAKE_END
        m = x >> 1
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
        q = hi if x & 1 == 0 else lo
        c = np.int64(mcards[g, m, q])
        mcards[g, m, q] = -1
        mas[g, m, q] = -1
        if q == hi:
            minfo[g, m, MI_HI] = hi - 1
        else:
            minfo[g, m, MI_LO] = lo + 1
        minfo[g, m, MI_LEN] -= 1
        if c == JOKER:
            minfo[g, m, MI_NJ] -= 1
        hands[g, p, c] += 1
        return c
    if a < A_SETSUB:                                     # M3 split
        m = (a - A_SPLIT) // 15
        q = (a - A_SPLIT) % 15
        s = minfo[g, m, MI_KEY]
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
        n2 = gs[g, G_N_MELDS]
        nat = pos_type(s, q)
        for j in range(L_MAX):
            mcards[g, n2, j] = -1
            mas[g, n2, j] = -1
        for j in range(NMI):
            minfo[g, n2, j] = 0
        minfo[g, n2, MI_KIND] = MK_RUN
        minfo[g, n2, MI_OWNER] = minfo[g, m, MI_OWNER]
        minfo[g, n2, MI_KEY] = s
        minfo[g, n2, MI_LO] = q
        minfo[g, n2, MI_HI] = hi
        minfo[g, n2, MI_LEN] = hi - q + 1
        mcards[g, n2, q] = nat
        mas[g, n2, q] = nat
        for r in range(q + 1, hi + 1):
            mcards[g, n2, r] = mcards[g, m, r]
            mas[g, n2, r] = mas[g, m, r]
            mcards[g, m, r] = -1
            mas[g, m, r] = -1
        minfo[g, m, MI_HI] = q
        minfo[g, m, MI_LEN] = q - lo + 1
        _recount_jokers(minfo, mcards, g, m, lo, q)
        _recount_jokers(minfo, mcards, g, n2, q, hi)
        gs[g, G_N_MELDS] = n2 + 1
        hands[g, p, nat] -= 1
        return -1
    r = minfo[g, (a - A_SETSUB) // 16, MI_KEY] if a < A_SETTAKE else minfo[g, (a - A_SETTAKE) // 4, MI_KEY]
    if a < A_SETTAKE:                                    # M4 set substitution
        x = a - A_SETSUB
        m = x // 16
        t_add = ((x // 4) % 4) * 13 + r
        c = (x % 4) * 13 + r
        i = _set_slot_of(minfo, mcards, g, m, c)
        mcards[g, m, i] = t_add
        mas[g, m, i] = t_add
        _redeclare_set_jokers(minfo, mcards, mas, g, m)
        hands[g, p, t_add] -= 1
        hands[g, p, c] += 1
        return c
    m = (a - A_SETTAKE) // 4                             # M5 take from a 4-card set
    c = ((a - A_SETTAKE) % 4) * 13 + r
    i = _set_slot_of(minfo, mcards, g, m, c)
    n = minfo[g, m, MI_LEN]
    for j in range(i, n - 1):
        mcards[g, m, j] = mcards[g, m, j + 1]
        mas[g, m, j] = mas[g, m, j + 1]
    mcards[g, m, n - 1] = -1
    mas[g, m, n - 1] = -1
    minfo[g, m, MI_LEN] = n - 1
    minfo[g, m, MI_HI] = n - 2
    hands[g, p, c] += 1
    return c


@njit(_nrt=False)
def _owed_placeable(gs, ps, hands, minfo, mcards, mas, plan, rv, g, p, c):
    """Could card ``c`` (just taken into seat ``p``'s hand) be placed now: as a lay-off onto a
    table meld, or in the best new melds of the hand (the plan the engine will offer)?"""
    if rv[R_GOING_OUT_REQUIRES_DISCARD] == 1 and _hand_count(hands, g, p) <= 1:
        return False
    for m2 in range(gs[g, G_N_MELDS]):
        if _fit_err(minfo, mcards, mas, rv, g, m2, c) == 0:
            return True
    return _hand_plan_places(hands, ps, rv, gs, plan, g, p, -1, -1, c)


@njit(_nrt=False)
def _manip_shape_err(gs, ps, hands, minfo, mcards, rv, g, p, a):
    """Structural checks of manipulation ``a`` (no state change): 0 or an ``E_*`` code."""
    if rv[R_TABLE_MANIPULATION] == 0:
        return E_NO_MANIP
    if ps[g, p, PS_LAID] == 0:
        return E_NOT_LAID                                # A23: only after the opening
    if gs[g, G_MANIPS] >= MANIP_MAX_PER_TURN:
        return E_MANIP_CAP
    nm = gs[g, G_N_MELDS]
    rmin = rv[R_RUN_MIN_SIZE]
    if a < A_SPLIT:                                      # M1 shift / M2 end take: a run
        if a < A_TAKE_END:
            x = a - A_SHIFT
            m = x >> 2
        else:
            x = a - A_TAKE_END
            m = x >> 1
        if m >= nm:
            return E_NO_MELD
        if minfo[g, m, MI_KIND] != MK_RUN:
            return E_KIND
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
        if a < A_TAKE_END:
            side = (x >> 1) & 1
            up, down = _growth_ends(hi, rv)
            if (side == 0 and not up) or (side == 1 and not down):
                return E_GROWTH
            q_add = hi + 1 if side == 0 else lo - 1
            q_take = lo if side == 0 else hi
            if q_add < 1 or q_add > 14:
                return E_NO_FREE_POS
            if (q_add == 14 and rv[R_ACE_HIGH] == 0) or (q_add == 1 and rv[R_ACE_LOW] == 0):
                return E_ACE_RULE
            nlo = lo + 1 if side == 0 else q_add
            nhi = q_add if side == 0 else hi - 1
            if nlo == 1 and nhi == 14 and rv[R_ALLOW_BOTH_ACES_IN_RUN] == 0:
                return E_ACE_RULE
            t_add = JOKER if x & 1 else pos_type(minfo[g, m, MI_KEY], q_add)
            if hands[g, p, t_add] <= 0:
                return E_NO_CARD
            lim = rv[R_LAYOFF_MAX_PER_RUN_END_PER_TURN]
            if lim >= 0 and (minfo[g, m, MI_T_HI] if side == 0 else minfo[g, m, MI_T_LO]) >= lim:
                return E_LAYOFF_LIMIT
            lim = rv[R_LAYOFF_MAX_PER_RUN_PER_TURN]
            if lim >= 0 and minfo[g, m, MI_T_ALL] >= lim:
                return E_LAYOFF_LIMIT
        else:
            q_take = hi if x & 1 == 0 else lo
            if hi - lo < rmin:                           # rmin cards must remain
                return E_BREAKS_MELD
        if mcards[g, m, q_take] == JOKER and rv[R_END_TAKE_MAY_TAKE_JOKER] == 0:
            return E_TAKE_JOKER
        return 0
    if a < A_SETSUB:                                     # M3 split
        m = (a - A_SPLIT) // 15
        q = (a - A_SPLIT) % 15
        if m >= nm:
            return E_NO_MELD
        if minfo[g, m, MI_KIND] != MK_RUN:
            return E_KIND
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
        if q - lo + 1 < rmin or hi - q + 1 < rmin:
            return E_BREAKS_MELD
        if hands[g, p, pos_type(minfo[g, m, MI_KEY], q)] <= 0:
            return E_NO_CARD
        if nm >= M_MAX:
            return E_TABLE_FULL
        return 0
    if a < A_SETTAKE:                                    # M4 substitution in a 3-card set
        x = a - A_SETSUB
        m = x // 16
        if m >= nm:
            return E_NO_MELD
        if minfo[g, m, MI_KIND] != MK_SET or minfo[g, m, MI_LEN] != 3:
            return E_KIND
        r = minfo[g, m, MI_KEY]
        s_add = (x // 4) % 4
        s_take = x % 4
        if s_add == s_take or _set_slot_of(minfo, mcards, g, m, s_add * 13 + r) >= 0:
            return E_WRONG_SUIT
        if _set_slot_of(minfo, mcards, g, m, s_take * 13 + r) < 0:
            return E_NOT_IN_MELD
        if hands[g, p, s_add * 13 + r] <= 0:
            return E_NO_CARD
        return 0
    m = (a - A_SETTAKE) // 4                             # M5 take from a 4-card set
    if m >= nm:
        return E_NO_MELD
    if minfo[g, m, MI_KIND] != MK_SET or minfo[g, m, MI_LEN] != 4:
        return E_KIND
    if _set_slot_of(minfo, mcards, g, m, ((a - A_SETTAKE) % 4) * 13 + minfo[g, m, MI_KEY]) < 0:
        return E_NOT_IN_MELD
    return 0


@njit(_nrt=False, specialise_constants=False)   # (``check_action``'s flow-action copies never call it)
def _manip_err(gs, ps, hands, minfo, mcards, mas, plan, rv, g, p, a):
    """0 if manipulation ``a`` is legal now, else the ``E_*`` code.  Tries the move on the state
    and undoes it: every meld it touches must stay legal, and a taken card must be placeable."""
    e = _manip_shape_err(gs, ps, hands, minfo, mcards, rv, g, p, a)
    if e != 0:
        return e
    if a < A_TAKE_END:
        m = (a - A_SHIFT) >> 2
    elif a < A_SPLIT:
        m = (a - A_TAKE_END) >> 1
    elif a < A_SETSUB:
        m = (a - A_SPLIT) // 15
    elif a < A_SETTAKE:
        m = (a - A_SETSUB) // 16
    else:
        m = (a - A_SETTAKE) // 4
    nm = gs[g, G_N_MELDS]
    m2 = nm if nm < M_MAX else m                         # the row a split fills
    buf = c_view(plan[g, 0, PLAN_MELDS:], (W_FLAT,))[W_MANIP:W_LEN]   # engine scratch (W_*)
    _save_meld(minfo, mcards, mas, g, m, buf, 0)
    _save_meld(minfo, mcards, mas, g, m2, buf, MELD_W)
    for t in range(N_TYPES):
        buf[2 * MELD_W + t] = hands[g, p, t]
    c = _manip_apply(gs, hands, minfo, mcards, mas, g, p, a)
    err = 0
    if meld_value_of(minfo, mcards, mas, rv, g, m) < 0:
        err = E_BREAKS_MELD
    elif gs[g, G_N_MELDS] > nm and meld_value_of(minfo, mcards, mas, rv, g, nm) < 0:
        err = E_BREAKS_MELD
    elif c >= 0 and rv[R_TAKEN_CARDS_MUST_BE_USED_SAME_TURN] == 1:
        if not _owed_placeable(gs, ps, hands, minfo, mcards, mas, plan, rv, g, p, c):
            err = E_NOT_USABLE
    gs[g, G_N_MELDS] = nm
    _load_meld(minfo, mcards, mas, g, m2, buf, MELD_W)
    _load_meld(minfo, mcards, mas, g, m, buf, 0)
    for t in range(N_TYPES):
        hands[g, p, t] = buf[2 * MELD_W + t]
    return err


@njit(_nrt=False)
def _pending(gs, g):
    """Card type that must be placed before anything else (-1: none): a discard taken under a
    restriction, a freed joker, or a card taken from the table."""
    if gs[g, G_TAKEN_MUST] == 1 and gs[g, G_TAKEN] >= 0:
        return gs[g, G_TAKEN]
    if gs[g, G_FREED] > 0:
        return JOKER
    return gs[g, G_OWED]


# ``check_flow_action``'s answer when the table decides (``check_action`` does)
NEEDS_TABLE = -1


@njit(_nrt=False)
def check_flow_action(gs, ps, hands, disc_by, rv, g, a):
    """``check_action`` for the actions of the turn's flow (call window, allow/deny, draws, the
    discard and ending the turn) from the five arrays they read; ``NEEDS_TABLE`` for the rest
    (lay-downs, lay-offs and joker moves, the dealer's upcard swap, a restricted discard draw),
    which only ``check_action`` answers.

    It exists because passing arguments is most of the cost of such a check: numba passes each
    state array as a dozen machine words, so a call with all 14 costs about 20 ns (a microbenchmark
    of an empty kernel: 24 ns against 7 ns with four), while a hand asks a hundred of these."""
    if gs[g, G_TERMINAL] != 0:
        return E_TERMINAL
    if a < 0 or a >= N_ACTIONS:
        return E_BAD_ACTION
    ph = gs[g, G_PHASE]
    if ph == PH_UPSWAP:
        return NEEDS_TABLE
    if a >= A_UPSWAP:
        return E_WRONG_PHASE
    if a == A_PASS or a == A_CALL:
        if ph != PH_CALL:
            return E_WRONG_PHASE
        if a == A_CALL and not _caller_ok(gs, ps, disc_by, rv, g, gs[g, G_TO_ACT]):
            return E_NOT_ELIGIBLE
        return 0
    if a == A_ALLOW:
        if ph != PH_ALLOW:
            return E_WRONG_PHASE
        return 0 if _allow_ok(gs, rv, g) else E_CANNOT_ALLOW
    if a == A_DENY:
        if ph != PH_ALLOW:
            return E_WRONG_PHASE
        return 0 if _deny_ok(gs, ps, rv, g) else E_CANNOT_DENY
    if a == A_DRAW_STOCK:
        return 0 if ph == PH_DRAW else E_WRONG_PHASE
    if a == A_DRAW_DISCARD:
        if ph != PH_DRAW:
            return E_WRONG_PHASE
        if gs[g, G_DISC_N] == 0:
            return E_EMPTY_DISCARD
        mode = _draw_mode(gs, ps, rv, g, gs[g, G_ACTIVE])
        if mode == 3:                        # "never"
            return E_DISCARD_DRAW
        if gs[g, G_AFTER_ALLOW] == 1 and rv[R_AFTER_ALLOWED_CALL_ACTIVE_DRAWS] == 0:
            return E_AFTER_CALL_STOCK
        return NEEDS_TABLE if mode != 0 else 0
    if ph != PH_PLAY:
        return E_WRONG_PHASE
    if a != A_END_TURN and (a < A_DISCARD or a >= A_TACK):
        return NEEDS_TABLE
    p = gs[g, G_ACTIVE]
    # (a hand holding the card to discard is not empty: the common case needs no count)
    if (a == A_END_TURN or hands[g, p, a - A_DISCARD] <= 0) and not _holds_any(hands, g, p):
        return E_HAND_EMPTY
    if gs[g, G_OPEN_DEBT] > 0:                           # A43: only lay-offs until the opening is complete
        return E_OPENING_SHORT
    if _pending(gs, g) >= 0:                             # a card that must be placed first
        return E_MUST_PLACE
    if a == A_END_TURN:
        return E_CAN_DISCARD if _has_discard(gs, hands, rv, g, p) else 0
    return _discard_err(gs, hands, rv, g, p, a - A_DISCARD)


@njit(_nrt=False)
def check_action(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                 rv, g, a):
    """0 if action ``a`` is legal in game ``g``, else the ``E_*`` code saying why not.  Pure but
    for the engine's caches: a check that searches a hand leaves its memo in the search scratch and
    certifies the hand when it has no lay-down (``_hand_plan_places``); neither changes an answer."""
    e = check_flow_action(gs, ps, hands, disc_by, rv, g, a)
    if e != NEEDS_TABLE:
        return e
    ph = gs[g, G_PHASE]
    act = gs[g, G_ACTIVE]
    if ph == PH_UPSWAP:                  # the dealer keeps the upcard (pass) or swaps it
        if a == A_PASS:
            return 0
        if a < A_UPSWAP:
            return E_WRONG_PHASE
        return 0 if hands[g, gs[g, G_TO_ACT], a - A_UPSWAP] > 0 else E_NO_CARD
    if a == A_DRAW_DISCARD:              # restricted: only if it goes into melds this turn
        if not _discard_usable(gs, ps, hands, minfo, mcards, mas, plan, rv, g, act,
                               np.int64(disc[g, gs[g, G_DISC_N] - 1]), _draw_mode(gs, ps, rv, g, act)):
            return E_NOT_USABLE
        return 0
    p = act
    if not _holds_any(hands, g, p):
        return E_HAND_EMPTY
    last_card_needs_discard = rv[R_GOING_OUT_REQUIRES_DISCARD] == 1
    # a restricted discard draw or a freed joker must be placed before anything else happens
    if gs[g, G_OPEN_DEBT] > 0:                           # A43: only lay-offs until the opening is complete
        if a < A_TACK or a >= A_MOVE:
            return E_OPENING_SHORT
        m = (a - A_TACK) // N_TYPES
        t = (a - A_TACK) % N_TYPES
        if hands[g, p, t] <= 0:
            return E_NO_CARD
        if m >= gs[g, G_N_MELDS]:
            return E_NO_MELD
        e = _fit_err(minfo, mcards, mas, rv, g, m, t)
        if e != 0:
            return e
        return 0 if _debt_tack_ok(gs, hands, minfo, mcards, mas, rv, g, p, m, t) else E_OPENING_SHORT
    pend = _pending(gs, g)
    if pend >= 0:
        if a >= A_LAY and a < A_DISCARD:
            k = a - A_LAY
            if plan_n[g, k, 0] < 0 or _plan_count(plan[g, k], plan_n[g, k, 0], pend) == 0:
                return E_MUST_PLACE
        elif _placed_type(gs, minfo, g, a) != pend:
            return E_MUST_PLACE
    if a < A_DISCARD:                                    # lay down plan k (discards and ending
                                                         # the turn: ``check_flow_action``)
        k = a - A_LAY
        if _done_laying(ps, rv, g, p):
            return E_ALREADY_LAID
        if plan_n[g, k, 0] < 0:
            return E_NO_PLAN
        if gs[g, G_N_MELDS] + plan_n[g, k, 0] > M_MAX:
            return E_TABLE_FULL
        if last_card_needs_discard and plan_n[g, k, 1] >= _hand_count(hands, g, p):
            return E_MUST_DISCARD
        return 0
    if a < A_MOVE:                                       # tack t on m
        m = (a - A_TACK) // N_TYPES
        t = (a - A_TACK) % N_TYPES
        if rv[R_LAYOFF_REQUIRES_OPENED] == 1 and ps[g, p, PS_LAID] == 0:
            return E_NOT_LAID
        if hands[g, p, t] <= 0:
            return E_NO_CARD
        if m >= gs[g, G_N_MELDS]:
            return E_NO_MELD
        if last_card_needs_discard and not _holds_more_than(hands, g, p, 1):
            return E_MUST_DISCARD                        # the last card must be discarded
        return _fit_err(minfo, mcards, mas, rv, g, m, t)
    if a >= A_SHIFT:                                     # table manipulation M1-M5
        return _manip_err(gs, ps, hands, minfo, mcards, mas, plan, rv, g, p, a)
    if a >= A_SETSWAP:                                   # natural of suit s replaces a set joker
        m = (a - A_SETSWAP) // 4
        s = (a - A_SETSWAP) % 4
        if rv[R_JOKER_SWAP] == 0 or rv[R_SET_JOKER_SWAP] != 1:
            return E_SWAP_DISABLED
        if rv[R_JOKER_SWAP_REQUIRES_OPENED] == 1 and ps[g, p, PS_LAID] == 0:
            return E_NOT_LAID
        if m >= gs[g, G_N_MELDS]:
            return E_NO_MELD
        if minfo[g, m, MI_KIND] != MK_SET:
            return E_SWAP_DISABLED
        if minfo[g, m, MI_NJ] == 0:
            return E_NO_JOKER
        if minfo[g, m, MI_LEN] != 3:                     # one_for_one_3card: 4-card sets locked
            return E_SWAP_DISABLED
        nat = s * 13 + minfo[g, m, MI_KEY]
        if hands[g, p, nat] <= 0:
            return E_NO_CARD
        if rv[R_SET_ALLOW_DUPLICATE_SUIT] == 0:
            for i in range(minfo[g, m, MI_LEN]):
                if mcards[g, m, i] == nat:
                    return E_WRONG_SUIT
        if rv[R_FREED_JOKER_MUST_BE_USED_SAME_TURN] == 1:
            slot = _set_swap_slot(minfo, mcards, mas, g, m, nat)
            if not _freed_joker_placeable(gs, ps, hands, minfo, mcards, mas, plan, rv, g, p, m, slot,
                                          nat):
                return E_NOT_USABLE
        return 0
    # move joker at position q of run m
    m = (a - A_MOVE) // 15
    q = (a - A_MOVE) % 15
    if rv[R_JOKER_SWAP] == 0:
        return E_SWAP_DISABLED
    if rv[R_JOKER_SWAP_REQUIRES_OPENED] == 1 and ps[g, p, PS_LAID] == 0:
        return E_NOT_LAID
    if m >= gs[g, G_N_MELDS]:
        return E_NO_MELD
    if minfo[g, m, MI_KIND] != MK_RUN:
        return E_SWAP_DISABLED
    lo = minfo[g, m, MI_LO]
    hi = minfo[g, m, MI_HI]
    if q < lo or q > hi or mcards[g, m, q] != JOKER:
        return E_NO_JOKER
    if rv[R_JOKER_SWAP_FROM_RUN_END] == 0 and (q == lo or q == hi):
        return E_SWAP_END
    nat = pos_type(minfo[g, m, MI_KEY], q)
    if hands[g, p, nat] <= 0:
        return E_NO_CARD
    if rv[R_JOKER_SWAP] == 2:                           # retrieve (M6): the joker goes to the hand
        if rv[R_FREED_JOKER_MUST_BE_USED_SAME_TURN] == 1:
            if not _freed_joker_placeable(gs, ps, hands, minfo, mcards, mas, plan, rv, g, p, m, q,
                                          nat):
                return E_NOT_USABLE
        return 0
    if last_card_needs_discard and not _holds_more_than(hands, g, p, 1):
        return E_MUST_DISCARD
    dest = _move_target(minfo, mcards, rv, g, m, q)
    return -dest if dest < 0 else 0


@njit
def legal_mask(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
               rv, g, out):
    """Write the legal actions of game ``g`` into ``out`` (bool[N_ACTIONS]); return their number.

    Empty only when the game is terminal.  Only plausible candidates are tested (cards held,
    melds on the table), each with ``check_action``, so mask and step can never disagree.
    """
    for a in range(N_ACTIONS):
        out[a] = False
    if gs[g, G_TERMINAL] != 0:
        return 0
    cnt = 0
    ph = gs[g, G_PHASE]
    if ph == PH_UPSWAP:
        out[A_PASS] = True
        cnt = 1
        for t in range(N_TYPES):
            if hands[g, gs[g, G_TO_ACT], t] > 0:
                out[A_UPSWAP + t] = True
                cnt += 1
        return cnt
    if ph == PH_CALL:
        lo_a = A_PASS
        hi_a = A_CALL
    elif ph == PH_ALLOW:
        lo_a = A_ALLOW
        hi_a = A_DENY
    elif ph == PH_DRAW:
        lo_a = A_DRAW_STOCK
        hi_a = A_DRAW_DISCARD
    else:
        lo_a = 1
        hi_a = 0
    for a in range(lo_a, hi_a + 1):
        if check_action(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore,
                        hwin, rv, g, a) == 0:
            out[a] = True
            cnt += 1
    if ph != PH_PLAY:
        return cnt
    p = gs[g, G_ACTIVE]
    cands = np.empty(N_ACTIONS, dtype=np.int64)
    nc = 0
    cands[nc] = A_END_TURN
    nc += 1
    for k in range(K_PLANS):
        cands[nc] = A_LAY + k
        nc += 1
    nm = gs[g, G_N_MELDS]
    layoff = _may_layoff(ps, rv, g, p)
    for t in range(N_TYPES):
        if hands[g, p, t] > 0:
            cands[nc] = A_DISCARD + t
            nc += 1
            if layoff:
                for m in range(nm):
                    cands[nc] = A_TACK + m * N_TYPES + t
                    nc += 1
    if ps[g, p, PS_LAID] == 1 or rv[R_JOKER_SWAP_REQUIRES_OPENED] == 0:
        for m in range(nm):
            if minfo[g, m, MI_KIND] == MK_RUN and minfo[g, m, MI_NJ] > 0:
                for q in range(minfo[g, m, MI_LO], minfo[g, m, MI_HI] + 1):
                    if mcards[g, m, q] == JOKER:
                        cands[nc] = A_MOVE + m * 15 + q
                        nc += 1
        if rv[R_SET_JOKER_SWAP] != 0:
            for m in range(nm):
                if minfo[g, m, MI_KIND] == MK_SET and minfo[g, m, MI_NJ] > 0:
                    for s_ in range(4):
                        cands[nc] = A_SETSWAP + m * 4 + s_
                        nc += 1
    if rv[R_TABLE_MANIPULATION] == 1 and ps[g, p, PS_LAID] == 1:
        for m in range(nm):
            if minfo[g, m, MI_KIND] == MK_RUN:
                for j in range(4):
                    cands[nc] = A_SHIFT + m * 4 + j
                    nc += 1
                for j in range(2):
                    cands[nc] = A_TAKE_END + m * 2 + j
                    nc += 1
                for q in range(minfo[g, m, MI_LO] + 1, minfo[g, m, MI_HI]):
                    if hands[g, p, pos_type(minfo[g, m, MI_KEY], q)] > 0:
                        cands[nc] = A_SPLIT + m * 15 + q
                        nc += 1
            elif minfo[g, m, MI_KIND] == MK_SET:
                if minfo[g, m, MI_LEN] == 3:
                    for j in range(16):
                        cands[nc] = A_SETSUB + m * 16 + j
                        nc += 1
                elif minfo[g, m, MI_LEN] == 4:
                    for j in range(4):
                        cands[nc] = A_SETTAKE + m * 4 + j
                        nc += 1
    for i in range(nc):
        a = cands[i]
        if check_action(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore,
                        hwin, rv, g, a) == 0:
            out[a] = True
            cnt += 1
    return cnt


# ------------------------------------------------------------------------------------------------
# applying actions


@njit(_nrt=False)
def _apply_lay(gs, ps, hands, minfo, mcards, mas, plan, plan_n, g, k):
    """Put plan ``k`` on the table as new melds owned by the active player."""
    p = gs[g, G_ACTIVE]
    taken = gs[g, G_TAKEN]
    for i in range(plan_n[g, k, 0]):
        m = gs[g, G_N_MELDS]
        kind = plan[g, k, i, 0]
        for j in range(L_MAX):
            mcards[g, m, j] = -1
            mas[g, m, j] = -1
        minfo[g, m, MI_OWNER] = p
        if kind == _K_RUN:
            s = plan[g, k, i, 1]
            lo = plan[g, k, i, 2]
            hi = plan[g, k, i, 3]
            jmask = plan[g, k, i, 4]
            nj = 0
            for q in range(lo, hi + 1):
                typ = pos_type(s, q)
                mas[g, m, q] = typ
                if (jmask >> q) & 1:
                    mcards[g, m, q] = JOKER
                    hands[g, p, JOKER] -= 1
                    nj += 1
                else:
                    mcards[g, m, q] = typ
                    hands[g, p, typ] -= 1
                    if typ == taken:
                        gs[g, G_TAKEN] = -1
            minfo[g, m, MI_KIND] = MK_RUN
            minfo[g, m, MI_KEY] = s
            minfo[g, m, MI_LO] = lo
            minfo[g, m, MI_HI] = hi
            minfo[g, m, MI_LEN] = hi - lo + 1
            minfo[g, m, MI_NJ] = nj
        elif kind == _K_SET:
            r = plan[g, k, i, 1]
            n = 0
            for s in range(4):
                typ = s * 13 + r
                for c in range(plan[g, k, i, 2 + s]):
                    mcards[g, m, n] = typ
                    mas[g, m, n] = typ
                    hands[g, p, typ] -= 1
                    if typ == taken:
                        gs[g, G_TAKEN] = -1
                    n += 1
            minfo[g, m, MI_KIND] = MK_SET
            minfo[g, m, MI_KEY] = r
            minfo[g, m, MI_LO] = 0
            minfo[g, m, MI_LEN] = n
            nj = plan[g, k, i, 6]
            for c in range(nj):
                mas[g, m, n] = _set_joker_meaning(minfo, mas, g, m)
                mcards[g, m, n] = JOKER
                hands[g, p, JOKER] -= 1
                n += 1
                minfo[g, m, MI_LEN] = n
            minfo[g, m, MI_HI] = n - 1
            minfo[g, m, MI_NJ] = nj
        else:
            nj = plan[g, k, i, 6]
            for c in range(nj):
                mcards[g, m, c] = JOKER
                hands[g, p, JOKER] -= 1
            minfo[g, m, MI_KIND] = MK_JSET
            minfo[g, m, MI_KEY] = -1
            minfo[g, m, MI_LO] = 0
            minfo[g, m, MI_HI] = nj - 1
            minfo[g, m, MI_LEN] = nj
            minfo[g, m, MI_NJ] = nj
        gs[g, G_N_MELDS] = m + 1
    if ps[g, p, PS_LAID] == 0:
        ps[g, p, PS_LAID] = 1
        gs[g, G_LAID_THIS_TURN] = 1
    _clear_plans(plan_n, g)


@njit(_nrt=False)
def step(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g, a):
    """Apply action ``a`` to game ``g``.  Returns 0, or an ``E_*`` code (state unchanged)."""
    err = check_action(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore,
                       hwin, rv, g, a)
    if err != 0:
        return err
    return apply_action(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore,
                        hwin, rv, g, a)


@njit(_nrt=False, inline="always")
def apply_action(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                 rv, g, a):
    """``step`` without its legality check, for callers that already asked ``check_action`` about
    this very state (the closed loops, whose ``seat_action`` returns only checked actions): the
    check is a sizeable share of a hand.  An unchecked illegal action corrupts the state."""
    gs[g, G_STEPS] += 1
    gs[g, G_LAST_EVENT] = EV_NONE
    act = gs[g, G_ACTIVE]
    n = gs[g, G_NP]
    d = _dir(rv)
    if gs[g, G_PHASE] == PH_UPSWAP:
        if a != A_PASS:
            dealer = gs[g, G_TO_ACT]
            t = a - A_UPSWAP
            top = gs[g, G_DISC_N] - 1
            hands[g, dealer, disc[g, top]] += 1
            hands[g, dealer, t] -= 1
            disc[g, top] = t
        _start_turn(gs, ps, disc_by, minfo, plan_n, rv, g, act)
        return 0
    if a == A_PASS:
        c = _next_caller(gs, ps, disc_by, rv, g, _steps_between(act, gs[g, G_TO_ACT], n, d) + 1)
        if c >= 0:
            gs[g, G_TO_ACT] = c
        else:
            gs[g, G_PHASE] = PH_DRAW
            gs[g, G_TO_ACT] = act
    elif a == A_CALL:
        gs[g, G_CALLER] = gs[g, G_TO_ACT]
        gs[g, G_PHASE] = PH_ALLOW
        gs[g, G_TO_ACT] = act
    elif a == A_ALLOW:
        c = gs[g, G_CALLER]
        top = gs[g, G_DISC_N] - 1
        hands[g, c, disc[g, top]] += 1
        disc[g, top] = -1
        disc_by[g, top] = -1
        gs[g, G_DISC_N] = top
        for i in range(rv[R_CALL_PENALTY_CARDS]):
            x = _pop_stock(gs, stock, disc, disc_by, rv, g, False)
            if x >= 0:
                hands[g, c, x] += 1
        ps[g, c, PS_CALLS] += 1
        gs[g, G_CALL_DONE] = 1
        gs[g, G_AFTER_ALLOW] = 1
        gs[g, G_CALLER] = -1
        gs[g, G_PHASE] = PH_DRAW
        gs[g, G_TO_ACT] = act
    elif a == A_DENY:
        c = gs[g, G_CALLER]
        top = gs[g, G_DISC_N] - 1
        t = np.int64(disc[g, top])
        hands[g, act, t] += 1
        disc[g, top] = -1
        disc_by[g, top] = -1
        gs[g, G_DISC_N] = top
        gs[g, G_TAKEN] = t
        if rv[R_COUNT_DENIED_CALLS] == 1:
            ps[g, c, PS_CALLS] += 1
        gs[g, G_CALL_DONE] = 1
        gs[g, G_CALLER] = -1
        _enter_play(gs, ps, hands, minfo, mcards, mas, plan, plan_n, rv, g)
    elif a == A_DRAW_STOCK:
        x = _pop_stock(gs, stock, disc, disc_by, rv, g, rv[R_KEEP_TOP_DISCARD_ON_RESHUFFLE] == 1)
        if x < 0:
            _void_deal(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin, rv, g)
            return 0
        hands[g, act, x] += 1
        _enter_play(gs, ps, hands, minfo, mcards, mas, plan, plan_n, rv, g)
    elif a == A_DRAW_DISCARD:
        if _draw_mode(gs, ps, rv, g, act) != 0:
            gs[g, G_TAKEN_MUST] = 1          # must be melded this turn (only such actions allowed)
        top = gs[g, G_DISC_N] - 1
        t = np.int64(disc[g, top])
        hands[g, act, t] += 1
        disc[g, top] = -1
        disc_by[g, top] = -1
        gs[g, G_DISC_N] = top
        gs[g, G_TAKEN] = t
        _enter_play(gs, ps, hands, minfo, mcards, mas, plan, plan_n, rv, g)
    elif a == A_END_TURN:
        _end_turn(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin, rv, g)
    else:
        # an opened player with no new melds who gains no card: a sub-hand has no melds either, so
        # there is nothing to recompute (not so before the opening: V1's kalooki may appear)
        no_plan = ps[g, act, PS_LAID] == 1 and plan_n[g, 0, 0] < 0 and gs[g, G_PLAN_DEBT] == 0
        gained = False
        if a < A_DISCARD:
            owed = gs[g, G_OWED]
            if owed >= 0 and _plan_count(plan[g, a - A_LAY], plan_n[g, a - A_LAY, 0], owed) > 0:
                gs[g, G_OWED] = -1
        else:
            # one card type moves from the hand to the table: what it settles, settled here
            placed = _placed_type(gs, minfo, g, a)
            if placed >= 0:
                if placed == gs[g, G_OWED]:
                    gs[g, G_OWED] = -1
                if placed == gs[g, G_TAKEN]:
                    gs[g, G_TAKEN] = -1
                if placed == JOKER and gs[g, G_FREED] > 0:
                    gs[g, G_FREED] -= 1
        if a < A_DISCARD:
            k = a - A_LAY
            nj = _plan_count(plan[g, k], plan_n[g, k, 0], JOKER)
            if gs[g, G_FREED] > 0:
                gs[g, G_FREED] = gs[g, G_FREED] - nj if gs[g, G_FREED] > nj else 0
            if ps[g, act, PS_LAID] == 0:
                gs[g, G_OPEN_DEBT] = gs[g, G_PLAN_DEBT]      # A43: lay-offs complete the opening
            _apply_lay(gs, ps, hands, minfo, mcards, mas, plan, plan_n, g, k)
            if nj > 0 and gs[g, G_TAKEN] == JOKER:
                gs[g, G_TAKEN] = -1          # a joker taken from the pile went into a meld
        elif a < A_TACK:
            t = a - A_DISCARD
            hands[g, act, t] -= 1
            k = gs[g, G_DISC_N]
            disc[g, k] = t
            disc_by[g, k] = act
            gs[g, G_DISC_N] = k + 1
            if _holds_any(hands, g, act):
                _end_turn(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore,
                          hwin, rv, g)
                return 0
        elif a < A_MOVE:
            m = (a - A_TACK) // N_TYPES
            t = (a - A_TACK) % N_TYPES
            v = _apply_tack(minfo, mcards, mas, rv, g, m, t)
            if gs[g, G_OPEN_DEBT] > 0:
                gs[g, G_OPEN_DEBT] = gs[g, G_OPEN_DEBT] - v if gs[g, G_OPEN_DEBT] > v else 0
            hands[g, act, t] -= 1
        elif a >= A_SHIFT:                               # table manipulation M1-M5
            c = _manip_apply(gs, hands, minfo, mcards, mas, g, act, a)
            gs[g, G_MANIPS] += 1
            gained = c >= 0
            if c >= 0 and rv[R_TAKEN_CARDS_MUST_BE_USED_SAME_TURN] == 1:
                gs[g, G_OWED] = c
        elif a >= A_SETSWAP:
            gained = True
            m = (a - A_SETSWAP) // 4
            nat = ((a - A_SETSWAP) % 4) * 13 + minfo[g, m, MI_KEY]
            _swap_joker_out(hands, minfo, mcards, mas, g, act, m,
                            _set_swap_slot(minfo, mcards, mas, g, m, nat), nat)
            if rv[R_FREED_JOKER_MUST_BE_USED_SAME_TURN] == 1:
                gs[g, G_FREED] += 1
        elif rv[R_JOKER_SWAP] == 2:
            gained = True
            m = (a - A_MOVE) // 15
            q = (a - A_MOVE) % 15
            _swap_joker_out(hands, minfo, mcards, mas, g, act, m, q, pos_type(minfo[g, m, MI_KEY], q))
            if rv[R_FREED_JOKER_MUST_BE_USED_SAME_TURN] == 1:
                gs[g, G_FREED] += 1
        else:
            m = (a - A_MOVE) // 15
            q = (a - A_MOVE) % 15
            dest = _move_target(minfo, mcards, rv, g, m, q)
            nat = pos_type(minfo[g, m, MI_KEY], q)
            mcards[g, m, q] = nat
            hands[g, act, nat] -= 1
            mcards[g, m, dest] = JOKER
            mas[g, m, dest] = pos_type(minfo[g, m, MI_KEY], dest)
            if dest < minfo[g, m, MI_LO]:
                minfo[g, m, MI_LO] = dest
            if dest > minfo[g, m, MI_HI]:
                minfo[g, m, MI_HI] = dest
            minfo[g, m, MI_LEN] += 1
        if not _holds_any(hands, g, act):                # went out (A3)
            _finish_hand(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin,
                         rv, g, act, EV_WENT_OUT)
        elif rv[R_NEW_MELDS_AFTER_OPENING] == 1 and (gained or not no_plan):
            compute_plans(gs, ps, hands, plan, plan_n, rv, g)   # the hand changed: new plans
    return 0


# ------------------------------------------------------------------------------------------------
# starting games


@njit(_nrt=False)
def start_game(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
               g, n_players, dealer, seed, game_id, n_hands):
    """Reset row ``g`` to a new match and deal its first hand.

    ``dealer < 0`` draws the first dealer from the game's own RNG stream; ``n_hands <= 0`` plays
    the rules' ``n_hands`` (Caribbean: 9).  Deterministic in (rules, n_players, dealer, seed,
    game_id) only.
    """
    reset_game(gs, ps, hscore, hwin, rv, g, n_players, dealer, seed, game_id, n_hands)
    _deal(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, rv, g, True)


@njit(_nrt=False)
def reset_game(gs, ps, hscore, hwin, rv, g, n_players, dealer, seed, game_id, n_hands):
    """``start_game`` without its deal: for callers that deal a hand of their choice next
    (``deal_hand``), so that the first hand is not shuffled and dealt for nothing."""
    for j in range(gs.shape[1]):
        gs[g, j] = 0
    for p in range(P_MAX):
        for j in range(ps.shape[2]):
            ps[g, p, j] = 0
    for h in range(H_MAX):
        hwin[g, h] = -1
        for p in range(P_MAX):
            hscore[g, h, p] = 0
    gs[g, G_NP] = n_players
    gs[g, G_SEED] = seed
    gs[g, G_GAME_ID] = game_id
    if dealer < 0:
        dealer = rng_below(rng_key(seed, game_id, STREAM_DEALER), 0, n_players)
    gs[g, G_DEALER] = dealer
    if n_hands <= 0:
        n_hands = rv[R_N_HANDS]
    if n_hands <= 0:                 # n_hands = "none" (played to elimination / agreed): one hand
        n_hands = 1
    gs[g, G_LAST_HAND] = n_hands - 1
    gs[g, G_HAND_NO] = 0
    gs[g, G_ROUND] = 0
    gs[g, G_TAKEN] = -1
    gs[g, G_CALLER] = -1


@njit(_nrt=False)
def deal_hand(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
              g, hand_no, dealer):
    """Deal hand ``hand_no`` (0-based; its round is ``hand_no % n_rounds``) of an already started
    game with the given dealer, as a fresh hand.  For per-round studies and tests; the normal
    flow deals every hand by itself."""
    gs[g, G_HAND_NO] = hand_no
    gs[g, G_ROUND] = hand_no % rv[R_N_ROUNDS]
    if gs[g, G_LAST_HAND] < hand_no:
        gs[g, G_LAST_HAND] = hand_no
    gs[g, G_DEALER] = dealer
    gs[g, G_VOIDS] = 0
    gs[g, G_TERMINAL] = 0
    gs[g, G_DEAL_NO] += 1
    _deal(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, rv, g, True)


@njit(_nrt=False)
def start_games(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
                n_players, dealers, seeds, game_ids, n_hands):
    """``start_game`` for every row (dealers/seeds/game_ids are int64[B])."""
    for g in range(gs.shape[0]):
        start_game(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                   rv, g, n_players, dealers[g], seeds[g], game_ids[g], n_hands)


@njit(_nrt=False)
def resume(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, g):
    """Recompute the derived parts of a hand-built position (``Game.from_text``).

    Call window with ``G_TO_ACT < 0``: find the first eligible caller (or go to the draw).
    Play phase: compute the lay-down plans.
    """
    ph = gs[g, G_PHASE]
    if ph == PH_CALL and gs[g, G_TO_ACT] < 0:
        c = _next_caller(gs, ps, disc_by, rv, g, 1)
        if c >= 0:
            gs[g, G_TO_ACT] = c
        else:
            gs[g, G_PHASE] = PH_DRAW
            gs[g, G_TO_ACT] = gs[g, G_ACTIVE]
    elif ph == PH_PLAY:
        gs[g, G_TO_ACT] = gs[g, G_ACTIVE]
        _plans_in_play(gs, ps, hands, minfo, mcards, mas, plan, plan_n, rv, g)
    elif ph == PH_DRAW or ph == PH_ALLOW:
        gs[g, G_TO_ACT] = gs[g, G_ACTIVE]


# ------------------------------------------------------------------------------------------------
# match result


@njit
def match_winners(gs, ps, hscore, hwin, rv, g, out):
    """Mark the match winners of game ``g`` in ``out`` (bool[P_MAX]); return how many.

    Lowest total wins; ties per ``tie_rule``: 0 "shared" (A14), 1 fewest points in the last
    hand, 2 most hands won (a tie that the rule cannot break stays shared).
    """
    n = gs[g, G_NP]
    best = ps[g, 0, PS_TOTAL]
    for p in range(n):
        if ps[g, p, PS_TOTAL] < best:
            best = ps[g, p, PS_TOTAL]
    for p in range(P_MAX):
        out[p] = p < n and ps[g, p, PS_TOTAL] == best
    rule = rv[R_TIE_RULE]
    last = gs[g, G_HANDS_DONE] - 1
    if last >= H_MAX:
        last = H_MAX - 1
    if rule != 0 and last >= 0:
        key = np.zeros(P_MAX, dtype=np.int64)
        for p in range(n):
            if rule == 1:
                key[p] = hscore[g, last, p]
            else:
                w = 0
                for h in range(last + 1):
                    if hwin[g, h] == p:
                        w += 1
                key[p] = -w
        kbest = 1 << 62
        for p in range(n):
            if out[p] and key[p] < kbest:
                kbest = key[p]
        for p in range(n):
            if out[p] and key[p] != kbest:
                out[p] = False
    c = 0
    for p in range(n):
        if out[p]:
            c += 1
    return c


# ------------------------------------------------------------------------------------------------
# invariants (tests, simulator self-checks)

INV_OK = 0
INV_DECK_EXCEEDED = 1
INV_CONSERVATION = 2
INV_MELD_ILLEGAL = 3
INV_MELD_LAYOUT = 4
INV_CALLS = 5
INV_MASK_EMPTY = 6
INV_NEGATIVE = 7
INV_TURN_CAP = 8
INV_MELD_OF_UNLAID = 9


@njit
def meld_value_of(minfo, mcards, mas, rv, g, m):
    """Legality of table meld ``m`` through the meld kernel (-1 = illegal), jokers declared."""
    nat = np.zeros(52, dtype=np.int64)
    ndecl = 0
    kind = minfo[g, m, MI_KIND]
    if kind == MK_RUN:
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
    else:
        lo = 0
        hi = minfo[g, m, MI_LEN] - 1
    decl = np.zeros(hi - lo + 1, dtype=np.int64)
    nfree = 0
    for q in range(lo, hi + 1):
        c = mcards[g, m, q]
        if c == JOKER:
            if mas[g, m, q] >= 0:
                decl[ndecl] = mas[g, m, q]
                ndecl += 1
            else:
                nfree += 1
        elif c >= 0:
            nat[c] += 1
    return meld_best_value(nat, nfree, decl[:ndecl], rv, KIND_RUN if kind == MK_RUN else KIND_SET)


@njit
def check_invariants(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                     rv, g, full_deck, mask):
    """0 if game ``g`` is consistent, else an ``INV_*`` code.

    Checks: no card type more often than the deck holds (and, with ``full_deck``, every card of
    the deck is in exactly one place: hands, stock, pile, table); every table meld is legal with
    its declared jokers and laid out consistently; calls within the limit; the legal mask is
    non-empty unless terminal; the turn counter below the cap.
    """
    cnt = np.zeros(N_TYPES, dtype=np.int64)
    n = gs[g, G_NP]
    for p in range(P_MAX):
        for t in range(N_TYPES):
            if hands[g, p, t] < 0:
                return INV_NEGATIVE
            cnt[t] += hands[g, p, t]
    for i in range(gs[g, G_STOCK_N]):
        cnt[stock[g, i]] += 1
    for i in range(gs[g, G_DISC_N]):
        cnt[disc[g, i]] += 1
    for m in range(gs[g, G_N_MELDS]):
        kind = minfo[g, m, MI_KIND]
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
        if hi - lo + 1 != minfo[g, m, MI_LEN]:
            return INV_MELD_LAYOUT
        nj = 0
        for q in range(lo, hi + 1):
            c = mcards[g, m, q]
            if c < 0:
                return INV_MELD_LAYOUT
            if kind == MK_RUN and mas[g, m, q] != pos_type(minfo[g, m, MI_KEY], q):
                return INV_MELD_LAYOUT
            if c != JOKER and mas[g, m, q] != c:
                return INV_MELD_LAYOUT
            if c == JOKER:
                nj += 1
            cnt[c] += 1
        if nj != minfo[g, m, MI_NJ]:
            return INV_MELD_LAYOUT
        if ps[g, minfo[g, m, MI_OWNER], PS_LAID] != 1:
            return INV_MELD_OF_UNLAID
        if kind != MK_JSET and meld_value_of(minfo, mcards, mas, rv, g, m) < 0:
            return INV_MELD_ILLEGAL
    for t in range(52):
        if cnt[t] > rv[R_N_DECKS] or (full_deck and cnt[t] != rv[R_N_DECKS]):
            return INV_CONSERVATION if full_deck else INV_DECK_EXCEEDED
    if cnt[JOKER] > rv[R_N_JOKERS] or (full_deck and cnt[JOKER] != rv[R_N_JOKERS]):
        return INV_CONSERVATION if full_deck else INV_DECK_EXCEEDED
    for p in range(n):
        if ps[g, p, PS_CALLS] > rv[R_MAX_CALLS_PER_PLAYER]:
            return INV_CALLS
    if gs[g, G_TURN] >= rv[R_MAX_TURNS_PER_HAND] and gs[g, G_TERMINAL] == 0:
        return INV_TURN_CAP
    k = legal_mask(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                   rv, g, mask)
    if k == 0 and gs[g, G_TERMINAL] == 0:
        return INV_MASK_EMPTY
    return INV_OK


@njit
def mask_consistent(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
                    g, mask):
    """-1 if ``legal_mask`` agrees with ``check_action`` on every action id, else the first id
    where they differ (the mask only tests candidates, so this guards its candidate lists)."""
    legal_mask(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
               g, mask)
    for a in range(N_ACTIONS):
        ok = check_action(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore,
                          hwin, rv, g, a) == 0
        if ok != mask[a]:
            return a
    return -1


@njit(_nrt=False)
def may_call(gs, ps, disc_by, rv, g, seat):
    """Could ``seat`` call the top discard in this turn's call window (eligibility only)?"""
    return _caller_ok(gs, ps, disc_by, rv, g, seat)
