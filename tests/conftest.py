"""Shared fixtures: the bundled games (helpers live in :mod:`tests.support`)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import IO, Any

# Ray (the cluster backend's tests) replaces 127.0.0.1 by the machine's own address unless
# told not to: keep every test's traffic, and that of the processes it starts, on loopback.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import pytest

from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from evaluation.corebuild import status
from tests.support import PLAIN_TEST, ROOT, SHARED, select_plain_python

COMPILE_LOCK = "ACPC_ARENA_TEST_COMPILE_LOCK"
"""The environment variable naming the directory of the lock files the test processes hold
while numba compiles (one a kernel)."""


def pytest_configure(config: pytest.Config) -> None:
    """Refuse to run on a stale or damaged compiled core (``acpc-arena compile``): Python
    would load the old extension modules, not the sources under test. Then share numba's
    compilations between the xdist workers (:func:`_one_compile_at_a_time`)."""
    found = status(ROOT, load=False)
    if not found.ok:
        raise pytest.UsageError(f"the compiled core is {found.state}: {found.reason}")
    if not hasattr(config, "workerinput"):  # the controller (or a run without workers)
        path = tempfile.mkdtemp(prefix="acpc-arena-numba-")
        _created.append(Path(path))  # a nested run makes its own and leaves its parent's be
        os.environ[COMPILE_LOCK] = path  # the workers inherit it
        shared = tempfile.mkdtemp(prefix="acpc-arena-tests-")
        _created.append(Path(shared))
        os.environ[SHARED] = shared  # tests.support.run_without_jit's one run, for all
    _one_compile_at_a_time(os.environ[COMPILE_LOCK])


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Which files' plain-Python checks this session runs (one run serves them all)."""
    select_plain_python([item.path.relative_to(ROOT).as_posix() for item in items
                         if getattr(item, "originalname", None) == PLAIN_TEST])


_created: list[Path] = []


def pytest_unconfigure(config: pytest.Config) -> None:
    while _created:
        made = _created.pop()
        if made.is_dir():
            shutil.rmtree(made, ignore_errors=True)
        else:
            made.unlink(missing_ok=True)


def _one_compile_at_a_time(lock_dir: str) -> None:
    """On a fresh install every worker needed the same kernels at about the same time and
    compiled each one itself (numba's disk cache is written only once a compilation ends):
    ~300 CPU-s of the suite went to compiling the same kernels again. Holding a file lock of
    the kernel's own across the test processes while it compiles makes the others that need
    it wait, and numba's own ``compile`` then loads it from the disk cache the first one
    wrote; other kernels compile meanwhile in other processes (one lock for all of them kept
    one core idle while the workers queued for it). The results do not change: it is the
    same compilation, done once. Only a process's outermost compilation takes a lock (the
    kernels it calls compile inside it), so no two processes wait for each other."""
    try:
        from numba.core import dispatcher
        from numba.core.compiler_lock import global_compiler_lock
    except ImportError:  # pragma: no cover - numba is a dependency
        return
    if getattr(dispatcher.Dispatcher.compile, "shared_between_processes", False):
        return  # already (another pytest session in this interpreter)
    original = dispatcher.Dispatcher.compile
    held: list[IO[str]] = []  # the open lock file while this process compiles (nesting)
    depth = [0]

    def compile_once(self: Any, sig: Any) -> Any:
        with global_compiler_lock:  # this process's threads, one at a time (re-entrant)
            if depth[0] == 0:
                fn = getattr(self, "py_func", None)
                name = f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', fn)}"
                key = hashlib.sha1(name.encode()).hexdigest()[:20]
                handle = open(Path(lock_dir) / f"{key}.lock", "a")  # noqa: SIM115 - held
                fcntl.flock(handle, fcntl.LOCK_EX)
                held.append(handle)
            depth[0] += 1
            try:
                return original(self, sig)
            finally:
                depth[0] -= 1
                if depth[0] == 0:
                    handle = held.pop()
                    fcntl.flock(handle, fcntl.LOCK_UN)
                    handle.close()

    compile_once.shared_between_processes = True  # type: ignore[attr-defined]
    dispatcher.Dispatcher.compile = compile_once  # type: ignore[method-assign]


@pytest.fixture(scope="session")
def nl2() -> Game:
    return load_game("holdem.nolimit.2p.reverse_blinds.game")


@pytest.fixture(scope="session")
def leduc() -> Game:
    return load_game("leduc.limit.2p.game")


@pytest.fixture(scope="session")
def kuhn3() -> Game:
    return load_game("kuhn.limit.3p.game")
