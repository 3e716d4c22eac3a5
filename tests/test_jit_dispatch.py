"""How many times a kernel called from other kernels is compiled (``kalooki_sim.jit``).

numba types a ``prange`` index as int64 when it types the kernel and as uint64 when it compiles
the parallel body: a callee given the raw index was compiled for both, and for the closed loop
that is the whole engine and greedy twice (515 of 1,187 s of a cold rollout compile).  A constant
argument gets a compile of its own (kept where it speeds the loop up, erased where those copies
are dead code).  The small kernels here are not cached, so their dispatchers list exactly what
this process compiled.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
from numba import prange
from numba.core import types

import kalooki_sim
from kalooki_sim.jit import njit, pnjit


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
def _row_value(g):
    return g * 2


@pnjit(cache=False)
def _rows(out):
    for i in prange(out.shape[0]):
        g = np.uint64(i)
        out[g] = _row_value(g)


def test_constants_are_specialised_unless_the_kernel_opts_out():
    assert _with_constants(10) == 13 + 6 + 10 * (13 + 6 + 20)
    assert len(_shifted.signatures) == 2
    assert all(isinstance(t, types.Literal) for sig in _shifted.signatures for t in sig[1:])
    assert _shifted_plain.signatures == [(types.int64, types.int64, types.boolean)]


def test_a_converted_prange_index_compiles_the_callee_once():
    out = np.zeros(5, dtype=np.int64)
    _rows(out)
    np.testing.assert_array_equal(out, 2 * np.arange(5))
    assert _row_value.signatures == [(types.uint64,)]


def _prange_loops():
    root = Path(kalooki_sim.__file__).resolve().parent
    files = sorted(root.rglob("*.py")) + sorted((root.parent / "agents").rglob("*.py"))
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.For) and isinstance(node.iter, ast.Call)
                    and getattr(node.iter.func, "id", None) == "prange"):
                yield path.name, node


def test_every_prange_loop_of_the_package_converts_its_index_first():
    loops = list(_prange_loops())
    assert {name for name, _ in loops} >= {"loop.py", "batch.py"}
    for name, loop in loops:
        index = loop.target.id
        first = loop.body[0]
        assert ast.unparse(first.value) == f"np.uint64({index})", (name, loop.lineno)
        uses = [n for stmt in loop.body[1:] for n in ast.walk(stmt)
                if isinstance(n, ast.Name) and n.id == index]
        assert not uses, (name, loop.lineno, "the raw prange index is used after its conversion")
