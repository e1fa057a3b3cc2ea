"""Policies from any framework, as ONNX networks (``onnx:path=FILE``): torch, JAX, TensorFlow, ...

The network maps a batch of observation vectors (``float32[batch, observation size]``, the ``"observation"``
entry of the PettingZoo observation) to logits over the action space (``[batch, actions]``). The agent masks
the illegal actions and plays the best (``greedy=true``, default) or samples from the masked softmax
(``greedy=false``, seeded like every agent). A ``+inf`` logit takes all the probability (the softmax's limit;
several share it equally); legal actions whose logits are all ``-inf`` are equally likely; a NaN logit on a
legal action is an error naming the file, as is an output that is not floating point. Loading an ONNX file
reads data only (a protobuf), never code.
Needs onnxruntime: ``pip install 'cardenvs[onnx]'``. Exporting a torch policy: ``docs/benchmark.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from .base import Agent

MISSING = "onnx: needs onnxruntime, which is not installed: pip install 'cardenvs[onnx]'"
FLOAT_TYPES = ("tensor(float)", "tensor(double)", "tensor(float16)")  # onnxruntime's names of the logits' types


class OnnxPolicy(Agent):
    """Plays an ONNX network's masked logits."""

    name = "onnx"

    def __init__(self, path: str, seed: int | None = None, greedy: bool = True, input: str | None = None,
                 output: str | None = None):
        super().__init__(seed)
        if not isinstance(greedy, (bool, np.bool_)):  # "greedy=no" must not play greedy as a non-empty string
            raise ValueError(f"onnx: greedy takes true or false, got {greedy!r}")
        try:
            import onnxruntime
        except ImportError:
            raise ValueError(MISSING) from None
        if not Path(path).is_file():
            raise ValueError(f"onnx: no file at {path!r}; give path=FILE, an .onnx network")
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = options.inter_op_num_threads = 1  # one row a decision; workers share cores
        try:
            self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as error:  # noqa: BLE001 (onnxruntime raises its own exception types)
            raise ValueError(f"onnx: cannot load {path!r}: {str(error).splitlines()[0][:200]}") from None
        inputs, outputs = self.session.get_inputs(), self.session.get_outputs()
        self.input = input or inputs[0].name
        self.output = output or outputs[0].name
        for given, known, kind in ((self.input, inputs, "input"), (self.output, outputs, "output")):
            if given not in [node.name for node in known]:
                raise ValueError(f"onnx: {path!r} has no {kind} {given!r}; its {kind}s: "
                                 f"{', '.join(node.name for node in known)}")
        kind = next(node.type for node in outputs if node.name == self.output)
        if kind not in FLOAT_TYPES:
            raise ValueError(f"onnx: {path!r} gives {self.output!r} as {kind.removeprefix('tensor(').rstrip(')')}; "
                             "expected floating-point logits (float, double or float16)")
        self.path = str(path)
        self.greedy = bool(greedy)
        self._checked = False

    def logits(self, observations: np.ndarray) -> np.ndarray:
        batch = np.asarray(observations, np.float32).reshape(-1, np.shape(observations)[-1])
        try:
            (out,) = self.session.run([self.output], {self.input: batch})
        except Exception as error:  # noqa: BLE001
            raise ValueError(f"onnx: {self.path!r} cannot take observations of size {batch.shape[-1]}: "
                             f"{str(error).splitlines()[0][:200]}") from None
        return np.asarray(out, np.float64)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        mask = np.asarray(observation["action_mask"]).astype(bool)
        logits = self.logits(observation["observation"])
        if not self._checked:
            if logits.shape != (1, mask.size):
                raise ValueError(f"onnx: {self.path!r} gives logits of shape {logits.shape}; expected (1, "
                                 f"{mask.size}): one logit per action of the game")
            self._checked = True
        logits = np.where(mask, logits[0], -np.inf)
        legal = np.flatnonzero(mask)
        if np.isnan(logits[legal]).any():
            raise ValueError(f"onnx: {self.path!r} gives a NaN logit for legal action(s) "
                             f"{', '.join(str(a) for a in legal[np.isnan(logits[legal])][:5])}")
        top = logits[legal].max()
        if not np.isfinite(top):
            # +inf: those actions take all the probability, shared equally; all -inf: every legal action as likely
            tied = legal[logits[legal] == top]
            return int(tied[0]) if self.greedy else int(self.rng.choice(tied))
        if self.greedy:
            return int(np.argmax(logits))
        weights = np.exp(logits - top)
        return int(self.rng.choice(weights.size, p=weights / weights.sum()))


def make_onnx_policy(path: str | None = None, seed: int | None = None, greedy: bool = True,
                     input: str | None = None, output: str | None = None, **_: Any) -> OnnxPolicy:
    """Registry factory of ``onnx:path=FILE[,greedy=false,input=NAME,output=NAME]`` (both games)."""
    if path is None:
        raise ValueError("onnx: give the network, e.g. onnx:path=policy.onnx")
    return OnnxPolicy(str(path), seed=seed, greedy=greedy, input=input, output=output)
