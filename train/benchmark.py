"""``cardenvs benchmark``: place any agent on a fixed, versioned protocol, so two results can be compared.

A protocol (``train/protocols/<game>_v<N>.json``) fixes everything a number depends on: the game and its
seats, the seed (hence the deals), the deal count against each opponent, and the opponent suite (``random``,
``rules_basic``, ``rules_strong``, every gauntlet agent, the shipped ``trained`` policy, pinned by its
SHA-256, and PIMC at about 50 ms a decision, as an iteration count so no machine's speed enters).
The candidate plays a two-agent match against each opponent through the evaluation harness (duplicate
deals in RING RANG, rotated seats in Rang), and is placed on the protocol's reference ladder: Bradley-Terry
ratings of the reference agents, fitted once from their own round robin and shipped beside the protocol
(``<game>_v<N>_ladder.json``), so a new agent is rated without replaying the reference matches.

    cardenvs benchmark --game ring_rang --agent exec:path=examples/bots/random_bot.js --quick --workers 2
    cardenvs benchmark --game rang --agent mybots.greedy:make_bot --out runs/bench_mybot

The same agent and protocol give the same ``scorecard.json`` and ``scorecard.txt``, byte for byte; only
``timing.json`` (time per decision, wall seconds) differs between runs. ``--quick`` plays fewer deals (wider
intervals); ``--deals``, ``--opponents`` or ``--seed`` make a custom run, marked as not comparable.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import secrets
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from cardenvs.agents.bot_process import ProcessBot
from cardenvs.agents.outside import entry_points, is_import_path
from cardenvs.agents.policy import trained_path
from cardenvs.agents.registry import AGENTS, check_agent, check_spec, make_agent, parse_spec
from cardenvs.agents.sandbox import kill_sandbox, popen_sandboxed, sandbox_available
from cardenvs.agents.time_control import TimeControl
from cardenvs.games import GAME_NAMES, canonical_game, game_spec, games_help

from .benchmark_record import verify, write_record
from .cluster import cardenvs_version, check_ray_address, cluster_cpus, spec_files
from .evaluate import (
    EvalConfig,
    _points_meaning,
    agent_labels,
    check_writable,
    chunk_subfolder,
    display_labels,
    error_bars,
    object_labels,
    progress_bar,
    run_records,
    summarize,
    worker_count,
)
from .stats import ELO, fit_ladder, place_on_ladder

LEVELS = ("full", "quick")
HOST_STARTUP = 60.0  # seconds a hosted candidate (Python code) has to import and build before its first move


@dataclass(frozen=True)
class Protocol:
    """One game's benchmark, as its JSON file fixes it."""

    name: str  # "ring_rang-v1"
    game: str
    num_players: int
    unit: str
    seed: int | None  # None: secret, drawn fresh for every run (v2 on); an int: public, fixed by the file (v1)
    anchor: str  # the reference agent rated 0
    opponents: list[dict[str, Any]]  # {"spec", "deals", "quick_deals"}
    pinned: dict[str, str]  # agent spec -> SHA-256 of the policy file it plays
    sha256: str  # of the protocol file: the scorecard names exactly what it was measured on
    ladder: dict[str, Any] | None  # the shipped reference ladder, if built
    time_control: TimeControl | None = None  # a candidate process's clock (v2 on)

    def deals(self, opponent: dict[str, Any], level: str) -> int:
        return int(opponent["quick_deals" if level == "quick" else "deals"])

    @property
    def specs(self) -> list[str]:
        return [o["spec"] for o in self.opponents]

    @property
    def costs(self) -> dict[str, float]:
        """What a deal against each opponent costs, relative to a cheap one's: the progress bars' weights."""
        return {o["spec"]: float(o.get("cost", 1)) for o in self.opponents}


def _protocol_files(game: str) -> list[Any]:
    """The protocol files of ``game`` (``<game>_v<N>.json`` in the package its spec names), oldest first."""
    package = game_spec(game).protocols
    if not package:
        return []
    folder = resources.files(package)
    prefix = f"{game}_v"
    found = [f for f in folder.iterdir() if f.name.startswith(prefix) and f.name.endswith(".json")
             and f.name[len(prefix):-5].isdigit()]
    return sorted(found, key=lambda f: int(f.name[len(prefix):-5]))


def load_protocol(game: str, version_number: int | None = None) -> Protocol:
    """The protocol of ``game`` (its latest version unless one is named); a ValueError naming what exists."""
    game = canonical_game(game)
    files = _protocol_files(game)
    if not files:
        raise ValueError(f"no benchmark protocol for {game} (its spec declares none): compare agents with "
                         f"`cardenvs eval --game {game} --agents ...`")
    chosen = files[-1] if version_number is None else next(
        (f for f in files if f.name == f"{game}_v{version_number}.json"), None)
    if chosen is None:
        raise ValueError(f"no protocol {game}-v{version_number}; there are: "
                         f"{', '.join(f.name[:-5].replace('_v', '-v') for f in files)}")
    text = chosen.read_bytes()
    data = json.loads(text)
    # its own ladder, or the one it names (a version that changes only how deals are drawn keeps its ratings)
    ladder_file = chosen.parent / data.get("ladder", chosen.name.replace(".json", "_ladder.json"))
    ladder = json.loads(ladder_file.read_text()) if ladder_file.is_file() else None
    seed = None if data["seed"] == "secret" else int(data["seed"])
    return Protocol(data["protocol"], data["game"], data["num_players"], data["unit"], seed,
                    data["anchor"], data["opponents"], data.get("pinned", {}), hashlib.sha256(text).hexdigest(),
                    ladder, TimeControl.from_dict(data["time_control"]) if "time_control" in data else None)


def check_pins(protocol: Protocol) -> None:
    """The policies the protocol pinned are the ones installed (else its numbers would not be comparable)."""
    for spec, expected in protocol.pinned.items():
        found = hashlib.sha256(trained_path(protocol.game).read_bytes()).hexdigest() if spec == "trained" else None
        if found != expected:
            raise ValueError(f"protocol {protocol.name} was fixed with the {spec} policy {expected[:12]}..., and "
                             f"this install has {str(found)[:12]}...; use the cardenvs release of that protocol")


# ------------------------------------------------------------------ running
@dataclass
class BenchmarkSettings:
    """How to run a protocol: its level, and the custom changes that make a run not comparable."""

    level: str = "full"  # "full" or "quick"
    workers: int = 1
    progress: bool = True
    ray_address: str | None = None  # the matches' deals as Ray tasks on this cluster (docs/scale_out.md)
    chunks: str | None = None  # folder of finished chunks, one subfolder per match: a rerun resumes
    deals: int | None = None  # custom: this many deals against every opponent
    opponents: list[str] | None = None  # custom: only these opponents of the suite
    seed: int | None = None  # a revealed seed: replay that run's deals (a protocol with a public seed: custom)
    version: int | None = None  # the protocol's version (default: the latest)
    allow_env: bool = False  # let a candidate that reads the env (all hands) play: never comparable
    time_control: TimeControl | None = None  # custom: another clock than the protocol's (not comparable)

    @property
    def custom(self) -> list[str]:
        return [f"{key}={value if not isinstance(value, list) else ','.join(value)}"
                for key, value in (("deals", self.deals), ("opponents", self.opponents), ("seed", self.seed),
                                   ("time_control", self.time_control and self.time_control.text()))
                if value is not None]


def seed_commitment(seed: int) -> str:
    """The SHA-256 a scorecard publishes before its first deal; the seed, revealed after the last, must match it."""
    return hashlib.sha256(f"cardenvs-benchmark-seed:{seed}".encode()).hexdigest()


def draw_seed(protocol: Protocol, settings: BenchmarkSettings) -> tuple[int, str]:
    """The run's seed and how it was drawn: ``secret`` (fresh from :mod:`secrets`, never on an argv, in an
    environment or in a file while bots run), ``replay`` (a revealed seed given back), ``public`` (the seed a
    v1 protocol file fixes: any bot can know every hand), ``custom`` (a seed of your choice on a v1 protocol)."""
    if settings.seed is not None:
        return settings.seed, "replay" if protocol.seed is None else "custom"
    if protocol.seed is None:
        return secrets.randbits(63), "secret"
    return protocol.seed, "public"


def _plan(protocol: Protocol, settings: BenchmarkSettings) -> list[tuple[str, int]]:
    """(opponent spec, deals) of every match to play, validated before any deal."""
    if settings.level not in LEVELS:
        raise ValueError(f"level: expected one of {LEVELS}, got {settings.level!r}")
    chosen = protocol.opponents
    if settings.opponents is not None:
        unknown = [s for s in settings.opponents if s not in protocol.specs]
        if unknown or not settings.opponents:
            raise ValueError(f"--opponents: {', '.join(unknown) or 'none given'}: not in protocol {protocol.name}; "
                             f"its opponents: {', '.join(protocol.specs)}")
        chosen = [o for o in protocol.opponents if o["spec"] in settings.opponents]
    if settings.deals is not None and (isinstance(settings.deals, bool) or not isinstance(settings.deals, int)
                                       or settings.deals < 1):
        raise ValueError(f"--deals: expected an int >= 1, got {settings.deals!r}")
    if settings.seed is not None and (isinstance(settings.seed, bool) or not isinstance(settings.seed, int)
                                      or settings.seed < 0):
        raise ValueError(f"--seed: expected an int >= 0, got {settings.seed!r}")
    if settings.chunks and protocol.seed is None and settings.seed is None:
        raise ValueError("--chunks: a run on secret deals cannot be resumed (its seed would have to sit in a file "
                         "while bots run); resume a revealed run with --seed, or drop --chunks")
    return [(o["spec"], settings.deals or protocol.deals(o, settings.level)) for o in chosen]


def _match_config(protocol: Protocol, settings: BenchmarkSettings, agents: list[str], deals: int,
                  seed: int, clock_share: float = 1.0) -> EvalConfig:
    """One match's evaluation; ``clock_share``: the part of the run's clock base it gets (its share of the deals)."""
    control = time_control(protocol, settings)
    clock = None if control is None else {**control.as_dict(), "base": control.base * clock_share}
    return EvalConfig(game=protocol.game, agents=agents, deals=deals, seed=seed,
                      num_players=protocol.num_players, unit=protocol.unit, workers=settings.workers, progress=False,
                      ray_address=settings.ray_address, chunks=chunk_subfolder(settings.chunks, "_vs_".join(agents)),
                      time_control=clock)


def time_control(protocol: Protocol, settings: BenchmarkSettings) -> TimeControl | None:
    """The clock of a candidate that runs as a process: the settings', else the protocol's."""
    return settings.time_control or protocol.time_control


def _match_row(config: EvalConfig, records: list, opponent: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The candidate's row against one opponent (deterministic part) and its timing (the part that varies)."""
    summary = summarize(config, records)
    table = {row["agent"]: row for row in summary["table"]}
    mine_label, theirs_label = agent_labels(config.agents)  # "#0"/"#1" added in a mirror match
    mine, theirs = table[mine_label], table[theirs_label]
    row = {"opponent": opponent, "deals": config.deals, "episodes": mine["episodes"], "wins": mine["wins"],
           "opponent_wins": theirs["wins"], "win_rate": mine["win_rate"], "win_rate_ci95": mine["win_rate_ci95"],
           "mean_points": mine["mean_points"], "mean_points_ci95": mine["mean_points_ci95"],
           "forfeits": mine["forfeits"]}
    if mine.get("forfeit_reasons"):
        row["forfeit_reasons"] = mine["forfeit_reasons"]
    timing = {row["agent"]: row for row in summary["timing"]}
    return row, {"opponent": opponent, "agent_ms_per_decision": timing[mine_label]["ms_per_decision"],
                 "agent_max_ms": timing[mine_label]["max_ms"],
                 "opponent_ms_per_decision": timing[theirs_label]["ms_per_decision"]}


def run_benchmark(agent: Any, game: str, settings: BenchmarkSettings | None = None,
                  announce: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Play ``agent`` (a spec or an agent object, as :func:`~cardenvs.train.evaluate.evaluate_agents` takes)
    against the protocol's suite; the scorecard (``"timing"`` and ``"record"`` hold what is not in
    scorecard.json). ``announce`` is given the seed's commitment line before the first deal."""
    settings = settings or BenchmarkSettings()
    protocol = load_protocol(game, settings.version)
    plan = _plan(protocol, settings)
    check_pins(protocol)
    (candidate,), objects = object_labels([agent], protocol.game)
    for opponent, _ in plan:
        check_agent(opponent, protocol.game, **game_spec(protocol.game).env_info(protocol.num_players))
    how, objects = place_candidate(candidate, objects, protocol, settings.allow_env)
    seed, drawn = draw_seed(protocol, settings)
    commitment = seed_commitment(seed)
    if announce:
        announce(f"seed commitment: sha256 {commitment} ({drawn} deals; the seed is revealed with the scorecard)")
    cost = protocol.costs  # a PIMC deal is dearer
    bar = progress_bar(round(sum(d * cost[o] for o, d in plan)), settings.progress, f"benchmark {protocol.name}",
                       unit="cost")
    rows, timing, record = [], [], []
    workers = 1
    start = time.perf_counter()
    try:
        total = sum(deals for _, deals in plan)
        for opponent, deals in plan:
            config = _match_config(protocol, settings, [candidate, opponent], deals, seed, deals / total)
            workers = max(workers, worker_count(config)[0])
            began = time.perf_counter()
            records = run_records(config, objects, bar=_Weighted(bar, cost[opponent]))
            row, clock = _match_row(config, records, opponent)
            rows.append(row)
            record.append({"opponent": opponent, "deals": deals, "episodes": records})
            timing.append({**clock, "wall_seconds": time.perf_counter() - began})
    finally:
        bar.close()
    card = scorecard(protocol, settings, candidate, rows, seed, drawn, how)
    card["timing"] = {"matches": timing, "wall_seconds": time.perf_counter() - start,
                      "workers": cluster_cpus(settings.ray_address) if settings.ray_address else workers}
    card["record"] = record
    return card


class _Weighted:
    """A progress bar advanced by ``weight`` per deal: the bar moves with what the deals cost, not their count."""

    def __init__(self, bar: Any, weight: float):
        self.bar, self.weight = bar, weight

    def update(self, n: int) -> None:
        self.bar.update(round(n * self.weight))


def scorecard(protocol: Protocol, settings: BenchmarkSettings, candidate: str, rows: list[dict], seed: int,
              drawn: str, how: dict[str, Any]) -> dict[str, Any]:
    """The deterministic part of a benchmark's result: rows, the worst match-up, the rating on the ladder, the
    seed with its commitment and how the candidate ran."""
    custom = [c for c in settings.custom if drawn != "replay" or not c.startswith("seed=")]
    level = "custom" if custom else settings.level
    not_comparable = list(custom)
    if drawn == "replay":
        not_comparable.append("a replay of revealed deals")
    if drawn == "public":
        not_comparable.append(f"public deals (the seed is in {protocol.name}'s file: a bot can know every hand)")
    if how.get("sees_env"):
        not_comparable.append("the candidate reads the env, every hand included (--allow-env)")
    card: dict[str, Any] = {
        "protocol": protocol.name, "protocol_sha256": protocol.sha256, "level": level,
        "protocol_level": settings.level, "comparable": not not_comparable, "not_comparable": not_comparable,
        "custom": custom,
        "cardenvs": cardenvs_version(), "game": protocol.game,
        "num_players": protocol.num_players, "unit": protocol.unit,
        "seed": seed, "seed_sha256": seed_commitment(seed), "deals_drawn": drawn, "replay": drawn == "replay",
        "time_control": (time_control(protocol, settings).as_dict() if time_control(protocol, settings) else None),
        "agent": candidate, "candidate": how, "points_meaning": _points_meaning(protocol.game), "rows": rows,
        # the worst real match-up: an agent against its own copy (a reference agent's scorecard) is no test
        "worst": min([r for r in rows if r["opponent"] != candidate] or rows, key=lambda r: r["win_rate"])["opponent"],
    }
    ladder = (protocol.ladder or {}).get("ratings")
    if ladder:
        results = [(ladder[r["opponent"]], r["wins"], r["opponent_wins"]) for r in rows if r["opponent"] in ladder]
        rating, low, high = place_on_ladder(results)
        below = [name for name, value in sorted(ladder.items(), key=lambda kv: kv[1]) if value <= rating]
        above = [name for name, value in sorted(ladder.items(), key=lambda kv: kv[1]) if value > rating]
        card["rating"] = {"value": round(rating, 1), "ci95": [round(low, 1), round(high, 1)],
                          "above": below[-1] if below else None, "below": above[0] if above else None,
                          "scale": f"Bradley-Terry, Elo points ({ELO:.1f} per unit of log-odds), "
                                   f"{protocol.anchor} = 0",
                          "ladder": {name: round(value, 1) for name, value in ladder.items()},
                          "ladder_level": protocol.ladder.get("level")}
    return card


# --------------------------------------------------------------- candidates
def place_candidate(candidate: str, objects: dict[str, Any], protocol: Protocol,
                    allow_env: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """How the candidate will run, checked before any deal, and the agent objects of the run.

    An ``exec:`` bot runs in its sandbox; an import path, an entry point or an ONNX network is played by
    :mod:`cardenvs.agents.host` behind the bot protocol, in the same sandbox, so its code never runs in this
    process (it is even checked there); an agent of the package runs here; an object handed over from Python
    runs here too, as trusted code. An agent that reads the env (every hand) is refused unless ``allow_env``.
    """
    game, info = protocol.game, game_spec(protocol.game).env_info(protocol.num_players)
    refuse = (f"candidate {candidate!r} reads the env, every hand included: it cannot be benchmarked "
              "(--allow-env plays it anyway, on a scorecard marked not comparable)")
    if candidate in objects:
        if getattr(objects[candidate], "needs_env", False) and not allow_env:
            raise ValueError(refuse)
        return {"form": "Python object", "runs": "in process", "verified": False, "sees_env": bool(
            getattr(objects[candidate], "needs_env", False)), "trust": "trusted code, not verified"}, objects
    name, params = parse_spec(candidate)
    if not is_import_path(name):  # a name is checked here; an import path only in its host (it runs code)
        check_spec(candidate, game)
    if name in AGENTS[game] and name not in ("exec", "onnx"):
        outside = [f"{key}={value}" for key, value in params.items() if _names_outside_code(value, game)]
        if outside:
            raise ValueError(f"candidate {candidate!r}: {', '.join(outside)} names code from outside the package, "
                             "which would run in the harness; benchmark that code as the candidate itself")
        agent = make_agent(candidate, game, seed=0, **info)
        agent.close()
        if getattr(agent, "sees_hidden_cards", False) and not allow_env:
            raise ValueError(refuse)
        return {"form": "agent of the package", "runs": "in process", "verified": True,
                "sees_env": bool(getattr(agent, "sees_hidden_cards", False))}, objects
    if name == "exec":
        check_agent(candidate, game, **info)
        bot = make_agent(candidate, game, seed=0, **info)
    else:
        form = "ONNX network" if name == "onnx" else "import path" if is_import_path(name) else "entry point"
        verdict = host_check(candidate, protocol)
        if not verdict["ok"]:
            raise ValueError(f"agent {candidate!r}: {verdict['error']}")
        if verdict["needs_env"]:
            if not allow_env:
                raise ValueError(refuse)
            check_agent(candidate, game, **info)  # --allow-env: it plays here, where it can see the env
            return {"form": form, "runs": "in process", "verified": False, "sees_env": True}, objects
        bot = hosted_bot(candidate, protocol)
        objects = {**objects, candidate: bot}
    # "bubblewrap 0.11.0", without where its binary lies: the scorecard is the same on every machine
    mechanism = getattr(bot, "sandbox_mechanism", "").split(" (")[0] if getattr(bot, "sandboxed", False) else ""
    how = {"form": "bot process" if name == "exec" else form,
           "runs": f"sandboxed process ({mechanism})" if mechanism else "process, not sandboxed",
           "verified": bool(mechanism), "sees_env": False}
    if not mechanism:
        how["trust"] = "no sandbox on this machine: not verified"
    return how, objects


def _names_outside_code(value: Any, game: str) -> bool:
    """A spec parameter that names an agent of outside code (``rollout=mybots:make``, ``rollout=exec:...``)."""
    if not isinstance(value, str) or not value:
        return False
    try:
        inner, _ = parse_spec(value)
    except ValueError:
        return False
    return is_import_path(inner) or inner in ("exec", "onnx") or (inner not in AGENTS[game]
                                                                  and inner in entry_points())


def _host_command(candidate: str, protocol: Protocol, *flags: str) -> list[str]:
    return [sys.executable, "-m", "cardenvs.agents.host", "--game", protocol.game, "--num-players",
            str(protocol.num_players), *flags, candidate]


def _host_view(candidate: str) -> tuple[list[str], dict[str, str]]:
    """What a hosted candidate's sandbox shows besides the read-only system (its code may sit in a temporary
    folder the sandbox hides): the working folder, PYTHONPATH's folders and the files its spec names; and the
    environment it needs (PYTHONPATH: not a secret)."""
    path = os.environ.get("PYTHONPATH", "")
    visible = [os.getcwd(), *(p for p in path.split(os.pathsep) if p), *spec_files([candidate]), *_code_folders()]
    # one thread a pool: the sandbox allows 64 processes and threads, and numpy/torch would size theirs to the cores
    threads = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    return visible, {**threads, **({"PYTHONPATH": path} if path else {})}


def _code_folders() -> list[str]:
    """The folders of the packages this process has imported (cardenvs, the games' plugins), outside the Python
    installation: an editable install's source tree may lie in a temporary folder, which the sandbox hides."""
    prefixes = tuple(os.path.realpath(p) + os.sep for p in {sys.prefix, sys.base_prefix})
    folders = sorted({os.path.realpath(p) for module in list(sys.modules.values()) for p in _paths(module)})
    outside = [f for f in folders if not (f + os.sep).startswith(prefixes)]
    return [f for f in outside if not any(f.startswith(other + os.sep) for other in outside)]  # the outermost


def _paths(module: Any) -> list[str]:
    """A package's folders; nothing for a module, or an object in sys.modules whose ``__path__`` is not a list
    (torch's ``torch.classes``)."""
    try:
        return [p for p in getattr(module, "__path__", None) or () if isinstance(p, str)]
    except TypeError:
        return []


def hosted_bot(candidate: str, protocol: Protocol) -> ProcessBot:
    """A bot process that plays ``candidate`` (Python code) through :mod:`cardenvs.agents.host`."""
    visible, env = _host_view(candidate)
    return ProcessBot(command=_host_command(candidate, protocol), game=protocol.game, startup=HOST_STARTUP,
                      num_players=protocol.num_players, visible=visible, env=env, label=candidate)


def host_check(candidate: str, protocol: Protocol) -> dict[str, Any]:
    """Build the candidate once in a host process, in the sandbox where there is one (never here):
    ``{"ok", "needs_env"}`` or ``{"ok", "error"}``."""
    command = _host_command(candidate, protocol, "--check")
    visible, env = _host_view(candidate)
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    try:
        process = (popen_sandboxed(command, visible=visible, env=env, **pipes) if sandbox_available()[0]
                   else subprocess.Popen(command, **pipes))
    except OSError as error:
        return {"ok": False, "error": f"cannot start its host process ({error})"}
    try:
        out, err = process.communicate(timeout=HOST_STARTUP)
        return json.loads(out.decode().strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return {"ok": False, "error": f"not built within {HOST_STARTUP:g} s"}
    except (ValueError, IndexError):
        return {"ok": False, "error": f"its host process failed: {err.decode(errors='replace').strip()[-300:]}"}
    finally:
        if process.poll() is None:
            kill_sandbox(process)
            process.wait()


# ----------------------------------------------------------- reference ladder
def build_ladder(game: str, settings: BenchmarkSettings) -> dict[str, Any]:
    """Play the protocol's round robin among its reference agents and fit their ratings (random = 0).

    Each pair plays the protocol's deal count of the dearer of the two (``--quick``: its quick count). A seed
    given (``--seed``, so that ``--chunks`` can resume the build) leaves the ladder at its level: the reference
    agents are ours, and a ladder's seed is published with it anyway.
    """
    protocol = load_protocol(game, settings.version)
    check_pins(protocol)
    plan = dict(_plan(protocol, settings))
    seed, _ = draw_seed(protocol, settings)  # a secret protocol's ladder is played on fresh deals, then published
    specs = list(plan)
    pairs = [(a, b) for i, a in enumerate(specs) for b in specs[i + 1:]]
    cost = protocol.costs
    weight = {(a, b): cost[a] + cost[b] - 1 for a, b in pairs}  # a deal of two searches costs both searches
    bar = progress_bar(round(sum(min(plan[a], plan[b]) * weight[a, b] for a, b in pairs)), settings.progress,
                       f"ladder {protocol.name}", unit="cost")
    finished = _finished_pairs(protocol, settings, seed)
    matches = []
    try:
        for a, b in pairs:
            config = _match_config(protocol, settings, [a, b], min(plan[a], plan[b]), seed)
            match = finished.get((a, b, config.deals))
            if match is None:
                row, _ = _match_row(config, run_records(config, bar=_Weighted(bar, weight[a, b])), b)
                match = {"a": a, "b": b, "deals": config.deals, "episodes": row["episodes"],
                         "a_wins": row["wins"], "b_wins": row["opponent_wins"]}
            else:
                bar.update(round(config.deals * weight[a, b]))
            matches.append(match)
            if settings.chunks:
                _save_finished_pairs(protocol, settings, seed, matches)
    finally:
        bar.close()
    custom = [c for c in settings.custom if not c.startswith("seed=")]
    ratings = fit_ladder([(m["a"], m["b"], m["a_wins"], m["b_wins"]) for m in matches], protocol.anchor)
    return {"protocol": protocol.name, "protocol_sha256": protocol.sha256,
            "level": "custom" if custom else settings.level, "anchor": protocol.anchor, "seed": seed,
            "ratings": {name: round(value, 2) for name, value in sorted(ratings.items(), key=lambda kv: kv[1])},
            "matches": matches}


def _finished_pairs_file(settings: BenchmarkSettings) -> Path:
    return Path(settings.chunks) / "ladder_pairs.json"


def _finished_pairs(protocol: Protocol, settings: BenchmarkSettings, seed: int) -> dict[tuple, dict[str, Any]]:
    """The pairs a resumed ladder build has already finished (``--chunks``: its ``ladder_pairs.json``), by
    (a, b, deals); a file of another build (protocol or seed) is refused, as a chunk folder is.

    The file is a few kB, so a build that takes several sessions can keep it (commit it) where the chunks, a few
    MB a match, would be too big; anyone can check a pair by replaying its deals with the ladder's seed."""
    file = _finished_pairs_file(settings) if settings.chunks else None
    if file is None or not file.is_file():
        return {}
    try:
        data = json.loads(file.read_text())
        identity, matches = data["build"], data["matches"]
        finished = {(m["a"], m["b"], m["deals"]): m for m in matches}
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(f"--chunks: cannot read {file} ({error}); delete it to play its pairs again") from None
    if identity != {"protocol": protocol.name, "seed": seed}:
        raise ValueError(f"--chunks: {file} holds the pairs of another ladder build (its protocol or seed "
                         "differ); give another folder")
    return finished


def _save_finished_pairs(protocol: Protocol, settings: BenchmarkSettings, seed: int, matches: list[dict]) -> None:
    file = _finished_pairs_file(settings)
    file.parent.mkdir(parents=True, exist_ok=True)
    partial = file.with_name(f".{file.name}.partial")
    build = {"protocol": protocol.name, "seed": seed}
    partial.write_text(json.dumps({"build": build, "matches": matches}, indent=1) + "\n")
    partial.replace(file)


# ------------------------------------------------------------------- output
def format_scorecard(card: dict[str, Any]) -> str:
    """The scorecard as a table (no timings: the text is the same in every run)."""
    labels = display_labels([card["agent"]])
    seed_note = (f"{card['deals_drawn']} deals, seed {card['seed']} (sha256 {card['seed_sha256'][:16]}...)"
                 + ("" if card["comparable"] else f"; NOT COMPARABLE: {'; '.join(card['not_comparable'])}"))
    how = card["candidate"]
    lines = [f"benchmark {card['protocol']} ({card['level']}), {card['game']} {card['num_players']} players, "
             f"{seed_note}",
             f"agent: {labels[card['agent']]} ({how['form']}, ran {how['runs']}: "
             f"{'verified' if how['verified'] else how.get('trust', 'not verified')})",
             f"{'opponent':<22} {'deals':>6} {'episodes':>8} {'win rate':>9} {'95% CI':>17} {'points':>8} "
             f"{'forfeits':>8}"]
    for row in card["rows"]:
        lo, hi = row["win_rate_ci95"]
        lines.append(f"{row['opponent']:<22} {row['deals']:>6} {row['episodes']:>8} {row['win_rate']:>9.3f} "
                     f"[{lo:.3f}, {hi:.3f}] {row['mean_points']:>8.3f} {row['forfeits']:>8}")
    worst = next(r for r in card["rows"] if r["opponent"] == card["worst"])
    lines.append(f"worst match-up: {worst['opponent']} {worst['win_rate']:.3f} "
                 f"[{worst['win_rate_ci95'][0]:.3f}, {worst['win_rate_ci95'][1]:.3f}]")
    rating = card.get("rating")
    if rating:
        where = " and ".join(part for part in (
            f"above {rating['above']} ({rating['ladder'][rating['above']]:.0f})" if rating["above"] else "",
            f"below {rating['below']} ({rating['ladder'][rating['below']]:.0f})" if rating["below"] else "") if part)
        lines.append(f"rating {rating['value']:.0f} [{rating['ci95'][0]:.0f}, {rating['ci95'][1]:.0f}] on the "
                     f"{card['protocol']} ladder ({rating['ladder_level']}): {where}")
        lines.append(f"  scale: {rating['scale']}")
    if card.get("time_control") and card["candidate"]["runs"] != "in process":
        lines.append(f"time control: {TimeControl(**card['time_control']).text()}")
    if card.get("points_meaning"):
        lines.append(f"points: {card['points_meaning']}")
    for reason_row in card["rows"]:
        for reason in reason_row.get("forfeit_reasons", []):
            lines.append(f"forfeit vs {reason_row['opponent']}: {reason}")
    for full, short in labels.items():
        if full != short:
            lines.append(f"{short} = {full}")
    return "\n".join(lines)


def format_timing(card: dict[str, Any]) -> str:
    timing = card["timing"]
    parts = [f"{m['opponent']} {m['agent_ms_per_decision']:.3g} ms (slowest {m['agent_max_ms']:.3g})"
             for m in timing["matches"]]
    return (f"agent's time per decision: {', '.join(parts)}\n"
            f"wall {timing['wall_seconds']:.0f} s with {timing['workers']} worker(s)")


def write_scorecard(card: dict[str, Any], out: str | Path) -> list[str]:
    """scorecard.json and scorecard.txt (the same for the same seed), timing.json, record.jsonl.gz (every
    decision, for ``cardenvs benchmark verify``) and scorecard.png (matplotlib)."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    fixed = {key: value for key, value in card.items() if key not in ("timing", "record")}
    (folder / "scorecard.json").write_text(json.dumps(fixed, indent=1, sort_keys=True) + "\n")
    (folder / "scorecard.txt").write_text(format_scorecard(card) + "\n")
    (folder / "timing.json").write_text(json.dumps(card.get("timing", {}), indent=1) + "\n")
    written = ["scorecard.json", "scorecard.txt", "timing.json"]
    if "record" in card:
        written.append(write_record(card, folder))
    if plot_scorecard(card, folder / "scorecard.png"):
        written.append("scorecard.png")
    return written


def plot_scorecard(card: dict[str, Any], path: Path) -> bool:
    """Win rate against each opponent (95% CI) and, where the ladder is shipped, the agent's place on it."""
    fig = scorecard_figure(card)
    if fig is None:
        return False
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def scorecard_figure(card: dict[str, Any]) -> Any:
    """The figure of :func:`plot_scorecard` (a matplotlib Figure), or None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    rows = card["rows"]
    rating = card.get("rating")
    fig, axes = plt.subplots(1, 2 if rating else 1, figsize=(11 if rating else 7, 4.2),
                             gridspec_kw={"width_ratios": [3, 1]} if rating else None, squeeze=False)
    ax = axes[0][0]
    rates = [r["win_rate"] for r in rows]
    ax.bar(range(len(rows)), rates, yerr=error_bars(rows), capsize=5, color="#4477aa")
    ax.axhline(0.5, color="#999999", linestyle="--", linewidth=1)
    ax.set_xticks(range(len(rows)), [r["opponent"] for r in rows], rotation=25, ha="right")
    ax.set_ylim(0, 1)
    ax.set_ylabel("win rate against (95% CI)")
    label = display_labels([card["agent"]])[card["agent"]]
    ax.set_title(f"{label}: {card['protocol']} ({card['level']})")
    if rating:
        side = axes[0][1]
        ladder = sorted(rating["ladder"].items(), key=lambda kv: kv[1])
        values = [value for _, value in ladder] + list(rating["ci95"])
        gap, placed = (max(values) - min(values)) / 22 or 1.0, []
        for name, value in ladder:  # labels spread so that close ratings stay readable
            placed.append(max(value, placed[-1] + gap) if placed else value)
            side.plot([0], [value], "o", color="#999999")
            side.annotate(name, (0, value), xytext=(0.25, placed[-1]), textcoords="data", va="center", fontsize=7,
                          arrowprops={"arrowstyle": "-", "color": "#cccccc", "lw": 0.5})
        low, high = rating["ci95"]
        # the agent is named in a legend under the panel, where no tick label is: beside its marker, a long
        # label ran over the rating axis's tick labels
        bars = [[max(0.0, rating["value"] - low)], [max(0.0, high - rating["value"])]]
        side.errorbar([0], [rating["value"]], yerr=bars, fmt="D", color="#cc3311", capsize=5,
                      label=textwrap.fill(f"{label} {rating['value']:.0f}", 28))
        side.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), fontsize=8, frameon=False, handlelength=1,
                    labelcolor="#cc3311")
        side.set_xlim(-1, 1.6)
        side.set_xticks([])
        side.set_ylabel("rating (random = 0)")
        side.set_title("on the reference ladder")
    footer = [f"{card.get('deals_drawn', 'public')} deals, seed sha256 {card.get('seed_sha256', '?')[:16]}...; "
              f"the candidate ran {card.get('candidate', {}).get('runs', '?')}"
              + ("" if card["comparable"] else "; NOT COMPARABLE")]
    if card.get("points_meaning"):
        footer.append(f"points (scorecard.txt): {card['points_meaning']}")
    fig.text(0.01, 0.01, "\n".join(footer), fontsize=7, color="#555555", va="bottom")
    fig.tight_layout(rect=(0, 0.03 * len(footer), 1, 1))
    return fig


# ---------------------------------------------------------------------- CLI
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cardenvs benchmark", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="Forms of --agent: docs/benchmark.md. Protocols: "
                                            + ", ".join(load_protocol(g).name for g in GAME_NAMES
                                                        if _protocol_files(g))
                                            + ". Check a run: cardenvs benchmark verify DIR [--sample N].")
    parser.add_argument("--game", required=True, help=games_help())
    parser.add_argument("--agent", help="the agent to place: a registered name, module.path:attr, "
                                        "exec:path=PROGRAM, onnx:path=FILE, policy:path=FILE.npz, ...")
    parser.add_argument("--quick", action="store_true", help="the protocol's quick deal counts (minutes)")
    parser.add_argument("--out", help="folder for scorecard.json/txt/png, record.jsonl.gz and timing.json "
                                      "(default: runs/benchmark/<game>-<agent>-<UTC time>; every run writes them)")
    parser.add_argument("--workers", type=int, default=1, help="processes (2 uses both cores of a 2-core machine)")
    parser.add_argument("--ray-address", dest="ray_address", metavar="ADDRESS|auto|local",
                        help="play the deals as Ray tasks on a cluster (docs/scale_out.md)")
    parser.add_argument("--chunks", metavar="FOLDER", help="save finished chunks of deals there; a rerun with "
                                                           "the same folder plays only the rest (not on secret deals)")
    parser.add_argument("--no-progress", action="store_false", dest="progress", help="no progress bar")
    parser.add_argument("--deals", type=int, help="custom: this many deals against each opponent (not comparable)")
    parser.add_argument("--opponents", help="custom: a comma-separated subset of the suite (not comparable)")
    parser.add_argument("--seed", type=int, help="replay the deals of a run whose seed its scorecard revealed "
                                                  "(marked a replay, not comparable)")
    parser.add_argument("--protocol", type=int, dest="version", metavar="N",
                        help="the protocol's version (default: the latest); v1's deals are public")
    parser.add_argument("--time-control", metavar="PER_DECISION,BASE,INCREMENT", type=_time_control,
                        help="custom: a candidate process's clock in seconds (not comparable); the protocol's: "
                             "5,120,0.05 (5 s a decision at most, 120 s for the run plus 0.05 s a decision)")
    parser.add_argument("--allow-env", action="store_true", help="let a candidate that reads the env (every "
                        "hand) play, in this process, on a scorecard marked not comparable")
    parser.add_argument("--build-ladder", action="store_true",
                        help="play the reference agents' round robin and write the ladder (maintainers)")
    return parser


def _time_control(text: str) -> TimeControl:
    try:
        per_decision, base, increment = (float(x) for x in text.split(","))
        control = TimeControl(per_decision, base, increment)
        control.check()
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"expected PER_DECISION,BASE,INCREMENT in seconds ({error})") from None
    return control


def default_out(game: str, agent: str) -> Path:
    """Where a run without ``--out`` writes: every run leaves its scorecard and its record."""
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in agent)[:40]
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return Path("runs") / "benchmark" / f"{canonical_game(game)}-{name}-{stamp}"


def verify_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="cardenvs benchmark verify",
        description="Replay a benchmark run from its record (the seed it revealed, every opponent's move recomputed, "
                    "every result rescored) and check that it reproduces its scorecard.json byte for byte; exit 1 "
                    "naming the first episode or field that differs.")
    parser.add_argument("folder", help="a benchmark run's --out folder (scorecard.json, record.jsonl.gz)")
    parser.add_argument("--sample", type=int, help="recompute the opponents' moves in this many random episodes "
                                                   "only (every result is still recomputed)")
    parser.add_argument("--no-progress", action="store_false", dest="progress", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        verdict = verify(args.folder, sample=args.sample, progress=args.progress)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{verdict.message} ({verdict.seconds:.0f} s)" if verdict.ok else f"FAILED: {verdict.message}")
    return 0 if verdict.ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["verify"]:
        return verify_main(argv[1:])
    args = build_parser().parse_args(argv)
    settings = BenchmarkSettings(level="quick" if args.quick else "full", workers=args.workers,
                                 progress=args.progress, deals=args.deals, seed=args.seed,
                                 ray_address=args.ray_address, chunks=args.chunks, version=args.version,
                                 allow_env=args.allow_env, time_control=args.time_control,
                                 opponents=args.opponents.split(",") if args.opponents else None)
    try:
        if args.workers < 1:
            raise ValueError(f"--workers: expected an int >= 1, got {args.workers}")
        check_ray_address(args.ray_address)
        if args.build_ladder == bool(args.agent):
            raise ValueError("give --agent SPEC (or, to rebuild the reference ladder, --build-ladder)")
        if args.build_ladder:
            if args.out:
                check_writable(args.out)
            ladder = build_ladder(args.game, settings)
            out = Path(args.out) if args.out else Path(".")
            target = out / f"{canonical_game(args.game)}_v{ladder['protocol'].rsplit('-v', 1)[1]}_ladder.json"
            target.write_text(json.dumps(ladder, indent=1) + "\n")
            print("\n".join(f"{name:<24} {value:>8.1f}" for name, value in ladder["ratings"].items()))
            print(f"wrote {target}")
            return 0
        out = Path(args.out) if args.out else default_out(args.game, args.agent)
        if args.out:
            check_writable(out)

        def announce(line: str) -> None:  # every check has passed: the default folder is made only now
            check_writable(out)
            print(line, flush=True)
        card = run_benchmark(args.agent, args.game, settings, announce=announce)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_scorecard(card))
    print(format_timing(card))
    written = write_scorecard(card, out)
    print(f"wrote {', '.join(f'{out}/{name}' for name in written)}; check it: cardenvs benchmark verify {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

