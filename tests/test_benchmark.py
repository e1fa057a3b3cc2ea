"""``cardenvs benchmark``: fixed protocols, byte-identical scorecards, a rating on the shipped ladder (issue 33)."""

from __future__ import annotations

import hashlib
import inspect
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from games import PROTOCOL_GAMES

from cardenvs.agents.base import Agent
from cardenvs.agents.policy import trained_path
from cardenvs.agents.registry import available_agents, gauntlet_agents
from cardenvs.games import game_spec
from cardenvs.train import benchmark
from cardenvs.train.benchmark import BenchmarkSettings, load_protocol, run_benchmark, write_scorecard
from cardenvs.train.stats import ELO, fit_ladder, place_on_ladder

ROOT = Path(__file__).resolve().parent.parent
CHEAP = ["random", "rules_basic"]


def _versions(game: str) -> list[int]:
    return [int(f.name[len(game) + 2:-5]) for f in benchmark._protocol_files(game)]


PROTOCOLS = [(game, version) for game in PROTOCOL_GAMES for version in _versions(game)]
# what the suite gained at each version (v2 changed only how deals are drawn)
ADDED = {3: ["guided"]}


@pytest.mark.parametrize(("game", "version"), PROTOCOLS)
def test_each_game_has_a_complete_pinned_protocol_and_its_ladder(game, version):
    protocol = load_protocol(game, version)
    assert protocol.name == f"{game}-v{version}" and protocol.game == game
    # v1 fixed a public seed; from v2 on the deals are drawn secretly for each run
    assert (protocol.seed is None) == (version >= 2)
    assert load_protocol(game).name == f"{game}-v{max(_versions(game))}"
    specs = protocol.specs
    spec = game_spec(game)
    assert specs[0] == "random" and {"rules_basic", "rules_strong"} & set(spec.agents) <= set(specs)
    assert set(gauntlet_agents(game)) <= set(specs)  # a new gauntlet agent needs a new protocol version
    assert any(s.startswith("pimc:iterations=") for s in specs) == spec.has_part("search")
    assert all(s.split(":")[0] in available_agents(game) for s in specs)
    assert all(o["quick_deals"] <= o["deals"] for o in protocol.opponents)
    if spec.trained:  # the shipped policy is in the suite, pinned by its bytes
        assert "trained" in specs
        assert protocol.pinned["trained"] == hashlib.sha256(trained_path(game).read_bytes()).hexdigest()
    if version > 1:  # the previous version's suite and counts ("cost" only weighs the progress bar), plus ADDED
        before = load_protocol(game, version - 1)
        def suite(opponents):
            return [{k: v for k, v in o.items() if k != "cost"} for o in opponents]
        assert suite(protocol.opponents[:len(before.specs)]) == suite(before.opponents)
        assert specs[len(before.specs):] == ADDED.get(version, [])
    ladder = protocol.ladder
    # a version whose suite is unchanged keeps the ladder it was fitted on; a new suite has its own, at full level
    owner = next(v for v in range(version, 0, -1) if v == 1 or ADDED.get(v))
    assert ladder is not None and ladder["protocol_sha256"] == load_protocol(game, owner).sha256
    assert ladder["level"] == ("quick" if owner == 1 else "full")
    assert set(ladder["ratings"]) == set(specs) and ladder["ratings"][protocol.anchor] == 0
    pairs = {(m["a"], m["b"]) for m in ladder["matches"]}
    assert len(pairs) == len(specs) * (len(specs) - 1) // 2
    deals = {o["spec"]: protocol.deals(o, ladder["level"]) for o in protocol.opponents}
    assert all(m["deals"] == min(deals[m["a"]], deals[m["b"]]) for m in ladder["matches"])
    refit = fit_ladder([(m["a"], m["b"], m["a_wins"], m["b_wins"]) for m in ladder["matches"]], protocol.anchor)
    assert all(abs(refit[name] - value) < 0.01 for name, value in ladder["ratings"].items())
    assert ladder["ratings"]["random"] < ladder["ratings"]["rules_strong"]


def test_the_protocols_play_guided_at_the_defaults_they_name():
    """The v3 suites name plain ``guided``: a change of its defaults changes the suite, so needs a new version."""
    from cardenvs.agents.guided import GuidedAgent

    defaults = {name: p.default for name, p in inspect.signature(GuidedAgent).parameters.items()
                if p.default is not inspect.Parameter.empty}
    assert defaults == {"seed": None, "iterations": 500, "worlds": 8, "top": 3, "weight": 0.3, "prior": "trained",
                        "ms": None, "rollout": "random", "num_players": None}
    for game, version in PROTOCOLS:
        protocol = load_protocol(game, version)
        if "guided" in protocol.specs:
            file = next(f for f in benchmark._protocol_files(game) if f.name == f"{game}_v{version}.json")
            about = json.loads(file.read_text())["about"]["guided"]
            assert "iterations=500, worlds=8, top=3, weight=0.3, rollout=random" in about


def test_place_on_ladder_recovers_a_known_rating():
    # against a player rated 0, 3 wins in 4 is 400 * log10(3) = 190.8 points; the prior's half games pull in
    rating, low, high = place_on_ladder([(0.0, 3000, 1000)])
    assert abs(rating - 400 * math.log10(3000.5 / 1000.5)) < 1e-6 and low < rating < high
    assert place_on_ladder([(0.0, 10, 0)])[0] < 1000  # a clean sweep stays finite
    # three players 0, 100, 300: expected results fitted back
    truth = {"a": 0.0, "b": 100.0, "c": 300.0}
    pairs = []
    for x, y in (("a", "b"), ("a", "c"), ("b", "c")):
        p = 1 / (1 + math.exp(-(truth[x] - truth[y]) / ELO))
        pairs.append((x, y, 1e6 * p, 1e6 * (1 - p)))
    fitted = fit_ladder(pairs, "a")
    assert all(abs(fitted[k] - v) < 0.5 for k, v in truth.items())


class FirstLegal(Agent):
    name = "first_legal"

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.mark.parametrize("game", PROTOCOL_GAMES)
def test_the_same_agent_gives_the_same_scorecard_byte_for_byte(game, tmp_path):
    settings = BenchmarkSettings(deals=2, opponents=CHEAP, progress=False, seed=12345)  # a replay of revealed deals
    first = run_benchmark("rules_strong", game, settings)
    second = run_benchmark("rules_strong", game, BenchmarkSettings(deals=2, opponents=CHEAP, workers=2,
                                                                   progress=False, seed=12345))
    write_scorecard(first, tmp_path / "one")
    write_scorecard(second, tmp_path / "two")
    for name in ("scorecard.json", "scorecard.txt"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    card = json.loads((tmp_path / "one" / "scorecard.json").read_text())
    assert card["level"] == "custom" and not card["comparable"] and "timing" not in card
    assert [row["opponent"] for row in card["rows"]] == CHEAP
    assert card["rating"]["ladder"]["random"] == 0 and card["rating"]["ci95"][0] < card["rating"]["value"]
    assert card["replay"] and card["seed"] == 12345
    assert "NOT COMPARABLE" in (tmp_path / "one" / "scorecard.txt").read_text()
    timing = json.loads((tmp_path / "one" / "timing.json").read_text())
    assert [m["opponent"] for m in timing["matches"]] == CHEAP and timing["wall_seconds"] > 0


def test_an_object_a_bot_and_a_mirror_match(tmp_path):
    card = run_benchmark(FirstLegal(), "rang", BenchmarkSettings(deals=1, opponents=CHEAP, progress=False))
    assert card["agent"] == "first_legal" and len(card["rows"]) == 2
    bot = f"exec:path={ROOT / 'examples' / 'bots' / 'random_bot.py'}"
    card = run_benchmark(bot, "ring_rang", BenchmarkSettings(deals=2, opponents=["random"], progress=False))
    assert card["rows"][0]["forfeits"] == 0 and card["rows"][0]["episodes"] == 4
    mirror = run_benchmark("random", "ring_rang", BenchmarkSettings(deals=3, opponents=["random"], progress=False))
    row = mirror["rows"][0]
    assert row["wins"] + row["opponent_wins"] == row["episodes"] == 6  # random#0 vs random#1


def test_errors_come_before_any_deal(monkeypatch, tmp_path, capsys):
    rang = load_protocol("rang").name
    cases = [(["--game", "rang", "--agent", "nosuch"], "unknown agent 'nosuch'"),
             (["--game", "rang", "--agent", "random", "--opponents", "random,oracle"], f"not in protocol {rang}"),
             (["--game", "rang", "--agent", "random", "--deals", "0"], "--deals: expected an int >= 1"),
             (["--game", "rang"], "give --agent SPEC"),
             (["--game", "chess", "--agent", "random"], "unknown game 'chess'"),
             (["--game", "rang", "--agent", "exec:path=/nope"], "no program at")]
    for argv, message in cases:
        assert benchmark.main([*argv, "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    other = tmp_path / "policy.npz"
    other.write_bytes(trained_path("rang").read_bytes() + b"x")
    monkeypatch.setattr(benchmark, "trained_path", lambda game: other)
    assert benchmark.main(["--game", "rang", "--agent", "random", "--deals", "1", "--no-progress"]) == 2
    assert "was fixed with the trained policy" in capsys.readouterr().err


def test_the_command_writes_the_scorecard_files(tmp_path):
    out = tmp_path / "bench"
    run = subprocess.run([sys.executable, "-m", "cardenvs.cli", "benchmark", "--game", "ring_rang", "--agent",
                          "trained", "--deals", "2", "--opponents", "random,trained", "--out", str(out),
                          "--no-progress", "--workers", "2"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert f"benchmark {load_protocol('ring_rang').name} (custom)" in run.stdout and "rating" in run.stdout
    assert "agent's time per decision" in run.stdout
    written = sorted(p.name for p in out.iterdir())
    assert written == ["record.jsonl.gz", "scorecard.json", "scorecard.png", "scorecard.txt", "timing.json"]
    assert (out / "scorecard.png").stat().st_size > 5000


def test_the_help_names_the_protocols():
    run = subprocess.run([sys.executable, "-m", "cardenvs.cli", "benchmark", "--help"], capture_output=True,
                         text=True, timeout=60)
    assert run.returncode == 0 and load_protocol("ring_rang").name in run.stdout and "--quick" in run.stdout


def test_a_ladder_build_resumes_from_its_chunks_at_its_level(monkeypatch, tmp_path):
    """``--build-ladder --seed S --chunks DIR``: the seed (needed to resume) leaves the ladder at its level; the
    finished pairs alone (``ladder_pairs.json``) resume it too, and only a build of the same protocol and seed."""
    monkeypatch.setattr(benchmark, "_plan", lambda protocol, settings: [("random", 2), ("rules_basic", 2)])
    settings = BenchmarkSettings(seed=5, chunks=str(tmp_path), progress=False, version=2)
    ladder = benchmark.build_ladder("ring_rang", settings)
    assert ladder["level"] == "full" and ladder["seed"] == 5 and ladder["protocol"] == "ring_rang-v2"
    assert [(m["a"], m["b"], m["deals"], m["episodes"]) for m in ladder["matches"]] == [("random", "rules_basic", 2, 4)]
    folders = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert len(folders) == 1 and any(f.name.startswith("deals_") for f in folders[0].iterdir())
    from cardenvs.train import evaluate

    def replayed(args):
        raise AssertionError("a saved chunk was played again")
    monkeypatch.setattr(evaluate, "_play_chunk", replayed)
    assert benchmark.build_ladder("ring_rang", settings) == ladder  # resumed: nothing left to play, same result
    shutil.rmtree(folders[0])  # a later session: only the few-kB file of finished pairs was kept
    assert benchmark.build_ladder("ring_rang", settings) == ladder
    with pytest.raises(ValueError, match="another ladder build"):
        benchmark.build_ladder("ring_rang", BenchmarkSettings(seed=6, chunks=str(tmp_path), progress=False, version=2))
