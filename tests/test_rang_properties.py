"""Random legal Rang games: conservation of cards, hands change only by the rules, one winner."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from fuzz_script import random_play_totals
from hypothesis import given, settings
from hypothesis import strategies as st

from cardenvs import rang_v0
from cardenvs.rang.engine import (
    DECK_54,
    DECK_108,
    DISCARD,
    ELIMINATION_TOTAL,
    NUM_KINDS,
    PLAY,
    PLAYABLE_ON,
    RangGame,
    kind_of,
)


def check_state(game: RangGame) -> None:
    everything = [c for s in range(game.num_players) for c in game.hand_cards(s)]
    everything += game.stock + game.discard + game.pile
    assert Counter(everything) == Counter(DECK_108 if game.deck_size == 108 else DECK_54)
    for seat in range(game.num_players):
        cards = game.hand_cards(seat)
        assert game.hand_size[seat] == len(cards)
        assert game.hand_bits[seat] == sum(1 << k for k in {kind_of(c) for c in cards})
        if not game.alive[seat] and not game.match_over:
            assert not cards  # players out of the game get no cards
    counts = [0] * NUM_KINDS
    for card in game.pile:
        counts[kind_of(card)] += 1
    assert counts == game.pile_counts and game.top == kind_of(game.pile[-1])
    if not game.match_over:
        assert game.alive[game.current] and game.legal_actions()
        if game.phase == PLAY:
            assert game.hand_bits[game.current] & PLAYABLE_ON[game.top]


def play_checked(num_players: int, seed: int, single_deal: bool, max_turns: int = 2000) -> RangGame:
    game = RangGame.new(num_players, np.random.default_rng(seed), single_deal=single_deal, log=True,
                        max_turns_per_deal=max_turns)  # fmt: skip
    rng = random.Random(seed)
    hands = {}
    seen = 0
    totals = game.totals[:]
    steps = 0
    while True:
        # replay the events: hands change only by the deal, plays, discards and the rules' draws
        events = [e for e in game.log[seen:] if e[0] != "rebuild"]
        for i, event in enumerate(events):
            if event[0] == "deal":
                hands = {s: Counter(cards) for s, cards in enumerate(event[4])}
                assert max(len(h) for h in event[4]) == 5 and all(len(h) in (0, 5) for h in event[4])
            elif event[0] in ("play", "discard"):
                hands[event[1]][event[2]] -= 1
                assert hands[event[1]][event[2]] >= 0
            elif event[0] == "draw":
                seat = event[1]
                held = sum(hands[seat].values())
                hands[seat][event[2]] += 1
                j = i
                while j < len(events) and events[j][:2] == ("draw", seat):
                    j += 1
                if j < len(events) and events[j] == ("back", seat):
                    assert j - i <= 2  # the player who went out draws 2 after the answer
                elif i == 0 or events[i - 1][:2] != ("draw", seat):
                    assert j == i + 1  # an automatic draw is one card
                    if held >= 2:  # then a discard of the player's choice follows
                        assert i == len(events) - 1 and game.phase == DISCARD and game.current == seat
        seen = len(game.log)
        for seat in range(num_players):
            assert +hands[seat] == Counter(game.hand_cards(seat))
        check_state(game)
        assert all(t >= old for t, old in zip(game.totals, totals, strict=True))
        totals = game.totals[:]
        if game.match_over:
            return game
        actions = game.legal_actions()
        if game.phase == DISCARD:
            assert all(a >= 14 for a in actions)
        else:
            assert all(a < 14 for a in actions)
        game.apply(actions[rng.randrange(len(actions))])
        steps += 1
        assert steps < 100_000


def check_end(game: RangGame, single_deal: bool) -> None:
    if game.truncated:
        return
    if single_deal:
        assert game.last_points[game.went_out] == 0
    else:
        assert sum(game.alive) == 1
        winner = game.alive.index(True)
        assert game.totals[winner] < ELIMINATION_TOTAL
        assert all(t >= ELIMINATION_TOTAL for s, t in enumerate(game.totals) if s != winner)


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(num_players=st.integers(2, 10), seed=st.integers(0, 2**32 - 1), single_deal=st.booleans())
def test_random_games_keep_every_invariant(num_players, seed, single_deal):
    check_end(play_checked(num_players, seed, single_deal), single_deal)


@settings(max_examples=30, deadline=None)
@given(num_players=st.integers(2, 10), seed=st.integers(0, 2**32 - 1))
def test_short_turn_limit_truncates_cleanly(num_players, seed):
    game = play_checked(num_players, seed, False, max_turns=40)
    check_end(game, False)


@pytest.mark.slow
def test_thousands_of_matches_end_with_one_winner():
    rng = random.Random(0)
    for i in range(2000):
        n = 2 + i % 9
        game = RangGame.new(n, np.random.default_rng(i))
        while not game.match_over:
            actions = game.legal_actions()
            game.apply(actions[rng.randrange(len(actions))])
        assert not game.truncated
        check_end(game, False)


@settings(max_examples=25, deadline=None)
@given(num_players=st.integers(2, 10), seed=st.integers(0, 2**16), episode=st.sampled_from(["match", "deal"]))
def test_env_rewards_as_specified(num_players, seed, episode):
    env = rang_v0.env(num_players=num_players, episode=episode)
    env.reset(seed=seed)
    totals = random_play_totals(env, seed)
    game = env.unwrapped.game
    if game.truncated:
        assert all(v == 0 for v in totals.values())
    elif episode == "deal":
        assert [totals[a] for a in env.possible_agents] == [-p / 100 for p in game.last_points]
    else:
        values = sorted(totals.values())
        assert values[-1] == 1.0 and all(abs(v + 1 / (num_players - 1)) < 1e-12 for v in values[:-1])
