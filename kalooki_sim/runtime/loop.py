"""The one compiled turn loop (DESIGN.md §5): every driver of a game is built on it.

``advance`` plays game row ``b`` until a seat whose agent is *external* must decide, or until the
match is over.  A compiled agent's decision is asked of ``agents.compiled.seat_action`` and applied
at once; an external seat's decision is left to the caller, with the legal-action mask ready in
``mask[b % L]`` (below), and handed back through ``act``.  After every action the loop keeps the hand's
tallies (lay-down turns, calls, cards taken from the pile) and, when the engine ends a hand, passes it to the match flow
(``engine.match_flow``: the score sheet, the next deal) and writes the hand's result rows.  So:

* ``rollout.simulate`` (the closed loop, millions of hands) runs ``advance`` with no external seat
  over lanes on threads (``closed_loop``, ``lanes.run_lanes``);
* the lockstep environment, ``Game`` and replay recording run the same ``advance``/``act`` from
  Python; with ``CX_PAUSE`` set every seat is treated as external, and ``agent_action`` asks the
  seat's compiled agent what it would play (the same call, the same random stream, as inside the
  loop), so a game stepped from Python with the compiled agents is the closed loop's game.

Per game row ``b`` the loop reads its seating: ``seats[b, p]`` the agent id of real player ``p``
(``EXTERNAL`` = -1: decided outside) and ``params[b, p]`` its parameter row.  One batch can hold a
different seating in every game (every rotation of a lineup on the same deals).  Each seat's policy
randomness is stream ``STREAM_POLICY_BASE + stream`` of (seed, game id), ``stream`` given per game
and real player (``start``'s ``lineup.streams``: the seat number unless a driver says otherwise; a
tournament gives each entrant its own), so a game is a pure function of (rules, seating,
parameters, streams, seed, game id).

The kernels take a few named bundles (named tuples: numba types them field by field, so two of
them cannot be passed in each other's place), built by ``LoopArrays``: ``state`` (the engine's
``StateArrays``) and ``rv``; ``sheet`` (``match_flow.Sheet``: ``sp, sx, sev``); ``seating``
(``Seating``: ``seats``, ``params`` and the policy streams ``keys``, ``ctrs``); ``ctx`` (int64[B,
NCX]: ``CX_*``); ``lane`` (``Lane``: ``known``, the compiled seats' decision scratch, int64[L,
KNOWN_LEN], and ``mask``, bool[L, N_ACTIONS]); and ``out`` (``Outputs``: ``rows``, int64[NR, O, H,
n], one plane per ``R_*`` column, written per hand and real player; ``mrows``, int64[NM, O, n], per
match and player; ``mwin``, float64[O, n], match win shares), where ``O`` is the output row
``ctx[b, CX_OUT]`` of the game (-1: no output).

``known`` holds nothing from one decision to the next (every decision starts by forgetting it),
and ``mask`` only until the caller has read an external seat's legal actions, so neither needs a
row per game: row ``b`` uses ``known[b % L]`` and ``mask[b % L]``.  The closed loop, ``Game`` and
the lockstep drivers give each row its own (``L = B``); the lockstep environment gives each thread
one and lets a thread take the rows ``t, t + L, ...``, copying each decision's legal ids out at
once, so a batch of thousands of games does not carry 34 KB of scratch per game through the cache
at every step.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kalooki_sim.agents.base import EXTERNAL
from kalooki_sim.agents.compiled import KNOWN_LEN, seat_action
from kalooki_sim.core.jit import njit
from kalooki_sim.core.lanes import run_lanes
from kalooki_sim.core.rng import rng_key
from kalooki_sim.core.rulevec import R_COUNT_DENIED_CALLS, R_N_ROUNDS
from kalooki_sim.engine.context import (
    CX_CALLS, CX_CHECK, CX_DENIED, CX_ERR, CX_GAME, CX_LAID, CX_LAST, CX_MAX_STEPS, CX_OUT, CX_PAUSE, CX_RESH0, CX_SEED,
    CX_STATUS, CX_STEPS, CX_TAKEN, CX_VOIDS0, NCX,
)
from kalooki_sim.engine.core import STREAM_POLICY_BASE, apply_action, check_invariants, legal_mask, step
from kalooki_sim.engine.layout import (
    A_ALLOW, A_DENY, A_DISCARD, A_DRAW_DISCARD, A_LAY, A_TACK_LOW, A_UPSWAP, EV_VOID, G_ACTIVE, G_CALLER, G_DISC_N,
    G_HAND_HOW, G_HAND_NO, G_HAND_WINNER, G_HANDS_DONE, G_LAST_EVENT, G_TO_ACT, G_TOTAL_RESHUFFLES, G_TOTAL_VOIDS,
    G_TURN, N_ACTIONS, P_MAX,
)
from kalooki_sim.engine.match import EV_PAYMENT, EV_PENALTY, EV_STATUS, penalty_multiplier
from kalooki_sim.engine.match_flow import (
    SP_ACTIVE, SP_BB, SP_CARDS, SP_JOKERS, SP_KALOOKIS, SP_MONEY, SP_MWIN, SP_PLAYED, SP_REAL, SP_RIPS, SP_TOTAL,
    SP_UNITS, SP_VALUE, SX_DEALER, SX_FINISHED, SX_HANDS, SX_N, SX_N_IN, SX_N_MWIN, SX_POOL, Sheet, begin_match,
    end_hand, new_sheet, next_hand,
)
from kalooki_sim.engine.state import State

__all__ = [
    "EXTERNAL", "ST_PLAYING", "ST_WAITING", "ST_OVER", "ST_FAILED",
    "ERR_MAX_STEPS", "ERR_ILLEGAL", "ERR_BAD_ACTION",
    "ROW_COLUMNS", "MATCH_PLANES", "NR", "NM",
    "start", "attach", "advance", "act", "agent_action", "closed_loop", "advance_rows", "act_rows", "LoopArrays",
    "lane_row", "Seating", "Lane", "Outputs", "Lineup", "Sheet",
]


# loop status (ctx[b, CX_STATUS])
ST_PLAYING = 0
ST_WAITING = 1           # an external seat must act: mask[b % L] holds its legal actions
ST_OVER = 2              # the match is over
ST_FAILED = 3            # stopped on an error (ctx[b, CX_ERR])

# errors (ctx[b, CX_ERR]); 1000 + INV_*: invariant failure (check); 2000 + E_*: the engine refused
ERR_MAX_STEPS = 1        # a hand took more than its step budget
ERR_ILLEGAL = 2          # a compiled agent chose an action outside the legal mask
ERR_BAD_ACTION = 3       # ``act`` was called when no external decision was pending

# rows[R_*, o, hand, real player]: one plane per column, so a finished batch hands out views
ROW_COLUMNS = (
    "game_id", "hand_no", "round", "seat", "policy_id", "dealer", "penalty", "won", "laid_down",
    "laid_down_turn", "calls_used", "turns", "reshuffles", "voids", "end_event", "engine_seat",
    "players", "hand_value", "cards_left", "jokers_left", "sheet_penalty", "payment", "total", "status",
    "pool", "calls_denied", "valid",
)
(R_GAME, R_HAND_NO, R_ROUND, R_SEAT, R_POLICY, R_DEALER, R_PEN, R_WON, R_LAID, R_LAID_TURN, R_CALLS,
 R_TURNS, R_RESH, R_VOIDS, R_EVENT, R_ENGINE_SEAT, R_PLAYERS, R_VALUE, R_CARDS, R_JOKERS, R_SHEET_PEN,
 R_PAY, R_TOTAL, R_STATUS, R_POOL, R_DENIED, R_VALID) = range(27)
NR = 27
# mrows[M_*, o, real player]
MATCH_PLANES = ("total", "units", "money", "buy_backs", "active", "hands_played", "rips", "kalookis",
                "pool", "finished", "match_hands", "policy_id")
(M_TOTAL, M_UNITS, M_MONEY, M_BB, M_ACTIVE, M_HANDS, M_RIPS, M_KALOOKIS, M_POOL, M_FINISHED,
 M_MATCH_HANDS, M_POLICY) = range(12)
NM = 12


class Seating(NamedTuple):
    """Who plays each real player of each row: ``seats[B, P_MAX]`` agent ids (``EXTERNAL``: decided
    outside), ``params[B, P_MAX, k]`` their parameter rows, and their policy streams (``keys``
    uint64[B, P_MAX], ``ctrs`` int64[B, P_MAX])."""

    seats: np.ndarray
    params: np.ndarray
    keys: np.ndarray
    ctrs: np.ndarray


class Lane(NamedTuple):
    """A decision's scratch, shared by the rows of a lane (``lane_row``): ``known`` int64[L,
    KNOWN_LEN] (the compiled seats' memory: greedy's legality cache and the like) and ``mask``
    bool[L, N_ACTIONS] (the legal actions of an external seat's pending decision)."""

    known: np.ndarray
    mask: np.ndarray


class Outputs(NamedTuple):
    """Result planes: ``rows[R_*, o, hand, player]``, ``mrows[M_*, o, player]`` and the match win
    shares ``mwin[o, player]`` of output row ``o``."""

    rows: np.ndarray
    mrows: np.ndarray
    mwin: np.ndarray


class Lineup(NamedTuple):
    """The lineup of one game (``start``): per real player its agent id (``seats``), parameter row
    (``params[n, k]``), policy stream number (``streams``) and buy-back wish (``wants``).  The
    closed loop takes one for all its games: the first three with a game axis first."""

    seats: np.ndarray
    params: np.ndarray
    streams: np.ndarray
    wants: np.ndarray


class LoopArrays:
    """The arrays of a loop over ``batch`` game rows (the module docstring lists them).

    ``state`` is the engine's ``State``; ``loop_arrays()`` the rest of a kernel's arguments in their
    order, outputs excluded (``outputs`` makes those, for ``n_out`` games of at most ``hands`` hands
    and ``n_players`` players).  ``k`` is the width of a parameter row; ``scratch_rows`` the rows of
    ``known`` and ``mask`` (default one per game row; fewer only for a driver that runs the rows
    ``t, t + scratch_rows, ...`` on one thread and reads each decision's mask at once, module
    docstring)."""

    def __init__(self, batch: int, k: int = 1, scratch_rows: int | None = None):
        B = int(batch)
        L = B if scratch_rows is None else int(scratch_rows)
        if not 1 <= L <= B:
            raise ValueError(f"scratch_rows must be 1..{B}, got {scratch_rows}")
        self.state = State.empty(B)
        self.sp, self.sx, self.sev = new_sheet(B)
        self.seats = np.full((B, P_MAX), EXTERNAL, dtype=np.int64)
        self.params = np.zeros((B, P_MAX, max(1, int(k))), dtype=np.float64)
        self.keys = np.zeros((B, P_MAX), dtype=np.uint64)
        self.ctrs = np.zeros((B, P_MAX), dtype=np.int64)
        self.ctx = np.zeros((B, NCX), dtype=np.int64)
        self.ctx[:, CX_OUT] = -1
        self.known = np.zeros((L, KNOWN_LEN), dtype=np.int64)
        self.mask = np.zeros((L, N_ACTIONS), dtype=np.bool_)

    @property
    def sheet(self) -> Sheet:
        return Sheet(self.sp, self.sx, self.sev)

    @property
    def seating(self) -> Seating:
        return Seating(self.seats, self.params, self.keys, self.ctrs)

    @property
    def lane(self) -> Lane:
        return Lane(self.known, self.mask)

    def loop_arrays(self) -> tuple:
        """``(sheet, seating, ctx, lane)``: the arguments of ``advance`` and ``act`` after ``b``."""
        return (self.sheet, self.seating, self.ctx, self.lane)

    def copy(self) -> "LoopArrays":
        other = LoopArrays.__new__(LoopArrays)
        other.__dict__.update({k: v.copy() for k, v in self.__dict__.items()})
        return other

    @staticmethod
    def outputs(n_out: int, hands: int, n_players: int) -> "Outputs":
        """The outputs of ``n_out`` games (``n_out = 0``: none are kept)."""
        return Outputs(np.zeros((NR, n_out, hands, n_players), dtype=np.int64),
                       np.zeros((NM, n_out, n_players), dtype=np.int64),
                       np.zeros((n_out, n_players), dtype=np.float64))


@njit(_nrt=False, inline="always")
def lane_row(arr, b):
    """Row ``b``'s row of a scratch array shared by the rows of a lane (``known``, ``mask``:
    ``arr[b % L]``, module docstring)."""
    return arr[np.uint64(b) % np.uint64(arr.shape[0])]


@njit(_nrt=False)
def _clear_tallies(ctx, b):
    for i in range(P_MAX):
        ctx[b, CX_LAID + i] = -1
        ctx[b, CX_CALLS + i] = 0
        ctx[b, CX_DENIED + i] = 0
        ctx[b, CX_TAKEN + i] = 0


@njit(_nrt=False, inline="always")
def _pile_take(gs, disc, b, a):
    """What action ``a``, about to be applied in row ``b``, takes from the discard pile: ``seat * 64
    + card type`` or -1.  The top discard goes to the active player when he draws it or denies a
    call, to the caller when his call is allowed, to the dealer when he swaps the upcard.  Everyone
    at the table sees it happen, so the observation may show it (``CX_TAKEN``); the engine keeps no
    such history, so the loop keeps it, as it keeps the calls.  Asked after every action of the
    closed loop too, so the action alone rules out the others before any state is read."""
    if a == A_DRAW_DISCARD or a == A_DENY:
        who = gs[b, G_ACTIVE]
    elif a == A_ALLOW:
        who = gs[b, G_CALLER]
    elif A_UPSWAP <= a < A_TACK_LOW:     # the dealer's upcard swap
        who = gs[b, G_TO_ACT]
    else:
        return -1
    n = gs[b, G_DISC_N]
    if n <= 0:
        return -1
    top = np.int64(disc[b, n - 1])
    if who < 0 or top < 0:
        return -1
    return who * 64 + top


@njit(_nrt=False, inline="always")
def _note_take(ctx, b, took):
    if took >= 0:
        ctx[b, CX_TAKEN + took // 64] |= np.int64(1) << (took % 64)


@njit(_nrt=False)
def start(state, rv, b, sheet, seating, ctx, lineup, dealer, seed, game_id, first_hand, hand_limit, max_steps,
          out_row, check, pause):
    """Start game ``game_id`` on row ``b`` with the ``lineup`` (one entry per real player) and deal its first hand (``match_flow.begin_match``: ``first_hand >= 0`` for
    that single hand, else a match of at most ``hand_limit`` hands; ``dealer < 0``: drawn).
    ``max_steps``: the step budget of one hand; ``out_row``: where its results go (-1: nowhere);
    ``pause``: stop before every decision, the compiled seats' too (``agent_action``).
    ``lineup.streams[p]``: the policy random stream of real player ``p`` (``STREAM_POLICY_BASE`` +
    it; the seat number by default, an entrant's own number in a tournament)."""
    seats, params, keys, ctrs = seating
    n = lineup.seats.shape[0]
    begin_match(state, rv, b, sheet.sp[b], sheet.sx[b], n, dealer, seed, game_id, first_hand, hand_limit, lineup.wants)
    for p in range(P_MAX):
        keys[b, p] = 0
        ctrs[b, p] = 0
        seats[b, p] = EXTERNAL
        if p < n:
            keys[b, p] = rng_key(seed, game_id, STREAM_POLICY_BASE + lineup.streams[p])
            seats[b, p] = lineup.seats[p]
            for j in range(params.shape[2]):
                params[b, p, j] = lineup.params[p, j] if j < lineup.params.shape[1] else 0.0
    attach(state.gs, b, ctx, game_id, seed, max_steps, out_row, check, pause)


@njit(_nrt=False)
def attach(gs, b, ctx, game_id, seed, max_steps, out_row, check, pause):
    """Make row ``b``'s position (dealt by ``start``, or built by hand with a sheet from
    ``match_flow.begin_from_position``) the start of a loop."""
    ctx[b, CX_OUT] = out_row
    ctx[b, CX_GAME] = game_id
    ctx[b, CX_SEED] = seed
    ctx[b, CX_STATUS] = ST_PLAYING
    ctx[b, CX_ERR] = 0
    ctx[b, CX_STEPS] = 0
    ctx[b, CX_MAX_STEPS] = max_steps
    ctx[b, CX_CHECK] = 1 if check else 0
    ctx[b, CX_PAUSE] = 1 if pause else 0
    ctx[b, CX_RESH0] = gs[b, G_TOTAL_RESHUFFLES]
    ctx[b, CX_VOIDS0] = gs[b, G_TOTAL_VOIDS]
    ctx[b, CX_LAST] = -1
    _clear_tallies(ctx, b)


@njit(_nrt=False)
def _write_hand(gs, rv, b, sp, sx, sev, seats, ctx, rows, turn):
    """The rows of the hand that just ended, one per real player dealt in, before the sheet moves
    on (``SX_HANDS`` has counted it)."""
    o = ctx[b, CX_OUT]
    h = sx[b, SX_HANDS] - 1
    if o < 0 or h >= rows.shape[2]:
        return
    hno = gs[b, G_HAND_NO]
    wseat = gs[b, G_HAND_WINNER]
    mult = penalty_multiplier(rv, gs[b, G_HAND_HOW])
    n_in = sx[b, SX_N_IN]
    ev = gs[b, G_LAST_EVENT]
    for i in range(n_in):
        p = sp[b, SP_REAL, i]
        won = 1 if i == wseat else 0
        rows[R_GAME, o, h, p] = ctx[b, CX_GAME]
        rows[R_HAND_NO, o, h, p] = hno
        rows[R_ROUND, o, h, p] = hno % rv[R_N_ROUNDS] + 1
        rows[R_SEAT, o, h, p] = p
        rows[R_POLICY, o, h, p] = seats[b, p]
        rows[R_DEALER, o, h, p] = sx[b, SX_DEALER]
        rows[R_WON, o, h, p] = won
        rows[R_PEN, o, h, p] = 0 if won == 1 else sp[b, SP_VALUE, p] * mult
        rows[R_LAID, o, h, p] = 1 if ctx[b, CX_LAID + i] >= 0 else 0
        rows[R_LAID_TURN, o, h, p] = ctx[b, CX_LAID + i]
        rows[R_CALLS, o, h, p] = ctx[b, CX_CALLS + i]
        rows[R_TURNS, o, h, p] = turn + 1
        rows[R_RESH, o, h, p] = gs[b, G_TOTAL_RESHUFFLES] - ctx[b, CX_RESH0]
        rows[R_VOIDS, o, h, p] = gs[b, G_TOTAL_VOIDS] - ctx[b, CX_VOIDS0]
        rows[R_EVENT, o, h, p] = ev
        rows[R_ENGINE_SEAT, o, h, p] = i
        rows[R_PLAYERS, o, h, p] = n_in
        rows[R_VALUE, o, h, p] = sp[b, SP_VALUE, p]
        rows[R_CARDS, o, h, p] = sp[b, SP_CARDS, p]
        rows[R_JOKERS, o, h, p] = sp[b, SP_JOKERS, p]
        rows[R_SHEET_PEN, o, h, p] = sev[b, p, EV_PENALTY]
        rows[R_PAY, o, h, p] = sev[b, p, EV_PAYMENT]
        rows[R_TOTAL, o, h, p] = sp[b, SP_TOTAL, p]
        rows[R_STATUS, o, h, p] = sev[b, p, EV_STATUS]
        rows[R_POOL, o, h, p] = sx[b, SX_POOL]
        rows[R_DENIED, o, h, p] = ctx[b, CX_DENIED + i]
        rows[R_VALID, o, h, p] = 1
    ctx[b, CX_RESH0] = gs[b, G_TOTAL_RESHUFFLES]
    ctx[b, CX_VOIDS0] = gs[b, G_TOTAL_VOIDS]


@njit(_nrt=False)
def _write_match(sp, sx, b, seats, ctx, mrows, mwin):
    o = ctx[b, CX_OUT]
    if o < 0:
        return
    n = sx[b, SX_N]
    nw = sx[b, SX_N_MWIN]
    for p in range(n):
        mrows[M_TOTAL, o, p] = sp[b, SP_TOTAL, p]
        mrows[M_UNITS, o, p] = sp[b, SP_UNITS, p]
        mrows[M_MONEY, o, p] = sp[b, SP_MONEY, p]
        mrows[M_BB, o, p] = sp[b, SP_BB, p]
        mrows[M_ACTIVE, o, p] = sp[b, SP_ACTIVE, p]
        mrows[M_HANDS, o, p] = sp[b, SP_PLAYED, p]
        mrows[M_RIPS, o, p] = sp[b, SP_RIPS, p]
        mrows[M_KALOOKIS, o, p] = sp[b, SP_KALOOKIS, p]
        mrows[M_POOL, o, p] = sx[b, SX_POOL]
        mrows[M_FINISHED, o, p] = sx[b, SX_FINISHED]
        mrows[M_MATCH_HANDS, o, p] = sx[b, SX_HANDS]
        mrows[M_POLICY, o, p] = seats[b, p]
        mwin[o, p] = 1.0 / nw if (sp[b, SP_MWIN, p] != 0 and nw > 0) else 0.0


@njit(_nrt=False)
def _hand_over(state, rv, b, sheet, seats, ctx, out, turn):
    """The engine ended a hand (its last action at turn ``turn``): the sheet settles it, its rows
    are written, and the next hand is dealt or the match closed."""
    gs, ps, hands, hscore, hwin = state.gs, state.ps, state.hands, state.hscore, state.hwin
    sp, sx, sev = sheet
    over = end_hand(gs, ps, hands, hscore, hwin, rv, b, sp[b], sx[b], sev[b])
    _write_hand(gs, rv, b, sp, sx, sev, seats, ctx, out.rows, turn)
    _clear_tallies(ctx, b)
    ctx[b, CX_STEPS] = 0
    if over == 1:
        _write_match(sp, sx, b, seats, ctx, out.mrows, out.mwin)
        ctx[b, CX_STATUS] = ST_OVER
    else:
        next_hand(state, rv, b, sp[b], sx[b])


@njit(_nrt=False, inline="always")      # once per step: a call would pass some 25 arrays
def _after_action(state, rv, b, sheet, seats, ctx, out, seat, a, turn, caller, hd):
    """Bookkeeping after ``seat``'s action ``a`` (taken at turn ``turn``): the hand's tallies, and
    ``_hand_over`` when the engine ended the hand."""
    gs = state.gs
    if a >= A_LAY and a < A_DISCARD:
        ctx[b, CX_LAID + seat] = turn
    elif a == A_ALLOW:
        ctx[b, CX_CALLS + caller] += 1
    elif a == A_DENY:
        ctx[b, CX_DENIED + caller] += 1
        if rv[R_COUNT_DENIED_CALLS] == 1:
            ctx[b, CX_CALLS + caller] += 1
    ctx[b, CX_STEPS] += 1
    if gs[b, G_HANDS_DONE] > hd:
        _hand_over(state, rv, b, sheet, seats, ctx, out, turn)
    elif gs[b, G_LAST_EVENT] == EV_VOID:
        # the deal was voided and is replayed: lay-downs and calls of the void deal do not count
        _clear_tallies(ctx, b)


@njit(_nrt=False)
def _fail(ctx, b, err):
    ctx[b, CX_ERR] = err
    ctx[b, CX_STATUS] = ST_FAILED
    return ST_FAILED


@njit(_nrt=False)
def advance(state, rv, b, sheet, seating, ctx, lane, out):
    """Play row ``b`` until an external decision is due (``ST_WAITING``, ``lane.mask[b % L]``
    filled), the match is over (``ST_OVER``) or an error stops it (``ST_FAILED``); returns the
    status."""
    gs, disc = state.gs, state.disc
    sp = sheet.sp
    seats, params, keys, ctrs = seating
    st = ctx[b, CX_STATUS]
    if st != ST_PLAYING:
        return st
    check = ctx[b, CX_CHECK] == 1
    lane_known = lane_row(lane.known, b)
    lane_mask = lane_row(lane.mask, b)
    while True:
        if ctx[b, CX_STEPS] >= ctx[b, CX_MAX_STEPS]:
            return _fail(ctx, b, ERR_MAX_STEPS)
        seat = gs[b, G_TO_ACT]
        p = sp[b, SP_REAL, seat]
        agent = seats[b, p]
        if agent == EXTERNAL or ctx[b, CX_PAUSE] == 1:
            legal_mask(state, rv, b, lane_mask)
            ctx[b, CX_STATUS] = ST_WAITING
            return ST_WAITING
        a = seat_action(agent, params[b, p], state, rv, b, seat, lane_known, lane_mask, keys[b, p], ctrs[b, p:p + 1])
        if a < 0 or a >= N_ACTIONS:
            return _fail(ctx, b, ERR_ILLEGAL)
        turn = gs[b, G_TURN]
        caller = gs[b, G_CALLER]
        hd = gs[b, G_HANDS_DONE]
        took = _pile_take(gs, disc, b, a)
        if check:
            e = step(state, rv, b, a)
            if e != 0:
                return _fail(ctx, b, 2000 + e)
            r = check_invariants(state, rv, b, True, lane_mask)
            if r != 0:
                return _fail(ctx, b, 1000 + r)
        else:
            apply_action(state, rv, b, a)
        ctx[b, CX_LAST] = a
        _note_take(ctx, b, took)
        _after_action(state, rv, b, sheet, seats, ctx, out, seat, a, turn, caller, hd)
        if ctx[b, CX_STATUS] == ST_OVER:
            return ST_OVER


@njit(_nrt=False)
def act(state, rv, b, sheet, seating, ctx, lane, out, a):
    """Apply the pending external decision ``a`` of row ``b``.  Returns 0, ``ERR_BAD_ACTION`` when
    no decision is pending, or ``2000 + E_*`` when the engine refuses the action (nothing changed:
    the decision is still pending).  Call ``advance`` next."""
    gs, disc = state.gs, state.disc
    if ctx[b, CX_STATUS] != ST_WAITING:
        return ERR_BAD_ACTION
    seat = gs[b, G_TO_ACT]
    turn = gs[b, G_TURN]
    caller = gs[b, G_CALLER]
    hd = gs[b, G_HANDS_DONE]
    took = _pile_take(gs, disc, b, a)
    e = step(state, rv, b, a)
    if e != 0:
        return 2000 + e
    ctx[b, CX_STATUS] = ST_PLAYING
    ctx[b, CX_LAST] = a
    _note_take(ctx, b, took)
    if ctx[b, CX_CHECK] == 1:
        r = check_invariants(state, rv, b, True, lane_row(lane.mask, b))
        if r != 0:
            _fail(ctx, b, 1000 + r)
            return 1000 + r
    _after_action(state, rv, b, sheet, seating.seats, ctx, out, seat, a, turn, caller, hd)
    return 0


@njit(_nrt=False)
def agent_action(state, rv, b, sheet, seating, known, scratch):
    """What the compiled agent of the seat to act in row ``b`` plays here (-1: none, or an
    external seat).  It draws on that seat's own random stream exactly as the loop would, so a
    game stepped from Python with these answers is the game the closed loop plays."""
    gs = state.gs
    seats, params, keys, ctrs = seating
    seat = gs[b, G_TO_ACT]
    if seat < 0:
        return -1
    p = sheet.sp[b, SP_REAL, seat]
    agent = seats[b, p]
    if agent == EXTERNAL:
        return -1
    lane_known = lane_row(known, b)
    return seat_action(agent, params[b, p], state, rv, b, seat, lane_known, scratch, keys[b, p], ctrs[b, p:p + 1])


@njit
def closed_loop(state, rv, sheet, seating, ctx, lane, out, out_err, lineups, seed, game_ids, first_hand, hand_limit,
                max_steps, check, o_from, o_to, lane_from, lane_to):
    """Games ``o`` in ``o_from .. o_to - 1`` (id ``game_ids[o]``, lineup ``o`` of ``lineups``: a
    ``Lineup`` with a game axis first, ``wants`` shared) to their end, into output row ``o``; state
    row ``i`` (a lane; this call plays the lanes ``lane_from .. lane_to - 1``, see
    ``lanes.run_lanes``) plays games ``i, i + lanes, ...``.  ``first_hand >= 0`` plays single
    hands: game ``o``'s hand is ``game_ids[o] % n_rounds``."""
    n_lanes = state.gs.shape[0]
    n_rounds = rv[R_N_ROUNDS]
    for i in range(lane_from, lane_to):
        ln = np.uint64(i)       # the engine's kernels take the game row as uint64
        for o in range(o_from + ln, o_to, n_lanes):
            gid = game_ids[o]
            fh = -1 if first_hand < 0 else gid % n_rounds
            lineup = Lineup(lineups.seats[o], lineups.params[o], lineups.streams[o], lineups.wants)
            start(state, rv, ln, sheet, seating, ctx, lineup, -1, seed, gid, fh, hand_limit, max_steps, o, check,
                  False)
            st = advance(state, rv, ln, sheet, seating, ctx, lane, out)
            if st == ST_FAILED:
                out_err[o] = ctx[ln, CX_ERR]
            elif st != ST_OVER:
                out_err[o] = ERR_ILLEGAL        # an external seat in a closed loop


@njit
def _advance_rows(state, rv, sheet, seating, ctx, lane, out, which, status, k_from, k_to):
    for k in range(k_from, k_to):
        kk = np.uint64(k)
        status[kk] = advance(state, rv, np.uint64(which[kk]), sheet, seating, ctx, lane, out)


@njit
def _act_rows(state, rv, sheet, seating, ctx, lane, out, which, actions, result, k_from, k_to):
    for k in range(k_from, k_to):
        kk = np.uint64(k)
        b = np.uint64(which[kk])
        e = act(state, rv, b, sheet, seating, ctx, lane, out, actions[kk])
        result[kk] = e
        if e == 0:
            advance(state, rv, b, sheet, seating, ctx, lane, out)


# rows a thread must have before a lockstep call is split over threads (a thread hop costs more
# than advancing a few games to their next decision)
_ROWS_PER_THREAD = 16


def advance_rows(*args) -> None:
    """``advance`` for the rows ``which`` (lockstep drivers), over threads: the arguments are those
    of ``advance`` without ``b``, then ``which`` (int64[K]) and ``status`` (int64[K]: the status of
    row ``which[k]``)."""
    run_lanes(_advance_rows, len(args[-2]), *args, min_per_thread=_ROWS_PER_THREAD)


def act_rows(*args) -> None:
    """``act`` then ``advance`` for the rows ``which``, over threads: the arguments are those of
    ``advance`` without ``b``, then ``which``, ``actions`` (int64[K]) and ``result`` (int64[K]: the
    error of ``act``, 0 fine; when fine the status is in ``ctx[which[k], CX_STATUS]``)."""
    run_lanes(_act_rows, len(args[-3]), *args, min_per_thread=_ROWS_PER_THREAD)
