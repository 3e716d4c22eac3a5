"""Where a study's tasks run: in this process, or as Ray tasks on a local or remote cluster.

A backend only *computes*: ``run(tasks)`` takes ``runner.Task`` values (a module-level function
and its arguments) and yields ``(task, result)`` as they finish, in any order.  The study runner
(``runner.run_tasks``) writes each result into the run directory.  A task is a pure function of
its arguments, so both backends give identical rows, a task that dies is simply played again, and
nothing is written twice: a result reaches the run directory only through the driver, after its
task finished.

Ray: ``RayBackend(address=None)`` starts a local Ray instance (``num_cpus`` workers) or, with an
address (``"ray://head:10001"`` or ``"auto"``), joins a running cluster; the package must be
importable on the workers (installed on every node, or shipped with ``runtime_env``).  Ray
re-runs a task whose worker died (``max_retries``) or raised (``retry_exceptions``); on top of
that the driver resubmits a task whose retries ran out, up to ``max_task_retries`` times, before
giving up with the error.
"""

from __future__ import annotations

import os
import time

__all__ = ["BACKENDS", "LocalBackend", "RayBackend", "check_backend", "make_backend", "add_backend_arguments", "backend_options"]

BACKENDS = ("local", "ray")


def _call(fn, args):
    return fn(*args)


class LocalBackend:
    """Every task in this process, one after the other (numba's threads use the cores:
    ``NUMBA_NUM_THREADS``)."""

    name = "local"

    def run(self, tasks):
        for task in tasks:
            yield task, _call(task.fn, task.args)

    def close(self):
        pass


def _env_vars() -> dict[str, str]:
    """The numba settings the workers need (the compiled kernels' cache; one thread per task,
    since Ray already runs one task per core)."""
    out = {"NUMBA_NUM_THREADS": "1"}
    if os.environ.get("NUMBA_CACHE_DIR"):
        out["NUMBA_CACHE_DIR"] = os.environ["NUMBA_CACHE_DIR"]
    return out


class RayBackend:
    """Tasks as Ray tasks.  ``address``: None = a new local instance with ``num_cpus`` CPUs;
    otherwise the address of a running cluster (``ray.init(address=...)``)."""

    name = "ray"

    def __init__(self, address: str | None = None, num_cpus: int | None = None, max_task_retries: int = 3,
                 runtime_env: dict | None = None):
        import ray

        self.ray = ray
        self.max_task_retries = int(max_task_retries)
        env = {"env_vars": _env_vars()}
        if runtime_env:
            env.update(runtime_env)
        self._started = False
        if not ray.is_initialized():
            kw = dict(runtime_env=env, include_dashboard=False, log_to_driver=False)
            if address is None:
                ray.init(num_cpus=num_cpus or os.cpu_count(), **kw)
            else:
                ray.init(address=address, **kw)
            self._started = True
        self._remote = ray.remote(max_retries=3, retry_exceptions=True)(_call)

    def run(self, tasks):
        ray = self.ray
        pending = {}
        attempts = {}

        def submit(task):
            pending[self._remote.remote(task.fn, task.args)] = task

        for task in tasks:
            submit(task)
        try:
            yield from self._collect(pending, attempts, submit)
        finally:                             # the caller stopped early: drop what is still queued
            for ref in pending:
                ray.cancel(ref, force=False)

    def _collect(self, pending, attempts, submit):
        ray = self.ray
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            task = pending.pop(ready[0])
            try:
                result = ray.get(ready[0])
            except (ray.exceptions.RayTaskError, ray.exceptions.WorkerCrashedError,
                    ray.exceptions.NodeDiedError) as e:
                k = attempts.get(task.key, 0) + 1
                attempts[task.key] = k
                if k > self.max_task_retries:
                    raise RuntimeError(f"task {task.key} failed {k} times") from e
                time.sleep(0.1)
                submit(task)
                continue
            yield task, result

    def close(self):
        if self._started:
            self.ray.shutdown()
            self._started = False


def check_backend(backend, **opts) -> None:
    """Refuse a backend name or options that ``make_backend`` would refuse, before a study writes
    anything: the Ray options are refused for the local backend (they would be silently ignored
    there).  A backend object passes as it is."""
    if not isinstance(backend, str):
        return
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    unknown = set(opts) - {"address", "num_cpus", "max_task_retries", "runtime_env"}
    if unknown:
        raise TypeError(f"unknown backend option(s): {', '.join(sorted(unknown))}")
    if backend == "local":
        given = [k for k in ("address", "num_cpus", "runtime_env") if opts.get(k) is not None]
        if given:
            raise ValueError(f"{', '.join(given)}: options of the ray backend; the local backend takes none "
                             "(add --backend ray)")


def make_backend(name: str, **opts):
    """The backend called ``name`` ("local" or "ray"); ``opts`` are Ray's (``check_backend``)."""
    check_backend(name, **opts)
    if name == "local":
        return LocalBackend()
    return RayBackend(**opts)

def add_backend_arguments(parser) -> None:
    """``--backend``, ``--address`` and ``--num-cpus``: the same three flags on every study's command."""
    parser.add_argument("--backend", choices=BACKENDS, default="local",
                        help="where the tasks run: this process, or Ray tasks (default local)")
    parser.add_argument("--address", default=None,
                        help="ray: a running cluster's address ('auto', 'ray://HEAD:10001'); default: start a "
                             "local Ray instance")
    parser.add_argument("--num-cpus", type=int, default=None, help="ray: CPUs of a local Ray instance (default: all)")


def backend_options(args) -> dict:
    """``runner.run_tasks``'s backend keywords from the flags of ``add_backend_arguments`` (the Ray options
    only when given, so the local backend refuses them rather than ignoring them)."""
    opts = {"backend": args.backend}
    opts.update({k: v for k, v in (("address", args.address), ("num_cpus", args.num_cpus)) if v is not None})
    return opts
