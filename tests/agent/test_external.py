"""``ExternalAgent`` (agent/external.py) against small scripted ACPC agents: answers judged
as the dealer judges them, timeouts counted and answered with a call, late answers
discarded, failures in one line with the agent's stderr, the process stopped on leaving
(issue 32, item 3). The agents never answer in time or answer at once, so no result
depends on the machine's speed."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from agent.acpc.betting import CALL, LIMIT_RAISE
from agent.acpc.errors import UsageError
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import parse_matchstate
from agent.external import ExternalAgent, ExternalAgentError

GAME = load_game("leduc.limit.2p.game")

AGENT = r'''
import socket, sys, time
mode, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
if mode == "exit":
    print("boom: no strategy here", file=sys.stderr, flush=True)
    sys.exit(3)
s = socket.create_connection((host, port))
f = s.makefile("rwb", buffering=0)
f.write(b"HELLO\r\n" if mode == "version" else b"VERSION:2.0.0\r\n")
answers = 0
for raw in f:
    line = raw.decode().rstrip("\r\n")
    if mode == "silent":
        continue
    if not line.endswith("|Qh") and not line.endswith("Ks|"):
        continue  # a state we only see
    answers += 1
    if mode == "late" and answers == 1:
        time.sleep(0.6)
    if mode == "messy":
        f.write(b"# thinking\r\n")
        f.write(f"{line}:x\r\n".encode())  # a bad action: the dealer makes it a call
    else:
        f.write(f"{line}:r\r\n".encode())
if mode == "silent":
    time.sleep(600)  # ignores the end of the match: stopped by a signal
'''


def command(tmp_path: Path, mode: str) -> list[str]:
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    return [sys.executable, "-I", "-S", str(script), mode]


def ms(text: str):  # type: ignore[no-untyped-def]
    return parse_matchstate(text, GAME)


def test_answers_are_judged_as_the_dealer_judges_them(tmp_path: Path) -> None:
    async def main() -> tuple[object, ...]:
        async with ExternalAgent.popen(command(tmp_path, "messy"), GAME) as ag:
            await ag.observe(ms("MATCHSTATE:1:0::|Qh"))  # position 0 acts: seen only
            action = await ag.act(ms("MATCHSTATE:1:0:r:|Qh"))
        return action, ag.stats
    action, stats = asyncio.run(main())
    # the script answers the state it only saw too: that answer waits in the buffer and is
    # read when the seat must act, as acpc-dealer reads it: its comment skipped, the answer
    # to the wrong state ignored, the second comment skipped, then the bad action repaired
    assert action == CALL
    assert (stats.actions, stats.repaired, stats.ignored, stats.timeouts) == (1, 1, 3, 0)
    assert stats.warnings == ["WARNING: ignoring un-requested response",
                              "WARNING: bad action format in response, changed to call"]
    assert stats.returncode == 0  # it left when the connection closed


def test_a_timeout_is_a_counted_call_and_the_late_answer_is_discarded(tmp_path: Path) -> None:
    async def main() -> tuple[object, ...]:
        async with ExternalAgent.popen(command(tmp_path, "late"), GAME) as ag:
            first = await ag.act(ms("MATCHSTATE:0:0::Ks|"), timeout=0.05)
            second = await ag.act(ms("MATCHSTATE:0:1::Ks|"))
        return first, second, ag.stats
    first, second, stats = asyncio.run(main())
    assert (first, second) == (CALL, LIMIT_RAISE)
    assert (stats.timeouts, stats.late, stats.actions) == (1, 1, 1)
    assert "timeouts 1 (late answers 1)" in stats.describe()


def test_a_silent_agent_is_stopped(tmp_path: Path) -> None:
    async def main() -> tuple[str, object]:
        async with ExternalAgent.popen(command(tmp_path, "silent"), GAME,
                                       response_timeout=0.2, exit_timeout=0.2) as ag:
            assert await ag.act(ms("MATCHSTATE:0:0::Ks|")) == CALL
            with pytest.raises(ExternalAgentError) as info:
                await ag.act(ms("MATCHSTATE:0:1::Ks|"))
        return str(info.value), ag.stats
    message, stats = asyncio.run(main())
    assert "expected an answer to 'MATCHSTATE:0:0::Ks|', got none in 0.2 s after its " \
        "timeout" in message and "on 127.0.0.1:" in message
    assert stats.timeouts == 1 and stats.returncode == -15  # SIGTERM


@pytest.mark.parametrize(("mode", "expected"), [
    ("exit", r"expected the agent '.*' \(listening on 127\.0\.0\.1:\d+\) to connect, got exit "
             r"status 3 first \(its stderr ends: 'boom: no strategy here'\)"),
    ("version", r"on 127\.0\.0\.1:\d+: ERROR: invalid version string HELLO"),
])
def test_an_agent_that_does_not_start_gets_one_line(tmp_path: Path, mode: str,
                                                    expected: str) -> None:
    async def main() -> None:
        async with ExternalAgent.popen(command(tmp_path, mode), GAME, exit_timeout=1.0):
            raise AssertionError("not reached")
    with pytest.raises(ExternalAgentError, match=expected):
        asyncio.run(main())


def test_bad_calls_are_refused(tmp_path: Path) -> None:
    async def main(cmd: list[str], **options: float) -> None:
        async with ExternalAgent.popen(cmd, GAME, **options):
            pass
    with pytest.raises(UsageError, match="expected a command"):
        asyncio.run(main([]))
    with pytest.raises(UsageError, match="expected response_timeout to be a positive"):
        asyncio.run(main(["x"], response_timeout=0.0))
    with pytest.raises(ExternalAgentError, match="expected a command that starts, got "
                                                 "'/nonexistent/agent'"):
        asyncio.run(main(["/nonexistent/agent"]))

    async def wrong_turn() -> None:
        async with ExternalAgent.popen(command(tmp_path, "messy"), GAME) as ag:
            with pytest.raises(UsageError, match=r"send it with observe\(\)"):
                await ag.act(ms("MATCHSTATE:1:0::|Qh"))
            with pytest.raises(UsageError, match=r"use act\(\)"):
                await ag.observe(ms("MATCHSTATE:1:0:r:|Qh"))
    asyncio.run(wrong_turn())
