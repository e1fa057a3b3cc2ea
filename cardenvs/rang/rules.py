"""Rule-based Rang baselines, written from how good players play.

Both agents see only their seat's observation dict (decoded with
:func:`cardenvs.rang.observation.decode_observation`); the rules themselves (what may
follow what, what a card costs) come from the engine's tables, not restated here.

- :class:`GreedyRangAgent` (``rules_basic``): sheds points. Plays the costliest
  playable card, picks the costliest free card after a Joker, discards the
  costliest card.
- :class:`StrongRangAgent` (``rules_strong``): scores every legal action by the
  hand it leaves and the top card it leaves for the next player, the way a
  careful player thinks:

  * go out whenever possible, and when there is a choice, on the card the next
    player is least likely to answer;
  * count tempo, not cards: a Joker plus its free card leave the hand in one
    play, so a held Joker is as good as a play already made;
  * keep Aces and Jokers as escapes (playable on anything: the way out of a dead
    hand and the answer to a going-out), the more so when the hand is badly
    connected or the previous player is about to go out;
  * keep rank chains: prefer hands whose cards follow many possible top cards;
  * shed costly cards (they count against you when somebody else goes out);
  * leave the next player, above all one close to going out, without a legal
    answer. Their chance to answer is estimated from the public counts: cards
    not seen (deck minus play pile, own hand and own discards) and their hand size;
  * after a Joker, pick the free card with all of the above (it is the one
    card that can be chosen freely: dump an isolated or costly card on a top
    that blocks the next player, or go out with it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cardenvs.agents.base import Agent
from cardenvs.rang.engine import (
    ACE_KIND,
    BIT_KINDS,
    DISCARD,
    DISCARD_OFFSET,
    JOKER_KIND,
    KIND_POINTS,
    NUM_KINDS,
    PLAYABLE_ON,
)
from cardenvs.rang.observation import decode_observation

ESCAPES = (ACE_KIND, JOKER_KIND)
RANK_KINDS = range(ACE_KIND + 1)  # every kind a top card can be except the Joker


@dataclass
class RangView:
    """The public facts of one decision, decoded from an observation (seats relative: 0 = me)."""

    hand: list[int]  # own cards per kind
    top: int  # kind of the top card of the play pile
    phase: int  # engine phase: PLAY, PLAY_AFTER_JOKER or DISCARD
    legal: list[int]  # legal actions
    unseen: list[int]  # per kind, cards I have not seen (in other hands, stock or others' discards)
    hand_sizes: list[int]  # per relative seat
    in_game: list[bool]  # per relative seat
    went_out: int  # relative seat that went out and awaits an answer, -1 if none

    @property
    def next_seat(self) -> int:
        """The next player still in (who plays on the card I leave)."""
        return next(i for i in range(1, len(self.in_game)) if self.in_game[i])

    @property
    def previous_seat(self) -> int:
        """The player still in who plays just before me (whose going-out I must answer)."""
        return next(i for i in range(len(self.in_game) - 1, 0, -1) if self.in_game[i])


def read_view(observation: dict[str, np.ndarray], num_players: int) -> RangView:
    """Decode a Rang observation dict of ``num_players`` players into a :class:`RangView`."""
    vec = np.asarray(observation["observation"])
    parts = decode_observation(vec)
    if len(parts["hand_sizes"]) != num_players:
        raise ValueError(
            f"observation: length {len(vec)} is of a {len(parts['hand_sizes'])}-player game, "
            f"this agent was built for num_players={num_players}"
        )
    legal = np.flatnonzero(observation["action_mask"]).tolist()
    if not legal:
        raise ValueError("no legal action in the mask: the agent was asked to act out of turn")
    two_decks = parts["two_decks"][0] > 0.5
    deck_size = 108 if two_decks else 54
    copies = [8 if two_decks else 4] * ACE_KIND + [8 if two_decks else 4, 4 if two_decks else 2]
    hand = np.rint(parts["hand"] * 8).astype(int).tolist()
    pile = np.rint(parts["play_pile"] * 8).astype(int).tolist()
    own_discards = np.rint(parts["own_discards"] * 8).astype(int).tolist()
    # Own discards are only still out of play while the discard pile has not been
    # shuffled back into the stock; when they outnumber the pile, a rebuild took them.
    discard_size = round(float(parts["discard_size"][0]) * deck_size)
    if sum(own_discards) > discard_size:
        own_discards = [0] * NUM_KINDS
    unseen = [max(0, copies[k] - pile[k] - hand[k] - own_discards[k]) for k in range(NUM_KINDS)]
    went_out = np.flatnonzero(parts["went_out"] > 0.5)
    return RangView(
        hand=hand,
        top=int(np.argmax(parts["top"])),
        phase=int(np.argmax(parts["phase"])),
        legal=legal,
        unseen=unseen,
        hand_sizes=np.rint(parts["hand_sizes"] * deck_size).astype(int).tolist(),
        in_game=(parts["in_game"] > 0.5).tolist(),
        went_out=int(went_out[0]) if went_out.size else -1,
    )


def kinds_of(counts: list[int]) -> list[int]:
    return [k for k in range(NUM_KINDS) if counts[k]]


def without(counts: list[int], kind: int) -> list[int]:
    rest = counts[:]
    rest[kind] -= 1
    return rest


def answer_chance(top: int, hand_size: int, unseen: list[int]) -> float:
    """Chance that a player holding ``hand_size`` unseen cards can play on ``top`` (hypergeometric)."""
    if hand_size <= 0:
        return 0.0
    total = sum(unseen)
    answers = sum(unseen[k] for k in BIT_KINDS[PLAYABLE_ON[top]])
    if answers >= total:
        return 1.0
    none = 1.0
    for i in range(min(hand_size, total)):
        none *= (total - answers - i) / (total - i)
        if none <= 0.0:
            return 1.0
    return 1.0 - none


def _best(scores: dict[int, float], rng: np.random.Generator) -> int:
    """The action of highest score; ties broken by the seeded RNG."""
    top = max(scores.values())
    best = [a for a, s in scores.items() if s >= top - 1e-9]
    return best[0] if len(best) == 1 else int(best[rng.integers(len(best))])


class GreedyRangAgent(Agent):
    """``rules_basic``: shed points greedily (costliest playable card, costliest free card and discard)."""

    name = "rules_basic"

    def __init__(self, seed: int | None = None, num_players: int = 4):
        super().__init__(seed)
        self.num_players = num_players

    def act(self, observation: dict[str, np.ndarray]) -> int:
        view = read_view(observation, self.num_players)
        scores = {a: float(KIND_POINTS[a % DISCARD_OFFSET]) for a in view.legal}
        return _best(scores, self.rng)


class StrongRangAgent(Agent):
    """``rules_strong``: one-ply evaluation of every legal action (see the module docstring).

    Scores are in tempo units (one play still needed = -1); the weights are the
    knobs of that evaluation and can be set from an agent spec,
    e.g. ``rules_strong:block=1.5``.
    """

    name = "rules_strong"

    def __init__(
        self,
        seed: int | None = None,
        num_players: int = 4,
        points: float = 0.02,  # per point left in hand
        cover: float = 0.3,  # for the chance to follow the top with an ordinary card when my turn comes
        escape: float = 0.5,  # for the first escape (Ace or Joker) held, scaled by the chance not to follow
        hold: float = 0.3,  # for the first escape held, whatever the hand
        guard: float = 0.6,  # for an escape while the previous player is about to go out
        sure_out: float = 0.5,  # when the hand can go out next turn whatever the top
        block: float = 0.5,  # against the next player's chance to answer, scaled up as their hand shrinks
    ):
        super().__init__(seed)
        self.num_players = num_players
        self.weights = {"points": points, "cover": cover, "escape": escape, "hold": hold, "guard": guard,
                        "sure_out": sure_out, "block": block}  # fmt: skip

    # ------------------------------------------------------------ decisions
    def act(self, observation: dict[str, np.ndarray]) -> int:
        view = read_view(observation, self.num_players)
        if view.phase == DISCARD:
            scores = {a: self.hand_value(without(view.hand, a - DISCARD_OFFSET), view) for a in view.legal}
        else:
            scores = {a: self.play_value(view.hand, a, view) for a in view.legal}
        return _best(scores, self.rng)

    def play_value(self, hand: list[int], kind: int, view: RangView) -> float:
        """Value of playing ``kind`` from ``hand`` (a Joker with the best free card after it)."""
        rest = without(hand, kind)
        if kind == JOKER_KIND and sum(rest):  # a free card follows: take the best one
            return max(self.play_value(rest, free, view) for free in kinds_of(rest))
        return self.position_value(rest, kind, view)

    def position_value(self, hand: list[int], top: int, view: RangView) -> float:
        """Value of holding ``hand`` with ``top`` left for the next player."""
        follower = view.next_seat
        size = view.hand_sizes[follower]
        if follower == view.went_out:  # my play answers them: they draw 2 and play on it
            size = 2
        answer = answer_chance(top, size, view.unseen)
        if not sum(hand):  # going out: the deal ends unless the next player answers
            return 100.0 - 10.0 * answer
        urgency = 1.0 + 2.0 / max(size, 1)
        return self.hand_value(hand, view, top) - self.weights["block"] * urgency * answer

    def hand_value(self, hand: list[int], view: RangView, top: int | None = None) -> float:
        """Value of a hand (not empty): plays still needed, the chance to follow, escapes, points.

        ``top`` is the card I leave (None: the current top stays, as after a discard).
        """
        w = self.weights
        cards = sum(hand)
        jokers = hand[JOKER_KIND]
        plays_needed = cards - min(jokers, cards - jokers)  # a Joker takes its free card along
        ordinary = 0
        for k in kinds_of(hand):
            if k not in ESCAPES:
                ordinary |= 1 << k
        dist = top_at_my_turn(view.top if top is None else top, view)
        follow = sum(p for t, p in enumerate(dist) if p and PLAYABLE_ON[t] & ordinary)
        escapes = hand[ACE_KIND] + jokers
        points = sum(KIND_POINTS[k] * hand[k] for k in range(NUM_KINDS))
        value = -plays_needed + w["cover"] * follow - w["points"] * points
        if escapes:
            value += w["hold"] + w["escape"] * (1.0 - follow) + 0.2 * w["escape"] * (escapes - 1)
            if view.hand_sizes[view.previous_seat] == 1:
                value += w["guard"]
        if cards == 1 and escapes or cards == 2 and jokers:
            value += w["sure_out"]  # out next turn on any top (a last Ace, or a Joker and its free card)
        return value


def top_at_my_turn(top: int, view: RangView) -> list[float]:
    """Distribution of the top card when my turn comes back, if I leave ``top`` now.

    A rough public model: each other player still in plays with the chance
    :func:`answer_chance` gives for their hand size, a card drawn in proportion to
    the unseen cards that may follow; a Joker is followed by any unseen card.
    """
    unseen = view.unseen
    total = sum(unseen[k] for k in RANK_KINDS) or 1
    free_card = [unseen[k] / total for k in RANK_KINDS] + [0.0]
    dist = [0.0] * NUM_KINDS
    dist[top] = 1.0
    for seat in range(1, len(view.in_game)):
        if not view.in_game[seat]:
            continue
        size = view.hand_sizes[seat] or 2  # a player who went out draws 2 after the answer
        moved = [0.0] * NUM_KINDS
        for t, mass in enumerate(dist):
            if not mass:
                continue
            play = answer_chance(t, size, unseen)
            moved[t] += mass * (1.0 - play)
            followers = BIT_KINDS[PLAYABLE_ON[t]]
            weight = sum(unseen[k] for k in followers)
            if not weight:
                continue
            for k in followers:
                share = mass * play * unseen[k] / weight
                if k == JOKER_KIND:
                    for f in RANK_KINDS:
                        moved[f] += share * free_card[f]
                else:
                    moved[k] += share
        dist = moved
    return dist


def make_basic(seed: int | None = None, num_players: int = 4) -> GreedyRangAgent:
    """Registry factory of ``rules_basic``."""
    return GreedyRangAgent(seed=seed, num_players=num_players)


def make_strong(seed: int | None = None, num_players: int = 4, **weights: Any) -> StrongRangAgent:
    """Registry factory of ``rules_strong`` (weights as keyword arguments, see :class:`StrongRangAgent`)."""
    return StrongRangAgent(seed=seed, num_players=num_players, **weights)
