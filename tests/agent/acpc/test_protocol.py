"""Tests of the sans-IO protocol: golden transcript, back-to-back play, every bad line, fuzz."""

from __future__ import annotations

import contextlib
import random
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.acpc.betting import (
    CALL,
    FOLD,
    LIMIT_RAISE,
    Action,
    ActionKind,
    BettingState,
    parse_action,
)
from agent.acpc.dealing import deal_hands
from agent.acpc.errors import LocalProtocolError, RemoteProtocolError
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import MatchState, parse_matchstate, view_of
from agent.acpc.protocol import (
    BAD_ACTION_WARNING,
    BAD_STATE_WARNING,
    NEED_DATA,
    UNREQUESTED_WARNING,
    UNSUPPORTED_VERSION_ERROR,
    VERSION_LINE,
    ActionReceived,
    BadStateFormat,
    BadVersion,
    ClientClosed,
    ClientConnection,
    ClientEvent,
    CommentReceived,
    CommentSkipped,
    ConnectionClosed,
    DealerConnection,
    DealerEvent,
    DealerPhase,
    StateReceived,
    StateRepeated,
    UnrequestedResponse,
    VersionReceived,
)
from tests.support import LOGS

INVALID = "WARNING: invalid action, changed to call"

# --------------------------------------------------------------------------- helpers

Chunker = Callable[[bytes], Iterator[bytes]]


def whole(data: bytes) -> Iterator[bytes]:
    yield data


def bytewise(data: bytes) -> Iterator[bytes]:
    for i in range(len(data)):
        yield data[i : i + 1]


def random_chunks(data: bytes, seed: int = 7) -> Iterator[bytes]:
    rng = random.Random(seed)
    i = 0
    while i < len(data):
        k = rng.randint(1, 9)
        yield data[i : i + k]
        i += k


CHUNKERS: dict[str, Chunker] = {
    "whole": whole,
    "bytewise": bytewise,
    "random": random_chunks,
}


def r(n: int) -> Action:
    return Action(ActionKind.RAISE, n)


def drain(conn: DealerConnection) -> list[DealerEvent]:
    """Events until NEED_DATA or a fatal event."""
    out: list[DealerEvent] = []
    while True:
        ev = conn.next_event()
        if ev is NEED_DATA:
            return out
        out.append(ev)
        if ev.error is not None:
            return out


def drain_client(conn: ClientConnection) -> list[ClientEvent]:
    out: list[ClientEvent] = []
    while True:
        ev = conn.next_event()
        if ev is NEED_DATA:
            return out
        out.append(ev)
        if isinstance(ev, ConnectionClosed):
            return out


def feed_dealer(conn: DealerConnection, data: bytes, chunker: Chunker = whole) -> list[DealerEvent]:
    out: list[DealerEvent] = []
    for chunk in chunker(data):
        conn.receive_data(chunk)
        out.extend(drain(conn))
    return out


def feed_client(conn: ClientConnection, data: bytes, chunker: Chunker = whole) -> list[ClientEvent]:
    out: list[ClientEvent] = []
    for chunk in chunker(data):
        conn.receive_data(chunk)
        out.extend(drain_client(conn))
    return out


def ready_dealer(game: Game, seat: int = 0) -> DealerConnection:
    conn = DealerConnection(game, seat)
    conn.receive_data(VERSION_LINE)
    ev = conn.next_event()
    assert isinstance(ev, VersionReceived) and ev.supported
    return conn


def to_act(game: Game, text: str, seat: int = 0) -> DealerConnection:
    """A dealer connection that has sent ``text`` (a state the seat must answer)."""
    conn = ready_dealer(game, seat)
    ms = parse_matchstate(text, game)
    assert ms.is_to_act
    assert conn.send_state(ms) == (text + "\r\n").encode()
    assert conn.is_to_act and conn.phase is DealerPhase.AWAIT_RESPONSE
    return conn


def answer(game: Game, state_text: str, *lines: str) -> list[DealerEvent]:
    conn = to_act(game, state_text)
    return feed_dealer(conn, "".join(lines).encode("latin-1"))


@pytest.fixture(scope="module")
def nl() -> Game:
    return load_game("holdem.nolimit.2p.reverse_blinds.game")


@pytest.fixture(scope="module")
def lim3() -> Game:
    return load_game("holdem.limit.3p.game")


# The first state of the golden transcript for seat 2 (position 1 acts first preflop).
S0 = "MATCHSTATE:1:0::|2hAc"
SB = "MATCHSTATE:1:0:cr300:|2hAc"  # position 1 to act again after the big blind raised


# --------------------------------------------------------------------------- golden transcript


@dataclass(frozen=True)
class Record:
    direction: str  # "TO" or "FROM"
    seat: int  # 0-based
    wire: bytes  # the line as sent on the wire, '\r\n' included


def transcript() -> list[Record]:
    records = []
    with open(LOGS / "nl1000.transcript.txt", "rb") as f:
        for raw in f:
            if raw.startswith((b"TO ", b"FROM ")):
                direction, seat, _at, _time, line = raw.split(b" ", 4)
                assert line.endswith(b"\r\n")
                records.append(Record(direction.decode(), int(seat) - 1, line))
    return records


def test_transcript_shape() -> None:
    records = transcript()
    assert len(records) == 53
    assert sum(r.direction == "FROM" for r in records) == 17
    assert {r.seat for r in records} == {0, 1}


@pytest.mark.parametrize("chunking", sorted(CHUNKERS))
def test_golden_transcript_dealer(nl: Game, chunking: str) -> None:
    records = transcript()
    dealers = [ready_dealer(nl, s) for s in range(2)]
    replayed: BettingState | None = None  # the rules' state after the last action
    unchecked: set[int] = set()
    from_count = 0
    for rec in records:
        conn = dealers[rec.seat]
        if rec.direction == "TO":
            text = rec.wire[:-2].decode("ascii")
            ms = parse_matchstate(text, nl)
            if rec.seat in unchecked:
                # The state sent after an action is the one the rules give.
                assert replayed is not None
                assert ms.state.actions == replayed.actions
                assert ms.state.betting == replayed.betting
                unchecked.discard(rec.seat)
            assert conn.send_state(ms) == rec.wire
            assert conn.last_line == text and conn.last_state == ms
        else:
            from_count += 1
            assert conn.is_to_act
            assert not dealers[1 - rec.seat].is_to_act
            events = feed_dealer(conn, rec.wire, CHUNKERS[chunking])
            assert len(events) == 1
            ev = events[0]
            assert isinstance(ev, ActionReceived)
            assert ev.line == rec.wire.decode("latin-1")
            assert ev.warnings == () and ev.error is None
            assert ev.is_response and ev.checks_time
            sent = conn.last_state
            assert sent is not None
            action_text = rec.wire[len(conn.last_line) + 1 : -2].decode()
            assert ev.action == parse_action(action_text, nl)
            assert not conn.is_to_act
            replayed = sent.state.apply(ev.action)
            unchecked = {0, 1}
    assert from_count == 17


@pytest.mark.parametrize("chunking", sorted(CHUNKERS))
def test_golden_transcript_client(nl: Game, chunking: str) -> None:
    records = transcript()
    clients = [ClientConnection(nl) for _ in range(2)]
    for c in clients:
        assert c.initiate() == VERSION_LINE
    answered = 0
    for i, rec in enumerate(records):
        if rec.direction != "TO":
            continue
        client = clients[rec.seat]
        events = feed_client(client, rec.wire, CHUNKERS[chunking])
        assert len(events) == 1
        ev = events[0]
        assert isinstance(ev, StateReceived)
        assert ev.line == rec.wire[:-2].decode()
        # Who answers next: a FROM of this seat before the next TO to this seat.
        reply = None
        for later in records[i + 1 :]:
            if later.seat != rec.seat:
                continue
            if later.direction == "FROM":
                reply = later
            break
        assert client.is_to_act == (reply is not None)
        assert ev.is_to_act == (reply is not None)
        if reply is not None:
            action_text = reply.wire[len(ev.line) + 1 : -2].decode()
            assert client.send_action(parse_action(action_text, nl)) == reply.wire
            assert not client.is_to_act
            answered += 1
    assert answered == 17


def test_golden_transcript_client_whole_stream_with_trailing_data(nl: Game) -> None:
    records = transcript()
    stream = b"".join(rec.wire for rec in records if rec.direction == "TO" and rec.seat == 0)
    client = ClientConnection(nl)
    client.initiate()
    events = feed_client(client, stream + b"MATCHSTATE:0:1:c")
    assert len(events) == sum(1 for r in records if r.direction == "TO" and r.seat == 0)
    assert all(isinstance(e, StateReceived) for e in events)
    assert client.next_event() is NEED_DATA  # the partial line waits for more


# --------------------------------------------------------------------------- back to back


def random_action(state: BettingState, rng: random.Random) -> Action:
    kinds = state.legal_actions()
    kind = rng.choice(kinds)
    if kind is ActionKind.FOLD:
        return FOLD
    if kind is ActionKind.CALL:
        return CALL
    if not state.game.is_nolimit:
        return LIMIT_RAISE
    bounds = state.raise_bounds()
    assert bounds is not None
    lo, hi = bounds
    return r(rng.choice([lo, hi, rng.randint(lo, hi)]))


def play_back_to_back(game: Game, hands: int, seed: int, chunker: Chunker) -> int:
    """Play ``hands`` hands between ClientConnections and DealerConnections; return actions."""
    rng = random.Random(seed)
    n = game.num_players
    clients = [ClientConnection(game) for _ in range(n)]
    dealers = [DealerConnection(game, s) for s in range(n)]
    for s in range(n):
        assert feed_dealer(dealers[s], clients[s].initiate(), chunker)[0] == VersionReceived(
            "VERSION:2.0.0\r\n", 2, 0, 0, True
        )
    deals = deal_hands(game, seed)
    actions = 0
    for hand in range(hands):
        deal = next(deals)
        state = BettingState.initial(game)
        while True:
            for s in range(n):
                position = (s - hand) % n
                ms = view_of(position, hand, state, deal.hole, deal.board)
                wire = dealers[s].send_state(ms)
                received = feed_client(clients[s], wire, chunker)
                assert len(received) == 1 and isinstance(received[0], StateReceived)
                got = received[0].state
                assert got.state.actions == state.actions and got.board == ms.board
                assert clients[s].is_to_act == (not state.finished and state.player == position)
                assert dealers[s].is_to_act == clients[s].is_to_act
            if state.finished:
                break
            seat = (state.player + hand) % n
            action = random_action(state, rng)
            wire = clients[seat].send_action(action)
            events = feed_dealer(dealers[seat], wire, chunker)
            assert len(events) == 1
            ev = events[0]
            assert isinstance(ev, ActionReceived) and ev.warnings == ()
            assert ev.action == action
            state = state.apply(ev.action)
            actions += 1
    for s in range(n):
        clients[s].receive_data(b"")
        assert drain_client(clients[s]) == [ConnectionClosed()]
        assert clients[s].next_event() == ConnectionClosed()
    return actions


@pytest.mark.parametrize(
    ("name", "hands"),
    [
        ("holdem.nolimit.2p.reverse_blinds.game", 30),
        ("holdem.limit.3p.game", 15),
        ("leduc.limit.2p.game", 30),
        ("kuhn.limit.3p.game", 20),
        ("holdem.nolimit.6p.game", 6),
    ],
)
@pytest.mark.parametrize("chunking", ["whole", "random"])
def test_back_to_back(name: str, hands: int, chunking: str) -> None:
    assert play_back_to_back(load_game(name), hands, 42, CHUNKERS[chunking]) > hands


def test_back_to_back_bytewise(nl: Game) -> None:
    assert play_back_to_back(nl, 3, 5, bytewise) > 3


# --------------------------------------------------------------------------- version line


@pytest.mark.parametrize(
    ("line", "numbers", "supported"),
    [
        ("VERSION:2.0.0\r\n", (2, 0, 0), True),
        ("VERSION:2.0.0\n", (2, 0, 0), True),
        ("VERSION:2.0.7 and more\r\n", (2, 0, 7), True),
        ("VERSION: 2.\t0.+0\r\n", (2, 0, 0), True),  # %u skips white space, takes a sign
        ("VERSION:002.000.000\r\n", (2, 0, 0), True),
        ("VERSION:2.1.0\r\n", (2, 1, 0), False),
        ("VERSION:1.0.0\r\n", (1, 0, 0), False),
        ("VERSION:3.0.0\r\n", (3, 0, 0), False),
        ("VERSION:-1.0.0\r\n", (2**32 - 1, 0, 0), False),
        ("VERSION:4294967298.0.0\r\n", (2, 0, 0), True),  # stored in 32 bits
        ("VERSION:99999999999999999999999.0.0\r\n", (2**32 - 1, 0, 0), False),
    ],
)
def test_version_received(
    nl: Game, line: str, numbers: tuple[int, int, int], supported: bool
) -> None:
    for chunker in CHUNKERS.values():
        conn = DealerConnection(nl, 1)
        events = feed_dealer(conn, line.encode() + b"MATCHSTATE:trailing", chunker)
        assert events == [VersionReceived(line, *numbers, supported)]
        ev = events[0]
        assert isinstance(ev, VersionReceived)
        assert ev.warnings == (() if supported else (UNSUPPORTED_VERSION_ERROR,))
        assert ev.error is None and not ev.is_response
        assert conn.version == ev and conn.phase is DealerPhase.IDLE
        # Play goes on even with an unsupported version; the trailing bytes stay buffered.
        assert conn.buffered_bytes == len(b"MATCHSTATE:trailing")
        assert conn.send_state(parse_matchstate("MATCHSTATE:0:0::7d3d|", nl))
        assert conn.next_event() is NEED_DATA


@pytest.mark.parametrize(
    "line",
    [
        "VERSION:2.0\r\n",
        "VERSION:2.0.\r\n",
        "VERSION:2.0.x\r\n",
        "VERSION:2 .0.0\r\n",
        "version:2.0.0\r\n",
        " VERSION:2.0.0\r\n",
        "# VERSION:2.0.0\r\n",  # comments are not skipped before the version
        "\r\n",
        "MATCHSTATE:0:0::7d3d|:c\r\n",
        "VERSION:2.0\x00.0\r\n",
        "VERSION:\xff\r\n",
    ],
)
def test_bad_version_is_fatal(nl: Game, line: str) -> None:
    conn = DealerConnection(nl, 1)
    events = feed_dealer(conn, line.encode("latin-1"))
    assert events == [BadVersion(line)]
    ev = events[0]
    text = line.partition("\x00")[0]
    assert ev.error == "ERROR: invalid version string " + text.removesuffix("\n")
    assert conn.phase is DealerPhase.ERROR
    assert conn.next_event() == ev  # sticky
    with pytest.raises(LocalProtocolError, match="live connection"):
        conn.send_state(parse_matchstate("MATCHSTATE:0:0::7d3d|", nl))


def test_version_eof(nl: Game) -> None:
    conn = DealerConnection(nl, 2)
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"")
    ev = conn.next_event()
    assert ev == ClientClosed("ERROR: could not read version string from seat 3")
    assert conn.next_event() == ev and conn.phase is DealerPhase.CLOSED
    # A partial version line at end of file is still a line (then end of file).
    conn = DealerConnection(nl, 0)
    conn.receive_data(b"VERSION:2.0.0")
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"")
    assert conn.next_event() == VersionReceived("VERSION:2.0.0", 2, 0, 0, True)
    assert conn.next_event() is NEED_DATA  # not to act: nothing to read yet


def test_send_state_misuse(nl: Game) -> None:
    conn = DealerConnection(nl, 0)
    ms = parse_matchstate(S0, nl)
    with pytest.raises(LocalProtocolError, match="version line"):
        conn.send_state(ms)
    conn = to_act(nl, S0)
    with pytest.raises(LocalProtocolError, match="to answer"):
        conn.send_state(ms)


# --------------------------------------------------------------------------- bad responses


def test_comment_skipped_then_action(nl: Game) -> None:
    events = answer(nl, S0, "# a comment\r\n", "; another\n", S0 + ":c\r\n")
    assert events == [
        CommentSkipped("# a comment\r\n"),
        CommentSkipped("; another\n"),
        ActionReceived(S0 + ":c\r\n", CALL),
    ]
    assert [(e.is_response, e.checks_time, e.warnings) for e in events[:2]] == [
        (True, False, ()),
        (True, False, ()),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "garbage\r\n",
        "\r\n",
        "\n",
        " MATCHSTATE:1:0::|2hAc:c\r\n",
        "MATCHSTATE:1:0:x:|2hAc:c\r\n",
        "MATCHSTATE:2:0::|2hAc:c\r\n",  # no position 2 in a 2-player game
        "MATCHSTATE:1::c:|2hAc:c\r\n",
        "MATCHSTATE:1:0:r100:|2hAc:c\r\n",  # illegal betting as written (below the minimum)
        "MATCHSTATE:1:0::|2hA:c\r\n",
        "\xffMATCHSTATE:1:0::|2hAc:c\r\n",
    ],
)
def test_bad_state_format(nl: Game, line: str) -> None:
    events = answer(nl, S0, line, S0 + ":f\r\n")
    assert isinstance(events[0], BadStateFormat) and events[0].line == line
    assert events[0].warnings == (BAD_STATE_WARNING,) and events[0].reason
    assert events[0].is_response and events[0].checks_time and events[0].error is None
    assert events[1:] == [ActionReceived(S0 + ":f\r\n", FOLD)]


@pytest.mark.parametrize(
    "line",
    [
        "MATCHSTATE:1:0:c:|2hAc:c\r\n",  # a later state
        "MATCHSTATE:1:1::|2hAc:c\r\n",  # another hand
        "MATCHSTATE:0:0::7d3d|:c\r\n",  # another position
        "MATCHSTATE:1:0::|2hAd:c\r\n",  # other hole cards
        "MATCHSTATE:1:0::|:c\r\n",  # no hole cards
        "MATCHSTATE:1:0:f:|2hAc:c\r\n",  # a legal betting, but not the state sent
    ],
)
def test_unrequested_response(nl: Game, line: str) -> None:
    events = answer(nl, S0, line, S0 + ":c\r\n")
    assert events == [UnrequestedResponse(line), ActionReceived(S0 + ":c\r\n", CALL)]
    assert events[0].warnings == (UNREQUESTED_WARNING,)


def test_stale_state_is_unrequested(nl: Game) -> None:
    conn = to_act(nl, "MATCHSTATE:0:0:c:7d3d|")
    events = feed_dealer(conn, b"MATCHSTATE:0:0::7d3d|:c\r\nMATCHSTATE:0:0:c:7d3d|:r300\r\n")
    assert events == [
        UnrequestedResponse("MATCHSTATE:0:0::7d3d|:c\r\n"),
        ActionReceived("MATCHSTATE:0:0:c:7d3d|:r300\r\n", r(300)),
    ]


@pytest.mark.parametrize(
    ("line", "warnings"),
    [
        ("MATCHSTATE:1:0:cr300:9h6s|2hAc:c\r\n", ()),  # other players' cards not compared
        ("MATCHSTATE:1:0:kR300:|2hAc:c\r\n", ()),  # 'k' equals 'c', 'R' equals 'r'
        ("MATCHSTATE:1:0:cr300:|2HAC:c\r\n", ()),  # card case
        ("MATCHSTATE:1:0:c/r300:|2hAc:c\r\n", ()),  # '/' inside the betting is skipped
        ("MATCHSTATE:1:0:cr300:|2hAc/:c\r\n", (BAD_ACTION_WARNING,)),  # state ends before '/'
        ("MATCHSTATE:1:0:cr300:|2hAc2h:c\r\n", (BAD_ACTION_WARNING,)),
    ],
)
def test_semantically_equal_state_accepted(nl: Game, line: str, warnings: tuple[str, ...]) -> None:
    assert answer(nl, SB, line) == [ActionReceived(line, CALL, warnings)]


@pytest.mark.parametrize(
    "tail",
    [
        "\r\n",  # no ':' at all
        " c\r\n",  # not ':'
        ":\r\n",  # nothing after ':'
        ":x\r\n",  # unknown action character
        ":r\r\n",  # no size in no-limit
        ":rx300\r\n",
        ":r \r\n",
        ":\xe9\r\n",
        ":",  # end of file right after ':' (a partial last line)
    ],
)
def test_bad_action_format_becomes_call(nl: Game, tail: str) -> None:
    events = answer(nl, S0, S0 + tail)
    if not tail.endswith("\n"):
        assert events == []  # a partial line waits for more data or end of file
        conn = to_act(nl, S0)
        conn.receive_data((S0 + tail).encode("latin-1"))
        conn.receive_data(b"")
        events = drain(conn)
        # The partial line is a line; the end of file shows the next time the seat acts.
        conn.send_state(parse_matchstate(SB, nl))
        assert drain(conn) == [ClientClosed("ERROR: could not get action from seat 1")]
    assert events == [ActionReceived(S0 + tail, CALL, (BAD_ACTION_WARNING,))]


@pytest.mark.parametrize(
    ("tail", "action"),
    [
        (":c\r\n", CALL),
        (":C\r\n", CALL),
        (":k\r\n", CALL),
        (":K\r\n", CALL),
        (":f\r\n", FOLD),
        (":F\r\n", FOLD),
        (":r300\r\n", r(300)),
        (":R300\r\n", r(300)),
        (":b 300\r\n", r(300)),
        (":B+300\r\n", r(300)),
        (":r300xyz\r\n", r(300)),  # characters after the action are ignored
        (":c with junk\n", CALL),
        (":c", CALL),  # only at end of file, see below
    ],
)
def test_action_characters(nl: Game, tail: str, action: Action) -> None:
    conn = to_act(nl, S0)
    conn.receive_data((S0 + tail).encode())
    if not tail.endswith("\n"):
        assert conn.next_event() is NEED_DATA
        conn.receive_data(b"")
    assert conn.next_event() == ActionReceived(S0 + tail, action)


def test_invalid_fold_becomes_call(nl: Game) -> None:
    # Position 0 (big blind) after the small blind called: checking is free.
    events = answer(nl, "MATCHSTATE:0:0:c:7d3d|", "MATCHSTATE:0:0:c:7d3d|:f\r\n")
    assert events == [ActionReceived("MATCHSTATE:0:0:c:7d3d|:f\r\n", CALL, (INVALID,))]


def test_raise_beyond_max_raises_becomes_call(leduc: Game) -> None:
    text = "MATCHSTATE:0:0:rr:Qh|"
    ms = parse_matchstate(text, leduc)
    assert ms.is_to_act and ms.state.raise_bounds() is None
    events = answer(leduc, text, text + ":r\r\n")
    assert events == [ActionReceived(text + ":r\r\n", CALL, (INVALID,))]
    # A legal limit raise needs no size.
    events = answer(leduc, "MATCHSTATE:1:0:r:|Qh", "MATCHSTATE:1:0:r:|Qh:r\r\n")
    assert events == [ActionReceived("MATCHSTATE:1:0:r:|Qh:r\r\n", LIMIT_RAISE)]


@pytest.mark.parametrize(
    ("size", "fixed", "warning"),
    [
        (150, 200, "WARNING: raise of 150 increased to 200"),
        (0, 200, "WARNING: raise of 0 increased to 200"),
        (-5, 200, "WARNING: raise of -5 increased to 200"),
        (30000, 20000, "WARNING: raise of 30000 decreased to 20000"),
        (200, 200, None),
        (20000, 20000, None),
    ],
)
def test_raise_fix_ups(nl: Game, size: int, fixed: int, warning: str | None) -> None:
    line = f"{S0}:r{size}\r\n"
    events = answer(nl, S0, line)
    assert events == [ActionReceived(line, r(fixed), () if warning is None else (warning,))]


def test_lines_sent_out_of_turn_wait_and_are_skipped(nl: Game) -> None:
    conn = ready_dealer(nl, 1)
    # Seat 2 plays position 0 in hand 0 and is not to act first.
    conn.send_state(parse_matchstate("MATCHSTATE:0:0::7d3d|", nl))
    early = b"MATCHSTATE:0:0::7d3d|:r500\r\n# chatter\r\n"
    conn.receive_data(early)
    assert conn.next_event() is NEED_DATA  # not to act: nothing is read
    assert conn.buffered_bytes == len(early)
    conn.send_state(parse_matchstate("MATCHSTATE:0:0:c:7d3d|", nl))
    conn.receive_data(b"MATCHSTATE:0:0:c:7d3d|:c\r\n")
    assert drain(conn) == [
        UnrequestedResponse("MATCHSTATE:0:0::7d3d|:r500\r\n"),
        CommentSkipped("# chatter\r\n"),
        ActionReceived("MATCHSTATE:0:0:c:7d3d|:c\r\n", CALL),
    ]
    assert conn.buffered_bytes == 0


def test_answer_and_more_in_one_packet(nl: Game) -> None:
    # Everything after the answer stays buffered until the seat must act again.
    conn = to_act(nl, S0)
    conn.receive_data((S0 + ":c\r\n" + S0 + ":r999\r\n").encode())
    assert drain(conn) == [ActionReceived(S0 + ":c\r\n", CALL)]
    assert conn.buffered_bytes == len(S0) + 7
    conn.send_state(parse_matchstate("MATCHSTATE:1:0:cr300:|2hAc", nl))
    assert drain(conn) == [UnrequestedResponse(S0 + ":r999\r\n")]


def test_4095_byte_chunking_of_a_huge_line(nl: Game) -> None:
    conn = to_act(nl, S0)
    size = 1_000_000
    tracemalloc.start()
    conn.receive_data(b"A" * size + b"\n")
    conn.receive_data((S0 + ":c\r\n").encode())
    events = drain(conn)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    full, rest = divmod(size, 4095)
    assert len(events) == full + 2
    assert all(isinstance(e, BadStateFormat) for e in events[:-1])
    assert [len(e.line) for e in events[:-1]] == [4095] * full + [rest + 1]
    assert "".join(e.line for e in events[:-1]) == "A" * size + "\n"
    assert events[-1] == ActionReceived(S0 + ":c\r\n", CALL)
    assert peak < 8 * size  # the buffer is compacted, not copied per line


def test_4095_byte_boundaries(nl: Game) -> None:
    # 4094 characters + '\n' is one line; 4095 + '\n' is a line and then a line "\n".
    for n, lengths in [(4094, [4095]), (4095, [4095, 1]), (4096, [4095, 2])]:
        conn = to_act(nl, S0)
        conn.receive_data(b"x" * n + b"\n" + (S0 + ":c\r\n").encode())
        events = drain(conn)
        assert [len(e.line) for e in events[:-1]] == lengths
        assert events[-1] == ActionReceived(S0 + ":c\r\n", CALL)


def test_long_valid_response_is_cut_at_4095(nl: Game) -> None:
    # The first 4095 bytes hold a valid answer (the rest is ignored as trailing text); the
    # remainder is read as later lines, the next time the seat must act.
    conn = to_act(nl, S0)
    line = (S0 + ":c" + "z" * 5000 + "\r\n").encode()
    conn.receive_data(line)
    events = drain(conn)
    assert events == [ActionReceived(line[:4095].decode(), CALL)]
    assert conn.buffered_bytes == len(line) - 4095
    conn.send_state(parse_matchstate("MATCHSTATE:1:0:cr300:|2hAc", nl))
    events = drain(conn)
    assert len(events) == 1 and isinstance(events[0], BadStateFormat)
    assert events[0].line == line[4095:].decode()


def test_eof_mid_line_and_after(nl: Game) -> None:
    conn = to_act(nl, S0)
    conn.receive_data(b"MATCHST")
    assert conn.next_event() is NEED_DATA
    conn.receive_data(b"")
    conn.receive_data(b"")  # repeated end of file is harmless
    assert conn.eof_received
    events = drain(conn)
    assert isinstance(events[0], BadStateFormat) and events[0].line == "MATCHST"
    closed = ClientClosed("ERROR: could not get action from seat 1")
    assert events[1:] == [closed]
    assert closed.error is not None and not closed.is_response and closed.line == ""
    assert conn.next_event() == closed and conn.phase is DealerPhase.CLOSED
    with pytest.raises(LocalProtocolError, match="after end of file"):
        conn.receive_data(b"more")


def test_eof_while_not_to_act_is_reported_when_needed(nl: Game) -> None:
    conn = ready_dealer(nl, 1)
    conn.send_state(parse_matchstate("MATCHSTATE:0:0::7d3d|", nl))
    conn.receive_data(b"")
    assert conn.next_event() is NEED_DATA
    conn.send_state(parse_matchstate("MATCHSTATE:0:0:c:7d3d|", nl))
    assert conn.next_event() == ClientClosed("ERROR: could not get action from seat 2")


def test_nul_bytes_and_latin1(nl: Game) -> None:
    line = S0 + "\x00:c\r\n"  # the C string ends at the NUL: no ':' after the state
    assert answer(nl, S0, line) == [ActionReceived(line, CALL, (BAD_ACTION_WARNING,))]
    raw = bytes(range(256)).replace(b"\n", b"") + b"\n"
    events = answer(nl, S0, raw.decode("latin-1"))
    assert len(events) == 1 and isinstance(events[0], BadStateFormat)
    assert events[0].line.encode("latin-1") == raw


# --------------------------------------------------------------------------- client side


def client_with(game: Game, *lines: str) -> ClientConnection:
    conn = ClientConnection(game)
    conn.initiate()
    for line in lines:
        conn.receive_data(line.encode())
    return conn


def test_client_events_and_line_ends(nl: Game) -> None:
    conn = client_with(nl, "# hello\r\n", "; x\n", S0 + "\n", "MATCHSTATE:1:0:cr300:|2hAc\r\n")
    events = drain_client(conn)
    assert events[:2] == [CommentReceived("# hello"), CommentReceived("; x")]
    assert isinstance(events[2], StateReceived) and events[2].line == S0
    assert isinstance(events[3], StateReceived) and events[3].is_to_act
    assert conn.last_line == "MATCHSTATE:1:0:cr300:|2hAc"
    assert conn.send_action(r(600)) == b"MATCHSTATE:1:0:cr300:|2hAc:r600\r\n"


def test_client_initiate_once(nl: Game) -> None:
    conn = ClientConnection(nl)
    assert conn.initiate() == b"VERSION:2.0.0\r\n"
    with pytest.raises(LocalProtocolError, match="once"):
        conn.initiate()


def test_client_send_action_errors(nl: Game, leduc: Game) -> None:
    conn = ClientConnection(nl)
    conn.receive_data((S0 + "\r\n").encode())
    assert isinstance(conn.next_event(), StateReceived)
    with pytest.raises(LocalProtocolError, match="initiate"):
        conn.send_action(CALL)
    conn = client_with(nl)
    with pytest.raises(LocalProtocolError, match="before any state"):
        conn.send_action(CALL)
    conn = client_with(nl, "MATCHSTATE:0:0::7d3d|\r\n")
    drain_client(conn)
    assert not conn.is_to_act
    with pytest.raises(LocalProtocolError, match="position 1 is to act"):
        conn.send_action(CALL)
    conn = client_with(nl, "MATCHSTATE:0:0:f:7d3d|\r\n")
    drain_client(conn)
    with pytest.raises(LocalProtocolError, match="final state"):
        conn.send_action(CALL)
    conn = client_with(nl, "MATCHSTATE:0:0:c:7d3d|\r\n")
    drain_client(conn)
    with pytest.raises(LocalProtocolError, match="fold is not legal"):
        conn.send_action(FOLD)
    with pytest.raises(LocalProtocolError, match="between 200 and 20000"):
        conn.send_action(r(150))
    assert conn.is_to_act  # a refused action sends nothing and changes nothing
    assert conn.send_action(CALL) == b"MATCHSTATE:0:0:c:7d3d|:c\r\n"
    with pytest.raises(LocalProtocolError, match="second action"):
        conn.send_action(CALL)
    conn = client_with(leduc, "MATCHSTATE:0:0:rr:Qh|\r\n")
    drain_client(conn)
    with pytest.raises(LocalProtocolError, match="maximum of 2 raises"):
        conn.send_action(LIMIT_RAISE)
    conn = client_with(leduc, "MATCHSTATE:0:0::Qh|\r\n")
    drain_client(conn)
    assert conn.send_action(LIMIT_RAISE) == b"MATCHSTATE:0:0::Qh|:r\r\n"
    conn = client_with(nl, S0 + "\r\n")
    drain_client(conn)
    conn.receive_data(b"")
    assert drain_client(conn) == [ConnectionClosed()]
    assert conn.is_closed and not conn.is_to_act
    with pytest.raises(LocalProtocolError, match="closed"):
        conn.send_action(CALL)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"MATCHSTATE:1:0::|2hAc\r\r\n", "MATCHSTATE"),  # only one '\r' is stripped
        (b"MATCHSTATE:1:0:r100:|2hAc\r\n", "MATCHSTATE"),
        (b"MATCHSTATE:1:0::|2hAc:c\r\n", "MATCHSTATE"),
        (b"garbage\r\n", "MATCHSTATE"),
        (b"\r\n", "MATCHSTATE"),
        (b"VERSION:2.0.0\r\n", "MATCHSTATE"),
        (b"MATCHSTATE:1:0::|2h\xc3\xa9\r\n", "ASCII"),
        (b"# " + b"x" * 5000, "at most 4096"),
        (b"MATCHSTATE:1:0::|2hAc", "before end of file"),
    ],
)
def test_client_remote_errors(nl: Game, data: bytes, match: str) -> None:
    conn = client_with(nl)
    conn.receive_data(data)
    if match == "before end of file":
        assert conn.next_event() is NEED_DATA
        conn.receive_data(b"")
    with pytest.raises(RemoteProtocolError, match=match):
        conn.next_event()
    assert conn.is_error
    for call in (conn.next_event, lambda: conn.receive_data(b"x"), lambda: conn.send_action(CALL)):
        with pytest.raises(RemoteProtocolError, match="ERROR state"):
            call()


@pytest.mark.parametrize("cards", ["|Qc", "|2h", "|Ac", "|Th", "Kh|Qs/Js", "Kh|Qs/Kd"])
def test_client_refuses_cards_outside_the_deck(cards: str) -> None:
    """Leduc's deck is Q, K, A of hearts and spades: another rank or suit is a protocol
    error with its own message (before issue 28, ``|Qc`` was played and ``|2h`` was left
    to the policy)."""
    leduc_nl = load_game("leduc.nolimit.2p.game")
    betting = "cc/" if "/" in cards else "r10"
    conn = client_with(leduc_nl, f"MATCHSTATE:1:3:{betting}:{cards}\r\n")
    with pytest.raises(RemoteProtocolError, match=r"expected cards of the game's deck "
                       r"\(ranks QKA, suits hs\), got '(Qc|2h|Ac|Th|Js|Kd)'"):
        conn.next_event()
    assert conn.is_error
    ok = client_with(leduc_nl, "MATCHSTATE:1:3:r10:|Qh\r\n", "MATCHSTATE:1:4:cc/:|Qs/As\r\n")
    assert [type(e) for e in drain_client(ok)] == [StateReceived, StateReceived]


L_FINAL = "MATCHSTATE:0:5:cc/cc:Kh|Qh/Qs"
"""A Leduc final state (a showdown) of hand 5."""


@pytest.mark.parametrize(
    ("lines", "match"),
    [
        # a new hand with the number of the hand that just ended (the case)
        ([L_FINAL, "MATCHSTATE:1:5::|Ah"], "expected a new hand number after the final "
         "state of hand 5, got hand 5 again"),
        ([L_FINAL, "MATCHSTATE:0:5::Ks|"], "got hand 5 again"),
        ([L_FINAL, "MATCHSTATE:0:5:cc/cc:Kh|Ah/Qs"], "got hand 5 again"),
        # hand numbers going back, after a final state or in the middle of a hand
        ([L_FINAL, "MATCHSTATE:0:4::Kh|"], "never go back, got hand 4 after hand 5"),
        (["MATCHSTATE:0:5:c:Kh|", "MATCHSTATE:1:0::|Kh"], "never go back, got hand 0"),
        # a state of the hand in progress that does not go on from the last one
        (["MATCHSTATE:0:5:cc/c:Kh|/Qs", "MATCHSTATE:0:5:cc/:Kh|/Qs"],
         "expected hand 5 to go on from betting 'cc/c'"),
        (["MATCHSTATE:0:5:c:Kh|", "MATCHSTATE:0:5:cr:Ah|"], "to go on from betting 'c'"),
        (["MATCHSTATE:0:5:c:Kh|", "MATCHSTATE:1:5:cr:|Kh"], "to go on from betting 'c'"),
        (["MATCHSTATE:0:5:cc/:Kh|/Qs", "MATCHSTATE:0:5:cc/r:Kh|/As"], "to go on"),
        (["MATCHSTATE:0:5:r:Kh|", "MATCHSTATE:0:5:c:Kh|"], "to go on from betting 'r'"),
    ],
)
def test_client_refuses_hands_out_of_order(leduc: Game, lines: list[str], match: str) -> None:
    conn = client_with(leduc, *(x + "\r\n" for x in lines))
    assert isinstance(conn.next_event(), StateReceived)
    with pytest.raises(RemoteProtocolError, match=match):
        conn.next_event()
    assert conn.is_error


def test_client_repeated_state_is_its_own_event(leduc: Game) -> None:
    """The same state again (a repeated final state, or a state to act in that was already
    answered) is :class:`StateRepeated`: not a new state, not ours to answer again."""
    conn = client_with(leduc, "MATCHSTATE:0:5::Kh|\r\n", "MATCHSTATE:0:5::Kh|\r\n")
    assert isinstance(conn.next_event(), StateReceived) and conn.is_to_act
    conn.send_action(CALL)
    assert conn.next_event() == StateRepeated("MATCHSTATE:0:5::Kh|")
    assert not conn.is_to_act
    conn.receive_data(f"{L_FINAL}\r\n{L_FINAL}\n{L_FINAL}\r\nMATCHSTATE:1:6::|Ah\r\n".encode())
    events = drain_client(conn)
    assert events == [StateReceived(parse_matchstate(L_FINAL, leduc), L_FINAL),
                      StateRepeated(L_FINAL), StateRepeated(L_FINAL),
                      StateReceived(parse_matchstate("MATCHSTATE:1:6::|Ah", leduc),
                                    "MATCHSTATE:1:6::|Ah")]
    assert conn.last_line == "MATCHSTATE:1:6::|Ah" and not conn.is_error


def test_client_line_length_cap(nl: Game) -> None:
    ok = b"#" + b"x" * 4093 + b"\r\n"  # 4096 bytes with its line end
    conn = client_with(nl)
    conn.receive_data(ok)
    assert conn.next_event() == CommentReceived(ok[:-2].decode())
    conn = client_with(nl)
    conn.receive_data(b"#" + b"x" * 4095)  # 4096 bytes and still no '\n'
    with pytest.raises(RemoteProtocolError, match="at most 4096"):
        conn.next_event()
    conn = client_with(nl)
    conn.receive_data(b"#" + b"x" * 4094)  # 4095 bytes: could still end in time
    assert conn.next_event() is NEED_DATA


def test_client_receive_after_eof(nl: Game) -> None:
    conn = client_with(nl)
    conn.receive_data(b"")
    with pytest.raises(LocalProtocolError, match="after end of file"):
        conn.receive_data(b"x")
    assert conn.next_event() == ConnectionClosed()


# --------------------------------------------------------------------------- fuzz

_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_PIECES = [
    b"VERSION:2.0.0\r\n",
    b"MATCHSTATE:",
    b"MATCHSTATE:1:0::|2hAc",
    b"MATCHSTATE:0:0::7d3d|",
    b":",
    b"|",
    b"/",
    b"c",
    b"r",
    b"f",
    b"k",
    b"r300",
    b"r99999999999",
    b"-",
    b"\r\n",
    b"\n",
    b"\r",
    b"#",
    b";",
    b"\x00",
    b"\xff",
    b"2hAc",
    b"0",
    b"1",
]

protocolish = st.lists(
    st.one_of(st.sampled_from(_PIECES), st.binary(min_size=1, max_size=12)), max_size=40
).map(b"".join)
chunks = st.lists(st.one_of(protocolish, st.binary(min_size=1, max_size=300)), max_size=8)


@_SETTINGS
@given(data=chunks, eof=st.booleans(), version_first=st.booleans())
def test_fuzz_dealer_never_raises(
    nl: Game, data: list[bytes], eof: bool, version_first: bool
) -> None:
    conn = DealerConnection(nl, 0)
    to_answer = parse_matchstate(S0, nl)
    fed = bytearray()
    seen: list[DealerEvent] = []
    stream = ([VERSION_LINE] if version_first else []) + [d for d in data if d]
    for part in stream + ([b""] if eof else []):
        conn.receive_data(part)
        fed += part
        while True:
            ev = conn.next_event()
            if ev is NEED_DATA:
                break
            seen.append(ev)
            if ev.error is not None:
                break
            if conn.phase is DealerPhase.IDLE:
                conn.send_state(to_answer)  # keep the seat to act
        if seen and seen[-1].error is not None:
            break
    for ev in seen:
        assert isinstance(
            ev,
            VersionReceived
            | BadVersion
            | CommentSkipped
            | BadStateFormat
            | UnrequestedResponse
            | ActionReceived
            | ClientClosed,
        )
        if isinstance(ev, ActionReceived):
            assert to_answer.state.is_legal(ev.action)
    # Conservation: the lines read plus what is buffered are exactly the bytes fed.
    read = b"".join(ev.line.encode("latin-1") for ev in seen)
    assert bytes(fed).startswith(read)
    if not (seen and seen[-1].error is not None):
        assert len(read) + conn.buffered_bytes == len(fed)


@_SETTINGS
@given(data=chunks, eof=st.booleans())
def test_fuzz_client_raises_only_remote_errors(nl: Game, data: list[bytes], eof: bool) -> None:
    conn = ClientConnection(nl)
    conn.initiate()
    try:
        for part in [d for d in data if d] + ([b""] if eof else []):
            conn.receive_data(part)
            while True:
                ev = conn.next_event()
                if ev is NEED_DATA or isinstance(ev, ConnectionClosed):
                    break
                assert isinstance(ev, StateReceived | CommentReceived | StateRepeated)
                if conn.is_to_act:
                    conn.send_action(CALL)
    except RemoteProtocolError:
        assert conn.is_error


@_SETTINGS
@given(
    st.integers(0, 52),
    st.lists(
        st.tuples(st.integers(0, 60), st.sampled_from(list("0123456789:|/crfk\r\n "))), max_size=3
    ),
)
def test_fuzz_mutated_transcript_lines(nl: Game, index: int, edits: list[tuple[int, str]]) -> None:
    rec = transcript()[index]
    line = bytearray(rec.wire)
    for pos, ch in edits:
        line[min(pos, len(line)) : min(pos, len(line))] = ch.encode()
    conn = ClientConnection(nl)
    conn.initiate()
    conn.receive_data(bytes(line))
    with contextlib.suppress(RemoteProtocolError):
        drain_client(conn)
    dealer = to_act(nl, S0)
    dealer.receive_data(bytes(line))
    for ev in drain(dealer):
        assert ev.error is None


# --------------------------------------------------------------------------- purity


def test_matchstate_round_trip_used_by_fast_path(nl: Game) -> None:
    # The dealer's fast path relies on parse(format(state)) == state for what it sends.
    for rec in transcript():
        if rec.direction == "TO":
            text = rec.wire[:-2].decode()
            ms: MatchState = parse_matchstate(text, nl)
            assert str(ms) == text
