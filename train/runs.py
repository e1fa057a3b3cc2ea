"""Run folders shared by both trainers (SB3 ``cardenvs train``, batched ``cardenvs train-vector``).

One place for what a training run writes and reads back: the folder checks of a fresh run or a
resume, checkpoints committed by a ``latest.json`` pointer that names a ``step_<N>`` folder with
the SHA-256 of every file (loaded as data only: the trainers read tensors with ``weights_only``
and arrays with ``allow_pickle=False``), the evaluation curve (``curve.csv`` and its plot), the
progress bar and the publishing of the final policy and curve.
"""

from __future__ import annotations

import contextlib
import csv
import errno
import functools
import hashlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cardenvs.games import game_spec


class CheckpointError(ValueError):
    """A checkpoint that is missing, partial or corrupt."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_json_atomic(path: Path, data: Any) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=1))
    temporary.replace(path)


def commit_checkpoint(run_dir: Path, folder: Path, names: tuple[str, ...], steps: int, keep: int) -> None:
    """Point ``latest.json`` at the whole checkpoint ``folder`` (its files' SHA-256), then prune old ones."""
    root = run_dir / "checkpoints"
    files = {name: _sha256(folder / name) for name in names}
    _write_json_atomic(root / "latest.json", {"folder": folder.name, "steps": steps, "sha256": files})
    checkpoints = sorted((p for p in root.glob("step_*") if p.is_dir()), key=lambda p: int(p.name[5:]))
    for old in checkpoints[:-keep]:
        if old != folder:
            shutil.rmtree(old, ignore_errors=True)


def load_checkpoint(
    run_dir: Path, files: tuple[str, ...] = ("state.json",), state_keys: tuple[str, ...] = ("steps", "config")
) -> tuple[Path, dict]:
    """The latest whole checkpoint (folder, state); a CheckpointError says what is wrong.

    ``latest.json`` must name a ``step_<N>`` folder inside ``checkpoints/`` (a pointer elsewhere is
    refused) whose SHA-256s cover ``files``; ``state.json`` must hold ``state_keys``.
    """
    root = run_dir / "checkpoints"
    latest = root / "latest.json"
    if not latest.exists():
        raise CheckpointError(f"no checkpoint to resume in {run_dir} ({latest} does not exist)")
    try:
        pointer = json.loads(latest.read_text())
        name = pointer["folder"]
        expected = dict(pointer["sha256"])
    except (ValueError, KeyError, TypeError) as error:
        raise CheckpointError(f"checkpoint pointer {latest} is corrupt: {error!r}") from None
    if not isinstance(name, str) or not re.fullmatch(r"step_\d+", name):
        raise CheckpointError(f"checkpoint pointer {latest} names {name!r:.100}, not a step_<N> folder of {root}")
    folder = root / name
    if folder.resolve().parent != root.resolve():
        raise CheckpointError(f"checkpoint {folder} lies outside {root} (a link?); resume reads only the run folder")
    if "model.zip" in expected:
        raise CheckpointError(f"checkpoint {folder} holds SB3's model.zip, whose pickled fields can run code; "
                              "resume loads data only: start a new run")
    missing = [f for f in files if f not in expected]
    if missing or any(not isinstance(f, str) or Path(f).name != f or f.startswith(".") for f in expected):
        raise CheckpointError(f"checkpoint pointer {latest} is corrupt: its sha256 must list {list(files)}, "
                              f"got {list(expected)!r:.200}")
    for file, digest in expected.items():
        path = folder / file
        if not path.is_file():
            raise CheckpointError(f"checkpoint {folder} is partial: {file} is missing")
        if _sha256(path) != digest:
            raise CheckpointError(f"checkpoint {folder} is corrupt: {file} does not match its SHA-256")
    try:
        state = json.loads((folder / "state.json").read_text())
    except ValueError as error:
        raise CheckpointError(f"checkpoint {folder}: state.json is corrupt: {error}") from None
    absent = [key for key in state_keys if key not in state] if isinstance(state, dict) else list(state_keys)
    if absent or not isinstance(state["config"], dict) or not _is_count(state["steps"]):
        raise CheckpointError(f"checkpoint {folder}: state.json lacks {absent} or holds a bad 'config'/'steps'")
    return folder, state


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# ------------------------------------------------------------------ the run folder's lock
LOCK_NAME = "run.lock"
_held: dict[Path, int] = {}  # run folder -> the open descriptor of its lock file (this process holds the lock)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return pid > 0
    return True


def lock_run_dir(run_dir: Path) -> None:
    """Take ``run_dir``'s lock (``run.lock``, an OS file lock held while this process trains there).

    A second trainer on the folder is refused with one line naming the process that holds it; the lock
    of a process that died (its file left behind) is taken over. Taking a lock this process holds is a no-op.
    """
    key = run_dir.resolve()
    if key in _held:
        return
    path = run_dir / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        previous = os.read(fd, 200).decode("utf-8", "replace").split()
        if not _os_lock(fd, previous):
            holder = f"process {previous[0]}" if previous else "another process"
            raise ValueError(f"{run_dir} is in use by {holder} (training there now; {path}); wait for it to end, "
                             "or use another run_dir")
        if previous and previous[0].isdigit() and int(previous[0]) != os.getpid() and not _pid_alive(int(previous[0])):
            print(f"note: took over the lock of {run_dir} left by process {previous[0]}, which is no longer "
                  "running", file=sys.stderr)
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{os.getpid()}\n".encode())
    except BaseException:
        os.close(fd)
        raise
    _held[key] = fd


def _os_lock(fd: int, previous: list[str]) -> bool:
    """An exclusive lock on the open file ``fd`` that the OS drops when the process ends (False: taken)."""
    try:
        import fcntl
    except ImportError:  # not POSIX: the process id written in the file decides
        return not (previous and previous[0].isdigit() and int(previous[0]) != os.getpid()
                    and _pid_alive(int(previous[0])))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return False
        raise
    return True


def unlock_run_dir(run_dir: Path) -> None:
    """Let ``run_dir``'s lock go (the file stays: the next run takes it)."""
    fd = _held.pop(run_dir.resolve(), None)
    if fd is not None:
        os.close(fd)  # closing the descriptor drops the OS lock


def holds_run_lock(train: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a trainer ``train(config, ...)``: the run folder's lock (taken by :func:`open_run_dir`) is let go
    when it returns or fails."""

    @functools.wraps(train)
    def locked(config: Any, *args: Any, **kwargs: Any) -> Any:
        run_dir = Path(config.run_dir)
        held = run_dir.resolve() in _held
        try:
            return train(config, *args, **kwargs)
        finally:
            if not held:
                unlock_run_dir(run_dir)

    return locked


# ------------------------------------------------------------------ a full disk
@contextlib.contextmanager
def disk_full_message(what: str, where: Path, intact: str = "") -> Iterator[None]:
    """Turn a write that failed for want of space (``ENOSPC``, or torch's ``basic_ios::clear: iostream error``)
    into one line: the disk is full, where, and what is intact; ``where`` is removed if it is a partial folder."""
    try:
        yield
    except (OSError, RuntimeError) as error:
        full = getattr(error, "errno", None) in (errno.ENOSPC, errno.EDQUOT) or (
            isinstance(error, RuntimeError) and "iostream error" in str(error) and _free_bytes(where) < 2**20)
        if not full:
            raise
        if where.is_dir():
            shutil.rmtree(where, ignore_errors=True)
        raise DiskFullError(f"the disk is full: writing {what} to {where} failed ({_free_bytes(where)} bytes free)"
                            f"{intact}; free some space, then run again") from None


class DiskFullError(ValueError):
    """No space left where a run writes."""


def _free_bytes(path: Path) -> int:
    for folder in (path, *path.parents):
        if folder.exists():
            try:
                return shutil.disk_usage(folder).free
            except OSError:
                return 0
    return 0


def checkpoint_writes(run_dir: Path, folder: Path, steps: int) -> contextlib.AbstractContextManager[None]:
    """Around the writing of a checkpoint folder: a full disk is one line naming it, and the last whole
    checkpoint (``latest.json`` moves only after every file is written) stays the one to resume."""
    latest = run_dir / "checkpoints" / "latest.json"
    intact = ""
    if latest.exists():
        with contextlib.suppress(ValueError, OSError, KeyError, TypeError):
            intact = f"; the checkpoint of step {json.loads(latest.read_text())['steps']} is intact (--resume)"
    return disk_full_message(f"the checkpoint of step {steps}", folder, intact)


# ------------------------------------------------------------------ opening a run
def open_run_dir(run_dir: Path, config: Any, resume: bool, resumable: tuple[str, ...],
                 files: tuple[str, ...] = ("state.json",),
                 state_keys: tuple[str, ...] = ("steps", "config")) -> tuple[Path, dict] | None:
    """Check the run folder before anything is written, take its lock (:func:`lock_run_dir`; a trainer
    decorated with :func:`holds_run_lock` lets it go at its end); the checkpoint to resume, if any.

    A resume must use the checkpoint's config except the ``resumable`` fields and ``run_dir``
    (a run folder may be moved or copied); a fresh run refuses a folder that already holds one.
    """
    _check_run_dir(run_dir, config, resume, resumable, files, state_keys)  # nothing written if it fails
    run_dir.mkdir(parents=True, exist_ok=True)
    lock_run_dir(run_dir)
    checkpoint = _check_run_dir(run_dir, config, resume, resumable, files, state_keys)  # again, under the lock
    (run_dir / "config.json").write_text(json.dumps(asdict(config), indent=1))
    return checkpoint


def _check_run_dir(run_dir: Path, config: Any, resume: bool, resumable: tuple[str, ...], files: tuple[str, ...],
                   state_keys: tuple[str, ...]) -> tuple[Path, dict] | None:
    checkpoint = None
    if resume:
        folder, state = load_checkpoint(run_dir, files, state_keys)
        saved = state["config"]
        defaults = asdict(type(config)())  # a field newer than the checkpoint counts as its default
        changed = sorted(k for k, v in asdict(config).items()
                         if k not in resumable and k != "run_dir" and saved.get(k, defaults[k]) != v)
        if changed:
            raise ValueError(f"--resume: the config differs from the checkpoint's in {changed}")
        checkpoint = (folder, state)
    elif (run_dir / "checkpoints" / "latest.json").exists():
        raise ValueError(f"{run_dir} already holds a run; use --resume, or another run_dir")
    return checkpoint


# a policy kept at a mark of the training clock, in a run's policies/ (scripts/time_to_strength.py reads them)
KEPT_POLICY = re.compile(r"train_(?P<seconds>[0-9.]+)s_step_(?P<steps>[0-9]+)\.npz")


class TrainingClock:
    """A run's training seconds, its resumed sessions included, without the time spent on snapshots,
    evaluations and checkpoints (added to ``paused``): what ``train_seconds`` limits and ``keep_every_seconds``
    marks, the same in both trainers."""

    def __init__(self, start: float, offset: float, limit: float, keep_every: float):
        self.start, self.offset, self.limit, self.keep_every = start, offset, limit, keep_every
        self.paused = 0.0
        self.next_keep = (int(offset // keep_every) + 1) * keep_every if keep_every else float("inf")

    def seconds(self) -> float:
        return self.offset + time.perf_counter() - self.start - self.paused

    def out_of_time(self) -> bool:
        return bool(self.limit and self.seconds() >= self.limit)

    def keep_path(self, run_dir: Path, steps: int, finished: bool) -> Path | None:
        """Where to keep the policy now (``policies/train_<s>s_step_<N>.npz``) when a mark is due or the run
        ends, else None."""
        now = self.seconds()
        if now < self.next_keep and not (finished and self.keep_every):
            return None
        while self.next_keep <= now:
            self.next_keep += self.keep_every
        return run_dir / "policies" / f"train_{round(now, 1)}s_step_{steps}.npz"


def publish_outputs(config: Any, policy_path: Path, curve_png: Path) -> None:
    """Copy the final policy and learning curve where the config's ``export_to``/``curve_to`` ask."""
    for source, target in ((policy_path, config.export_to), (curve_png, config.curve_to)):
        if target:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


# ------------------------------------------------------------------ curves
CURVE_FIELDS = ["steps", "wall_s", "opponent", "deals", "episodes", "win_rate", "ci95_low", "ci95_high", "mean_points"]


def start_curve(curve_csv: Path) -> None:
    with curve_csv.open("w", newline="") as f:
        csv.DictWriter(f, CURVE_FIELDS).writeheader()


def append_curve(curve_csv: Path, steps: int, wall: float, rows: list[dict[str, Any]]) -> None:
    """One line per evaluation opponent (the rows of :func:`evaluate_policy`)."""
    with curve_csv.open("a", newline="") as f:
        writer = csv.DictWriter(f, CURVE_FIELDS)
        for row in rows:
            writer.writerow({"steps": steps, "wall_s": round(wall, 1), **row})


def _whole_row(row: dict[str, Any]) -> bool:
    """A curve row with every field, its numbers numbers (not a line torn by a crash mid-write)."""
    if None in row or any(row.get(name) in (None, "") for name in CURVE_FIELDS):
        return False
    try:
        int(row["steps"]), int(row["deals"]), int(row["episodes"])
        floats = [float(row[name]) for name in ("wall_s", "win_rate", "ci95_low", "ci95_high", "mean_points")]
    except ValueError:
        return False
    return all(value == value for value in floats)  # NaN is no measurement either


def truncate_curve(curve_csv: Path, steps: int) -> None:
    """Drop the evaluations logged after ``steps`` (a resumed run redoes them), and any row torn by a crash
    mid-write (its evaluation is redone too, if it was after the checkpoint; a note says how many)."""
    rows = []
    if curve_csv.exists():
        with curve_csv.open(newline="") as f:
            rows = list(csv.DictReader(f))
    whole = [r for r in rows if _whole_row(r)]
    if len(whole) < len(rows):
        print(f"note: {curve_csv}: dropped {len(rows) - len(whole)} torn row(s) (a crash mid-write)", file=sys.stderr)
    temporary = curve_csv.with_name(curve_csv.name + ".tmp")
    with temporary.open("w", newline="") as f:
        writer = csv.DictWriter(f, CURVE_FIELDS)
        writer.writeheader()
        writer.writerows({k: r[k] for k in CURVE_FIELDS} for r in whole if int(r["steps"]) <= steps)
    temporary.replace(curve_csv)


def evaluate_policy(config: Any, policy_path: Path) -> list[dict[str, Any]]:
    """The exported policy against each evaluation opponent, through the evaluation harness."""
    from .evaluate import EvalConfig, evaluate

    spec = f"policy:path={policy_path.resolve()}"
    rows = []
    for opponent in config.eval_opponents:
        eval_config = EvalConfig(
            game=config.game, agents=[spec, opponent], deals=config.eval_deals, seed=config.eval_seed,
            num_players=config.num_players, workers=config.eval_workers, progress=False,
            env_kwargs=dict(config.env_kwargs, episode=config.episode or game_spec(config.game).train_episode),
        )
        result = evaluate(eval_config)
        row = next(r for r in result["table"] if r["agent"] == spec)
        rows.append({
            "opponent": opponent, "deals": config.eval_deals, "episodes": row["episodes"],
            "win_rate": row["win_rate"], "ci95_low": row["win_rate_ci95"][0], "ci95_high": row["win_rate_ci95"][1],
            "mean_points": row["mean_points"],
        })
    return rows


def plot_curve(curve_csv: Path, out: Path, title: str) -> None:
    """Win rate (95% CI band) against each evaluation opponent over training steps; nothing without matplotlib
    (the [ray] venv, where ``cardenvs exploit`` trains too: curve.csv holds the numbers)."""
    try:
        import matplotlib
    except ImportError:
        return

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(csv.DictReader(curve_csv.open()))
    fig, ax = plt.subplots(figsize=(7, 4))
    for opponent in dict.fromkeys(r["opponent"] for r in rows):
        mine = [r for r in rows if r["opponent"] == opponent]
        steps = [int(r["steps"]) for r in mine]
        ax.plot(steps, [float(r["win_rate"]) for r in mine], marker="o", label=f"vs {opponent}")
        ax.fill_between(steps, [float(r["ci95_low"]) for r in mine], [float(r["ci95_high"]) for r in mine], alpha=0.2)
    ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate (95% CI)")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def run_main(argv: list[str] | None, prog: str, description: str, schema: type, modules: tuple[str, ...],
             train: Callable[..., Any]) -> int:
    """The command line of a trainer: ``--config FILE [--resume] [--run-dir DIR]``; exit 2 with a one-line
    error (a missing library, a bad config, a checkpoint that cannot be resumed) before or instead of a run."""
    import argparse

    from .config_files import load_config, require

    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--config", required=True, help=f"YAML file with the fields of {schema.__name__}")
    parser.add_argument("--resume", action="store_true", help="continue the run from its latest checkpoint")
    parser.add_argument("--run-dir", help="write the run here instead of the config's run_dir")
    args = parser.parse_args(argv)
    try:
        require(prog, *modules)
        config = load_config(args.config, schema)
        if args.run_dir:
            config.run_dir = args.run_dir
        train(config, resume=args.resume)
    except ValueError as error:  # CheckpointError, DiskFullError included
        print(f"error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        print(f"error: the disk is full: {error.strerror} writing {error.filename}; the last checkpoint is intact: "
              "free some space, then run again with --resume", file=sys.stderr)
        return 2
    return 0


def training_bar(total: int, initial: int, desc: str, enabled: bool):
    """The trainers' tqdm bar on stderr (learner decisions)."""
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, unit="step", desc=desc, disable=not enabled, file=sys.stderr,
                dynamic_ncols=True)
