"""A dealer without rules: the floor of a Python dealer's cost (``bench_dealer.py --part floor``).

``python scripts/null_dealer.py SCHEDULE [--io uvloop|blocking]``

Plays back a schedule of the writes ``acpc-dealer`` makes in one match (written by
``bench_dealer.py``: our engine's output for a match of random players, with the server's
holding of watchers' states) against real clients: it prints its ports line, accepts one
connection per seat, reads one version line per seat, then for each record writes its bytes
(to a seat, or to the log file, flushed as the dealer does) and, where the record says so,
waits for one reply line from that seat. The replies are not read for their action: the
clients' random choices differ from the recorded ones, but every state in the schedule is
one where the seat it goes to must act, so each client answers exactly where the dealer
would wait. No rules, no parsing, no formatting: what is left is the interpreter, the event
loop and the system calls of a dealer in Python.

``--io uvloop`` (default) reads with the same structure as ``dealer/server.py`` (an
``asyncio.Protocol`` per seat on uvloop, one write per record); ``--io blocking`` uses
blocking sockets (``recv_into`` a reused buffer, ``sendall``), the least a Python process can
do per message.

It ends by itself: if no hand has been logged for ``--stall`` seconds (default 30; also
while waiting for the clients to connect), a timer signal ends it with exit status 1 (nothing
is added per message).

Schedule file: records of ``kind`` (1 byte: 0 write to a seat and wait for its reply, 1 write
to a seat, 2 write to the log), ``seat`` (1 byte), ``length`` (4 bytes, little endian) and
the bytes.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import socket
import struct
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

REPLY, WRITE, LOG = 0, 1, 2
HEADER = struct.Struct("<BBI")

Record = tuple[int, int, bytes]


def write_schedule(path: Path, records: Iterator[Record]) -> int:
    """Write ``records`` to ``path``; returns how many."""
    count = 0
    with open(path, "wb") as out:
        for kind, seat, data in records:
            out.write(HEADER.pack(kind, seat, len(data)))
            out.write(data)
            count += 1
    return count


def read_schedule(path: Path) -> list[Record]:
    """The records of a schedule file.

    Raises:
        ValueError: on a truncated file or an unknown record kind.
    """
    raw = path.read_bytes()
    records: list[Record] = []
    pos = 0
    while pos < len(raw):
        if pos + HEADER.size > len(raw):
            raise ValueError(f"{path}: expected a record header at byte {pos}, got end of file")
        kind, seat, length = HEADER.unpack_from(raw, pos)
        pos += HEADER.size
        if kind not in (REPLY, WRITE, LOG) or pos + length > len(raw):
            raise ValueError(f"{path}: expected a record at byte {pos - HEADER.size}, got "
                             f"kind {kind!r} length {length!r}")
        records.append((kind, seat, raw[pos:pos + length]))
        pos += length
    return records


def _listen(seats: int) -> list[socket.socket]:
    listeners = []
    for _ in range(seats):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        sock.listen(1)
        listeners.append(sock)
    print(" ".join(str(s.getsockname()[1]) for s in listeners), flush=True)
    return listeners


def _accept(listeners: list[socket.socket]) -> list[socket.socket]:
    conns = []
    for listener in listeners:
        conn, _ = listener.accept()
        listener.close()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conns.append(conn)
    return conns


def play_blocking(records: list[Record], conns: list[socket.socket], log: IO[bytes]) -> None:
    """Blocking sockets: one ``sendall`` per record, ``recv_into`` until a line ends."""
    buffer = bytearray(1 << 16)
    view = memoryview(buffer)
    pending = [0] * len(conns)  # line ends read ahead, per seat
    for seat, conn in enumerate(conns):  # version lines
        _read_line(conn, view, pending, seat)
    for kind, seat, data in records:
        if kind == LOG:
            log.write(data)
            log.flush()
            continue
        conns[seat].sendall(data)
        if kind == REPLY:
            _read_line(conns[seat], view, pending, seat)


def _read_line(conn: socket.socket, view: memoryview, pending: list[int], seat: int) -> None:
    while not pending[seat]:
        n = conn.recv_into(view)
        if n == 0:
            raise ConnectionError(f"seat {seat + 1} closed its connection")
        pending[seat] += view[:n].tobytes().count(b"\n")
    pending[seat] -= 1


class _Seat(asyncio.Protocol):
    def __init__(self, player: _Player, seat: int) -> None:
        self.player = player
        self.seat = seat

    def data_received(self, data: bytes) -> None:
        self.player.lines(self.seat, data.count(b"\n"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.player.lost(self.seat)


class _Player:
    """Plays the records as replies come in, on the event loop."""

    def __init__(self, records: list[Record], log: IO[bytes], seats: int,
                 done: asyncio.Future[None]) -> None:
        self.records = records
        self.log = log
        self.next = 0
        self.pending = [0] * seats
        self.transports: list[asyncio.Transport] = []
        self.waiting = 0
        self.versions = seats
        self.done = done

    def lines(self, seat: int, count: int) -> None:
        if not count:
            return
        self.pending[seat] += count
        if self.versions:  # the version lines, in seat order
            while self.versions and self.pending[len(self.pending) - self.versions]:
                self.pending[len(self.pending) - self.versions] -= 1
                self.versions -= 1
            if not self.versions and len(self.transports) == len(self.pending):
                self.play()
            return
        if seat == self.waiting:
            self.pending[seat] -= 1
            self.play()

    def play(self) -> None:
        records, transports, log = self.records, self.transports, self.log
        i = self.next
        while i < len(records):
            kind, seat, data = records[i]
            i += 1
            if kind == LOG:
                log.write(data)
                log.flush()
                continue
            transports[seat].write(data)
            if kind == REPLY:
                self.waiting = seat
                self.next = i
                if self.pending[seat]:
                    self.pending[seat] -= 1
                    continue
                return
        self.next = i
        if not self.done.done():
            self.done.set_result(None)

    def lost(self, seat: int) -> None:
        if not self.done.done():
            self.done.set_exception(ConnectionError(f"seat {seat + 1} closed its connection"))


def _factory(proto: _Seat) -> Callable[[], _Seat]:
    return lambda: proto


async def play_uvloop(
    records: list[Record], conns: list[socket.socket], log: IO[bytes],
    check: Callable[[], None],
) -> None:
    """One ``asyncio.Protocol`` per seat, as ``dealer/server.py`` reads and writes."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def watch() -> None:
        try:
            check()
        except Stalled as err:
            if not done.done():
                done.set_exception(err)

    loop.add_signal_handler(signal.SIGALRM, watch)
    player = _Player(records, log, len(conns), done)
    for seat, conn in enumerate(conns):
        proto = _Seat(player, seat)
        transport, _ = await loop.connect_accepted_socket(_factory(proto), conn)
        player.transports.append(transport)
    if not player.versions:  # every version line came before the last seat was registered
        player.play()
    await done
    for transport in player.transports:
        transport.close()
    await asyncio.sleep(0)


class Stalled(Exception):
    """No hand was logged for the stall time."""


def _watch(log: IO[bytes], stall_s: float) -> Callable[[], None]:
    """Start a timer signal every ``stall_s``; returns the check it must run, which raises
    :class:`Stalled` when the log has not grown since the last one (installed here as the
    signal handler; the event loop installs its own that calls it)."""
    seen = [-1]

    def check() -> None:
        size = log.tell()
        if size == seen[0]:
            raise Stalled(f"no hand logged for {stall_s:g} s")
        seen[0] = size

    signal.signal(signal.SIGALRM, lambda signum, frame: check())
    signal.setitimer(signal.ITIMER_REAL, stall_s, stall_s)
    return check


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("schedule", type=Path)
    parser.add_argument("--io", choices=("uvloop", "blocking"), default="uvloop")
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--log", type=Path, default=Path("null_dealer.log"))
    parser.add_argument("--stall", type=float, default=30.0, metavar="SECONDS")
    args = parser.parse_args()
    records = read_schedule(args.schedule)
    with open(args.log, "wb") as log:
        check = _watch(log, args.stall)
        try:
            listeners = _listen(args.seats)
            conns = _accept(listeners)
            if args.io == "blocking":
                play_blocking(records, conns, log)
                for conn in conns:
                    conn.close()
            else:
                import uvloop

                uvloop.run(play_uvloop(records, conns, log, check))
        except Stalled as err:
            print(f"null_dealer: error: {err}", file=sys.stderr)
            return 1
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
