"""Atomic file writes (a reader sees the old file or the whole new one, never half of it),
and the one cache directory of the project.

Stdlib only, so the dealer and the match runner can use it as well as the strategy tools.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO


def _create_temporary(target: Path, suffix: str) -> tuple[int, str]:
    """A new temporary file beside ``target``, created with mode 0666 less the umask."""
    for attempt in range(100):
        name = target.parent / f".{target.name}.{secrets.token_hex(8)}{suffix}"
        try:
            return os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), str(name)
        except FileExistsError:
            if attempt == 99:  # 100 collisions of 64 random bits: something else is wrong
                raise
    raise AssertionError("unreachable")


@contextlib.contextmanager
def atomic_writer(path: str | Path, suffix: str = "") -> Iterator[BinaryIO]:
    """A binary file to write that replaces ``path`` when the block ends without an error.

    The data goes to a temporary file in the same directory, which is flushed, fsynced and
    renamed over ``path``; the directory is then fsynced (best effort) so the rename itself
    survives a crash. On any exception the temporary file is removed and ``path`` is left
    as it was. The file gets the mode a plain ``open`` would give it (0666 less the umask,
    usually 0644), not ``mkstemp``'s private 0600.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _create_temporary(target, suffix)
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
