"""Rang, the Serbian shedding game: the pure rules engine (see docs/rang.md)."""

from .engine import DealEnd, RangGame, arrange_deck, deck_size_for, parse_rang_deck

__all__ = ["DealEnd", "RangGame", "arrange_deck", "deck_size_for", "parse_rang_deck"]
