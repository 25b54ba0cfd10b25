"""Whether the agent's numba kernels are known to be in numba's on-disk cache, answered
without importing numba.

Asking numba itself (:func:`agent.console.is_cached`) needs the kernel modules imported,
i.e. numba imported: about a second and a half, the largest part of an agent's start. So
once the agent's kernels have been loaded (from the cache or compiled), a stamp file is
written (:func:`mark_kernels_warm`); :func:`kernels_known_warm` checks for it. The stamp is
named by everything numba's cache depends on that can be read cheaply: the Python version
and environment (``sys.prefix``), numba's install (the path and modification time of its
``__init__.py``, found without importing it), ``NUMBA_CACHE_DIR``, and the path, size and
modification time
of every module that defines an agent kernel (numba recompiles when a source changes). A
cache emptied behind the stamp's back (deleting ``__pycache__`` by hand) is not seen: the
agent then compiles in its background loader, with the usual notice.

``acpc-agent`` plays at once when the stamp is there, and loads (or compiles) the kernels
before connecting otherwise; ``acpc-arena warmup`` writes it.

Imports the stdlib and :mod:`agent.fileio` only.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

from agent.fileio import cache_dir, write_atomic

__all__ = ["KERNEL_MODULES", "kernels_known_warm", "mark_kernels_warm", "stamp_path"]

_AGENT = Path(__file__).resolve().parent
KERNEL_MODULES = ("jit.py", "handeval.py", "abstraction/holdem_buckets.py",
                  "abstraction/holdem_board.py", "abstraction/holdem_pa.py",
                  "abstraction/isomorphism.py", "strategy/best_response.py",
                  "strategy/kernels.py")
"""The agent's modules (relative to the ``agent`` package) whose kernels a match uses."""


def _key() -> str:
    fields: dict[str, object] = {
        "python": sys.version,
        "prefix": sys.prefix,
        "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR", ""),
        "disable_jit": os.environ.get("NUMBA_DISABLE_JIT", ""),
    }
    spec = importlib.util.find_spec("numba")
    origin = spec.origin if spec is not None else None
    if origin is not None:
        with contextlib.suppress(OSError):
            fields["numba"] = [origin, os.stat(origin).st_mtime_ns]
    for name in KERNEL_MODULES:
        path = _AGENT / name
        try:
            st = os.stat(path)
        except OSError:
            fields[name] = None
            continue
        fields[name] = [str(path), st.st_size, st.st_mtime_ns]
    return json.dumps(fields, sort_keys=True, separators=(",", ":"))


def stamp_path() -> Path:
    """The stamp file of this install and environment: ``<cache_dir>/kernels/<hash>``."""
    return cache_dir() / "kernels" / hashlib.sha256(_key().encode()).hexdigest()[:40]


def kernels_known_warm() -> bool:
    """True if the agent's kernels were loaded before with this install and environment."""
    key = _key()
    try:
        return (cache_dir() / "kernels" / hashlib.sha256(key.encode()).hexdigest()[:40]
                ).read_text(encoding="utf-8") == key
    except (OSError, UnicodeDecodeError):
        return False


def mark_kernels_warm() -> None:
    """Write the stamp (call after the kernels were loaded or compiled; best effort)."""
    key = _key()
    with contextlib.suppress(OSError):
        write_atomic(cache_dir() / "kernels" / hashlib.sha256(key.encode()).hexdigest()[:40],
                     key.encode())
