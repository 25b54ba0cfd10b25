"""Benchmark hand evaluation: our numba kernels against phevaluator and eval7.

Prints evaluations per second for 7-card hands:

(a) one call from Python: ``handeval.evaluate7(*cards)`` (and ``evaluate(cards)``);
(b) the batch API on one core: ``handeval.evaluate_batch`` over pre-generated random
    ``uint8`` hands: allocating, into a reused ``out``, and unchecked (``check=False``);
(c) phevaluator's and eval7's one-call rates from Python;
(d) the ratios ours / theirs, and the targets (batch >= 250 M/s, one call >= 5 M/s).

Usage: ``.venv/bin/python scripts/bench_eval.py [--hands 20000000] [--calls 1000000]``.
Single core: numba's thread pool is pinned to one thread and nothing runs in parallel.
Runs in well under a minute. Imports numpy, numba and, if installed, phevaluator and eval7.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import numpy as np
import numpy.typing as npt

from agent import handeval
from agent.acpc.cards import format_card

BATCH_TARGET = 250e6
CALL_TARGET = 5e6


def random_hands(num_hands: int, num_cards: int, seed: int) -> npt.NDArray[np.uint8]:
    """``num_hands`` rows of ``num_cards`` distinct cards, uniformly at random."""
    rng = np.random.default_rng(seed)
    hands = rng.integers(0, 52, size=(num_hands, num_cards), dtype=np.uint8)
    while True:
        ordered = np.sort(hands, axis=1)
        bad = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if bad.size == 0:
            return hands
        hands[bad] = rng.integers(0, 52, size=(bad.size, num_cards), dtype=np.uint8)


def best_rate(run: Callable[[], object], count: int, repeats: int) -> float:
    """Best of ``repeats`` timings of ``run`` (which does ``count`` evaluations), per second."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return count / best


def call_rate(fn: Callable[..., object], args: Sequence[tuple[object, ...]], repeats: int) -> float:
    def run() -> None:
        for a in args:
            fn(*a)

    return best_rate(run, len(args), repeats)


def fmt(rate: float) -> str:
    return f"{rate / 1e6:8.2f} M/s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=20_000_000, help="batch size (7-card)")
    parser.add_argument("--calls", type=int, default=1_000_000, help="single calls timed")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()

    start = time.perf_counter()
    handeval.warm_up()
    print(f"warm_up (tables + kernels, numba cache as found): {time.perf_counter() - start:.2f} s")

    hands = random_hands(args.hands, 7, args.seed)
    calls = [tuple(int(c) for c in row) for row in hands[: args.calls].tolist()]
    lists = [list(c) for c in calls]
    print(f"{args.hands:,} random 7-card hands (batch), {len(calls):,} single calls\n")

    print("(a) one call from Python, 7 cards")
    ours_call = call_rate(handeval.evaluate7, calls, args.repeats)
    ours_list = call_rate(handeval.evaluate, [(c,) for c in lists], args.repeats)
    print(f"    handeval.evaluate7(*cards)          {fmt(ours_call)}")
    print(f"    handeval.evaluate(cards)            {fmt(ours_list)}")

    print("(b) batch API, one core, 7-card uint8 hands")
    out = np.empty(args.hands, np.int32)
    batch = best_rate(lambda: handeval.evaluate_batch(hands), args.hands, args.repeats)
    batch_out = best_rate(lambda: handeval.evaluate_batch(hands, out=out), args.hands, args.repeats)
    batch_unchecked = best_rate(
        lambda: handeval.evaluate_batch(hands, check=False, out=out), args.hands, args.repeats
    )
    print(f"    evaluate_batch(hands)                         {fmt(batch)}")
    print(f"    evaluate_batch(hands, out=out)                {fmt(batch_out)}")
    print(f"    evaluate_batch(hands, check=False, out=out)   {fmt(batch_unchecked)}")

    print("(c) other packages, one call from Python, 7 cards")
    theirs: dict[str, float] = {}
    try:
        from phevaluator import _pheval, evaluate_cards
    except ImportError:
        print("    phevaluator not installed")
    else:
        theirs["phevaluator _pheval.evaluate_7cards(*ints)"] = call_rate(
            _pheval.evaluate_7cards, calls, args.repeats
        )
        theirs["phevaluator evaluate_cards(*ints)"] = call_rate(evaluate_cards, calls, args.repeats)
    try:
        import eval7
    except ImportError:
        print("    eval7 not installed")
    else:
        deck = [eval7.Card(format_card(card)) for card in range(52)]
        objects = [([deck[c] for c in row],) for row in calls]
        theirs["eval7 evaluate([Card] * 7)"] = call_rate(eval7.evaluate, objects, args.repeats)
    for name, rate in theirs.items():
        print(f"    {name:<44}{fmt(rate)}")

    print("(d) ratios, ours / theirs")
    for name, rate in theirs.items():
        print(f"    evaluate7 / {name:<44}{ours_call / rate:6.2f}x")
        print(f"    evaluate_batch / {name:<39}{batch / rate:6.1f}x")

    print("\ntargets")
    for label, rate, target in [
        ("batch, default call", batch, BATCH_TARGET),
        ("batch, out= reused", batch_out, BATCH_TARGET),
        ("batch, check=False, out=", batch_unchecked, BATCH_TARGET),
        ("one call, evaluate7", ours_call, CALL_TARGET),
    ]:
        verdict = "met" if rate >= target else "NOT met"
        print(f"    {label:<25} >= {target / 1e6:3.0f} M/s: {fmt(rate)}  {verdict}")


if __name__ == "__main__":
    main()
