"""Action translation: map an opponent's off-tree bet onto the abstraction's bet sizes.

A mapping is a function ``f(A, B, x)`` = probability of reading a bet of size ``x`` as the
smaller abstract size ``A`` (else as ``B``), with every size measured as a fraction of the
pot (:func:`agent.acpc.betsize.pot_fraction`), ``0 <= A < x < B``; ``A = 0`` is the
check/call. The seven classic mappings (docs/background.md) are built in and selected by name:

=============  ============================================================================
name           ``f(A, B, x)``
=============  ============================================================================
det-arith      1 if ``x <= (A + B) / 2`` else 0
rand-arith     ``(B - x) / (B - A)``
det-geo        1 if ``A / x > x / B`` else 0 (threshold ``sqrt(A B)``; 0 for ``A = 0``)
rand-geo-1     ``A (B - x) / (A (B - x) + x (x - A))``
rand-geo-2     ``A (B + x)(B - x) / ((B - A)(x^2 + A B))``
det-pshar      1 if ``x <= (A + B + 2 A B) / (A + B + 2)`` else 0
rand-pshar     ``(B - x)(1 + A) / ((B - A)(1 + x))`` (pseudo-harmonic)
=============  ============================================================================

Ties of the deterministic mappings: Det-Arith and Det-psHar map a bet at the threshold to
``A``, Det-Geo to ``B``; thresholds are compared with a relative tolerance of 1e-9 because
sizes like ``0.1 * 20`` are not exact in floating point. At the ends every mapping gives
``f(A) = 1`` and ``f(B) = 0``, except that the geometric ones map all of ``(0, B]`` to ``B``
when ``A = 0``.

Custom mappings: ``module:function`` (a callable ``(A, B, x) -> float``) or the name of an
entry point in the group ``acpc_arena.mappings``. A name read from a file (a strategy file's
``default_mapping``) is data: it may only name a built-in or an installed entry point, never
``module:function`` (:func:`get_mapping` with ``from_file``); ``module:function`` is for a
name the user typed (``--mapping``). :func:`translate` applies a mapping over a sorted list
of abstract sizes, including bets outside the range (nearest end).

One table: :data:`BUILTIN_MAPPINGS` (name -> function; a mapping's index is its place in
the table, :data:`MAPPING_NAMES`). The functions are plain Python that numba can compile:
the agent calls them, and the compiled walk of ``acpc-match --estimator sampled-agents``
(:mod:`evaluation.estimators.fastwalk`) runs the same functions compiled, through
:func:`mapping_kernel` (a dispatch generated over the table's indices) and
:func:`share_rules` (:func:`bracket_in` and the tolerance tests). A plug-in mapping is
plain Python of its own: the compiled walk cannot take it (:func:`mapping_index` is None).

Stdlib only at import; :func:`mapping_kernel` and :func:`share_rules` load numba.
"""

from __future__ import annotations

import functools
import importlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from agent.acpc.errors import AbstractionError
from agent.acpc.limits import excerpt

MappingFn = Callable[[float, float, float], float]
"""``f(A, B, x)``: the probability of mapping ``x`` to ``A``."""


class Sizes(Protocol):
    """Sorted sizes by index: a list or a numpy array (so a kernel can pass its own)."""

    def __getitem__(self, i: int, /) -> float: ...


ENTRY_POINT_GROUP = "acpc_arena.mappings"
_TOL = 1e-9


def _le(x: float, threshold: float) -> bool:
    """``x <= threshold`` with a relative tolerance (ties count as equal)."""
    return x <= threshold + _TOL * max(1.0, abs(threshold))


def _lt(x: float, threshold: float) -> bool:
    """``x < threshold`` beyond the tolerance."""
    return x < threshold - _TOL * max(1.0, abs(threshold))


def _ends(a: float, b: float, x: float) -> float:
    """``f`` at the ends: 1 at or below ``A``, 0 at or beyond ``B``; -1 strictly between
    (where the mapping's own formula applies). A float, not None, so that numba compiles it."""
    if _le(x, a):
        return 1.0
    if not _lt(x, b):
        return 0.0
    return -1.0


def det_arith(a: float, b: float, x: float) -> float:
    """Deterministic arithmetic: ``A`` up to the midpoint (inclusive)."""
    end = _ends(a, b, x)
    if end >= 0.0:
        return end
    return 1.0 if _le(x, (a + b) / 2) else 0.0


def rand_arith(a: float, b: float, x: float) -> float:
    """Randomised arithmetic: linear in ``x``."""
    end = _ends(a, b, x)
    if end >= 0.0:
        return end
    return (b - x) / (b - a)


def det_geo(a: float, b: float, x: float) -> float:
    """Deterministic geometric: ``A`` strictly below ``sqrt(A B)``; all ``B`` when ``A = 0``."""
    if a <= 0.0:
        return 1.0 if x <= 0.0 else 0.0
    end = _ends(a, b, x)
    if end >= 0.0:
        return end
    return 1.0 if _lt(x, math.sqrt(a * b)) else 0.0


def rand_geo_1(a: float, b: float, x: float) -> float:
    """Randomised geometric 1: ``A (B - x) / (A (B - x) + x (x - A))``."""
    if a <= 0.0:
        return 1.0 if x <= 0.0 else 0.0
    end = _ends(a, b, x)
    if end >= 0.0:
        return end
    num = a * (b - x)
    return num / (num + x * (x - a))


def rand_geo_2(a: float, b: float, x: float) -> float:
    """Randomised geometric 2: ``A (B + x)(B - x) / ((B - A)(x^2 + A B))``."""
    if a <= 0.0:
        return 1.0 if x <= 0.0 else 0.0
    end = _ends(a, b, x)
    if end >= 0.0:
        return end
    return a * (b + x) * (b - x) / ((b - a) * (x * x + a * b))


def det_pshar(a: float, b: float, x: float) -> float:
    """Deterministic pseudo-harmonic: ``A`` up to ``(A + B + 2AB) / (A + B + 2)``."""
    end = _ends(a, b, x)
    if end >= 0.0:
        return end
    return 1.0 if _le(x, (a + b + 2 * a * b) / (a + b + 2)) else 0.0


def rand_pshar(a: float, b: float, x: float) -> float:
    """Randomised pseudo-harmonic: ``(B - x)(1 + A) / ((B - A)(1 + x))``.

    The unique ``f`` with ``f/(1+A) + (1-f)/(1+B) = 1/(1+x)``: a defender calls an abstract
    bet ``y`` with probability ``1/(1+y)`` in the clairvoyance game, so this mapping keeps the
    calling frequency right for every ``x`` in ``[A, B]``.
    """
    end = _ends(a, b, x)
    if end >= 0.0:
        return end
    return (b - x) * (1 + a) / ((b - a) * (1 + x))


BUILTIN_MAPPINGS: dict[str, MappingFn] = {
    "det-arith": det_arith,
    "rand-arith": rand_arith,
    "det-geo": det_geo,
    "rand-geo-1": rand_geo_1,
    "rand-geo-2": rand_geo_2,
    "det-pshar": det_pshar,
    "rand-pshar": rand_pshar,
}
"""The seven classic mappings by their command-line names: the one table of mappings."""

MAPPING_NAMES: tuple[str, ...] = tuple(BUILTIN_MAPPINGS)
"""The built-in mappings by index (the table's order): the index :func:`mapping_kernel`
takes."""


def mapping_index(fn: MappingFn) -> int | None:
    """The table index of a built-in mapping function; None for any other (a plug-in)."""
    for i, builtin in enumerate(BUILTIN_MAPPINGS.values()):
        if fn is builtin:
            return i
    return None


def share_rules() -> None:
    """Let numba kernels call :func:`bracket_in` and the mappings' helpers, compiled from
    these same functions (:func:`agent.jit.share`). Loads numba."""
    from agent.jit import share

    share(_le, _lt, _ends, bracket_in)


@functools.cache
def mapping_kernel() -> Callable[[int, float, float, float], float]:
    """The table compiled: a numba kernel ``f(i, A, B, x)`` =
    ``BUILTIN_MAPPINGS[MAPPING_NAMES[i]](A, B, x)``, each mapping compiled from its function
    here and the dispatch generated over the indices (:func:`agent.jit.index_dispatch`).
    Made once; loads numba."""
    from agent.jit import index_dispatch

    share_rules()
    return index_dispatch(tuple(BUILTIN_MAPPINGS.values()))


DETERMINISTIC = frozenset({"det-arith", "det-geo", "det-pshar"})


def get_mapping(spec: str, *, from_file: str | None = None) -> MappingFn:
    """The mapping named by ``spec``: a built-in name, an entry point in
    :data:`ENTRY_POINT_GROUP` or, only when the user typed it (``from_file`` None),
    ``module:function``.

    ``from_file``: where a name read from a file came from (``"FILE: default_mapping"``);
    such a name never imports a module of its choosing, and the error names that place.

    Raises:
        AbstractionError: if nothing of that name can be found, it is not callable, or a
            name from a file is neither built in nor an entry point.
    """
    if not isinstance(spec, str):
        raise AbstractionError(f"{from_file or 'mapping'}: expected a mapping name, got "
                               f"{excerpt(spec)}")
    key = spec.strip().lower()
    if key in BUILTIN_MAPPINGS:
        return BUILTIN_MAPPINGS[key]
    if ":" in spec and from_file is None:
        module_name, _, attr = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise AbstractionError(
                f"expected an importable module in mapping {excerpt(spec)}, got {exc}"
            ) from None
        fn = getattr(module, attr, None)
        if not callable(fn):
            raise AbstractionError(f"expected a callable {excerpt(attr)} in module "
                                   f"{excerpt(module_name)} for "
                                   f"mapping {excerpt(spec)}")
        return _checked(spec, fn)
    if ":" not in spec:
        from importlib.metadata import entry_points  # ~20 ms: only for a name not built in

        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name == spec:
                return _checked(spec, ep.load())
    if from_file is not None:
        raise AbstractionError(
            f"{from_file}: expected a built-in mapping ({', '.join(BUILTIN_MAPPINGS)}) or an "
            f"installed entry point in {ENTRY_POINT_GROUP!r}, got {excerpt(spec)} (a file cannot "
            f"name code: type module:function with --mappings instead)"
        )
    raise AbstractionError(
        f"expected a mapping name ({', '.join(BUILTIN_MAPPINGS)}), 'module:function' or an "
        f"entry point in {ENTRY_POINT_GROUP!r}, got {excerpt(spec)}"
    )


def choose_mapping(user: str | None, file_default: str, file: str) -> tuple[str, MappingFn]:
    """The mapping to play: the one the user named (``--mapping``, any form), else the
    strategy file's ``default_mapping`` (built-ins and entry points only); with its name.

    Raises:
        AbstractionError: as :func:`get_mapping`.
    """
    if user:
        return user, get_mapping(user)
    return file_default, get_mapping(file_default, from_file=f"{file}: default_mapping")


def _checked(name: str, fn: Callable[..., object]) -> MappingFn:
    def wrapped(a: float, b: float, x: float) -> float:
        value = fn(a, b, x)
        if not isinstance(value, (int, float)) or not 0.0 <= float(value) <= 1.0:
            raise AbstractionError(
                f"expected mapping {name!r} to return a probability in [0, 1] for "
                f"A={a!r}, B={b!r}, x={x!r}, got {value!r}"
            )
        return float(value)

    wrapped.__name__ = wrapped.__qualname__ = name  # the name it was asked for, in messages
    return wrapped


@dataclass(frozen=True, slots=True)
class Translation:
    """How a real bet was read: the sizes around it and the choice made."""

    x: float
    """The real bet, as a pot fraction."""
    low: int
    """Index of ``A`` in the sizes (equal to ``high`` when ``x`` hit a size or an end)."""
    high: int
    """Index of ``B``."""
    prob_low: float
    """``f(A, B, x)``."""
    chosen: int
    """Index of the size chosen."""


def bracket(sizes: Sequence[float], x: float) -> tuple[int, int]:
    """Indices of ``A`` (largest size <= x) and ``B`` (smallest size >= x) in sorted ``sizes``.

    Both are the same index when ``x`` equals a size (within tolerance) or lies outside the
    range (then the nearest end).

    Raises:
        ValueError: if ``sizes`` is empty.
    """
    if not sizes:
        raise AbstractionError("expected at least one abstract size, got none")
    return bracket_in(sizes, len(sizes), x)


def bracket_in(sizes: Sizes, n: int, x: float) -> tuple[int, int]:
    """:func:`bracket` over the first ``n >= 1`` of ``sizes`` (a list or an array; the
    compiled walk calls it too, :func:`share_rules`)."""
    if _le(x, sizes[0]):
        return 0, 0
    last = n - 1
    if not _lt(x, sizes[last]):
        return last, last
    lo, hi = 0, last
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _le(sizes[mid], x):
            lo = mid
        else:
            hi = mid
    if not _lt(sizes[lo], x):
        return lo, lo
    if not _lt(x, sizes[hi]):
        return hi, hi
    return lo, hi


def translate(sizes: Sequence[float], x: float, mapping: MappingFn, u: float) -> Translation:
    """Read bet ``x`` as one of ``sizes`` (sorted, pot fractions) with mapping ``f``.

    ``u`` is a uniform draw in ``[0, 1)`` from the agent's private randomness: ``A`` is chosen
    when ``u < f(A, B, x)``.
    """
    lo, hi = bracket(sizes, x)
    if lo == hi:
        return Translation(x, lo, hi, 1.0, lo)
    f = mapping(sizes[lo], sizes[hi], x)
    return Translation(x, lo, hi, f, lo if u < f else hi)
