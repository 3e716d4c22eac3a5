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


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of the int64 ``x`` (compiled code only)."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(x)

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.ctpop(v)

    return sig, codegen


@intrinsic
def lowest_bit(typingctx, x):
    """Index of the lowest set bit of the int64 ``x`` (64 when ``x`` is 0; compiled code only)."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(x)

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.cttz(v, _I1_FALSE)

    return sig, codegen


@intrinsic
def highest_bit(typingctx, x):
    """Index of the highest set bit of the int64 ``x`` (-1 when ``x`` is 0; compiled code only)."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(x)

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.sub(ir.Constant(ir.IntType(64), 63), builder.ctlz(v, _I1_FALSE))

    return sig, codegen


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
