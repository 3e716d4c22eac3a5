"""Turn and hand flow: the phases of a turn, calls, the stock, dealing, the end of a hand, and
starting or resuming games.

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
   from the pile unless another copy is held, A40/A53).  With nothing discardable and nothing to
   tack the turn may end without a discard (A15/A54).  An empty hand ends the hand at once (A3).

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
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rng import rng_below, rng_key, shuffle_prefix
from kalooki_sim.core.rulevec import (
    CALLS_LIMIT_SCOPE_HAND, R_CALL_PENALTY_CARDS, R_CALLS_ENABLED, R_CALLS_LIMIT_SCOPE, R_CALLS_PER_TURN,
    R_CUT_JOKER_TO_CUTTER, R_DEALER_MAY_SWAP_UPCARD, R_DENY_REQUIRES_NOT_OPENED, R_KALOOKI_ENABLED,
    R_MAX_CALLS_PER_PLAYER, R_MAX_RESHUFFLES_PER_HAND, R_MAX_TURNS_PER_HAND, R_MAX_VOID_REPLAYS, R_N_DECKS, R_N_HANDS,
    R_N_JOKERS, R_N_ROUNDS, R_ROUND_BASE, R_STOCK_EXHAUSTION, R_UPCARD, ROUND_STRIDE, STOCK_EXHAUSTION_VOID_IMMEDIATELY,
)

from .common import _dir, _seat_after, hand_penalty_of
from .layout import (
    DECK_MAX, EV_KALOOKI, EV_TURN_CAP, EV_VOID, EV_VOID_CAP, EV_WENT_OUT, G_ACTIVE, G_AFTER_ALLOW, G_CALL_DONE,
    G_CALLER, G_DEAL_NO, G_DEALER, G_DISC_N, G_FREED, G_GAME_ID, G_HAND_HOW, G_HAND_NO, G_HAND_WINNER, G_HANDS_DONE,
    G_LAID_THIS_TURN, G_LAST_EVENT, G_LAST_HAND, G_MANIPS, G_N_MELDS, G_NP, G_OPEN_DEBT, G_OWED, G_PHASE, G_PLAN_DEBT,
    G_RESHUFFLES, G_ROUND, G_SEED, G_STOCK_N, G_TAKEN, G_TAKEN_MUST, G_TERMINAL, G_TO_ACT, G_TOTAL_RESHUFFLES,
    G_TOTAL_VOIDS, G_TURN, G_VOIDS, H_MAX, JOKER, L_MAX, M_MAX, MI_T_ALL, MI_T_HI, MI_T_LO, N_TYPES, P_MAX, PH_ALLOW,
    PH_CALL, PH_DRAW, PH_OVER, PH_PLAY, PH_UPSWAP, PS_CALLS, PS_CALLS_BASE, PS_CERT, PS_LAID, PS_TOTAL,
)
from .match import HOW_DOWN_AND_OUT, HOW_KALOOKI, HOW_RIP, HOW_VOID, penalty_multiplier
from .plans import _clear_plans, _done_laying, _plans_in_play

# RNG streams of one game (rng.rng_key(seed, game_id, stream)).  Deal d uses stream
# d*STREAM_STRIDE, its k-th stock rebuild d*STREAM_STRIDE + 1 + k.  Streams from
# STREAM_POLICY_BASE up are free for policies (random agents, exploration).
STREAM_STRIDE = 1 << 16
STREAM_DEALER = 1 << 40
STREAM_POLICY_BASE = 1 << 41


@njit(_nrt=False)
def _rebuild_permitted(gs, rv, g):
    """May the stock be rebuilt now (stock_exhaustion, max_reshuffles_per_hand)?"""
    if rv[R_STOCK_EXHAUSTION] == STOCK_EXHAUSTION_VOID_IMMEDIATELY:
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


@njit(_nrt=False, inline="always")
def _enter_play(gs, ps, hands, minfo, mcards, mas, plan, plan_n, work, rv, g):
    gs[g, G_PHASE] = PH_PLAY
    gs[g, G_TO_ACT] = gs[g, G_ACTIVE]
    if _done_laying(ps, rv, g, gs[g, G_ACTIVE]):
        _clear_plans(plan_n, g)        # ``compute_plans``' answer, without the call
        return
    _plans_in_play(gs, ps, hands, minfo, mcards, mas, plan, plan_n, work[g], rv, g)


@njit(_nrt=False, specialise_constants=False)
def _deal(gs, ps, hands, shown, stock, disc, disc_by, minfo, mcards, mas, plan_n, rv, g, fresh):
    """Shuffle and deal the current hand (G_HAND_NO, G_ROUND, G_DEALER, G_DEAL_NO are set).

    ``fresh`` = first deal of this hand: calls are reset (scope "hand") or remembered (scope
    "game") as the hand's base; a replay after a void restores the base, so calls made in a
    voided deal do not count.
    """
    n = gs[g, G_NP]
    d = _dir(rv)
    for p in range(P_MAX):
        if fresh:
            if rv[R_CALLS_LIMIT_SCOPE] == CALLS_LIMIT_SCOPE_HAND:
                ps[g, p, PS_CALLS] = 0
            ps[g, p, PS_CALLS_BASE] = ps[g, p, PS_CALLS]
        else:
            ps[g, p, PS_CALLS] = ps[g, p, PS_CALLS_BASE]
        ps[g, p, PS_LAID] = 0
        ps[g, p, PS_CERT] = 0
        for t in range(N_TYPES):
            hands[g, p, t] = 0
            shown[g, p, t] = 0
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


@njit(_nrt=False, specialise_constants=False)
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
def _void_deal(gs, ps, hands, shown, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin, rv, g):
    """Stock empty and nothing to rebuild (A52): replay the hand (same dealer and contract)."""
    gs[g, G_VOIDS] += 1
    gs[g, G_TOTAL_VOIDS] += 1
    if gs[g, G_VOIDS] > rv[R_MAX_VOID_REPLAYS]:
        _finish_hand(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin,
                     rv, g, -1, EV_VOID_CAP)
        return
    gs[g, G_LAST_EVENT] = EV_VOID
    gs[g, G_DEAL_NO] += 1
    _deal(gs, ps, hands, shown, stock, disc, disc_by, minfo, mcards, mas, plan_n, rv, g, False)


@njit(_nrt=False, inline="always")     # once a turn: the call would cost more than its common path
def _end_turn(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin, rv, g):
    gs[g, G_TURN] += 1
    if gs[g, G_TURN] >= rv[R_MAX_TURNS_PER_HAND]:
        _finish_hand(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan_n, hscore, hwin,
                     rv, g, -1, EV_TURN_CAP)
        return
    n = gs[g, G_NP]
    _start_turn(gs, ps, disc_by, minfo, plan_n, rv, g, _seat_after(gs[g, G_ACTIVE], 1, n, _dir(rv)))


@njit(_nrt=False)
def start_game(state, rv, g, n_players, dealer, seed, game_id, n_hands):
    """Reset row ``g`` to a new match and deal its first hand.

    ``dealer < 0`` draws the first dealer from the game's own RNG stream; ``n_hands <= 0`` plays
    the rules' ``n_hands`` (Caribbean: 9).  Deterministic in (rules, n_players, dealer, seed,
    game_id) only.
    """
    gs, ps, hands, stock, disc, disc_by = state.gs, state.ps, state.hands, state.stock, state.disc, state.disc_by
    minfo, mcards, mas, plan_n, hscore = state.minfo, state.mcards, state.mas, state.plan_n, state.hscore
    hwin, shown = state.hwin, state.shown
    reset_game(gs, ps, hscore, hwin, rv, g, n_players, dealer, seed, game_id, n_hands)
    _deal(gs, ps, hands, shown, stock, disc, disc_by, minfo, mcards, mas, plan_n, rv, g, True)


@njit(_nrt=False, specialise_constants=False)
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


@njit(_nrt=False, specialise_constants=False)
def deal_hand(state, rv, g, hand_no, dealer):
    """Deal hand ``hand_no`` (0-based; its round is ``hand_no % n_rounds``) of an already started
    game with the given dealer, as a fresh hand.  For per-round studies and tests; the normal
    flow deals every hand by itself."""
    gs, ps, hands, stock, disc, disc_by = state.gs, state.ps, state.hands, state.stock, state.disc, state.disc_by
    minfo, mcards, mas, plan_n, shown = state.minfo, state.mcards, state.mas, state.plan_n, state.shown
    gs[g, G_HAND_NO] = hand_no
    gs[g, G_ROUND] = hand_no % rv[R_N_ROUNDS]
    if gs[g, G_LAST_HAND] < hand_no:
        gs[g, G_LAST_HAND] = hand_no
    gs[g, G_DEALER] = dealer
    gs[g, G_VOIDS] = 0
    gs[g, G_TERMINAL] = 0
    gs[g, G_DEAL_NO] += 1
    _deal(gs, ps, hands, shown, stock, disc, disc_by, minfo, mcards, mas, plan_n, rv, g, True)


@njit(_nrt=False)
def start_games(state, rv, n_players, dealers, seeds, game_ids, n_hands):
    """``start_game`` for every row (dealers/seeds/game_ids are int64[B])."""
    gs = state.gs
    for g in range(gs.shape[0]):
        start_game(state, rv, g, n_players, dealers[g], seeds[g], game_ids[g], n_hands)


@njit(_nrt=False)
def resume(state, rv, g):
    """Recompute the derived parts of a hand-built position (``Game.from_text``).

    Call window with ``G_TO_ACT < 0``: find the first eligible caller (or go to the draw).
    Play phase: compute the lay-down plans.
    """
    gs, ps, hands, disc_by, minfo = state.gs, state.ps, state.hands, state.disc_by, state.minfo
    mcards, mas, plan, plan_n, work = state.mcards, state.mas, state.plan, state.plan_n, state.work
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
        _plans_in_play(gs, ps, hands, minfo, mcards, mas, plan, plan_n, work[g], rv, g)
    elif ph == PH_DRAW or ph == PH_ALLOW:
        gs[g, G_TO_ACT] = gs[g, G_ACTIVE]


@njit(_nrt=False)
def may_call(gs, ps, disc_by, rv, g, seat):
    """Could ``seat`` call the top discard in this turn's call window (eligibility only)?"""
    return _caller_ok(gs, ps, disc_by, rv, g, seat)
