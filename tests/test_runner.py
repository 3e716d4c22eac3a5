"""The one study runner (kalooki_sim.studies.runner) and its backends: simulate and tournament runs
on it give the same rows on the local and the Ray backend (a real local Ray instance, a worker
killed mid-task), an interrupted run resumes to exactly the uninterrupted rows, and options a
backend does not take are refused, not ignored."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from kalooki_sim.studies.backends import LocalBackend, make_backend
from kalooki_sim.studies.records import RunDir
from kalooki_sim.studies.runner import run_tasks, todo
from kalooki_sim.studies.simulate import SimulationConfig, run_simulation, tasks
from kalooki_sim.studies.tournament import TournamentConfig, analyse, run_tournament

ROOT = Path(__file__).resolve().parents[1]


def _sim(out, **kw) -> SimulationConfig:
    return SimulationConfig(**{**dict(variant="k40", games=60, shard_size=20, mode="matches", max_hands=30,
                                      seed=5, out=str(out)), **kw})


def _rows(run_path, table) -> pd.DataFrame:
    df = RunDir(Path(run_path)).read_table(table)
    return df.sort_values(list(df.columns)).reset_index(drop=True)


class _Dies(LocalBackend):
    """Stops after ``after`` tasks, as Ctrl-C would."""

    def __init__(self, after):
        self.after = after

    def run(self, tasks):
        for i, item in enumerate(super().run(tasks)):
            if i == self.after:
                raise KeyboardInterrupt
            yield item


@pytest.fixture(scope="module")
def local_sim(tmp_path_factory):
    cfg = _sim(tmp_path_factory.mktemp("sim") / "run")
    run_simulation(cfg, progress=False)
    return cfg


def test_an_interrupted_simulation_resumes_to_the_same_rows(local_sim, tmp_path):
    cfg = _sim(tmp_path / "run")
    with pytest.raises(KeyboardInterrupt):
        run_simulation(cfg, progress=False, backend=_Dies(1))
    left = todo(RunDir(Path(cfg.out)), tasks(cfg, __import__("kalooki_sim").load_rules(cfg.variant)))
    assert [t.shard for t in left] == [1, 2]
    run_simulation(cfg, resume=True, progress=False)
    for table in ("hands", "matches"):
        pd.testing.assert_frame_equal(_rows(cfg.out, table), _rows(local_sim.out, table), obj=table)
    timing = (Path(cfg.out) / "timing.jsonl").read_text().splitlines()
    assert len(timing) == 2                       # one line per session that played something


def test_a_resume_with_another_setting_is_refused_naming_it(local_sim):
    with pytest.raises(ValueError, match="config.seed was 5 there and is 6 now"):
        run_simulation(dataclasses.replace(local_sim, seed=6), resume=True, progress=False)


def test_backend_options_are_refused_where_they_do_not_apply():
    with pytest.raises(ValueError, match="address: options of the ray backend"):
        make_backend("local", address="auto")
    with pytest.raises(ValueError, match="backend must be one of local, ray, not 'dask'"):
        make_backend("dask")
    with pytest.raises(TypeError):
        make_backend("ray", fail_once_marker="x")           # no hidden test hooks
    out = subprocess.run([sys.executable, "-m", "kalooki_sim.cli", "simulate", "--hands", "4", "--address", "auto",
                          "--out", "/tmp/never-written-by-kalooki"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "options of the ray backend" in out.stderr and len(out.stderr.splitlines()) == 1


@pytest.mark.dist
def test_simulate_and_tournament_on_ray_give_the_local_rows_with_a_worker_killed(local_sim, tmp_path):
    """A real local Ray instance plays the same simulation and tournament; one task kills its own
    worker first (as a crashed node would) and is played again; the rows equal the local ones."""
    ray = pytest.importorskip("ray", reason='the Ray backend needs the dist extra (pip install -e ".[dist]")')
    from kalooki_sim import load_rules
    from kalooki_sim.studies.backends import RayBackend
    from kalooki_sim.testing import crash_once

    be = RayBackend(num_cpus=2)
    try:
        cfg = _sim(tmp_path / "ray")
        rules = load_rules(cfg.variant)
        run = RunDir.create(cfg.out, {}, cfg.seed, rules)
        marker = tmp_path / "killed"
        doomed = [dataclasses.replace(t, fn=crash_once, args=(str(marker), t.fn, *t.args)) for t in tasks(cfg, rules)]
        assert run_tasks(run, doomed, backend=be, progress=False) == 3
        assert marker.exists() and int(marker.read_text()) != os.getpid()      # a worker really died
        for table in ("hands", "matches"):
            pd.testing.assert_frame_equal(_rows(cfg.out, table), _rows(local_sim.out, table), obj=table)

        t = TournamentConfig(variant="caribbean", agents=("sharp", "greedy", "random", "random"), deals=8,
                             shard_deals=4, seed=3, out=str(tmp_path / "t_local"))
        run_tournament(t, progress=False, results=False)
        run_tournament(dataclasses.replace(t, out=str(tmp_path / "t_ray")), progress=False, results=False,
                       backend=be)
        pd.testing.assert_frame_equal(_rows(tmp_path / "t_ray", "seats"), _rows(tmp_path / "t_local", "seats"))
        # a sequential test decides on the same deals whichever shard finishes first
        seq = dataclasses.replace(t, agents=("greedy", "random", "random", "random"), deals=200, shard_deals=10,
                                  until_decided=True, sprt_min_deals=10)
        local = analyse(run_tournament(dataclasses.replace(seq, out=str(tmp_path / "s_local")), progress=False,
                                       results=False), seq, write=False)["sequential test (SPRT)"]
        remote = analyse(run_tournament(dataclasses.replace(seq, out=str(tmp_path / "s_ray")), progress=False,
                                        results=False, backend=be), seq, write=False)["sequential test (SPRT)"]
        pd.testing.assert_frame_equal(local, remote)
        assert (local["decision"] == "H1").all() and (local["deals"] < 200).all()
    finally:
        be.close()
        ray.shutdown()
