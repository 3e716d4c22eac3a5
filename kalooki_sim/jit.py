"""One project-wide numba wrapper so every kernel is compiled the same way.

``cache=True`` keeps compiled code on disk between processes (tests and CLI runs start in about a
second instead of recompiling); ``nogil`` lets the thread backend run kernels side by side.  No
object mode anywhere: a kernel that cannot be typed must fail loudly at compile time.
"""

from __future__ import annotations

import numba

__all__ = ["njit", "pnjit"]


def njit(fn=None, **kw):
    """``numba.njit`` with the project defaults (cache, nogil, no object mode)."""
    opts = dict(cache=True, nogil=True)
    opts.update(kw)
    if fn is None:
        return lambda f: numba.njit(**opts)(f)
    return numba.njit(**opts)(fn)


def pnjit(fn=None, **kw):
    """Parallel variant for kernels with a ``numba.prange`` loop over games."""
    return njit(fn, parallel=True, **kw)
