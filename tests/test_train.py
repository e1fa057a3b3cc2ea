"""The self-play entry point end to end, by subprocess (as CleanRL's smoke tests): train, checkpoint,
resume after SIGKILL, evaluate, export; bad configs and bad checkpoints give clear errors.

The tests that start several training processes are marked slow (each process imports torch).
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from games import BUILTIN_GAMES

pytest.importorskip("sb3_contrib")

ROOT = Path(__file__).resolve().parents[1]

TINY = {
    "total_steps": 1024,
    "num_envs": 2,
    "n_steps": 128,
    "batch_size": 128,
    "n_epochs": 1,
    "net_arch": [16],
    "opponents": {"random": 1.0},
    "snapshot_weight": 1.0,
    "snapshot_every": 256,
    "max_snapshots": 2,
    "eval_every": 512,
    "eval_deals": 3,
    "eval_opponents": ["random"],
    "checkpoint_every": 256,
    "progress": False,
}


def write_config(tmp_path: Path, name: str = "run", **fields) -> Path:
    config = {"game": "ring_rang", "run_dir": str(tmp_path / name), **TINY, **fields}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def selfplay(config: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "cardenvs.train.selfplay", "--config", str(config), *args],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"selfplay failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return result


def curve(run_dir: Path) -> list[dict]:
    return list(csv.DictReader((run_dir / "curve.csv").open()))


def checkpoint_steps(run_dir: Path) -> int:
    return json.loads((run_dir / "checkpoints" / "latest.json").read_text())["steps"]


def policy_arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


@pytest.mark.parametrize("game", BUILTIN_GAMES)
@pytest.mark.slow
def test_tiny_run_trains_evaluates_checkpoints_and_exports(tmp_path, game):
    export = tmp_path / "shipped" / "policy.npz"
    config = write_config(tmp_path, game=game, export_to=str(export), curve_to=str(tmp_path / "curve.png"))
    selfplay(config)
    run_dir = tmp_path / "run"
    rows = curve(run_dir)
    assert [int(r["steps"]) for r in rows] == [512, 1024]
    for r in rows:
        low, rate, high = float(r["ci95_low"]), float(r["win_rate"]), float(r["ci95_high"])
        assert 0.0 <= rate <= 1.0 and low - 1e-9 <= rate <= high + 1e-9
    assert checkpoint_steps(run_dir) == 1024
    assert len(list((run_dir / "checkpoints").glob("step_*"))) == 2  # keep_checkpoints
    assert (run_dir / "learning_curve.png").stat().st_size > 1000 and (tmp_path / "curve.png").exists()
    assert (run_dir / "tb").is_dir() and json.loads((run_dir / "summary.json").read_text())["steps"] == 1024
    # the exported policy plays in the harness through the registry
    from cardenvs.train.evaluate import EvalConfig, evaluate

    result = evaluate(EvalConfig(game=game, agents=[f"policy:path={export}", "random"], deals=2, progress=False))
    assert [r["episodes"] for r in result["table"]] == [4, 4]  # 2 deals x 2 seat arrangements, each agent


@pytest.mark.slow
def test_training_clock_stops_the_run_and_keeps_policies(tmp_path):
    """Issue 36: train_seconds ends the run on the training clock (evaluations and checkpoints not counted),
    keep_every_seconds keeps the policy at marks of it (what scripts/time_to_strength.py measures)."""
    selfplay(write_config(tmp_path, total_steps=10**9, train_seconds=2.0, keep_every_seconds=1.0,
                          eval_every=10**9, checkpoint_every=10**9))
    run_dir = tmp_path / "run"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["train_s"] >= 2.0 and summary["steps"] < 10**9 and summary["wall_s"] >= summary["train_s"]
    kept = list((run_dir / "policies").glob("train_*s_step_*.npz"))
    marks = sorted(float(p.name.split("_")[1][:-1]) for p in kept)
    assert len(kept) >= 2 and marks[0] >= 1.0 and marks[-1] >= 2.0
    steps = sorted(int(p.stem.split("_")[-1]) for p in kept)
    assert steps[-1] == summary["steps"] == checkpoint_steps(run_dir)  # the last one is the final policy
    from cardenvs.agents.policy import PolicyAgent

    PolicyAgent(path=str(kept[0]), game="ring_rang")


@pytest.mark.slow
def test_same_seed_same_policy(tmp_path):
    selfplay(write_config(tmp_path, "a", total_steps=512))
    selfplay(write_config(tmp_path, "b", total_steps=512))
    a, b = policy_arrays(tmp_path / "a" / "policy.npz"), policy_arrays(tmp_path / "b" / "policy.npz")
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.slow
def test_resume_continues_the_step_count(tmp_path):
    config = write_config(tmp_path, total_steps=512)
    selfplay(config)
    run_dir = tmp_path / "run"
    assert checkpoint_steps(run_dir) == 512
    again = selfplay(config, check=False)  # a finished run is not overwritten by accident
    assert again.returncode == 2 and "--resume" in again.stderr
    config = write_config(tmp_path, total_steps=1024)  # extend the run
    resumed = selfplay(config, "--resume")
    assert "resumed" in resumed.stderr and "at step 512" in resumed.stderr
    assert checkpoint_steps(run_dir) == 1024
    assert [int(r["steps"]) for r in curve(run_dir)] == [512, 1024]


@pytest.mark.slow
def test_sigkill_mid_run_then_resume(tmp_path):
    config = write_config(tmp_path, total_steps=200_000, eval_every=100_000, checkpoint_every=256)
    run_dir = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, "-m", "cardenvs.train.selfplay", "--config", str(config)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            latest = run_dir / "checkpoints" / "latest.json"
            if latest.exists() and checkpoint_steps(run_dir) >= 768:
                break
            assert process.poll() is None, "the run ended before it could be killed"
            time.sleep(0.2)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait()
    killed_at = checkpoint_steps(run_dir)
    assert 768 <= killed_at < 200_000
    config = write_config(tmp_path, total_steps=killed_at + 512, eval_every=100_000, checkpoint_every=256)
    resumed = selfplay(config, "--resume")
    assert f"at step {killed_at}" in resumed.stderr
    assert checkpoint_steps(run_dir) == killed_at + 512
    assert json.loads((run_dir / "summary.json").read_text())["steps"] == killed_at + 512
    assert (run_dir / "policy.npz").exists()


@pytest.mark.slow
def test_corrupt_or_partial_checkpoint_is_a_clear_error(tmp_path):
    config = write_config(tmp_path, total_steps=256)
    run_dir = tmp_path / "run"
    missing = selfplay(config, "--resume", check=False)
    assert missing.returncode == 2 and "no checkpoint to resume" in missing.stderr
    selfplay(config)
    folder = run_dir / "checkpoints" / "step_256"
    model = folder / "model.pt"
    whole = model.read_bytes()
    model.write_bytes(whole[:100])  # a torn write
    corrupt = selfplay(config, "--resume", check=False)
    assert corrupt.returncode == 2 and "corrupt" in corrupt.stderr and "model.pt" in corrupt.stderr
    model.write_bytes(whole)
    (folder / "pool.npz").unlink()
    partial = selfplay(config, "--resume", check=False)
    assert partial.returncode == 2 and "partial" in partial.stderr and "pool.npz" in partial.stderr
    (run_dir / "checkpoints" / "latest.json").write_text("{not json")
    pointer = selfplay(config, "--resume", check=False)
    assert pointer.returncode == 2 and "latest.json" in pointer.stderr


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"learning_rat": 0.1}, "learning_rat"),
        ({"n_steps": "many"}, "'n_steps'"),
        ({"net_arch": [64, "x"]}, "'net_arch'"),
        ({"opponents": {"nobody": 1.0}}, "nobody"),
        ({"game": "chess"}, "game"),
        ({"episode": "match"}, "episode"),
        # issue 18 item 1: specs that only fail when built are refused before training, not at the first evaluation
        ({"eval_opponents": ["pimc:iters=5"]}, "eval_opponents: agent 'pimc:iters=5'"),
        ({"eval_opponents": ["policy:path=nope.npz"]}, "eval_opponents: .*nope.npz"),
        ({"opponents": {"ismcts:iterations=-5": 1.0}}, "opponents: .*iterations must be"),
        ({"train_seconds": -1}, "train_seconds"),
    ],
)
def test_bad_config_fields_are_named(tmp_path, fields, message):
    from cardenvs.train.config_files import config_from_dict
    from cardenvs.train.selfplay import TrainConfig

    with pytest.raises(ValueError, match=message):
        config_from_dict({"game": "ring_rang", **fields}, "test", TrainConfig)


def test_bad_config_exits_2_with_the_field_named(tmp_path):
    result = selfplay(write_config(tmp_path, learning_rat=0.1), check=False)
    assert result.returncode == 2 and "unknown field(s) ['learning_rat']" in result.stderr
    result = selfplay(write_config(tmp_path, eval_opponents=["pimc:iters=5"]), check=False)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "eval_opponents" in result.stderr
    assert not (tmp_path / "run" / "checkpoints").exists()  # refused before any work


def test_train_help_names_the_command(capsys):
    """Issue 18 item 6: `cardenvs train -h` shows `usage: cardenvs train`, not the module path."""
    from cardenvs.train.selfplay import main

    with pytest.raises(SystemExit):
        main(["-h"])
    assert capsys.readouterr().out.startswith("usage: cardenvs train ")


@pytest.mark.slow
def test_changing_a_fixed_field_on_resume_is_refused(tmp_path):
    selfplay(write_config(tmp_path, total_steps=256))
    result = selfplay(write_config(tmp_path, total_steps=512, learning_rate=0.1), "--resume", check=False)
    assert result.returncode == 2 and "learning_rate" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("game", BUILTIN_GAMES)
def test_quick_config_end_to_end(tmp_path, game):
    config = yaml.safe_load((ROOT / "configs" / f"quick_{game}.yaml").read_text())
    config["run_dir"] = str(tmp_path / "quick")
    config["progress"] = False
    path = tmp_path / "quick.yaml"
    path.write_text(yaml.safe_dump(config))
    selfplay(path)
    rows = curve(tmp_path / "quick")
    assert rows and int(rows[-1]["steps"]) == config["total_steps"]
    assert (tmp_path / "quick" / "policy.npz").exists()


class _Payload:
    """Unpickling this runs code: it creates the file ``target``."""

    def __init__(self, target: str):
        self.target = target

    def __reduce__(self):
        return (open, (self.target, "w"))


def _rehash(run_dir: Path) -> None:
    """Recompute latest.json's SHA-256s, as whoever edits a checkpoint can."""
    import hashlib

    latest = run_dir / "checkpoints" / "latest.json"
    pointer = json.loads(latest.read_text())
    folder = run_dir / "checkpoints" / pointer["folder"]
    pointer["sha256"] = {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in pointer["sha256"]}
    latest.write_text(json.dumps(pointer))


@pytest.mark.slow
def test_resume_loads_data_only_and_hand_edited_checkpoints_are_clear_errors(tmp_path):
    """Issue 19 items 1 and 8: a crafted checkpoint (valid hashes) never runs code on --resume; edited ones
    are CheckpointErrors (exit 2, one line), not tracebacks; a moved run folder resumes with --run-dir."""
    import torch

    config = write_config(tmp_path, total_steps=256, eval_every=100_000)
    selfplay(config)
    run_dir = tmp_path / "run"
    folder = run_dir / "checkpoints" / "step_256"
    assert not (folder / "model.zip").exists()  # SB3's pickled format is not written
    whole = (folder / "model.pt").read_bytes()
    marker = tmp_path / "payload_ran"
    torch.save({"policy": _Payload(str(marker)), "optimizer": {}}, folder / "model.pt")
    _rehash(run_dir)
    crafted = selfplay(config, "--resume", check=False)
    assert crafted.returncode == 2 and "cannot be resumed" in crafted.stderr, crafted.stderr[-2000:]
    assert "Traceback" not in crafted.stderr and not marker.exists()
    torch.save({"policy": {}}, folder / "model.pt")  # valid hashes, wrong content
    _rehash(run_dir)
    edited = selfplay(config, "--resume", check=False)
    assert edited.returncode == 2 and "cannot be resumed" in edited.stderr and "Traceback" not in edited.stderr
    (folder / "model.pt").write_bytes(whole)
    state = json.loads((folder / "state.json").read_text())
    (folder / "state.json").write_text(json.dumps({k: v for k, v in state.items() if k != "rng"}))
    _rehash(run_dir)
    no_rng = selfplay(config, "--resume", check=False)
    assert no_rng.returncode == 2 and "lacks ['rng']" in no_rng.stderr and "Traceback" not in no_rng.stderr
    (folder / "state.json").write_text(json.dumps(state))
    _rehash(run_dir)
    moved = tmp_path / "moved"
    run_dir.rename(moved)
    resumed = selfplay(write_config(tmp_path, total_steps=512, eval_every=100_000), "--resume",
                       "--run-dir", str(moved))
    assert f"resumed {moved} at step 256" in resumed.stderr
    assert checkpoint_steps(moved) == 512


def test_checkpoint_pointer_is_confined_to_the_run_folder(tmp_path):
    """Issue 19 item 8: latest.json cannot send --resume to a folder outside checkpoints/."""
    import hashlib

    from cardenvs.train.runs import CheckpointError, load_checkpoint

    outside = tmp_path / "elsewhere" / "step_5"
    outside.mkdir(parents=True)
    (outside / "state.json").write_text(json.dumps({"steps": 5, "config": {}}))
    digest = {"state.json": hashlib.sha256((outside / "state.json").read_bytes()).hexdigest()}
    root = tmp_path / "run" / "checkpoints"
    root.mkdir(parents=True)
    latest = root / "latest.json"
    for folder in (str(outside), "../../elsewhere/step_5"):
        latest.write_text(json.dumps({"folder": folder, "steps": 5, "sha256": digest}))
        with pytest.raises(CheckpointError, match="not a step_<N> folder"):
            load_checkpoint(tmp_path / "run")
    (root / "step_5").symlink_to(outside, target_is_directory=True)
    latest.write_text(json.dumps({"folder": "step_5", "steps": 5, "sha256": digest}))
    with pytest.raises(CheckpointError, match="outside"):
        load_checkpoint(tmp_path / "run")
    (root / "step_5").unlink()
    (root / "step_5").mkdir()
    (root / "step_5" / "state.json").write_text(json.dumps({"steps": 5, "config": {}}))
    assert load_checkpoint(tmp_path / "run")[1]["steps"] == 5
    latest.write_text(json.dumps({"folder": "step_5", "steps": 5, "sha256": {}}))  # hashes cover nothing
    with pytest.raises(CheckpointError, match="must list"):
        load_checkpoint(tmp_path / "run")
