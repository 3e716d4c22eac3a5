#!/usr/bin/env python
"""Regenerate the golden playthroughs in tests/golden/ (rendered replays of fixed-seed games).

Why golden files: a whole game, move by move, is the most direct way to see what a change to the
rules, the engine or the agents does.  ``tests/test_replay_golden.py`` fails when the rendering
of these games changes; then run

    python scripts/make_golden.py
    git diff tests/golden/

and review the diff: if every change is intended (and explained by your change), commit the new
files with it.  ``GOLDEN`` is the single definition of the golden games; the test imports it.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOLDEN_DIR = ROOT / "tests" / "golden"

# file name -> game: Caribbean, 4 seats greedy,greedy,random,random, "hands" mode (one hand per
# game, its round chosen by the game id: round = game_id % 9 + 1)
AGENTS = ("greedy", "greedy", "random", "random")
GOLDEN = {
    "caribbean_seed7_game0.txt": dict(variant="caribbean", seed=7, game_id=0),
    "caribbean_seed11_game3.txt": dict(variant="caribbean", seed=11, game_id=3),
}


def render_golden(name: str) -> str:
    """The current rendering of golden game ``name`` (recorded, validated, rendered)."""
    from kalooki_sim.runtime.replay import record_games, render_replay, validate_replay

    spec = GOLDEN[name]
    events = record_games(spec["variant"], len(AGENTS), list(AGENTS), spec["seed"], [spec["game_id"]],
                          mode="hands")
    validate_replay(events)
    return render_replay(events)


def main() -> int:
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    for name in GOLDEN:
        path = GOLDEN_DIR / name
        text = render_golden(name)
        old = path.read_text(encoding="utf-8") if path.exists() else None
        path.write_text(text, encoding="utf-8")
        state = "unchanged" if old == text else ("new" if old is None else "CHANGED")
        print(f"{path.relative_to(ROOT)}: {state} ({text.count(chr(10))} lines)")
    print("review with: git diff tests/golden/")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
