"""A hostile dealer against the agent (issue 28, item 8, second half).

A fake dealer on 127.0.0.1 sends the agent's real client (:func:`agent.client.play`, with a
strategy file and with a built-in) malformed lines of every kind: bad prefixes, bad numbers,
cards outside the deck, wrong positions, states out of order, wrong betting, overlong lines,
non-ASCII bytes, floods of states in one write, drips of one byte at a time, early closes,
half-closes, resets, and valid hands. For every case the agent either answers with legal
actions (checked with the core's rules: the response echoes a state we sent that was its to
act in, and :meth:`~agent.acpc.betting.BettingState.check_action` accepts the action) or
ends with one clear line (an error ``acpc-agent`` prints as ``acpc-agent: error: ...``);
never another exception (that would be a traceback), never a hang (every case has a
deadline), never an unbounded buffer.

Memory: what grows with the dealer's input is the client's receive buffer, so the test
measures it (:attr:`~agent.acpc.protocol.ClientConnection.buffered_bytes` after every read):
it stays below one line's cap (:data:`~agent.acpc.protocol.CLIENT_MAX_LINE_BYTES`) while the
connection is good, and below one read plus one line when a read ends in an error, while the
dealer sends 1.5 MB without a line end. An address-space cap (``RLIMIT_AS``) would mostly
measure the mapped libraries (numpy, numba) rather than the input; it is kept for the two
end-to-end runs of ``acpc-agent`` itself (a subprocess under a 1 GiB cap), which also check
the exit status, the one-line error and that the trace of the hands played is complete.

Cases are in-process and take milliseconds each (a drip: a fraction of a second).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import resource
import socket
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent.abstraction.actions import PRESETS
from agent.abstraction.buckets import LosslessCards
from agent.acpc.betting import parse_action
from agent.acpc.errors import AcpcError
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import parse_matchstate
from agent.acpc.protocol import CLIENT_MAX_LINE_BYTES, VERSION_LINE
from agent.agents import make_policy
from agent.client import READ_CHUNK, Summary, _ClientProtocol, play
from tests.agent.test_agent_live import write_strategy

GAME = "leduc.nolimit.2p.game"
"""Leduc, no-limit (stack 12, blinds 1 1, position 0 first): Q K A of hearts and spades."""
HOST = "127.0.0.1"
CASE_TIMEOUT_S = 10.0
"""Deadline of one case (a bound, not a timing: a case takes milliseconds)."""
ERROR_LINE_CHARS = 400
"""The longest error message accepted as 'one clear line'."""


@dataclass(frozen=True)
class Drip:
    """Send these bytes one at a time (each its own write, a pause between)."""

    data: bytes


WAIT = "wait"
"""Wait for the agent's answers to every state it was to act in so far, or for it to
leave."""
EOF = "eof"
"""Half-close: no more data from the dealer; keep reading until the agent closes."""
CLOSE = "close"
"""Close at once, without reading what the agent may still send."""
RESET = "reset"
"""Abort the connection with a TCP reset."""
Op = bytes | Drip | str


def L(*lines: str) -> bytes:
    """Lines with CRLF, as the reference dealer sends them."""
    return "".join(x + "\r\n" for x in lines).encode("latin-1")


# A valid hand as position 0 (acts first in both rounds), then one as position 1.
HAND0 = [L("MATCHSTATE:0:0::Kh|"), WAIT, L("MATCHSTATE:0:0:cr4:Kh|"), WAIT,
         L("MATCHSTATE:0:0:cr4c/:Kh|/Qs"), WAIT, L("MATCHSTATE:0:0:cr4c/cc:Kh|As/Qs")]
HAND1 = [L("MATCHSTATE:1:1::|Ah"), L("MATCHSTATE:1:1:c:|Ah"), WAIT,
         L("MATCHSTATE:1:1:cc/:|Ah/Ks"), L("MATCHSTATE:1:1:cc/r6:|Ah/Ks"), WAIT,
         L("MATCHSTATE:1:1:cc/r6f:|Ah/Ks")]
FINAL0 = L("MATCHSTATE:0:0:cr4c/cc:Kh|As/Qs")


def full_hand(k: int) -> bytes:
    """A whole hand numbered ``k`` as one block (position 0; its answers are not waited
    for)."""
    return L(f"MATCHSTATE:0:{k}::Kh|", f"MATCHSTATE:0:{k}:cr4:Kh|",
             f"MATCHSTATE:0:{k}:cr4c/:Kh|/Qs", f"MATCHSTATE:0:{k}:cr4c/cc:Kh|As/Qs")


OK = "ok"
ANY = None

# name -> (script, expected): ("ok", hands) the match ends normally after that many hands;
# a string: the agent ends with an error matching it; None: either, as long as it is clean.
CASES: dict[str, tuple[list[Op], tuple[str, int] | str | None]] = {
    "valid hands": ([*HAND0, *HAND1], (OK, 2)),
    "comments between states": ([L("# hello"), *HAND0, L(";x", "#")], (OK, 1)),
    "repeated final state": ([*HAND0, FINAL0, FINAL0 + FINAL0], (OK, 1)),
    "repeated state to act, flooded": ([L("MATCHSTATE:0:0::Kh|") * 200, WAIT], (OK, 0)),
    "flood of new hands in one write": (
        [L(*(f"MATCHSTATE:0:{k}::Kh|" for k in range(300)))], (OK, 0)),
    "flood of whole hands in one write": ([b"".join(full_hand(k) for k in range(100))],
                                          (OK, 100)),
    "hand number jumps ahead": ([L("MATCHSTATE:0:3::Kh|"), WAIT, full_hand(9)], (OK, 1)),
    # hand numbers
    "new hand reuses the number": ([*HAND0, L("MATCHSTATE:1:0::|Ah")],
                                   "expected a new hand number after the final state of "
                                   "hand 0, got hand 0 again"),
    "hand number goes back": ([full_hand(5), L("MATCHSTATE:1:4::|Ah")],
                              "never go back, got hand 4 after hand 5"),
    "hand number goes back mid-hand": ([L("MATCHSTATE:0:5::Kh|"), WAIT,
                                        L("MATCHSTATE:0:2:c:Kh|")], "never go back"),
    "state out of order in a hand": ([L("MATCHSTATE:0:0:cr4c/:Kh|/Qs"), WAIT,
                                      L("MATCHSTATE:0:0:cr4:Kh|")], "to go on from"),
    "own cards change in a hand": ([L("MATCHSTATE:0:0::Kh|"), WAIT,
                                    L("MATCHSTATE:0:0:cr4:Ah|")], "to go on from"),
    # cards
    "suit outside the deck": ([L("MATCHSTATE:1:3:r10:|Qc")], "game's deck"),
    "rank outside the deck": ([L("MATCHSTATE:1:3:r10:|2h")], "game's deck"),
    "board card outside the deck": ([L("MATCHSTATE:0:3:cc/:Kh|/Jd")], "game's deck"),
    "card dealt twice": ([L("MATCHSTATE:0:3:cc/:Kh|/Kh")], "distinct cards"),
    "own cards missing": ([L("MATCHSTATE:0:0::|")], ANY),
    "lower-case and upper-case cards": ([L("MATCHSTATE:0:0::kH|"), WAIT], ANY),
    "too many hole cards": ([L("MATCHSTATE:0:0::KhAh|")], "MATCHSTATE"),
    "missing board": ([L("MATCHSTATE:0:0:cc/:Kh|")], "board cards"),
    # prefixes and numbers
    "bad prefix": ([L("MATCHSTAT:0:0::Kh|")], "starting 'MATCHSTATE:'"),
    "lower-case prefix": ([L("matchstate:0:0::Kh|")], "starting 'MATCHSTATE:'"),
    "leading space": ([L(" MATCHSTATE:0:0::Kh|")], "starting 'MATCHSTATE:'"),
    "a version line": ([L("VERSION:2.0.0")], "MATCHSTATE"),
    "empty line": ([L("")], "MATCHSTATE"),
    "state with an action after it": ([L("MATCHSTATE:0:0::Kh|:c")], "end of the state"),
    "huge position": ([L("MATCHSTATE:99999999999999999999999:0::Kh|")], "position in 0..1"),
    "negative position": ([L("MATCHSTATE:-1:0::Kh|")], "position"),
    "plus sign": ([L("MATCHSTATE:+0:0::Kh|")], "position"),
    "negative hand number": ([L("MATCHSTATE:0:-5::Kh|")], "hand number"),
    "hex hand number": ([L("MATCHSTATE:0:0x10::Kh|")], "':' after the hand number"),
    "4,000-digit hand number": ([L(f"MATCHSTATE:0:{'9' * 4000}::Kh|"), WAIT], ANY),
    "huge raise": ([L("MATCHSTATE:1:0:r99999999999999999999999:|Kh")], "r9999"),
    "negative raise": ([L("MATCHSTATE:1:0:r-3:|Kh")], "MATCHSTATE"),
    "wrong position": ([L("MATCHSTATE:2:0::|Kh")], "position in 0..1"),
    # betting
    "fold with no bet": ([L("MATCHSTATE:1:0:f:|Kh")], "fold is not legal"),
    "raise beyond the stack": ([L("MATCHSTATE:1:0:r13:|Kh")], "r13"),
    "raise below the minimum": ([L("MATCHSTATE:0:0:cr4r5:Kh|")], "r5"),
    "three rounds in a two-round game": ([L("MATCHSTATE:0:0:cc/cc/cc:Kh|Ah/Qs")],
                                         "MATCHSTATE"),
    "round end without '/'": ([L("MATCHSTATE:0:0:cccc:Kh|")], "MATCHSTATE"),
    "unknown action": ([L("MATCHSTATE:0:0:x:Kh|")], "MATCHSTATE"),
    # lines and bytes
    "comment over 4 KB": ([L("#" + "x" * 5000)], "at most 4096 bytes"),
    "1.5 MB without a line end": ([b"MATCHSTATE:0:0::Kh|" + b"9" * 1_500_000],
                                  "at most 4096 bytes"),
    "non-ASCII byte": ([b"MATCHSTATE:0:0::Kh|\xff\r\n"], "ASCII"),
    "UTF-8 text": ([("MATCHSTATE:0:0::K\u00e9|\r\n").encode()], "ASCII"),
    "NUL byte": ([b"MATCHSTATE:0:0::Kh|\x00\r\n"], "MATCHSTATE"),
    "carriage return only": ([b"MATCHSTATE:0:0::Kh|\r"], "before end of file"),
    "two carriage returns": ([b"MATCHSTATE:0:0::Kh|\r\r\n"], "MATCHSTATE"),
    # drips, closes, resets
    "drip of a valid hand": ([Drip(L("MATCHSTATE:0:0::Kh|")), WAIT,
                              Drip(FINAL0)], (OK, 1)),
    "drip of a bad line": ([Drip(L("MATCHSTATE:0:0::Qc|"))], "game's deck"),
    "close before anything": ([CLOSE], ANY),
    "close in the middle of a line": ([b"MATCHSTATE:0:0::K", CLOSE], ANY),
    "half-close in the middle of a line": ([b"MATCHSTATE:0:0::K", EOF],
                                           "before end of file"),
    "half-close while the agent is to act": ([L("MATCHSTATE:0:0::Kh|"), EOF], (OK, 0)),
    "close while the agent is to act": ([L("MATCHSTATE:0:0::Kh|"), CLOSE], ANY),
    "reset after a state": ([L("MATCHSTATE:0:0::Kh|"), WAIT, RESET], ANY),
    "reset in the middle of a hand": ([*HAND0[:4], RESET], ANY),
}


@dataclass
class Outcome:
    result: Summary | BaseException
    received: bytes
    sent: list[str]
    peak_good: int
    peak_any: int


async def _dealer(game: Game, script: Sequence[Op], out: Outcome, ended: asyncio.Event,
                  reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Serve ``script`` on one connection; record what was sent and received in ``out``."""
    received = bytearray()

    async def read_all() -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while chunk := await reader.read(1 << 16):
                received.extend(chunk)

    reading = asyncio.ensure_future(read_all())

    owed: set[str] = set()

    async def wait_lines() -> None:
        """Until the agent sent its version line and an answer to every state it was to act
        in so far, or left (bounded: a harness that waits in vain fails before the agent's
        deadline)."""
        for _ in range(int(CASE_TIMEOUT_S / 2 / 0.002)):
            if received.count(b"\n") >= 1 + len(owed) or reading.done():
                return
            await asyncio.sleep(0.002)

    def sent(data: bytes) -> None:
        lines = data.decode("latin-1").split("\r\n")
        out.sent.extend(lines)
        owed.update(x for x in lines if _is_to_act(game, x))

    ended_by = EOF
    try:
        await wait_lines()  # the version line
        for op in script:
            if isinstance(op, bytes):
                sent(op)
                writer.write(op)
                await writer.drain()
            elif isinstance(op, Drip):
                sent(op.data)
                for i in range(len(op.data)):
                    writer.write(op.data[i : i + 1])
                    await writer.drain()
                    await asyncio.sleep(0.001)
            elif op == WAIT:
                await wait_lines()
            else:
                ended_by = op
                break
        if ended_by == RESET:
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        elif ended_by == CLOSE:
            writer.close()
        else:
            writer.write_eof()
            await asyncio.wait_for(reading, CASE_TIMEOUT_S)
    except (ConnectionError, OSError):
        pass  # the agent left first
    finally:
        with contextlib.suppress(TimeoutError, ConnectionError, OSError):
            await asyncio.wait_for(reading, CASE_TIMEOUT_S)
        writer.close()
        out.received = bytes(received)
        ended.set()


async def run_case(game: Game, agent: str, script: Sequence[Op],
                   monkeypatch: pytest.MonkeyPatch) -> Outcome:
    """Serve ``script`` to one agent's real client; bounded by :data:`CASE_TIMEOUT_S`."""
    out = Outcome(result=Summary(), received=b"", sent=[], peak_good=0, peak_any=0)
    feed = _ClientProtocol._feed

    def measured_feed(self: _ClientProtocol, data: bytes | bytearray) -> None:
        feed(self, data)
        size = self.conn.buffered_bytes
        out.peak_any = max(out.peak_any, size)
        if not self.conn.is_error:
            out.peak_good = max(out.peak_good, size)

    monkeypatch.setattr(_ClientProtocol, "_feed", measured_feed)
    ended = asyncio.Event()
    server = await asyncio.start_server(
        lambda r, w: _dealer(game, script, out, ended, r, w), HOST, 0)
    port = server.sockets[0].getsockname()[1]
    policy = make_policy(agent, game, seed=1)
    try:
        out.result = await asyncio.wait_for(play(HOST, port, game, policy), CASE_TIMEOUT_S)
    except TimeoutError:
        raise AssertionError(f"the agent did not end within {CASE_TIMEOUT_S} s") from None
    except Exception as exc:  # judged below
        out.result = exc
    finally:
        await asyncio.wait_for(ended.wait(), CASE_TIMEOUT_S)
        server.close()
        await server.wait_closed()
    return out


def check_answers(game: Game, out: Outcome) -> int:
    """Every line the agent sent after its version line answers a state we sent that was its
    to act in, once, with an action the core's rules accept. Returns how many."""
    assert out.received.startswith(VERSION_LINE), out.received[:60]
    answered: set[str] = set()
    body = out.received[len(VERSION_LINE):]
    assert body == b"" or body.endswith(b"\r\n"), body[-60:]
    for raw in body.split(b"\r\n")[:-1]:
        text = raw.decode("ascii")
        state_text, _, action_text = text.rpartition(":")
        assert state_text in out.sent, text[:100]
        assert state_text not in answered, f"answered twice: {state_text[:100]}"
        answered.add(state_text)
        ms = parse_matchstate(state_text, game)
        assert ms.is_to_act, text[:100]
        ms.state.check_action(parse_action(action_text, game))  # raises if illegal
    return len(answered)


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    game = load_game(GAME)
    path = write_strategy(tmp_path_factory.mktemp("hostile") / "leduc.strat", game,
                          PRESETS["fcpa"], LosslessCards(game))
    return {"file": str(path), "builtin": "builtin:random"}


@pytest.mark.parametrize("agent", ["file", "builtin"])
@pytest.mark.parametrize("case", list(CASES))
async def test_hostile_dealer(case: str, agent: str, agents: dict[str, str],
                              monkeypatch: pytest.MonkeyPatch) -> None:
    game = load_game(GAME)
    script, expected = CASES[case]
    out = await run_case(game, agents[agent], script, monkeypatch)
    answers = check_answers(game, out)
    result = out.result
    # memory: the receive buffer stays within one line (one read plus one line after an
    # error), whatever was sent
    assert out.peak_good < CLIENT_MAX_LINE_BYTES, out.peak_good
    assert out.peak_any <= READ_CHUNK + CLIENT_MAX_LINE_BYTES, out.peak_any
    if isinstance(result, BaseException):
        # what acpc-agent turns into one 'acpc-agent: error: ...' line (agent.cli.main)
        assert isinstance(result, AcpcError | ValueError | OSError), repr(result)
        message = str(result)
        assert message and "\n" not in message and len(message) <= ERROR_LINE_CHARS, message
        assert expected is None or isinstance(expected, str), f"{case}: {message}"
        if isinstance(expected, str):
            assert re.search(re.escape(expected), message), message
    else:
        assert expected is None or isinstance(expected, tuple), f"{case}: no error"
        if isinstance(expected, tuple):
            assert result.hands == expected[1], result.describe()
        to_act = {x for x in out.sent if x.startswith("MATCHSTATE")
                  and _is_to_act(game, x)}
        if expected is not None:
            assert answers == len(to_act), (answers, to_act)


def _is_to_act(game: Game, text: str) -> bool:
    try:
        return parse_matchstate(text, game).is_to_act
    except AcpcError:
        return False


def _cap_memory() -> None:
    """``preexec_fn`` of the ``acpc-agent`` subprocess: 1 GiB of address space."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.mark.parametrize("agent", ["file", "builtin"])
async def test_acpc_agent_under_a_memory_cap(agent: str, agents: dict[str, str],
                                             tmp_path: Path) -> None:
    """``acpc-agent`` itself, in a subprocess under a 1 GiB address-space cap: 100 whole
    hands in one write, a repeated final state, then 1.5 MB without a line end. It answers
    every state it was to act in, legally, ends with exit status 1 and one line on stderr,
    and (with a file) its trace holds the 100 hands it played."""
    game = load_game(GAME)
    flood = b"".join(full_hand(k) for k in range(100))
    last = full_hand(99).split(b"\r\n")[-2] + b"\r\n"
    script: list[Op] = [flood, last, WAIT, b"MATCHSTATE:0:100::Kh|" + b"9" * 1_500_000]
    out = Outcome(result=Summary(), received=b"", sent=[], peak_good=0, peak_any=0)
    ended = asyncio.Event()
    server = await asyncio.start_server(
        lambda r, w: _dealer(game, script, out, ended, r, w), HOST, 0)
    port = server.sockets[0].getsockname()[1]
    trace = tmp_path / "trace.jsonl"
    extra = ["--trace", str(trace)] if agent == "file" else []
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent.cli", GAME, HOST, str(port), "--strategy",
        agents[agent], "--seed", "1", *extra,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        preexec_fn=_cap_memory,
    )
    try:
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        await asyncio.wait_for(ended.wait(), CASE_TIMEOUT_S)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        server.close()
        await server.wait_closed()
    text = err.decode()
    assert proc.returncode == 1, text
    assert "Traceback" not in text and "MemoryError" not in text, text
    errors = [x for x in text.splitlines() if x.startswith("acpc-agent: error: ")]
    assert len(errors) == 1 and "at most 4096 bytes" in errors[0], text
    assert check_answers(game, out) == 300  # three states to act in per hand
    if agent == "file":
        results = [json.loads(x) for x in trace.read_text().splitlines()]
        hands = [r["hand"] for r in results if r["event"] == "result"]
        assert hands == list(range(100))  # the repeated final state is not a hand again
