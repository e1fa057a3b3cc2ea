"""The lean AEC loop's speed-up (issue 36): ``env()`` against the loop before it, timed in turns in one run.

A benchmark, not a test: the frozen reference loops live in ``tests/aec_before.py`` (which
``tests/test_aec_loop.py`` checks play identically). Results in docs/training.md ("The AEC loop").

    python scripts/aec_loop_speedup.py [--seconds 3]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import aec_before  # noqa: E402

from cardenvs import rang_v0, ring_rang_v0  # noqa: E402
from cardenvs.bench import _timed, aec_loop  # noqa: E402


def paired(loops: dict[str, Callable[[int], Callable[[float], tuple[int, int]]]], seconds: float,
           slices: int = 6) -> dict[str, dict[str, float]]:
    """Time loops in turns of ``seconds / slices`` each (``loops[name](seed)`` makes one), so that a load that
    comes and goes on a shared machine falls on all of them alike; each gets ``seconds`` in all."""
    totals = {name: {"decisions": 0, "games": 0, "seconds": 0.0} for name in loops}
    for turn in range(slices):
        for name, make in loops.items():
            result = _timed(make(turn * 100_000), seconds / slices)
            for key in totals[name]:
                totals[name][key] += result[key]
    return {name: dict(t, decisions_per_s=t["decisions"] / t["seconds"]) for name, t in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="time of each loop (default 3)")
    args = parser.parse_args()
    cases = {"RING RANG env()": (ring_rang_v0.env, aec_before.ring_rang_env),
             "Rang 4p env()": (lambda: rang_v0.env(num_players=4), aec_before.rang_env)}
    for name, (now, before) in cases.items():
        timed = paired({"now": lambda seed, now=now: aec_loop(now, seed),
                        "before": lambda seed, before=before: aec_loop(before, seed)}, args.seconds)
        rate_now, rate_before = timed["now"]["decisions_per_s"], timed["before"]["decisions_per_s"]
        print(f"{name}: {rate_now:,.0f} vs {rate_before:,.0f} decisions/s before: {rate_now / rate_before:.2f}x")


if __name__ == "__main__":
    main()
