"""The reference scorecards of docs/benchmark.md as a markdown table: one row per agent, one column per opponent.

    python scripts/scorecards_table.py docs/benchmark/ring_rang_*_quick/scorecard.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def table(paths: list[str]) -> str:
    cards = [json.loads(Path(p).read_text()) for p in paths]
    opponents = [row["opponent"] for row in cards[0]["rows"]]
    head = ["agent", "rating [95% CI]", *opponents, "forfeits"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for card in sorted(cards, key=lambda c: -c["rating"]["value"]):
        rating = card["rating"]
        cells = [f"`{card['agent']}`", f"{rating['value']:.0f} [{rating['ci95'][0]:.0f}, {rating['ci95'][1]:.0f}]"]
        rows = {row["opponent"]: row for row in card["rows"]}
        cells += [f"{rows[o]['win_rate']:.3f} [{rows[o]['win_rate_ci95'][0]:.2f}, {rows[o]['win_rate_ci95'][1]:.2f}]"
                  for o in opponents]
        cells.append(str(sum(row["forfeits"] for row in card["rows"])))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(sys.argv[1:]))
