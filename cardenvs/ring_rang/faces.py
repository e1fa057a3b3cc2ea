"""How a RING RANG move looks on a `cardenvs serve` button: the spec's ``faces`` part."""

from __future__ import annotations

from typing import Any

from cardenvs.cards import CODES


def faces(game: Any, seat: int, action: int, label: str) -> tuple[list[str], str | None, str]:
    """A RING RANG move's hand cards that select it, the card on its button and the caption beside it."""
    from cardenvs.ring_rang.engine import ACTION_DECLARE, ACTION_TURNED

    if action < 52:
        return [CODES[action]], CODES[action], ""
    if ACTION_TURNED <= action < ACTION_DECLARE:
        return [], CODES[action - ACTION_TURNED], "turned"
    return [], None, label
