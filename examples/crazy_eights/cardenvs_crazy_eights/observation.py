"""Crazy Eights observations: the named parts of a seat's view, their encoder and decoder (numpy only).

Seats are relative to the viewer (0 = self, 1 = the next player clockwise, ...). Everything in it is
the seat's own hand or public (the pile is face up; hand and stock sizes are counted in the open).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from .engine import MAX_PLAYERS, MIN_PLAYERS, NUM_CARDS, CrazyEightsGame

__all__ = ["FIXED_SIZE", "decode_observation", "observation_parts", "observe", "observation_size"]

FIXED_SIZE = 3 * NUM_CARDS + 4 + 3 + 1  # the parts before the per-seat one (164)
SCALE = 1.0 / NUM_CARDS


def observation_parts(num_players: int) -> list[tuple[str, int]]:
    """The named parts of the observation, in order."""
    return [
        ("hand", NUM_CARDS),  # 1 per card held
        ("top", NUM_CARDS),  # the top card of the pile, one-hot
        ("suit", 4),  # the suit in force (the named one after an 8), one-hot
        ("phase", 3),  # play, name a suit, play the drawn card or pass: one-hot
        ("pile", NUM_CARDS),  # 1 per card under the top (since the last stock rebuild)
        ("stock_size", 1),  # cards in the stock / 52
        ("hand_sizes", num_players),  # by relative seat / 52
        # by relative seat, 4 suit flags: the suits in force at the seat's turns where it could not play (it
        # drew, or passed with nothing to draw) since it last kept a drawn card (a pass after a draw keeps it:
        # then only that turn's suit is set); a public record of what the seat lacked
        ("voids", 4 * num_players),
    ]


def observation_size(num_players: int) -> int:
    return FIXED_SIZE + 5 * num_players


def decode_observation(vec: np.ndarray) -> dict[str, np.ndarray]:
    """Split an observation vector into its named parts (the player count follows from its length)."""
    vec = np.asarray(vec)
    n, rest = divmod(len(vec) - FIXED_SIZE, 5)
    if rest or not MIN_PLAYERS <= n <= MAX_PLAYERS:
        raise ValueError(f"not a Crazy Eights observation: length {len(vec)}")
    parts, start = {}, 0
    for name, size in observation_parts(n):
        parts[name] = vec[start:start + size]
        start += size
    return parts


@cache
def _orders(num_players: int) -> tuple[tuple[int, ...], ...]:
    """Per viewer, the absolute seats in relative order (the viewer first)."""
    return tuple(tuple((seat + i) % num_players for i in range(num_players)) for seat in range(num_players))


def _bits(mask: int) -> np.ndarray:
    """The 52 bits of a card mask, card 0 first."""
    return np.unpackbits(np.frombuffer(mask.to_bytes(7, "little"), np.uint8), bitorder="little")[:NUM_CARDS]


def observe(game: CrazyEightsGame, seat: int) -> np.ndarray:
    """The view of ``seat`` (float32, ``FIXED_SIZE + 5 * num_players`` entries)."""
    n = game.num_players
    v = np.zeros(FIXED_SIZE + 5 * n, np.float32)
    v[:NUM_CARDS] = _bits(game.hands[seat])
    v[NUM_CARDS + game.top] = 1.0
    v[2 * NUM_CARDS + game.suit] = 1.0
    v[2 * NUM_CARDS + 4 + game.phase] = 1.0
    base = 2 * NUM_CARDS + 7
    v[base + np.asarray(game.pile[:-1], np.int64)] = 1.0
    v[base + NUM_CARDS] = len(game.stock) * SCALE
    for i, other in enumerate(_orders(n)[seat]):
        v[FIXED_SIZE + i] = game.hands[other].bit_count() * SCALE
        voids = game.voids[other]
        for suit in range(4):
            v[FIXED_SIZE + n + 4 * i + suit] = voids >> suit & 1
    return v
