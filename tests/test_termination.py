"""Every game ends: adversarial (stalling) agents end or truncate within the bounds of docs/robustness.md.

Rang: a deal can cycle forever in principle (every player discards whatever card could be
played, so nobody ever has to play); ``max_turns_per_deal`` then truncates it cleanly.
Bounds checked: agent decisions per deal <= 5 * (max_turns_per_deal + 1); every completed
deal gives >= 2 points to every other player still in, so a match has <= 100 * N deals.
RING RANG: <= 1 + 52 + 4 knocks + 4 declarations = 61 decisions a round, >= 1 point a
round, so a game has <= 39 rounds (<= 2379 decisions).
"""

from __future__ import annotations

import random
import types

import numpy as np
import pytest
from fuzz_script import fuzz

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.rang.engine import RangGame
from cardenvs.ring_rang.engine import ACTION_KNOCK, NUM_TRICKS, TARGET_SCORE, RingRangGame

RANG_DECISIONS_PER_TURN = 5  # a turn, or up to 4 Jokers played in a row and the free card after them
RING_RANG_DECISIONS_PER_ROUND = 1 + 52 + 4 + 4  # trump, cards, knocks (A K Q J), declarations
RING_RANG_MAX_ROUNDS = 2 * (TARGET_SCORE - 1) + 1  # each round >= 1 point; 19:19 then one more


def _play_rang_match(num_players: int, seed: int, policies: list, max_turns: int) -> dict:
    """One Rang match on the engine with the bounds checked at every deal; returns a summary."""
    game = RangGame.new(num_players, np.random.default_rng(seed), max_turns_per_deal=max_turns)
    holder = types.SimpleNamespace(game=game)  # the policies read ``raw.game``
    rng = random.Random(seed)
    deal, decisions, total = game.deal_number, 0, 0
    while not game.match_over:
        alive_before = game.alive[:]
        end = game.apply(policies[game.current](holder, game.legal_actions(), rng))
        decisions += 1
        total += 1
        assert decisions <= RANG_DECISIONS_PER_TURN * (max_turns + 1)
        if end is not None and not end.truncated:
            for seat in range(num_players):  # every other player still in scores >= 2
                if alive_before[seat] and seat != end.went_out:
                    assert end.points[seat] >= 2, (seed, seat, end)
        if game.deal_number != deal:
            deal, decisions = game.deal_number, 0
    assert game.deal_number <= 100 * num_players
    if game.truncated:
        assert game.turns == max_turns + 1
    return {"truncated": game.truncated, "deals": game.deal_number, "decisions": total}


@pytest.mark.parametrize("num_players", range(2, 11))
def test_rang_stalling_agents_cycle_and_are_truncated(num_players):
    """All players stall: the deal cycles (nobody ever plays) and the turn limit truncates it."""
    policies = [fuzz.stalling_policy] * num_players
    results = [_play_rang_match(num_players, seed, policies, max_turns=300) for seed in range(12)]
    assert sum(r["truncated"] for r in results) >= 6  # stalling really does cycle


@pytest.mark.parametrize("num_players", range(2, 11))
def test_rang_mixed_stalling_and_random_matches_end_within_the_bounds(num_players):
    rng = random.Random(num_players)
    for seed in range(15):
        policies = [rng.choice([fuzz.stalling_policy, fuzz.random_policy]) for _ in range(num_players)]
        _play_rang_match(num_players, seed, policies, max_turns=2000)


@pytest.mark.slow
def test_rang_thousands_of_adversarial_matches_end_within_the_bounds():
    rng = random.Random(0)
    truncated = 0
    for seed in range(3000):
        n = 2 + seed % 9
        policies = [rng.choice([fuzz.stalling_policy, fuzz.random_policy]) for _ in range(n)]
        truncated += _play_rang_match(n, seed, policies, max_turns=2000)["truncated"]
    assert truncated < 3000


@pytest.mark.parametrize("wrapped", [True, False])
@pytest.mark.parametrize("episode", ["match", "deal"])
@pytest.mark.parametrize("num_players", [2, 5, 10])
def test_rang_truncation_is_clean(wrapped, episode, num_players):
    """At the turn limit every live agent is truncated at once, rewards are as documented,
    and only dead steps remain (a non-None action for them is a ValueError)."""
    module = rang_v0
    env = (module.env if wrapped else module.raw_env)(num_players=num_players, episode=episode, max_turns_per_deal=150)
    env.reset(seed=num_players)
    rng = random.Random(1)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    truncated_at = None
    steps = 0
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        if term or trunc:
            if trunc and truncated_at is None:
                truncated_at = steps
                live = [a for a in env.agents if not env.terminations[a]]
                assert live and all(env.truncations[a] for a in live)
                assert not env.observe(agent)["action_mask"].any()
                with pytest.raises(ValueError):
                    env.step(3)
            env.step(None)
            continue
        assert truncated_at is None, "a live agent acted after the truncation"
        env.step(fuzz.stalling_policy(env.unwrapped, np.flatnonzero(obs["action_mask"]).tolist(), rng))
        steps += 1
    game = env.unwrapped.game
    assert game.truncated and truncated_at is not None and env.agents == []
    for seat, name in enumerate(env.possible_agents):
        eliminated_before = episode == "match" and not game.alive[seat]
        assert totals[name] == pytest.approx(-1 / (num_players - 1) if eliminated_before else 0.0)


def _play_ring_rang_game(seed: int, policy, **settings) -> tuple[RingRangGame, int]:
    """One game on the engine with the bounds checked every round; returns it and its number of knocks."""
    game = RingRangGame(np.random.default_rng(seed), **settings)
    holder = types.SimpleNamespace(game=game)
    rng = random.Random(seed)
    round_number, decisions, total, knocks = 0, 0, 0, 0
    scores = game.scores[:]
    while not game.over:
        action = policy(holder, game.legal_actions(), rng)
        knocks += action == ACTION_KNOCK
        game.apply(action)
        decisions += 1
        total += 1
        assert decisions <= RING_RANG_DECISIONS_PER_ROUND
        if game.round_number != round_number or game.over:
            gained = sum(game.scores) - sum(scores)
            assert gained >= 1  # every round gives a point
            assert game.rounds[-1]["tricks_played"] == NUM_TRICKS or settings.get("stop_when_decided")
            scores = game.scores[:]
            round_number, decisions = game.round_number, 0
    assert len(game.rounds) <= RING_RANG_MAX_ROUNDS
    assert total <= RING_RANG_MAX_ROUNDS * RING_RANG_DECISIONS_PER_ROUND
    assert max(game.scores) >= TARGET_SCORE or settings.get("episode") == "round"
    return game, knocks


@pytest.mark.parametrize("variants", [False, True])
@pytest.mark.parametrize("stop_when_decided", [False, True])
def test_ring_rang_knocking_agents_end_within_the_bounds(variants, stop_when_decided):
    knocks = 0
    for seed in range(25):
        _, knocked = _play_ring_rang_game(
            seed,
            fuzz.stalling_policy,
            signals=variants,
            declarations=variants,
            stop_when_decided=stop_when_decided,
        )
        knocks += knocked
    assert knocks > 25  # the agents did knock


@pytest.mark.slow
def test_ring_rang_thousands_of_games_end_within_the_bounds():
    for seed in range(2000):
        policy = fuzz.stalling_policy if seed % 2 else fuzz.random_policy
        _play_ring_rang_game(seed, policy, signals=seed % 3 == 0, declarations=seed % 3 == 0)


def test_ring_rang_env_game_with_knocking_agents_ends_and_leaves_only_dead_steps():
    env = ring_rang_v0.env(signals=True, declarations=True)
    env.reset(seed=3)
    rng = random.Random(3)
    steps = 0
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            assert all(env.terminations[a] for a in env.agents)  # the game ends for all at once
            env.step(None)
            continue
        env.step(fuzz.stalling_policy(env.unwrapped, np.flatnonzero(obs["action_mask"]).tolist(), rng))
        steps += 1
    assert steps <= RING_RANG_MAX_ROUNDS * RING_RANG_DECISIONS_PER_ROUND
    assert env.agents == [] and max(env.unwrapped.game.scores) >= TARGET_SCORE
