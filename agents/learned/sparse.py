"""The trunk's first product over the observation's non-zero entries only.

An observation has about 3,400 features and about 5 % of them are not zero in a real decision
(hand counts, the table's melds, the card features of the cards held), so the first layer's dense
product (``3419 x 256`` per row, most of a learned seat's cost in a tournament) mostly multiplies
zeros.  ``sparse_affine`` adds, for each non-zero feature, its row of the *transposed* weights:
about 190 contiguous rows of 256 floats per decision instead of the whole matrix.  The kernel
allocates nothing and runs over a range of rows, so ``lanes.run_lanes`` spreads a batch over the
threads (docs/benchmark-history.md has the figures).
"""

from __future__ import annotations

from kalooki_sim.core.jit import njit

__all__ = ["sparse_affine"]


@njit(_nrt=False)
def sparse_affine(x, wt, b, out, lo, hi):
    """``out[r] = b + x[r, :d] @ wt`` for rows ``lo .. hi - 1``, ``wt`` the ``(d, h)`` transposed
    weights (``x`` may be wider than ``d``: a network of an earlier layout reads its prefix),
    reading ``wt``'s row ``i`` only where ``x[r, i]`` is not zero."""
    d, h = wt.shape
    for r in range(lo, hi):
        for j in range(h):
            out[r, j] = b[j]
        for i in range(d):
            v = x[r, i]
            if v != 0.0:
                for j in range(h):
                    out[r, j] += v * wt[i, j]
