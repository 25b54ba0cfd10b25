"""Build LBR's exact preflop equity table (strategies/data/holdem-preflop-equity.npz).

    python scripts/build_preflop_equity.py [--out PATH] [--workers N] [--check]

Every preflop class's first hole against every hold'em hole over all 2,118,760 boards of
its other 50 cards (:mod:`strategies.measure.preflop_equity`), the rank-class kernel in
``--workers`` threads (about 170 CPU-seconds). Prints the file's SHA-256, which
``TABLE_SHA256`` in that module must name. ``--check``: build in memory and compare with
the bundled table (exit 1 if any score differs).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from agent.acpc.gamedef import parse_gamedef
from agent.acpc.gamefiles import read_game_text
from strategies.measure import preflop_equity as pe


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=str(pe.bundled_path()))
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--check", action="store_true")
    args = p.parse_args()
    game = parse_gamedef(*read_game_text("holdem.nolimit.2p.reverse_blinds.game"))
    t0, c0 = time.monotonic(), time.process_time()

    def say(done: int, total: int, seconds: float) -> None:
        if done % 13 == 0 or done == total:
            eta = seconds / done * (total - done)
            print(f"  {done:3d}/{total} classes, {seconds:6.1f} s, ETA {eta:5.1f} s",
                  flush=True)

    table = pe.build(game, args.workers, say)
    print(f"built in {time.monotonic() - t0:.1f} s ({time.process_time() - c0:.1f} CPU-s, "
          f"{args.workers} threads)")
    if args.check:
        same = np.array_equal(table, pe.load())
        print("equal to the bundled table" if same else "DIFFERS from the bundled table")
        return 0 if same else 1
    digest = pe.save(table, args.out)
    print(f"wrote {args.out}: sha256 {digest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
