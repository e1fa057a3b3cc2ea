"""The one game API (cardenvs.core.Game): both engines answer it, and it agrees with the AEC envs.

Driving an engine through the API alone and the env with the same actions must give the same
observations for every seat, the same rewards credited to the same seats, the same ends; clones and
JSON round trips must continue identically.
"""

from __future__ import annotations

import copy
import json
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cardenvs.core import Game
from cardenvs.games import game_spec

CASES = [("ring_rang", 4, "round"), ("ring_rang", 4, "game"), ("rang", 2, "match"), ("rang", 4, "deal"),
         ("rang", 7, "match")]


def env_and_game(name: str, players: int, episode: str, seed: int):
    env = game_spec(name).make_env(episode, players)
    env.reset(seed=seed)
    return env, env.unwrapped.game.clone()


def step_both(env, game: Game, action: int) -> None:
    """One action in the env and in the engine; the rewards agree seat by seat."""
    outcome = game.step(action)
    env.step(action)
    expected = outcome.rewards or (0.0,) * game.num_players
    for agent, value in env.rewards.items():
        assert value == pytest.approx(expected[int(agent.rsplit("_", 1)[1])])
    while env.agents and (env.terminations[env.agent_selection] or env.truncations[env.agent_selection]):
        env.step(None)  # the AEC turns of the agents whose episode ended


@settings(max_examples=6, deadline=None)
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**16))
def test_engine_through_the_api_matches_the_env(case, seed):
    name, players, episode = case
    env, game = env_and_game(name, players, episode, seed)
    assert isinstance(game, Game)
    rng = random.Random(seed)
    for _ in range(400):
        if game.is_over():
            break
        seat = game.current_player()
        assert env.agent_selection == f"player_{seat}"
        mask = game.legal_mask()
        assert np.flatnonzero(mask).tolist() == sorted(game.legal_actions())
        np.testing.assert_array_equal(mask, env.observe(env.agent_selection)["action_mask"])
        for viewer in game.seats_in_play():
            np.testing.assert_array_equal(game.observe(viewer), env.observe(f"player_{viewer}")["observation"])
        legal = game.legal_actions()
        step_both(env, game, legal[rng.randrange(len(legal))])
    if game.is_over():
        assert game.seats_in_play() == []


@pytest.mark.parametrize(("name", "players", "episode"), CASES)
def test_clone_and_json_round_trip_continue_identically(name, players, episode):
    _, game = env_and_game(name, players, episode, seed=11)
    rng = random.Random(1)
    for _ in range(30):
        if game.is_over():
            break
        legal = game.legal_actions()
        game.step(legal[rng.randrange(len(legal))])
    twin = game.clone()
    data = json.loads(json.dumps(game.to_json()))
    restored = type(game).from_json(data, copy.deepcopy(game.rng))  # the RNG is the caller's, not the JSON's
    copies = (game, twin, restored)
    pick = random.Random(2)
    while not game.is_over():
        legal = game.legal_actions()
        assert all(c.legal_actions() == legal and c.current_player() == game.current_player() for c in copies)
        action = legal[pick.randrange(len(legal))]
        outcomes = [c.step(action) for c in copies]
        assert outcomes[0] == outcomes[1] == outcomes[2]
        for viewer in game.seats_in_play():
            assert np.array_equal(game.observe(viewer), restored.observe(viewer))
    assert twin.is_over() and restored.is_over()
