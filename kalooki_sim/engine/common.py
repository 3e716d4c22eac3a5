"""Small helpers every part of the engine shares: seats in the direction of play, the count of a
hand, the penalty it holds.

They sit below every other engine module so that flow, plans, fit, legality and apply can all use
them without importing one another.
"""

from __future__ import annotations

from kalooki_sim.core.bits import word8
from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import PLAY_DIRECTION_LEFT, R_PENALTY, R_PLAY_DIRECTION

from .layout import N_TYPES


@njit(_nrt=False)
def _dir(rv):
    """Seat step of the direction of play: "left" = next seat (+1)."""
    return 1 if rv[R_PLAY_DIRECTION] == PLAY_DIRECTION_LEFT else -1


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
