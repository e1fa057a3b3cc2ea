"""A game's scoring sees the whole episode (issue 44 item 12), and the harness refuses a scoring whose winners
contradict the rewards (item 13). The games here are copies of the example plugin's spec with another
``Scoring``, put in the games table for the test."""

from __future__ import annotations

from dataclasses import replace

import pytest

from cardenvs.games import GAMES, EpisodeEnd, Scoring, game_spec
from cardenvs.train.evaluate import evaluate_agents, run_records

PLUGIN = "crazy_eights"


@pytest.fixture
def scored(monkeypatch):
    """Put a copy of the plugin's spec with ``scoring`` in the games table (in this process: workers=1)."""

    def install(scoring: Scoring):
        spec = replace(game_spec(PLUGIN), scoring=scoring)
        monkeypatch.setitem(GAMES._table(), PLUGIN, spec)
        return spec

    return install


def cards_left(game, episode: str) -> list[int]:
    """The raw points of a Hearts-like reading of Crazy Eights: the cards each seat still holds."""
    return [game.hand_size(seat) for seat in range(game.num_players)]


def fewest_points_win(end: EpisodeEnd) -> tuple[list[float], list[int]]:
    fewest = min(end.raw_points)
    return list(end.raw_points), [s for s, p in enumerate(end.raw_points) if p == fewest]


def test_a_scoring_that_sees_the_whole_outcome_states_raw_points_and_winners(scored):
    settings = {"game": PLUGIN, "deals": 8, "seed": 5, "num_players": 3, "workers": 1}
    before = run_records(evaluate_config(**settings))
    spec = scored(Scoring(raw_points=cards_left, outcome=fewest_points_win, fewer_points_better=True,
                          points_meaning="cards left in hand (fewer is better)"))
    after = run_records(evaluate_config(**settings))
    assert [r.rewards for r in after] == [r.rewards for r in before]  # the same deals, played the same
    for old, new in zip(before, after, strict=True):
        if old.truncated:
            assert new.winner_seats == []
            continue
        assert new.winner_seats == old.winner_seats  # the one who went out: no cards left
        assert all(p == int(p) >= 0 for p in new.points) and new.points[new.winner_seats[0]] == 0
        assert sorted(new.points)[1] > 0  # the others hold cards: raw points, not the reward
    result = evaluate_agents(["rules_basic", "random"], **settings)
    assert result["points_meaning"] == spec.scoring.points_meaning
    assert all(row["mean_points"] >= 0 for row in result["table"])


def evaluate_config(**settings):
    from cardenvs.train.evaluate import EvalConfig

    return EvalConfig(agents=["rules_basic", "random"], progress=False, **settings)


def test_the_per_seat_interface_still_works_and_raw_points_alone_become_the_points(scored):
    per_seat = run_records(evaluate_config(game=PLUGIN, deals=4, seed=1, workers=1))
    assert all(sorted(r.points)[-1] == 1.0 for r in per_seat if not r.truncated)  # reward +1 to the winner
    scored(Scoring(raw_points=cards_left))  # the win is still the reward's (won: reward > 0)
    raw = run_records(evaluate_config(game=PLUGIN, deals=4, seed=1, workers=1))
    assert [r.winner_seats for r in raw] == [r.winner_seats for r in per_seat]
    assert all(r.points[r.winner_seats[0]] == 0 and min(p for p in r.points if p) >= 1 for r in raw if not r.truncated)


@pytest.mark.parametrize("scoring, says", [
    (Scoring(won=lambda reward, episode: reward < 0), "so seat {best} should have won"),
    (Scoring(raw_points=cards_left, outcome=lambda end: (end.raw_points, [end.raw_points.index(max(end.raw_points))])),
     "so seat {best} should have won"),
])
def test_the_harness_refuses_a_scoring_whose_winners_contradict_the_rewards(scored, capsys, scoring, says):
    """Before: inverted win rates, exit 0; only the conformance test noticed, with ``assert all(<genexpr>)``."""
    from cardenvs.cli import main

    scored(scoring)
    with pytest.raises(ValueError) as caught:
        evaluate_agents(["rules_basic", "random"], game=PLUGIN, deals=2, seed=0)
    message = str(caught.value)
    assert message.startswith(f"{PLUGIN}'s scoring (GameSpec.scoring, in {__name__}) contradicts its rewards: in a "
                              "deal with rewards [")
    best = int(message.split(" a loser")[0].rsplit("seat ", 1)[1])
    assert says.format(best=best) in message and "\n" not in message
    assert main(["eval", "--game", PLUGIN, "--agents", "rules_basic", "random", "--deals", "2", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {PLUGIN}'s scoring") and err.count("\n") == 1


def test_judge_checks_the_shape_and_the_sides():
    spec = game_spec(PLUGIN)
    assert spec.judge(EpisodeEnd("deal", (1.0, -0.5, -0.5))) == ([1.0, -0.5, -0.5], [0])
    assert spec.judge(EpisodeEnd("deal", (1.0, -0.5, -0.5), truncated=True)) == ([1.0, -0.5, -0.5], [])
    assert spec.judge(EpisodeEnd("deal", (-0.5, -0.5, -0.5))) == ([-0.5, -0.5, -0.5], [])  # nobody won: no error
    short = replace(spec, scoring=Scoring(outcome=lambda end: ([0.0], [0])))
    with pytest.raises(ValueError, match=r"gave points \[0.0\] and winners \[0\] for 3 seats: expected a point per"):
        short.judge(EpisodeEnd("deal", (1.0, -0.5, -0.5)))
    ring = game_spec("ring_rang")
    assert ring.judge(EpisodeEnd("round", (3.0, -3.0, 3.0, -3.0)))[1] == [0, 2]
    split = replace(ring, scoring=Scoring(outcome=lambda end: (list(end.rewards), [0, 1])))
    with pytest.raises(ValueError, match=r"declares seats \[0, 1\] the winners; in a partnership game the winners "
                                         r"are one whole side \(seats \[0, 2\]\)"):
        split.judge(EpisodeEnd("round", (3.0, 3.0, 3.0, 3.0)))
    assert "should have won" in ring.result_problem(EpisodeEnd("round", (3.0, -3.0, 3.0, 4.0)), [0, 2])
