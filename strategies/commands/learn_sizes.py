"""``acpc-strategy learn-sizes``: learn bet sizes (:mod:`strategies.sizes.learned`) and write the
learned betting abstraction.

Prints the learned size of every node over time (and plots it with ``--plot``), then a table
per node: position, ``[L, H]``, the learned size (the average of the played size over the
second half of the run, :meth:`strategies.sizes.learned.SizeLearner.tail_sizes`), the final played
size and whether the size is undetermined (its bet is never made or always folded to). The
``--out`` file is JSON: ``{"betting": <the learned spec>, "learned": [...], "run": {...}}``;
every command that takes a betting abstraction reads it as one (``--abstraction FILE.json``).
Ctrl-C stops between chunks and writes the checkpoint (``--checkpoint``, default
``OUT-stem.ckpt.npz``); ``--resume`` continues it. A finished run keeps the checkpoint only
when ``--checkpoint`` named it.

Imported only when the command runs (numpy, numba).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from agent import console
from agent.abstraction.actions import parse_betting_abstraction
from agent.acpc.errors import UsageError
from agent.acpc.gamefiles import load_game
from agent.fileio import atomic_writer
from strategies.commands.defaults import PROG
from strategies.sizes.learned import (
    Rules,
    SizeLearner,
    build_sizing_game,
    parse_learn,
)
from strategies.solvers.recipe import run_solver, say


def _check_plot(path: str | None) -> None:
    if path is None:
        return
    if not path.lower().endswith(".png"):
        raise UsageError(f"expected --plot FILE.png, got {path!r}")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'acpc-arena[plot]'") from None


def learn_sizes(args: argparse.Namespace) -> int:
    """The ``learn-sizes`` command; its exit status (130 if interrupted)."""
    if args.iterations is not None and args.iterations <= 0:
        raise UsageError(f"expected --iterations > 0, got {args.iterations}")
    if args.smoothing <= 0:
        raise UsageError(f"expected --smoothing N > 0, got {args.smoothing}")
    _check_plot(args.plot)
    learn = parse_learn(args.learn, args.range, skip_unstable=args.skip_unstable)
    game = load_game(args.game)
    abstraction = parse_betting_abstraction(args.abstraction, "--abstraction")
    rules = Rules.of(game, min_bet=args.min_bet)
    sizing_game = build_sizing_game(game, abstraction, learn=learn, rules=rules)
    ckpt = Path(args.checkpoint or f"{Path(args.out).stem}.ckpt.npz")
    if args.resume:
        if not ckpt.exists():
            raise UsageError(f"expected a checkpoint to resume from at {str(ckpt)!r}, "
                             f"found none")
        learner = SizeLearner.load_checkpoint(ckpt, sizing_game)
    else:
        learner = SizeLearner(sizing_game, plus=args.solver == "cfr+", smoothing=args.smoothing)
    from strategies.sizes import learned as sizing

    with console.compile_notice(PROG, [sizing.learn_run]):
        learner.warm_up()
    target = None if args.minutes is not None else (args.iterations or 1_000_000)
    deadline = None if args.minutes is None else time.monotonic() + 60.0 * args.minutes
    names = [n.key or "root" for n in sizing_game.learned]

    def note(solver: Any) -> str:
        shown = ", ".join(f"{k}={s:.4f}" for k, s in zip(names[:6], solver.sizes, strict=False))
        return shown + (" ..." if len(names) > 6 else "")

    skipped = sizing_game.learn.skipped if sizing_game.learn is not None else ()
    if skipped:
        say(f"--skip-unstable: {len(skipped)} node(s) keep their base sizes (L or H would "
            f"change the tree's shape): {', '.join(k or 'root' for k in skipped)}")
    say(f"{len(names)} learned size(s) in a transformed game of {len(sizing_game.nodes):,} "
        f"nodes ({sizing_game.num_deals} deals); card players {args.solver}, smoothing "
        f"N = {args.smoothing:,}")
    stopped = run_solver(
        learner, target, deadline, progress=not args.no_progress,  # type: ignore[arg-type]
        banner=f"{PROG}: learning sizes from iteration {learner.iteration} (Ctrl-C writes a "
        f"checkpoint)", note=note, checkpoint=ckpt, checkpoint_every=600.0,
    )
    if stopped or args.checkpoint:
        learner.save_checkpoint(ckpt)
    else:
        ckpt.unlink(missing_ok=True)  # a finished run leaves only what it says it writes
    if stopped:
        say(f"interrupted at iteration {learner.iteration}: checkpoint written to {ckpt}; "
            f"continue with --resume")
        return 130
    _report(learner, names)
    spec = learner.learned_spec(args.name)
    undetermined = learner.undetermined()
    learned = [
        {"key": n.key, "position": n.position, "low": n.low, "high": n.high,
         "size": s, "final": float(f), "undetermined": bool(u)}
        for n, s, f, u in zip(sizing_game.learned, learner.tail_sizes(), learner.sizes,
                              undetermined, strict=True)
    ]
    document = {
        "betting": spec.to_json(),
        "learned": learned,
        "run": {"game": args.game, "base": abstraction.to_json(), "learn": learn.describe(),
                "min_bet": rules.min_bet, "solver": args.solver, "smoothing": args.smoothing,
                "iterations": learner.iteration, "seconds": round(learner.seconds, 3)},
    }
    out = Path(args.out)
    with atomic_writer(out) as f:
        f.write((json.dumps(document, indent=1) + "\n").encode())
    print(f"{PROG}: wrote {out}: the learned abstraction {spec.name!r} "
          f"(solve it: {PROG} solve --game {args.game} --abstraction {out} --out FILE.strat)")
    if args.plot:
        _plot(learner, names, Path(args.plot))
        print(f"{PROG}: plot written to {args.plot}")
    return 0


def _report(learner: SizeLearner, names: list[str]) -> None:
    game = learner.game
    trace = learner.trace
    if trace:
        picks = sorted({trace[int(i * (len(trace) - 1) / 9)][0] for i in range(10)})
        by_it = dict(trace)
        shown = names[:8]
        print("learned sizes over time (pot fractions):")
        print(f"{'iteration':>12}  " + "  ".join(f"{k:>10}" for k in shown))
        for it in picks:
            print(f"{it:>12,}  " + "  ".join(f"{s:>10.4f}" for s in by_it[it][:len(shown)]))
        if len(names) > len(shown):
            print(f"({len(names) - len(shown)} more nodes in the --out file)")
    undetermined = learner.undetermined()
    print(f"{'node':<14} {'pos':>3} {'L':>6} {'H':>6} {'learned':>9} {'final':>9}  note")
    for n, name, s, f, u in zip(game.learned, names, learner.tail_sizes(), learner.sizes,
                                undetermined, strict=True):
        print(f"{name:<14} {n.position:>3} {n.low:>6.3g} {n.high:>6.3g} {s:>9.4f} {f:>9.4f}  "
              f"{'undetermined (never bet or always folded to)' if u else ''}")
    print(f"({learner.iteration:,} iterations in {learner.seconds:.1f} s)")


def _plot(learner: SizeLearner, names: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    its = [it for it, _ in learner.trace]
    for j, name in enumerate(names):
        ax.plot(its, [s[j] for _, s in learner.trace], label=name, lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel("played size (pot fraction)")
    ax.set_title(f"learned bet sizes: {learner.game.betting.name} in "
                 f"{learner.game.game.num_rounds}-round game")
    if len(names) <= 12:
        ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
