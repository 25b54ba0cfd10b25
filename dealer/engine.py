"""The match engine: one ACPC match as a pure state machine, clock passed in.

The engine plays the reference dealer's ``gameLoop`` (docs/protocol.md, sections 1-3, 6-7): it
reads each seat's version line in seat order, deals every hand from the match's MT19937,
sends every seat its MATCHSTATE, reads the acting seat's response through its
:class:`~agent.acpc.protocol.DealerConnection` (which applies the reference's judgement of
every line), enforces the time limits, writes the log, transaction and transcript lines in
the reference's wording, and totals the score by seat.

It does no IO: the server feeds it bytes (:meth:`Match.receive`) and clock ticks
(:meth:`Match.tick`), and drains what it produced (:meth:`Match.drain`): bytes per seat,
stderr text, log and transaction lines, stdout text. The clock is a callable returning
microseconds since the epoch, so tests drive time exactly.

Where the reference is fragile the engine is not: a seat that disconnects or runs out of
time ends the match with an ``ERROR:`` line naming the seat and the reason, every completed
hand already logged, a ``PARTIAL SCORE`` over the completed hands on stderr, exit status 1.
Like the reference, end of file from a seat matters only when that seat must act (or a write
to it fails): a client that leaves after its last action of the match does not spoil it.
Time used is charged once per accepted response (the reference charges every bad line again)
and a silent seat is stopped at the first of its three limits rather than only at the
per-response one.

Speed: the MATCHSTATE text of every seat is assembled from per-hand pieces (each position's
hole-card section, the board text through each round) instead of being formatted from the
state for every seat after every action, and under ``-q`` the clock is read once per
broadcast rather than once per seat. Work that no seat waits for is deferred: a finished
hand's values, totals and log line, and the next hand's deal and pieces. :meth:`Match.idle`
does one such step; the server calls it after writing to the seat that must act, while that
seat is thinking. Nothing depends on it being called: :meth:`Match.drain`, the end of the
match and every error do the deferred work first, in order, so the output is the same
either way (only :meth:`Match.drain_sendable` leaves it pending).

Imports only the stdlib and :mod:`agent.acpc`.
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from agent.acpc.betting import Action, BettingState, format_action, parse_action_prefix
from agent.acpc.cards import format_cards
from agent.acpc.dealing import MT19937, Deal, deal_hand
from agent.acpc.errors import AcpcError, UsageError
from agent.acpc.gamedef import Game
from agent.acpc.matchstate import PREFIX
from agent.acpc.protocol import (
    NEED_DATA,
    ActionReceived,
    ClientClosed,
    DealerConnection,
    VersionReceived,
)
from dealer.logfile import (
    DEFAULT_T_HAND_MS,
    DEFAULT_T_PER_HAND_MS,
    DEFAULT_T_RESPONSE_MS,
    LogHeader,
    format_header,
    format_score_line,
    format_state_line,
    hand_values,
    names_by_position,
    position_of,
    seat_of,
)

Clock = Callable[[], int]
"""Returns the time in whole microseconds since the epoch."""


def format_time(us: int) -> str:
    """``sec.usec`` as the reference prints ``struct timeval`` (``%zu.%06zu``)."""
    return f"{us // 1_000_000}.{us % 1_000_000:06d}"


@dataclass(frozen=True, slots=True)
class MatchConfig:
    """Everything that defines a match (the dealer's command line)."""

    match_name: str
    game_file: str
    """The game file as given on the command line (printed in the header)."""
    game: Game
    num_hands: int
    seed: int
    seat_names: tuple[str, ...]
    fixed_seats: bool = False
    quiet: bool = False
    t_response_ms: int = DEFAULT_T_RESPONSE_MS
    t_hand_ms: int = DEFAULT_T_HAND_MS
    t_per_hand_ms: int = DEFAULT_T_PER_HAND_MS
    transactions: bool = False

    def __post_init__(self) -> None:
        if len(self.seat_names) != self.game.num_players:
            raise UsageError(
                f"expected {self.game.num_players} player names, got {len(self.seat_names)}"
            )
        if self.num_hands <= 0:
            raise UsageError(f"expected a positive number of hands, got {self.num_hands!r}")

    @property
    def header(self) -> LogHeader:
        """The log header of this match."""
        return LogHeader(
            self.match_name, self.game_file, self.num_hands, self.seed,
            self.t_response_ms, self.t_hand_ms, self.t_per_hand_ms,
        )


class Phase(enum.Enum):
    """Where the match is."""

    CONNECTING = "connecting"
    VERSIONS = "versions"
    PLAYING = "playing"
    DONE = "done"


@dataclass
class Output:
    """What the engine produced since the last :meth:`Match.drain`.

    ``to_seat`` is in the order to write: per broadcast, the seat that must answer first.
    """

    to_seat: list[tuple[int, bytes]] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    stdout: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    tlog: list[str] = field(default_factory=list)

    def is_empty(self) -> bool:
        """True if nothing was produced."""
        return not (self.to_seat or self.stderr or self.stdout or self.log or self.tlog)


class MatchError(AcpcError):
    """Raised inside the engine to end the match; carries the reference ERROR line."""

    def __init__(self, line: str, extra: Sequence[str] = ()) -> None:
        super().__init__(line)
        self.line = line
        self.extra = tuple(extra)


@dataclass(frozen=True, slots=True)
class _HandPieces:
    """One hand's deal and the per-seat pieces of its MATCHSTATE texts (``Match._start_hand``)."""

    hand: int
    deal: Deal
    positions: list[int]
    prefix: list[str]
    hole_view: list[tuple[tuple[int, ...], ...]]
    hole_cards: list[str]
    hole_text: list[str]
    board_text: list[str]
    board_view: list[tuple[int, ...]]


class Match:
    """One match between ``n`` seats (see the module docstring)."""

    def __init__(self, config: MatchConfig, clock: Clock) -> None:
        self.config = config
        self.game = config.game
        self._clock = clock
        n = self.game.num_players
        self.conns = [DealerConnection(self.game, s) for s in range(n)]
        self._rng = MT19937(config.seed)
        self._out = Output()
        self.phase = Phase.CONNECTING
        self.exit_status: int | None = None
        self.hand = 0
        self.hands_done = 0
        self.totals = [0.0] * n
        self._version_seat = 0
        self._state = BettingState.initial(self.game)
        self._deal: Deal = Deal((), ())
        self._send_us = 0
        self._used_hand_us = [0] * n
        self._used_match_us = [0] * n
        self._max_response_us = config.t_response_ms * 1000
        self._max_hand_us = config.t_hand_ms * 1000
        self._max_match_us = config.t_per_hand_ms * 1000 * config.num_hands
        self._wait_started_us = 0
        self._acting = 0
        """The seat to act, set whenever states are sent."""
        self._deadline_at: tuple[int, str] = (0, "response")
        """:meth:`_deadline`, computed whenever states are sent (nothing else moves it)."""
        # Per-hand pieces of the MATCHSTATE texts (see _start_hand).
        self._positions: list[int] = []
        self._prefix: list[str] = []
        self._hole_cards: list[str] = []
        self._hole_text: list[str] = []
        self._hole_view: list[tuple[tuple[int, ...], ...]] = []
        self._board_text: list[str] = []
        self._board_view: list[tuple[int, ...]] = []
        self._pending: deque[Callable[[], None]] = deque()
        """Deferred work (finished hands to settle), done in order (see the module docstring)."""
        self._next_pieces: _HandPieces | None = None
        """The next hand's deal and pieces, drawn ahead by :meth:`idle`."""

    # ------------------------------------------------------------------ IO-facing API

    def drain(self) -> Output:
        """Do the deferred work, then take everything produced so far."""
        self._settle_all()
        out, self._out = self._out, Output()
        return out

    def drain_sendable(self) -> Output:
        """Take everything produced so far, leaving deferred work (and its log lines) for
        :meth:`idle` or the next :meth:`drain`."""
        out, self._out = self._out, Output()
        return out

    def idle(self) -> bool:
        """Do one step of deferred work; False if there was none.

        Settles the oldest finished hand (values, totals, log line), else draws the next
        hand's deal and pieces ahead (the deals come from the match's generator in the same
        order either way).
        """
        if self._pending:
            self._pending.popleft()()
            return True
        if (self.phase is Phase.PLAYING and self._next_pieces is None
                and self.hand + 1 < self.config.num_hands):
            self._next_pieces = self._hand_pieces(self.hand + 1)
            return True
        return False

    def begin(self) -> None:
        """Print the header (stderr and log), as the reference does before accepting."""
        text = format_header(self.config.header)
        self._out.stderr.append(text)
        self._out.log.append(text)

    def replay_transactions(self, lines: Iterator[str]) -> None:
        """Replay a transaction file (``-T -a``) before play, as ``processTransactionFile``.

        Each line is ``<action> <hand> <send sec.usec> <recv sec.usec>``; the actions are
        applied without fixing, time is charged, finished hands are totalled (not logged
        again) and the match continues live from where the file ends.

        Raises:
            MatchError: on a line the reference would reject, with its ERROR text.
        """
        self._start_hand()
        for raw in lines:
            line = raw if raw.endswith("\n") else raw + "\n"
            got = parse_action_prefix(line, 0, self.game)
            if got is None:
                raise MatchError(f"ERROR: could not parse transaction action {line}")
            action, pos = got
            stamp = line[pos:].split()
            try:
                hand = int(stamp[0])
                send_us = _parse_stamp(stamp[1])
                recv_us = _parse_stamp(stamp[2])
            except (IndexError, ValueError):
                raise MatchError(f"ERROR: could not parse transaction stamp {line}") from None
            if hand != self.hand:
                raise MatchError(f"ERROR: handId mismatch in transaction log: {line}")
            if not self._state.is_legal(action):
                raise MatchError(f"ERROR: invalid action in transaction log: {line}")
            seat = self._seat(self._state.player)
            if not self._charge(seat, send_us, recv_us):
                raise MatchError(
                    f"ERROR: seat {seat + 1} ran out of time in transaction file"
                )
            self._state = self._state.apply(action)
            if self._state.finished:
                values = hand_values(self._state, self._deal.hole, self._deal.board)
                for p, v in enumerate(values):
                    self.totals[self._seat(p)] += v
                self.hand += 1
                self.hands_done += 1
                self._start_hand()

    def connected(self) -> None:
        """All seats are connected: start reading version lines (seat 1 first)."""
        if self.phase is Phase.CONNECTING:
            self.phase = Phase.VERSIONS
            self._wait_started_us = self._clock()
            self._advance()

    def receive(self, seat: int, data: bytes) -> None:
        """Bytes (``b''`` = end of file) from ``seat``; play on as far as possible.

        End of file from a seat that is not to act is noted; it ends the match (``could not
        get action from seat N``) only when that seat must act and has no line left.
        """
        if self.phase is Phase.DONE:
            return
        conn = self.conns[seat]
        if data or not conn.eof_received:
            conn.receive_data(data)
        self._advance()

    def tick(self) -> None:
        """Check the clock against the current deadline."""
        if self.phase is not Phase.PLAYING:
            return
        deadline, kind = self._deadline_at
        now = self._clock()
        if now < deadline:
            return
        seat = self._acting_seat()
        if kind == "response":
            waited = (now - self._wait_started_us) / 1e6
            self._fail(MatchError(
                f"ERROR: could not get action from seat {seat + 1}",
                (f"{waited:.1f} seconds spent waiting; timeout "
                 f"{self._max_response_us / 1e6:.1f}",),
            ))
        else:
            self._fail(MatchError(f"ERROR: seat {seat + 1} ran out of time"))

    @property
    def acting_seat(self) -> int:
        """The seat whose response the match is waiting for (meaningful while playing)."""
        return self._acting_seat()

    @property
    def deadline_us(self) -> int | None:
        """When :meth:`tick` must next be called, or None if no limit applies now."""
        if self.phase is not Phase.PLAYING:
            return None
        return self._deadline_at[0]

    def abort(self, reason: str) -> None:
        """End the match now (signal, IO failure): ``reason`` is the ERROR line."""
        if self.phase is not Phase.DONE:
            self._fail(MatchError(reason))

    def fail_write(self, seat: int) -> None:
        """A write to ``seat`` failed: the reference's ``could not send state`` error."""
        self.abort(f"ERROR: could not send state to seat {seat + 1}")

    # ------------------------------------------------------------------ internals

    def _seat(self, position: int) -> int:
        return seat_of(position, self.hand, self.game.num_players, self.config.fixed_seats)

    def _acting_seat(self) -> int:
        return self._acting

    def _deadline(self) -> tuple[int, str]:
        seat = self._acting
        by_response = self._send_us + self._max_response_us
        by_hand = self._send_us + self._max_hand_us - self._used_hand_us[seat]
        by_match = self._send_us + self._max_match_us - self._used_match_us[seat]
        best = min(by_response, by_hand, by_match)
        # A response arriving exactly at the limit is still in time (limits are "> max").
        return best + 1, "response" if best == by_response else "budget"

    def _charge(self, seat: int, send_us: int, recv_us: int) -> bool:
        """Charge one accepted response; False if it broke a limit (``checkErrorTimes``)."""
        if recv_us < send_us:
            return True  # clocks can step back; the reference ignores such a response
        took = recv_us - send_us
        self._used_hand_us[seat] += took
        self._used_match_us[seat] += took
        return (
            took <= self._max_response_us
            and self._used_hand_us[seat] <= self._max_hand_us
            and self._used_match_us[seat] <= self._max_match_us
        )

    def _within_limits(self, seat: int, recv_us: int) -> bool:
        took = max(0, recv_us - self._send_us)
        return (
            took <= self._max_response_us
            and self._used_hand_us[seat] + took <= self._max_hand_us
            and self._used_match_us[seat] + took <= self._max_match_us
        )

    def _settle_all(self) -> None:
        pending = self._pending
        while pending:
            pending.popleft()()

    def _fail(self, err: MatchError) -> None:
        self._settle_all()
        out = self._out
        out.stderr.append(err.line + ("" if err.line.endswith("\n") else "\n"))
        out.stderr.extend(x + "\n" for x in err.extra)
        if self.phase is Phase.PLAYING or self.hands_done:
            score = format_score_line(self.totals, self.config.seat_names)
            out.stderr.append(
                f"PARTIAL {score} (after {self.hands_done} of {self.config.num_hands} hands; "
                "the match did not finish)\n"
            )
        self.phase = Phase.DONE
        self.exit_status = 1

    def _advance(self) -> None:
        try:
            if self.phase is Phase.VERSIONS:
                self._read_versions()
            if self.phase is Phase.PLAYING:
                self._play()
        except MatchError as err:
            self._fail(err)

    def _read_versions(self) -> None:
        n = self.game.num_players
        while self._version_seat < n:
            event = self.conns[self._version_seat].next_event()
            if event is NEED_DATA:
                return
            if event.error is not None:
                raise MatchError(event.error)
            if isinstance(event, VersionReceived):
                for warning in event.warnings:
                    self._out.stderr.append(warning + "\n")
                self._version_seat += 1
        self.phase = Phase.PLAYING
        if not self.config.quiet:
            self._out.stderr.append(f"STARTED at {format_time(self._clock())}\n")
        if self._state.finished or not self._deal.hole:
            self._start_hand()
        if self.hand >= self.config.num_hands:
            self._finish_match()
            return
        self._send_states()

    def _start_hand(self) -> None:
        self._used_hand_us = [0] * self.game.num_players
        self._state = BettingState.initial(self.game)
        pieces = self._next_pieces
        if pieces is None or pieces.hand != self.hand:
            pieces = self._hand_pieces(self.hand)
        self._next_pieces = None
        self._deal = pieces.deal
        self._positions = pieces.positions
        self._prefix = pieces.prefix
        self._hole_view = pieces.hole_view
        self._hole_cards = pieces.hole_cards
        self._hole_text = pieces.hole_text
        self._board_text = pieces.board_text
        self._board_view = pieces.board_view

    def _hand_pieces(self, hand: int) -> _HandPieces:
        """Deal hand ``hand`` (the next deal of the match's generator) and precompute what
        each seat is shown of it: the text of a state is prefix + betting + ':' + hole
        section + board text through the current round (format_matchstate's layout when no
        other hole cards are shown)."""
        game = self.game
        n = game.num_players
        deal = deal_hand(game, self._rng)
        fixed = self.config.fixed_seats
        none: tuple[tuple[int, ...]] = ((),)
        hole = deal.hole
        hole_cards = [format_cards(h) for h in hole]
        board_text: list[str] = []
        board_view: list[tuple[int, ...]] = []
        text = ""
        for r in range(game.num_rounds):
            lo, hi = game.board_start(r), game.board_cards_through(r)
            text += ("/" if r else "") + format_cards(deal.board[lo:hi])
            board_text.append(text)
            board_view.append(deal.board[:hi])
        return _HandPieces(
            hand=hand,
            deal=deal,
            positions=[position_of(s, hand, n, fixed) for s in range(n)],
            prefix=[f"{PREFIX}{p}:{hand}:" for p in range(n)],
            hole_view=[none * p + (hole[p],) + none * (n - 1 - p) for p in range(n)],
            hole_cards=hole_cards,
            hole_text=["|" * p + t + "|" * (n - 1 - p) for p, t in enumerate(hole_cards)],
            board_text=board_text,
            board_view=board_view,
        )

    def _send_states(self) -> None:
        state = self._state
        quiet = self.config.quiet
        out = self._out
        to_seat = out.to_seat
        conns = self.conns
        acting = state.player
        hand = self.hand
        betting = state.betting + ":"
        board_text = self._board_text[state.round]
        board_view = self._board_view[state.round]
        hole_view, hole_text = self._hole_view, self._hole_text
        if state.is_showdown:
            # Final state of a showdown: every player who did not fold is shown to everyone
            # (a folded viewer still sees its own cards).
            hole_view, hole_text = self._showdown_views(state)
        t = self._clock()
        first = len(to_seat)
        prefix = self._prefix
        for seat, position in enumerate(self._positions):
            data = conns[seat].send_view(
                position, hand, state, hole_view[position], board_view,
                prefix[position] + betting + hole_text[position] + board_text,
            )
            if not quiet:
                t = self._clock()
                out.stderr.append(f"TO {seat + 1} at {format_time(t)} {data.decode('ascii')}")
            if position == acting:
                self._send_us = t
                self._acting = seat
                # The seat that must answer goes first in to_seat (the server writes in
                # this order); the stderr transcript keeps the reference's seat order.
                to_seat.insert(first, (seat, data))
            else:
                to_seat.append((seat, data))
        self._wait_started_us = self._send_us
        if acting >= 0:
            self._deadline_at = self._deadline()

    def _showdown_views(
        self, state: BettingState
    ) -> tuple[list[tuple[tuple[int, ...], ...]], list[str]]:
        """Hole cards (values and text) each position sees in the final state of a showdown."""
        hole, cards, folded = self._deal.hole, self._hole_cards, state.folded
        shown = tuple(() if folded[q] else h for q, h in enumerate(hole))
        shown_text = ["" if folded[q] else c for q, c in enumerate(cards)]
        views: list[tuple[tuple[int, ...], ...]] = []
        texts: list[str] = []
        for p in range(len(hole)):
            if folded[p]:
                views.append(shown[:p] + (hole[p],) + shown[p + 1 :])
                texts.append("|".join(shown_text[:p] + [cards[p]] + shown_text[p + 1 :]))
            else:
                views.append(shown)
                texts.append("|".join(shown_text))
        return views, texts

    def _play(self) -> None:
        quiet = self.config.quiet
        out = self._out
        while self.phase is Phase.PLAYING:
            seat = self._acting_seat()
            event = self.conns[seat].next_event()
            if event is NEED_DATA:
                return
            if isinstance(event, ClientClosed):
                waited = (self._clock() - self._wait_started_us) / 1e6
                raise MatchError(event.error, (
                    f"seat {seat + 1} closed its connection (end of file) while it was to act",
                    f"{waited:.1f} seconds spent waiting; timeout "
                    f"{self._max_response_us / 1e6:.1f}",
                ))
            recv = self._clock()
            if not quiet:
                # The reference prints the line with %s: up to a NUL byte.
                line = event.line.partition("\x00")[0]
                out.stderr.append(f"FROM {seat + 1} at {format_time(recv)} {line}")
            if event.checks_time and not self._within_limits(seat, recv):
                raise MatchError(f"ERROR: seat {seat + 1} ran out of time")
            for warning in event.warnings:
                out.stderr.append(warning + "\n")
            if isinstance(event, ActionReceived):
                self._act(seat, event.action, recv)

    def _act(self, seat: int, action: Action, recv_us: int) -> None:
        self._charge(seat, self._send_us, recv_us)
        if self.config.transactions:
            self._out.tlog.append(
                f"{format_action(action, self.game)} {self.hand} "
                f"{format_time(self._send_us)} {format_time(recv_us)}\n"
            )
        # The connection judged the response once (fix_action): the action is legal here.
        self._state = self._state._apply_unchecked(action)
        if self._state.finished:
            self._finish_hand()
        else:
            self._send_states()

    def _finish_hand(self) -> None:
        state, deal, hand, n = self._state, self._deal, self.hand, self.game.num_players
        self._pending.append(lambda: self._settle(hand, state, deal))
        self.hands_done += 1
        self._send_states()
        if not self.config.quiet and self.hand % 100 == 0:
            for seat in range(n):
                self._out.stderr.append(
                    f"Seconds cumulatively spent in match for seat {seat}: "
                    f"{self._used_match_us[seat] // 1_000_000}\n"
                )
        self.hand += 1
        if self.hand >= self.config.num_hands:
            self._finish_match()
            return
        self._start_hand()
        self._send_states()

    def _settle(self, hand: int, state: BettingState, deal: Deal) -> None:
        """A finished hand's values into the totals, and its log line."""
        values = hand_values(state, deal.hole, deal.board)
        n, fixed = self.game.num_players, self.config.fixed_seats
        for p, v in enumerate(values):
            self.totals[seat_of(p, hand, n, fixed)] += v
        names = names_by_position(self.config.seat_names, hand, fixed)
        self._out.log.append(
            format_state_line(hand, state, deal.hole, deal.board, values, names) + "\n"
        )

    def _finish_match(self) -> None:
        self._settle_all()
        if not self.config.quiet:
            self._out.stderr.append(f"FINISHED at {format_time(self._clock())}\n")
        line = format_score_line(self.totals, self.config.seat_names) + "\n"
        self._out.stdout.append(line)
        self._out.stderr.append(line)
        self._out.log.append(line)
        self.phase = Phase.DONE
        self.exit_status = 0


def _parse_stamp(text: str) -> int:
    sec, _, usec = text.partition(".")
    if not sec.isdigit() or not usec.isdigit():
        raise UsageError(text)
    return int(sec) * 1_000_000 + int(usec)
