"""The project's numba decorators: every kernel in ``agent`` and ``strategies`` uses these.

Kernels are private ``@kernel`` functions over flat arrays that mutate preallocated outputs,
each behind a typed public wrapper that validates and allocates (docs/architecture.md, "Rules").
numba's decorators are untyped; these keep the decorated function's type for mypy.

* :func:`kernel`: ``numba.njit(cache=True)``, compiled once per argument type (not per
  constant a calling kernel passes) and cached on disk.
* :func:`nogil_kernel`: the same, releasing the GIL, so that worker threads run in parallel.
* :func:`parallel_kernel`: ``parallel=True`` (``numba.prange`` loops over the cores).
* :func:`inline_kernel`: ``inline="always"``: a small helper inlined into its callers.
* :func:`share`: plain Python functions that kernels may call too (one definition of a
  rule for the Python code and the kernels, e.g. the mappings and the purification).
* :func:`index_dispatch`: a kernel calling the ``i``-th of some functions, generated from
  their table (the built-in mappings by index).

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

import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import numba

__all__ = ["index_dispatch", "inline_kernel", "kernel", "nogil_kernel", "parallel_kernel",
           "share"]

_F = TypeVar("_F", bound=Callable[..., Any])


def _unliteral(dispatcher: Any) -> Any:
    """``dispatcher`` compiled once per argument *type* when a kernel calls it, not once per
    constant: numba types a constant argument (``f(cards, 5)``) as that literal value and
    compiles a specialization of the callee (and of everything it calls) for each distinct
    constant a caller passes, next to the one for plain ``int64``: a fifth of the project's
    compilations in a test run, about a sixth of ``acpc-arena warmup``'s CPU. Calls from
    Python were never specialized so. The results do not change (the same source computes
    the same integers and floats), and LLVM can still inline the call and fold the
    constant: a hold'em LBR run took no more instructions (callgrind)."""
    from numba.core import types

    plain: Callable[[Any], Any] = types.unliteral
    template = getattr(dispatcher, "get_call_template", None)
    if template is None:  # NUMBA_DISABLE_JIT=1: the plain function
        return dispatcher

    def get_call_template(args: tuple[Any, ...], kws: dict[str, Any]) -> Any:
        return template(tuple(plain(a) for a in args), {k: plain(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


def kernel(fn: _F) -> _F:
    """``numba.njit(cache=True)`` (one compilation per argument type: :func:`_unliteral`)."""
    return cast(_F, _unliteral(numba.njit(cache=True)(fn)))


def nogil_kernel(fn: _F) -> _F:
    """``numba.njit(cache=True, nogil=True)``: callable from worker threads in parallel."""
    return cast(_F, _unliteral(numba.njit(cache=True, nogil=True)(fn)))


def parallel_kernel(fn: _F) -> _F:
    """``numba.njit(cache=True, parallel=True)``: ``numba.prange`` loops use every core."""
    return cast(_F, _unliteral(numba.njit(cache=True, parallel=True)(fn)))


def inline_kernel(fn: _F) -> _F:
    """``numba.njit(cache=True, inline="always")``: inlined into the kernels that call it."""
    return cast(_F, numba.njit(cache=True, inline="always")(fn))


_shared: set[Callable[..., Any]] = set()
_sharing = threading.Lock()


def share(*fns: Callable[..., Any]) -> None:
    """Let kernels call these plain Python functions (``numba.extending.register_jitable``):
    Python callers keep calling the functions themselves, and each kernel that names one
    compiles it in from the same source. A function is registered once however often this
    is called. A kernel's disk cache is keyed by its own module's source: after changing a
    shared function, the kernels that call it are recompiled only once their own source
    (or the cache) changes."""
    from numba.extending import register_jitable

    with _sharing:
        for fn in fns:
            if fn not in _shared:
                register_jitable(fn)
                _shared.add(fn)


Dispatch = Callable[[int, float, float, float], float]
"""``dispatch(i, a, b, x)``: the ``i``-th function of a table at ``(a, b, x)``."""


def index_dispatch(fns: Sequence[Callable[[float, float, float], float]]) -> Dispatch:
    """A kernel ``dispatch(i, a, b, x)`` = ``fns[i](a, b, x)`` (0 <= i < len(fns); a larger
    ``i`` gives the last one), generated from the table: a chain of small kernels, one per
    index, each calling its function compiled by :func:`kernel` (so the kernels that call
    the dispatch run the table's own functions, whatever the table holds)."""
    head = kernel(fns[0])
    if len(fns) == 1:
        def last(which: int, a: float, b: float, x: float) -> float:
            return head(a, b, x)
        return kernel(last)
    tail = index_dispatch(fns[1:])

    def call(which: int, a: float, b: float, x: float) -> float:
        if which == 0:
            return head(a, b, x)
        return tail(which - 1, a, b, x)
    return kernel(call)
