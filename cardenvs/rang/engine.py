"""The Rang rules engine: plain state, small explicit transitions, no RL imports.

Rules: docs/rang.md, sections "Rules" and "Rule decisions" (each decision with the gap it closes).
Decisions taken where the texts are silent (also listed in docs/rang.md):

- A play of rank kind ``k`` plays the lowest card index of that rank in the
  hand (suits play no part, so which copy leaves the hand does not matter).
- The discard after an automatic draw may be any card of the hand, the card
  just drawn included.
- A player with no card in hand who is unable to play (only possible after an
  exhausted stock) draws and keeps, like the one-card exception.
- Contested going out: if the next player still in cannot play on the last
  card, the deal ends at once: that player does not draw or discard.
- If the player who went out is to draw 2 after an answer but there is not a
  single card to draw, the going out stands and the deal ends (they score 0).
- The play pile part of the observation is the current play pile (cards
  played since the last stock rebuild); a player's own discards are
  remembered for the whole deal.
- Turn limit: every turn (a play, a draw with or without discard, a pass)
  counts; a deal whose count exceeds ``max_turns_per_deal`` is truncated.

Hands are kept per rank kind (0..12 = ranks 2..A, 13 = Joker) as sorted lists
of card indices, plus a 14-bit mask of the kinds held, so legality is one AND
with a precomputed table. The stock is a list whose END is its top card.
"""

from __future__ import annotations

from bisect import insort
from collections import Counter
from typing import Any, NamedTuple

import numpy as np

from ..cards import JOKER, NUM_RANKS, card_code, parse_deck, standard_deck
from ..core import NOTHING, Outcome

NUM_KINDS = 14  # ranks 2..A and the Joker
JOKER_KIND = 13
ACE_KIND = 12
NUM_ACTIONS = 28
DISCARD_OFFSET = 14
HAND_SIZE = 5
ELIMINATION_TOTAL = 100
TWO_DECKS_FROM = 5  # players still in from which a deal uses two decks (108 cards)
POINTS_SCALE = 100  # episode "deal": each seat's reward is -(its points in the deal) / POINTS_SCALE
WIN_REWARD = 1.0  # episode "match": the last player standing
DEFAULT_MAX_TURNS_PER_DEAL = 2000
MAX_TURNS_LIMIT = 2**62  # the largest max_turns_per_deal (and turn count) a snapshot holds
LOG_TAGS = frozenset({"deal", "rebuild", "draw", "pass", "discard", "play", "out", "back", "end"})

PLAY, PLAY_AFTER_JOKER, DISCARD = 0, 1, 2
PHASE_NAMES = ("play", "play after Joker", "discard")

# Points of a card kind left in hand: 2..10 face, J/Q/K 10, A 11, Joker 15.
KIND_POINTS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10, 11, 15)
# Value for the +-1 rule: Ace low (A=1), 2..10, J=11, Q=12, K=13.
KIND_VALUE = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 1)
ALL_KINDS = (1 << NUM_KINDS) - 1


def _playable_on(top: int) -> int:
    """14-bit mask of the kinds playable on a top card of kind ``top``."""
    if top == JOKER_KIND:
        return ALL_KINDS
    bits = (1 << ACE_KIND) | (1 << JOKER_KIND)
    for kind in range(NUM_RANKS):
        if abs(KIND_VALUE[kind] - KIND_VALUE[top]) <= 1:
            bits |= 1 << kind
    return bits


PLAYABLE_ON: tuple[int, ...] = tuple(_playable_on(top) for top in range(NUM_KINDS))
BIT_KINDS: tuple[tuple[int, ...], ...] = tuple(
    tuple(k for k in range(NUM_KINDS) if bits >> k & 1) for bits in range(1 << NUM_KINDS)
)
DECK_54 = standard_deck(1, 2)
DECK_108 = standard_deck(2, 4)


def kind_of(card: int) -> int:
    return JOKER_KIND if card == JOKER else card % NUM_RANKS


def deck_size_for(players_in: int) -> int:
    """54 cards for 2-4 players still in, 108 for 5 or more."""
    return 108 if players_in >= TWO_DECKS_FROM else 54


def parse_rang_deck(deck: Any, name: str) -> list[int]:
    """A 54- or 108-card Rang deck (codes or indices), checked card by card."""
    if isinstance(deck, (str, bytes)) or not hasattr(deck, "__len__"):
        raise ValueError(f"{name} must be a list of card codes, got {type(deck).__name__}")
    if len(deck) == 54:
        return parse_deck(deck, DECK_54, name)
    if len(deck) == 108:
        return parse_deck(deck, DECK_108, name)
    raise ValueError(f"{name} has {len(deck)} cards; a Rang deck has 54 (2-4 players) or 108 (5+ players)")


def elimination_reward(num_players: int) -> float:
    """Episode "match": the reward of a player who leaves the game (the match's rewards sum to zero)."""
    return -1.0 / (num_players - 1)


_MASKS: dict[int, np.ndarray] = {}  # legal bits -> the shared read-only mask


class DealEnd(NamedTuple):
    """Reported by :meth:`RangGame.apply` when a deal ends (or is truncated)."""

    went_out: int  # seat that went out, -1 when truncated
    points: tuple[int, ...]  # per seat, points of this deal (0 for players not in)
    eliminated: tuple[int, ...]  # seats that left the game with this deal
    winner: int  # last player standing, -1 while the match goes on
    truncated: bool


class RangGame:
    """A Rang match (or a single deal) in progress. Mutated in place by :meth:`apply`."""

    __slots__ = (
        "num_players", "single_deal", "max_turns_per_deal", "rng", "totals", "alive", "dealer",
        "deck_size", "hands", "hand_size", "hand_bits", "stock", "discard", "pile", "top", "pile_counts",
        "own_discards", "phase", "current", "out_seat", "turns", "deal_number", "given_decks",
        "deal_over", "match_over", "truncated", "went_out", "last_points", "last_eliminated", "log",
        "__weakref__",  # a search's memory knows its game by a weak reference (an id() is reused)
    )  # fmt: skip

    # ------------------------------------------------------------ creation
    @classmethod
    def new(
        cls,
        num_players: int,
        rng: np.random.Generator,
        dealer: int = 0,
        decks: list[list[int]] | None = None,
        single_deal: bool = False,
        max_turns_per_deal: int = DEFAULT_MAX_TURNS_PER_DEAL,
        log: bool = False,
    ) -> RangGame:
        """A new match with the first deal done. ``decks`` are parsed decks (see :func:`parse_rang_deck`)."""
        if not 2 <= num_players <= 10:
            raise ValueError(f"num_players must be 2..10, got {num_players}")
        game = cls()
        game.num_players = num_players
        game.single_deal = single_deal
        game.max_turns_per_deal = max_turns_per_deal
        game.rng = rng
        game.totals = [0] * num_players
        game.alive = [True] * num_players
        game.given_decks = [list(d) for d in decks or ()]
        game.deal_number = 0
        game.match_over = False
        game.went_out = -1
        game.last_points = None
        game.last_eliminated = ()
        game.log = [] if log else None
        game._deal(dealer)
        return game

    def clone(self, rng: np.random.Generator | None = None) -> RangGame:
        """A fast independent copy (the RNG is copied unless one is given)."""
        other = RangGame.__new__(RangGame)
        for name in ("num_players", "single_deal", "max_turns_per_deal", "dealer", "deck_size", "top", "phase",
                     "current", "out_seat", "turns", "deal_number", "deal_over", "match_over", "truncated",
                     "went_out", "last_points", "last_eliminated"):  # fmt: skip
            setattr(other, name, getattr(self, name))
        other.totals = self.totals[:]
        other.alive = self.alive[:]
        other.hands = [[cards[:] for cards in hand] for hand in self.hands]
        other.hand_size = self.hand_size[:]
        other.hand_bits = self.hand_bits[:]
        other.stock = self.stock[:]
        other.discard = self.discard[:]
        other.pile = self.pile[:]
        other.pile_counts = self.pile_counts[:]
        other.own_discards = [counts[:] for counts in self.own_discards]
        other.given_decks = [deck[:] for deck in self.given_decks]
        other.log = None if self.log is None else self.log[:]
        if rng is None:
            rng = np.random.Generator(type(self.rng.bit_generator)())
            rng.bit_generator.state = self.rng.bit_generator.state
        other.rng = rng
        return other

    # -------------------------------------------------------------- helpers
    def next_alive(self, seat: int) -> int:
        """The next player still in the game clockwise from ``seat``."""
        n = self.num_players
        alive = self.alive
        seat = (seat + 1) % n
        while not alive[seat]:
            seat = (seat + 1) % n
        return seat

    def players_in(self) -> int:
        return sum(self.alive)

    def _take_deck(self, size: int) -> list[int]:
        for i, deck in enumerate(self.given_decks):
            if len(deck) == size:
                return self.given_decks.pop(i)
        deck = list(DECK_108 if size == 108 else DECK_54)
        return [deck[i] for i in self.rng.permutation(size).tolist()]

    def give(self, seat: int, card: int) -> None:
        """Put ``card`` into ``seat``'s hand (dealing; samplers fill hidden hands with it)."""
        kind = JOKER_KIND if card == JOKER else card % NUM_RANKS
        cards = self.hands[seat][kind]
        if cards:
            insort(cards, card)
        else:
            cards.append(card)
            self.hand_bits[seat] |= 1 << kind
        self.hand_size[seat] += 1

    def _take(self, seat: int, kind: int) -> int:
        cards = self.hands[seat][kind]
        card = cards.pop(0)
        if not cards:
            self.hand_bits[seat] &= ~(1 << kind)
        self.hand_size[seat] -= 1
        return card

    def _deal(self, dealer: int) -> None:
        n = self.num_players
        self.dealer = dealer
        self.deal_number += 1
        self.deck_size = size = deck_size_for(self.players_in())
        deck = self._take_deck(size)
        self.hands = [[[] for _ in range(NUM_KINDS)] for _ in range(n)]
        self.hand_size = [0] * n
        self.hand_bits = [0] * n
        self.own_discards = [[0] * NUM_KINDS for _ in range(n)]
        position = 0
        seat = dealer
        for _ in range(self.players_in()):
            seat = self.next_alive(seat)
            for card in deck[position : position + HAND_SIZE]:
                self.give(seat, card)
            position += HAND_SIZE
        start = deck[position]
        self.pile = [start]
        self.top = kind_of(start)
        self.pile_counts = [0] * NUM_KINDS
        self.pile_counts[self.top] = 1
        self.stock = deck[:position:-1]  # the rest, top card last
        self.discard = []
        self.phase = PLAY
        self.out_seat = -1
        self.turns = 0
        self.deal_over = False
        self.truncated = False
        if self.log is not None:
            self.log.append(("deal", dealer, size, start, tuple(tuple(self.hand_cards(s)) for s in range(n))))
        self._next_turn(dealer)

    def _draw(self, seat: int) -> bool:
        """Draw the stock's top card into ``seat``'s hand, rebuilding the stock if needed."""
        if not self.stock:
            pile = self.pile
            refill = self.discard + pile[:-1]
            if not refill:
                return False
            self.stock = [refill[i] for i in self.rng.permutation(len(refill)).tolist()]
            self.discard = []
            self.pile = pile[-1:]
            self.pile_counts = [0] * NUM_KINDS
            self.pile_counts[self.top] = 1
            if self.log is not None:
                self.log.append(("rebuild", len(self.stock)))
        card = self.stock.pop()
        self.give(seat, card)
        if self.log is not None:
            self.log.append(("draw", seat, card))
        return True

    # ---------------------------------------------------------- transitions
    def _next_turn(self, seat: int) -> None:
        """Pass the turn on from ``seat``: automatic draws and passes until someone must decide."""
        while True:
            self.turns += 1
            if self.turns > self.max_turns_per_deal:
                self.truncated = True
                self.deal_over = True
                self.match_over = True
                return
            seat = self.next_alive(seat)
            if self.hand_bits[seat] & PLAYABLE_ON[self.top]:
                self.current = seat
                self.phase = PLAY
                return
            held = self.hand_size[seat]
            if not self._draw(seat):
                if self.log is not None:
                    self.log.append(("pass", seat))
                continue
            if held >= 2:
                self.current = seat
                self.phase = DISCARD
                return
            # exactly one card (or none) before drawing: keep it, no discard

    def _after_play(self, seat: int) -> None:
        """A play (with the free card after any Joker) is complete."""
        out = self.out_seat
        if out >= 0:  # this play answered a player who went out: they draw 2 and are back in
            self.out_seat = -1
            drew = self._draw(out)
            drew = self._draw(out) or drew
            if not drew:
                self._end_deal(out)
                return
            if self.log is not None:
                self.log.append(("back", out))
        if self.hand_size[seat] == 0:
            self.turns += 1
            answerer = self.next_alive(seat)
            if self.log is not None:
                self.log.append(("out", seat))
            if self.hand_bits[answerer] & PLAYABLE_ON[self.top]:
                self.out_seat = seat
                self.current = answerer
                self.phase = PLAY
                return
            self._end_deal(seat)
            return
        self._next_turn(seat)

    def _end_deal(self, went_out: int) -> None:
        n = self.num_players
        points = [0] * n
        for seat in range(n):
            if self.alive[seat] and seat != went_out:
                hand = self.hands[seat]
                points[seat] = sum(KIND_POINTS[k] * len(hand[k]) for k in range(NUM_KINDS))
        eliminated = []
        for seat in range(n):
            if self.alive[seat]:
                self.totals[seat] += points[seat]
                if self.totals[seat] >= ELIMINATION_TOTAL:
                    eliminated.append(seat)
        self.went_out = went_out
        self.last_points = tuple(points)
        self.last_eliminated = tuple(eliminated)
        self.deal_over = True
        if self.log is not None:
            self.log.append(("end", went_out, tuple(points)))
        if self.single_deal:
            self.match_over = True
            return
        for seat in eliminated:
            self.alive[seat] = False
        if self.players_in() == 1:
            self.match_over = True
            return
        self._deal(self.next_alive(self.dealer))

    # ------------------------------------------------------------- the API
    def legal_bits(self) -> int:
        """28-bit mask of the legal actions (0 when the match is over)."""
        if self.match_over:
            return 0
        bits = self.hand_bits[self.current]
        if self.phase == PLAY:
            return bits & PLAYABLE_ON[self.top]
        if self.phase == PLAY_AFTER_JOKER:
            return bits
        return bits << DISCARD_OFFSET

    def legal_actions(self) -> list[int]:
        if self.match_over:
            return []
        bits = self.hand_bits[self.current]
        if self.phase == PLAY:
            return list(BIT_KINDS[bits & PLAYABLE_ON[self.top]])
        if self.phase == PLAY_AFTER_JOKER:
            return list(BIT_KINDS[bits])
        return [k + DISCARD_OFFSET for k in BIT_KINDS[bits]]

    def apply(self, action: int) -> DealEnd | None:
        """Apply a legal action of the player to act. Returns a :class:`DealEnd` when a deal ended.

        The caller checks legality (:meth:`legal_bits`); an illegal action raises ValueError
        before anything changes.
        """
        if not self.legal_bits() >> action & 1:
            raise ValueError(f"illegal Rang action {action}; legal: {self.legal_actions()}")
        seat = self.current
        deal_number = self.deal_number
        if self.phase == DISCARD:
            kind = action - DISCARD_OFFSET
            card = self._take(seat, kind)
            self.discard.append(card)
            self.own_discards[seat][kind] += 1
            self.phase = PLAY
            if self.log is not None:
                self.log.append(("discard", seat, card))
            self._next_turn(seat)
        else:
            card = self._take(seat, action)
            self.pile.append(card)
            self.top = action
            self.pile_counts[action] += 1
            if self.log is not None:
                self.log.append(("play", seat, card))
            if action == JOKER_KIND and self.hand_size[seat]:
                self.phase = PLAY_AFTER_JOKER
                return None
            self.phase = PLAY
            self._after_play(seat)
        if self.deal_number == deal_number and not self.deal_over:
            return None
        return self._deal_end_report()

    def _deal_end_report(self) -> DealEnd:
        n = self.num_players
        if self.truncated:
            return DealEnd(-1, (0,) * n, (), -1, True)
        winner = -1
        if self.match_over and not self.single_deal:
            winner = self.alive.index(True)
        return DealEnd(self.went_out, self.last_points, self.last_eliminated, winner, False)

    @property
    def done(self) -> bool:
        return self.match_over

    # ------------------------------------------------------ the game API (cardenvs.core.Game)
    def current_player(self) -> int:
        return self.current

    def legal_mask(self) -> np.ndarray:
        """The int8 action mask (read-only: one shared array per distinct mask)."""
        bits = self.legal_bits()
        mask = _MASKS.get(bits)
        if mask is None:
            mask = np.array([bits >> a & 1 for a in range(NUM_ACTIONS)], np.int8)
            mask.flags.writeable = False
            _MASKS[bits] = mask
        return mask

    def step(self, action: int) -> Outcome:
        """:meth:`apply` with the episode's rewards: a deal's points (``single_deal``), or the match's
        elimination and win rewards, each credited to its seat."""
        end = self.apply(action)
        if end is None:
            return NOTHING
        if end.truncated:
            return Outcome(truncated=True)
        n = self.num_players
        if self.single_deal:
            return Outcome(tuple(-p / POINTS_SCALE for p in end.points), tuple(range(n)))
        rewards = [0.0] * n
        finished = list(end.eliminated)
        for seat in finished:
            rewards[seat] = elimination_reward(n)
        if end.winner >= 0:
            rewards[end.winner] = WIN_REWARD
            finished.append(end.winner)
        if not finished:
            return NOTHING
        return Outcome(tuple(rewards), tuple(finished))

    def is_over(self) -> bool:
        return self.match_over

    def seats_in_play(self) -> list[int]:
        return [] if self.match_over else [seat for seat in range(self.num_players) if self.alive[seat]]

    def observe(self, seat: int) -> np.ndarray:
        return _observation.observe(self, seat)

    def hand_cards(self, seat: int) -> list[int]:
        """The cards of a hand, sorted by kind then card index."""
        return [card for cards in self.hands[seat] for card in cards]

    def hand_counts(self, seat: int) -> list[int]:
        return [len(cards) for cards in self.hands[seat]]

    def points_in_hand(self, seat: int) -> int:
        return sum(KIND_POINTS[k] * len(c) for k, c in enumerate(self.hands[seat]))

    # ----------------------------------------------------------- snapshots
    def to_json(self) -> dict[str, Any]:
        """The whole state as JSON data (the RNG is the caller's; see :meth:`from_json`)."""
        return {
            "num_players": self.num_players,
            "single_deal": self.single_deal,
            "max_turns_per_deal": self.max_turns_per_deal,
            "totals": self.totals[:],
            "alive": self.alive[:],
            "dealer": self.dealer,
            "deck_size": self.deck_size,
            "hands": [[card_code(c) for c in self.hand_cards(s)] for s in range(self.num_players)],
            "stock_top_first": [card_code(c) for c in reversed(self.stock)],
            "discard": [card_code(c) for c in self.discard],
            "pile": [card_code(c) for c in self.pile],
            "own_discards": [counts[:] for counts in self.own_discards],
            "phase": self.phase,
            "current": self.current,
            "out_seat": self.out_seat,
            "turns": self.turns,
            "deal_number": self.deal_number,
            "given_decks": [[card_code(c) for c in deck] for deck in self.given_decks],
            "deal_over": self.deal_over,
            "match_over": self.match_over,
            "truncated": self.truncated,
            "went_out": self.went_out,
            "last_points": None if self.last_points is None else list(self.last_points),
            "last_eliminated": list(self.last_eliminated),
            "log": None if self.log is None else [list(e) for e in self.log],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], rng: np.random.Generator) -> RangGame:
        """Rebuild a game from :meth:`to_json` data; ValueError naming the field if it is malformed."""
        from ..cards import parse_card

        if not isinstance(data, dict):
            raise ValueError(f"game must be a dict, got {type(data).__name__}")

        def get(key: str) -> Any:
            if key not in data:
                raise ValueError(f"game field {key!r} is missing")
            return data[key]

        def integer(key: str, low: int, high: int) -> int:
            value = get(key)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"game field {key!r} must be an int in {low}..{high}, got {value!r}")
            return value

        def flag(key: str) -> bool:
            value = get(key)
            if not isinstance(value, bool):
                raise ValueError(f"game field {key!r} must be a bool, got {value!r}")
            return value

        def seq(key: str, length: int | None = None) -> list[Any]:
            value = get(key)
            if not isinstance(value, list) or (length is not None and len(value) != length):
                size = "" if length is None else f" of {length}"
                raise ValueError(f"game field {key!r} must be a list{size}, got {value!r:.80}")
            return value

        def cards(key: str, codes: Any) -> list[int]:
            if not isinstance(codes, list):
                raise ValueError(f"game field {key!r} must be a list of card codes, got {codes!r:.80}")
            try:
                return [parse_card(c) for c in codes]
            except ValueError as error:
                raise ValueError(f"game field {key!r}: {error}") from None

        def ints(key: str, values: Any, length: int, low: int = 0) -> list[int]:
            if (
                not isinstance(values, list)
                or len(values) != length
                or any(isinstance(v, bool) or not isinstance(v, int) or v < low for v in values)
            ):
                raise ValueError(f"game field {key!r} must be a list of {length} ints >= {low}, got {values!r:.80}")
            return list(values)

        game = cls()
        n = game.num_players = integer("num_players", 2, 10)
        game.single_deal = flag("single_deal")
        game.max_turns_per_deal = integer("max_turns_per_deal", 1, MAX_TURNS_LIMIT)
        game.rng = rng
        game.totals = ints("totals", get("totals"), n)
        game.alive = seq("alive", n)
        if not all(isinstance(a, bool) for a in game.alive) or not any(game.alive):
            raise ValueError(f"game field 'alive' must be {n} bools, at least one true, got {game.alive!r}")
        game.alive = list(game.alive)
        game.dealer = integer("dealer", 0, n - 1)
        game.deck_size = get("deck_size")
        if game.deck_size not in (54, 108) or isinstance(game.deck_size, bool):
            raise ValueError(f"game field 'deck_size' must be 54 or 108, got {game.deck_size!r}")
        game.hands = [[[] for _ in range(NUM_KINDS)] for _ in range(n)]
        game.hand_size = [0] * n
        game.hand_bits = [0] * n
        for seat, hand in enumerate(seq("hands", n)):
            for card in cards(f"hands[{seat}]", hand):
                game.give(seat, card)
        game.stock = cards("stock_top_first", get("stock_top_first"))[::-1]
        game.discard = cards("discard", get("discard"))
        game.pile = cards("pile", get("pile"))
        if not game.pile:
            raise ValueError("game field 'pile' is empty: the play pile always holds its top card")
        everything = [c for s in range(n) for c in game.hand_cards(s)] + game.stock + game.discard + game.pile
        have, want = Counter(everything), Counter(DECK_108 if game.deck_size == 108 else DECK_54)
        if have != want:
            extra = " ".join(card_code(c) for c in sorted((have - want).elements()))
            missing = " ".join(card_code(c) for c in sorted((want - have).elements()))
            raise ValueError(
                f"the cards of hands, stock_top_first, discard and pile are not a {game.deck_size}-card deck: "
                f"extra [{extra}], missing [{missing}]"
            )
        game.top = kind_of(game.pile[-1])
        game.pile_counts = [0] * NUM_KINDS
        for card in game.pile:
            game.pile_counts[kind_of(card)] += 1
        game.own_discards = [ints(f"own_discards[{s}]", c, NUM_KINDS) for s, c in enumerate(seq("own_discards", n))]
        game.phase = integer("phase", PLAY, DISCARD)
        game.current = integer("current", 0, n - 1)
        game.out_seat = integer("out_seat", -1, n - 1)
        game.turns = integer("turns", 0, 2**62)
        game.deal_number = integer("deal_number", 1, 2**62)
        game.given_decks = [parse_rang_deck(d, f"given_decks[{i}]") for i, d in enumerate(seq("given_decks"))]
        game.deal_over = flag("deal_over")
        game.match_over = flag("match_over")
        game.truncated = flag("truncated")
        game.went_out = integer("went_out", -1, n - 1)
        points = get("last_points")
        game.last_points = None if points is None else tuple(ints("last_points", points, n))
        game.last_eliminated = tuple(ints("last_eliminated", seq("last_eliminated"), len(get("last_eliminated"))))
        if any(s >= n for s in game.last_eliminated):
            raise ValueError(f"game field 'last_eliminated' holds a seat out of range: {game.last_eliminated}")
        log = get("log")
        if log is not None and (not isinstance(log, list) or not all(_is_log_entry(e) for e in log)):
            raise ValueError(f"game field 'log' must be null or a list of log entries, got {log!r:.80}")
        game.log = None if log is None else [tuple(e) for e in log]
        game._check_progress()
        return game

    def _check_progress(self) -> None:
        """The flags, totals and turns of a state read from JSON fit a match (or deal) in progress or over."""
        n = self.num_players
        if self.single_deal and (self.deal_number != 1 or not all(self.alive)):
            raise ValueError("game fields 'deal_number'/'alive': a single deal is deal 1, with everyone in")
        if not self.single_deal and any(alive != (total < ELIMINATION_TOTAL) for alive, total in
                                        zip(self.alive, self.totals, strict=True)):
            raise ValueError(f"game fields 'alive'/'totals': a player leaves at {ELIMINATION_TOTAL} points")
        if self.truncated and not self.match_over or self.match_over != self.deal_over:
            raise ValueError("game fields 'deal_over'/'match_over'/'truncated' disagree (a deal in progress has "
                             "all three false; an ended episode has deal_over and match_over)")
        if self.match_over:
            if self.out_seat >= 0:
                raise ValueError("game field 'out_seat' must be -1 once the episode is over")
            return
        if self.players_in() < 2 or self.deck_size != deck_size_for(self.players_in()):
            raise ValueError(f"game field 'deck_size' {self.deck_size} does not fit {self.players_in()} players in")
        if self.turns > self.max_turns_per_deal + 1:
            raise ValueError(f"game field 'turns' {self.turns} is past 'max_turns_per_deal' but not truncated")
        if not self.alive[self.current]:
            raise ValueError(f"game field 'current' {self.current} is a player out of the game")
        if not self.legal_bits():
            raise ValueError(f"player {self.current} to act has no legal action in phase {self.phase}")
        if any(self.hand_size[s] for s in range(n) if not self.alive[s]):
            raise ValueError("a player out of the game holds cards")
        out = self.out_seat
        if out >= 0 and (not self.alive[out] or self.hand_size[out] or self.phase == DISCARD
                         or self.current != self.next_alive(out)):
            raise ValueError(f"game field 'out_seat' {out} is not a player still in who went out and awaits "
                             "the next player's answer")


def _is_log_entry(entry: Any, depth: int = 0) -> bool:
    """A log entry as :meth:`RangGame.to_json` writes it: [tag, ints or nested lists of ints...]."""
    if depth == 0:
        return isinstance(entry, list) and bool(entry) and entry[0] in LOG_TAGS and \
            all(_is_log_entry(item, 1) for item in entry[1:])  # fmt: skip
    if isinstance(entry, list):
        return depth < 3 and all(_is_log_entry(item, depth + 1) for item in entry)
    return isinstance(entry, int) and not isinstance(entry, bool)


def arrange_deck(
    hands: dict[int, list[str | int]] | list[list[str | int]],
    start: str | int,
    stock: list[str | int] = (),  # type: ignore[assignment]
    dealer: int = 0,
    num_players: int | None = None,
    alive: list[bool] | None = None,
) -> list[str]:
    """A deck (codes, top first) that deals the given hands, start card and stock top.

    ``hands`` maps seat -> its 5 cards (a list is seats 0..N-1). The deal order is
    dealer+1, ..., dealer among the players still in (``alive``); after the start
    card come ``stock`` (top first) and then every unused card in index order.
    """
    from collections import Counter

    from ..cards import CODES, parse_card

    if not isinstance(hands, dict):
        hands = dict(enumerate(hands))
    n = num_players or len(hands)
    alive = alive or [True] * n
    size = deck_size_for(sum(alive))
    left = Counter(DECK_108 if size == 108 else DECK_54)
    deck: list[int] = []

    def use(code: str | int) -> None:
        card = parse_card(code)
        if left[card] <= 0:
            raise ValueError(f"card {CODES[card]} used more often than a {size}-card deck holds")
        left[card] -= 1
        deck.append(card)

    seat = dealer
    for _ in range(sum(alive)):
        seat = (seat + 1) % n
        while not alive[seat]:
            seat = (seat + 1) % n
        if len(hands[seat]) != HAND_SIZE:
            raise ValueError(f"seat {seat} needs {HAND_SIZE} cards, got {len(hands[seat])}")
        for code in hands[seat]:
            use(code)
    use(start)
    for code in stock:
        use(code)
    deck.extend(sorted(left.elements()))
    return [CODES[c] for c in deck]


# The encoder sits beside the engine and imports it: bound last, when every name above exists (a module
# object, so either module may be imported first).
from . import observation as _observation  # noqa: E402
