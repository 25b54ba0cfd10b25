"""Benchmark: CFR+ on limit Leduc, ours against OpenSpiel's C++ CFR+ when it is installed.

Usage::

    python scripts/bench_cfr.py [--checkpoints 10,100,1000] [--json]

Reports milliseconds per iteration (solver time only: exploitability is computed between
timed stretches) and the exploitability ``(br0 + br1) / 2`` in chips per hand after each
checkpoint. With ``open_spiel`` importable (``pip install open_spiel``), runs
``pyspiel.CFRPlusSolver`` on its ``leduc_poker`` side by side: the same game (6 cards, ante
1, raises 2 then 4, two raises per round) with the same conventions (alternating updates,
regret matching+, linear averaging, exploitability = NashConv / 2). Our lossless buckets
merge suit-isomorphic information sets, which keeps the iterates the same in exact
arithmetic: the exploitability columns agree to ~1e-12 through 100 iterations; later the
different summation orders' rounding is amplified (regret matching+ floors regrets at 0,
so a regret of +1e-17 versus 0 changes a strategy) and the two curves wander apart by a
few percent while decaying at the same rate (ours run on unmerged per-card information
sets drifts from OpenSpiel, and from ours merged, in the same way). The ratio is
OpenSpiel's time per iteration over ours. Target: <= 1.3 ms/iteration.

A benchmark, not a test: run it by hand.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from agent.abstraction.actions import PRESETS
from agent.abstraction.buckets import LosslessCards
from agent.acpc.gamefiles import load_game
from strategies.games.abstract import build_abstract_game
from strategies.measure.best_response import exploitability
from strategies.solvers.cfr import CFRPlusSolver


def bench_ours(checkpoints: list[int]) -> dict[str, Any]:
    """Our CFR+ on ``leduc.limit.2p.game``: ms/iteration and exploitability per checkpoint."""
    game = load_game("leduc.limit.2p.game")
    abstract = build_abstract_game(game, PRESETS["fcpa"], LosslessCards(game))
    solver = CFRPlusSolver(abstract)
    solver.warm_up()
    rows = []
    for n in checkpoints:
        solver.iterate(n - solver.iteration)
        rows.append((n, exploitability(abstract, solver.average_strategy()).exploitability))
    return {"ms_per_iteration": 1e3 * solver.seconds / solver.iteration, "exploitability": rows,
            "infosets": abstract.num_infosets, "deals": abstract.num_deals}


def bench_openspiel(checkpoints: list[int]) -> dict[str, Any] | None:
    """OpenSpiel's C++ CFR+ on ``leduc_poker``, or ``None`` if it is not installed."""
    try:
        import pyspiel  # type: ignore[import-not-found, unused-ignore]
    except ImportError:
        return None
    game = pyspiel.load_game("leduc_poker")
    solver = pyspiel.CFRPlusSolver(game)
    done = 0
    seconds = 0.0
    rows = []
    for n in checkpoints:
        start = time.perf_counter()
        for _ in range(n - done):
            solver.evaluate_and_update_policy()
        seconds += time.perf_counter() - start
        done = n
        rows.append((n, float(pyspiel.exploitability(game, solver.average_policy()))))
    return {"ms_per_iteration": 1e3 * seconds / done, "exploitability": rows,
            "version": getattr(pyspiel, "__version__", "?")}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a table (or JSON)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--checkpoints", default="10,100,1000",
                   help="iteration counts at which to measure exploitability")
    p.add_argument("--json", action="store_true", help="print JSON")
    args = p.parse_args(argv)
    checkpoints = sorted({int(x) for x in args.checkpoints.split(",") if x.strip()})
    if not checkpoints or checkpoints[0] <= 0:
        p.error(f"expected positive iteration counts, got {args.checkpoints!r}")
    ours = bench_ours(checkpoints)
    theirs = bench_openspiel(checkpoints)
    if args.json:
        print(json.dumps({"ours": ours, "openspiel": theirs}, indent=2))
        return 0
    print(f"CFR+ on limit Leduc ({ours['infosets']} lossless information sets, "
          f"{ours['deals']} deals)")
    print(f"  ours:      {ours['ms_per_iteration']:.3f} ms/iteration (target <= 1.3)")
    if theirs is None:
        print("  OpenSpiel: not installed (pip install open_spiel to compare); skipped")
        for n, e in ours["exploitability"]:
            print(f"  after {n:>6} iterations: exploitability {e:.6g} chips/hand")
        return 0
    ratio = theirs["ms_per_iteration"] / ours["ms_per_iteration"]
    print(f"  OpenSpiel: {theirs['ms_per_iteration']:.3f} ms/iteration (C++ CFRPlusSolver, "
          f"open_spiel {theirs['version']}): ours is {ratio:.1f}x faster")
    print(f"  {'iterations':>10}  {'ours':>14}  {'OpenSpiel':>14}  {'difference':>10}")
    for (n, e), (_, o) in zip(ours["exploitability"], theirs["exploitability"], strict=True):
        print(f"  {n:>10}  {e:>14.9g}  {o:>14.9g}  {abs(e - o):>10.2g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
