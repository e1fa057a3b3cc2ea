"""How a Crazy Eights move looks on a button of ``cardenvs serve``."""

from __future__ import annotations

from typing import Any

from cardenvs.cards import CODES

from .engine import NUM_CARDS


def faces(game: Any, seat: int, action: int, label: str) -> tuple[list[str], str | None, str]:
    """``(codes, face, text)``: a card play is selected by a click on that card and shows it; naming a suit,
    drawing and passing are buttons with their label."""
    if action < NUM_CARDS:
        return [CODES[action]], CODES[action], ""
    return [], None, label
