"""The self-play wrapper: rewards credited to the learner's seat, masks, opponents, the pool."""

from __future__ import annotations

import numpy as np
import pytest
from games import ALL_GAMES

pytest.importorskip("gymnasium")

from cardenvs.train.wrappers import OpponentPool, SelfPlayEnv, Snapshot, make_aec_env  # noqa: E402


def _record(env: SelfPlayEnv) -> tuple[dict, list]:
    """Log the wrapper's calls to its AEC env: the reset arguments and every (agent, action) step."""
    resets: dict = {}
    steps: list = []
    aec = env.aec
    reset, step = aec.reset, aec.step

    def logged_reset(seed=None, options=None):
        resets.update(seed=seed, options=options)
        steps.clear()
        reset(seed=seed, options=options)

    def logged_step(action):
        steps.append((aec.agent_selection, action))
        step(action)

    aec.reset, aec.step = logged_reset, logged_step
    return resets, steps


def _replay(game: str, episode: str, resets: dict, steps: list, num_players: int, **env_kwargs):
    """Replay the logged steps in a plain AEC loop.

    Returns the per-seat totals from ``env.last()`` and, for every decision index,
    the per-seat rewards summed from ``env.rewards`` over the steps before it.
    """
    env = make_aec_env(game, episode, num_players, **env_kwargs)
    env.reset(**resets)
    totals = np.zeros(num_players)
    running = np.zeros(num_players)
    before = []
    i = 0
    for agent in env.agent_iter():
        _, reward, termination, truncation, _ = env.last()
        totals[int(agent[7:])] += reward
        logged_agent, action = steps[i]
        assert logged_agent == agent
        assert (action is None) == (termination or truncation)
        before.append(running.copy())
        env.step(action)
        for name, r in env.rewards.items():
            running[int(name[7:])] += r
        i += 1
    assert i == len(steps)
    return totals, running, before


CASES = [
    ("ring_rang", "round", 4, {}),
    ("ring_rang", "game", 4, {"shaping": 0.1}),  # rewards in the middle of the episode too
    ("rang", "deal", 4, {}),
    ("rang", "deal", 3, {}),
    ("rang", "match", 4, {}),  # eliminations: dead steps in the middle of the episode
]


@pytest.mark.parametrize(("game", "episode", "num_players", "env_kwargs"), CASES)
def test_rewards_are_credited_to_the_learners_seat(game, episode, num_players, env_kwargs):
    pool = OpponentPool(game, {"random": 1.0})
    env = SelfPlayEnv(game, pool, episode=episode, num_players=num_players, seed=7, env_kwargs=env_kwargs)
    resets, steps = _record(env)
    rng = np.random.default_rng(3)
    for _ in range(3 if episode in ("game", "match") else 12):
        obs, info = env.reset()
        seats = info["learner_seats"]
        decisions = []  # (index of the AEC step of this decision, credited total before it)
        credited = 0.0
        done = False
        while not done:
            decisions.append((len(steps), credited))
            legal = np.flatnonzero(env.action_masks())
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
            credited += reward
            done = terminated or truncated
        totals, running, before = _replay(game, episode, resets, steps, num_players, **env_kwargs)
        # the episode's sum: what the plain AEC loop gives the learner's seat (a team's reward counted once)
        for seat in seats:
            assert credited == pytest.approx(totals[seat])
            assert running[seat] == pytest.approx(totals[seat])
        # each decision: the rewards earned by the learner's seat up to that moment, no more, no less
        for index, credited_before in decisions:
            assert credited_before == pytest.approx(np.mean([before[index][s] for s in seats]))
        if game == "ring_rang":
            assert abs(credited) >= 1 or episode == "game"  # a round always has a winner


def test_learner_seat_and_opponents_vary_per_episode():
    pool = OpponentPool("rang", {"random": 1.0}, snapshot_weight=1.0)
    pool.add_snapshot(Snapshot("s", _random_weights(62 + 20, 28)))
    env = SelfPlayEnv("rang", pool, seed=1)
    seats, opponents = set(), set()
    for _ in range(30):
        _, info = env.reset()
        seats.add(info["learner_seats"])
        opponents.update(info["opponents"])
        done = False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            *_, terminated, truncated, _ = env.step(int(legal[0]))
            done = terminated or truncated
    assert seats == {(0,), (1,), (2,), (3,)}
    assert opponents == {"random", "snapshot:s"}


def test_ring_rang_learner_plays_both_seats_of_its_team():
    env = SelfPlayEnv("ring_rang", OpponentPool("ring_rang", {"random": 1.0}), seed=2)
    _, info = env.reset()
    s = info["learner_seats"][0]
    assert info["learner_seats"] == (s, (s + 2) % 4)
    acting = set()
    done = False
    while not done:
        acting.add(env.aec.agent_selection)
        legal = np.flatnonzero(env.action_masks())
        *_, terminated, truncated, _ = env.step(int(legal[-1]))
        done = terminated or truncated
    assert acting == {f"player_{s}", f"player_{(s + 2) % 4}"}


@pytest.mark.parametrize("game", ALL_GAMES)
def test_observation_and_mask_match_the_env(game):
    env = SelfPlayEnv(game, OpponentPool(game, {"random": 1.0}), seed=5)
    obs, info = env.reset()
    for _ in range(20):
        assert env.observation_space.contains(obs)
        aec_obs = env.aec.observe(env.aec.agent_selection)
        np.testing.assert_array_equal(obs, aec_obs["observation"])
        np.testing.assert_array_equal(env.action_masks(), aec_obs["action_mask"].astype(bool))
        np.testing.assert_array_equal(info["action_mask"], aec_obs["action_mask"])
        legal = np.flatnonzero(env.action_masks())
        obs, _, terminated, truncated, info = env.step(int(legal[0]))
        if terminated or truncated:
            obs, info = env.reset()


def test_illegal_action_is_a_clear_error():
    env = SelfPlayEnv("ring_rang", OpponentPool("ring_rang", {"random": 1.0}), seed=0)
    env.reset()
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(ValueError, match="illegal action"):
        env.step(illegal)


def test_same_seed_same_episodes():
    def run(seed):
        env = SelfPlayEnv("rang", OpponentPool("rang", {"random": 1.0}), seed=seed)
        out = []
        for _ in range(5):
            obs, _ = env.reset()
            done = False
            while not done:
                obs, reward, terminated, truncated, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
                out.append((obs.tobytes(), reward))
                done = terminated or truncated
        return out

    assert run(4) == run(4)
    assert run(4) != run(5)


def _random_weights(inputs: int, actions: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "hidden0/weight": rng.normal(size=(8, inputs)).astype(np.float32),
        "hidden0/bias": np.zeros(8, np.float32),
        "action/weight": rng.normal(size=(actions, 8)).astype(np.float32),
        "action/bias": np.zeros(actions, np.float32),
        "activation": np.array("relu"),
    }


def test_pool_mix_bounds_and_checkpoint_arrays():
    pool = OpponentPool("ring_rang", {"random": 3.0}, snapshot_weight=1.0, max_snapshots=2)
    entries, p = pool.entries()
    assert entries == ["random"] and p.tolist() == [1.0]  # no snapshot yet: all to the specs
    for name in "abc":
        pool.add_snapshot(Snapshot(name, _random_weights(10, 3)))
    assert [s.name for s in pool.snapshots] == ["b", "c"]
    entries, p = pool.entries()
    assert p.tolist() == pytest.approx([0.75, 0.125, 0.125])
    copy = OpponentPool("ring_rang", {"random": 3.0}, snapshot_weight=1.0, max_snapshots=2)
    copy.load_arrays(np.lib.npyio.NpzFile(_savez(pool.to_arrays())))
    assert [s.name for s in copy.snapshots] == ["b", "c"]
    for a, b in zip(pool.snapshots, copy.snapshots, strict=True):
        assert a.weights.keys() == b.weights.keys()
        for key in a.weights:
            np.testing.assert_array_equal(a.weights[key], b.weights[key])


def _savez(arrays):
    import io

    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    buffer.seek(0)
    return buffer


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"spec_weights": {"nobody": 1.0}}, "nobody"),
        ({"spec_weights": {"random": -1.0}}, "spec_weights"),
        ({"spec_weights": {}}, "spec_weights"),
        ({"snapshot_weight": -0.5}, "snapshot_weight"),
        ({"max_snapshots": 0}, "max_snapshots"),
    ],
)
def test_pool_bad_settings_are_clear_errors(kwargs, field):
    with pytest.raises(ValueError, match=field):
        OpponentPool("rang", **kwargs)
