"""Time controls for bot processes, as chess tournaments set them: a limit per decision and a clock for the run.

The clock starts at ``base`` seconds; each decision may take what is on it plus ``increment`` (and never more
than ``per_decision``), and leaves ``clock + increment - spent`` on it (Fischer's increment). A bot whose clock
runs out forfeits its episode, and every later episode of the run at its first decision, so a run's worst case is
bounded: ``base + increment * decisions`` of the bot's time, whatever the bot does. The time a program takes to
start (``startup``) is not on the clock.

The harness gives each chunk of deals its share of the base (in proportion to its deals) and the full increment
per decision, so the clock is the same however the deals are spread over workers or a cluster.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

MAX_PER_DECISION = 60.0  # seconds: a longer limit would let one bot hold a run for hours


@dataclass(frozen=True)
class TimeControl:
    """``per_decision`` seconds at most for one decision; ``base`` seconds for the run plus ``increment`` a
    decision. The benchmark's default bounds its quick protocol at about 75 minutes of a bot's thinking."""

    per_decision: float = 5.0
    base: float = 120.0
    increment: float = 0.05

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TimeControl:
        if not isinstance(data, dict) or set(data) - {"per_decision", "base", "increment"}:
            raise ValueError(f"time_control: expected keys per_decision, base, increment, got {data!r}")
        control = cls(**data)
        control.check()
        return control

    def check(self) -> None:
        bounds = (("per_decision", self.per_decision, 0, MAX_PER_DECISION), ("base", self.base, 0, 10 ** 7),
                  ("increment", self.increment, 0, MAX_PER_DECISION))
        for name, value, low, high in bounds:
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high \
                    or (name == "per_decision" and value == 0):
                raise ValueError(f"time_control: {name} must be a number of seconds in "
                                 f"{'(' if name == 'per_decision' else '['}{low}, {high:g}], got {value!r}")

    def text(self) -> str:
        return (f"{self.per_decision:g} s a decision at most; a clock of {self.base:g} s for the run plus "
                f"{self.increment:g} s a decision")

    def worst_case(self, decisions: int) -> float:
        """The most a bot can spend over ``decisions`` decisions before its clock runs out."""
        return self.base + self.increment * decisions

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


class Clock:
    """One bot's clock over a chunk of deals (its share of the base)."""

    def __init__(self, control: TimeControl, base: float):
        self.control = control
        self.left = float(base)

    def available(self) -> float:
        """Seconds the next decision may take (0 or less: the clock ran out)."""
        return min(self.control.per_decision, self.left + self.control.increment)

    def charge(self, seconds: float) -> None:
        self.left += self.control.increment - seconds

    def out_of_time(self) -> str:
        return f"out of time: its clock ({self.control.text()}) ran out"
