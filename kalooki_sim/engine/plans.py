"""Lay-down plans: the exact best lay-down of the active player's hand, offered as the plan.

The meld search (``melds.search``) is by far the dearest thing the engine does, so this module
also holds what keeps it off the hot path: ``contract_out_of_reach`` before any search, the
certificate of a hand known to have no lay-down (``_certificate_verdict``: lay-downs are monotone,
so a hand one card away from a certified one rarely needs a search), and the memo of the last
hypothetical search (``hand_plan_places``), which a restricted discard draw reuses as the plan.
None of them changes an answer; tests compare them with plain searches.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import (
    OPENING_COUNTS_LAYOFFS_WITH_NEW_MELD, OPENING_MODE_POINTS, R_KALOOKI_EXEMPT_FROM_OPENING_MIN,
    R_NEW_MELDS_AFTER_OPENING, R_OPENING_COUNTS_LAYOFFS, R_OPENING_MIN_POINTS, R_OPENING_MODE,
)
from kalooki_sim.core.views import c_view
from kalooki_sim.melds.positions import pos_type
from kalooki_sim.melds.search import best_lay_down_known, contract_out_of_reach, natural_meldable

from .fit import _layoff_bound
from .layout import (
    G_ACTIVE, G_PLAN_DEBT, G_ROUND, JOKER, N_TYPES, PLAN_MELDS, PLAN_REC, PS_CERT, PS_CERT_HAND, PS_LAID,
    W_BEST, W_HAND, W_LEN, W_MEMO_LAID, W_MEMO_NM, W_MEMO_OK, W_MEMO_ROUND, W_OUT, W_WS,
)

# plan record kinds of melds.search
_K_SET = 0
_K_RUN = 1
_K_JSET = 2


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
def _rec_cards(plan, g, i):
    return _rec_count(plan[g], i)


@njit(_nrt=False)
def _done_laying(ps, rv, g, p):
    """Has seat ``p`` laid down under rules that allow no new melds after it?  Then he has no
    plan to lay, and nothing to search for."""
    return ps[g, p, PS_LAID] == 1 and rv[R_NEW_MELDS_AFTER_OPENING] == 0


@njit(_nrt=False)
def _clear_plans(plan_n, g):
    plan_n[g, 0] = -1
    plan_n[g, 1] = 0


@njit(_nrt=False, specialise_constants=False)
def _best_lay_down(hand, rv, round_idx, min_points, out, work, must, in_reach):
    """Best lay-down of the hand counts ``hand`` (int64[53]) into ``out`` ([PLAN_MELDS, PLAN_REC]):
    the rules' opening when ``min_points`` < 0, else new melds worth at least ``min_points`` (1:
    any melds at all).  ``work``: the game's search scratch, ``state.work[g]``
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
    if laid or rv[R_KALOOKI_EXEMPT_FROM_OPENING_MIN] == 0 or rv[R_OPENING_MODE] != OPENING_MODE_POINTS:
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
def plan_count(rec, nm, t):
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
    if (not laid and rv[R_KALOOKI_EXEMPT_FROM_OPENING_MIN] == 1
            and rv[R_OPENING_MODE] == OPENING_MODE_POINTS):
        return
    ps[g, p, PS_CERT] = 1 + laid
    for t in range(N_TYPES):
        ps[g, p, PS_CERT_HAND + t] = hand[t]


@njit(_nrt=False, specialise_constants=False)
def hand_plan_places(hands, ps, rv, gs, work, g, p, t_add, t_rem, want):
    """Would the best lay-down of seat ``p``'s hand plus ``t_add`` minus ``t_rem`` (-1 = none) place
    a card of type ``want``?  (Offer checks for restricted discard draws and joker swaps: the
    engine computes the same plan from the same hand once the action is taken.)

    Public because greedy's table takes (``agents.manipulation``) ask the engine's own answer (and
    leave it in the memo the engine then reuses) rather than a search of their own.  ``work``: game
    ``g``'s search scratch (``state.work[g]``)."""
    if _done_laying(ps, rv, g, p):
        return False
    laid = ps[g, p, PS_LAID] == 1
    if want != JOKER and t_rem < 0 and (t_add == want or t_add < 0):
        if not could_join_new_meld(hands, rv, g, p, want, 0 if t_add == want else 1):
            return False
    out = c_view(work[W_OUT:W_BEST], (PLAN_MELDS, PLAN_REC))
    if _memo_holds(hands, g, p, t_add, t_rem, laid, gs[g, G_ROUND], work):
        # the same question again (greedy's table takes ask it after the take's own check did)
        nm = work[W_MEMO_NM]
        return nm >= 0 and plan_count(out, nm, want) > 0
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
    return plan_count(out, nm, want) > 0


@njit(_nrt=False)
def _memo_holds(hands, g, p, t_add, t_rem, laid, rnd, work):
    """Was the last hypothetical search (``hand_plan_places``) of seat ``p``'s hand plus ``t_add``
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
    """Copy into the offered plan the plan of seat ``p``'s hand if the last hypothetical search
    (``hand_plan_places``) was of this very hand (``_memo_holds``) and return its number of melds
    (-1: none); -2 when there is no such search.  A restricted discard draw is checked with exactly
    the hand the draw then gives, so the engine need not search it twice."""
    if not _memo_holds(hands, g, p, -1, -1, laid, rnd, work):
        return -2
    nm = work[W_MEMO_NM]
    for i in range(nm):
        for k in range(PLAN_REC):
            plan[g, i, k] = work[W_OUT + i * PLAN_REC + k]
    return nm


@njit(_nrt=False)
def compute_plans(gs, ps, hands, plan, plan_n, work, rv, g):
    """Fill the lay-down plan of the active player (``work``: game ``g``'s search scratch).

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
    hand = work[W_HAND:W_OUT]                           # on a memo hit it holds this hand
    nm = _memo_plan(hands, plan, g, p, laid, gs[g, G_ROUND], work)
    if nm == -2:
        work[W_MEMO_OK] = 0
        for t in range(N_TYPES):
            hand[t] = hands[g, p, t]
        must = _certificate_verdict(ps, rv, g, p, hand, laid)
        if must == CERT_NO_PLAN:
            return
        nm = _search_plan(hand, laid, rv, gs[g, G_ROUND], plan[g], work, must, not laid)
    if nm >= 0:
        _offer_plan(plan, plan_n, g, nm)
    else:
        _certify_no_plan(ps, rv, g, p, hand, laid)


@njit(_nrt=False)
def _offer_plan(plan, plan_n, g, nm):
    """``plan[g]`` holds ``nm`` meld records: offer it (its melds and the cards it places)."""
    placed = 0
    for i in range(nm):
        placed += _rec_cards(plan, g, i)
    plan_n[g, 0] = nm
    plan_n[g, 1] = placed


@njit(_nrt=False, inline="always")     # once a turn: cheaper than a call with nine arrays
def _plans_in_play(gs, ps, hands, minfo, mcards, mas, plan, plan_n, work, rv, g):
    """``compute_plans``, and when the hand cannot open on its own under A43 (lay-offs count
    toward the opening), the opening completed by lay-offs (``_opening_with_layoffs``)."""
    compute_plans(gs, ps, hands, plan, plan_n, work, rv, g)
    p = gs[g, G_ACTIVE]
    if (plan_n[g, 0] < 0 and ps[g, p, PS_LAID] == 0
            and rv[R_OPENING_COUNTS_LAYOFFS] == OPENING_COUNTS_LAYOFFS_WITH_NEW_MELD
            and rv[R_OPENING_MODE] == OPENING_MODE_POINTS):
        work[W_MEMO_OK] = 0
        hand = work[W_HAND:W_OUT]
        for t in range(N_TYPES):
            hand[t] = hands[g, p, t]
        nm = _opening_with_layoffs(gs, hands, minfo, mcards, mas, rv, g, p, hand, plan[g], work)
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
        hands[g, p, t] -= plan_count(out, nm, t)
    reach = _layoff_bound(gs, hands, minfo, mcards, mas, rv, g, p)
    for t in range(N_TYPES):
        hands[g, p, t] += plan_count(out, nm, t)
    if reach < debt:
        return -1
    gs[g, G_PLAN_DEBT] = debt
    return nm


@njit(_nrt=False)
def a43_opening_places(gs, ps, hands, minfo, mcards, mas, work, rv, g, p, t_add, want):
    """Would the opening completed by lay-offs (A43, ``_opening_with_layoffs``) of seat ``p``'s
    hand plus ``t_add`` place a card of type ``want`` in its new melds?  Asked for a restricted
    discard draw (D9) whose best lay-down without the lay-offs is none: the engine then offers
    that opening with the card in it.  Leaves the state as it was (``work``, game ``g``'s search
    scratch, aside)."""
    if (ps[g, p, PS_LAID] == 1 or rv[R_OPENING_COUNTS_LAYOFFS] != OPENING_COUNTS_LAYOFFS_WITH_NEW_MELD
            or rv[R_OPENING_MODE] != OPENING_MODE_POINTS):
        return False
    if _memo_holds(hands, g, p, t_add, -1, False, gs[g, G_ROUND], work) and work[W_MEMO_NM] >= 0:
        return False                                    # the hand opens without lay-offs
    work[W_MEMO_OK] = 0
    out = c_view(work[W_OUT:W_BEST], (PLAN_MELDS, PLAN_REC))
    hand = work[W_HAND:W_OUT]
    hands[g, p, t_add] += 1
    for t in range(N_TYPES):
        hand[t] = hands[g, p, t]
    debt = gs[g, G_PLAN_DEBT]
    nm = _opening_with_layoffs(gs, hands, minfo, mcards, mas, rv, g, p, hand, out, work)
    gs[g, G_PLAN_DEBT] = debt
    hands[g, p, t_add] -= 1
    return nm >= 0 and plan_count(out, nm, want) > 0
