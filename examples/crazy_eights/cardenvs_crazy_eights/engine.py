"""The Crazy Eights rules engine: plain state, small transitions, numpy only (``cardenvs.core.Game``).

The rules and every decision are in the env's docs (:mod:`cardenvs_crazy_eights.env`); in short:
2-4 players, one 52-card deck, 7 cards each with 2 players, 5 with 3-4; the next card is the
starter, face up. On your turn play a card of the suit in force or of the top card's rank; an 8
is wild (play it on anything, then name the suit in force: a second decision of the same
player). A player who cannot play draws one card from the stock, then plays that card if it
fits, or passes. An empty stock is rebuilt from the discards under the top
card, shuffled; with nothing left to draw a player who cannot play passes (every other card is
then in a hand, so some player can play: a deal never blocks). First player out wins.

Hands are 52-bit masks (card index = suit * 13 + rank, as in :mod:`cardenvs.cards`), so the
playable cards are one AND. The stock is a list whose END is its top card; so is the pile.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from cardenvs.cards import NUM_RANKS, NUM_SUITS, card_code, parse_card, parse_deck, standard_deck
from cardenvs.core import NOTHING, Outcome

MIN_PLAYERS, MAX_PLAYERS = 2, 4
NUM_CARDS = 52
EIGHT = 6  # the rank index of the 8 (ranks 2..A are 0..12)
NAME_SUIT_OFFSET = 52  # actions 52..55: name the suit C, D, H, S after an 8
DRAW = 56
PASS = 57
NUM_ACTIONS = 58
PLAY, NAME_SUIT, AFTER_DRAW = 0, 1, 2
PHASE_NAMES = ("play", "name a suit", "play the drawn card or pass")
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
WIN_REWARD = 1.0
DEFAULT_MAX_TURNS = 300
MAX_TURNS_LIMIT = 2**62
DECK = standard_deck(1, 0)

SUIT_MASKS = tuple(((1 << NUM_RANKS) - 1) << (NUM_RANKS * suit) for suit in range(NUM_SUITS))
RANK_MASKS = tuple(sum(1 << (suit * NUM_RANKS + rank) for suit in range(NUM_SUITS)) for rank in range(NUM_RANKS))
EIGHTS = RANK_MASKS[EIGHT]


def hand_size_for(num_players: int) -> int:
    """7 cards each with 2 players, 5 with 3 or 4."""
    return 7 if num_players == 2 else 5


def lose_reward(num_players: int) -> float:
    """The reward of every seat but the winner: the deal's rewards sum to zero."""
    return -WIN_REWARD / (num_players - 1)


def bits_to_cards(bits: int) -> list[int]:
    """The card indices of a mask, ascending."""
    cards = []
    while bits:
        low = bits & -bits
        cards.append(low.bit_length() - 1)
        bits ^= low
    return cards


def cards_to_bits(cards: Any) -> int:
    bits = 0
    for card in cards:
        bits |= 1 << card
    return bits


_MASKS: dict[int, np.ndarray] = {}  # legal bits -> the shared read-only mask


class CrazyEightsGame:
    """One deal of Crazy Eights in progress, mutated in place by :meth:`step`."""

    __slots__ = ("num_players", "max_turns", "rng", "dealer", "hands", "stock", "pile", "suit", "phase",
                 "current", "drawn", "turns", "voids", "over", "truncated", "winner", "__weakref__")

    # ------------------------------------------------------------ creation
    @classmethod
    def new(cls, num_players: int, rng: np.random.Generator, dealer: int = 0, deck: list[int] | None = None,
            max_turns: int = DEFAULT_MAX_TURNS) -> CrazyEightsGame:
        """A new deal: ``deck`` (card indices, top first; shuffled with ``rng`` when None) dealt by ``dealer``."""
        if not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"num_players must be {MIN_PLAYERS}..{MAX_PLAYERS}, got {num_players}")
        if deck is None:
            deck = [DECK[i] for i in rng.permutation(NUM_CARDS).tolist()]
        game = cls()
        game.num_players = num_players
        game.max_turns = max_turns
        game.rng = rng
        game.dealer = dealer
        size = hand_size_for(num_players)
        game.hands = [0] * num_players
        for i in range(num_players):  # the player left of the dealer gets the first cards
            seat = (dealer + 1 + i) % num_players
            game.hands[seat] = cards_to_bits(deck[i * size:(i + 1) * size])
        starter = deck[num_players * size]
        game.pile = [starter]
        game.stock = deck[:num_players * size:-1]  # the rest, top card last
        game.suit = starter // NUM_RANKS  # an 8 as starter counts as its own suit
        game.phase = PLAY
        game.current = (dealer + 1) % num_players
        game.drawn = -1
        game.turns = 0
        game.voids = [0] * num_players
        game.over = game.truncated = False
        game.winner = -1
        return game

    def clone(self, rng: np.random.Generator | None = None) -> CrazyEightsGame:
        """An independent copy (the RNG is copied unless one is given)."""
        other = CrazyEightsGame.__new__(CrazyEightsGame)
        for name in ("num_players", "max_turns", "dealer", "suit", "phase", "current", "drawn", "turns", "over",
                     "truncated", "winner"):
            setattr(other, name, getattr(self, name))
        other.hands = self.hands[:]
        other.stock = self.stock[:]
        other.pile = self.pile[:]
        other.voids = self.voids[:]
        if rng is None:
            rng = np.random.Generator(type(self.rng.bit_generator)())
            rng.bit_generator.state = self.rng.bit_generator.state
        other.rng = rng
        return other

    # -------------------------------------------------------------- facts
    @property
    def top(self) -> int:
        return self.pile[-1]

    def playable(self) -> int:
        """The mask of the cards that may go on the pile now: the suit in force, the top's rank, any 8."""
        return SUIT_MASKS[self.suit] | RANK_MASKS[self.top % NUM_RANKS] | EIGHTS

    def can_draw(self) -> bool:
        """A card is left to draw: in the stock, or under the top card to rebuild it from."""
        return bool(self.stock) or len(self.pile) > 1

    def hand_cards(self, seat: int) -> list[int]:
        return bits_to_cards(self.hands[seat])

    def hand_size(self, seat: int) -> int:
        return self.hands[seat].bit_count()

    # ------------------------------------------------------------- the API
    def current_player(self) -> int:
        return self.current

    def legal_bits(self) -> int:
        """The mask of the legal actions, as bits of one int (0 once over)."""
        if self.over:
            return 0
        if self.phase == NAME_SUIT:
            return 0xF << NAME_SUIT_OFFSET
        if self.phase == AFTER_DRAW:
            fits = (1 << self.drawn) & self.playable()
            return fits | 1 << PASS
        bits = self.hands[self.current] & self.playable()
        if bits:  # a player who can play must play (holding an 8, one always can)
            return bits
        return 1 << DRAW if self.can_draw() else 1 << PASS

    def legal_actions(self) -> list[int]:
        return bits_to_cards(self.legal_bits())

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
        """Apply a legal action of the player to act; an illegal one is a ValueError with nothing changed."""
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or \
                not 0 <= action < NUM_ACTIONS or not self.legal_bits() >> int(action) & 1:  # fmt: skip
            raise ValueError(f"illegal action {action!r}; legal: {self.legal_actions()}")
        action = int(action)
        seat = self.current
        if action < NUM_CARDS:
            self.hands[seat] &= ~(1 << action)
            self.pile.append(action)
            self.suit = action // NUM_RANKS
            if not self.hands[seat]:  # out: the deal is won (after an 8 too: no suit to name)
                return self._end(seat)
            if action % NUM_RANKS == EIGHT:
                self.phase = NAME_SUIT
                self.drawn = -1
                return NOTHING
            return self._next_turn()
        if action < DRAW:
            self.suit = action - NAME_SUIT_OFFSET
            return self._next_turn()
        if action == DRAW:
            self.voids[seat] |= 1 << self.suit  # it could not play on this suit
            self._draw(seat)
            self.phase = AFTER_DRAW
            return NOTHING
        # PASS: after a draw (it keeps the drawn card: of its record only this turn's suit stays), or with
        # nothing to play and nothing to draw
        self.voids[seat] = 1 << self.suit if self.phase == AFTER_DRAW else self.voids[seat] | 1 << self.suit
        return self._next_turn()

    def _draw(self, seat: int) -> None:
        if not self.stock:  # rebuild: the discards under the top card, shuffled
            under = self.pile[:-1]
            self.stock = [under[i] for i in self.rng.permutation(len(under)).tolist()]
            del self.pile[:-1]
        card = self.stock.pop()
        self.hands[seat] |= 1 << card
        self.drawn = card

    def _next_turn(self) -> Outcome:
        self.turns += 1
        self.phase = PLAY
        self.drawn = -1
        self.current = (self.current + 1) % self.num_players
        if self.turns >= self.max_turns:
            self.over = self.truncated = True
            return Outcome(truncated=True)
        return NOTHING

    def _end(self, winner: int) -> Outcome:
        """``winner`` went out: the deal ends."""
        self.over = True
        self.winner = winner
        self.phase = PLAY
        self.drawn = -1
        everyone = tuple(range(self.num_players))
        rewards = [lose_reward(self.num_players)] * self.num_players
        rewards[winner] = WIN_REWARD
        return Outcome(tuple(rewards), everyone)

    def rewards(self) -> tuple[float, ...]:
        """The deal's reward of each seat (all 0 until it is won, and in a truncated deal)."""
        n = self.num_players
        if self.winner < 0:
            return (0.0,) * n
        return tuple(WIN_REWARD if seat == self.winner else lose_reward(n) for seat in range(n))

    def is_over(self) -> bool:
        return self.over

    def seats_in_play(self) -> list[int]:
        return [] if self.over else list(range(self.num_players))

    def observe(self, seat: int) -> np.ndarray:
        return _observation.observe(self, seat)

    # ----------------------------------------------------------- snapshots
    def to_json(self) -> dict[str, Any]:
        """The whole state as JSON data (the RNG is the caller's; see :meth:`from_json`)."""
        return {
            "num_players": self.num_players,
            "max_turns": self.max_turns,
            "dealer": self.dealer,
            "hands": [[card_code(c) for c in self.hand_cards(s)] for s in range(self.num_players)],
            "stock_top_first": [card_code(c) for c in reversed(self.stock)],
            "pile": [card_code(c) for c in self.pile],
            "suit": self.suit,
            "phase": self.phase,
            "current": self.current,
            "drawn": None if self.drawn < 0 else card_code(self.drawn),
            "turns": self.turns,
            "voids": self.voids[:],
            "over": self.over,
            "truncated": self.truncated,
            "winner": self.winner,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], rng: np.random.Generator) -> CrazyEightsGame:
        """Rebuild a game from :meth:`to_json` data; a ValueError naming the field if it is malformed."""
        if not isinstance(data, dict):
            raise ValueError(f"game must be a dict, got {type(data).__name__}")

        def get(key: str) -> Any:
            if key not in data:
                raise ValueError(f"game field {key!r} is missing")
            return data[key]

        def integer(key: str, low: int, high: int) -> int:
            value = get(key)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"game field {key!r} must be an int in {low}..{high}, got {value!r:.80}")
            return value

        def flag(key: str) -> bool:
            value = get(key)
            if not isinstance(value, bool):
                raise ValueError(f"game field {key!r} must be a bool, got {value!r:.80}")
            return value

        def cards(key: str, codes: Any) -> list[int]:
            if not isinstance(codes, list):
                raise ValueError(f"game field {key!r} must be a list of card codes, got {codes!r:.80}")
            try:
                parsed = [parse_card(c) for c in codes]
            except ValueError as error:
                raise ValueError(f"game field {key!r}: {error}") from None
            if any(c >= NUM_CARDS for c in parsed):
                raise ValueError(f"game field {key!r}: Crazy Eights has no Joker")
            return parsed

        game = cls()
        n = game.num_players = integer("num_players", MIN_PLAYERS, MAX_PLAYERS)
        game.max_turns = integer("max_turns", 1, MAX_TURNS_LIMIT)
        game.rng = rng
        game.dealer = integer("dealer", 0, n - 1)
        hands = get("hands")
        if not isinstance(hands, list) or len(hands) != n:
            raise ValueError(f"game field 'hands' must be a list of {n} hands, got {hands!r:.80}")
        held = [cards(f"hands[{s}]", hand) for s, hand in enumerate(hands)]
        game.hands = [cards_to_bits(hand) for hand in held]
        game.stock = cards("stock_top_first", get("stock_top_first"))[::-1]
        game.pile = cards("pile", get("pile"))
        if not game.pile:
            raise ValueError("game field 'pile' is empty: the pile always holds its top card")
        everything = Counter([c for hand in held for c in hand] + game.stock + game.pile)
        if everything != Counter(DECK):
            extra = " ".join(card_code(c) for c in sorted((everything - Counter(DECK)).elements()))
            missing = " ".join(card_code(c) for c in sorted((Counter(DECK) - everything).elements()))
            raise ValueError(f"the cards of hands, stock_top_first and pile are not one 52-card deck: "
                             f"extra [{extra}], missing [{missing}]")
        game.suit = integer("suit", 0, NUM_SUITS - 1)
        game.phase = integer("phase", PLAY, AFTER_DRAW)
        game.current = integer("current", 0, n - 1)
        drawn = get("drawn")
        game.drawn = -1 if drawn is None else cards("drawn", [drawn])[0]
        game.turns = integer("turns", 0, MAX_TURNS_LIMIT)
        voids = get("voids")
        if not isinstance(voids, list) or len(voids) != n or \
                any(isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 16 for v in voids):  # fmt: skip
            raise ValueError(f"game field 'voids' must be a list of {n} ints in 0..15, got {voids!r:.80}")
        game.voids = voids[:]
        game.over = flag("over")
        game.truncated = flag("truncated")
        game.winner = integer("winner", -1, n - 1)
        game._check_progress()
        return game

    def _check_progress(self) -> None:
        """The phase, flags and counters of a state read from JSON fit a deal in progress or over."""
        if (self.drawn >= 0) != (self.phase == AFTER_DRAW) or \
                (self.drawn >= 0 and not self.hands[self.current] >> self.drawn & 1):  # fmt: skip
            raise ValueError("game fields 'drawn'/'phase': a drawn card is in the hand of the player to act, "
                             "in phase 2 (after a draw) only")
        if self.top % NUM_RANKS != EIGHT and self.suit != self.top // NUM_RANKS:
            raise ValueError("game field 'suit' must be the top card's suit unless the top card is an 8")
        if self.phase == NAME_SUIT and self.top % NUM_RANKS != EIGHT:
            raise ValueError("game field 'phase' 1 (name a suit) needs an 8 on top")
        empty = [s for s in range(self.num_players) if not self.hands[s]]
        if self.over:
            if self.truncated and self.winner >= 0 or self.phase != PLAY:
                raise ValueError("game fields 'over'/'truncated'/'winner'/'phase': a truncated deal has no winner "
                                 "and an ended one is in phase 0")
            if self.winner >= 0 and empty != [self.winner]:
                raise ValueError("game field 'winner' must be the one player with no card")
            return
        if self.truncated or self.winner >= 0 or empty:
            raise ValueError("game fields 'truncated'/'winner'/'hands': a deal in progress has no winner, "
                             "no truncation and no empty hand")
        if self.turns >= self.max_turns:
            raise ValueError(f"game field 'turns' {self.turns} reached 'max_turns' but the deal is not over")


def result_text(game: CrazyEightsGame) -> str:
    """How a deal ended, in one line."""
    if game.truncated:
        return "deal truncated (turn limit)"
    return f"player_{game.winner} went out and wins"


def arrange_deck(hands: list[list[str | int]], starter: str | int, stock: list[str | int] = (),  # type: ignore[assignment]
                 dealer: int = 0) -> list[str]:
    """A deck (codes, top first) that deals ``hands`` (seat i's cards at ``hands[i]``), the ``starter`` and
    the stock's top cards (``stock``, top first); every other card follows in index order. For tests and
    hand-built positions."""
    n = len(hands)
    used: list[int] = []
    by_seat = [[parse_card(c) for c in hand] for hand in hands]
    size = hand_size_for(n)
    for i in range(n):
        seat = (dealer + 1 + i) % n
        if len(by_seat[seat]) != size:
            raise ValueError(f"seat {seat} needs {size} cards, got {len(by_seat[seat])}")
        used += by_seat[seat]
    used.append(parse_card(starter))
    used += [parse_card(c) for c in stock]
    rest = sorted(set(DECK) - set(used))
    return [card_code(c) for c in parse_deck(used + rest, DECK, "arranged deck")]


# The encoder sits beside the engine and imports it: bound last, when every name above exists.
from . import observation as _observation  # noqa: E402
