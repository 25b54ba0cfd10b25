"""The asyncio dealer: sockets in, bytes to the pure :class:`~dealer.engine.Match`, bytes out.

One listening socket per seat (bound before the ports line is printed), one accepted
connection per seat with TCP_NODELAY. After every engine step the server writes, in this
order: the transaction lines and the log lines produced (flushed, so a match killed at any
moment can be resumed from what the seats were shown), then what goes to the seats, one
``write`` per seat (states produced in one step for one seat are joined; the seat that must
act is written first), then stderr (as bytes: client lines are echoed byte for byte) and
stdout. Then, while the seat that must act is thinking, it has the engine do one step of its
deferred work (:meth:`~dealer.engine.Match.idle`: a finished hand's values and log line, or
the next hand's deal) and writes the log line that produced at once. So a hand's log line
follows the first state of the next hand by one step; a signal, an error or the end of the
match settles every finished hand first.

States for a seat that is not to act (it only watches) are held back for at most
``observer_delay_ms`` (default :data:`OBSERVER_DELAY_MS`) and go out with the next write to
that seat: when it must act, when the match ends, or when the delay runs out, whichever comes
first. Every seat gets the same bytes in the same order as from the reference, in fewer writes:
heads-up, one write per action instead of two, and a watching client is not woken for every
action (the reference writes every state at once; ``--observer-delay 0`` does too).

A seat that floods the dealer while it is not to act has its reading paused once its unread
bytes pass a cap (the reference leaves them in the kernel's socket buffer). One timer follows
the engine's deadline lazily: it is re-armed only when the deadline moves earlier, and a timer
that fires early just re-arms. SIGINT/SIGTERM end the match through the engine, so the ending is the
same clean one as any other error. At the end every transport is closed and given a bounded
time to deliver what is buffered. uvloop is used when it is installed.

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
    observer_delay_ms: float = 5.0
    """How long states for a seat that is not to act may wait to be joined with later ones."""


READ_PAUSE_BYTES = 1 << 22
"""Unread bytes of one seat above which reading from it is paused."""
READ_RESUME_BYTES = 1 << 16
"""Unread bytes below which reading resumes."""
OBSERVER_DELAY_MS = 5.0
"""The default of :attr:`ServerOptions.observer_delay_ms`."""
CLOSE_GRACE_S = 10.0
"""How long the closing transports may take to deliver their last bytes."""


class _SeatProtocol(asyncio.Protocol):
    def __init__(self, runner: _Runner, seat: int) -> None:
        self.runner = runner
        self.seat = seat
        self.transport: asyncio.Transport | None = None
        self.closed: asyncio.Future[None] = runner.loop.create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass

    def data_received(self, data: bytes) -> None:
        self.runner.feed(self.seat, data)

    def eof_received(self) -> bool | None:
        # Keep the transport open for writing: like the reference, end of file matters
        # only when this seat must act.
        self.runner.feed(self.seat, b"")
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)
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
        observer_delay_ms: float = OBSERVER_DELAY_MS,
    ) -> None:
        self.match = match
        self.observer_delay_s = max(0.0, observer_delay_ms / 1000)
        self.held: dict[int, list[bytes]] = {}
        """Seat -> states held back for it (see the module docstring), in order."""
        self.held_timer: asyncio.TimerHandle | None = None
        self.stdout = stdout
        self.stderr = stderr
        self.stderr_bytes: IO[bytes] | None = getattr(stderr, "buffer", None)
        self.log = log
        self.tlog = tlog
        self.protocols: list[_SeatProtocol] = []
        self.loop = asyncio.get_running_loop()
        self.done: asyncio.Future[int] = self.loop.create_future()
        self.timer: asyncio.TimerHandle | None = None
        self.timer_deadline_us = 0
        self.transports: list[asyncio.Transport | None] = []
        self.closed: set[int] = set()
        self.paused: set[int] = set()

    def connected(self) -> None:
        """Every seat has its transport: remember them in seat order."""
        self.transports = [proto.transport for proto in self.protocols]

    def feed(self, seat: int, data: bytes) -> None:
        if not data:
            if seat in self.closed:
                return
            self.closed.add(seat)
        match = self.match
        match.receive(seat, data)
        if data and match.conns[seat].buffered_bytes > READ_PAUSE_BYTES:
            transport = self.protocols[seat].transport
            if transport is not None and not transport.is_closing():
                transport.pause_reading()
                self.paused.add(seat)
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
        match = self.match
        for _ in range(3):  # a failed write adds the ERROR output once; then nothing more
            out = match.drain_sendable()
            if out.is_empty() or not self._write(out):
                break
        if match.phase is Phase.PLAYING and match.idle():
            out = match.drain_sendable()  # a settled hand's log line
            if not out.is_empty():
                self._write(out)
        if self.paused:
            self._resume_reading()
        if match.phase is Phase.DONE:
            if self.held:
                self.write_held()
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None
            if not self.done.done():
                self.done.set_result(match.exit_status or 0)
            return
        deadline = match.deadline_us
        if deadline is None:
            return
        if self.timer is not None:
            if self.timer_deadline_us <= deadline:
                return  # fires early at worst: on_timer re-arms
            self.timer.cancel()
        self.timer_deadline_us = deadline
        delay = max(0.0, (deadline - clock_us()) / 1e6)
        self.timer = self.loop.call_later(delay, self.on_timer)

    def _resume_reading(self) -> None:
        for seat in list(self.paused):
            if self.match.conns[seat].buffered_bytes < READ_RESUME_BYTES:
                self.paused.discard(seat)
                transport = self.protocols[seat].transport
                if transport is not None and not transport.is_closing():
                    transport.resume_reading()

    def _write(self, out: Output) -> bool:
        """Write one drain's output; True if a failed write produced more output."""
        failed = False
        if out.tlog and self.tlog is not None:
            self.tlog.write("".join(out.tlog))
            self.tlog.flush()
        if out.log and self.log is not None:
            self.log.write("".join(out.log))
            self.log.flush()
        to_seat = out.to_seat
        if to_seat:
            failed = self._write_states(to_seat)
        if out.stderr:
            text = "".join(out.stderr)
            if self.stderr_bytes is not None:
                self.stderr.flush()
                self.stderr_bytes.write(text.encode("latin-1", "replace"))
                self.stderr_bytes.flush()
            else:
                self.stderr.write(text)
                self.stderr.flush()
        if out.stdout:
            self.stdout.write("".join(out.stdout))
            self.stdout.flush()
        return failed


    def _write_states(self, to_seat: list[tuple[int, bytes]]) -> bool:
        """Write (or hold back) one drain's states; True if a failed write produced output."""
        match = self.match
        transports = self.transports
        held = self.held
        acting = match.acting_seat
        hold = self.observer_delay_s > 0 and match.phase is Phase.PLAYING
        if len(to_seat) > 1 or held:
            # One write per seat, the seat that must answer first (its held states before the
            # new ones); the others' states are held back while the match goes on.
            parts: dict[int, list[bytes]] = {acting: held.pop(acting, [])}
            for seat, data in to_seat:
                parts.setdefault(seat, []).append(data)
            if not hold:
                for seat, states in held.items():
                    parts.setdefault(seat, [])[:0] = states
                held.clear()
            to_seat = [(seat, b"".join(p)) for seat, p in parts.items() if p]
        failed = False
        for seat, data in to_seat:
            transport = transports[seat]
            if transport is None or transport.is_closing():
                if seat not in self.closed:
                    match.fail_write(seat)
                    failed = True
                held.pop(seat, None)
                continue
            if hold and seat != acting:
                held.setdefault(seat, []).append(data)
                if self.held_timer is None:
                    self.held_timer = self.loop.call_later(
                        self.observer_delay_s, self._held_timeout)
                continue
            transport.write(data)
        return failed

    def _held_timeout(self) -> None:
        self.held_timer = None
        self.write_held()
        self.flush()

    def write_held(self) -> None:
        """Write every state held back for a watching seat now."""
        if self.held_timer is not None:
            self.held_timer.cancel()
            self.held_timer = None
        held, self.held = self.held, {}
        for seat, states in held.items():
            transport = self.transports[seat]
            if transport is None or transport.is_closing():
                if seat not in self.closed:
                    self.match.fail_write(seat)
                continue
            transport.write(b"".join(states))


def _factory(proto: _SeatProtocol) -> Callable[[], _SeatProtocol]:
    return lambda: proto


def _listen(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(8)
    sock.setblocking(False)
    return sock


WAIT_NOTICE_S = 60.0
"""Without ``--start_timeout`` the dealer waits for every seat for ever, as the reference
does; it says so on stderr every this many seconds, naming the seats and ports left."""


async def _accept_all(
    listeners: list[socket.socket], timeout_ms: int, stderr: TextIO,
    notice_s: float = WAIT_NOTICE_S,
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
                accept = asyncio.ensure_future(loop.sock_accept(listener))
                while True:
                    done, _ = await asyncio.wait({accept}, timeout=notice_s)
                    if done:
                        conn, _ = accept.result()
                        break
                    ports = " ".join(str(x.getsockname()[1]) for x in listeners[seat:])
                    stderr.write(
                        f"WAITING: seat {seat + 1} of {len(listeners)} has not connected after "
                        f"{loop.time() - start:.0f} s (ports left: {ports}); without "
                        f"--start_timeout the dealer waits until every seat connects\n")
                    stderr.flush()
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


async def _close_all(protocols: list[_SeatProtocol]) -> None:
    """Close every transport; give them :data:`CLOSE_GRACE_S` to deliver buffered bytes."""
    pending = []
    for proto in protocols:
        if proto.transport is not None:
            proto.transport.close()
            pending.append(proto.closed)
    if pending:
        await asyncio.wait(pending, timeout=CLOSE_GRACE_S)
    for proto in protocols:
        if proto.transport is not None and not proto.closed.done():
            proto.transport.abort()


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
        listeners: list[socket.socket] = []
        for seat in range(n):
            try:
                listeners.append(_listen(options.host, ports[seat]))
            except OSError as exc:
                for sock in listeners:
                    sock.close()
                stderr.write(f"ERROR: could not create listen socket on "
                             f"{options.host}:{ports[seat]}: {exc.strerror or exc}\n")
                return 1
        bound = [sock.getsockname()[1] for sock in listeners]
        stdout.write(" ".join(str(p) for p in bound) + "\n")
        stdout.flush()
        if on_ports is not None:
            on_ports(bound)
        match = Match(config, clock_us)
        runner = _Runner(match, stdout, stderr, log, tlog, options.observer_delay_ms)
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
            runner.connected()
            match.connected()
            runner.flush()
            status = await runner.done
            await _close_all(runner.protocols)
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
