"""Plugging the envs into other code: gymnasium ids, PettingZoo's wrappers, other libraries' adapters."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

import cardenvs  # noqa: E402,F401  (registers the gymnasium ids)
from cardenvs import rang_v0, ring_rang_v0  # noqa: E402
from cardenvs.agents.base import Agent  # noqa: E402
from cardenvs.gym_envs import env_ids  # noqa: E402
from cardenvs.train.wrappers import OpponentPool  # noqa: E402

RING_RANG = "cardenvs/RingRang-v0"
RANG = "cardenvs/Rang-v0"


class SeatRecorder(Agent):
    """A random agent that notes which seat it was asked to play (it reads the env, like search agents)."""

    needs_env = True

    def __init__(self, name: str, seed: int = 0):
        super().__init__(seed=seed)
        self.name = name
        self.seats: list[int] = []
        self._env = None

    def observe_env(self, env) -> None:
        self._env = env

    def act(self, observation) -> int:
        self.seats.append(int(self._env.agent_selection.rsplit("_", 1)[1]))
        legal = np.flatnonzero(observation["action_mask"])
        assert legal.size, "asked to act with an empty mask"
        return int(legal[self.rng.integers(legal.size)])


def _play(env, episodes: int, seed: int) -> list[float]:
    """Random legal play through the gymnasium API; returns each episode's total reward."""
    rng = np.random.default_rng(seed)
    totals = []
    for episode in range(episodes):
        obs, info = env.reset(seed=seed + episode)
        total, done = 0.0, False
        while not done:
            assert obs in env.observation_space
            mask = env.get_wrapper_attr("action_masks")()
            np.testing.assert_array_equal(mask, info["action_mask"].astype(bool))
            legal = np.flatnonzero(mask)
            assert legal.size > 0
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
            total += reward
            done = terminated or truncated
        totals.append(total)
    return totals


# ------------------------------------------------------------------ gymnasium
def test_ids_registered_on_import_without_torch():
    code = (
        "import sys, gymnasium, cardenvs\n"
        f"assert set({sorted(env_ids())!r}) <= set(gymnasium.registry), 'ids missing'\n"
        "heavy = [m for m in ('torch', 'stable_baselines3', 'sb3_contrib') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_import_survives_a_missing_gymnasium():
    code = (
        "import sys\n"
        "sys.modules['gymnasium'] = None  # as if not installed\n"
        "import cardenvs\n"
        "from cardenvs.cards import CODES\n"
        "assert CODES[0] == '2C'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("env_id, kwargs", [(RING_RANG, {}), (RANG, {"num_players": 3}), (RANG, {"num_players": 6})])
def test_env_checker_passes(env_id, kwargs):
    from gymnasium.utils.env_checker import check_env

    # the checker steps random (mostly illegal) actions: let them end the episode instead of raising
    env = gym.make(env_id, illegal_action="terminate", **kwargs)
    check_env(env.unwrapped, skip_render_check=True)


def test_ring_rang_rounds_score_the_round_points():
    env = gym.make(RING_RANG, opponents="rules_basic")
    for total in _play(env, episodes=4, seed=3):
        assert total in (-3.0, -2.0, -1.0, 1.0, 2.0, 3.0)  # the learner team's points of the round (default episode)


def test_rang_deals_and_matches_end():
    deal_totals = _play(gym.make(RANG, num_players=4, opponents="random"), episodes=3, seed=5)
    assert all(-1.0 <= total <= 0.0 for total in deal_totals)  # -(points of the deal)/100
    match_totals = _play(gym.make(RANG, num_players=3, opponents="random", episode="match"), episodes=1, seed=7)
    assert -1.0 <= match_totals[0] <= 1.0


def test_same_seed_same_episode():
    def trajectory(seed: int) -> list:
        env = gym.make(RANG, num_players=4, opponents=["random", "rules_basic", "rules_strong"])
        obs, info = env.reset(seed=seed)
        seen = [obs.copy()]
        while True:
            action = int(np.flatnonzero(info["action_mask"])[0])
            obs, reward, terminated, truncated, info = env.step(action)
            seen += [obs.copy(), reward]
            if terminated or truncated:
                return seen

    first, again = trajectory(11), trajectory(11)
    assert len(first) == len(again)
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)


def test_opponents_per_seat_play_their_seats():
    left, across, right = SeatRecorder("left"), SeatRecorder("across"), SeatRecorder("right")
    env = gym.make(RANG, num_players=4, opponents=[left, across, right])
    learner_seats = set()
    for episode in range(4):
        _, info = env.reset(seed=episode)
        learner = info["learner_seats"][0]
        learner_seats.add(learner)
        for recorder in (left, across, right):
            recorder.seats.clear()
        _play_out(env, info)
        for offset, recorder in enumerate((left, across, right), start=1):
            assert recorder.seats, f"{recorder.name} never played"
            assert set(recorder.seats) == {(learner + offset) % 4}
    assert len(learner_seats) > 1  # the learner's seat is drawn per episode


def test_ring_rang_opponents_per_team_and_per_seat():
    team = SeatRecorder("team")
    env = gym.make(RING_RANG, opponents=[team])
    _, info = env.reset(seed=1)
    _play_out(env, info)
    learner = info["learner_seats"][0]
    assert set(team.seats) == {(learner + 1) % 4, (learner + 3) % 4}

    left, right = SeatRecorder("left"), SeatRecorder("right")
    env = gym.make(RING_RANG, opponents=[left, right])
    _, info = env.reset(seed=2)
    _play_out(env, info)
    learner = info["learner_seats"][0]
    assert set(left.seats) == {(learner + 1) % 4} and set(right.seats) == {(learner + 3) % 4}


def _play_out(env, info) -> None:
    while True:
        _, _, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if terminated or truncated:
            return


def test_opponents_drawn_from_a_dict_or_a_pool():
    env = gym.make(RANG, num_players=4, opponents={"random": 1.0, "rules_basic": 1.0})
    seen = set()
    for episode in range(6):
        _, info = env.reset(seed=episode)
        seen.update(info["opponents"])
    assert seen == {"random", "rules_basic"}
    env = gym.make(RING_RANG, opponents=OpponentPool("ring_rang", spec_weights={"rules_strong": 1.0}))
    _, info = env.reset(seed=0)
    assert info["opponents"] == ["rules_strong"]


@pytest.mark.parametrize(
    "env_id, kwargs, match",
    [
        (RANG, {"num_players": 4, "opponents": ["random", "random"]}, "opponents: expected 3 entries"),
        (RING_RANG, {"opponents": ["random"] * 3}, "opponents: expected 1"),
        (RING_RANG, {"opponents": "no_such_agent"}, "unknown agent"),
        (RING_RANG, {"opponents": [3]}, "opponents: expected agent specs"),
        (RING_RANG, {"opponents": 3}, "opponents: expected a spec"),
        (RING_RANG, {"opponents": OpponentPool("rang")}, "opponents: the pool is for 'rang'"),
        (RING_RANG, {"num_players": 5}, "num_players"),
        (RING_RANG, {"illegal_action": "ignore"}, "illegal_action"),
        (RANG, {"num_players": 11}, "num_players"),
    ],
)
def test_bad_arguments_are_value_errors(env_id, kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make(env_id, **kwargs)


def test_illegal_actions_raise_or_terminate():
    env = gym.make(RING_RANG)
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="illegal action"):
        env.step(illegal)
    env = gym.make(RING_RANG, illegal_action="terminate", illegal_reward=-5.0)
    _, info = env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-5.0, True, False, True)
    assert not info["action_mask"].any()


def test_env_keywords_reach_the_aec_env():
    assert gym.make(RING_RANG).action_space.n == 57
    assert gym.make(RING_RANG, signals=True).action_space.n == 84
    assert gym.make(RANG, num_players=5).observation_space.shape == (62 + 5 * 5,)
    with pytest.raises(ValueError, match="episode"):
        gym.make(RING_RANG, episode="forever")


@pytest.mark.parametrize("env_id, kwargs", [(RING_RANG, {}), (RANG, {"num_players": 3})])
def test_maskable_ppo_learns_on_gymnasium_make(env_id, kwargs):
    sb3_contrib = pytest.importorskip("sb3_contrib")
    env = gym.make(env_id, opponents="random", **kwargs)
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0, device="cpu", policy_kwargs={"net_arch": [32]}
    )
    model.learn(total_timesteps=256)  # MaskablePPO reads action_masks(); an illegal action would raise inside learn()
    assert model.num_timesteps >= 256
    obs, info = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=info["action_mask"].astype(bool), deterministic=True)
    assert info["action_mask"][int(action)]


# ------------------------------------------------------------------ PettingZoo's wrappers
def _lockstep(plain, wrapped, seed: int, steps: int = 10_000) -> int:
    """Random legal play in both envs at once; every ``last()`` must agree. Returns the number of steps."""
    rng = np.random.default_rng(seed)
    plain.reset(seed=seed)
    wrapped.reset(seed=seed)
    for count in range(steps):
        if not plain.agents:
            assert not wrapped.agents
            return count
        assert wrapped.agent_selection == plain.agent_selection
        expected, got = plain.last(), wrapped.last()
        np.testing.assert_array_equal(got[0]["observation"], expected[0]["observation"])
        np.testing.assert_array_equal(got[0]["action_mask"], expected[0]["action_mask"])
        assert got[1:4] == expected[1:4]
        if expected[2] or expected[3]:
            action = None
        else:
            action = int(rng.choice(np.flatnonzero(expected[0]["action_mask"])))
        plain.step(action)
        wrapped.step(action)
    raise AssertionError("the game did not end")


def _pettingzoo_stack(raw):
    from pettingzoo.utils import wrappers

    return wrappers.OrderEnforcingWrapper(
        wrappers.AssertOutOfBoundsWrapper(
            wrappers.TerminateIllegalWrapper(wrappers.BaseWrapper(raw), illegal_reward=-1)
        )
    )


@pytest.mark.parametrize(
    "make_raw",
    [
        lambda: ring_rang_v0.raw_env(episode="round"),
        lambda: ring_rang_v0.raw_env(episode="game", signals=True, declarations=True),
        lambda: rang_v0.raw_env(num_players=3, episode="match"),
        lambda: rang_v0.raw_env(num_players=7, episode="deal"),
    ],
)
def test_pettingzoo_wrappers_change_nothing_in_legal_play(make_raw):
    assert _lockstep(make_raw(), _pettingzoo_stack(make_raw()), seed=4) > 10


def test_pettingzoo_illegal_move_wrappers():
    env = _pettingzoo_stack(ring_rang_v0.raw_env())
    env.reset(seed=0)
    with pytest.raises(AssertionError):  # AssertOutOfBoundsWrapper
        env.step(999)
    offender = env.agent_selection
    obs = env.observe(offender)
    env.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))  # TerminateIllegalWrapper
    assert all(env.terminations.values())
    assert env.rewards[offender] == -1 and all(r == 0 for a, r in env.rewards.items() if a != offender)


def test_aec_to_parallel_is_refused_for_turn_based_games():
    from pettingzoo.utils.conversions import aec_to_parallel

    for env in (ring_rang_v0.env(), rang_v0.env(num_players=4)):
        assert env.metadata["is_parallelizable"] is False
        with pytest.raises(AssertionError, match="is_parallelizable"):
            aec_to_parallel(env)
