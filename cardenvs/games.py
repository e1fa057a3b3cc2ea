"""The table of games: everything the layers above need to know about a game, asked of its spec.

A game is one folder that declares itself: ``cardenvs/<name>/spec.py`` (a built-in) or any installed
package that publishes its spec under the entry-point group ``cardenvs.games``
(``crazy_eights = "cardenvs_crazy_eights.spec:SPEC"``). Its :class:`GameSpec` names every piece
("module:attr" strings, imported on first use), how its rewards become points and wins
(:class:`Scoring`), and what it does not have (no batched engine, no gauntlet, no search rules, ...).
The harness, ratings, help texts, gym and PettingZoo ids, bench, play, serve, render and replay ask
the spec and never branch on a game's name; ``docs/adding_a_game.md`` lists every part and its signature.

The table is found on first use (:data:`GAMES` is a lazy mapping): built-in games by the ``spec.py``
in a folder of this package, no hand list; plugins by their entry points. A plugin that fails to load
is one warning, and the other games stay usable.
"""

from __future__ import annotations

import importlib.resources
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from importlib.metadata import entry_points
from typing import Any

import numpy as np

from .cards import CODES

ENTRY_POINT_GROUP = "cardenvs.games"
GAUNTLET_PREFIX = "gauntlet_"  # a game's agents named gauntlet_<style> are its gauntlet (evaluation only)

# The parts a game may declare (role -> what it is); docs/adding_a_game.md gives each signature.
PART_ROLES = {
    "view": "table_view(game, observer) -> dict: what the table shows (JSON-ready; required)",
    "text": "Text(raw_env, seat, color) class: the table as text for `cardenvs play` and `serve` (required)",
    "painter": "draw(view) -> HxWx3 uint8 array (optional: the generic painter otherwise)",
    "html": '{"css": str, "js": "function(v){...}"}: the view as HTML for replay pages and serve (optional: generic)',
    "faces": "faces(game, seat, action, label) -> (cards, suit, text) of a move's button (optional)",
    "search": "the search rules class (view/new_memory/sample/horizon/rewards/rollouts) of PIMC, ISMCTS, "
              "oracle (optional)",
    "symmetries": "symmetries() -> [(observation index map, action index map)] (optional)",
}
REQUIRED_PARTS = ("view", "text")


def _load(entry_point: str) -> Any:
    module, _, attr = entry_point.partition(":")
    loaded = import_module(module)
    return getattr(loaded, attr) if attr else loaded


def positive_reward_wins(reward: Any, episode: str) -> Any:
    """The default win rule: a side won its episode when its reward is positive."""
    return reward > 0


@dataclass(frozen=True)
class EpisodeEnd:
    """One episode's end as a game's scoring sees it: every seat at once (:attr:`Scoring.outcome`)."""

    episode: str  # the env's episode kind ("round", "deal", "match", ...)
    rewards: tuple[float, ...]  # every seat's episode reward, as the env paid it
    raw_points: tuple[float, ...] | None = None  # every seat's points as the engine states them (Scoring.raw_points)
    truncated: bool = False  # cut short (a turn limit): the harness declares no winner whatever the scoring says

    @property
    def num_players(self) -> int:
        return len(self.rewards)


@dataclass(frozen=True)
class Scoring:
    """How an episode becomes the harness's points and winners, and what they mean.

    Per seat (the original interface): ``won(reward, episode)`` says whether a side's reward is a win and
    works on numbers, arrays and tensors (the batched trainer asks it of a whole batch); ``points_scale``:
    episode kind -> points per unit of reward, rounded to whole points (a kind not listed: the reward itself is
    the points). The whole episode at once: ``raw_points(game, episode)`` reads every seat's points from the
    engine at the end (they are then the points shown), and ``outcome(end)`` states ``(points per seat, winning
    seats)`` from an :class:`EpisodeEnd`, for a game whose result is not one seat's reward alone (Hearts: the
    fewest points win). ``fewer_points_better``: how the rating ranks the seats that did not win, in a game
    where every seat plays for itself.
    """

    won: Callable[[Any, str], Any] = positive_reward_wins
    points_scale: Mapping[str, float] = field(default_factory=dict)
    fewer_points_better: bool = False
    points_meaning: str = "the episode reward of the agent's seats"
    rating_order: str = "each episode's result: who won"
    raw_points: Callable[[Any, str], Sequence[float] | None] | None = None  # (engine at the end, episode kind)
    outcome: Callable[[EpisodeEnd], tuple[Sequence[float], Sequence[int]]] | None = None

    def points(self, reward: float, episode: str) -> float:
        scale = self.points_scale.get(episode)
        return reward if scale is None else float(round(scale * reward))

    def result(self, end: EpisodeEnd) -> tuple[list[float], list[int]]:
        """(points per seat, winning seats) as the game states them: ``outcome`` where the game gives one; else
        the raw points (or each reward through ``points``) and the seats whose reward ``won`` calls a win."""
        if self.outcome is not None:
            points, winners = self.outcome(end)
            return [float(p) for p in points], sorted({int(s) for s in winners})
        points = list(end.raw_points) if end.raw_points is not None else [self.points(r, end.episode)
                                                                           for r in end.rewards]
        return [float(p) for p in points], [s for s, r in enumerate(end.rewards) if self.won(r, end.episode)]


@dataclass(frozen=True)
class GameSpec:
    """One game: its names, env, episode kinds, seats, sides, scoring, agents, parts and capabilities."""

    name: str  # the one spelling printed and stored: "ring_rang"
    title: str  # for people: "RING RANG"
    env_module: str  # the PettingZoo module (``env()``, ``raw_env``)
    env_name: str  # the env's metadata["name"] and PettingZoo id: "ring_rang_v0"
    gym_id: str  # the gymnasium id: "cardenvs/RingRang-v0"
    players: tuple[int, int]  # fewest and most seats
    episodes: dict[str, str]  # the harness's unit ("deal" or "game") -> the env's episode kind
    train_episode: str  # the episode kind the trainers use by default
    # (rng, unit, num_players) -> reset options of one random deal (unit "deal") or game/match ("game")
    random_options: Callable[[np.random.Generator, str, int], dict[str, Any]] = field(repr=False)
    aliases: tuple[str, ...] = ()  # other spellings a user may type
    partnerships: bool = False  # seats s and s + 2 play as one side (RING RANG) or every seat for itself
    scoring: Scoring = field(default_factory=Scoring)
    agents: dict[str, str] = field(default_factory=dict)  # the game's own agents: name -> "module:factory"
    parts: dict[str, str] = field(default_factory=dict)  # role (PART_ROLES) -> "module:attr"
    vector_env: str = ""  # "module:Class" of the batched torch env; "" = none (train-vector refuses)
    trained: str = ""  # the shipped policy: "package:file.npz" (package data); "" = none
    protocols: str = ""  # the package holding its benchmark protocols (<name>_v<N>.json); "" = none
    default_players: int = 4  # the seat count where a user gives none (clipped to ``players``)
    order: int = 100  # where the game is listed (then by name); the first game is the default of `play`/`serve`
    # conformance checks this game is exempt from, with the reason (tests/test_conformance.py)
    exempt: dict[str, str] = field(default_factory=dict)
    builtin: bool = field(default=False, compare=False)  # set by the table: found in this package

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

    def players_or_fixed(self, num_players: int | None) -> int:
        """The seat count of a game with ``num_players`` asked for (a fixed-size game ignores it; None: default)."""
        if self.fixed_players:
            return self.players[0]
        return self.default_seats if num_players is None else num_players

    @property
    def default_seats(self) -> int:
        return min(max(self.default_players, self.players[0]), self.players[1])

    def players_help(self) -> str:
        """The seat counts for a help text: "RING RANG: always 4; Rang: 2-10"."""
        return f"{self.title}: " + (f"always {self.players[0]}" if self.fixed_players
                                    else f"{self.players[0]}-{self.players[1]} (default {self.default_seats})")

    def env_info(self, num_players: int) -> dict[str, Any]:
        """The keyword arguments an agent factory gets from the env (``num_players`` where it varies)."""
        return {} if self.fixed_players else {"num_players": num_players}

    def side_of(self, seat: Any) -> Any:
        """The side a seat plays for: its team in a partnership game, else the seat itself (ints or tensors)."""
        return seat & 1 if self.partnerships else seat

    def num_sides(self, num_players: int) -> int:
        return 2 if self.partnerships else num_players

    def seats_of_side(self, seat: int, num_players: int) -> tuple[int, ...]:
        """Every seat on ``seat``'s side, ``seat`` first."""
        if self.partnerships:
            return (seat, (seat + 2) % num_players)
        return (seat,)

    def won(self, reward: Any, episode: str) -> Any:
        """Whether a side's episode reward is a win (:attr:`Scoring.won`)."""
        return self.scoring.won(reward, episode)

    # ----------------------------------------------------------- results
    def episode_end(self, episode: str, rewards: Sequence[float], truncated: bool = False,
                    game: Any = None) -> EpisodeEnd:
        """The :class:`EpisodeEnd` of an episode of kind ``episode``; ``game``: the engine at the end, whose raw
        points are read where the scoring declares ``raw_points``."""
        raw = None
        if self.scoring.raw_points is not None and game is not None:
            found = self.scoring.raw_points(game, episode)
            raw = None if found is None else tuple(float(p) for p in found)
        return EpisodeEnd(episode, tuple(float(r) for r in rewards), raw, bool(truncated))

    def judge(self, end: EpisodeEnd) -> tuple[list[float], list[int]]:
        """(points per seat, winning seats) of an episode as the game's scoring states them (none when truncated),
        checked against the rewards: a one-line ValueError naming the spec where they contradict
        (:meth:`result_problem`), so a wrong scoring cannot report inverted win rates."""
        points, winners = self.scoring.result(end)
        n = end.num_players
        if len(points) != n or not all(0 <= s < n for s in winners):
            raise ValueError(f"{self.scoring_name()} gave points {points!r:.80} and winners {winners!r:.80} for "
                             f"{n} seats: expected a point per seat and winners among seats 0..{n - 1}")
        if end.truncated:
            return points, []
        problem = self.result_problem(end, winners)
        if problem:
            raise ValueError(f"{self.scoring_name()} contradicts its rewards: {problem}; fix the scoring "
                             "(docs/adding_a_game.md#scoring)")
        return points, winners

    def result_problem(self, end: EpisodeEnd, winners: Sequence[int]) -> str:
        """What is wrong with ``winners`` as the result of ``end``, in words ("" when nothing): the rule every
        game's result keeps. Rewards order the seats as the result does: every winner's reward is at least every
        loser's (the agents learn from the rewards, so a winner paid less than a loser is a contradiction); in a
        partnership game the winners are one whole side."""
        rewards, n = end.rewards, end.num_players
        listed = "[" + ", ".join(f"{r:.4g}" for r in rewards) + "]"
        losers = [s for s in range(n) if s not in winners]
        if winners and losers:
            worst = min(winners, key=lambda s: rewards[s])
            best = max(losers, key=lambda s: rewards[s])
            gap = rewards[best] - rewards[worst]  # a rounding error in summed rewards is no contradiction
            if gap > 1e-9 * max(1.0, abs(rewards[best]), abs(rewards[worst])):
                return (f"in a {end.episode} with rewards {listed} it declares seat {worst} a winner (reward "
                        f"{rewards[worst]:.4g}) and seat {best} a loser (reward {rewards[best]:.4g}); a winner's "
                        f"reward must be at least every loser's, so seat {best} should have won")
        if self.partnerships and winners:
            side = sorted(self.seats_of_side(winners[0], n))
            if sorted(winners) != side:
                return (f"in a {end.episode} with rewards {listed} it declares seats {sorted(winners)} the winners; "
                        f"in a partnership game the winners are one whole side (seats {side})")
        return ""

    def scoring_name(self) -> str:
        """The spec, as an error names it: ``crazy_eights's scoring (GameSpec.scoring, in mypkg.spec)``."""
        rule = self.scoring.outcome or self.scoring.won
        module = getattr(rule, "__module__", "")
        return f"{self.name}'s scoring (GameSpec.scoring" + (f", in {module})" if module and module != __name__
                                                                 else ")")

    # ------------------------------------------------------------- envs
    def env_kwargs(self, episode: str | None = None, num_players: int | None = None) -> dict[str, Any]:
        """Constructor arguments of the env: the episode kind (training default) and the seats where they vary."""
        kwargs: dict[str, Any] = {"episode": episode or self.train_episode}
        if not self.fixed_players:
            kwargs["num_players"] = self.players_or_fixed(num_players)
        return kwargs

    def make_env(self, episode: str | None = None, num_players: int | None = None, **kwargs: Any) -> Any:
        """The wrapped AEC env (``kwargs`` are more constructor arguments; they win over the defaults)."""
        return self._construct("env", episode, num_players, kwargs)

    def make_raw_env(self, episode: str | None = None, num_players: int | None = None, **kwargs: Any) -> Any:
        return self._construct("raw_env", episode, num_players, kwargs)

    def _construct(self, constructor: str, episode: str | None, num_players: int | None,
                   kwargs: dict[str, Any]) -> Any:
        """The env module's ``env`` or ``raw_env``, blaming the spec when the env refuses a seat count it declares."""
        arguments = {**self.env_kwargs(episode, num_players), **kwargs}
        try:
            return getattr(self.env_module_object(), constructor)(**arguments)
        except ValueError as error:
            self._blame_players(arguments.get("num_players"), error)
            raise

    def _players_mismatch(self, detail: str) -> ValueError:
        low, high = self.players
        return ValueError(f"{self.name}: its spec declares {low}-{high} players (GameSpec.players), but {detail}; "
                          "the spec's range must be exactly the env's")

    def _blame_players(self, num_players: Any, error: ValueError) -> None:
        """An env that refused a seat count inside the spec's range: say it is the spec that is wrong, where the
        env also refuses that count with no other argument (a cheap check, made only once building failed)."""
        if self.fixed_players or isinstance(num_players, bool) or not isinstance(num_players, (int, np.integer)) \
                or not self.players[0] <= num_players <= self.players[1]:  # fmt: skip
            return
        try:
            self.env_module_object().raw_env(**self.env_kwargs(None, int(num_players)))
        except ValueError:
            raise self._players_mismatch(f"its env refuses {num_players} ({' '.join(str(error).split())[:200]})") \
                from None

    def check_env_players(self) -> None:
        """The spec's seat range is its env's: the env builds and deals (``random_options``, both units) at the
        fewest and the most seats, with that many agents, and refuses one seat fewer and one more (a fixed-size
        game: its env has that many agents). A one-line ValueError naming the spec otherwise (the conformance
        test asks it of every game)."""
        low, high = self.players
        if self.fixed_players:
            raw = self.env_module_object().raw_env(**self.env_kwargs())
            if raw.num_players != low:
                raise self._players_mismatch(f"its env has {raw.num_players}")
            return
        for n in sorted({low, high}):
            try:
                raw = self.env_module_object().raw_env(**self.env_kwargs(None, n))
                for unit in ("deal", "game"):
                    raw.reset(seed=0, options=self.random_options(np.random.default_rng(0), unit, n))
            except ValueError as error:
                raise self._players_mismatch(f"its env refuses {n} ({' '.join(str(error).split())[:200]})") \
                    from None
            if raw.num_players != n or len(raw.possible_agents) != n:
                raise self._players_mismatch(f"its env built for {n} has {len(raw.possible_agents)} agents")
        for n in (low - 1, high + 1):
            if n < 1:
                continue
            try:
                self.env_module_object().raw_env(**self.env_kwargs(None, n))
            except ValueError:
                continue
            raise self._players_mismatch(f"its env also takes {n} (it must refuse a seat count outside the range)")

    def env_module_object(self) -> Any:
        return import_module(self.env_module)

    @property
    def has_vector_env(self) -> bool:
        return bool(self.vector_env)

    def vector_env_class(self) -> type:
        """The batched torch env class (imports torch); a one-line ValueError where the game has none."""
        if not self.vector_env:
            raise ValueError(f"{self.title} has no batched engine (its spec declares no vector_env): "
                             f"train it with `cardenvs train` (the SB3 self-play trainer) instead")
        return _load(self.vector_env)

    # ----------------------------------------------------------- agents
    @property
    def gauntlet(self) -> tuple[str, ...]:
        """The game's gauntlet: its agents named ``gauntlet_<style>`` (none: the game has no gauntlet)."""
        return tuple(sorted(name for name in self.agents if name.startswith(GAUNTLET_PREFIX)))

    def trained_path(self) -> Any:
        """The shipped policy file (a ``Traversable`` path); a ValueError where the game ships none."""
        if not self.trained:
            raise ValueError(f"{self.title} ships no trained policy; use policy:path=FILE")
        package, _, name = self.trained.partition(":")
        return importlib.resources.files(package) / name

    def has_part(self, role: str) -> bool:
        return role in self.parts

    def part(self, role: str) -> Any:
        """The game's piece for ``role`` (see :data:`PART_ROLES`), imported on first use."""
        if role not in self.parts:
            raise ValueError(f"{self.title} declares no {role!r} part ({PART_ROLES.get(role, role)})")
        return _load(self.parts[role])


def shuffled_codes(rng: np.random.Generator, cards: Any) -> list[str]:
    """``cards`` (card indices) in a random order, as card codes: a deck for the reset options."""
    return [CODES[c] for c in rng.permutation(np.asarray(cards, dtype=np.int64))]


# ------------------------------------------------------------------ the table
def _builtin_specs() -> list[GameSpec]:
    """Every ``cardenvs/<folder>/spec.py`` of this package, by folder name."""
    specs = []
    root = importlib.resources.files(__package__)
    for folder in sorted(root.iterdir(), key=lambda f: f.name):
        if folder.is_dir() and (folder / "spec.py").is_file():
            spec = import_module(f"{__package__}.{folder.name}.spec").SPEC
            specs.append(GameSpec(**{**spec.__dict__, "builtin": True}))
    return specs


def _importing(module: str) -> bool:
    """Whether ``module`` is being imported right now (its code has not finished running)."""
    spec = getattr(sys.modules.get(module), "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


def _plugin_specs(taken: set[str]) -> tuple[list[GameSpec], bool]:
    """The specs installed packages publish (entry points of :data:`ENTRY_POINT_GROUP`), and whether one was
    left for later: a plugin whose spec module is being imported at this moment (it imported cardenvs, whose
    ``import`` reads the table) is read on a later look, not dropped."""
    specs, deferred = [], False
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        if _importing(point.module):
            deferred = True
            continue
        try:
            spec = point.load()
            spec = getattr(spec, "SPEC", spec)
            if not isinstance(spec, GameSpec):
                raise TypeError(f"{point.value} is a {type(spec).__name__}, not a cardenvs.games.GameSpec")
            check_spec(spec, taken)
        except Exception as error:  # one broken plugin must not take the other games down
            warnings.warn(f"cardenvs: game plugin {point.name!r} ({point.value}) skipped: {error}", stacklevel=2)
            continue
        taken.update(spellings(spec))
        specs.append(spec)
    return specs, deferred


def check_spec(spec: GameSpec, taken: set[str] = frozenset()) -> None:
    """A ValueError naming the first thing a spec gets wrong (a plugin's is checked before it is listed)."""
    if not spec.name.isidentifier() or spec.name != spec.name.lower():
        raise ValueError(f"name {spec.name!r} must be a lower-case Python identifier")
    for spelling in spellings(spec):
        if spelling in taken:
            raise ValueError(f"the name {spelling!r} is already a game's")
    low, high = spec.players
    if not 1 <= low <= high:
        raise ValueError(f"players {spec.players!r} must be (fewest, most) with 1 <= fewest <= most")
    if set(spec.episodes) != {"deal", "game"} or spec.train_episode not in spec.episodes.values():
        raise ValueError("episodes must map 'deal' and 'game' to the env's episode kinds, and train_episode be one")
    missing = [role for role in REQUIRED_PARTS if role not in spec.parts]
    unknown = sorted(set(spec.parts) - set(PART_ROLES))
    if missing or unknown:
        raise ValueError(f"parts: missing {missing}" if missing else f"parts: unknown roles {unknown}")
    if spec.partnerships and spec.players != (4, 4):
        raise ValueError("partnerships (seats s and s + 2 on one side) need exactly 4 players")


class _GameTable(Mapping[str, GameSpec]):
    """name -> :class:`GameSpec`, found on first use, listed by (``order``, name)."""

    def __init__(self) -> None:
        self._specs: dict[str, GameSpec] | None = None
        self._spellings: dict[str, str] | None = None

    def _table(self) -> dict[str, GameSpec]:
        if self._specs is None:
            builtins = _builtin_specs()
            taken = {spelling for spec in builtins for spelling in spellings(spec)}
            plugins, deferred = _plugin_specs(taken)
            specs = sorted((*builtins, *plugins), key=lambda spec: (spec.order, spec.name))
            table = {spec.name: spec for spec in specs}
            if deferred:  # complete on a later look, once that plugin's module has finished importing
                return table
            self._specs = table
        return self._specs

    def spellings(self) -> dict[str, str]:
        """Every spelling of every game -> its name (kept once the table is complete)."""
        if self._spellings is not None:
            return self._spellings
        found = {spelling: spec.name for spec in self._table().values() for spelling in spellings(spec)}
        if self._specs is not None:  # complete: no plugin left for a later look
            self._spellings = found
        return found

    def __getitem__(self, name: str) -> GameSpec:
        return self._table()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())

    def __repr__(self) -> str:
        return f"GAMES({list(self)})"


GAMES: _GameTable = _GameTable()


def __getattr__(name: str) -> Any:
    if name == "GAME_NAMES":  # a tuple, as it always was; found with the table
        return tuple(GAMES)
    raise AttributeError(f"module 'cardenvs.games' has no attribute {name!r}")


def spellings(spec: GameSpec) -> tuple[str, ...]:
    """Every name a user may give the game by: its name, its env's name and its aliases."""
    return (spec.name, spec.env_name, *spec.aliases)


def canonical_game(name: object) -> str:
    """``"ring-rang"``, ``"RING_RANG"``, ``"ring_rang_v0"`` -> ``"ring_rang"``; a ValueError listing the names."""
    key = name.strip().lower().replace(" ", "-") if isinstance(name, str) else None
    spellings = GAMES.spellings()
    if key not in spellings and isinstance(key, str):
        key = key.replace("-", "_")
    if key not in spellings:
        raise ValueError(f"unknown game {name!r}; expected {' or '.join(GAMES)}")
    return spellings[key]


def game_spec(name: object) -> GameSpec:
    """The :class:`GameSpec` of a game, by any of its spellings."""
    return GAMES[canonical_game(name)]


def games_help() -> str:
    """The game names for a help text: "ring_rang or rang"."""
    return " or ".join(GAMES)


def players_help() -> str:
    """Every game's seat counts for a help text: "RING RANG: always 4; Rang: 2-10 (default 4)"."""
    return "; ".join(spec.players_help() for spec in GAMES.values())


def episodes_help() -> str:
    """Every game's episode kinds for a help text: "ring_rang: game or round; rang: match or deal; crazy_eights:
    deal" (a kind named once where both units play the same)."""
    return "; ".join(f"{spec.name}: {' or '.join(dict.fromkeys((spec.episodes['game'], spec.episodes['deal'])))}"
                     for spec in GAMES.values())


def default_game() -> str:
    """The game a command plays where none is named: the first listed."""
    return next(iter(GAMES))
