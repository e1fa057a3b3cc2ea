"""How far a search's choices fall from a far deeper search's, on fixed positions: a cheap, low-noise guide for
tuning a search before any match is played.

    python scripts/search_regret.py --positions 300 --agents pimc:iterations=500 guided:top=3

Positions: the shipped policy plays every seat of RING RANG rounds (sampling its moves); decisions with two or
more legal moves are kept at random. Reference: PIMC with ``--reference`` random playouts per legal move over
as many worlds as playouts / 8 (all seats' cards sampled, never read), giving every legal move's value in round
points. An agent's *regret* at a position is the reference value of the reference's best move minus that of the
agent's move; its mean over the positions, with a 95% t interval, ranks the agents. It rewards agreeing with
the reference, so it measures search noise, not what PIMC itself gets wrong (strategy fusion): a match decides.
"""

from __future__ import annotations

import argparse
import json
import random
from multiprocessing import Pool
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from cardenvs.agents.registry import make_agent
from cardenvs.agents.search import world_search
from cardenvs.games import GAMES, game_spec


def sample_positions(game: str, count: int, seed: int) -> list[tuple[dict, int]]:
    """``count`` (engine json, seat) pairs from rounds the shipped policy plays at every seat."""
    spec = game_spec(game)
    env = spec.make_env(spec.episodes["deal"], num_players=4)
    policy = make_agent("trained:greedy=false", game, seed=seed, **spec.env_info(4))
    rng = np.random.default_rng(seed)
    found: list[tuple[dict, int]] = []
    episode = 0
    while len(found) < count:
        env.reset(seed=seed * 100_000 + episode)
        episode += 1
        for name in env.agent_iter():
            obs, _r, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            if np.count_nonzero(obs["action_mask"]) >= 2 and rng.random() < 0.15 and len(found) < count:
                found.append((env.unwrapped.game.to_json(), int(name.rsplit("_", 1)[1])))
            env.step(int(policy.act(obs)))
    return found


_ENGINES: dict[str, type] = {}


def restore(game: str, data: dict):
    """The engine a position's json describes."""
    if game not in _ENGINES:
        env = game_spec(game).make_raw_env(num_players=4)
        env.reset(seed=0)
        _ENGINES[game] = type(env.game)
    return _ENGINES[game].from_json(data)


def reference_values(args: tuple[str, dict, int, int, int]) -> dict[int, float]:
    game, data, seat, playouts, seed = args
    rules = GAMES[game].part("search")()
    live = restore(game, data)
    view = rules.view(live, seat, rules.new_memory())
    legal = live.legal_actions()
    rng = random.Random(seed)
    worlds = [rules.sample(view, rng) for _ in range(max(1, playouts // 8))]
    _, means = world_search(rules, worlds, seat, legal, rng, rules.random_rollout, playouts * len(legal))
    return means


def choices(args: tuple[str, str, list[tuple[dict, int]], int]) -> list[int]:
    spec_text, game, positions, seed = args
    spec = game_spec(game)
    agent = make_agent(spec_text, game, seed=seed, **spec.env_info(4))
    picked = []
    for index, (data, seat) in enumerate(positions):
        live = restore(game, data)
        fake = SimpleNamespace(game=live, agent_selection=f"player_{seat}", unwrapped=None)
        fake.unwrapped = fake
        observation = {"observation": live.observe(seat), "action_mask": live.legal_mask()}
        agent.reset(seed * 1_000_003 + index)
        if getattr(agent, "needs_env", False):
            agent.observe_env(fake)
        picked.append(int(agent.act(observation)))
    return picked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="ring_rang")
    parser.add_argument("--positions", type=int, default=300)
    parser.add_argument("--reference", type=int, default=2000, help="playouts per legal move of the reference")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agents", nargs="+", default=["pimc:iterations=500"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cache", default="runs/search_regret")
    args = parser.parse_args()
    cache = Path(args.cache) / f"{args.game}_p{args.positions}_r{args.reference}_s{args.seed}.json"
    if cache.exists():
        stored = json.loads(cache.read_text())
        positions, values = stored["positions"], [{int(k): v for k, v in m.items()} for m in stored["values"]]
    else:
        positions = sample_positions(args.game, args.positions, args.seed)
        jobs = [(args.game, data, seat, args.reference, args.seed * 7919 + i)
                for i, (data, seat) in enumerate(positions)]
        with Pool(args.workers) as pool:
            values = pool.map(reference_values, jobs, chunksize=4)
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps({"positions": positions, "values": values}))
    half = -(-len(positions) // args.workers)
    for spec_text in args.agents:
        parts = [positions[i:i + half] for i in range(0, len(positions), half)]
        with Pool(args.workers) as pool:
            picked = sum(pool.map(choices, [(spec_text, args.game, part, args.seed + 1) for part in parts]), [])
        regret = np.array([max(v.values()) - v[a] for v, a in zip(values, picked, strict=True)])
        agree = np.mean([a == max(v, key=v.get) for v, a in zip(values, picked, strict=True)])
        half_width = 1.96 * regret.std(ddof=1) / np.sqrt(regret.size)
        print(f"{spec_text:<48} regret {regret.mean():.4f} +- {half_width:.4f}  agreement {agree:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
