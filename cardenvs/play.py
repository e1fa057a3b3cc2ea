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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardenvs.cards import CODES, JOKER, SUIT_SYMBOLS, SUITS, pretty
from cardenvs.games import episodes_help, game_spec, games_help, players_help

SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")
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


def code_keys(card: int) -> set[str]:
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


def choices_text(choices: Sequence[Choice]) -> str:
    return "  ".join(f"[{i}] {c.label}" for i, c in enumerate(choices, 1))


# ------------------------------------------------------------------ each game's table, as text
def cards_text(count: int) -> str:
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
        raise ValueError(f"--opponents: {game_spec(game_name).title} has 2 opponents (left, right): give 1 spec "
                         f"or 2, got {len(opponents)}; the partner is --partner")
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

    parser = argparse.ArgumentParser(prog="cardenvs play", description="Play a cardenvs game against agents.")
    parser.add_argument("game", help=games_help())
    parser.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    parser.add_argument("--players", type=int, default=None, help=f"number of players ({players_help()})")
    parser.add_argument("--episode", default=None, help=f"what one game is ({episodes_help()}; default: the env's)")
    parser.add_argument(
        "--opponents",
        nargs="+",
        default=None,
        metavar="SPEC",
        help="the other side: in a partnership game 1 spec for both opponents or 2 (left, right); else 1 spec for "
             "every other seat or one per seat (default: rules_strong, else random)",
    )
    parser.add_argument("--partner", default=None, metavar="SPEC",
                        help="a partnership game: your partner across the table (default: rules_strong, else random)")
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
        num_players = spec.check_players(spec.players_or_fixed(args.players) if args.players is None
                                         else args.players, "--players")
        if not spec.fixed_players:
            env_kwargs["num_players"] = num_players
        if args.episode is not None:
            env_kwargs["episode"] = args.episode
        if args.seed is not None and args.seed < 0:
            raise ValueError(f"--seed: expected an int >= 0, got {args.seed}")
        if args.record:
            check_record_path(args.record)
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
