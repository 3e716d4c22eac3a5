"""A script of the repository (``experiments/``, ``benchmarks/``, ``scripts/``) loaded as a module, so
its functions can be tested without running it.  Test modules import it by name (pytest puts this
folder on ``sys.path``; it is not a test module itself)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_script(path: str):
    """The module of ``ROOT / path``, named by its file name; it is registered in ``sys.modules``
    first, as dataclasses look their module up there while it is built."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, ROOT / path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod
