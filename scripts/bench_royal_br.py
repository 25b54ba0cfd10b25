"""Benchmark: the exact full-game best response in Royal no-limit hold'em.

Usage::

    python scripts/bench_royal_br.py [--strategy NAME|FILE ...] [--mapping rand-pshar]
                                     [--purify none] [--runs 5] [--json OUT]

One *run* is a fresh process that measures one strategy file: ``setup`` (load the file,
the lossless cards of Royal, the real betting tree, both seats' agent models and the
boards grouped by suit class; numba kernels from the on-disk cache), then ``br``: one best
response in both seats for one mapping (the responder may bet every whole chip; 95 boards
per seat, vectorised over the hands), and the process's peak resident set size
(``ru_maxrss``: interpreter, numpy and numba included). Runs of the strategies are
interleaved (A, B, A, B, ...) so that the machine's load falls on each alike; min, median
and max per strategy are printed, with the 1-minute load average before and after.

Default strategies: the bundled Royal FCPA and FCHA files. Targets: br <= 60 s and peak
<= 4 GB. A benchmark, not a test: run it by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _resolve(spec: str) -> Path:
    path = Path(spec)
    if path.exists():
        return path
    from agent.data import strategy_path

    return strategy_path(f"royal.nolimit.2p.{spec}.strat")


def child(path: str, mapping_name: str, purify: str) -> dict[str, Any]:
    """One run (in this process): the figures as a dict."""
    from agent.abstraction.translation import get_mapping
    from agent.strategy.fileformat import load_strategy
    from agent.strategy.purification import parse_purification
    from strategies.measure.translation import royal_br as rb

    t0 = time.perf_counter()
    strategy = load_strategy(path)
    agent = rb.translated_agent(strategy, parse_purification(purify))
    lab = rb.RoyalLab(agent)
    lab.models()
    rb.build_deals(agent.game, agent.lossless)
    t1 = time.perf_counter()
    figures = lab.measure(get_mapping(mapping_name))
    t2 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"strategy": path, "setup_s": t1 - t0, "br_s": t2 - t1, "peak_mb": peak,
            "best_responses": list(figures.best_responses), "average": figures.average}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--strategy", action="append", default=None,
                        help="a Royal strategy file, or fcpa/fcha (the bundled files)")
    parser.add_argument("--mapping", default="rand-pshar")
    parser.add_argument("--purify", default="none")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", default=None, help="write the runs here")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.mapping, args.purify)))
        return 0
    paths = [_resolve(s) for s in (args.strategy or ["fcpa", "fcha"])]
    for p in paths:
        if not p.exists():
            print(f"bench_royal_br: error: no strategy file {str(p)!r}", file=sys.stderr)
            return 1
    load_before = os.getloadavg()[0]
    runs: list[dict[str, Any]] = []
    try:
        for r in range(args.runs):
            for p in paths:
                out = subprocess.run(
                    [sys.executable, __file__, "--child", str(p), "--mapping", args.mapping,
                     "--purify", args.purify], check=True, capture_output=True, text=True)
                run = json.loads(out.stdout)
                run["load"] = os.getloadavg()[0]
                runs.append(run)
                print(f"run {r + 1}/{args.runs} {p.name}: setup {run['setup_s']:.1f} s, "
                      f"best response (both seats) {run['br_s']:.2f} s, peak "
                      f"{run['peak_mb']:.0f} MB, load {run['load']:.2f}", flush=True)
    except KeyboardInterrupt:
        print("interrupted: the runs done so far", file=sys.stderr)
    load_after = os.getloadavg()[0]
    print(f"\n{args.mapping}, purification {args.purify}; load average (1 min) "
          f"{load_before:.2f} before, {load_after:.2f} after, {os.cpu_count()} CPUs")
    print("| strategy | runs | br s min / median / max | setup s median | peak MB max | "
          "br0 | br1 | (br0+br1)/2 |")
    print("|---|---|---|---|---|---|---|---|")
    for p in paths:
        mine = [r for r in runs if r["strategy"] == str(p)]
        if not mine:
            continue
        br = [r["br_s"] for r in mine]
        last = mine[-1]
        print(f"| {p.name} | {len(mine)} | {min(br):.2f} / {statistics.median(br):.2f} / "
              f"{max(br):.2f} | {statistics.median(r['setup_s'] for r in mine):.1f} | "
              f"{max(r['peak_mb'] for r in mine):.0f} | {last['best_responses'][0]:.6f} | "
              f"{last['best_responses'][1]:.6f} | {last['average']:.6f} |")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": runs, "load_before": load_before,
                                               "load_after": load_after}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
