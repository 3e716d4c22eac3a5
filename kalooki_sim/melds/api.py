"""Public meld functions for people and tests: text in, answers out, kernels underneath.

Each function validates and converts its input (text or tokens, see ``cards.parse_cards``) and
hands count vectors to the compiled kernels in ``legality`` and ``search``; the semantics are
those of docs/meld-semantics.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

from kalooki_sim.core.cards import JOKER, RANKS, SUITS, Card, format_cards, parse_cards, type_text
from kalooki_sim.core.rules import Rules, load_rules

from .legality import KIND_ANY, KIND_RUN, KIND_SET, meld_best_value
from .search import K_JSET, K_RUN, K_SET, MAX_MELDS, REC, best_lay_down_counts

__all__ = ["is_legal_meld", "meld_value", "opening_value", "meets_contract", "best_lay_down", "LayDown",
           "max_hand_size"]

# Caribbean players say "three" / "four", British ones "group" / "sequence" (docs/rules.md §1.4)
_KINDS = {None: KIND_ANY, "any": KIND_ANY, "set": KIND_SET, "run": KIND_RUN, "three": KIND_SET,
          "four": KIND_RUN, "group": KIND_SET, "sequence": KIND_RUN}


@dataclass(frozen=True)
class LayDown:
    """A lay-down: melds as token lists (jokers declared), the tokens left in hand, their penalty."""

    melds: list
    left: list
    penalty: int

    def __str__(self) -> str:
        shown = " ".join("[" + " ".join(m) + "]" for m in self.melds)
        return f"{shown} | left: {' '.join(self.left) or '-'} (penalty {self.penalty})"


def _rules(rules) -> Rules:
    return rules if isinstance(rules, Rules) else load_rules(rules)


def _meld_arrays(cards: list[Card]):
    nat = np.zeros(52, dtype=np.int64)
    n_free = 0
    decl = []
    for c in cards:
        if c.type == JOKER:
            if c.as_type >= 0:
                decl.append(c.as_type)
            else:
                n_free += 1
        else:
            nat[c.type] += 1
    return nat, n_free, np.asarray(decl, dtype=np.int64)


def _kind_code(kind) -> int:
    if not (kind is None or isinstance(kind, str)) or kind not in _KINDS:
        raise ValueError(f"unknown meld kind {kind!r}: use 'set' (three, group), 'run' (four, sequence) or None")
    return _KINDS[kind]


def _value(rules: Rules, cards, kind=None) -> int:
    cards = parse_cards(cards)
    code = _kind_code(kind)
    if len(cards) > _max_meld_cards(rules) or not _check_deck(rules, [cards]):
        return -1              # more cards than a meld holds, or than the deck has: never legal
    nat, n_free, decl = _meld_arrays(cards)
    return int(meld_best_value(nat, n_free, decl, rules.to_vector(), code))


def _max_meld_cards(rules: Rules) -> int:
    """No meld holds more cards than this (the longest run, or a set of every copy of a rank plus
    every joker)."""
    return max(rules.run_max_size, 4 * rules.n_decks + rules.n_jokers)


def max_hand_size(rules) -> int:
    """The most cards a player can hold in ``rules``: the largest deal, the turn's draw, every call
    a player may make (the discard and its penalty cards), a card taken from the table and the
    jokers freed in a turn, plus two cards of slack; at most the deck."""
    rules = _rules(rules)
    deal = max(rules.deal_size(rnd, n) for rnd in range(1, rules.n_rounds + 1)
               for n in range(rules.players_min, rules.players_max + 1))
    calls = rules.max_calls_per_player * (1 + rules.call_penalty_cards) if rules.calls_enabled else 0
    table = 1 + rules.n_jokers if rules.table_manipulation or rules.joker_swap != "none" else 0
    return min(deal + 1 + calls + table + 2, rules.deck_size)


def is_legal_meld(rules, cards, kind=None) -> bool:
    """Is ``cards`` a legal meld (of ``kind`` 'set', 'run', or either)?"""
    return _value(_rules(rules), cards, kind) >= 0


def meld_value(rules, cards) -> int:
    """Opening value of one meld under its best legal meaning; ValueError if it is illegal."""
    v = _value(_rules(rules), cards)
    if v < 0:
        raise ValueError(f"illegal meld [{format_cards(parse_cards(cards))}]")
    return v


def _check_deck(rules: Rules, melds: list[list[Card]]) -> bool:
    counts = np.zeros(53, dtype=np.int64)
    for m in melds:
        for c in m:
            counts[c.type] += 1
    return bool((counts[:52] <= rules.n_decks).all() and counts[52] <= rules.n_jokers)


def _as_meld_list(melds) -> list[list[Card]]:
    if not isinstance(melds, (str, list, tuple)):
        raise TypeError(f"melds must be a text ('[5H 6H 7H] [KC KD KS]') or a list of melds, "
                        f"not {type(melds).__name__}")
    if isinstance(melds, str):
        text = melds.strip()
        if "[" in text:
            parts = [p for p in text.replace("]", "[").split("[") if p.strip()]
            return [parse_cards(p) for p in parts]
        return [parse_cards(text)]
    return [parse_cards(m) for m in melds]


def opening_value(rules, melds) -> int:
    """Points of new melds (points variants): each meld at its best legal meaning."""
    rules = _rules(rules)
    ms = _as_meld_list(melds)
    total = 0
    for m in ms:
        v = _value(rules, m)
        if v < 0:
            raise ValueError(f"illegal meld [{format_cards(m)}]")
        total += v
    if not _check_deck(rules, ms):
        raise ValueError("the melds use more copies of a card than the deck holds")
    return total


def _set_rank(m: list[Card]) -> int:
    for c in m:
        t = c.type if c.type != JOKER else c.as_type
        if t >= 0:
            return t % 13
    return -1


def _run_suit(m: list[Card]) -> int:
    for c in m:
        t = c.type if c.type != JOKER else c.as_type
        if t >= 0:
            return t // 13
    return -1


def meets_contract(rules, round_no: int, melds) -> bool:
    """Do these melds, laid together, satisfy the contract of ``round_no`` (contract variants)?"""
    rules = _rules(rules)
    if isinstance(round_no, (bool, np.bool_)) or not isinstance(round_no, (int, np.integer)):
        raise TypeError(f"round_no must be an integer (1..{rules.n_rounds}), not {round_no!r}")
    threes, fours = rules.contract(int(round_no))
    ms = _as_meld_list(melds)
    if not ms or len(ms) > MAX_MELDS or not _check_deck(rules, ms):
        return False
    can_set = [_value(rules, m, "set") >= 0 for m in ms]
    can_run = [_value(rules, m, "run") >= 0 for m in ms]
    for kinds in product((0, 1), repeat=len(ms)):
        if any((k == 0 and not can_set[i]) or (k == 1 and not can_run[i]) for i, k in enumerate(kinds)):
            continue
        n_sets = kinds.count(0)
        n_runs = kinds.count(1)
        if rules.contract_allow_extra_melds:
            if n_sets < threes or n_runs < fours:
                continue
        elif n_sets != threes or n_runs != fours:
            continue
        ranks = [_set_rank(m) for m, k in zip(ms, kinds) if k == 0]
        suits = [_run_suit(m) for m, k in zip(ms, kinds) if k == 1]
        if rules.contract_distinct_set_ranks and len(set(ranks)) != len(ranks):
            continue
        if rules.contract_distinct_run_suits and len(set(suits)) != len(suits):
            continue
        return True
    return False


def _round_index(rules: Rules, round_no) -> int:
    if round_no is not None and (isinstance(round_no, (bool, np.bool_)) or not isinstance(round_no, (int, np.integer))):
        raise TypeError(f"round_no must be an integer (1..{rules.n_rounds}) or None, not {round_no!r}")
    if rules.opening_mode != "contract":
        return 0
    if round_no is None:
        raise ValueError(f"{rules.name}: best_lay_down needs round_no (1..{rules.n_rounds}) for a contract variant")
    round_no = int(round_no)
    rules.contract(round_no)  # validates the range
    return round_no - 1


def _hand_counts(rules: Rules, cards: list[Card]) -> np.ndarray:
    counts = np.zeros(53, dtype=np.int64)
    for c in cards:
        counts[c.type] += 1
    if (counts[:52] > rules.n_decks).any() or counts[52] > rules.n_jokers:
        raise ValueError(f"hand holds more copies of a card than the {rules.name} deck has: {format_cards(cards)}")
    return counts


def _set_tokens(rec) -> list[str]:
    r = int(rec[1])
    per_suit = [int(rec[2 + s]) for s in range(4)]
    toks = [RANKS[r] + SUITS[s] for s in range(4) for _ in range(per_suit[s])]
    held = list(per_suit)
    for _ in range(int(rec[6])):
        s = min(range(4), key=lambda x: (held[x], x))   # a suit the set lacks, where there is one
        held[s] += 1
        toks.append(f"JK={RANKS[r]}{SUITS[s]}")
    return toks


def _run_tokens(rec) -> list[str]:
    s, lo, hi, jmask = (int(x) for x in rec[1:5])
    toks = []
    for q in range(lo, hi + 1):
        t = s * 13 + (0 if q in (1, 14) else q - 1)
        toks.append(f"JK={type_text(t)}" if (jmask >> q) & 1 else type_text(t))
    return toks


def decode_melds(best_stack, n: int) -> list[list[str]]:
    """Token lists of the first ``n`` meld records written by the search kernel."""
    out = []
    for i in range(n):
        rec = best_stack[i]
        kind = int(rec[0])
        if kind == K_SET:
            out.append(_set_tokens(rec))
        elif kind == K_RUN:
            out.append(_run_tokens(rec))
        elif kind == K_JSET:
            out.append(["JK"] * int(rec[6]))
    return out


def best_lay_down(rules, hand, round_no: int | None = None) -> LayDown | None:
    """The legal first lay-down that leaves the least penalty in hand, or None if there is none."""
    rules = _rules(rules)
    cards = parse_cards(hand)
    cap = max_hand_size(rules)
    if len(cards) > cap:
        raise ValueError(f"hand of {len(cards)} cards: no {rules.name} player holds more than {cap} (the largest "
                         "deal, a draw, every call, cards from the table and 2 of slack)")
    counts = _hand_counts(rules, cards)
    ridx = _round_index(rules, round_no)
    best_stack = np.zeros((MAX_MELDS, REC), dtype=np.int64)
    best = np.zeros(4, dtype=np.int64)
    if best_lay_down_counts(counts, rules.to_vector(), ridx, best_stack, best) < 0:
        return None
    melds = decode_melds(best_stack, int(best[1]))
    left_counts = counts.copy()
    for m in melds:
        for tok in m:
            c = parse_cards([tok])[0]
            left_counts[c.type] -= 1
    assert (left_counts >= 0).all(), "search kernel placed a card the hand does not hold"
    left = [type_text(t) for t in range(53) for _ in range(int(left_counts[t]))]
    penalty = int(np.dot(left_counts, np.asarray(rules.penalty_value)))
    return LayDown(melds=melds, left=left, penalty=penalty)
