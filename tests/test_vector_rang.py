"""The batched Rang env against the reference AEC env: same decks, same actions, same game.

The differential test plays many deals side by side: one ``rang_v0.raw_env`` per batch row, driven with
the batched env's random legal actions, comparing at every decision the seat to act, the legal mask,
the observation vector (exactly), rewards and endings. The batched env's shuffles are routed through
its ``_permutation_hook`` so that they are the reference env's own numpy shuffles (a stock rebuild uses
``rng.permutation`` of the AEC env's seeded generator); whole deals, rebuilds included, are compared,
and auto-reset episodes are replayed in the AEC env from the deck the batched env dealt.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from cardenvs import rang_v0  # noqa: E402
from cardenvs.rang.engine import DECK_54, DECK_108, deck_size_for  # noqa: E402
from cardenvs.vector.common import random_legal_actions  # noqa: E402
from cardenvs.vector.rang import RangVectorEnv  # noqa: E402


class Mirror:
    """One AEC env per batch row, kept in step with the batched env."""

    def __init__(self, env: RangVectorEnv, seed: int):
        self.env = env
        self.n = env.num_players
        self.rng = np.random.default_rng(seed)
        self.aecs = [rang_v0.raw_env(num_players=self.n, episode=env.episode) for _ in range(env.batch_size)]
        self.shufflers: list[np.random.Generator | None] = [None] * env.batch_size  # each AEC env's own rng
        self.next_deck: dict[int, list[int]] = {}
        self.dealers: list[int] = []
        self.rebuilds = 0
        self.deals = 0  # episodes (deals, or matches) finished and compared
        self.small_deck_seen = False  # a 5+ player match went on with 54 cards
        env._permutation_hook = self.permutations

    def permutations(self, purpose: str, rows: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        out = np.zeros((len(rows), int(lengths.max())), np.int64)
        for j, (row, length) in enumerate(zip(rows.tolist(), lengths.tolist(), strict=True)):
            if purpose == "episode":  # a new episode: the test picks the deck and gives it to the AEC env too
                perm = self.rng.permutation(length)
                deck = DECK_108 if length == 108 else DECK_54
                self.next_deck[row] = [deck[i] for i in perm]
            else:  # "rebuild" and later deals of a match: the AEC env's generator decides
                perm = self.shufflers[row].permutation(length)
                self.rebuilds += purpose == "rebuild"
            out[j, :length] = perm
        return torch.from_numpy(out)

    def start(self, row: int, deck: list[int], dealer: int) -> None:
        seed = int(self.rng.integers(2**31))
        self.aecs[row].reset(seed=seed, options={"deck": deck, "dealer": dealer})
        self.shufflers[row] = np.random.default_rng(seed)  # what the AEC env's reset made of the seed

    def reset(self) -> tuple[torch.Tensor, torch.Tensor, dict]:
        size = deck_size_for(self.n)
        base = DECK_108 if size == 108 else DECK_54
        decks = [[base[i] for i in self.rng.permutation(size)] for _ in range(self.env.batch_size)]
        self.dealers = self.rng.integers(0, self.n, self.env.batch_size).tolist()
        result = self.env.reset(decks=torch.tensor(decks), dealers=torch.tensor(self.dealers))
        for row, deck in enumerate(decks):
            self.start(row, deck, self.dealers[row])
        return result

    def check_decision(self, obs: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor) -> None:
        obs_np, mask_np, seat_np = obs.numpy(), mask.numpy(), seat.numpy()
        self.small_deck_seen |= self.n >= 5 and bool((obs_np[:, 61] == 0).any())
        for row, aec in enumerate(self.aecs):
            agent = aec.agent_selection
            assert agent == f"player_{seat_np[row]}", (row, agent, seat_np[row])
            view = aec.observe(agent)
            assert np.array_equal(view["action_mask"].astype(bool), mask_np[row]), (row, view["action_mask"])
            if not np.array_equal(view["observation"], obs_np[row]):
                diff = np.flatnonzero(view["observation"] != obs_np[row])
                raise AssertionError(
                    f"row {row}: observation differs at {diff}: {view['observation'][diff]} vs {obs_np[row][diff]}"
                )

    def step(self, actions: torch.Tensor, rewards: torch.Tensor, done: torch.Tensor, truncated: torch.Tensor) -> None:
        for row, aec in enumerate(self.aecs):
            aec.step(int(actions[row]))
            got = [aec.rewards.get(f"player_{s}", 0.0) for s in range(self.n)]
            assert np.array_equal(np.array(got, np.float32), rewards[row].numpy()), (row, got, rewards[row])
            ended = not any(not (aec.terminations[a] or aec.truncations[a]) for a in aec.agents)
            assert bool(done[row]) == ended, (row, bool(done[row]), ended)
            if ended:
                assert bool(truncated[row]) == any(aec.truncations.values())
                self.deals += 1
                self.start(row, self.next_deck.pop(row), self.dealers[row])
                continue
            while aec.terminations[aec.agent_selection] or aec.truncations[aec.agent_selection]:
                aec.step(None)  # eliminated players leave (match)


def play_side_by_side(num_players: int, batch: int, steps: int, seed: int, episode: str = "deal") -> Mirror:
    env = RangVectorEnv(batch, num_players=num_players, episode=episode, seed=seed)
    mirror = Mirror(env, seed)
    obs, mask, info = mirror.reset()
    pick = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        mirror.check_decision(obs, mask, info["seat"])
        actions = random_legal_actions(mask, pick)
        obs, mask, rewards, done, info = env.step(actions)
        mirror.step(actions, rewards, done, info["truncated"])
    mirror.check_decision(obs, mask, info["seat"])
    return mirror


@pytest.mark.parametrize("num_players, batch, steps", [(2, 64, 400), (4, 64, 700), (7, 48, 700)])
def test_same_deals_as_the_aec_env(num_players: int, batch: int, steps: int) -> None:
    mirror = play_side_by_side(num_players, batch, steps, seed=num_players)
    assert mirror.deals >= 400  # about 2000 over the three player counts
    assert mirror.rebuilds > 0  # stock rebuilds were compared too


def test_same_matches_as_the_aec_env() -> None:
    mirror = play_side_by_side(5, 12, 800, seed=11, episode="match")
    assert mirror.deals >= 2  # whole matches, through eliminations and the switch from 108 to 54 cards
    assert mirror.small_deck_seen and mirror.rebuilds > 0


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [2, 3, 4, 5, 7, 10])
def test_same_deals_as_the_aec_env_long(num_players: int) -> None:
    mirror = play_side_by_side(num_players, 128, 2000, seed=100 + num_players)
    assert mirror.deals >= 2000


@pytest.mark.slow
@pytest.mark.parametrize("num_players", [2, 4, 6])
def test_same_matches_as_the_aec_env_long(num_players: int) -> None:
    play_side_by_side(num_players, 32, 3000, seed=200 + num_players, episode="match")
