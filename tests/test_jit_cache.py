"""The kernel cache stays correct when several processes fill it at once (``kalooki_sim.jit_cache``).

Without the patch, two processes saving different overloads of one kernel could both name theirs
``<fn>.1.nbc``; the index then sent one signature to the other's machine code and every later
process crashed loading it (what broke CI under ``pytest -n 2``).  Kernels compiled at different
optimisation levels never share a folder either.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

from numba.core import caching

import kalooki_sim.jit  # noqa: F401  (installs the patch, as importing any kernel does)
from kalooki_sim import jit_cache

BASE = "search._leaf-182.py311"
STAMP = ("stamp", 1)

WRITER = textwrap.dedent(
    """
    import os, sys, time
    import kalooki_sim.jit
    from numba.core import caching
    path, go, order = sys.argv[1], sys.argv[2], sys.argv[3]
    keys = list(range(150))
    if order == "reversed":
        keys.reverse()
    cf = caching.IndexDataCacheFile(path, {base!r}, {stamp!r})
    while not os.path.exists(go):
        time.sleep(0.001)
    for k in keys:
        cf.save(("sig", k), ("code of", k, "x" * 2000))
    """
).format(base=BASE, stamp=STAMP)


def test_numba_cache_save_is_patched():
    assert caching.IndexDataCacheFile.save is jit_cache._save


def test_distinct_keys_get_distinct_files_and_same_key_same_file(tmp_path):
    a = caching.IndexDataCacheFile(str(tmp_path), BASE, STAMP)
    b = caching.IndexDataCacheFile(str(tmp_path), BASE, STAMP)
    names = {jit_cache.data_name(a, ("sig", k)) for k in range(200)}
    assert len(names) == 200
    assert jit_cache.data_name(a, ("sig", 7)) == jit_cache.data_name(b, ("sig", 7))


def test_a_stale_index_cannot_point_a_key_at_another_keys_code(tmp_path):
    """The interleaving that broke numba: B decides its file name from an index read before A saved."""
    a = caching.IndexDataCacheFile(str(tmp_path), BASE, STAMP)
    b = caching.IndexDataCacheFile(str(tmp_path), BASE, STAMP)
    a.save(("sig", 1), "code of 1")
    b._load_index = lambda: {}          # B never saw A's entry
    b.save(("sig", 2), "code of 2")
    reader = caching.IndexDataCacheFile(str(tmp_path), BASE, STAMP)
    assert reader.load(("sig", 2)) == "code of 2"
    assert reader.load(("sig", 1)) in (None, "code of 1")     # dropped is fine, wrong is not
    assert a._load_data(jit_cache.data_name(a, ("sig", 1))) == "code of 1"


def test_two_processes_filling_one_cache_at_once(tmp_path):
    cache, go = tmp_path / "cache", tmp_path / "go"
    cache.mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(cache), str(go), order])
             for order in ("forward", "reversed")]
    time.sleep(1.0)                     # both started and waiting
    go.touch()
    for p in procs:
        assert p.wait(timeout=120) == 0
    reader = caching.IndexDataCacheFile(str(cache), BASE, STAMP)
    for k in range(150):
        assert reader.load(("sig", k)) == ("code of", k, "x" * 2000), k


_OPT_PROBE = ("import numba, kalooki_sim.jit as j; "
              "print(int(numba.config.OPT), j.cache_dir().rsplit('-', 1)[-1])")


def _opt_probe(**env_changes):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_OPT", "NUMBA_CACHE_DIR")}
    env.update(env_changes)
    out = subprocess.run([sys.executable, "-c", _OPT_PROBE], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    return int(out[0]), out[1]


def test_kernels_compile_at_O2_in_a_folder_named_after_the_level(tmp_path):
    """``kalooki_sim.jit`` compiles the kernels at LLVM -O2 (it measured faster than numba's -O3)
    and names the cache folder after the level, so kernels of two levels never share a folder; an
    explicit ``NUMBA_OPT`` wins."""
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    assert _opt_probe(**env) == (2, "O2")
    assert _opt_probe(NUMBA_OPT="3", **env) == (3, "O3")
