"""Make numba's on-disk kernel cache safe when several processes fill it at once.

numba names a kernel's cached overloads ``<fn>.1.nbc``, ``<fn>.2.nbc``, ... in the order one
process happened to compile them, and updates the index without a lock.  Two processes that fill
an empty cache together (``pytest -n 2``, ray workers, a batch of CLI runs) can therefore both
pick ``.1`` for *different* signatures: the index then points one signature at the other's
machine code, and every later process that loads it crashes (numba issues #4807, #10128).  The
project's kernels do have several overloads each (literal and non-literal integer arguments).

``SafeIndexDataCacheFile`` (the cache file of the project's kernels, ``jit._KernelCache``; numba's
own class is left alone) saves an entry in a way that

* names a data file after a digest of its key, so a file only ever holds one signature's code,
  whoever writes it and in whatever order; and
* writes the data file before its index entry and updates the index under an exclusive file
  lock, so no process drops another's entry or sees an entry whose file does not exist yet.

Loading is unchanged: numba's reader already tolerates an entry whose file is missing.
"""

from __future__ import annotations

import contextlib
import hashlib

from numba.core import caching

try:                                    # POSIX; elsewhere the digest names alone prevent the crash
    import fcntl
except ImportError:                     # pragma: no cover - not on the machines we run on
    fcntl = None

__all__ = ["SafeIndexDataCacheFile", "data_name"]


def data_name(cache_file: caching.IndexDataCacheFile, key) -> str:
    """The data file of ``key``: a digest of the pickled key, so distinct keys never share one."""
    digest = hashlib.sha256(cache_file._dump(key)).hexdigest()[:20]
    return cache_file._data_name_pattern.replace("{number:d}", digest)


@contextlib.contextmanager
def _index_lock(index_path: str):
    if fcntl is None:
        yield
        return
    with open(index_path + ".lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


class SafeIndexDataCacheFile(caching.IndexDataCacheFile):
    """numba's index/data cache file with a ``save`` that is safe for concurrent writers."""

    def save(self, key, data) -> None:
        name = data_name(self, key)
        self._save_data(name, data)
        with _index_lock(self._index_path):
            overloads = self._load_index()
            if overloads.get(key) != name:
                overloads[key] = name
                self._save_index(overloads)
