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

import json
import random
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cardenvs.games import default_game

from .config_files import check_clock, check_game_config, check_network, check_ppo
from .runs import (
    CheckpointError,
    TrainingClock,
    append_curve,
    checkpoint_writes,
    commit_checkpoint,
    evaluate_policy,
    holds_run_lock,
    open_run_dir,
    plot_curve,
    publish_outputs,
    run_main,
    start_curve,
    training_bar,
    truncate_curve,
)
from .wrappers import OpponentPool, SelfPlayEnv, Snapshot


# ------------------------------------------------------------------ config
@dataclass
class TrainConfig:
    """Everything a run depends on (the schema of configs/quick_*.yaml and configs/full_*.yaml)."""

    game: str = field(default_factory=default_game)  # any game of the table (cardenvs.games)
    run_dir: str = "runs/ring_rang"  # checkpoints, TensorBoard logs, curve.csv, policy.npz, learning_curve.png
    seed: int = 0  # seeds the envs, the opponent draws and torch: a run replays exactly
    total_steps: int = 100_000  # learner decisions to train for
    episode: str = ""  # env episode; "" = the default ("round" for RING RANG, "deal" for Rang)
    num_players: int = 4  # Rang only
    env_kwargs: dict[str, Any] = field(default_factory=dict)  # extra env constructor arguments
    num_envs: int = 8  # envs stepped in turn (one process)
    torch_threads: int = 1  # torch.set_num_threads
    train_seconds: float = 0.0  # also stop after this many seconds of training (evaluations, checkpoints not counted)
    keep_every_seconds: float = 0.0  # keep the policy every so many training seconds: policies/train_<s>s_step_<N>.npz

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
        check_game_config(
            self,
            counts=("total_steps", "num_envs", "torch_threads", "n_steps", "batch_size", "n_epochs",
                    "snapshot_every", "max_snapshots", "eval_every", "eval_deals", "eval_workers",
                    "checkpoint_every", "keep_checkpoints"),
            agent_fields=("opponents", "eval_opponents"),
        )
        check_network(self)
        check_ppo(self, "clip_range")
        check_clock(self)


# Fields that may change when a run is resumed (a curriculum: e.g. add baselines to the pool later).
RESUMABLE_CHANGES = ("total_steps", "train_seconds", "keep_every_seconds", "progress", "opponents", "snapshot_weight",
                     "eval_every", "eval_deals",
                     "eval_opponents", "eval_workers", "checkpoint_every", "keep_checkpoints", "export_to", "curve_to")


# ------------------------------------------------------------- checkpoints
CHECKPOINT_FILES = ("model.pt", "pool.npz", "state.json")  # model.pt: tensors only, loaded with weights_only
STATE_KEYS = ("steps", "wall_s", "next_snapshot", "next_eval", "next_checkpoint", "config", "rng", "model")


def save_checkpoint(run_dir: Path, model: Any, pool: OpponentPool, envs: list[SelfPlayEnv], state: dict, keep: int):
    """Write ``checkpoints/step_<N>/`` then point ``latest.json`` at it (the commit point); prune old ones."""
    import torch

    root = run_dir / "checkpoints"
    folder = root / f"step_{state['steps']}"
    shutil.rmtree(folder, ignore_errors=True)
    with checkpoint_writes(run_dir, folder, state["steps"]):  # a full disk: one line, the last checkpoint kept
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
# --------------------------------------------------------------------- run
@holds_run_lock
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
        steps, wall_offset, train_offset = 0, 0.0, 0.0
        next_snapshot, next_eval, next_checkpoint = config.snapshot_every, config.eval_every, config.checkpoint_every
        start_curve(curve_csv)
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
        train_offset = float(state.get("train_s", wall_offset))  # checkpoints before train_s: wall time
        next_snapshot, next_eval, next_checkpoint = state["next_snapshot"], state["next_eval"], state["next_checkpoint"]
        truncate_curve(curve_csv, steps)  # evaluations logged after the checkpoint are redone
        print(f"resumed {run_dir} at step {steps} ({len(pool.snapshots)} snapshots in the pool)", file=sys.stderr)
    model.set_logger(configure(str(run_dir / "tb"), ["tensorboard", "csv"]))

    # -- the loop: one rollout + update at a time, then snapshot / evaluate / checkpoint when due
    rollout = config.n_steps * config.num_envs
    bar = training_bar(config.total_steps, steps, f"selfplay {config.game}", config.progress)
    start, start_steps = time.perf_counter(), steps
    clock = TrainingClock(start, train_offset, config.train_seconds, config.keep_every_seconds)
    while steps < config.total_steps and not clock.out_of_time():
        model.learn(total_timesteps=rollout, reset_num_timesteps=False, progress_bar=False)
        steps = model.num_timesteps
        wall = wall_offset + time.perf_counter() - start
        rate = (steps - start_steps) / max(time.perf_counter() - start, 1e-9)
        model.logger.record("time/steps_per_s", rate)
        bar.update(steps - bar.n)
        bar.set_postfix(steps_per_s=f"{rate:.0f}")
        finished = steps >= config.total_steps or clock.out_of_time()
        pause_start = time.perf_counter()  # keeping, snapshots, evaluations and checkpoints: not training time
        keep = clock.keep_path(run_dir, steps, finished)
        if keep:
            save_policy(actor_weights(model, config.game), keep)

        if steps >= next_snapshot:
            pool.add_snapshot(Snapshot(f"step_{steps}", actor_weights(model, config.game)))
            next_snapshot += config.snapshot_every
        if steps >= next_eval or finished:
            policy_path = save_policy(actor_weights(model, config.game), run_dir / "eval_policy.npz")
            rows = evaluate_policy(config, policy_path)
            append_curve(curve_csv, steps, wall, rows)
            for row in rows:
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
                     "next_checkpoint": next_checkpoint, "config": asdict(config), "train_s": clock.seconds()}
            save_checkpoint(run_dir, model, pool, envs, state, config.keep_checkpoints)
        clock.paused += time.perf_counter() - pause_start
    bar.close()

    # -- the results: the numpy policy and the learning curve
    elapsed, trained_s = time.perf_counter() - start, clock.seconds()
    policy_path = save_policy(actor_weights(model, config.game), run_dir / "policy.npz")
    plot_curve(curve_csv, run_dir / "learning_curve.png", f"{config.game}: {Path(config.run_dir).name}")
    wall_total = wall_offset + elapsed
    summary = {"steps": steps, "wall_s": wall_total, "train_s": trained_s,
               "steps_per_s": steps / max(wall_total, 1e-9)}
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    publish_outputs(config, policy_path, run_dir / "learning_curve.png")
    print(f"done: {steps} steps in {summary['wall_s']:.0f} s; policy {policy_path}", file=sys.stderr)
    return policy_path


def main(argv: list[str] | None = None) -> int:
    return run_main(argv, "cardenvs train", __doc__.splitlines()[0], TrainConfig,
                    ("yaml", "torch", "stable_baselines3", "sb3_contrib", "tensorboard", "tqdm", "matplotlib"), train)


if __name__ == "__main__":
    raise SystemExit(main())
