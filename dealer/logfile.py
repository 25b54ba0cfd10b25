"""The reference dealer's log format: header, ``STATE:`` lines and the ``SCORE:`` line.

One definition serves the dealer (writing logs) and ``acpc-log`` (checking them). The layout
is the reference ``printInitialMessage`` / ``addToLogFile`` / ``printFinalMessage``
(docs/protocol.md, section 7): numbers print as ``%.6f`` with trailing zeros and a trailing ``.``
removed; values are listed by position and names by position on ``STATE`` lines, by seat on
the ``SCORE`` line. Seat ``s`` plays position ``(s - hand) mod n`` unless seats are fixed.

Pure and stdlib only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent.acpc.betting import BettingState
from agent.acpc.errors import UsageError
from agent.acpc.evaluator import rank_hand_fast as rank_hand
from agent.acpc.limits import check_digits, excerpt
from agent.acpc.matchstate import format_cards_section

DEFAULT_T_RESPONSE_MS = 600000
DEFAULT_T_HAND_MS = 600000
DEFAULT_T_PER_HAND_MS = 7000
MAX_LOG_DIGITS = 20
"""Digits a whole number of a log line may have (hand numbers, seeds, time limits): every
real one fits in 20 (the reference prints unsigned 32-bit values); checked before ``int()``."""


def log_int(text: str, where: str, field: str) -> int:
    """A whole number of a log line, at most :data:`MAX_LOG_DIGITS` digits.

    Raises:
        UsageError: naming ``where`` and ``field`` for a longer one.
    """
    return check_digits(text, MAX_LOG_DIGITS, where=where, field=field, error=UsageError)


def format_chips(value: float) -> str:
    """``%.6f`` with trailing zeros and a trailing ``.`` removed; never ``-0``."""
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def seat_of(position: int, hand_number: int, num_players: int, fixed_seats: bool) -> int:
    """The seat playing ``position`` in hand ``hand_number`` (``playerToSeat``)."""
    if fixed_seats:
        return position
    return (position + hand_number) % num_players


def position_of(seat: int, hand_number: int, num_players: int, fixed_seats: bool) -> int:
    """The position seat ``seat`` plays in hand ``hand_number`` (``seatToPlayer``)."""
    if fixed_seats:
        return seat
    return (seat - hand_number) % num_players


@dataclass(frozen=True, slots=True)
class LogHeader:
    """The four header lines of a dealer log."""

    match_name: str
    game_file: str
    num_hands: int
    seed: int
    t_response_ms: int = DEFAULT_T_RESPONSE_MS
    t_hand_ms: int = DEFAULT_T_HAND_MS
    t_per_hand_ms: int = DEFAULT_T_PER_HAND_MS


def format_header(header: LogHeader) -> str:
    """The header block, four lines each ending in ``\\n``."""
    return (
        f"# name/game/hands/seed {header.match_name} {header.game_file} "
        f"{header.num_hands} {header.seed}\n"
        f"#--t_response {header.t_response_ms}\n"
        f"#--t_hand {header.t_hand_ms}\n"
        f"#--t_per_hand {header.t_per_hand_ms}\n"
    )


_HEADER = re.compile(r"# name/game/hands/seed (\S+) (\S+) (\d+) (\d+)")
_LIMIT = re.compile(r"#--(t_response|t_hand|t_per_hand) (\d+)")


def parse_header(lines: Sequence[str], source: str = "<log>") -> LogHeader:
    """Parse the first four lines of a log (without line ends).

    Raises:
        ValueError: naming the line that does not have the expected form.
    """
    if not lines:
        raise UsageError(f"{source}:1: expected '# name/game/hands/seed ...', got an empty file")
    m = _HEADER.fullmatch(lines[0])
    if m is None:
        raise UsageError(
            f"{source}:1: expected '# name/game/hands/seed <match> <game> <hands> <seed>', "
            f"got {excerpt(lines[0])}"
        )
    limits: dict[str, int] = {}
    for i, key in enumerate(("t_response", "t_hand", "t_per_hand"), start=1):
        line = lines[i] if i < len(lines) else ""
        lm = _LIMIT.fullmatch(line)
        if lm is None or lm.group(1) != key:
            raise UsageError(f"{source}:{i + 1}: expected '#--{key} <ms>', got "
                             f"{excerpt(line)}")
        limits[key] = log_int(lm.group(2), f"{source}:{i + 1}", key)
    return LogHeader(
        m.group(1), m.group(2), log_int(m.group(3), f"{source}:1", "hands"),
        log_int(m.group(4), f"{source}:1", "seed"),
        limits["t_response"], limits["t_hand"], limits["t_per_hand"],
    )


def hand_ranks(
    state: BettingState, hole: Sequence[Sequence[int]], board: Sequence[int]
) -> list[int]:
    """Showdown strength of every position, with the board through the hand's last round."""
    visible = list(board[: state.game.board_cards_through(state.round)])
    return [rank_hand(list(h) + visible) for h in hole]


def hand_values(
    state: BettingState, hole: Sequence[Sequence[int]], board: Sequence[int]
) -> tuple[float, ...]:
    """Payoffs by position of a finished hand, as the reference computes them."""
    if state.is_showdown:
        return state.payoffs(hand_ranks(state, hole, board))
    return state.payoffs()


def format_state_line(
    hand_number: int,
    state: BettingState,
    hole: tuple[tuple[int, ...], ...],
    board: tuple[int, ...],
    values: Sequence[float],
    names_by_position: Sequence[str],
) -> str:
    """A ``STATE:`` line (no line end): every hole card, the board through the last round."""
    cards = format_cards_section(state, hole, board, None)
    vals = "|".join(format_chips(v) for v in values)
    return f"STATE:{hand_number}:{state.betting}:{cards}:{vals}:{'|'.join(names_by_position)}"


def format_score_line(totals_by_seat: Sequence[float], seat_names: Sequence[str]) -> str:
    """The ``SCORE:`` line (no line end): totals and names by seat."""
    vals = "|".join(format_chips(v) for v in totals_by_seat)
    return f"SCORE:{vals}:{'|'.join(seat_names)}"


def names_by_position(
    seat_names: Sequence[str], hand_number: int, fixed_seats: bool
) -> list[str]:
    """Seat names in position order for one hand."""
    n = len(seat_names)
    return [seat_names[seat_of(p, hand_number, n, fixed_seats)] for p in range(n)]

