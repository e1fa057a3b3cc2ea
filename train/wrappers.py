"""A gymnasium single-agent view of the AEC envs, for self-play training with MaskablePPO.

The learner plays one seat (RING RANG: both seats of one team, s and s+2, with
one shared policy); every other seat is played by an opponent drawn for the
episode from an :class:`OpponentPool` (registry specs such as ``"random"`` or
``"rules_strong"``, and frozen numpy snapshots of the learner). The learner's
seat is drawn anew every episode.

Reward crediting: ``step()`` returns the reward the learner's own seat earned
since the learner's previous decision, exactly as PettingZoo's AEC loop hands it
out (``env.last()`` per seat, banked each time the seat steps, plus what is
still pending), the final reward included. For a RING RANG team the two
partners' rewards are averaged, which counts the (shared) team reward once.
Observation: the env's observation vector; the legal-action mask is given by
:meth:`SelfPlayEnv.action_masks` (for MaskablePPO) and in ``info["action_mask"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from cardenvs.agents.base import Agent
from cardenvs.agents.registry import check_spec, make_agent
from cardenvs.games import GAMES, game_spec

MAX_DEALS_TO_FIRST_DECISION = 100  # reset() deals again while a deal ends before the learner decides


def make_aec_env(game: str, episode: str | None = None, num_players: int = 4, **env_kwargs: Any):
    """The AEC env of ``game`` with the training defaults (RING RANG rounds, Rang deals)."""
    if game not in GAMES:
        raise ValueError(f"game: expected one of {tuple(GAMES)}, got {game!r}")
    return game_spec(game).make_env(episode, num_players, **env_kwargs)


@dataclass
class Snapshot:
    """A frozen copy of the learner: the numpy actor weights of :mod:`cardenvs.agents.policy`."""

    name: str
    weights: dict[str, np.ndarray]


@dataclass
class OpponentPool:
    """The opponents drawn per episode: registry specs and learner snapshots, mixed by weight.

    ``spec_weights`` gives each registry spec its share; all snapshots together get
    ``snapshot_weight``, split evenly (the newest ``max_snapshots`` are kept).
    While there is no snapshot its share goes to the specs.
    """

    game: str
    spec_weights: dict[str, float] = field(default_factory=lambda: {"random": 1.0})
    snapshot_weight: float = 0.0
    max_snapshots: int = 10
    snapshots: list[Snapshot] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.spec_weights:
            raise ValueError("spec_weights: the pool needs at least one registry spec")
        for spec, weight in self.spec_weights.items():
            check_spec(spec, self.game)
            if not isinstance(weight, (int, float)) or isinstance(weight, bool) or weight < 0:
                raise ValueError(f"spec_weights[{spec!r}]: expected a number >= 0, got {weight!r}")
        if sum(self.spec_weights.values()) <= 0:
            raise ValueError("spec_weights: the weights must not all be 0")
        if self.snapshot_weight < 0:
            raise ValueError(f"snapshot_weight: expected a number >= 0, got {self.snapshot_weight!r}")
        if self.max_snapshots < 1:
            raise ValueError(f"max_snapshots: expected an int >= 1, got {self.max_snapshots!r}")

    def add_snapshot(self, snapshot: Snapshot) -> None:
        self.snapshots.append(snapshot)
        del self.snapshots[: max(0, len(self.snapshots) - self.max_snapshots)]

    def entries(self) -> tuple[list[str | Snapshot], np.ndarray]:
        """Every opponent with its probability of being drawn."""
        entries: list[str | Snapshot] = list(self.spec_weights)
        weights = [float(w) for w in self.spec_weights.values()]
        if self.snapshots and self.snapshot_weight > 0:
            entries += self.snapshots
            share = self.snapshot_weight / len(self.snapshots)
            weights += [share] * len(self.snapshots)
        probabilities = np.asarray(weights) / sum(weights)
        return entries, probabilities

    def draw(self, rng: np.random.Generator) -> str | Snapshot:
        entries, probabilities = self.entries()
        return entries[int(rng.choice(len(entries), p=probabilities))]

    # ------------------------------------------------------------ checkpoints
    def to_arrays(self) -> dict[str, np.ndarray]:
        """The snapshots as flat arrays for ``np.savez`` (the specs and weights live in the config)."""
        arrays: dict[str, np.ndarray] = {"names": np.array([s.name for s in self.snapshots], dtype=str)}
        for i, snapshot in enumerate(self.snapshots):
            for key, value in snapshot.weights.items():
                arrays[f"{i}/{key}"] = value
        return arrays

    def load_arrays(self, arrays: Any) -> None:
        names = [str(n) for n in arrays["names"]]
        snapshots = []
        for i, name in enumerate(names):
            prefix = f"{i}/"
            weights = {k[len(prefix) :]: np.asarray(arrays[k]) for k in arrays.files if k.startswith(prefix)}
            snapshots.append(Snapshot(name, weights))
        self.snapshots = snapshots


class SelfPlayEnv(gym.Env):
    """One learner (a seat, or a RING RANG team) against pool opponents, as a gymnasium env."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        game: str,
        pool: OpponentPool,
        episode: str | None = None,
        num_players: int = 4,
        learner_seat: int | None = None,
        seed: int | None = None,
        env_kwargs: dict[str, Any] | None = None,
    ):
        self.game = game
        self.pool = pool
        self.game_info = game_spec(game)
        self.num_players = self.game_info.players_or_fixed(num_players)
        self.aec = make_aec_env(game, episode, self.num_players, **(env_kwargs or {}))
        self.fixed_seat = None if learner_seat is None else self._check_seat(learner_seat)
        first = self.aec.possible_agents[0]
        box = self.aec.observation_space(first)["observation"]
        self.observation_space = gym.spaces.Box(box.low, box.high, box.shape, np.float32)
        self.action_space = gym.spaces.Discrete(int(self.aec.action_space(first).n))
        self.rng = np.random.default_rng(seed)
        self._agents: dict[tuple[str, int], Agent] = {}
        self._seats_of_learner: tuple[int, ...] = ()
        self._opponents: dict[int, Agent] = {}
        self._mask = np.zeros(self.action_space.n, np.int8)
        self._last_obs = np.zeros(self.observation_space.shape, np.float32)

    # --------------------------------------------------------------- the loop
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """A new episode: a learner seat, opponents from the pool, a fresh deal (``options`` go to the env)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        options = dict(options or {})
        seat = self.fixed_seat if self.fixed_seat is not None else int(self.rng.integers(self.num_players))
        if "learner_seat" in options:
            seat = self._check_seat(options.pop("learner_seat"), "option learner_seat")
        self._seats_of_learner = self.game_info.seats_of_side(seat, self.num_players)
        self._opponents = self._draw_opponents()
        self.opponent_names = sorted({a.name for a in self._opponents.values()})
        # A Rang deal can end before the learner decides (5+ players: four Jokers go out at once; a short
        # max_turns_per_deal): deal again, as a trainer cannot use an episode without a decision.
        for _ in range(MAX_DEALS_TO_FIRST_DECISION):
            self.aec.reset(seed=int(self.rng.integers(2**63)), options=options or None)
            self._banked = [0.0] * self.num_players
            self._credited = 0.0
            finished, _ = self._advance()
            if not finished:
                return self._last_obs.copy(), self._info()
        raise ValueError(f"no deal of {MAX_DEALS_TO_FIRST_DECISION} reached a decision of the learner (seat "
                         f"{seat}): raise max_turns_per_deal, or change the reset options {options}")

    def step(self, action: int):
        index = self._action_index(action)
        if not self._mask[index]:
            raise ValueError(f"illegal action {index} for the learner; legal: {np.flatnonzero(self._mask).tolist()}")
        self._step_aec(index)
        finished, truncated = self._advance()
        earned = self._team_total() - self._credited
        self._credited += earned
        return self._last_obs.copy(), earned, finished and not truncated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """The legal actions of the learner's current decision (bool, for MaskablePPO)."""
        return self._mask.astype(bool)

    # -------------------------------------------------------------- internals
    def _check_seat(self, seat: Any, name: str = "learner_seat") -> int:
        if isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)) or \
                not 0 <= seat < self.num_players:  # fmt: skip
            raise ValueError(f"{name}: expected a seat 0..{self.num_players - 1}, got {seat!r:.80}")
        return int(seat)

    def _action_index(self, action: Any) -> int:
        """``action`` as an index of the action space; ValueError (nothing done) if it is not one."""
        if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
            action = int(action)
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)) or \
                not 0 <= action < self.action_space.n:  # fmt: skip
            raise ValueError(f"action must be an int in 0..{self.action_space.n - 1}, got {action!r:.80}; "
                             f"legal: {np.flatnonzero(self._mask).tolist()}")
        return int(action)

    def _draw_opponents(self) -> dict[int, Agent]:
        """One pool draw per opposing team (RING RANG) or per other seat (Rang)."""
        opponents: dict[int, Agent] = {}
        others = [s for s in range(self.num_players) if s not in self._seats_of_learner]
        if self.game_info.partnerships:  # one draw for the whole opposing team
            entry = self.pool.draw(self.rng)
            choices = {s: entry for s in others}
        else:
            choices = {s: self.pool.draw(self.rng) for s in others}
        for seat, entry in choices.items():
            agent = self._agent_for(entry, seat)
            agent.reset(seed=int(self.rng.integers(2**63)))
            opponents[seat] = agent
        return opponents

    def _agent_for(self, entry: str | Snapshot, seat: int) -> Agent:
        if isinstance(entry, Snapshot):
            from cardenvs.agents.policy import PolicyAgent

            key = ("snapshot:" + entry.name, seat)
            agent = self._agents.get(key)
            if agent is None or agent.weights is not entry.weights:  # type: ignore[attr-defined]
                agent = self._agents[key] = PolicyAgent(weights=entry.weights, greedy=False)
                agent.name = "snapshot:" + entry.name
            return agent
        key = (entry, seat)
        if key not in self._agents:
            info = game_spec(self.game).env_info(self.num_players)
            self._agents[key] = make_agent(entry, self.game, seed=None, **info)
        return self._agents[key]

    def _advance(self) -> tuple[bool, bool]:
        """Play the AEC loop until a learner seat must decide or the episode is over.

        Returns (finished, truncated).
        """
        env = self.aec
        truncated = False
        while env.agents:
            name = env.agent_selection
            seat = int(name.rsplit("_", 1)[1])
            obs, _, termination, truncation, _ = env.last()
            if termination or truncation:
                truncated = truncated or truncation
                if seat in self._seats_of_learner:
                    self._last_obs = obs["observation"]
                self._step_aec(None)
                continue
            if seat in self._seats_of_learner:
                self._last_obs = obs["observation"]
                self._mask = obs["action_mask"]
                return False, False
            opponent = self._opponents[seat]
            if getattr(opponent, "needs_env", False):  # search agents read the env, as in the evaluation harness
                opponent.observe_env(env)
            self._step_aec(opponent.act(obs))
        self._mask = np.zeros_like(self._mask)
        return True, truncated

    def _step_aec(self, action: int | None) -> None:
        """Step the seat to act, banking first the reward ``env.last()`` gives it (the step clears it)."""
        name = self.aec.agent_selection
        self._banked[int(name.rsplit("_", 1)[1])] += self.aec.unwrapped._cumulative_rewards.get(name, 0.0)
        self.aec.step(action)

    def _team_total(self) -> float:
        """The learner's total reward so far: banked plus pending; a team's two seats averaged (counted once)."""
        pending = self.aec.unwrapped._cumulative_rewards
        totals = [
            self._banked[s] + pending.get(self.aec.possible_agents[s], 0.0) for s in self._seats_of_learner
        ]
        return float(sum(totals) / len(totals))

    def _info(self) -> dict[str, Any]:
        return {
            "action_mask": self._mask.copy(),
            "learner_seats": self._seats_of_learner,
            "opponents": self.opponent_names,
        }


def make_selfplay_envs(
    game: str,
    pool: OpponentPool,
    count: int,
    seed: int,
    episode: str | None = None,
    num_players: int = 4,
    env_kwargs: dict[str, Any] | None = None,
) -> Sequence[SelfPlayEnv]:
    """``count`` envs sharing one pool, seeded ``seed, seed+1, ...``."""
    return [
        SelfPlayEnv(game, pool, episode=episode, num_players=num_players, seed=seed + i, env_kwargs=env_kwargs)
        for i in range(count)
    ]
