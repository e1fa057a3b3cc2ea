"""Properties of RING RANG over thousands of random legal rounds and games (hypothesis)."""

from __future__ import annotations

import random

import numpy as np
from fuzz_script import random_play_totals
from hypothesis import given, settings
from hypothesis import strategies as st

from cardenvs import ring_rang_v0
from cardenvs.ring_rang.engine import NUM_TRICKS, PHASE_OVER, PHASE_PLAY, RingRangGame

ALL_CARDS = (1 << 52) - 1


def check_cards_in_one_place(game: RingRangGame) -> None:
    """Every card is in exactly one hand, one played trick or (before trump) still undealt."""
    seen = 0
    total = 0
    for hand in game.hands:
        assert not seen & hand
        seen |= hand
        total += hand.bit_count()
    for _, cards, _, _ in game.history:
        for card in cards:
            assert not seen >> card & 1
            seen |= 1 << card
            total += 1
    for card in game.trick_cards:
        assert not seen >> card & 1
        seen |= 1 << card
        total += 1
    if game.phase == PHASE_PLAY or game.tricks_played == NUM_TRICKS:
        assert seen == ALL_CARDS and total == 52
        assert seen == game.played | game.hands[0] | game.hands[1] | game.hands[2] | game.hands[3]
    else:
        assert total == 5 and game.hands[game.chooser].bit_count() == 5
    assert sum(game.lifted) + game.pile == game.tricks_played


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), knocking=st.booleans(), variants=st.booleans())
def test_random_rounds_keep_the_invariants(seed, knocking, variants):
    """40 rounds per example: 2400 random rounds in all."""
    pick = random.Random(seed)
    for i in range(40):
        game = RingRangGame(
            np.random.default_rng([seed, i]), episode="round", knocking=knocking, signals=variants,
            declarations=variants,
        )
        rewards = None
        while game.phase != PHASE_OVER:
            legal = game.legal_actions()
            assert legal and len(set(legal)) == len(legal)
            rewards = game.apply(legal[int(pick.random() * len(legal))])
            if i % 8 == 0:
                check_cards_in_one_place(game)
        check_cards_in_one_place(game)
        assert game.tricks_played == NUM_TRICKS and len(game.history) == NUM_TRICKS
        assert sum(game.lifted) == NUM_TRICKS
        assert sum(t[3] for t in game.history) == NUM_TRICKS
        assert game.history[-1][3] > 0  # the 13th trick takes the rest
        assert all(len(t[1]) == 4 for t in game.history)
        team, points = game.round_points()
        assert rewards is not None and sum(rewards) == 0 and rewards[0] == rewards[2] and rewards[1] == rewards[3]
        assert rewards[team] == points and points in (1, 2, 3)
        assert game.knockers[: game.next_honour] == [k for k in game.knockers if k >= 0]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), stop=st.booleans())
def test_random_games_through_env_are_zero_sum(seed, stop):
    env = ring_rang_v0.env(stop_when_decided=stop)
    env.reset(seed=seed)
    totals = random_play_totals(env, seed)
    game = env.unwrapped.game
    assert sum(totals.values()) == 0
    assert totals["player_0"] == totals["player_2"] == -totals["player_1"] == -totals["player_3"]
    assert abs(totals["player_0"]) == 1
    for finished in game.rounds:
        assert sum(finished["lifted"]) == NUM_TRICKS or (stop and min(finished["lifted"]) >= 1)
        if not stop:
            assert finished["tricks_played"] == NUM_TRICKS
    assert max(game.scores) >= 20
