"""The per-game table: everything the layers above need to know about a game, in one place.

Agents, the harness, the trainers, the command-line apps and the bench look a game up here
(:func:`game_spec`) instead of branching on its name, so adding a third game means one folder
(engine, observation, adapter) and one entry in :data:`GAMES`. Modules above this layer are named
by import strings (``"module:attr"``), imported on first use: listing a game costs nothing and this
module imports no adapter, agent or torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

import numpy as np

from .cards import CODES
from .rang.engine import POINTS_SCALE as RANG_POINTS_SCALE


def _load(entry_point: str) -> Any:
    module, _, attr = entry_point.partition(":")
    loaded = import_module(module)
    return getattr(loaded, attr) if attr else loaded


@dataclass(frozen=True)
class GameSpec:
    """One game: its names, env, batched env, episode kinds, seats, sides and agents."""

    name: str  # the one spelling printed and stored: "ring_rang"
    title: str  # for people: "RING RANG"
    aliases: tuple[str, ...]  # other spellings a user may type
    env_module: str  # the PettingZoo module (``env()``, ``raw_env``)
    vector_env: str  # "module:Class" of the batched torch env
    gym_id: str
    players: tuple[int, int]  # fewest and most seats
    partnerships: bool  # seats s and s + 2 play as one side (RING RANG) or every seat for itself
    episodes: dict[str, str]  # the harness's unit ("deal" or "game") -> the env's episode kind
    train_episode: str  # the episode kind the trainers use by default
    deal_points: float  # a seat's reward in a one-deal episode times this = the points it scored in the deal
    # (rng, unit, num_players) -> reset options of one random deal (unit "deal") or game/match ("game")
    random_options: Callable[[np.random.Generator, str, int], dict[str, Any]] = field(repr=False, default=None)
    agents: dict[str, str] = field(default_factory=dict)  # agent name -> "module:factory"
    # the game's pieces in the layers above the env, by role -> "module:attr": "painter" (render.py's
    # image of a table view), "search" (agents/search.py's rules of the world), "text" (play.py's table
    # as text), "faces" (serve.py's look of a move's button), "symmetries" (where the game has them: index maps
    # of observations and actions that leave the rules unchanged, for data augmentation)
    parts: dict[str, str] = field(default_factory=dict)

    # ------------------------------------------------------------ seats
    @property
    def fixed_players(self) -> bool:
        return self.players[0] == self.players[1]

    def check_players(self, num_players: Any, name: str = "num_players") -> int:
        """``num_players`` as an int in the game's range; a one-line ValueError otherwise."""
        low, high = self.players
        if isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) or \
                not low <= num_players <= high:  # fmt: skip
            takes = f"is always {low} players" if self.fixed_players else f"takes {low}..{high} players"
            raise ValueError(f"{name}: {self.title} {takes}, got {num_players!r}")
        return int(num_players)

    def heading(self, num_players: int) -> str:
        """The game as a table's title: "RING RANG", "Rang, 5 players"."""
        return self.title if self.fixed_players else f"{self.title}, {num_players} players"

    def players_or_fixed(self, num_players: int) -> int:
        """The seat count of a game with ``num_players`` asked for (a fixed-size game ignores it)."""
        return self.players[0] if self.fixed_players else num_players

    def env_info(self, num_players: int) -> dict[str, Any]:
        """The keyword arguments an agent factory gets from the env (``num_players`` where it varies)."""
        return {} if self.fixed_players else {"num_players": num_players}

    def side_of(self, seat: int) -> int:
        """The side a seat plays for: its team in a partnership game, else the seat itself."""
        return seat & 1 if self.partnerships else seat

    def num_sides(self, num_players: int) -> int:
        return 2 if self.partnerships else num_players

    def seats_of_side(self, seat: int, num_players: int) -> tuple[int, ...]:
        """Every seat on ``seat``'s side, ``seat`` first."""
        if self.partnerships:
            return (seat, (seat + 2) % num_players)
        return (seat,)

    def won(self, reward: Any, episode: str) -> Any:
        """Whether a side's episode reward is a win (numbers, arrays or tensors): a positive one, except in a
        deal of a game without partnerships, where the seat that went out scores 0 points and wins."""
        if self.partnerships or episode != self.episodes["deal"]:
            return reward > 0
        return reward >= 0

    # ------------------------------------------------------------- envs
    def env_kwargs(self, episode: str | None = None, num_players: int | None = None) -> dict[str, Any]:
        """Constructor arguments of the env: the episode kind (training default) and the seats where they vary."""
        kwargs: dict[str, Any] = {"episode": episode or self.train_episode}
        if not self.fixed_players:
            kwargs["num_players"] = self.players_or_fixed(num_players or 4)
        return kwargs

    def make_env(self, episode: str | None = None, num_players: int | None = None, **kwargs: Any) -> Any:
        """The wrapped AEC env (``kwargs`` are more constructor arguments; they win over the defaults)."""
        return self.env_module_object().env(**{**self.env_kwargs(episode, num_players), **kwargs})

    def make_raw_env(self, episode: str | None = None, num_players: int | None = None, **kwargs: Any) -> Any:
        return self.env_module_object().raw_env(**{**self.env_kwargs(episode, num_players), **kwargs})

    def env_module_object(self) -> Any:
        return import_module(self.env_module)

    def vector_env_class(self) -> type:
        """The batched torch env class (imports torch)."""
        return _load(self.vector_env)

    # ----------------------------------------------------------- agents
    def agent_factory(self, name: str) -> Any:
        return _load(self.agents[name])

    def part(self, role: str) -> Any:
        """The game's piece for ``role`` (see :attr:`parts`), imported on first use."""
        return _load(self.parts[role])


def shuffled_codes(rng: np.random.Generator, cards: Any) -> list[str]:
    """``cards`` (card indices) in a random order, as card codes: a deck for the reset options."""
    return [CODES[c] for c in rng.permutation(np.asarray(cards, dtype=np.int64))]


def _ring_rang_options(rng: np.random.Generator, unit: str, num_players: int) -> dict[str, Any]:
    from .ring_rang.engine import NUM_SEATS, TARGET_SCORE

    # a game ends within 2 * TARGET_SCORE - 1 rounds (a round gives its winner at least 1 point)
    decks = [shuffled_codes(rng, range(52)) for _ in range(2 * TARGET_SCORE if unit == "game" else 1)]
    return {"decks": decks, "chooser": int(rng.integers(NUM_SEATS))}


def _rang_options(rng: np.random.Generator, unit: str, num_players: int) -> dict[str, Any]:
    from .rang.engine import DECK_54, DECK_108, deck_size_for

    dealer = int(rng.integers(num_players))
    if unit == "deal":
        return {"deck": shuffled_codes(rng, DECK_108 if deck_size_for(num_players) == 108 else DECK_54),
                "dealer": dealer}
    # a match: 30 decks of each size (the deck shrinks to 54 cards when 4 players are left)
    return {"decks": [shuffled_codes(rng, deck) for deck in (DECK_108, DECK_54) for _ in range(30)], "dealer": dealer}


def _layout(name: str, camel: str, styles: tuple[str, ...], symmetries: str = "") -> dict[str, Any]:
    """Where a game's pieces live, by the package's layout: ``cardenvs/<name>_v0.py`` (the env),
    ``cardenvs/vector/<name>.py`` (``<Camel>VectorEnv``), ``agents/<name>_rules.py`` and
    ``agents/gauntlet_<name>.py`` (the rule agents and the gauntlet's ``styles``), the per-game functions of
    the search, policy and app modules (``make_pimc_<name>``, ``<Camel>Rules``, ``<Camel>Text``, ...);
    ``symmetries``: the function of ``cardenvs/<name>/observation.py`` that lists them, if any."""
    search, policy = "cardenvs.agents.search", "cardenvs.agents.policy"
    rules, gauntlet = f"cardenvs.agents.{name}_rules", f"cardenvs.agents.gauntlet_{name}"
    agents = {
        "random": "cardenvs.agents.base:RandomAgent",
        "rules_basic": f"{rules}:make_basic",
        "rules_strong": f"{rules}:make_strong",
        **{f"gauntlet_{style}": f"{gauntlet}:make_{style}" for style in styles},
        "policy": f"{policy}:make_policy_{name}",
        "trained": f"{policy}:make_trained_{name}",
        "pimc": f"{search}:make_pimc_{name}",
        "ismcts": f"{search}:make_ismcts_{name}",
        "oracle": f"{search}:make_oracle_{name}",  # sees every hand: measurement only
        "exec": "cardenvs.agents.bot_process:make_exec_bot",  # a program in any language (docs/bot_protocol.md)
        "onnx": "cardenvs.agents.onnx_policy:make_onnx_policy",  # a network from any framework
    }
    parts = {"painter": f"cardenvs.render:draw_{name}", "search": f"{search}:{camel}Rules",
             "text": f"cardenvs.play:{camel}Text", "faces": f"cardenvs.serve:{name}_faces"}
    if symmetries:
        parts["symmetries"] = f"cardenvs.{name}.observation:{symmetries}"
    return {"name": name, "env_module": f"cardenvs.{name}_v0", "vector_env": f"cardenvs.vector.{name}:{camel}VectorEnv",
            "gym_id": f"cardenvs/{camel}-v0", "agents": agents, "parts": parts}


GAMES: dict[str, GameSpec] = {
    "ring_rang": GameSpec(
        **_layout("ring_rang", "RingRang", styles=("hoarder", "lifter", "reader", "supporter"),
                  symmetries="suit_symmetries"),
        title="RING RANG",
        aliases=("ring-rang", "ringrang", "ring_rang_v0"),
        players=(4, 4),
        partnerships=True,
        episodes={"deal": "round", "game": "game"},
        train_episode="round",
        deal_points=1.0,  # a round's reward is its points (+ for the winners, - for the losers)
        random_options=_ring_rang_options,
    ),
    "rang": GameSpec(
        **_layout("rang", "Rang", styles=("dumper", "escaper", "blocker", "racer")),
        title="Rang",
        aliases=("rang_v0",),
        players=(2, 10),
        partnerships=False,
        episodes={"deal": "deal", "game": "match"},
        train_episode="deal",
        deal_points=-RANG_POINTS_SCALE,  # a deal's reward is -(points left in hand) / POINTS_SCALE
        random_options=_rang_options,
    ),
}
GAME_NAMES: tuple[str, ...] = tuple(GAMES)
_SPELLINGS = {spelling: spec.name for spec in GAMES.values() for spelling in (spec.name, *spec.aliases)}


def canonical_game(name: object) -> str:
    """``"ring-rang"``, ``"RING_RANG"``, ``"ring_rang_v0"`` -> ``"ring_rang"``; a ValueError listing the names."""
    key = name.strip().lower().replace(" ", "-") if isinstance(name, str) else None
    if key not in _SPELLINGS:
        known = " or ".join(f"{spec.name}" + (f" (or {spec.aliases[0]})" if "-" in spec.aliases[0] else "")
                            for spec in GAMES.values())
        raise ValueError(f"unknown game {name!r}; expected {known}")
    return _SPELLINGS[key]


def game_spec(name: object) -> GameSpec:
    """The :class:`GameSpec` of a game, by any of its spellings."""
    return GAMES[canonical_game(name)]


