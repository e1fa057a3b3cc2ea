"""Evaluation harness: play line-ups of agents on fixed deals and report trustworthy numbers.

RING RANG is played in duplicate form: every deal is played twice with the
same cards and chooser, the two teams' agents swapping seats, so the luck of
the cards cancels. Rang rotates the line-up over the seats on the same deal
(more agents than seats: every group of that many agents, each rotated).
Each deal is one scoring unit: a RING RANG round (``episode="round"``) or a
Rang deal (``episode="deal"``); ``unit: game`` plays whole games/matches
instead. The envs are driven only through the public contract (``env()``,
``reset(options={"deck"|"decks", "chooser"|"dealer"})``, the AEC loop).

    cardenvs eval --config configs/eval_ring_rang.yaml
    python -m cardenvs.train.evaluate --game rang --agents random random --deals 200
    cardenvs eval --agents trained pimc:iterations=500 --deals 100000 --ray-address auto --chunks runs/c

The deals go in chunks to ``workers`` processes, or as Ray tasks to a cluster (``--ray-address``,
docs/scale_out.md), with the same results; ``--chunks FOLDER`` makes a run resumable.
"""

from __future__ import annotations

import argparse
import copy
import csv
import hashlib
import inspect
import itertools
import json
import math
import os
import pickle
import sys
import time
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from cardenvs.agents.base import Agent
from cardenvs.agents.outside import Forfeit, OutsideAgent, build_outside_agent, checked_action
from cardenvs.agents.registry import (
    OUTSIDE_FORMS,
    available_agents,
    check_agent,
    check_spec,
    gauntlet_agents,
    make_agent,
)
from cardenvs.agents.time_control import Clock, TimeControl
from cardenvs.games import GAME_NAMES, canonical_game, default_game, game_spec, games_help, players_help

from .cluster import (  # noqa: F401 (one_blas_thread, worker_map: re-exported, their home before cluster.py)
    RAY_EXTRA,
    check_ray_address,
    cluster_cpus,
    fan_out,
    file_digests,
    local_spec,
    one_blas_thread,
    shipped_files,
    worker_map,
)
from .config_files import config_from_dict, read_yaml_mapping
from .stats import Rating, mean_interval, wilson_interval


@dataclass
class EvalConfig:
    """What to evaluate (also the schema of configs/eval_*.yaml)."""

    game: str = field(default_factory=default_game)  # any game of the table (cardenvs.games)
    agents: list[str] = field(default_factory=lambda: ["random", "random"])  # agent specs; see agents/registry.py
    deals: int = 100  # number of deals (each played in every seat arrangement of the line-up)
    seed: int = 0  # the deal list is a pure function of (seed, deal index)
    num_players: int = 4  # Rang only
    unit: str = "deal"  # "deal": one round/deal per episode; "game": whole games (RING RANG) / matches (Rang)
    workers: int = 1  # processes; 2 uses both cores of the reference machine
    ray_address: str | None = None  # run the chunks as Ray tasks: ADDRESS, "auto" or "local" (docs/scale_out.md)
    chunks: str | None = None  # folder of finished chunks: saved as they complete, a rerun plays only the rest
    out: str | None = None  # folder for results.json, results.csv and results.png
    progress: bool = True
    env_kwargs: dict[str, Any] = field(default_factory=dict)  # extra constructor kwargs of the env
    gauntlet: bool = False  # play agents[0] against every gauntlet agent in turn; report each and the worst
    # bots' time control (per_decision, base, increment: agents/time_control.py); base is this run's whole clock
    time_control: dict[str, float] | None = None

    def validate(self, build: bool = True, objects: Collection[str] = ()) -> None:
        """Check every field; with ``build``, also build each agent and the env once.

        Building finds what a name check cannot (``pimc:iterations=-5``, a missing policy file, a policy
        for another player count, an unknown ``env_kwargs`` key) before any deal is played, and in this
        process rather than in a worker. Normalises ``game`` (``ring-rang`` -> ``ring_rang``) and turns a
        one-agent line-up (no gauntlet) into the mirror match ``X#0`` vs ``X#1``.
        """
        self.game = canonical_game(self.game)
        if not isinstance(self.agents, list) or not self.agents or not all(isinstance(a, str) for a in self.agents):
            raise ValueError(f"agents: expected a non-empty list of agent specs, got {self.agents!r}")
        if len(self.agents) == 1 and not self.gauntlet:
            # one agent would fill every seat and "win" every episode: play it against itself, as labelled
            # copies, as a bare ``cardenvs eval`` plays random#0 vs random#1
            self.agents = self.agents * 2
        for spec in self.agents:
            if spec_of(spec) not in objects:  # the labels of agent objects (evaluate_agents) name no spec
                check_spec(spec_of(spec), self.game)
        bounds = (("deals", self.deals, 1), ("workers", self.workers, 1), ("num_players", self.num_players, 2),
                  ("seed", self.seed, 0))
        for name, value, low in bounds:
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ValueError(f"{name}: expected an int >= {low}, got {value!r}")
        check_ray_address(self.ray_address)
        if self.chunks is not None and (not isinstance(self.chunks, str) or not self.chunks):
            raise ValueError(f"chunks: expected a folder, got {self.chunks!r}")
        if self.unit not in ("deal", "game"):
            raise ValueError(f"unit: expected 'deal' or 'game', got {self.unit!r}")
        game_spec(self.game).check_players(self.num_players)
        if self.gauntlet and len(self.agents) != 1:
            raise ValueError(f"gauntlet: expected one candidate agent (the gauntlet are its opponents), "
                             f"got {self.agents!r}")
        if self.gauntlet and not game_spec(self.game).gauntlet:
            raise ValueError(f"gauntlet: {game_spec(self.game).title} has no gauntlet (its spec declares no "
                             "gauntlet_<style> agents); compare agents with --agents")
        if not isinstance(self.env_kwargs, dict):
            raise ValueError(f"env_kwargs: expected a mapping of env arguments, got {self.env_kwargs!r}")
        if self.time_control is not None:
            TimeControl.from_dict(self.time_control)
        if build:
            try:
                make_env(self)
            except (TypeError, ValueError) as error:
                raise ValueError(f"env_kwargs {self.env_kwargs!r}: {error}") from None
            info = game_spec(self.game).env_info(self.num_players)
            for spec in dict.fromkeys(spec_of(a) for a in self.agents if spec_of(a) not in objects):
                check_agent(spec, self.game, **info)


@dataclass
class Record:
    """One played episode: who sat where and what each seat got."""

    deal: int
    arrangement: int
    seats: list[str]  # agent spec per seat
    rewards: list[float]  # total reward per seat
    points: list[float]  # per seat, as the game's scoring states them (RING RANG: signed round/game points; Rang:
    # points scored, lower is better)
    winner_seats: list[int]  # seats on the winning side (empty when truncated)
    truncated: bool
    decisions: int
    forfeit_seat: int | None = None  # the seat whose agent gave the episode up (crashed, silent, illegal)
    forfeit_reason: str = ""
    seconds: list[float] = field(default_factory=list)  # per seat: time its agent spent deciding
    max_seconds: list[float] = field(default_factory=list)  # per seat: its slowest decision
    seat_decisions: list[int] = field(default_factory=list)  # per seat: decisions its agent made
    actions: list[int] = field(default_factory=list)  # every action played, in order (the benchmark's record)


# ---------------------------------------------------------------- line-ups
def agent_labels(agents: Sequence[str]) -> list[str]:
    """One label per line-up entry: the spec, with ``#i`` added where a spec is repeated."""
    return [a if agents.count(a) == 1 else f"{a}#{i}" for i, a in enumerate(agents)]


def spec_of(label: str) -> str:
    return label.split("#", 1)[0]


def arrangements(config: EvalConfig) -> list[list[str]]:
    """The seat arrangements (agent labels per seat) every deal is played in."""
    agents = agent_labels(config.agents)
    if game_spec(config.game).partnerships:
        pairs = [(agents[0], agents[0])] if len(agents) == 1 else list(itertools.combinations(agents, 2))
        # Duplicate form: each pairing plays each deal twice, the teams swapping seats.
        return [seat for a, b in pairs for seat in ([a, b, a, b], [b, a, b, a])]
    # Every seat for itself (Rang): the line-up fills the seats cyclically and is rotated over them. When the seats
    # do not divide evenly among the agents, every agent also takes the first place of the
    # cycle in turn, so that over all arrangements each agent fills the same number of seats.
    # With more agents than seats, every group of num_players agents plays, each rotated:
    # each agent fills every seat equally often and every pair meets equally often.
    n, k = config.num_players, len(agents)
    if k > n:
        return [list(group[j:] + group[:j]) for group in itertools.combinations(agents, n) for j in range(n)]
    shifts = range(k) if n % k else range(1)
    unique: list[list[str]] = []
    for shift in shifts:
        lineup = [agents[(i + shift) % k] for i in range(n)]
        for r in (lineup[j:] + lineup[:j] for j in range(n)):
            if r not in unique:
                unique.append(r)
    return unique


def deal_options(config: EvalConfig, deal: int) -> dict[str, Any]:
    """The reset options of a deal: a pure function of (seed, deal index)."""
    return game_spec(config.game).random_options(np.random.default_rng([config.seed, deal]), config.unit,
                                                 config.num_players)


def make_env(config: EvalConfig):
    spec = game_spec(config.game)
    kwargs = {"episode": spec.episodes[config.unit], **config.env_kwargs}  # env_kwargs win
    return spec.make_env(num_players=config.num_players, **kwargs)


@dataclass
class Episode:
    """What :func:`play_episode` saw: rewards, the end, and each seat's thinking time."""

    rewards: list[float]
    truncated: bool
    decisions: int
    seconds: list[float]
    max_seconds: list[float]
    seat_decisions: list[int]
    forfeit_seat: int | None = None
    forfeit_reason: str = ""
    actions: list[int] = field(default_factory=list)


def play_episode(env, agents: Sequence, options: dict[str, Any], seed: int) -> Episode:
    """Play one episode through the AEC loop.

    Every answer is checked against the action mask here, for every agent: a bad one (or a :class:`Forfeit`
    raised by the agent, e.g. a bot that crashed or stayed silent) ends the episode as that seat's forfeit.
    """
    env.reset(seed=seed, options=options)
    n = len(agents)
    episode = Episode([0.0] * n, False, 0, [0.0] * n, [0.0] * n, [0] * n)
    for name in env.agent_iter():
        obs, reward, term, trunc, _ = env.last()
        seat = int(name.rsplit("_", 1)[1])
        episode.rewards[seat] += reward
        if term or trunc:
            episode.truncated = episode.truncated or trunc
            env.step(None)
            continue
        agent = agents[seat]
        start = time.perf_counter()
        try:
            if getattr(agent, "needs_env", False):
                agent.observe_env(env)
            action = checked_action(agent.act(obs), obs["action_mask"])
        except Forfeit as forfeit:
            episode.forfeit_seat, episode.forfeit_reason = seat, str(forfeit)
            return episode
        finally:
            spent = time.perf_counter() - start
            episode.seconds[seat] += spent
            episode.max_seconds[seat] = max(episode.max_seconds[seat], spent)
            episode.seat_decisions[seat] += 1
        env.step(action)
        episode.actions.append(action)
        episode.decisions += 1
    return episode


def _outcome(config: EvalConfig, seats: list[str], episode: Episode,
             game: Any = None) -> tuple[list[float], list[int]]:
    """(points per seat, winning seats) as the game's scoring states them (``game``: the engine at the end, for
    a scoring that reads raw points), or from a forfeit; a ValueError naming the spec where its scoring
    contradicts the rewards (:meth:`~cardenvs.games.GameSpec.judge`).

    A forfeit loses the episode for the agent that gave it up: in a partnership game the other side wins;
    otherwise the other agent wins where the line-up has two, and nobody where it has more.
    """
    spec = game_spec(config.game)
    rewards, truncated = episode.rewards, episode.truncated
    if episode.forfeit_seat is not None:
        quitter = seats[episode.forfeit_seat]
        others = [s for s, label in enumerate(seats) if label != quitter]
        if spec.partnerships:
            others = list(spec.seats_of_side(1 - spec.side_of(episode.forfeit_seat), len(seats)))
        elif len(set(seats)) > 2:
            others = []
        return rewards, others
    return spec.judge(spec.episode_end(spec.episodes[config.unit], rewards, truncated, game))


def _play_chunk(args: tuple[EvalConfig, list[int], dict[str, Any], dict[str, Any]]) -> list[Record]:
    """The records of ``deals``: the job of a worker process or a Ray task (``files``: :func:`shipped_files`)."""
    config, deals, objects, files = args
    env = make_env(config)
    layouts = arrangements(config)
    extra = game_spec(config.game).env_info(config.num_players)
    cache: dict[tuple[str, int], Any] = {}
    clocks: dict[str, Clock] = {}  # one clock per bot of the line-up, over all its seats
    control = TimeControl.from_dict(config.time_control) if config.time_control else None
    records = []
    try:
        for deal in deals:
            options = deal_options(config, deal)
            for index, seats in enumerate(layouts):
                agents = []
                for seat, label in enumerate(seats):
                    agent = cache.get((label, seat))
                    if agent is None:
                        spec = spec_of(label)
                        agent = (object_agent(objects[spec], spec, config) if spec in objects
                                 else make_agent(local_spec(spec, files), config.game, seed=None, **extra))
                        cache[(label, seat)] = agent
                    agents.append(agent)
                if control is not None:
                    start_clocks(control, config.deals, len(deals), seats, agents, clocks)
                records.append(play_record(config, env, deal, index, list(seats), agents, options))
    finally:  # bots' processes end here, whatever happened
        for agent in cache.values():
            agent.close()
    return records


def start_clocks(control: TimeControl, run_deals: int, deals: int, seats: Sequence[str], agents: Sequence,
                 clocks: dict[str, Clock]) -> None:
    """Give each bot process of the line-up its clock: one per agent, shared by its seats, with this chunk's
    share (``deals`` of the run's ``run_deals``) of the base (agents/time_control.py)."""
    for label, agent in zip(seats, agents, strict=True):
        inner = getattr(agent, "inner", agent)
        if getattr(inner, "out_of_process", False):
            if label not in clocks:
                clocks[label] = Clock(control, control.base * deals / run_deals)
            inner.clock = clocks[label]


def play_record(config: EvalConfig, env: Any, deal: int, arrangement: int, seats: list[str], agents: Sequence,
                options: dict[str, Any] | None = None) -> Record:
    """Play one episode (``deal`` in seat arrangement ``arrangement``) and its :class:`Record`.

    The one way an episode is seeded and scored: every agent is reset with :func:`agent_seed`, the env with a
    seed of (seed, deal); ``cardenvs benchmark verify`` replays a run through here too.
    """
    for seat, agent in enumerate(agents):
        agent.reset(seed=agent_seed(config.seed, deal, arrangement, seat,
                                    one_way=getattr(agent, "out_of_process", False)))
    options = deal_options(config, deal) if options is None else options
    episode = play_episode(env, agents, options, seed=config.seed * 1_000_003 + deal)
    points, winners = _outcome(config, seats, episode, env.unwrapped.game)
    return Record(deal, arrangement, seats, episode.rewards, points, winners, episode.truncated, episode.decisions,
                  episode.forfeit_seat, episode.forfeit_reason, episode.seconds, episode.max_seconds,
                  episode.seat_decisions, episode.actions)


def agent_seed(seed: int, deal: int, arrangement: int, seat: int, one_way: bool = False) -> int:
    """The seed an agent is reset with for one episode: a pure function of the run's seed and the episode.

    ``one_way`` (a bot in another process, which is sent its seed): a SHA-256 of them, from which no bot can work
    back to the run's seed and so to the deals (the in-process agents keep numpy's seeding, so that the results
    of every earlier run replay unchanged).
    """
    if one_way:
        text = f"cardenvs-agent-seed:{seed}:{deal}:{arrangement}:{seat}".encode()
        return int.from_bytes(hashlib.sha256(text).digest()[:4], "big")
    return int(np.random.SeedSequence([seed, deal, arrangement, seat]).generate_state(1)[0])


def object_agent(obj: Any, label: str, config: EvalConfig) -> Agent:
    """An agent object handed to :func:`evaluate_agents`, one per seat (it may keep memory): a fresh copy of
    an instance or a function, or a class called as an outside factory (:mod:`cardenvs.agents.outside`)."""
    if inspect.isclass(obj):
        context = {"seed": None, "game": config.game, "num_players": config.num_players}
        return build_outside_agent(obj, label, {}, context)
    return OutsideAgent(copy.deepcopy(obj), label)


def worker_count(config: EvalConfig) -> tuple[int, str]:
    """The processes worth starting: ``workers`` capped at the deals and the CPU cores; why, when capped.

    More processes than deals have nothing to play and more than cores only share them, so
    ``--workers 10000`` starts a handful, not ten thousand. The numbers do not depend on it.
    """
    cores = os.cpu_count() or 1
    workers = min(config.workers, config.deals, cores)
    if workers == config.workers:
        return workers, ""
    limit = f"{config.deals} deal(s)" if config.deals <= cores else f"{cores} CPU core(s)"
    return workers, f"workers: {config.workers} capped at {workers} ({limit})"


def run_records(config: EvalConfig, objects: dict[str, Any] | None = None, bar: Any = None) -> list[Record]:
    """Play every deal in every arrangement, over ``workers`` processes or a Ray cluster, with a progress bar.

    ``objects``: agent objects by the label that stands for them in ``config.agents`` (:func:`evaluate_agents`);
    ``bar``: a progress bar to advance instead of a new one (a benchmark's one bar over all its matches).
    With ``config.chunks``, each chunk's records are saved there as it completes and the deals already saved
    are not played again (:class:`ChunkFolder`).
    """
    objects = objects or {}
    config.validate(objects=objects)
    folder = ChunkFolder(config.chunks, config) if config.chunks else None
    done = {deal: records for deal, records in folder.load().items() if deal < config.deals} if folder else {}
    missing = [deal for deal in range(config.deals) if deal not in done]
    parallel = cluster_cpus(config.ray_address) if config.ray_address else worker_count(config)[0]
    chunk = max(1, min(50, config.deals // (parallel * 4) or 1))
    # the files agents name by path= travel with Ray tasks, read here: the nodes need no shared disk
    files = shipped_files(spec_of(a) for a in config.agents) if config.ray_address else {}
    jobs = [(config, missing[i:i + chunk], objects, files) for i in range(0, len(missing), chunk)]
    own_bar = bar is None
    bar = progress_bar(config.deals, config.progress, f"eval {config.game}") if own_bar else bar
    bar.update(len(done))
    try:
        for index, result in fan_out(_play_chunk, jobs, parallel, config.ray_address):
            for deal in jobs[index][1]:
                done[deal] = []
            for record in result:
                done[record.deal].append(record)
            if folder:
                folder.save(jobs[index][1], result)
            bar.update(len(jobs[index][1]))
    except (pickle.PicklingError, AttributeError, TypeError, RuntimeError) as error:
        # torch's own refusal ("Cowardly refusing to serialize non-leaf tensor") is a RuntimeError
        if not objects or parallel == 1 or not any(word in str(error).lower() for word in ("pickle", "serializ")):
            raise
        raise ValueError(f"agent objects go to the worker processes by pickling, and one cannot be pickled "
                         f"({error}); define it at the top level of a module, or use workers=1") from None
    finally:
        if own_bar:
            bar.close()
    return [record for deal in range(config.deals) for record in done[deal]]


def chunk_subfolder(chunks: str | None, match: str) -> str | None:
    """The chunk folder of one match of a run of several (gauntlet, benchmark): a subfolder named after it
    (readable, and unique by a hash of the whole name)."""
    if not chunks:
        return None
    readable = "".join(c if c.isalnum() or c in "-_.=" else "_" for c in match)[:60]
    return str(Path(chunks) / f"{readable}-{hashlib.sha256(match.encode()).hexdigest()[:8]}")


class ChunkFolder:
    """Where a resumable run keeps its finished chunks: ``run.json`` (what the run is) and one
    ``deals_<first>-<last>.json`` per chunk (its records, data only), each written whole as it completes.

    A run given a folder that holds chunks of the same run (same game, agents, seed, players, unit, env
    arguments and agent files) plays only the deals not saved yet; a folder of another run is refused.
    ``deals`` is not part of the identity: a run with more deals keeps the first ones.
    """

    def __init__(self, path: str | Path, config: EvalConfig):
        self.path = Path(path)
        self.identity = {"game": config.game, "agents": list(config.agents), "seed": config.seed,
                         "num_players": config.num_players, "unit": config.unit, "env_kwargs": config.env_kwargs,
                         "files": file_digests(spec_of(a) for a in config.agents)}

    def load(self) -> dict[int, list[Record]]:
        """The saved records by deal; writes run.json in a new folder, refuses a folder of another run."""
        check_writable(self.path, "--chunks")
        marker = self.path / "run.json"
        if not marker.exists():
            if any(self.path.glob("deals_*.json")):
                raise ValueError(f"--chunks {self.path}: holds chunks but no run.json; give an empty folder")
            marker.write_text(json.dumps(self.identity, indent=1) + "\n")
            return {}
        try:
            saved = json.loads(marker.read_text())
        except ValueError:
            saved = None
        if saved != json.loads(json.dumps(self.identity)):
            raise ValueError(f"--chunks {self.path}: holds chunks of another run ({marker} differs from this "
                             "run's game, agents, seed, players, unit, env arguments or agent files); "
                             "give another folder")
        records: dict[int, list[Record]] = {}
        for file in sorted(self.path.glob("deals_*.json")):
            try:
                data = json.loads(file.read_text())
                chunk = {int(deal): [Record(**r) for r in data["records"] if r["deal"] == deal]
                         for deal in data["deals"]}
            except (ValueError, KeyError, TypeError) as error:
                raise ValueError(f"--chunks {self.path}: cannot read {file.name} ({error}); delete it to play "
                                 "its deals again") from None
            records.update(chunk)
        return records

    def save(self, deals: list[int], records: list[Record]) -> None:
        target = self.path / f"deals_{deals[0]:07d}-{deals[-1]:07d}.json"
        partial = target.with_name(f".{target.name}.partial")
        partial.write_text(json.dumps({"deals": deals, "records": [asdict(r) for r in records]}))
        partial.replace(target)


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, enabled: bool, desc: str, unit: str = "deal"):
    """A tqdm bar on stderr, or one that does nothing (disabled, or tqdm not installed)."""
    if not enabled:
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoBar()
    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr)


# ----------------------------------------------------------------- summary
def summarize(config: EvalConfig, records: list[Record]) -> dict[str, Any]:
    """Per agent: episodes, wins, win rate with its 95% CI, mean points with CI, forfeits; a rating table;
    each agent's time per decision (under ``timing``, the one part that differs between two runs).

    A forfeited episode counts in the win rates (lost by the agent that gave it up) but not in the points or
    the rating, since it ended before its points were scored.
    """
    wins: dict[str, float] = defaultdict(float)
    episodes: dict[str, int] = defaultdict(int)
    points: dict[str, list[float]] = defaultdict(list)
    forfeits: dict[str, list[str]] = defaultdict(list)
    clock: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])  # seconds, decisions, slowest
    rating = Rating()
    truncated = 0
    decisions = 0
    for rec in records:
        truncated += rec.truncated
        decisions += rec.decisions
        names = sorted(set(rec.seats))
        for name in names:
            seats = [s for s, a in enumerate(rec.seats) if a == name]
            episodes[name] += 1
            wins[name] += any(s in rec.winner_seats for s in seats)
            if rec.forfeit_seat in seats:
                forfeits[name].append(rec.forfeit_reason)
            if rec.forfeit_seat is None:
                points[name].append(sum(rec.points[s] for s in seats) / len(seats))
            for s in seats if rec.seconds else ():
                clock[name][0] += rec.seconds[s]
                clock[name][1] += rec.seat_decisions[s]
                clock[name][2] = max(clock[name][2], rec.max_seconds[s])
        if len(names) > 1 and not rec.truncated and rec.forfeit_seat is None:
            teams = [[n] for n in names]
            won = [any(rec.seats[s] == n for s in rec.winner_seats) for n in names]
            spec = game_spec(config.game)
            if not spec.partnerships:  # rank the others by points, in the game's direction
                order = sorted((points[n][-1] for n in names), reverse=not spec.scoring.fewer_points_better)
                ranks = [0 if w else 1 + order.index(points[n][-1]) for n, w in zip(names, won, strict=True)]
            else:
                ranks = [0 if w else 1 for w in won]
            rating.rate(teams, ranks)
    table = []
    for name in sorted(episodes, key=lambda n: -wins[n] / episodes[n]):
        n = episodes[name]
        low, high = wilson_interval(wins[name], n)
        mean, plow, phigh = mean_interval(points[name]) if points[name] else (math.nan,) * 3
        row = {
            "agent": name,
            "episodes": n,
            "wins": wins[name],
            "win_rate": wins[name] / n,
            "win_rate_ci95": [low, high],
            "mean_points": mean,
            "mean_points_ci95": [plow, phigh],
            "forfeits": len(forfeits[name]),
        }
        if forfeits[name]:
            row["forfeit_reasons"] = sorted(set(forfeits[name]))[:5]
        table.append(row)
    result: dict[str, Any] = {
        "config": asdict(config),
        "episodes": len(records),
        "decisions": decisions,
        "truncated": truncated,
        "points_meaning": _points_meaning(config.game),
        "table": table,
        "timing": [{"agent": name, "decisions": int(decided), "ms_per_decision": 1000 * spent / max(decided, 1),
                    "max_ms": 1000 * slowest} for name, (spent, decided, slowest) in sorted(clock.items())],
    }
    if len(episodes) > 2:
        result["rating"] = {
            "kind": rating.kind,
            "fitted_on": rating_meaning(config.game, rating.kind),
            "table": [{"agent": p, "rating": r, "sigma": s} for p, r, s in rating.table()],
        }
    return result


def rating_meaning(game: str, kind: str) -> str:
    """What the rating is fitted on, printed under its table: why it may order agents unlike the win rate."""
    order = game_spec(game).scoring.rating_order
    how = ("updated once per episode in the order played (not a fit over all of them at once): a result counts "
           "more early than late and by whom it was against, so it can rank agents unlike the win rate; "
           "with every pair on the same deals the win rate is the fairer ranking")
    shown = "mu - 3 sigma" if "OpenSkill" in kind else "Elo, no sigma"
    return f"{kind} ({shown}) from {order}; {how}"


def short_label(spec: str) -> str:
    """A label that fits a table column: a ``path=`` value is cut to its folder and file stem.

    ``policy:path=/home/me/runs/quick-1/policy.npz`` -> ``policy:quick-1/policy``; other specs as they are.
    """
    name, sep, params = spec.partition(":")
    if not sep or "path=" not in params:
        return spec
    parts = []
    for item in params.split(","):
        key, eq, value = item.partition("=")
        if key.strip() == "path" and eq:
            path = Path(value.split("#", 1)[0])
            tail = value.partition("#")[2]
            short = f"{path.parent.name}/{path.stem}" if path.parent.name else path.stem
            parts.append(short + (f"#{tail}" if tail else ""))
        else:
            parts.append(item)
    return f"{name}:{','.join(parts)}"


def display_labels(names: Sequence[str]) -> dict[str, str]:
    """Short labels for the table and chart (the full specs stay in results.json/csv); unique or left whole."""
    short = {n: short_label(n) for n in names}
    if len(set(short.values())) < len(short):
        return {n: n for n in names}
    return short


def _points_meaning(game: str) -> str:
    """What the points column holds, with the way that is better (a reader cannot guess it: in Rang, fewer)."""
    scoring = game_spec(game).scoring
    meaning = scoring.points_meaning
    if "better" in meaning:
        return meaning
    return f"{meaning} ({'lower' if scoring.fewer_points_better else 'higher'} is better)"


def format_table(result: dict[str, Any]) -> str:
    cfg = result["config"]
    labels = display_labels([row["agent"] for row in result["table"]])
    width = max([28, *(len(x) + 1 for x in labels.values())])
    lines = [
        f"{cfg['game']}: {cfg['deals']} deals x {result['episodes'] // max(cfg['deals'], 1)} arrangements "
        f"= {result['episodes']} episodes ({result['truncated']} truncated), seed {cfg['seed']}",
        f"{'agent':<{width}} {'episodes':>8} {'win rate':>9} {'95% CI':>17} {'mean points':>12} {'95% CI':>19}",
    ]
    for row in result["table"]:
        lo, hi = row["win_rate_ci95"]
        plo, phi = row["mean_points_ci95"]
        lines.append(
            f"{labels[row['agent']]:<{width}} {row['episodes']:>8} {row['win_rate']:>9.3f} [{lo:.3f}, {hi:.3f}]"
            f" {row['mean_points']:>12.3f} [{plo:>8.3f}, {phi:>8.3f}]"
        )
    if "rating" in result:
        rating = result["rating"]
        lines.append(f"rating ({rating['kind']}):")
        for row in rating["table"]:
            sigma = f"  sigma {row['sigma']:.2f}" if "OpenSkill" in rating["kind"] else ""
            lines.append(f"  {labels.get(row['agent'], row['agent']):<{width - 2}} {row['rating']:>8.2f}{sigma}")
        if "fitted_on" in rating:
            lines.append(f"  rating: {rating['fitted_on']}")
    lines += forfeit_lines(result["table"], labels)
    if result.get("timing"):
        lines.append("time per decision: " + ", ".join(
            f"{labels.get(row['agent'], row['agent'])} {row['ms_per_decision']:.3g} ms (slowest {row['max_ms']:.3g})"
            for row in result["timing"]))
    shortened = {full: short for full, short in labels.items() if full != short}
    for full, short in shortened.items():
        lines.append(f"{short} = {full}")
    return "\n".join(lines)


def forfeit_lines(rows: list[dict[str, Any]], labels: dict[str, str]) -> list[str]:
    """One line per agent that forfeited episodes: how many, and why (the first distinct reasons)."""
    return [f"forfeits: {labels.get(row['agent'], row['agent'])} gave up {row['forfeits']} episode(s): "
            + "; ".join(row["forfeit_reasons"]) for row in rows if row.get("forfeits")]


def write_outputs(result: dict[str, Any], records: list[Record], out: str | Path) -> list[str]:
    """results.json (summary and every episode), results.csv (the table), results.png (bar chart, with
    matplotlib); the names of the files written, so the caller never reports a chart it could not draw."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "results.json", "w") as f:
        json.dump({**result, "records": [asdict(r) for r in records]}, f, indent=1)
    with open(folder / "results.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["agent", "episodes", "wins", "win_rate", "ci95_low", "ci95_high", "mean_points"])
        for row in result["table"]:
            writer.writerow(
                [row["agent"], row["episodes"], row["wins"], f"{row['win_rate']:.4f}",
                 f"{row['win_rate_ci95'][0]:.4f}", f"{row['win_rate_ci95'][1]:.4f}", f"{row['mean_points']:.4f}"]
            )
    written = ["results.json", "results.csv"]
    if plot_win_rates(result, folder / "results.png"):
        written.append("results.png")
    return written


def error_bars(rows: Sequence[dict[str, Any]]) -> list[list[float]]:
    """matplotlib's ``yerr`` of win rates with their 95% intervals: the distances down and up, never negative
    (at 0% or 100% a bound may differ from the rate by a rounding error, which matplotlib refuses)."""
    return [[max(0.0, r["win_rate"] - r["win_rate_ci95"][0]) for r in rows],
            [max(0.0, r["win_rate_ci95"][1] - r["win_rate"]) for r in rows]]


def plot_win_rates(result: dict[str, Any], path: Path, title: str | None = None, par: float | None = None) -> bool:
    """A bar per table row with its 95% CI; False (nothing written) without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = result["table"]
    names = list(display_labels([r["agent"] for r in rows]).values())
    rates = [r["win_rate"] for r in rows]
    fig, ax = plt.subplots(figsize=(max(4, 1.3 * len(rows) + 2), 3.5))
    ax.bar(range(len(rows)), rates, yerr=error_bars(rows), capsize=6, color="#4477aa")
    ax.set_xticks(range(len(rows)), names, rotation=20, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("win rate (95% CI)")
    cfg = result["config"]
    if par is not None:
        ax.axhline(par, color="#999999", linestyle="--", linewidth=1)
    ax.set_title(" ".join(part for part in (f"{cfg['game']}:", title, f"{result['episodes']} episodes") if part))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def evaluate(config: EvalConfig, objects: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run an evaluation; writes the files when ``config.out`` is set."""
    records = run_records(config, objects)
    result = summarize(config, records)
    if config.out:
        result["files"] = write_outputs(result, records, config.out)
    return result


def evaluate_agents(agents: Sequence[Any], game: str | None = None, **settings: Any) -> dict[str, Any]:
    """Evaluate a line-up of agent objects and specs, as ``cardenvs eval`` does; the same result it prints.

    ``agents``: specs (``"rules_strong"``) and objects: an :class:`~cardenvs.agents.base.Agent`, any object
    with ``act(observation) -> int``, a function ``observation -> int``, or a class (called per seat as an
    outside factory). An object stands in the tables under its ``name`` attribute (else its class or function
    name); each seat gets its own copy. ``settings`` are the fields of :class:`EvalConfig` (``deals``,
    ``seed``, ``workers``, ``ray_address``, ``chunks``, ``num_players``, ``unit``, ``gauntlet``, ``out``, ...); the
    progress bar is off unless asked for. ``format_table(result)`` (or ``format_gauntlet``) prints it.

        result = evaluate_agents([MyAgent(), "rules_strong"], game="ring_rang", deals=200, workers=2)
        print(format_table(result))
    """
    settings.setdefault("progress", False)
    game = canonical_game(game or default_game())
    specs, objects = object_labels(agents, game)
    config = EvalConfig(game=game, agents=specs, **settings)
    if config.out:
        check_writable(config.out)
    if config.gauntlet:
        result = run_gauntlet(config, objects)
        if config.out:
            result["files"] = write_gauntlet(result, config.out)
        return result
    return evaluate(config, objects)


def object_labels(agents: Sequence[Any], game: str) -> tuple[list[str], dict[str, Any]]:
    """The line-up as labels (a spec stays itself) and the objects by their label; a ValueError for a label
    that would be mistaken for an agent spec or another object."""
    if isinstance(agents, (str, bytes)) or not isinstance(agents, Sequence):
        raise ValueError(f"agents: expected a list of agent specs and objects, got {agents!r:.80}")
    specs: list[str] = []
    objects: dict[str, Any] = {}
    for agent in agents:
        if isinstance(agent, str):
            specs.append(agent)
            continue
        label = getattr(agent, "name", None) if not inspect.isclass(agent) else None
        if not isinstance(label, str) or label in ("agent", ""):
            label = getattr(agent, "__name__", None) or type(agent).__name__
        if ":" in label or "#" in label or label in available_agents(canonical_game(game)):
            # a function named ``policy`` must not be read as the agent spec ``policy``: it stands in the tables
            # under a label no spec can have (checked here, before any work)
            label = f"{label.replace(':', '_').replace('#', '_')} (object)"
        if label in objects and objects[label] is not agent:
            raise ValueError(f"two agent objects are both labelled {label!r}; give them distinct name attributes")
        objects[label] = agent
        specs.append(label)
    return specs, objects


def check_writable(folder: str | Path, option: str = "--out") -> None:
    """Create ``folder`` and write a probe file there now, so an unwritable folder fails before any work."""
    path = Path(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
        probe = path / ".cardenvs-write-check"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        raise ValueError(f"{option} {folder}: cannot write there ({error.strerror or error}); "
                         "choose a folder you can write to") from None


# ---------------------------------------------------------------- gauntlet
def run_gauntlet(config: EvalConfig, objects: dict[str, Any] | None = None) -> dict[str, Any]:
    """``agents[0]`` against each gauntlet agent (two-agent line-ups, same deals); each row and the worst.

    The gauntlet (:func:`cardenvs.agents.registry.gauntlet_agents`) is kept out of every training config,
    so these are match-ups the candidate never trained on; a policy is judged by its worst one.
    """
    config.validate(objects=objects or {})
    candidate = config.agents[0]
    rows = []
    for opponent in gauntlet_agents(config.game):
        single = replace(config, agents=[candidate, opponent], gauntlet=False, out=None,
                         chunks=chunk_subfolder(config.chunks, opponent))
        table = {row["agent"]: row for row in summarize(single, run_records(single, objects))["table"]}
        mine_label, label = agent_labels(single.agents)  # "#0"/"#1" added when the candidate is that agent
        mine, theirs = table[mine_label], table[label]
        rows.append({"opponent": label, "episodes": mine["episodes"], "win_rate": mine["win_rate"],
                     "win_rate_ci95": mine["win_rate_ci95"], "mean_points": mine["mean_points"],
                     "opponent_mean_points": theirs["mean_points"], "forfeits": mine["forfeits"]})
    worst = min(rows, key=lambda r: r["win_rate"])
    return {"config": asdict(config), "candidate": candidate, "rows": rows, "worst": worst,
            "points_meaning": _points_meaning(config.game)}


def format_gauntlet(result: dict[str, Any]) -> str:
    cfg = result["config"]
    lines = [f"{cfg['game']} gauntlet: {result['candidate']} vs each, {cfg['deals']} deals each, seed {cfg['seed']}",
             f"{'opponent':<22} {'episodes':>8} {'win rate':>9} {'95% CI':>17} {'points':>8} {'theirs':>8}"]
    for row in result["rows"]:
        lo, hi = row["win_rate_ci95"]
        lines.append(f"{row['opponent']:<22} {row['episodes']:>8} {row['win_rate']:>9.3f} [{lo:.3f}, {hi:.3f}]"
                     f" {row['mean_points']:>8.3f} {row['opponent_mean_points']:>8.3f}")
    worst = result["worst"]
    lo, hi = worst["win_rate_ci95"]
    verdict = "above" if lo > 0.5 else ("below" if hi < 0.5 else "not clear of")
    lines.append(f"worst: vs {worst['opponent']} {worst['win_rate']:.3f} [{lo:.3f}, {hi:.3f}] ({verdict} 0.5)")
    return "\n".join(lines)


def write_gauntlet(result: dict[str, Any], out: str | Path) -> list[str]:
    """gauntlet.json, gauntlet.csv and (with matplotlib) gauntlet.png; the names of the files written."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gauntlet.json").write_text(json.dumps(result, indent=1))
    with open(folder / "gauntlet.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["opponent", "episodes", "win_rate", "ci95_low", "ci95_high", "mean_points",
                         "opponent_mean_points"])
        for row in result["rows"]:
            writer.writerow([row["opponent"], row["episodes"], f"{row['win_rate']:.4f}",
                             f"{row['win_rate_ci95'][0]:.4f}", f"{row['win_rate_ci95'][1]:.4f}",
                             f"{row['mean_points']:.4f}", f"{row['opponent_mean_points']:.4f}"])
    written = ["gauntlet.json", "gauntlet.csv"]
    table = {"config": result["config"], "episodes": sum(r["episodes"] for r in result["rows"]),
             "table": [{"agent": f"vs {r['opponent']}", **r} for r in result["rows"]]}
    if plot_win_rates(table, folder / "gauntlet.png", title=f"{result['candidate']} vs the gauntlet", par=0.5):
        written.append("gauntlet.png")
    return written


# --------------------------------------------------------------------- CLI
def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> EvalConfig:
    """An EvalConfig from YAML; unknown or ill-typed fields are errors that name the field."""
    data = read_yaml_mapping(path, "eval config")
    data = data.get("eval", data)
    data.update({k: v for k, v in (overrides or {}).items() if v is not None})
    return config_from_dict(data, f"eval config {path}", EvalConfig)


def build_parser(parser: argparse.ArgumentParser | None = None, game: str | None = None) -> argparse.ArgumentParser:
    """The options of ``cardenvs eval``; the help lists ``game``'s agents (None: every game's, grouped)."""
    d = EvalConfig()
    parser = parser or argparse.ArgumentParser(prog="cardenvs eval", description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="YAML file with the fields of EvalConfig (options given here override it)")
    parser.add_argument("--game", type=_game_arg, metavar="GAME", help=f"{games_help()} (default {d.game})")
    parser.add_argument("--agents", nargs="+", metavar="SPEC",
                        help="agent specs, e.g. random rules_strong; one agent plays itself as X#0 vs X#1 "
                             f"(default {' '.join(d.agents)}). Agents of {agents_help(game)}; "
                             f"or {OUTSIDE_FORMS} (docs/benchmark.md)")
    parser.add_argument("--deals", type=int,
                        help=f"deals, each played in every seat arrangement of the line-up (default {d.deals})")
    parser.add_argument("--seed", type=int,
                        help=f"the deals are a function of (seed, deal index); >= 0 (default {d.seed})")
    parser.add_argument("--num-players", type=int, dest="num_players",
                        help=f"where the seats vary ({players_help()})")
    parser.add_argument("--unit", choices=["deal", "game"],
                        help=f"deal: one round/deal per episode; game: whole games/matches (default {d.unit})")
    parser.add_argument("--workers", type=int,
                        help=f"processes, capped at the deals and the CPU cores (default {d.workers})")
    parser.add_argument("--ray-address", dest="ray_address", metavar="ADDRESS|auto|local",
                        help="run the chunks of deals as Ray tasks on a cluster instead of --workers processes: "
                             "its address, auto (the cluster `ray start` made here) or local (a Ray started "
                             f"for this run); needs {RAY_EXTRA} (docs/scale_out.md)")
    parser.add_argument("--chunks", metavar="FOLDER",
                        help="save each chunk of deals there as it completes; run again with the same folder to "
                             "play only the deals not saved yet (a stopped or preempted run resumes)")
    parser.add_argument("--out", help="folder for results.json/csv/png (default: print only; a folder that holds "
                                      "results.json is refused unless --overwrite)")
    parser.add_argument("--overwrite", action="store_true", help="replace the results an earlier run left in --out")
    parser.add_argument("--no-progress", action="store_false", dest="progress", default=None,
                        help="no progress bar")
    parser.add_argument("--gauntlet", action="store_true", default=None,
                        help="play the one agent of --agents against every gauntlet agent (evaluation-only "
                             "opponents no training config names); reports each match-up and the worst")
    return parser


def agents_help(game: str | None = None) -> str:
    """The agent names for the help, the installed packages' (entry points) included: ``game``'s ("rang:
    random, ..."), or every game's grouped ("every game: ...; rang also: ...; ring_rang also: ...")."""
    games = [game] if game else list(GAME_NAMES)
    names = {g: available_agents(g) for g in games}
    if len(games) == 1:
        return f"{games[0]}: {', '.join(names[games[0]])}"
    shared = [name for name in names[games[0]] if all(name in names[g] for g in games)]
    extra = [f"{g} also: {', '.join(n for n in names[g] if n not in shared)}" for g in games
             if any(n not in shared for n in names[g])]
    return "; ".join([f"every game: {', '.join(shared)}", *extra])


def _help_game(argv: Sequence[str] | None) -> str | None:
    """The game ``--game`` names in ``argv`` (for the help's agent list), or None (none, or not a game)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--game")
    try:
        given = pre.parse_known_args(list(sys.argv[1:] if argv is None else argv))[0].game
        return canonical_game(given) if given else None
    except (ValueError, SystemExit):
        return None


def _game_arg(text: str) -> str:
    try:
        return canonical_game(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


MISSING_TRAIN_EXTRA = "pip install 'cardenvs[train]'"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser(game=_help_game(argv)).parse_args(argv)
    overrides = {k: v for k, v in vars(args).items() if k not in ("config", "overwrite")}
    try:
        if args.config:
            config = load_config(args.config, overrides)
        else:
            config = EvalConfig(**{k: v for k, v in overrides.items() if v is not None})
            config.validate()
        if config.out:
            check_writable(config.out)
            if (Path(config.out) / "results.json").exists() and not args.overwrite:
                raise ValueError(f"--out {config.out} already holds results.json (an earlier evaluation); choose "
                                 "another --out, or pass --overwrite to replace it")
    except (ValueError, TypeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    workers, capped = worker_count(config)
    if capped and not config.ray_address:
        print(f"note: {capped}", file=sys.stderr)
    if args.agents and len(args.agents) == 1 and not config.gauntlet:
        print(f"note: {config.agents[0]} plays itself, as {config.agents[0]}#0 and #1", file=sys.stderr)
    if "OpenSkill" not in Rating().kind and len(set(config.agents)) > 2:
        print("note: openskill is not installed, so the rating is Elo without sigma; pip install openskill for "
              f"OpenSkill (part of {MISSING_TRAIN_EXTRA}, which a [ray] venv cannot take)", file=sys.stderr)
    try:
        if config.gauntlet:
            result = run_gauntlet(config)
            print(format_gauntlet(result))
            if config.out:
                written = write_gauntlet(result, config.out)
                print(f"wrote {', '.join(f'{config.out}/{name}' for name in written)}")
                _say_no_chart(written, "gauntlet.png")
            return 0
        result = evaluate(config)
    except ValueError as error:  # what building the agents could not foresee, raised in a worker or here
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_table(result))
    if config.out:
        print(f"wrote {', '.join(f'{config.out}/{name}' for name in result['files'])}")
        _say_no_chart(result["files"], "results.png")
    return 0


def _say_no_chart(written: list[str], chart: str) -> None:
    if chart not in written:
        print(f"note: {chart} not drawn: matplotlib is not installed (pip install matplotlib; part of "
              f"{MISSING_TRAIN_EXTRA}, which a [ray] venv cannot take)", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
