"""Recorded games: the env, its settings, the reset seed/options and the actions, as JSON.

A record replays to the identical game because the envs are deterministic
given the reset seed and options (every shuffle comes from the env's seeded
RNG) and the actions. Only the actions of live agents are recorded; the
``step(None)`` of finished agents is done by :func:`replay` itself.

``cardenvs replay game.json`` prints the final table;
``cardenvs replay game.json --html out.html`` writes a self-contained page that
steps through the game (see :mod:`cardenvs.render`).

Record format (``version`` 1)::

    {"format": "cardenvs-replay", "version": 1, "env": <a game name: "ring_rang", "rang", a plugin's>,
     "env_kwargs": {...}, "seed": int | null, "options": {...} | null,
     "actions": [int, ...], "agents": [spec, ...] (optional, informational)}
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from cardenvs.core import check_nesting
from cardenvs.games import GAMES, canonical_game

FORMAT = "cardenvs-replay"
VERSION = 1
_KNOWN_FIELDS = {"format", "version", "env", "env_kwargs", "seed", "options", "actions", "agents"}


def env_name(name: str) -> str:
    """``"ring-rang"`` / ``"ring_rang_v0"`` -> ``"ring_rang"``; ValueError for an unknown game (the words
    of ``cardenvs eval``: "unknown game 'poker'; expected ...")."""
    return canonical_game(name)


def make_env(name: str, env_kwargs: dict[str, Any] | None = None) -> Any:
    """A wrapped env by game name (``render_mode`` may be among the kwargs)."""
    return GAMES[env_name(name)].env_module_object().env(**(env_kwargs or {}))


def record(
    env: str,
    env_kwargs: dict[str, Any] | None,
    seed: int | None,
    options: dict[str, Any] | None,
    actions: Sequence[int],
    agents: Sequence[str] | None = None,
) -> dict[str, Any]:
    """A JSON-ready record of a game; it is validated (a ValueError names the bad field)."""
    check_nesting(options, "options")  # before json.dumps, which would recurse past the limit
    data: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "env": env_name(env),
        "env_kwargs": dict(env_kwargs or {}),
        "seed": seed,
        "options": None if options is None else json.loads(json.dumps(options)),
        "actions": [int(a) for a in actions],
    }
    if agents is not None:
        data["agents"] = list(agents)
    validate(data)
    return data


def validate(data: Any) -> None:
    """Check a record's fields (not yet the legality of its actions: :func:`replay` does that)."""
    if not isinstance(data, dict):
        raise ValueError(f"a replay record must be a JSON object, got {type(data).__name__}")
    if data.get("format") != FORMAT:
        raise ValueError(f"field 'format' must be {FORMAT!r}, got {data.get('format')!r}")
    if data.get("version") != VERSION:
        raise ValueError(f"field 'version' must be {VERSION}, got {data.get('version')!r}")
    unknown = set(data) - _KNOWN_FIELDS
    if unknown:
        raise ValueError(f"unknown field(s) {sorted(unknown)}; a record has {sorted(_KNOWN_FIELDS)}")
    for field in ("env", "env_kwargs", "seed", "options", "actions"):
        if field not in data:
            raise ValueError(f"field {field!r} is missing")
    if not isinstance(data["env"], str) or data["env"] not in GAMES:
        raise ValueError(f"field 'env' must be one of {sorted(GAMES)}, got {data['env']!r}")
    if not isinstance(data["env_kwargs"], dict):
        raise ValueError(f"field 'env_kwargs' must be an object, got {type(data['env_kwargs']).__name__}")
    if "render_mode" in data["env_kwargs"]:
        raise ValueError("field 'env_kwargs' must not hold render_mode (it is not part of the game)")
    if data["env_kwargs"].get("illegal_action", "raise") != "raise":
        raise ValueError("field 'env_kwargs': illegal_action must be 'raise' (a replay rejects an illegal move; "
                         f"it does not penalise it), got {data['env_kwargs']['illegal_action']!r:.80}")
    seed = data["seed"]
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**128):
        raise ValueError(f"field 'seed' must be an int in 0..2**128 - 1 or null, got {seed!r:.80}")
    if data["options"] is not None and not isinstance(data["options"], dict):
        raise ValueError(f"field 'options' must be an object or null, got {type(data['options']).__name__}")
    check_nesting(data["options"], "field 'options'")
    actions = data["actions"]
    if not isinstance(actions, list):
        raise ValueError(f"field 'actions' must be a list of ints, got {type(actions).__name__}")
    for i, action in enumerate(actions):
        if isinstance(action, bool) or not isinstance(action, int) or action < 0:
            raise ValueError(f"field 'actions': item {i} must be a non-negative int, got {action!r}")
    agents = data.get("agents")
    if agents is not None and (not isinstance(agents, list) or not all(isinstance(a, str) for a in agents)):
        raise ValueError(f"field 'agents' must be a list of strings, got {agents!r}")


def _start(data: dict[str, Any], render_mode: str | None = None) -> Any:
    validate(data)
    kwargs = dict(data["env_kwargs"])
    if render_mode is not None:
        kwargs["render_mode"] = render_mode
    try:
        env = make_env(data["env"], kwargs)
    except (TypeError, ValueError) as error:
        raise ValueError(f"field 'env_kwargs': {error}") from None
    try:
        env.reset(seed=data["seed"], options=data["options"])
    except ValueError as error:
        raise ValueError(f"field 'options' (or 'seed'): {error}") from None
    return env


def _skip_finished(env: Any) -> None:
    """Step ``None`` for finished agents, as the PettingZoo loop does, until a live agent is to act."""
    while env.agents:
        agent = env.agent_selection
        if not (env.terminations[agent] or env.truncations[agent]):
            return
        env.step(None)


def steps(data: dict[str, Any], render_mode: str | None = None) -> Iterator[tuple[Any, str | None, int | None]]:
    """Replay a record: yields ``(env, None, None)`` at the start, then ``(env, agent, action)`` after each action."""
    env = _start(data, render_mode)
    _skip_finished(env)
    yield env, None, None
    for i, action in enumerate(data["actions"]):
        if not env.agents:
            raise ValueError(f"field 'actions': item {i} comes after the end of the game")
        agent = env.agent_selection
        try:
            env.step(action)
        except ValueError as error:
            raise ValueError(f"field 'actions': item {i}: {error}") from None
        _skip_finished(env)
        yield env, agent, action


def replay(data: dict[str, Any], render_mode: str | None = None) -> Any:
    """The env after replaying every action of the record (the identical game)."""
    final = None
    for env, _, _ in steps(data, render_mode):
        final = env
    return final


def load(path: str | Path) -> dict[str, Any]:
    """Read and validate a record file (ValueError naming the file and the problem)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not JSON: {error}") from None
    except ValueError as error:  # an integer of more digits than Python converts (a 5,000-digit seed)
        raise ValueError(f"{path}: not a record: {error}") from None
    except RecursionError:
        raise ValueError(f"{path}: not a record: nested too deeply") from None
    try:
        validate(data)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    return data


def save(data: dict[str, Any], path: str | Path) -> None:
    validate(data)
    Path(path).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def pretty_action(text: str) -> str:
    """An action name in the notation of every view: ``play TD`` -> ``play 10♦``, Rang ``play T`` -> ``play 10``,
    ``play Joker`` -> ``play JK`` (action names keep the codes, which are part of the env API)."""
    from cardenvs.cards import CODES, pretty

    words = []
    for word in text.split(" "):
        if word in CODES:
            word = pretty(CODES.index(word))
        elif word == "T":
            word = "10"
        elif word == "Joker":
            word = "JK"
        words.append(word)
    return " ".join(words)


def observer_seat(text: str | None) -> int | None:
    """``--observer``: a seat number (``0``) or an agent name (``player_0``); None shows every hand."""
    if text is None:
        return None
    value = text.strip().removeprefix("player_")
    if not value.isdigit():
        raise ValueError(f"--observer: expected a seat such as 0 or player_0, got {text!r}")
    return int(value)


def replay_title(data: dict[str, Any], observer: int | None = None) -> str:
    """The game and, for everyone's view only, its seed (which gives every hand away: not for one seat)."""
    return f"{data['env']} seed {data['seed']}" if observer is None else f"{data['env']} seen by player_{observer}"


def html_replay(data: dict[str, Any], observer: int | None = None) -> str:
    """A self-contained HTML page stepping through the recorded game (one step per action); with ``observer``
    nothing that seat could not see: the other hands, the seed, the cards of other seats' hidden moves."""
    from cardenvs.render import env_view, html_page

    frames = []
    for env, agent, action in steps(data):
        if action is None:
            caption = f"start: {replay_title(data, observer)}"
        else:
            seat = env.unwrapped.possible_agents.index(agent)
            caption = f"step {len(frames)}: {agent} {env.unwrapped.action_text(action, seat, observer)}"
        frames.append({"caption": pretty_action(caption), "view": env_view(env, observer)})
    return html_page(frames, f"cardenvs replay: {replay_title(data, observer)}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cardenvs replay", description="Replay a recorded game (JSON).")
    parser.add_argument("record", help="a record written by `cardenvs play --record` or cardenvs.replay.save")
    parser.add_argument("--html", metavar="OUT", help="write a self-contained HTML page that steps through the game")
    parser.add_argument("--observer", default=None, metavar="SEAT",
                        help="show only this seat's hand, in the terminal, the HTML and the PNG: 0 or player_0 "
                             "(default: all)")
    parser.add_argument("--png", metavar="OUT", help="write an image of the final table (needs Pillow)")
    args = parser.parse_args(argv)
    try:
        if args.png and importlib.util.find_spec("PIL") is None:  # before anything is printed or written
            raise ValueError("--png needs Pillow: pip install 'cardenvs[render]' (or pip install pillow)")
        observer = observer_seat(args.observer)
        data = load(args.record)
        env = replay(data, render_mode="ansi")
        seats = env.unwrapped.num_players
        if observer is not None and not 0 <= observer < seats:
            raise ValueError(f"--observer: this game has seats 0..{seats - 1}, got {observer}")
        if args.html:
            Path(args.html).write_text(html_replay(data, observer), encoding="utf-8")
            print(f"wrote {args.html} ({len(data['actions']) + 1} steps)")
        print(env.unwrapped.table_text(observer))
        if args.png:
            from cardenvs.render import draw_view, env_view, save_png

            save_png(draw_view(env_view(env, observer)), args.png)
            print(f"wrote {args.png}")
    except (OSError, ValueError, ImportError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
