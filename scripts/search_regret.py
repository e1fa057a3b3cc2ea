"""How far a search's choices fall from a far deeper search's, on fixed positions: a cheap, low-noise guide for
tuning a search before any match is played.

    python scripts/search_regret.py --positions 300 --agents pimc:iterations=500 guided:top=3

Positions: the shipped policy plays every seat of RING RANG rounds (sampling its moves); decisions with two or
more legal moves are kept at random. Reference: PIMC with ``--reference`` random playouts per legal move over
as many worlds as playouts / 8 (all seats' cards sampled, never read), giving every legal move's value in round
points. An agent's *regret* at a position is the reference value of the reference's best move minus that of the
agent's move; its mean over the positions, with a 95% t interval, ranks the agents. It rewards agreeing with
the reference, so it measures search noise, not what PIMC itself gets wrong (strategy fusion): a match decides.
With ``--truth`` the reference plays its playouts on the real deal (the cards actually held, read by the
reference only), so an agent whose sampled deals are closer to the real ones has a lower regret.
"""

from __future__ import annotations

import argparse
import json
import random
from multiprocessing import Pool
from pathlib import Path

import numpy as np

from cardenvs.agents import bench_search
from cardenvs.agents.registry import make_agent
from cardenvs.agents.search import world_search
from cardenvs.games import GAMES, game_spec
from cardenvs.train.stats import mean_interval


def sample_positions(game: str, count: int, seed: int) -> list[dict]:
    """``count`` env snapshots at decisions of rounds the shipped policy plays at every seat."""
    policy = make_agent("trained:greedy=false", game, seed=seed, **game_spec(game).env_info(4))
    kept = bench_search.positions(game, count, seed, mover=policy, keep=0.15)
    return [env.unwrapped.snapshot() for env, _obs in kept]


def restored(game: str, snapshot: dict):
    """A fresh env at the position a snapshot holds."""
    spec = game_spec(game)
    env = spec.make_env(spec.episodes["deal"], num_players=4)
    env.reset(seed=0)
    env.restore(snapshot)
    return env


def reference_values(args: tuple[str, dict, int, int, bool]) -> dict[int, float]:
    game, snapshot, playouts, seed, truth = args
    rules = GAMES[game].part("search")()
    live = restored(game, snapshot).unwrapped.game
    seat = live.current_player()
    view = rules.view(live, seat, rules.new_memory())
    legal = live.legal_actions()
    rng = random.Random(seed)
    if truth:  # the real deal: what each move is worth on the cards actually held
        worlds = [rules.horizon(live.clone())]
    else:
        worlds = [rules.sample(view, rng) for _ in range(max(1, playouts // 8))]
    _, means = world_search(rules, worlds, seat, legal, rng, rules.random_rollout, playouts * len(legal))
    return means


def choices(args: tuple[str, str, list[dict], int, int]) -> list[int]:
    """The agent's move at each position; ``first``: the index of the first one, so that a position's seed, and
    the choice, do not depend on how the positions were split between the workers."""
    spec_text, game, snapshots, seed, first = args
    agent = make_agent(spec_text, game, seed=seed, **game_spec(game).env_info(4))
    picked = []
    for index, snapshot in enumerate(snapshots, start=first):
        env = restored(game, snapshot)
        agent.reset(seed * 1_000_003 + index)
        if getattr(agent, "needs_env", False):
            agent.observe_env(env)
        picked.append(int(agent.act(env.last()[0])))
    return picked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="ring_rang")
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--reference", type=int, default=2000, help="playouts per legal move of the reference")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agents", nargs="+", default=["pimc:iterations=500"])
    parser.add_argument("--truth", action="store_true",
                        help="reference playouts on the real deal, not sampled ones: rewards a better belief")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cache", default="runs/search_regret")
    args = parser.parse_args()
    truth = "_truth" if args.truth else ""
    cache = Path(args.cache) / f"{args.game}_p{args.positions}_r{args.reference}_s{args.seed}{truth}.json"
    if cache.exists():
        stored = json.loads(cache.read_text())
        positions, values = stored["positions"], [{int(k): v for k, v in m.items()} for m in stored["values"]]
    else:
        positions = sample_positions(args.game, args.positions, args.seed)
        jobs = [(args.game, snapshot, args.reference, args.seed * 7919 + i, args.truth)
                for i, snapshot in enumerate(positions)]
        with Pool(args.workers) as pool:
            values = pool.map(reference_values, jobs, chunksize=4)
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"positions": positions, "values": values}))
    half = -(-len(positions) // args.workers)
    first = None
    for spec_text in args.agents:
        with Pool(args.workers) as pool:
            picked = sum(pool.map(choices, [(spec_text, args.game, positions[i:i + half], args.seed + 1, i)
                                            for i in range(0, len(positions), half)]), [])
        regret = np.array([max(v.values()) - v[a] for v, a in zip(values, picked, strict=True)])
        agree = np.mean([a == max(v, key=v.get) for v, a in zip(values, picked, strict=True)])
        mean, _, high = mean_interval(regret.tolist())
        paired = ""
        if first is None:
            first = regret
        else:  # the same positions: the difference to the first agent has a far narrower interval
            difference, _, top = mean_interval((regret - first).tolist())
            paired = f"  minus the first: {difference:+.4f} +- {top - difference:.4f}"
        print(f"{spec_text:<48} regret {mean:.4f} +- {high - mean:.4f}  agreement {agree:.3f}{paired}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
