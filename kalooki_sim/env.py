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

The arrays are the environment's own buffers, overwritten by the next call (copy to keep them).

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
``kalooki_sim.strategies`` (compiled).  With ``rotate=True`` game ``g`` seats the lineup rotated by
``g % n_players``, so a learner plays every seat equally often; ``tables`` gives any per-game
seating instead (``[T, n]`` ids, game ``g`` uses row ``g % T``).

**Taken cards.**  The observation includes the cards each seat took from the discard pile this
hand.  When the engine has the public column ``layout.PS_TAKEN`` the encoder reads it and the
compiled seats run inside ``loop.advance``; until then the environment steps every seat through
the loop's pause mode (``CX_PAUSE``: ``agent_action`` then ``act``, the same games by the loop's
own contract) and notes the takes itself (``observation.track_take``).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from . import loop
from .agents.base import EXTERNAL
from .agents.compiled import seat_action
from .engine.layout import G_DEAL_NO, G_TO_ACT, N_ACTIONS, P_MAX
from .engine.match_flow import SP_KALOOKIS, SP_MONEY, SP_MWIN, SP_PLAYED, SP_REAL, SP_RIPS, SP_TOTAL, SX_HANDS, SX_N, SX_N_MWIN
from .jit import njit, pnjit
from .loop import ST_OVER, ST_WAITING, CX_ERR, act, advance, agent_action, start
from .observation import HAS_PS_TAKEN, OBS_DIM, OBS_VERSION, encode, track_take
from .rulevec import R_N_ROUNDS

__all__ = ["KalookiVecEnv", "LEARNER", "OBS_DIM", "OBS_VERSION", "N_ACTIONS", "RES_COLUMNS", "compiled_choices"]

LEARNER = "learner"

# res[b, RES_*, p]: the last finished episode of row b, per real player
RES_COLUMNS = ("game_id", "hands_won", "total", "match_win_share", "money", "hands_played")
RES_GAME, RES_WON, RES_TOTAL, RES_MWIN, RES_MONEY, RES_PLAYED = range(6)
NRES = 6

# kernel error codes (err[b]); 1_000_000 + CX_ERR: the loop stopped on an error
ERR_NO_CHOICE = 1            # a compiled seat chose nothing (pause mode)
ERR_LOOP = 1_000_000


@njit(_nrt=False)
def _begin(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
           sp, sx, seats, params, keys, ctrs, ctx, known, b, tab_seats, tab_params, streams, wants, seed,
           gid, single_hand, hand_limit, max_steps, check, pause, taken, wins_seen):
    """Deal game ``gid`` on row ``b`` with its table's seating."""
    t = gid % tab_seats.shape[0]
    fh = gid % rv[R_N_ROUNDS] if single_hand else -1
    start(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, b,
          sp, sx, seats, params, keys, ctrs, ctx, known, tab_seats[t], tab_params[t], streams[t], wants, -1,
          seed, gid, fh, hand_limit, max_steps, -1, check, pause)
    for p in range(P_MAX):
        taken[b, p] = 0
        wins_seen[b, p] = 0


@njit(_nrt=False)
def _act_tracked(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
                 sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin, b, a, taken):
    """``loop.act`` that keeps the env's pile-taken bitmasks (cleared when a new deal starts)."""
    track_take(gs, disc, taken, b, a)
    dn = gs[b, G_DEAL_NO]
    e = act(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv, b,
            sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin, a)
    if gs[b, G_DEAL_NO] != dn:
        for p in range(P_MAX):
            taken[b, p] = 0
    return e


@njit(_nrt=False)
def _run(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
         sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin, b,
         tab_seats, tab_params, streams, wants, seed, stride, single_hand, hand_limit, max_steps, check, pause,
         reward_match, gid, taken, wins_seen, rew, done, res, obs, seat_out, scratch):
    """Play row ``b`` on to its next learner decision (dealing new games as episodes end), keeping
    rewards and the finished episode's results; encode the decision.  Returns 0 or an error."""
    while True:
        st = advance(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
                     b, sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin)
        n = sx[b, SX_N]
        if not reward_match:
            for p in range(n):
                w = sp[b, SP_RIPS, p] + sp[b, SP_KALOOKIS, p]
                rew[b, p] += w - wins_seen[b, p]
                wins_seen[b, p] = w
        if st == ST_WAITING:
            seat = gs[b, G_TO_ACT]
            p = sp[b, SP_REAL, seat]
            if seats[b, p] == EXTERNAL:
                encode(gs, ps, hands, disc, disc_by, minfo, mcards, mas, rv, b, sp, sx, taken, obs[b])
                seat_out[b] = p
                return 0
            a = agent_action(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore,
                             hwin, rv, b, sp, seats, params, keys, ctrs, known, scratch[b])
            if a < 0:
                return ERR_NO_CHOICE
            e = _act_tracked(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore,
                             hwin, rv, sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows,
                             mwin, b, a, taken)
            if e != 0:
                return e
        elif st == ST_OVER:
            nw = sx[b, SX_N_MWIN]
            for p in range(n):
                share = 1.0 / nw if (sp[b, SP_MWIN, p] != 0 and nw > 0) else 0.0
                if reward_match:
                    rew[b, p] += share
                res[b, RES_GAME, p] = gid[b]
                res[b, RES_WON, p] = sp[b, SP_RIPS, p] + sp[b, SP_KALOOKIS, p]
                res[b, RES_TOTAL, p] = sp[b, SP_TOTAL, p]
                res[b, RES_MWIN, p] = share
                res[b, RES_MONEY, p] = sp[b, SP_MONEY, p]
                res[b, RES_PLAYED, p] = sp[b, SP_PLAYED, p]
            done[b] = True
            gid[b] += stride
            _begin(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
                   sp, sx, seats, params, keys, ctrs, ctx, known, b, tab_seats, tab_params, streams, wants, seed,
                   gid[b], single_hand, hand_limit, max_steps, check, pause, taken, wins_seen)
        else:
            return ERR_LOOP + ctx[b, CX_ERR]


@pnjit
def env_reset(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
              sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin,
              tab_seats, tab_params, streams, wants, seed, stride, single_hand, hand_limit, max_steps, check,
              pause, reward_match, gid, taken, wins_seen, rew, done, res, obs, seat_out, scratch, err):
    """Deal every row's first game (``gid[b]``) and play to its first learner decision."""
    for k in prange(gs.shape[0]):
        b = np.uint64(k)
        for p in range(P_MAX):
            rew[b, p] = 0.0
        done[b] = False
        _begin(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
               sp, sx, seats, params, keys, ctrs, ctx, known, b, tab_seats, tab_params, streams, wants, seed,
               gid[b], single_hand, hand_limit, max_steps, check, pause, taken, wins_seen)
        err[b] = _run(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
                      sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin, b,
                      tab_seats, tab_params, streams, wants, seed, stride, single_hand, hand_limit, max_steps,
                      check, pause, reward_match, gid, taken, wins_seen, rew, done, res, obs, seat_out, scratch)


@pnjit
def env_step(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
             sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin,
             tab_seats, tab_params, streams, wants, seed, stride, single_hand, hand_limit, max_steps, check,
             pause, reward_match, gid, taken, wins_seen, rew, done, res, obs, seat_out, scratch, err, actions):
    """Apply ``actions[b]`` (the pending learner decision of every row) and play on."""
    for k in prange(gs.shape[0]):
        b = np.uint64(k)
        for p in range(P_MAX):
            rew[b, p] = 0.0
        done[b] = False
        e = _act_tracked(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin,
                         rv, sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin, b,
                         actions[b], taken)
        if e != 0:
            err[b] = e
            continue
        err[b] = _run(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
                      sp, sx, sev, seats, params, keys, ctrs, ctx, known, mask, rows, mrows, mwin, b,
                      tab_seats, tab_params, streams, wants, seed, stride, single_hand, hand_limit, max_steps,
                      check, pause, reward_match, gid, taken, wins_seen, rew, done, res, obs, seat_out, scratch)


@pnjit
def compiled_choices(gs, ps, hands, stock, disc, disc_by, minfo, mcards, mas, plan, plan_n, hscore, hwin, rv,
                     sp, keys, ctrs, known, agent_ids, agent_params, scratch, out):
    """What compiled agent ``agent_ids[b]`` (parameter row ``agent_params[b]``) plays at row ``b``'s
    pending decision, drawing on the deciding seat's own policy stream exactly as the loop would
    if that agent sat there: a learner seat played this way plays the closed loop's game."""
    for k in prange(gs.shape[0]):
        b = np.uint64(k)
        seat = gs[b, G_TO_ACT]
        if seat < 0:
            out[b] = -1
            continue
        p = sp[b, SP_REAL, seat]
        out[b] = seat_action(agent_ids[b], agent_params[b], gs, ps, hands, stock, disc, disc_by, minfo, mcards,
                             mas, plan, plan_n, hscore, hwin, rv, b, seat, known[b], scratch[b], keys[b, p],
                             ctrs[b, p:p + 1])


class KalookiVecEnv:
    """B games in lockstep, stopped at learner decisions (module docstring: arrays, episodes,
    autoreset, rewards, seating).

    ``KalookiVecEnv(rules="caribbean", n_players=4, batch=64, lineup=("learner", "greedy", ...),
    episode="hand", reward="hand", rotate=False, seed=0)``; ``reset(seed)`` then ``step(actions)``.
    """

    metadata = {"autoreset_mode": "same_step"}

    def __init__(self, rules="caribbean", n_players: int = 4, batch: int = 64, lineup=None, *,
                 episode: str = "hand", reward: str = "hand", rotate: bool = False, tables=None,
                 table_params=None, seed: int = 0, first_game_id: int = 0, hands_per_match=None,
                 max_hands=None, buy_back="always", check: bool = False, track_taken: bool | None = None):
        from .engine.game import check_supported
        from .rollout import buy_back_flags, match_length, max_steps_per_hand, seating_table
        from .rules import Rules, load_rules
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
            names = ["random" if str(x).lower() == LEARNER else x for x in lineup]
            _, ids, pm = resolve(names)
            ids = np.where([str(x).lower() == LEARNER for x in lineup], EXTERNAL, ids)
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
        self.tables, self.table_params = tables, np.ascontiguousarray(table_params, dtype=np.float64)
        self.streams = np.tile(np.arange(n, dtype=np.int64), (len(tables), 1))
        self.wants = buy_back_flags(buy_back, n)
        if episode == "hand":
            self.hand_limit = 1
        else:
            self.hand_limit = match_length(self.rules, "matches", hands_per_match, max_hands)
        self.max_steps = max_steps_per_hand(self.rules, n)
        self.pause = (not HAS_PS_TAKEN) if track_taken is None else bool(track_taken)
        self.check = bool(check)
        self.rv = np.ascontiguousarray(self.rules.to_vector(), dtype=np.int64)
        self.seed, self.first_game_id = int(seed), int(first_game_id)
        B = self.batch
        self.la = loop.LoopArrays(B, self.table_params.shape[2])
        self._out = loop.LoopArrays.outputs(0, 1, n)
        self.gid = np.zeros(B, dtype=np.int64)
        self.taken = np.zeros((B, P_MAX), dtype=np.int64)
        self.wins_seen = np.zeros((B, P_MAX), dtype=np.int64)
        self.rewards = np.zeros((B, P_MAX), dtype=np.float32)
        self.dones = np.zeros(B, dtype=np.bool_)
        self.results = np.zeros((B, NRES, P_MAX), dtype=np.float64)
        self.obs = np.zeros((B, OBS_DIM), dtype=np.float32)
        self.seat = np.zeros(B, dtype=np.int64)
        self._scratch = np.zeros((B, N_ACTIONS), dtype=np.bool_)
        self._err = np.zeros(B, dtype=np.int64)
        self._ready = False

    # ---- kernel arguments
    def _args(self):
        la = self.la
        return (*la.state.arrays(), self.rv, *la.loop_arrays(), *self._out, self.tables, self.table_params,
                self.streams, self.wants, self.seed, self.batch, self.episode == "hand", self.hand_limit,
                self.max_steps, self.check, self.pause, self.reward_mode == "match", self.gid, self.taken,
                self.wins_seen, self.rewards, self.dones, self.results, self.obs, self.seat, self._scratch,
                self._err)

    @property
    def mask(self) -> np.ndarray:
        return self.la.mask

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
                               "(2000+: the engine refused an action; 1000000+: the loop stopped: 1 step "
                               "budget, 2 illegal compiled action, 1000+ invariant)")

    def _info(self):
        return {"seat": self.seat, "game_id": self.gid}

    def reset(self, seed: int | None = None):
        """Deal every row's first game; returns ``(obs, mask, info)``."""
        if seed is not None:
            self.seed = int(seed)
        self.gid[:] = self.first_game_id + np.arange(self.batch, dtype=np.int64)
        env_reset(*self._args())
        self._raise()
        self._ready = True
        return self.obs, self.la.mask, self._info()

    def step(self, actions):
        """Apply one action per row (legal in ``mask``); returns ``(obs, mask, rewards, dones, info)``."""
        if not self._ready:
            raise RuntimeError("call reset() first (and again after an error)")
        a = np.ascontiguousarray(actions, dtype=np.int64).reshape(-1)
        if a.shape[0] != self.batch:
            raise ValueError(f"one action per row: got {a.shape[0]} for a batch of {self.batch}")
        if a.min() < 0 or a.max() >= N_ACTIONS or not self.la.mask[np.arange(self.batch), a].all():
            bad = [int(b) for b in np.flatnonzero((a < 0) | (a >= N_ACTIONS))]
            if not bad:
                bad = [int(b) for b in np.flatnonzero(~self.la.mask[np.arange(self.batch), a])]
            raise ValueError(f"illegal action {int(a[bad[0]])} in row {bad[0]} (game {int(self.gid[bad[0]])}); "
                             f"{len(bad)} row(s) with an action outside the mask")
        env_step(*self._args(), a)
        self._raise()
        return self.obs, self.la.mask, self.rewards, self.dones, self._info()

    def compiled_actions(self, agents, params=None) -> np.ndarray:
        """What a compiled agent (a strategy name, or one per row) would play at every row's pending
        decision, on the deciding seat's own random stream (the loop's game, if applied)."""
        from .strategies import lineup as resolve

        names = [agents] * self.batch if isinstance(agents, str) else list(agents)
        _, ids, pm = resolve(names)
        if params is not None:
            pm = np.broadcast_to(np.asarray(params, dtype=np.float64), (self.batch, np.shape(params)[-1]))
        out = np.zeros(self.batch, dtype=np.int64)
        la = self.la
        compiled_choices(*la.state.arrays(), self.rv, la.sp, la.keys, la.ctrs, la.known,
                         np.ascontiguousarray(ids, dtype=np.int64), np.ascontiguousarray(pm), self._scratch, out)
        return out

    def random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per row (numpy; for smoke runs and benchmarks)."""
        m = self.la.mask
        u = rng.random(m.shape, dtype=np.float32) * m
        return u.argmax(axis=1)

    def nbytes(self) -> int:
        """Memory held by the batch (state, loop and env buffers)."""
        arrs = [*self.la.__dict__.values(), *self.la.state.arrays(), self.gid, self.taken, self.wins_seen,
                self.rewards, self.dones, self.results, self.obs, self.seat, self._scratch, self._err]
        return int(sum(a.nbytes for a in arrs if isinstance(a, np.ndarray)))
