"""RLlib multi-agent PPO over the AEC envs (runs in the [ray] venv; skipped where ray is not installed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
torch = pytest.importorskip("torch")

import ray  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

from cardenvs.agents.policy import PolicyAgent, load_policy  # noqa: E402
from cardenvs.train.evaluate import EvalConfig, evaluate  # noqa: E402
from cardenvs.train.rllib import (  # noqa: E402
    CardPettingZooEnv,
    MaskedPPOTorchRLModule,
    RLlibConfig,
    actor_weights,
    check_export_path,
    export_policy,
    init_ray,
    main,
    policy_ids,
    policy_of,
    ppo_config,
)

TINY = {
    "iterations": 2,
    "num_env_runners": 2,
    "train_batch_size": 256,
    "minibatch_size": 64,
    "num_epochs": 1,
    "hidden": [32],
    "num_cpus": 3,  # logical CPUs: two env runners and the driver, on any machine
}


# ---------------------------------------------------------------- no Ray needed
@pytest.mark.parametrize(
    "changes, match",
    [
        ({"game": "chess"}, "game"),
        ({"policies": "per_team", "game": "rang"}, "policies"),
        ({"policies": "everyone"}, "policies"),
        ({"num_players": 5}, "num_players"),
        ({"game": "rang", "num_players": 11}, "num_players"),
        ({"num_env_runners": -1}, "num_env_runners"),
        ({"train_batch_size": 0}, "train_batch_size"),
        ({"minibatch_size": 9000}, "minibatch_size"),
        ({"hidden": []}, "hidden"),
        ({"env": "round"}, "env"),
        ({"num_cpus": 0}, "num_cpus"),
        ({"learning_rate": 0.1}, "unknown config keys"),
        ({"export": ""}, "export"),
        ({"export_module": "team_0"}, "export_module"),
        ({"policies": "per_team", "export_module": "shared"}, "export_module"),
    ],
)
def test_bad_configs_are_value_errors(changes, match):
    with pytest.raises(ValueError, match=match):
        RLlibConfig.from_dict(changes)


def test_shipped_configs_load():
    ring_rang = RLlibConfig.from_yaml("configs/rllib_ring_rang.yaml")
    rang = RLlibConfig.from_yaml("configs/rllib_rang.yaml")
    quick = RLlibConfig.from_yaml("configs/rllib_quick_ring_rang.yaml")
    assert (ring_rang.game, ring_rang.policies, ring_rang.num_env_runners) == ("ring_rang", "per_team", 2)
    assert (rang.game, rang.num_players, rang.policies) == ("rang", 4, "shared")
    assert (quick.game, quick.policies) == ("ring_rang", "shared")
    assert quick.export == "runs/rllib_quick_ring_rang/policy.npz"


def test_policy_mapping():
    agents = [f"player_{seat}" for seat in range(4)]
    assert {policy_of(a, mode="shared") for a in agents} == {"shared"}
    assert [policy_of(a, mode="per_team") for a in agents] == ["team_0", "team_1", "team_0", "team_1"]
    assert [policy_of(a, mode="per_seat") for a in agents] == agents
    assert policy_ids(RLlibConfig(game="rang", num_players=3, policies="per_seat")) == agents[:3]


@pytest.mark.parametrize("env_config", [{"game": "ring_rang"}, {"game": "rang", "num_players": 5}])
def test_adapter_plays_whole_episodes(env_config):
    env = CardPettingZooEnv(
        {**env_config, "env": {"episode": "round" if env_config["game"] == "ring_rang" else "deal"}}
    )
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=3)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for _ in range(5000):
        (agent,) = obs  # one agent decides at a time
        assert obs[agent] in env.observation_spaces[agent]
        action = int(rng.choice(np.flatnonzero(obs[agent]["action_mask"])))
        obs, rewards, terminated, truncated, _ = env.step({agent: action})
        for name, reward in rewards.items():
            totals[name] += reward
        if terminated["__all__"] or truncated["__all__"]:
            break
    else:
        raise AssertionError("the episode did not end")
    sent, illegal = env.pop_action_counts()
    assert sent > 10 and illegal == 0
    assert env.pop_action_counts() == (0, 0)
    if env_config["game"] == "ring_rang":
        assert totals["player_0"] == totals["player_2"] == -totals["player_1"] != 0


def test_adapter_counts_an_illegal_action():
    env = CardPettingZooEnv({"game": "ring_rang", "illegal_action": "terminate"})
    obs, _ = env.reset(seed=0)
    (agent,) = obs
    illegal = int(np.flatnonzero(obs[agent]["action_mask"] == 0)[0])
    env.step({agent: illegal})
    assert env.pop_action_counts() == (1, 1)


def test_masked_module_never_samples_a_masked_action():
    env = CardPettingZooEnv({"game": "ring_rang"})
    obs_space, action_space = env.observation_spaces["player_0"], env.action_spaces["player_0"]
    module = MaskedPPOTorchRLModule(
        observation_space=obs_space, action_space=action_space, model_config={"fcnet_hiddens": [16]}
    )
    rng = np.random.default_rng(0)
    batch_size, n = 64, action_space.n
    masks = np.zeros((batch_size, n), np.int8)
    for row in masks:
        row[rng.choice(n, size=int(rng.integers(1, 4)), replace=False)] = 1
    observations = rng.random((batch_size, *obs_space["observation"].shape)).astype(np.float32)
    batch = {Columns.OBS: {"observation": torch.from_numpy(observations), "action_mask": torch.from_numpy(masks)}}
    for forward in (module.forward_exploration, module.forward_inference, module.forward_train):
        logits = forward(dict(batch))[Columns.ACTION_DIST_INPUTS]
        dist = torch.distributions.Categorical(logits=logits)
        for _ in range(20):
            actions = dist.sample().numpy()
            assert masks[np.arange(batch_size), actions].all()
    values = module.compute_values(dict(batch))
    assert values.shape == (batch_size,)
    with pytest.raises(ValueError, match="observation_space"):
        MaskedPPOTorchRLModule(observation_space=obs_space["observation"], action_space=action_space)


# ---------------------------------------------------------------- the export
def _module(game: str = "ring_rang", **model_config):
    env = CardPettingZooEnv({"game": game})
    module = MaskedPPOTorchRLModule(
        observation_space=env.observation_spaces["player_0"],
        action_space=env.action_spaces["player_0"],
        model_config={"vf_share_layers": False, **model_config},
    )
    with torch.no_grad():  # away from the initial weights (RLlib starts the biases at 0)
        generator = torch.Generator().manual_seed(1)
        for parameter in module.parameters():
            parameter.add_(0.3 * torch.randn(parameter.shape, generator=generator))
    return env, module


def _played_observations(env, deals: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Observation vectors and masks met in random play (``deals`` whole episodes)."""
    rng = np.random.default_rng(0)
    observations, masks = [], []
    for deal in range(deals):
        obs, _ = env.reset(seed=deal)
        while True:
            (agent,) = obs
            observations.append(obs[agent]["observation"])
            masks.append(obs[agent]["action_mask"])
            obs, _, terminated, truncated, _ = env.step({agent: int(rng.choice(np.flatnonzero(masks[-1])))})
            if terminated["__all__"] or truncated["__all__"]:
                break
    return np.asarray(observations, np.float32), np.asarray(masks, np.int8)


def _module_logits(module, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    batch = {Columns.OBS: {"observation": torch.from_numpy(observations), "action_mask": torch.from_numpy(masks)}}
    with torch.no_grad():
        return module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].numpy()


@pytest.mark.parametrize(
    "model_config",
    [
        {"fcnet_hiddens": [32, 16]},  # train/rllib.py's layout: a separate actor encoder (tanh), a linear pi head
        {"fcnet_hiddens": [24], "vf_share_layers": True},  # the encoder shared with the value head
        {"fcnet_hiddens": [16], "fcnet_activation": "relu", "head_fcnet_hiddens": [8]},  # a pi head with a layer
    ],
)
def test_exported_logits_equal_the_modules(model_config, tmp_path):
    env, module = _module(**model_config)
    path = export_policy(module, "ring_rang", tmp_path / "policy.npz")
    agent = PolicyAgent(path=str(path), game="ring_rang")
    observations, masks = _played_observations(env)
    assert len(observations) > 100
    unmasked = _module_logits(module, observations, np.ones_like(masks))
    assert np.abs(agent.logits(observations) - unmasked).max() < 1e-5
    masked = _module_logits(module, observations, masks)
    for observation, mask, logits in zip(observations, masks, masked, strict=True):
        legal = mask == 1
        assert np.abs(agent.logits(observation)[legal] - logits[legal]).max() < 1e-5
        assert agent.act({"observation": observation, "action_mask": mask}) == int(np.argmax(logits))
    weights = load_policy(path)
    hidden = len(model_config["fcnet_hiddens"]) + len(model_config.get("head_fcnet_hiddens", []))
    assert sorted(weights) == sorted(
        ["action/weight", "action/bias", "activation", "game"]
        + [f"hidden{i}/{kind}" for i in range(hidden) for kind in ("weight", "bias")]
    )
    assert str(weights["activation"]) == model_config.get("fcnet_activation", "tanh")
    assert str(weights["game"]) == "ring_rang"


def test_export_reads_a_given_state_and_refuses_other_actors():
    _, module = _module(fcnet_hiddens=[16])
    state = {key: np.zeros_like(value) for key, value in module.get_state().items()}
    weights = actor_weights(module, "rang", state)
    assert all(not np.any(weights[key]) for key in weights if "/" in key)
    assert str(weights["game"]) == "rang"
    _, mixed = _module(fcnet_hiddens=[16], head_fcnet_hiddens=[8])  # tanh encoder, relu head
    with pytest.raises(ValueError, match="one activation"):
        actor_weights(mixed, "ring_rang")
    _, normed = _module(fcnet_hiddens=[16], fcnet_use_layernorm=True)
    with pytest.raises(ValueError, match="cannot export actor layer"):
        actor_weights(normed, "ring_rang")


def test_export_path_is_checked_before_training(tmp_path, capsys):
    check_export_path(tmp_path / "new" / "folders" / "policy.npz")  # folders to be made: fine
    check_export_path(tmp_path / "policy.npz")
    assert list(tmp_path.iterdir()) == []  # the probe leaves nothing behind
    (tmp_path / "file").write_text("")
    for path, match in [(tmp_path, "is a folder"), (tmp_path / "file" / "policy.npz", "not a folder")]:
        with pytest.raises(ValueError, match=match):
            check_export_path(path)
    config_file = tmp_path / "config.yaml"
    config_file.write_text("game: ring_rang\niterations: 1\n")
    assert main(["--config", str(config_file), "--export", str(tmp_path / "file" / "x.npz")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("error: --export") and "not a folder" in line
    assert main(["--config", str(config_file), "--export-module", "team_0"]) == 2
    assert not ray.is_initialized() and not (tmp_path / "runs").exists()


# ---------------------------------------------------------------- a local Ray
@pytest.fixture(scope="module")
def local_ray():
    init_ray(RLlibConfig(**TINY))
    yield
    ray.shutdown()


@pytest.mark.slow
def test_ppo_trains_with_two_env_runners(local_ray, tmp_path):
    config = RLlibConfig(game="ring_rang", policies="per_team", env={"episode": "round"}, **TINY)
    algo = ppo_config(config).build_algo()  # illegal_action="raise": an illegal action would fail an env runner
    try:
        assert algo.env_runner_group.num_remote_env_runners() == 2
        results = [algo.train() for _ in range(config.iterations)]
        _check_training(config, results, algo, tmp_path)
    finally:
        algo.stop()


def _check_training(config, results, algo, tmp_path) -> None:
    last = results[-1]
    assert last["training_iteration"] == 2
    assert last["num_env_steps_sampled_lifetime"] >= 2 * config.train_batch_size
    runners = last["env_runners"]
    assert runners["num_episodes_lifetime"] > 0
    assert set(runners["module_episode_returns_mean"]) == {"team_0", "team_1"}
    # zero-sum rounds: the two teams' mean returns cancel
    assert runners["module_episode_returns_mean"]["team_0"] == pytest.approx(
        -runners["module_episode_returns_mean"]["team_1"]
    )
    sent = sum(r["env_runners"].get("actions_sent", 0) for r in results)
    illegal = sum(r["env_runners"].get("illegal_actions", 0) for r in results)
    assert sent > 100 and illegal == 0
    for policy in ("team_0", "team_1"):
        assert np.isfinite(last["learners"][policy]["policy_loss"])
        assert np.isfinite(last["learners"][policy]["vf_loss"])
    # the export of a live algorithm: the learner's weights, which the env runners act with
    env = CardPettingZooEnv({"game": "ring_rang"})
    observations, masks = _played_observations(env, deals=2)
    for policy in ("team_0", "team_1"):
        path = export_policy(algo, "ring_rang", tmp_path / f"{policy}.npz", policy)
        agent = PolicyAgent(path=str(path), game="ring_rang")
        logits = _module_logits(algo.get_module(policy), observations, np.ones_like(masks))
        assert np.abs(agent.logits(observations) - logits).max() < 1e-5
    assert not np.allclose(load_policy(tmp_path / "team_0.npz")["action/weight"],
                           load_policy(tmp_path / "team_1.npz")["action/weight"])
    with pytest.raises(ValueError, match="no policy"):
        export_policy(algo, "ring_rang", tmp_path / "x.npz", "shared")


@pytest.mark.slow
def test_cli_trains_rang_and_saves(local_ray, tmp_path):
    import yaml

    config_file = tmp_path / "rllib_rang.yaml"
    run_dir = tmp_path / "run"
    config_file.write_text(
        yaml.safe_dump({"game": "rang", "num_players": 3, "env": {"episode": "deal"}, "policies": "per_seat", **TINY})
    )
    export = tmp_path / "export" / "policy.npz"
    assert main(["--config", str(config_file), "--iterations", "1", "--run-dir", str(run_dir),
                 "--export", str(export), "--export-module", "player_1"]) == 0
    (line,) = (run_dir / "progress.jsonl").read_text().splitlines()
    summary = json.loads(line)
    assert summary["iteration"] == 1 and summary["env_steps"] >= 256
    assert summary["illegal_actions"] == 0 and summary["actions_sent"] > 0
    assert set(summary["policy_loss"]) == {"player_0", "player_1", "player_2"}
    assert (run_dir / "checkpoint").is_dir() and any((run_dir / "checkpoint").iterdir())
    assert json.loads((run_dir / "config.json").read_text())["num_players"] == 3
    # the exported player_1 plays in the harness, every action legal
    assert json.loads((run_dir / "config.json").read_text())["export_module"] == "player_1"
    result = evaluate(EvalConfig(game="rang", num_players=3, agents=[f"policy:path={export}", "random"], deals=4,
                                 workers=1, seed=0, progress=False))
    assert result["episodes"] > 0 and result["truncated"] == 0
    assert {row["agent"] for row in result["table"]} >= {"random"}
