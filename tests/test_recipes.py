"""docs/recipes.md runs as written: its Python blocks are executed, its compiled agent is the
registered module shown whole, and its strategy file loads."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from kalooki_sim.agents.base import agent
from kalooki_sim.agents.registry import AGENT_MODULES
from kalooki_sim.runtime.strategies import load_strategy

ROOT = Path(__file__).resolve().parents[1]
TEXT = (ROOT / "docs" / "recipes.md").read_text()
BLOCKS = re.findall(r"(<!-- (\S+) -->\n)?```(\w+)\n(.*?)```", TEXT, flags=re.S)


def _blocks(lang):
    return [(shown, code) for _, shown, kind, code in BLOCKS if kind == lang]


def test_the_compiled_recipe_is_the_registered_module_whole():
    shown = [(path, code) for path, code in _blocks("python") if path]
    assert [p for p, _ in shown] == ["agents/shedder.py"]
    assert shown[0][1] == (ROOT / "agents" / "shedder.py").read_text()
    assert "shedder" in AGENT_MODULES and agent("shedder").param_names == ("shed",)


@pytest.mark.parametrize("i", range(2))
def test_the_python_blocks_run(i, capsys):
    runnable = [code for path, code in _blocks("python") if not path]
    assert len(runnable) == 2
    namespace: dict = {"__name__": "recipe"}
    exec(compile(runnable[i], f"docs/recipes.md block {i}", "exec"), namespace)
    rows = namespace["rows"]
    assert len(rows["penalty"]) > 0 and np.isfinite(rows["penalty"]).all()
    out = capsys.readouterr().out
    assert out.strip(), "the recipe prints its result"
    if i == 0:         # the Python policy sat in the games it reports on
        assert (rows["policy_id"] == -1).sum() == len(rows["penalty"]) // 4


def test_the_strategy_file_loads(tmp_path):
    (toml,) = [code for _, code in _blocks("toml")]
    path = tmp_path / "shedder-half.toml"
    path.write_text(toml)
    s = load_strategy(str(path))
    assert s.agent == "shedder" and s.params == (0.5,) and s.description


def test_the_command_names_real_agents():
    (cmd,) = [code for _, code in _blocks("bash")]
    names = re.search(r"--agents (\S+)", cmd).group(1).split(",")
    for n in names:
        load_strategy(n)


def test_the_python_agent_plays_from_the_command_line(tmp_path, monkeypatch, capsys):
    """The console block: the recipe's class saved as lay_first.py, named module:factory."""
    from kalooki_sim.cli import main

    code = [code for path, code in _blocks("python") if not path][0]
    (tmp_path / "lay_first.py").write_text(code.split("\n\nrows = ")[0] + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    (cmd,) = [code for _, code in _blocks("console")]
    argv = cmd.split()[1:]
    argv[argv.index("--deals") + 1] = "8"                       # small
    assert main(argv + ["--quiet"]) == 0
    assert "lay_first:LayFirst" in capsys.readouterr().out
