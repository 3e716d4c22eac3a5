"""The lockstep environment (kalooki_sim.runtime.env) and its observation (kalooki_sim.agents.observation).

* information sets: re-dealing what the deciding seat cannot see (the other hands, the stock)
  never moves its observation, in every phase of every preset, while changing its own hand does;
* closed loop == lockstep: with compiled agents in every seat (the learner seat played by asking
  the compiled agent, ``compiled_actions``) the environment plays exactly the games of
  ``rollout.simulate`` for the same seeds: the same per-hand (and per-match) rows;
* bad actions raise ``IllegalActionError`` naming the action, and apply nothing.

One environment kernel serves every test (compiled once per session, cached after).
"""

from __future__ import annotations

import numpy as np
import pytest

from kalooki_sim import load_rules
from kalooki_sim.agents.observation import SECTIONS, WORK_LEN
from kalooki_sim.core.rulevec import R_ACE_HIGH, R_ACE_LOW, R_PENALTY, R_SET_ALLOW_DUPLICATE_SUIT
from kalooki_sim.engine import layout as L
from kalooki_sim.melds.positions import pos_type
from kalooki_sim.runtime.env import N_ACTIONS, OBS_DIM, OBS_VERSION, IllegalActionError, KalookiVecEnv, encode_rows
from kalooki_sim.runtime.rollout import simulate
from kalooki_sim.runtime.strategies import lineup as resolve

PRESETS = ("caribbean", "k40", "k51", "k101", "na15", "american")
PHASES = {L.PH_CALL: "call", L.PH_ALLOW: "allow", L.PH_DRAW: "draw", L.PH_PLAY: "play", L.PH_UPSWAP: "upswap"}


def _encode(env, st, sheet, ctx):
    out = np.zeros((env.batch, OBS_DIM), dtype=np.float32)
    encode_rows(st.arrays(), env.rv, sheet, ctx, env.mask, np.full(env.batch, -1, dtype=np.int64),
                np.zeros((env.batch, WORK_LEN), dtype=np.int64), out)
    return out


def _redeal(st, b: int, rng) -> bool:
    """Shuffle the cards row ``b``'s deciding seat cannot see (the other seats' hands, less the
    cards each is known to hold, and the stock) among those places, keeping every hand's size and
    its known cards; True if a hand changed."""
    seat = int(st.gs[b, L.G_TO_ACT])
    n = int(st.gs[b, L.G_NP])
    others = [i for i in range(n) if i != seat]
    ns = int(st.gs[b, L.G_STOCK_N])
    pool = list(st.stock[b, :ns].astype(np.int64))
    sizes = []
    for i in others:
        hidden = st.hands[b, i].astype(np.int64) - st.shown[b, i]
        sizes.append(int(hidden.sum()))
        pool += list(np.repeat(np.arange(L.N_TYPES), hidden))
    pool = rng.permutation(np.array(pool, dtype=np.int64))
    before = st.hands[b].copy()
    k = 0
    for i, size in zip(others, sizes):
        st.hands[b, i] = st.shown[b, i] + np.bincount(pool[k:k + size], minlength=L.N_TYPES)
        k += size
    st.stock[b, :ns] = pool[k:]
    return not np.array_equal(before, st.hands[b])


def _copy_state(env):
    st = env.la.state
    return type(st)(*(a.copy() for a in st.arrays()))


@pytest.mark.parametrize("preset", PRESETS)
def test_observation_never_reads_hidden_cards(preset):
    """At every learner decision of random-learner games against greedy and random seats, the
    observation re-encoded after a re-deal of the hidden cards equals the one the env returned,
    in every phase the variant has (calls and the upcard swap only where its rules have them); swapping one card of the seat's own
    hand with the stock does move it (the check can fail)."""
    rules = load_rules(preset)
    n = max(rules.players_min, 3)
    env = KalookiVecEnv(rules, n, batch=16, lineup=["learner", "greedy", "random"] + ["greedy"] * (n - 3),
                        seed=11, rotate=True)
    obs, mask, info = env.reset()
    rng = np.random.default_rng(5)
    seen = {ph: 0 for ph in PHASES}
    changed = moved_own = shown = 0
    for step in range(400):
        st = env.la.state
        shown += int((st.shown.sum(axis=(1, 2)) > 0).sum())   # rows where the known cards matter
        same = _encode(env, st, env.la.sheet, env.la.ctx)
        np.testing.assert_array_equal(same, obs)            # the env's obs is the encoder's
        hid = _copy_state(env)
        own = _copy_state(env)
        for b in range(env.batch):
            changed += _redeal(hid, b, rng)
            seat = int(own.gs[b, L.G_TO_ACT])
            ns = int(own.gs[b, L.G_STOCK_N])
            held = np.flatnonzero(own.hands[b, seat])
            if ns and held.size:
                x = int(own.stock[b, 0])
                t = int(held[0])
                if x != t:
                    own.hands[b, seat, t] -= 1
                    own.hands[b, seat, x] += 1
                    own.stock[b, 0] = t
        after = _encode(env, hid, env.la.sheet, env.la.ctx)
        for b in range(env.batch):
            ph = int(st.gs[b, L.G_PHASE])
            assert ph in PHASES, ph
            seen[ph] += 1
            if not np.array_equal(after[b], obs[b]):
                diff = np.flatnonzero(after[b] != obs[b])
                where = [name for name, (o, w) in SECTIONS.items() if any(o <= d < o + w for d in diff)]
                pytest.fail(f"{preset}: row {b} phase {PHASES[ph]}: re-dealing hidden cards moved the "
                            f"observation at {diff[:8]} (sections {where})")
        mine = _encode(env, own, env.la.sheet, env.la.ctx)
        moved_own += int((mine != obs).any(axis=1).sum())
        obs, mask, rew, done, info = env.step(env.random_actions(rng))
        want = {L.PH_DRAW, L.PH_PLAY}
        if rules.calls_enabled:
            want |= {L.PH_CALL, L.PH_ALLOW}
        if rules.dealer_may_swap_upcard:
            want.add(L.PH_UPSWAP)
        if step >= 50 and shown >= 20 and all(seen[ph] >= 3 for ph in want):
            break
    missing = [PHASES[ph] for ph in want if seen[ph] < 3]
    assert not missing, f"{preset}: phases never reached by the learner: {missing} ({seen})"
    assert changed > 0 and moved_own > 0 and shown >= 20


@pytest.mark.parametrize("preset,n,episode,extra", [
    ("caribbean", 4, "hand", {}),
    ("caribbean", 3, "match", {"hands_per_match": 3}),
    ("k40", 5, "match", {"max_hands": 6}),
    ("k101", 4, "hand", {}),
    ("na15", 2, "hand", {}),
    ("american", 6, "match", {"hands_per_match": 2}),
    ("k51", 3, "hand", {}),
    ("caribbean", 4, "hand", {"lineup": ["sharp-caribbean", "greedy", "random", "sharp"]}),
    ("k40", 4, "match", {"max_hands": 5, "lineup": ["sharp", "expert", "greedy", "counting"]}),
])
def test_env_with_compiled_agents_plays_the_closed_loop_games(preset, n, episode, extra):
    """Learner seat(s) answered by the compiled agent that ``simulate`` seats there (named
    strategies with their parameter rows too): the same per-hand rows (and per-match rows), game
    for game, whatever the batch (7 rows, 23 games)."""
    rules = load_rules(preset)
    lineup = extra.get("lineup") or ["greedy", "random", "greedy", "greedy", "random", "greedy"][:n]
    learner = ["learner"] + lineup[1:]
    learner[n - 1] = "learner"                  # two learner seats: seat 0 and the last
    games, seed = 23, 7
    env = KalookiVecEnv(rules, n, batch=7, lineup=learner, episode=episode, seed=seed, keep_rows=games,
                        hands_per_match=extra.get("hands_per_match"), max_hands=extra.get("max_hands"))
    env.reset()
    while (env.game_id < games).any():
        who = [lineup[int(p)] for p in env.seat]
        env.step(env.compiled_actions(who))
    mode = "hands" if episode == "hand" else "matches"
    _, ids, params = resolve(lineup)
    want = simulate(rules, n, list(ids), params, games, seed, mode=mode, hands_per_game=extra.get("hands_per_match"),
                    max_hands=extra.get("max_hands"))
    got = env.result_rows()
    if mode == "hands":
        want, got = (want,), (got,)
    for w, g in zip(want, got):
        assert set(w) == set(g)
        assert len(w["game_id"]) > 0
        for k in w:
            if k == "policy_id":
                continue
            np.testing.assert_array_equal(g[k], w[k], err_msg=f"{preset}: column {k}")
        learner_rows = np.isin(w["seat"], [0, n - 1])
        assert (g["policy_id"][learner_rows] == -1).all()
        np.testing.assert_array_equal(g["policy_id"][~learner_rows], w["policy_id"][~learner_rows])


def test_bad_actions_raise_a_clear_error_and_apply_nothing():
    env = KalookiVecEnv("caribbean", 4, batch=4, seed=3)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(4, dtype=np.int64))
    obs, mask, info = env.reset()
    before = [a.copy() for a in env.la.state.arrays()]
    legal = env.random_actions(np.random.default_rng(0))
    bad = legal.copy()
    bad[2] = int(np.flatnonzero(~mask[2])[0])
    with pytest.raises(IllegalActionError, match=rf"illegal action {bad[2]} in row 2 .*is not legal here"):
        env.step(bad)
    bad[2] = N_ACTIONS + 5
    with pytest.raises(IllegalActionError, match=rf"illegal action {N_ACTIONS + 5} in row 2 .*not an action id"):
        env.step(bad)
    bad[2] = -1
    with pytest.raises(IllegalActionError, match="illegal action -1 in row 2"):
        env.step(bad)
    with pytest.raises(IllegalActionError, match="integers"):
        env.step(legal.astype(np.float64))
    with pytest.raises(ValueError, match="one action per row"):
        env.step(legal[:3])
    for a, b in zip(before, env.la.state.arrays()):
        np.testing.assert_array_equal(a, b)                 # nothing was applied
    obs, mask, rew, done, info = env.step(legal)            # and the env goes on
    assert obs.shape == (4, OBS_DIM) and mask.shape == (4, N_ACTIONS) and rew.shape == (4, L.P_MAX)


def test_arrays_rewards_and_autoreset():
    """Fixed shapes and dtypes; a hand episode pays 1 to its winner in the step it ends (same-step
    autoreset: the returned decision is already the next game's); results keep the last episode."""
    env = KalookiVecEnv("caribbean", 4, batch=8, seed=2, lineup=["learner", "greedy", "learner", "greedy"])
    obs, mask, info = env.reset()
    assert OBS_VERSION >= 1 and obs.dtype == np.float32 and mask.dtype == np.bool_
    assert env.metadata["autoreset_mode"] == "same_step"
    rng = np.random.default_rng(1)
    ends = 0
    for _ in range(300):
        gid = env.game_id.copy()
        obs, mask, rew, done, info = env.step(env.random_actions(rng))
        assert mask.any(axis=1).all()
        assert set(np.unique(info["seat"])) <= {0, 2}
        assert (rew[~done] == 0).all()
        assert (rew[done].sum(axis=1) <= 1).all()
        assert (env.game_id[done] > gid[done]).all() and (env.game_id[~done] == gid[~done]).all()
        ends += int(done.sum())
    assert ends > 0
    assert env.nbytes() > 0


@pytest.mark.parametrize("preset,answer", [("caribbean", "greedy"), ("american", "random"), ("k40", "random")])
def test_pile_take_tally_follows_every_take(preset, answer):
    """``engine.context.CX_TAKEN`` (the observation's "taken from the pile" sets): with every seat a learner
    every action passes through here, so a Python mirror of the rule (top discard to the drawer,
    the denier, the allowed caller, the dealer swapping the upcard; cleared at every deal) must
    agree after every step; calls, denials and upcard swaps all happen in these games.  The env
    runs with ``check=True`` here: the engine's invariants hold after every action."""
    from kalooki_sim.engine.context import CX_TAKEN

    rules = load_rules(preset)
    n = 4
    length = {"max_hands": 2} if rules.match_mode == "elimination_pool" else {"hands_per_match": 2}
    env = KalookiVecEnv(rules, n, batch=12, lineup=["learner"] * n, seed=9, episode="match", check=True, **length)
    env.reset()
    rng = np.random.default_rng(2)
    mirror = np.zeros((env.batch, L.P_MAX), dtype=np.int64)
    kinds = set()
    for _ in range(1500):
        st = env.la.state
        a = env.compiled_actions(answer) if answer != "random" else env.random_actions(rng)
        deal = st.gs[:, L.G_DEAL_NO].copy()
        for b in range(env.batch):
            ph, nd = int(st.gs[b, L.G_PHASE]), int(st.gs[b, L.G_DISC_N])
            who = -1
            if ph == L.PH_UPSWAP and a[b] != L.A_PASS:
                who, kind = int(st.gs[b, L.G_TO_ACT]), "upswap"
            elif ph != L.PH_UPSWAP and a[b] in (L.A_DRAW_DISCARD, L.A_DENY):
                who, kind = int(st.gs[b, L.G_ACTIVE]), int(a[b])
            elif ph != L.PH_UPSWAP and a[b] == L.A_ALLOW:
                who, kind = int(st.gs[b, L.G_CALLER]), "allow"
            if who >= 0 and nd > 0 and st.disc[b, nd - 1] >= 0:
                mirror[b, who] |= 1 << int(st.disc[b, nd - 1])
                kinds.add(kind)
        _, _, _, done, _ = env.step(a)
        new_deal = done | (env.la.state.gs[:, L.G_DEAL_NO] != deal)
        mirror[new_deal] = 0
        keep = ~new_deal
        np.testing.assert_array_equal(env.la.ctx[keep, CX_TAKEN:CX_TAKEN + L.P_MAX], mirror[keep])
        mirror[new_deal] = env.la.ctx[new_deal, CX_TAKEN:CX_TAKEN + L.P_MAX]
    want = {L.A_DRAW_DISCARD}
    if rules.calls_enabled:
        want |= {L.A_DENY, "allow"}
    if rules.dealer_may_swap_upcard:
        want.add("upswap")
    assert want <= kinds, kinds


def test_mask_and_legal_lists_are_the_engines():
    """The env's mask (kept by clearing the previous decision's legal ids and setting the new ones)
    is the engine's legal mask of the position at every step, with two rows per lane and a random
    seat using the lane's mask as its own scratch; ``legal_ids[b, :n_legal[b]]`` lists exactly its
    legal ids, so the random learner picking from them plays legal actions only."""
    from kalooki_sim.engine.core import legal_mask

    env = KalookiVecEnv("caribbean", 5, batch=8, seed=4, lanes=4,
                        lineup=["learner", "greedy", "random", "learner", "greedy"])
    obs, mask, info = env.reset()
    rng = np.random.default_rng(3)
    truth = np.zeros(N_ACTIONS, dtype=np.bool_)
    arrays = env.la.state.arrays()
    for _ in range(300):
        for b in range(env.batch):
            legal_mask(arrays, env.rv, b, truth)
            np.testing.assert_array_equal(mask[b], truth)
            np.testing.assert_array_equal(env.legal_ids[b, :env.n_legal[b]], np.flatnonzero(mask[b]))
        obs, mask, *_ = env.step(env.random_actions(rng))
    assert not mask.flags.writeable


def test_step_observation_is_the_full_encoding():
    """The env's kernel rewrites only the meld slots used now or at the row's previous decision
    (``observation.encode``): at every step of whole matches (tables filling and cleared at each
    deal) its ``obs`` equals a full encoding into zeros, and users get it read-only."""
    env = KalookiVecEnv("caribbean", 4, batch=6, seed=8, episode="match",
                        lineup=["learner", "greedy", "learner", "sharp"])
    obs, mask, _ = env.reset()
    rng = np.random.default_rng(2)
    st = env.la.state
    most = 0
    for _ in range(1500):
        np.testing.assert_array_equal(obs, _encode(env, st, env.la.sheet, env.la.ctx))
        most = max(most, int(st.gs[:, L.G_N_MELDS].max()))
        obs, mask, *_ = env.step(env.random_actions(rng))
    assert most >= 4
    assert not obs.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        obs[0, 0] = 1.0


def test_list_legal_matches_flatnonzero():
    """The word-at-a-time listing of a mask (``env_kernels.list_legal``) against numpy, on random
    masks of every density, the last ids (the tail after the last whole word) included."""
    from kalooki_sim.runtime.env_kernels import list_legal

    rng = np.random.default_rng(11)
    ids = np.zeros(N_ACTIONS, dtype=np.int16)
    for density in (0.0, 0.001, 0.01, 0.3, 1.0):
        for _ in range(50):
            mask = rng.random(N_ACTIONS) < density
            mask[-int(rng.integers(1, 4)):] = rng.random() < 0.5     # the tail set or not
            n = list_legal(mask, ids)
            np.testing.assert_array_equal(ids[:n], np.flatnonzero(mask))


def test_lanes_change_nothing():
    """How many lanes share the compiled seats' decision scratch (``lanes``: one per thread by
    default) never changes a game: 1 and 4 lanes give the same arrays at every step."""
    lineup = ["learner", "greedy", "sharp", "learner"]
    envs = [KalookiVecEnv("caribbean", 4, batch=10, seed=2, lineup=lineup, lanes=k)
            for k in (1, 4)]
    out = [e.reset() for e in envs]
    rng = np.random.default_rng(5)
    for _ in range(400):
        np.testing.assert_array_equal(out[0][0], out[1][0])
        np.testing.assert_array_equal(out[0][1], out[1][1])
        a = envs[0].random_actions(rng)
        out = [e.step(a) for e in envs]
        for x, y in zip(out[0][2:4], out[1][2:4]):
            np.testing.assert_array_equal(x, y)
    assert envs[1].la.known.shape[0] == 4
    with pytest.raises(ValueError, match="lanes"):
        KalookiVecEnv("caribbean", 4, batch=2, lanes=3)


def test_match_rewards_are_the_match_win_shares():
    """``reward="match"``: nothing until a match ends, then each player's match win share (the
    same as the finished episode's ``results``); hand wins add up in ``results`` too."""
    from kalooki_sim.runtime.env import RES_COLUMNS

    env = KalookiVecEnv("caribbean", 3, batch=6, seed=5, episode="match", reward="match", hands_per_match=2,
                        lineup=["learner", "greedy", "greedy"], rotate=True)
    env.reset()
    rng = np.random.default_rng(4)
    ended = 0
    mwin, won = RES_COLUMNS.index("match_win_share"), RES_COLUMNS.index("hands_won")
    while ended < 12:
        obs, mask, rew, done, info = env.step(env.random_actions(rng))
        assert (rew[~done] == 0).all()
        for b in np.flatnonzero(done):
            np.testing.assert_allclose(rew[b, :3], env.results[b, mwin, :3])
            assert abs(rew[b].sum() - 1.0) < 1e-6            # Caribbean: lowest total wins (ties share)
            assert env.results[b, won, :3].sum() <= 2
            ended += 1


def test_state_dict_resumes_the_same_games():
    """An env restored from ``state_dict`` into a fresh env goes on exactly as the original."""
    a = KalookiVecEnv("k40", 4, batch=5, seed=8, episode="match", max_hands=4)
    a.reset()
    rng = np.random.default_rng(1)
    for _ in range(40):
        a.step(a.random_actions(rng))
    saved = a.state_dict()
    b = KalookiVecEnv("k40", 4, batch=5, seed=0, episode="match", max_hands=4)
    b.load_state_dict(saved)
    for _ in range(200):
        act = a.random_actions(np.random.default_rng(_))
        ra = [x.copy() for x in a.step(act)[:4]]
        rb = b.step(act)[:4]
        for x, y in zip(ra, rb):
            np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match="other arguments"):
        KalookiVecEnv("k40", 4, batch=6).load_state_dict(saved)


def test_lay_section_is_the_offered_lay_down():
    """Observation version 2: when the deciding seat may lay down (``A_LAY`` in its mask), the lay
    section holds the cards plan 0 puts down (a part of its own hand, at least three cards);
    otherwise it is empty."""
    from kalooki_sim.agents.observation import SECTIONS, WORK_LEN

    o, w = SECTIONS["lay"]
    env = KalookiVecEnv("caribbean", 4, batch=32, seed=6, lineup=["learner", "greedy", "greedy", "greedy"])
    obs, mask, info = env.reset()
    hand_o = SECTIONS["hand"][0]
    seen = 0
    for _ in range(400):
        lay = obs[:, o:o + w] * 2
        can = mask[:, L.A_LAY]
        assert (lay[~can] == 0).all()
        for b in np.flatnonzero(can):
            hand = obs[b, hand_o:hand_o + L.N_TYPES] * 2
            assert lay[b].sum() >= 3 and (lay[b] <= hand).all()
            seen += 1
        a = np.where(can, L.A_LAY, env.random_actions(np.random.default_rng(_)))
        obs, mask, *_ = env.step(a)
    assert seen > 0


def _py_usefulness(hands, rv, g, seat, t, held, gapw):
    """``card_usefulness`` from its definition: the other suits of the rank held (the own suit's
    second copy where sets may repeat a suit), then the same-suit neighbours one rank away (1
    each) and two ranks away (``gapw`` each), an ace at whichever ends the rules allow."""
    s, r = divmod(t, 13)
    n_one = sum(1 for s2 in range(4)
                if hands[g, seat, s2 * 13 + r] - (held if s2 == s else 0) > 0
                and (s2 != s or rv[R_SET_ALLOW_DUPLICATE_SUIT]))
    positions = ([1] if rv[R_ACE_LOW] else []) + ([14] if rv[R_ACE_HIGH] else []) if r == 0 else [r + 1]
    allowed = set(range(2, 14)) | ({1} if rv[R_ACE_LOW] else set()) | ({14} if rv[R_ACE_HIGH] else set())
    n_gap = 0
    for q in positions:
        for d in (-2, -1, 1, 2):
            if q + d in allowed and hands[g, seat, pos_type(s, q + d)] > 0:
                n_one += abs(d) == 1
                n_gap += abs(d) == 2
    return n_one + gapw * n_gap


@pytest.mark.parametrize("preset", ["caribbean", "k40", "american"])
def test_cards_section_matches_definitions(preset):
    """The observation's ``cards`` section and the top discard's scalars, at learner decisions of
    random-learner games, equal the measures computed from their definitions (the shortfall by
    removing or adding the card and asking ``contract_shortfall`` again; usefulness, live
    potential and feed share by the slow definitions of tests/test_expert.py)."""
    from test_expert import _py_feed, _py_live, _py_seen

    from kalooki_sim.agents.measures import contract_shortfall
    from kalooki_sim.agents.observation import CF_FEED, CF_HELD, CF_LIVE, CF_PEN, CF_SF_OUT, CF_USE, N_CF

    rules = load_rules(preset)
    rv = np.ascontiguousarray(rules.to_vector(), dtype=np.int64)
    env = KalookiVecEnv(rules, 4, batch=16, lineup=["learner", "greedy", "sharp", "random"], seed=3, rotate=True)
    obs, mask, info = env.reset()
    rng = np.random.default_rng(2)
    o_cards, _ = SECTIONS["cards"]
    o_scal, _ = SECTIONS["scalars"]
    plays = tops = 0
    for _ in range(150):
        st = env.la.state
        A = st.arrays()
        gs, ps, hands, disc = A[0], A[1], A[2], A[4]
        for b in range(env.batch):
            seat = int(gs[b, L.G_TO_ACT])
            contract = rules.opening_mode == "contract" and not ps[b, seat, L.PS_LAID]
            rnd = int(gs[b, L.G_ROUND])
            base = contract_shortfall(hands, rv, b, seat, rnd) if contract else 0
            f = obs[b, o_cards:o_cards + L.N_TYPES * N_CF].reshape(L.N_TYPES, N_CF)
            seen = _py_seen(A, b, seat)
            playing = gs[b, L.G_PHASE] == L.PH_PLAY and seat == gs[b, L.G_ACTIVE]
            want = np.zeros((L.N_TYPES, N_CF), dtype=np.float32)
            for t in range(L.N_TYPES):
                want[t, CF_HELD] = hands[b, seat, t] / 2
                want[t, CF_PEN] = rv[R_PENALTY + t] / 50
                if playing and t < L.JOKER and hands[b, seat, t]:
                    if contract:
                        hands[b, seat, t] -= 1
                        want[t, CF_SF_OUT] = (contract_shortfall(hands, rv, b, seat, rnd) - base) / 2
                        hands[b, seat, t] += 1
                    want[t, CF_USE] = _py_usefulness(hands, rv, b, seat, t, 1, 0.5) / 4
                    want[t, CF_LIVE] = _py_live(rv, seen, t, 0.5) / 3
                    want[t, CF_FEED] = _py_feed(A, rv, b, seat, t)
            np.testing.assert_allclose(f, want, rtol=1e-6, atol=1e-6, err_msg=f"{preset} row {b}")
            plays += playing
            nd = int(gs[b, L.G_DISC_N])
            top = int(disc[b, nd - 1]) if nd else -1
            scal = np.zeros(4, dtype=np.float32)
            scal[0] = base / 10
            if 0 <= top < L.JOKER:
                tops += 1
                if contract:
                    hands[b, seat, top] += 1
                    scal[1] = (contract_shortfall(hands, rv, b, seat, rnd) - base) / 2
                    hands[b, seat, top] -= 1
                scal[2] = _py_usefulness(hands, rv, b, seat, top, 0, 0.5) / 4
                scal[3] = _py_live(rv, seen, top, 0.5) / 3
            np.testing.assert_allclose(obs[b, o_scal + 31:o_scal + 35], scal, rtol=1e-6, atol=1e-6)
        obs, mask, rew, done, info = env.step(env.random_actions(rng))
    assert plays > 100 and tops > 100


def _py_joins_new_meld(hand, rules, c):
    """Slow definition: with natural ``c`` added, does the hand hold a set of its rank (enough
    naturals, jokers making up the size) or a run window of the minimum size through it whose
    missing positions its jokers can fill (not two adjacent ones unless the rules allow)?"""
    h = hand.astype(np.int64).copy()
    h[c] += 1
    jk, rank, suit = int(h[L.JOKER]), c % 13, c // 13
    copies = [int(h[s * 13 + rank]) for s in range(4)]
    n = sum(copies) if rules.set_allow_duplicate_suit else sum(min(x, 1) for x in copies)
    if n >= rules.set_min_naturals and n + jk >= rules.set_min_size:
        return True
    lo_min, hi_max, w = (1 if rules.ace_low else 2), (14 if rules.ace_high else 13), rules.run_min_size
    held = {q for q in range(lo_min, hi_max + 1) if h[pos_type(suit, q)] > 0}
    for p in ([1, 14] if rank == 0 else [rank + 1]):
        if not lo_min <= p <= hi_max:
            continue
        for lo in range(max(lo_min, p - w + 1), min(p, hi_max - w + 1) + 1):
            gaps = [q for q in range(lo, lo + w) if q not in held]
            adjacent = any(b - a == 1 for a, b in zip(gaps, gaps[1:]))
            if len(gaps) <= jk and (rules.run_adjacent_jokers or not adjacent):
                return True
    return False


@pytest.mark.parametrize("preset", ["k40", "caribbean"])
def test_takes_section_matches_its_definition(preset):
    """The observation's ``takes`` section (version 5), at the learner's decisions of games played
    by ``sharp-k40``: while the seat plays its turn in a variant with table manipulation, each
    run's end card and each natural of a four-card set is 1 exactly where the slow definition
    says the card would join a new meld with the hand; 0 everywhere else (and in variants without
    manipulation).  Where the teacher takes a table card, its entry is 1 (it takes by that test)."""
    from kalooki_sim.agents.observation import TAKES_SET

    rules = load_rules(preset)
    env = KalookiVecEnv(rules, 4, batch=32, lineup=["learner", "sharp-k40", "sharp", "sharp-k40"], seed=8, rotate=True)
    obs, mask, info = env.reset()
    o_takes, n_takes = SECTIONS["takes"]
    ones = takes = 0
    for _ in range(400):
        A = env.la.state.arrays()
        gs, hands, minfo, mcards = A.gs, A.hands, A.minfo, A.mcards
        a = env.compiled_actions("sharp-k40")
        for b in range(env.batch):
            seat = int(gs[b, L.G_TO_ACT])
            want = np.zeros(n_takes, dtype=np.float32)
            if rules.table_manipulation and gs[b, L.G_PHASE] == L.PH_PLAY and seat == gs[b, L.G_ACTIVE]:
                for m in range(int(gs[b, L.G_N_MELDS])):
                    kind, ln = minfo[b, m, L.MI_KIND], minfo[b, m, L.MI_LEN]
                    if kind == L.MK_RUN:
                        for side, q in enumerate((minfo[b, m, L.MI_HI], minfo[b, m, L.MI_LO])):
                            c = int(mcards[b, m, q])
                            if c != L.JOKER and _py_joins_new_meld(hands[b, seat], rules, c):
                                want[m * 2 + side] = 1
                    elif kind == L.MK_SET and ln == 4:
                        for q in range(4):
                            c = int(mcards[b, m, q])
                            if c != L.JOKER and _py_joins_new_meld(hands[b, seat], rules, c):
                                want[TAKES_SET + m * 4 + c // 13] = 1
            np.testing.assert_array_equal(obs[b, o_takes:o_takes + n_takes], want, err_msg=f"{preset} row {b}")
            ones += int(want.sum())
            if L.A_TAKE_END <= a[b] < L.A_SPLIT or L.A_SETTAKE <= a[b] < L.A_UPSWAP:
                takes += 1
                slot = a[b] - L.A_TAKE_END if a[b] < L.A_SPLIT else TAKES_SET + a[b] - L.A_SETTAKE
                assert want[slot] == 1
        obs, mask, rew, done, info = env.step(a)
    if rules.table_manipulation:
        assert ones > 50 and takes > 5
    else:
        assert ones == 0


@pytest.mark.parametrize("kw,msg", [
    (dict(episode_games=[]), "episode_games must be a non-empty 1-D array"),
    (dict(episode_games=[[1, 2]]), "episode_games must be a non-empty 1-D array"),
    (dict(episode_games=[1.5]), "episode_games must be a non-empty 1-D array"),
    (dict(episode_games=[-1]), "episode_games must be game ids"),
    (dict(table_streams=[[0, 1, 2]]), "table_streams must be"),
    (dict(table_streams=[[0, 1, 2, -3]]), "table_streams must be stream numbers"),
])
def test_schedule_arguments_are_checked(kw, msg):
    tables = np.array([[-1, 1, 1, 1]], dtype=np.int64)            # -1: the learner seat (EXTERNAL)
    with pytest.raises(ValueError, match=msg):
        KalookiVecEnv("caribbean", 4, batch=2, tables=tables, **kw)


def test_rows_past_the_schedule_park():
    """With ``episode_games`` each scheduled episode is played once: a row whose next episode is
    past the schedule (and every row beyond it at reset) waits undealt, with seat -1, no reward and
    no episode end, whatever action it is given, while the others finish; every episode's result
    is kept."""
    tables = np.array([[-1, 1, 1, 1], [1, -1, 1, 1]], dtype=np.int64)           # -1: the learner seat
    games = np.array([4, 4, 7, 11, 2], dtype=np.int64)
    env = KalookiVecEnv("caribbean", 4, batch=8, tables=tables, episode_games=games, keep_rows=len(games), seed=3)
    obs, mask, info = env.reset()
    rng = np.random.default_rng(0)
    np.testing.assert_array_equal(env.parked, np.arange(8) >= 5)
    assert (info["seat"][5:] == -1).all()
    steps, was = 0, env.parked.copy()
    while not env.parked.all():
        a = env.random_actions(rng)
        a[env.parked] = -7                                  # ignored: any integer
        obs, mask, rew, done, info = env.step(a)
        assert not rew[was].any() and not done[was].any()
        assert (info["seat"][env.parked] == -1).all() and (info["seat"][~env.parked] >= 0).all()
        assert (done[env.parked & ~was]).all()              # a row parks as its episode ends
        was = env.parked.copy()
        steps += 1
    assert 0 < steps < 2000
    rows = env.result_rows(with_rows=True)
    assert sorted(set(rows["batch_row"].tolist())) == list(range(len(games)))
    np.testing.assert_array_equal(np.unique(rows["game_id"]), np.unique(games))
    with pytest.raises(IllegalActionError):
        env2 = KalookiVecEnv("caribbean", 4, batch=8, tables=tables, episode_games=games, seed=3)
        env2.reset()
        bad = env2.random_actions(rng)
        bad[0] = -1                                         # a live row's action is still checked
        env2.step(bad)
