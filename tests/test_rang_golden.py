"""Golden Rang playthroughs: given decks, recorded actions, expected masks, rewards and outcomes.

Regenerate (only after a deliberate rule change) with ``python tests/test_rang_golden.py``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from cardenvs import rang_v0
from cardenvs.rang.engine import DECK_54, DECK_108, arrange_deck

GOLDEN = Path(__file__).parent / "golden"


def _shuffled(cards, seed):
    cards = list(cards)
    random.Random(seed).shuffle(cards)
    return cards


def cases() -> dict[str, dict]:
    from cardenvs.cards import CODES

    scenario = arrange_deck({1: ["2C", "3C", "JK", "5C", "6C"], 0: ["9H", "TH", "JH", "QH", "KH"]}, "AD",
                            ["9S", "8D", "JK", "4S"])  # fmt: skip
    return {
        "rang_2p_deal": {"kwargs": {"num_players": 2, "episode": "deal"}, "seed": 1,
                         "options": {"deck": scenario}, "policy_seed": 0},
        "rang_4p_match": {"kwargs": {"num_players": 4}, "seed": 3,
                          "options": {"deck": [CODES[c] for c in _shuffled(DECK_54, 4)], "dealer": 2},
                          "policy_seed": 1},
        "rang_5p_match": {"kwargs": {"num_players": 5}, "seed": 5,
                          "options": {"decks": [[CODES[c] for c in _shuffled(DECK_54, 6)],
                                                [CODES[c] for c in _shuffled(DECK_108, 7)]]},
                          "policy_seed": 2},
    }  # fmt: skip


def record(case: dict) -> dict:
    env = rang_v0.env(**case["kwargs"])
    env.reset(seed=case["seed"], options=case["options"])
    rng = random.Random(case["policy_seed"])
    steps = []
    for agent in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        legal = np.flatnonzero(obs["action_mask"]).tolist()
        action = None if term or trunc else legal[rng.randrange(len(legal))]
        steps.append({"agent": agent, "legal": legal, "action": action, "reward": reward, "term": term,
                      "trunc": trunc})  # fmt: skip
        env.step(action)
    game = env.unwrapped.game
    return dict(case, steps=steps, totals=game.totals, deals=game.deal_number, went_out=game.went_out)


@pytest.mark.parametrize("name", sorted(cases()))
def test_golden_playthrough(name):
    golden = json.loads((GOLDEN / f"{name}.json").read_text())
    env = rang_v0.env(**golden["kwargs"])
    env.reset(seed=golden["seed"], options=golden["options"])
    steps = iter(golden["steps"])
    for agent in env.agent_iter():
        expected = next(steps)
        obs, reward, term, trunc, _ = env.last()
        assert agent == expected["agent"]
        assert np.flatnonzero(obs["action_mask"]).tolist() == expected["legal"]
        assert (reward, term, trunc) == (expected["reward"], expected["term"], expected["trunc"])
        env.step(expected["action"])
    assert next(steps, None) is None
    game = env.unwrapped.game
    assert (game.totals, game.deal_number, game.went_out) == (golden["totals"], golden["deals"], golden["went_out"])


if __name__ == "__main__":
    for name, case in cases().items():
        (GOLDEN / f"{name}.json").write_text(json.dumps(record(case), indent=None) + "\n")
        print("wrote", name)
