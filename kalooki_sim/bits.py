"""Bit tricks for the compiled kernels.

Run positions of a suit fit in one machine word (bits 1..14), so "how many of these positions are
held" is a popcount and "the first and last window start" are the lowest and highest set bits.
numba has none of these; they are the LLVM intrinsics, which the CPU answers in one instruction
each (``popcnt``, ``tzcnt``, ``lzcnt``) instead of a loop of shifts and tests.  ``float_bits``
reinterprets a float's bits, so a non-negative float can join an integer sort key.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["popcount", "lowest_bit", "highest_bit", "float_bits"]

_I1_FALSE = ir.Constant(ir.IntType(1), 0)


def _int64_intrinsic(name, emit, doc):
    """An intrinsic of one integer argument, cast to int64 and answered by ``emit(builder, v)``."""

    def typer(typingctx, x):
        if not isinstance(x, types.Integer):
            return None
        sig = types.int64(x)

        def codegen(context, builder, signature, args):
            return emit(builder, context.cast(builder, args[0], signature.args[0], types.int64))

        return sig, codegen

    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = doc
    return intrinsic(typer)


popcount = _int64_intrinsic(
    "popcount", lambda b, v: b.ctpop(v),
    "Number of set bits of the int64 ``x`` (compiled code only).")
lowest_bit = _int64_intrinsic(
    "lowest_bit", lambda b, v: b.cttz(v, _I1_FALSE),
    "Index of the lowest set bit of the int64 ``x`` (64 when ``x`` is 0; compiled code only).")
highest_bit = _int64_intrinsic(
    "highest_bit", lambda b, v: b.sub(ir.Constant(ir.IntType(64), 63), b.ctlz(v, _I1_FALSE)),
    "Index of the highest set bit of the int64 ``x`` (-1 when ``x`` is 0; compiled code only).")


@intrinsic
def float_bits(typingctx, x):
    """The IEEE-754 bits of the float64 ``x`` as an int64: for ``x >= 0`` they order like ``x``
    (compiled code only)."""
    if not isinstance(x, types.Float):
        return None
    sig = types.int64(x)

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[0], signature.args[0], types.float64)
        return builder.bitcast(v, ir.IntType(64))

    return sig, codegen
