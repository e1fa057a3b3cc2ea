"""Agents from outside the package: import paths, entry points, agent objects (issue 33, items 1, 2 and 5)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from cardenvs.agents import outside, registry
from cardenvs.agents.base import Agent
from cardenvs.agents.outside import OutsideAgent
from cardenvs.agents.registry import available_agents, check_spec, gauntlet_agents, make_agent, parse_spec
from cardenvs.train.evaluate import evaluate_agents, format_gauntlet, format_table

BOTS = textwrap.dedent('''
    import numpy as np
    from cardenvs.agents.base import Agent

    SEEN = []

    class GreedyBot:
        """An object with act(), not an Agent: plays the highest legal action."""
        def __init__(self, depth=1, seed=None, game=None):
            self.depth, self.seed, self.game = depth, seed, game
        def act(self, observation):
            return int(np.flatnonzero(observation["action_mask"])[-1])

    class LowBot(Agent):
        name = "low"
        def act(self, observation):
            return int(np.flatnonzero(observation["action_mask"])[0])

    def make_bot(seed=None, game=None, num_players=None, **params):
        SEEN.append((game, num_players, params))
        return GreedyBot(seed=seed, game=game, **params)

    def lowest(observation):
        return int(np.flatnonzero(observation["action_mask"])[0])

    def make_function(game):
        return lowest

    def make_illegal(**_):
        return lambda observation: int(np.flatnonzero(observation["action_mask"] == 0)[0])

    def make_nothing():
        return 42
''')


@pytest.fixture
def bots(tmp_path, monkeypatch):
    """A module ``mybots`` of outside agents, importable as the user's own code would be."""
    (tmp_path / "mybots.py").write_text(BOTS)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("mybots", None)
    yield tmp_path
    sys.modules.pop("mybots", None)


def test_parse_spec_reads_import_paths():
    assert parse_spec("mybots.greedy:make_bot") == ("mybots.greedy:make_bot", {})
    assert parse_spec("mybots.greedy:GreedyBot:depth=3,wide=true") == ("mybots.greedy:GreedyBot",
                                                                        {"depth": 3, "wide": True})
    assert parse_spec("rules_strong:keep_trumps=2") == ("rules_strong", {"keep_trumps": 2})
    assert parse_spec("policy:path=C:/x.npz") == ("policy", {"path": "C:/x.npz"})


@pytest.mark.parametrize("spec, kind", [("mybots:make_bot", "GreedyBot"), ("mybots:GreedyBot:depth=3", "GreedyBot"),
                                        ("mybots:LowBot", "LowBot"), ("mybots:lowest", "function"),
                                        ("mybots:make_function", "function")])
def test_every_form_of_import_path_plays(bots, spec, kind):
    agent = make_agent(spec, "rang", seed=1, num_players=3)
    assert isinstance(agent, OutsideAgent) and agent.name == spec
    inner = agent.inner
    assert (inner.__name__ == "lowest") if kind == "function" else type(inner).__name__ == kind
    result = evaluate_agents([spec, "random"], game="rang", num_players=3, deals=2)
    assert result["episodes"] == 2 * 6 and sum(row["forfeits"] for row in result["table"]) == 0


def test_the_factory_gets_seed_game_players_and_parameters(bots):
    import mybots

    agent = make_agent("mybots:make_bot:depth=3", "ring_rang", seed=7)
    assert mybots.SEEN[-1] == ("ring_rang", 4, {"depth": 3})
    assert (agent.inner.depth, agent.inner.seed, agent.inner.game) == (3, 7, "ring_rang")
    make_agent("mybots:make_bot", "rang", seed=None, num_players=6)
    assert mybots.SEEN[-1] == ("rang", 6, {})


def test_bad_import_paths_are_one_line_errors(bots):
    cases = {"nosuchmodule_xyz:make": "cannot import module 'nosuchmodule_xyz': ModuleNotFoundError",
             "mybots:nothing_here": "module 'mybots' has no attribute 'nothing_here'",
             "mybots:GreedyBot:colour=red": "bad parameters",
             "mybots:lowest:depth=3": "a policy function takes no parameters",
             "mybots:make_nothing": "has no act(observation) method"}
    for spec, message in cases.items():
        with pytest.raises(ValueError, match=re.escape(message)) as error:
            make_agent(spec, "ring_rang", seed=0)
        assert "\n" not in str(error.value)
    (bots / "broken_bot.py").write_text("raise RuntimeError('boom at import')\n")
    with pytest.raises(ValueError, match="cannot import module 'broken_bot': RuntimeError: boom at import"):
        check_spec("broken_bot:make", "rang")


def test_an_illegal_answer_forfeits_the_episode(bots):
    result = evaluate_agents(["mybots:make_illegal", "random"], game="ring_rang", deals=2)
    rows = {row["agent"]: row for row in result["table"]}
    assert rows["mybots:make_illegal"]["forfeits"] == 4 and rows["mybots:make_illegal"]["wins"] == 0
    assert rows["random"]["wins"] == 4  # the other side wins a forfeited episode
    assert "played illegal action" in rows["mybots:make_illegal"]["forfeit_reasons"][0]
    assert "forfeits: mybots:make_illegal gave up 4 episode(s)" in format_table(result)


class Mine(Agent):
    """An agent object of a user's own script: plays the first legal action."""

    name = "mine"

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


def first_legal(observation):
    return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.mark.parametrize("workers", [1, 2])
def test_python_api_takes_objects_and_gives_what_the_cli_prints(bots, workers, capsys):
    from cardenvs.train import evaluate

    by_object = evaluate_agents([Mine(), "rules_basic"], game="ring_rang", deals=6, workers=workers)
    by_function = evaluate_agents([first_legal, "rules_basic"], game="ring_rang", deals=6, workers=workers)
    by_spec = evaluate_agents(["mybots:LowBot", "rules_basic"], game="ring_rang", deals=6)
    assert evaluate.main(["--game", "ring_rang", "--agents", "mybots:LowBot", "rules_basic", "--deals", "6",
                          "--no-progress"]) == 0
    printed = capsys.readouterr().out
    wins = [{row["agent"].replace("first_legal", "x").replace("mine", "x").replace("mybots:LowBot", "x"):
             row["wins"] for row in result["table"]} for result in (by_object, by_function, by_spec)]
    assert wins[0] == wins[1] == wins[2]
    assert format_table(by_spec).splitlines()[:4] == printed.splitlines()[:4]
    assert "mine" in format_table(by_object)


def test_python_api_gauntlet_and_bad_line_ups(bots):
    result = evaluate_agents([Mine()], game="rang", deals=1, gauntlet=True)
    assert [row["opponent"] for row in result["rows"]] == gauntlet_agents("rang")
    assert "worst:" in format_gauntlet(result)
    # an object labelled like an agent spec (a function named policy, an agent named random) gets its own label,
    # before any work, instead of being refused after it
    impostor = type("R", (Agent,), {"name": "random", "act": staticmethod(first_legal)})()
    result = evaluate_agents([impostor, "random"], deals=1)
    assert {row["agent"] for row in result["table"]} == {"random (object)", "random"}

    def policy(observation):
        return int(np.flatnonzero(observation["action_mask"])[0])
    assert evaluate_agents([policy, "random"], deals=1)["table"][0]["agent"] in ("policy (object)", "random")
    with pytest.raises(ValueError, match="expected a list"):
        evaluate_agents("random", deals=1)


def test_unpicklable_objects_with_workers_say_what_to_do():
    with pytest.raises(ValueError, match="use workers=1"):
        evaluate_agents([lambda observation: first_legal(observation), "random"], deals=4, workers=2)


def test_import_path_from_the_command_line_config_and_workers(bots, tmp_path):
    """The CLI finds ./mybots.py in the current folder, in a config too, with two workers and the gauntlet."""
    config = tmp_path / "eval.yaml"
    config.write_text("game: rang\nagents: ['mybots:GreedyBot:depth=2', random]\ndeals: 4\nworkers: 2\n")
    run = [sys.executable, "-m", "cardenvs.cli", "eval", "--no-progress"]
    out = subprocess.run([*run, "--config", str(config)], cwd=bots, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "mybots:GreedyBot:depth=2" in out.stdout
    out = subprocess.run([*run, "--game", "rang", "--agents", "mybots:make_bot", "--gauntlet", "--deals", "1",
                          "--workers", "2"], cwd=bots, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "worst: vs gauntlet_" in out.stdout
    out = subprocess.run([*run, "--agents", "nosuch_mod_q:make", "random"], cwd=bots, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "cannot import module 'nosuch_mod_q'" in out.stderr


@pytest.fixture
def plugin(tmp_path, monkeypatch, bots):
    """An installed package publishing agents under the entry-point group cardenvs.agents."""
    dist = tmp_path / "mybot_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mybot-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[cardenvs.agents]\nmybot = mybots:make_bot\n"
                                           "random = mybots:LowBot\nbroken = nosuch_mod_z:make\n")
    outside.entry_points.cache_clear()
    yield
    outside.entry_points.cache_clear()


def test_entry_points_are_named_like_built_in_agents(plugin):
    import mybots

    assert "mybot" in available_agents("ring_rang") and "mybot" in available_agents("rang")
    assert "mybot" not in gauntlet_agents("rang")
    agent = make_agent("mybot:depth=3", "rang", seed=2, num_players=5)
    assert agent.name == "mybot:depth=3" and agent.inner.depth == 3
    assert mybots.SEEN[-1] == ("rang", 5, {"depth": 3})
    assert type(make_agent("random", "rang", seed=0)).__name__ == "RandomAgent"  # a registered name wins
    with pytest.raises(ValueError, match="entry point 'nosuch_mod_z:make'.*cannot load it"):
        make_agent("broken", "rang", seed=0)
    result = evaluate_agents(["mybot", "rules_basic"], game="ring_rang", deals=2)
    assert {row["agent"] for row in result["table"]} == {"mybot", "rules_basic"}


def test_entry_points_show_in_help_and_play_from_the_command_line(plugin, bots, capsys):
    from cardenvs.train import evaluate

    with pytest.raises(SystemExit):
        evaluate.main(["--help"])
    assert "mybot" in capsys.readouterr().out
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(bots), *sys.path])}
    out = subprocess.run([sys.executable, "-m", "cardenvs.cli", "eval", "--game", "rang", "--agents", "mybot:depth=2",
                          "--gauntlet", "--deals", "1", "--workers", "2", "--no-progress"], env=env, cwd=bots,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "rang gauntlet: mybot:depth=2 vs each" in out.stdout


def test_registry_lists_the_outside_forms_when_a_name_is_unknown():
    with pytest.raises(ValueError, match="module.path:attr .* exec:path=PROGRAM .* onnx:path=FILE"):
        check_spec("nosuchagent", "ring_rang")
    assert "exec" in registry.available_agents("rang") and "onnx" in registry.available_agents("ring_rang")


def test_docs_example_runs(tmp_path):
    """docs/benchmark.md's Python example, as written there."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "benchmark.md").read_text()
    example = text.split("## From Python", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    assert len(example.strip().splitlines()) <= 20
    script = tmp_path / "example.py"
    script.write_text(example.replace("deals=200", "deals=4"))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "win rate" in out.stdout
