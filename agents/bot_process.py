"""Bots in any language: a separate process speaking JSON lines on stdin/stdout (``exec:path=PROGRAM``).

The protocol (version :data:`PROTOCOL_VERSION`) is documented in ``docs/bot_protocol.md``. In short: the
harness writes one JSON object per line to the bot's stdin; for ``{"type": "act", ...}`` the bot answers one
line holding the action index, and it ignores every other type (``hello``, ``start``, ``bye``, and any a
later version adds). The bot sees only what its seat may see: its observation, its legal actions and the
same view as text. No seed is sent: a benchmark's deals are a function of its public seed, so a seed could
point a bot to the other hands.

The process is started without a shell, in a session of its own (its children are stopped with it) and
with the harness as its parent of record: it is killed when the harness dies (``PR_SET_PDEATHSIG`` on
Linux), when the agent is closed, and when it misbehaves. A bot that crashes, stays silent past its
``timeout``, prints garbage or plays an illegal action forfeits the episode (:class:`Forfeit`); the next
episode starts it afresh.
"""

from __future__ import annotations

import ctypes
import json
import os
import selectors
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np

from cardenvs.games import default_game, game_spec

from .base import Agent
from .outside import Forfeit

PROTOCOL_VERSION = 1
MAX_LINE = 1 << 16  # bytes: a longer answer is garbage
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:  # pragma: no cover (runs in the child between fork and exec)
    """Linux: this process is killed (SIGKILL) when its parent dies, however the parent dies."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _number(x: float) -> float | int:
    """A JSON number as short as it can be: most observation entries are 0 or 1."""
    return int(x) if float(x).is_integer() else float(x)


class ProcessBot(Agent):
    """An agent whose moves come from a program (any language) over the line protocol."""

    name = "exec"
    needs_env = True  # to know its seat and the text view of the table (built from that seat's view only)
    out_of_process = True  # the harness seeds it one way (evaluate.agent_seed): its seed is sent to it

    def __init__(self, path: str, game: str, seed: int | None = None, timeout: float = 5.0,
                 startup: float = 10.0, log: str | None = None, num_players: int | None = None,
                 command: list[str] | None = None):
        super().__init__(seed)
        program = Path(path).expanduser()
        if not program.is_file():
            raise ValueError(f"exec: no program at {path!r}; give path=PROGRAM, an executable file")
        if not os.access(program, os.X_OK):
            raise ValueError(f"exec: {path!r} is not executable; chmod +x it (a script needs a #! line)")
        for key, value in (("timeout", timeout), ("startup", startup)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 3600:
                raise ValueError(f"exec: {key} must be a number of seconds in (0, 3600], got {value!r}")
        self.program = str(program.resolve())
        self.command = list(command) if command else [self.program]  # argv: the program, or what hosts an agent
        self.game = game
        self.num_players = game_spec(game).players_or_fixed(num_players)
        self.timeout = float(timeout)
        self.startup = float(startup)
        self.log = log
        self.process: subprocess.Popen | None = None
        self._buffer = b""
        self._seat = -1
        self._text = ""
        self._new_episode = True

    # ------------------------------------------------------------- process
    def _start(self) -> None:
        stderr = open(self.log, "ab") if self.log else subprocess.DEVNULL  # noqa: SIM115 (closed below)
        try:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, shell=False,
                start_new_session=True, preexec_fn=die_with_parent, close_fds=True, bufsize=0)
        except OSError as error:
            raise ValueError(f"exec: cannot start {self.program}: {error.strerror or error}") from None
        finally:
            if self.log:
                stderr.close()
        os.set_blocking(self.process.stdin.fileno(), False)
        self._buffer = b""
        self._send({"type": "hello", "protocol": PROTOCOL_VERSION, "game": self.game,
                    "num_players": self.num_players}, time.perf_counter() + self.startup)

    def close(self) -> None:
        """End the process and everything it started; safe to call twice (and called on garbage collection)."""
        process, self.process = self.process, None
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
        try:
            os.killpg(process.pid, signal.SIGKILL)  # the bot's whole session: a script's children too
        except (ProcessLookupError, PermissionError):
            pass
        process.wait()
        process.stdout.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 (interpreter shutdown)
            pass

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["process"], state["_buffer"] = None, b""  # a copy starts its own process
        return state

    def _fail(self, reason: str) -> None:
        self.close()
        raise Forfeit(f"{Path(self.program).name}: {reason}")

    # ------------------------------------------------------------------ io
    def _send(self, message: dict[str, Any], deadline: float) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        fd = self.process.stdin.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_WRITE)
            while data:
                left = deadline - time.perf_counter()
                if left <= 0 or not selector.select(left):
                    self._fail(f"did not read its input within {self.timeout:g} s")
                try:
                    data = data[os.write(fd, data):]
                except BlockingIOError:
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    self._fail(self._exit_text())

    def _read_line(self, deadline: float) -> bytes:
        fd = self.process.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                if len(self._buffer) > MAX_LINE:
                    self._fail(f"answered a line longer than {MAX_LINE} bytes")
                left = deadline - time.perf_counter()
                if left <= 0 or not selector.select(left):
                    self._fail(f"no answer within {self.timeout:g} s")
                chunk = os.read(fd, 65536)
                if not chunk:
                    self._fail(self._exit_text())
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def _exit_text(self) -> str:
        try:
            code = self.process.wait(1.0)
        except subprocess.TimeoutExpired:
            return "closed its output"
        return f"exited with code {code}" if code >= 0 else f"was killed by signal {-code}"

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
        if self.process is None or self.process.poll() is not None:
            if self.process is not None:
                self._fail(self._exit_text())
            self._start()
            deadline = time.perf_counter() + self.startup + self.timeout
        else:
            deadline = time.perf_counter() + self.timeout
        if self._new_episode:
            self._send({"type": "start", "seat": self._seat, "seed": getattr(self, "_episode_seed", None)}, deadline)
            self._new_episode = False
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
        return answer


def make_exec_bot(path: str | None = None, game: str | None = None, seed: int | None = None, timeout: float = 5.0,
                  startup: float = 10.0, log: str | None = None, num_players: int | None = None) -> ProcessBot:
    """Registry factory of ``exec:path=PROGRAM[,timeout=SECONDS,startup=SECONDS,log=FILE]``.

    ``timeout``: seconds the bot has for each decision; ``startup``: extra seconds for the first one after
    the program starts; ``log``: a file its stderr is appended to (else discarded).
    """
    if path is None:
        raise ValueError("exec: give the program, e.g. exec:path=examples/bots/random_bot.py")
    return ProcessBot(str(path), game or default_game(), seed=seed, timeout=timeout, startup=startup, log=log,
                      num_players=num_players)
