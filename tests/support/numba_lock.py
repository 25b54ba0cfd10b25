"""numba's compilations shared between the test processes: one compiles a kernel, the others
wait for it and load it from the disk cache (:func:`share_compilations`). The suite's
controller makes the lock directory and names it in :data:`COMPILE_LOCK`; its workers, and
the helper processes that run kernels themselves (the fuzz worker), install the lock."""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path
from typing import IO, Any

COMPILE_LOCK = "ACPC_ARENA_TEST_COMPILE_LOCK"
"""The environment variable naming the directory of the lock files the test processes hold
while numba compiles (one a kernel)."""


def share_compilations(lock_dir: str) -> None:
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


def share_compilations_if_asked() -> None:
    """:func:`share_compilations` when this process was started by a test run (the
    environment names its lock directory); nothing otherwise."""
    lock_dir = os.environ.get(COMPILE_LOCK)
    if lock_dir and Path(lock_dir).is_dir():
        share_compilations(lock_dir)
