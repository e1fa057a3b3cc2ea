"""The config base of every trainer: YAML files read into documented dataclasses, and the checks they share.

Unknown or ill-typed fields are errors naming the field; :func:`check_game_config` holds the checks that
every run config (SB3, batched PPO, distillation) makes the same way, so they are written once.
"""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Sequence
from dataclasses import fields
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from cardenvs.core import check_nesting
from cardenvs.games import GameSpec, canonical_game, game_spec


def read_yaml_mapping(path: str | Path, kind: str) -> dict[str, Any]:
    """The mapping a YAML file holds; a ValueError naming the file when it cannot be read or is not one.

    PyYAML comes with the ``[train]`` extra; a core install gets a ValueError saying so, not an ImportError.
    """
    try:
        import yaml
    except ImportError:
        raise ValueError(f"reading {kind} {path} needs PyYAML: pip install 'cardenvs[train]' "
                         "(or pip install pyyaml)") from None

    class NoAliasLoader(yaml.SafeLoader):
        """YAML without aliases: a config needs none, and an alias bomb expands exponentially when read."""

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                mark = self.peek_event().start_mark
                raise yaml.YAMLError(f"aliases (*name) are not allowed in a config (line {mark.line + 1}, "
                                     f"column {mark.column + 1})")
            return super().compose_node(parent, index)

    try:
        data = yaml.load(Path(path).read_text(), Loader=NoAliasLoader)  # noqa: S506 (a SafeLoader)
    except OSError as error:
        raise ValueError(f"cannot read {kind} {path}: {error}") from None
    except yaml.YAMLError as error:
        raise ValueError(f"{kind} {path} is not valid YAML: {' '.join(str(error).split())}") from None
    except RecursionError:
        raise ValueError(f"{kind} {path} is nested too deeply") from None
    if data is None or data == {}:
        raise ValueError(f"{kind} {path} is empty; give at least the fields that differ from the defaults "
                         "(game, run_dir, ...), as in the files of configs/")
    if not isinstance(data, dict):
        raise ValueError(f"{kind} {path}: expected a mapping of fields")
    check_nesting(data, f"{kind} {path}")
    return data


def load_config(path: str | Path, schema: type) -> Any:
    """A ``schema`` dataclass from a YAML file (see :func:`config_from_dict`)."""
    return config_from_dict(read_yaml_mapping(path, "train config"), str(path), schema)


# The run configs of the commands that take ``--config``: "module:class" (imported only to name the right command).
CONFIG_COMMANDS = {
    "cardenvs train": "cardenvs.train.selfplay:TrainConfig",
    "cardenvs train-vector": "cardenvs.train.vector_ppo:VectorPPOConfig",
    "cardenvs distill": "cardenvs.train.distill:DistillConfig",
    "cardenvs eval": "cardenvs.train.evaluate:EvalConfig",
}


def _command_for(data: dict[str, Any], schema: type) -> str | None:
    """The command whose config holds every field of ``data``, when it is not ``schema``'s."""
    from importlib import import_module

    for command, target in CONFIG_COMMANDS.items():
        module, _, name = target.partition(":")
        try:
            other = getattr(import_module(module), name)
        except ImportError:  # that trainer's libraries are not installed
            continue
        if other is not schema and set(data) <= {f.name for f in fields(other)}:
            return command
    return None


def config_from_dict(data: dict[str, Any], source: str, schema: type) -> Any:
    """A ``schema`` dataclass (with a ``validate()`` method) from a mapping, every field type-checked."""
    hints = typing.get_type_hints(schema)
    known = {f.name for f in fields(schema)}
    unknown = sorted(set(data) - known)
    if unknown:
        command = _command_for(data, schema)
        if command:  # a whole config of another trainer: name the command, not 40 fields
            raise ValueError(f"{source} is a `{command}` config (fields {unknown} are not {schema.__name__}'s): "
                             f"run `{command} --config {source}`")
        raise ValueError(f"{source}: unknown field(s) {unknown}; known: {sorted(known)}")
    check_nesting(data, source)
    for name, value in data.items():
        if not _has_type(value, hints[name]):
            raise ValueError(f"{source}: field {name!r} expects {_type_name(hints[name])}, got {value!r:.200}")
        if not _finite(value):
            raise ValueError(f"{source}: field {name!r} holds NaN or an infinity: {value!r:.200}")
    config = schema(**data)
    try:
        config.validate()
    except ValueError as error:
        raise ValueError(f"{source}: {error}") from None
    return config


def _finite(value: Any) -> bool:
    """No float in ``value`` (or in its lists and mappings) is NaN or infinite."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


def _has_type(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_has_type(value, h) for h in typing.get_args(hint))
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(_has_type(v, item) for v in value)
    if origin is dict:
        key, item = typing.get_args(hint)
        return isinstance(value, dict) and all(_has_type(k, key) and _has_type(v, item) for k, v in value.items())
    if hint is Any:
        return True
    return isinstance(value, hint)


def _type_name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def require(command: str, *modules: str) -> None:
    """A ValueError naming the missing modules and the extra that brings them, before any work starts.

    Training imports its libraries late (matplotlib draws the curve only at the end), so a core install
    would otherwise fail after the run, not before it.
    """
    missing = [m for m in modules if find_spec(m) is None]
    if missing:
        raise ValueError(f"{command} needs {', '.join(missing)} (not installed): pip install 'cardenvs[train]'")


def check_counts(config: Any, names: Sequence[str]) -> None:
    """Each named field is an int >= 1."""
    for name in names:
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}: expected an int >= 1, got {value!r}")


def check_game_config(config: Any, counts: Sequence[str] = (), agent_fields: Sequence[str] = ()) -> GameSpec:
    """The checks every run config shares; returns the game's :class:`GameSpec`.

    ``game`` gets its one spelling; ``num_players`` must suit the game; ``episode`` (where the config has
    one) must be one of the game's kinds or "" (the default); the ``counts`` fields are ints >= 1; every
    agent spec in the ``agent_fields`` is built once, so a bad one fails before any work.
    """
    from cardenvs.agents.registry import check_agent, check_spec

    config.game = canonical_game(config.game)
    spec = game_spec(config.game)
    spec.check_players(config.num_players)
    check_counts(config, counts)
    for field_name in agent_fields:
        for agent in getattr(config, field_name):
            try:
                check_spec(agent, config.game)
                check_agent(agent, config.game, **spec.env_info(config.num_players))
            except ValueError as error:
                raise ValueError(f"{field_name}: {error}") from None
    episodes = tuple(spec.episodes.values())
    if getattr(config, "episode", "") and config.episode not in episodes:
        raise ValueError(f"episode: expected one of {episodes} for {config.game}, got {config.episode!r}")
    env_kwargs = getattr(config, "env_kwargs", None)
    if env_kwargs:  # the evaluation env takes them (and the trainer's): a wrong one fails now, not after work
        reserved = sorted(set(env_kwargs) & {"episode", "num_players", "render_mode"})
        if reserved:
            raise ValueError(f"env_kwargs: {reserved} are fields of the config itself, not env_kwargs")
        try:
            spec.make_raw_env(getattr(config, "episode", "") or None, config.num_players, **env_kwargs)
        except (TypeError, ValueError) as error:
            raise ValueError(f"env_kwargs: the {spec.title} env does not take {env_kwargs!r:.200}: {error}") from None
    return spec


def check_ppo(config: Any, clip: str) -> None:
    """PPO's numbers in their ranges: a negative discount or clip range trained silently before."""
    checks = {"learning_rate": (config.learning_rate > 0, "> 0"), "gamma": (0 < config.gamma <= 1, "in (0, 1]"),
              "gae_lambda": (0 <= config.gae_lambda <= 1, "in [0, 1]"), clip: (getattr(config, clip) > 0, "> 0"),
              "ent_coef": (config.ent_coef >= 0, ">= 0"), "vf_coef": (config.vf_coef >= 0, ">= 0"),
              "max_grad_norm": (config.max_grad_norm > 0, "> 0")}  # fmt: skip
    for name, (ok, wanted) in checks.items():
        if not ok:
            raise ValueError(f"{name}: expected a number {wanted}, got {getattr(config, name)!r}")


def check_clock(config: Any) -> None:
    """``train_seconds`` and ``keep_every_seconds``: seconds >= 0, 0 = off."""
    if config.train_seconds < 0 or config.keep_every_seconds < 0:
        raise ValueError(f"train_seconds, keep_every_seconds: expected >= 0 (0 = off), got "
                         f"{config.train_seconds!r}, {config.keep_every_seconds!r}")


def check_network(config: Any) -> None:
    """``net_arch`` (hidden layer sizes) and ``activation`` of a policy network."""
    if config.activation not in ("relu", "tanh"):
        raise ValueError(f"activation: expected 'relu' or 'tanh', got {config.activation!r}")
    if not config.net_arch or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in config.net_arch):
        raise ValueError(f"net_arch: expected a non-empty list of layer sizes, got {config.net_arch!r}")


def check_symmetries(spec: GameSpec, observation_size: int | None = None,
                     num_actions: int | None = None) -> list[tuple[Any, Any]]:
    """The game's symmetries for ``augment`` (its spec's ``symmetries`` part), checked against the sizes of the
    observations and actions they will rename where given (a variant may not keep them)."""
    if "symmetries" not in spec.parts:
        raise ValueError(f"augment: {spec.title} declares no symmetries (no 'symmetries' part in its spec); "
                         "set augment: false")
    symmetries = spec.part("symmetries")()
    if observation_size is not None and any(len(index) != observation_size or len(actions) != num_actions
                                            for index, actions in symmetries):
        raise ValueError(f"augment: {spec.title}'s symmetries do not fit these observations ({observation_size} "
                         f"entries, {num_actions} actions: a variant?); set augment: false")
    return symmetries
