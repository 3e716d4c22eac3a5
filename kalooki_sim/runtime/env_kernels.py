"""The compiled part of the lockstep environment (``kalooki_sim.runtime.env``): its one row kernel.

Kept apart from ``env.py`` so that the environment's Python (the class, its checks and messages,
which import ``runtime.game``) is not a kernel module: the kernel cache's digest
(``jit.kernel_sources``) covers kernel modules and everything they import, and an edit to the
printable ``Game`` must not recompile the engine.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.agents.base import EXTERNAL
from kalooki_sim.agents.observation import encode, encode_view
from kalooki_sim.core.bits import lowest_bit, word8
from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import R_N_ROUNDS
from kalooki_sim.engine.context import CX_ERR
from kalooki_sim.engine.layout import A_LAY, G_TO_ACT, N_ACTIONS, P_MAX
from kalooki_sim.engine.match_flow import (
    SP_KALOOKIS, SP_MONEY, SP_MWIN, SP_PLAYED, SP_REAL, SP_RIPS, SP_TOTAL, SX_N, SX_N_MWIN,
)

from .loop import ST_OVER, ST_WAITING, act, advance, agent_action, lane_row, start

__all__ = ["env_rows", "encode_rows", "RES_COLUMNS", "NRES", "MODE_RESET", "MODE_STEP", "MODE_CHOOSE",
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


@njit(_nrt=False)
def _begin(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
           sp, sx, seats, params, keys, ctrs, ctx, known, b, tab_seats, tab_params, streams, wants, seed,
           gid, first_gid, n_out, single_hand, hand_limit, max_steps, check, wins_seen):
    """Deal game ``gid`` on row ``b`` with its table's seating (game ``gid`` sits at table
    ``gid % T``).  Its result rows go to output row ``gid - first_gid`` when that is below
    ``n_out`` (tests compare them with ``simulate``)."""
    t = gid % tab_seats.shape[0]
    fh = gid % rv[R_N_ROUNDS] if single_hand else -1
    o = gid - first_gid
    if o < 0 or o >= n_out:
        o = -1
    start(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, b,
          sp, sx, seats, params, keys, ctrs, ctx, known, tab_seats[t], tab_params[t], streams[t], wants, -1,
          seed, gid, fh, hand_limit, max_steps, o, check, False)
    for p in range(P_MAX):
        wins_seen[b, p] = 0


@njit(_nrt=False)
def _run(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
         sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin, b,
         tab_seats, tab_params, streams, wants, seed, first_gid, n_out, stride, single_hand, hand_limit,
         max_steps, check, reward_match, gid, wins_seen, rew, done, res, obs, umask, seat_out, legal_ids, n_legal,
         work):
    """Play row ``b`` on to its next learner decision (the compiled seats inside ``loop.advance``,
    new games dealt as episodes end), adding up rewards and keeping the finished episode's results;
    encode the decision.  Returns 0 or an error."""
    while True:
        st = advance(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
                     b, sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin)
        n = sx[b, SX_N]
        if not reward_match:
            for p in range(n):
                w = sp[b, SP_RIPS, p] + sp[b, SP_KALOOKIS, p]
                rew[b, p] += w - wins_seen[b, p]
                wins_seen[b, p] = w
        if st == ST_WAITING:
            lane_mask = lane_row(mask, b)
            encode(gs, ps, hands, disc, disc_by, minfo, mcards, mas, plan, plan_n, rv, b, sp, sx, ctx, lane_mask, work,
                   obs[b])
            seat_out[b] = sp[b, SP_REAL, gs[b, G_TO_ACT]]
            _publish_legal(lane_mask, umask[b], legal_ids[b], n_legal, b)
            return 0
        elif st == ST_OVER:
            nw = sx[b, SX_N_MWIN]
            for p in range(n):
                share = 1.0 / nw if (sp[b, SP_MWIN, p] != 0 and nw > 0) else 0.0
                if reward_match:
                    rew[b, p] += share
                res[b, RES_GAME, p] = gid[b]
                res[b, RES_WON, p] = sp[b, SP_RIPS, p] + sp[b, SP_KALOOKIS, p]
                res[b, RES_TOTAL, p] = sp[b, SP_TOTAL, p]
                res[b, RES_MWIN, p] = share
                res[b, RES_MONEY, p] = sp[b, SP_MONEY, p]
                res[b, RES_PLAYED, p] = sp[b, SP_PLAYED, p]
            done[b] = True
            gid[b] += stride
            _begin(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
                   sp, sx, seats, params, keys, ctrs, ctx, known, b, tab_seats, tab_params, streams, wants, seed,
                   gid[b], first_gid, n_out, single_hand, hand_limit, max_steps, check, wins_seen)
        else:
            return ERR_LOOP + ctx[b, CX_ERR]


@njit(_nrt=False)
def _row(mode, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
         sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin,
         tab_seats, tab_params, streams, wants, seed, first_gid, n_out, stride, single_hand, hand_limit,
         max_steps, check, reward_match, gid, wins_seen, rew, done, res, obs, umask, seat_out, legal_ids, n_legal,
         work, scratch, err, actions, choice_ids, choice_params, b):
    """``env_rows``' work on row ``b``, with its lane's scratch rows ``work`` and ``scratch``."""
    if mode == MODE_CHOOSE:
        seat = gs[b, G_TO_ACT]
        if seat < 0:
            actions[b] = -1
            return
        p = sp[b, SP_REAL, seat]
        saved = seats[b, p]
        seats[b, p] = choice_ids[b]
        for j in range(params.shape[2]):         # swap the row in (choice_params: [B, k])
            x = params[b, p, j]
            params[b, p, j] = choice_params[b, j]
            choice_params[b, j] = x
        a = agent_action(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                         rv, b, sp, seats, params, keys, ctrs, known, scratch)
        for j in range(params.shape[2]):         # and back
            x = params[b, p, j]
            params[b, p, j] = choice_params[b, j]
            choice_params[b, j] = x
        seats[b, p] = saved
        actions[b] = a
        return
    for p in range(P_MAX):
        rew[b, p] = 0.0
    done[b] = False
    if mode == MODE_RESET:
        _begin(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
               sp, sx, seats, params, keys, ctrs, ctx, known, b, tab_seats, tab_params, streams, wants, seed,
               gid[b], first_gid, n_out, single_hand, hand_limit, max_steps, check, wins_seen)
    else:
        e = act(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, b,
                sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin, actions[b])
        if e != 0:
            err[b] = e
            return
    err[b] = _run(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
                  sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin, b,
                  tab_seats, tab_params, streams, wants, seed, first_gid, n_out, stride, single_hand,
                  hand_limit, max_steps, check, reward_match, gid, wins_seen, rew, done, res, obs, umask,
                  seat_out, legal_ids, n_legal, work)


@njit
def env_rows(mode, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
              sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin,
              tab_seats, tab_params, streams, wants, seed, first_gid, n_out, stride, single_hand, hand_limit,
              max_steps, check, reward_match, gid, wins_seen, rew, done, res, obs, umask, seat_out, legal_ids, n_legal,
              work, scratch, err, actions, choice_ids, choice_params, k_from, k_to):
    """The environment's one kernel, over the lanes ``k_from .. k_to - 1`` (``lanes.run_lanes``
    splits them over threads): lane ``l`` plays rows ``l, l + L, l + 2L, ...`` (``L`` lanes: the
    rows of ``known``, ``mask``, ``work`` and ``scratch``, the per-decision scratch its rows share
    one after another; ``umask``, ``legal_ids`` and ``n_legal`` are the rows' own legal actions).
    Each row owns its game state, so the split changes nothing:

    * ``MODE_RESET``: deal row ``b``'s game ``gid[b]`` and play to its first learner decision;
    * ``MODE_STEP``: apply the pending learner decision ``actions[b]`` and play to the next one;
    * ``MODE_CHOOSE``: ``actions[b]`` = what compiled agent ``choice_ids[b]`` (parameter row
      ``choice_params[b]``) plays at the pending decision, by ``loop.agent_action`` on the deciding
      seat's own random stream, exactly as the loop would if that agent sat there.

    One kernel for the three, not three: each kernel that reaches the engine costs a cold compile
    a full link and code generation of the loop."""
    n_rows = gs.shape[0]
    n_lanes = known.shape[0]
    for lane in range(k_from, k_to):
        ln = np.uint64(lane)
        for k in range(lane, n_rows, n_lanes):
            _row(mode, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
                 sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin,
                 tab_seats, tab_params, streams, wants, seed, first_gid, n_out, stride, single_hand, hand_limit,
                 max_steps, check, reward_match, gid, wins_seen, rew, done, res, obs, umask, seat_out, legal_ids, n_legal,
                 work[ln], scratch[ln], err, actions, choice_ids, choice_params, np.uint64(k))


@njit(_nrt=False)
def encode_rows(gs, ps, hands, disc, disc_by, minfo, mcards, mas, plan, plan_n, rv, sp, sx, ctx, mask, seats, work,
                obs):
    """The view of engine seat ``seats[b]`` of every row (-1: the seat to act, ``mask[b]`` its
    legal actions; another negative: nobody, zeros) into ``obs[b]`` (tests re-encode positions
    they changed; the AEC wrapper observes any agent).  ``work``: scratch, int64[B, observation.WORK_LEN]."""
    for k in range(gs.shape[0]):
        b = np.uint64(k)
        s = seats[b]
        lay_ok = False
        if s == -1:
            s = gs[b, G_TO_ACT]
            lay_ok = mask[b, A_LAY]
        encode_view(gs, ps, hands, disc, disc_by, minfo, mcards, mas, plan, plan_n, rv, b, s, sp, sx, ctx, lay_ok,
                    work[b], obs[b])
