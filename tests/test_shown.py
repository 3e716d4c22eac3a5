"""Public card knowledge (``state.shown``): the copies each seat was seen to take (from the pile, by
a call, a denied call, the upcard swap, or from the table) and has not put down since.

A slow reference keeps the same tally from what every player sees of each step (the pile's top
card, the action, hand sizes and the table) and is compared with the engine's after every step of
random games in every preset; the invariant checker holds ``shown <= hands`` throughout.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from kalooki_sim import load_rules
from kalooki_sim.engine import core, layout as L
from kalooki_sim.engine.state import State

PRESETS = ("caribbean", "k40", "k51", "k101", "na15", "american")
FLOW_TAKES = (L.A_DRAW_DISCARD, L.A_DENY)


@lru_cache(maxsize=None)
def _rules(name):
    return load_rules(name)


def _reference_step(shown, before, after, a, gs_before, top, caller):
    """The tally after action ``a``: a card taken in sight is added, then every card that left a
    hand takes one known copy of its type with it (copies look alike)."""
    shown = shown.copy()
    actor = int(gs_before[L.G_TO_ACT])
    active = int(gs_before[L.G_ACTIVE])
    phase = int(gs_before[L.G_PHASE])
    if phase == L.PH_UPSWAP:
        if a != L.A_PASS:
            shown[actor, top] += 1
            shown[actor, a - L.A_UPSWAP] = max(0, shown[actor, a - L.A_UPSWAP] - 1)
        return shown
    if a in FLOW_TAKES:
        shown[active, top] += 1
    elif a == L.A_ALLOW:
        shown[caller, top] += 1
    elif a >= L.A_LAY and a != L.A_END_TURN:            # play phase: the table is the only source
        delta = after[active].astype(np.int64) - before[active].astype(np.int64)
        shown[active] = np.maximum(0, shown[active] + delta)
    return shown


def _legal(mask):
    return np.flatnonzero(mask)


@pytest.mark.parametrize("preset", PRESETS)
def test_shown_matches_reference(preset):
    rv = np.ascontiguousarray(_rules(preset).to_vector(), dtype=np.int64)
    rng = np.random.default_rng(11)
    st = State.empty(1)
    A = st.arrays()
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    taken = checked = 0
    for game in range(25):
        n = 2 + game % 5
        core.start_game(A, rv, 0, n, -1, 5, game, 1)
        ref = np.zeros((L.P_MAX, L.N_TYPES), dtype=np.int64)
        deal = int(st.gs[0, L.G_DEAL_NO])
        for _ in range(3000):
            if st.gs[0, L.G_TERMINAL]:
                break
            legal = _legal(mask) if core.legal_mask(A, rv, 0, mask) else []
            assert len(legal)
            eager = [x for x in legal if L.A_LAY <= x < L.A_DISCARD or x >= L.A_TACK
                     or x in (L.A_DRAW_DISCARD, L.A_CALL, L.A_DENY)]
            a = int(rng.choice(eager if eager and rng.random() < 0.6 else legal))
            gs0 = st.gs[0].copy()
            top = int(st.disc[0, gs0[L.G_DISC_N] - 1]) if gs0[L.G_DISC_N] > 0 else -1
            before = st.hands[0].copy()
            assert core.step(A, rv, 0, a) == 0
            if st.gs[0, L.G_DEAL_NO] != deal:            # a voided deal is dealt again: nothing is known
                deal = int(st.gs[0, L.G_DEAL_NO])
                ref[:] = 0
            else:
                ref = _reference_step(ref, before, st.hands[0], a, gs0, top, int(gs0[L.G_CALLER]))
            assert np.array_equal(st.shown[0], ref), (preset, game, a)
            assert core.check_invariants(A, rv, 0, True, mask) == core.INV_OK
            taken += int(ref.sum() > 0)
            checked += 1
    assert checked > 1000 and taken > 100


def test_a_new_deal_forgets_what_was_shown():
    rv = np.ascontiguousarray(_rules("caribbean").to_vector(), dtype=np.int64)
    st = State.empty(1)
    A = st.arrays()
    core.start_game(A, rv, 0, 4, 0, 1, 0, 1)
    st.shown[0, 1, 5] = 1                               # stale knowledge of the row's last game
    core.start_game(A, rv, 0, 4, 0, 1, 1, 1)
    assert st.shown.sum() == 0
