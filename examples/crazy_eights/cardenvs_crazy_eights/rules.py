"""Rule-based Crazy Eights baselines (agents layer), acting from their seat's observation dict only.

- :class:`BasicAgent` (``rules_basic``): plays a random fitting card, an 8 only when nothing else
  fits, the drawn card whenever it fits, and names the suit it holds most of.
- :class:`StrongAgent` (``rules_strong``): scores every legal play by the hand it leaves and the
  top it leaves the next player: go out when possible; keep 8s (the one card that always plays)
  for when nothing else fits or for going out; keep as many suits in hand as it can (the chance to
  follow whatever suit comes back), then leave in force a suit it still holds; and leave the next
  player a suit and rank they are unlikely to hold (estimated from the cards not yet seen: not in
  its hand, not on the pile; a seat's public record of the suits it could not play on counts as
  void in them and in 8s), the more so as their hand shrinks. It names the suit it holds most of,
  and among equal ones the suit the next player is least likely to hold.

  Measured (README of this package): which fitting card is played matters little in this game;
  ``rules_strong`` wins slightly more often than ``rules_basic``, and both beat random clearly.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb
from typing import Any

import numpy as np

from cardenvs.agents.base import Agent
from cardenvs.cards import NUM_RANKS, NUM_SUITS

from .engine import EIGHT, NAME_SUIT, NAME_SUIT_OFFSET, NUM_CARDS
from .observation import decode_observation


@dataclass
class View:
    """The facts of one decision, decoded from an observation (seats relative: 0 = me)."""

    hand: list[int]  # card indices held
    top: int
    suit: int  # the suit in force
    phase: int
    legal: list[int]
    unseen: list[int]  # cards not in my hand nor on the pile: in other hands or the stock
    hand_sizes: list[int]  # by relative seat
    voids: list[int]  # by relative seat: 4-bit mask of the suits it could not play at its last such turns


def read_view(observation: dict[str, np.ndarray], num_players: int) -> View:
    """Decode an observation dict of a ``num_players`` game into a :class:`View`."""
    parts = decode_observation(observation["observation"])
    if len(parts["hand_sizes"]) != num_players:
        raise ValueError(f"observation of a {len(parts['hand_sizes'])}-player game, this agent was built for "
                         f"num_players={num_players}")
    legal = np.flatnonzero(observation["action_mask"]).tolist()
    if not legal:
        raise ValueError("no legal action in the mask: the agent was asked to act out of turn")
    hand = np.flatnonzero(parts["hand"] > 0.5).tolist()
    seen = (parts["hand"] > 0.5) | (parts["pile"] > 0.5) | (parts["top"] > 0.5)
    return View(hand=hand, top=int(np.argmax(parts["top"])), suit=int(np.argmax(parts["suit"])),
                phase=int(np.argmax(parts["phase"])), legal=legal, unseen=np.flatnonzero(~seen).tolist(),
                hand_sizes=np.rint(parts["hand_sizes"] * NUM_CARDS).astype(int).tolist(),
                voids=[int(sum(int(f > 0.5) << s for s, f in enumerate(parts["voids"][4 * i:4 * i + 4])))
                       for i in range(num_players)])


def is_eight(card: int) -> bool:
    return card % NUM_RANKS == EIGHT


def suit_counts(cards: list[int]) -> list[int]:
    """Cards per suit, 8s left out (they follow any suit anyway)."""
    counts = [0] * NUM_SUITS
    for card in cards:
        if not is_eight(card):
            counts[card // NUM_RANKS] += 1
    return counts


def answer_chance(suit: int, rank: int, hand_size: int, unseen: list[int], voids: int = 0) -> float:
    """Chance that a hand of ``hand_size`` unseen cards holds a card that goes on ``suit``/``rank``
    (the suit, the rank or an 8; hypergeometric over the unseen cards). ``voids``: the suits the hand is
    taken to lack (it could not play on them), 8s too then."""
    if voids:
        unseen = [c for c in unseen if not (voids >> (c // NUM_RANKS) & 1 or c % NUM_RANKS == EIGHT)]
    total = len(unseen)
    fits = sum(1 for c in unseen if c // NUM_RANKS == suit or c % NUM_RANKS in (rank, EIGHT))
    size = min(hand_size, total)
    if size <= 0:
        return 0.0
    return 1.0 - comb(total - fits, size) / comb(total, size)


def _best(scores: dict[int, float], rng: np.random.Generator) -> int:
    """The action of highest score; ties broken by the seeded RNG."""
    top = max(scores.values())
    best = [a for a, s in scores.items() if s >= top - 1e-9]
    return best[0] if len(best) == 1 else int(best[rng.integers(len(best))])


class BasicAgent(Agent):
    """``rules_basic``: a random fitting card, 8s last, the drawn card when it fits, the longest suit named."""

    name = "rules_basic"

    def __init__(self, seed: int | None = None, num_players: int = 4):
        super().__init__(seed)
        self.num_players = num_players

    def act(self, observation: dict[str, np.ndarray]) -> int:
        view = read_view(observation, self.num_players)
        if view.phase == NAME_SUIT:
            counts = suit_counts(view.hand)
            return _best({NAME_SUIT_OFFSET + s: counts[s] for s in range(NUM_SUITS)}, self.rng)
        scores = {a: (0.0 if a >= NUM_CARDS else 2.0 if not is_eight(a) else 1.0) for a in view.legal}
        return _best(scores, self.rng)


class StrongAgent(Agent):
    """``rules_strong``: one-ply evaluation of every legal play (see the module docstring); the weights are
    spec parameters, e.g. ``rules_strong:block=2``."""

    name = "rules_strong"

    def __init__(self, seed: int | None = None, num_players: int = 4, eight: float = 10.0, follow: float = 0.3,
                 block: float = 1.0):
        super().__init__(seed)
        self.num_players = num_players
        self.weights = {"eight": eight, "follow": follow, "block": block}

    def act(self, observation: dict[str, np.ndarray]) -> int:
        view = read_view(observation, self.num_players)
        if len(view.legal) == 1:
            return view.legal[0]
        if view.phase == NAME_SUIT:
            return _best({NAME_SUIT_OFFSET + s: self.suit_value(s, view.hand, view) for s in range(NUM_SUITS)},
                         self.rng)
        # after a draw: play the drawn card when it fits (a pass keeps a card for nothing)
        return _best({a: self.play_value(a, view) if a < NUM_CARDS else -1e9 for a in view.legal}, self.rng)

    def play_value(self, card: int, view: View) -> float:
        """Value of playing ``card`` (an 8 with the best suit to name after it)."""
        rest = [c for c in view.hand if c != card]
        if not rest:
            return 100.0  # out: the deal is won
        w = self.weights
        if is_eight(card):  # the card that always plays: kept for when nothing else does
            return -w["eight"] + max(self.suit_value(s, rest, view) for s in range(NUM_SUITS))
        suit, rank = card // NUM_RANKS, card % NUM_RANKS
        plain = [c for c in rest if not is_eight(c)]
        covered = len({c // NUM_RANKS for c in plain})  # suits still held: the chance to follow a new suit
        follows = sum(1 for c in plain if c // NUM_RANKS == suit)  # the suit left in force, still held
        return covered + w["follow"] * follows - self.block_penalty(suit, rank, view)

    def suit_value(self, suit: int, hand: list[int], view: View) -> float:
        """Value of leaving ``suit`` in force (after an 8) with ``hand`` held."""
        # the most cards of the suit first; the next player's chance to follow it only among equal suits
        return suit_counts(hand)[suit] - 0.1 * self.block_penalty(suit, EIGHT, view)

    def block_penalty(self, suit: int, rank: int, view: View) -> float:
        """The next player's chance to answer, weighted up as their hand shrinks."""
        follower = 1 % len(view.hand_sizes)
        size = view.hand_sizes[follower]
        urgency = 1.0 + 2.0 / max(size, 1)
        chance = answer_chance(suit, rank, size, view.unseen, view.voids[follower])
        return self.weights["block"] * urgency * chance * 0.5


def make_basic(seed: int | None = None, num_players: int = 4) -> BasicAgent:
    """Registry factory of ``rules_basic``."""
    return BasicAgent(seed=seed, num_players=num_players)


def make_strong(seed: int | None = None, num_players: int = 4, **weights: Any) -> StrongAgent:
    """Registry factory of ``rules_strong`` (weights as keyword arguments, see :class:`StrongAgent`)."""
    return StrongAgent(seed=seed, num_players=num_players, **weights)
