"""How search sees RING RANG: the public view of a seat, the sampler of the cards it cannot see
(:func:`ring_rang_view`, :func:`sample_ring_rang`), and :class:`RingRangRules`, the search rules the
PIMC / ISMCTS / oracle agents of :mod:`cardenvs.agents.search` play by (the spec's ``search`` part).

Hard constraints are the hand sizes, the suits a seat failed to follow (void), and knocked honours not
yet played (the knocker holds them). The chooser having chosen trump on its first 5 cards is only a soft
(Bayesian) hint, not a constraint: the sampler ignores it (every split of the chooser's 13 cards into
"first 5" and the rest is possible). Sampling is rejection (exact, uniform) for ``max_tries`` deals, then
an exact counting sampler over per-suit splits (also uniform), so it never fails.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from math import factorial
from typing import Any

import numpy as np

from cardenvs.core import canonical
from cardenvs.ring_rang.engine import (
    ACTION_TRUMP,
    HONOUR_RANKS,
    NUM_SEATS,
    NUM_TRICKS,
    PHASE_TRUMP,
    SUIT_BITS,
    RingRangGame,
    bits_to_cards,
)

ALL_CARDS = (1 << 52) - 1
SUIT_MASKS = tuple(SUIT_BITS << (13 * s) for s in range(4))


def _suits_mask(suits: int) -> int:
    """Card bitmask of the suits set in the 4-bit ``suits``."""
    return sum(SUIT_MASKS[s] for s in range(4) if suits >> s & 1)


@dataclass
class RingRangView:
    """What ``seat`` knows in a RING RANG round (see :func:`ring_rang_view`)."""

    seat: int
    skeleton: RingRangGame  # the game with every hidden card removed
    own_hand: int  # bitmask
    unknown: int  # bitmask of the cards the seat has not seen (other hands, or not dealt yet)
    hand_sizes: tuple[int, ...]  # cards each seat holds now
    voids: tuple[int, ...]  # per seat, 4-bit mask of the suits it has shown void in
    holds: tuple[int, ...]  # per seat, bitmask of cards it must hold (knocked honours not yet played)
    _tables: dict[Any, int] = field(default_factory=dict, repr=False, compare=False)

    def fingerprint(self) -> tuple[Any, ...]:
        """Everything the view contains, as plain data (equal views give equal fingerprints)."""
        return (self.seat, canonical(self.skeleton.to_json()), self.own_hand, self.unknown, self.hand_sizes,
                self.voids, self.holds)


def ring_rang_view(game: RingRangGame, seat: int) -> RingRangView:
    """The information set of ``seat``: own hand and the public record of the current round, nothing else."""
    if not 0 <= seat < NUM_SEATS:
        raise ValueError(f"seat must be 0..3, got {seat!r}")
    if game.over:
        raise ValueError("the game is over: there is nothing to sample")
    own = game.hands[seat]
    played_by = [0] * NUM_SEATS
    voids = [0] * NUM_SEATS
    tricks = [(leader, cards) for leader, cards, _w, _l in game.history]
    if game.trick_cards:
        tricks.append((game.leader, tuple(game.trick_cards)))
    for leader, cards in tricks:
        led = cards[0] // 13
        for i, card in enumerate(cards):
            player = (leader + i) & 3
            played_by[player] |= 1 << card
            if card // 13 != led:
                voids[player] |= 1 << led
    played = game.played
    holds = [0] * NUM_SEATS
    if game.phase == PHASE_TRUMP:
        sizes = [0] * NUM_SEATS
        sizes[game.chooser] = 5
    else:
        sizes = [NUM_TRICKS - bin(p).count("1") for p in played_by]
        for honour, knocker in enumerate(game.knockers):
            card = game.trump * 13 + HONOUR_RANKS[honour]
            if knocker >= 0 and knocker != seat and not played >> card & 1:
                holds[knocker] |= 1 << card
    if bin(own).count("1") != sizes[seat]:
        raise ValueError(f"seat {seat} holds {bin(own).count('1')} cards, the public record says {sizes[seat]}")
    skeleton = game.clone()
    skeleton.hands = [own if s == seat else 0 for s in range(NUM_SEATS)]
    skeleton.deck = []
    skeleton.decks = []
    skeleton.decks_used = 0
    skeleton.rng = np.random.default_rng(0)
    return RingRangView(
        seat=seat,
        skeleton=skeleton,
        own_hand=own,
        unknown=ALL_CARDS & ~own & ~played,
        hand_sizes=tuple(sizes),
        voids=tuple(voids),
        holds=tuple(holds),
    )


def sample_ring_rang(view: RingRangView, rng: random.Random, max_tries: int = 50) -> RingRangGame:
    """A game whose hidden cards are dealt uniformly at random among the deals consistent with ``view``."""
    world = view.skeleton.clone()
    world.rng = np.random.default_rng(rng.getrandbits(64))
    seat = view.seat
    if world.phase == PHASE_TRUMP:
        # Only the chooser has cards (5); the rest of the deck is not dealt yet.
        cards = bits_to_cards(view.unknown)
        rng.shuffle(cards)
        chooser = world.chooser
        first = bits_to_cards(view.own_hand) if seat == chooser else cards[:5]
        rest = cards if seat == chooser else cards[5:]
        if seat != chooser:
            world.hands[chooser] = sum(1 << c for c in first)
        world.deck = first + rest
        return world
    hands = _deal_ring_rang(view, rng, max_tries)
    world.hands = hands
    world.deck = _deck_from_round(world, hands)
    return world


def _deal_ring_rang(view: RingRangView, rng: random.Random, max_tries: int) -> list[int]:
    seat = view.seat
    hands = [view.holds[s] for s in range(NUM_SEATS)]
    hands[seat] = view.own_hand
    capacity = [view.hand_sizes[s] - bin(hands[s]).count("1") for s in range(NUM_SEATS)]
    capacity[seat] = 0
    free = view.unknown
    for held in view.holds:
        free &= ~held
    cards = bits_to_cards(free)
    if len(cards) != sum(capacity) or min(capacity) < 0:
        raise ValueError("inconsistent view: unseen cards do not match the hand sizes")
    forbidden = [_suits_mask(v) for v in view.voids]
    others = [s for s in range(NUM_SEATS) if s != seat]
    for _ in range(max_tries):
        rng.shuffle(cards)
        dealt = hands[:]
        start = 0
        ok = True
        for s in others:
            part = 0
            for card in cards[start : start + capacity[s]]:
                part |= 1 << card
            start += capacity[s]
            if part & forbidden[s]:
                ok = False
                break
            dealt[s] |= part
        if ok:
            return dealt
    return _deal_by_counting(view, hands, capacity, free, rng)


def _deal_by_counting(
    view: RingRangView, hands: list[int], capacity: list[int], free: int, rng: random.Random
) -> list[int]:
    """Exact uniform deal: choose how many cards of each suit each seat gets, weighted by the deal counts."""
    others = tuple(s for s in range(NUM_SEATS) if s != view.seat)
    suit_cards = [bits_to_cards(free & SUIT_MASKS[suit]) for suit in range(4)]
    allowed = [tuple(not view.voids[s] >> suit & 1 for s in others) for suit in range(4)]
    counter = _DealCounter(view, suit_cards, allowed)
    caps = tuple(capacity[s] for s in others)
    total = counter.count(0, caps)
    if total == 0:
        raise ValueError("inconsistent view: no deal agrees with the voids and hand sizes")
    hands = hands[:]
    for suit in range(4):
        options = [(split, counter.ways(suit, split, caps)) for split in counter.splits(suit, caps)]
        pick = rng.randrange(sum(w for _, w in options))
        split = options[-1][0]
        for option, weight in options:
            if pick < weight:
                split = option
                break
            pick -= weight
        cards = suit_cards[suit][:]
        rng.shuffle(cards)
        start = 0
        for s, take in zip(others, split, strict=True):
            for card in cards[start : start + take]:
                hands[s] |= 1 << card
            start += take
        caps = tuple(c - t for c, t in zip(caps, split, strict=True))
    return hands


class _DealCounter:
    """Counts the deals of the remaining suits into seats with given capacities (memoised per view)."""

    def __init__(self, view: RingRangView, suit_cards: list[list[int]], allowed: list[tuple[bool, ...]]):
        self.sizes = [len(c) for c in suit_cards]
        self.allowed = allowed
        self.memo = view._tables

    def splits(self, suit: int, caps: tuple[int, ...]) -> list[tuple[int, ...]]:
        n = self.sizes[suit]
        a, b, c = (caps[i] if self.allowed[suit][i] else 0 for i in range(3))
        out = []
        for x in range(min(n, a) + 1):
            for y in range(min(n - x, b) + 1):
                z = n - x - y
                if z <= c:
                    out.append((x, y, z))
        return out

    def ways(self, suit: int, split: tuple[int, ...], caps: tuple[int, ...]) -> int:
        n = self.sizes[suit]
        multinomial = factorial(n) // (factorial(split[0]) * factorial(split[1]) * factorial(split[2]))
        rest = tuple(c - t for c, t in zip(caps, split, strict=True))
        return multinomial * self.count(suit + 1, rest)

    def count(self, suit: int, caps: tuple[int, ...]) -> int:
        if suit == 4:
            return 1 if not any(caps) else 0
        key = (suit, caps)
        if key not in self.memo:
            self.memo[key] = sum(self.ways(suit, split, caps) for split in self.splits(suit, caps))
        return self.memo[key]


def count_ring_rang_deals(view: RingRangView) -> int:
    """How many deals of the unseen cards agree with ``view`` (play phase)."""
    seat = view.seat
    hands = [view.holds[s] for s in range(NUM_SEATS)]
    capacity = [view.hand_sizes[s] - bin(hands[s]).count("1") for s in range(NUM_SEATS)]
    capacity[seat] = 0
    free = view.unknown
    for held in view.holds:
        free &= ~held
    others = tuple(s for s in range(NUM_SEATS) if s != seat)
    suit_cards = [bits_to_cards(free & SUIT_MASKS[suit]) for suit in range(4)]
    allowed = [tuple(not view.voids[s] >> suit & 1 for s in others) for suit in range(4)]
    return _DealCounter(view, suit_cards, allowed).count(0, tuple(capacity[s] for s in others))


def _deck_from_round(world: RingRangGame, hands: list[int]) -> list[int]:
    """A deck that deals the sampled round (current hands plus the cards already played), for to_json only."""
    original = hands[:]
    for leader, cards, _w, _l in world.history:
        for i, card in enumerate(cards):
            original[(leader + i) & 3] |= 1 << card
    for i, card in enumerate(world.trick_cards):
        original[(world.leader + i) & 3] |= 1 << card
    taken = [bits_to_cards(h) for h in original]
    position = [0] * NUM_SEATS
    deck = []
    for offset in (0,) * 5 + (1,) * 5 + (2,) * 5 + (3,) * 5 + (0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3) * 2:
        s = (world.chooser + offset) & 3
        deck.append(taken[s][position[s]])
        position[s] += 1
    return deck



class RingRangRules:
    """How search sees RING RANG: views, worlds that end with the round, team round points."""

    game = "ring_rang"

    def view(self, game: RingRangGame, seat: int, memory: Any = None) -> RingRangView:
        return ring_rang_view(game, seat)

    @staticmethod
    def new_memory() -> None:
        """What the agent remembers beyond the public view: nothing (every card played is public)."""
        return None

    def sample(self, view: RingRangView, rng: random.Random) -> RingRangGame:
        return self.horizon(sample_ring_rang(view, rng))

    @staticmethod
    def horizon(world: RingRangGame) -> RingRangGame:
        """Make ``world`` (a clone) end with the round: search plays out the current round only."""
        world.episode = "round"
        world.stop_when_decided = True  # its points are certain once decided
        world.shaping = 0.0
        return world

    @staticmethod
    def rewards(world: RingRangGame) -> tuple[float, ...]:
        team, points = world.round_points()
        own = float(points)
        return (own, -own, own, -own) if team == 0 else (-own, own, -own, own)

    @staticmethod
    def random_rollout(world: RingRangGame, rng: random.Random) -> None:
        random_value = rng.random
        while not world.is_over():
            actions = world.legal_actions()
            world.step(actions[int(random_value() * len(actions))])

    @staticmethod
    def tricks_rollout(world: RingRangGame, rng: random.Random, explore: float = 0.1) -> None:
        """Every seat plays a plain trick-taking rule, a random legal move with probability ``explore``: win the
        trick with the lowest card that beats it unless the partner is winning it, else throw the lowest card
        (a plain suit before trump); lead a random card; never knock (a knock scores nothing); choose the
        longest suit of the first five cards as trump. Engine-level, about twice a random playout's time."""
        random_value = rng.random
        while not world.is_over():
            actions = world.legal_actions()
            if world.phase == PHASE_TRUMP:
                hand = world.hands[world.to_act]
                counts = [bin(hand & SUIT_MASKS[s]).count("1") for s in range(4)]
                world.step(ACTION_TRUMP + max(range(4), key=lambda s: (counts[s], random_value())))
                continue
            cards = [a for a in actions if a < 52]
            trick = world.trick_cards
            if not trick or random_value() < explore:
                world.step(cards[int(random_value() * len(cards))])
                continue
            trump = world.trump
            best = world.best_card
            best_suit = best // 13
            partner_wins = world.best_seat == (world.to_act ^ 2)
            if not partner_wins:
                winners = [c for c in cards if (c // 13 == best_suit and c > best)
                           or (c // 13 == trump and best_suit != trump)]
                if winners:  # the lowest winner; a plain card before a trump
                    world.step(min(winners, key=lambda c: (c // 13 == trump, c % 13)))
                    continue
            world.step(min(cards, key=lambda c: (c // 13 == trump, c % 13)))

    rollouts = ("random", "tricks")  # engine-level playouts, by name: the method ``<name>_rollout``
