"""Exploitability per iteration and per second: the excessive gap technique beside the CFR family.

Usage::

    python scripts/egt_curves.py [--out egt-results] [--games leduc,kuhn]
                                 [--solvers egt,cfr,cfr+,lcfr,dcfr,cfr-cs,mccfr-es,pure-cfr]
                                 [--seconds leduc=30,kuhn=5] [--seed 0] [--prefix egt]
                                 [--replot]

Every solver runs on the same game in the same process, one after the other, for
``--seconds`` of its own CPU time (``time.process_time`` around its iterations; the
exploitability measurements are not counted, nor the setup: the solver's construction and
compilation check, for EGT also its sequence form and first iterates, recorded apart as
``setup_cpu_seconds``), and its output is measured at
geometrically spaced iterations with the exact best response
(:func:`strategies.measure.best_response.exploitability`, ``(br0 + br1) / 2`` in chips per
hand): the average strategy of the CFR variants, the current iterates of EGT
(:mod:`strategies.solvers.egt`). Games: ``leduc`` (limit Leduc, fcpa), ``kuhn`` (the
two-player Kuhn game of the tests), ``kuhn100`` (100-card Kuhn, :mod:`strategies.games.kuhn100`),
``royal`` (Royal hold'em, the recipe ``royal.nolimit.2p.fcpa``: fold, call, pot, all-in,
lossless cards, on the public tree, :mod:`strategies.solvers.royal`; solvers ``egt`` and
``cfr+`` only). Royal's exploitability is the exact abstract-game best response computed by
the public-tree walk (:meth:`strategies.solvers.royal.RoyalSaddle.best_responses` of the
strategy's realisation plans; the tests check it against
:meth:`strategies.measure.translation.royal_br.RoyalLab.abstract`), and its game (the
cards and boards, about 12 s) is built once, before the solvers, and not counted.

Writes to ``--out``: ``curves.json`` (every point: iteration, CPU seconds, wall seconds,
exploitability; EGT's backtracks and final smoothing), ``summary.md`` (per game and solver:
the final figures and the iterations and CPU seconds to reach 1e-3 ... 1e-6), and
``PREFIX_iterations.png`` / ``PREFIX_seconds.png`` (one panel per game; ``--prefix``,
default ``egt``). The load average
(``os.getloadavg``) at the start and end of each game is recorded beside its figures.
Ctrl-C stops the runs and writes what is done; ``--replot`` rewrites the summary and the
PNGs from an earlier run's ``curves.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from strategies.games.abstract import AbstractGame
from strategies.measure.best_response import exploitability
from strategies.solvers.cfr import VARIANTS, Solver
from strategies.solvers.egt import EGTSolver
from strategies.solvers.royal import RoyalGame

DEFAULT_SOLVERS = "egt,cfr,cfr+,lcfr,dcfr,cfr-cs,mccfr-es,pure-cfr"
DEFAULT_SECONDS = "leduc=30,kuhn=5,kuhn100=20,royal=180"
THRESHOLDS = (1e-3, 1e-4, 1e-5, 1e-6)
GAME_TITLES = {"leduc": "limit Leduc hold'em (fcpa, lossless)",
               "kuhn": "Kuhn poker (3 cards)", "kuhn100": "100-card Kuhn",
               "royal": "Royal hold'em (fcpa, lossless, public tree)"}
ROYAL_SOLVERS = ("egt", "cfr+")
"""The solvers Royal's public tree runs."""


def build_game(name: str) -> AbstractGame | RoyalGame:
    from agent.abstraction.actions import PRESETS
    from agent.abstraction.buckets import LosslessCards
    from agent.acpc.gamefiles import load_game
    from strategies.games.abstract import build_abstract_game
    from strategies.games.kuhn100 import build_kuhn

    if name in ("kuhn", "kuhn100"):
        return build_kuhn(3 if name == "kuhn" else 100)  # 3 cards: the ACPC Kuhn game
    if name == "royal":
        from strategies.recipes import RECIPES

        recipe = RECIPES["royal.nolimit.2p.fcpa"]
        return RoyalGame(recipe.load_game(), recipe.betting_abstraction())
    game = load_game("leduc.limit.2p.game")
    return build_abstract_game(game, PRESETS["fcpa"], LosslessCards(game))


def measurer(g: AbstractGame | RoyalGame) -> Callable[[Any], float]:
    """The exact exploitability ``(br0 + br1) / 2`` of a table of ``g``."""
    if isinstance(g, AbstractGame):
        return lambda table: exploitability(g, table).exploitability
    saddle = g.egt_saddle()

    def royal(table: Any) -> float:
        f, phi = saddle.best_responses(*saddle.plans(table))
        return (f - phi) / 2

    return royal


def converge(g: AbstractGame | RoyalGame, name: str, seconds: float, seed: int,
             ratio: float = 1.2) -> dict[str, Any]:
    """Run solver ``name`` for ``seconds`` of CPU time, measuring at iterations growing by
    ``ratio``."""
    measure = measurer(g)
    solver: Solver | EGTSolver
    cpu0 = time.process_time()
    solver = EGTSolver(g, seed=seed) if name == "egt" else Solver(g, name, seed=seed)
    solver.warm_up()
    setup = time.process_time() - cpu0  # EGT: the sequence form and the first iterates
    cpu = 0.0
    points: list[tuple[int, float, float, float]] = []
    target = 1
    while cpu < seconds:
        t = time.process_time()
        solver.iterate(target - solver.iteration)
        cpu += time.process_time() - t
        measured = measure(solver.average_strategy())
        points.append((solver.iteration, cpu, solver.seconds, measured))
        rate = solver.iteration / max(cpu, 1e-9)
        left = math.ceil(rate * (seconds - cpu))
        target = max(target + 1, min(math.ceil(target * ratio), solver.iteration + left))
    run: dict[str, Any] = {
        "solver": name, "seed": seed, "iterations": [p[0] for p in points],
        "cpu_seconds": [p[1] for p in points], "wall_seconds": [p[2] for p in points],
        "exploitability": [p[3] for p in points], "setup_cpu_seconds": setup,
    }
    if isinstance(solver, EGTSolver):
        run["egt"] = {"backtracks": solver.backtracks, "tau": solver.tau,
                      "mu": list(solver.mu), "init_doublings": solver.init_doublings}
    return run


def reach(run: dict[str, Any], threshold: float) -> tuple[int, float] | None:
    """The first measured (iteration, CPU seconds) at or below ``threshold``."""
    for it, sec, e in zip(run["iterations"], run["cpu_seconds"], run["exploitability"],
                          strict=True):
        if e <= threshold:
            return int(it), float(sec)
    return None


def summary(games: dict[str, dict[str, Any]]) -> str:
    lines = ["| game | solver | setup CPU s | iterations | CPU s | exploitability | "
             + " | ".join(f"to {t:g}: it / CPU s" for t in THRESHOLDS) + " |",
             "|---|---|---:|---:|---:|---:|" + "---:|" * len(THRESHOLDS)]
    for game, entry in games.items():
        for run in entry["runs"]:
            if not run["iterations"]:
                continue
            cells = []
            for t in THRESHOLDS:
                hit = reach(run, t)
                cells.append("-" if hit is None else f"{hit[0]:,} / {hit[1]:.3g}")
            lines.append(f"| {game} | {run['solver']} | {run['setup_cpu_seconds']:.2f} | "
                         f"{run['iterations'][-1]:,} | "
                         f"{run['cpu_seconds'][-1]:.1f} | {run['exploitability'][-1]:.3g} | "
                         + " | ".join(cells) + " |")
    loads = "; ".join(f"{g}: load average {e['load_start'][0]:.2f} at the start, "
                      f"{e['load_end'][0]:.2f} at the end" for g, e in games.items())
    return "\n".join(lines) + f"\n\n{loads} (os.getloadavg, 1 minute).\n"


def plot(games: dict[str, dict[str, Any]], out: Path, prefix: str = "egt") -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for axis, label in (("iterations", "iterations"), ("cpu_seconds", "solver CPU seconds")):
        n = len(games)
        fig, axes = plt.subplots(1, n, figsize=(6.2 * n, 4.6), squeeze=False)
        for ax, (game, entry) in zip(axes.ravel(), games.items(), strict=True):
            for run in entry["runs"]:
                if run["iterations"]:
                    style = {"lw": 2.4, "color": "black"} if run["solver"] == "egt" else \
                        {"lw": 1.2}
                    ax.loglog(run[axis], run["exploitability"], label=run["solver"], **style)
            ax.set_title(f"{GAME_TITLES.get(game, game)}; load {entry['load_start'][0]:.1f}"
                         f"-{entry['load_end'][0]:.1f}", fontsize=10)
            ax.set_xlabel(label)
            ax.set_ylabel("exploitability (chips/hand)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        title = (f"Exploitability against {label}: EGT's current iterates, the CFR "
                 f"variants' averages (EGT iteration = one accepted step; CFR iteration "
                 f"= one pass per player)")
        fig.suptitle(textwrap.fill(title, width=int(16 * 6.2 * n)), fontsize=10)
        fig.tight_layout()
        path = out / f"{prefix}_{'iterations' if axis == 'iterations' else 'seconds'}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def parse_seconds(text: str) -> dict[str, float]:
    out = {}
    for part in text.split(","):
        key, _, value = part.partition("=")
        out[key.strip()] = float(value)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="egt-results", help="output directory")
    p.add_argument("--games", default="leduc,kuhn", help="leduc, kuhn, kuhn100, royal "
                   "(default leduc,kuhn)")
    p.add_argument("--solvers", default=DEFAULT_SOLVERS,
                   help=f"solvers (default {DEFAULT_SOLVERS})")
    p.add_argument("--seconds", default=DEFAULT_SECONDS,
                   help=f"CPU seconds per solver, per game (default {DEFAULT_SECONDS})")
    p.add_argument("--seed", type=int, default=0, help="seed of the sampling solvers")
    p.add_argument("--prefix", default="egt", help="PNG names: PREFIX_iterations.png, "
                   "PREFIX_seconds.png (default egt)")
    p.add_argument("--replot", action="store_true",
                   help="only rewrite summary.md and the PNGs from --out's curves.json")
    args = p.parse_args(argv)
    out = Path(args.out)
    if args.replot:
        try:
            saved = json.loads((out / "curves.json").read_text())["games"]
        except (OSError, ValueError, KeyError) as exc:
            p.error(f"expected {out / 'curves.json'} from an earlier run, got: {exc}")
        (out / "summary.md").write_text(summary(saved))
        for path in plot(saved, out, args.prefix):
            print(f"wrote {path}")
        return 0
    names = [g for g in args.games.split(",") if g]
    for g in names:
        if g not in GAME_TITLES:
            p.error(f"expected games among {', '.join(GAME_TITLES)}, got {g!r}")
    solvers = [s for s in args.solvers.split(",") if s]
    for s in solvers:
        if s != "egt" and (s not in VARIANTS or s == "mccfr-es-pool"):
            p.error(f"expected solvers among egt, {', '.join(VARIANTS)}, got {s!r}")
    try:
        budget = parse_seconds(args.seconds)
    except ValueError:
        p.error(f"expected --seconds like leduc=30,kuhn=5, got {args.seconds!r}")
    if "royal" in names and set(solvers) - set(ROYAL_SOLVERS):
        p.error(f"expected --solvers among {', '.join(ROYAL_SOLVERS)} with the game royal, "
                f"got {args.solvers!r}")
    for g in names:
        if not budget.get(g, 0) > 0:
            p.error(f"expected a positive --seconds entry for {g!r}, got {args.seconds!r}")
    out.mkdir(parents=True, exist_ok=True)
    games: dict[str, dict[str, Any]] = {}
    try:
        for g in names:
            game = build_game(g)
            entry: dict[str, Any] = {"seconds_per_solver": budget[g], "runs": [],
                                     "load_start": list(os.getloadavg())}
            games[g] = entry
            print(f"{g}: {len(solvers)} solvers x {budget[g]:g} CPU s "
                  f"(load {entry['load_start'][0]:.2f})", flush=True)
            for s in solvers:
                run = converge(game, s, budget[g], args.seed)
                entry["runs"].append(run)
                entry["load_end"] = list(os.getloadavg())
                print(f"  {s:<9} {run['iterations'][-1]:>10,} iterations, "
                      f"{run['cpu_seconds'][-1]:.1f} CPU s: exploitability "
                      f"{run['exploitability'][-1]:.3g}", flush=True)
    except KeyboardInterrupt:
        print("interrupted: writing what is done", flush=True)
    games = {g: e for g, e in games.items() if e["runs"]}
    for e in games.values():
        e.setdefault("load_end", list(os.getloadavg()))
    (out / "curves.json").write_text(json.dumps({"games": games}, indent=None))
    (out / "summary.md").write_text(summary(games))
    print(f"wrote {out / 'curves.json'} and {out / 'summary.md'}")
    for path in plot(games, out, args.prefix):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
