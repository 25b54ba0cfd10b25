"""Exact head-to-head results of agent variants in small no-limit games (``acpc-match
--exact``).

In a game whose real betting tree and deals enumerate (no-limit Kuhn and Leduc), every
variant ``acpc-match`` can run in process has a *behaviour* in the real game: a table over
(real node, own cards) that gives the probability of each real action, its own randomness
integrated out:

* a strategy file: the abstract strategy played through its mapping, purification and size
  convention, its translation draws private
  (:func:`strategies.translation.full_br.induced_table`, the policy's rules one for one);
* ``builtin:random``: fold 6 / call 47 / raise 47 renormalised over the legal kinds, a
  raise-to uniform over the legal bounds (:class:`agent.builtin.RandomPolicy`);
  ``builtin:call``; ``builtin:fold`` (fold facing a bet, else check); ``builtin:minraise``
  (the smallest legal raise, else call).

The value of variant ``a`` against ``b`` is then exact: the mean over both seat orders of
:func:`strategies.best_response.expected_values` of the table made of ``a``'s rows in one
seat and ``b``'s in the other, every deal enumerated. This is what a duplicate match
estimates by sampling (``acpc-match`` without ``--exact``), with no interval.

Imports numpy, :mod:`agent` and :mod:`strategies`; never imported by :mod:`agent`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agent.abstraction.convention import DEFAULT_SIZE_CONVENTION, parse_size_convention
from agent.abstraction.translation import get_mapping
from agent.acpc.betting import ActionKind
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game
from agent.builtin import RandomPolicy
from agent.strategy.fileformat import load_strategy
from agent.strategy.purification import parse_purification
from strategies.best_response import expected_values
from strategies.game import AbstractGame, check_enumerable
from strategies.translation.full_br import (
    AgentLab,
    build_full_game,
    induced_table,
    purify_table,
)

F64 = npt.NDArray[np.float64]

BUILTINS = ("builtin:random", "builtin:call", "builtin:fold", "builtin:minraise")
"""The built-ins with an exact behaviour (``builtin:equity`` is hold'em only)."""


@dataclass(frozen=True)
class Player:
    """What ``--exact`` needs of a variant: its name and how it plays."""

    name: str
    strategy: str
    """``builtin:...`` or a strategy file's path."""
    mapping: str | None = None
    purify: str | None = None
    sizes: str | None = None


def _builtin_rows(real: AbstractGame, spec: str, node: int) -> F64:
    """One row (card-independent) of a built-in at ``node``."""
    actions = real.tree.nodes[node].actions
    state = real.tree.nodes[node].state
    kinds = [a.kind for a in actions]
    row = np.zeros(len(actions))
    raises = [i for i, k in enumerate(kinds) if k is ActionKind.RAISE]
    call = kinds.index(ActionKind.CALL)
    if spec == "builtin:call":
        row[call] = 1.0
    elif spec == "builtin:fold":
        row[kinds.index(ActionKind.FOLD) if ActionKind.FOLD in kinds else call] = 1.0
    elif spec == "builtin:minraise":
        row[raises[0] if raises else call] = 1.0
    elif spec == "builtin:random":
        legal = state.legal_actions()
        weights = {k: RandomPolicy.WEIGHTS[k] for k in legal}
        total = sum(weights.values())
        for kind, w in weights.items():
            if kind is ActionKind.RAISE:
                row[raises] = w / total / len(raises)
            else:
                row[kinds.index(kind)] = w / total
    else:
        raise UsageError(f"expected a built-in with an exact behaviour ({', '.join(BUILTINS)})"
                         f", got {spec!r}")
    return row


def _builtin_table(real: AbstractGame, spec: str) -> F64:
    table = np.zeros(real.table_size)
    for node in np.flatnonzero(real.offset >= 0):
        row = _builtin_rows(real, spec, int(node))
        start = int(real.offset[node])
        table[start : start + int(real.rows[node]) * len(row)] = np.tile(row, int(real.rows[node]))
    return table


class ExactArena:
    """Behaviours of variants in one game's real tree, and their exact values."""

    def __init__(self, game: Game) -> None:
        if game.num_players != 2 or not game.is_nolimit:
            raise UsageError(f"expected a two-player no-limit game for --exact (no-limit "
                             f"Kuhn, Leduc), got {game.num_players} players, "
                             f"{'no-limit' if game.is_nolimit else 'limit'}")
        check_enumerable(game)
        self.game = game
        self.real = build_full_game(game)
        self._labs: dict[str, AgentLab] = {}
        self._tables: dict[tuple[str, int], F64] = {}

    def behaviour(self, player: Player, seat: int) -> F64:
        """``player``'s behaviour table in ``seat`` (built once)."""
        key = (player.name, seat)
        if key in self._tables:
            return self._tables[key]
        if player.strategy.startswith("builtin:"):
            table = _builtin_table(self.real, player.strategy)
        else:
            lab = self._labs.get(player.strategy)
            if lab is None:
                strategy = load_strategy(Path(player.strategy), self.game)
                lab = AgentLab(strategy)
                self._labs[player.strategy] = lab
            strategy = lab.strategy
            sizes_in = parse_size_convention(player.sizes or DEFAULT_SIZE_CONVENTION)
            played = purify_table(lab.agent, lab.table, parse_purification(
                player.purify or strategy.default_purification))
            mapping = get_mapping(player.mapping or strategy.default_mapping)
            table = induced_table(lab.models_for(sizes_in)[seat], played, mapping)
        self._tables[key] = table
        return table

    def seat_value(self, a: Player, b: Player) -> float:
        """What ``a`` in seat 0 wins per hand against ``b`` in seat 1 (chips)."""
        real = self.real
        table = np.where(_seat_mask(real, 0), self.behaviour(a, 0), self.behaviour(b, 1))
        return float(expected_values(real, table)[0])

    def value(self, a: Player, b: Player) -> tuple[float, float, float]:
        """``(mean, a in seat 0, a in seat 1)``: what ``a`` wins per hand against ``b``."""
        v0 = self.seat_value(a, b)
        v1 = -self.seat_value(b, a)
        return (v0 + v1) / 2, v0, v1


def _seat_mask(real: AbstractGame, seat: int) -> npt.NDArray[np.bool_]:
    """Per table entry: True at the rows of ``seat``'s nodes."""
    mask = np.zeros(real.table_size, dtype=bool)
    for node in np.flatnonzero((real.offset >= 0) & (real.player == seat)):
        k = int(real.num_actions[node])
        mask[int(real.offset[node]) : int(real.offset[node]) + int(real.rows[node]) * k] = True
    return mask


@dataclass(frozen=True)
class ExactResult:
    """One pair's exact result."""

    a: str
    b: str
    chips: float
    """What ``a`` wins per hand against ``b``, both seats averaged."""
    seats: tuple[float, float]
    """``a`` in seat 0, ``a`` in seat 1."""
    mbb: float
    """:attr:`chips` in milli big blinds per hand."""


def exact_results(game: Game, players: Sequence[Player],
                  pairs: Sequence[tuple[str, str]]) -> list[ExactResult]:
    """The exact result of every pair (names of ``players``)."""
    arena = ExactArena(game)
    by_name = {p.name: p for p in players}
    big = game.big_blind or 1
    out = []
    for a, b in pairs:
        mean, v0, v1 = arena.value(by_name[a], by_name[b])
        out.append(ExactResult(a, b, mean, (v0, v1), 1000.0 * mean / big))
    return out
