"""``kalooki compile`` (``runtime.warm``): the kernel groups compiled ahead, in fresh processes,
into the cache the other processes load; bad arguments are refused before any work."""

import pytest

from kalooki_sim.cli import main
from kalooki_sim.runtime.warm import GROUPS, compile_kernels


def test_groups_compile_in_fresh_processes_and_report_their_time(capsys):
    took = compile_kernels(["env", "game"], jobs=2, progress=False)
    assert set(took) == {"env", "game"} and all(t > 0 for t in took.values())
    assert main(["compile", "--groups", "env", "--jobs", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "kernels compiled into" in out and "env " in out


def test_every_group_is_listed_and_bad_arguments_are_refused(capsys):
    assert set(GROUPS) == {"loop", "search", "env", "game"}
    with pytest.raises(ValueError, match="unknown kernel group.*nope"):
        compile_kernels(["nope"])
    with pytest.raises(ValueError, match="jobs must be >= 1"):
        compile_kernels(jobs=0)
    assert main(["compile", "--groups", "loop,nope", "--quiet"]) == 2
    assert "unknown kernel group" in capsys.readouterr().err
