"""The asyncio ACPC client: thin IO around :class:`~agent.acpc.protocol.ClientConnection`.

Connects, sends the version line, sets TCP_NODELAY, and for every MATCHSTATE where we are to
act asks the policy for an action and writes it in one write. Keeps a summary (hands, chips
won, decision times) that it returns when the dealer closes the connection.

Imports only the stdlib and :mod:`agent` (the policy decides what else gets loaded).
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from agent.acpc.gamedef import Game
from agent.acpc.matchstate import MatchState
from agent.acpc.protocol import NEED_DATA, ClientConnection, ConnectionClosed, StateReceived
from agent.builtin import Policy

READ_CHUNK = 1 << 16


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


async def play(
    host: str, port: int, game: Game, policy: Policy,
    observer: Callable[[MatchState], None] | None = None,
) -> Summary:
    """Play one match as a client; return the summary when the dealer closes.

    ``observer``, if given, is called with every state the dealer sends, before the policy
    is asked to act in it (the terminal player prints the hand with it).

    Raises:
        OSError: if the connection cannot be made.
        RemoteProtocolError: if the dealer sends something that is not ACPC.
    """
    reader, writer = await asyncio.open_connection(host, port)
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    conn = ClientConnection(game)
    writer.write(conn.initiate())
    summary = Summary(big_blind=game.big_blind)
    try:
        while True:
            data = await reader.read(READ_CHUNK)
            conn.receive_data(data)
            while True:
                event = conn.next_event()
                if event is NEED_DATA:
                    break
                if isinstance(event, ConnectionClosed):
                    return summary
                if isinstance(event, StateReceived):
                    ms = event.state
                    if observer is not None:
                        observer(ms)
                    if ms.is_to_act:
                        start = time.perf_counter()
                        action = policy.act(ms)
                        summary.decision_seconds.append(time.perf_counter() - start)
                        summary.decisions += 1
                        writer.write(conn.send_action(action))
                    elif ms.state.finished:
                        summary.hands += 1
                        summary.chips_won += final_value(ms)
    finally:
        writer.close()
