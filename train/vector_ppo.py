"""Self-play PPO over the batched torch envs (cardenvs.vector); one file, read top to bottom (CleanRL style).

    python -m cardenvs.train.vector_ppo --config configs/vector_quick_ring_rang.yaml
    python -m cardenvs.train.vector_ppo --config configs/vector_full_rang.yaml --resume

What happens (every number comes from :class:`VectorPPOConfig`, loaded from YAML):

1. One batched env (``RingRangVectorEnv`` / ``RangVectorEnv``) steps ``num_envs`` games at once. In each
   game the learner plays a set of seats drawn per episode (RING RANG: one team, seats s and s+2; Rang:
   one seat); the other seats are opponents drawn per episode from a league: the learner itself
   (``self``), frozen snapshots of it (one batched forward pass per snapshot), uniform random play and,
   in the first ``rule_games`` games only, the registry's rule-based agents (they act one observation at
   a time in Python, so they are kept to a few games; ``rule_games: 0`` leaves them to evaluation).
2. A rollout is ``num_steps`` env steps of every game. Each learner decision is credited with the reward
   its own seat (team) earned from that decision until its next decision in the same game (the
   episode's end included); GAE runs over each game's sequence of learner decisions, not over the
   interleaved env steps. A decision still open when the rollout stops (no next decision, no end yet) has
   no value target: it is left out of the update.
3. PPO (clipped objective, masked logits: illegal actions get a large negative logit) updates separate
   actor and critic MLPs. Between rollouts, as in the SB3 path (cardenvs.train.selfplay): a snapshot
   joins the league, the actor is exported and evaluated against the baselines through the evaluation
   harness (TensorBoard + ``curve.csv``), and a checkpoint is written (same layout and commit point:
   ``checkpoints/step_<N>`` named by ``latest.json`` with SHA-256s; ``--resume`` continues exactly).
4. At the end: ``policy.npz`` in the format of :mod:`cardenvs.agents.policy` (``policy:path=...``),
   ``learning_curve.png`` and ``summary.json`` (env steps/s, learner decisions/s, the precision taken and why, the CPU).

Steps (``total_steps``, the ``*_every`` fields, ``curve.csv``) count learner decisions, as the SB3 path does.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from cardenvs.agents.policy import layer_names, load_policy, policy_arrays, policy_layers, save_policy
from cardenvs.agents.registry import make_agent
from cardenvs.games import default_game, game_spec
from cardenvs.train.config_files import check_clock, check_game_config, check_network, check_ppo, check_symmetries
from cardenvs.train.runs import (
    CURVE_FIELDS,
    CheckpointError,
    TrainingClock,
    checkpoint_writes,
    commit_checkpoint,
    evaluate_policy,
    holds_run_lock,
    open_run_dir,
    plot_curve,
    publish_outputs,
    run_main,
    truncate_curve,
)
from cardenvs.train.wrappers import Snapshot

SELF, RANDOM, RULES = -1, -2, -3  # opponent ids next to the league's snapshot slots 0, 1, ...
PFSP_DECAY = 0.97  # per iteration: the learner's results against a slot fade over ~30 rollouts
FIXED = "fixed:"  # name prefix of the league's fixed policies (config.fixed_policies)
LEAGUE_ENTRIES = ("self", "snapshots", "random")
PRECISIONS = ("auto", "fp32", "bf16")
BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # /proc/cpuinfo flags of native bfloat16 matrix products (x86)


# ------------------------------------------------------------------ config
@dataclass
class VectorPPOConfig:
    """Everything a run depends on (the schema of configs/vector_*.yaml)."""

    game: str = field(default_factory=default_game)  # any game of the table with a batched engine
    run_dir: str = "runs/vector_ring_rang"  # checkpoints, TensorBoard logs, curve.csv, policy.npz, ...
    seed: int = 0  # seeds torch (weights, sampling, draws) and the env: a run replays exactly
    total_steps: int = 1_000_000  # learner decisions to train for
    episode: str = ""  # "" = the default ("round" for RING RANG, "deal" for Rang)
    num_players: int = 4  # Rang only
    env_kwargs: dict[str, Any] = field(default_factory=dict)  # extra arguments of the batched env (and the eval env)
    torch_threads: int = 1  # torch.set_num_threads; 1 is fastest on a small shared machine
    # "bf16": the network's matrix products in bfloat16 (torch.autocast; weights, optimizer and losses stay
    # float32): ~4x faster products on CPUs with AVX512-BF16 or AMX (docs/training.md), ~4x SLOWER on CPUs
    # without them (bf16 emulated); "auto": bf16 where the CPU (or GPU) does it natively, fp32 otherwise
    # (choose_precision; the choice and its reason are printed at start and kept in summary.json)
    precision: str = "fp32"
    # also stop after this many seconds of training (evaluations, checkpoints not counted); 0 = off. The
    # result then depends on the machine's speed and load: the Quick start counts decisions (total_steps)
    train_seconds: float = 0.0
    keep_every_seconds: float = 0.0  # keep the policy every this many training seconds: policies/train_<s>s.npz
    device: str = "cpu"  # where the envs, the network and the rollout live ("cuda" on a GPU machine)

    # the batch and PPO
    num_envs: int = 512  # games stepped at once
    num_steps: int = 32  # env steps of every game per rollout
    learning_rate: float = 3e-4
    anneal_lr: bool = False  # the learning rate falls linearly to 5% of it at the end of the budget (CleanRL: to 0)
    minibatch_size: int = 2048  # learner decisions per gradient step
    update_epochs: int = 4
    gamma: float = 1.0  # episodes are short (one round / deal)
    gae_lambda: float = 0.95
    clip_coef: float = 0.2
    norm_adv: bool = True  # normalise the advantages per minibatch
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    net_arch: list[int] = field(default_factory=lambda: [256, 256])  # hidden layers of actor and critic
    activation: str = "relu"  # "relu" or "tanh"

    # the league (opponents drawn per episode; RING RANG: one draw for the opposing team, Rang: one per seat)
    league: dict[str, float] = field(default_factory=lambda: {"self": 0.5, "snapshots": 0.5, "random": 0.0})
    # Prioritized fictitious self-play (AlphaStar's "hard" weighting): 0 draws the snapshots uniformly; p > 0
    # draws snapshot i in proportion to (1 - w_i)^p, w_i the learner's recent win rate against it
    pfsp: float = 0.0
    snapshot_every: int = 100_000  # learner decisions between snapshots joining the league
    max_snapshots: int = 10  # the newest ones are kept (a new one replaces the oldest)
    rule_games: int = 0  # the first rule_games games play rule-based opponents (slow: Python, one at a time)
    rule_opponents: dict[str, float] = field(default_factory=lambda: {"rules_strong": 1.0})  # registry spec -> weight
    # Trainer-side shaping (the env's reward is unchanged): added to the learner's last decision of a Rang
    # deal that ended (not by the turn limit) with the learner scoring 0 points, i.e. having gone out. Rang
    # "deal" episodes only. Aligns the objective with the harness's win rate, not only with fewer points.
    win_bonus: float = 0.0
    # "env": the env's reward (RING RANG rounds: +-round points, 2 or 3 for all 13 tricks); "win_loss": +1 / -1
    # for the episode's result (the harness's win rate), given at its end. The logged returns stay the env's.
    reward: str = "env"
    # The critic also sees the cards the other seats hold (the batched env's hidden_cards: an asymmetric
    # actor-critic). Training only: the exported actor, the policy, sees its observation alone. The value
    # baseline then knows whose cards win the round, so the advantages carry less card luck.
    critic_hidden_cards: bool = False
    # Each minibatch of the actor's update renamed by one of the game's symmetries, drawn at random (its spec's
    # "symmetries" part; RING RANG: the 24 renamings of the suits). The policy then cannot come to prefer a
    # suit by its name (a run's trump choice fell into "always clubs": docs/training.md); the critic learns
    # from the positions as played.
    augment: bool = False
    init_from: str = ""  # a policy.npz (same net_arch/activation) whose actor starts a fresh run (warm start)
    # policy .npz files in the league from the start, never replaced by snapshots (drawn with the "snapshots"
    # weight, like any snapshot); a best response (cardenvs exploit) plays only such a frozen policy
    fixed_policies: list[str] = field(default_factory=list)
    fixed_greedy: bool = False  # the fixed policies play their most likely action (as the registry's policy:)

    # evaluation (through cardenvs.train.evaluate), checkpoints, logging
    eval_every: int = 250_000  # learner decisions between evaluations (and one at the end)
    eval_at_start: bool = False  # also evaluate the untrained policy (step 0 of the learning curve)
    eval_deals: int = 200  # deals per opponent
    eval_opponents: list[str] = field(default_factory=lambda: ["rules_strong", "rules_basic", "random"])
    eval_seed: int = 12345  # the evaluation deals (the same at every evaluation)
    eval_workers: int = 1
    checkpoint_every: int = 250_000  # learner decisions between checkpoints (and one at the end)
    keep_checkpoints: int = 2
    log_every: int = 10  # iterations between detailed lines (losses, entropy, ...) on stderr
    progress_seconds: float = 10.0  # wall seconds between progress lines (decisions done / total, rate, ETA); 0 = off
    export_to: str = ""  # also copy the final policy.npz here
    curve_to: str = ""  # also copy learning_curve.png here

    def validate(self) -> None:
        spec = check_game_config(
            self,
            counts=("total_steps", "torch_threads", "num_envs", "num_steps", "minibatch_size", "update_epochs",
                    "snapshot_every", "max_snapshots", "eval_every", "eval_deals", "eval_workers",
                    "checkpoint_every", "keep_checkpoints", "log_every"),
            agent_fields=("rule_opponents", "eval_opponents"),
        )
        if not spec.has_vector_env:
            raise ValueError(f"game: {spec.title} has no batched engine (its spec declares no vector_env); "
                             "train it with `cardenvs train` (the SB3 self-play trainer)")
        if self.critic_hidden_cards and not hasattr(spec.vector_env_class(), "hidden_cards"):
            raise ValueError(f"critic_hidden_cards: {spec.title}'s batched env has no hidden_cards(seat); "
                             "set critic_hidden_cards: false")
        check_network(self)
        check_ppo(self, "clip_coef")
        if self.env_kwargs or self.augment:  # the batched env takes them too (the evaluation env's are checked above)
            try:
                env = spec.vector_env_class()(1, **spec.env_kwargs(self.episode, self.num_players), **self.env_kwargs)
            except (TypeError, ValueError) as error:
                raise ValueError(f"env_kwargs: the batched {spec.title} env does not take {self.env_kwargs!r:.200}: "
                                 f"{error}") from None
            if self.augment:
                check_symmetries(spec, env.observation_size, env.num_actions)
        if not 0 <= self.rule_games <= self.num_envs:
            raise ValueError(f"rule_games: expected 0..num_envs ({self.num_envs}), got {self.rule_games!r}")
        if not 0 <= self.pfsp <= 10:
            raise ValueError(f"pfsp: expected an exponent in [0, 10], got {self.pfsp!r}")
        if set(self.league) - set(LEAGUE_ENTRIES) or any(w < 0 for w in self.league.values()):
            raise ValueError(f"league: expected weights >= 0 for {LEAGUE_ENTRIES}, got {self.league!r}")
        if sum(self.league.get(k, 0.0) for k in ("self", "random")) <= 0 and not self.fixed_policies:
            raise ValueError(f"league: 'self' or 'random' needs a weight > 0 (there are no snapshots at first), "
                             f"got {self.league!r}")
        if self.rule_games and (not self.rule_opponents or any(w < 0 for w in self.rule_opponents.values())
                                or sum(self.rule_opponents.values()) <= 0):
            raise ValueError(f"rule_opponents: expected registry specs with weights >= 0, got {self.rule_opponents!r}")
        for agent_spec in self.rule_opponents if self.rule_games else ():
            agent = make_agent(agent_spec, self.game, seed=0, **spec.env_info(self.num_players))
            if getattr(agent, "needs_env", False):
                raise ValueError(f"rule_opponents: {agent_spec!r} reads the AEC env (a search agent); the batched envs "
                                 "have none: use it in evaluation only")
        try:
            device = torch.device(self.device)
        except (RuntimeError, ValueError) as error:
            raise ValueError(f"device: {self.device!r} is not a torch device ({error}); use 'cpu' or 'cuda'") from None
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device: {self.device!r} requested but CUDA is not available; use 'cpu'")
        if device.type not in ("cpu", "cuda"):
            raise ValueError(f"device: {self.device!r}: the trainer runs on 'cpu' or 'cuda'")
        if self.init_from and not Path(self.init_from).is_file():
            raise ValueError(f"init_from: no policy file {self.init_from!r}; give a policy.npz of an earlier run "
                             "or leave it empty")
        for path in self.fixed_policies:
            if not Path(path).is_file():
                raise ValueError(f"fixed_policies: no policy file {path!r}")
        if self.reward not in ("env", "win_loss"):
            raise ValueError(f"reward: expected 'env' or 'win_loss', got {self.reward!r}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision: expected one of {PRECISIONS}, got {self.precision!r}")
        if self.progress_seconds < 0:
            raise ValueError(f"progress_seconds: expected seconds >= 0 (0 = off), got {self.progress_seconds!r}")
        check_clock(self)
        if self.win_bonus and (spec.partnerships or (self.episode or spec.train_episode) != spec.episodes["deal"]):
            raise ValueError(f"win_bonus: for the one-deal episodes of a game without partnerships, got "
                             f"game={self.game!r} episode={self.episode!r}")


# Fields that may change when a run is resumed.
RESUMABLE_CHANGES = ("total_steps", "train_seconds", "keep_every_seconds", "progress_seconds",
                     "torch_threads", "league", "pfsp", "rule_opponents", "eval_every", "eval_deals",
                     "eval_opponents", "eval_workers", "checkpoint_every", "keep_checkpoints", "log_every",
                     "export_to", "curve_to")


# --------------------------------------------------------------- precision
def cpu_bf16_flags(cpuinfo: str | None = None) -> tuple[list[str], str]:
    """The native-bf16 flags this CPU has (``BF16_FLAGS``) and where they were read.

    Linux: the ``flags`` lines of /proc/cpuinfo (``cpuinfo`` is its text, for tests). Elsewhere (or where
    /proc/cpuinfo cannot be read): torch's own CPU queries (``torch.cpu._is_avx512_bf16_supported`` and
    ``_is_amx_tile_supported``, private, so read only where present); none of them: no flags.
    """
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            cpuinfo = None
    if cpuinfo is not None:
        flags = {flag for line in cpuinfo.splitlines() if line.startswith("flags") for flag in line.split()}
        if flags:
            return [flag for flag in BF16_FLAGS if flag in flags], "/proc/cpuinfo"
    queries = {"avx512_bf16": "_is_avx512_bf16_supported", "amx_bf16": "_is_amx_tile_supported"}
    found = [flag for flag, name in queries.items() if getattr(torch.cpu, name, lambda: False)()]
    return found, "torch.cpu"


def choose_precision(precision: str, device: str | torch.device = "cpu",
                     cpuinfo: str | None = None) -> tuple[str, str]:
    """(``"fp32"`` or ``"bf16"``, why): ``auto`` takes bf16 only where the hardware does it natively.

    On a CPU without AVX512-BF16 or AMX, bf16 matrix products are emulated and ~4x slower than fp32 (issue 44:
    2,714 against 12,146 decisions a second on an AVX2 EPYC), so ``auto`` is fp32 there; a GPU takes bf16
    where torch says it is native (``torch.cuda.is_bf16_supported(including_emulation=False)``).
    """
    device = torch.device(device)
    if device.type == "cuda":
        native = torch.cuda.is_available() and torch.cuda.is_bf16_supported(including_emulation=False)
        have = "native bf16 on this GPU" if native else "no native bf16 on this GPU"
    else:
        flags, source = cpu_bf16_flags(cpuinfo)
        native = bool(flags)
        where = "in /proc/cpuinfo" if source == "/proc/cpuinfo" else "by torch.cpu's queries"
        have = (f"this CPU has {' and '.join(flags)} {where}" if native else
                f"this CPU has no {' or '.join(BF16_FLAGS)} {where}, so bf16 products would be emulated, "
                "~4x slower")
    if precision == "auto":
        chosen = "bf16" if native else "fp32"
        return chosen, f"auto: {have}"
    if precision == "bf16" and not native:
        return "bf16", f"as configured, although {have}; precision: auto would take fp32 here"
    return precision, f"as configured; {have}"


# ------------------------------------------------------------------- model
def mlp(sizes: list[int], activation: str) -> list[nn.Module]:
    """Linear layers of ``sizes`` with the activation after each (CleanRL's orthogonal init)."""
    layers: list[nn.Module] = []
    for size_in, size_out in zip(sizes[:-1], sizes[1:], strict=True):
        linear = nn.Linear(size_in, size_out)
        nn.init.orthogonal_(linear.weight, np.sqrt(2))
        nn.init.zeros_(linear.bias)
        layers += [linear, nn.ReLU() if activation == "relu" else nn.Tanh()]
    return layers


def head(size_in: int, size_out: int, std: float) -> nn.Linear:
    linear = nn.Linear(size_in, size_out)
    nn.init.orthogonal_(linear.weight, std)
    nn.init.zeros_(linear.bias)
    return linear


class ActorCritic(nn.Module):
    """Separate actor and critic MLPs, as SB3's ``MlpPolicy`` with ``net_arch: {pi: ..., vf: ...}``."""

    def __init__(self, observation_size: int, num_actions: int, net_arch: list[int], activation: str,
                 hidden_size: int = 0):
        super().__init__()
        sizes = [observation_size, *net_arch]
        self.actor_body = nn.Sequential(*mlp(sizes, activation))
        self.action = head(net_arch[-1], num_actions, 0.01)
        # hidden_size > 0: the critic's input is the observation and the env's hidden cards
        self.critic = nn.Sequential(*mlp([observation_size + hidden_size, *net_arch], activation),
                                    head(net_arch[-1], 1, 1.0))
        self.activation = activation
        self.bf16 = False

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        with torch.autocast(obs.device.type, dtype=torch.bfloat16, enabled=self.bf16):
            logits = self.action(self.actor_body(obs))
        return logits.float().masked_fill(~mask, -1e9)

    def value(self, obs: torch.Tensor, hidden: torch.Tensor | None = None) -> torch.Tensor:
        if hidden is not None:
            obs = torch.cat([obs, hidden], 1)
        with torch.autocast(obs.device.type, dtype=torch.bfloat16, enabled=self.bf16):
            value = self.critic(obs)
        return value.float().squeeze(-1)

    def export_weights(self, game: str) -> dict[str, np.ndarray]:
        """The actor as the arrays of :mod:`cardenvs.agents.policy` (``hidden{i}/...``, ``action/...``)."""
        return policy_arrays([(m.weight, m.bias) for m in self.actor_linears()], self.activation, game)

    def actor_linears(self) -> list[nn.Linear]:
        return [m for m in self.actor_body if isinstance(m, nn.Linear)] + [self.action]


def load_actor(model: ActorCritic, path: str) -> None:
    """Warm start: copy a policy.npz's actor arrays (``export_weights``' names) into ``model``'s actor."""
    weights = load_policy(path)
    linears = model.actor_linears()
    for name, linear in zip(layer_names(len(linears)), linears, strict=True):
        for part in ("weight", "bias"):
            key = f"{name}/{part}"
            if key not in weights or weights[key].shape != tuple(getattr(linear, part).shape):
                raise ValueError(f"init_from: {path} has no {key} of shape {tuple(getattr(linear, part).shape)} "
                                 "(net_arch must match)")
            with torch.no_grad():
                getattr(linear, part).copy_(torch.as_tensor(weights[key]))
    if str(weights["activation"]) != model.activation:
        raise ValueError(f"init_from: {path} uses activation {str(weights['activation'])!r}, not {model.activation!r}")


class FrozenActor:
    """A snapshot in the league: the exported arrays as torch tensors, for batched masked sampling."""

    def __init__(self, snapshot: Snapshot, device: torch.device, greedy: bool = False):
        self.snapshot = snapshot
        self.greedy = greedy
        self.layers = [(torch.as_tensor(weight, device=device), torch.as_tensor(bias, device=device))
                       for weight, bias in policy_layers(snapshot.weights)]
        self.activation = torch.relu if str(snapshot.weights["activation"]) == "relu" else torch.tanh

    def masked_logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = obs
        for weight, bias in self.layers[:-1]:
            x = self.activation(torch.nn.functional.linear(x, weight, bias))
        weight, bias = self.layers[-1]
        return torch.nn.functional.linear(x, weight, bias).masked_fill(~mask, -1e9)

    def act(self, obs: torch.Tensor, mask: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        logits = self.masked_logits(obs, mask)
        return logits.argmax(1) if self.greedy else sample(logits, generator)[0]


def sample(logits: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Actions drawn from the masked softmax and their log-probabilities."""
    log_probs = torch.log_softmax(logits, dim=-1)
    # inverse CDF: one uniform per row (torch.multinomial is several times slower on CPU at these sizes)
    cumulative = log_probs.exp().cumsum_(1)
    uniform = torch.rand(len(logits), 1, generator=generator, device=logits.device) * cumulative[:, -1:]
    actions = (cumulative < uniform).sum(1).clamp_(max=logits.shape[1] - 1)
    return actions, log_probs.gather(1, actions.unsqueeze(1)).squeeze(1)


def make_vector_env(config: VectorPPOConfig, device: torch.device) -> Any:
    spec = game_spec(config.game)
    return spec.vector_env_class()(config.num_envs, **spec.env_kwargs(config.episode, config.num_players),
                                   device=device, seed=config.seed, check_actions=False, **config.env_kwargs)


# -------------------------------------------------------------- the games
class Seating:
    """Who plays which seat in every game: the learner's side (team or seat) and each other side's opponent.

    A "side" is a RING RANG team (seat & 1) or a Rang seat. ``opponent[b, side]`` is SELF, RANDOM, RULES or
    a league slot. Rule-based agents (games < ``rule_games``) are Python objects per (game, seat).
    """

    def __init__(self, config: VectorPPOConfig, num_seats: int, device: torch.device, generator: torch.Generator):
        self.config = config
        self.game = config.game
        self.spec = game_spec(config.game)
        self.num_sides = self.spec.num_sides(num_seats)
        self.num_seats = num_seats
        self.generator = generator
        self.learner_side = torch.zeros(config.num_envs, dtype=torch.int64, device=device)
        self.opponent = torch.full((config.num_envs, self.num_sides), SELF, dtype=torch.int64, device=device)
        self.rule_agents: dict[tuple[int, int], Any] = {}
        self.generator_cpu = torch.Generator().manual_seed(config.seed + 1)  # for the Python-side rule agents
        # (wins, games) of the learner against each league slot (fixed policies and snapshots)
        self.results = torch.zeros(config.max_snapshots + len(config.fixed_policies), 2, dtype=torch.float64)

    def side_of(self, seats: torch.Tensor) -> torch.Tensor:
        return self.spec.side_of(seats)

    def draw(self, games: torch.Tensor, league_size: int) -> None:
        """New episodes in ``games``: a learner side and the opponents (league draws; rule agents in rule games)."""
        if len(games) == 0:
            return
        g = self.generator
        self.learner_side[games] = torch.randint(0, self.num_sides, (len(games),), generator=g, device=games.device)
        weights = self.config.league
        snapshot_share = weights.get("snapshots", 0.0) if league_size else 0.0
        ids = torch.tensor([SELF, RANDOM, *range(league_size)], device=games.device)
        self_weight = weights.get("self", 0.0) + (weights.get("snapshots", 0.0) if not league_size else 0.0)
        p = torch.tensor([self_weight, weights.get("random", 0.0)] + self.snapshot_weights(league_size, snapshot_share),
                         dtype=torch.float64, device=games.device)
        picks = torch.multinomial(p, len(games) * self.num_sides, replacement=True, generator=g)
        opponents = ids[picks].view(len(games), self.num_sides)
        if self.spec.partnerships:  # one draw for the whole opposing team
            opponents[:, 1] = opponents[:, 0]
        rules = games < self.config.rule_games
        self.opponent[games] = torch.where(rules.unsqueeze(1), RULES, opponents)
        for b in games[rules].tolist():
            self._draw_rule_agents(b)

    def _draw_rule_agents(self, b: int) -> None:
        specs = list(self.config.rule_opponents)
        p = torch.tensor(list(self.config.rule_opponents.values()), dtype=torch.float64)
        side_specs = [specs[int(i)] for i in torch.multinomial(p, self.num_sides, replacement=True,
                                                                generator=self.generator_cpu)]
        for seat in range(self.num_seats):
            spec = side_specs[0 if self.spec.partnerships else seat]
            agent = make_agent(spec, self.game, seed=None, **self.spec.env_info(self.num_seats))
            agent.reset(seed=int(torch.randint(0, 2**62, (1,), generator=self.generator_cpu)))
            self.rule_agents[(b, seat)] = agent

    # ---- prioritized fictitious self-play: the learner's recent results against each league slot
    def snapshot_weights(self, league_size: int, share: float) -> list[float]:
        """Each slot's share of ``share``: uniform, or by (1 - win rate)^pfsp (a prior of one win in two games)."""
        if not league_size:
            return []
        if not self.config.pfsp:
            return [share / league_size] * league_size
        wins, games = self.results[:league_size, 0], self.results[:league_size, 1]
        hardness = (1.0 - (wins + 1.0) / (games + 2.0)).clamp_min(1e-3) ** self.config.pfsp
        return (share * hardness / hardness.sum()).tolist()

    def won(self, returns: torch.Tensor) -> torch.Tensor:
        """Whether the learner side won episodes that ended with these returns."""
        return self.spec.won(returns, self.config.episode or self.spec.train_episode)

    def record(self, games: torch.Tensor, returns: torch.Tensor) -> None:
        """Episodes ended in ``games`` with the learner side's ``returns``: count them for its league opponents."""
        won = self.won(returns)
        sides = torch.arange(self.num_sides, device=games.device)
        opponents = self.opponent[games]
        against = (sides != self.learner_side[games].unsqueeze(1)) & (opponents >= 0)
        rows, cols = against.nonzero(as_tuple=True)
        if len(rows):
            slots = opponents[rows, cols].cpu()
            self.results.index_add_(0, slots, torch.stack([won[rows].double().cpu(), torch.ones(len(rows),
                                                           dtype=torch.float64)], 1))

    def forget(self, slot: int | None = None) -> None:
        """Decay all results a little (recent games count most), or clear a slot a new snapshot took."""
        if slot is None:
            self.results *= PFSP_DECAY
        else:
            self.results[slot] = 0.0

    def state(self) -> dict[str, Any]:
        # the rule agents as data (spec, RNG, memory), as JSON text: weights_only loads it, nothing is unpickled
        agents = [[b, seat, agent.name, agent.get_state()] for (b, seat), agent in sorted(self.rule_agents.items())]
        return {"learner_side": self.learner_side.clone(), "opponent": self.opponent.clone(),
                "generator_cpu": self.generator_cpu.get_state(), "rule_agents": json.dumps(agents),
                "results": self.results.clone()}

    def load(self, state: dict[str, Any]) -> None:
        self.learner_side.copy_(state["learner_side"])
        self.opponent.copy_(state["opponent"])
        self.generator_cpu.set_state(state["generator_cpu"])
        if "results" in state:  # checkpoints written before PFSP have none
            self.results.copy_(state["results"])
        if "rule_agents" not in state:  # an older checkpoint: fresh rule agents (not bit-exact)
            for b in range(self.config.rule_games):
                self._draw_rule_agents(b)
            return
        # The rule agents of the episodes in flight resume as they were; nothing is drawn from generator_cpu.
        self.rule_agents = {}
        for b, seat, spec, agent_state in json.loads(state["rule_agents"]):
            agent = make_agent(spec, self.game, seed=None, **self.spec.env_info(self.num_seats))
            agent.set_state(agent_state)
            self.rule_agents[(b, seat)] = agent


# ---------------------------------------------------------------- rollouts
@dataclass
class Rollout:
    """The learner's decisions of ``T`` env steps of ``B`` games.

    Dense ``(T, B)`` bookkeeping (``is_decision``: the learner decided in game b at step t; ``values``;
    ``rewards``: what its side earned from that decision until its next one; ``terminal``: the episode
    ended before its next one; ``slot``: the decision's row in the compact tensors, -1 none), the
    decisions' ``obs``, ``mask``, ``actions``, ``log_probs`` (one row each, in (t, b) order), and per env
    step ``earned`` (the learner side's reward) and ``done``; ``hidden``: the decisions' hidden cards when
    the critic sees them (else None).
    """

    is_decision: torch.Tensor
    values: torch.Tensor
    rewards: torch.Tensor
    terminal: torch.Tensor
    slot: torch.Tensor
    obs: torch.Tensor
    mask: torch.Tensor
    actions: torch.Tensor
    log_probs: torch.Tensor
    earned: torch.Tensor
    done: torch.Tensor
    finished_returns: list[float]
    hidden: torch.Tensor | None = None


def collect_rollout(env: Any, model: ActorCritic, frozen: list[FrozenActor], seating: Seating,
                    games: dict[str, torch.Tensor], generator: torch.Generator, num_steps: int,
                    return_so_far: torch.Tensor, win_bonus: float = 0.0, win_loss: bool = False,
                    critic_hidden_cards: bool = False) -> Rollout:
    """Step every game ``num_steps`` times: the learner and its opponents act, rewards go to the decisions.

    ``games`` (obs, mask, seat of the decision due in every game) is updated in place;
    ``return_so_far`` (the learner side's return in each episode in flight) too. ``win_bonus`` is added
    to the closing decision of an ended, untruncated deal where the learner scored 0 (shaping only:
    ``earned`` and the returns stay the env's reward). ``critic_hidden_cards``: the critic also gets the
    env's ``hidden_cards`` of the deciding seat (kept per decision for the update).
    """
    T, B, device = num_steps, env.batch_size, env.device
    obs, mask, seat = games["obs"], games["mask"], games["seat"]
    is_decision = torch.zeros(T, B, dtype=torch.bool, device=device)
    values = torch.zeros(T, B, device=device)
    rewards = torch.zeros(T, B, device=device)
    terminal = torch.zeros(T, B, dtype=torch.bool, device=device)
    slot = torch.full((T, B), -1, dtype=torch.int64, device=device)
    earned_all = torch.zeros(T, B, device=device)
    done_all = torch.zeros(T, B, dtype=torch.bool, device=device)
    stored: dict[str, list[torch.Tensor]] = {"obs": [], "mask": [], "actions": [], "log_probs": []}
    hidden_stored: list[torch.Tensor] = []
    last_decision = torch.full((B,), -1, dtype=torch.int64, device=device)  # t of each game's open decision
    finished_returns: list[float] = []
    decisions = 0
    for t in range(T):
        side = seating.side_of(seat)
        learner = side == seating.learner_side
        opponent = seating.opponent.gather(1, side.unsqueeze(1)).squeeze(1)
        with torch.no_grad():  # one learner pass over the games it acts in: its own rows and the "self" opponents
            acting = (learner | (opponent == SELF)).nonzero().squeeze(1)
            actions = torch.zeros(B, dtype=torch.int64, device=device)
            log_probs = torch.zeros(B, device=device)
            actions[acting], log_probs[acting] = sample(model.masked_logits(obs[acting], mask[acting]), generator)
            rows = learner.nonzero().squeeze(1)
            hidden = env.hidden_cards(seat)[rows] if critic_hidden_cards else None
            values[t, rows] = model.value(obs[rows], hidden)
            for index, actor in enumerate(frozen):
                them = (~learner & (opponent == index)).nonzero().squeeze(1)
                if len(them):
                    actions[them] = actor.act(obs[them], mask[them], generator)
        random_rows = (~learner & (opponent == RANDOM)).nonzero().squeeze(1)
        if len(random_rows):
            noise = torch.rand(mask[random_rows].shape, generator=generator, device=device)
            actions[random_rows] = noise.masked_fill_(~mask[random_rows], -1.0).argmax(1)
        rule_rows = (~learner & (opponent == RULES)).nonzero().squeeze(1).tolist()
        if rule_rows:
            obs_np, mask_np, seat_np = obs.cpu().numpy(), mask.cpu().numpy().astype(np.int8), seat.tolist()
            for b in rule_rows:
                agent = seating.rule_agents[(b, seat_np[b])]
                action = agent.act({"observation": obs_np[b], "action_mask": mask_np[b]})
                if not mask_np[b, action]:  # the env does not check actions (check_actions=False)
                    raise RuntimeError(f"rule agent {agent.name} chose illegal action {action} in game {b}")
                actions[b] = action

        is_decision[t, rows] = True
        slot[t, rows] = torch.arange(decisions, decisions + len(rows), device=device)
        decisions += len(rows)
        for name, tensor in (("obs", obs), ("mask", mask), ("actions", actions), ("log_probs", log_probs)):
            stored[name].append(tensor[rows])
        if hidden is not None:
            hidden_stored.append(hidden)
        last_decision[rows] = t

        obs, mask, step_rewards, done, info = env.step(actions)
        seat = info["seat"]
        # Credit the learner side's reward to its open decision; an ended episode closes it.
        earned = step_rewards.gather(1, seating.learner_side.unsqueeze(1)).squeeze(1)
        earned_all[t], done_all[t] = earned, done
        credit = earned
        if win_loss:  # +1 / -1 for the episode's result, at its end only
            credit = torch.where(done, seating.won(return_so_far + earned).float() * 2.0 - 1.0, 0.0)
        open_games = (last_decision >= 0).nonzero().squeeze(1)
        rewards[last_decision[open_games], open_games] += credit[open_games]
        return_so_far += earned
        if bool(done.any()):
            ended = done.nonzero().squeeze(1)
            closed = ended[last_decision[ended] >= 0]
            terminal[last_decision[closed], closed] = True
            if win_bonus:
                won = closed[(earned[closed] == 0) & ~info["truncated"][closed]]
                rewards[last_decision[won], won] += win_bonus
            last_decision[ended] = -1
            finished_returns += return_so_far[ended].tolist()
            seating.record(ended, return_so_far[ended])
            return_so_far[ended] = 0.0
            seating.draw(ended, len(frozen))  # new episodes: a new learner side and new opponents
    games.update(obs=obs, mask=mask, seat=seat)
    return Rollout(is_decision, values, rewards, terminal, slot, *(torch.cat(stored[k]) for k in stored),
                   earned_all, done_all, finished_returns, torch.cat(hidden_stored) if critic_hidden_cards else None)


def decision_advantages(rollout: Rollout, gamma: float, gae_lambda: float) -> tuple[torch.Tensor, torch.Tensor]:
    """GAE over each game's own decisions, backwards; returns (advantages (T, B), usable (T, B)).

    A decision's next value is that of the game's next learner decision (0 after the episode's end).
    A decision with neither (still open when the rollout stopped) has no target: it is not usable, and
    the decision before it bootstraps from its value with no advantage beyond it (truncated GAE).
    """
    T, B = rollout.values.shape
    advantages = torch.zeros(T, B, device=rollout.values.device)
    usable = torch.zeros(T, B, dtype=torch.bool, device=rollout.values.device)
    next_value = torch.zeros(B, device=rollout.values.device)
    next_advantage = torch.zeros(B, device=rollout.values.device)
    has_next = torch.zeros(B, dtype=torch.bool, device=rollout.values.device)
    for t in reversed(range(T)):
        here, ends = rollout.is_decision[t], rollout.terminal[t]
        delta = rollout.rewards[t] + gamma * torch.where(ends, 0.0, next_value) - rollout.values[t]
        advantage = delta + gamma * gae_lambda * torch.where(ends, 0.0, next_advantage)
        ok = here & (ends | has_next)
        advantages[t] = torch.where(ok, advantage, 0.0)
        usable[t] = ok
        next_value = torch.where(here, rollout.values[t], next_value)
        next_advantage = torch.where(here, advantages[t], next_advantage)
        has_next |= here
    return advantages, usable


# ------------------------------------------------------------- checkpoints
def save_checkpoint(run_dir: Path, model: ActorCritic, optimizer: torch.optim.Optimizer, league: list[Snapshot],
                    env: Any, games: dict[str, torch.Tensor], seating: Seating, generator: torch.Generator,
                    state: dict[str, Any], keep: int) -> None:
    """``checkpoints/step_<N>/``: model + optimizer, league, env and seating state, RNGs; then ``latest.json``."""
    folder = run_dir / "checkpoints" / f"step_{state['steps']}"
    shutil.rmtree(folder, ignore_errors=True)
    with checkpoint_writes(run_dir, folder, state["steps"]):  # a full disk: one line, the last checkpoint kept
        folder.mkdir(parents=True)
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, folder / "model.pt")
        arrays: dict[str, np.ndarray] = {"names": np.array([s.name for s in league], dtype=str)}
        for i, snapshot in enumerate(league):
            arrays.update({f"{i}/{key}": value for key, value in snapshot.weights.items()})
        np.savez(folder / "league.npz", **arrays)
        torch.save({"env": env.state_dict(), "games": games, "seating": seating.state(),
                    "generator": generator.get_state(), "torch": torch.get_rng_state()}, folder / "games.pt")
        (folder / "state.json").write_text(json.dumps(state))
        commit_checkpoint(run_dir, folder, ("model.pt", "league.npz", "games.pt", "state.json"), state["steps"], keep)


def load_league(path: Path) -> list[Snapshot]:
    with np.load(path, allow_pickle=False) as arrays:
        names = [str(n) for n in arrays["names"]]
        return [Snapshot(name, {k[len(f"{i}/"):]: np.asarray(arrays[k]) for k in arrays.files
                                if k.startswith(f"{i}/")}) for i, name in enumerate(names)]


# ---------------------------------------------------------------- progress
def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo's ``model name``, else ``platform.processor()``), for the speed records."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine() or "unknown"


def progress_line(steps: int, total: int, done_here: int, wall_s: float, train_s: float,
                  clock: TrainingClock | None = None) -> str:
    """``progress: 1,234,567 / 3,500,000 decisions (35%), 11,804 decisions/s, ETA 3:12, load 2.0``.

    The rate is this session's decisions per training second (evaluations and checkpoints apart: the figure
    the docs quote); the ETA is by wall time, evaluations included, and ends at ``train_seconds`` where a
    seconds clock is set and comes first. The 1-minute load average says when other work shares the cores.
    """
    rate = done_here / max(train_s, 1e-9)
    wall_rate = done_here / max(wall_s, 1e-9)
    eta = (total - steps) / wall_rate if wall_rate > 0 else float("inf")
    if clock is not None and clock.limit:
        eta = min(eta, max(clock.limit - clock.seconds(), 0.0) * wall_s / max(train_s, 1e-9))
    eta_text = "-" if eta == float("inf") else f"{int(eta) // 60}:{int(eta) % 60:02d}"
    line = (f"progress: {steps:,} / {total:,} decisions ({100 * steps / max(total, 1):.0f}%), "
            f"{rate:,.0f} decisions/s, ETA {eta_text}")
    if clock is not None and clock.limit:
        line += f" (or at {clock.limit:.0f} s of training: now {clock.seconds():.0f} s)"
    if hasattr(os, "getloadavg"):
        line += f", load {os.getloadavg()[0]:.1f}"
    return line


# --------------------------------------------------------------------- run
class _NoTensorBoard:
    """Stands in for tensorboard's SummaryWriter where tensorboard is not installed."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def add_text(self, *args, **kwargs) -> None:
        pass

    def add_scalar(self, *args, **kwargs) -> None:
        pass

    def close(self) -> None:
        pass


@holds_run_lock
def train(config: VectorPPOConfig, resume: bool = False) -> Path:
    """Train (or resume) the run of ``config``; returns the exported policy's path."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:  # the [ray] venv (cardenvs exploit there) has no tensorboard; curve.csv has every number
        SummaryWriter = _NoTensorBoard  # noqa: N806

    torch.set_num_threads(config.torch_threads)
    device = torch.device(config.device)
    run_dir = Path(config.run_dir)
    curve_csv = run_dir / "curve.csv"

    # -- the checkpoint to resume (checked before anything is written)
    checkpoint = open_run_dir(run_dir, config, resume, RESUMABLE_CHANGES, ("model.pt", "league.npz", "games.pt",
                              "state.json"), ("steps", "env_steps", "iteration", "wall_s", "next_snapshot",
                                              "next_eval", "next_checkpoint", "config"))
    (run_dir / "policies").mkdir(exist_ok=True)

    # -- the env, the network, the league, the seating
    torch.manual_seed(config.seed)
    generator = torch.Generator(device=device).manual_seed(config.seed)
    env = make_vector_env(config, device)
    num_seats = env.num_players
    model = ActorCritic(env.observation_size, env.num_actions, config.net_arch, config.activation,
                        env.hidden_size if config.critic_hidden_cards else 0).to(device)
    precision, why = choose_precision(config.precision, device)
    print(f"precision: {precision} ({why})", file=sys.stderr)
    limit = f", or {config.train_seconds:g} s of training if sooner (train_seconds)" if config.train_seconds else ""
    every = f"; progress every {config.progress_seconds:g} s" if config.progress_seconds else ""
    print(f"training {config.game} for {config.total_steps:,} learner decisions (total_steps){limit}{every}; "
          f"evaluations every {config.eval_every:,} decisions", file=sys.stderr)
    model.bf16 = precision == "bf16"
    optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate, eps=1e-5)
    league: list[Snapshot] = []
    seating = Seating(config, num_seats, device, generator)
    all_games = torch.arange(config.num_envs, device=device)
    if checkpoint is None:
        if config.init_from:
            load_actor(model, config.init_from)
        league = [Snapshot(f"{FIXED}{path}", load_policy(path)) for path in config.fixed_policies]
        obs, mask, info = env.reset()
        seat = info["seat"]
        seating.draw(all_games, len(league))
        steps = env_steps = iteration = 0
        wall_offset = train_offset = 0.0
        next_snapshot, next_eval, next_checkpoint = config.snapshot_every, config.eval_every, config.checkpoint_every
        with curve_csv.open("w", newline="") as f:
            csv.DictWriter(f, CURVE_FIELDS).writeheader()
    else:
        folder, state = checkpoint
        try:  # a hand-edited file with valid hashes is still data only: any mismatch is a CheckpointError
            saved = torch.load(folder / "model.pt", map_location=device, weights_only=True)
            model.load_state_dict(saved["model"])
            optimizer.load_state_dict(saved["optimizer"])
            league = load_league(folder / "league.npz")
            games_state = torch.load(folder / "games.pt", map_location=device, weights_only=True)
            env.load_state_dict(games_state["env"])
            obs, mask, seat = (games_state["games"][k] for k in ("obs", "mask", "seat"))
            seating.load(games_state["seating"])
            generator.set_state(games_state["generator"])
            torch.set_rng_state(games_state["torch"])
            steps, env_steps, iteration = state["steps"], state["env_steps"], state["iteration"]
            wall_offset = state["wall_s"]
            train_offset = float(state.get("train_s", wall_offset))  # checkpoints before train_s: wall time
            next_snapshot, next_eval = state["next_snapshot"], state["next_eval"]
            next_checkpoint = state["next_checkpoint"]
        except (KeyError, TypeError, ValueError, RuntimeError, IndexError, OSError) as error:
            raise CheckpointError(f"checkpoint {folder} cannot be loaded: {error!r:.300}") from None
        truncate_curve(curve_csv, steps)  # evaluations logged after the checkpoint are redone
        print(f"resumed {run_dir} at step {steps} ({len(league)} snapshots in the league)", file=sys.stderr)
    frozen = [FrozenActor(s, device, greedy=config.fixed_greedy and s.name.startswith(FIXED)) for s in league]
    # (observation index, mask columns, action map) of each symmetry: the renamed decision of (obs, mask, action)
    # is (obs[:, index], mask[:, columns], action_map[action]) (see suit_symmetries)
    symmetries = []
    if config.augment:
        for index, actions in check_symmetries(game_spec(config.game), env.observation_size, env.num_actions):
            symmetries.append(tuple(torch.as_tensor(a, device=device) for a in (index, np.argsort(actions), actions)))
    writer = SummaryWriter(str(run_dir / "tb"))
    writer.add_text("config", json.dumps(asdict(config), indent=1))

    # -- the loop: one rollout + update per iteration, then snapshot / evaluate / checkpoint when due
    T, B = config.num_steps, config.num_envs
    games = {"obs": obs, "mask": mask, "seat": seat}  # the current decision of every game
    start, start_steps, start_env_steps = time.perf_counter(), steps, env_steps
    clock = TrainingClock(start, train_offset, config.train_seconds, config.keep_every_seconds)
    episode_returns: list[float] = []
    return_so_far = torch.zeros(B, device=device)
    def evaluate_now() -> None:
        """Export the actor, keep it, evaluate it through the harness, log the rows (curve.csv, TensorBoard)."""
        policy_path = save_policy(model.export_weights(config.game), run_dir / "eval_policy.npz")
        # every evaluated policy is kept, so it can be measured later against opponents kept out of
        # training (the gauntlet: cardenvs eval --gauntlet) without naming them here
        shutil.copyfile(policy_path, (run_dir / "policies").joinpath(f"step_{steps}.npz"))
        rows_out = evaluate_policy(config, policy_path)  # type: ignore[arg-type]
        with curve_csv.open("a", newline="") as f:
            curve = csv.DictWriter(f, CURVE_FIELDS)
            for row in rows_out:
                curve.writerow({"steps": steps, "wall_s": round(wall_offset + time.perf_counter() - start, 1),
                                **row})
                writer.add_scalar(f"eval/win_rate_vs_{row['opponent']}", row["win_rate"], steps)
                writer.add_scalar(f"eval/mean_points_vs_{row['opponent']}", row["mean_points"], steps)
        print(f"step {steps}: " + ", ".join(
            f"vs {r['opponent']} {r['win_rate']:.3f} [{r['ci95_low']:.3f}, {r['ci95_high']:.3f}]"
            for r in rows_out), file=sys.stderr)

    if config.eval_at_start and checkpoint is None:  # the learning curve's first point: the untrained policy
        eval_start = time.perf_counter()
        evaluate_now()
        clock.paused += time.perf_counter() - eval_start
    last_progress = time.perf_counter()

    while steps < config.total_steps and not clock.out_of_time():
        iteration += 1
        if config.anneal_lr:  # by the share of the budget used: decisions, or training seconds when given
            used = max(steps / config.total_steps, clock.seconds() / clock.limit if clock.limit else 0)
            for group in optimizer.param_groups:
                group["lr"] = config.learning_rate * max(1.0 - used, 0.05)
        rollout_start = time.perf_counter()
        rollout = collect_rollout(env, model, frozen, seating, games, generator, config.num_steps, return_so_far,
                                  config.win_bonus, config.reward == "win_loss", config.critic_hidden_cards)
        seating.forget()
        advantages, usable = decision_advantages(rollout, config.gamma, config.gae_lambda)
        episode_returns += rollout.finished_returns
        index = rollout.slot[usable]
        b_obs, b_mask = rollout.obs[index], rollout.mask[index]
        b_actions, b_log_probs = rollout.actions[index], rollout.log_probs[index]
        b_hidden = rollout.hidden[index] if rollout.hidden is not None else None
        b_advantages = advantages[usable]
        b_returns = b_advantages + rollout.values[usable]
        rollout_s = time.perf_counter() - rollout_start
        steps += len(rollout.actions)
        env_steps += T * B

        # PPO update (CleanRL's ppo.py, with masked logits)
        update_start = time.perf_counter()
        n = len(index)
        clip_fractions, approx_kls = [], []
        for _ in range(config.update_epochs):
            order = torch.randperm(n, generator=generator, device=device)
            for first in range(0, n, config.minibatch_size):
                mb = order[first:first + config.minibatch_size]
                mb_obs, mb_mask, mb_actions = b_obs[mb], b_mask[mb], b_actions[mb]
                if symmetries:  # the old log-probabilities are the renamed old policy's: still an importance ratio
                    pick = int(torch.randint(len(symmetries), (1,), generator=generator, device=device))
                    index, columns, action_map = symmetries[pick]
                    mb_obs, mb_mask, mb_actions = mb_obs[:, index], mb_mask[:, columns], action_map[mb_actions]
                log_probs_all = torch.log_softmax(model.masked_logits(mb_obs, mb_mask), dim=-1)
                new_log_probs = log_probs_all.gather(1, mb_actions.unsqueeze(1)).squeeze(1)
                entropy = -(log_probs_all.exp() * log_probs_all).sum(-1)
                log_ratio = new_log_probs - b_log_probs[mb]
                ratio = log_ratio.exp()
                with torch.no_grad():
                    approx_kls.append(float(((ratio - 1) - log_ratio).mean()))
                    clip_fractions.append(float(((ratio - 1.0).abs() > config.clip_coef).float().mean()))
                adv = b_advantages[mb]
                if config.norm_adv and len(mb) > 1:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - config.clip_coef, 1 + config.clip_coef))
                policy_loss = policy_loss.mean()
                value_loss = 0.5 * ((model.value(b_obs[mb], None if b_hidden is None else b_hidden[mb])
                                     - b_returns[mb]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = policy_loss - config.ent_coef * entropy_loss + config.vf_coef * value_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
                optimizer.step()
        update_s = time.perf_counter() - update_start

        # -- logging (CleanRL's charts/ and losses/)
        elapsed = time.perf_counter() - start
        env_rate = (env_steps - start_env_steps) / max(elapsed, 1e-9)
        decision_rate = (steps - start_steps) / max(elapsed, 1e-9)
        scalars = {
            "charts/env_steps_per_s": env_rate, "charts/learner_decisions_per_s": decision_rate,
            "charts/rollout_env_steps_per_s": T * B / max(rollout_s, 1e-9), "charts/update_s": update_s,
            "charts/env_steps": env_steps, "charts/league_size": len(frozen),
            "losses/policy_loss": policy_loss.item(), "losses/value_loss": value_loss.item(),
            "losses/entropy": entropy_loss.item(), "losses/approx_kl": float(np.mean(approx_kls)),
            "losses/clip_fraction": float(np.mean(clip_fractions)), "charts/used_decisions": n,
        }
        if episode_returns:
            scalars["charts/episode_return"] = float(np.mean(episode_returns))
        for name, value in scalars.items():
            writer.add_scalar(name, value, steps)
        if iteration % config.log_every == 0:
            mean_return = f"{np.mean(episode_returns):+.3f}" if episode_returns else "-"
            print(f"iter {iteration} steps {steps} env_steps {env_steps}: {env_rate:.0f} env steps/s, "
                  f"{decision_rate:.0f} decisions/s, return {mean_return}, entropy {entropy_loss.item():.3f}, "
                  f"kl {np.mean(approx_kls):.2e}, value loss {value_loss.item():.3f}; last iteration: rollout "
                  f"{rollout_s:.2f} s, update {update_s:.2f} s", file=sys.stderr)
            episode_returns = []
        finished = steps >= config.total_steps or clock.out_of_time()
        if config.progress_seconds and time.perf_counter() - last_progress >= config.progress_seconds:
            last_progress = time.perf_counter()
            print(progress_line(steps, config.total_steps, steps - start_steps, elapsed,
                                clock.seconds() - train_offset, clock), file=sys.stderr)
        pause_start = time.perf_counter()  # keeping, snapshots, evaluations and checkpoints: not training time
        keep = clock.keep_path(run_dir, steps, finished)
        if keep:
            save_policy(model.export_weights(config.game), keep)

        # -- the league, evaluation and checkpoints (as in cardenvs.train.selfplay)
        if steps >= next_snapshot:
            snapshot = Snapshot(f"step_{steps}", model.export_weights(config.game))
            taken = [i for i, s in enumerate(league) if not s.name.startswith(FIXED)]
            slot_index = len(league) if len(taken) < config.max_snapshots else \
                min(taken, key=lambda i: int(league[i].name[5:]))  # replace the oldest (fixed ones stay)
            if slot_index == len(league):
                league.append(snapshot)
                frozen.append(FrozenActor(snapshot, device))
            else:
                league[slot_index], frozen[slot_index] = snapshot, FrozenActor(snapshot, device)
            seating.forget(slot_index)
            while next_snapshot <= steps:
                next_snapshot += config.snapshot_every
        if steps >= next_eval or finished:
            evaluate_now()
            while next_eval <= steps:
                next_eval += config.eval_every
        if steps >= next_checkpoint or finished:
            while next_checkpoint <= steps:
                next_checkpoint += config.checkpoint_every
            state = {"steps": steps, "env_steps": env_steps, "iteration": iteration,
                     "wall_s": wall_offset + time.perf_counter() - start, "next_snapshot": next_snapshot,
                     "next_eval": next_eval, "next_checkpoint": next_checkpoint, "config": asdict(config),
                     "train_s": clock.seconds()}
            save_checkpoint(run_dir, model, optimizer, league, env, games,
                            seating, generator, state, config.keep_checkpoints)
        clock.paused += time.perf_counter() - pause_start
    writer.close()

    # -- the results: the numpy policy, the learning curve, the speed
    elapsed, trained_s = time.perf_counter() - start, clock.seconds()
    policy_path = save_policy(model.export_weights(config.game), run_dir / "policy.npz")
    plot_curve(curve_csv, run_dir / "learning_curve.png", f"{config.game}: {run_dir.name} (batched PPO)")
    summary = {"steps": steps, "env_steps": env_steps, "wall_s": wall_offset + elapsed, "train_s": trained_s,
               "env_steps_per_s_this_session": (env_steps - start_env_steps) / max(elapsed, 1e-9),
               "decisions_per_s_this_session": (steps - start_steps) / max(elapsed, 1e-9),
               "decisions_per_training_s_this_session": (steps - start_steps) / max(trained_s - train_offset, 1e-9),
               "precision": precision, "precision_why": why, "cpu": cpu_model(), "torch_threads": config.torch_threads}
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=1))
    publish_outputs(config, policy_path, run_dir / "learning_curve.png")
    print(f"done: {steps} learner decisions ({env_steps} env steps) in {summary['wall_s']:.0f} s "
          f"({summary['train_s']:.0f} s training, the rest evaluations and checkpoints); this session "
          f"{summary['env_steps_per_s_this_session']:.0f} env steps/s, "
          f"{summary['decisions_per_s_this_session']:.0f} decisions/s; policy {policy_path}", file=sys.stderr)
    return policy_path


def main(argv: list[str] | None = None) -> int:
    return run_main(argv, "cardenvs train-vector", __doc__.splitlines()[0], VectorPPOConfig,
                    ("yaml", "tensorboard", "matplotlib"), train)


if __name__ == "__main__":
    raise SystemExit(main())
