"""Golden RING RANG playthroughs: a deck, the actions, the expected masks, observations and outcomes.

Regenerate (only after a deliberate rule or layout change) with
``RING_RANG_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/test_ring_rang_golden.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from pathlib import Path

import numpy as np
import pytest

from cardenvs import ring_rang_v0
from cardenvs.cards import CODES

GOLDEN = Path(__file__).parent / "golden"

CASES = {
    "ring_rang_round_knocks": {
        "kwargs": {"episode": "round"},
        "seed": 5,
        "options": {"deck": [CODES[c] for c in np.random.default_rng(1).permutation(52).tolist()], "chooser": 0},
        "policy_seed": 1,
    },
    "ring_rang_game_decided": {
        "kwargs": {"episode": "game", "stop_when_decided": True},
        "seed": 7,
        "options": {"decks": [[CODES[c] for c in np.random.default_rng(k).permutation(52).tolist()] for k in (2, 3)]},
        "policy_seed": 2,
    },
    "ring_rang_round_variants": {
        "kwargs": {"episode": "round", "signals": True, "declarations": True},
        "seed": 9,
        "options": {"chooser": 2},
        "policy_seed": 3,
    },
}


def digest(vector: np.ndarray) -> str:
    return hashlib.sha256(np.asarray(vector, np.float32).tobytes()).hexdigest()[:12]


def record(case: dict) -> dict:
    """Play the case with a seeded random policy and write down everything observable."""
    env = ring_rang_v0.env(**case["kwargs"])
    env.reset(seed=case["seed"], options=case["options"])
    pick = random.Random(case["policy_seed"])
    steps = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        if term or trunc:
            steps.append({"agent": agent, "reward": reward, "done": True})
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        action = legal[int(pick.random() * len(legal))]
        steps.append({"agent": agent, "legal": legal, "obs": digest(obs["observation"]), "action": action,
                      "reward": reward})
        env.step(action)
    raw = env.unwrapped
    return {
        "kwargs": case["kwargs"],
        "seed": case["seed"],
        "options": case["options"],
        "steps": steps,
        "scores": raw.game.scores,
        "rounds": [{k: v for k, v in r.items() if k != "history"} for r in raw.rounds],
        "history": raw.history,
    }


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_playthrough(name):
    path = GOLDEN / f"{name}.json"
    if os.environ.get("RING_RANG_REGEN_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(json.dumps(record(CASES[name]), separators=(",", ":")) + "\n")
    golden = json.loads(path.read_text())
    env = ring_rang_v0.env(**golden["kwargs"])
    env.reset(seed=golden["seed"], options=golden["options"])
    for number, step in enumerate(golden["steps"]):
        obs, reward, term, trunc, _ = env.last()
        where = f"{name} step {number}"
        assert env.agent_selection == step["agent"], where
        assert reward == step["reward"], where
        if step.get("done"):
            assert term or trunc, where
            env.step(None)
            continue
        assert np.flatnonzero(obs["action_mask"]).tolist() == step["legal"], where
        assert digest(obs["observation"]) == step["obs"], where
        env.step(step["action"])
    assert not env.agents
    raw = env.unwrapped
    assert raw.game.scores == golden["scores"]
    assert [{k: v for k, v in r.items() if k != "history"} for r in raw.rounds] == golden["rounds"]
    assert raw.history == golden["history"]
