"""With only the ``dev`` extra installed the suite still collects (and what needs torch, ray,
gymnasium, pettingzoo or the notebook packages is skipped with a reason naming the extra): a
newcomer can run the tests piecemeal.  Simulated here by a process in which those imports fail."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = ("torch", "ray", "gymnasium", "pettingzoo", "sb3_contrib", "stable_baselines3", "tensorboard",
          "nbformat", "nbclient", "ipykernel")

BLOCKER = f"""
import sys, importlib.abc

class NoExtras(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {EXTRAS!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked: only the dev extra)", name=name)
        return None

sys.meta_path.insert(0, NoExtras())
import pytest
sys.exit(pytest.main(sys.argv[1:]))
"""


def run_without_extras(*args: str, capture: bool = True) -> subprocess.CompletedProcess:
    """pytest in a process where the extras cannot be imported."""
    return subprocess.run([sys.executable, "-c", BLOCKER, *args], capture_output=capture, text=True, cwd=ROOT,
                          timeout=None if not capture else 600)


def test_suite_collects_without_the_extras():
    r = run_without_extras("--collect-only", "-q", "-p", "no:cacheprovider", "-rs", str(ROOT / "tests"))
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "error" not in r.stdout.lower().splitlines()[-1]
    # modules that need an extra say which one
    skipped = [line for line in r.stdout.splitlines() if line.startswith("SKIPPED")]
    assert skipped and all("extra" in line for line in skipped), skipped


if __name__ == "__main__":   # the suite without the extras: python tests/test_collect_without_extras.py [-x ...]
    sys.exit(run_without_extras(*sys.argv[1:], str(ROOT / "tests"), capture=False).returncode)
