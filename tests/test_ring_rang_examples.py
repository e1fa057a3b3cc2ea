"""The source text's RING RANG examples (docs/ring_rang.md, "Worked examples"), replayed from constructed decks."""

from __future__ import annotations

import pytest

from cardenvs import ring_rang_v0
from cardenvs.cards import CODES, parse_card
from cardenvs.ring_rang.engine import deck_for_hands

ALI, BILAL, SANA, ZARA = 0, 1, 2, 3
CLUBS, DIAMONDS, HEARTS, SPADES = range(4)


def scripted_round(winners: list[int], chooser: int, trump: int) -> tuple[list[int], list[dict[int, int]]]:
    """A deck and per-trick plays (seat -> card) whose 13 tricks are won by ``winners``.

    Tricks 1-12 are single-suit tricks (suit i % 4, ranks 4g..4g+3 of group g = i // 4),
    the winner holding the top rank; everyone follows suit. The four Aces are left for
    trick 13, the trump Ace with its winner: the leader's Ace is a suit nobody else
    has, so the trump Ace wins it.
    """
    assert len(winners) == 13
    hands: list[list[int]] = [[] for _ in range(4)]
    plays: list[dict[int, int]] = []
    for i in range(12):
        suit, group = i % 4, i // 4
        others = iter(range(4 * group, 4 * group + 3))
        trick = {}
        for seat in range(4):
            rank = 4 * group + 3 if seat == winners[i] else next(others)
            trick[seat] = suit * 13 + rank
            hands[seat].append(trick[seat])
        plays.append(trick)
    other_aces = iter(s * 13 + 12 for s in range(4) if s != trump)
    last = {seat: trump * 13 + 12 if seat == winners[12] else next(other_aces) for seat in range(4)}
    for seat in range(4):
        hands[seat].append(last[seat])
    plays.append(last)
    return deck_for_hands(hands, chooser), plays


def play_round(env, trump: int, plays: list[dict[int, int]]) -> None:
    """Choose trump and play the scripted cards, each seat when selected."""
    env.step(52 + trump)
    for trick in plays:
        for _ in range(4):
            if all(env.terminations.values()):
                return
            seat = int(env.agent_selection.split("_")[1])
            env.step(trick[seat])


def winners_and_lifts(env) -> tuple[list[int], list[int]]:
    history = env.unwrapped.history
    return [t["winner"] for t in history], [t["lifted"] for t in history]


def test_worked_example_tricks_1_to_5():
    tricks = [
        [(ALI, "5C"), (BILAL, "8C"), (SANA, "QC"), (ZARA, "4C")],
        [(SANA, "AD"), (ZARA, "3D"), (ALI, "7D"), (BILAL, "9D")],
        [(SANA, "KD"), (ZARA, "5D"), (ALI, "2D"), (BILAL, "TD")],
        [(SANA, "7S"), (ZARA, "9S"), (ALI, "AS"), (BILAL, "2S")],
        [(ALI, "TS"), (BILAL, "4S"), (SANA, "3S"), (ZARA, "8S")],
    ]
    hands: list[list[int]] = [[] for _ in range(4)]
    for trick in tricks:
        for seat, code in trick:
            hands[seat].append(parse_card(code))
    rest = [c for c in range(52) if all(c not in h for h in hands)]
    for i, card in enumerate(rest):
        hands[i % 4].append(card)
    deck = deck_for_hands(hands, chooser=ALI)
    env = ring_rang_v0.env(episode="round")
    env.reset(seed=0, options={"deck": [CODES[c] for c in deck], "chooser": ALI})
    assert env.agent_selection == "player_0"
    env.step(52 + HEARTS)
    for trick in tricks:
        for seat, code in trick:
            assert env.agent_selection == f"player_{seat}"
            env.step(parse_card(code))
    winners, lifts = winners_and_lifts(env)
    assert winners == [SANA, SANA, SANA, ALI, ALI]
    assert lifts == [0, 0, 3, 0, 2]
    game = env.unwrapped.game
    assert game.lifted == [5, 0]
    assert game.pile == 0
    assert env.agent_selection == "player_0"  # Ali leads trick 6


def run_scripted(winners, chooser=ALI, trump=HEARTS, **kwargs):
    deck, plays = scripted_round(winners, chooser, trump)
    env = ring_rang_v0.env(episode="round", **kwargs)
    env.reset(seed=0, options={"deck": deck, "chooser": chooser})
    play_round(env, trump, plays)
    return env


def test_when_the_opponent_trumps_in():
    # Ali wins 1 and 2 (2 on the pile: no first lift), Bilal 3, Ali 4: 4 on the pile, nobody lifts.
    env = run_scripted([ALI, ALI, BILAL, ALI, ALI] + [SANA, ZARA] * 4)
    winners, lifts = winners_and_lifts(env)
    assert winners[:5] == [ALI, ALI, BILAL, ALI, ALI]
    assert lifts[:4] == [0, 0, 0, 0]
    assert lifts[4] == 5  # Ali winning trick 5 lifts all 5


def test_when_the_opponent_trumps_in_with_a_real_trump():
    """The source text's story card by card: Bilal, void in diamonds, trumps Ali's KD with a heart."""
    plays = [
        {ALI: "AC", BILAL: "2C", SANA: "3C", ZARA: "4C"},
        {ALI: "AS", BILAL: "2S", SANA: "3S", ZARA: "4S"},
        {ALI: "KD", BILAL: "2H", SANA: "2D", ZARA: "3D"},
        {BILAL: "QS", ALI: "KS", SANA: "5S", ZARA: "6S"},
        {ALI: "KC", BILAL: "5C", SANA: "6C", ZARA: "7C"},
    ]
    hands: list[list[int]] = [[] for _ in range(4)]
    for trick in plays:
        for seat, code in trick.items():
            hands[seat].append(parse_card(code))
    # Bilal must be void in diamonds: give him no diamonds at all.
    rest = [c for c in range(52) if all(c not in h for h in hands)]
    diamonds = [c for c in rest if c // 13 == DIAMONDS]
    others = [c for c in rest if c // 13 != DIAMONDS]
    order = [ALI, SANA, ZARA]
    for i, card in enumerate(diamonds):
        hands[order[i % 3]].append(card)
    for card in others:
        short = min(range(4), key=lambda s: (len(hands[s]), s))
        hands[short].append(card)
    assert all(len(h) == 13 for h in hands)
    env = ring_rang_v0.env(episode="round")
    env.reset(seed=0, options={"deck": deck_for_hands(hands, ALI), "chooser": ALI})
    env.step(52 + HEARTS)
    for trick in plays:
        for _ in range(4):
            seat = int(env.agent_selection[-1])
            env.step(parse_card(trick[seat]))
    winners, lifts = winners_and_lifts(env)
    assert winners == [ALI, ALI, BILAL, ALI, ALI]
    assert lifts == [0, 0, 0, 0, 5]


def test_ali_two_then_bilal_two_lifts_four():
    env = run_scripted([ALI, ALI, BILAL, BILAL] + [SANA, ZARA] * 4 + [SANA])
    winners, lifts = winners_and_lifts(env)
    assert winners[:4] == [ALI, ALI, BILAL, BILAL]
    assert lifts[:4] == [0, 0, 0, 4]


ROUND_1 = [BILAL, ALI, BILAL, ALI, ALI, SANA, SANA, ZARA, BILAL, ZARA, SANA, ALI, BILAL]
ROUND_2 = [ZARA, ZARA, ZARA, ALI, SANA, SANA, BILAL, ZARA, ALI, SANA, BILAL, BILAL, BILAL]
ROUND_3 = [ZARA, ALI, ZARA, SANA, ZARA, BILAL, ZARA, ALI, BILAL, SANA, SANA, SANA, SANA]


# The seed's simulated rounds 1 and 2: (tricks' winners, lifts, lifted per team, winning team, next chooser)
SIMULATED_ROUNDS = {
    "round_1_chooser_team_wins_7_6": (ROUND_1, [0, 0, 0, 0, 5, 0, 2, 0, 0, 0, 0, 0, 6], [7, 6], 0, SANA),
    "round_2_opponents_turn_it_3_10": (ROUND_2, [0, 0, 3, 0, 0, 3, 0, 0, 0, 0, 0, 6, 1], [3, 10], 1, BILAL),
}


@pytest.mark.parametrize("case", SIMULATED_ROUNDS.values(), ids=SIMULATED_ROUNDS.keys())
def test_simulated_rounds_1_and_2(case):
    tricks, expected_lifts, lifted, team, next_chooser = case
    env = run_scripted(tricks)
    winners, lifts = winners_and_lifts(env)
    assert winners == tricks
    assert lifts == expected_lifts
    raw = env.unwrapped
    assert raw.game.lifted == lifted
    assert raw.rounds[0]["points"] == 1 and raw.rounds[0]["winner_team"] == team
    assert raw.rounds[0]["next_chooser"] == next_chooser
    sign = 1 if team == 0 else -1
    assert env._cumulative_rewards == {"player_0": sign, "player_1": -sign, "player_2": sign, "player_3": -sign}
    assert all(env.terminations.values())


def test_simulated_round_3_nullerputz_two_points():
    env = run_scripted(ROUND_3)
    winners, lifts = winners_and_lifts(env)
    assert winners == ROUND_3
    assert lifts == [0] * 10 + [11, 0, 2]
    assert sum(1 for w in winners if w == ZARA) == 4
    raw = env.unwrapped
    assert raw.game.lifted == [13, 0]
    assert raw.rounds[0]["points"] == 2 and raw.rounds[0]["next_chooser"] == SANA
    assert env._cumulative_rewards == {"player_0": 2, "player_1": -2, "player_2": 2, "player_3": -2}


def test_nullerputz_against_the_chooser_three_points():
    winners = [BILAL, BILAL, BILAL, ZARA, ZARA, BILAL, ZARA, BILAL, ZARA, BILAL, BILAL, ZARA, ZARA]
    env = run_scripted(winners)
    raw = env.unwrapped
    assert raw.game.lifted == [0, 13]
    assert raw.rounds[0]["points"] == 3 and raw.rounds[0]["next_chooser"] == BILAL
    assert env._cumulative_rewards == {"player_0": -3, "player_1": 3, "player_2": -3, "player_3": 3}


def test_three_rounds_in_a_game_rotate_the_chooser():
    """Round 1 won by the chooser's team (Ali): Sana chooses round 2; she loses it: Zara (her left) chooses."""
    deck1, plays1 = scripted_round(ROUND_1, ALI, HEARTS)
    # Round 2 chosen by Sana; team B wins it, so Zara (left of Sana) chooses round 3.
    shifted = [(w + 2) % 4 for w in ROUND_2]  # the same story with Sana as chooser
    deck2, plays2 = scripted_round(shifted, SANA, SPADES)
    env = ring_rang_v0.env()
    env.reset(seed=3, options={"decks": [deck1, deck2], "chooser": ALI})
    raw = env.unwrapped
    assert (raw.game.chooser, raw.game.dealer) == (ALI, ZARA)
    play_round(env, HEARTS, plays1)
    assert raw.game.scores == [1, 0]
    assert (raw.game.chooser, raw.game.dealer) == (SANA, BILAL)
    assert env.agent_selection == "player_2"
    play_round(env, SPADES, plays2)
    assert raw.game.scores == [1, 1]
    assert [r["lifted"] for r in raw.rounds] == [[7, 6], [3, 10]]
    assert (raw.game.chooser, raw.game.dealer) == (ZARA, SANA)
    assert env.agent_selection == "player_3"
    assert raw.game.round_number == 2
    assert not any(env.terminations.values())


@pytest.mark.parametrize("winners", [ROUND_1, ROUND_2, ROUND_3])
def test_scripted_rounds_are_legal_play(winners):
    """Every scripted card was legal (the env raises otherwise) and all 13 tricks were played."""
    env = run_scripted(winners)
    assert len(env.unwrapped.history) == 13
    assert sum(env.unwrapped.game.lifted) == 13


def test_stop_when_decided_ends_round_2_at_trick_12():
    env = run_scripted(ROUND_2, stop_when_decided=True)
    raw = env.unwrapped
    assert len(raw.history) == 12
    assert raw.game.lifted == [3, 9]
    assert env._cumulative_rewards == {"player_0": -1, "player_1": 1, "player_2": -1, "player_3": 1}
    assert all(env.terminations.values())


def test_stop_when_decided_waits_while_nullerputz_is_possible():
    # Round 1: team A has 7 after trick 7 but team B has none yet: the points are not certain.
    env = run_scripted(ROUND_1, stop_when_decided=True)
    assert len(env.unwrapped.history) == 13
    # Round 3: nothing decided before the end (a Nullerputz).
    env = run_scripted(ROUND_3, stop_when_decided=True)
    assert len(env.unwrapped.history) == 13


def test_game_ends_when_a_team_reaches_20():
    deck, plays = scripted_round(ROUND_3, ALI, HEARTS)  # a Nullerputz for the chooser's team: 2 points
    env = ring_rang_v0.env()
    env.reset(seed=1, options={"deck": deck, "chooser": ALI})
    snap = env.unwrapped.snapshot()
    snap["game"]["scores"] = [18, 19]
    env.unwrapped.restore(snap)
    play_round(env, HEARTS, plays)
    raw = env.unwrapped
    assert raw.game.scores == [20, 19] and raw.game.over and raw.game.winner_team == 0
    assert env._cumulative_rewards == {"player_0": 1, "player_1": -1, "player_2": 1, "player_3": -1}
    assert all(env.terminations.values())
