"""A minimal, fast ACPC client that always checks or calls: the dealer benchmark's opponent.

``python scripts/call_client.py GAME HOST PORT`` connects, sends the version line, and for
every MATCHSTATE where its position is to act answers ``<state>:c`` in one write (all the
answers owed for one read go out in one write). It does not parse cards: whose turn it is
follows from the betting alone, which it replays incrementally through
:class:`~agent.acpc.betting.BettingState` (only the actions new since the previous state)
and remembers per betting string. It is correct against any opponent, not only a caller.

Blocking sockets, no asyncio: this is a benchmark tool and should cost the machine as little
as possible. Exits 0 when the dealer closes the connection.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Sequence

from agent.acpc.betting import BettingState, parse_betting_prefix
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game

READ_CHUNK = 1 << 16
PREFIX = b"MATCHSTATE:"
CACHE_SIZE = 1 << 16


class CallTracker:
    """Follows the hands of one seat and says when (and what) to answer.

    Whose turn it is depends only on the game and the betting string (not on the cards), so
    the answer for a betting string is remembered (at most :data:`CACHE_SIZE` of them): in a
    benchmark the same bettings come back hand after hand.
    """

    def __init__(self, game: Game) -> None:
        self.game = game
        self.hand = b""
        self.betting = b""
        self.state = BettingState.initial(game)
        self.to_act: dict[bytes, int] = {}
        """betting -> position to act (-1: the hand is over)."""

    def _player(self, hand: bytes, betting: bytes) -> int:
        cached = self.to_act.get(betting)
        if cached is not None:
            self.hand, self.betting = b"", b""  # the tracked state is behind now
            return cached
        start = len(self.betting)
        if (
            hand != self.hand
            or not betting.startswith(self.betting)
            or betting[start : start + 1].isdigit()
        ):
            self.state = BettingState.initial(self.game)
            start = 0
        if len(betting) > start:
            self.state, _ = parse_betting_prefix(
                self.game, betting.decode("ascii"), start, self.state
            )
        self.hand, self.betting = hand, betting
        player = -1 if self.state.finished else self.state.player
        if len(self.to_act) >= CACHE_SIZE:
            self.to_act.clear()
        self.to_act[betting] = player
        return player

    def answer(self, line: bytes) -> bytes | None:
        """The response to one MATCHSTATE line (without its line end), or None."""
        _, pos, hand, betting, _ = line.split(b":", 4)
        if self._player(hand, betting) == int(pos):
            return line + b":c\r\n"
        return None


def play(game: Game, host: str, port: int) -> int:
    """Play one match; return the number of responses sent."""
    tracker = CallTracker(game)
    sent = 0
    with socket.create_connection((host, port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(b"VERSION:2.0.0\r\n")
        pending = b""
        while True:
            data = sock.recv(READ_CHUNK)
            if not data:
                return sent
            pending += data
            *lines, pending = pending.split(b"\n")
            answers = []
            for raw in lines:
                line = raw[:-1] if raw.endswith(b"\r") else raw
                if line.startswith(PREFIX):
                    got = tracker.answer(line)
                    if got is not None:
                        answers.append(got)
            if answers:
                sock.sendall(b"".join(answers))
                sent += len(answers)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: ``call_client.py GAME HOST PORT``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 3:
        print("usage: call_client.py GAME HOST PORT", file=sys.stderr)
        return 2
    try:
        play(load_game(args[0]), args[1], int(args[2]))
    except (OSError, ValueError) as exc:
        print(f"call_client: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
