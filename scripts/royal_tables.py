"""The Royal tables: ``python scripts/royal_tables.py --out DIR``.

Exploitability of each Royal abstraction (FCPA, FCHA, FCMHPA, FCMHQTPA) x the seven
mappings x purification none/full against a best responder that may bet every whole chip,
and the round robin of the abstractions against each other (Rand-psHar), all exact
(:mod:`strategies.measure.translation.royal_tables`): ``DIR/royal_tables.md``, ``.json`` and two
PNGs. Each abstraction's file is the bundled one (``agent/data/strategies``), else
``royal.nolimit.2p.NAME.strat`` in ``--strategy-dir`` (what ``acpc-strategy solve --recipe
royal.nolimit.2p.NAME`` writes); missing ones are skipped with a note. ``--strategy
NAME=FILE`` (repeatable) measures those files instead. Ctrl-C writes what is done;
``--resume`` reuses the cells of ``DIR/royal_tables.json`` measured on the same files.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from pathlib import Path

from agent import console
from agent.abstraction.translation import BUILTIN_MAPPINGS
from agent.acpc.errors import AcpcError
from agent.data import strategies_dir
from agent.strategy.fileformat import Strategy, load_strategy
from strategies.measure.translation.royal_tables import format_tables, measure_tables, write_tables

NAMES = ("fcpa", "fcha", "fcmhpa", "fcmhqtpa")
PROG = "royal_tables"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--strategy-dir", default=".", help="where unbundled files are")
    parser.add_argument("--strategy", action="append", default=[], metavar="NAME=FILE")
    parser.add_argument("--mappings", default=",".join(BUILTIN_MAPPINGS))
    parser.add_argument("--purify", default="none,full")
    parser.add_argument("--rr-mapping", default="rand-pshar")
    parser.add_argument("--rr-purify", default="none")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--resume", action="store_true",
                        help="reuse the cells of OUT/royal_tables.json for the same files")
    args = parser.parse_args(argv)
    if threading.current_thread() is threading.main_thread():
        # Ctrl-C (SIGINT) writes what is done, even if started with SIGINT ignored
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        files: dict[str, Path] = {}
        for name in NAMES if not args.strategy else ():
            for place in (strategies_dir(), Path(args.strategy_dir)):
                path = place / f"royal.nolimit.2p.{name}.strat"
                if path.exists():
                    files[name] = path
                    break
            else:
                print(f"{PROG}: no {name} file (bundled or in {args.strategy_dir}): skipped",
                      file=sys.stderr)
        for spec in args.strategy:
            name, sep, file = spec.partition("=")
            if not sep or not name or not file:
                raise AcpcError(f"expected --strategy NAME=FILE, got {spec!r}")
            files[name] = Path(file)
        strategies: list[tuple[str, Strategy]] = [(n, load_strategy(p))
                                                  for n, p in files.items()]
        mappings = [m.strip() for m in args.mappings.split(",") if m.strip()]
        purifications = [p.strip() for p in args.purify.split(",") if p.strip()]
        bar = console.make_progress(
            enabled=not args.quiet, description="royal tables", total=None, fields=("n",),
            line=lambda done, f: f"{PROG}: {done:.0f} cells {f.get('n', '')}")

        def tick(done: int, total: int) -> None:
            bar.update(done, n=f"of {total}")

        previous = None
        old = Path(args.out) / "royal_tables.json"
        if args.resume and old.exists():
            previous = json.loads(old.read_text(encoding="utf-8"))
        try:
            tables = measure_tables(strategies, mappings, purifications, args.rr_mapping,
                                    args.rr_purify, note=lambda s: None, tick=tick,
                                    previous=previous)
        finally:
            bar.close()
        paths = write_tables(tables, Path(args.out), plots=not args.no_plots)
    except (AcpcError, ValueError, OSError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    print(format_tables(tables))
    print(f"{PROG}: {'' if tables.complete else 'INTERRUPTED: '}{tables.seconds:.0f} s; wrote "
          + ", ".join(str(p) for p in paths))
    return 0 if tables.complete else 130


if __name__ == "__main__":
    raise SystemExit(main())
