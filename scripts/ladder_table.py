"""A shipped reference ladder as a markdown table: each agent's rating with a 95% interval, and its worst pair.

    python scripts/ladder_table.py train/protocols/ring_rang_v3_ladder.json

The interval is the one a candidate gets (:func:`cardenvs.train.stats.place_on_ladder`): the agent placed from its
own matches against the others' fitted ratings, held fixed. So it says how well the round robin pins each
rating, not how much the others' ratings move with it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cardenvs.train.stats import place_on_ladder


def rows(ladder: dict) -> list[tuple[str, float, float, float, str]]:
    """(agent, rating, low, high, its lowest win rate in the round robin and against whom), best first."""
    ratings = ladder["ratings"]
    out = []
    for name in ratings:
        results, rates = [], []
        for m in ladder["matches"]:
            if name in (m["a"], m["b"]):
                mine, theirs, other = ((m["a_wins"], m["b_wins"], m["b"]) if m["a"] == name
                                       else (m["b_wins"], m["a_wins"], m["a"]))
                results.append((ratings[other], mine, theirs))
                rates.append((mine / (mine + theirs), other))
        _, low, high = place_on_ladder(results)
        worst_rate, worst = min(rates)
        out.append((name, ratings[name], low, high, f"{worst_rate:.3f} ({worst})"))
    return sorted(out, key=lambda r: -r[1])


def table(path: str) -> str:
    ladder = json.loads(Path(path).read_text())
    seed = f", seed {ladder['seed']}" if "seed" in ladder else ""  # v1's ladder was played on its public seed
    lines = [f"{ladder['protocol']}, {ladder['level']} level{seed}:", "",
             "| agent | rating [95% CI] | lowest win rate in the round robin (against) |", "|---|---|---|"]
    anchor = ladder["anchor"]
    for name, rating, low, high, worst in rows(ladder):
        interval = "anchor" if name == anchor else f"[{low:.0f}, {high:.0f}]"
        lines.append(f"| `{name}` | {rating:.0f} {interval} | {worst} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print("\n\n".join(table(p) for p in sys.argv[1:]))
