"""``onnx:path=FILE``: a policy exported from torch to ONNX plays as the same policy (issue 33 item 4)."""

from __future__ import annotations

import pytest
from games import BUILTIN_GAMES

pytest.importorskip("onnxruntime")
torch = pytest.importorskip("torch")
pytest.importorskip("onnxscript")
pytestmark = pytest.mark.slow  # torch's ONNX exporter takes about 10 s a network

from cardenvs.agents.policy import ACTIVATIONS, load_policy, policy_layers, trained_path  # noqa: E402
from cardenvs.agents.registry import make_agent  # noqa: E402
from cardenvs.games import game_spec  # noqa: E402
from cardenvs.train.evaluate import evaluate_agents  # noqa: E402

TORCH_ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "identity": torch.nn.Identity}


def shipped_as_torch(game: str) -> torch.nn.Sequential:
    """The shipped ``trained`` policy of ``game`` rebuilt as a torch network (as a user's own would be)."""
    weights = load_policy(trained_path(game))
    assert str(weights["activation"]) in ACTIVATIONS
    modules: list[torch.nn.Module] = []
    for weight, bias in policy_layers(weights):
        linear = torch.nn.Linear(weight.shape[1], weight.shape[0])
        linear.weight.data, linear.bias.data = torch.tensor(weight), torch.tensor(bias)
        modules += [linear, TORCH_ACTIVATIONS[str(weights["activation"])]()]
    return torch.nn.Sequential(*modules[:-1])


def export(net: torch.nn.Module, size: int, path) -> str:
    """As docs/benchmark.md shows it."""
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


def test_onnx_specs_work_in_the_harness_with_workers(exported):
    spec = f"onnx:path={exported['ring_rang']}"
    result = evaluate_agents([spec, "trained"], game="ring_rang", deals=6, workers=2)
    rows = {row["agent"]: row for row in result["table"]}
    assert rows[spec]["episodes"] == 12 and rows[spec]["forfeits"] == 0
    assert rows[spec]["wins"] == rows["trained"]["wins"] == 6  # the same policy: each deal splits 1-1
    sampled = evaluate_agents([f"{spec},greedy=false", "random"], game="ring_rang", deals=2)
    assert sampled["episodes"] == 4


def test_bad_networks_are_one_line_errors(exported, tmp_path):
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
