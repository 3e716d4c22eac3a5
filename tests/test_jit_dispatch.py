"""How many times a kernel called from other kernels is compiled (``kalooki_sim.core.jit``), and how
batches run on threads (``kalooki_sim.core.lanes``).

A constant argument gets a compile of its own (kept where it speeds the loop up, erased where
those copies are dead code).  numba's parallel kernels compiled the whole closed loop into their
gufunc and again around it, so the package has none: batches run over lanes on threads.  The
small kernels here are not cached, so their dispatchers list exactly what this process compiled.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numba
import numpy as np
from numba.core import types

import kalooki_sim
from kalooki_sim.core.jit import njit
from kalooki_sim.core.lanes import run_lanes


@njit(cache=False)
def _shifted(x, k, up):
    return x + k if up else x - k


@njit(cache=False, specialise_constants=False)
def _shifted_plain(x, k, up):
    return x + k if up else x - k


@njit(cache=False)
def _with_constants(x):
    return (_shifted(x, 3, True) + _shifted(x, 4, False)
            + 10 * (_shifted_plain(x, 3, True) + _shifted_plain(x, 4, False) + _shifted_plain(x, x, True)))


@njit(cache=False)
def _lanes_kernel(out, calls, lo, hi):
    for i in range(lo, hi):
        out[i] += i * 2
    calls[lo] += 1


def test_constants_are_specialised_unless_the_kernel_opts_out():
    assert _with_constants(10) == 13 + 6 + 10 * (13 + 6 + 20)
    assert len(_shifted.signatures) == 2
    assert all(isinstance(t, types.Literal) for sig in _shifted.signatures for t in sig[1:])
    assert _shifted_plain.signatures == [(types.int64, types.int64, types.boolean)]


def test_run_lanes_covers_every_lane_once_whatever_the_thread_count():
    old = numba.get_num_threads()
    try:
        for threads in (1, 2):
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            for n, per in ((0, 1), (1, 1), (7, 1), (64, 1), (64, 16), (10, 100)):
                out = np.zeros(n, dtype=np.int64)
                calls = np.zeros(max(n, 1), dtype=np.int64)
                run_lanes(_lanes_kernel, n, out, calls, min_per_thread=per)
                np.testing.assert_array_equal(out, 2 * np.arange(n))
                expected = max(1, min(numba.get_num_threads(), n // per))
                assert calls.sum() == expected, (threads, n, per)
    finally:
        numba.set_num_threads(old)


@njit(cache=False, inline="always")
def _summed(x, k):
    y = x
    for i in range(k):
        y += i
    return y


@njit(cache=False, inline="always")
def _twice_summed(x):
    return _summed(x, 3) - _summed(x, 2)


@njit(cache=False)
def _inlines_three_times(x):
    return 100 * _summed(x, 3) + _summed(x + 1, 2) + 1000 * _twice_summed(x)


def test_inlined_callees_are_prepared_once_and_inlined_at_every_site():
    """``jit._MemoInlineInlinables``: one untyped IR per inlined function serves every call site,
    nested ones too, each site with variables of its own."""
    from kalooki_sim.core import jit
    assert jit._MEMO_INLINING == numba.__version__.startswith("0.68.")   # the numba it was copied from
    assert _inlines_three_times(5) == 100 * 8 + 7 + 1000 * 2
    if not jit._MEMO_INLINING:
        return
    assert _summed.py_func in jit._INLINE_IR and _twice_summed.py_func in jit._INLINE_IR
    assert not _summed.signatures                   # inlined everywhere, never called


def _kernel_files():
    root = Path(kalooki_sim.__file__).resolve().parent
    return sorted(root.rglob("*.py")) + sorted((root.parent / "agents").rglob("*.py"))


def test_no_kernel_of_the_package_is_parallel():
    """Batches run on threads (``lanes.run_lanes``): a ``prange`` or ``parallel=True`` kernel would
    compile the closed loop into a gufunc of its own again."""
    for path in _kernel_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                assert getattr(node.func, "id", None) != "prange", (path.name, node.lineno)
                assert not any(k.arg == "parallel" for k in node.keywords), (path.name, node.lineno)
