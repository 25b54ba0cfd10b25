"""``acpc-dealer`` end to end: subprocess dealer, real loopback sockets, scripted clients.

Covers the acceptance points of the dealer: byte-identical reproduction of every reference
log and of the reference transcript, the reference's handling of every kind of bad input
(docs/protocol.md, section 2), clean endings where the reference dies (disconnects, time limits,
signals), floods and fuzz, resuming a killed match from its transaction file, and full
matches of 3-, 4- and 6-player games with unequal stacks against ``acpc-agent``.
"""

from __future__ import annotations

import asyncio
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from agent.acpc.betting import CALL, format_action
from agent.acpc.dealing import deal_hands
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import bundled_game_path, bundled_games, load_game
from agent.acpc.matchstate import MatchState, format_matchstate, parse_matchstate, view_of
from agent.builtin import RandomPolicy
from dealer.engine import Match, MatchConfig, Phase
from evaluation.logtool import verify_log
from tests.support import LOGS, REFERENCE_LOGS, ROOT
from tests.support.dealer_harness import (
    CLOSE,
    Dealer,
    DealerRun,
    LogScript,
    Reply,
    Responder,
    answer,
    bot,
    expected_partial_score,
    log_lines,
    play,
    run_client,
    state_lines,
)

NL2 = "holdem.nolimit.2p.reverse_blinds.game"
BAD_STATE = "WARNING: bad state format in response"
UNREQUESTED = "WARNING: ignoring un-requested response"
BAD_ACTION = "WARNING: bad action format in response, changed to call"
INVALID = "WARNING: invalid action, changed to call"


@pytest.fixture(scope="module")
def nl2_game() -> Game:
    return load_game(NL2)


def _header(log: str) -> tuple[str, str, int, int, list[str]]:
    """``(match, game, hands, seed, seat names)`` of a reference log."""
    lines = (LOGS / log).read_text().splitlines()
    _, _, match, game, hands, seed = lines[0].split(" ")
    names = lines[-1].split(":")[2].split("|")
    return match, game, int(hands), int(seed), names


def _first_decision(ms: MatchState, hand: int = 0) -> bool:
    """The first action of ``hand`` is asked for."""
    return ms.hand_number == hand and not ms.state.betting


def _assert_clean_error(run: DealerRun, tmp: Path, match: str, names: Sequence[str]) -> None:
    """Exit 1, no SCORE, completed hands in the log, and a matching PARTIAL SCORE."""
    assert run.returncode == 1, run.err
    assert b"SCORE" not in run.stdout
    lines = log_lines(tmp / f"{match}.log")
    assert not any(x.startswith("SCORE:") for x in lines)
    partial = [x for x in run.err_lines if x.startswith("PARTIAL SCORE:")]
    assert len(partial) == 1, run.err
    assert partial[0].startswith(expected_partial_score(lines, names) + " ("), partial[0]


# ------------------------------------------------------------------------ reference replays


@pytest.mark.parametrize("log", sorted(REFERENCE_LOGS))
async def test_replays_reference_log_byte_for_byte(log: str, tmp_path: Path) -> None:
    match, game_name, hands, seed, names = _header(log)
    assert game_name == REFERENCE_LOGS[log]
    ref = (LOGS / log).read_bytes()
    script = LogScript(load_game(game_name), ref.decode("ascii"))
    run = await play(
        [match, game_name, str(hands), str(seed), *names, "-q"],
        [script.respond] * len(names), tmp_path,
    )
    assert run.returncode == 0, run.err
    assert run.err_lines[-1] == ref.decode().splitlines()[-1]  # the SCORE line
    assert not run.warnings
    produced = (tmp_path / f"{match}.log").read_bytes()
    assert produced == ref
    assert run.stdout.decode().splitlines()[-1] == ref.decode().splitlines()[-1]


def test_duplicate_pair_swaps_the_cards() -> None:
    a = state_lines((LOGS / "dupA.log").read_text().splitlines())
    b = state_lines((LOGS / "dupB.log").read_text().splitlines())
    assert _header("dupA.log")[3] == _header("dupB.log")[3]
    assert _header("dupA.log")[4] == _header("dupB.log")[4][::-1]
    for x, y in zip(a, b, strict=True):
        # The same deal by position, the players in swapped seats: each player gets the
        # cards the other had (the board shows as far as each hand's betting went).
        hole_x, _, board_x = x.split(":")[3].partition("/")
        hole_y, _, board_y = y.split(":")[3].partition("/")
        assert hole_x == hole_y
        assert board_x.startswith(board_y) or board_y.startswith(board_x)
        assert x.split(":")[5].split("|") == y.split(":")[5].split("|")[::-1]


_TIME = re.compile(rb" at \d+\.\d{6}")


async def test_reproduces_reference_transcript(tmp_path: Path, nl2_game: Game) -> None:
    ref_log = (LOGS / "nl1000.log").read_text()
    shutil.copy(bundled_game_path(NL2), tmp_path / NL2)
    cwd = tmp_path / "sub"
    cwd.mkdir()
    script = LogScript(nl2_game, ref_log)
    run = await play(
        ["nl1000", f"../{NL2}", "1000", "42", "P1", "P2"], [script.respond] * 2, cwd
    )
    assert run.returncode == 0, run.err[-2000:]
    ref = (LOGS / "nl1000.transcript.txt").read_bytes().split(b"\n")[:-1]
    ours = run.stderr.split(b"\n")
    assert [_TIME.sub(b" at T", x) for x in ours[: len(ref)]] == [
        _TIME.sub(b" at T", x) for x in ref
    ]
    # The clients saw exactly the MATCHSTATE lines of the transcript, in order.
    for seat in (1, 2):
        sent = [
            x.split(b" ", 4)[4].rstrip(b"\r").decode()
            for x in ref if x.startswith(b"TO %d " % seat)
        ]
        assert run.seen[seat - 1][: len(sent)] == sent
    # Time report after the final states of every hundredth hand.
    text = run.stderr.decode("ascii").split("\n")
    at = [i for i, x in enumerate(text) if x.startswith("Seconds cumulatively spent")]
    assert len(at) == 20
    for i in at[::2]:  # (whole seconds: a loaded machine may show 1 late in the match)
        assert re.fullmatch(r"Seconds cumulatively spent in match for seat 0: \d+", text[i])
        assert re.fullmatch(r"Seconds cumulatively spent in match for seat 1: \d+", text[i + 1])
        last_to = text[i - 1]
        hand = int(last_to.split(":")[2])
        assert last_to.startswith("TO 2 ") and hand % 100 == 0
        assert parse_matchstate(last_to.split(" ", 4)[4].rstrip("\r"), nl2_game).state.finished
    assert text[-3].startswith("FINISHED at ")
    assert text[-2] == "SCORE:359130|-359130:P1|P2"
    produced = (cwd / "nl1000.log").read_text().splitlines()
    assert produced[1:] == ref_log.splitlines()[1:]
    assert produced[0] == f"# name/game/hands/seed nl1000 ../{NL2} 1000 42"


# ------------------------------------------------------------------------ bad input (PROTOCOL 2)


def _nl2_args(match: str, hands: int, *extra: str) -> list[str]:
    return [match, NL2, str(hands), "42", "A", "B", "-q", *extra]


def _first_actions(tmp: Path, match: str) -> list[str]:
    """The betting of every hand in the log."""
    return [x.split(":")[2] for x in state_lines(log_lines(tmp / f"{match}.log"))]


async def _play_nl2(
    tmp: Path, choose: dict[int, Responder] | Responder, hands: int = 2, *extra: str,
    quiet: bool = True,
) -> DealerRun:
    """Play ``hands`` hands of NL2; ``choose`` maps seats to responders (default: call)."""
    game = load_game(NL2)
    seats = choose if isinstance(choose, dict) else {0: choose, 1: choose}
    responders = [seats.get(s, bot(game)) for s in range(2)]
    args = _nl2_args("m", hands, *extra)
    if not quiet:
        args.remove("-q")
    return await play(args, responders, tmp)


def _on_first_decision(game: Game, reply: Reply, hand: int = 0) -> Responder:
    """A caller that sends ``reply`` (a format string: ``{line}`` is the state) instead."""

    def choose(ms: MatchState, line: str) -> Reply:
        if _first_decision(ms, hand):
            if isinstance(reply, bytes):
                return reply.replace(b"{line}", line.encode())
            assert isinstance(reply, list)
            return [x.replace(b"{line}", line.encode()) if isinstance(x, bytes) else x
                    for x in reply]
        return answer(line, "c")

    return bot(game, choose)


@pytest.mark.parametrize(
    "junk",
    [
        b"hello\r\n",
        b"\r\n",
        b"MATCHSTATE:1:0:x:|2hAc:r300\r\n",  # betting that does not parse
        b"MATCHSTATE:1:0:r100:|2hAc:r300\r\n",  # betting that is not legal as written
        b"MATCHSTATE:7:0::|2hAc:r300\r\n",  # no such position
        b"MATCHSTATE:1:0::|2h:r300\r\n",  # too few cards
        b"\x00\xff\x80MATCHSTATE\r\n",
    ],
)
async def test_bad_state_echo_is_ignored_and_the_dealer_keeps_waiting(
    tmp_path: Path, nl2_game: Game, junk: bytes
) -> None:
    # Junk, a pause (the dealer must keep waiting), then the real answer: a raise.
    respond = _on_first_decision(nl2_game, [junk, 0.2, b"{line}:r300\r\n"])
    run = await _play_nl2(tmp_path, respond)
    assert run.returncode == 0, run.err
    assert run.warnings == [BAD_STATE]
    assert _first_actions(tmp_path, "m")[0].startswith("r300")


@pytest.mark.parametrize("stale", ["previous_hand", "earlier_state", "other_cards", "position"])
async def test_unrequested_response_is_ignored(
    tmp_path: Path, nl2_game: Game, stale: str
) -> None:
    seen: list[str] = []

    def choose(ms: MatchState, line: str) -> Reply:
        if ms.hand_number == 1 and ms.state.betting == "c":
            if stale == "previous_hand":
                old = next(x for x in seen if ":0:" in x[:16])
            elif stale == "earlier_state":
                old = next(x for x in seen if x.split(":")[2:4] == ["1", ""])
            elif stale == "other_cards":
                cards = line.split(":")[4]
                old = line[: -len(cards)] + cards.replace(cards.strip("|")[:2], "2c2d"[:2])
                assert old != line
            else:
                old = "MATCHSTATE:" + str(1 - ms.position) + line[len("MATCHSTATE:") + 1 :]
            return [f"{old}:f\r\n".encode(), answer(line, "r300")]
        return answer(line, "c")

    def respond(line: str) -> Reply:
        seen.append(line)
        return bot(nl2_game, choose)(line)

    run = await _play_nl2(tmp_path, {0: respond, 1: respond})
    assert run.returncode == 0, run.err
    assert run.warnings == [UNREQUESTED]
    assert _first_actions(tmp_path, "m")[1].startswith("cr300")


@pytest.mark.parametrize(
    "response",
    [b"{line}:x\r\n", b"{line}\r\n", b"{line}:r\r\n", b"{line}:rabc\r\n", b"{line}:\r\n",
     b"{line}|c\r\n"],
)
async def test_bad_action_format_becomes_a_call(
    tmp_path: Path, nl2_game: Game, response: bytes
) -> None:
    run = await _play_nl2(tmp_path, _on_first_decision(nl2_game, response))
    assert run.returncode == 0, run.err
    assert run.warnings == [BAD_ACTION]
    assert _first_actions(tmp_path, "m")[0].startswith("c")


async def test_fold_when_check_is_free_becomes_a_call(tmp_path: Path, nl2_game: Game) -> None:
    def choose(ms: MatchState, line: str) -> Reply:
        return answer(line, "c" if ms.state.can_fold() else "f")

    run = await _play_nl2(tmp_path, bot(nl2_game, choose), hands=1)
    assert run.returncode == 0, run.err
    # Heads-up, both call: every decision but the small blind's first can check.
    assert run.warnings == [INVALID] * 7
    assert _first_actions(tmp_path, "m") == ["cc/cc/cc/cc"]


async def test_raise_beyond_max_raises_becomes_a_call(tmp_path: Path) -> None:
    game = load_game("holdem.limit.2p.reverse_blinds.game")
    responders = [bot(game, lambda ms, line: answer(line, "r"))] * 2
    run = await play(["lim", "holdem.limit.2p.reverse_blinds.game", "3", "7", "A", "B", "-q"],
                     responders, tmp_path)
    assert run.returncode == 0, run.err
    assert run.warnings and set(run.warnings) == {INVALID}
    assert verify_log(game, tmp_path / "lim.log").ok
    # maxRaises 3 4 4 4: every round is raised to its cap, then called.
    assert _first_actions(tmp_path, "lim")[0] == "rrrc/rrrrc/rrrrc/rrrrc"


@pytest.mark.parametrize(
    ("action", "warning", "fixed"),
    [
        ("r1", "WARNING: raise of 1 increased to 200", "r200"),
        ("r199", "WARNING: raise of 199 increased to 200", "r200"),
        ("r-5", "WARNING: raise of -5 increased to 200", "r200"),
        ("r999999", "WARNING: raise of 999999 decreased to 20000", "r20000"),
        ("R 300", None, "r300"),
        ("b300junk", None, "r300"),
        ("F", None, "f"),
        ("k", None, "c"),
    ],
)
async def test_raise_fixups_and_action_spellings(
    tmp_path: Path, nl2_game: Game, action: str, warning: str | None, fixed: str
) -> None:
    run = await _play_nl2(
        tmp_path, _on_first_decision(nl2_game, b"{line}:" + action.encode() + b"\r\n")
    )
    assert run.returncode == 0, run.err
    assert run.warnings == ([warning] if warning else [])
    assert _first_actions(tmp_path, "m")[0].startswith(fixed)


async def test_comment_lines_are_skipped(tmp_path: Path, nl2_game: Game) -> None:
    comments = b"# a comment\r\n;another\n#\r\n"
    respond = _on_first_decision(nl2_game, [comments, 0.1, comments + b"{line}:r300\r\n"])
    run = await _play_nl2(tmp_path, respond)
    assert run.returncode == 0, run.err
    assert run.warnings == []
    assert _first_actions(tmp_path, "m")[0].startswith("r300")


async def test_lines_from_a_seat_not_to_act_wait_until_it_acts(
    tmp_path: Path, nl2_game: Game
) -> None:
    events: list[str] = []

    def respond(line: str) -> Reply:
        ms = parse_matchstate(line, nl2_game)
        if ms.is_to_act:
            events.append("act")
            return answer(line, "c")
        # Not our turn: answer anyway (and a bare junk line); the dealer must not read
        # these until we are to act, and then skip them.
        events.append("junk")
        return answer(line, "c")

    run = await _play_nl2(tmp_path, {1: respond}, 2, quiet=False)
    assert run.returncode == 0, run.err
    last_act = len(events) - 1 - events[::-1].index("act")
    read = events[:last_act].count("junk")
    assert read > 0
    assert run.warnings == [UNREQUESTED] * read
    # Every line read from seat 2 was read while seat 2 was to act.
    last_to: dict[str, str] = {}
    for x in run.err_lines:
        if x.startswith(("TO ", "FROM ")):
            kind, seat, _, _, text = x.split(" ", 4)
            if kind == "TO":
                last_to[seat] = text.rstrip("\r")
            else:
                assert parse_matchstate(last_to[seat], nl2_game).is_to_act, x
    assert _first_actions(tmp_path, "m") == ["cc/cc/cc/cc"] * 2


@pytest.mark.parametrize("version", [b"VERSION:x\r\n", b"hello\r\n", b"VERSION:2.0\r\n"])
async def test_bad_version_line_is_fatal(
    tmp_path: Path, nl2_game: Game, version: bytes
) -> None:
    start = time.monotonic()
    run = await play(_nl2_args("m", 3), [bot(nl2_game)] * 2, tmp_path,
                     versions=[b"VERSION:2.0.0\r\n", version])
    assert run.returncode == 1
    # The reference prints the line as received, line end included.
    assert run.stderr.endswith(b"ERROR: invalid version string " + version), run.err
    assert b"SCORE" not in run.stdout and "SCORE" not in run.err
    assert time.monotonic() - start < 10


async def test_other_version_is_reported_and_play_goes_on(
    tmp_path: Path, nl2_game: Game
) -> None:
    run = await play(_nl2_args("m", 2), [bot(nl2_game)] * 2, tmp_path,
                     versions=[b"VERSION:3.1.4\r\n", b"VERSION:2.0.7\r\n"])
    assert run.returncode == 0, run.err
    assert run.errors == ["ERROR: this server is currently using version 2.0.0"]
    assert run.stdout.decode().splitlines()[-1].startswith("SCORE:")


# ------------------------------------------------------------------------ clean endings


def _closer(game: Game, when: str) -> Responder:
    """Seat that leaves in hand 3: while to act, or while waiting for the other seat."""

    def respond(line: str) -> Reply:
        ms = parse_matchstate(line, game)
        if ms.hand_number == 3 and (ms.is_to_act == (when == "acting")):
            return [CLOSE]
        return answer(line, "c") if ms.is_to_act else None

    return respond


@pytest.mark.parametrize("when", ["acting", "waiting"])
async def test_disconnect_mid_hand_ends_cleanly(
    tmp_path: Path, nl2_game: Game, when: str
) -> None:
    start = time.monotonic()
    run = await _play_nl2(tmp_path, {1: _closer(nl2_game, when)}, 10)
    assert time.monotonic() - start < 20
    assert run.errors == ["ERROR: could not get action from seat 2"], run.err
    assert "seat 2 closed its connection (end of file) while it was to act" in run.err
    _assert_clean_error(run, tmp_path, "m", ["A", "B"])
    assert len(_first_actions(tmp_path, "m")) == 3  # hands 0-2, all completed


async def test_client_that_never_answers(tmp_path: Path, nl2_game: Game) -> None:
    def choose(ms: MatchState, line: str) -> Reply:
        return None if ms.hand_number == 1 else answer(line, "c")

    start = time.monotonic()
    run = await _play_nl2(tmp_path, {1: bot(nl2_game, choose)}, 5, "--t_response", "300")
    assert time.monotonic() - start < 20
    assert run.errors == ["ERROR: could not get action from seat 2"], run.err
    assert re.search(r"^0\.\d seconds spent waiting; timeout 0\.3$", run.err, re.M), run.err
    _assert_clean_error(run, tmp_path, "m", ["A", "B"])
    assert len(_first_actions(tmp_path, "m")) == 1


def _slow(game: Game, seconds: float) -> Responder:
    return bot(game, lambda ms, line: [seconds, answer(line, "c")])


async def test_client_out_of_time_for_the_hand(tmp_path: Path, nl2_game: Game) -> None:
    # Four decisions per hand at 150 ms each do not fit in 400 ms per hand.
    run = await _play_nl2(tmp_path, {1: _slow(nl2_game, 0.15)}, 5, "--t_hand", "400")
    assert run.errors == ["ERROR: seat 2 ran out of time"], run.err
    _assert_clean_error(run, tmp_path, "m", ["A", "B"])
    assert _first_actions(tmp_path, "m") == []


async def test_client_out_of_time_for_the_match(tmp_path: Path, nl2_game: Game) -> None:
    # 4 hands x 200 ms = 800 ms for the match; 4 decisions x 120 ms per hand: hand 0 fits
    # (with 320 ms to spare), hand 1 does not.
    run = await _play_nl2(tmp_path, {1: _slow(nl2_game, 0.12)}, 4, "--t_per_hand", "200")
    assert run.errors == ["ERROR: seat 2 ran out of time"], run.err
    _assert_clean_error(run, tmp_path, "m", ["A", "B"])
    assert len(_first_actions(tmp_path, "m")) == 1


async def test_one_megabyte_line_is_cut_in_4095_byte_lines(
    tmp_path: Path, nl2_game: Game
) -> None:
    line = b"A" * (1 << 20) + b"\n"  # 256 lines of 4095 bytes and one of 257
    respond = _on_first_decision(nl2_game, [line + b"{line}:r300\r\n"])
    run = await _play_nl2(tmp_path, respond, 3)
    assert run.returncode == 0, run.err[-500:]
    assert run.warnings == [BAD_STATE] * 257
    assert _first_actions(tmp_path, "m")[0].startswith("r300")
    assert verify_log(nl2_game, tmp_path / "m.log").ok


def _peak_rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
async def test_flood_from_a_seat_not_to_act_is_read_with_bounded_memory(
    tmp_path: Path, nl2_game: Game
) -> None:
    lines = 16384
    flood = (b"B" * 4094 + b"\n") * lines  # 64 MiB while the other seat thinks
    dealer = await Dealer.start(_nl2_args("m", 3), tmp_path)
    peaks: list[int] = []

    def flooder(line: str) -> Reply:
        ms = parse_matchstate(line, nl2_game)
        if ms.is_to_act:
            return answer(line, "c")
        if not peaks:
            peaks.append(_peak_rss_bytes(dealer.proc.pid))
            return [flood]
        return None

    def thinker(line: str) -> Reply:
        ms = parse_matchstate(line, nl2_game)
        if ms.hand_number == 1 and len(peaks) == 1:
            peaks.append(_peak_rss_bytes(dealer.proc.pid))
        if not ms.is_to_act:
            return None
        return [0.5, answer(line, "c")] if _first_decision(ms) else answer(line, "c")

    clients = [asyncio.ensure_future(run_client(port, respond))
               for port, respond in zip(dealer.ports, [flooder, thinker], strict=True)]
    rc, _, err = await dealer.wait()
    await asyncio.wait_for(asyncio.gather(*clients), 30)
    run = DealerRun(rc, b"", err)
    assert rc == 0, run.err[-500:]
    assert run.warnings == [BAD_STATE] * lines
    assert _first_actions(tmp_path, "m") == ["cc/cc/cc/cc"] * 3
    # Reading was paused at the per-seat cap: far less than the flood was ever held.
    assert len(peaks) == 2 and peaks[1] - peaks[0] < 24 << 20, peaks


async def test_ten_thousand_random_lines_from_a_hostile_client(
    tmp_path: Path, nl2_game: Game
) -> None:
    rng = random.Random(2024)
    junk_lines: list[bytes] = []

    def choose(ms: MatchState, line: str) -> Reply:
        lines = []
        for _ in range(50):
            body = bytes(rng.randrange(256) for _ in range(rng.randrange(120)))
            lines.append(body.replace(b"\n", b"") + b"\n")
        junk_lines.extend(lines)
        return [b"".join(lines) + answer(line, rng.choice("cccf"))]

    run = await _play_nl2(tmp_path, {0: bot(nl2_game, choose)}, 80)
    assert run.returncode == 0, run.err[-500:]
    assert len(junk_lines) >= 10_000
    # Every junk line was read (in order, before the answer after it); comments are skipped.
    expected = sum(1 for x in junk_lines if x[:1] not in (b"#", b";"))
    assert [x for x in run.warnings if x != INVALID] == [BAD_STATE] * expected  # f -> c
    out = subprocess.run(
        [sys.executable, "-m", "evaluation.logtool", "verify", NL2, str(tmp_path / "m.log")],
        capture_output=True, text=True, check=False,
    )
    assert out.returncode == 0, out.stderr
    assert "OK (80 hands, byte-identical)" in out.stdout


# ------------------------------------------------------------------------ kill, resume, signals


def _first_long_hand(script: LogScript, start: int) -> int:
    return next(h for h in range(start, 1000) if len(script.hands[h]) >= 4)


def _holding(script: LogScript, hand: int, reached: asyncio.Event) -> Responder:
    """Plays the script, but stops answering after two actions of ``hand``."""

    def respond(line: str) -> Reply:
        _, _, h, betting, _ = line.split(":", 4)
        if int(h) == hand and sum(1 for c in betting if c in "fcr") >= 2:
            if script.action_for(line) is not None:
                reached.set()
            return None
        return script.respond(line)

    return respond


async def _run_until(
    args: Sequence[str], cwd: Path, responders: Sequence[Responder], reached: asyncio.Event,
    sig: signal.Signals,
) -> DealerRun:
    dealer = await Dealer.start(args, cwd)
    clients = [asyncio.ensure_future(run_client(port, respond))
               for port, respond in zip(dealer.ports, responders, strict=True)]
    try:
        await asyncio.wait_for(reached.wait(), 60)
        await asyncio.sleep(0.05)
        dealer.proc.send_signal(sig)
        rc, out, err = await dealer.wait(30)
        seen = await asyncio.wait_for(asyncio.gather(*clients), 30)
    finally:
        for task in clients:
            task.cancel()
    return DealerRun(rc, out, err, list(seen))


async def test_resume_after_sigkill_replays_the_transactions(
    tmp_path: Path, nl2_game: Game
) -> None:
    script = LogScript(nl2_game, (LOGS / "nl1000.log").read_text())
    hands = 40
    args = ["m", NL2, str(hands), "42", "P1", "P2", "-q", "-T"]
    full_dir, cut_dir = tmp_path / "full", tmp_path / "cut"
    full_dir.mkdir()
    cut_dir.mkdir()
    full = await play(args, [script.respond] * 2, full_dir)
    assert full.returncode == 0, full.err
    full_log = log_lines(full_dir / "m.log")
    header = full_log[:4]

    cut_hand = _first_long_hand(script, 20)
    reached = asyncio.Event()
    killed = await _run_until(
        args, cut_dir, [_holding(script, cut_hand, reached)] * 2, reached, signal.SIGKILL
    )
    assert killed.returncode == -signal.SIGKILL
    before = log_lines(cut_dir / "m.log")
    assert before == full_log[: 4 + cut_hand]  # header and every completed hand
    tlog = (cut_dir / "m.tlog").read_text().splitlines()
    assert [x.split()[1] for x in tlog[-2:]] == [str(cut_hand)] * 2

    resumed = await play([*args, "-a"], [script.respond] * 2, cut_dir)
    assert resumed.returncode == 0, resumed.err
    after = log_lines(cut_dir / "m.log")
    # -a appends: the header again, then the rest of the match and the SCORE.
    assert after[: 4 + cut_hand] == before
    assert after[4 + cut_hand : 8 + cut_hand] == header
    assert state_lines(after) == state_lines(full_log)
    assert after[-1] == full_log[-1]
    assert resumed.stdout.decode().splitlines()[-1] == full_log[-1]
    # The resumed match first showed the clients the interrupted hand where it stood.
    first = resumed.seen[0][0].split(":")
    assert int(first[2]) == cut_hand and sum(1 for c in first[3] if c in "fcr") == 2
    # The transaction file holds every action once, as in the uninterrupted match.
    full_tlog = (full_dir / "m.tlog").read_text().splitlines()
    cut_tlog = (cut_dir / "m.tlog").read_text().splitlines()
    assert [x.split()[:2] for x in cut_tlog] == [x.split()[:2] for x in full_tlog]


async def test_sigterm_mid_match_ends_cleanly(tmp_path: Path, nl2_game: Game) -> None:
    script = LogScript(nl2_game, (LOGS / "nl1000.log").read_text())
    cut_hand = _first_long_hand(script, 10)
    reached = asyncio.Event()
    run = await _run_until(
        ["m", NL2, "100", "42", "P1", "P2", "-q"], tmp_path,
        [_holding(script, cut_hand, reached)] * 2, reached, signal.SIGTERM,
    )
    assert run.errors == ["ERROR: interrupted by SIGTERM"], run.err
    _assert_clean_error(run, tmp_path, "m", ["P1", "P2"])
    ref = (LOGS / "nl1000.log").read_text().splitlines()
    assert state_lines(log_lines(tmp_path / "m.log")) == state_lines(ref)[:cut_hand]


# ------------------------------------------------------------------------ more players


@pytest.mark.parametrize(
    ("game_name", "hands"),
    [("nl3p_uneven.game", 300), ("lim4p_stack.game", 300), ("holdem.nolimit.6p.game", 200)],
)
async def test_multiplayer_match_with_random_agents(
    tmp_path: Path, game_name: str, hands: int
) -> None:
    game = load_game(game_name)
    names = [f"R{i + 1}" for i in range(game.num_players)]
    dealer = await Dealer.start(["mp", game_name, str(hands), "11", *names, "-q"], tmp_path)
    agents = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agent.cli", game_name, "127.0.0.1", str(port),
            "--strategy", "builtin:random", "--seed", str(seat), "--quiet",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        for seat, port in enumerate(dealer.ports)
    ]
    try:
        rc, out, err = await dealer.wait()
        results = [await asyncio.wait_for(a.communicate(), 30) for a in agents]
    finally:
        for a in agents:
            if a.returncode is None:
                a.kill()
                await a.wait()
    text = err.decode("latin-1")
    assert rc == 0, text
    assert "WARNING" not in text and "ERROR" not in text
    assert [a.returncode for a in agents] == [0] * len(agents), results
    lines = log_lines(tmp_path / "mp.log")
    assert len(state_lines(lines)) == hands
    assert verify_log(game, tmp_path / "mp.log").ok
    assert out.decode().splitlines()[-1] == lines[-1]


# ------------------------------------------------------------------------ the pure engine


@pytest.mark.parametrize("game_name", bundled_games())
def test_engine_sends_exactly_the_formatted_views(game_name: str) -> None:
    """The dealer's precomputed state texts equal format_matchstate of each seat's view."""
    game = load_game(game_name)
    n = game.num_players
    config = MatchConfig(
        match_name="x", game_file=game_name, game=game, num_hands=60, seed=3,
        seat_names=tuple(f"P{i}" for i in range(n)), quiet=True,
    )
    now = [1_000_000]

    def clock() -> int:
        now[0] += 7
        return now[0]

    match = Match(config, clock)
    match.begin()
    match.connected()
    for seat in range(n):
        match.receive(seat, b"VERSION:2.0.0\r\n")
    rng = random.Random(game_name)
    policy = RandomPolicy(5)
    deals = deal_hands(game, 3)
    deal = next(deals)
    deal_hand_number = 0
    checked = showdowns = 0
    for _ in range(100_000):
        out = match.drain()
        answers: dict[int, bytes] = {}
        for seat, data in out.to_seat:
            text = data.decode("ascii").removesuffix("\r\n")
            ms = parse_matchstate(text, game)
            while deal_hand_number < ms.hand_number:
                deal, deal_hand_number = next(deals), deal_hand_number + 1
            want = view_of(ms.position, ms.hand_number, ms.state, deal.hole, deal.board)
            assert ms == want
            assert text == format_matchstate(want)
            checked += 1
            showdowns += ms.state.is_showdown
            if ms.is_to_act:
                assert match.conns[seat].last_state == want
                action = policy.act(ms) if rng.random() < 0.9 else CALL
                answers[seat] = answer(text, format_action(action, game))
        if match.phase is Phase.DONE:
            break
        for seat, data in answers.items():
            match.receive(seat, data)
    assert match.exit_status == 0
    assert checked > 100 and showdowns > 0


# ------------------------------------------------------------------------ odds and ends


async def test_transcript_echoes_client_bytes_up_to_a_nul(
    tmp_path: Path, nl2_game: Game
) -> None:
    junk = b"\xff\xfeAB\x00CD\r\n"  # printed with %s: up to the NUL, so no line end
    respond = _on_first_decision(nl2_game, [junk + b"{line}:c\r\n"])
    run = await _play_nl2(tmp_path, respond, 1, quiet=False)
    assert run.returncode == 0, run.err
    assert re.search(rb"\nFROM 2 at \d+\.\d{6} \xff\xfeABWARNING: bad state format in "
                     rb"response\nFROM 2 at ", run.stderr), run.stderr[:2000]


async def test_fixed_seats(tmp_path: Path, nl2_game: Game) -> None:
    run = await play(["f", NL2, "6", "9", "A", "B", "-q", "-f"], [bot(nl2_game)] * 2, tmp_path)
    assert run.returncode == 0, run.err
    lines = log_lines(tmp_path / "f.log")
    assert all(x.endswith(":A|B") for x in state_lines(lines))
    assert all(x.startswith("MATCHSTATE:0:") for x in run.seen[0])
    assert verify_log(nl2_game, tmp_path / "f.log", fixed_seats=True).ok


async def test_start_timeout_ends_a_match_nobody_joins(tmp_path: Path) -> None:
    dealer = await Dealer.start([*_nl2_args("m", 5), "--start_timeout", "300"], tmp_path)
    rc, out, err = await dealer.wait(20)
    assert out == b""
    assert rc == 1
    assert err.endswith(b"#--t_per_hand 7000\nERROR: timed out waiting for seat 1 to connect\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["m", "nosuch.game", "10", "1", "A", "B"], "ERROR: could not read game nosuch.game"),
        (["m", NL2, "0", "1", "A", "B"], "ERROR: invalid number of hands 0"),
        (["m", NL2, "10", "x", "A", "B"], "ERROR: invalid random number seed x"),
        (["m", NL2, "10", "1", "A"], "ERROR: expected 2 player names"),
        (["m", NL2, "10", "1", "A", "B", "-p", "1,x"], "ERROR: bad port string 1,x"),
        (["m", NL2, "10", "1", "A", "B", "--t_hand", "-3"],
         "ERROR: could not get player hand timeout from -3"),
    ],
)
def test_bad_command_lines(args: list[str], message: str, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "dealer.cli", *args], cwd=tmp_path,
                         capture_output=True, text=True, timeout=30, check=False)
    assert out.returncode == 1
    assert out.stderr.startswith(message), out.stderr
    assert out.stdout == ""


def test_uses_uvloop_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("uvloop")
    import dealer.server

    seen: list[str] = []

    async def fake_run_match(config: object, options: object) -> int:
        seen.append(type(asyncio.get_running_loop()).__module__)
        return 0

    monkeypatch.setattr(dealer.server, "run_match", fake_run_match)
    game = load_game(NL2)
    config = MatchConfig(match_name="m", game_file=NL2, game=game, num_hands=1, seed=1,
                         seat_names=("A", "B"))
    assert dealer.server.run(config, dealer.server.ServerOptions()) == 0
    assert seen and seen[0].startswith("uvloop")


@pytest.mark.parametrize("game_name", [NL2, "holdem.nolimit.3p.game"])
async def test_benchmark_call_client_plays_a_clean_match(tmp_path: Path, game_name: str) -> None:
    game = load_game(game_name)
    names = [f"C{i + 1}" for i in range(game.num_players)]
    dealer = await Dealer.start(["b", game_name, "50", "5", *names, "-q"], tmp_path)
    script = ROOT / "scripts" / "call_client.py"
    clients = [
        await asyncio.create_subprocess_exec(
            sys.executable, str(script), game_name, "127.0.0.1", str(port),
            stderr=asyncio.subprocess.PIPE,
        )
        for port in dealer.ports
    ]
    rc, _, err = await dealer.wait(60)
    codes = [await asyncio.wait_for(c.wait(), 30) for c in clients]
    assert rc == 0 and codes == [0] * len(clients), err
    assert b"WARNING" not in err
    lines = state_lines(log_lines(tmp_path / "b.log"))
    assert len(lines) == 50
    assert all(set(x.split(":")[2]) <= set("c/") for x in lines)  # everybody always called


def test_extra_names_are_ignored_like_the_reference_but_said(
        capsys: pytest.CaptureFixture[str]) -> None:
    from dealer.cli import parse_args

    config, _ = parse_args(["m", "leduc.limit.2p.game", "10", "1", "A", "B", "C"])
    assert config.seat_names == ("A", "B")
    assert "WARNING: 3 player names for a 2-player game: C ignored (as the reference dealer " \
        "does)" in capsys.readouterr().err


async def test_a_seat_that_never_connects_is_reported_while_waiting() -> None:
    import io
    import socket

    from dealer.server import _accept_all

    listeners = []
    for _ in range(2):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen()
        s.setblocking(False)
        listeners.append(s)
    first = socket.create_connection(listeners[0].getsockname())
    port = listeners[1].getsockname()[1]  # the dealer closes its listeners once accepted
    err = io.StringIO()

    async def late_second() -> socket.socket:
        await asyncio.sleep(0.3)
        return socket.create_connection(listeners[1].getsockname())

    late = asyncio.ensure_future(late_second())
    conns = await asyncio.wait_for(_accept_all(listeners, -1, err, notice_s=0.05), 10)
    second = await late
    assert conns is not None and len(conns) == 2
    assert "WAITING: seat 2 of 2 has not connected after" in err.getvalue()
    assert f"(ports left: {port})" in err.getvalue()
    for c in [*conns, first, second]:
        c.close()


@pytest.mark.parametrize("io_mode", ["uvloop", "blocking"])
async def test_null_dealer_plays_our_dealers_writes_to_real_clients(
    tmp_path: Path, io_mode: str
) -> None:
    """``bench_dealer.py --part floor``: the schedule is our engine's writes for a match (the
    log lines exactly the engine's), and the null dealer plays it to two clients that answer
    wherever a state says they must act, to the end."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_dealer", ROOT / "scripts" /
                                                  "bench_dealer.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_dealer"] = bench  # its dataclasses look their module up
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        spec.loader.exec_module(bench)
        from null_dealer import LOG, REPLY, read_schedule
    finally:
        sys.path.remove(str(ROOT / "scripts"))
        del sys.modules["bench_dealer"]
    schedule = tmp_path / "floor.schedule"
    count = bench.write_floor_schedule(schedule, 2, 40, 3)
    records = read_schedule(schedule)
    assert len(records) == count
    logged = b"".join(data for kind, _, data in records if kind == LOG).decode("ascii")
    assert len(state_lines(logged.splitlines())) == 40
    assert sum(kind == REPLY for kind, _, _ in records) > 40  # at least one answer a hand

    dealer = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "scripts" / "null_dealer.py"), str(schedule), "--io",
        io_mode, "--log", str(tmp_path / "null.log"), stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    assert dealer.stdout is not None
    ports = (await asyncio.wait_for(dealer.stdout.readline(), 30)).split()
    game_path = str(bundled_game_path(NL2))
    clients = [await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "scripts" / "call_client.py"), game_path, "127.0.0.1",
        port.decode(), stderr=asyncio.subprocess.PIPE) for port in ports]
    _, err = await asyncio.wait_for(dealer.communicate(), 60)
    codes = [await asyncio.wait_for(c.wait(), 30) for c in clients]
    assert dealer.returncode == 0 and codes == [0, 0], err
    assert (tmp_path / "null.log").read_text(encoding="ascii") == logged
