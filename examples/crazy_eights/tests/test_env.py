"""The env, its snapshots, what a seat may see, the agents, search and the apps' parts of Crazy Eights."""

from __future__ import annotations

import json
import random
from importlib import import_module
from importlib.metadata import entry_points

import numpy as np
import pytest
from cardenvs_crazy_eights import env as crazy_eights
from cardenvs_crazy_eights.engine import NUM_ACTIONS, CrazyEightsGame, arrange_deck
from cardenvs_crazy_eights.faces import faces
from cardenvs_crazy_eights.observation import decode_observation, observation_parts
from cardenvs_crazy_eights.rules import make_basic, make_strong
from cardenvs_crazy_eights.search import CrazyEightsRules, public_view, sample
from cardenvs_crazy_eights.spec import SPEC
from cardenvs_crazy_eights.text import Text
from cardenvs_crazy_eights.view import table_view
from pettingzoo.test import api_test, seed_test

from cardenvs.agents.base import RandomAgent
from cardenvs.agents.search import ismcts_search, pimc_search
from cardenvs.base import IllegalActionError
from cardenvs.cards import pretty
from cardenvs.games import GameSpec
from cardenvs.play import parse_choice


def random_game(num_players: int, seed: int, moves: int) -> CrazyEightsGame:
    """A deal after up to ``moves`` random moves."""
    rng = np.random.default_rng(seed)
    game = CrazyEightsGame.new(num_players, np.random.default_rng(seed + 1))
    for _ in range(moves):
        if game.is_over():
            break
        actions = game.legal_actions()
        game.step(actions[int(rng.integers(len(actions)))])
    return game


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_pettingzoo_api_and_seed(num_players):
    api_test(crazy_eights.env(num_players=num_players), num_cycles=300)
    seed_test(lambda: crazy_eights.env(num_players=num_players), num_cycles=300)


def test_constructor_and_reset_options_are_checked():
    for bad in ({"num_players": 5}, {"num_players": True}, {"episode": "match"}, {"max_turns": 0}):
        with pytest.raises(ValueError):
            crazy_eights.env(**bad)
    env = crazy_eights.env(num_players=3)
    for options in ({"dealer": 3}, {"deck": ["2C"] * 52}, {"colour": 1}, {"deck": [], "decks": []}):
        with pytest.raises(ValueError):
            env.reset(seed=0, options=options)
    deck = arrange_deck([["2C", "3C", "4C", "5C", "6C"], ["2D", "3D", "4D", "5D", "6D"],
                         ["2H", "3H", "4H", "5H", "6H"]], "KS", ["QS"], dealer=2)
    env.reset(seed=0, options={"deck": deck, "dealer": 2})
    assert env.agent_selection == "player_0" and env.unwrapped.game.top == 50  # KS
    env.reset(seed=0, options={"decks": [deck], "dealer": 2})
    assert env.unwrapped.game.hand_cards(0) == [0, 1, 2, 3, 4]
    with pytest.raises(IllegalActionError):
        env.step(51)


def test_observation_parts_cover_the_vector():
    env = crazy_eights.env(num_players=4)
    env.reset(seed=5)
    obs = env.observe("player_1")["observation"]
    assert len(obs) == sum(size for _, size in observation_parts(4)) == 184
    parts = decode_observation(obs)
    game = env.unwrapped.game
    assert np.flatnonzero(parts["hand"]).tolist() == game.hand_cards(1)
    assert np.argmax(parts["top"]) == game.top and np.argmax(parts["suit"]) == game.suit
    assert np.rint(parts["hand_sizes"] * 52).tolist() == [game.hand_size((1 + i) % 4) for i in range(4)]
    assert env.unwrapped.state().shape == env.unwrapped.state_space.shape


@pytest.mark.parametrize("num_players", [2, 4])
def test_snapshot_round_trip_continues_identically(num_players):
    env = crazy_eights.env(num_players=num_players)
    env.reset(seed=11)
    rng = np.random.default_rng(0)
    for step in range(400):
        if not env.agents:
            break
        if step % 7 == 0:
            snap = json.dumps(env.unwrapped.snapshot())
            other = crazy_eights.env(num_players=num_players)
            other.restore(snap)
            assert json.dumps(other.unwrapped.snapshot()) == snap
            game = env.unwrapped.game
            copy = CrazyEightsGame.from_json(json.loads(json.dumps(game.to_json())), np.random.default_rng(0))
            assert copy.to_json() == game.to_json()
        obs, _, term, trunc, _ = env.last()
        action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        if step % 7 == 0 and env.agents:  # the restored env takes the same action and lands in the same state
            other.step(action)
            assert json.dumps(other.unwrapped.snapshot()) == json.dumps(env.unwrapped.snapshot())


def test_malformed_game_json_is_a_one_line_error():
    data = random_game(3, 1, 10).to_json()
    rng = np.random.default_rng(0)
    for key, value in (("hands", "2C"), ("suit", 7), ("phase", 1), ("current", -1), ("pile", []),
                       ("stock_top_first", ["2C"]), ("drawn", "AS"), ("winner", 0), ("over", 1)):
        with pytest.raises(ValueError):
            CrazyEightsGame.from_json({**data, key: value}, rng)
    with pytest.raises(ValueError, match="missing"):
        CrazyEightsGame.from_json({k: v for k, v in data.items() if k != "turns"}, rng)


@pytest.mark.parametrize("seed", range(20))
def test_no_leak_swapping_unseen_cards_leaves_the_observation(seed):
    """Cards the observer cannot see (other hands, the stock) swapped: the observer's view is the same."""
    game = random_game(3 + seed % 2, seed, seed * 3)
    if game.is_over():
        return
    rng = random.Random(seed)
    for observer in range(game.num_players):
        view = public_view(game, observer) if game.current == observer else None
        world = game.clone()
        hidden = [c for s in range(game.num_players) if s != observer for c in world.hand_cards(s)] + world.stock
        if world.phase == 2 and world.current != observer:
            hidden.remove(world.drawn)  # keep the drawn card in its hand (its phase depends on it)
        shuffled = hidden[:]
        rng.shuffle(shuffled)
        swap = dict(zip(hidden, shuffled, strict=True))
        world.hands = [h if s == observer else sum(1 << swap.get(c, c) for c in world.hand_cards(s))
                       for s, h in enumerate(world.hands)]
        world.stock = [swap[c] for c in world.stock]
        assert np.array_equal(world.observe(observer), game.observe(observer))
        assert table_view(world, observer) == table_view(game, observer)
        if view is not None:
            assert public_view(world, observer).fingerprint() == view.fingerprint()


def test_sampled_worlds_keep_what_the_seat_knows_and_deal_the_rest_uniformly():
    game = random_game(4, 3, 6)
    seat = game.current
    view = public_view(game, seat)
    counts = np.zeros((4, 52))
    rng = random.Random(0)
    for _ in range(400):
        world = sample(view, rng)
        assert world.hands[seat] == game.hands[seat] and world.pile == game.pile
        assert [world.hand_size(s) for s in range(4)] == [game.hand_size(s) for s in range(4)]
        assert len(world.stock) == len(game.stock)
        assert sorted(sum((world.hand_cards(s) for s in range(4)), []) + world.stock + world.pile) == list(range(52))
        for s in range(4):
            for c in world.hand_cards(s):
                counts[s, c] += 1
    other = (seat + 1) % 4
    unseen = list(view.unknown)
    expected = 400 * game.hand_size(other) / len(unseen)
    assert abs(counts[other, unseen].mean() - expected) < 1e-9  # every unseen card alike on average
    assert counts[other, unseen].min() > expected / 4


def test_search_picks_legal_moves_through_cardenvs_search():
    rules = CrazyEightsRules()
    for seed in range(6):
        game = random_game(3, seed, 4 + seed)
        if game.is_over():
            continue
        view = rules.view(game, game.current)
        legal = game.legal_actions()
        for name in rules.rollouts:
            rollout = getattr(rules, f"{name}_rollout")
            action, means = pimc_search(rules, view, legal, random.Random(seed), rollout, 60, 4)
            assert action in legal and set(means) <= set(legal)
        action, visits = ismcts_search(rules, view, legal, random.Random(seed), rules.random_rollout, 60)
        assert action in legal
        world = rules.shuffled_stock(rules.horizon(game.clone()), random.Random(seed))
        assert sorted(world.stock) == sorted(game.stock)


def win_rates(makers, num_players: int, deals: int, seed: int = 0) -> np.ndarray:
    """Share of deals each agent kind won, seats rotated deal by deal (a small harness)."""
    wins = np.zeros(len(makers))
    env = crazy_eights.env(num_players=num_players)
    for deal in range(deals):
        kinds = [(deal + s) % len(makers) for s in range(num_players)]
        agents = [makers[k](seed=seed + 10 * deal + s, num_players=num_players) for s, k in enumerate(kinds)]
        env.reset(seed=seed + deal)
        for name in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else agents[int(name.rsplit("_", 1)[1])].act(obs))
        winner = env.unwrapped.game.winner
        if winner >= 0:
            wins[kinds[winner]] += 1
    return wins / deals


def random_agent(seed: int, num_players: int) -> RandomAgent:
    return RandomAgent(seed)


@pytest.mark.parametrize("maker", [make_basic, make_strong])
def test_rule_agents_beat_random(maker):
    rates = win_rates([maker, random_agent], 2, 600)
    low = rates[0] - 1.96 * np.sqrt(rates[0] * (1 - rates[0]) / 600)
    assert low > 0.5, rates  # the 95% interval is above an even share


def test_text_plays_a_whole_game_through_its_choices():
    env = crazy_eights.env(num_players=3)
    env.reset(seed=4)
    raw = env.unwrapped
    texts = [Text(raw, seat, color=False) for seat in range(3)]
    rng = np.random.default_rng(0)
    for name in env.agent_iter():
        _, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = int(name.rsplit("_", 1)[1])
        text = texts[seat]
        choices = text.choices(env.legal_actions())
        assert text.table() and text.input_help()
        for choice in choices:  # every label's words select its move
            for key in choice.keys:
                assert parse_choice(key, choices) == choice.action
        illegal = [c for c in raw.game.hand_cards(seat) if c not in env.legal_actions()]
        for card in illegal:
            assert text.why_not(crazy_eights.ACTION_NAMES[card].split()[1])
        action = choices[int(rng.integers(len(choices)))].action
        before = [t.facts() for t in texts]
        env.step(action)
        for t, facts in zip(texts, before, strict=True):
            lines = t.events(seat, action, facts)
            assert lines and all(isinstance(line, str) for line in lines)
            if action == crazy_eights.ACTION_NAMES.index("draw") and t.seat != seat:
                assert "draws a card" in lines[0]  # the card drawn is not named to the others
    assert "wins" in texts[0].result() or "WIN" in texts[0].result() or "turn limit" in texts[0].result()


def test_view_hides_other_hands_and_follows_the_base_schema():
    game = random_game(4, 2, 5)
    full, mine = table_view(game), table_view(game, 1)
    json.dumps(full)
    assert set(full) >= {"game", "title", "phase", "result", "seats", "center", "facts"}
    assert full["game"] == SPEC.name and full["center"] == [crazy_eights.ACTION_NAMES[game.top].split()[1]]
    for seat, (a, b) in enumerate(zip(full["seats"], mine["seats"], strict=True)):
        assert a["count"] == b["count"] == game.hand_size(seat)
        assert b["cards"] == (a["cards"] if seat == 1 else None)
        assert set(a) >= {"name", "cards", "count", "to_act", "note"}


def test_faces_of_every_move():
    game = random_game(2, 0, 0)
    for action in range(NUM_ACTIONS):
        codes, face, text = faces(game, game.current, action, crazy_eights.ACTION_NAMES[action])
        assert (codes == [face]) if action < 52 else (codes == [] and face is None and text)


def test_the_entry_point_names_the_spec():
    found = {e.name: e for e in entry_points(group="cardenvs.games")}
    assert found["crazy_eights"].load() is SPEC and isinstance(SPEC, GameSpec)
    assert SPEC.env_module_object() is crazy_eights
    for role in SPEC.parts:
        assert SPEC.part(role) is not None
    for factory in SPEC.agents.values():  # every agent of the game builds
        module, _, attr = factory.partition(":")
        assert getattr(import_module(module), attr)(seed=0, num_players=3).act
    options = SPEC.random_options(np.random.default_rng(0), "deal", 3)
    env = SPEC.make_env(num_players=3)
    env.reset(seed=0, options=options)
    assert env.unwrapped.game.dealer == options["dealer"]


def test_text_render_hides_the_other_hands_from_an_observer():
    env = crazy_eights.env(num_players=3)
    env.reset(seed=9)
    raw = env.unwrapped
    hands = [" ".join(pretty(c) for c in raw.game.hand_cards(s)) for s in range(3)]
    for observer in range(3):
        text = raw.table_text(observer)
        assert all((hand in text) == (seat == observer) for seat, hand in enumerate(hands))
        assert hands[observer] in raw.observation_text(f"player_{observer}")
    assert all(hand in raw.table_text() for hand in hands)


@pytest.mark.parametrize("seed", range(10))
def test_every_sampled_world_looks_the_same_to_the_seat(seed):
    """A world sampled from a seat's information set gives that seat the same observation, mask and view."""
    game = random_game(2 + seed % 3, seed, 2 * seed)
    if game.is_over():
        return
    rules, seat = CrazyEightsRules(), game.current
    view = rules.view(game, seat)
    for i in range(5):
        world = rules.sample(view, random.Random(i))
        assert np.array_equal(world.observe(seat), game.observe(seat))
        assert np.array_equal(world.legal_mask(), game.legal_mask())
        assert table_view(world, seat) == table_view(game, seat)
