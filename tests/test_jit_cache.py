"""The project's kernel cache: where it lives, when it is fresh, and that it stays correct when
several processes fill it at once (``kalooki_sim.core.jit``, ``kalooki_sim.core.jit_cache``).

Without the safe writer, two processes saving different overloads of one kernel could both name
theirs ``<fn>.1.nbc``; the index then sent one signature to the other's machine code and every
later process crashed loading it (what broke CI under ``pytest -n 2``).  Kernels compiled at
different optimisation levels never share a folder either.  None of it may leak into the numba
functions of other code in the same process.
"""

from __future__ import annotations

import gc
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from numba.core import caching

from kalooki_sim.core import jit, jit_cache

BASE = "search._leaf-182.py311"
STAMP = ("stamp", 1)
SafeFile = jit_cache.SafeIndexDataCacheFile

WRITER = textwrap.dedent(
    """
    import os, sys, time
    from kalooki_sim.core.jit_cache import SafeIndexDataCacheFile
    path, go, order = sys.argv[1], sys.argv[2], sys.argv[3]
    keys = list(range(150))
    if order == "reversed":
        keys.reverse()
    cf = SafeIndexDataCacheFile(path, {base!r}, {stamp!r})
    while not os.path.exists(go):
        time.sleep(0.001)
    for k in keys:
        cf.save(("sig", k), ("code of", k, "x" * 2000))
    """
).format(base=BASE, stamp=STAMP)


def _clean_env(**changes):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_OPT", "NUMBA_CACHE_DIR")}
    env.update(changes)
    return env


def _run(code, **env_changes):
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=_clean_env(**env_changes),
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_importing_the_package_changes_no_numba_setting(tmp_path):
    """numba's OPT, CACHE_DIR and cache classes are the same before and after importing the
    package and its kernels and running one of them (a clean interpreter)."""
    out = _run("""
        import numba
        from numba.core import caching
        def snapshot():
            return (repr(numba.config.OPT), repr(numba.config.CACHE_DIR),
                    caching.IndexDataCacheFile.save, caching.IndexDataCacheFile,
                    caching.FunctionCache, caching.FunctionCache._impl_class,
                    tuple(caching.CacheImpl._locator_classes),
                    tuple(caching.CompileResultCacheImpl._locator_classes))
        before = snapshot()
        import kalooki_sim, kalooki_sim.runtime.rollout
        from kalooki_sim.core.rng import rng_key
        import numpy as np
        rng_key(1, 2, 3)                               # compiled (or loaded) at the project's level
        after = snapshot()
        assert before == after, (before, after)
        print("ok", before[0], before[1])
    """, XDG_CACHE_HOME=str(tmp_path))
    assert out.split() == ["ok", "_OptLevel(3)", "''"]


USER_MODULE = """
import numba
from kalooki_sim.core.jit import njit


@njit
def project_kernel(x):
    return x + 1


@numba.njit(cache=True)
def user_function(x):
    return x + 2
"""

CALLER = """
    import sys
    sys.path.insert(0, {src!r})
    import mod
    from kalooki_sim.core.jit import cache_dir
    assert mod.project_kernel(1) == 2 and mod.user_function(1) == 3
    print(cache_dir())
    print(sum(mod.project_kernel.stats.cache_hits.values()), sum(mod.user_function.stats.cache_hits.values()))
"""


def _user_module(tmp_path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "mod.py").write_text(USER_MODULE)
    return src


def test_project_kernels_cache_in_the_project_folder_user_functions_where_numba_puts_them(tmp_path):
    src = _user_module(tmp_path)
    home = tmp_path / "home"
    first = _run(CALLER.format(src=str(src)), XDG_CACHE_HOME=str(home)).splitlines()
    folder = Path(first[0])
    assert folder.parent == home / "kalooki-sim" / "numba" and folder.name.endswith("-O2")
    assert first[1] == "0 0"
    project = {p.name for p in folder.rglob("*.nbi")}
    in_tree = {p.name for p in (src / "__pycache__").glob("*.nbi")}   # numba's default locator
    assert any(n.startswith("mod.project_kernel-") for n in project)
    assert not any("user_function" in n for n in project)
    assert any(n.startswith("mod.user_function-") for n in in_tree)
    assert not any("project_kernel" in n for n in in_tree)
    data = [p.name for p in folder.rglob("*.nbc")]
    assert data and all(re.fullmatch(r"mod\.project_kernel-\d+\.py\d+\.[0-9a-f]{20}\.nbc", n)
                        for n in data)                                 # named by the safe writer
    assert [p.name for p in (src / "__pycache__").glob("*.nbc")] == [
        next(n for n in in_tree).replace(".nbi", ".1.nbc")]            # numba's own naming
    second = _run(CALLER.format(src=str(src)), XDG_CACHE_HOME=str(home)).splitlines()
    assert second == [first[0], "1 1"]                                 # both loaded from disk


def test_numba_cache_dir_wins_for_the_project_kernels(tmp_path):
    src = _user_module(tmp_path)
    out = _run(CALLER.format(src=str(src)), NUMBA_CACHE_DIR=str(tmp_path / "nc")).splitlines()
    assert out[0] == str(tmp_path / "nc")
    assert {p.name.split("-")[0] for p in (tmp_path / "nc").rglob("*.nbi")} == {
        "mod.project_kernel", "mod.user_function"}


def test_numba_cache_classes_are_untouched():
    assert caching.IndexDataCacheFile.save is not SafeFile.save
    assert caching.FunctionCache._impl_class is caching.CompileResultCacheImpl
    assert jit._KernelCacheLocator not in caching.CacheImpl._locator_classes


def test_distinct_keys_get_distinct_files_and_same_key_same_file(tmp_path):
    a = SafeFile(str(tmp_path), BASE, STAMP)
    b = SafeFile(str(tmp_path), BASE, STAMP)
    names = {jit_cache.data_name(a, ("sig", k)) for k in range(200)}
    assert len(names) == 200
    assert jit_cache.data_name(a, ("sig", 7)) == jit_cache.data_name(b, ("sig", 7))


def test_a_stale_index_cannot_point_a_key_at_another_keys_code(tmp_path):
    """The interleaving that broke numba: B decides its file name from an index read before A saved."""
    a = SafeFile(str(tmp_path), BASE, STAMP)
    b = SafeFile(str(tmp_path), BASE, STAMP)
    a.save(("sig", 1), "code of 1")
    b._load_index = lambda: {}          # B never saw A's entry
    b.save(("sig", 2), "code of 2")
    reader = SafeFile(str(tmp_path), BASE, STAMP)
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
    reader = SafeFile(str(cache), BASE, STAMP)
    for k in range(150):
        assert reader.load(("sig", k)) == ("code of", k, "x" * 2000), k


_OPT_PROBE = ("import numba, kalooki_sim.core.jit as j; "
              "print(int(numba.config.OPT), j._opt_level(), j.cache_dir().rsplit('-', 1)[-1])")


def _opt_probe(**env_changes):
    out = subprocess.run([sys.executable, "-c", _OPT_PROBE], env=_clean_env(**env_changes),
                         capture_output=True, text=True, check=True).stdout.split()
    return int(out[0]), int(out[1]), out[2]


def test_the_kernels_level_names_the_folder_and_numba_opt_wins(tmp_path):
    """Kernels compile at -O2 in a folder named after the level, numba's own setting untouched;
    an explicit ``NUMBA_OPT`` wins."""
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    assert _opt_probe(**env) == (3, 2, "O2")
    assert _opt_probe(NUMBA_OPT="3", **env) == (3, 3, "O3")
    assert _opt_probe(NUMBA_OPT="1", **env) == (1, 1, "O1")


IR_PROBE = """
    import re, numba, numpy as np
    from kalooki_sim.core.jit import njit

    def source(a, flag, n):
        s = 0
        for i in range(n):
            s = s + a[i] * 3 if flag else s ^ a[i]
            for j in range(4):
                s += (a[(i + j) % n] >> j) if flag else j
        return s

    def ir(disp):
        disp(np.arange(10), True, 10)
        text = disp.inspect_llvm(disp.signatures[0])
        return [re.sub(r'"?_ZN[^ ,(]*', "F", line) for line in text.splitlines()
                if "Environment" not in line and not line.startswith(";")]

    def plain(level):
        numba.config.OPT = type(numba.config.OPT)(level)
        return ir(numba.njit(nogil=True, error_model="numpy")(source))

    project = ir(njit(cache=False)(source))          # first, with numba at its default -O3
    assert int(numba.config.OPT) == 3
    o2, o3 = plain(2), plain(3)
    print(project == o2, project == o3, o2 == o3)
"""


def test_a_project_kernel_is_optimised_at_O2_without_numbas_setting():
    """``KernelDispatcher`` compiles at -O2 while numba stays at -O3: the kernel's optimised LLVM IR
    is the one numba makes at -O2.  (The machine-code backend's level stays numba's: numba makes
    its target machine once per process.)  Fails if numba stops reading ``config.OPT`` when it
    builds a pass pipeline."""
    assert _run(IR_PROBE).split() == ["True", "False", "False"]


def _copy_tree(dst: Path) -> Path:
    root = jit._ROOT
    shutil.copytree(root, dst / "kalooki_sim", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(root.parent / "agents", dst / "agents", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(root.parent / "pyproject.toml", dst / "pyproject.toml")
    return dst


def _digest_of(tree: Path, monkeypatch) -> str:
    monkeypatch.setattr(jit, "_ROOT", tree / "kalooki_sim")
    monkeypatch.setattr(jit, "_AGENTS", tree / "agents")
    return jit._source_digest()


def _append(path: Path) -> None:
    with open(path, "a") as fh:
        fh.write("\n# edited\n")


def test_the_digest_covers_the_kernel_modules_and_what_they_import(tmp_path, monkeypatch):
    tree = _copy_tree(tmp_path)
    d0 = _digest_of(tree, monkeypatch)
    for untouched in ("cli.py", "studies/simulate.py", "analysis/stats.py", "runtime/replay.py", "studies/records.py",
                      "runtime/game.py",
                      "melds/api.py", "testing.py", "__init__.py"):
        _append(tree / "kalooki_sim" / untouched)
        assert _digest_of(tree, monkeypatch) == d0, untouched
    for touched in ("kalooki_sim/core/rulevec.py", "kalooki_sim/engine/layout.py", "kalooki_sim/engine/match.py",
                    "kalooki_sim/engine/core.py", "agents/compiled.py", "agents/base.py",
                    "kalooki_sim/core/views.py", "kalooki_sim/core/jit.py"):
        before = _digest_of(tree, monkeypatch)
        _append(tree / touched)
        assert _digest_of(tree, monkeypatch) != before, touched


def test_a_module_joins_the_digest_when_a_kernel_module_imports_it(tmp_path, monkeypatch):
    tree = _copy_tree(tmp_path)
    consts = tree / "kalooki_sim" / "consts.py"
    consts.write_text("LIMIT = 3\n")
    d0 = _digest_of(tree, monkeypatch)
    consts.write_text("LIMIT = 4\n")
    assert _digest_of(tree, monkeypatch) == d0                         # nothing imports it yet
    with open(tree / "kalooki_sim" / "core" / "rng.py", "a") as fh:
        fh.write("\nfrom ..consts import LIMIT\n")
    d1 = _digest_of(tree, monkeypatch)
    consts.write_text("LIMIT = 5\n")
    assert _digest_of(tree, monkeypatch) != d1


def test_every_module_with_kernels_is_in_the_digest():
    """Detection by content agrees with the kernels this process actually has."""
    import kalooki_sim.engine.batch  # noqa: F401
    import kalooki_sim.runtime.loop  # noqa: F401
    import kalooki_sim.runtime.rollout  # noqa: F401

    root = jit._ROOT.parent
    sources = set(jit.kernel_sources())
    files = {Path(o.py_func.__code__.co_filename).resolve() for o in gc.get_objects()
             if isinstance(o, jit.KernelDispatcher)}
    files = {f for f in files if f.is_relative_to(root) and not f.is_relative_to(root / "tests")}
    assert len(files) >= 10
    assert files <= sources, files - sources
    assert not {p.name for p in sources} & {"cli.py", "simulate.py", "stats.py", "replay.py", "records.py"}
