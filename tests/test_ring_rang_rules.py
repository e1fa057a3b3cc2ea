"""Unit tests of each RING RANG rule, mostly through the pure engine."""

from __future__ import annotations

import numpy as np
import pytest

from cardenvs.cards import parse_card, rank_of
from cardenvs.ring_rang.engine import (
    ACTION_KNOCK,
    PHASE_OVER,
    PHASE_PLAY,
    PHASE_TRUMP,
    RingRangGame,
    bits_to_cards,
    deal_seats,
    deck_for_hands,
    draw_chooser,
)

HEARTS = 2


def cards(codes: str) -> list[int]:
    return [parse_card(c) for c in codes.split()]


def suit_cards(suit: str, ranks: str) -> list[int]:
    return [parse_card(r + suit) for r in ranks]


# Trump hearts. Seat 0: AH QH + clubs 2..Q; seat 1: KH JH + diamonds 2..Q;
# seat 2: 2H + spades 3..A; seat 3: 2S, hearts 3..T, KC AC KD AD.
KNOCK_HANDS = [
    cards("AH QH") + suit_cards("C", "23456789TJQ"),
    cards("KH JH") + suit_cards("D", "23456789TJQ"),
    cards("2H") + suit_cards("S", "3456789TJQKA"),
    cards("2S") + suit_cards("H", "3456789T") + cards("KC AC KD AD"),
]


def knock_game(knocking: bool = True) -> RingRangGame:
    deck = deck_for_hands(KNOCK_HANDS, chooser=0)
    game = RingRangGame(np.random.default_rng(0), chooser=0, decks=[deck], episode="round", knocking=knocking)
    game.apply(52 + HEARTS)
    return game


def play(game: RingRangGame, code: str) -> None:
    card = parse_card(code)
    assert card in game.legal_actions(), (code, game.legal_actions())
    game.apply(card)


# ------------------------------------------------------------------ deal
def test_deal_order_matches_the_documented_rules():
    for chooser in range(4):
        seats = deal_seats(chooser)
        c = chooser
        assert seats[0:5] == [c] * 5
        assert seats[5:10] == [(c + 1) % 4] * 5
        assert seats[10:15] == [(c + 2) % 4] * 5
        assert seats[15:20] == [(c + 3) % 4] * 5
        for packet in range(8):
            assert seats[20 + 4 * packet : 24 + 4 * packet] == [(c + packet) % 4] * 4


def test_deal_gives_chooser_5_cards_first_and_partner_none_before_trump():
    deck = list(range(52))
    game = RingRangGame(np.random.default_rng(0), chooser=2, decks=[deck])
    assert game.phase == PHASE_TRUMP and game.to_act == 2 and game.dealer == 1
    assert bits_to_cards(game.hands[2]) == [0, 1, 2, 3, 4]
    assert game.hands[0] == game.hands[1] == game.hands[3] == 0  # partner (seat 0) has nothing yet
    assert game.legal_actions() == [52, 53, 54, 55]  # no knock before trump
    game.apply(53)
    assert game.trump == 1 and game.phase == PHASE_PLAY and game.to_act == 2
    expect = {
        2: list(range(0, 5)) + list(range(20, 24)) + list(range(36, 40)),
        3: list(range(5, 10)) + list(range(24, 28)) + list(range(40, 44)),
        0: list(range(10, 15)) + list(range(28, 32)) + list(range(44, 48)),
        1: list(range(15, 20)) + list(range(32, 36)) + list(range(48, 52)),
    }
    for seat, want in expect.items():
        assert bits_to_cards(game.hands[seat]) == sorted(want)


def test_deck_for_hands_round_trip():
    rng = np.random.default_rng(5)
    order = rng.permutation(52).tolist()
    hands = [order[13 * s : 13 * s + 13] for s in range(4)]
    for chooser in range(4):
        deck = deck_for_hands(hands, chooser)
        game = RingRangGame(np.random.default_rng(0), chooser=chooser, decks=[deck])
        assert bits_to_cards(game.hands[chooser]) == sorted(hands[chooser][:5])
        game.apply(52)
        for seat in range(4):
            assert bits_to_cards(game.hands[seat]) == sorted(hands[seat])


# --------------------------------------------------------------- chooser
def test_chooser_draw_highest_rank_and_ties_redraw():
    seen_tie = False
    for seed in range(200):
        chooser, draws = draw_chooser(np.random.default_rng(seed))
        contenders = [0, 1, 2, 3]
        for i, draw in enumerate(draws):
            assert [seat for seat, _ in draw] == contenders
            assert len({card for _, card in draw}) == len(draw)
            top = max(rank_of(card) for _, card in draw)
            tied = [seat for seat, card in draw if rank_of(card) == top]
            if i < len(draws) - 1:
                assert len(tied) > 1
                seen_tie = True
                contenders = tied
            else:
                assert tied == [chooser]
    assert seen_tie


def test_chooser_draw_uses_env_rng_and_option_overrides():
    a = RingRangGame(np.random.default_rng(7))
    b = RingRangGame(np.random.default_rng(7))
    assert a.chooser == b.chooser and a.chooser_draws == b.chooser_draws and a.chooser_draws
    fixed = RingRangGame(np.random.default_rng(7), chooser=3)
    assert fixed.chooser == 3 and fixed.dealer == 2 and fixed.chooser_draws == []


# ------------------------------------------------------------ tricks
def test_follow_suit_trump_and_undertrump_are_free():
    game = knock_game()
    play(game, "2C")
    # Seat 1 is void in clubs: every card is legal (trump or throw), knock too (A not yet knocked: no).
    assert sorted(a for a in game.legal_actions() if a < 52) == sorted(KNOCK_HANDS[1])
    play(game, "KH")  # trumps
    # Seat 2 is void in clubs: may undertrump with 2H or throw a spade; nobody must overtrump.
    assert sorted(a for a in game.legal_actions() if a < 52) == sorted(KNOCK_HANDS[2])
    play(game, "2H")
    # Seat 3 holds clubs and must follow suit although it could trump.
    assert sorted(game.legal_actions()) == cards("KC AC")
    play(game, "AC")
    assert game.history[-1][2] == 1  # the highest trump wins
    assert game.to_act == 1  # the winner leads


def test_off_suit_ace_never_wins_and_led_suit_wins_without_trump():
    game = knock_game()
    play(game, "2C")
    play(game, "2D")  # throws a diamond
    play(game, "AS")  # throws a spade ace
    play(game, "KC")
    assert game.history[-1][2] == 3


# ------------------------------------------------------------ knocking
def test_knock_sequence_several_on_one_turn_and_turn_does_not_pass():
    hands = [suit_cards("H", "AKQJ") + suit_cards("C", "23456789T")] + KNOCK_HANDS[1:]
    hands[1] = suit_cards("D", "23456789TJQ") + cards("JC QC")
    hands[2] = cards("2H") + suit_cards("S", "3456789TJQKA")
    hands[3] = cards("2S") + suit_cards("H", "3456789T") + cards("KC AC KD AD")
    game = RingRangGame(np.random.default_rng(0), chooser=0, decks=[deck_for_hands(hands, 0)], episode="round")
    game.apply(52 + HEARTS)
    for honour in range(4):
        assert ACTION_KNOCK in game.legal_actions()
        game.apply(ACTION_KNOCK)
        assert game.to_act == 0
        assert game.knockers[honour] == 0
    assert ACTION_KNOCK not in game.legal_actions()
    assert game.knock_ended


def test_knock_needs_the_next_honour_in_hand():
    game = knock_game()
    assert ACTION_KNOCK in game.legal_actions()  # seat 0 holds AH
    play(game, "2C")  # seat 0 does not knock now
    assert ACTION_KNOCK not in game.legal_actions()  # seat 1 holds KH but the Ace has not knocked
    play(game, "2D")
    play(game, "3S")
    play(game, "AC")
    # Seat 3 leads; no trump honour
    assert ACTION_KNOCK not in game.legal_actions()
    play(game, "3H")
    assert ACTION_KNOCK in game.legal_actions()  # seat 0 may knock late
    game.apply(ACTION_KNOCK)
    assert game.knockers[0] == 0 and game.to_act == 0
    assert ACTION_KNOCK not in game.legal_actions()  # seat 0 holds QH, not KH
    play(game, "QH")  # a later honour, played before its turn in the sequence
    assert ACTION_KNOCK in game.legal_actions()  # seat 1 holds KH
    game.apply(ACTION_KNOCK)
    # The next honour (Q) is gone: knocking is over (decision), though seat 1 holds JH.
    assert game.knock_ended
    assert ACTION_KNOCK not in game.legal_actions()


def test_playing_the_next_honour_unknocked_ends_knocking():
    game = knock_game()
    play(game, "2C")
    play(game, "2D")
    play(game, "3S")
    play(game, "AC")
    play(game, "3H")  # seat 3 leads a heart
    play(game, "AH")  # seat 0 plays the trump Ace without knocking
    assert game.knock_ended
    assert ACTION_KNOCK not in game.legal_actions()  # seat 1 holds KH: too late


def test_knocking_off():
    game = knock_game(knocking=False)
    assert ACTION_KNOCK not in game.legal_actions()
    assert game.knock_ended


# ------------------------------------------------------------ lifting
def finish_trick(game: RingRangGame, winner: int) -> int:
    """Settle a trick won by ``winner`` through the engine's own transition; returns the lift."""
    game.best_seat = winner
    game.trick_cards = [0, 1, 2, 3]
    game._finish_trick()
    return game.history[-1][3]


@pytest.mark.parametrize(
    ("winners", "lifts"),
    [
        ([0, 0, 1, 1], [0, 0, 0, 4]),  # first lift needs 3 on the pile
        ([0, 0, 0], [0, 0, 3]),
        ([0, 2, 0, 2], [0, 0, 0, 0]),  # partners do not make a streak
        ([0, 0, 0, 1, 1], [0, 0, 3, 0, 2]),  # after a first lift 2 suffice
        ([0, 0, 0, 1, 1, 1], [0, 0, 3, 0, 2, 0]),  # the streak's first trick must still lie on the pile
        ([0, 0, 0, 1, 1, 1, 1], [0, 0, 3, 0, 2, 0, 2]),
        ([1, 0, 1, 0, 2, 3, 1, 3, 0, 2, 1, 3, 2], [0] * 12 + [13]),  # the 13th trick takes the rest
    ],
)
def test_lifting(winners, lifts):
    game = knock_game()
    got = [finish_trick(game, w) for w in winners]
    assert got == lifts


# ------------------------------------------------------------ points
@pytest.mark.parametrize(
    ("chooser", "lifted", "team", "points", "next_chooser"),
    [
        (0, [7, 6], 0, 1, 2),
        (0, [6, 7], 1, 1, 1),
        (0, [13, 0], 0, 2, 2),
        (0, [0, 13], 1, 3, 1),
        (1, [13, 0], 0, 3, 2),
        (3, [0, 13], 1, 2, 1),
        (3, [9, 4], 0, 1, 0),
    ],
)
def test_points_and_next_chooser(chooser, lifted, team, points, next_chooser):
    game = RingRangGame(np.random.default_rng(0), chooser=chooser)
    game.apply(52)
    game.lifted = list(lifted)
    game._end_round()
    assert game.rounds[-1]["winner_team"] == team
    assert game.rounds[-1]["points"] == points
    assert game.scores[team] == points and game.scores[1 - team] == 0
    assert game.chooser == next_chooser and game.dealer == (next_chooser - 1) % 4
    assert game.phase == PHASE_TRUMP and game.round_number == 1


def test_round_episode_rewards_points():
    game = RingRangGame(np.random.default_rng(0), chooser=1, episode="round")
    game.apply(52)
    game.lifted = [13, 0]
    assert game._end_round() == (3.0, -3.0, 3.0, -3.0)
    assert game.phase == PHASE_OVER and game.legal_actions() == []


def test_game_to_20():
    game = RingRangGame(np.random.default_rng(0), chooser=0)
    game.scores = [19, 18]
    game.apply(52)
    game.lifted = [6, 7]
    assert game._end_round() is None  # 19:19, play on
    assert game.scores == [19, 19] and game.phase == PHASE_TRUMP
    game.apply(52)
    game.lifted = [0, 13]  # chooser is seat 1 now: team 1 chose, so 2 points
    assert game._end_round() == (-1.0, 1.0, -1.0, 1.0)
    assert game.scores == [19, 21] and game.phase == PHASE_OVER and game.winner_team == 1


def test_shaping_adds_round_points_during_a_game():
    game = RingRangGame(np.random.default_rng(0), chooser=0, shaping=0.1)
    game.apply(52)
    game.lifted = [7, 6]
    assert game._end_round() == pytest.approx((0.1, -0.1, 0.1, -0.1))


def test_random_games_end_at_20_with_consistent_scores():
    rng = np.random.default_rng(1)
    for seed in range(3):
        game = RingRangGame(np.random.default_rng(seed))
        while game.phase != PHASE_OVER:
            actions = game.legal_actions()
            game.apply(actions[int(rng.integers(len(actions)))])
        assert max(game.scores) >= 20 and min(game.scores) < 20
        assert sum(r["points"] for r in game.rounds) == sum(game.scores)
        for before, after in zip(game.rounds, game.rounds[1:], strict=False):
            won = before["winner_team"] == before["chooser"] % 2
            assert after["chooser"] == (before["chooser"] + (2 if won else 1)) % 4


def test_clone_is_independent():
    game = RingRangGame(np.random.default_rng(3))
    game.apply(52)
    twin = game.clone()
    action = twin.legal_actions()[0]
    twin.apply(action)
    assert game.hands != twin.hands
    assert game.trick_cards == []


def test_engine_validates_settings():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="episode"):
        RingRangGame(rng, episode="match")
    with pytest.raises(ValueError, match="chooser"):
        RingRangGame(rng, chooser=4)
    with pytest.raises(ValueError, match="decks\\[1\\]"):
        RingRangGame(rng, decks=[list(range(52)), list(range(51))])
    with pytest.raises(ValueError, match="knocking"):
        RingRangGame(rng, knocking="yes")
