"""The project's numba decorators: every kernel in ``agent`` and ``strategies`` uses these.

Kernels are private ``@kernel`` functions over flat arrays that mutate preallocated outputs,
each behind a typed public wrapper that validates and allocates (docs/architecture.md, "Rules").
numba's decorators are untyped; these keep the decorated function's type for mypy.

* :func:`kernel`: ``numba.njit(cache=True)``, compiled once and cached on disk.
* :func:`nogil_kernel`: the same, releasing the GIL, so that worker threads run in parallel.
* :func:`parallel_kernel`: ``parallel=True`` (``numba.prange`` loops over the cores).
* :func:`inline_kernel`: ``inline="always"``: a small helper inlined into its callers.

Every kernel also runs as plain Python under ``NUMBA_DISABLE_JIT=1`` (the tests do that
once per kernel module).

First use: numba compiles a kernel the first time it runs on an install (tens of seconds
for the whole project) and caches it on disk. :func:`compile_notice` tells the user when
that is about to happen (:func:`agent.console.compile_notice`, which needs no numba import)
and ``acpc-arena warmup`` (:mod:`strategies.warmup`) compiles everything ahead of time.

Imports numba; imported by the modules that define kernels and by nothing in
:mod:`agent.acpc` (the stdlib-only core) or :mod:`dealer`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba

__all__ = ["inline_kernel", "kernel", "nogil_kernel", "parallel_kernel"]

_F = TypeVar("_F", bound=Callable[..., Any])


def kernel(fn: _F) -> _F:
    """``numba.njit(cache=True)``."""
    return cast(_F, numba.njit(cache=True)(fn))


def nogil_kernel(fn: _F) -> _F:
    """``numba.njit(cache=True, nogil=True)``: callable from worker threads in parallel."""
    return cast(_F, numba.njit(cache=True, nogil=True)(fn))


def parallel_kernel(fn: _F) -> _F:
    """``numba.njit(cache=True, parallel=True)``: ``numba.prange`` loops use every core."""
    return cast(_F, numba.njit(cache=True, parallel=True)(fn))


def inline_kernel(fn: _F) -> _F:
    """``numba.njit(cache=True, inline="always")``: inlined into the kernels that call it."""
    return cast(_F, numba.njit(cache=True, inline="always")(fn))
