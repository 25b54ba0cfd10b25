"""``acpc-strategy translation``: the command group of the translation experiments.

* ``exploit --game clairvoyance|nl-kuhn|nl-leduc [--abstraction A ...] [--stacks 1,3]
  [--mappings all] [--purify none,full,threshold:0.15|all] [--out DIR]``: the table of
  exploitability (mappings x stacks for the half-street games, the agent in seat P2;
  mappings x seats for no-limit Leduc) and, with ``--out``, CSV and JSON records.
  Half-street abstractions: ``pot`` (``{fold, check, pot, all-in}``, the default),
  ``fchpa``, pot fractions such as ``0.4``, or ``every`` (every grid size: the real game).
  No-limit Leduc abstractions are the bundled files ``fcpa`` (default) and ``fchpa``, or
  ``--strategy FILE``; per-seat figures use the stored real-game value unless
  ``--value-iterations N`` recomputes it (DCFR; 0 skips it: averages only).
  ``--sizes-in abstract,real|all`` (nl-leduc): the agent's size convention(s)
  (:mod:`agent.abstraction.convention`; default: the agent's default); with both, the
  convention table follows (mappings x conventions x seats, and the real all-ins each
  reads as something else).
* ``best-size [--stacks ...] [--mappings ...] [--purify P] [--out DIR]``: for no-limit
  Kuhn, the extra size ``X`` of ``{fold, check, X, all-in}`` that minimises P2's
  exploitability, per mapping and stack.
* ``plot --out DIR [--ab A,B ...] [--stacks ...] [--mappings ...]``: ``mappings.png`` (the
  curves ``f(x)``) and ``exploitability.png`` (clairvoyance and no-limit Kuhn against the
  stack).

Registered by :mod:`strategies.cli` (:func:`add_parser`, :func:`run`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from agent.acpc.errors import UsageError
from agent.console import nonnegative_int, positive_int
from strategies.commands.defaults import TRANSLATION_ITERATIONS

GAMES = ("clairvoyance", "nl-kuhn", "nl-leduc")
DEFAULT_ABSTRACTIONS = {"clairvoyance": ["pot"], "nl-kuhn": ["pot", "0.4"], "nl-leduc": ["fcpa"]}


def _progress(text: str) -> None:
    print(f"acpc-strategy translation: {text}", file=sys.stderr, flush=True)


def add_parser(sub: Any) -> None:
    """Add the ``translation`` command group to ``acpc-strategy``'s subparsers."""
    t = sub.add_parser("translation", help="measure translation mappings exactly (full-game "
                       "best responses in small no-limit games)")
    tsub = t.add_subparsers(dest="translation_command", required=True)

    e = tsub.add_parser("exploit", help="exploitability table: mappings x stacks or seats")
    e.add_argument("--game", required=True, choices=GAMES)
    e.add_argument("--abstraction", action="append",
                   help="half-street: pot, fchpa, pot fractions (0.4) or every; nl-leduc: "
                   "fcpa or fchpa (repeatable)")
    e.add_argument("--strategy", help="nl-leduc: a strategy file instead of a bundled one")
    e.add_argument("--stacks", help="half-street stacks in pots (default 1,3,5,10,20,50,100)")
    e.add_argument("--mappings", default="all", help="comma-separated mappings or 'all'")
    e.add_argument("--purify", default="none",
                   help="comma-separated: none, full, threshold:T, or 'all'")
    e.add_argument("--iterations", type=nonnegative_int, default=TRANSLATION_ITERATIONS,
                   help="nl-kuhn: CFR+ iterations of the abstract equilibrium")
    e.add_argument("--value-iterations", type=positive_int,
                   help="nl-leduc: recompute the real game's value with this many DCFR "
                   "iterations (0: skip per-seat figures)")
    e.add_argument("--sizes-in", default=None,
                   help="nl-leduc: size conventions of the agent, comma-separated "
                   "(abstract, real) or 'all' (default: the agent's default)")
    e.add_argument("--out", help="directory for CSV and JSON records")

    b = tsub.add_parser("best-size", help="nl-kuhn: the best extra bet size per mapping")
    b.add_argument("--stacks", help="stacks in pots (default 1,3,5,10,20,50,100)")
    b.add_argument("--mappings", default="all")
    b.add_argument("--purify", default="none", help="one purification")
    b.add_argument("--iterations", type=nonnegative_int, default=TRANSLATION_ITERATIONS)
    b.add_argument("--out", help="directory for CSV and JSON records")

    p = tsub.add_parser("plot", help="PNGs: mapping curves and exploitability vs stack")
    p.add_argument("--out", required=True, help="directory for the PNGs")
    p.add_argument("--ab", action="append",
                   help="A,B of a mapping panel (repeatable; default 0.01,1 and 1,4)")
    p.add_argument("--stacks", help="stacks in pots (default 1,3,5,10,20,50,100)")
    p.add_argument("--mappings", default="all")
    p.add_argument("--iterations", type=nonnegative_int, default=TRANSLATION_ITERATIONS)


def _exploit(args: argparse.Namespace) -> int:
    from strategies.measure.translation import lab

    mappings = lab.parse_mappings(args.mappings)
    purifications = lab.parse_purifications(args.purify)
    abstractions = args.abstraction or DEFAULT_ABSTRACTIONS[args.game]
    rows: list[lab.Measurement] = []
    start = time.perf_counter()
    if args.game == "nl-leduc":
        conventions = lab.parse_conventions(args.sizes_in)
        if args.stacks:
            raise UsageError("expected no --stacks for nl-leduc: its stacks are the strategy "
                             "file's game's (12)")
        specs = [args.strategy] if args.strategy else abstractions
        for spec in specs:
            strategy = lab.load_leduc(spec)
            value = lab.strategy_real_value(strategy.game, args.value_iterations)
            if value is None and args.value_iterations is None:
                _progress("no stored real-game value for this game: per-seat figures are "
                          "nan (use --value-iterations N)")
            rows += lab.measure_strategy(strategy, mappings, purifications, value=value,
                                         progress=_progress, conventions=conventions)
        print(lab.format_seat_table(rows))
        if len(conventions) > 1:
            print(lab.format_convention_table(rows))
    else:
        if args.sizes_in is not None:
            raise UsageError(f"expected --sizes-in only for nl-leduc (the half-street games "
                             f"have one bet: the pots never differ), got it for {args.game}")
        stacks = lab.parse_stacks(args.stacks)
        for spec in abstractions:
            rows += lab.measure_half_street(args.game, lab.parse_sizes(spec), stacks, mappings,
                                            purifications, iterations=args.iterations)
        print(lab.format_stack_table(rows, seat=1))
    _progress(f"{len(rows)} measurements in {time.perf_counter() - start:.1f} s")
    if args.out:
        for path in lab.write_records([r.to_json() for r in rows], Path(args.out), args.game):
            _progress(f"wrote {path}")
    return 0


def _best_size(args: argparse.Namespace) -> int:
    from strategies.measure.translation import lab

    purifications = lab.parse_purifications(args.purify)
    if len(purifications) != 1:
        raise UsageError(f"expected one purification for best-size, got {args.purify!r}")
    rows = lab.best_sizes(lab.parse_stacks(args.stacks), lab.parse_mappings(args.mappings),
                          purifications[0], iterations=args.iterations, progress=_progress)
    print(lab.format_best_sizes(rows))
    if args.out:
        for path in lab.write_records([r.to_json() for r in rows], Path(args.out),
                                      "best-size"):
            _progress(f"wrote {path}")
    return 0


def parse_ab(text: str) -> tuple[float, float]:
    """``A,B`` as two floats.

    Raises:
        ValueError: for anything else.
    """
    try:
        a, b = (float(v) for v in text.split(","))
    except ValueError:
        raise UsageError(f"expected --ab A,B (e.g. 0.01,1), got {text!r}") from None
    return a, b


def _plot(args: argparse.Namespace) -> int:
    from strategies.measure.translation import lab, plots

    out = Path(args.out)
    mappings = lab.parse_mappings(args.mappings)
    pairs = [parse_ab(t) for t in (args.ab or ["0.01,1", "1,4"])]
    path = plots.plot_mappings(out / "mappings.png", pairs, mappings)
    _progress(f"wrote {path}")
    stacks = lab.parse_stacks(args.stacks)
    rows = lab.measure_half_street("clairvoyance", (1.0,), stacks, mappings,
                                   iterations=args.iterations)
    for sizes in ((1.0,), (0.4,)):
        rows += lab.measure_half_street("nl-kuhn", sizes, stacks, mappings,
                                        iterations=args.iterations)
    path = plots.plot_exploitability(out / "exploitability.png", rows)
    _progress(f"wrote {path}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the ``translation`` subcommand in ``args``; returns the exit status."""
    commands = {"exploit": _exploit, "best-size": _best_size, "plot": _plot}
    return commands[args.translation_command](args)
