"""``views.c_view`` is numba's reshape without the helper call, unchecked: it must give the same
view, and every shape the kernels pass it must cover exactly the slice it is cut from."""

import numpy as np

from kalooki_sim.core.jit import njit
from kalooki_sim.core.views import c_view
from kalooki_sim.engine import layout as L
from kalooki_sim.engine.state import State
from kalooki_sim.melds import search as S


@njit(cache=False)
def _views(ws, i8):
    a = c_view(ws[4:40], (6, 6))
    b = c_view(ws[40:100], (3, 4, 5))
    c = c_view(a, (36,))
    d = c_view(i8[2:], (2, 11))
    a[1, 2] = -7                     # a view: the write shows in ws
    return a, b, c, d


def test_c_view_is_the_reshaped_view():
    ws = np.arange(100, dtype=np.int64)
    i8 = np.arange(24, dtype=np.int8)
    want_a = ws[4:40].reshape(6, 6).copy()
    want_a[1, 2] = -7
    a, b, c, d = _views(ws, i8)
    assert ws[4 + 8] == -7
    for got, want in ((a, want_a), (b, ws[40:100].reshape(3, 4, 5)), (c, want_a.reshape(36)),
                      (d, i8[2:].reshape(2, 11))):
        assert got.shape == want.shape and got.strides == want.strides and got.dtype == want.dtype
        assert np.array_equal(got, want)
        assert np.shares_memory(got, ws if got.dtype == ws.dtype else i8)


def test_the_kernels_views_cover_their_slices_exactly():
    assert State.empty(1).work[0].size == L.W_LEN               # the engine's search scratch
    assert L.W_BEST - L.W_OUT == L.PLAN_MELDS * L.PLAN_REC     # ... its hypothetical plan
    assert S._WS_SCRATCH - S._WS_STACK == 2 * S.MAX_MELDS * S.REC
    assert S._WS_PICK - S._WS_DP == (S._DP_T + 1) * (S._DP_J + 1)
    assert S.WS_LEN - S._WS_PICK == 13 * (S._DP_T + 1) * (S._DP_J + 1)
