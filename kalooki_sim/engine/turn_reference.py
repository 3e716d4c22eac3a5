"""A slow, obviously-correct model of ONE TURN's play phase in the Kalooki 40 family (issue 37 item 6).

Plain Python, no numba.  Written from the rules (docs/rules.md §2.2-§2.6, §4.6, A19-A23, A40, A43, A45,
A53, A54) and the engine decisions of docs/rules-decisions.md (D9-D12, D19-D26, D28), not from the
engine's kernels: it is the reference the engine's ``legal_mask()`` and its table/hand bookkeeping
are compared with, action by action (``tests/test_turn_reference.py``,
``scripts/turn_reference_check.py``).

What it models, with its own state (``TurnModel``):

* the active player's hand (card-type counts) and whether he has laid down;
* the table: runs by position (1..14, each cell a natural or a joker standing for the natural of
  its position), sets (naturals + jokers; a set joker stands for *any* missing suit, §2.2, so its
  recorded suit never blocks a natural), all-joker sets (American);
* the per-turn lay-off counts of each run: cards placed at its low end, at its high end, in all
  (A21: at most ``layoff_max_per_run_end_per_turn`` per end, V2: ``layoff_max_per_run_per_turn`` per
  run; a shift M1 counts at the end it adds to; a split M3 gives the upper part (the new meld) the
  high end's count and the lower part the low end's count, the two new ends start at 0, each part's
  per-run count is the count of the end it kept, D28);
* the card drawn from the discard pile this turn (``taken``): it may not be discarded while no
  other copy is in hand (A40/A53); once a copy *from the hand* went to the table the ban is over
  (D19).  Placing a card of the type currently owed to the table settles the owed card first, then
  freed jokers, and only further copies settle the drawn card;
* a restricted discard draw (``taken_must``, D9): until a copy is on the table only actions placing
  it are legal;
* the card taken from the table by M1/M2/M4/M5 (``owed``, D23): until it is placed again only
  actions placing it are legal, it never frees a joker (A45: while a card is owed no joker swap is
  legal), and a take is legal only when the taken card can be placed at once (a lay-off that fits
  now, or it is in the best new melds of the hand with it);
* freed jokers (``freed``, M6, D11): a joker swap (run: any joker, interior only under V3; set: a
  3-card set, by a natural of a suit no natural of the set has; jokers in 4-card sets are locked,
  A19/A20) is legal only when the freed joker can then be placed (a lay-off, or a joker in the best
  new melds of the hand after the swap), and until it is placed only joker placements are legal;
* the opening debt of A43 (NA15/American, D26): after an opening whose new melds are short of the
  minimum, only lay-offs are legal until the missing points are laid off, each keeping the rest
  reachable by the greedy lay-off sequence D26 describes;
* the manipulation cap (``MANIP_MAX_PER_TURN`` M1-M5 per turn, D23);
* discarding and ending the turn without a discard (A15/A54, D20).

Taken as given (engine decisions the model does not re-derive):

* the content of the lay-down plan (D21: the exact best lay-down of ``melds.search``, ties broken by
  the search).  The model decides *whether* a plan exists and which cards it places with the public
  meld kernel ``melds.search.best_lay_down_counts`` (the opening before the player has laid down; any
  new melds, i.e. minimum 1, after it), and applies the engine's offered plan when ``A_LAY`` is
  played; the placeability questions of D9/D11/D23 ("is the card in the best new melds of the
  hand") ask the same kernel;
* V1 (D24): below the minimum, the best melds of any value if they leave at most one card;
* A43 (D26): the greedy lay-off bound is the sequence "repeatedly, for each card type in order, the
  first table meld (in table order) it fits on";
* the action encoding (``engine.layout``) and where each move puts its cards: a natural goes to the
  one end it continues (an ace: the low end first when both fit); "tack JK on N" puts the joker at
  the high end when it can go there now, else the low end, and ``A_TACK_LOW`` (the low end) is
  legal only when both ends could take it; M3 with a joker at the split position leaves the joker
  in the lower part (D23); a split's new meld is appended with the owner of the split run.

Only the play phase of the points variants is modelled (``phase == "play"``); ``draw_discard_legal``
answers the draw phase's restricted discard draw (D9) as a bonus.
"""

from __future__ import annotations

import copy
from collections import Counter

from kalooki_sim.core.cards import JOKER

from . import layout as L
from .turn_reference_manip import Manipulations
from .turn_reference_melds import (  # noqa: F401  (pos_type, read_table, record_melds: for the comparison)
    HI, LO, N_TYPES, JokerSet, Run, Set, best_melds, clone_table, meld_count, pos_type, positions_of, read_table,
    record_count, record_melds,
)

__all__ = ["TurnModel", "Run", "Set", "JokerSet", "pos_type", "positions_of", "read_table"]

# the low-end joker lay-off (issue 37); computed the way the issue defines it when the engine in
# use predates it (then its ids lie beyond the engine's mask and every such offer is a disagreement)
A_TACK_LOW = L.A_TACK_LOW


# ------------------------------------------------------------------------------------------------
# the model


class TurnModel(Manipulations):
    """The play phase of one turn, with its own table, hand and bookkeeping (module docstring)."""

    def __init__(self, rules, hand, table, laid, taken=None, taken_must=False, owed=None, freed=0,
                 manips=0, debt=0, active=0, n_melds_max=L.M_MAX):
        self.rules = rules
        self.hand = Counter({t: n for t, n in dict(hand).items() if n > 0})
        self.table = table
        self.laid = bool(laid)
        self.taken = taken
        self.taken_must = bool(taken_must)
        self.owed = owed
        self.freed = int(freed)
        self.manips = int(manips)
        self.debt = int(debt)
        self.active = active
        self.m_max = n_melds_max
        self.over = False
        self._no_a43 = False
        self._legal = None
        self._plan_cache = {}
        assert not rules.going_out_requires_discard, "the model covers going_out_requires_discard = false"
        assert rules.opening_mode == "points", "the model covers the points variants"

    # ---- construction from the engine (start of a turn, after the draw)
    @classmethod
    def from_game(cls, g) -> "TurnModel":
        st = g.state
        gs = st.gs[0]
        p = int(gs[L.G_ACTIVE])
        hand = Counter({t: int(st.hands[0, p, t]) for t in range(N_TYPES) if st.hands[0, p, t] > 0})
        table = read_table(st)

        def opt(k):
            v = int(gs[k])
            return None if v < 0 else v

        return cls(g.rules, hand, table, bool(st.ps[0, p, L.PS_LAID]), taken=opt(L.G_TAKEN),
                   taken_must=bool(gs[L.G_TAKEN_MUST]), owed=opt(L.G_OWED), freed=int(gs[L.G_FREED]),
                   manips=int(gs[L.G_MANIPS]), debt=int(gs[L.G_OPEN_DEBT]), active=p)

    def copy(self) -> "TurnModel":
        other = copy.copy(self)
        other.hand = Counter(self.hand)
        other.table = clone_table(self.table)
        other._plan_cache = self._plan_cache
        other._legal = None
        return other

    # ---- knobs
    def _lim_end(self):
        return self.rules.layoff_max_per_run_end_per_turn

    def _lim_run(self):
        return self.rules.layoff_max_per_run_per_turn

    def may_layoff(self) -> bool:
        return self.laid or not self.rules.layoff_requires_opened

    # ---- the pending card (D9, D11, D23): what must be placed before anything else
    def pending(self):
        if self.taken_must and self.taken is not None:
            return self.taken
        if self.freed > 0:
            return JOKER
        return self.owed

    # ---- where a card may go (lay-offs; A12, A21, V2, §2.2 sets)
    def end_ok(self, run: Run, side: int, card: int) -> bool:
        """May ``card`` (a natural of that position, or a joker) be laid off at the high (``HI``) or
        low (``LO``) end of ``run`` now?"""
        r = self.rules
        lo, hi = run.lo, run.hi
        if r.run_growth_rule == "up_until_ace_then_down":
            if side == HI and hi == 14:
                return False
            if side == LO and hi != 14:
                return False
        q = hi + 1 if side == HI else lo - 1
        if not 1 <= q <= 14:
            return False
        if q == 14 and not r.ace_high or q == 1 and not r.ace_low:
            return False
        if min(lo, q) == 1 and max(hi, q) == 14 and not r.allow_both_aces_in_run:
            return False
        if card == JOKER:
            if not r.run_adjacent_jokers and run.cells[hi if side == HI else lo] == JOKER:
                return False
        elif card != pos_type(run.suit, q):
            return False
        if self._lim_end() is not None and (run.t_hi if side == HI else run.t_lo) >= self._lim_end():
            return False
        if self._lim_run() is not None and run.t_all >= self._lim_run():
            return False
        return True

    def run_side(self, run: Run, t: int):
        """End (HI/LO) where card ``t`` goes when laid off onto ``run`` (plain lay-off), or None."""
        if t == JOKER:
            for side in (HI, LO):
                if self.end_ok(run, side, JOKER):
                    return side
            return None
        if t // 13 != run.suit:
            return None
        for q in sorted(positions_of(t)):            # an ace: the low end first
            if q == run.lo - 1 and self.end_ok(run, LO, t):
                return LO
            if q == run.hi + 1 and self.end_ok(run, HI, t):
                return HI
        return None

    def set_fits(self, s, t) -> bool:
        r = self.rules
        if s.kind == "jset":
            return t == JOKER and len(s) < 4
        if r.set_max_size is not None and len(s) >= r.set_max_size:
            return False
        if t != JOKER and t % 13 != s.rank:
            return False
        if not r.set_allow_duplicate_suit:
            if len(s) >= 4:
                return False
            if t != JOKER and any(x // 13 == t // 13 for x in s.nats):
                return False                     # a joker's suit never blocks (§2.2)
        return True

    def fits(self, m, t) -> bool:
        if m.kind == "run":
            return self.run_side(m, t) is not None
        return self.set_fits(m, t)

    def value_at(self, m, t, side=None) -> int:
        """Opening value of card ``t`` as part of meld ``m`` (A43 counts lay-offs with it)."""
        mv = self.rules.meld_value
        if m.kind == "run":
            q = m.hi + 1 if side == HI else m.lo - 1
            return mv[q]
        if m.kind == "set":
            return mv[14 if m.rank == 0 else m.rank + 1]
        return self.rules.joker_set_meld_value

    def tack(self, m, t, side=None) -> int:
        """Lay ``t`` off onto meld ``m`` (fits); returns its value there."""
        if m.kind == "run":
            if side is None:
                side = self.run_side(m, t)
            v = self.value_at(m, t, side)
            q = m.hi + 1 if side == HI else m.lo - 1
            m.cells[q] = t
            m.count_placed(side)
            return v
        v = self.value_at(m, t)
        if t == JOKER:
            m.nj += 1
        else:
            m.nats.append(t)
        return v

    # ---- the best new melds (D9/D11/D23) and the lay-down plan (D21, D24, D26)
    def new_melds(self, hand: Counter):
        """Best new melds of ``hand`` for a player who has laid down (any value), or None."""
        if not self.rules.new_melds_after_opening:
            return None
        return best_melds(self.rules, hand, 1)

    def in_new_melds(self, hand: Counter, t: int) -> bool:
        recs = self.new_melds(hand)
        return recs is not None and record_count(recs, t) > 0

    def plan(self):
        """(records, debt) of the lay-down offered now, or None."""
        key = (self.laid, tuple(sorted(self.hand.items())), self._table_key() if not self.laid else None)
        if key in self._plan_cache:
            return self._plan_cache[key]
        out = None
        r = self.rules
        if self.laid:
            recs = self.new_melds(self.hand)
            out = None if recs is None else (recs, 0)
        else:
            recs = best_melds(r, self.hand)
            if recs is not None:
                out = (recs, 0)
            elif r.kalooki_exempt_from_opening_min:                        # V1 (D24)
                recs = best_melds(r, self.hand, 1)
                if recs is not None:
                    placed = sum(len(m) if m.kind != "run" else len(m.cells) for m in record_melds(recs, 0))
                    if placed >= sum(self.hand.values()) - 1:
                        out = (recs, 0)
            if out is None and r.opening_counts_layoffs == "with_new_meld" and not self._no_a43:  # A43 (D26)
                recs = best_melds(r, self.hand, 1)
                if recs is not None:
                    value = self.records_value(recs)
                    debt = r.opening_min_points - value
                    rest = Counter(self.hand)
                    for m in record_melds(recs, 0):
                        for t in range(N_TYPES):
                            rest[t] -= meld_count(m, t)
                    if self.greedy_bound(rest, self.table) >= debt:
                        out = (recs, debt)
        self._plan_cache[key] = out
        return out

    def records_value(self, recs) -> int:
        mv = self.rules.meld_value
        v = 0
        for m in record_melds(recs, 0):
            if m.kind == "run":
                v += sum(mv[q] for q in m.cells)
            elif m.kind == "set":
                v += len(m) * mv[14 if m.rank == 0 else m.rank + 1]
            else:
                v += len(m) * self.rules.joker_set_meld_value
        return v

    def _table_key(self):
        return tuple((m.kind, tuple(m.tokens()), getattr(m, "t_lo", 0), getattr(m, "t_hi", 0),
                      getattr(m, "t_all", 0)) for m in self.table)

    def greedy_bound(self, hand: Counter, table) -> int:
        """D26's greedy lay-off sequence: points the hand can lay off onto ``table`` (a lower bound)."""
        work = clone_table(table)
        h = Counter(hand)
        total = 0
        found = True
        while found:
            found = False
            for t in range(N_TYPES):
                if h[t] <= 0:
                    continue
                for m in work:
                    if self.fits(m, t):
                        total += self.tack(m, t)
                        h[t] -= 1
                        found = True
                        break
        return total

    # ---- placeability (D23 takes, D11 swaps)
    def placeable(self, t: int, hand: Counter, table) -> bool:
        """Could card ``t`` (in ``hand``) be placed at once: a lay-off onto ``table`` or the best new
        melds of ``hand``?"""
        if self.may_layoff() and any(self.fits(m, t) for m in table):
            return True
        return self.in_new_melds(hand, t)

    # ---- legality of every play-phase action
    def legal(self) -> set:
        if self._legal is None:
            self._legal = self._compute_legal()
        return set(self._legal)

    def _compute_legal(self) -> set:
        out = set()
        if self.over:
            return out
        if sum(self.hand.values()) == 0:
            return out
        nm = len(self.table)
        if self.debt > 0:                               # A43: only lay-offs completing the opening
            for t in list(self.hand):
                if self.hand[t] <= 0:
                    continue
                for i, m in enumerate(self.table):
                    if self.fits(m, t) and self._debt_ok(i, t, None):
                        out.add(L.A_TACK + i * N_TYPES + t)
                    if t == JOKER and m.kind == "run" and self._low_joker_ok(m) and self._debt_ok(i, t, LO):
                        out.add(A_TACK_LOW + i)
            return out
        pend = self.pending()
        plan = self.plan()
        if plan is not None and nm + len(plan[0]) <= self.m_max:
            if pend is None or record_count(plan[0], pend) > 0:
                out.add(L.A_LAY)
        if pend is None:
            any_discard = False
            for t, n in self.hand.items():
                if n > 0 and self._discard_ok(t):
                    out.add(L.A_DISCARD + t)
                    any_discard = True
            if not any_discard and not self._any_tack():
                out.add(L.A_END_TURN)                    # A15/A54 (D20)
        if self.may_layoff():
            for t, n in self.hand.items():
                if n <= 0 or (pend is not None and t != pend):
                    continue
                for i, m in enumerate(self.table):
                    if self.fits(m, t):
                        out.add(L.A_TACK + i * N_TYPES + t)
                    if t == JOKER and m.kind == "run" and self._low_joker_ok(m):
                        out.add(A_TACK_LOW + i)
        out |= self._swaps(pend)
        out |= self._manipulations(pend)
        return out

    def _discard_ok(self, t) -> bool:
        r = self.rules
        if t == JOKER and not r.allow_discard_joker:
            return False
        if r.forbid_discard_of_taken_discard and self.taken == t and self.hand[t] < 2:
            return False                                 # A40/A53, D19
        return True

    def _any_tack(self) -> bool:
        if not self.may_layoff():
            return False
        return any(self.fits(m, t) for t, n in self.hand.items() if n > 0 for m in self.table)

    def _low_joker_ok(self, run) -> bool:
        """``A_TACK_LOW``: both ends could take a joker now (else the plain lay-off is that move)."""
        return self.end_ok(run, LO, JOKER) and self.end_ok(run, HI, JOKER)

    def _debt_ok(self, i, t, side) -> bool:
        table = list(self.table)
        table[i] = m = table[i].clone()
        v = self.tack(m, t, side if side is not None else (self.run_side(m, t) if m.kind == "run" else None))
        rest = Counter(self.hand)
        rest[t] -= 1
        return v + self.greedy_bound(rest, table) >= self.debt

    def _swaps(self, pend) -> set:
        """Joker swaps (M6 retrieve in runs, one-for-one in 3-card sets), A45, D11."""
        out = set()
        r = self.rules
        if r.joker_swap == "none" or (r.joker_swap_requires_opened and not self.laid):
            return out
        if self.owed is not None:                        # A45: the natural comes from the hand
            return out
        for i, m in enumerate(self.table):
            if m.kind == "run":
                for q, c in m.cells.items():
                    if c != JOKER:
                        continue
                    if not r.joker_swap_from_run_end and q in (m.lo, m.hi):
                        continue                          # V3
                    nat = pos_type(m.suit, q)
                    if self.hand[nat] <= 0 or (pend is not None and pend != nat):
                        continue
                    if r.joker_swap != "retrieve":
                        continue                          # (Caribbean's move is not modelled)
                    if self._freed_ok(i, ("run", q), nat):
                        out.add(L.A_MOVE + i * 15 + q)
            elif m.kind == "set" and m.nj > 0 and r.set_joker_swap == "one_for_one_3card" and r.joker_swap == "retrieve":
                if len(m) != 3:
                    continue                              # 4-card sets: jokers locked (A19/A20)
                for s in range(4):
                    nat = s * 13 + m.rank
                    if self.hand[nat] <= 0 or (pend is not None and pend != nat):
                        continue
                    if not r.set_allow_duplicate_suit and any(x // 13 == s for x in m.nats):
                        continue
                    if self._freed_ok(i, ("set", s), nat):
                        out.add(L.A_SETSWAP + i * 4 + s)
        return out

    def _freed_ok(self, i, where, nat) -> bool:
        if not self.rules.freed_joker_must_be_used_same_turn:
            return True
        table = list(self.table)
        table[i] = table[i].clone()
        hand = Counter(self.hand)
        self._do_swap(table, hand, i, where, nat)
        return self.placeable(JOKER, hand, table)

    @staticmethod
    def _do_swap(table, hand, i, where, nat):
        m = table[i]
        if where[0] == "run":
            m.cells[where[1]] = nat
        else:
            m.nats.append(nat)
            m.nj -= 1
        hand[nat] -= 1
        hand[JOKER] += 1

    # ---- carrying out an action
    def _settle(self, t, n):
        """``n`` copies of ``t`` went from the hand to the table: the owed card first, then freed
        jokers, then the ban on the card drawn from the pile (D19)."""
        if n > 0 and self.owed == t:
            self.owed = None
            n -= 1
        if n > 0 and t == JOKER and self.freed > 0:
            k = min(n, self.freed)
            self.freed -= k
            n -= k
        if n > 0 and self.taken == t:
            self.taken = None
            self.taken_must = False

    def apply(self, a: int, plan_records=None) -> None:
        """Carry out play action ``a``.  ``A_LAY`` lays ``plan_records`` (the engine's offered plan,
        taken as given), or the model's own plan when None."""
        a = int(a)
        self._legal = None
        if a == L.A_END_TURN:
            self.over = True
            return
        if a == L.A_LAY:
            own = self.plan()
            if plan_records is None:
                plan_records = own[0]
            debt = own[1] if own is not None else 0
            was_laid = self.laid
            new = record_melds(plan_records, self.active)
            for t in range(N_TYPES):
                n = sum(meld_count(m, t) for m in new)
                if n:
                    self._settle(t, n)
                    self.hand[t] -= n
            self.table.extend(new)
            self.laid = True
            if not was_laid:
                self.debt = max(debt, 0)
        elif L.A_DISCARD <= a < L.A_TACK:
            self.hand[a - L.A_DISCARD] -= 1
            self.over = True
        elif L.A_TACK <= a < L.A_MOVE or a >= A_TACK_LOW:
            if a >= A_TACK_LOW:
                i, t, side = a - A_TACK_LOW, JOKER, LO
            else:
                i, t = divmod(a - L.A_TACK, N_TYPES)
                side = None
            self._settle(t, 1)
            v = self.tack(self.table[i], t, side)
            self.hand[t] -= 1
            if self.debt > 0:
                self.debt = max(self.debt - v, 0)
        elif L.A_MOVE <= a < L.A_SETSWAP:
            i, q = divmod(a - L.A_MOVE, 15)
            nat = pos_type(self.table[i].suit, q)
            self._settle(nat, 1)
            self._do_swap(self.table, self.hand, i, ("run", q), nat)
            if self.rules.freed_joker_must_be_used_same_turn:
                self.freed += 1
        elif L.A_SETSWAP <= a < L.A_SHIFT:
            i, s = divmod(a - L.A_SETSWAP, 4)
            nat = s * 13 + self.table[i].rank
            self._settle(nat, 1)
            self._do_swap(self.table, self.hand, i, ("set", s), nat)
            if self.rules.freed_joker_must_be_used_same_turn:
                self.freed += 1
        elif L.A_SHIFT <= a < L.A_UPSWAP:
            table = self.table
            hand = self.hand
            eff = self._manip_effect(a, table, hand)
            if eff is None:
                raise ValueError(f"manipulation {a} has no effect in the model")
            placed, taken, _ = eff
            if placed is not None:
                self._settle(placed, 1)
            if taken is not None and self.rules.taken_cards_must_be_used_same_turn:
                self.owed = taken
            self.manips += 1
        else:
            raise ValueError(f"action {a} is not a play action the model knows")
        self.hand = +self.hand
        if sum(self.hand.values()) == 0:
            self.over = True                              # went out (A3)

    # ---- the draw phase's restricted discard draw (D9), a bonus
    def draw_discard_legal(self, top: int, mode: str, with_a43: bool = True) -> bool:
        """Before the draw (``self.hand`` without the card): may the top discard ``top`` be drawn
        under draw mode ``mode`` ("any", "never", "if_used_in_opening", "if_used_in_meld_now")?"""
        if mode == "any":
            return True
        if mode == "never":
            return False
        hand = Counter(self.hand)
        hand[top] += 1
        other = self.copy()
        other.hand = hand
        other._plan_cache = {}
        other._no_a43 = not with_a43
        plan = other.plan()
        if plan is not None and record_count(plan[0], top) > 0:
            return True
        if self.may_layoff() and (mode == "if_used_in_meld_now" or self.laid):
            return any(self.fits(m, top) for m in self.table)
        return False
