"""How cardenvs's search agents (PIMC, ISMCTS, the oracle) see Crazy Eights: the search rules.

The information set of a seat is its own hand and the public record: the pile (face up), the suit
in force, every hand's size and the stock's size. The cards it has not seen (the other hands and
the stock) are dealt uniformly into a copy of the game with those sizes; the soft hint that a
player who drew could not play then is not used. The engine's state is the whole world, so a world
is a clone with the hidden cards dealt anew and a fresh RNG for later stock rebuilds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from cardenvs.cards import NUM_RANKS, NUM_SUITS

from .engine import (
    AFTER_DRAW,
    DECK,
    EIGHT,
    EIGHTS,
    NAME_SUIT,
    NAME_SUIT_OFFSET,
    NUM_CARDS,
    SUIT_MASKS,
    CrazyEightsGame,
    bits_to_cards,
    cards_to_bits,
)

ROLLOUT_TURNS = 200  # a world's play-out stops (truncated, every reward 0) this many turns on


@dataclass
class View:
    """What ``seat`` knows (see the module docstring)."""

    seat: int
    skeleton: CrazyEightsGame  # the game with the other hands and the stock emptied
    unknown: tuple[int, ...]  # the cards it has not seen, ascending
    hand_sizes: tuple[int, ...]
    stock_size: int

    def fingerprint(self) -> tuple[Any, ...]:
        """Everything the view holds, as plain data (equal views give equal fingerprints)."""
        return (self.seat, repr(sorted(self.skeleton.to_json().items())), self.unknown, self.hand_sizes,
                self.stock_size)


def public_view(game: CrazyEightsGame, seat: int) -> View:
    """The information set of ``seat`` in ``game`` (nothing hidden is read into it)."""
    if game.is_over():
        raise ValueError("the deal is over: there is nothing to sample")
    if not 0 <= seat < game.num_players:
        raise ValueError(f"seat {seat!r} is not a seat of this {game.num_players}-player game")
    seen = game.hands[seat] | cards_to_bits(game.pile)
    skeleton = game.clone(rng=np.random.default_rng(0))
    skeleton.hands = [hand if other == seat else 0 for other, hand in enumerate(game.hands)]
    skeleton.stock = []
    if game.current != seat:
        skeleton.drawn = -1  # another seat's drawn card is theirs; the phase still says a card was drawn
    return View(seat=seat, skeleton=skeleton, unknown=tuple(c for c in DECK if not seen >> c & 1),
                hand_sizes=tuple(game.hand_size(s) for s in range(game.num_players)), stock_size=len(game.stock))


def sample(view: View, rng: random.Random) -> CrazyEightsGame:
    """A world: the unseen cards dealt uniformly to the other hands (their sizes) and the stock."""
    world = view.skeleton.clone(rng=np.random.default_rng(rng.getrandbits(64)))
    cards = list(view.unknown)
    rng.shuffle(cards)
    start = 0
    for other, size in enumerate(view.hand_sizes):
        if other != view.seat:
            world.hands[other] = cards_to_bits(cards[start:start + size])
            start += size
    world.stock = cards[start:]
    if world.drawn < 0 and world.phase == AFTER_DRAW:  # another seat drew: any card of its hand, alike
        world.drawn = rng.choice(bits_to_cards(world.hands[world.current]))
    if len(world.stock) != view.stock_size:
        raise ValueError("inconsistent view: the unseen cards do not fill the hands and the stock")
    return world


class CrazyEightsRules:
    """The search rules: views, worlds that end with the deal (within a turn cap), win/lose rewards."""

    game = "crazy_eights"
    rollouts = ("random", "basic")  # engine-level playouts, by name: the method ``<name>_rollout``

    def view(self, game: CrazyEightsGame, seat: int, memory: Any = None) -> View:
        return public_view(game, seat)

    @staticmethod
    def new_memory() -> None:
        """What a seat remembers beyond the public view: nothing (every card played stays face up)."""
        return None

    def sample(self, view: View, rng: random.Random) -> CrazyEightsGame:
        return self.horizon(sample(view, rng))

    @staticmethod
    def horizon(world: CrazyEightsGame) -> CrazyEightsGame:
        """Make ``world`` (a clone) stop within :data:`ROLLOUT_TURNS` turns."""
        world.max_turns = world.turns + ROLLOUT_TURNS
        return world

    @staticmethod
    def rewards(world: CrazyEightsGame) -> tuple[float, ...]:
        return world.rewards()

    @staticmethod
    def random_rollout(world: CrazyEightsGame, rng: random.Random) -> None:
        random_value = rng.random
        while not world.is_over():
            actions = world.legal_actions()
            world.step(actions[int(random_value() * len(actions))])

    @staticmethod
    def basic_rollout(world: CrazyEightsGame, rng: random.Random) -> None:
        """Every seat plays as ``rules_basic`` does, on the engine: a random fitting card, an 8 only when
        nothing else fits, the drawn card whenever it fits, the suit it holds most of named."""
        random_value = rng.random
        while not world.is_over():
            actions = world.legal_actions()
            if world.phase == NAME_SUIT:
                hand = world.hands[world.current] & ~EIGHTS
                counts = [(hand & SUIT_MASKS[s]).bit_count() for s in range(NUM_SUITS)]
                world.step(NAME_SUIT_OFFSET + counts.index(max(counts)))
                continue
            plain = [a for a in actions if a < NUM_CARDS and a % NUM_RANKS != EIGHT]
            choice = plain or [a for a in actions if a < NUM_CARDS] or actions
            world.step(choice[int(random_value() * len(choice))])

    @staticmethod
    def shuffled_stock(world: CrazyEightsGame, rng: random.Random) -> CrazyEightsGame:
        """A copy of ``world`` whose stock is in a random order (the oracle's ``sees=hands``)."""
        copy = world.clone(rng=np.random.default_rng(rng.getrandbits(64)))
        copy.stock = bits_to_cards(cards_to_bits(copy.stock))
        rng.shuffle(copy.stock)
        return copy
