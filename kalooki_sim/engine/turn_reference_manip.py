"""The turn reference's table manipulation M1-M5 (D23): which manipulations are legal and what each
does to the table and the hand, as a mixin of ``turn_reference.TurnModel`` (which supplies the
table, the hand, the knobs and the pending card)."""

from __future__ import annotations

from collections import Counter

from kalooki_sim.core.cards import JOKER

from . import layout as L
from .turn_reference_melds import HI, LO, Run, meld_is_legal, pos_type

__all__ = ["Manipulations"]

MANIP_CAP = L.MANIP_MAX_PER_TURN


class Manipulations:
    """M1-M5 for ``TurnModel`` (docs/rules-decisions.md D23)."""

    def _manipulations(self, pend) -> set:
        out = set()
        r = self.rules
        if not r.table_manipulation or not self.laid or self.manips >= MANIP_CAP:
            return out
        for i, m in enumerate(self.table):
            if m.kind == "run":
                for side in (HI, LO):
                    for jk in (0, 1):
                        a = L.A_SHIFT + (i * 2 + side) * 2 + jk
                        if self._try_manip(a, pend) is not None:
                            out.add(a)
                    a = L.A_TAKE_END + i * 2 + side
                    if self._try_manip(a, pend) is not None:
                        out.add(a)
                for q in range(m.lo + 1, m.hi):
                    a = L.A_SPLIT + i * 15 + q
                    if self._try_manip(a, pend) is not None:
                        out.add(a)
            elif m.kind == "set":
                if len(m) == 3:
                    for j in range(16):
                        a = L.A_SETSUB + i * 16 + j
                        if self._try_manip(a, pend) is not None:
                            out.add(a)
                elif len(m) == 4:
                    for s in range(4):
                        a = L.A_SETTAKE + i * 4 + s
                        if self._try_manip(a, pend) is not None:
                            out.add(a)
        return out

    def _manip_effect(self, a, table, hand, clone=False):
        """Carry out manipulation ``a`` on copies ``table``/``hand`` when its shape is legal.
        Returns (placed type or None, taken type or None, touched meld indices) or None."""
        r = self.rules
        rmin = r.run_min_size
        if a < L.A_TAKE_END:                              # M1 shift
            x = a - L.A_SHIFT
            i, side, jk = x // 4, (x // 2) % 2, x % 2
            if i >= len(table) or table[i].kind != "run":
                return None
            m = table[i] = table[i].clone() if clone else table[i]
            lo, hi = m.lo, m.hi
            if r.run_growth_rule == "up_until_ace_then_down":
                if (side == HI) == (hi == 14):
                    return None
            q_add = hi + 1 if side == HI else lo - 1
            q_take = lo if side == HI else hi
            if not 1 <= q_add <= 14:
                return None
            add = JOKER if jk else pos_type(m.suit, q_add)
            if hand[add] <= 0:
                return None
            if self._lim_end() is not None and (m.t_hi if side == HI else m.t_lo) >= self._lim_end():
                return None
            if self._lim_run() is not None and m.t_all >= self._lim_run():
                return None
            c = m.cells[q_take]
            if c == JOKER and not r.end_take_may_take_joker:
                return None                               # A19
            del m.cells[q_take]
            m.cells[q_add] = add
            m.count_placed(side)
            hand[add] -= 1
            hand[c] += 1
            return add, c, (i,)
        if a < L.A_SPLIT:                                 # M2 end take
            x = a - L.A_TAKE_END
            i, side = x // 2, x % 2
            if i >= len(table) or table[i].kind != "run":
                return None
            m = table[i] = table[i].clone() if clone else table[i]
            if len(m.cells) - 1 < rmin:
                return None
            q = m.hi if side == HI else m.lo
            c = m.cells[q]
            if c == JOKER and not r.end_take_may_take_joker:
                return None
            del m.cells[q]
            hand[c] += 1
            return None, c, (i,)
        if a < L.A_SETSUB:                                # M3 split
            i, q = divmod(a - L.A_SPLIT, 15)
            if i >= len(table) or table[i].kind != "run":
                return None
            m = table[i] = table[i].clone() if clone else table[i]
            lo, hi = m.lo, m.hi
            if not lo < q < hi or q - lo + 1 < rmin or hi - q + 1 < rmin:
                return None
            nat = pos_type(m.suit, q)
            if hand[nat] <= 0 or len(table) >= self.m_max:
                return None
            upper = Run(m.owner, m.suit, {p: m.cells[p] for p in range(q + 1, hi + 1)})
            upper.cells[q] = nat
            for p in range(q + 1, hi + 1):
                del m.cells[p]
            # D28: each part keeps the count of the end it kept; the new ends start at 0
            upper.t_hi, upper.t_lo, upper.t_all = m.t_hi, 0, m.t_hi
            m.t_hi, m.t_all = 0, m.t_lo
            table.append(upper)
            hand[nat] -= 1
            return nat, None, (i, len(table) - 1)
        if a < L.A_SETTAKE:                               # M4 substitution in a 3-card set
            x = a - L.A_SETSUB
            i, s_add, s_take = x // 16, (x // 4) % 4, x % 4
            if i >= len(table) or table[i].kind != "set" or len(table[i]) != 3:
                return None
            m = table[i] = table[i].clone() if clone else table[i]
            add, c = s_add * 13 + m.rank, s_take * 13 + m.rank
            if s_add == s_take or add in m.nats or c not in m.nats or hand[add] <= 0:
                return None
            m.nats[m.nats.index(c)] = add
            hand[add] -= 1
            hand[c] += 1
            return add, c, (i,)
        if a < L.A_UPSWAP:                                # M5 take from a 4-card set
            i, s = divmod(a - L.A_SETTAKE, 4)
            if i >= len(table) or table[i].kind != "set" or len(table[i]) != 4:
                return None
            m = table[i] = table[i].clone() if clone else table[i]
            c = s * 13 + m.rank
            if c not in m.nats:
                return None
            m.nats.remove(c)
            hand[c] += 1
            return None, c, (i,)
        return None

    def _try_manip(self, a, pend):
        """(table, hand, placed, taken) after manipulation ``a`` if it is legal now, else None."""
        table = list(self.table)                      # _manip_effect clones the meld it changes
        hand = Counter(self.hand)
        eff = self._manip_effect(a, table, hand, clone=True)
        if eff is None:
            return None
        placed, taken, touched = eff
        if pend is not None and placed != pend:
            return None
        for i in touched:
            if not meld_is_legal(self.rules, table[i]):
                return None
        if taken is not None and self.rules.taken_cards_must_be_used_same_turn:
            if not self.placeable(taken, hand, table):
                return None
        return table, hand, placed, taken
