"""The rules engine: an immutable betting state of one hand, for 2..10 players.

:class:`BettingState` follows the reference dealer's ``game.c`` rule for rule (docs/protocol.md,
section 5): whose turn (``currentPlayer``), the legal actions (``isValidAction`` without
fixing), raise bounds in raise-to chips (``raiseIsValid``), applying an action and ending
rounds (``doAction``), all-in run-outs, short all-ins, the min-raise rule, ``maxRaises``, the
64-actions-per-round cap, and the payoffs with side pots and fractional splits
(``valueOfState``, computed in the same floating-point order so that logs match byte for
byte). The reference dealer's fix-ups of bad actions are the separate function
:func:`fix_action`.

Amounts are always raise-to totals for the whole hand (blinds and earlier rounds included);
names say so.

**The short-stack limit raise.** In limit games the reference's ``raiseIsValid`` never
looks at stacks (only the raise cap, the action-count limit and that two players can still
act), and ``doAction`` then sets ``maxSpent = stack[p]`` when ``maxSpent + raiseSize[round]``
exceeds the stack, which *lowers* the bet when the stack does not cover it, and
``spent[p] = maxSpent``. Later calls set ``spent = min(maxSpent, stack)`` (lowering a
bigger earlier bet to the new ``maxSpent``), folding stays legal for a player whose spent is
not exactly ``maxSpent``, and the round's end, side pots and values follow from that state.
This engine accepts and applies such a raise exactly so (:meth:`BettingState.check_action`,
:meth:`BettingState.apply`: what the wire allows, for the dealer and ``acpc-log verify``),
but never *offers* it: :meth:`BettingState.raise_bounds` and
:meth:`BettingState.legal_actions` (what agents, the abstract tree and the solvers use) leave
out a limit raise by a player whose stack does not exceed the current bet.

Pure and stdlib only.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from agent.acpc.cscan import scan_c_int
from agent.acpc.errors import IllegalActionError, RemoteProtocolError, UsageError
from agent.acpc.gamedef import Game
from agent.acpc.limits import excerpt

MAX_ACTIONS_PER_ROUND = 64
"""The reference ``MAX_NUM_ACTIONS``: a raise needs room for the raise and every call."""


class ActionKind(enum.Enum):
    """What a player does: fold, check/call, or bet/raise."""

    FOLD = "f"
    CALL = "c"
    RAISE = "r"


@dataclass(frozen=True, slots=True)
class Action:
    """One betting action.

    ``raise_to`` is the total the raiser has put in for the whole hand after a no-limit raise
    (the wire's ``r<N>``); it is 0 for folds, calls and limit raises (whose size the game
    fixes).
    """

    kind: ActionKind
    raise_to: int = 0

    def __str__(self) -> str:
        if self.kind is ActionKind.RAISE and self.raise_to:
            return f"r{self.raise_to}"
        return self.kind.value


FOLD = Action(ActionKind.FOLD)
CALL = Action(ActionKind.CALL)
LIMIT_RAISE = Action(ActionKind.RAISE)

_ACTION_CHARS = {
    "f": ActionKind.FOLD,
    "F": ActionKind.FOLD,
    "c": ActionKind.CALL,
    "C": ActionKind.CALL,
    "k": ActionKind.CALL,
    "K": ActionKind.CALL,
    "r": ActionKind.RAISE,
    "R": ActionKind.RAISE,
    "b": ActionKind.RAISE,
    "B": ActionKind.RAISE,
}


def parse_action_prefix(text: str, pos: int, game: Game) -> tuple[Action, int] | None:
    """Read one action at ``text[pos:]`` as the reference ``readAction`` does.

    ``f F`` fold, ``c C k K`` call, ``r R b B`` raise; in no-limit a raise is followed by an
    integer read like ``scanf("%d")`` (leading whitespace and a sign allowed). Anything after
    the action is not looked at.

    Returns:
        ``(action, end)`` with ``end`` the index after the action, or ``None`` if no action
        can be read there.
    """
    if pos >= len(text):
        return None
    kind = _ACTION_CHARS.get(text[pos])
    if kind is None:
        return None
    pos += 1
    if kind is not ActionKind.RAISE or not game.is_nolimit:
        return (FOLD if kind is ActionKind.FOLD else CALL if kind is ActionKind.CALL
                else LIMIT_RAISE), pos
    got = scan_c_int(text, pos)
    if got is None:
        return None
    value, i = got
    return Action(ActionKind.RAISE, value), i


def parse_action(text: str, game: Game) -> Action:
    """Parse a whole action string such as ``'c'``, ``'f'`` or ``'r300'``.

    Raises:
        ValueError: if ``text`` is not exactly one action for ``game``.
    """
    got = parse_action_prefix(text, 0, game)
    if got is None or got[1] != len(text):
        form = "'f', 'c' or 'r<raise-to>'" if game.is_nolimit else "'f', 'c' or 'r'"
        raise UsageError(f"expected an action {form}, got {excerpt(text)}")
    return got[0]


def format_action(action: Action, game: Game) -> str:
    """Wire text of an action: ``f``, ``c``, ``r`` (limit) or ``r<raise_to>`` (no-limit)."""
    if action.kind is ActionKind.RAISE and game.is_nolimit:
        return f"r{action.raise_to}"
    return action.kind.value


@dataclass(frozen=True, slots=True)
class BettingState:
    """The betting of one hand: immutable; :meth:`apply` returns the next state.

    Build the start of a hand with :meth:`initial`. ``spent`` are hand totals per position;
    ``actions``/``actors`` hold rounds ``0..round``; ``betting`` is the wire text of the
    actions (``cc/r300c/``), kept up to date as actions are applied.
    """

    game: Game
    round: int
    spent: tuple[int, ...]
    folded: tuple[bool, ...]
    max_spent: int
    min_raise_to: int
    actions: tuple[tuple[Action, ...], ...]
    actors: tuple[tuple[int, ...], ...]
    finished: bool
    player: int
    """Position to act, or -1 when the hand is finished."""
    betting: str
    round_start_spent: tuple[int, ...]
    """``spent`` at the start of the current round; all 0 in round 0, where the blinds count
    as chips of the first round (used by :mod:`agent.acpc.betsize`)."""

    # ----------------------------------------------------------------------------- building

    @classmethod
    def initial(cls, game: Game) -> BettingState:
        """The state at the start of a hand: blinds posted, no action (``initState``)."""
        spent = game.blind
        max_spent = max(spent)
        if game.is_nolimit:
            min_raise_to = 2 * max_spent if max_spent else 1
        else:
            min_raise_to = 0
        folded = (False,) * game.num_players
        start = cls(
            game=game,
            round=0,
            spent=spent,
            folded=folded,
            max_spent=max_spent,
            min_raise_to=min_raise_to,
            actions=((),),
            actors=((),),
            finished=False,
            player=-1,
            betting="",
            round_start_spent=(0,) * game.num_players,
        )
        player = _next_player(game, folded, spent, game.first_player[0] - 1)
        if player < 0:
            # Nobody can act (every blind is an all-in): the hand runs out at once. The
            # reference would loop forever here.
            last = game.num_rounds - 1
            return cls(
                game, last, spent, folded, max_spent, min_raise_to,
                ((),) * game.num_rounds, ((),) * game.num_rounds, True, -1,
                "/" * last, (0,) * game.num_players,
            )
        return _replace_player(start, player)

    # ----------------------------------------------------------------------------- queries

    @property
    def num_players(self) -> int:
        """Players in the game."""
        return self.game.num_players

    @property
    def pot(self) -> int:
        """Chips put in by everyone so far this hand."""
        return sum(self.spent)

    @property
    def num_folded(self) -> int:
        """Players who have folded."""
        return sum(self.folded)

    @property
    def num_acting(self) -> int:
        """Players who can still act: not folded and not all-in (``numActingPlayers``)."""
        stack = self.game.stack
        spent = self.spent
        acting = 0
        for p, f in enumerate(self.folded):
            if not f and spent[p] < stack[p]:
                acting += 1
        return acting

    def can_act(self, position: int) -> bool:
        """True if ``position`` has neither folded nor gone all-in."""
        return not self.folded[position] and self.spent[position] < self.game.stack[position]

    @property
    def is_showdown(self) -> bool:
        """True when the hand is over and at least two players reached the showdown."""
        return self.finished and self.num_folded + 1 < self.num_players

    def num_raises(self) -> int:
        """Raises made in the current round (``numRaises``)."""
        raises = 0
        for a in self.actions[self.round]:
            if a.kind is ActionKind.RAISE:
                raises += 1
        return raises

    def to_call(self, position: int | None = None) -> int:
        """Chips ``position`` (default: the player to act) must add to call, capped by stack."""
        p = self.player if position is None else position
        return max(0, min(self.max_spent, self.game.stack[p]) - self.spent[p])

    def can_fold(self) -> bool:
        """Folding is legal unless the player has exactly matched the bet or is all-in
        (``isValidAction``: after a short-stack limit raise lowered the bet, a player who
        had bet more may fold too)."""
        if self.finished:
            return False
        p = self.player
        return self.spent[p] != self.max_spent and self.spent[p] != self.game.stack[p]

    def can_call(self) -> bool:
        """Check/call is legal whenever the hand is not over."""
        return not self.finished

    def raise_bounds(self) -> tuple[int, int] | None:
        """``(min_to, max_to)`` raise-to totals for the player to act, or ``None``.

        Mirrors ``raiseIsValid``: no raise after ``maxRaises[round]`` raises, when the round
        has no room for a raise and every call (64 actions), or when fewer than two players
        can act. No-limit: ``[min_raise_to, stack]``, or only the all-in if the minimum is
        above the stack but the stack is above the current bet. Limit: the one size
        ``max_spent + raiseSize[round]``, capped by the stack. These are the raises a player
        should *choose*: a limit raise by a player whose stack does not exceed the current
        bet is legal on the wire (:meth:`check_action`, see the module docstring) but left
        out here.
        """
        if self._no_raise_reason(strict=True) is not None:
            return None
        return self._raise_range(strict=True)

    def _raise_range(self, *, strict: bool) -> tuple[int, int] | None:
        game = self.game
        stack = game.stack[self.player]
        if not game.is_nolimit:
            if strict and stack <= self.max_spent:
                return None
            # doAction: maxSpent = stack if maxSpent + raiseSize > stack (may lower it)
            to = min(self.max_spent + game.raise_size[self.round], stack)
            return to, to
        if self.min_raise_to > stack:
            if self.max_spent >= stack:
                return None
            return stack, stack
        return self.min_raise_to, stack

    def _no_raise_reason(self, *, strict: bool) -> str | None:
        if self.finished:
            return "the hand is over"
        game = self.game
        if self.num_raises() >= game.max_raises[self.round]:
            return f"the round already has its maximum of {game.max_raises[self.round]} raises"
        if len(self.actions[self.round]) + game.num_players > MAX_ACTIONS_PER_ROUND:
            return "the round has no room for a raise and every call (64 actions)"
        if self.num_acting <= 1:
            return "no other player can act"
        if self._raise_range(strict=strict) is None:
            return "the stack does not cover more than the current bet"
        return None

    def legal_actions(self) -> tuple[ActionKind, ...]:
        """The kinds of action the player to act may take, in the order fold, call, raise."""
        if self.finished:
            return ()
        kinds = []
        if self.can_fold():
            kinds.append(ActionKind.FOLD)
        kinds.append(ActionKind.CALL)
        if self.raise_bounds() is not None:
            kinds.append(ActionKind.RAISE)
        return tuple(kinds)

    def check_action(self, action: Action) -> None:
        """Raise :class:`IllegalActionError` (with the reason and bounds) unless legal.

        Mirrors ``isValidAction`` without fixing.
        """
        if self.finished:
            raise IllegalActionError(f"expected no action: the hand is over, got {action}")
        kind = action.kind
        if kind is ActionKind.CALL:
            return
        if kind is ActionKind.FOLD:
            if not self.can_fold():
                raise IllegalActionError(
                    f"fold is not legal: position {self.player} has already matched the bet "
                    f"of {self.max_spent} (check instead)"
                )
            return
        reason = self._no_raise_reason(strict=False)
        if reason is not None:
            raise IllegalActionError(f"raise is not legal: {reason}")
        bounds = self._raise_range(strict=False)
        assert bounds is not None
        lo, hi = bounds
        if not self.game.is_nolimit:
            if action.raise_to not in (0, lo):
                raise IllegalActionError(
                    f"expected a limit raise (to {lo}), got a raise to {action.raise_to}"
                )
            return
        if not lo <= action.raise_to <= hi:
            raise IllegalActionError(
                f"expected a raise to between {lo} and {hi} chips for position "
                f"{self.player}, got r{action.raise_to}"
            )

    def is_legal(self, action: Action) -> bool:
        """True if :meth:`check_action` would accept ``action``."""
        try:
            self.check_action(action)
        except IllegalActionError:
            return False
        return True

    # ----------------------------------------------------------------------------- acting

    def apply(self, action: Action) -> BettingState:
        """Return the state after the player to act takes ``action`` (``doAction``).

        Raises:
            IllegalActionError: if ``action`` is not legal here.
        """
        self.check_action(action)
        return self._apply_unchecked(action)

    def _apply_unchecked(self, action: Action) -> BettingState:
        game = self.game
        p = self.player
        stack = game.stack
        spent = list(self.spent)
        folded = self.folded
        max_spent = self.max_spent
        min_raise_to = self.min_raise_to
        kind = action.kind
        if kind is ActionKind.FOLD:
            folded = folded[:p] + (True,) + folded[p + 1 :]
            text = "f"
        elif kind is ActionKind.CALL:
            spent[p] = stack[p] if max_spent > stack[p] else max_spent
            text = "c"
        elif game.is_nolimit:
            size = action.raise_to
            if 2 * size - max_spent > min_raise_to:
                min_raise_to = 2 * size - max_spent
            max_spent = size
            spent[p] = size
            text = f"r{size}"
        else:
            max_spent = min(max_spent + game.raise_size[self.round], stack[p])
            spent[p] = max_spent
            action = LIMIT_RAISE
            text = "r"
        r = self.round
        actions = self.actions[:r] + (self.actions[r] + (action,),)
        actors = self.actors[:r] + (self.actors[r] + (p,),)
        spent_t = tuple(spent)
        betting = self.betting + text
        round_start = self.round_start_spent
        finished = False
        n = game.num_players
        acting = 0
        for q in range(n):
            if not folded[q] and spent_t[q] < stack[q]:
                acting += 1
        if folded.count(True) + 1 >= n:
            finished = True
        elif _num_called(actions[r], actors[r], spent_t, stack) >= acting:
            if acting > 1:
                if r + 1 < game.num_rounds:
                    r += 1
                    min_raise_to = max(1, game.big_blind) + max_spent
                    actions += ((),)
                    actors += ((),)
                    betting += "/"
                    round_start = spent_t
                else:
                    finished = True
            else:
                finished = True
                last = game.num_rounds - 1
                extra = last - r
                if extra:
                    actions += ((),) * extra
                    actors += ((),) * extra
                    betting += "/" * extra
                    r = last
        if finished:
            player = -1
        elif len(actions[r]):
            player = _next_player(game, folded, spent_t, actors[r][-1])
        else:
            player = _next_player(game, folded, spent_t, game.first_player[r] - 1)
        return BettingState(
            game, r, spent_t, folded, max_spent, min_raise_to, actions, actors, finished,
            player, betting, round_start,
        )

    # ----------------------------------------------------------------------------- payoffs

    def payoffs(self, ranks: Sequence[int] | None = None) -> tuple[float, ...]:
        """Chips won (+) or lost (-) by each position in a finished hand (``valueOfState``).

        Args:
            ranks: hand strength per position (larger is better), needed when the hand ends
                in a showdown; entries of folded players are ignored.

        Side pots are built from the smallest remaining contribution upward and split evenly
        among the best hands eligible for them, fractions included. The arithmetic is done
        in the reference's order in floating point, so values print identically.

        Raises:
            ValueError: if the hand is not finished, or a showdown has no ``ranks``.
        """
        if not self.finished:
            raise UsageError("expected a finished hand, got one still in progress")
        n = self.num_players
        if self.num_folded + 1 == n:
            total = [float(s) for s in self.spent]
            return tuple(
                -total[p] if self.folded[p] else sum(total[q] for q in range(n) if q != p)
                for p in range(n)
            )
        if ranks is None or len(ranks) != n:
            raise UsageError(f"expected {n} hand ranks for a showdown, got {ranks!r}")
        return tuple(
            float(-self.spent[p]) if self.folded[p] else self._showdown_value(p, ranks)
            for p in range(n)
        )

    def _showdown_value(self, player: int, ranks: Sequence[int]) -> float:
        if self.spent[player] == 0:
            return 0.0  # nothing in, nothing out (the reference reads past its list here)
        spent: list[int] = []
        rank: list[int] = []
        idx = -1
        for p in range(self.num_players):
            if self.spent[p] == 0:
                continue
            if p == player:
                idx = len(spent)
            rank.append(-1 if self.folded[p] else ranks[p])
            spent.append(self.spent[p])
        value = 0.0
        while True:
            size = min(spent)
            win_rank = max(rank)
            winners = rank.count(win_rank)
            count = len(spent)
            if rank[idx] == win_rank:
                value += float(size * (count - winners)) / float(winners)
            else:
                value -= float(size)
            new_spent: list[int] = []
            new_rank: list[int] = []
            new_idx = -1
            for i in range(count):
                left = spent[i] - size
                if left == 0:
                    if i == idx:
                        return value
                    continue
                if i == idx:
                    new_idx = len(new_spent)
                new_spent.append(left)
                new_rank.append(rank[i])
            spent, rank, idx = new_spent, new_rank, new_idx

    # ----------------------------------------------------------------------------- text

    def __str__(self) -> str:
        return self.betting


def _replace_player(state: BettingState, player: int) -> BettingState:
    return BettingState(
        state.game, state.round, state.spent, state.folded, state.max_spent,
        state.min_raise_to, state.actions, state.actors, state.finished, player,
        state.betting, state.round_start_spent,
    )


def _next_player(game: Game, folded: Sequence[bool], spent: Sequence[int], current: int) -> int:
    """The next position after ``current`` that can act (``nextPlayer``), or -1 if none."""
    n = game.num_players
    stack = game.stack
    q = current
    for _ in range(n):
        q = (q + 1) % n
        if not folded[q] and spent[q] < stack[q]:
            return q
    return -1


def _num_called(
    actions: Sequence[Action], actors: Sequence[int], spent: Sequence[int],
    stack: Sequence[int],
) -> int:
    """Players still able to act who have called the current bet (``numCalled``)."""
    called = 0
    for i in range(len(actions) - 1, -1, -1):
        kind = actions[i].kind
        if kind is ActionKind.FOLD:
            continue
        p = actors[i]
        if spent[p] < stack[p]:
            called += 1
        if kind is ActionKind.RAISE:
            return called
    return called


def fix_action(state: BettingState, action: Action) -> tuple[Action, tuple[str, ...]]:
    """The reference dealer's repair of a player's action, with its warning lines.

    A no-limit raise below the minimum becomes the minimum (``WARNING: raise of N increased
    to M``), above the stack the all-in (``... decreased to M``); a fold when checking is
    free, a raise when no raise is allowed, or anything else illegal becomes a call
    (``WARNING: invalid action, changed to call``). Mirrors ``isValidAction`` with
    ``tryFixing`` and the caller in ``readPlayerResponse``.

    Returns:
        ``(legal_action, warnings)``; the warnings are exact reference stderr lines.
    """
    if state.finished:
        raise IllegalActionError("expected a hand in progress, got a finished hand")
    warnings: list[str] = []
    kind = action.kind
    if kind is ActionKind.CALL:
        return CALL, ()
    if kind is ActionKind.FOLD:
        if state.can_fold():
            return FOLD, ()
        return CALL, ("WARNING: invalid action, changed to call",)
    reason = state._no_raise_reason(strict=False)
    if reason is not None:
        if (
            reason.startswith("the round has no room")
            and state.num_raises() < state.game.max_raises[state.round]
        ):
            warnings.append(
                "WARNING: #actions in round is too close to MAX_NUM_ACTIONS, forcing call/fold"
            )
        warnings.append("WARNING: invalid action, changed to call")
        return CALL, tuple(warnings)
    if not state.game.is_nolimit:
        return LIMIT_RAISE, ()
    bounds = state._raise_range(strict=False)
    assert bounds is not None
    lo, hi = bounds
    size = action.raise_to
    if size < lo:
        warnings.append(f"WARNING: raise of {size} increased to {lo}")
        size = lo
    elif size > hi:
        warnings.append(f"WARNING: raise of {size} decreased to {hi}")
        size = hi
    return Action(ActionKind.RAISE, size), tuple(warnings)


def parse_betting_prefix(
    game: Game, text: str, pos: int = 0, start: BettingState | None = None
) -> tuple[BettingState, int]:
    """Replay the betting at ``text[pos:]`` as the reference ``readBetting`` does.

    Reading stops at the end of the text or at a ``:``; every ``/`` is skipped; every
    action must be legal as written (no fixing).

    ``start`` continues from a known state whose actions ``text[pos:]`` has already been
    shown to begin with (the caller checked ``start.betting`` is a prefix and skipped it).

    Returns:
        ``(state, end)`` with ``end`` the index of the terminating ``:`` (or the length).

    Raises:
        RemoteProtocolError: if an action cannot be read or is not legal.
    """
    state = BettingState.initial(game) if start is None else start
    n = len(text)
    i = pos
    while i < n:
        ch = text[i]
        if ch == ":":
            return state, i
        if ch == "/":
            i += 1
            continue
        got = parse_action_prefix(text, i, game)
        if got is None:
            raise RemoteProtocolError(
                f"expected an action in the betting at offset {i}, got {text[i:i + 12]!r}"
            )
        action, end = got
        try:
            state.check_action(action)
        except IllegalActionError as exc:
            raise RemoteProtocolError(
                f"illegal action {excerpt(text[i:end])} at offset {i} of the betting: {exc}"
            ) from None
        state = state._apply_unchecked(action)
        i = end
    return state, i


def parse_betting(game: Game, text: str) -> BettingState:
    """Replay a whole betting string such as ``'cc/r300c/'`` from the start of a hand.

    Raises:
        RemoteProtocolError: if the text has an unreadable or illegal action, or a ``:``.
    """
    state, end = parse_betting_prefix(game, text)
    if end != len(text):
        raise RemoteProtocolError(f"expected only betting actions, got {excerpt(text)}")
    return state
