"""Sampled-deal Monte Carlo CFR for heads-up hold'em with the E[HS^2] card abstraction.

Hold'em deals cannot be enumerated (:mod:`strategies.game` is for small decks), so chance
is *sampled* from a fixed pool of random deals:

**Deal pool** (:class:`DealPool`, :func:`build_pool`). Deal ``i`` is 9 distinct cards drawn
by the card generator of :mod:`agent.abstraction.holdem_buckets` seeded from ``(seed, i)``:
position 0's hole cards, position 1's, then the 5 board cards. For it the pool stores each
position's bucket in every round under a :class:`~agent.abstraction.holdem_buckets.HoldemCards`
abstraction (``uint16``, shape ``(N, 2, 4)``: the lossless preflop class, then the E[HS^2]
buckets with exactly the estimator the agent uses at match time, so the solver and the
agent agree bucket for bucket) and the showdown result (``int8``: 0 = position 0 wins,
1 = position 1 wins, 2 = tie). Building costs ~0.3 ms per deal (nearly all in the flop
and turn E[HS^2]) and is split over worker threads (the kernel releases the GIL; deal
``i`` depends only on ``(seed, i)``, so the pool is the same for any number of workers).
Pools are cached as ``.npz`` (``allow_pickle=False``) under :func:`cache_dir`, keyed by a
hash of everything they depend on.

**Flat tree** (:class:`FlatTree`): the canonical abstract tree
(:func:`agent.abstraction.actions.build_tree`, the very enumeration the agent uses) as
per-node arrays (player, round, actions, children, table offset) and, per terminal, the
payoff of position 0 for each showdown result, from
:meth:`agent.acpc.betting.BettingState.payoffs` (a fold ending has the same payoff for all
three). Two players, zero sum: position 1 gets the negative.

**Solver** (:class:`HoldemSolver`): external-sampling MCCFR (Lanctot et al. 2009) on the
pool game (a deal drawn uniformly from the pool). Each iteration ``t`` runs one traversal
per position (the traverser), each on its own deal: at the traverser's nodes every action
is explored and its regrets updated; at the opponent's nodes the current (regret-matching)
strategy is added to the average and one action is sampled. Infosets are (node, bucket of
the node's round) exactly as in the strategy file table (:func:`~agent.strategy.fileformat.
table_layout`): imperfect recall of earlier buckets, by design. Linear-CFR-style
discounting as in Pluribus (Brown and Sandholm 2019): after every ``discount_interval``
iterations, while ``t <= discount_until``, regrets and average sums are multiplied by
``k / (k + 1)`` where ``k = t // discount_interval``. Random numbers come from
:mod:`strategies.rng` (MRG32k3a, seeded, six integers saved in checkpoints), so a run is
reproducible from its seed and chunking (a pure-Python oracle replays it in the tests).
The traversal walks the tree depth first with an explicit stack (no recursion: numba
issue #6061).

Checkpoints are ``.npz`` (arrays plus a JSON header that names the game, the abstractions,
the pool and the solver settings; loaded with ``allow_pickle=False``). :func:`solve_recipe`
is what ``acpc-strategy solve --recipe`` runs for recipes with ``cards == "holdem"``.

Imports :mod:`agent`, numpy, numba and :mod:`strategies` modules; never imported by
:mod:`agent`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import sys
import time
import zipfile
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Final

import numpy as np
import numpy.typing as npt

from agent.abstraction import holdem_buckets as _h
from agent.abstraction.actions import BettingAbstraction, BettingTree, build_tree
from agent.abstraction.holdem_buckets import HoldemCards, check_holdem_game
from agent.acpc.gamedef import Game, format_gamedef
from agent.fileio import atomic_writer
from agent.handeval import SUIT_BASE, hand_value
from agent.jit import kernel, nogil_kernel
from agent.strategy.fileformat import TableLayout, table_layout
from strategies import rng as _rng
from strategies.cfr import CheckpointError

if TYPE_CHECKING:
    import argparse

    from strategies.recipes import Recipe

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
U16 = npt.NDArray[np.uint16]
I8 = npt.NDArray[np.int8]

SOLVER_NAME: Final = "mccfr-es-pool"
CHECKPOINT_FORMAT: Final = "acpc-arena-holdem-checkpoint"
CHECKPOINT_VERSION: Final = 1
POOL_FORMAT: Final = "acpc-arena-holdem-pool"
POOL_VERSION: Final = 1
WIN0: Final = 0
WIN1: Final = 1
TIE: Final = 2
_POOL_CHUNK: Final = 4096
_POOL_SALT: Final = 0x51ED270B




# --------------------------------------------------------------------------- flat tree


@dataclass(frozen=True, eq=False)
class FlatTree:
    """The abstract betting tree as flat arrays (see the module docstring)."""

    tree: BettingTree
    layout: TableLayout
    player: I64
    """Per node: the acting position (-1 at terminals)."""
    round: I64
    """Per node: the betting round."""
    num_actions: I64
    """Per node: actions (0 at terminals)."""
    child_start: I64
    """Per node: index of its first child in :attr:`children`."""
    children: I64
    offset: I64
    """Per node: first table index of its rows (-1 at terminals)."""
    term_value: F64
    """Per node, shape ``(nodes, 3)``: position 0's payoff for results WIN0, WIN1, TIE
    (zeros at decision nodes)."""

    @property
    def table_size(self) -> int:
        return self.layout.total

    @property
    def max_depth(self) -> int:
        depth = np.zeros(len(self.player), dtype=np.int64)
        for n in range(len(self.player)):
            s = int(self.child_start[n])
            for c in self.children[s : s + int(self.num_actions[n])]:
                depth[c] = depth[n] + 1
        return int(depth.max())

    def arrays(self) -> tuple[I64, I64, I64, I64, I64, I64, F64]:
        """What the kernels take, in order."""
        return (self.player, self.round, self.num_actions, self.child_start, self.children,
                self.offset, self.term_value)


def flatten_tree(tree: BettingTree, buckets: tuple[int, ...]) -> FlatTree:
    """Flat arrays of ``tree`` for a table with ``buckets`` per round.

    Raises:
        ValueError: unless the game has two players.
    """
    if tree.game.num_players != 2:
        raise ValueError(f"expected a 2-player game, got {tree.game.num_players} players")
    layout = table_layout(tree, buckets)
    n = len(tree.nodes)
    player = np.full(n, -1, dtype=np.int64)
    rnd = np.zeros(n, dtype=np.int64)
    num_actions = np.zeros(n, dtype=np.int64)
    child_start = np.zeros(n, dtype=np.int64)
    children: list[int] = []
    term_value = np.zeros((n, 3))
    for node in tree.nodes:
        rnd[node.id] = node.round
        child_start[node.id] = len(children)
        if node.is_terminal:
            state = node.state
            for result, ranks in ((WIN0, (1, 0)), (WIN1, (0, 1)), (TIE, (0, 0))):
                term_value[node.id, result] = state.payoffs(ranks)[0]
            continue
        player[node.id] = node.player
        num_actions[node.id] = len(node.actions)
        children.extend(node.children)
    offset = np.asarray(layout.offsets, dtype=np.int64).copy()
    return FlatTree(tree, layout, player, rnd, num_actions, child_start,
                    np.asarray(children, dtype=np.int64), offset, term_value)


# --------------------------------------------------------------------------- deal pool


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
    ranks = np.zeros(2, np.int64)
    for i in range(start, stop):
        state = _h.hash32(_h.hash32(_h.hash32(seed) ^ _POOL_SALT) ^ (i & 0xFFFFFFFF))
        state = _h.hash32(state ^ (i >> 32))
        _h.draw_cards(state, np.int64(0), 9, deal, 0)
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
            key = SUIT_BASE
            bits = np.int64(0)
            for j in range(7):
                key += keys[cards[j]]
                bits += card_bits[cards[j]]
            ranks[p] = hand_value(key, bits, offsets, values, flush_values)
        if ranks[0] > ranks[1]:
            result[i] = WIN0
        elif ranks[1] > ranks[0]:
            result[i] = WIN1
        else:
            result[i] = TIE


def deal_cards(seed: int, index: int) -> tuple[int, ...]:
    """The 9 cards of pool deal ``index`` (hole 0, hole 1, board), as the pool draws them."""
    h = _h.hash32
    state = h(h(h(seed) ^ _POOL_SALT) ^ (index & 0xFFFFFFFF))
    state = h(state ^ (index >> 32))
    out = np.zeros(9, np.int64)
    _h.draw_cards(state, np.int64(0), 9, out, 0)
    return tuple(int(c) for c in out)


@dataclass(frozen=True, eq=False)
class DealPool:
    """Sampled deals with buckets and showdown results (see the module docstring)."""

    buckets: U16
    """``(N, 2, 4)``: bucket of position ``p`` in round ``r``."""
    result: I8
    """``(N,)``: WIN0, WIN1 or TIE."""
    seed: int
    cards: dict[str, Any]
    """The :class:`HoldemCards` spec the buckets follow."""
    seconds: float = 0.0
    """Time it took to build (0 if loaded from the cache)."""

    @property
    def size(self) -> int:
        return int(self.result.shape[0])

    @property
    def key(self) -> str:
        """A hash of everything the pool depends on (its cache file name)."""
        text = json.dumps({"format": POOL_FORMAT, "version": POOL_VERSION, "seed": self.seed,
                           "size": self.size, "cards": self.cards}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:20]


def pool_key(cards: HoldemCards, size: int, seed: int) -> str:
    """:attr:`DealPool.key` of the pool :func:`build_pool` would make."""
    text = json.dumps({"format": POOL_FORMAT, "version": POOL_VERSION, "seed": seed,
                       "size": size, "cards": cards.spec}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def cache_dir() -> Path:
    """Where pools are cached: ``$ACPC_ARENA_CACHE`` or ``~/.cache/acpc-arena``."""
    base = os.environ.get("ACPC_ARENA_CACHE")
    return Path(base) if base else Path.home() / ".cache" / "acpc-arena"


def build_pool(
    cards: HoldemCards, size: int, *, seed: int = 0, workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> DealPool:
    """``size`` random deals with buckets under ``cards`` and showdown results.

    Deterministic for ``(cards, size, seed)`` whatever ``workers`` is. ``progress`` is
    called with the number of deals done so far.

    Raises:
        ValueError: for ``size < 1``, ``workers < 1`` or a seed outside 0..2**32 - 1.
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"expected a positive pool size, got {size!r}")
    if workers < 1:
        raise ValueError(f"expected workers >= 1, got {workers!r}")
    if not 0 <= seed <= 0xFFFFFFFF:
        raise ValueError(f"expected seed in 0..2**32 - 1, got {seed!r}")
    thresholds = np.array([v for t in cards.thresholds for v in t], dtype=np.float64)
    bounds = np.cumsum([0, *(len(t) for t in cards.thresholds)]).astype(np.int64)
    buckets = np.zeros((size, 2, 4), dtype=np.uint16)
    result = np.zeros(size, dtype=np.int8)
    args = (cards.flop_rivers_per_turn, thresholds, bounds, *_h.STRENGTH_TABLES, buckets, result)
    t0 = time.perf_counter()
    _pool_kernel(seed, 0, 0, *args)  # compile (or load) before the threads start
    chunks = [(a, min(a + _POOL_CHUNK, size)) for a in range(0, size, _POOL_CHUNK)]
    done = 0
    with ThreadPoolExecutor(max_workers=workers) as ex:
        futures = [ex.submit(_pool_kernel, seed, a, b, *args) for a, b in chunks]
        for (a, b), fut in zip(chunks, futures, strict=True):
            fut.result()
            done += b - a
            if progress is not None:
                progress(done)
    return DealPool(buckets, result, seed, cards.spec, time.perf_counter() - t0)


def save_pool(pool: DealPool, path: Path) -> Path:
    """Write ``pool`` to ``path`` (``.npz``, atomically)."""
    header = {"format": POOL_FORMAT, "version": POOL_VERSION, "seed": pool.seed,
              "cards": pool.cards, "key": pool.key}
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_npz(path, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
                buckets=pool.buckets, result=pool.result)
    return path


def load_pool(path: Path, cards: HoldemCards, size: int, seed: int) -> DealPool | None:
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
    cards: HoldemCards, size: int, *, seed: int = 0, workers: int = 1,
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


# --------------------------------------------------------------------------- MCCFR kernels


@kernel
def _traverse(
    player: I64, rnd: I64, num_actions: I64, child_start: I64, children: I64, offset: I64,
    term_value: F64, deal_buckets: U16, result: int, traverser: int, regrets: F64,
    strategy_sum: F64, state: I64, sigma: F64, utility: F64, total: F64, node_at: I64,
    next_action: I64,
) -> float:
    """One external-sampling traversal of one deal; returns the traverser's sampled value.

    ``deal_buckets[p, r]`` is position ``p``'s bucket in round ``r``. Depth first with an
    explicit stack: at the traverser's nodes every action is explored in order, at the
    opponent's nodes its current strategy is added to the average and one action drawn
    (one uniform number per visit), in the order a recursive traversal would draw them.
    """
    sign = 1.0 if traverser == 0 else -1.0
    ret = 0.0
    depth = 0
    node_at[0] = 0
    next_action[0] = -1
    while depth >= 0:
        node = node_at[depth]
        a = next_action[depth]
        k = num_actions[node]
        p = player[node]
        if a < 0:  # entering the node
            if k == 0:
                ret = sign * term_value[node, result]
                depth -= 1
                continue
            row = offset[node] + deal_buckets[p, rnd[node]] * k
            positive = 0.0
            for b in range(k):
                r = regrets[row + b]
                if r > 0.0:
                    positive += r
            for b in range(k):
                r = regrets[row + b]
                if positive > 0.0:
                    sigma[depth, b] = r / positive if r > 0.0 else 0.0
                else:
                    sigma[depth, b] = 1.0 / k
            if p != traverser:
                for b in range(k):
                    strategy_sum[row + b] += sigma[depth, b]
                u = _rng.uniform(state)
                choice = k - 1
                c = 0.0
                for b in range(k):
                    c += sigma[depth, b]
                    if u < c:
                        choice = b
                        break
                next_action[depth] = k  # on return, pass the child's value up
                node_at[depth + 1] = children[child_start[node] + choice]
                next_action[depth + 1] = -1
                depth += 1
                continue
            total[depth] = 0.0
            a = 0
        else:  # child ``a`` is done with value ``ret``
            if p != traverser:
                depth -= 1
                continue
            utility[depth, a] = ret
            total[depth] += sigma[depth, a] * ret
            a += 1
        if a < k:
            next_action[depth] = a
            node_at[depth + 1] = children[child_start[node] + a]
            next_action[depth + 1] = -1
            depth += 1
            continue
        row = offset[node] + deal_buckets[p, rnd[node]] * k
        v = total[depth]
        for b in range(k):
            regrets[row + b] += utility[depth, b] - v
        ret = v
        depth -= 1
    return ret


@kernel
def _es_run(
    player: I64, rnd: I64, num_actions: I64, child_start: I64, children: I64, offset: I64,
    term_value: F64, buckets: U16, result: I8, iterations: int, t0: int,
    discount_interval: int, discount_until: int, regrets: F64, strategy_sum: F64,
    state: I64, sigma: F64, utility: F64, total: F64, node_at: I64, next_action: I64,
) -> float:
    """Iterations ``t0 + 1 .. t0 + iterations``; returns the sum of position 0's sampled
    values (its traversals), a cheap running estimate of the game value."""
    n_deals = result.shape[0]
    value0 = 0.0
    for i in range(iterations):
        t = t0 + i + 1
        for p in range(2):
            deal = int(_rng.uniform(state) * n_deals)
            if deal >= n_deals:
                deal = n_deals - 1
            v = _traverse(player, rnd, num_actions, child_start, children, offset, term_value,
                          buckets[deal], result[deal], p, regrets, strategy_sum, state, sigma,
                          utility, total, node_at, next_action)
            if p == 0:
                value0 += v
        if discount_interval > 0 and t % discount_interval == 0 and t <= discount_until:
            k = t // discount_interval
            f = k / (k + 1.0)
            for j in range(regrets.shape[0]):
                regrets[j] *= f
                strategy_sum[j] *= f
    return value0


@kernel
def _normalise(num_actions: I64, offset: I64, rows: I64, sums: F64, regrets: F64,
               out: F64) -> None:
    """Average strategy rows: ``sums`` normalised; rows with no sum use regret matching of
    ``regrets``, and uniform if those have no positive entry either."""
    for n in range(num_actions.shape[0]):
        k = num_actions[n]
        if k == 0:
            continue
        for b in range(rows[n]):
            s = offset[n] + b * k
            tot = 0.0
            for a in range(k):
                if sums[s + a] > 0.0:
                    tot += sums[s + a]
            src = sums
            if tot <= 0.0:
                src = regrets
                for a in range(k):
                    if regrets[s + a] > 0.0:
                        tot += regrets[s + a]
            for a in range(k):
                if tot > 0.0:
                    out[s + a] = src[s + a] / tot if src[s + a] > 0.0 else 0.0
                else:
                    out[s + a] = 1.0 / k


# --------------------------------------------------------------------------- the solver


@dataclass(frozen=True, slots=True)
class HoldemSolverConfig:
    """The solver's settings (see the module docstring)."""

    discount_interval: int = 0
    """Iterations between linear discounts (0: never discount)."""
    discount_until: int = 0
    """Last iteration at which a discount is applied."""

    def to_json(self) -> dict[str, Any]:
        return {"name": SOLVER_NAME, "discount_interval": self.discount_interval,
                "discount_until": self.discount_until}


class HoldemSolver:
    """External-sampling MCCFR over a :class:`DealPool` (module docstring)."""

    def __init__(self, flat: FlatTree, pool: DealPool, config: HoldemSolverConfig | None = None,
                 *, seed: int = 0) -> None:
        self.flat = flat
        self.pool = pool
        self.config = config or HoldemSolverConfig()
        self.seed = int(seed)
        self.iteration = 0
        self.seconds = 0.0
        self.value_sum = 0.0
        """Sum of position 0's sampled traversal values (divide by :attr:`iteration`)."""
        size = flat.table_size
        self.regrets = np.zeros(size)
        self.strategy_sum = np.zeros(size)
        self.rng_state = _rng.seed_state(self.seed)
        depth = flat.max_depth + 2
        width = int(flat.num_actions.max())
        self._sigma = np.zeros((depth, width))
        self._utility = np.zeros((depth, width))
        self._total = np.zeros(depth)
        self._node_at = np.zeros(depth, dtype=np.int64)
        self._next_action = np.zeros(depth, dtype=np.int64)
        if pool.buckets.shape[1:] != (2, 4):
            raise ValueError(f"expected pool buckets of shape (N, 2, 4), got "
                             f"{pool.buckets.shape}")
        limits = np.asarray(flat.layout.buckets)
        if (pool.buckets.max(axis=(0, 1)) >= limits).any():
            raise ValueError(f"expected pool buckets below {list(limits)} per round")

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) the kernels without iterating."""
        self._run(0)

    def iterate(self, iterations: int = 1) -> None:
        """Run ``iterations`` more iterations.

        Raises:
            ValueError: if ``iterations`` is negative.
        """
        if iterations < 0:
            raise ValueError(f"expected a non-negative number of iterations, got {iterations}")
        start = time.perf_counter()
        self.value_sum += self._run(iterations)
        self.iteration += iterations
        self.seconds += time.perf_counter() - start

    def _run(self, iterations: int) -> float:
        c = self.config
        return float(_es_run(*self.flat.arrays(), self.pool.buckets, self.pool.result,
                             iterations, self.iteration, c.discount_interval, c.discount_until,
                             self.regrets, self.strategy_sum, self.rng_state, self._sigma,
                             self._utility, self._total, self._node_at, self._next_action))

    def average_strategy(self) -> F64:
        """The average strategy in strategy-file table layout (float64)."""
        out = np.empty(self.flat.table_size)
        f = self.flat
        _normalise(f.num_actions, f.offset, np.asarray(f.layout.rows, dtype=np.int64),
                   self.strategy_sum, self.regrets, out)
        return out

    # ----------------------------------------------------------------- checkpoints

    def _identity(self) -> dict[str, Any]:
        tree = self.flat.tree
        return {
            "game": format_gamedef(tree.game),
            "game_fingerprint": tree.game.fingerprint,
            "betting": tree.abstraction.to_json(),
            "cards": self.pool.cards,
            "pool": {"seed": self.pool.seed, "size": self.pool.size, "key": self.pool.key},
            "table_len": self.flat.table_size,
        }

    def save_checkpoint(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Write the solver state to ``path`` (``.npz``, atomically); return the path."""
        header = {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            **self._identity(),
            "config": self.config.to_json(),
            "seed": self.seed,
            "iteration": self.iteration,
            "seconds": self.seconds,
            "value_sum": self.value_sum,
            "extra": extra or {},
        }
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        _atomic_npz(target, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
                    regrets=self.regrets, strategy_sum=self.strategy_sum,
                    rng_state=self.rng_state)
        return target

    @classmethod
    def load_checkpoint(cls, path: str | Path, flat: FlatTree, pool: DealPool) -> HoldemSolver:
        """Resume from :meth:`save_checkpoint` for the same game, abstractions and pool.

        Raises:
            CheckpointError: if the file is unreadable, corrupt or for something else.
        """
        source = str(path)
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {key: np.array(data[key]) for key in data.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise CheckpointError(f"{source}: cannot read checkpoint: {exc}") from None
        for key in ("header", "regrets", "strategy_sum", "rng_state"):
            if key not in arrays:
                raise CheckpointError(f"{source}: corrupt checkpoint: missing {key!r}")
        try:
            header = json.loads(arrays["header"].astype(np.uint8).tobytes().decode())
            if not isinstance(header, dict):
                raise ValueError("the header is not an object")
        except (ValueError, UnicodeDecodeError) as exc:
            raise CheckpointError(f"{source}: corrupt checkpoint header: {exc}") from None
        if header.get("format") != CHECKPOINT_FORMAT or \
                header.get("version") != CHECKPOINT_VERSION:
            raise CheckpointError(f"{source}: expected a {CHECKPOINT_FORMAT} version "
                                  f"{CHECKPOINT_VERSION}, got {header.get('format')!r}")
        try:
            cfg = dict(header["config"])
            config = HoldemSolverConfig(int(cfg["discount_interval"]),
                                        int(cfg["discount_until"]))
            solver = cls(flat, pool, config, seed=int(header["seed"]))
            solver.iteration = int(header["iteration"])
            solver.seconds = float(header["seconds"])
            solver.value_sum = float(header.get("value_sum", 0.0))
            state = _rng.check_state(arrays["rng_state"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"{source}: corrupt checkpoint header: {exc}") from None
        for key, value in solver._identity().items():
            if header.get(key) != value:
                raise CheckpointError(f"{source}: checkpoint is for another {key}: expected "
                                      f"{value!r}, got {header.get(key)!r}")
        for key in ("regrets", "strategy_sum"):
            arr = arrays[key]
            if arr.shape != (flat.table_size,) or arr.dtype != np.float64:
                raise CheckpointError(f"{source}: corrupt checkpoint: expected {key} of "
                                      f"{flat.table_size} float64 values, got {arr.dtype} "
                                      f"{arr.shape}")
            if not np.isfinite(arr).all():
                raise CheckpointError(f"{source}: corrupt checkpoint: {key} is not finite")
        solver.regrets = np.ascontiguousarray(arrays["regrets"])
        solver.strategy_sum = np.ascontiguousarray(arrays["strategy_sum"])
        solver.rng_state = np.ascontiguousarray(state)
        return solver


def _atomic_npz(target: Path, **arrays: Any) -> None:
    """``np.savez`` to ``target`` atomically (:func:`agent.fileio.atomic_writer`)."""
    with atomic_writer(target, suffix=".npz") as f:
        np.savez(f, **arrays)


# --------------------------------------------------------------------------- recipe runner


@dataclass(frozen=True, eq=False)
class Setup:
    """Everything a hold'em recipe solves on."""

    game: Game
    betting: BettingAbstraction
    cards: HoldemCards
    flat: FlatTree
    pool: DealPool
    cards_seconds: float


def setup_recipe(recipe: Recipe, *, workers: int = 1, log: Callable[[str], None] | None = None
                 ) -> Setup:
    """Build (or load from the cache) the card abstraction, tree and pool of ``recipe``."""
    say = log or (lambda text: None)
    game = recipe.load_game()
    check_holdem_game(game)
    betting = recipe.betting_abstraction()
    t0 = time.perf_counter()
    cards = HoldemCards.build(recipe.buckets, samples=recipe.card_samples, seed=recipe.seed)
    cards_seconds = time.perf_counter() - t0
    say(f"card abstraction {list(cards.buckets)} built in {cards_seconds:.1f} s")
    tree = build_tree(game, betting)
    flat = flatten_tree(tree, cards.buckets)
    say(f"betting tree {betting.name}: {len(tree.nodes)} nodes, "
        f"{int((flat.num_actions > 0).sum())} decisions, table of {flat.table_size} values")
    last = [time.monotonic()]

    def tick(done: int) -> None:
        if time.monotonic() - last[0] >= 10.0:
            last[0] = time.monotonic()
            say(f"deal pool: {done:,}/{recipe.pool_deals:,} deals")

    pool = cached_pool(cards, recipe.pool_deals, seed=recipe.seed, workers=workers,
                       progress=tick)
    how = f"built in {pool.seconds:.1f} s" if pool.seconds else "loaded from the cache"
    say(f"deal pool of {pool.size:,} deals {how} ({cache_dir()})")
    return Setup(game, betting, cards, flat, pool, cards_seconds)


def solver_config_of(recipe: Recipe) -> HoldemSolverConfig:
    """The solver settings a hold'em recipe names."""
    return HoldemSolverConfig(recipe.discount_interval, recipe.discount_until)


def solve_recipe(recipe: Recipe, args: argparse.Namespace) -> int:
    """``acpc-strategy solve`` for a hold'em recipe (same options as the enumerated ones)."""
    from agent.strategy.fileformat import dump_strategy, load_strategy
    from strategies.cli import PROG, _make_progress
    from strategies.recipes import load_manifest, update_manifest

    def say(text: str) -> None:
        print(f"{PROG}: {text}", file=sys.stderr, flush=True)

    workers = max(1, int(getattr(args, "workers", None) or 1))
    setup = setup_recipe(recipe, workers=workers, log=say)
    out, checkpoint = recipe.solve_paths(args.out, args.bundle, args.checkpoint, args.resume)
    if args.resume:
        solver = HoldemSolver.load_checkpoint(checkpoint, setup.flat, setup.pool)
    else:
        solver = HoldemSolver(setup.flat, setup.pool, solver_config_of(recipe), seed=recipe.seed)
    deadline = None if args.minutes is None else time.monotonic() + 60.0 * args.minutes
    target: int | None = None
    if args.minutes is None:
        target = args.iterations if args.iterations is not None else recipe.iterations
    solver.warm_up()
    every = float(getattr(args, "checkpoint_minutes", None) or 10.0) * 60.0
    extra = {"recipe": recipe.name}
    stop = False

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        nonlocal stop
        stop = True

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        budget = f"{target} iterations" if target is not None else f"{args.minutes:g} minutes"
        say(f"solving {recipe.name} with {SOLVER_NAME} from iteration {solver.iteration} "
            f"({budget}; Ctrl-C writes a checkpoint)")
        bar = _make_progress(not args.no_progress, target,
                             None if deadline is None else deadline - time.monotonic(),
                             solver.iteration)
        chunk = 1
        last_save = time.monotonic()
        try:
            while not stop:
                if target is not None and solver.iteration >= target:
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    break
                n = chunk if target is None else min(chunk, target - solver.iteration)
                t = time.perf_counter()
                solver.iterate(n)
                rate = n / max(time.perf_counter() - t, 1e-9)
                chunk = max(1, min(int(rate * 0.5), 1_000_000))
                if time.monotonic() - last_save >= every:
                    solver.save_checkpoint(checkpoint, extra)
                    last_save = time.monotonic()
                value = solver.value_sum / max(solver.iteration, 1)
                bar.update(solver.iteration, rate, f"v0 {value:+.1f}")
        finally:
            bar.close()
    finally:
        signal.signal(signal.SIGINT, previous)
    solver.save_checkpoint(checkpoint, extra)
    if stop:
        say(f"interrupted at iteration {solver.iteration}: checkpoint written to {checkpoint}; "
            f"continue with --resume")
        return 130
    average = solver.average_strategy()
    pool = setup.pool
    meta = {
        "solver": SOLVER_NAME,
        "solver_config": solver.config.to_json(),
        "iterations": solver.iteration,
        "seconds": round(solver.seconds, 3),
        "seed": solver.seed,
        "recipe": recipe.name,
        "pool_deals": pool.size,
        "sampled_value_p0": solver.value_sum / max(solver.iteration, 1),
    }
    path = dump_strategy(out, setup.game, setup.betting, setup.cards.spec, average,
                         dtype=recipe.dtype, default_purification=recipe.purification,
                         meta=meta, tree=setup.flat.tree)
    loaded = load_strategy(path, setup.game, tree=setup.flat.tree)
    print(f"{PROG}: wrote {path} ({path.stat().st_size} bytes): {solver.iteration} iterations "
          f"of {SOLVER_NAME} in {solver.seconds:.1f} s")
    if args.bundle:
        path.chmod(0o644)
        old = load_manifest()["files"].get(recipe.name, {})
        entry: dict[str, Any] = {
            "file": path.name,
            "recipe": recipe.name,
            "game": recipe.game,
            "betting": setup.betting.name,
            "betting_spec": setup.betting.to_json(),
            "cards": setup.cards.spec,
            "solver": SOLVER_NAME,
            "solver_config": solver.config.to_json(),
            "iterations": solver.iteration,
            "seconds": round(solver.seconds, 2),
            "card_abstraction_seconds": round(setup.cards_seconds, 2),
            "pool_deals": pool.size,
            "pool_seconds": round(pool.seconds, 2) if pool.seconds else None,
            "exploitability": None,
            "exploitability_kind": "not computed",
            "sampled_value_p0": meta["sampled_value_p0"],
            "units": "chips per hand",
            "dtype": recipe.dtype,
            "default_purification": recipe.purification,
            "checksum": loaded.checksum,
            "file_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "bytes": path.stat().st_size,
        }
        if old.get("checksum") == loaded.checksum:
            for key in ("matches", "exploitability", "exploitability_kind", "pool_seconds",
                        "exploitability_ci95", "game_value", "sampled_best_response",
                        "sampled_best_response_command"):
                if old.get(key) is not None:
                    entry[key] = old[key]
        print(f"{PROG}: manifest updated: {update_manifest(recipe.name, entry)}")
    return 0
