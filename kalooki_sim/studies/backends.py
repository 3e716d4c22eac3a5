"""Where the shards of a study run: in this process, or as Ray tasks on a local or remote cluster.

A backend only *computes*: ``run(cfg, todo)`` takes the (cell, shard) pairs still to play and
yields ``(cell, shard, tables)`` as they finish, in any order; the driver
(``balance.run_study``) writes each shard's tables atomically into the run directory.  Because
a shard is a pure function of (config, cell, shard index) (``balance.play_shard``), both backends
give identical rows, a task that dies is simply played again, and a shard is written once: a
result only reaches the run directory through the driver, after its task finished.

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

__all__ = ["LocalBackend", "RayBackend", "make_backend"]


class LocalBackend:
    """Every shard in this process, one after the other (numba's threads use the cores:
    ``NUMBA_NUM_THREADS``)."""

    name = "local"

    def __init__(self, **_):
        pass

    def run(self, cfg, todo):
        from .balance import play_shard

        for cell, shard in todo:
            yield cell, shard, play_shard(cfg, cell, shard)

    def close(self):
        pass


def _env_vars() -> dict[str, str]:
    """The numba settings the workers need (the compiled kernels' cache; one thread per task,
    since Ray already runs one task per core)."""
    out = {"NUMBA_NUM_THREADS": "1"}
    if os.environ.get("NUMBA_CACHE_DIR"):
        out["NUMBA_CACHE_DIR"] = os.environ["NUMBA_CACHE_DIR"]
    return out


def _remote_play(cfg, cell, shard, fail_once_marker=None):
    """The body of a Ray task.  ``fail_once_marker`` (tests only): if that file does not exist yet,
    create it and kill this worker process, as a crashed node would."""
    if fail_once_marker is not None and not os.path.exists(fail_once_marker):
        with open(fail_once_marker, "w") as f:
            f.write(str(os.getpid()))
        os._exit(1)
    from .balance import play_shard

    return play_shard(cfg, cell, shard)


class RayBackend:
    """Shards as Ray tasks.  ``address``: None = a new local instance with ``num_cpus`` CPUs;
    otherwise the address of a running cluster (``ray.init(address=...)``)."""

    name = "ray"

    def __init__(self, address=None, num_cpus=None, max_task_retries: int = 3, fail_once_marker=None,
                 runtime_env=None, **_):
        import ray

        self.ray = ray
        self.max_task_retries = int(max_task_retries)
        self.fail_once_marker = fail_once_marker
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
        self._task = ray.remote(max_retries=3, retry_exceptions=True)(_remote_play)

    def run(self, cfg, todo):
        ray = self.ray
        cfg_ref = ray.put(cfg)
        pending = {}
        attempts = {}

        def submit(cell, shard):
            ref = self._task.remote(cfg_ref, cell, shard, self.fail_once_marker)
            pending[ref] = (cell, shard)

        for cell, shard in todo:
            submit(cell, shard)
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            ref = ready[0]
            cell, shard = pending.pop(ref)
            try:
                tables = ray.get(ref)
            except (ray.exceptions.RayTaskError, ray.exceptions.WorkerCrashedError,
                    ray.exceptions.NodeDiedError) as e:
                k = attempts.get((cell.id, shard), 0) + 1
                attempts[(cell.id, shard)] = k
                if k > self.max_task_retries:
                    raise RuntimeError(f"shard {shard} of cell {cell.id} failed {k} times") from e
                time.sleep(0.1)
                submit(cell, shard)
                continue
            yield cell, shard, tables

    def close(self):
        if self._started:
            self.ray.shutdown()
            self._started = False


def make_backend(name: str, **opts):
    if name == "local":
        return LocalBackend(**opts)
    if name == "ray":
        return RayBackend(**opts)
    raise ValueError(f"backend must be 'local' or 'ray', not {name!r}")
