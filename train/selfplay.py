"""Self-play training of a MaskablePPO agent against a pool of opponents; one file, top to bottom.

    python -m cardenvs.train.selfplay --config configs/quick_ring_rang.yaml
    python -m cardenvs.train.selfplay --config configs/full_rang.yaml --resume

What happens (every number comes from :class:`TrainConfig`, loaded from YAML):

1. ``num_envs`` :class:`~cardenvs.train.wrappers.SelfPlayEnv` share one
   :class:`~cardenvs.train.wrappers.OpponentPool` (registry specs + snapshots of the learner).
2. MaskablePPO (sb3-contrib, MLP policy) learns one rollout at a time; between rollouts the
   loop adds a snapshot of the learner to the pool, evaluates it against the baselines
   through the evaluation harness (TensorBoard + ``curve.csv``), and writes a checkpoint.
3. A checkpoint is a folder ``checkpoints/step_<N>`` (model with optimizer, opponent pool,
   RNG states, step count) named by ``checkpoints/latest.json``, which is written last and
   atomically and holds the files' SHA-256, so a killed run resumes from a whole checkpoint.
4. At the end: the actor is exported to ``policy.npz`` (numpy only, see
   :mod:`cardenvs.agents.policy`), and the learning curve is drawn to ``learning_curve.png``.

Steps are the learner's decisions (SB3's ``num_timesteps``).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import random
import re
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cardenvs.agents.registry import canonical_game, check_agent, check_spec

from . import config_files
from .config_files import read_yaml_mapping
from .wrappers import DEFAULT_EPISODE, OpponentPool, SelfPlayEnv, Snapshot


# ------------------------------------------------------------------ config
@dataclass
class TrainConfig:
    """Everything a run depends on (the schema of configs/quick_*.yaml and configs/full_*.yaml)."""

    game: str = "ring_rang"  # "ring_rang" or "rang"
    run_dir: str = "runs/ring_rang"  # checkpoints, TensorBoard logs, curve.csv, policy.npz, learning_curve.png
    seed: int = 0  # seeds the envs, the opponent draws and torch: a run replays exactly
    total_steps: int = 100_000  # learner decisions to train for
    episode: str = ""  # env episode; "" = the default ("round" for RING RANG, "deal" for Rang)
    num_players: int = 4  # Rang only
    env_kwargs: dict[str, Any] = field(default_factory=dict)  # extra env constructor arguments
    num_envs: int = 8  # envs stepped in turn (one process)
    torch_threads: int = 1  # torch.set_num_threads

    # MaskablePPO
    learning_rate: float = 3e-4
    n_steps: int = 256  # rollout length per env; one rollout = n_steps * num_envs steps
    batch_size: int = 512
    n_epochs: int = 4
    gamma: float = 1.0  # episodes are short (one round / deal)
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    net_arch: list[int] = field(default_factory=lambda: [256, 256])  # hidden layers of actor and critic
    activation: str = "relu"  # "relu" or "tanh"

    # opponent pool
    opponents: dict[str, float] = field(default_factory=lambda: {"random": 1.0})  # registry spec -> weight
    snapshot_weight: float = 0.0  # the snapshots' share (all together), next to the opponents' weights
    snapshot_every: int = 50_000  # steps between snapshots of the learner added to the pool
    max_snapshots: int = 10  # the newest ones are kept

    # evaluation (through cardenvs.train.evaluate) and checkpoints
    eval_every: int = 50_000  # steps between evaluations (and one at the end)
    eval_deals: int = 100  # deals per opponent
    eval_opponents: list[str] = field(default_factory=lambda: ["random"])
    eval_seed: int = 12345  # the evaluation deals (the same at every evaluation)
    eval_workers: int = 1
    checkpoint_every: int = 50_000  # steps between checkpoints (and one at the end)
    keep_checkpoints: int = 2
    export_to: str = ""  # also copy the final policy.npz here (e.g. agents/policies/ring_rang.npz)
    curve_to: str = ""  # also copy learning_curve.png here (e.g. docs/learning_curve_ring_rang.png)
    progress: bool = True  # tqdm progress bar

    def validate(self) -> None:
        """Every field, and every opponent built once: a bad spec fails now, not at the first evaluation."""
        self.game = canonical_game(self.game)
        if self.game == "ring_rang" and self.num_players != 4:
            raise ValueError(f"num_players: RING RANG is always 4 players, got {self.num_players}")
        positive = ("total_steps", "num_envs", "torch_threads", "n_steps", "batch_size", "n_epochs",
                    "snapshot_every", "max_snapshots", "eval_every", "eval_deals", "eval_workers",
                    "checkpoint_every", "keep_checkpoints")
        for name in positive:
            if getattr(self, name) < 1:
                raise ValueError(f"{name}: expected an int >= 1, got {getattr(self, name)!r}")
        if self.activation not in ("relu", "tanh"):
            raise ValueError(f"activation: expected 'relu' or 'tanh', got {self.activation!r}")
        if not self.net_arch or any(not isinstance(n, int) or n < 1 for n in self.net_arch):
            raise ValueError(f"net_arch: expected a non-empty list of layer sizes, got {self.net_arch!r}")
        if self.game == "rang" and not 2 <= self.num_players <= 10:
            raise ValueError(f"num_players: Rang takes 2..10 players, got {self.num_players}")
        info = {"num_players": self.num_players} if self.game == "rang" else {}
        for field_name in ("opponents", "eval_opponents"):
            for spec in getattr(self, field_name):
                try:
                    check_spec(spec, self.game)
                    check_agent(spec, self.game, **info)
                except ValueError as error:
                    raise ValueError(f"{field_name}: {error}") from None
        episodes = {"ring_rang": ("round", "game"), "rang": ("deal", "match")}[self.game]
        if self.episode and self.episode not in episodes:
            raise ValueError(f"episode: expected one of {episodes} for {self.game}, got {self.episode!r}")


def load_config(path: str | Path, schema: type = TrainConfig) -> Any:
    """A ``schema`` (default TrainConfig) from YAML; an unknown or ill-typed field is a ValueError naming it."""
    return config_from_dict(read_yaml_mapping(path, "train config"), str(path), schema)


def config_from_dict(data: dict[str, Any], source: str = "config", schema: type = TrainConfig) -> Any:
    """A ``schema`` dataclass from a mapping, every field type-checked (see :mod:`.config_files`)."""
    return config_files.config_from_dict(data, source, schema)


# Fields that may change when a run is resumed (a curriculum: e.g. add baselines to the pool later).
RESUMABLE_CHANGES = ("total_steps", "progress", "opponents", "snapshot_weight", "eval_every", "eval_deals",
                     "eval_opponents", "eval_workers", "checkpoint_every", "keep_checkpoints", "export_to", "curve_to")


# ------------------------------------------------------------- checkpoints
class CheckpointError(ValueError):
    """A checkpoint that is missing, partial or corrupt."""


CHECKPOINT_FILES = ("model.pt", "pool.npz", "state.json")  # model.pt: tensors only, loaded with weights_only
STATE_KEYS = ("steps", "wall_s", "next_snapshot", "next_eval", "next_checkpoint", "config", "rng", "model")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_json_atomic(path: Path, data: Any) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=1))
    temporary.replace(path)


def save_checkpoint(run_dir: Path, model: Any, pool: OpponentPool, envs: list[SelfPlayEnv], state: dict, keep: int):
    """Write ``checkpoints/step_<N>/`` then point ``latest.json`` at it (the commit point); prune old ones."""
    import torch

    root = run_dir / "checkpoints"
    folder = root / f"step_{state['steps']}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    # tensors only (SB3's model.zip holds cloudpickled fields: loading it can run code)
    torch.save({"policy": model.policy.state_dict(), "optimizer": model.policy.optimizer.state_dict()},
               folder / "model.pt")
    np.savez(folder / "pool.npz", **pool.to_arrays())
    rng_state = {
        "numpy": _jsonable(np.random.get_state()),
        "python": _jsonable(random.getstate()),
        "torch": torch.get_rng_state().tolist(),
        "envs": [env.rng.bit_generator.state for env in envs],
    }
    counters = {"n_updates": model._n_updates, "episode_num": model._episode_num}
    (folder / "state.json").write_text(json.dumps({**state, "rng": rng_state, "model": counters}))
    commit_checkpoint(run_dir, folder, CHECKPOINT_FILES, state["steps"], keep)


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


def open_run_dir(run_dir: Path, config: Any, resume: bool, resumable: tuple[str, ...],
                 files: tuple[str, ...] = ("state.json",),
                 state_keys: tuple[str, ...] = ("steps", "config")) -> tuple[Path, dict] | None:
    """Check the run folder before anything is written; the checkpoint to resume, if any.

    A resume must use the checkpoint's config except the ``resumable`` fields and ``run_dir``
    (a run folder may be moved or copied); a fresh run refuses a folder that already holds one.
    """
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
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps(asdict(config), indent=1))
    return checkpoint


def publish_outputs(config: Any, policy_path: Path, curve_png: Path) -> None:
    """Copy the final policy and learning curve where the config's ``export_to``/``curve_to`` ask."""
    for source, target in ((policy_path, config.export_to), (curve_png, config.curve_to)):
        if target:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, tuple | list):
        return [_jsonable(v) for v in value]
    return value


def _restore_rng(rng_state: dict, envs: list[SelfPlayEnv]) -> None:
    import torch

    kind, keys, pos, has_gauss, cached = rng_state["numpy"]
    np.random.set_state((kind, np.array(keys, dtype=np.uint32), pos, has_gauss, cached))
    version, internal, gauss = rng_state["python"]
    random.setstate((version, tuple(internal), gauss))
    torch.set_rng_state(torch.tensor(rng_state["torch"], dtype=torch.uint8))
    for env, state in zip(envs, rng_state["envs"], strict=True):
        env.rng.bit_generator.state = state


# -------------------------------------------------------------- evaluation
CURVE_FIELDS = ["steps", "wall_s", "opponent", "deals", "episodes", "win_rate", "ci95_low", "ci95_high", "mean_points"]


def evaluate_policy(config: TrainConfig, policy_path: Path) -> list[dict[str, Any]]:
    """The exported policy against each evaluation opponent, through the evaluation harness."""
    from .evaluate import EvalConfig, evaluate

    spec = f"policy:path={policy_path.resolve()}"
    rows = []
    for opponent in config.eval_opponents:
        eval_config = EvalConfig(
            game=config.game, agents=[spec, opponent], deals=config.eval_deals, seed=config.eval_seed,
            num_players=config.num_players, workers=config.eval_workers, progress=False,
            env_kwargs=dict(config.env_kwargs, episode=config.episode or DEFAULT_EPISODE[config.game]),
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
    """Win rate (95% CI band) against each evaluation opponent over training steps."""
    import matplotlib

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


# --------------------------------------------------------------------- run
def train(config: TrainConfig, resume: bool = False) -> Path:
    """Train (or resume) the run of ``config``; returns the exported policy's path."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import configure
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    from cardenvs.agents.policy import actor_weights, save_policy

    torch.set_num_threads(config.torch_threads)
    run_dir = Path(config.run_dir)
    curve_csv = run_dir / "curve.csv"

    # -- the checkpoint to resume (checked before anything is written)
    checkpoint = open_run_dir(run_dir, config, resume, RESUMABLE_CHANGES, CHECKPOINT_FILES, STATE_KEYS)

    # -- the opponent pool and the envs
    pool = OpponentPool(config.game, dict(config.opponents), config.snapshot_weight, config.max_snapshots)
    envs = [
        SelfPlayEnv(config.game, pool, episode=config.episode or None, num_players=config.num_players,
                    seed=config.seed + i, env_kwargs=config.env_kwargs)
        for i in range(config.num_envs)
    ]
    vec_env = VecMonitor(DummyVecEnv([lambda env=env: env for env in envs]))

    # -- the model: built from the config; on resume the checkpoint's tensors (data only) go into it
    activation = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[config.activation]
    model = MaskablePPO(
        "MlpPolicy", vec_env, learning_rate=config.learning_rate, n_steps=config.n_steps,
        batch_size=config.batch_size, n_epochs=config.n_epochs, gamma=config.gamma,
        gae_lambda=config.gae_lambda, clip_range=config.clip_range, ent_coef=config.ent_coef,
        vf_coef=config.vf_coef, max_grad_norm=config.max_grad_norm, seed=config.seed, device="cpu",
        policy_kwargs={"net_arch": {"pi": config.net_arch, "vf": config.net_arch}, "activation_fn": activation},
    )
    if checkpoint is None:
        steps, wall_offset = 0, 0.0
        next_snapshot, next_eval, next_checkpoint = config.snapshot_every, config.eval_every, config.checkpoint_every
        with curve_csv.open("w", newline="") as f:
            csv.DictWriter(f, CURVE_FIELDS).writeheader()
    else:
        folder, state = checkpoint
        try:  # a hand-edited checkpoint (valid hashes, wrong content) is a CheckpointError, not a traceback
            saved = torch.load(folder / "model.pt", map_location="cpu", weights_only=True)
            model.policy.load_state_dict(saved["policy"])
            model.policy.optimizer.load_state_dict(saved["optimizer"])
            model.num_timesteps = state["steps"]
            model._n_updates, model._episode_num = state["model"]["n_updates"], state["model"]["episode_num"]
            with np.load(folder / "pool.npz", allow_pickle=False) as arrays:
                pool.load_arrays(arrays)
            _restore_rng(state["rng"], envs)
            if not all(isinstance(state[k], int | float) for k in ("wall_s", *STATE_KEYS[2:5])):
                raise ValueError("state.json: 'wall_s' and the 'next_*' due dates must be numbers")
        except Exception as error:  # noqa: BLE001 - whatever the content, the message names the checkpoint
            raise CheckpointError(f"checkpoint {folder} cannot be resumed: {type(error).__name__}: {error}"
                                  [:300]) from None
        steps, wall_offset = state["steps"], state["wall_s"]
        next_snapshot, next_eval, next_checkpoint = state["next_snapshot"], state["next_eval"], state["next_checkpoint"]
        _truncate_curve(curve_csv, steps)  # evaluations logged after the checkpoint are redone
        print(f"resumed {run_dir} at step {steps} ({len(pool.snapshots)} snapshots in the pool)", file=sys.stderr)
    model.set_logger(configure(str(run_dir / "tb"), ["tensorboard", "csv"]))

    # -- the loop: one rollout + update at a time, then snapshot / evaluate / checkpoint when due
    rollout = config.n_steps * config.num_envs
    bar = _progress_bar(config, steps)
    start, start_steps = time.perf_counter(), steps
    while steps < config.total_steps:
        model.learn(total_timesteps=rollout, reset_num_timesteps=False, progress_bar=False)
        steps = model.num_timesteps
        wall = wall_offset + time.perf_counter() - start
        rate = (steps - start_steps) / max(time.perf_counter() - start, 1e-9)
        model.logger.record("time/steps_per_s", rate)
        bar.update(steps - bar.n)
        bar.set_postfix(steps_per_s=f"{rate:.0f}")
        finished = steps >= config.total_steps

        if steps >= next_snapshot:
            pool.add_snapshot(Snapshot(f"step_{steps}", actor_weights(model, config.game)))
            next_snapshot += config.snapshot_every
        if steps >= next_eval or finished:
            policy_path = save_policy(actor_weights(model, config.game), run_dir / "eval_policy.npz")
            rows = evaluate_policy(config, policy_path)
            with curve_csv.open("a", newline="") as f:
                writer = csv.DictWriter(f, CURVE_FIELDS)
                for row in rows:
                    writer.writerow({"steps": steps, "wall_s": round(wall, 1), **row})
                    model.logger.record(f"eval/win_rate_vs_{row['opponent']}", row["win_rate"])
                    model.logger.record(f"eval/mean_points_vs_{row['opponent']}", row["mean_points"])
            bar.write(f"step {steps}: " + ", ".join(
                f"vs {r['opponent']} {r['win_rate']:.3f} [{r['ci95_low']:.3f}, {r['ci95_high']:.3f}]" for r in rows))
            while next_eval <= steps:
                next_eval += config.eval_every
        model.logger.dump(steps)
        if steps >= next_checkpoint or finished:
            while next_checkpoint <= steps:
                next_checkpoint += config.checkpoint_every
            state = {"steps": steps, "wall_s": wall, "next_snapshot": next_snapshot, "next_eval": next_eval,
                     "next_checkpoint": next_checkpoint, "config": asdict(config)}
            save_checkpoint(run_dir, model, pool, envs, state, config.keep_checkpoints)
    bar.close()

    # -- the results: the numpy policy and the learning curve
    elapsed = time.perf_counter() - start
    policy_path = save_policy(actor_weights(model, config.game), run_dir / "policy.npz")
    plot_curve(curve_csv, run_dir / "learning_curve.png", f"{config.game}: {Path(config.run_dir).name}")
    wall_total = wall_offset + elapsed
    summary = {"steps": steps, "wall_s": wall_total, "steps_per_s": steps / max(wall_total, 1e-9)}
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    publish_outputs(config, policy_path, run_dir / "learning_curve.png")
    print(f"done: {steps} steps in {summary['wall_s']:.0f} s; policy {policy_path}", file=sys.stderr)
    return policy_path


def _truncate_curve(curve_csv: Path, steps: int) -> None:
    rows = list(csv.DictReader(curve_csv.open())) if curve_csv.exists() else []
    with curve_csv.open("w", newline="") as f:
        writer = csv.DictWriter(f, CURVE_FIELDS)
        writer.writeheader()
        writer.writerows(r for r in rows if int(r["steps"]) <= steps)


def _progress_bar(config: TrainConfig, initial: int):
    from tqdm import tqdm

    return tqdm(total=config.total_steps, initial=initial, unit="step", desc=f"selfplay {config.game}",
                disable=not config.progress, file=sys.stderr, dynamic_ncols=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cardenvs train", description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="YAML file with the fields of TrainConfig")
    parser.add_argument("--resume", action="store_true", help="continue the run from its latest checkpoint")
    parser.add_argument("--run-dir", help="write the run here instead of the config's run_dir")
    args = parser.parse_args(argv)
    try:
        config_files.require("cardenvs train", "yaml", "torch", "stable_baselines3", "sb3_contrib", "tensorboard",
                             "tqdm", "matplotlib")
        config = load_config(args.config)
        if args.run_dir:
            config.run_dir = args.run_dir
        train(config, resume=args.resume)
    except ValueError as error:  # CheckpointError included
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
