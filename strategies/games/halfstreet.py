"""The half-street games of docs/background.md: the clairvoyance game and no-limit Kuhn poker.

Both are *half-street* games: the pot is 1 (antes 0.5 each), P1 (position 0, the bettor)
checks (showdown) or bets any ``x`` in multiples of 0.1 pot up to the stack ``n``; P2
(position 1, the defender) calls or folds; nobody raises and P2 may not bet after a check.
A :class:`HalfStreetGame` holds the private-card distribution ``prob[c1, c2]`` and the
showdown outcome ``outcome[c1, c2]`` (+1 P1 wins, -1 P1 loses, 0 split); P1's payoff is
``0.5 * outcome`` after a check, ``+0.5`` after a fold and ``outcome * (0.5 + x)`` after a
call. The card names are ``win``/``lose`` (P2 holds nothing) for the clairvoyance game and
``J``, ``Q``, ``K`` for Kuhn.

These games are not ACPC games (fractional antes, no raises, P2 cannot bet after a check),
so they have their own small exact machinery here rather than :mod:`strategies.games.abstract`:

* :class:`HalfStreetStrategy`: an abstract strategy over the abstract bet sizes (pot
  fractions, the last one the all-in): P1's row (check, each size) per card and P2's row
  (fold, call) per card and size.
* :func:`clairvoyance_equilibrium`: the analytic equilibrium of the clairvoyance game for
  any abstraction (P2 calls ``y`` with ``1/(1+y)``; P1 bets the all-in with every winning
  hand and with a losing hand with probability ``n/(1+n)``).
* :func:`solve_abstract`: a small dedicated CFR+ (alternating updates, regret matching+,
  linearly weighted average) over the abstract half-street game, a numba kernel with a
  pure-Python oracle in the tests. Deterministic.
* :func:`full_best_responses`: exact best responses in the real game. P1 may bet every
  ``x`` of the grid; the agent in seat P2 translates ``x`` onto its sizes (``A = 0`` is the
  check: read as a check, the abstract hand is over and the agent calls, as
  :class:`agent.policy.StrategyPolicy` checks or calls off the tree) and calls with
  probability ``f * call(A) + (1 - f) * call(B)``: the draw is private, so the responder
  faces the mixture. The agent in seat P1 bets only its abstract sizes (real sizes here),
  so P2's best response is the abstract one.
* :func:`real_value`: the value of the real (0.1-grid) game to P1: ``n / (2 (1 + n))`` for
  the clairvoyance game; for no-limit Kuhn ``max_x g(x) / 6`` over the grid, with
  ``g(x) = x (1 - x) / (1 + x)`` (P1's king bets the best ``x``, its jack bluffs that size
  with probability ``x / (1 + x)``, its queen checks; P2's queen calls ``x < 1`` with
  probability ``(1 - x) / (1 + x)``): ``6/35 / 6 = 1/35`` once the grid holds 0.4.

Chips per hand are pots here (the pot is 1). Imports numpy, numba and :mod:`agent`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agent.abstraction.translation import MappingFn, bracket
from agent.acpc.errors import UsageError
from agent.jit import kernel
from agent.strategy.purification import Purification
from strategies.commands.defaults import TRANSLATION_ITERATIONS

F64 = npt.NDArray[np.float64]

GRID = 10
"""Real bets are multiples of ``1 / GRID`` pot."""
HALF_STREET_GAMES = ("clairvoyance", "nl-kuhn")
DEFAULT_ITERATIONS = TRANSLATION_ITERATIONS



def grid_size(k: int) -> float:
    """The ``k``-th grid bet, ``k / GRID`` pot (exact decimal, e.g. 0.3 not 0.30000000000000004)."""
    return k / GRID


def grid_steps(stack: float) -> int:
    """Grid bets up to ``stack``: ``stack * GRID``, which must be a whole number.

    Raises:
        ValueError: for a stack that is not a positive multiple of the grid step.
    """
    steps = round(stack * GRID)
    if steps <= 0 or abs(steps - stack * GRID) > 1e-9:
        raise UsageError(f"expected a stack that is a positive multiple of {1 / GRID:g} pot, "
                         f"got {stack!r}")
    return steps


@dataclass(frozen=True, eq=False)
class HalfStreetGame:
    """A half-street game (module docstring)."""

    name: str
    stack: float
    """``n``: the most P1 can bet, in pots."""
    p1_cards: tuple[str, ...]
    p2_cards: tuple[str, ...]
    prob: F64
    """``[c1, c2]``: probability of the deal."""
    outcome: F64
    """``[c1, c2]``: +1 if P1's hand wins the showdown, -1 if it loses, 0 split."""

    @property
    def steps(self) -> int:
        """Grid bets (``0.1, 0.2, ..., n``)."""
        return grid_steps(self.stack)

    def bets(self) -> F64:
        """Every real bet of the grid, increasing (the check excluded)."""
        return np.array([grid_size(k) for k in range(1, self.steps + 1)])


def clairvoyance(stack: float) -> HalfStreetGame:
    """The clairvoyance game with stacks ``n``: P1 wins or loses with probability 1/2 each."""
    grid_steps(stack)
    return HalfStreetGame("clairvoyance", float(stack), ("win", "lose"), ("-",),
                          np.array([[0.5], [0.5]]), np.array([[1.0], [-1.0]]))


def nl_kuhn(stack: float) -> HalfStreetGame:
    """Half-street no-limit Kuhn poker with stacks ``n`` (deck J, Q, K)."""
    grid_steps(stack)
    prob = np.full((3, 3), 1.0 / 6.0)
    np.fill_diagonal(prob, 0.0)
    outcome = np.sign(np.subtract.outer(np.arange(3), np.arange(3))).astype(np.float64)
    return HalfStreetGame("nl-kuhn", float(stack), ("J", "Q", "K"), ("J", "Q", "K"), prob,
                          outcome)


def make_game(name: str, stack: float) -> HalfStreetGame:
    """``clairvoyance`` or ``nl-kuhn`` with stacks ``stack``.

    Raises:
        ValueError: for another name or a bad stack.
    """
    if name == "clairvoyance":
        return clairvoyance(stack)
    if name == "nl-kuhn":
        return nl_kuhn(stack)
    raise UsageError(f"expected a half-street game in {', '.join(HALF_STREET_GAMES)}, "
                     f"got {name!r}")


def real_value(game: HalfStreetGame) -> float:
    """The value of the real game (every grid bet) to P1, in pots (module docstring).

    Raises:
        ValueError: for a game this module does not know the value of.
    """
    n = game.stack
    if game.name == "clairvoyance":
        return n / (2 * (1 + n))
    if game.name == "nl-kuhn":
        xs = game.bets()
        g = np.where(xs < 1.0, xs * (1 - xs) / (1 + xs), 0.0)
        return float(max(g.max(), 0.0)) / 6
    raise UsageError(f"expected a game of {HALF_STREET_GAMES}, got {game.name!r}")


# --------------------------------------------------------------------------- abstractions


def abstract_sizes(game: HalfStreetGame, sizes: Sequence[float]) -> F64:
    """The abstract bet sizes: ``sizes`` clamped to the stack, the all-in added, merged.

    Raises:
        ValueError: for a size that is not positive.
    """
    out = set()
    for s in sizes:
        if not s > 0:
            raise UsageError(f"expected positive pot fractions, got {list(sizes)!r}")
        out.add(min(float(s), game.stack))
    out.add(game.stack)
    merged: list[float] = []
    for s in sorted(out):
        if not merged or s - merged[-1] > 1e-9 * max(1.0, s):
            merged.append(s)
    merged[-1] = game.stack
    return np.array(merged)


@dataclass(frozen=True, eq=False)
class HalfStreetStrategy:
    """An abstract strategy of a half-street game (probabilities, rows sum to 1)."""

    sizes: F64
    """Abstract bet sizes, increasing; the last is the all-in."""
    p1: F64
    """``[c1, 1 + m]``: check, then a bet of each size."""
    p2: F64
    """``[c2, m, 2]``: fold, call after a bet of each size."""

    def purified(self, purification: Purification) -> HalfStreetStrategy:
        """Every row post-processed by ``purification``."""
        p1 = np.array([purification.apply([float(v) for v in row]) for row in self.p1])
        p2 = np.array([[purification.apply([float(v) for v in row]) for row in per_card]
                       for per_card in self.p2])
        return HalfStreetStrategy(self.sizes, p1, p2.reshape(self.p2.shape))


def clairvoyance_equilibrium(game: HalfStreetGame, sizes: F64) -> HalfStreetStrategy:
    """The analytic equilibrium of the clairvoyance game's abstraction ``sizes``.

    P2 calls a bet ``y`` with probability ``1/(1+y)``; P1 bets the all-in ``n`` with its
    winning hand and with its losing hand with probability ``n/(1+n)``, else checks.
    """
    n = game.stack
    m = len(sizes)
    p1 = np.zeros((2, 1 + m))
    p1[0, m] = 1.0
    p1[1, m] = n / (1 + n)
    p1[1, 0] = 1.0 - p1[1, m]
    call = 1.0 / (1.0 + sizes)
    p2 = np.stack([1.0 - call, call], axis=-1)[None, :, :].copy()
    return HalfStreetStrategy(np.array(sizes, dtype=np.float64), p1, p2)


# --------------------------------------------------------------------------- CFR+


@kernel
def _cfr_plus(
    prob: F64, outcome: F64, sizes: F64, iterations: int, r1: F64, r2: F64, s1: F64,
    s2: F64, t0: int,
) -> None:
    """CFR+ on the abstract half-street game: alternating, RM+, weights ``t`` in the average.

    ``r1``/``s1`` are ``[c1, 1 + m]`` (check, sizes), ``r2``/``s2`` are ``[c2, m, 2]``
    (fold, call); iterations are numbered ``t0 + 1, ...``.
    """
    n1, n2 = prob.shape
    m = len(sizes)
    sigma1 = np.empty((n1, 1 + m))
    sigma2 = np.empty((n2, m, 2))
    u1 = np.empty(1 + m)
    for it in range(iterations):
        t = float(t0 + it + 1)
        for c2 in range(n2):
            for j in range(m):
                pos = max(r2[c2, j, 0], 0.0) + max(r2[c2, j, 1], 0.0)
                for a in range(2):
                    sigma2[c2, j, a] = max(r2[c2, j, a], 0.0) / pos if pos > 0.0 else 0.5
        for c1 in range(n1):
            u1[0] = 0.0
            for c2 in range(n2):
                u1[0] += prob[c1, c2] * outcome[c1, c2] * 0.5
            for j in range(m):
                v = 0.0
                for c2 in range(n2):
                    v += prob[c1, c2] * (sigma2[c2, j, 0] * 0.5
                                         + sigma2[c2, j, 1] * outcome[c1, c2] * (0.5 + sizes[j]))
                u1[1 + j] = v
            pos = 0.0
            for a in range(1 + m):
                pos += max(r1[c1, a], 0.0)
            ev = 0.0
            for a in range(1 + m):
                sigma1[c1, a] = max(r1[c1, a], 0.0) / pos if pos > 0.0 else 1.0 / (1 + m)
                ev += sigma1[c1, a] * u1[a]
            for a in range(1 + m):
                r1[c1, a] = max(r1[c1, a] + u1[a] - ev, 0.0)
                s1[c1, a] += t * sigma1[c1, a]
        for c1 in range(n1):  # P2 answers P1's updated current strategy
            pos = 0.0
            for a in range(1 + m):
                pos += max(r1[c1, a], 0.0)
            for a in range(1 + m):
                sigma1[c1, a] = max(r1[c1, a], 0.0) / pos if pos > 0.0 else 1.0 / (1 + m)
        for c2 in range(n2):
            for j in range(m):
                fold = 0.0
                call = 0.0
                for c1 in range(n1):
                    w = prob[c1, c2] * sigma1[c1, 1 + j]
                    fold -= w * 0.5
                    call -= w * outcome[c1, c2] * (0.5 + sizes[j])
                ev = sigma2[c2, j, 0] * fold + sigma2[c2, j, 1] * call
                r2[c2, j, 0] = max(r2[c2, j, 0] + fold - ev, 0.0)
                r2[c2, j, 1] = max(r2[c2, j, 1] + call - ev, 0.0)
                s2[c2, j, 0] += t * sigma2[c2, j, 0]
                s2[c2, j, 1] += t * sigma2[c2, j, 1]


def _normalise(sums: F64) -> F64:
    total = sums.sum(axis=-1, keepdims=True)
    k = sums.shape[-1]
    safe = np.where(total > 0.0, total, 1.0)
    out: F64 = np.where(total > 0.0, sums / safe, 1.0 / k)
    return out


def solve_abstract(
    game: HalfStreetGame, sizes: F64, iterations: int = DEFAULT_ITERATIONS
) -> HalfStreetStrategy:
    """An abstract equilibrium by CFR+ (the average strategy after ``iterations``).

    Raises:
        ValueError: for a negative number of iterations.
    """
    if iterations < 0:
        raise UsageError(f"expected a non-negative number of iterations, got {iterations}")
    sizes = np.ascontiguousarray(sizes, dtype=np.float64)
    n1, n2 = game.prob.shape
    m = len(sizes)
    r1 = np.zeros((n1, 1 + m))
    r2 = np.zeros((n2, m, 2))
    s1 = np.zeros((n1, 1 + m))
    s2 = np.zeros((n2, m, 2))
    _cfr_plus(np.ascontiguousarray(game.prob), np.ascontiguousarray(game.outcome), sizes,
              iterations, r1, r2, s1, s2, 0)
    return HalfStreetStrategy(sizes, _normalise(s1), _normalise(s2))


def abstract_equilibrium(
    game: HalfStreetGame, sizes: F64, iterations: int = DEFAULT_ITERATIONS
) -> HalfStreetStrategy:
    """The analytic equilibrium for the clairvoyance game, CFR+ otherwise."""
    if game.name == "clairvoyance":
        return clairvoyance_equilibrium(game, sizes)
    return solve_abstract(game, sizes, iterations)


# --------------------------------------------------------------------------- best responses


def bet_brackets(strategy: HalfStreetStrategy, bets: F64) -> list[tuple[int, int]]:
    """``(lo, hi)`` of every real bet in ``[0] + sizes``
    (:func:`agent.abstraction.translation.bracket`; equal when the bet is a size)."""
    points = [0.0, *(float(s) for s in strategy.sizes)]
    return [bracket(points, float(x)) for x in bets]


def defender_calls(
    game: HalfStreetGame, strategy: HalfStreetStrategy, mapping: MappingFn, bets: F64,
    brackets: Sequence[tuple[int, int]] | None = None,
) -> F64:
    """``[c2, i]``: the probability that the agent in seat P2 calls the real bet ``bets[i]``.

    The bet is translated onto ``[0] + sizes`` (:func:`bet_brackets` and the mapping);
    read as the check (index 0) the agent calls.
    """
    points = [0.0, *(float(s) for s in strategy.sizes)]
    if brackets is None:
        brackets = bet_brackets(strategy, bets)
    n2 = strategy.p2.shape[0]
    call = np.concatenate([np.ones((n2, 1)), strategy.p2[:, :, 1]], axis=1)
    out = np.empty((n2, len(bets)))
    for i, (lo, hi) in enumerate(brackets):
        if lo == hi:
            out[:, i] = call[:, lo]
            continue
        f = float(mapping(points[lo], points[hi], float(bets[i])))
        out[:, i] = f * call[:, lo] + (1.0 - f) * call[:, hi]
    return out


def bettor_values(game: HalfStreetGame, bets: F64, calls: F64) -> F64:
    """``[c1, 1 + i]``: P1's counterfactual value (chance-weighted) of checking (column 0)
    and of betting ``bets[i]`` against a defender calling with ``calls[c2, i]``."""
    prob, outcome = game.prob, game.outcome
    check = (prob * outcome * 0.5).sum(axis=1)
    # sum over c2 of prob * (call * outcome * (0.5 + x) + (1 - call) * 0.5)
    called = (prob * outcome) @ calls * (0.5 + bets)[None, :]
    folded = prob @ (1.0 - calls) * 0.5
    out: F64 = np.concatenate([check[:, None], called + folded], axis=1)
    return out


def best_response_p1(
    game: HalfStreetGame, strategy: HalfStreetStrategy, mapping: MappingFn,
    bets: F64 | None = None,
) -> tuple[float, F64]:
    """P1's best response over every real bet against the agent in seat P2.

    Returns the value (pots per hand) and, per P1 card, the best bet (0 = check; the
    smallest on ties).
    """
    bets = game.bets() if bets is None else bets
    values = bettor_values(game, bets, defender_calls(game, strategy, mapping, bets))
    best = values.argmax(axis=1)
    choice = np.concatenate([[0.0], bets])[best]
    return float(values.max(axis=1).sum()), choice


def best_response_p2(game: HalfStreetGame, strategy: HalfStreetStrategy) -> float:
    """P2's best response (call or fold per card and size) against the agent in seat P1,
    which bets only its abstract sizes (real bets here): pots per hand to P2."""
    prob, outcome = game.prob, game.outcome
    p1 = strategy.p1
    value = -float((prob * outcome * 0.5 * p1[:, :1]).sum())
    for j, y in enumerate(strategy.sizes):
        w = prob * p1[:, 1 + j][:, None]  # [c1, c2]
        fold = -0.5 * w.sum(axis=0)
        call = -(w * outcome).sum(axis=0) * (0.5 + y)
        value += float(np.maximum(fold, call).sum())
    return value


@dataclass(frozen=True)
class HalfStreetFigures:
    """Best responses in both seats and the real game's value (pots per hand)."""

    best_responses: tuple[float, float]
    """``[0]``: P1's best response against the agent in seat P2; ``[1]``: P2's against
    the agent in seat P1."""
    value: float
    """The real game's value to P1."""

    @property
    def values(self) -> tuple[float, float]:
        return (self.value, -self.value)

    def seat(self, p: int) -> float:
        """Exploitability of the agent in seat ``p``: ``br[1-p] - v[1-p]``."""
        return self.best_responses[1 - p] - self.values[1 - p]

    @property
    def average(self) -> float:
        """``(br0 + br1) / 2``."""
        return (self.best_responses[0] + self.best_responses[1]) / 2


def full_best_responses(
    game: HalfStreetGame, strategy: HalfStreetStrategy, mapping: MappingFn,
    purification: Purification,
) -> HalfStreetFigures:
    """Exact best responses in the real game against the purified, translating agent."""
    played = strategy.purified(purification)
    br0, _ = best_response_p1(game, played, mapping)
    return HalfStreetFigures((br0, best_response_p2(game, played)), real_value(game))


def abstract_exploitability(game: HalfStreetGame, strategy: HalfStreetStrategy) -> float:
    """``(br0 + br1) / 2`` in the abstract game (P1 limited to the abstract sizes)."""
    calls = np.ascontiguousarray(strategy.p2[:, :, 1])
    br0 = float(bettor_values(game, strategy.sizes, calls).max(axis=1).sum())
    return (br0 + best_response_p2(game, strategy)) / 2
