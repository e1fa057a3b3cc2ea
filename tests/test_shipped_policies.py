"""Each shipped policy is pinned and has a recipe (issue 43, item 5): agents/policies/manifest.json gives its size,
its SHA-256 and the stages that rebuild it, and scripts/rebuild_policy.py prints and runs them (docs/policies.md)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shlex
import shutil
import subprocess
import sys
from dataclasses import fields
from importlib import import_module
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
POLICIES = ROOT / "agents" / "policies"
MANIFEST = json.loads((POLICIES / "manifest.json").read_text())
GAMES = MANIFEST["games"]
SCRIPT = ROOT / "scripts" / "rebuild_policy.py"


def _script():
    spec = importlib.util.spec_from_file_location("rebuild_policy", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("game", GAMES)
def test_the_shipped_file_has_the_manifest_size_and_sha256(game):
    entry = GAMES[game]
    data = (POLICIES / entry["file"]).read_bytes()
    assert len(data) == entry["size_bytes"]
    assert hashlib.sha256(data).hexdigest() == entry["sha256"]


def test_every_shipped_policy_has_a_recipe_and_the_benchmark_pins_agree():
    assert sorted(p.name for p in POLICIES.glob("*.npz")) == sorted(e["file"] for e in GAMES.values())
    pins = 0
    for path in (ROOT / "train" / "protocols").glob("*.json"):
        protocol = json.loads(path.read_text())
        if "trained" in protocol.get("pinned", {}):
            assert protocol["pinned"]["trained"] == GAMES[protocol["game"]]["sha256"], path.name
            pins += 1
    assert pins >= 2


@pytest.mark.parametrize("game", GAMES)
def test_each_stage_config_exists_and_loads(game):
    pytest.importorskip("yaml")
    from cardenvs.train.config_files import CONFIG_COMMANDS, read_yaml_mapping

    entry, commit = GAMES[game], MANIFEST["inputs_commit"]
    stages = entry["stages"]
    assert [s["stage"] for s in stages] == list(range(1, len(stages) + 1))
    made = {}  # stage -> what a later stage may read: its output and its labels
    for stage in stages:
        command, _, config = stage["command"].partition(" --config ")
        assert config == stage["config"] and (ROOT / config).is_file(), stage["command"]
        module, _, name = CONFIG_COMMANDS[command].partition(":")
        try:
            schema = getattr(import_module(module), name)
        except ImportError as error:  # that trainer's libraries (torch) are not installed
            pytest.skip(f"{command}: {error}")
        data = read_yaml_mapping(ROOT / config, "config") | stage.get("overrides", {})
        assert set(data) <= {f.name for f in fields(schema)}, config
        assert data["game"] == game
        assert data["export_to"] == stage["output"], "each stage writes the file the next one reads"
        for item in stage["inputs"]:
            assert item["path"] in made[item["made_by_stage"]], item
            assert item["restore"] in (None, f"git checkout {commit} -- {item['path']}")
        made[stage["stage"]] = {stage["output"], f"{data['run_dir']}/labels"}
        assert stage["core_hours"] == round(stage["wall_minutes"] * stage["cores"] / 60, 3)
        assert stage["basis"]
    assert stages[-1]["output"] == entry["rebuilt_file"]
    assert entry["core_hours_total"] == round(sum(s["core_hours"] for s in stages), 3)


@pytest.mark.parametrize("game", GAMES)
def test_git_holds_the_restored_inputs_and_the_shipped_bytes(game):
    """The inputs come from git at the manifest's commit, and the shipped file is the last stage's output there."""
    commit, entry = MANIFEST["inputs_commit"], GAMES[game]
    if shutil.which("git") is None or subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT,
                                                     capture_output=True).returncode:
        pytest.skip(f"no git history with commit {commit} here")
    paths = sorted({i["path"] for s in entry["stages"] for i in s["inputs"] if i["restore"]})
    assert paths
    found = subprocess.run(["git", "ls-tree", "--name-only", commit, "--", *paths], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    assert set(found) == set(paths)
    blob = subprocess.run(["git", "cat-file", "blob", f"{commit}:{entry['rebuilt_file']}"], cwd=ROOT,
                          capture_output=True, check=True).stdout
    assert hashlib.sha256(blob).hexdigest() == entry["sha256"]


@pytest.mark.parametrize("game", GAMES)
def test_the_script_prints_every_stage(game):
    done = subprocess.run([sys.executable, str(SCRIPT), "--game", game], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    for stage in GAMES[game]["stages"]:
        assert f"stage {stage['stage']}: {stage['name']}" in done.stdout
        assert stage["command"] in done.stdout
    assert f"{GAMES[game]['core_hours_total']:.2f} core-hours" in done.stdout
    assert GAMES[game]["checks"][0]["command"] in done.stdout


@pytest.mark.parametrize(("args", "wanted"), [
    (["--game", "poker"], "error: unknown game 'poker'; expected one of: ring_rang, rang"),
    (["--game", "rang", "--from-stage", "99", "--run"], "error: --from-stage: expected 1-7 for rang, got 99"),
])
def test_the_script_refuses_bad_arguments_in_one_line(args, wanted):
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", wanted + "\n")


def _entry(tmp_path: Path, *codes: int) -> dict:
    """A chain of stages that each exit with a code and leave a mark; the last writes the 'rebuilt' file."""
    rebuilt = tmp_path / "rebuilt.npz"
    stages = []
    for n, code in enumerate(codes, 1):
        program = f"import pathlib; pathlib.Path({str(tmp_path / f'mark{n}')!r}).touch(); " \
                  f"pathlib.Path({str(rebuilt)!r}).write_bytes(b'x'); raise SystemExit({code})"
        stages.append({"stage": n, "inputs": [], "command": shlex.join([sys.executable, "-c", program])})
    return {"stages": stages, "rebuilt_file": str(rebuilt), "file": "x.npz", "sha256": "0" * 64,
            "checks": [{"command": "cardenvs eval --game x", "shipped": "0.5", "rule": "none"}]}


def test_run_stops_at_the_first_failing_stage(tmp_path, capsys):
    assert _script().run_chain(_entry(tmp_path, 0, 3, 0), 1) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: stage 2 failed (exit status 3)")
    assert (tmp_path / "mark2").exists() and not (tmp_path / "mark3").exists()


def test_run_compares_the_rebuilt_sha256_and_names_the_checks(tmp_path, capsys):
    assert _script().run_chain(_entry(tmp_path, 0, 0), 2) == 0
    out = capsys.readouterr().out
    assert not (tmp_path / "mark1").exists(), "--from-stage 2 skips stage 1"
    assert hashlib.sha256(b"x").hexdigest() in out and "0" * 64 in out
    assert "not bit-identical" in out and "cardenvs eval --game x" in out


def test_a_stage_with_overrides_runs_on_a_copy_of_its_config(tmp_path, monkeypatch):
    yaml = pytest.importorskip("yaml")
    script = _script()
    (stage,) = [s for s in GAMES["ring_rang"]["stages"] if "total_steps" in s.get("overrides", {})]
    (tmp_path / "configs").mkdir()
    shutil.copy(ROOT / stage["config"], tmp_path / stage["config"])
    monkeypatch.setattr(script, "ROOT", tmp_path)
    script.write_overrides(stage)
    command = script.command_of(stage)
    assert command == stage["command"].replace("configs/", "runs/rebuild_policy/")
    written = yaml.safe_load((tmp_path / command.split("--config ")[1]).read_text())
    assert written == yaml.safe_load((ROOT / stage["config"]).read_text()) | stage["overrides"]
