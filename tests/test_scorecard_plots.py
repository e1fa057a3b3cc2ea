"""The charts at the edges: a match won 0 of 400 or 400 of 400 (issue 42 item 8), and the scorecard's layout
(issue 44 item 7): no deal is played, the functions get such rows."""

from __future__ import annotations

import json

import pytest

from cardenvs.train.benchmark import BenchmarkSettings, load_protocol, scorecard, scorecard_figure, write_scorecard
from cardenvs.train.evaluate import error_bars, plot_win_rates, write_gauntlet
from cardenvs.train.stats import wilson_interval

pytest.importorskip("matplotlib")


@pytest.mark.parametrize("n", [1, 80, 400, 100_000])
def test_the_wilson_interval_is_exact_at_the_edges_and_holds_the_rate(n):
    assert wilson_interval(0, n)[0] == 0.0
    assert wilson_interval(n, n)[1] == 1.0
    for wins in (0, 1, n // 2, n - 1, n):
        low, high = wilson_interval(wins, n)
        assert 0.0 <= low <= wins / n <= high <= 1.0


# a run's seed, how its deals were drawn and how the candidate ran (the scorecard states them)
RUN = (7, "secret", {"form": "bot process", "runs": "sandboxed process (bubblewrap 0.11.0)", "verified": True,
                     "sees_env": False})


def row(opponent: str, wins: int, episodes: int = 400) -> dict:
    return {"opponent": opponent, "deals": episodes // 2, "episodes": episodes, "wins": wins,
            "opponent_wins": episodes - wins, "win_rate": wins / episodes,
            "win_rate_ci95": list(wilson_interval(wins, episodes)), "mean_points": 1.0,
            "mean_points_ci95": [0.5, 1.5], "forfeits": 0 if wins else episodes,
            **({} if wins else {"forfeit_reasons": ["timed out"]})}


def test_a_scorecard_with_rows_at_0_and_100_percent_is_written_whole(tmp_path):
    protocol = load_protocol("ring_rang")
    rows = [row(spec, wins) for spec, wins in zip(protocol.specs, [0, 400] * len(protocol.specs), strict=False)]
    assert {r["win_rate"] for r in rows} == {0.0, 1.0}
    card = scorecard(protocol, BenchmarkSettings(), "exec:path=examples/bots/random_bot.py", rows, *RUN)
    written = write_scorecard(card, tmp_path)
    assert "scorecard.png" in written and (tmp_path / "scorecard.png").stat().st_size > 0
    saved = json.loads((tmp_path / "scorecard.json").read_text())
    assert all(r["win_rate_ci95"][0] == 0.0 for r in saved["rows"] if r["wins"] == 0)
    assert all(r["win_rate_ci95"][1] == 1.0 for r in saved["rows"] if r["wins"] == 400)


def test_the_win_rate_and_gauntlet_charts_at_0_and_100_percent(tmp_path):
    table = [{"agent": name, **row(name, wins)} for name, wins in (("a", 0), ("b", 400))]
    assert all(bar >= 0 for side in error_bars(table) for bar in side)
    result = {"config": {"game": "ring_rang"}, "episodes": 800, "table": table}
    assert plot_win_rates(result, tmp_path / "results.png")
    gauntlet = {"config": {"game": "ring_rang", "deals": 200, "seed": 0}, "candidate": "x",
                "rows": [{**row(name, wins), "opponent_mean_points": 0.0} for name, wins in (("a", 0), ("b", 400))]}
    gauntlet["worst"] = gauntlet["rows"][0]
    assert "gauntlet.png" in write_gauntlet(gauntlet, tmp_path)


def test_the_agents_label_on_the_ladder_does_not_cover_the_rating_axis():
    """The candidate's name stood left of its marker, over the ladder axis's tick labels."""
    protocol = load_protocol("ring_rang")
    rows = [row(spec, 200) for spec in protocol.specs]
    agent = "a_long_module_name.with_parts:make_a_rather_verbose_agent"
    fig = scorecard_figure(scorecard(protocol, BenchmarkSettings(), agent, rows, *RUN))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    side = fig.axes[1]
    named = [t for t in side.texts + (side.get_legend().get_texts() if side.get_legend() else [])
             if "verbose" in t.get_text()]
    assert named, "the agent is named on the ladder panel"
    ticks = [t.get_window_extent(renderer) for t in side.get_yticklabels() if t.get_text()]
    assert ticks
    for text in named:
        box = text.get_window_extent(renderer)
        assert not any(box.overlaps(tick) for tick in ticks), "the agent's label covers the rating ticks"
        assert box.x0 >= side.get_window_extent(renderer).x0 - 1, "the agent's label leaves the panel"
