"""Throughput of peer card-game environments, for comparison with cardenvs.

Each loop plays whole games with uniformly random legal actions and counts only
decisions taken by players: chance events (deals, draws) and the dead steps a
PettingZoo AEC env wants after termination are never counted, so every figure
means the same thing -- decisions per second of wall time.

The peers come with the optional extra ``pip install 'cardenvs[bench]'``; any
peer whose package is missing (or that fails) is reported as skipped with a
reason rather than aborting the run.  All peer imports happen inside the
functions, so this module imports with none of them installed.  It also uses
nothing but the standard library at import time, so another interpreter can run
this file by path (``--worker``) -- that is how ``gin_rummy_v4``, removed in
PettingZoo 1.27, is measured from a separate venv that has PettingZoo 1.26.

    python -m cardenvs.benchmarks.peers [--seconds S] [--json out.json]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

GIN_PYTHON_ENV = "CARDENVS_BENCH_GIN_PYTHON"
"""Path of a Python interpreter with ``pettingzoo[classic]<=1.26`` (for gin_rummy_v4)."""

PGX_DDS_ENV = "CARDENVS_BENCH_PGX_DDS"
"""Path of pgx's ``dds_results_10M.npy`` (pgx's bridge_bidding cannot run without it)."""

PGX_BATCH = 4096


class PeerUnavailable(RuntimeError):
    """A peer cannot run here (package or data missing); the message is the skip reason."""


class PeerResult(NamedTuple):
    decisions_per_s: float
    games: int
    decisions: int
    seconds: float


class _Timer:
    """Wall clock for one loop: a game begun before the deadline is played to its end."""

    def __init__(self, seconds: float) -> None:
        self.start = time.perf_counter()
        self.deadline = self.start + seconds

    def expired(self) -> bool:
        return time.perf_counter() >= self.deadline

    def result(self, decisions: int, games: int) -> PeerResult:
        elapsed = time.perf_counter() - self.start
        return PeerResult(decisions / elapsed, games, decisions, elapsed)


@contextmanager
def _quiet() -> Iterator[None]:
    # Peers warn on import (deprecated creation API, gym/gymnasium notices); the table is what matters.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# ---------------------------------------------------------------- generic loops


def _aec_loop(env: Any, seconds: float, seed: int) -> PeerResult:
    """The standard PettingZoo AEC loop; the legal mask comes from obs or info, whichever the env uses."""
    import numpy as np

    rng = np.random.default_rng(seed)
    decisions = games = 0
    timer = _Timer(seconds)
    while not timer.expired():
        env.reset(seed=seed if games == 0 else None)  # re-seeding every game costs ~10x a reset in some peers
        for _agent in env.agent_iter():
            obs, _reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None
            else:
                mask = obs["action_mask"] if isinstance(obs, dict) and "action_mask" in obs else info["action_mask"]
                legal = np.flatnonzero(mask)
                action = int(legal[rng.integers(len(legal))])
                decisions += 1
            env.step(action)
        games += 1
    env.close()
    return timer.result(decisions, games)


def _pettingzoo_classic(env_id: str) -> Any:
    """Create a classic env through its own ``env()`` (wrappers included), as users do."""
    import pettingzoo

    with _quiet():
        if hasattr(pettingzoo, "make"):  # PettingZoo >= 1.27: the registry calls the same module's env()
            from pettingzoo.env_registry.exceptions import FailedToImport, NameNotFound

            try:
                return pettingzoo.make("aec", f"classic/{env_id}")
            except NameNotFound as exc:
                raise PeerUnavailable(f"{env_id} is not in pettingzoo {pettingzoo.__version__}") from exc
            except FailedToImport as exc:  # its optional deps (rlcard, open_spiel, ...) are missing
                cause = exc.__cause__
                raise PeerUnavailable(f"{env_id}: {cause or exc} (pip install 'cardenvs[bench]')") from exc
        try:
            module = importlib.import_module(f"pettingzoo.classic.{env_id}")
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("pettingzoo.classic"):
                raise PeerUnavailable(f"{env_id} is not in pettingzoo {pettingzoo.__version__}") from exc
            raise
        return module.env()


def _pyspiel_loop(game_name: str, seconds: float, seed: int) -> PeerResult:
    """OpenSpiel's C++ game driven from Python, building the acting player's observation tensor each decision."""
    import pyspiel

    rng = random.Random(seed)
    game = pyspiel.load_game(game_name)
    decisions = games = 0
    timer = _Timer(seconds)
    while not timer.expired():
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():  # deals and draws: sampled, never counted
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(rng.choices(outcomes, probs)[0])
                continue
            player = state.current_player()
            if player < 0:
                raise RuntimeError(f"{game_name}: simultaneous nodes are not supported by this loop")
            state.observation_tensor(player)
            state.apply_action(rng.choice(state.legal_actions()))
            decisions += 1
        games += 1
    return timer.result(decisions, games)


def _rlcard_loop(env_id: str, seconds: float, seed: int) -> PeerResult:
    """RLCard's own API (no PettingZoo): reset, then step with a random key of the state's legal actions."""
    with _quiet():
        import rlcard

        env = rlcard.make(env_id, config={"seed": seed})
    rng = random.Random(seed)
    decisions = games = 0
    timer = _Timer(seconds)
    while not timer.expired():
        state, _player = env.reset()
        while not env.is_over():
            state, _player = env.step(rng.choice(list(state["legal_actions"])))
            decisions += 1
        games += 1
    return timer.result(decisions, games)


def _pgx_loop(env: Any, seconds: float, seed: int, batch: int = PGX_BATCH) -> PeerResult:
    """pgx on JAX's CPU backend: ``batch`` games in lockstep until all end; compilation is not timed.

    A decision is a live (not yet finished) game taking an action in one batched step.
    """
    import jax
    import jax.numpy as jnp

    init = jax.jit(jax.vmap(env.init))
    step = jax.jit(jax.vmap(env.step))

    @jax.jit
    def act(state: Any, key: Any) -> tuple[Any, Any]:
        k_act, k_step = jax.random.split(key)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        action = jax.random.categorical(k_act, logits, axis=-1)
        live = ~(state.terminated | state.truncated)
        state = step(state, action, jax.random.split(k_step, batch))
        return state, live.sum()

    def play(key: Any) -> int:
        key, k_init = jax.random.split(key)
        state = init(jax.random.split(k_init, batch))
        decisions = 0
        while not bool((state.terminated | state.truncated).all()):
            key, k = jax.random.split(key)
            state, live = act(state, k)
            decisions += int(live)
        return decisions

    key = jax.random.PRNGKey(seed)
    play(key)  # compile outside the timed region
    decisions = games = 0
    timer = _Timer(seconds)
    while not timer.expired():
        key, k = jax.random.split(key)
        decisions += play(k)
        games += batch
    return timer.result(decisions, games)


# ---------------------------------------------------------------- one function per peer


def pettingzoo_texas_holdem(seconds: float, seed: int = 0) -> PeerResult:
    return _aec_loop(_pettingzoo_classic("texas_holdem_v4"), seconds, seed)


def pettingzoo_hanabi(seconds: float, seed: int = 0) -> PeerResult:
    return _aec_loop(_pettingzoo_classic("hanabi_v5"), seconds, seed)


def pettingzoo_gin_rummy(seconds: float, seed: int = 0, python: str | None = None) -> PeerResult:
    """gin_rummy_v4 left PettingZoo in 1.27, so measure it in-process only on <=1.26, else in ``python``.

    ``python`` (default: ``$CARDENVS_BENCH_GIN_PYTHON``) is an interpreter with
    ``pettingzoo[classic]<=1.26``; it runs this very file by path as a worker.
    """
    try:
        env = _pettingzoo_classic("gin_rummy_v4")
    except (ImportError, PeerUnavailable) as exc:
        python = python or os.environ.get(GIN_PYTHON_ENV)
        if not python:
            raise PeerUnavailable(
                f"gin_rummy_v4 was removed in pettingzoo 1.27 ({exc}); set {GIN_PYTHON_ENV} "
                "or --gin-python to a python with pettingzoo[classic]<=1.26"
            ) from exc
        return _run_worker(python, "pettingzoo/gin_rummy_v4", seconds, seed)
    return _aec_loop(env, seconds, seed)


def shimmy_spades(seconds: float, seed: int = 0) -> PeerResult:
    return _aec_loop(_shimmy_openspiel("spades"), seconds, seed)


def shimmy_crazy_eights(seconds: float, seed: int = 0) -> PeerResult:
    return _aec_loop(_shimmy_openspiel("crazy_eights"), seconds, seed)


def _shimmy_openspiel(game_name: str) -> Any:
    """OpenSpiel game behind shimmy's PettingZoo AEC wrapper (it resolves chance nodes itself).

    shimmy 2.0 counts chance events towards ``game_length`` but truncates at
    OpenSpiel's ``max_game_length()``, which excludes them: spades (52 deal
    events, limit 56) would be cut off right after the bidding.  The subclass
    only stops chance events from counting, so whole games are played.
    """
    with _quiet():
        from shimmy import OpenSpielCompatibilityV0

        class WholeGames(OpenSpielCompatibilityV0):
            def _execute_chance_node(self) -> None:
                length = self.game_length
                super()._execute_chance_node()
                self.game_length = length

        return WholeGames(game_name=game_name)


def rlcard_bridge(seconds: float, seed: int = 0) -> PeerResult:
    return _rlcard_loop("bridge", seconds, seed)


def rlcard_uno(seconds: float, seed: int = 0) -> PeerResult:
    return _rlcard_loop("uno", seconds, seed)


def pyspiel_spades(seconds: float, seed: int = 0) -> PeerResult:
    return _pyspiel_loop("spades", seconds, seed)


def pyspiel_crazy_eights(seconds: float, seed: int = 0) -> PeerResult:
    return _pyspiel_loop("crazy_eights", seconds, seed)  # default: 5 players


def pgx_sparrow_mahjong(seconds: float, seed: int = 0) -> PeerResult:
    import pgx

    return _pgx_loop(pgx.make("sparrow_mahjong"), seconds, seed)


def pgx_bridge_bidding(seconds: float, seed: int = 0) -> PeerResult:
    """pgx deals bridge from a table of double-dummy results it downloads; without it, skip."""
    from pgx.bridge_bidding import BridgeBidding

    path = os.environ.get(PGX_DDS_ENV, "dds_results/dds_results_10M.npy")
    if not os.path.isfile(path):  # BridgeBidding() would sys.exit(1) here
        raise PeerUnavailable(
            f"pgx bridge_bidding needs its DDS table ({path} missing; "
            f"pgx.bridge_bidding.download_dds_results() and set {PGX_DDS_ENV})"
        )
    return _pgx_loop(BridgeBidding(path), seconds, seed)


class Peer(NamedTuple):
    name: str
    interface: str
    function: Callable[..., PeerResult]
    install: str = "pip install 'cardenvs[bench]'"


_AEC = "PettingZoo AEC loop"
_PGX_INSTALL = "optional, not in [bench]: pip install pgx jax"
PEERS: tuple[Peer, ...] = (
    Peer("pettingzoo/texas_holdem_v4", _AEC, pettingzoo_texas_holdem),
    Peer("pettingzoo/hanabi_v5", _AEC, pettingzoo_hanabi),
    Peer("pettingzoo/gin_rummy_v4", _AEC + " (pettingzoo<=1.26)", pettingzoo_gin_rummy),
    Peer("shimmy/spades", _AEC + " (OpenSpiel via shimmy)", shimmy_spades),
    Peer("shimmy/crazy_eights", _AEC + " (OpenSpiel via shimmy)", shimmy_crazy_eights),
    Peer("rlcard/bridge", "RLCard env.step", rlcard_bridge),
    Peer("rlcard/uno", "RLCard env.step", rlcard_uno),
    Peer("pyspiel/spades", "pyspiel Python loop + observation tensor", pyspiel_spades),
    Peer("pyspiel/crazy_eights", "pyspiel Python loop + observation tensor", pyspiel_crazy_eights),
    Peer("pgx/sparrow_mahjong", f"pgx JAX CPU, batched B={PGX_BATCH}", pgx_sparrow_mahjong, _PGX_INSTALL),
    Peer("pgx/bridge_bidding", f"pgx JAX CPU, batched B={PGX_BATCH}", pgx_bridge_bidding, _PGX_INSTALL),
)
_BY_NAME = {peer.name: peer for peer in PEERS}


def _run_worker(python: str, name: str, seconds: float, seed: int) -> PeerResult:
    """Run one peer in another interpreter (this file by path) and read its JSON line back."""
    cmd = [python, os.path.abspath(__file__), "--worker", name, "--seconds", str(seconds), "--seed", str(seed)]
    env = {key: value for key, value in os.environ.items() if key != GIN_PYTHON_ENV}  # no re-delegation
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 300, env=env)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"worker {python} exited {proc.returncode}: {tail}")
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    if row.get("skipped"):
        raise PeerUnavailable(f"in {python}: {row['skipped']}")
    return PeerResult(row["decisions_per_s"], row["games"], row["decisions"], row["seconds"])


def _measure(peer: Peer, seconds: float, seed: int, gin_python: str | None) -> dict[str, Any]:
    row: dict[str, Any] = {"peer": peer.name, "interface": peer.interface}
    try:
        if peer.function is pettingzoo_gin_rummy:
            result = pettingzoo_gin_rummy(seconds, seed, python=gin_python)
        else:
            result = peer.function(seconds, seed)
    except PeerUnavailable as exc:
        return row | {"skipped": str(exc)}
    except ImportError as exc:
        missing = f"{exc.name} not installed" if exc.name else str(exc)
        return row | {"skipped": f"{missing} ({peer.install})"}
    except Exception as exc:  # a broken peer must not sink the whole table
        return row | {"skipped": f"failed: {type(exc).__name__}: {exc}"}
    return row | {"skipped": None} | result._asdict()


def measure_peers(
    seconds: float, only: list[str] | None = None, seed: int = 0, gin_python: str | None = None
) -> list[dict[str, Any]]:
    """Time each peer (all, or the names in ``only``, in that order) for ``seconds``, one after another.

    Each row has ``peer``, ``interface`` and either ``skipped`` (a reason) or
    ``decisions_per_s``, ``games``, ``decisions`` and ``seconds``.
    """
    if only is not None:
        unknown = sorted(set(only) - _BY_NAME.keys())
        if unknown:
            raise ValueError(f"unknown peers {unknown}; known: {sorted(_BY_NAME)}")
    chosen = list(PEERS) if only is None else [_BY_NAME[name] for name in only]
    return [_measure(peer, seconds, seed, gin_python) for peer in chosen]


def format_table(rows: list[dict[str, Any]]) -> str:
    lines = [f"{'peer':<28} {'interface':<48} {'decisions/s':>12} {'games':>8}"]
    for row in rows:
        if row.get("skipped"):
            lines.append(f"{row['peer']:<28} {row['interface']:<48} {'skipped':>12}  {row['skipped']}")
        else:
            lines.append(f"{row['peer']:<28} {row['interface']:<48} {row['decisions_per_s']:>12,.0f} {row['games']:>8}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="time budget per peer (default 5)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", action="append", metavar="PEER", help="measure this peer (repeatable)")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    parser.add_argument(
        "--gin-python", metavar="PYTHON", help=f"python with pettingzoo<=1.26 for gin_rummy_v4 (or ${GIN_PYTHON_ENV})"
    )
    parser.add_argument("--worker", metavar="PEER", help=argparse.SUPPRESS)  # one peer, one JSON line
    args = parser.parse_args(argv)

    if args.worker:
        print(json.dumps(measure_peers(args.seconds, [args.worker], args.seed)[0]))
        return 0
    rows = measure_peers(args.seconds, args.only, args.seed, args.gin_python)
    print(format_table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"seconds": args.seconds, "seed": args.seed, "peers": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
