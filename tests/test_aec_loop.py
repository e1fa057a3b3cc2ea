"""The lean AEC loop (issue 36): ``env()`` keeps every check of PettingZoo's order enforcing, and plays
exactly as the loop before it (the benchmark's frozen reference, ``cardenvs.benchmarks.aec_before``)."""

from __future__ import annotations

import random

import aec_before
import numpy as np
import pytest
from pettingzoo.utils.env_logger import EnvLogger

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.base import IllegalActionError

MAKERS = {
    "ring_rang": (ring_rang_v0.env, aec_before.ring_rang_env),
    "ring_rang_variants": (lambda: ring_rang_v0.env(signals=True, declarations=True, episode="round"),
                           lambda: aec_before.wrappers.OrderEnforcingWrapper(
                               aec_before._RingRangBefore(signals=True, declarations=True, episode="round"))),
    "rang4": (lambda: rang_v0.env(num_players=4), aec_before.rang_env),
}


def trace(env, seed: int, decisions: int) -> list:
    """Everything the loop sees: agent, observation, mask, reward, flags, for ``decisions`` steps."""
    rnd = random.Random(seed)
    env.reset(seed=seed)
    seen = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        seen.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc, info))
        if term or trunc:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rnd.randrange(len(legal))]))
        if len(seen) >= decisions:
            break
    return seen


@pytest.mark.parametrize("game", list(MAKERS))
def test_env_plays_exactly_as_the_loop_before(game):
    make, make_before = MAKERS[game]
    for seed in (0, 1):
        assert trace(make(), seed, 3000) == trace(make_before(), seed, 3000)


@pytest.mark.parametrize("make", [ring_rang_v0.env, rang_v0.env, lambda: ring_rang_v0.env(illegal_action="terminate")])
def test_order_enforcing_checks_are_kept(make):
    env = make()
    for name in ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos"):
        with pytest.raises(AttributeError, match="before reset"):
            getattr(env, name)
    with pytest.raises(AttributeError, match="before reset"):
        env.last()
    for call in (lambda: env.step(0), lambda: env.observe("player_0"), env.agent_iter, env.state, env.render):
        with pytest.raises(Exception, match="reset"):
            call()
    with pytest.raises(AttributeError, match="private"):
        env._nothing_here  # noqa: B018 (the stock wrapper refuses private names)
    env.reset(seed=0)
    assert env.agents == env.unwrapped.agents and env.agent_selection == env.unwrapped.agent_selection
    iterator = iter(env.agent_iter())
    next(iterator)
    with pytest.raises(AssertionError, match="step"):  # a turn without step() between
        next(iterator)


def test_max_iter_and_step_after_the_end():
    env = ring_rang_v0.env(episode="round")
    env.reset(seed=3)
    assert len(list(_stepping(env, max_iter=5))) == 5
    for _ in _stepping(env):
        pass
    assert env.agents == []
    EnvLogger.suppress_output()
    try:
        env.step(None)  # the stock wrapper's warning, not an error
    finally:
        EnvLogger.unsuppress_output()


def _stepping(env, max_iter: int = 2**63):
    for agent in env.agent_iter(max_iter):
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))
        yield agent


def test_illegal_actions_still_checked():
    env = ring_rang_v0.env()
    env.reset(seed=0)
    illegal = int(np.flatnonzero(env.last()[0]["action_mask"] == 0)[0])
    for action in (illegal, 57, -1, True, 1.0, None):
        with pytest.raises(IllegalActionError):
            env.step(action)
    terminating = ring_rang_v0.env(illegal_action="terminate")
    terminating.reset(seed=0)
    offender = terminating.agent_selection
    EnvLogger.suppress_output()
    try:
        terminating.step(illegal)
    finally:
        EnvLogger.unsuppress_output()
    assert all(terminating.terminations.values())
    assert terminating.rewards[offender] == -1.0
