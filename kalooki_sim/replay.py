"""Replays: record simulated games move by move, render them as text, validate recorded files.

The closed loop (``rollout.simulate``) only reports results per hand.  To *look* at games — debug
an agent, explain a strange score, give a person a game to follow — we need every decision.
``record_games`` plays the same games on the one compiled loop (``kalooki_sim.loop``) stepped from
Python: the loop stops before every decision (``Game`` with the agents seated), the seat's compiled
agent says what it plays (``loop.agent_action``: the closed loop's call, on the seat's own random
stream) and the loop applies it; this module only turns each step into the events of the JSON-lines
file (``docs/replay-format.md``).

So records cannot drift from the simulator by construction; the recorder still compares its per-hand
results (penalties, winner, end, turns, reshuffles, voids, dealer; totals and match shares in
"matches" mode) with ``rollout.simulate`` for the same game id and raises ``ReplayDriftError`` on
any difference, as a standing test of "the stepped loop plays the closed loop's games".

``validate_replay`` re-applies every recorded action through ``engine.Game`` (no agents needed):
each action must be legal, its text must be the engine's text for its id, and every derived field
(deals, drawn cards, hand sizes, penalties, totals) must be what the engine computes.  So other
tools can trust — or reject, with the line number and the reason — any file they are given.
``render_replay`` turns a file into readable turn-by-turn text.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from .agents.base import params_matrix, policy_id, policy_name
from .cards import parse_card, type_text
from .engine import core
from .engine import layout as L
from .engine.action_text import _meld_tokens, action_text, parse_action
from .engine.game import Game
from .rules import Rules, load_rules
from .match import penalty_multiplier
from .rollout import buy_back_flags, match_length
from .rulevec import R_N_ROUNDS, R_PENALTY

__all__ = ["FORMAT", "ReplayError", "ReplayDriftError", "record_games", "render_replay",
           "validate_replay", "read_replay", "Table", "open_table", "write_replay"]

FORMAT = 2
"""Version of the JSON-lines format, written as ``format`` in every ``game`` header.  Bump it on
any change a reader could notice (a field renamed, removed or with another meaning)."""
READABLE_FORMATS = (1, 2)
"""Formats ``validate_replay`` reads.  Format 2 added the points-variant matches (seats numbered by
real player, ``null`` for a player out, the score sheet); a format-1 file (single hands and
Caribbean matches) has exactly the events format 2 writes for the same games."""

END_NAMES = {L.EV_WENT_OUT: "went_out", L.EV_TURN_CAP: "turn_cap", L.EV_VOID_CAP: "void_cap",
             L.EV_VOID: "void_redeal", L.EV_KALOOKI: "kalooki"}
_END_CODES = {v: k for k, v in END_NAMES.items()}


class ReplayError(ValueError):
    """A replay file is malformed or disagrees with the engine (message names the line)."""


class ReplayDriftError(AssertionError):
    """The Python replay of a game differs from ``rollout.simulate`` (a bug, never the user's).

    An ``AssertionError`` subclass raised explicitly, so the check also runs under ``python -O``."""


# ------------------------------------------------------------------------------------------------
# small helpers


def _cards(counts) -> list[str]:
    """Card texts of a count vector, in type order (clubs, diamonds, hearts, spades; jokers last)."""
    return [type_text(t) for t in range(L.N_TYPES) for _ in range(int(counts[t]))]


def _seat(p) -> str:
    return f"P{int(p) + 1}"


def _rules(rules) -> Rules:
    return rules if isinstance(rules, Rules) else load_rules(rules)


def _jsonable(ev: dict) -> dict:
    """The event exactly as a reader will see it after a JSON round trip (tuples -> lists, ...)."""
    return json.loads(json.dumps(ev))


def _default_max_steps(rules: Rules, n_hands: int, n_players: int) -> int:
    # the same cap as rollout.simulate's default, so a game that fails there fails here
    return n_hands * (int(rules.max_turns_per_hand) + 1) * (6 * n_players + 60) * 4


# ------------------------------------------------------------------------------------------------
# one game on the table: the engine plus the per-hand bookkeeping the events need


class _Table:
    """One game being recorded or validated.

    Starts the game exactly like ``rollout._play_game`` and turns each applied action into the
    events of the file (``action``, then ``hand_end`` / ``deal`` / ``game_end`` when they happen).
    Recorder and validator both use it, so what one writes is what the other recomputes.
    """

    def __init__(self, rules: Rules, n_players: int, seed: int, game_id: int, mode: str, n_hands: int,
                 agents=None, params=None, buy_back="always"):
        if mode not in ("hands", "matches"):
            raise ValueError(f"mode must be 'hands' or 'matches', not {mode!r}")
        self.mode = mode
        self.game_id = int(game_id)
        rv = rules.to_vector()
        # as rollout: "hands" plays the hand of round (game_id % n_rounds) alone
        first = self.game_id % int(rv[R_N_ROUNDS]) if mode == "hands" else None
        self.game = Game(rules, n_players=n_players, seed=int(seed), game_id=int(game_id),
                         n_hands=1 if mode == "hands" else int(n_hands), first_hand=first, agents=agents,
                         params=params, buy_back=buy_back)
        st = self.game.state
        self.rules = self.game.rules
        self.n = int(n_players)
        self.pentab = np.asarray(rv[R_PENALTY:R_PENALTY + L.N_TYPES], dtype=np.int64)
        self.steps = 0
        self.resh0 = int(st.gs[0, L.G_TOTAL_RESHUFFLES])
        self.voids0 = int(st.gs[0, L.G_TOTAL_VOIDS])
        # points-variant matches carry the score sheet (units, buy-backs, the pool) in their events
        self.points = mode == "matches" and rules.match_mode != "fixed_hands_low_total"

    def gs(self, k: int) -> int:
        return int(self.game.state.gs[0, k])

    @property
    def terminal(self) -> bool:
        return self.gs(L.G_TERMINAL) != 0

    def _totals(self) -> list[int]:
        return self.game.sheet()["totals"]

    def _per_player(self, real: list[int], values) -> list:
        """Per-engine-seat ``values`` of a hand as a list over the real players (``None`` for a
        player not dealt in: out of an elimination match)."""
        out: list = [None] * self.n
        for i, p in enumerate(real):
            out[p] = values[i]
        return out

    def _top(self):
        nd = self.gs(L.G_DISC_N)
        return type_text(int(self.game.state.disc[0, nd - 1])) if nd > 0 else None

    def deal_event(self) -> dict:
        st = self.game.state
        rnd = self.gs(L.G_ROUND)
        if self.rules.opening_mode == "contract":
            threes, fours = self.rules.contracts[rnd]
            contract = [int(threes), int(fours)]
        else:                                    # points variants: {"opening_min_points": N}
            contract = {"opening_min_points": int(self.rules.opening_min_points or 0)}
        nd = self.gs(L.G_DISC_N)
        real = self.game.seat_players
        return {
            "type": "deal", "game_id": self.game_id, "hand_no": self.gs(L.G_HAND_NO), "round": rnd + 1,
            "redeal": self.gs(L.G_VOIDS), "dealer": real[self.gs(L.G_DEALER)],
            "active": real[self.gs(L.G_ACTIVE)], "contract": contract,
            "hands": self._per_player(real, [_cards(st.hands[0, i]) for i in range(len(real))]),
            "upcard": type_text(int(st.disc[0, 0])) if nd > 0 else None,
            "stock": self.gs(L.G_STOCK_N), "totals": self._totals(),
        }

    def game_end_event(self) -> dict:
        ev = {"type": "game_end", "game_id": self.game_id, "hands": self.gs(L.G_HANDS_DONE),
              "steps": self.steps, "totals": self._totals()}
        if self.mode == "matches":
            w = self.game.winners()
            ev["winners"] = w
            ev["win_share"] = [1.0 / len(w) if p in w else 0.0 for p in range(self.n)]
        if self.points:
            sh = self.game.sheet()
            ev.update(money=sh["money"], units=sh["units"], buy_backs=sh["buy_backs"],
                      eliminated=[not x for x in sh["in"]], pool=sh["pool"], finished=sh["finished"])
        return ev

    def _sheet_event(self) -> dict:
        """What the hand just settled did on the score sheet of a points-variant match."""
        sh = self.game.sheet()
        return {k: sh[k] for k in ("penalty", "payment", "status", "units", "buy_backs", "pool")}

    def _meld_after(self, a: int) -> tuple[list[str], list[str] | None]:
        """Tokens of the table meld a tack, joker move or manipulation changes, as it lies after
        the action (and of the new meld a split makes, else ``None``).

        Played by the engine alone on a copy, which keeps the table as the hand ends (the loop may
        already have dealt the next hand when we could look)."""
        cp = self.game.state.copy()
        n_before = int(cp.gs[0, L.G_N_MELDS])
        core.step(*cp.arrays(), self.game.rv, 0, a)
        new = None
        if int(cp.gs[0, L.G_N_MELDS]) > n_before and L.A_SPLIT <= a < L.A_SETSUB:
            new = _meld_tokens(cp, 0, n_before)
        return _meld_tokens(cp, 0, _changed_meld(a)), new

    def play(self, a: int) -> list[dict]:
        """Apply action ``a`` (already known to be legal) and return the events it produces."""
        st, rv, g = self.game.state, self.game.rv, self.game
        a = int(a)
        real = self.game.seat_players            # this hand's seats (the next deal may reseat them)
        seat, active = self.gs(L.G_TO_ACT), self.gs(L.G_ACTIVE)
        phase = self.gs(L.G_PHASE)
        turn, hno, rnd, dealer = self.gs(L.G_TURN), self.gs(L.G_HAND_NO), self.gs(L.G_ROUND), self.gs(L.G_DEALER)
        caller = self.gs(L.G_CALLER)
        hd, resh = self.gs(L.G_HANDS_DONE), self.gs(L.G_TOTAL_RESHUFFLES)
        pre = st.hands[0, :len(real)].astype(np.int64)
        top = self._top()
        text = action_text(st, 0, a)              # before the step: lay-down texts name the plan
        meld = self._meld_after(a) if _changed_meld(a) >= 0 else None
        g.apply(a)
        self.steps += 1
        ended = self.gs(L.G_HANDS_DONE) > hd
        voided = not ended and self.gs(L.G_LAST_EVENT) == L.EV_VOID
        ev = {"type": "action", "game_id": self.game_id, "hand_no": hno, "step": self.steps - 1,
              "turn": turn, "seat": real[seat], "active": real[active], "phase": L.PHASE_NAMES[phase],
              "action": a, "text": text, "top": top}
        out = [ev]
        if ended or voided:
            # the hands on the table were scored and replaced (next deal) or are final: rebuild
            # what each seat held when the hand ended from the cards before this last action
            hs = hno if hno < L.H_MAX else L.H_MAX - 1
            winner = int(st.hwin[0, hs]) if ended else -1
            left = pre.copy()
            if winner == seat:
                left[seat] = 0
            elif L.A_DISCARD <= a < L.A_TACK:
                left[seat, a - L.A_DISCARD] -= 1
            post_actor = left[seat]
        else:
            post = st.hands[0, :len(real)].astype(np.int64)
            post_actor = post[seat]
        if a in (L.A_DRAW_STOCK, L.A_DRAW_DISCARD, L.A_DENY):
            ev["drawn"] = [] if (ended or voided) else _cards(np.maximum(post[seat] - pre[seat], 0))
        if a == L.A_ALLOW:
            got = np.maximum(post[caller] - pre[caller], 0)
            got[parse_card(top).type] -= 1                 # the called card is listed first
            ev["caller"] = real[caller]
            ev["caller_drew"] = [top] + _cards(got)
            ev["caller_hand_size"] = int(post[caller].sum())
        if meld is not None:
            ev["meld"] = meld[0]
            if meld[1] is not None:
                ev["new_meld"] = meld[1]
        ev["hand_size"] = int(post_actor.sum())
        if self.gs(L.G_TOTAL_RESHUFFLES) > resh:
            ev["reshuffled"] = self.gs(L.G_TOTAL_RESHUFFLES) - resh
        if ended or voided:
            ev["end"] = END_NAMES[self.gs(L.G_LAST_EVENT)]
        if ended:
            mult = int(penalty_multiplier(rv, self.gs(L.G_HAND_HOW)))
            pens = [int(x) for x in st.hscore[0, hs, :len(real)]]
            expect = [0 if p == winner else int(left[p] @ self.pentab) * mult for p in range(len(real))]
            if pens != expect:
                raise RuntimeError(f"internal: game {self.game_id} hand {hno}: engine penalties {pens} "
                                   f"but the cards left give {expect}")
            hand_end = {
                "type": "hand_end", "game_id": self.game_id, "hand_no": hno, "round": rnd + 1,
                "dealer": real[dealer], "end": END_NAMES[self.gs(L.G_LAST_EVENT)],
                "winner": real[winner] if winner >= 0 else None, "multiplier": mult, "turns": turn + 1,
                "reshuffles": self.gs(L.G_TOTAL_RESHUFFLES) - self.resh0,
                "voids": self.gs(L.G_TOTAL_VOIDS) - self.voids0,
                "left": self._per_player(real, [_cards(left[i]) for i in range(len(real))]),
                "penalties": self._per_player(real, pens), "totals": self._totals(),
            }
            if self.points:
                hand_end["sheet"] = self._sheet_event()
            out.append(hand_end)
            self.resh0 = self.gs(L.G_TOTAL_RESHUFFLES)
            self.voids0 = self.gs(L.G_TOTAL_VOIDS)
        if self.terminal:
            out.append(self.game_end_event())
        elif ended or voided:
            out.append(self.deal_event())
        return out


Table = _Table
"""Public name of the game-plus-events wrapper, for drivers that step a game themselves
(``kalooki play``): ``table.play(action)`` applies a legal action and returns its events."""


# ------------------------------------------------------------------------------------------------
# recording


def _header(rules: Rules, n_players, pol, pm, seed, game_id, mode, n_hands, dealer, wants) -> dict:
    hdr = {
        "type": "game", "format": FORMAT, "variant": rules.name, "rules_digest": rules.digest(),
        "seed": int(seed), "game_id": int(game_id), "mode": mode, "players": int(n_players),
        "agents": [policy_name(int(p)) for p in pol], "params": [[float(x) for x in row] for row in pm],
        "hands": int(n_hands), "dealer": int(dealer), "rules": rules.to_dict(),
    }
    if _buys_back(rules, mode):
        hdr["buy_back"] = [bool(x) for x in wants[:n_players]]
    return hdr


def _buys_back(rules: Rules, mode: str) -> bool:
    """Does a game of ``mode`` under ``rules`` need the players' buy-back choices (header ``buy_back``)?"""
    return mode == "matches" and rules.match_mode == "elimination_pool"


def _record_one(rules: Rules, n_players, pol, pm, seed, game_id, mode, n_hands, max_steps, wants) -> list[dict]:
    """Play one game on the loop, every decision the seat's compiled agent's, into events."""
    t, events = _open(rules, n_players, pol, pm, seed, game_id, mode, n_hands, wants)
    for _ in range(max_steps):
        if t.terminal:
            break
        seat = t.game.seat_players[t.gs(L.G_TO_ACT)]
        a = t.game.agent_action()
        if not 0 <= a < L.N_ACTIONS or not t.game.legal_mask()[a]:
            raise RuntimeError(f"game {game_id}: {_seat(seat)} ({policy_name(int(pol[seat]))}) chose "
                               f"illegal action {a}")
        events += t.play(a)
    else:
        if not t.terminal:
            raise RuntimeError(f"game {game_id}: max_steps={max_steps} reached before the game ended")
    return events


def _check_drift(rules, n_players, pol, pm, seed, game_id, mode, n_hands, events, wants) -> None:
    """Raise ``ReplayDriftError`` unless the recorded hands are exactly what ``simulate`` reports."""
    from .rollout import simulate

    elim = rules.match_mode == "elimination_pool"
    out = simulate(rules, n_players, list(pol), pm, 1, seed, mode=mode, first_game_id=game_id,
                   hands_per_game=None if mode == "hands" or elim else n_hands,
                   max_hands=n_hands if mode == "matches" and elim else None, buy_back=wants)
    rows, mrows = out if isinstance(out, tuple) else (out, None)
    ends = [e for e in events if e["type"] == "hand_end"]
    problems = []
    # simulate has one row per (hand, player dealt in), in player order
    row_hands = [int(h) for h in np.unique(rows["hand_no"])]
    if row_hands != [e["hand_no"] for e in ends]:
        problems.append(f"hands {row_hands} in simulate, {[e['hand_no'] for e in ends]} recorded")
    else:
        for e in ends:
            sl = np.flatnonzero(rows["hand_no"] == e["hand_no"])
            dealt = [int(p) for p in rows["seat"][sl]]
            sim = {
                "dealt in": dealt, "dealer": int(rows["dealer"][sl][0]),
                "turns": int(rows["turns"][sl][0]), "reshuffles": int(rows["reshuffles"][sl][0]),
                "voids": int(rows["voids"][sl][0]), "end": int(rows["end_event"][sl][0]),
                "penalties": [int(x) for x in rows["penalty"][sl]],
                "won": [int(x) for x in rows["won"][sl]],
            }
            rec = {
                "dealt in": [p for p, x in enumerate(e["penalties"]) if x is not None],
                "dealer": e["dealer"], "turns": e["turns"],
                "reshuffles": e["reshuffles"], "voids": e["voids"], "end": _END_CODES[e["end"]],
                "penalties": [x for x in e["penalties"] if x is not None],
                "won": [1 if e["winner"] == p else 0 for p in dealt],
            }
            if "sheet" in e:
                sim["payments"] = [int(x) for x in rows["payment"][sl]]
                rec["payments"] = [e["sheet"]["payment"][p] for p in dealt]
            for k in sim:
                if sim[k] != rec[k]:
                    problems.append(f"hand {e['hand_no']}: {k} simulate {sim[k]} vs replay {rec[k]}")
    if mrows is not None:
        end = events[-1]
        sim = {"totals": [int(x) for x in mrows["total"]]}
        rec = {"totals": end["totals"]}
        if "money" in end:
            for col, key in (("money", "money"), ("units", "units"), ("buy_backs", "buy_backs"),
                             ("eliminated", "eliminated")):
                sim[key] = [int(x) for x in mrows[col]]
                rec[key] = [int(x) for x in end[key]]
        for k in sim:
            if sim[k] != rec[k]:
                problems.append(f"{k} simulate {sim[k]} vs replay {rec[k]}")
        share = [float(x) for x in mrows["match_win_share"]]
        if not np.allclose(share, end["win_share"]):
            problems.append(f"match win shares simulate {share} vs replay {end['win_share']}")
    if problems:
        raise ReplayDriftError(f"replay of game {game_id} (seed {seed}) drifted from rollout.simulate: "
                               + "; ".join(problems) + " -- the loop stepped from Python and the closed loop differ")


def record_games(rules, n_players: int, seat_policies, seed: int, game_ids: Iterable[int],
                 mode: str = "hands", path=None, *, params=None, hands_per_game: int | None = None,
                 max_hands: int | None = None, buy_back="always", max_steps: int | None = None,
                 strategies=None) -> list[dict]:
    """Record games ``game_ids`` as ``rollout.simulate`` plays them; return the events (dicts).

    ``rules``: a ``Rules`` or a variant name; ``seat_policies``: policy names or ids, one per seat;
    ``params``: as for ``simulate`` (``None`` = defaults).  ``mode`` "hands" plays the hand of round
    ``game_id % n_rounds + 1``; "matches" a whole match: ``hands_per_game`` hands (default: the
    rules' ``n_hands``), or in an elimination match (K40, K51, K101) hands until one player is left,
    capped at ``max_hands``, each player buying back per ``buy_back`` (as ``simulate``).  With ``path`` the events are also written there as JSON lines
    (``docs/replay-format.md``).  Raises ``ReplayDriftError`` if a recorded game differs in any
    per-hand result from ``simulate`` for the same game id.  ``strategies``: the named strategies
    the seats play (``strategies.lineup`` gives their agents and parameter rows), written in each
    ``game`` header as ``"strategies"`` so a reader sees the names, not only the base agents.
    """
    rules, n_players, pol, pm, n_hands = _seating(rules, n_players, seat_policies, params, mode, hands_per_game,
                                                  max_hands)
    wants = _wants(buy_back, n_players)                 # checked before anything is played
    if max_steps is None:
        max_steps = _default_max_steps(rules, n_hands, n_players)
    events: list[dict] = []
    for gid in game_ids:
        ev = _record_one(rules, n_players, pol, pm, int(seed), int(gid), mode, n_hands, int(max_steps), wants)
        if strategies is not None:
            ev[0]["strategies"] = [str(x) for x in strategies]
        _check_drift(rules, n_players, pol, pm, int(seed), int(gid), mode, n_hands, ev, wants)
        events += ev
    if path is not None:
        write_replay(path, events)
    return events


def _seating(rules, n_players, seat_policies, params, mode, hands_per_game, max_hands=None):
    """(rules, n_players, policy ids, parameter matrix, hands) of a game to record, checked; the
    hands are the match's length (``rollout.match_length``: the cap of an elimination match)."""
    rules = _rules(rules)
    n_players = int(n_players)
    if mode not in ("hands", "matches"):
        raise ValueError(f"mode must be 'hands' or 'matches', not {mode!r}")
    if len(seat_policies) != n_players:
        raise ValueError(f"{len(seat_policies)} seat policies for {n_players} players")
    pol = np.array([policy_id(p) for p in seat_policies], dtype=np.int64)
    n_hands = match_length(rules, mode, hands_per_game, max_hands)
    return rules, n_players, pol, params_matrix(list(pol), params), n_hands


def write_replay(path, events) -> None:
    """Write events as a JSON-lines replay file (parent folders are created)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "w", encoding="utf-8") as f:
        for ev in events:
            f.write(json.dumps(ev) + "\n")


def open_table(rules, n_players: int, seat_policies, seed: int, game_id: int = 0, mode: str = "hands",
               params=None, hands_per_game: int | None = None, max_hands: int | None = None,
               buy_back="always") -> tuple[_Table, list[dict]]:
    """Start one recordable game to be stepped from outside; return the table and its first events
    (the ``game`` header and the first ``deal``).

    ``seat_policies``: ids or names per seat, ``"external"`` (-1) for a seat decided outside (a
    person); the header names it ``"external"``.  Feed every decision to ``table.play(a)`` and
    append the events it returns: the result is a file ``validate_replay`` accepts.  ``max_hands``
    and ``buy_back``: an elimination match's cap and buy-back choices (as ``record_games``)."""
    rules, n_players, pol, pm, n_hands = _seating(rules, n_players, seat_policies, params, mode, hands_per_game,
                                                  max_hands)
    return _open(rules, n_players, pol, pm, seed, game_id, mode, n_hands, _wants(buy_back, n_players))


def _wants(buy_back, n_players: int) -> list[bool]:
    """One buy-back choice per player ("always", "never", a bool or one bool per player)."""
    return [bool(x) for x in buy_back_flags(buy_back, n_players)[:n_players]]


def _open(rules: Rules, n_players, pol, pm, seed, game_id, mode, n_hands, wants) -> tuple[_Table, list[dict]]:
    """``open_table`` on checked arguments (``wants``: a buy-back flag per player)."""
    t = _Table(rules, n_players, seed, game_id, mode, n_hands, agents=list(pol), params=pm, buy_back=wants)
    dealer = t.game.seat_players[t.gs(L.G_DEALER)]
    return t, [_header(rules, n_players, pol, pm, seed, game_id, mode, n_hands, dealer, wants), t.deal_event()]


# ------------------------------------------------------------------------------------------------
# reading


def read_replay(path_or_lines) -> Iterator[tuple[int, dict]]:
    """(line number, event) pairs of a replay: a file path, or an iterable of JSON strings or
    event dicts (as ``record_games`` returns).  Blank lines are skipped."""
    if isinstance(path_or_lines, (str, Path)):
        with open(path_or_lines, encoding="utf-8") as f:
            lines = f.read().splitlines()
    else:
        lines = path_or_lines
    for i, line in enumerate(lines, 1):
        if isinstance(line, dict):
            yield i, line
            continue
        if not line.strip():
            continue
        try:
            ev = json.loads(line)
        except json.JSONDecodeError as e:
            raise ReplayError(f"line {i}: not a JSON object ({e.msg})") from None
        if not isinstance(ev, dict) or "type" not in ev:
            raise ReplayError(f"line {i}: not an event (a JSON object with a 'type' field)")
        yield i, ev


# ------------------------------------------------------------------------------------------------
# validating


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
    err = int(core.check_action(*st.arrays(), rv, 0, a))
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
            again = record_games(rules, hdr["players"], hdr["agents"], hdr["seed"], [hdr["game_id"]],
                                 hdr["mode"], params=hdr.get("params"),
                                 hands_per_game=None if hdr["mode"] == "hands" or elim else hdr["hands"],
                                 max_hands=hdr["hands"] if elim else None,
                                 buy_back=hdr.get("buy_back", "always"), strategies=hdr.get("strategies"))
            for (ln, ev), exp in zip(events[start:i], again):
                if ev != _jsonable(exp):
                    raise ReplayError(f"line {ln}: the recorded agents would not have played this "
                                      f"({exp.get('text', exp['type'])!r} expected)")
    if counts["games"] == 0:
        raise ReplayError("no games in the replay")
    return counts


# ------------------------------------------------------------------------------------------------
# rendering


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


_MELD_ACTIONS = ((L.A_TACK, L.A_MOVE, L.N_TYPES), (L.A_MOVE, L.A_SETSWAP, 15), (L.A_SETSWAP, L.A_SHIFT, 4),
                 (L.A_SHIFT, L.A_TAKE_END, 4), (L.A_TAKE_END, L.A_SPLIT, 2), (L.A_SPLIT, L.A_SETSUB, 15),
                 (L.A_SETSUB, L.A_SETTAKE, 16), (L.A_SETTAKE, L.A_UPSWAP, 4), (L.A_TACK_LOW, L.N_ACTIONS, 1))


def _changed_meld(a: int) -> int:
    """Table meld that action ``a`` changes (tack, joker move, manipulation M1-M5), -1 if none."""
    for lo, hi, width in _MELD_ACTIONS:
        if lo <= a < hi:
            return (a - lo) // width
    return -1


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
