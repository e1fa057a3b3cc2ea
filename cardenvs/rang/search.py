"""How search sees Rang: the public view of a seat with its own-discard memory, the sampler of the
cards it cannot see (:func:`rang_view`, :func:`sample_rang`), and :class:`RangRules`, the search rules the
PIMC / ISMCTS / oracle agents of :mod:`cardenvs.agents.search` play by (the spec's ``search`` part).

The cards not in the observer's hand, not on the (public) play pile and not known to be its own discards
still lying on the discard pile are dealt uniformly to the other hands, the discard pile and the stock,
with their public sizes. Which own discards still lie on the discard pile is remembered by
:class:`RangDiscardMemory` (the agent saw its own discards; a stock rebuild sends them back into the
stock). Not used: the soft hint that a player who drew could not play at that moment.
"""

from __future__ import annotations

import random
import weakref
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from cardenvs.core import canonical
from cardenvs.rang.engine import DECK_54, DECK_108, DISCARD_OFFSET, KIND_POINTS, RangGame

RANG_REWARD_SCALE = 20.0
RANG_ROLLOUT_TURNS = 400


class RangDiscardMemory:
    """The observer's own discards that still lie on the discard pile (it saw them; others did not).

    Call :meth:`refresh` before each own decision and :meth:`record` with the chosen action.
    A stock rebuild puts the discard pile back into the stock; the memory is kept only while
    the public record *proves* that no rebuild happened since the last own decision (few enough
    turns to empty the stock, or, with a 54-card deck, the play pile still starting with the same
    two or more cards), and is dropped otherwise (then those cards count as unseen: never wrong,
    only less informed).
    """

    def __init__(self) -> None:
        self.cards: list[int] = []
        self._mark: tuple[Any, ...] | None = None
        # the game of the last own decision, by a weak reference: an ``id()`` is reused once the game is freed
        # (a position restored into a fresh env could then pass for the same game, with other discards)
        self._game: weakref.ref[RangGame] | None = None

    def clear(self) -> None:
        self.cards = []
        self._mark = None
        self._game = None

    def __getstate__(self) -> dict[str, Any]:
        return dict(self.__dict__, _game=None)  # a weak reference does not pickle: the copy forgets the game

    def refresh(self, game: RangGame) -> None:
        if self._mark is None:
            self.cards = []
            return
        deal, pile, stock, discard, turns = self._mark
        kept = (
            self._game is not None and self._game() is game
            and deal == game.deal_number
            and len(game.discard) >= discard
            and len(game.stock) <= stock
            and (
                3 * (game.turns - turns) <= stock
                or (game.deck_size == 54 and len(pile) >= 2 and tuple(game.pile[: len(pile)]) == pile)
            )
        )
        if not kept:
            self.cards = []

    def record(self, game: RangGame, seat: int, action: int) -> None:
        discarding = action >= DISCARD_OFFSET
        if discarding:
            self.cards.append(game.hands[seat][action - DISCARD_OFFSET][0])  # the engine discards the lowest copy
        discard_size = len(game.discard) + discarding
        self._mark = (game.deal_number, tuple(game.pile), len(game.stock), discard_size, game.turns)
        self._game = weakref.ref(game)


@dataclass
class RangView:
    """What ``seat`` knows in a Rang deal (see :func:`rang_view`)."""

    seat: int
    skeleton: RangGame
    unknown: tuple[int, ...]  # the unseen cards (a multiset, sorted)
    hand_sizes: tuple[int, ...]
    stock_size: int
    discard_size: int
    known_discards: tuple[int, ...]  # own discards known to lie on the discard pile

    def fingerprint(self) -> tuple[Any, ...]:
        return (self.seat, canonical(self.skeleton.to_json()), self.unknown, self.hand_sizes, self.stock_size,
                self.discard_size, self.known_discards)


def rang_view(game: RangGame, seat: int, known_discards: list[int] | tuple[int, ...] = ()) -> RangView:
    """The information set of ``seat``: own hand, the public record, and its own discards still on the pile."""
    if not 0 <= seat < game.num_players or not game.alive[seat]:
        raise ValueError(f"seat {seat!r} is not a player still in the game")
    if game.match_over:
        raise ValueError("the match is over: there is nothing to sample")
    deck = Counter(DECK_108 if game.deck_size == 108 else DECK_54)
    deck.subtract(game.hand_cards(seat))
    deck.subtract(game.pile)
    deck.subtract(known_discards)
    if any(v < 0 for v in deck.values()) or len(known_discards) > len(game.discard):
        raise ValueError("known_discards do not agree with the deck and the discard pile")
    skeleton = game.clone(rng=np.random.default_rng(0))
    n = game.num_players
    for other in range(n):
        if other != seat:
            skeleton.hands[other] = [[] for _ in skeleton.hands[other]]
            skeleton.hand_size[other] = 0
            skeleton.hand_bits[other] = 0
            skeleton.own_discards[other] = [0] * len(skeleton.own_discards[other])
    skeleton.stock = []
    skeleton.discard = []
    skeleton.given_decks = []
    skeleton.log = None
    return RangView(
        seat=seat,
        skeleton=skeleton,
        unknown=tuple(sorted(deck.elements())),
        hand_sizes=tuple(game.hand_size[s] if game.alive[s] else 0 for s in range(n)),
        stock_size=len(game.stock),
        discard_size=len(game.discard),
        known_discards=tuple(known_discards),
    )


def sample_rang(view: RangView, rng: random.Random) -> RangGame:
    """A game whose unseen cards are dealt uniformly to the other hands, the discard pile and the stock."""
    world = view.skeleton.clone(rng=np.random.default_rng(rng.getrandbits(64)))
    cards = list(view.unknown)
    rng.shuffle(cards)
    start = 0
    for other, size in enumerate(view.hand_sizes):
        if other == view.seat or not size:
            continue
        for card in cards[start : start + size]:
            world.give(other, card)
        start += size
    hidden_discards = view.discard_size - len(view.known_discards)
    world.discard = list(view.known_discards) + cards[start : start + hidden_discards]
    start += hidden_discards
    world.stock = cards[start:]
    if len(world.stock) != view.stock_size:
        raise ValueError("inconsistent view: unseen cards do not match the hand, stock and discard sizes")
    return world


class RangRules:
    """How search sees Rang: views with the own-discard memory, worlds that end with the deal."""

    game = "rang"

    def view(self, game: RangGame, seat: int, memory: RangDiscardMemory | None = None) -> RangView:
        return rang_view(game, seat, memory.cards if memory is not None else ())

    @staticmethod
    def new_memory() -> RangDiscardMemory:
        """Its own face-down discards, which only it saw."""
        return RangDiscardMemory()

    def sample(self, view: RangView, rng: random.Random) -> RangGame:
        return self.horizon(sample_rang(view, rng))

    @staticmethod
    def horizon(world: RangGame) -> RangGame:
        """Make ``world`` (a clone) end with the deal, within a turn cap."""
        world.single_deal = True
        world.max_turns_per_deal = world.turns + RANG_ROLLOUT_TURNS
        return world

    def __init__(self, win_bonus: float = 0.0) -> None:
        self.win_bonus = win_bonus  # added to the reward of the seat that went out (the harness's win)

    def rewards(self, world: RangGame) -> tuple[float, ...]:
        if world.truncated or world.last_points is None:
            points = [world.points_in_hand(s) if world.alive[s] else 0 for s in range(world.num_players)]
        else:
            points = world.last_points
        bonus = [self.win_bonus if s == world.went_out else 0.0 for s in range(world.num_players)]
        return tuple(-p / RANG_REWARD_SCALE + b for p, b in zip(points, bonus, strict=True))

    @staticmethod
    def shuffled_stock(world: RangGame, rng: random.Random) -> RangGame:
        """A copy of ``world`` whose stock is in a random order, with a fresh RNG for later rebuilds."""
        copy = world.clone(rng=np.random.default_rng(rng.getrandbits(64)))
        copy.stock.sort()  # the order it had cannot matter
        rng.shuffle(copy.stock)
        return copy

    @staticmethod
    def random_rollout(world: RangGame, rng: random.Random) -> None:
        random_value = rng.random
        while not world.is_over():
            actions = world.legal_actions()
            world.step(actions[int(random_value() * len(actions))])

    @staticmethod
    def costliest_rollout(world: RangGame, rng: random.Random) -> None:
        """Every seat plays (or discards) its costliest legal card, ties at random: hands shed their
        points first, as a points-minded player's do, where a random playout sheds them in any order."""
        random_value = rng.random
        while not world.is_over():
            actions = world.legal_actions()
            points = [KIND_POINTS[a % DISCARD_OFFSET] for a in actions]
            top = max(points)
            costliest = [a for a, p in zip(actions, points, strict=True) if p == top]
            world.step(costliest[int(random_value() * len(costliest))])

    rollouts = ("random", "costliest")  # engine-level playouts, by name: the method ``<name>_rollout``
