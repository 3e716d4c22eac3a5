"""Duplicate tournaments (kalooki_sim.studies.tournament) and named strategies (kalooki_sim.runtime.strategies)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from kalooki_sim import load_rules
from kalooki_sim.agents.base import GREEDY
from kalooki_sim.analysis.stats import paired_differences
from kalooki_sim.runtime.rollout import simulate
from kalooki_sim.runtime.strategies import StrategyError, known_strategies, lineup, load_strategy
from kalooki_sim.studies.tournament import TournamentConfig, entrant_labels, play_deals, run_tournament, schedule

# ------------------------------------------------------------------------------------------------
# strategies


def test_named_strategies_resolve():
    s = load_strategy("greedy-picky")
    assert s.agent == "greedy" and s.agent_id == GREEDY
    assert s.params == (0.0, 2.0, 2.0, 0.5)
    assert {"random", "greedy", "greedy-picky", "greedy-explore"} <= set(known_strategies())
    _, ids, params = lineup(["greedy", "greedy-explore", "random"])
    assert list(ids) == [1, 1, 0] and params.shape == (3, 4) and params[1, 0] == 0.1


def test_unknown_and_malformed_strategies(tmp_path):
    with pytest.raises(StrategyError, match="known agents: .*greedy-picky"):
        load_strategy("greedyy")
    with pytest.raises(StrategyError, match=r"strategy file .*missing\.toml: no such file"):
        load_strategy(str(tmp_path / "missing.toml"))
    with pytest.raises(StrategyError, match=r"unknown agent .*a path ending in \.toml"):
        load_strategy(str(tmp_path / "missing"))
    bad = tmp_path / "bad.toml"
    bad.write_text('agent = "greedy"\n[params]\nepsilonn = 0.1\n')
    with pytest.raises(StrategyError, match="no parameter 'epsilonn'.*epsilon"):
        load_strategy(str(bad))
    bad.write_text('agent = "nobody"\n')
    with pytest.raises(StrategyError, match="unknown agent"):
        load_strategy(str(bad))
    bad.write_text('agent = "greedy"\n[params]\nepsilon = "high"\n')
    with pytest.raises(StrategyError, match="must be a number"):
        load_strategy(str(bad))
    bad.write_text('agent = greedy\n')
    with pytest.raises(StrategyError, match="not valid TOML"):
        load_strategy(str(bad))


# ------------------------------------------------------------------------------------------------
# schedules


@pytest.mark.parametrize("k,n", [(4, 4), (2, 4), (3, 3), (6, 4), (9, 3), (5, 5), (6, 6), (2, 2), (7, 6)])
def test_schedule_is_balanced_for_seat_and_order(k, n):
    """Every deal's seatings are the balanced design on its table: each table member sits in every
    seat equally often, and each ordered pair of table places at every relative position equally
    often; over the cycle of tables every entrant sits in every seat equally often."""
    from kalooki_sim.studies.seatings import check_balanced
    from kalooki_sim.studies.tournament import _tables, seatings_per_deal

    S = seatings_per_deal(n)
    counts = np.zeros((k, n), dtype=int)
    for d in range(2 * len(_tables(k, n)) if k >= n else 10):
        s = schedule(k, n, d)
        assert s.shape == (S, n)
        places = np.array([[list(s[0]).index(e) if k >= n else seat for seat, e in enumerate(row)] for row in s])
        if k >= n:
            check_balanced(places)                 # seatings of the table's places
        for seat in range(n):                     # a column: every table member equally often
            col = np.sort(s[:, seat])
            assert np.array_equal(col, np.sort(np.repeat(s[0], S // n)))
        for r in range(S):
            for seat in range(n):
                counts[s[r, seat], seat] += 1
    if k >= n:
        assert (counts == counts[0, 0]).all()     # balanced over the cycle of tables


def test_entrant_labels():
    assert entrant_labels(["greedy", "greedy", "random"]) == ["greedy#1", "greedy#2", "random"]


# ------------------------------------------------------------------------------------------------
# playing and analysing


@pytest.mark.parametrize("variant,mode", [("caribbean", "hands"), ("k40", "hands"), ("caribbean", "matches"),
                                          ("k40", "matches")])
def test_tournament_rows_are_paired_on_identical_deals(variant, mode):
    cfg = TournamentConfig(variant=variant, agents=("greedy", "random", "greedy-picky", "greedy-explore"),
                           deals=6, mode=mode, max_hands=30 if (variant == "k40" and mode == "matches") else None)
    seats, hands = play_deals(cfg, load_rules(variant), 10, 6)
    assert set(seats["deal"]) == set(range(10, 16))
    per = seats.groupby(["deal", "seating"]).size()
    assert (per == 4).all() and len(per) == 6 * 12            # 12 seatings balanced for seat and order
    # every entrant sits in every seat of every deal equally often (3 times of 12)
    assert (seats.groupby(["deal", "agent", "seat"]).size() == 3).all()
    assert (seats.groupby(["deal", "agent"]).size() == 12).all()
    # the first seating of a deal is simulate's game with that deal id and lineup
    r = load_rules(variant)
    if mode == "hands":
        _, ids, params = lineup(cfg.agents)
        one = simulate(r, 4, list(ids), params, 1, 0, first_game_id=12)
        mine = seats[(seats.deal == 12) & (seats.seating == 0)].sort_values("seat")
        np.testing.assert_array_equal(mine["penalty"], one["penalty"])
        assert (mine["dealer"] == one["dealer"]).all()
    else:
        assert hands is not None and {"deal", "seating", "agent", "hand_no"} <= set(hands.columns)


def test_tournament_run_writes_results(tmp_path):
    cfg = TournamentConfig(agents=("greedy", "random", "greedy-explore"), deals=20, shard_deals=7,
                           out=str(tmp_path / "t"), players=4)
    run = run_tournament(cfg, progress=False)
    md = (run.path / "results.md").read_text()
    for part in ("win share", "paired differences", "variance reduction", "ratings", "Rests on 20 deals"):
        assert part in md, part
    res = pd.read_csv(run.path / "results.csv")
    assert {"table", "table_n_deals", "table_n_rows"} <= set(res.columns)
    for png in ("win_share.png", "penalty.png", "ratings.png"):
        assert (run.path / png).stat().st_size > 0
    with pytest.raises(FileExistsError):
        run_tournament(cfg, progress=False)


def test_aa_difference_interval_covers_zero_about_95_percent():
    """Copies of one agent (greedy exploring 10 % of the time: each copy on its own random stream):
    over many seeds the paired 95 % interval of every pair covers zero in about 95 % of cases (the
    intervals are honest for the duplicate design)."""
    covered = total = 0
    for seed in range(150):
        cfg = TournamentConfig(agents=("greedy-explore",) * 4, deals=16, seed=seed)
        seats, _ = play_deals(cfg, load_rules("caribbean"), 0, 16)
        pd_ = paired_differences(seats, "penalty", cluster="deal")
        assert (pd_["se"] > 0).all()              # the copies really play differently
        ok = (pd_["lo"] <= 0) & (pd_["hi"] >= 0)
        covered += int(ok.sum())
        total += len(pd_)
    share = covered / total
    assert total == 150 * 6
    assert 0.90 <= share <= 0.99, share


def test_resume_after_kill_gives_the_same_tables(tmp_path):
    """A real `kalooki tournament` process killed with SIGKILL mid-run, then resumed, ends with the
    tables of an uninterrupted run.  100 shards of 2 deals, so that the run is still writing
    shards (each a parquet file) well after the third one appears and the kill lands mid-run."""
    n_shards = 100
    args = ["tournament", "--agents", "greedy,random,greedy-explore,greedy-picky", "--deals", str(2 * n_shards),
            "--shard-deals", "2", "--seed", "3", "--quiet"]
    whole = tmp_path / "whole"
    cut = tmp_path / "cut"
    env = dict(os.environ)
    run = lambda out, extra=(): subprocess.run([sys.executable, "-m", "kalooki_sim.cli", *args, "--out", str(out),
                                                *extra], env=env, capture_output=True, text=True, timeout=900)
    r = run(whole)
    assert r.returncode == 0, r.stderr
    p = subprocess.Popen([sys.executable, "-m", "kalooki_sim.cli", *args, "--out", str(cut)], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.time()
    while time.time() - t0 < 600:
        if len(list((cut / "seats").glob("shard-*.parquet"))) >= 3 if (cut / "seats").is_dir() else False:
            break
        if p.poll() is not None:
            break
        time.sleep(0.005)
    p.send_signal(signal.SIGKILL)
    p.wait()
    n_done = len(list((cut / "seats").glob("shard-*.parquet")))
    assert 0 < n_done < n_shards, n_done          # it was stopped part way
    r = run(cut, ["--resume"])
    assert r.returncode == 0, r.stderr
    a = pd.read_csv(whole / "results.csv")
    b = pd.read_csv(cut / "results.csv")
    pd.testing.assert_frame_equal(a, b)
    sa = pd.concat([pd.read_parquet(f) for f in sorted((whole / "seats").glob("*.parquet"))])
    sb = pd.concat([pd.read_parquet(f) for f in sorted((cut / "seats").glob("*.parquet"))])
    pd.testing.assert_frame_equal(sa.reset_index(drop=True), sb.reset_index(drop=True))


def test_cli_tournament_unknown_agent(capsys):
    from kalooki_sim.cli import main

    assert main(["tournament", "--agents", "greedy,nobody", "--deals", "2", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "unknown agent 'nobody'" in err and "greedy-picky" in err


# ------------------------------------------------------------------------------------------------
# sequential testing


def _seq(tmp_path, name, **kw):
    base = dict(agents=("greedy", "random", "greedy-explore", "random"), deals=300, shard_deals=20, seed=4,
                until_decided=True, sprt_min_deals=10, out=str(tmp_path / name))
    return TournamentConfig(**{**base, **kw})


def test_until_decided_stops_when_every_pair_is_decided(tmp_path):
    """greedy against two random copies and greedy-explore (far more than 2 points apart from the
    randoms): the test decides every pair long before the cap and the tournament stops there; the
    decision and the deals it used do not depend on the shard size, and a resumed run (its last
    shard lost) ends with the same decision."""
    from kalooki_sim.studies.tournament import analyse, sequential_tests

    cfg = _seq(tmp_path, "a", sprt_pairs=("greedy:random#1", "greedy:random#2"))
    run = run_tournament(cfg, progress=False)
    seq = analyse(run, cfg, write=False)["sequential test (SPRT)"]
    assert list(seq["decision"]) == ["H1", "H1"] and (seq["deals"] < 300).all()
    played = run.read_table("seats")["deal"].nunique()
    assert played < 300 and played >= seq["deals"].max()
    assert "sequential test (SPRT)" in (run.path / "results.md").read_text()
    other = run_tournament(_seq(tmp_path, "b", shard_deals=7, sprt_pairs=cfg.sprt_pairs), progress=False)
    pd.testing.assert_frame_equal(analyse(other, cfg, write=False)["sequential test (SPRT)"], seq)
    # resume: the last shard lost, the run plays it again and decides the same
    shards = sorted((run.path / "seats").glob("shard-*.parquet"))
    shards[-1].unlink()
    again = run_tournament(cfg, resume=True, progress=False)
    pd.testing.assert_frame_equal(analyse(again, cfg, write=False)["sequential test (SPRT)"], seq)
    # the default pairs: the first entrant against every other
    assert [tuple(p) for p in sequential_tests(run.read_table("seats"), _seq(tmp_path, "c"))[["a", "b"]].values] == [
        ("greedy", "random#1"), ("greedy", "greedy-explore"), ("greedy", "random#2")]


def test_until_decided_plays_to_the_cap_when_undecided(tmp_path):
    """Copies of one strategy at a cap too small to decide: every deal is played, and the report
    says the test is undecided."""
    from kalooki_sim.studies.tournament import analyse

    cfg = _seq(tmp_path, "u", agents=("greedy-explore", "greedy-explore", "random", "greedy"), deals=12,
               shard_deals=5, sprt_min_deals=30, sprt_pairs=("greedy-explore#1:greedy-explore#2",))
    run = run_tournament(cfg, progress=False)
    assert run.read_table("seats")["deal"].nunique() == 12
    seq = analyse(run, cfg, write=False)["sequential test (SPRT)"]
    assert seq["decision"].tolist() == ["undecided"] and seq["deals"].tolist() == [12]


@pytest.mark.parametrize("pairs,msg", [(("greedy:nobody",), "not 'a:b'"), (("greedy",), "not 'a:b'"),
                                       (("greedy:greedy",), "not 'a:b'")])
def test_bad_sprt_pairs_are_refused_before_any_work(tmp_path, pairs, msg):
    cfg = _seq(tmp_path, "bad", sprt_pairs=pairs)
    with pytest.raises(ValueError, match=msg):
        run_tournament(cfg, progress=False)
    assert not (tmp_path / "bad").exists()


def test_order_effect_table(tmp_path):
    """Every ordered pair at every relative position, and the spread across positions."""
    from kalooki_sim.studies.tournament import analyse

    cfg = TournamentConfig(agents=("greedy", "random", "greedy-explore", "greedy-picky"), deals=6,
                           out=str(tmp_path / "o"))
    order = analyse(run_tournament(cfg, progress=False), cfg, write=False)["win share: order effect"]
    assert len(order) == 6 * 4                               # 6 pairs x (3 positions + the spread)
    assert set(order["position"]) == {"1", "2", "3", "max - min"}
    assert (order.loc[order.position != "max - min", "n_deals"] == 6).all()


def test_cli_until_decided(tmp_path, capsys):
    from kalooki_sim.cli import main

    out = tmp_path / "cli"
    rc = main(["tournament", "--agents", "greedy,random,random,random", "--deals", "200", "--shard-deals", "10",
               "--until-decided", "--sprt-h1", "2", "--sprt-min-deals", "10", "--out", str(out), "--quiet"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "sequential test (SPRT)" in text and "H1" in text
    meta = (out / "meta.json").read_text()
    assert '"sprt_h1": 0.02' in meta and '"until_decided": true' in meta
    rc = main(["tournament", "--agents", "greedy,random", "--until-decided", "--sprt-pairs", "greedy:x",
               "--out", str(tmp_path / "bad"), "--quiet"])
    assert rc == 2 and "--sprt-pairs" in capsys.readouterr().err
