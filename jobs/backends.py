"""Run a list of jobs in this process, in a local process pool or as Ray tasks; hand each
result back the moment it finishes.

:func:`open_jobs` opens a backend for a block (``local``: nothing to open; ``ray``: the Ray
of :func:`jobs.ray.ray_session`); :meth:`Jobs.run` calls ``task(*args(job))`` for every job
there and passes each :class:`Finished` job to ``done``, in completion order. ``done`` is
the one progress hook: a caller stores or reports each result there, so an interrupted run
(Ctrl-C, an error) keeps everything that finished before it. :func:`run_jobs` is both in
one call.

* ``local``, one worker (``workers == 1``, or a single job): the jobs run here, one after
  another;
* ``local``, more workers: a ``concurrent.futures`` process pool of ``min(workers, jobs)``
  spawned processes (no state inherited; ``initializer`` runs in each);
* ``ray``: every job is a Ray task (one CPU, retried up to :data:`RAY_RETRIES` times if its
  worker dies) on the cluster at ``address``, or on a private Ray on 127.0.0.1 with
  ``workers`` CPUs (``None``: Ray's count of this machine's). Ray's own messages go to
  stderr. Its workers may not share this machine's files: :attr:`Jobs.remote` says so, and
  :meth:`Jobs.share` puts bytes in Ray's object store once for every task that needs them.

At most ``2 * workers`` jobs are in flight (``ray`` with ``workers=None``: all of them);
``skip(job)`` is asked just before a job would start, so a caller can drop the rest of a
broken batch in light of the results so far. A job that raises is not retried here: it
finishes with :attr:`Finished.error` (counted in :class:`Tally`), and
:meth:`Finished.result` raises that error for a caller that wants it to end the run; an
error in ``done`` or a Ctrl-C stops what is in flight (pool workers terminated, Ray tasks
cancelled) and propagates. Tasks, their arguments and their results must be picklable
module-level values (plain data: JSON text, dataclasses of numbers and numpy arrays).

Imports the standard library; :mod:`jobs.ray` (and ``ray``) only for ``backend="ray"``.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast

from agent.acpc.errors import UsageError
from jobs import BACKENDS

J = TypeVar("J")
R = TypeVar("R")

RAY_RETRIES = 3
"""How often Ray retries a task whose worker died (a job that raises is not retried)."""

_TRACKER_WARNING = "ignore:resource_tracker:UserWarning"
"""A pool's semaphores are registered with multiprocessing's resource tracker; if this
process is killed (SIGKILL) the tracker removes them itself and warns that they "leaked".
They are cleaned up all the same, and the kill is the user's: the warning is noise after a
kill -9 and says nothing a resumed run needs, so the tracker (which inherits the
environment) is told to keep quiet about it."""


@dataclass(frozen=True)
class Finished(Generic[J, R]):
    """One job that finished: its value, or the error it (or its worker) ended with."""

    job: J
    value: R | None
    error: BaseException | None
    worker: str
    """What ran it, for messages: ``job`` (this process), ``worker`` or ``Ray task``."""

    @property
    def ok(self) -> bool:
        """True if the job returned a value."""
        return self.error is None

    def result(self) -> R:
        """The job's value.

        Raises:
            BaseException: the job's own error, if it failed.
        """
        if self.error is not None:
            raise self.error
        return cast(R, self.value)

    @property
    def failure(self) -> str:
        """One line for a failed job: ``the worker failed: TypeName: message``."""
        return f"the {self.worker} failed: {type(self.error).__name__}: {self.error}"


@dataclass
class Tally:
    """What a :meth:`Jobs.run` did with its jobs."""

    jobs: int = 0
    started: int = 0
    skipped: int = 0
    finished: int = 0
    failed: int = 0
    """Finished with an error (included in ``finished``)."""


def check_backend(backend: str, workers: int | None, address: str | None) -> None:
    """Check a backend's settings (the ones :func:`open_jobs` takes).

    Raises:
        UsageError: for an unknown backend, ``workers < 1``, or an ``address`` without
            ``backend="ray"``.
    """
    if backend not in BACKENDS:
        raise UsageError(f"expected a backend in {', '.join(BACKENDS)}, got {backend!r}")
    if workers is not None and workers < 1:
        raise UsageError(f"expected workers >= 1, got {workers}")
    if address is not None and backend != "ray":
        raise UsageError("expected --address only with --backend ray")


class _Engine(Protocol):
    """What a backend implements (:meth:`Jobs.run` drives it, the same for all)."""

    worker: str
    """What runs a job, for :attr:`Finished.failure`."""
    window: int
    """Jobs in flight at most."""

    def start(self, task: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        """Start ``task(*args)``; return a hashable handle."""

    def wait(self, handles: list[Any]) -> list[Any]:
        """Wait until at least one of ``handles`` finished; return the finished ones."""

    def result(self, handle: Any) -> Any:
        """The value of a finished job (raises the job's error)."""

    def stop(self, handles: list[Any]) -> None:
        """Abort: stop the jobs of ``handles`` and release everything."""

    def close(self) -> None:
        """Every job is done: release everything."""


class _Ran:
    """A job already run in this process (:class:`_Inline`'s handle)."""

    def __init__(self, value: Any, error: BaseException | None) -> None:
        self.value = value
        self.error = error


class _Inline:
    """One job after another in this process."""

    worker = "job"
    window = 1

    def start(self, task: Callable[..., Any], args: tuple[Any, ...]) -> _Ran:
        try:
            return _Ran(task(*args), None)
        except Exception as exc:  # a failed job; Ctrl-C and exits propagate
            return _Ran(None, exc)

    def wait(self, handles: list[Any]) -> list[Any]:
        return handles

    def result(self, handle: Any) -> Any:
        ran = cast(_Ran, handle)
        if ran.error is not None:
            raise ran.error
        return ran.value

    def stop(self, handles: list[Any]) -> None:
        return None

    def close(self) -> None:
        return None


class _Pool:
    """A process pool of spawned workers."""

    worker = "worker"

    def __init__(self, workers: int, initializer: Callable[..., object] | None,
                 initargs: tuple[Any, ...]) -> None:
        filters = os.environ.get("PYTHONWARNINGS", "")
        if _TRACKER_WARNING not in filters.split(","):
            os.environ["PYTHONWARNINGS"] = ",".join(f for f in (filters, _TRACKER_WARNING) if f)
        self.window = 2 * workers
        self.pool = cf.ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
            initializer=initializer, initargs=initargs,
        )

    def start(self, task: Callable[..., Any], args: tuple[Any, ...]) -> cf.Future[Any]:
        return self.pool.submit(task, *args)

    def wait(self, handles: list[Any]) -> list[Any]:
        done, _ = cf.wait(handles, return_when=cf.FIRST_COMPLETED)
        return list(done)

    def result(self, handle: Any) -> Any:
        return cast(cf.Future[Any], handle).result()

    def stop(self, handles: list[Any]) -> None:
        for proc in list((getattr(self.pool, "_processes", None) or {}).values()):
            proc.terminate()  # a worker's initializer may stop its own children on SIGTERM
        self.pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        self.pool.shutdown(wait=True)


class _Ray:
    """Ray tasks on the session's cluster."""

    worker = "Ray task"

    def __init__(self, ray: Any, window: int) -> None:
        self.ray = ray
        self.window = window
        self.remotes: dict[Callable[..., Any], Any] = {}

    def start(self, task: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        remote = self.remotes.get(task)
        if remote is None:
            remote = self.remotes[task] = self.ray.remote(num_cpus=1,
                                                          max_retries=RAY_RETRIES)(task)
        return remote.remote(*args)

    def wait(self, handles: list[Any]) -> list[Any]:
        ready, _ = self.ray.wait(handles, num_returns=1)
        return list(ready)

    def result(self, handle: Any) -> Any:
        return self.ray.get(handle)

    def stop(self, handles: list[Any]) -> None:
        for ref in handles:
            self.ray.cancel(ref, force=True)

    def close(self) -> None:
        return None


class Jobs:
    """An open backend (:func:`open_jobs`): run lists of jobs on it."""

    def __init__(self, backend: str, workers: int | None, ray: Any = None,
                 initializer: Callable[..., object] | None = None,
                 initargs: tuple[Any, ...] = ()) -> None:
        self.backend = backend
        self.workers = workers
        self._ray = ray
        self._initializer = initializer
        self._initargs = initargs

    @property
    def remote(self) -> bool:
        """True if jobs may run on machines that do not share this one's files (Ray)."""
        return self._ray is not None

    def share(self, data: bytes) -> Any:
        """``data`` for any number of tasks' arguments: a handle in Ray's object store
        (each task gets the bytes), the bytes themselves on the local backends."""
        return self._ray.put(data) if self._ray is not None else data

    def inline(self, jobs: int) -> bool:
        """True if a run of ``jobs`` jobs runs them in this process (so a task may use
        objects of this process that could not travel)."""
        return self._ray is None and min(self.workers or os.cpu_count() or 1, jobs) <= 1

    def run(self, task: Callable[..., R], jobs: Sequence[J],
            done: Callable[[Finished[J, R]], None], *,
            args: Callable[[J], tuple[Any, ...]] | None = None,
            skip: Callable[[J], bool] | None = None) -> Tally:
        """Run ``task(*args(job))`` (default ``task(job)``) for every job not skipped and
        pass each finished one to ``done`` in completion order (module docstring).

        Raises:
            BaseException: whatever ``done`` or ``skip`` raises, a Ctrl-C, and what
                starting a job raises (a broken process pool); what is in flight is stopped.
        """
        tally = Tally(jobs=len(jobs))
        if not jobs:
            return tally
        engine = self._engine(len(jobs))
        make_args = args or (lambda job: (job,))
        inflight: dict[Any, J] = {}
        queue = iter(jobs)

        def fill() -> None:
            for job in queue:
                if skip is not None and skip(job):
                    tally.skipped += 1
                    continue
                inflight[engine.start(task, make_args(job))] = job
                tally.started += 1
                if len(inflight) >= engine.window:
                    return

        try:
            fill()
            for _ in range(len(jobs) + 1):  # each round finishes at least one job
                if not inflight:
                    break
                for handle in engine.wait(list(inflight)):
                    job = inflight.pop(handle)
                    try:
                        finished = Finished[J, R](job, engine.result(handle), None,
                                                  engine.worker)
                    except Exception as exc:  # the job raised, or its worker died
                        finished = Finished[J, R](job, None, exc, engine.worker)
                        tally.failed += 1
                    tally.finished += 1
                    done(finished)
                fill()
        except BaseException:
            engine.stop(list(inflight))
            raise
        engine.close()
        return tally

    def _engine(self, jobs: int) -> _Engine:
        if self._ray is not None:
            return _Ray(self._ray, 2 * self.workers if self.workers else jobs)
        if self.inline(jobs):
            return _Inline()
        return _Pool(min(self.workers or os.cpu_count() or 1, jobs), self._initializer,
                     self._initargs)


@contextlib.contextmanager
def open_jobs(backend: str = "local", workers: int | None = 1, address: str | None = None, *,
              initializer: Callable[..., object] | None = None,
              initargs: tuple[Any, ...] = ()) -> Iterator[Jobs]:
    """The backend for the block (module docstring). ``workers``: processes of the local
    pool, or the jobs in flight on Ray / 2 and the private Ray's CPUs (``None``: the
    machine's CPUs, and every job at once on Ray). ``initializer(*initargs)`` runs in each
    pool worker.

    Raises:
        UsageError: for bad settings (:func:`check_backend`).
        RayUnavailable: for ``backend="ray"`` without ray installed.
        RayClusterError: if the cluster at ``address`` cannot be joined.
    """
    check_backend(backend, workers, address)
    if backend != "ray":
        yield Jobs(backend, workers, initializer=initializer, initargs=initargs)
        return
    from jobs.ray import ray_session

    # Ray prints its workers' troubles (a worker killed, a retry) on the driver's stdout:
    # they go to stderr, so that stdout keeps only the command's own output.
    with contextlib.redirect_stdout(sys.stderr), ray_session(address, workers) as ray:
        yield Jobs(backend, workers, ray)


def run_jobs(task: Callable[[J], R], jobs: Sequence[J], done: Callable[[Finished[J, R]], None],
             *, backend: str = "local", workers: int | None = 1,
             address: str | None = None) -> Tally:
    """``task(job)`` for every job on ``backend``, each finished job to ``done``
    (:func:`open_jobs` and :meth:`Jobs.run`; no backend is opened for no jobs).

    Raises:
        UsageError, RayUnavailable, RayClusterError: as :func:`open_jobs`.
    """
    check_backend(backend, workers, address)
    if not jobs:
        return Tally()
    with open_jobs(backend, workers, address) as session:
        return session.run(task, jobs, done)
