"""Agents by name, so configs, the evaluation harness and the CLI can name them.

A spec is ``name`` or ``name:key=value,key=value`` (e.g. ``"ismcts:iterations=100"``);
values are parsed as int, float or bool where they look like one, except the values of the keys in
:data:`STRING_KEYS` (``path``, ``log``, ...), which stay the text given (``exec:path=1e3`` names a file
``1e3``, ``log=1`` a file ``1``). A value in double quotes is taken as written, commas, colons and ``=``
included, and is always a string: ``exec:path="bots/a,b.py"`` (no escapes; a value cannot hold ``"``). Factories are
given as ``"module:attr"`` and imported on first use, so listing an agent costs nothing.

Agents from outside the package (:mod:`cardenvs.agents.outside`) are named the same way:

- ``module.path:attr[:key=value,...]``, an import path: a spec whose part after the first ``:`` holds
  no ``=`` before the next ``:`` (``mybots.greedy:GreedyBot:depth=3``);
- the name of an entry point of the group ``cardenvs.agents`` (``mybot``, ``mybot:depth=3``).

A registered name always wins over an entry point of the same name.
"""

from __future__ import annotations

import inspect
import typing
from importlib import import_module
from typing import Any

from cardenvs.games import GAMES as GAME_TABLE
from cardenvs.games import GAUNTLET_PREFIX, GameSpec, canonical_game, game_spec  # noqa: F401 (re-exported)

from .base import Agent
from .outside import build_outside_agent, entry_points, import_attribute, is_import_path, load_entry_point

# The agents every game has, by what its spec declares: name -> ("module:factory", the spec's capabilities it
# needs, joined by "+", or "" for none). A factory that names ``game`` is given it.
GENERIC_AGENTS: dict[str, tuple[str, str]] = {
    "random": ("cardenvs.agents.base:RandomAgent", ""),
    "policy": ("cardenvs.agents.policy:make_policy", ""),  # policy:path=FILE, a trained policy file
    "trained": ("cardenvs.agents.policy:make_trained", "trained"),  # the policy the game ships
    "pimc": ("cardenvs.agents.search:make_pimc", "search"),
    "ismcts": ("cardenvs.agents.search:make_ismcts", "search"),
    "guided": ("cardenvs.agents.guided:make_guided", "search+trained"),  # PIMC guided by the shipped policy
    "oracle": ("cardenvs.agents.search:make_oracle", "search"),  # sees every hand: measurement only
    "exec": ("cardenvs.agents.bot_process:make_exec_bot", ""),  # a program in any language (docs/bot_protocol.md)
    "onnx": ("cardenvs.agents.onnx_policy:make_onnx_policy", ""),  # a network from any framework
}


def game_agents(spec: GameSpec) -> dict[str, str]:
    """Every agent of a game: the generic ones its spec allows, then its own (``spec.agents``)."""
    has = {"": True, "trained": bool(spec.trained), "search": spec.has_part("search")}
    return {**{name: factory for name, (factory, needs) in GENERIC_AGENTS.items()
               if all(has[need] for need in needs.split("+"))}, **spec.agents}


class _AgentTable(dict):
    """game -> agent name -> "module:factory", built per game on first use (the games table is lazy)."""

    def __missing__(self, game: str) -> dict[str, str]:
        if game not in GAME_TABLE:
            raise KeyError(game)
        self[game] = game_agents(GAME_TABLE[game])
        return self[game]

    def __contains__(self, game: object) -> bool:
        return game in GAME_TABLE


# A factory is called as factory(seed=..., **params, **env_info) where env_info holds the env's settings (e.g.
# num_players for Rang).
AGENTS: dict[str, dict[str, str]] = _AgentTable()


# Keys whose values are file names, agent specs or tensor names: never numbers or booleans.
STRING_KEYS = frozenset({"path", "log", "rollout", "prior", "input", "output"})


def _split_items(rest: str, spec: str) -> list[str]:
    """``rest`` split at the commas outside double quotes."""
    items, current, quoted = [], [], False
    for char in rest:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    if quoted:
        raise ValueError(f"agent spec {spec!r}: a double quote is not closed")
    items.append("".join(current))
    return items


def _unquote(text: str) -> str | None:
    """The text inside ``"..."``, or None where ``text`` is not one quoted value."""
    if len(text) >= 2 and text[0] == text[-1] == '"' and '"' not in text[1:-1]:
        return text[1:-1]
    return None


def _parse_value(text: str, key: str = "") -> Any:
    quoted = _unquote(text)
    if quoted is not None:
        return quoted
    if key in STRING_KEYS:
        return text
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``"pimc:worlds=8,rollouts=2"`` -> ``("pimc", {"worlds": 8, "rollouts": 2})``;
    ``"mybots.greedy:GreedyBot:depth=3"`` -> ``("mybots.greedy:GreedyBot", {"depth": 3})``;
    ``'exec:path="a,b.py",log=1'`` -> ``("exec", {"path": "a,b.py", "log": "1"})``."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec must be a non-empty string, got {spec!r}")
    name, _, rest = spec.strip().partition(":")
    attr = rest.partition(":")[0]
    if attr and "=" not in attr:  # an import path: module:attr, then the parameters after a second colon
        name, rest = f"{name}:{attr}", rest[len(attr) + 1:]
    params: dict[str, Any] = {}
    if rest:
        for item in _split_items(rest, spec):
            key, eq, value = item.partition("=")
            if not eq or not key.strip():
                raise ValueError(f"agent spec {spec!r}: expected key=value, got {item!r}")
            params[key.strip()] = _parse_value(value.strip(), key.strip())
    return name, params


def gauntlet_agents(game: str) -> list[str]:
    """The gauntlet of ``game``: rule-based opponents of outside styles, for evaluation only.

    No training config may name them (tests/test_gauntlet.py checks every file in configs/), so a policy's
    results against them measure strength against opponents it never met. Only built-in agents belong to it.
    """
    _check_game(game)
    return list(game_spec(game).gauntlet)


def available_agents(game: str) -> list[str]:
    """The agent names of ``game``: the built-in ones and those installed packages publish (entry points)."""
    _check_game(game)
    return sorted({*AGENTS[game], *entry_points()})


def _check_game(game: str) -> None:
    if game not in GAME_TABLE:
        raise ValueError(f"unknown game {game!r}; expected one of {tuple(GAME_TABLE)}")


OUTSIDE_FORMS = "module.path:attr (an agent of your own code), exec:path=PROGRAM (a bot in any language), " \
    "onnx:path=FILE (an ONNX network)"


def check_spec(spec: str, game: str) -> None:
    """Raise ValueError unless ``spec`` names a known agent of ``game`` (an import path is imported now,
    so a module that fails is one line before any work; nothing is built)."""
    name, _ = parse_spec(spec)
    _check_game(game)
    if name in AGENTS[game] or name in entry_points():
        return
    if is_import_path(name):
        import_attribute(name)
        return
    raise ValueError(f"unknown agent {name!r} for {game}; available: {', '.join(available_agents(game))}; "
                     f"or {OUTSIDE_FORMS}")


def make_agent(spec: str, game: str, seed: int | None = None, **env_info: Any) -> Agent:
    """Build the agent a spec names, for ``game`` (a name of the games table: ``"ring_rang"``).

    ``env_info``: what the env was built with (``num_players=4``, ``episode="round"``, ...); every agent
    takes it, and gets the settings that change how it plays (the seat count where it varies).
    ``make_agent("rules_strong", "ring_rang", num_players=4)``
    """
    check_spec(spec, game)
    env_info = _agent_env_info(game, env_info)
    name, params = parse_spec(spec)
    if name not in AGENTS[game]:  # an entry point or an import path: the outside factory contract
        target = import_attribute(name) if is_import_path(name) else load_entry_point(name)
        context = {"seed": seed, "game": game, "num_players": game_spec(game).players_or_fixed(
            env_info.get("num_players"))}
        agent = build_outside_agent(target, spec, params, context)
        agent.name = spec
        return agent
    module_name, _, attr = AGENTS[game][name].partition(":")
    factory = getattr(import_module(module_name), attr)
    if "game" in inspect.signature(factory).parameters:  # the game-independent factories (exec:, onnx:)
        env_info = {**env_info, "game": game}
    # A spec parameter must be named by the factory, or forwarded by its ``**params`` to a
    # constructor that names it; ``**_`` (ignore the env_info you do not need) must not
    # swallow a misspelt one.
    accepted = inspect.signature(factory).parameters
    ignores = any(p.kind is p.VAR_KEYWORD and arg == "_" for arg, p in accepted.items())
    unknown = sorted(key for key in params if ignores and key not in accepted)
    if unknown:
        raise ValueError(f"agent {spec!r}: unknown parameter(s) {', '.join(unknown)}")
    try:
        agent = factory(seed=seed, **params, **env_info)
    except TypeError as error:
        known = _known_parameters(factory)
        hint = f"; it takes {', '.join(known)}" if known else ""
        raise ValueError(f"agent {spec!r}: bad parameters: {error}{hint}") from None
    agent.name = spec
    return agent


def _agent_env_info(game: str, env_info: dict[str, Any]) -> dict[str, Any]:
    """The env's settings an agent factory is given: ``num_players``, checked against the game, where it
    varies (GameSpec.env_info). Any other argument of the env's constructor is taken and not needed; a
    name the env does not take is a ValueError."""
    table = GAME_TABLE[game]
    known = set(inspect.signature(table.env_module_object().raw_env).parameters) | {"num_players", "illegal_action"}
    unknown = sorted(set(env_info) - known)
    if unknown:
        raise ValueError(f"unknown env setting(s) {', '.join(unknown)} for {game}; the env takes "
                         f"{', '.join(sorted(known))}")
    if "num_players" not in env_info:
        return {}
    return table.env_info(table.check_players(env_info["num_players"]))


def _known_parameters(factory: Any) -> list[str]:
    """The spec parameters a factory takes (its own, or its returned class's when it forwards ``**params``)."""
    names = [n for n, p in inspect.signature(factory).parameters.items()
             if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and n != "seed"]
    try:
        made = typing.get_type_hints(factory).get("return")
        if isinstance(made, type):
            names += [n for n, p in inspect.signature(made).parameters.items()
                      if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and n not in ("seed", "game", *names)]
    except (NameError, TypeError, ValueError):
        pass
    return [n for n in names if n not in ("num_players", "game")]


def check_agent(spec: str, game: str, **env_info: Any) -> None:
    """Build the agent a spec names once, so a bad parameter or a missing file is found before any work.

    :func:`check_spec` only knows the name; this runs the factory (``pimc:iterations=-5``,
    ``policy:path=nope.npz``, ``trained`` for a player count it was not trained for) and raises a
    one-line ValueError naming the spec. Nothing is kept.
    """
    try:
        make_agent(spec, game, seed=0, **env_info)
    except ValueError as error:
        text = str(error)
        raise ValueError(text if repr(spec) in text or spec in text else f"agent {spec!r}: {text}") from None
    except OSError as error:
        raise ValueError(f"agent {spec!r}: {error.strerror or error}: {error.filename}") from None
