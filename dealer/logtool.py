"""``acpc-log``: tools for dealer logs.

``acpc-log verify GAME LOG`` re-derives every ``STATE:`` line and the ``SCORE:`` line of a
dealer log from the header's seed and the betting strings (deals, legality of every action,
values, number formatting, names by position, totals by seat) and exits 0 iff the log is
byte-identical to what a faithful dealer writes; otherwise it prints the first mismatch with
its line number and exits 1.

``acpc-log allin-ev GAME LOG`` prints every seat's total, raw and with the hands that ended
in all-ins before the last round valued at their expectation over the remaining boards
(exact enumeration, :mod:`dealer.match.allin`), in chips and in mbb/h.

Imports only the stdlib, :mod:`agent.acpc` and :mod:`dealer.logfile` (``allin-ev`` imports
:mod:`dealer.match.allin` when it runs).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agent.acpc.betting import parse_betting
from agent.acpc.dealing import deal_hands
from agent.acpc.errors import AcpcError
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from dealer.logfile import (
    format_chips,
    format_header,
    format_score_line,
    format_state_line,
    hand_values,
    names_by_position,
    parse_header,
    seat_of,
)

PROG = "acpc-log"


class LogError(AcpcError, ValueError):
    """A log cannot be read at all (not a dealer log, unreadable file)."""


@dataclass(frozen=True, slots=True)
class Mismatch:
    """The first line where a log differs from what a faithful dealer writes."""

    line_no: int
    expected: str
    got: str
    reason: str

    def render(self, source: str) -> str:
        return (
            f"{source}:{self.line_no}: {self.reason}\n"
            f"  expected: {self.expected!r}\n"
            f"  got:      {self.got!r}"
        )


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """Outcome of :func:`verify_log`."""

    hands: int
    mismatch: Mismatch | None

    @property
    def ok(self) -> bool:
        return self.mismatch is None


def _read_lines(path: Path) -> list[str]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LogError(f"could not read log {str(path)!r}: {exc.strerror or exc}") from None
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as exc:
        raise LogError(
            f"{path}: expected an ASCII dealer log, got byte {data[exc.start]:#04x} at "
            f"offset {exc.start}"
        ) from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    else:
        lines.append("\0no final newline")  # makes the last line differ visibly
    return lines


def _split_state(line: str) -> tuple[int, str, list[str]] | None:
    """``(hand, betting, names)`` of a STATE line, or None if it is not one."""
    parts = line.split(":", 5)
    if len(parts) != 6 or parts[0] != "STATE" or not parts[1].isdigit():
        return None
    return int(parts[1]), parts[2], parts[5].split("|")


def verify_lines(
    game: Game, lines: Sequence[str], source: str = "<log>", fixed_seats: bool | None = None
) -> VerifyResult:
    """Check the lines of a log (without line ends) against a faithful re-derivation.

    Args:
        game: the game the log was played in.
        lines: the log's lines.
        source: name used in messages.
        fixed_seats: whether the dealer ran with ``-f``; ``None`` infers it from the names.

    Raises:
        LogError: if the header is not a dealer log header.
    """
    try:
        header = parse_header(lines[:4], source)
    except ValueError as exc:
        raise LogError(str(exc)) from None
    n = game.num_players
    expected_header = format_header(header).split("\n")[:4]
    for i, (want, got) in enumerate(zip(expected_header, lines[:4], strict=True)):
        if want != got:
            return VerifyResult(0, Mismatch(i + 1, want, got, "header differs"))
    first = _split_state(lines[4]) if len(lines) > 4 else None
    if first is None or len(first[2]) != n:
        got = lines[4] if len(lines) > 4 else "<end of file>"
        return VerifyResult(0, Mismatch(
            5, f"STATE:0:...:<{n} names by position>", got,
            f"expected a STATE line for hand 0 of a {n}-player game",
        ))
    seat_names = first[2]
    if fixed_seats is None:
        second = _split_state(lines[5]) if len(lines) > 5 else None
        fixed_seats = second is not None and second[2] == seat_names and len(set(seat_names)) > 1
    totals = [0.0] * n
    deals = deal_hands(game, header.seed)
    for hand in range(header.num_hands):
        line_no = 5 + hand
        got = lines[line_no - 1] if line_no - 1 < len(lines) else "<end of file>"
        deal = next(deals)
        parsed = _split_state(got)
        if parsed is None or parsed[0] != hand:
            return VerifyResult(hand, Mismatch(
                line_no, f"STATE:{hand}:...", got, f"expected the STATE line of hand {hand}",
            ))
        try:
            state = parse_betting(game, parsed[1])
        except AcpcError as exc:
            return VerifyResult(hand, Mismatch(
                line_no, "legal betting", parsed[1], f"illegal betting: {exc}"
            ))
        if not state.finished:
            return VerifyResult(hand, Mismatch(
                line_no, "a finished hand", parsed[1], "the betting does not end the hand"
            ))
        values = hand_values(state, deal.hole, deal.board)
        names = names_by_position(seat_names, hand, fixed_seats)
        want = format_state_line(hand, state, deal.hole, deal.board, values, names)
        if want != got:
            return VerifyResult(hand, Mismatch(line_no, want, got, "STATE line differs"))
        for p in range(n):
            totals[seat_of(p, hand, n, fixed_seats)] += values[p]
    line_no = 5 + header.num_hands
    want = format_score_line(totals, seat_names)
    got = lines[line_no - 1] if line_no - 1 < len(lines) else "<end of file>"
    if want != got:
        return VerifyResult(header.num_hands, Mismatch(line_no, want, got, "SCORE line differs"))
    if len(lines) > line_no:
        return VerifyResult(header.num_hands, Mismatch(
            line_no + 1, "<end of file>", lines[line_no], "unexpected text after SCORE"
        ))
    return VerifyResult(header.num_hands, None)


def verify_log(game: Game, path: Path, fixed_seats: bool | None = None) -> VerifyResult:
    """Read a log file and :func:`verify_lines` it.

    Raises:
        LogError: if the file cannot be read or is not a dealer log.
    """
    return verify_lines(game, _read_lines(path), str(path), fixed_seats)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description="Tools for ACPC dealer logs.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True)
    verify = sub.add_parser(
        "verify",
        help="re-derive every line of a dealer log and check it byte for byte",
        description=(
            "Re-derive every STATE line and the SCORE line of a dealer log from the header's "
            "seed and the betting; exit 0 iff identical, else print the first mismatch."
        ),
    )
    verify.add_argument("game", help="game definition file (or the name of a bundled game)")
    verify.add_argument("log", type=Path, help="the dealer's MATCH.log")
    seats = verify.add_mutually_exclusive_group()
    seats.add_argument("--fixed-seats", dest="fixed", action="store_true", default=None,
                       help="the dealer ran with -f (default: inferred from the names)")
    seats.add_argument("--rotating-seats", dest="fixed", action="store_false",
                       help="the dealer rotated seats (its default)")
    allin = sub.add_parser(
        "allin-ev",
        help="per-seat totals, raw and with all-in hands at their expected value",
        description=(
            "Total every seat's result in a dealer log, raw and with each hand that ended in "
            "all-ins before the last round replaced by its expectation over every remaining "
            "board (exact enumeration)."
        ),
    )
    allin.add_argument("game", help="game definition file (or the name of a bundled game)")
    allin.add_argument("log", type=Path, help="the dealer's MATCH.log")
    allin.add_argument("--evaluator", choices=("auto", "python", "numba"), default="auto",
                       help="hand evaluator (default auto: numba for big enumerations)")
    return parser


def _allin_ev(game: Game, path: Path, method: str) -> int:
    """``acpc-log allin-ev``: print the table; returns the exit status.

    Raises:
        LogError: if the log cannot be read or parsed.
    """
    from dealer.match.allin import summarize_log

    lines = _read_lines(path)
    try:
        summary = summarize_log(game, lines, str(path), method)
    except ValueError as exc:
        raise LogError(str(exc)) from None
    bb = game.big_blind or 1
    width = max([4] + [len(n) for n in summary.names])
    print(f"{path}: {summary.hands} hands, {summary.allin_hands} all-in hand(s) adjusted "
          f"(big blind {bb})")
    print(f"{'seat':>4}  {'name':<{width}}  {'raw':>14}  {'all-in EV':>14}  "
          f"{'raw mbb/h':>11}  {'EV mbb/h':>11}")
    for seat, name in enumerate(summary.names):
        raw, adj = summary.raw[seat], summary.adjusted[seat]
        print(f"{seat + 1:>4}  {name:<{width}}  {format_chips(raw):>14}  "
              f"{format_chips(round(adj, 6)):>14}  "
              f"{1000 * raw / bb / summary.hands:>+11.1f}  "
              f"{1000 * adj / bb / summary.hands:>+11.1f}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``acpc-log``; returns the exit status."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        game = load_game(args.game)
        if args.command == "allin-ev":
            return _allin_ev(game, args.log, args.evaluator)
        result = verify_log(game, args.log, args.fixed)
    except AcpcError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    if result.mismatch is not None:
        print(result.mismatch.render(str(args.log)), file=sys.stderr)
        return 1
    print(f"{args.log}: OK ({result.hands} hands, byte-identical)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
