"""Replays as text for people: ``render_replay`` turns a replay file (or events) into readable
turn-by-turn text.  Rendered text has no compatibility promise; the golden files in
``tests/golden/`` pin it for review (docs/replay-format.md)."""

from __future__ import annotations

from kalooki_sim.engine import layout as L

from .replay import _seat, read_replay

__all__ = ["render_replay"]


def _contract_text(c) -> str:
    if isinstance(c, dict):
        return f"open with {c.get('opening_min_points')} points"
    threes, fours = c
    parts = []
    if threes:
        parts.append(f"{threes} three{'s' if threes > 1 else ''}")
    if fours:
        parts.append(f"{fours} four{'s' if fours > 1 else ''}")
    return " + ".join(parts) or "none"


def _hand_text(cards) -> str:
    return " ".join(cards) if cards else "-"


def _n_cards(k) -> str:
    return f"{k} card{'s' if k != 1 else ''}"


def _action_line(ev: dict, n_melds: int) -> str:
    """One decision as text; ``n_melds`` = table melds before it (lay-downs say which numbers
    their melds get, so a later "tack 9H on 3" can be followed)."""
    who = _seat(ev["seat"])
    a, text = ev["action"], ev["text"]
    if a in (L.A_PASS, L.A_CALL):
        body = f"{text} on {ev['top']}"
    elif a == L.A_ALLOW:
        c, got = ev["caller"], ev["caller_drew"]
        extra = f" + {_hand_text(got[1:])} from the stock" if len(got) > 1 else ""
        body = f"allow: {_seat(c)} takes {got[0]}{extra} ({_seat(c)}: {_n_cards(ev['caller_hand_size'])})"
    elif a in (L.A_DENY, L.A_DRAW_STOCK, L.A_DRAW_DISCARD):
        got = _hand_text(ev["drawn"]) if ev["drawn"] else "nothing"
        body = f"{text}: {got} ({_n_cards(ev['hand_size'])})"
    elif L.A_LAY <= a < L.A_DISCARD:
        k = text.count("[")
        nums = f"meld {n_melds + 1}" if k == 1 else f"melds {n_melds + 1}-{n_melds + k}"
        body = f"{text} as {nums} ({_n_cards(ev['hand_size'])})"
    elif "new_meld" in ev:
        body = (f"{text} -> [{' '.join(ev['meld'])}] and [{' '.join(ev['new_meld'])}] as meld "
                f"{n_melds + 1} ({_n_cards(ev['hand_size'])})")
    elif "meld" in ev:
        body = f"{text} -> [{' '.join(ev['meld'])}] ({_n_cards(ev['hand_size'])})"
    else:
        body = f"{text} ({_n_cards(ev['hand_size'])})"
    if ev.get("reshuffled"):
        body += " [stock rebuilt from the discards]"
    body += {"went_out": " -- goes out", "void_redeal": " -- stock exhausted: deal void, redealt",
             "void_cap": " -- stock exhausted, no redeals left", "turn_cap": " -- turn limit reached",
             None: ""}.get(ev.get("end"), f" -- {ev.get('end')}")
    mark = " " if ev["seat"] == ev["active"] else "*"     # * = decision outside one's own turn
    return f"  {ev['turn'] + 1:>3} {mark}{who}  {body}"


def render_replay(path_or_lines) -> str:
    """Readable turn-by-turn text of a replay (a path, JSON lines, or ``record_games`` events).

    Seats are shown as P1..Pn, turns from 1; ``*`` marks a decision taken outside one's own turn
    (a call or pass in the call window)."""
    out: list[str] = []
    n = 0
    n_melds = 0
    for _, ev in read_replay(path_or_lines):
        typ = ev.get("type")
        if typ == "game":
            n = ev["players"]
            if out:
                out.append("")
            out.append(f"=== game {ev['game_id']}: {ev['variant']} (rules {ev['rules_digest']}), seed {ev['seed']}, "
                       f"{ev['mode']} mode, {n} players")
            names = ev.get("strategies") or ev["agents"]
            out.append("    seats: " + ", ".join(f"{_seat(p)} {a}" + (f" ({b})" if a != b else "")
                                         for p, (a, b) in enumerate(zip(names, ev["agents"]))))
        elif typ == "deal":
            n_melds = 0
            redeal = f" (redeal {ev['redeal']} after a void deal)" if ev["redeal"] else ""
            out.append("")
            out.append(f"--- hand {ev['hand_no'] + 1}, round {ev['round']} (contract {_contract_text(ev['contract'])}), "
                       f"dealer {_seat(ev['dealer'])}{redeal}")
            for p, cards in enumerate(ev["hands"]):
                out.append(f"    {_seat(p)}: {_hand_text(cards) if cards is not None else '(out of the match)'}")
            up = f"upcard {ev['upcard']}, " if ev["upcard"] else ""
            out.append(f"    {up}stock {ev['stock']}; {_seat(ev['active'])} plays first")
        elif typ == "action":
            out.append(_action_line(ev, n_melds))
            if L.A_LAY <= ev["action"] < L.A_DISCARD:
                n_melds += ev["text"].count("[")
            elif "new_meld" in ev:
                n_melds += 1
        elif typ == "hand_end":
            w = ev["winner"]
            how = {"went_out": f"{_seat(w) if w is not None else '?'} went out",
                   "turn_cap": "turn limit, scored as it stands",
                   "void_cap": "void deals exhausted, scored as it stands"}.get(ev["end"], ev["end"])
            extra = f", down and out x{ev['multiplier']}" if ev["multiplier"] != 1 else ""
            out.append(f"--- hand {ev['hand_no'] + 1} over: {how} after {ev['turns']} turns{extra}; "
                       f"reshuffles {ev['reshuffles']}, voids {ev['voids']}")
            for p in range(n):
                if ev["penalties"][p] is not None:
                    out.append(f"    {_seat(p)} {ev['penalties'][p]:>4}  {_hand_text(ev['left'][p])}")
            out.append("    totals: " + ", ".join(f"{_seat(p)} {x}" for p, x in enumerate(ev["totals"])))
            if "sheet" in ev:
                sh = ev["sheet"]
                out.append("    units: " + ", ".join(f"{_seat(p)} {u:+d}" for p, u in enumerate(sh["units"]))
                           + f"; pool {sh['pool']}")
                news = [f"{_seat(p)} {st.replace('_', ' ')}" for p, st in enumerate(sh["status"])
                        if st not in ("in", "out")]
                if news:
                    out.append("    eliminated: " + ", ".join(news))
        elif typ == "game_end":
            line = (f"=== game {ev['game_id']} over after {ev['hands']} hand(s), {ev['steps']} decisions: totals "
                    + ", ".join(f"{_seat(p)} {x}" for p, x in enumerate(ev["totals"])))
            if "winners" in ev:
                line += "; winner(s) " + (" ".join(_seat(p) for p in ev["winners"]) or "none")
            if "money" in ev:
                line += "; money " + ", ".join(f"{_seat(p)} {x:+d}" for p, x in enumerate(ev["money"]))
                if not ev["finished"]:
                    line += " (hand cap reached: nobody takes the pool)"
            out.append(line)
        else:
            out.append(f"?? unknown event {typ!r}")
    return "\n".join(out) + "\n"
