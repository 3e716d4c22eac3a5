"""Penalty of cards left in hand (docs/rules.md §2.1 / §2.2 value tables, per variant)."""

from __future__ import annotations

from .cards import parse_cards
from .rules import Rules, load_rules


def hand_penalty(rules, hand) -> int:
    """Sum of the variant's penalty values over ``hand`` (text or tokens)."""
    r = rules if isinstance(rules, Rules) else load_rules(rules)
    return sum(r.penalty_value[c.type] for c in parse_cards(hand))
