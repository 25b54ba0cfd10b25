"""LBR's exact preflop equities in hold'em: a bundled table over every board.

Before the flop LBR needs its equity against every agent hole over the 5 board cards still
to come. Exactly, that is 1,712,304 boards a pair of holes (2,118,760 for LBR's hole), too
many to enumerate at each decision, so until 2026-11-29 sampled LBR drew
:data:`~strategies.measure.lbr_cards.PREFLOP_SAMPLES` boards a decision (each hole's equity
within about 0.01). This module holds the exact counts once, for every pair of holes:

* ``scores[k, j]``: ``2 * wins + ties`` of the *representative* hole of preflop class ``k``
  (:func:`agent.abstraction.holdem_spec.preflop_class`; the representative is the class's
  first hole in :func:`~strategies.measure.lbr_cards.all_holes` order) against hole ``j``
  (that order) over every board of the 48 other cards, or -1 where the two holes share a
  card. Every other hole of a class is a suit permutation of its representative, and the
  counts follow the permutation: the score of hole ``h`` against ``o`` is
  ``scores[class(h), index(pi(o))]`` for the permutation ``pi`` of the suits that takes
  ``h`` to its representative.
* Equity = ``score / (2 * 1,712,304)`` (:func:`~strategies.measure.lbr_cards.equity_of`):
  the same bits as :func:`~strategies.measure.lbr_cards.equities` over every completion.

The table is built by :func:`build` (the rank-class kernel over all 2,118,760 boards of each
representative: about 170 CPU-seconds, ``scripts/build_preflop_equity.py``) and bundled as
``strategies/data/holdem-preflop-equity.npz`` (about 1 MB); :func:`load` checks its SHA-256,
shape, type and bounds before use (never pickled). The tests compare entries with the
hole-by-hole kernel over every board and check that every pair's scores add to
``2 * 1,712,304``.

Imports numpy, :mod:`agent`, :mod:`strategies.measure.lbr_cards`; never imported by :mod:`agent`.
"""

from __future__ import annotations

import functools
import hashlib
import io
import itertools
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agent.abstraction.holdem_spec import NUM_PREFLOP_CLASSES, preflop_class
from agent.acpc.errors import CardError, UsageError
from agent.acpc.gamedef import Game
from strategies.measure.lbr_cards import (
    equity_counts,
    equity_of,
    index_combinations,
    suit_permutations,
)

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

BOARDS = 1_712_304
"""Boards of 5 cards from the 48 that two disjoint holes leave: C(48, 5)."""

HOLES = 1_326
TABLE_NAME = "holdem-preflop-equity.npz"
TABLE_SHA256 = "669e5b0d246d220550f4453109ae160c2bdab9e7521807fd1c675d26e8580ff9"
"""SHA-256 of the bundled file's bytes; :func:`load` refuses any other."""

_MAX_BYTES = 8_000_000


def holes() -> I64:
    """``(1326, 2)``: every hold'em hole, sorted cards, lexicographic (LBR's range index)."""
    return np.array(list(itertools.combinations(range(52), 2)), dtype=np.int64)


@functools.cache
def _index() -> I64:
    """``(52, 52)``: the index in :func:`holes` of each pair of cards (either order)."""
    out = np.full((52, 52), -1, np.int64)
    for i, (a, b) in enumerate(holes().tolist()):
        out[a, b] = out[b, a] = i
    return out


@functools.cache
def representatives() -> I64:
    """``(169, 2)``: each preflop class's first hole in :func:`holes` order."""
    out = np.full((NUM_PREFLOP_CLASSES, 2), -1, np.int64)
    for a, b in holes().tolist():
        k = preflop_class((a, b))
        if out[k, 0] < 0:
            out[k] = (a, b)
    return out


@functools.cache
def _maps() -> tuple[I64, I64, I64]:
    """``(cls, perm, moved)``: each hole's class; the index of a suit permutation taking it
    to its class's representative; ``moved[p, j]`` the index of hole ``j`` with its suits
    permuted by permutation ``p`` (:func:`strategies.measure.lbr_cards.suit_permutations`,
    the relabelling sampled LBR's bucket cache uses)."""
    hs = holes()
    reps = representatives()
    moved = suit_permutations(hs)[1]
    cls = np.array([preflop_class(h) for h in hs.tolist()], np.int64)
    rep_index = _index()[reps[:, 0], reps[:, 1]]
    perm = np.argmax(moved == rep_index[cls][None, :], axis=0).astype(np.int64)
    if not (moved[perm, np.arange(HOLES)] == rep_index[cls]).all():
        raise AssertionError("expected every hole to be a suit relabelling of its class's "
                             "representative")
    for a in (cls, perm, moved):
        a.setflags(write=False)
    return cls, perm, moved


def _counts_for(k: int, game: Game) -> npt.NDArray[np.int32]:
    """Row ``k`` of the table: the representative's scores against every hole."""
    rep = representatives()[k]
    live = np.array([c for c in range(52) if c not in (rep[0], rep[1])], np.int64)
    boards = live[index_combinations(50, 5)]
    hs = holes()
    ok = ~np.isin(hs, rep).any(axis=1)
    score, count = equity_counts(game, tuple(rep.tolist()), (), hs[ok], boards, fast=True)
    if not (count == BOARDS).all():
        raise AssertionError(f"expected {BOARDS} boards for every disjoint pair, got "
                             f"{sorted(set(count.tolist()))[:5]!r} for class {k}")
    row = np.full(HOLES, -1, np.int32)
    row[ok] = score
    return row


def build(game: Game, workers: int = 2,
          progress: Callable[[int, int, float], None] | None = None) -> npt.NDArray[np.int32]:
    """``(169, 1326)`` scores (module docstring), ``workers`` threads (the kernel releases
    the GIL); ``progress(done, total, seconds)`` after each class."""
    table = np.empty((NUM_PREFLOP_CLASSES, HOLES), np.int32)
    lock = threading.Lock()
    done = [0]
    start = time.monotonic()

    def one(k: int) -> None:
        table[k] = _counts_for(k, game)
        with lock:
            done[0] += 1
            if progress is not None:
                progress(done[0], NUM_PREFLOP_CLASSES, time.monotonic() - start)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as ex:
        list(ex.map(one, range(NUM_PREFLOP_CLASSES)))
    return table


def save(table: npt.NDArray[np.int32], path: str | Path) -> str:
    """Write ``table`` (npz, compressed) and return the file's SHA-256."""
    with open(path, "wb") as f:
        np.savez_compressed(f, scores=table, representatives=representatives(),
                            boards=np.int64(BOARDS))
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def bundled_path() -> Path:
    """Where the bundled table is (package data of :mod:`strategies.data`)."""
    return Path(str(resources.files("strategies.data").joinpath(TABLE_NAME)))


def load(path: str | Path | None = None, sha256: str | None = TABLE_SHA256) -> \
        npt.NDArray[np.int32]:
    """The table, checked (module docstring): one clear line if it is not the one expected.

    Raises:
        UsageError: a missing file, another SHA-256, a malformed array or values out of
            bounds.
    """
    where = bundled_path() if path is None else Path(path)
    try:
        size = where.stat().st_size
    except OSError as exc:
        raise UsageError(f"expected LBR's preflop equity table at {str(where)!r}, got "
                         f"{type(exc).__name__}: {exc}") from None
    if size > _MAX_BYTES:
        raise UsageError(f"expected LBR's preflop equity table {str(where)!r} to be at most "
                         f"{_MAX_BYTES} bytes, got {size!r}")
    data = where.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if sha256 is not None and digest != sha256:
        raise UsageError(f"expected LBR's preflop equity table {str(where)!r} with SHA-256 "
                         f"{sha256}, got {digest!r} (rebuild it: scripts/"
                         f"build_preflop_equity.py)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            scores = z["scores"]
            reps = z["representatives"]
            boards = z["boards"]
    except (OSError, ValueError, KeyError) as exc:
        raise UsageError(f"expected an npz with scores, representatives and boards at "
                         f"{str(where)!r}, got {type(exc).__name__}: {exc}") from None
    shape = (NUM_PREFLOP_CLASSES, HOLES)
    if scores.dtype != np.int32 or scores.shape != shape:
        raise UsageError(f"expected int32 scores of shape {shape} in {str(where)!r}, got "
                         f"{scores.dtype!s} {scores.shape!r}")
    if int(boards) != BOARDS or not np.array_equal(reps, representatives()):
        raise UsageError(f"expected {BOARDS} boards and the classes' first holes as "
                         f"representatives in {str(where)!r}, got {int(boards)!r}")
    if int(scores.min()) < -1 or int(scores.max()) > 2 * BOARDS:
        raise UsageError(f"expected scores in -1..{2 * BOARDS} in {str(where)!r}, got "
                         f"{int(scores.min())!r}..{int(scores.max())!r}")
    scores.setflags(write=False)
    out: npt.NDArray[np.int32] = scores
    return out


@functools.cache
def _bundled() -> npt.NDArray[np.int32]:
    return load()


def preflop_equities(hole: Sequence[int], which: I64,
                     table: npt.NDArray[np.int32] | None = None) -> F64:
    """LBR's exact preflop equity with ``hole`` against the holes of index ``which``
    (:func:`holes` order, none touching ``hole``): the bundled table's scores over the
    boards (module docstring)."""
    scores = _bundled() if table is None else table
    cls, perm, moved = _maps()
    j = int(_index()[int(hole[0]), int(hole[1])])
    row = scores[cls[j]][moved[perm[j]][which]].astype(np.int64)
    if (row < 0).any():
        raise CardError(f"expected holes disjoint from {tuple(hole)!r}, got one sharing a "
                        f"card among {which[row < 0][:3].tolist()!r}")
    return equity_of(row, np.full(row.shape[0], BOARDS, np.int64))
