"""Built-in strategies that need no strategy file: random, call, fold, min-raise, equity.

``builtin:random`` plays a legal random action like the reference example player: it folds
only when facing a bet, and in no-limit picks a raise-to uniformly between the legal bounds.
``builtin:call`` always checks or calls. Both are deterministic for a given seed.
``builtin:fold`` folds whenever it faces a bet and checks otherwise; ``builtin:minraise``
raises the minimum whenever a raise is legal (the fixed raise in limit games) and calls
otherwise. Against each other their results are known exactly (e.g. heads-up no-limit
hold'em with reverse blinds: the folder loses its small blind of 50 when it acts first and
its big blind of 100 when the min-raiser acts first, 750 mbb/h), which the arena's tests use
to check the statistics end to end.
``builtin:offtree`` (:class:`OffTreePolicy`) bets sizes between the ones betting abstractions
use, so that an agent playing a strategy file must translate its bets: ``acpc-match``'s
default opponent.
``builtin:equity`` (:class:`EquityPolicy`, hold'em only) raises, calls or folds by its
hand's equity against a uniformly random hand, with fixed thresholds; it has no randomness.
:mod:`agent.agents` names them all (the one registry every command uses).

Imports only the stdlib and :mod:`agent.acpc` at import time, so the module loads without
numpy or numba (a test checks ``sys.modules``); :class:`EquityPolicy` imports
:mod:`agent.abstraction.holdem_buckets` (numpy, numba) when it is constructed.
"""

from __future__ import annotations

import hashlib
import random
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import ClassVar, Final, Protocol

from agent.acpc.betsize import clamped_raise_to, raise_to_from_pot_fraction, round_raise_to
from agent.acpc.betting import CALL, FOLD, LIMIT_RAISE, Action, ActionKind, BettingState
from agent.acpc.gamedef import Game
from agent.acpc.matchstate import MatchState


def _fixed_action(kind: ActionKind, state: BettingState) -> Action | None:
    """The action of a drawn ``kind`` that needs no size (fold, call, a limit raise), or
    ``None`` for a no-limit raise, whose size the caller draws."""
    if kind is ActionKind.FOLD:
        return FOLD
    if kind is ActionKind.CALL:
        return CALL
    if not state.game.is_nolimit:
        return LIMIT_RAISE
    return None


class Policy(Protocol):
    """Anything that picks an action for a MatchState where we are to act."""

    def act(self, ms: MatchState) -> Action:
        """Return a legal action for ``ms`` (``ms.is_to_act`` is true)."""
        ...


class CallPolicy:
    """Always check or call."""

    def act(self, ms: MatchState) -> Action:
        return CALL


class FoldPolicy:
    """Fold when facing a bet, else check."""

    def act(self, ms: MatchState) -> Action:
        """Fold if folding is legal, else call (check)."""
        return FOLD if ms.state.can_fold() else CALL


class MinRaisePolicy:
    """Raise the minimum whenever allowed, else call."""

    def act(self, ms: MatchState) -> Action:
        """The smallest legal raise, or a call when no raise is legal."""
        state = ms.state
        bounds = state.raise_bounds()
        if bounds is None:
            return CALL
        if not state.game.is_nolimit:
            return LIMIT_RAISE
        return Action(ActionKind.RAISE, bounds[0])


class RandomPolicy:
    """A legal random action: fold (only facing a bet), call, or raise (uniform size).

    Weights follow the reference example player's spirit: fold 6%, call 47%, raise 47%,
    renormalised over the legal kinds.
    """

    WEIGHTS: ClassVar[dict[ActionKind, float]] = {
        ActionKind.FOLD: 0.06,
        ActionKind.CALL: 0.47,
        ActionKind.RAISE: 0.47,
    }

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)

    def act(self, ms: MatchState) -> Action:
        state = ms.state
        kinds = state.legal_actions()
        kind = self._rng.choices(kinds, weights=[self.WEIGHTS[k] for k in kinds])[0]
        fixed = _fixed_action(kind, state)
        if fixed is not None:
            return fixed
        bounds = state.raise_bounds()
        assert bounds is not None
        return Action(ActionKind.RAISE, self._rng.randint(bounds[0], bounds[1]))


class OffTreePolicy:
    """An off-tree bettor: raises pot fractions that betting abstractions leave out.

    Betting abstractions bet half the pot, the pot, twice the pot and all-in (every bundled
    strategy file's sizes are among :attr:`ON_TREE`); this policy raises 0.3, 0.75, 1.5 or
    3 times the pot (:attr:`FRACTIONS`: below, between and above them), so an agent playing
    a strategy file reads nearly every raise of it through its action-translation mapping.
    That is where mappings differ, and what ``acpc-match``'s default table measures them
    against.

    The rule, a deterministic function of what the seat sees (the set of its hole cards, the
    set of board cards visible and the betting: no seed, so every evaluator knows it
    exactly, as the other deterministic built-ins): a BLAKE2b hash of those picks the kind
    with the weights of :class:`RandomPolicy` (fold 6, call 47, raise 47, renormalised over
    the legal kinds) and, for a no-limit raise, one of the *off-tree candidates*: the
    raise-tos of :attr:`FRACTIONS` (rounded, :func:`~agent.acpc.betsize.clamped_raise_to`)
    that lie strictly inside the legal bounds and differ from every :attr:`ON_TREE`
    fraction's raise-to, the minimum raise and all-in. With no candidate (small pots, short
    stacks) it calls instead of raising. In limit games a raise is the fixed raise (nothing
    is off-tree there).
    """

    FRACTIONS: ClassVar[tuple[float, ...]] = (0.3, 0.75, 1.5, 3.0)
    ON_TREE: ClassVar[tuple[float, ...]] = (0.5, 1.0, 2.0)

    def __init__(self, seed: int | None = None) -> None:
        """``seed`` is accepted like every built-in's and not used (the rule has no
        randomness of its own)."""

    @classmethod
    def candidates(cls, state: BettingState) -> list[int]:
        """The off-tree raise-tos at ``state`` (class docstring), ascending; empty when no
        raise is legal."""
        bounds = state.raise_bounds()
        if bounds is None:
            return []
        lo, hi = bounds
        avoid = {clamped_raise_to(state, x) for x in cls.ON_TREE}
        out = {to for x in cls.FRACTIONS
               if (to := clamped_raise_to(state, x)) is not None and lo < to < hi
               and to not in avoid}
        return sorted(out)

    @staticmethod
    def _draw(ms: MatchState, what: bytes) -> float:
        state = ms.state
        visible = ms.board[: state.game.board_cards_through(state.round)]
        # the cards as sets (sorted): a function of which cards it holds, not of the order
        # a dealer or an evaluator lists them in
        text = f"{ms.position}|{','.join(map(str, sorted(ms.own_cards)))}|" \
            f"{','.join(map(str, sorted(visible)))}|{state.betting}".encode()
        digest = hashlib.blake2b(text, digest_size=8, person=what).digest()
        return int.from_bytes(digest, "big") / 2.0**64

    def act(self, ms: MatchState) -> Action:
        state = ms.state
        kinds: list[ActionKind] = list(state.legal_actions())
        offtree = self.candidates(state) if state.game.is_nolimit else []
        if state.game.is_nolimit and not offtree:
            kinds = [k for k in kinds if k is not ActionKind.RAISE]
        weights = [RandomPolicy.WEIGHTS[k] for k in kinds]
        u = self._draw(ms, b"kind") * sum(weights)
        kind = kinds[-1]
        for k, w in zip(kinds, weights, strict=True):
            if u < w:
                kind = k
                break
            u -= w
        fixed = _fixed_action(kind, state)
        if fixed is not None:
            return fixed
        pick = min(int(self._draw(ms, b"size") * len(offtree)), len(offtree) - 1)
        return Action(ActionKind.RAISE, offtree[pick])


class EquityPolicy:
    """Hold'em baseline: act by the hand's equity against a uniformly random hand.

    Equity is P(win) + P(tie) / 2 against one uniformly random opponent hand with the board
    run out (0.5 = even):

    * preflop, from a table of the 169 classes (:func:`~agent.abstraction.holdem_buckets.
      preflop_equity_table`: Monte-Carlo with a fixed seed, computed once per process);
    * flop, turn and river, E[HS] from :func:`~agent.abstraction.holdem_buckets.
      hand_strength_moments`: exact on the turn and river, the deterministic card-seeded
      estimate on the flop.

    Rule, with the fixed thresholds :attr:`RAISE_AT` = 0.65 and :attr:`CALL_AT` = 0.50:
    raise if equity >= ``RAISE_AT`` and a raise is legal (no-limit: a pot-sized raise,
    recomputed from the real pot and clamped to the legal bounds; limit: the fixed raise);
    else check or call if equity >= ``CALL_AT`` or nothing is bet (checking is free); else
    fold. Preflop, 0.65 is about the top 5% of hands (77+, AJs+, AKo) and 0.50 the top
    half. Every action is legal; the same state always gives the same action.

    Construction checks the game and warms every kernel and the preflop table, so no JIT
    compile happens on the match clock.
    """

    RAISE_AT: ClassVar[float] = 0.65
    CALL_AT: ClassVar[float] = 0.50
    POT_FRACTION: ClassVar[float] = 1.0
    CACHE_SIZE: ClassVar[int] = 64
    """Postflop equities kept (LRU): a hand's later decisions in a round reuse its value."""

    def __init__(self, game: Game) -> None:
        """Prepare for ``game``.

        Raises:
            ValueError: unless ``game`` is hold'em (52 cards, 2 hole cards, board 0/3/1/1).
        """
        from agent.abstraction import holdem_buckets as holdem

        holdem.check_holdem_game(game)
        holdem.warm_up()
        self.game = game
        self._preflop: Final = holdem.preflop_equity_table()
        self._preflop_class: Final = holdem.preflop_class
        self._moments: Final[Callable[[Sequence[int], Sequence[int]], tuple[float, float]]] = (
            holdem.hand_strength_moments
        )
        self._cache: OrderedDict[tuple[tuple[int, ...], tuple[int, ...]], float] = OrderedDict()

    def equity(self, hole: Sequence[int], board: Sequence[int]) -> float:
        """Equity of ``hole`` against a random hand given the visible ``board`` (0, 3-5).

        Raises:
            ValueError: for cards that are not distinct indices in 0..51 or a bad board.
        """
        if not board:
            return self._preflop[self._preflop_class(hole)]
        key = (tuple(hole), tuple(board))
        cached = self._cache.get(key)
        if cached is not None:
            self._cache.move_to_end(key)
            return cached
        value = self._moments(*key)[0]
        self._cache[key] = value
        if len(self._cache) > self.CACHE_SIZE:
            self._cache.popitem(last=False)
        return value

    def act(self, ms: MatchState) -> Action:
        state = ms.state
        visible = ms.board[: state.game.board_cards_through(state.round)]
        equity = self.equity(ms.own_cards, visible)
        bounds = state.raise_bounds()
        if equity >= self.RAISE_AT and bounds is not None:
            if not state.game.is_nolimit:
                return LIMIT_RAISE
            lo, hi = bounds
            to = round_raise_to(raise_to_from_pot_fraction(state, self.POT_FRACTION))
            return Action(ActionKind.RAISE, min(max(to, lo), hi))
        if equity >= self.CALL_AT or not state.can_fold():
            return CALL
        return FOLD
