"""The one agent interface used everywhere: baselines, trained policies, search, a human.

An agent sees only what its seat sees: the PettingZoo observation dict
(``{"observation": ..., "action_mask": ...}``) and returns a legal action.
Randomness comes from the seed given to :meth:`Agent.reset`, so a line-up
replays exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Agent:
    """Base class: override :meth:`act`; :meth:`reset` is called at the start of every episode."""

    name = "agent"
    needs_env = False  # True: the harness calls observe_env(env) before each act (search agents)

    def __init__(self, seed: int | None = None, **_: Any):
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Start an episode; a seed makes the agent's random choices reproducible."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def get_state(self) -> dict[str, Any]:
        """JSON data of what the agent carries between decisions (its RNG; subclasses add their memory).

        With :meth:`set_state` a trainer's checkpoint resumes the agent exactly, without pickling it.
        """
        return {"rng": self.rng.bit_generator.state}

    def set_state(self, state: dict[str, Any]) -> None:
        """Take back a :meth:`get_state` (ValueError if it is not one)."""
        rng = np.random.default_rng()
        try:
            rng.bit_generator.state = state["rng"]
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"agent {self.name}: not an agent state: {error!r:.200}") from None
        self.rng = rng

    def observe_env(self, env: Any) -> None:
        """Called before :meth:`act` when ``needs_env`` is set: the env being played (to be read, not changed)."""

    def act(self, observation: dict[str, np.ndarray]) -> int:
        raise NotImplementedError

    def close(self) -> None:
        """Free what the agent holds outside Python (a bot's process); the harness calls it when done."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class RandomAgent(Agent):
    """Uniformly random legal action: the floor of every ladder."""

    name = "random"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        legal = np.flatnonzero(observation["action_mask"])
        if legal.size == 0:
            raise ValueError("no legal action in the mask: the agent was asked to act out of turn")
        return int(legal[self.rng.integers(legal.size)])
