"""Trust a strategy file's table already verified: skip the checksum and row checks of a file
whose bytes cannot have changed since they passed.

A full check of a strategy table (its ``acpc64x4`` checksum and every row,
:mod:`agent.strategy.kernels`) reads every byte: about 0.25 s for 1 GB here, and it needs
numba. Once a table has passed (or was just written by :func:`~agent.strategy.fileformat.
dump_strategy`, which checked the rows and computed the checksum from the bytes it wrote),
:func:`mark_verified` records the file's identity; :func:`is_verified` then says whether
the file is still that file.

Identity: the device and inode, the size, ``st_mtime_ns`` and ``st_ctime_ns``, the header's
checksum, the table's offset, length and dtype, and acpc-arena's version (a new version may
number the tree differently). Why it is safe: any write to the file's bytes (``write``,
``truncate``, an ``mmap`` store once written back, a copy or rename over it) updates
``st_ctime``, which user space cannot set back (``utime`` sets only mtime and atime and
itself moves ctime to now); replacing the file makes a new inode. A record is made only when
the file's last change (ctime) is at least :data:`SETTLE_NS` older than the check that
passed, so a later write cannot fall in the same timestamp tick as the state that was
checked. What it does not catch: bit rot on the disk under an unchanged inode, a system
clock set back by more than that margin, or a filesystem whose ctime is not updated on
write (some network filesystems); ``--verify full`` (:func:`~agent.strategy.fileformat.
load_strategy` with ``verify="full"``) checks everything every time.

Records: one small JSON file per identity under ``<cache_dir>/verified/``
(:func:`agent.fileio.cache_dir`), named by the sha256 of the identity and holding it.
Writing is best effort.

Imports the stdlib and :mod:`agent.fileio` only.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from agent import __version__
from agent.fileio import cache_dir, write_atomic

__all__ = ["SETTLE_NS", "is_verified", "mark_verified", "verified_dir"]

SETTLE_NS = 100_000_000
"""How much older than the passed check the file's last change must be to be recorded
(100 ms, well above the kernel's timestamp tick)."""


def verified_dir() -> Path:
    """Where the records are: ``<cache_dir>/verified``."""
    return cache_dir() / "verified"


def _identity(st: os.stat_result, header: dict[str, Any]) -> str:
    fields = {
        "dev": st.st_dev, "ino": st.st_ino, "size": st.st_size,
        "mtime_ns": st.st_mtime_ns, "ctime_ns": st.st_ctime_ns,
        "checksum": header.get("checksum"), "table_offset": header.get("table_offset"),
        "table_len": header.get("table_len"), "dtype": header.get("dtype"),
        "tool": __version__,
    }
    return json.dumps(fields, sort_keys=True, separators=(",", ":"))


def _record(identity: str) -> Path:
    return verified_dir() / f"{hashlib.sha256(identity.encode()).hexdigest()[:40]}.json"


def is_verified(st: os.stat_result, header: dict[str, Any]) -> bool:
    """True if a file with exactly this stat and header passed the full check before."""
    identity = _identity(st, header)
    try:
        return _record(identity).read_text(encoding="utf-8") == identity
    except (OSError, UnicodeDecodeError):
        return False


def mark_verified(path: str | Path, st: os.stat_result, header: dict[str, Any]) -> bool:
    """Record that the file at ``path``, as ``st`` (taken before its check) describes it,
    passed the full check. Recorded only if the file is unchanged since ``st`` and its last
    change is :data:`SETTLE_NS` old; returns whether it was recorded."""
    try:
        now = os.stat(path)
    except OSError:
        return False
    same = (now.st_dev, now.st_ino, now.st_size, now.st_mtime_ns, now.st_ctime_ns) == (
        st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    if not same or time.time_ns() - st.st_ctime_ns < SETTLE_NS:
        return False
    identity = _identity(st, header)
    with contextlib.suppress(OSError):
        write_atomic(_record(identity), identity.encode())
        return True
    return False
