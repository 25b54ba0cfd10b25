"""The Leduc strategy-grafting experiment (issue 15; :mod:`strategies.grafting.leduc`).

Usage::

    python scripts/grafting_leduc.py --out grafting-leduc [--solver cfr+]
        [--iterations 10000] [--graft-iterations 4000] [--graft-target 0.0005]
        [--workers 2] [--spread cfr:2000,cfr:20000,cfr+:2000,cfr+:20000]

Builds the nine strategies (three abstractions J.Q.K, JQ.K, J.QK; their bases; their preflop
and flop grafted versions, both positions grafted) with the main solver configuration,
writes their strategy files, and measures exactly (every deal, both seats): the round robin
and each strategy's real-game exploitability in mbb/h (1 mbb = 0.002 chips), and what each
wins against the best response to its base. ``--spread`` repeats the measurement for other
solvers and iteration counts (``SOLVER:ITERATIONS``, grafts with the same solver and
``--graft-iterations``) to show how much the figures depend on which equilibrium the solver
finds. Writes ``tables.md``, ``results.json``, ``round_robin.png`` and ``strategies/*.strat``
to ``--out``.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from strategies.grafting.leduc import Config, run_config, write_report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--solver", default="cfr+", choices=["cfr", "cfr+", "lcfr", "dcfr"])
    p.add_argument("--iterations", type=int, default=10_000, help="base iterations")
    p.add_argument("--graft-iterations", type=int, default=4000,
                   help="most iterations per graft")
    p.add_argument("--graft-target", type=float, default=5e-4,
                   help="graft-game NashConv target, chips per hand")
    p.add_argument("--workers", type=int, default=2, help="processes solving grafts")
    p.add_argument("--spread", default="",
                   help="other configurations SOLVER:ITERATIONS, comma-separated")
    args = p.parse_args(argv)
    command = "python scripts/grafting_leduc.py " + shlex.join(sys.argv[1:] if argv is None
                                                               else argv)

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    main_config = Config(args.solver, args.iterations, args.graft_iterations, args.graft_target)
    say(f"main configuration: {main_config.label}")
    _, main_result = run_config(main_config, workers=args.workers,
                                out=args.out / "strategies", say=say)
    spread = []
    for item in filter(None, args.spread.split(",")):
        solver, _, iterations = item.partition(":")
        config = Config(solver, int(iterations), args.graft_iterations, args.graft_target)
        say(f"spread configuration: {config.label}")
        spread.append(run_config(config, workers=args.workers, say=say)[1])
    if spread:
        spread.insert(0, main_result)
    path = write_report(args.out, main_result, spread, command)
    print(path.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
