"""The rules of Crazy Eights, one test per rule, from hand-built decks (see the env's docs)."""

from __future__ import annotations

import numpy as np
import pytest
from cardenvs_crazy_eights.engine import (
    AFTER_DRAW,
    DRAW,
    NAME_SUIT,
    NAME_SUIT_OFFSET,
    PASS,
    PLAY,
    CrazyEightsGame,
    arrange_deck,
)

from cardenvs.cards import parse_card
from cardenvs.core import Game

C = parse_card
HEARTS = 2


def deal(hands, starter, stock=(), dealer=0, max_turns=300, seed=0) -> CrazyEightsGame:
    deck = [C(c) for c in arrange_deck(hands, starter, list(stock), dealer)]
    return CrazyEightsGame.new(len(hands), np.random.default_rng(seed), dealer=dealer, deck=deck, max_turns=max_turns)


THREE = [["2C", "3C", "4C", "5C", "6C"], ["2D", "3D", "4D", "5D", "6D"], ["2H", "3H", "4H", "5H", "6H"]]


def test_deal_sizes_order_and_first_player():
    game = CrazyEightsGame.new(2, np.random.default_rng(0))
    assert isinstance(game, Game)  # cardenvs's game API
    assert [game.hand_size(s) for s in range(2)] == [7, 7] and len(game.stock) == 52 - 15
    deck = [C(c) for c in arrange_deck(THREE, "KS", ["QS"], dealer=1)]
    game = CrazyEightsGame.new(3, np.random.default_rng(0), dealer=1, deck=deck)
    assert deck[:5] == [C(c) for c in THREE[2]]  # seat dealer+1 gets the first cards
    assert [game.hand_cards(s) for s in range(3)] == [sorted(C(c) for c in h) for h in THREE]
    assert game.pile == [C("KS")] and game.stock[-1] == C("QS") and len(game.stock) == 52 - 16
    assert game.current == 2 and game.suit == 3 and game.phase == PLAY


def test_play_matches_suit_or_rank_only():
    game = deal([["2S", "KD", "9C", "3C", "4C"], THREE[1], THREE[2]], "KS")
    assert game.current == 1
    game.step(DRAW)  # seat 1 has no spade, no king, no 8
    game.step(PASS)
    game.step(DRAW)
    game.step(PASS)
    assert game.current == 0
    assert set(game.legal_actions()) == {C("2S"), C("KD")}  # the suit, the rank; not 9C
    snapshot = game.to_json()
    with pytest.raises(ValueError, match="illegal action"):
        game.step(C("9C"))
    assert game.to_json() == snapshot  # nothing changed
    game.step(C("KD"))
    assert game.suit == 1 and game.top == C("KD") and game.current == 1


def test_eight_is_wild_and_its_player_names_the_suit():
    game = deal([THREE[0], ["8D", "3S", "4S", "5S", "6S"], ["2H", "3H", "4H", "5H", "9C"]], "KC")
    assert game.current == 1 and game.legal_actions() == [C("8D")]  # the 8 goes on a club
    game.step(C("8D"))
    assert game.phase == NAME_SUIT and game.current == 1
    assert game.legal_actions() == list(range(NAME_SUIT_OFFSET, NAME_SUIT_OFFSET + 4))
    game.step(NAME_SUIT_OFFSET + HEARTS)
    assert game.suit == HEARTS and game.current == 2
    assert set(game.legal_actions()) == {C(c) for c in ("2H", "3H", "4H", "5H")}  # the named suit, not 9C


def test_eight_as_starter_counts_as_its_own_suit():
    game = deal([THREE[0], ["2D", "3S", "4S", "5S", "6S"], THREE[2]], "8D")
    assert game.suit == 1 and game.phase == PLAY
    assert game.legal_actions() == [C("2D")]


def test_a_player_who_can_play_may_not_draw():
    game = deal([THREE[0], ["2D", "3S", "4S", "5S", "6S"], THREE[2]], "KD")
    assert DRAW not in game.legal_actions() and game.legal_actions() == [C("2D")]


def test_draw_then_play_the_drawn_card_or_pass():
    game = deal([THREE[0], ["3S", "4S", "5S", "6S", "7S"], THREE[2]], "KD", stock=["QD", "AC"])
    assert game.legal_actions() == [DRAW]
    game.step(DRAW)
    assert game.phase == AFTER_DRAW and game.drawn == C("QD") and game.current == 1
    assert game.legal_actions() == [C("QD"), PASS]  # only the drawn card, or pass
    game.step(PASS)
    assert game.current == 2 and game.hand_size(1) == 6 and game.top == C("KD")
    game = deal([THREE[0], ["3S", "4S", "5S", "6S", "7S"], THREE[2]], "KD", stock=["AC"])
    game.step(DRAW)
    assert game.legal_actions() == [PASS]  # the drawn club does not fit


def test_rebuild_keeps_the_top_card_and_shuffles_the_rest():
    game = deal([THREE[0], ["3S", "4S", "5S", "6S", "7S"], THREE[2]], "KD")
    under = game.stock[:]
    game.stock = []
    game.pile = under + game.pile
    game.step(DRAW)
    assert game.pile == [C("KD")]
    assert sorted(game.stock + [game.drawn]) == sorted(under)
    assert game.stock + [game.drawn] != under[::-1]  # shuffled (with this seed), not the pile's order


def test_nothing_to_draw_and_no_play_is_a_pass():
    spades = ["3S", "4S", "5S", "6S", "7S"]
    others = sorted(set(range(52)) - {C(c) for c in spades} - {C("KD")})
    game = CrazyEightsGame.from_json({
        "num_players": 3, "max_turns": 300, "dealer": 0,
        "hands": [others[:23], spades, others[23:]], "stock_top_first": [], "pile": ["KD"], "suit": 1,
        "phase": PLAY, "current": 1, "drawn": None, "turns": 0, "voids": [0, 0, 0], "over": False,
        "truncated": False, "winner": -1,
    }, np.random.default_rng(0))
    assert not game.can_draw() and game.legal_actions() == [PASS]
    game.step(PASS)
    assert game.current == 2 and game.turns == 1 and game.hand_size(1) == 5
    assert game.legal_actions() and PASS not in game.legal_actions()  # every other card is in a hand


def test_going_out_wins_at_once():
    game = deal([THREE[0], ["3S", "4S", "5S", "6S", "7S"], THREE[2]], "3D")
    game.hands[1] = 1 << C("3S")
    outcome = game.step(C("3S"))
    assert game.is_over() and game.winner == 1
    assert outcome.finished == (0, 1, 2) and outcome.rewards == (-0.5, 1.0, -0.5)
    assert game.legal_actions() == [] and game.seats_in_play() == []


def test_going_out_on_an_eight_names_no_suit():
    game = deal([THREE[0], ["8S", "4S", "5S", "6S", "7S"], THREE[2]], "3D")
    game.hands[1] = 1 << C("8S")
    outcome = game.step(C("8S"))
    assert game.is_over() and game.phase == PLAY and outcome.rewards == (-0.5, 1.0, -0.5)


def test_turn_limit_truncates():
    game = deal([THREE[0], ["3S", "4S", "5S", "6S", "7S"], THREE[2]], "3D", max_turns=2)
    game.step(game.legal_actions()[0])
    if game.phase != PLAY:
        game.step(game.legal_actions()[-1])
    assert not game.is_over() and game.turns == 1
    outcome = game.step(game.legal_actions()[0])
    if game.phase != PLAY and not game.is_over():
        outcome = game.step(game.legal_actions()[-1])
    assert game.is_over() and game.truncated and outcome.truncated and game.winner == -1


def test_rewards_sum_to_zero_in_every_finished_random_deal():
    rng = np.random.default_rng(3)
    for n in (2, 3, 4):
        for _ in range(30):
            game = CrazyEightsGame.new(n, np.random.default_rng(int(rng.integers(2**31))))
            total = np.zeros(n)
            while not game.is_over():
                actions = game.legal_actions()
                outcome = game.step(actions[int(rng.integers(len(actions)))])
                if outcome.rewards:
                    total += outcome.rewards
                assert sorted(game.hand_cards(0) + sum((game.hand_cards(s) for s in range(1, n)), [])
                              + game.stock + game.pile) == list(range(52))
            assert abs(total.sum()) < 1e-9
            assert game.truncated or total.max() in (0.0, 1.0)


def test_voids_record_the_suits_a_seat_could_not_play():
    game = deal([THREE[0], ["3S", "4S", "5S", "6S", "7S"], ["2H", "3H", "4H", "5H", "6H"]], "KD",
                stock=["QD", "AC", "9C"])
    game.voids[1] = 1 << 0  # say seat 1 lacked clubs at an earlier turn
    game.step(DRAW)  # seat 1 cannot play on diamonds, draws QD and plays it
    assert game.voids[1] == 1 << 0 | 1 << 1
    game.step(C("QD"))
    assert game.voids[1] == 1 << 0 | 1 << 1  # it played the drawn card: its hand is one that lacked both
    game.voids[2] = 1 << 3  # say seat 2 lacked spades earlier
    game.step(DRAW)  # seat 2: no diamond, no queen: draws AC, which does not fit, and passes
    game.step(PASS)
    assert game.voids[2] == 1 << 1  # it kept a card it drew: only this turn's suit stays on its record
    assert game.voids[0] == 0
