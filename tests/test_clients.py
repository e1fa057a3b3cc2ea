"""The RL libraries researchers pair the envs with, each through a whole episode with its own recipe
(docs/integrations.md): Tianshou, TorchRL, PettingZoo's turn-based parallel conversion, SuperSuit's
vector envs and skrl. A Rang match needs ``eliminated="stay"`` (a fixed agent set) in every one of them.

Each test plays to the episode's real end and checks the returns against the engine: in a Rang match
the last player standing gets +1 and everyone else -1/(N-1); a RING RANG round gives +-points per team.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from cardenvs import rang_v0, ring_rang_v0

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def rang_match(num_players=4):
    return rang_v0.env(num_players=num_players, eliminated="stay")


def ring_rang_round():
    return ring_rang_v0.env(episode="round")


def assert_match_returns(returns, env):
    """Rang: the engine's winner got +1 and every other seat -1/(N-1), at the match's real end
    (``env`` None: the client has already reset it, only the returns are checked)."""
    n = len(returns)
    if env is None:
        assert sorted(returns) == pytest.approx([-1 / (n - 1)] * (n - 1) + [1.0], abs=1e-6)
        return
    game = env.unwrapped.game
    assert game.match_over and not game.truncated
    expected = [1.0 if game.alive[seat] else -1 / (n - 1) for seat in range(n)]
    assert np.asarray(returns, float) == pytest.approx(expected, abs=1e-6)


def assert_round_returns(returns, env):
    """RING RANG round: team 0 (player_0, player_2) gets +-points, team 1 the opposite."""
    r = np.asarray(returns, float)
    assert r[0] == r[2] and r[1] == r[3] and r[0] == -r[1] and abs(r[0]) in (1, 2, 3)
    assert env is None or env.unwrapped.game.is_over()


CASES = [
    pytest.param(rang_match, assert_match_returns, id="rang-match"),
    pytest.param(ring_rang_round, assert_round_returns, id="ring_rang-round"),
]


# ------------------------------------------------------------------ Tianshou
@pytest.mark.parametrize("make, check", CASES)
def test_tianshou_pettingzoo_env_plays_to_the_end(make, check):
    pytest.importorskip("tianshou")
    from tianshou.env import PettingZooEnv

    rng = np.random.default_rng(0)
    for seed in range(3):
        env = PettingZooEnv(make())
        obs, _ = env.reset(seed=seed)
        returns, done, steps = np.zeros(len(env.agents)), False, 0
        while not done:
            mask = np.asarray(obs["mask"], bool)
            obs, rewards, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
            returns += rewards
            done, steps = terminated or truncated, steps + 1
        check(returns, env.env)
    assert steps > 20


def test_tianshou_rang_match_in_leave_mode_stops_at_the_first_elimination():
    """The documented limit: without ``eliminated="stay"`` Tianshou ends the episode early, unannounced."""
    pytest.importorskip("tianshou")
    from tianshou.env import PettingZooEnv

    env = PettingZooEnv(rang_v0.env(num_players=4))
    obs, _ = env.reset(seed=0)
    done = False
    rng = np.random.default_rng(0)
    while not done:
        obs, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(obs["mask"]))))
        done = terminated or truncated
    assert not env.env.unwrapped.game.match_over


@pytest.mark.parametrize("make", [pytest.param(lambda: rang_match(3), id="rang-match", marks=pytest.mark.slow),
                                  pytest.param(ring_rang_round, id="ring_rang-round")])
def test_tianshou_collector_with_random_multi_agent_policy(make):
    pytest.importorskip("tianshou")
    from tianshou.algorithm.multiagent.marl import MultiAgentPolicy
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm as Random
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    def make_env():
        return PettingZooEnv(make())

    policy = MultiAgentPolicy({a: Random.Policy(make_env().action_space) for a in make_env().agents})
    collector = Collector(policy, DummyVectorEnv([make_env, make_env]), VectorReplayBuffer(20_000, 2))
    stats = collector.collect(n_episode=4, reset_before_collect=True)
    assert stats.n_collected_episodes == 4
    for row in np.asarray(stats.returns):  # per episode, per seat
        (assert_match_returns if len(row) == 3 else assert_round_returns)(row, None)
    stored = collector.buffer.sample_indices(0)  # every stored step (the buffer holds one segment per env)
    assert len(stored) == stats.n_collected_steps
    masks, actions = collector.buffer.obs.mask[stored], collector.buffer.act[stored]
    assert masks[np.arange(len(stored)), actions].all()  # every action the adapter passed on was legal


# ------------------------------------------------------------------ TorchRL
@pytest.mark.parametrize("make, check", [pytest.param(*case.values, id=case.id, marks=pytest.mark.slow)
                                         if case.id == "rang-match" else case for case in CASES])
def test_torchrl_pettingzoo_wrapper_with_masks_plays_to_the_end(make, check):
    pytest.importorskip("torchrl")
    import torch
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    aec = make()
    env = PettingZooWrapper(aec, use_mask=True, categorical_actions=True, seed=1)
    td = env.rollout(100_000, break_when_any_done=True)  # rand_action samples under each action_mask
    assert bool(td["next", "done"][-1])
    groups = list(env.group_map)
    returns = [float(td["next", g, "reward"].sum()) for g in groups]
    check(returns, aec)
    acting = torch.stack([td[g, "mask"].reshape(-1) for g in groups], -1)
    assert (acting.sum(-1) == 1).all()  # one seat acts per step
    for g in groups:
        rows = td[g, "mask"].reshape(-1)
        actions = td[g, "action"].reshape(-1)[rows]
        assert td[g, "action_mask"].reshape(len(td), -1)[rows].gather(1, actions[:, None]).all()


# ------------------------------------------------------------------ PettingZoo parallel API
def _play_parallel(env, seed, rng):
    """Random legal play through a ParallelEnv; every seat without a legal action sends 0 (ignored)."""
    obs, _ = env.reset(seed=seed)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        acting = [a for a in env.agents if obs[a]["action_mask"].any()]
        assert len(acting) == 1  # turn-based: one seat with a mask per step
        actions = dict.fromkeys(env.agents, 0)
        actions[acting[0]] = int(rng.choice(np.flatnonzero(obs[acting[0]]["action_mask"])))
        obs, rewards, _, _, _ = env.step(actions)
        for agent, reward in rewards.items():
            returns[agent] += reward
    return [returns[a] for a in env.possible_agents]


@pytest.mark.parametrize("make, check", CASES)
def test_turn_based_aec_to_parallel_plays_to_the_end(make, check):
    from pettingzoo.test import parallel_api_test
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    parallel_api_test(turn_based_aec_to_parallel(make()), num_cycles=500)
    aec = make()
    env = turn_based_aec_to_parallel(aec)
    rng = np.random.default_rng(2)
    for seed in range(2):
        check(_play_parallel(env, seed, rng), aec)


# ------------------------------------------------------------------ SuperSuit
@pytest.mark.parametrize("make, check", CASES)
def test_supersuit_vector_envs_play_to_the_end(make, check):
    ss = pytest.importorskip("supersuit")
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    aec = make()
    vec = ss.pettingzoo_env_to_vec_env_v1(turn_based_aec_to_parallel(aec))  # one row per seat
    obs, _ = vec.reset(seed=3)
    rng = np.random.default_rng(3)
    returns = np.zeros(vec.num_envs)
    while True:
        masks = obs["action_mask"]
        assert (masks.any(1)).sum() == 1
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
        obs, rewards, terminated, truncated, _ = vec.step(actions)
        returns += rewards
        if terminated.all() or truncated.all():
            break
    check(returns, None)  # the vector env has already reset itself for the next episode
    # several games side by side, as SB3-style trainers take them
    stacked = ss.concat_vec_envs_v1(vec, 2, num_cpus=0, base_class="gymnasium")
    obs, _ = stacked.reset(seed=0)
    assert obs["action_mask"].shape == (2 * vec.num_envs, aec.action_space("player_0").n)
    stacked.close()


# ------------------------------------------------------------------ skrl
@pytest.mark.parametrize("make, check", CASES)
def test_skrl_pettingzoo_wrapper_has_the_state_space_and_plays_to_the_end(make, check):
    pytest.importorskip("skrl")
    import torch
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel
    from skrl.envs.wrappers.torch import wrap_env

    aec = make()
    env = wrap_env(turn_based_aec_to_parallel(aec), wrapper="pettingzoo")
    state_space = env.state_spaces["player_0"]  # what MAPPO's centralised critic is built on
    assert state_space is not None and state_space.shape == aec.unwrapped.state_space.shape
    num_actions = env.action_spaces["player_0"].n
    obs, _ = env.reset()
    generator = torch.Generator().manual_seed(0)
    returns = torch.zeros(len(env.possible_agents))
    while True:
        actions = {}
        for agent, flat in obs.items():
            mask = flat[0, :num_actions] > 0  # the Dict flattens in key order: action_mask, then observation
            actions[agent] = (torch.multinomial(mask.float(), 1, generator=generator) if mask.any()
                              else torch.zeros(1, dtype=torch.long)).view(1, 1)
        obs, rewards, terminated, truncated, _ = env.step(actions)
        returns += torch.stack([rewards[a].sum() for a in env.possible_agents])
        assert env.state()["player_0"].shape == (1, state_space.shape[0])
        if all(t.all() for t in terminated.values()) or all(t.all() for t in truncated.values()):
            break
    check(returns.tolist(), aec)


# ------------------------------------------------------------------ docs/integrations.md, as written
# A recipe that trains and evaluates states its budget on one line; the test runs it with a short one.
BUDGET = re.compile(r"^DECISIONS, DEALS = [\d_]+, [\d_]+", re.M)
SHORT_BUDGET = "DECISIONS, DEALS = 1_000, 4"


def _recipes():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "integrations.md").read_text(encoding="utf-8")
    for i, code in enumerate(re.findall(r"```python\n(.*?)```", text, re.S)):
        # a training run without a budget line: tests/test_plugins.py::test_maskable_ppo_learns_on_gymnasium_make
        # learns the same way
        marks = [pytest.mark.skip(reason="trains: see test_maskable_ppo_learns_on_gymnasium_make")] \
            if ".learn(" in code and not BUDGET.search(code) else []
        yield pytest.param(code, id=f"block{i}", marks=marks)


def test_the_training_recipes_state_their_budget():
    """Issue 44 item 10: Tianshou trains with masks and SB3 wraps model.predict, both then evaluate_agents."""
    recipes = [p.values[0] for p in _recipes() if BUDGET.search(p.values[0])]
    assert len(recipes) == 2
    tianshou, sb3 = sorted(recipes, key=lambda code: "tianshou" not in code)
    assert "run_training" in tianshou and '"mask"' in tianshou and "evaluate_agents([TianshouAgent" in tianshou
    assert "model.predict" in sb3 and "action_masks=" in sb3 and "evaluate_agents([SB3Agent" in sb3


@pytest.mark.parametrize("code", list(_recipes()))
def test_recipe_runs_as_written(code, tmp_path):
    import importlib.util
    import subprocess
    import sys

    for module in re.findall(r"^(?:from|import) ([\w]+)", code, re.M):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed here")
    trains = bool(BUDGET.search(code))
    code = BUDGET.sub(SHORT_BUDGET, code)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900,
                            cwd=tmp_path)  # a recipe may save a model: into the test's folder, not the checkout
    assert result.returncode == 0, result.stderr[-3000:]
    if trains:  # the harness's table: both agents, 4 duplicate deals = 8 rounds each
        assert "win rate" in result.stdout and "\nrandom " in result.stdout, result.stdout[-2000:]
