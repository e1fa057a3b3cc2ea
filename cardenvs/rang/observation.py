"""Rang observations: the named parts of a seat's view, their encoder and decoder.

The one place the observation is defined (OpenSpiel's Observer): the PettingZoo env
(:mod:`cardenvs.rang_v0`), :meth:`RangGame.observe`, the rule agents, search and the batched env
(:mod:`cardenvs.rang.vector`) all use it. Seats are relative to the viewer (0 = self, 1 = the
next player clockwise, ...); the table of parts is in the env's docs.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from .engine import ELIMINATION_TOTAL, NUM_KINDS, RangGame

__all__ = ["FIXED_SIZE", "OBSERVATION_PARTS", "decode_observation", "observation_parts", "observe"]

FIXED_SIZE = 4 * NUM_KINDS + 3 + 3  # the parts before the per-seat ones (62)


def observation_parts(num_players: int) -> list[tuple[str, int]]:
    """The named parts of the observation, in order, for ``num_players`` players."""
    n = num_players
    return [
        ("hand", NUM_KINDS),
        ("top", NUM_KINDS),
        ("phase", 3),
        ("play_pile", NUM_KINDS),
        ("own_discards", NUM_KINDS),
        ("stock_size", 1),
        ("discard_size", 1),
        ("two_decks", 1),
        ("hand_sizes", n),
        ("totals", n),
        ("in_game", n),
        ("went_out", n),
        ("dealer", n),
    ]


OBSERVATION_PARTS = observation_parts(4)


def decode_observation(vec: np.ndarray) -> dict[str, np.ndarray]:
    """Split an observation vector into its named parts (the player count follows from its length)."""
    vec = np.asarray(vec)
    n, rest = divmod(len(vec) - FIXED_SIZE, 5)
    if rest or not 2 <= n <= 10:
        raise ValueError(f"not a Rang observation: length {len(vec)}")
    parts, start = {}, 0
    for name, size in observation_parts(n):
        parts[name] = vec[start : start + size]
        start += size
    return parts


@cache
def _orders(num_players: int) -> tuple[tuple[int, ...], ...]:
    """Per viewer, the absolute seats in relative order (the viewer first)."""
    n = num_players
    return tuple(tuple((seat + i) % n for i in range(n)) for seat in range(n))


def observe(g: RangGame, seat: int) -> np.ndarray:
    """The view of ``seat`` (float32, ``FIXED_SIZE + 5 * num_players`` entries)."""
    n = g.num_players
    v = [0.0] * (FIXED_SIZE + 5 * n)
    v[:NUM_KINDS] = [len(cards) * 0.125 for cards in g.hands[seat]]
    v[14 + g.top] = 1.0
    v[28 + g.phase] = 1.0
    v[31:45] = [c * 0.125 for c in g.pile_counts]
    v[45:59] = [c * 0.125 if c < 8 else 1.0 for c in g.own_discards[seat]]
    size = 1.0 / g.deck_size
    v[59] = len(g.stock) * size
    v[60] = len(g.discard) * size
    v[61] = 1.0 if g.deck_size == 108 else 0.0
    hand_size, totals, alive = g.hand_size, g.totals, g.alive
    base = FIXED_SIZE
    for i, other in enumerate(_orders(n)[seat]):
        v[base + i] = hand_size[other] * size if alive[other] else 0.0
        total = totals[other]
        v[base + n + i] = total * (1.0 / ELIMINATION_TOTAL) if total < ELIMINATION_TOTAL else 1.0
        v[base + 2 * n + i] = 1.0 if alive[other] else 0.0
    if g.out_seat >= 0:
        v[base + 3 * n + (g.out_seat - seat) % n] = 1.0
    v[base + 4 * n + (g.dealer - seat) % n] = 1.0
    return np.array(v, np.float32)
