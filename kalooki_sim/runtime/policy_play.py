"""Games with Python/torch policies in some seats: ``simulate``'s rows, driven through the lockstep env.

``play_policies(rules, n_players, seats, n_games, seed)`` takes one entry per seat: a strategy name
(a compiled agent, played inside the loop) or an object with the ``Policy`` protocol
(``agents.base.Policy``: a learned network, ``agents.learned.LearnedPolicy``, any Python
policy, or a driven compiled agent's seats: ``agents.search_policy.SearchPolicy``).  The policy
seats are the environment's learner seats; at every step each policy acts on the rows where one of
its seats decides (when that is every row, on the environment's own read-only buffers, not a copy:
a policy copies what it changes or keeps).  The result has ``rollout.simulate``'s columns (the
environment keeps the rows of the games it plays: ``KalookiVecEnv(keep_rows=...)``), with
``policy_id`` -1 for the policy seats, so the statistics and tables that read ``simulate``'s rows
read these too.

Determinism: the games depend on (rules, seating, seed, game ids) and on the policies' choices.  A
policy that samples draws on one ``np.random.Generator`` (seeded by ``seed``) shared over the
rows of a step, so its choices, unlike a compiled agent's, depend on the batch size; a
deterministic policy (``LearnedPolicy(greedy=True)``) plays the same games for any batch.
"""

from __future__ import annotations

import numpy as np

from .env import LEARNER, KalookiVecEnv

__all__ = ["checked_actions", "play_policies", "play_schedule", "policy_actions"]


def _rows_of(a: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``a[rows]``, without the copy when ``rows`` is every row in order (a tournament's learned
    entrant decides in every row of most steps: the observations alone are 14 MB a step)."""
    return a if rows.size == len(a) else a[rows]


def policy_actions(policy, obs, legal, rng, engine=None, rows=None) -> np.ndarray:
    """``policy.act(obs, legal, rng)`` checked: one integer action per row, each legal in its row's
    mask; anything else is a ``ValueError`` naming the policy and the first bad row (a Python
    policy's bug must not surface as an engine error several calls later).  A policy that reads
    the engine's state instead of the observation (``act_state(la, rv, rows)``: the search agent's
    seats, ``agents.search_policy``) is asked that way when ``engine`` = ``(la, rv)`` (the game's
    ``loop.LoopArrays`` and rule vector) and the game ``rows`` are given."""
    name = getattr(policy, "name", None) or type(policy).__name__
    try:
        if engine is not None and callable(getattr(policy, "act_state", None)):
            a = np.asarray(policy.act_state(*engine, rows))
        else:
            a = np.asarray(policy.act(obs, legal, rng))
    except Exception as e:
        raise ValueError(f"policy {name}: act() failed ({type(e).__name__}: {e})") from e
    return checked_actions(name, a, legal)


def checked_actions(name: str, a, legal) -> np.ndarray:
    """``a`` as int64 actions, one per row of ``legal`` and each legal there, or a ``ValueError``
    naming the policy ``name`` and the first bad row (``policy_actions``' check, for callers that
    obtained the actions another way)."""
    a = np.asarray(a)
    if a.shape != (len(legal),):
        raise ValueError(f"policy {name}: act() must return one action per row, shape ({len(legal)},), "
                         f"got shape {a.shape}")
    if a.dtype.kind not in "iu":
        if a.dtype.kind == "f" and np.isfinite(a).all() and (a == np.round(a)).all():
            a = a.astype(np.int64)
        else:
            raise ValueError(f"policy {name}: act() must return integer action ids, got {a.dtype}")
    a = a.astype(np.int64, copy=False)
    n_actions = legal.shape[1]
    ok = (a >= 0) & (a < n_actions)
    ok[ok] = legal[np.flatnonzero(ok), a[ok]]
    if not ok.all():
        r = int(np.flatnonzero(~ok)[0])
        raise ValueError(f"policy {name}: action {int(a[r])} is not legal in row {r} (legal: "
                         f"{np.flatnonzero(legal[r]).tolist()[:12]}{' ...' if legal[r].sum() > 12 else ''})")
    return a


def play_policies(rules, n_players: int, seats, n_games: int, seed: int = 0, *, mode: str = "hands",
                  batch: int = 256, hands_per_game=None, max_hands=None, first_game_id: int = 0,
                  buy_back: str = "always"):
    """Play ``n_games`` games (ids ``first_game_id ..``) with ``seats`` (module docstring); returns
    ``simulate``'s columns (in ``"matches"`` mode ``(hands, matches)``)."""
    n = int(n_players)
    if len(seats) != n:
        raise ValueError(f"{len(seats)} seats for {n} players")
    is_policy = [not isinstance(s, str) for s in seats]
    for s, pol in zip(seats, is_policy):
        if pol and not callable(getattr(s, "act", None)):
            raise TypeError(f"seat {s!r} is neither a strategy name nor a Policy (an object with act())")
    if not any(is_policy):
        raise ValueError("no policy seat: for compiled agents alone use rollout.simulate")
    if mode not in ("hands", "matches"):
        raise ValueError(f"mode must be 'hands' or 'matches', not {mode!r}")
    B = max(1, min(int(batch), int(n_games)))
    env = KalookiVecEnv(rules, n, batch=B, lineup=[LEARNER if p else s for s, p in zip(seats, is_policy)],
                        episode="hand" if mode == "hands" else "match", seed=seed, first_game_id=first_game_id,
                        keep_rows=int(n_games), hands_per_match=hands_per_game, max_hands=max_hands,
                        buy_back=buy_back)
    # distinct policies (one object may sit in several seats) and the seats of each
    owners: dict[int, tuple[object, list[int]]] = {}
    for p, (s, pol) in enumerate(zip(seats, is_policy)):
        if pol:
            owners.setdefault(id(s), (s, []))[1].append(p)
    rng = np.random.default_rng(seed)
    obs, mask, info = env.reset()
    end = first_game_id + int(n_games)
    actions = np.zeros(B, dtype=np.int64)
    while (env.game_id < end).any():
        for pol, ps in owners.values():
            rows = np.flatnonzero(np.isin(info["seat"], ps))
            if rows.size:
                actions[rows] = policy_actions(pol, _rows_of(obs, rows), _rows_of(mask, rows), rng,
                                               (env.la, env.rv), rows)
        obs, mask, _, _, info = env.step(actions)
    return env.result_rows()


def play_schedule(rules, n_players: int, entrants, seatings, games, seed: int = 0, *, mode: str = "hands",
                  batch: int = 1024, hands_per_game=None, max_hands=None, buy_back: str = "always"):
    """Episode ``e`` plays game ``games[e]`` with entrant ``seatings[e, s]`` in seat ``s``, all
    episodes in one lockstep batch: ``entrants[i]`` is a strategy name (compiled, played inside
    the loop on entrant ``i``'s own random stream, as in ``rollout.simulate(streams=...)``) or a
    ``Policy``.  At every step each policy acts once, on every row where one of its seats decides
    (one forward pass of a network over the whole batch), so a tournament's learned entrants play
    at the network's batched speed.  Returns ``simulate``'s columns with ``batch_row`` = ``e``."""
    from kalooki_sim.agents.base import EXTERNAL

    from .strategies import lineup

    n = int(n_players)
    seatings = np.ascontiguousarray(seatings, dtype=np.int64)
    games = np.ascontiguousarray(games, dtype=np.int64)
    E = len(games)
    if seatings.shape != (E, n):
        raise ValueError(f"seatings must be {E} x {n} (episodes x seats), got {seatings.shape}")
    is_policy = [not isinstance(x, str) for x in entrants]
    for x, pol in zip(entrants, is_policy):
        if pol and not callable(getattr(x, "act", None)):
            raise TypeError(f"entrant {x!r} is neither a strategy name nor a Policy (an object with act())")
    if mode not in ("hands", "matches"):
        raise ValueError(f"mode must be 'hands' or 'matches', not {mode!r}")
    names = [x if not pol else "random" for x, pol in zip(entrants, is_policy)]
    _, ids, params = lineup(names)
    ids = np.where(is_policy, EXTERNAL, ids)
    B = max(1, min(int(batch), E))
    env = KalookiVecEnv(rules, n, batch=B, tables=ids[seatings], table_params=params[seatings],
                        table_streams=seatings, episode_games=games, episode="hand" if mode == "hands" else "match",
                        seed=seed, keep_rows=E, hands_per_match=hands_per_game, max_hands=max_hands,
                        buy_back=buy_back)
    policies = [i for i, pol in enumerate(is_policy) if pol]
    rng = np.random.default_rng(seed)
    obs, mask, info = env.reset()
    actions = np.zeros(B, dtype=np.int64)
    while True:
        live = ~env.parked              # rows past the schedule wait for the others: no action asked
        if not live.any():
            break
        who = seatings[np.minimum(env.game_id, E - 1), info["seat"]]
        for i in policies:
            rows = np.flatnonzero(live & (who == i))
            if rows.size:
                actions[rows] = policy_actions(entrants[i], _rows_of(obs, rows), _rows_of(mask, rows), rng,
                                               (env.la, env.rv), rows)
        obs, mask, _, _, info = env.step(actions)
    return env.result_rows(with_rows=True)
