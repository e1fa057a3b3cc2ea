"""What a Crazy Eights player reads in ``cardenvs play`` (and the log of ``cardenvs serve``): the Text part.

A move is typed as its number, a card code (``QH``, ``10D``, ``Q♥``), a suit after an 8 (``h``,
``hearts``, ``♥``), ``d``/``draw`` or ``p``/``pass``; ``q`` quits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cardenvs.cards import CODES, NUM_RANKS, SUIT_SYMBOLS, SUITS, parse_card, pretty
from cardenvs.play import Choice, card_text, suit_text

from .engine import AFTER_DRAW, DRAW, EIGHT, NAME_SUIT, NAME_SUIT_OFFSET, NUM_CARDS, SUIT_NAMES, CrazyEightsGame


def card_keys(card: int) -> set[str]:
    """The words that name a card: ``qh``, ``q♥`` (and ``10d``, ``10♦`` for a ten)."""
    code = CODES[card].lower()
    symbol = SUIT_SYMBOLS[card // NUM_RANKS]
    keys = {code, code[0] + symbol}
    if code[0] == "t":
        keys |= {"10" + code[1], "10" + symbol}
    return keys


def _cards(count: int) -> str:
    return "a card" if count == 1 else f"{count} cards"


class Text:
    """What the player at ``seat`` reads: the table, the moves, the events, why a move is not legal now."""

    rank_q = False  # no rank is typed alone: "q" quits

    def __init__(self, raw: Any, seat: int, color: bool):
        self.raw, self.seat, self.color = raw, seat, color

    def where(self, seat: int) -> str:
        return ""

    def who(self, seat: int) -> str:
        return "you" if seat == self.seat else f"player_{seat}"

    def input_help(self) -> str:
        return "(type the number, a card code such as QH / 10D, a suit C D H S after an 8, d draws, p passes; q quits)"

    def choices(self, legal: Sequence[int]) -> list[Choice]:
        c = self.color
        choices = []
        for action in legal:
            if action < NUM_CARDS:
                choices.append(Choice(action, card_text(action, c), card_keys(action)))
            elif action < DRAW:
                suit = action - NAME_SUIT_OFFSET
                choices.append(Choice(action, f"name {suit_text(suit, c)} {SUIT_NAMES[suit]}",
                                      {SUITS[suit].lower(), SUIT_NAMES[suit], SUIT_SYMBOLS[suit]}))
            elif action == DRAW:
                choices.append(Choice(action, "draw a card", {"d", "draw"}))
            else:
                choices.append(Choice(action, "pass", {"p", "pass"}))
        return choices

    def facts(self) -> CrazyEightsGame:
        """The game before a step (the event lines compare it with the game after)."""
        return self.raw.game.clone()

    def why_not(self, typed: str) -> str | None:
        """Why a typed card is not legal now; None when the text names no card."""
        try:
            card = parse_card(typed)
        except ValueError:
            return None
        game = self.raw.game
        if card >= NUM_CARDS:
            return "Crazy Eights has no Joker"
        shown = pretty(card)
        if not game.hands[self.seat] >> card & 1:
            return f"you do not hold {shown}"
        if game.phase == NAME_SUIT:
            return "first name the suit for your 8: C, D, H or S"
        if game.phase == AFTER_DRAW:
            return f"after drawing you may play only the card you drew ({pretty(game.drawn)}), or pass"
        suit = SUIT_SYMBOLS[game.suit]
        return (f"{shown} does not go on {pretty(game.top)} with {suit} in force: play a {suit}, a "
                f"{pretty(game.top)[:-1]} or an 8")

    def table(self) -> str:
        game, me, c = self.raw.game, self.seat, self.color
        others = "; ".join(f"player_{s}: {_cards(game.hand_size(s))}" for s in range(game.num_players) if s != me)
        lines = ["", f"--- turn {game.turns + 1}; top card {card_text(game.top, c)}, suit in force "
                     f"{suit_text(game.suit, c)} {SUIT_NAMES[game.suit]}; stock {len(game.stock)}",
                 f"    {others}"]
        if game.phase == NAME_SUIT:
            lines.append("    you played an 8: name the suit in force")
        elif game.phase == AFTER_DRAW:
            lines.append(f"    you drew {card_text(game.drawn, c)}: play it or pass")
        lines.append("    your hand: " + " ".join(card_text(x, c) for x in game.hand_cards(me)))
        return "\n".join(lines)

    def events(self, seat: int, action: int, before: CrazyEightsGame) -> list[str]:
        game, c = self.raw.game, self.color
        actor = self.who(seat)
        s = "" if seat == self.seat else "s"
        if action < NUM_CARDS:
            lines = [f"  {actor} play{s} {card_text(action, c)}"]
            if action % NUM_RANKS == EIGHT and not game.over:
                lines[0] += " (an 8: a suit is named next)"
        elif action < DRAW:
            suit = action - NAME_SUIT_OFFSET
            lines = [f"  {actor} name{s} {suit_text(suit, c)} {SUIT_NAMES[suit]}"]
        elif action == DRAW:
            rebuilt = " (the stock was rebuilt from the pile)" if not before.stock else ""
            card = f" {card_text(game.drawn, c)}" if seat == self.seat else " a card"
            lines = [f"  {actor} cannot play and draw{s}{card}{rebuilt}"]
        else:
            lines = [f"  {actor} pass{'es' if s else ''}"]
        return lines  # the end of the deal is result()'s line

    def result(self) -> str:
        game = self.raw.game
        if game.truncated:
            return "=== stopped at the turn limit"
        return f"=== deal over: {'YOU WIN' if game.winner == self.seat else f'player_{game.winner} wins'}"
