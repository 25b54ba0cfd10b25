"""``acpc-agent GAME HOST PORT [--strategy ...]``: play one match against an ACPC dealer.

The reference example player's positional arguments come first. Built-in strategies:
``builtin:random`` (legal random actions, like the reference example player) and
``builtin:call``. A summary line (hands, chips won, decision times) goes to stderr when the
dealer closes the connection.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import traceback
from collections.abc import Sequence

from agent.acpc.errors import AcpcError
from agent.builtin import CallPolicy, Policy, RandomPolicy
from agent.client import play
from agent.games import load_game

PROG = "acpc-agent"
BUILTINS = ("builtin:random", "builtin:call")


def make_policy(spec: str, seed: int | None) -> Policy:
    """The policy named by ``--strategy``.

    Raises:
        ValueError: for an unknown strategy.
    """
    if spec == "builtin:random":
        return RandomPolicy(seed)
    if spec == "builtin:call":
        return CallPolicy()
    raise ValueError(f"expected --strategy to be one of {', '.join(BUILTINS)}, got {spec!r}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description="Play a match against an ACPC dealer.")
    p.add_argument("game", help="game definition file (or the name of a bundled game)")
    p.add_argument("host", help="dealer host, e.g. 127.0.0.1")
    p.add_argument("port", type=int, help="this seat's port, as printed by the dealer")
    p.add_argument("--strategy", default="builtin:random",
                   help=f"one of {', '.join(BUILTINS)} (default builtin:random)")
    p.add_argument("--seed", type=int, default=None, help="seed for the agent's randomness")
    p.add_argument("--quiet", action="store_true", help="no summary line at the end")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``acpc-agent``; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        game = load_game(args.game)
        policy = make_policy(args.strategy, args.seed)
        summary = asyncio.run(play(args.host, args.port, game, policy))
    except (AcpcError, ValueError, OSError) as exc:
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    if not args.quiet:
        print(f"{PROG}: {summary.describe()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
