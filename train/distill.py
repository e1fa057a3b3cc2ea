"""Search-guided improvement: label positions with a search agent's choices, fit the policy to them.

    cardenvs distill --config configs/distill_ring_rang.yaml     # run again to continue: saved chunks are kept

One round of expert iteration (Anthony et al. 2017; the DAgger form of Ross et al. 2011):

1. **Positions.** The student policy (``student``, an exported ``.npz``) plays every seat of
   ``deals`` deals, sampling from its own distribution, so the positions are the ones it reaches.
   The deals are a pure function of (``seed``, deal index), in chunks of ``chunk`` deals spread over
   ``workers`` processes (or Ray tasks on a cluster: ``ray_address``, docs/scale_out.md); each chunk is
   saved as it ends (``labels/chunk_<i>.npz``, data only), so a stopped run resumes where it was.
2. **Labels.** At every decision the teacher (``teacher``, a registry spec: a search agent such as
   ``pimc:iterations=200``, which reads the seat's information set from the env, never hidden cards;
   or ``oracle:...``, which sees every hand, to guide a student that still sees only its own observation)
   chooses an action; the position's observation, legal mask and that choice are stored, and, where
   the teacher keeps them (PIMC), the mean rollout reward of every legal action it tried.
3. **Fit.** A copy of the student network is trained with cross-entropy on its masked logits toward
   the teacher (``epochs``, Adam), 5% of the chunks held out; train and held-out agreement with the
   teacher's choice per epoch go to ``fit.csv``; ``keep: best`` keeps the epoch (0 = the student
   unchanged) with the best held-out agreement instead of the last one, since a fit on a few hundred
   thousand positions overfits within a few epochs. ``net_arch: [512, 512, 512]`` fits a fresh network
   of those hidden sizes (``activation``) instead of the student's; ``augment: true`` shows each
   minibatch under one of the game's symmetries drawn at random (RING RANG: the 24 renamings of the
   suits), so the labels go 24 times as far. ``target: choice`` fits the choice (one-hot);
   ``target: values`` fits ``softmax(values / temperature)`` over the actions the teacher tried, so
   two moves the search could hardly tell apart both keep their weight (a position without values,
   e.g. one legal action or an earlier round's labels, falls back to its choice). The result is
   ``policy.npz`` in the same format (numpy inference).

The opponents of the evaluation harness take no part: the teacher is search, the positions are
the student's own.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from cardenvs.agents.policy import PolicyAgent, load_policy, policy_arrays, policy_layers, save_policy
from cardenvs.agents.registry import make_agent
from cardenvs.games import default_game, game_spec

from .cluster import check_ray_address, fan_out, local_spec, shipped_files
from .config_files import check_game_config, check_network, check_symmetries, config_from_dict, read_yaml_mapping
from .evaluate import EvalConfig, deal_options, make_env, progress_bar


@dataclass
class DistillConfig:
    """Everything a run depends on (the schema of configs/distill_*.yaml)."""

    game: str = field(default_factory=default_game)  # any game of the table (cardenvs.games)
    run_dir: str = "runs/distill_ring_rang"  # labels/, fit.csv, policy.npz
    student: str = ""  # the policy .npz whose positions are labelled and whose network is fitted
    teacher: str = "pimc:iterations=200"  # registry spec of the labelling agent
    deals: int = 1000  # deals played (RING RANG: rounds; Rang: deals)
    chunk: int = 20  # deals per saved chunk
    seed: int = 1000  # the deals and every random choice
    num_players: int = 4  # Rang only
    workers: int = 2
    ray_address: str | None = None  # label the chunks as Ray tasks on this cluster (docs/scale_out.md)
    epochs: int = 8
    learning_rate: float = 3e-4
    minibatch_size: int = 512
    torch_threads: int = 1
    export_to: str = ""  # also copy the fitted policy.npz here
    # earlier rounds' run folders whose labels join the fit (DAgger aggregates every round's positions)
    include_labels: list[str] = field(default_factory=list)
    target: str = "choice"  # "choice": the teacher's move; "values": softmax of its action values / temperature
    temperature: float = 0.5  # with target "values", in the teacher's reward units (RING RANG: round points)
    keep: str = "last"  # "last": the network after the last epoch; "best": after the best held-out epoch
    net_arch: list[int] = field(default_factory=list)  # hidden sizes of a fresh network; empty: the student's
    activation: str = "relu"  # of a fresh network: "relu" or "tanh"
    augment: bool = False  # each minibatch renamed by one of the game's symmetries (game_spec(game).parts)

    def validate(self) -> None:
        spec = check_game_config(self, counts=("deals", "chunk", "workers", "epochs", "minibatch_size",
                                               "torch_threads"))
        if not self.student or not Path(self.student).is_file():
            raise ValueError(f"student: no policy file {self.student!r}")
        check_ray_address(self.ray_address)
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate: expected > 0, got {self.learning_rate!r}")
        teacher = make_agent(self.teacher, self.game, seed=0, **spec.env_info(self.num_players))  # a bad spec fails
        if self.target not in ("choice", "values"):
            raise ValueError(f"target: expected 'choice' or 'values', got {self.target!r}")
        if self.target == "values" and not hasattr(teacher, "last_values"):
            raise ValueError(f"target: 'values' needs a teacher that keeps action values (pimc), not {self.teacher!r}")
        if self.net_arch:
            check_network(self)
        if self.augment:
            check_symmetries(spec)
        if self.keep not in ("last", "best"):
            raise ValueError(f"keep: expected 'last' or 'best', got {self.keep!r}")
        if not self.temperature > 0:
            raise ValueError(f"temperature: expected > 0, got {self.temperature!r}")
        PolicyAgent(path=self.student, game=self.game)
        for folder in self.include_labels:
            if not sorted((Path(folder) / "labels").glob("chunk_*.npz")):
                raise ValueError(f"include_labels: no labels in {folder}/labels")

    def env_info(self) -> dict[str, Any]:
        return game_spec(self.game).env_info(self.num_players)


# ------------------------------------------------------------ positions and labels
def chunk_path(config: DistillConfig, index: int) -> Path:
    return Path(config.run_dir) / "labels" / f"chunk_{index:05d}.npz"


def label_chunk(args: tuple[DistillConfig, int]) -> Path:
    """Play the deals of chunk ``index`` with the student, label every decision with the teacher, save them."""
    config, index = args
    out = chunk_path(config, index)
    if not out.exists():
        save_chunk(out, label_arrays((config, index, load_policy(config.student), {})))
    return out


def label_arrays(args: tuple[DistillConfig, int, dict[str, np.ndarray], dict[str, Any]]) -> dict[str, np.ndarray]:
    """The labelled positions of chunk ``index``: a worker's or a Ray task's job. The student's arrays and the
    files the teacher's spec names (:func:`~cardenvs.train.cluster.shipped_files`) come with the job, so a
    node needs neither on its disk; the chunk is saved where the run is (:func:`collect`)."""
    config, index, student_weights, files = args
    eval_config = EvalConfig(game=config.game, num_players=config.num_players, seed=config.seed)
    env = make_env(eval_config)
    student = PolicyAgent(weights=student_weights, greedy=False, game=config.game)
    teacher = make_agent(local_spec(config.teacher, files), config.game, seed=None, **config.env_info())
    observations, masks, labels, values = [], [], [], []
    no_values = np.full(env.action_space(env.possible_agents[0]).n, np.nan, np.float32)
    first = index * config.chunk
    for deal in range(first, min(first + config.chunk, config.deals)):
        seed = int(np.random.SeedSequence([config.seed, deal]).generate_state(1)[0])
        student.reset(seed)
        teacher.reset(seed + 1)
        env.reset(seed=seed, options=deal_options(eval_config, deal))
        for _ in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if getattr(teacher, "needs_env", False):
                teacher.observe_env(env)
            observations.append(obs["observation"].astype(np.float16))
            masks.append(obs["action_mask"].astype(bool))
            # a search teacher proposes without taking its move as played: the student's move is what happens,
            # and what the seat remembers (Rang: its own discards) must follow the student's moves
            labels.append(teacher.propose(obs) if hasattr(teacher, "propose") else teacher.act(obs))
            values.append(no_values.copy())
            for action, value in (getattr(teacher, "last_values", None) or {}).items():
                values[-1][action] = value
            move = student.act(obs)
            if hasattr(teacher, "played"):
                teacher.played(move)
            env.step(move)
    return {"observation": np.array(observations), "mask": np.array(masks),
            "label": np.array(labels, dtype=np.int16), "value": np.array(values, dtype=np.float32)}


def save_chunk(out: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write a chunk's arrays whole (a temporary file renamed), so a stopped run never leaves half a chunk."""
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    tmp.replace(out)


def collect(config: DistillConfig, progress: bool = True) -> list[Path]:
    """Every chunk of the run, with a progress bar: those already saved are kept, the others labelled over
    ``workers`` processes or the Ray cluster at ``ray_address`` and saved here as each completes."""
    (Path(config.run_dir) / "labels").mkdir(parents=True, exist_ok=True)
    paths = [chunk_path(config, i) for i in range(-(-config.deals // config.chunk))]
    missing = [i for i, path in enumerate(paths) if not path.exists()]
    student = load_policy(config.student)
    files = shipped_files([config.teacher]) if config.ray_address else {}
    jobs = [(config, i, student, files) for i in missing]
    bar = progress_bar(len(paths), progress, "label chunks", unit="chunk")
    bar.update(len(paths) - len(missing))
    try:
        for index, arrays in fan_out(label_arrays, jobs, config.workers, config.ray_address):
            save_chunk(paths[missing[index]], arrays)
            bar.update(1)
    finally:
        bar.close()
    return paths


def fit_labels(config: DistillConfig, progress: bool = True) -> list[Path]:
    """This round's chunks (collected if missing), then those of ``include_labels`` (earlier rounds)."""
    paths = collect(config, progress)
    for folder in config.include_labels:
        paths += sorted((Path(folder) / "labels").glob("chunk_[0-9]*.npz"))
    return paths


def load_labels(paths: list[Path], temperature: float | None = None) -> tuple[np.ndarray, ...]:
    """(observations, masks, choices, targets) of the chunks; a target row is the distribution the fit
    aims at: one-hot on the choice, or with ``temperature`` the softmax of the teacher's values where
    the chunk holds them."""
    parts = []
    for path in paths:
        with np.load(path, allow_pickle=False) as data:
            label = data["label"].astype(np.int64)
            values = data["value"] if temperature is not None and "value" in data.files else None
            parts.append((data["observation"].astype(np.float32), data["mask"], label,
                          value_targets(label, data["mask"].shape[1], values, temperature)))
    return tuple(np.concatenate([p[i] for p in parts]) for i in range(4))


def value_targets(label: np.ndarray, num_actions: int, values: np.ndarray | None,
                  temperature: float | None) -> np.ndarray:
    """One-hot rows on ``label``; where ``values`` has a finite entry, softmax(values / temperature) over them."""
    targets = np.zeros((len(label), num_actions), np.float32)
    targets[np.arange(len(label)), label] = 1.0
    if values is None or temperature is None:
        return targets
    known = np.isfinite(values)
    rows = known.any(axis=1)
    scaled = np.where(known, values / temperature, -np.inf)[rows]
    weights = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    targets[rows] = weights / weights.sum(axis=1, keepdims=True)
    return targets


# --------------------------------------------------------------------- the fit
def fit(config: DistillConfig, paths: list[Path]) -> Path:
    """Cross-entropy of the student's masked logits toward the teacher (its choices or the softmax of its
    values, ``target``); the fitted policy.npz."""
    import torch
    from torch import nn

    torch.set_num_threads(config.torch_threads)
    torch.manual_seed(config.seed)
    held = max(1, len(paths) // 20) if len(paths) > 1 else 0
    temperature = config.temperature if config.target == "values" else None
    train_set = load_labels(paths[held:], temperature)
    held_set = load_labels(paths[:held], temperature) if held else None
    weights = load_policy(config.student)
    activation_name = config.activation if config.net_arch else str(weights["activation"])
    if config.net_arch:  # a fresh network (torch's default initialisation)
        sizes = [train_set[0].shape[1], *config.net_arch, train_set[1].shape[1]]
        layers = [nn.Linear(n_in, n_out) for n_in, n_out in zip(sizes[:-1], sizes[1:], strict=True)]
    else:  # the student's network
        layers = []
        for weight, bias in policy_layers(weights):
            layer = nn.Linear(weight.shape[1], weight.shape[0])
            with torch.no_grad():
                layer.weight.copy_(torch.as_tensor(weight))
                layer.bias.copy_(torch.as_tensor(bias))
            layers.append(layer)
    activation = nn.ReLU() if activation_name == "relu" else nn.Tanh()
    model = nn.Sequential(*[m for layer in layers[:-1] for m in (layer, activation)], layers[-1])
    # (observation index, action index) of each symmetry (suit_symmetries(): a mask's columns go by argsort)
    symmetries = [(torch.as_tensor(index), torch.as_tensor(np.argsort(actions)))
                  for index, actions in check_symmetries(game_spec(config.game))] if config.augment else []
    generator = np.random.default_rng(config.seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)

    def accuracy(data: tuple[np.ndarray, ...]) -> float:
        with torch.no_grad():
            logits = model(torch.as_tensor(data[0])).masked_fill(~torch.as_tensor(data[1]), -1e9)
            return float((logits.argmax(1) == torch.as_tensor(data[2])).float().mean())

    obs, mask, label, target = (torch.as_tensor(a) for a in train_set)

    def snapshot() -> list[tuple[np.ndarray, np.ndarray]]:
        return [(layer.weight.detach().numpy().copy(), layer.bias.detach().numpy().copy()) for layer in layers]

    kept, kept_epoch, best = snapshot(), 0, -1.0
    curve = Path(config.run_dir) / "fit.csv"
    with curve.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["epoch", "positions", "train_accuracy", "held_out_accuracy"])
        for epoch in range(config.epochs + 1):
            if epoch:
                order = torch.randperm(len(label))
                for first in range(0, len(label), config.minibatch_size):
                    mb = order[first:first + config.minibatch_size]
                    mb_obs, mb_mask, mb_target = obs[mb], mask[mb], target[mb]
                    if symmetries:
                        index, columns = symmetries[generator.integers(len(symmetries))]
                        mb_obs, mb_mask, mb_target = mb_obs[:, index], mb_mask[:, columns], mb_target[:, columns]
                    logits = model(mb_obs).masked_fill(~mb_mask, -1e9)
                    # one-hot rows (target "choice") give the plain cross-entropy on the choice
                    loss = nn.functional.cross_entropy(logits, mb_target)
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
            held_out = accuracy(held_set) if held_set else None
            row = [epoch, len(label), f"{accuracy(train_set):.4f}", "" if held_out is None else f"{held_out:.4f}"]
            writer.writerow(row)
            f.flush()
            print(f"epoch {epoch}: train accuracy {row[2]}, held-out {row[3]}", file=sys.stderr)
            if config.keep == "last" or held_out is None or held_out > best:  # no held-out chunk: the last
                kept, kept_epoch, best = snapshot(), epoch, held_out if held_out is not None else best
    print(f"kept the network after epoch {kept_epoch}", file=sys.stderr)
    fitted = policy_arrays(kept, activation_name, config.game)
    path = save_policy(fitted, Path(config.run_dir) / "policy.npz")
    if config.export_to:
        Path(config.export_to).parent.mkdir(parents=True, exist_ok=True)
        save_policy(fitted, config.export_to)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cardenvs distill", description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, help="YAML file with the fields of DistillConfig")
    parser.add_argument("--ray-address", dest="ray_address", metavar="ADDRESS|auto|local",
                        help="override: label the chunks as Ray tasks on this cluster (docs/scale_out.md)")
    parser.add_argument("--no-progress", action="store_false", dest="progress")
    args = parser.parse_args(argv)
    try:
        data = read_yaml_mapping(args.config, "distill config")
        if args.ray_address:
            data["ray_address"] = args.ray_address
        config = config_from_dict(data, args.config, DistillConfig)
        paths = fit_labels(config, args.progress)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    policy = fit(config, paths)
    print(f"wrote {policy} ({Path(config.run_dir) / 'fit.csv'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
