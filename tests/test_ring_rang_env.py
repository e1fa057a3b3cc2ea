"""The RING RANG AEC adapter: PettingZoo API, observations, hidden information, bad input, snapshots."""

from __future__ import annotations

import functools
import json
import pickle
import random

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.base import IllegalActionError
from cardenvs.cards import CODES
from cardenvs.ring_rang.engine import bits_to_cards
from cardenvs.ring_rang_v0 import OBSERVATION_PARTS, OBSERVATION_SIZE, OFFSETS, decode_observation


def random_step(env, rnd: random.Random) -> None:
    obs, _, term, trunc, _ = env.last()
    if term or trunc:
        env.step(None)
        return
    legal = np.flatnonzero(obs["action_mask"])
    env.step(int(legal[rnd.randrange(len(legal))]))


def play_steps(env, steps: int, rnd: random.Random) -> None:
    for _ in range(steps):
        if not env.agents:
            return
        random_step(env, rnd)


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"episode": "round"}, {"signals": True, "declarations": True, "episode": "round"}],
)
def test_pettingzoo_api(kwargs):
    api_test(ring_rang_v0.env(**kwargs), num_cycles=300)


@pytest.mark.parametrize("episode", ["game", "round"])
def test_pettingzoo_seed(episode):
    seed_test(functools.partial(ring_rang_v0.env, episode=episode), num_cycles=300)


def test_metadata_and_spaces():
    env = ring_rang_v0.env()
    assert env.metadata["name"] == "ring_rang_v0"
    assert env.metadata["render_modes"] == ["ansi", "human", "rgb_array"]
    assert env.metadata["is_parallelizable"] is False
    assert env.action_space("player_0").n == 57
    assert env.observation_space("player_0")["observation"].shape == (OBSERVATION_SIZE,)
    assert ring_rang_v0.env(signals=True).action_space("player_0").n == 84
    assert sum(size for _, size in OBSERVATION_PARTS) == OBSERVATION_SIZE


def test_trump_phase_chooser_sees_only_five_cards():
    env = ring_rang_v0.env()
    env.reset(seed=4, options={"chooser": 1})
    assert env.agent_selection == "player_1"
    obs = env.observe("player_1")
    parts = decode_observation(obs["observation"])
    assert parts["hand"].sum() == 5
    assert list(np.flatnonzero(obs["action_mask"])) == [52, 53, 54, 55]
    assert parts["phase"].tolist() == [1, 0, 0]
    assert parts["chooser"].tolist() == [1, 0, 0, 0] and parts["dealer"].tolist() == [0, 0, 0, 1]
    for other in ("player_0", "player_2", "player_3"):
        view = env.observe(other)
        assert view["observation"][:52].sum() == 0 and view["action_mask"].sum() == 0
    right = decode_observation(env.observe("player_0")["observation"])
    assert right["chooser"].tolist() == [0, 1, 0, 0]  # the chooser is player_0's left
    partner = decode_observation(env.observe("player_3")["observation"])
    assert partner["chooser"].tolist() == [0, 0, 1, 0] and partner["dealer"].tolist() == [0, 1, 0, 0]


def test_chooser_view_in_trump_phase_ignores_the_rest_of_the_deck():
    rng = np.random.default_rng(9)
    deck = rng.permutation(52).tolist()
    other = deck[:5] + rng.permutation(deck[5:]).tolist()
    views = []
    for d in (deck, other):
        env = ring_rang_v0.env()
        env.reset(seed=1, options={"deck": d, "chooser": 0})
        views.append(env.observe("player_0")["observation"])
    assert np.array_equal(*views)


def test_observation_contents_after_some_play():
    env = ring_rang_v0.env(episode="round")
    env.reset(seed=11, options={"chooser": 0})
    env.step(54)  # hearts
    rnd = random.Random(0)
    play_steps(env, 6, rnd)
    raw = env.unwrapped
    game = raw.game
    for seat in range(4):
        parts = decode_observation(env.observe(f"player_{seat}")["observation"])
        assert parts["trump"].tolist() == [0, 0, 1, 0]
        assert sorted(np.flatnonzero(parts["hand"])) == bits_to_cards(game.hands[seat])
        own = seat % 2
        assert parts["lifted"][0, game.lifted[own]] == 1 and parts["lifted"][1, game.lifted[1 - own]] == 1
        assert parts["pile"][min(game.pile, 12)] == 1
        assert parts["trick_number"][game.tricks_played] == 1
        for i, card in enumerate(game.trick_cards):
            rel = (game.leader + i - seat) % 4
            assert parts["current_trick"][rel, card] == 1 and parts["played"][rel, card] == 1
        assert parts["played"].sum() == sum(len(t[1]) for t in game.history) + len(game.trick_cards)
        for name, size in OBSERVATION_PARTS:
            assert OFFSETS[name] + size <= OBSERVATION_SIZE


def test_incremental_observation_equals_rebuild():
    rnd = random.Random(3)
    for kwargs in ({}, {"signals": True, "declarations": True}, {"stop_when_decided": True}):
        env = ring_rang_v0.env(**kwargs)
        raw = env.unwrapped
        env.reset(seed=2)
        steps = 0
        while env.agents and steps < 700:
            for seat in range(4):
                # the env's view is kept up to date step by step; the game's is built from scratch
                assert np.array_equal(env.observe(f"player_{seat}")["observation"], raw.game.observe(seat))
            random_step(env, rnd)
            steps += 1


def test_observations_are_in_bounds_and_float32():
    env = ring_rang_v0.env()
    env.reset(seed=0)
    rnd = random.Random(0)
    for _ in range(200):
        obs = env.observe(env.agent_selection)
        assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
        assert obs["observation"].min() >= 0 and obs["observation"].max() <= 1
        random_step(env, rnd)


def test_no_leak_swapping_other_hands_keeps_the_view():
    rnd = random.Random(5)
    for seed in range(12):
        env = ring_rang_v0.env()
        env.reset(seed=seed)
        play_steps(env, rnd.randrange(1, 40), rnd)
        raw = env.unwrapped
        if raw.game.phase != 1:
            continue
        for viewer in range(4):
            x, y = [s for s in range(4) if s != viewer][:2] if rnd.random() < 0.5 else [
                s for s in range(4) if s != viewer
            ][1:]
            hx, hy = bits_to_cards(raw.game.hands[x]), bits_to_cards(raw.game.hands[y])
            if not hx or not hy:
                continue
            a, b = rnd.choice(hx), rnd.choice(hy)
            snap = env.unwrapped.snapshot()
            hands = snap["game"]["hands"]
            hands[x] = hands[x] ^ (1 << a) ^ (1 << b)
            hands[y] = hands[y] ^ (1 << b) ^ (1 << a)
            other = ring_rang_v0.env()
            other.reset()  # the order-enforcing wrapper wants a reset before observe
            other.unwrapped.restore(json.loads(json.dumps(snap)))
            agent = f"player_{viewer}"
            assert np.array_equal(env.observe(agent)["observation"], other.observe(agent)["observation"])
            assert other.unwrapped.observation_text(agent) == raw.observation_text(agent)
            # ... while the swapped players' own views do change.
            mine, theirs = env.observe(f"player_{x}"), other.observe(f"player_{x}")
            assert not np.array_equal(mine["observation"], theirs["observation"])


def test_knock_through_env_keeps_the_turn_and_is_public():
    env = ring_rang_v0.env()
    rnd = random.Random(1)
    for seed in range(40):
        env.reset(seed=seed)
        while env.agents:
            obs = env.observe(env.agent_selection)
            if obs["action_mask"][56]:
                agent = env.agent_selection
                env.step(56)
                assert env.agent_selection == agent
                game = env.unwrapped.game
                honour = game.next_honour - 1
                for viewer in range(4):
                    parts = decode_observation(env.observe(f"player_{viewer}")["observation"])
                    rel = (int(agent[-1]) - viewer) % 4
                    assert parts["knocks"][honour, rel] == 1
                return
            random_step(env, rnd)
    pytest.fail("no knock seen")


def test_state_holds_all_hands():
    env = ring_rang_v0.env()
    env.reset(seed=1, options={"chooser": 0})
    env.step(52)
    state = env.unwrapped.state()
    assert state.shape == (4 * 52 + OBSERVATION_SIZE,)
    assert state[: 4 * 52].sum() == 52
    assert env.unwrapped.state_space.contains(state)  # the space centralised critics are built on (skrl, MAPPO)
    rnd = random.Random(1)
    while env.agents:
        random_step(env, rnd)
        assert env.unwrapped.state_space.contains(env.unwrapped.state())


def test_render_and_text():
    env = ring_rang_v0.env(render_mode="ansi")
    env.reset(seed=1, options={"chooser": 0})
    env.step(54)
    text = env.render()
    assert "\u2665" in text and "player_0" in text
    view = env.unwrapped.observation_text("player_1")
    assert "trump: \u2665" in view and "hand:" in view
    human = ring_rang_v0.env(render_mode="human")
    human.reset(seed=1)
    assert human.render() is None


def test_history_property():
    env = ring_rang_v0.env(episode="round")
    env.reset(seed=3)
    rnd = random.Random(3)
    while env.agents:
        random_step(env, rnd)
    history = env.unwrapped.history
    assert len(history) == 13
    assert sum(t["lifted"] for t in history) == 13
    for trick in history:
        assert set(trick) == {"leader", "cards", "winner", "lifted"}
        assert all(code in CODES for code in trick["cards"])


# ------------------------------------------------------------------ bad input
def test_illegal_actions_raise_and_change_nothing():
    env = ring_rang_v0.env()
    env.reset(seed=1, options={"chooser": 0})
    before = env.unwrapped.snapshot()
    for bad in (0, 56, 57, -1, 1.5, "52", None, True, np.array([52])):
        with pytest.raises(IllegalActionError, match="legal"):
            env.step(bad)
        assert env.unwrapped.snapshot() == before
    env.step(np.int64(52))
    hand = bits_to_cards(env.unwrapped.game.hands[0])
    missing = next(c for c in range(52) if c not in hand)
    with pytest.raises(IllegalActionError, match="play"):
        env.step(missing)
    with pytest.raises(IllegalActionError):
        env.step(53)  # trump already chosen


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"deck": ["AS"] * 52}, "deck"),
        ({"deck": list(range(51))}, "51 cards"),
        ({"deck": ["XX"] + list(range(1, 52))}, "unknown card code"),
        ({"decks": "AS"}, "decks"),
        ({"deck": list(range(52)), "decks": [list(range(52))]}, "not both"),
        ({"chooser": 4}, "chooser"),
        ({"chooser": "0"}, "chooser"),
        ({"dealer": 7}, "dealer"),
        ({"dealer": 0, "chooser": 3}, "dealer"),
        ({"seat": 1}, "unknown option"),
    ],
)
def test_bad_options_raise_and_leave_env_unchanged(options, message):
    env = ring_rang_v0.env()
    env.reset(seed=1)
    before = env.unwrapped.snapshot()
    with pytest.raises(ValueError, match=message):
        env.reset(seed=2, options=options)
    assert env.unwrapped.snapshot() == before


def test_dealer_option_sets_chooser():
    env = ring_rang_v0.env()
    env.reset(seed=0, options={"dealer": 3})
    assert env.unwrapped.game.chooser == 0 and env.agent_selection == "player_0"


@pytest.mark.parametrize(
    "kwargs",
    [{"episode": "match"}, {"knocking": 1}, {"signals": "no"}, {"stop_when_decided": None}, {"render_mode": "rgb"},
     {"illegal_action": "ignore"}],
)
def test_bad_constructor_args(kwargs):
    with pytest.raises(ValueError):
        ring_rang_v0.env(**kwargs)


def test_terminate_illegal_wrapper():
    env = ring_rang_v0.env(illegal_action="terminate")
    env.reset(seed=1, options={"chooser": 0})
    env.step(0)  # illegal in the trump phase
    assert all(env.terminations.values())
    assert env.rewards["player_0"] == -1


# ------------------------------------------------------------------ snapshots
def test_snapshot_round_trip_and_continuation():
    rnd = random.Random(8)
    for episode in ("game", "round"):
        env = ring_rang_v0.env(episode=episode, signals=True, declarations=True)
        env.reset(seed=21)
        play_steps(env, 150, rnd)
        snap = env.unwrapped.snapshot()
        text = json.dumps(snap)
        twin = ring_rang_v0.env(episode=episode, signals=True, declarations=True)
        twin.reset()
        twin.unwrapped.restore(text)
        assert twin.unwrapped.snapshot() == snap
        seed = rnd.random()
        a, b = random.Random(seed), random.Random(seed)
        while env.agents:
            assert env.agent_selection == twin.agent_selection
            for agent in env.agents:
                assert np.array_equal(env.observe(agent)["observation"], twin.observe(agent)["observation"])
            assert env._cumulative_rewards == twin._cumulative_rewards
            random_step(env, a)
            random_step(twin, b)
        assert not twin.agents
        # Reset without a seed continues the same RNG stream on both.
        env.reset()
        twin.reset()
        assert env.unwrapped.snapshot() == twin.unwrapped.snapshot()


def test_snapshot_holds_history_and_game_state():
    env = ring_rang_v0.env()
    env.reset(seed=5)
    play_steps(env, 30, random.Random(1))
    game = env.unwrapped.snapshot()["game"]
    for key in ("hands", "trump", "pile", "lifted", "scores", "history", "rounds", "knockers"):
        assert key in game
    assert all({"leader", "cards", "winner", "lifted"} <= set(t) for t in game["history"])


@pytest.mark.parametrize(("module", "other"), [(ring_rang_v0, "rang_v0"), (rang_v0, "ring_rang_v0")])
def test_restore_rejects_garbage(module, other):
    env = module.env()
    env.reset(seed=1)
    with pytest.raises(ValueError):
        env.unwrapped.restore({"env": module.raw_env.metadata["name"], "game": {}})
    with pytest.raises(ValueError):
        env.unwrapped.restore({"env": other})


def test_pickle_mid_game():
    env = ring_rang_v0.env()
    env.reset(seed=2)
    play_steps(env, 77, random.Random(2))
    twin = pickle.loads(pickle.dumps(env))
    a, b = random.Random(4), random.Random(4)
    for _ in range(300):
        if not env.agents:
            break
        assert np.array_equal(env.observe(env.agent_selection)["observation"],
                              twin.observe(twin.agent_selection)["observation"])
        random_step(env, a)
        random_step(twin, b)


def test_determinism_with_extra_global_rng_calls():
    def run(noise: bool) -> list:
        env = ring_rang_v0.env()
        env.reset(seed=123)
        rnd = random.Random(0)
        trace = []
        for _ in range(400):
            if not env.agents:
                break
            if noise:
                random.random()
                np.random.rand()
            obs = env.observe(env.agent_selection)["observation"]
            trace.append((env.agent_selection, obs.tobytes()))
            random_step(env, rnd)
        env.reset()  # unseeded reset continues the env's own stream
        trace.append(env.unwrapped.snapshot()["game"]["deck"])
        return trace

    assert run(False) == run(True)


def test_full_game_rewards_plus_minus_one():
    env = ring_rang_v0.env()
    env.reset(seed=17)
    rnd = random.Random(17)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        agent = env.agent_selection
        _, reward, term, trunc, _ = env.last()
        totals[agent] += reward
        random_step(env, rnd)
    game = env.unwrapped.game
    winners = game.winner_team
    assert max(game.scores) >= 20
    for seat in range(4):
        assert totals[f"player_{seat}"] == (1.0 if seat % 2 == winners else -1.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_suit_symmetries_rename_a_whole_game_consistently(seed):
    """Deal a deck and the same deck with its suits renamed, play the renamed moves: every seat's view and
    legal mask of the renamed game are the renamed view and mask of the first (what augmentation assumes)."""
    from cardenvs.ring_rang.engine import RingRangGame
    from cardenvs.ring_rang.observation import suit_symmetries

    rng = np.random.default_rng(seed)
    symmetries = suit_symmetries()
    assert len(symmetries) == 24 and len({tuple(a) for _, a in symmetries}) == 24
    observation_index, action_map = symmetries[1 + seed * 7]
    deck = [int(c) for c in rng.permutation(52)]
    first = RingRangGame(np.random.default_rng(0), chooser=seed, decks=[deck], episode="round")
    renamed = RingRangGame(np.random.default_rng(0), chooser=seed, decks=[[int(action_map[c]) for c in deck]],
                           episode="round")
    moves = 0
    while not first.is_over():
        assert renamed.current_player() == first.current_player()
        assert np.array_equal(renamed.legal_mask(), first.legal_mask()[np.argsort(action_map)])
        for seat in range(4):
            assert np.array_equal(renamed.observe(seat), first.observe(seat)[observation_index])
        action = int(rng.choice(np.flatnonzero(first.legal_mask())))
        first.step(action)
        renamed.step(int(action_map[action]))
        moves += 1
    assert renamed.is_over() and moves > 40
