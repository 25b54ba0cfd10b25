"""A pool of sampled hold'em deals: the solver's chance when deals cannot be enumerated.

Hold'em deals cannot be enumerated (:mod:`strategies.games.abstract` is for small decks), so chance
is *sampled* from a fixed pool of random deals.

**Deal pool** (:class:`DealPool`, :func:`build_pool`). Deal ``i`` is 9 distinct cards drawn
by the card generator of :mod:`agent.abstraction.holdem_buckets` seeded from ``(seed, i)``:
position 0's hole cards, position 1's, then the 5 board cards. For it the pool stores each
position's bucket in every round under a
:class:`~agent.abstraction.holdem_buckets.HoldemCards` abstraction (``uint16``, shape
``(N, 2, 4)``: the lossless preflop class, then the E[HS^2] buckets with exactly the
estimator the agent uses at match time, so the solver and the agent agree bucket for bucket)
and the showdown result (``int8``: :data:`~strategies.games.abstract.WIN0`, ``WIN1`` or ``TIE``).
Building is split over worker threads (the kernel releases the GIL; deal ``i`` depends only
on ``(seed, i)``, so the pool is the same for any number of workers). Pools are cached as
``.npz`` (``allow_pickle=False``) under :func:`strategies.cache.cache_dir`, keyed by a hash
of everything they depend on.

**Pool game** (:class:`PoolGame`): a :class:`~strategies.games.abstract.FlatTree` with a pool as its
chance, in the flat-array form the solvers of :mod:`strategies.solvers.cfr` walk
(:meth:`PoolGame.kernel_args`, the same tuple as
:meth:`strategies.games.abstract.AbstractGame.kernel_args`): a deal is drawn uniformly from
the pool,
its buckets are the pool's, and its one showdown "pattern" is its result, with terminal
payoffs ``(terminal, result, position)`` (position 1's the exact negation of position 0's).

Imports :mod:`agent`, numpy, numba and :mod:`strategies`; never imported by :mod:`agent`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import time
import zipfile
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt

from agent import handeval
from agent.abstraction import holdem_buckets as _h
from agent.abstraction.holdem_buckets import HoldemCards
from agent.acpc.errors import AbstractionError, UsageError
from agent.acpc.gamedef import format_gamedef
from agent.handeval import SUIT_BASE, hand_value
from agent.jit import kernel, nogil_kernel
from strategies.cache import cache_dir, write_npz
from strategies.games.abstract import TIE, WIN0, WIN1, FlatTree, KernelGame, kernel_game

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
U16 = npt.NDArray[np.uint16]
I8 = npt.NDArray[np.int8]

POOL_FORMAT: Final = "acpc-arena-holdem-pool"
POOL_VERSION: Final = 1
_POOL_CHUNK: Final = 4096
_POOL_SALT: Final = 0x51ED270B


@kernel
def _searchsorted_right(values: F64, lo: int, hi: int, x: float) -> int:
    """Number of ``values[lo:hi]`` that are ``<= x`` (sorted): ``bisect_right``."""
    a, b = lo, hi
    while a < b:
        mid = (a + b) // 2
        if values[mid] <= x:
            a = mid + 1
        else:
            b = mid
    return a - lo


@kernel
def _preflop_class(c0: int, c1: int) -> int:
    """:func:`agent.abstraction.holdem_buckets.preflop_class` of two cards."""
    r0, r1 = c0 // 4, c1 // 4
    hi, lo = max(r0, r1), min(r0, r1)
    if c0 % 4 == c1 % 4:
        return 13 * hi + lo
    return 13 * lo + hi


@kernel
def _draw_deal(seed: int, i: int, deal: I64) -> None:
    """Pool deal ``i``'s 9 cards into ``deal`` (hole 0, hole 1, board)."""
    state = _h.hash32(_h.hash32(_h.hash32(seed) ^ _POOL_SALT) ^ (i & 0xFFFFFFFF))
    state = _h.hash32(state ^ (i >> 32))
    _h.draw_cards(state, np.int64(0), 9, deal, 0)


@kernel
def _showdown(deal: I64, keys: I64, card_bits: I64, offsets: npt.NDArray[np.int32],
              values: npt.NDArray[np.int32], flush_values: npt.NDArray[np.int32]) -> int:
    """WIN0, WIN1 or TIE: who wins the showdown of a 9-card ``deal``."""
    ranks = [0, 0]
    for p in range(2):
        key = SUIT_BASE
        bits = np.int64(0)
        for j in (2 * p, 2 * p + 1, 4, 5, 6, 7, 8):
            key += keys[deal[j]]
            bits += card_bits[deal[j]]
        ranks[p] = hand_value(key, bits, offsets, values, flush_values)
    if ranks[0] > ranks[1]:
        return WIN0
    if ranks[1] > ranks[0]:
        return WIN1
    return TIE


@nogil_kernel
def _pool_kernel(
    seed: int, start: int, stop: int, rivers_per_turn: int, thresholds: F64, bounds: I64,
    perms: I64, keys: I64, card_bits: I64, offsets: npt.NDArray[np.int32],
    values: npt.NDArray[np.int32], flush_values: npt.NDArray[np.int32],
    buckets: U16, result: I8,
) -> None:
    """Deals ``start .. stop - 1`` of the pool into ``buckets`` and ``result``.

    ``thresholds[bounds[r - 1]:bounds[r]]`` are round ``r``'s thresholds (r = 1..3).
    """
    deal = np.zeros(9, np.int64)
    cards = np.zeros(7, np.int64)
    scratch = np.zeros(_h.SCRATCH_SIZE, np.int64)
    moments = np.zeros(2)
    for i in range(start, stop):
        _draw_deal(seed, i, deal)
        for p in range(2):
            h0 = deal[2 * p]
            h1 = deal[2 * p + 1]
            buckets[i, p, 0] = _preflop_class(h0, h1)
            cards[0] = h0
            cards[1] = h1
            for j in range(5):
                cards[2 + j] = deal[4 + j]
            for r in range(1, 4):
                n_board = r + 2
                _h.strength_moments(cards, n_board, rivers_per_turn, perms, keys, card_bits,
                                    offsets, values, flush_values, scratch, moments)
                buckets[i, p, r] = _searchsorted_right(thresholds, bounds[r - 1], bounds[r],
                                                       moments[1])
        result[i] = _showdown(deal, keys, card_bits, offsets, values, flush_values)


@nogil_kernel
def _deal_kernel(
    seed: int, start: int, stop: int, keys: I64, card_bits: I64,
    offsets: npt.NDArray[np.int32], values: npt.NDArray[np.int32],
    flush_values: npt.NDArray[np.int32], deals: I64, result: I8,
) -> None:
    """Deals ``start .. stop - 1`` of the pool (the very cards :func:`_pool_kernel` draws)
    into ``deals[i - start]`` (hole 0, hole 1, board) and their showdown ``result[i]``."""
    deal = np.zeros(9, np.int64)
    for i in range(start, stop):
        _draw_deal(seed, i, deal)
        for j in range(9):
            deals[i - start, j] = deal[j]
        result[i] = _showdown(deal, keys, card_bits, offsets, values, flush_values)


def deal_cards(seed: int, index: int) -> tuple[int, ...]:
    """The 9 cards of pool deal ``index`` (hole 0, hole 1, board), as the pool draws them."""
    out = np.zeros(9, np.int64)
    _draw_deal(seed, index, out)
    return tuple(int(c) for c in out)


class DealBucketer(Protocol):
    """A card abstraction the pool can bucket deals with, other than :class:`HoldemCards`
    (whose buckets the pool kernel computes itself): e.g.
    :class:`agent.abstraction.holdem_pa.PotentialAwareCards`."""

    @property
    def buckets(self) -> tuple[int, ...]:
        """Buckets per round."""
        ...

    @property
    def spec(self) -> dict[str, Any]:
        """The strategy file's ``cards`` (may hold binary tables)."""
        ...

    def bucket_deals(self, holes: I64, boards: I64) -> U16:
        """``(N, 4)`` buckets of ``N`` hole pairs ``(N, 2)`` on boards ``(N, 5)``."""
        ...


PoolCards = HoldemCards | DealBucketer
"""What a pool can be built for."""


def spec_json(spec: dict[str, Any]) -> str:
    """``spec`` as canonical JSON text, binary tables replaced by their sha256 (the pool's
    and the checkpoints' identity of a card abstraction)."""

    def binary(value: object) -> object:
        if isinstance(value, bytes | bytearray | memoryview | np.ndarray):
            data = value.tobytes() if isinstance(value, np.ndarray) else bytes(value)
            return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        raise AbstractionError(f"expected JSON-able card abstraction values, got "
                               f"{type(value)!r}")

    return json.dumps(spec, sort_keys=True, default=binary)


@dataclass(frozen=True, eq=False)
class DealPool:
    """Sampled deals with buckets and showdown results (see the module docstring)."""

    buckets: U16
    """``(N, 2, 4)``: bucket of position ``p`` in round ``r``."""
    result: I8
    """``(N,)``: WIN0, WIN1 or TIE."""
    seed: int
    cards: dict[str, Any]
    """The spec of the card abstraction the buckets follow."""
    seconds: float = 0.0
    """Time it took to build (0 if loaded from the cache)."""

    @property
    def size(self) -> int:
        return int(self.result.shape[0])

    @property
    def key(self) -> str:
        """A hash of everything the pool depends on (its cache file name)."""
        text = json.dumps({"format": POOL_FORMAT, "version": POOL_VERSION, "seed": self.seed,
                           "size": self.size, "cards": json.loads(spec_json(self.cards))},
                          sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:20]


def pool_key(cards: PoolCards, size: int, seed: int) -> str:
    """:attr:`DealPool.key` of the pool :func:`build_pool` would make."""
    text = json.dumps({"format": POOL_FORMAT, "version": POOL_VERSION, "seed": seed,
                       "size": size, "cards": json.loads(spec_json(cards.spec))},
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def build_pool(
    cards: PoolCards, size: int, *, seed: int = 0, workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> DealPool:
    """``size`` random deals with buckets under ``cards`` and showdown results.

    Deterministic for ``(cards, size, seed)`` whatever ``workers`` is. ``progress`` is
    called with the number of deals done so far.

    Raises:
        ValueError: for ``size < 1``, ``workers < 1`` or a seed outside 0..2**32 - 1.
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise UsageError(f"expected a positive pool size, got {size!r}")
    if workers < 1:
        raise UsageError(f"expected workers >= 1, got {workers!r}")
    if not 0 <= seed <= 0xFFFFFFFF:
        raise UsageError(f"expected seed in 0..2**32 - 1, got {seed!r}")
    buckets = np.zeros((size, 2, 4), dtype=np.uint16)
    result = np.zeros(size, dtype=np.int8)
    t0 = time.perf_counter()
    if isinstance(cards, HoldemCards):
        thresholds = np.array([v for t in cards.thresholds for v in t], dtype=np.float64)
        bounds = np.cumsum([0, *(len(t) for t in cards.thresholds)]).astype(np.int64)
        args = (cards.flop_rivers_per_turn, thresholds, bounds, *_h.STRENGTH_TABLES, buckets,
                result)
        _pool_kernel(seed, 0, 0, *args)  # compile (or load) before the threads start

        def work(start: int, stop: int) -> None:
            _pool_kernel(seed, start, stop, *args)
    else:
        work = functools.partial(_bucket_chunk, cards, seed, buckets, result)
    chunks = [(a, min(a + _POOL_CHUNK, size)) for a in range(0, size, _POOL_CHUNK)]
    done = 0
    with ThreadPoolExecutor(max_workers=workers) as ex:
        futures = [ex.submit(work, a, b) for a, b in chunks]
        for (a, b), fut in zip(chunks, futures, strict=True):
            fut.result()
            done += b - a
            if progress is not None:
                progress(done)
    return DealPool(buckets, result, seed, cards.spec, time.perf_counter() - t0)


def _bucket_chunk(cards: DealBucketer, seed: int, buckets: U16, result: I8, start: int,
                  stop: int) -> None:
    """Deals ``start .. stop - 1`` of the pool, bucketed by ``cards.bucket_deals``."""
    deals = np.zeros((stop - start, 9), dtype=np.int64)
    _deal_kernel(seed, start, stop, *handeval.TABLES_7, deals, result)
    board = np.ascontiguousarray(deals[:, 4:])
    for p in range(2):
        hole = np.ascontiguousarray(deals[:, 2 * p:2 * p + 2])
        buckets[start:stop, p, :] = cards.bucket_deals(hole, board)


def save_pool(pool: DealPool, path: Path) -> Path:
    """Write ``pool`` to ``path`` (``.npz``, atomically)."""
    header = {"format": POOL_FORMAT, "version": POOL_VERSION, "seed": pool.seed,
              "cards": json.loads(spec_json(pool.cards)), "key": pool.key}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_npz(path, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
                buckets=pool.buckets, result=pool.result)
    return path


def load_pool(path: Path, cards: PoolCards, size: int, seed: int) -> DealPool | None:
    """The cached pool at ``path`` if it is exactly the one asked for, else None."""
    try:
        with np.load(path, allow_pickle=False) as data:
            header = json.loads(bytes(data["header"]).decode())
            buckets = np.ascontiguousarray(data["buckets"])
            result = np.ascontiguousarray(data["result"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error):
        return None
    if (not isinstance(header, dict) or header.get("key") != pool_key(cards, size, seed)
            or buckets.shape != (size, 2, 4) or buckets.dtype != np.uint16
            or result.shape != (size,) or result.dtype != np.int8):
        return None
    pool = DealPool(buckets, result, seed, cards.spec)
    limits = np.asarray(cards.buckets, dtype=np.int64)
    if (buckets.astype(np.int64) >= limits[None, None, :]).any() or (result > TIE).any() \
            or (result < 0).any():
        return None
    return pool


def cached_pool(
    cards: PoolCards, size: int, *, seed: int = 0, workers: int = 1,
    directory: Path | None = None, progress: Callable[[int], None] | None = None,
) -> DealPool:
    """:func:`build_pool`, or the same pool from the cache (written after a build)."""
    path = (directory or cache_dir()) / f"holdem-pool-{pool_key(cards, size, seed)}.npz"
    pool = load_pool(path, cards, size, seed) if path.exists() else None
    if pool is not None:
        return pool
    pool = build_pool(cards, size, seed=seed, workers=workers, progress=progress)
    with contextlib.suppress(OSError):  # a read-only cache only costs a rebuild next time
        save_pool(pool, path)
    return pool


# --------------------------------------------------------------------------- the pool game


@dataclass(frozen=True, eq=False)
class PoolGame:
    """A flat two-player tree whose chance is a deal pool (module docstring).

    Raises:
        ValueError: if the pool's buckets do not fit the tree's table layout.
    """

    flat: FlatTree
    pool: DealPool

    def __post_init__(self) -> None:
        buckets = self.pool.buckets
        if buckets.ndim != 3 or buckets.shape[1:] != (2, 4):
            raise UsageError(f"expected pool buckets of shape (N, 2, 4), got {buckets.shape}")
        limits = np.asarray(self.flat.layout.buckets)
        if (buckets.max(axis=(0, 1)) >= limits).any():
            raise UsageError(f"expected pool buckets below {list(limits)} per round")

    @property
    def num_players(self) -> int:
        return 2

    @property
    def table_size(self) -> int:
        return self.flat.table_size

    @property
    def max_depth(self) -> int:
        return self.flat.max_depth

    @property
    def max_actions(self) -> int:
        return int(self.flat.num_actions.max())

    @property
    def num_deals(self) -> int:
        return self.pool.size

    def identity(self) -> dict[str, Any]:
        """What a solver checkpoint must match: game, abstractions, pool and table size."""
        tree = self.flat.tree
        return {
            "game": format_gamedef(tree.game),
            "game_fingerprint": tree.game.fingerprint,
            "betting": tree.abstraction.to_json(),
            "cards": json.loads(spec_json(self.pool.cards)),
            "pool": {"seed": self.pool.seed, "size": self.pool.size, "key": self.pool.key},
            "table_len": self.flat.table_size,
        }

    def kernel_args(self) -> KernelGame:
        """The arrays the solver kernels take (see :meth:`AbstractGame.kernel_args`)."""
        f = self.flat
        terminals = np.flatnonzero(f.num_actions == 0)
        terminal = np.full(len(f.player), -1, dtype=np.int64)
        terminal[terminals] = np.arange(len(terminals))
        term_payoff = np.empty((len(terminals), 3, 2))
        term_payoff[:, :, 0] = f.term_value[terminals]
        term_payoff[:, :, 1] = -f.term_value[terminals]
        return kernel_game(
            player=f.player, round=f.round, num_actions=f.num_actions,
            child_start=f.child_start, children=f.children, offset=f.offset,
            rows=np.asarray(f.layout.rows, dtype=np.int64), terminal=terminal,
            term_set=np.zeros(len(terminals), dtype=np.int64), term_payoff=term_payoff,
            deal_prob=np.empty(0), deal_bucket=self.pool.buckets,
            deal_pattern=self.pool.result.reshape(-1, 1),
        )
