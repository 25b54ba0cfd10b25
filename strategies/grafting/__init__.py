"""Strategy grafting: enumerated games, hold'em over a deal pool, the Leduc experiment."""

from __future__ import annotations


def graft_workers(backend: str, workers: int) -> int | None:
    """The workers grafts get on ``backend`` (:func:`jobs.backends.open_jobs`): ``workers``
    local processes (``--workers``), or None on Ray: every CPU of the cluster solves grafts."""
    return workers if backend == "local" else None
