"""Positions from text: ``Game.from_text`` builds a single-hand position in a notation that makes
rule tests read like the rule, and accepts only positions the engine could be in (every refusal
names the line)::

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
from typing import TYPE_CHECKING

import numpy as np

from kalooki_sim.core.cards import JOKER, parse_cards, type_text
from kalooki_sim.core.rules import Rules, load_rules
from kalooki_sim.engine import core, layout as L
from kalooki_sim.engine.action_text import _parse_seat
from kalooki_sim.melds import is_legal_meld
from kalooki_sim.melds.positions import pos_type

if TYPE_CHECKING:
    from .game import Game

__all__ = ["position_from_text"]

def position_from_text(cls, text: str, rules="caribbean"):
    """Build a single-hand position of ``cls`` (``Game``) from text (format: module docstring).

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
        from kalooki_sim.core.rng import rng_key, shuffle_prefix
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
    core.resume(st.arrays(), rv, 0)
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
              core.INV_TURN_CAP: "turn cap", core.INV_MELD_OF_UNLAID: "a meld of a player not laid down",
              core.INV_SHOWN: "a card known to be held is not held"}


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
