"""Time to strength: train from scratch, keep the policy at fixed marks of training, then measure each
against ``rules_strong`` (95% CIs) and write the curve of win rate against training seconds and decisions.

A benchmark, not a test: run by ``scripts/time_to_strength.sh``; results in docs/training.md.

    python scripts/time_to_strength.py --config configs/vector_tts_ring_rang.yaml --seeds 0 1 \\
        --deals 200 --out runs/tts_ring_rang                       # the config's total_steps, 5 marks
    python scripts/time_to_strength.py --config configs/vector_tts_ring_rang.yaml --seeds 0 1 \\
        --seconds 600 --every 120 --deals 200 --out runs/tts_ring_rang   # on the clock instead

By default (batched trainer) each seed trains the config's ``total_steps`` learner decisions (``--decisions``
to change it), keeping the policy every ``--every-decisions`` (default a fifth of the run): the policies are
the same on any machine, whatever its speed or load (issue 44), and the training seconds and decisions a
second are written beside them (with the CPU's model). With ``--seconds``, each seed trains that much
training time (the trainer's clock, evaluations and checkpoints not
counted: the ``train_seconds`` / ``keep_every_seconds`` fields both trainers have; ``--trainer sb3`` runs the
SB3 path, ``cardenvs.train.selfplay``, on one of its configs), alone on the machine, with
the trainer's own evaluations off. Only then are the kept policies evaluated, with ``--workers``
processes, so evaluation never competes with training for the cores. The machine's load average is
written next to every run (other people's work on a shared machine slows training down: read the
decisions column too).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

from cardenvs.train.evaluate import EvalConfig, evaluate
from cardenvs.train.runs import KEPT_POLICY

FIELDS = ["game", "trainer", "seed", "train_s", "decisions", "opponent", "deals", "episodes", "win_rate",
          "ci95_low", "ci95_high", "load_1min_start", "load_1min_end", "decisions_per_s", "precision", "cpu"]
TRAINERS = {"batched": "cardenvs.train.vector_ppo", "sb3": "cardenvs.train.selfplay"}  # --trainer -> module


def train(config_path: Path, seed: int, seconds: float, every: float, run_dir: Path,
          trainer: str = "batched", decisions: int = 0, every_decisions: int = 0) -> tuple[float, float]:
    """One run from scratch; returns the 1-minute load average before and after it.

    ``decisions`` > 0 (batched trainer): that many learner decisions, a policy kept at every evaluation
    (``policies/step_<N>.npz``, one every ``every_decisions``; the evaluation itself is one deal against
    random), no clock. Otherwise ``seconds`` of training on the clock, a policy kept every ``every`` seconds.
    """
    config = yaml.safe_load(config_path.read_text())
    config.update(seed=seed, run_dir=str(run_dir), train_seconds=seconds, keep_every_seconds=every,
                  total_steps=10**12, eval_every=10**12, checkpoint_every=10**12, eval_deals=1,
                  eval_opponents=["random"],  # the trainer's own evaluation: once at the end, one deal
                  export_to="", curve_to="")  # never over the shipped policy or the docs' curves
    if decisions:
        config.update(train_seconds=0, keep_every_seconds=0, total_steps=decisions, eval_every=every_decisions,
                      eval_at_start=False)
    if trainer == "sb3":
        config["progress"] = False
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / "tts_config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    load_start = os.getloadavg()[0]
    subprocess.run([sys.executable, "-m", TRAINERS[trainer], "--config", str(path)], check=True)
    return load_start, os.getloadavg()[0]


def kept_by_decisions(run_dir: Path) -> list[tuple[float, int, Path]]:
    """(training seconds, decisions, policy) of a decision-counted run: the policies its evaluations kept
    (``policies/step_<N>.npz``), each with curve.csv's wall seconds at that point: its evaluations are one
    deal each, so about the training seconds."""
    wall = {int(row["steps"]): float(row["wall_s"]) for row in csv.DictReader((run_dir / "curve.csv").open())}
    kept = []
    for path in (run_dir / "policies").glob("step_*.npz"):
        steps = int(path.stem.removeprefix("step_"))
        if steps in wall:
            kept.append((wall[steps], steps, path))
    return sorted(kept)


def measure(run_dir: Path, game: str, opponent: str, deals: int, workers: int, eval_seed: int) -> list[dict]:
    rows = []
    kept = sorted((float(m["seconds"]), int(m["steps"]), p) for p in (run_dir / "policies").glob("train_*.npz")
                   if (m := KEPT_POLICY.fullmatch(p.name)))
    if not kept:  # a run that counted decisions: the policies its evaluations kept
        kept = kept_by_decisions(run_dir)
    for seconds, steps, policy in kept:
        spec = f"policy:path={policy.resolve()}"
        result = evaluate(EvalConfig(game=game, agents=[spec, opponent], deals=deals, seed=eval_seed,
                                     workers=workers, progress=False))
        row = next(r for r in result["table"] if r["agent"] == spec)
        rows.append({"train_s": seconds, "decisions": steps, "opponent": opponent, "deals": deals,
                     "episodes": row["episodes"], "win_rate": row["win_rate"],
                     "ci95_low": row["win_rate_ci95"][0], "ci95_high": row["win_rate_ci95"][1]})
        print(f"{run_dir.name} {seconds:.0f} s, {steps} decisions: {row['win_rate']:.3f} "
              f"[{row['win_rate_ci95'][0]:.3f}, {row['win_rate_ci95'][1]:.3f}] vs {opponent}", file=sys.stderr)
    return rows


def plot(rows: list[dict], out: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for seed in sorted({r["seed"] for r in rows}):
        mine = [r for r in rows if r["seed"] == seed]
        x = [r["train_s"] for r in mine]
        ax.plot(x, [r["win_rate"] for r in mine], marker="o", label=f"seed {seed}")
        ax.fill_between(x, [r["ci95_low"] for r in mine], [r["ci95_high"] for r in mine], alpha=0.2)
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("training seconds (evaluations not counted)")
    ax.set_ylabel(f"win rate vs {rows[0]['opponent']} (95% CI)")
    ax.set_title(title, fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, required=True,
                        help="a config of the trainer (batched: configs/vector_*.yaml; sb3: configs/quick_*.yaml, ...)")
    parser.add_argument("--trainer", choices=sorted(TRAINERS), default="batched")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--decisions", type=int, default=0,
                        help="learner decisions per seed (default: the config's total_steps; batched trainer)")
    parser.add_argument("--every-decisions", type=int, default=0,
                        help="keep a policy every this many decisions (default: a fifth of --decisions)")
    parser.add_argument("--seconds", type=float, default=0.0,
                        help="train on the clock instead: training seconds per seed (the SB3 trainer: required)")
    parser.add_argument("--every", type=float, default=120.0,
                        help="with --seconds: keep a policy every this many training seconds")
    parser.add_argument("--opponent", default="rules_strong")
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--eval-seed", type=int, default=12345)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if not args.config.is_file():
        parser.error(f"--config {args.config}: no such file")
    if args.seconds < 0 or args.every <= 0 or args.deals < 1 or args.workers < 1 or args.decisions < 0 \
            or args.every_decisions < 0:
        parser.error("--seconds, --decisions and --every-decisions must be >= 0; --every, --deals and --workers "
                     "positive")
    config = yaml.safe_load(args.config.read_text())
    game = config["game"]
    if args.seconds and args.decisions:
        parser.error("give --seconds (the clock) or --decisions (a decision budget), not both")
    if not args.seconds:
        if args.trainer != "batched":
            parser.error("--trainer sb3 keeps policies by training seconds: give --seconds")
        args.decisions = args.decisions or int(config.get("total_steps", 0))
        args.every_decisions = args.every_decisions or max(args.decisions // 5, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for seed in args.seeds:
        run_dir = args.out / f"seed{seed}"
        started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        load_start, load_end = train(args.config, seed, args.seconds, args.every, run_dir, args.trainer,
                                     args.decisions, args.every_decisions)
        summary = json.loads((run_dir / "summary.json").read_text())
        speed = {"decisions_per_s": round(summary.get("decisions_per_training_s_this_session", 0.0)),
                 "precision": summary.get("precision", ""), "cpu": summary.get("cpu", "")}
        print(f"seed {seed}: {summary.get('steps', 0):,} decisions in {summary.get('train_s', 0):.0f} s of "
              f"training, {speed['decisions_per_s']:,} a second, {speed['precision'] or '-'}, on "
              f"{speed['cpu'] or '-'}", file=sys.stderr)
        for row in measure(run_dir, game, args.opponent, args.deals, args.workers, args.eval_seed):
            rows.append({"game": game, "trainer": args.trainer, "seed": seed, **row,
                         "load_1min_start": load_start, "load_1min_end": load_end, **speed})
        print(f"seed {seed}: trained from {started}, load average {load_start:.1f} -> {load_end:.1f}", file=sys.stderr)
    with (args.out / "time_to_strength.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    (args.out / "command.json").write_text(json.dumps({"argv": sys.argv, "config": str(args.config)}, indent=1))
    name = "batched PPO" if args.trainer == "batched" else "SB3 MaskablePPO"
    plot(rows, args.out / "time_to_strength.png", f"{game}: {name} from scratch, {args.config.name}")
    print(f"wrote {args.out / 'time_to_strength.csv'} and {args.out / 'time_to_strength.png'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
