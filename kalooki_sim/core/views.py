"""Array views for the compiled kernels without numba's reshape.

The engine keeps its search scratch inside the plan array and the search cuts its workspace into
tables, so both take views of other shapes several times a turn.  numba's ``reshape`` calls a C
helper (``numba_attempt_nocopy_reshape``) every time, about 50 ns a call: 1 % of a greedy
Caribbean hand went to it.  ``c_view`` builds the view's shape and strides in place instead.
"""

from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

__all__ = ["c_view"]


@intrinsic
def c_view(typingctx, arr, shape):
    """``arr.reshape(shape)`` for a C-contiguous ``arr`` and a tuple ``shape`` whose product is
    ``arr.size``, as a C-contiguous view (compiled code only).

    Unchecked: the shapes are the layouts' constants, which the tests hold equal to the sizes
    (``tests/test_views.py``)."""
    if not (isinstance(arr, types.Array) and arr.layout == "C"
            and isinstance(shape, types.UniTuple) and isinstance(shape.dtype, types.Integer)):
        return None
    ndim = shape.count
    view_type = arr.copy(ndim=ndim, layout="C")
    sig = view_type(arr, shape)

    def codegen(context, builder, signature, args):
        src = make_array(signature.args[0])(context, builder, args[0])
        view = make_array(view_type)(context, builder)
        dims = [context.cast(builder, d, signature.args[1].dtype, types.intp)
                for d in cgutils.unpack_tuple(builder, args[1], ndim)]
        strides = [src.itemsize]
        for d in reversed(dims[1:]):
            strides.insert(0, builder.mul(strides[0], d))
        populate_array(view, data=src.data, shape=dims, strides=strides, itemsize=src.itemsize,
                       meminfo=src.meminfo, parent=src.parent)
        return impl_ret_borrowed(context, builder, view_type, view._getvalue())

    return sig, codegen
