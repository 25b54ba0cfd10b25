"""Benchmark and verify the hold'em hand indexers (:mod:`agent.abstraction.isomorphism`).

Prints, for each hold'em round and both groupings (``board``: hole + visible board;
``perfect``: hole, flop, turn, river), the number of classes, then:

(a) ``index_batch`` rate over random hands, checked and unchecked (hands per second);
(b) ``unindex_batch`` rate over random classes (classes per second);
(c) one ``index`` call from Python (calls per second);
(d) with ``--exhaustive``: every class of the board grouping's turn and river (13,960,050
    and 123,156,254) unindexed and indexed back (must be the identity), and the class
    sizes summed (must be the number of hands dealt); minutes, not seconds.

Usage: ``.venv/bin/python scripts/bench_isomorphism.py [--hands 2000000] [--exhaustive]``.
One core (numba is not parallel here). Imports numpy and numba.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Callable

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np
import numpy.typing as npt

from agent.abstraction.isomorphism import HandIndexer, holdem_indexer
from agent.console import positive_int


def random_hands(count: int, size: int, seed: int) -> npt.NDArray[np.int64]:
    """``count`` rows of ``size`` distinct cards, uniformly at random."""
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((count, 52)), axis=1)[:, :size].astype(np.int64)


def best_time(run: Callable[[], object], repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def bench(name: str, indexer: HandIndexer, round_: int, hands: int) -> None:
    size = indexer.cards_in(round_)
    cards = random_hands(hands, size, seed=round_)
    indices = np.random.default_rng(round_).integers(0, indexer.size(round_), hands)
    indexer.index_batch(cards[:10])  # compile outside the timing
    indexer.unindex_batch(round_, indices[:10])
    checked = hands / best_time(lambda: indexer.index_batch(cards))
    unchecked = hands / best_time(lambda: indexer.index_batch(cards, check=False))
    unindexed = hands / best_time(lambda: indexer.unindex_batch(round_, indices))
    rows = [list(map(int, row)) for row in cards[:20_000]]
    one = len(rows) / best_time(lambda: [indexer.index(row) for row in rows])
    print(
        f"{name:<9} round {round_}  {indexer.size(round_):>13,} classes  "
        f"index {checked / 1e6:6.2f} M/s (unchecked {unchecked / 1e6:6.2f})  "
        f"unindex {unindexed / 1e6:6.2f} M/s  one call {one / 1e3:6.1f} k/s"
    )


def exhaustive(indexer: HandIndexer) -> None:
    last = indexer.num_rounds - 1
    start = time.perf_counter()
    total = 0
    step = 4_000_000
    for first in range(0, indexer.size(last), step):
        indices = np.arange(first, min(first + step, indexer.size(last)))
        cards, counts = indexer.unindex_batch(last, indices)
        back = indexer.index_batch(cards, check=False)
        if not (back == indices).all():
            bad = int(indices[np.flatnonzero(back != indices)[0]])
            raise SystemExit(f"round trip failed for class {bad} of {indexer!r}")
        total += int(counts.sum())
    seconds = time.perf_counter() - start
    ok = total == indexer.hands(last)
    print(
        f"{indexer!r}: all {indexer.size(last):,} classes round-trip; class sizes sum to "
        f"{total:,} ({'=' if ok else '!='} {indexer.hands(last):,} hands), {seconds:.1f} s"
    )
    if not ok:
        raise SystemExit("class sizes do not sum to the number of hands")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=positive_int, default=2_000_000)
    parser.add_argument("--exhaustive", action="store_true")
    args = parser.parse_args()
    for round_ in range(4):
        bench("board", holdem_indexer("board", round_), indexer_round(round_), args.hands)
    for round_ in range(4):
        bench("perfect", holdem_indexer("perfect"), round_, args.hands)
    if args.exhaustive:
        for round_ in (2, 3):
            exhaustive(holdem_indexer("board", round_))
    print(f"(C(52,2) x C(50,5) = {math.comb(52, 2) * math.comb(50, 5):,} river hands)")


def indexer_round(round_: int) -> int:
    """The board grouping's indexer for ``round_`` has the hand in its last round."""
    return 0 if round_ == 0 else 1


if __name__ == "__main__":
    main()
