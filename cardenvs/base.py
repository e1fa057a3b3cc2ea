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
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

from .core import NOTHING, Outcome  # noqa: F401 (the adapters' hooks return them)


class IllegalActionError(ValueError):
    """An action that is malformed, out of range, or not legal now. The env is unchanged."""


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
        self._illegal_end: str | None = None  # the agent whose illegal action ended the episode (terminate mode)

    # ------------------------------------------------------------------ hooks
    def _make_game(self, rng: np.random.Generator, options: dict[str, Any]) -> Any:
        """Validate ``options`` and return a new game; must not change ``self``."""
        raise NotImplementedError

    # The game's own API (cardenvs.core.Game) by default; an adapter overrides a hook only to add to it.
    def _seat_to_act(self) -> int:
        return self.game.current_player()

    def _seats_in_play(self) -> list[int]:
        """Seats whose episode goes on (empty once the game is over); restore() checks the agents against it."""
        return self.game.seats_in_play()

    def _legal_mask(self) -> np.ndarray:
        """int8 mask of the legal actions of the seat to act."""
        return self.game.legal_mask()

    def _apply(self, action: int) -> Outcome:
        return self.game.step(action)

    def _observe(self, seat: int) -> np.ndarray:
        return self.game.observe(seat)

    def _render_text(self, observer: int | None = None) -> str:
        raise NotImplementedError

    def table_text(self, observer: int | str | None = None) -> str:
        """The ``"ansi"`` render; with ``observer`` (a seat, ``0``, or its agent, ``"player_0"``) the other
        seats' hands show as counts only, as the PNG and HTML views hide them, so a replay for one seat
        gives nothing away."""
        return self._render_text(self._seat_of(observer))

    def observation_text(self, agent: str) -> str:
        """What ``agent`` may know, as text (bots over the JSON-line protocol get it with every decision): the
        table as that seat sees it, unless the game words its own."""
        return self.table_text(agent)

    def _seat_of(self, who: int | str | None) -> int | None:
        """A seat given as its number or its agent's name; a ValueError naming both forms otherwise."""
        if who is None:
            return None
        if isinstance(who, str) and who in self._agent_seat:
            return self._agent_seat[who]
        if isinstance(who, (int, np.integer)) and not isinstance(who, bool) and 0 <= who < self.num_players:
            return int(who)
        raise ValueError(f"observer must be a seat 0..{self.num_players - 1} or one of {self.possible_agents}, "
                         f"got {who!r:.80}")

    def action_text(self, action: int, seat: int, observer: int | None = None) -> str:
        """The name of ``seat``'s ``action`` as ``observer`` may read it (None: everyone's view, the plain name).
        A game whose moves can be hidden (a card discarded face down) names such a move without its card."""
        return self.action_names[action]

    def _game_to_json(self) -> dict[str, Any]:
        """The game's part of :meth:`snapshot`: the engine's own JSON (the game API's ``to_json``)."""
        return self.game.to_json()

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
            # a Generator or BitGenerator would be shared with the caller (or not round-trip through JSON)
            if isinstance(seed, (float, str, bytes, np.random.Generator, np.random.BitGenerator)):
                raise ValueError(f"seed must be a non-negative int or None, got {seed!r:.80}")
            try:
                rng = np.random.default_rng(seed)
            except (TypeError, ValueError) as error:
                raise ValueError(f"seed must be a non-negative int or None, got {seed!r:.80}: {error}") from None
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
        self._illegal_end = None
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

    def _action_index(self, action: Any) -> int:
        """An int in the action space, or IllegalActionError: what is malformed whatever the mask says."""
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            if isinstance(action, np.ndarray) and action.shape == () and np.issubdtype(action.dtype, np.integer):
                action = int(action)
            else:
                raise IllegalActionError(
                    f"action must be an int, got {action!r:.80} ({type(action).__name__}); legal: {self._legal_text()}"
                )
        action = int(action)
        if not 0 <= action < len(self.action_names):
            raise IllegalActionError(
                f"illegal action {action} (out of range) for {self.agent_selection}; legal: {self._legal_text()}"
            )
        return action

    def _check_action(self, action: Any) -> int:
        action = self._action_index(action)
        if not self._mask[action]:
            raise IllegalActionError(f"illegal action {action} ({self.action_names[action]}) for "
                                     f"{self.agent_selection}; legal: {self._legal_text()}")  # fmt: skip
        return action

    def _end_by_illegal_action(self, agent: str, reward: float) -> None:
        """``illegal_action="terminate"``: every agent ends (PettingZoo's terminate-on-illegal), ``agent``
        gets ``reward``. Recorded in the snapshot, so that a penalised env restores."""
        self._cumulative_rewards[agent] = 0.0
        self.terminations = dict.fromkeys(self.agents, True)
        self.truncations = dict.fromkeys(self.agents, True)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self.rewards[agent] = float(reward)
        self._rewards_dirty = True
        self._accumulate_rewards()
        self._mask = self._zero_mask
        self._illegal_end = agent
        self._deads_step_first()

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
            "illegal_end": self._illegal_end,
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
            except (ValueError, RecursionError) as error:
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
            field = "illegal_end"
            illegal_end = snap.get("illegal_end")
            if illegal_end is not None and illegal_end not in self.possible_agents:
                raise ValueError(f"must be null or one of {self.possible_agents}, got {illegal_end!r:.80}")
        except KeyError as error:
            raise ValueError(f"malformed {name} snapshot: missing field {error.args[0]!r} (in {field!r})") from None
        except RecursionError:
            raise ValueError(f"malformed {name} snapshot: field {field!r} is nested too deeply") from None
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
            self._illegal_end = illegal_end
            live = [a for a in agents if not (self.terminations[a] or self.truncations[a])]
            in_play = [self.possible_agents[seat] for seat in self._seats_in_play()]
            if illegal_end is not None:  # ended by an illegal action: the game stopped where it was
                if live:
                    raise ValueError(f"illegal_end is set, but agents {live} are still live")
            elif sorted(live) != sorted(in_play):
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
    """The env's generator: PCG64 (``reset`` makes no other), its state exactly as ``snapshot`` wrote it."""
    if not isinstance(state, dict) or state.get("bit_generator") != "PCG64":
        raise ValueError(f"must be the state of a PCG64 bit generator, got {state!r:.80}")
    inner = state.get("state")
    words = [inner.get("state"), inner.get("inc")] if isinstance(inner, dict) else [None]
    if any(isinstance(w, bool) or not isinstance(w, int) or not 0 <= w < 2**128 for w in words):
        raise ValueError(f"PCG64 'state' must hold ints 'state' and 'inc' in 0..2**128-1, got {inner!r:.80}")
    bit_generator = np.random.PCG64()
    bit_generator.state = state
    if bit_generator.state != state:
        raise ValueError(f"not a PCG64 state as snapshot() writes it: {state!r:.80}")
    return np.random.Generator(bit_generator)


def _raw_attribute(name: str) -> property:
    """A read of ``name`` on the unwrapped env, straight from :class:`_OrderEnforcing` (no ``__getattr__`` chain);
    before ``reset()`` it raises the AttributeError PettingZoo's order enforcing raises."""

    def get(self: _OrderEnforcing) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)

    return property(get, doc=f"The unwrapped env's ``{name}`` (after reset).")


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order enforcing with every check it makes, reading the unwrapped env directly.

    The stock wrapper reaches ``agents``, ``agent_selection``, ``terminations`` ... through two
    ``__getattr__`` levels (eight such calls per decision of an ``agent_iter`` loop, a sixth of its time);
    here they are properties, ``last()`` and the iterator go to the unwrapped env once, and the checks
    (nothing before reset, a warning on a step with no agents, a step between two ``agent_iter`` turns)
    are the stock wrapper's. It also counts :meth:`CardGameEnv.restore` as a reset.
    """

    def __init__(self, env: AECEnv):
        super().__init__(env)
        self._raw: CardGameEnv = env.unwrapped

    agents = _raw_attribute("agents")
    agent_selection = _raw_attribute("agent_selection")
    rewards = _raw_attribute("rewards")
    terminations = _raw_attribute("terminations")
    truncations = _raw_attribute("truncations")
    infos = _raw_attribute("infos")

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self._raw.last(observe)

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    def step(self, action: Any) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        elif not self._raw.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
        else:
            self._has_updated = True
            self.env.step(action)

    def agent_iter(self, max_iter: int = 2**63) -> _AgentIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _AgentIterable(self, max_iter)

    def restore(self, snap: dict[str, Any] | str) -> None:
        self._raw.restore(snap)
        self._has_reset = True
        self._has_updated = True  # agent_iter() may follow at once, as after a reset


class _AgentIterable(AECOrderEnforcingIterable):
    def __iter__(self) -> _AgentIterator:
        return _AgentIterator(self.env, self.max_iter)


class _AgentIterator(AECOrderEnforcingIterator):
    """PettingZoo's order-enforcing iterator (stop with the agents or at ``max_iter``; a ``step()`` or
    ``reset()`` between two turns), reading the unwrapped env directly."""

    def __init__(self, env: _OrderEnforcing, max_iter: int):
        super().__init__(env, max_iter)
        self._wrapper = env
        self._raw = env._raw

    def __next__(self) -> str:
        raw = self._raw
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        wrapper = self._wrapper
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        wrapper._has_updated = False
        return raw.agent_selection


class _TerminateIllegal(wrappers.BaseWrapper):
    """PettingZoo's terminate-on-illegal, judged on the env's current mask (so a ``restore()`` counts).

    A masked action of the agent to act ends the episode with ``illegal_reward`` (see
    :meth:`CardGameEnv._end_by_illegal_action`); a malformed one (not an int, out of range, ``None``
    for a live agent) raises :class:`IllegalActionError` with nothing changed, as without this wrapper.
    """

    def __init__(self, env: CardGameEnv, illegal_reward: float):
        super().__init__(env)
        self._illegal_reward = float(illegal_reward)

    def step(self, action: Any) -> None:
        raw = self.env.unwrapped
        agent = raw.agent_selection
        if agent in raw.terminations and not (raw.terminations[agent] or raw.truncations[agent]):
            if not raw._mask[raw._action_index(action)]:
                EnvLogger.warn_on_illegal_move()
                raw._end_by_illegal_action(agent, self._illegal_reward)
                return
        self.env.step(action)


def wrap_env(raw: CardGameEnv, illegal_action: str = "raise", illegal_reward: float = -1.0) -> AECEnv:
    """The ``env()`` wrapping: order enforcing, and optionally terminate-on-illegal."""
    if illegal_action == "terminate":
        if not _is_finite_number(illegal_reward):
            raise ValueError(f"illegal_reward must be a finite number, got {illegal_reward!r}")
        env: AECEnv = _TerminateIllegal(raw, illegal_reward)
    elif illegal_action == "raise":
        env = raw
    else:
        raise ValueError(f"illegal_action must be 'raise' or 'terminate', got {illegal_action!r}")
    return _OrderEnforcing(env)
