"""Game definition files: parse every quirk of the reference reader, format canonically.

The rules mirror ``readGame`` of the reference dealer (docs/protocol.md, section 4): lines starting
with ``#`` or a newline are skipped; keys match case-insensitively as prefixes at column 0 in
the reference's order; ``END GAMEDEF`` stops reading; the ``GAMEDEF`` line is optional;
values follow the key after any run of whitespace and ``=`` and reading stops at the first
thing that is not an integer; a key given twice keeps its last value; unknown lines are
ignored. Defaults: limit betting, stacks ``INT32_MAX``, first player 1, unlimited raises.

Where the reference would silently read garbage, this parser stops with a
:class:`GameDefError` naming the file, line and field (a key with no readable number, a number
of more than :data:`MAX_DIGITS` digits, numbers out of range, a text longer than
:data:`MAX_GAMEDEF_CHARS`); ranges: docs/reference/limits.md. :func:`format_gamedef` writes
the canonical form (the layout of the reference ``printGame``) and :attr:`Game.fingerprint` is
the sha256 of that text, so two files that define the same game have the same fingerprint.

Pure and stdlib only: parsing takes text; reading files is the caller's business.
"""

from __future__ import annotations

import enum
import hashlib
import re
from dataclasses import dataclass, field

from agent.acpc.errors import GameDefError
from agent.acpc.limits import check_digits, excerpt

INT32_MAX = 2**31 - 1
UNLIMITED_RAISES = 255
"""``maxRaises`` value meaning "no limit" (the reference's ``UINT8_MAX``)."""

MAX_PLAYERS = 10
MAX_ROUNDS = 4
MAX_SUITS = 4
MAX_RANKS = 13
MAX_HOLE_CARDS = 3
MAX_BOARD_CARDS = 7
MAX_DIGITS = 20
"""Digits a number of a game definition may have (leading zeros included): every value in
range has at most 10, so this only stops numbers no range check could accept, before
``int()`` converts them."""
MAX_GAMEDEF_CHARS = 1 << 20
"""Longest game definition text read (1 MiB; the bundled ones are under 1 KB)."""


class BettingType(enum.Enum):
    """Betting structure of a game (the reference has no pot-limit)."""

    LIMIT = "limit"
    NOLIMIT = "nolimit"


@dataclass(frozen=True, slots=True)
class Game:
    """A parsed, validated game definition.

    All per-position tuples have ``num_players`` entries and all per-round tuples
    ``num_rounds`` entries. ``first_player`` is 0-based (the file is 1-based).
    ``raise_size`` is empty for no-limit games.
    """

    betting_type: BettingType
    num_players: int
    num_rounds: int
    stack: tuple[int, ...]
    blind: tuple[int, ...]
    raise_size: tuple[int, ...]
    first_player: tuple[int, ...]
    max_raises: tuple[int, ...]
    num_suits: int
    num_ranks: int
    num_hole_cards: int
    num_board_cards: tuple[int, ...]
    _board_start: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        starts = [0]
        for n in self.num_board_cards:
            starts.append(starts[-1] + n)
        object.__setattr__(self, "_board_start", tuple(starts))

    @property
    def is_nolimit(self) -> bool:
        """True for no-limit betting."""
        return self.betting_type is BettingType.NOLIMIT

    @property
    def big_blind(self) -> int:
        """The largest blind (0 if there are none)."""
        return max(self.blind)

    def board_start(self, round_: int) -> int:
        """Index of the first board card of ``round_`` in the flat board list."""
        return self._board_start[round_]

    def board_cards_through(self, round_: int) -> int:
        """Number of board cards visible in ``round_`` (all rounds up to it)."""
        return self._board_start[round_ + 1]

    @property
    def total_board_cards(self) -> int:
        """Board cards dealt in a whole hand."""
        return self._board_start[-1]

    @property
    def cards_per_hand(self) -> int:
        """Cards drawn from the deck for every hand (hole cards + the whole board)."""
        return self.num_players * self.num_hole_cards + self.total_board_cards

    @property
    def fingerprint(self) -> str:
        """sha256 hex digest of the canonical text (:func:`format_gamedef`)."""
        return hashlib.sha256(format_gamedef(self).encode("ascii")).hexdigest()


# Keys in the order the reference tests them; the first prefix that matches wins.
_KEYS: tuple[str, ...] = (
    "end gamedef",
    "gamedef",
    "stack",
    "blind",
    "raisesize",
    "limit",
    "nolimit",
    "numplayers",
    "numrounds",
    "firstplayer",
    "maxraises",
    "numsuits",
    "numranks",
    "numholecards",
    "numboardcards",
)
_LIST_KEYS = {
    "stack": MAX_PLAYERS,
    "blind": MAX_PLAYERS,
    "raisesize": MAX_PLAYERS,
    "firstplayer": MAX_ROUNDS,
    "maxraises": MAX_ROUNDS,
    "numboardcards": MAX_ROUNDS,
}
_SHOWN = {
    "stack": "stack = <int> ...",
    "blind": "blind = <int> ...",
    "raisesize": "raiseSize = <int> ...",
    "firstplayer": "firstPlayer = <int> ...",
    "maxraises": "maxRaises = <int> ...",
    "numboardcards": "numBoardCards = <int> ...",
    "numplayers": "numPlayers = <int>",
    "numrounds": "numRounds = <int>",
    "numsuits": "numSuits = <int>",
    "numranks": "numRanks = <int>",
    "numholecards": "numHoleCards = <int>",
}
_INT = re.compile(r"[ \t\n\r\f\v=]*([+-]?\d+)")


def _read_items(text: str, limit: int, where: str, field: str) -> list[int]:
    """Read up to ``limit`` integers, each after any run of whitespace and ``=``.

    Mirrors the reference ``readItems`` with ``consumeEqual`` set: reading stops at the first
    thing that does not start an integer. A number of more than :data:`MAX_DIGITS` digits is
    a :class:`GameDefError` naming ``where`` and ``field``.
    """
    items: list[int] = []
    pos = 0
    while len(items) < limit:
        m = _INT.match(text, pos)
        if m is None:
            break
        items.append(check_digits(m.group(1), MAX_DIGITS, where=where, field=field,
                                  error=GameDefError))
        pos = m.end()
    return items


@dataclass
class _Seen:
    values: list[int]
    line_no: int
    line: str


def parse_gamedef(text: str, source: str = "<gamedef>") -> Game:
    """Parse the text of a game definition file.

    Args:
        text: the whole file.
        source: the file name used in error messages.

    Returns:
        The validated :class:`Game`.

    Raises:
        GameDefError: with ``source:line`` for a key whose value cannot be read, a value out
            of range (docs/reference/limits.md), a list with too few values, a missing required key,
            a game that does not fit its deck, or a text over :data:`MAX_GAMEDEF_CHARS`.
    """
    if len(text) > MAX_GAMEDEF_CHARS:
        raise GameDefError(f"{source}: expected a game definition of at most "
                           f"{MAX_GAMEDEF_CHARS:,} characters, got {len(text):,}")
    betting = BettingType.LIMIT
    seen: dict[str, _Seen] = {}
    pieces = text.split("\n")
    if pieces[-1] == "":
        pieces.pop()
    for line_no, piece in enumerate(pieces, start=1):
        raw = piece + "\n"  # as fgets hands lines over; only '\n' ends a line
        if raw[0] in "#\n":
            continue
        lower = raw.lower()
        key = next((k for k in _KEYS if lower.startswith(k)), None)
        if key is None or key == "gamedef":
            continue
        if key == "end gamedef":
            break
        if key == "limit":
            betting = BettingType.LIMIT
            continue
        if key == "nolimit":
            betting = BettingType.NOLIMIT
            continue
        shown = raw.rstrip("\r\n")
        values = _read_items(raw[len(key) :], _LIST_KEYS.get(key, 1), f"{source}:{line_no}",
                             repr(_SHOWN[key]))
        if not values:
            raise GameDefError(f"{source}:{line_no}: expected {_SHOWN[key]!r}, got "
                               f"{excerpt(shown)}")
        seen[key] = _Seen(values, line_no, shown)
    return _build(source, betting, seen)


def _where(source: str, item: _Seen | None) -> str:
    return f"{source}:{item.line_no}" if item is not None else source


def _single(source: str, seen: dict[str, _Seen], key: str, lo: int, hi: int) -> int:
    item = seen.get(key)
    if item is None:
        raise GameDefError(f"{source}: missing required line {_SHOWN[key]!r}")
    value = item.values[0]
    if not lo <= value <= hi:
        raise GameDefError(
            f"{source}:{item.line_no}: expected {_SHOWN[key]!r} with a value in {lo}..{hi}, "
            f"got {excerpt(item.line)}"
        )
    return value


def _listed(
    source: str, seen: dict[str, _Seen], key: str, need: int, what: str
) -> tuple[int, ...] | None:
    item = seen.get(key)
    if item is None:
        return None
    if len(item.values) < need:
        raise GameDefError(
            f"{source}:{item.line_no}: expected {need} {what} values in {_SHOWN[key]!r}, "
            f"got {len(item.values)} in {excerpt(item.line)}"
        )
    return tuple(item.values[:need])


def _build(source: str, betting: BettingType, seen: dict[str, _Seen]) -> Game:
    num_rounds = _single(source, seen, "numrounds", 1, MAX_ROUNDS)
    num_players = _single(source, seen, "numplayers", 2, MAX_PLAYERS)
    stack = _listed(source, seen, "stack", num_players, "per-player")
    if stack is None:
        stack = (INT32_MAX,) * num_players
    blind = _listed(source, seen, "blind", num_players, "per-player")
    if blind is None:
        raise GameDefError(f"{source}: missing required line {_SHOWN['blind']!r}")
    for p in range(num_players):
        where = _where(source, seen.get("stack"))
        if not 0 < stack[p] <= INT32_MAX:
            raise GameDefError(f"{where}: expected stacks in 1..{INT32_MAX}, got {stack[p]!r}")
        if not 0 <= blind[p] <= stack[p]:
            raise GameDefError(
                f"{_where(source, seen.get('blind'))}: expected blind for player {p + 1} "
                f"in 0..stack ({stack[p]}), got {blind[p]!r}"
            )
    if betting is BettingType.LIMIT:
        raise_size = _listed(source, seen, "raisesize", num_rounds, "per-round")
        if raise_size is None:
            raise GameDefError(
                f"{source}: missing required line {_SHOWN['raisesize']!r} for a limit game"
            )
        if any(not 0 < r <= INT32_MAX for r in raise_size):
            raise GameDefError(
                f"{_where(source, seen.get('raisesize'))}: expected raise sizes in "
                f"1..{INT32_MAX}, got {raise_size!r}"
            )
    else:
        raise_size = ()
    first = [1] * num_rounds
    if "firstplayer" in seen:
        item = seen["firstplayer"]
        for r, v in enumerate(item.values[:num_rounds]):
            first[r] = v
        for r, v in enumerate(first):
            if not 1 <= v <= num_players:
                raise GameDefError(
                    f"{source}:{item.line_no}: expected firstPlayer for round {r + 1} in "
                    f"1..{num_players}, got {v!r} in {excerpt(item.line)}"
                )
    max_raises = [UNLIMITED_RAISES] * num_rounds
    if "maxraises" in seen:
        item = seen["maxraises"]
        for r, v in enumerate(item.values[:num_rounds]):
            if not 0 <= v <= UNLIMITED_RAISES:
                raise GameDefError(
                    f"{source}:{item.line_no}: expected maxRaises in 0..{UNLIMITED_RAISES}, "
                    f"got {v!r} in {excerpt(item.line)}"
                )
            max_raises[r] = v
    num_suits = _single(source, seen, "numsuits", 1, MAX_SUITS)
    num_ranks = _single(source, seen, "numranks", 1, MAX_RANKS)
    num_hole = _single(source, seen, "numholecards", 1, MAX_HOLE_CARDS)
    board = _listed(source, seen, "numboardcards", num_rounds, "per-round")
    if board is None:
        raise GameDefError(f"{source}: missing required line {_SHOWN['numboardcards']!r}")
    if any(b < 0 for b in board) or sum(board) > MAX_BOARD_CARDS:
        raise GameDefError(
            f"{_where(source, seen.get('numboardcards'))}: expected numBoardCards values "
            f"of at least 0 and at most {MAX_BOARD_CARDS} board cards in all, got {board!r}"
        )
    if num_hole * num_players + sum(board) > num_suits * num_ranks:
        raise GameDefError(
            f"{source}: too many hole and board cards for the deck: "
            f"{num_players} x {num_hole} hole + {sum(board)} board > "
            f"{num_suits} suits x {num_ranks} ranks"
        )
    return Game(
        betting_type=betting,
        num_players=num_players,
        num_rounds=num_rounds,
        stack=stack,
        blind=blind,
        raise_size=raise_size,
        first_player=tuple(f - 1 for f in first),
        max_raises=tuple(max_raises),
        num_suits=num_suits,
        num_ranks=num_ranks,
        num_hole_cards=num_hole,
        num_board_cards=board,
    )


def _ints(values: tuple[int, ...]) -> str:
    return " ".join(str(v) for v in values)


def format_gamedef(game: Game) -> str:
    """The canonical text of ``game`` (the layout of the reference ``printGame``).

    Default-valued lists (all stacks ``INT32_MAX``, every first player 1, every round
    unlimited raises) are left out, as the reference does. Parsing the result gives back an
    equal :class:`Game`.
    """
    lines = ["GAMEDEF", game.betting_type.value]
    lines.append(f"numPlayers = {game.num_players}")
    lines.append(f"numRounds = {game.num_rounds}")
    if any(s < INT32_MAX for s in game.stack):
        lines.append(f"stack = {_ints(game.stack)}")
    lines.append(f"blind = {_ints(game.blind)}")
    if not game.is_nolimit:
        lines.append(f"raiseSize = {_ints(game.raise_size)}")
    if any(f != 0 for f in game.first_player):
        lines.append(f"firstPlayer = {_ints(tuple(f + 1 for f in game.first_player))}")
    if any(m != UNLIMITED_RAISES for m in game.max_raises):
        lines.append(f"maxRaises = {_ints(game.max_raises)}")
    lines.append(f"numSuits = {game.num_suits}")
    lines.append(f"numRanks = {game.num_ranks}")
    lines.append(f"numHoleCards = {game.num_hole_cards}")
    lines.append(f"numBoardCards = {_ints(game.num_board_cards)}")
    lines.append("END GAMEDEF")
    return "\n".join(lines) + "\n"
