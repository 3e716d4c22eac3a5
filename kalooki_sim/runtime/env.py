"""Lockstep batched environment: B games on the one compiled loop, stopped at learner decisions.

``KalookiVecEnv`` keeps ``B`` game rows (``loop.LoopArrays``).  A seat whose agent is *learner*
(``EXTERNAL`` in the loop) is decided from Python; every other seat is a compiled agent played
inside the step kernel, without a return to Python.  One call of ``step(actions)`` applies the
pending learner action of every row, plays on to the next learner decision of that row (dealing
the next game when one ends) and writes, still compiled, that decision's observation
(``observation.encode``), so each call returns fixed-shape arrays:

* ``obs``     float32[B, OBS_DIM]   the deciding seat's view (``observation`` module docstring)
* ``mask``    bool[B, N_ACTIONS]    its legal actions (the engine's action ids, ``engine.layout``)
* ``rewards`` float32[B, P_MAX]     reward of every real player since the previous call
* ``dones``   bool[B]               the row's episode (a hand or a match) ended during this call
* ``info``    ``seat`` (int64[B], the real player who decides now), ``game_id`` (int64[B]).

The kernel also lists every row's legal ids, ``legal_ids`` (int16[B, N_ACTIONS], the first
``n_legal[b]`` of row ``b`` in increasing order): a decision has a handful of legal actions among
3762, so a learner that samples or scores candidates (a random learner, DouZero-style scoring)
reads a few numbers instead of scanning the mask in Python.

The arrays are the environment's own buffers, overwritten by the next call (copy to keep them);
``obs`` and ``mask`` are read-only, since the kernel rewrites only what changed in a row (the meld
slots used, ``observation.encode``; the previous and the new legal ids): hand them to torch as
copies (``torch.tensor(obs)``), not shared (``torch.from_numpy`` warns).

**Episodes and autoreset.**  ``episode="hand"``: one hand per game, round ``game_id % n_rounds``
with a drawn dealer (as ``rollout.simulate(mode="hands")``); ``episode="match"``: a whole match
(``rollout.match_length``).  Row ``b`` plays game ids ``first_game_id + b``, ``+ B``, ``+ 2B``, ...
so B rows after K episodes each have played exactly the ids ``simulate(n_games=B*K)`` plays.  The
vector form follows Gymnasium's **same-step** autoreset (``AutoresetMode.SAME_STEP``): when a
row's episode ends inside a ``step``, its final rewards are in that step's ``rewards`` with
``dones[b] = True``, and the returned ``obs``/``mask`` already belong to the first learner decision
of the row's next game.  No final observation is returned: the end of a hand has no decision in it
and the value of a terminal state is 0.

**Rewards** (``reward=``): ``"hand"`` (default) pays 1 to a player for every hand he wins (goes
out), at the step in which the hand ends, so a hand episode's return is its win share, the
quantity the tournament tool ranks agents by; ``"match"`` pays each match winner ``1 / winners``
when the match ends (the match win share).  Every real player's reward is reported, so several
learner seats of one game (self-play) each read their own column.

**Seating.**  ``lineup`` names one agent per seat: ``"learner"`` or any strategy name of
``kalooki_sim.runtime.strategies`` (compiled).  With ``rotate=True`` game ``g`` seats the lineup rotated by
``g % n_players``, so a learner plays every seat equally often; ``tables`` gives any per-game
seating instead (``[T, n]`` ids, game ``g`` uses row ``g % T``).

**Compiled seats** are played inside ``loop.advance`` (the closed loop's own path: no return to
Python, no legal mask computed for them); only learner decisions stop it.  The cards each seat
took from the discard pile (part of the observation) are a tally the loop keeps
(``engine.context.CX_TAKEN``).  The rows of a batch run on threads (``lanes.run_lanes``): ``lanes`` of
them (default: numba's thread count, at most one per 16 rows), lane ``l`` playing rows ``l, l +
lanes, ...``; the results never depend on it.  The env has its own row kernel
(``env_kernels.env_rows``: ``act``, ``advance``, the rewards, the next deal when an episode ends,
the encoding) rather than calling ``loop.advance_rows``/``act_rows`` and then further kernels, so
each step passes over a row's memory once, and the compiled seats' decision scratch (greedy's
legality cache, 31 KB) and the encoder's are one per lane, not one per row: a batch of thousands
of rows is bound by cache misses (docs/benchmark-history.md).

**Errors.**  ``step`` checks every action against the mask first and raises
``IllegalActionError`` naming the action, its row and game, and applies nothing.
"""

from __future__ import annotations

import numba
import numpy as np

from kalooki_sim.agents.base import EXTERNAL, N_PARAMS, check_loop_agents, fill_params
from kalooki_sim.agents.observation import OBS_DIM, OBS_VERSION, WORK_LEN
from kalooki_sim.core.lanes import run_lanes
from kalooki_sim.engine.errors import IllegalActionError as _EngineIllegalActionError
from kalooki_sim.engine.layout import N_ACTIONS, P_MAX

from . import loop
from .env_kernels import (
    MODE_CHOOSE, MODE_RESET, MODE_STEP, NRES, RES_COLUMNS, Call, Rows, Scratch, Settings, encode_rows, env_rows,
)

__all__ = ["KalookiVecEnv", "LEARNER", "OBS_DIM", "OBS_VERSION", "N_ACTIONS", "RES_COLUMNS", "IllegalActionError",
           "encode_rows"]

LEARNER = "learner"

# rows a thread must have before a step is split over threads (as loop.advance_rows)
_ROWS_PER_THREAD = 16


class IllegalActionError(_EngineIllegalActionError):
    """An action outside the legal mask of its row (the message names the action and the row).

    A subclass of ``engine.errors.IllegalActionError`` (and so of ``ValueError``), so one
    ``except`` catches the refusals of ``Game.apply`` and of ``step``."""

    def __init__(self, message: str, action=None):
        self.action = action
        self.code = 2
        self.reason = message
        ValueError.__init__(self, message)


def _int64_arg(x, what: str, missing: str = "") -> int:
    """``x`` as a Python int that fits the kernels' int64, or a one-line error naming ``what``."""
    if isinstance(x, np.ndarray) and x.shape == ():
        x = x[()]
    if x is None and missing:
        raise ValueError(f"state {what!r}: missing; {missing}")
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, not {type(x).__name__} {x!r}")
    if not -2 ** 63 <= int(x) < 2 ** 63:
        raise ValueError(f"{what} {x} does not fit a 64-bit integer")
    return int(x)


class KalookiVecEnv:
    """B games in lockstep, stopped at learner decisions (module docstring: arrays, episodes,
    autoreset, rewards, seating).

    ``KalookiVecEnv(rules="caribbean", n_players=4, batch=64, lineup=("learner", "greedy", ...),
    episode="hand", reward="hand", rotate=False, seed=0)``; ``reset(seed)`` then ``step(actions)``.
    ``keep_rows=N`` keeps the result rows (``rollout.simulate``'s columns) of the games with ids
    ``first_game_id .. first_game_id + N - 1``: ``result_rows()``.

    ``episode_games`` (int64[E]) schedules the episodes instead: episode ``first_game_id + e`` plays
    game ``episode_games[e % E]`` at table ``e % T`` (a tournament plays each deal in every seating
    of its table in one batch); ``game_id`` then counts episodes, and the kept rows are episodes.
    Each scheduled episode is played once: a row whose next episode is past the schedule is
    ``parked`` (not dealt again; its ``seat`` is -1, its observation and mask stay those of its last
    decision and its action, any integer, is ignored) while the other rows finish theirs.
    ``table_streams`` (int64[T, n]): each seat's policy stream per table (default the seat number).
    """

    metadata = {"autoreset_mode": "same_step"}

    def __init__(self, rules="caribbean", n_players: int = 4, batch: int = 64, lineup=None, *,
                 episode: str = "hand", reward: str = "hand", rotate: bool = False, tables=None,
                 table_params=None, seed: int = 0, first_game_id: int = 0, hands_per_match=None,
                 max_hands=None, buy_back="always", check: bool = False, keep_rows: int = 0,
                 lanes: int | None = None, legal_lists=None, episode_games=None, table_streams=None):
        from kalooki_sim.core.rules import Rules, load_rules

        from .game import check_supported
        from .rollout import buy_back_flags, match_length, max_steps_per_hand, seating_table
        from .strategies import lineup as resolve

        self.rules = rules if isinstance(rules, Rules) else load_rules(rules)
        check_supported(self.rules)
        n = int(n_players)
        if not self.rules.players_min <= n <= self.rules.players_max:
            raise ValueError(f"{self.rules.name} is played by {self.rules.players_min}..{self.rules.players_max} "
                             f"players, not {n}")
        if episode not in ("hand", "match"):
            raise ValueError(f"episode must be 'hand' or 'match', not {episode!r}")
        if reward not in ("hand", "match"):
            raise ValueError(f"reward must be 'hand' or 'match', not {reward!r}")
        self.n_players, self.batch = n, int(batch)
        if self.batch < 1:
            raise ValueError(f"batch must be >= 1, got {batch}")
        self.episode, self.reward_mode = episode, reward
        if tables is None:
            lineup = [LEARNER] + ["greedy"] * (n - 1) if lineup is None else list(lineup)
            if len(lineup) != n:
                raise ValueError(f"lineup names {len(lineup)} seats for {n} players")
            learner = [str(x).lower() == LEARNER for x in lineup]
            _, ids, pm = resolve(["random" if x else name for x, name in zip(learner, lineup)])
            for name, i, x in zip(lineup, ids, learner):
                if i == EXTERNAL and not x:
                    raise ValueError(f"{name!r} is a learned strategy played from Python (a checkpoint, a Python "
                                     f"policy, the search): the env plays compiled agents inside its kernel; seat "
                                     f"it as 'learner' and act for it, or use policy_play.play_policies")
            ids = np.where(learner, EXTERNAL, ids)
            rot = range(n) if rotate else range(1)
            tables = np.array([np.roll(ids, r) for r in rot], dtype=np.int64)
            table_params = np.array([np.roll(pm, r, axis=0) for r in rot], dtype=np.float64)
            self.lineup = [str(x) for x in lineup]
        else:
            tables = np.ascontiguousarray(tables, dtype=np.int64)
            if tables.ndim != 2 or tables.shape[1] != n:
                raise ValueError(f"tables must be [T, {n}] agent ids, got {tables.shape}")
            tables, table_params = seating_table(tables, tables.shape[0], n, table_params)
            self.lineup = None
        if not (tables == EXTERNAL).any(axis=1).all():
            raise ValueError("every seating needs at least one learner seat (the env stops only at learner "
                             "decisions); for compiled agents alone use rollout.simulate")
        check_loop_agents(tables, "KalookiVecEnv tables")
        self.tables = np.ascontiguousarray(tables, dtype=np.int64)
        # parameter rows wide enough for any compiled agent (``compiled_actions`` swaps one in)
        table_params = np.asarray(table_params, dtype=np.float64)
        self.table_params = fill_params(self.tables, table_params, "table_params", width=max(N_PARAMS.values()))
        if table_streams is None:
            self.streams = np.tile(np.arange(n, dtype=np.int64), (len(self.tables), 1))
        else:
            self.streams = np.ascontiguousarray(table_streams, dtype=np.int64)
            if self.streams.shape != self.tables.shape:
                raise ValueError(f"table_streams must be {self.tables.shape} (tables x seats), got "
                                 f"{self.streams.shape}")
            if (self.streams < 0).any() or (self.streams >= 2 ** 20).any():
                raise ValueError("table_streams must be stream numbers in 0..2**20")
        if episode_games is None:
            self.episode_games = np.zeros(0, dtype=np.int64)
        else:
            g = np.asarray(episode_games)
            if g.ndim != 1 or g.size == 0 or g.dtype.kind not in "iu":
                raise ValueError(f"episode_games must be a non-empty 1-D array of game ids, got shape "
                                 f"{g.shape} dtype {g.dtype}")
            if (g < 0).any() or (g > 2 ** 62).any():
                raise ValueError("episode_games must be game ids in 0..2**62")
            self.episode_games = np.ascontiguousarray(g, dtype=np.int64)
        self.wants = buy_back_flags(buy_back, n)
        self.hand_limit = match_length(self.rules, "hands" if episode == "hand" else "matches", hands_per_match,
                                       max_hands)
        self.max_steps = max_steps_per_hand(self.rules, n)
        self.check = bool(check)
        self.rv = np.ascontiguousarray(self.rules.to_vector(), dtype=np.int64)
        self.seed, self.first_game_id = _int64_arg(seed, "seed"), _int64_arg(first_game_id, "first_game_id")
        if self.first_game_id < 0 or self.first_game_id > 2 ** 62:
            raise ValueError(f"first_game_id must be in 0..2**62, got {first_game_id}")
        B = self.batch
        # thread lanes: lane l plays rows l, l + L, ... and owns the per-decision scratch they share
        self.lanes = (max(1, min(numba.get_num_threads(), B // _ROWS_PER_THREAD)) if lanes is None
                      else int(lanes))
        if not 1 <= self.lanes <= B:
            raise ValueError(f"lanes must be 1..{B} (the batch), got {lanes}")
        self.la = loop.LoopArrays(B, self.table_params.shape[2], scratch_rows=self.lanes)
        self.keep_rows = int(keep_rows)
        self._out = loop.LoopArrays.outputs(self.keep_rows, self.hand_limit, n)
        self.gid = np.zeros(B, dtype=np.int64)
        self.wins_seen = np.zeros((B, P_MAX), dtype=np.int64)
        self.rewards = np.zeros((B, P_MAX), dtype=np.float32)
        self.dones = np.zeros(B, dtype=np.bool_)
        self.results = np.zeros((B, NRES, P_MAX), dtype=np.float64)
        self._obs = np.zeros((B, OBS_DIM), dtype=np.float32)      # written by the kernel only
        self.obs = self._obs.view()
        self.obs.flags.writeable = False
        self.seat = np.zeros(B, dtype=np.int64)
        # (``legal_lists``: accepted from callers written when the lists were optional; always kept)
        self._mask = np.zeros((B, N_ACTIONS), dtype=np.bool_)     # written by the kernel only
        self._mask_view = self._mask.view()
        self._mask_view.flags.writeable = False
        self.legal_ids = np.zeros((B, N_ACTIONS), dtype=np.int16)
        self.n_legal = np.zeros(B, dtype=np.int64)
        self._scratch = np.zeros((self.lanes, N_ACTIONS), dtype=np.bool_)
        self._work = np.zeros((self.lanes, WORK_LEN), dtype=np.int64)      # the encoder's scratch
        self._err = np.zeros(B, dtype=np.int64)
        self._actions = np.zeros(B, dtype=np.int64)
        self._choice_ids = np.zeros(B, dtype=np.int64)
        self._choice_params = np.zeros((B, self.table_params.shape[2]), dtype=np.float64)
        self._ready = False

    # ---- the kernel
    def _run(self, mode: int) -> None:
        la = self.la
        tables = loop.Lineup(self.tables, self.table_params, self.streams, self.wants)
        settings = Settings(int(self.seed), int(self.first_game_id), self.keep_rows, self.batch,
                            self.episode == "hand", int(self.hand_limit), int(self.max_steps), self.check,
                            self.reward_mode == "match", self.episode_games)
        rows = Rows(self.gid, self.wins_seen, self.rewards, self.dones, self.results, self._obs, self._mask,
                    self.legal_ids, self.n_legal, self.seat)
        call = Call(self._actions, self._choice_ids, self._choice_params, self._err)
        run_lanes(env_rows, self.lanes, mode, la.state.arrays(), self.rv, *la.loop_arrays(), self._out, tables,
                  settings, rows, call, Scratch(self._work, self._scratch))

    @property
    def mask(self) -> np.ndarray:
        """bool[B, N_ACTIONS]: the legal actions of every row's pending decision (read-only)."""
        return self._mask_view

    @property
    def parked(self) -> np.ndarray:
        """bool[B]: the rows past the schedule (``episode_games``), waiting undealt (class docstring)."""
        E = self.episode_games.size
        return self.gid - self.first_game_id >= E if E else np.zeros(self.batch, dtype=np.bool_)

    @property
    def game_id(self) -> np.ndarray:
        return self.gid

    def _raise(self):
        bad = np.flatnonzero(self._err)
        if bad.size:
            self._ready = False
            b = int(bad[0])
            e = int(self._err[b])
            raise RuntimeError(f"{bad.size} row(s) failed; first: row {b}, game {int(self.gid[b])}, code {e} "
                               "(2000+: the engine refused an action; 1000000+: the loop stopped: +1 step "
                               "budget, +2 illegal compiled action, +1000 invariant); call reset()")

    def _info(self):
        return {"seat": self.seat, "game_id": self.gid}

    def _state_arrays(self) -> dict:
        st = self.la.state
        out = {f"state.{k}": getattr(st, k) for k in type(st).__dataclass_fields__}
        out.update({f"loop.{k}": v for k, v in self.la.__dict__.items()
                    if isinstance(v, np.ndarray) and k not in ("known", "mask")})     # (per-lane scratch)
        for k in ("gid", "wins_seen", "rewards", "dones", "results", "seat", "legal_ids", "n_legal"):
            out[k] = getattr(self, k)
        out["obs"] = self._obs
        out["mask"] = self._mask
        for i, a in enumerate(self._out):
            out[f"out.{i}"] = a
        return out

    def state_dict(self) -> dict:
        """Everything a resumed run needs to go on exactly where this one is (copies of every array
        of the batch, the seed and the first game id): ``load_state_dict`` puts it back."""
        d = {k: v.copy() for k, v in self._state_arrays().items()}
        d["meta.seed"] = np.int64(self.seed)
        d["meta.first_game_id"] = np.int64(self.first_game_id)
        d["meta.ready"] = np.int64(self._ready)
        return d

    def load_state_dict(self, d) -> None:
        """Restore ``state_dict()``'s arrays into this env (built with the same arguments).

        Everything is checked first (every key present, of the right shape and kind); a refused
        dict leaves the env as it was."""
        if not hasattr(d, "keys") or not hasattr(d, "__getitem__"):
            raise TypeError(f"load_state_dict needs a mapping (state_dict()'s), not {type(d).__name__}")
        arrays = self._state_arrays()
        staged = {}
        for k, v in arrays.items():
            if k not in d:
                raise ValueError(f"state {k!r}: missing (a state_dict of another version?); nothing was loaded")
            x = np.asarray(d[k])
            if x.shape != v.shape:
                raise ValueError(f"state {k!r}: shape {x.shape}, this env has {v.shape} (an env built with other "
                                 "arguments?); nothing was loaded")
            if not np.can_cast(x.dtype, v.dtype, casting="same_kind"):
                raise ValueError(f"state {k!r}: dtype {x.dtype} does not fit {v.dtype}; nothing was loaded")
            staged[k] = x
        meta = {k: _int64_arg(d[k] if k in d else None, k, missing="nothing was loaded")
                for k in ("meta.seed", "meta.first_game_id", "meta.ready")}
        for k, v in arrays.items():
            v[...] = staged[k]
        self.seed = meta["meta.seed"]
        self.first_game_id = meta["meta.first_game_id"]
        self._ready = bool(meta["meta.ready"])

    def reset(self, seed: int | None = None):
        """Deal every row's first game (ids ``first_game_id + b``) and play to the first learner
        decision; returns ``(obs, mask, info)``."""
        if seed is not None:
            self.seed = _int64_arg(seed, "seed")
        self.gid[:] = self.first_game_id + np.arange(self.batch, dtype=np.int64)
        self._err[:] = 0
        self._run(MODE_RESET)
        self._raise()
        self._ready = True
        return self.obs, self.mask, self._info()

    def check_actions(self, actions) -> np.ndarray:
        """``actions`` as int64[B], or ``IllegalActionError`` naming the first illegal one."""
        try:
            a = np.asarray(actions)
        except (TypeError, ValueError, OverflowError) as e:
            raise IllegalActionError(f"actions must be an array of integer action ids: {e}") from None
        if a.dtype.kind not in "iu":
            raise IllegalActionError(f"actions must be integers (action ids 0..{N_ACTIONS - 1}), got dtype {a.dtype}"
                                     "; nothing was applied")
        if a.size != self.batch:
            raise ValueError(f"one action per row: got {a.size} for a batch of {self.batch}; nothing was applied")
        wide = a.reshape(-1)
        if wide.dtype.kind == "u":
            out_u = wide >= N_ACTIONS
            a = np.where(out_u, -1, wide).astype(np.int64)
        else:
            a = wide.astype(np.int64)
        parked = self.parked
        out = ((a < 0) | (a >= N_ACTIONS)) & ~parked
        bad = np.flatnonzero(out)
        if not bad.size:
            bad = np.flatnonzero(~self._mask[np.arange(self.batch), np.where(parked, 0, a)] & ~parked)
        if bad.size:
            from kalooki_sim.engine.action_text import action_text

            b = int(bad[0])
            x = int(wide[b])
            what = "not an action id" if out[b] else f"{action_text(self.la.state, b, x)!r} is not legal here"
            raise IllegalActionError(f"illegal action {x} in row {b} (game {int(self.gid[b])}, player "
                                     f"{int(self.seat[b])}): {what}; {bad.size} row(s) with an action outside "
                                     f"the legal mask (0..{N_ACTIONS - 1}); nothing was applied")
        return a

    def step(self, actions):
        """Apply one action per row (legal in ``mask``) and play on to every row's next learner
        decision; returns ``(obs, mask, rewards, dones, info)`` (module docstring)."""
        if not self._ready:
            raise RuntimeError("call reset() first (and again after an error)")
        self._actions[:] = self.check_actions(actions)
        self._run(MODE_STEP)
        self._raise()
        return self.obs, self.mask, self.rewards, self.dones, self._info()

    def compiled_actions(self, agents, params=None) -> np.ndarray:
        """What a compiled agent (a strategy name, or one per row) would play at every row's pending
        decision, on the deciding seat's own random stream (so applying them plays the closed
        loop's game with that agent in the learner's seat)."""
        from .strategies import lineup as resolve

        names = [agents] * self.batch if isinstance(agents, str) else list(agents)
        _, ids, pm = resolve(names)
        if params is not None:
            pm = np.broadcast_to(np.asarray(params, dtype=np.float64), (self.batch, np.shape(params)[-1]))
        k = self._choice_params.shape[1]
        if pm.shape[1] > k:
            raise ValueError(f"parameter rows of {pm.shape[1]} values; this env's rows hold {k}")
        self._choice_ids[:] = ids
        self._choice_params[:] = fill_params(ids, pm, "compiled_actions params", width=k)
        self._run(MODE_CHOOSE)
        return self._actions.copy()

    def random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per row (numpy only, for smoke runs and benchmarks): one
        pick per row from ``legal_ids``."""
        pick = (rng.random(self.batch) * self.n_legal).astype(np.int64)
        return self.legal_ids[np.arange(self.batch), pick].astype(np.int64)

    def result_rows(self, with_rows: bool = False):
        """The per-hand rows (``rollout.simulate``'s columns; in match episodes ``(hands, matches)``)
        of the kept games (``keep_rows``) that have finished; ``with_rows`` adds ``batch_row``, the
        kept episode (``game_id - first_game_id``) a row belongs to."""
        from .rollout import _columns

        ids = np.arange(self.first_game_id, self.first_game_id + self.keep_rows, dtype=np.int64)
        if self.episode_games.size:
            ids = self.episode_games[(ids - self.first_game_id) % self.episode_games.size]
        return _columns(self.rules, "hands" if self.episode == "hand" else "matches", self._out, ids,
                        self.n_players, with_rows, 0)

    def nbytes(self) -> int:
        """Memory held by the batch (state, loop and env buffers)."""
        arrs = [*self.la.__dict__.values(), *self.la.state.arrays(), *self._out, self.gid, self.wins_seen,
                self.rewards, self.dones, self.results, self._obs, self._mask, self.seat, self.legal_ids,
                self.n_legal,
                self._work, self._scratch, self._err, self._actions, self._choice_ids, self._choice_params]
        return int(sum(a.nbytes for a in arrs if isinstance(a, np.ndarray)))
