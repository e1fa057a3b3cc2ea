"""The rang_v0 AEC env: PettingZoo API, options and errors, observations, rewards, snapshots."""

from __future__ import annotations

import json
import pickle
import random

import numpy as np
import pytest
from fuzz_script import fuzz
from pettingzoo.test import api_test, seed_test

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.base import IllegalActionError
from cardenvs.rang.engine import DECK_54, DECK_108, arrange_deck

record_random_play = fuzz.record_random_play


def run_random(env, seed=0, policy_seed=0, options=None, max_steps=100_000, between=None):
    """Play with random legal actions; returns the trajectory and the sum of rewards seen per agent."""
    env.reset(seed=seed, options=options)
    rng = random.Random(policy_seed)
    trajectory, totals = [], {a: 0.0 for a in env.possible_agents}
    for step, agent in enumerate(env.agent_iter()):
        obs, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        if term or trunc:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            action = int(legal[rng.randrange(len(legal))])
        trajectory.append((agent, action, reward, term, trunc, obs["observation"].tobytes()))
        if between:
            between()
        env.step(action)
        assert step < max_steps
    return trajectory, totals


@pytest.mark.parametrize("num_players", [2, 4, 7])
@pytest.mark.parametrize("episode", ["match", "deal"])
def test_pettingzoo_api(num_players, episode):
    api_test(rang_v0.env(num_players=num_players, episode=episode), num_cycles=200)


@pytest.mark.parametrize("num_players", [2, 4, 7])
@pytest.mark.parametrize("episode", ["match", "deal"])
def test_pettingzoo_seed(num_players, episode):
    seed_test(lambda: rang_v0.env(num_players=num_players, episode=episode), num_cycles=200)


def test_metadata_and_spaces():
    env = rang_v0.env(num_players=7)
    assert env.metadata["name"] == "rang_v0" and env.metadata["is_parallelizable"] is False
    assert env.action_space("player_0").n == 28
    assert env.observation_space("player_3")["observation"].shape == (62 + 35,)
    assert sum(size for _, size in rang_v0.observation_parts(7)) == 97
    assert sum(size for _, size in rang_v0.OBSERVATION_PARTS) == 82


@pytest.mark.parametrize(
    "kwargs",
    [{"num_players": 1}, {"num_players": 11}, {"num_players": True}, {"num_players": 4.0}, {"episode": "game"},
     {"max_turns_per_deal": 0}, {"render_mode": "rgb"}, {"illegal_action": "ignore"}, {"eliminated": "drop"}],
)  # fmt: skip
def test_bad_constructor_arguments(kwargs):
    with pytest.raises(ValueError):
        rang_v0.env(**kwargs)


@pytest.mark.parametrize(
    "options, message",
    [
        ({"dealer": 4}, "dealer"),
        ({"dealer": True}, "dealer"),
        ({"colour": 1}, "unknown"),
        ({"deck": ["2C"] * 54}, "deck"),
        ({"deck": list(DECK_54[:-1]) + ["XX"]}, "unknown card code"),
        ({"deck": list(DECK_54[:50])}, "50 cards"),
        ({"deck": list(DECK_108)}, "needs 54"),
        ({"deck": "2C 3C"}, "list"),
        ({"decks": [list(DECK_54), list(DECK_108[:-1]) + ["2C"]]}, r"decks\[1\]"),  # a 108-card deck, wrong cards
        ({"decks": "x"}, "list"),
        ({"deck": list(DECK_54), "decks": [list(DECK_54)]}, "not both"),
    ],
)
def test_bad_options_leave_env_unchanged(options, message):
    env = rang_v0.env()
    env.reset(seed=3)
    env.step(env.unwrapped.legal_actions()[0])
    before = json.dumps(env.unwrapped.snapshot())
    with pytest.raises(ValueError, match=message):
        env.reset(seed=5, options=options)
    assert json.dumps(env.unwrapped.snapshot()) == before


@pytest.mark.parametrize("num_players", [2, 4, 5, 7])
def test_one_decks_list_serves_any_player_count(num_players):
    """Issue 19 item 10: each deal takes the next unused deck of its size; a 108-card deck in the list of a
    2-4 player match is not an error (it waits, unused)."""
    small, big = list(DECK_54), list(DECK_108)
    env = rang_v0.env(num_players=num_players)
    env.reset(seed=1, options={"decks": [big, small]})
    game = env.unwrapped.game
    assert game.deck_size == (108 if num_players >= 5 else 54)
    dealt = small if num_players <= 4 else big
    assert game.pile[0] == dealt[5 * num_players]  # the start card of the deck of the right size
    assert [len(d) for d in game.given_decks] == [54 if num_players >= 5 else 108]


def test_illegal_actions_raise_and_change_nothing():
    env = rang_v0.env()
    env.reset(seed=1)
    before = json.dumps(env.unwrapped.snapshot())
    legal = env.unwrapped.legal_actions()
    illegal = [a for a in range(28) if a not in legal]
    for bad in [illegal[0], -1, 28, "3", 2.0, None, True]:
        with pytest.raises(IllegalActionError, match="legal"):
            env.step(bad)
        assert json.dumps(env.unwrapped.snapshot()) == before


def test_terminate_illegal_wrapper():
    env = rang_v0.env(illegal_action="terminate")
    env.reset(seed=1)
    legal = env.unwrapped.legal_actions()
    bad = next(a for a in range(28) if a not in legal)
    agent = env.agent_selection
    env.step(bad)
    assert env.terminations[agent] and env.rewards[agent] == -1.0


def test_given_deck_through_env_and_dealer_option():
    deck = arrange_deck({3: ["JK", "5C", "9D", "KS", "7H"], 0: ["QH", "3H", "4H", "5H", "6H"],
                         1: ["2D", "3D", "4D", "5D", "6D"], 2: ["2S", "3S", "4S", "5S", "6S"]}, "2C",
                        dealer=2, num_players=4)  # fmt: skip
    env = rang_v0.env()
    env.reset(options={"deck": deck, "dealer": 2})
    assert env.agent_selection == "player_3"
    obs = env.observe("player_3")
    assert np.flatnonzero(obs["action_mask"]).tolist() == [13]
    env.step(13)
    assert env.agent_selection == "player_3"  # the free card after the Joker
    parts = rang_v0.decode_observation(env.observe("player_3")["observation"])
    assert parts["phase"].tolist() == [0, 1, 0] and parts["top"][13] == 1
    assert np.flatnonzero(env.observe("player_3")["action_mask"]).tolist() == [3, 5, 7, 11]
    env.step(11)
    assert env.agent_selection == "player_0"


def test_observation_parts_content():
    deck = arrange_deck({1: ["2C", "3C", "4C", "5C", "6C"], 0: ["9H", "TH", "JH", "QH", "KH"]}, "AD", ["8S"])
    env = rang_v0.env(num_players=2)
    env.reset(options={"deck": deck})
    env.step(0)  # player_1 plays 2C; player_0 cannot play, draws 8S and must discard
    assert env.agent_selection == "player_0"
    obs = env.observe("player_0")
    parts = rang_v0.decode_observation(obs["observation"])
    assert obs["action_mask"][:14].sum() == 0 and obs["action_mask"][14:].sum() == 6
    assert parts["phase"].tolist() == [0, 0, 1]
    assert parts["hand"][6] == 1 / 8 and parts["hand"][11] == 1 / 8 and parts["hand"].sum() == 6 / 8
    assert parts["top"].tolist() == [1] + [0] * 13
    assert parts["play_pile"][12] == 1 / 8 and parts["play_pile"][0] == 1 / 8
    assert parts["hand_sizes"].tolist() == pytest.approx([6 / 54, 4 / 54])
    assert parts["dealer"].tolist() == [1, 0] and parts["went_out"].sum() == 0
    assert parts["in_game"].tolist() == [1, 1] and parts["two_decks"][0] == 0
    assert parts["stock_size"][0] == pytest.approx((54 - 12) / 54)
    env.step(14 + 10)  # discard QH
    parts = rang_v0.decode_observation(env.observe("player_0")["observation"])
    assert parts["own_discards"][10] == 1 / 8 and parts["discard_size"][0] == pytest.approx(1 / 54)
    other = rang_v0.decode_observation(env.observe("player_1")["observation"])
    assert other["own_discards"].sum() == 0 and other["dealer"].tolist() == [0, 1]
    assert "player_0: 5 cards" in env.unwrapped.observation_text("player_1")
    assert env.observe("player_1")["action_mask"].sum() > 0


def test_observation_in_bounds_and_state():
    for n in (2, 5, 10):
        env = rang_v0.env(num_players=n)
        env.reset(seed=n)
        for _ in env.agent_iter(400):
            obs, _, term, trunc, _ = env.last()
            vec = obs["observation"]
            assert vec.dtype == np.float32 and vec.min() >= 0 and vec.max() <= 1
            state = env.unwrapped.state()
            assert state.shape == env.unwrapped.state_space.shape and state.min() >= 0 and state.max() <= 1
            legal = np.flatnonzero(obs["action_mask"])
            env.step(None if term or trunc else int(legal[0]))


def _swap_hidden(snap, viewer):
    """Exchange cards the viewer cannot see: another hand with the stock, and shuffle the stock."""
    game = snap["game"]
    n = game["num_players"]
    others = [(viewer + i) % n for i in range(1, n) if game["hands"][(viewer + i) % n]]
    if not others:
        return None
    hand, stock = game["hands"][others[0]], game["stock_top_first"]
    k = min(len(hand), len(stock))
    hand[:k], stock[:k] = stock[:k], hand[:k]
    random.Random(0).shuffle(stock)
    return snap


@pytest.mark.parametrize("num_players", [2, 4, 7])
def test_no_leak_of_hidden_cards(num_players):
    env = rang_v0.env(num_players=num_players)
    twin = rang_v0.env(num_players=num_players)
    env.reset(seed=11)
    rng = random.Random(1)
    checked = 0
    for agent in env.agent_iter(300):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        viewer = env.possible_agents.index(agent)
        snap = env.unwrapped.snapshot()
        changed = _swap_hidden(json.loads(json.dumps(snap)), viewer)
        if len(snap["game"]["stock_top_first"]) >= 3 and changed is not None:
            twin.reset()
            twin.unwrapped.restore(changed)
            assert twin.unwrapped.snapshot()["game"]["hands"] != snap["game"]["hands"]
            np.testing.assert_array_equal(twin.observe(agent)["observation"], obs["observation"])
            np.testing.assert_array_equal(twin.observe(agent)["action_mask"], obs["action_mask"])
            assert twin.unwrapped.observation_text(agent) == env.unwrapped.observation_text(agent)
            checked += 1
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
    assert checked > 50


@pytest.mark.parametrize("episode", ["match", "deal"])
def test_snapshot_round_trip_and_continuation(episode):
    env = rang_v0.env(num_players=4, episode=episode)
    env.reset(seed=7)
    rng = random.Random(0)
    for _ in range(60):
        if env.terminations[env.agent_selection] or env.truncations[env.agent_selection]:
            break
        legal = env.unwrapped.legal_actions()
        env.step(legal[rng.randrange(len(legal))])
    text = json.dumps(env.unwrapped.snapshot())
    twin = rang_v0.env(num_players=4, episode=episode)
    twin.reset(seed=99)
    twin.unwrapped.restore(text)
    assert json.dumps(twin.unwrapped.snapshot()) == text
    a = _continue(env)
    b = _continue(twin)
    assert a == b


def _continue(env, policy_seed=3):
    """Random legal play to the end, from wherever the env is: its trace (the fuzzer's recorder)."""
    return record_random_play(env, policy_seed)[1]


def test_pickle_round_trip():
    env = rang_v0.env(num_players=3)
    env.reset(seed=4)
    for _ in range(10):
        env.step(env.unwrapped.legal_actions()[0])
    twin = pickle.loads(pickle.dumps(env))
    assert _continue(env) == _continue(twin)


def test_determinism_with_global_rng_noise():
    def noise():
        random.random()
        np.random.random()

    a, _ = run_random(rang_v0.env(num_players=5), seed=21)
    b, _ = run_random(rang_v0.env(num_players=5), seed=21, between=noise)
    c, _ = run_random(rang_v0.env(num_players=5), seed=22)
    assert a == b and a != c


def test_reset_without_seed_continues_rng():
    env = rang_v0.env()
    env.reset(seed=1)
    first = env.unwrapped.snapshot()["game"]["hands"]
    env.reset()
    assert env.unwrapped.snapshot()["game"]["hands"] != first


@pytest.mark.parametrize("num_players", [2, 3, 4, 6, 9])
def test_match_rewards_and_single_winner(num_players):
    for seed in range(3):
        env = rang_v0.env(num_players=num_players)
        _, totals = run_random(env, seed=seed, policy_seed=seed)
        winners = [a for a, r in totals.items() if r == 1.0]
        losers = [a for a, r in totals.items() if r == pytest.approx(-1 / (num_players - 1))]
        assert len(winners) == 1 and len(losers) == num_players - 1
        assert env.agents == []


@pytest.mark.parametrize("num_players", [2, 4, 7])
def test_deal_rewards_are_minus_points(num_players):
    env = rang_v0.env(num_players=num_players, episode="deal")
    _, totals = run_random(env, seed=5)
    game = env.unwrapped.game
    assert game.deal_over and not game.truncated
    assert [totals[a] for a in env.possible_agents] == pytest.approx([-p / 100 for p in game.last_points])
    assert sum(1 for p in game.last_points if p == 0) >= 1 and game.last_points[game.went_out] == 0


def test_eliminated_player_leaves_with_its_reward():
    env = rang_v0.env(num_players=3)
    env.reset(seed=2)
    rng = random.Random(2)
    seen_leaving = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term:
            seen_leaving.append((agent, reward, len(env.agents)))
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
    assert [r for _, r, _ in seen_leaving].count(1.0) == 1
    assert sorted(r for _, r, _ in seen_leaving) == pytest.approx([-0.5, -0.5, 1.0])
    assert seen_leaving[-1][1] == 1.0  # the winner leaves last


def test_truncation_by_turn_limit():
    env = rang_v0.env(num_players=4, max_turns_per_deal=3)
    _, totals = run_random(env, seed=0)
    assert env.unwrapped.game.truncated and all(v == 0 for v in totals.values())


def test_render_modes(capsys):
    env = rang_v0.env(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert "Rang deal 1" in text and "top:" in text and any(s in text for s in "♣♦♥♠")
    human = rang_v0.env(render_mode="human")
    human.reset(seed=0)
    human.render()
    assert "player_0" in capsys.readouterr().out
    assert rang_v0.raw_env().render() is None  # no render_mode


def test_observation_text():
    env = rang_v0.env()
    env.reset(seed=0)
    text = env.unwrapped.observation_text(env.agent_selection)
    assert "hand" in text and "your turn" in text


def test_restore_rejects_other_player_count_or_episode():
    env = rang_v0.env(num_players=3)
    env.reset(seed=0)
    snap = env.unwrapped.snapshot()
    with pytest.raises(ValueError, match="players"):
        rang_v0.env(num_players=4).unwrapped.restore(snap)
    with pytest.raises(ValueError, match="episode"):
        rang_v0.env(num_players=3, episode="deal").unwrapped.restore(snap)


# ------------------------------------------------------------------ eliminated="stay"
@pytest.mark.parametrize("num_players", [2, 3, 5])
def test_stay_mode_passes_the_pettingzoo_api(num_players):
    api_test(rang_v0.env(num_players=num_players, eliminated="stay"), num_cycles=1000)


@pytest.mark.parametrize("num_players", [3, 4, 6])
def test_stay_mode_plays_the_same_match_with_a_fixed_agent_set(num_players):
    """Same seed, same choices: the same decisions and returns as "leave", but every seat stays in
    ``agents`` (never selected once out, all-zero mask, no reward) until all end together."""
    leave, leave_totals = run_random(rang_v0.env(num_players=num_players), seed=num_players)
    env = rang_v0.env(num_players=num_players, eliminated="stay")
    env.reset(seed=num_players)
    rng = random.Random(0)
    decisions, out_seen = [], set()
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        assert env.agents == env.possible_agents and not any(env.rewards.values())
        game = env.unwrapped.game
        for other in env.possible_agents:
            if not game.alive[int(other[7:])]:
                out_seen.add(other)
                assert other != agent and not env.observe(other)["action_mask"].any()
        legal = np.flatnonzero(obs["action_mask"])
        action = int(legal[rng.randrange(len(legal))])
        decisions.append((agent, action, obs["observation"].tobytes()))
        env.step(action)
    assert decisions == [(a, act, o) for a, act, _, term, trunc, o in leave if not (term or trunc)]
    assert out_seen  # seats that had left the match stayed in agents while the others played on
    assert env.agents == []
    assert leave_totals == pytest.approx(_stay_returns(num_players, seed=num_players))


def _stay_returns(num_players, seed, **kwargs):
    _, totals = run_random(rang_v0.env(num_players=num_players, eliminated="stay", **kwargs), seed=seed)
    return totals


def test_stay_mode_ends_every_agent_at_once_and_truncation_keeps_the_losses():
    env = rang_v0.env(num_players=4, eliminated="stay")
    env.reset(seed=1)
    rng = random.Random(1)
    while not any(env.terminations.values()):
        legal = env.unwrapped.legal_actions()
        env.step(legal[rng.randrange(len(legal))])
    assert all(env.terminations.values()) and len(env.agents) == 4
    assert sorted(env._cumulative_rewards.values()) == pytest.approx([-1 / 3] * 3 + [1.0])
    # a deal cut short after someone left: the players still in are truncated (no reward), those out get -1/(N-1)
    for seed in range(40):
        env = rang_v0.raw_env(num_players=4, eliminated="stay", max_turns_per_deal=60)
        _, totals = run_random(env, seed=seed)
        game = env.game
        if game.truncated and not all(game.alive):
            break
    else:
        pytest.fail("no truncated match with an elimination in 40 seeds")
    assert [totals[a] for a in env.possible_agents] == pytest.approx(
        [0.0 if alive else -1 / 3 for alive in game.alive])


def test_stay_mode_snapshot_after_an_elimination_restores():
    env = rang_v0.env(num_players=4, eliminated="stay")
    env.reset(seed=3)
    rng = random.Random(3)
    while all(env.unwrapped.game.alive):
        legal = env.unwrapped.legal_actions()
        env.step(legal[rng.randrange(len(legal))])
    text = json.dumps(env.unwrapped.snapshot())
    twin = rang_v0.env(num_players=4, eliminated="stay")
    twin.reset(seed=0)
    twin.unwrapped.restore(text)
    assert _continue(env) == _continue(twin)
    with pytest.raises(ValueError, match="not the players still in the game"):
        rang_v0.env(num_players=4).unwrapped.restore(text)


@pytest.mark.parametrize("make", [lambda: rang_v0.env(num_players=3), ring_rang_v0.env], ids=["rang", "ring_rang"])
def test_table_text_observer_by_seat_or_agent_name(make):
    env = make()
    env.reset(seed=5)
    raw = env.unwrapped
    full = raw.table_text()
    for seat in range(raw.num_players):
        by_name = raw.table_text(f"player_{seat}")
        assert by_name == raw.table_text(seat) != full
        assert by_name.count("hidden") == raw.num_players - 1  # the observer's own hand shows
    for bad in ("player_9", 9, -1, True, ["player_0"]):
        with pytest.raises(ValueError, match="observer must be a seat"):
            raw.table_text(bad)
