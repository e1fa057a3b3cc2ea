"""``onnx:path=FILE``: a policy exported from torch to ONNX plays as the same policy (issue 33 item 4); what a
network gives that is not plain finite float logits (issue 42 item 12), on networks built with the ``onnx``
helper API (no torch)."""

from __future__ import annotations

import numpy as np
import pytest
from games import BUILTIN_GAMES

pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper  # noqa: E402

from cardenvs.agents.onnx_policy import OnnxPolicy  # noqa: E402
from cardenvs.agents.policy import ACTIVATIONS, load_policy, policy_layers, trained_path  # noqa: E402
from cardenvs.agents.registry import make_agent  # noqa: E402
from cardenvs.games import game_spec  # noqa: E402
from cardenvs.train.evaluate import evaluate_agents  # noqa: E402


def torch_or_skip():
    """torch and its ONNX exporter (about 10 s a network: the tests that use it are marked slow)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxscript")
    return torch


def shipped_as_torch(game: str):
    """The shipped ``trained`` policy of ``game`` rebuilt as a torch network (as a user's own would be)."""
    torch = torch_or_skip()
    activations = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "identity": torch.nn.Identity}
    weights = load_policy(trained_path(game))
    assert str(weights["activation"]) in ACTIVATIONS
    modules = []
    for weight, bias in policy_layers(weights):
        linear = torch.nn.Linear(weight.shape[1], weight.shape[0])
        linear.weight.data, linear.bias.data = torch.tensor(weight), torch.tensor(bias)
        modules += [linear, activations[str(weights["activation"])]()]
    return torch.nn.Sequential(*modules[:-1])


def export(net, size: int, path) -> str:
    """As docs/benchmark.md shows it."""
    torch = torch_or_skip()
    torch.onnx.export(net, (torch.zeros(1, size),), str(path), input_names=["observation"],
                      output_names=["logits"], dynamic_axes={"observation": {0: "batch"}})
    return str(path)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("onnx")
    files = {}
    for game in BUILTIN_GAMES:
        size = game_spec(game).make_raw_env(num_players=4).observation_size
        files[game] = export(shipped_as_torch(game), size, folder / f"{game}.onnx")
    return files


@pytest.mark.slow
@pytest.mark.parametrize("game", BUILTIN_GAMES)
def test_an_exported_torch_policy_plays_as_the_shipped_one(exported, game):
    onnx = make_agent(f"onnx:path={exported[game]}", game, seed=0, **game_spec(game).env_info(4))
    trained = make_agent("trained", game, seed=0, **game_spec(game).env_info(4))
    env = game_spec(game).make_env(num_players=4)
    env.reset(seed=3)
    compared = 0
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = onnx.act(obs)
        assert action == trained.act(obs)
        env.step(action)
        compared += 1
    assert compared > 20


@pytest.mark.slow
def test_onnx_specs_work_in_the_harness_with_workers(exported):
    spec = f"onnx:path={exported['ring_rang']}"
    result = evaluate_agents([spec, "trained"], game="ring_rang", deals=6, workers=2)
    rows = {row["agent"]: row for row in result["table"]}
    assert rows[spec]["episodes"] == 12 and rows[spec]["forfeits"] == 0
    assert rows[spec]["wins"] == rows["trained"]["wins"] == 6  # the same policy: each deal splits 1-1
    sampled = evaluate_agents([f"{spec},greedy=false", "random"], game="ring_rang", deals=2)
    assert sampled["episodes"] == 4


@pytest.mark.slow
def test_bad_networks_are_one_line_errors(exported, tmp_path):
    torch = torch_or_skip()
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a network")
    narrow = export(torch.nn.Linear(game_spec("rang").make_raw_env(num_players=4).observation_size, 3),
                    game_spec("rang").make_raw_env(num_players=4).observation_size, tmp_path / "narrow.onnx")
    with pytest.raises(ValueError, match="onnx: no file at"):
        make_agent(f"onnx:path={tmp_path}/missing.onnx", "rang", seed=0)
    with pytest.raises(ValueError, match="onnx: cannot load"):
        make_agent(f"onnx:path={junk}", "rang", seed=0)
    with pytest.raises(ValueError, match="has no input 'obs'"):
        make_agent(f"onnx:path={exported['rang']},input=obs", "rang", seed=0)
    with pytest.raises(ValueError, match="one logit per action"):
        evaluate_agents([f"onnx:path={narrow}", "random"], game="rang", deals=1)
    with pytest.raises(ValueError, match="cannot take observations of size"):
        evaluate_agents([f"onnx:path={exported['ring_rang']}", "random"], game="rang", deals=1)


# ------------------------------------------------- networks built with onnx.helper: no torch, no export
OBSERVATION, ACTIONS = 3, 5


def constant_logits(path, logits, output_type=TensorProto.FLOAT) -> str:
    """A network ``observation[batch, 3] -> logits[batch, 5]`` that gives ``logits`` whatever it sees
    (``0 * observation @ W + logits``), its output cast to ``output_type``."""
    nodes = [helper.make_node("MatMul", ["observation", "W"], ["product"]),
             helper.make_node("Add", ["product", "B"], ["sum"])]
    nodes.append(helper.make_node("Cast", ["sum"], ["logits"], to=output_type) if output_type != TensorProto.FLOAT
                 else helper.make_node("Identity", ["sum"], ["logits"]))
    graph = helper.make_graph(
        nodes, "constant_logits",
        [helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", OBSERVATION])],
        [helper.make_tensor_value_info("logits", output_type, ["batch", ACTIONS])],
        [helper.make_tensor("W", TensorProto.FLOAT, [OBSERVATION, ACTIONS], [0.0] * OBSERVATION * ACTIONS),
         helper.make_tensor("B", TensorProto.FLOAT, [ACTIONS], [float(x) for x in logits])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def observation(legal) -> dict:
    mask = np.zeros(ACTIONS, np.int8)
    mask[list(legal)] = 1
    return {"observation": np.ones(OBSERVATION, np.float32), "action_mask": mask}


def played(path, legal, greedy: bool, times: int = 300) -> set[int]:
    agent = OnnxPolicy(path, seed=0, greedy=greedy)
    return {agent.act(observation(legal)) for _ in range(times)}


INF = float("inf")


def test_plus_infinite_logits_share_all_the_probability(tmp_path):
    path = constant_logits(tmp_path / "inf.onnx", [INF, 2.0, INF, INF, 0.0])
    assert played(path, range(5), greedy=False) == {0, 2, 3}  # no "Probabilities contain NaN"
    assert played(path, [1, 2, 3], greedy=False) == {2, 3}  # an illegal +inf is masked
    assert played(path, [1, 4], greedy=False) == {1, 4}  # no +inf among the legal: the softmax
    assert played(path, range(5), greedy=True) == {0}
    assert played(path, [1, 3], greedy=True) == {3}


def test_legal_actions_all_at_minus_infinity_are_equally_likely(tmp_path):
    path = constant_logits(tmp_path / "ninf.onnx", [-INF, -INF, 5.0, -INF, -INF])
    assert played(path, [0, 1, 3], greedy=False) == {0, 1, 3}
    assert played(path, [0, 1, 3], greedy=True) == {0}
    assert played(path, [1, 2], greedy=False) == {2}


def test_a_nan_logit_is_an_error_naming_the_file(tmp_path):
    path = constant_logits(tmp_path / "nan.onnx", [0.0, float("nan"), 1.0, 0.0, 0.0])
    assert played(path, [0, 2], greedy=False) == {0, 2}  # a NaN on an illegal action is masked
    for greedy in (True, False):
        with pytest.raises(ValueError, match=r"onnx: '.*nan\.onnx' gives a NaN logit for legal action\(s\) 1$"):
            OnnxPolicy(path, seed=0, greedy=greedy).act(observation(range(5)))


@pytest.mark.parametrize("kind, name", [(TensorProto.INT64, "int64"), (TensorProto.INT32, "int32"),
                                        (TensorProto.BOOL, "bool")])
def test_an_output_that_is_not_floating_point_is_refused_naming_the_file(tmp_path, kind, name):
    path = constant_logits(tmp_path / f"{name}.onnx", [0, 1, 2, 3, 4], output_type=kind)
    with pytest.raises(ValueError, match=rf"onnx: '.*{name}\.onnx' gives 'logits' as {name}; expected floating"):
        make_agent(f"onnx:path={path}", "ring_rang", seed=0)
    double = constant_logits(tmp_path / "double.onnx", [0, 1, 9, 3, 4], output_type=TensorProto.DOUBLE)
    assert played(double, range(5), greedy=True) == {2}


@pytest.mark.parametrize("value", ["no", "yes", "0", "1", "off"])
def test_greedy_takes_only_true_or_false(tmp_path, value):
    path = constant_logits(tmp_path / "net.onnx", [0, 1, 2, 3, 4])
    with pytest.raises(ValueError) as caught:
        make_agent(f"onnx:path={path},greedy={value}", "ring_rang", seed=0)
    assert "greedy takes true or false" in str(caught.value) and "\n" not in str(caught.value)
    assert make_agent(f"onnx:path={path},greedy=false", "ring_rang", seed=0).greedy is False
    assert make_agent(f"onnx:path={path},greedy=TRUE", "ring_rang", seed=0).greedy is True
