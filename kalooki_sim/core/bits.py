"""Bit tricks for the compiled kernels.

Run positions of a suit fit in one machine word (bits 1..14), so "how many of these positions are
held" is a popcount and "the first and last window start" are the lowest and highest set bits.
numba has none of these; they are the LLVM intrinsics, which the CPU answers in one instruction
each (``popcnt``, ``tzcnt``, ``lzcnt``) instead of a loop of shifts and tests.  ``float_bits``
reinterprets a float's bits, so a non-negative float can join an integer sort key.
``positive_bits8`` (``twice_bits8``) answers "which of these eight counts are positive (two or
more)" for a hand of int8 counts with one 8-byte load and a few word operations instead of eight
loads and compares; ``ranks_above`` counts the ranks holding more than c naturals with eight loads
instead of 52.  The naturals per rank, packed a byte per rank into two words
(``rank_count_words``), are added, subtracted (``spread_bits8``) and compared
(``rank_tops_above``, whose byte masks ``byte_tops`` turns into rank bits) thirteen ranks at a
time.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

from .jit import njit

__all__ = ["popcount", "lowest_bit", "highest_bit", "float_bits", "positive_bits8", "twice_bits8",
           "byte_tops", "word8",
           "rank_count_words", "rank_count_of", "rank_tops_above", "ranks_above_words",
           "ranks_above_masked", "ranks_above", "spread_bits8"]

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


_BYTE_LOW_BITS = 0x0101010101010101
_GATHER_BYTE_BITS = 0x0102040810204080   # bit 0 of byte k -> bit 56 + k of the product


def _element_pointer(builder, context, arr_type, arr, start, start_type):
    """Address of ``arr[start]`` (a C-contiguous 1-D array) in an intrinsic's code."""
    a = context.make_array(arr_type)(context, builder, arr)
    return builder.gep(a.data, [context.cast(builder, start, start_type, types.intp)])


def _bits8_intrinsic(name, at_least, doc):
    """An intrinsic ``f(arr, start)``: bit k set when ``arr[start + k] >= at_least`` (1 or 2), k =
    0..7, for a C-contiguous 1-D integer array holding ``start + 7``.

    For int8 (the engine's hands) the eight counts are one little-endian 8-byte load: the bits of
    each byte that matter (0..6 for ``>= 1``, 1..6 for ``>= 2``) are folded onto its bit 0, which
    is cleared where the byte's sign bit is set, and a multiply gathers the eight bit-0s into the
    top byte.  Other integer types load the eight counts."""
    keep = {1: 0x7F7F7F7F7F7F7F7F, 2: 0x7E7E7E7E7E7E7E7E}[at_least]

    def typer(typingctx, arr, start):
        if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.layout == "C"
                and isinstance(arr.dtype, types.Integer) and isinstance(start, types.Integer)):
            return None
        sig = types.int64(arr, start)

        def codegen(context, builder, signature, args):
            i64 = ir.IntType(64)
            p = _element_pointer(builder, context, signature.args[0], args[0], args[1],
                                 signature.args[1])
            if signature.args[0].dtype == types.int8:
                x = builder.load(builder.bitcast(p, i64.as_pointer()), align=1)
                nz = builder.and_(x, ir.Constant(i64, keep))
                for k in (4, 2, 1):
                    nz = builder.or_(nz, builder.lshr(nz, ir.Constant(i64, k)))
                sign = builder.lshr(x, ir.Constant(i64, 7))
                pos = builder.and_(builder.and_(nz, builder.not_(sign)),
                                   ir.Constant(i64, _BYTE_LOW_BITS))
                return builder.lshr(builder.mul(pos, ir.Constant(i64, _GATHER_BYTE_BITS)),
                                    ir.Constant(i64, 56))
            out = ir.Constant(i64, 0)
            for k in range(8):
                v = builder.load(builder.gep(p, [ir.Constant(ir.IntType(64), k)]))
                ge = builder.icmp_signed(">=", v, ir.Constant(v.type, at_least))
                out = builder.or_(out, builder.shl(builder.zext(ge, i64), ir.Constant(i64, k)))
            return out

        return sig, codegen

    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = doc
    return intrinsic(typer)


positive_bits8 = _bits8_intrinsic(
    "positive_bits8", 1,
    "Bit k set when ``arr[start + k] > 0``, k = 0..7 (``arr``: a C-contiguous 1-D integer array "
    "holding ``start + 7``; compiled code only).")
twice_bits8 = _bits8_intrinsic(
    "twice_bits8", 2,
    "Bit k set when ``arr[start + k] >= 2``, k = 0..7 (``arr``: a C-contiguous 1-D integer array "
    "holding ``start + 7``; compiled code only).")


@intrinsic
def byte_tops(typingctx, x):
    """Bit 7 of byte k of the int64 ``x`` as bit k of the result (``x``'s other bits must be clear,
    as in ``rank_tops_above``' masks; compiled code only): a logical shift and one multiply, both
    LLVM's own (numba's shift of an int64 is arithmetic, and its signed multiply lets LLVM assume
    no overflow, which it then folds wrongly)."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(x)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        v = builder.lshr(context.cast(builder, args[0], signature.args[0], types.int64),
                         ir.Constant(i64, 7))
        return builder.lshr(builder.mul(v, ir.Constant(i64, _GATHER_BYTE_BITS)), ir.Constant(i64, 56))

    return sig, codegen


@intrinsic
def word8(typingctx, arr, start):
    """``arr[start:start + 8]`` of an int8 or bool C array as one little-endian int64 (byte k =
    ``arr[start + k]``, a bool 0 or 1; the array must hold ``start + 7``; compiled code only)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.layout == "C"
            and arr.dtype in (types.int8, types.boolean) and isinstance(start, types.Integer)):
        return None
    sig = types.int64(arr, start)

    def codegen(context, builder, signature, args):
        p = _element_pointer(builder, context, signature.args[0], args[0], args[1], signature.args[1])
        return builder.load(builder.bitcast(p, ir.IntType(64).as_pointer()), align=1)

    return sig, codegen


_BYTE_TOPS = np.int64(-0x7F7F7F7F7F7F7F80)          # 0x8080808080808080: each byte's top bit
_BYTE_TOPS_HI5 = np.int64(-0x7F7F7F7F80000000)      # ... of bytes 3..7 only


def rank_count_words(hand):
    """The naturals of each rank of ``hand`` (counts by card type, each 0..31, suit-major as
    ``cards``) as bytes of two words: rank r in byte r of the first (r < 8) and in byte r - 5 of
    the second (r >= 5); compiled code only.

    int8 counts (the engine's hands) are eight word loads, the four suits' words added bytewise
    (at most 124 a byte, so no byte carries into the next); counts of other types (the search's
    int64 hands) are summed rank by rank."""
    raise NotImplementedError("rank_count_words is for compiled code")


@overload(rank_count_words, inline="always")
def _rank_count_words(hand):
    if not (isinstance(hand, types.Array) and isinstance(hand.dtype, types.Integer)):
        return None
    if hand.dtype == types.int8 and hand.ndim == 1 and hand.layout == "C":
        def words(hand):
            lo = word8(hand, 0) + word8(hand, 13) + word8(hand, 26) + word8(hand, 39)
            hi = word8(hand, 5) + word8(hand, 18) + word8(hand, 31) + word8(hand, 44)
            return lo, hi
        return words

    def sums(hand):
        lo = np.int64(0)
        hi = np.int64(0)
        for r in range(13):
            c = np.int64(hand[r] + hand[13 + r] + hand[26 + r] + hand[39 + r])
            if r < 8:
                lo |= c << (8 * r)
            if r >= 5:
                hi |= c << (8 * (r - 5))
        return lo, hi
    return sums


@njit(_nrt=False, inline="always")
def rank_count_of(lo, hi, r):
    """Rank ``r``'s count from ``rank_count_words``."""
    return (lo >> (8 * r)) & 0xFF if r < 8 else (hi >> (8 * (r - 5))) & 0xFF


@njit(_nrt=False, inline="always")
def rank_tops_above(lo, hi, c):
    """The ranks of ``rank_count_words`` holding more than ``c`` (0..127) naturals, as the top
    bits of their bytes in two masks (ranks 0..7, ranks 8..12 in bytes 3..7): adding ``127 - c``
    to every byte sets its top bit exactly when its rank holds more than ``c``."""
    add = (127 - np.int64(c)) * 0x0101010101010101
    return (lo + add) & _BYTE_TOPS, (hi + add) & _BYTE_TOPS_HI5


@njit(_nrt=False, inline="always")
def ranks_above_words(lo, hi, c):
    """How many ranks of ``rank_count_words`` hold more than ``c`` (0..127) naturals."""
    tops_lo, tops_hi = rank_tops_above(lo, hi, c)
    return popcount(tops_lo) + popcount(tops_hi)


@njit(_nrt=False, inline="always")
def ranks_above_masked(lo, hi, c, tops_lo, tops_hi):
    """``ranks_above_words`` over the ranks in the masks ``tops_lo``/``tops_hi``
    (``rank_tops_above``' form)."""
    above_lo, above_hi = rank_tops_above(lo, hi, c)
    return popcount(above_lo & tops_lo) + popcount(above_hi & tops_hi)


@njit(_nrt=False, inline="always")
def ranks_above(hand, c):
    """How many ranks hold more than ``c`` (0..127) naturals in ``hand`` (int8 counts by card type,
    each 0..31, suit-major as ``cards``), from eight word loads instead of 52 element loads."""
    lo, hi = rank_count_words(hand)
    return ranks_above_words(lo, hi, c)


_SPREAD_BITS7 = np.int64(0x0040201008040201)       # bit k of byte k, k < 7
_LOW7 = np.int64(0x7F7F7F7F7F7F7F7F)


@njit(_nrt=False, inline="always")
def spread_bits8(x):
    """Bit k of ``x`` (0..255) as byte k (0 or 1) of a word, to add or subtract bytewise: the
    multiply copies bits 0..6 into every byte, the mask keeps bit k in byte k, adding 127 carries
    it to the byte's top bit and the shift brings that to its bit 0; bit 7 is moved on its own
    (every intermediate value stays below 2**63: a copy of bit 7 into the sign bit let LLVM fold
    it away in a loop)."""
    t = ((x & 0x7F) * 0x0101010101010101) & _SPREAD_BITS7
    return (((t + _LOW7) >> 7) & 0x0101010101010101) | (((x >> 7) & 1) << 56)
