"""The asyncio ACPC client: thin IO around :class:`~agent.acpc.protocol.ClientConnection`.

Connects, sends the version line, sets TCP_NODELAY, and for every MATCHSTATE where we are to
act asks the policy for an action and writes it in one write. A policy with a
``hand_over(ms)`` method is told every finished hand's final state (the exploiting policy,
:mod:`agent.exploiting`, learns from it). Keeps a summary (hands, chips
won, decision times) that it returns when the dealer closes the connection.

The connection is an :class:`asyncio.BufferedProtocol` reading into one reused buffer (no
stream reader, no new buffer and no task switch per read): every read is handed to the
protocol object at once and the answers owed for it go out in one write. :func:`run` runs a
coroutine on uvloop when it is installed and asked for (``loop="auto"`` or ``"uvloop"``), on
the stdlib loop otherwise.

Imports only the stdlib and :mod:`agent` (the policy decides what else gets loaded).
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from agent.acpc.errors import NetworkError, UsageError
from agent.acpc.gamedef import Game
from agent.acpc.matchstate import MatchState
from agent.acpc.protocol import NEED_DATA, ClientConnection, ConnectionClosed, StateReceived
from agent.builtin import Policy

READ_CHUNK = 1 << 16
"""Size of the reused receive buffer."""
T = TypeVar("T")


@dataclass
class Summary:
    """What one connection played."""

    hands: int = 0
    chips_won: float = 0.0
    decisions: int = 0
    decision_seconds: list[float] = field(default_factory=list)
    big_blind: int = 0
    """The game's big blind (for mbb/h, the unit of acpc-match); 0: chips only."""

    def describe(self) -> str:
        """One human line: hands, chips, decision-time statistics."""
        times = sorted(self.decision_seconds)
        if times:
            p50 = times[len(times) // 2] * 1e3
            p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1e3
            worst = times[-1] * 1e3
            timing = f"decision ms p50 {p50:.3f} p99 {p99:.3f} max {worst:.3f}"
        else:
            timing = "no decisions"
        per_hand = self.chips_won / self.hands if self.hands else 0.0
        rate = f"{per_hand:+.3f} chips/hand"
        if self.big_blind > 0:  # the unit acpc-match reports in
            rate += f", {1000.0 * per_hand / self.big_blind:+.1f} mbb/h"
        return (
            f"hands {self.hands}, chips won {self.chips_won:g} ({rate}), "
            f"decisions {self.decisions}, {timing}"
        )


def final_value(ms: MatchState) -> float:
    """Our chips won in a finished hand as seen in the final state."""
    from agent.acpc.evaluator import rank_hand_fast as rank_hand

    state = ms.state
    if state.is_showdown:
        visible = list(ms.board)
        ranks = [rank_hand(list(h) + visible) if h else -1 for h in ms.hole_cards]
        return state.payoffs(ranks)[ms.position]
    return state.payoffs()[ms.position]


class _ClientProtocol(asyncio.BufferedProtocol):
    """One match over one connection; ``done`` gets the summary or the error."""

    def __init__(
        self, game: Game, policy: Policy, observer: Callable[[MatchState], None] | None,
        done: asyncio.Future[Summary],
    ) -> None:
        self.conn = ClientConnection(game)
        self.policy = policy
        self.observer = observer
        self.done = done
        self.summary = Summary(big_blind=game.big_blind)
        self.hand_over: Callable[[MatchState], None] | None = getattr(
            policy, "hand_over", None)
        self.transport: asyncio.Transport | None = None
        self._buffer = bytearray(READ_CHUNK)
        self._view = memoryview(self._buffer)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.transport.write(self.conn.initiate())

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._view

    def buffer_updated(self, nbytes: int) -> None:
        self._feed(self._buffer[:nbytes])

    def eof_received(self) -> bool | None:
        self._feed(b"")
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            if exc is not None:
                self.done.set_exception(exc)
            else:
                self._feed(b"")

    def _feed(self, data: bytes | bytearray) -> None:
        if self.done.done():
            return
        try:
            answer = self._answers(data)
        except Exception as exc:  # handed to the caller of play()
            self.done.set_exception(exc)
            if self.transport is not None:
                self.transport.close()
            return
        if answer and self.transport is not None:
            self.transport.write(answer)

    def _answers(self, data: bytes | bytearray) -> bytes:
        """Feed ``data``; act on every complete state; the bytes to write (or ``b''``)."""
        conn = self.conn
        conn.receive_data(bytes(data))
        summary = self.summary
        observer = self.observer
        out = b""
        while True:
            event = conn.next_event()
            if event is NEED_DATA:
                return out
            if isinstance(event, ConnectionClosed):
                if not self.done.done():
                    self.done.set_result(summary)
                return out
            if isinstance(event, StateReceived):
                ms = event.state
                if observer is not None:
                    observer(ms)
                if ms.is_to_act:
                    start = time.perf_counter()
                    action = self.policy.act(ms)
                    summary.decision_seconds.append(time.perf_counter() - start)
                    summary.decisions += 1
                    out += conn.send_action(action)
                elif ms.state.finished:
                    summary.hands += 1
                    summary.chips_won += final_value(ms)
                    if self.hand_over is not None:
                        self.hand_over(ms)
            # CommentReceived, StateRepeated (the last state again: answered or counted
            # already): nothing to do


async def play(
    host: str, port: int, game: Game, policy: Policy,
    observer: Callable[[MatchState], None] | None = None,
) -> Summary:
    """Play one match as a client; return the summary when the dealer closes.

    ``observer``, if given, is called with every state the dealer sends, before the policy
    is asked to act in it (the terminal player prints the hand with it).

    Raises:
        NetworkError: if the connection cannot be made (an OSError naming host and port).
        RemoteProtocolError: if the dealer sends something that is not ACPC.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Summary] = loop.create_future()
    try:
        transport, _ = await loop.create_connection(
            lambda: _ClientProtocol(game, policy, observer, done), host, port
        )
    except OSError as exc:
        raise NetworkError(f"could not connect to the dealer at {host}:{port}: "
                           f"{exc.strerror or exc}") from None
    try:
        return await done
    finally:
        transport.close()


EVENT_LOOPS = ("auto", "asyncio", "uvloop")
"""``run``'s choices: uvloop if installed (auto), the stdlib loop, or uvloop (required)."""


def run(main: Coroutine[Any, Any, T], loop: str = "auto") -> T:
    """Run ``main`` to the end on the event loop ``loop`` names (see :data:`EVENT_LOOPS`).

    Raises:
        UsageError: for ``loop="uvloop"`` when uvloop is not installed, or an unknown name.
    """
    if loop not in EVENT_LOOPS:
        main.close()
        raise UsageError(f"expected an event loop in {EVENT_LOOPS}, got {loop!r}")
    if loop != "asyncio":
        try:
            import uvloop
        except ImportError:
            if loop == "uvloop":
                main.close()
                raise UsageError(
                    "expected uvloop to be installed for --event-loop uvloop "
                    "(pip install uvloop), got an ImportError"
                ) from None
        else:
            result: T = uvloop.run(main)
            return result
    return asyncio.run(main)
