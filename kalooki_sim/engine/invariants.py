"""Self-checks of a game's state (tests, and the simulator's optional checks): card conservation,
legal table melds, call counts, a non-empty legal mask that agrees with ``check_action``.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.rulevec import R_MAX_CALLS_PER_PLAYER, R_MAX_TURNS_PER_HAND, R_N_DECKS, R_N_JOKERS
from kalooki_sim.melds.positions import pos_type

from .fit import meld_value_of
from .layout import (
    G_DISC_N, G_N_MELDS, G_NP, G_STOCK_N, G_TERMINAL, G_TURN, JOKER, MI_HI, MI_KEY, MI_KIND, MI_LEN, MI_LO, MI_NJ,
    MI_OWNER, MK_JSET, MK_RUN, N_ACTIONS, N_TYPES, P_MAX, PS_CALLS, PS_LAID,
)
from .legality import check_action, legal_mask

INV_OK = 0
INV_DECK_EXCEEDED = 1
INV_CONSERVATION = 2
INV_MELD_ILLEGAL = 3
INV_MELD_LAYOUT = 4
INV_CALLS = 5
INV_MASK_EMPTY = 6
INV_NEGATIVE = 7
INV_TURN_CAP = 8
INV_MELD_OF_UNLAID = 9
INV_SHOWN = 10


@njit
def check_invariants(state, rv, g, full_deck, mask):
    """0 if game ``g`` is consistent, else an ``INV_*`` code.

    Checks: no card type more often than the deck holds (and, with ``full_deck``, every card of
    the deck is in exactly one place: hands, stock, pile, table); the cards known to be held
    (``shown``) are held; every table meld is legal with
    its declared jokers and laid out consistently; calls within the limit; the legal mask is
    non-empty unless terminal; the turn counter below the cap.
    """
    gs, ps, hands, stock, disc, minfo = state.gs, state.ps, state.hands, state.stock, state.disc, state.minfo
    mcards, mas, shown = state.mcards, state.mas, state.shown
    cnt = np.zeros(N_TYPES, dtype=np.int64)
    n = gs[g, G_NP]
    for p in range(P_MAX):
        for t in range(N_TYPES):
            if hands[g, p, t] < 0:
                return INV_NEGATIVE
            if shown[g, p, t] < 0 or shown[g, p, t] > hands[g, p, t]:
                return INV_SHOWN
            cnt[t] += hands[g, p, t]
    for i in range(gs[g, G_STOCK_N]):
        cnt[stock[g, i]] += 1
    for i in range(gs[g, G_DISC_N]):
        cnt[disc[g, i]] += 1
    for m in range(gs[g, G_N_MELDS]):
        kind = minfo[g, m, MI_KIND]
        lo = minfo[g, m, MI_LO]
        hi = minfo[g, m, MI_HI]
        if hi - lo + 1 != minfo[g, m, MI_LEN]:
            return INV_MELD_LAYOUT
        nj = 0
        for q in range(lo, hi + 1):
            c = mcards[g, m, q]
            if c < 0:
                return INV_MELD_LAYOUT
            if kind == MK_RUN and mas[g, m, q] != pos_type(minfo[g, m, MI_KEY], q):
                return INV_MELD_LAYOUT
            if c != JOKER and mas[g, m, q] != c:
                return INV_MELD_LAYOUT
            if c == JOKER:
                nj += 1
            cnt[c] += 1
        if nj != minfo[g, m, MI_NJ]:
            return INV_MELD_LAYOUT
        if ps[g, minfo[g, m, MI_OWNER], PS_LAID] != 1:
            return INV_MELD_OF_UNLAID
        if kind != MK_JSET and meld_value_of(minfo, mcards, mas, rv, g, m) < 0:
            return INV_MELD_ILLEGAL
    for t in range(52):
        if cnt[t] > rv[R_N_DECKS] or (full_deck and cnt[t] != rv[R_N_DECKS]):
            return INV_CONSERVATION if full_deck else INV_DECK_EXCEEDED
    if cnt[JOKER] > rv[R_N_JOKERS] or (full_deck and cnt[JOKER] != rv[R_N_JOKERS]):
        return INV_CONSERVATION if full_deck else INV_DECK_EXCEEDED
    for p in range(n):
        if ps[g, p, PS_CALLS] > rv[R_MAX_CALLS_PER_PLAYER]:
            return INV_CALLS
    if gs[g, G_TURN] >= rv[R_MAX_TURNS_PER_HAND] and gs[g, G_TERMINAL] == 0:
        return INV_TURN_CAP
    k = legal_mask(state, rv, g, mask)
    if k == 0 and gs[g, G_TERMINAL] == 0:
        return INV_MASK_EMPTY
    return INV_OK


@njit
def mask_consistent(state, rv, g, mask):
    """-1 if ``legal_mask`` agrees with ``check_action`` on every action id, else the first id
    where they differ (the mask only tests candidates, so this guards its candidate lists)."""
    legal_mask(state, rv, g, mask)
    for a in range(N_ACTIONS):
        ok = check_action(state, rv, g, a) == 0
        if ok != mask[a]:
            return a
    return -1
