"""The evaluation harness: deals are fixed by the seed, duplicate form swaps teams, outputs are written."""

import json

import pytest

from cardenvs.train.evaluate import EvalConfig, arrangements, deal_options, evaluate, format_table, load_config, main


def test_duplicate_form_swaps_teams():
    config = EvalConfig(game="ring_rang", agents=["a", "b"])
    assert arrangements(config) == [["a", "b", "a", "b"], ["b", "a", "b", "a"]]


def test_rang_rotates_seats_and_labels_repeats():
    config = EvalConfig(game="rang", agents=["random", "random"], num_players=4)
    assert arrangements(config) == [["random#0", "random#1"] * 2, ["random#1", "random#0"] * 2]


def test_rang_seats_are_shared_evenly_when_they_do_not_divide():
    config = EvalConfig(game="rang", agents=["a", "b"], num_players=7)
    layouts = arrangements(config)
    assert len(layouts) == 14
    assert sum(seats.count("a") for seats in layouts) == sum(seats.count("b") for seats in layouts) == 49
    for seat in range(7):
        assert sum(seats[seat] == "a" for seats in layouts) == 7


def test_rang_with_more_agents_than_seats_plays_every_group_rotated():
    config = EvalConfig(game="rang", agents=["a", "b", "c", "d", "e"], num_players=4)
    layouts = arrangements(config)
    assert len(layouts) == 5 * 4  # C(5, 4) groups, each in 4 rotations
    for name in "abcde":
        assert [sum(seats[s] == name for seats in layouts) for s in range(4)] == [4] * 4
    for pair in [("a", "b"), ("a", "c"), ("b", "e"), ("d", "e")]:
        assert sum(set(pair) <= set(seats) for seats in layouts) == 3 * 4
    result = evaluate(EvalConfig(game="rang", agents=["random", "rules_basic", "rules_strong"], num_players=2,
                                 deals=2, progress=False))
    assert sorted(r["episodes"] for r in result["table"]) == [8, 8, 8]  # 2 deals x 3 pairs x 2 rotations, 2 of 3
    assert len(result["rating"]["table"]) == 3


def test_deals_are_a_function_of_seed_and_index():
    config = EvalConfig(game="ring_rang", seed=3)
    assert deal_options(config, 5) == deal_options(config, 5)
    assert deal_options(config, 5) != deal_options(config, 6)
    rang = EvalConfig(game="rang", num_players=5)
    assert len(deal_options(rang, 0)["deck"]) == 108


@pytest.mark.parametrize("game", ["ring_rang", "rang"])
def test_random_vs_random_is_even_and_reproducible(game, tmp_path):
    config = EvalConfig(game=game, agents=["random", "random"], deals=40, progress=False, out=str(tmp_path))
    first = evaluate(config)
    second = evaluate(EvalConfig(game=game, agents=["random", "random"], deals=40, progress=False))
    assert first["table"] == second["table"]
    rows = first["table"]
    assert sum(r["episodes"] for r in rows) == 2 * 80
    # duplicate/rotated deals with identical agents: the two labels split the wins
    low, high = rows[0]["win_rate_ci95"]
    assert low < 0.5 < high or abs(rows[0]["win_rate"] - 0.5) < 0.2
    saved = json.loads((tmp_path / "results.json").read_text())
    assert len(saved["records"]) == 80
    assert (tmp_path / "results.csv").read_text().startswith("agent,episodes")
    assert (tmp_path / "results.png").stat().st_size > 1000
    assert "win rate" in format_table(first)


def test_workers_give_the_same_numbers():
    one = evaluate(EvalConfig(game="rang", agents=["random", "random"], deals=12, progress=False))
    two = evaluate(EvalConfig(game="rang", agents=["random", "random"], deals=12, progress=False, workers=2))
    assert one["table"] == two["table"]


def test_rating_table_with_three_agents():
    result = evaluate(EvalConfig(game="ring_rang", agents=["random"] * 3, deals=5, progress=False))
    assert {r["agent"] for r in result["rating"]["table"]} == {"random#0", "random#1", "random#2"}


def test_bad_config_names_the_field(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("game: ring_rang\ndeels: 10\n")
    with pytest.raises(ValueError, match="deels"):
        load_config(path)
    path.write_text("game: poker\n")
    with pytest.raises(ValueError, match="game"):
        load_config(path)
    assert main(["--game", "rang", "--agents", "nosuchagent", "--deals", "1", "--no-progress"]) == 2


def test_unknown_agent_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown agent 'nosuch'"):
        evaluate(EvalConfig(game="rang", agents=["nosuch"], deals=1, progress=False))
