"""The one study runner: a study is a list of tasks, each a pure function of its arguments whose
tables land in one shard of a run directory; this plays the tasks not yet on disk, on a backend
(``backends``: ``local`` or ``ray``), writes each result atomically, shows progress and keeps the
time it took.

Every study (``simulate``, ``tournament``, the balance study, the tuner's generations) describes
its work as ``Task`` values and hands them to ``run_tasks``; what differs between studies is only
what a task plays and how the tables are read afterwards.  Resuming is the same everywhere: the run
directory (``records.RunDir``) refuses a changed config, naming the setting that differs, and a
task whose last table is on disk is done, so an interrupted run loses nothing and counts nothing
twice.  Both backends write the same rows, since a task's result depends on its arguments only.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .backends import make_backend
from .records import RunDir, compile_first

__all__ = ["Task", "run_tasks", "shard_ranges", "todo"]


@dataclass(frozen=True)
class Task:
    """One unit of a study.  ``fn(*args)`` (a module-level function, so Ray can ship it) returns
    ``{name: DataFrame}``; ``tables`` maps those names to the run directory's tables, in the order
    they are written: the last one marks the task done.  ``shard`` is the task's shard number in
    those tables, ``size`` what it counts for on the progress bar (games, deals, shards)."""

    key: tuple
    fn: Callable
    args: tuple
    tables: tuple[tuple[str, str], ...]
    shard: int
    size: int = 1


def shard_ranges(total: int, size: int) -> list[tuple[int, int, int]]:
    """``(shard, first, count)`` of ``total`` consecutive games or deals in shards of ``size``."""
    return [(i, first, min(size, total - first)) for i, first in enumerate(range(0, total, size))]


def todo(run: RunDir, tasks: list[Task]) -> list[Task]:
    """The tasks whose tables are not all on disk (a task writes its marker table last)."""
    done: dict[str, set[int]] = {}
    out = []
    for t in tasks:
        marker = t.tables[-1][1]
        if marker not in done:
            done[marker] = run.done_shards(marker)
        if t.shard not in done[marker]:
            out.append(t)
    return out


def run_tasks(run: RunDir, tasks: list[Task], *, backend="local", progress: bool = True, desc: str = "",
              unit: str = " tasks", warm: Callable[[], object] | None = None,
              on_result: Callable[[Task, dict, object], None] | None = None,
              hands: Callable[[Task, dict], int] | None = None, stop: Callable[[], bool] | None = None,
              **backend_opts) -> int:
    """Play the tasks of ``tasks`` not yet in ``run`` on ``backend`` ("local", "ray" with
    ``backend_opts`` such as ``address``, or a backend object), writing each result as it comes;
    returns how many were played.  ``warm`` (local backend only) compiles the kernels on a tiny
    game first with the compile's time on the bar; ``on_result(task, tables, bar)`` may show a
    running figure.  Every session's wall time and the hands it played (``hands(task, tables)``,
    else the tasks' sizes) go to ``timing.jsonl``, the run's throughput.  ``stop()``, asked after
    every result, ends the run early (a sequential test that has decided): the tasks not yet
    finished are dropped, and a later call plays them if they are still wanted."""
    from tqdm import tqdm

    left = todo(run, tasks)
    total = sum(t.size for t in tasks)
    be = make_backend(backend, **backend_opts) if isinstance(backend, str) else backend
    t0, played, n_hands = time.time(), 0, 0
    try:
        with tqdm(total=total, initial=total - sum(t.size for t in left), unit=unit, disable=not progress,
                  desc=f"{desc} ({be.name})" if desc else be.name) as bar:
            if left and warm is not None and be.name == "local":
                compile_first(bar, warm)
            for task, tables in be.run(left):
                for name, path in task.tables:
                    run.write_shard(path, task.shard, tables[name])
                played += 1
                n_hands += hands(task, tables) if hands is not None else task.size
                if on_result is not None:
                    on_result(task, tables, bar)
                bar.update(task.size)
                if stop is not None and stop():
                    break
    finally:
        if isinstance(backend, str):
            be.close()
        if played:
            with open(Path(run.path) / "timing.jsonl", "a") as f:
                f.write(json.dumps({"backend": be.name, "seconds": time.time() - t0, "tasks": played,
                                    "hands": n_hands, "ended": time.strftime("%Y-%m-%dT%H:%M:%S")}) + "\n")
    return played

