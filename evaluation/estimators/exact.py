"""Exact results of agent variants in small games (``acpc-match --exact``).

In a game whose real betting tree and deals enumerate (Kuhn and Leduc, limit or no-limit,
any number of players), every variant ``acpc-match`` can run in process has a *behaviour*
in the real game: a table over (real node, own cards) that gives the probability of each
real action, its own randomness integrated out:

* a strategy file in a no-limit game: the abstract strategy played through its mapping,
  purification and size convention, its translation draws private
  (:func:`strategies.measure.translation.full_br.induced_table`: :mod:`agent.decision` expanded);
  in a limit game the abstract tree is the real one (nothing to translate): the purified
  table, each real (lossless) bucket reading the row of its abstract bucket;
* ``builtin:random``: fold 6 / call 47 / raise 47 renormalised over the legal kinds, a
  raise-to uniform over the legal bounds (:class:`agent.builtin.RandomPolicy`);
  ``builtin:call``; ``builtin:fold`` (fold facing a bet, else check); ``builtin:minraise``
  (the smallest legal raise, else call).

The value of each variant of a group is then exact: the mean over the ``n`` rotations of
the group around the table (what a duplicate run plays: its seat rotations, and the dealer's
rotation of positions every hand, keep the players' cyclic order) of
:func:`strategies.measure.best_response.expected_values` of the table made of each variant's rows
at its position, every deal enumerated. This is what ``acpc-match`` without ``--exact``
estimates by sampling, with no interval.

Imports numpy, :mod:`agent` and :mod:`strategies`; never imported by :mod:`agent`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import PRESETS
from agent.abstraction.buckets import LosslessCards
from agent.abstraction.convention import DEFAULT_SIZE_CONVENTION, parse_size_convention
from agent.abstraction.translation import choose_mapping
from agent.acpc.betting import ActionKind
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game
from agent.builtin import RandomPolicy
from agent.strategy.fileformat import load_strategy
from agent.strategy.purification import parse_purification
from strategies.games.abstract import (
    AbstractGame,
    build_abstract_game,
    check_enumerable,
    player_rows,
)
from strategies.measure.best_response import best_response, expected_values, strategy_table
from strategies.measure.best_response import purify_table as purify_layout
from strategies.measure.translation.full_br import (
    AgentLab,
    agent_game,
    build_full_game,
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
        check_enumerable(game)
        self.game = game
        # a limit game's abstract tree is the whole game (any preset: no sizes to choose)
        self.real = build_full_game(game) if game.is_nolimit else build_abstract_game(
            game, PRESETS["fcpa"], LosslessCards(game))
        self._labs: dict[str, AgentLab] = {}
        self._tables: dict[tuple[str, int], F64] = {}

    def behaviour(self, player: Player, seat: int) -> F64:
        """``player``'s behaviour table in ``seat`` (built once)."""
        key = (player.name, seat)
        if key in self._tables:
            return self._tables[key]
        if player.strategy.startswith("builtin:"):
            table = _builtin_table(self.real, player.strategy)
        elif not self.game.is_nolimit:
            table = self._limit_behaviour(player)
        else:
            lab = self._labs.get(player.strategy)
            if lab is None:
                strategy = load_strategy(Path(player.strategy), self.game)
                lab = AgentLab(strategy)
                self._labs[player.strategy] = lab
            strategy = lab.strategy
            table = lab.behaviour(
                seat, choose_mapping(player.mapping, strategy.default_mapping,
                                     strategy.source)[1],
                parse_purification(player.purify or strategy.default_purification),
                parse_size_convention(player.sizes or DEFAULT_SIZE_CONVENTION))
        self._tables[key] = table
        return table

    def _limit_behaviour(self, player: Player) -> F64:
        """A limit-game file: its purified table read through its own card abstraction."""
        strategy = load_strategy(Path(player.strategy), self.game)
        if player.mapping is not None or player.sizes is not None:
            raise UsageError(f"expected no mapping or size convention for a limit game's "
                             f"file (nothing is translated), got variant {player.name!r}")
        agent = agent_game(strategy)
        if agent.num_nodes != self.real.num_nodes:
            raise UsageError(f"expected the file of variant {player.name!r} to cover the "
                             f"whole limit game, got {agent.num_nodes} of "
                             f"{self.real.num_nodes} betting nodes")
        played = purify_layout(agent.layout, strategy_table(agent, strategy),
                               parse_purification(player.purify
                                                  or strategy.default_purification))
        real = self.real
        out = np.zeros(real.table_size)
        for node in np.flatnonzero(real.offset >= 0):
            k = int(real.num_actions[node])
            r = int(real.round[node])
            p = int(real.player[node])
            rows = np.zeros(int(real.rows[node]), dtype=np.int64)  # real -> abstract bucket
            rows[real.deal_bucket[:, p, r]] = agent.deal_bucket[:, p, r]
            block = played[int(agent.offset[node]) :
                           int(agent.offset[node]) + int(agent.rows[node]) * k]
            out[int(real.offset[node]) : int(real.offset[node]) + len(rows) * k] = \
                block.reshape(-1, k)[rows].ravel()
        return out

    def position_values(self, seating: Sequence[Player]) -> tuple[float, ...]:
        """What each position wins per hand with ``seating[p]`` at position ``p`` (chips)."""
        real = self.real
        table = np.zeros(real.table_size)
        for p, player in enumerate(seating):
            table = np.where(player_rows(real, p), self.behaviour(player, p), table)
        return tuple(float(v) for v in expected_values(real, table))

    def exploitability(self, player: Player) -> float:
        """``player``'s exploitability in the real game, chips per hand (heads-up): the mean
        over both seats of what a best response wins against it,
        ``(br0 + br1) / 2`` (:func:`strategies.measure.best_response.best_response` against
        its behaviour in the other seat; the game's value cancels over the seats)."""
        if self.game.num_players != 2:
            raise UsageError(f"expected a heads-up game for an exploitability, got "
                             f"{self.game.num_players} players")
        real = self.real
        table = np.where(player_rows(real, 0), self.behaviour(player, 0),
                         self.behaviour(player, 1))
        return sum(best_response(real, table, q).value for q in (0, 1)) / 2

    def group_values(self, group: Sequence[Player]) -> list[tuple[float, ...]]:
        """Per variant of ``group``: its value at each of the ``n`` rotations (rotation
        ``r`` seats ``group[(p + r) % n]`` at position ``p``), in the group's order."""
        n = len(group)
        if n != self.game.num_players:
            raise UsageError(f"expected groups of {self.game.num_players} variants, got {n}")
        per: list[list[float]] = [[] for _ in group]
        for r in range(n):
            seating = [group[(p + r) % n] for p in range(n)]
            values = self.position_values(seating)
            for p in range(n):
                per[(p + r) % n].append(values[p])
        return [tuple(v) for v in per]

    def value(self, a: Player, b: Player) -> tuple[float, float, float]:
        """``(mean, a in seat 0, a in seat 1)``: what ``a`` wins per hand against ``b``
        (two players)."""
        v0, v1 = self.group_values([a, b])[0]
        return (v0 + v1) / 2, v0, v1


@dataclass(frozen=True)
class ExactResult:
    """One variant's exact result in one group."""

    group: tuple[str, ...]
    variant: str
    chips: float
    """What it wins per hand, averaged over the group's rotations."""
    positions: tuple[float, ...]
    """Per rotation ``r``: its value when the group sits rotated by ``r`` (heads-up: the
    first variant in position 0, then in position 1)."""
    mbb: float
    """:attr:`chips` in milli big blinds per hand (the largest blind, else 1 chip)."""


def exact_results(game: Game, players: Sequence[Player],
                  groups: Sequence[Sequence[str]]) -> list[ExactResult]:
    """The exact result of every variant of every group (names of ``players``)."""
    arena = ExactArena(game)
    by_name = {p.name: p for p in players}
    big = game.big_blind or 1
    out = []
    for group in groups:
        values = arena.group_values([by_name[n] for n in group])
        for name, per in zip(group, values, strict=True):
            mean = sum(per) / len(per)
            out.append(ExactResult(tuple(group), name, mean, per, 1000.0 * mean / big))
    return out
