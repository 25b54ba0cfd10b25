"""An external ACPC agent for the match-runner tests that crashes during the match.

``python crash_client.py HOST PORT``: connects, sends the version line, reads the first
state, prints a message to stderr and exits with status 3.
"""

from __future__ import annotations

import socket
import sys


def main() -> int:
    sock = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=60)
    sock.sendall(b"VERSION:2.0.0\r\n")
    sock.recv(4096)
    print("crash_client: simulated crash", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
