"""Every registered game, built-in or installed plugin, through every feature of the package (issue 38).

The games come from the table (:data:`cardenvs.games.GAMES`): RING RANG, Rang, and any package that
publishes a spec under the entry-point group ``cardenvs.games`` — the example plugin
``examples/crazy_eights`` is installed by ``scripts/test.sh`` and ``.ci/run``. A game is exempt from a
check only where its spec says so (``GameSpec.exempt``: check -> reason); a missing capability it does
not declare (a batched engine, a gauntlet, search rules) must fail in one line where it is asked for.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from cardenvs.core import Game
from cardenvs.games import GAME_NAMES, GameSpec, check_spec, game_spec

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_PLUGIN = "crazy_eights"
CHECKS = ("api", "seed", "engine", "json", "scoring", "no_leak", "gym", "render", "text", "search", "play",
          "serve", "replay", "eval", "benchmark", "train")


def spec_of(name: str, check: str) -> GameSpec:
    """The spec of ``name``; the check is skipped only where the spec declares the exemption (with its reason)."""
    assert check in CHECKS
    spec = game_spec(name)
    if check in spec.exempt:
        pytest.skip(f"{name} is exempt from {check}: {spec.exempt[check]}")
    return spec


def random_positions(spec: GameSpec, count: int, seed: int = 0):
    """``count`` (raw env, seat to act) positions reached by random legal play from random deals."""
    rng = random.Random(seed)
    found = 0
    while found < count:
        raw = spec.make_raw_env(num_players=spec.players_or_fixed(None))
        raw.reset(seed=rng.randrange(2**31))
        game = raw.game
        for _ in range(rng.randrange(0, 40)):
            if game.is_over():
                break
            game.step(rng.choice(game.legal_actions()))
        if not game.is_over():
            found += 1
            yield raw, game.current_player(), rng


def test_the_example_plugin_is_installed_and_is_not_a_builtin():
    assert EXAMPLE_PLUGIN in GAME_NAMES, (
        "the example plugin game is not installed: pip install --no-deps -e examples/crazy_eights "
        "(scripts/test.sh and .ci/run do)")
    assert not game_spec(EXAMPLE_PLUGIN).builtin
    assert {"ring_rang", "rang"} <= {name for name in GAME_NAMES if game_spec(name).builtin}


@pytest.mark.parametrize("game", GAME_NAMES)
def test_spec_is_well_formed_and_names_what_it_has(game):
    spec = game_spec(game)
    check_spec(spec, taken=set())
    spec.check_env_players()  # the env builds and deals at the spec's fewest and most seats, and no other count
    assert set(spec.exempt) <= set(CHECKS), "an exemption names an unknown check"
    for role in spec.parts:
        assert spec.part(role) is not None
    for name, factory in spec.agents.items():
        module, _, attr = factory.partition(":")
        assert callable(getattr(__import__(module, fromlist=[attr]), attr)), name
    if not spec.has_vector_env:
        with pytest.raises(ValueError, match="has no batched engine"):
            spec.vector_env_class()


@pytest.mark.parametrize("players, says", [
    ((2, 6), "declares 2-6 players (GameSpec.players), but its env refuses 6 (num_players must be"),
    ((3, 4), "declares 3-4 players (GameSpec.players), but its env also takes 2 (it must refuse"),
    ((2, 3), "declares 2-3 players (GameSpec.players), but its env also takes 4"),
])
def test_a_spec_whose_player_range_is_not_its_engines_is_refused(players, says):
    """A copy of the example plugin's spec (an engine of 2-4 players) declaring another range: before, it
    passed every check, which built the env at the fewest and the default seats only."""
    from dataclasses import replace

    wrong = replace(game_spec(EXAMPLE_PLUGIN), players=players)
    check_spec(wrong, taken=set())  # nothing a look at the spec alone can see
    with pytest.raises(ValueError, match=f"^{EXAMPLE_PLUGIN}: its spec {re.escape(says)}"):
        wrong.check_env_players()
    if players[1] > 4:  # building the env at a count the spec declares and the env refuses blames the spec
        with pytest.raises(ValueError, match="its spec declares 2-6 players .* but its env refuses 6"):
            wrong.make_env(num_players=6)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_pettingzoo_api_test(game):
    spec = spec_of(game, "api")
    for n in sorted({spec.players[0], spec.players_or_fixed(None), spec.players[1]}):  # the range's ends too
        api_test(spec.make_env(num_players=n), num_cycles=200)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_pettingzoo_seed_test(game):
    spec = spec_of(game, "seed")
    seed_test(lambda: spec.make_env(), num_cycles=100)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_engine_and_env_agree_step_by_step(game):
    """The env is its engine behind PettingZoo: same seat to act, same legal actions, same observations."""
    spec = spec_of(game, "engine")
    for seed in range(3):
        env = spec.make_env()
        env.reset(seed=seed)
        raw = env.unwrapped
        engine = raw.game.clone()
        assert isinstance(engine, Game)
        rng = random.Random(seed)
        for agent in env.agent_iter(5000):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            seat = raw.possible_agents.index(agent)
            assert engine.current_player() == seat
            assert list(np.flatnonzero(obs["action_mask"])) == list(engine.legal_actions())
            assert np.array_equal(obs["observation"], engine.observe(seat))
            action = rng.choice(engine.legal_actions())
            engine.step(action)
            env.step(action)
        assert engine.is_over()


@pytest.mark.parametrize("game", GAME_NAMES)
def test_snapshot_json_round_trip_continues_identically(game):
    spec = spec_of(game, "json")
    env = spec.make_env()
    env.reset(seed=11)
    rng = random.Random(11)
    for _ in range(15):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        env.step(rng.choice(list(np.flatnonzero(obs["action_mask"]))))
    text = json.dumps(env.unwrapped.snapshot())
    copy = spec.make_env()
    copy.reset(seed=999)
    copy.unwrapped.restore(text)
    for _ in range(200):
        a, b = env.last(), copy.last()
        assert env.agent_selection == copy.agent_selection
        assert np.array_equal(a[0]["observation"], b[0]["observation"]) and a[1:4] == b[1:4]
        if a[2] or a[3]:
            break
        action = rng.choice(list(np.flatnonzero(a[0]["action_mask"])))
        env.step(action)
        copy.step(action)


def check_harness_result(spec: GameSpec, unit: str, record) -> None:
    """One harness record against the spec's scoring, with a message that says which seat should have won, and why."""
    kind = spec.episodes[unit]
    end = spec.episode_end(kind, record.rewards, record.truncated)
    where = f"{spec.name}, unit {unit} ({kind}), deal {record.deal} arrangement {record.arrangement}"
    rewards = "[" + ", ".join(f"{r:.4g}" for r in record.rewards) + "]"
    best = [s for s, r in enumerate(record.rewards) if r == max(record.rewards)]
    winners = sorted(record.winner_seats)
    if spec.scoring.raw_points is None:  # without raw points the rewards alone decide (else the engine's end)
        assert winners == spec.judge(end)[1], (
            f"{where}: the harness declared seats {winners} the winners, the spec's scoring says "
            f"{spec.judge(end)[1]} (rewards {rewards})")
        assert record.points == spec.judge(end)[0], f"{where}: points {record.points} are not the scoring's"
    assert winners, (f"{where}: an untruncated episode without a winner (rewards {rewards}): seat(s) {best}, with "
                     "the best reward, should have won by the spec's scoring (Scoring.won or Scoring.outcome)")
    problem = spec.result_problem(end, winners)
    assert not problem, f"{where}: the spec's scoring {problem}"


@pytest.mark.parametrize("game", GAME_NAMES)
def test_harness_winners_follow_the_spec_scoring(game):
    """Every untruncated episode of the harness has winners, by the spec's own rule, and no loser was paid more
    than a winner (in a partnership game, the winners are one side)."""
    from cardenvs.train.evaluate import EvalConfig, run_records

    spec = spec_of(game, "scoring")
    for unit in ("deal", "game"):
        config = EvalConfig(game=game, agents=["random", "rules_basic" if "rules_basic" in spec.agents else "random"],
                            deals=6, seed=3, unit=unit, workers=1, progress=False)
        for record in run_records(config):
            if not record.truncated:
                check_harness_result(spec, unit, record)


@pytest.mark.parametrize("game", GAME_NAMES)
def test_no_leak_worlds_dealt_from_what_a_seat_knows_look_the_same_to_it(game):
    """The game's sampler deals the cards a seat cannot see anew; the seat's observation and table view must not
    change (and the worlds must really differ, or the check would prove nothing)."""
    spec = spec_of(game, "no_leak")
    rules = spec.part("search")()
    view_of = spec.part("view")
    differed = 0
    for raw, seat, rng in random_positions(spec, 25):
        game_state = raw.game
        known = rules.view(game_state, seat, rules.new_memory())
        for _ in range(3):
            world = rules.sample(known, rng)
            assert np.array_equal(world.observe(seat), game_state.observe(seat))
            assert view_of(world, seat)["seats"] == view_of(game_state, seat)["seats"]
            differed += world.to_json() != game_state.to_json()
    assert differed > 0


@pytest.mark.parametrize("game", GAME_NAMES)
def test_gym_id_plays_whole_episodes(game):
    import gymnasium

    spec = spec_of(game, "gym")
    env = gymnasium.make(spec.gym_id, opponents="random")
    obs, info = env.reset(seed=0)
    for _ in range(2):
        done = False
        while not done:
            action = int(np.flatnonzero(info["action_mask"])[0])
            obs, reward, term, trunc, info = env.step(action)
            done = term or trunc
        obs, info = env.reset()
    env.close()


@pytest.mark.parametrize("game", GAME_NAMES)
def test_view_png_and_html_render_and_hide_the_other_hands(game):
    from cardenvs.render import draw_view, env_view, html_page

    spec = spec_of(game, "render")
    env = spec.make_env()
    env.reset(seed=5)
    raw = env.unwrapped
    full = env_view(env)
    assert full["game"] == spec.name and {"title", "phase", "seats", "result"} <= set(full)
    for seat in range(raw.num_players):
        mine = env_view(env, seat)
        assert all(s["cards"] is None for i, s in enumerate(mine["seats"]) if i != seat)
        assert mine["seats"][seat]["cards"] == full["seats"][seat]["cards"]
    image = draw_view(full)
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3 and image.std() > 0
    page = html_page([{"caption": "start", "view": full}])
    assert "tableHtml" in page and json.dumps(spec.name) in page


@pytest.mark.parametrize("game", GAME_NAMES)
def test_text_names_every_legal_move_and_the_table(game):
    spec = spec_of(game, "text")
    env = spec.make_env()
    env.reset(seed=2)
    raw = env.unwrapped
    seat = raw.possible_agents.index(env.agent_selection)
    text = spec.part("text")(raw, seat, False)
    choices = text.choices(env.legal_actions())
    assert sorted(c.action for c in choices) == sorted(env.legal_actions())
    assert all(c.label for c in choices)
    assert isinstance(text.table(), str) and text.table().strip()
    assert text.facts() is not None  # what events() compares the next table with


@pytest.mark.parametrize("game", GAME_NAMES)
def test_search_agents_play_or_the_game_says_it_has_none(game):
    from cardenvs.agents.registry import available_agents, make_agent

    spec = spec_of(game, "search")
    if not spec.has_part("search"):
        assert "pimc" not in available_agents(game)
        with pytest.raises(ValueError, match="unknown agent 'pimc'"):
            make_agent("pimc", game)
        return
    from cardenvs.train.evaluate import EvalConfig, evaluate

    for searcher in ("pimc:iterations=8,worlds=2", "ismcts:iterations=8"):
        result = evaluate(EvalConfig(game=game, agents=[searcher, "random"], deals=1, seed=1, workers=1,
                                     progress=False))
        assert sum(row["episodes"] for row in result["table"]) > 0


@pytest.mark.parametrize("game", GAME_NAMES)
def test_play_in_the_terminal_to_the_end_and_record_replays(game, tmp_path):
    from cardenvs.play import main
    from cardenvs.replay import load, replay

    spec_of(game, "play")
    replays = "replay" not in game_spec(game).exempt
    record = tmp_path / "game.json"
    answers = iter(["1"] * 100_000)
    assert main([game, "--seed", "4", "--opponents", "random", "--record", str(record), "--no-color"],
                read=lambda prompt: next(answers)) == 0
    if not replays:
        return
    data = load(str(record))
    assert data["env"] == game_spec(game).name and data["actions"]
    env = replay(data)
    assert all(env.terminations[a] or env.truncations[a] for a in env.agents) or not env.agents


@pytest.mark.parametrize("game", GAME_NAMES)
def test_serve_plays_a_whole_game_through_its_api(game):
    from cardenvs.serve import App, WebGame, page

    spec = spec_of(game, "serve")
    app = App(lambda s: WebGame(spec.name, {}, 0, ["random"] * (spec.players_or_fixed(None) - 1), s), 7)
    assert "tableHtml" in page(app)
    web = app.game
    web.advance()
    for _ in range(100_000):
        if web.finished:
            break
        state = web.state()
        assert all(s["cards"] is None for i, s in enumerate(state["view"]["seats"]) if i != 0)
        web.move(state["moves"][0]["action"], state["turn"])
    assert web.finished and web.state()["seed"] == 7


@pytest.mark.parametrize("game", GAME_NAMES)
def test_eval_cli_and_a_custom_benchmark_run(game, tmp_path, capsys):
    from cardenvs.cli import main

    spec = spec_of(game, "eval")
    assert main(["eval", "--game", game, "--agents", "random", "rules_basic" if "rules_basic" in spec.agents
                 else "random", "--deals", "4", "--no-progress"]) == 0
    assert capsys.readouterr().out.startswith(f"{game}: 4 deals")
    bot = f"exec:path={REPO / 'examples' / 'bots' / 'random_bot.py'}"  # a bot in its own process, any game
    assert main(["eval", "--game", game, "--agents", bot, "random", "--deals", "2", "--no-progress"]) == 0
    assert "forfeits:" not in capsys.readouterr().out  # the bot answered every decision legally, in time
    if not spec.gauntlet:
        assert main(["eval", "--game", game, "--agents", "random", "--gauntlet", "--deals", "1"]) == 2
        assert "has no gauntlet" in capsys.readouterr().err
    if "benchmark" in spec.exempt:
        return
    code = main(["benchmark", "--game", game, "--agent", "random", "--deals", "2", "--opponents", "random",
                 "--out", str(tmp_path / "card"), "--no-progress"])
    if spec.protocols:
        assert code == 0 and (tmp_path / "card" / "scorecard.json").is_file()
    else:
        assert code == 2 and "no benchmark protocol" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("game", GAME_NAMES)
def test_a_tiny_training_run_exports_a_policy_that_plays(game, tmp_path):
    """The SB3 self-play trainer on any game; the batched trainer where the game ships a batched engine, else
    a one-line refusal."""
    spec = spec_of(game, "train")
    config = tmp_path / "tiny.yaml"
    config.write_text(f"game: {game}\nrun_dir: {tmp_path / 'run'}\ntotal_steps: 512\nn_steps: 256\nbatch_size: 64\n"
                      "n_epochs: 1\nopponents: {random: 1.0}\nsnapshot_weight: 0.0\neval_every: 100000\n"
                      "eval_deals: 2\neval_opponents: [random]\ncheckpoint_every: 100000\n")
    run = subprocess.run([sys.executable, "-m", "cardenvs.cli", "train", "--config", str(config)],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    policy = tmp_path / "run" / "policy.npz"
    from cardenvs.agents.registry import make_agent

    agent = make_agent(f"policy:path={policy}", game, **spec.env_info(spec.players_or_fixed(None)))
    env = spec.make_env()
    env.reset(seed=0)
    obs = env.observe(env.agent_selection)
    assert obs["action_mask"][agent.act(obs)]
    vector = tmp_path / "vector.yaml"
    vector.write_text(f"game: {game}\nrun_dir: {tmp_path / 'vrun'}\ntotal_steps: 2048\nnum_envs: 16\nnum_steps: 64\n"
                      "minibatch_size: 256\neval_every: 100000\neval_deals: 2\neval_opponents: [random]\n")
    run = subprocess.run([sys.executable, "-m", "cardenvs.cli", "train-vector", "--config", str(vector)],
                         capture_output=True, text=True, timeout=600, cwd=tmp_path)
    if spec.has_vector_env:
        assert run.returncode == 0, run.stderr[-2000:]
    else:
        assert run.returncode == 2 and "has no batched engine" in run.stderr
        assert len(run.stderr.strip().splitlines()) == 1


def test_a_plugin_spec_imported_before_cardenvs_is_still_listed():
    """``from plugin.spec import SPEC`` first: cardenvs's import reads the table while that module is half-run;
    the plugin must be listed once it has finished, not dropped with a warning."""
    code = ("from cardenvs_crazy_eights.spec import SPEC\nfrom cardenvs.games import GAMES\n"
            "assert 'crazy_eights' in GAMES and GAMES['crazy_eights'] == SPEC, list(GAMES)\n")
    run = subprocess.run([sys.executable, "-W", "error::UserWarning", "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
