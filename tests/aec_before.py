"""The AEC loop as ``env()`` ran it before issue 36, frozen as the benchmark's reference.

``cardenvs bench`` times today's ``env()`` against this in the same run, so the speed-up of the
leaner loop is a ratio on one machine at one moment. What changed, and is reproduced here:

- the wrapping: PettingZoo's stock ``OrderEnforcingWrapper``, whose ``__getattr__`` chain served
  ``agents``, ``agent_selection``, ``terminations`` ... (eight such reads per decision);
- RING RANG's legal mask set by a fancy index (``mask[legal_actions] = 1``);
- RING RANG's observer updating the four views one by one.

The rules engines, the observation values and every check are the same as today's. Rang's reference runs
today's raw env (its encoder writes the hand counts in one slice now, the same values), so its ratio
understates the change a little.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo.utils import wrappers

from cardenvs import rang_v0, ring_rang_v0
from cardenvs.ring_rang import observation as ring_rang_observation
from cardenvs.ring_rang.engine import RingRangGame


class _PerViewObserver(ring_rang_observation.Observer):
    """The observer's update of a card played, one view at a time (as before issue 36)."""

    def _play(self, game: RingRangGame, seat: int, card: int, turned: bool, trick_done: bool) -> None:
        o = ring_rang_observation
        self.views[seat][o.HAND + card] = 0.0
        if trick_done:
            for viewer, obs in enumerate(self.views):
                obs[o.PLAYED + ((seat - viewer) & 3) * 52 + card] = 1.0
                if turned:
                    obs[o.TURNED + card] = 1.0
                obs[o.LEADER : o.LEADER + 4] = 0.0
                obs[o.CURRENT : o.CURRENT + 208] = 0.0
                o._write_trick_counters(obs, viewer, game)
            return
        first = len(game.trick_cards) == 1
        for viewer, obs in enumerate(self.views):
            rel = (seat - viewer) & 3
            obs[o.PLAYED + rel * 52 + card] = 1.0
            obs[o.CURRENT + rel * 52 + card] = 1.0
            if first:
                obs[o.LEADER + rel] = 1.0
            if turned:
                obs[o.TURNED + card] = 1.0


class _RingRangBefore(ring_rang_v0.raw_env):
    def __init__(self, **kwargs: Any):
        super().__init__(**kwargs)
        self._observer = _PerViewObserver()

    def _legal_mask(self) -> np.ndarray:
        mask = np.zeros(self.game.num_actions, np.int8)
        mask[self.game.legal_actions()] = 1
        return mask


def ring_rang_env() -> wrappers.OrderEnforcingWrapper:
    """RING RANG's ``env()`` as it was: the stock order enforcing around the per-view observer."""
    return wrappers.OrderEnforcingWrapper(_RingRangBefore())


def rang_env(num_players: int = 4) -> wrappers.OrderEnforcingWrapper:
    """Rang's ``env()`` as it was wrapped: the stock order enforcing around today's raw env."""
    return wrappers.OrderEnforcingWrapper(rang_v0.raw_env(num_players=num_players))
