"""Trained policies without torch: export a MaskablePPO actor to ``.npz`` and play it with numpy.

The file holds the actor of SB3's ``MlpPolicy``: the hidden layers of
``mlp_extractor.policy_net`` (``hidden{i}/weight``, ``hidden{i}/bias``, in torch's
``out x in`` layout), the ``action_net`` (``action/weight``, ``action/bias``), the
activation name, and the game. :class:`PolicyAgent` computes the same logits,
masks the illegal actions and takes the argmax (``greedy=True``, default) or
samples from the masked softmax.

    cardenvs eval --game ring_rang --agents trained rules_strong --deals 2000 --workers 2
    cardenvs eval --game rang --agents policy:path=runs/x/policy.npz random
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .base import Agent

ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda x: np.maximum(x, 0.0),
    "identity": lambda x: x,
}
_TORCH_ACTIVATIONS = {"Tanh": "tanh", "ReLU": "relu", "Identity": "identity"}


# ------------------------------------------------------------------ the format
def layer_names(num_linears: int) -> list[str]:
    """The array prefixes of an actor with ``num_linears`` Linear layers: ``hidden0``, ..., ``action``."""
    return [f"hidden{i}" for i in range(num_linears - 1)] + ["action"]


def policy_arrays(layers: Sequence[tuple[Any, Any]], activation: str, game: str) -> dict[str, np.ndarray]:
    """The ``.npz`` content of an actor: its Linear layers' ``(weight, bias)`` in order (torch's ``out x in``
    layout; tensors or arrays), the last one the action layer; every trainer's export writes through this."""
    weights: dict[str, np.ndarray] = {}
    for name, (weight, bias) in zip(layer_names(len(layers)), layers, strict=True):
        weights[f"{name}/weight"] = _float32(weight)
        weights[f"{name}/bias"] = _float32(bias)
    weights["activation"] = np.array(activation)
    weights["game"] = np.array(game)
    return weights


def policy_layers(weights: dict[str, np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The inverse of :func:`policy_arrays`: the ``(weight, bias)`` of each Linear layer, the action layer last."""
    count = sum(1 for key in weights if key.startswith("hidden") and key.endswith("/weight")) + 1
    return [(weights[f"{name}/weight"], weights[f"{name}/bias"]) for name in layer_names(count)]


def _float32(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().cpu().numpy()
    return np.asarray(value).astype(np.float32)


# ------------------------------------------------------------------ export
def actor_weights(model: Any, game: str) -> dict[str, np.ndarray]:
    """The actor of a MaskablePPO/PPO ``MlpPolicy`` model as numpy arrays (the ``.npz`` content)."""
    import torch.nn as nn

    policy = model.policy
    layers = []
    activation = "identity"
    for module in policy.mlp_extractor.policy_net:
        if isinstance(module, nn.Linear):
            layers.append((module.weight, module.bias))
        elif type(module).__name__ in _TORCH_ACTIVATIONS:
            activation = _TORCH_ACTIVATIONS[type(module).__name__]
        else:
            raise ValueError(f"cannot export policy layer {module!r}: only Linear and {sorted(_TORCH_ACTIVATIONS)}")
    layers.append((policy.action_net.weight, policy.action_net.bias))
    return policy_arrays(layers, activation, game)


def save_policy(weights: dict[str, np.ndarray], path: str | Path) -> Path:
    """Write the weights to ``path`` (``.npz``, compressed), atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(temporary, **weights)
    temporary.replace(path)
    return path


def export_policy(model: Any, game: str, path: str | Path) -> Path:
    """Export the actor of ``model`` to a ``.npz`` that :class:`PolicyAgent` loads."""
    return save_policy(actor_weights(model, game), path)


MAX_POLICY_BYTES = 256 * 2**20  # the arrays of a policy file, unpacked (the shipped ones: under 3 MB)


def load_policy(path: str | Path) -> dict[str, np.ndarray]:
    """The arrays of a policy file; a clear ValueError if it is missing or not a policy (checked whole here, by
    :func:`check_weights`: a file that loads plays)."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as archive:  # sizes read before anything is unpacked (a zip bomb)
            unpacked = sum(info.file_size for info in archive.infolist())
    except (OSError, zipfile.BadZipFile) as error:
        raise ValueError(f"cannot read policy file {path}: {error}; a policy is an .npz file") from None
    if unpacked > MAX_POLICY_BYTES:
        raise ValueError(f"policy file {path} unpacks to {unpacked / 2**20:.0f} MiB, more than the "
                         f"{MAX_POLICY_BYTES // 2**20} MiB a policy may hold")
    try:
        with np.load(path, allow_pickle=False) as data:
            weights = {key: data[key] for key in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(f"cannot read policy file {path}: {error}") from None
    check_weights(weights, str(path))
    return weights


def check_weights(weights: dict[str, Any], source: str, observation_size: int | None = None,
                  num_actions: int | None = None) -> None:
    """Every array of a policy as :func:`policy_arrays` writes it: the names (``hidden0`` .. ``hidden{k-1}`` with
    no gap, ``action``, a weight and a bias each, ``activation``, ``game``), float weights of finite values,
    shapes that chain from the observation size to the action count (those of the game when given)."""
    names = set(weights)
    hidden = sorted(int(match.group(1)) for key in names if (match := re.fullmatch(r"hidden(\d+)/weight", key)))
    expected = {f"{layer}/{part}" for layer in layer_names(len(hidden) + 1) for part in ("weight", "bias")}
    expected |= {"activation"}
    if names - {"game"} != expected or hidden != list(range(len(hidden))):
        missing, unknown = sorted(expected - names), sorted(names - expected - {"game"})
        raise ValueError(f"policy {source}: missing array(s) {missing[:4]}, unknown array(s) {unknown[:4]}; not a "
                         "cardenvs policy file (hidden0, hidden1, ... and action, each a weight and a bias)")
    for key in ("activation", "game"):
        if key in weights and (np.asarray(weights[key]).dtype.kind != "U" or np.asarray(weights[key]).ndim):
            raise ValueError(f"policy {source}: {key!r} must be a string")
    if str(weights["activation"]) not in ACTIVATIONS:
        raise ValueError(f"policy {source}: unknown activation {str(weights['activation'])!r}")
    width = observation_size
    for layer in layer_names(len(hidden) + 1):
        weight, bias = np.asarray(weights[f"{layer}/weight"]), np.asarray(weights[f"{layer}/bias"])
        for key, array in ((f"{layer}/weight", weight), (f"{layer}/bias", bias)):
            if array.dtype.kind != "f":
                raise ValueError(f"policy {source}: array {key!r} holds {array.dtype}, not floats")
            if not np.isfinite(array).all():  # a NaN logit would make the masked argmax pick an illegal action
                raise ValueError(f"policy {source}: array {key!r} holds NaN or infinite values; retrain or "
                                 "re-export it")
        if layer == "hidden0" or layer == "action" and not hidden:
            if weight.ndim == 2 and width is not None and weight.shape[1] != width:
                raise ValueError(f"policy {source}: it takes observations of size {weight.shape[1]}, the game's "
                                 f"have {width} (another game, or another number of players)")
        if weight.ndim != 2 or bias.shape != weight.shape[:1] or (width is not None and weight.shape[1] != width):
            takes = "" if width is None else f" x {width}"
            raise ValueError(f"policy {source}: layer {layer!r} has weight {weight.shape} and bias {bias.shape}; "
                             f"expected (out{takes}) and (out,)")
        width = weight.shape[0]
    if num_actions is not None and width != num_actions:
        raise ValueError(f"policy {source}: its action layer has {width} outputs, the game {num_actions} actions")



# ------------------------------------------------------------------- agent
class PolicyAgent(Agent):
    """Plays an exported actor with numpy only: masked argmax, or masked sampling."""

    name = "policy"

    def __init__(
        self,
        seed: int | None = None,
        path: str | None = None,
        weights: dict[str, np.ndarray] | None = None,
        greedy: bool = True,
        game: str | None = None,
        **_: Any,
    ):
        super().__init__(seed)
        if (path is None) == (weights is None):
            raise ValueError("PolicyAgent: give exactly one of path= (a .npz file) or weights=")
        if weights is None:
            weights = load_policy(path)  # type: ignore[arg-type]
        else:
            check_weights(weights, "weights")
        if game is not None and "game" in weights and str(weights["game"]) != game:
            raise ValueError(f"policy {path or 'weights'} was trained for {str(weights['game'])!r}, not {game!r}")
        self.weights = weights
        self.greedy = bool(greedy)
        *self._layers, self._out = [(weight.T, bias) for weight, bias in policy_layers(weights)]
        self._activation = ACTIVATIONS[str(weights["activation"])]
        self.input_size = int(self._layers[0][0].shape[0] if self._layers else self._out[0].shape[0])

    def logits(self, observation: np.ndarray) -> np.ndarray:
        """The actor's unmasked logits for one observation vector (or a batch of them)."""
        x = np.asarray(observation, np.float32)
        if x.shape[-1] != self.input_size:
            raise ValueError(f"policy expects observations of size {self.input_size}, got {x.shape[-1]}")
        for weight, bias in self._layers:
            x = self._activation(x @ weight + bias)
        return x @ self._out[0] + self._out[1]

    def probabilities(self, observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The masked softmax over the actions (0 for illegal ones)."""
        logits = self.logits(observation).astype(np.float64)
        legal = np.asarray(mask).astype(bool)
        if not legal.any(axis=-1).all():
            raise ValueError("no legal action in the mask: the agent was asked to act out of turn")
        logits = np.where(legal, logits, -np.inf)
        logits -= logits.max(axis=-1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=-1, keepdims=True)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(self.act_batch(observation["observation"], observation["action_mask"]))

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """:meth:`act` for a batch (or one) of observations and masks at once: one matrix product per layer,
        so a search that plays many worlds in step with this policy pays the network once a step."""
        probabilities = self.probabilities(observations, masks)
        if self.greedy:
            return np.argmax(probabilities, axis=-1)
        if probabilities.ndim == 1:
            return np.asarray(self.rng.choice(probabilities.size, p=probabilities))
        return np.array([self.rng.choice(row.size, p=row) for row in probabilities])


def trained_path(game: str) -> Path:
    """The shipped policy of ``game`` (its spec's ``trained``; ValueError where it ships none)."""
    from cardenvs.games import game_spec

    return Path(str(game_spec(game).trained_path()))


def game_sizes(game: str, num_players: int | None = None) -> tuple[int, int]:
    """(observation size, action count) of ``game``'s env with ``num_players`` (where the seats vary)."""
    from cardenvs.games import game_spec

    env = game_spec(game).make_raw_env(num_players=num_players)
    agent = env.possible_agents[0]
    return env.observation_space(agent)["observation"].shape[0], env.action_space(agent).n


def _make_policy(game: str, seed: int | None, path: str | None, greedy: bool,
                 num_players: int | None = None) -> PolicyAgent:
    if path is None:
        raise ValueError(f"policy: give the file, e.g. policy:path=runs/{game}/policy.npz")
    agent = PolicyAgent(seed=seed, path=path, greedy=greedy, game=game)
    check_weights(agent.weights, path, *game_sizes(game, num_players))  # it plays this game: its sizes
    return agent


def make_policy(game: str, seed: int | None = None, path: str | None = None, greedy: bool = True,
                num_players: int | None = None, **_: Any) -> PolicyAgent:
    """Registry factory of ``policy:path=FILE[,greedy=false]``: a policy file for ``game``'s env."""
    return _make_policy(game, seed, path, greedy, num_players)


def make_trained(game: str, seed: int | None = None, greedy: bool = True, num_players: int | None = None,
                 **_: Any) -> PolicyAgent:
    """Registry factory of ``trained``: the policy the game ships (its spec's ``trained``), for the seat count
    it was trained with."""
    from cardenvs.games import game_spec

    spec = game_spec(game)
    agent = PolicyAgent(seed=seed, path=str(trained_path(game)), greedy=greedy, game=game)
    players = spec.players_or_fixed(num_players)
    if agent.input_size != game_sizes(game, players)[0]:
        fits = [n for n in range(spec.players[0], spec.players[1] + 1) if game_sizes(game, n)[0] == agent.input_size]
        trained_for = f"{fits[0]} players" if fits else "another observation size"
        hint = f"use --num-players {fits[0]}, or " if fits else "use "
        raise ValueError(f"trained: the shipped {spec.title} policy takes {trained_for}, not {players}; "
                         f"{hint}policy:path=FILE trained for {players}")
    return agent
