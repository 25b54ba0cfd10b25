"""The size-convention table (issue 14, item 5): where translation measures ``A`` and ``B``.

Usage::

    python scripts/size_conventions.py [--out size-conventions] [--abstractions fcpa,fchpa]
                                       [--mappings all] [--purify none,full]

For each bundled no-limit Leduc file (stacks 12, every whole-chip bet for the best
responder), every mapping and purification, the agent's exploitability per seat and on
average (chips per hand) with the abstract sizes measured in the abstract node's state
(``abstract``) and re-expressed in the real state (``real``,
:mod:`agent.abstraction.convention`), and the number of real all-ins the agent may read as
something other than its abstract all-in (:func:`strategies.translation.full_br.
all_in_misreads`). Writes ``conventions.txt`` (the tables as printed),
``conventions.csv/json`` (the records) and ``conventions.png`` (average exploitability per
mapping, one bar per convention). Takes about half a minute.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from agent.abstraction.convention import SIZE_CONVENTIONS
from strategies.translation import lab, plots


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="size-conventions", help="output directory")
    p.add_argument("--abstractions", default="fcpa,fchpa",
                   help="bundled no-limit Leduc files or strategy file paths")
    p.add_argument("--mappings", default="all")
    p.add_argument("--purify", default="none,full")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    mappings = lab.parse_mappings(args.mappings)
    purifications = lab.parse_purifications(args.purify)
    start = time.perf_counter()

    def note(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    rows: list[lab.Measurement] = []
    for spec in lab.parse_list(args.abstractions, ("fcpa", "fchpa")):
        strategy = lab.load_leduc(spec)
        value = lab.strategy_real_value(strategy.game)
        rows += lab.measure_strategy(strategy, mappings, purifications, value=value,
                                     progress=note, conventions=SIZE_CONVENTIONS)
    text = lab.format_convention_table(rows)
    print(text, flush=True)
    (out / "conventions.txt").write_text(text, encoding="utf-8")
    lab.write_records([r.to_json() for r in rows], out, "conventions")
    plots.plot_conventions(out / "conventions.png", rows)
    note(f"written to {out} in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
