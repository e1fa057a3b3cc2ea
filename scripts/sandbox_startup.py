"""What starting a program in a sandbox costs (issue 42 item 1): bwrap against util-linux unshare.

A benchmark, not a test. Each row starts the program ``--runs`` times with ``subprocess`` and prints the
median and the fastest start-to-exit time; the numbers are in agents/sandbox.py and docs/bot_protocol.md.

    python scripts/sandbox_startup.py [--runs 40]

Rows: the program alone; bwrap with the namespaces, read-only root, private tmpfs folders and fresh /proc
only; the full sandbox the harness starts (``popen_sandboxed``: the same plus ``prlimit``, and as root the
user namespace's maps and ``setpriv``); ``unshare`` with the same namespaces (no read-only root, no private
folders). Each for ``/bin/true`` and for ``python -c pass``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time

from cardenvs.agents.sandbox import _probe, popen_sandboxed, sandbox_available


def timed(start, runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        begin = time.perf_counter()
        process = start()
        if process.wait() != 0:
            raise SystemExit(f"failed: {process.args}")
        times.append(time.perf_counter() - begin)
    return statistics.median(times) * 1000, min(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    runs = parser.parse_args().runs
    ok, why = sandbox_available()
    print(f"sandbox: {why}")
    bwrap = [_probe()[2] or "bwrap", "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
             "--unshare-net", "--unshare-cgroup-try", "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
             "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--clearenv", "--"]
    unshare = ["unshare", "--user", "--map-root-user", "--pid", "--fork", "--mount-proc", "--ipc", "--uts", "--net",
               "--kill-child", "--"]
    true = shutil.which("true") or "/bin/true"
    for program in ([true], [sys.executable, "-c", "pass"]):
        rows = {"plain": lambda p=program: subprocess.Popen(p)}
        if ok:
            rows["bwrap (namespaces, ro /, tmpfs)"] = lambda p=program: subprocess.Popen(bwrap + p)
            rows["popen_sandboxed (the harness's)"] = lambda p=program: popen_sandboxed(p)
        if shutil.which("unshare"):
            rows["unshare (namespaces only)"] = lambda p=program: subprocess.Popen(unshare + p)
        for name, start in rows.items():
            median, fastest = timed(start, runs)
            print(f"{' '.join(program)[-16:]:>16}  {name:34} median {median:6.1f} ms   fastest {fastest:6.1f} ms")


if __name__ == "__main__":
    main()
