"""Reproduce the published learned-bet-size results (issue 14, items 3 and 4).

Kuhn (antes 0.5, pot 1, bets of any size, stacks 100 pots): half-street (P2 may not bet),
no raises (each player may bet), full no-limit Kuhn (a bet may be raised once); then
no-limit Leduc as published (ante 1, stacks 400, at most two bets or raises per round,
fold/call/pot/all-in): the baseline solved, P1's pot bets learned in [0.8, 1.5] (P2 keeps
the baseline), then P2's; each abstraction solved in the continuous game to NashConv <=
--nash-conv; P1's value beside the published -0.072 / -0.060 / -0.078, and the learned sizes
in 0.1-wide ranges. Writes ``learned_sizes.json`` and ``learned_sizes.png`` into ``--out``.

    python scripts/learned_sizes.py --out results/ [--kuhn-iterations N]
        [--leduc-iterations N] [--solve-iterations N] [--skip-leduc]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from agent.abstraction.actions import parse_betting_abstraction
from agent.acpc.gamefiles import load_game
from strategies.measure.best_response import exploitability
from strategies.sizes.learned import (
    Rules,
    SizeLearner,
    build_sizing_game,
    fixed_game,
    parse_learn,
)
from strategies.solvers.cfr import Solver

KUHN = {
    "half-street": ('{"name": "half", "fractions": [[[0.5]]], "players": [null, [[[]]]],'
                    ' "all_in": false, "max_raises": [1]}', ["0"], "0.1,0.9",
                    "sqrt(2)-1 = 0.414 for P1"),
    "no raises": ('{"name": "noraise", "fractions": [[[0.5]]], "all_in": false,'
                  ' "max_raises": [1]}', ["both"], "0.1,2.0", "0.414 (P1), 0.509 (P2)"),
    "full": ('{"name": "full", "fractions": [[[0.5]]], "all_in": false, "max_raises": [2]}',
             ["both"], "0.1,2.0", "0.252 (P1 bet), 0.542 (P2 bet after a check), "
             "minimum (P2 raise)"),
}
LEDUC = "leduc.nolimit.2p.stack400.game"
LEDUC_BASE = '{"name": "fcpa2", "fractions": [[[1.0]]], "max_raises": [2]}'
PUBLISHED_LEDUC = {"baseline": -0.072, "P1 learned": -0.060, "P2 learned": -0.078}


def learn(game_name: str, spec: str, who: list[str], range_: str, iterations: int,
          rules: Rules | None, chunk: int) -> tuple[SizeLearner, dict[str, Any]]:
    game = load_game(game_name)
    transformed = build_sizing_game(game, parse_betting_abstraction(spec),
                                    learn=parse_learn(who, range_), rules=rules)
    learner = SizeLearner(transformed)
    t = time.perf_counter()
    while learner.iteration < iterations:
        learner.iterate(min(chunk, iterations - learner.iteration))
        if learner.iteration % (chunk * 20) == 0:
            print(f"  {game_name} {who}: {learner.iteration:,}/{iterations:,} "
                  f"({time.perf_counter() - t:.0f} s)", file=sys.stderr, flush=True)
    undetermined = learner.undetermined()
    nodes = [{"key": n.key or "root", "position": n.position, "size": s, "final": float(f),
              "undetermined": bool(u)}
             for n, s, f, u in zip(transformed.learned, learner.tail_sizes(), learner.sizes,
                                   undetermined, strict=True)]
    return learner, {"iterations": learner.iteration, "seconds": round(learner.seconds, 2),
                     "nodes": nodes}


def solve_value(game_name: str, spec: Any, iterations: int, target: float,
                rules: Rules | None) -> dict[str, Any]:
    """Solve the continuous abstract game until NashConv <= target (or ``iterations``)."""
    game = fixed_game(load_game(game_name), spec, rules=rules)
    solver = Solver(game, "cfr+")
    nash = math.inf
    step = 1000
    t = time.perf_counter()
    while solver.iteration < iterations and nash > target:
        solver.iterate(min(step, iterations - solver.iteration))
        nash = exploitability(game, solver.average_strategy()).nash_conv  # type: ignore[arg-type]
        step = min(step * 2, 20_000)
    result = exploitability(game, solver.average_strategy())  # type: ignore[arg-type]
    return {"value_p1": result.values[0], "nash_conv": result.nash_conv,
            "iterations": solver.iteration, "seconds": round(time.perf_counter() - t, 2)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=Path("learned_sizes"))
    p.add_argument("--kuhn-iterations", type=int, default=2_000_000)
    p.add_argument("--leduc-iterations", type=int, default=300_000)
    p.add_argument("--solve-iterations", type=int, default=200_000)
    p.add_argument("--nash-conv", type=float, default=1e-4)
    p.add_argument("--skip-leduc", action="store_true")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"kuhn": {}, "leduc": {}}
    kuhn_rules = Rules.of(load_game("kuhn.nolimit.2p.game"), min_bet=0.0, blinds=(0.5, 0.5),
                          stack=100.0)
    traces: dict[str, Any] = {}
    print("Kuhn (pot 1, antes 0.5): learned pot fractions (second-half average)")
    for name, (spec, who, range_, published) in KUHN.items():
        learner, info = learn("kuhn.nolimit.2p.game", spec, who, range_, args.kuhn_iterations,
                              kuhn_rules, 20_000)
        info["published"] = published
        report["kuhn"][name] = info
        traces[f"Kuhn {name}"] = (learner, [n["key"] for n in info["nodes"]])
        shown = ", ".join(f"{n['key']} (P{n['position'] + 1}) {n['size']:.4f}"
                          f"{' undetermined' if n['undetermined'] else ''}"
                          for n in info["nodes"])
        print(f"  {name:12} {shown}   [published: {published}; {info['iterations']:,} "
              f"iterations, {info['seconds']} s]")
    if not args.skip_leduc:
        rows = []
        base = parse_betting_abstraction(LEDUC_BASE)
        baseline = solve_value(LEDUC, base, args.solve_iterations, args.nash_conv, None)
        rows.append(("baseline", baseline, None))
        for label, who in (("P1 learned", "0"), ("P2 learned", "1")):
            learner, info = learn(LEDUC, LEDUC_BASE, [who], "0.8,1.5", args.leduc_iterations,
                                  None, 2_000)
            traces[f"Leduc {label}"] = (learner, [n["key"] for n in info["nodes"]])
            solved = solve_value(LEDUC, learner.learned_spec(), args.solve_iterations,
                                 args.nash_conv, None)
            rows.append((label, solved, info))
        print("\nNo-limit Leduc (ante 1, stacks 400, 2 raises/round, fcpa): P1's value "
              "(chips/hand)")
        print(f"  {'abstraction':12} {'ours':>9} {'published':>9} {'NashConv':>9} "
              f"{'solve it':>9} {'learn it':>9}")
        for label, solved, info in rows:
            print(f"  {label:12} {solved['value_p1']:>+9.4f} {PUBLISHED_LEDUC[label]:>+9.3f} "
                  f"{solved['nash_conv']:>9.2g} {solved['iterations']:>9,} "
                  f"{(info or {}).get('iterations', 0):>9,}")
            report["leduc"][label] = {"solved": solved, "learned": info,
                                      "published": PUBLISHED_LEDUC[label]}
            if info:
                sizes = [n["size"] for n in info["nodes"] if not n["undetermined"]]
                bins = np.histogram(sizes, bins=np.arange(0.8, 1.5001 + 1e-9, 0.1))[0]
                print("    learned sizes per 0.1 range: " + ", ".join(
                    f"[{0.8 + 0.1 * i:.1f},{0.9 + 0.1 * i:.1f}): {c}"
                    for i, c in enumerate(bins)) + f"; undetermined: "
                    f"{sum(n['undetermined'] for n in info['nodes'])}")
    (args.out / "learned_sizes.json").write_text(json.dumps(report, indent=1) + "\n")
    _plot(traces, args.out / "learned_sizes.png")
    print(f"\nwrote {args.out / 'learned_sizes.json'} and {args.out / 'learned_sizes.png'}")
    return 0


def _plot(traces: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(traces), figsize=(4 * len(traces), 3.6), squeeze=False)
    for ax, (title, (learner, keys)) in zip(axes[0], traces.items(), strict=True):
        its = [it for it, _ in learner.trace]
        for j, key in enumerate(keys[:12]):
            ax.plot(its, [s[j] for _, s in learner.trace], lw=0.8, label=key)
        ax.set_xscale("log")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("iteration")
        if len(keys) <= 6:
            ax.legend(fontsize=6)
    axes[0][0].set_ylabel("played size (pot fraction)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
