"""Play against agents in the terminal: ``cardenvs play ring-rang`` / ``cardenvs play rang --players 3``.

The human takes a seat (``--seat``); the other seats are agents from the
registry (``--opponents rules_strong`` for all, or one spec per other seat).
The human sees only what that seat may know: the own hand, the table, the
public counts. A move is typed as its number in the list of legal moves, or by
name: a card code (``QH``, ``10D``, ``JK``; in Rang a rank such as ``Q``, ``7``,
``10``, ``JK``), a trump suit letter (``H``), ``k`` to knock. ``q`` quits (in
Rang, where ``Q`` is a rank, only the lower-case ``q`` quits). Colours follow
``--no-color`` and the ``NO_COLOR`` environment variable. ``--record game.json``
saves the game for ``cardenvs replay``.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardenvs.cards import CODES, JOKER, RANKS, SUIT_SYMBOLS, SUITS, parse_card, pretty, rank_text
from cardenvs.games import game_spec

SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
RELATIVE = ("you", "left", "partner", "right")  # RING RANG seats seen from the human
DEFAULT_OPPONENT = "rules_strong"


class QuitGame(Exception):
    """The human typed ``q``."""


@dataclass
class Choice:
    """One legal move as shown to the human: the env action, its label, and the words that select it."""

    action: int
    label: str
    keys: set[str] = field(default_factory=set)


# ------------------------------------------------------------------ cards as text
def card_text(card: int, color: bool) -> str:
    """``Q♥``, ``10♦``, ``JK`` (:func:`cardenvs.cards.pretty`, the notation of every view); red suits red,
    the Joker magenta when ``color``."""
    if card == JOKER:
        return f"\x1b[35m{pretty(card)}\x1b[0m" if color else pretty(card)
    return pretty(card, color)


def suit_text(suit: int, color: bool) -> str:
    symbol = SUIT_SYMBOLS[suit]
    return f"\x1b[31m{symbol}\x1b[0m" if color and suit in (1, 2) else symbol


def _code_keys(card: int) -> set[str]:
    """The words that name a card: ``qh``, ``q♥`` (and ``10d``/``td`` for a ten), ``jk``/``joker``."""
    if card == JOKER:
        return {"jk", "joker"}
    code = CODES[card].lower()
    keys = {code, code[0] + SUIT_SYMBOLS[card // 13]}
    if code[0] == "t":
        keys |= {"10" + code[1], "10" + SUIT_SYMBOLS[card // 13]}
    return keys


def use_color(no_color_flag: bool, stream: Any = None) -> bool:
    """Colours unless ``--no-color``, ``NO_COLOR`` is set (any value), or the output is not a terminal."""
    if no_color_flag or os.environ.get("NO_COLOR", "") != "":
        return False
    stream = sys.stdout if stream is None else stream
    return bool(getattr(stream, "isatty", lambda: False)())


# ------------------------------------------------------------------ legal moves
def ring_rang_choices(game: Any, legal: Sequence[int], action_names: Sequence[str], color: bool) -> list[Choice]:
    """The legal RING RANG moves of the seat to act, as numbered choices."""
    from cardenvs.ring_rang.engine import ACTION_DECLARE, ACTION_KNOCK, ACTION_TRUMP, ACTION_TURNED

    choices = []
    for action in legal:
        if action < 52:
            choices.append(Choice(action, card_text(action, color), _code_keys(action)))
        elif ACTION_TRUMP <= action < ACTION_KNOCK:
            suit = action - ACTION_TRUMP
            keys = {SUITS[suit].lower(), SUIT_NAMES[suit], SUIT_SYMBOLS[suit]}
            choices.append(Choice(action, f"trump {suit_text(suit, color)} {SUIT_NAMES[suit]}", keys))
        elif action == ACTION_KNOCK:
            honour = "AKQJ"[game.next_honour]
            choices.append(Choice(action, f"knock (I hold the trump {honour})", {"k", "knock"}))
        elif ACTION_TURNED <= action < ACTION_DECLARE:
            card = action - ACTION_TURNED
            keys = {key + "!" for key in _code_keys(card)}
            choices.append(Choice(action, card_text(card, color) + " turned", keys))
        elif action == ACTION_DECLARE:
            choices.append(Choice(action, "declare supporter", {"d", "declare"}))
        else:  # an action added by a later variant: selectable by number and by its name
            choices.append(Choice(action, action_names[action], {action_names[action].lower()}))
    return choices


def rang_choices(game: Any, legal: Sequence[int], color: bool) -> list[Choice]:
    """The legal Rang moves (play or discard a rank) of the seat to act, as numbered choices."""
    from cardenvs.rang.engine import DISCARD_OFFSET, JOKER_KIND

    hand = game.hands[game.current]
    choices = []
    for action in legal:
        kind = action % DISCARD_OFFSET
        cards = hand[kind]
        verb = "discard " if action >= DISCARD_OFFSET else ""
        if kind == JOKER_KIND:
            keys = {"jk", "joker"}
            label = verb + card_text(JOKER, color)
        else:
            rank = RANKS[kind]
            keys = {rank.lower(), "10"} if rank == "T" else {rank.lower()}
            for card in cards:
                keys |= _code_keys(card)
            shown = " ".join(card_text(c, color) for c in cards)
            label = verb + ("10" if rank == "T" else rank) + (f" ({shown})" if len(cards) > 0 else "")
        choices.append(Choice(action, label, keys))
    return choices


def parse_choice(text: str, choices: Sequence[Choice], rank_q: bool = False) -> int:
    """The action the human typed: a number from the list or a word naming a legal move.

    Raises :class:`QuitGame` for ``q``/``quit`` (with ``rank_q``, as in Rang where
    ``Q`` is the Queen, only the lower-case ``q`` and ``quit`` quit) and
    ``ValueError`` with a message for the human otherwise.
    """
    typed = text.strip()
    lowered = typed.lower()
    if lowered == "quit" or (typed == "q" if rank_q else lowered == "q"):
        raise QuitGame
    numbers = "1" if len(choices) == 1 else f"1-{len(choices)}"
    if not typed:
        raise ValueError(f"type the number of a move, {numbers} (or q to quit)")
    if typed.isdigit() and not any(lowered in c.keys for c in choices):
        number = int(typed)
        if 1 <= number <= len(choices):
            return choices[number - 1].action
        raise ValueError(f"there is no move number {number}; choose {numbers}")
    for choice in choices:
        if lowered in choice.keys:
            return choice.action
    raise ValueError(f"{typed!r} is not a legal move now; type a number {numbers} or a move shown above")


class NotLegalNow(ValueError):
    """The human named a real move (a card, a rank) that the rules do not allow now; the message says why."""


def choices_text(choices: Sequence[Choice]) -> str:
    return "  ".join(f"[{i}] {c.label}" for i, c in enumerate(choices, 1))


# ------------------------------------------------------------------ each game's table, as text
class RingRangText:
    """What a RING RANG player at ``seat`` reads: the table, the moves, the events, why a move is not legal."""

    rank_q = False  # "q" quits (no rank is typed alone)

    def __init__(self, raw: Any, seat: int, color: bool):
        self.raw, self.seat, self.color = raw, seat, color

    def where(self, seat: int) -> str:
        """Where a seat sits, seen from the player: `` (left)``."""
        return f" ({RELATIVE[(seat - self.seat) & 3]})"

    def who(self, seat: int) -> str:
        return f"player_{seat}{self.where(seat)}"

    def input_help(self) -> str:
        return "(type the number, or a card code such as QH / 10D, a trump letter C D H S, k to knock; q quits)"

    def choices(self, legal: Sequence[int]) -> list[Choice]:
        return ring_rang_choices(self.raw.game, legal, self.raw.action_names, self.color)

    def facts(self) -> dict[str, Any]:
        """What the event lines compare before and after a step."""
        game = self.raw.game
        return {"tricks": len(game.history), "rounds": len(game.rounds), "next_honour": game.next_honour}

    def why_not(self, typed: str) -> str | None:
        """Why a typed card is not legal now; None when the text names no card."""
        try:
            card = parse_card(typed)
        except ValueError:
            return None
        game, shown = self.raw.game, pretty(card)
        if card == JOKER:
            return "RING RANG has no Joker"
        if game.trump < 0:
            return f"{shown} cannot be played yet: first the trump is chosen (C, D, H or S)"
        if not game.hands[self.seat] >> card & 1:
            return f"you do not hold {shown}"
        if game.trick_cards:
            led = game.trick_cards[0] // 13
            if card // 13 != led and game.hands[self.seat] >> (led * 13) & 0x1FFF:
                return f"{shown} is not legal now: you must follow {SUIT_SYMBOLS[led]} (you hold {SUIT_SYMBOLS[led]})"
        return None

    def table(self) -> str:
        game, me, c = self.raw.game, self.seat, self.color
        own, other = me & 1, 1 - (me & 1)
        trump = suit_text(game.trump, c) + " " + SUIT_NAMES[game.trump] if game.trump >= 0 else "not chosen yet"
        lines = [
            "",
            f"--- round {game.round_number + 1}, trick {min(game.tricks_played + 1, 13)}/13, trump {trump}; "
            f"chooser {self.who(game.chooser)}, dealer {self.who(game.dealer)}",
            f"    score: us {game.scores[own]}, them {game.scores[other]}   lifted this round: us "
            f"{game.lifted[own]}, them {game.lifted[other]}   pile: {game.pile} trick(s)"
            + (f", last won by {self.who(game.streak)}" if game.streak >= 0 else ""),
        ]
        knocks = [f"{'AKQJ'[h]} by {self.who(s)}" for h, s in enumerate(game.knockers) if s >= 0]
        if knocks:
            lines.append("    knocks: " + ", ".join(knocks))
        if game.trick_cards:
            played = ", ".join(
                f"{self.who((game.leader + i) & 3)} {card_text(card, c)}" for i, card in enumerate(game.trick_cards)
            )
            lines.append(f"    trick so far: {played}")
        elif game.phase == 1:
            lines.append("    you lead this trick")
        lines.append("    your hand: " + self.hand(game.hands[me]))
        return "\n".join(lines)

    def hand(self, hand: int) -> str:
        groups = []
        for suit in range(4):
            cards = [card for card in range(suit * 13 + 12, suit * 13 - 1, -1) if hand >> card & 1]
            if cards:
                groups.append(" ".join(card_text(card, self.color) for card in cards))
        return "   ".join(groups) or "-"

    def events(self, seat: int, action: int, before: dict[str, Any]) -> list[str]:
        from cardenvs.ring_rang.engine import ACTION_KNOCK, ACTION_TRUMP, ACTION_TURNED

        game, c = self.raw.game, self.color
        lines = []
        actor = self.who(seat)
        if action < 52 or ACTION_TURNED <= action < ACTION_TURNED + 26:
            card = action if action < 52 else action - ACTION_TURNED
            if seat != self.seat:
                lines.append(f"  {actor} plays {card_text(card, c)}" + (" turned" if action >= 52 else ""))
        elif ACTION_TRUMP <= action < ACTION_KNOCK:
            suit = action - ACTION_TRUMP
            lines.append(f"  {actor} chooses trump: {suit_text(suit, c)} {SUIT_NAMES[suit]}")
        elif action == ACTION_KNOCK:
            lines.append(f"  {actor} knocks: holds the trump {'AKQJ'[before['next_honour']]}")
        else:
            lines.append(f"  {actor}: {self.raw.action_names[action]}")
        round_over = len(game.rounds) > before["rounds"]
        history = game.rounds[-1]["history"] if round_over else game.history
        if len(history) > before["tricks"]:
            leader, cards, winner, lift = history[-1]
            played = ", ".join(f"{RELATIVE[((leader + i) - self.seat) & 3]} {card_text(x, c)}"
                               for i, x in enumerate(cards))  # fmt: skip
            line = f"  trick {len(history)}: {played} -> won by {self.who(winner)}"
            if lift:
                side = "your team" if (winner & 1) == (self.seat & 1) else "the other team"
                line += f", who lifts the pile of {lift} for {side}"
            lines.append(line)
        if round_over:
            done = game.rounds[-1]
            own = self.seat & 1
            team = "your team" if done["winner_team"] == own else "the other team"
            lines.append(
                f"  === round over: lifted us {done['lifted'][own]}, them {done['lifted'][1 - own]}: {team} "
                f"wins {done['points']} point(s). Score: us {game.scores[own]}, them {game.scores[1 - own]}"
            )
        return lines

    def result(self) -> str:
        game = self.raw.game
        own = self.seat & 1
        team = "YOUR TEAM WINS" if game.winner_team == own else "the other team wins"
        what = "round" if game.episode == "round" else "game"
        return f"=== {what} over: {team}. Score: us {game.scores[own]}, them {game.scores[1 - own]}"


class RangText:
    """What a Rang player at ``seat`` reads (the cards drawn since the player's last move are named)."""

    rank_q = True  # Q is a rank: only the lower-case "q" quits

    def __init__(self, raw: Any, seat: int, color: bool):
        self.raw, self.seat, self.color = raw, seat, color
        self.known_hand: Counter[int] | None = None  # the player's hand after their last move

    def where(self, seat: int) -> str:
        return ""

    def who(self, seat: int) -> str:
        return "you" if seat == self.seat else f"player_{seat}"

    def input_help(self) -> str:
        return "(type the number, or the rank: 2-10, J, Q, K, A, JK; a card code such as 7C works too; q quits)"

    def choices(self, legal: Sequence[int]) -> list[Choice]:
        return rang_choices(self.raw.game, legal, self.color)

    def facts(self) -> Any:
        return self.raw.game.clone()

    def why_not(self, typed: str) -> str | None:
        """Why a typed rank or card is not legal now; None when the text names neither."""
        from cardenvs.rang.engine import DISCARD, JOKER_KIND

        lowered = typed.lower()
        if lowered in ("jk", "joker"):
            kind = JOKER_KIND
        elif lowered in ("10", "t") or (len(lowered) == 1 and lowered.upper() in RANKS):
            kind = RANKS.index("T" if lowered in ("10", "t") else lowered.upper())
        else:
            try:
                card = parse_card(typed)
            except ValueError:
                return None
            kind = JOKER_KIND if card == JOKER else card % 13
        game = self.raw.game
        shown = rank_text(kind)
        if not game.hands[self.seat][kind]:
            return f"you hold no {shown}"
        if game.phase == DISCARD:
            return None
        top = pretty(game.pile[-1])
        return (f"{shown} does not go on {top}: play one rank up, one down or the same, an Ace or the Joker "
                "(or see the moves above)")

    def table(self) -> str:
        from cardenvs.rang.engine import DISCARD

        game, me, c = self.raw.game, self.seat, self.color
        hand = game.hand_cards(me)
        lines = [
            "",
            f"--- deal {game.deal_number} ({game.deck_size} cards), dealer {self.who(game.dealer)}; "
            f"top card {card_text(game.pile[-1], c)}; stock {len(game.stock)}, discard pile {len(game.discard)}",
        ]
        others = []
        for i in range(1, self.raw.num_players):
            seat = (me + i) % self.raw.num_players
            if not game.alive[seat]:
                others.append(f"player_{seat}: out")
                continue
            note = " (went out, you must answer if you can)" if seat == game.out_seat else ""
            others.append(f"player_{seat}: {_cards(game.hand_size[seat])}, {game.totals[seat]} pts{note}")
        lines.append("    " + "; ".join(others))
        lines.append(f"    your points: {game.totals[me]}")
        if self.known_hand is not None:
            new = Counter(hand) - self.known_hand
            if new:
                lines.append("    you drew: " + " ".join(card_text(x, c) for x in sorted(new.elements())))
        if game.phase == DISCARD:
            lines.append(f"    you cannot play on {card_text(game.pile[-1], c)}: discard one card face down")
        elif game.phase == 1:
            lines.append("    you played a Joker: play one more card of your choice")
        lines.append("    your hand: " + " ".join(card_text(x, c) for x in hand))
        return "\n".join(lines)

    def events(self, seat: int, action: int, before: Any) -> list[str]:
        from cardenvs.rang.engine import DISCARD_OFFSET

        game, c = self.raw.game, self.color
        lines = []
        actor = self.who(seat)
        kind = action % DISCARD_OFFSET
        card = before.hands[seat][kind][0]  # the engine plays/discards the lowest card index of the rank
        if action >= DISCARD_OFFSET:
            lines.append(f"  {actor} discard{'s a card' if seat != self.seat else ' ' + card_text(card, c)} face down")
        else:
            lines.append(f"  {actor} play{'s' if seat != self.seat else ''} {card_text(card, c)}")
        new_deal = game.deal_number != before.deal_number
        if game.match_over or new_deal:
            self.known_hand = Counter(game.hand_cards(self.seat)) if new_deal else None
            if game.truncated:
                lines.append("  === the deal hit the turn limit and is cut short")
                return lines
            points = ", ".join(f"player_{s} {p}" for s, p in enumerate(game.last_points) if before.alive[s])
            totals = ", ".join(f"player_{s} {t}" for s, t in enumerate(game.totals) if before.alive[s])
            lines.append(f"  === deal over: {self.who(game.went_out)} went out. Points: {points}. Totals: {totals}")
            for out in game.last_eliminated:
                lines.append(f"  {self.who(out)} reached 100 and leave{'s' if out != self.seat else ''} the game")
            return lines
        if game.out_seat >= 0 and before.out_seat < 0:
            lines.append(f"  {self.who(game.out_seat)} went out! {self.who(game.current)} must answer")
        elif before.out_seat >= 0 and game.out_seat < 0:
            back = "are" if before.out_seat == self.seat else "is"
            lines.append(f"  {self.who(before.out_seat)} drew 2 and {back} back in the deal")
        for other in range(self.raw.num_players):
            grown = game.hand_size[other] - before.hand_size[other]
            if other != seat and other != before.out_seat and grown > 0:
                kept = " (kept: had one card)" if game.current != other else ""
                lines.append(f"  {self.who(other)} cannot play and draw{'s' if other != self.seat else ''} "
                             f"{_cards(grown)}{kept}")  # fmt: skip
        if seat == self.seat:
            self.known_hand = Counter(game.hand_cards(self.seat))
        return lines

    def result(self) -> str:
        game = self.raw.game
        if game.truncated:
            return "=== stopped at the turn limit"
        if game.single_deal:
            mine = game.last_points[self.seat]
            return f"=== deal over: {self.who(game.went_out)} went out; your points this deal: {mine}"
        winner = game.alive.index(True)
        return f"=== match over: {'YOU WIN' if winner == self.seat else f'player_{winner} wins'}"


def _cards(count: int) -> str:
    return "a card" if count == 1 else f"{count} cards"


# ------------------------------------------------------------------ the session
class TerminalGame:
    """One game in the terminal: the env loop with one human seat and agents elsewhere."""

    def __init__(
        self,
        game_name: str,
        env_kwargs: dict[str, Any],
        seat: int,
        opponents: Sequence[str],
        seed: int | None,
        color: bool,
        read: Callable[[str], str] = input,
        write: Callable[[str], None] = print,
    ):
        from cardenvs.agents.registry import make_agent
        from cardenvs.replay import make_env

        self.game_name = game_name
        self.env_kwargs = dict(env_kwargs)
        self.env = make_env(game_name, env_kwargs)
        self.raw = self.env.unwrapped
        self.num_players = self.raw.num_players
        if not 0 <= seat < self.num_players:
            raise ValueError(f"--seat must be 0..{self.num_players - 1}, got {seat}")
        others = [s for s in range(self.num_players) if s != seat]
        specs = list(opponents)
        if len(specs) == 1:
            specs = specs * len(others)
        if len(specs) != len(others):
            raise ValueError(f"--opponents: give 1 spec or {len(others)} (one per other seat), got {len(specs)}")
        spec = game_spec(game_name)
        env_info = spec.env_info(self.num_players)
        base_seed = 0 if seed is None else seed
        self.agents = {
            s: make_agent(spec, game_name, seed=base_seed + 1000 + s, **env_info)
            for s, spec in zip(others, specs, strict=True)
        }
        self.specs = ["human" if s == seat else self.agents[s].name for s in range(self.num_players)]
        self.seat = seat
        self.seed = seed
        self.color = color
        self.read = read
        self.write = write
        self.text = spec.part("text")(self.raw, seat, color)
        self.heading = spec.heading(self.num_players)  # "RING RANG", "Rang, 5 players"
        self.actions: list[int] = []
        self.decisions = 0

    # ------------------------------------------------------------- the loop
    def run(self) -> bool:
        """Play to the end; returns False when the human quit."""
        env = self.env
        env.reset(seed=self.seed)
        for agent in self.agents.values():
            agent.reset(seed=None)
        self.write(self.intro())
        try:
            return self._loop()
        except KeyboardInterrupt:  # Ctrl-C: stop like q, so --record still saves the moves so far
            self.write("\nInterrupted (Ctrl-C): the game stops here.")
            return False
        finally:
            self.write(self.outro())

    def _loop(self) -> bool:
        env = self.env
        for agent_name in env.agent_iter():
            _obs, _reward, termination, truncation, _info = env.last()
            if termination or truncation:
                env.step(None)
                continue
            seat = self.raw.possible_agents.index(agent_name)
            if seat == self.seat:
                try:
                    action = self.ask_human()
                except QuitGame:
                    self.write("You quit the game.")
                    return False
            else:
                if getattr(self.agents[seat], "needs_env", False):  # search agents, as in train/evaluate.py
                    self.agents[seat].observe_env(env)
                action = self.agents[seat].act(env.observe(agent_name))
            before = self.text.facts()
            env.step(action)
            self.actions.append(action)
            for line in self.text.events(seat, action, before):
                self.write(line)
        self.write(self.text.result())
        return True

    def ask_human(self) -> int:
        choices = self.text.choices(self.env.legal_actions())
        self.write(self.text.table())
        self.write("Legal: " + choices_text(choices))
        self.write(self.text.input_help())
        self.decisions += 1
        while True:
            try:
                text = self.read(f"move {self.decisions}: your choice> ")
            except EOFError:
                raise QuitGame from None
            try:
                action = parse_choice(text, choices, rank_q=self.text.rank_q)
            except ValueError as error:
                self.write(f"  ! {self.why_not(text) or error}")
                continue
            return action

    def why_not(self, text: str) -> str | None:
        """Why a typed card (RING RANG) or rank (Rang) is not legal now; None when the text names no card."""
        typed = text.strip()
        for symbol, letter in zip(SUIT_SYMBOLS, SUITS, strict=True):
            typed = typed.replace(symbol, letter)
        return self.text.why_not(typed)

    def intro(self) -> str:
        """The first line: the game and the seats, not the seed (it gives every hand away)."""
        who = ", ".join(f"player_{s}: {spec}" for s, spec in enumerate(self.specs))
        return f"=== {self.heading}; you are player_{self.seat}. Seats: {who}"

    def outro(self) -> str:
        """The last line, once the game is over or left: the seed, which deals the same game again."""
        return f"=== seed of this game: {self.seed} (--seed {self.seed} deals it again)"


# ------------------------------------------------------------------ CLI
def default_opponent(game_name: str) -> str:
    """``rules_strong`` when that baseline is registered, else ``random``."""
    from cardenvs.agents.registry import AGENTS

    return DEFAULT_OPPONENT if DEFAULT_OPPONENT in AGENTS[game_name] else "random"


def seat_specs(game_name: str, num_players: int, seat: int, opponents: Sequence[str] | None,
               partner: str | None) -> list[str]:
    """One agent spec per other seat, in seat order, from the options named by role.

    RING RANG: ``--partner`` sits across (seat + 2), ``--opponents`` are the other team (1 spec for both,
    or 2: left then right); so ``--opponents random`` never gives the human a random partner. Rang has no
    teams: ``--opponents`` is 1 spec for every other seat or one per other seat.
    """
    default = default_opponent(game_name)
    opponents = list(opponents or [default])
    others = [s for s in range(num_players) if s != seat]
    if not game_spec(game_name).partnerships:
        if partner is not None:
            raise ValueError(f"--partner: {game_spec(game_name).title} has no partners; give every other seat "
                             "with --opponents")
        if len(opponents) not in (1, len(others)):
            raise ValueError(f"--opponents: give 1 spec or {len(others)} (one per other seat), got {len(opponents)}")
        return opponents * len(others) if len(opponents) == 1 else opponents
    if len(opponents) not in (1, 2):
        raise ValueError(f"--opponents: RING RANG has 2 opponents (left, right): give 1 spec or 2, got "
                         f"{len(opponents)}; the partner is --partner")
    left, right = (opponents * 2)[:2]
    by_seat = {(seat + 1) % 4: left, (seat + 2) % 4: partner or default, (seat + 3) % 4: right}
    return [by_seat[s] for s in others]


def check_record_path(path: str) -> None:
    """Fail now, not after the game, when ``--record`` cannot be written (no folder, a folder, no permission)."""
    target = Path(path)
    if target.is_dir():
        raise ValueError(f"--record {path}: is a folder; give a file name such as {target / 'game.json'}")
    folder = target.parent
    if not folder.is_dir():
        raise ValueError(f"--record {path}: folder {folder} does not exist; create it or choose another file")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise ValueError(f"--record {path}: cannot write there; choose a file in a folder you can write to")


def main(argv: Sequence[str] | None = None, read: Callable[[str], str] = input) -> int:
    from cardenvs.replay import env_name, record, save

    parser = argparse.ArgumentParser(prog="cardenvs play", description="Play Rang or RING RANG against agents.")
    parser.add_argument("game", help="ring-rang (also ring_rang) or rang")
    parser.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    parser.add_argument("--players", type=int, default=4, help="Rang: number of players 2-10 (default 4)")
    parser.add_argument(
        "--episode",
        default=None,
        help="ring-rang: game (to 20 points, default) or round; rang: match (default) or deal",
    )
    parser.add_argument(
        "--opponents",
        nargs="+",
        default=None,
        metavar="SPEC",
        help="the other side: RING RANG 1 spec for both opponents or 2 (left, right); Rang 1 spec for every "
             "other seat or one per seat (default: rules_strong, else random)",
    )
    parser.add_argument("--partner", default=None, metavar="SPEC",
                        help="RING RANG: your partner across the table (default: rules_strong, else random)")
    parser.add_argument("--seed", type=int, default=None,
                        help="seed of the deal shuffles (and of the agents), >= 0 (default: random; printed when "
                             "the game ends, as it gives every hand away)")
    parser.add_argument("--record", metavar="FILE", help="save the game as JSON for `cardenvs replay`")
    parser.add_argument("--no-color", action="store_true", help="no ANSI colours (also: NO_COLOR=1)")
    args = parser.parse_args(argv)  # fmt: skip
    try:
        game_name = env_name(args.game)
        spec = game_spec(game_name)
        env_kwargs: dict[str, Any] = {}
        if spec.fixed_players:
            spec.check_players(args.players, "--players")
        else:
            env_kwargs["num_players"] = args.players
        if args.episode is not None:
            env_kwargs["episode"] = args.episode
        if args.seed is not None and args.seed < 0:
            raise ValueError(f"--seed: expected an int >= 0, got {args.seed}")
        if args.record:
            check_record_path(args.record)
        num_players = spec.players_or_fixed(args.players)
        if not 0 <= args.seat < num_players:
            raise ValueError(f"--seat must be 0..{num_players - 1}, got {args.seat}")
        opponents = seat_specs(game_name, num_players, args.seat, args.opponents, args.partner)
        seed = args.seed if args.seed is not None else secrets.randbelow(2**31)  # a record needs a seed
        session = TerminalGame(game_name, env_kwargs, args.seat, opponents, seed, use_color(args.no_color),
                               read=read)  # fmt: skip
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finished = session.run()
    if args.record:
        save(record(game_name, env_kwargs, seed, None, session.actions, session.specs), args.record)
        print(f"game saved to {args.record}" + ("" if finished else " (unfinished)"))
    return 0
