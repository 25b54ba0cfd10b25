"""Atomic file writes (a reader sees the old file or the whole new one, never half of it),
and the one cache directory of the project.

Stdlib only, so the dealer and the match runner can use it as well as the strategy tools.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


@contextlib.contextmanager
def atomic_writer(path: str | Path, suffix: str = "") -> Iterator[BinaryIO]:
    """A binary file to write that replaces ``path`` when the block ends without an error.

    The data goes to a temporary file in the same directory, which is flushed, fsynced and
    renamed over ``path``; the directory is then fsynced (best effort) so the rename itself
    survives a crash. On any exception the temporary file is removed and ``path`` is left
    as it was.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=suffix, dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    with contextlib.suppress(OSError):
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def write_atomic(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_writer`)."""
    with atomic_writer(path) as f:
        f.write(data)


def cache_dir() -> Path:
    """Where the project caches what it computes or receives: ``$ACPC_ARENA_CACHE``, else
    ``~/.cache/acpc-arena`` (deal pools, strength tables, strategy files shipped to a
    cluster worker)."""
    base = os.environ.get("ACPC_ARENA_CACHE")
    return Path(base) if base else Path.home() / ".cache" / "acpc-arena"
