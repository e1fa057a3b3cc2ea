"""The installed package, seen from cardenvs: the table lists it and the commands play it (nothing edited in cardenvs).

cardenvs's own conformance test runs every registered game through every feature; these are the plugin's
quick checks of the same, from its side.
"""

from __future__ import annotations

import itertools

import gymnasium
import numpy as np
import pytest
from cardenvs_crazy_eights.spec import SPEC

from cardenvs.agents.registry import available_agents, make_agent
from cardenvs.games import GAMES, game_spec
from cardenvs.play import TerminalGame
from cardenvs.replay import html_replay, record, replay
from cardenvs.serve import WebGame
from cardenvs.train.evaluate import evaluate_agents


def test_the_table_lists_the_game_by_every_spelling():
    assert GAMES["crazy_eights"] == SPEC and not GAMES["crazy_eights"].builtin
    for spelling in ("crazy_eights", "crazy-eights", "Crazy Eights", "crazy_eights_v0"):
        assert game_spec(spelling) is GAMES["crazy_eights"]
    agents = available_agents("crazy_eights")
    assert {"random", "rules_basic", "rules_strong", "pimc", "ismcts", "oracle", "policy"} <= set(agents)
    assert "trained" not in agents and not [a for a in agents if a.startswith("gauntlet_")]


def test_the_harness_scores_a_positive_reward_as_a_win():
    result = evaluate_agents(["rules_strong", "random"], game="crazy_eights", deals=20, num_players=3, workers=1)
    table = {row["agent"]: row for row in result["table"]}
    # one seat wins each deal that is not truncated (the harness asked the spec's scoring)
    assert sum(row["wins"] for row in table.values()) == result["episodes"] - result["truncated"] > 0
    assert result["points_meaning"].startswith(SPEC.scoring.points_meaning)  # the harness adds the direction
    assert table["rules_strong"]["win_rate"] > table["random"]["win_rate"]


@pytest.mark.parametrize("agent", ["pimc:iterations=20,rollout=basic", "ismcts:iterations=20", "oracle:iterations=20"])
def test_search_agents_play_legal_moves(agent):
    env = SPEC.make_env(num_players=3)
    env.reset(seed=2)
    searcher = make_agent(agent, "crazy_eights", seed=0, num_players=3)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        searcher.observe_env(env)
        action = searcher.act(obs)
        assert obs["action_mask"][action]
        env.step(action)


def test_play_in_the_terminal_records_a_game_that_replays():
    answers = itertools.cycle(["1"])
    lines: list[str] = []
    session = TerminalGame("crazy_eights", {"num_players": 3}, 0, ["rules_basic"], seed=4, color=False,
                           read=lambda prompt: next(answers), write=lines.append)
    assert session.run()
    assert any("=== deal over" in line for line in lines)
    data = record("crazy_eights_v0", {"num_players": 3}, 4, None, session.actions, session.specs)
    final = replay(data).unwrapped.game
    assert final.is_over() and final.to_json() == session.raw.game.to_json()
    page = html_replay(data, observer=1)
    hidden = [card for seat in (0, 2) for card in session.raw.game.to_json()["hands"][seat]]
    assert "<html" in page.lower() and all(f'"{code}"' not in page for code in hidden if code)


def test_serve_plays_a_whole_game():
    game = WebGame("crazy_eights", {"num_players": 4}, 1, ["rules_strong"], 7)
    for _ in range(300):
        if game.finished:
            break
        moves = game.moves()
        assert moves and all(m["face"] is None or m["codes"] == [m["face"]] for m in moves)
        game.move(moves[0]["action"], len(game.actions))
    state = game.state()
    assert game.finished and state["view"]["game"] == "crazy_eights"
    assert all(seat["cards"] is None for i, seat in enumerate(state["view"]["seats"]) if i != 1)


def test_gymnasium_id_plays_one_seat():
    env = gymnasium.make(SPEC.gym_id, num_players=2)
    obs, info = env.reset(seed=0)
    for _ in range(500):
        mask = obs["action_mask"] if isinstance(obs, dict) else info["action_mask"]
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(mask)[0]))
        if terminated or truncated:
            break
    assert terminated or truncated
