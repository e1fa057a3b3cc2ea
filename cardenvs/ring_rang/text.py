"""RING RANG as text for `cardenvs play` and `serve`: the table, the moves, the events and why a move is
not legal, as a player at one seat sees them (the spec's ``text`` part)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cardenvs.cards import JOKER, SUIT_SYMBOLS, SUITS, parse_card, pretty
from cardenvs.play import (
    SUIT_NAMES,
    Choice,
    card_text,
    code_keys,
    suit_text,
)

RELATIVE = ("you", "left", "partner", "right")  # the seats seen from the human


def ring_rang_choices(game: Any, legal: Sequence[int], action_names: Sequence[str], color: bool) -> list[Choice]:
    """The legal RING RANG moves of the seat to act, as numbered choices."""
    from cardenvs.ring_rang.engine import ACTION_DECLARE, ACTION_KNOCK, ACTION_TRUMP, ACTION_TURNED

    choices = []
    for action in legal:
        if action < 52:
            choices.append(Choice(action, card_text(action, color), code_keys(action)))
        elif ACTION_TRUMP <= action < ACTION_KNOCK:
            suit = action - ACTION_TRUMP
            keys = {SUITS[suit].lower(), SUIT_NAMES[suit], SUIT_SYMBOLS[suit]}
            choices.append(Choice(action, f"trump {suit_text(suit, color)} {SUIT_NAMES[suit]}", keys))
        elif action == ACTION_KNOCK:
            honour = "AKQJ"[game.next_honour]
            choices.append(Choice(action, f"knock (I hold the trump {honour})", {"k", "knock"}))
        elif ACTION_TURNED <= action < ACTION_DECLARE:
            card = action - ACTION_TURNED
            keys = {key + "!" for key in code_keys(card)}
            choices.append(Choice(action, card_text(card, color) + " turned", keys))
        elif action == ACTION_DECLARE:
            choices.append(Choice(action, "declare supporter", {"d", "declare"}))
        else:  # an action added by a later variant: selectable by number and by its name
            choices.append(Choice(action, action_names[action], {action_names[action].lower()}))
    return choices


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
