"""Rang as text for `cardenvs play` and `serve`: the table, the moves, the events and why a move is not
legal, as a player at one seat sees them (the spec's ``text`` part)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from cardenvs.cards import JOKER, RANKS, parse_card, pretty, rank_text
from cardenvs.play import (
    Choice,
    card_text,
    cards_text,
    code_keys,
)


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
                keys |= code_keys(card)
            shown = " ".join(card_text(c, color) for c in cards)
            label = verb + ("10" if rank == "T" else rank) + (f" ({shown})" if len(cards) > 0 else "")
        choices.append(Choice(action, label, keys))
    return choices


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
            others.append(f"player_{seat}: {cards_text(game.hand_size[seat])}, {game.totals[seat]} pts{note}")
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
                             f"{cards_text(grown)}{kept}")  # fmt: skip
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
