"""Where a learner decision's time goes in the batched trainer (train/vector_ppo.py), part by part.

Times, per learner decision, each part of one iteration of a config (one torch thread): the batched env's
step (its observation built in the same tensor ops), the learner's inference (masked logits, sampling,
values), the PPO update, and the rest of the rollout (seating, crediting, bookkeeping in Python), and
the levers of issue 36 as ratios measured in the same run: bf16 against fp32 matrix products, inverse-CDF
sampling against ``torch.multinomial``. Results in docs/training.md ("Where a learner decision's time goes").

    python scripts/profile_learner.py --config configs/vector_quick_ring_rang.yaml [--iterations 3]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import torch

from cardenvs.train.config_files import load_config
from cardenvs.train.vector_ppo import (
    ActorCritic,
    Seating,
    VectorPPOConfig,
    choose_precision,
    collect_rollout,
    decision_advantages,
    make_vector_env,
    sample,
)


def timed(function, repeat: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        function()
    return (time.perf_counter() - start) / repeat


def update(model: ActorCritic, optimizer: torch.optim.Optimizer, obs: torch.Tensor, mask: torch.Tensor,
           actions: torch.Tensor, epochs: int, minibatch: int) -> None:
    """The PPO update's tensor work (forward, losses, backward, step) on the rollout's decisions."""
    n = len(obs)
    for _ in range(epochs):
        for first in range(0, n, minibatch):
            mb = slice(first, first + minibatch)
            log_probs = torch.log_softmax(model.masked_logits(obs[mb], mask[mb]), dim=-1)
            loss = -log_probs.gather(1, actions[mb].unsqueeze(1)).mean() + model.value(obs[mb]).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--iterations", type=int, default=3)
    args = parser.parse_args(argv)
    config: VectorPPOConfig = load_config(args.config, VectorPPOConfig)
    torch.set_num_threads(1)
    device = torch.device("cpu")
    generator = torch.Generator().manual_seed(0)
    env = make_vector_env(config, device)
    model = ActorCritic(env.observation_size, env.num_actions, config.net_arch, config.activation)
    precision, why = choose_precision(config.precision, device)
    model.bf16 = precision == "bf16"
    optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    seating = Seating(config, env.num_players, device, generator)
    obs, mask, info = env.reset()
    seating.draw(torch.arange(config.num_envs), 0)
    games = {"obs": obs, "mask": mask, "seat": info["seat"]}
    returns = torch.zeros(config.num_envs)
    print(f"{args.config}: {config.num_envs} games x {config.num_steps} steps, net {config.net_arch}, "
          f"{precision} ({why}), load average {os.getloadavg()[0]:.1f}")
    totals = {"rollout": 0.0, "env step": 0.0, "inference": 0.0, "update": 0.0}
    decisions = 0
    env_step = env.step

    def counted_step(actions: torch.Tensor):  # the env's share of the rollout
        start = time.perf_counter()
        out = env_step(actions)
        totals["env step"] += time.perf_counter() - start
        return out

    env.step = counted_step
    logits_fn, value_fn = model.masked_logits, model.value

    def counted(function):
        def wrapper(*a):
            start = time.perf_counter()
            out = function(*a)
            totals["inference"] += time.perf_counter() - start
            return out
        return wrapper

    model.masked_logits, model.value = counted(logits_fn), counted(value_fn)
    for _ in range(args.iterations):
        start = time.perf_counter()
        rollout = collect_rollout(env, model, [], seating, games, generator, config.num_steps, returns,
                                  win_loss=config.reward == "win_loss")
        totals["rollout"] += time.perf_counter() - start
        decision_advantages(rollout, config.gamma, config.gae_lambda)
        decisions += len(rollout.actions)
        model.masked_logits, model.value = logits_fn, value_fn
        totals["update"] += timed(lambda: update(model, optimizer, rollout.obs, rollout.mask, rollout.actions,  # noqa: B023
                                                 config.update_epochs, config.minibatch_size))
        model.masked_logits, model.value = counted(logits_fn), counted(value_fn)
    other = totals["rollout"] - totals["env step"] - totals["inference"]
    per = {"env step (observation included)": totals["env step"], "learner inference (logits, values)":
           totals["inference"], "rest of the rollout (sampling, opponents, crediting, Python)": other,
           "PPO update": totals["update"]}
    whole = sum(per.values())
    print(f"{decisions} learner decisions, {decisions / whole:,.0f} decisions/s without evaluations")
    for name, seconds in per.items():
        print(f"  {name:<62} {seconds / decisions * 1e6:8.1f} us/decision  {seconds / whole:6.1%}")

    # the levers, as ratios in this run
    model.masked_logits, model.value = logits_fn, value_fn
    part = slice(0, min(len(rollout.obs), 8192))
    for flag in (False, True):
        model.bf16 = flag
        seconds = timed(lambda: update(model, optimizer, rollout.obs[part], rollout.mask[part],  # noqa: B023
                                       rollout.actions[part], 1, config.minibatch_size), 3)
        print(f"  update of {part.stop} decisions, {'bf16' if flag else 'fp32'} products: {seconds * 1e3:.0f} ms")
    logits = model.masked_logits(rollout.obs[:512], rollout.mask[:512])
    inverse = timed(lambda: sample(logits, generator), 200)
    multinomial = timed(lambda: torch.multinomial(torch.log_softmax(logits, -1).exp(), 1, generator=generator), 200)
    print(f"  sampling 512 rows: inverse CDF {inverse * 1e3:.2f} ms, torch.multinomial {multinomial * 1e3:.2f} ms "
          f"({multinomial / inverse:.1f}x)")
    print(f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
