"""A readable, single-game front end of the compiled engine: print it, ask it, drive it by text.

``Game`` wraps a one-row ``State`` and the kernels of ``core``.  Seats are 0-based in code and
shown as ``P1``.. ``Pn`` in text (docs/rules.md §6.9 numbering); table melds are numbered from 1 in
text.  Action texts::

    pass | call | allow | deny | draw stock | draw discard | end turn
    lay down [5H 6H 7H 8H] [KC KD JK=KH]      (plan 0, the exact best lay-down)
    tack 9H on 3 | tack JK on 1
    tack JK on 1 low end      (a run open at both ends: the joker at its low end; "tack JK on 1"
                               puts it at the high end when it can go there, else the low end)
    move joker in 2   (or "move joker JK=6H in 2" when the four holds several jokers)
    discard 7C
    swap 6D for joker in 2    (M6 in a 3-card set; in a run "move joker JK=5H in 1" retrieves the
                               joker when joker_swap = "retrieve")
    table manipulation (M1-M5, only after opening; a taken card must be placed before anything else):
    shift 6H on 1             (M1: 6H at the end of run 1 it continues, the other end card is taken;
                               "shift JK on 1 high|low" adds a joker at that end)
    take 6H from 1            (M2: an end card of a run; M5: a natural of a 4-card set)
    split 1 with 8D           (M3: the duplicate 8D splits run 1 into [.. 8D] and [8D ..])
    substitute 6C for 6H in 1 (M4: 6C replaces 6H in the 3-card set 1, 6H is taken)
    keep upcard | swap upcard for 7C   (American: the dealer's choice right after the deal)

``Game.from_text`` builds a position from the same notation so rule tests read like the rule::

    round: 1
    active: P1
    phase: play
    P1: 4C 4D 4H 8S 8S 8D QH QC JK 5D
    P2: 7H 7S 9C | laid, calls=1
    table: P2 [5H JK=6H 7H 8H], P3 [KC KD JK=KH]
    discard: 3C 9D          (bottom -> top)
    discard_by: P4          (who threw the top card; "none" = the upcard)
    stock: 2C rest          (top first; "rest" = every card not placed elsewhere, shuffled)

Other keys: ``players``, ``dealer``, ``hand`` (1-based hand of the match), ``last_hand``,
``to_act`` (call phase), ``caller`` (allow phase), ``taken`` (play phase), ``seed``,
``after_allow`` (play/draw after an allowed call), ``turn``, ``taken_must`` (the taken card must
be melded this turn), ``freed`` (freed jokers still to place), ``owed`` (a card taken from the
table by M1-M5 that must be placed), ``manipulations`` (M1-M5 made this turn).  Player flags after ``|``: ``laid``,
``calls=N``, ``total=N``.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

import numpy as np

from ..cards import JOKER, parse_cards, type_text
from ..melds import is_legal_meld
from ..melds.api import decode_melds
from ..melds.positions import pos_type
from ..rules import Rules, load_rules
from .. import loop
from ..rollout import buy_back_flags, max_steps_per_hand, seating_table
from . import core, match_flow
from . import layout as L
from .errors import IllegalActionError
from .state import State

__all__ = ["Game", "check_supported", "action_text", "parse_action"]


# ------------------------------------------------------------------------------------------------
# rules this engine implements


def check_supported(rules: Rules) -> None:
    """Raise ``NotImplementedError`` for knob values the engine core does not implement.

    Every preset (Caribbean and the Kalooki 40 family) and every house variation is accepted.
    Refused are knob values that no preset uses and that would change what is forced or how a move
    works.
    """
    problems = []
    if rules.set_joker_swap == "both_missing_suits":
        problems.append("set_joker_swap = 'both_missing_suits'")
    if rules.call_priority != "play_order_after_active":
        problems.append("call_priority = 'random'")
    if problems:
        raise NotImplementedError(f"{rules.name}: the engine does not implement: " + "; ".join(problems))


# ------------------------------------------------------------------------------------------------
# text helpers


def _seat_text(p: int) -> str:
    return f"P{p + 1}" if p >= 0 else "none"


def _parse_seat(tok: str) -> int:
    t = tok.strip().upper()
    if t in ("NONE", "-", "-1"):
        return -1
    m = re.fullmatch(r"P?(\d+)", t)
    if not m:
        raise ValueError(f"cannot parse seat {tok!r} (write P1, P2, ...)")
    return int(m.group(1)) - 1


def _sorted_types(counts) -> list[int]:
    return [t for t in range(L.N_TYPES) for _ in range(int(counts[t]))]


def _cards_text(counts) -> str:
    return " ".join(type_text(t) for t in _sorted_types(counts)) or "-"


def _meld_tokens(st: State, g: int, m: int) -> list[str]:
    kind = int(st.minfo[g, m, L.MI_KIND])
    if kind == L.MK_RUN:
        lo, hi = int(st.minfo[g, m, L.MI_LO]), int(st.minfo[g, m, L.MI_HI])
        rng = range(lo, hi + 1)
    else:
        rng = range(int(st.minfo[g, m, L.MI_LEN]))
    out = []
    for q in rng:
        c, a = int(st.mcards[g, m, q]), int(st.mas[g, m, q])
        if c == JOKER:
            out.append(f"JK={type_text(a)}" if a >= 0 else "JK")
        else:
            out.append(type_text(c))
    return out


def action_text(st: State, g: int, a: int) -> str:
    """Text of action id ``a`` in game ``g`` (lay-down and joker texts depend on the position)."""
    a = int(a)
    fixed = {L.A_PASS: "pass", L.A_CALL: "call", L.A_ALLOW: "allow", L.A_DENY: "deny",
             L.A_DRAW_STOCK: "draw stock", L.A_DRAW_DISCARD: "draw discard", L.A_END_TURN: "end turn"}
    if a == L.A_PASS and st.gs[g, L.G_PHASE] == L.PH_UPSWAP:
        return "keep upcard"
    if a in fixed:
        return fixed[a]
    if not 0 <= a < L.N_ACTIONS:
        return f"<bad action {a}>"
    if a >= L.A_TACK_LOW:
        return f"tack JK on {a - L.A_TACK_LOW + 1} low end"
    if a >= L.A_UPSWAP:
        return f"swap upcard for {type_text(a - L.A_UPSWAP)}"
    if a < L.A_DISCARD:
        k = a - L.A_LAY
        head = "lay down" if k == 0 else f"lay down plan {k + 1}"
        nm = int(st.plan_n[g, k, 0])
        if nm < 0:
            return head
        melds = decode_melds(st.plan[g, k], nm)
        return head + " " + " ".join("[" + " ".join(m) + "]" for m in melds)
    if a < L.A_TACK:
        return f"discard {type_text(a - L.A_DISCARD)}"
    if a < L.A_MOVE:
        m, t = divmod(a - L.A_TACK, L.N_TYPES)
        return f"tack {type_text(t)} on {m + 1}"
    if a >= L.A_SHIFT:
        return _manip_text(st, g, a)
    if a >= L.A_SETSWAP:
        m, su = divmod(a - L.A_SETSWAP, 4)
        rank = int(st.minfo[g, m, L.MI_KEY]) if m < st.gs[g, L.G_N_MELDS] else 0
        return f"swap {type_text(su * 13 + rank)} for joker in {m + 1}"
    m, q = divmod(a - L.A_MOVE, 15)
    if m < st.gs[g, L.G_N_MELDS] and st.minfo[g, m, L.MI_NJ] > 1 and st.minfo[g, m, L.MI_KIND] == L.MK_RUN:
        return f"move joker JK={type_text(pos_type(int(st.minfo[g, m, L.MI_KEY]), q))} in {m + 1}"
    return f"move joker in {m + 1}"


def _manip_text(st: State, g: int, a: int) -> str:
    """Text of a table manipulation M1-M5 (module docstring)."""
    nm = int(st.gs[g, L.G_N_MELDS])

    def meld(m):
        return (int(st.minfo[g, m, L.MI_KIND]), int(st.minfo[g, m, L.MI_KEY]),
                int(st.minfo[g, m, L.MI_LO]), int(st.minfo[g, m, L.MI_HI])) if m < nm else (-1, 0, 0, 0)

    if a < L.A_TAKE_END:
        m, j = divmod(a - L.A_SHIFT, 4)
        side, joker = divmod(j, 2)
        kind, key, lo, hi = meld(m)
        if joker:
            return f"shift JK on {m + 1} {'high' if side == 0 else 'low'}"
        q = hi + 1 if side == 0 else lo - 1
        if kind != L.MK_RUN or not 1 <= q <= 14:
            return f"shift on {m + 1} ({'high' if side == 0 else 'low'} end)"
        return f"shift {type_text(pos_type(key, q))} on {m + 1}"
    if a < L.A_SPLIT:
        m, side = divmod(a - L.A_TAKE_END, 2)
        kind, key, lo, hi = meld(m)
        if kind != L.MK_RUN:
            return f"take {'high' if side == 0 else 'low'} end from {m + 1}"
        c = int(st.mcards[g, m, hi if side == 0 else lo])
        return f"take {type_text(c) if c >= 0 else '?'} from {m + 1}"
    if a < L.A_SETSUB:
        m, q = divmod(a - L.A_SPLIT, 15)
        kind, key, lo, hi = meld(m)
        return f"split {m + 1} with {type_text(pos_type(key, q)) if kind == L.MK_RUN else '?'}"
    if a < L.A_SETTAKE:
        m, j = divmod(a - L.A_SETSUB, 16)
        s_add, s_take = divmod(j, 4)
        key = meld(m)[1]
        return f"substitute {type_text(s_add * 13 + key)} for {type_text(s_take * 13 + key)} in {m + 1}"
    m, su = divmod(a - L.A_SETTAKE, 4)
    return f"take {type_text(su * 13 + meld(m)[1])} from {m + 1}"


def _parse_manip(st: State, g: int, s: str, text: str) -> int | None:
    """Action id of a manipulation text, ``None`` if ``s`` is not one."""
    nm = int(st.gs[g, L.G_N_MELDS])

    def meld_no(tok):
        m = int(tok) - 1
        if not 0 <= m < L.M_MAX:
            raise ValueError(f"no table meld {m + 1}")
        return m

    def is_run(m):
        return m < nm and st.minfo[g, m, L.MI_KIND] == L.MK_RUN

    r = re.fullmatch(r"shift (\S+) on (\d+)(?: (high|low))?(?:,? take \S+)?", s)
    if r:
        m = meld_no(r.group(2))
        c = parse_cards([r.group(1)])[0]
        if c.type == JOKER:
            side = 1 if r.group(3) == "low" else 0
            return L.A_SHIFT + m * 4 + side * 2 + 1
        side = 0
        if is_run(m):
            lo, hi = int(st.minfo[g, m, L.MI_LO]), int(st.minfo[g, m, L.MI_HI])
            key = int(st.minfo[g, m, L.MI_KEY])
            if lo - 1 >= 1 and pos_type(key, lo - 1) == c.type and not (
                    hi + 1 <= 14 and pos_type(key, hi + 1) == c.type):
                side = 1
        return L.A_SHIFT + m * 4 + side * 2
    r = re.fullmatch(r"take (\S+) from (\d+)", s)
    if r:
        m = meld_no(r.group(2))
        c = parse_cards([r.group(1)])[0]
        if is_run(m):
            lo, hi = int(st.minfo[g, m, L.MI_LO]), int(st.minfo[g, m, L.MI_HI])
            if st.mcards[g, m, hi] == c.type:
                return L.A_TAKE_END + m * 2
            if st.mcards[g, m, lo] == c.type:
                return L.A_TAKE_END + m * 2 + 1
            raise _NotOffered(f"{r.group(1).upper()} is not at an end of run {m + 1}")
        if c.type == JOKER:
            raise _NotOffered("a joker leaves a set only by a swap")
        return L.A_SETTAKE + m * 4 + c.type // 13
    r = re.fullmatch(r"split (\d+) with (\S+)", s)
    if r:
        m = meld_no(r.group(1))
        c = parse_cards([r.group(2)])[0]
        if c.type == JOKER:
            raise _NotOffered("a run is split by a duplicate natural, not a joker")
        q = c.type % 13 + 1
        if q == 1 and is_run(m) and st.minfo[g, m, L.MI_HI] == 14:
            q = 14
        return L.A_SPLIT + m * 15 + q
    r = re.fullmatch(r"substitute (\S+) for (\S+) in (\d+)", s)
    if r:
        m = meld_no(r.group(3))
        add, out = parse_cards([r.group(1), r.group(2)])
        if JOKER in (add.type, out.type) or add.type % 13 != out.type % 13:
            raise _NotOffered("a substitution exchanges two naturals of the set's rank")
        return L.A_SETSUB + m * 16 + (add.type // 13) * 4 + out.type // 13
    return None


def _strip_jokers(melds) -> list[tuple]:
    out = []
    for m in melds:
        out.append(tuple(sorted("JK" if tok.upper().startswith("JK") else tok.upper() for tok in m)))
    return sorted(out)


def parse_action(st: State, g: int, text: str, rv=None) -> int:
    """Action id of an action text (see the module docstring).  ``ValueError`` if unparsable.

    ``rv`` (the rules vector) lets "move joker in N" pick the one legal joker move of a four
    that holds several jokers.
    """
    s = " ".join(str(text).strip().lower().split())
    simple = {"pass": L.A_PASS, "call": L.A_CALL, "allow": L.A_ALLOW, "deny": L.A_DENY,
              "draw stock": L.A_DRAW_STOCK, "draw discard": L.A_DRAW_DISCARD, "end turn": L.A_END_TURN,
              "draw": L.A_DRAW_STOCK, "keep upcard": L.A_PASS}
    if s in simple:
        return simple[s]
    if s.startswith("lay down") or s.startswith("lay "):
        m = re.match(r"lay( down)?( plan (\d+))?\s*(.*)$", s)
        k = int(m.group(3)) - 1 if m.group(3) else 0
        if not 0 <= k < L.K_PLANS:
            raise ValueError(f"no lay-down plan {k + 1} (plans 1..{L.K_PLANS})")
        rest = m.group(4).strip()
        if rest:
            want = [p.split() for p in re.findall(r"\[([^\]]*)\]", rest)]
            nm = int(st.plan_n[g, k, 0])
            have = decode_melds(st.plan[g, k], nm) if nm >= 0 else None
            if have is None or _strip_jokers(want) != _strip_jokers(have):
                offered = action_text(st, g, L.A_LAY + k)
                raise _NotOffered(f"only the exact best lay-down is offered ({offered!r})")
        return L.A_LAY + k
    m = re.fullmatch(r"swap upcard for (\S+)", s)
    if m:
        return L.A_UPSWAP + parse_cards([m.group(1)])[0].type
    a = _parse_manip(st, g, s, text)
    if a is not None:
        return a
    m = re.fullmatch(r"discard (\S+)", s)
    if m:
        return L.A_DISCARD + parse_cards([m.group(1)])[0].type
    m = re.fullmatch(r"tack (\S+) on (\d+)( low(?: end)?)?", s)
    if m:
        t = parse_cards([m.group(1)])[0].type
        mi = int(m.group(2)) - 1
        if not 0 <= mi < L.M_MAX:
            raise ValueError(f"no table meld {mi + 1}")
        if m.group(3):
            if t != JOKER:
                raise ValueError(f"only a joker is laid off at a chosen end ({text!r}): a natural has one place")
            return L.A_TACK_LOW + mi
        return L.A_TACK + mi * L.N_TYPES + t
    m = re.fullmatch(r"swap (\S+) for joker in (\d+)", s)
    if m:
        t = parse_cards([m.group(1)])[0].type
        mi = int(m.group(2)) - 1
        if not 0 <= mi < L.M_MAX or t == JOKER:
            raise ValueError(f"cannot parse action {text!r}")
        if mi < st.gs[g, L.G_N_MELDS] and st.minfo[g, mi, L.MI_KIND] == L.MK_RUN:
            s = f"move joker JK={type_text(t)} in {mi + 1}"
        else:
            return L.A_SETSWAP + mi * 4 + t // 13
    m = re.fullmatch(r"(?:move|swap) joker(?: (\S+))? in (\d+)", s)
    if m:
        mi = int(m.group(2)) - 1
        if not 0 <= mi < L.M_MAX:
            raise ValueError(f"no table meld {mi + 1}")
        if m.group(1):
            tok = m.group(1)
            c = parse_cards([tok])[0]
            nat = c.as_type if c.type == JOKER else c.type
            if nat < 0:
                raise ValueError(f"say which joker: 'move joker JK=6H in {mi + 1}'")
            if mi >= st.gs[g, L.G_N_MELDS] or st.minfo[g, mi, L.MI_KIND] != L.MK_RUN:
                return L.A_MOVE + mi * 15
            s_ = int(st.minfo[g, mi, L.MI_KEY])
            if nat // 13 != s_:
                raise ValueError(f"{tok} is not in the suit of meld {mi + 1}")
            r = nat % 13
            if r == 0:
                hi = int(st.minfo[g, mi, L.MI_HI])
                q = 14 if hi == 14 and st.mcards[g, mi, 14] == JOKER else 1
            else:
                q = r + 1
            return L.A_MOVE + mi * 15 + q
        # the only joker of that four (or the first one whose move is legal)
        cands = []
        if mi < st.gs[g, L.G_N_MELDS] and st.minfo[g, mi, L.MI_KIND] == L.MK_RUN:
            for q in range(int(st.minfo[g, mi, L.MI_LO]), int(st.minfo[g, mi, L.MI_HI]) + 1):
                if st.mcards[g, mi, q] == JOKER:
                    cands.append(L.A_MOVE + mi * 15 + q)
        if not cands:
            return L.A_MOVE + mi * 15            # rejected by the engine with its reason
        legal = [] if rv is None else [a for a in cands if core.check_action(*st.arrays(), rv, g, a) == 0]
        return legal[0] if len(legal) == 1 else cands[0]
    raise ValueError(f"cannot parse action {text!r}")


@contextmanager
def _scratch_kept(st):
    """The engine's legality checks search lay-downs in the rows of ``plan`` after the plans
    (``layout.W_*``), which mean nothing between calls, and certify hands they find without one
    (``ps[..., PS_CERT:NPS]``, a cache).  Asking whether an action is legal must not look like a
    change of the position, so the Python layer puts both back."""
    saved = st.plan[:, :, L.PLAN_MELDS:].copy()
    saved_cert = st.ps[:, :, L.PS_CERT:L.NPS].copy()
    try:
        yield
    finally:
        st.plan[:, :, L.PLAN_MELDS:] = saved
        st.ps[:, :, L.PS_CERT:L.NPS] = saved_cert


class _NotOffered(ValueError):
    pass


# ------------------------------------------------------------------------------------------------


class Game:
    """One Kalooki match of any supported rule set (or a single hand built with ``from_text``).

    ``Game(rules="caribbean", n_players=4, seed=0, game_id=0, dealer=None, n_hands=None)``
    deals the first hand.  ``apply`` takes an action id or text; ``legal_actions()`` lists ids,
    ``action_text(id)`` names them.  ``str(game)`` shows the whole position.
    """

    def __init__(self, rules="caribbean", n_players: int = 4, seed: int = 0, game_id: int = 0,
                 dealer: int | None = None, n_hands: int | None = None, _deal: bool = True, *,
                 agents=None, params=None, first_hand: int | None = None, buy_back="always"):
        self.rules = rules if isinstance(rules, Rules) else load_rules(rules)
        check_supported(self.rules)
        if not self.rules.players_min <= n_players <= self.rules.players_max:
            raise ValueError(f"{self.rules.name} is played by {self.rules.players_min}.."
                             f"{self.rules.players_max} players, not {n_players}")
        self.rv = self.rules.to_vector()
        self.history: list[tuple[int, str]] = []
        seats, pm = seating_table([loop.EXTERNAL] * n_players if agents is None else agents, 1, n_players,
                                  params)
        self._loop = loop.LoopArrays(1, pm.shape[2])
        self._out = loop.LoopArrays.outputs(0, 1, n_players)
        self._wants = buy_back_flags(buy_back, n_players)
        self._max_steps = max_steps_per_hand(self.rules, n_players)
        if _deal:
            if n_hands is None:
                n_hands = self.rules.n_hands or 1
            la = self._loop
            loop.start(*self.state.arrays(), self.rv, 0, la.sp, la.sx, la.seats, la.params, la.keys, la.ctrs,
                       la.ctx, la.known, seats[0], pm[0], np.arange(n_players, dtype=np.int64), self._wants, -1 if dealer is None else int(dealer), int(seed), int(game_id),
                       -1 if first_hand is None else int(first_hand), int(n_hands), self._max_steps, -1,
                       False, True)
            self._advance()

    @property
    def state(self) -> State:
        return self._loop.state

    def _advance(self) -> None:
        loop.advance(*self.state.arrays(), self.rv, 0, *self._loop.loop_arrays(), *self._out)

    def _attach(self) -> None:
        """A position built by hand becomes the start of a loop (a one-hand match by default)."""
        match_flow.begin_from_position(self.state.gs, self.state.ps, self.rv, 0, self._loop.sp[0],
                                       self._loop.sx[0], self._wants)
        loop.attach(self.state.gs, 0, self._loop.ctx, int(self.state.gs[0, L.G_GAME_ID]),
                    int(self.state.gs[0, L.G_SEED]), self._max_steps, -1, False, True)
        self._advance()

    # ---- queries
    @property
    def g(self) -> int:
        return 0

    def _gs(self, k: int) -> int:
        return int(self.state.gs[0, k])

    @property
    def n_players(self) -> int:
        return self._gs(L.G_NP)

    @property
    def phase(self) -> str:
        return L.PHASE_NAMES[self._gs(L.G_PHASE)]

    @property
    def current_player(self) -> int:
        """Seat whose turn it is (0-based)."""
        return self._gs(L.G_ACTIVE)

    @property
    def to_act(self) -> int:
        """Seat that chooses the next action (a caller in the call window), -1 when over."""
        return self._gs(L.G_TO_ACT)

    @property
    def terminal(self) -> bool:
        return self._gs(L.G_TERMINAL) == 1

    @property
    def last_event(self) -> str:
        return L.EVENT_NAMES[self._gs(L.G_LAST_EVENT)]

    def hand(self, p: int) -> list[str]:
        return [type_text(t) for t in _sorted_types(self.state.hands[0, p])]

    def hand_counts(self, p: int) -> np.ndarray:
        return self.state.hands[0, p].astype(np.int64)

    @property
    def table(self) -> list[tuple[int, list[str]]]:
        """(owner seat, tokens) of each table meld; runs low -> high, jokers declared."""
        return [(int(self.state.minfo[0, m, L.MI_OWNER]), _meld_tokens(self.state, 0, m))
                for m in range(self._gs(L.G_N_MELDS))]

    @property
    def discard_pile(self) -> list[str]:
        return [type_text(int(t)) for t in self.state.disc[0, :self._gs(L.G_DISC_N)]]

    @property
    def stock(self) -> list[str]:
        """Stock cards, top first."""
        n = self._gs(L.G_STOCK_N)
        return [type_text(int(t)) for t in self.state.stock[0, :n][::-1]]

    @property
    def laid_down(self) -> list[bool]:
        return [bool(x) for x in self.state.ps[0, :self.n_players, L.PS_LAID]]

    @property
    def calls_used(self) -> list[int]:
        return [int(x) for x in self.state.ps[0, :self.n_players, L.PS_CALLS]]

    @property
    def totals(self) -> list[int]:
        return [int(x) for x in self.state.ps[0, :self.n_players, L.PS_TOTAL]]

    def _finished_hands(self) -> range:
        """Hand numbers of the finished hands kept in the engine's per-hand record."""
        done = self._gs(L.G_HANDS_DONE)
        end = self._gs(L.G_HAND_NO) + (1 if self.terminal else 0)      # past the last finished hand
        first = max(end - done, 0)
        return range(first, min(end, L.H_MAX))

    @property
    def hand_scores(self) -> list[list[int]]:
        """Penalties scored in each finished hand of the match."""
        return [[int(x) for x in self.state.hscore[0, h, :self.n_players]] for h in self._finished_hands()]

    @property
    def hand_winners(self) -> list[int]:
        return [int(self.state.hwin[0, h]) for h in self._finished_hands()]

    def winners(self) -> list[int]:
        """The match winners once it is over (the match flow's: lowest total, ties per tie_rule,
        shared by default, A14; the last player in; the most money); before that, the seats with
        the lowest total so far."""
        if self._loop.ctx[0, loop.CX_STATUS] == loop.ST_OVER:
            flags = self._loop.sp[0, match_flow.SP_MWIN]
            return [p for p in range(int(self._loop.sx[0, match_flow.SX_N])) if flags[p]]
        out = np.zeros(L.P_MAX, dtype=np.bool_)
        match_flow.match_winners(self.state.gs, self.state.ps, self.state.hscore, self.state.hwin, self.rv, 0, out)
        return [p for p in range(self.n_players) if out[p]]

    @property
    def seat_players(self) -> list[int]:
        """The real player (index of the lineup) in each engine seat of the current hand.

        The identity unless an elimination match has dropped players: the players still in are
        then seated in their order, so engine seat ``i`` is the ``i``-th of them."""
        return [int(x) for x in self._loop.sp[0, match_flow.SP_REAL, :self.n_players]]

    def sheet(self) -> dict:
        """The match's score sheet per real player, as the match flow keeps it.

        ``totals``, ``units`` (money column in units), ``money`` (final money once the match is
        over), ``buy_backs``, ``in`` (still in the game), ``pool``, ``hands`` (hands settled),
        ``over``, ``finished`` (an elimination match that reached its cap is over, not finished)
        and, for the last settled hand, ``penalty`` (points the sheet added), ``payment`` (units
        received or paid) and ``status`` (``match.STATUS_NAMES``)."""
        from ..match import EV_PAYMENT, EV_PENALTY, EV_STATUS, STATUS_NAMES

        sp, sx, sev = self._loop.sp[0], self._loop.sx[0], self._loop.sev[0]
        n = int(sx[match_flow.SX_N])
        col = lambda k: [int(x) for x in sp[k, :n]]     # noqa: E731
        return {
            "totals": col(match_flow.SP_TOTAL), "units": col(match_flow.SP_UNITS),
            "money": col(match_flow.SP_MONEY), "buy_backs": col(match_flow.SP_BB),
            "in": [bool(x) for x in sp[match_flow.SP_ACTIVE, :n]], "pool": int(sx[match_flow.SX_POOL]),
            "hands": int(sx[match_flow.SX_HANDS]), "over": bool(sx[match_flow.SX_OVER]),
            "finished": bool(sx[match_flow.SX_FINISHED]),
            "penalty": [int(sev[p, EV_PENALTY]) for p in range(n)],
            "payment": [int(sev[p, EV_PAYMENT]) for p in range(n)],
            "status": [STATUS_NAMES[int(sev[p, EV_STATUS])] for p in range(n)],
        }

    def may_call(self, p: int) -> bool:
        """Is seat ``p`` eligible to call the top discard in this turn's call window?"""
        return bool(core.may_call(self.state.gs, self.state.ps, self.state.disc_by, self.rv, 0, p))

    def legal_mask(self) -> np.ndarray:
        """The legal actions of the seat to act (the loop's mask; none once the match is over)."""
        if self._loop.ctx[0, loop.CX_STATUS] != loop.ST_WAITING:
            return np.zeros(L.N_ACTIONS, dtype=np.bool_)
        return self._loop.mask[0].copy()

    def agent_action(self) -> int:
        """What the compiled agent seated at the seat to act would play (``agents=`` at
        construction); -1 for a seat without one.  Draws on that seat's random stream, as the
        closed loop does, so apply the answer to play the closed loop's game."""
        scratch = np.zeros(L.N_ACTIONS, dtype=np.bool_)
        return int(loop.agent_action(*self.state.arrays(), self.rv, 0, self._loop.sp, self._loop.seats,
                                     self._loop.params, self._loop.keys, self._loop.ctrs, self._loop.known,
                                     scratch))

    def with_agent(self, player: int, agent, params=None) -> "Game":
        """A copy of the game in which real player ``player`` (0-based) is played by the compiled
        agent ``agent`` (id or name) with parameter row ``params`` (``None``: its defaults).

        The copy has its own random streams, so asking it ``agent_action()`` (a hint for an
        external seat) leaves this game, and every later decision in it, untouched."""
        from ..agents.base import check_params, default_params, policy_id

        pid = policy_id(agent)
        row = np.asarray(default_params(pid) if params is None else params, dtype=np.float64).ravel()
        check_params(pid, row, f"with_agent({agent!r}) params")
        if not (isinstance(player, (int, np.integer)) and not isinstance(player, bool) and 0 <= player < self.n_players):
            raise ValueError(f"with_agent: player {player!r} is not a seat 0..{self.n_players - 1}")
        other = self.copy()
        la = other._loop
        if row.size > la.params.shape[2]:
            wide = np.zeros(la.params.shape[:2] + (row.size,), dtype=np.float64)
            wide[:, :, :la.params.shape[2]] = la.params
            la.params = wide
        la.seats[0, int(player)] = pid
        la.params[0, int(player), :] = 0.0
        la.params[0, int(player), :row.size] = row
        return other

    def legal_actions(self) -> list[int]:
        return [int(a) for a in np.flatnonzero(self.legal_mask())]

    def legal_action_texts(self) -> list[str]:
        return [self.action_text(a) for a in self.legal_actions()]

    def action_text(self, action: int) -> str:
        """The engine's text of action id ``action`` here ("action N" when this position gives
        the id no meaning, e.g. a tack on a meld not on the table); ``IllegalActionError`` for
        what is not an id (``action_id`` reads texts)."""
        if isinstance(action, str):
            raise IllegalActionError(action, L.E_BAD_ACTION, "action_text takes an action id; "
                                     "Game.action_id reads a text")
        a = self._action_of(action)
        try:
            return action_text(self.state, 0, a)
        except (ValueError, IndexError):
            return f"action {a}"

    def action_id(self, text: str) -> int:
        try:
            return parse_action(self.state, 0, text, self.rv)
        except _NotOffered as e:
            raise IllegalActionError(text, L.E_NO_PLAN, str(e)) from None
        except ValueError as e:
            raise IllegalActionError(text, L.E_BAD_ACTION, str(e)) from None

    def _action_of(self, action) -> int:
        """The action id of ``action`` (text, or a Python/numpy integer in ``0..N_ACTIONS-1``);
        ``IllegalActionError`` for anything else (bool, float, bytes, None, out of range)."""
        if isinstance(action, str):
            return self.action_id(action)
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise IllegalActionError(action, L.E_BAD_ACTION,
                                     f"an action is an integer id (0..{L.N_ACTIONS - 1}) or a text, "
                                     f"not a {type(action).__name__}")
        a = int(action)
        if not 0 <= a < L.N_ACTIONS:
            raise IllegalActionError(action, L.E_BAD_ACTION, f"no such action id (ids are 0..{L.N_ACTIONS - 1})")
        return a

    def check(self, action) -> int:
        """Engine error code of an action (0 = legal) without applying it.  ``IllegalActionError``
        for something that is not an action (module docstring; ids ``0..N_ACTIONS-1``)."""
        a = self._action_of(action)
        with _scratch_kept(self.state):
            return int(core.check_action(*self.state.arrays(), self.rv, 0, a))

    def apply(self, action) -> "Game":
        """Apply an action id or text.  ``IllegalActionError`` (state unchanged) if illegal."""
        a = self._action_of(action)
        shown = action if isinstance(action, str) else None
        text = self.action_text(a)
        who = self.to_act
        if self.terminal:
            raise IllegalActionError(action, L.E_TERMINAL, text=shown or text)
        err = int(loop.act(*self.state.arrays(), self.rv, 0, *self._loop.loop_arrays(), *self._out, a))
        if err:
            if err >= 2000:
                raise IllegalActionError(action, err - 2000, text=shown or text)
            raise RuntimeError(f"internal: the loop refused {text!r} (code {err})")
        self.history.append((who, text))
        self._advance()
        return self

    def play(self, *actions) -> "Game":
        for a in actions:
            self.apply(a)
        return self

    def invariants(self, full_deck: bool = True) -> int:
        """0 or the first failing ``core.INV_*`` code."""
        return int(core.check_invariants(*self.state.arrays(), self.rv, 0, full_deck,
                                         np.zeros(L.N_ACTIONS, dtype=np.bool_)))

    def copy(self) -> "Game":
        other = Game.__new__(Game)
        other.__dict__.update(self.__dict__)
        other._loop = self._loop.copy()
        other._out = loop.LoopArrays.outputs(0, 1, self._out[0].shape[3])
        other.history = list(self.history)
        return other

    # ---- rendering
    def __str__(self) -> str:
        st, n = self.state, self.n_players
        h = self._gs(L.G_HAND_NO)
        r = self._gs(L.G_ROUND)
        lines = []
        if self.terminal:
            lines.append(f"{self.rules.name}: match over after {self._gs(L.G_HANDS_DONE)} hand(s)")
        else:
            if self.rules.opening_mode == "contract":
                threes, fours = self.rules.contracts[r]
                what = f"contract {threes} three(s) + {fours} four(s)"
            else:
                what = f"opening {self.rules.opening_min_points} points"
            lines.append(f"{self.rules.name}: hand {h + 1}, round {r + 1} "
                         f"({what}), dealer {_seat_text(self._gs(L.G_DEALER))}, "
                         f"turn {self._gs(L.G_TURN)}")
            extra = ""
            if self.phase == "allow":
                extra = f", {_seat_text(self._gs(L.G_CALLER))} calls"
            if self._gs(L.G_TAKEN) >= 0:
                extra += f", taken {type_text(self._gs(L.G_TAKEN))}"
                if self._gs(L.G_TAKEN_MUST):
                    extra += " (must be melded this turn)"
            if self._gs(L.G_FREED) > 0:
                extra += f", {self._gs(L.G_FREED)} freed joker(s) to place"
            if self._gs(L.G_OWED) >= 0:
                extra += f", {type_text(self._gs(L.G_OWED))} taken from the table (must be placed)"
            lines.append(f"phase: {self.phase}, active {_seat_text(self.current_player)}, "
                         f"to act {_seat_text(self.to_act)}{extra}")
        for p in range(n):
            flags = ["laid" if st.ps[0, p, L.PS_LAID] else "not laid",
                     f"calls={int(st.ps[0, p, L.PS_CALLS])}", f"total={int(st.ps[0, p, L.PS_TOTAL])}"]
            cards = _cards_text(st.hands[0, p])
            lines.append(f"P{p + 1}: {cards} | {', '.join(flags)}")
        if self.table:
            lines.append("table:")
            # Caribbean players say "four" and "three"; the Kalooki 40 family says run and set
            run, group = ("four", "three") if self.rules.opening_mode == "contract" else ("run", "set")
            for m, (owner, toks) in enumerate(self.table):
                kind = run if st.minfo[0, m, L.MI_KIND] == L.MK_RUN else group
                lines.append(f"  {m + 1}: {_seat_text(owner)} {kind} [{' '.join(toks)}]")
        pile = self.discard_pile
        if pile:
            by = int(st.disc_by[0, len(pile) - 1])
            lines.append(f"discard: {' '.join(pile)} (top {pile[-1]}, thrown by {_seat_text(by)})")
        else:
            lines.append("discard: -")
        lines.append(f"stock: {self._gs(L.G_STOCK_N)} cards")
        done = self.hand_scores
        if done:
            lines.append("scores: " + "; ".join(f"[{' '.join(map(str, s))}]" for s in done)
                         + f" -> totals {' '.join(map(str, self.totals))}")
        if self.terminal:
            lines.append("winner(s): " + " ".join(_seat_text(p) for p in self.winners()))
        return "\n".join(lines)

    __repr__ = __str__

    # ---- building positions from text
    @classmethod
    def from_text(cls, text: str, rules="caribbean") -> "Game":
        """Build a single-hand position from text (format: module docstring).

        The match ends after this hand unless ``last_hand`` says otherwise.  Raises ``ValueError``
        for malformed text, an illegal table meld, or more copies of a card than the deck holds.
        """
        rules = rules if isinstance(rules, Rules) else load_rules(rules)
        if not isinstance(text, str):
            raise TypeError(f"from_text needs the position as text, not {type(text).__name__}")
        kv: dict[str, str] = {}
        lines: dict[str, str] = {}          # key -> its line, for messages
        players: dict[int, str] = {}
        tables: list[str] = []
        for raw in text.strip().splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if ":" not in line:
                raise ValueError(f"cannot parse line {raw.strip()!r} (expected 'key: value')")
            key, val = (x.strip() for x in line.split(":", 1))
            k = key.lower()
            if re.fullmatch(r"p\d+", k):
                p = int(k[1:]) - 1
                if not 0 <= p < L.P_MAX:
                    raise ValueError(f"line {line!r}: no seat {key} (seats P1..P{L.P_MAX})")
                if p in players:
                    raise ValueError(f"line {line!r}: seat {key.upper()} given twice")
                players[p] = val
                lines[k] = line
            elif k == "table":
                tables.append(val)
            elif k not in _TEXT_KEYS:
                raise ValueError(f"line {line!r}: unknown key {key!r} (keys: {', '.join(sorted(_TEXT_KEYS))}, P1..)")
            else:
                if k in kv:
                    raise ValueError(f"line {line!r}: key {key!r} given twice")
                kv[k] = val
                lines[k] = line

        def number(key, default, lo, hi):
            if key not in kv:
                return default
            v = kv[key].strip()
            if not re.fullmatch(r"[+-]?\d{1,19}", v) or not lo <= int(v) <= hi:
                raise ValueError(f"line {lines[key]!r}: {key} must be a whole number in {lo}..{hi}")
            return int(v)

        seats = [int(x) for x in re.findall(r"\bP(\d{1,3})\b", text, re.I)]
        n = number("players", max([rules.players_min] + [min(x, 99) for x in seats]), rules.players_min,
                   rules.players_max)
        if n > rules.players_max:
            raise ValueError(f"seat P{n} named, but {rules.name} is played by {rules.players_min}.."
                             f"{rules.players_max} players")

        def seat(key, default=None, allow_none=False):
            if key not in kv:
                return default
            try:
                p = _parse_seat(kv[key])
            except ValueError as e:
                raise ValueError(f"line {lines[key]!r}: {e}") from None
            if p == -1 and allow_none:
                return -1
            if not 0 <= p < n:
                raise ValueError(f"line {lines[key]!r}: no seat {kv[key].strip()} in a game of {n} players "
                                 f"(P1..P{n})")
            return p

        for p in players:
            if p >= n:
                raise ValueError(f"line {lines[f'p{p + 1}']!r}: no seat P{p + 1} in a game of {n} players")
        if "current" in kv and "active" in kv:
            raise ValueError(f"line {lines['current']!r}: give 'active' or 'current', not both")
        game = cls(rules, n_players=n, _deal=False)
        st = game.state
        gs, ps = st.gs[0], st.ps[0]
        rv = game.rv
        gs[L.G_NP] = n
        gs[L.G_SEED] = number("seed", 0, 0, 2 ** 63 - 1)
        rnd = number("round", 1, 1, rules.n_rounds) - 1
        hand_no = number("hand", rnd + 1, 1, 100_000) - 1
        if hand_no % rules.n_rounds != rnd:
            raise ValueError(f"hand {hand_no + 1} is played with round {hand_no % rules.n_rounds + 1}, not {rnd + 1}")
        gs[L.G_HAND_NO] = hand_no
        gs[L.G_ROUND] = rnd
        gs[L.G_LAST_HAND] = number("last_hand", hand_no + 1, hand_no + 1, 100_000) - 1
        gs[L.G_DEAL_NO] = 0
        gs[L.G_TURN] = number("turn", 0, 0, rules.max_turns_per_hand - 1)
        active = seat("active", seat("current", 0))
        gs[L.G_ACTIVE] = active
        d = 1 if rules.play_direction == "left" else -1
        gs[L.G_DEALER] = seat("dealer", (active - d) % n)
        used = np.zeros(L.N_TYPES, dtype=np.int64)

        def take(cards, where):
            for c in cards:
                used[c.type] += 1
                cap = rules.n_jokers if c.type == JOKER else rules.n_decks
                if used[c.type] > cap:
                    raise ValueError(f"{where}: more copies of {type_text(c.type)} than the deck holds")

        for p, val in players.items():
            cards_part, _, flags = val.partition("|")
            cards = [] if cards_part.strip() in ("", "-") else parse_cards(cards_part)
            take(cards, f"P{p + 1}")
            for c in cards:
                st.hands[0, p, c.type] += 1
            flag_text = re.sub(r"\bnot[ _]laid\b", "not_laid", flags.lower())
            for f in (x.strip() for x in flag_text.replace(",", " ").split()):
                if f in ("laid", "laid_down", "down"):
                    ps[p, L.PS_LAID] = 1
                elif f.startswith("calls=") or f.startswith("total="):
                    lo, hi = (0, rules.max_calls_per_player) if f.startswith("calls=") else (0, 10_000_000)
                    if not re.fullmatch(r"\d{1,9}", f[6:]) or not lo <= int(f[6:]) <= hi:
                        raise ValueError(f"line {lines[f'p{p + 1}']!r}: {f[:5]} must be a whole number in {lo}..{hi}")
                    if f.startswith("calls="):
                        ps[p, L.PS_CALLS] = int(f[6:])
                        ps[p, L.PS_CALLS_BASE] = int(f[6:])
                    else:
                        ps[p, L.PS_TOTAL] = int(f[6:])
                elif f in ("not_laid", "-"):
                    ps[p, L.PS_LAID] = 0
                else:
                    raise ValueError(f"line {lines[f'p{p + 1}']!r}: unknown flag {f!r} (laid, not laid, calls=N, total=N)")
        m = 0
        for val in tables:
            for owner_tok, body in re.findall(r"(P\d+)?\s*(?:four|three|run|set)?\s*\[([^\]]*)\]", val, re.I):
                owner = _parse_seat(owner_tok) if owner_tok else 0
                if not 0 <= owner < n:
                    raise ValueError(f"line 'table: {val}': no seat {owner_tok} in a game of {n} players")
                toks = body.split()
                cards = parse_cards(toks)
                take(cards, f"table meld {m + 1}")
                _place_meld(game, m, owner, toks)
                ps[owner, L.PS_LAID] = 1
                m += 1
        gs[L.G_N_MELDS] = m
        pile = parse_cards(kv.get("discard", "")) if kv.get("discard", "-").strip() not in ("", "-") else []
        take(pile, "discard")
        for i, c in enumerate(pile):
            st.disc[0, i] = c.type
            st.disc_by[0, i] = -1
        gs[L.G_DISC_N] = len(pile)
        if pile:
            by = seat("discard_by", (active - d) % n, allow_none=True)
            st.disc_by[0, len(pile) - 1] = by
        stock_toks = kv.get("stock", "rest").split()
        top = [t for t in stock_toks if t.lower() not in ("rest", "-")]
        top_cards = parse_cards(top)
        take(top_cards, "stock")
        rest: list[int] = []
        if any(t.lower() == "rest" for t in stock_toks):
            for t in range(L.N_TYPES):
                cap = rules.n_jokers if t == JOKER else rules.n_decks
                rest += [t] * int(cap - used[t])
            rest_arr = np.asarray(rest, dtype=np.int8)
            from ..rng import rng_key, shuffle_prefix
            shuffle_prefix(rest_arr, len(rest_arr), np.uint64(rng_key(int(gs[L.G_SEED]), 0, 1 << 39)))
            rest = [int(x) for x in rest_arr]
        # stock array is bottom -> top; text lists top first
        order = rest + [c.type for c in reversed(top_cards)]
        for i, t in enumerate(order):
            st.stock[0, i] = t
        gs[L.G_STOCK_N] = len(order)
        phase = kv.get("phase", "draw").strip().lower()
        if phase not in L.PHASE_NAMES[:4]:
            raise ValueError(f"phase {phase!r} is not one of call, allow, draw, play")
        gs[L.G_PHASE] = L.PHASE_NAMES.index(phase)
        gs[L.G_TAKEN] = parse_cards([kv["taken"]])[0].type if "taken" in kv else -1
        gs[L.G_TAKEN_MUST] = 1 if kv.get("taken_must", "no").lower() in ("1", "yes", "true") else 0
        gs[L.G_FREED] = number("freed", 0, 0, rules.n_jokers)
        gs[L.G_OWED] = parse_cards([kv["owed"]])[0].type if "owed" in kv else -1
        gs[L.G_MANIPS] = number("manipulations", 0, 0, 1000)
        gs[L.G_CALLER] = seat("caller", -1)
        gs[L.G_AFTER_ALLOW] = 1 if kv.get("after_allow", "no").lower() in ("1", "yes", "true") else 0
        gs[L.G_CALL_DONE] = 1 if (gs[L.G_AFTER_ALLOW] or phase == "play" or
                                   kv.get("call_done", "no").lower() in ("1", "yes", "true")) else 0
        if phase == "allow" and gs[L.G_CALLER] < 0:
            raise ValueError("phase 'allow' needs 'caller: Pn'")
        gs[L.G_TO_ACT] = seat("to_act", -1) if phase == "call" else -1
        for key in ("taken", "owed"):
            if key in kv and len(kv[key].split()) != 1:
                raise ValueError(f"line {lines[key]!r}: {key} is one card")
        _check_turn_debts(kv, lines, gs, ps, st.hands[0, active], phase)
        core.resume(*st.arrays(), rv, 0)
        game._attach()
        code = game.invariants(full_deck=any(t.lower() == "rest" for t in stock_toks))
        if code:
            raise ValueError(f"the position is not a consistent {rules.name} position (engine invariant "
                             f"{_INV_NAMES.get(code, code)})")
        if not game.terminal and not game.legal_mask().any():
            raise ValueError("the position leaves the player to act no legal action")
        return game


def _check_turn_debts(kv, lines, gs, ps, held, phase: str) -> None:
    """What the active player still owes this turn must be a position the engine could be in: a
    card taken from the pile (``taken``), a card taken from the table (``owed``), freed jokers and
    manipulations all happen in the play phase; what must still be placed is in his hand; only a
    player who has laid down manipulates the table."""
    active = int(gs[L.G_ACTIVE])
    for key in ("taken", "taken_must", "owed", "freed", "manipulations"):
        if key in kv and phase != "play" and kv[key].strip().lower() not in ("0", "no", "false", "none", "-"):
            raise ValueError(f"line {lines[key]!r}: {key} belongs to the play phase (the position is in phase {phase!r})")
    if gs[L.G_TAKEN_MUST] and gs[L.G_TAKEN] < 0:
        raise ValueError(f"line {lines['taken_must']!r}: taken_must needs the card taken ('taken: C')")
    if gs[L.G_TAKEN_MUST] and held[gs[L.G_TAKEN]] == 0:
        raise ValueError(f"line {lines['taken']!r}: P{active + 1} must still meld {type_text(int(gs[L.G_TAKEN]))} "
                         "this turn but does not hold it")
    debts = (("owed", gs[L.G_OWED] >= 0), ("freed", gs[L.G_FREED] > 0), ("manipulations", gs[L.G_MANIPS] > 0))
    for key, owes in debts:
        if owes and not ps[active, L.PS_LAID]:
            raise ValueError(f"line {lines[key]!r}: only a player who has laid down manipulates the table, "
                             f"and P{active + 1} has not")
    if gs[L.G_OWED] >= 0 and held[gs[L.G_OWED]] == 0:
        raise ValueError(f"line {lines['owed']!r}: P{active + 1} owes {type_text(int(gs[L.G_OWED]))} to the table "
                         "but does not hold it")
    if held[JOKER] < gs[L.G_FREED]:
        raise ValueError(f"line {lines['freed']!r}: P{active + 1} has {gs[L.G_FREED]} freed joker(s) to place "
                         f"but holds {int(held[JOKER])}")


_TEXT_KEYS = frozenset({"round", "active", "current", "phase", "table", "discard", "discard_by", "stock", "players",
                        "dealer", "hand", "last_hand", "to_act", "caller", "taken", "seed", "after_allow", "turn",
                        "taken_must", "freed", "owed", "manipulations", "call_done"})
_INV_NAMES = {core.INV_DECK_EXCEEDED: "deck exceeded", core.INV_CONSERVATION: "card conservation",
              core.INV_MELD_ILLEGAL: "illegal table meld", core.INV_MELD_LAYOUT: "table meld layout",
              core.INV_CALLS: "call count", core.INV_MASK_EMPTY: "no legal action", core.INV_NEGATIVE: "negative count",
              core.INV_TURN_CAP: "turn cap", core.INV_MELD_OF_UNLAID: "a meld of a player not laid down"}


def _place_meld(game: Game, m: int, owner: int, toks: list[str]) -> None:
    """Write table meld ``m`` from tokens (runs low -> high; jokers may be declared)."""
    rules, st = game.rules, game.state
    cards = parse_cards(toks)
    if m >= L.M_MAX:
        raise ValueError("too many table melds")
    run = _as_run(cards)
    if run is not None and is_legal_meld(rules, _decl_tokens_run(run), "run"):
        s, lo, slots = run
        st.minfo[0, m] = 0
        st.minfo[0, m, L.MI_KIND] = L.MK_RUN
        st.minfo[0, m, L.MI_KEY] = s
        st.minfo[0, m, L.MI_LO] = lo
        st.minfo[0, m, L.MI_HI] = lo + len(slots) - 1
        st.minfo[0, m, L.MI_LEN] = len(slots)
        st.minfo[0, m, L.MI_NJ] = sum(1 for c in slots if c == JOKER)
        st.minfo[0, m, L.MI_OWNER] = owner
        for i, c in enumerate(slots):
            q = lo + i
            st.mcards[0, m, q] = c
            st.mas[0, m, q] = pos_type(s, q)
        return
    if not is_legal_meld(rules, toks, "set"):
        raise ValueError(f"table meld [{' '.join(toks)}] is not a legal meld of {rules.name}")
    rank = next((c.type % 13 if c.type != JOKER else c.as_type % 13) for c in cards
                if c.type != JOKER or c.as_type >= 0)
    st.minfo[0, m] = 0
    st.minfo[0, m, L.MI_KIND] = L.MK_SET
    st.minfo[0, m, L.MI_KEY] = rank
    st.minfo[0, m, L.MI_OWNER] = owner
    nat = [c for c in cards if c.type != JOKER]
    jok = [c for c in cards if c.type == JOKER]
    for i, c in enumerate(nat):
        st.mcards[0, m, i] = c.type
        st.mas[0, m, i] = c.type
    st.minfo[0, m, L.MI_LEN] = len(nat)
    for c in jok:
        i = int(st.minfo[0, m, L.MI_LEN])
        st.mcards[0, m, i] = JOKER
        st.mas[0, m, i] = c.as_type if c.as_type >= 0 else core.set_joker_meaning(st.minfo, st.mas, 0, m)
        st.minfo[0, m, L.MI_LEN] = i + 1
    st.minfo[0, m, L.MI_HI] = st.minfo[0, m, L.MI_LEN] - 1
    st.minfo[0, m, L.MI_NJ] = len(jok)


def _as_run(cards):
    """(suit, lo, slot card types) if the tokens, read low -> high, form a run shape; else None."""
    suit = None
    p0 = None
    for i, c in enumerate(cards):
        t = c.type if c.type != JOKER else c.as_type
        if t < 0:
            continue
        if suit is None:
            suit = t // 13
        elif t // 13 != suit:
            return None
        r = t % 13
        if r != 0 and p0 is None:
            p0 = r + 1 - i
    if suit is None:
        return None
    if p0 is None:                       # only aces (and free jokers): first card decides
        first = cards[0]
        t0 = first.type if first.type != JOKER else first.as_type
        p0 = 1 if t0 >= 0 else 14 - next(i for i, c in enumerate(cards) if c.type != JOKER or c.as_type >= 0)
    slots = []
    for i, c in enumerate(cards):
        q = p0 + i
        if not 1 <= q <= 14:
            return None
        want = pos_type(suit, q)
        t = c.type if c.type != JOKER else c.as_type
        if t >= 0 and t != want:
            return None
        slots.append(JOKER if c.type == JOKER else c.type)
    return suit, p0, slots


def _decl_tokens_run(run):
    s, lo, slots = run
    out = []
    for i, c in enumerate(slots):
        t = pos_type(s, lo + i)
        out.append(f"JK={type_text(t)}" if c == JOKER else type_text(t))
    return out

