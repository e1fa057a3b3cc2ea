"""A scorecard no candidate can fake (issue 42): secret deals, outside code out of process, verifiable runs.

Each test carries an attack: the harness patcher, a reader of the env, a forged or relabelled record, a harness
killed with its workers. The sandbox's own attacks (reading /proc, files, double forks, fork bombs) are in
tests/test_sandbox.py.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cardenvs.agents.base import Agent
from cardenvs.train import benchmark, evaluate
from cardenvs.train.benchmark import BenchmarkSettings, load_protocol, run_benchmark, scorecard, write_scorecard
from cardenvs.train.benchmark_record import verify

GAME = "ring_rang"
ROOT = Path(__file__).resolve().parent.parent


class FirstLegal(Agent):
    name = "first_legal"

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


def _settings(**changes) -> BenchmarkSettings:
    return BenchmarkSettings(**{"deals": 2, "opponents": ["random", "rules_basic"], "progress": False, **changes})


def _run(agent, folder: Path, **changes) -> dict:
    card = run_benchmark(agent, GAME, _settings(**changes))
    write_scorecard(card, folder)
    return card


def _verify_command(folder: Path, *flags: str) -> subprocess.CompletedProcess:
    """``cardenvs benchmark verify``, in a fresh process as a reader of the scorecard would run it."""
    return subprocess.run([sys.executable, "-m", "cardenvs.cli", "benchmark", "verify", str(folder), "--no-progress",
                           *flags], capture_output=True, text=True, timeout=300)


def _rewrite_record(folder: Path, change) -> None:
    path = folder / "record.jsonl.gz"
    lines = [json.loads(line) for line in gzip.decompress(path.read_bytes()).splitlines()]
    change(lines)
    path.write_bytes(gzip.compress("".join(json.dumps(line) + "\n" for line in lines).encode()))


# -------------------------------------------------------------- secret deals
def test_each_run_draws_its_own_secret_seed_commits_to_it_then_reveals_it():
    lines: list[str] = []
    cards = [run_benchmark("random", GAME, _settings(opponents=["random"], deals=1), announce=lines.append)
             for _ in range(2)]
    assert cards[0]["seed"] != cards[1]["seed"] and all(card["deals_drawn"] == "secret" for card in cards)
    for card, line in zip(cards, lines, strict=True):
        digest = hashlib.sha256(f"cardenvs-benchmark-seed:{card['seed']}".encode()).hexdigest()
        assert card["seed_sha256"] == digest and digest in line and str(card["seed"]) not in line
    # what makes a scorecard comparable: secret deals on the protocol's own counts, with a candidate that sees
    # only its seat; a replay of revealed deals, v1's public deals and a reader of the env are not
    protocol, rows = load_protocol(GAME), cards[0]["rows"]
    how = {"form": "agent of the package", "runs": "in process", "verified": True, "sees_env": False}
    assert scorecard(protocol, BenchmarkSettings(level="quick"), "random", rows, 7, "secret", how)["comparable"]
    for drawn, reason in (("replay", "replay"), ("public", "public deals")):
        card = scorecard(protocol, BenchmarkSettings(level="quick", seed=7), "random", rows, 7, drawn, how)
        assert not card["comparable"] and any(reason in r for r in card["not_comparable"])
    card = scorecard(protocol, BenchmarkSettings(), "random", rows, 7, "secret", {**how, "sees_env": True})
    assert not card["comparable"] and "--allow-env" in card["not_comparable"][0]


def test_v1_stays_loadable_and_its_public_deals_replay_but_are_not_comparable():
    card = run_benchmark("random", GAME, _settings(opponents=["random"], deals=1, version=1))
    assert card["protocol"] == "ring_rang-v1" and card["seed"] == load_protocol(GAME, 1).seed
    assert card["deals_drawn"] == "public" and not card["comparable"]


def test_a_secret_run_cannot_keep_chunks(tmp_path):
    with pytest.raises(ValueError, match="cannot be resumed"):
        run_benchmark("random", GAME, _settings(chunks=str(tmp_path / "c")))


# ------------------------------------------------------- outside candidates
PATCHER = '''
import numpy as np
import cardenvs.train.evaluate as harness

# the attack of issue 42: patch the harness on import so that this agent's seats win every episode
harness._outcome = lambda config, seats, episode, *_: (episode.rewards, list(range(len(seats))))
harness.play_episode.__globals__["checked_action"] = lambda action, mask: int(np.flatnonzero(mask)[0])


def make(**_):
    return lambda observation: int(np.flatnonzero(observation["action_mask"])[0])
'''


def test_an_imported_harness_patcher_patches_only_its_own_process(tmp_path, monkeypatch):
    (tmp_path / "patcher.py").write_text(PATCHER)
    (tmp_path / "clean.py").write_text(PATCHER.split("# the attack")[0] + "\n\n" + PATCHER.split("\n\n\n")[-1])
    monkeypatch.chdir(tmp_path)
    original = (evaluate._outcome, evaluate.checked_action)
    patched = run_benchmark("patcher:make", GAME, _settings(seed=99))
    assert (evaluate._outcome, evaluate.checked_action) == original  # nothing reached this process
    assert "patcher" not in sys.modules
    assert patched["candidate"]["form"] == "import path" and "process" in patched["candidate"]["runs"]
    assert patched["candidate"]["runs"] != "in process"
    clean = run_benchmark("clean:make", GAME, _settings(seed=99))
    assert patched["rows"] == clean["rows"]  # the patcher earned exactly what the same moves earn
    assert all(row["forfeits"] == 0 for row in patched["rows"])
    assert patched["rows"][1]["win_rate"] < 1


def test_agents_that_read_the_env_are_refused_unless_allowed(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="reads the env, every hand included"):
        run_benchmark("oracle:iterations=4", GAME, _settings())
    (tmp_path / "peeker.py").write_text(
        "import numpy as np\n\n\nclass Peeker:\n    needs_env = True\n\n    def observe_env(self, env):\n"
        "        self.env = env\n\n    def act(self, observation):\n"
        "        return int(np.flatnonzero(observation['action_mask'])[0])\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="reads the env"):
        run_benchmark("peeker:Peeker", GAME, _settings())
    # outside code smuggled in as a package agent's rollout would run in the harness: refused too
    (tmp_path / "smuggled.py").write_text(PATCHER)
    with pytest.raises(ValueError, match="rollout=smuggled:make names code from outside the package"):
        run_benchmark("pimc:iterations=4,rollout=smuggled:make", GAME, _settings())
    assert "smuggled" not in sys.modules
    card = run_benchmark("oracle:iterations=4", GAME, _settings(deals=1, opponents=["random"], allow_env=True))
    assert not card["comparable"] and card["candidate"]["sees_env"]
    assert benchmark.main(["--game", GAME, "--agent", "oracle", "--no-progress", "--out", str(tmp_path / "o")]) == 2


def test_an_object_from_python_is_trusted_not_verified():
    card = run_benchmark(FirstLegal(), GAME, _settings(deals=1, opponents=["random"]))
    assert card["candidate"] == {"form": "Python object", "runs": "in process", "verified": False,
                                 "sees_env": False, "trust": "trusted code, not verified"}
    assert "trusted code, not verified" in benchmark.format_scorecard(card)


# ------------------------------------------------------------------- verify
def test_a_run_verifies_byte_for_byte_in_a_fresh_process(tmp_path):
    bot = f"exec:path={ROOT / 'examples' / 'bots' / 'random_bot.py'}"
    _run(bot, tmp_path / "bot", workers=2)
    done = _verify_command(tmp_path / "bot")
    assert done.returncode == 0 and "verified: 8 episodes replayed (8 with every opponent's move" in done.stdout
    done = _verify_command(tmp_path / "bot", "--sample", "3")
    assert done.returncode == 0 and "(3 with every opponent's move recomputed)" in done.stdout
    # the same revealed seed replays the same scorecard, marked a replay
    card = json.loads((tmp_path / "bot" / "scorecard.json").read_text())
    again = run_benchmark(bot, GAME, _settings(seed=card["seed"]))
    assert again["rows"] == card["rows"] and again["replay"] and not card["replay"]


def test_verify_replays_a_forfeit_and_refuses_one_forged_for_an_opponent(tmp_path):
    crash = tmp_path / "crash.py"
    crash.write_text(f"#!{sys.executable}\nimport sys\nfor line in sys.stdin:\n    sys.exit(3)\n")
    crash.chmod(0o755)
    card = _run(f"exec:path={crash}", tmp_path / "run", opponents=["random"])
    assert card["rows"][0]["forfeits"] == 4
    assert verify(tmp_path / "run", progress=False).ok

    def opponent_forfeits(lines):
        episode = lines[2]
        episode["forfeit"] = [1, "played illegal action 0"]  # seat 1: the opponent's, in arrangement 0
        episode["actions"] = episode["actions"][:1]
    clean = _run(FirstLegal(), tmp_path / "forged", opponents=["random"])
    assert clean["rows"][0]["forfeits"] == 0
    _rewrite_record(tmp_path / "forged", opponent_forfeits)
    verdict = verify(tmp_path / "forged", progress=False)
    assert not verdict.ok and "only the candidate can" in verdict.message


def test_verify_catches_a_patched_harness(tmp_path, monkeypatch):
    real = evaluate._outcome

    def cheat(config, seats, episode, game=None):  # what a patched harness reports: the candidate's seats won
        points, _ = real(config, seats, episode, game)
        return points, [s for s, label in enumerate(seats) if label == "first_legal"]
    monkeypatch.setattr(evaluate, "_outcome", cheat)
    # revealed deals, so that the test is the same every time: on secret ones the candidate sometimes honestly
    # won every episode against the first opponent, and the difference showed in a later row
    card = _run(FirstLegal(), tmp_path / "run", seed=12345)
    assert all(row["win_rate"] == 1 for row in card["rows"])
    monkeypatch.undo()
    honest = _run(FirstLegal(), tmp_path / "honest", seed=12345)
    first = next(i for i, row in enumerate(honest["rows"]) if row["win_rate"] < 1)
    done = _verify_command(tmp_path / "run")
    assert done.returncode == 1 and f"FAILED: scorecard.json differs from the replay: rows[{first}]." in done.stdout


def test_verify_catches_a_forged_move_a_swapped_opponent_and_another_seed(tmp_path):
    # revealed deals where decision 1 of episode 0 is seat 1's, the opponent's (a secret seed could give it to the
    # candidate, whose recorded move verify takes as it stands)
    _run(FirstLegal(), tmp_path / "run", seed=12345)
    folder = tmp_path / "run"
    saved = {name: (folder / name).read_bytes() for name in ("scorecard.json", "record.jsonl.gz")}

    def forge_a_move(lines):
        lines[2]["actions"][1] = (lines[2]["actions"][1] + 1) % 64  # decision 1 is seat 1's: the opponent's
    _rewrite_record(folder, forge_a_move)
    verdict = verify(folder, progress=False)
    assert not verdict.ok and "match random, episode 0" in verdict.message and "decision 1" in verdict.message

    def relabel(lines):  # the record made against random, presented as one against rules_strong
        lines[1]["opponent"] = "rules_strong"
    (folder / "record.jsonl.gz").write_bytes(saved["record.jsonl.gz"])
    _rewrite_record(folder, relabel)
    card = json.loads(saved["scorecard.json"])
    card["rows"][0]["opponent"] = "rules_strong"
    (folder / "scorecard.json").write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
    verdict = verify(folder, progress=False)
    assert not verdict.ok and "match rules_strong, episode 0" in verdict.message

    (folder / "scorecard.json").write_bytes(saved["scorecard.json"])
    (folder / "record.jsonl.gz").write_bytes(saved["record.jsonl.gz"])

    def garble(lines):
        lines[3]["actions"] = "17"
    _rewrite_record(folder, garble)
    with pytest.raises(ValueError, match="not a benchmark record"):
        verify(folder, progress=False)

    (folder / "record.jsonl.gz").write_bytes(saved["record.jsonl.gz"])
    card = json.loads(saved["scorecard.json"])
    card["seed"] += 1
    (folder / "scorecard.json").write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
    verdict = verify(folder, progress=False)
    assert not verdict.ok and "does not hash to the commitment" in verdict.message


# ----------------------------------------------------------- process hygiene
def _marked(mark: str) -> list[int]:
    """Processes whose environment or command line holds ``mark``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if mark.encode() in (entry / "environ").read_bytes() + (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


def _cmdline(pid: int) -> str:
    """The process's command line and its state and parent (a failure then says what was left, and why)."""
    try:
        status = dict(line.split(":\t", 1) for line in (Path("/proc") / str(pid) / "status").read_text().splitlines()
                      if ":\t" in line)
        command = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()[:300]
        return f"{command} [state {status.get('State', '?')}, parent {status.get('PPid', '?')}]"
    except OSError:
        return "(gone)"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_sigkill_of_a_harness_with_workers_leaves_no_process(tmp_path):
    mark = f"cardenvs-test-mark-{os.getpid()}-{time.time_ns()}"
    slow = tmp_path / f"{mark}.py"
    slow.write_text(f"#!{sys.executable}\nimport sys, time\nfor line in sys.stdin:\n    if '\"act\"' in line:\n"
                    "        time.sleep(0.05)\n        print(__import__('json').loads(line)['legal'][0], flush=True)\n")
    slow.chmod(0o755)
    harness = subprocess.Popen([sys.executable, "-m", "cardenvs.cli", "eval", "--game", GAME, "--agents",
                                f"exec:path={slow}", "random", "--deals", "400", "--workers", "2", "--no-progress"],
                               env={**os.environ, "CARDENVS_TEST_MARK": mark}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while len(_marked(mark)) < 4 and time.monotonic() < deadline:  # the harness, 2 workers, their bots
            time.sleep(0.2)
        assert len(_marked(mark)) >= 4
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait()
    # killed while a bot's bwrap starts, a harness once left bwrap's child waiting forever (agents/sandbox.py,
    # _guarded); a failure shows each leftover's state and parent
    deadline = time.monotonic() + 10
    while _marked(mark) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = {pid: _cmdline(pid) for pid in _marked(mark)}
    assert left == {}


# ------------------------------------------------------------- time control
def test_a_slow_bot_runs_out_of_its_clock_and_forfeits_the_rest(tmp_path):
    slow = tmp_path / "slow.py"
    slow.write_text(f"#!{sys.executable}\nimport json, sys, time\nfor line in sys.stdin:\n"
                    "    message = json.loads(line)\n    if message['type'] == 'act':\n        time.sleep(0.2)\n"
                    "        print(message['legal'][0], flush=True)\n")
    slow.chmod(0o755)
    control = benchmark.TimeControl(per_decision=1.0, base=0.5, increment=0.01)
    card = _run(f"exec:path={slow}", tmp_path / "run", opponents=["random"], time_control=control)
    row = card["rows"][0]
    assert row["forfeits"] == row["episodes"] == 4 and "out of time" in row["forfeit_reasons"][0]
    assert card["time_control"] == control.as_dict() and not card["comparable"]
    assert "time control: 1 s a decision at most" in (tmp_path / "run" / "scorecard.txt").read_text()
    assert verify(tmp_path / "run", progress=False).ok


def test_the_protocols_clock_bounds_a_run():
    control = load_protocol(GAME).time_control
    assert control is not None and control.per_decision <= 5 and control.worst_case(100_000) < 2 * 3600
    with pytest.raises(ValueError, match="per_decision must be a number of seconds in \\(0, 60\\]"):
        benchmark.TimeControl(per_decision=3600).check()


@pytest.mark.slow
@pytest.mark.parametrize("folder", sorted((ROOT / "docs" / "benchmark").glob("*_quick")), ids=lambda p: p.name)
def test_the_published_reference_scorecards_verify(folder):
    """Every scorecard docs/benchmark.md publishes replays to the same bytes (40 episodes' opponents recomputed)."""
    verdict = verify(folder, sample=40, progress=False)
    assert verdict.ok, verdict.message
    card = json.loads((folder / "scorecard.json").read_text())
    assert card["comparable"] and card["deals_drawn"] == "secret" and card["candidate"]["verified"]
