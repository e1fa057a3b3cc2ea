"""A run's learning curve against the gauntlet: every policy the trainer kept, measured afterwards.

    python scripts/gauntlet_curve.py runs/vector_league_ring_rang --deals 200 --workers 2

The batched trainer keeps each evaluated policy (``<run>/policies/step_<N>.npz``) and logs its
evaluation opponents in ``<run>/curve.csv``; the gauntlet is named by no training config, so it is
measured here, after the fact: each kept policy against every gauntlet agent (``cardenvs eval
--gauntlet``). Rows already in ``<run>/gauntlet_curve.csv`` are kept (the script resumes), and
``<run>/learning_curve_gauntlet.png`` shows the training opponents' curves, each gauntlet match-up and
the worst of them, with 95% CIs.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from pathlib import Path

from cardenvs.train.evaluate import EvalConfig, run_gauntlet

FIELDS = ["steps", "opponent", "deals", "episodes", "win_rate", "ci95_low", "ci95_high", "mean_points"]


def measure(run: Path, deals: int, seed: int, workers: int, every: int) -> Path:
    config = json.loads((run / "config.json").read_text())
    out = run / "gauntlet_curve.csv"
    done = {int(r["steps"]) for r in csv.DictReader(out.open())} if out.exists() else set()
    if not out.exists():
        with out.open("w", newline="") as f:
            csv.DictWriter(f, FIELDS).writeheader()
    kept = sorted((int(re.search(r"step_(\d+)", p.name).group(1)), p) for p in (run / "policies").glob("step_*.npz"))
    todo = [(s, p) for i, (s, p) in enumerate(kept) if s not in done and (i % every == 0 or i == len(kept) - 1)]
    for steps, path in todo:
        result = run_gauntlet(EvalConfig(game=config["game"], agents=[f"policy:path={path.resolve()}"], deals=deals,
                                         seed=seed, num_players=config.get("num_players", 4), workers=workers,
                                         gauntlet=True, progress=False))
        with out.open("a", newline="") as f:
            writer = csv.DictWriter(f, FIELDS)
            for row in result["rows"]:
                writer.writerow({"steps": steps, "opponent": row["opponent"], "deals": deals,
                                 "episodes": row["episodes"], "win_rate": round(row["win_rate"], 4),
                                 "ci95_low": round(row["win_rate_ci95"][0], 4),
                                 "ci95_high": round(row["win_rate_ci95"][1], 4),
                                 "mean_points": round(row["mean_points"], 4)})
        worst = result["worst"]
        print(f"step {steps}: worst vs {worst['opponent']} {worst['win_rate']:.3f} "
              f"[{worst['win_rate_ci95'][0]:.3f}, {worst['win_rate_ci95'][1]:.3f}]", flush=True)
    return out


def plot(run: Path, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def series(path: Path) -> dict[str, list[dict[str, str]]]:
        rows = list(csv.DictReader(path.open())) if path.exists() else []
        grouped: dict[str, list[dict[str, str]]] = {}
        for row in sorted(rows, key=lambda r: int(r["steps"])):
            grouped.setdefault(row["opponent"], []).append(row)
        return grouped

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for opponent, rows in series(run / "curve.csv").items():
        steps = [int(r["steps"]) for r in rows]
        ax.plot(steps, [float(r["win_rate"]) for r in rows], marker="o", label=f"vs {opponent} (training eval)")
        ax.fill_between(steps, [float(r["ci95_low"]) for r in rows], [float(r["ci95_high"]) for r in rows], alpha=0.15)
    gauntlet = series(run / "gauntlet_curve.csv")
    for opponent, rows in gauntlet.items():
        ax.plot([int(r["steps"]) for r in rows], [float(r["win_rate"]) for r in rows], linewidth=0.8, alpha=0.6,
                label=f"vs {opponent}")
    by_step: dict[int, dict[str, str]] = {}
    for rows in gauntlet.values():
        for r in rows:
            step = int(r["steps"])
            if step not in by_step or float(r["win_rate"]) < float(by_step[step]["win_rate"]):
                by_step[step] = r
    if by_step:
        steps = sorted(by_step)
        ax.plot(steps, [float(by_step[s]["win_rate"]) for s in steps], color="black", linewidth=2, marker="s",
                label="gauntlet: worst match-up")
        ax.fill_between(steps, [float(by_step[s]["ci95_low"]) for s in steps],
                        [float(by_step[s]["ci95_high"]) for s in steps], color="black", alpha=0.12)
    ax.axhline(0.5, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("learner steps")
    ax.set_ylabel("win rate (95% CI)")
    ax.set_ylim(0, 1)
    ax.set_title(f"{run.name}: training opponents and the gauntlet (never trained against)")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("run", type=Path, help="a batched trainer's run folder")
    parser.add_argument("--deals", type=int, default=200, help="deals per gauntlet match-up and kept policy")
    parser.add_argument("--seed", type=int, default=12345, help="the deals (the trainer's eval_seed by default)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--every", type=int, default=1, help="measure every k-th kept policy (and the last)")
    args = parser.parse_args()
    if not (args.run / "config.json").exists():
        parser.error(f"{args.run} is not a run folder (no config.json)")
    measure(args.run, args.deals, args.seed, args.workers, args.every)
    print(f"wrote {plot(args.run, args.run / 'learning_curve_gauntlet.png')}")


if __name__ == "__main__":
    main()
