"""RLlib multi-agent PPO over the AEC envs (runs in the [ray] venv; skipped where ray is not installed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
torch = pytest.importorskip("torch")

import ray  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

from cardenvs.train.rllib import (  # noqa: E402
    CardPettingZooEnv,
    MaskedPPOTorchRLModule,
    RLlibConfig,
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
    ],
)
def test_bad_configs_are_value_errors(changes, match):
    with pytest.raises(ValueError, match=match):
        RLlibConfig.from_dict(changes)


def test_shipped_configs_load():
    ring_rang = RLlibConfig.from_yaml("configs/rllib_ring_rang.yaml")
    rang = RLlibConfig.from_yaml("configs/rllib_rang.yaml")
    assert (ring_rang.game, ring_rang.policies, ring_rang.num_env_runners) == ("ring_rang", "per_team", 2)
    assert (rang.game, rang.num_players, rang.policies) == ("rang", 4, "shared")


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


# ---------------------------------------------------------------- a local Ray
@pytest.fixture(scope="module")
def local_ray():
    init_ray(RLlibConfig(**TINY))
    yield
    ray.shutdown()


@pytest.mark.slow
def test_ppo_trains_with_two_env_runners(local_ray):
    config = RLlibConfig(game="ring_rang", policies="per_team", env={"episode": "round"}, **TINY)
    algo = ppo_config(config).build_algo()  # illegal_action="raise": an illegal action would fail an env runner
    try:
        assert algo.env_runner_group.num_remote_env_runners() == 2
        results = [algo.train() for _ in range(config.iterations)]
    finally:
        algo.stop()
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


@pytest.mark.slow
def test_cli_trains_rang_and_saves(local_ray, tmp_path):
    import yaml

    config_file = tmp_path / "rllib_rang.yaml"
    run_dir = tmp_path / "run"
    config_file.write_text(
        yaml.safe_dump({"game": "rang", "num_players": 3, "env": {"episode": "deal"}, "policies": "per_seat", **TINY})
    )
    main(["--config", str(config_file), "--iterations", "1", "--run-dir", str(run_dir)])
    (line,) = (run_dir / "progress.jsonl").read_text().splitlines()
    summary = json.loads(line)
    assert summary["iteration"] == 1 and summary["env_steps"] >= 256
    assert summary["illegal_actions"] == 0 and summary["actions_sent"] > 0
    assert set(summary["policy_loss"]) == {"player_0", "player_1", "player_2"}
    assert (run_dir / "checkpoint").is_dir() and any((run_dir / "checkpoint").iterdir())
    assert json.loads((run_dir / "config.json").read_text())["num_players"] == 3
