"""A pool of sampled hold'em deals: the solver's chance when deals cannot be enumerated.

Hold'em deals cannot be enumerated (:mod:`strategies.games.abstract` is for small decks), so chance
is *sampled* from a fixed pool of random deals, drawn and bucketed by
:mod:`agent.strategy.sampled_deals` (which the exploiting agent uses too).

**Deal pool** (:class:`DealPool`, :func:`build_pool`). Deal ``i`` is 9 distinct cards drawn
by the card generator of :mod:`agent.abstraction.holdem_buckets` seeded from ``(seed, i)``:
position 0's hole cards, position 1's, then the 5 board cards. For it the pool stores each
position's bucket in every round under a
:class:`~agent.abstraction.holdem_buckets.HoldemCards` abstraction (``uint16``, shape
``(N, 2, 4)``: the lossless preflop class, then the E[HS^2] buckets with exactly the
estimator the agent uses at match time, so the solver and the agent agree bucket for bucket)
and the showdown result (``int8``: :data:`~strategies.games.abstract.WIN0`, ``WIN1`` or ``TIE``).
Building is split over worker threads (deal ``i`` depends only on ``(seed, i)``, so the pool
is the same for any number of workers). Pools are cached as
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
import hashlib
import json
import time
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from agent.acpc.errors import AbstractionError, UsageError
from agent.acpc.gamedef import format_gamedef
from agent.strategy.sampled_deals import DealBucketer as DealBucketer
from agent.strategy.sampled_deals import PoolCards as PoolCards
from agent.strategy.sampled_deals import sample_deals
from strategies.cache import cache_dir, write_npz
from strategies.games.abstract import TIE, FlatTree, KernelGame, kernel_game

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
U16 = npt.NDArray[np.uint16]
I8 = npt.NDArray[np.int8]

POOL_FORMAT: Final = "acpc-arena-holdem-pool"
POOL_VERSION: Final = 1


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
    t0 = time.perf_counter()
    buckets, result = sample_deals(cards, size, seed=seed, workers=workers,
                                   progress=progress)
    return DealPool(buckets, result, seed, cards.spec, time.perf_counter() - t0)


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
