"""Closed-loop simulation: whole hands or matches played by compiled agents (DESIGN.md §5).

The driver of ``loop.closed_loop``: it lays out the seating of every game (one lineup for all, or
one per game: ``seat_policies`` as a ``[n_games, n_players]`` table), runs the games in chunks over
lanes on threads (``lanes.run_lanes``), and turns the loop's result planes into columns.  Every game is a pure function of
(rules, seating, parameters, seed, game id), so results are identical for any thread count, batch
size or ``first_game_id`` split.

Matches of every mode go through the one match flow (``engine.match_flow``): Caribbean's fixed
hands, the elimination matches of K40/K51/K101 (buy-backs, the pool; capped at ``max_hands``),
and the per-hand settlement of NA15/AMER (``hands_per_game`` hands).
"""

from __future__ import annotations

import numpy as np

from kalooki_sim.agents.base import EXTERNAL, check_loop_agents, fill_params, policy_id, seat_rows
from kalooki_sim.core.lanes import run_lanes
from kalooki_sim.engine.layout import H_MAX, P_MAX
from kalooki_sim.engine.match import BUY_BACK_ALWAYS, BUY_BACK_NEVER

from .loop import (
    M_ACTIVE, M_BB, M_FINISHED, M_HANDS, M_KALOOKIS, M_MATCH_HANDS, M_MONEY, M_POLICY, M_POOL, M_RIPS, M_TOTAL, M_UNITS,
    R_VALID, ROW_COLUMNS, Lineup, LoopArrays, closed_loop,
)

__all__ = ["simulate", "seating_table", "buy_back_flags", "match_length", "max_steps_per_hand", "HAND_COLUMNS",
           "MATCH_COLUMNS", "POINTS_HAND_COLUMNS", "POINTS_MATCH_COLUMNS", "DEFAULT_HANDS_PER_MATCH",
           "DEFAULT_MAX_HANDS", "ERR_MAX_STEPS", "ERR_ILLEGAL"]

from .loop import ERR_ILLEGAL, ERR_MAX_STEPS  # noqa: E402  (re-exported: the codes simulate reports)

DEFAULT_HANDS_PER_MATCH = 10     # per-hand modes when rules.n_hands is "none" (NA15, AMER)
DEFAULT_MAX_HANDS = 200          # hand cap of an elimination match

HAND_COLUMNS = ("game_id", "hand_no", "round", "seat", "policy_id", "dealer", "penalty", "won",
                "win_share", "laid_down", "laid_down_turn", "calls_used", "calls_denied", "turns", "reshuffles",
                "voids", "end_event")
# points-variant matches also say who was dealt in and how each hand went on the score sheet
POINTS_HAND_COLUMNS = HAND_COLUMNS + ("engine_seat", "players", "hand_value", "cards_left", "jokers_left",
                                      "sheet_penalty", "payment", "total", "status", "pool")
MATCH_COLUMNS = ("game_id", "seat", "policy_id", "total", "match_win_share")
POINTS_MATCH_COLUMNS = MATCH_COLUMNS + ("units", "money", "buy_backs", "eliminated", "hands_played", "rips",
                                        "kalookis", "pool", "finished", "match_hands")
# the columns that are not int64, and their types
_NARROW = {"won": np.int8, "laid_down": np.int8, "end_event": np.int8, "engine_seat": np.int8,
           "players": np.int8, "cards_left": np.int16, "jokers_left": np.int8, "status": np.int8,
           "buy_backs": np.int8, "eliminated": np.int8, "finished": np.int8}
_MATCH_PLANE = {"total": M_TOTAL, "units": M_UNITS, "money": M_MONEY, "buy_backs": M_BB,
                "hands_played": M_HANDS, "rips": M_RIPS, "kalookis": M_KALOOKIS, "pool": M_POOL,
                "finished": M_FINISHED, "match_hands": M_MATCH_HANDS, "policy_id": M_POLICY}

_CHUNK = 4096
_LANES = 64        # games of a chunk are played by this many lanes, each with its own state row
_CELLS = 16_000_000  # result cells held at once (128 MB); beyond that, results are built per chunk


def match_length(rules, mode: str = "matches", hands_per_game=None, max_hands=None) -> int:
    """Hands a game may last: 1 for single hands; the fixed length of a Caribbean or per-hand match;
    the cap of an elimination match."""
    if mode == "hands":
        if hands_per_game not in (None, 1):
            raise ValueError("mode 'hands' plays exactly one hand per game")
        return 1
    if rules.match_mode == "elimination_pool":
        if hands_per_game is not None:
            raise ValueError(f"{rules.name} plays each match to elimination; use max_hands to cap it, "
                             "not hands_per_game")
        n, what, top = (DEFAULT_MAX_HANDS if max_hands is None else int(max_hands)), "max_hands", 100_000
    else:
        if hands_per_game is not None:
            n = int(hands_per_game)
        elif rules.n_hands is not None:
            n = int(rules.n_hands)
        else:
            n = DEFAULT_HANDS_PER_MATCH
        what = "hands_per_game"
        # the tie rules of fixed-hands matches read the engine's per-hand record (H_MAX hands)
        top = H_MAX if rules.match_mode == "fixed_hands_low_total" else 100_000
    if not 1 <= n <= top:
        raise ValueError(f"{what} must be 1..{top}, got {n}")
    return n


def max_steps_per_hand(rules, n_players: int) -> int:
    """A hand's step budget: far above any real hand, so only a loop that never ends reaches it."""
    return (int(rules.max_turns_per_hand) + 1) * (6 * n_players + 60) * 4 * (int(rules.max_void_replays) + 1)


def seating_table(seat_policies, n_games: int, n_players: int, params=None):
    """The per-game seating ``(seats int64[G, n], params float64[G, n, k])``.

    ``seat_policies``: one lineup for every game (names or ids, one per seat) or a ``[G, n]`` table
    of ids; ``params``: ``None`` (defaults), one row per seat ``[n, k]`` (or one row ``[k]`` for
    all), or one per game and seat ``[G, n, k]``."""
    sp = np.asarray(seat_policies)
    if sp.ndim == 2:
        if sp.shape != (n_games, n_players):
            raise ValueError(f"a per-game seating must be {n_games} x {n_players} (games x seats), "
                             f"got {sp.shape[0]} x {sp.shape[1]}")
        if sp.dtype.kind in "iu":           # ids: each distinct one checked once
            seats = np.ascontiguousarray(sp, dtype=np.int64)
            for x in np.unique(seats):
                policy_id(int(x))
        else:
            seats = np.array([[policy_id(x) for x in row] for row in sp.astype(object)],
                             dtype=np.int64).reshape(n_games, n_players)
    else:
        if len(seat_policies) != n_players:
            raise ValueError(f"{len(seat_policies)} seat policies for {n_players} players")
        lineup = [policy_id(p) for p in seat_policies]
        seats = np.tile(np.asarray(lineup, dtype=np.int64), (n_games, 1))
    if params is not None and np.asarray(params).ndim == 3:
        pm = np.asarray(params, dtype=np.float64)
        if pm.shape[:2] != (n_games, n_players):
            raise ValueError(f"per-game params must be {n_games} x {n_players} x k, got {pm.shape}")
        return seats, fill_params(seats, pm)
    rows = None if params is None else seat_rows(params, n_players)
    if sp.ndim != 2:                        # one lineup: its rows are filled once
        filled = fill_params(np.asarray(lineup, dtype=np.int64), rows)
        return seats, np.ascontiguousarray(np.broadcast_to(filled, (n_games,) + filled.shape))
    return seats, fill_params(seats, None if rows is None else np.broadcast_to(rows, (n_games,) + rows.shape))


def buy_back_flags(buy_back, n_players: int) -> np.ndarray:
    """Per-player buy-back flags from "always" / "never" / a bool / one bool per player."""
    if isinstance(buy_back, str):
        if buy_back not in (BUY_BACK_ALWAYS, BUY_BACK_NEVER):
            raise ValueError(f"buy_back must be 'always', 'never', a bool or one bool per player, not {buy_back!r}")
        return np.full(P_MAX, 1 if buy_back == BUY_BACK_ALWAYS else 0, dtype=np.int64)
    if isinstance(buy_back, (bool, np.bool_)):
        return np.full(P_MAX, int(buy_back), dtype=np.int64)
    flags = list(buy_back)
    if len(flags) != n_players:
        raise ValueError(f"buy_back must give {n_players} values (one per player), got {len(flags)}")
    out = np.zeros(P_MAX, dtype=np.int64)
    out[:n_players] = [1 if f else 0 for f in flags]
    return out


def simulate(rules, n_players, seat_policies, params=None, n_games=1, seed=0, mode="hands",
             first_game_id=0, hands_per_game=None, max_steps=None, check=False, max_hands=None,
             buy_back="always", game_ids=None, with_rows=False, streams=None):
    """Play ``n_games`` games (ids ``first_game_id ..``, or the ids ``game_ids``) with compiled agents.

    ``seat_policies``: agent names or ids, one per seat, or a ``[n_games, n_players]`` table giving
    every game its own seating; ``params``: ``None`` (each agent's defaults), ``[n_players, k]`` or
    ``[n_games, n_players, k]`` (``seating_table``).  ``mode="hands"``: every game is one hand of
    round ``(game_id % n_rounds) + 1`` with a random dealer; ``"matches"``: a whole match
    (``match_length``: ``hands_per_game`` hands of a fixed-length match, or to elimination capped
    at ``max_hands``; ``buy_back`` = "always", "never" or one flag per player).  ``max_steps``: the
    step budget of one hand.  ``check=True`` verifies the engine invariants after every step
    (slow; tests).  ``game_ids`` (int64[n_games]) gives every game its id, repeats allowed: the
    seatings of one deal are games with the same id (its cards, its dealer); ``with_rows`` adds a
    ``batch_row`` column (the game's index in the batch) to tell them apart.  ``streams``
    (int64[n_games, n_players]): each seat's policy random stream (default: its seat number; a
    tournament gives each entrant its own, so copies of one agent do not share their randomness).

    Returns a dict of numpy columns, one row per (game, hand, seat dealt in), ordered by game, hand,
    seat (``HAND_COLUMNS``); in ``"matches"`` mode a tuple ``(hands, matches)`` whose second dict
    has one row per (game, seat) (``MATCH_COLUMNS``).  Matches of the points variants carry the
    score sheet too (``POINTS_HAND_COLUMNS``, ``POINTS_MATCH_COLUMNS``; ``seat`` is the real
    player, ``engine_seat`` his seat in that hand).  Raises ``RuntimeError`` if a game fails
    (illegal action, invariant failure, step budget reached).
    """
    if mode not in ("hands", "matches"):
        raise ValueError(f"mode must be 'hands' or 'matches', not {mode!r}")
    n_players = int(n_players)
    if not 2 <= n_players <= P_MAX:
        raise ValueError(f"n_players must be 2..{P_MAX}")
    n_games = int(n_games)
    if n_games < 0:
        raise ValueError(f"n_games must be >= 0, got {n_games}")
    if game_ids is None:
        game_ids = np.arange(int(first_game_id), int(first_game_id) + n_games, dtype=np.int64)
    else:
        game_ids = np.ascontiguousarray(game_ids, dtype=np.int64)
        if game_ids.shape != (n_games,):
            raise ValueError(f"game_ids must give one id per game ({n_games}), got shape {game_ids.shape}")
        with_rows = True
    seed = int(seed)
    if streams is None:
        streams = np.tile(np.arange(n_players, dtype=np.int64), (n_games, 1))
    streams = np.ascontiguousarray(streams, dtype=np.int64)
    if streams.shape != (n_games, n_players):
        raise ValueError(f"streams must be {n_games} x {n_players} (games x seats), got {streams.shape}")
    seats, pm = seating_table(seat_policies, n_games, n_players, params)
    if (seats == EXTERNAL).any():
        raise ValueError("simulate plays compiled agents only; a seat played from outside (external) "
                         "needs a stepping driver (kalooki_sim.runtime.game.Game or the environment)")
    check_loop_agents(seats, "simulate")
    H = match_length(rules, mode, hands_per_game, max_hands)
    wants = buy_back_flags(buy_back, n_players)
    if max_steps is None:
        max_steps = max_steps_per_hand(rules, n_players)
    rv = np.ascontiguousarray(rules.to_vector(), dtype=np.int64)
    first_hand = 0 if mode == "hands" else -1
    per = len(ROW_COLUMNS) * H * n_players
    chunk = max(1, min(_CHUNK, _CELLS // per))
    whole = n_games * per <= _CELLS
    lanes = LoopArrays(min(max(n_games, 1), _LANES), pm.shape[2])
    parts = []
    out = lanes.outputs(n_games if whole else 0, H, n_players)
    for c0 in range(0, n_games, chunk):
        c1 = min(n_games, c0 + chunk)
        if not whole:
            out = lanes.outputs(c1 - c0, H, n_players)
        base = 0 if whole else c0
        err = np.zeros(out.rows.shape[1], dtype=np.int64)
        lineups = Lineup(seats[base:], pm[base:], streams[base:], wants)
        run_lanes(closed_loop, lanes.state.batch, lanes.state.arrays(), rv, *lanes.loop_arrays(), out, err, lineups,
                  seed, game_ids[base:], first_hand, H, int(max_steps), bool(check), c0 - base, c1 - base)
        bad = np.nonzero(err[c0 - base:c1 - base])[0]
        if bad.size:
            i = int(bad[0]) + c0
            raise RuntimeError(f"{bad.size} game(s) failed; first: game_id {int(game_ids[i])} with code "
                               f"{int(err[i - base])} (1 = step budget, 2 = illegal action, 1000+ invariant, "
                               f"2000+ engine error)")
        if not whole:
            parts.append(_columns(rules, mode, out, game_ids[c0:c1], n_players, with_rows, c0))
    if whole:
        return _columns(rules, mode, out, game_ids, n_players, with_rows, 0)
    if not parts:
        return _columns(rules, mode, lanes.outputs(0, H, n_players), game_ids, n_players, with_rows, 0)
    if mode == "hands":
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    return tuple({k: np.concatenate([p[i][k] for p in parts]) for k in parts[0][i]} for i in range(2))


def _columns(rules, mode, out, game_ids, n_players, with_rows, row0):
    """The result planes of a batch as columns (views where every game played every hand);
    ``row0``: the batch index of the planes' first game."""
    rows, mrows, mwin = out
    G = rows.shape[1]
    valid = rows[R_VALID] == 1                                   # [G, H, n]
    complete = bool(valid.all())
    points = mode == "matches" and rules.match_mode != "fixed_hands_low_total"
    names = POINTS_HAND_COLUMNS if points else HAND_COLUMNS
    hands = {}
    for name in names:
        if name == "win_share":
            continue
        col = rows[ROW_COLUMNS.index(name)]
        col = col.reshape(-1) if complete else col[valid]
        hands[name] = col.astype(_NARROW[name]) if name in _NARROW else col
    hands["win_share"] = hands["won"].astype(np.float64)         # one winner or none
    hands = {k: hands[k] for k in names}
    if with_rows:
        hands["batch_row"] = row0 + np.nonzero(valid)[0]
    if mode == "hands":
        return hands
    gm = np.repeat(np.arange(G, dtype=np.int64), n_players)
    match = {"game_id": game_ids[gm], "seat": np.tile(np.arange(n_players, dtype=np.int64), G),
             "match_win_share": mwin.reshape(-1).copy(),
             "eliminated": (1 - mrows[M_ACTIVE]).reshape(-1)}
    for name, k in _MATCH_PLANE.items():
        match[name] = mrows[k].reshape(-1).copy()
    names = POINTS_MATCH_COLUMNS if points else MATCH_COLUMNS
    matches = {k: (match[k].astype(_NARROW[k]) if k in _NARROW else match[k]) for k in names}
    if with_rows:
        matches["batch_row"] = row0 + gm
    return hands, matches
