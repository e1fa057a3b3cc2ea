import pytest

from cardenvs import cards


def test_indices_follow_the_documented_encoding():
    assert cards.parse_card("2C") == 0
    assert cards.parse_card("AC") == 12
    assert cards.parse_card("2D") == 13
    assert cards.parse_card("QH") == 2 * 13 + 10
    assert cards.parse_card("AS") == 51
    assert cards.parse_card("JK") == cards.JOKER == 52


def test_ten_spellings_and_case():
    assert cards.parse_card("TD") == cards.parse_card("10D") == cards.parse_card("10d") == 13 + 8


def test_numpy_integers_are_card_indices():
    import numpy as np

    assert cards.parse_card(np.int64(51)) == 51
    assert cards.parse_deck(np.arange(52), cards.standard_deck()) == list(range(52))
    with pytest.raises(ValueError):
        cards.parse_card(np.bool_(True))


def test_codes_round_trip():
    for index in range(53):
        assert cards.parse_card(cards.card_code(index)) == index


@pytest.mark.parametrize("bad", ["1H", "QX", "", "JKK", 53, -1, True, None, 2.0])
def test_bad_codes(bad):
    with pytest.raises(ValueError):
        cards.parse_card(bad)


def test_parse_deck_names_problem():
    deck = [cards.card_code(i) for i in range(52)]
    assert cards.parse_deck(deck, cards.standard_deck()) == list(range(52))
    deck[0] = "3C"
    with pytest.raises(ValueError, match="missing 2C; extra 3C"):
        cards.parse_deck(deck, cards.standard_deck())
    with pytest.raises(ValueError, match="has 51 cards"):
        cards.parse_deck(deck[:51], cards.standard_deck())
    with pytest.raises(ValueError, match="card 3"):
        cards.parse_deck(["2C", "3C", "4C", "ZZ"], cards.standard_deck())
