"""Rang rules, scenario by scenario, on the pure engine (given decks or hand-built states)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from cardenvs.cards import CODES, parse_card
from cardenvs.rang.engine import (
    DECK_54,
    DECK_108,
    DISCARD,
    JOKER_KIND,
    PLAY,
    PLAY_AFTER_JOKER,
    RangGame,
    arrange_deck,
    parse_rang_deck,
)

J = JOKER_KIND


def kind(code: str) -> int:
    card = parse_card(code)
    return 13 if card == 52 else card % 13


def play(code: str) -> int:
    return kind(code)


def discard(code: str) -> int:
    return 14 + kind(code)


def new_game(deck, num_players=2, dealer=0, single_deal=False, seed=0, **kwargs) -> RangGame:
    decks = [parse_rang_deck(deck, "deck")] if deck is not None else []
    return RangGame.new(
        num_players,
        np.random.default_rng(seed),
        dealer=dealer,
        decks=decks,
        single_deal=single_deal,
        log=True,
        **kwargs,
    )


def state_game(hands, pile, stock=(), discard_pile=(), current=0, phase=PLAY, totals=None, alive=None, dealer=None,
               out_seat=-1, size=None, given_decks=(), single_deal=False, seed=0) -> RangGame:  # fmt: skip
    """A game in a hand-built mid-deal state; unused cards go to the bottom of the stock."""
    n = len(hands)
    alive = alive or [True] * n
    size = size or (108 if sum(alive) >= 5 else 54)
    left = Counter(DECK_108 if size == 108 else DECK_54)
    for code in [c for h in hands for c in h] + list(pile) + list(stock) + list(discard_pile):
        left[parse_card(code)] -= 1
    assert min(left.values()) >= 0, "a card is used too often"
    stock_top_first = list(stock) + [CODES[c] for c in sorted(left.elements())]
    data = {
        "num_players": n,
        "single_deal": single_deal,
        "max_turns_per_deal": 2000,
        "totals": list(totals or [0] * n),
        "alive": alive,
        "dealer": (n - 1 if dealer is None else dealer),
        "deck_size": size,
        "hands": [list(h) for h in hands],
        "stock_top_first": stock_top_first,
        "discard": list(discard_pile),
        "pile": list(pile),
        "own_discards": [[0] * 14 for _ in range(n)],
        "phase": phase,
        "current": current,
        "out_seat": out_seat,
        "turns": 1,
        "deal_number": 1,
        "given_decks": [list(d) for d in given_decks],
        "deal_over": False,
        "match_over": False,
        "truncated": False,
        "went_out": -1,
        "last_points": None,
        "last_eliminated": [],
        "log": [],
    }
    return RangGame.from_json(data, np.random.default_rng(seed))


def hand(game: RangGame, seat: int) -> list[str]:
    return sorted(CODES[c] for c in game.hand_cards(seat))


# ---------------------------------------------------------------- the deal
def test_deal_order_with_given_deck():
    deck = arrange_deck({1: ["2C", "3C", "4C", "5C", "6C"], 2: ["2D", "3D", "4D", "5D", "6D"],
                         0: ["2H", "3H", "4H", "5H", "6H"]}, "7S", ["KS", "QS"], dealer=0, num_players=3)  # fmt: skip
    assert deck[:5] == ["2C", "3C", "4C", "5C", "6C"] and deck[15] == "7S" and deck[16:18] == ["KS", "QS"]
    game = new_game(deck, num_players=3, dealer=0)
    assert hand(game, 1) == sorted(["2C", "3C", "4C", "5C", "6C"])
    assert hand(game, 2) == sorted(["2D", "3D", "4D", "5D", "6D"])
    assert hand(game, 0) == sorted(["2H", "3H", "4H", "5H", "6H"])
    assert CODES[game.pile[-1]] == "7S" and CODES[game.stock[-1]] == "KS" and CODES[game.stock[-2]] == "QS"
    assert len(game.stock) == 54 - 16 and game.deck_size == 54


def test_first_player_is_left_of_dealer():
    deck = arrange_deck({2: ["7C", "2D", "3D", "4D", "5D"], 0: ["TH", "3H", "4H", "5H", "6H"],
                         1: ["8S", "9S", "TS", "JS", "QS"]}, "7S", dealer=1, num_players=3)  # fmt: skip
    game = new_game(deck, num_players=3, dealer=1)
    assert game.current == 2 and game.phase == PLAY and game.legal_actions() == [play("7C")]


def test_deck_size_by_players_in():
    assert new_game(None, num_players=4).deck_size == 54
    assert new_game(None, num_players=5).deck_size == 108
    game = new_game(None, num_players=10)
    assert game.deck_size == 108 and sum(game.hand_size) == 50 and len(game.stock) == 108 - 51


# ------------------------------------------------------------ legal plays
@pytest.mark.parametrize(
    "top, held, legal",
    [
        ("7C", ["6D", "7D", "8D", "AS", "JK", "2C", "TC"], ["6D", "7D", "8D", "AS", "JK"]),
        ("KC", ["QD", "KD", "AS", "2C"], ["QD", "KD", "AS"]),  # no wrap-around K -> 2
        ("AC", ["2D", "KD", "AS", "3C"], ["2D", "AS"]),  # Ace low: only 2 or Ace (or Joker)
        ("2C", ["AD", "2D", "3D", "4D"], ["AD", "2D", "3D"]),
        ("JK", ["9D", "KD", "4S"], ["4S", "9D", "KD"]),  # anything on a Joker on top
        ("TC", ["JD", "9S", "QH"], ["9S", "JD"]),
    ],
)
def test_must_play_masks(top, held, legal):
    others = ["5H", "5S", "5C"] if top != "5C" else ["6H"]
    game = state_game([held, others], pile=[top], current=0)
    assert game.legal_actions() == sorted({play(c) for c in legal})
    assert all(a < 14 for a in game.legal_actions())  # no discard while a play is possible


def test_start_card_joker_allows_anything():
    deck = arrange_deck({1: ["9C", "KD", "4S", "7H", "2C"], 0: ["QH", "3H", "4H", "5H", "6H"]}, "JK")
    game = new_game(deck)
    assert game.current == 1 and game.top == J and game.phase == PLAY
    assert game.legal_actions() == sorted(kind(c) for c in ["9C", "KD", "4S", "7H", "2C"])
    game.apply(play("KD"))
    assert game.phase == PLAY and game.current == 0  # no free card after a start Joker


def test_plays_lowest_card_of_the_rank():
    deck = arrange_deck({1: ["7S", "7C", "7H", "2D", "3D"], 0: ["2H", "3H", "4H", "5H", "6H"]}, "8C")
    game = new_game(deck)
    game.apply(play("7S"))
    assert CODES[game.pile[-1]] == "7C" and hand(game, 1) == sorted(["7S", "7H", "2D", "3D"])


# ----------------------------------------------------------------- Jokers
def test_joker_then_free_card_of_choice():
    deck = arrange_deck({1: ["JK", "5C", "9D", "KS", "7H"], 0: ["QH", "3H", "4H", "5H", "6H"]}, "2C")
    game = new_game(deck)
    assert game.legal_actions() == [J]
    game.apply(J)
    assert game.current == 1 and game.phase == PLAY_AFTER_JOKER
    assert game.legal_actions() == sorted(kind(c) for c in ["5C", "9D", "KS", "7H"])
    game.apply(play("KS"))
    assert game.top == kind("KS") and game.current == 0 and game.phase == PLAY


def test_joker_chain():
    deck = arrange_deck({1: ["JK", "JK", "4C", "9D", "KS"], 0: ["2H", "3H", "4H", "5H", "6H"]}, "7C")
    game = new_game(deck)
    game.apply(J)
    assert game.phase == PLAY_AFTER_JOKER and J in game.legal_actions()
    game.apply(J)
    assert game.current == 1 and game.phase == PLAY_AFTER_JOKER
    game.apply(play("4C"))
    assert game.top == kind("4C") and game.current == 0
    assert [CODES[c] for c in game.pile] == ["7C", "JK", "JK", "4C"]


def test_joker_as_last_card_stays_on_top_and_any_card_answers():
    game = state_game([["2H", "3H", "KD"], ["JK"]], pile=["9C"], current=1)
    game.apply(J)
    assert game.top == J and game.out_seat == 1 and game.current == 0
    assert game.legal_actions() == sorted(kind(c) for c in ["2H", "3H", "KD"])
    stock_top = [CODES[c] for c in game.stock[-2:]][::-1]
    game.apply(play("3H"))
    assert stock_top == ["2C", "3C"]
    assert game.out_seat == -1 and hand(game, 1) == stock_top  # back in with 2 cards, plays on next
    assert game.current == 1 and game.phase == PLAY


# ----------------------------------------------------------- unable to play
def test_unable_with_several_cards_draws_then_discards_choice():
    deck = arrange_deck({1: ["2C", "3C", "4C", "5C", "6C"], 0: ["9H", "TH", "JH", "QH", "KH"]}, "AD", ["8S"])
    game = new_game(deck)
    game.apply(play("2C"))
    # seat 0 cannot play on a 2: the env drew 8S for it, now it must discard
    assert game.current == 0 and game.phase == DISCARD
    assert hand(game, 0) == sorted(["9H", "TH", "JH", "QH", "KH", "8S"])
    assert game.legal_actions() == sorted(14 + kind(c) for c in ["9H", "TH", "JH", "QH", "KH", "8S"])
    game.apply(discard("QH"))
    assert [CODES[c] for c in game.discard] == ["QH"] and game.own_discards[0][kind("QH")] == 1
    assert game.current == 1 and game.phase == PLAY and game.hand_size[0] == 5


def test_drawn_card_cannot_be_played_this_turn():
    deck = arrange_deck({1: ["2C", "3C", "4C", "5C", "6C"], 0: ["9H", "TH", "JH", "QH", "KH"]}, "AD", ["3S"])
    game = new_game(deck)
    game.apply(play("2C"))
    assert game.phase == DISCARD and all(a >= 14 for a in game.legal_actions())  # 3S drawn, not playable now


def test_unable_with_one_card_draws_and_keeps():
    game = state_game([["KH"], ["2C", "3C"]], pile=["4D"], stock=["9S"], current=1)
    game.apply(play("3C"))  # seat 0 holds KH only, cannot play on 3
    assert hand(game, 0) == ["9S", "KH"] and not game.discard
    assert game.current == 1 and game.phase == PLAY


def test_unable_and_nothing_to_draw_passes():
    # all 54 cards are in the hands and on the play pile: stock and discard pile are empty
    low = [c for c in CODES[:52] if c[0] in "34"] + ["2D", "2H", "2S"]
    rest = [c for c in CODES if c not in low and c not in ("TC", "2C")] + ["JK"]
    game = state_game([low, rest, ["2C"]], pile=["TC"], current=1, size=54)
    assert not game.stock and not game.discard
    game.apply(play("TD"))
    # seat 2 (one card, 2C) cannot play on a 10: the stock is rebuilt from TC, seat 2 draws it and keeps it;
    # seat 0 holds only 2s, 3s and 4s: unable, nothing to draw: it passes without a discard
    assert hand(game, 2) == ["2C", "TC"] and ("rebuild", 1) in game.log
    assert ("pass", 0) in game.log and game.hand_size[0] == 11 and not game.discard
    assert game.current == 1 and game.phase == PLAY


def test_stock_rebuilt_from_discard_and_pile_under_top():
    game = state_game([["KH", "QH"], ["2C", "3C"]], pile=["5D", "6D", "4S"], stock=[], discard_pile=["9S", "8S"],
                      current=1, size=54)  # fmt: skip
    # the unused cards sit at the stock's bottom: move them to hands so the stock is empty
    extra = [c for c in game.stock]
    game.stock = []
    for card in extra:
        game.give(1, card)
    game.apply(play("3C"))  # 3C on 4S; seat 0 holds K, Q: unable, the stock is empty
    assert ("rebuild", 5) in game.log
    assert [CODES[c] for c in game.pile] == ["3C"]
    assert game.phase == DISCARD and game.hand_size[0] == 3 and len(game.stock) == 4
    drawn = set(hand(game, 0)) - {"KH", "QH"}
    assert drawn <= {"5D", "6D", "4S", "9S", "8S"} and not game.discard


def test_rebuild_is_shuffled_with_rng():
    stocks = set()
    for seed in range(6):
        game = state_game([["KH", "QH"], ["2C", "3C"]], pile=["5D", "6D", "7D", "8D", "4S"],
                          discard_pile=["9S", "8S", "7S"], current=1, seed=seed)  # fmt: skip
        extra = game.stock[:]
        game.stock = []
        for card in extra:
            game.give(1, card)
        game.apply(play("3C"))
        stocks.add(tuple(game.stock))
    assert len(stocks) > 1


# ------------------------------------------------------------- going out
def test_going_out_not_answered_ends_deal_and_scores():
    deck = arrange_deck({1: ["2C", "3C", "4C", "5C", "6C"], 0: ["9H", "TH", "JH", "QH", "KH"]}, "AD",
                        ["9S", "9D", "9C", "TS"])  # fmt: skip
    game = new_game(deck, single_deal=True)
    for card, drop in [("2C", "9S"), ("3C", "9D"), ("4C", "9C"), ("5C", "TS")]:
        game.apply(play(card))
        assert game.phase == DISCARD and game.current == 0
        game.apply(discard(drop))
    stock_before = len(game.stock)
    end = game.apply(play("6C"))
    assert end is not None and end.went_out == 1 and not end.truncated
    # seat 0 (9 10 J Q K) cannot play on a 6: the deal ends, seat 0 neither draws nor discards
    assert end.points == (9 + 10 + 10 + 10 + 10, 0) and game.totals == [49, 0]
    assert len(game.stock) == stock_before and game.hand_size[0] == 5 and game.match_over


def test_going_out_answered_player_draws_two_and_is_back_in():
    game = state_game([["KD", "QD"], ["4C"], ["5H", "9S"]], pile=["3C"], stock=["2S", "7S"], current=1)
    game.apply(play("4C"))
    assert game.out_seat == 1 and game.current == 2 and game.legal_actions() == [kind("5H")]
    game.apply(play("5H"))
    assert game.out_seat == -1 and hand(game, 1) == ["2S", "7S"] and not game.deal_over
    assert game.current == 0  # play goes on clockwise from the answerer


def test_answer_with_joker_draw_comes_after_free_card():
    game = state_game([["KD", "QD"], ["4C"], ["JK", "9S", "KC"]], pile=["3C"], stock=["2S", "7S"], current=1)
    game.apply(play("4C"))
    assert game.current == 2 and game.legal_actions() == [J]
    game.apply(J)
    assert game.phase == PLAY_AFTER_JOKER and game.out_seat == 1 and game.hand_size[1] == 0
    game.apply(play("9S"))
    assert game.out_seat == -1 and hand(game, 1) == ["2S", "7S"]


def test_answerer_also_going_out_passes_the_question_on():
    game = state_game([["KD", "QD"], ["4C"], ["5H"], ["6H", "2D"]], pile=["3C"], stock=["2S", "7S", "8S"], current=1)
    game.apply(play("4C"))
    assert game.out_seat == 1 and game.current == 2
    game.apply(play("5H"))  # seat 2 answers and goes out too: seat 1 draws 2, seat 3 must answer seat 2
    assert hand(game, 1) == ["2S", "7S"] and game.out_seat == 2 and game.current == 3
    game.apply(play("6H"))
    assert game.out_seat == -1 and "8S" in hand(game, 2) and game.hand_size[2] == 2


def test_answerer_going_out_unanswered_ends_deal():
    game = state_game([["KD", "QD"], ["4C"], ["5H"]], pile=["3C"], stock=["2S", "7S"], current=1, single_deal=True)
    game.apply(play("4C"))
    end = game.apply(play("5H"))
    # seat 1 drew 2S 7S and is back in; seat 0 (K, Q) cannot play on 5: the deal ends, seat 2 went out
    assert end is not None and end.went_out == 2
    assert end.points == (20, 2 + 7, 0)


def test_two_players_answerer_out_then_first_player_answers():
    game = state_game([["4C"], ["5H"]], pile=["3C"], stock=["6S", "KS"], current=0)
    game.apply(play("4C"))
    assert game.current == 1 and game.out_seat == 0
    game.apply(play("5H"))  # seat 1 goes out answering; seat 0 draws 6S KS and must answer seat 1
    assert hand(game, 0) == ["6S", "KS"] and game.out_seat == 1 and game.current == 0
    assert game.legal_actions() == [kind("6S")]


# ------------------------------------------------------- match progression
def test_hundred_points_eliminates_and_last_standing_wins():
    game = state_game([["KD", "QD"], ["4C"]], pile=["3C"], totals=[85, 50], current=1)
    end = game.apply(play("4C"))
    assert end.eliminated == (0,) and end.winner == 1 and game.match_over and game.totals == [105, 50]


def test_just_below_hundred_stays_and_next_deal_rotates_dealer():
    game = state_game([["KD", "QD", "9S"], ["4C"], ["TD", "JD"]], pile=["3C"], totals=[70, 10, 0], current=1,
                      dealer=0)  # fmt: skip
    end = game.apply(play("4C"))  # seat 2 (T, J) cannot answer a 4
    assert end.went_out == 1 and end.points == (29, 0, 20) and end.eliminated == () and end.winner == -1
    assert game.totals == [99, 10, 20] and not game.match_over
    assert game.deal_number == 2 and game.dealer == 1 and sum(game.hand_size) in (15, 16)


def test_dealer_rotation_skips_eliminated():
    game = state_game([["KD", "QD"], ["4C"], ["TD", "JD"], ["9C", "9D"]], pile=["3C"], totals=[0, 0, 95, 0],
                      current=1, dealer=1)  # fmt: skip
    end = game.apply(play("4C"))
    assert end.eliminated == (2,) and game.dealer == 3 and game.deal_number == 2


def test_switch_108_to_54_when_fifth_player_leaves():
    deck54 = arrange_deck([["2C", "3C", "4C", "5C", "6C"], ["2D", "3D", "4D", "5D", "6D"],
                           ["2H", "3H", "4H", "5H", "6H"], ["2S", "3S", "4S", "5S", "6S"], []], "7S",
                          dealer=1, num_players=5, alive=[True, True, True, True, False])  # fmt: skip
    hands = [["KD", "QD"], ["4C"], ["TD", "JD"], ["9C", "9D"], ["KS"]]
    game = state_game(hands, pile=["3C"], totals=[0, 0, 0, 0, 95], current=1, dealer=0,
                      given_decks=[deck54])  # fmt: skip
    assert game.deck_size == 108
    end = game.apply(play("4C"))
    assert end.eliminated == (4,) and game.deck_size == 54 and game.dealer == 1
    assert hand(game, 0) == ["2C", "3C", "4C", "5C", "6C"] and hand(game, 1) == ["2D", "3D", "4D", "5D", "6D"]
    assert hand(game, 2) == ["2H", "3H", "4H", "5H", "6H"] and hand(game, 3) == ["2S", "3S", "4S", "5S", "6S"]
    assert game.hand_size[4] == 0 and len(game.stock) == 54 - 21


def test_decks_list_skips_sizes_not_needed():
    deck54 = list(DECK_54)
    deck108 = list(DECK_108)
    game = RangGame.new(5, np.random.default_rng(0), decks=[deck54, deck108])
    assert game.deck_size == 108 and game.given_decks == [deck54]
    assert sorted(game.hand_cards(1)) == [0, 1, 2, 3, 4]  # cards 0-4 of the 108 deck go to seat 1


# ---------------------------------------------------------------- scoring
def test_points_per_card():
    game = state_game([["2C", "TD", "JH", "QS", "KC", "AD", "JK"], ["4C"], ["8H", "8S"]], pile=["3C"], current=1,
                      single_deal=True)  # fmt: skip
    end = game.apply(play("4C"))  # seat 2 (8, 8) cannot answer a 4
    assert end.points == (2 + 10 + 10 + 10 + 10 + 11 + 15, 0, 16)


def test_turn_limit_truncates():
    game = RangGame.new(4, np.random.default_rng(3), max_turns_per_deal=5, single_deal=True)
    rng = np.random.default_rng(0)
    end = None
    while not game.match_over:
        actions = game.legal_actions()
        end = game.apply(actions[int(rng.integers(len(actions)))])
    assert game.truncated and end is not None and end.truncated and end.went_out == -1


def test_illegal_engine_action_changes_nothing():
    game = state_game([["KD", "QD"], ["4C", "9S"]], pile=["3C"], current=1)
    before = game.to_json()
    with pytest.raises(ValueError):
        game.apply(play("9S"))
    assert game.to_json() == before


def test_clone_is_independent():
    game = RangGame.new(4, np.random.default_rng(1))
    twin = game.clone()
    assert twin.to_json() == game.to_json()
    rng = np.random.default_rng(5)
    while not game.match_over:
        actions = game.legal_actions()
        game.apply(actions[int(rng.integers(len(actions)))])
    assert twin.to_json() != game.to_json() and not twin.match_over


def test_arrange_deck_rejects_overuse():
    with pytest.raises(ValueError, match="used more often"):
        arrange_deck([["2C", "2C", "4C", "5C", "6C"], ["2D", "3D", "4D", "5D", "6D"]], "9S")
