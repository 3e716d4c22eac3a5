"""Gymnasium and PettingZoo faces of the lockstep environment (``kalooki_sim.runtime.env``).

Both wrap a ``KalookiVecEnv`` of one game row, so they play the same games, with the same
observation (``observation.encode``, float32[OBS_DIM], ``OBS_VERSION``) and the same actions
(the engine's action ids, ``Discrete(N_ACTIONS)``) as the batched environment; ``observation_space``
and ``action_space`` below are those of the batched environment too (one row of it).

* ``KalookiGymEnv``: one learner seat, the others fixed compiled agents (strategy names);
  ``action_masks()`` is what ``sb3_contrib.MaskablePPO`` asks for.  An episode is a hand (or a
  match, ``episode="match"``); the reward is the learner's column of the batched env's rewards.
* ``KalookiAECEnv``: a PettingZoo AEC env; every learner seat of the lineup is an agent
  (``player_<p>``, by real player), compiled agents may fill the other seats.  Observations are
  ``{"observation", "action_mask"}`` (int8 mask, PettingZoo's convention); ``observe`` works for
  any agent (its own view, ``observation.encode_view``), its mask is all zeros unless it is to act.

Seeding: ``reset(seed=s)`` restarts from game id 0 of seed ``s``, so the same seed gives the
same games; ``reset()`` without a seed goes on to the next game id.  Gymnasium's ``check_env``
steps actions sampled from the whole action space, most of them illegal: the Gym env raises
``IllegalActionError`` on them unless built with ``illegal_action="first_legal"`` (the first legal
action is played instead and ``info["illegal_action"]`` is set), the setting ``check_env`` is run
with in the tests.  Masked learners never meet the difference.
"""

from __future__ import annotations

import functools

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from kalooki_sim.agents.observation import WORK_LEN
from kalooki_sim.engine.match_flow import SP_SEAT

from .env import LEARNER, N_ACTIONS, OBS_DIM, OBS_VERSION, IllegalActionError, KalookiVecEnv, encode_rows

__all__ = ["env", "observation_space", "action_space", "KalookiGymEnv", "KalookiAECEnv", "OBS_LOW", "OBS_HIGH",
           "IllegalActionError"]

# every feature of the observation lies well inside this (most in [0, 1]; score-sheet totals and
# units are scaled by 200 and 100 and can pass 1)
OBS_LOW, OBS_HIGH = -1.0e4, 1.0e4


def observation_space() -> spaces.Box:
    """The observation of one deciding seat (one row of ``KalookiVecEnv.obs``)."""
    return spaces.Box(OBS_LOW, OBS_HIGH, shape=(OBS_DIM,), dtype=np.float32)


def action_space() -> spaces.Discrete:
    """The engine's action ids (one row of ``KalookiVecEnv.mask`` says which are legal)."""
    return spaces.Discrete(N_ACTIONS)


class KalookiGymEnv(gymnasium.Env):
    """One learner seat against fixed compiled agents (module docstring).

    ``KalookiGymEnv("caribbean", 4, opponents="greedy", learner_seat=0)``; ``opponents`` is one
    strategy name for every other seat or one per other seat; ``rotate=True`` moves the lineup one
    seat every game so the learner plays every seat."""

    metadata = {"render_modes": [], "obs_version": OBS_VERSION}

    def __init__(self, rules="caribbean", n_players: int = 4, opponents="greedy", *, learner_seat: int = 0,
                 rotate: bool = False, episode: str = "hand", reward: str = "hand", seed: int = 0,
                 illegal_action: str = "raise", render_mode=None, **env_kw):
        n = int(n_players)
        others = [opponents] * (n - 1) if isinstance(opponents, str) else list(opponents)
        if len(others) != n - 1:
            raise ValueError(f"{len(others)} opponents for {n} players")
        if illegal_action not in ("raise", "first_legal"):
            raise ValueError(f"illegal_action must be 'raise' or 'first_legal', not {illegal_action!r}")
        lineup = others[:learner_seat] + [LEARNER] + others[learner_seat:]
        self.vec = KalookiVecEnv(rules, n, batch=1, lineup=lineup, episode=episode, reward=reward,
                                 rotate=rotate, seed=seed, **env_kw)
        self.observation_space = observation_space()
        self.action_space = action_space()
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self._seed = int(seed)
        self._started = False
        self._pending = False               # the last step ended an episode: the next is dealt

    def _obs(self):
        return self.vec.obs[0].copy()

    def _info(self):
        return {"seat": int(self.vec.seat[0]), "game_id": int(self.vec.gid[0])}

    def reset(self, *, seed: int | None = None, options=None):
        super().reset(seed=seed)
        if seed is not None or not self._started:
            self.vec.first_game_id = 0
            self.vec.reset(self._seed if seed is None else int(seed))
            self._started = True
        elif not self._pending:             # abandoned mid-episode: deal the next game id
            self.vec.first_game_id = int(self.vec.gid[0]) + 1
            self.vec.reset()
        self._pending = False
        return self._obs(), self._info()

    def action_masks(self) -> np.ndarray:
        """bool[N_ACTIONS]: the legal actions now (``MaskablePPO``'s hook)."""
        return self.vec.mask[0].copy()

    def step(self, action):
        if not self._started:
            raise RuntimeError("call reset() first")
        a = np.array([int(action)], dtype=np.int64)
        info = {}
        if self.illegal_action == "first_legal" and not (0 <= a[0] < N_ACTIONS and self.vec.mask[0, a[0]]):
            a[0] = int(np.flatnonzero(self.vec.mask[0])[0])
            info["illegal_action"] = True
        me = int(self.vec.seat[0])                   # the learner's real player in this game
        _, _, rew, done, _ = self.vec.step(a)
        terminated = bool(done[0])
        self._pending = terminated
        info.update(self._info())
        return self._obs(), float(rew[0, me]), terminated, False, info


class KalookiAECEnv(AECEnv):
    """PettingZoo AEC environment: every learner seat of ``lineup`` (default: all seats) is an
    agent (module docstring)."""

    metadata = {"name": "kalooki_v0", "render_modes": ["ansi"], "is_parallelizable": False,
                "obs_version": OBS_VERSION}

    def __init__(self, rules="caribbean", n_players: int = 4, lineup=None, *, episode: str = "hand",
                 reward: str = "hand", seed: int = 0, render_mode=None, **env_kw):
        super().__init__()
        n = int(n_players)
        lineup = [LEARNER] * n if lineup is None else list(lineup)
        self.vec = KalookiVecEnv(rules, n, batch=1, lineup=lineup, episode=episode, reward=reward, seed=seed,
                                 **env_kw)
        self._players = [p for p, x in enumerate(lineup) if str(x).lower() == LEARNER]
        self.possible_agents = [f"player_{p}" for p in self._players]
        self._player_of = {a: p for a, p in zip(self.possible_agents, self._players)}
        self._obs_space = spaces.Dict({"observation": observation_space(),
                                       "action_mask": spaces.Box(0, 1, shape=(N_ACTIONS,), dtype=np.int8)})
        self._act_space = action_space()
        self.render_mode = render_mode
        self._seed = int(seed)
        self._started = False
        self._view = np.zeros((1, OBS_DIM), dtype=np.float32)
        self._viewer = np.zeros(1, dtype=np.int64)
        self._work = np.zeros((1, WORK_LEN), dtype=np.int64)       # the encoder's scratch

    @functools.lru_cache(maxsize=None)
    def observation_space(self, agent):
        return self._obs_space

    @functools.lru_cache(maxsize=None)
    def action_space(self, agent):
        return self._act_space

    def _select(self):
        self.agent_selection = f"player_{int(self.vec.seat[0])}"

    def reset(self, seed: int | None = None, options=None):
        if seed is not None or not self._started:
            self.vec.first_game_id = 0
            self.vec.reset(self._seed if seed is None else int(seed))
            self._started = True
        else:
            self.vec.first_game_id = int(self.vec.gid[0]) + (0 if self._over else 1)
            self.vec.reset()
        self._over = False
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._select()

    def observe(self, agent):
        p = self._player_of[agent]
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        if not self._over and agent == self.agent_selection:
            obs = self.vec.obs[0].copy()
            mask[:] = self.vec.mask[0]
        else:
            la = self.vec.la
            st = la.state
            self._viewer[0] = la.sp[0, SP_SEAT, p] if not self._over else -2
            if self._viewer[0] == -1:
                self._viewer[0] = -2                # out of the match: nothing to see
            encode_rows(st.arrays(), self.vec.rv, la.sheet, la.ctx, self.vec.mask, self._viewer, self._work, self._view)
            obs = self._view[0].copy()
        return {"observation": obs, "action_mask": mask}

    def step(self, action):
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        a = np.array([int(action)], dtype=np.int64)
        _, _, rew, done, _ = self.vec.step(a)
        for x in self.agents:
            self.rewards[x] = float(rew[0, self._player_of[x]])
        if done[0]:
            # the next game is already dealt (same-step autoreset); an AEC episode ends here
            self._over = True
            for x in self.agents:
                self.terminations[x] = True
        else:
            self._select()
        self._accumulate_rewards()

    def render(self):
        """``render_mode="ansi"``: the whole position as text (``str(Game)``: every hand, the
        table, the pile) -- for people debugging, not for agents (it shows hidden cards)."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
            return None
        if self.render_mode != "ansi":
            raise ValueError(f"render_mode {self.render_mode!r} is not supported (only 'ansi')")
        from .game import Game

        return str(Game.view(self.vec.rules, self.vec.la))

    def close(self):
        pass


def env(rules="caribbean", n_players: int = 4, lineup=None, **kw) -> AECEnv:
    """The PettingZoo environment as PettingZoo's own environments come: ``KalookiAECEnv`` inside
    its order-checking wrappers (acting out of turn, stepping a finished agent, illegal
    observation spaces are reported; illegal actions are refused by the engine as
    ``IllegalActionError``).  ``render_mode="ansi"`` renders the position as text."""
    from pettingzoo.utils import wrappers

    return wrappers.OrderEnforcingWrapper(KalookiAECEnv(rules, n_players, lineup, **kw))
