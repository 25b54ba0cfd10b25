"""The one job backend (:mod:`jobs.backends`) on its local forms: jobs in this process and in
a real process pool of spawned workers.

The same jobs give the same values on both, each handed back once as it finishes; a job that
raises is a counted failure whose :meth:`Finished.result` raises its own error; ``skip`` is
asked only when a job is about to start, at most ``2 * workers`` ahead of the results; an
error in the callback (as a Ctrl-C would) terminates the pool's busy workers at once.
Ray runs the same driver: ``tests/strategies/test_graft_ray.py`` and
``tests/evaluation/test_ray_cluster.py`` (real clusters), ``test_runner.py`` (a fake Ray).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from agent.acpc.errors import UsageError
from jobs.backends import Finished, check_backend, open_jobs, run_jobs


def cube(n: int) -> tuple[int, int]:
    """A job: ``n`` and its cube (module level, so a spawned worker can import it)."""
    if n < 0:
        raise ValueError(f"expected n >= 0, got {n}")
    return n, n ** 3


def linger(path: str, role: str) -> int:
    """``slow``: write this worker's pid to ``path`` and sleep; ``fast``: return once that
    pid is written."""
    if role == "slow":
        part = Path(path + ".part")  # written whole, then renamed: never seen half-written
        part.write_text(str(os.getpid()))
        part.rename(path)
        time.sleep(600)
    for _ in range(6000):
        if Path(path).exists():
            break
        time.sleep(0.01)
    return os.getpid()


@pytest.mark.parametrize("workers", [1, 2])
def test_every_job_comes_back_once_with_its_value(workers: int) -> None:
    got: list[Finished[int, tuple[int, int]]] = []
    tally = run_jobs(cube, list(range(7)), got.append, workers=workers)
    assert sorted(f.result() for f in got) == [(n, n ** 3) for n in range(7)]
    assert sorted(f.job for f in got) == list(range(7))
    assert all(f.ok and f.job == f.result()[0] for f in got)
    assert (tally.jobs, tally.started, tally.finished, tally.failed) == (7, 7, 7, 0)


@pytest.mark.parametrize(("workers", "where"), [(1, "job"), (2, "worker")])
def test_a_failed_job_is_counted_and_keeps_its_error(workers: int, where: str) -> None:
    got: list[Finished[int, tuple[int, int]]] = []
    tally = run_jobs(cube, [2, -1, 3], got.append, workers=workers)
    assert (tally.finished, tally.failed) == (3, 1)
    bad = next(f for f in got if not f.ok)
    assert bad.job == -1 and bad.failure == (f"the {where} failed: ValueError: expected n >= 0, "
                                             f"got -1")
    with pytest.raises(ValueError, match="got -1"):
        bad.result()
    assert sorted(f.result() for f in got if f.ok) == [(2, 8), (3, 27)]


@pytest.mark.parametrize("workers", [1, 2])
def test_skip_is_asked_just_before_a_job_starts(workers: int) -> None:
    asked: list[int] = []
    seen: list[int] = []

    def skip(n: int) -> bool:
        asked.append(n)
        return bool(seen) and n % 2 == 1  # odd jobs are dropped once a result is in

    def done(f: Finished[int, tuple[int, int]]) -> None:
        if not seen:
            seen.append(len(asked))
        seen.append(f.job)

    with open_jobs("local", workers) as backend:
        tally = backend.run(cube, list(range(12)), done, skip=skip)
    assert asked == list(range(12))
    assert seen[0] == (2 * workers if workers > 1 else 1)  # the window: 2 per worker, 1 here
    ran = sorted(seen[1:])
    assert set(range(seen[0])) <= set(ran)  # started before the first result: all ran
    assert [n for n in ran if n >= seen[0]] == [n for n in range(seen[0], 12) if n % 2 == 0]
    assert tally.skipped == 12 - len(ran) and tally.started == len(ran) == tally.finished


def test_an_error_in_the_callback_terminates_busy_workers(tmp_path: Path) -> None:
    pid_file = tmp_path / "slow.pid"

    def done(f: Finished[str, int]) -> None:
        raise KeyboardInterrupt  # what a Ctrl-C in the driver does

    with open_jobs("local", 2) as backend, pytest.raises(KeyboardInterrupt):
        backend.run(linger, ["slow", "fast"], done, args=lambda role: (str(pid_file), role))
    slow = int(pid_file.read_text())
    for _ in range(3000):
        if not Path(f"/proc/{slow}").exists():
            break
        time.sleep(0.01)
    assert not Path(f"/proc/{slow}").exists(), "the busy worker was left running"


def test_settings_are_checked_and_no_jobs_open_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    for args, message in [(("pool", 1, None), "expected a backend in local, ray, got 'pool'"),
                          (("local", 0, None), "expected workers >= 1, got 0"),
                          (("local", 2, "127.0.0.1:1"),
                           "expected --address only with --backend ray")]:
        with pytest.raises(UsageError) as info:
            check_backend(*args)
        assert str(info.value) == message
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    assert run_jobs(cube, [], print, backend="ray").jobs == 0  # no Ray needed for nothing
    with pytest.raises(ImportError, match="expected ray for --backend ray"):
        run_jobs(cube, [1], print, backend="ray")
    with open_jobs("local", 3) as backend:
        assert not backend.remote and backend.share(b"x") == b"x"
        assert backend.inline(1) and not backend.inline(2)
