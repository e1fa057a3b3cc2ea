"""Rule-based RING RANG players, written from how good players play.

Both agents read only the public observation dict of their seat (decoded with
:func:`cardenvs.ring_rang.observation.decode_observation`); they never look at env state.
Seats below are relative to the agent, as in the observation: 0 = me, 1 = left
opponent, 2 = partner, 3 = right opponent.

- :class:`BasicRulesAgent` (``rules_basic``): a greedy player. Trump = the longest
  suit of the first 5 cards; lead an Ace or else low from the longest side suit;
  when following, win with the cheapest card that beats the trick, otherwise throw
  the lowest card. It ignores partner, pile and card counting, and never knocks.
- :class:`StrongRulesAgent` (``rules_strong``): counts the cards played (which high
  cards and trumps are still out, who showed a void, who knocked for which honour)
  to know which cards are *sure winners*, and plays for the pile: two tricks in a
  row by the same player lift it, so the trick right after a win matters most.
  It keeps its own streak alive, helps a partner who holds the streak, never
  overtakes a partner who is safely winning, and stops an opponent who could lift.

Randomness (seeded by :meth:`Agent.reset`) is used only to break exact ties.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import comb
from typing import Any

import numpy as np

from cardenvs.agents.base import Agent
from cardenvs.ring_rang.engine import ACTION_KNOCK, ACTION_TRUMP, HONOUR_RANKS, PHASE_PLAY, PHASE_TRUMP
from cardenvs.ring_rang.observation import decode_observation

ME, LEFT, PARTNER, RIGHT = 0, 1, 2, 3
OPPONENTS = (LEFT, RIGHT)
HONOUR_POINTS = {12: 4, 11: 3, 10: 2, 9: 1}  # A K Q J, for judging a suit's strength
VOID_RISK = 0.25  # an opponent who is void in the led suit with at least this probability may trump in


def suit_of(card: int) -> int:
    return card // 13


def rank_of(card: int) -> int:
    return card % 13


def beats(card: int, best: int, trump: int) -> bool:
    """Does ``card`` take the trick from ``best``, the card winning it so far? (The engine's rule.)"""
    return (suit_of(card) == suit_of(best) and card > best) or (suit_of(card) == trump and suit_of(best) != trump)


# ------------------------------------------------------------------ the view
@dataclass
class View:
    """What one seat knows at its turn, decoded from the observation (seats relative to it)."""

    legal: list[int]  # legal actions
    hand: list[int]
    trump: int  # -1 before the choice
    phase: int
    trick_number: int  # 0..12
    trick: list[tuple[int, int]]  # (seat, card) of the current trick, in play order
    played_by: dict[int, int]  # card -> seat, every card played this round
    pile: int  # tricks lying on the pile now
    streak: int | None  # seat that won the last trick while it is still on the pile
    first_lift_done: bool
    knockers: list[int | None]  # seat that knocked for honour A, K, Q, J (None if nobody)
    knocking_over: bool
    voids: np.ndarray = field(default_factory=lambda: np.zeros((4, 4), bool))  # seat x suit shown void

    @classmethod
    def from_observation(cls, observation: dict[str, np.ndarray]) -> View:
        parts = decode_observation(observation["observation"])
        trump_part = parts["trump"]
        leader_part = parts["trick_leader"]
        trick: list[tuple[int, int]] = []
        if leader_part.any():
            leader = int(np.argmax(leader_part))
            for i in range(4):
                seat = (leader + i) % 4
                row = np.flatnonzero(parts["current_trick"][seat])
                if row.size == 0:
                    break
                trick.append((seat, int(row[0])))
        played_seats, played_cards = np.nonzero(parts["played"])
        streak = parts["streak_holder"]
        knocks = parts["knocks"]
        return cls(
            legal=[int(a) for a in np.flatnonzero(observation["action_mask"])],
            hand=[int(c) for c in np.flatnonzero(parts["hand"])],
            trump=int(np.argmax(trump_part)) if trump_part.any() else -1,
            phase=int(np.argmax(parts["phase"])),
            trick_number=int(np.argmax(parts["trick_number"])),
            trick=trick,
            played_by={int(c): int(s) for s, c in zip(played_seats, played_cards, strict=True)},
            pile=int(np.argmax(parts["pile"])),
            streak=int(np.argmax(streak)) if streak.any() else None,
            first_lift_done=bool(parts["first_lift_done"][0]),
            knockers=[int(np.argmax(row)) if row.any() else None for row in knocks],
            knocking_over=bool(parts["knocking_over"][0]),
        )

    # ---- derived facts
    @property
    def legal_cards(self) -> list[int]:
        return [a for a in self.legal if a < 52]

    def winning(self) -> tuple[int, int]:
        """(seat, card) winning the current trick so far (the trick must not be empty)."""
        seat, best = self.trick[0]
        for s, card in self.trick[1:]:
            if beats(card, best, self.trump):
                seat, best = s, card
        return seat, best

    def seats_after_me(self) -> list[int]:
        """Seats still to play to this trick after me, in order."""
        return [LEFT, PARTNER, RIGHT][: 3 - len(self.trick)]

    def known_holders(self) -> dict[int, int]:
        """Unplayed trump honours whose holder knocked for them: card -> seat."""
        holders = {}
        for honour, seat in enumerate(self.knockers):
            if seat is not None:
                card = self.trump * 13 + HONOUR_RANKS[honour]
                if card not in self.played_by:
                    holders[card] = seat
        return holders

    def unseen(self) -> set[int]:
        """Cards that are in some other player's hand."""
        return set(range(52)) - set(self.hand) - set(self.played_by)

    def hand_size(self, seat: int) -> int:
        return 13 - sum(1 for s in self.played_by.values() if s == seat)

    def possible_cards(self, seat: int) -> set[int]:
        """Cards ``seat`` may hold: unseen, not known to be elsewhere, not of a suit it showed void in."""
        holders = self.known_holders()
        return {
            c
            for c in self.unseen()
            if holders.get(c, seat) == seat and not self.voids[seat, suit_of(c)]
        }

    def void_probability(self, seat: int, suit: int) -> float:
        """Chance that ``seat`` holds no card of ``suit`` (cards dealt at random among the unseen)."""
        if self.voids[seat, suit]:
            return 1.0
        unseen = self.unseen()
        of_suit = sum(1 for c in unseen if suit_of(c) == suit)
        total = len(unseen)
        size = self.hand_size(seat)
        if of_suit == 0:
            return 1.0
        return comb(total - size, of_suit) / comb(total, of_suit) if total >= of_suit else 0.0

    def may_beat(self, seat: int, best: int, led: int) -> bool:
        """Could ``seat`` (still to play) take the trick from ``best``?"""
        cards = self.possible_cards(seat)
        if any(suit_of(c) == led and beats(c, best, self.trump) for c in cards):
            return True
        if led == self.trump:
            return False
        could_be_void = self.void_probability(seat, led) >= VOID_RISK
        return could_be_void and any(suit_of(c) == self.trump and beats(c, best, self.trump) for c in cards)

    def sure_to_win(self, card: int) -> bool:
        """``card`` would win this trick: it beats what lies there and no opponent after me may beat it."""
        led = suit_of(self.trick[0][1]) if self.trick else suit_of(card)
        if self.trick and not beats(card, self.winning()[1], self.trump):
            return False
        return not any(self.may_beat(s, card, led) for s in self.seats_after_me() if s in OPPONENTS)


class VoidTracker:
    """Remembers the tricks of the round to learn which seats showed a void in which suit.

    The observation lists every played card and who played it, but not which trick
    it belonged to; an agent that sees each of its turns can rebuild the tricks.
    """

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        self.voids = np.zeros((4, 4), bool)
        self.accounted: set[int] = set()  # cards of tricks already examined
        self.my_trick: list[tuple[int, int]] | None = None  # the trick I last played to, with my card

    def update(self, view: View) -> None:
        played = set(view.played_by)
        if view.phase != PHASE_PLAY or not self.accounted <= played:
            self.clear()  # a new round
        in_trick = {card for _, card in view.trick}
        finished = played - in_trick - self.accounted
        if finished and self.my_trick is not None:
            mine = {card for _, card in self.my_trick}
            trick = self.my_trick + [(view.played_by[c], c) for c in sorted(finished - mine)]
            if len(trick) == 4:
                self._learn(trick)
            self.my_trick = None
        self.accounted |= finished
        if view.trick:
            self._learn(view.trick)
        view.voids = self.voids.copy()

    def _learn(self, trick: list[tuple[int, int]]) -> None:
        led = suit_of(trick[0][1])
        for seat, card in trick[1:]:
            if suit_of(card) != led:
                self.voids[seat, led] = True

    def played(self, view: View, card: int) -> None:
        self.my_trick = [*view.trick, (ME, card)]


# ------------------------------------------------------------------ the agents
class RulesAgent(Agent):
    """Shared frame: decode, decide, and make sure the answer is legal."""

    name = "rules"

    def __init__(self, seed: int | None = None, **_: Any):
        super().__init__(seed)
        self.tracker = VoidTracker()
        self.fallbacks = 0  # decisions that were illegal and replaced (should stay 0)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.tracker.clear()

    def get_state(self) -> dict[str, Any]:
        tracker = self.tracker
        my_trick = None if tracker.my_trick is None else [list(pair) for pair in tracker.my_trick]
        return {**super().get_state(), "voids": tracker.voids.tolist(), "accounted": sorted(tracker.accounted),
                "my_trick": my_trick, "fallbacks": self.fallbacks}  # fmt: skip

    def set_state(self, state: dict[str, Any]) -> None:
        super().set_state(state)
        try:
            voids = np.array(state["voids"], bool)
            if voids.shape != (4, 4):
                raise ValueError(f"voids must be 4 x 4, got {voids.shape}")
            accounted = {int(card) for card in state["accounted"]}
            my_trick = None if state["my_trick"] is None else [(int(s), int(c)) for s, c in state["my_trick"]]
            fallbacks = int(state["fallbacks"])
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"agent {self.name}: not an agent state: {error!r:.200}") from None
        self.tracker.voids, self.tracker.accounted, self.tracker.my_trick = voids, accounted, my_trick
        self.fallbacks = fallbacks

    def act(self, observation: dict[str, np.ndarray]) -> int:
        view = View.from_observation(observation)
        if not view.legal:
            raise ValueError("no legal action in the mask: the agent was asked to act out of turn")
        self.tracker.update(view)
        if view.phase == PHASE_TRUMP:
            action = ACTION_TRUMP + self.choose_trump(view.hand)
        elif ACTION_KNOCK in view.legal and self.should_knock(view):
            action = ACTION_KNOCK
        else:
            action = self.choose_card(view)
        if action not in view.legal:
            self.fallbacks += 1
            action = min(a for a in view.legal if a != ACTION_KNOCK) if view.legal != [ACTION_KNOCK] else ACTION_KNOCK
        if action < 52:
            self.tracker.played(view, action)
        return int(action)

    # ---- decisions the subclasses define
    def choose_trump(self, hand: list[int]) -> int:
        raise NotImplementedError

    def should_knock(self, view: View) -> bool:
        return False

    def choose_card(self, view: View) -> int:
        raise NotImplementedError

    # ---- helpers
    def pick(self, cards: list[int], key) -> int:
        """The card with the smallest ``key``; exact ties broken by the seeded RNG."""
        scores = [key(c) for c in cards]
        low = min(scores)
        tied = [c for c, s in zip(cards, scores, strict=True) if s == low]
        return tied[int(self.rng.integers(len(tied)))] if len(tied) > 1 else tied[0]


class BasicRulesAgent(RulesAgent):
    """Greedy: win a trick with the cheapest card that can, else throw the lowest card."""

    name = "rules_basic"

    def choose_trump(self, hand: list[int]) -> int:
        return self.pick(list(range(4)), lambda s: (-suit_length(hand, s), -sum(rank_of(c) for c in hand
                                                                                 if suit_of(c) == s)))

    def choose_card(self, view: View) -> int:
        legal = view.legal_cards
        if not view.trick:
            side = [c for c in legal if suit_of(c) != view.trump] or legal
            aces = [c for c in side if rank_of(c) == 12]
            if aces:
                return aces[0]
            longest = max(suit_length(side, s) for s in range(4))
            return self.pick([c for c in side if suit_length(side, suit_of(c)) == longest], rank_of)
        best = view.winning()[1]
        winners = [c for c in legal if beats(c, best, view.trump)]
        if winners:
            return self.pick(winners, lambda c: card_cost(c, view.trump))
        return self.pick(legal, lambda c: card_cost(c, view.trump))


class StrongRulesAgent(RulesAgent):
    """Card counting and the pile: keep or break streaks, help partner, stop lifts."""

    name = "rules_strong"

    def __init__(self, seed: int | None = None, keep_trumps: int = 1):
        super().__init__(seed)
        if isinstance(keep_trumps, bool) or not isinstance(keep_trumps, int) or not 0 <= keep_trumps <= 13:
            raise ValueError(f"keep_trumps must be an int 0..13, got {keep_trumps!r}")
        self.keep_trumps = keep_trumps

    def reserve(self, view: View) -> set[int]:
        """The top trumps kept for the last tricks; the 13th takes the whole pile left over."""
        trumps = sorted((c for c in view.hand if suit_of(c) == view.trump), reverse=True)
        keep = min(self.keep_trumps, 13 - view.trick_number - 1)
        return set(trumps[:keep])

    def spendable(self, view: View, cards: list[int]) -> list[int]:
        """``cards`` without the reserved trumps. (Measured: spending them earlier, even to stop
        a lift of 5, loses more than it saves: the last trick lifts about 6 tricks on average.)"""
        keep = self.reserve(view)
        return [c for c in cards if c not in keep]

    # ---- trump and knocks
    def choose_trump(self, hand: list[int]) -> int:
        """Longest and strongest suit: length counts most, honours decide between near equals."""

        def strength(suit: int) -> tuple[int, int]:
            cards = [c for c in hand if suit_of(c) == suit]
            honours = sum(HONOUR_POINTS.get(rank_of(c), 0) for c in cards)
            return 4 * len(cards) + honours, sum(rank_of(c) for c in cards)

        return self.pick(list(range(4)), lambda s: tuple(-x for x in strength(s)))

    def should_knock(self, view: View) -> bool:
        """Knock for the Ace always (it tells partner where the top trump is); for K, Q, J only when
        every higher trump is gone or on our side, so the knock announces a card that will win."""
        honour = sum(1 for k in view.knockers if k is not None)
        if honour == 0:
            return True
        rank = HONOUR_RANKS[honour]
        holders = view.known_holders()
        for higher in range(rank + 1, 13):
            card = view.trump * 13 + higher
            ours = card in view.hand or holders.get(card) in (ME, PARTNER)
            if card not in view.played_by and not ours:
                return False
        return True

    # ---- card play
    def choose_card(self, view: View) -> int:
        return self.lead(view) if not view.trick else self.follow(view)

    def lift_ready(self, view: View) -> bool:
        """Would a second win in a row lift the pile with this trick (or is it the last trick)?"""
        return view.trick_number == 12 or view.pile + 1 >= (2 if view.first_lift_done else 3)

    def lead(self, view: View) -> int:
        legal = self.spendable(view, view.legal_cards) or view.legal_cards
        trump = view.trump
        sure = [c for c in legal if view.sure_to_win(c)]
        sure_side = [c for c in sure if suit_of(c) != trump]
        my_trumps = [c for c in legal if suit_of(c) == trump]
        opponents_trumps = any(
            suit_of(c) == trump for s in OPPONENTS for c in view.possible_cards(s)
        )
        # Cash a sure winner: the leader won the last trick, so a win now keeps the streak (or lifts).
        if sure_side:
            return self.pick(sure_side, lambda c: (suit_length(view.hand, suit_of(c)), rank_of(c)))
        sure_trumps = [c for c in sure if suit_of(c) == trump]
        if sure_trumps and (self.lift_ready(view) or (opponents_trumps and len(my_trumps) >= 3)):
            return self.pick(sure_trumps, rank_of)  # lowest trump that surely wins; draws theirs too
        # Otherwise lead low from the shortest side suit, to make a void for trumping later.
        side = [c for c in legal if suit_of(c) != trump] or legal
        return self.pick(side, lambda c: (suit_length(view.hand, suit_of(c)), rank_of(c)))

    def follow(self, view: View) -> int:
        trump = view.trump
        best_seat, best = view.winning()
        led = suit_of(view.trick[0][1])
        later_opponents = [s for s in view.seats_after_me() if s in OPPONENTS]
        partner_later = PARTNER in view.seats_after_me()
        lift_ready = self.lift_ready(view)
        legal = self.spendable(view, view.legal_cards) or view.legal_cards
        winners = [c for c in legal if beats(c, best, trump)]
        sure = [c for c in winners if view.sure_to_win(c)]
        partner_winning = best_seat == PARTNER
        partner_safe = partner_winning and not any(view.may_beat(s, best, led) for s in later_opponents)
        last = not later_opponents and not partner_later

        def cheapest(cards: list[int]) -> int:
            return self.pick(cards, lambda c: card_cost(c, trump))

        def strongest(cards: list[int]) -> int:
            return self.pick(cards, lambda c: -card_cost(c, trump))

        def duck() -> int:
            return self.discard(view, legal)

        # 1. My streak and a big pile: winning now lifts it, even over a partner.
        if view.streak == ME and lift_ready:
            if sure:
                return cheapest(sure)
            if partner_safe:
                return duck()
            if winners:
                return cheapest(winners) if last else strongest(winners)
            return duck()
        # 2. Partner's streak and a big pile: let partner win again rather than breaking the streak.
        if view.streak == PARTNER and lift_ready:
            if partner_winning and (partner_safe or not sure):
                return duck()
            if partner_later and not partner_winning:
                return duck()
            if sure:
                return cheapest(sure)
            return (cheapest(winners) if last else strongest(winners)) if winners else duck()
        # 3. An opponent could lift (their streak, big pile) or it is the last trick: stop them.
        if lift_ready and (view.streak in OPPONENTS or view.trick_number == 12):
            if partner_safe:
                return duck()
            if sure:
                return cheapest(sure)
            if winners:
                return cheapest(winners) if last else strongest(winners)
            return duck()
        # 4. An ordinary trick: never overtake a safe partner; win cheaply when sure.
        if partner_safe:
            return duck()
        side_sure = [c for c in sure if suit_of(c) != trump]
        if side_sure:
            return cheapest(side_sure)
        if sure and self.worth_a_trump(view, legal):
            return cheapest(sure)
        if last and winners and not partner_winning and suit_of(min(winners, key=rank_of)) != trump:
            return cheapest(winners)
        return duck()

    def worth_a_trump(self, view: View, legal: list[int]) -> bool:
        """Trump (when void) if the pile is worth it, my streak is at stake, or trumps are plentiful."""
        my_trumps = sum(1 for c in view.hand if suit_of(c) == view.trump)
        return view.pile >= 1 or view.streak == ME or my_trumps >= 3

    def discard(self, view: View, legal: list[int]) -> int:
        """The card that costs least: low, not a trump, not a sure winner; a singleton makes a void."""
        trump = view.trump

        def cost(card: int) -> float:
            value = float(rank_of(card))
            if suit_of(card) == trump:
                value += 20
            if suit_of(card) != suit_of(view.trick[0][1]) and suit_of(card) != trump:
                if suit_length(view.hand, suit_of(card)) == 1:
                    value -= 3  # throwing the last card of a suit makes a void
                if is_boss(view, card):
                    value += 10
            return value

        return self.pick(legal, cost)


# ------------------------------------------------------------------ helpers
def suit_length(cards: list[int], suit: int) -> int:
    return sum(1 for c in cards if suit_of(c) == suit)


def card_cost(card: int, trump: int) -> int:
    """How dear a card is to spend: trumps above every side card, then by rank."""
    return rank_of(card) + (13 if suit_of(card) == trump else 0)


def is_boss(view: View, card: int) -> bool:
    """No higher card of its suit is still out."""
    unseen = view.unseen()
    return not any(suit_of(c) == suit_of(card) and c > card for c in unseen)


def make_basic(seed: int | None = None) -> BasicRulesAgent:
    """Registry factory of ``rules_basic`` (no parameters)."""
    return BasicRulesAgent(seed=seed)


def make_strong(seed: int | None = None, keep_trumps: int = 1) -> StrongRulesAgent:
    """Registry factory of ``rules_strong`` (``rules_strong:keep_trumps=2`` keeps the top 2 trumps)."""
    return StrongRulesAgent(seed=seed, keep_trumps=keep_trumps)
