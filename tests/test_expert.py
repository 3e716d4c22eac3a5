"""The expert heuristic family (agents/expert.py).

* with every idea beyond greedy's off (the all-zero tail of its row) it plays exactly greedy's
  games, in every preset, hands and matches;
* its measures (public card counts, live potential, feed share, danger) and its discard equal
  slow Python definitions on the positions of real games of every preset;
* every named strategy built on it plays only legal actions with the engine's invariant checks on.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

from kalooki_sim import load_rules
from kalooki_sim.agents.base import EXPERT, GREEDY, N_PARAMS, PARAM_NAMES, RANDOM, default_params
from kalooki_sim.agents.compiled import KNOWN_LEN, choose_action
from kalooki_sim.agents.expert import calls_scarce, danger, expert_discard
from kalooki_sim.agents.known import KNOWN_GEN
from kalooki_sim.agents.measures import (
    THROWN_LEN, card_usefulness, contract_shortfall, feed_share, live_potential, seen_counts, thrown_bits,
)
from kalooki_sim.core.rng import rng_key
from kalooki_sim.core.rulevec import (
    CALLS_LIMIT_SCOPE_HAND, OPENING_MODE_CONTRACT, PLAY_DIRECTION_LEFT, R_ACE_HIGH, R_ACE_LOW, R_CALLS_ENABLED,
    R_CALLS_LIMIT_SCOPE, R_MAX_CALLS_PER_PLAYER, R_N_DECKS, R_OPENING_MODE, R_PENALTY, R_PLAY_DIRECTION,
    R_SET_ALLOW_DUPLICATE_SUIT,
)
from kalooki_sim.engine import core, layout as L
from kalooki_sim.engine.state import State
from kalooki_sim.melds.positions import pos_type
from kalooki_sim.runtime.rollout import simulate
from kalooki_sim.runtime.strategies import known_strategies, load_strategy

PRESETS = ["caribbean", "k40", "k51", "k101", "na15", "american"]
N_PLAYERS = {"caribbean": 4, "k40": 4, "k51": 3, "k101": 5, "na15": 4, "american": 4}


@lru_cache(maxsize=None)
def _rules(preset):
    return load_rules(preset)


def _same_games(a: dict, b: dict):
    """Equal rows, but for the agent id column."""
    assert a.keys() == b.keys()
    for k in a:
        if k != "policy_id":
            np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def _expert_row(greedy_part=None, **ideas):
    """The expert's default row (its ideas off), greedy's four parameters ``greedy_part`` if given."""
    row = default_params(EXPERT)
    if greedy_part is not None:
        row[:4] = greedy_part
    for name, v in ideas.items():
        row[PARAM_NAMES[EXPERT].index(name)] = v
    return row


# ------------------------------------------------------------------------------------------------
# off = greedy


@pytest.mark.parametrize("preset", PRESETS)
def test_expert_with_its_ideas_off_plays_greedys_games(preset):
    r = _rules(preset)
    n = N_PLAYERS[preset]
    for greedy_part in [tuple(default_params(GREEDY)), (0.05, 2.0, 0.5, 0.8), (0.0, 0.0, 0.0, 0.0)]:
        g_params = np.tile(np.array(greedy_part), (n, 1))
        e_params = np.tile(_expert_row(greedy_part), (n, 1))
        greedy = simulate(r, n, [GREEDY] * n, g_params, 150, 11)
        expert = simulate(r, n, [EXPERT] * n, e_params, 150, 11)
        _same_games(greedy, expert)


@pytest.mark.parametrize("preset", ["caribbean", "k40"])
def test_expert_with_its_ideas_off_plays_greedys_matches(preset):
    r = _rules(preset)
    gh, gm = simulate(r, 4, [GREEDY] * 4, None, 6, 3, mode="matches", max_hands=12)
    eh, em = simulate(r, 4, [EXPERT] * 4, None, 6, 3, mode="matches", max_hands=12)
    _same_games(gh, eh)
    _same_games(gm, em)


def test_expert_ideas_change_the_games():
    """Each idea on its own makes some decision differently from greedy (else it is not there)."""
    r = _rules("caribbean")
    base = simulate(r, 4, [GREEDY] * 4, None, 300, 5)
    for name, v in [("count_weight", 2.0), ("defense", 2.0), ("call_max_shortfall", 2.0), ("hold_turns", 4.0),
                    ("call_use", 1.0), ("draw_use", 1.0)]:
        out = simulate(r, 4, [EXPERT] * 4, np.tile(_expert_row(**{name: v}), (4, 1)), 300, 5)
        assert not np.array_equal(out["penalty"], base["penalty"]), name
    for row in (_expert_row(dump_weight=3.0, late_turns=3.0), _expert_row(sf_weight=0.5)):
        out = simulate(r, 4, [EXPERT] * 4, np.tile(row, (4, 1)), 300, 5)
        assert not np.array_equal(out["penalty"], base["penalty"])


# ------------------------------------------------------------------------------------------------
# the measures against their definitions


def _py_seen(A, g, seat, with_shown=False):
    """What ``seat`` can place: its hand, the pile, the table (``seen_counts``), and with
    ``with_shown`` the cards the others were seen to take and still hold (the expert's count)."""
    gs, hands, disc, minfo, mcards = A[0], A[2], A[4], A[6], A[7]
    seen = [int(x) for x in hands[g, seat]]
    if with_shown:
        for o in range(gs[g, L.G_NP]):
            if o != seat:
                seen = [x + int(y) for x, y in zip(seen, A.shown[g, o])]
    for i in range(gs[g, L.G_DISC_N]):
        seen[int(disc[g, i])] += 1
    for m in range(gs[g, L.G_N_MELDS]):
        for c in mcards[g, m]:
            if c >= 0:
                seen[int(c)] += 1
    return seen


def _py_live(rv, seen, t, gapw):
    if t == L.JOKER:
        return 0.0
    nd = int(rv[R_N_DECKS])
    s, r = divmod(t, 13)
    sets = sum(max(nd - seen[s2 * 13 + r], 0) for s2 in range(4)
               if s2 != s or rv[R_SET_ALLOW_DUPLICATE_SUIT])
    positions = ([1] if rv[R_ACE_LOW] else []) + ([14] if rv[R_ACE_HIGH] else []) if r == 0 else [r + 1]
    allowed = set(range(2, 14)) | ({1} if rv[R_ACE_LOW] else set()) | ({14} if rv[R_ACE_HIGH] else set())
    one = two = 0
    for q in positions:
        for d in (-2, -1, 1, 2):
            if q + d in allowed:
                left = max(nd - seen[pos_type(s, q + d)], 0)
                if abs(d) == 1:
                    one += left
                else:
                    two += left
    return sets / (4 * nd) + one / nd + gapw * two / nd


def _py_feed(A, rv, g, seat, t):
    gs, ps, disc, disc_by, minfo = A[0], A[1], A[4], A[5], A[6]
    n = int(gs[g, L.G_NP])
    contract = rv[R_OPENING_MODE] == OPENING_MODE_CONTRACT
    nxt = (seat + (1 if rv[R_PLAY_DIRECTION] == PLAY_DIRECTION_LEFT else -1)) % n
    from kalooki_sim.engine.fit import tack_may_fit
    feed = 0
    for o in range(n):
        if o == seat:
            continue
        if ps[g, o, L.PS_LAID]:
            if not contract and o == nxt and any(tack_may_fit(minfo, g, m, t)
                                                for m in range(gs[g, L.G_N_MELDS])):
                feed += 1
            continue
        if o != nxt and (not contract or not rv[R_CALLS_ENABLED]
                         or ps[g, o, L.PS_CALLS] >= rv[R_MAX_CALLS_PER_PLAYER]):
            continue
        thrown = [int(disc[g, i]) for i in range(gs[g, L.G_DISC_N]) if disc_by[g, i] == o]
        shunned = any(c != L.JOKER and (c % 13 == t % 13 or (c // 13 == t // 13 and abs(c % 13 - t % 13) <= 2))
                      for c in thrown)
        feed += 0 if shunned else 1
    return feed / (n - 1)


def _py_danger(A, g, seat, threat, late):
    gs, ps, hands = A[0], A[1], A[2]
    n = int(gs[g, L.G_NP])
    if threat > 0 and any(o != seat and ps[g, o, L.PS_LAID] and hands[g, o].sum() <= threat for o in range(n)):
        return 1.0
    if late > 0:
        return min(1.0, (gs[g, L.G_TURN] // n) / late)
    return 0.0


def _py_discard(A, rv, g, seat, row, legal):
    """The expert's discard measure from the definitions: the legal natural minimising
    (shortfall it leaves, worth, -penalty, type)."""
    gs, ps, hands = A[0], A[1], A[2]
    contract = rv[R_OPENING_MODE] == OPENING_MODE_CONTRACT
    laid = ps[g, seat, L.PS_LAID] == 1
    gapw = row[3] if row[3] > 0 else 0.5
    cw, defense, dump, threat, late, sf_weight = row[4], row[5], row[6], row[7], row[8], row[13]
    seen = _py_seen(A, g, seat, with_shown=True)
    dz = dump * _py_danger(A, g, seat, threat, late) if dump > 0 else 0.0
    rnd = gs[g, L.G_ROUND]
    base = contract_shortfall(hands, rv, g, seat, rnd) if contract and not laid else 0
    keys = []
    for t in range(L.JOKER):
        if hands[g, seat, t] == 0 or not legal[L.A_DISCARD + t]:
            continue
        pen = int(rv[R_PENALTY + t])
        sf = 0
        if contract and laid:
            w = -float(pen)
        else:
            w = card_usefulness(hands, rv, g, seat, t, 1, gapw)
            if cw > 0:
                w += cw * _py_live(rv, seen, t, gapw)
            w -= dz * pen / 10.0
            if contract:
                hands[g, seat, t] -= 1
                sf = contract_shortfall(hands, rv, g, seat, rnd) - base
                hands[g, seat, t] += 1
                if sf_weight > 0:
                    w += sf_weight * sf
                    sf = 0
        if defense > 0:
            w += defense * _py_feed(A, rv, g, seat, t)
        keys.append((sf, w, -pen, t))
    return min(keys)[3] if keys else None


@pytest.mark.parametrize("preset", PRESETS)
def test_expert_measures_and_discard_match_definitions(preset):
    r = _rules(preset)
    rv = np.ascontiguousarray(r.to_vector(), dtype=np.int64)
    n = N_PLAYERS[preset]
    st = State.empty(1)
    A = st.arrays()
    gs = A[0]
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    rows = [_expert_row((0.0, 1.0, 1.0, 0.7), count_weight=1.3, defense=0.9, dump_weight=1.7,
                        threat_cards=4.0, late_turns=5.0),
            _expert_row((0.0, 1.0, 1.0, 0.7), count_weight=0.4, defense=2.1, dump_weight=0.6,
                        late_turns=3.0, sf_weight=1.9, call_use=1.0, draw_use=2.0)]
    rng = np.random.default_rng(7)
    seen = np.zeros(L.N_TYPES, dtype=np.int64)
    thrown = np.zeros(THROWN_LEN, dtype=np.int64)
    known = np.zeros(KNOWN_LEN, dtype=np.int64)
    compared = discards = 0
    for game in range(6):
        row = rows[game % 2]
        core.start_game(A, rv, 0, n, -1, 9, game, 1 + game % 3)     # matches of 1-3 hands
        keys = np.array([rng_key(9, game, core.STREAM_POLICY_BASE + p) for p in range(n)], dtype=np.uint64)
        ctrs = np.zeros(n, dtype=np.int64)
        pol = [EXPERT, GREEDY, RANDOM, EXPERT, GREEDY, RANDOM][:n]
        for _ in range(4000):
            if gs[0, L.G_TERMINAL]:
                break
            seat = int(gs[0, L.G_TO_ACT])
            k = core.legal_mask(A, rv, 0, mask)
            budget = float(rng.choice([0.0, 0.2, 0.5, 1.0, 3.0]))
            hands_left = 1 if rv[R_CALLS_LIMIT_SCOPE] == CALLS_LIMIT_SCOPE_HAND else \
                gs[0, L.G_LAST_HAND] - gs[0, L.G_HAND_NO] + 1
            calls_left = rv[R_MAX_CALLS_PER_PLAYER] - A[1][0, seat, L.PS_CALLS]
            assert calls_scarce(_expert_row(call_budget=budget), gs, A[1], rv, 0, seat) == \
                (budget <= 0 or calls_left < budget * hands_left)
            if gs[0, L.G_PHASE] == L.PH_PLAY:
                seen_counts(gs, A[2], A[4], A[6], A[7], 0, seat, seen)
                ref_seen = _py_seen(A, 0, seat)
                assert list(seen) == ref_seen
                gapw = float(rng.uniform(0.1, 1.0))
                for t in range(L.N_TYPES):
                    assert live_potential(rv, seen, t, gapw) == pytest.approx(_py_live(rv, ref_seen, t, gapw))
                    if t < L.JOKER:
                        contract = rv[R_OPENING_MODE] == OPENING_MODE_CONTRACT
                        thrown_bits(gs, A[4], A[5], 0, thrown)
                        assert feed_share(gs, A[1], A[6], rv, 0, seat, t, contract, thrown) == \
                            pytest.approx(_py_feed(A, rv, 0, seat, t))
                threat, late = float(rng.integers(0, 8)), float(rng.integers(0, 9))
                assert danger(gs, A[1], A[2], 0, seat, threat, late) == _py_danger(A, 0, seat, threat, late)
                compared += 1
                want = _py_discard(A, rv, 0, seat, row, mask)
                if want is not None:
                    known[KNOWN_GEN] += 1
                    got = expert_discard(row, A, rv, 0, seat, known, gs[0, L.G_ROUND],
                                         rv[R_OPENING_MODE] == OPENING_MODE_CONTRACT, 0.7)
                    assert got == L.A_DISCARD + want
                    discards += 1
            params = row if pol[seat] == EXPERT else default_params(GREEDY)
            a = choose_action(pol[seat], params, A, rv, 0, seat, mask, k, keys[seat], ctrs[seat:seat + 1])
            assert mask[a], (pol[seat], a)
            assert core.step(A, rv, 0, a) == 0
    assert compared > 50 and discards > 20


# ------------------------------------------------------------------------------------------------
# named strategies: legal play with the invariants checked


def _expert_strategies():
    return [s for s in known_strategies() if load_strategy(s).agent_id == EXPERT]


def test_named_expert_strategies_exist_and_are_documented():
    names = _expert_strategies()
    assert len(names) >= 4, names
    for s in names:
        assert load_strategy(s).description


@pytest.mark.parametrize("preset", PRESETS)
def test_every_expert_strategy_plays_legally_with_invariants(preset):
    r = _rules(preset)
    names = _expert_strategies()
    n = N_PLAYERS[preset]
    rows = np.stack([load_strategy(s).row(N_PARAMS[EXPERT]) for s in names])
    played = 0
    for i in range(0, len(names), n):
        seats = [EXPERT] * n
        params = np.stack([rows[(i + j) % len(names)] for j in range(n)])
        out = simulate(r, n, seats, params, 60, 13 + i, check=True)
        assert np.all(out["turns"] > 0)
        played += 60
    assert played >= 60


def test_call_budget_keeps_calls_for_later_hands_of_a_match():
    """With calls scarce only for the hands left, the single hands play greedy's calls, while early
    in a Caribbean match (3 calls for 9 hands) the calls are kept for near-complete contracts."""
    r = _rules("caribbean")
    row = np.tile(_expert_row(call_max_shortfall=0.5, call_budget=1.0), (4, 1))
    greedy = simulate(r, 4, [GREEDY] * 4, None, 200, 3)
    expert = simulate(r, 4, [EXPERT] * 4, row, 200, 3)
    _same_games(greedy, expert)                      # 3 calls left >= 1 per hand for one hand
    gh, _ = simulate(r, 4, [GREEDY] * 4, None, 20, 3, mode="matches")
    eh, _ = simulate(r, 4, [EXPERT] * 4, row, 20, 3, mode="matches")
    first = gh["hand_no"] == 0
    assert eh["calls_used"][first].sum() < gh["calls_used"][first].sum()
