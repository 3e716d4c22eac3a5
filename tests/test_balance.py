"""The balance study (issue 30) on a tiny grid: the grid, pairing on common deals, resume without
loss or double counting, the report, the notebook, and the Ray backend (a real local instance,
with a worker killed mid-run) giving rows identical to the local backend.

One tiny study is played once per module (``tiny_run``) and shared: the numbers are meaningless,
the machinery is what is tested."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kalooki_sim.studies.balance import (
    CELL_TABLES, Knob, expand, load_cell, load_config, play_shard, run_study, shards, tasks,
)
from kalooki_sim.studies.balance_report import write_report
from kalooki_sim.studies.balance_stats import read_summary
from kalooki_sim.studies.records import RunDir
from kalooki_sim.studies.runner import run_tasks, todo

ROOT = Path(__file__).resolve().parents[1]
TINY = dict(presets=("caribbean", "k40"), players=(3, 4), deals=24, skill_deals=10, match_deals=2, shard_deals=12,
            overlays=("v6",), opening_values=(30,), match_presets=("caribbean",), laydown_turns=8,
            knobs=(Knob("no calls", set=(("calls_enabled", False),), presets=("caribbean",)),
                   Knob("calls per hand", set=(("calls_limit_scope", "hand"),), presets=("caribbean",),
                        mode="matches")))


def tiny(out, **kw):
    return load_config(None, out=str(out), **{**TINY, **kw})


def rows(cfg):
    """Every table of every cell, sorted, for comparisons."""
    out = {}
    for c in expand(cfg):
        for t in CELL_TABLES[c.kind]:
            df = load_cell(cfg.out, c, t)
            out[(c.id, t)] = df.sort_values(list(df.columns)).reset_index(drop=True)
    return out


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    cfg = tiny(tmp_path_factory.mktemp("balance") / "run")
    run = run_study(cfg, progress=False)
    write_report(run.path, cfg)
    return cfg


def test_default_grid_covers_the_issue():
    """The default config: every preset at every player count it allows, V1-V7 where they apply,
    the Caribbean knobs, the opening thresholds, a skill cell and a match cell per preset; every
    knob cell has a base cell of the same preset and table size; at least 1,000,000 hands."""
    cfg = load_config(ROOT / "configs/experiments/balance.toml")
    cells = expand(cfg)
    ids = {c.id: c for c in cells}
    assert {(c.preset, c.players) for c in cells if c.kind == "players"} >= {
        ("caribbean", n) for n in range(3, 7)} | {("na15", 2), ("american", 6), ("k40", 3)}
    knobs = {(c.preset, c.knob) for c in cells if c.base}
    for v in ("V1", "V2", "V3", "V4", "V6", "V7"):
        assert ("k40", v) in knobs
    assert ("k40", "V5 (eliminated at 151)") in knobs
    for k in ("calls per hand", "down and out x2", "2 jokers", "three decks, 8 jokers", "reshuffle once then void"):
        assert ("caribbean", k) in knobs
    assert ("k51", "opening 40") in knobs and ("k40", "opening 51") in knobs
    for c in cells:
        if c.base:
            b = ids[c.base]
            assert (b.preset, b.players, b.mode, b.agents) == (c.preset, c.players, c.mode, c.agents)
            assert cells.index(b) < cells.index(c)
    assert {c.preset for c in cells if c.kind == "skill"} == set(cfg.presets)
    hands = sum(c.deals * (c.players if c.kind == "skill" else 9 if c.kind == "match" else 1) for c in cells)
    assert hands >= 1_000_000
    with pytest.raises(ValueError, match="unknown key"):
        load_config(None, dealz=3)


def test_knob_cells_are_paired_on_common_deals(tiny_run):
    """V6 only doubles penalties on a kalooki: on the same deals every hand has the same length and
    winner as its base, so the paired difference of turns is exactly 0 and the rows match."""
    cfg = tiny_run
    ids = {c.id: c for c in expand(cfg)}
    knob, base = ids["k40/4p/greedy/V6"], ids["k40/4p/greedy"]
    a, b = load_cell(cfg.out, knob).sort_values(["deal", "seat"]), load_cell(cfg.out, base).sort_values(["deal", "seat"])
    assert np.array_equal(a[["deal", "seat", "won", "turns"]].to_numpy(), b[["deal", "seat", "won", "turns"]].to_numpy())
    e = read_summary(cfg.out)["effects"]
    row = e[(e["cell"] == knob.id) & (e["metric"] == "turns")].iloc[0]
    assert row["diff"] == 0 and row["n_deals"] == cfg.deals


def test_statistics_and_report(tiny_run):
    """report.md, its figures and the summary tables exist; every per-cell estimate carries an
    interval; seat shares sum to one per cell; the findings name every question."""
    cfg = tiny_run
    path = Path(cfg.out)
    text = (path / "report.md").read_text()
    for key in ("Seat fairness", "Length and endings", "Caribbean lay-downs", "Scores and calls", "Skill.",
                "House rules / knobs", "Match scores", "CI widths reached", "hands/s"):
        assert key in text, key
    for png in ("seat_advantage.png", "hand_length.png", "skill.png", "knob_effects.png", "laydown.png", "scores.png"):
        assert (path / png).stat().st_size > 1000
    t = read_summary(path)
    m = t["metrics"]
    assert {"turns", "stock_ran_out", "turn_cap", "out_in_one_turn", "calls_per_hand", "win_share"} <= set(m["metric"])
    ws = m[(m["metric"] == "win_share") & (m["cell"] == "caribbean/4p/greedy")]
    assert ws["mean"].sum() == pytest.approx(1.0)
    assert (ws["lo"] <= ws["mean"]).all() and (ws["mean"] <= ws["hi"]).all()
    assert set(t["skill_spread"]["preset"]) == {"caribbean", "k40"}
    ld = t["laydown"]
    assert ld["round"].nunique() == 9
    # the curve: rises with t, and at the last turn equals the share of rows that laid down by then
    cell = "caribbean/4p/greedy"
    h = load_cell(cfg.out, next(c for c in expand(cfg) if c.id == cell))
    for r, g in ld[ld["cell"] == cell].groupby("round"):
        assert (np.diff(g.sort_values("t")["mean"]) >= 0).all()
        hr = h[h["round"] == r]
        T = int(g["t"].max())
        want = ((hr["laid_down"] == 1) & (hr["laid_down_turn"].astype(int) // 4 + 1 <= T)).mean()
        assert g[g["t"] == T]["mean"].iloc[0] == pytest.approx(want)
    cells = t["cells"].set_index("cell")
    assert (cells["deals"] == cells["deals_planned"]).all()


def test_resume_after_interruption_loses_and_doubles_nothing(tiny_run, tmp_path):
    """A run stopped after a few shards (an exception from the backend, as Ctrl-C would) resumes
    with --resume and ends with exactly the rows of the uninterrupted run."""
    from kalooki_sim.studies.backends import LocalBackend

    class Dies(LocalBackend):
        def run(self, tasks):
            for i, item in enumerate(super().run(tasks)):
                if i == 5:
                    raise KeyboardInterrupt
                yield item

    cfg = tiny(tmp_path / "run")
    with pytest.raises(KeyboardInterrupt):
        run_study(cfg, backend=Dies(), progress=False)
    left = todo(RunDir(Path(cfg.out)), tasks(cfg))
    assert 0 < len(left) < sum(len(shards(cfg, c)) for c in expand(cfg))
    with pytest.raises(FileExistsError):
        run_study(cfg, progress=False)
    run_study(cfg, resume=True, progress=False)
    a, b = rows(cfg), rows(tiny_run)
    assert a.keys() == b.keys()
    for k in a:
        pd.testing.assert_frame_equal(a[k], b[k], check_dtype=False, obj=str(k))


def test_notebook_reproduces_the_figures(tiny_run):
    """notebooks/variant_balance.ipynb runs on the tiny run's parquet and draws every figure."""
    nbformat = pytest.importorskip("nbformat", reason='running notebooks needs the notebook extra (pip install -e ".[notebook]")')
    NotebookClient = pytest.importorskip("nbclient", reason='running notebooks needs the notebook extra').NotebookClient

    nb = nbformat.read(ROOT / "notebooks/variant_balance.ipynb", as_version=4)
    old = os.environ.get("BALANCE_RUN")
    os.environ["BALANCE_RUN"] = str(tiny_run.out)
    try:
        NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    finally:
        if old is None:
            os.environ.pop("BALANCE_RUN", None)
        else:
            os.environ["BALANCE_RUN"] = old
    from kalooki_sim.studies.balance_report import FIGURES

    for name in FIGURES:
        assert (Path(tiny_run.out) / f"notebook_{name}").stat().st_size > 1000


@pytest.mark.dist
def test_ray_backend_matches_local_and_survives_a_killed_worker(tiny_run, tmp_path):
    """A real local Ray instance (one CPU) plays the same study; the first task kills its own
    worker process (as a crashed node would), Ray plays that shard again, and the rows are
    identical to the local backend's, none lost or doubled."""
    ray = pytest.importorskip("ray", reason='the Ray backend needs the dist extra (pip install -e ".[dist]")')
    from kalooki_sim.studies.backends import RayBackend
    from kalooki_sim.testing import crash_once

    marker = tmp_path / "killed"
    cfg = tiny(tmp_path / "run")
    run = RunDir.create(cfg.out, cfg.to_dict(), cfg.seed, None)
    # the study's own tasks, each behind crash_once: the first one to run kills its worker
    doomed = [dataclasses.replace(t, fn=crash_once, args=(str(marker), t.fn, *t.args)) for t in tasks(cfg)]
    be = RayBackend(num_cpus=1)
    try:
        t0 = time.time()
        run_tasks(run, doomed, backend=be, progress=False)
        # a guard against a hang, not a speed test: a worker may have to compile the closed loop
        # from an empty cache (about two minutes, more beside other compiles)
        assert time.time() - t0 < 600
    finally:
        be.close()
        ray.shutdown()
    assert marker.exists() and int(marker.read_text()) != os.getpid()   # a worker really died
    a, b = rows(cfg), rows(tiny_run)
    assert a.keys() == b.keys()
    for k in a:
        pd.testing.assert_frame_equal(a[k], b[k], check_dtype=False, obj=str(k))
