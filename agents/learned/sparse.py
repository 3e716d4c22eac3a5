"""The trunk's first product over the observation's non-zero entries only.

An observation has about 3,400 features and about 5 % of them are not zero in a real decision
(hand counts, the table's melds, the card features of the cards held), so the first layer's dense
product (``3419 x 256`` per row, most of a learned seat's cost in a tournament) mostly multiplies
zeros.  ``sparse_affine`` adds, for each non-zero feature, its row of the *transposed* weights:
about 130 contiguous rows of 256 floats per decision instead of the whole matrix.

About half of those entries are the same in every row of a batch (the rules' scalars, every card
type's penalty: one variant's decisions share them), so ``fold_shared`` adds their product to the
bias once per batch and ``sparse_affine`` skips them.  The kernels allocate nothing and
``sparse_affine`` runs over a range of rows, so ``lanes.run_lanes`` spreads a batch over the
threads; they read the rows of ``x`` that ``rows`` lists, so the caller need not copy the
environment's observation buffer (docs/benchmark-history.md has the figures).
"""

from __future__ import annotations

from kalooki_sim.core.jit import njit

__all__ = ["fold_shared", "sparse_affine"]


@njit(_nrt=False)
def fold_shared(x, rows, wt, b, shared, bias):
    """``bias = b + v_i * wt[i]`` summed over the features ``i`` that hold the same non-zero value
    ``v_i`` in every row ``x[rows[k]]`` (``shared[i]`` set for them, cleared for the others)."""
    d, h = wt.shape
    for j in range(h):
        bias[j] = b[j]
    for i in range(d):
        shared[i] = False
    if rows.shape[0] == 0:
        return
    r0 = rows[0]
    for i in range(d):
        v = x[r0, i]
        if v == 0.0:
            continue
        same = True
        for k in range(1, rows.shape[0]):
            if x[rows[k], i] != v:
                same = False
                break
        if same:
            shared[i] = True
            for j in range(h):
                bias[j] += v * wt[i, j]


@njit(_nrt=False)
def sparse_affine(x, rows, wt, bias, shared, out, lo, hi):
    """``out[k] = bias + x[rows[k], :d] @ wt`` for ``k`` in ``lo .. hi - 1`` over the features not
    ``shared`` (``fold_shared`` put those in ``bias``), ``wt`` the ``(d, h)`` transposed weights
    (``x`` may be wider than ``d``: a network of an earlier layout reads its prefix), reading
    ``wt``'s row ``i`` only where ``x[rows[k], i]`` is not zero."""
    d, h = wt.shape
    for k in range(lo, hi):
        r = rows[k]
        for j in range(h):
            out[k, j] = bias[j]
        for i in range(d):
            v = x[r, i]
            if v != 0.0 and not shared[i]:
                for j in range(h):
                    out[k, j] += v * wt[i, j]
