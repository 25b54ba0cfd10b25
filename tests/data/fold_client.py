"""A tiny external ACPC agent for the match-runner tests: fold whenever facing a bet.

``python fold_client.py GAME HOST PORT`` (the runner appends HOST PORT): connects, sends the
version line, and answers every state where it is to act with a fold, or a check when
nothing is bet. Blocking sockets, agent.acpc for the protocol; exits 0 at end of match.
"""

from __future__ import annotations

import socket
import sys

from agent.acpc.betting import CALL, FOLD
from agent.acpc.gamefiles import load_game
from agent.acpc.protocol import NEED_DATA, ClientConnection, ConnectionClosed, StateReceived


def main() -> int:
    game_name, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    conn = ClientConnection(load_game(game_name))
    sock = socket.create_connection((host, port), timeout=60)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.sendall(conn.initiate())
    for _ in range(10_000_000):
        event = conn.next_event()
        if event is NEED_DATA:
            conn.receive_data(sock.recv(1 << 16))
        elif isinstance(event, ConnectionClosed):
            return 0
        elif isinstance(event, StateReceived) and conn.is_to_act:
            action = FOLD if event.state.state.can_fold() else CALL
            sock.sendall(conn.send_action(action))
    return 1


if __name__ == "__main__":
    sys.exit(main())
