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
from cardenvs.rang.vector import RangVectorEnv  # noqa: E402
from cardenvs.vector.common import random_legal_actions  # noqa: E402


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
@pytest.mark.slow
def test_same_deals_as_the_aec_env(num_players: int, batch: int, steps: int) -> None:
    mirror = play_side_by_side(num_players, batch, steps, seed=num_players)
    assert mirror.deals >= 400  # about 2000 over the three player counts
    assert mirror.rebuilds > 0  # stock rebuilds were compared too


@pytest.mark.slow
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


def kind_totals(env: RangVectorEnv) -> torch.Tensor:
    """(B, 14) cards per kind over hands, stock, discard pile and play pile."""
    totals = env.hands.long().sum(1)
    width = env.stock.shape[1]
    for cards, length in ((env.stock, env.stock_len), (env.discard, env.discard_len), (env.pile, env.pile_len)):
        present = torch.arange(width) < length[:, None]
        totals += torch.nn.functional.one_hot(cards.long(), 14).mul(present[:, :, None]).sum(1)
    return totals


@pytest.mark.parametrize("num_players, episode", [(2, "deal"), (3, "match"), (5, "deal"), (6, "match"), (10, "deal")])
def test_random_play_keeps_every_card(num_players: int, episode: str) -> None:
    env = RangVectorEnv(32, num_players=num_players, episode=episode, seed=3)
    _, mask, _ = env.reset()
    pick = torch.Generator().manual_seed(3)
    finished = 0
    for _ in range(200):
        _, mask, rewards, done, info = env.step(random_legal_actions(mask, pick))
        finished += int(done.sum())
        per_kind = torch.tensor([4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2])
        expected = torch.where(env.big_deck[:, None], 2 * per_kind, per_kind)
        assert torch.equal(kind_totals(env), expected)
        assert torch.equal(env.hand_size, env.hands.long().sum(2))
        assert mask.any(1).all()  # every game has a decision to make
        assert torch.equal(info["seat"], env.current)
    assert finished > 0 or (episode == "match" and bool((env.totals > 0).any()))  # deals were scored


def test_seeded_runs_repeat_and_state_dict_restores() -> None:
    def run(env: RangVectorEnv, steps: int, seed: int) -> list[torch.Tensor]:
        pick = torch.Generator().manual_seed(seed)
        mask = env.legal_mask()
        out = []
        for _ in range(steps):
            obs, mask, rewards, done, _ = env.step(random_legal_actions(mask, pick))
            out += [obs, rewards, done]
        return out

    a = RangVectorEnv(32, num_players=4, seed=5)
    b = RangVectorEnv(32, num_players=4, seed=5)
    obs_a, _, _ = a.reset()
    obs_b, _, _ = b.reset()
    assert torch.equal(obs_a, obs_b)
    first = run(a, 80, 1)
    assert all(torch.equal(x, y) for x, y in zip(first, run(b, 80, 1), strict=True))
    saved = a.state_dict()
    later = run(a, 120, 2)  # auto-resets included: the generator state is part of the state
    c = RangVectorEnv(32, num_players=4, seed=99)
    c.load_state_dict(saved)
    assert all(torch.equal(x, y) for x, y in zip(later, run(c, 120, 2), strict=True))


def test_illegal_actions_name_the_games_and_change_nothing() -> None:
    env = RangVectorEnv(16, num_players=3, seed=1)
    _, mask, _ = env.reset()
    actions = mask.float().argmax(1)
    illegal = (~mask).float().argmax(1)
    actions[[3, 11]] = illegal[[3, 11]]
    before = env.state_dict()
    with pytest.raises(ValueError, match=r"3.*11|batch indices"):
        env.step(actions)
    after = env.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before if isinstance(before[k], torch.Tensor))
    with pytest.raises(ValueError):
        env.step(torch.full((16,), 28))
    with pytest.raises(ValueError):
        env.step(torch.zeros(15, dtype=torch.int64))


def test_bad_arguments_are_value_errors() -> None:
    with pytest.raises(ValueError, match="num_players"):
        RangVectorEnv(4, num_players=11)
    with pytest.raises(ValueError, match="episode"):
        RangVectorEnv(4, episode="game")
    env = RangVectorEnv(2, num_players=4, seed=0)
    deck = torch.tensor([DECK_54, DECK_54])
    bad = deck.clone()
    bad[1, 0] = 52  # three jokers
    with pytest.raises(ValueError, match="batch indices \\[1\\]"):
        env.reset(decks=bad)
    with pytest.raises(ValueError, match="shape"):
        env.reset(decks=deck[:, :50])
    with pytest.raises(ValueError, match="dealers"):
        env.reset(decks=deck, dealers=torch.tensor([0, 4]))
    with pytest.raises(RuntimeError):
        RangVectorEnv(2).step(torch.zeros(2, dtype=torch.int64))


def test_memory_per_game_is_small() -> None:
    for n in (4, 10):
        per_game = RangVectorEnv(8, num_players=n).memory_bytes_per_game()
        assert 0 < per_game * 65536 < 2**30  # state of B = 65,536 games well under 1 GiB
