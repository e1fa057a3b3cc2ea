"""The numpy PolicyAgent reproduces the torch MaskablePPO actor; registry specs; bad files."""

from __future__ import annotations

import numpy as np
import pytest
from games import BUILTIN_GAMES

from cardenvs.agents.policy import PolicyAgent, export_policy, load_policy, trained_path
from cardenvs.agents.registry import make_agent
from cardenvs.train.wrappers import OpponentPool, SelfPlayEnv

torch = pytest.importorskip("torch")
sb3_contrib = pytest.importorskip("sb3_contrib")


def _observations(env: SelfPlayEnv, count: int, seed: int):
    """(observation, mask) pairs from real episodes."""
    rng = np.random.default_rng(seed)
    out = []
    obs, _ = env.reset(seed=seed)
    while len(out) < count:
        mask = env.action_masks()
        out.append((obs, mask))
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            obs, _ = env.reset()
    return out


@pytest.mark.parametrize(("game", "activation"), [("ring_rang", "relu"), ("rang", "tanh")])
def test_numpy_agent_reproduces_torch_probabilities(tmp_path, game, activation):
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    env = SelfPlayEnv(game, OpponentPool(game, {"random": 1.0}), seed=0)
    activation_fn = {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[activation]
    model = MaskablePPO(
        "MlpPolicy", DummyVecEnv([lambda: env]), seed=1, device="cpu",
        policy_kwargs={"net_arch": {"pi": [32, 16], "vf": [8]}, "activation_fn": activation_fn},
    )
    with torch.no_grad():  # larger weights than at init, so the probabilities are far from uniform
        for parameter in model.policy.parameters():
            parameter.mul_(3.0)
    path = export_policy(model, game, tmp_path / "p.npz")
    agent = PolicyAgent(path=str(path))
    samples = _observations(SelfPlayEnv(game, OpponentPool(game, {"random": 1.0}), seed=9), 60, seed=4)
    obs = np.stack([o for o, _ in samples])
    masks = np.stack([m for _, m in samples])
    with torch.no_grad():
        distribution = model.policy.get_distribution(torch.as_tensor(obs), action_masks=masks)
        expected = distribution.distribution.probs.numpy()
    got = agent.probabilities(obs, masks)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert got.max(axis=1).mean() > 0.3  # not a near-uniform policy: the test has teeth
    assert (got[~masks] == 0).all()
    for (o, m), p in zip(samples, expected, strict=True):
        assert agent.act({"observation": o, "action_mask": m.astype(np.int8)}) == int(np.argmax(p))
    # model.predict with masks agrees with the greedy numpy agent
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    np.testing.assert_array_equal(actions, np.argmax(got, axis=1))


def test_sampling_agent_is_seeded_and_legal(tmp_path):
    weights = {
        "hidden0/weight": np.ones((4, 3), np.float32),
        "hidden0/bias": np.zeros(4, np.float32),
        "action/weight": np.zeros((5, 4), np.float32),
        "action/bias": np.zeros(5, np.float32),
        "activation": np.array("relu"),
    }
    observation = {"observation": np.ones(3, np.float32), "action_mask": np.array([0, 1, 0, 1, 1], np.int8)}
    a = PolicyAgent(seed=3, weights=weights, greedy=False)
    b = PolicyAgent(seed=3, weights=weights, greedy=False)
    first = [a.act(observation) for _ in range(50)]
    assert first == [b.act(observation) for _ in range(50)]
    assert set(first) == {1, 3, 4}


def test_registry_policy_spec(tmp_path):
    from cardenvs.agents.policy import save_policy

    weights = {
        "action/weight": np.zeros((28, 82), np.float32),
        "action/bias": np.arange(28, dtype=np.float32),
        "activation": np.array("relu"),
        "game": np.array("rang"),
    }
    path = save_policy(weights, tmp_path / "r.npz")
    agent = make_agent(f"policy:path={path}", "rang", seed=0, num_players=4)
    mask = np.zeros(28, np.int8)
    mask[[2, 5]] = 1
    assert agent.act({"observation": np.zeros(82, np.float32), "action_mask": mask}) == 5
    with pytest.raises(ValueError, match="trained for 'rang'"):
        make_agent(f"policy:path={path}", "ring_rang", seed=0)
    with pytest.raises(ValueError, match="give the file"):
        make_agent("policy", "rang", seed=0, num_players=4)


def test_bad_policy_files_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="cannot read policy file"):
        load_policy(tmp_path / "missing.npz")
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="cannot read policy file"):
        load_policy(garbage)
    other = tmp_path / "other.npz"
    np.savez(other, x=np.zeros(3))
    with pytest.raises(ValueError, match="not a cardenvs policy file"):
        load_policy(other)


@pytest.mark.parametrize("game", BUILTIN_GAMES)
def test_shipped_trained_policy_plays_legal_moves(game):
    if not trained_path(game).exists():
        pytest.skip(f"no shipped policy {trained_path(game)} yet")
    extra = {"num_players": 4} if game == "rang" else {}
    agent = make_agent("trained", game, seed=0, **extra)
    env = SelfPlayEnv(game, OpponentPool(game, {"random": 1.0}), seed=3)
    for obs, mask in _observations(env, 40, seed=1):
        action = agent.act({"observation": obs, "action_mask": mask.astype(np.int8)})
        assert mask[action]


def test_shipped_rang_policy_refuses_another_player_count():
    if not trained_path("rang").exists():
        pytest.skip("no shipped Rang policy yet")
    with pytest.raises(ValueError, match="takes 4 players, not 5"):
        make_agent("trained", "rang", seed=0, num_players=5)
