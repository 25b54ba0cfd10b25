"""AIVAT: unbiased, variance-reduced values of played hands (``acpc-match --estimator
aivat``, ``acpc-log aivat``).

Burch, Schmid, Moravčík, Morrill and Bowling, "AIVAT: A New Variance Reduction Technique for
Agent Evaluation in Imperfect Information Games" (AAAI 2018). A hand is a trajectory ``z``:
the hole cards, the board cards dealt, and every action. Given a value function ``V`` of a
history with every card known (position 0's chips, heads-up), the corrected value of the
hand is

    X(z) = u(z) - sum over the chance events and the known agents' actions in z of
                  [ V(after the event) - E V(after the event | before) ]

where ``u`` is what position 0 won, the expectation at a chance event is over the cards the
dealer could deal there, and at an action of an agent whose policy the evaluator knows it is
over that agent's real-action distribution (:func:`action_distribution`). Each bracket has
expectation 0 given the history before it, whatever ``V`` is, so ``E[X] = E[u]``: the
estimator is unbiased for any value function; a good ``V`` makes the brackets cancel the
luck. The events:

* **the hole cards** (the exact mean of ``V`` over the deals: :class:`ExactValue`'s by
  enumeration, 0 for :class:`CheckdownValue` by symmetry);
* **the board cards** of every round reached, and the rest of the board at an all-in
  showdown (then the bracket is the all-in EV adjustment);
* **every action of a known agent**: a strategy file (its mapping, purification and size
  convention: the decision model of :mod:`agent.decision`, expanded by
  :class:`~evaluation.estimators.estimator.FileAgent`; its private states, the abstract
  history after the translation draws it made, are carried as a *belief*: their
  probabilities given its cards and the actions seen), ``builtin:random`` (its kinds, and
  its raise-to uniform over the legal bounds: :meth:`ValueFunction.raise_mean`, in closed
  form for the check-down value, at one size drawn by a hash for the sampled walk), and the
  deterministic built-ins (a point mass: the bracket is 0).
  The actions of an agent that is not known are not corrected.

**Imaginary observations** (Bowling et al. 2008): for the known agents, ``X`` is averaged
over every hole-card assignment they could have held that fits the other cards seen, each
weighted by the probability that the known agents take the hand's actions with those cards
(the unknown agents' actions do not depend on them). The average has the expectation of
``X``, hence of ``u``. Enumerated when there are at most :data:`IMAGINARY_MAX` assignments
(Kuhn, Leduc); on hold'em (1,225 holdings a seat) batched over a known strategy file's
holdings by :mod:`evaluation.estimators.aivat_imaginary` (the check-down value for every
holding at once), by default only for the seatings the check-down value values.

**Value functions.**

* :class:`ExactValue` (both agents known, a game whose deals enumerate: Kuhn, Leduc): the
  agents' exact expected value from the history (the exact-agents walk,
  :func:`~evaluation.estimators.estimator.state_value`, over the beliefs and every board
  still to come). Every bracket then cancels what it measures and ``X`` is the seating's
  exact value: zero variance.
* :class:`SampledValue` (both agents known, a bigger game: hold'em): the same walk
  averaged over :data:`WALK_SAMPLES` boards drawn by a hash of the deal and the history.
* :class:`CheckdownValue` (otherwise): position 0's chips if the hand were checked
  down from the history with the current bet called: ``(P(win) - P(lose)) x the larger
  contribution`` over every board still to come (exact enumeration,
  :meth:`~evaluation.estimators.allin.AllinEvaluator.pattern_counts`; a fold or a finished
  showdown its real value). Its expectation over the next card is its value before it, so
  a board bracket is the change of the check-down value the card caused: the luck of the
  board times the money already in. It knows nothing of the agents, so it needs no
  abstract game and costs one equity enumeration per round and hole pair (cached: the two
  seatings of a duplicate deal share it; about 0.1 s for a hold'em preflop pair).

A hand is valued from what a dealer log holds (every hole card, the board through the last
round, the betting), so :func:`log_hand_values` serves both commands: ``acpc-match
--estimator aivat`` plays the run as ``played`` does (through the dealer, or in process) and
values the logs it stored; ``acpc-log aivat`` values any dealer logs given the files.

Imports the stdlib, :mod:`agent.acpc`, :mod:`dealer.logfile` and
:mod:`evaluation.estimators` (:mod:`agent.builtin`, numpy and :mod:`evaluation.stats` where
they are used).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agent.acpc.betting import Action, ActionKind, BettingState
from agent.acpc.cards import deck_for
from agent.acpc.dealing import Deal
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game
from dealer.logfile import hand_values
from evaluation.estimators.aivat_actions import (
    RAISE_RANGE,
    Belief,
    action_distribution,
    checkdown_value,
    observe_belief,
)
from evaluation.estimators.allin import AllinEvaluator, parse_state_line
from evaluation.estimators.estimator import (
    FileAgent,
    Model,
    PolicyAgent,
    RandomAgent,
    state_value,
)

IMAGINARY_MAX = 400
"""Imaginary observations when the known agents' possible hole cards make at most this many
assignments (Kuhn: 2 per seat, Leduc no-limit: up to 20 for both)."""

EXACT_MAX_DEALS = 20_000
""":class:`ExactValue` only for games with at most this many hole-card deals."""

CACHE_MAX = 1 << 16
"""Entries kept by a value function's cache before it is cleared."""


class ValueFunction(Protocol):
    """``V``: position 0's chips at a history, every hole card known."""

    name: str
    needs_beliefs: bool
    """True if ``V`` reads the known agents' beliefs (else ``None`` is passed)."""

    def root_mean(self) -> float | None:
        """The mean of ``V`` at the start of a hand over every deal (None: no bracket for
        the hole cards)."""
        ...

    def __call__(self, state: BettingState, holes: tuple[tuple[int, ...], ...],
                 board: tuple[int, ...], beliefs: Sequence[Belief | None] | None) -> float:
        """``V`` at ``state`` with ``board`` seen (the cards still to come averaged)."""
        ...

    def raise_mean(self, state: BettingState, holes: tuple[tuple[int, ...], ...],
                   board: tuple[int, ...], beliefs: Sequence[Belief | None] | None,
                   ) -> float | None:
        """The mean of ``V`` after a no-limit raise to a size uniform over the legal
        bounds at ``state`` (``builtin:random``'s raise; ``beliefs`` before it); None
        when it is not available (the decision then gets no bracket)."""
        ...

    def edge(self, holes: tuple[tuple[int, ...], ...], board: tuple[int, ...]) -> float:
        """Position 0's ``P(win) - P(lose)`` over every completion of ``board`` (a
        martingale over the cards dealt: its changes are the extra features of
        :func:`fitted`); 0 where the value function has none."""
        ...


def _mean_over_boards(models: Any, state: BettingState, holes: tuple[tuple[int, ...], ...],
                      board: tuple[int, ...], extras: Iterable[tuple[int, ...]],
                      b0: Belief, b1: Belief) -> float:
    """The mean over the board completions ``extras`` of the hand's value to position 0:
    the payoff where the betting is over, else the agents' walk weighted by both beliefs."""
    total = 0.0
    count = 0
    for extra in extras:
        full = board + extra
        if state.finished:
            total += hand_values(state, holes, full)[0]
        else:
            deal = Deal(holes, full)
            total += math.fsum(w0 * w1 * state_value(models, deal, state, (s0, s1))
                               for w0, s0 in b0 for w1, s1 in b1)
        count += 1
    return total / count


def _terminal(state: BettingState, holes: tuple[tuple[int, ...], ...],
              board: tuple[int, ...]) -> float | None:
    """Position 0's chips at a fold, or at a showdown with the whole board; else None."""
    if not state.finished:
        return None
    if not state.is_showdown:
        return state.payoffs()[0]
    if len(board) == state.game.total_board_cards:
        return hand_values(state, holes, board)[0]
    return None


class CheckdownValue:
    """The check-down value (module docstring): no agent needed."""

    name = "checkdown"
    needs_beliefs = False

    def __init__(self, game: Game, method: str = "auto") -> None:
        self.game = game
        self.evaluator = AllinEvaluator(game, method)
        self._odds: dict[tuple[Any, ...], tuple[float, float, float]] = {}

    def root_mean(self) -> float | None:
        # at the start both positions' holes are drawn alike: swapping them swaps win and
        # lose, so P(win) - P(lose) has mean 0 over the deals (the blinds are constant)
        return 0.0

    def odds(self, holes: tuple[tuple[int, ...], ...],
             board: tuple[int, ...]) -> tuple[float, float, float]:
        """Position 0's ``(win, tie, lose)`` over every completion of ``board``."""
        key = (holes, board)
        got = self._odds.get(key)
        if got is None:
            counts = self.evaluator.pattern_counts(holes, board, (0, 1))
            n = sum(counts.values())
            got = (counts.get((1, 0), 0) / n, counts.get((0, 0), 0) / n,
                   counts.get((0, 1), 0) / n)
            if len(self._odds) >= CACHE_MAX:
                self._odds.clear()
            self._odds[key] = got
        return got

    def __call__(self, state: BettingState, holes: tuple[tuple[int, ...], ...],
                 board: tuple[int, ...], beliefs: Sequence[Belief | None] | None) -> float:
        done = _terminal(state, holes, board)
        if done is not None:
            return done
        win, tie, _ = self.odds(holes, board)
        # an all-in showdown before the whole board is seen, or the betting still open
        return float(checkdown_value(state, win + 0.5 * tie))

    def edge(self, holes: tuple[tuple[int, ...], ...], board: tuple[int, ...]) -> float:
        win, _, lose = self.odds(holes, board)
        return win - lose

    def raise_mean(self, state: BettingState, holes: tuple[tuple[int, ...], ...],
                   board: tuple[int, ...], beliefs: Sequence[Belief | None] | None,
                   ) -> float:
        # linear in the raise-to (a raise never ends a hand): its value at the mean size
        bounds = state.raise_bounds()
        assert bounds is not None
        win, _, lose = self.odds(holes, board)
        return (win - lose) * 0.5 * (bounds[0] + bounds[1])


class ExactValue:
    """The known agents' exact expected value (module docstring): both positions'
    ``models`` (with ``builtin:random``'s kinds expanded), a game whose deals enumerate."""

    name = "exact"
    needs_beliefs = True

    def __init__(self, game: Game, models: Sequence[Model]) -> None:
        self.game = game
        self.models = tuple(models)
        self.deck = tuple(deck_for(game))
        self._cache: dict[tuple[Any, ...], float] = {}
        self._mean: float | None = None

    def root_mean(self) -> float | None:
        if self._mean is None:
            k = self.game.num_hole_cards
            total = 0.0
            count = 0
            start = BettingState.initial(self.game)
            seen = self.game.board_cards_through(0)
            for h0 in itertools.combinations(self.deck, k):
                rest = [c for c in self.deck if c not in h0]
                for h1 in itertools.combinations(rest, k):
                    holes = (h0, h1)
                    deal = Deal(holes, ())
                    beliefs = [((1.0, m.start(p, deal)),) for p, m in enumerate(self.models)]
                    if seen:  # a board shown before the first action: averaged here
                        left = [c for c in rest if c not in h1]
                        vals = [self(start, holes, b, beliefs)
                                for b in itertools.permutations(left, seen)]
                        total += math.fsum(vals) / len(vals)
                    else:
                        total += self(start, holes, (), beliefs)
                    count += 1
            self._mean = total / count
        return self._mean

    def __call__(self, state: BettingState, holes: tuple[tuple[int, ...], ...],
                 board: tuple[int, ...], beliefs: Sequence[Belief | None] | None) -> float:
        done = _terminal(state, holes, board)
        if done is not None:
            return done
        assert beliefs is not None and all(b is not None for b in beliefs)
        key = (state.betting, holes, board, tuple(beliefs))
        got = self._cache.get(key)
        if got is not None:
            return got
        used = {c for h in holes for c in h} | set(board)
        rest = [c for c in self.deck if c not in used]
        missing = self.game.total_board_cards - len(board)
        b0, b1 = beliefs
        assert b0 is not None and b1 is not None
        value = _mean_over_boards(self.models, state, holes, board,
                                  itertools.permutations(rest, missing), b0, b1)
        if len(self._cache) >= CACHE_MAX:
            self._cache.clear()
        self._cache[key] = value
        return value

    def raise_mean(self, state: BettingState, holes: tuple[tuple[int, ...], ...],
                   board: tuple[int, ...], beliefs: Sequence[Belief | None] | None,
                   ) -> float | None:
        return None  # the observer's belief differs per size (and limit games have none)

    def edge(self, holes: tuple[tuple[int, ...], ...], board: tuple[int, ...]) -> float:
        return 0.0


WALK_SAMPLES = 128
""":class:`SampledValue`: boards sampled per value."""


class SampledValue:
    """Both agents known, a game too big to enumerate (hold'em): ``V`` at a history is the
    mean, over :data:`WALK_SAMPLES` completions of the board drawn by a hash of the
    history (its cards, betting and the agents' beliefs), of the agents' expected value
    on that board (the exact-agents walk,
    :func:`~evaluation.estimators.estimator.state_value`). A deterministic function of
    the history, so the action brackets keep mean 0; at a chance event the value after the
    card is a mean of the same walk over boards completing it and the value before a mean
    over boards drawn independently of the card, so the bracket has mean 0 too (treating
    the hash as independent of the dealer's cards, as ``sampled-agents`` does)."""

    name = "sampled-walk"
    needs_beliefs = True

    def __init__(self, game: Game, models: Sequence[Model],
                 samples: int = WALK_SAMPLES) -> None:
        self.game = game
        self.models = tuple(models)
        self.deck = tuple(deck_for(game))
        self.samples = samples
        self.salt: tuple[int, ...] = ()
        """The deal being valued (:func:`hand_aivat`'s ``key``: the log's seed and hand
        number) in the hash: every deal draws its own boards (the two seatings of a deal
        the same ones), so a history that recurs across deals does not repeat one draw's
        error."""
        self._cache: dict[tuple[Any, ...], float] = {}

    def root_mean(self) -> float | None:
        return None

    def edge(self, holes: tuple[tuple[int, ...], ...], board: tuple[int, ...]) -> float:
        return 0.0

    def raise_mean(self, state: BettingState, holes: tuple[tuple[int, ...], ...],
                   board: tuple[int, ...], beliefs: Sequence[Belief | None] | None,
                   ) -> float | None:
        # one size drawn by a hash of the deal and the history (independent of the size
        # taken): its value estimates the mean over the sizes without bias, as the
        # boards do (a walk per size would cost hundreds of walks)
        import hashlib

        bounds = state.raise_bounds()
        assert bounds is not None and beliefs is not None
        lo, hi = bounds
        digest = hashlib.blake2b(repr((self.salt, "raise", state.betting, holes, board))
                                 .encode(), digest_size=8).digest()
        action = Action(ActionKind.RAISE, lo + int.from_bytes(digest, "little") % (hi - lo + 1))
        o = 1 - state.player
        after = list(beliefs)
        bo = after[o]
        if bo is not None:
            after[o] = observe_belief(self.models[o], bo, state, action)
        return self(state.apply(action), holes, board, after)

    def __call__(self, state: BettingState, holes: tuple[tuple[int, ...], ...],
                 board: tuple[int, ...], beliefs: Sequence[Belief | None] | None) -> float:
        import hashlib
        import random

        done = _terminal(state, holes, board)
        if done is not None:
            return done
        assert beliefs is not None
        b0, b1 = beliefs
        assert b0 is not None and b1 is not None
        key = (self.salt, state.betting, holes, board, b0, b1)
        got = self._cache.get(key)
        if got is not None:
            return got
        used = {c for h in holes for c in h} | set(board)
        rest = [c for c in self.deck if c not in used]
        missing = self.game.total_board_cards - len(board)
        seed = int.from_bytes(hashlib.blake2b(repr(key).encode(), digest_size=8).digest(),
                              "little")
        rng = random.Random(seed)
        draws = [tuple(rng.sample(rest, missing)) for _ in range(self.samples)] \
            if missing else [()]
        value = _mean_over_boards(self.models, state, holes, board, draws, b0, b1)
        if len(self._cache) >= CACHE_MAX:
            self._cache.clear()
        self._cache[key] = value
        return value


def sampled_applies(game: Game, models: Sequence[Model | None]) -> bool:
    """True when :class:`SampledValue` values this seating: heads-up, both agents known
    (strategy files and built-ins), a game with more than :data:`EXACT_MAX_DEALS`
    hole-card deals (in a small game the check-down value with imaginary observations is
    cheaper where the exact one does not apply)."""
    return (game.num_players == 2 and all(m is not None for m in models)
            and all(type(m) in (FileAgent, PolicyAgent, RandomAgent) for m in models)
            and _hole_deals(game) > EXACT_MAX_DEALS)


def _hole_deals(game: Game) -> int:
    """The number of hole-card deals of a heads-up game."""
    deck = len(deck_for(game))
    k = game.num_hole_cards
    if deck < 2 * k + game.total_board_cards:
        return 0
    return math.comb(deck, k) * math.comb(deck - k, k)


def exact_applies(game: Game, models: Sequence[Model | None]) -> bool:
    """True when :class:`ExactValue` can value this seating: both agents known and
    walkable exactly (strategy files, deterministic built-ins, ``builtin:random`` in a
    limit game), heads-up, at most :data:`EXACT_MAX_DEALS` hole-card deals."""
    if game.num_players != 2 or any(m is None for m in models):
        return False
    if any(type(m) is RandomAgent and (game.is_nolimit or not m.expand) for m in models):
        return False
    if not all(type(m) in (FileAgent, PolicyAgent, RandomAgent) for m in models):
        return False
    return 0 < _hole_deals(game) <= EXACT_MAX_DEALS


# ---------------------------------------------------------------------- one hand


def trajectory(game: Game, models: Sequence[Model | None], holes: tuple[tuple[int, ...], ...],
               board: tuple[int, ...], actions: Sequence[Action], value: ValueFunction,
               ) -> tuple[float, float, list[float], list[float]]:
    """One trajectory's ``(X, u, likelihoods, terms)``: its AIVAT value and real value
    (position 0's chips); per position, the probability that its known agent takes the
    trajectory's actions with these cards (1 for an unknown one); and the brackets summed
    by kind (:func:`term_names`: ``X = u - sum`` of all but the last ``num_rounds``),
    then per round the change of :meth:`ValueFunction.edge` its cards made (mean 0, not
    in ``X``: features for :func:`fitted`)."""
    deal = Deal(holes, board)
    rounds = game.num_rounds
    terms = [0.0] * (1 + 3 * rounds)
    state = BettingState.initial(game)
    beliefs: list[Belief | None] = [
        None if m is None else ((1.0, m.start(p, deal)),) for p, m in enumerate(models)]
    lik = [1.0] * len(models)
    need = value.needs_beliefs
    shown = game.board_cards_through(0)
    root = value.root_mean()
    if root is not None:
        terms[0] = value(state, holes, board[:shown], beliefs if need else None) - root
    for action in actions:
        p = state.player
        o = 1 - p
        mp, mo = models[p], models[o]
        if mp is not None:
            bp = beliefs[p]
            assert bp is not None
            dist = action_distribution(mp, bp, state, p, deal)
            ranged = RAISE_RANGE in dist
            key = action
            if ranged and action.kind is ActionKind.RAISE:
                key = RAISE_RANGE
            got = dist.get(key)
            if got is None:
                lik[p] = 0.0
                return 0.0, 0.0, lik, terms
            q_taken = got[0]
            if key is RAISE_RANGE:
                bounds = state.raise_bounds()
                assert bounds is not None
                q_taken /= bounds[1] - bounds[0] + 1
            lik[p] *= q_taken
            means: dict[Action, float] = {}
            if RAISE_RANGE in dist:
                mean = value.raise_mean(state, holes, board[:shown],
                                        list(beliefs) if need else None)
                if mean is not None:
                    means[RAISE_RANGE] = mean
            if len(dist) > 1 and (RAISE_RANGE not in dist or means):
                ev = 0.0
                for a, (q, post) in dist.items():
                    if a is RAISE_RANGE:
                        ev += q * means[a]
                        continue
                    after: list[Belief | None] | None = None
                    if need:
                        after = list(beliefs)
                        after[p] = post
                        bo = beliefs[o]
                        if mo is not None and bo is not None:
                            after[o] = observe_belief(mo, bo, state, a)
                    ev += q * value(state.apply(a), holes, board[:shown], after)
                after_taken: list[Belief | None] | None = None
                if need:
                    after_taken = list(beliefs)
                    after_taken[p] = got[1]
                    bo = beliefs[o]
                    if mo is not None and bo is not None:
                        after_taken[o] = observe_belief(mo, bo, state, action)
                terms[1 + rounds + state.round] += value(state.apply(action), holes,
                                                         board[:shown], after_taken) - ev
            beliefs[p] = got[1]
        bo = beliefs[o]
        if mo is not None and bo is not None:
            beliefs[o] = observe_belief(mo, bo, state, action)
        state = state.apply(action)
        now = game.board_cards_through(state.round)
        if now > shown:
            b = beliefs if need else None
            terms[1 + state.round] += (value(state, holes, board[:now], b)
                                       - value(state, holes, board[:shown], b))
            terms[1 + 2 * rounds + state.round] += (value.edge(holes, board[:now])
                                                    - value.edge(holes, board[:shown]))
            shown = now
    u = hand_values(state, holes, board)[0]
    return u - math.fsum(terms[: 1 + 2 * rounds]), u, lik, terms


def term_names(game: Game) -> list[str]:
    """The kinds of brackets :func:`trajectory` sums: the hole cards, the board cards of
    each round (index = the round they open; an all-in run-out counts in the last), the
    known agents' actions in each round."""
    return (["hole cards"] + [f"cards r{r}" for r in range(game.num_rounds)]
            + [f"actions r{r}" for r in range(game.num_rounds)])


def feature_names(game: Game) -> list[str]:
    """The names of :attr:`HandAivat.terms`: :func:`term_names`, the imaginary
    observations, then the extra features (each round's change of the edge)."""
    return [*term_names(game), "imaginary cards",
            *(f"edge r{r}" for r in range(game.num_rounds))]


def _assignments(game: Game, holes: tuple[tuple[int, ...], ...], board: tuple[int, ...],
                 positions: Sequence[int], limit: int = IMAGINARY_MAX,
                 ) -> list[tuple[tuple[int, ...], ...]] | None:
    """Every hole-card assignment of ``positions`` that fits the other holes and the
    board (the actual one included); None if more than ``limit``."""
    fixed = {c for p, h in enumerate(holes) if p not in positions for c in h} | set(board)
    free = [c for c in deck_for(game) if c not in fixed]
    k = game.num_hole_cards
    out: list[tuple[tuple[int, ...], ...]] = []

    def extend(i: int, cur: list[tuple[int, ...]], used: set[int]) -> bool:
        if i == len(positions):
            h = list(holes)
            for p, got in zip(positions, cur, strict=True):
                h[p] = got
            out.append(tuple(h))
            return len(out) <= limit
        for combo in itertools.combinations([c for c in free if c not in used], k):
            if not extend(i + 1, [*cur, combo], used | set(combo)):
                return False
        return True

    return out if extend(0, [], set()) else None


@dataclass(frozen=True, slots=True)
class HandAivat:
    """One hand's values, position 0's chips."""

    raw: float
    aivat: float
    imaginary: int
    """Hole-card assignments averaged (1: no imaginary observations)."""
    terms: tuple[float, ...] = ()
    """Features of mean 0 (:func:`feature_names`): the corrections by kind
    (:func:`term_names`, then the imaginary observations' ``u - mean of u``, batched
    ``Y_real - mean Y``: :mod:`evaluation.estimators.aivat_imaginary`), with
    ``aivat = raw - sum`` of those, then the extra features."""


def hand_aivat(game: Game, models: Sequence[Model | None],
               holes: tuple[tuple[int, ...], ...], board: tuple[int, ...],
               actions: Sequence[Action], value: ValueFunction, *,
               imaginary: bool = True, where: str = "hand",
               key: tuple[int, ...] = (), batch: Any = None,
               enumerate_max: int | None = None) -> HandAivat:
    """The AIVAT value of one hand (module docstring), with imaginary observations over
    the known agents' cards where they apply; ``key`` names the deal (seed, hand number)
    for :class:`SampledValue`'s hash. Where the assignments are more than
    ``enumerate_max`` (default :data:`IMAGINARY_MAX`), ``batch``
    (:class:`evaluation.estimators.aivat_imaginary.Imaginary`) batches the known
    strategy files' holdings instead (none: no imaginary observations).

    Raises:
        UsageError: if a known agent could not have taken the hand's actions.
    """
    if isinstance(value, SampledValue):
        value.salt = key
    x, u, lik, terms = trajectory(game, models, holes, board, actions, value)
    for p, m in enumerate(models):
        if m is not None and lik[p] <= 0.0:
            raise UsageError(f"{where}: expected the actions of position {p} to be possible "
                             f"for its strategy, got probability 0 for the betting "
                             f"{''.join(str(a) for a in actions)!r} (wrong file or options?)")
    known = [p for p, m in enumerate(models) if m is not None]
    limit = IMAGINARY_MAX if enumerate_max is None else enumerate_max
    options = _assignments(game, holes, board, known, limit) if imaginary and known \
        else None
    main = len(terms) - game.num_rounds
    if options is None and imaginary and batch is not None:
        shift, count = batch.correction(models, holes, board, actions, key)
        if count:
            return HandAivat(u, x - shift, count, (*terms[:main], shift, *terms[main:]))
    if options is None:
        return HandAivat(u, x, 1, (*terms[:main], 0.0, *terms[main:]))
    num = 0.0
    den = 0.0
    u_mean = 0.0
    t_mean = [0.0] * len(terms)
    for hs in options:
        if hs == holes:
            xi, ui, li, ti = x, u, lik, terms
        else:
            xi, ui, li, ti = trajectory(game, models, hs, board, actions, value)
        w = math.prod(li[p] for p in known)
        if w > 0.0:
            num += w * xi
            den += w
            u_mean += w * ui
            for k, t in enumerate(ti):
                t_mean[k] += w * t
    t_mean = [t / den for t in t_mean]
    return HandAivat(u, num / den, len(options),
                     (*t_mean[:main], u - u_mean / den, *t_mean[main:]))


# ---------------------------------------------------------------------- logs


@dataclass(frozen=True, slots=True)
class LoggedValue:
    """One hand of a log, valued: what each named player won, raw and by AIVAT."""

    seed: int
    """The log's deal seed (hands of equal seed and number are one duplicate deal)."""
    hand: int
    names: tuple[str, ...]
    """By position."""
    raw: tuple[float, ...]
    aivat: tuple[float, ...]
    terms: tuple[float, ...] = ()
    """Position 0's corrections by kind (:attr:`HandAivat.terms`)."""


class Valuer:
    """Values hands of logs for a set of known players (models by name): one value
    function per seating (:class:`ExactValue` where it applies, else a shared
    :class:`CheckdownValue`)."""

    def __init__(self, game: Game, models: Mapping[str, Model], *,
                 imaginary: bool = True, method: str = "auto",
                 walk_samples: int = WALK_SAMPLES, batch_walk: bool = False) -> None:
        if game.num_players != 2:
            raise UsageError(f"expected a heads-up game for AIVAT, got {game.num_players} "
                             f"players")
        self.game = game
        self.models = dict(models)
        self.imaginary = imaginary
        self.walk_samples = walk_samples
        self.checkdown = CheckdownValue(game, method)
        self.batch: Any = None
        """Batched imaginary observations where a seat's holdings are more than
        :data:`IMAGINARY_MAX` (:class:`evaluation.estimators.aivat_imaginary.Imaginary`):
        for the seatings valued by the check-down value (there they are the imaginary
        average itself), and with ``batch_walk`` for the sampled walk's too (there a
        control variate that added variance on hold'em: ``docs/reports/aivat.md``)."""
        self.batch_walk = batch_walk
        if imaginary and math.comb(len(deck_for(game)), game.num_hole_cards) > IMAGINARY_MAX:
            from evaluation.estimators.aivat_imaginary import Imaginary

            self.batch = Imaginary(game)
        self._exact: dict[tuple[str, ...], ExactValue] = {}
        self._sampled: dict[tuple[str, ...], SampledValue] = {}
        self.kinds: dict[str, int] = {}
        """Seatings valued by each value function's name."""

    def value_for(self, names: tuple[str, ...]) -> tuple[list[Model | None], ValueFunction]:
        models = [self.models.get(n) for n in names]
        vf: ValueFunction = self.checkdown
        if exact_applies(self.game, models):
            got = self._exact.get(names)
            if got is None:
                got = self._exact[names] = ExactValue(
                    self.game, [m for m in models if m is not None])
            vf = got
        elif sampled_applies(self.game, models):
            walk = self._sampled.get(names)
            if walk is None:
                # random's walk follows the kind its hash picks (``sampled-agents``)
                walkers = [RandomAgent(self.game) if type(m) is RandomAgent else m
                           for m in models if m is not None]
                walk = self._sampled[names] = SampledValue(self.game, walkers,
                                                           self.walk_samples)
            vf = walk
        return models, vf

    def hand(self, hand: Any, seed: int, where: str) -> LoggedValue:
        """One parsed ``STATE`` line (:class:`~evaluation.estimators.allin.LoggedHand`)."""
        models, vf = self.value_for(hand.names)
        self.kinds[vf.name] = self.kinds.get(vf.name, 0) + 1
        actions = [a for rnd in hand.state.actions for a in rnd]
        got = hand_aivat(self.game, models, hand.hole, hand.board, actions, vf,
                         imaginary=self.imaginary, where=where, key=(seed, hand.hand),
                         batch=self.batch if vf is self.checkdown or self.batch_walk
                         else None)
        if abs(got.raw - hand.values[0]) > 1e-6:
            raise UsageError(f"{where}: expected the logged value {hand.values[0]} of "
                             f"position 0 to be the game's payoff, got {got.raw} (another "
                             f"game?)")
        return LoggedValue(seed, hand.hand, hand.names, (got.raw, -got.raw),
                           (got.aivat, -got.aivat), got.terms)


def log_lines(path: Any) -> Iterable[str]:
    """The lines of a dealer log (a :class:`pathlib.Path`), streamed, each ASCII and at
    most :data:`~agent.acpc.limits.MAX_RECORD_LINE_BYTES` bytes.

    Raises:
        UsageError: naming the file for a file that cannot be read or a bad line.
    """
    from agent.acpc.limits import read_lines

    try:
        with path.open("rb") as f:
            for _, line in read_lines(f, source=str(path), what="a dealer log",
                                      error=UsageError, encoding="ascii"):
                yield line
    except OSError as exc:
        raise UsageError(f"could not read log {str(path)!r}: {exc.strerror or exc}") from None


def log_hand_values(valuer: Valuer, lines: Iterable[str], source: str,
                    progress: Any = None) -> list[LoggedValue]:
    """Every ``STATE`` line of a dealer log (lines without line ends), valued.

    Raises:
        UsageError: for a line that cannot be read, a log without a header or hands, or
            a known agent whose actions are impossible.
    """
    from dealer.logfile import parse_header

    lines = iter(lines)
    head: list[str] = []
    for line in lines:
        head.append(line)
        if len(head) == 4:
            break
    header = parse_header(head, source)
    out: list[LoggedValue] = []
    for i, line in enumerate(lines, start=5):
        if not line.startswith("STATE:"):
            continue
        where = f"{source}:{i}"
        hand = parse_state_line(line, valuer.game, where)
        out.append(valuer.hand(hand, header.seed, where))
        if progress is not None:
            progress(len(out))
    if not out:
        raise UsageError(f"{source}: expected STATE lines, found none")
    return out


@dataclass(frozen=True, slots=True)
class PlayerResult:
    """One player's result over the duplicate deals of some logs (chips per deal)."""

    name: str
    raw: list[float]
    aivat: list[float]
    hands: int
    terms: list[list[float]] | None = None
    """Per deal, the player's corrections by kind (:attr:`HandAivat.terms`)."""


def by_player(values: Iterable[LoggedValue]) -> dict[str, PlayerResult]:
    """Per player name: its value per duplicate deal (the mean over the hands of the
    same seed and hand number it played: both seatings of a duplicate pair), raw, by
    AIVAT and its corrections, deals in order of first appearance."""
    acc: dict[str, dict[tuple[int, int], list[tuple[float, float, list[float]]]]] = {}
    hands: dict[str, int] = {}
    for v in values:
        for pos, (name, r, a) in enumerate(zip(v.names, v.raw, v.aivat, strict=True)):
            sign = 1.0 if pos == 0 else -1.0
            acc.setdefault(name, {}).setdefault((v.seed, v.hand), []).append(
                (r, a, [sign * t for t in v.terms]))
            hands[name] = hands.get(name, 0) + 1
    out = {}
    for name, deals in acc.items():
        raw = [math.fsum(r for r, _, _ in xs) / len(xs) for xs in deals.values()]
        aiv = [math.fsum(a for _, a, _ in xs) / len(xs) for xs in deals.values()]
        terms = [[math.fsum(col) / len(xs) for col in zip(*(t for _, _, t in xs),
                                                            strict=True)]
                 for xs in deals.values()]
        out[name] = PlayerResult(name, raw, aiv, hands[name], terms)
    return out


FOLDS = 5
"""Folds (by deal index) of :func:`fitted`."""

FIT_DEALS = 25
""":func:`fitted` fits only with at least this many deals per kind of correction."""


def fitted(result: PlayerResult, folds: int = FOLDS) -> list[float]:
    """Per deal, the raw value minus a cross-fitted multiple of each kind of correction:
    ``raw - sum_k beta_k t_k`` with ``beta`` the least-squares fit of the raw values on
    the corrections over the *other* folds (with an intercept, not subtracted). Each
    correction has mean 0 and ``beta`` is independent of the deals it is applied to,
    so the estimate stays unbiased; ``beta = 1`` is AIVAT itself, so the fit can only
    choose a better multiple per kind (a value function scaled by round). With fewer
    than :data:`FIT_DEALS` deals per kind that occurs: the AIVAT values (a fit on few
    heavy-tailed deals adds more variance than it removes)."""
    n = len(result.raw)
    if not result.terms:
        return list(result.aivat)
    import numpy as np

    y = np.array(result.raw, dtype=np.float64)
    x = np.array(result.terms, dtype=np.float64).reshape(n, -1)
    keep = np.flatnonzero(np.abs(x).sum(axis=0) > 0)  # kinds that occur
    x = x[:, keep]
    if n < max(2 * folds, FIT_DEALS * len(keep)):
        return list(result.aivat)
    fold = np.arange(n) % folds
    out = np.empty(n)
    for k in range(folds):
        train = fold != k
        design = np.column_stack([np.ones(int(train.sum())), x[train]])
        beta = np.linalg.lstsq(design, y[train], rcond=None)[0][1:]
        out[~train] = y[~train] - x[~train] @ beta
    return [float(v) for v in out]


def sd(xs: Sequence[float]) -> float:
    """The sample standard deviation (nan for fewer than two values)."""
    n = len(xs)
    if n < 2:
        return math.nan
    m = math.fsum(xs) / n
    return math.sqrt(math.fsum((x - m) ** 2 for x in xs) / (n - 1))


def hands_needed(sd_per_deal: float, half_width: float = 25.0, hands_per_deal: int = 2,
                 z: float = 1.96) -> float:
    """Hands for a 95% interval of +-``half_width`` (same units as ``sd_per_deal``, the
    SD of one duplicate deal of ``hands_per_deal`` hands)."""
    return hands_per_deal * (z * sd_per_deal / half_width) ** 2


# ---------------------------------------------------------------------- tables


@dataclass(frozen=True, slots=True)
class AivatRow:
    """One player's (a variant's) result against another: raw and by AIVAT, mbb/h per
    duplicate deal."""

    label: str
    raw: Any
    """:class:`evaluation.stats.Estimate` of the plain values."""
    aivat: Any
    """:class:`evaluation.stats.Estimate` of the AIVAT values."""
    sd_raw: float
    sd_aivat: float
    deals: int
    hands: int
    fitted: Any = None
    """:class:`evaluation.stats.Estimate` of :func:`fitted`."""
    sd_fitted: float = math.nan

    def to_dict(self) -> dict[str, Any]:
        return {"comparison": self.label, "raw": self.raw.to_dict(),
                "aivat": self.aivat.to_dict(), "fitted": self.fitted.to_dict(),
                "sd_raw_per_deal": self.sd_raw, "sd_aivat_per_deal": self.sd_aivat,
                "sd_fitted_per_deal": self.sd_fitted, "deals": self.deals,
                "hands": self.hands}


def player_row(label: str, result: PlayerResult, big_blind: int) -> AivatRow:
    """:class:`AivatRow` of one player's per-deal values (chips -> mbb/h)."""
    from evaluation.stats import estimate, to_mbb

    raw = [to_mbb(v, big_blind) for v in result.raw]
    aiv = [to_mbb(v, big_blind) for v in result.aivat]
    fit = [to_mbb(v, big_blind) for v in fitted(result)]
    return AivatRow(label, estimate(raw, result.hands), estimate(aiv, result.hands),
                    sd(raw), sd(aiv), len(raw), result.hands, estimate(fit, result.hands),
                    sd(fit))


def models_of(game: Game, variants: Iterable[Any]) -> dict[str, Model]:
    """The known agents among ``variants`` (:class:`evaluation.match.variants.Variant`:
    strategy files and built-ins; an external command is not known, nor an agent that
    exploits its opponent, whose strategy changes as it plays), by name."""
    from evaluation.estimators.estimator import make_model

    shared: dict[tuple[str, str | None], Any] = {}
    return {v.name: make_model(v, game, expand_random=True, shared=shared)
            for v in variants if v.kind != "cmd" and v.strategy is not None
            and v.exploit is None}


def match_rows(game: Game, variants: Sequence[Any], groups: Sequence[tuple[str, ...]],
               stored: Sequence[Any], run_dir: Any, lines_of: Any, *,
               imaginary: bool = True, note: Any = None, walk_samples: int = WALK_SAMPLES,
               ) -> tuple[list[AivatRow], dict[str, int]]:
    """``acpc-match --estimator aivat``: per group ``(a, b)``, ``a``'s result over the
    duplicate deals of its stored matches (:class:`evaluation.match.store.StoredMatch`,
    logs under ``run_dir`` read by ``lines_of(path)``), raw and by AIVAT; and the
    seatings valued by each value function. ``walk_samples``: the boards of
    :class:`SampledValue`'s walk."""
    import time

    valuer = Valuer(game, models_of(game, variants), imaginary=imaginary,
                    walk_samples=walk_samples)
    rows = []
    done = 0
    start = time.process_time()
    for group in groups:
        values: list[LoggedValue] = []
        for m in stored:
            if tuple(m.group) != tuple(group):
                continue
            path = run_dir / m.log_path
            values += log_hand_values(valuer, lines_of(path), str(path))
            done += 1
            if note is not None:
                note(f"AIVAT: {m.match_name} valued ({done} of {len(stored)} matches, "
                     f"{time.process_time() - start:.1f} CPU s)")
        if not values:
            continue
        a, b = group[0], group[1]
        rows.append(player_row(f"{a} vs {b}", by_player(values)[a], game.big_blind or 1))
    return rows, dict(valuer.kinds)


def format_aivat_rows(rows: Sequence[AivatRow], kinds: Mapping[str, int]) -> str:
    """The table ``acpc-match --estimator aivat`` and ``acpc-log aivat`` print."""
    width = max([10] + [len(r.label) for r in rows])
    lines = [f"{'comparison':<{width}}  {'plain mbb/h':>20}  {'AIVAT mbb/h':>20}  "
             f"{'AIVAT fitted mbb/h':>20}  {'SD plain':>9}  {'SD AIVAT':>9}  "
             f"{'SD fitted':>9}  {'deals':>7}"]
    for r in rows:
        lines.append(f"{r.label:<{width}}  {r.raw.mean:>+10.2f} +- {r.raw.half_width:>6.2f}  "
                     f"{r.aivat.mean:>+10.2f} +- {r.aivat.half_width:>6.2f}  "
                     f"{r.fitted.mean:>+10.2f} +- {r.fitted.half_width:>6.2f}  "
                     f"{r.sd_raw:>9.1f}  {r.sd_aivat:>9.1f}  {r.sd_fitted:>9.1f}  "
                     f"{r.deals:>7}")
    used = ", ".join(f"{n} {k}" for n, k in sorted(kinds.items()))
    lines.append(f"(95% intervals over duplicate deals, SD per deal in mbb/h; fitted: each "
                 f"kind of correction scaled by a {FOLDS}-fold cross-fitted least-squares "
                 f"multiple; value functions by seatings valued: {used or 'none'})")
    return "\n".join(lines) + "\n"
