"""RING RANG: the pure rules engine (see :mod:`cardenvs.ring_rang.engine`)."""

from cardenvs.ring_rang.engine import RingRangGame, deck_for_hands, draw_chooser

__all__ = ["RingRangGame", "deck_for_hands", "draw_chooser"]
