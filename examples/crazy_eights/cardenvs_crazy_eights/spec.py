"""The game's entry in cardenvs's games table: ``SPEC``, found through the entry point group ``cardenvs.games``
(``crazy_eights = "cardenvs_crazy_eights.spec:SPEC"`` in this package's pyproject.toml).

Everything cardenvs needs to know about the game is declared here; every piece above the engine is named by
an import string, imported on first use, so listing the game costs nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cardenvs.games import GameSpec, shuffled_codes

from .engine import DECK

PACKAGE = "cardenvs_crazy_eights"


def random_options(rng: np.random.Generator, unit: str, num_players: int) -> dict[str, Any]:
    """The reset options of one random deal (a game of Crazy Eights is one deal, whatever the unit)."""
    return {"deck": shuffled_codes(rng, DECK), "dealer": int(rng.integers(num_players))}


SPEC = GameSpec(
    name="crazy_eights",
    title="Crazy Eights",
    aliases=("crazy-eights", "crazyeights", "crazy_eights_v0"),
    env_module=f"{PACKAGE}.env",
    vector_env="",  # no batched engine
    gym_id="cardenvs/CrazyEights-v0",
    players=(2, 4),
    partnerships=False,
    episodes={"deal": "deal", "game": "deal"},  # one deal is the whole game
    train_episode="deal",
    deal_points=1.0,  # a deal's reward: +1 to the winner, -1/(N-1) to the others
    random_options=random_options,
    agents={
        "random": "cardenvs.agents.base:RandomAgent",
        "rules_basic": f"{PACKAGE}.rules:make_basic",
        "rules_strong": f"{PACKAGE}.rules:make_strong",
    },
    parts={
        "view": f"{PACKAGE}.view:table_view",
        "search": f"{PACKAGE}.search:CrazyEightsRules",
        "text": f"{PACKAGE}.text:Text",
        "faces": f"{PACKAGE}.faces:faces",
    },
)
