"""The Rang rule-based agents: decisions on hand-made positions, and legal play over random deals."""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_script import play_episode

from cardenvs import rang_v0
from cardenvs.agents.base import RandomAgent
from cardenvs.agents.registry import make_agent
from cardenvs.cards import RANKS
from cardenvs.rang.engine import ACE_KIND, JOKER_KIND, arrange_deck
from cardenvs.rang.rules import (
    GreedyRangAgent,
    StrongRangAgent,
    answer_chance,
    read_view,
    top_at_my_turn,
)

AGENTS = (GreedyRangAgent, StrongRangAgent)
# Seat 0 holds cards that cannot follow the low cards seat 1 plays, so seat 1 keeps the turn.
BLOCKED = ["QH", "QD", "QS", "QC", "JH"]


def kind(name: str) -> int:
    """Kind index of a rank name ("K") or "JK"."""
    return JOKER_KIND if name == "JK" else RANKS.index(name)


def play(name: str) -> int:
    return kind(name)


def discard(name: str) -> int:
    return 14 + kind(name)


def position(hand: list[str], start: str, stock: list[str] = (), opponent: list[str] = BLOCKED):
    """A 2-player deal, dealer 0: seat 1 (``hand``) moves first on ``start``."""
    env = rang_v0.env(num_players=2, episode="deal")
    deck = arrange_deck({1: hand, 0: opponent}, start, list(stock), dealer=0)
    env.reset(seed=0, options={"deck": deck, "dealer": 0})
    return env


def drive(env, actions: list[int]) -> None:
    """Scripted actions, in turn order, whoever is to act."""
    for action in actions:
        env.step(action)


def turn_of(agent, env, seat: str = "player_1") -> list[int]:
    """Let ``agent`` act while ``seat`` is to act (a Joker's free card included); the actions taken."""
    taken = []
    while env.agents and env.agent_selection == seat and not any(env.terminations.values()):
        action = agent.act(env.observe(seat))
        taken.append(action)
        env.step(action)
    return taken


def hand_of(env, seat: int = 1) -> list[int]:
    return [round(x * 8) for x in rang_v0.decode_observation(env.observe(f"player_{seat}")["observation"])["hand"]]


def test_sheds_the_costly_card():
    # On a 9, both an 8 and a Ten may follow: the Ten costs more; the 3-4-5 chain stays.
    for make in AGENTS:
        env = position(["8C", "TD", "3H", "4S", "5C"], "9D")
        assert turn_of(make(seed=0, num_players=2), env) == [play("T")]


def test_discards_the_costliest_card():
    # Nothing follows a 2: the env draws the 5 and the agent discards; the King is costly and isolated.
    for make in AGENTS:
        env = position(["7C", "8D", "KH", "QS", "9C"], "2D", ["5D"], opponent=["JH", "JD", "JS", "JC", "TH"])
        obs = env.observe("player_1")
        assert obs["observation"][28 + 2] == 1.0  # discard phase
        assert make(seed=0, num_players=2).act(obs) in (discard("K"), discard("Q"))


def test_strong_keeps_the_joker_when_another_play_exists():
    env = position(["JK", "7C", "3D", "9H", "TS"], "7D")
    assert turn_of(StrongRangAgent(seed=0, num_players=2), env) == [play("7")]
    env = position(["JK", "7C", "3D", "9H", "TS"], "7D")
    assert turn_of(GreedyRangAgent(seed=0, num_players=2), env)[0] == play("JK")  # the greedy one does not


def test_strong_keeps_an_escape_for_the_last_card():
    # Seat 1 sheds 5 and 6 (seat 0 cannot follow and discards the Kings it draws); then with
    # Joker, Ace, 9 on a 6 only the Ace or the Joker may be played. A good player never keeps a
    # lone 9: either the Ace now (the Joker takes the 9 next turn) or Joker + free 9 (the Ace is last).
    env = position(["5C", "6C", "JK", "AH", "9C"], "4H", ["KH", "KS"])
    drive(env, [play("5"), discard("K"), play("6"), discard("K")])
    assert env.agent_selection == "player_1"
    turn_of(StrongRangAgent(seed=0, num_players=2), env)
    left = hand_of(env)
    assert sum(left) in (1, 2)
    assert left[ACE_KIND] == 1 or left[JOKER_KIND] == 1


def test_greedy_free_card_is_the_costliest():
    env = position(["JK", "KC", "3D", "4H", "5S"], "9D")
    assert turn_of(GreedyRangAgent(seed=0, num_players=2), env) == [play("JK"), play("K")]


@pytest.mark.parametrize("make", AGENTS)
def test_goes_out_with_joker_and_free_card(make):
    # Joker and 8 on a 7: playing the 8 would leave a lone Joker; Joker + 8 goes out now,
    # and seat 0 (Queens, a Jack) cannot answer an 8: the deal ends, seat 1 scores 0.
    env = position(["5C", "6C", "7C", "JK", "8D"], "4H", ["KH", "KS", "KC"])
    drive(env, [play("5"), discard("K"), play("6"), discard("K"), play("7"), discard("K")])
    assert turn_of(make(seed=0, num_players=2), env) == [play("JK"), play("8")]
    assert all(env.terminations.values())
    assert env.rewards["player_1"] == 0.0 and env.rewards["player_0"] < 0


def test_strong_free_card_keeps_the_chain_on_a_top_it_can_follow():
    # After the forced Joker the free card is chosen: not a card that breaks the 3-4-5 chain's ends
    # away from the top the agent will meet again.
    env = position(["JK", "KC", "3D", "4H", "5S"], "9D")
    actions = turn_of(StrongRangAgent(seed=0, num_players=2), env)
    assert actions[0] == play("JK") and len(actions) == 2
    top = int(np.argmax(rang_v0.decode_observation(env.observe("player_1")["observation"])["top"]))
    left = hand_of(env)
    assert any(left[k] for k in (top - 1, top + 1) if 0 <= k < ACE_KIND)  # it can follow its own card


def test_answer_chance_and_top_model():
    unseen = [4] * 13 + [2]
    assert answer_chance(JOKER_KIND, 1, unseen) == 1.0
    assert answer_chance(5, 0, unseen) == 0.0
    # An Ace is followed only by 2, Ace, Joker: harder to answer than a middle card; more cards answer more.
    assert answer_chance(ACE_KIND, 3, unseen) < answer_chance(kind("K"), 3, unseen) < answer_chance(5, 3, unseen)
    assert answer_chance(5, 2, unseen) < answer_chance(5, 5, unseen)
    env = position(["8C", "TD", "3H", "4S", "5C"], "9D")
    view = read_view(env.observe("player_1"), 2)
    assert view.hand_sizes == [5, 5] and view.next_seat == view.previous_seat == 1
    assert sum(view.unseen) == 54 - 5 - 1
    dist = top_at_my_turn(kind("8"), view)
    assert sum(dist) == pytest.approx(1.0)
    assert dist[kind("8")] + dist[kind("7")] + dist[kind("9")] > dist[kind("3")]


def test_registry_and_bad_observation():
    for name, cls in (("rules_basic", GreedyRangAgent), ("rules_strong", StrongRangAgent)):
        agent = make_agent(name, "rang", seed=1, num_players=4)
        assert isinstance(agent, cls)
    agent = make_agent("rules_strong:block=1.5", "rang", seed=1, num_players=4)
    assert agent.weights["block"] == 1.5
    with pytest.raises(ValueError, match="bad parameters"):
        make_agent("rules_strong:nonsense=1", "rang", num_players=4)
    env = position(["8C", "TD", "3H", "4S", "5C"], "9D")
    with pytest.raises(ValueError, match="num_players=4"):
        make_agent("rules_strong", "rang", num_players=4).act(env.observe("player_1"))
    with pytest.raises(ValueError, match="out of turn"):
        GreedyRangAgent(num_players=2).act(env.observe("player_0"))


@pytest.mark.parametrize("num_players, deals", [(2, 150), (4, 100), (7, 50)])
def test_only_legal_actions_over_random_deals(num_players, deals):
    """Each rule agent in every seat against the other and random; illegal actions would raise."""
    env = rang_v0.env(num_players=num_players, episode="deal", illegal_action="raise")
    rng = np.random.default_rng(num_players)
    kinds = (GreedyRangAgent, StrongRangAgent, RandomAgent)
    decisions = 0
    for deal in range(deals):
        seats = [kinds[(seat + deal) % 3](seed=int(rng.integers(1 << 30)), num_players=num_players)
                 for seat in range(num_players)]  # fmt: skip
        decisions += len(play_episode(env, seats, seed=deal))
    assert decisions > deals * num_players
