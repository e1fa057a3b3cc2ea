"""The gauntlet: evaluation-only opponents that no training config names, and the harness's gauntlet mode."""

import json
from pathlib import Path

import pytest
import yaml
from games import BUILTIN_GAMES
from games import GAUNTLET_GAMES as GAMES

from cardenvs.agents.registry import gauntlet_agents
from cardenvs.train.evaluate import EvalConfig, main, run_gauntlet

ROOT = Path(__file__).resolve().parents[1]


def _strings(data):
    """Every string in a YAML document, keys included (an agent may be named as a key of a weight map)."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _strings(key)
            yield from _strings(value)
    elif isinstance(data, list):
        for item in data:
            yield from _strings(item)
    elif isinstance(data, str):
        yield data


@pytest.mark.parametrize("game", GAMES)
def test_each_game_has_at_least_four_gauntlet_agents(game):
    assert len(gauntlet_agents(game)) >= 4


def test_no_training_config_names_a_gauntlet_agent():
    """Evaluation configs (schema EvalConfig) may play the gauntlet; no other file in configs/ may name it."""
    names = {name for game in GAMES for name in gauntlet_agents(game)}
    configs = sorted(ROOT.glob("configs/**/*.y*ml"))
    assert configs
    for path in configs:
        text = path.read_text()
        data = yaml.safe_load(text) or {}
        if path.name.startswith("eval_"):
            continue
        mentioned = {s for s in _strings(data) for name in names if name in s}
        assert not mentioned, f"{path.name} names gauntlet agent(s) {sorted(mentioned)}: training must not see them"
        assert not any(name in text for name in names), f"{path.name} names a gauntlet agent, if only in a comment"


def test_gauntlet_mode_reports_every_opponent_and_the_worst(tmp_path, capsys):
    code = main(["--game", "ring_rang", "--agents", "random", "--gauntlet", "--deals", "3", "--no-progress",
                 "--out", str(tmp_path)])
    assert code == 0
    printed = capsys.readouterr().out
    result = json.loads((tmp_path / "gauntlet.json").read_text())
    opponents = [row["opponent"] for row in result["rows"]]
    assert opponents == gauntlet_agents("ring_rang")
    assert result["worst"]["win_rate"] == min(row["win_rate"] for row in result["rows"])
    assert all(row["episodes"] == 6 for row in result["rows"])  # 3 deals in duplicate form
    assert "worst: vs" in printed and (tmp_path / "gauntlet.csv").exists()


def test_gauntlet_rows_match_plain_two_agent_evaluations():
    config = EvalConfig(game="rang", agents=["rules_basic"], deals=4, gauntlet=True, progress=False)
    result = run_gauntlet(config)
    from cardenvs.train.evaluate import evaluate

    first = result["rows"][0]
    plain = evaluate(EvalConfig(game="rang", agents=["rules_basic", first["opponent"]], deals=4, progress=False))
    row = next(r for r in plain["table"] if r["agent"] == "rules_basic")
    assert (first["win_rate"], first["mean_points"]) == (row["win_rate"], row["mean_points"])


def test_gauntlet_needs_exactly_one_candidate(capsys):
    assert main(["--game", "rang", "--agents", "random", "rules_basic", "--gauntlet"]) == 2
    assert "one candidate" in capsys.readouterr().err


def _script(name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("game", BUILTIN_GAMES)
def test_distill_rounds_reads_every_stage_from_the_kept_outputs(game):
    """Every stage's folders are kept; a match against the search reads the policy's row, not the search's."""
    script = _script("distill_rounds")
    stages, vs_search, _, _ = script.GAMES[game]
    table = script.rows(stages, vs_search)
    assert [r["stage"] for r in table if r["measure"] == "vs rules_strong"] == list(stages)
    for row in table:
        assert row["ci95_low"] <= row["win_rate"] <= row["ci95_high"]
    for stage, folder in vs_search.items():
        (mine,) = [r for r in table if r["stage"] == stage and r["measure"] == f"vs {script.SEARCH}"]
        search = next(r for r in json.loads((ROOT / "docs" / "strength" / folder / "results.json").read_text())["table"]
                      if r["agent"] == script.SEARCH)
        assert mine["win_rate"] == pytest.approx(1 - search["win_rate"])


def _gauntlet_run(folder: Path, seed: int, wins: float, episodes: int, points: float) -> Path:
    folder.mkdir()
    row = {"opponent": "gauntlet_racer", "episodes": episodes, "win_rate": wins / episodes,
           "win_rate_ci95": [0.0, 1.0], "mean_points": points, "opponent_mean_points": 10.0}
    config = {"game": "rang", "seed": seed, "deals": episodes // 2}
    (folder / "gauntlet.json").write_text(json.dumps({"config": config, "candidate": "trained", "rows": [row]}))
    return folder


def test_pool_gauntlets_adds_the_episodes_of_different_seeds(tmp_path):
    from cardenvs.train.stats import wilson_interval

    pool = _script("pool_gauntlets")
    first = _gauntlet_run(tmp_path / "a", seed=0, wins=2000, episodes=4000, points=9.0)
    second = _gauntlet_run(tmp_path / "b", seed=1, wins=1000, episodes=1000, points=8.0)
    (row,) = pool.pooled([first, second])["rows"]
    assert row["episodes"] == 5000
    assert row["win_rate"] == pytest.approx(3000 / 5000)
    assert row["win_rate_ci95"] == pytest.approx(wilson_interval(3000, 5000))
    assert row["mean_points"] == pytest.approx((9.0 * 4000 + 8.0 * 1000) / 5000)


def test_pool_gauntlets_refuses_a_seed_given_twice(tmp_path):
    pool = _script("pool_gauntlets")
    first = _gauntlet_run(tmp_path / "a", seed=3, wins=10, episodes=20, points=9.0)
    second = _gauntlet_run(tmp_path / "b", seed=3, wins=10, episodes=20, points=9.0)
    with pytest.raises(SystemExit, match="repeat"):
        pool.pooled([first, second])
