"""The package's layers (``[tool.importlinter]`` in pyproject.toml) hold: ``lint-imports`` on the
installed layout, where ``agents/`` is ``kalooki_sim/agents/`` (an editable install maps it
there only at import time, so the linter, which reads files, gets a copy laid out as installed)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _installed_layout(dst: Path) -> Path:
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "kalooki_sim", dst / "kalooki_sim", ignore=skip)
    shutil.copytree(ROOT / "agents", dst / "kalooki_sim" / "agents", ignore=skip)
    shutil.copy(ROOT / "pyproject.toml", dst / "pyproject.toml")
    return dst


def _lint(tree: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.fail("lint-imports is missing: install the dev extra (pip install -e .[dev])")
    return subprocess.run([str(exe), "--no-cache"], cwd=tree, env={"PYTHONPATH": str(tree), "PATH": ""},
                          capture_output=True, text=True, timeout=300)


def test_every_layer_imports_only_the_layers_below_it(tmp_path):
    out = _lint(_installed_layout(tmp_path))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "2 kept, 0 broken" in out.stdout


def test_the_linter_sees_a_wrong_way_import(tmp_path):
    """The contract can fail: an engine module importing the runtime breaks it."""
    tree = _installed_layout(tmp_path)
    with open(tree / "kalooki_sim" / "engine" / "errors.py", "a") as f:
        f.write("\nfrom kalooki_sim.runtime import loop  # noqa: E402,F401\n")
    out = _lint(tree)
    assert out.returncode != 0 and "kalooki_sim.engine is not allowed to import kalooki_sim.runtime" in out.stdout


def test_at_most_twelve_modules_at_the_top_of_the_package():
    top = [p.name for p in (ROOT / "kalooki_sim").iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()]
    assert len(top) <= 12, sorted(top)
