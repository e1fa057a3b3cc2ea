"""The AEC adapter shared by both games: what holds for every env lives here once.

A game module supplies a pure rules engine and a subclass of :class:`CardGameEnv`
that implements the small hooks below (make a game, whose turn, the legal mask,
apply an action, observe a seat, render, snapshot). This class does the
PettingZoo bookkeeping: agent selection, rewards credited to the seat that
earned them, terminations and removal of finished agents, the checking of
actions (a clear :class:`IllegalActionError` with nothing changed), seeding,
and JSON snapshots.
"""

from __future__ import annotations

import copy
import json
from typing import Any, ClassVar, NamedTuple

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers


class IllegalActionError(ValueError):
    """An action that is malformed, out of range, or not legal now. The env is unchanged."""


class Outcome(NamedTuple):
    """What one engine step reports to the adapter.

    rewards: per seat, the reward earned by this step (None when all zero).
    finished: seats whose episode ends with this step (eliminated, or all at game end).
    truncated: the episode was cut short (turn limit): every live seat is truncated.
    """

    rewards: tuple[float, ...] | None = None
    finished: tuple[int, ...] = ()
    truncated: bool = False


NOTHING = Outcome()


class CardGameEnv(AECEnv):
    """Base class of the cardenvs AEC envs (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "is_parallelizable": False}
    action_names: ClassVar[tuple[str, ...]] = ()
    observation_size: int = 0

    def __init__(self, num_players: int, render_mode: str | None = None):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.render_mode = render_mode
        self.num_players = num_players
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self._agent_seat = {agent: i for i, agent in enumerate(self.possible_agents)}
        num_actions = len(self.action_names)
        self.action_spaces = {agent: spaces.Discrete(num_actions) for agent in self.possible_agents}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (self.observation_size,), np.float32),
                "action_mask": spaces.Box(0, 1, (num_actions,), np.int8),
            }
        )
        self.observation_spaces = {agent: obs_space for agent in self.possible_agents}
        self._zero_mask = np.zeros(num_actions, np.int8)
        self._rng: np.random.Generator | None = None
        self.game: Any = None
        self._mask: np.ndarray = self._zero_mask
        self._rewards_dirty = False

    # ------------------------------------------------------------------ hooks
    def _make_game(self, rng: np.random.Generator, options: dict[str, Any]) -> Any:
        """Validate ``options`` and return a new game; must not change ``self``."""
        raise NotImplementedError

    def _seat_to_act(self) -> int:
        raise NotImplementedError

    def _seats_in_play(self) -> list[int]:
        """Seats whose episode goes on (empty once the game is over); restore() checks the agents against it."""
        raise NotImplementedError

    def _legal_mask(self) -> np.ndarray:
        """int8 mask of the legal actions of the seat to act."""
        raise NotImplementedError

    def _apply(self, action: int) -> Outcome:
        raise NotImplementedError

    def _observe(self, seat: int) -> np.ndarray:
        raise NotImplementedError

    def _render_text(self) -> str:
        raise NotImplementedError

    def _game_to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    def _game_from_json(self, data: dict[str, Any]) -> Any:
        raise NotImplementedError

    # ------------------------------------------------------------ gymnasium
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------- the loop
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        if seed is not None or self._rng is None:
            if isinstance(seed, (float, str, bytes)):
                raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
            try:
                rng = np.random.default_rng(seed)
            except (TypeError, ValueError) as error:
                raise ValueError(f"seed must be a non-negative int or None, got {seed!r}: {error}") from None
        else:
            rng = copy.deepcopy(self._rng)
        game = self._make_game(rng, dict(options or {}))  # raises before anything changes
        self._rng = rng
        self.game = game
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: {} for agent in self.agents}
        self._rewards_dirty = False
        self._skip_agent_selection = None
        self.agent_selection = self.possible_agents[self._seat_to_act()]
        self._mask = self._legal_mask()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._agent_seat[agent]
        live = (
            agent == self.agent_selection
            and agent in self.terminations
            and not (self.terminations[agent] or self.truncations[agent])
        )
        return {
            "observation": self._observe(seat),
            "action_mask": self._mask.copy() if live else self._zero_mask.copy(),
        }

    def legal_actions(self) -> list[int]:
        """The legal actions of the agent to act (empty when it must step None)."""
        agent = self.agent_selection
        if agent not in self.terminations or self.terminations[agent] or self.truncations[agent]:
            return []
        return np.flatnonzero(self._mask).tolist()

    def _check_action(self, action: Any) -> int:
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
                action = int(action)
            else:
                raise IllegalActionError(
                    f"action must be an int, got {action!r} ({type(action).__name__}); legal: {self._legal_text()}"
                )
        action = int(action)
        if not 0 <= action < len(self._mask) or not self._mask[action]:
            name = self.action_names[action] if 0 <= action < len(self.action_names) else "out of range"
            raise IllegalActionError(
                f"illegal action {action} ({name}) for {self.agent_selection}; legal: {self._legal_text()}"
            )
        return action

    def _legal_text(self) -> str:
        return ", ".join(f"{a}={self.action_names[a]}" for a in np.flatnonzero(self._mask))

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if agent not in self.terminations:
            raise IllegalActionError("step() after the episode is over (every agent has left): call reset()")
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        action = self._check_action(action)
        self._cumulative_rewards[agent] = 0.0
        outcome = self._apply(action)
        if self._rewards_dirty:
            for name in self.agents:
                self.rewards[name] = 0.0
            self._rewards_dirty = False
        if outcome is NOTHING:
            self.agent_selection = self.possible_agents[self._seat_to_act()]
            self._mask = self._legal_mask()
            return
        if outcome.rewards is not None:
            names = self.possible_agents
            for seat, reward in enumerate(outcome.rewards):
                if reward and names[seat] in self.rewards:
                    self.rewards[names[seat]] = float(reward)
            self._rewards_dirty = True
            self._accumulate_rewards()
        for seat in outcome.finished:
            name = self.possible_agents[seat]
            if name in self.terminations:
                self.terminations[name] = True
        if outcome.truncated:
            for name in self.agents:
                if not self.terminations[name]:
                    self.truncations[name] = True
        live = [a for a in self.agents if not (self.terminations[a] or self.truncations[a])]
        if live:
            self.agent_selection = self.possible_agents[self._seat_to_act()]
            self._mask = self._legal_mask()
        else:
            self._mask = self._zero_mask
        self._deads_step_first()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        text = self._render_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # ------------------------------------------------------------ snapshots
    def snapshot(self) -> dict[str, Any]:
        """A JSON-serialisable dict of the whole env (game, AEC bookkeeping, RNG)."""
        if self.game is None:
            raise RuntimeError("snapshot() before reset()")
        return {
            "env": self.metadata["name"],
            "game": self._game_to_json(),
            "agents": list(self.agents),
            "agent_selection": self.agent_selection,
            "skip_agent_selection": getattr(self, "_skip_agent_selection", None),
            "rewards": dict(self.rewards),
            "cumulative_rewards": dict(self._cumulative_rewards),
            "terminations": dict(self.terminations),
            "truncations": dict(self.truncations),
            "rewards_dirty": self._rewards_dirty,
            "rng": _rng_to_json(self._rng),
        }

    def restore(self, snap: dict[str, Any] | str) -> None:
        """Restore a :meth:`snapshot` (the dict or its JSON text).

        A malformed snapshot raises ValueError naming the field and leaves the env unchanged.
        """
        name = self.metadata["name"]
        if isinstance(snap, (str, bytes)):
            try:
                snap = json.loads(snap)
            except ValueError as error:
                raise ValueError(f"{name} snapshot is not valid JSON: {error}") from None
        if not isinstance(snap, dict) or snap.get("env") != name:
            raise ValueError(f"not a {name} snapshot")
        field = "game"
        try:
            game = self._game_from_json(snap["game"])
            field = "rng"
            rng = _rng_from_json(snap["rng"])
            field = "agents"
            agents = snap["agents"]
            if not isinstance(agents, list) or any(a not in self._agent_seat for a in agents):
                raise ValueError(f"must be a list of names among {self.possible_agents}, got {agents!r}")
            if len(set(agents)) != len(agents):
                raise ValueError(f"has duplicates: {agents!r}")
            fields = {}
            for field in ("rewards", "cumulative_rewards", "terminations", "truncations"):
                values = snap[field]
                if not isinstance(values, dict):
                    raise ValueError(f"must be a dict by agent, got {type(values).__name__}")
                flags = field in ("terminations", "truncations")
                for agent in agents:
                    value = values[agent]
                    ok = isinstance(value, bool) if flags else _is_finite_number(value)
                    if not ok:
                        raise ValueError(f"{agent}: must be a {'bool' if flags else 'finite number'}, got {value!r}")
                fields[field] = {a: (values[a] if flags else float(values[a])) for a in agents}
            field = "agent_selection"
            selection = snap["agent_selection"]
            if selection not in (agents or self.possible_agents):
                raise ValueError(f"{selection!r} is not one of the agents {agents}")
            field = "skip_agent_selection"
            skip = snap.get("skip_agent_selection")
            if skip is not None and skip not in self.possible_agents:
                raise ValueError(f"{skip!r} is not one of {self.possible_agents}")
            field = "rewards_dirty"
            dirty = snap.get("rewards_dirty", True)
            if not isinstance(dirty, bool):
                raise ValueError(f"must be a bool, got {dirty!r}")
        except KeyError as error:
            raise ValueError(f"malformed {name} snapshot: missing field {error.args[0]!r} (in {field!r})") from None
        except (TypeError, ValueError, AttributeError, IndexError, OverflowError) as error:
            detail = str(error) if str(error).startswith(field) else f"field {field!r}: {error}"
            raise ValueError(f"malformed {name} snapshot: {detail}") from None
        saved = {key: copy.copy(v) if isinstance(v, (dict, list)) else v for key, v in vars(self).items()}
        try:
            self.game = game
            self._rng = rng
            self.agents = list(agents)
            self.rewards = fields["rewards"]
            self._cumulative_rewards = fields["cumulative_rewards"]
            self.terminations = fields["terminations"]
            self.truncations = fields["truncations"]
            self.infos = {a: {} for a in agents}
            self.agent_selection = selection
            self._skip_agent_selection = skip
            self._rewards_dirty = dirty
            live = [a for a in agents if not (self.terminations[a] or self.truncations[a])]
            in_play = [self.possible_agents[seat] for seat in self._seats_in_play()]
            if sorted(live) != sorted(in_play):
                raise ValueError(f"the live agents {live} (agents, terminations, truncations) are not "
                                 f"the players still in the game {in_play}")  # fmt: skip
            self._mask = self._legal_mask() if live else self._zero_mask
            if selection in live and (selection != self.possible_agents[self._seat_to_act()] or not self._mask.any()):
                raise ValueError(f"agent_selection {selection!r} is not the game's player to act, or has no action")
            self._restored()
        except Exception as error:
            self.__dict__.clear()
            self.__dict__.update(saved)
            if isinstance(error, ValueError):
                raise ValueError(f"malformed {name} snapshot: {error}") from None
            raise ValueError(f"malformed {name} snapshot: inconsistent state ({error!r})") from None

    def _restored(self) -> None:
        """Hook: finish a restore (caches, the engine's RNG). Raising rolls the restore back."""


def _is_finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and bool(np.isfinite(value))


def _rng_to_json(rng: np.random.Generator | None) -> Any:
    return None if rng is None else rng.bit_generator.state


def _rng_from_json(state: Any) -> np.random.Generator:
    if not isinstance(state, dict):
        raise ValueError(f"must be a bit generator state dict, got {type(state).__name__}")
    kind = getattr(np.random, str(state.get("bit_generator")), None)
    if not (isinstance(kind, type) and issubclass(kind, np.random.BitGenerator)):
        raise ValueError(f"unknown bit_generator {state.get('bit_generator')!r}")
    bit_generator = kind()
    bit_generator.state = state
    return np.random.Generator(bit_generator)


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order enforcing, which also counts :meth:`CardGameEnv.restore` as a reset."""

    def restore(self, snap: dict[str, Any] | str) -> None:
        self.unwrapped.restore(snap)
        self._has_reset = True
        self._has_updated = True  # agent_iter() may follow at once, as after a reset


def wrap_env(raw: CardGameEnv, illegal_action: str = "raise", illegal_reward: float = -1.0) -> AECEnv:
    """The ``env()`` wrapping: order enforcing, and optionally PettingZoo's terminate-on-illegal."""
    if illegal_action == "terminate":
        env: AECEnv = wrappers.TerminateIllegalWrapper(raw, illegal_reward=illegal_reward)
    elif illegal_action == "raise":
        env = raw
    else:
        raise ValueError(f"illegal_action must be 'raise' or 'terminate', got {illegal_action!r}")
    return _OrderEnforcing(env)
