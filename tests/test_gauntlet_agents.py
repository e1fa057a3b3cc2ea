"""The gauntlet (evaluation-only opponents): legal play over whole games, seeds, and one style scenario each.

Scenarios are dealt through the envs' reset options (``deck``, ``chooser``, ``dealer``) and driven
with scripted actions up to the decision under test.
"""

from __future__ import annotations

import numpy as np
import pytest

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.agents.base import RandomAgent
from cardenvs.agents.registry import make_agent
from cardenvs.cards import RANKS, parse_card
from cardenvs.rang.engine import DISCARD, JOKER_KIND, arrange_deck
from cardenvs.rang.gauntlet import (
    BlockerAgent,
    DumperAgent,
    EscaperAgent,
    RacerAgent,
)
from cardenvs.rang.rules import GreedyRangAgent
from cardenvs.ring_rang.engine import ACTION_KNOCK, ACTION_TRUMP
from cardenvs.ring_rang.gauntlet import (
    HoarderAgent,
    LifterAgent,
    ReaderAgent,
    SupporterAgent,
)
from cardenvs.ring_rang.rules import BasicRulesAgent, StrongRulesAgent

RING_RANG_NAMES = ("gauntlet_hoarder", "gauntlet_lifter", "gauntlet_reader", "gauntlet_supporter")
RANG_NAMES = ("gauntlet_dumper", "gauntlet_escaper", "gauntlet_blocker", "gauntlet_racer")
CLUBS, DIAMONDS, HEARTS, SPADES = range(4)


# ================================================================== RING RANG
# cards, fill_hands and position (an env dealt those hands, after scripted actions) are shared with
# the baselines' scenario tests.
from fuzz_script import play_episode as play  # noqa: E402
from test_agents_ring_rang import card_played, fill_hands  # noqa: E402
from test_agents_ring_rang import position as ring_position  # noqa: E402


def test_hoarder_does_not_trump_in_on_trick_two():
    # Seat 0 wins trick 1 with the diamond Ace and leads the club King; seat 1 has no club but
    # holds trumps: the hoarder throws a low side card where the greedy player trumps.
    hands = fill_hands(["AD KC", "2D 2S 3S", "3D", "4D"], avoid={1: "C"})
    script = [ACTION_TRUMP + SPADES, "AD", "2D", "3D", "4D", "KC"]
    # The lone heart 2: the lowest side card, and the heart void it leaves lets the hoard ruff later.
    assert card_played(HoarderAgent, ring_position(hands, script)) == parse_card("2H")
    assert card_played(BasicRulesAgent, ring_position(hands, script)) == parse_card("2S")


def test_hoarder_runs_its_trumps_in_the_last_tricks():
    # Seat 0 holds the top trumps and nothing else after trick 1: with the tricks left no more than
    # its trumps, it leads from the top (A, K, ...) to win every trick left and the pile.
    hands = fill_hands(["AD AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S", "2D", "3D", "4D"])
    env = ring_position(hands, [ACTION_TRUMP + SPADES, "AD", "2D", "3D", "4D"])
    assert card_played(HoarderAgent, env) == parse_card("AS")


# Seat 0 wins tricks 1 and 2 with the red Aces: the pile holds 2 tricks and seat 0 the streak,
# so one more win lifts 3. Seat 0 is left with low clubs and the trump King (the Ace is out).
LIFT_HANDS = fill_hands(["AD AH KS 2C 3C", "2D 2H AS", "3D 3H", "4D 4H"])
LIFT_SCRIPT = [ACTION_TRUMP + SPADES, "AD", "2D", "3D", "4D", "AH", "2H", "3H", "4H"]


def test_lifter_goes_all_in_for_the_lift():
    env = ring_position(LIFT_HANDS, LIFT_SCRIPT)
    assert card_played(LifterAgent, env) == parse_card("KS")  # its top trump, though not sure to win
    assert card_played(StrongRulesAgent, ring_position(LIFT_HANDS, LIFT_SCRIPT)) // 13 == CLUBS


def test_lifter_fights_for_a_fresh_trick():
    # Trick 1: the right opponent (seat 3) leads the club 5. The lifter (seat 0) plays its highest
    # club to win and start a streak; the supporter plays second hand low.
    hands = fill_hands(["KD QC 2C 3H 4H", "", "", "5C"])
    env = ring_position(hands, [ACTION_TRUMP + HEARTS, "5C"], chooser=3)
    assert card_played(LifterAgent, env) == parse_card("QC")
    env = ring_position(hands, [ACTION_TRUMP + HEARTS, "5C"], chooser=3)
    assert card_played(SupporterAgent, env) == parse_card("2C")


def test_reader_leads_a_small_trump_to_the_partners_knocked_ace():
    # Partner (seat 2) knocks for the trump Ace in trick 1; seat 0 wins it and leads again.
    hands = fill_hands(["AD 2S 3S 5C 6H", "2D", "3D AS", "4D"], avoid={0: "S", 1: "S", 3: "S"})
    script = [ACTION_TRUMP + SPADES, "AD", "2D", ACTION_KNOCK, "3D", "4D"]
    env = ring_position(hands, script)
    assert card_played(ReaderAgent, env) == parse_card("2S")
    assert card_played(StrongRulesAgent, ring_position(hands, script)) // 13 != SPADES


def test_reader_knocks_honestly_for_every_honour():
    hands = fill_hands(["AS KS 2C 3C 4D", "", "", ""])
    env = ring_position(hands, [ACTION_TRUMP + SPADES])
    agent = ReaderAgent(seed=0)
    actions = []
    while True:
        action = agent.act(env.last()[0])
        actions.append(action)
        env.step(action)
        if action != ACTION_KNOCK:
            break
    assert actions[:2] == [ACTION_KNOCK, ACTION_KNOCK]  # the Ace, then the King
    assert actions[2] < 52


def test_supporter_plays_second_hand_low_but_stops_a_lift():
    # Trick 1: the right opponent (seat 3, the chooser) leads; the supporter in seat 0 holds the
    # club Ace (a sure winner) and still plays low, leaving the trick to partner.
    hands = fill_hands(["AC 2C 3H 4H 5H", "", "", "5C"], avoid={0: "C"})
    env = ring_position(hands, [ACTION_TRUMP + HEARTS, "5C"], chooser=3)
    assert card_played(SupporterAgent, env) == parse_card("2C")
    assert card_played(StrongRulesAgent, ring_position(hands, [ACTION_TRUMP + HEARTS, "5C"], chooser=3)) == (
        parse_card("AC")
    )
    # Trick 3: seat 0 won tricks 1 and 2 and a third win would lift 3 tricks: the supporter
    # (seat 1, second hand) plays its Ace to stop it.
    hands = fill_hands(["AD AH KC", "2D 2H AC 3C", "3D 3H 2C", "4D 4H 4C 5C 6C"], avoid={0: "C", 1: "C", 2: "C"})
    env = ring_position(hands, [ACTION_TRUMP + SPADES, "AD", "2D", "3D", "4D", "AH", "2H", "3H", "4H", "KC"])
    assert card_played(SupporterAgent, env) == parse_card("AC")


# ------------------------------------------------------------------ legality and seeds


@pytest.mark.parametrize("name", RING_RANG_NAMES)
def test_ring_rang_whole_games_legal(name):
    """Whole games (to 20 points) against random, rules_strong and another gauntlet style; and
    rounds with the signal and declaration variants, whose masks hold more actions."""
    others = ["random", "rules_strong", RING_RANG_NAMES[(RING_RANG_NAMES.index(name) + 1) % 4]]
    env = ring_rang_v0.env(episode="game")
    for game, other in enumerate(others):
        agents = [make_agent(name if s % 2 == game % 2 else other, "ring_rang", seed=10 * game + s) for s in range(4)]
        actions = play(env, agents, seed=100 + game)
        assert len(actions) > 13 * 4 * 5
        assert all(getattr(a, "fallbacks", 0) == 0 for a in agents)
    env = ring_rang_v0.env(episode="round", signals=True, declarations=True)
    for round_ in range(10):
        agents = [make_agent(name, "ring_rang", seed=s) if s % 2 else RandomAgent(seed=s) for s in range(4)]
        play(env, agents, seed=round_)
        assert agents[1].fallbacks == agents[3].fallbacks == 0


@pytest.mark.parametrize("name", RING_RANG_NAMES)
def test_ring_rang_same_seed_same_play(name):
    env = ring_rang_v0.env(episode="round")
    runs = [play(env, [make_agent(name, "ring_rang", seed=s) for s in range(4)], seed=5) for _ in range(2)]
    assert runs[0] == runs[1]


# ================================================================== Rang
# Seat 0 holds cards that cannot follow the low cards seat 1 plays, so seat 1 keeps the turn.
BLOCKED = ["QH", "QD", "QS", "QC", "JH"]


def kind(name: str) -> int:
    return JOKER_KIND if name == "JK" else RANKS.index(name)


def discard(name: str) -> int:
    return 14 + kind(name)


def rang_position(hand: list[str], start: str, stock: list[str] = (), opponent: list[str] = BLOCKED):
    """A 2-player deal, dealer 0: seat 1 (``hand``) moves first on ``start``."""
    env = rang_v0.env(num_players=2, episode="deal")
    env.reset(seed=0, options={"deck": arrange_deck({1: hand, 0: opponent}, start, list(stock), dealer=0),
                               "dealer": 0})  # fmt: skip
    return env


def turn_of(agent, env, seat: str = "player_1") -> list[int]:
    """Let ``agent`` act while ``seat`` is to act (a Joker's free card included); the actions taken."""
    taken = []
    while env.agents and env.agent_selection == seat and not any(env.terminations.values()):
        obs = env.observe(seat)
        action = agent.act(obs)
        assert obs["action_mask"][action] == 1
        taken.append(action)
        env.step(action)
    return taken


def rang_phase(env, seat: str) -> int:
    return int(np.argmax(rang_v0.decode_observation(env.observe(seat)["observation"])["phase"]))


def test_dumper_sheds_the_costliest_card_but_keeps_its_escape():
    # On a 9 the Ace (11 points), the Ten (10) and the 8 may be played: the greedy player sheds
    # the Ace, the dumper keeps it as its one escape and sheds the Ten.
    assert turn_of(DumperAgent(seed=0, num_players=2), rang_position(["AH", "TD", "8C", "3H", "4S"], "9D")) == [
        kind("T")
    ]
    assert turn_of(GreedyRangAgent(seed=0, num_players=2), rang_position(["AH", "TD", "8C", "3H", "4S"], "9D")) == [
        kind("A")
    ]
    # Joker and Ace: the Joker goes with the costliest free card, the King; the Ace stays.
    env = rang_position(["JK", "AH", "KC", "3D", "4S"], "9D")
    assert turn_of(DumperAgent(seed=0, num_players=2), env) == [kind("JK"), kind("K")]


def test_escaper_keeps_its_escapes_and_climbs_a_chain():
    # On a 5: the 4, the 6, the Ace and the Joker may be played; the 6 starts the 6-7 chain.
    env = rang_position(["4C", "6C", "7C", "JK", "AH"], "5D")
    assert turn_of(EscaperAgent(seed=0, num_players=2), env) == [kind("6")]
    # Stuck (only the escapes may be played): the Ace goes, the Joker is kept.
    env = rang_position(["AH", "JK", "9C", "9D", "9S"], "5D")
    assert turn_of(EscaperAgent(seed=0, num_players=2), env) == [kind("A")]
    env = rang_position(["AH", "JK", "9C", "9D", "9S"], "5D")
    assert turn_of(GreedyRangAgent(seed=0, num_players=2), env)[0] == kind("JK")


def test_blocker_leaves_a_top_the_next_player_cannot_answer():
    # On a King the Queen or the King may be played (same points). A King is answered by fewer
    # cards than a Queen: the blocker plays it, and the Jacks opposite cannot follow it.
    hand, opponent = ["QC", "KD", "5H", "6S", "7C"], ["JH", "JD", "JS", "JC", "9H"]
    env = rang_position(hand, "KH", ["2C"], opponent=opponent)
    assert turn_of(BlockerAgent(seed=0, num_players=2), env) == [kind("K")]
    assert env.agent_selection == "player_0" and rang_phase(env, "player_0") == DISCARD  # had to draw
    # The escaper climbs its Q-K chain instead and leaves the Queen, which the Jacks answer.
    env = rang_position(hand, "KH", ["2C"], opponent=opponent)
    assert turn_of(EscaperAgent(seed=0, num_players=2), env) == [kind("Q")]


def test_racer_keeps_the_joker_combo_to_go_out_next_turn():
    # After 4 and 5, the racer holds 6, Joker, King on a 5: it plays the 6 and keeps Joker + King,
    # which leave together next turn whatever the top (the greedy player spends them now).
    hand, opponent = ["4C", "5C", "6C", "JK", "KD"], ["2C", "2D", "2H", "2S", "9C"]
    stock = ["8D", "8S", "8H"]

    def after_two_plays():
        env = rang_position(hand, "3H", stock, opponent=opponent)
        for action in (kind("4"), discard("8"), kind("5"), discard("8")):
            env.step(action)
        return env

    env = after_two_plays()
    racer = RacerAgent(seed=0, num_players=2)
    assert turn_of(racer, env) == [kind("6")]
    env.step(discard("8"))  # the opponent cannot follow the 6
    assert turn_of(racer, env) == [kind("JK"), kind("K")]
    assert all(env.terminations.values()) and env.rewards["player_1"] == 0.0  # out: nothing answers a King
    assert turn_of(GreedyRangAgent(seed=0, num_players=2), after_two_plays())[0] == kind("JK")


# ------------------------------------------------------------------ legality and seeds
@pytest.mark.parametrize("num_players", [2, 4, 7])
@pytest.mark.parametrize("name", RANG_NAMES)
def test_rang_whole_matches_legal(name, num_players):
    """Whole matches (to the last player standing) against random, rules_strong and the other styles."""
    env = rang_v0.env(num_players=num_players, episode="match")
    others = ["random", "rules_strong", *[n for n in RANG_NAMES if n != name]]
    decisions = 0
    for match in range(8):
        specs = [
            name if (seat + match) % 2 == 0 else others[(seat + match) % len(others)] for seat in range(num_players)
        ]
        agents = [make_agent(spec, "rang", seed=100 * match + seat, num_players=num_players)
                  for seat, spec in enumerate(specs)]  # fmt: skip
        decisions += len(play(env, agents, seed=match))
        assert all(getattr(a, "fallbacks", 0) == 0 for a in agents)
    assert decisions > 8 * num_players * 5


@pytest.mark.parametrize("name", RANG_NAMES)
def test_rang_same_seed_same_play(name):
    env = rang_v0.env(num_players=4, episode="match")
    runs = [
        play(env, [make_agent(name, "rang", seed=s, num_players=4) for s in range(4)], seed=9) for _ in range(2)
    ]
    assert runs[0] == runs[1]
