"""Where grafts are solved: in this process, a local process pool, or Ray tasks.

:func:`run_jobs` calls ``solve(job)`` for every job and hands each result to ``done`` as it
finishes (in completion order). Backends:

* ``local`` (default): ``workers == 1`` runs the jobs here, one after another; more workers
  use a ``concurrent.futures`` process pool (spawned processes; jobs and results are
  dataclasses of JSON-able values and numpy arrays);
* ``ray``: every job is a Ray task (``num_cpus=1``) on the cluster at ``address``
  (``ray start --head`` prints it; ``None``: a private Ray on 127.0.0.1 started for the
  run, with Ray's count of this machine's CPUs): :func:`jobs.ray.ray_session`,
  shared with ``acpc-match``. Ray moves jobs and results through its object store (its own
  serialisation, in memory; no file is written).

A job is solved by the same deterministic function on every backend, so the results are the
same (tested). Needs the ``cluster`` extra for Ray.

Imports the standard library (and :mod:`jobs.ray` and ``ray`` when asked);
never imported by :mod:`agent`.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
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
        UsageError: for an unknown backend or ``workers < 1``.
        RayUnavailable: for ``backend="ray"`` without ray installed.
        RayClusterError: if the cluster at ``address`` cannot be joined.
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


def _run_ray(solve: Callable[[J], R], jobs: Sequence[J], done: Callable[[R], None],
             address: str | None) -> None:
    from jobs.ray import ray_session

    with ray_session(address, None) as ray:
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
