"""Pool gauntlet runs of one candidate on different deal seeds into one table per opponent.

    python scripts/pool_gauntlets.py docs/strength/gauntlet_rang_trained docs/strength/gauntlet_rang_trained_seed1 ...

Each folder is the output of ``cardenvs eval --gauntlet --out FOLDER`` for the same candidate; the seeds give
disjoint deals, so their episodes add up. Prints each opponent's pooled win rate with a 95% Wilson interval
(the harness's) and the mean points of both sides, weighted by episodes. Nothing is played here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cardenvs.train.stats import wilson_interval


def pooled(folders: list[Path]) -> list[dict]:
    runs = [json.loads((folder / "gauntlet.json").read_text()) for folder in folders]
    candidates = {run["candidate"] for run in runs}
    seeds = [run["config"]["seed"] for run in runs]
    if len(candidates) != 1:
        sys.exit(f"pool_gauntlets: the folders hold different candidates {sorted(candidates)}; pool one at a time")
    if len(set(seeds)) != len(seeds):
        sys.exit(f"pool_gauntlets: seeds {seeds} repeat, so deals would count twice; give one folder per seed")
    table = []
    for opponent in [row["opponent"] for row in runs[0]["rows"]]:
        rows = [next(row for row in run["rows"] if row["opponent"] == opponent) for run in runs]
        episodes = sum(row["episodes"] for row in rows)
        wins = sum(row["win_rate"] * row["episodes"] for row in rows)
        low, high = wilson_interval(wins, episodes)
        table.append({
            "opponent": opponent, "episodes": episodes, "win_rate": wins / episodes, "ci95": (low, high),
            "points": sum(row["mean_points"] * row["episodes"] for row in rows) / episodes,
            "theirs": sum(row["opponent_mean_points"] * row["episodes"] for row in rows) / episodes,
        })
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="outputs of cardenvs eval --gauntlet, one per seed")
    folders = parser.parse_args().folders
    missing = [str(folder) for folder in folders if not (folder / "gauntlet.json").is_file()]
    if missing:
        sys.exit(f"pool_gauntlets: no gauntlet.json in {', '.join(missing)}; run cardenvs eval --gauntlet --out there")
    table = pooled(folders)
    print(f"{'opponent':22} {'episodes':>8}  win rate  95% CI            points   theirs")
    for row in table:
        low, high = row["ci95"]
        print(f"{row['opponent']:22} {row['episodes']:8d}  {row['win_rate']:.3f}  [{low:.3f}, {high:.3f}]  "
              f"{row['points']:7.3f}  {row['theirs']:7.3f}")
    worst = min(table, key=lambda row: row["win_rate"])
    print(f"worst: vs {worst['opponent']} {worst['win_rate']:.3f} [{worst['ci95'][0]:.3f}, {worst['ci95'][1]:.3f}]")


if __name__ == "__main__":
    main()
