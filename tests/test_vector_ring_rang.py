"""The batched RING RANG env against the AEC env: same decks, same actions, same everything.

The differential test is what binds ``cardenvs.ring_rang.vector`` to the rules engine: masks,
observations (the whole AEC vector of the acting seat), rewards and episode ends must agree
at every step of thousands of rounds.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cardenvs import ring_rang_v0  # noqa: E402
from cardenvs.ring_rang.engine import ACTION_KNOCK  # noqa: E402
from cardenvs.ring_rang.vector import RingRangVectorEnv  # noqa: E402
from cardenvs.vector import benchmark_rows, random_legal_actions  # noqa: E402

MAX_ROUNDS = 39  # a game to 20 points ends within 19 + 19 + 1 rounds


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def random_decks(generator: torch.Generator, batch: int, rounds: int) -> torch.Tensor:
    return torch.rand(batch, rounds, 52, generator=generator).argsort(dim=2)


def run_differential(batch: int, episodes: int, *, episode: str, knocking: bool, seed: int) -> dict[str, int]:
    """Play ``episodes`` episodes per game in both envs with the same random legal actions.

    Round mode follows the batched env's automatic resets (the AEC env is reset with the new
    deck and chooser); game mode compares each game's first episode (given decks for every round).
    Returns counts of what was compared.
    """
    generator = torch.Generator().manual_seed(seed)
    rounds = MAX_ROUNDS if episode == "game" else 1
    decks = random_decks(generator, batch, rounds)
    choosers = torch.randint(0, 4, (batch,), generator=generator)
    venv = RingRangVectorEnv(batch, episode=episode, knocking=knocking, seed=seed + 1)
    obs, mask, info = venv.reset(decks=decks, choosers=choosers)
    aecs = []
    for b in range(batch):
        aec = ring_rang_v0.raw_env(episode=episode, knocking=knocking)
        aec.reset(seed=b, options={"decks": decks[b].tolist(), "chooser": int(choosers[b])})
        aecs.append(aec)
    finished = [0] * batch
    counts = {"decisions": 0, "episodes": 0, "knocks": 0, "slams": 0, "rounds": 0}
    while any(f < episodes for f in finished):
        actions = random_legal_actions(mask, generator)
        obs_np, mask_np, seat_np, actions_np = obs.numpy(), mask.numpy(), info["seat"].numpy(), actions.numpy()
        live = [b for b in range(batch) if finished[b] < episodes]
        for b in live:
            aec = aecs[b]
            agent = aec.agent_selection
            assert agent == f"player_{seat_np[b]}", (b, agent, seat_np[b])
            seen = aec.observe(agent)
            assert np.array_equal(seen["action_mask"].astype(bool), mask_np[b]), (b, "mask")
            if not np.array_equal(seen["observation"], obs_np[b]):
                diff = np.flatnonzero(seen["observation"] != obs_np[b])
                raise AssertionError(f"game {b}: observations differ at {diff.tolist()}")
        obs, mask, rewards, done, info = venv.step(actions)
        rewards_np, done_np = rewards.numpy(), done.numpy()
        for b in live:
            aec = aecs[b]
            rounds_before = len(aec.game.rounds)
            aec.step(int(actions_np[b]))
            counts["decisions"] += 1
            counts["knocks"] += int(actions_np[b] == ACTION_KNOCK)
            expected = [aec.rewards[f"player_{s}"] for s in range(4)]
            assert rewards_np[b].tolist() == expected, (b, rewards_np[b], expected)
            over = all(aec.terminations.values())
            assert bool(done_np[b]) == over, (b, "done")
            if len(aec.game.rounds) > rounds_before:
                counts["rounds"] += 1
                counts["slams"] += int(aec.game.rounds[-1]["points"] > 1)
            if over:
                finished[b] += 1
                counts["episodes"] += 1
                if episode == "round" and finished[b] < episodes:
                    aec.reset(seed=b, options={"deck": venv.deck[b].tolist(), "chooser": int(venv.chooser[b])})
    return counts


@pytest.mark.slow
def test_differential_round_mode():
    counts = run_differential(256, 8, episode="round", knocking=True, seed=1)
    assert counts["episodes"] == 2048
    assert counts["knocks"] > 0 and counts["slams"] > 0  # the rare rules were exercised


def test_differential_round_mode_without_knocking():
    counts = run_differential(64, 3, episode="round", knocking=False, seed=2)
    assert counts["episodes"] == 192 and counts["knocks"] == 0


@pytest.mark.slow
def test_differential_game_mode():
    counts = run_differential(16, 1, episode="game", knocking=True, seed=3)
    assert counts["episodes"] == 16 and counts["rounds"] > 16 * 10


@pytest.mark.slow
def test_differential_large():
    counts = run_differential(1024, 12, episode="round", knocking=True, seed=4)
    assert counts["episodes"] == 1024 * 12
    counts = run_differential(128, 1, episode="game", knocking=True, seed=5)
    assert counts["episodes"] == 128


def test_illegal_action_names_the_games_and_changes_nothing():
    venv = RingRangVectorEnv(8, seed=0)
    _, mask, _ = venv.reset()
    before = venv.state_dict()
    actions = random_legal_actions(mask, torch.Generator().manual_seed(0))
    actions[3] = 0  # nobody may play a card while trump is chosen
    actions[5] = 99
    with pytest.raises(ValueError, match=r"game 3: action 0.*game 5: action 99"):
        venv.step(actions)
    after = venv.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before if isinstance(before[k], torch.Tensor))
    with pytest.raises(ValueError, match="shape"):
        venv.step(actions[:4])
    with pytest.raises(ValueError, match="integers"):
        venv.step(actions.float())


def test_bad_arguments():
    with pytest.raises(ValueError, match="batch_size"):
        RingRangVectorEnv(0)
    with pytest.raises(ValueError, match="episode"):
        RingRangVectorEnv(2, episode="match")
    venv = RingRangVectorEnv(2, seed=0)
    with pytest.raises(ValueError, match="permutations"):
        venv.reset(decks=torch.zeros(2, 52, dtype=torch.int64))
    with pytest.raises(ValueError, match="shape"):
        venv.reset(decks=torch.arange(52).repeat(3, 1))
    with pytest.raises(ValueError, match="seats"):
        venv.reset(choosers=torch.tensor([0, 4]))
    with pytest.raises(RuntimeError, match="reset"):
        RingRangVectorEnv(2).step(torch.zeros(2, dtype=torch.int64))


def test_state_dict_round_trip_replays_the_same_games():
    venv = RingRangVectorEnv(32, episode="game", seed=7)
    _, mask, _ = venv.reset()
    generator = torch.Generator().manual_seed(1)
    for _ in range(150):
        _, mask, *_ = venv.step(random_legal_actions(mask, generator))
    snapshot = venv.state_dict()
    sampler_state = generator.get_state()

    def play(mask: torch.Tensor) -> list[tuple[torch.Tensor, ...]]:
        outputs = []
        for _ in range(100):
            outputs.append(venv.step(random_legal_actions(mask, generator))[:4])
            mask = outputs[-1][1]
        return outputs

    first = play(mask)
    venv.load_state_dict(snapshot)
    generator.set_state(sampler_state)
    again = play(mask)
    assert all(torch.equal(a, b) for x, y in zip(first, again, strict=True) for a, b in zip(x, y, strict=True))
    with pytest.raises(ValueError, match="settings"):
        RingRangVectorEnv(16, episode="game").load_state_dict(snapshot)


def test_seeded_resets_repeat_and_memory_is_reported():
    one, two = RingRangVectorEnv(16, seed=3), RingRangVectorEnv(16, seed=3)
    assert all(torch.equal(a, b) for a, b in zip(one.reset()[:2], two.reset()[:2], strict=True))
    per_game = one.memory_bytes_per_game()
    assert 0 < per_game and 65536 * per_game < 2**30  # B = 65,536 fits in well under 1 GiB


def test_benchmark_rows_shape():
    rows = benchmark_rows(0.05, [4])
    row = next(r for r in rows if r["game"] == "ring_rang")
    assert row["name"] == "RING RANG batched B=4" and row["kind"] == "batched"
    assert row["decisions"] % 4 == 0 and row["decisions"] > 0 and row["bytes_per_game"] > 0


@pytest.mark.slow
def test_benchmark_rows_split_over_processes():
    rows = benchmark_rows(0.05, [6], processes=2)
    row = next(r for r in rows if r["game"] == "ring_rang")
    assert "2 procs" in row["interface"]
    assert row["decisions"] % 3 == 0 and row["decisions"] > 0


def test_random_legal_actions_are_legal_and_uniform():
    """Each legal action of a row is picked with frequency 1/count (chi-square), illegal ones never."""
    generator = torch.Generator().manual_seed(5)
    rows = 20000
    mask = torch.zeros(rows, 57, dtype=torch.bool)
    mask[:, [0, 13, 51, 56]] = True  # four legal actions, the last column included
    mask[rows // 2:, 13] = False  # half the rows have three
    picks = random_legal_actions(mask, generator)
    assert bool(mask.gather(1, picks.unsqueeze(1)).all())
    for half, legal in ((picks[: rows // 2], [0, 13, 51, 56]), (picks[rows // 2:], [0, 51, 56])):
        observed = np.array([int((half == a).sum()) for a in legal], dtype=float)
        expected = len(half) / len(legal)
        chi_square = float(((observed - expected) ** 2 / expected).sum())
        assert chi_square < 16.3  # p = 0.001 for 3 degrees of freedom
    single = torch.zeros(3, 57, dtype=torch.bool)
    single[torch.arange(3), torch.tensor([0, 30, 56])] = True
    assert random_legal_actions(single, generator).tolist() == [0, 30, 56]
