"""Bots in any language: a separate process speaking JSON lines on stdin/stdout (``exec:path=PROGRAM``).

The protocol (version :data:`PROTOCOL_VERSION`) is documented in ``docs/bot_protocol.md``. In short: the
harness writes one JSON object per line to the bot's stdin; for ``{"type": "act", ...}`` the bot answers one
line holding the action index, and it ignores every other type (``hello``, ``start``, ``bye``, and any a
later version adds). The bot sees only what its seat may see: its observation, its legal actions and the
same view as text. No seed is sent.

On Linux the program runs in a sandbox (:mod:`cardenvs.agents.sandbox`: namespaces of its own, a fresh
``/proc`` that shows no other process, a read-only file system with a private ``/tmp``, no network, resource
limits); ``sandbox=false`` turns it off, and where none is available (macOS, no user namespaces) the bot runs
without one and a one-line warning says so, once per process. :attr:`ProcessBot.sandboxed` and
:attr:`ProcessBot.sandbox_mechanism` say how it ran.

The process is started without a shell, with a cleared environment (``PATH``, ``HOME``, ``LANG``), in a
session of its own, and dies with the harness (``PR_SET_PDEATHSIG`` on Linux). Closing the agent kills every
process of the bot: in the sandbox, the PID namespace (a double-forked ``setsid`` daemon included); without
it, the bot's session and the descendants found under it. A bot that crashes, stays silent past its
``timeout``, prints garbage or a line over :data:`MAX_LINE` bytes, or plays an illegal action forfeits the
episode (:class:`Forfeit`); the next episode starts it afresh. Anything the bot writes besides its answer
(a second line, an early or late answer) is thrown away before the next ``act``. Its standard error goes
to ``log=FILE``, at most :data:`LOG_CAP` bytes per agent, through a pipe the harness drains.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np

from cardenvs.games import default_game, game_spec

from .base import Agent
from .outside import Forfeit
from .sandbox import (
    Limits,
    descendants,
    dies_with_this_process,
    kill_all,
    kill_sandbox,
    popen_sandboxed,
    sandbox_available,
)
from .time_control import Clock

PROTOCOL_VERSION = 1
MAX_LINE = 1 << 16  # bytes of an answer before its newline: 65,536 is accepted, 65,537 is garbage
LOG_CAP = 1 << 20  # bytes of standard error written to log=FILE per agent (one per seat and worker)
MAX_TIMEOUT = 60.0  # seconds: the most a decision may take
MAX_STARTUP = 3600.0
_warned = False


def _warn_once(reason: str) -> None:
    global _warned
    if not _warned:
        _warned = True
        print(f"cardenvs: exec bots run without a sandbox here ({reason})", file=sys.stderr, flush=True)


def _number(x: float) -> float | int:
    """A JSON number as short as it can be: most observation entries are 0 or 1."""
    return int(x) if float(x).is_integer() else float(x)


def _copy_capped(source: IO[bytes], path: str, cap: int, written: list[int]) -> None:
    """Append what ``source`` gives to ``path`` until ``written[0]`` reaches ``cap``; read and drop the rest, so
    the bot never blocks on a full pipe."""
    try:
        with open(path, "ab") as log:
            while chunk := source.read(65536):
                room = cap - written[0]
                if room > 0:
                    log.write(chunk[:room])
                    log.flush()
                    written[0] += min(room, len(chunk))
                    if written[0] >= cap:
                        log.write(f"\n[cardenvs: this bot's log reached {cap} bytes; the rest is dropped]\n".encode())
                        log.flush()
    except (OSError, ValueError):
        pass
    finally:
        try:
            while source.read(65536):
                pass
            source.close()
        except (OSError, ValueError):
            pass


class ProcessBot(Agent):
    """An agent whose moves come from a program (any language) over the line protocol.

    ``path``: the program, an executable file (checked here); ``command``: an argv list run instead of
    ``[path]`` (e.g. ``[sys.executable, "-m", "some.module"]``); ``timeout``: seconds per decision, at most
    :data:`MAX_TIMEOUT`; ``startup``: seconds added to the first decision of a fresh process; ``log``: a file
    the bot's standard error is appended to (at most :data:`LOG_CAP` bytes per agent); ``sandbox``: ``None``
    (the default) runs it in the sandbox where one is available and warns once where not, ``True`` requires
    it, ``False`` turns it off; ``network``: let the sandboxed bot use the network; ``limits``: its resource
    limits; ``env``: variables given to the bot besides ``PATH``, ``HOME`` and ``LANG``; ``label``: the name
    its forfeit reasons start with (default: the program's file name); ``visible``: more files or folders the
    sandboxed bot may read although they lie in a temporary folder it cannot see (the program and every
    ``command`` argument naming a file are visible already).

    After construction :attr:`sandboxed` (bool) and :attr:`sandbox_mechanism` (``"bubblewrap 0.11.0 (PATH)"``,
    or why not: ``"off: sandbox=false"``, ``"unavailable: ..."``) say how the bot runs.
    """

    name = "exec"
    needs_env = True  # to know its seat and the text view of the table (built from that seat's view only)
    out_of_process = True  # the harness seeds it one way (evaluate.agent_seed): its seed is sent to it
    clock: Clock | None = None  # the run's time control, set by the harness (agents/time_control.py)

    def __init__(self, path: str | None = None, game: str | None = None, seed: int | None = None,
                 timeout: float = 5.0, startup: float = 10.0, log: str | None = None, num_players: int | None = None,
                 *, sandbox: bool | None = None, network: bool = False, limits: Limits | None = None,
                 command: Sequence[str] | None = None, env: Mapping[str, str] | None = None,
                 label: str | None = None, visible: Sequence[str] = ()):
        super().__init__(seed)
        if command is None and path is None:
            raise ValueError("exec: give the program, e.g. exec:path=examples/bots/random_bot.py")
        if command is not None and (isinstance(command, (str, bytes)) or not command
                                    or not all(isinstance(a, str) for a in command)):
            raise ValueError(f"exec: command must be a non-empty list of strings, got {command!r}")
        if limits is not None and not isinstance(limits, Limits):
            raise ValueError(f"exec: limits must be a cardenvs.agents.sandbox.Limits, got {limits!r}")
        if path is not None:
            path = str(path)
            program = Path(path).expanduser()
            if not program.is_file():
                raise ValueError(f"exec: no program at {path!r}; give path=PROGRAM, an executable file")
            if not os.access(program, os.X_OK):
                raise ValueError(f"exec: {path!r} is not executable; chmod +x it (a script needs a #! line)")
            self.program = str(program.resolve())
        else:
            self.program = str(command[0])
        self.command = list(command) if command is not None else [self.program]
        for key, value, most in (("timeout", timeout, MAX_TIMEOUT), ("startup", startup, MAX_STARTUP)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= most:
                raise ValueError(f"exec: {key} must be a number of seconds in (0, {most:g}], got {value!r}")
        for key, value in (("sandbox", sandbox), ("network", network)):
            if value is not None and not isinstance(value, bool):
                raise ValueError(f"exec: {key} must be true or false, got {value!r}")
        self.game = game or default_game()
        self.num_players = game_spec(self.game).players_or_fixed(num_players)
        self.timeout = float(timeout)
        self.startup = float(startup)
        self.log = self._check_log(log)
        self.network = bool(network)
        self.limits = limits or Limits()
        self.env = {str(k): str(v) for k, v in (env or {}).items()}
        self.label = label or Path(self.program).name
        self.visible = [self.program, *(a for a in self.command[1:] if os.path.isfile(a)), *map(str, visible)]
        available, mechanism = sandbox_available()
        if sandbox is False:
            self.sandboxed, self.sandbox_mechanism = False, "off: sandbox=false"
        elif available:
            self.sandboxed, self.sandbox_mechanism = True, mechanism
        elif sandbox:
            raise ValueError(f"exec: sandbox=true, but {mechanism}")
        else:
            self.sandboxed, self.sandbox_mechanism = False, f"unavailable: {mechanism}"
            _warn_once(mechanism)
        self.process: subprocess.Popen | None = None
        self._pidfd: int | None = None
        self._log_thread: threading.Thread | None = None
        self._buffer = b""
        self._log_written = [0]
        self._seat = -1
        self._text = ""
        self._new_episode = True

    @staticmethod
    def _check_log(log: Any) -> str | None:
        """``log=FILE`` as an absolute path; a folder or a file in a missing folder is a one-line ValueError."""
        if log is None:
            return None
        target = Path(str(log)).expanduser()
        if target.is_dir():
            raise ValueError(f"exec: log={str(log)!r} is a folder; give a file for the bot's standard error")
        if not target.parent.is_dir():
            raise ValueError(f"exec: log={str(log)!r}: no folder {str(target.parent)!r} to write it in")
        return str(target.resolve())

    # ------------------------------------------------------------- process
    def _start(self) -> None:
        stderr = subprocess.PIPE if self.log else subprocess.DEVNULL
        home = "/tmp" if self.sandboxed else os.environ.get("HOME", "/tmp")
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
               "LANG": os.environ.get("LANG", "C.UTF-8"), **self.env}
        pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": stderr, "bufsize": 0}
        try:
            if self.sandboxed:
                self.process = popen_sandboxed(self.command, network=self.network, limits=self.limits,
                                               visible=self.visible, env=self.env, **pipes)
            else:
                self.process = subprocess.Popen(self.command, shell=False, start_new_session=True, env=env,
                                                preexec_fn=dies_with_this_process(), close_fds=True, **pipes)
        except OSError as error:
            raise ValueError(f"exec: cannot start {self.program}: {error.strerror or error}") from None
        if self.log:
            self._log_thread = threading.Thread(
                target=_copy_capped, args=(self.process.stderr, self.log, LOG_CAP, self._log_written), daemon=True,
                name=f"exec-log-{self.process.pid}")
            self._log_thread.start()
        try:
            self._pidfd = os.pidfd_open(self.process.pid)
        except (AttributeError, OSError):
            self._pidfd = None
        os.set_blocking(self.process.stdin.fileno(), False)
        os.set_blocking(self.process.stdout.fileno(), False)
        self._buffer = b""
        self._send({"type": "hello", "protocol": PROTOCOL_VERSION, "game": self.game,
                    "num_players": self.num_players}, time.perf_counter() + self.startup)

    def _deadline(self, fresh: bool) -> float:
        """The moment (``time.perf_counter``) by which the decision starting now must be answered; ``fresh``:
        the process was just started, so ``startup`` is added."""
        limit = self.timeout if self.clock is None else min(self.timeout, self.clock.available())
        self._late = (f"no answer within {limit:g} s" if limit == self.timeout or self.clock is None
                      else self.clock.out_of_time())
        return time.perf_counter() + limit + (self.startup if fresh else 0.0)

    def close(self) -> None:
        """End the process and everything it started; safe to call twice (and called on garbage collection)."""
        process, self.process = self.process, None
        pidfd, self._pidfd = self._pidfd, None
        if process is None:
            return
        try:
            if process.poll() is None:
                try:
                    os.write(process.stdin.fileno(), b'{"type": "bye"}\n')
                except OSError:
                    pass
            process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(0.2)
        except subprocess.TimeoutExpired:
            pass
        if self.sandboxed:  # the guardian kills bwrap and its PID namespace's init, and the kernel the rest
            kill_sandbox(process)
        else:  # the bot's whole session, and its descendants that left it (a detached grandchild escapes)
            victims = descendants(process.pid)
            if process.poll() is None:
                victims.insert(0, process.pid)
            kill_all(victims)
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            process.wait()
        process.stdout.close()
        if pidfd is not None:
            os.close(pidfd)
        thread, self._log_thread = self._log_thread, None
        if thread is not None:
            thread.join(1.0)  # the log is complete when close returns (unless a process outside holds the pipe)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["process"], state["_pidfd"], state["_buffer"] = None, None, b""  # a copy starts its own process
        state["_log_thread"] = None
        state["_log_written"] = [0]
        return state

    def _fail(self, reason: str) -> None:
        self.close()
        raise Forfeit(f"{self.label}: {reason}")

    # ------------------------------------------------------------------ io
    def _send(self, message: dict[str, Any], deadline: float) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        fd = self.process.stdin.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_WRITE)
            while data:
                left = deadline - time.perf_counter()
                if left <= 0 or not selector.select(left):
                    self._fail(f"did not read its input in time ({self._late})")
                try:
                    data = data[os.write(fd, data):]
                except BlockingIOError:
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    self._fail(self._exit_text())

    def _drain(self) -> None:
        """Throw away whatever the bot wrote since its last answer (a second line, an early answer)."""
        self._buffer = b""
        fd = self.process.stdout.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                return
            if not chunk:
                self._fail(self._exit_text())

    def _read_line(self, deadline: float) -> bytes:
        """The bot's next line (without its newline); what follows it in the same read is thrown away."""
        fd = self.process.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ, "out")
            if self._pidfd is not None:
                selector.register(self._pidfd, selectors.EVENT_READ, "exit")
            while (end := self._buffer.find(b"\n")) < 0:
                if len(self._buffer) > MAX_LINE:
                    self._fail(f"answered a line longer than {MAX_LINE} bytes")
                left = deadline - time.perf_counter()
                events = selector.select(left) if left > 0 else []
                if not events:
                    self._fail(self._late)
                try:
                    chunk = os.read(fd, MAX_LINE + 2)
                except BlockingIOError:  # nothing to read: the bot itself exited (a child holds its output)
                    if any(key.data == "exit" for key, _ in events):
                        self._fail(self._exit_text())
                    continue
                if not chunk:
                    self._fail(self._exit_text())
                self._buffer += chunk
        if end > MAX_LINE:
            self._fail(f"answered a line longer than {MAX_LINE} bytes")
        line, self._buffer = self._buffer[:end], b""
        return line

    def _exit_text(self) -> str:
        try:
            code = self.process.wait(1.0)
        except subprocess.TimeoutExpired:
            return "closed its output"
        if code < 0:
            return f"was killed by signal {-code}"
        if self.sandboxed and code > 128:  # the sandbox reports a signal as 128 + its number
            return f"was killed by signal {code - 128}"
        return f"exited with code {code}"

    # --------------------------------------------------------------- agent
    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._new_episode = True
        self._episode_seed = seed

    def observe_env(self, env: Any) -> None:
        agent = env.agent_selection
        self._seat = int(agent.rsplit("_", 1)[1])
        self._text = env.unwrapped.observation_text(agent)

    def act(self, observation: dict[str, np.ndarray]) -> int:
        mask = np.asarray(observation["action_mask"])
        if self.clock is not None and self.clock.available() <= 0:
            raise Forfeit(f"{self.label}: {self.clock.out_of_time()}")
        fresh = self.process is None or self.process.poll() is not None
        if fresh:
            if self.process is not None:
                self._fail(self._exit_text())
            self._start()
        began = time.perf_counter()
        deadline = self._deadline(fresh=fresh)
        try:
            if self._new_episode:
                self._send({"type": "start", "seat": self._seat, "seed": getattr(self, "_episode_seed", None)},
                           deadline)
                self._new_episode = False
            self._drain()
            self._send({
                "type": "act", "protocol": PROTOCOL_VERSION, "game": self.game, "seat": self._seat,
                "observation": [_number(x) for x in np.asarray(observation["observation"]).ravel().tolist()],
                "action_mask": [int(x) for x in mask.tolist()],
                "legal": np.flatnonzero(mask).tolist(),
                "text": self._text,
            }, deadline)
            line = self._read_line(deadline).strip()
            try:
                text = line.decode("ascii")
                answer = json.loads(text) if text.startswith(("{", "[")) else int(text)
                if isinstance(answer, dict):
                    answer = answer["action"]
                if isinstance(answer, bool) or not isinstance(answer, int):
                    raise ValueError
            except (UnicodeDecodeError, ValueError, KeyError, TypeError):
                self._fail(f"answered {line[:60]!r}, not an action index")
        finally:  # every decision is on the clock, a failed one too; a program's start is not
            if self.clock is not None:
                self.clock.charge(max(0.0, time.perf_counter() - began - (self.startup if fresh else 0.0)))
        return answer


def make_exec_bot(path: str | None = None, game: str | None = None, seed: int | None = None, timeout: float = 5.0,
                  startup: float = 10.0, log: str | None = None, num_players: int | None = None,
                  sandbox: bool | None = None, network: bool = False) -> ProcessBot:
    """Registry factory of ``exec:path=PROGRAM[,timeout=SECONDS,startup=SECONDS,log=FILE,sandbox=false,network=true]``.

    ``timeout``: seconds the bot has for each decision (at most 60); ``startup``: extra seconds for the first
    one after the program starts; ``log``: a file its stderr is appended to (else discarded; at most 1 MiB);
    ``sandbox``: ``false`` runs it outside the sandbox (default: inside, where Linux allows); ``network``:
    ``true`` lets the sandboxed bot use the network.
    """
    if path is None:
        raise ValueError("exec: give the program, e.g. exec:path=examples/bots/random_bot.py")
    return ProcessBot(str(path), game or default_game(), seed=seed, timeout=timeout, startup=startup, log=log,
                      num_players=num_players, sandbox=sandbox, network=network)
