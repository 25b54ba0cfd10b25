"""An ACPC client that plays a script of whole hands: to make reference logs of chosen hands.

``python scripts/script_client.py GAME HOST PORT SCRIPT`` connects to a dealer (the
project's or the reference's), sends the version line, and whenever its position is to act
answers the next action of the hand's scripted betting. ``SCRIPT`` has one betting string
per line (the hand's whole betting as the log shows it, e.g. ``cccc/crrrrccc/ccc/ccc``),
hand 0 first; every seat gets the same script, so whatever seat a position falls to, the
hand is played as written. A hand past the end of the script is checked/called down.

Whose turn it is follows from the betting alone (:class:`agent.acpc.betting.BettingState`).
Blocking sockets, stdlib and :mod:`agent.acpc` only; it connects where it is told (use
127.0.0.1) and exits 0 when the dealer closes the connection.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import Sequence
from pathlib import Path

from agent.acpc.betting import parse_betting
from agent.acpc.gamefiles import load_game


def next_action(script: Sequence[str], hand: int, betting: str) -> str:
    """The scripted action after ``betting`` in ``hand`` (``c`` past the script's end)."""
    if hand >= len(script):
        return "c"
    want = script[hand]
    if not want.startswith(betting):
        raise SystemExit(f"script_client: hand {hand}: the betting {betting!r} left the "
                         f"script {want!r}")
    rest = want[len(betting):].lstrip("/")
    return rest[0] if rest else "c"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: play the match; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 4:
        print("usage: script_client.py GAME HOST PORT SCRIPT", file=sys.stderr)
        return 2
    game = load_game(args[0])
    script = [line.strip() for line in Path(args[3]).read_text().splitlines()]
    with socket.create_connection((args[1], int(args[2]))) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(b"VERSION:2.0.0\r\n")
        buf = b""
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                return 0
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for raw in lines:
                line = raw.rstrip(b"\r").decode("ascii")
                if not line.startswith("MATCHSTATE:"):
                    continue
                _, position, hand, betting, _cards = line.split(":", 4)
                state = parse_betting(game, betting)
                if not state.finished and state.player == int(position):
                    action = next_action(script, int(hand), betting)
                    sock.sendall(f"{line}:{action}\r\n".encode("ascii"))


if __name__ == "__main__":
    sys.exit(main())
