"""The one game API: what every cardenvs engine answers, the same way for every game.

The models are pgx's ``Game`` (a small pure API over plain state, randomness passed in) and
OpenSpiel's Game / State / Observer split. An engine (``cardenvs.<game>.engine``) implements
:class:`Game`; its observation encoder lives beside it (``cardenvs.<game>.observation``). The
PettingZoo adapters, the gymnasium envs, search, the samplers, the bench and the differential
tests of the batched envs use only this API, never an engine's or adapter's private names.

numpy only: this layer imports neither gymnasium, PettingZoo nor torch.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np


class Outcome(NamedTuple):
    """What one step reports.

    rewards: per seat, the reward earned by this step, credited to the seat that earned it (None when all zero).
    finished: seats whose episode ends with this step (eliminated, or all at game end).
    truncated: the episode was cut short (turn limit): every live seat is truncated.
    """

    rewards: tuple[float, ...] | None = None
    finished: tuple[int, ...] = ()
    truncated: bool = False


NOTHING = Outcome()


@runtime_checkable
class Game(Protocol):
    """A game in progress, mutated in place by :meth:`step`; created by its engine from options and an RNG."""

    num_players: int

    def current_player(self) -> int:
        """The seat to act (meaningless once :meth:`is_over`)."""
        ...

    def legal_actions(self) -> list[int]:
        """The legal action indices, ascending (empty once over)."""
        ...

    def legal_mask(self) -> np.ndarray:
        """int8 mask over the action space: 1 where legal."""
        ...

    def step(self, action: int) -> Outcome:
        """Apply a legal action of :meth:`current_player`; an illegal one is a ValueError with nothing changed."""
        ...

    def is_over(self) -> bool:
        ...

    def seats_in_play(self) -> list[int]:
        """The seats whose episode goes on (none once over; Rang: those not yet out of the match)."""
        ...

    def observe(self, seat: int) -> np.ndarray:
        """The float32 observation of ``seat``: exactly the PettingZoo env's vector."""
        ...

    def clone(self) -> Any:
        """An independent copy (search plays out copies)."""
        ...

    def to_json(self) -> dict[str, Any]:
        """The whole state as JSON data; ``type(game).from_json(data)`` restores it."""
        ...


MAX_NESTING = 20  # lists and mappings in data read from a file (a record's options, a config; the deepest: 2)


def check_nesting(value: Any, where: str, limit: int = MAX_NESTING) -> None:
    """A ValueError naming ``where`` if ``value`` nests lists or mappings deeper than ``limit`` (checked without
    recursion, so data too deep for Python's recursion is a one-line error, not a RecursionError later)."""
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise ValueError(f"{where} is nested more than {limit} levels deep")
        if isinstance(node, dict):
            stack += [(v, depth + 1) for v in node.values()]
        elif isinstance(node, list):
            stack += [(v, depth + 1) for v in node]


def canonical(data: Any) -> Any:
    """A hashable, order-free form of JSON data (dicts as sorted tuples): what search keys views by."""
    if isinstance(data, dict):
        return tuple(sorted((k, canonical(v)) for k, v in data.items()))
    if isinstance(data, (list, tuple)):
        return tuple(canonical(v) for v in data)
    return data
