"""The size-convention table (issue 14, item 5): where translation measures ``A`` and ``B``.

Usage::

    python scripts/size_conventions.py [--out size-conventions] [--abstractions fcpa,fchpa]
                                       [--mappings all] [--purify none,full]
                                       [--game nl-leduc|royal]

For each bundled no-limit Leduc file (stacks 12, every whole-chip bet for the best
responder), every mapping and purification, the agent's exploitability per seat and on
average (chips per hand) with the abstract sizes measured in the abstract node's state
(``abstract``) and re-expressed in the real state (``real``,
:mod:`agent.abstraction.convention`), and the number of real all-ins the agent may read as
something other than its abstract all-in (:func:`strategies.measure.translation.full_br.
all_in_misreads`). Writes ``conventions.txt`` (the tables as printed),
``conventions.csv/json`` (the records) and ``conventions.png`` (average exploitability per
mapping, one bar per convention). Takes about half a minute.

``--game royal`` measures the bundled Royal files instead (``fcpa,fcha``; stacks 20, the
exact full-game best response by boards of :mod:`strategies.measure.translation.royal_br`): the
seat averages per convention (per-seat exploitability needs Royal's game value, which is
not known; misreads are not counted there). A few minutes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from agent.abstraction.convention import SIZE_CONVENTIONS
from strategies.measure.translation import lab, plots


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="size-conventions", help="output directory")
    p.add_argument("--abstractions", default="fcpa,fchpa",
                   help="bundled no-limit Leduc files or strategy file paths")
    p.add_argument("--mappings", default="all")
    p.add_argument("--purify", default="none,full")
    p.add_argument("--game", choices=("nl-leduc", "royal"), default="nl-leduc")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    mappings = lab.parse_mappings(args.mappings)
    purifications = lab.parse_purifications(args.purify)
    start = time.perf_counter()

    def note(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    rows: list[lab.Measurement] = []
    if args.game == "royal":
        rows = _royal(args.abstractions, mappings, purifications, note)
    for spec in ([] if args.game == "royal" else
                 lab.parse_list(args.abstractions, ("fcpa", "fchpa"))):
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


def _royal(abstractions: str, mappings: list[str], purifications: list[str],
           note: lab.ProgressFn) -> list[lab.Measurement]:
    from agent.abstraction.translation import get_mapping
    from agent.data import strategy_path
    from agent.strategy.fileformat import load_strategy
    from agent.strategy.purification import parse_purification
    from strategies.measure.translation.royal_br import RoyalLab, translated_agent

    names = lab.parse_list(None if abstractions == "fcpa,fchpa" else abstractions,
                           ("fcpa", "fcha"))
    rows = []
    for name in names:
        path = Path(name) if Path(name).exists() else \
            strategy_path(f"royal.nolimit.2p.{name}.strat")
        strategy = load_strategy(path)
        for pur_name in purifications:
            royal = RoyalLab(translated_agent(strategy, parse_purification(pur_name)))
            for sizes_in in SIZE_CONVENTIONS:
                for m in mappings:
                    fig = royal.measure(get_mapping(m), sizes_in)
                    rows.append(lab.Measurement("royal", strategy.betting.name, m, pur_name,
                                                float(strategy.game.stack[0]),
                                                fig.best_responses, None,
                                                units="chips per hand", sizes_in=sizes_in))
                note(f"royal {strategy.betting.name} {pur_name} sizes in {sizes_in}: "
                     f"{len(mappings)} mappings")
    return rows


if __name__ == "__main__":
    sys.exit(main())
