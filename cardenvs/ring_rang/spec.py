"""RING RANG declares itself: the one entry of the games table (:mod:`cardenvs.games`) for this folder."""

from __future__ import annotations

from typing import Any

import numpy as np

from cardenvs.games import GameSpec, Scoring, shuffled_codes
from cardenvs.ring_rang.engine import NUM_SEATS, TARGET_SCORE

STYLES = ("hoarder", "lifter", "reader", "supporter")  # the gauntlet (cardenvs/ring_rang/gauntlet.py)


def random_options(rng: np.random.Generator, unit: str, num_players: int) -> dict[str, Any]:
    """One random round (unit "deal") or game: its decks and the first chooser."""
    # a game ends within 2 * TARGET_SCORE - 1 rounds (a round gives its winner at least 1 point)
    decks = [shuffled_codes(rng, range(52)) for _ in range(2 * TARGET_SCORE if unit == "game" else 1)]
    return {"decks": decks, "chooser": int(rng.integers(NUM_SEATS))}


SPEC = GameSpec(
    name="ring_rang",
    title="RING RANG",
    aliases=("ring-rang", "ringrang"),
    env_module="cardenvs.ring_rang.env",
    env_name="ring_rang_v0",
    gym_id="cardenvs/RingRang-v0",
    players=(4, 4),
    partnerships=True,
    episodes={"deal": "round", "game": "game"},
    train_episode="round",
    random_options=random_options,
    # a round's reward is its points (+ for the winners, - for the losers); a game's +1 / -1
    scoring=Scoring(points_meaning="signed round points of the agent's team",
                    rating_order="each episode's result: which agent's team won"),
    agents={
        "rules_basic": "cardenvs.ring_rang.rules:make_basic",
        "rules_strong": "cardenvs.ring_rang.rules:make_strong",
        **{f"gauntlet_{style}": f"cardenvs.ring_rang.gauntlet:make_{style}" for style in STYLES},
    },
    parts={
        "view": "cardenvs.ring_rang.view:table_view",
        "painter": "cardenvs.ring_rang.view:draw",
        "html": "cardenvs.ring_rang.view:HTML",
        "text": "cardenvs.ring_rang.text:RingRangText",
        "faces": "cardenvs.ring_rang.faces:faces",
        "search": "cardenvs.ring_rang.search:RingRangRules",
        "symmetries": "cardenvs.ring_rang.observation:suit_symmetries",
    },
    vector_env="cardenvs.ring_rang.vector:RingRangVectorEnv",
    order=0,
    trained="cardenvs.agents.policies:ring_rang.npz",
    protocols="cardenvs.train.protocols",
)
