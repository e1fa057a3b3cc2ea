"""Batched torch envs: step B games at once (B in the thousands), the way pgx does with jax.

Each game that has one declares its class in its spec (``vector_env``: ``RingRangVectorEnv`` in
:mod:`cardenvs.ring_rang.vector`, ``RangVectorEnv`` in :mod:`cardenvs.rang.vector`), all with one API::

    env = RingRangVectorEnv(4096, episode="round", device="cpu", seed=0)
    obs, mask, info = env.reset()              # (B, obs) float32, (B, actions) bool, {"seat": (B,) int64}
    obs, mask, rewards, done, info = env.step(actions)   # rewards (B, players) float32, done (B,) bool

The observation is that of the seat to act in each game, exactly the AEC env's vector; finished
games restart at once with fresh decks from the env's torch Generator. The rules stay in the
engines: each batched module is bound to its engine by a differential test (tests/test_vector_*.py).

torch is needed here only (``import cardenvs`` works without it). The classes are imported
lazily, so one game's module missing or broken does not hide the other.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import torch

from cardenvs.vector.common import available_memory_bytes, random_legal_actions

__all__ = ["benchmark_rows", "random_legal_actions", "vector_games"]


def vector_games() -> dict[str, Any]:
    """name -> spec of every game of the table that declares a batched engine."""
    from cardenvs.games import GAMES

    return {name: spec for name, spec in GAMES.items() if spec.has_vector_env}


def __getattr__(name: str) -> Any:
    """The batched env classes by their names (``from cardenvs.vector import RingRangVectorEnv``), lazily."""
    for spec in vector_games().values():
        if spec.vector_env.rpartition(":")[2] == name:
            return spec.vector_env_class()
    raise AttributeError(f"module 'cardenvs.vector' has no attribute {name!r}")


def _benchmarks() -> list[tuple[str, str, str, dict[str, Any]]]:
    """(row name prefix, game key, game, constructor keywords) of every benchmarked batched env."""
    rows = []
    for name, spec in vector_games().items():
        if spec.fixed_players:
            rows.append((spec.title, name, name, {"episode": spec.train_episode}))
        else:
            n = spec.default_seats
            rows.append((f"{spec.title} {n}p", f"{name}{n}", name, {"num_players": n}))
    return rows


def _env_class(game: str) -> type | None:
    try:
        return vector_games()[game].vector_env_class()
    except (ImportError, AttributeError):
        return None


def time_random_play(make_env: Callable[[], Any], seconds: float, seed: int = 0) -> dict[str, Any]:
    """Random legal play (uniform over each game's legal actions) until ``seconds`` pass.

    Counts one decision per game per step (every game decides each step) and the games finished.
    """
    env = make_env()
    generator = torch.Generator(device=env.device).manual_seed(seed)
    _, mask, _ = env.reset(seed=seed)
    finished = torch.zeros((), dtype=torch.int64, device=env.device)
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for _ in range(8):  # check the clock every few steps only
            _, mask, _, done, _ = env.step(random_legal_actions(mask, generator))
            finished += done.sum()
            steps += 1
    if env.device.type == "cuda":
        torch.cuda.synchronize(env.device)
    elapsed = time.perf_counter() - start
    decisions = steps * env.batch_size
    return {"decisions_per_s": decisions / elapsed, "decisions": decisions, "games": int(finished),
            "seconds": elapsed, "bytes_per_game": env.memory_bytes_per_game()}


def _timed_in_process(args: tuple[str, int, str, dict[str, Any], float, int, int]) -> dict[str, Any]:
    """Worker of :func:`benchmark_rows`: time one env in this process with ``threads`` torch threads."""
    game, size, device, kwargs, seconds, threads, seed = args
    torch.set_num_threads(threads)
    cls = _env_class(game)
    return time_random_play(lambda: cls(size, device=device, seed=seed, **kwargs), seconds, seed=seed)


def benchmark_rows(
    seconds: float, sizes: Sequence[int], device: str = "cpu", threads: int = 1, processes: int = 1
) -> list[dict[str, Any]]:
    """One row per available batched game and batch size (``cardenvs.bench`` prints them).

    ``processes`` > 1 splits each batch over that many processes (one per core, ``threads``
    torch threads each) stepping at the same time; their rates add up. A size whose arrays
    would not fit comfortably in the free memory is skipped with a reason.
    """
    import multiprocessing

    rows: list[dict[str, Any]] = []
    for title, key, game, kwargs in _benchmarks():
        cls = _env_class(game)
        if cls is None:
            continue
        bytes_per_game = cls(1, device=device, seed=0, **kwargs).memory_bytes_per_game()
        for size in sizes:
            parts = max(1, min(processes, size)) if device == "cpu" else 1
            where = f"{parts} procs x {threads} thread" if parts > 1 else f"{threads} thread"
            row = {"name": f"{title} batched B={size}", "interface": f"batched torch {device} ({where})",
                   "kind": "batched", "game": key}
            free = available_memory_bytes(device)
            # Room for the state, its step temporaries and the returned tensors.
            if free is not None and 4 * bytes_per_game * size > free:
                rows.append(dict(row, skipped=f"needs ~{4 * bytes_per_game * size / 2**30:.1f} GiB, "
                                              f"{free / 2**30:.1f} GiB free"))
                continue
            jobs = [(game, size // parts + (i < size % parts), device, kwargs, seconds, threads, i)
                    for i in range(parts)]
            try:
                if parts == 1:
                    results = [_timed_in_process(jobs[0])]
                else:
                    with multiprocessing.get_context("spawn").Pool(parts) as pool:
                        results = pool.map(_timed_in_process, jobs)
            except (MemoryError, torch.OutOfMemoryError) as error:
                rows.append(dict(row, skipped=f"out of memory: {error}"[:80]))
                continue
            rows.append(dict(row, decisions_per_s=sum(r["decisions_per_s"] for r in results),
                             decisions=sum(r["decisions"] for r in results), games=sum(r["games"] for r in results),
                             seconds=max(r["seconds"] for r in results), bytes_per_game=results[0]["bytes_per_game"]))
    return rows
