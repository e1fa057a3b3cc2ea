"""The game's entry in cardenvs's games table: ``SPEC``, found through the entry point group ``cardenvs.games``
(``crazy_eights = "cardenvs_crazy_eights.spec:SPEC"`` in this package's pyproject.toml).

Everything cardenvs needs to know about the game is declared here; every piece above the engine is named by
an import string, imported on first use, so listing the game costs nothing. What it does not declare, it
does not have: no batched engine (``vector_env``), no gauntlet, no shipped trained policy, no painter or HTML
of its own (cardenvs draws the view's base schema).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cardenvs.games import GameSpec, Scoring, shuffled_codes

from .engine import DECK

PACKAGE = "cardenvs_crazy_eights"


def random_options(rng: np.random.Generator, unit: str, num_players: int) -> dict[str, Any]:
    """The reset options of one random deal (a game of Crazy Eights is one deal, whatever the unit)."""
    return {"deck": shuffled_codes(rng, DECK), "dealer": int(rng.integers(num_players))}


SPEC = GameSpec(
    name="crazy_eights",
    title="Crazy Eights",
    env_module=f"{PACKAGE}.env",
    env_name="crazy_eights_v0",
    gym_id="cardenvs/CrazyEights-v0",
    players=(2, 4),
    episodes={"deal": "deal", "game": "deal"},  # one deal is the whole game
    train_episode="deal",
    random_options=random_options,
    aliases=("crazy-eights", "crazyeights"),
    # a deal's reward: +1 to the seat that went out, -1/(N-1) to every other; a positive reward is a win
    scoring=Scoring(points_meaning="the deal's reward of the agent's seats: +1 for a win, -1/(N-1) for a loss",
                    rating_order="each episode's result: the seat that went out first, the others tied"),
    agents={
        "rules_basic": f"{PACKAGE}.rules:make_basic",
        "rules_strong": f"{PACKAGE}.rules:make_strong",
    },
    protocols=f"{PACKAGE}.protocols",  # cardenvs benchmark --game crazy_eights
    parts={
        "view": f"{PACKAGE}.view:table_view",
        "text": f"{PACKAGE}.text:Text",
        "faces": f"{PACKAGE}.faces:faces",
        "search": f"{PACKAGE}.search:CrazyEightsRules",
    },
)
