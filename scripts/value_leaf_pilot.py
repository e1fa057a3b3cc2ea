"""Pilot (issue 43, item 2): a learned value at `guided`'s leaves, in RING RANG. It did not pay (docs/search.md).

A value network reads a whole position (every seat's observation, from the searching seat round the table, so
every hand) and predicts the mean round points of random playouts from it for the searching seat's team: what
PIMC estimates with playouts, in one network pass. ``ValueGuided`` is ``guided`` whose means, at card-play
decisions, mix ``mix`` x (the network's value of each candidate's after-state, averaged over ``worlds`` sampled
deals) with (1 - ``mix``) x PIMC's playout means over 8 worlds; the trump choice keeps PIMC alone.

    python scripts/value_leaf_pilot.py data --seed 11 --positions 100000 --out runs/vnet/data_11.npz
    python scripts/value_leaf_pilot.py data --seed 12 --positions 100000 --out runs/vnet/data_12.npz
    python scripts/value_leaf_pilot.py fit runs/vnet/data_11.npz runs/vnet/data_12.npz --hidden 256 128 \\
        --out runs/vnet/v256.npz
    PYTHONPATH=scripts cardenvs eval --game ring_rang --agents \\
        value_leaf_pilot:make:value=runs/vnet/v256.npz,worlds=16,mix=0.5,iterations=400 pimc:iterations=500 \\
        --deals 300 --workers 2 --seed 400

Data: positions of the shipped policy playing every seat (:func:`cardenvs.agents.bench_search.positions`, half
the decisions with a choice kept, card play only); at each, a random legal move is made and the after-state is
labelled with the mean of ``--playouts`` random playouts (48) for the mover's team.
"""

from __future__ import annotations

import argparse
import random
import time
from typing import Any

import numpy as np

from cardenvs.agents.bench_search import positions
from cardenvs.agents.guided import GuidedAgent
from cardenvs.agents.policy import PolicyAgent, policy_arrays, save_policy
from cardenvs.agents.registry import make_agent
from cardenvs.agents.search import pimc_search
from cardenvs.ring_rang.engine import PHASE_PLAY
from cardenvs.ring_rang.search import RingRangRules


def features(world: Any, seat: int) -> np.ndarray:
    """Every seat's observation, from ``seat`` round the table: the whole position, as the network reads it."""
    seats = len(world.hands)
    return np.concatenate([world.observe((seat + i) % seats) for i in range(seats)])


def make_data(seed: int, count: int, playouts: int, out: str) -> None:
    rules = RingRangRules()
    mover = make_agent("trained", "ring_rang", seed=seed, num_players=4)
    rng = random.Random(seed)
    rows, targets = [], []
    start = time.time()
    for env, obs in positions("ring_rang", 10**9, seed, mover=mover, keep=0.5):
        game = env.unwrapped.game
        if game.phase != PHASE_PLAY:
            continue
        seat = game.to_act
        world = rules.horizon(game.clone())
        world.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
        total = 0.0
        for _ in range(playouts):
            playout = world.clone()
            rules.random_rollout(playout, rng)
            total += rules.rewards(playout)[seat]
        rows.append(features(world, seat).astype(np.uint8))
        targets.append(total / playouts)
        if len(rows) % 10000 == 0:
            print(f"{len(rows)} positions, {time.time() - start:.0f} s", flush=True)
        if len(rows) >= count:
            break
    np.savez(out, x=np.stack(rows), y=np.array(targets, np.float32))


def fit(files: list[str], hidden: list[int], epochs: int, out: str) -> None:
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    x = np.concatenate([np.load(f)["x"] for f in files]).astype(np.float32)
    y = np.concatenate([np.load(f)["y"] for f in files])
    rng = np.random.default_rng(0)
    order = rng.permutation(len(y))
    held, train = order[: len(y) // 10], order[len(y) // 10:]
    inputs, wanted = torch.from_numpy(x), torch.from_numpy(y)
    layers: list[nn.Module] = []
    width = x.shape[1]
    for size in hidden:
        layers += [nn.Linear(width, size), nn.ReLU()]
        width = size
    net = nn.Sequential(*layers, nn.Linear(width, 1))
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-5)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    best, best_state = float("inf"), None
    for epoch in range(epochs):
        net.train()
        shuffled = torch.from_numpy(rng.permutation(train))
        for i in range(0, len(shuffled), 512):
            batch = shuffled[i:i + 512]
            loss = ((net(inputs[batch]).squeeze(1) - wanted[batch]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        schedule.step()
        net.eval()
        with torch.no_grad():
            error = float(((net(inputs[held]).squeeze(1) - wanted[held]) ** 2).mean())
        print(f"epoch {epoch}: held-out mse {error:.4f}, R2 {1 - error / float(y[held].var()):.3f}", flush=True)
        if error < best:
            best, best_state = error, {k: v.clone() for k, v in net.state_dict().items()}
    assert best_state is not None
    net.load_state_dict(best_state)
    linears = [m for m in net if isinstance(m, nn.Linear)]
    save_policy(policy_arrays([(m.weight, m.bias) for m in linears], "relu", "ring_rang"), out)


class ValueGuided(GuidedAgent):
    """``guided`` with the value network's means mixed into PIMC's at card-play decisions."""

    def __init__(self, game: str, seed: int | None = None, value: str = "", mix: float = 1.0, **params: Any):
        super().__init__(game, seed=seed, **params)
        self.value = PolicyAgent(path=value)  # data-only loader
        self.mix = float(mix)

    def means(self, view: Any, candidates: list[int], rng: random.Random) -> dict[int, float]:
        if view.skeleton.phase != PHASE_PLAY:
            return super().means(view, candidates, rng)
        means = self.valued(view, candidates, rng)
        if self.mix < 1:
            _, played = pimc_search(self.rules, view, candidates, rng, self.rollout, self.iterations, 8, self.ms)
            means = {a: self.mix * means[a] + (1 - self.mix) * played[a] for a in candidates}
        return means

    def valued(self, view: Any, candidates: list[int], rng: random.Random) -> dict[int, float]:
        """Each candidate's mean value over ``worlds`` sampled deals: exact where the round ends, else the net's."""
        totals = dict.fromkeys(candidates, 0.0)
        rows, owners = [], []
        for _ in range(self.worlds):
            world = self.rules.sample(view, rng)
            for action in candidates:
                after = world.clone()
                after.step(action)
                if after.is_over():
                    totals[action] += self.rules.rewards(after)[view.seat]
                else:
                    rows.append(features(after, view.seat))
                    owners.append(action)
        if rows:
            for action, value in zip(owners, self.value.logits(np.stack(rows))[:, 0].tolist(), strict=True):
                totals[action] += value
        return {a: totals[a] / self.worlds for a in candidates}


def make(game: str, seed: int | None = None, **params: Any) -> ValueGuided:
    return ValueGuided(game, seed=seed, **params)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    data = commands.add_parser("data", help="label after-states with their random-playout means")
    data.add_argument("--seed", type=int, required=True)
    data.add_argument("--positions", type=int, default=100000)
    data.add_argument("--playouts", type=int, default=48)
    data.add_argument("--out", required=True)
    fitting = commands.add_parser("fit", help="fit the value network (needs torch)")
    fitting.add_argument("files", nargs="+")
    fitting.add_argument("--hidden", type=int, nargs="+", default=[256, 128])
    fitting.add_argument("--epochs", type=int, default=30)
    fitting.add_argument("--out", required=True)
    args = parser.parse_args()
    if args.command == "data":
        make_data(args.seed, args.positions, args.playouts, args.out)
    else:
        fit(args.files, args.hidden, args.epochs, args.out)


if __name__ == "__main__":
    main()
