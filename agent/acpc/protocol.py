"""The ACPC wire protocol as sans-IO state machines, one per side of a connection.

Modelled on h11: a connection object is fed bytes with ``receive_data`` (``b''`` means end of
file), hands out one event at a time from ``next_event`` (or :data:`NEED_DATA` when nothing
can be decided yet), and turns what we want to say into bytes (``initiate``, ``send_action``,
``send_state``) that the caller writes. Nothing here reads a socket, looks at a clock or
sleeps: the asyncio layers (``agent.client``, ``dealer.server``) move the bytes, and the
match engine owns time.

:class:`ClientConnection` is the agent's side and strict: every line must be a comment or a
valid MATCHSTATE, else :class:`RemoteProtocolError` and the connection is in an ERROR state.

:class:`DealerConnection` is one seat of the dealer and mirrors the reference dealer
(docs/protocol.md, sections 1-2) exactly, so it never raises on anything a client sends: every
line becomes an event carrying the reference's stderr messages, and the match engine decides
what to do with it. Like the reference it reads lines only from the seat that must act; what
a seat sends at other times stays buffered and is read, in order, the next time it must act.
The reference's ``getLine`` is mirrored byte for byte: a line ends after ``\\n``, at 4095
bytes without one, or at end of file. Bytes are decoded as latin-1, so every byte is one
character and ``line.encode('latin-1')`` gives the bytes back. The dealer side keeps no cap
on its buffer (the reference leaves unread data in the socket); an IO layer that wants one
pauses reading while :attr:`DealerConnection.buffered_bytes` is large.

Pure and stdlib only: must not import asyncio, socket, time, numpy, numba, msgpack, or
anything from ``dealer`` or ``strategies``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Final, NoReturn

from agent.acpc.betting import (
    CALL,
    Action,
    BettingState,
    fix_action,
    format_action,
    parse_action_prefix,
)
from agent.acpc.cscan import scan_c_int
from agent.acpc.errors import (
    IllegalActionError,
    LocalProtocolError,
    RemoteProtocolError,
)
from agent.acpc.gamedef import Game
from agent.acpc.limits import excerpt
from agent.acpc.matchstate import (
    MatchState,
    format_matchstate,
    parse_matchstate,
    parse_matchstate_prefix,
    parse_next_matchstate,
    states_match,
)

__all__ = [
    "BAD_ACTION_WARNING",
    "BAD_STATE_WARNING",
    "CLIENT_MAX_LINE_BYTES",
    "DEALER_MAX_LINE_BYTES",
    "NEED_DATA",
    "PROTOCOL_VERSION",
    "UNREQUESTED_WARNING",
    "UNSUPPORTED_VERSION_ERROR",
    "VERSION_LINE",
    "ActionReceived",
    "BadStateFormat",
    "BadVersion",
    "ClientClosed",
    "ClientConnection",
    "ClientEvent",
    "CommentReceived",
    "CommentSkipped",
    "ConnectionClosed",
    "DealerConnection",
    "DealerEvent",
    "DealerPhase",
    "NeedData",
    "StateReceived",
    "StateRepeated",
    "UnrequestedResponse",
    "VersionReceived",
]

PROTOCOL_VERSION: Final = (2, 0, 0)
"""The protocol version both sides speak (major, minor, revision)."""

VERSION_LINE: Final = b"VERSION:2.0.0\r\n"
"""The first line a client sends."""

DEALER_MAX_LINE_BYTES: Final = 4095
"""The reference ``getLine(MAX_LINE_LEN = 4096)`` returns at most 4095 bytes as one line."""

CLIENT_MAX_LINE_BYTES: Final = 4096
"""The longest line, line end included, that :class:`ClientConnection` accepts."""

BAD_STATE_WARNING: Final = "WARNING: bad state format in response"
UNREQUESTED_WARNING: Final = "WARNING: ignoring un-requested response"
BAD_ACTION_WARNING: Final = "WARNING: bad action format in response, changed to call"
UNSUPPORTED_VERSION_ERROR: Final = "ERROR: this server is currently using version 2.0.0"
"""Printed by the reference for a well-formed but different version; play goes on."""


class NeedData(enum.Enum):
    """The type of :data:`NEED_DATA`."""

    NEED_DATA = "NEED_DATA"

    def __repr__(self) -> str:
        return "NEED_DATA"


NEED_DATA: Final = NeedData.NEED_DATA
"""Returned by ``next_event`` when more bytes (or the seat's turn) are needed first."""

_COMMENT_CHARS: Final = ("#", ";")
_View = tuple[int, int, BettingState, tuple[tuple[int, ...], ...], tuple[int, ...]]
"""The parts of a MatchState: position, hand number, state, hole cards, board."""
_COMPACT_AT: Final = 1 << 16


# ------------------------------------------------------------------------------- client events


@dataclass(frozen=True, slots=True)
class StateReceived:
    """The dealer sent a MATCHSTATE; ``line`` is its text without the line end."""

    state: MatchState
    line: str

    @property
    def is_to_act(self) -> bool:
        """True if the receiving position must answer this state."""
        return self.state.is_to_act


@dataclass(frozen=True, slots=True)
class CommentReceived:
    """The dealer sent a comment line (``#`` or ``;``); ``line`` is without the line end."""

    line: str


@dataclass(frozen=True, slots=True)
class ConnectionClosed:
    """The dealer closed the connection after a complete line (the normal end of a match)."""


@dataclass(frozen=True, slots=True)
class StateRepeated:
    """The dealer sent the last MATCHSTATE again (same hand, betting and cards): nothing to
    do, and it must not be acted on or counted twice. ``line`` is without the line end."""

    line: str


ClientEvent = StateReceived | CommentReceived | ConnectionClosed | StateRepeated
"""What :meth:`ClientConnection.next_event` returns besides :data:`NEED_DATA`."""


# ------------------------------------------------------------------------------- dealer events
#
# Every dealer event has the same read-only interface, so the match engine needs no if-chain:
#   line         the raw line as read (latin-1, line end included; '' for ClientClosed)
#   is_response  read from the acting seat during play: the reference logs it as FROM
#   checks_time  the reference runs its time check on this line before judging it
#   warnings     exact reference stderr lines (no '\n'), non-fatal, to print after the checks
#   error        the fatal reference stderr line (no '\n'), or None; the dealer then exits 1
# The reference prints lines with "%s", i.e. up to the first NUL byte: a transcript writer that
# wants to be byte-exact cuts ``line`` there (``line.partition('\x00')[0]``). A line cut at 4095
# bytes or ended by end of file has no '\n', and the reference adds none when printing it.
# The constant members are fields outside ``__init__``, ``eq`` and ``repr`` rather than class
# variables, so the core compiles with mypyc (acpc-arena compile), which makes those read-only.


@dataclass(frozen=True, slots=True)
class VersionReceived:
    """The client's first line parsed as ``VERSION:%u.%u.%u``.

    If the version is not one the reference serves (major != 2 or minor > 0) the reference
    prints :data:`UNSUPPORTED_VERSION_ERROR` and plays on; it is in :attr:`warnings`.
    """

    line: str
    major: int
    minor: int
    revision: int
    supported: bool

    is_response: bool = field(default=False, init=False, repr=False, compare=False)
    checks_time: bool = field(default=False, init=False, repr=False, compare=False)
    error: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def warnings(self) -> tuple[str, ...]:
        """The reference's message for an unsupported version, else nothing."""
        return () if self.supported else (UNSUPPORTED_VERSION_ERROR,)


@dataclass(frozen=True, slots=True)
class BadVersion:
    """The client's first line does not parse as ``VERSION:%u.%u.%u`` (fatal)."""

    line: str

    is_response: bool = field(default=False, init=False, repr=False, compare=False)
    checks_time: bool = field(default=False, init=False, repr=False, compare=False)
    warnings: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)

    @property
    def error(self) -> str:
        """``ERROR: invalid version string <line>``, the line without its final ``\\n``.

        The reference prints the line as received (``%s``, so up to a NUL byte) with its own
        line end and adds none; a line without ``\\n`` (at end of file) leaves stderr without
        a final newline.
        """
        text = self.line.partition("\x00")[0]
        if text.endswith("\n"):
            text = text[:-1]
        return f"ERROR: invalid version string {text}"


@dataclass(frozen=True, slots=True)
class CommentSkipped:
    """A line from the acting seat starting with ``#`` or ``;``: logged, then skipped."""

    line: str

    is_response: bool = field(default=True, init=False, repr=False, compare=False)
    checks_time: bool = field(default=False, init=False, repr=False, compare=False)
    warnings: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)
    error: str | None = field(default=None, init=False, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class BadStateFormat:
    """A response that does not start with a valid MATCHSTATE; ignored, keep waiting.

    ``reason`` says what the parser expected (for debugging; the reference prints only the
    warning).
    """

    line: str
    reason: str

    is_response: bool = field(default=True, init=False, repr=False, compare=False)
    checks_time: bool = field(default=True, init=False, repr=False, compare=False)
    warnings: tuple[str, ...] = field(
        default=(BAD_STATE_WARNING,), init=False, repr=False, compare=False
    )
    error: str | None = field(default=None, init=False, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class UnrequestedResponse:
    """A response whose state is not the one sent to this seat; ignored, keep waiting."""

    line: str

    is_response: bool = field(default=True, init=False, repr=False, compare=False)
    checks_time: bool = field(default=True, init=False, repr=False, compare=False)
    warnings: tuple[str, ...] = field(
        default=(UNREQUESTED_WARNING,), init=False, repr=False, compare=False
    )
    error: str | None = field(default=None, init=False, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class ActionReceived:
    """The seat's action for the state it was sent, already repaired to a legal action.

    ``warnings`` are the reference's lines about the repair, in order (empty for a clean
    action): a bad action format (then the action is a call), ``raise of N increased to M``
    / ``decreased to M``, ``invalid action, changed to call``.
    """

    line: str
    action: Action
    warnings: tuple[str, ...] = ()

    is_response: bool = field(default=True, init=False, repr=False, compare=False)
    checks_time: bool = field(default=True, init=False, repr=False, compare=False)
    error: str | None = field(default=None, init=False, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class ClientClosed:
    """End of file where the dealer needed a line from this seat (fatal).

    ``error`` is ``ERROR: could not get action from seat N`` during play, or ``ERROR: could
    not read version string from seat N`` before the version line (``N`` 1-based).
    """

    error: str

    line: str = field(default="", init=False, repr=False, compare=False)
    is_response: bool = field(default=False, init=False, repr=False, compare=False)
    checks_time: bool = field(default=False, init=False, repr=False, compare=False)
    warnings: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)


DealerEvent = (
    VersionReceived
    | BadVersion
    | CommentSkipped
    | BadStateFormat
    | UnrequestedResponse
    | ActionReceived
    | ClientClosed
)
"""What :meth:`DealerConnection.next_event` returns besides :data:`NEED_DATA`."""


# ------------------------------------------------------------------------------- helpers


def _scan_version(line: str) -> tuple[int, int, int] | None:
    """The reference's ``sscanf(line, "VERSION:%u.%u.%u")``: the three numbers, or ``None``.

    The C string ends at the first NUL; anything after the third number is ignored.
    """
    text = line.partition("\x00")[0]
    if not text.startswith("VERSION:"):
        return None
    pos = len("VERSION:")
    numbers: list[int] = []
    for k in range(3):
        if k:
            if pos >= len(text) or text[pos] != ".":
                return None
            pos += 1
        got = scan_c_int(text, pos, unsigned=True)
        if got is None:
            return None
        value, pos = got
        numbers.append(value)
    return numbers[0], numbers[1], numbers[2]


def _is_supported(major: int, minor: int) -> bool:
    """The reference's check: ``major == VERSION_MAJOR && minor <= VERSION_MINOR``."""
    return major == PROTOCOL_VERSION[0] and minor <= PROTOCOL_VERSION[1]


class _LineBuffer:
    """Received bytes with a read offset; lines are cut with ``bytes.find``, never per byte."""

    __slots__ = ("_buf", "_pos", "eof")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pos = 0
        self.eof = False

    def __len__(self) -> int:
        return len(self._buf) - self._pos

    def feed(self, data: bytes) -> None:
        if self._pos and self._pos >= len(self._buf):
            self._buf.clear()
            self._pos = 0
        self._buf += data

    def find_line_end(self, limit: int) -> int:
        """Index just after the ``\\n`` ending the next line within ``limit`` bytes, or -1."""
        pos = self._pos
        nl = self._buf.find(b"\n", pos, pos + limit)
        return -1 if nl < 0 else nl + 1

    def take(self, end: int) -> bytes:
        """Remove and return the bytes up to ``end`` (an absolute index)."""
        buf = self._buf
        data = bytes(buf[self._pos : end])
        if end >= len(buf):
            buf.clear()
            self._pos = 0
        elif end > _COMPACT_AT and 2 * end > len(buf):
            del buf[:end]
            self._pos = 0
        else:
            self._pos = end
        return data

    def take_reference_line(self) -> bytes | None:
        """The next line as the reference ``getLine`` cuts it, or ``None`` if incomplete.

        A line ends just after ``\\n``, after 4095 bytes without one, or at end of file.
        """
        end = self.find_line_end(DEALER_MAX_LINE_BYTES)
        if end < 0:
            available = len(self)
            if available >= DEALER_MAX_LINE_BYTES:
                end = self._pos + DEALER_MAX_LINE_BYTES
            elif self.eof and available:
                end = len(self._buf)
            else:
                return None
        return self.take(end)

    def peek(self, limit: int) -> bytes:
        return bytes(self._buf[self._pos : self._pos + limit])


# ------------------------------------------------------------------------------- client side


class ClientConnection:
    """The agent's side of one ACPC connection (sans-IO).

    Typical use::

        conn = ClientConnection(game)
        write(conn.initiate())
        while True:
            event = conn.next_event()
            if event is NEED_DATA:
                conn.receive_data(read())        # b'' at end of file
            elif isinstance(event, ConnectionClosed):
                break
            elif isinstance(event, StateReceived) and conn.is_to_act:
                write(conn.send_action(choose(event.state)))

    Lines end with ``\\n`` (one ``\\r`` before it is stripped) and must be ASCII and at most
    :data:`CLIENT_MAX_LINE_BYTES` long; lines starting with ``#`` or ``;`` are comments.
    Anything else must be a valid MATCHSTATE for ``game`` (its cards from the game's deck)
    whose hand number never goes back: a state of the hand of the last state must go on from
    it (same position, more actions, the same own cards, the board extended), or be the same
    state again, which is :class:`StateRepeated`; a new hand (after a final state, or a state
    of another number) needs a higher number. A violation raises
    :class:`RemoteProtocolError` and leaves the connection in an ERROR state in which every
    further call raises it again. A :class:`LocalProtocolError` from :meth:`send_action`
    sends nothing and leaves the connection usable.
    """

    def __init__(self, game: Game) -> None:
        self._game = game
        self._buf = _LineBuffer()
        self._initiated = False
        self._closed = False
        self._error: RemoteProtocolError | None = None
        self._last_state: MatchState | None = None
        self._last_line = ""
        self._answered = False

    # ------------------------------------------------------------------------- queries

    @property
    def game(self) -> Game:
        """The game this connection plays."""
        return self._game

    @property
    def last_state(self) -> MatchState | None:
        """The last MATCHSTATE received, or ``None`` before the first."""
        return self._last_state

    @property
    def last_line(self) -> str:
        """The text of the last MATCHSTATE received, as received, without its line end."""
        return self._last_line

    @property
    def is_to_act(self) -> bool:
        """True if the last state received is ours to answer and we have not answered yet."""
        ms = self._last_state
        return (
            ms is not None
            and not self._answered
            and ms.is_to_act
            and self._error is None
            and not self._closed
        )

    @property
    def is_closed(self) -> bool:
        """True once :class:`ConnectionClosed` has been returned."""
        return self._closed

    @property
    def is_error(self) -> bool:
        """True after a :class:`RemoteProtocolError` (the ERROR state)."""
        return self._error is not None

    @property
    def buffered_bytes(self) -> int:
        """Bytes received and not yet read as lines: after :meth:`next_event` returned
        :data:`NEED_DATA`, less than :data:`CLIENT_MAX_LINE_BYTES` (a longer partial line is
        an error), whatever the dealer sends."""
        return len(self._buf)

    # ------------------------------------------------------------------------- sending

    def initiate(self) -> bytes:
        """The version line to send first, ``b'VERSION:2.0.0\\r\\n'``.

        Raises:
            LocalProtocolError: if called a second time.
            RemoteProtocolError: if the connection is in the ERROR state.
        """
        self._check_error()
        if self._initiated:
            raise LocalProtocolError("expected initiate() once per connection, got a second call")
        self._initiated = True
        return VERSION_LINE

    def send_action(self, action: Action) -> bytes:
        """The response to the last state: that state as received, ``:``, the action, CRLF.

        Returned as one bytes object, to be written in one write.

        Raises:
            LocalProtocolError: if the version was not sent yet, the connection is closed,
                no state was received, the hand is over, another position is to act, the
                state was already answered, or ``action`` is not legal in the state (the
                message says why and gives the bounds).
            RemoteProtocolError: if the connection is in the ERROR state.
        """
        self._check_error()
        if not self._initiated:
            raise LocalProtocolError(
                f"expected initiate() to send the version line first, got send_action({action})"
            )
        if self._closed:
            raise LocalProtocolError(
                f"expected an open connection, got send_action({action}) after the dealer closed"
            )
        ms = self._last_state
        if ms is None:
            raise LocalProtocolError(
                f"expected a MATCHSTATE to answer, got send_action({action}) before any state"
            )
        line = self._last_line
        if self._answered:
            raise LocalProtocolError(
                f"expected one action per state, got a second action {action} for {line!r}"
            )
        if ms.state.finished:
            raise LocalProtocolError(
                f"expected a hand in progress, got send_action({action}) for the final state "
                f"{line!r}"
            )
        if not ms.is_to_act:
            raise LocalProtocolError(
                f"expected our turn (position {ms.position}), got send_action({action}) while "
                f"position {ms.state.player} is to act in {line!r}"
            )
        try:
            ms.state.check_action(action)
        except IllegalActionError as exc:
            raise LocalProtocolError(f"illegal action for {line!r}: {exc}") from None
        self._answered = True
        return f"{line}:{format_action(action, self._game)}\r\n".encode("ascii")

    # ------------------------------------------------------------------------- receiving

    def receive_data(self, data: bytes) -> None:
        """Add bytes received from the dealer; ``b''`` means the dealer closed (end of file).

        Raises:
            LocalProtocolError: if data is given after end of file.
            RemoteProtocolError: if the connection is in the ERROR state.
        """
        self._check_error()
        if not data:
            self._buf.eof = True
            return
        if self._buf.eof:
            raise LocalProtocolError(
                f"expected no data after end of file, got {excerpt(data[:40])}"
            )
        self._buf.feed(data)

    def next_event(self) -> ClientEvent | NeedData:
        """The next event, or :data:`NEED_DATA` if no complete line is buffered.

        After :class:`ConnectionClosed` every call returns :class:`ConnectionClosed` again.

        Raises:
            RemoteProtocolError: if the next line is too long, not ASCII, a partial line at
                end of file, neither a comment nor a valid MATCHSTATE for the game, or a
                state out of order (a hand number that goes back or is reused for a new
                hand, a state that does not go on from the last of its hand); and on every
                call after such an error.
        """
        self._check_error()
        buf = self._buf
        end = buf.find_line_end(CLIENT_MAX_LINE_BYTES)
        if end < 0:
            if len(buf) >= CLIENT_MAX_LINE_BYTES:
                self._fail(
                    f"expected a line of at most {CLIENT_MAX_LINE_BYTES} bytes ending in '\\n', "
                    f"got {len(buf)} bytes without one, starting "
                    f"{buf.peek(40)!r}"
                )
            if buf.eof:
                if len(buf):
                    self._fail(
                        f"expected a line ending in '\\n' before end of file, got {buf.peek(80)!r}"
                    )
                self._closed = True
                return ConnectionClosed()
            return NEED_DATA
        raw = buf.take(end)
        try:
            text = raw.decode("ascii")
        except UnicodeDecodeError as exc:
            self._fail(
                f"expected an ASCII line, got byte {raw[exc.start]:#04x} at offset "
                f"{exc.start} of {excerpt(raw)}"
            )
        text = text[:-2] if text.endswith("\r\n") else text[:-1]
        if text.startswith(_COMMENT_CHARS):
            return CommentReceived(text)
        try:
            last = self._last_state
            ms = (
                parse_matchstate(text, self._game)
                if last is None
                else parse_next_matchstate(text, self._game, last, self._last_line)
            )
        except RemoteProtocolError as exc:
            self._fail(f"expected a MATCHSTATE line, got {excerpt(text, 100)}: {exc}")
        if last is not None and ms.hand_number <= last.hand_number:
            order = _order_in_hand(last, ms)
            if order == 0:
                return StateRepeated(text)
            if order < 0:
                self._fail(_out_of_order(last, ms, text))
        self._last_state = ms
        self._last_line = text
        self._answered = False
        return StateReceived(ms, text)

    # ------------------------------------------------------------------------- internals

    def _check_error(self) -> None:
        if self._error is not None:
            raise RemoteProtocolError(
                f"expected a working connection, got one in the ERROR state after: {self._error}"
            )

    def _fail(self, message: str) -> NoReturn:
        self._error = RemoteProtocolError(message)
        raise self._error


def _order_in_hand(prev: MatchState, ms: MatchState) -> int:
    """``ms`` after ``prev`` (both from one connection): 1 if it goes on from ``prev`` in the
    same hand (same position and own cards, its actions extend ``prev``'s by at least one,
    its board extends ``prev``'s), 0 if it is the same state again (cards included), -1
    otherwise (another hand number, or a state that does not follow).

    Actions are compared as the states' canonical betting text (``r0300`` reads as
    ``r300``): one extends the other when it starts with it and does not go on inside a
    raise size (``r300`` is not extended by ``r3000``).
    """
    before = prev.state.betting
    after = ms.state.betting
    n = len(before)
    if (
        ms.hand_number != prev.hand_number
        or ms.position != prev.position
        or not after.startswith(before)
        or after[n : n + 1].isdigit()
        or ms.hole_cards[ms.position] != prev.hole_cards[prev.position]
        or ms.board[: len(prev.board)] != prev.board
    ):
        return -1
    if len(after) == n:
        return 0 if ms.hole_cards == prev.hole_cards and ms.board == prev.board else -1
    return 1


def _out_of_order(prev: MatchState, ms: MatchState, text: str) -> str:
    """The message for a state that :func:`_order_in_hand` put before ``prev``."""
    got = excerpt(text, 100)
    if ms.hand_number < prev.hand_number:
        return (
            f"expected hand numbers that never go back, got hand {ms.hand_number} after hand "
            f"{prev.hand_number}: {got}"
        )
    if prev.state.finished:
        return (
            f"expected a new hand number after the final state of hand {prev.hand_number}, "
            f"got hand {ms.hand_number} again: {got}"
        )
    return (
        f"expected hand {prev.hand_number} to go on from betting {prev.state.betting!r} "
        f"(same position, own cards and board), got {got}"
    )


# ------------------------------------------------------------------------------- dealer side


class DealerPhase(enum.Enum):
    """Where a :class:`DealerConnection` is in its life."""

    AWAIT_VERSION = "await_version"
    """Nothing read yet: the next line is the version line."""
    IDLE = "idle"
    """The seat owes nothing: received lines stay buffered."""
    AWAIT_RESPONSE = "await_response"
    """The last state sent was the seat's to answer: lines are read and judged."""
    CLOSED = "closed"
    """End of file where a line was needed; :class:`ClientClosed` was returned."""
    ERROR = "error"
    """The version line was invalid; :class:`BadVersion` was returned."""


class DealerConnection:
    """One seat of the dealer (sans-IO), mirroring the reference dealer's reading.

    ``seat`` is 0-based; messages print it 1-based like the reference. Typical use::

        conn = DealerConnection(game, seat)
        event = conn.next_event()            # VersionReceived / BadVersion / ClientClosed
        ...
        write(conn.send_state(ms))           # to every seat, after every action
        while the seat must act:
            event = conn.next_event()
            if event is NEED_DATA: conn.receive_data(read()); continue
            if event.is_response: log FROM event.line
            if event.checks_time: check the clock (may end the match)
            print event.warnings; if event.error: print it and exit 1
            if isinstance(event, ActionReceived): apply event.action

    :meth:`next_event` returns :data:`NEED_DATA` whenever the seat is not to act, even with
    data buffered; after a fatal event (:class:`BadVersion`, :class:`ClientClosed`) it
    returns that same event again. Nothing a client sends makes any method raise.
    """

    def __init__(self, game: Game, seat: int) -> None:
        self._game = game
        self._seat = seat
        self._buf = _LineBuffer()
        self._phase = DealerPhase.AWAIT_VERSION
        self._fatal: BadVersion | ClientClosed | None = None
        self._version: VersionReceived | None = None
        self._sent: MatchState | None = None
        self._sent_parts: _View | None = None
        self._sent_state: BettingState | None = None
        self._sent_line = ""
        self._expect = ""

    # ------------------------------------------------------------------------- queries

    @property
    def game(self) -> Game:
        """The game being played."""
        return self._game

    @property
    def seat(self) -> int:
        """The seat (0-based) this connection serves."""
        return self._seat

    @property
    def phase(self) -> DealerPhase:
        """Where the connection is: version, idle, awaiting a response, closed, error."""
        return self._phase

    @property
    def is_to_act(self) -> bool:
        """True while the seat owes a response to the last state sent."""
        return self._phase is DealerPhase.AWAIT_RESPONSE

    @property
    def version(self) -> VersionReceived | None:
        """The version event, once the version line was read."""
        return self._version

    @property
    def last_state(self) -> MatchState | None:
        """The last state sent to this seat."""
        if self._sent is None and self._sent_parts is not None:
            self._sent = MatchState(*self._sent_parts)
        return self._sent

    @property
    def last_line(self) -> str:
        """The text of the last state sent, without the line end."""
        return self._sent_line

    @property
    def buffered_bytes(self) -> int:
        """Bytes received and not yet read as lines (for the IO layer's flow control)."""
        return len(self._buf)

    @property
    def eof_received(self) -> bool:
        """True once end of file was received (reported only when a line is needed)."""
        return self._buf.eof

    # ------------------------------------------------------------------------- sending

    def send_state(self, ms: MatchState, text: str | None = None) -> bytes:
        """The wire bytes of ``ms`` for this seat (``MATCHSTATE...\\r\\n``); records it.

        If ``ms`` is the seat's to answer, the seat now owes a response and
        :meth:`next_event` starts reading its lines. ``text``, if given, must be
        ``format_matchstate(ms)``, precomputed by a caller that can build it faster (the
        dealer assembles it from per-hand pieces); it is not checked.

        Raises:
            LocalProtocolError: before the version line was read, after a fatal event, or
                while the seat still owes a response to the previous state.
        """
        if self._phase is not DealerPhase.IDLE:
            self._check_can_send()
        if text is None:
            text = format_matchstate(ms)
        self._sent = ms
        self._sent_parts = None
        self._sent_state = ms.state
        self._sent_line = text
        if ms.is_to_act:
            self._expect = text + ":"
            self._phase = DealerPhase.AWAIT_RESPONSE
        return (text + "\r\n").encode("ascii")

    def send_view(
        self,
        position: int,
        hand_number: int,
        state: BettingState,
        hole_cards: tuple[tuple[int, ...], ...],
        board: tuple[int, ...],
        text: str,
    ) -> bytes:
        """:meth:`send_state` of ``MatchState(position, hand_number, state, hole_cards,
        board)`` whose text is ``text``; the MatchState is built only if asked for
        (:attr:`last_state`, or a response that does not echo ``text``).

        Raises:
            LocalProtocolError: as :meth:`send_state`.
        """
        if self._phase is not DealerPhase.IDLE:
            self._check_can_send()
        self._sent = None
        self._sent_parts = (position, hand_number, state, hole_cards, board)
        self._sent_state = state
        self._sent_line = text
        if not state.finished and state.player == position:
            self._expect = text + ":"
            self._phase = DealerPhase.AWAIT_RESPONSE
        return (text + "\r\n").encode("ascii")

    # ------------------------------------------------------------------------- receiving

    def receive_data(self, data: bytes) -> None:
        """Add bytes received from the seat; ``b''`` means end of file (may be repeated).

        Raises:
            LocalProtocolError: if non-empty data is given after end of file (a caller bug:
                sockets deliver nothing after end of file).
        """
        if not data:
            self._buf.eof = True
            return
        if self._buf.eof:
            raise LocalProtocolError(
                f"expected no data after end of file from seat {self._seat + 1}, got "
                f"{excerpt(data[:40])}"
            )
        self._buf.feed(data)

    def next_event(self) -> DealerEvent | NeedData:
        """The next thing the reference dealer would do with this seat's input.

        Returns :data:`NEED_DATA` if the seat is not to act (and the version was read) or no
        complete line is buffered yet. Never raises.
        """
        phase = self._phase
        if phase is DealerPhase.AWAIT_RESPONSE:
            raw = self._buf.take_reference_line()
            if raw is None:
                if self._buf.eof:
                    return self._close(f"ERROR: could not get action from seat {self._seat + 1}")
                return NEED_DATA
            return self._judge(raw.decode("latin-1"))
        if phase is DealerPhase.IDLE:
            return NEED_DATA
        if phase is DealerPhase.AWAIT_VERSION:
            raw = self._buf.take_reference_line()
            if raw is None:
                if self._buf.eof:
                    return self._close(
                        f"ERROR: could not read version string from seat {self._seat + 1}"
                    )
                return NEED_DATA
            return self._read_version(raw.decode("latin-1"))
        assert self._fatal is not None
        return self._fatal

    # ------------------------------------------------------------------------- internals

    def _check_can_send(self) -> NoReturn:
        """Raise the :class:`LocalProtocolError` for a state sent outside the IDLE phase."""
        phase = self._phase
        if phase is DealerPhase.AWAIT_RESPONSE:
            raise LocalProtocolError(
                f"expected seat {self._seat + 1} to answer {self._sent_line!r} first, got "
                f"a new state to send"
            )
        if phase is DealerPhase.AWAIT_VERSION:
            raise LocalProtocolError(
                f"expected the version line of seat {self._seat + 1} to be read first, got "
                f"a state to send"
            )
        raise LocalProtocolError(
            f"expected a live connection, got a state to send to seat {self._seat + 1} "
            f"after {self._fatal!r}"
        )

    def _close(self, message: str) -> ClientClosed:
        event = ClientClosed(message)
        self._fatal = event
        self._phase = DealerPhase.CLOSED
        return event

    def _read_version(self, line: str) -> VersionReceived | BadVersion:
        numbers = _scan_version(line)
        if numbers is None:
            bad = BadVersion(line)
            self._fatal = bad
            self._phase = DealerPhase.ERROR
            return bad
        major, minor, revision = numbers
        event = VersionReceived(line, major, minor, revision, _is_supported(major, minor))
        self._version = event
        self._phase = DealerPhase.IDLE
        return event

    def _judge(self, line: str) -> DealerEvent:
        """Steps (2) and (4)-(7) of the reference ``readPlayerResponse`` for one line."""
        if line.startswith(_COMMENT_CHARS):
            return CommentSkipped(line)
        sent = self._sent_state
        assert sent is not None
        game = self._game
        if line.startswith(self._expect):
            # Fast path: the exact text sent, then ':' (parse(format(s)) == s).
            got = parse_action_prefix(line, len(self._expect), game)
        else:
            try:
                ms, end = parse_matchstate_prefix(line, game)
            except RemoteProtocolError as exc:
                return BadStateFormat(line, str(exc))
            sent_ms = self.last_state
            assert sent_ms is not None
            if not states_match(sent_ms, ms):
                return UnrequestedResponse(line)
            if end < len(line) and line[end] == ":":
                got = parse_action_prefix(line, end + 1, game)
            else:
                got = None
        self._phase = DealerPhase.IDLE
        if got is None:
            return ActionReceived(line, CALL, (BAD_ACTION_WARNING,))
        action, warnings = fix_action(sent, got[0])
        return ActionReceived(line, action, warnings)
