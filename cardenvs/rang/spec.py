"""Rang declares itself: the one entry of the games table (:mod:`cardenvs.games`) for this folder."""

from __future__ import annotations

from typing import Any

import numpy as np

from cardenvs.games import GameSpec, Scoring, shuffled_codes
from cardenvs.rang.engine import DECK_54, DECK_108, POINTS_SCALE, deck_size_for

STYLES = ("blocker", "dumper", "escaper", "racer")  # the gauntlet (cardenvs/rang/gauntlet.py)


def random_options(rng: np.random.Generator, unit: str, num_players: int) -> dict[str, Any]:
    """One random deal (unit "deal") or match: its deck(s) and the dealer."""
    dealer = int(rng.integers(num_players))
    if unit == "deal":
        return {"deck": shuffled_codes(rng, DECK_108 if deck_size_for(num_players) == 108 else DECK_54),
                "dealer": dealer}
    # a match: 30 decks of each size (the deck shrinks to 54 cards when 4 players are left)
    return {"decks": [shuffled_codes(rng, deck) for deck in (DECK_108, DECK_54) for _ in range(30)], "dealer": dealer}


def won(reward: Any, episode: str) -> Any:
    """A deal is won by the seat that went out (0 points in hand: reward 0, the others' negative); a match
    by the last seat left (+1)."""
    return reward >= 0 if episode == "deal" else reward > 0


SPEC = GameSpec(
    name="rang",
    title="Rang",
    env_module="cardenvs.rang.env",
    env_name="rang_v0",
    gym_id="cardenvs/Rang-v0",
    players=(2, 10),
    episodes={"deal": "deal", "game": "match"},
    train_episode="deal",
    random_options=random_options,
    # a deal's reward is -(points left in hand) / POINTS_SCALE
    scoring=Scoring(won=won, points_scale={"deal": -POINTS_SCALE}, fewer_points_better=True,
                    points_meaning="points scored by the agent's seats (lower is better)",
                    rating_order="each episode's order: the winner first, then the other agents by points (fewer "
                                 "is better), so points lost when not going out count, while the win rate counts "
                                 "only going out"),
    agents={
        "rules_basic": "cardenvs.rang.rules:make_basic",
        "rules_strong": "cardenvs.rang.rules:make_strong",
        **{f"gauntlet_{style}": f"cardenvs.rang.gauntlet:make_{style}" for style in STYLES},
    },
    parts={
        "view": "cardenvs.rang.view:table_view",
        "painter": "cardenvs.rang.view:draw",
        "html": "cardenvs.rang.view:HTML",
        "text": "cardenvs.rang.text:RangText",
        "faces": "cardenvs.rang.faces:faces",
        "search": "cardenvs.rang.search:RangRules",
    },
    vector_env="cardenvs.rang.vector:RangVectorEnv",
    order=1,
    trained="cardenvs.agents.policies:rang.npz",
    protocols="cardenvs.train.protocols",
)
