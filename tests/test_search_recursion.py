"""The recursive search kernels must compile to one plain-int64 overload each.

A second overload typed with a literal argument recurses into the first one ("type-varying"
recursion), which numba links through an unresolved symbol that a process loading the cached
object cannot resolve: it aborts inside LLVM (numba issues #6061, #9129).  That crashed pytest
workers once; the note above ``melds.dfs._dfs`` explains the cause.  The cache index lists
every overload any process compiled from these sources, so it is read rather than the dispatcher
(which only knows what this process compiled itself).
"""

from __future__ import annotations

import pytest
from numba.core import types

from kalooki_sim.melds import best_lay_down
from kalooki_sim.melds.dfs import _dfs
from kalooki_sim.melds.runs_first import _fit_from, _runs_first


def _cached_signatures(dispatcher):
    """Distinct signatures in the kernel's cache index (a cache shared by machines with other
    CPUs holds one entry per signature and CPU)."""
    index = dispatcher._cache._cache_file._load_index()
    return sorted({key[0] for key in index}, key=str)


@pytest.fixture(scope="module", autouse=True)
def _searched():
    # Caribbean contracts take the runs-first path (round 2, a run and a set: after the
    # runs-and-sets pre-check), Kalooki 40's opening the general one
    assert best_lay_down("caribbean", "5H 6H 7H 8H KC KD JK 2S 2D 2C", 2) is not None
    assert best_lay_down("k40", "QH KH AH 9C 9D 9S 2C", None) is not None


@pytest.mark.parametrize("kernel", [_dfs, _runs_first], ids=["_dfs", "_runs_first"])
def test_one_plain_overload(kernel):
    sigs = _cached_signatures(kernel)
    assert len(sigs) == 1, sigs
    literal = [t for t in sigs[0] if isinstance(t, types.Literal)]
    assert not literal, sigs[0]


def test_runs_and_sets_precheck_has_no_literal_overload():
    """The pre-check is recursive too; callers that pass arrays of other layouts may add plain
    overloads (each recursing into itself), but never one typed with a literal."""
    sigs = _cached_signatures(_fit_from)
    assert sigs
    for sig in sigs:
        assert not [t for t in sig if isinstance(t, types.Literal)], sig
