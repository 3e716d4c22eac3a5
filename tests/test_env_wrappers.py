"""The Gymnasium and PettingZoo faces of the environment (kalooki_sim.runtime.env_wrappers): the ecosystems'
own checkers, the spaces shared with the batched env, and a short MaskablePPO run."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytestmark = pytest.mark.learn
for _m in ("gymnasium", "pettingzoo"):
    pytest.importorskip(_m, reason='the Gymnasium and PettingZoo wrappers need the learn extra (pip install -e ".[learn]")')

from kalooki_sim.runtime.env import N_ACTIONS, OBS_DIM, IllegalActionError, KalookiVecEnv  # noqa: E402
from kalooki_sim.runtime.env_wrappers import KalookiAECEnv, KalookiGymEnv, action_space, observation_space  # noqa: E402


def test_gym_env_passes_check_env():
    from gymnasium.utils.env_checker import check_env

    env = KalookiGymEnv("caribbean", 4, opponents="greedy", illegal_action="first_legal", seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # "no spec: cannot test render modes" and the like
        check_env(env, skip_render_check=True)


def test_gym_env_masks_spaces_and_errors():
    env = KalookiGymEnv("k40", 3, opponents=["greedy", "random"], seed=4)
    obs, info = env.reset(seed=4)
    assert env.observation_space == observation_space() and env.action_space == action_space()
    assert obs.shape == (OBS_DIM,) and env.observation_space.contains(obs)
    vec = KalookiVecEnv("k40", 3, batch=1, lineup=["learner", "greedy", "random"], seed=4)
    vobs, vmask, _ = vec.reset()
    np.testing.assert_array_equal(obs, vobs[0])              # the batched env's first decision
    np.testing.assert_array_equal(env.action_masks(), vmask[0])
    bad = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(IllegalActionError, match=f"illegal action {bad}"):
        env.step(bad)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(400):
        a = rng.choice(np.flatnonzero(env.action_masks()))
        obs, r, term, trunc, info = env.step(a)
        assert env.observation_space.contains(obs) and not trunc
        if term:
            ends += 1
            obs, info = env.reset()
    assert ends > 0


def test_pettingzoo_aec_passes_api_test_and_seed_test():
    from pettingzoo.test import api_test, seed_test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # api_test warns about render() and sparse observations
        api_test(KalookiAECEnv("caribbean", 4), num_cycles=200)
        api_test(KalookiAECEnv("na15", 3, lineup=["learner", "greedy", "learner"], episode="match",
                               hands_per_match=2), num_cycles=200)
        seed_test(lambda: KalookiAECEnv("caribbean", 4), num_cycles=200)
        seed_test(lambda: KalookiAECEnv("american", 2), num_cycles=200)


def test_aec_observations_are_each_agents_own_view():
    env = KalookiAECEnv("caribbean", 3)
    env.reset(seed=3)
    spaces = env.observation_space(env.agent_selection)
    assert spaces["observation"] == observation_space()
    views = {a: env.observe(a) for a in env.agents}
    for a, v in views.items():
        assert spaces.contains(v)
        assert v["action_mask"].any() == (a == env.agent_selection)
    hands = [v["observation"] for v in views.values()]
    assert not np.array_equal(hands[0], hands[1])


def test_maskable_ppo_trains_on_the_gym_env(tmp_path):
    """A few thousand MaskablePPO steps run, never play an illegal action (the env would raise),
    and the policy saves and loads."""
    import torch
    from sb3_contrib import MaskablePPO

    torch.set_num_threads(1)
    env = KalookiGymEnv("caribbean", 4, opponents="greedy", seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=512, batch_size=128, n_epochs=2, seed=0, verbose=0,
                        policy_kwargs={"net_arch": [64, 64]}, device="cpu")
    model.learn(total_timesteps=2048)
    assert model.num_timesteps >= 2048
    model.save(tmp_path / "ppo")
    again = MaskablePPO.load(tmp_path / "ppo", device="cpu")
    obs, _ = env.reset(seed=1)
    a, _ = again.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(a)] and 0 <= int(a) < N_ACTIONS


def test_env_factory_is_wrapped_and_renders_text():
    """``env_wrappers.env()``: PettingZoo's order-checking wrappers around the AEC env, and an
    "ansi" render mode showing the position as ``str(Game)`` does."""
    from pettingzoo.test import api_test

    from kalooki_sim.runtime.env_wrappers import env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(env("caribbean", 4, seed=2), num_cycles=100)
    fresh = env("caribbean", 4)
    with pytest.raises(AssertionError, match="reset"):
        fresh.step(0)                                       # out of order: refused by the wrapper
    e = env("k40", 3, render_mode="ansi", seed=5)
    e.reset()
    text = e.render()
    assert "k40: hand 1" in text and "P1: " in text and "P3: " in text and "phase: " in text
    obs, *_ = e.last()
    e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert e.render() != text                                # the position moved on
    with pytest.warns(UserWarning, match="render_mode"):
        assert env("caribbean", 4).unwrapped.render() is None    # no render mode: nothing drawn
