"""Sampled hold'em deals: ``N`` deals drawn from a seed, each position's bucket per round
under a card abstraction, and the showdown result.

Hold'em deals cannot be enumerated, so whatever works on hold'em's abstract game (the
offline solvers' deal pools, :mod:`strategies.solvers.dealpool`; the exploiting agent's
sampled abstract game, :func:`agent.strategy.abstract_game.build_sampled_game`) draws them.
Deal ``i`` is 9 distinct cards drawn by the card generator of
:mod:`agent.abstraction.holdem_buckets` seeded from ``(seed, i)``: position 0's hole cards,
position 1's, then the 5 board cards. :func:`sample_deals` gives each position's bucket in
every round (``uint16``, shape ``(N, 2, 4)``) under a
:class:`~agent.abstraction.holdem_buckets.HoldemCards` abstraction (the lossless preflop
class, then the E[HS^2] buckets with exactly the estimator the agent uses at match time) or
any :class:`DealBucketer` (e.g. the potential-aware cards), and the showdown result
(``int8``: :data:`~agent.strategy.abstract_game.WIN0`, ``WIN1`` or ``TIE``). Building is
split over worker threads (the kernel releases the GIL; deal ``i`` depends only on
``(seed, i)``, so the result is the same for any number of workers). :func:`sampled_game`
makes the abstract game whose chance is those deals.

Lives in the agent because the exploiting agent samples its hold'em abstract game during a
match; the offline pools (:mod:`strategies.solvers.dealpool`) cache what it builds. Imports
:mod:`agent`, numpy and numba.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, Protocol, cast

import numpy as np
import numpy.typing as npt

from agent import handeval
from agent.abstraction import holdem_buckets as _h
from agent.abstraction.actions import BettingAbstraction, BettingTree, build_tree
from agent.abstraction.buckets import CardAbstraction
from agent.abstraction.holdem_buckets import HoldemCards
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game
from agent.handeval import SUIT_BASE, hand_value
from agent.jit import kernel, nogil_kernel
from agent.strategy.abstract_game import TIE, WIN0, WIN1, AbstractGame, tree_fields

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
U16 = npt.NDArray[np.uint16]
I8 = npt.NDArray[np.int8]

CHUNK: Final = 4096
"""Deals per unit of work (a thread's share, a progress step)."""
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
"""What deals can be bucketed for."""


def sample_deals(
    cards: PoolCards, size: int, *, seed: int = 0, workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> tuple[U16, I8]:
    """``(buckets[N, 2, 4], result[N])`` of ``size`` deals drawn from ``seed`` (module
    docstring). Deterministic for ``(cards, size, seed)`` whatever ``workers`` is;
    ``progress`` is called with the number of deals done so far.

    Raises:
        UsageError: for ``size < 1``, ``workers < 1`` or a seed outside 0..2**32 - 1.
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise UsageError(f"expected a positive number of deals, got {size!r}")
    if workers < 1:
        raise UsageError(f"expected workers >= 1, got {workers!r}")
    if not 0 <= seed <= 0xFFFFFFFF:
        raise UsageError(f"expected seed in 0..2**32 - 1, got {seed!r}")
    buckets = np.zeros((size, 2, 4), dtype=np.uint16)
    result = np.zeros(size, dtype=np.int8)
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
    chunks = [(a, min(a + CHUNK, size)) for a in range(0, size, CHUNK)]
    done = 0
    with ThreadPoolExecutor(max_workers=workers) as ex:
        futures = [ex.submit(work, a, b) for a, b in chunks]
        for (a, b), fut in zip(chunks, futures, strict=True):
            fut.result()
            done += b - a
            if progress is not None:
                progress(done)
    return buckets, result


def sample_cards(seed: int, size: int) -> tuple[I64, I8]:
    """``(cards[N, 9], result[N])``: the cards of the first ``size`` deals of ``seed`` (hole
    0, hole 1, board) and their showdown results, as :func:`sample_deals` draws them."""
    deals = np.zeros((size, 9), dtype=np.int64)
    result = np.zeros(size, dtype=np.int8)
    _deal_kernel(seed, 0, size, *handeval.TABLES_7, deals, result)
    return deals, result


def _bucket_chunk(cards: DealBucketer, seed: int, buckets: U16, result: I8, start: int,
                  stop: int) -> None:
    """Deals ``start .. stop - 1``, bucketed by ``cards.bucket_deals``."""
    deals = np.zeros((stop - start, 9), dtype=np.int64)
    _deal_kernel(seed, start, stop, *handeval.TABLES_7, deals, result)
    board = np.ascontiguousarray(deals[:, 4:])
    for p in range(2):
        hole = np.ascontiguousarray(deals[:, 2 * p:2 * p + 2])
        buckets[start:stop, p, :] = cards.bucket_deals(hole, board)


def pool_cards(cards: CardAbstraction) -> PoolCards:
    """``cards`` as something :func:`sample_deals` can bucket deals with (a deferred
    abstraction waited for: :mod:`agent.abstraction.deferred`).

    Raises:
        UsageError: for a card abstraction that is neither.
    """
    wait = getattr(cards, "wait", None)
    real = wait() if callable(wait) else cards
    if isinstance(real, HoldemCards) or callable(getattr(real, "bucket_deals", None)):
        return cast(PoolCards, real)
    raise UsageError(f"expected a hold'em card abstraction (holdem or holdem-pa) to sample "
                     f"deals with, got {real.spec.get('kind')!r}")


def sampled_game(game: Game, betting: BettingAbstraction, cards: CardAbstraction, size: int,
                 *,
                 seed: int = 0, tree: BettingTree | None = None,
                 workers: int = 1) -> AbstractGame:
    """The abstract game of a two-player hold'em ``game`` whose chance is ``size`` deals
    drawn from ``seed`` (:func:`sample_deals`), each with probability ``1 / size``: the
    arrays of :class:`~agent.strategy.abstract_game.AbstractGame`, so its best response,
    values and node values run unchanged (one showdown set, its pattern the deal's result:
    pattern ``WIN0`` pays as ranks ``(1, 0)``, ``WIN1`` as ``(0, 1)``, ``TIE`` as
    ``(0, 0)``). ``deal_cards`` holds each deal's 9 cards.

    Raises:
        UsageError: for a game that is not two-player hold'em (2 hole cards, boards of 3, 1
            and 1) or a card abstraction whose buckets do not fit.
    """
    if (game.num_players != 2 or game.num_hole_cards != 2 or game.num_rounds != 4
            or tuple(game.num_board_cards) != (0, 3, 1, 1)
            or game.num_ranks != 13 or game.num_suits != 4):
        raise UsageError(f"expected two-player hold'em (52 cards, 2 hole cards, boards "
                         f"0,3,1,1) for a sampled abstract game, got "
                         f"{game.num_players} players, {game.num_hole_cards} hole cards, "
                         f"boards {tuple(game.num_board_cards)!r}")
    if tree is None or tree.game != game or tree.abstraction != betting:
        tree = build_tree(game, betting)
    buckets, result = sample_deals(pool_cards(cards), size, seed=seed, workers=workers)
    limits = np.asarray(cards.buckets, dtype=np.int64)
    if len(limits) != 4 or (buckets.max(axis=(0, 1)).astype(np.int64) >= limits).any():
        raise UsageError(f"expected sampled buckets below {list(limits)} per round, got "
                         f"maxima {buckets.max(axis=(0, 1)).tolist()!r}")
    deal_cards, check = sample_cards(seed, size)
    if not np.array_equal(check, result):
        raise UsageError("expected the same showdown results from the deals and their buckets")
    fields = tree_fields(tree, cards.buckets)
    nodes = tree.nodes
    terminals = [node for node in nodes if node.is_terminal]
    term_set = np.full(len(terminals), -1, dtype=np.int32)
    term_payoff = np.zeros((len(terminals), 3, 2))
    for t, node in enumerate(terminals):
        state = node.state
        if not state.is_showdown:
            term_payoff[t, :, :] = state.payoffs()
            continue
        term_set[t] = 0
        for pattern, ranks in ((WIN0, (1, 0)), (WIN1, (0, 1)), (TIE, (0, 0))):
            term_payoff[t, pattern, :] = state.payoffs(list(ranks))
    return AbstractGame(
        game=game, betting=betting, cards=cards, **fields, term_set=term_set,
        term_payoff=term_payoff, showdown_sets=((0, 1),),
        deal_cards=deal_cards.astype(np.int32), deal_prob=np.full(size, 1.0 / size),
        deal_bucket=np.ascontiguousarray(buckets.astype(np.int32)),
        deal_pattern=result.astype(np.int32).reshape(size, 1),
    )


KERNELS = (_pool_kernel, _deal_kernel)
"""The kernels, for compile notices (:func:`agent.console.compile_notice`)."""
