"""The position several rule tests start from, written once: P1 active in his play phase, three
opponents with a few cards (P2 laid down), the queen of spades on the discard pile.  Test modules
import it by name (pytest puts this folder on ``sys.path``; it is not a test module itself)."""

from __future__ import annotations

from kalooki_sim.runtime.game import Game


def play_position(rules, hand, table="", laid=False, extra=""):
    """``Game.from_text`` of that position with P1 holding ``hand`` (laid down if ``laid``), the
    table melds ``table`` (``"P2 [7S 8S 9S], ..."``) and any further position lines ``extra``."""
    text = f"""
active: P1
phase: play
P1: {hand}{' | laid' if laid else ''}
P2: 2S 4S | laid
P3: 2D 3S
P4: KD KH
{('table: ' + table) if table else ''}
discard: QS
{extra}
"""
    return Game.from_text(text, rules)
