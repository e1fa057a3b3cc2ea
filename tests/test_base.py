"""Invariants of the shared AEC adapter, checked on both games."""

import json
import pickle

import numpy as np
import pytest

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.base import IllegalActionError

ENVS = [pytest.param(ring_rang_v0.env, id="ring_rang"), pytest.param(lambda: rang_v0.env(num_players=3), id="rang3")]


def _play(env, steps: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))


@pytest.mark.parametrize("make", ENVS)
def test_restore_into_a_fresh_env_needs_no_reset(make):
    env = make()
    env.reset(seed=4)
    _play(env, 25)
    snap = json.loads(json.dumps(env.unwrapped.snapshot()))
    fresh = make()
    fresh.restore(snap)
    assert fresh.agent_selection == env.agent_selection
    agent = env.agent_selection
    assert np.array_equal(fresh.observe(agent)["observation"], env.observe(agent)["observation"])
    _play(env, 40, seed=9)
    _play(fresh, 40, seed=9)
    assert fresh.unwrapped.snapshot() == env.unwrapped.snapshot()


@pytest.mark.parametrize("make", ENVS)
def test_rejected_actions_change_nothing(make):
    env = make()
    env.reset(seed=2)
    _play(env, 7)
    before = pickle.dumps(env.unwrapped.snapshot())
    mask = env.observe(env.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    for bad in (illegal, -1, len(mask), 2.5, "3", None, True, np.array([1, 2])):
        with pytest.raises((IllegalActionError, ValueError)) as info:
            env.step(bad)
        if bad is not None:
            assert "legal:" in str(info.value)
    assert pickle.dumps(env.unwrapped.snapshot()) == before


@pytest.mark.parametrize("make", ENVS)
def test_numpy_integer_actions_are_accepted(make):
    env = make()
    env.reset(seed=3)
    legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
    env.step(np.int64(legal[0]))


def test_bad_render_mode():
    with pytest.raises(ValueError, match="render_mode"):
        ring_rang_v0.env(render_mode="rgb")
