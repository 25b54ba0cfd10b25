"""100-card Kuhn: exact values, abstraction exploitability and solver convergence (issue 16).

Usage::

    python scripts/kuhn100.py [--out kuhn100-results] [--seconds 6] [--cards 100]
                              [--buckets 3,10,25] [--solvers cfr,cfr+,cfr-cs,mccfr-es,pure-cfr]
                              [--seed 0] [--reference-iterations 20000]
                              [--split domain|proportional] [--skip-curves]

Games: the full N-card Kuhn game (``full``) and its equal-width card abstractions
(:mod:`strategies.games.kuhn100`). Writes to ``--out``:

* ``values.md`` / ``values.json``: per game, the buckets, the exact abstract-game value to
  the first player (sequence-form LP, :mod:`strategies.solvers.sequence_form`, with the fraction it
  is), a converged CFR+ check of it, and the full-game exploitability (exact best response,
  chips per hand, ``(br0 + br1) / 2``) of the abstract equilibria found by the LP and by
  CFR+ and the least of any abstract equilibrium (an LP), beside the published claims;
* ``convergence.json``: per game and solver, the full-game exploitability of the lifted
  average strategy at geometrically spaced iterations, with the solver's own seconds;
* ``convergence_iterations.png`` and ``convergence_seconds.png``: those curves, one panel per
  game.

Each solver runs ``--seconds`` of its own time per game (evaluation time not counted), so
the default (4 games x 5 solvers x 6 s) takes about three minutes. Ctrl-C stops the
convergence runs and writes what is done.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

from strategies.games.kuhn100 import SPLITS, KuhnGame, build_kuhn, lift, lift_index
from strategies.measure.best_response import exploitability
from strategies.solvers.cfr import VARIANTS, Solver

PUBLISHED = {"3": -0.0264, "10": -0.0566, "25": -0.0566}
"""The published abstract-game values (the text: 3 buckets -0.0264, every other -0.0566)."""
DEFAULT_SOLVERS = "cfr,cfr+,cfr-cs,mccfr-es,pure-cfr"


def fraction(value: float) -> str:
    """``value`` as the nearest fraction with a denominator below 10**6."""
    f = Fraction(value).limit_denominator(1_000_000)
    return f"{f.numerator}/{f.denominator}"


def values_table(games: dict[str, KuhnGame], full: KuhnGame, reference_iterations: int,
                 say: Any) -> list[dict[str, Any]]:
    from strategies.solvers.sequence_form import best_lifted_equilibrium, solve_lp

    rows = []
    for name, g in games.items():
        start = time.perf_counter()
        lp = solve_lp(g)
        lp_full = exploitability(full, lift(g, lp.table, full))
        solver = Solver(g, "cfr+")
        solver.iterate(reference_iterations)
        table = solver.average_strategy()
        cfr_abstract = exploitability(g, table)
        cfr_full = exploitability(full, lift(g, table, full))
        least = best_lifted_equilibrium(g, full, lift_index(g, full))
        row = {
            "game": name,
            "buckets": g.equal_width.count,
            "bucket_cards": [list(r) for r in g.equal_width.ranges()]
            if g.equal_width.count <= 25 else "one card each",
            "value_lp": lp.value,
            "value_fraction": fraction(lp.value),
            "value_cfr_plus": cfr_abstract.values[0],
            "cfr_plus_iterations": reference_iterations,
            "cfr_plus_abstract_exploitability": cfr_abstract.exploitability,
            "full_exploitability_lp_equilibrium": lp_full.exploitability,
            "full_exploitability_cfr_plus": cfr_full.exploitability,
            "full_best_responses_cfr_plus": list(cfr_full.best_responses),
            "full_best_responses_lp_equilibrium": list(lp_full.best_responses),
            "full_exploitability_least": sum(least) / 2,
            "full_best_responses_least": list(least),
            "published_value": PUBLISHED.get(name),
            "seconds": time.perf_counter() - start,
        }
        rows.append(row)
        say(f"  {name:>4}: value {lp.value:+.6f} ({row['value_fraction']}), CFR+ "
            f"{row['value_cfr_plus']:+.6f} (abstract expl {cfr_abstract.exploitability:.1e}), "
            f"full-game expl LP eq {lp_full.exploitability:.6f}, CFR+ eq "
            f"{cfr_full.exploitability:.6f}, least over abstract equilibria "
            f"{max(row['full_exploitability_least'], 0.0):.6f}  [{row['seconds']:.1f}s]")
    return rows


def markdown(rows: list[dict[str, Any]], cards: int, reference_iterations: int) -> str:
    lines = [
        f"# {cards}-card Kuhn: values and abstraction exploitability",
        "",
        "Values are the first player's (position 0, who acts first), chips per hand (ante "
        "1, bet 1); the second player's are the negatives. Exploitability is "
        "(br0 + br1) / 2 in the full game of the abstract equilibrium lifted to it.",
        "",
        "| game | buckets | value (LP) | exact | value (CFR+) | published | full-game expl. "
        "(LP eq.) | full-game expl. (CFR+ eq.) | least over abstract eq. |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        published = "" if r["published_value"] is None else f"{r['published_value']:+.4f}"
        cells = r["bucket_cards"]
        shown = cells if isinstance(cells, str) else ", ".join(
            f"{a}-{b}" for a, b in cells[:3]) + (", ..." if len(cells) > 3 else "")
        lines.append(
            f"| {r['game']} | {shown} | {r['value_lp']:+.6f} | {r['value_fraction']} | "
            f"{r['value_cfr_plus']:+.6f} | {published} | "
            f"{r['full_exploitability_lp_equilibrium']:.6f} | "
            f"{r['full_exploitability_cfr_plus']:.6f} | "
            f"{max(r['full_exploitability_least'], 0.0):.6f} |")
    lines += ["", f"CFR+: {reference_iterations} iterations per game (its abstract-game "
              f"exploitability is in values.json). An abstract game has many equilibria and "
              f"they differ in the full game: 'LP eq.' is the one HiGHS returns, 'least' the "
              f"smallest full-game exploitability of any abstract equilibrium (an LP per "
              f"seat, strategies.solvers.sequence_form.best_lifted_equilibrium)."]
    return "\n".join(lines) + "\n"


def converge(g: KuhnGame, full: KuhnGame, variant: str, seconds: float, seed: int,
             ratio: float = 1.25) -> dict[str, Any]:
    """Run ``variant`` on ``g`` for ``seconds`` of solver time, measuring the full-game
    exploitability of the lifted average at iterations growing by ``ratio``."""
    solver = Solver(g, variant, seed=seed)
    solver.warm_up()
    points: list[tuple[int, float, float]] = []
    target = 1
    while solver.seconds < seconds:
        solver.iterate(target - solver.iteration)
        table = lift(g, solver.average_strategy(), full)
        measured = exploitability(full, table).exploitability
        points.append((solver.iteration, solver.seconds, measured))
        rate = solver.iteration / max(solver.seconds, 1e-9)
        left = math.ceil(rate * (seconds - solver.seconds))  # iterations the budget allows
        target = max(target + 1, min(math.ceil(target * ratio), solver.iteration + left))
    return {"solver": variant, "seed": seed, "iterations": [p[0] for p in points],
            "seconds": [p[1] for p in points], "exploitability": [p[2] for p in points]}


def plot(runs: dict[str, list[dict[str, Any]]], floors: dict[str, tuple[float, float]], out: Path,
         cards: int) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for axis, label in (("iterations", "iterations"), ("seconds", "solver seconds")):
        n = len(runs)
        cols = 2 if n > 1 else 1
        rows = math.ceil(n / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 4.2 * rows), squeeze=False)
        for ax, (name, results) in zip(axes.ravel(), runs.items(), strict=False):
            for r in results:
                if r["iterations"]:
                    ax.loglog(r[axis], r["exploitability"], label=r["solver"], lw=1.4)
            if name in floors and name != "full":
                lp_floor, least = floors[name]
                ax.axhline(lp_floor, color="grey", ls="--", lw=1,
                           label="LP's abstract eq. in full game")
                ax.axhline(least, color="black", ls=":", lw=1,
                           label="least of any abstract eq.")
            title = f"{cards}-card Kuhn, full game" if name == "full" else \
                f"{name} buckets (lifted to the full game)"
            ax.set_title(title, fontsize=10)
            ax.set_xlabel(label)
            ax.set_ylabel("full-game exploitability (chips/hand)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        for ax in axes.ravel()[n:]:
            ax.axis("off")
        fig.suptitle(f"{cards}-card Kuhn: exploitability of the average strategy against "
                     f"{label} (one iteration = one pass per player)", fontsize=11)
        fig.tight_layout()
        path = out / f"convergence_{axis}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="kuhn100-results", help="output directory")
    p.add_argument("--cards", type=int, default=100, help="cards in the deck (default 100)")
    p.add_argument("--buckets", default="3,10,25", help="abstractions (default 3,10,25)")
    p.add_argument("--solvers", default=DEFAULT_SOLVERS,
                   help=f"solvers for the curves (default {DEFAULT_SOLVERS})")
    p.add_argument("--seconds", type=float, default=6.0,
                   help="solver seconds per game and solver (default 6)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sampling solvers")
    p.add_argument("--reference-iterations", type=int, default=20_000,
                   help="CFR+ iterations of the reference abstract equilibria")
    p.add_argument("--split", choices=SPLITS, default="domain",
                   help="how buckets share a remainder: domain (100 in 3: 0-32, 33-65, "
                        "66-99; the default) or proportional (0-33, 34-66, 67-99)")
    p.add_argument("--skip-curves", action="store_true", help="only the values table")
    args = p.parse_args(argv)
    try:
        buckets = [int(b) for b in args.buckets.split(",") if b]
    except ValueError:
        p.error(f"expected comma-separated bucket counts, got {args.buckets!r}")
    solvers = [s for s in args.solvers.split(",") if s]
    for s in solvers:
        if s not in VARIANTS or s == "mccfr-es-pool":
            p.error(f"expected solvers among {', '.join(VARIANTS)}, got {s!r}")
    if args.seconds <= 0 or args.reference_iterations < 1:
        p.error("expected positive --seconds and --reference-iterations")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    def say(text: str) -> None:
        print(text, flush=True)

    full = build_kuhn(args.cards)
    games: dict[str, KuhnGame] = {"full": full}
    for b in buckets:
        games[str(b)] = build_kuhn(args.cards, b, args.split)
    say(f"{args.cards}-card Kuhn: {full.num_deals} deals; games {', '.join(games)}")
    say("values (sequence-form LP) and full-game exploitability of the abstract equilibria:")
    rows = values_table(games, full, args.reference_iterations, say)
    (out / "values.json").write_text(json.dumps(
        {"cards": args.cards, "split": args.split, "rows": rows}, indent=1))
    (out / "values.md").write_text(markdown(rows, args.cards, args.reference_iterations))
    say(f"wrote {out / 'values.md'} and values.json")
    if args.skip_curves:
        return 0
    floors = {r["game"]: (r["full_exploitability_lp_equilibrium"],
                          r["full_exploitability_least"]) for r in rows}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in games}
    total = len(games) * len(solvers)
    say(f"convergence: {total} runs of {args.seconds:g} solver seconds each")
    done = 0
    try:
        for name, g in games.items():
            for s in solvers:
                result = converge(g, full, s, args.seconds, args.seed)
                runs[name].append(result)
                done += 1
                say(f"  [{done}/{total}] {name:>4} {s:<9} {result['iterations'][-1]:>10} "
                    f"iterations, {result['seconds'][-1]:.1f}s: full-game exploitability "
                    f"{result['exploitability'][-1]:.6f}")
    except KeyboardInterrupt:
        say(f"interrupted after {done} of {total} runs: writing what is done")
    (out / "convergence.json").write_text(json.dumps(
        {"cards": args.cards, "seconds_per_run": args.seconds, "runs": runs}))
    for path in plot({k: v for k, v in runs.items() if v}, floors, out, args.cards):
        say(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
