"""The match runner's own built-in policies, and an ACPC client that plays them over TCP.

``builtin:fold`` folds whenever it faces a bet and checks otherwise; ``builtin:minraise``
raises the minimum whenever a raise is legal (the fixed raise in limit games) and calls
otherwise. Against each other their results are known exactly (e.g. heads-up no-limit
hold'em with reverse blinds: the folder loses its small blind of 50 when it acts first and
its big blind of 100 when the min-raiser acts first, 750 mbb/h), which the tests use to
check the statistics end to end.

``python -m dealer.match.localagent GAME HOST PORT --policy fold|minraise`` plays one
match against a dealer with :func:`agent.client.play`.

Imports only the stdlib and :mod:`agent.acpc` (``agent.client`` when run as a program).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind
from agent.acpc.matchstate import MatchState

PROG = "acpc-match-agent"


class FoldPolicy:
    """Fold when facing a bet, else check."""

    def act(self, ms: MatchState) -> Action:
        """Fold if folding is legal, else call (check)."""
        return FOLD if ms.state.can_fold() else CALL


class MinRaisePolicy:
    """Raise the minimum whenever allowed, else call."""

    def act(self, ms: MatchState) -> Action:
        """The smallest legal raise, or a call when no raise is legal."""
        state = ms.state
        bounds = state.raise_bounds()
        if bounds is None:
            return CALL
        if not state.game.is_nolimit:
            return LIMIT_RAISE
        return Action(ActionKind.RAISE, bounds[0])


POLICIES: dict[str, type[FoldPolicy] | type[MinRaisePolicy]] = {
    "fold": FoldPolicy,
    "minraise": MinRaisePolicy,
}


def local_policy(spec: str) -> FoldPolicy | MinRaisePolicy:
    """The policy of ``builtin:fold`` or ``builtin:minraise``.

    Raises:
        ValueError: for another name.
    """
    key = spec.removeprefix("builtin:")
    if key not in POLICIES:
        raise ValueError(f"expected builtin:fold or builtin:minraise, got {spec!r}")
    return POLICIES[key]()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: play one match; returns the exit status."""
    from agent.acpc.errors import AcpcError
    from agent.acpc.gamefiles import load_game
    from agent.client import play

    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    parser.add_argument("game")
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--policy", choices=sorted(POLICIES), required=True)
    args = parser.parse_args(argv)
    try:
        game = load_game(args.game)
        asyncio.run(play(args.host, args.port, game, POLICIES[args.policy]()))
    except (AcpcError, ValueError, OSError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
