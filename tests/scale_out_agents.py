"""Agents of tests/test_scale_out.py, named by import path (``scale_out_agents:Slow:pause=0.01``): the Ray
nodes import this module as they would a user's installed one (the test cluster gets tests/ on PYTHONPATH)."""

from __future__ import annotations

import time

import numpy as np


class Slow:
    """A random legal move after ``pause`` seconds; raises on the episode it is reset with ``fail_seed``."""

    def __init__(self, seed: int | None = None, pause: float = 0.0, fail_seed: int = -1):
        self.pause, self.fail_seed = pause, fail_seed
        self.rng = np.random.default_rng(seed)
        self.failing = False

    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)
        self.failing = seed == self.fail_seed

    def act(self, observation: dict) -> int:
        if self.failing:
            raise RuntimeError("the agent's own bug")
        time.sleep(self.pause)
        return int(self.rng.choice(np.flatnonzero(observation["action_mask"])))
