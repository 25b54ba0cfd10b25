"""``acpc-log``: tools for dealer logs.

``acpc-log verify GAME LOG`` re-derives every ``STATE:`` line and the ``SCORE:`` line of a
dealer log from the header's seed and the betting strings (deals, legality of every action,
values, number formatting, names by position, totals by seat) and exits 0 iff the log is
byte-identical to what a faithful dealer writes; otherwise it prints the first mismatch with
its line number and exits 1.

``acpc-log allin-ev GAME LOG`` prints every seat's total, raw and with the hands that ended
in all-ins before the last round valued at their expectation over the remaining boards
(exact enumeration, :mod:`evaluation.estimators.allin`), in chips and in mbb/h.

``acpc-log aivat GAME LOG [LOG...] --seat N=SPEC [...] [--no-imaginary] [--json F]`` values
every hand by AIVAT (:mod:`evaluation.estimators.aivat`) with the policies of the seats
given, the logs' hands of equal seed and number paired as duplicate deals.

``acpc-log phh GAME FILE [--out F.phhs] [--skip-unmappable]`` writes the hands of a dealer
log, or of an agent trace (``acpc-agent --trace``: JSON lines), as PHH hand histories, the
format pokerkit reads (:mod:`dealer.phh`: which games map, what is written); a game with no
PHH form is refused in one line. ``acpc-log from-phh GAME FILE.phhs [--out MATCH.log]`` is
the inverse: a dealer log that ``verify`` accepts (with ``--cards-as-logged`` when the file
did not come from ``acpc-log phh``, whose cards no seed deals).

Imports only the stdlib, :mod:`agent.acpc` and :mod:`dealer.logfile` (``allin-ev`` imports
:mod:`evaluation.estimators.allin`, ``aivat`` :mod:`evaluation.estimators.aivat` and
:mod:`evaluation.match.variants`, and ``phh`` :mod:`dealer.phh` when they run).
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent.acpc.betting import BettingState, parse_action, parse_betting
from agent.acpc.cards import in_deck, parse_cards
from agent.acpc.dealing import Deal, deal_hands
from agent.acpc.errors import AcpcError, whole_lines
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.limits import excerpt, read_lines
from dealer.logfile import (
    MAX_LOG_DIGITS,
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
MISMATCH_CHARS = 200
"""A mismatch quotes at most this many characters of each line."""


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
            f"  expected: {excerpt(self.expected, MISMATCH_CHARS)}\n"
            f"  got:      {excerpt(self.got, MISMATCH_CHARS)}"
        )


@dataclass(frozen=True, slots=True)
class VerifyResult:
    """Outcome of :func:`verify_log`."""

    hands: int
    mismatch: Mismatch | None
    unlogged: tuple[int, ...] = ()
    """Hands a resumed match completed without logging them (see :func:`verify_lines`)."""
    score_checked: bool = True
    """False if the SCORE line could not be re-derived (unlogged hands, no transactions)."""

    @property
    def ok(self) -> bool:
        return self.mismatch is None


NO_FINAL_NEWLINE = "\0no final newline"
"""The extra last line :func:`iter_log_lines` gives a file whose last line has no end (it
matches nothing, so the line shows in a mismatch)."""


def iter_log_lines(path: Path) -> Iterator[str]:
    """The lines of a log, streamed: each ASCII and at most
    :data:`~agent.acpc.limits.MAX_RECORD_LINE_BYTES` bytes (else a :class:`LogError` naming
    the line), then :data:`NO_FINAL_NEWLINE` if the last line has no line end.

    Raises:
        LogError: when the file cannot be read (at the first line asked for) or a line is bad.
    """
    try:
        with path.open("rb") as f:
            line = None
            for _, line in read_lines(f, source=str(path), what="a dealer log",
                                      error=LogError, encoding="ascii"):
                yield line
            if line is not None:
                f.seek(-1, 2)
                if f.read(1) != b"\n":
                    yield NO_FINAL_NEWLINE
    except OSError as exc:
        raise LogError(f"could not read log {str(path)!r}: {exc.strerror or exc}") from None


class _Window:
    """The lines of a stream by 0-based index, read on demand; lines before the last
    :meth:`release` are dropped, so verifying keeps only the lines it is looking at."""

    def __init__(self, lines: Iterable[str]) -> None:
        self._it = iter(lines)
        self._buf: deque[str] = deque()
        self._base = 0
        self._done = False

    def get(self, i: int) -> str | None:
        """Line ``i`` (not released), or None past the end."""
        while not self._done and i >= self._base + len(self._buf):
            try:
                self._buf.append(next(self._it))
            except StopIteration:
                self._done = True
        k = i - self._base
        if k < 0:
            raise AssertionError(f"line {i} was released")  # verify_lines never goes back
        return self._buf[k] if k < len(self._buf) else None

    def release(self, i: int) -> None:
        """Forget every line before ``i``."""
        while self._buf and self._base < i:
            self._buf.popleft()
            self._base += 1

    def lines_from(self, i: int, count: int) -> Iterator[str]:
        """Up to ``count`` lines from ``i`` on (fewer at the end)."""
        for k in range(i, i + count):
            line = self.get(k)
            if line is None:
                return
            yield line


def _split_state(line: str) -> tuple[int, str, list[str]] | None:
    """``(hand, betting, names)`` of a STATE line, or None if it is not one."""
    parts = line.split(":", 5)
    if len(parts) != 6 or parts[0] != "STATE" or not parts[1].isdigit() or (
            len(parts[1]) > MAX_LOG_DIGITS):
        return None
    return int(parts[1]), parts[2], parts[5].split("|")


SEATS_INFERENCE_LINES = 64
"""Lines after hand 0 that :func:`_infer_fixed_seats` looks at (hand 1 decides in a real
log)."""


def _infer_fixed_seats(lines: Iterable[str], seat_names: Sequence[str]) -> bool:
    """Whether the dealer ran with ``-f``, from the STATE lines after hand 0 (headers of a
    restart and anything else skipped): with fixed seats every hand lists the names in seat
    order, with rotating seats a hand that is not a multiple of the player count lists them
    rotated. The first line that tells them apart decides; rotating (the default) if none
    does (one hand only, or all names alike)."""
    n = len(seat_names)
    if len(set(seat_names)) < 2:
        return False
    for line in lines:
        state = _split_state(line)
        if state is None:
            continue
        hand, _, names = state
        if names != list(seat_names):
            return False
        if hand % n:
            return True
    return False


def _logged_deal(game: Game, state: BettingState, line: str) -> Deal | str:
    """The cards of a STATE line as a deal (``--cards-as-logged``), or why they are not one
    of ``game``: each position's hole cards, the board through the hand's last round, every
    card of the game's deck and dealt once."""
    holes_text, _, board_text = line.split(":")[3].partition("/")
    try:
        hole = tuple(parse_cards(h) for h in holes_text.split("|"))
        board = parse_cards(board_text.replace("/", ""))
    except ValueError as exc:
        return f"the cards do not parse: {exc}"
    dealt = [c for h in hole for c in h] + list(board)
    if len(hole) != game.num_players or any(len(h) != game.num_hole_cards for h in hole) or (
            len(board) != game.board_cards_through(state.round)):
        return "expected every position's hole cards and the board through the last round"
    if len(set(dealt)) != len(dealt) or not all(in_deck(c, game) for c in dealt):
        return "expected cards of the game's deck, each dealt once"
    return Deal(hole, board)


def verify_lines(
    game: Game, stream: Iterable[str], source: str = "<log>", fixed_seats: bool | None = None,
    transactions: dict[int, list[str]] | None = None, cards_as_logged: bool = False,
) -> VerifyResult:
    """Check the lines of a log (without line ends) against a faithful re-derivation, reading
    them as it goes (a log of any length takes memory for a few lines, not the file).

    A resumed match (``-T`` then ``-a``) is checked as the reference writes it: the header
    again at each restart, and hands the restart replayed from the transaction file without
    logging them may be missing right after it; their values come from ``transactions``
    (hand -> actions), and without them the SCORE line is not re-derived.

    Args:
        game: the game the log was played in.
        stream: the log's lines (a list, or :func:`iter_log_lines`).
        source: name used in messages.
        fixed_seats: whether the dealer ran with ``-f``; ``None`` infers it from the names.
        transactions: the transaction file's actions per hand (:func:`read_transactions`).
        cards_as_logged: take each hand's cards from its STATE line (checked: the game's
            deck, each card once) instead of re-deriving them from the seed: for logs made
            from other formats (``acpc-log from-phh``), whose cards no seed deals.

    Raises:
        LogError: if the header is not a dealer log header.
    """
    lines = _Window(stream)

    def line_at(line_no: int) -> str:
        """The 1-based line ``line_no``, or ``<end of file>``."""
        got = lines.get(line_no - 1)
        return "<end of file>" if got is None else got

    head = list(lines.lines_from(0, 4))
    try:
        header = parse_header(head, source)
    except ValueError as exc:
        raise LogError(str(exc)) from None
    n = game.num_players
    expected_header = format_header(header).split("\n")[:4]
    for i, (want, got) in enumerate(zip(expected_header, head, strict=True)):
        if want != got:
            return VerifyResult(0, Mismatch(i + 1, want, got, "header differs"))
    got = line_at(5)
    first = _split_state(got)
    if first is None or len(first[2]) != n:
        return VerifyResult(0, Mismatch(
            5, f"STATE:0:...:<{n} names by position>", got,
            f"expected a STATE line for hand 0 of a {n}-player game",
        ))
    seat_names = first[2]
    if fixed_seats is None:
        fixed_seats = _infer_fixed_seats(lines.lines_from(5, SEATS_INFERENCE_LINES),
                                         seat_names)
    totals = [0.0] * n
    deals = None if cards_as_logged else deal_hands(game, header.seed)
    skipped = 0  # lines of repeated headers so far, less hands missing from the log
    unlogged: list[int] = []
    score_known = True

    def resumed_header(at: int) -> tuple[int, Mismatch | None]:
        """Lines of a repeated header at line ``at`` (a resumed match), 0 if none."""
        if not line_at(at).startswith("# name/game/hands/seed"):
            return 0, None
        for i, want in enumerate(expected_header):
            got = line_at(at + i)
            if got != want:
                return 0, Mismatch(at + i, want, got,
                                   "a repeated header (a resumed match) differs from the first")
        return len(expected_header), None

    def add(hand: int, state: BettingState, values: Sequence[float]) -> None:
        for p in range(n):
            totals[seat_of(p, hand, n, fixed_seats)] += values[p]

    resumed = False
    for hand in range(header.num_hands):
        deal = None if deals is None else next(deals)
        if hand:
            extra, bad = resumed_header(5 + hand + skipped)
            if bad is not None:
                return VerifyResult(hand, bad)
            skipped += extra
            resumed = resumed or bool(extra)
        line_no = 5 + hand + skipped
        lines.release(line_no - 1)
        got = line_at(line_no)
        parsed = _split_state(got)
        if resumed and parsed is not None and parsed[0] > hand:
            # The reference replays a resumed match's transaction file without logging the
            # hands it completes: a hand finished just before the kill may be missing.
            unlogged.append(hand)
            skipped -= 1
            actions = (transactions or {}).get(hand)
            if actions is None or deal is None:
                score_known = False
                continue
            try:
                state = BettingState.initial(game)
                for text in actions:
                    state = state.apply(parse_action(text, game))
            except AcpcError as exc:
                return VerifyResult(hand, Mismatch(
                    line_no, "legal actions", " ".join(actions),
                    f"the transaction file's hand {hand} is illegal: {exc}"))
            if not state.finished:
                return VerifyResult(hand, Mismatch(
                    line_no, "a finished hand", state.betting,
                    f"the transaction file's hand {hand} does not end"))
            add(hand, state, hand_values(state, deal.hole, deal.board))
            continue
        resumed = False
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
        if deal is None:
            logged = _logged_deal(game, state, got)
            if isinstance(logged, str):
                return VerifyResult(hand, Mismatch(line_no, "a deal of the game", got, logged))
            deal = logged
        values = hand_values(state, deal.hole, deal.board)
        names = names_by_position(seat_names, hand, fixed_seats)
        want = format_state_line(hand, state, deal.hole, deal.board, values, names)
        if want != got:
            return VerifyResult(hand, Mismatch(line_no, want, got, "STATE line differs"))
        add(hand, state, values)
    extra, bad = resumed_header(5 + header.num_hands + skipped)
    if bad is not None:
        return VerifyResult(header.num_hands, bad)
    skipped += extra
    line_no = 5 + header.num_hands + skipped
    want = format_score_line(totals, seat_names)
    got = line_at(line_no)
    if not score_known:
        if not got.startswith("SCORE:") or got.count(":") != 2:
            return VerifyResult(header.num_hands, Mismatch(
                line_no, "SCORE:<totals>:<names>", got, "expected the SCORE line"))
    elif want != got:
        return VerifyResult(header.num_hands, Mismatch(line_no, want, got, "SCORE line differs"))
    after = lines.get(line_no)
    if after is not None:
        return VerifyResult(header.num_hands, Mismatch(
            line_no + 1, "<end of file>", after, "unexpected text after SCORE"
        ))
    return VerifyResult(header.num_hands, None, tuple(unlogged), score_known)


def read_transactions(path: Path, game: Game) -> dict[int, list[str]]:
    """The actions of each hand in a dealer's transaction file (``MATCH.tlog``: one line per
    action, ``<action> <hand> <send time> <receive time>``).

    Raises:
        LogError: if the file cannot be read or a line is not of that form.
    """
    hands: dict[int, list[str]] = {}
    try:
        with path.open("rb") as f:
            for no, line in read_lines(f, source=str(path), what="a transaction file",
                                       error=LogError, encoding="ascii"):
                parts = line.split()
                if len(parts) != 4 or not parts[1].isdigit() or len(parts[1]) > MAX_LOG_DIGITS:
                    raise LogError(f"{path}:{no}: expected '<action> <hand> <sent> "
                                   f"<received>' (a hand of at most {MAX_LOG_DIGITS} digits), "
                                   f"got {excerpt(line)}")
                hands.setdefault(int(parts[1]), []).append(parts[0])
    except OSError as exc:
        raise LogError(f"could not read transaction file {str(path)!r}: "
                       f"{exc.strerror or exc}") from None
    return hands


def verify_log(game: Game, path: Path, fixed_seats: bool | None = None,
               tlog: Path | None = None, cards_as_logged: bool = False) -> VerifyResult:
    """Read a log file and :func:`verify_lines` it, with the transaction file ``tlog``
    (default: ``MATCH.tlog`` beside ``MATCH.log``, if there is one).

    Raises:
        LogError: if a file cannot be read or the log is not a dealer log.
    """
    if tlog is None and path.with_suffix(".tlog").is_file():
        tlog = path.with_suffix(".tlog")
    transactions = read_transactions(tlog, game) if tlog is not None else None
    return verify_lines(game, iter_log_lines(path), str(path), fixed_seats, transactions,
                        cards_as_logged)


def _seat_spec(text: str) -> str:
    """An argparse ``type``: the shape ``N=SPEC`` of ``aivat --seat`` (status 2 if not; the
    name and the strategy are checked when the logs are read)."""
    key, eq, spec = text.partition("=")
    if not eq or not key.strip() or not spec.strip():
        raise argparse.ArgumentTypeError(f"expected N=SPEC (a name or seat number, then a "
                                         f"strategy), got {excerpt(text)}")
    return text


def build_parser() -> argparse.ArgumentParser:
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
    verify.add_argument("--tlog", type=Path, default=None,
                        help="the match's transaction file, for hands a resumed match "
                        "completed without logging (default: MATCH.tlog beside the log)")
    seats = verify.add_mutually_exclusive_group()
    seats.add_argument("--fixed-seats", dest="fixed", action="store_true", default=None,
                       help="the dealer ran with -f (default: inferred from the names)")
    seats.add_argument("--rotating-seats", dest="fixed", action="store_false",
                       help="the dealer rotated seats (its default)")
    verify.add_argument("--cards-as-logged", action="store_true",
                        help="take each hand's cards from its STATE line (checked) instead "
                        "of the seed's deals: for logs made by acpc-log from-phh")
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
    aivat = sub.add_parser(
        "aivat",
        help="each player's result by AIVAT, given the strategy files of some seats",
        description=(
            "Value every hand of one or more dealer logs by AIVAT (unbiased, "
            "variance-reduced) with the policies of the seats given by --seat; hands of "
            "logs with the same seed and hand number are one duplicate deal (a duplicate "
            "pair's two logs). Heads-up games."
        ),
    )
    aivat.add_argument("game", help="game definition file (or the name of a bundled game)")
    aivat.add_argument("logs", type=Path, nargs="+", metavar="LOG",
                       help="dealer logs (MATCH.log), e.g. both logs of a duplicate pair")
    aivat.add_argument("--seat", action="append", required=True, type=_seat_spec,
                       metavar="N=SPEC",
                       help="a known seat: N a player name as the log writes it, or a seat "
                       "number (1-based, in each log); SPEC a strategy file or builtin:NAME "
                       "with ,mapping= ,purify= ,sizes= as acpc-match's variants (repeatable)")
    aivat.add_argument("--no-imaginary", action="store_true",
                       help="no imaginary observations over the known seats' cards")
    aivat.add_argument("--json", type=Path, default=None, metavar="FILE",
                       help="write the results as JSON")
    phh = sub.add_parser(
        "phh",
        help="export a dealer log or an agent trace as PHH hand histories (pokerkit)",
        description=(
            "Write every hand of a dealer log (or of an acpc-agent --trace file) in the PHH "
            "hand-history format pokerkit reads: hold'em games only (no-limit NT, limit FT)."
        ),
    )
    phh.add_argument("game", help="game definition file (or the name of a bundled game)")
    phh.add_argument("source", type=Path, help="the dealer's MATCH.log or a trace (JSON lines)")
    phh.add_argument("--out", type=Path, default=None,
                     help="the .phhs file to write (default: standard output)")
    phh.add_argument("--skip-unmappable", action="store_true",
                     help="leave out hands with no PHH form (a limit raise by a short stack "
                     "that lowers the bet) instead of failing")
    back = sub.add_parser(
        "from-phh",
        help="replay PHH hand histories (pokerkit's format) as a dealer log",
        description=(
            "Write the hands of a PHH file (.phhs or .phh) as an ACPC dealer log that "
            "acpc-log verify accepts: hold'em games only (no-limit NT, limit FT), every card "
            "known; the inverse of acpc-log phh."
        ),
    )
    back.add_argument("game", help="game definition file (or the name of a bundled game)")
    back.add_argument("source", type=Path, help="the .phhs or .phh file")
    back.add_argument("--out", type=Path, default=None,
                      help="the log to write (default: standard output)")
    return parser


def _from_phh(game: Game, game_name: str, path: Path, out: Path | None) -> int:
    """``acpc-log from-phh``: write the log; returns the exit status.

    Raises:
        LogError: if a file cannot be read or written; PhhError: for a hand with no ACPC form.
    """
    from agent.acpc.limits import read_text_file
    from dealer.phh import MAX_PHH_BYTES, phh_variant, phhs_to_log

    phh_variant(game)  # refuse the game before reading anything
    text = read_text_file(path, max_bytes=MAX_PHH_BYTES, what="PHH file",
                          decoded="a UTF-8 PHH (TOML) file", error=LogError)
    log = phhs_to_log(game, text, str(path), Path(game_name).name)
    _write_out(out, log.text)
    seats = "fixed" if log.fixed_seats else "rotating"
    how = ("the cards are the header seed's deals" if log.seeded else
           "header seed 0: the cards are the file's, verify with --cards-as-logged")
    print(f"{PROG}: {log.hands} hands of {str(path)!r} as a dealer log"
          f"{f' in {str(out)!r}' if out is not None else ''} ({seats} seats; {how})",
          file=sys.stderr)
    return 0


def _write_out(out: Path | None, text: str) -> None:
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.parent.mkdir(parents=True, exist_ok=True)  # as every --out and --json
        out.write_text(text, encoding="ascii")
    except OSError as exc:
        raise LogError(f"could not write {str(out)!r}: {exc.strerror or exc}") from None
    except UnicodeEncodeError as exc:
        raise LogError(f"could not write {str(out)!r}: expected ASCII text, got "
                       f"{excerpt(exc.object[exc.start:exc.end])}") from None


def _phh(game: Game, path: Path, out: Path | None, skip: bool) -> int:
    """``acpc-log phh``: write the .phhs; returns the exit status.

    Raises:
        LogError: if the file cannot be read; PhhError: if it has no PHH form.
    """
    from dealer.phh import log_to_phhs, phh_variant, trace_to_phhs

    phh_variant(game)  # refuse the game before reading anything
    lines = [line for line in iter_log_lines(path) if line != NO_FINAL_NEWLINE]
    first = next((x for x in lines if x.strip()), "")
    skipped: list[int] = []
    if first.startswith("{"):
        text, count = trace_to_phhs(game, lines, str(path))
        kind = "trace"
    else:
        text, count, skipped = log_to_phhs(game, lines, str(path), skip=skip)
        kind = "log"
    _write_out(out, text)
    note = f", skipped hand(s) {', '.join(map(str, skipped))}" if skipped else ""
    print(f"{PROG}: {count} hands of the {kind} {str(path)!r} as PHH"
          f"{f' in {str(out)!r}' if out is not None else ''}{note}", file=sys.stderr)
    return 0


def _allin_ev(game: Game, path: Path, method: str) -> int:
    """``acpc-log allin-ev``: print the table; returns the exit status.

    Raises:
        LogError: if the log cannot be read or parsed.
    """
    from evaluation.estimators.allin import summarize_log

    try:
        summary = summarize_log(game, iter_log_lines(path), str(path), method)
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


def _seat_names(game: Game, path: Path) -> list[str]:
    """Seat names of a log (rotating seats): from its first ``STATE`` line.

    Raises:
        LogError: if the log has no ``STATE`` line.
    """
    for line in iter_log_lines(path):
        if line.startswith("STATE:"):
            parts = line.split(":")
            if len(parts) == 6 and parts[1].isdigit():
                names = parts[5].split("|")
                n = len(names)
                hand = int(parts[1][:MAX_LOG_DIGITS])
                return [names[(s - hand) % n] for s in range(n)]
    raise LogError(f"{path}: expected STATE lines, found none")


def _aivat(game: Game, logs: Sequence[Path], seats: Sequence[str], imaginary: bool,
           json_path: Path | None) -> int:
    """``acpc-log aivat``: print each player's result by AIVAT; returns the exit status.

    Raises:
        LogError: for a bad --seat or a log that cannot be read; VariantError for a bad
            strategy spec; UsageError for hands a known seat could not have played.
    """
    import json

    from evaluation.estimators.aivat import (
        Valuer,
        by_player,
        format_aivat_rows,
        log_hand_values,
        models_of,
        player_row,
    )
    from evaluation.match.variants import parse_variant

    if not seats:
        raise LogError("expected at least one --seat N=SPEC (a known seat's strategy)")
    specs: dict[str, str] = {}
    for text in seats:
        key, eq, spec = text.partition("=")
        key = key.strip()
        if not eq or not key or not spec.strip():
            raise LogError(f"expected --seat N=SPEC (a name or seat number, then a strategy), "
                           f"got {excerpt(text)}")
        if key.isdigit():
            number = int(key[:6])
            for path in logs:
                names = _seat_names(game, path)
                if not 1 <= number <= len(names):
                    raise LogError(f"expected a seat number from 1 to {len(names)} in --seat "
                                   f"{excerpt(text)}, got {number}")
                specs[names[number - 1]] = spec
        else:
            specs[key] = spec
    variants = [parse_variant(f"{name}={spec}") for name, spec in specs.items()]
    valuer = Valuer(game, models_of(game, variants), imaginary=imaginary)
    values = []
    for path in logs:
        values += log_hand_values(valuer, iter_log_lines(path), str(path))
    players = by_player(values)
    names = list(players)
    rows = []
    for name in names:
        others = "+".join(n for n in names if n != name)
        rows.append(player_row(f"{name} vs {others}", players[name], game.big_blind or 1))
    print(f"{', '.join(str(p) for p in logs)}: {len(values)} hands, "
          f"{max(r.deals for r in rows)} deals; known: {', '.join(sorted(specs))}")
    sys.stdout.write(format_aivat_rows(rows, valuer.kinds))
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps({"logs": [str(p) for p in logs],
                                         "known": sorted(specs),
                                         "rows": [r.to_dict() for r in rows],
                                         "value_functions": valuer.kinds}, indent=2) + "\n",
                             encoding="utf-8")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``acpc-log``; returns the exit status."""
    whole_lines()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        game = load_game(args.game)
        if args.command == "allin-ev":
            return _allin_ev(game, args.log, args.evaluator)
        if args.command == "phh":
            return _phh(game, args.source, args.out, args.skip_unmappable)
        if args.command == "from-phh":
            return _from_phh(game, args.game, args.source, args.out)
        if args.command == "aivat":
            return _aivat(game, args.logs, args.seat, not args.no_imaginary, args.json)
        result = verify_log(game, args.log, args.fixed, args.tlog, args.cards_as_logged)
    except AcpcError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted (Ctrl-C)", file=sys.stderr)
        return 130
    if result.mismatch is not None:
        print(result.mismatch.render(str(args.log)), file=sys.stderr)
        return 1
    note = ""
    if result.unlogged:
        missing = ", ".join(str(h) for h in result.unlogged)
        note = (f"; hand(s) {missing} completed before a restart and not logged (as the "
                f"reference does on resume)")
        if not result.score_checked:
            note += ", so the SCORE line is not re-derived: give --tlog MATCH.tlog"
    print(f"{args.log}: OK ({result.hands} hands, byte-identical{note})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
