"""The expert heuristic family (``expert_action``): greedy plus the ideas players of rummy bots
expect, each behind a parameter that is off (0) by default, so that the default row plays exactly
greedy's games (tests/test_expert.py) and every named strategy (``configs/agents/*.toml``) is a
setting of one compiled agent.

What it adds to greedy (``agents.greedy``), parameter by parameter (row index: name):

4. ``count_weight`` — card counting from public information.  A card's worth to the hand is its
   usefulness (greedy's count of partners held) plus ``count_weight`` times its *live potential*:
   the unseen copies of the cards that would meld with it (its rank in other suits, its suit one
   and two ranks away, the latter at ``gap_weight``), each as a share of the copies the deck has.
   "Seen" is what is public now: the discard pile, the table melds, the own hand and the cards
   the others are known to hold (``state.shown``: taken from the pile or the table in sight).  Cards whose
   partners are dead are discarded first; nothing is waited for that cannot come.
5. ``defense`` — never feed: a discard's worth rises by ``defense`` times the share of opponents
   who could take it: in the call variants every opponent not yet laid down with calls left
   (and the next player, who may draw it) unless he has himself thrown its rank or a same-suit
   card within two ranks this hand (the pile says who threw each card); in the points variants the
   next player, and, once he has opened, only when the card fits a table meld (he could lay it off).
6. ``dump_weight`` — penalty dumping: a discard's worth falls by ``dump_weight`` times the danger
   times its penalty / 10, so high cards go first when the hand may end soon.
7. ``threat_cards`` — the danger is 1 while an opponent who has laid down holds at most
   ``threat_cards`` cards (0: never) ...
8. ``late_turns`` — ... and otherwise rises linearly to 1 over the first ``late_turns`` turns of
   each player (0: never).
9. ``call_max_shortfall`` — call variants: call only when the card brings the contract closer
   *and* leaves fewer than ``call_max_shortfall`` cards missing (0: whenever closer, as greedy).
   A call costs an extra stock card that must be shed after the lay-down, and one of the few calls
   a player has.
10. ``hold_turns`` — hold a lay-down that would not go out in the same turn during the first
   ``hold_turns`` turns of each player while no opponent threatens (``threat_cards``): waiting to go
   out in one turn (a kalooki in the points variants, "down and out" in Caribbean) hides the hand
   and keeps the discard draws and calls open (0: lay down at once, as greedy).
11. ``call_use`` — call variants: call also for a card that does not bring the contract closer
   but has at least this usefulness (greedy's count of partners held; 0: never).  Laying down
   early is what keeps a hand's penalty low when someone else goes out.
12. ``draw_use`` — the same for drawing the discard and denying a call (0: never).
13. ``sf_weight`` — the discard weighs the contract shortfall it leaves at ``sf_weight`` per
   card against its worth instead of putting it first (0: first, as greedy), so that late in a
   hand a high card may go although it was part of the contract.
14. ``call_budget`` — calls are a resource of the whole match where the limit counts per game
   (Caribbean: 3 calls for 9 hands, the later hands the longer): ``call_max_shortfall`` holds only
   while the calls left are fewer than ``call_budget`` per hand still to play (this one
   included), so calls are spent freely when they are plentiful — in a single hand, at the end of
   a match — and kept for near-complete contracts early in a match (0: it always holds).

Parameters 0-3 (``epsilon``, ``call_threshold``, ``draw_threshold``, ``gap_weight``) are greedy's.
The discard is chosen by the contract shortfall it leaves (call variants, before the lay-down, as
greedy; or weighed, ``sf_weight``), then by the worth above (lowest first), then by the highest penalty; once laid down in the
call variants, by the highest penalty less ``defense`` times the feed share (greedy: the highest
penalty).  Everything else (lay-downs, tacks, joker moves and swaps, table manipulation M1-M5, the
upcard swap) is greedy's (``greedy.play_melds``, ``greedy._upswap_pick``).
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import (
    CALLS_LIMIT_SCOPE_HAND, DISCARD_DRAW_BEFORE_OPENING_ANY, DISCARD_DRAW_BEFORE_OPENING_NEVER, OPENING_MODE_CONTRACT,
    R_CALLS_LIMIT_SCOPE, R_MAX_CALLS_PER_PLAYER, R_OPENING_MODE, R_PENALTY,
)
from kalooki_sim.engine.core import draw_mode
from kalooki_sim.engine.layout import (
    A_DISCARD, G_DISC_N, G_HAND_NO, G_LAST_HAND, G_NP, G_PHASE, G_ROUND, G_TAKEN_MUST, G_TURN, JOKER, N_TYPES,
    PH_ALLOW, PH_CALL, PH_DRAW, PH_PLAY, PH_UPSWAP, PS_CALLS, PS_LAID,
)

from .declare import CompiledAgent, Param, param_index
from .discard import _first_legal
from .greedy import (
    KNOWN_LEN as GREEDY_KNOWN_LEN, P_CALL_THRESHOLD, P_DRAW_THRESHOLD, P_GAP_WEIGHT,
    PARAMS as GREEDY_PARAMS, _upswap_pick, explore_pick, explores, flow_action, greedy_discard, play_melds,
)
from .known import is_legal
from .measures import (
    THROWN_LEN, _wants, add_shown, card_usefulness, contract_shortfall, feed_share, live_potential, seen_counts, shortfall_with,
    thrown_bits,
)

# the expert's decision memory: greedy's, then the public count of each card type (``seen_counts``),
# then what each seat has thrown (``thrown_bits``)
_KNOWN_SEEN = GREEDY_KNOWN_LEN
_KNOWN_THROWN = _KNOWN_SEEN + N_TYPES
KNOWN_LEN = _KNOWN_THROWN + THROWN_LEN

# the expert's parameters: greedy's, then one per idea (the module docstring says each in full)
PARAMS = GREEDY_PARAMS + (
    Param("count_weight", 0.0, (0.0, 4.0), "card counting: weight of a card's live potential"),
    Param("defense", 0.0, (0.0, 4.0), "do not feed: weight of the share of opponents who could take a discard"),
    Param("dump_weight", 0.0, (0.0, 4.0), "penalty dumping: weight of the danger times the penalty"),
    Param("threat_cards", 0.0, (0.0, 12.0), "danger 1 while a laid-down opponent holds at most this many cards"),
    Param("late_turns", 0.0, (0.0, 20.0), "otherwise the danger rises to 1 over this many turns per player"),
    Param("call_max_shortfall", 0.0, (0.0, 6.0), "call only when fewer cards than this stay missing"),
    Param("hold_turns", 0.0, (0.0, 10.0), "hold a lay-down that does not go out for this many turns"),
    Param("call_use", 0.0, (0.0, 4.0), "call also a card of at least this usefulness"),
    Param("draw_use", 0.0, (0.0, 4.0), "draw (deny) also a card of at least this usefulness"),
    Param("sf_weight", 0.0, (0.0, 20.0), "weigh the contract shortfall a discard leaves at this much per card"),
    Param("call_budget", 0.0, (0.0, 3.0), "restrict calls only while fewer are left than this per hand to play"),
)
P_COUNT = param_index(PARAMS, "count_weight")
P_DEFENSE = param_index(PARAMS, "defense")
P_DUMP = param_index(PARAMS, "dump_weight")
P_THREAT_CARDS = param_index(PARAMS, "threat_cards")
P_LATE_TURNS = param_index(PARAMS, "late_turns")
P_CALL_MAX_SF = param_index(PARAMS, "call_max_shortfall")
P_HOLD_TURNS = param_index(PARAMS, "hold_turns")
P_CALL_USE = param_index(PARAMS, "call_use")
P_DRAW_USE = param_index(PARAMS, "draw_use")
P_SF_WEIGHT = param_index(PARAMS, "sf_weight")
P_CALL_BUDGET = param_index(PARAMS, "call_budget")


@njit(_nrt=False)
def danger(gs, ps, hands, g, seat, threat_cards, late_turns):
    """How near the hand's end looks, 0..1: 1 while an opponent who has laid down holds at most
    ``threat_cards`` cards, else the share of ``late_turns`` turns each player has had."""
    n = gs[g, G_NP]
    if threat_cards > 0.0:
        for o in range(n):
            if o != seat and ps[g, o, PS_LAID] == 1:
                held = 0
                for t in range(N_TYPES):
                    held += hands[g, o, t]
                if held <= threat_cards:
                    return 1.0
    if late_turns > 0.0:
        return min(1.0, np.float64(gs[g, G_TURN] // max(n, 1)) / late_turns)
    return 0.0


@njit(_nrt=False)
def _hand_size(hands, g, seat):
    k = 0
    for t in range(N_TYPES):
        k += hands[g, seat, t]
    return k


@njit(_nrt=False)
def expert_discard(params, state, rv, g, seat, known, rnd, contract, gapw):
    """The expert's discard (module docstring), the best legal natural by its measure; greedy's
    fallbacks (a joker, ending the turn) when no natural may go."""
    gs, ps, hands, disc, disc_by, minfo = state.gs, state.ps, state.hands, state.disc, state.disc_by, state.minfo
    mcards = state.mcards
    cw = params[P_COUNT]
    defense = params[P_DEFENSE]
    dump = params[P_DUMP]
    laid = ps[g, seat, PS_LAID] == 1
    seen = known[_KNOWN_SEEN:_KNOWN_SEEN + N_TYPES]
    if cw > 0.0:
        seen_counts(gs, hands, disc, minfo, mcards, g, seat, seen)
        add_shown(gs, state.shown, g, seat, seen)
    thrown = known[_KNOWN_THROWN:_KNOWN_THROWN + THROWN_LEN]
    if defense > 0.0:
        thrown_bits(gs, disc, disc_by, g, thrown)
    dz = 0.0
    if dump > 0.0:
        dz = dump * danger(gs, ps, hands, g, seat, params[P_THREAT_CARDS],
                           params[P_LATE_TURNS])
    use_sf = contract and not laid
    sf_weight = params[P_SF_WEIGHT]
    base = contract_shortfall(hands, rv, g, seat, rnd) if use_sf else 0
    best = -1
    best_sf = np.int64(1) << 40
    best_w = 1e300
    best_pen = -1
    for t in range(JOKER):
        if hands[g, seat, t] == 0:
            continue
        if not is_legal(known, A_DISCARD + t, state, rv, g):
            continue
        pen = rv[R_PENALTY + t]
        sf = 0
        w = 0.0
        if contract and laid:
            w = -np.float64(pen)            # shed the highest penalty ...
        else:
            w = card_usefulness(hands, rv, g, seat, t, 1, gapw)
            if cw > 0.0:
                w += cw * live_potential(rv, seen, t, gapw)
            w -= dz * np.float64(pen) / 10.0
            if use_sf:
                sf = shortfall_with(hands, rv, g, seat, rnd, t, -1) - base
                if sf_weight > 0.0:
                    w += sf_weight * np.float64(sf)
                    sf = 0
        if defense > 0.0:
            w += defense * feed_share(gs, ps, minfo, rv, g, seat, t, contract, thrown)
        if (sf < best_sf or (sf == best_sf and w < best_w)
                or (sf == best_sf and w == best_w and pen > best_pen)):
            best = t
            best_sf = sf
            best_w = w
            best_pen = pen
    if best >= 0:
        return A_DISCARD + best
    return greedy_discard(state, rv, g, seat, known, rnd, contract, gapw)


@njit(_nrt=False)
def _holds(params, gs, ps, hands, plan_n, g, seat):
    """Hold back a lay-down this turn (``hold_turns``)?  Only one that leaves more than the one
    card a discard sheds, early in the hand, while no opponent threatens."""
    hold = params[P_HOLD_TURNS]
    if hold <= 0.0 or ps[g, seat, PS_LAID] == 1 or gs[g, G_TAKEN_MUST] == 1:
        return False                     # (a card taken under a restriction must be laid now)
    n = max(gs[g, G_NP], 1)
    if np.float64(gs[g, G_TURN] // n) >= hold:
        return False
    if plan_n[g, 0] < 0:
        return False
    if _hand_size(hands, g, seat) - plan_n[g, 1] <= 1:
        return False                     # it goes out this turn: lay it
    return danger(gs, ps, hands, g, seat, params[P_THREAT_CARDS], 0.0) == 0.0


@njit(_nrt=False)
def calls_scarce(params, gs, ps, rv, g, seat):
    """Are ``seat``'s calls left fewer than ``call_budget`` per hand still to play (``call_budget``
    <= 0: always)?  Where the limit counts per hand, only this hand is still to play."""
    budget = params[P_CALL_BUDGET]
    if budget <= 0.0:
        return True
    hands_left = 1
    if rv[R_CALLS_LIMIT_SCOPE] != CALLS_LIMIT_SCOPE_HAND:
        hands_left = max(gs[g, G_LAST_HAND] - gs[g, G_HAND_NO] + 1, 1)
    left = rv[R_MAX_CALLS_PER_PLAYER] - ps[g, seat, PS_CALLS]
    return np.float64(left) < budget * np.float64(hands_left)


@njit(_nrt=False)
def expert_action(params, state, rv, g, seat, known, mask, key, ctr):
    """The expert heuristic (module docstring); always returns a legal action (-1 if none).
    With every parameter beyond greedy's at 0 it plays greedy's action (tests/test_expert.py)."""
    gs, ps, hands, disc, plan_n = state.gs, state.ps, state.hands, state.disc, state.plan_n
    if explores(params, key, ctr):
        return explore_pick(state, rv, g, key, ctr)
    call_thr = params[P_CALL_THRESHOLD]
    draw_thr = params[P_DRAW_THRESHOLD]
    gapw = params[P_GAP_WEIGHT]
    call_sf = params[P_CALL_MAX_SF]
    ph = gs[g, G_PHASE]
    contract = rv[R_OPENING_MODE] == OPENING_MODE_CONTRACT
    rnd = gs[g, G_ROUND]
    nd = gs[g, G_DISC_N]
    top = -1
    if nd > 0:
        top = np.int64(disc[g, nd - 1])
    if ph == PH_CALL or ph == PH_ALLOW or ph == PH_DRAW:
        want = False
        if top >= 0:
            if ph == PH_CALL or ph == PH_ALLOW:
                want = _wants(hands, rv, g, seat, rnd, top, contract, gapw,
                              call_thr if ph == PH_CALL else draw_thr)
                if (want and ph == PH_CALL and contract and call_sf > 0.0
                        and calls_scarce(params, gs, ps, rv, g, seat)):
                    # a call only near the contract: the card, the call's extra card and one of
                    # the few calls are worth it when few cards are missing
                    want = np.float64(shortfall_with(hands, rv, g, seat, rnd, top, 1)) < call_sf
                use = params[P_CALL_USE if ph == PH_CALL else P_DRAW_USE]
                if not want and contract and use > 0.0:
                    want = card_usefulness(hands, rv, g, seat, top, 0, gapw) >= use
            else:
                mode = draw_mode(gs, ps, rv, g, seat)
                want = mode != DISCARD_DRAW_BEFORE_OPENING_NEVER and (
                    _wants(hands, rv, g, seat, rnd, top, contract, gapw, draw_thr)
                    or (not contract and mode != DISCARD_DRAW_BEFORE_OPENING_ANY))
                use = params[P_DRAW_USE]
                if (not want and contract and use > 0.0 and mode != DISCARD_DRAW_BEFORE_OPENING_NEVER
                        and card_usefulness(hands, rv, g, seat, top, 0, gapw) >= use):
                    want = True
        a = flow_action(state, rv, g, ph, want, known)
        if a >= 0:
            return a
    elif ph == PH_UPSWAP:
        return _upswap_pick(hands, rv, g, seat, top, gapw)
    elif ph == PH_PLAY:
        may_lay = not _holds(params, gs, ps, hands, plan_n, g, seat)
        a = play_melds(state, rv, g, seat, known, contract, may_lay)
        if a >= 0:
            return a
        if (params[P_COUNT] > 0.0 or params[P_DEFENSE] > 0.0
                or params[P_DUMP] > 0.0 or params[P_SF_WEIGHT] > 0.0):
            return expert_discard(params, state, rv, g, seat, known, rnd, contract, gapw)
        return greedy_discard(state, rv, g, seat, known, rnd, contract, gapw)
    return _first_legal(known, state, rv, g)


AGENT = CompiledAgent("expert", 2, expert_action, PARAMS, memory=KNOWN_LEN,
                      doc="Greedy plus card counting, defence, penalty dumping and the timing of calls and "
                          "lay-downs, each behind a parameter that is off by default, so its default row plays "
                          "greedy's games; the named strategies in `configs/agents/` are settings of it "
                          "(`agents/expert.py` explains each idea).")
