"""Run ``acpc-dealer`` as a subprocess and play it with scripted clients over loopback.

The dealer runs as ``python -m dealer.cli ...`` in a given working directory; its ports line
is read from stdout, then one client per seat connects (in-process asyncio clients that say
exactly what a test wants, byte for byte, or ``acpc-agent`` subprocesses). Everything has a
deadline: a dealer that does not finish in time is killed and the test fails.

A client is driven by a *responder*: a function from each MATCHSTATE line it receives (text
without the line end) to what it writes back: nothing (``None``), bytes, or a sequence of
bytes, pauses (a float, seconds) and :data:`CLOSE` (close the connection and stop).
"""

from __future__ import annotations

import asyncio
import re
import socket
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agent.acpc.betting import BettingState, parse_action
from agent.acpc.gamedef import Game
from agent.acpc.matchstate import MatchState, parse_matchstate
from dealer.logfile import format_chips

HOST = "127.0.0.1"
VERSION = b"VERSION:2.0.0\r\n"
START_TIMEOUT_S = 20.0
MATCH_TIMEOUT_S = 120.0


class _Close:
    def __repr__(self) -> str:
        return "CLOSE"


CLOSE = _Close()
"""In a reply: close the connection (and stop reading)."""

ReplyItem = bytes | float | _Close
Reply = bytes | Sequence[ReplyItem] | None
Responder = Callable[[str], Reply]


def answer(line: str, action: str) -> bytes:
    """The well-formed response to ``line``: the state, ``:``, the action, CRLF."""
    return f"{line}:{action}\r\n".encode("ascii")


def bot(game: Game, choose: Callable[[MatchState, str], Reply] | None = None) -> Responder:
    """A responder that answers only when its position is to act.

    ``choose(ms, line)`` decides the reply (default: check/call).
    """

    def respond(line: str) -> Reply:
        ms = parse_matchstate(line, game)
        if not ms.is_to_act:
            return None
        if choose is None:
            return answer(line, "c")
        return choose(ms, line)

    return respond


_ACTION = re.compile(r"r\d*|[cf]")


class LogScript:
    """The actions of every hand of a dealer log, by position, to replay them live."""

    def __init__(self, game: Game, log_text: str) -> None:
        self.hands: dict[int, list[tuple[int, str]]] = {}
        for line in log_text.splitlines():
            if not line.startswith("STATE:"):
                continue
            _, hand, betting, _ = line.split(":", 3)
            state = BettingState.initial(game)
            acts: list[tuple[int, str]] = []
            for token in _ACTION.findall(betting):
                acts.append((state.player, token))
                state = state.apply(parse_action(token, game))
            assert state.finished, line
            self.hands[int(hand)] = acts

    def action_for(self, line: str) -> str | None:
        """The action the log says this position took at this state, or None."""
        _, pos, hand, betting, _ = line.split(":", 4)
        acts = self.hands.get(int(hand), [])
        k = sum(1 for ch in betting if ch in "fcr")
        if k < len(acts) and acts[k][0] == int(pos):
            return acts[k][1]
        return None

    def respond(self, line: str) -> Reply:
        """Responder: the logged action as a well-formed response."""
        action = self.action_for(line)
        return None if action is None else answer(line, action)


async def _send(writer: asyncio.StreamWriter, reply: Reply) -> bool:
    """Write a reply; False if the client must stop."""
    if reply is None:
        return True
    items: Sequence[ReplyItem] = [reply] if isinstance(reply, bytes) else reply
    for item in items:
        if isinstance(item, _Close):
            writer.close()
            return False
        if isinstance(item, float):
            await asyncio.sleep(item)
            continue
        writer.write(item)
        await writer.drain()
    return True


async def run_client(port: int, respond: Responder, version: bytes = VERSION) -> list[str]:
    """Connect to ``port``, send ``version``, answer every line; return the lines seen."""
    seen: list[str] = []
    reader, writer = await asyncio.open_connection(HOST, port)
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        writer.write(version)
        while True:
            raw = await reader.readline()
            if not raw:
                break
            line = raw.decode("ascii").removesuffix("\n").removesuffix("\r")
            seen.append(line)
            if not await _send(writer, respond(line)):
                break
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()
    return seen


@dataclass
class DealerRun:
    """What one dealer run produced."""

    returncode: int
    stdout: bytes
    stderr: bytes
    seen: list[list[str]] = field(default_factory=list)

    @property
    def err(self) -> str:
        """stderr as text (latin-1: one character per byte)."""
        return self.stderr.decode("latin-1")

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()

    @property
    def warnings(self) -> list[str]:
        return [x for x in self.err_lines if x.startswith("WARNING:")]

    @property
    def errors(self) -> list[str]:
        return [x for x in self.err_lines if x.startswith("ERROR:")]


class Dealer:
    """A running ``acpc-dealer`` subprocess whose ports are known."""

    def __init__(self, proc: asyncio.subprocess.Process, ports: list[int]) -> None:
        self.proc = proc
        self.ports = ports
        assert proc.stdout is not None and proc.stderr is not None
        self._out = asyncio.ensure_future(proc.stdout.read())
        self._err = asyncio.ensure_future(proc.stderr.read())

    @classmethod
    async def start(cls, args: Sequence[str], cwd: Path) -> Dealer:
        """Start ``python -m dealer.cli *args`` in ``cwd`` and read its ports line."""
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "dealer.cli", *args, cwd=cwd,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        assert proc.stdout is not None
        try:
            first = await asyncio.wait_for(proc.stdout.readline(), START_TIMEOUT_S)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise AssertionError("the dealer printed no ports line") from None
        ports = [int(p) for p in first.split()]
        if not ports:
            err = await proc.stderr.read() if proc.stderr is not None else b""
            await proc.wait()
            raise AssertionError(f"no ports from the dealer: {first!r} {err!r}")
        return cls(proc, ports)

    async def wait(self, timeout: float = MATCH_TIMEOUT_S) -> tuple[int, bytes, bytes]:
        """Wait for the exit; kill the dealer and fail if it takes longer than ``timeout``."""
        try:
            rc = await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
            err = await self._err
            raise AssertionError(
                f"the dealer did not finish in {timeout} s; stderr tail: {err[-2000:]!r}"
            ) from None
        return rc, await self._out, await self._err


async def play(
    args: Sequence[str],
    responders: Sequence[Responder],
    cwd: Path,
    versions: Sequence[bytes] | None = None,
    timeout: float = MATCH_TIMEOUT_S,
) -> DealerRun:
    """Run the dealer with one scripted client per seat; return what happened."""
    dealer = await Dealer.start(args, cwd)
    assert len(dealer.ports) == len(responders), dealer.ports
    vs = list(versions) if versions is not None else [VERSION] * len(responders)
    clients = [
        asyncio.ensure_future(run_client(port, respond, version))
        for port, respond, version in zip(dealer.ports, responders, vs, strict=True)
    ]
    try:
        rc, out, err = await dealer.wait(timeout)
        seen = await asyncio.wait_for(asyncio.gather(*clients), 30)
    finally:
        for task in clients:
            task.cancel()
    return DealerRun(rc, out, err, list(seen))


def log_lines(path: Path) -> list[str]:
    """The lines of a log file (no line ends)."""
    return path.read_text(encoding="ascii").splitlines()


def state_lines(lines: Sequence[str]) -> list[str]:
    return [x for x in lines if x.startswith("STATE:")]


def expected_partial_score(lines: Sequence[str], seat_names: Sequence[str]) -> str:
    """The ``PARTIAL SCORE:<totals>:<names>`` prefix implied by a log's STATE lines."""
    totals = dict.fromkeys(seat_names, 0.0)
    for line in state_lines(lines):
        _, _, _, _, values, names = line.split(":")
        for value, name in zip(values.split("|"), names.split("|"), strict=True):
            totals[name] += float(value)
    vals = "|".join(format_chips(totals[name]) for name in seat_names)
    return f"PARTIAL SCORE:{vals}:{'|'.join(seat_names)}"
