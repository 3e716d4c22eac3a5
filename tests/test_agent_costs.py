"""``benchmarks/agent_costs.py`` on tiny settings: every kind of agent (compiled, network, search)
is timed through the env on its own decisions, one JSON line each."""

from __future__ import annotations

import json

import pytest
from load_script import load_script


def test_every_kind_of_agent_gets_its_cost_line(capsys):
    pytest.importorskip("torch", reason='learned agents need the learn extra (pip install -e ".[learn]")')
    mod = load_script("benchmarks/agent_costs.py")
    import numba
    import torch

    threads = numba.get_num_threads(), torch.get_num_threads()
    try:                # the benchmark runs on one thread: leave this test worker as it was
        assert mod.main(["--variant", "caribbean", "--agents", "greedy,learned-caribbean,search-caribbean",
                         "--decisions", "3", "--batch", "4", "--batch-decisions", "8"]) == 0
    finally:
        numba.set_num_threads(threads[0])
        torch.set_num_threads(threads[1])
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(x["agent"], x["kind"]) for x in lines] == [("greedy", "compiled"), ("learned-caribbean", "network"),
                                                         ("search-caribbean", "search")]
    for x in lines:
        assert x["one_at_a_time"]["decisions"] == 3 and x["one_at_a_time"]["median_us"] > 0
        assert x["batched"]["decisions"] == 8 and x["batched"]["mean_us"] > 0
