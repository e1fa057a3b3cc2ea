"""Agents written outside this package: import paths, entry points, plain functions and objects.

The registry (:mod:`cardenvs.agents.registry`) resolves a spec to one of these forms:

- ``module.path:attr`` or ``module.path:attr:key=value,...``: ``attr`` is imported from the caller's
  environment (the current folder is searched last, as ``python -m`` would);
- an entry point of the group ``cardenvs.agents`` published by an installed package, named like a built-in
  agent (``mybot``, ``mybot:depth=3``).

``attr`` (or the entry point's object) is one of:

- a *factory* (a class or a function) called with the spec's parameters and those of the keywords ``seed``
  (int or None), ``game`` (a game name, ``"ring_rang"``) and ``num_players`` that it names (all of them if
  it takes ``**kwargs``); it returns an :class:`~cardenvs.agents.base.Agent`, any object with
  ``act(observation) -> int``, or a function ``observation -> int``;
- a *policy function* ``observation -> int``: a function with exactly one parameter without a default,
  not named ``seed``, ``game`` or ``num_players``.

Whatever comes back is wrapped in :class:`OutsideAgent`, so the harness meets one interface. An action the
harness finds illegal (or not an int) forfeits the episode (:class:`Forfeit`); an exception raised by the
agent's own code while it plays stops the run with its traceback, as a bug should. A factory that raises is
one line naming the spec, the error and where it was raised (the run has not started).
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import traceback
from collections.abc import Callable
from importlib import import_module, metadata
from typing import Any

import numpy as np

from .base import Agent

ENTRY_POINT_GROUP = "cardenvs.agents"
CONTEXT_KEYWORDS = ("seed", "game", "num_players")


class Forfeit(Exception):
    """Raised while an agent acts: it gives up the episode (a crashed, silent or illegal-playing bot).

    The harness ends the episode there, counts it lost for that agent and reports the reason.
    """


# ------------------------------------------------------------------ finding
def is_import_path(name: str) -> bool:
    """``"mybots.greedy:make_bot"``: a spec name holding a colon names an importable attribute."""
    return ":" in name


def import_attribute(path: str) -> Any:
    """``"module.path:attr"`` -> the attribute; a one-line ValueError naming the module and the error.

    When the module is not found, the current folder is tried as well (console scripts do not search it),
    so ``cardenvs eval --agents mybot:make`` finds ``./mybot.py`` as ``python -m`` would.
    """
    module_name, _, attr = path.partition(":")
    if not module_name or not attr or not all(part.isidentifier() for part in (*module_name.split("."),
                                                                               *attr.split("."))):
        raise ValueError(f"agent {path!r}: expected module.path:attribute (e.g. mybots.greedy:make_bot)")
    try:
        module = _import_module(module_name)
    except Exception as error:  # noqa: BLE001 (the user's module may raise anything on import)
        raise ValueError(f"agent {path!r}: cannot import module {module_name!r}: "
                         f"{type(error).__name__}: {error}") from None
    target: Any = module
    for part in attr.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(f"agent {path!r}: module {module_name!r} has no attribute {attr!r}") from None
    return target


def _import_module(name: str) -> Any:
    try:
        return import_module(name)
    except ModuleNotFoundError as error:
        here = os.getcwd()
        if error.name != name.split(".")[0] or here in sys.path or "" in sys.path:
            raise
        sys.path.append(here)
        return import_module(name)


@functools.lru_cache(maxsize=1)
def entry_points() -> dict[str, metadata.EntryPoint]:
    """The agents installed packages publish under the entry-point group ``cardenvs.agents``, by name."""
    found: dict[str, metadata.EntryPoint] = {}
    for point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(point.name, point)
    return found


def load_entry_point(name: str) -> Any:
    point = entry_points()[name]
    try:
        return point.load()
    except Exception as error:  # noqa: BLE001
        raise ValueError(f"agent {name!r} (entry point {point.value!r} of {ENTRY_POINT_GROUP}): cannot load it: "
                         f"{type(error).__name__}: {error}") from None


# ----------------------------------------------------------------- building
def is_policy_function(target: Any) -> bool:
    """A function ``observation -> int`` (one parameter without a default), not a factory."""
    if inspect.isclass(target) or not callable(target):
        return False
    try:
        parameters = list(inspect.signature(target).parameters.values())
    except (TypeError, ValueError):
        return False
    required = [p for p in parameters if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return len(required) == 1 and required[0].name not in CONTEXT_KEYWORDS \
        and required[0].kind is not required[0].KEYWORD_ONLY


def context_for(factory: Callable[..., Any], context: dict[str, Any]) -> dict[str, Any]:
    """The keywords of ``context`` that ``factory`` names (all of them when it takes ``**kwargs``)."""
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return dict(context)
    return {key: value for key, value in context.items() if key in parameters}


def build_outside_agent(target: Any, spec: str, params: dict[str, Any], context: dict[str, Any]) -> OutsideAgent:
    """Call a factory (or take a policy function) and wrap what it gives in an :class:`OutsideAgent`."""
    if is_policy_function(target):
        if params:
            raise ValueError(f"agent {spec!r}: a policy function takes no parameters, got {sorted(params)}")
        made = target
    elif callable(target):
        kwargs = {**params, **context_for(target, context)}
        try:
            inspect.signature(target).bind(**kwargs)
        except TypeError as error:
            raise ValueError(f"agent {spec!r}: bad parameters: {error}") from None
        except ValueError:  # no signature to check (a builtin): the call says
            pass
        try:
            made = target(**kwargs)
        except Exception as error:  # noqa: BLE001 (the factory is the user's code: it may raise anything)
            raise ValueError(f"agent {spec!r}: its factory {_name_of(target)} raised {_one_line(error)}") from None
    else:
        raise ValueError(f"agent {spec!r}: {type(target).__name__} is neither a factory, a class nor a function")
    return OutsideAgent(made, spec, seed=context.get("seed"))


def _name_of(target: Any) -> str:
    return f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', type(target).__name__)}"


def _one_line(error: BaseException) -> str:
    """``RuntimeError: no model file (mybot.py:12)``: the error and where it was raised, on one line."""
    text = " ".join(str(error).split())[:300]
    where = ""
    frames = traceback.extract_tb(error.__traceback__)
    if frames:
        where = f" ({os.path.basename(frames[-1].filename)}:{frames[-1].lineno})"
    return f"{type(error).__name__}{': ' + text if text else ''}{where}"


class OutsideAgent(Agent):
    """One interface over an agent written elsewhere: an :class:`Agent`, an object with ``act`` or a function.

    Forwards ``reset(seed)``, ``needs_env``/``observe_env``, ``get_state``/``set_state`` and ``close`` where the
    wrapped object has them.
    """

    def __init__(self, inner: Any, spec: str, seed: int | None = None):
        super().__init__(seed)
        act = getattr(inner, "act", None)
        if callable(act):
            self._act = act
        elif callable(inner):
            self._act = inner
        else:
            raise ValueError(f"agent {spec!r}: got {type(inner).__name__}, which has no act(observation) method "
                             "and is not a function")
        self.inner = inner
        self.name = spec
        self.needs_env = bool(getattr(inner, "needs_env", False))
        self.out_of_process = bool(getattr(inner, "out_of_process", False))  # a bot process: seeded one way

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        reset = getattr(self.inner, "reset", None)
        if callable(reset):
            if "seed" in context_for(reset, {"seed": seed}):
                reset(seed=seed)
            else:
                reset()

    def observe_env(self, env: Any) -> None:
        if self.needs_env:
            self.inner.observe_env(env)

    def act(self, observation: dict[str, np.ndarray]) -> Any:
        return self._act(observation)

    def get_state(self) -> dict[str, Any]:
        getter = getattr(self.inner, "get_state", None)
        return getter() if callable(getter) else super().get_state()

    def set_state(self, state: dict[str, Any]) -> None:
        setter = getattr(self.inner, "set_state", None)
        if callable(setter):
            setter(state)
        else:
            super().set_state(state)

    def close(self) -> None:
        closer = getattr(self.inner, "close", None)
        if callable(closer):
            closer()


def checked_action(action: Any, mask: np.ndarray) -> int:
    """``action`` as an int if it is a legal action of ``mask``; else :class:`Forfeit` saying what was wrong.

    The harness checks every agent's answer here, so no agent can crash or stall the env with a bad one.
    """
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise Forfeit(f"answered {action!r:.60}, not an action index")
    if not 0 <= action < len(mask) or not mask[action]:
        raise Forfeit(f"played illegal action {int(action)}")
    return int(action)
