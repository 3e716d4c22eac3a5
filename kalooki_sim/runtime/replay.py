"""Replays: record simulated games move by move, render them as text, validate recorded files.

The closed loop (``rollout.simulate``) only reports results per hand.  To *look* at games — debug
an agent, explain a strange score, give a person a game to follow — we need every decision.
``record_games`` plays the same games on the one compiled loop (``kalooki_sim.runtime.loop``) stepped from
Python: the loop stops before every decision (``Game`` with the agents seated), the seat's compiled
agent says what it plays (``loop.agent_action``: the closed loop's call, on the seat's own random
stream) and the loop applies it; this module only turns each step into the events of the JSON-lines
file (``docs/replay-format.md``).

So records cannot drift from the simulator by construction; the recorder still compares its per-hand
results (penalties, winner, end, turns, reshuffles, voids, dealer; totals and match shares in
"matches" mode) with ``rollout.simulate`` for the same game id and raises ``ReplayDriftError`` on
any difference, as a standing test of "the stepped loop plays the closed loop's games".

``validate_replay`` (``replay_check``) re-applies every recorded action through the engine and
compares every event; ``render_replay`` (``replay_render``) turns a file into readable
turn-by-turn text.  Both read what ``_Table`` here writes, and are exported here too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from kalooki_sim.agents.base import params_matrix, policy_id, policy_name
from kalooki_sim.core.cards import parse_card, type_text
from kalooki_sim.core.rules import Rules, load_rules
from kalooki_sim.core.rulevec import R_N_ROUNDS, R_PENALTY
from kalooki_sim.engine import core, layout as L
from kalooki_sim.engine.action_text import _meld_tokens, action_text
from kalooki_sim.engine.match import penalty_multiplier

from .game import Game
from .rollout import buy_back_flags, match_length

__all__ = ["FORMAT", "ReplayError", "ReplayDriftError", "record_games", "render_replay",
           "validate_replay", "read_replay", "Table", "open_table", "write_replay"]

FORMAT = 3
"""Version of the JSON-lines format, written as ``format`` in every ``game`` header.  Bump it on
any change a reader could notice (a field renamed, removed or with another meaning)."""
READABLE_FORMATS = (1, 2, 3)
"""Formats ``validate_replay`` reads.  Format 2 added the points-variant matches (seats numbered by
real player, ``null`` for a player out, the score sheet); a format-1 file (single hands and
Caribbean matches) has exactly the events format 2 writes for the same games.  Format 3 reads
``params`` as written (0 is 0); before it a value <= 0 meant the parameter's default."""

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


_MELD_ACTIONS = ((L.A_TACK, L.A_MOVE, L.N_TYPES), (L.A_MOVE, L.A_SETSWAP, 15), (L.A_SETSWAP, L.A_SHIFT, 4),
                 (L.A_SHIFT, L.A_TAKE_END, 4), (L.A_TAKE_END, L.A_SPLIT, 2), (L.A_SPLIT, L.A_SETSUB, 15),
                 (L.A_SETSUB, L.A_SETTAKE, 16), (L.A_SETTAKE, L.A_UPSWAP, 4), (L.A_TACK_LOW, L.N_ACTIONS, 1))


def _changed_meld(a: int) -> int:
    """Table meld that action ``a`` changes (tack, joker move, manipulation M1-M5), -1 if none."""
    for lo, hi, width in _MELD_ACTIONS:
        if lo <= a < hi:
            return (a - lo) // width
    return -1


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
        core.step(cp.arrays(), self.game.rv, 0, a)
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


# public here: checking and showing read what this module writes
from .replay_check import validate_replay  # noqa: E402
from .replay_render import render_replay  # noqa: E402
