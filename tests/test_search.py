"""The search agent (``agents/search.py``) and its worlds (``agents/worlds.py``).

* A sampled world is one the seat cannot tell from the real game: its own hand, the table, the
  pile, hand sizes, the stock's size and the cards the others are known to hold are kept, the deck
  is whole, and the world for a key depends only on what the seat knows.
* The hidden-information test, in every preset: at searched decisions of real games, re-dealing
  the cards the seat cannot see (consistently with what it knows) never changes its action for a
  fixed random stream -- while the search does pick other actions than its base strategy (the
  check can fail) and the re-deal does move the hidden cards.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest

from kalooki_sim import load_rules
from kalooki_sim.agents.base import default_params, policy_id
from kalooki_sim.agents.compiled import choose_action
from kalooki_sim.agents.known import KNOWN_GEN
from kalooki_sim.agents.search import KNOWN_LEN, PARAMS, hand_value, in_match, search_action
from kalooki_sim.agents.worlds import sample_world
from kalooki_sim.core.rng import rng_key
from kalooki_sim.engine import core, layout as L
from kalooki_sim.engine.state import State
from kalooki_sim.runtime.strategies import load_strategy

PRESETS = ("caribbean", "k40", "k51", "k101", "na15", "american")
SEARCH = policy_id("search")
GREEDY = policy_id("greedy")
EXPERT = policy_id("expert")


@lru_cache(maxsize=None)
def _rv(preset):
    return np.ascontiguousarray(load_rules(preset).to_vector(), dtype=np.int64)


def _row(**kw):
    row = default_params(SEARCH)
    names = [p.name for p in PARAMS]
    for k, v in kw.items():
        row[names.index(k)] = v
    return row


def _redeal(st, seat, rng):
    """The test's own re-deal of what ``seat`` cannot see: the other hands less their known cards,
    and the stock, shuffled among those places (sizes and known cards kept)."""
    n = int(st.gs[0, L.G_NP])
    ns = int(st.gs[0, L.G_STOCK_N])
    pool = list(st.stock[0, :ns].astype(np.int64))
    sizes = {}
    for o in range(n):
        if o != seat:
            hidden = st.hands[0, o].astype(np.int64) - st.shown[0, o]
            sizes[o] = int(hidden.sum())
            pool += list(np.repeat(np.arange(L.N_TYPES), hidden))
    pool = rng.permutation(np.array(pool, dtype=np.int64))
    k = 0
    for o, size in sizes.items():
        st.hands[0, o] = st.shown[0, o] + np.bincount(pool[k:k + size], minlength=L.N_TYPES)
        k += size
    st.stock[0, :ns] = pool[k:]


def _play_to_decisions(preset, n, games, seat_of_interest, rng, check):
    """Drive random-ish games (greedy seats) and call ``check(state, seat)`` at decisions of
    ``seat_of_interest`` with more than one legal action."""
    rv = _rv(preset)
    st = State.empty(1)
    A = st.arrays()
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    greedy = default_params(GREEDY)
    for game in range(games):
        core.start_game(A, rv, 0, n, -1, 3, game, 1)
        for _ in range(3000):
            if st.gs[0, L.G_TERMINAL]:
                break
            seat = int(st.gs[0, L.G_TO_ACT])
            k = core.legal_mask(A, rv, 0, mask)
            if seat == seat_of_interest and k > 1:
                check(st, seat)
            if rng.random() < 0.15:
                a = int(rng.choice(np.flatnonzero(mask)))
            else:
                key = np.uint64(rng_key(3, game, 100 + seat))
                a = choose_action(GREEDY, greedy, A, rv, 0, seat, mask, k, key, np.zeros(1, dtype=np.int64))
            assert core.step(A, rv, 0, a) == 0


@pytest.mark.parametrize("preset", ["caribbean", "k40"])
def test_world_keeps_what_the_seat_knows(preset):
    rv = _rv(preset)
    rng = np.random.default_rng(3)
    pool = np.empty(L.DECK_MAX, dtype=np.int64)
    counts = np.empty(L.N_TYPES, dtype=np.int64)
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    seen = {"worlds": 0, "moved": 0}

    def check(st, seat):
        w = st.copy()
        sample_world(w.arrays(), 0, seat, np.uint64(rng.integers(1 << 62)), pool, counts)
        assert core.check_invariants(w.arrays(), rv, 0, True, mask) == core.INV_OK
        n = int(st.gs[0, L.G_NP])
        assert np.array_equal(w.hands[0, seat], st.hands[0, seat])
        for o in range(n):
            assert w.hands[0, o].sum() == st.hands[0, o].sum()
            assert (w.hands[0, o] >= st.shown[0, o]).all()
        for name in ("disc", "minfo", "mcards", "shown"):
            assert np.array_equal(getattr(w, name), getattr(st, name)), name
        ns = int(st.gs[0, L.G_STOCK_N])
        assert w.gs[0, L.G_STOCK_N] == ns
        # the same key on a re-dealt real game gives the same world
        key = np.uint64(rng.integers(1 << 62))
        a, b = st.copy(), st.copy()
        _redeal(b, seat, rng)
        sample_world(a.arrays(), 0, seat, key, pool, counts)
        sample_world(b.arrays(), 0, seat, key, pool, counts)
        assert np.array_equal(a.hands, b.hands) and np.array_equal(a.stock[0, :ns], b.stock[0, :ns])
        seen["worlds"] += 1
        seen["moved"] += int(not np.array_equal(w.hands[0], st.hands[0]))

    _play_to_decisions(preset, 4, 3, 1, rng, check)
    assert seen["worlds"] > 30 and seen["moved"] > 10


@pytest.mark.parametrize("preset, adaptive", [(p, False) for p in PRESETS] + [("caribbean", True), ("k40", True)])
def test_search_never_reads_hidden_cards(preset, adaptive):
    """Re-dealing the hidden cards never changes the search's action for a fixed stream (also
    with adaptive worlds: how many it reads depends on the worlds, which depend on what it knows)."""
    rv = _rv(preset)
    rng = np.random.default_rng(17)
    row = _row(worlds=8, candidates=3, worlds_min=2, stop_z=1.0) if adaptive else _row(worlds=3, candidates=3)
    base_row = row[:len(default_params(EXPERT))]
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    tally = {"decisions": 0, "differs": 0}

    def search(st, seat):
        known = np.zeros(KNOWN_LEN, dtype=np.int64)
        known[KNOWN_GEN] = 1
        return search_action(row, st.arrays(), rv, np.uint64(0), seat, known, mask, np.uint64(99 + tally["decisions"]),
                             np.zeros(1, dtype=np.int64))

    def expert(st, seat):
        k = core.legal_mask(st.arrays(), rv, 0, mask)
        return choose_action(EXPERT, base_row, st.arrays(), rv, 0, seat, mask, k, np.uint64(99 + tally["decisions"]),
                             np.zeros(1, dtype=np.int64))

    def check(st, seat):
        if tally["decisions"] >= 40:
            return
        a = search(st, seat)
        assert core.legal_mask(st.arrays(), rv, 0, mask) > 0 and mask[a], (preset, a)
        for _ in range(2):
            other = st.copy()
            _redeal(other, seat, rng)
            assert search(other, seat) == a, (preset, int(st.gs[0, L.G_PHASE]))
        tally["differs"] += int(a != expert(st, seat))
        tally["decisions"] += 1

    _play_to_decisions(preset, 4 if preset != "k51" else 3, 6, 0, rng, check)
    assert tally["decisions"] >= 20
    assert tally["differs"] > 0, "the search never departed from its base strategy: the test could not fail"


def _search_at(row, st, rv, seat, mask, key):
    """The search's action for ``seat`` in ``st`` (row 0) with a fresh memory and key ``key``."""
    known = np.zeros(KNOWN_LEN, dtype=np.int64)
    known[KNOWN_GEN] = 1
    return search_action(row, st.arrays(), rv, np.uint64(0), seat, known, mask, np.uint64(key),
                         np.zeros(1, dtype=np.int64))


def test_without_extra_calls_the_search_calls_only_where_its_base_does():
    """``extra_calls = 0``: at a call window the search compares its base's call with passing but
    never calls where the base passes (in a match of limited calls an extra call costs a later
    hand, docs/search.md); with ``extra_calls = 1`` it does call there (so the check can fail)."""
    rv = _rv("caribbean")
    rng = np.random.default_rng(5)
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    rows = {x: _row(worlds=3, candidates=3, confidence=0.0, extra_calls=x) for x in (0.0, 1.0)}
    base_row = rows[0.0][:len(default_params(EXPERT))]
    tally = {"windows": 0, "base_passes": 0, "extra": 0}

    def act(row, st, seat, key):
        return _search_at(row, st, rv, seat, mask, key)

    def check(st, seat):
        k = core.legal_mask(st.arrays(), rv, 0, mask)
        if not mask[L.A_CALL] or tally["windows"] >= 60:
            return
        key = 500 + tally["windows"]
        base = choose_action(EXPERT, base_row, st.arrays(), rv, 0, seat, mask, k, np.uint64(key),
                             np.zeros(1, dtype=np.int64))
        strict = act(rows[0.0], st.copy(), seat, key)
        if base != L.A_CALL:
            assert strict != L.A_CALL
            tally["base_passes"] += 1
            tally["extra"] += int(act(rows[1.0], st.copy(), seat, key) == L.A_CALL)
        tally["windows"] += 1

    _play_to_decisions("caribbean", 4, 12, 0, rng, check)
    assert tally["base_passes"] >= 10
    assert tally["extra"] > 0, "the search never called where its base passed: the test could not fail"


def test_search_call_zero_leaves_call_windows_and_allow_deny_to_the_base():
    """``search_call = 0`` (the ablation of docs/search.md): at a call window or an allow/deny the
    search plays its base's action, while draws are still searched; with ``search_call = 1`` it
    departs from the base at some of those windows (so the check can fail)."""
    rv = _rv("caribbean")
    rng = np.random.default_rng(8)
    mask = np.zeros(L.N_ACTIONS, dtype=np.bool_)
    rows = {x: _row(worlds=3, candidates=3, confidence=0.0, extra_calls=1.0, search_call=x) for x in (0.0, 1.0)}
    base_row = rows[0.0][:len(default_params(EXPERT))]
    tally = {"windows": 0, "departs": 0}

    def act(row, st, seat, key):
        return _search_at(row, st, rv, seat, mask, key)

    def check(st, seat):
        if st.gs[0, L.G_PHASE] not in (L.PH_CALL, L.PH_ALLOW) or tally["windows"] >= 60:
            return
        k = core.legal_mask(st.arrays(), rv, 0, mask)
        key = 700 + tally["windows"]
        base = choose_action(EXPERT, base_row, st.arrays(), rv, 0, seat, mask, k, np.uint64(key),
                             np.zeros(1, dtype=np.int64))
        assert act(rows[0.0], st.copy(), seat, key) == base, int(st.gs[0, L.G_PHASE])
        tally["departs"] += int(act(rows[1.0], st.copy(), seat, key) != base)
        tally["windows"] += 1

    _play_to_decisions("caribbean", 4, 12, 0, rng, check)
    assert tally["windows"] >= 20
    assert tally["departs"] > 0, "the search never departed at a call window: the test could not fail"


def _paired_reference(value, c, used):
    d = value[c, :used] - value[0, :used]
    return d.mean(), (d.std(ddof=1) / math.sqrt(used) if used > 1 else 0.0)


def test_choice_and_adaptive_stop_against_their_definitions():
    """Differential: ``_choose`` (the best mean among candidates at least z standard errors above
    the base's action, paired over the first ``used`` worlds; else the base) and ``_settled``
    (every candidate at least z standard errors from the base, or with no spread) against numpy, on
    thousands of random value tables like rollouts give (wins 0/1 plus penalty terms, ties)."""
    from kalooki_sim.agents.search import _choose, _settled

    rng = np.random.default_rng(11)
    stops = checked = 0
    for _ in range(3000):
        nc, worlds = int(rng.integers(2, 7)), int(rng.integers(2, 40))
        value = rng.integers(0, 2, size=(nc, worlds)) + 0.25 * rng.integers(-3, 4, size=(nc, worlds)) / 10
        if rng.random() < 0.3:
            value[int(rng.integers(1, nc))] = value[0]                  # a candidate no world tells apart
        used, z = int(rng.integers(2, worlds + 1)), float(rng.choice([0.0, 1.0, 2.0]))
        stats = [_paired_reference(value, c, used) for c in range(nc)]
        means = [m for m, _ in stats[1:]]
        if any(abs(abs(m) - z * se) < 1e-9 and se > 0 for m, se in stats[1:]) or any(
                abs(means[i] - means[j]) < 1e-9 for i in range(len(means)) for j in range(i)):
            continue                            # on a boundary: float rounding decides, not the rule
        checked += 1
        best, best_mean = 0, 0.0
        for c in range(1, nc):
            mean, se = stats[c]
            if mean > best_mean and mean > z * se:
                best, best_mean = c, mean
        assert _choose(value, used, z) == best
        settled = all(se == 0.0 or abs(mean) > z * se for mean, se in stats[1:])
        assert _settled(value, used, z) == settled
        stops += settled
    assert checked > 2500 and 300 < stops < checked - 300


def test_hand_value():
    """Single hands: going out first, then the penalty difference; Caribbean matches: the chance
    of the lowest total, which a lead raises and the hands still to play soften."""
    rv = _rv("caribbean")
    st = State.empty(1)
    gs, ps = st.gs, st.ps
    gs[0, L.G_NP] = 3
    gs[0, L.G_HAND_WINNER] = 0
    ps[0, :3, L.PS_TOTAL] = [0, 40, 60]
    before = np.zeros(L.P_MAX, dtype=np.int64)
    row = _row(penalty_weight=1.0, match_sigma=30.0)
    assert hand_value(row, rv, gs, ps, 0, 0, before, False) == pytest.approx(1.0 + 0.5)
    assert hand_value(row, rv, gs, ps, 0, 1, before, False) == pytest.approx((30 - 40) / 100)
    gs[0, L.G_LAST_HAND] = 8                              # a match: the totals decide
    gs[0, L.G_HAND_NO] = 8
    last = hand_value(row, rv, gs, ps, 0, 0, before, True)
    gs[0, L.G_HAND_NO] = 2
    early = hand_value(row, rv, gs, ps, 0, 0, before, True)
    assert 0.9 < last <= 1.0 and 0.3 < early < last
    assert hand_value(row, rv, gs, ps, 0, 2, before, True) < hand_value(row, rv, gs, ps, 0, 1, before, True) < early
    assert hand_value(_row(penalty_weight=1.0), rv, gs, ps, 0, 0, before, True) == pytest.approx(1.5)  # sigma 0


def _calls_worth_reference(value, rate, hands_after, left):
    """E[min(N, left)] for N ~ Poisson(rate * hands_after), by the definition, times ``value``."""
    if value <= 0 or hands_after <= 0 or left <= 0:
        return 0.0
    m = rate * hands_after
    pmf = [math.exp(j * math.log(m) - m - math.lgamma(j + 1)) if m > 0 else float(j == 0) for j in range(200)]
    return value * sum(min(j, left) * p for j, p in enumerate(pmf))


def test_calls_worth_against_its_definition():
    """The calls a seat has left are worth ``call_value * E[min(N, left)]`` in the hands to come;
    nothing where calls are free: no hands after this one, none left, a limit per hand, no calls."""
    from kalooki_sim.agents.search import calls_worth
    from kalooki_sim.core.rulevec import CALLS_LIMIT_SCOPE_HAND, R_CALLS_LIMIT_SCOPE

    rv = _rv("caribbean")
    st = State.empty(1)
    gs, ps = st.gs, st.ps
    gs[0, L.G_NP] = 4
    gs[0, L.G_LAST_HAND] = 8
    limit = int(load_rules("caribbean").max_calls_per_player)
    rng = np.random.default_rng(5)
    for _ in range(400):
        value, rate = float(rng.choice([0.0, 3.0, 12.5])), float(rng.uniform(0.0, 2.0))
        hand, used = int(rng.integers(0, 9)), int(rng.integers(0, limit + 1))
        gs[0, L.G_HAND_NO] = hand
        ps[0, 1, L.PS_CALLS] = used
        row = _row(call_value=value, call_rate=rate)
        want = _calls_worth_reference(value, rate, 8 - hand, limit - used)
        assert calls_worth(row, rv, gs, ps, 0, 1) == pytest.approx(want, rel=1e-9, abs=1e-12)
    gs[0, L.G_HAND_NO], ps[0, 1, L.PS_CALLS] = 0, 0
    row = _row(call_value=10.0, call_rate=0.5)
    assert calls_worth(row, rv, gs, ps, 0, 1) > 0
    per_hand = rv.copy()
    per_hand[R_CALLS_LIMIT_SCOPE] = CALLS_LIMIT_SCOPE_HAND
    assert calls_worth(row, per_hand, gs, ps, 0, 1) == 0.0
    assert calls_worth(row, _rv("k40"), gs, ps, 0, 1) == 0.0


def test_a_call_spent_in_a_match_costs_the_value_of_the_calls_left():
    """Two ends of a match's hand that differ only in a call the searching seat spent: with
    ``call_value`` the spent call lowers the hand's value by what it would have saved later; in a
    single hand, or with ``call_value = 0``, it costs nothing."""
    from kalooki_sim.agents.search import calls_worth

    rv = _rv("caribbean")
    st = State.empty(1)
    gs, ps = st.gs, st.ps
    gs[0, L.G_NP], gs[0, L.G_HAND_WINNER] = 3, 1
    gs[0, L.G_LAST_HAND], gs[0, L.G_HAND_NO] = 8, 2
    ps[0, :3, L.PS_TOTAL] = [30, 0, 50]
    before = np.zeros(L.P_MAX, dtype=np.int64)
    row = _row(penalty_weight=1.0, call_value=10.0, call_rate=0.5)
    kept = hand_value(row, rv, gs, ps, 0, 0, before, True)
    worth_kept = calls_worth(row, rv, gs, ps, 0, 0)
    ps[0, 0, L.PS_CALLS] = 1
    spent = hand_value(row, rv, gs, ps, 0, 0, before, True)
    worth_spent = calls_worth(row, rv, gs, ps, 0, 0)
    assert worth_kept > worth_spent
    assert kept - spent == pytest.approx((worth_kept - worth_spent) / 100)
    assert hand_value(row, rv, gs, ps, 0, 0, before, False) == hand_value(_row(penalty_weight=1.0, call_value=0.0),
                                                                           rv, gs, ps, 0, 0, before, False)
    free = _row(penalty_weight=1.0, call_value=0.0)
    assert hand_value(free, rv, gs, ps, 0, 0, before, True) == hand_value(free, rv, gs, ps, 0, 0, before, False)
    sig = _row(penalty_weight=1.0, call_value=10.0, call_rate=0.5, match_sigma=30.0)
    ps[0, 0, L.PS_CALLS] = 0
    v_kept = hand_value(sig, rv, gs, ps, 0, 0, before, True)
    ps[0, 0, L.PS_CALLS] = 1
    assert hand_value(sig, rv, gs, ps, 0, 0, before, True) < v_kept


def test_a_single_hand_of_any_round_is_not_a_match():
    """A tournament's single hand of round r is dealt as a one-hand match starting at hand r: the
    search must score it as a hand (who goes out), not as the last hand of a match."""
    from kalooki_sim.runtime.game import Game

    rules = load_rules("caribbean")
    for r in (0, 4, 8):
        g = Game(rules, 4, seed=1, game_id=r, first_hand=r, n_hands=1)
        assert not in_match(g.state.gs, 0), r
    g = Game(rules, 4, seed=1, game_id=0)                  # a whole match: every hand is a match's
    assert in_match(g.state.gs, 0)
    st = State.empty(1)
    st.gs[0, L.G_HAND_NO] = st.gs[0, L.G_LAST_HAND] = 8
    st.gs[0, L.G_HANDS_DONE] = 8                          # the last hand of a match
    assert in_match(st.gs, 0)


def test_named_search_strategies_take_their_base():
    for name, base in (("search-caribbean", "sharp-caribbean"), ("search-k40", "sharp-k40"), ("search-sharp", "sharp")):
        s, b = load_strategy(name), load_strategy(base)
        assert s.agent == "search"
        assert s.params[:len(b.params)] == b.params


# ------------------------------------------------------------------------------------------------
# played from Python through the env (a driven agent): the commands seat it like a learned agent

TINY = 'agent = "search"\nbase = "sharp-caribbean"\n[params]\nworlds = 2\ncandidates = {k}\n'


def _tiny(tmp_path, k):
    path = tmp_path / f"search-tiny-{k}.toml"
    path.write_text(TINY.format(k=k))
    return str(path)


def test_a_search_of_one_candidate_plays_its_base_strategys_closed_loop_games(tmp_path):
    """With one candidate the search plays its base's action on the seat's own stream, so the env's
    driven seat must play the very games the closed loop plays with the base in that seat."""
    from kalooki_sim.runtime.policy_play import play_policies
    from kalooki_sim.runtime.rollout import simulate
    from kalooki_sim.runtime.strategies import learned_policy, lineup

    rules = load_rules("caribbean")
    pol = learned_policy(_tiny(tmp_path, 1), rules)
    others = ["greedy", "random", "sharp-caribbean"]
    mine = play_policies(rules, 4, [pol] + others, 12, seed=3, batch=5)
    _, ids, params = lineup(["sharp-caribbean"] + others)
    ref = simulate(rules, 4, list(ids), params, 12, 3)
    for k in ("game_id", "seat", "penalty", "won"):
        np.testing.assert_array_equal(mine[k], ref[k], err_msg=k)
    assert (mine["policy_id"][mine["seat"] == 0] == -1).all()


def test_search_seats_play_the_same_games_in_any_batch(tmp_path):
    from kalooki_sim.runtime.policy_play import play_schedule
    from kalooki_sim.runtime.strategies import learned_policy

    rules = load_rules("caribbean")
    pol = learned_policy(_tiny(tmp_path, 2), rules)
    entrants = [pol, "greedy", "sharp-caribbean"]
    games = np.array([4, 4, 7], dtype=np.int64)
    seatings = np.array([[0, 1, 2], [1, 2, 0], [2, 0, 1]], dtype=np.int64)
    big = play_schedule(rules, 3, entrants, seatings, games, seed=2)
    small = play_schedule(rules, 3, entrants, seatings, games, seed=2, batch=1)
    for k in big:
        np.testing.assert_array_equal(big[k], small[k], err_msg=k)


def test_the_commands_seat_a_search_strategy(tmp_path, capsys):
    import io

    import pandas as pd

    from kalooki_sim.cli import main
    from kalooki_sim.runtime.play import PlaySession

    tiny = _tiny(tmp_path, 2)
    assert main(["simulate", "--agents", f"{tiny},greedy,greedy,random", "--hands", "4", "--out",
                 str(tmp_path / "sim"), "--quiet"]) == 0
    hands = pd.concat(pd.read_parquet(p) for p in (tmp_path / "sim" / "hands").glob("*.parquet"))
    assert len(hands) == 16 and (hands.loc[hands.seat == 0, "policy_id"] == -1).all()
    assert main(["tournament", "--agents", f"{tiny},greedy,random", "--deals", "2", "--out", str(tmp_path / "t"),
                 "--quiet"]) == 0
    assert "search-tiny-2" in capsys.readouterr().out
    out = io.StringIO()
    PlaySession("caribbean", [tiny, "greedy"], seat=1, seed=1, hands=1, hint_agent=tiny,
                input=io.StringIO("hint\n" + "1\n" * 600), output=out).run()
    text = out.getvalue()
    assert "hint (search-tiny-2):" in text and "game over" in text


def test_the_closed_loop_refuses_a_driven_agent():
    from kalooki_sim.runtime.rollout import simulate

    with pytest.raises(ValueError, match="played from Python through the env"):
        simulate(load_rules("caribbean"), 4, ["search", "greedy", "greedy", "greedy"], None, 2, 0)
