"""Random playouts: games played by uniformly random (or meld-eager) legal actions, straight on the
engine and the match flow, with the invariant checks after every step.  The engine's own tests use
them to reach many states of many variants quickly; agents play through ``kalooki_sim.runtime.loop``."""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rng import rng_below, rng_key, rng_uniform

from .core import STREAM_POLICY_BASE, check_invariants, legal_mask, mask_consistent, step
from .layout import (
    A_ALLOW, A_DENY, A_DISCARD, A_LAY, A_MOVE, A_SHIFT, A_TACK, EV_KALOOKI, EV_WENT_OUT, G_GAME_ID, G_HANDS_DONE,
    G_LAST_EVENT, N_ACTIONS, P_MAX,
)
from .match import N_EV
from .match_flow import NSP, NSX, begin_from_position, end_hand, next_hand

__all__ = ["random_playout"]


@njit
def random_playout(state, rv, g, policy_seed, max_steps, check, stats, bias=0.0):
    """Play game ``g`` (already dealt) with uniformly random legal actions until its match is over
    (or ``max_steps``), hand after hand through the match flow.

    ``bias > 0`` makes the player lay down / tack / move a joker with that probability whenever
    such an action is legal (uniformly among them), so that hands actually end by going out and
    the table fills up; ``bias = 0`` is the plain uniform random policy.

    Randomness: stream ``STREAM_POLICY_BASE`` of (policy_seed, game_id).  With ``check >= 1`` the
    invariants are verified after every step; ``check >= 2`` also compares the mask with
    ``check_action`` on every action id (slow).  ``stats`` (int64[8]) accumulates: steps, lay-downs,
    tacks, joker moves, allowed calls, denied calls, hands won by going out, invariant failures (and,
    if it has a 9th slot, table manipulations M1-M5).
    Returns 0, or ``1000 + INV_*`` / ``2000 + E_*`` at the first failure.
    """
    gs, ps, hands, hscore, hwin = state.gs, state.ps, state.hands, state.hscore, state.hwin
    mask = np.zeros(N_ACTIONS, dtype=np.bool_)
    ids = np.zeros(N_ACTIONS, dtype=np.int64)
    sp = np.zeros((NSP, P_MAX), dtype=np.int64)
    sx = np.zeros(NSX, dtype=np.int64)
    sev = np.zeros((P_MAX, N_EV), dtype=np.int64)
    begin_from_position(gs, ps, rv, g, sp, sx, np.ones(P_MAX, dtype=np.int64))
    key = rng_key(policy_seed, gs[g, G_GAME_ID], STREAM_POLICY_BASE)
    c = 0
    for it in range(max_steps):
        k = legal_mask(state, rv, g, mask)
        if k == 0:
            return 0
        j = 0
        for a in range(N_ACTIONS):
            if mask[a]:
                ids[j] = a
                j += 1
        a = ids[rng_below(key, c, k)]
        c += 1
        if bias > 0.0:
            npg = 0
            for i in range(k):
                b = ids[i]
                if (b >= A_LAY and b < A_DISCARD) or b >= A_TACK:
                    ids[npg] = b          # compacting in place keeps ids[i..] intact (npg <= i)
                    npg += 1
            if npg > 0 and rng_uniform(key, c) < bias:
                a = ids[rng_below(key, c + 1, npg)]
            c += 2
        hd = gs[g, G_HANDS_DONE]
        e = step(state, rv, g, a)
        if e != 0:
            return 2000 + e
        stats[0] += 1
        if a >= A_LAY and a < A_DISCARD:
            stats[1] += 1
        elif a >= A_TACK and a < A_MOVE:
            stats[2] += 1
        elif a >= A_MOVE and a < A_SHIFT:
            stats[3] += 1
        elif a >= A_SHIFT:
            if stats.shape[0] > 8:
                stats[8] += 1
        elif a == A_ALLOW:
            stats[4] += 1
        elif a == A_DENY:
            stats[5] += 1
        if gs[g, G_HANDS_DONE] > hd and (gs[g, G_LAST_EVENT] == EV_WENT_OUT or gs[g, G_LAST_EVENT] == EV_KALOOKI):
            stats[6] += 1
        if gs[g, G_HANDS_DONE] > hd and end_hand(gs, ps, hands, hscore, hwin, rv, g, sp, sx, sev) == 0:
            next_hand(state, rv, g, sp, sx)
        if check >= 1:
            r = check_invariants(state, rv, g, True, mask)
            if r != 0:
                stats[7] += 1
                return 1000 + r
        if check >= 2:
            bad = mask_consistent(state, rv, g, mask)
            if bad >= 0:
                stats[7] += 1
                return 3000 + bad
    return 0
