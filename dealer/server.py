"""The asyncio dealer: sockets in, bytes to the pure :class:`~dealer.engine.Match`, bytes out.

One listening socket per seat (bound before the ports line is printed), one accepted
connection per seat with TCP_NODELAY, every engine output written at once (one ``write`` per
message), the log and transaction files flushed after every line, a timer re-armed at the
engine's deadline after every step, and SIGINT/SIGTERM ending the match through the engine so
the ending is the same clean one as any other error. uvloop is used when it is installed.

Imports only the stdlib, :mod:`agent.acpc` and :mod:`dealer` (never numpy, numba, msgpack).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TextIO, cast

from dealer.engine import Match, MatchConfig, MatchError, Output, Phase


def clock_us() -> int:
    """Wall-clock microseconds since the epoch (``gettimeofday``)."""
    return time.time_ns() // 1000


@dataclass(frozen=True, slots=True)
class ServerOptions:
    """How the server runs a match (besides the match itself)."""

    host: str = "127.0.0.1"
    ports: tuple[int, ...] = ()
    log_dir: Path = Path(".")
    write_log: bool = True
    append: bool = False
    start_timeout_ms: int = -1


class _SeatProtocol(asyncio.Protocol):
    def __init__(self, runner: _Runner, seat: int) -> None:
        self.runner = runner
        self.seat = seat
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        self.runner.feed(self.seat, data)

    def eof_received(self) -> bool | None:
        self.runner.feed(self.seat, b"")
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.runner.feed(self.seat, b"")


class _Runner:
    """Owns the match, the transports and the output files for one run."""

    def __init__(
        self,
        match: Match,
        stdout: TextIO,
        stderr: TextIO,
        log: IO[str] | None,
        tlog: IO[str] | None,
    ) -> None:
        self.match = match
        self.stdout = stdout
        self.stderr = stderr
        self.log = log
        self.tlog = tlog
        self.protocols: list[_SeatProtocol] = []
        self.loop = asyncio.get_running_loop()
        self.done: asyncio.Future[int] = self.loop.create_future()
        self.timer: asyncio.TimerHandle | None = None
        self.closed: set[int] = set()

    def feed(self, seat: int, data: bytes) -> None:
        if not data:
            if seat in self.closed:
                return
            self.closed.add(seat)
        self.match.receive(seat, data)
        self.flush()

    def on_timer(self) -> None:
        self.timer = None
        self.match.tick()
        self.flush()

    def abort(self, reason: str) -> None:
        self.match.abort(reason)
        self.flush()

    def flush(self) -> None:
        """Write what the engine produced, re-arm the timer, finish if the match is over."""
        while True:
            out = self.match.drain()
            if out.is_empty():
                break
            self._write(out)
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.match.phase is Phase.DONE:
            if not self.done.done():
                self.done.set_result(self.match.exit_status or 0)
            return
        deadline = self.match.deadline_us
        if deadline is not None:
            delay = max(0.0, (deadline - clock_us()) / 1e6)
            self.timer = self.loop.call_later(delay, self.on_timer)

    def _write(self, out: Output) -> None:
        for seat, data in out.to_seat:
            transport = self.protocols[seat].transport
            if transport is None or transport.is_closing():
                if seat not in self.closed:
                    self.match.fail_write(seat)
                continue
            transport.write(data)
        if out.log and self.log is not None:
            for line in out.log:
                self.log.write(line)
                self.log.flush()
        if out.tlog and self.tlog is not None:
            for line in out.tlog:
                self.tlog.write(line)
                self.tlog.flush()
        if out.stderr:
            self.stderr.write("".join(out.stderr))
            self.stderr.flush()
        if out.stdout:
            self.stdout.write("".join(out.stdout))
            self.stdout.flush()


def _factory(proto: _SeatProtocol) -> Callable[[], _SeatProtocol]:
    return lambda: proto


def _listen(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(8)
    sock.setblocking(False)
    return sock


async def _accept_all(
    listeners: list[socket.socket], timeout_ms: int, stderr: TextIO
) -> list[socket.socket] | None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    conns: list[socket.socket] = []
    for seat, listener in enumerate(listeners):
        try:
            if timeout_ms >= 0:
                left = max(0.0, timeout_ms / 1000 - (loop.time() - start))
                conn, _ = await asyncio.wait_for(loop.sock_accept(listener), left)
            else:
                conn, _ = await loop.sock_accept(listener)
        except TimeoutError:
            stderr.write(f"ERROR: timed out waiting for seat {seat + 1} to connect\n")
            stderr.flush()
            for c in conns:
                c.close()
            return None
        listener.close()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conns.append(conn)
    return conns


def _open_output(path: Path, append: bool, what: str) -> IO[str]:
    try:
        return open(path, "a" if append else "w", encoding="ascii", newline="")
    except OSError as exc:
        raise MatchError(f"ERROR: could not open {what} {path}: {exc.strerror}") from None


async def run_match(
    config: MatchConfig,
    options: ServerOptions,
    stdout: TextIO = sys.stdout,
    stderr: TextIO = sys.stderr,
    on_ports: Callable[[list[int]], None] | None = None,
) -> int:
    """Run one match to the end; returns the exit status (0 success, 1 any error)."""
    n = config.game.num_players
    options.log_dir.mkdir(parents=True, exist_ok=True)
    base = options.log_dir / config.match_name
    log = tlog = None
    try:
        if options.write_log:
            log = _open_output(base.with_name(base.name + ".log"), options.append, "log file")
        tlog_path = base.with_name(base.name + ".tlog")
        replay: list[str] = []
        if config.transactions:
            if options.append and tlog_path.exists():
                replay = tlog_path.read_text(encoding="ascii", errors="replace").splitlines(True)
            tlog = _open_output(tlog_path, options.append, "transaction file")
    except MatchError as err:
        stderr.write(err.line + "\n")
        return 1
    try:
        ports = list(options.ports) + [0] * (n - len(options.ports))
        try:
            listeners = [_listen(options.host, ports[s]) for s in range(n)]
        except OSError as exc:
            stderr.write(f"ERROR: could not create listen socket: {exc.strerror or exc}\n")
            return 1
        bound = [sock.getsockname()[1] for sock in listeners]
        stdout.write(" ".join(str(p) for p in bound) + "\n")
        stdout.flush()
        if on_ports is not None:
            on_ports(bound)
        match = Match(config, clock_us)
        runner = _Runner(match, stdout, stderr, log, tlog)
        match.begin()
        if replay:
            try:
                match.replay_transactions(iter(replay))
            except MatchError as err:
                match.abort(err.line.rstrip("\n"))
        runner.flush()
        if match.phase is Phase.DONE:
            return match.exit_status or 1
        loop = asyncio.get_running_loop()
        installed: list[signal.Signals] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(
                    sig, runner.abort, f"ERROR: interrupted by {sig.name}"
                )
                installed.append(sig)
        try:
            accept = asyncio.ensure_future(_accept_all(listeners, options.start_timeout_ms, stderr))
            waiting: set[asyncio.Future[Any]] = {accept, runner.done}
            finished_early, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if runner.done in finished_early:
                accept.cancel()
                for sock in listeners:
                    sock.close()
                return runner.done.result()
            conns = accept.result()
            if conns is None:
                return 1
            for seat, conn in enumerate(conns):
                proto = _SeatProtocol(runner, seat)
                runner.protocols.append(proto)
                await loop.connect_accepted_socket(_factory(proto), conn)
            match.connected()
            runner.flush()
            status = await runner.done
            for proto in runner.protocols:
                if proto.transport is not None:
                    proto.transport.close()
            await asyncio.sleep(0)
            return status
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)
    finally:
        for f in (log, tlog):
            if f is not None:
                f.close()


def run(config: MatchConfig, options: ServerOptions) -> int:
    """Run a match on uvloop when installed, else asyncio; return the exit status."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(run_match(config, options))
    return int(uvloop.run(run_match(config, options)))
