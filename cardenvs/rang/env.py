"""Rang (Serbian shedding game of the Mau Mau family) as a PettingZoo AEC environment.

Full rules and every decision where the texts are silent: ``docs/rang.md``.
In short: 2-10 players, 5 cards each, play a card equal to, one above or one
below the top card (Ace low, no wrap-around; Ace and Joker any time; a Joker
is followed by one free card of the same player's choice); unable to play,
the env draws a card for you and you discard one face down (keep it instead
if you held a single card); going out is contested by the next player; cards
left in hand score against you; 100 points and you leave; last one in wins.

======================  =====================================================
Import                  ``from cardenvs import rang_v0``
Constructor             ``rang_v0.env(num_players=4, episode="match",
                        eliminated="leave", max_turns_per_deal=2000,
                        render_mode=None, illegal_action="raise")``
Agents                  ``player_0`` .. ``player_{N-1}`` (seat i, clockwise)
Actions                 ``Discrete(28)``
Observation             ``Box(0, 1, (62 + 5N,), float32)`` + ``action_mask``
Reset options           ``dealer`` (first dealer, default 0), ``deck`` /
                        ``decks`` (given decks, top card first)
======================  =====================================================

Actions (the mask allows only the current phase's actions):

=======  =====================================================================
index    meaning
=======  =====================================================================
0-12     play a card of rank index r (2,3,4,5,6,7,8,9,T,J,Q,K,A; 12 = Ace);
         the lowest card index of that rank in the hand is played
13       play a Joker
14-26    discard a card of rank index r - 14 (after the automatic draw)
27       discard a Joker
=======  =====================================================================

Observation (float32 in [0, 1]; seats are relative: 0 = the observer,
1 = the next player clockwise, ...; kinds are the 13 ranks then the Joker):

=================  =============  ===========================================
indices            name           content
=================  =============  ===========================================
0-13               hand           own cards per kind / 8
14-27              top            top card of the play pile, one-hot kind
28-30              phase          play, play after Joker, discard (one-hot)
31-44              play_pile      cards on the play pile per kind / 8
                                  (since the last stock rebuild)
45-58              own_discards   own discards this deal per kind / 8 (clip 1)
59                 stock_size     stock cards / deck size
60                 discard_size   discard pile cards / deck size
61                 two_decks      1 when the deal uses 108 cards
62 .. 62+N-1       hand_sizes     hand sizes by relative seat / deck size
62+N .. 62+2N-1    totals         match totals by relative seat / 100 (clip 1)
62+2N .. 62+3N-1   in_game        1 for players still in the game
62+3N .. 62+4N-1   went_out       one-hot: who went out and awaits an answer
62+4N .. 62+5N-1   dealer         one-hot: the dealer of this deal
=================  =============  ===========================================

Rewards: ``episode="match"``: +1 to the last player standing, -1/(N-1) to
every other player when they leave the game (they are terminated then).
``episode="deal"``: one deal, reward -(points of the deal)/100 for everyone
at its end. A deal that exceeds ``max_turns_per_deal`` turns is truncated
(every live agent), with no reward. ``state()`` is the full state (all hands).

``eliminated`` (``episode="match"``): ``"leave"`` (the default) removes a player
from ``agents`` when it leaves the match, with its reward, as PettingZoo's AEC
loop expects. ``"stay"`` keeps every seat in ``agents`` until the match ends: a
player that has left is never selected, observes an all-zero mask and gets its
-1/(N-1) only at the match's end, when every agent ends at once (terminated; on
a truncation the players still in are truncated). The agent set is then fixed
for the whole episode, which is what adapters that assume it need: Tianshou's
``PettingZooEnv``, TorchRL's ``PettingZooWrapper``, PettingZoo's
``turn_based_aec_to_parallel`` and SuperSuit's vector envs
(``docs/integrations.md``). The returns are the same in both modes.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from cardenvs.base import CardGameEnv, wrap_env
from cardenvs.cards import JOKER, RANKS, pretty, rank_text
from cardenvs.core import NOTHING, Outcome
from cardenvs.rang.engine import (
    DEFAULT_MAX_TURNS_PER_DEAL,
    DISCARD,
    DISCARD_OFFSET,
    MAX_TURNS_LIMIT,
    NUM_KINDS,
    PHASE_NAMES,
    WIN_REWARD,
    RangGame,
    deck_size_for,
    elimination_reward,
    parse_rang_deck,
)
from cardenvs.rang.observation import (  # noqa: F401 (part of this module's API since v0)
    FIXED_SIZE,
    OBSERVATION_PARTS,
    decode_observation,
    observation_parts,
    observe,
)

__all__ = ["env", "raw_env", "OBSERVATION_PARTS", "observation_parts", "decode_observation", "ACTION_NAMES"]

KIND_NAMES = tuple(RANKS) + ("Joker",)
ACTION_NAMES: tuple[str, ...] = tuple(f"play {k}" for k in KIND_NAMES) + tuple(f"discard {k}" for k in KIND_NAMES)


def env(illegal_action: str = "raise", **kwargs: Any):
    """The Rang env wrapped the PettingZoo way (see the module docstring for the arguments)."""
    return wrap_env(raw_env(**kwargs), illegal_action=illegal_action)


class raw_env(CardGameEnv):
    """Rang AEC env (unwrapped). See the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "rang_v0",
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": False,
    }
    action_names = ACTION_NAMES

    def __init__(
        self,
        num_players: int = 4,
        episode: str = "match",
        eliminated: str = "leave",
        max_turns_per_deal: int = DEFAULT_MAX_TURNS_PER_DEAL,
        render_mode: str | None = None,
    ):
        if (
            isinstance(num_players, bool)
            or not isinstance(num_players, (int, np.integer))
            or not (2 <= num_players <= 10)
        ):
            raise ValueError(f"num_players must be an int in 2..10, got {num_players!r}")
        if episode not in ("match", "deal"):
            raise ValueError(f"episode must be 'match' or 'deal', got {episode!r}")
        if eliminated not in ("leave", "stay"):
            raise ValueError(f"eliminated must be 'leave' or 'stay', got {eliminated!r}")
        if (
            isinstance(max_turns_per_deal, bool)
            or not isinstance(max_turns_per_deal, (int, np.integer))
            or not 1 <= max_turns_per_deal <= MAX_TURNS_LIMIT
        ):
            raise ValueError(f"max_turns_per_deal must be an int in 1..2**62, got {max_turns_per_deal!r}")
        num_players = int(num_players)
        self.observation_size = FIXED_SIZE + 5 * num_players
        super().__init__(num_players, render_mode)
        self.episode = episode
        self.eliminated = eliminated
        self._seats_stay = eliminated == "stay" and episode == "match"
        self.max_turns_per_deal = int(max_turns_per_deal)
        n = num_players
        self.state_size = n * NUM_KINDS + 3 * NUM_KINDS + NUM_KINDS + 3 + 3 + 5 * n + n
        self.state_space = spaces.Box(0.0, 1.0, (self.state_size,), np.float32)

    # ----------------------------------------------------------------- hooks
    def _make_game(self, rng: np.random.Generator, options: dict[str, Any]) -> RangGame:
        options.pop("options", None)  # PettingZoo's api_test resets with options={"options": 1}
        unknown = set(options) - {"deck", "decks", "dealer"}
        if unknown:
            raise ValueError(f"unknown rang_v0 reset option(s) {sorted(unknown)}; known: deck, decks, dealer")
        n = self.num_players
        dealer = options.get("dealer", 0)
        if isinstance(dealer, bool) or not isinstance(dealer, (int, np.integer)) or not 0 <= dealer < n:
            raise ValueError(f"option dealer must be a seat 0..{n - 1}, got {dealer!r}")
        if "deck" in options and "decks" in options:
            raise ValueError("give either option deck or option decks, not both")
        first_size = deck_size_for(n)
        decks: list[list[int]] = []
        if "deck" in options:
            deck = parse_rang_deck(options["deck"], "deck")
            if len(deck) != first_size:
                raise ValueError(f"deck has {len(deck)} cards, but a deal for {n} players needs {first_size}")
            decks.append(deck)
        if "decks" in options:
            given = options["decks"]
            if isinstance(given, (str, bytes)) or not isinstance(given, (list, tuple)):
                raise ValueError(f"option decks must be a list of decks, got {type(given).__name__}")
            # each deal takes the next unused deck of its size, so one list serves any player count
            decks += [parse_rang_deck(deck, f"decks[{i}]") for i, deck in enumerate(given)]
        return RangGame.new(
            n,
            rng,
            dealer=int(dealer),
            decks=decks,
            single_deal=self.episode == "deal",
            max_turns_per_deal=self.max_turns_per_deal,
        )

    def _apply(self, action: int) -> Outcome:
        outcome = self.game.step(action)
        if not self._seats_stay or outcome is NOTHING:
            return outcome
        g = self.game
        if not g.match_over:  # eliminations only: those seats stay, their rewards wait for the end
            return NOTHING
        n = self.num_players
        out = tuple(seat for seat in range(n) if not g.alive[seat])
        rewards = [0.0 if g.alive[seat] else elimination_reward(n) for seat in range(n)]
        if g.truncated:
            return Outcome(tuple(rewards), out, truncated=True)
        rewards[g.alive.index(True)] = WIN_REWARD
        return Outcome(tuple(rewards), tuple(range(n)))

    def _seats_in_play(self) -> list[int]:
        if self._seats_stay:
            return [] if self.game.match_over else list(range(self.num_players))
        return self.game.seats_in_play()

    def state(self) -> np.ndarray:
        """The full state (every hand, stock and piles by kind, public facts) for centralized critics."""
        g = self.game
        n = self.num_players
        parts = []
        for seat in range(n):
            parts.extend(len(c) * 0.125 for c in g.hands[seat])
        for pile in (g.stock, g.discard):
            counts = [0] * NUM_KINDS
            for card in pile:
                counts[NUM_KINDS - 1 if card == JOKER else card % 13] += 1
            parts.extend(min(c, 8) * 0.125 for c in counts)
        parts.extend(c * 0.125 for c in g.pile_counts)
        parts.extend(1.0 if g.top == k else 0.0 for k in range(NUM_KINDS))
        parts.extend(1.0 if g.phase == p else 0.0 for p in range(3))
        size = 1.0 / g.deck_size
        parts.extend((len(g.stock) * size, len(g.discard) * size, 1.0 if g.deck_size == 108 else 0.0))
        parts.extend(g.hand_size[s] * size for s in range(n))
        parts.extend(min(t, 100) * 0.01 for t in g.totals)
        parts.extend(1.0 if a else 0.0 for a in g.alive)
        parts.extend(1.0 if g.out_seat == s else 0.0 for s in range(n))
        parts.extend(1.0 if g.dealer == s else 0.0 for s in range(n))
        parts.extend(1.0 if g.current == s and not g.match_over else 0.0 for s in range(n))
        return np.array(parts, np.float32)

    # ------------------------------------------------------------------ text
    def render(self) -> Any:
        """Text for ``"ansi"``/``"human"``; for ``"rgb_array"`` an image of the table, every hand face up."""
        if self.render_mode == "rgb_array":
            from cardenvs.render import render_rgb  # Pillow is optional: imported only here

            return render_rgb(self)
        return super().render()

    def action_text(self, action: int, seat: int, observer: int | None = None) -> str:
        """A discard is face down: another seat's observer reads that a card was discarded, not which."""
        if observer is not None and observer != seat and action >= DISCARD_OFFSET:
            return "discard a card face down"
        return self.action_names[action]

    def _render_text(self, observer: int | None = None) -> str:
        g = self.game
        lines = [
            f"Rang deal {g.deal_number} ({g.deck_size} cards), dealer player_{g.dealer}, turn {g.turns}",
            f"top: {pretty(g.pile[-1])}   stock: {len(g.stock)}   discard pile: {len(g.discard)}",
        ]
        for seat in range(self.num_players):
            if not g.alive[seat]:
                lines.append(f"  player_{seat}: out of the game ({g.totals[seat]} points)")
                continue
            marker = ">" if seat == g.current and not g.match_over else " "
            cards = (" ".join(pretty(c) for c in g.hand_cards(seat)) or "-") if observer in (None, seat) \
                else f"{g.hand_size[seat]} cards (hidden)"
            note = "  (went out, awaits the answer)" if seat == g.out_seat else ""
            lines.append(f"{marker} player_{seat} [{g.totals[seat]:3d}]: {cards}{note}")
        if g.match_over:
            lines.append("match truncated" if g.truncated else "game over")
        else:
            lines.append(f"player_{g.current} to {PHASE_NAMES[g.phase]}")
        return "\n".join(lines)

    def observation_text(self, agent: str) -> str:
        """What ``agent`` sees, as text (the same facts as its observation vector)."""
        seat = self._agent_seat[agent]
        g = self.game
        n = self.num_players
        cards = " ".join(pretty(c) for c in g.hand_cards(seat)) or "-"
        lines = [
            f"{agent}: hand {cards}",
            f"top {pretty(g.pile[-1])}, stock {len(g.stock)}, discard pile {len(g.discard)}, "
            f"{g.deck_size} cards, dealer player_{g.dealer}",
        ]
        played = ", ".join(f"{rank_text(k)}x{c}" for k, c in enumerate(g.pile_counts) if c)
        lines.append(f"play pile: {played}")
        own = ", ".join(f"{rank_text(k)}x{c}" for k, c in enumerate(g.own_discards[seat]) if c)
        lines.append(f"own discards: {own or '-'}")
        for i in range(1, n):
            other = (seat + i) % n
            if g.alive[other]:
                note = " (went out, awaits the answer)" if other == g.out_seat else ""
                lines.append(f"player_{other}: {g.hand_size[other]} cards, {g.totals[other]} points{note}")
            else:
                lines.append(f"player_{other}: out of the game")
        if g.match_over:
            lines.append("match over")
        elif g.current == seat:
            what = "discard a card" if g.phase == DISCARD else PHASE_NAMES[g.phase]
            lines.append(f"your turn: {what}")
        else:
            lines.append(f"player_{g.current} to act")
        return "\n".join(lines)

    # ------------------------------------------------------------- snapshots
    def _game_from_json(self, data: dict[str, Any]) -> RangGame:
        game = RangGame.from_json(data, self._rng)
        if game.num_players != self.num_players:
            raise ValueError(f"snapshot has {game.num_players} players, this env {self.num_players}")
        if game.single_deal != (self.episode == "deal"):
            raise ValueError(f"snapshot is of another episode mode than this env's {self.episode!r}")
        if game.max_turns_per_deal != self.max_turns_per_deal:
            raise ValueError(f"snapshot has max_turns_per_deal {game.max_turns_per_deal}, "
                             f"this env {self.max_turns_per_deal}")
        return game

    def _restored(self) -> None:
        self.game.rng = self._rng  # the engine draws from the env's (restored) generator
