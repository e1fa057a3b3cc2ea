"""The RING RANG gauntlet: four outside-style rule players, for evaluation only (never trained against).

Each plays the way one kind of human player does, on the public observation of its
seat only (decoded with :class:`~cardenvs.ring_rang.rules.View`, voids learnt
by :class:`~cardenvs.ring_rang.rules.VoidTracker`). Seats are relative, as in
the observation: 0 = me, 1 = left opponent, 2 = partner, 3 = right opponent.

- :class:`HoarderAgent` (``gauntlet_hoarder``): keeps its trumps for the end. It leads
  side suits, never trumps in early (only to stop a big lift), and from the last
  tricks on runs its trumps out from the top to win the final tricks and the pile.
- :class:`LifterAgent` (``gauntlet_lifter``): lives for the pile. Every trick is fought
  for (the highest winner when others still play after it): holding the streak it
  leads its top trump, sure or not, to win twice in a row; it steals an opponent's
  streak at any price and draws trumps early so that later streaks are its own.
- :class:`ReaderAgent` (``gauntlet_reader``): reads the table. It knocks honestly for
  every honour, remembers who knocked which trump honour and who showed which void,
  leads small trumps to its partner's knocked honours and suits its partner can ruff,
  and keeps away from suits an opponent can ruff.
- :class:`SupporterAgent` (``gauntlet_supporter``): a cautious partner. Second hand low
  (high only to stop an opponent's lift), third hand covers a partner in danger, never
  overtakes a winning partner, feeds the partner's streak and always discards low.

Randomness (seeded by :meth:`Agent.reset`) only breaks exact ties.
"""

from __future__ import annotations

from dataclasses import replace

from cardenvs.ring_rang.engine import NUM_TRICKS
from cardenvs.ring_rang.rules import (
    HONOUR_POINTS,
    ME,
    OPPONENTS,
    PARTNER,
    RIGHT,
    RulesAgent,
    View,
    beats,
    card_cost,
    is_boss,
    rank_of,
    suit_length,
    suit_of,
)


# ------------------------------------------------------------------ shared reading of the table
def tricks_left(view: View) -> int:
    """Tricks still to play, this one included."""
    return NUM_TRICKS - view.trick_number


def lifts_now(view: View) -> bool:
    """Would the player who holds the streak lift the pile by winning this trick too?"""
    if view.trick_number == NUM_TRICKS - 1:
        return True
    return view.pile + 1 >= (2 if view.first_lift_done else 3)


def trumps_in(cards: list[int], trump: int) -> list[int]:
    return [c for c in cards if suit_of(c) == trump]


def side_cards(cards: list[int], trump: int) -> list[int]:
    return [c for c in cards if suit_of(c) != trump]


def trumps_out(view: View, seat: int) -> bool:
    """May ``seat`` still hold a trump?"""
    return any(suit_of(c) == view.trump for c in view.possible_cards(seat))


def partner_is_safe(view: View) -> bool:
    """Partner wins the trick so far and no opponent still to play may beat them."""
    if not view.trick:
        return False
    seat, best = view.winning()
    led = suit_of(view.trick[0][1])
    return seat == PARTNER and not any(view.may_beat(s, best, led) for s in view.seats_after_me() if s in OPPONENTS)


class GauntletRingRangAgent(RulesAgent):
    """Common frame: lead or follow; a few card pickers every style uses."""

    name = "gauntlet"

    def choose_card(self, view: View) -> int:
        return self.lead(view) if not view.trick else self.follow(view)

    def lead(self, view: View) -> int:
        raise NotImplementedError

    def follow(self, view: View) -> int:
        raise NotImplementedError

    def lowest(self, cards: list[int], view: View) -> int:
        """The cheapest card: side cards before trumps, low before high."""
        return self.pick(cards, lambda c: card_cost(c, view.trump))

    def highest(self, cards: list[int], view: View) -> int:
        return self.pick(cards, lambda c: -card_cost(c, view.trump))

    def winners(self, view: View, cards: list[int]) -> list[int]:
        best = view.winning()[1]
        return [c for c in cards if beats(c, best, view.trump)]


# ------------------------------------------------------------------ the trump hoarder
class HoarderAgent(GauntletRingRangAgent):
    """Keeps trumps for the end; side suits first; trumps run out from the top in the last tricks."""

    name = "gauntlet_hoarder"
    big_pile = 4  # an opponent about to lift at least this many tricks is worth an early trump

    def choose_trump(self, hand: list[int]) -> int:
        # The suit with the most cards: the more trumps kept back, the more last tricks won.
        return self.pick(
            list(range(4)),
            lambda s: (-suit_length(hand, s), -max((rank_of(c) for c in hand if suit_of(c) == s), default=-1)),
        )

    def late(self, view: View) -> bool:
        """The hoard is released when the tricks left are about as many as the trumps held."""
        held = len(trumps_in(view.hand, view.trump))
        return tricks_left(view) <= max(3, held)

    def lead(self, view: View) -> int:
        legal, trump = view.legal_cards, view.trump
        side = side_cards(legal, trump)
        trumps = trumps_in(legal, trump)
        if self.late(view) and trumps:
            boss_trumps = [c for c in trumps if is_boss(view, c)]
            if boss_trumps:
                return self.highest(boss_trumps, view)  # run them from the top: consecutive wins lift
        sure_side = [c for c in side if view.sure_to_win(c)]
        if sure_side:
            return self.highest(sure_side, view)
        if side:
            # Low from the longest side suit: it lasts, and keeps the trumps hidden.
            return self.pick(side, lambda c: (-suit_length(view.hand, suit_of(c)), rank_of(c)))
        return self.pick(trumps, lambda c: -rank_of(c) if self.late(view) else rank_of(c))

    def follow(self, view: View) -> int:
        trump = view.trump
        legal = view.legal_cards
        best_seat, _ = view.winning()
        led = suit_of(view.trick[0][1])
        winners = self.winners(view, legal)
        safe = partner_is_safe(view)
        last = not view.seats_after_me()
        if led != trump and all(suit_of(c) != led for c in legal):  # void: trump in, or not
            trumps = trumps_in(winners, trump)
            stake = lifts_now(view) and view.streak in OPPONENTS and view.pile + 1 >= self.big_pile
            if trumps and not safe and best_seat != PARTNER and (self.late(view) or stake):
                sure = [c for c in trumps if view.sure_to_win(c)]
                return self.lowest(sure or trumps, view)
            return self.throw(view, legal)
        if safe:
            return self.lowest(legal, view)
        sure = [c for c in winners if view.sure_to_win(c)]
        if sure:
            return self.lowest(sure, view)
        if last and winners and best_seat != PARTNER:
            return self.lowest(winners, view)
        return self.lowest(legal, view)

    def throw(self, view: View, legal: list[int]) -> int:
        """A low side card, from a short suit (a void lets the hoard ruff at the end); trumps last."""
        side = side_cards(legal, view.trump)
        if not side:
            return self.lowest(legal, view)
        return self.pick(side, lambda c: (rank_of(c) + 3 * suit_length(view.hand, suit_of(c)), rank_of(c)))


# ------------------------------------------------------------------ the pile lifter
class LifterAgent(GauntletRingRangAgent):
    """Fights for two tricks in a row: high cards and trumps are spent to keep or steal a streak."""

    name = "gauntlet_lifter"

    def choose_trump(self, hand: list[int]) -> int:
        # Top trumps win streaks: honours weigh as much as length.
        def strength(suit: int) -> tuple[int, int]:
            cards = [c for c in hand if suit_of(c) == suit]
            return 2 * len(cards) + 2 * sum(HONOUR_POINTS.get(rank_of(c), 0) for c in cards), len(cards)

        return self.pick(list(range(4)), lambda s: tuple(-x for x in strength(s)))

    def should_knock(self, view: View) -> bool:
        return True  # loud: every honour is announced

    def lead(self, view: View) -> int:
        legal, trump = view.legal_cards, view.trump
        sure = [c for c in legal if view.sure_to_win(c)]
        if sure:
            # A sure winner keeps the streak; the side ones first, trumps only when the lift is on.
            sure_side = side_cards(sure, trump)
            if sure_side or lifts_now(view):
                return self.lowest(sure_side or sure, view)
        trumps = trumps_in(legal, trump)
        if view.streak == ME and lifts_now(view) and trumps:
            return self.highest(trumps, view)  # all in: the top trump
        if len(trumps) >= 3 and any(trumps_out(view, s) for s in OPPONENTS):
            return self.highest(trumps, view)  # draw their trumps so the streaks are mine later
        side = side_cards(legal, trump) or legal
        # The highest card of the shortest side suit: win now or make a void to ruff with.
        return self.pick(side, lambda c: (suit_length(view.hand, suit_of(c)), -rank_of(c)))

    def follow(self, view: View) -> int:
        legal = view.legal_cards
        best_seat, _ = view.winning()
        winners = self.winners(view, legal)
        sure = [c for c in winners if view.sure_to_win(c)]
        last = not view.seats_after_me()
        partner_later = PARTNER in view.seats_after_me()
        lift = lifts_now(view)

        def fight() -> int:
            if sure:
                return self.lowest(sure, view)
            if winners:
                return self.lowest(winners, view) if last else self.highest(winners, view)
            return self.lowest(legal, view)

        if view.streak == PARTNER and lift and (best_seat == PARTNER or partner_later):
            return self.lowest(legal, view)  # partner lifts
        if best_seat == PARTNER and partner_is_safe(view):
            return self.lowest(legal, view)
        if view.streak in OPPONENTS:
            return fight()  # steal it
        # A fresh trick: win it when I can, to start my own streak.
        if sure:
            return self.lowest(sure, view)
        if winners and (last or best_seat != PARTNER):
            return self.lowest(winners, view) if last else self.highest(winners, view)
        return self.lowest(legal, view)


# ------------------------------------------------------------------ the knock and void reader
class ReaderAgent(GauntletRingRangAgent):
    """Reads knocks and voids: leads to the partner's strength and away from the opponents' ruffs."""

    name = "gauntlet_reader"

    def choose_trump(self, hand: list[int]) -> int:
        # Honours first (they will be knocked and tell partner where the control is), then length.
        def strength(suit: int) -> tuple[int, int]:
            cards = [c for c in hand if suit_of(c) == suit]
            return 3 * len(cards) + 2 * sum(HONOUR_POINTS.get(rank_of(c), 0) for c in cards), -suit

        return self.pick(list(range(4)), lambda s: tuple(-x for x in strength(s)))

    def should_knock(self, view: View) -> bool:
        return True  # honest: every honour held is announced

    def choose_card(self, view: View) -> int:
        """My top trump waits for the 13th trick (it takes the pile left over), unless the knocks
        say an opponent holds a higher one."""
        trumps = trumps_in(view.hand, view.trump)
        if trumps and view.trick_number < NUM_TRICKS - 1:
            top = max(trumps)
            holders = view.known_holders()
            if not any(holders.get(c) in OPPONENTS for c in range(top + 1, view.trump * 13 + 13)):
                rest = [a for a in view.legal if a != top]
                if any(a < 52 for a in rest):
                    view = replace(view, legal=rest)
        return super().choose_card(view)

    # ---- what the table said
    def ruff_risk(self, view: View, suit: int, seats: tuple[int, ...] = OPPONENTS) -> bool:
        """Did an opponent show a void in ``suit`` while they may still hold a trump?"""
        if suit == view.trump:
            return False
        return any(view.voids[s, suit] and trumps_out(view, s) for s in seats)

    def partner_ruffs(self, view: View, suit: int) -> bool:
        """Partner showed a void in ``suit`` and may still trump it (and the right opponent cannot overruff)."""
        if suit == view.trump or not view.voids[PARTNER, suit]:
            return False
        return trumps_out(view, PARTNER) and not self.ruff_risk(view, suit, (RIGHT,))

    def partner_honour(self, view: View) -> int | None:
        """The highest unplayed trump honour partner knocked for, if it is the top trump still out."""
        for card, seat in sorted(view.known_holders().items(), reverse=True):
            if seat == PARTNER and is_boss(view, card):
                return card
        return None

    def lead(self, view: View) -> int:
        legal, trump = view.legal_cards, view.trump
        side = side_cards(legal, trump)
        trumps = trumps_in(legal, trump)
        opponents_trumps = any(trumps_out(view, s) for s in OPPONENTS)
        # A small trump to partner's knocked top honour: partner wins and draws the opponents' trumps.
        if trumps and opponents_trumps and self.partner_honour(view) is not None:
            small = [c for c in trumps if not is_boss(view, c)]
            if small:
                return self.lowest(small, view)
        safe_sure = [c for c in side if view.sure_to_win(c) and not self.ruff_risk(view, suit_of(c))]
        if safe_sure:
            return self.highest(safe_sure, view)
        # A suit partner can ruff: low, so partner takes it with a trump.
        feed = [c for c in side if self.partner_ruffs(view, suit_of(c))]
        if feed:
            return self.lowest(feed, view)
        if trumps and not side:
            sure = [c for c in trumps if view.sure_to_win(c)]
            return self.highest(sure, view) if sure else self.lowest(trumps, view)
        # Otherwise low from a suit no opponent can ruff, where partner has played high cards.
        candidates = [c for c in side if not self.ruff_risk(view, suit_of(c))] or side or legal

        def risk(card: int) -> tuple[int, int, int]:
            suit = suit_of(card)
            partner_high = sum(1 for c, s in view.played_by.items() if s == PARTNER and suit_of(c) == suit
                               and rank_of(c) >= 9)  # fmt: skip
            return -partner_high, -suit_length(view.hand, suit), rank_of(card)

        return self.pick(candidates, risk)

    def follow(self, view: View) -> int:
        legal, trump = view.legal_cards, view.trump
        best_seat, _ = view.winning()
        led = suit_of(view.trick[0][1])
        winners = self.winners(view, legal)
        sure = [c for c in winners if view.sure_to_win(c)]
        later = view.seats_after_me()
        last = not later
        if partner_is_safe(view):
            return self.discard(view, legal)
        if view.streak == PARTNER and lifts_now(view) and (best_seat == PARTNER or PARTNER in later):
            return self.discard(view, legal)  # partner's second win in a row lifts: leave it to them
        stake = lifts_now(view) and (view.streak in OPPONENTS or view.trick_number == NUM_TRICKS - 1)
        side_sure = side_cards(sure, trump)
        if side_sure:
            return self.lowest(side_sure, view)
        if sure and (view.pile >= 1 or stake or led == trump):
            return self.lowest(sure, view)
        if best_seat == PARTNER and PARTNER not in later:
            return self.discard(view, legal)  # partner may still win; do not waste a card over them
        # A later opponent ruffs this suit: a high card is wasted, unless I trump above what they can.
        if self.ruff_risk(view, led, tuple(s for s in later if s in OPPONENTS)):
            return self.discard(view, legal)
        if winners and (last or stake):
            side_winners = side_cards(winners, trump)
            if side_winners or stake:
                return self.lowest(side_winners or winners, view) if last else self.highest(winners, view)
        return self.discard(view, legal)

    def discard(self, view: View, legal: list[int]) -> int:
        """Low, no trump; a card of a suit an opponent ruffs is worthless anyway; keep boss cards."""
        trump = view.trump

        def cost(card: int) -> tuple[float, int]:
            value = float(card_cost(card, trump))
            if suit_of(card) != trump:
                if self.ruff_risk(view, suit_of(card)):
                    value -= 4
                if is_boss(view, card):
                    value += 8
            return value, rank_of(card)

        return self.pick(legal, cost)


# ------------------------------------------------------------------ the cautious partner-supporter
class SupporterAgent(GauntletRingRangAgent):
    """Partner first: second hand low, third hand covers, never overtakes partner, discards low."""

    name = "gauntlet_supporter"

    def choose_trump(self, hand: list[int]) -> int:
        # Plain length: the chooser's partner has no say, so pick the suit most likely to be long.
        return self.pick(
            list(range(4)), lambda s: (-suit_length(hand, s), -sum(rank_of(c) for c in hand if suit_of(c) == s))
        )

    def should_knock(self, view: View) -> bool:
        """The Ace always (partner must know); a lower honour when partner knocked the one before it."""
        honour = sum(1 for k in view.knockers if k is not None)
        return honour == 0 or view.knockers[honour - 1] == PARTNER

    def lead(self, view: View) -> int:
        legal, trump = view.legal_cards, view.trump
        side = side_cards(legal, trump)
        # My streak with a lift ready: take it with a sure winner.
        if view.streak == ME and lifts_now(view):
            sure = [c for c in legal if view.sure_to_win(c)]
            if sure:
                return self.lowest(sure, view)
        # Feed partner: a low card of a suit partner is void in (they can ruff it).
        feed = [c for c in side if view.voids[PARTNER, suit_of(c)] and trumps_out(view, PARTNER)
                and not view.voids[RIGHT, suit_of(c)]]  # fmt: skip
        if feed:
            return self.lowest(feed, view)
        sure_side = [c for c in side if view.sure_to_win(c)]
        if sure_side:
            return self.lowest(sure_side, view)
        # Low from my longest side suit: partner (third hand) gets the chance to win it.
        pool = side or legal
        return self.pick(pool, lambda c: (-suit_length(view.hand, suit_of(c)), rank_of(c)))

    def follow(self, view: View) -> int:
        legal, trump = view.legal_cards, view.trump
        best_seat, _ = view.winning()
        later = view.seats_after_me()
        winners = self.winners(view, legal)
        sure = [c for c in winners if view.sure_to_win(c)]
        lift = lifts_now(view)
        if best_seat == PARTNER:
            if partner_is_safe(view) or view.streak == PARTNER or not later:
                return self.discard(view, legal)  # never overtake partner
            # Third hand: the right opponent may beat partner: cover with a sure winner if the pile is worth it.
            if sure and (view.pile >= 1 or lift):
                return self.lowest(sure, view)
            return self.discard(view, legal)
        opponent_lift = lift and view.streak in OPPONENTS
        if len(view.trick) == 1:  # second hand (the right opponent led): low, unless a lift must be stopped
            if opponent_lift and winners:
                return self.lowest(sure, view) if sure else self.highest(winners, view)
            if view.streak == PARTNER and PARTNER in later:
                return self.discard(view, legal)  # leave the trick to partner
            side_sure = side_cards(sure, trump)
            if side_sure and view.pile >= 1:
                return self.lowest(side_sure, view)
            return self.discard(view, legal)
        # An opponent wins the trick (third or fourth hand).
        if sure and (view.pile >= 1 or opponent_lift or not side_cards(legal, trump)):
            side_sure = side_cards(sure, trump)
            return self.lowest(side_sure or sure, view)
        if not later and winners:
            side_winners = side_cards(winners, trump)
            if side_winners or view.pile >= 1 or opponent_lift:
                return self.lowest(side_winners or winners, view)
        if opponent_lift and winners:
            return self.highest(winners, view)
        return self.discard(view, legal)

    def discard(self, view: View, legal: list[int]) -> int:
        """Always the lowest card, trumps last."""
        return self.pick(legal, lambda c: (suit_of(c) == view.trump, rank_of(c)))


# ------------------------------------------------------------------ registry factories
def make_hoarder(seed: int | None = None) -> HoarderAgent:
    """Registry factory of ``gauntlet_hoarder``."""
    return HoarderAgent(seed=seed)


def make_lifter(seed: int | None = None) -> LifterAgent:
    """Registry factory of ``gauntlet_lifter``."""
    return LifterAgent(seed=seed)


def make_reader(seed: int | None = None) -> ReaderAgent:
    """Registry factory of ``gauntlet_reader``."""
    return ReaderAgent(seed=seed)


def make_supporter(seed: int | None = None) -> SupporterAgent:
    """Registry factory of ``gauntlet_supporter``."""
    return SupporterAgent(seed=seed)
