"""Policy-guided PIMC (``"guided"``): a trained policy proposes, determinized search decides.

At each decision with a choice the policy (``prior``, the game's shipped one by default) scores the legal
moves from the seat's own observation; PIMC (:func:`cardenvs.agents.search.pimc_search`) then spends its
``iterations`` playouts on the policy's ``top`` moves only, and the move played maximises

    mean playout reward (round points) + weight * log(policy probability).

Pruning gives each remaining move more playouts for the same budget; the log-prior term breaks the ties that
playout noise leaves between close moves in the policy's favour. The search reads the seat's information
set only (the public view of :mod:`cardenvs.agents.search`), so it passes the same no-peeking tests.

    cardenvs eval --game ring_rang --agents guided pimc:iterations=500 --deals 1000 --workers 2
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from .search import PIMCAgent, _check_count, _is_number, pimc_search


class GuidedAgent(PIMCAgent):
    """PIMC over a policy's likeliest moves, its means blended with the policy's log-probabilities."""

    name = "guided"

    def __init__(self, game: str, seed: int | None = None, iterations: int = 500, worlds: int = 8, top: int = 3,
                 weight: float = 0.3, prior: str = "trained", ms: float | None = None, rollout: str = "random",
                 num_players: int | None = None):
        super().__init__(game, seed, iterations, worlds, ms, rollout, num_players)
        _check_count("top", top)
        if not (_is_number(weight) and weight >= 0):
            raise ValueError(f"weight must be a number >= 0, got {weight!r}")
        from .registry import make_agent

        self.prior = make_agent(prior, game, seed=seed, num_players=num_players or 4)
        if not hasattr(self.prior, "probabilities"):
            raise ValueError(f"prior={prior!r}: the prior must be a policy with move probabilities "
                             "(trained or policy:path=FILE)")
        self.top = top
        self.weight = float(weight)
        self._observation: dict[str, np.ndarray] | None = None

    def propose(self, observation: dict[str, np.ndarray], env: Any = None) -> int:
        self._observation = observation
        return super().propose(observation, env)

    def choose(self, view: Any, legal: list[int], rng: random.Random) -> int:
        observation = self._observation
        assert observation is not None
        probabilities = self.prior.probabilities(observation["observation"], observation["action_mask"])
        candidates = sorted(legal, key=lambda a: -probabilities[a])[: self.top]
        if len(candidates) == 1:
            return candidates[0]
        means = self.means(view, candidates, rng)
        self.last_values = means
        return max(means, key=lambda a: (means[a] + self.weight * math.log(max(probabilities[a], 1e-12)),
                                         -candidates.index(a)))

    def means(self, view: Any, candidates: list[int], rng: random.Random) -> dict[int, float]:
        """What each candidate is worth to the seat: PIMC's mean playout reward, in the game's reward units."""
        return pimc_search(self.rules, view, candidates, rng, self.rollout, self.iterations, self.worlds, self.ms)[1]


def make_guided(game: str, seed: int | None = None, **params: Any) -> GuidedAgent:
    return GuidedAgent(game, seed=seed, **params)
