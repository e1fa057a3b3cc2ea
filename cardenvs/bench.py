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


RANG_PLAYERS = (2, 4, 7)  # the Rang table sizes measured
# env() and engine, RING RANG and each Rang size, and the loops before issue 36 of RING RANG and Rang 4p
OUR_LOOP_COUNT = 2 * (1 + len(RANG_PLAYERS)) + 2


def paired(loops: dict[str, Callable[[int], Callable[[float], tuple[int, int]]]], seconds: float,
           slices: int = 6) -> dict[str, dict[str, float]]:
    """Time loops in turns of ``seconds / slices`` each (``loops[name](seed)`` makes one), so that a load that
    comes and goes on a shared machine falls on all of them alike; each gets ``seconds`` in all."""
    totals = {name: {"decisions": 0, "games": 0, "seconds": 0.0} for name in loops}
    for turn in range(slices):
        for name, make in loops.items():
            result = _timed(make(turn * 100_000), seconds / slices)
            for key in totals[name]:
                totals[name][key] += result[key]
    return {name: dict(t, decisions_per_s=t["decisions"] / t["seconds"]) for name, t in totals.items()}


def our_loops(seconds: float) -> list[dict[str, Any]]:
    """Our envs and engines; RING RANG's and Rang 4p's ``env()`` in turns with their loop before issue 36."""
    from cardenvs import rang_v0, ring_rang_v0
    from cardenvs.benchmarks import aec_before
    from cardenvs.rang.engine import RangGame
    from cardenvs.ring_rang.engine import RingRangGame

    def env_rows(game: str, name: str, make: Callable[[], Any], make_before: Callable[[], Any]) -> list[dict]:
        timed = paired({"now": lambda seed: aec_loop(make, seed), "before": lambda seed: aec_loop(make_before, seed)},
                       seconds)
        speedup = timed["now"]["decisions_per_s"] / timed["before"]["decisions_per_s"]
        return [{"name": name, "interface": "AEC loop", "kind": "aec", "game": game, "speedup": speedup,
                 **timed["now"]},
                {"name": f"{name} before", "interface": "AEC loop as before issue 36 (reference)",
                 "kind": "aec_before", "game": game, **timed["before"]}]

    rows = env_rows("ring_rang", "RING RANG env()", ring_rang_v0.env, aec_before.ring_rang_env)
    for n in RANG_PLAYERS:
        if n == 4:
            rows += env_rows("rang4", "Rang 4p env()", lambda: rang_v0.env(num_players=4), aec_before.rang_env)
            continue
        rows.append({"name": f"Rang {n}p env()", "interface": "AEC loop", "kind": "aec", "game": f"rang{n}",
                     **_timed(aec_loop(lambda n=n: rang_v0.env(num_players=n)), seconds)})
    rows.append({"name": "RING RANG engine", "interface": "raw engine", "kind": "engine", "game": "ring_rang",
                 **_timed(engine_loop(lambda s: RingRangGame(np.random.default_rng(s))), seconds)})
    for n in RANG_PLAYERS:
        rows.append({"name": f"Rang {n}p engine", "interface": "raw engine", "kind": "engine", "game": f"rang{n}",
                     **_timed(engine_loop(lambda s, n=n: RangGame.new(n, np.random.default_rng(s))), seconds)})
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
    reference = next((r["decisions_per_s"] for r in rows if r.get("name") == "RING RANG env()"), None)
    lines = [f"{'env':<34} {'interface':<48} {'decisions/s':>12} {'/ RING RANG env()':>18}"]
    for row in rows:
        rate = row.get("decisions_per_s")
        if not rate:
            lines.append(f"{row['name']:<34} {row.get('interface', ''):<48} {'skipped':>12}  {row.get('skipped', '')}")
            continue
        ratio = f"{rate / reference:.2f}" if reference else ""
        lines.append(f"{row['name']:<34} {row.get('interface', ''):<48} {rate:>12,.0f} {ratio:>18}")
    speedups = [f"{row['name']} {row['speedup']:.2f}x" for row in rows if row.get("speedup")]
    if speedups:
        lines.append("env() / its loop before issue 36, timed in turns in this run: " + ", ".join(speedups))
    return "\n".join(lines)


def plot_rows(rows: list[dict[str, Any]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in rows if r.get("decisions_per_s")]
    colours = {"aec": "#4477aa", "aec_before": "#99bbdd", "engine": "#228833", "batched": "#66ccee", "peer": "#bbbbbb"}
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(shown) + 1.5))
    ax.barh(range(len(shown)), [r["decisions_per_s"] for r in shown], color=[colours[r["kind"]] for r in shown])
    ax.set_yticks(range(len(shown)), [f"{r['name']} ({r['interface']})" for r in shown], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("decisions per second (random legal play, whole games; log scale)")
    ax.set_title("cardenvs (blue: AEC, light: before issue 36, green: engine, cyan: batched) vs peers (grey), one run",
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
                        help="time of each measured loop (default 3); a run measures 8 loops of ours, 2 per batch "
                             "size and one per installed peer, about 20 x SECONDS in all (printed first)")
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
    loops = OUR_LOOP_COUNT + (0 if args.no_batched else 2 * len(args.sizes))
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
