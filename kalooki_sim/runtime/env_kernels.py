"""The compiled part of the lockstep environment (``kalooki_sim.runtime.env``): its one row kernel.

Kept apart from ``env.py`` so that the environment's Python (the class, its checks and messages,
which import ``runtime.game``) is not a kernel module: the kernel cache's digest
(``jit.kernel_sources``) covers kernel modules and everything they import, and an edit to the
printable ``Game`` must not recompile the engine.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kalooki_sim.agents.observation import encode, encode_view
from kalooki_sim.core.bits import lowest_bit, word8
from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import R_N_ROUNDS
from kalooki_sim.engine.context import CX_ERR
from kalooki_sim.engine.layout import A_LAY, G_TO_ACT, N_ACTIONS, P_MAX
from kalooki_sim.engine.match_flow import (
    SP_KALOOKIS, SP_MONEY, SP_MWIN, SP_PLAYED, SP_REAL, SP_RIPS, SP_TOTAL, SX_N, SX_N_MWIN,
)

from .loop import ST_OVER, ST_WAITING, Lineup, act, advance, agent_action, lane_row, start

__all__ = ["env_rows", "encode_rows", "Settings", "Rows", "Call", "Scratch", "RES_COLUMNS", "NRES", "MODE_RESET", "MODE_STEP", "MODE_CHOOSE",
           "ERR_NO_CHOICE", "ERR_LOOP"]

# res[b, RES_*, p]: the last finished episode of row b, per real player
RES_COLUMNS = ("game_id", "hands_won", "total", "match_win_share", "money", "hands_played")
RES_GAME, RES_WON, RES_TOTAL, RES_MWIN, RES_MONEY, RES_PLAYED = range(6)
NRES = 6

# what one call of the env kernel does
MODE_RESET, MODE_STEP, MODE_CHOOSE = 0, 1, 2

# kernel error codes (err[b]); ERR_LOOP + CX_ERR: the loop stopped on an error
ERR_NO_CHOICE = 1            # a compiled seat chose nothing
ERR_LOOP = 1_000_000


@njit(_nrt=False)
def list_legal(mask, ids):
    """Write the legal ids of ``mask`` (bool[N_ACTIONS]) into ``ids`` in increasing order; return
    their number.  Eight mask bytes are one word (``bits.word8``) and a legal id is one set bit of
    it, so a decision's handful of legal actions among 3762 costs 471 loads, not 3762 tests."""
    k = 0
    i = 0
    while i + 8 <= N_ACTIONS:
        w = word8(mask, i)
        while w != 0:
            ids[k] = i + (lowest_bit(w) >> 3)
            k += 1
            w &= w - 1
        i += 8
    for a in range(i, N_ACTIONS):
        if mask[a]:
            ids[k] = a
            k += 1
    return k


@njit(_nrt=False)
def _publish_legal(lane_mask, row_mask, ids, n_legal, b):
    """Row ``b``'s legal actions, left by the loop in its lane's mask, into the row's own mask and
    list: the previous decision's entries cleared by its list, the new ones set (a few bytes of
    the row's 3762 written, where zeroing the row would drag all of it through the cache)."""
    for i in range(n_legal[b]):
        row_mask[ids[i]] = False
    k = list_legal(lane_mask, ids)
    for i in range(k):
        row_mask[ids[i]] = True
    n_legal[b] = k


class Settings(NamedTuple):
    """The environment's fixed settings: the seed and first episode (``first_gid``), how many
    episodes keep result rows (``n_out``), the stride between a row's episodes (the batch), single
    hands or matches, the match's hand limit, a hand's step budget, invariant checks, match
    rewards; and ``games`` (int64[E]), an explicit schedule: episode ``first_gid + e`` plays game
    ``games[e % E]`` at table ``e % T`` (a tournament's deals in all their seatings); empty, episode
    ``g`` is game ``g`` at table ``g % T``."""

    seed: int
    first_gid: int
    n_out: int
    stride: int
    single_hand: bool
    hand_limit: int
    max_steps: int
    check: bool
    reward_match: bool
    games: np.ndarray


class Rows(NamedTuple):
    """What the environment hands out per row: the game id (``gid``), wins counted so far
    (``wins_seen``, for hand rewards), rewards (``rew``), episode ends (``done``), the last finished
    episode's results (``res[b, RES_*, p]``), the observation (``obs``), the legal actions as a mask
    (``umask``) and a list (``legal_ids``, ``n_legal``), and the real player to act (``seat``)."""

    gid: np.ndarray
    wins_seen: np.ndarray
    rew: np.ndarray
    done: np.ndarray
    res: np.ndarray
    obs: np.ndarray
    umask: np.ndarray
    legal_ids: np.ndarray
    n_legal: np.ndarray
    seat: np.ndarray


class Call(NamedTuple):
    """One call's inputs and outputs per row: ``actions`` (the learner's, or ``MODE_CHOOSE``'s
    answers), the agent and parameter row ``MODE_CHOOSE`` asks (``choice_ids``, ``choice_params``),
    and ``err`` (0, or why the row stopped)."""

    actions: np.ndarray
    choice_ids: np.ndarray
    choice_params: np.ndarray
    err: np.ndarray


class Scratch(NamedTuple):
    """A lane's scratch besides the loop's: the encoder's (``work``, int64[L, WORK_LEN]) and a mask
    for ``MODE_CHOOSE``'s agent (``mask``, bool[L, N_ACTIONS])."""

    work: np.ndarray
    mask: np.ndarray


@njit(_nrt=False)
def _begin(state, rv, b, sheet, seating, ctx, tables, settings, wins_seen, gid):
    """Deal episode ``gid`` on row ``b`` with its table's lineup (``Settings``: game ``gid`` at
    table ``gid % T`` of ``tables``, or the schedule's game and table).  Its result rows go to
    output row ``gid - first_gid`` when that is below ``n_out`` (tests compare them with
    ``simulate``)."""
    n_tables = tables.seats.shape[0]
    t = gid % n_tables
    o = gid - settings.first_gid
    n_sched = settings.games.shape[0]
    if n_sched > 0:
        e = o % n_sched
        t = e % n_tables
        gid = settings.games[e]
    fh = gid % rv[R_N_ROUNDS] if settings.single_hand else -1
    if o < 0 or o >= settings.n_out:
        o = -1
    lineup = Lineup(tables.seats[t], tables.params[t], tables.streams[t], tables.wants)
    start(state, rv, b, sheet, seating, ctx, lineup, -1, settings.seed, gid, fh, settings.hand_limit,
          settings.max_steps, o, settings.check, False)
    for p in range(P_MAX):
        wins_seen[b, p] = 0


@njit(_nrt=False)
def _parked(settings, gid):
    """Is a row whose next episode is ``gid`` past an explicit schedule (``Settings.games``)?  It
    then waits, undealt, while the others finish: a tournament's batch plays each scheduled
    episode once, and the rows that run out first would otherwise play unkept games for the rest
    of the batch (most of the steps of a schedule: docs/benchmark-history.md)."""
    return settings.games.shape[0] > 0 and gid - settings.first_gid >= settings.games.shape[0]


@njit(_nrt=False)
def _run(state, rv, b, sheet, seating, ctx, lane, out, tables, settings, rows, work):
    """Play row ``b`` on to its next learner decision (the compiled seats inside ``loop.advance``,
    new games dealt as episodes end), adding up rewards and keeping the finished episode's results;
    encode the decision.  Returns 0 or an error."""
    gs = state.gs
    sp, sx = sheet.sp, sheet.sx
    gid, wins_seen, rew, done, res = rows.gid, rows.wins_seen, rows.rew, rows.done, rows.res
    while True:
        st = advance(state, rv, b, sheet, seating, ctx, lane, out)
        n = sx[b, SX_N]
        if not settings.reward_match:
            for p in range(n):
                w = sp[b, SP_RIPS, p] + sp[b, SP_KALOOKIS, p]
                rew[b, p] += w - wins_seen[b, p]
                wins_seen[b, p] = w
        if st == ST_WAITING:
            lane_mask = lane_row(lane.mask, b)
            encode(state, rv, b, sheet, ctx, lane_mask, work, rows.obs[b])
            rows.seat[b] = sp[b, SP_REAL, gs[b, G_TO_ACT]]
            _publish_legal(lane_mask, rows.umask[b], rows.legal_ids[b], rows.n_legal, b)
            return 0
        elif st == ST_OVER:
            nw = sx[b, SX_N_MWIN]
            for p in range(n):
                share = 1.0 / nw if (sp[b, SP_MWIN, p] != 0 and nw > 0) else 0.0
                if settings.reward_match:
                    rew[b, p] += share
                res[b, RES_GAME, p] = gid[b]
                res[b, RES_WON, p] = sp[b, SP_RIPS, p] + sp[b, SP_KALOOKIS, p]
                res[b, RES_TOTAL, p] = sp[b, SP_TOTAL, p]
                res[b, RES_MWIN, p] = share
                res[b, RES_MONEY, p] = sp[b, SP_MONEY, p]
                res[b, RES_PLAYED, p] = sp[b, SP_PLAYED, p]
            done[b] = True
            gid[b] += settings.stride
            if _parked(settings, gid[b]):
                rows.seat[b] = -1
                return 0
            _begin(state, rv, b, sheet, seating, ctx, tables, settings, wins_seen, gid[b])
        else:
            return ERR_LOOP + ctx[b, CX_ERR]


@njit(_nrt=False)
def _row(mode, state, rv, b, sheet, seating, ctx, lane, out, tables, settings, rows, call, work, scratch):
    """``env_rows``' work on row ``b``, with its lane's scratch rows ``work`` and ``scratch``."""
    gs = state.gs
    seats, params = seating.seats, seating.params
    if mode == MODE_CHOOSE:
        seat = gs[b, G_TO_ACT]
        if seat < 0 or _parked(settings, rows.gid[b]):
            call.actions[b] = -1
            return
        p = sheet.sp[b, SP_REAL, seat]
        saved = seats[b, p]
        seats[b, p] = call.choice_ids[b]
        choice_params = call.choice_params
        for j in range(params.shape[2]):         # swap the row in (choice_params: [B, k])
            x = params[b, p, j]
            params[b, p, j] = choice_params[b, j]
            choice_params[b, j] = x
        a = agent_action(state, rv, b, sheet, seating, lane.known, scratch)
        for j in range(params.shape[2]):         # and back
            x = params[b, p, j]
            params[b, p, j] = choice_params[b, j]
            choice_params[b, j] = x
        seats[b, p] = saved
        call.actions[b] = a
        return
    for p in range(P_MAX):
        rows.rew[b, p] = 0.0
    rows.done[b] = False
    if _parked(settings, rows.gid[b]):         # its action (any) is ignored
        rows.seat[b] = -1
        call.err[b] = 0
        return
    if mode == MODE_RESET:
        _begin(state, rv, b, sheet, seating, ctx, tables, settings, rows.wins_seen, rows.gid[b])
    else:
        e = act(state, rv, b, sheet, seating, ctx, lane, out, call.actions[b])
        if e != 0:
            call.err[b] = e
            return
    call.err[b] = _run(state, rv, b, sheet, seating, ctx, lane, out, tables, settings, rows, work)


@njit
def env_rows(mode, state, rv, sheet, seating, ctx, lane, out, tables, settings, rows, call, scratch, k_from, k_to):
    """The environment's one kernel, over the lanes ``k_from .. k_to - 1`` (``lanes.run_lanes``
    splits them over threads): lane ``l`` plays rows ``l, l + L, l + 2L, ...`` (``L`` lanes: the
    rows of ``lane`` and ``scratch``, the per-decision scratch its rows share one after another;
    ``rows.umask``, ``rows.legal_ids`` and ``rows.n_legal`` are the rows' own legal actions).
    ``tables``: the lineups (a ``loop.Lineup`` with a table axis; game ``gid`` sits at table
    ``gid % T``); ``settings``: ``Settings``; ``rows``: ``Rows``; ``call``: ``Call``.  Each row
    owns its game state, so the split changes nothing:

    * ``MODE_RESET``: deal row ``b``'s game ``rows.gid[b]`` and play to its first learner decision;
    * ``MODE_STEP``: apply the pending learner decision ``call.actions[b]`` and play to the next one;
    * ``MODE_CHOOSE``: ``call.actions[b]`` = what compiled agent ``call.choice_ids[b]`` (parameter
      row ``call.choice_params[b]``) plays at the pending decision, by ``loop.agent_action`` on the
      deciding seat's own random stream, exactly as the loop would if that agent sat there.

    One kernel for the three, not three: each kernel that reaches the engine costs a cold compile
    a full link and code generation of the loop."""
    n_rows = state.gs.shape[0]
    n_lanes = lane.known.shape[0]
    for ln in range(k_from, k_to):
        lane_ = np.uint64(ln)
        for k in range(ln, n_rows, n_lanes):
            _row(mode, state, rv, np.uint64(k), sheet, seating, ctx, lane, out, tables, settings, rows, call,
                 scratch.work[lane_], scratch.mask[lane_])


@njit(_nrt=False)
def encode_rows(state, rv, sheet, ctx, mask, seats, work, obs):
    """The view of engine seat ``seats[b]`` of every row (-1: the seat to act, ``mask[b]`` its
    legal actions; another negative: nobody, zeros) into ``obs[b]`` (tests re-encode positions
    they changed; the AEC wrapper observes any agent).  ``work``: scratch, int64[B, observation.WORK_LEN]."""
    gs = state.gs
    for k in range(gs.shape[0]):
        b = np.uint64(k)
        s = seats[b]
        lay_ok = False
        if s == -1:
            s = gs[b, G_TO_ACT]
            lay_ok = mask[b, A_LAY]
        encode_view(state, rv, b, s, sheet, ctx, lay_ok, work[b], obs[b])
