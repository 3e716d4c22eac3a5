"""``experiments/search_curve.py`` on tiny settings: every point of the grid is a tournament of
the search against its base, its cost is timed, and the table, plot and metadata are written; a
second run reads the finished points back instead of playing them again."""

from __future__ import annotations

import json

import pandas as pd
from load_script import load_script


def _curve():
    return load_script("experiments/search_curve.py")


def test_grid_varies_worlds_then_candidates_each_point_once():
    assert _curve()._points([4, 16, 64], [2, 3, 64], 16, 3) == [(4, 3), (16, 3), (64, 3), (16, 2), (16, 64)]


def test_tiny_curve_writes_its_table_plot_and_metadata(tmp_path):
    out = tmp_path / "curve"
    argv = ["--worlds", "2", "4", "--candidates", "2", "--at-worlds", "2", "--at-candidates", "2", "--deals", "2",
            "--cost-hands", "1", "--seed", "5", "--quiet", "--out", str(out)]
    assert _curve().main(argv) == 0
    curve = pd.read_csv(out / "curve.csv")
    assert list(zip(curve["worlds"], curve["candidates"])) == [(2, 2), (4, 2)]
    assert (curve["deals"] == 2).all() and (curve["median_ms_per_decision"] > 0).all()
    assert ((curve["win_share_lo"] <= curve["win_share_diff"]) & (curve["win_share_diff"] <= curve["win_share_hi"])).all()
    assert "2 deals x 12 seatings" in (out / "curve.md").read_text()
    assert (out / "curve.png").stat().st_size > 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["seed"] == 5 and "commit" in meta["git"]
    assert 'worlds = 4' in (out / "search-w4-k2.toml").read_text()
    first = (out / "w2-k2" / "seats").stat().st_mtime_ns if (out / "w2-k2" / "seats").exists() else None
    assert _curve().main(argv) == 0                         # resumed: the same table
    pd.testing.assert_frame_equal(pd.read_csv(out / "curve.csv").drop(columns=[c for c in curve if "ms_per" in c]),
                                  curve.drop(columns=[c for c in curve if "ms_per" in c]))
    if first is not None:
        assert (out / "w2-k2" / "seats").stat().st_mtime_ns == first
