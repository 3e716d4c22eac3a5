"""A readable, single-game front end of the compiled engine: print it, ask it, drive it by text.

``Game`` wraps a one-row ``State`` and the kernels of ``core``.  Seats are 0-based in code and
shown as ``P1``.. ``Pn`` in text (docs/rules.md §6.9 numbering); table melds are numbered from 1 in
text.  Actions are ids or the texts of ``engine.action_text`` (its docstring has the notation);
``Game.from_text`` reads positions in the notation of ``runtime.position_text``.
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.core.cards import type_text
from kalooki_sim.core.rules import Rules, load_rules
from kalooki_sim.engine import core, layout as L, match_flow
from kalooki_sim.engine.action_text import (
    _cards_text, _meld_tokens, _NotOffered, _scratch_kept, _seat_text, _sorted_types, action_text, parse_action,
)
from kalooki_sim.engine.context import CX_STATUS
from kalooki_sim.engine.errors import IllegalActionError
from kalooki_sim.engine.state import State

from . import loop
from .position_text import position_from_text
from .rollout import buy_back_flags, max_steps_per_hand, seating_table

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
            lineup = loop.Lineup(seats[0], pm[0], np.arange(n_players, dtype=np.int64), self._wants)
            loop.start(self.state.arrays(), self.rv, 0, la.sheet, la.seating, la.ctx, lineup,
                       -1 if dealer is None else int(dealer), int(seed), int(game_id),
                       -1 if first_hand is None else int(first_hand), int(n_hands), self._max_steps, -1, False, True)
            self._advance()

    @classmethod
    def view(cls, rules, loop_arrays) -> "Game":
        """A ``Game`` reading row 0 of another driver's loop arrays (``loop.LoopArrays``), for
        printing and asking; it shares the arrays, so use it to look, not to play."""
        g = cls.__new__(cls)
        g.rules = rules if isinstance(rules, Rules) else load_rules(rules)
        g.rv = g.rules.to_vector()
        g.history = []
        g._loop = loop_arrays
        return g

    @property
    def state(self) -> State:
        return self._loop.state

    def _advance(self) -> None:
        loop.advance(self.state.arrays(), self.rv, 0, *self._loop.loop_arrays(), self._out)

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
        if self._loop.ctx[0, CX_STATUS] == loop.ST_OVER:
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
        from kalooki_sim.engine.match import EV_PAYMENT, EV_PENALTY, EV_STATUS, STATUS_NAMES

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
        if self._loop.ctx[0, CX_STATUS] != loop.ST_WAITING:
            return np.zeros(L.N_ACTIONS, dtype=np.bool_)
        return self._loop.mask[0].copy()

    def agent_action(self) -> int:
        """What the compiled agent seated at the seat to act would play (``agents=`` at
        construction); -1 for a seat without one.  Draws on that seat's random stream, as the
        closed loop does, so apply the answer to play the closed loop's game."""
        scratch = np.zeros(L.N_ACTIONS, dtype=np.bool_)
        return int(loop.agent_action(self.state.arrays(), self.rv, 0, self._loop.sheet, self._loop.seating,
                                     self._loop.known, scratch))

    def with_agent(self, player: int, agent, params=None) -> "Game":
        """A copy of the game in which real player ``player`` (0-based) is played by the compiled
        agent ``agent`` (id or name) with parameter row ``params`` (``None``: its defaults).

        The copy has its own random streams, so asking it ``agent_action()`` (a hint for an
        external seat) leaves this game, and every later decision in it, untouched."""
        from kalooki_sim.agents.base import fill_params, policy_id

        pid = policy_id(agent)
        if not (isinstance(player, (int, np.integer)) and not isinstance(player, bool) and 0 <= player < self.n_players):
            raise ValueError(f"with_agent: player {player!r} is not a seat 0..{self.n_players - 1}")
        other = self.copy()
        la = other._loop
        row = fill_params(pid, None if params is None else np.ravel(params), f"with_agent({agent!r}) params",
                          width=la.params.shape[2])
        if row.size > la.params.shape[2]:        # columns the other seats' agents do not read
            wide = np.zeros(la.params.shape[:2] + (row.size,), dtype=np.float64)
            wide[:, :, :la.params.shape[2]] = la.params
            la.params = wide
        la.seats[0, int(player)] = pid
        la.params[0, int(player), :] = row
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
            return int(core.check_action(self.state.arrays(), self.rv, 0, a))

    def apply(self, action) -> "Game":
        """Apply an action id or text.  ``IllegalActionError`` (state unchanged) if illegal."""
        a = self._action_of(action)
        shown = action if isinstance(action, str) else None
        text = self.action_text(a)
        who = self.to_act
        if self.terminal:
            raise IllegalActionError(action, L.E_TERMINAL, text=shown or text)
        err = int(loop.act(self.state.arrays(), self.rv, 0, *self._loop.loop_arrays(), self._out, a))
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
        return int(core.check_invariants(self.state.arrays(), self.rv, 0, full_deck,
                                         np.zeros(L.N_ACTIONS, dtype=np.bool_)))

    def copy(self) -> "Game":
        other = Game.__new__(Game)
        other.__dict__.update(self.__dict__)
        other._loop = self._loop.copy()
        other._out = loop.LoopArrays.outputs(0, 1, self._out.rows.shape[3])
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
        """Build a single-hand position from text (the notation of ``runtime.position_text``).

        The match ends after this hand unless ``last_hand`` says otherwise.  ``ValueError`` naming
        the line for malformed text or a position the engine could not be in."""
        return position_from_text(cls, text, rules)
