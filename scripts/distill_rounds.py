"""The shipped policies stage by stage, read from the harness outputs kept in ``docs/strength/``.

    python scripts/distill_rounds.py              # RING RANG: docs/strength/distill_rounds.csv and .png
    python scripts/distill_rounds.py --game rang  # Rang: docs/strength/rang_distill_rounds.csv and .png

Each stage (RING RANG: the self-play league, then each distillation round; Rang: the batched-PPO policy,
then each round) against ``rules_strong`` (2000 deals, seed 0; RING RANG in duplicate), its worst gauntlet
match-up (RING RANG 1000 duplicate deals each, Rang 2000) and the exploit proxy (a fresh best response's win
rate; RING RANG 400k decisions, Rang 200k) and, for RING RANG, ``pimc:iterations=500`` (1000 duplicate deals),
with 95% CIs, where the stage's outputs were kept. Nothing is
measured here: run ``cardenvs eval`` / ``cardenvs exploit`` first (docs/strength.md lists the commands).
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

STRENGTH = Path(__file__).resolve().parents[1] / "docs" / "strength"
# stage -> (vs rules_strong, gauntlet, exploit) output folders; "" where a stage's outputs were not kept
RING_RANG_STAGES = {
    "league 10M": ("ring_rang_league_10M_vs_rules_strong", "gauntlet_ring_rang_league_10M", ""),
    "round 2": ("ring_rang_distill2_vs_rules_strong", "gauntlet_ring_rang_distill_round2",
                "exploit_ring_rang_distill_round2"),
    "round 3": ("ring_rang_distill_round3_vs_rules_strong", "gauntlet_ring_rang_distill_round3",
                "exploit_ring_rang_distill_round3"),
    "round 4": ("ring_rang_distill_round4_vs_rules_strong", "gauntlet_ring_rang_distill_round4",
                "exploit_ring_rang_distill_round4"),
    "round 5 (not shipped)": ("ring_rang_distill_round5_vs_rules_strong", "", ""),
    "round 6": ("ring_rang_distill_round6_vs_rules_strong", "gauntlet_ring_rang_distill_round6",
                "exploit_ring_rang_distill_round6"),
    "round 7": ("ring_rang_distill_round7_vs_rules_strong", "gauntlet_ring_rang_distill_round7",
                "exploit_ring_rang_distill_round7"),
    "round 8 (not shipped)": ("ring_rang_distill_round8_vs_rules_strong", "gauntlet_ring_rang_distill_round8", ""),
    "round 9 (not shipped)": ("ring_rang_distill_round9_vs_rules_strong", "", ""),
    "round 10 (not shipped)": ("ring_rang_distill_round10_vs_rules_strong", "", ""),
    "round 11 (shipped)": ("ring_rang_trained_vs_rules_strong", "gauntlet_ring_rang_trained",
                           "exploit_ring_rang_trained"),
    "round 12 (not shipped)": ("ring_rang_distill_round12_vs_rules_strong", "", ""),
}
# stage -> its match against pimc:iterations=500 (1000 duplicate deals, seed 0), where it was played
RING_RANG_VS_SEARCH = {
    "round 3": "ring_rang_distill_round3_vs_pimc500",
    "round 4": "ring_rang_distill_round4_vs_pimc500",
    "round 6": "ring_rang_distill_round6_vs_pimc500",
    "round 7": "ring_rang_distill_round7_vs_pimc500",
    "round 8 (not shipped)": "ring_rang_distill_round8_vs_pimc500",
    "round 9 (not shipped)": "ring_rang_distill_round9_vs_pimc500",
    "round 10 (not shipped)": "ring_rang_distill_round10_vs_pimc500",
    "round 11 (shipped)": "ring_rang_trained_vs_pimc500",
    "round 12 (not shipped)": "ring_rang_distill_round12_vs_pimc500",
}
SEARCH = "pimc:iterations=500"
RANG_STAGES = {
    "batched PPO": ("rang_ppo_win_vs_rules_strong", "gauntlet_rang_ppo_win_2000", "exploit_rang_trained_v1"),
    "round 1": ("rang_distill_round1_vs_rules_strong", "gauntlet_rang_distill_round1", ""),
    "round 2": ("rang_distill_round2_vs_rules_strong", "gauntlet_rang_distill_round2", "exploit_rang_distill_round2"),
    "round 3": ("rang_distill_round3_vs_rules_strong", "gauntlet_rang_distill_round3", "exploit_rang_distill_round3"),
    "round 4 (not shipped)": ("rang_distill_round4_vs_rules_strong", "", ""),
    "round 5": ("rang_distill_round5_vs_rules_strong", "gauntlet_rang_distill_round5", ""),
    "round 6 (shipped)": ("rang_distill_round6_vs_rules_strong", "gauntlet_rang_trained", "exploit_rang_trained"),
}
# game -> (stages, matches against the search, output name, title)
LOWER = "(the exploit line: lower is more robust)"
GAMES = {
    "ring_rang": (RING_RANG_STAGES, RING_RANG_VS_SEARCH, "distill_rounds", f"RING RANG policy by stage {LOWER}"),
    "rang": (RANG_STAGES, {}, "rang_distill_rounds", f"Rang 4p policy by stage {LOWER}"),
}
FIELDS = ["stage", "measure", "win_rate", "ci95_low", "ci95_high"]


def _read(folder: str, name: str) -> dict:
    return json.loads((STRENGTH / folder / name).read_text())


def _point(stage: str, measure: str, win_rate: float, ci95: list[float]) -> dict:
    return {"stage": stage, "measure": measure, "win_rate": win_rate, "ci95_low": ci95[0], "ci95_high": ci95[1]}


def _policy_row(folder: str, opponent: str) -> dict:
    """The policy's row of a two-agent match, picked by name (the table is sorted by win rate)."""
    return next(r for r in _read(folder, "results.json")["table"] if r["agent"] != opponent)


def rows(stages: dict[str, tuple[str, str, str]], vs_search: dict[str, str]) -> list[dict]:
    out = []
    for stage, (versus, gauntlet, exploit) in stages.items():
        for opponent, folder in (("rules_strong", versus), (SEARCH, vs_search.get(stage))):
            if folder:
                mine = _policy_row(folder, opponent)
                out.append(_point(stage, f"vs {opponent}", mine["win_rate"], mine["win_rate_ci95"]))
        if gauntlet:
            worst = _read(gauntlet, "gauntlet.json")["worst"]
            out.append(_point(stage, f"gauntlet worst ({worst['opponent']})", worst["win_rate"],
                              worst["win_rate_ci95"]))
        if exploit:
            data = _read(exploit, "exploit.json")
            out.append(_point(stage, "exploit: best response wins", data["best_response_win_rate"],
                              data["win_rate_ci95"]))
    return out


def plot(table: list[dict], stages: list[str], title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 4.6))
    for measure, colour in (("vs rules_strong", "tab:blue"), ("gauntlet worst", "black"),
                            ("exploit: best response wins", "tab:red"), (f"vs {SEARCH}", "tab:green")):
        points = [r for r in table if r["measure"].startswith(measure)]
        if not points:
            continue
        x = [stages.index(r["stage"]) for r in points]
        y = [r["win_rate"] for r in points]
        errors = [[max(0.0, r["win_rate"] - r["ci95_low"]) for r in points],
                  [max(0.0, r["ci95_high"] - r["win_rate"]) for r in points]]
        ax.errorbar(x, y, yerr=errors, marker="o", capsize=3, color=colour, label=measure)
    ax.axhline(0.5, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xticks(range(len(stages)), stages, rotation=20)
    ax.set_ylabel("win rate, 95% CI")
    ax.set_title(title)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", choices=sorted(GAMES), default="ring_rang")
    stages, vs_search, name, title = GAMES[parser.parse_args().game]
    table = rows(stages, vs_search)
    with (STRENGTH / f"{name}.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, FIELDS)
        writer.writeheader()
        writer.writerows(table)
    plot(table, list(stages), title, STRENGTH / f"{name}.png")
    print(f"wrote {STRENGTH / f'{name}.csv'} and {STRENGTH / f'{name}.png'}")


if __name__ == "__main__":
    main()
