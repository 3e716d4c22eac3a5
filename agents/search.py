"""The search agent (``search``): sampled-world rollouts on the compiled engine, the way the
strongest Skat and Bridge card-play programs improve on the policy they roll out with.

At a decision of a searched kind with more than one sensible action, it

1. lists the base strategy's best ``candidates`` actions: the base (the expert family,
   ``agents.expert``, with this row's first parameters) is asked again with each action it chose
   ruled out, which ranks any decision the base knows how to make (a discard, draw or call, allow
   or deny, lay down or hold, a lay-off, a joker move, a manipulation); in the play phase laying
   the offered plan down is always a candidate when it is legal, so "hold" and "lay" are compared;
2. samples ``worlds`` deals of the cards the seat cannot see, consistent with all it knows
   (``agents.worlds``: its hand, the table, the pile, hand sizes, the stock's size, the cards the
   others were seen to take);
3. in every world plays every candidate to the end of the hand, every seat (its own included)
   played by the base strategy, with common random numbers: the same world and the same random
   streams for every candidate, so the comparison is paired;
4. plays the candidate of the highest mean value among those that beat the base's action by at
   least ``confidence`` standard errors of the paired difference over the worlds (else the base's
   action): a whole hand rolled out is a noisy measurement, and following every lucky mean plays
   worse than the base (measured: docs/search.md).

Strength grows with the worlds (docs/search.md: 4 to 256 worlds take it from below its base to
far above), and a decision whose candidates are clearly apart after a few worlds needs no more:
with ``worlds_min`` the search plays that many worlds first and doubles them, up to ``worlds``,
only while some candidate's paired difference from the base's action is within ``stop_z``
standard errors of zero (measured: few decisions stop early at ``stop_z = 2``, a third of the cost
saved at 256 worlds; docs/search.md).  The worlds are the same ones in the same order either way (world ``w``'s key
depends on ``w`` alone), so stopping early changes only how many are read.

The value of a finished hand, for the searching seat:

* in single hands (a match of one hand, ``in_match``; and in the per-hand match modes, or with
  ``match_sigma = 0``), ``win + penalty_weight * (mean penalty of the others - own penalty) / 100``:
  a hand is scored first by who goes out (the win share of the tournament tables), then by the
  penalty points;
* in matches played for the lowest total (``fixed_hands_low_total``, Caribbean) with
  ``match_sigma > 0``: the chance of finishing the match below every opponent, estimated from the
  totals after this hand as ``prod_o Phi((T_o - T) / (match_sigma * sqrt(h + 0.5)))`` with ``h``
  hands still to play after this one (a normal model of the hands to come, ``match_sigma`` the
  spread of one hand's penalty difference): a leader near the end plays safe, a trailer takes
  risks.  In matches to elimination (``elimination_pool``, K40) ``h`` is the hands the seat could
  still lose before reaching the elimination total, ``(limit - T) / match_sigma``, and a seat over
  the limit after the hand scores 0.

In a match whose calls are limited per match (Caribbean: 3), a call spent in this hand is missing
in a later one, and a rollout that ends with the hand does not see it: every seat's total then
counts the calls it has left as the points they will save, ``call_value * E[min(N, left)]`` with
``N`` the calls the seat would want in the hands still to come (Poisson, ``call_rate`` per hand).
Without it the search spent its calls early and lost the match's later hands (docs/search.md).

Its randomness is the seat's stream (``key``, ``ctr``, one draw per searched decision), so a
decision is a function of what the seat knows and that stream: re-dealing the hidden cards of the
real game never changes it (``tests/test_search.py``).  Cost grows with ``worlds * candidates``
rollouts of the rest of the hand (``benchmarks/search.py``).
"""

from __future__ import annotations

import math

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rng import rng_key, rng_u64
from kalooki_sim.core.rulevec import (
    CALLS_LIMIT_SCOPE_HAND, MATCH_MODE_ELIMINATION_POOL, MATCH_MODE_FIXED_HANDS_LOW_TOTAL, R_CALLS_ENABLED,
    R_CALLS_LIMIT_SCOPE, R_ELIMINATION_AT, R_MATCH_MODE, R_MAX_CALLS_PER_PLAYER,
)
from kalooki_sim.engine.core import apply_action, legal_mask
from kalooki_sim.engine.layout import (
    A_CALL, A_DISCARD, A_LAY, A_TACK, DECK_MAX, G_HAND_NO, G_HAND_WINNER, G_HANDS_DONE, G_LAST_HAND, G_NP, G_PHASE,
    G_TERMINAL, G_TO_ACT, N_ACTIONS, N_TYPES, P_MAX, PH_ALLOW, PH_CALL, PH_PLAY, PS_CALLS, PS_TOTAL,
)
from kalooki_sim.engine.match_flow import SP_REAL

from .declare import CompiledAgent, Param, param_index
from .expert import KNOWN_LEN as EXPERT_KNOWN_LEN, PARAMS as EXPERT_PARAMS, expert_action
from .known import KNOWN_GEN, forget_known, is_legal, remember
from .worlds import copy_row, sample_world, scratch_state

__all__ = ["AGENT", "PARAMS", "search_action", "search_decision", "search_rows", "planned_rollouts", "MAX_CANDIDATES"]

MAX_CANDIDATES = 64
MAX_ROLLOUT_STEPS = 5000          # a hand is far shorter; a safety net against a stuck rollout

PARAMS = EXPERT_PARAMS + (
    Param("worlds", 16.0, (1.0, 256.0), "worlds sampled per searched decision"),
    Param("candidates", 3.0, (1.0, 64.0), "the base strategy's best actions compared (its top k)"),
    Param("search_draw", 1.0, (0.0, 1.0), "search draws and the upcard swap (1) or not (0)"),
    Param("search_call", 1.0, (0.0, 1.0), "search call windows (call or pass) and allow/deny (1) or not (0)"),
    Param("search_discard", 1.0, (0.0, 1.0), "search discards (1) or not (0)"),
    Param("search_meld", 1.0, (0.0, 1.0), "search lay down or hold, lay-offs, joker moves, manipulations (1)"),
    Param("penalty_weight", 0.25, (0.0, 10.0), "hand value: weight of the penalty difference per 100 points"),
    Param("match_sigma", 0.0, (0.0, 200.0), "matches: spread of one hand's penalty difference; 0 = hand value"),
    Param("confidence", 1.0, (0.0, 4.0), "play another action than the base only when its mean gain over the "
          "base's is this many standard errors (paired over the worlds) above zero"),
    Param("call_value", 30.0, (0.0, 100.0), "matches with a call limit per match: penalty points a call saves in "
          "a later hand where it is used (0: a call spent now costs nothing later)"),
    Param("call_rate", 0.6, (0.0, 4.0), "matches with a call limit per match: the calls a seat would want per "
          "hand in the hands to come"),
    Param("extra_calls", 1.0, (0.0, 1.0), "call where the base strategy passes (1), or only compare its own "
          "calls with passing (0)"),
    Param("worlds_min", 0.0, (0.0, 256.0), "adaptive: play this many worlds first, then double them up to "
          "`worlds` while a candidate is within `stop_z` standard errors of the base's action (0: always `worlds`)"),
    Param("stop_z", 2.0, (0.0, 8.0), "adaptive: a candidate is settled when its paired difference from the base "
          "is this many standard errors from zero"),
)
P_WORLDS = param_index(PARAMS, "worlds")
P_CANDIDATES = param_index(PARAMS, "candidates")
P_SEARCH_DRAW = param_index(PARAMS, "search_draw")
P_SEARCH_CALL = param_index(PARAMS, "search_call")
P_SEARCH_DISCARD = param_index(PARAMS, "search_discard")
P_SEARCH_MELD = param_index(PARAMS, "search_meld")
P_PENALTY_WEIGHT = param_index(PARAMS, "penalty_weight")
P_MATCH_SIGMA = param_index(PARAMS, "match_sigma")
P_CONFIDENCE = param_index(PARAMS, "confidence")
P_CALL_VALUE = param_index(PARAMS, "call_value")
P_CALL_RATE = param_index(PARAMS, "call_rate")
P_EXTRA_CALLS = param_index(PARAMS, "extra_calls")
P_WORLDS_MIN = param_index(PARAMS, "worlds_min")
P_STOP_Z = param_index(PARAMS, "stop_z")

KNOWN_LEN = EXPERT_KNOWN_LEN


@njit(_nrt=False)
def _legal(known, a, state, rv, g):
    """``known.is_legal`` behind one call: the engine's checks are inlined once here, not at every
    use (the kernel's size is its cold compile time)."""
    return is_legal(known, a, state, rv, g)


@njit(_nrt=False)
def _apply(state, rv, g, a):
    """``core.apply_action`` behind one call (as ``_legal``)."""
    apply_action(state, rv, g, a)


@njit(_nrt=False)
def _searched(params, phase, a):
    """Is a decision of this phase, where the base plays ``a``, of a kind the row searches?"""
    if phase == PH_CALL or phase == PH_ALLOW:
        return params[P_SEARCH_CALL] > 0.0
    if phase != PH_PLAY:
        return params[P_SEARCH_DRAW] > 0.0
    if A_DISCARD <= a < A_TACK:
        return params[P_SEARCH_DISCARD] > 0.0
    return params[P_SEARCH_MELD] > 0.0


@njit
def _candidates(params, state, rv, g, seat, known, mask, key, ctr, first, out):
    """The base's best actions, best first, into ``out``; returns how many.  Each is found by
    asking the base again with the ones before it ruled out (marked illegal in ``known``)."""
    k = min(int(params[P_CANDIDATES]), out.shape[0])
    out[0] = first
    nc = 1
    while nc < k:
        remember(known, out[nc - 1], False)
        a = expert_action(params, state, rv, g, seat, known, mask, key, ctr)
        if a < 0 or a >= N_ACTIONS or not _legal(known, a, state, rv, g):
            break
        if a == A_CALL and first != A_CALL and params[P_EXTRA_CALLS] <= 0.0:
            remember(known, a, False)           # not a candidate: ask again without it
            continue
        dup = False
        for i in range(nc):
            dup = dup or out[i] == a
        if dup:
            break
        out[nc] = a
        nc += 1
    if state.gs[g, G_PHASE] == PH_PLAY and params[P_SEARCH_MELD] > 0.0:
        lay = False
        for i in range(nc):
            lay = lay or out[i] == A_LAY
        if not lay and nc < out.shape[0]:
            forget_known(known)
            if _legal(known, A_LAY, state, rv, g):
                out[nc] = A_LAY
                nc += 1
    forget_known(known)                 # the caller's check of the chosen action asks afresh
    return nc


@njit
def _phi(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


@njit(_nrt=False)
def in_match(gs, g):
    """Is the hand of row ``g`` part of a match that goes on or went before (not a single hand)?
    A single hand is dealt as a match of one hand (of any round): its first hand is its last."""
    return gs[g, G_HANDS_DONE] > 0 or gs[g, G_LAST_HAND] > gs[g, G_HAND_NO]


@njit(_nrt=False)
def calls_worth(params, rv, gs, ps, r, p):
    """What the calls seat ``p`` has left at the end of the hand in row ``r`` are worth in the hands
    still to come, in penalty points (module docstring): ``call_value * E[min(N, left)]``, ``N``
    the calls the seat will want, Poisson with mean ``call_rate`` per hand to come.  0 where calls
    are free (no calls, a limit per hand, the match's last hand)."""
    value = params[P_CALL_VALUE]
    if value <= 0.0 or rv[R_CALLS_ENABLED] == 0 or rv[R_CALLS_LIMIT_SCOPE] == CALLS_LIMIT_SCOPE_HAND:
        return 0.0
    h = gs[r, G_LAST_HAND] - gs[r, G_HAND_NO]
    left = rv[R_MAX_CALLS_PER_PLAYER] - ps[r, p, PS_CALLS]
    if h <= 0 or left <= 0:
        return 0.0
    m = params[P_CALL_RATE] * np.float64(h)
    term = math.exp(-m)                  # P(N = j), from j = 0
    at_most = term                       # P(N <= j - 1) in the loop
    used = 0.0                           # sum over j = 1 .. left of P(N >= j)
    for j in range(1, left + 1):
        used += 1.0 - at_most
        term *= m / j
        at_most += term
    return value * used


@njit(_nrt=False)
def _total(params, rv, gs, ps, r, p, match):
    """Seat ``p``'s match total at the end of the hand in row ``r``, less what its calls left will
    save in a match (``calls_worth``)."""
    t = np.float64(ps[r, p, PS_TOTAL])
    return t - calls_worth(params, rv, gs, ps, r, p) if match else t


@njit(_nrt=False)
def hand_value(params, rv, gs, ps, r, seat, before, match):
    """The searching seat's value of the finished hand in row ``r`` (module docstring); ``before``
    the totals when the hand was searched, ``match`` whether it was a match's hand (``in_match``
    then: the finished hand has counted itself done).  In a match every seat's total counts the
    calls it has left as the points they will save (``calls_worth``)."""
    n = gs[r, G_NP]
    sigma = params[P_MATCH_SIGMA]
    mode = rv[R_MATCH_MODE]
    own = _total(params, rv, gs, ps, r, seat, match)
    if match and sigma > 0.0 and (mode == MATCH_MODE_FIXED_HANDS_LOW_TOTAL or mode == MATCH_MODE_ELIMINATION_POOL):
        if mode == MATCH_MODE_FIXED_HANDS_LOW_TOTAL:
            h = np.float64(max(gs[r, G_LAST_HAND] - gs[r, G_HAND_NO], 0))
        else:
            limit = np.float64(rv[R_ELIMINATION_AT])
            if ps[r, seat, PS_TOTAL] >= limit:
                return 0.0
            h = (limit - own) / sigma
        scale = sigma * math.sqrt(h + 0.5)
        v = 1.0
        for o in range(n):
            if o != seat:
                v *= _phi((_total(params, rv, gs, ps, r, o, match) - own) / scale)
        return v
    win = 1.0 if gs[r, G_HAND_WINNER] == seat else 0.0
    others = 0.0
    for o in range(n):
        if o != seat:
            others += _total(params, rv, gs, ps, r, o, match) - np.float64(before[o])
    own_pen = own - np.float64(before[seat])
    return win + params[P_PENALTY_WEIGHT] * (others / max(n - 1, 1) - own_pen) / 100.0


@njit
def rollout(params, state, rv, r, keys, known, mask, ctrs):
    """Play row ``r`` to the end of its hand, every seat by the base strategy, seat ``p`` on
    stream ``keys[p]`` (counters ``ctrs``, reset here: every candidate sees the same numbers)."""
    gs = state.gs
    for p in range(P_MAX):
        ctrs[p] = 0
    for it in range(MAX_ROLLOUT_STEPS):
        if gs[r, G_TERMINAL] != 0:
            return
        seat = gs[r, G_TO_ACT]
        forget_known(known)
        a = expert_action(params, state, rv, r, seat, known, mask, keys[seat], ctrs[seat:seat + 1])
        if a < 0 or a >= N_ACTIONS or not _legal(known, a, state, rv, r):
            if legal_mask(state, rv, r, mask) == 0:
                return
            a = 0
            while not mask[a]:
                a += 1
        _apply(state, rv, r, a)


@njit
def planned_rollouts(params, state, rv, g, seat, known, mask, key, ctr):
    """How many rollouts ``search_action`` would play at this decision (0: not searched); for
    ``benchmarks/search.py``.  Advances ``ctr`` as the decision would."""
    base = expert_action(params, state, rv, g, seat, known, mask, key, ctr)
    if base < 0 or not _searched(params, state.gs[g, G_PHASE], base) or params[P_CANDIDATES] < 2.0:
        return 0
    cand = np.empty(MAX_CANDIDATES, dtype=np.int64)
    nc = _candidates(params, state, rv, g, seat, known, mask, key, ctr, base, cand)
    return 0 if nc < 2 else nc * max(int(params[P_WORLDS]), 1)


@njit
def search_action(params, state, rv, g, seat, known, mask, key, ctr):
    """The search agent's action (module docstring)."""
    cand = np.empty(MAX_CANDIDATES, dtype=np.int64)
    gain = np.empty(MAX_CANDIDATES, dtype=np.float64)
    se = np.empty(MAX_CANDIDATES, dtype=np.float64)
    return search_decision(params, state, rv, g, seat, known, mask, key, ctr, cand, gain, se)[0]


@njit
def search_decision(params, state, rv, g, seat, known, mask, key, ctr, cand, gain, se):
    """``(action, n)``: the search's action, and the ``n`` candidates it compared into ``cand``
    (the base's action first) with each one's mean gain in value over the base's action and the
    standard error of that gain, paired over the worlds played, into ``gain`` and ``se`` (the
    base's own: 0).  ``n`` is 0 where the decision was not searched.  The gains are what a network
    distilled from the search learns from (``studies.expert_data``): how sure the search was, not
    only what it chose."""
    base = expert_action(params, state, rv, g, seat, known, mask, key, ctr)
    if base < 0 or not _searched(params, state.gs[g, G_PHASE], base) or params[P_CANDIDATES] < 2.0:
        return base, 0
    nc = _candidates(params, state, rv, g, seat, known, mask, key, ctr, base, cand)
    if nc < 2:
        return base, 0
    worlds = max(int(params[P_WORLDS]), 1)
    skey = rng_u64(key, ctr[0])            # this decision's search stream
    ctr[0] += 1
    ws = scratch_state(2, state)
    # the world's row and the rollout's, as run-time values of the loop's row type (uint64): a
    # literal row number, or another integer type, would have numba compile the expert and the
    # engine again for it (minutes of compile time)
    rr = np.uint64(ws.gs.shape[0] - 1)
    r0 = rr - np.uint64(1)
    pool = np.empty(DECK_MAX, dtype=np.int64)
    counts = np.empty(N_TYPES, dtype=np.int64)
    rknown = np.zeros(known.shape[0], dtype=np.int64)
    rknown[KNOWN_GEN] = 1
    rmask = np.zeros(N_ACTIONS, dtype=np.bool_)
    ctrs = np.zeros(P_MAX, dtype=np.int64)
    keys = np.empty(P_MAX, dtype=np.uint64)
    before = np.empty(P_MAX, dtype=np.int64)
    for p in range(P_MAX):
        before[p] = state.ps[g, p, PS_TOTAL]
    match = in_match(state.gs, g)
    value = np.zeros((nc, worlds), dtype=np.float64)
    check = worlds if params[P_WORLDS_MIN] < 1.0 else min(worlds, int(params[P_WORLDS_MIN]))
    used = worlds
    for w in range(worlds):
        wkey = rng_u64(skey, w)
        for p in range(P_MAX):
            keys[p] = rng_key(np.int64(wkey >> np.uint64(2)), p, 1)
        copy_row(state, g, ws, r0)
        sample_world(ws, r0, seat, wkey, pool, counts)
        for c in range(nc):
            copy_row(ws, r0, ws, rr)
            _apply(ws, rv, rr, cand[c])    # legal in every world: its legality reads only what the seat knows
            rollout(params, ws, rv, rr, keys, rknown, rmask, ctrs)
            value[c, w] = hand_value(params, rv, ws.gs, ws.ps, rr, seat, before, match)
        if w + 1 == check and check < worlds:
            if _settled(value, check, params[P_STOP_Z]):
                used = check
                break
            check = min(worlds, 2 * check)
    for c in range(nc):
        gain[c], se[c] = _paired(value, c, used)
    return cand[_choose(value, used, params[P_CONFIDENCE])], nc


@njit(_nrt=False)
def _paired(value, c, used):
    """The mean and standard error of candidate ``c``'s gain over the base's action (row 0),
    paired world by world over the first ``used`` worlds."""
    mean = 0.0
    for w in range(used):
        mean += value[c, w] - value[0, w]
    mean /= used
    var = 0.0
    for w in range(used):
        d = value[c, w] - value[0, w] - mean
        var += d * d
    return mean, math.sqrt(var / max(used - 1, 1) / used)


@njit(_nrt=False)
def _settled(value, used, z):
    """Adaptive worlds: is every candidate's gain over the base at least ``z`` standard errors from
    zero after ``used`` worlds (more worlds would rarely change which side it is on)?  A decision
    whose alternatives are close to the base's action is the one that needs many worlds; a clear
    one stops early (module docstring)."""
    for c in range(1, value.shape[0]):
        mean, se = _paired(value, c, used)
        if se > 0.0 and abs(mean) <= z * se:
            return False
    return True


@njit(_nrt=False)
def _choose(value, used, z):
    """The candidate (row of ``value[candidate, world]``, row 0 the base's action) to play: the one
    of the highest mean among those whose gain over the base, paired over the first ``used``
    worlds, is at least ``z`` standard errors above zero; the base when there is none.  Rollouts of
    a whole hand are noisy (a win is 0 or 1), and a search that followed every lucky mean would
    play worse than its base strategy."""
    best = 0
    best_mean = 0.0
    for c in range(1, value.shape[0]):
        mean, se = _paired(value, c, used)
        if mean > best_mean and mean > z * se:
            best = c
            best_mean = mean
    return best


@njit
def search_rows(params, state, rv, rows, sp, keys, ctrs, out, n_cand, cand, gain, se, lo, hi):
    """The search's action at the pending decision of game row ``rows[i]`` (parameter row
    ``params[i]``) into ``out[i]``, and what it compared (``search_decision``: ``n_cand[i]``
    candidates in ``cand[i]``, their gains and standard errors in ``gain[i]``, ``se[i]``; 0
    candidates where the decision was not searched), for ``i`` in ``lo .. hi - 1`` (a range of lanes,
    ``lanes.run_lanes``), on the deciding seat's own random stream (``keys[b, p]``, counter
    ``ctrs[b, p]`` advanced in place, ``p`` the seat's player: ``sp[b, SP_REAL, seat]``), as the
    closed loop would draw it; -1 where nothing legal was chosen.  The one compiled entry of the
    search: the lockstep env's driver (``agents.search_policy``) calls it once per step."""
    known = np.zeros(KNOWN_LEN, dtype=np.int64)
    known[KNOWN_GEN] = 1
    mask = np.zeros(N_ACTIONS, dtype=np.bool_)
    for i in range(lo, hi):
        b = np.uint64(rows[i])
        seat = state.gs[b, G_TO_ACT]
        n_cand[i] = 0
        if seat < 0:
            out[i] = -1
            continue
        p = sp[b, SP_REAL, seat]
        forget_known(known)
        a, n_cand[i] = search_decision(params[i], state, rv, b, seat, known, mask, keys[b, p], ctrs[b, p:p + 1],
                                       cand[i], gain[i], se[i])
        if a < 0 or a >= N_ACTIONS or not _legal(known, a, state, rv, b):
            a = -1
        out[i] = a


AGENT = CompiledAgent("search", 4, search_action, PARAMS, memory=KNOWN_LEN, driven=True,
                      doc="Sampled-world rollouts: the base strategy's best few actions, each played to the end "
                          "of the hand in worlds dealt consistently with what the seat knows, with the expert "
                          "family (its first parameters) in every seat; plays the best mean value "
                          "(`agents/search.py`).")
