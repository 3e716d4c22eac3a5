"""Bit tricks for the compiled kernels.

Run positions of a suit fit in one machine word (bits 1..14), so "how many of these positions are
held" is a popcount.  numba has no popcount of its own; this one is the LLVM intrinsic, which the
CPU answers in one instruction (``popcnt``) instead of a dozen shifts and masks.
"""

from __future__ import annotations

from numba import types
from numba.extending import intrinsic

__all__ = ["popcount"]


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
