"""Every benchmark run is checkable: the record of its decisions, and ``cardenvs benchmark verify DIR``.

A run writes ``record.jsonl.gz`` beside its scorecard: one line naming the run, then per match one line naming
the opponent and per episode one line with every action played, in order (and the forfeit that ended it, if
any). The seed is revealed in ``scorecard.json`` and must hash to the commitment published before the first
deal. ``verify`` replays the record in a fresh process, through the harness's own seeding and scoring
(:func:`cardenvs.train.evaluate.play_record`): the candidate's moves come from the record, every opponent's
move is recomputed (they are seeded agents of the package) and compared with the record, every result is
recomputed from the cards, and the scorecard is rebuilt and compared with ``scorecard.json`` byte for byte.
A patched harness (a result it did not earn), a forged record (a move nobody made, an opponent that
"forfeited") or a swapped opponent is named by the first episode or field that differs.

    cardenvs benchmark verify runs/bench_mybot
    cardenvs benchmark verify runs/bench_mybot --sample 200   # recompute the opponents in 200 episodes only

What verify cannot check: the candidate's forfeits for time (a clock is not replayable: they are the harness's
word, and they only cost the candidate) and how the candidate ran (the scorecard's ``candidate`` entry).
"""

from __future__ import annotations

import gzip
import io
import json
import random
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cardenvs.agents.base import Agent
from cardenvs.agents.outside import Forfeit
from cardenvs.agents.registry import make_agent
from cardenvs.agents.time_control import TimeControl
from cardenvs.games import game_spec

from .evaluate import Record, agent_labels, arrangements, make_env, play_record, progress_bar, spec_of

RECORD_FILE = "record.jsonl.gz"
RECORD_VERSION = 1


# ------------------------------------------------------------------- writing
def write_record(card: dict[str, Any], folder: Path) -> str:
    """``record.jsonl.gz`` of a finished run (the same bytes for the same run: no time in the gzip header)."""
    lines = [{"record": RECORD_VERSION, "protocol": card["protocol"], "protocol_sha256": card["protocol_sha256"],
              "agent": card["agent"], "seed_sha256": card["seed_sha256"]}]
    for match in card["record"]:
        lines.append({"opponent": match["opponent"], "deals": match["deals"], "episodes": len(match["episodes"])})
        for rec in match["episodes"]:
            line: dict[str, Any] = {"deal": rec.deal, "arrangement": rec.arrangement, "actions": rec.actions}
            if rec.forfeit_seat is not None:
                line["forfeit"] = [rec.forfeit_seat, rec.forfeit_reason]
            lines.append(line)
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as packed:
        packed.write("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).encode())
    (folder / RECORD_FILE).write_bytes(buffer.getvalue())
    return RECORD_FILE


def read_record(folder: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The record's head and its matches (``{"opponent", "deals", "episodes": [line, ...]}``); ValueError if
    it is not a record."""
    try:
        lines = [json.loads(line) for line in gzip.decompress((folder / RECORD_FILE).read_bytes()).splitlines()]
        head, matches, rest = lines[0], [], lines[1:]
        if head.get("record") != RECORD_VERSION:
            raise ValueError(f"record version {head.get('record')!r}")
        while rest:
            match, rest = rest[0], rest[1:]
            count = int(match["episodes"])
            match["episodes"], rest = rest[:count], rest[count:]
            if len(match["episodes"]) != count or not all(map(_is_episode, match["episodes"])):
                raise ValueError(f"match {match.get('opponent')!r}: a line that is not an episode")
            matches.append(match)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as error:
        raise ValueError(f"{folder / RECORD_FILE}: not a benchmark record ({error})") from None
    return head, matches


def _is_episode(line: Any) -> bool:
    """``{"deal": int, "arrangement": int, "actions": [int, ...]}`` with at most ``"forfeit": [seat, reason]``."""
    def is_int(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool)
    forfeit = line.get("forfeit", [0, ""]) if isinstance(line, dict) else None
    return (isinstance(line, dict) and set(line) <= {"deal", "arrangement", "actions", "forfeit"}
            and is_int(line.get("deal")) and is_int(line.get("arrangement")) and isinstance(line.get("actions"), list)
            and all(map(is_int, line["actions"])) and isinstance(forfeit, list) and len(forfeit) == 2
            and is_int(forfeit[0]) and isinstance(forfeit[1], str))


# ------------------------------------------------------------------ verifying
class Mismatch(Exception):
    """The replay left the record: the message says where and how."""


class _Script:
    """One episode's recorded moves, consumed in order by the seats as they act."""

    def __init__(self, line: dict[str, Any]):
        self.actions: list[int] = list(line["actions"])
        self.forfeit = line.get("forfeit")
        self.at = 0

    def next(self, seat: int) -> int:
        if self.at < len(self.actions):
            self.at += 1
            return self.actions[self.at - 1]
        if self.forfeit and self.forfeit[0] == seat:
            raise Forfeit(self.forfeit[1])
        raise Mismatch(f"the record ends at decision {self.at} and the episode goes on")


class _Recorded(Agent):
    """A seat whose moves come from the record: the candidate's (it cannot be replayed: it is outside code)."""

    name = "recorded"

    def __init__(self, script: _Script, seat: int):
        super().__init__()
        self.script, self.seat = script, seat

    def act(self, observation: dict[str, Any]) -> int:
        return self.script.next(self.seat)


class _Checked(Agent):
    """An opponent played again: its move must be the recorded one."""

    def __init__(self, inner: Any, script: _Script, seat: int):
        super().__init__()
        self.inner, self.script, self.seat = inner, script, seat
        self.needs_env = bool(getattr(inner, "needs_env", False))
        self.name = inner.name

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed=seed)

    def observe_env(self, env: Any) -> None:
        self.inner.observe_env(env)

    def act(self, observation: dict[str, Any]) -> int:
        mine = int(self.inner.act(observation))
        recorded = self.script.next(self.seat)
        if mine != recorded:
            raise Mismatch(f"decision {self.script.at - 1}: the record has {self.inner.name} (seat {self.seat}) "
                           f"play {recorded}, and it plays {mine}")
        return mine


@dataclass
class Verdict:
    ok: bool
    message: str
    episodes: int  # replayed
    recomputed: int  # of them, with every opponent's move recomputed
    seconds: float


def verify(folder: str | Path, sample: int | None = None, progress: bool = True) -> Verdict:
    """Replay the run in ``folder`` and rebuild its scorecard (see the module's docstring)."""
    from .benchmark import (  # the scorecard's own code, so a replay is scored exactly as a run
        BenchmarkSettings,
        _match_config,
        _match_row,
        check_pins,
        load_protocol,
        scorecard,
        seed_commitment,
    )

    folder = Path(folder)
    start = time.perf_counter()
    try:
        text = (folder / "scorecard.json").read_text()
        card = json.loads(text)
    except (OSError, ValueError) as error:
        raise ValueError(f"{folder}: no scorecard.json to verify ({error})") from None
    needed = ("protocol", "protocol_sha256", "game", "agent", "seed", "seed_sha256", "deals_drawn", "protocol_level",
              "rows", "candidate", "cardenvs", "level")
    if not isinstance(card, dict) or any(key not in card for key in needed):
        raise ValueError(f"{folder}/scorecard.json: not a scorecard of a run that can be verified (protocol v2 on; "
                         f"it needs {', '.join(needed)})")
    head, matches = read_record(folder)
    if sample is not None and (isinstance(sample, bool) or not isinstance(sample, int) or sample < 1):
        raise ValueError(f"--sample: expected an int >= 1, got {sample!r}")

    def fail(message: str, episodes: int = 0, recomputed: int = 0) -> Verdict:
        return Verdict(False, message, episodes, recomputed, time.perf_counter() - start)

    if seed_commitment(card["seed"]) != card["seed_sha256"]:
        return fail(f"the revealed seed {card['seed']} does not hash to the commitment {card['seed_sha256']}")
    for key in ("protocol", "protocol_sha256", "agent", "seed_sha256"):
        if head.get(key) != card.get(key):
            return fail(f"the record's {key} {head.get(key)!r} is not the scorecard's {card.get(key)!r}")
    name, _, version = card["protocol"].rpartition("-v")
    protocol = load_protocol(card["game"], int(version))
    if protocol.sha256 != card["protocol_sha256"]:
        return fail(f"protocol {card['protocol']} here is not the file the run used (sha256 {protocol.sha256[:12]}... "
                    f"against {card['protocol_sha256'][:12]}...): verify with the cardenvs release of the run")
    check_pins(protocol)
    deals = {row["opponent"]: row["deals"] for row in card["rows"]}
    opponents = [m["opponent"] for m in matches]
    if opponents != [row["opponent"] for row in card["rows"]]:
        return fail(f"the record's matches {opponents} are not the scorecard's rows")
    custom = card.get("custom", [])
    settings = BenchmarkSettings(
        level=card["protocol_level"], progress=False,
        deals=int(_custom(custom, "deals")) if _custom(custom, "deals") else None,
        opponents=_custom(custom, "opponents").split(",") if _custom(custom, "opponents") else None,
        seed=card["seed"] if card["deals_drawn"] in ("replay", "custom") else None,
        time_control=(TimeControl(**card["time_control"]) if card.get("time_control") and protocol.time_control
                      and TimeControl(**card["time_control"]) != protocol.time_control else None))
    everything = [(m, i) for m, match in enumerate(matches) for i in range(len(match["episodes"]))]
    checked = set(everything) if sample is None else set(
        random.Random(secrets.randbits(64)).sample(everything, min(sample, len(everything))))
    bar = progress_bar(len(everything), progress, "verify", unit="episode")
    rows, replayed, recomputed = [], 0, 0
    try:
        for m, match in enumerate(matches):
            opponent = match["opponent"]
            config = _match_config(protocol, settings, [card["agent"], opponent], deals[opponent], card["seed"])
            config.workers = 1
            if match["deals"] != config.deals or len(match["episodes"]) != config.deals * len(arrangements(config)):
                return fail(f"match {opponent}: the record holds {len(match['episodes'])} episodes of "
                            f"{match['deals']} deals, the protocol plays {config.deals} deals", replayed, recomputed)
            records = []
            for i, (line, (episode, problem)) in enumerate(zip(match["episodes"], _replay(
                    config, match["episodes"], {i for (mm, i) in checked if mm == m}), strict=True)):
                replayed += 1
                recomputed += (m, i) in checked
                bar.update(1)
                if problem:
                    return fail(f"match {opponent}, episode {i} (deal {line['deal']}, arrangement "
                                f"{line['arrangement']}): {problem}", replayed, recomputed)
                records.append(episode)
            rows.append(_match_row(config, records, opponent)[0])
    finally:
        bar.close()
    rebuilt = scorecard(protocol, settings, card["agent"], rows, card["seed"], card["deals_drawn"], card["candidate"])
    rebuilt = {**rebuilt, "cardenvs": card["cardenvs"]}  # the version that ran it: a newer one still replays it
    if json.dumps(rebuilt, indent=1, sort_keys=True) + "\n" != text:
        return fail(f"scorecard.json differs from the replay: {_first_difference(card, rebuilt)}", replayed,
                    recomputed)
    return Verdict(True, f"verified: {replayed} episodes replayed ({recomputed} with every opponent's move "
                         f"recomputed), scorecard.json reproduced byte for byte", replayed, recomputed,
                   time.perf_counter() - start)


def _custom(custom: list[str], key: str) -> str | None:
    return next((item.split("=", 1)[1] for item in custom if item.startswith(f"{key}=")), None)


def _replay(config: Any, lines: list[dict[str, Any]], checked: set[int]) -> Iterator[tuple[Record, str]]:
    """Each episode of one match played again from its record line: (its Record, "" or what went wrong)."""
    env = make_env(config)
    layouts = arrangements(config)
    candidate = agent_labels(config.agents)[0]
    extra = game_spec(config.game).env_info(config.num_players)
    opponents: dict[tuple[str, int], Any] = {}
    try:
        for i, line in enumerate(lines):
            seats = layouts[line["arrangement"]] if 0 <= line["arrangement"] < len(layouts) else None
            if seats is None or not 0 <= line["deal"] < config.deals:
                yield Record(line.get("deal", -1), -1, [], [], [], [], False, 0), "no such deal or arrangement"
                continue
            script = _Script(line)
            if script.forfeit and seats[script.forfeit[0]] != candidate:
                yield Record(line["deal"], -1, [], [], [], [], False, 0), (
                    f"the record has seat {script.forfeit[0]} ({seats[script.forfeit[0]]}) forfeit: only the "
                    "candidate can")
                continue
            agents: list[Any] = []
            for seat, label in enumerate(seats):
                if label == candidate or i not in checked:
                    agents.append(_Recorded(script, seat))
                    continue
                inner = opponents.get((label, seat))
                if inner is None:
                    inner = opponents[(label, seat)] = make_agent(spec_of(label), config.game, seed=None, **extra)
                agents.append(_Checked(inner, script, seat))
            try:
                record = play_record(config, env, line["deal"], line["arrangement"], list(seats), agents)
            except Mismatch as error:
                yield Record(line["deal"], -1, [], [], [], [], False, 0), str(error)
                continue
            problem = ""
            if record.actions != script.actions:
                problem = (f"the record has {len(script.actions)} actions, the replay {len(record.actions)} "
                           f"(first difference at decision {_first_index(record.actions, script.actions)})")
            elif bool(script.forfeit) != (record.forfeit_seat is not None):
                problem = "the record's forfeit does not end the episode where the replay ends it"
            yield record, problem
    finally:
        for agent in opponents.values():
            agent.close()


def _first_index(a: list[int], b: list[int]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))


def _first_difference(saved: Any, rebuilt: Any, path: str = "") -> str:
    """Where two JSON values first differ, as ``rows[3].wins: 120 in the file, 118 replayed``."""
    if isinstance(saved, dict) and isinstance(rebuilt, dict):
        for key in sorted(set(saved) | set(rebuilt), key=lambda k: (k != "rows", k)):  # the results first
            if saved.get(key) != rebuilt.get(key):
                return _first_difference(saved.get(key), rebuilt.get(key), f"{path}.{key}" if path else key)
    elif isinstance(saved, list) and isinstance(rebuilt, list) and len(saved) == len(rebuilt):
        for i, (x, y) in enumerate(zip(saved, rebuilt, strict=True)):
            if x != y:
                return _first_difference(x, y, f"{path}[{i}]")
    return f"{path or 'the file'}: {json.dumps(saved)[:80]} in the file, {json.dumps(rebuilt)[:80]} replayed"
