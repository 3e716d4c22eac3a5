"""Compiled (numba) policies for the closed loop (``kalooki_sim.rollout``).

``choose_action`` dispatches on the policy id of ``agents/base.py`` (``RANDOM``, ``GREEDY``) and
returns one action id that is set in the legal ``mask`` the caller computed with
``core.legal_mask`` for the deciding seat (``gs[g, G_TO_ACT]``).

Randomness comes only from the counter-based generator of ``kalooki_sim.rng``: the caller passes
the seat's stream key (``rng_key(seed, game_id, core.STREAM_POLICY_BASE + seat)``) and a one-element
``int64`` counter array that is advanced in place, so a game's decisions depend on (seed, game id)
only — never on threads or batches.

Greedy, in words:

* call window: call when the top discard is useful (same rank held, or a same-suit card one rank
  away; two ranks away counts ``gap_weight``) — usefulness >= ``call_threshold``; else pass;
* allow/deny: deny (take the card as the draw) when the card is useful and denying is legal,
  otherwise allow (a player who cannot deny never does);
* draw: the top discard when useful (>= ``draw_threshold``) and legal, else the stock;
* play: lay down as soon as the engine offers plan 0 (the exact best lay-down); then tack every
  card it can and take jokers by moves; then discard — before the lay-down the least useful card
  (cards with no same-rank partner and no same-suit card within two ranks first), highest penalty
  first, never a joker; after the lay-down simply the highest penalty card; end the turn without a
  discard only when that is the only legal action.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.engine.layout import (
    A_ALLOW, A_CALL, A_DENY, A_DISCARD, A_DRAW_DISCARD, A_DRAW_STOCK, A_END_TURN, A_LAY, A_MOVE,
    A_PASS, A_TACK, G_DISC_N, G_N_MELDS, G_PHASE, JOKER, K_PLANS, N_ACTIONS, N_TYPES,
    PH_ALLOW, PH_CALL, PH_DRAW, PH_PLAY, PS_LAID,
)
from kalooki_sim.jit import njit
from kalooki_sim.rng import rng_below, rng_uniform
from kalooki_sim.rulevec import R_ACE_HIGH, R_ACE_LOW, R_PENALTY, R_SET_ALLOW_DUPLICATE_SUIT

from .base import GREEDY, RANDOM

__all__ = ["choose_action", "random_action", "greedy_action", "card_usefulness"]


@njit
def _param(params, i, default):
    """``params[i]`` if present and > 0, else ``default`` (an all-zero row = default agent)."""
    if i < params.shape[0] and params[i] > 0.0:
        return params[i]
    return default


@njit
def random_action(mask, n_legal, key, ctr):
    """Uniformly random legal action (counter ``ctr[0]`` advanced by one)."""
    j = rng_below(key, ctr[0], n_legal)
    ctr[0] += 1
    for a in range(N_ACTIONS):
        if mask[a]:
            if j == 0:
                return a
            j -= 1
    return -1


@njit
def _pos_type(s, q):
    if q == 1 or q == 14:
        return s * 13
    return s * 13 + q - 1


@njit
def card_usefulness(hands, rv, g, p, t, held, gap_weight):
    """How much natural ``t`` helps seat ``p``'s hand toward melds.

    Counts the other suits of its rank held (and a second copy when sets may repeat a suit) and
    same-suit cards one rank away (1 each) and two ranks away (``gap_weight`` each), aces at both
    ends where the rules allow.  ``held = 1`` when ``t`` itself is in the hand (excluded).  Jokers
    are always very useful.
    """
    if t == JOKER:
        return 100.0
    s = t // 13
    r = t % 13
    u = 0.0
    for s2 in range(4):
        c = np.int64(hands[g, p, s2 * 13 + r])
        if s2 == s:
            c -= held
            if rv[R_SET_ALLOW_DUPLICATE_SUIT] == 0:
                c = 0
        if c > 0:
            u += 1.0
    # run positions of the card (ace: 1 and 14)
    for k in range(2):
        if r == 0:
            q = 1 if k == 0 else 14
            if q == 1 and rv[R_ACE_LOW] == 0:
                continue
            if q == 14 and rv[R_ACE_HIGH] == 0:
                continue
        else:
            if k == 1:
                break
            q = r + 1
        for d in (-2, -1, 1, 2):
            q2 = q + d
            if q2 < 1 or q2 > 14:
                continue
            if q2 == 1 and rv[R_ACE_LOW] == 0:
                continue
            if q2 == 14 and rv[R_ACE_HIGH] == 0:
                continue
            if hands[g, p, _pos_type(s, q2)] > 0:
                u += 1.0 if (d == 1 or d == -1) else gap_weight
    return u


@njit
def greedy_action(params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n,
                  hscore, hwin, rv, g, seat, mask, n_legal, key, ctr):
    """The greedy heuristic (module docstring); always returns an action set in ``mask``."""
    eps = _param(params, 0, 0.0)
    if eps > 0.0:
        u = rng_uniform(key, ctr[0])
        ctr[0] += 1
        if u < eps:
            return random_action(mask, n_legal, key, ctr)
    call_thr = _param(params, 1, 1.0)
    draw_thr = _param(params, 2, 1.0)
    gapw = _param(params, 3, 0.5)
    ph = gs[g, G_PHASE]
    nd = gs[g, G_DISC_N]
    top = -1
    if nd > 0:
        top = np.int64(disc[g, nd - 1])
    if ph == PH_CALL:
        if mask[A_CALL] and top >= 0:
            if card_usefulness(hands, rv, g, seat, top, 0, gapw) >= call_thr:
                return A_CALL
        if mask[A_PASS]:
            return A_PASS
    elif ph == PH_ALLOW:
        if mask[A_DENY] and top >= 0:
            if card_usefulness(hands, rv, g, seat, top, 0, gapw) >= draw_thr:
                return A_DENY
        if mask[A_ALLOW]:
            return A_ALLOW
        if mask[A_DENY]:
            return A_DENY
    elif ph == PH_DRAW:
        if mask[A_DRAW_DISCARD] and top >= 0:
            if card_usefulness(hands, rv, g, seat, top, 0, gapw) >= draw_thr:
                return A_DRAW_DISCARD
        if mask[A_DRAW_STOCK]:
            return A_DRAW_STOCK
        if mask[A_DRAW_DISCARD]:
            return A_DRAW_DISCARD
    elif ph == PH_PLAY:
        for k in range(K_PLANS):
            if mask[A_LAY + k]:
                return A_LAY + k
        nm = gs[g, G_N_MELDS]
        if ps[g, seat, PS_LAID] == 1:
            # tack every card it can (naturals first, jokers last), then take jokers by moves
            for t in range(N_TYPES):
                if hands[g, seat, t] > 0:
                    for m in range(nm):
                        a = A_TACK + m * N_TYPES + t
                        if mask[a]:
                            return a
            for m in range(nm):
                for q in range(15):
                    a = A_MOVE + m * 15 + q
                    if mask[a]:
                        return a
        laid = ps[g, seat, PS_LAID] == 1
        best = -1
        best_u = 1e300
        best_pen = -1
        for t in range(JOKER):
            if not mask[A_DISCARD + t]:
                continue
            pen = rv[R_PENALTY + t]
            if laid:
                u = 0.0
            else:
                u = card_usefulness(hands, rv, g, seat, t, 1, gapw)
            if u < best_u or (u == best_u and pen > best_pen):
                best = t
                best_u = u
                best_pen = pen
        if best >= 0:
            return A_DISCARD + best
        if mask[A_DISCARD + JOKER]:
            return A_DISCARD + JOKER
        if mask[A_END_TURN]:
            return A_END_TURN
    # anything else (should not happen): first legal action
    for a in range(N_ACTIONS):
        if mask[a]:
            return a
    return -1


@njit
def choose_action(policy_id, params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan,
                  plan_n, hscore, hwin, rv, g, seat, mask, n_legal, key, ctr):
    """Action of compiled policy ``policy_id`` (``base.RANDOM``/``base.GREEDY``) for ``seat`` in
    game ``g``.  ``mask``/``n_legal`` come from ``core.legal_mask``; ``key`` is the seat's policy
    stream key and ``ctr`` (int64[1]) its counter, advanced in place.  Returns -1 only for an
    unknown policy id or an empty mask."""
    if n_legal <= 0:
        return -1
    if policy_id == RANDOM:
        return random_action(mask, n_legal, key, ctr)
    if policy_id == GREEDY:
        return greedy_action(params, gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan,
                             plan_n, hscore, hwin, rv, g, seat, mask, n_legal, key, ctr)
    return -1
