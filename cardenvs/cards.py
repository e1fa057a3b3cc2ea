"""The card encoding shared by both games (public API; "Cards, seats and encodings" in docs/rang.md).

Suits in index order: 0 = clubs ``C``, 1 = diamonds ``D``, 2 = hearts ``H``,
3 = spades ``S``. Ranks in index order: ``2 3 4 5 6 7 8 9 T J Q K A`` (0..12).
Card index = suit * 13 + rank; 52 is the Joker ``"JK"``. String code = rank
character + suit character (``"QH"``); ``"10D"`` is accepted for ``"TD"``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from numbers import Integral

SUITS = "CDHS"
RANKS = "23456789TJQKA"
SUIT_SYMBOLS = "\u2663\u2666\u2665\u2660"  # clubs, diamonds, hearts, spades
NUM_SUITS = 4
NUM_RANKS = 13
JOKER = 52
NUM_CARD_KINDS = 53  # 52 cards and the Joker

CODES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS) + ("JK",)
_CODE_TO_INDEX = {code: i for i, code in enumerate(CODES)}


def suit_of(card: int) -> int:
    """Suit index of a card index (not defined for the Joker)."""
    return card // NUM_RANKS


def rank_of(card: int) -> int:
    """Rank index of a card index (0 = ``2`` ... 12 = ``A``; not for the Joker)."""
    return card % NUM_RANKS


def card_index(suit: int, rank: int) -> int:
    return suit * NUM_RANKS + rank


def card_code(card: int) -> str:
    """``"QH"`` for a card index; ``"JK"`` for 52."""
    if not isinstance(card, int) or isinstance(card, bool) or not 0 <= card <= JOKER:
        raise ValueError(f"card index must be an int in 0..52, got {card!r}")
    return CODES[card]


def parse_card(code: str | int) -> int:
    """Card index of a code such as ``"QH"``, ``"TD"``, ``"10D"``, ``"jk"``.

    An int in 0..52 passes through unchanged, so decks may mix codes and indices.
    """
    if isinstance(code, bool) or type(code).__name__ == "bool_":
        raise ValueError(f"not a card: {code!r}")
    if isinstance(code, Integral):  # int or a numpy integer
        if 0 <= code <= JOKER:
            return int(code)
        raise ValueError(f"card index out of range 0..52: {code!r}")
    if not isinstance(code, str):
        raise ValueError(f"not a card code: {code!r}")
    text = code.strip().upper()
    if text.startswith("10"):
        text = "T" + text[2:]
    index = _CODE_TO_INDEX.get(text)
    if index is None:
        raise ValueError(
            f"unknown card code {code!r}: expected rank {'|'.join(RANKS)} (or 10) "
            f"followed by suit {'|'.join(SUITS)}, or 'JK'"
        )
    return index


def rank_text(rank: int) -> str:
    """A rank as printed on a card: ``10`` for the ten (``T`` only in codes), ``JK`` for the Joker kind 13."""
    return "JK" if rank == NUM_RANKS else ("10" if RANKS[rank] == "T" else RANKS[rank])


def pretty(card: int, color: bool = False) -> str:
    """A card with its suit symbol: ``Q♥``, ``10♦``, ``JK``; red suits in ANSI colour if asked.

    The one notation of every text view (play, replay, ``observation_text``, render, the HTML page);
    codes (``QH``, ``TD``) stay the machine format of decks and records.
    """
    if card == JOKER:
        return "JK"
    text = rank_text(rank_of(card)) + SUIT_SYMBOLS[suit_of(card)]
    if color and suit_of(card) in (1, 2):
        return f"\x1b[31m{text}\x1b[0m"
    return text


def standard_deck(copies: int = 1, jokers: int = 0) -> list[int]:
    """Card indices of ``copies`` 52-card decks plus ``jokers`` Jokers, in index order."""
    return list(range(52)) * copies + [JOKER] * jokers


def parse_deck(deck: Iterable[str | int], expected: Sequence[int], name: str = "deck") -> list[int]:
    """Parse a deck and check it is exactly the multiset ``expected``.

    Raises ``ValueError`` naming the deck and what is wrong (unknown code, wrong
    size, missing or extra cards).
    """
    if isinstance(deck, (str, bytes)) or not isinstance(deck, Iterable):
        raise ValueError(f"{name} must be a list of card codes, got {type(deck).__name__}")
    cards: list[int] = []
    for position, code in enumerate(deck):
        try:
            cards.append(parse_card(code))
        except ValueError as error:
            raise ValueError(f"{name}: card {position}: {error}") from None
    if len(cards) != len(expected):
        raise ValueError(f"{name} has {len(cards)} cards, expected {len(expected)}")
    have, want = Counter(cards), Counter(expected)
    if have != want:
        missing = sorted((want - have).elements())
        extra = sorted((have - want).elements())
        parts = []
        if missing:
            parts.append("missing " + " ".join(CODES[c] for c in missing))
        if extra:
            parts.append("extra " + " ".join(CODES[c] for c in extra))
        raise ValueError(f"{name} is not a valid {len(expected)}-card deck: {'; '.join(parts)}")
    return cards
