"""Bots in any language over the line protocol (``exec:path=PROGRAM``, issue 33 item 3).

Misbehaving bots (crashing, slow, silent, garbage-printing, illegal-playing, flooding, forking) forfeit
episodes and never crash or hang the harness, and no process outlives the run. A bot sees only its seat.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from games import ALL_GAMES
from test_search import rang_env, ring_rang_env, swapped_rang, swapped_ring_rang

from cardenvs.agents.bot_process import PROTOCOL_VERSION, ProcessBot, make_exec_bot
from cardenvs.agents.registry import make_agent
from cardenvs.train.evaluate import evaluate_agents

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "bots"

# The body of a Python bot; PIDS is a file each process appends its pid to (the leak check reads it).
PRELUDE = f"""#!{sys.executable}
import json, os, sys, time
with open(os.environ.get("BOT_PIDS", "/dev/null"), "a") as f:
    f.write(f"{{os.getpid()}}\\n")
"""
LOOP = """
acts = 0
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] != "act":
        continue
    acts += 1
"""
BOTS = {
    "good": LOOP + "    print(message['legal'][0], flush=True)\n",
    "crash": LOOP + "    if acts == 3: sys.exit(3)\n    print(message['legal'][0], flush=True)\n",
    "slow": LOOP + "    if acts == 3: time.sleep(30)\n    print(message['legal'][0], flush=True)\n",
    "garbage": LOOP + "    print('hello, a nice card' if acts == 2 else message['legal'][0], flush=True)\n",
    "illegal": LOOP + "    bad = [i for i, m in enumerate(message['action_mask']) if not m]\n"
                      "    print(bad[0] if acts == 2 else message['legal'][0], flush=True)\n",
    "flood": LOOP + "    sys.stdout.write('7' * 200000); sys.stdout.flush(); time.sleep(30)\n",
    "deaf": "time.sleep(60)\n",  # never reads: the harness's writes must not block it forever
    "forker": "import subprocess\n"
              "child = subprocess.Popen(['sleep', '300'])\n"
              "with open(os.environ['BOT_PIDS'], 'a') as f:\n    f.write(f'{child.pid}\\n')\n"
              + LOOP + "    print(message['legal'][0], flush=True)\n",
    "json_answer": LOOP + "    print(json.dumps({'action': message['legal'][-1]}), flush=True)\n",
}


@pytest.fixture
def bot(tmp_path, monkeypatch):
    """Write a bot script by name; its processes' pids go to a file checked for leaks after the test."""
    pids = tmp_path / "pids.txt"
    pids.touch()
    monkeypatch.setenv("BOT_PIDS", str(pids))

    def write(kind: str) -> str:
        path = tmp_path / f"{kind}_bot.py"
        path.write_text(PRELUDE + BOTS[kind])
        path.chmod(0o755)
        return str(path)

    yield write
    deadline = time.time() + 5
    alive = [p for p in map(int, pids.read_text().split()) if _alive(p)]
    while alive and time.time() < deadline:
        time.sleep(0.1)
        alive = [p for p in alive if _alive(p)]
    assert not alive, f"processes left behind: {alive}"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _row(result, spec):
    return next(row for row in result["table"] if row["agent"] == spec)


@pytest.mark.parametrize("kind, reason", [
    ("crash", "exited with code 3"), ("slow", "no answer within 0.5 s"), ("garbage", "not an action index"),
    ("illegal", "played illegal action"), ("flood", "longer than"), ("deaf", "no answer within"),
])
@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_a_misbehaving_bot_forfeits_and_leaves_no_process(bot, kind, reason, workers):
    spec = f"exec:path={bot(kind)},timeout=0.5,startup={0.5 if kind == 'deaf' else 5}"
    start = time.perf_counter()
    result = evaluate_agents([spec, "random"], game="ring_rang", deals=2, workers=workers)
    row = _row(result, spec)
    assert 1 <= row["forfeits"] <= row["episodes"] - row["wins"]  # a forfeited episode is never won
    assert any(reason in text for text in row["forfeit_reasons"]), row["forfeit_reasons"]
    assert _row(result, "random")["wins"] >= row["forfeits"]  # each forfeit is the other side's win
    assert time.perf_counter() - start < 120


def test_a_bot_runs_the_gauntlet(bot):
    result = evaluate_agents([f"exec:path={bot('good')}"], game="ring_rang", deals=1, gauntlet=True, workers=2)
    assert len(result["rows"]) == 4 and all(row["forfeits"] == 0 for row in result["rows"])


def test_the_bots_children_are_stopped_too(bot):
    spec = f"exec:path={bot('forker')}"
    result = evaluate_agents([spec, "random"], game="rang", deals=2)
    assert _row(result, spec)["forfeits"] == 0  # the fixture checks the forked `sleep`s are gone


def test_a_good_bot_and_a_json_answer_play(bot):
    for kind in ("good", "json_answer"):
        spec = f"exec:path={bot(kind)}"
        result = evaluate_agents([spec, "rules_basic"], game="rang", num_players=3, deals=2)
        assert _row(result, spec)["forfeits"] == 0 and result["decisions"] > 20


def test_the_harness_killed_mid_run_leaves_no_bot(bot, tmp_path):
    """A harness killed with SIGKILL cannot clean up: the bots die with it (PR_SET_PDEATHSIG)."""
    spec = f"exec:path={bot('slow')},timeout=60"
    script = f"from cardenvs.train.evaluate import evaluate_agents\nevaluate_agents([{spec!r}, 'random'], deals=50)\n"
    harness = subprocess.Popen([sys.executable, "-c", script])
    pids = Path(os.environ["BOT_PIDS"])
    deadline = time.time() + 60
    while not pids.read_text().strip() and time.time() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    harness.kill()
    harness.wait()


def test_bad_specs_fail_before_any_deal(tmp_path):
    plain = tmp_path / "not_executable.py"
    plain.write_text("print(1)\n")
    cases = {"exec": "give the program", f"exec:path={tmp_path}/nope": "no program at",
             f"exec:path={plain}": "not executable; chmod",
             f"exec:path={sys.executable},timeout=0": "timeout must be"}
    for spec, message in cases.items():
        with pytest.raises(ValueError, match=message):
            evaluate_agents([spec, "random"], deals=1)


def _acts(log: Path) -> list[dict]:
    return [m for m in map(json.loads, log.read_text().splitlines()) if m["type"] == "act"]


RECORDER = LOOP.replace("for line in sys.stdin:", "for line in sys.stdin:\n    open(os.environ['BOT_LOG'], 'a')"
                                                  ".write(line)") + "    print(message['legal'][0], flush=True)\n"


@pytest.mark.parametrize("game", ALL_GAMES)
@pytest.mark.parametrize("seed, steps", [(1, 9), (2, 21), (3, 30)])
def test_a_bot_never_receives_another_seats_hidden_cards(tmp_path, monkeypatch, game, seed, steps):
    """Swap cards the seat to act cannot see: every byte the bot receives stays the same; and no seed is sent."""
    env = ring_rang_env(seed, steps) if game == "ring_rang" else rang_env(seed, steps)
    twin = swapped_ring_rang(env) if game == "ring_rang" else swapped_rang(env)
    if twin is None:
        pytest.skip("no swappable cards in this position")
    path = tmp_path / "recorder.py"
    path.write_text(PRELUDE + RECORDER)
    path.chmod(0o755)
    received = []
    for number, table in enumerate((env, twin)):
        log = tmp_path / f"log{number}.txt"
        monkeypatch.setenv("BOT_LOG", str(log))
        agent = make_exec_bot(str(path), game=game, seed=0)
        agent.reset(seed=123)
        try:
            agent.observe_env(table)
            obs = table.observe(table.agent_selection)
            assert agent.act(obs) == int(obs["action_mask"].nonzero()[0][0])
        finally:
            agent.close()
        received.append(log.read_text())
    assert received[0] == received[1]
    messages = [json.loads(line) for line in received[0].splitlines()]
    assert [m["type"] for m in messages] == ["hello", "start", "act", "bye"]
    # the one seed a bot is sent is its own (reset's, here 123): in a run, a one-way hash of the run's seed
    assert messages[1]["seed"] == 123 and received[0].count("seed") == 1
    act = messages[2]
    assert set(act) == {"type", "protocol", "game", "seat", "observation", "action_mask", "legal", "text"}
    assert act["protocol"] == PROTOCOL_VERSION and act["game"] == game
    assert act["text"] == env.unwrapped.observation_text(env.agent_selection)
    assert f"player_{act['seat']}" == env.agent_selection


@pytest.mark.slow
@pytest.mark.parametrize("example", ["random_bot.py", "random_bot.js"])
def test_the_example_bots_play_both_games(example):
    if example.endswith(".js") and shutil.which("node") is None:
        pytest.skip("node is not installed")
    spec = f"exec:path={EXAMPLES / example}"
    for game in ALL_GAMES:
        result = evaluate_agents([spec, "random"], game=game, deals=3, workers=2)
        assert _row(result, spec)["forfeits"] == 0
        again = evaluate_agents([spec, "random"], game=game, deals=3)
        assert [r["wins"] for r in again["table"]] == [r["wins"] for r in result["table"]]  # reproducible


def test_a_bot_object_copies_start_their_own_process(bot):
    agent = make_agent(f"exec:path={bot('good')}", "ring_rang", seed=0)
    assert isinstance(agent, ProcessBot) and agent.process is None  # building starts nothing
    import copy

    twin = copy.deepcopy(agent)
    assert twin.process is None
    agent.close()
    agent.close()  # twice is fine
