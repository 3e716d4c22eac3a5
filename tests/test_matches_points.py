"""Whole matches of the points variants (K40, K51, K101: elimination and pool; NA15, AMER: paid per
hand) played by compiled agents (rollout.simulate on the match flow), checked against the score sheet rules
(RULES.md §2.2, §2.5, §2.6, §4.8, §6.10) and replayed through the Python ``match_sheet.MatchScore``."""

from functools import lru_cache

import numba
import numpy as np
import pandas as pd
import pytest

from kalooki_sim import load_rules
from kalooki_sim.engine.layout import EV_KALOOKI, EV_TURN_CAP, EV_VOID_CAP, EV_WENT_OUT
from kalooki_sim.engine.match import ST_BOUGHT_BACK, ST_OUT, STATUS_NAMES
from kalooki_sim.engine.match_sheet import HandResult, MatchScore
from kalooki_sim.runtime.rollout import POINTS_HAND_COLUMNS, POINTS_MATCH_COLUMNS, simulate

GGRR = ["greedy", "greedy", "random", "random"]
ELIM = ["k40", "k51", "k101"]
PER_HAND = ["na15", "american"]
N = {"k40": 200, "k51": 200, "k101": 200, "na15": 120, "american": 120}
SEED = 3


@lru_cache(maxsize=None)
def run(variant, seats=tuple(GGRR), n=None, seed=SEED, **kw):
    r = load_rules(variant)
    h, m = simulate(r, len(seats), list(seats), None, N[variant] if n is None else n, seed, mode="matches",
                    **kw)
    return r, pd.DataFrame(h), pd.DataFrame(m)


def _same(a, b):
    assert set(a) == set(b)
    for k in a:
        np.testing.assert_array_equal(np.asarray(a[k]), np.asarray(b[k]), err_msg=k)


# ------------------------------------------------------------------------------------------------
# every preset: matches run to the end, columns and basic bookkeeping


@pytest.mark.parametrize("variant", ELIM + PER_HAND)
def test_matches_run_to_the_end(variant):
    r, h, m = run(variant)
    n = N[variant]
    assert list(h.columns) == list(POINTS_HAND_COLUMNS)
    assert list(m.columns) == list(POINTS_MATCH_COLUMNS)
    assert len(m) == 4 * n and m["game_id"].nunique() == n
    assert (m["finished"] == 1).all()
    # hands_played = rows of that player; match_hands = hands of the match
    hp = h.groupby(["game_id", "seat"]).size()
    np.testing.assert_array_equal(m.set_index(["game_id", "seat"])["hands_played"].loc[hp.index], hp.values)
    mh = h.groupby("game_id")["hand_no"].max() + 1
    np.testing.assert_array_equal(m.groupby("game_id")["match_hands"].first().loc[mh.index], mh.values)
    # each hand's rows: "players" rows, at most one winner, who went out (rip / kalooki)
    per = h.groupby(["game_id", "hand_no"])
    assert (per.size() == per["players"].first()).all()
    wins = per["won"].sum()
    ev = per["end_event"].first()
    assert ((wins == 1) == ev.isin([EV_WENT_OUT, EV_KALOOKI])).all()
    assert ((wins == 0) == ev.isin([EV_TURN_CAP, EV_VOID_CAP])).all()
    assert (h.loc[h["won"] == 1, ["hand_value", "cards_left", "penalty"]] == 0).all().all()
    # rips / kalookis count the hands each player won that way
    w = h[h["won"] == 1]
    rips = w[w["end_event"] == EV_WENT_OUT].groupby(["game_id", "seat"]).size()
    kals = w[w["end_event"] == EV_KALOOKI].groupby(["game_id", "seat"]).size()
    mi = m.set_index(["game_id", "seat"])
    assert mi["rips"].sum() == rips.sum() and mi["kalookis"].sum() == kals.sum()
    np.testing.assert_array_equal(mi.loc[rips.index, "rips"], rips.values)
    # the dealer is one of the players dealt in
    dealt = set(zip(h["game_id"], h["hand_no"], h["seat"]))
    d = per["dealer"].first()
    assert all((g, k, s) in dealt for (g, k), s in d.items())
    # policies belong to the real player
    np.testing.assert_array_equal(h["policy_id"], np.where(h["seat"] < 2, 1, 0))


# ------------------------------------------------------------------------------------------------
# elimination matches: the score sheet


@pytest.mark.parametrize("variant", ELIM)
def test_elimination_sheet_consistent(variant):
    r, h, m = run(variant)
    for gid, g in m.groupby("game_id"):
        assert g["money"].sum() == 0                                  # finished: the pool is paid out
        assert g["pool"].iloc[0] == 4 * r.stake_ante + g["buy_backs"].sum() * r.stake_buy_back
        assert (g["buy_backs"] <= r.buy_back_limit).all()
        winners = g[g["match_win_share"] == 1.0]
        assert len(winners) == 1 and g["match_win_share"].sum() == 1.0
        assert (g["eliminated"] == 1 - g["match_win_share"]).all()   # the pool winner is the only one in
        w = winners.iloc[0]
        assert w["money"] == w["units"] - r.stake_ante - w["buy_backs"] * r.stake_buy_back + w["pool"]
        assert (g.loc[g["eliminated"] == 1, "total"] >= r.elimination_at).all()
        assert (g.loc[g["eliminated"] == 0, "total"] < r.elimination_at).all()


@pytest.mark.parametrize("variant", ELIM)
def test_eliminated_players_are_never_dealt_in_again(variant):
    r, h, m = run(variant)
    step = 1 if r.dealer_rotation == "left" else -1
    for gid, g in h.groupby("game_id"):
        hands = g.groupby("hand_no")
        seats = {k: set(x["seat"]) for k, x in hands}
        status = {k: dict(zip(x["seat"], x["status"])) for k, x in hands}
        last = max(seats)
        assert sorted(seats) == list(range(last + 1))
        for k in range(1, last + 1):
            # dealt in next hand  <=>  dealt in this hand and still in after it
            still_in = {s for s, st in status[k - 1].items() if st < ST_OUT}
            assert seats[k] == still_in, (gid, k)
        # engine seats are the players in, in order; the deal passes to the next player in
        for k, x in hands:
            assert list(x["engine_seat"]) == list(range(len(x)))
            if k > 0:
                prev = hands.get_group(k - 1)["dealer"].iloc[0]
                exp = next((prev + step * i) % 4 for i in range(1, 5) if (prev + step * i) % 4 in seats[k])
                assert x["dealer"].iloc[0] == exp
        # the last hand leaves exactly one player in: the winner
        fin = {s for s, st in status[last].items() if st < ST_OUT}
        mw = m[(m["game_id"] == gid) & (m["match_win_share"] == 1)]["seat"].tolist()
        assert sorted(fin) == mw


@pytest.mark.parametrize("variant", ELIM + PER_HAND)
def test_replay_through_python_match_score(variant):
    """Every simulated match, hand by hand through match_sheet.MatchScore: same sheet after every hand."""
    _replay(*run(variant), 4)


@pytest.mark.parametrize("variant,n_players", [
    ("k40+v6", 4), ("k40+v5+v7", 4), ("k101", 3), ("k51+v2", 6), ("na15+v7", 2), ("american", 5),
])
def test_house_rules_and_table_sizes_replay(variant, n_players):
    seats = tuple(["greedy", "random"] * 3)[:n_players]
    r, h, m = run(variant, seats, n=40, seed=5)
    assert (m["finished"] == 1).all() and (h["players"] <= n_players).all()
    if r.kalooki_penalty_multiplier != 1:        # V6: the engine's penalty has the multiplier, the sheet too
        k = h[(h["end_event"] == EV_KALOOKI) & (h["won"] == 0)]
        np.testing.assert_array_equal(k["penalty"], k["hand_value"] * r.kalooki_penalty_multiplier)
        np.testing.assert_array_equal(k["sheet_penalty"], k["penalty"])
    _replay(r, h, m, n_players)


def _replay(r, h, m, n_players):
    mi = m.set_index(["game_id", "seat"])
    for gid, g in h.groupby("game_id"):
        ms = MatchScore(r, n_players, "always")
        for k, x in g.groupby("hand_no"):
            seats = x["seat"].to_numpy()
            pen = np.zeros(n_players, int)
            cards = np.zeros(n_players, int)
            jok = np.zeros(n_players, int)
            pen[seats] = np.where(x["won"] == 1, 0, x["hand_value"])
            cards[seats] = x["cards_left"]
            jok[seats] = x["jokers_left"]
            won = x[x["won"] == 1]
            if len(won):
                ev = int(x["end_event"].iloc[0])
                res = HandResult(int(won["seat"].iloc[0]), "kalooki" if ev == EV_KALOOKI else "rip",
                                 tuple(pen), tuple(cards), tuple(jok))
            else:
                res = HandResult.void()
            st = ms.play(res)
            np.testing.assert_array_equal(np.asarray(st.totals)[seats], x["total"], err_msg=f"{gid}/{k}")
            np.testing.assert_array_equal(np.asarray(st.payments)[seats], x["payment"], err_msg=f"{gid}/{k}")
            np.testing.assert_array_equal(np.asarray(st.penalties)[seats], x["sheet_penalty"])
            assert [STATUS_NAMES.index(s) for s in np.asarray(st.status)[seats]] == list(x["status"])
            assert st.pool == x["pool"].iloc[0]
        row = mi.loc[gid]
        np.testing.assert_array_equal(ms.totals, row["total"])
        np.testing.assert_array_equal(ms.units, row["units"])
        np.testing.assert_array_equal(ms.buybacks, row["buy_backs"])
        np.testing.assert_array_equal(ms.money(), row["money"])
        assert ms.pool[0] == row["pool"].iloc[0]
        if r.match_mode == "elimination_pool":
            assert ms.over and row["match_win_share"].iloc[ms.match_winner] == 1.0


# ------------------------------------------------------------------------------------------------
# per-hand matches: money per hand


@pytest.mark.parametrize("variant", PER_HAND)
def test_per_hand_money(variant):
    r, h, m = run(variant)
    assert (m["match_hands"] == 10).all() and (m["hands_played"] == 10).all()   # n_hands "none": 10
    assert (h["players"] == 4).all() and (m["pool"] == 0).all() and (m["eliminated"] == 0).all()
    assert (m["buy_backs"] == 0).all()
    lose = h[h["won"] == 0]
    winner_in_hand = h.groupby(["game_id", "hand_no"])["won"].transform("sum") == 1
    ev = lose["end_event"]
    if variant == "na15":          # 1 unit per penalty point, no kalooki extra
        pay = lose["hand_value"]
    else:                          # 1 per natural, 2 per joker; doubled after a kalooki
        pay = (lose["cards_left"] - lose["jokers_left"]) + 2 * lose["jokers_left"]
        pay = pay * np.where(ev == EV_KALOOKI, 2, 1)
    pay = np.where(winner_in_hand[lose.index], pay, 0)
    np.testing.assert_array_equal(-lose["payment"], pay)
    # the winner collects what the losers pay; a hand without a winner moves nothing
    assert (h.groupby(["game_id", "hand_no"])["payment"].sum() == 0).all()
    assert (h.loc[~winner_in_hand, "payment"] == 0).all()
    # money = units = the sum of the payments; the highest money wins (ties shared)
    tot = h.groupby(["game_id", "seat"])["payment"].sum()
    mi = m.set_index(["game_id", "seat"])
    np.testing.assert_array_equal(mi.loc[tot.index, "money"], tot.values)
    assert (mi["money"] == mi["units"]).all()
    for gid, g in m.groupby("game_id"):
        assert g["money"].sum() == 0
        best = g["money"] == g["money"].max()
        np.testing.assert_allclose(g.loc[best, "match_win_share"], 1.0 / best.sum())
        assert (g.loc[~best, "match_win_share"] == 0).all()


def test_hands_per_game_sets_the_length_of_a_per_hand_match():
    r, h, m = run("na15", n=6, hands_per_game=3)
    assert (m["match_hands"] == 3).all() and sorted(h["hand_no"].unique()) == [0, 1, 2]
    with pytest.raises(ValueError, match="max_hands"):
        simulate(load_rules("k40"), 4, GGRR, None, 2, 1, mode="matches", hands_per_game=5)


# ------------------------------------------------------------------------------------------------
# buy-back policy, hand cap, invariants


def test_never_buy_back_and_the_hand_cap():
    r, h, m = run("k40", n=40, buy_back="never")
    assert (m["buy_backs"] == 0).all() and (m["pool"] == 4 * r.stake_ante).all()
    assert (h["status"] != ST_BOUGHT_BACK).all()
    assert (m["finished"] == 1).all()
    # a cap of 2 hands: no K101 match ends that fast; nobody wins, the pool stays unpaid
    r, h, m = run("k101", n=12, max_hands=2)
    assert (m["match_hands"] <= 2).all()
    unf = m[m["finished"] == 0]
    assert len(unf) > 0 and (unf["match_win_share"] == 0).all()
    for gid, g in unf.groupby("game_id"):
        assert g["money"].sum() == -g["pool"].iloc[0]
        assert g["match_hands"].iloc[0] == 2


def test_engine_invariants_hold_in_matches():
    for v in ("k40", "american"):
        r = load_rules(v)
        simulate(r, 3, ["random", "greedy", "random"], None, 6, 9, mode="matches", check=True)


def test_buy_back_flags_per_player():
    # the random seats are eliminated often: with the flag they buy back, without it never
    r, h, m = run("k40", seats=("random", "random", "greedy", "greedy"), n=60, buy_back=(True, False, False, True))
    assert m.loc[m["seat"] == 0, "buy_backs"].sum() > 0
    assert (m.loc[m["seat"].isin([1, 2]), "buy_backs"] == 0).all()
    with pytest.raises(ValueError):
        simulate(load_rules("k40"), 4, GGRR, None, 1, 1, mode="matches", buy_back="sometimes")


# ------------------------------------------------------------------------------------------------
# determinism: threads and batch splits


@pytest.mark.parametrize("variant", ["k40", "american"])
def test_threads_and_batch_splits_identical(variant):
    r = load_rules(variant)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        a = simulate(r, 4, GGRR, None, 10, 21, mode="matches")
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        b = simulate(r, 4, GGRR, None, 10, 21, mode="matches")
    finally:
        numba.set_num_threads(old)
    parts = [simulate(r, 4, GGRR, None, n, 21, mode="matches", first_game_id=f) for f, n in ((0, 3), (3, 1), (4, 6))]
    for i in (0, 1):
        _same(a[i], b[i])
        _same(a[i], {k: np.concatenate([p[i][k] for p in parts]) for k in a[i]})
    c = simulate(r, 4, GGRR, None, 10, 22, mode="matches")
    assert not np.array_equal(a[1]["money"], c[1]["money"])


# ------------------------------------------------------------------------------------------------
# the command line


def test_cli_k40_matches_end_to_end_and_resume(tmp_path, capsys):
    from kalooki_sim.cli import main

    out = tmp_path / "k40m"
    args = ["simulate", "--variant", "k40", "--players", "4", "--agents", "greedy,greedy,random,random",
            "--matches", "30", "--seed", "7", "--shard-size", "12", "--quiet", "--out", str(out)]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "matches" in text and "money" in text and "buy-backs" in text and "eliminated" in text
    for f in ("meta.json", "summary.csv", "penalties.png", "money.png"):
        assert (out / f).exists(), f
    m = pd.concat(pd.read_parquet(p) for p in sorted((out / "matches").glob("*.parquet")))
    h = pd.concat(pd.read_parquet(p) for p in sorted((out / "hands").glob("*.parquet")))
    assert len(m) == 30 * 4 and m["game_id"].nunique() == 30
    assert abs(m.groupby("game_id")["match_win_share"].sum() - 1).max() < 1e-9
    # same matches as the library call
    _, h0, m0 = run("k40", n=30, seed=7)
    np.testing.assert_array_equal(m.sort_values(["game_id", "seat"])["money"], m0["money"])
    assert len(h) == len(h0)
    s = pd.read_csv(out / "summary.csv")
    assert {"match_win_rate", "match_win_lo", "match_win_hi", "match_money_mean", "match_buy_backs_mean",
            "match_eliminated_rate"} <= set(s.columns)
    # an interrupted run (one shard lost) resumes without losing or double counting a match
    (out / "hands" / "shard-000001.parquet").unlink()
    assert main(args + ["--resume"]) == 0
    m2 = pd.concat(pd.read_parquet(p) for p in sorted((out / "matches").glob("*.parquet")))
    h2 = pd.concat(pd.read_parquet(p) for p in sorted((out / "hands").glob("*.parquet")))
    assert len(m2) == len(m) and len(h2) == len(h)
    pd.testing.assert_frame_equal(m2.reset_index(drop=True), m.reset_index(drop=True))
    # --hands still works for a points variant; match options are refused with --hands
    assert main(["simulate", "--variant", "k40", "--hands", "8", "--quiet", "--out", str(tmp_path / "k40h")]) == 0
    assert main(["simulate", "--variant", "na15", "--hands", "8", "--hands-per-match", "3", "--quiet",
                 "--out", str(tmp_path / "bad")]) == 2


def test_cli_per_hand_matches(tmp_path, capsys):
    from kalooki_sim.cli import main

    out = tmp_path / "am"
    assert main(["simulate", "--variant", "american", "--players", "3", "--agents", "greedy,random,random",
                 "--matches", "5", "--hands-per-match", "4", "--seed", "1", "--quiet", "--out", str(out)]) == 0
    m = pd.concat(pd.read_parquet(p) for p in sorted((out / "matches").glob("*.parquet")))
    assert (m["match_hands"] == 4).all() and len(m) == 15
    assert "money" in capsys.readouterr().out


def test_record_games_checks_the_match_length():
    from kalooki_sim.runtime.replay import record_games

    with pytest.raises(ValueError, match="use max_hands"):
        record_games(load_rules("k40"), 4, GGRR, 1, range(1), mode="matches", hands_per_game=5)
    with pytest.raises(ValueError, match="buy_back must give 4 values"):
        record_games(load_rules("k40"), 4, GGRR, 1, range(1), mode="matches", buy_back=[True])
