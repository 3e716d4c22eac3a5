"""The seat-view observation: one deciding seat's public + private knowledge as a flat float32 vector.

``encode`` (compiled) writes the view of the seat to act in game row ``b`` into a preallocated
``out[OBS_DIM]``; the lockstep environment (``kalooki_sim.runtime.env``) calls it inside its step kernel,
so no Python touches a position.  The layout is versioned (``OBS_VERSION``): a checkpoint records
the version it was trained on and refuses another (``agents/learned``).  Bump the version whenever
a section, an offset or a scaling below changes.

What the seat may know, and nothing else (``tests/test_env.py`` re-deals the hidden cards in every
phase and checks the vector does not move):

* own hand (counts of the 53 card types);
* the phase, the round and its contract or opening minimum (from the rules vector), turn counter,
  stock and pile sizes, reshuffles and voided deals of this hand, the hand of the match;
* the discard pile: counts of what lies in it, the top card, the last ``N_RECENT`` cards with the
  relative seat that threw each;
* the card the active player took from the pile this turn (``G_TAKEN``), the owed / freed table
  cards of a manipulation in progress (public: they were on the table), the pending caller;
* every seat's public information, seats relative to the viewer (0 = self, 1 = next engine seat):
  cards held, laid down, calls used, on the score sheet total / units / buy-backs / still in,
  hands won so far in the match, dealer, and the set of card types it took from the discard pile
  this hand (by drawing the top discard, by a call, by denying a call or by the upcard swap);
* the lay-down the engine offers the seat (plan 0, its exact best), when the seat may make it: the
  cards it would put down (version 2);
* per card type, what a rummy player weighs when choosing a discard (version 3, section
  ``cards``, ``N_CF`` features a type): copies held, penalty, and for each held natural while the
  seat plays its turn the contract shortfall its loss would add, its usefulness (partners in hand),
  its live potential (unseen partners: card counting from the public cards) and the share of
  opponents it would feed; the same measures for the top discard (taking it) in the scalars.
  These are the compiled heuristics' own measures (``agents.measures``, ``agents.expert``, each
  checked against a slow Python definition there); a network scores every discard with one
  shared function of them (``agents.learned``) instead of learning 53 separate ones from the
  hand's counts, which is where a network cloned from a heuristic used to lose most decisions;
* every table meld: kind, relative owner, suit or rank, which run positions hold a natural and
  which a joker (a run joker's meaning is its position), for a set the suits of its naturals and
  the suits its jokers were declared as; plus the count of each natural on the table.

* (version 4, section ``shown``) for every seat, relative as above, the copies of each type it is
  known to hold (``state.shown``: taken from the pile or the table in sight and not put down
  since).  Appended after the cards section, so version 3 is the first ``OBS_WIDTHS[3]`` features
  of version 4, unchanged (its card counting in ``cards`` stays that of version 3: pile, table,
  own hand), and a network trained on version 3 reads that prefix.
* (version 5, section ``takes``) while the seat plays its turn in a variant with table
  manipulation, for every take of a table card (``A_TAKE_END``: a run's end card, one entry per
  run and side; ``A_SETTAKE``: a natural of a four-card set, one per set and suit, in the
  actions' own order): 1 when the card would go into a new meld with cards of the hand
  (``engine.plans.could_join_new_meld``, the test the compiled heuristics take by).  Whether a
  table card completes a meld in the hand is a relation between a table meld and the hand that
  a network cloned from ``sharp-k40`` did not find from the separate sections (it took a run's
  end card on 5 % of the decisions its teacher did: docs/learned-agents.md).  Appended, so
  version 4 is its prefix.

Cards "gone by" (discarded earlier and no longer in the pile) are public as the union of the
pile-taken sets above and the reshuffle count; the encoder does not keep a separate history.

Never read: other seats' hands (only their sizes), the stock's cards, the lay-down plan and its
debt (``plan``, ``G_PLAN_DEBT``: computed from the active player's hand, and stale from the
previous player during a call window), the engine's search certificate (``PS_CERT*``).

"Taken from the pile" is a tally of the turn loop (``engine.context.CX_TAKEN``: bit ``t`` = card type
``t``, per engine seat, cleared at every deal), kept as the loop applies every action, the
compiled seats' too, since the engine keeps no history.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import (
    MAX_ROUNDS, OPENING_MODE_CONTRACT, OPENING_MODE_POINTS, R_CALLS_ENABLED, R_MATCH_MODE, R_MAX_CALLS_PER_PLAYER,
    R_MAX_TURNS_PER_HAND, R_N_ROUNDS, R_OPENING_MIN_POINTS, R_OPENING_MODE, R_PENALTY, R_ROUND_BASE,
    R_TABLE_MANIPULATION, ROUND_STRIDE,
)
from kalooki_sim.engine.context import CX_TAKEN
from kalooki_sim.engine.layout import (
    A_LAY, G_ACTIVE, G_AFTER_ALLOW, G_CALL_DONE, G_CALLER, G_DEALER, G_DISC_N, G_FREED, G_HAND_NO, G_LAID_THIS_TURN,
    G_LAST_HAND, G_MANIPS, G_N_MELDS, G_NP, G_OWED, G_PHASE, G_RESHUFFLES, G_ROUND, G_STOCK_N, G_TAKEN, G_TAKEN_MUST,
    G_TO_ACT, G_TURN, G_VOIDS, JOKER, M_MAX, MI_HI, MI_KEY, MI_KIND, MI_LEN, MI_LO, MI_NJ, MI_OWNER, MK_JSET, MK_RUN,
    MK_SET, N_TYPES, P_MAX, PH_PLAY, PS_CALLS, PS_LAID,
)
from kalooki_sim.engine.match_flow import SP_ACTIVE, SP_BB, SP_KALOOKIS, SP_REAL, SP_RIPS, SP_TOTAL, SP_UNITS, SX_N
from kalooki_sim.engine.plans import could_join_new_meld, plan_count

from .measures import (
    SFW_BASE, SFW_LEN, THROWN_LEN, card_usefulness, contract_shortfall, feed_share, live_potential, seen_counts,
    sf_changed, sf_prepare, shortfall_with, thrown_bits,
)

__all__ = ["OBS_VERSION", "OBS_DIM", "OBS_WIDTHS", "SECTIONS", "N_CF", "CF_NAMES", "TAKES_SET", "WORK_LEN", "encode",
           "encode_view"]

OBS_VERSION = 5          # 2: the lay-down section (what plan 0 would lay); 3: the cards section;
                         # 4: the shown section (cards each seat is known to hold), appended;
                         # 5: the takes section (table cards that would join a new meld), appended

N_PHASES = 6
N_RECENT = 4            # last cards of the pile, with who threw them
N_SCAL = 40
N_SEAT_SCAL = 10
F_SEAT = N_SEAT_SCAL + N_TYPES
N_POS = 14              # run positions 1..14 (1 = low ace, 14 = high ace)
F_MELD = 3 + P_MAX + 4 + 13 + N_POS + N_POS + 4 + 4 + 2

# offsets of the sections (SECTIONS lists them for readers and tests)
O_PHASE = 0
O_ROUND = O_PHASE + N_PHASES
O_SCAL = O_ROUND + MAX_ROUNDS
O_CALLER = O_SCAL + N_SCAL
O_TAKEN = O_CALLER + P_MAX
O_OWED = O_TAKEN + N_TYPES
O_HAND = O_OWED + N_TYPES
O_PILE = O_HAND + N_TYPES
O_TOP = O_PILE + N_TYPES
O_RECENT = O_TOP + N_TYPES
O_SEATS = O_RECENT + N_RECENT * (N_TYPES + P_MAX)
O_MELDS = O_SEATS + P_MAX * F_SEAT
O_TABLE = O_MELDS + M_MAX * F_MELD
O_LAY = O_TABLE + N_TYPES
O_CARDS = O_LAY + N_TYPES
# the cards section: per card type t, features at O_CARDS + t * N_CF + CF_*
CF_NAMES = ("held", "penalty", "shortfall_out", "usefulness", "live", "feed")
CF_HELD, CF_PEN, CF_SF_OUT, CF_USE, CF_LIVE, CF_FEED = range(len(CF_NAMES))
N_CF = len(CF_NAMES)
O_SHOWN = O_CARDS + N_TYPES * N_CF
O_TAKES = O_SHOWN + P_MAX * N_TYPES
# the takes section: a run's end card at O_TAKES + m * 2 + side (the order of ``A_TAKE_END``), a
# natural of a four-card set at O_TAKES + TAKES_SET + m * 4 + suit (the order of ``A_SETTAKE``)
TAKES_SET = M_MAX * 2
N_TAKES = TAKES_SET + M_MAX * 4
OBS_DIM = O_TAKES + N_TAKES
# every version still read, and its width: each earlier layout is the start of the current one
# (sections are only ever appended), so a network trained on it reads ``obs[:, :width]``
OBS_WIDTHS = {3: O_SHOWN, 4: O_TAKES, OBS_VERSION: OBS_DIM}
GAP_WEIGHT = 0.5        # usefulness and live potential weigh a partner two ranks away as greedy does
# the encoder's scratch per row (int64): the copies of each type the seat has seen, what each seat
# has thrown (``agents.expert.thrown_bits``), the incremental shortfall's workspace
# (``agents.measures.sf_prepare``)
_W_THROWN = N_TYPES
_W_SFW = _W_THROWN + THROWN_LEN
WORK_LEN = _W_SFW + SFW_LEN

SECTIONS = {"phase": (O_PHASE, N_PHASES), "round": (O_ROUND, MAX_ROUNDS), "scalars": (O_SCAL, N_SCAL),
            "caller": (O_CALLER, P_MAX), "taken_this_turn": (O_TAKEN, N_TYPES), "owed": (O_OWED, N_TYPES),
            "hand": (O_HAND, N_TYPES), "pile": (O_PILE, N_TYPES), "top": (O_TOP, N_TYPES),
            "recent": (O_RECENT, N_RECENT * (N_TYPES + P_MAX)), "seats": (O_SEATS, P_MAX * F_SEAT),
            "melds": (O_MELDS, M_MAX * F_MELD), "table": (O_TABLE, N_TYPES), "lay": (O_LAY, N_TYPES),
            "cards": (O_CARDS, N_TYPES * N_CF), "shown": (O_SHOWN, P_MAX * N_TYPES), "takes": (O_TAKES, N_TAKES)}


@njit(_nrt=False, inline="always")
def _rel(i, seat, n):
    return ((i - seat) % n + n) % n


@njit(_nrt=False)
def encode(state, rv, b, sheet, ctx, mask, work, out):
    """Write the view of the seat to act in row ``b`` into ``out`` (float32[OBS_DIM]), ``mask`` its
    legal actions; returns that engine seat (-1: nobody to act, ``out`` zeroed).  ``work``:
    scratch, int64[WORK_LEN].

    ``out`` must hold zeros or ``encode``'s own previous output (the lockstep environment's buffer,
    which it hands out read-only): the meld slots used neither then nor now are zero already and
    are not written again.  Most of the 32 slots are empty, and at thousands of rows a step's cost
    is the memory it writes (docs/benchmark-history.md)."""
    prev = np.int64(out[O_SCAL + 5] * M_MAX + 0.5)      # the previous view's table melds
    gs = state.gs
    nm = gs[b, G_N_MELDS]
    return _encode(state, rv, b, gs[b, G_TO_ACT], sheet, ctx, mask[A_LAY], work, out, min(M_MAX, max(prev, nm)))


@njit(_nrt=False)
def encode_view(state, rv, b, seat, sheet, ctx, lay_ok, work, out):
    """Write the view of engine seat ``seat`` of row ``b`` into ``out`` (float32[OBS_DIM]), whether
    or not it is the seat to act (the AEC wrapper observes every agent); returns ``seat`` (-1: no
    such seat, ``out`` zeroed).  ``lay_ok``: the seat is to act and may lay the plan down (its mask
    has ``A_LAY``): only then is the plan its own and current, and the lay section filled.
    ``work``: scratch, int64[WORK_LEN]."""
    return _encode(state, rv, b, seat, sheet, ctx, lay_ok, work, out, M_MAX)


@njit(_nrt=False)
def _encode(state, rv, b, seat, sheet, ctx, lay_ok, work, out, dirty_melds):
    """``encode_view``, clearing only the first ``dirty_melds`` meld slots (the others hold zeros)."""
    gs, ps, hands, disc, disc_by, minfo = state.gs, state.ps, state.hands, state.disc, state.disc_by, state.minfo
    mcards, mas, plan, plan_n = state.mcards, state.mas, state.plan, state.plan_n
    sp, sx = sheet.sp, sheet.sx
    for j in range(O_MELDS + dirty_melds * F_MELD):
        out[j] = 0.0
    for j in range(O_TABLE, OBS_DIM):
        out[j] = 0.0
    if seat < 0 or seat >= gs[b, G_NP]:
        return -1
    n = gs[b, G_NP]
    active = gs[b, G_ACTIVE]
    ph = gs[b, G_PHASE]
    if 0 <= ph < N_PHASES:
        out[O_PHASE + ph] = 1.0
    r = gs[b, G_ROUND]
    if 0 <= r < MAX_ROUNDS:
        out[O_ROUND + r] = 1.0
    # ---- scalars
    s = O_SCAL
    out[s + 0] = n / 6.0
    out[s + 1] = sx[b, SX_N] / 6.0
    out[s + 2] = gs[b, G_TURN] / max(1.0, float(rv[R_MAX_TURNS_PER_HAND]))
    out[s + 3] = gs[b, G_STOCK_N] / 100.0
    out[s + 4] = gs[b, G_DISC_N] / 100.0
    out[s + 5] = gs[b, G_N_MELDS] / float(M_MAX)
    out[s + 6] = gs[b, G_HAND_NO] / max(1.0, float(gs[b, G_LAST_HAND] + 1))
    out[s + 7] = _rel(gs[b, G_DEALER], seat, n) / 6.0
    out[s + 8] = 1.0 if seat == active else 0.0
    out[s + 9] = float(gs[b, G_AFTER_ALLOW])
    out[s + 10] = float(gs[b, G_TAKEN_MUST])
    out[s + 11] = float(gs[b, G_CALL_DONE])
    out[s + 12] = float(gs[b, G_LAID_THIS_TURN])
    out[s + 13] = gs[b, G_MANIPS] / 8.0
    out[s + 14] = gs[b, G_FREED] / 4.0
    out[s + 15] = gs[b, G_RESHUFFLES] / 4.0
    out[s + 16] = gs[b, G_VOIDS] / 4.0
    out[s + 17] = rv[R_N_ROUNDS] / float(MAX_ROUNDS)
    out[s + 18] = 1.0 if rv[R_OPENING_MODE] == OPENING_MODE_POINTS else 0.0
    out[s + 19] = max(0, rv[R_OPENING_MIN_POINTS]) / 100.0
    if 0 <= r < MAX_ROUNDS:
        base = R_ROUND_BASE + r * ROUND_STRIDE
        out[s + 20] = rv[base + 5] / 4.0               # threes of the contract
        out[s + 21] = rv[base + 6] / 4.0               # fours
        if 2 <= n <= 6:
            out[s + 22] = rv[base + n - 2] / 16.0      # cards dealt
    out[s + 23] = float(rv[R_CALLS_ENABLED])
    out[s + 24] = max(0, rv[R_MAX_CALLS_PER_PLAYER]) / 4.0
    mm = rv[R_MATCH_MODE]
    if 0 <= mm < 4:
        out[s + 25 + mm] = 1.0
    # s + 29, s + 30: the lay-down; s + 31 .. s + 34: the shortfall and the top discard (below);
    # s + 35 .. s + 39: spare (zero)
    # ---- pending caller, this turn's taken card, a card owed to the table
    if gs[b, G_CALLER] >= 0:
        out[O_CALLER + _rel(gs[b, G_CALLER], seat, n)] = 1.0
    t = gs[b, G_TAKEN]
    if 0 <= t < N_TYPES:
        out[O_TAKEN + t] = 1.0
    t = gs[b, G_OWED]
    if 0 <= t < N_TYPES:
        out[O_OWED + t] = 1.0
    # ---- own hand
    for t in range(N_TYPES):
        out[O_HAND + t] = hands[b, seat, t] / 2.0
    # ---- discard pile
    nd = gs[b, G_DISC_N]
    for k in range(nd):
        c = disc[b, k]
        if c >= 0:
            out[O_PILE + c] += 0.5
    if nd > 0 and disc[b, nd - 1] >= 0:
        out[O_TOP + disc[b, nd - 1]] = 1.0
    for j in range(N_RECENT):
        k = nd - 1 - j
        if k < 0:
            break
        o = O_RECENT + j * (N_TYPES + P_MAX)
        c = disc[b, k]
        if c >= 0:
            out[o + c] = 1.0
        w = disc_by[b, k]
        if w >= 0:
            out[o + N_TYPES + _rel(w, seat, n)] = 1.0
    # ---- seats, relative to the viewer
    for i in range(n):
        k = _rel(i, seat, n)
        o = O_SEATS + k * F_SEAT
        p = sp[b, SP_REAL, i]
        held = 0
        for t in range(N_TYPES):
            held += hands[b, i, t]
        out[o + 0] = 1.0
        out[o + 1] = held / 20.0
        out[o + 2] = float(ps[b, i, PS_LAID])
        out[o + 3] = ps[b, i, PS_CALLS] / 4.0
        if p >= 0:
            out[o + 4] = sp[b, SP_TOTAL, p] / 200.0
            out[o + 5] = sp[b, SP_UNITS, p] / 100.0
            out[o + 6] = sp[b, SP_BB, p] / 4.0
            out[o + 7] = float(sp[b, SP_ACTIVE, p])
            out[o + 8] = (sp[b, SP_RIPS, p] + sp[b, SP_KALOOKIS, p]) / 9.0
        out[o + 9] = 1.0 if i == gs[b, G_DEALER] else 0.0
        bits = ctx[b, CX_TAKEN + i]
        for t in range(N_TYPES):
            if (bits >> t) & 1:
                out[o + N_SEAT_SCAL + t] = 1.0
    # ---- table melds
    for m in range(gs[b, G_N_MELDS]):
        o = O_MELDS + m * F_MELD
        kind = minfo[b, m, MI_KIND]
        if 0 <= kind < 3:
            out[o + kind] = 1.0
        ow = minfo[b, m, MI_OWNER]
        if 0 <= ow < n:
            out[o + 3 + _rel(ow, seat, n)] = 1.0
        key = minfo[b, m, MI_KEY]
        q0 = o + 3 + P_MAX
        if kind == MK_RUN:
            if 0 <= key < 4:
                out[q0 + key] = 1.0
            for q in range(minfo[b, m, MI_LO], minfo[b, m, MI_HI] + 1):
                if 1 <= q <= N_POS:
                    c = mcards[b, m, q]
                    if c == JOKER:
                        out[q0 + 4 + 13 + N_POS + q - 1] = 1.0
                    elif c >= 0:
                        out[q0 + 4 + 13 + q - 1] = 1.0
                        out[O_TABLE + c] += 0.5
        else:
            if kind == MK_SET and 0 <= key < 13:
                out[q0 + 4 + key] = 1.0
            for q in range(minfo[b, m, MI_LEN]):
                c = mcards[b, m, q]
                if c == JOKER:
                    d = mas[b, m, q]
                    if d >= 0 and d < JOKER:
                        out[q0 + 4 + 13 + 2 * N_POS + 4 + d // 13] += 0.5
                elif c >= 0:
                    out[q0 + 4 + 13 + 2 * N_POS + c // 13] += 0.5
                    out[O_TABLE + c] += 0.5
        out[o + F_MELD - 2] = minfo[b, m, MI_LEN] / 13.0
        out[o + F_MELD - 1] = minfo[b, m, MI_NJ] / 4.0
    # ---- the lay-down the engine proposes (its exact best), when the seat may make it:
    # the cards it would put down (what stays in hand is the hand minus these)
    if lay_ok:
        nm = plan_n[b, 0]
        if nm > 0:
            out[s + 29] = 1.0
            out[s + 30] = nm / 12.0
            for t in range(N_TYPES):
                out[O_LAY + t] = plan_count(plan[b], nm, t) / 2.0
    _cards(gs, ps, hands, disc, disc_by, minfo, mcards, rv, b, seat, work, out)
    # ---- the cards each seat (relative) is known to hold: taken in sight, not put down since
    shown = state.shown
    for i in range(n):
        o = O_SHOWN + _rel(i, seat, n) * N_TYPES
        for t in range(N_TYPES):
            if shown[b, i, t] > 0:
                out[o + t] = shown[b, i, t] / 2.0
    if gs[b, G_PHASE] == PH_PLAY and seat == active and rv[R_TABLE_MANIPULATION] != 0:
        _takes(gs, hands, minfo, mcards, rv, b, seat, out)
    return seat


@njit(_nrt=False)
def _takes(gs, hands, minfo, mcards, rv, b, seat, out):
    """The takes section (module docstring): each table card a take would give the seat, 1 when
    it would go into a new meld with the hand's cards.  Whether the take is legal is the mask's
    business; this says what the card would do."""
    for m in range(min(gs[b, G_N_MELDS], M_MAX)):
        kind = minfo[b, m, MI_KIND]
        if kind == MK_RUN:
            for side in range(2):
                c = mcards[b, m, minfo[b, m, MI_HI] if side == 0 else minfo[b, m, MI_LO]]
                if 0 <= c < JOKER and could_join_new_meld(hands, rv, b, seat, c, 0):
                    out[O_TAKES + m * 2 + side] = 1.0
        elif kind == MK_SET and minfo[b, m, MI_LEN] == 4:
            for q in range(4):
                c = mcards[b, m, q]
                if 0 <= c < JOKER and could_join_new_meld(hands, rv, b, seat, c, 0):
                    out[O_TAKES + TAKES_SET + m * 4 + c // 13] = 1.0


@njit(_nrt=False)
def _cards(gs, ps, hands, disc, disc_by, minfo, mcards, rv, b, seat, work, out):
    """The cards section and the top discard's scalars (module docstring).  The measures of the
    held naturals are computed only while the seat plays its turn (the discard is chosen then; a
    call window, the most frequent decision, pays for the top card alone), the shortfalls by
    greedy's incremental workspace (a few lookups a card instead of the whole measure)."""
    s = O_SCAL
    seen = work[:N_TYPES]
    thrown = work[_W_THROWN:_W_SFW]
    sfw = work[_W_SFW:]
    contract = rv[R_OPENING_MODE] == OPENING_MODE_CONTRACT and ps[b, seat, PS_LAID] == 0
    rnd = gs[b, G_ROUND]
    fast = contract and sf_prepare(hands, rv, b, seat, rnd, sfw)
    base = 0
    if fast:
        base = sfw[SFW_BASE]
    elif contract:
        base = contract_shortfall(hands, rv, b, seat, rnd)
    out[s + 31] = base / 10.0
    seen_counts(gs, hands, disc, minfo, mcards, b, seat, seen)
    for t in range(N_TYPES):
        o = O_CARDS + t * N_CF
        out[o + CF_HELD] = hands[b, seat, t] / 2.0
        out[o + CF_PEN] = rv[R_PENALTY + t] / 50.0
    playing = gs[b, G_PHASE] == PH_PLAY and seat == gs[b, G_ACTIVE]
    if playing:
        thrown_bits(gs, disc, disc_by, b, thrown)
    for t in range(JOKER if playing else 0):
        if hands[b, seat, t] > 0:
            o = O_CARDS + t * N_CF
            if fast:
                out[o + CF_SF_OUT] = (sf_changed(hands, rv, b, seat, rnd, t, -1, sfw) - base) / 2.0
            elif contract:
                out[o + CF_SF_OUT] = (shortfall_with(hands, rv, b, seat, rnd, t, -1) - base) / 2.0
            out[o + CF_USE] = card_usefulness(hands, rv, b, seat, t, 1, GAP_WEIGHT) / 4.0
            out[o + CF_LIVE] = live_potential(rv, seen, t, GAP_WEIGHT) / 3.0
            out[o + CF_FEED] = feed_share(gs, ps, minfo, rv, b, seat, t, rv[R_OPENING_MODE] == OPENING_MODE_CONTRACT,
                                          thrown)
    nd = gs[b, G_DISC_N]
    top = disc[b, nd - 1] if nd > 0 else -1
    if 0 <= top < JOKER:
        if fast:
            out[s + 32] = (sf_changed(hands, rv, b, seat, rnd, top, 1, sfw) - base) / 2.0
        elif contract:
            out[s + 32] = (shortfall_with(hands, rv, b, seat, rnd, top, 1) - base) / 2.0
        out[s + 33] = card_usefulness(hands, rv, b, seat, top, 0, GAP_WEIGHT) / 4.0
        out[s + 34] = live_potential(rv, seen, top, GAP_WEIGHT) / 3.0


assert MK_SET == 0 and MK_RUN == 1 and MK_JSET == 2      # the kind one-hot above
