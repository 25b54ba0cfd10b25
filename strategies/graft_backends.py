"""Where grafts are solved: in this process, a local process pool, or Ray tasks.

:func:`run_jobs` calls ``solve(job)`` for every job and hands each result to ``done`` as it
finishes (in completion order). Backends:

* ``local`` (default): ``workers == 1`` runs the jobs here, one after another; more workers
  use a ``concurrent.futures`` process pool (spawned processes; jobs and results are
  dataclasses of JSON-able values and numpy arrays);
* ``ray``: every job is a Ray task (``num_cpus=1``) on the cluster at ``address``
  (``ray start --head`` prints it; ``None``: a local Ray started for the run, or the one
  ``RAY_ADDRESS`` names). Ray moves jobs and results through its object store (its own
  serialisation, in memory; no file is written).

A job is solved by the same deterministic function on every backend, so the results are the
same (tested). Needs the ``cluster`` extra for Ray.

Imports the standard library (and ``ray`` when asked); never imported by :mod:`agent`.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import socket
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from agent.acpc.errors import UsageError

J = TypeVar("J")
R = TypeVar("R")

BACKENDS = ("local", "ray")


def run_jobs(
    solve: Callable[[J], R], jobs: Sequence[J], done: Callable[[R], None], *,
    workers: int = 1, backend: str = "local", address: str | None = None,
) -> None:
    """Solve every job on ``backend`` and pass each result to ``done`` (module docstring).

    Raises:
        UsageError: for an unknown backend, ``workers < 1``, or Ray missing or unreachable.
    """
    if backend not in BACKENDS:
        raise UsageError(f"expected a backend in {', '.join(BACKENDS)}, got {backend!r}")
    if workers < 1:
        raise UsageError(f"expected workers >= 1, got {workers}")
    if backend == "ray":
        _run_ray(solve, jobs, done, address)
        return
    if address is not None:
        raise UsageError("expected --address only with --backend ray")
    if workers == 1 or len(jobs) <= 1:
        for job in jobs:
            done(solve(job))
        return
    context = multiprocessing.get_context("spawn")
    with cf.ProcessPoolExecutor(max_workers=min(workers, len(jobs)), mp_context=context) as pool:
        futures = [pool.submit(solve, job) for job in jobs]
        try:
            for future in cf.as_completed(futures):
                done(future.result())
        except BaseException:
            for future in futures:
                future.cancel()
            raise


def _check_reachable(address: str) -> None:
    """A quick TCP connection to ``host:port`` (Ray itself would retry for minutes).

    Raises:
        UsageError: if nothing listens there.
    """
    text = address.removeprefix("ray://")
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        if address == "auto":
            return
        raise UsageError(f"expected --address HOST:PORT (e.g. 127.0.0.1:6379), got "
                         f"{address!r}")
    try:
        with socket.create_connection((host, int(port)), timeout=5.0):
            pass
    except OSError as exc:
        raise UsageError(f"cannot reach the Ray cluster at {address!r}: "
                         f"{exc.strerror or exc}") from None


def _run_ray(solve: Callable[[J], R], jobs: Sequence[J], done: Callable[[R], None],
             address: str | None) -> None:
    try:
        import ray
    except ImportError:
        raise UsageError("expected Ray for --backend ray: pip install -e '.[cluster]'") from None
    started = False
    if address is not None and not ray.is_initialized():
        _check_reachable(address)
    if not ray.is_initialized():
        try:
            ray.init(address=address, log_to_driver=False, include_dashboard=False,
                     configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise UsageError(f"cannot reach the Ray cluster at {address!r}: "
                             f"{str(exc).splitlines()[0] if str(exc) else exc}") from None
        started = True
    try:
        task: Any = ray.remote(num_cpus=1, max_retries=2)(solve)
        pending = [task.remote(job) for job in jobs]
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                done(ray.get(ready[0]))
        except BaseException:
            for ref in pending:
                ray.cancel(ref, force=True)
            raise
    finally:
        if started:
            ray.shutdown()
