"""Decisions per second of the search agents, on positions of random games of both games.

    python -m cardenvs.agents.bench_search --iterations 100 1000 --decisions 30
    python -m cardenvs.agents.bench_search --games rang --agents pimc:rollout=rules_basic --iterations 60

Positions: random agents play a deal; at each decision with >= 2 legal actions
the search agent decides (its choice is not played, so every budget sees the
same positions). Only the time of ``act`` is counted.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

import numpy as np

from cardenvs.games import GAMES, game_spec

from .base import Agent
from .registry import make_agent


def positions(game: str, count: int, seed: int, mover: Agent | None = None, keep: float = 1.0):
    """Yield (env, observation) at ``count`` decisions with a choice, from random play (or ``mover``'s at every
    seat); with ``keep`` < 1 each such decision is kept with that probability, so positions spread over deals."""
    spec = game_spec(game)
    env = spec.make_env(spec.episodes["deal"], num_players=4)
    rng = np.random.default_rng(seed)
    found = 0
    episode = 0
    while found < count:
        env.reset(seed=seed * 1000 + episode)
        episode += 1
        for _name in env.agent_iter():
            obs, _r, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            if legal.size >= 2 and (keep >= 1 or rng.random() < keep) and found < count:
                found += 1
                yield env, obs
            env.step(int(rng.choice(legal)) if mover is None else int(mover.act(obs)))


def bench(spec: str, game: str, decisions: int, seed: int = 0) -> float:
    """Decisions per second of ``spec`` over ``decisions`` positions."""
    agent = make_agent(spec, game, seed=seed, **game_spec(game).env_info(4))
    spent = 0.0
    for env, obs in positions(game, decisions, seed):
        agent.reset()  # its choices are not played: forget its own discards
        agent.observe_env(env)
        start = time.perf_counter()
        agent.act(obs)
        spent += time.perf_counter() - start
    return decisions / spent


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--decisions", type=int, default=30)
    parser.add_argument("--games", nargs="+", default=None, help="default: every game with search rules")
    parser.add_argument(
        "--agents", nargs="+", default=["pimc", "ismcts"], help="search specs, e.g. pimc:rollout=rules_basic"
    )
    args = parser.parse_args(argv)
    width = max(8, *(len(name) for name in args.agents))
    print(f"{'game':<10} {'agent':<{width}} {'iterations':>10} {'decisions/s':>12} {'ms/decision':>12}")
    games = args.games or [name for name, spec in GAMES.items() if spec.has_part("search")]
    for game in games:
        for name in args.agents:
            for iterations in args.iterations:
                spec = f"{name}{',' if ':' in name else ':'}iterations={iterations}"
                rate = bench(spec, game, args.decisions)
                print(f"{game:<10} {name:<{width}} {iterations:>10} {rate:>12.1f} {1000 / rate:>12.1f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
