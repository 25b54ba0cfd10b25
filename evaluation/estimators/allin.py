"""All-in EV: the value of a hand whose betting ended in all-ins before the last round.

Once every player but at most one is all-in, the rest of the board only adds card luck. The
all-in EV adjustment replaces such a hand's value by its expectation over every board the
dealer could still have dealt: the cards not yet shown, enumerated exactly (every
combination of the cards outside the players' hole cards and the board already shown), each
scored by :meth:`~agent.acpc.betting.BettingState.payoffs` exactly as the dealer scores a
showdown (side pots, split pots). Hands that end by folds, or with betting in the last
round, keep their value.

A showdown's payoffs depend on the cards only through the *order* of the players' hand
ranks, so the enumeration counts each pattern of that order and scores every pattern once.
The enumeration runs in pure Python with :func:`agent.acpc.evaluator.rank_hand_fast`, or,
for large enumerations (a hold'em all-in before the flop: 1.7 million boards) with the
numba kernels of :mod:`agent.handeval` when they can be imported: a deliberate,
lazy exception to the dealer's dependency rule, taken only inside
:meth:`AllinEvaluator.expected_values` and only for enumerations above
:data:`NUMBA_THRESHOLD` boards; importing this module pulls in nothing beyond the stdlib and
:mod:`agent.acpc`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agent.acpc.betting import BettingState, parse_betting
from agent.acpc.cards import deck_for, parse_cards
from agent.acpc.errors import AcpcError, UsageError
from agent.acpc.evaluator import rank_hand_fast
from agent.acpc.gamedef import Game
from agent.acpc.limits import excerpt
from dealer.logfile import log_int

NUMBA_THRESHOLD = 20_000
"""Enumerations of more boards than this use the numba evaluator (method ``auto``)."""

METHODS = ("auto", "python", "numba")


@dataclass(frozen=True, slots=True)
class LoggedHand:
    """One ``STATE:`` line of a dealer log, parsed."""

    hand: int
    state: BettingState
    hole: tuple[tuple[int, ...], ...]
    """Hole cards by position."""
    board: tuple[int, ...]
    """The board as shown, through the hand's last round."""
    values: tuple[float, ...]
    """Chips won by position."""
    names: tuple[str, ...]
    """Player names by position."""


def parse_state_line(line: str, game: Game, where: str = "<log>") -> LoggedHand:
    """Parse ``STATE:<hand>:<betting>:<cards>:<values>:<names>``.

    Raises:
        ValueError: naming ``where`` and what was expected.
    """
    parts = line.split(":")
    if len(parts) != 6 or parts[0] != "STATE" or not parts[1].isdigit():
        raise UsageError(
            f"{where}: expected 'STATE:<hand>:<betting>:<cards>:<values>:<names>', "
            f"got {excerpt(line)}"
        )
    number = log_int(parts[1], where, "the hand number")
    n = game.num_players
    try:
        state = parse_betting(game, parts[2])
    except AcpcError as exc:
        raise UsageError(f"{where}: bad betting {excerpt(parts[2])}: {exc}") from None
    if not state.finished:
        raise UsageError(f"{where}: expected a finished hand, got betting {excerpt(parts[2])}")
    rounds = parts[3].split("/")
    holes = rounds[0].split("|")
    width = 2 * game.num_hole_cards
    try:
        if len(holes) != n:
            raise UsageError(f"expected {n} hole card groups")
        hole = tuple(parse_cards(h[:width]) for h in holes)
        if any(len(h) != game.num_hole_cards for h in hole):
            raise UsageError(f"expected {game.num_hole_cards} hole cards per player")
        board = parse_cards(holes[-1][width:]) + tuple(
            c for r in rounds[1:] for c in parse_cards(r)
        )
        values = tuple(float(v) for v in parts[4].split("|"))
        if not all(math.isfinite(v) for v in values):
            raise UsageError("expected finite values")
    except ValueError as exc:
        raise UsageError(f"{where}: bad cards or values in {excerpt(line)}: {exc}") from None
    names = tuple(parts[5].split("|"))
    if len(values) != n or len(names) != n:
        raise UsageError(f"{where}: expected {n} values and names, got {excerpt(line)}")
    if len(board) != game.board_cards_through(state.round):
        raise UsageError(
            f"{where}: expected {game.board_cards_through(state.round)} board cards, "
            f"got {len(board)} in {excerpt(line)}"
        )
    return LoggedHand(number, state, hole, board, values, names)


def allin_round(state: BettingState) -> int | None:
    """The round of the last action if the hand was decided by all-ins before the last round.

    ``None`` for hands that end by folds or have betting in the last round.
    """
    if not state.is_showdown:
        return None
    last = max((r for r, acts in enumerate(state.actions) if acts), default=0)
    return last if last < state.game.num_rounds - 1 else None


def _pattern(ranks: Sequence[int]) -> tuple[int, ...]:
    """The dense order of ranks (ties kept): what a showdown's payoffs depend on."""
    order = sorted(set(ranks))
    return tuple(order.index(r) for r in ranks)


class AllinEvaluator:
    """Expected values of all-in hands of one game (see the module docstring)."""

    def __init__(self, game: Game, method: str = "auto") -> None:
        if method not in METHODS:
            raise UsageError(f"expected an evaluator in {METHODS}, got {method!r}")
        self.game = game
        self.method = method
        self._combos: dict[tuple[int, int, int], tuple[Any, Any]] = {}
        self._handeval: Any = None
        self.adjusted_hands = 0

    def adjusted_values(self, hand: LoggedHand) -> tuple[float, ...]:
        """The hand's values by position, all-in hands replaced by their expectation."""
        r = allin_round(hand.state)
        if r is None:
            return hand.values
        self.adjusted_hands += 1
        known = hand.board[: self.game.board_cards_through(r)]
        return self.expected_values(hand.state, hand.hole, known)

    def expected_values(
        self,
        state: BettingState,
        hole: Sequence[Sequence[int]],
        known_board: Sequence[int],
    ) -> tuple[float, ...]:
        """Expected payoffs by position over every completion of ``known_board``.

        Raises:
            ValueError: if the cards do not fit the game.
        """
        game = self.game
        missing = game.total_board_cards - len(known_board)
        if missing < 0:
            raise UsageError(f"expected at most {game.total_board_cards} board cards, "
                             f"got {len(known_board)}")
        live = [p for p in range(game.num_players) if not state.folded[p]]
        counts = self.pattern_counts(hole, known_board, live)
        total = [0.0] * game.num_players
        seen = 0
        for pattern, k in counts.items():
            ranks = [0] * game.num_players
            for p, rank in zip(live, pattern, strict=True):
                ranks[p] = rank
            values = state.payoffs(ranks)
            for p in range(game.num_players):
                total[p] += k * values[p]
            seen += k
        return tuple(t / seen for t in total)

    def pattern_counts(
        self,
        hole: Sequence[Sequence[int]],
        known_board: Sequence[int],
        live: Sequence[int],
    ) -> dict[tuple[int, ...], int]:
        """How many completions of ``known_board`` give each order of the ``live``
        positions' hand ranks (dense, ties kept; larger is better): every board the dealer
        could still deal, enumerated exactly.

        Raises:
            ValueError: if the cards do not fit the game.
        """
        game = self.game
        missing = game.total_board_cards - len(known_board)
        if missing < 0:
            raise UsageError(f"expected at most {game.total_board_cards} board cards, "
                             f"got {len(known_board)}")
        used = {c for h in hole for c in h} | set(known_board)
        deck = [c for c in deck_for(game) if c not in used]
        count = math.comb(len(deck), missing)
        if count == 0:
            raise UsageError("expected cards left to complete the board, got none")
        use_numba = self.method == "numba" or (
            self.method == "auto" and count > NUMBA_THRESHOLD and self._numba() is not None
        )
        if use_numba:
            return self._pattern_counts_numba(hole, known_board, deck, missing, live)
        return self._pattern_counts_python(hole, known_board, deck, missing, live)

    # ------------------------------------------------------------------ enumeration

    def _pattern_counts_python(
        self,
        hole: Sequence[Sequence[int]],
        known: Sequence[int],
        deck: Sequence[int],
        missing: int,
        live: Sequence[int],
    ) -> dict[tuple[int, ...], int]:
        counts: dict[tuple[int, ...], int] = {}
        hands = [list(hole[p]) + list(known) for p in live]
        for rest in itertools.combinations(deck, missing):
            extra = list(rest)
            key = _pattern([rank_hand_fast(h + extra) for h in hands])
            counts[key] = counts.get(key, 0) + 1
        return counts

    def _numba(self) -> Any:
        if self._handeval is None:
            try:
                from agent import handeval
            except ImportError:  # pragma: no cover - numba is a core dependency
                self._handeval = False
            else:
                self._handeval = handeval
        return self._handeval or None

    def _pattern_counts_numba(
        self,
        hole: Sequence[Sequence[int]],
        known: Sequence[int],
        deck: Sequence[int],
        missing: int,
        live: Sequence[int],
    ) -> dict[tuple[int, ...], int]:
        import numpy as np

        handeval = self._numba()
        if handeval is None:
            raise UsageError("expected numba's hand evaluator, it cannot be imported")
        width = len(hole[live[0]]) + len(known)
        key = (len(deck), missing, width)
        cached = self._combos.get(key)
        if cached is None:
            flat: Iterable[int] = itertools.chain.from_iterable(
                itertools.combinations(range(len(deck)), missing)
            )
            count = math.comb(len(deck), missing)
            combos = np.fromiter(flat, dtype=np.uint8, count=count * missing)
            combos = combos.reshape(count, missing)
            cached = (combos, np.empty((count, width + missing), dtype=np.uint8))
            self._combos = {key: cached}  # keep one: they can be large
        combos, buffer = cached
        buffer[:, width:] = np.asarray(deck, dtype=np.uint8)[combos]
        ranks = []
        for p in live:
            buffer[:, :width] = list(hole[p]) + list(known)
            ranks.append(handeval.evaluate_batch(buffer, check=False).copy())
        # One base-3 digit per pair of live players: 2 if i ranks above j, 1 if tied, 0 if
        # below. The digits determine the order, so count the codes and decode each.
        pairs = list(itertools.combinations(range(len(live)), 2))
        code = np.zeros(combos.shape[0], dtype=np.int32)
        for i, j in pairs:
            code *= 3
            code += ranks[i] >= ranks[j]
            code += ranks[i] > ranks[j]
        counts = np.bincount(code, minlength=3 ** len(pairs))
        out: dict[tuple[int, ...], int] = {}
        for value in np.flatnonzero(counts).tolist():
            digits = []
            rest = int(value)
            for _ in pairs:
                digits.append(rest % 3)
                rest //= 3
            digits.reverse()
            above = [0] * len(live)
            for (i, j), d in zip(pairs, digits, strict=True):
                if d == 2:
                    above[i] += 1
                elif d == 0:
                    above[j] += 1
            pattern = _pattern(above)
            out[pattern] = out.get(pattern, 0) + int(counts[value])
        return out


@dataclass(frozen=True, slots=True)
class AllinSummary:
    """Per-seat totals of a log, raw and with all-in hands at their expectation."""

    names: tuple[str, ...]
    """Names by seat (the SCORE line's order)."""
    raw: tuple[float, ...]
    adjusted: tuple[float, ...]
    hands: int
    allin_hands: int


def summarize_log(
    game: Game, lines: Iterable[str], source: str = "<log>", method: str = "auto"
) -> AllinSummary:
    """Raw and all-in-EV totals by seat of a dealer log's lines (no line ends).

    Seats are named by the ``SCORE`` line, or by the first hand's names (hand 0 puts seat
    ``s`` in position ``s``) when the log has no ``SCORE`` line.

    Raises:
        ValueError: if a ``STATE`` line cannot be read, or the log has none.
    """
    evaluator = AllinEvaluator(game, method)
    seat_names: tuple[str, ...] | None = None
    raw: dict[str, float] = {}
    adjusted: dict[str, float] = {}
    hands = 0
    for i, line in enumerate(lines, start=1):
        if line.startswith("SCORE:"):
            seat_names = tuple(line.rsplit(":", 1)[1].split("|"))
            continue
        if not line.startswith("STATE:"):
            continue
        hand = parse_state_line(line, game, f"{source}:{i}")
        if hands == 0 and seat_names is None:
            seat_names = hand.names
        values = evaluator.adjusted_values(hand)
        for name, v_raw, v_adj in zip(hand.names, hand.values, values, strict=True):
            raw[name] = raw.get(name, 0.0) + v_raw
            adjusted[name] = adjusted.get(name, 0.0) + v_adj
        hands += 1
    if not hands or seat_names is None:
        raise UsageError(f"{source}: expected STATE lines, found none")
    return AllinSummary(
        seat_names,
        tuple(raw.get(n, 0.0) for n in seat_names),
        tuple(adjusted.get(n, 0.0) for n in seat_names),
        hands,
        evaluator.adjusted_hands,
    )
