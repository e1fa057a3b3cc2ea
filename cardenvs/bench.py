"""Speed benchmark: decisions per second of our envs, raw engines and peers, in one run.

Every loop plays whole games with uniformly random legal actions and counts
decisions only (never chance events). Ratios are to our AEC env of the same
kind measured in the same run, so a noisy machine cannot flatter us.

    python -m cardenvs.bench [--seconds 3] [--json bench.json] [--plot bench.png] [--no-peers]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cardenvs.core import Game


def _timed(loop: Callable[[float], tuple[int, int]], seconds: float) -> dict[str, float]:
    """Run ``loop(deadline)`` (returns decisions, games) and turn it into a rate."""
    start = time.perf_counter()
    decisions, games = loop(start + seconds)
    elapsed = time.perf_counter() - start
    return {"decisions_per_s": decisions / elapsed, "decisions": decisions, "games": games, "seconds": elapsed}


def aec_loop(make_env: Callable[[], Any], seed: int = 0) -> Callable[[float], tuple[int, int]]:
    """The PettingZoo loop through ``env()`` (wrappers included), with observations."""

    def loop(deadline: float) -> tuple[int, int]:
        env = make_env()
        pick = random.Random(seed).random
        decisions = games = 0
        while time.perf_counter() < deadline:
            env.reset(seed=seed + games)
            for _ in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                legal = obs["action_mask"].nonzero()[0]
                env.step(int(legal[int(pick() * len(legal))]))
                decisions += 1
            games += 1
        return decisions, games

    return loop


def engine_loop(new_game: Callable[[int], Game], seed: int = 0) -> Callable[[float], tuple[int, int]]:
    """The raw rules engine through the game API (cardenvs.core.Game): legal actions and step, no observation."""

    def loop(deadline: float) -> tuple[int, int]:
        pick = random.Random(seed).random
        decisions = games = 0
        while time.perf_counter() < deadline:
            game = new_game(seed + games)
            legal_actions, step, is_over = game.legal_actions, game.step, game.is_over
            while not is_over():
                legal = legal_actions()
                step(legal[int(pick() * len(legal))])
                decisions += 1
            games += 1
        return decisions, games

    return loop


def bench_players(spec: Any) -> tuple[int, ...]:
    """The table sizes measured of a game: its one size, or its fewest, default and a larger one (up to 7)."""
    if spec.fixed_players:
        return (spec.players[0],)
    return tuple(sorted({spec.players[0], spec.default_seats, min(7, spec.players[1])}))


def our_games() -> list[tuple[str, str, Callable[[], Any], Callable[[int], Game]]]:
    """(row name, game key, env maker, engine maker) of every game of the table at each size measured."""
    from cardenvs.games import GAMES

    games = []
    for spec in GAMES.values():
        for n in bench_players(spec):
            name, key = (spec.title, spec.name) if spec.fixed_players else (f"{spec.title} {n}p", f"{spec.name}{n}")
            raw = spec.make_raw_env(num_players=n)  # built once, outside the timed loop

            def new_game(seed: int, raw: Any = raw) -> Game:  # the engine as the env deals it (its reset's hook)
                return raw._make_game(np.random.default_rng(seed), {})

            games.append((name, key, lambda spec=spec, n=n: spec.make_env(num_players=n), new_game))
    return games


def our_loops(seconds: float) -> list[dict[str, Any]]:
    """Our envs (``env()``) and raw engines, every game of the table at each size measured."""
    games = our_games()
    rows = [{"name": f"{name} env()", "interface": "AEC loop", "kind": "aec", "game": key,
             **_timed(aec_loop(make_env), seconds)} for name, key, make_env, _ in games]
    rows += [{"name": f"{name} engine", "interface": "raw engine", "kind": "engine", "game": key,
              **_timed(engine_loop(new_game), seconds)} for name, key, _, new_game in games]
    return rows


def batched_loops(seconds: float, sizes: Sequence[int], threads: int, processes: int) -> list[dict[str, Any]]:
    """The batched torch envs; without torch one skipped row that says what to install (not silence)."""
    try:
        from cardenvs import vector
    except ImportError as error:  # torch is not installed
        return [{"name": "batched envs", "interface": "torch", "kind": "batched",
                 "skipped": f"{error.name or 'torch'} is not installed: pip install 'cardenvs[train]'"}]
    return vector.benchmark_rows(seconds, sizes, threads=threads, processes=processes)


def peer_loops(seconds: float, gin_python: str | None = None) -> list[dict[str, Any]]:
    try:
        from cardenvs.benchmarks.peers import measure_peers
    except ImportError:
        return []
    return [dict(row, name=row["peer"], kind="peer") for row in measure_peers(seconds, gin_python=gin_python)]


def format_rows(rows: list[dict[str, Any]]) -> str:
    first = next((r for r in rows if r.get("kind") == "aec" and r.get("decisions_per_s")), None)
    reference = first["decisions_per_s"] if first else None
    lines = [f"{'env':<34} {'interface':<48} {'decisions/s':>12} {'/ ' + (first or {}).get('name', ''):>18}"]
    for row in rows:
        rate = row.get("decisions_per_s")
        if not rate:
            lines.append(f"{row['name']:<34} {row.get('interface', ''):<48} {'skipped':>12}  {row.get('skipped', '')}")
            continue
        ratio = f"{rate / reference:.2f}" if reference else ""
        lines.append(f"{row['name']:<34} {row.get('interface', ''):<48} {rate:>12,.0f} {ratio:>18}")
    return "\n".join(lines)


def plot_rows(rows: list[dict[str, Any]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in rows if r.get("decisions_per_s")]
    colours = {"aec": "#4477aa", "engine": "#228833", "batched": "#66ccee", "peer": "#bbbbbb"}
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(shown) + 1.5))
    ax.barh(range(len(shown)), [r["decisions_per_s"] for r in shown], color=[colours[r["kind"]] for r in shown])
    ax.set_yticks(range(len(shown)), [f"{r['name']} ({r['interface']})" for r in shown], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("decisions per second (random legal play, whole games; log scale)")
    ax.set_title("cardenvs (blue: AEC, green: engine, cyan: batched) vs peers (grey), one run",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def check_options(args: argparse.Namespace) -> None:
    """Every option checked before the first loop runs (a bad --plot would otherwise fail after minutes)."""
    if args.seconds <= 0:
        raise ValueError(f"--seconds: expected a positive number, got {args.seconds}")
    for name in ("sizes", "threads", "processes"):
        values = getattr(args, name)
        if any(v < 1 for v in (values if isinstance(values, list) else [values])):
            raise ValueError(f"--{name}: expected ints >= 1, got {values}")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise ValueError("--plot needs matplotlib (not installed): pip install 'cardenvs[train]'")
    for option in ("json", "plot"):
        path = getattr(args, option)
        if path:
            if Path(path).is_dir():
                raise ValueError(f"--{option} {path}: is a folder; give a file name such as {Path(path) / 'bench.'}"
                                 f"{'json' if option == 'json' else 'png'}")
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                existed = Path(path).exists()
                with open(path, "a"):  # writable now, not only after every loop has run
                    pass
                if not existed:
                    Path(path).unlink()
            except OSError as error:
                raise ValueError(f"--{option} {path}: cannot write there ({error.strerror or error})") from None
    if args.gin_python and not Path(args.gin_python).is_file():
        raise ValueError(f"--gin-python {args.gin_python}: no such interpreter")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cardenvs bench", description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="time of each measured loop (default 3); a run measures 2 loops per game and table size "
                             "of ours, 2 per batch size and one per installed peer (the total is printed first)")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 256, 4096, 65536],
                        help="batch sizes of the batched envs (default 1 256 4096 65536)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per process for the batched envs")
    parser.add_argument("--processes", type=int, default=1,
                        help="processes sharing each batch (2 = one per core on the reference machine)")
    parser.add_argument("--no-peers", action="store_true", help="skip the peer envs even when installed")
    parser.add_argument("--no-batched", action="store_true")
    parser.add_argument("--gin-python", metavar="PYTHON", default=None,
                        help="a python with pettingzoo[classic]<=1.26 to measure gin_rummy_v4 in (also: "
                             "CARDENVS_BENCH_GIN_PYTHON)")
    parser.add_argument("--json", help="write the rows as JSON here (docs/bench.json is the README's: keep it)")
    parser.add_argument("--plot", help="write a log-scale bar chart here (PNG; needs matplotlib)")
    args = parser.parse_args(argv)
    try:
        check_options(args)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    loops = 2 * len(our_games()) + (0 if args.no_batched else 2 * len(args.sizes))
    peers = "" if args.no_peers else ", then the installed peers"
    print(f"bench: {loops} loops x {args.seconds:g} s{peers}: about {loops * args.seconds:.0f} s", file=sys.stderr)
    rows = our_loops(args.seconds)
    if not args.no_batched:
        rows += batched_loops(args.seconds, args.sizes, args.threads, args.processes)
    if not args.no_peers:
        rows += peer_loops(args.seconds, args.gin_python)
    print(format_rows(rows))
    meta = {"python": sys.version.split()[0], "machine": platform.machine(), "processor": platform.processor(),
            "seconds_per_loop": args.seconds}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
    if args.plot:
        plot_rows(rows, args.plot)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
