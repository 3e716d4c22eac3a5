"""``KALOOKI_PLAIN_NJIT=1`` (kalooki_sim/core/jit.py): every kernel compiled by plain ``numba.njit``
plays the same games as the project's compiler (its own dispatcher, cache and inliner).

The escape hatch matters only if it works when it is needed, so it is exercised here: a fresh
process compiles the closed loop with plain numba (no cache: a cold compile of a few minutes) and
its fingerprints -- greedy, random and the expert (a named strategy), single hands and matches of
Caribbean and K40 -- must equal this process's (the project's compiler, the worker's kernels).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# the games, played in whatever process runs this (``sys.argv[1]``: the scripts folder)
GAMES = """
from fingerprint import digest
from kalooki_sim.core import jit
from kalooki_sim import load_rules
from kalooki_sim.runtime.rollout import simulate
from kalooki_sim.runtime.strategies import lineup

out = {"plain": jit.PLAIN}
_, ids, params = lineup(["sharp-caribbean", "greedy", "random", "greedy"])
car, k40 = load_rules("caribbean"), load_rules("k40")
out["caribbean/greedy4"] = digest(simulate(car, 4, ["greedy"] * 4, None, 300, 11))
out["caribbean/expert"] = digest(simulate(car, 4, list(ids), params, 200, 12))
out["caribbean/matches"] = digest(simulate(car, 4, list(ids), params, 10, 14, mode="matches"))
out["k40/gr_rand"] = digest(simulate(k40, 4, ["greedy", "random"] * 2, None, 200, 12))
out["k40/matches"] = digest(simulate(k40, 4, ["greedy", "greedy", "random", "greedy"], None, 10, 15,
                                     mode="matches", max_hands=60))
"""


def _plain_fingerprints() -> dict:
    """The games compiled by plain numba, in a fresh process (the switch is read at import)."""
    env = dict(os.environ)
    env["KALOOKI_PLAIN_NJIT"] = "1"
    script = "import json, sys\nsys.path.insert(0, sys.argv[1])\n" + GAMES + "print(json.dumps(out))\n"
    r = subprocess.run([sys.executable, "-c", script, str(ROOT / "scripts")], capture_output=True, text=True,
                       env=env, timeout=1500)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def _fingerprints_here(monkeypatch) -> dict:
    """The same games in this process, by the project's compiler: its kernels are the ones the
    other tests of this worker share (a second process would compile or load them again)."""
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    ns: dict = {}
    exec(GAMES, ns)
    return ns["out"]


@pytest.mark.slow
def test_plain_numba_plays_the_same_games(monkeypatch):
    # the plain compile first: meanwhile the other worker fills the cache this process then loads from
    plain = _plain_fingerprints()
    mine = _fingerprints_here(monkeypatch)
    assert mine.pop("plain") is False and plain.pop("plain") is True
    assert plain == mine
