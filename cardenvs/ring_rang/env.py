"""RING RANG (``ring_rang_v0``): a partnership trick-taking game with a pile that must be lifted.

Four players, partners opposite (team 0 = ``player_0`` and ``player_2``, team 1 =
``player_1`` and ``player_3``). The trump chooser sees 5 cards and names trump;
then 13 tricks are played. Won tricks stay on a pile in the middle: a player who
wins two tricks in a row (the first still on the pile) lifts the whole pile for
the team once it holds >= 3 tricks (the round's first lift) or >= 2 (later); the
13th trick takes what is left. 7 lifted tricks win the round (1 point; all 13:
2 points, 3 if taken by the team that did not choose trump); 20 points win the
game. Full rules and every decision: ``docs/ring_rang.md``.

Usage::

    from cardenvs import ring_rang_v0
    env = ring_rang_v0.env(episode="game", knocking=True, stop_when_decided=False)
    env.reset(seed=1, options={"chooser": 0, "decks": [deck1, deck2]})  # options optional
    for agent in env.agent_iter():
        obs, reward, termination, truncation, info = env.last()
        action = None if termination or truncation else policy(obs)
        env.step(action)

Constructor: ``env(episode="game"|"round", knocking=True, signals=False,
declarations=False, stop_when_decided=False, shaping=0.0, render_mode=None,
illegal_action="raise"|"terminate")``.

Reset options: ``deck`` (52 codes, top first) or ``decks`` (one per round, then
shuffled), ``chooser`` (seat of the first chooser; default: a simulated draw),
``dealer`` (the same as ``chooser = dealer + 1``). Unknown keys are a ValueError.

Actions (``Discrete(57)``; ``Discrete(84)`` when ``signals`` or ``declarations``):

| index  | action                                                                 |
|--------|------------------------------------------------------------------------|
| 0-51   | play card index (suit * 13 + rank; C D H S, ranks 2..A)                 |
| 52-55  | choose trump clubs, diamonds, hearts, spades (chooser, phase 0 only)     |
| 56     | knock for the next trump honour of A, K, Q, J (turn does not pass)       |
| 57-82  | signals: play club/diamond card index ``a - 57`` turned (public flag)    |
| 83     | declarations: declare "supporter" (once per player per round)           |

Observation: ``{"observation": float32[OBSERVATION_SIZE] in [0, 1], "action_mask": int8}``.
Seats are relative to the observer: 0 = self, 1 = left (next clockwise),
2 = partner, 3 = right. Teams: own team first. One-hots unless noted.

| indices   | part             | meaning                                                     |
|-----------|------------------|-------------------------------------------------------------|
| 0-51      | hand             | own cards (only the first 5 while the chooser picks trump)   |
| 52-55     | trump            | trump suit (all zero before the choice)                      |
| 56-58     | phase            | choose trump, play, over                                     |
| 59-71     | trick_number     | index 0..12 of the trick being played                        |
| 72-75     | trick_leader     | who led the current trick (zero when it is empty)            |
| 76-283    | current_trick    | 4 x 52: card played to the current trick by each seat        |
| 284-491   | played           | 4 x 52: every card played this round, by seat                |
| 492-504   | pile             | tricks lying on the pile, 0..12                              |
| 505-508   | streak_holder    | winner of the last trick while it is still on the pile       |
| 509-536   | lifted           | 2 x 14: tricks lifted this round, 0..13, own team first      |
| 537       | first_lift_done  | a lift has happened this round (later lifts need 2, not 3)   |
| 538-553   | knocks           | 4 x 4: honour (A, K, Q, J) x seat that knocked for it        |
| 554       | knocking_over    | no knock is possible any more this round (or knocking off)   |
| 555-600   | scores           | 2 x 23: game points 0..22, own team first                    |
| 601-604   | chooser          | the trump chooser of this round                              |
| 605-608   | dealer           | the dealer of this round (chooser's right)                   |
| 609-634   | turned           | signals: club/diamond card (index 0..25) was played turned  |
| 635-638   | declared         | declarations: seat declared "supporter" this round           |

``decode_observation(vec)`` splits a vector into these named parts;
``env.unwrapped.observation_text(agent)`` gives the same view as text.
``state()`` = the 4 hands (4 x 52, absolute seats) followed by player_0's
observation (``state_space``: ``Box(0, 1, (847,), float32)``, for centralised
critics). Rewards: ``episode="game"``: +1 / -1 per team when a team reaches 20
(plus ``shaping`` x round points per round, if set); ``episode="round"``:
+points / -points of the round.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces

from cardenvs.base import CardGameEnv, Outcome, wrap_env
from cardenvs.cards import CODES, SUIT_SYMBOLS, SUITS, pretty
from cardenvs.ring_rang.engine import (
    HONOUR_NAMES,
    NUM_ACTIONS,
    NUM_ACTIONS_VARIANTS,
    PHASE_NAMES,
    RingRangGame,
    bits_to_cards,
)
from cardenvs.ring_rang.observation import (  # noqa: F401 (part of this module's API since v0)
    OBSERVATION_PARTS,
    OBSERVATION_SIZE,
    OFFSETS,
    Observer,
    decode_observation,
)

__all__ = ["env", "raw_env", "OBSERVATION_PARTS", "OBSERVATION_SIZE", "decode_observation"]

def _action_names(size: int) -> tuple[str, ...]:
    names = [f"play {CODES[c]}" for c in range(52)] + [f"trump {s}" for s in SUITS] + ["knock"]
    if size > NUM_ACTIONS:
        names += [f"play {CODES[c]} turned" for c in range(26)] + ["declare supporter"]
    return tuple(names)


_OPTION_KEYS = frozenset({"deck", "decks", "chooser", "dealer"})


def env(**kwargs: Any):
    """The wrapped env (order enforcing; ``illegal_action="terminate"`` penalises a masked action, see base)."""
    illegal_action = kwargs.pop("illegal_action", "raise")
    return wrap_env(raw_env(**kwargs), illegal_action=illegal_action)


class raw_env(CardGameEnv):  # noqa: N801 (PettingZoo convention)
    """RING RANG as a PettingZoo AEC env (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "ring_rang_v0",
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": False,
    }
    observation_size = OBSERVATION_SIZE

    def __init__(
        self,
        episode: str = "game",
        knocking: bool = True,
        signals: bool = False,
        declarations: bool = False,
        stop_when_decided: bool = False,
        shaping: float = 0.0,
        render_mode: str | None = None,
    ):
        self._settings = {
            "episode": episode,
            "knocking": knocking,
            "signals": signals,
            "declarations": declarations,
            "stop_when_decided": stop_when_decided,
            "shaping": shaping,
        }
        RingRangGame(np.random.default_rng(0), chooser=0, **self._settings)  # validates the settings
        self.action_names = _action_names(NUM_ACTIONS_VARIANTS if signals or declarations else NUM_ACTIONS)
        super().__init__(4, render_mode)
        self._observer = Observer()
        self.state_size = 4 * 52 + self.observation_size
        self.state_space = spaces.Box(0.0, 1.0, (self.state_size,), np.float32)  # what state() returns

    # ----------------------------------------------------------------- hooks
    def _make_game(self, rng: np.random.Generator, options: dict[str, Any]) -> RingRangGame:
        options.pop("options", None)  # PettingZoo's api_test resets with options={"options": 1}
        unknown = set(options) - _OPTION_KEYS
        if unknown:
            raise ValueError(f"unknown option(s) {sorted(unknown)}; ring_rang_v0 accepts {sorted(_OPTION_KEYS)}")
        if "deck" in options and "decks" in options:
            raise ValueError("give option 'deck' or 'decks', not both")
        decks = [options["deck"]] if "deck" in options else options.get("decks")
        chooser = options.get("chooser")
        if "dealer" in options:
            dealer = options["dealer"]
            if isinstance(dealer, bool) or not isinstance(dealer, (int, np.integer)) or not 0 <= dealer < 4:
                raise ValueError(f"option 'dealer' must be a seat 0..3, got {dealer!r}")
            if chooser is not None and chooser != (dealer + 1) % 4:
                raise ValueError(f"option 'dealer' {dealer} must sit to the right of 'chooser' {chooser}")
            chooser = (int(dealer) + 1) % 4
        return RingRangGame(rng, chooser=chooser, decks=decks, **self._settings)

    def _apply(self, action: int) -> Outcome:
        before = self._observer.before(self.game)
        outcome = self.game.step(action)
        self._observer.after(self.game, action, before)
        return outcome

    def _observe(self, seat: int) -> np.ndarray:
        return self._observer.views[seat].copy()

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        super().reset(seed=seed, options=options)
        self._observer.rebuild(self.game)

    def _restored(self) -> None:
        self.game.rng = self._rng
        self._observer.rebuild(self.game)

    def state(self) -> np.ndarray:
        """Full state for centralized critics: the 4 hands (absolute seats), then player_0's view."""
        hands = np.zeros(4 * 52, np.float32)
        for seat, hand in enumerate(self.game.hands):
            for card in bits_to_cards(hand):
                hands[seat * 52 + card] = 1.0
        return np.concatenate([hands, self._observer.views[0]])

    # ------------------------------------------------------------- history
    @property
    def history(self) -> list[dict[str, Any]]:
        """The tricks of the current round: leader, cards (codes, in play order), winner, lifted count."""
        return [
            {"leader": leader, "cards": [CODES[c] for c in cards], "winner": winner, "lifted": lift}
            for leader, cards, winner, lift in self.game.history
        ]

    @property
    def rounds(self) -> list[dict[str, Any]]:
        """Finished rounds: chooser, trump, lifted per team, winner team, points, next chooser, tricks."""
        return [
            dict(r, history=[{"leader": t[0], "cards": [CODES[c] for c in t[1]], "winner": t[2], "lifted": t[3]}
                             for t in r["history"]])
            for r in self.game.rounds
        ]

    # ------------------------------------------------------------- snapshot
    def _game_from_json(self, data: dict[str, Any]) -> RingRangGame:
        game = RingRangGame.from_json(data)
        other = {k: getattr(game, k) for k, v in self._settings.items() if getattr(game, k) != v}
        if other:
            raise ValueError(f"snapshot has other settings {other} than this env {self._settings}")
        return game

    # ---------------------------------------------------------------- text
    def render(self) -> Any:
        """Text for ``"ansi"``/``"human"``; for ``"rgb_array"`` an image of the table, every hand face up."""
        if self.render_mode == "rgb_array":
            from cardenvs.render import render_rgb  # Pillow is optional: imported only here

            return render_rgb(self)
        return super().render()

    def observation_text(self, agent: str) -> str:
        """What ``agent`` may know, as text (the same content as its observation)."""
        viewer = self._agent_seat[agent]
        game = self.game
        names = ["me", "left", "partner", "right"]

        def who(seat: int) -> str:
            return names[(seat - viewer) & 3]

        lines = [
            f"{agent}: phase {PHASE_NAMES[game.phase]}, trick {min(game.tricks_played + 1, 13)}/13, "
            f"chooser {who(game.chooser)}, dealer {who(game.dealer)}",
            f"trump: {SUIT_SYMBOLS[game.trump] if game.trump >= 0 else '-'}",
            "hand: " + _cards_text(game.hands[viewer]),
        ]
        if game.trick_cards:
            lines.append(
                "trick: " + " ".join(f"{who(game.leader + i)}:{pretty(c)}" for i, c in enumerate(game.trick_cards))
            )
        own = viewer & 1
        lines.append(
            f"pile {game.pile}, streak {who(game.streak) if game.streak >= 0 else '-'}, "
            f"lifted us {game.lifted[own]} them {game.lifted[1 - own]}, "
            f"first lift {'done' if game.lifted_any else 'not yet'}"
        )
        knocks = [f"{HONOUR_NAMES[h]} by {who(s)}" for h, s in enumerate(game.knockers) if s >= 0]
        lines.append("knocks: " + (", ".join(knocks) or "none") + (" (over)" if game.knock_ended else ""))
        lines.append(f"score us {game.scores[own]} them {game.scores[1 - own]}")
        for number, (leader, cards, winner, lift) in enumerate(game.history, 1):
            played = " ".join(f"{who(leader + i)}:{pretty(c)}" for i, c in enumerate(cards))
            lines.append(f"  {number}: {played} -> {who(winner)}" + (f" lifts {lift}" if lift else ""))
        return "\n".join(lines)

    def _render_text(self, observer: int | None = None) -> str:
        game = self.game
        lines = [
            f"RING RANG round {game.round_number + 1}, phase {PHASE_NAMES[game.phase]}, "
            f"score {game.scores[0]}:{game.scores[1]}, chooser player_{game.chooser}, dealer player_{game.dealer}, "
            f"trump {SUIT_SYMBOLS[game.trump] if game.trump >= 0 else '-'}"
        ]
        for seat in range(4):
            mark = "*" if seat == game.to_act and not game.over else " "
            shown = (_cards_text(game.hands[seat]) if observer in (None, seat)
                     else f"{game.hands[seat].bit_count()} cards (hidden)")
            lines.append(f"{mark}player_{seat}: {shown}")
        if game.trick_cards:
            lines.append(
                "trick: " + " ".join(f"p{(game.leader + i) & 3}:{pretty(c)}" for i, c in enumerate(game.trick_cards))
            )
        knocks = [f"{HONOUR_NAMES[h]}:p{s}" for h, s in enumerate(game.knockers) if s >= 0]
        lines.append(
            f"tricks {game.tricks_played}, pile {game.pile}, lifted {game.lifted[0]}:{game.lifted[1]}, "
            f"knocks {' '.join(knocks) or '-'}"
        )
        if game.history:
            leader, cards, winner, lift = game.history[-1]
            played = " ".join(f"p{(leader + i) & 3}:{pretty(c)}" for i, c in enumerate(cards))
            lines.append(f"last trick: {played} -> player_{winner}" + (f" lifts {lift}" if lift else ""))
        return "\n".join(lines)


def _cards_text(hand: int) -> str:
    cards = bits_to_cards(hand)
    by_suit = [" ".join(pretty(c) for c in reversed(cards) if c // 13 == s) for s in range(4)]
    return "  ".join(part for part in by_suit if part) or "-"

