"""``acpc-arena``: the maintenance commands.

``acpc-arena compile`` builds the compiled core (mypyc, :mod:`evaluation.corebuild`): the
rules, protocol, evaluator and match engine as C extensions placed beside their sources,
which Python's ordinary import then loads. ``--status`` says whether the build is in use,
stale (the sources changed since) or damaged, and why; ``--remove`` deletes it. It is
optional: everything runs the same without it.

``acpc-arena warmup`` compiles every numba kernel of the project ahead of time.
Runs the agent's and the offline tools' steps (:mod:`strategies.warmup`), then the arena's
own kernel: the numba walk of ``acpc-match --estimator sampled-agents``
(:mod:`evaluation.estimators.fastwalk`), on two deals of the default run's file against
``builtin:random``. That walk applies only when the flop strength table is cached
(``acpc-strategy cards --round flop``); without it the estimator walks in Python and the
step says it was skipped. Each step prints its time on stderr; ``--quiet`` prints only the
total. It lives here, not in :mod:`strategies`, because strategies never import the dealer.

Imports nothing heavy until it runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

PROG = "acpc-arena"
ESTIMATOR_STEP = "estimator kernel (acpc-match --estimator sampled-agents)"


def estimator_kernel() -> str | None:
    """Compile (or load) the estimator's numba walk; a note if it does not apply here."""
    from agent.acpc.gamefiles import load_game
    from evaluation.estimators.estimator import FileAgent, joint_group_values, make_model
    from evaluation.match.variants import parse_variant
    from strategies.recipes import RECIPES

    recipe = RECIPES["holdem.nolimit.2p"]
    if not recipe.bundled_path.exists():
        return f"skipped: {recipe.bundled_path.name} is not bundled"
    game = load_game(recipe.game)
    agent = make_model(parse_variant(f"a={recipe.bundled_path},mapping=rand-pshar"), game,
                       shared={})
    if not isinstance(agent, FileAgent) or agent.flop is None:
        return ("skipped: no cached flop table, so the estimator walks in Python; "
                "after acpc-strategy cards --round flop, run this again")
    opponent = make_model(parse_variant("r=builtin:random"), game)
    joint_group_values(game, [agent], opponent, master_seed=0, units=1, hands=2,
                       groups=[("a", "r")], sample=True, walk="auto")
    return None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="acpc-arena's maintenance "
                                     "commands.")
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("warmup", help="compile every numba kernel ahead of time")
    w.add_argument("--quiet", "-q", action="store_true", help="print only the total")
    c = sub.add_parser("compile", help="compile the core with mypyc (optional; about half the "
                       "CPU per hand in the engine)")
    todo = c.add_mutually_exclusive_group()
    todo.add_argument("--status", action="store_true",
                      help="only say whether the build is in use for these sources, and why "
                      "not")
    todo.add_argument("--remove", action="store_true",
                      help="delete the build: the pure Python modules run again")
    return parser


def compile_core(action: str) -> int:
    """``acpc-arena compile``: build (``action`` ``build``), or only ``status`` or ``remove``;
    then report the status. Exit status 0 when nothing needs fixing (the build is in use, or
    there is none and none was asked for), else 1."""
    from agent.acpc.errors import AcpcError
    from evaluation.corebuild import build, remove, status

    def say(text: str) -> None:
        print(f"{PROG} compile: {text}", file=sys.stderr, flush=True)

    try:
        if action == "remove":
            gone = remove()
            say(f"removed {len(gone)} files" if gone else "no build to remove")
        elif action == "build":
            build(say)
    except (AcpcError, OSError) as exc:
        print(f"{PROG} compile: error: {exc}", file=sys.stderr)
        return 1
    found = status()
    if found.state == "in use":
        print("compiled core: in use")
        return 0
    print(f"compiled core: {'not in use' if found.ok else found.state} ({found.reason})")
    return 0 if found.ok and action != "build" else 1


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``acpc-arena``; returns the exit status."""
    from agent.acpc.errors import whole_lines

    whole_lines()
    args = build_parser().parse_args(argv)
    if args.command == "compile":
        return compile_core("status" if args.status else "remove" if args.remove else "build")
    from strategies.warmup import steps, warm_up

    def say(text: str) -> None:
        print(f"{PROG} warmup: {text}", file=sys.stderr, flush=True)

    if not args.quiet:
        say("compiling (or loading from numba's cache) every kernel ...")
    todo = [*steps(), (ESTIMATOR_STEP, estimator_kernel)]
    total = warm_up(todo, say=None if args.quiet else say)
    say(f"done in {total:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
