"""``kalooki play``: a person plays one seat of a game against compiled agents, in a terminal.

An opponent may be a checkpoint (a learned strategy, ``strategies``): its seat is external in the
game like the person's, and at its turns the session encodes the seat's observation
(``env_kernels.encode_rows``, as the environment does) and asks its ``LearnedPolicy`` (argmax).

The game is the engine's ``Game`` on the one compiled loop, with the person's seat ``external``:
the loop stops before every decision, a bot's seat is asked ``game.agent_action()`` (its own
random stream, exactly as the closed loop plays it) and the person's seat is asked on ``input``.
Every game is recorded as it is played (``replay.open_table``): each applied action goes through
``replay.Table.play``, so the saved file is the replay format that ``kalooki replay FILE --check``
validates, built by the same code as every other replay.

Pure helpers (``hand_text``, ``parse_command``, ``move_phrase``, ``render_position``) are separate
from the session (``PlaySession``) so they are testable without a terminal; ``play_game`` is what
the command runs.  Seats are 0-based in code and shown as P1..Pn during a hand (the engine's seats:
in an elimination match they are renumbered when a player is out); hand and match results name
the players.  Table melds are numbered from 1 as ``str(Game)`` numbers them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from kalooki_sim.agents.base import EXTERNAL
from kalooki_sim.core.cards import type_text
from kalooki_sim.core.rules import Rules, load_rules
from kalooki_sim.engine import layout as L
from kalooki_sim.engine.errors import IllegalActionError

from .game import Game
from .replay import open_table, write_replay
from .rollout import match_length
from .strategies import lineup, load_strategy

__all__ = ["play_game", "PlaySession", "GamePlan", "plan_game", "hand_text", "parse_command",
           "move_phrase", "render_position", "HELP"]

HELP = """\
Type a move in the engine's words, or the number of a move in the menu:
  draw stock | draw discard          take the top card of the stock / the discard pile
  call | pass                        call the discarded card (Caribbean call window) or let it go
  allow | deny                       answer another player's call in your turn
  lay down                           lay down the best melds your hand allows (the menu shows them)
  tack 9H on 3                       add a card to table meld 3 (melds are numbered on the table)
  move joker in 2                    take a joker from meld 2 by placing the card it stands for
  discard 7C                         end your turn by throwing 7C
  end turn                           end the turn without a discard (when nothing can be thrown)
Cards: rank A 2..10 J Q K + suit C D H S (10S, QD), JK for a joker.
Other commands:
  legal   list the legal moves (numbered)      hint   what the hint agent would play here
  help    this text                            quit   leave the game (it is not saved)"""


# ------------------------------------------------------------------------------------------------
# pure helpers

_SUITS = "CDHS"


def hand_text(cards) -> str:
    """Cards grouped by suit (clubs, diamonds, hearts, spades; ranks A..K), jokers apart:
    ``"C: 4C 8C | H: QH | JK JK"``.  ``cards``: card texts in any order."""
    rank_order = {r: i for i, r in enumerate(["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"])}
    groups: dict[str, list[str]] = {s: [] for s in _SUITS}
    jokers = []
    for c in cards:
        c = c.upper()
        if c.startswith("JK"):
            jokers.append(c)
        else:
            groups[c[-1]].append(c)
    parts = [f"{s}: " + " ".join(sorted(g, key=lambda c: rank_order[c[:-1]])) for s, g in groups.items() if g]
    if jokers:
        parts.append(" ".join(jokers))
    return " | ".join(parts) or "-"


@dataclass(frozen=True)
class Command:
    kind: str            # "move" (text), "number" (menu index, 1-based), "legal", "hint", "help", "quit", "empty"
    value: str | int | None = None


def parse_command(line: str) -> Command:
    """What a typed line asks for (no knowledge of the position needed)."""
    s = " ".join(line.strip().split())
    low = s.lower()
    if not s:
        return Command("empty")
    if low in ("quit", "q", "exit"):
        return Command("quit")
    if low in ("help", "h", "?"):
        return Command("help")
    if low in ("legal", "moves", "menu", "l"):
        return Command("legal")
    if low == "hint":
        return Command("hint")
    if low.isdigit():
        return Command("number", int(low))
    return Command("move", s)


def move_phrase(text: str, top: str | None = None) -> str:
    """A decision in words for the move log: ``"draws from the stock"``, ``"discards 7C"``."""
    if text == "draw stock":
        return "draws from the stock"
    if text == "draw discard":
        return f"takes {top} from the discard pile" if top else "takes the top discard"
    if text == "pass":
        return f"passes on {top}" if top else "passes"
    if text == "call":
        return f"calls {top}" if top else "calls"
    if text in ("allow", "deny"):
        return "allows the call" if text == "allow" else "denies the call"
    if text == "end turn":
        return "ends the turn"
    if text == "keep upcard":
        return "keeps the upcard"
    if text.startswith("move joker"):
        return "moves the joker" + text[len("move joker"):]
    for verb in ("discard", "tack", "lay down", "move joker", "shift", "take", "split", "substitute", "swap"):
        if text.startswith(verb + " ") or text == verb:
            head, rest = verb.split(" ", 1) if " " in verb else (verb, "")
            verb3 = head + ("es" if head.endswith(("sh", "ch")) else "s") + (" " + rest if rest else "")
            return verb3 + text[len(verb):]
    return f"plays {text}"


def _seat(p: int) -> str:
    return f"P{int(p) + 1}"


def _contract_text(rules: Rules, rnd: int) -> str:
    if rules.opening_mode == "contract":
        threes, fours = rules.contracts[rnd]
        parts = [f"{k} {w}{'s' if k > 1 else ''}" for k, w in ((threes, "three"), (fours, "four")) if k]
        return "contract " + (" + ".join(parts) or "none")
    return f"opening minimum {rules.opening_min_points} points"


def _real(game: Game, seat: int) -> int:
    """The real player (index of the lineup) in engine seat ``seat``."""
    return game.seat_players[seat]


def render_position(game: Game, me: int, names, menu_texts=None, hands_total: int | None = None) -> str:
    """What the person at engine seat ``me`` sees before a decision: the round, phase, totals,
    every opponent's cards and laid-down state, the numbered table melds, the discard top, the
    person's hand grouped by suit, and (``menu_texts``) the numbered legal moves.  ``names``:
    the lineup's names per real player (the person's entry is shown as "you")."""
    rules, st = game.rules, game.state
    gs = lambda k: int(st.gs[0, k])          # noqa: E731
    n = game.n_players
    rnd, hno = gs(L.G_ROUND), gs(L.G_HAND_NO)
    of = f"/{hands_total}" if hands_total else ""
    lines = [f"== {rules.name} hand {hno + 1}{of}, round {rnd + 1} ({_contract_text(rules, rnd)}), "
             f"turn {gs(L.G_TURN) + 1}, dealer {_seat(gs(L.G_DEALER))}"]
    pile = game.discard_pile
    top = pile[-1] if pile else None
    phase = game.phase
    active = game.current_player
    if phase == "call":
        what = f"call window: {top} was just thrown; call it or pass ({_seat(active)} is to play)"
    elif phase == "allow":
        what = f"{_seat(gs(L.G_CALLER))} calls {top}: allow or deny"
    elif phase == "draw":
        what = "your turn: draw"
    elif phase == "play":
        what = "your turn: meld, tack, then discard"
        if gs(L.G_TAKEN) >= 0 and gs(L.G_TAKEN_MUST):
            what += f" ({type_text(gs(L.G_TAKEN))} taken must be melded this turn)"
        if gs(L.G_OWED) >= 0:
            what += f" ({type_text(gs(L.G_OWED))} taken from the table must be placed)"
        if gs(L.G_FREED) > 0:
            what += f" ({gs(L.G_FREED)} freed joker(s) to place)"
    else:
        what = phase
    lines.append(f"phase: {phase} - {what}")
    calls = rules.calls_enabled
    for p in range(n):
        who = "you" if p == me else str(names[_real(game, p)])
        k = int(st.hands[0, p].sum())
        bits = [f"{k} card{'s' if k != 1 else ''}", "laid down" if st.ps[0, p, L.PS_LAID] else "not laid down"]
        if calls:
            bits.append(f"calls {int(st.ps[0, p, L.PS_CALLS])}/{rules.max_calls_per_player}")
        bits.append(f"total {int(st.ps[0, p, L.PS_TOTAL])}")
        lines.append(f"  {_seat(p)} {who:14s} " + ", ".join(bits))
    table = game.table
    if table:
        run, group = ("four", "three") if rules.opening_mode == "contract" else ("run", "set")
        lines.append("table:")
        for m, (owner, toks) in enumerate(table):
            kind = run if st.minfo[0, m, L.MI_KIND] == L.MK_RUN else group
            lines.append(f"  {m + 1}: {_seat(owner)} {kind} [{' '.join(toks)}]")
    else:
        lines.append("table: no melds yet")
    if top is not None:
        lines.append(f"discard top: {top} ({len(pile)} in the pile); stock {gs(L.G_STOCK_N)} cards")
    else:
        lines.append(f"discard top: none; stock {gs(L.G_STOCK_N)} cards")
    mine = game.hand(me)
    lines.append(f"your hand ({len(mine)}): {hand_text(mine)}")
    if menu_texts is not None:
        lines.append(menu_text(menu_texts))
    return "\n".join(lines)


def menu_text(texts) -> str:
    """The numbered legal moves, a few to a line."""
    items = [f"{i}) {t}" for i, t in enumerate(texts, 1)]
    lines, cur = [], "moves:"
    for it in items:
        if len(cur) + 2 + len(it) > 100 and cur != "moves:":
            lines.append(cur)
            cur = "      "
        cur += "  " + it
    lines.append(cur)
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------
# the game plan: which games can be saved


@dataclass(frozen=True)
class GamePlan:
    mode: str             # replay mode: "hands" (one hand) or "matches"
    n_hands: int          # hands of the match (the cap of an elimination match)
    elimination: bool     # played to elimination (``n_hands`` is a cap)

    def length(self) -> dict:
        """The match length as ``replay.open_table`` takes it."""
        if self.mode == "hands":
            return {}
        return {"max_hands": self.n_hands} if self.elimination else {"hands_per_game": self.n_hands}


def plan_game(rules: Rules, hands: int | None) -> GamePlan:
    """How a game of ``hands`` hands (``None``: a whole match) is played: Caribbean always as a
    match; the points variants one hand alone for ``hands = 1``, else a match (to elimination,
    capped at ``hands``, in the Kalooki 40 family)."""
    if hands is not None and hands < 1:
        raise ValueError(f"--hands must be a positive integer, got {hands}")
    if rules.match_mode == "fixed_hands_low_total":
        return GamePlan("matches", match_length(rules, "matches", hands), False)
    if hands == 1:
        return GamePlan("hands", 1, False)
    if rules.match_mode == "elimination_pool":
        return GamePlan("matches", match_length(rules, "matches", None, hands), True)
    return GamePlan("matches", match_length(rules, "matches", hands), False)


# ------------------------------------------------------------------------------------------------
# the session


class PlaySession:
    """One game: the person at real player ``seat`` (0-based), compiled ``opponents`` elsewhere."""

    def __init__(self, rules, opponents, seat: int = 0, seed: int = 0, hands: int | None = None,
                 hint_agent: str = "sharp", save=None, input: TextIO = sys.stdin, output: TextIO = sys.stdout):
        self.rules = rules if isinstance(rules, Rules) else load_rules(rules)
        names = [str(o).strip() for o in opponents if str(o).strip()]
        if not names:
            raise ValueError("--opponents must name at least one agent")
        strats, ids, pm = lineup(names)                     # unknown names: StrategyError (lists the known)
        self.hint = load_strategy(hint_agent)
        self._hint_policy = None
        if self.hint.driven:                                # the search: asked from here on a copy
            from .strategies import learned_policy

            self._hint_policy = learned_policy(self.hint, self.rules)
        elif self.hint.learned:
            raise ValueError(f"--hint-agent must be a compiled agent or strategy, not the checkpoint {hint_agent!r}")
        n = len(names) + 1
        if not self.rules.players_min <= n <= self.rules.players_max:
            raise ValueError(f"{self.rules.name} is played by {self.rules.players_min}..{self.rules.players_max} "
                             f"players: give {self.rules.players_min - 1}..{self.rules.players_max - 1} "
                             f"opponents, not {len(names)}")
        if not 0 <= seat < n:
            raise ValueError(f"--seat must be 1..{n}, got {seat + 1}")
        self.seat = int(seat)
        self.names = names[:seat] + ["you"] + names[seat:]
        # learned opponents (checkpoints): external seats of the game, asked from here
        self.policies = {}
        if any(st.learned for st in strats):
            from .strategies import learned_policy

            for i, st in enumerate(strats):
                if st.learned:
                    self.policies[i + (i >= seat)] = learned_policy(st, self.rules)
            self._rng = np.random.default_rng(seed)
        seats = [int(x) for x in ids]
        seats.insert(seat, EXTERNAL)
        params = np.insert(pm, seat, 0.0, axis=0)
        self.plan = plan_game(self.rules, hands)
        self.save = save
        self.table, self.events = open_table(self.rules, n, seats, seed, 0, self.plan.mode, params=params,
                                             **self.plan.length())
        self.game = self.table.game
        self.inp, self.out = input, output
        self._deal_key = None

    # ---- output
    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def _name(self, p: int) -> str:
        real = _real(self.game, p)
        return "you" if real == self.seat else f"{_seat(p)} ({self.names[real]})"

    def _announce_deal(self) -> None:
        g = self.game
        key = (g._gs(L.G_HAND_NO), g._gs(L.G_DEAL_NO))
        if key == self._deal_key or g.terminal:
            return
        self._deal_key = key
        rnd = g._gs(L.G_ROUND)
        me = g.seat_players.index(self.seat)
        redeal = " (redeal after a void deal)" if g._gs(L.G_VOIDS) else ""
        self.say(f"\n--- hand {key[0] + 1}, round {rnd + 1}: {_contract_text(self.rules, rnd)}; "
                 f"dealer {_seat(g._gs(L.G_DEALER))}; you are {_seat(me)}{redeal}")
        self.say("    seats: " + ", ".join(
            f"{_seat(i)} " + ("you" if p == self.seat else self.names[p] if p == i else self._player(p))
            for i, p in enumerate(g.seat_players)))

    def _player(self, real: int) -> str:
        """A real player as hand and match results name him: his place in the lineup (the seat
        he had in the first hand) and his agent."""
        return "you" if real == self.seat else f"{_seat(real)} ({self.names[real]})"

    def _hand_over(self, event: dict | None) -> None:
        """The result of the hand an action ended (its ``hand_end`` event, by real player)."""
        if event is None:
            return
        w = event["winner"]
        how = (f"{self._player(w)} went out" if event["end"] == "went_out" else
               {"turn_cap": "turn limit reached", "void_cap": "stock exhausted"}.get(event["end"], event["end"]))
        mult = f" (penalties x{event['multiplier']})" if event["multiplier"] != 1 else ""
        self.say(f"--- hand {event['hand_no'] + 1} over: {how} after {event['turns']} turns{mult}")
        width = max(len(self._player(p)) for p in range(len(self.names)))
        for p, (pen, left) in enumerate(zip(event["penalties"], event["left"])):
            if pen is not None:
                self.say(f"    {self._player(p):<{width}} {pen:>4}  {' '.join(left) or '-'}")
        self.say("    totals: " + ", ".join(f"{self._player(p)} {x}" for p, x in enumerate(event["totals"])))
        for p, status in enumerate(event.get("sheet", {}).get("status", ())):
            if status not in ("in", "out"):
                self.say(f"    {self._player(p)}: {status.replace('_', ' ')}")

    # ---- the person's decision
    def _ask(self) -> int | None:
        """The person's action id, or ``None`` to quit (``quit`` or the end of the input)."""
        g = self.game
        me = g.to_act
        legal = g.legal_actions()
        texts = [g.action_text(a) for a in legal]
        self.say("")
        fixed = self.plan.mode == "hands" or self.rules.match_mode != "elimination_pool"
        self.say(render_position(g, me, self.names, texts, self.plan.n_hands if fixed else None))
        while True:
            self.out.write(f"{_seat(me)}> ")
            self.out.flush()
            line = self.inp.readline()
            if not line:
                self.say("(end of input)")
                return None
            cmd = parse_command(line)
            if cmd.kind == "quit":
                return None
            if cmd.kind == "empty":
                self.say("type a move, a number from the menu, legal, hint, help or quit")
            elif cmd.kind == "help":
                self.say(HELP)
            elif cmd.kind == "legal":
                self.say(menu_text(texts))
            elif cmd.kind == "hint":
                if self._hint_policy is not None:   # a copy: the hint draws on a stream the game never sees
                    hg = g.copy()
                    a = int(self._hint_policy.act_state(hg._loop, hg.rv, np.zeros(1, dtype=np.int64))[0])
                else:
                    hg = g.with_agent(self.seat, self.hint.agent_id, self.hint.params)
                    a = hg.agent_action()
                k = legal.index(a) + 1 if a in legal else None
                self.say(f"hint ({self.hint.name}): {g.action_text(a)}" + (f"  (move {k})" if k else ""))
            elif cmd.kind == "number":
                if 1 <= cmd.value <= len(legal):
                    return legal[cmd.value - 1]
                self.say(f"no move {cmd.value}: choose 1..{len(legal)} (legal lists them)")
            else:
                try:
                    a = g.action_id(cmd.value)
                except IllegalActionError as e:
                    self.say(f"cannot read {cmd.value!r}: {e.reason} (help lists the moves)")
                    continue
                if a in legal:
                    return a
                err = g.check(a) if 0 <= a < L.N_ACTIONS else L.E_BAD_ACTION
                reason = L.ERROR_TEXT.get(err, "not a legal move here") if err else "not a legal move here"
                self.say(f"illegal: {cmd.value!r}: {reason} (legal lists the moves)")

    # ---- a learned opponent's decision
    def _policy_action(self, real: int) -> int:
        """The action of the learned opponent ``real`` (the seat to act) on its observation."""
        from kalooki_sim.agents.observation import OBS_DIM, WORK_LEN

        from .env_kernels import encode_rows

        g = self.game
        la, st = g._loop, g.state
        obs = np.zeros((1, OBS_DIM), dtype=np.float32)
        encode_rows(st.arrays(), g.rv, la.sheet, la.ctx, la.mask, np.full(1, -1, dtype=np.int64),
                    np.zeros((1, WORK_LEN), dtype=np.int64), obs)
        from .policy_play import policy_actions

        return int(policy_actions(self.policies[real], obs, g.legal_mask()[None, :], self._rng, (la, g.rv),
                                  np.zeros(1, dtype=np.int64))[0])

    # ---- the game
    def _apply(self, a: int) -> dict | None:
        """Apply ``a``; the hand_end event it produced, else ``None``."""
        evs = self.table.play(a)
        self.events += evs
        return next((e for e in evs if e["type"] == "hand_end"), None)

    def run(self) -> int:
        g = self.game
        self.say(f"kalooki play: {self.rules.name}, seed {self.game._gs(L.G_SEED)}; "
                 f"{'a match' if self.plan.mode == 'matches' else 'one hand'}"
                 + (f" of {self.plan.n_hands} hand(s)" if self.plan.mode == "matches" else "")
                 + " (type help for the commands)")
        while not g.terminal:
            self._announce_deal()
            seat = g.to_act
            top = g.discard_pile[-1] if g.discard_pile else None
            a = g.agent_action()
            if a < 0 and _real(g, seat) in self.policies:
                a = self._policy_action(_real(g, seat))
            human = a < 0
            if human:
                a = self._ask()
                if a is None:
                    self.say("quit: the game is not finished" + (" and is not saved" if self.save else ""))
                    return 0
            text = g.action_text(a)
            before = g.hand_counts(seat).copy()
            hand_no, done = g._gs(L.G_HAND_NO), g._gs(L.G_HANDS_DONE)
            ended = self._apply(a)
            same_hand = g._gs(L.G_HAND_NO) == hand_no and g._gs(L.G_HANDS_DONE) == done and not g.terminal
            if human:
                line = f"  you: {text}"
                if a in (L.A_DRAW_STOCK, L.A_DRAW_DISCARD) and same_hand:
                    got = np.maximum(g.hand_counts(seat) - before, 0)
                    line += " -> drew " + " ".join(type_text(t) for t in range(L.N_TYPES) for _ in range(int(got[t])))
                self.say(line)
            else:
                self.say(f"  {self._name(seat)} {move_phrase(text, top)}")
            self._hand_over(ended)
        self._match_over()
        if self.save is not None:
            write_replay(self.save, self.events)
            self.say(f"saved: {self.save} (show it with `kalooki replay {self.save}`)")
        return 0

    def _match_over(self) -> None:
        g = self.game
        w = g.winners()
        names = ", ".join(self._player(p) for p in w) or "none (the hand cap was reached)"
        end = self.events[-1]
        money = ("; money " + ", ".join(f"{self._player(p)} {x:+d}" for p, x in enumerate(end["money"]))
                 if "money" in end else "")
        self.say(f"=== game over after {end['hands']} hand(s): totals "
                 + ", ".join(f"{self._player(p)} {x}" for p, x in enumerate(end["totals"])) + f"{money}; winner(s): {names}")
        if self.seat in w:
            self.say("you win" + (" (shared)" if len(w) > 1 else "") + "!")


def play_game(rules, opponents, seat: int = 0, seed: int = 0, hands: int | None = None, save=None,
              hint_agent: str = "sharp", input: TextIO = sys.stdin, output: TextIO = sys.stdout) -> int:
    """Play one game in a terminal (or on any text streams): the person at ``seat`` (0-based)
    against ``opponents`` (agent or strategy names, in seat order around the person); ``hands``
    hands (``None``: a whole match); ``save``: path of the replay file written when the game is
    over.  Returns the exit status (0)."""
    return PlaySession(rules, opponents, seat, seed, hands, hint_agent, save, input, output).run()
