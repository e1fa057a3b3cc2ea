"""The evaluation harness: deals are fixed by the seed, duplicate form swaps teams, outputs are written."""

import json

import pytest
from games import ALL_GAMES

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


@pytest.mark.parametrize("game", ALL_GAMES)
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


# ------------------------------------------------------------------ issue 18
def _one_line_error(capsys, argv: list[str]) -> str:
    """main(argv) exits 2 with one stderr line and no traceback; that line."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("args, message", [
    (["--agents", "policy:path=nope.npz", "random"], "nope.npz"),
    (["--agents", "pimc:iters=5", "random"], "it takes iterations"),
    (["--game", "rang", "--agents", "trained", "random", "--num-players", "6"], "use --num-players 4"),
    (["--agents", "pimc:iterations=-5", "random", "--workers", "2"], "iterations must be an int >= 1"),
    (["--agents", "random", "random", "--seed", "-1"], "seed: expected an int >= 0"),
    (["--game", "ring_rang", "--num-players", "6"], "RING RANG is always 4 players"),
])
def test_eval_refuses_bad_agents_and_options_in_one_line(args, message, capsys):
    """Item 1: what building an agent finds is reported before any deal, in this process, as one line."""
    assert message in _one_line_error(capsys, [*args, "--deals", "2", "--no-progress"])


def test_eval_refuses_an_unwritable_out_and_unknown_env_kwargs_before_playing(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    argv = ["--deals", "2", "--no-progress", "--out", str(blocker / "x")]
    assert "cannot write there" in _one_line_error(capsys, argv)
    config = tmp_path / "c.yaml"
    config.write_text("game: rang\nagents: [random, random]\ndeals: 2\nenv_kwargs: {bogus: 1}\n")
    assert "bogus" in _one_line_error(capsys, ["--config", str(config), "--no-progress"])


def test_one_agent_plays_itself_as_a_bare_call_does(capsys):
    """Item 2: --agents X alone is the mirror match X#0 vs X#1, not X winning every episode."""
    assert main(["--agents", "random", "--deals", "3", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "random#0" in captured.out and "random#1" in captured.out and "1.000" not in captured.out
    assert "plays itself" in captured.err
    config = EvalConfig(agents=["random"], gauntlet=True)
    config.validate(build=False)
    assert config.agents == ["random"]  # a gauntlet takes one agent


def test_game_names_accept_both_spellings_and_print_one(capsys):
    """Item 4: ring-rang and ring_rang (and the env names) are one game, printed ring_rang."""
    assert main(["--game", "ring-rang", "--agents", "random", "random", "--deals", "1", "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith("ring_rang: ")
    for name in ("ring-rang", "ring_rang_v0", "RING_RANG"):
        config = EvalConfig(game=name)
        config.validate(build=False)
        assert config.game == "ring_rang"
    with pytest.raises(SystemExit) as exit_info:
        main(["--game", "poker"])
    assert exit_info.value.code == 2 and "unknown game 'poker'" in capsys.readouterr().err


def test_workers_are_capped_at_the_work_and_the_cores(capsys, monkeypatch):
    """Item 7: --workers 10000 starts at most one process per deal and per core, and says so."""
    from cardenvs.train import evaluate as module

    monkeypatch.setattr(module.os, "cpu_count", lambda: 2)
    assert module.worker_count(EvalConfig(deals=3, workers=10000)) == (2, "workers: 10000 capped at 2 (2 CPU core(s))")
    assert module.worker_count(EvalConfig(deals=1, workers=8))[0] == 1
    assert module.worker_count(EvalConfig(deals=9, workers=2)) == (2, "")
    assert main(["--agents", "random", "random", "--deals", "2", "--workers", "10000", "--no-progress"]) == 0
    assert "capped at 2" in capsys.readouterr().err


def worker_blas_threads(_job: object) -> list[int]:
    """The BLAS thread counts where a worker runs (a module-level function, so it can be sent to one)."""
    from threadpoolctl import threadpool_info

    return [pool["num_threads"] for pool in threadpool_info()]


def test_worker_processes_get_one_blas_thread_each():
    """Workers share the cores: a batched policy rollout in each must not start a BLAS thread per core."""
    from cardenvs.train.evaluate import worker_map

    threads = list(worker_map(worker_blas_threads, [None, None], 2))
    assert all(threads) and {n for each in threads for n in each} == {1}


def test_help_shows_defaults_and_the_rating_is_explained(capsys):
    """Items 6 and 15: eval -h documents --deals/--seed/--workers/--unit with defaults; the table says what the
    rating is fitted on and shortens long policy paths."""
    with pytest.raises(SystemExit):
        main(["-h"])
    text = capsys.readouterr().out
    for option in ("--deals", "--seed", "--workers", "--unit"):
        assert option in text
    assert "(default 100)" in text and "(default 0)" in text and "(default 1)" in text and "(default deal)" in text
    from cardenvs.train.evaluate import short_label

    assert short_label("policy:path=/home/me/runs/quick-1/policy.npz") == "policy:quick-1/policy"
    assert short_label("policy:path=p.npz,greedy=false#1") == "policy:p,greedy=false#1"
    result = evaluate(EvalConfig(game="rang", agents=["random", "rules_basic", "rules_strong"], deals=2,
                                 progress=False))
    table = format_table(result)
    assert "rating: " in table and "the winner first, then the other agents by points" in table


def test_missing_matplotlib_is_reported_not_claimed(tmp_path, capsys, monkeypatch):
    """Item 8: without matplotlib results.png is not claimed as written; the note names the extra."""
    from cardenvs.train import evaluate as module

    monkeypatch.setattr(module, "plot_win_rates", lambda *a, **k: False)
    assert main(["--agents", "random", "random", "--deals", "1", "--no-progress", "--out", str(tmp_path)]) == 0
    captured = capsys.readouterr()
    assert "results.png" not in captured.out and "pip install 'cardenvs[train]'" in captured.err
    assert not (tmp_path / "results.png").exists()
