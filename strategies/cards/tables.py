"""Hold'em hand-strength tables over the lossless classes, and exact percentile buckets.

The agent's postflop buckets are percentiles of E[HS^2] (:mod:`agent.abstraction.holdem_buckets`),
and :meth:`~agent.abstraction.holdem_buckets.HoldemCards.build` takes the thresholds from random
deals. With the lossless suit isomorphism (:mod:`agent.abstraction.isomorphism`, ``board``
grouping: hole cards, then the visible board as a set) the whole distribution is
available instead: every class once, weighted by the number of hands in it.

**Strength table** (:class:`StrengthTable`, :func:`build_strength_table`): for every class
of a postflop round (1,286,792 on the flop, 13,960,050 on the turn, 123,156,254 on the
river), E[HS] and E[HS^2] of the class's canonical hand with exactly the estimator the
agent uses at decision time (exact on the turn and river; on the flop the deterministic
estimate, which is seeded by the suit-canonical form and so is the same for every hand of
a class), and the class's size in hands (1..24). Built by worker threads over chunks of
classes (a numba kernel that releases the GIL; docs/reference/acpc-strategy.md gives the build
times of ``acpc-strategy cards``). Tables are cached as ``.npz``
(``allow_pickle=False``) under :func:`strategies.cache.cache_dir`, validated on load
(shapes, dtypes, values in [0, 1], class sizes equal to the indexer's).

**Exact percentiles** (:func:`exact_thresholds`): the thresholds
:func:`~agent.abstraction.holdem_buckets.percentile_thresholds` would give on the list of *all*
hands (each class's value repeated by its size): with ``H`` hands sorted by value,
``t[i - 1] = s[(i * H) // n]``. :func:`bucket_shares` gives the share of all hands each
bucket of given thresholds holds: ``1 / n`` each, ideally; ties in the metric (the river
has few distinct values) can make exact equality impossible.

``acpc-strategy cards`` (:mod:`strategies.cli`) builds a table, prints the exact
thresholds and the shares of a strategy file's sampled thresholds.

Imports :mod:`agent`, numpy and numba; never imported by :mod:`agent`.
"""

from __future__ import annotations

import contextlib
import json
import time
import zipfile
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np
import numpy.typing as npt

from agent.abstraction import holdem_buckets as _h
from agent.abstraction import isomorphism as _iso
from agent.abstraction.holdem_buckets import BOARD_SIZES, FLOP_RIVERS_PER_TURN
from agent.abstraction.isomorphism import HandIndexer, holdem_indexer
from agent.acpc.errors import UsageError
from agent.jit import nogil_kernel
from strategies.cache import cache_dir, write_npz

__all__ = [
    "TABLE_FORMAT",
    "StrengthTable",
    "bucket_shares",
    "build_strength_table",
    "cached_strength_table",
    "exact_thresholds",
    "find_strength_table",
    "strength_values",
]

TABLE_FORMAT: Final = "acpc-arena-strength-table"
TABLE_VERSION: Final = 1
_CHUNK: Final = 20_000
_ROUND_NAMES: Final = ("preflop", "flop", "turn", "river")

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]


@nogil_kernel
def _strength_kernel(
    start: int, stop: int, per_round: I64, base: int, binom: I64, offsets: I64, group_count: I64,
    group_n: I64, group_code: I64, group_options: I64, group_size: I64, n_board: int,
    rivers_per_turn: int, perms: I64, keys: I64, card_bits: I64,
    eval_offsets: npt.NDArray[np.int32], values: npt.NDArray[np.int32],
    flush_values: npt.NDArray[np.int32], ehs: F64, ehs2: F64, hands: U8,
) -> None:  # fmt: skip
    """Classes ``start .. stop - 1`` of the round's board indexer into the three tables."""
    iso_scratch = np.zeros(5 * 4 + 4, np.int64)
    scratch = np.zeros(_h.SCRATCH_SIZE, np.int64)
    cards = np.zeros(7, np.int64)
    moments = np.zeros(2)
    for i in range(start, stop):
        hands[i - start] = _iso.unindex_one(
            i, 2, per_round, 13, 4, base, binom, offsets, group_count, group_n, group_code,
            group_options, group_size, iso_scratch, cards,
        )  # fmt: skip
        _h.strength_moments(
            cards, n_board, rivers_per_turn, perms, keys, card_bits, eval_offsets, values,
            flush_values, scratch, moments,
        )  # fmt: skip
        ehs[i - start] = moments[0]
        ehs2[i - start] = moments[1]


def _check_round(round_: object) -> int:
    if isinstance(round_, bool) or round_ not in (1, 2, 3):
        raise UsageError(f"expected a postflop round 1..3, got {round_!r}")
    return round_


def _run(
    indexer: HandIndexer, round_: int, start: int, stop: int, rivers_per_turn: int,
    ehs: F64, ehs2: F64, hands: U8,
) -> None:  # fmt: skip
    args = indexer.kernel_tables(1)
    _strength_kernel(
        start, stop, args.per_round, args.base, args.binom, args.offsets, args.group_count,
        args.group_n, args.group_code, args.group_options, args.group_size,
        BOARD_SIZES[round_], rivers_per_turn, *_h.STRENGTH_TABLES, ehs, ehs2, hands,
    )  # fmt: skip


def strength_values(
    round_: int,
    start: int,
    stop: int,
    *,
    flop_rivers_per_turn: int = FLOP_RIVERS_PER_TURN,
) -> tuple[F64, F64, U8]:
    """``(E[HS], E[HS^2], hands)`` of the classes ``start .. stop - 1`` of a round.

    Class ``i`` is :func:`~agent.abstraction.isomorphism.holdem_indexer`'s (``board``)
    class ``i`` of round ``round_``; the values equal
    :func:`~agent.abstraction.holdem_buckets.hand_strength_moments` of any hand of the class.

    Raises:
        ValueError: for a round outside 1..3, a range outside the round's classes, or a
            bad ``flop_rivers_per_turn``.
    """
    r = _check_round(round_)
    indexer = holdem_indexer("board", r)
    size = indexer.size(1)
    if (
        not isinstance(start, int) or not isinstance(stop, int)
        or not 0 <= start <= stop <= size
    ):  # fmt: skip
        raise UsageError(
            f"expected 0 <= start <= stop <= {size} (the {_ROUND_NAMES[r]} classes), got "
            f"start={start!r} stop={stop!r}"
        )
    _h.check_rivers_per_turn(flop_rivers_per_turn)
    ehs = np.zeros(stop - start)
    ehs2 = np.zeros(stop - start)
    hands = np.zeros(stop - start, np.uint8)
    _run(indexer, r, start, stop, flop_rivers_per_turn, ehs, ehs2, hands)
    return ehs, ehs2, hands


@dataclass(frozen=True, eq=False)
class StrengthTable:
    """E[HS], E[HS^2] and size in hands of every class of one postflop round."""

    round: int
    flop_rivers_per_turn: int
    ehs: F64
    ehs2: F64
    hands: U8
    seconds: float = 0.0

    @property
    def classes(self) -> int:
        return int(self.ehs2.shape[0])

    @property
    def total_hands(self) -> int:
        return int(self.hands.sum(dtype=np.int64))

    @property
    def key(self) -> str:
        """What the table depends on (the flop estimator's parameter only on the flop)."""
        k = self.flop_rivers_per_turn if self.round == 1 else 0
        return f"r{self.round}-k{k}-v{TABLE_VERSION}"


def build_strength_table(
    round_: int,
    *,
    flop_rivers_per_turn: int = FLOP_RIVERS_PER_TURN,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
    stop: int | None = None,
) -> StrengthTable:
    """The :class:`StrengthTable` of a postflop round, over worker threads.

    ``progress(done, total)`` is called as chunks of classes finish. The table is the same
    for any number of workers. ``stop`` builds only the classes ``0 .. stop - 1`` (a
    partial table: for a quick look or a test; never cached).

    Raises:
        ValueError: for a round outside 1..3, ``workers < 1``, a bad
            ``flop_rivers_per_turn`` or ``stop`` outside ``1 .. classes``.
    """
    r = _check_round(round_)
    _h.check_rivers_per_turn(flop_rivers_per_turn)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise UsageError(f"expected workers to be a positive int, got {workers!r}")
    indexer = holdem_indexer("board", r)
    size = indexer.size(1)
    if stop is not None:
        if isinstance(stop, bool) or not isinstance(stop, int) or not 1 <= stop <= size:
            raise UsageError(f"expected stop in 1..{size}, got {stop!r}")
        size = stop
    ehs = np.zeros(size)
    ehs2 = np.zeros(size)
    hands = np.zeros(size, np.uint8)
    t0 = time.perf_counter()
    strength_values(r, 0, 1, flop_rivers_per_turn=flop_rivers_per_turn)  # compile first
    chunks = [(a, min(a + _CHUNK, size)) for a in range(0, size, _CHUNK)]
    done = 0
    with ThreadPoolExecutor(max_workers=workers) as ex:
        futures = [
            ex.submit(_run, indexer, r, a, b, flop_rivers_per_turn, ehs[a:b], ehs2[a:b], hands[a:b])
            for a, b in chunks
        ]
        for (a, b), future in zip(chunks, futures, strict=True):
            future.result()
            done += b - a
            if progress is not None:
                progress(done, size)
    return StrengthTable(r, flop_rivers_per_turn, ehs, ehs2, hands, time.perf_counter() - t0)


def save_strength_table(table: StrengthTable, path: Path) -> Path:
    """Write ``table`` to ``path`` (``.npz``, atomically)."""
    header = {"format": TABLE_FORMAT, "version": TABLE_VERSION, "key": table.key,
              "round": table.round, "flop_rivers_per_turn": table.flop_rivers_per_turn}  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    write_npz(path, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
                ehs=table.ehs, ehs2=table.ehs2, hands=table.hands)  # fmt: skip
    return path


def load_strength_table(
    path: Path, round_: int, *, flop_rivers_per_turn: int = FLOP_RIVERS_PER_TURN
) -> StrengthTable | None:
    """The table at ``path`` if it is exactly the one asked for and valid, else None.

    Checks the header's key, the shapes and dtypes, values in [0, 1] with E[HS]^2 <=
    E[HS^2] <= E[HS], and the class sizes against the indexer's (a sample of 1,000
    classes; their sum against the number of hands).
    """
    r = _check_round(round_)
    want = StrengthTable(r, flop_rivers_per_turn, np.zeros(0), np.zeros(0), np.zeros(0, np.uint8))
    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(bytes(data["header"]).decode())
            ehs = np.ascontiguousarray(data["ehs"])
            ehs2 = np.ascontiguousarray(data["ehs2"])
            hands = np.ascontiguousarray(data["hands"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error):
        return None
    indexer = holdem_indexer("board", r)
    size = indexer.size(1)
    if (
        not isinstance(header, dict)
        or header.get("format") != TABLE_FORMAT
        or header.get("key") != want.key
        or ehs.shape != (size,) or ehs2.shape != (size,) or hands.shape != (size,)
        or ehs.dtype != np.float64 or ehs2.dtype != np.float64 or hands.dtype != np.uint8
    ):  # fmt: skip
        return None
    tolerance = 1e-12
    if not (
        np.isfinite(ehs).all() and (ehs >= 0).all() and (ehs <= 1).all()
        and (ehs2 >= ehs * ehs - tolerance).all() and (ehs2 <= ehs + tolerance).all()
        and int(hands.sum(dtype=np.int64)) == indexer.hands(1)
    ):  # fmt: skip
        return None
    sample = np.random.default_rng(0).integers(0, size, 1000)
    if not (indexer.unindex_batch(1, sample)[1] == hands[sample]).all():
        return None
    return StrengthTable(r, flop_rivers_per_turn, ehs, ehs2, hands)


def find_strength_table(
    round_: int,
    *,
    flop_rivers_per_turn: int = FLOP_RIVERS_PER_TURN,
    directory: Path | None = None,
) -> tuple[StrengthTable | None, Path]:
    """``(table, path)``: the cached table of :func:`cached_strength_table` if it is there
    and valid (else ``None``), without building it.

    Raises:
        ValueError: for a round outside 1..3 or a bad ``flop_rivers_per_turn``.
    """
    r = _check_round(round_)
    _h.check_rivers_per_turn(flop_rivers_per_turn)
    probe = StrengthTable(r, flop_rivers_per_turn, np.zeros(0), np.zeros(0), np.zeros(0, np.uint8))
    path = (directory or cache_dir()) / f"holdem-strength-{probe.key}.npz"
    if path.exists():
        return load_strength_table(path, r, flop_rivers_per_turn=flop_rivers_per_turn), path
    return None, path


def cached_strength_table(
    round_: int,
    *,
    flop_rivers_per_turn: int = FLOP_RIVERS_PER_TURN,
    workers: int = 1,
    directory: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[StrengthTable, Path, bool]:
    """:func:`build_strength_table`, or the same table from the cache.

    Returns ``(table, path, cached)``: ``cached`` says whether it came from ``path``.

    Raises:
        ValueError: as :func:`build_strength_table`.
    """
    r = _check_round(round_)
    found, path = find_strength_table(r, flop_rivers_per_turn=flop_rivers_per_turn,
                                      directory=directory)
    if found is not None:
        return found, path, True
    table = build_strength_table(
        r, flop_rivers_per_turn=flop_rivers_per_turn, workers=workers, progress=progress
    )
    with contextlib.suppress(OSError):  # a read-only cache only costs a rebuild next time
        save_strength_table(table, path)
    return table, path, False


def _check_weighted(values: npt.ArrayLike, weights: npt.ArrayLike) -> tuple[F64, I64]:
    v = np.asarray(values, dtype=np.float64).ravel()
    w = np.asarray(weights).ravel()
    if w.shape != v.shape or (w.size and (w.dtype.kind not in "iu" or (w < 0).any())):
        raise UsageError(
            f"expected one non-negative integer weight per value ({v.size}), got weights of "
            f"shape {w.shape} and dtype {w.dtype}"
        )
    return v, w.astype(np.int64)


def exact_thresholds(
    values: npt.ArrayLike, weights: npt.ArrayLike, num_buckets: int
) -> list[float]:
    """Percentile thresholds of ``values`` each counted ``weights`` times (module docstring).

    Equal to ``percentile_thresholds(np.repeat(values, weights), num_buckets)`` without
    building the repeated list.

    Raises:
        ValueError: for weights that are not one non-negative int per value, or fewer
            weighted values than buckets.
    """
    v, w = _check_weighted(values, weights)
    total = int(w.sum())
    if isinstance(num_buckets, bool) or not isinstance(num_buckets, int) or num_buckets < 1 \
            or total < num_buckets:  # fmt: skip
        raise UsageError(
            f"expected at least {max(num_buckets, 1) if isinstance(num_buckets, int) else 1} "
            f"weighted values for {num_buckets!r} buckets, got {total}"
        )
    order = np.argsort(v, kind="stable")
    cumulative = np.cumsum(w[order])
    ranks = np.array([(i * total) // num_buckets for i in range(1, num_buckets)], np.int64)
    at = np.searchsorted(cumulative, ranks, side="right")  # first class covering the rank
    return [float(x) for x in v[order][at]]


def bucket_shares(values: npt.ArrayLike, weights: npt.ArrayLike, thresholds: npt.ArrayLike) -> F64:
    """Share of the weighted values in each bucket of ``thresholds`` (``searchsorted`` right).

    Raises:
        ValueError: for weights that are not one non-negative int per value, unsorted
            thresholds, or all-zero weights.
    """
    v, w = _check_weighted(values, weights)
    t = np.asarray(thresholds, dtype=np.float64).ravel()
    if (np.diff(t) < 0).any():
        raise UsageError(f"expected sorted thresholds, got {t.tolist()!r}")
    total = int(w.sum())
    if total == 0:
        raise UsageError("expected some positive weight, got all zero weights")
    buckets = np.searchsorted(t, v, side="right")
    counts = np.bincount(buckets, weights=w.astype(np.float64), minlength=t.size + 1)
    shares: F64 = counts / total
    return shares
