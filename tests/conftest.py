"""Shared fixtures: the bundled games (helpers live in :mod:`tests.support`)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

# Ray (the cluster backend's tests) replaces 127.0.0.1 by the machine's own address unless
# told not to: keep every test's traffic, and that of the processes it starts, on loopback.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import pytest

from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from evaluation.corebuild import status
from tests.support import PACKAGES, PLAIN_TEST, ROOT, SHARED, select_plain_python
from tests.support.numba_lock import COMPILE_LOCK, share_compilations

# Bytecode caches on, whatever the environment says (PYTHONDONTWRITEBYTECODE=1 was set on
# the machines this suite is timed on): the workers then write the project's and the test
# modules' compiled bytecode (pytest's rewritten asserts included) once, and the nested
# sessions and the hundreds of command-line processes the tests start read it instead of
# compiling every source again. Nothing else changes (the caches are git-ignored).
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)


def pytest_configure(config: pytest.Config) -> None:
    """Refuse to run on a stale or damaged compiled core (``acpc-arena compile``): Python
    would load the old extension modules, not the sources under test. Then share numba's
    compilations between the xdist workers (:func:`tests.support.numba_lock.share_compilations`)."""
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
        if config.getoption("numprocesses", None):  # xdist's controller, before its workers
            _write_bytecode(config)
    share_compilations(os.environ[COMPILE_LOCK])


def _write_bytecode(config: pytest.Config) -> None:
    """Write the project's bytecode and pytest's rewritten test modules once, before the
    workers start: on a fresh clone the eight workers otherwise each compiled every module
    they import and rewrote every test module's asserts while collecting at the same time
    (about 3.5 CPU-s a worker, measured), none finding the others' caches yet. Only speed
    changes: a worker reads the same code from the cache that it would have compiled. The
    rewriting uses pytest's own (internal) functions; if they are not there, the workers
    rewrite as before."""
    import compileall

    for package in (*PACKAGES, "tests"):
        compileall.compile_dir(ROOT / package, quiet=2)
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
        )
    except ImportError:  # pragma: no cover - another pytest
        return
    state = config.stash.get(assertstate_key, None)
    if state is None:  # --assert=plain
        return
    try:
        for path in sorted((ROOT / "tests").rglob("test_*.py")):
            pyc = get_cache_dir(path) / (path.name[:-3] + PYC_TAIL)
            if not pyc.exists():
                pyc.parent.mkdir(exist_ok=True)
                source_hash, code = _rewrite_test(path, config)
                _write_pyc(state, code, source_hash, pyc)
    except (TypeError, AttributeError):  # pragma: no cover - their signatures changed
        return  # the workers rewrite as before (a syntax error is theirs to report)


_COMPILED_RUN = "tests/agent/test_native.py::test_compiled_core_passes_the_core_and_dealer_tests"
EARLY = (
    "tests/evaluation/test_ray_cluster.py",
    "tests/strategies/test_graft_ray.py::test_ray_grafts_equal_the_process_pool",
    f"{_COMPILED_RUN}[dealer engine]",
    "tests/evaluation/test_runner.py::test_failing_agents_are_named_and_the_rest_is_kept",
    "tests/evaluation/test_estimator.py::test_joint_walk_equals_the_separate_walks",
    "tests/agent/abstraction/test_holdem_buckets.py::test_kernels_as_plain_python",
    "tests/agent/test_agent_live.py",
    "tests/jobs/test_ray.py",
)
"""What xdist's workers start with, one group at the head of each worker's first share (a
file, a test with all its parameters, or one case), at most one a worker: the tests that
wait longest on other processes (Ray clusters, the compiled core's dealer run, agents that
never answer, live matches) or compile the biggest kernels. A file whose module fixture
starts a Ray head or builds strategies stays whole (built once). Left in file order, one of
them started last kept the suite going on one core for a minute (measured: the Ray grafts'
test, 249 s of waiting, began 331 s into a 584 s run); two groups on one worker ran the
second last (a Ray test waits most of the run: up to 559 s of a 611 s run)."""


def _early_first(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """``items`` reordered so that xdist's ``worksteal`` scheduler, which gives worker
    ``i`` of ``workers`` the next ``len(left) // (workers - i)`` tests, puts the
    :data:`EARLY` groups at the heads of the workers' shares, round robin in that order;
    every other test keeps its order. The same on every worker (xdist requires it)."""
    groups: list[list[pytest.Item]] = [[] for _ in EARLY]
    rest: list[pytest.Item] = []
    for item in items:
        for g, prefix in enumerate(EARLY):
            if item.nodeid == prefix or item.nodeid.startswith((prefix + "::", prefix + "[")):
                groups[g].append(item)
                break
        else:
            rest.append(item)
    heads: list[list[pytest.Item]] = [[] for _ in range(workers)]
    for g, group in enumerate(groups):
        heads[g % workers].extend(group)
    out: list[pytest.Item] = []
    left = len(items)
    for i, head in enumerate(heads):
        share = max(left // (workers - i), len(head))
        fill = share - len(head)
        out += head + rest[:fill]
        rest = rest[fill:]
        left -= share
    return out + rest


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On xdist's workers, the long tests first (:func:`_early_first`); then which files'
    plain-Python checks this session runs (one run serves them all)."""
    workers = getattr(config, "workerinput", {}).get("workercount", 0)
    if workers > 1:
        items[:] = _early_first(items, workers)
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


@pytest.fixture(scope="session")
def nl2() -> Game:
    return load_game("holdem.nolimit.2p.reverse_blinds.game")


@pytest.fixture(scope="session")
def leduc() -> Game:
    return load_game("leduc.limit.2p.game")


@pytest.fixture(scope="session")
def kuhn3() -> Game:
    return load_game("kuhn.limit.3p.game")
