"""The sandbox of ``exec:`` bots (issue 42 items 1 and 6): each attack runs as a real bot through the harness.

A bot reports what it found as one JSON line on its standard error (``log=FILE``): the only way out of the
sandbox besides its answers. Where a test shows an attack that works without the sandbox (``sandbox=false``),
that control proves the bot really looked.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from test_bot_protocol import assert_no_process_with, processes_with

from cardenvs.agents.registry import make_agent
from cardenvs.agents.sandbox import Limits, kill_sandbox, popen_sandboxed, sandbox_available, sandboxed_command
from cardenvs.train.evaluate import evaluate_agents

OK, WHY = sandbox_available()
pytestmark = pytest.mark.skipif(not OK, reason=WHY)
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "bots"

HEAD = f"#!{sys.executable}\nimport json, os, sys, time\n"
REPORT = "sys.stderr.write(json.dumps(found) + '\\n'); sys.stderr.flush()\n"
PLAY = """
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "act":
        print(message["legal"][0], flush=True)
"""


@pytest.fixture
def write_bot(tmp_path):
    """A bot script from its body (run before it plays); no process with its path outlives the test."""

    def write(name: str, body: str) -> Path:
        path = tmp_path / f"{name}.py"
        path.write_text(HEAD + body + PLAY)
        path.chmod(0o755)
        return path

    yield write
    assert_no_process_with(str(tmp_path))


def play(spec: str, deals: int = 1, **settings) -> dict:
    result = evaluate_agents([spec, "random"], game="ring_rang", deals=deals, **settings)
    return next(row for row in result["table"] if row["agent"] == spec)


def reports(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]


SNOOP = """
found = {"pids": [], "cmdline": [], "environ": [], "own_environ": dict(os.environ)}
for pid in os.listdir("/proc"):
    if pid.isdigit():
        found["pids"].append(int(pid))
        for kind in ("cmdline", "environ"):
            try:
                found[kind].append(open(f"/proc/{pid}/{kind}", "rb").read().decode(errors="replace"))
            except OSError:
                pass
""" + REPORT


def run_harness(spec: str, secret: str) -> dict:
    """``play`` in a fresh harness process whose argv and environment hold ``secret``, as a private
    ``--seed`` would be (``/proc/PID/environ`` shows a process's environment as it started)."""
    script = ("import json, sys\nfrom cardenvs.train.evaluate import evaluate_agents\n"
              f"result = evaluate_agents([{spec!r}, 'random'], game='ring_rang', deals=1)\n"
              "print(json.dumps(result['table']))\n")
    env = {**os.environ, "CARDENVS_TEST_SECRET": secret}
    out = subprocess.run([sys.executable, "-c", script, "--seed", secret], env=env, capture_output=True, text=True,
                         timeout=300, check=True).stdout
    return next(row for row in json.loads(out.splitlines()[-1]) if row["agent"] == spec)


def test_a_bot_sees_no_other_process_and_no_harness_environment(write_bot, tmp_path):
    """Issue 42 item 1: a bot read ``/proc/<parent>/cmdline`` for ``--seed``. In the sandbox it sees only its
    own PID namespace: no argv of the harness, no variable of the harness's environment."""
    secret = f"secret-{uuid.uuid4().hex}"
    bot = write_bot("snoop", SNOOP)
    log = tmp_path / "snoop.log"
    assert run_harness(f"exec:path={bot},log={log}", secret)["forfeits"] == 0
    seen = reports(log)
    assert seen
    for found in seen:
        assert max(found["pids"]) < 10  # a namespace of its own: bwrap's init (1), the bot (2), ...
        everything = "\0".join(found["cmdline"] + found["environ"]) + json.dumps(found["own_environ"])
        assert secret not in everything and "CARDENVS_TEST_SECRET" not in everything
        assert not any("evaluate_agents" in c for c in found["cmdline"]), found["cmdline"]
        assert set(found["own_environ"]) <= {"PATH", "HOME", "LANG", "PWD"} and found["own_environ"]["HOME"] == "/tmp"
    # the control: without the sandbox the same bot reads the harness's argv and environment
    log.unlink()
    assert run_harness(f"exec:path={bot},log={log},sandbox=false", secret)["forfeits"] == 0
    assert all(secret in "\0".join(found["environ"]) and secret in "\0".join(found["cmdline"])
               for found in reports(log))


def test_a_bot_finds_no_secret_in_the_harness_temporary_folders(write_bot, tmp_path):
    """The temporary folders are private: a file the harness writes there is out of the bot's sight (files
    elsewhere stay readable, read-only: the harness keeps its seed out of every file)."""
    secret = f"secret-{uuid.uuid4().hex}"
    mine = tmp_path / "seed.txt"
    mine.write_text(secret)
    shared = Path(tempfile.gettempdir()) / f"cardenvs-test-{uuid.uuid4().hex}.txt"
    shared.write_text(secret)
    body = f"""
found = {{"hits": [], "files": 0}}
secret = {secret[:12]!r} + {secret[12:]!r}  # not the secret in one piece: this file is visible to itself
def look(path):
    found["files"] += 1
    try:
        if secret in open(path, errors="replace").read(1 << 20):
            found["hits"].append(path)
    except OSError:
        pass
for root, _, files in os.walk({str(tmp_path)!r}):  # the test's own folder, all of it
    for name in files:
        look(os.path.join(root, name))
for folder in ("/tmp", "/var/tmp", "/dev/shm", {tempfile.gettempdir()!r}):  # the top of the temporary folders
    try:
        names = os.listdir(folder)
    except OSError:
        continue
    for name in names:
        if os.path.isfile(os.path.join(folder, name)):
            look(os.path.join(folder, name))
for path in ({str(mine)!r}, {str(shared)!r}):
    try:
        found["hits"].append(open(path).read())
    except OSError:
        pass
""" + REPORT
    bot = write_bot("seeker", body)
    log = tmp_path / "seeker.log"
    try:
        assert play(f"exec:path={bot},log={log},timeout=30")["forfeits"] == 0
        seen = reports(log)
        assert seen and all(found["hits"] == [] for found in seen), seen
        log.unlink()
        assert play(f"exec:path={bot},log={log},timeout=30,sandbox=false")["forfeits"] == 0  # the control
        assert all(found["hits"] for found in reports(log))
    finally:
        shared.unlink()


def test_a_bot_cannot_write_outside_its_tmp(write_bot, tmp_path):
    targets = [tmp_path / "escape.txt", Path("/var/tmp") / f"cardenvs-escape-{uuid.uuid4().hex}",
               Path.cwd() / f"cardenvs-escape-{uuid.uuid4().hex}"]
    body = f"""
found = {{"wrote": [], "tmp": False}}
for path in {[str(t) for t in targets]!r}:
    try:
        with open(path, "w") as file:
            file.write("escaped")
        found["wrote"].append(path)
    except OSError:
        pass
with open("/tmp/mine.txt", "w") as file:
    file.write("private")
found["tmp"] = open(os.path.expanduser("~/mine.txt")).read() == "private"
""" + REPORT
    bot = write_bot("writer", body)
    log = tmp_path / "writer.log"
    try:
        assert play(f"exec:path={bot},log={log}")["forfeits"] == 0
        assert not any(t.exists() for t in targets)  # whatever it wrote (in its own tmpfs) is gone
        assert all(found["tmp"] for found in reports(log))
    finally:
        for t in targets:
            t.unlink(missing_ok=True)


def test_a_double_forked_setsid_daemon_dies_with_the_bot(write_bot):
    """Issue 42 item 6: only the bot's process group was killed, so a ``setsid`` grandchild lived on."""
    marker = f"cardenvs-daemon-{uuid.uuid4().hex}"
    body = f"""
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(120)", {marker!r}])
    os._exit(0)
os.wait()
"""
    bot = write_bot("daemon", body)
    assert play(f"exec:path={bot}", deals=2)["forfeits"] == 0
    assert_no_process_with(marker)


def test_a_fork_bomb_stops_at_the_process_limit(write_bot, tmp_path):
    body = """
found = {"children": 0, "error": ""}
try:
    while found["children"] < 3000:  # bounded, should the limit fail
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        found["children"] += 1
except OSError as error:
    found["error"] = str(error)
""" + REPORT
    bot = write_bot("bomb", body)
    log = tmp_path / "bomb.log"
    assert play(f"exec:path={bot},log={log}")["forfeits"] == 0  # the harness and the run are fine
    seen = reports(log)
    assert seen and all(found["children"] < Limits().processes and found["error"] for found in seen), seen


def test_a_memory_hog_is_stopped_and_forfeits(write_bot):
    bot = write_bot("hog", "hog = bytearray(3 << 30)\n")  # over the 2 GiB address space
    row = play(f"exec:path={bot}")
    assert row["forfeits"] == row["episodes"]
    assert all("exited with code 1" in reason for reason in row["forfeit_reasons"]), row["forfeit_reasons"]


def test_the_network_is_off_unless_asked_for(write_bot, tmp_path):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        port = server.getsockname()[1]
        body = f"""
import socket
found = {{"connected": False}}
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    found["connected"] = True
except OSError as error:
    found["error"] = str(error)
""" + REPORT
        bot = write_bot("caller", body)
        log = tmp_path / "caller.log"
        assert play(f"exec:path={bot},log={log}")["forfeits"] == 0
        assert not any(found["connected"] for found in reports(log))
        log.unlink()
        assert play(f"exec:path={bot},log={log},network=true")["forfeits"] == 0  # asked for: it connects
        assert all(found["connected"] for found in reports(log))


C_BOT = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static char line[1 << 17];
int main(void) {
    while (fgets(line, sizeof line, stdin)) {
        if (!strstr(line, "\"type\":\"act\"")) continue;
        char *legal = strstr(line, "\"legal\":[");
        printf("%ld\n", strtol(legal + 9, NULL, 10));
        fflush(stdout);
    }
    return 0;
}
"""


@pytest.mark.parametrize("language", ["python", "node", "c"])
def test_bots_in_python_node_and_c_run_in_the_sandbox(language, tmp_path):
    if language == "python":
        program = EXAMPLES / "random_bot.py"
    elif language == "node":
        if shutil.which("node") is None:
            pytest.skip("node is not installed")
        program = EXAMPLES / "random_bot.js"
    else:
        compiler = shutil.which("gcc") or shutil.which("cc")
        if compiler is None:
            pytest.skip("no C compiler")
        (tmp_path / "bot.c").write_text(C_BOT)
        program = tmp_path / "cbot"
        subprocess.run([compiler, "-O1", "-o", str(program), str(tmp_path / "bot.c")], check=True)
    if language != "c":  # a copy of its own: another run of the example bot must not count as left behind
        copy = tmp_path / program.name
        shutil.copy(program, copy)
        copy.chmod(0o755)
        program = copy
    spec = f"exec:path={program}"
    agent = make_agent(spec, "ring_rang", seed=0)
    assert agent.sandboxed and agent.sandbox_mechanism == WHY
    assert play(spec, deals=2)["forfeits"] == 0
    assert_no_process_with(str(program))


@pytest.mark.slow
def test_a_sandboxed_bot_in_pool_workers(write_bot):
    bot = write_bot("pool", "")
    assert play(f"exec:path={bot}", deals=4, workers=2)["forfeits"] == 0


@pytest.mark.parametrize("delay", [0.0, 0.01, 0.3])
def test_the_sandbox_api(delay):
    """``sandboxed_command``/``popen_sandboxed``/``kill_sandbox`` on their own: the limits are checked, the
    command is a list, a killed sandbox takes its processes with it, however early it is killed."""
    with pytest.raises(ValueError, match="processes"):
        Limits(processes=0)
    command = sandboxed_command(["/bin/true"], limits=Limits(memory=1 << 30))
    assert command[-1] == "/bin/true" and "--unshare-net" in command and "--as=1073741824" in command
    assert "--unshare-net" not in sandboxed_command(["/bin/true"], network=True)
    marker = f"cardenvs-api-{uuid.uuid4().hex}"
    code = "import os, time\nif os.fork() == 0:\n    os.setsid()\ntime.sleep(120)\n"
    process = popen_sandboxed([sys.executable, "-c", code, marker], stdout=subprocess.DEVNULL)
    try:
        time.sleep(delay)  # 0: bwrap is still setting up
    finally:
        kill_sandbox(process)
    assert_no_process_with(marker)
    for _ in range(3):  # a sandbox left alone a while: both processes run, then are killed
        process = popen_sandboxed([sys.executable, "-c", code, marker], stdout=subprocess.DEVNULL)
        try:
            deadline = time.time() + 10
            while _pythons(marker) < 2 and time.time() < deadline:
                time.sleep(0.01)
        finally:
            kill_sandbox(process)
        assert_no_process_with(marker)


def _pythons(marker: str) -> int:
    """How many of the processes with ``marker`` run Python (not bwrap, whose argv holds it too)."""
    count = 0
    for pid in processes_with(marker):
        try:
            count += Path(f"/proc/{pid}/cmdline").read_bytes().startswith(sys.executable.encode())
        except OSError:
            pass
    return count
