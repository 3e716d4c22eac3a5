"""Rule-variant balance: what each preset, house rule and knob does to the game (issue 30).

The study is a grid of **cells**.  A cell is one rule set (a preset, house overlays, knob
overrides), one player count and one seating of agents, played on deals ``0 .. deals-1`` of the
study's one seed.  Because a deal is a pure function of (rules, seed, deal id), two cells that
differ by one knob play the same cards wherever the knob leaves the deal alone (every knob except
the deck knobs), so the difference between them is a *paired* difference over deals
(``stats.paired_differences``): far narrower than two independent means.

Cell kinds (``expand``):

* ``players``: a preset as written, every player count it allows, a homogeneous table (every seat
  the same agent, one cell per ``mixes`` entry): seat fairness needs identical players, or the
  seat effect would be confounded with who sits where.
* ``knob``: one change (a house overlay V1-V7, a Caribbean knob, another opening threshold) to the
  ``players`` cell of its preset at ``knob_players`` (its ``base``), same agents, same deals.
* ``skill``: the agent ladder (strongest first) in a duplicate schedule
  (``tournament.play_seatings``: every seating of the balanced design on each deal), per preset: the
  win-share gap between the strongest and the weakest agent and the spread of Plackett-Luce
  strengths (Duersch, Lambrecht & Oechssler 2020) say how much of the result is skill.
* ``match``: whole matches (Caribbean's nine hands, the elimination matches of the K40 family,
  NA15/AMER per-hand settlement) for the score and money distributions and the knobs that only
  act across hands (calls per game vs per hand, elimination at 151).

Work is split into **shards** (a cell's deals in blocks of ``shard_deals``).  A shard is a pure
function of (config, cell, shard index) (``play_shard``): a task of the study runner
(``runner``), which plays it in this process or as a Ray task and writes its tables atomically
into the run directory (``records.RunDir``); a shard is done when its last table exists, so an
interrupted study resumes without losing or double-counting a hand.  ``balance_stats`` turns the
rows into statistics (95 % intervals clustered by deal, paired knob effects); ``balance_report``
writes the report.
"""

from __future__ import annotations

import dataclasses
import re
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .backends import check_backend
from .records import RunDir
from .runner import Task, run_tasks, shard_ranges

__all__ = ["BalanceConfig", "Cell", "load_config", "expand", "shards", "play_shard", "tasks", "run_study", "load_cell",
           "PRESETS", "CELL_TABLES"]

PRESETS = ("caribbean", "k40", "k51", "k101", "na15", "american")
# tables a shard writes, the last one marks the shard as done
CELL_TABLES = {"players": ("hands",), "knob": ("hands",), "skill": ("seats",), "match": ("matches", "hands")}
# the hand-row columns kept (the rest of simulate's columns are match bookkeeping)
_KEEP = ("deal", "hand_no", "round", "seat", "rel_seat", "dealer", "penalty", "won", "win_share", "laid_down",
         "laid_down_turn", "calls_used", "calls_denied", "turns", "reshuffles", "voids", "end_event")
EV_WENT_OUT, EV_VOID, EV_VOID_CAP, EV_TURN_CAP, EV_KALOOKI = 1, 2, 3, 4, 5   # engine.layout EV_*


@dataclass(frozen=True)
class Knob:
    """One change to a preset: ``overlays`` (house rules) and/or ``set`` (knob overrides).
    ``presets``: where it applies (empty: every preset the overlays apply to); ``players``: the
    player counts it is played at (default the study's ``knob_players``); ``mode``: "hands" or
    "matches" (knobs that only act across hands: calls per game, elimination)."""
    name: str
    overlays: tuple[str, ...] = ()
    set: tuple[tuple[str, object], ...] = ()
    presets: tuple[str, ...] = ()
    players: tuple[int, ...] = ()
    mode: str = "hands"


@dataclass(frozen=True)
class BalanceConfig:
    """The study (``configs/experiments/balance*.toml``; every key optional)."""
    seed: int = 30
    out: str = "runs/balance"
    presets: tuple[str, ...] = PRESETS
    players: str | tuple[int, ...] = "all"      # "all": every count a preset allows
    knob_players: int = 4
    mixes: tuple[str, ...] = ("greedy",)        # homogeneous tables; the first one plays the knob cells
    ladder: tuple[str, ...] = ("sharp", "greedy", "greedy-explore", "random")   # skill ladder, strongest first
    deals: int = 10_000                          # per players / knob cell (hands)
    skill_deals: int = 5_000                     # per skill cell (each deal in every seating)
    match_deals: int = 600                       # per match cell (whole matches)
    match_presets: tuple[str, ...] = PRESETS
    max_hands: int = 60                          # cap of an elimination match
    shard_deals: int = 2_500
    overlays: tuple[str, ...] = ("v1", "v2", "v3", "v4", "v6", "v7")   # house rules as knob cells (hands)
    opening_values: tuple[int, ...] = (30, 40, 51, 61)                  # points variants' thresholds
    knobs: tuple[Knob, ...] = ()
    laydown_turns: int = 30                      # the lay-down curve up to this table turn

    def to_dict(self) -> dict:
        return json_safe(dataclasses.asdict(self))


@dataclass(frozen=True)
class Cell:
    id: str
    kind: str                       # players | knob | skill | match
    preset: str
    players: int
    agents: tuple[str, ...]         # one per seat (players/knob/match) or the ladder (skill)
    deals: int
    overlays: tuple[str, ...] = ()
    overrides: tuple[tuple[str, object], ...] = ()
    knob: str = ""                  # the change against ``base`` ("" for a base cell)
    base: str | None = None
    mode: str = "hands"
    mix: str = ""

    def rules(self):
        from kalooki_sim.core.rules import load_rules

        return load_rules(self.preset, list(self.overlays), **dict(self.overrides))

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9_.=+-]+", "_", self.id.replace("/", "__"))

    def tables(self) -> tuple[str, ...]:
        return tuple(f"cells/{self.slug}/{t}" for t in CELL_TABLES[self.kind])


def json_safe(x):
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    return x


def _tuple_pairs(d) -> tuple:
    return tuple(sorted((str(k), v) for k, v in dict(d).items()))


def load_config(path=None, **overrides) -> BalanceConfig:
    """A ``BalanceConfig`` from a TOML file (``[[knobs]]`` tables become ``Knob``s) and overrides;
    an unknown key is an error that lists the known ones."""
    data = {}
    if path is not None:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    data.update({k: v for k, v in overrides.items() if v is not None})
    known = {f.name for f in dataclasses.fields(BalanceConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{path}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    knobs = []
    for k in data.pop("knobs", ()):
        if isinstance(k, Knob):
            knobs.append(k)
            continue
        extra = set(k) - {"name", "overlays", "set", "presets", "players", "mode"}
        if extra or "name" not in k:
            raise ValueError(f"{path}: a [[knobs]] entry needs name and may have overlays, set, presets, "
                             f"players, mode (got {sorted(k)})")
        knobs.append(Knob(name=k["name"], overlays=tuple(k.get("overlays", ())), set=_tuple_pairs(k.get("set", {})),
                          presets=tuple(k.get("presets", ())), players=tuple(int(p) for p in k.get("players", ())),
                          mode=k.get("mode", "hands")))
    for key, v in list(data.items()):
        if isinstance(v, list):
            data[key] = tuple(v)
    cfg = BalanceConfig(knobs=tuple(knobs), **data)
    for name in ("deals", "skill_deals", "match_deals", "shard_deals", "knob_players"):
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < (0 if name.endswith("deals") and name != "shard_deals" else 1):
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    return cfg


def _player_counts(cfg: BalanceConfig, rules) -> list[int]:
    allowed = range(rules.players_min, rules.players_max + 1)
    if cfg.players == "all":
        return list(allowed)
    return [n for n in cfg.players if n in allowed]


def _applies(rules_name: str, overlays) -> bool:
    from kalooki_sim.core.rules import RulesError, load_rules

    try:
        load_rules(rules_name, list(overlays))
        return True
    except RulesError:
        return False


def expand(cfg: BalanceConfig) -> list[Cell]:
    """Every cell of the study, in a fixed order (base cells before the knob cells that refer to
    them).  Knobs that cannot apply (an overlay for another family, a value equal to the preset's,
    a player count the preset does not allow) are left out."""
    from kalooki_sim.core.rules import RulesError, load_rules

    cells: list[Cell] = []
    ids: set[str] = set()

    def add(c: Cell):
        if c.id in ids:
            raise ValueError(f"two cells named {c.id}")
        ids.add(c.id)
        cells.append(c)

    mix0 = cfg.mixes[0]
    for preset in cfg.presets:
        rules = load_rules(preset)
        for n in _player_counts(cfg, rules):
            for mix in cfg.mixes:
                if cfg.deals:
                    add(Cell(f"{preset}/{n}p/{mix}", "players", preset, n, (mix,) * n, cfg.deals, mix=mix))
    for preset in cfg.presets:
        rules = load_rules(preset)
        knobs = [Knob(name=ov.upper(), overlays=(ov,)) for ov in cfg.overlays]
        if rules.opening_mode == "points":
            knobs += [Knob(name=f"opening {v}", set=(("opening_min_points", v),)) for v in cfg.opening_values
                      if v != rules.opening_min_points]
        knobs += list(cfg.knobs)
        for k in knobs:
            if k.presets and preset not in k.presets:
                continue
            if k.overlays and not _applies(preset, k.overlays):
                continue
            try:
                r = load_rules(preset, list(k.overlays), **dict(k.set))
            except RulesError:
                continue
            if r.digest() == rules.digest():
                continue
            for n in (k.players or (cfg.knob_players,)):
                if not (rules.players_min <= n <= rules.players_max and r.players_min <= n <= r.players_max):
                    continue
                if k.mode == "matches":
                    if preset not in cfg.match_presets or not cfg.match_deals:
                        continue
                    base = f"{preset}/{n}p/{mix0}/matches"
                    add(Cell(f"{base}/{k.name}", "match", preset, n, (mix0,) * n, cfg.match_deals, k.overlays, k.set,
                             k.name, base, "matches", mix0))
                elif cfg.deals:
                    base = f"{preset}/{n}p/{mix0}"
                    if base not in ids:
                        add(Cell(base, "players", preset, n, (mix0,) * n, cfg.deals, mix=mix0))
                    add(Cell(f"{base}/{k.name}", "knob", preset, n, (mix0,) * n, cfg.deals, k.overlays, k.set,
                             k.name, base, "hands", mix0))
    for preset in cfg.presets:
        rules = load_rules(preset)
        n = cfg.knob_players
        if cfg.skill_deals and rules.players_min <= n <= rules.players_max and len(cfg.ladder) >= 2:
            add(Cell(f"{preset}/{n}p/skill", "skill", preset, n, tuple(cfg.ladder), cfg.skill_deals, mode="hands"))
    for preset in cfg.match_presets:
        rules = load_rules(preset)
        n = cfg.knob_players
        if cfg.match_deals and rules.players_min <= n <= rules.players_max:
            add(Cell(f"{preset}/{n}p/{mix0}/matches", "match", preset, n, (mix0,) * n, cfg.match_deals,
                     mode="matches", mix=mix0))
    # match knob cells were added before their base: move bases first (stable otherwise)
    order = {c.id: i for i, c in enumerate(cells)}
    cells.sort(key=lambda c: (order[c.base] + 0.5) if c.base in order and order[c.base] > order[c.id] else order[c.id])
    return cells


def shards(cfg: BalanceConfig, cell: Cell) -> list[tuple[int, int, int]]:
    """``(shard, first deal, number of deals)`` of a cell."""
    return shard_ranges(cell.deals, cfg.shard_deals)


def _hands_in(cell: Cell, tables: dict[str, pd.DataFrame]) -> int:
    """Hands played by a shard (a skill deal is played once per seating)."""
    if cell.kind == "skill":
        t = tables["seats"]
        return int(t.groupby(["deal", "seating"]).ngroups) if len(t) else 0
    t = tables["hands"]
    return int(t.groupby(["deal", "hand_no"]).ngroups) if len(t) else 0


# ------------------------------------------------------------------------------------------------
# playing a shard

def play_shard(cfg: BalanceConfig, cell: Cell, shard: int) -> dict[str, pd.DataFrame]:
    """The rows of one shard of a cell: ``{table: frame}`` with the tables of ``CELL_TABLES``.

    A pure function of its arguments (the deals are ``cfg.seed`` x deal ids), so any process or
    machine computes the same rows; nothing is written here (the driver writes)."""
    from kalooki_sim.runtime.rollout import simulate
    from kalooki_sim.runtime.strategies import learned_policies, lineup

    from .tournament import entrant_labels, play_seatings

    rules = cell.rules()
    _, first, k = shards(cfg, cell)[shard]
    deals = np.arange(first, first + k, dtype=np.int64)
    n = cell.players
    if cell.kind == "skill":
        strats, ids, params = lineup(cell.agents)
        # a rung played from Python (a learned network, the search) plays its deals through the env
        seats, _ = play_seatings(rules, n, entrant_labels(cell.agents), ids, params, deals, cfg.seed, "hands",
                                 strategy_names=[s.name for s in strats], policies=learned_policies(strats, rules),
                                 agent_names=list(cell.agents))
        seats["rel_seat"] = (seats["seat"] - seats["dealer"]) % n
        keep = ["deal", "seating", "agent", "seat", "rel_seat", "dealer", "penalty", "won", "win_share", "turns",
                "end_event"]
        return {"seats": _narrow(seats[keep])}
    strats, ids, params = lineup(cell.agents)
    if cell.mode == "hands":
        out = simulate(rules, n, ids, params, k, cfg.seed, mode="hands", game_ids=deals)
        hands = pd.DataFrame(out)
        hands = hands.rename(columns={"game_id": "deal"})
        hands["rel_seat"] = (hands["seat"] - hands["dealer"]) % n
        return {"hands": _narrow(hands[list(_KEEP)])}
    extra = dict(max_hands=cfg.max_hands) if rules.match_mode == "elimination_pool" else {}
    hands, match = simulate(rules, n, ids, params, k, cfg.seed, mode="matches", game_ids=deals, **extra)
    hands = pd.DataFrame(hands).rename(columns={"game_id": "deal"})
    hands["rel_seat"] = (hands["seat"] - hands["dealer"]) % n
    keep = list(_KEEP) + [c for c in ("payment", "sheet_penalty") if c in hands.columns]
    match = pd.DataFrame(match).rename(columns={"game_id": "deal"}).drop(columns=["batch_row"], errors="ignore")
    match["score"] = match["money"] if "money" in match.columns else match["total"]
    return {"matches": _narrow(match), "hands": _narrow(hands[keep])}


def _narrow(df: pd.DataFrame) -> pd.DataFrame:
    """Small integer types: the default study keeps millions of rows."""
    out = df.reset_index(drop=True).copy()
    for c in out.columns:
        if pd.api.types.is_integer_dtype(out[c]) and len(out):
            lo, hi = int(out[c].min()), int(out[c].max())
            for t in (np.int8, np.int16, np.int32):
                if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max:
                    out[c] = out[c].astype(t)
                    break
    return out


# ------------------------------------------------------------------------------------------------
# the study: plan, run, resume

def tasks(cfg: BalanceConfig) -> list[Task]:
    """Every shard of every cell as a task of the study runner (``runner``): ``play_shard`` writes
    the cell's tables (``CELL_TABLES``, the marker last)."""
    return [Task((cell.id, s), play_shard, (cfg, cell, s), tuple(zip(CELL_TABLES[cell.kind], cell.tables())), s)
            for cell in expand(cfg) for s, _, _ in shards(cfg, cell)]


def run_study(cfg: BalanceConfig, backend="local", resume: bool = False, progress: bool = True, **backend_opts):
    """Play (or resume) every shard of the study into ``cfg.out`` on the study runner; returns the
    run directory.  ``backend``: "local", "ray" (``backend_opts``: ``address``, ``num_cpus``,
    ``max_task_retries``) or a backend object.  The statistics and the report are
    ``balance_report.write_report``'s."""
    check_backend(backend, **backend_opts)
    run = RunDir.create(cfg.out, cfg.to_dict(), cfg.seed, None, resume=resume)
    run_tasks(run, tasks(cfg), backend=backend, progress=progress, desc="balance", unit=" shards",
              on_result=lambda task, tables, bar: bar.set_postfix_str(task.key[0][:40]),
              hands=lambda task, tables: _hands_in(task.args[1], tables), **backend_opts)
    return run


def estimate(cfg: BalanceConfig, sample: float = 1 / 16, progress: bool = True) -> pd.DataFrame:
    """Project the play time of a study without playing it: every cell plays ``sample`` of its
    deals (at least one match / a few deals) in this process, and its time is scaled up.  One
    row per cell: sampled deals and hands, seconds, projected seconds and hands; ``attrs``:
    the totals.  (The statistics add about a second per cell on top; the report says so.)"""
    from tqdm import tqdm

    rows = []
    for cell in tqdm(expand(cfg), disable=not progress, desc="estimate"):
        k = max(2 if cell.kind == "match" else 50, int(round(cell.deals * sample)))
        small = dataclasses.replace(cell, deals=min(k, cell.deals))
        sub = dataclasses.replace(cfg, shard_deals=small.deals)
        t = time.perf_counter()
        tables = play_shard(sub, small, 0)
        dt = time.perf_counter() - t
        h = _hands_in(cell, tables)
        scale = cell.deals / small.deals
        rows.append({"cell": cell.id, "kind": cell.kind, "deals": small.deals, "hands": h, "seconds": dt,
                     "projected_seconds": dt * scale, "projected_hands": h * scale})
    out = pd.DataFrame(rows)
    out.attrs.update(seconds=float(out["projected_seconds"].sum()), hands=float(out["projected_hands"].sum()))
    return out


def load_cell(run_path, cell: Cell, table: str | None = None) -> pd.DataFrame:
    run = RunDir(Path(run_path))
    name = table or CELL_TABLES[cell.kind][-1]
    return run.read_table(f"cells/{cell.slug}/{name}")
