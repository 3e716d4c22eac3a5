"""One project-wide numba wrapper so every kernel is compiled the same way.

``cache=True`` keeps compiled code on disk between processes (tests and CLI runs start in seconds
instead of recompiling); ``nogil`` lets ``lanes.run_lanes`` run kernels on threads side by side.  No object
mode anywhere: a kernel that cannot be typed must fail loudly at compile time.

Everything below applies to the project's kernels only (the dispatchers ``njit`` makes,
all of class ``KernelDispatcher``); importing the package changes no numba setting, so numba
functions of other code in the same process compile and cache as they would without it.

Cache location.  numba's cache only checks the file a kernel is defined in (numba 0.68 stamps it
by a hash of its source), not the modules it calls, so after an edit to the engine a cached
rollout kernel would silently run the old engine.  Unless ``NUMBA_CACHE_DIR`` is set, the kernels
are therefore cached in ``~/.cache/kalooki-sim/numba/<digest>-O<level>`` (``KernelDispatcher``'s
own cache locator), where ``<digest>`` hashes the *kernel sources* (``kernel_sources``): every
module of ``kalooki_sim/`` and ``agents/`` that makes kernels (imports ``njit`` from
here, or a numba decorator: ``intrinsic``, ``overload``, ...), and every project module those
import from, transitively, at any depth of the file (a kernel reads the module-level constants
of what its module imports, e.g. ``rulevec.R_*``, ``engine.layout``, as compile-time globals).
An edit to one of them gives a fresh cache (one recompile), never a stale one; an edit to a
module outside that set (``cli``, ``simulate``, ``stats``, ``replay``, docs) keeps the kernels.
The level is in the name because numba's cache does not tell kernels of two levels apart.
Processes that fill the cache at the same time are made safe by ``jit_cache``.

Optimisation level: ``KernelDispatcher.compile`` sets ``numba.config.OPT`` to ``OPT_LEVEL`` only
while it compiles (under numba's compiler lock, restored after), since numba reads it whenever it
builds an LLVM pass pipeline; the machine-code backend's level is fixed per process when numba
creates its target machine, so it stays at numba's setting (default 3; see the test).

Inlining.  numba's ``inline="always"`` pass runs the whole untyped pipeline on a callee again at
every call site and copies the callee's blocks one by one, each copy dragging along the callee's
whole scope of variables: quadratic in the callee's size, and the closed loop inlines greedy with
everything greedy inlines.  The kernels are compiled by ``_KernelCompiler`` (numba's nopython
pipeline with ``_MemoInlineInlinables`` in that pass's place), which prepares each inlined
function's untyped IR once per process and copies it in one piece: the same IR, the same code,
for a fifth less of the closed loop's cold compile.
"""

from __future__ import annotations

import ast
import copy
import functools
import hashlib
import os
import warnings
import weakref
from contextlib import contextmanager
from pathlib import Path

import numba
from numba.core import bytecode, caching, types
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_lock import global_compiler_lock
from numba.core.compiler_machinery import register_pass
from numba.core.inline_closurecall import InlineWorker, callee_ir_validator
from numba.core.registry import CPUDispatcher
from numba.core.untyped_passes import InlineInlinables

from . import jit_cache

__all__ = ["njit", "cache_dir", "kernel_sources", "KernelDispatcher", "OPT_LEVEL"]

_ROOT = Path(__file__).resolve().parents[1]       # the kalooki_sim package
_AGENTS = _ROOT.parent / "agents"       # a source checkout: agents/ sits beside the package

# LLVM optimisation level of the kernels: -O2 rather than numba's default -O3.  The closed loop is
# one large, branchy kernel (engine step and greedy inlined) that -O3 makes bigger without making
# it faster: greedy Caribbean hands measured 7 % faster at -O2 than at -O3 (and 5 % slower at
# -O1), alternating on one core, with the same games.  An explicit ``NUMBA_OPT`` wins.
OPT_LEVEL = 2

# Names whose import marks a module as one that makes kernels.
_KERNEL_MAKERS = {"njit", "jit", "intrinsic", "overload", "overload_method",
                  "overload_attribute", "register_jitable", "generated_jit", "vectorize",
                  "guvectorize", "cfunc", "stencil"}


def _package_dirs() -> dict[str, Path]:
    dirs = {"kalooki_sim": _ROOT}
    if (_ROOT.parent / "pyproject.toml").is_file() and (_AGENTS / "__init__.py").is_file():
        dirs["kalooki_sim.agents"] = _AGENTS        # (installed, it is kalooki_sim/agents/)
    return dirs


def _module_file(name: str) -> Path | None:
    """The source file of project module ``name`` (dotted), or None outside the project."""
    if name == "agents" or name.startswith("agents."):      # agents/ imported by its own name
        name = "kalooki_sim." + name
    for prefix, d in sorted(_package_dirs().items(), key=lambda kv: -len(kv[0])):
        if name == prefix or name.startswith(prefix + "."):
            base = d.joinpath(*name[len(prefix) + 1:].split(".")) if name != prefix else d
            for p in (base / "__init__.py", base.parent / (base.name + ".py")):
                if p.is_file():
                    return p
            return None
    return None


def _module_name(path: Path) -> str:
    for prefix, d in _package_dirs().items():
        if path.is_relative_to(d) and not (prefix == "kalooki_sim" and path.is_relative_to(_AGENTS)):
            parts = list(path.relative_to(d).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join([prefix, *parts])
    raise ValueError(path)


def _imports(path: Path) -> tuple[set[Path], bool]:
    """The project files ``path`` imports from (anywhere in it, functions included), and whether it
    makes kernels."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[Path] = set()
    makes_kernels = False
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "numba":
            makes_kernels |= node.attr in _KERNEL_MAKERS          # ``@numba.njit``
        elif isinstance(node, ast.Import):
            found.update(f for a in node.names if (f := _module_file(a.name)) is not None)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names = {a.name for a in node.names}
            if base == "kalooki_sim.core.jit":
                makes_kernels |= "njit" in names
            elif base.split(".")[0] == "numba":
                makes_kernels |= bool(names & _KERNEL_MAKERS)
            for n in names:     # ``from pkg import sub`` reads sub; ``from mod import X`` reads mod
                if (f := _module_file(f"{base}.{n}") or _module_file(base)) is not None:
                    found.add(f)
    return found, makes_kernels


def kernel_sources() -> list[Path]:
    """The files the cache folder's digest covers: the modules that make kernels and, transitively,
    every project module they import from (see the module docstring)."""
    files = sorted(p for d in _package_dirs().values() for p in d.rglob("*.py"))
    graph = {p: _imports(p) for p in files}
    todo = [p for p, (_, makes) in graph.items() if makes]
    seen = set(todo)
    while todo:
        for q in graph[todo.pop()][0]:
            if q not in seen and q in graph:
                seen.add(q)
                todo.append(q)
    return sorted(seen)


def _source_digest() -> str:
    h = hashlib.sha256()
    for p in kernel_sources():
        h.update(_module_name(p).encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def _opt_level() -> int:
    """The kernels' level: ``OPT_LEVEL``, or numba's when ``NUMBA_OPT`` sets it."""
    return int(numba.config.OPT) if "NUMBA_OPT" in os.environ else OPT_LEVEL


@functools.cache
def _project_cache_dir(opt: int) -> str:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kalooki-sim" / "numba"
    return str(base / f"{_source_digest()}-O{opt}")


def cache_dir() -> str:
    """Where the project's kernels are cached (``NUMBA_CACHE_DIR`` wins when set)."""
    return os.environ.get("NUMBA_CACHE_DIR") or _project_cache_dir(_opt_level())


class _KernelCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """numba's ``NUMBA_CACHE_DIR`` locator, pointed at ``cache_dir()``."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(cache_dir(), self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self):
        return self._cache_path


class _KernelCacheImpl(caching.CompileResultCacheImpl):
    _locator_classes = [_KernelCacheLocator]


class _KernelCache(caching.FunctionCache):
    """numba's function cache in the project folder, written by ``jit_cache.SafeIndexDataCacheFile``."""

    _impl_class = _KernelCacheImpl

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = jit_cache.SafeIndexDataCacheFile(
            cache_path=self._cache_path, filename_base=self._impl.filename_base,
            source_stamp=self._impl.locator.get_source_stamp())


@contextmanager
def _compiling_at_kernel_level():
    """``numba.config.OPT`` = ``OPT_LEVEL`` for this compile only (the caller holds the compiler
    lock, so no other thread compiles meanwhile; nested compiles restore their caller's value).
    An explicit ``NUMBA_OPT`` is left as it is."""
    saved = numba.config.OPT
    if "NUMBA_OPT" not in os.environ:
        numba.config.OPT = type(saved)(OPT_LEVEL)
    try:
        yield
    finally:
        numba.config.OPT = saved


# The untyped IR of every function inlined into a kernel (``inline="always"``), made once per
# process: numba's inliner runs the whole untyped pipeline on a callee again at every call site.
_INLINE_IR: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class _MemoInlineWorker(InlineWorker):
    """numba's ``InlineWorker`` with the callee's untyped IR made once per function (``_INLINE_IR``)
    and its own callees inlined the same way.  ``inline_ir`` copies the IR it is given before it
    changes anything, so one IR serves every call site; each gets its own function identity (the
    prefix of the inlined variables' names), as a fresh run of the pipeline would give it."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self._compiler_pipeline = _untyped_pipeline

    def run_untyped_passes(self, func, enable_ssa=False):
        per_func = _INLINE_IR.setdefault(func, {})
        key = (enable_ssa, self.flags.no_rewrites)
        func_ir = per_func.get(key)
        if func_ir is None:
            func_ir = per_func[key] = super().run_untyped_passes(func, enable_ssa)
        else:
            self.flags.enable_ssa = enable_ssa          # as the run of the pipeline would leave it
        out = copy.copy(func_ir)
        out.func_id = copy.copy(func_ir.func_id)
        uid = next(bytecode.FunctionIdentity._unique_ids)
        out.func_id.unique_name = f"{func_ir.func_id.func_qualname}${uid}"
        out.func_id.unique_id = uid
        return out

    def inline_ir(self, caller_ir, block, i, callee_ir, callee_freevars, arg_typs=None):
        """numba 0.68's ``InlineWorker.inline_ir`` for untyped inlining, with the callee's blocks
        copied in one ``deepcopy`` (numba copies them one by one, and each copy takes along the
        callee's whole scope of variables: quadratic in the callee's size) and without the second,
        unmodified copy it returns (``InlineInlinables`` drops it)."""
        if arg_typs is not None or self._permit_update_type_and_call_maps:
            return super().inline_ir(caller_ir, block, i, callee_ir, callee_freevars, arg_typs)
        from numba.core import inline_closurecall as icc, ir, ir_utils
        from numba.core.ir_utils import add_offset_to_labels, find_topo_order, next_label, replace_vars, simplify_CFG

        copied = callee_ir.copy()
        copied.blocks = copy.deepcopy(callee_ir.blocks)
        callee_ir = copied
        if self.validator is not None:
            self.validator(callee_ir)
        scope = block.scope
        instr = block.body[i]
        call_expr = instr.value
        callee_blocks = callee_ir.blocks
        # 1. relabel the callee's blocks
        max_label = max(ir_utils._the_max_label.next(), max(caller_ir.blocks.keys()))
        callee_blocks = add_offset_to_labels(callee_blocks, max_label + 1)
        callee_blocks = simplify_CFG(callee_blocks)
        callee_ir.blocks = callee_blocks
        min_label = min(callee_blocks.keys())
        max_label = max(callee_blocks.keys())
        ir_utils._the_max_label.update(max_label)
        # 2. rename the callee's locals into the caller's scope
        callee_scopes = icc._get_all_scopes(callee_blocks)
        assert len(callee_scopes) == 1
        callee_scope = callee_scopes[0]
        var_dict = {}
        for var in tuple(callee_scope.localvars._con.values()):
            if not (var.name in callee_freevars):
                inlined_name = icc._created_inlined_var_name(callee_ir.func_id.unique_name, var.name)
                new_var = scope.redefine(inlined_name, loc=var.loc)
                callee_scope.redefine(inlined_name, loc=var.loc)
                var_dict[var.name] = new_var
        replace_vars(callee_blocks, var_dict)
        # 3. the formal parameters become the actual arguments
        args = icc._get_callee_args(call_expr, callee_ir.func_id.func, block.body[i].loc, caller_ir)
        icc._replace_args_with(callee_blocks, args)
        # 4. split the caller's block in two
        new_blocks = []
        new_block = ir.Block(scope, block.loc)
        new_block.body = block.body[i + 1:]
        new_label = next_label()
        caller_ir.blocks[new_label] = new_block
        new_blocks.append((new_label, new_block))
        block.body = block.body[:i]
        block.body.append(ir.Jump(min_label, instr.loc))
        # 5. returns become assignments to the call's target
        topo_order = find_topo_order(callee_blocks)
        icc._replace_returns(callee_blocks, instr.target, new_label)
        if (instr.target.name in caller_ir._definitions
                and call_expr in caller_ir._definitions[instr.target.name]):
            caller_ir._definitions[instr.target.name].remove(call_expr)
        # 6. the callee's blocks join the caller's
        for label in topo_order:
            blk = callee_blocks[label]
            blk.scope = scope
            icc._add_definitions(caller_ir, blk)
            caller_ir.blocks[label] = blk
            new_blocks.append((label, blk))
        return None, callee_blocks, var_dict, new_blocks


@register_pass(mutates_CFG=True, analysis_only=False)
class _MemoInlineInlinables(InlineInlinables):
    """numba's ``inline="always"`` pass with ``_MemoInlineWorker``."""

    _name = "inline_inlinables_memo"

    def run_pass(self, state):
        worker = _MemoInlineWorker(state.typingctx, state.targetctx, state.locals, state.pipeline,
                                   state.flags, validator=callee_ir_validator)
        # (the rest is ``InlineInlinables.run_pass``, numba 0.68)
        from numba.core import ir, postproc
        from numba.core.analysis import compute_cfg_from_blocks
        from numba.core.ir_utils import guard, simplify_CFG
        modified = False
        work_list = list(state.func_ir.blocks.items())
        while work_list:
            label, block = work_list.pop()
            for i, instr in enumerate(block.body):
                if isinstance(instr, ir.Assign):
                    expr = instr.value
                    if isinstance(expr, ir.Expr) and expr.op == "call":
                        if guard(self._do_work, state, work_list, block, i, expr, worker):
                            modified = True
                            break
        if modified:
            cfg = compute_cfg_from_blocks(state.func_ir.blocks)
            for dead in cfg.dead_nodes():
                del state.func_ir.blocks[dead]
            postproc.PostProcessor(state.func_ir).run()
            state.func_ir.blocks = simplify_CFG(state.func_ir.blocks)
        return True


def _memo_inlining(pm):
    pm.passes = [(_MemoInlineInlinables, d) if p is InlineInlinables else (p, d) for p, d in pm.passes]
    pm.finalize()
    return pm


def _untyped_pipeline(state, name="untyped"):
    return _memo_inlining(DefaultPassBuilder.define_untyped_pipeline(state, name))


# ``_MemoInlineWorker.inline_ir`` is numba 0.68's, copied: another numba compiles with its own pass.
_MEMO_INLINING = numba.__version__.split(".")[:2] == ["0", "68"]


class _KernelCompiler(CompilerBase):
    """numba's nopython pipeline with ``_MemoInlineInlinables`` for ``InlineInlinables``: the same
    IR, each inlined callee prepared once per process instead of once per call site."""

    def define_pipelines(self):
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        return [_memo_inlining(pm) if _MEMO_INLINING else pm]


class KernelDispatcher(CPUDispatcher):
    """The dispatcher of every project kernel: cached in ``cache_dir()`` and compiled at
    ``OPT_LEVEL`` (module docstring)."""

    def enable_caching(self):
        try:
            self._cache = _KernelCache(self.py_func)
        except RuntimeError:            # no source file, or the folder cannot be written
            warnings.warn(f"kalooki_sim: kernels are compiled in every process, not cached "
                          f"(no source file, or {cache_dir()} cannot be written)", stacklevel=2)

    def compile(self, sig):
        with global_compiler_lock, _compiling_at_kernel_level():
            return super().compile(sig)


class _PlainArgsDispatcher(KernelDispatcher):
    """Types every call from another kernel with the literal types of its arguments erased, so
    the kernel is compiled once per real signature (``njit(specialise_constants=False)``)."""

    def get_call_template(self, args, kws):
        args = tuple(types.unliteral(a) for a in args)
        kws = {k: types.unliteral(v) for k, v in kws.items()}
        return super().get_call_template(args, kws)


PLAIN = os.environ.get("KALOOKI_PLAIN_NJIT", "") not in ("", "0")
"""``KALOOKI_PLAIN_NJIT=1``: compile every kernel with plain ``numba.njit`` -- numba's own
pipeline, dispatcher and options, none of this module's (no cache, no memoised inliner, no
``_nrt`` or constant-erasing tweaks, numba's optimisation level).  The escape hatch for a numba
release whose internals this module no longer fits; it plays the same games, only slower to
compile and run (``tests/test_jit_plain.py`` compares fingerprints)."""


def _plain_njit(fn, kw):
    opts = {k: v for k, v in kw.items() if k in ("inline", "locals", "boundscheck", "fastmath")}
    wrap = numba.njit(nogil=True, error_model="numpy", cache=False, **opts)
    return wrap if fn is None else wrap(fn)


def njit(fn=None, *, specialise_constants=True, **kw):
    """``numba.njit`` with the project defaults (cache, nogil, no object mode).

    ``_nrt=False`` (hot kernels that allocate nothing and return no arrays) compiles a kernel
    without reference counting: every call of a kernel with k array arguments otherwise costs ~2k
    atomic increments/decrements, more than many small kernels do.  numba lets callees inherit the
    caller's setting unless they state their own, so every kernel states it (default on).

    numba compiles a kernel again for every constant another kernel passes it
    (``check_flow_action`` with each flow action greedy asks about).  Those copies are specialised,
    and on the hot path they stay: erasing all of them made greedy Caribbean hands about 6 %
    slower.  ``specialise_constants=False`` erases them for one kernel, for callees whose
    constant-argument copies are rarely or never run: ``check_action`` (agents ask
    ``check_flow_action`` first; ``check_action`` only answers the table's questions), the
    manipulation checks, the deal, plan and lay-down searches.

    ``error_model="numpy"``: an integer division or modulo by a value the compiler cannot prove
    non-zero is not preceded by a test that raises ``ZeroDivisionError`` (the kernels divide by
    constants, player counts and round counts, which ``rules`` checks are positive).  Greedy
    Caribbean hands ran 1-4 % faster without those tests, with the same games
    (``benchmarks/compare_builds.py``, two runs of 40 rounds on a noisy machine: faster in 34 and
    24 rounds, median rounds 1.035 and 1.025)."""
    if PLAIN:
        return _plain_njit(fn, kw)
    opts = dict(cache=True, nogil=True, _nrt=True, error_model="numpy")
    opts.update(kw)
    cache = opts.pop("cache")
    locals_ = opts.pop("locals", None) or {}
    opts.setdefault("boundscheck", None)
    opts["nopython"] = True
    cls = KernelDispatcher if specialise_constants else _PlainArgsDispatcher

    def compile_(f):
        if numba.config.DISABLE_JIT:
            return f
        disp = cls(py_func=f, locals=locals_, targetoptions=dict(opts), pipeline_class=_KernelCompiler)
        if cache:
            disp.enable_caching()
        return disp

    return compile_ if fn is None else compile_(fn)
