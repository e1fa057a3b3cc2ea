"""Confidence intervals and ratings used by the evaluation harness."""

from __future__ import annotations

import math
from collections.abc import Sequence

Z95 = 1.959963984540054


def wilson_interval(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """95% Wilson score interval of a win rate (ties may count as half wins).

    At the edges the bound is exact: no win gives a low of 0.0 and all wins a high of 1.0 (rounding would give
    8.7e-19 and 0.9999999999999999, so a plot's error bar from the rate to its bound came out negative).
    The interval always holds the rate.
    """
    if n <= 0:
        return (0.0, 1.0)
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if wins <= 0 else min(p, max(0.0, centre - half))
    high = 1.0 if wins >= n else max(p, min(1.0, centre + half))
    return (low, high)


def mean_interval(values: Sequence[float], z: float = Z95) -> tuple[float, float, float]:
    """Mean and its normal-approximation 95% interval."""
    n = len(values)
    if n == 0:
        return (float("nan"), float("nan"), float("nan"))
    mean = sum(values) / n
    if n == 1:
        return (mean, float("-inf"), float("inf"))
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(var / n)
    return (mean, mean - half, mean + half)


class Elo:
    """Plain Elo over team results, used when OpenSkill is not installed."""

    def __init__(self, k: float = 16.0):
        self.k = k
        self.ratings: dict[str, float] = {}

    def rate(self, teams: Sequence[Sequence[str]], ranks: Sequence[int]) -> None:
        mean = [sum(self.ratings.setdefault(p, 1500.0) for p in t) / len(t) for t in teams]
        delta = [0.0] * len(teams)
        for i in range(len(teams)):
            for j in range(len(teams)):
                if i == j:
                    continue
                expected = 1 / (1 + 10 ** ((mean[j] - mean[i]) / 400))
                score = 1.0 if ranks[i] < ranks[j] else 0.5 if ranks[i] == ranks[j] else 0.0
                delta[i] += self.k * (score - expected)
        for team, d in zip(teams, delta, strict=True):
            for p in set(team):
                self.ratings[p] += d / len(set(team))

    def table(self) -> list[tuple[str, float, float]]:
        return sorted(((p, r, 0.0) for p, r in self.ratings.items()), key=lambda x: -x[1])


class Rating:
    """OpenSkill (Plackett-Luce) where installed, else Elo; players are agent names."""

    def __init__(self) -> None:
        try:
            from openskill.models import PlackettLuce
        except ImportError:
            self.model = None
            self.elo = Elo()
            self.kind = "Elo"
        else:
            self.model = PlackettLuce()
            self.players: dict[str, object] = {}
            self.kind = "OpenSkill (Plackett-Luce)"

    def rate(self, teams: Sequence[Sequence[str]], ranks: Sequence[int]) -> None:
        """Rate one result; ``teams`` lists agent names per side, lower rank is better."""
        if self.model is None:
            self.elo.rate(teams, ranks)
            return
        # An agent may fill several seats of one side: rate it once per side.
        sides = [sorted(set(t)) for t in teams]
        rated = self.model.rate(
            [[self.players.setdefault(p, self.model.rating(name=p)) for p in side] for side in sides],
            ranks=list(ranks),
        )
        for side, new in zip(sides, rated, strict=True):
            for p, r in zip(side, new, strict=True):
                self.players[p] = r

    def table(self) -> list[tuple[str, float, float]]:
        """(name, ordinal or Elo, sigma) best first."""
        if self.model is None:
            return self.elo.table()
        rows = [(p, r.ordinal(), r.sigma) for p, r in self.players.items()]
        return sorted(rows, key=lambda x: -x[1])


# ----------------------------------------------------- Bradley-Terry ladder
ELO = 400.0 / math.log(10.0)  # rating points per unit of log-odds: 400 points = 10 to 1
PRIOR_GAMES = 0.5  # each pairing counts half a win and half a loss more, so a clean sweep stays finite


def _win_probability(difference: float) -> float:
    return 1.0 / (1.0 + math.exp(-difference / ELO))


def place_on_ladder(results: Sequence[tuple[float, float, float]], z: float = Z95) -> tuple[float, float, float]:
    """The Bradley-Terry rating of one player from ``(opponent rating, wins, losses)`` against fixed opponents:
    ``(rating, low, high)`` with a 95% interval from the curvature of the likelihood (Elo scale).

    Deterministic (Newton's method from the mean opponent rating, a fixed number of steps), so the same
    results give the same rating byte for byte.
    """
    games = [(r, w + PRIOR_GAMES, l + PRIOR_GAMES) for r, w, l in results]
    rating = sum(r for r, _, _ in games) / len(games)
    information = 1.0
    for _ in range(100):
        gradient, information = 0.0, 0.0
        for r, w, l in games:
            p = _win_probability(rating - r)
            gradient += (w - (w + l) * p) / ELO
            information += (w + l) * p * (1 - p) / ELO**2
        step = max(-400.0, min(400.0, gradient / information))
        rating += step
        if abs(step) < 1e-9:
            break
    half = z / math.sqrt(information)
    return rating, rating - half, rating + half


def fit_ladder(pairs: Sequence[tuple[str, str, float, float]], anchor: str, sweeps: int = 200) -> dict[str, float]:
    """Joint Bradley-Terry ratings of players from ``(a, b, a's wins, b's wins)``, ``anchor`` at 0 (Elo scale).

    Each sweep places every player against the others' current ratings (:func:`place_on_ladder`); a fixed
    number of sweeps keeps the result a pure function of the pairs.
    """
    players = sorted({p for a, b, _, _ in pairs for p in (a, b)})
    if anchor not in players:
        raise ValueError(f"ladder: the anchor {anchor!r} played no match")
    ratings = dict.fromkeys(players, 0.0)
    for _ in range(sweeps):
        for player in players:
            results = [(ratings[b], wa, wb) for a, b, wa, wb in pairs if a == player] + \
                      [(ratings[a], wb, wa) for a, b, wa, wb in pairs if b == player]
            ratings[player] = place_on_ladder(results)[0]
        shift = ratings[anchor]
        ratings = {p: r - shift for p, r in ratings.items()}
    return ratings
