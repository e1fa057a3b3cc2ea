"""Crazy Eights as a PettingZoo AEC environment: the example plugin game of cardenvs.

Built only on cardenvs's public extension points (``cardenvs.core.Game``, ``cardenvs.base.CardGameEnv``,
``cardenvs.agents.base.Agent``, ``cardenvs.games.GameSpec``); installed as its own package, it adds
the game ``crazy_eights`` to every cardenvs command through the entry point group ``cardenvs.games``.

======================  =====================================================
Import                  ``from cardenvs_crazy_eights import env as crazy_eights_v0``
Constructor             ``env(num_players=4, episode="deal", max_turns=300,
                        render_mode=None, illegal_action="raise")``
Agents                  ``player_0`` .. ``player_{N-1}`` (seat i, clockwise), N = 2..4
Actions                 ``Discrete(58)``
Observation             ``Box(0, 1, (164 + 5N,), float32)`` + ``action_mask``
Reset options           ``dealer`` (default 0), ``deck`` (52 codes, top card
                        first) or ``decks`` (a list: the first deck is dealt)
======================  =====================================================

Rules (one deal; every decision the usual texts leave open is named here):

- 2-4 players (default 4), one 52-card deck without Jokers, cards as in :mod:`cardenvs.cards`.
  The dealer (option ``dealer``) deals 7 cards each with 2 players, 5 each with 3-4, a whole
  hand at a time starting left of the dealer (seat dealer+1); the next card is the starter, face
  up on the pile; the rest is the stock. The player left of the dealer acts first.
- An 8 turned as the starter counts as its own suit (nobody names one).
- On your turn play one card that matches the suit in force (the top card's suit, or the suit
  named after an 8) or the top card's rank. An 8 is wild: it may be played on anything; then the
  same player names the suit in force (a second decision: actions 52-55). The next player must
  then play the named suit or another 8.
- A player who cannot play draws the stock's top card (action 56: the only legal action then; a
  player who can play must play, and holding an 8 one always can). Then that player may play the
  drawn card, if it fits, or pass (action 57): at most one card is drawn a turn.
- An empty stock is rebuilt when a card must be drawn: the discards under the top card, shuffled
  (with the env's seeded RNG). When there is nothing to draw at all, a player who cannot play
  passes (action 57 is then the only legal action). Every other card is then in a hand, so some
  player can play: a deal never blocks.
- The first player to get rid of every card wins the deal at once (going out on an 8 names no suit).
- Turn limit: a turn is a player's whole turn (a play with its named suit, or a draw with its
  play or pass); the deal is truncated (every agent, no reward) when ``max_turns`` turns are over.

Actions (the mask allows only the current phase's actions):

=======  =====================================================================
index    meaning
=======  =====================================================================
0-51     play card index c (suit * 13 + rank: ``2C`` = 0 ... ``AS`` = 51)
52-55    name the suit in force after your 8: clubs, diamonds, hearts, spades
56       draw the stock's top card (only when you cannot play)
57       pass (after a draw, or with nothing to play and nothing to draw)
=======  =====================================================================

Observation (float32 in [0, 1]; seats are relative: 0 = the observer, 1 = the next player clockwise):

=================  =============  ===========================================
indices            name           content
=================  =============  ===========================================
0-51               hand           1 per card held
52-103             top            top card of the pile, one-hot
104-107            suit           the suit in force, one-hot
108-110            phase          play, name a suit, after a draw (one-hot)
111-162            pile           1 per card under the top (since the last
                                  stock rebuild)
163                stock_size     stock cards / 52
164 .. 164+N-1     hand_sizes     hand sizes by relative seat / 52
164+N .. 164+5N-1  voids          by relative seat, 4 suit flags (C D H S):
                                  the suits in force at the seat's turns
                                  where it could not play (it drew, or
                                  passed with nothing to draw) since it last
                                  kept a drawn card (a pass after a draw
                                  keeps it: then only that turn's suit)
=================  =============  ===========================================

Rewards (episode ``"deal"``, the only kind: a game of this package is one deal): +1 to the
winner and -1/(N-1) to every other seat when a player goes out (the deal's rewards sum to 0);
none in a truncated deal. A seat *wins* an episode when its
reward is positive (the spec's scoring); the harness's points are these rewards.
``state()`` is the full state (every hand and the stock), for centralised critics.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from cardenvs.base import CardGameEnv, wrap_env
from cardenvs.cards import CODES, SUIT_SYMBOLS, SUITS, parse_deck, pretty

from .engine import (
    AFTER_DRAW,
    DECK,
    DEFAULT_MAX_TURNS,
    MAX_PLAYERS,
    MAX_TURNS_LIMIT,
    MIN_PLAYERS,
    NUM_CARDS,
    PHASE_NAMES,
    SUIT_NAMES,
    CrazyEightsGame,
    result_text,
)
from .observation import observation_size

__all__ = ["env", "raw_env", "ACTION_NAMES", "EPISODES"]

ACTION_NAMES: tuple[str, ...] = (
    tuple(f"play {code}" for code in CODES[:NUM_CARDS])
    + tuple(f"name {name}" for name in SUIT_NAMES)
    + ("draw", "pass")
)
EPISODES = ("deal",)


def env(illegal_action: str = "raise", **kwargs: Any):
    """The Crazy Eights env wrapped the PettingZoo way (see the module docstring for the arguments)."""
    return wrap_env(raw_env(**kwargs), illegal_action=illegal_action)


def _is_int(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


class raw_env(CardGameEnv):
    """Crazy Eights AEC env (unwrapped). See the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "crazy_eights_v0",
        "render_modes": ["ansi", "human"],
        "is_parallelizable": False,
    }
    action_names = ACTION_NAMES

    def __init__(self, num_players: int = 4, episode: str = "deal", max_turns: int = DEFAULT_MAX_TURNS,
                 render_mode: str | None = None):
        if not _is_int(num_players) or not MIN_PLAYERS <= num_players <= MAX_PLAYERS:
            raise ValueError(f"num_players must be an int in {MIN_PLAYERS}..{MAX_PLAYERS}, got {num_players!r}")
        if episode not in EPISODES:
            raise ValueError(f"episode must be 'deal' (a game of Crazy Eights is one deal), got {episode!r}")
        if not _is_int(max_turns) or not 1 <= max_turns <= MAX_TURNS_LIMIT:
            raise ValueError(f"max_turns must be an int in 1..2**62, got {max_turns!r}")
        num_players = int(num_players)
        self.observation_size = observation_size(num_players)
        super().__init__(num_players, render_mode)
        self.episode = episode
        self.max_turns = int(max_turns)
        self.state_size = (num_players + 3) * NUM_CARDS + 4 + 3 + num_players
        self.state_space = spaces.Box(0.0, 1.0, (self.state_size,), np.float32)

    # ----------------------------------------------------------------- hooks
    def _make_game(self, rng: np.random.Generator, options: dict[str, Any]) -> CrazyEightsGame:
        options.pop("options", None)  # PettingZoo's api_test resets with options={"options": 1}
        unknown = set(options) - {"deck", "decks", "dealer"}
        if unknown:
            raise ValueError(f"unknown crazy_eights_v0 reset option(s) {sorted(unknown)}; known: deck, decks, dealer")
        n = self.num_players
        dealer = options.get("dealer", 0)
        if not _is_int(dealer) or not 0 <= dealer < n:
            raise ValueError(f"option dealer must be a seat 0..{n - 1}, got {dealer!r:.80}")
        if "deck" in options and "decks" in options:
            raise ValueError("give either option deck or option decks, not both")
        deck = None
        if "deck" in options:
            deck = parse_deck(options["deck"], DECK, "deck")
        elif "decks" in options:
            decks = options["decks"]
            if isinstance(decks, (str, bytes)) or not isinstance(decks, (list, tuple)):
                raise ValueError(f"option decks must be a list of decks, got {type(decks).__name__}")
            parsed = [parse_deck(d, DECK, f"decks[{i}]") for i, d in enumerate(decks)]
            deck = parsed[0] if parsed else None  # one deal: the first deck; an empty list shuffles
        return CrazyEightsGame.new(n, rng, dealer=int(dealer), deck=deck, max_turns=self.max_turns)

    def state(self) -> np.ndarray:
        """The full state (every hand, the stock's cards, the public facts) for centralised critics."""
        g = self.game
        n = self.num_players
        v = np.zeros(self.state_size, np.float32)
        for seat in range(n):
            for card in g.hand_cards(seat):
                v[seat * NUM_CARDS + card] = 1.0
        base = n * NUM_CARDS
        for card in g.stock:
            v[base + card] = 1.0
        for card in g.pile[:-1]:
            v[base + NUM_CARDS + card] = 1.0
        v[base + 2 * NUM_CARDS + g.top] = 1.0
        base += 3 * NUM_CARDS
        v[base + g.suit] = 1.0
        v[base + 4 + g.phase] = 1.0
        if not g.over:
            v[base + 7 + g.current] = 1.0
        return v

    # ------------------------------------------------------------------ text
    def action_text(self, action: int, seat: int, observer: int | None = None) -> str:
        """Every move is public (the card drawn is not named by the action)."""
        return self.action_names[action]

    def _render_text(self, observer: int | None = None) -> str:
        g = self.game
        lines = [f"Crazy Eights, dealer player_{g.dealer}, turn {g.turns}",
                 f"top: {pretty(g.top)}   suit: {SUIT_SYMBOLS[g.suit]}   stock: {len(g.stock)}   "
                 f"pile: {len(g.pile)}"]
        for seat in range(self.num_players):
            marker = ">" if seat == g.current and not g.over else " "
            cards = (" ".join(pretty(c) for c in g.hand_cards(seat)) or "-") if observer in (None, seat) \
                else f"{g.hand_size(seat)} cards (hidden)"
            lines.append(f"{marker} player_{seat}: {cards}")
        if g.over:
            lines.append(result_text(g))
        else:
            lines.append(f"player_{g.current} to {PHASE_NAMES[g.phase]}")
        return "\n".join(lines)

    def observation_text(self, agent: str) -> str:
        """What ``agent`` sees, as text (the same facts as its observation vector)."""
        seat = self._agent_seat[agent]
        g = self.game
        n = self.num_players
        lines = [f"{agent}: hand {' '.join(pretty(c) for c in g.hand_cards(seat)) or '-'}",
                 f"top {pretty(g.top)}, suit in force {SUIT_SYMBOLS[g.suit]} ({SUITS[g.suit]}), "
                 f"stock {len(g.stock)}, under the top {len(g.pile) - 1}"]
        for i in range(1, n):
            other = (seat + i) % n
            lines.append(f"player_{other}: {g.hand_size(other)} cards")
        if g.over:
            lines.append("deal over")
        elif g.current == seat:
            what = f"play {pretty(g.drawn)} or pass" if g.phase == AFTER_DRAW else PHASE_NAMES[g.phase]
            lines.append(f"your turn: {what}")
        else:
            lines.append(f"player_{g.current} to act")
        return "\n".join(lines)

    # ------------------------------------------------------------- snapshots
    def _game_from_json(self, data: dict[str, Any]) -> CrazyEightsGame:
        game = CrazyEightsGame.from_json(data, self._rng)
        if game.num_players != self.num_players:
            raise ValueError(f"snapshot has {game.num_players} players, this env {self.num_players}")
        if game.max_turns != self.max_turns:
            raise ValueError(f"snapshot has max_turns {game.max_turns}, this env {self.max_turns}")
        return game

    def _restored(self) -> None:
        self.game.rng = self._rng  # the engine draws from the env's (restored) generator

