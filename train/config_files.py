"""YAML config files read into documented dataclasses: unknown or ill-typed fields are errors naming the field."""

from __future__ import annotations

import types
import typing
from dataclasses import fields
from importlib.util import find_spec
from pathlib import Path
from typing import Any


def read_yaml_mapping(path: str | Path, kind: str) -> dict[str, Any]:
    """The mapping a YAML file holds; a ValueError naming the file when it cannot be read or is not one.

    PyYAML comes with the ``[train]`` extra; a core install gets a ValueError saying so, not an ImportError.
    """
    try:
        import yaml
    except ImportError:
        raise ValueError(f"reading {kind} {path} needs PyYAML: pip install 'cardenvs[train]' "
                         "(or pip install pyyaml)") from None

    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except OSError as error:
        raise ValueError(f"cannot read {kind} {path}: {error}") from None
    except yaml.YAMLError as error:
        raise ValueError(f"{kind} {path} is not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{kind} {path}: expected a mapping of fields")
    return data


def config_from_dict(data: dict[str, Any], source: str, schema: type) -> Any:
    """A ``schema`` dataclass (with a ``validate()`` method) from a mapping, every field type-checked."""
    hints = typing.get_type_hints(schema)
    known = {f.name for f in fields(schema)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"{source}: unknown field(s) {unknown}; known: {sorted(known)}")
    for name, value in data.items():
        if not _has_type(value, hints[name]):
            raise ValueError(f"{source}: field {name!r} expects {_type_name(hints[name])}, got {value!r}")
    config = schema(**data)
    try:
        config.validate()
    except ValueError as error:
        raise ValueError(f"{source}: {error}") from None
    return config


def _has_type(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_has_type(value, h) for h in typing.get_args(hint))
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is list:
        (item,) = typing.get_args(hint)
        return isinstance(value, list) and all(_has_type(v, item) for v in value)
    if origin is dict:
        key, item = typing.get_args(hint)
        return isinstance(value, dict) and all(_has_type(k, key) and _has_type(v, item) for k, v in value.items())
    if hint is Any:
        return True
    return isinstance(value, hint)


def _type_name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def require(command: str, *modules: str) -> None:
    """A ValueError naming the missing modules and the extra that brings them, before any work starts.

    Training imports its libraries late (matplotlib draws the curve only at the end), so a core install
    would otherwise fail after the run, not before it.
    """
    missing = [m for m in modules if find_spec(m) is None]
    if missing:
        raise ValueError(f"{command} needs {', '.join(missing)} (not installed): pip install 'cardenvs[train]'")
