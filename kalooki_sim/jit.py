"""One project-wide numba wrapper so every kernel is compiled the same way.

``cache=True`` keeps compiled code on disk between processes (tests and CLI runs start in seconds
instead of recompiling); ``nogil`` lets the thread backend run kernels side by side.  No object
mode anywhere: a kernel that cannot be typed must fail loudly at compile time.

numba's cache only checks the file a kernel is defined in (numba 0.68 stamps it by a hash of its
source), not the modules it calls, so after an edit to the engine a cached rollout kernel would
silently run the old engine.
Unless ``NUMBA_CACHE_DIR`` is set, the cache therefore lives in a folder named after a hash of all
of the project's sources: any edit anywhere gives a fresh cache (one recompile), never a stale one.
Processes that fill the cache at the same time are made safe by ``jit_cache``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba
from numba.core import types
from numba.core.registry import CPUDispatcher

from . import jit_cache

__all__ = ["njit", "pnjit", "cache_dir"]

_ROOT = Path(__file__).resolve().parent


def _source_digest() -> str:
    h = hashlib.sha256()
    dirs = [_ROOT]
    if (_ROOT.parent / "pyproject.toml").is_file():     # a source checkout: agents/ sits beside us
        dirs.append(_ROOT.parent / "agents")
    for d in dirs:
        for p in sorted(d.rglob("*.py")):
            h.update(p.relative_to(d).as_posix().encode())
            h.update(p.read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> str:
    """Where compiled kernels are cached (``NUMBA_CACHE_DIR`` wins when set)."""
    return numba.config.CACHE_DIR


jit_cache.install()

# LLVM optimisation level of the kernels: -O2 rather than numba's default -O3.  The closed loop is
# one large, branchy kernel (engine step and greedy inlined) that -O3 makes bigger without making
# it faster: greedy Caribbean hands measured 7 % faster at -O2 than at -O3 (and 5 % slower at
# -O1), alternating on one core, with the same games.  Set before any kernel compiles; an explicit
# ``NUMBA_OPT`` wins.
OPT_LEVEL = 2
if "NUMBA_OPT" not in os.environ:
    numba.config.OPT = type(numba.config.OPT)(OPT_LEVEL)

if not os.environ.get("NUMBA_CACHE_DIR"):
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kalooki-sim" / "numba"
    # (the level in the name: numba's cache does not tell kernels compiled at different levels apart)
    numba.config.CACHE_DIR = str(base / f"{_source_digest()}-O{int(numba.config.OPT)}")


class _PlainArgsDispatcher(CPUDispatcher):
    """Types every call from another kernel with the literal types of its arguments erased, so
    the kernel is compiled once per real signature (``njit(specialise_constants=False)``)."""

    def get_call_template(self, args, kws):
        args = tuple(types.unliteral(a) for a in args)
        kws = {k: types.unliteral(v) for k, v in kws.items()}
        return super().get_call_template(args, kws)


def njit(fn=None, *, specialise_constants=True, **kw):
    """``numba.njit`` with the project defaults (cache, nogil, no object mode).

    ``_nrt=False`` (hot kernels that allocate nothing and return no arrays) compiles a kernel
    without reference counting: every call of a kernel with k array arguments otherwise costs ~2k
    atomic increments/decrements, more than many small kernels do.  numba lets callees inherit the
    caller's setting unless they state their own, so every kernel states it (default on).

    numba compiles a kernel again for every constant another kernel passes it (``check_action``
    with each action constant: 16 overloads in a cold rollout compile).  Those copies cost about
    160 s of that compile, but they are specialised: erasing the literal types made greedy
    Caribbean hands about 6 % slower (six alternations), so they stay.  ``specialise_constants=False``
    erases them for one kernel, for callees whose constant-argument copies are dead code: the
    manipulation checks ``check_action`` reaches only for table actions, never for the flow
    actions greedy asks it about by constant.

    ``error_model="numpy"``: an integer division or modulo by a value the compiler cannot prove
    non-zero is not preceded by a test that raises ``ZeroDivisionError`` (the kernels divide by
    constants, player counts and round counts, which ``rules`` checks are positive).  Greedy
    Caribbean hands ran 1-4 % faster without those tests, with the same games
    (``benchmarks/compare_builds.py``, two runs of 40 rounds on a noisy machine: faster in 34 and
    24 rounds, median rounds 1.035 and 1.025)."""
    opts = dict(cache=True, nogil=True, _nrt=True, error_model="numpy")
    opts.update(kw)

    def compile_(f):
        disp = numba.njit(**opts)(f)
        if not specialise_constants and type(disp) is CPUDispatcher:   # (not under NUMBA_DISABLE_JIT)
            disp.__class__ = _PlainArgsDispatcher
        return disp

    return compile_ if fn is None else compile_(fn)


def pnjit(fn=None, **kw):
    """Parallel variant for kernels with a ``numba.prange`` loop over games.

    numba types a ``prange`` index as int64 when it types the kernel and as uint64 when it compiles
    the parallel body, so a kernel called with the raw index is compiled twice, with every callee
    (a cold rollout compile spent 515 of its 1,187 s on the second ``_play_game``).  Loops
    therefore pass ``np.uint64(i)`` on: one compile, the same code the parallel body ran before."""
    return njit(fn, parallel=True, **kw)
