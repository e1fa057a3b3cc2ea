"""The JSON view of a Crazy Eights table (cardenvs's base view schema), for render, replay and serve.

``observer=None`` shows every hand; ``observer=seat`` shows that seat's hand only (the others as
``None`` with their count). The stock is never shown, only counted.
"""

from __future__ import annotations

from typing import Any

from cardenvs.cards import CODES, SUITS

from .engine import AFTER_DRAW, PHASE_NAMES, SUIT_NAMES, CrazyEightsGame, result_text


def table_view(game: CrazyEightsGame, observer: int | None = None) -> dict[str, Any]:
    """What the table shows ``observer`` (None: everyone's cards)."""
    seats = []
    for seat in range(game.num_players):
        note = "dealer" if seat == game.dealer else ""
        if seat == game.current and game.phase == AFTER_DRAW and not game.over:
            note = (note + ", " if note else "") + "drew a card"
        seats.append({
            "name": f"player_{seat}",
            "cards": [CODES[c] for c in game.hand_cards(seat)] if observer in (None, seat) else None,
            "count": game.hand_size(seat),
            "to_act": seat == game.current and not game.over,
            "note": note,
        })
    return {
        "game": "crazy_eights",
        "title": f"Crazy Eights, {game.num_players} players - turn {game.turns}",
        "phase": "over" if game.over else PHASE_NAMES[game.phase],
        "result": result_text(game) if game.over else None,
        "seats": seats,
        "center": [CODES[game.top]],
        "facts": [f"suit in force: {SUIT_NAMES[game.suit]} ({SUITS[game.suit]})",
                  f"stock: {len(game.stock)} cards", f"under the top card: {len(game.pile) - 1} cards"],
    }
