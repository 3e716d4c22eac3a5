"""The turn reference's table and meld oracle (``turn_reference.TurnModel`` plays on them): table
melds as plain Python objects (``Run``, ``Set``, ``JokerSet``), read from the engine's arrays
(``read_table``), and the best melds of a hand asked of the public meld kernel, cached."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from kalooki_sim.core.cards import JOKER, type_text

from . import layout as L

__all__ = ["Run", "Set", "JokerSet", "pos_type", "positions_of", "read_table", "best_melds", "record_melds",
           "N_TYPES", "HI", "LO"]

N_TYPES = 53
HI, LO = 0, 1


def pos_type(suit: int, q: int) -> int:
    """Natural lying at run position ``q`` (1 = low ace .. 14 = high ace) of ``suit``."""
    return suit * 13 + (0 if q in (1, 14) else q - 1)


def positions_of(t: int) -> tuple:
    r = t % 13
    return (1, 14) if r == 0 else (r + 1,)


# ------------------------------------------------------------------------------------------------
# table melds


@dataclass
class Run:
    owner: int
    suit: int
    cells: dict                     # position -> card type (a natural, or JOKER)
    t_lo: int = 0                   # cards placed at the low end this turn (A21)
    t_hi: int = 0                   # ... at the high end
    t_all: int = 0                  # ... on this run in all (V2)
    kind: str = "run"

    def clone(self) -> "Run":
        return Run(self.owner, self.suit, dict(self.cells), self.t_lo, self.t_hi, self.t_all)

    @property
    def lo(self) -> int:
        return min(self.cells)

    @property
    def hi(self) -> int:
        return max(self.cells)

    def count_placed(self, side: int) -> None:
        """A card was placed at end ``side`` this turn (the per-end and per-run limits, A21, V2)."""
        if side == HI:
            self.t_hi += 1
        else:
            self.t_lo += 1
        self.t_all += 1

    def tokens(self) -> list:
        return [type_text(c) if c != JOKER else f"JK={type_text(pos_type(self.suit, q))}"
                for q, c in sorted(self.cells.items())]


@dataclass
class Set:
    owner: int
    rank: int                       # 0 = ace .. 12 = king
    nats: list                      # natural card types
    nj: int                         # jokers (each stands for a missing suit)
    kind: str = "set"

    def __len__(self):
        return len(self.nats) + self.nj

    def clone(self) -> "Set":
        return Set(self.owner, self.rank, list(self.nats), self.nj)

    def tokens(self) -> list:
        held = [sum(1 for t in self.nats if t // 13 == s) for s in range(4)]
        toks = [type_text(t) for t in sorted(self.nats)]
        for _ in range(self.nj):
            s = min(range(4), key=lambda x: (held[x], x))
            held[s] += 1
            toks.append(f"JK={type_text(s * 13 + self.rank)}")
        return toks


@dataclass
class JokerSet:
    owner: int
    nj: int
    kind: str = "jset"

    def __len__(self):
        return self.nj

    def clone(self) -> "JokerSet":
        return JokerSet(self.owner, self.nj)

    def tokens(self) -> list:
        return ["JK"] * self.nj


def clone_table(table) -> list:
    return [m.clone() for m in table]


# ------------------------------------------------------------------------------------------------
# the meld oracle (public meld kernel), cached


_RV_CACHE: dict = {}


def _rv(rules, min_points):
    key = (id(rules), min_points)
    if key not in _RV_CACHE:
        r = rules if min_points is None else rules.replace(opening_min_points=min_points)
        _RV_CACHE[key] = (rules, r.to_vector())
    return _RV_CACHE[key][1]


@lru_cache(maxsize=200_000)
def _best_cached(rv_key, hand_key):
    from kalooki_sim.melds.search import MAX_MELDS, REC, best_lay_down_counts

    rv = _RV_BY_KEY[rv_key]
    counts = np.zeros(N_TYPES, dtype=np.int64)
    for t, n in hand_key:
        counts[t] = n
    stack = np.zeros((MAX_MELDS, REC), dtype=np.int64)
    best = np.zeros(4, dtype=np.int64)
    if best_lay_down_counts(counts, rv, 0, stack, best) < 0:
        return None
    return tuple(tuple(int(x) for x in stack[i]) for i in range(int(best[1])))


_RV_BY_KEY: dict = {}


def best_melds(rules, hand: Counter, min_points=None):
    """Records (``melds.search`` layout) of the best lay-down of ``hand``: the rules' opening
    (``min_points`` None) or new melds worth at least ``min_points``; None when there is none."""
    rv = _rv(rules, min_points)
    key = (rules.name, id(rules), min_points)
    _RV_BY_KEY.setdefault(key, rv)
    return _best_cached(key, tuple(sorted((t, n) for t, n in hand.items() if n > 0)))


def record_melds(records, owner) -> list:
    """Table melds of lay-down records (kinds: 0 set, 1 run, 2 all-joker set)."""
    out = []
    for rec in records:
        kind = rec[0]
        if kind == 0:
            r = rec[1]
            nats = [s * 13 + r for s in range(4) for _ in range(rec[2 + s])]
            out.append(Set(owner, r, nats, rec[6]))
        elif kind == 1:
            s, lo, hi, jm = rec[1], rec[2], rec[3], rec[4]
            out.append(Run(owner, s, {q: (JOKER if (jm >> q) & 1 else pos_type(s, q)) for q in range(lo, hi + 1)}))
        else:
            out.append(JokerSet(owner, rec[6]))
    return out


def record_count(records, t) -> int:
    """Cards of type ``t`` the lay-down records place."""
    n = 0
    for m in record_melds(records, 0):
        n += meld_count(m, t)
    return n


def meld_count(m, t) -> int:
    if m.kind == "run":
        return sum(1 for c in m.cells.values() if c == t)
    if m.kind == "set":
        return m.nj if t == JOKER else m.nats.count(t)
    return m.nj if t == JOKER else 0


@lru_cache(maxsize=100_000)
def _legal_tokens(rules_key, toks, kind):
    from kalooki_sim.melds import is_legal_meld
    return is_legal_meld(_RULES_BY_KEY[rules_key], list(toks), kind)


_RULES_BY_KEY: dict = {}


def meld_is_legal(rules, m) -> bool:
    """The public meld API's answer for table meld ``m`` (jokers declared)."""
    key = (rules.name, id(rules))
    _RULES_BY_KEY.setdefault(key, rules)
    if m.kind == "run":
        return _legal_tokens(key, tuple(m.tokens()), "run")
    if m.kind == "set":
        return _legal_tokens(key, tuple(m.tokens()), "set")
    return _legal_tokens(key, tuple(m.tokens()), None)


def read_table(st, g=0) -> list:
    out = []
    for m in range(int(st.gs[g, L.G_N_MELDS])):
        kind = int(st.minfo[g, m, L.MI_KIND])
        owner = int(st.minfo[g, m, L.MI_OWNER])
        if kind == L.MK_RUN:
            lo, hi = int(st.minfo[g, m, L.MI_LO]), int(st.minfo[g, m, L.MI_HI])
            cells = {q: int(st.mcards[g, m, q]) for q in range(lo, hi + 1)}
            out.append(Run(owner, int(st.minfo[g, m, L.MI_KEY]), cells, int(st.minfo[g, m, L.MI_T_LO]),
                           int(st.minfo[g, m, L.MI_T_HI]), int(st.minfo[g, m, L.MI_T_ALL])))
        elif kind == L.MK_SET:
            n = int(st.minfo[g, m, L.MI_LEN])
            cards = [int(st.mcards[g, m, i]) for i in range(n)]
            out.append(Set(owner, int(st.minfo[g, m, L.MI_KEY]), [c for c in cards if c != JOKER],
                           sum(1 for c in cards if c == JOKER)))
        else:
            out.append(JokerSet(owner, int(st.minfo[g, m, L.MI_LEN])))
    return out
