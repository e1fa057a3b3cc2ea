"""Pool gauntlet runs of one candidate on different deal seeds into one table per opponent.

    python scripts/pool_gauntlets.py docs/strength/gauntlet_rang_trained docs/strength/gauntlet_rang_trained_seed1 ...

Each folder is the output of ``cardenvs eval --gauntlet --out FOLDER`` for the same candidate; the seeds give
disjoint deals, so their episodes add up. Prints each opponent's pooled win rate with a 95% Wilson interval
(the harness's) and the mean points of both sides, weighted by episodes, in the harness's gauntlet table.
Nothing is played here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cardenvs.train.evaluate import format_gauntlet
from cardenvs.train.stats import wilson_interval


def _weighted(rows: list[dict], key: str) -> float:
    """The mean of ``key`` over the rows' episodes (each row holds a mean over its own)."""
    return sum(row[key] * row["episodes"] for row in rows) / sum(row["episodes"] for row in rows)


def pooled(folders: list[Path]) -> dict:
    """One gauntlet result (the shape of :func:`run_gauntlet`'s) whose rows add up the runs' episodes."""
    runs = [json.loads((folder / "gauntlet.json").read_text()) for folder in folders]
    candidates = {run["candidate"] for run in runs}
    seeds = [run["config"]["seed"] for run in runs]
    if len(candidates) != 1:
        sys.exit(f"pool_gauntlets: the folders hold different candidates {sorted(candidates)}; pool one at a time")
    if len(set(seeds)) != len(seeds):
        sys.exit(f"pool_gauntlets: seeds {seeds} repeat, so deals would count twice; give one folder per seed")
    rows = []
    for opponent in [row["opponent"] for row in runs[0]["rows"]]:
        matches = [next(row for row in run["rows"] if row["opponent"] == opponent) for run in runs]
        episodes = sum(row["episodes"] for row in matches)
        win_rate = _weighted(matches, "win_rate")
        rows.append({"opponent": opponent, "episodes": episodes, "win_rate": win_rate,
                     "win_rate_ci95": wilson_interval(win_rate * episodes, episodes),
                     "mean_points": _weighted(matches, "mean_points"),
                     "opponent_mean_points": _weighted(matches, "opponent_mean_points")})
    config = {"game": runs[0]["config"]["game"], "deals": sum(run["config"]["deals"] for run in runs),
              "seed": ", ".join(str(seed) for seed in seeds)}
    return {"config": config, "candidate": candidates.pop(), "rows": rows,
            "worst": min(rows, key=lambda row: row["win_rate"])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="outputs of cardenvs eval --gauntlet, one per seed")
    folders = parser.parse_args().folders
    missing = [str(folder) for folder in folders if not (folder / "gauntlet.json").is_file()]
    if missing:
        sys.exit(f"pool_gauntlets: no gauntlet.json in {', '.join(missing)}; run cardenvs eval --gauntlet --out there")
    print(format_gauntlet(pooled(folders)))


if __name__ == "__main__":
    main()
