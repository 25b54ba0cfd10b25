"""Regenerate every translation table and plot (issue 7) in one run.

Usage::

    python scripts/translation_tables.py [--out translation-results] [--stacks 1,3,5,...]
                                         [--value-iterations N] [--skip-best-size]

Writes to ``--out``:

* ``tables.txt``: every table below, as printed;
* ``clairvoyance.csv/json``: the clairvoyance game, abstraction ``{check, pot, all-in}``,
  analytic defender, every mapping x stack (pots per hand), every purification;
* ``nl-kuhn.csv/json``: half-street no-limit Kuhn, abstractions ``{fold, check, pot,
  all-in}`` and ``{fold, check, 0.4, all-in}`` (CFR+ equilibria), mapping x stack x
  purification, both seats;
* ``nl-leduc.csv/json``: no-limit Leduc (stacks 12, every whole-chip bet), the bundled
  ``fcpa`` and ``fchpa`` files, mapping x purification (none, full, threshold:0.15) x size
  convention (abstract, real), per seat and average (chips per hand), and the convention
  table (``scripts/size_conventions.py`` makes it alone, with its PNG);
* ``best-size.csv/json``: for no-limit Kuhn, the best extra size ``X`` per mapping and stack;
* ``mappings.png`` (the curves ``f(x)`` for ``A = 0.01, B = 1`` and ``A = 1, B = 4``) and
  ``exploitability.png`` (exploitability of the agent in seat P2 against the stack).

Per-seat Leduc figures need the real game's value: the stored DCFR estimate
(:data:`strategies.measure.translation.lab.KNOWN_REAL_VALUES`) unless ``--value-iterations N``
recomputes it (4000 iterations take about 4 minutes; the bracket is printed so it can be
stored again). Everything else takes about a minute.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from agent.abstraction.convention import SIZE_CONVENTIONS
from agent.acpc.gamefiles import load_game
from strategies.measure.translation import lab, plots


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="translation-results", help="output directory")
    p.add_argument("--stacks", help="stacks in pots (default 1,3,5,10,20,50,100)")
    p.add_argument("--iterations", type=int, default=20_000,
                   help="CFR+ iterations of the no-limit Kuhn abstract equilibria")
    p.add_argument("--value-iterations", type=int,
                   help="recompute no-limit Leduc's real value with this many DCFR iterations")
    p.add_argument("--skip-best-size", action="store_true")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stacks = lab.parse_stacks(args.stacks)
    mappings = list(lab.MAPPINGS)
    purifications = list(lab.PURIFICATIONS)
    text: list[str] = []

    def say(block: str) -> None:
        print(block, flush=True)
        text.append(block)

    def note(message: str) -> None:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    start = time.perf_counter()
    # ------------------------------------------------------------------ half-street games
    clair = lab.measure_half_street("clairvoyance", (1.0,), stacks, mappings, purifications)
    say(lab.format_stack_table([r for r in clair if r.purification == "none"], seat=1))
    lab.write_records([r.to_json() for r in clair], out, "clairvoyance")
    note("clairvoyance done")
    kuhn: list[lab.Measurement] = []
    for sizes in ((1.0,), (0.4,)):
        kuhn += lab.measure_half_street("nl-kuhn", sizes, stacks, mappings, purifications,
                                        iterations=args.iterations)
    say(lab.format_stack_table(kuhn, seat=1))
    lab.write_records([r.to_json() for r in kuhn], out, "nl-kuhn")
    note("nl-kuhn done")

    # ------------------------------------------------------------------ no-limit Leduc
    game = load_game("leduc.nolimit.2p.game")
    if args.value_iterations is not None:
        t = time.perf_counter()
        value = lab.strategy_real_value(game, args.value_iterations)
        assert value is not None
        lo, hi = value.values[0] - value.error, value.values[0] + value.error
        note(f"real no-limit Leduc value: v[0] in [{lo!r}, {hi!r}] ({value.iterations} "
             f"{value.solver} iterations, {time.perf_counter() - t:.0f} s)")
    else:
        value = lab.strategy_real_value(game)
    leduc: list[lab.Measurement] = []
    for preset in ("fcpa", "fchpa"):
        leduc += lab.measure_strategy(lab.load_leduc(preset), mappings, purifications,
                                      value=value, progress=note,
                                      conventions=SIZE_CONVENTIONS)
    if value is not None:
        say(f"no-limit Leduc real-game value (every whole-chip bet): seat 0 "
            f"{value.values[0]:+.6f} +- {value.error:.1g} chips/hand ({value.solver}, "
            f"{value.iterations} iterations)\n")
    say(lab.format_seat_table(leduc))
    say(lab.format_convention_table(leduc))
    lab.write_records([r.to_json() for r in leduc], out, "nl-leduc")

    # ------------------------------------------------------------------ best size, plots
    if not args.skip_best_size:
        best = lab.best_sizes(stacks, mappings, iterations=args.iterations, progress=note)
        say(lab.format_best_sizes(best))
        lab.write_records([r.to_json() for r in best], out, "best-size")
    plots.plot_mappings(out / "mappings.png", [(0.01, 1.0), (1.0, 4.0)], mappings)
    plots.plot_exploitability(out / "exploitability.png",
                              [r for r in clair + kuhn if r.purification == "none"])
    (out / "tables.txt").write_text("\n".join(text), encoding="utf-8")
    note(f"all written to {out} in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
