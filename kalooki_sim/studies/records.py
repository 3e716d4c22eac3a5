"""Run directories: every result sits next to what is needed to reproduce it.

A run directory holds ``meta.json`` (experiment config, seed, resolved rules and their digest,
package versions, git commit and whether the tree was dirty, start time) and result tables as
parquet.  Tables are written atomically (temporary file, then rename) and split into shards keyed
by work unit, so an interrupted run resumes by skipping finished shards: no hand is lost or
counted twice.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pandas as pd

_PACKAGES = ("kalooki-sim", "numpy", "numba", "pandas", "pyarrow", "torch", "ray")


def package_versions() -> dict[str, str]:
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def git_state(path: Path | str | None = None) -> dict[str, object]:
    """Commit of the source tree (the package's own checkout) and whether it had local changes."""
    cwd = Path(path) if path else Path(__file__).resolve().parent
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True,
                                check=True, timeout=10).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                                    capture_output=True, text=True, timeout=10).stdout.strip())
        return {"commit": commit, "dirty": dirty}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


@dataclass
class RunDir:
    path: Path

    @classmethod
    def create(cls, path, config: dict, seed: int, rules=None, resume: bool = False) -> "RunDir":
        """Make (or, with ``resume``, reopen) a run directory and write its ``meta.json``.

        Reopening checks that config, seed and rules are the same as the first time, so a resumed
        run can never mix results of two different experiments."""
        path = Path(path)
        meta = {
            "config": config,
            "seed": int(seed),
            "rules": rules.to_dict() if rules is not None else None,
            "rules_digest": rules.digest() if rules is not None else None,
            "versions": package_versions(),
            "git": git_state(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        meta_file = path / "meta.json"
        if meta_file.exists():
            if not resume:
                raise FileExistsError(f"{path} already holds a run: add --resume to continue it (resume=True from Python), or choose another --out")
            old = json.loads(meta_file.read_text())
            for key in ("config", "seed", "rules_digest"):
                diff = first_difference(key, old.get(key), json.loads(json.dumps(meta[key], default=str)))
                if diff:
                    raise ValueError(f"cannot resume {path}: {diff}; resume with the settings it was started "
                                     "with, or choose another output directory")
            return cls(path)
        path.mkdir(parents=True, exist_ok=True)
        _atomic_write_text(meta_file, json.dumps(meta, indent=2, sort_keys=True, default=str))
        return cls(path)

    def shard_file(self, table: str, shard: int) -> Path:
        return self.path / table / f"shard-{shard:06d}.parquet"

    def done_shards(self, table: str) -> set[int]:
        d = self.path / table
        if not d.is_dir():
            return set()
        return {int(p.stem.split("-")[1]) for p in d.glob("shard-*.parquet")}

    def write_shard(self, table: str, shard: int, df: pd.DataFrame) -> Path:
        target = self.shard_file(table, shard)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(".parquet.tmp")
        df.to_parquet(tmp, index=False)
        os.replace(tmp, target)
        return target

    def read_table(self, table: str) -> pd.DataFrame:
        files = sorted((self.path / table).glob("shard-*.parquet"))
        if not files:
            return pd.DataFrame()
        return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def first_difference(name: str, there, here) -> str | None:
    """The first setting in which ``here`` (this run) differs from ``there`` (the run on disk),
    named by its dotted path, or ``None`` if they are the same."""
    if isinstance(there, dict) and isinstance(here, dict):
        for k in sorted(set(there) | set(here), key=str):
            d = first_difference(f"{name}.{k}", there.get(k, "<unset>"), here.get(k, "<unset>"))
            if d:
                return d
        return None
    if there != here:
        return f"{name} was {there!r:.80} there and is {here!r:.80} now"
    return None


def compile_first(bar, warm) -> None:
    """Run ``warm`` (a tiny game that makes numba compile the kernels) when nothing is compiled
    yet, showing the compile's elapsed time on the progress ``bar``, then restart the bar's clock
    so the rate it shows is the speed of play alone.

    The compile runs in a daemon thread and this thread waits in short steps, so Ctrl-C is
    honoured within a second even though numba's compile itself cannot be interrupted."""
    import threading
    import time

    from kalooki_sim.core.jit import cache_dir

    d = Path(cache_dir())
    if d.is_dir() and any(d.rglob("*.nbi")):
        return
    failure = []

    def work():
        try:
            warm()
        except BaseException as e:          # handed to the waiting thread
            failure.append(e)

    t0 = time.monotonic()
    th = threading.Thread(target=work, daemon=True)
    th.start()
    while th.is_alive():
        bar.set_postfix_str(f"compiling the kernels (first run only): {time.monotonic() - t0:.0f} s", refresh=True)
        th.join(0.5)
    if failure:
        raise failure[0]
    bar.set_postfix_str(f"compiled in {time.monotonic() - t0:.0f} s")
    bar.reset(total=bar.total)
