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

Imports only the stdlib and :mod:`agent.acpc`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agent.acpc.betting import ActionKind, BettingState, parse_action, parse_betting
from agent.acpc.cards import format_card, parse_cards
from agent.acpc.errors import AcpcError
from agent.acpc.gamedef import Game
from agent.acpc.limits import MAX_RECORD_LINE_BYTES, check_json, excerpt
from dealer.logfile import MAX_LOG_DIGITS

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


def hand_to_phh(hand: Hand, event: str | None = None, *, check: bool = True) -> str:
    """One hand as a PHH document (TOML, no table header); ``check`` as
    :func:`phh_actions`."""
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
    if lines and lines[0].startswith("# name/game/hands/seed "):
        event = lines[0].split()[2]
    hands = log_hands(game, lines, source)
    if not hands:
        raise PhhError(f"{source}: expected a dealer log with STATE: lines, got none")
    parts: list[str] = []
    skipped: list[int] = []
    for hand in hands:
        try:
            body = hand_to_phh(hand, event)
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
