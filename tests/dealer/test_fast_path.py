"""The wire fast paths against the pure engine, for random action sequences (hypothesis).

The dealer engine applies a response once, unchecked, after the connection's repair
(:func:`~agent.acpc.betting.fix_action`), assembles every state text from per-hand pieces
and records the view from its parts; the server holds back states for a seat that is not to
act and joins them with its next write; the client parses a state that continues the last
one incrementally (:func:`~agent.acpc.matchstate.parse_next_matchstate`). The oracle is the
pure engine: ``BettingState.initial`` + the checked ``apply`` of every action, the deal from
the seed, :func:`~agent.acpc.matchstate.view_of` + ``format_matchstate`` for every line,
``format_state_line`` for every log line, and ``parse_matchstate`` for every parse.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.acpc.betting import (
    CALL,
    FOLD,
    Action,
    ActionKind,
    BettingState,
    fix_action,
    format_action,
)
from agent.acpc.dealing import deal_hands
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import (
    MatchState,
    format_matchstate,
    parse_matchstate,
    parse_next_matchstate,
    view_of,
)
from dealer.engine import Match, MatchConfig, Phase
from dealer.logfile import format_state_line, hand_values, names_by_position
from dealer.server import _Runner, _SeatProtocol

GAMES = [
    "holdem.limit.2p.reverse_blinds.game",
    "holdem.nolimit.2p.reverse_blinds.game",
    "holdem.limit.3p.game",
    "holdem.nolimit.3p.game",
    "nl3p_uneven.game",
    "lim4p_stack.game",
]
HANDS = 6


def _choose(data: st.DataObject, state: BettingState) -> Action:
    """A random legal action (raise sizes anywhere in the bounds, ends favoured)."""
    kinds = [ActionKind.CALL]
    if state.can_fold():
        kinds.append(ActionKind.FOLD)
    bounds = state.raise_bounds()
    if bounds is not None:
        kinds.append(ActionKind.RAISE)
    kind = data.draw(st.sampled_from(kinds))
    if kind is ActionKind.FOLD:
        return FOLD
    if kind is ActionKind.CALL:
        return CALL
    assert bounds is not None
    if not state.game.is_nolimit:
        return Action(ActionKind.RAISE)
    lo, hi = bounds
    to = data.draw(st.one_of(st.sampled_from([lo, hi]), st.integers(lo, hi)))
    return Action(ActionKind.RAISE, to)


def _config(game_name: str, game: Game, seed: int, quiet: bool = True) -> MatchConfig:
    return MatchConfig(
        match_name="fast", game_file=game_name, game=game, num_hands=HANDS, seed=seed,
        seat_names=tuple(f"P{i}" for i in range(game.num_players)), quiet=quiet,
    )


def _ticking_clock(step: int) -> Callable[[], int]:
    """A clock that moves ``step`` microseconds each time it is read."""
    now = [1_000_000]

    def clock() -> int:
        now[0] += step
        return now[0]

    return clock


def _response(match: Match, choices: list[int], k: int) -> tuple[int, bytes]:
    """The acting seat and its answer: legal action kind ``choices[k]`` (mod the legal ones),
    a raise to the minimum."""
    seat = match.acting_seat
    conn = match.conns[seat]
    state = conn.last_state
    assert state is not None
    kinds = state.state.legal_actions()
    kind = kinds[choices[k % len(choices)] % len(kinds)]
    bounds = state.state.raise_bounds()
    to = bounds[0] if kind is ActionKind.RAISE and bounds is not None else 0
    action = format_action(Action(kind, to), match.game)
    return seat, f"{conn.last_line}:{action}\r\n".encode("ascii")


def _start(match: Match) -> None:
    match.begin()
    match.connected()
    for seat in range(match.game.num_players):
        match.receive(seat, b"VERSION:2.0.0\r\n")


@pytest.mark.parametrize("game_name", GAMES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_engine_lines_and_log_equal_the_pure_engine(
    game_name: str, data: st.DataObject, seed: int
) -> None:
    game = load_game(game_name)
    n = game.num_players
    config = _config(game_name, game, seed)
    match = Match(config, _ticking_clock(3))
    _start(match)
    deals = deal_hands(game, seed)
    pure = BettingState.initial(game)
    deal = next(deals)
    hand = 0
    last: dict[int, tuple[MatchState, str]] = {}
    log_lines: list[str] = []
    expected_log: list[str] = []
    sent = 0
    while True:
        out = match.drain()
        log_lines.extend(x for x in out.log if x.startswith("STATE:"))
        newest: dict[int, MatchState] = {}
        for seat, raw in out.to_seat:
            text = raw.decode("ascii").removesuffix("\r\n")
            ms = parse_matchstate(text, game)
            if ms.hand_number != hand:  # the engine moved on to the next hand
                assert pure.finished
                hand, pure, deal = ms.hand_number, BettingState.initial(game), next(deals)
            want = view_of(ms.position, hand, pure, deal.hole, deal.board)
            assert text == format_matchstate(want)
            newest[seat] = want
            # the client's incremental parse of the same stream
            prev = last.get(seat)
            if prev is not None:
                assert parse_next_matchstate(text, game, prev[0], prev[1]) == ms
            last[seat] = (ms, text)
            sent += 1
        for seat, want in newest.items():  # the view recorded from its parts
            assert match.conns[seat].last_state == want
        if match.phase is Phase.DONE:
            break
        seat = match.acting_seat
        action = _choose(data, pure)
        pure = pure.apply(action)  # the oracle: checked
        line = last[seat][1]
        match.receive(seat, f"{line}:{format_action(action, game)}\r\n".encode("ascii"))
        if pure.finished:
            values = hand_values(pure, deal.hole, deal.board)
            names = names_by_position(config.seat_names, hand, False)
            expected_log.append(
                format_state_line(hand, pure, deal.hole, deal.board, values, names) + "\n"
            )
    assert match.exit_status == 0
    assert log_lines == expected_log and len(log_lines) == HANDS and sent >= HANDS * n


@pytest.mark.parametrize("game_name", GAMES)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_fix_action_always_gives_a_legal_action(game_name: str, data: st.DataObject) -> None:
    """The dealer applies the repaired response unchecked: the repair must be legal."""
    game = load_game(game_name)
    state = BettingState.initial(game)
    while not state.finished:
        kind = data.draw(st.sampled_from(list(ActionKind)))
        raw = Action(kind, data.draw(st.integers(-5, 2 * max(game.stack))) if
                     kind is ActionKind.RAISE and game.is_nolimit else 0)
        fixed, _ = fix_action(state, raw)
        state.check_action(fixed)
        state = state.apply(fixed if data.draw(st.booleans()) else _choose(data, state))


class _Transport:
    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return False


async def _serve(
    game_name: str, seed: int, delay_ms: float, choices: list[int]
) -> list[list[bytes]]:
    """A whole match through the server's writer with fake transports; the writes per seat."""
    game = load_game(game_name)
    match = Match(_config(game_name, game, seed), lambda: 1_000_000)
    runner = _Runner(match, io.StringIO(), io.StringIO(), None, None, delay_ms)
    transports = [_Transport() for _ in range(game.num_players)]
    for seat, transport in enumerate(transports):
        proto = _SeatProtocol(runner, seat)
        proto.transport = transport  # type: ignore[assignment]
        runner.protocols.append(proto)
    runner.connected()
    match.begin()
    match.connected()
    runner.flush()
    for seat in range(game.num_players):
        runner.feed(seat, b"VERSION:2.0.0\r\n")
    k = 0
    while match.phase is not Phase.DONE:
        runner.feed(*_response(match, choices, k))
        k += 1
        await asyncio.sleep(0)
    return [t.writes for t in transports]


@pytest.mark.parametrize("game_name", ["holdem.nolimit.2p.reverse_blinds.game",
                                       "holdem.limit.3p.game"])
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), choices=st.lists(st.integers(0, 5), min_size=1,
                                                       max_size=30))
def test_held_states_reach_every_seat_unchanged_in_fewer_writes(
    game_name: str, seed: int, choices: list[int]
) -> None:
    at_once = asyncio.run(_serve(game_name, seed, 0.0, choices))
    held = asyncio.run(_serve(game_name, seed, 5.0, choices))
    for seat, (a, b) in enumerate(zip(at_once, held, strict=True)):
        assert b"".join(a) == b"".join(b), f"seat {seat} got other bytes"
    assert sum(map(len, held)) < sum(map(len, at_once))


def _outputs_by_stream(
    game_name: str, seed: int, choices: list[int], idles: list[int] | None, quiet: bool
) -> tuple[dict[str, str], list[list[bytes]], int]:
    """Play one match straight through the engine; per stream, everything it produced.

    ``idles`` None: :meth:`Match.drain` after every response (no deferred work is left
    pending); else :meth:`Match.drain_sendable` and ``idles[k]`` calls of :meth:`Match.idle`
    after response ``k``. Also returns the states written per step and how many log lines
    were still pending (not yet produced) right after a hand's last response.
    """
    game = load_game(game_name)
    match = Match(_config(game_name, game, seed, quiet), _ticking_clock(7))
    _start(match)
    streams = {"log": "", "stderr": "", "stdout": "", "tlog": ""}
    steps: list[list[bytes]] = []
    deferred = 0
    k = 0
    while True:
        out = match.drain() if idles is None else match.drain_sendable()
        for name in streams:
            streams[name] += "".join(getattr(out, name))
        steps.append([data for _, data in out.to_seat])
        if idles is not None and match.phase is Phase.PLAYING:
            deferred += match.hands_done - streams["log"].count("STATE:")
            for _ in range(idles[k % len(idles)]):
                match.idle()
        if match.phase is Phase.DONE:
            break
        match.receive(*_response(match, choices, k))
        k += 1
    assert match.exit_status == 0
    return streams, steps, deferred


@pytest.mark.parametrize("game_name", ["holdem.nolimit.2p.reverse_blinds.game",
                                       "holdem.limit.3p.game"])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       choices=st.lists(st.integers(0, 5), min_size=1, max_size=30),
       idles=st.lists(st.integers(0, 3), min_size=1, max_size=10), quiet=st.booleans())
def test_deferred_work_changes_no_output(
    game_name: str, seed: int, choices: list[int], idles: list[int], quiet: bool
) -> None:
    """A finished hand's values and log line and the next deal may wait for Match.idle (the
    server runs it while the acting seat thinks): every stream and every state sent is the
    same as when nothing waits, however often idle runs, and the log lines do wait."""
    want, want_steps, _ = _outputs_by_stream(game_name, seed, choices, None, quiet)
    got, got_steps, deferred = _outputs_by_stream(game_name, seed, choices, idles, quiet)
    assert got == want
    assert got_steps == want_steps
    assert want["log"].count("STATE:") == HANDS
    assert deferred > 0  # hands' log lines were still pending after their last response
