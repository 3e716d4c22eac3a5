"""The analysis notebook runs from notebooks/ and from the repository root (the balance notebook is
executed by tests/test_balance.py on a tiny study)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kalooki_sim.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("nb") / "run"
    assert main(["simulate", "--hands", "40", "--out", str(out), "--quiet"]) == 0
    return out


@pytest.mark.parametrize("where", ["notebooks", "."])
def test_analyse_run_notebook_runs_from_either_folder(quick_run, where, monkeypatch):
    nbformat = pytest.importorskip("nbformat", reason="the notebook extra (nbformat, nbclient) runs notebooks")
    nbclient = pytest.importorskip("nbclient", reason="the notebook extra (nbformat, nbclient) runs notebooks")
    nb = nbformat.read(ROOT / "notebooks/analyse_run.ipynb", as_version=4)
    monkeypatch.setenv("KALOOKI_RUN", str(quick_run))
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT / where)}}).execute()
    assert any("greedy" in str(o.get("data", o.get("text", ""))) for c in nb.cells if c.cell_type == "code"
               for o in c.get("outputs", []))
