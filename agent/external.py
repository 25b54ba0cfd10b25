"""Drive an external ACPC agent process from Python: the dealer's side of one seat.

The shape of python-chess's engine API::

    async with ExternalAgent.popen(["acpc-agent", "leduc.limit.2p.game"], game) as ag:
        action = await ag.act(state)

:meth:`ExternalAgent.popen` listens on ``127.0.0.1`` (a free port), starts the command with
``HOST PORT`` appended (as ``acpc-match`` starts a ``cmd=`` variant and the reference
``play_match.pl`` starts ``startme.sh``), and waits at most ``start_timeout`` seconds for
the agent to connect and send its version line. :meth:`ExternalAgent.act` sends a match
state where the agent is to act and returns its action; :meth:`ExternalAgent.observe` sends
one it only sees (another player's turn, the end of a hand). Every line the agent sends is
read by the dealer's own sans-IO seat, :class:`agent.acpc.protocol.DealerConnection`, so an
answer is judged exactly as ``acpc-dealer`` judges it (comments skipped, a bad format or a
wrong raise repaired the reference's way and counted).

Every wait is bounded. An answer that does not come within ``response_timeout`` seconds is
counted (:attr:`ExternalStats.timeouts`) and played as a check/call, the fallback the
project's agents use; the late answer, when it comes, is read and discarded (counted in
:attr:`ExternalStats.late`) before the next state is sent, and an agent that stays silent
that long again is stopped with :class:`ExternalAgentError`. Leaving the ``async with``
closes the connection (the agent sees the end of the match, as from a dealer), waits at most
``exit_timeout`` seconds for the process to exit, then stops its process group (SIGTERM, then
SIGKILL). The process runs in its own session, so a shell script's children stop with it.

Imports only the stdlib and :mod:`agent.acpc`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.acpc.betting import CALL, Action
from agent.acpc.errors import AcpcError, UsageError
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.limits import excerpt
from agent.acpc.matchstate import MatchState
from agent.acpc.protocol import (
    NEED_DATA,
    ActionReceived,
    BadStateFormat,
    BadVersion,
    ClientClosed,
    CommentSkipped,
    DealerConnection,
    UnrequestedResponse,
    VersionReceived,
)

HOST = "127.0.0.1"
READ_CHUNK = 1 << 16
TAIL_LINES = 20
"""Lines of the agent's stderr kept for messages (:attr:`ExternalAgent.stderr_tail`)."""
KILL_GRACE_S = 2.0
"""How long a process has after SIGTERM before SIGKILL."""


class ExternalAgentError(AcpcError, RuntimeError):
    """The external agent did not start, connect, answer or speak the protocol (the message
    names the command, ``host:port`` and quotes the end of its stderr)."""


@dataclass
class ExternalStats:
    """What one external agent did (:meth:`describe` is one line)."""

    actions: int = 0
    """Answers read (timeouts not included)."""
    timeouts: int = 0
    """States not answered within the response timeout: played as check/call."""
    late: int = 0
    """Answers that came after their timeout (read and discarded)."""
    repaired: int = 0
    """Answers the dealer's rules changed (a bad format or an illegal action made a call,
    a raise size moved into the bounds), as ``acpc-dealer`` would."""
    ignored: int = 0
    """Lines ignored as the dealer ignores them: comments, bad or unrequested states."""
    warnings: list[str] = field(default_factory=list)
    """The dealer's warning lines for repaired or ignored answers (the first 100)."""
    seconds: list[float] = field(default_factory=list)
    """Seconds from sending each state to its answer."""
    returncode: int | None = None
    """The process's exit status once it has exited (negative: the signal that stopped it)."""

    def describe(self) -> str:
        """One human line."""
        slowest = f", slowest {max(self.seconds) * 1e3:.1f} ms" if self.seconds else ""
        return (f"actions {self.actions}, timeouts {self.timeouts} (late answers "
                f"{self.late}), repaired {self.repaired}, ignored lines {self.ignored}"
                f"{slowest}, exit status {self.returncode}")


class ExternalAgent:
    """One external ACPC agent connected to us (module docstring); make it with
    :meth:`popen`."""

    def __init__(self, game: Game, command: Sequence[str], port: int,
                 process: asyncio.subprocess.Process, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, conn: DealerConnection, *,
                 response_timeout: float, exit_timeout: float,
                 tail: deque[str]) -> None:
        self.game = game
        self.command = tuple(command)
        self.port = port
        self.process = process
        self.stats = ExternalStats()
        self.response_timeout = response_timeout
        self.exit_timeout = exit_timeout
        self._reader = reader
        self._writer = writer
        self._conn = conn
        self._tail = tail

    @classmethod
    @contextlib.asynccontextmanager
    async def popen(cls, command: Sequence[str], game: Game | str | Path, *, seat: int = 0,
                    start_timeout: float = 30.0, response_timeout: float = 10.0,
                    exit_timeout: float = 5.0, cwd: str | Path | None = None,
                    env: dict[str, str] | None = None) -> AsyncIterator[ExternalAgent]:
        """Start ``command`` with ``127.0.0.1 PORT`` appended and yield the connected
        agent; stop it on leaving (module docstring). ``game``: a :class:`Game`, a game
        file or the name of a bundled game; ``seat`` (0-based) only names the seat in the
        dealer's messages.

        Raises:
            UsageError: for an empty command, a bad game or a timeout that is not positive.
            ExternalAgentError: if the command cannot start, exits or does not connect and
                send a version line within ``start_timeout`` seconds.
        """
        if not command:
            raise UsageError("expected a command to start the external agent, got none")
        for name, value in (("start_timeout", start_timeout),
                            ("response_timeout", response_timeout),
                            ("exit_timeout", exit_timeout)):
            if not 0 < value < float("inf"):
                raise UsageError(f"expected {name} to be a positive number of seconds, got "
                                 f"{value!r}")
        game = game if isinstance(game, Game) else load_game(game)
        connected: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = (
            asyncio.get_running_loop().create_future())

        def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            if connected.done():  # one seat: a second connection is refused
                writer.close()
                return
            connected.set_result((reader, writer))

        server = await asyncio.start_server(on_connect, HOST, 0)
        port = int(server.sockets[0].getsockname()[1])
        where = f"{excerpt(command[0])} (listening on {HOST}:{port})"
        tail: deque[str] = deque(maxlen=TAIL_LINES)
        try:
            process = await asyncio.create_subprocess_exec(
                *command, HOST, str(port), stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
                cwd=cwd, env=env, start_new_session=True)
        except OSError as exc:
            server.close()
            raise ExternalAgentError(f"expected a command that starts, got {where}: "
                                     f"{exc.strerror or exc}") from None
        stderr_task = asyncio.ensure_future(_collect(process, tail))
        agent: ExternalAgent | None = None
        try:
            exited = asyncio.ensure_future(process.wait())
            waiting: set[asyncio.Future[Any]] = {connected, exited}
            done, _ = await asyncio.wait(waiting, timeout=start_timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
            if connected not in done:
                exited.cancel()
                if exited in done:
                    raise ExternalAgentError(
                        f"expected the agent {where} to connect, got exit status "
                        f"{process.returncode} first{_quote(tail)}")
                raise ExternalAgentError(f"expected the agent {where} to connect within "
                                         f"{start_timeout:g} s, got nothing{_quote(tail)}")
            exited.cancel()
            server.close()
            reader, writer = connected.result()
            conn = DealerConnection(game, seat)
            agent = cls(game, command, port, process, reader, writer, conn,
                        response_timeout=response_timeout, exit_timeout=exit_timeout,
                        tail=tail)
            version = await agent._next_event(start_timeout, "its version line")
            if not isinstance(version, VersionReceived):
                raise agent._failure(f"expected a version line, got {version!r}")
            yield agent
        finally:
            server.close()
            if agent is not None:
                await agent.aclose()
            else:
                await _stop(process, exit_timeout)
            stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stderr_task

    # ----------------------------------------------------------------- public

    @property
    def stderr_tail(self) -> list[str]:
        """The last lines the agent wrote to stderr (at most :data:`TAIL_LINES`)."""
        return list(self._tail)

    async def act(self, ms: MatchState, *, timeout: float | None = None) -> Action:
        """Send ``ms`` (the agent's position is to act) and return the agent's action,
        repaired to a legal one by the dealer's rules; after ``timeout`` seconds (default
        :attr:`response_timeout`) without an answer, a counted check/call.

        Raises:
            UsageError: if ``ms`` is not the agent's to act.
            ExternalAgentError: if the agent closed the connection or stopped answering.
        """
        if not ms.is_to_act:
            raise UsageError(f"expected a state where position {ms.position} is to act, got "
                             f"{str(ms)!r} (send it with observe())")
        await self._send(ms)
        wait = self.response_timeout if timeout is None else timeout
        start = time.perf_counter()
        try:
            event = await asyncio.wait_for(self._answer(), wait)
        except TimeoutError:
            self.stats.timeouts += 1
            return CALL
        self.stats.seconds.append(time.perf_counter() - start)
        self.stats.actions += 1
        return event.action

    async def observe(self, ms: MatchState) -> None:
        """Send ``ms``, a state the agent sees but does not answer (another position to
        act, or the hand's final state).

        Raises:
            UsageError: if ``ms`` is the agent's to act (use :meth:`act`).
            ExternalAgentError: as :meth:`act`.
        """
        if ms.is_to_act:
            raise UsageError(f"expected a state the agent only sees, got {str(ms)!r}, where "
                             f"it is to act (use act())")
        await self._send(ms)

    async def aclose(self) -> None:
        """Close the connection and stop the process (module docstring); idempotent."""
        self._writer.close()
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()
        self.stats.returncode = await _stop(self.process, self.exit_timeout)

    # ----------------------------------------------------------------- internals

    async def _send(self, ms: MatchState) -> None:
        if self._conn.is_to_act:  # a state timed out: read its late answer first
            try:
                await asyncio.wait_for(self._answer(), self.response_timeout)
            except TimeoutError:
                raise self._failure(f"expected an answer to {self._conn.last_line!r}, got "
                                    f"none in {self.response_timeout:g} s after its "
                                    f"timeout") from None
            self.stats.late += 1
        self._writer.write(self._conn.send_state(ms))
        try:
            await self._writer.drain()
        except OSError as exc:
            raise self._failure(f"could not send {str(ms)!r}: {exc}") from None

    async def _answer(self) -> ActionReceived:
        while True:
            event = await self._next_event(None, "an action")
            if isinstance(event, ActionReceived):
                if event.warnings:
                    self.stats.repaired += 1
                    self._warn(event.warnings)
                return event
            if isinstance(event, CommentSkipped | BadStateFormat | UnrequestedResponse):
                self.stats.ignored += 1
                self._warn(event.warnings)
                continue
            raise self._failure(f"expected an action, got {event!r}")

    async def _next_event(self, timeout: float | None, what: str
                          ) -> VersionReceived | BadVersion | ActionReceived | CommentSkipped | (
                              BadStateFormat | UnrequestedResponse | ClientClosed):
        async def read() -> (VersionReceived | BadVersion | ActionReceived | CommentSkipped |
                             BadStateFormat | UnrequestedResponse | ClientClosed):
            while True:
                event = self._conn.next_event()
                if event is not NEED_DATA:
                    assert not isinstance(event, type(NEED_DATA))
                    if isinstance(event, ClientClosed | BadVersion):
                        raise self._failure(event.error or repr(event))
                    return event
                try:
                    data = await self._reader.read(READ_CHUNK)
                except OSError as exc:
                    raise self._failure(f"could not read {what}: {exc}") from None
                self._conn.receive_data(data)

        if timeout is None:
            return await read()
        try:
            return await asyncio.wait_for(read(), timeout)
        except TimeoutError:
            raise self._failure(f"expected {what} within {timeout:g} s, got none") from None

    def _warn(self, lines: Sequence[str]) -> None:
        room = 100 - len(self.stats.warnings)
        self.stats.warnings.extend(lines[:max(room, 0)])

    def _failure(self, what: str) -> ExternalAgentError:
        return ExternalAgentError(f"agent {excerpt(self.command[0])} on {HOST}:{self.port}: "
                                  f"{what}{_quote(self._tail)}")


def _quote(tail: deque[str]) -> str:
    """The end of an agent's stderr for a one-line message."""
    lines = [line for line in tail if line.strip()]
    return f" (its stderr ends: {excerpt(' | '.join(lines[-3:]), 300)})" if lines else ""


async def _collect(process: asyncio.subprocess.Process, tail: deque[str]) -> None:
    """Keep the last lines of the process's stderr (reading it all, so it never blocks)."""
    stream = process.stderr
    if stream is None:
        return
    while True:
        try:
            line = await stream.readline()
        except (OSError, ValueError):  # ValueError: a line over the stream's limit
            continue
        if not line:
            return
        tail.append(line.decode("utf-8", "replace").rstrip())


async def _stop(process: asyncio.subprocess.Process, grace: float) -> int | None:
    """Wait ``grace`` seconds for the process to exit, then stop its process group
    (SIGTERM, :data:`KILL_GRACE_S`, SIGKILL); its exit status."""
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
        try:
            return await asyncio.wait_for(process.wait(),
                                          grace if sig is None else KILL_GRACE_S)
        except TimeoutError:
            continue
    return process.returncode
