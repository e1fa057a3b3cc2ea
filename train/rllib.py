"""Ray RLlib multi-agent PPO over the AEC envs, through RLlib's PettingZoo adapter.

    python -m cardenvs.train.rllib --config configs/rllib_ring_rang.yaml [--iterations N]
        [--num-env-runners N] [--address auto] [--export policy.npz [--export-module team_0]]

Needs the ``ray`` extra (``pip install -e '.[ray]'``, in a venv of its own: ray[rllib]
pins its own gymnasium, which stable-baselines3 of ``[train]`` does not accept).

* Env: :class:`CardPettingZooEnv`, RLlib's ``PettingZooEnv`` around ``ring_rang_v0`` /
  ``rang_v0`` (the training defaults of :func:`cardenvs.train.wrappers.make_aec_env`),
  which also counts the actions it is sent that the mask forbids.
* Model: :class:`MaskedPPOTorchRLModule`, RLlib's default PPO module on
  ``obs["observation"]`` whose action logits are pushed to the float minimum
  wherever ``obs["action_mask"]`` is 0, so no illegal action is ever sampled.
* Policies (``policies:`` in the config): ``shared`` (one policy for every seat,
  self-play), ``per_team`` (RING RANG: ``team_0`` for seats 0 and 2, ``team_1`` for
  seats 1 and 3) or ``per_seat`` (``player_i``).
* Scale: ``num_env_runners`` sampling actors; ``address: auto`` (or ``RAY_ADDRESS``)
  runs them on a running Ray cluster (docs/integrations.md).

Each iteration appends RLlib's result summary to ``<run_dir>/progress.jsonl``; the
trained algorithm is saved to ``<run_dir>/checkpoint``. With ``export`` (``--export``),
one policy's actor is also written, from the live algorithm, as the numpy ``.npz`` of
:mod:`cardenvs.agents.policy` (``cardenvs eval --agents policy:path=FILE``): RLlib's
checkpoint is pickle-based, so it is never read back here (:func:`export_policy`).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import ray
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN

from cardenvs.agents.policy import PolicyAgent, policy_arrays, save_policy
from cardenvs.games import default_game, game_spec
from cardenvs.train.config_files import check_counts
from cardenvs.train.wrappers import make_aec_env

POLICY_MODES = ("shared", "per_team", "per_seat")


# ---------------------------------------------------------------- the env
class CardPettingZooEnv(PettingZooEnv):
    """RLlib's PettingZoo adapter around a cardenvs AEC env, counting the actions it is sent.

    ``env_config``: ``game``, ``num_players`` (Rang), ``env`` (keywords for the AEC env),
    ``illegal_action`` (``"raise"``, or ``"terminate"``: PettingZoo's illegal-move wrapper).
    """

    def __init__(self, env_config: dict[str, Any] | None = None):
        env_config = dict(env_config or {})
        game = env_config.get("game") or default_game()
        env_kwargs = dict(env_config.get("env") or {})
        aec = make_aec_env(
            game,
            env_kwargs.pop("episode", None),
            int(env_config.get("num_players", 4)),
            illegal_action=env_config.get("illegal_action", "raise"),
            **env_kwargs,
        )
        super().__init__(aec)
        self.actions_sent = 0
        self.illegal_actions = 0

    def step(self, action: dict[str, Any]):
        agent = self.env.agent_selection
        legal = self.env.unwrapped.legal_actions()
        if agent in action and legal:
            self.actions_sent += 1
            self.illegal_actions += int(int(action[agent]) not in legal)
        return super().step(action)

    def pop_action_counts(self) -> tuple[int, int]:
        """(actions sent, illegal ones among them) since the previous call."""
        counts = (self.actions_sent, self.illegal_actions)
        self.actions_sent = self.illegal_actions = 0
        return counts


class ActionCountsCallback(RLlibCallback):
    """Report, per episode, the actions sent to the env and how many the mask forbade."""

    def on_episode_end(self, *, env: Any = None, env_index: int = 0, metrics_logger: Any = None, **kwargs: Any):
        envs = getattr(env, "envs", None)
        card_env = (envs[env_index] if envs is not None else env).unwrapped
        sent, illegal = card_env.pop_action_counts()
        metrics_logger.log_value("actions_sent", sent, reduce="sum")
        metrics_logger.log_value("illegal_actions", illegal, reduce="sum")


# ---------------------------------------------------------------- the model
class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's PPO module on ``obs["observation"]``; logits of actions masked out by ``obs["action_mask"]``."""

    def __init__(self, *, observation_space: Any = None, **kwargs: Any):
        if observation_space is None or "observation" not in getattr(observation_space, "spaces", {}):
            raise ValueError(
                f"observation_space: expected a Dict with 'observation' and 'action_mask', got {observation_space}"
            )
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space["observation"], **kwargs)

    def setup(self) -> None:
        super().setup()  # the networks are built for the observation vector alone
        self.observation_space = self.observation_space_with_mask

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        obs = batch[Columns.OBS]
        return {**batch, Columns.OBS: obs["observation"]}, obs["action_mask"]

    @staticmethod
    def _masked(outs: dict[str, Any], mask: Any) -> dict[str, Any]:
        logits = outs[Columns.ACTION_DIST_INPUTS]
        outs[Columns.ACTION_DIST_INPUTS] = logits.masked_fill(mask == 0, FLOAT_MIN)
        return outs

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        batch, mask = self._split(batch)
        return self._masked(super()._forward(batch, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        batch, mask = self._split(batch)
        return self._masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if isinstance(batch[Columns.OBS], dict):
            batch, _ = self._split(batch)
        return super().compute_values(batch, embeddings)


# ---------------------------------------------------------------- the export
_ACTIVATIONS = {"Tanh": "tanh", "ReLU": "relu"}


def actor_layers(module: Any) -> list[tuple[str, torch.nn.Module]]:
    """The actor of a default PPO torch module, in order: (state-dict prefix, layer) pairs.

    RLlib's actor is its encoder's MLP (``encoder.actor_encoder``, or the shared
    ``encoder.encoder`` when ``vf_share_layers``), then the ``pi`` head's MLP, whose last
    layer is linear: together one MLP, as the ``.npz`` policy format plays it.
    """
    encoder = module.encoder
    name = "actor_encoder" if hasattr(encoder, "actor_encoder") else "encoder"
    layers = []
    for prefix, mlp in ((f"encoder.{name}.net.mlp", getattr(encoder, name).net.mlp), ("pi.net.mlp", module.pi.net.mlp)):
        layers.extend((f"{prefix}.{index}", layer) for index, layer in enumerate(mlp))
    return layers


def actor_weights(module: Any, game: str, state: dict[str, Any] | None = None) -> dict[str, np.ndarray]:
    """The actor of ``module`` as the arrays of a ``.npz`` policy (:mod:`cardenvs.agents.policy`).

    ``state``: the module's state dict (``get_state()``; tensors or numpy arrays), default the
    module's own; ``module`` then only gives the layout. Only Linear layers, each but the last
    followed by one activation (Tanh or ReLU, the same everywhere), can be exported; anything
    else (layer norm, an encoder and head of different activations) is a ValueError.
    """
    state = module.get_state() if state is None else state
    linear: list[str] = []
    activations: list[str | None] = []  # after each Linear: its activation's name, or None
    for prefix, layer in actor_layers(module):
        kind = type(layer).__name__
        if isinstance(layer, torch.nn.Linear):
            linear.append(prefix)
            activations.append(None)
        elif kind in _ACTIVATIONS and activations and activations[-1] is None:
            activations[-1] = _ACTIVATIONS[kind]
        else:
            raise ValueError(f"cannot export actor layer {prefix} ({layer!r}): only Linear, then Tanh or ReLU")
    if not linear or activations[-1] is not None:
        raise ValueError("cannot export the actor: its output layer must be a Linear without activation")
    hidden_activations = set(activations[:-1])
    if None in hidden_activations or len(hidden_activations) > 1:
        raise ValueError(f"cannot export the actor: hidden layers need one activation, got {activations[:-1]}")

    layers = [(state[f"{prefix}.weight"], state[f"{prefix}.bias"]) for prefix in linear]
    return policy_arrays(layers, hidden_activations.pop() if hidden_activations else "tanh", game)


def export_policy(source: Any, game: str, path: str | Path, module_id: str | None = None) -> Path:
    """Write the actor of ``source`` to ``path`` as a ``.npz`` policy; returns the path.

    ``source``: a live RLlib ``Algorithm`` (the weights of ``module_id``, default its first
    module, are read from its learner group, so also from remote learners on a cluster) or a
    single torch RLModule. RLlib's checkpoints are pickle files, which this never loads:
    export from the algorithm that trained (``export:`` in the config, or ``--export``).
    """
    if hasattr(source, "learner_group"):
        modules = sorted(source.config.policies)
        module_id = module_id or ("shared" if "shared" in modules else modules[0])
        if module_id not in modules:
            raise ValueError(f"export: no policy {module_id!r}; the algorithm has {modules}")
        state = source.learner_group.get_weights(module_ids=[module_id])[module_id]
        weights = actor_weights(source.get_module(module_id), game, state)
    else:
        weights = actor_weights(source, game)
    PolicyAgent(weights=weights, game=game)  # the checks of a policy file (shapes, finite values)
    return save_policy(weights, path)


def check_export_path(path: str | Path) -> None:
    """Fail now, not after training, when the export file cannot be written there (ValueError, one line)."""
    target = Path(path)
    if target.is_dir():
        raise ValueError(f"--export {path}: is a folder; give a file name such as {target / 'policy.npz'}")
    folder = target.parent
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is None or not existing.is_dir():
        raise ValueError(f"--export {path}: {existing or folder} is not a folder; choose a file in a folder")
    try:
        if existing == folder:
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".cardenvs-write-check"):
                pass
            if target.exists() and not os.access(target, os.W_OK):
                raise PermissionError(13, "Permission denied")
        elif not os.access(existing, os.W_OK | os.X_OK):
            raise PermissionError(13, f"Permission denied: cannot create folders in {existing}")
    except OSError as error:
        raise ValueError(f"--export {path}: cannot write there ({error.strerror or error}); "
                         "choose a file in a folder you can write to") from None


# ---------------------------------------------------------------- the config
@dataclass
class RLlibConfig:
    """A run: the game, the policies, PPO's settings and where the env runners run."""

    game: str = field(default_factory=default_game)
    num_players: int = 4
    env: dict[str, Any] = field(default_factory=dict)  # AEC env keywords (episode, knocking, ...)
    policies: str = "shared"  # shared | per_team (RING RANG) | per_seat
    iterations: int = 20
    num_env_runners: int = 2
    num_envs_per_env_runner: int = 1
    num_cpus_per_env_runner: int = 1
    train_batch_size: int = 4000
    minibatch_size: int = 256
    num_epochs: int = 4
    lr: float = 3e-4
    gamma: float = 0.99
    lambda_: float = 0.95
    entropy_coeff: float = 0.01
    hidden: list[int] = field(default_factory=lambda: [256, 256])
    seed: int = 0
    run_dir: str = "runs/rllib_ring_rang"
    checkpoint: bool = True
    address: str | None = None  # None: a local Ray (or RAY_ADDRESS); "auto": the running cluster
    num_cpus: int | None = None  # CPUs of a local Ray (None: all, and enough for the env runners)
    export: str | None = None  # after training, write one policy's actor here (.npz of cardenvs.agents.policy)
    export_module: str | None = None  # the policy to export (None: the first, "shared" or "team_0")

    def __post_init__(self) -> None:
        spec = game_spec(self.game)
        self.game = spec.name
        spec.check_players(self.num_players)
        if self.policies not in POLICY_MODES:
            raise ValueError(f"policies: expected one of {POLICY_MODES}, got {self.policies!r}")
        if self.policies == "per_team" and not spec.partnerships:
            raise ValueError(f"policies: 'per_team' is for a partnership game ({spec.title} has no teams)")
        if not isinstance(self.env, dict):
            raise ValueError(f"env: expected a mapping of AEC env keywords, got {self.env!r}")
        check_counts(self, ("iterations", "num_envs_per_env_runner", "train_batch_size", "minibatch_size",
                            "num_epochs"))
        for name in ("num_env_runners", "num_cpus_per_env_runner"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name}: expected an int >= 0, got {value!r}")
        if self.minibatch_size > self.train_batch_size:
            raise ValueError(f"minibatch_size: {self.minibatch_size} is larger than train_batch_size")
        if not self.hidden or not all(isinstance(h, int) and h > 0 for h in self.hidden):
            raise ValueError(f"hidden: expected a list of layer sizes >= 1, got {self.hidden!r}")
        if self.num_cpus is not None and (not isinstance(self.num_cpus, int) or self.num_cpus < 1):
            raise ValueError(f"num_cpus: expected an int >= 1 or null, got {self.num_cpus!r}")
        if self.export is not None and (not isinstance(self.export, str) or not self.export):
            raise ValueError(f"export: expected a file name or null, got {self.export!r}")
        if self.export_module is not None and self.export_module not in policy_ids(self):
            raise ValueError(f"export_module: expected one of {policy_ids(self)} or null, got {self.export_module!r}")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RLlibConfig:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown config keys {unknown}; known: {sorted(known)}")
        return cls(**data)

    @classmethod
    def from_yaml(cls, path: str | Path) -> RLlibConfig:
        import yaml

        data = yaml.safe_load(Path(path).read_text()) or {}
        if not isinstance(data, dict):
            raise ValueError(f"{path}: expected a mapping of config keys")
        return cls.from_dict(data)

    def env_config(self) -> dict[str, Any]:
        return {"game": self.game, "num_players": self.num_players, "env": dict(self.env)}


def policy_ids(config: RLlibConfig) -> list[str]:
    if config.policies == "shared":
        return ["shared"]
    if config.policies == "per_team":
        return ["team_0", "team_1"]
    return [f"player_{seat}" for seat in range(config.num_players)]


def policy_of(agent_id: str, episode: Any = None, *, mode: str = "shared", **_: Any) -> str:
    """The policy that plays ``agent_id`` (``player_i``) under ``mode``."""
    if mode == "shared":
        return "shared"
    if mode == "per_team":
        return f"team_{int(agent_id.rsplit('_', 1)[1]) % 2}"
    return agent_id


def ppo_config(config: RLlibConfig, illegal_action: str = "raise") -> PPOConfig:
    """RLlib's PPOConfig for ``config`` (new API stack, torch)."""
    module_spec = RLModuleSpec(
        module_class=MaskedPPOTorchRLModule,
        model_config={"fcnet_hiddens": list(config.hidden), "vf_share_layers": False},
    )
    ids = policy_ids(config)
    return (
        PPOConfig()
        .framework("torch")
        .environment(
            CardPettingZooEnv,
            env_config={**config.env_config(), "illegal_action": illegal_action},
            # RLlib's env checker steps a random, mostly illegal, action; PettingZoo's api_test covers the envs
            disable_env_checking=True,
        )
        .env_runners(
            num_env_runners=config.num_env_runners,
            num_envs_per_env_runner=config.num_envs_per_env_runner,
            num_cpus_per_env_runner=config.num_cpus_per_env_runner,
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=config.train_batch_size,
            minibatch_size=config.minibatch_size,
            num_epochs=config.num_epochs,
            lr=config.lr,
            gamma=config.gamma,
            lambda_=config.lambda_,
            entropy_coeff=config.entropy_coeff,
        )
        .multi_agent(
            policies=set(ids),
            policy_mapping_fn=functools.partial(policy_of, mode=config.policies),
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={pid: module_spec for pid in ids}))
        .callbacks(ActionCountsCallback)
        .debugging(seed=config.seed)
    )


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    """The figures of one ``algo.train()`` result worth a log line."""
    runners = result.get("env_runners", {})
    learners = result.get("learners", {})
    return {
        "iteration": result.get("training_iteration"),
        "env_steps": result.get("num_env_steps_sampled_lifetime"),
        "episodes": runners.get("num_episodes_lifetime", runners.get("num_episodes")),
        "episode_len_mean": _number(runners.get("episode_len_mean")),
        "module_returns": {k: _number(v) for k, v in runners.get("module_episode_returns_mean", {}).items()},
        "actions_sent": _number(runners.get("actions_sent")),
        "illegal_actions": _number(runners.get("illegal_actions")),
        "policy_loss": {
            k: _number(v.get("policy_loss")) for k, v in learners.items() if isinstance(v, dict) and "policy_loss" in v
        },
    }


def _number(value: Any) -> float | None:
    if value is None:
        return None
    value = float(np.asarray(value, dtype=float).mean())
    return None if np.isnan(value) else value


def init_ray(config: RLlibConfig) -> None:
    """Connect to ``config.address`` (or ``RAY_ADDRESS``), or start a local Ray with ``num_cpus``.

    Ray's CPUs are logical: a local Ray gets at least one per env runner plus one for
    the driver, so the runners start even on a machine with fewer cores.
    """
    if ray.is_initialized():
        return
    if config.address:
        ray.init(address=config.address)
        return
    needed = config.num_env_runners * config.num_cpus_per_env_runner + 1  # + the driver, which also learns
    ray.init(num_cpus=config.num_cpus or max(os.cpu_count() or 1, needed), include_dashboard=False)


def train(config: RLlibConfig, illegal_action: str = "raise", log: bool = True) -> list[dict[str, Any]]:
    """Run ``config.iterations`` PPO iterations; returns every iteration's :func:`summarize` (and saves them).

    With ``config.export``, the trained policy ``config.export_module`` is then written there
    (:func:`export_policy`); the path is checked before Ray starts.
    """
    if config.export:
        check_export_path(config.export)
    init_ray(config)
    torch.manual_seed(config.seed)
    run_dir = Path(config.run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.json").write_text(json.dumps(asdict(config), indent=2))
    algo = ppo_config(config, illegal_action=illegal_action).build_algo()
    summaries = []
    try:
        with (run_dir / "progress.jsonl").open("a") as progress:
            for _ in range(config.iterations):
                start = time.perf_counter()
                summary = summarize(algo.train())
                summary["seconds"] = round(time.perf_counter() - start, 2)
                summaries.append(summary)
                progress.write(json.dumps(summary) + "\n")
                progress.flush()
                if log:
                    print(json.dumps(summary), flush=True)
        if config.checkpoint:
            algo.save_to_path(str((run_dir / "checkpoint").resolve()))
        if config.export:
            path = export_policy(algo, config.game, config.export, config.export_module)
            if log:
                print(f"exported policy {config.export_module or policy_ids(config)[0]} to {path}", flush=True)
    finally:
        algo.stop()
    return summaries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cardenvs.train.rllib", description=__doc__.split("\n")[0])
    parser.add_argument("--config", required=True, help="YAML file of RLlibConfig keys")
    parser.add_argument("--iterations", type=int, help="override: training iterations")
    parser.add_argument("--num-env-runners", type=int, help="override: sampling actors")
    parser.add_argument("--address", help="override: Ray cluster address ('auto' = the running cluster)")
    parser.add_argument("--run-dir", help="override: output folder")
    parser.add_argument("--export", help="override: after training, write the policy's actor to this .npz file")
    parser.add_argument("--export-module", help="override: the policy to export (default: the first)")
    args = parser.parse_args(argv)
    overrides = {
        "iterations": args.iterations,
        "num_env_runners": args.num_env_runners,
        "address": args.address,
        "run_dir": args.run_dir,
        "export": args.export,
        "export_module": args.export_module,
    }
    try:
        config = RLlibConfig.from_yaml(args.config)
        config = RLlibConfig.from_dict({**asdict(config), **{k: v for k, v in overrides.items() if v is not None}})
        if config.export:
            check_export_path(config.export)
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    train(config)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
