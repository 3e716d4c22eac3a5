"""Checking replays: ``validate_replay`` re-deals every game of a file from its seed and game id and
re-applies every recorded action through the engine (legal, by the seat whose decision it is,
named as the engine names it), comparing every event field by field with what the engine
computes, so other tools can trust -- or reject, with the line number and the reason -- any file
they are given (docs/replay-format.md)."""

from __future__ import annotations

import math

from kalooki_sim.agents.base import default_params, policy_id
from kalooki_sim.core.rules import Rules, load_rules
from kalooki_sim.engine import core, layout as L
from kalooki_sim.engine.action_text import action_text, parse_action

from .replay import READABLE_FORMATS, ReplayError, _buys_back, _jsonable, _seat, _Table, read_replay, record_games
from .rollout import match_length

__all__ = ["validate_replay"]


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


_INT64_MAX = 2**63 - 1
_NAME_MAX = 100          # a variant or agent name longer than this is not one


def _check_header(ln: int, hdr: dict) -> None:
    """The header's fields have the types and ranges the engine takes (checked before anything is
    dealt: the kernels trust them).  ``ReplayError`` naming the first field that does not."""
    for k in ("seed", "game_id", "players", "hands", "dealer", "variant", "mode", "agents"):
        if k not in hdr:
            raise ReplayError(f"line {ln}: game header without {k!r}")
    for k, hi in (("seed", _INT64_MAX), ("game_id", _INT64_MAX), ("players", 6), ("hands", 100_000), ("dealer", 5)):
        v = hdr[k]
        lo = 2 if k == "players" else (1 if k == "hands" else 0)
        if not _is_int(v) or not lo <= v <= hi:
            raise ReplayError(f"line {ln}: header field {k!r} must be an integer in {lo}..{hi}, got {v!r:.60}")
    if not isinstance(hdr["variant"], str) or not 0 < len(hdr["variant"]) <= _NAME_MAX:
        raise ReplayError(f"line {ln}: header field 'variant' must be a rules name, got {hdr['variant']!r:.60}")
    if hdr["mode"] not in ("hands", "matches"):
        raise ReplayError(f"line {ln}: header field 'mode' must be 'hands' or 'matches', got {hdr['mode']!r:.60}")
    agents = hdr["agents"]
    if (not isinstance(agents, list) or len(agents) != hdr["players"]
            or not all(isinstance(a, str) and 0 < len(a) <= _NAME_MAX for a in agents)):
        raise ReplayError(f"line {ln}: header field 'agents' must list one agent name per player "
                          f"({hdr['players']}), got {agents!r:.60}")
    for a in agents:
        if a != "external":
            try:
                policy_id(a)
            except ValueError as e:
                raise ReplayError(f"line {ln}: header field 'agents': {e}") from None
    params = hdr.get("params")
    if params is not None and (not isinstance(params, list) or len(params) != hdr["players"] or not all(
            isinstance(row, list) and all(_is_int(x) or (isinstance(x, float) and math.isfinite(x)) for x in row)
            for row in params)):
        raise ReplayError(f"line {ln}: header field 'params' must hold one row of finite numbers per player")
    strategies = hdr.get("strategies")
    if strategies is not None and (not isinstance(strategies, list) or len(strategies) != hdr["players"]
                                   or not all(isinstance(x, str) for x in strategies)):
        raise ReplayError(f"line {ln}: header field 'strategies' must list one name per player")
    buy_back = hdr.get("buy_back")
    if buy_back is not None and (not isinstance(buy_back, list) or len(buy_back) != hdr["players"]
                                 or not all(isinstance(x, bool) for x in buy_back)):
        raise ReplayError(f"line {ln}: header field 'buy_back' must hold one true/false per player, "
                          f"got {buy_back!r:.60}")


def _rules_of(ln: int, hdr: dict) -> Rules:
    """The rules a header names, checked against its digest (a preset by name, else the preset
    rebuilt with the recorded knob values, so files of custom rules validate too)."""
    digest = hdr.get("rules_digest")
    name = hdr.get("variant", "caribbean")
    recorded = hdr.get("rules")
    if recorded is not None and not isinstance(recorded, dict):
        raise ReplayError(f"line {ln}: header field 'rules' must be the rules' knobs (an object)")
    try:
        r = load_rules(name)
        if r.digest() == digest:
            _same_knobs(ln, r, recorded)
            return r
        if recorded is not None:
            knobs = {k: v for k, v in recorded.items() if k != "name"}
            r = r.replace(**knobs)
            if r.digest() == digest:
                return r
    except (ValueError, TypeError, OSError) as e:
        raise ReplayError(f"line {ln}: cannot rebuild the rules {name!r}: {e}") from None
    raise ReplayError(f"line {ln}: rules digest {digest} does not match variant {name!r} "
                      f"(digest {load_rules(name).digest()}) or the recorded rules")


def _same_knobs(ln: int, rules: Rules, recorded) -> None:
    """A header whose digest names ``rules`` must not record other knob values beside it."""
    if recorded is None:
        return
    mine = _jsonable(rules.to_dict())
    for k in sorted(set(mine) | set(recorded)):
        if recorded.get(k, "<missing>") != mine.get(k, "<missing>"):
            raise ReplayError(f"line {ln}: header rules knob {k!r} is {recorded.get(k, '<missing>')!r:.60}, but "
                              f"the rules of digest {rules.digest()} have {mine.get(k, '<missing>')!r:.60}")


def _compare(ln: int, recorded: dict, expected: dict) -> None:
    expected = _jsonable(expected)
    if recorded.get("type") != expected["type"]:
        raise ReplayError(f"line {ln}: expected a {expected['type']!r} event here, found "
                          f"{recorded.get('type')!r}")
    for k in sorted(set(recorded) | set(expected)):
        if recorded.get(k, "<missing>") != expected.get(k, "<missing>"):
            raise ReplayError(f"line {ln}: {expected['type']} field {k!r} is {recorded.get(k, '<missing>')!r}, "
                              f"the engine says {expected.get(k, '<missing>')!r}")


def _check_action(ln: int, t: _Table, ev: dict) -> int:
    """The id of a recorded action after checking it is legal here and named as the engine names it."""
    st, rv = t.game.state, t.game.rv
    for k in ("seat", "phase", "action", "text"):
        if k not in ev:
            raise ReplayError(f"line {ln}: action without {k!r}")
    to_act = t.game.seat_players[t.gs(L.G_TO_ACT)]
    if ev["seat"] != to_act:
        who = _seat(ev["seat"]) if _is_int(ev["seat"]) else f"{ev['seat']!r:.20}"
        raise ReplayError(f"line {ln}: {who} acts, but it is {_seat(to_act)}'s decision")
    if ev["phase"] != L.PHASE_NAMES[t.gs(L.G_PHASE)]:
        raise ReplayError(f"line {ln}: phase {ev['phase']!r}, but the game is in phase "
                          f"{L.PHASE_NAMES[t.gs(L.G_PHASE)]!r}")
    a = ev["action"]
    if not isinstance(a, int) or not 0 <= a < L.N_ACTIONS:
        raise ReplayError(f"line {ln}: no such action id {a!r}")
    err = int(core.check_action(st.arrays(), rv, 0, a))
    if err:
        raise ReplayError(f"line {ln}: illegal action {ev['text']!r} (id {a}) by {_seat(ev['seat'])}: "
                          f"{L.ERROR_TEXT.get(err, err)}")
    text = action_text(st, 0, a)
    if ev["text"] != text:
        raise ReplayError(f"line {ln}: action {a} is {text!r} here, the file says {ev['text']!r}")
    try:
        back = parse_action(st, 0, text, rv)
    except ValueError as e:
        back = f"unparsable ({e})"
    if back != a:
        raise ReplayError(f"line {ln}: internal: text {text!r} parses to {back}, not {a}")
    return a


def _legacy_row(row, agent: str) -> list[float]:
    """A format-1 or -2 parameter row as format 3 reads it: a value <= 0 meant the default."""
    d = default_params(agent)
    return [x if x > 0 else (float(d[j]) if j < d.size else 0.0) for j, x in enumerate(row)]


def validate_replay(path_or_lines, check_agents: bool = False) -> dict:
    """Check a replay against the engine; return ``{"games", "hands", "actions"}`` counts.

    Every game is re-dealt from its seed and game id, every action re-applied through the engine
    (legal, by the seat whose decision it is, with the engine's text), and every event compared
    field by field with what the engine computes (deals, drawn cards, hand sizes, penalties,
    totals, match winners).  ``check_agents=True`` also re-records each game with the agents
    and parameters of its header and requires the same decisions.  Raises ``ReplayError`` naming
    the first offending line.
    """
    events = list(read_replay(path_or_lines))
    i = 0
    counts = {"games": 0, "hands": 0, "actions": 0}
    while i < len(events):
        ln, hdr = events[i]
        if hdr.get("type") != "game":
            raise ReplayError(f"line {ln}: expected a 'game' header, found {hdr.get('type')!r}")
        if hdr.get("format") not in READABLE_FORMATS:
            raise ReplayError(f"line {ln}: replay format {hdr.get('format')!r}; this reader knows formats "
                              + ", ".join(map(str, READABLE_FORMATS)))
        _check_header(ln, hdr)
        try:
            rules = _rules_of(ln, hdr)
            elim = _buys_back(rules, hdr["mode"])
            if elim != ("buy_back" in hdr):
                raise ReplayError(f"line {ln}: header field 'buy_back' belongs in (and only in) the header of an "
                                  f"elimination match; this is a {hdr['mode']!r} game of {rules.name}")
            if hdr["mode"] == "hands" and hdr["hands"] != 1:
                raise ReplayError(f"line {ln}: a 'hands' game plays one hand, the header says {hdr['hands']}")
            if hdr["mode"] == "matches":
                match_length(rules, "matches", None if elim else hdr["hands"], hdr["hands"] if elim else None)
            t = _Table(rules, hdr["players"], hdr["seed"], hdr["game_id"], hdr["mode"], hdr["hands"],
                       buy_back=hdr.get("buy_back", "always"))
        except KeyError as e:
            raise ReplayError(f"line {ln}: game header without {e.args[0]!r}") from None
        except (ValueError, NotImplementedError) as e:
            if isinstance(e, ReplayError):
                raise
            raise ReplayError(f"line {ln}: cannot start the game: {e}") from None
        if hdr.get("dealer") != t.game.seat_players[t.gs(L.G_DEALER)]:
            raise ReplayError(f"line {ln}: dealer {hdr.get('dealer')!r}, the engine deals with "
                              f"{t.game.seat_players[t.gs(L.G_DEALER)]}")
        start = i
        i += 1
        pending = [t.deal_event()]
        while True:
            for exp in pending:
                if i >= len(events):
                    raise ReplayError(f"game {t.game_id} ends early: a {exp['type']!r} event is missing at the end")
                _compare(events[i][0], events[i][1], exp)
                counts["hands"] += exp["type"] == "hand_end"
                i += 1
            if t.terminal:
                break
            if i >= len(events):
                raise ReplayError(f"game {t.game_id} ends early: the game is not over after line {events[-1][0]}")
            ln, ev = events[i]
            if ev.get("type") != "action":
                raise ReplayError(f"line {ln}: expected an 'action' event, found {ev.get('type')!r}")
            a = _check_action(ln, t, ev)
            pending = t.play(a)
            counts["actions"] += 1
        counts["games"] += 1
        if check_agents:
            if "external" in hdr["agents"]:
                raise ReplayError(f"line {events[start][0]}: seat(s) "
                                  + ", ".join(_seat(p) for p, a in enumerate(hdr["agents"]) if a == "external")
                                  + " were played from outside (kalooki play): there are no agent decisions to check")
            elim = _buys_back(rules, hdr["mode"])
            params = hdr.get("params")
            if params is not None and hdr["format"] < 3:       # before format 3 a value <= 0 meant the default
                params = [_legacy_row(row, agent) for row, agent in zip(params, hdr["agents"])]
            again = record_games(rules, hdr["players"], hdr["agents"], hdr["seed"], [hdr["game_id"]],
                                 hdr["mode"], params=params,
                                 hands_per_game=None if hdr["mode"] == "hands" or elim else hdr["hands"],
                                 max_hands=hdr["hands"] if elim else None,
                                 buy_back=hdr.get("buy_back", "always"), strategies=hdr.get("strategies"))
            again[0].update(format=hdr["format"], params=hdr.get("params"))     # as written, whatever its format
            for (ln, ev), exp in zip(events[start:i], again):
                if ev != _jsonable(exp):
                    raise ReplayError(f"line {ln}: the recorded agents would not have played this "
                                      f"({exp.get('text', exp['type'])!r} expected)")
    if counts["games"] == 0:
        raise ReplayError("no games in the replay")
    return counts
