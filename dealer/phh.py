"""Hand histories in the PHH format (the poker hand history notation pokerkit reads).

A PHH hand is a small TOML document; a ``.phhs`` file holds many, each under a ``[N]``
table header. This module writes them from what acpc-arena records:

* dealer logs (:func:`log_to_phhs`): every ``STATE:`` line is a whole hand with every hole
  card, the board, the actions and the chips won;
* agent traces (:func:`trace_to_phhs`, the JSON lines of ``acpc-agent --trace``): one hand per
  hand number. A hand with its result record (``"event": "result"``, written by
  ``acpc-agent`` at the end of every hand) is the whole hand, with the agent's cards, the
  opponents' cards where they were shown (else the PHH unknown card ``??``) and the board;
  a hand without one (a trace cut short, or written by an older version) is the betting up
  to and including the agent's last decision with every card ``??`` (when that last action
  reaches a showdown, which unknown cards cannot settle, it is written as a PHH comment,
  ``# pK cc: reaches a showdown of unknown cards``).

**Which games map** (:func:`phh_variant`): hold'em as pokerkit knows it: 4 suits, 13 ranks,
2 hole cards, 4 rounds with 0, 3, 1, 1 board cards, no-limit (``NT``) or limit (``FT``, raise
sizes ``s s 2s 2s``, at most 4 raises a round and at most 3 before the flop); heads-up with
position 0 the big blind, acting first after the flop (the ``reverse_blinds`` games), or 3 or
more players with position 0 the small blind, 1 the big blind, the rest no blind, position 2
first before the flop and position 0 after it. Every other game (Kuhn, Leduc, royal, other
blinds or orders) is refused with one line. PHH player ``p(k+1)`` is ACPC position ``k``;
pokerkit lists heads-up blinds small first, so ``blinds_or_straddles`` is
``[blind[1], blind[0]]`` heads-up and ``blind`` itself otherwise.

**Fields written**: ``variant``, ``antes`` (zeros), ``blinds_or_straddles``, ``min_bet``
(no-limit: the big blind) or ``small_bet``/``big_bet`` (limit), ``starting_stacks`` (the
game's stacks; ``2147483647`` where the game has none), ``actions``, ``hand`` (the ACPC hand
number), ``players`` (the log's names by position), ``event`` (the match name); from a log
also ``finishing_stacks`` (stack + chips won, when every value is a whole number) and the
user fields ``_acpc_values`` (chips won by position, exactly as logged) and ``_acpc_state``
(the ``STATE:`` line). Actions: ``d dh pK CARDS`` for every player's hole cards, then by round
``d db CARDS`` for its board (also for the rounds an all-in runs out), ``pK f``, ``pK cc``
(check or call), ``pK cbr N`` (bet or raise to N chips *in this round*, blinds included
before the flop: the ACPC raise-to minus what the player had in at the round's start), and
at a showdown ``pK sm CARDS`` for every player still in. With uneven stacks the ACPC rules
let a player raise when no opponent still in can put in more than the bet (all are all-in
or short; the excess comes back); pokerkit does not, so such a raise is written as ``cc``:
the chips won are the same.

Some raises the ACPC rules allow have no PHH form, and a hand with one is refused with a line
naming it (``acpc-log phh --skip-unmappable`` leaves such hands out). They all come from
all-ins and short stacks: the limit short-stack raise (a raise by a player whose stack does
not cover the bet *lowers* the bet; see :mod:`agent.acpc.betting`); and, after an all-in
short of a full raise, the ACPC rules reopen the betting and count the minimum raise from the
last full bet, while pokerkit (like casino rules) keeps the betting closed to players who
had acted, refuses a raise by a player facing only such an all-in, and counts the minimum
raise from the current bet (:class:`_StreetRules`). In equal-stack heads-up games none of
these can happen.

**The other way** (:func:`phhs_to_log`, ``acpc-log from-phh``): a PHH file's hands of the
same games replayed as a dealer log (``pK cbr N`` a raise to the round's starting chips plus
``N``): the header from ``_acpc_header`` (written with every hand of a log, so log -> PHH ->
log is byte-identical), else seed 0 and the file's cards (``acpc-log verify
--cards-as-logged``). Antes, straddles, stacks other than the game's, unknown cards, illegal
or unfinished betting and ``finishing_stacks`` other than the ACPC payoffs are refused in one
line. The TOML is read with the stdlib's ``tomllib``: pokerkit is not needed.

Imports only the stdlib, :mod:`agent.acpc` and :mod:`dealer.logfile`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agent.acpc.betting import (
    Action,
    ActionKind,
    BettingState,
    parse_action,
    parse_betting,
)
from agent.acpc.cards import format_card, parse_cards
from agent.acpc.errors import AcpcError
from agent.acpc.gamedef import Game
from agent.acpc.limits import MAX_RECORD_LINE_BYTES, check_json, excerpt
from dealer.logfile import (
    MAX_LOG_DIGITS,
    LogHeader,
    format_header,
    format_score_line,
    format_state_line,
    hand_values,
    names_by_position,
    parse_header,
    seat_of,
)

HOLDEM_BOARD = (0, 3, 1, 1)
UNKNOWN = "??"


class PhhError(AcpcError, ValueError):
    """A game, log, trace or hand that has no PHH form (the message says why)."""


@dataclass(frozen=True, slots=True)
class Hand:
    """One hand to write: the betting, cards (``None``: unknown) and optional results."""

    number: int
    state: BettingState
    hole: tuple[tuple[int, ...] | None, ...]
    board: tuple[int, ...] | None
    names: tuple[str, ...] | None = None
    values: tuple[float, ...] | None = None
    line: str | None = None


def phh_variant(game: Game) -> str:
    """``'NT'`` or ``'FT'``: the PHH variant of ``game``.

    Raises:
        PhhError: for a game pokerkit's hold'em does not describe (the message says what).
    """
    n = game.num_players
    why = None
    if (game.num_suits, game.num_ranks, game.num_hole_cards) != (4, 13, 2) or (
            game.num_board_cards != HOLDEM_BOARD):
        why = ("4 suits, 13 ranks, 2 hole cards, board 0 3 1 1, got "
               f"{game.num_suits} suits, {game.num_ranks} ranks, {game.num_hole_cards} hole "
               f"cards, board {' '.join(map(str, game.num_board_cards))}")
    elif n == 2 and not (game.blind[0] > game.blind[1] > 0 and game.first_player == (1, 0, 0, 0)):
        why = ("heads-up: position 0 the big blind, position 1 first before the flop and 0 "
               f"after it (the reverse_blinds games), got blinds {game.blind} and first "
               f"players {tuple(p + 1 for p in game.first_player)}")
    elif n > 2 and not (game.blind[1] > game.blind[0] > 0 and not any(game.blind[2:])
                        and game.first_player == (2, 0, 0, 0)):
        why = ("position 0 the small blind, 1 the big blind, others none, position 2 first "
               f"before the flop and 0 after it, got blinds {game.blind} and first players "
               f"{tuple(p + 1 for p in game.first_player)}")
    elif not game.is_nolimit:
        s = game.raise_size
        if s != (s[0], s[0], 2 * s[0], 2 * s[0]):
            why = f"limit raise sizes s s 2s 2s, got {' '.join(map(str, s))}"
        elif game.max_raises[0] > 3 or max(game.max_raises) > 4:
            why = (f"at most 3 raises before the flop and 4 after, got "
                   f"{' '.join(map(str, game.max_raises))}")
    if why is not None:
        raise PhhError(f"expected a hold'em game pokerkit reads (PHH NT or FT): {why}")
    return "NT" if game.is_nolimit else "FT"


def _cards(cards: Sequence[int] | None, count: int) -> str:
    if cards is None:
        return UNKNOWN * count
    return "".join(format_card(c) for c in cards)


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "nan"
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string is a JSON string for ASCII text
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise PhhError(f"expected an int, float, string or list for a PHH field, got {excerpt(value)}")


class _StreetRules:
    """What PHH (pokerkit, like casino rules) allows a raise on one street that the ACPC rules
    may allow more freely: the minimum raise counts from the current bet, and an all-in
    short of a full raise does not reopen the betting to players who have acted."""

    def __init__(self, base: int) -> None:
        self.base = base  # the smallest full raise on this street
        self.largest = 0  # the largest raise increment so far on this street
        self.acted: set[int] = set()  # players who acted since the last full raise
        self.shorts: list[int] = []  # increments of consecutive all-ins short of full

    def raise_refused(self, state: BettingState, to: int) -> str | None:
        """Why a raise to ``to`` (hand total) by the player to act has no PHH form."""
        p = state.player
        if to <= state.max_spent:
            return "a limit raise by a short stack that lowers the bet"
        if state.max_spent - state.spent[p] < self.largest:
            return f"a raise by p{p + 1} facing only an all-in short of a full raise"
        if self.shorts and sum(self.shorts) < self.largest and p in self.acted:
            return (f"a re-raise by p{p + 1}, who had acted, after an all-in short of a full "
                    f"raise")
        if to < state.max_spent + max(self.largest, self.base) and to < state.game.stack[p]:
            return (f"a raise to {to}, below the minimum counted from the current bet "
                    f"{state.max_spent} (after an all-in short of a full raise)")
        return None

    def raised(self, p: int, increment: int, *, all_in: bool) -> None:
        if increment >= self.largest:
            self.acted = {p}
        else:
            self.acted.add(p)
        self.largest = max(self.largest, increment)
        if all_in:
            self.shorts.append(increment)
        else:
            self.shorts.clear()
        if sum(self.shorts) >= self.largest:
            self.shorts.clear()


def phh_actions(hand: Hand, *, check: bool = True) -> list[str]:
    """The PHH ``actions`` of a hand (see the module docstring).

    ``check=False`` writes the hands with no PHH form too (for tests that show pokerkit
    refuses them).

    Raises:
        PhhError: for a hand with no PHH form (see the module docstring).
    """
    game = hand.state.game
    n = game.num_players
    out = [f"d dh p{p + 1} {_cards(hand.hole[p], game.num_hole_cards)}" for p in range(n)]
    state = BettingState.initial(game)
    final = hand.state
    for r, acts in enumerate(final.actions):
        if r:
            lo, hi = game.board_start(r), game.board_cards_through(r)
            cards = None if hand.board is None else hand.board[lo:hi]
            out.append(f"d db {_cards(cards, hi - lo)}")
        rules = _StreetRules(game.big_blind if game.is_nolimit else game.raise_size[r])
        for action in acts:
            p = state.player
            label = f"p{p + 1}"
            after = state.apply(action)
            if action.kind is ActionKind.FOLD:
                out.append(f"{label} f")
            elif action.kind is ActionKind.CALL:
                out.append(f"{label} cc")
            elif max(game.stack[q] for q in range(n)
                     if q != p and not state.folded[q]) <= state.max_spent:
                # pokerkit refuses a raise nobody can answer with more chips (every
                # opponent still in is all-in or has no more than the bet): write the call,
                # the excess comes back in both rule sets
                out.append(f"{label} cc")
            else:
                to = after.spent[p]
                why = rules.raise_refused(state, to) if check else None
                if why is not None:
                    raise PhhError(f"expected a hand PHH (pokerkit) can replay, got hand "
                                   f"{hand.number} ({excerpt(final.betting)}) with {why}")
                rules.raised(p, to - state.max_spent, all_in=to >= game.stack[p])
                out.append(f"{label} cbr {to - state.round_start_spent[p]}")
                state = after
                continue
            rules.acted.add(p)
            state = after
    if final.is_showdown:
        if any(h is None for h in hand.hole):
            # a showdown with unknown cards cannot be replayed: the action that reached it
            # becomes a comment, and the run-out deals after it go
            last = max(i for i, a in enumerate(out) if not a.startswith("d "))
            return [*out[:last], f"# {out[last]}: reaches a showdown of unknown cards"]
        for p in range(n):
            if not final.folded[p]:
                out.append(f"p{p + 1} sm {_cards(hand.hole[p], game.num_hole_cards)}")
    return out


def hand_to_phh(hand: Hand, event: str | None = None, *, check: bool = True,
                header: Sequence[str] | None = None) -> str:
    """One hand as a PHH document (TOML, no table header); ``check`` as
    :func:`phh_actions`; ``header``: the dealer log's four header lines, kept in the user
    field ``_acpc_header`` (so :func:`phhs_to_log` writes the log back as it was)."""
    game = hand.state.game
    variant = phh_variant(game)
    n = game.num_players
    blinds = [game.blind[1], game.blind[0]] if n == 2 else list(game.blind)
    fields: list[tuple[str, object]] = [
        ("variant", variant),
        ("antes", [0] * n),
        ("blinds_or_straddles", blinds),
    ]
    if variant == "NT":
        fields.append(("min_bet", game.big_blind))
    else:
        fields += [("small_bet", game.raise_size[0]), ("big_bet", game.raise_size[2])]
    fields += [("starting_stacks", list(game.stack)), ("actions", phh_actions(hand, check=check)),
               ("hand", hand.number)]
    if event is not None:
        fields.append(("event", event))
    if hand.names is not None:
        fields.append(("players", list(hand.names)))
    if hand.values is not None:
        if all(float(v).is_integer() for v in hand.values):
            fields.append(("finishing_stacks",
                           [s + int(v) for s, v in zip(game.stack, hand.values, strict=True)]))
        fields.append(("_acpc_values", [float(v) for v in hand.values]))
    if hand.line is not None:
        fields.append(("_acpc_state", hand.line))
    if header is not None:
        fields.append((HEADER_FIELD, list(header)))
    return "\n".join(f"{key} = {_toml(value)}" for key, value in fields) + "\n"


def hands_to_phhs(hands: Iterable[Hand], event: str | None = None) -> str:
    """Many hands as one ``.phhs`` text: ``[1]``, ``[2]``, ... tables."""
    parts = [f"[{i}]\n{hand_to_phh(hand, event)}" for i, hand in enumerate(hands, start=1)]
    return "\n".join(parts)


def _parse_cards(text: str, where: str) -> tuple[int, ...]:
    try:
        return parse_cards(text)
    except ValueError as exc:
        raise PhhError(f"{where}: expected cards, got {excerpt(text)}: {exc}") from None


def log_hands(game: Game, lines: Iterable[str], source: str = "<log>") -> list[Hand]:
    """The hands of a dealer log's ``STATE:`` lines.

    Raises:
        PhhError: for a ``STATE:`` line that does not parse in ``game``.
    """
    hands = []
    for no, line in enumerate(lines, start=1):
        if not line.startswith("STATE:"):
            continue
        where = f"{source}:{no}"
        parts = line.split(":")
        if len(parts) != 6 or not parts[1].isdigit() or len(parts[1]) > MAX_LOG_DIGITS:
            raise PhhError(f"{where}: expected STATE:hand:betting:cards:values:names (a hand "
                           f"number of at most {MAX_LOG_DIGITS} digits), got {excerpt(line)}")
        _, number, betting, cards, values, names = parts
        try:
            state = parse_betting(game, betting)
        except (AcpcError, ValueError) as exc:  # RemoteProtocolError is no ValueError
            raise PhhError(f"{where}: expected a legal betting, got {excerpt(betting)}: {exc}"
                           ) from None
        if not state.finished:
            raise PhhError(f"{where}: expected a finished hand, got betting {excerpt(betting)}")
        holes_text, _, board_text = cards.partition("/")
        holes = holes_text.split("|")
        if len(holes) != game.num_players:
            raise PhhError(f"{where}: expected {game.num_players} hole card groups, got "
                           f"{excerpt(holes_text)}")
        hole = tuple(_parse_cards(h, where) for h in holes)
        board = _parse_cards(board_text.replace("/", ""), where)
        try:
            vals = tuple(float(v) for v in values.split("|"))
        except ValueError:
            vals = ()
        if len(vals) != game.num_players or not all(math.isfinite(v) for v in vals):
            raise PhhError(f"{where}: expected {game.num_players} finite chip values, got "
                           f"{excerpt(values)}")
        hands.append(Hand(int(number), state, hole, board, tuple(names.split("|")), vals,
                          line))
    return hands


def log_to_phhs(game: Game, lines: Sequence[str], source: str = "<log>", *,
                skip: bool = False) -> tuple[str, int, list[int]]:
    """A dealer log as ``.phhs`` text, the number of hands written and the hand numbers
    left out (with ``skip``, the hands with no PHH form; without it they are an error).

    Raises:
        PhhError: for a game with no PHH form, a log without hands, a bad line, or (without
            ``skip``) a hand with no PHH form.
    """
    phh_variant(game)
    event = None
    header: list[str] | None = None
    if lines and lines[0].startswith("# name/game/hands/seed "):
        event = lines[0].split()[2]
        try:
            parse_header(lines[:4], source)
            header = list(lines[:4])
        except ValueError:
            header = None  # not a whole header: the hands are written without it
    hands = log_hands(game, lines, source)
    if not hands:
        raise PhhError(f"{source}: expected a dealer log with STATE: lines, got none")
    parts: list[str] = []
    skipped: list[int] = []
    for hand in hands:
        try:
            body = hand_to_phh(hand, event, header=header)
        except PhhError:
            if not skip:
                raise
            skipped.append(hand.number)
            continue
        parts.append(f"[{len(parts) + 1}]\n{body}")
    return "\n".join(parts), len(parts), skipped


def trace_hands(game: Game, lines: Iterable[str], source: str = "<trace>") -> list[Hand]:
    """The hands of an agent trace: per hand number, the whole hand from its result record,
    or else the last decision's betting followed by its real action (cards unknown).

    Raises:
        PhhError: for a line that is not a decision or result record of ``game``.
    """
    last: dict[int, tuple[str, str, str]] = {}
    results: dict[int, Hand] = {}
    for no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}:{no}"
        check_json(line, where=where, what="a JSON trace record",
                   max_chars=MAX_RECORD_LINE_BYTES, error=PhhError)
        try:
            record = json.loads(line)
        except ValueError as exc:  # JSONDecodeError, or past the int conversion limit
            raise PhhError(f"{where}: expected a JSON trace record, got {excerpt(line)}: "
                           f"{excerpt(getattr(exc, 'msg', str(exc)))}") from None
        if isinstance(record, dict) and record.get("event") == "result":
            hand = _result_hand(game, record, where)
            results[hand.number] = hand
            continue
        if not isinstance(record, dict) or not all(
                k in record for k in ("hand", "betting", "real")) or not _hand_number(
                record["hand"]):
            raise PhhError(f"{where}: expected a decision record with hand (a whole number "
                           f"in 0..{MAX_HAND_NUMBER}), betting and real, got {excerpt(line)}")
        last[record["hand"]] = (str(record["betting"]), str(record["real"]), where)
    hands = []
    for number in sorted(set(last) | set(results)):
        if number in results:
            hands.append(results[number])
            continue
        betting, real, where = last[number]
        try:
            state = parse_betting(game, betting)
            state = state.apply(parse_action(real, game))
        except ValueError as exc:
            raise PhhError(f"{where}: expected a legal betting and action in this game, got "
                           f"{excerpt(betting)} then {excerpt(real)}: {exc}") from None
        hands.append(Hand(number, state, (None,) * game.num_players, None))
    return hands


def _result_hand(game: Game, record: dict[str, object], where: str) -> Hand:
    """A trace's result record as a whole hand (``--``: cards not shown)."""
    hole_cards, board, betting = (record.get(k) for k in ("hole_cards", "board", "betting"))
    if not _hand_number(record.get("hand")) or not isinstance(betting, str) or not (
            isinstance(hole_cards, list) and len(hole_cards) == game.num_players
            and all(isinstance(h, str) for h in hole_cards)) or not isinstance(board, str):
        raise PhhError(f"{where}: expected a result record with hand (a whole number in "
                       f"0..{MAX_HAND_NUMBER}), betting, {game.num_players} hole_cards and "
                       f"board, got {excerpt(record)}")
    try:
        state = parse_betting(game, betting)
    except ValueError as exc:
        raise PhhError(f"{where}: expected a legal betting in this game, got "
                       f"{excerpt(betting)}: {exc}") from None
    if not state.finished:
        raise PhhError(f"{where}: expected a finished hand, got betting {excerpt(betting)}")
    hole = tuple(None if h == "--" else _parse_cards(h.replace(" ", ""), where)
                 for h in hole_cards)
    cards = () if board == "--" else _parse_cards(board.replace(" ", ""), where)
    return Hand(int(str(record["hand"])), state, hole, cards)


MAX_HAND_NUMBER = 10**MAX_LOG_DIGITS - 1
"""Largest hand number read from a trace (as many digits as a log's)."""


def _hand_number(value: object) -> bool:
    """True for a whole number in ``0..MAX_HAND_NUMBER`` (a bool is not one)."""
    return isinstance(value, int) and not isinstance(value, bool) and (
        0 <= value <= MAX_HAND_NUMBER)


def trace_to_phhs(game: Game, lines: Sequence[str], source: str = "<trace>"
                  ) -> tuple[str, int]:
    """An agent trace as ``.phhs`` text and the number of hands.

    Raises:
        PhhError: for a game with no PHH form, a trace without decisions or a bad line.
    """
    phh_variant(game)
    hands = trace_hands(game, lines, source)
    if not hands:
        raise PhhError(f"{source}: expected a trace with decision records, got none")
    return hands_to_phhs(hands), len(hands)


# --- PHH to an ACPC log -------------------------------------------------------------------

MAX_PHH_BYTES = 64 << 20
"""Largest PHH file read (64 MiB: a million hands of two-player hold'em take about 400 MB
as PHH, so split bigger histories)."""
MAX_PHH_HANDS = 1_000_000
"""Most hands in one PHH file (an ACPC log numbers them 0..N-1)."""
MAX_PHH_ACTIONS = 10_000
"""Most actions in one PHH hand (an ACPC hand has at most a few hundred)."""
HEADER_FIELD = "_acpc_header"
"""The user field holding the dealer log's four header lines (written by ``acpc-log phh``)."""


@dataclass(frozen=True, slots=True)
class PhhLog:
    """A PHH file replayed as an ACPC dealer log."""

    text: str
    """The whole log: header, one ``STATE:`` line per hand, ``SCORE:``."""
    hands: int
    seeded: bool
    """True if the header came from the file (``_acpc_header``) and every hand's cards are
    its seed's deals (``acpc-log verify`` re-derives them); False: a header with seed 0, and
    the cards are the PHH file's (``acpc-log verify --cards-as-logged``)."""
    fixed_seats: bool


def _phh_field(doc: dict[str, object], key: str, where: str, want: object) -> None:
    got = doc.get(key)
    if got != want:
        raise PhhError(f"{where}: expected {key} = {_toml(want)} (the game's), got "
                       f"{excerpt(got)}")


def _phh_game_fields(game: Game, doc: dict[str, object], where: str) -> None:
    """Raise unless a PHH hand is played in ``game`` (variant, antes, blinds, bet sizes,
    stacks): what :func:`hand_to_phh` writes for it."""
    variant = phh_variant(game)
    n = game.num_players
    _phh_field(doc, "variant", where, variant)
    antes = doc.get("antes", [0] * n)
    if not isinstance(antes, list) or any(a != 0 for a in antes):
        raise PhhError(f"{where}: expected no antes (ACPC games have none), got "
                       f"{excerpt(antes)}")
    _phh_field(doc, "blinds_or_straddles", where,
               [game.blind[1], game.blind[0]] if n == 2 else list(game.blind))
    if variant == "NT":
        _phh_field(doc, "min_bet", where, game.big_blind)
    else:
        _phh_field(doc, "small_bet", where, game.raise_size[0])
        _phh_field(doc, "big_bet", where, game.raise_size[2])
    _phh_field(doc, "starting_stacks", where, list(game.stack))


def _phh_player(token: str, n: int, where: str, action: str) -> int:
    if not (token.startswith("p") and token[1:].isdigit() and 1 <= int(token[1:]) <= n):
        raise PhhError(f"{where}: expected a player p1..p{n}, got {excerpt(action)}")
    return int(token[1:]) - 1


def phh_hand(game: Game, doc: dict[str, object], number: int, where: str) -> Hand:
    """One PHH hand (a parsed TOML table) as a :class:`Hand` of ``game`` numbered
    ``number``: the inverse of :func:`hand_to_phh` (``pK cbr N`` is a raise to the player's
    chips at the round's start plus ``N``; ``pK sm CARDS`` must show the dealt cards).

    Raises:
        PhhError: for a hand of another game, with unknown cards (``??``: an ACPC log
            shows every card), illegal or unfinished, or whose ``finishing_stacks``
            disagree with the ACPC rules' payoffs.
    """
    _phh_game_fields(game, doc, where)
    actions = doc.get("actions")
    if not isinstance(actions, list) or not all(isinstance(a, str) for a in actions) or (
            len(actions) > MAX_PHH_ACTIONS):
        raise PhhError(f"{where}: expected actions, a list of at most {MAX_PHH_ACTIONS} "
                       f"strings, got {excerpt(actions)}")
    n = game.num_players
    hole: list[tuple[int, ...] | None] = [None] * n
    board: list[int] = []
    state = BettingState.initial(game)
    for action in actions:
        text = action.partition("#")[0].strip()  # a PHH comment runs to the end
        if not text:
            continue
        parts = text.split()
        if parts[:2] == ["d", "dh"] and len(parts) == 4:
            p = _phh_player(parts[2], n, where, action)
            if UNKNOWN in parts[3]:
                raise PhhError(f"{where}: expected every hole card known (an ACPC log shows "
                               f"them all), got {excerpt(action)}")
            hole[p] = _parse_cards(parts[3], where)
            continue
        if parts[:2] == ["d", "db"] and len(parts) == 3:
            if UNKNOWN in parts[2]:
                raise PhhError(f"{where}: expected the board known, got {excerpt(action)}")
            board.extend(_parse_cards(parts[2], where))
            continue
        if len(parts) < 2 or parts[0] == "d":
            raise PhhError(f"{where}: expected a PHH hold'em action (d dh, d db, pK f, pK cc, "
                           f"pK cbr N, pK sm), got {excerpt(action)}")
        p = _phh_player(parts[0], n, where, action)
        verb = parts[1]
        if verb == "sm":
            shown = parts[2] if len(parts) == 3 else ""
            if shown and _parse_cards(shown, where) != hole[p]:
                raise PhhError(f"{where}: expected p{p + 1} to show the cards dealt, got "
                               f"{excerpt(action)}")
            continue
        if state.finished or state.player != p:
            want = "no action after the end" if state.finished else f"p{state.player + 1} to act"
            raise PhhError(f"{where}: expected {want}, got {excerpt(action)}")
        try:
            if verb == "f" and len(parts) == 2:
                state = state.apply(Action(ActionKind.FOLD))
            elif verb == "cc" and len(parts) == 2:
                state = state.apply(Action(ActionKind.CALL))
            elif verb == "cbr" and len(parts) == 3 and parts[2].isdigit() and len(
                    parts[2]) <= MAX_LOG_DIGITS:
                start = state.round_start_spent[p]
                to = start + int(parts[2])
                after = state.apply(Action(ActionKind.RAISE, to if game.is_nolimit else 0))
                if after.spent[p] != to:
                    raise PhhError(f"{where}: expected a raise to {after.spent[p] - start} "
                                   f"in this round (the limit size), got {excerpt(action)}")
                state = after
            else:
                raise PhhError(f"{where}: expected a PHH hold'em action (pK f, pK cc, pK cbr N, "
                               f"pK sm CARDS), got {excerpt(action)}")
        except PhhError:
            raise
        except (AcpcError, ValueError) as exc:
            raise PhhError(f"{where}: expected a legal action, got {excerpt(action)} after "
                           f"{excerpt(state.betting)}: {exc}") from None
    if not state.finished:
        raise PhhError(f"{where}: expected a finished hand, got betting "
                       f"{excerpt(state.betting)}")
    if any(h is None for h in hole):
        raise PhhError(f"{where}: expected 'd dh' for every player, got "
                       f"{sum(h is not None for h in hole)} of {n}")
    need = game.board_cards_through(state.round)
    if len(board) < need:
        raise PhhError(f"{where}: expected {need} board cards through round "
                       f"{state.round + 1}, got {len(board)}")
    known = tuple(h for h in hole if h is not None)
    dealt = [c for h in known for c in h] + board
    if len(set(dealt)) != len(dealt):
        raise PhhError(f"{where}: expected every card dealt once, got "
                       f"{excerpt(' '.join(format_card(c) for c in dealt))}")
    return Hand(number, state, known, tuple(board))


def _phh_names(doc: dict[str, object], n: int, where: str) -> tuple[str, ...] | None:
    names = doc.get("players")
    if names is None:
        return None
    if not isinstance(names, list) or len(names) != n or not all(
            isinstance(x, str) and x and len(x) <= 64 and x.isprintable()
            and not any(c in x for c in "|: \t") for x in names):
        raise PhhError(f"{where}: expected players, {n} names without '|', ':' or spaces "
                       f"(ACPC log names), got {excerpt(names)}")
    return tuple(names)


def phh_documents(text: str, source: str = "<phh>") -> list[tuple[str, dict[str, object]]]:
    """The hands of a ``.phhs`` (``[1]``, ``[2]``, ... tables, in number order) or ``.phh``
    (one hand at the top level) text, each with where it is for messages.

    Raises:
        PhhError: for text that is not TOML, or tables that are not hands.
    """
    import tomllib

    try:
        doc = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError) as exc:
        raise PhhError(f"{source}: expected PHH (TOML) text, got "
                       f"{excerpt(str(exc))}") from None
    if "actions" in doc:
        return [(source, doc)]
    keys = list(doc)
    if not keys or not all(k.isdigit() and len(k) <= MAX_LOG_DIGITS
                           and isinstance(doc[k], dict) for k in keys):
        raise PhhError(f"{source}: expected PHH hands (a hand, or [1], [2], ... tables), got "
                       f"{excerpt(keys[:4] if keys else 'no hands')}")
    if len(keys) > MAX_PHH_HANDS:
        raise PhhError(f"{source}: expected at most {MAX_PHH_HANDS:,} hands, got {len(keys):,}")
    return [(f"{source}: hand [{k}]", doc[k]) for k in sorted(keys, key=int)]


def phhs_to_log(game: Game, text: str, source: str = "<phh>", game_name: str = "game",
                ) -> PhhLog:
    """A PHH file replayed as an ACPC dealer log (see :class:`PhhLog`): hands numbered
    0..N-1 in file order; names from ``players`` (seated as the dealer seats them: rotating,
    else fixed; ``p1``.. fixed when no hand names them); the header from ``_acpc_header`` when
    every hand carries the same (the hand count made right), else match ``event`` (or
    ``phh``), game ``game_name``, seed 0 and the default time limits.

    Raises:
        PhhError: for a hand :func:`phh_hand` refuses, names no seating explains, or
            ``finishing_stacks`` other than the ACPC payoffs give.
    """
    phh_variant(game)
    docs = phh_documents(text, source)
    n = game.num_players
    hands = [phh_hand(game, doc, i, where) for i, (where, doc) in enumerate(docs)]
    named = [_phh_names(doc, n, where) for where, doc in docs]
    seat_names = named[0] or tuple(f"p{p + 1}" for p in range(n))

    def seated(fixed: bool) -> int | None:
        """The first hand whose names ``fixed`` (or rotating) seats do not give."""
        return next((i for i, names in enumerate(named) if names is not None
                     and list(names) != names_by_position(seat_names, i, fixed)), None)

    rotating_bad = seated(False)  # the dealer's default first, as verify infers it
    fixed = rotating_bad is not None
    if fixed and (bad := seated(True)) is not None:
        raise PhhError(f"{docs[bad][0]}: expected the players of the first hand seated as the "
                       f"dealer seats them (rotating or fixed), got {excerpt(named[bad])}")
    headers = {tuple(h) if isinstance(h := doc.get(HEADER_FIELD), list) else None
               for _, doc in docs}
    header: LogHeader | None = None
    if len(headers) == 1 and (lines := headers.pop()) is not None:
        try:
            found = parse_header([str(x) for x in lines], f"{source}: {HEADER_FIELD}")
        except ValueError as exc:
            raise PhhError(str(exc)) from None
        header = LogHeader(found.match_name, found.game_file, len(hands), found.seed,
                           found.t_response_ms, found.t_hand_ms, found.t_per_hand_ms)
    seeded = header is not None
    if header is None:
        event = docs[0][1].get("event")
        name = event if isinstance(event, str) and event and not any(
            c.isspace() for c in event) and len(event) <= 64 else "phh"
        header = LogHeader(name, game_name, len(hands), 0)
    out = [format_header(header).rstrip("\n")]
    totals = [0.0] * n
    for i, (hand, (where, doc)) in enumerate(zip(hands, docs, strict=True)):
        hole = tuple(h or () for h in hand.hole)  # every hand of phh_hand has them all
        values = hand_values(hand.state, hole, hand.board or ())
        finishing = doc.get("finishing_stacks")
        if finishing is not None and all(float(v).is_integer() for v in values) and (
                finishing != [s + int(v) for s, v in zip(game.stack, values, strict=True)]):
            raise PhhError(f"{where}: expected finishing_stacks "
                           f"{[s + int(v) for s, v in zip(game.stack, values, strict=True)]} "
                           f"(the ACPC payoffs), got {excerpt(finishing)}")
        names = names_by_position(seat_names, i, fixed)
        out.append(format_state_line(i, hand.state, hole, hand.board or (), values, names))
        for p in range(n):
            totals[seat_of(p, i, n, fixed)] += values[p]
    out.append(format_score_line(totals, seat_names))
    return PhhLog("\n".join(out) + "\n", len(hands), seeded, fixed)
