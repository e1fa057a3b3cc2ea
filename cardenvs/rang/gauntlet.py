"""The Rang gauntlet: four outside-style rule players, for evaluation only (never trained against).

Each sees only its seat's observation (decoded with
:func:`~cardenvs.agents.rang_rules.read_view`) and plays one way a human player
might. What may follow what (``PLAYABLE_ON``) and what a card costs
(``KIND_POINTS``) come from the engine's tables.

- :class:`DumperAgent` (``gauntlet_dumper``): gets rid of points first. It plays,
  frees and discards the costliest card it can, but always keeps one escape (an
  Ace, else a Joker) back for the moment it is stuck or must answer a going-out.
- :class:`EscaperAgent` (``gauntlet_escaper``): hoards Aces and Jokers. It sheds its
  ordinary cards from low to high along rank chains (the card whose neighbour it
  still holds first) and spends an escape only when nothing else may be played or
  when the escape takes it out.
- :class:`BlockerAgent` (``gauntlet_blocker``): above all leaves the next player the
  top card they are least likely to answer (estimated from the public counts and
  their hand size); a Joker is a chance to choose the worst top for them.
- :class:`RacerAgent` (``gauntlet_racer``): counts plays, not points. It minimises
  the plays still needed to empty the hand (a Joker takes free cards along, Jokers
  chain) and the risk of being unable to play next turn; it ignores points and
  the other players.

Randomness (seeded by :meth:`Agent.reset`) only breaks exact ties.
"""

from __future__ import annotations

import numpy as np

from cardenvs.agents.base import Agent
from cardenvs.rang.engine import (
    ACE_KIND,
    BIT_KINDS,
    DISCARD,
    DISCARD_OFFSET,
    JOKER_KIND,
    KIND_POINTS,
    KIND_VALUE,
    NUM_KINDS,
    PLAY_AFTER_JOKER,
    PLAYABLE_ON,
)
from cardenvs.rang.rules import ESCAPES, RangView, answer_chance, kinds_of, read_view, top_at_my_turn, without


# ------------------------------------------------------------------ shared facts of a hand
def follows(kind: int, top: int) -> bool:
    """May ``kind`` be played on ``top``?"""
    return bool(PLAYABLE_ON[top] >> kind & 1)


def escapes_in(hand: list[int]) -> int:
    return hand[ACE_KIND] + hand[JOKER_KIND]


def links(hand: list[int], kind: int) -> int:
    """Ordinary cards of ``hand`` (one copy of ``kind`` set aside) that may follow ``kind``."""
    rest = without(hand, kind) if hand[kind] else hand
    return sum(rest[k] for k in BIT_KINDS[PLAYABLE_ON[kind]] if k not in ESCAPES)


def rank_value(kind: int) -> int:
    """The value of a card for the one-apart rule (Ace low); 0 for the Joker."""
    return KIND_VALUE[kind] if kind < len(KIND_VALUE) else 0


def points_of(hand: list[int]) -> int:
    return sum(KIND_POINTS[k] * hand[k] for k in range(NUM_KINDS))


def follower_size(view: RangView) -> int:
    """Cards the next player will hold when they play on my card (one who went out draws 2 first)."""
    seat = view.next_seat
    return 2 if seat == view.went_out else view.hand_sizes[seat]


def going_out(view: RangView) -> int | None:
    """An action that empties my hand with this play (a last card, or Jokers chained to it), if any."""
    hand = view.hand
    cards = sum(hand)
    if view.phase == DISCARD:
        return None
    jokers = hand[JOKER_KIND]
    if cards == 1:
        return view.legal[0]
    if jokers and cards - jokers <= 1:
        return JOKER_KIND  # Jokers chain: each frees the next card, the last one is the last card
    return None


class GauntletRangAgent(Agent):
    """Common frame: decode, go out when a play can, else let the style decide; always legal."""

    name = "gauntlet"

    def __init__(self, seed: int | None = None, num_players: int = 4):
        super().__init__(seed)
        self.num_players = num_players
        self.fallbacks = 0  # decisions that were illegal and replaced (should stay 0)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        view = read_view(observation, self.num_players)
        action = going_out(view)
        if action is None:
            if view.phase == DISCARD:
                scores = {a: self.discard_score(view, a - DISCARD_OFFSET) for a in view.legal}
            elif view.phase == PLAY_AFTER_JOKER:
                scores = {a: self.free_score(view, a) for a in view.legal}
            else:
                scores = {a: self.play_score(view, a) for a in view.legal}
            action = self.best(scores)
        if action not in view.legal:  # a style must never make an illegal move
            self.fallbacks += 1
            action = view.legal[0]
        return int(action)

    def best(self, scores: dict[int, tuple]) -> int:
        """The action of highest score (scores are tuples, compared in order); ties by the seeded RNG."""
        top = max(scores.values())
        tied = [a for a, s in scores.items() if s == top]
        return tied[0] if len(tied) == 1 else int(tied[self.rng.integers(len(tied))])

    # ---- what a style defines: higher is better
    def play_score(self, view: RangView, kind: int) -> tuple:
        raise NotImplementedError

    def free_score(self, view: RangView, kind: int) -> tuple:
        """The free card after a Joker: by default chosen like an ordinary play."""
        return self.play_score(view, kind)

    def discard_score(self, view: RangView, kind: int) -> tuple:
        raise NotImplementedError


# ------------------------------------------------------------------ the dumper
class DumperAgent(GauntletRangAgent):
    """Costliest card first (plays, free cards, discards), one escape always kept in reserve."""

    name = "gauntlet_dumper"

    @staticmethod
    def reserve(hand: list[int]) -> int | None:
        """The escape kept back: an Ace (cheaper to be caught with), else a Joker; None when it is the last one."""
        for kind in (ACE_KIND, JOKER_KIND):
            if hand[kind]:
                return kind
        return None

    def spends_reserve(self, hand: list[int], kind: int) -> bool:
        return kind == self.reserve(hand) and escapes_in(hand) == 1

    def play_score(self, view: RangView, kind: int) -> tuple:
        hand = view.hand
        points = KIND_POINTS[kind]
        if kind == JOKER_KIND:  # the Joker takes the costliest card left along with it
            rest = without(hand, JOKER_KIND)
            points += max((KIND_POINTS[k] for k in kinds_of(rest) if not self.spends_reserve(rest, k)), default=0)
        # isolated cards (nothing in hand follows them) go first among equals
        return not self.spends_reserve(hand, kind), points, -links(hand, kind)

    def discard_score(self, view: RangView, kind: int) -> tuple:
        return not self.spends_reserve(view.hand, kind), KIND_POINTS[kind], -links(view.hand, kind)


# ------------------------------------------------------------------ the escaper
class EscaperAgent(GauntletRangAgent):
    """Aces and Jokers are hoarded; ordinary cards go low to high along chains."""

    name = "gauntlet_escaper"

    def play_score(self, view: RangView, kind: int) -> tuple:
        hand = view.hand
        if kind in ESCAPES:
            # Stuck (only escapes may be played): the Ace first, the Joker is kept longer.
            return 0, kind == ACE_KIND, 0, 0
        rest = without(hand, kind)
        # a card whose neighbour I still hold continues a chain; low cards first (climb the chain)
        return 1, links(hand, kind) > 0, -KIND_VALUE[kind], links(rest, kind)

    def free_score(self, view: RangView, kind: int) -> tuple:
        hand = view.hand
        if kind in ESCAPES:
            return 0, 0, kind == ACE_KIND, 0
        # the free card starts the chain the rest of my hand can climb: most followers, then low
        return 1, links(hand, kind), -KIND_VALUE[kind], KIND_POINTS[kind]

    def discard_score(self, view: RangView, kind: int) -> tuple:
        if kind in ESCAPES:
            return 0, kind == ACE_KIND, 0  # only when the hand is all escapes
        # the most isolated ordinary card, the costlier of equals
        return 1, -links(view.hand, kind), KIND_POINTS[kind]


# ------------------------------------------------------------------ the blocker
class BlockerAgent(GauntletRangAgent):
    """Leaves the next player the top they are least likely to answer."""

    name = "gauntlet_blocker"
    escape_cost = 0.2  # an escape spent for the block must block clearly better than an ordinary card

    def block(self, view: RangView, top: int) -> float:
        return answer_chance(top, follower_size(view), view.unseen)

    def after(self, hand: list[int], kind: int, view: RangView) -> tuple[float, list[int], int]:
        """(answer chance, hand left, top left) when ``kind`` is played; a Joker frees the best blocking card."""
        rest = without(hand, kind)
        if kind == JOKER_KIND and sum(rest):
            options = [self.after(rest, free, view) for free in kinds_of(rest)]
            return min(options, key=lambda o: (o[0], -points_of(rest) + points_of(o[1])))
        return self.block(view, kind), rest, kind

    def play_score(self, view: RangView, kind: int) -> tuple:
        chance, rest, _ = self.after(view.hand, kind, view)
        spent = escapes_in(view.hand) - escapes_in(rest)
        return -(chance + self.escape_cost * spent), -points_of(rest)

    def free_score(self, view: RangView, kind: int) -> tuple:
        return self.play_score(view, kind)

    def discard_score(self, view: RangView, kind: int) -> tuple:
        # A discard leaves the top as it is: the costliest ordinary card goes, the escapes stay.
        return kind not in ESCAPES, KIND_POINTS[kind], self.block(view, kind)


# ------------------------------------------------------------------ the racer
class RacerAgent(GauntletRangAgent):
    """Fewest plays to an empty hand, and a play ready for the next turn; points do not count."""

    name = "gauntlet_racer"

    @staticmethod
    def plays_needed(hand: list[int]) -> int:
        """Each play sheds one ordinary card and any Jokers chained before it; Jokers alone go in one play."""
        ordinary = sum(hand) - hand[JOKER_KIND]
        return ordinary if ordinary else min(1, hand[JOKER_KIND])

    def ready(self, hand: list[int], top: int, view: RangView) -> float:
        """Chance that ``hand`` may play on the top it meets at my next turn, when I leave ``top``."""
        bits = 0
        for k in kinds_of(hand):
            bits |= 1 << k
        dist = top_at_my_turn(top, view)
        return sum(p for t, p in enumerate(dist) if p and PLAYABLE_ON[t] & bits)

    def tempo(self, hand: list[int], top: int, view: RangView) -> float:
        if not sum(hand):
            return 100.0
        return -self.plays_needed(hand) + self.ready(hand, top, view)

    def value(self, hand: list[int], kind: int, view: RangView) -> float:
        rest = without(hand, kind)
        if kind == JOKER_KIND and sum(rest):
            return max(self.value(rest, free, view) for free in kinds_of(rest))
        return self.tempo(rest, kind, view)

    def play_score(self, view: RangView, kind: int) -> tuple:
        # Among plays of equal tempo: keep the escapes, shed the high cards (see :meth:`discard_score`).
        return round(self.value(view.hand, kind, view), 9), kind not in ESCAPES, rank_value(kind)

    def discard_score(self, view: RangView, kind: int) -> tuple:
        """Never an escape; else the highest card: the one that finds a top to follow least often
        (only a Queen or a King lets a King be played, while the Aces everybody plays as escapes
        let the low cards follow)."""
        return kind not in ESCAPES, rank_value(kind)


# ------------------------------------------------------------------ registry factories
def make_dumper(seed: int | None = None, num_players: int = 4) -> DumperAgent:
    """Registry factory of ``gauntlet_dumper``."""
    return DumperAgent(seed=seed, num_players=num_players)


def make_escaper(seed: int | None = None, num_players: int = 4) -> EscaperAgent:
    """Registry factory of ``gauntlet_escaper``."""
    return EscaperAgent(seed=seed, num_players=num_players)


def make_blocker(seed: int | None = None, num_players: int = 4) -> BlockerAgent:
    """Registry factory of ``gauntlet_blocker``."""
    return BlockerAgent(seed=seed, num_players=num_players)


def make_racer(seed: int | None = None, num_players: int = 4) -> RacerAgent:
    """Registry factory of ``gauntlet_racer``."""
    return RacerAgent(seed=seed, num_players=num_players)
