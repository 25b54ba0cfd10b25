"""Best response, expected values and exploitability in the abstract game.

Everything here is measured in the *abstract* game of :mod:`strategies.games.abstract`: the best
responder may use only the abstract actions and sees only its buckets, exactly as a
strategy file is played. All figures are chips per hand (the game's own units: Leduc's
ante is 1 chip), averaged over the enumerated deals.

Conventions:

* :func:`expected_values` is the value of the strategy profile to each position: what
  every seat wins on average when all seats play the table.
* :func:`best_response` for position ``p`` is the most ``p`` can win on average against the
  other positions' strategies (a pure strategy; its value ``br[p]``).
* ``gain[p] = br[p] - value[p]`` and ``NashConv = sum(gain)``; zero exactly at an
  equilibrium of the abstract game.
* Two players (zero-sum): **exploitability** ``= (br[0] + br[1]) / 2 = NashConv / 2``, the
  average over both seats of what a best response wins against the strategy: a
  worst-case opponent taking each seat half the time wins this much per hand. Values
  here are per position; the game value "from both seats" (sitting in each seat half the
  time) is 0 in a symmetric match.
* More players: the headline figure is **NashConv**, the sum of the best-response gains
  (:attr:`Exploitability.headline` says which one it is).

The best response and the values themselves (:func:`best_response`, :func:`expected_values`,
:func:`deal_values`, their numba kernels), the loading of a strategy file as a float64
table (:func:`strategy_table`) and purification (:func:`purify_table`) live in
:mod:`agent.strategy.best_response`, where the exploiting agent runs them too; they are
re-exported here for the offline tools, which add the exploitability figures.

Imports numpy, :mod:`agent` and :mod:`strategies`; never imported by :mod:`agent`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agent.strategy.best_response import (
    BestResponse,
    best_response,
    check_table,
    deal_values,
    expected_values,
    node_values,
    purify_table,
    strategy_table,
)
from strategies.games.abstract import AbstractGame

F64 = npt.NDArray[np.float64]

__all__ = [
    "BestResponse", "Exploitability", "best_response", "check_table", "deal_values",
    "expected_values", "exploitability", "node_values", "purify_table", "strategy_table",
]


# --------------------------------------------------------------------------- public API


@dataclass(frozen=True)
class Exploitability:
    """Values, best responses and their gains for every position (chips per hand)."""

    values: tuple[float, ...]
    """Expected chips of each position under the strategy profile."""
    best_responses: tuple[float, ...]
    """What a best response wins in each position against the others."""

    @property
    def gains(self) -> tuple[float, ...]:
        """``best_responses[p] - values[p]``: how much position ``p`` could gain."""
        return tuple(b - v for b, v in zip(self.best_responses, self.values, strict=True))

    @property
    def nash_conv(self) -> float:
        """Sum of the gains; 0 at an equilibrium."""
        return float(sum(self.gains))

    @property
    def exploitability(self) -> float:
        """NashConv divided by the number of players: for two players
        ``(br[0] + br[1]) / 2``."""
        return self.nash_conv / len(self.values)

    @property
    def headline(self) -> tuple[str, float]:
        """The figure to report: ``('exploitability', ...)`` for two players,
        ``('nash_conv', ...)`` for more."""
        if len(self.values) == 2:
            return "exploitability", self.exploitability
        return "nash_conv", self.nash_conv


def exploitability(game: AbstractGame, table: npt.ArrayLike) -> Exploitability:
    """Expected values and best-response values of every position for ``table``.

    Raises:
        ValueError: for a table that does not fit ``game``.
    """
    strategy = check_table(game, table)
    values = expected_values(game, strategy)
    brs = tuple(best_response(game, strategy, p).value for p in range(game.num_players))
    return Exploitability(values, brs)
