"""Every knob of docs/rules.md §4 as a frozen, hashable ``Rules`` value, loaded and validated from TOML.

A variant is data, never a code branch: presets live in ``configs/variants/*.toml`` (a preset may
``extends`` another and only state what differs), house variations V1-V7 are overlay files in
``configs/variants/house/``, and kernels receive ``Rules.to_vector()`` so that all variants share
one compiled kernel.  Any problem with a config raises ``RulesError`` naming the file, the key and
the reason, so a typo never turns into a silently different game.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from . import rulevec as rv
from .cards import JOKER, N_RANKS, N_SUITS, RANKS, SUITS
from .rulevec import ENUMS

__all__ = ["Rules", "RulesError", "load_rules", "list_presets", "list_overlays", "ENUMS"]


class RulesError(ValueError):
    """A rule config that cannot describe a playable game; names the file, the key and the reason."""

    def __init__(self, source: str, key: str | None, reason: str):
        self.source, self.key, self.reason = source, key, reason
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {reason}")


# (kind, low, high) for scalar knobs; kind "int?" admits None (TOML: the string "none").
_INT_RANGES: dict[str, tuple[str, int, int]] = {
    "players_min": ("int", 2, 6),
    "players_max": ("int", 2, 6),
    "n_decks": ("int", 1, 3),
    "n_jokers": ("int", 0, 8),
    "n_hands": ("int?", 1, 10_000),
    "ace_low_meld_value": ("int", 0, 100),
    "joker_set_meld_value": ("int", 0, 100),
    "set_min_size": ("int", 3, 12),
    "set_max_size": ("int?", 3, 12),
    "set_min_naturals": ("int", 1, 12),
    "run_min_size": ("int", 3, 13),
    "run_min_naturals": ("int", 1, 13),
    "opening_min_points": ("int?", 0, 1000),
    "layoff_max_per_run_end_per_turn": ("int?", 1, 14),
    "layoff_max_per_run_per_turn": ("int?", 1, 28),
    "kalooki_penalty_multiplier": ("int", 1, 10),
    "down_and_out_multiplier": ("int", 1, 10),
    "max_calls_per_player": ("int", 0, 100),
    "calls_per_turn": ("int", 0, 1),
    "call_penalty_cards": ("int", 0, 5),
    "max_reshuffles_per_hand": ("int?", 0, 100),
    "max_void_replays": ("int", 0, 100),
    "max_turns_per_hand": ("int", 10, 100_000),
    "elimination_at": ("int?", 1, 100_000),
    "buy_back_limit": ("int", 0, 100),
    "buy_back_min_other_active": ("int", 0, 5),
    "stake_ante": ("int", 0, 10_000),
    "stake_rip": ("int", 0, 10_000),
    "stake_kalooki": ("int", 0, 10_000),
    "stake_buy_back": ("int", 0, 10_000),
    "pay_per_penalty_point": ("int", 0, 10_000),
    "pay_per_card": ("int", 0, 10_000),
    "pay_per_joker": ("int", 0, 10_000),
    "kalooki_payment_multiplier": ("int", 1, 10),
}

_TABLE_KNOBS = ("hand_size", "contracts", "meld_value", "penalty_value")
_META_KEYS = ("name", "description", "extends", "overlay", "applies_to")


@dataclass(frozen=True)
class Rules:
    """One fully resolved variant.  Field meanings: docs/rules.md §4 (same names).

    ``hand_size`` is an int, a tuple by round, or a tuple of ``(n_players, size)`` pairs;
    ``contracts`` a tuple of ``(threes, fours)`` by round; ``penalty_value`` the penalty of each of
    the 53 card types; ``meld_value`` the opening-count value by run position 0..14 (1 = low ace,
    14 = high ace, index 0 unused).
    """

    name: str
    players_min: int
    players_max: int
    n_decks: int
    n_jokers: int
    play_direction: str
    dealer_rotation: str
    hand_size: Any
    n_hands: int | None
    upcard: bool
    dealer_may_swap_upcard: bool
    cut_joker_to_cutter: bool
    ace_high: bool
    ace_low: bool
    ace_wrap: bool
    allow_both_aces_in_run: bool
    meld_value: tuple[int, ...]
    ace_low_meld_value: int
    joker_meld_value: str
    joker_set_meld_value: int
    penalty_value: tuple[int, ...]
    set_min_size: int
    set_max_size: int | None
    set_allow_duplicate_suit: bool
    set_min_naturals: int
    run_min_size: int
    run_min_naturals: int
    run_adjacent_jokers: bool
    allow_all_joker_meld: bool
    declare_joker_meaning: bool
    opening_mode: str
    contracts: tuple[tuple[int, int], ...]
    contract_distinct_set_ranks: bool
    contract_distinct_run_suits: bool
    contract_allow_extra_melds: bool
    opening_min_points: int | None
    opening_counts_layoffs: str
    new_melds_after_opening: bool
    kalooki_exempt_from_opening_min: bool
    discard_draw_before_opening: str
    discard_draw_after_opening: str
    first_turn_free_upcard: bool
    forbid_discard_of_taken_discard: bool
    allow_discard_joker: bool
    announce_low_hand: bool
    layoff_requires_opened: bool
    layoff_max_per_run_end_per_turn: int | None
    layoff_max_per_run_per_turn: int | None
    run_growth_rule: str
    table_manipulation: bool
    taken_cards_must_be_used_same_turn: bool
    joker_swap: str
    joker_swap_requires_opened: bool
    freed_joker_must_be_used_same_turn: bool
    joker_swap_from_run_end: bool
    set_joker_swap: str
    jokers_locked_in_4card_set: bool
    end_take_may_take_joker: bool
    others_may_layoff_after_out: bool
    going_out_requires_discard: bool
    kalooki_enabled: bool
    kalooki_penalty_multiplier: int
    down_and_out_multiplier: int
    calls_enabled: bool
    max_calls_per_player: int
    calls_limit_scope: str
    count_denied_calls: bool
    calls_per_turn: int
    call_penalty_cards: int
    call_priority: str
    deny_requires_not_opened: bool
    after_allowed_call_active_draws: str
    stock_exhaustion: str
    max_reshuffles_per_hand: int | None
    keep_top_discard_on_reshuffle: bool
    max_void_replays: int
    max_turns_per_hand: int
    match_mode: str
    elimination_at: int | None
    buy_back_limit: int
    buy_back_min_other_active: int
    buy_back_reset: str
    buy_back_order: str
    stake_ante: int
    stake_rip: int
    stake_kalooki: int
    stake_buy_back: int
    pay_per_penalty_point: int
    pay_per_card: int
    pay_per_joker: int
    kalooki_payment_multiplier: int
    tie_rule: str

    # ----------------------------------------------------------------------------------------
    @property
    def n_rounds(self) -> int:
        """Rounds with their own deal size / contract (1 when every hand is dealt alike)."""
        if self.opening_mode == "contract":
            return len(self.contracts)
        return len(self.hand_size) if _is_round_list(self.hand_size) else 1

    @property
    def deck_size(self) -> int:
        return 52 * self.n_decks + self.n_jokers

    @property
    def run_max_size(self) -> int:
        both = self.ace_low and self.ace_high and self.allow_both_aces_in_run
        return 14 if both else 13

    def deal_size(self, round_no: int = 1, n_players: int | None = None) -> int:
        """Cards dealt to each player in ``round_no`` (1-based) with ``n_players`` players."""
        hs = self.hand_size
        if isinstance(hs, int):
            return hs
        if _is_round_list(hs):
            if not 1 <= round_no <= len(hs):
                raise ValueError(f"{self.name}: round {round_no} is not in 1..{len(hs)}")
            return hs[round_no - 1]
        if n_players is None:
            raise ValueError(f"{self.name}: the deal size depends on the number of players")
        sizes = dict(hs)
        if n_players not in sizes:
            raise ValueError(f"{self.name}: no deal size for {n_players} players")
        return sizes[n_players]

    def contract(self, round_no: int) -> tuple[int, int]:
        """(threes, fours) of a contract round (1-based)."""
        if self.opening_mode != "contract":
            raise ValueError(f"{self.name}: variant has no contracts (opening_mode = {self.opening_mode!r})")
        if not 1 <= round_no <= len(self.contracts):
            raise ValueError(f"{self.name}: round {round_no} is not in 1..{len(self.contracts)}")
        return self.contracts[round_no - 1]

    def to_vector(self) -> np.ndarray:
        return _vector_of(self)

    def to_dict(self) -> dict[str, Any]:
        """Plain data (JSON/TOML friendly) with the value tables in the TOML key form."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.name == "penalty_value":
                v = {("JK" if t == JOKER else RANKS[t % 13] + SUITS[t // 13]): int(x) for t, x in enumerate(v)}
            elif f.name == "meld_value":
                v = {RANKS[(p - 1) % 13]: int(v[p]) for p in range(2, 15)}
            elif f.name == "hand_size" and isinstance(v, tuple) and v and isinstance(v[0], tuple):
                v = {str(k): s for k, s in v}
            elif isinstance(v, tuple):
                v = [list(x) if isinstance(x, tuple) else x for x in v]
            out[f.name] = v
        return out

    def digest(self) -> str:
        """Short stable hash, written next to results so runs of different rules never mix."""
        return hashlib.sha256(repr(sorted(self.to_dict().items())).encode()).hexdigest()[:16]

    def replace(self, **overrides) -> "Rules":
        """A validated copy with some knobs changed (same checks as a config file)."""
        return _build(self.to_dict() | {"name": self.name}, overrides, f"{self.name} (overrides)")


def _is_round_list(hs) -> bool:
    return isinstance(hs, tuple) and (not hs or isinstance(hs[0], int))


# ------------------------------------------------------------------------------------------------
# Loading

def _preset_dir():
    return resources.files("kalooki_sim.presets")


def list_presets() -> list[str]:
    return sorted(p.name[:-5] for p in _preset_dir().iterdir() if p.name.endswith(".toml"))


def list_overlays() -> list[str]:
    return sorted(p.name[:-5] for p in _preset_dir().joinpath("house").iterdir() if p.name.endswith(".toml"))


def _read_toml(path_like, label: str) -> dict:
    try:
        return tomllib.loads(path_like.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise RulesError(label, None, f"malformed TOML: {e}") from None
    except OSError as e:
        raise RulesError(label, None, f"cannot read: {e}") from None


def _resolve_file(name_or_path: str | Path, seen: tuple[str, ...] = ()) -> tuple[dict, str]:
    """Read a preset (by name) or a TOML file (by path), following ``extends`` chains."""
    s = str(name_or_path)
    if s.endswith(".toml") or "/" in s or "\\" in s:
        path = Path(s)
        if not path.exists():
            raise RulesError(s, None, "no such config file")
        data, label = _read_toml(path, str(path)), str(path)
    else:
        key = s.strip().lower()
        entry = _preset_dir().joinpath(f"{key}.toml")
        if not entry.is_file():
            raise RulesError(f"variant {s!r}", None,
                             f"unknown variant; known presets: {', '.join(list_presets())}")
        data, label = _read_toml(entry, f"configs/variants/{key}.toml"), f"configs/variants/{key}.toml"
        data["_preset"] = key   # the built-in preset a custom file descends from, for overlays
    if data.get("overlay"):
        raise RulesError(label, "overlay", "this file is a house-rule overlay; apply it to a preset, e.g. 'k40+v4'")
    parent = data.pop("extends", None)
    if parent is not None:
        if not isinstance(parent, str):
            raise RulesError(label, "extends", "must be a preset name or a path")
        if parent in seen:
            raise RulesError(label, "extends", f"circular extends chain through {parent!r}")
        base, _ = _resolve_file(parent, seen + (parent,))
        base.pop("description", None)
        data = base | data
    return data, label


def _read_overlay(name: str) -> tuple[dict, str]:
    key = name.strip().lower()
    entry = _preset_dir().joinpath("house", f"{key}.toml")
    label = f"configs/variants/house/{key}.toml"
    if not entry.is_file():
        raise RulesError(f"house variation {name!r}", None,
                         f"unknown overlay; known: {', '.join(list_overlays())}")
    data = _read_toml(entry, label)
    if not data.get("overlay"):
        raise RulesError(label, "overlay", "an overlay file must say overlay = true")
    return data, label


def load_rules(name_or_path: str | Path = "caribbean", overlays=(), **overrides) -> Rules:
    """Resolve a preset name (``"k40"``), ``"k40+v4+v6"`` or a TOML path, apply overlays and overrides.

    Raises ``RulesError`` for an unknown variant or overlay, a malformed file, an unknown key, a
    value of the wrong type or out of range, a deal that does not fit the deck, or knobs that
    contradict each other.
    """
    if isinstance(name_or_path, Rules):
        return name_or_path.replace(**overrides) if overrides else name_or_path
    if not isinstance(name_or_path, (str, Path)):
        raise RulesError(f"variant {name_or_path!r}", None, "expected a preset name, 'preset+overlay' or a TOML path")
    if isinstance(overlays, str):
        overlays = (overlays,)
    try:
        overlays = tuple(overlays)
    except TypeError:
        raise RulesError(f"overlays {overlays!r}", None, "expected a list of house-rule overlay names") from None
    for ov in overlays:
        if not isinstance(ov, str):
            raise RulesError(f"overlay {ov!r}", None, "expected the name of a house-rule overlay (v1..)")
    parts = [p for p in str(name_or_path).split("+")] if not str(name_or_path).endswith(".toml") else [str(name_or_path)]
    base_name, extra = parts[0], list(parts[1:]) + list(overlays)
    data, label = _resolve_file(base_name)
    preset = data.pop("_preset", data.get("name"))
    for ov in extra:
        odata, olabel = _read_overlay(ov)
        applies = odata.get("applies_to")
        if applies is not None and preset not in applies:
            raise RulesError(olabel, "applies_to",
                             f"overlay does not apply to variant {preset!r} (applies to {', '.join(applies)})")
        for k in _META_KEYS:
            odata.pop(k, None)
        _check_keys(odata, olabel)
        data = data | odata
        data["name"] = f"{data['name']}+{ov.strip().lower()}"
    return _build(data, overrides, label)


def _check_keys(data: Mapping, label: str) -> None:
    known = {f.name for f in dataclasses.fields(Rules)} | set(_META_KEYS)
    for k in data:
        if k not in known:
            raise RulesError(label, k, "unknown key (not a knob of docs/rules.md §4)")


def _build(data: dict, overrides: Mapping, label: str) -> Rules:
    data = dict(data)
    _check_keys(data, label)
    for k in overrides:
        if k not in {f.name for f in dataclasses.fields(Rules)} or k == "name":
            raise RulesError(f"{label} (overrides)", k, "unknown knob")
    data |= dict(overrides)
    for k in _META_KEYS:
        if k != "name":
            data.pop(k, None)
    values: dict[str, Any] = {"name": str(data.pop("name", Path(label).stem))}
    for f in dataclasses.fields(Rules):
        if f.name == "name":
            continue
        if f.name not in data:
            raise RulesError(label, f.name, "missing (every knob must be set by the preset or its parent)")
        values[f.name] = _coerce(f.name, data[f.name], label)
    mv = list(values["meld_value"])
    mv[1] = values["ace_low_meld_value"]
    values["meld_value"] = tuple(mv)
    rules = Rules(**values)
    _validate(rules, label)
    return rules


def _coerce(key: str, v: Any, label: str) -> Any:
    def bad(reason: str):
        return RulesError(label, key, reason)

    if key in ENUMS:
        if not isinstance(v, str) or v not in ENUMS[key]:
            raise bad(f"{v!r} is not one of {', '.join(map(repr, ENUMS[key]))}")
        return v
    if key in _INT_RANGES:
        kind, lo, hi = _INT_RANGES[key]
        if kind == "int?" and (v is None or (isinstance(v, str) and v.lower() == "none")):
            return None
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            allowed = "an integer or 'none'" if kind == "int?" else "an integer"
            raise bad(f"expected {allowed}, got {v!r}")
        if not lo <= int(v) <= hi:
            raise bad(f"{v} is out of range {lo}..{hi}")
        return int(v)
    if key == "hand_size":
        return _coerce_hand_size(v, bad)
    if key == "contracts":
        if not isinstance(v, (list, tuple)):
            raise bad("expected a list of [threes, fours] pairs")
        if len(v) > rv.MAX_ROUNDS:
            raise bad(f"{len(v)} contract rounds; at most {rv.MAX_ROUNDS}")
        out = []
        for i, c in enumerate(v):
            if (not isinstance(c, (list, tuple)) or len(c) != 2
                    or any(isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= 30 for x in c)):
                raise bad(f"round {i + 1}: expected [threes, fours] of ints in 0..30, got {c!r}")
            if c[0] + c[1] == 0:
                raise bad(f"round {i + 1}: a contract needs at least one meld")
            out.append((int(c[0]), int(c[1])))
        return tuple(out)
    if key == "penalty_value":
        return _coerce_penalty(v, bad)
    if key == "meld_value":
        return _coerce_meld_value(v, bad)
    # remaining scalar knobs are booleans
    if not isinstance(v, bool):
        raise bad(f"expected true or false, got {v!r}")
    return v


def _coerce_hand_size(v, bad):
    if isinstance(v, bool):
        raise bad("expected an int, a list by round, or a table by number of players")
    if isinstance(v, int):
        if not 1 <= v <= 30:
            raise bad(f"{v} is out of range 1..30")
        return v
    if isinstance(v, (list, tuple)) and v and isinstance(v[0], (list, tuple)):
        v = {str(k): s for k, s in v}
    if isinstance(v, (list, tuple)):
        if not v or len(v) > rv.MAX_ROUNDS or any(isinstance(x, bool) or not isinstance(x, int) or not 1 <= x <= 30 for x in v):
            raise bad(f"a list by round needs 1..{rv.MAX_ROUNDS} ints in 1..30, got {v!r}")
        return tuple(int(x) for x in v)
    if isinstance(v, Mapping):
        pairs = []
        for k, s in v.items():
            if not str(k).isdigit() or not 2 <= int(k) <= 6:
                raise bad(f"player count {k!r} is not in 2..6")
            if isinstance(s, bool) or not isinstance(s, int) or not 1 <= s <= 30:
                raise bad(f"deal size for {k} players must be an int in 1..30, got {s!r}")
            pairs.append((int(k), int(s)))
        return tuple(sorted(pairs))
    raise bad("expected an int, a list by round, or a table by number of players")


def _value_of(table: Mapping, token: str, bad) -> int:
    x = table[token]
    if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= 1000:
        raise bad(f"value of {token} must be an int in 0..1000, got {x!r}")
    return int(x)


def _coerce_penalty(v, bad) -> tuple[int, ...]:
    if isinstance(v, (list, tuple)) and len(v) != 53:
        raise bad(f"a list of penalty values needs 53 entries (one per card type), got {len(v)}")
    if isinstance(v, (list, tuple)):                      # one value per card type, in type order
        return tuple(_value_of({f"card type {t}": x}, f"card type {t}", bad) for t, x in enumerate(v))
    if not isinstance(v, Mapping):
        raise bad("expected a table of rank (A, 2..10, J, Q, K, JK) or card (AS, ...) values")
    cards = {RANKS[r] + SUITS[s] for s in range(N_SUITS) for r in range(N_RANKS)}
    for k in v:
        if k not in RANKS and k != "JK" and k not in cards:
            raise bad(f"unknown card or rank {k!r} in the value table")
    out = []
    for s in range(N_SUITS):
        for r in range(N_RANKS):
            card = RANKS[r] + SUITS[s]
            if card in v:
                out.append(_value_of(v, card, bad))
            elif RANKS[r] in v:
                out.append(_value_of(v, RANKS[r], bad))
            else:
                raise bad(f"no value for {card} (give rank {RANKS[r]} or the card)")
    if "JK" not in v:
        raise bad("no value for the joker (JK)")
    out.append(_value_of(v, "JK", bad))
    return tuple(out)


def _coerce_meld_value(v, bad) -> tuple[int, ...]:
    if isinstance(v, (list, tuple)) and len(v) == 15:    # by run position 0..14 (1 = low ace, 14 = high ace)
        return tuple(_value_of({f"position {q}": x}, f"position {q}", bad) for q, x in enumerate(v))
    if isinstance(v, (list, tuple)):
        raise bad(f"a list of meld values needs 15 entries (run positions 0..14), got {len(v)}")
    if not isinstance(v, Mapping):
        raise bad("expected a table of rank values (A, 2..10, J, Q, K)")
    for k in v:
        if k not in RANKS:
            raise bad(f"unknown rank {k!r} in the meld value table")
    out = [0] * 15
    for r in range(N_RANKS):
        if RANKS[r] not in v:
            raise bad(f"no meld value for rank {RANKS[r]}")
        out[r + 1] = _value_of(v, RANKS[r], bad)
    out[14] = out[1]          # high ace; position 1 (low ace) comes from ace_low_meld_value
    return tuple(out)


# ------------------------------------------------------------------------------------------------
# Validation of knobs against each other

def _validate(r: Rules, label: str) -> None:
    def bad(key: str, reason: str):
        raise RulesError(label, key, reason)

    if r.players_min > r.players_max:
        bad("players_min", f"players_min {r.players_min} > players_max {r.players_max}")
    if not (r.ace_high or r.ace_low):
        bad("ace_high", "aces must be high, low or both")
    if r.ace_wrap:
        bad("ace_wrap", "round-the-corner runs (K-A-2) are not supported by any variant")
    if r.set_max_size is not None and r.set_max_size < r.set_min_size:
        bad("set_max_size", f"set_max_size {r.set_max_size} < set_min_size {r.set_min_size}")
    if not r.set_allow_duplicate_suit and (r.set_max_size is None or r.set_max_size > 4):
        bad("set_max_size", "sets of distinct suits hold at most 4 cards")
    if r.set_min_naturals > r.set_min_size:
        bad("set_min_naturals", "more naturals required than the minimum set size")
    if r.run_min_naturals > r.run_min_size:
        bad("run_min_naturals", "more naturals required than the minimum run size")
    if r.run_min_size > r.run_max_size:
        bad("run_min_size", f"a run cannot be longer than {r.run_max_size} cards with these ace rules")
    if r.allow_all_joker_meld and r.n_jokers < 3:
        bad("allow_all_joker_meld", "all-joker melds need at least 3 jokers in the deck")
    if r.n_decks * 52 + r.n_jokers < 20:
        bad("n_decks", "the deck is too small for any deal")

    # deal sizes must exist and fit the deck for every allowed player count and round
    hs = r.hand_size
    if r.opening_mode == "contract" and _is_round_list(hs) and len(hs) != len(r.contracts):
        bad("hand_size", f"{len(hs)} deal sizes for {len(r.contracts)} contract rounds")
    if isinstance(hs, tuple) and hs and isinstance(hs[0], tuple):
        have = {n for n, _ in hs}
        for n in range(r.players_min, r.players_max + 1):
            if n not in have:
                bad("hand_size", f"no deal size for {n} players (players {r.players_min}..{r.players_max})")
    for n in range(r.players_min, r.players_max + 1):
        for rnd in range(1, r.n_rounds + 1):
            size = r.deal_size(rnd, n)
            if n * size + 1 > r.deck_size:
                bad("hand_size", f"{n} players x {size} cards + upcard do not fit a {r.deck_size}-card deck"
                                 + (f" (round {rnd})" if r.n_rounds > 1 else ""))

    if r.opening_mode == "contract":
        if not r.contracts:
            bad("contracts", "opening_mode = 'contract' needs a contract per round")
        if r.n_hands is not None and r.n_hands != len(r.contracts):
            bad("n_hands", f"n_hands {r.n_hands} differs from the {len(r.contracts)} contract rounds")
        for i, (t, f) in enumerate(r.contracts):
            need = t * r.set_min_size + f * r.run_min_size
            size = r.deal_size(i + 1, r.players_min)
            if need > size + 1:
                bad("contracts", f"round {i + 1} needs {need} cards but a hand holds at most {size + 1} after the draw")
            if r.contract_distinct_run_suits and f > 4:
                bad("contracts", f"round {i + 1}: {f} runs of distinct suits are impossible")
            if r.contract_distinct_set_ranks and t > 13:
                bad("contracts", f"round {i + 1}: {t} sets of distinct ranks are impossible")
    else:
        if r.opening_min_points is None:
            bad("opening_min_points", "opening_mode = 'points' needs an opening minimum")
        if r.contracts:
            bad("contracts", "contracts are only for opening_mode = 'contract'")

    expected = {"reshuffle_unlimited": "none", "void_immediately": "0", "reshuffle_then_void": ">= 1"}
    m = r.max_reshuffles_per_hand
    ok = {"reshuffle_unlimited": m is None, "void_immediately": m == 0,
          "reshuffle_then_void": m is not None and m >= 1}[r.stock_exhaustion]
    if not ok:
        bad("max_reshuffles_per_hand",
            f"{m!r} contradicts stock_exhaustion = {r.stock_exhaustion!r} (expected {expected[r.stock_exhaustion]})")

    if r.match_mode == "elimination_pool" and r.elimination_at is None:
        bad("elimination_at", "match_mode = 'elimination_pool' needs an elimination mark")
    if r.match_mode == "fixed_hands_low_total" and r.n_hands is None:
        bad("n_hands", "match_mode = 'fixed_hands_low_total' needs a number of hands")
    if r.calls_enabled and r.calls_per_turn < 1:
        bad("calls_per_turn", "calls are enabled but no call is allowed per turn")
    if r.table_manipulation and r.opening_mode == "contract":
        bad("table_manipulation", "table manipulation is only defined for the points (Kalooki 40) family")


# ------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=128)
def _vector_of(r: Rules) -> np.ndarray:
    vec = np.zeros(rv.R_VEC_LEN, dtype=np.int64)
    for i, key in enumerate(rv.SCALAR_KNOBS):
        v = getattr(r, key)
        if key in ENUMS:
            v = ENUMS[key].index(v)
        elif v is None:
            v = -1
        vec[i] = int(v)
    vec[rv.R_PENALTY:rv.R_PENALTY + 53] = r.penalty_value
    vec[rv.R_MELD_VALUE:rv.R_MELD_VALUE + 15] = r.meld_value
    vec[rv.R_N_ROUNDS] = r.n_rounds
    for rnd in range(r.n_rounds):
        for n in range(2, 7):
            try:
                vec[rv.round_deal_index(rnd, n)] = r.deal_size(rnd + 1, n)
            except ValueError:
                vec[rv.round_deal_index(rnd, n)] = 0
        if r.opening_mode == "contract":
            t, f = r.contracts[rnd]
            vec[rv.round_contract_index(rnd)] = t
            vec[rv.round_contract_index(rnd) + 1] = f
    from kalooki_sim.melds.positions import run_tables  # (compiled; the melds package imports rules)

    vec[rv.R_WINDOWS:] = run_tables(r.run_min_size, 1 if r.ace_low else 2, 14 if r.ace_high else 13)
    vec.setflags(write=False)
    return vec

