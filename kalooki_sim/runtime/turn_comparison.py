"""The engine against the turn reference (``turn_reference.TurnModel``): reading the engine's
table, comparing legal sets and states in both directions, the position text of a disagreement,
and the drivers that play hands and positions through both (``tests/test_turn_reference.py``,
``scripts/turn_reference_check.py``).  The model lives in ``turn_reference``; this module only
connects it to the engine."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from kalooki_sim.core.cards import JOKER, type_text
from kalooki_sim.engine import layout as L
from kalooki_sim.engine.turn_reference import A_TACK_LOW, N_TYPES, TurnModel, read_table, record_melds


def engine_plan_records(st, g=0):
    """The lay-down plan the engine offers, as meld records; None when there is none."""
    nm = int(st.plan_n[g, 0])
    if nm < 0:
        return None
    return tuple(tuple(int(x) for x in st.plan[g, i]) for i in range(nm))


def action_texts(g, ids) -> list:
    out = []
    for a in sorted(ids):
        if a < L.N_ACTIONS:
            out.append(g.action_text(a))
        elif a >= A_TACK_LOW:
            out.append(f"tack JK on {a - A_TACK_LOW + 1} low end")
        else:
            out.append(f"<action {a}>")
    return out


def compare_legal(model: TurnModel, g) -> tuple:
    """(model-only ids, engine-only ids) of the current decision."""
    mask = g.legal_mask()
    eng = set(int(a) for a in np.flatnonzero(mask))
    mine = model.legal()
    return mine - eng, eng - mine


def _set_decl_problems(st, g, m, rules) -> list:
    """A set joker must stand for a suit no natural of the set has (and jokers for distinct suits)."""
    if rules.set_allow_duplicate_suit:
        return []
    n = int(st.minfo[g, m, L.MI_LEN])
    nat_suits = {int(st.mcards[g, m, i]) // 13 for i in range(n) if st.mcards[g, m, i] != JOKER}
    decl = [int(st.mas[g, m, i]) for i in range(n) if st.mcards[g, m, i] == JOKER]
    probs = []
    suits = [d // 13 for d in decl if d >= 0]
    if any(s in nat_suits for s in suits) or len(set(suits)) != len(suits):
        probs.append(f"meld {m + 1}: set jokers declared {[type_text(d) for d in decl]} "
                     f"but the naturals have suits {sorted(nat_suits)}")
    return probs


def compare_state(model: TurnModel, g, counters=True, bookkeeping=True) -> list:
    """Differences between the model's table/hand/bookkeeping and the engine's (empty: agree)."""
    st = g.state
    diffs = []
    p = model.active
    eng_hand = Counter({t: int(st.hands[0, p, t]) for t in range(N_TYPES) if st.hands[0, p, t] > 0})
    if eng_hand != +model.hand:
        diffs.append(f"hand: engine {sorted(eng_hand.elements())} model {sorted((+model.hand).elements())}")
    eng_table = read_table(st)
    if len(eng_table) != len(model.table):
        diffs.append(f"table: engine {len(eng_table)} melds, model {len(model.table)}")
    for i, (e, m) in enumerate(zip(eng_table, model.table)):
        if e.kind != m.kind or e.owner != m.owner:
            diffs.append(f"meld {i + 1}: engine {e.kind}/P{e.owner + 1}, model {m.kind}/P{m.owner + 1}")
            continue
        if e.kind == "run":
            if e.suit != m.suit or e.cells != m.cells:
                diffs.append(f"meld {i + 1}: engine {e.tokens()} model {m.tokens()}")
            elif counters and (e.t_lo, e.t_hi, e.t_all) != (m.t_lo, m.t_hi, m.t_all):
                diffs.append(f"meld {i + 1} {m.tokens()}: lay-off counts (low, high, all) engine "
                             f"{(e.t_lo, e.t_hi, e.t_all)} model {(m.t_lo, m.t_hi, m.t_all)}")
        elif e.kind == "set":
            if e.rank != m.rank or sorted(e.nats) != sorted(m.nats) or e.nj != m.nj:
                diffs.append(f"meld {i + 1}: engine {e.tokens()} model {m.tokens()}")
            diffs += _set_decl_problems(st, 0, i, model.rules)
        elif e.nj != m.nj:
            diffs.append(f"meld {i + 1}: engine {e.nj} jokers, model {m.nj}")
    if bookkeeping:
        gs = st.gs[0]

        def opt(k):
            v = int(gs[k])
            return None if v < 0 else v

        eng = {"owed": opt(L.G_OWED), "freed": int(gs[L.G_FREED]), "manipulations": int(gs[L.G_MANIPS]),
               "open debt": int(gs[L.G_OPEN_DEBT])}
        mine = {"owed": model.owed, "freed": model.freed, "manipulations": model.manips,
                "open debt": model.debt}
        # the drawn card's ban: the engine forgets the card once a hand copy is on the table
        eng["taken"] = opt(L.G_TAKEN)
        mine["taken"] = model.taken
        for k in eng:
            if eng[k] != mine[k]:
                ev, mv = eng[k], mine[k]
                if k in ("owed", "taken"):
                    ev = type_text(ev) if ev is not None else None
                    mv = type_text(mv) if mv is not None else None
                diffs.append(f"{k}: engine {ev} model {mv}")
    return diffs


def position_text(g) -> str:
    """``Game.from_text`` text of the current position (play phase).  The per-turn lay-off counts
    and an opening debt cannot be written: give the turn's earlier actions with it."""
    st = g.state
    gs = st.gs[0]
    n = g.n_players
    lines = [f"active: P{int(gs[L.G_ACTIVE]) + 1}", f"phase: {g.phase}", f"players: {n}",
             f"turn: {int(gs[L.G_TURN])}"]
    for p in range(n):
        cards = " ".join(g.hand(p)) or "-"
        lines.append(f"P{p + 1}: {cards}{' | laid' if st.ps[0, p, L.PS_LAID] else ''}")
    if g.table:
        lines.append("table: " + ", ".join(f"P{o + 1} [{' '.join(t)}]" for o, t in g.table))
    pile = g.discard_pile
    lines.append("discard: " + (" ".join(pile) if pile else "-"))
    if gs[L.G_TAKEN] >= 0:
        lines.append(f"taken: {type_text(int(gs[L.G_TAKEN]))}")
    if gs[L.G_TAKEN_MUST]:
        lines.append("taken_must: yes")
    if gs[L.G_OWED] >= 0:
        lines.append(f"owed: {type_text(int(gs[L.G_OWED]))}")
    if gs[L.G_FREED]:
        lines.append(f"freed: {int(gs[L.G_FREED])}")
    if gs[L.G_MANIPS]:
        lines.append(f"manipulations: {int(gs[L.G_MANIPS])}")
    if gs[L.G_OPEN_DEBT]:
        lines.append(f"# open debt {int(gs[L.G_OPEN_DEBT])} (not expressible in the text)")
    counts = [f"{i + 1}:{m.t_lo}/{m.t_hi}/{m.t_all}" for i, m in enumerate(read_table(st))
              if m.kind == "run" and (m.t_lo or m.t_hi or m.t_all)]
    if counts:
        lines.append("# lay-off counts this turn (meld:low/high/all): " + " ".join(counts))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------
# following played turns: the comparison driver shared by the tests and the script


@dataclass
class Report:
    """Counts of what was compared and the disagreements found (each a dict with the position)."""

    decisions: int = 0
    turns: int = 0
    actions: int = 0
    problems: list = field(default_factory=list)
    by_rules: dict = field(default_factory=dict)

    def add(self, other: "Report") -> None:
        self.decisions += other.decisions
        self.turns += other.turns
        self.actions += other.actions
        self.problems += other.problems
        for k, v in other.by_rules.items():
            d = self.by_rules.setdefault(k, [0, 0])
            d[0] += v[0]
            d[1] += v[1]


def _plan_key(records):
    return sorted(tuple(sorted("JK" if t.startswith("JK") else t for t in m.tokens()))
                  for m in record_melds(records, 0))


class TurnFollower:
    """Follows every play-phase decision of a ``Game``: a new ``TurnModel`` at the first decision of
    each turn, then the model's own state; compares the legal actions (both directions) before each
    action and the table/hand/bookkeeping after it."""

    def __init__(self, g, report: Report, label: str = ""):
        self.g = g
        self.report = report
        self.label = label or g.rules.name
        self.model = None
        self.key = None
        self.start_text = ""
        self.history: list = []

    def _turn_key(self):
        gs = self.g.state.gs[0]
        return (int(gs[L.G_HAND_NO]), int(gs[L.G_DEAL_NO]), int(gs[L.G_TURN]), int(gs[L.G_ACTIVE]))

    def _problem(self, kind, detail):
        self.report.problems.append({"rules": self.label, "kind": kind, "detail": detail,
                                     "position": self.start_text, "actions": list(self.history)})

    def in_play(self) -> bool:
        g = self.g
        return not g.terminal and g.phase == "play" and g.to_act == g.current_player

    def before(self) -> None:
        """Call at a play-phase decision, before choosing the action."""
        key = self._turn_key()
        if self.model is None or key != self.key or self.model.over:
            self.model = TurnModel.from_game(self.g)
            self.key = key
            self.start_text = position_text(self.g)
            self.history = []
            self.report.turns += 1
        self.report.decisions += 1
        rb = self.report.by_rules.setdefault(self.label, [0, 0])
        rb[0] += 1
        only_model, only_engine = compare_legal(self.model, self.g)
        if only_model or only_engine:
            self._problem("legal", {"model only": action_texts(self.g, only_model),
                                    "engine only": action_texts(self.g, only_engine)})
        if L.A_LAY in self.model.legal() and self.g.legal_mask()[L.A_LAY]:
            eng = engine_plan_records(self.g.state)
            mine = self.model.plan()
            if eng is not None and mine is not None and _plan_key(eng) != _plan_key(mine[0]):
                self._problem("plan", {"engine": self.g.action_text(L.A_LAY),
                                       "model": " ".join("[" + " ".join(m.tokens()) + "]"
                                                         for m in record_melds(mine[0], 0))})

    def apply(self, a: int) -> None:
        """Apply action ``a`` to the engine and the model and compare what they hold."""
        g, model = self.g, self.model
        text = g.action_text(a)
        plan = engine_plan_records(g.state) if a == L.A_LAY else None
        hand_no = int(g.state.gs[0, L.G_HAND_NO])
        g.apply(a)
        self.history.append(text)
        self.report.actions += 1
        try:
            model.apply(a, plan)
        except Exception as e:                        # a disagreement already reported, or a model bug
            self._problem("model error", f"{text}: {type(e).__name__}: {e}")
            self._resync()
            return
        if g.terminal or int(g.state.gs[0, L.G_HAND_NO]) != hand_no:
            return
        same_turn = self.in_play() and self._turn_key() == self.key and not model.over
        diffs = compare_state(model, g, counters=same_turn, bookkeeping=same_turn)
        if diffs:
            self._problem("state", diffs)
            self._resync()

    def _resync(self):
        if self.in_play() and self._turn_key() == self.key:
            over = self.model.over
            self.model = TurnModel.from_game(self.g)
            self.model.over = over
        else:
            self.model = None


def draw_mode(rules, laid: bool, turn: int) -> str:
    """The discard-draw restriction that applies (docs/rules.md §4.5; D10: the first turn of a hand is free
    under ``first_turn_free_upcard``)."""
    mode = rules.discard_draw_after_opening if laid else rules.discard_draw_before_opening
    if mode != "any" and rules.first_turn_free_upcard and turn == 0:
        mode = "any"
    return mode


def check_draw(g, report: Report, label: str = "") -> None:
    """The draw phase's restricted discard draw (D9), a bonus: the model's answer for "draw discard"
    against the engine's mask."""
    st = g.state
    gs = st.gs[0]
    if g.terminal or g.phase != "draw" or int(gs[L.G_DISC_N]) == 0 or int(gs[L.G_AFTER_ALLOW]):
        return
    model = TurnModel.from_game(g)
    top = int(st.disc[0, int(gs[L.G_DISC_N]) - 1])
    mine = model.draw_discard_legal(top, draw_mode(g.rules, model.laid, int(gs[L.G_TURN])))
    eng = bool(g.legal_mask()[L.A_DRAW_DISCARD])
    report.decisions += 1
    report.draws = getattr(report, "draws", 0) + 1
    if mine != eng:
        # the known difference: D9 in the engine ignores the A43 opening completed by lay-offs
        a43 = model.draw_discard_legal(top, draw_mode(g.rules, model.laid, int(gs[L.G_TURN])), False) == eng
        report.problems.append({"rules": label or g.rules.name,
                                "kind": "draw discard (A43 opening)" if a43 else "draw discard",
                                "detail": f"top {type_text(top)}: engine {'offers' if eng else 'refuses'} "
                                          f"the draw, the model {'offers' if mine else 'refuses'} it",
                                "position": position_text(g), "actions": []})


def biased_choice(g, rng, p_discard=0.25) -> int:
    """A random legal action that prefers melding, laying off and manipulating to discarding."""
    legal = g.legal_actions()
    if g.phase != "play":
        return legal[int(rng.integers(len(legal)))]
    ends = [a for a in legal if a == L.A_END_TURN or L.A_DISCARD <= a < L.A_TACK]
    rest = [a for a in legal if a not in ends]
    pool = ends if (not rest or (ends and rng.random() < p_discard)) else rest
    return pool[int(rng.integers(len(pool)))]


def check_game(rules, n_players: int, seed: int, driver: str, report: Report, label: str = "",
               max_steps: int = 3000) -> None:
    """Play one hand with ``driver`` ("random", "expert", "greedy": the compiled agents at every
    seat; "biased": ``biased_choice``) and compare every play-phase decision."""
    from .game import Game

    if driver == "biased":
        g = Game(rules, n_players=n_players, seed=seed, game_id=seed)
        rng = np.random.default_rng(seed)
    else:
        g = Game(rules, n_players=n_players, seed=seed, game_id=seed, agents=[driver] * n_players)
        rng = None
    follow = TurnFollower(g, report, label)
    steps = 0
    while not g.terminal and steps < max_steps:
        if g.phase == "draw" and g.to_act == g.current_player:
            check_draw(g, report, label)
        a = biased_choice(g, rng) if rng is not None else g.agent_action()
        if follow.in_play():
            follow.before()
            follow.apply(a)
        else:
            g.apply(a)
        steps += 1


def check_position(g, report: Report, rng, label: str = "", max_actions: int = 12) -> None:
    """Follow the active player's turn from position ``g`` (play phase) with biased random actions."""
    follow = TurnFollower(g, report, label)
    n = 0
    while follow.in_play() and n < max_actions:
        follow.before()
        legal = g.legal_actions()
        if not legal:
            break
        follow.apply(biased_choice(g, rng, p_discard=0.08))
        n += 1
