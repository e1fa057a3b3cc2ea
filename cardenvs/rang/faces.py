"""How a Rang move looks on a `cardenvs serve` button: the spec's ``faces`` part."""

from __future__ import annotations

from typing import Any

from cardenvs.cards import CODES


def faces(game: Any, seat: int, action: int, label: str) -> tuple[list[str], str | None, str]:
    """A Rang move (a rank played or discarded): every card of the rank in the hand selects it."""
    from cardenvs.rang.engine import DISCARD_OFFSET

    codes = [CODES[card] for card in game.hands[seat][action % DISCARD_OFFSET]]
    text = ("discard" if action >= DISCARD_OFFSET else "") + (f" ({len(codes)})" * (len(codes) > 1))
    return codes, codes[0] if codes else None, text.strip()
