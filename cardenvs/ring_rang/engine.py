"""The RING RANG rules engine: plain state, small explicit transitions, no RL imports.

Rules: docs/ring_rang.md, sections "Rules" and "Decisions" (every choice taken
where the texts are silent, with the gap it closes). The engine is driven by
``legal_actions()`` and ``apply(action)``; ``apply`` trusts its caller (the env
checks the mask first). Randomness comes in as a numpy Generator. Hands and the
played cards are 52-bit int masks (bit = card index).

Decisions recorded here too (one place each):
- Chooser draw: each contender draws one card from a fresh shuffled deck; the
  highest rank chooses; only the players tied for highest draw again.
- Knocking ends as soon as the next honour of the sequence A, K, Q, J is no longer
  in any hand (it was played without its knock, perhaps before its turn came).
- ``stop_when_decided``: a round ends right after a lift leaves one team with >= 7
  lifted tricks and the other with >= 1 (the point is then 1, whatever follows).
- The supporter declaration (variant) may be made once per player per round, on the
  player's own turn in the play phase, before the card (the turn does not pass).
- A knock may come on any own turn of the play phase (leading or following).
- Round k is dealt from ``decks[k]`` when given, else from a shuffle of the RNG; the
  chooser draw (when no chooser is given) comes before the first shuffle.
- In a game the next round is dealt as soon as a round ends; scores are not capped.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from cardenvs.cards import parse_card, parse_deck, rank_of, standard_deck
from cardenvs.core import NOTHING, Outcome

NUM_SEATS = 4
ALL_SEATS = (0, 1, 2, 3)
NUM_TRICKS = 13
SUIT_BITS = 0x1FFF
ALL_CARDS = (1 << 52) - 1
HONOUR_RANKS = (12, 11, 10, 9)  # the knock sequence: A, K, Q, J of trump
HONOUR_NAMES = ("A", "K", "Q", "J")
TARGET_SCORE = 20
TRICKS_TO_WIN = 7  # lifted tricks that win the round
FIRST_LIFT_MIN_PILE = 3  # tricks on the pile for the round's first lift
LATER_LIFT_MIN_PILE = 2  # ... and for every later lift
ROUND_POINTS = 1  # a won round
SLAM_POINTS = 2  # all 13 tricks, by the chooser's team
SLAM_POINTS_DEFENDERS = 3  # all 13 tricks, by the other team (Nullerputz)
MAX_SCORE = 22  # 19 + a 3-point Nullerputz

PHASE_TRUMP, PHASE_PLAY, PHASE_OVER = 0, 1, 2
PHASE_NAMES = ("choose trump", "play", "over")

ACTION_TRUMP = 52  # 52..55 choose trump C, D, H, S
ACTION_KNOCK = 56
ACTION_TURNED = 57  # 57..82 play club/diamond card index (action - 57) turned (signals variant)
ACTION_DECLARE = 83  # declare "supporter" (declarations variant)
NUM_ACTIONS = 57
NUM_ACTIONS_VARIANTS = 84
NUM_TURNABLE = 26  # clubs and diamonds

EPISODES = ("game", "round")

# Deck position -> seat offset from the chooser (docs/ring_rang.md, "Dealing and choosing trump").
DEAL_OFFSETS: tuple[int, ...] = tuple(
    [0] * 5 + [1] * 5 + [2] * 5 + [3] * 5 + [o for _ in range(2) for o in range(4) for _ in range(4)]
)


def team_of(seat: int) -> int:
    return seat & 1


def deal_seats(chooser: int) -> list[int]:
    """The seat that receives each deck position (0 = top card) when ``chooser`` chooses."""
    return [(chooser + offset) & 3 for offset in DEAL_OFFSETS]


def deck_for_hands(hands: list[list[Any]], chooser: int = 0) -> list[int]:
    """The 52-card deck whose deal gives seat s exactly ``hands[s]`` (13 cards each).

    The chooser's first 5 cards are the first 5 of ``hands[chooser]``.
    """
    parsed = [[parse_card(c) for c in hand] for hand in hands]
    if len(parsed) != NUM_SEATS or any(len(h) != NUM_TRICKS for h in parsed):
        raise ValueError("deck_for_hands needs 4 hands of 13 cards")
    taken = [0] * NUM_SEATS
    deck = []
    for seat in deal_seats(chooser):
        deck.append(parsed[seat][taken[seat]])
        taken[seat] += 1
    parse_deck(deck, standard_deck(), "deck built from hands")
    return deck


def draw_chooser(rng: np.random.Generator) -> tuple[int, list[list[tuple[int, int]]]]:
    """Simulated draw for the first chooser: highest rank chooses, the tied highest redraw.

    Returns the chooser and every draw as (seat, card) pairs.
    """
    contenders = list(range(NUM_SEATS))
    draws: list[list[tuple[int, int]]] = []
    while True:
        cards = rng.permutation(52)[: len(contenders)].tolist()
        draw = list(zip(contenders, cards, strict=True))
        draws.append(draw)
        top = max(rank_of(card) for card in cards)
        contenders = [seat for seat, card in draw if rank_of(card) == top]
        if len(contenders) == 1:
            return contenders[0], draws


MAX_SHAPING = 1e6  # |shaping|: larger values would make the rewards overflow to inf (no JSON round trip)


def check_shaping(value: Any, name: str) -> None:
    """``shaping`` must be a number of at most MAX_SHAPING in size (one rule for constructor and snapshot)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not abs(value) <= MAX_SHAPING:
        raise ValueError(f"{name} must be a number in -{MAX_SHAPING:g}..{MAX_SHAPING:g}, got {value!r:.80}")


def trick_winner(leader: int, cards: Any, trump: int) -> tuple[int, int]:
    """(seat, card) winning a trick led by ``leader`` (the highest of the led suit, or the highest trump)."""
    best, seat = cards[0], leader
    for i, card in enumerate(cards[1:], 1):
        if (card // 13 == best // 13 and card > best) or (card // 13 == trump and best // 13 != trump):
            best, seat = card, (leader + i) & 3
    return seat, best


def bits_to_cards(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class RingRangGame:
    """One RING RANG game (or round, for ``episode="round"``) as plain mutable state."""

    def __init__(
        self,
        rng: np.random.Generator,
        *,
        chooser: int | None = None,
        decks: list[list[Any]] | None = None,
        episode: str = "game",
        knocking: bool = True,
        signals: bool = False,
        declarations: bool = False,
        stop_when_decided: bool = False,
        shaping: float = 0.0,
    ):
        if episode not in EPISODES:
            raise ValueError(f"episode must be one of {EPISODES}, got {episode!r}")
        for name, flag in (
            ("knocking", knocking),
            ("signals", signals),
            ("declarations", declarations),
            ("stop_when_decided", stop_when_decided),
        ):
            if not isinstance(flag, (bool, np.bool_)):
                raise ValueError(f"{name} must be a bool, got {flag!r}")
        check_shaping(shaping, "shaping")
        if chooser is not None and (
            isinstance(chooser, bool) or not isinstance(chooser, (int, np.integer)) or not 0 <= chooser < NUM_SEATS
        ):
            raise ValueError(f"option 'chooser' must be a seat 0..3, got {chooser!r}")
        if decks is None:
            decks = []
        if isinstance(decks, (str, bytes)) or not isinstance(decks, (list, tuple)):
            raise ValueError(f"option 'decks' must be a list of decks, got {type(decks).__name__}")
        self.decks = [parse_deck(d, standard_deck(), f"decks[{i}]") for i, d in enumerate(decks)]
        self.rng = rng
        self.episode = episode
        self.knocking = bool(knocking)
        self.signals = bool(signals)
        self.declarations = bool(declarations)
        self.stop_when_decided = bool(stop_when_decided)
        self.shaping = float(shaping)
        self.chooser_draws: list[list[tuple[int, int]]] = []
        if chooser is None:
            chooser, self.chooser_draws = draw_chooser(rng)
        self.chooser = int(chooser)
        self.scores = [0, 0]
        self.round_number = 0
        self.decks_used = 0
        self.rounds: list[dict[str, Any]] = []  # finished rounds
        self.winner_team = -1
        self._start_round()

    # ----------------------------------------------------------- transitions
    def _start_round(self) -> None:
        if self.decks_used < len(self.decks):
            deck = self.decks[self.decks_used]
            self.decks_used += 1
        else:
            deck = self.rng.permutation(52).tolist()
        self.deck = deck
        self.dealer = (self.chooser - 1) & 3
        self.hands = [0, 0, 0, 0]
        hand = 0
        for card in deck[:5]:
            hand |= 1 << card
        self.hands[self.chooser] = hand
        self.phase = PHASE_TRUMP
        self.trump = -1
        self.to_act = self.chooser
        self.leader = self.chooser
        self.trick_cards: list[int] = []
        self.best_card = -1
        self.best_seat = -1
        self.tricks_played = 0
        self.played = 0
        self.pile = 0
        self.streak = -1  # winner of the last trick while that trick is still in the pile
        self.lifted_any = False
        self.lifted = [0, 0]
        self.next_honour = 0
        self.knock_ended = not self.knocking
        self.knockers = [-1, -1, -1, -1]
        self.turned = 0  # bitmask of cards played turned (signals)
        self.declared = [False] * NUM_SEATS
        self.history: list[tuple[int, tuple[int, ...], int, int]] = []  # (leader, cards, winner, lifted)

    def legal_actions(self) -> list[int]:
        """The legal actions of ``to_act`` (empty when the episode is over)."""
        if self.phase == PHASE_PLAY:
            p = self.to_act
            hand = self.hands[p]
            allowed = hand
            if self.trick_cards:
                shift = self.trick_cards[0] // 13 * 13
                same = (hand >> shift) & SUIT_BITS
                if same:
                    allowed = same << shift
            out = []
            while allowed:
                low = allowed & -allowed
                out.append(low.bit_length() - 1)
                allowed ^= low
            if self.signals:
                out += [ACTION_TURNED + c for c in out if c < NUM_TURNABLE]
            if not self.knock_ended and (hand >> (self.trump * 13 + HONOUR_RANKS[self.next_honour])) & 1:
                out.append(ACTION_KNOCK)
            if self.declarations and not self.declared[p]:
                out.append(ACTION_DECLARE)
            return out
        if self.phase == PHASE_TRUMP:
            return [52, 53, 54, 55]
        return []

    # ------------------------------------------------------ the game API (cardenvs.core.Game)
    num_players = NUM_SEATS

    @property
    def num_actions(self) -> int:
        return NUM_ACTIONS_VARIANTS if self.signals or self.declarations else NUM_ACTIONS

    def current_player(self) -> int:
        return self.to_act

    def legal_mask(self) -> np.ndarray:
        mask = np.zeros(self.num_actions, np.int8)
        for action in self.legal_actions():  # scalar writes: twice as fast as a fancy index for ~8 actions
            mask[action] = 1
        return mask

    def step(self, action: int) -> Outcome:
        """:meth:`apply` reported as an :class:`Outcome` (every seat finishes when the episode ends)."""
        rewards = self.apply(action)
        if self.phase == PHASE_OVER:
            return Outcome(rewards, ALL_SEATS)
        return NOTHING if rewards is None else Outcome(rewards)

    def is_over(self) -> bool:
        return self.phase == PHASE_OVER

    def seats_in_play(self) -> list[int]:
        return [] if self.phase == PHASE_OVER else list(ALL_SEATS)

    def observe(self, seat: int) -> np.ndarray:
        return _observation.observe(self, seat)

    def apply(self, action: int) -> tuple[float, ...] | None:
        """Apply a legal action; returns per-seat rewards when some are earned, else None."""
        if self.phase == PHASE_PLAY:
            if action < 52:
                return self._play(action)
            if action == ACTION_KNOCK:
                self._knock()
                return None
            if action == ACTION_DECLARE:
                self.declared[self.to_act] = True
                return None
            self.turned |= 1 << (action - ACTION_TURNED)
            return self._play(action - ACTION_TURNED)
        if self.phase == PHASE_TRUMP:
            self._choose_trump(action - ACTION_TRUMP)
            return None
        raise ValueError("the game is over")

    def _choose_trump(self, suit: int) -> None:
        """The chooser names trump after seeing 5 cards; then the rest of the deck is dealt."""
        self.trump = suit
        hands = self.hands
        chooser = self.chooser
        deck = self.deck
        for position in range(5, 52):
            hands[(chooser + DEAL_OFFSETS[position]) & 3] |= 1 << deck[position]
        self.phase = PHASE_PLAY
        self.to_act = chooser
        self.leader = chooser

    def _next_honour_gone(self) -> bool:
        return bool((self.played >> (self.trump * 13 + HONOUR_RANKS[self.next_honour])) & 1)

    def _knock(self) -> None:
        self.knockers[self.next_honour] = self.to_act
        self.next_honour += 1
        if self.next_honour == 4 or self._next_honour_gone():
            self.knock_ended = True

    def _play(self, card: int) -> tuple[float, ...] | None:
        p = self.to_act
        bit = 1 << card
        self.hands[p] ^= bit
        self.played |= bit
        cards = self.trick_cards
        if cards:
            best = self.best_card
            suit = card // 13
            best_suit = best // 13
            if (suit == best_suit and card > best) or (suit == self.trump and best_suit != suit):
                self.best_card = card
                self.best_seat = p
        else:
            self.leader = p
            self.best_card = card
            self.best_seat = p
        cards.append(card)
        if not self.knock_ended and card == self.trump * 13 + HONOUR_RANKS[self.next_honour]:
            self.knock_ended = True  # the next honour was played without its knock
        if len(cards) < 4:
            self.to_act = (p + 1) & 3
            return None
        return self._finish_trick()

    def _finish_trick(self) -> tuple[float, ...] | None:
        """Winner takes the trick onto the pile, lifting it when the rules allow."""
        winner = self.best_seat
        self.tricks_played += 1
        self.pile += 1
        lift = 0
        needed = LATER_LIFT_MIN_PILE if self.lifted_any else FIRST_LIFT_MIN_PILE
        if self.tricks_played == NUM_TRICKS or (self.streak == winner and self.pile >= needed):
            lift = self.pile
            self.lifted[winner & 1] += lift
            self.pile = 0
            self.lifted_any = True
            self.streak = -1
        else:
            self.streak = winner
        self.history.append((self.leader, tuple(self.trick_cards), winner, lift))
        self.trick_cards = []
        self.to_act = winner
        self.leader = winner
        if self.tricks_played == NUM_TRICKS:
            return self._end_round()
        if lift and self.stop_when_decided and self.decided():
            return self._end_round()
        return None

    def decided(self) -> bool:
        """The round's points are certain (used by ``stop_when_decided``)."""
        a, b = self.lifted
        return self.tricks_played == NUM_TRICKS or (max(a, b) >= TRICKS_TO_WIN and min(a, b) >= 1)

    def round_points(self) -> tuple[int, int]:
        """(winning team, points) of the round as it stands (meaningful once decided)."""
        team = 0 if self.lifted[0] >= TRICKS_TO_WIN else 1
        points = ROUND_POINTS
        if self.lifted[team] == NUM_TRICKS:
            points = SLAM_POINTS if team == (self.chooser & 1) else SLAM_POINTS_DEFENDERS
        return team, points

    def _end_round(self) -> tuple[float, ...] | None:
        team, points = self.round_points()
        self.scores[team] += points
        next_chooser = (self.chooser + 2) & 3 if team == (self.chooser & 1) else (self.chooser + 1) & 3
        self.rounds.append(
            {
                "chooser": self.chooser,
                "trump": self.trump,
                "lifted": list(self.lifted),
                "tricks_played": self.tricks_played,
                "winner_team": team,
                "points": points,
                "next_chooser": next_chooser,
                "history": self.history,
            }
        )
        sign = 1.0 if team == 0 else -1.0
        if self.episode == "round":
            self.phase = PHASE_OVER
            self.winner_team = team
            return (sign * points, -sign * points, sign * points, -sign * points)
        if self.scores[team] >= TARGET_SCORE:
            self.phase = PHASE_OVER
            self.winner_team = team
            return (sign, -sign, sign, -sign)
        self.chooser = next_chooser
        self.round_number += 1
        self._start_round()
        if self.shaping:
            value = sign * points * self.shaping
            return (value, -value, value, -value)
        return None

    # ------------------------------------------------------------- queries
    @property
    def over(self) -> bool:
        return self.phase == PHASE_OVER

    def honour_card(self, index: int) -> int:
        return self.trump * 13 + HONOUR_RANKS[index]

    def clone(self) -> RingRangGame:
        """A fast independent copy (search agents); the RNG is copied too."""
        other = RingRangGame.__new__(RingRangGame)
        other.__dict__.update(self.__dict__)
        other.rng = copy.deepcopy(self.rng)
        other.hands = self.hands[:]
        other.trick_cards = self.trick_cards[:]
        other.lifted = self.lifted[:]
        other.scores = self.scores[:]
        other.knockers = self.knockers[:]
        other.declared = self.declared[:]
        other.history = self.history[:]
        other.rounds = self.rounds[:]
        return other

    # ---------------------------------------------------------------- JSON
    _SCALARS = (
        "episode",
        "knocking",
        "signals",
        "declarations",
        "stop_when_decided",
        "shaping",
        "chooser",
        "round_number",
        "decks_used",
        "winner_team",
        "dealer",
        "phase",
        "trump",
        "to_act",
        "leader",
        "best_card",
        "best_seat",
        "tricks_played",
        "played",
        "pile",
        "streak",
        "lifted_any",
        "next_honour",
        "knock_ended",
        "turned",
    )
    _LISTS = ("decks", "scores", "deck", "hands", "trick_cards", "lifted", "knockers", "declared")

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {name: getattr(self, name) for name in self._SCALARS}
        for name in self._LISTS:
            value = getattr(self, name)
            data[name] = [list(v) for v in value] if name == "decks" else list(value)
        data["chooser_draws"] = [[list(pair) for pair in draw] for draw in self.chooser_draws]
        data["history"] = [_trick_to_json(t) for t in self.history]
        data["rounds"] = [dict(r, history=[_trick_to_json(t) for t in r["history"]]) for r in self.rounds]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], rng: np.random.Generator | None = None) -> RingRangGame:
        """Rebuild a game from :meth:`to_json` data; ValueError naming the field if it is malformed."""
        if not isinstance(data, dict):
            raise ValueError(f"game must be a dict, got {type(data).__name__}")
        missing = [key for key in (*cls._SCALARS, *cls._LISTS, "chooser_draws", "history", "rounds") if key not in data]
        if missing:
            raise ValueError(f"game field(s) {missing} missing")

        def integer(key: str, low: int, high: int, value: Any = None) -> int:
            value = data[key] if value is None else value
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"game field {key!r} must be an int in {low}..{high}, got {value!r:.80}")
            return value

        def ints(key: str, length: int, low: int, high: int) -> list[int]:
            values = data[key]
            if not isinstance(values, list) or len(values) != length:
                raise ValueError(f"game field {key!r} must be a list of {length} ints, got {values!r:.80}")
            return [integer(f"{key}[{i}]", low, high, v) for i, v in enumerate(values)]

        game = cls.__new__(cls)
        if data["episode"] not in EPISODES:
            raise ValueError(f"game field 'episode' must be one of {EPISODES}, got {data['episode']!r}")
        game.episode = data["episode"]
        for key in ("knocking", "signals", "declarations", "stop_when_decided", "lifted_any", "knock_ended"):
            if not isinstance(data[key], bool):
                raise ValueError(f"game field {key!r} must be a bool, got {data[key]!r}")
            setattr(game, key, data[key])
        shaping = data["shaping"]
        check_shaping(shaping, "game field 'shaping'")
        game.shaping = float(shaping)
        game.chooser = integer("chooser", 0, 3)
        game.round_number = integer("round_number", 0, 2**62)
        game.winner_team = integer("winner_team", -1, 1)
        game.dealer = integer("dealer", 0, 3)
        game.phase = integer("phase", PHASE_TRUMP, PHASE_OVER)
        game.trump = integer("trump", -1 if game.phase == PHASE_TRUMP else 0, 3)
        game.to_act = integer("to_act", 0, 3)
        game.leader = integer("leader", 0, 3)
        game.best_card = integer("best_card", -1, 51)
        game.best_seat = integer("best_seat", -1, 3)
        game.tricks_played = integer("tricks_played", 0, NUM_TRICKS)
        game.played = integer("played", 0, ALL_CARDS)
        game.pile = integer("pile", 0, NUM_TRICKS)
        game.streak = integer("streak", -1, 3)
        game.next_honour = integer("next_honour", 0, 4 if game.knock_ended else 3)
        game.turned = integer("turned", 0, (1 << NUM_TURNABLE) - 1)
        if not isinstance(data["decks"], list):
            raise ValueError(f"game field 'decks' must be a list of decks, got {data['decks']!r:.80}")
        game.decks = [parse_deck(d, standard_deck(), f"game field 'decks[{i}]'") for i, d in enumerate(data["decks"])]
        game.decks_used = integer("decks_used", 0, len(game.decks))
        game.deck = parse_deck(data["deck"], standard_deck(), "game field 'deck'")
        game.scores = ints("scores", 2, 0, 2**62)
        game.hands = ints("hands", NUM_SEATS, 0, ALL_CARDS)
        game.trick_cards = ints("trick_cards", len(data["trick_cards"]) if isinstance(data["trick_cards"], list)
                                else -1, 0, 51)  # fmt: skip
        game.lifted = ints("lifted", 2, 0, NUM_TRICKS)
        game.knockers = ints("knockers", 4, -1, 3)
        if (
            not isinstance(data["declared"], list)
            or len(data["declared"]) != 4
            or not all(isinstance(d, bool) for d in data["declared"])
        ):
            raise ValueError(f"game field 'declared' must be a list of 4 bools, got {data['declared']!r:.80}")
        game.declared = list(data["declared"])
        game.chooser_draws = _chooser_draws_from_json(data["chooser_draws"])
        game.history = _tricks_from_json(data["history"], "game field 'history'")
        game.rounds = _rounds_from_json(data["rounds"])
        game._check_consistency()
        game.rng = rng if rng is not None else np.random.default_rng()
        return game

    def _check_consistency(self) -> None:
        """The rules' invariants of a state read from JSON (every card in one place, turns, counts)."""
        if self.dealer != (self.chooser - 1) & 3:
            raise ValueError(f"game field 'dealer' {self.dealer} must sit to the right of chooser {self.chooser}")
        seen = 0
        for seat, hand in enumerate(self.hands):
            if seen & hand:
                raise ValueError(f"game field 'hands[{seat}]' shares cards with another hand")
            seen |= hand
        self._check_settings_and_round()
        self._check_past_rounds()
        if self.phase == PHASE_TRUMP:
            chooser_cards = sum(1 << c for c in self.deck[:5])
            others = [h for s, h in enumerate(self.hands) if s != self.chooser]
            if self.hands[self.chooser] != chooser_cards or any(others) or self.played or self.history:
                raise ValueError("in the trump phase only the chooser holds cards: the first 5 of game field 'deck'")
            fresh = (self.trick_cards, self.tricks_played, self.pile, self.lifted, self.streak, self.lifted_any,
                     self.trump, self.knockers, self.next_honour, self.knock_ended, self.turned, any(self.declared))
            if fresh != ([], 0, 0, [0, 0], -1, False, -1, [-1] * 4, 0, not self.knocking, 0, False):
                raise ValueError("in the trump phase the round has not begun: game fields 'trick_cards', "
                                 "'tricks_played', 'pile', 'lifted', 'streak', 'knockers', ... must be fresh")
            if self.to_act != self.chooser or self.leader != self.chooser:
                raise ValueError("in the trump phase the chooser is to act")
            return
        tricks = [cards for _, cards, _, _ in self.history] + [tuple(self.trick_cards)]
        played = 0
        for cards in tricks:
            for card in cards:
                if played >> card & 1:
                    raise ValueError(f"card {card} is played twice in game fields 'history'/'trick_cards'")
                played |= 1 << card
        if played != self.played or seen & played or seen | played != ALL_CARDS:
            raise ValueError("the cards of game fields 'hands', 'history', 'trick_cards' and 'played' "
                             "are not one 52-card deck")  # fmt: skip
        if len(self.history) != self.tricks_played or any(len(c) != 4 for c in tricks[:-1]):
            raise ValueError("game field 'history' does not hold 'tricks_played' tricks of 4 cards")
        if sum(self.lifted) + self.pile != self.tricks_played:
            raise ValueError("game fields 'lifted' and 'pile' do not add up to 'tricks_played'")
        self._check_tricks()
        if self.phase == PHASE_PLAY:
            if len(self.trick_cards) > 3 or self.tricks_played >= NUM_TRICKS:
                raise ValueError("game fields 'trick_cards'/'tricks_played' do not fit the play phase")
            if self.to_act != (self.leader + len(self.trick_cards)) & 3:
                raise ValueError(f"game field 'to_act' {self.to_act} is not the seat after the trick's last card")
            for seat, hand in enumerate(self.hands):
                in_trick = (seat - self.leader) & 3 < len(self.trick_cards)
                if hand.bit_count() != NUM_TRICKS - self.tricks_played - in_trick:
                    raise ValueError(f"game field 'hands[{seat}]' holds {hand.bit_count()} cards, which does not "
                                     f"fit trick {self.tricks_played + 1}")  # fmt: skip


    def _check_settings_and_round(self) -> None:
        """Variant flags, knocks, scores and decks agree with the settings and the phase (past rounds are free)."""
        if not self.knocking and (not self.knock_ended or self.next_honour or max(self.knockers) >= 0):
            raise ValueError("game fields 'knock_ended'/'knockers'/'next_honour': knocking is off")
        if any((k >= 0) != (i < self.next_honour) for i, k in enumerate(self.knockers)):
            raise ValueError("game field 'knockers' must name a knocker for exactly the first 'next_honour' honours")
        if (not self.signals and self.turned) or (self.turned & ~self.played):
            raise ValueError("game field 'turned' holds a card not played turned (or signals are off)")
        if not self.declarations and any(self.declared):
            raise ValueError("game field 'declared' is set, but declarations are off")
        over = self.phase == PHASE_OVER
        if (self.winner_team >= 0) != over:
            raise ValueError("game field 'winner_team' must be set exactly when the phase is 'over'")
        if self.episode == "round" and self.round_number:
            raise ValueError("game field 'round_number' must be 0 for episode 'round'")
        if self.episode == "game" and (max(self.scores) >= TARGET_SCORE) != over:
            raise ValueError(f"game field 'scores' {self.scores} does not fit the phase (a game ends at 20)")
        if self.decks_used != min(len(self.decks), self.round_number + 1) or (
            self.round_number < len(self.decks) and self.deck != self.decks[self.round_number]
        ):
            raise ValueError("game fields 'deck'/'decks_used' are not the given deck of this round")

    def _check_past_rounds(self) -> None:
        """Each finished round follows the rules as the current one does: a replay of 4-card tricks from its
        chooser's lead, ended as the rules end a round and scored by the rules (a crafted past round crashed a
        render, a replay or the served page later). The scores stay free (a state may start at any score)."""
        for index, past in enumerate(self.rounds):
            where = f"game field 'rounds[{index}]'"
            history = past["history"]
            if len(history) != past["tricks_played"] or any(len(cards) != 4 for _, cards, _, _ in history):
                raise ValueError(f"{where}: 'history' must hold 'tricks_played' tricks of 4 cards")
            played = [card for _, cards, _, _ in history for card in cards]
            if len(set(played)) != len(played):
                raise ValueError(f"{where}: a card is played twice")
            _, _, lifted, _, _ = _replay_tricks(history, past["chooser"], past["trump"], where)
            a, b = lifted
            decided = max(a, b) >= TRICKS_TO_WIN and min(a, b) >= 1
            ended = len(history) == NUM_TRICKS or (self.stop_when_decided and decided)
            if not ended or lifted != past["lifted"]:
                raise ValueError(f"{where}: the round did not end by the rules, or 'lifted' is not its tricks")
            team = 0 if a >= TRICKS_TO_WIN else 1
            points = ROUND_POINTS
            if lifted[team] == NUM_TRICKS:
                points = SLAM_POINTS if team == (past["chooser"] & 1) else SLAM_POINTS_DEFENDERS
            chooser = (past["chooser"] + 2) & 3 if team == (past["chooser"] & 1) else (past["chooser"] + 1) & 3
            if (past["winner_team"], past["points"], past["next_chooser"]) != (team, points, chooser):
                raise ValueError(f"{where}: 'winner_team'/'points'/'next_chooser' are not the rules' result")

    def _check_tricks(self) -> None:
        """Replay the round's tricks: leaders, winners, lifts, pile, streak and knocks agree (the hands are free)."""
        leader, pile, lifted, streak, lifted_any = _replay_tricks(self.history, self.chooser, self.trump,
                                                                  "game field 'history'")
        if (pile, streak, lifted, lifted_any) != (self.pile, self.streak, self.lifted, self.lifted_any):
            raise ValueError("game fields 'pile'/'streak'/'lifted'/'lifted_any' do not follow from 'history'")
        if self.phase == PHASE_PLAY and self.leader != leader:
            raise ValueError(f"game field 'leader' {self.leader} did not win the last trick ({leader})")
        if self.trick_cards and (self.best_seat, self.best_card) != trick_winner(leader, self.trick_cards, self.trump):
            raise ValueError("game fields 'best_card'/'best_seat' are not the best card of 'trick_cards'")
        gone = self.next_honour == 4 or self.played >> self.honour_card(self.next_honour) & 1
        if self.knocking and self.knock_ended != bool(gone):
            raise ValueError("game field 'knock_ended' does not fit 'next_honour' and the cards played")


def _replay_tricks(history: list[tuple[int, tuple[int, ...], int, int]], chooser: int, trump: int,
                   where: str) -> tuple[int, int, list[int], int, bool]:
    """Replay tricks from the chooser's lead: (next leader, pile, lifted, streak, lifted_any) if each trick's
    leader, winner and lift are the rules' (ValueError naming ``where`` otherwise)."""
    leader, pile, streak, lifted, lifted_any = chooser, 0, -1, [0, 0], False
    for number, (first, cards, winner, lift) in enumerate(history, 1):
        if first != leader or trick_winner(first, cards, trump)[0] != winner:
            raise ValueError(f"{where}: trick {number} has the wrong leader or winner")
        pile += 1
        want = 0
        if number == NUM_TRICKS or (streak == winner and pile >= (2 if lifted_any else 3)):
            want, lifted[winner & 1], pile, streak, lifted_any = pile, lifted[winner & 1] + pile, 0, -1, True
        else:
            streak = winner
        if lift != want:
            raise ValueError(f"{where}: trick {number} lifts {lift}, the rules say {want}")
        leader = winner
    return leader, pile, lifted, streak, lifted_any


def _trick_to_json(trick: tuple[int, tuple[int, ...], int, int]) -> dict[str, Any]:
    leader, cards, winner, lift = trick
    return {"leader": leader, "cards": list(cards), "winner": winner, "lifted": lift}


def _int_in(value: Any, low: int, high: int, where: str) -> int:
    """``value`` if it is an int in low..high (not a bool, a float or a string that would convert)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{where} must be an int in {low}..{high}, got {value!r:.80}")
    return value


def _fields(data: Any, keys: tuple[str, ...], where: str) -> dict[str, Any]:
    if not isinstance(data, dict) or set(data) != set(keys):
        raise ValueError(f"{where} must be an object with exactly the keys {list(keys)}, got {data!r:.120}")
    return data


def _tricks_from_json(data: Any, where: str) -> list[tuple[int, tuple[int, ...], int, int]]:
    if not isinstance(data, list) or len(data) > NUM_TRICKS:
        raise ValueError(f"{where} must be a list of at most {NUM_TRICKS} tricks, got {data!r:.80}")
    tricks = []
    for i, trick in enumerate(data):
        at = f"{where}[{i}]"
        trick = _fields(trick, ("leader", "cards", "winner", "lifted"), at)
        cards = trick["cards"]
        if not isinstance(cards, list) or not 1 <= len(cards) <= NUM_SEATS:
            raise ValueError(f"{at}.cards must be a list of 1..{NUM_SEATS} cards, got {cards!r:.80}")
        tricks.append((_int_in(trick["leader"], 0, 3, f"{at}.leader"),
                       tuple(_int_in(c, 0, 51, f"{at}.cards[{j}]") for j, c in enumerate(cards)),
                       _int_in(trick["winner"], 0, 3, f"{at}.winner"),
                       _int_in(trick["lifted"], 0, NUM_TRICKS, f"{at}.lifted")))  # fmt: skip
    return tricks


_ROUND_KEYS = ("chooser", "trump", "lifted", "tricks_played", "winner_team", "points", "next_chooser", "history")


def _rounds_from_json(data: Any) -> list[dict[str, Any]]:
    """The finished rounds, every value checked for type and range (their rules: ``_check_past_rounds``)."""
    if not isinstance(data, list):
        raise ValueError(f"game field 'rounds' must be a list of rounds, got {data!r:.80}")
    rounds = []
    for i, past in enumerate(data):
        at = f"game field 'rounds[{i}]'"
        past = _fields(past, _ROUND_KEYS, at)
        lifted = past["lifted"]
        if not isinstance(lifted, list) or len(lifted) != 2:
            raise ValueError(f"{at}.lifted must be a list of 2 ints, got {lifted!r:.80}")
        rounds.append({
            "chooser": _int_in(past["chooser"], 0, 3, f"{at}.chooser"),
            "trump": _int_in(past["trump"], 0, 3, f"{at}.trump"),
            "lifted": [_int_in(x, 0, NUM_TRICKS, f"{at}.lifted[{j}]") for j, x in enumerate(lifted)],
            "tricks_played": _int_in(past["tricks_played"], 1, NUM_TRICKS, f"{at}.tricks_played"),
            "winner_team": _int_in(past["winner_team"], 0, 1, f"{at}.winner_team"),
            "points": _int_in(past["points"], ROUND_POINTS, SLAM_POINTS_DEFENDERS, f"{at}.points"),
            "next_chooser": _int_in(past["next_chooser"], 0, 3, f"{at}.next_chooser"),
            "history": _tricks_from_json(past["history"], f"{at}.history"),
        })  # fmt: skip
    return rounds


def _chooser_draws_from_json(data: Any) -> list[list[tuple[int, int]]]:
    if not isinstance(data, list):
        raise ValueError(f"game field 'chooser_draws' must be a list, got {data!r:.80}")
    draws = []
    for i, draw in enumerate(data):
        if not isinstance(draw, list):
            raise ValueError(f"game field 'chooser_draws[{i}]' must be a list of [seat, card] pairs")
        pairs = []
        for j, pair in enumerate(draw):
            at = f"game field 'chooser_draws[{i}][{j}]'"
            if not isinstance(pair, list | tuple) or len(pair) != 2:
                raise ValueError(f"{at} must be a [seat, card] pair, got {pair!r:.80}")
            pairs.append((_int_in(pair[0], 0, 3, at + "[0]"), _int_in(pair[1], 0, 51, at + "[1]")))
        draws.append(pairs)
    return draws


# The encoder sits beside the engine and imports it: bound last, when every name above exists (a module
# object, so either module may be imported first).
from . import observation as _observation  # noqa: E402
