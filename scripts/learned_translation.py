"""Do learned bet sizes survive translation? (issue 14, item 6)

In the translation lab's no-limit Leduc (``leduc.nolimit.2p.game``: ante 1, stacks 12, the
best responder may make every whole-chip bet), learn the bet sizes of both players (one size
per betting sequence of each player, ``L`` and ``H`` bracketing the pot; nodes where a size
would reach the stack keep the pot bet: ``--skip-unstable``), solve the learned abstraction
in the ACPC game (sizes rounded to whole chips like every size), and measure the full-game
exploitability per seat and on average, for the seven mappings and purification none/full,
beside the bundled ``fcpa`` and ``fchpa`` files (solved the same way: CFR+, 50,000
iterations). Writes ``learned_translation.txt/csv/json`` and ``learned_translation.png``.

    python scripts/learned_translation.py --out DIR [--range 0.75,1.33]
        [--learn-iterations 300000] [--solve-iterations 50000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from agent.abstraction.buckets import LosslessCards
from agent.acpc.gamefiles import load_game
from agent.strategy.fileformat import dump_strategy, load_strategy
from strategies.games.abstract import build_abstract_game
from strategies.measure.best_response import exploitability
from strategies.measure.translation import lab
from strategies.sizes.learned import SizeLearner, build_sizing_game, parse_learn
from strategies.solvers.cfr import Solver

GAME = "leduc.nolimit.2p.game"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path("learned-translation"))
    p.add_argument("--range", default="0.75,1.33", help="L,H for every learned node")
    p.add_argument("--learn-iterations", type=int, default=300_000)
    p.add_argument("--solve-iterations", type=int, default=50_000)
    p.add_argument("--mappings", default="all")
    p.add_argument("--purify", default="none,full")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()

    def note(message: str) -> None:
        print(f"[{time.perf_counter() - start:6.0f} s] {message}", file=sys.stderr, flush=True)

    game = load_game(GAME)
    base = lab.load_leduc("fcpa").betting
    learn = parse_learn(["both"], args.range, skip_unstable=True)
    transformed = build_sizing_game(game, base, learn=learn)
    assert transformed.learn is not None
    note(f"learning {len(transformed.learned)} sizes ({len(transformed.learn.skipped)} nodes "
         f"keep the pot bet) in a transformed tree of {len(transformed.nodes)} nodes")
    learner = SizeLearner(transformed)
    while learner.iteration < args.learn_iterations:
        learner.iterate(min(5_000, args.learn_iterations - learner.iteration))
        if learner.iteration % 50_000 == 0:
            note(f"learn {learner.iteration:,}/{args.learn_iterations:,}")
    spec = learner.learned_spec("fcpa-learned")
    undetermined = learner.undetermined()
    sizes = [s for s, u in zip(learner.tail_sizes(), undetermined, strict=True) if not u]
    note(f"learned sizes (determined {len(sizes)}/{len(undetermined)}): min {min(sizes):.3f} "
         f"median {float(np.median(sizes)):.3f} max {max(sizes):.3f}")
    abstract = build_abstract_game(game, spec, LosslessCards(game))
    solver = Solver(abstract, "cfr+")
    solver.iterate(args.solve_iterations)
    table = solver.average_strategy()
    result = exploitability(abstract, table)
    path = dump_strategy(args.out / "leduc.nolimit.2p.learned.strat", game, spec,
                         abstract.cards.spec, table, tree=abstract.tree,
                         meta={"solver": "cfr+", "iterations": solver.iteration,
                               "learn_iterations": learner.iteration,
                               "exploitability": result.exploitability})
    note(f"solved the learned abstraction: {len(abstract.tree.decision_nodes)} decision nodes, "
         f"abstract exploitability {result.exploitability:.2e}; wrote {path}")
    mappings = lab.parse_mappings(args.mappings)
    purifications = lab.parse_purifications(args.purify)
    rows: list[lab.Measurement] = []
    for name in ("fcpa", "fchpa", str(path)):
        strategy = lab.load_leduc(name) if name in ("fcpa", "fchpa") else load_strategy(name)
        value = lab.strategy_real_value(strategy.game)
        rows += lab.measure_strategy(strategy, mappings, purifications, value=value,
                                     progress=note)
    text = lab.format_seat_table(rows)
    print(text, flush=True)
    (args.out / "learned_translation.txt").write_text(text, encoding="utf-8")
    lab.write_records([r.to_json() for r in rows], args.out, "learned_translation")
    _plot(rows, args.out / "learned_translation.png")
    note(f"written to {args.out}")
    return 0


def _plot(rows: list[lab.Measurement], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    purifications = sorted({r.purification for r in rows})
    abstractions = list(dict.fromkeys(r.abstraction for r in rows))
    mappings = list(dict.fromkeys(r.mapping for r in rows))
    fig, axes = plt.subplots(1, len(purifications), figsize=(6 * len(purifications), 4),
                             squeeze=False)
    width = 0.8 / len(abstractions)
    for ax, pur in zip(axes[0], purifications, strict=True):
        for i, name in enumerate(abstractions):
            values = [next((r.average for r in rows if r.abstraction == name
                            and r.mapping == m and r.purification == pur), np.nan)
                      for m in mappings]
            ax.bar(np.arange(len(mappings)) + i * width, values, width, label=name)
        ax.set_xticks(np.arange(len(mappings)) + width * (len(abstractions) - 1) / 2)
        ax.set_xticklabels(mappings, rotation=30, fontsize=8)
        ax.set_title(f"purification {pur}")
        ax.set_ylabel("full-game exploitability (chips/hand, seat average)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
