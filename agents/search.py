"""Search agents for imperfect information: determinized Monte Carlo (PIMC) and ISMCTS, for every game with
search rules (its spec's ``search`` part, ``cardenvs/<game>/search.py``).

Both work from the acting seat's information set only: a public view of the live
game (the game's search rules) from which hidden cards are sampled into
*worlds* (determinizations), engine clones that the search plays out. The live
game is never changed and hidden cards are never read.

- PIMC (``"pimc"``): sample ``worlds`` deals; in each, score every legal action by
  rollouts; play the best mean. ``iterations`` = rollouts in all.
- ISMCTS (``"ismcts"``): single-observer information-set MCTS (Cowling, Powley and
  Whitehouse 2012): a fresh determinization per iteration, one tree over the
  observer's view of the action history, UCB1 with availability counts
  (``c * sqrt(ln(available) / visits)``), expansion of one untried action, a
  rollout, and each node credited with the reward of the seat that chose it.
  ``iterations`` = tree iterations; the move is the most visited root action.

Horizon and rewards: RING RANG plays out the current round (worlds stop once the
round's points are certain) and rewards a seat with its team's signed round
points; Rang plays out the current deal and rewards a seat with
``-(its points in the deal) / 20`` (a deal cut off by the rollout turn cap counts
the points then in hand); ``win_bonus=B`` (Rang only) adds ``B`` to the reward of the
seat that goes out, so the search also values the harness's win (going out first).
Budgets: ``iterations`` and, optionally, ``ms`` (wall-clock per decision; the search
stops at whichever comes first — with ``ms`` the choice is no longer reproducible). Rollouts: ``"random"`` (a fast
engine-level uniformly random playout, the default), in Rang ``"costliest"`` (engine-level too: every
seat plays or discards its costliest legal card; its playouts run longer, about 2.8 times the
time a decision), or the name of a registry agent that acts from an observation (e.g.
``rollout=rules_strong``).

The evaluation harness hands the env to agents that set ``needs_env``
(:meth:`SearchAgent.observe_env`) before each ``act``.

    cardenvs eval --game ring_rang --agents ismcts:iterations=200 rules_strong --deals 1000 --workers 2
"""

from __future__ import annotations

import inspect
import math
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from cardenvs.core import Game
from cardenvs.games import GAMES, game_spec

from .base import Agent


class AgentRollout:
    """A rollout policy made of a registry agent that acts from observations (built from the world)."""

    def __init__(self, spec: str, game: str, num_players: int | None = None, seed: int | None = None):
        from .registry import make_agent

        self.agent = make_agent(spec, game, seed=seed, **game_spec(game).env_info(num_players or 4))
        if getattr(self.agent, "needs_env", False):
            raise ValueError(f"rollout={spec!r}: a rollout agent must act from the observation alone")
        # a trained policy acts for a batch of worlds at once; world_search then plays its worlds in step
        self.batched = hasattr(self.agent, "act_batch")

    def __call__(self, world: Game, rng: random.Random) -> None:
        while not world.is_over():
            seat = world.current_player()
            observation = {"observation": world.observe(seat), "action_mask": world.legal_mask()}
            world.step(int(self.agent.act(observation)))

    def many(self, worlds: list[Game], rng: random.Random) -> None:
        """Play out every world with a ``batched`` agent (a trained policy): all the unfinished worlds move a
        step at a time, one network pass a step, many times faster than one world after another."""
        act_batch = self.agent.act_batch
        live = [world for world in worlds if not world.is_over()]
        while live:
            observations = np.stack([world.observe(world.current_player()) for world in live])
            masks = np.stack([world.legal_mask() for world in live])
            for world, action in zip(live, act_batch(observations, masks).tolist(), strict=True):
                world.step(action)
            live = [world for world in live if not world.is_over()]


# ----------------------------------------------------------------- the search
class _Node:
    """An ISMCTS node: the edge into it was chosen by the seat to act at its parent."""

    __slots__ = ("children", "visits", "total", "available")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.total = 0.0
        self.available = 1


def _deadline(ms: float | None) -> float:
    return math.inf if ms is None else time.perf_counter() + ms / 1000.0


def pimc_search(
    rules: Any,
    view: Any,
    legal: list[int],
    rng: random.Random,
    rollout: Callable[[Any, random.Random], None],
    iterations: int,
    worlds: int,
    ms: float | None = None,
) -> tuple[int, dict[int, float]]:
    """Best legal action by mean rollout reward over ``worlds`` sampled deals; also the means.

    With ``ms`` the clock starts before the worlds are sampled, and only the worlds the iterations can visit
    are sampled (each is visited for every legal action in turn), so a huge ``worlds`` keeps the budget.
    """
    deadline = _deadline(ms)
    wanted = worlds if ms is None else min(worlds, -(-iterations // len(legal)))
    samples = []
    while len(samples) < wanted and (not samples or time.perf_counter() <= deadline):
        samples.append(rules.sample(view, rng))
    return world_search(rules, samples, view.seat, legal, rng, rollout, iterations, deadline=deadline)


def world_search(
    rules: Any,
    samples: list[Any],
    seat: int,
    legal: list[int],
    rng: random.Random,
    rollout: Callable[[Any, random.Random], None],
    iterations: int,
    ms: float | None = None,
    deadline: float | None = None,
) -> tuple[int, dict[int, float]]:
    """Best legal action of ``seat`` by mean rollout reward over the given worlds, visited in turn.

    A batched rollout (:class:`AgentRollout` of a trained policy) plays each pass over the worlds and
    actions as one batch; ``ms`` (or a ``deadline`` on :func:`time.perf_counter` set by the caller, whose
    clock started earlier) is then checked between passes.
    """
    deadline = _deadline(ms) if deadline is None else deadline
    totals = dict.fromkeys(legal, 0.0)
    counts = dict.fromkeys(legal, 0)
    done = 0
    many = rollout.many if getattr(rollout, "batched", False) else None  # type: ignore[attr-defined]
    one_pass = [(world, action) for world in samples for action in legal]
    while many is not None and done < iterations and time.perf_counter() <= deadline:
        batch = one_pass[: iterations - done]
        sims = []
        for world, action in batch:
            sim = world.clone()
            sim.step(action)
            sims.append(sim)
        many(sims, rng)
        for (_, action), sim in zip(batch, sims, strict=True):
            totals[action] += rules.rewards(sim)[seat]
            counts[action] += 1
        done += len(batch)
    while many is None and done < iterations:
        for world in samples:
            for action in legal:
                sim = world.clone()
                sim.step(action)
                rollout(sim, rng)
                totals[action] += rules.rewards(sim)[seat]
                counts[action] += 1
                done += 1
                if done >= iterations or time.perf_counter() > deadline:
                    break
            if done >= iterations or time.perf_counter() > deadline:
                break
        if time.perf_counter() > deadline:
            break
    means = {a: totals[a] / counts[a] for a in legal if counts[a]}
    best = max(means, key=lambda a: (means[a], -legal.index(a))) if means else legal[0]
    return best, means


def ismcts_search(
    rules: Any,
    view: Any,
    legal: list[int],
    rng: random.Random,
    rollout: Callable[[Any, random.Random], None],
    iterations: int,
    exploration: float = 0.7,
    ms: float | None = None,
) -> tuple[int, dict[int, int]]:
    """SO-ISMCTS from ``view``; returns the most visited root action and the root visit counts."""
    deadline = _deadline(ms)
    root = _Node()
    rewards = rules.rewards
    log, sqrt = math.log, math.sqrt
    for _ in range(iterations):
        world = rules.sample(view, rng)
        node = root
        path: list[tuple[_Node, int]] = []
        while not world.is_over():
            actions = world.legal_actions()
            actor = world.current_player()
            children = node.children
            untried = [a for a in actions if a not in children]
            for a in actions:
                child = children.get(a)
                if child is not None:
                    child.available += 1
            if untried:
                action = untried[int(rng.random() * len(untried))]
                node = children[action] = _Node()
                world.step(action)
                path.append((node, actor))
                break
            best_value = -math.inf
            action = actions[0]
            for a in actions:
                child = children[a]
                value = child.total / child.visits + exploration * sqrt(log(child.available) / child.visits)
                if value > best_value:
                    best_value, action = value, a
            node = children[action]
            world.step(action)
            path.append((node, actor))
        if not world.is_over():
            rollout(world, rng)
        reward = rewards(world)
        for node, actor in path:
            node.visits += 1
            node.total += reward[actor]
        if time.perf_counter() > deadline:
            break
    visits = {a: root.children[a].visits for a in legal if a in root.children}
    if not visits:
        return legal[0], visits
    best = max(visits, key=lambda a: (visits[a], root.children[a].total / max(visits[a], 1)))
    return best, visits


# ----------------------------------------------------------------- the agents
def _is_number(value: Any) -> bool:
    """A finite int or float (not a bool, not NaN, not an infinity)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _check_count(name: str, value: Any) -> None:
    """A search parameter counted in whole units (iterations, worlds): an int >= 1, else a ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an int >= 1, got {value!r}")


class SearchAgent(Agent):
    """Base of the search agents: reads the information set from the env, searches, never peeks."""

    needs_env = True

    def __init__(
        self,
        game: str,
        seed: int | None = None,
        iterations: int = 200,
        ms: float | None = None,
        rollout: str = "random",
        num_players: int | None = None,
        win_bonus: float = 0.0,
    ):
        super().__init__(seed)
        if game not in GAMES:
            raise ValueError(f"game must be one of {sorted(GAMES)}, got {game!r}")
        _check_count("iterations", iterations)
        if ms is not None and not (_is_number(ms) and ms > 0):  # NaN compares false: it would pass "<= 0"
            raise ValueError(f"ms must be a positive number of milliseconds, got {ms!r}")
        if not (_is_number(win_bonus) and win_bonus >= 0):
            raise ValueError(f"win_bonus must be a number >= 0, got {win_bonus!r}")
        self.game = game
        rules = GAMES[game].part("search")
        if win_bonus and "win_bonus" not in inspect.signature(rules).parameters:
            raise ValueError(f"win_bonus: {game}'s search rules take no win bonus (its rewards already are "
                             "its scoring)")
        self.rules = rules(win_bonus=float(win_bonus)) if win_bonus else rules()
        self.iterations = iterations
        self.ms = ms
        if rollout in self.rules.rollouts:
            self.rollout: Callable[[Any, random.Random], None] = getattr(self.rules, f"{rollout}_rollout")
        elif isinstance(rollout, str) and rollout:
            try:
                self.rollout = AgentRollout(rollout, game, num_players, seed)
            except ValueError as error:
                raise ValueError(f"rollout={rollout!r}: not one of {game}'s playouts {list(self.rules.rollouts)} "
                                 f"nor a usable agent ({error})") from None
        else:
            raise ValueError(f"rollout must be one of {list(self.rules.rollouts)} or an agent name, got {rollout!r}")
        self._env: Any = None
        # what each seat it plays remembers beyond the public view (Rang: its own discards), by seat, so one
        # agent may also advise every seat of a game (distillation labels all four)
        self._memories: dict[int, Any] = {}
        # the mean rollout reward of each legal action at the last decision (PIMC and the oracle; None when
        # the decision had one legal action or the search keeps no means): soft targets for distillation
        self.last_values: dict[int, float] | None = None

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._memories.clear()

    def observe_env(self, env: Any) -> None:
        """Called before :meth:`act` by the harness: the env the agent plays in (read through its public view)."""
        self._env = getattr(env, "unwrapped", env)

    def act(self, observation: dict[str, np.ndarray], env: Any = None) -> int:
        action = self.propose(observation, env)
        self.played(action)
        return action

    def propose(self, observation: dict[str, np.ndarray], env: Any = None) -> int:
        """The search's choice for the seat to act, not yet remembered as played (see :meth:`played`).

        :meth:`act` is ``propose`` then ``played``; a labeller that asks the search at positions where another
        policy moves calls ``propose``, then ``played`` with the move actually made.
        """
        if env is not None:
            self.observe_env(env)
        if self._env is None or self._env.game is None:
            raise ValueError(
                f"{type(self).__name__} needs the env: call observe_env(env) (or act(obs, env)) before act"
            )
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        if not legal:
            raise ValueError("no legal action in the mask: the agent was asked to act out of turn")
        game = self._env.game
        seat = self._seat()
        decision_seed = int(self.rng.integers(2**63))
        memory = self._memory(seat)
        if memory is not None:
            memory.refresh(game)
        self.last_values = None
        if len(legal) == 1:
            action = legal[0]
        else:
            action = self.choose(self.information(game, seat), legal, random.Random(decision_seed))
        if action not in legal:
            raise RuntimeError(f"search chose {action}, not legal in {legal}")
        return int(action)

    def played(self, action: int) -> None:
        """Remember that the seat to act takes ``action`` (its own discard, in Rang); call before the env steps."""
        seat = self._seat()
        memory = self._memory(seat)
        if memory is not None:
            memory.record(self._env.game, seat, action)

    def _seat(self) -> int:
        return int(self._env.agent_selection.rsplit("_", 1)[1])

    def _memory(self, seat: int) -> Any:
        if seat not in self._memories:
            self._memories[seat] = self.rules.new_memory()
        return self._memories[seat]

    def information(self, game: Any, seat: int) -> Any:
        """What the search may know: the seat's information set (the public view and its own memory)."""
        return self.rules.view(game, seat, self._memory(seat))

    def choose(self, view: Any, legal: list[int], rng: random.Random) -> int:
        raise NotImplementedError


class PIMCAgent(SearchAgent):
    """Determinized (perfect information) Monte Carlo: sample worlds, score actions by rollouts."""

    name = "pimc"

    def __init__(self, game: str, seed: int | None = None, iterations: int = 200, worlds: int = 8,
                 ms: float | None = None, rollout: str = "random", num_players: int | None = None,
                 win_bonus: float = 0.0):
        super().__init__(game, seed, iterations, ms, rollout, num_players, win_bonus)
        _check_count("worlds", worlds)
        self.worlds = worlds

    def choose(self, view: Any, legal: list[int], rng: random.Random) -> int:
        action, self.last_values = pimc_search(self.rules, view, legal, rng, self.rollout, self.iterations,
                                               self.worlds, self.ms)
        return action


class ISMCTSAgent(SearchAgent):
    """Single-observer information-set MCTS."""

    name = "ismcts"

    def __init__(self, game: str, seed: int | None = None, iterations: int = 200, c: float = 0.7,
                 ms: float | None = None, rollout: str = "random", num_players: int | None = None,
                 win_bonus: float = 0.0):
        super().__init__(game, seed, iterations, ms, rollout, num_players, win_bonus)
        if not (_is_number(c) and c >= 0):
            raise ValueError(f"c (exploration) must be a number >= 0, got {c!r}")
        self.exploration = float(c)

    def choose(self, view: Any, legal: list[int], rng: random.Random) -> int:
        action, _ = ismcts_search(self.rules, view, legal, rng, self.rollout, self.iterations, self.exploration,
                                  self.ms)
        return action


class OracleAgent(SearchAgent):
    """For measurement only: it SEES EVERY HAND. PIMC on the one true state (the live game, cloned).

    Not a player of the game (it cheats by design): its results against fair agents bound how much
    skill can show in a game's results, the headroom above a baseline. ``iterations`` rollouts in all,
    spread over the legal actions, each a random (or ``rollout=`` agent) playout of the true deal.
    ``sees=hands`` (Rang) sees every hand but not the stock's order: what seeing the others' cards is worth.
    ``win_bonus`` (Rang) as for the fair searches. As a distillation teacher it guides a student that still sees
    only its own observation ("oracle guiding").
    """

    name = "oracle"
    sees_hidden_cards = True  # never a benchmark candidate (cardenvs benchmark refuses it)

    def __init__(self, game: str, seed: int | None = None, iterations: int = 200, ms: float | None = None,
                 rollout: str = "random", num_players: int | None = None, sees: str = "all", worlds: int = 8,
                 win_bonus: float = 0.0):
        super().__init__(game, seed, iterations, ms, rollout, num_players, win_bonus)
        if sees not in ("all", "hands"):
            raise ValueError(f"sees must be 'all' or 'hands', got {sees!r}")
        if sees == "hands" and not hasattr(self.rules, "shuffled_stock"):
            raise ValueError(f"sees=hands hides the stock's order, and {game} has no stock: use sees=all")
        _check_count("worlds", worlds)
        # "all": the true state, the stock's order and later reshuffles included; "hands" (Rang): every hand and
        # the discard pile, but the stock in an unknown order (``worlds`` random orders, PIMC over them)
        self.sees = sees
        self.worlds = worlds

    def information(self, game: Any, seat: int) -> tuple[Any, int]:
        """Everything: the true state (cloned, to the search's horizon) and the seat to act."""
        return self.rules.horizon(game.clone()), seat

    def choose(self, view: tuple[Any, int], legal: list[int], rng: random.Random) -> int:
        world, seat = view
        deadline = _deadline(self.ms)  # the clock starts before the stock orders are drawn
        worlds = [world]
        if self.sees == "hands":
            wanted = self.worlds if self.ms is None else min(self.worlds, -(-self.iterations // len(legal)))
            worlds = [self.rules.shuffled_stock(world, rng)]
            while len(worlds) < wanted and time.perf_counter() <= deadline:
                worlds.append(self.rules.shuffled_stock(world, rng))
        action, self.last_values = world_search(self.rules, worlds, seat, legal, rng, self.rollout,
                                                self.iterations, deadline=deadline)
        return action


# ------------------------------------------------------- registry factories
def make_pimc(game: str, seed: int | None = None, **params: Any) -> PIMCAgent:
    return PIMCAgent(game, seed=seed, **params)


def make_ismcts(game: str, seed: int | None = None, **params: Any) -> ISMCTSAgent:
    return ISMCTSAgent(game, seed=seed, **params)


def make_oracle(game: str, seed: int | None = None, **params: Any) -> OracleAgent:
    return OracleAgent(game, seed=seed, **params)
