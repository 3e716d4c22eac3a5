"""Action texts: the engine's name for every action id in a position, and the parser back.

``Game`` (``runtime.game``) and the replays speak this notation; it lives apart from the facade so
that every reader of ids and texts shares one definition.  The notation::

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

"""

from __future__ import annotations

import re
from contextlib import contextmanager

from kalooki_sim.core.cards import JOKER, parse_cards, type_text
from kalooki_sim.melds.api import decode_melds
from kalooki_sim.melds.positions import pos_type

from . import core, layout as L
from .state import State

__all__ = ["action_text", "parse_action"]


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
        head = "lay down"
        nm = int(st.plan_n[g, 0])
        if nm < 0:
            return head
        melds = decode_melds(st.plan[g], nm)
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
        if k != 0:
            raise ValueError(f"no lay-down plan {k + 1} (the engine offers one: its exact best)")
        rest = m.group(4).strip()
        if rest:
            want = [p.split() for p in re.findall(r"\[([^\]]*)\]", rest)]
            nm = int(st.plan_n[g, 0])
            have = decode_melds(st.plan[g], nm) if nm >= 0 else None
            if have is None or _strip_jokers(want) != _strip_jokers(have):
                offered = action_text(st, g, L.A_LAY)
                raise _NotOffered(f"only the exact best lay-down is offered ({offered!r})")
        return L.A_LAY
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
        legal = [] if rv is None else [a for a in cands if core.check_action(st.arrays(), rv, g, a) == 0]
        return legal[0] if len(legal) == 1 else cands[0]
    raise ValueError(f"cannot parse action {text!r}")


@contextmanager
def _scratch_kept(st):
    """The engine's legality checks search lay-downs in its scratch ``work`` (``layout.W_*``), which
    means nothing between calls, and certify hands they find without one
    (``ps[..., PS_CERT:NPS]``, a cache).  Asking whether an action is legal must not look like a
    change of the position, so the Python layer puts both back."""
    saved = st.work.copy()
    saved_cert = st.ps[:, :, L.PS_CERT:L.NPS].copy()
    try:
        yield
    finally:
        st.work[:] = saved
        st.ps[:, :, L.PS_CERT:L.NPS] = saved_cert


class _NotOffered(ValueError):
    pass
