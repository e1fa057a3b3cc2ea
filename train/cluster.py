"""Fan chunks of work out: over local processes (``--workers N``) or as Ray tasks on a cluster (``--ray-address``).

The evaluation harness, the gauntlet, ``cardenvs benchmark``, distillation's labelling and ``cardenvs exploit``'s
evaluation all split their work into chunk jobs and run them through :func:`fan_out`. A chunk's result is a pure
function of the job (the deals are functions of (seed, deal), every agent is reset with a seed of (seed, deal,
arrangement, seat)), so where it ran changes nothing: a Ray run's results equal a local run's, byte for byte
apart from timings.

Ray is imported only when an address is given (``pip install 'cardenvs[ray]'``). ``ADDRESS`` joins that cluster,
``auto`` the one ``ray start`` made on this machine (or ``RAY_ADDRESS``), ``local`` starts a Ray on this machine
for the run. A task lost with its node (raylet killed, node preempted) is retried, up to :data:`TASK_RETRIES`
times, on another node; a task that raises (a bad agent) fails the run at once, in one line, and the tasks still
queued are cancelled. Files named by an agent spec's ``path=`` (``policy:path=FILE``, ``onnx:path=FILE``,
``pimc:rollout=policy:path=FILE``, ``exec:path=PROGRAM``) travel with the tasks (:func:`shipped_files`), so the
nodes need no shared disk. docs/scale_out.md.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import signal
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from importlib import metadata
from pathlib import Path
from typing import Any

from cardenvs.agents.sandbox import die_with_parent

RAY_EXTRA = "pip install 'cardenvs[ray]'"
TASK_RETRIES = 3  # a task lost with its node runs again this many times (Ray's max_retries) before the run fails
_PATH_VALUE = re.compile(r'(?<![A-Za-z0-9_])path=("[^"]*"|[^,]+)')  # a quoted value may hold "," (registry.py)


def one_blas_thread() -> None:
    """Worker processes share the cores, so each gets one BLAS thread.

    A policy acting for a batch of worlds at once (``pimc:rollout=trained``) multiplies large matrices; in
    forked workers each BLAS would start a thread per core, and two such workers ran 4.3 times slower on
    2 cores than with one thread each. One row at a time (a policy playing) is too small to be threaded.
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)


def _start_worker(parent: int) -> None:
    """A local worker: it dies with the main process (SIGKILL included: nothing is left to start bots and block),
    one BLAS thread, and Ctrl-C left to the main process (which stops the workers)."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    one_blas_thread()


# ------------------------------------------------------------------ fanning out
def fan_out(function: Callable[[Any], Any], jobs: list[Any], workers: int,
            ray_address: str | None = None) -> Iterator[tuple[int, Any]]:
    """``(index, function(jobs[index]))`` of every job as it completes: in this process when ``workers`` is 1,
    over up to ``workers`` processes, or as Ray tasks on the cluster at ``ray_address``.

    Stopping early (an error, Ctrl-C, or the caller closing the iterator) stops the local workers at once; what
    has not run never runs.
    """
    if not jobs:  # e.g. a resumed run whose chunks are all saved: no pool of zero workers
        return
    if ray_address:
        yield from _ray_fan_out(function, jobs, ray_address)
    elif workers == 1:
        for index, job in enumerate(jobs):
            yield index, function(job)
    else:
        pool = ProcessPoolExecutor(min(workers, len(jobs)), initializer=_start_worker, initargs=(os.getpid(),))
        try:
            futures = {pool.submit(function, job): index for index, job in enumerate(jobs)}
            for future in as_completed(futures):
                yield futures[future], future.result()
        except BaseException:  # Ctrl-C, an error, or the caller stopping early: stop the workers now, not after
            # their jobs (no public way before Python 3.14); the pool then fails the jobs left, which must not
            # be cancelled as well (its manager thread would raise on a cancelled one: a traceback on Ctrl-C)
            for process in list((getattr(pool, "_processes", None) or {}).values()):
                process.terminate()
            raise
        finally:
            pool.shutdown(wait=True)


def worker_map(function: Callable[[Any], Any], jobs: list[Any], workers: int,
               ray_address: str | None = None) -> Iterator[Any]:
    """``function`` of each job, in the jobs' order (:func:`fan_out`, results held until their turn)."""
    waiting: dict[int, Any] = {}
    turn = 0
    for index, result in fan_out(function, jobs, workers, ray_address):
        waiting[index] = result
        while turn in waiting:
            yield waiting.pop(turn)
            turn += 1


# ------------------------------------------------------------------------ Ray
def import_ray() -> Any:
    """The ``ray`` module, or a one-line ValueError naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise ValueError(f"--ray-address needs Ray, which is not installed: {RAY_EXTRA} "
                         "(in a venv of its own, docs/scale_out.md)") from None
    return ray


def check_ray_address(address: Any) -> None:
    """A ValueError unless ``address`` is None or a usable address and Ray is installed; connects to nothing."""
    if address is None:
        return
    if not isinstance(address, str) or not address.strip():
        raise ValueError(f"ray_address: expected ADDRESS (host:port or ray://host:port), 'auto' or 'local', "
                         f"got {address!r}")
    import_ray()


def connect(address: str) -> Any:
    """Ray, connected to ``address`` once per process (``local``: a Ray started on this machine, all its cores)."""
    ray = import_ray()
    if not ray.is_initialized():
        options: dict[str, Any] = {"logging_level": logging.WARNING}
        try:
            if address == "local":
                ray.init(include_dashboard=False, **options)
            else:
                ray.init(address=address, **options)
        except (ConnectionError, RuntimeError, ValueError) as error:
            raise ValueError(f"--ray-address {address}: cannot connect to a Ray cluster there "
                             f"({str(error).splitlines()[0] if str(error) else type(error).__name__}); "
                             "start one with `ray start --head`, or use --ray-address local") from None
    return ray


def cluster_cpus(address: str) -> int:
    """The CPUs of the cluster at ``address`` (at least 1): how many tasks run at once."""
    return max(1, int(connect(address).cluster_resources().get("CPU", 1)))


def cardenvs_version() -> str:
    """The installed cardenvs's version ("unknown" when run uninstalled)."""
    try:
        return metadata.version("cardenvs")
    except metadata.PackageNotFoundError:
        return "unknown"


def _run_task(function: Callable[[Any], Any], head_version: str, is_tuple: bool, *parts: Any) -> Any:
    """One Ray task: the same cardenvs as the head, one BLAS thread, then ``function`` of the job (its
    ``parts``, the object store's copies of the shared ones already fetched by Ray)."""
    version = cardenvs_version()
    if version != head_version:
        raise ValueError(f"a Ray node has cardenvs {version}, the head {head_version}: install the same release "
                         "on every node")
    one_blas_thread()
    return function(tuple(parts) if is_tuple else parts[0])


def _ray_fan_out(function: Callable[[Any], Any], jobs: list[Any], address: str) -> Iterator[tuple[int, Any]]:
    ray = connect(address)
    # max_retries: system failures only (a dead worker or node); an exception of the task is never retried
    remote = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(_run_task)
    head = cardenvs_version()
    # a part shared by several jobs (the config, the agent objects, the shipped files) is put in the object
    # store once, not serialized with every task
    seen: dict[int, int] = {}
    for job in jobs:
        for part in job if isinstance(job, tuple) else (job,):
            seen[id(part)] = seen.get(id(part), 0) + 1
    stored: dict[int, Any] = {}

    def argument(part: Any) -> Any:
        if seen[id(part)] < 2 or isinstance(part, (int, float, str, bool, type(None))):
            return part
        if id(part) not in stored:
            stored[id(part)] = ray.put(part)
        return stored[id(part)]

    refs = {remote.remote(function, head, isinstance(job, tuple),
                          *(argument(p) for p in (job if isinstance(job, tuple) else (job,)))): i
            for i, job in enumerate(jobs)}
    pending = list(refs)
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                yield refs[ref], _ray_result(ray, ref)
    finally:
        for ref in pending:
            ray.cancel(ref)


def _ray_result(ray: Any, ref: Any) -> Any:
    """The task's result; its failure as a one-line ValueError."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as error:
        cause = getattr(error, "cause", None)
        if isinstance(cause, ValueError):
            raise ValueError(str(cause).splitlines()[0]) from None
        what = f"{type(cause).__name__}: {str(cause).splitlines()[0] if str(cause) else ''}" if cause else "an error"
        raise ValueError(f"a Ray task raised {what} (run it without --ray-address, with --workers 1, for the "
                         "traceback)") from None
    except ray.exceptions.RayError as error:
        raise ValueError(f"a Ray task was lost {TASK_RETRIES + 1} times ({type(error).__name__}); "
                         "the cluster is losing nodes faster than it retries") from None


# ------------------------------------------------------------- shipping files
def spec_files(specs: Iterable[str]) -> list[str]:
    """The files named by ``path=`` in agent specs (nested ones too, as in ``pimc:rollout=policy:path=F``)."""
    found = [match.strip('"') for spec in specs for match in _PATH_VALUE.findall(spec)]
    return list(dict.fromkeys(path for path in found if Path(path).is_file()))


def shipped_files(specs: Iterable[str]) -> dict[str, tuple[bytes, int]]:
    """The content and mode of every file the specs name, read here on the head, to travel with the tasks."""
    shipped = {}
    for path in spec_files(specs):
        file = Path(path)
        shipped[path] = (file.read_bytes(), file.stat().st_mode & 0o777)
    return shipped


def file_digests(specs: Iterable[str]) -> dict[str, str]:
    """sha256 of every file the specs name: part of a run's identity (a policy file changed in place is
    another run)."""
    return {path: hashlib.sha256(Path(path).read_bytes()).hexdigest() for path in spec_files(specs)}


def local_spec(spec: str, files: dict[str, tuple[bytes, int]]) -> str:
    """``spec`` with each shipped file's path replaced by a copy on this node (written once, named by its
    content's hash, under the temporary folder); unchanged without shipped files."""
    for path, (content, mode) in files.items():
        if f"path={path}" not in spec and f'path="{path}"' not in spec:
            continue
        digest = hashlib.sha256(content).hexdigest()[:24]
        target = Path(tempfile.gettempdir()) / "cardenvs-shipped" / digest / Path(path).name
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.name}.{os.getpid()}")
            partial.write_bytes(content)
            partial.chmod(mode)
            partial.replace(target)
        replacement = f'path="{target}"' if "," in str(target) else f"path={target}"
        spec = re.sub(rf'(?<![A-Za-z0-9_])path=(?:{re.escape(path)}|"{re.escape(path)}")(?=,|$)',
                      lambda _, new=replacement: new, spec)
    return spec
