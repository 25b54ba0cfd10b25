"""Where the offline tools cache what they compute, and how they write it.

Deal pools (:mod:`strategies.solvers.dealpool`) and strength tables (:mod:`strategies.cards.tables`)
are expensive to build and deterministic, so they are cached as ``.npz`` files (arrays and a
JSON header; read back with ``allow_pickle=False`` and validated, never trusted) under
:func:`cache_dir`.

Imports numpy and :mod:`agent.fileio`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agent.fileio import atomic_writer, cache_dir

__all__ = ["cache_dir", "write_npz"]
"""``cache_dir`` is :func:`agent.fileio.cache_dir`, the project's one cache directory."""


def write_npz(target: Path, **arrays: Any) -> None:
    """``np.savez`` to ``target`` atomically (:func:`agent.fileio.atomic_writer`)."""
    with atomic_writer(target, suffix=".npz") as f:
        np.savez(f, **arrays)
