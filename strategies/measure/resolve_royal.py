"""The re-solving lab in Royal no-limit hold'em: the agent that re-solves (:mod:`agent.resolve`,
as ``acpc-agent --resolve`` plays Royal: its preflop over suit classes of flops, its flop)
and the same blueprint translating, best-responded exactly by boards
(:mod:`strategies.measure.translation.royal_br`).

Royal's 16 M ordered deals are too many for the enumerated games of
:mod:`strategies.measure.resolve_lab`, so the same measurement is made on the public tree:

**The real games.** Per seat ``p`` of the agent, :func:`real_tree` is the real betting tree
where the agent's nodes offer fold, call, every pot fraction of the blueprint's betting
abstraction realised in chips and the all-in (every action the re-solving or translating
agent can take: :func:`agent.resolve.tree.stated_fractions`, realised as
:func:`agent.abstraction.convention.realise_raise_to` realises them), and the responder's
the setting's (:func:`strategies.measure.resolve_lab.limited_actions`; ``every-chip``:
every whole chip; with ``first_round``, the responder keeps to the blueprint's sizes
before that round). Settings are :class:`strategies.measure.resolve_lab.Setting`.

**The agents.** The translating blueprint is the Royal tables' agent
(:func:`strategies.measure.translation.royal_br.seat_model` on that tree: the decision
model expanded, translation draws private). The re-solving agent is assembled as a table
over the tree with Royal's lossless cards (:func:`resolving_table`): the preflop of the
tree is walked with one :class:`agent.resolve.HandResolver` (copied where the history
branches), whose :meth:`~agent.resolve.HandResolver.decide` plays the blueprint's plan or
re-solves the whole game (one flop per suit class: an opponent action off the plan) exactly
where the live agent would; at every public state that starts the flop, for every board of
a suit-isomorphism class (one board per class: the re-solver and the lossless buckets are
suit-symmetric, so the other boards of a class are the same rows), the flop subtree is
walked on with a copy of that state (the flop re-solved from the preflop re-solve, nested,
or from the real history); every decision's strategy for every hand fills the rows of the
hands' lossless buckets.

**The best response** to either agent in the other seat is
:func:`strategies.measure.translation.royal_br.best_response_value`, with the responder
limited to the tree's actions. Rows report the average over both seats ``(br0 + br1) / 2``
(the exploitability: no game value needed); per seat, the best responder's winnings.

Imports numpy, :mod:`agent` and :mod:`strategies`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import AbstractAction, BettingAbstraction, BettingTree
from agent.abstraction.buckets import CardAbstraction
from agent.abstraction.translation import MappingFn, get_mapping
from agent.acpc.betting import BettingState
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game
from agent.resolve import Decision, HandResolver, ResolveConfig, Resolver
from agent.resolve.tree import stated_fractions
from agent.strategy.fileformat import Strategy, table_layout
from agent.strategy.purification import parse_purification
from strategies.measure.resolve_lab import (
    AssemblyStats,
    Row,
    Setting,
    depth_extra,
    limited_actions,
    resolve_key,
)
from strategies.measure.translation import royal_br as rb
from strategies.measure.translation.full_br import (
    RealValue,
    build_full_tree,
    full_actions,
    real_child,
)

F64 = npt.NDArray[np.float64]
ProgressFn = Callable[[str], None]

NO_VALUE = RealValue((0.0, 0.0), math.nan, 0, "none")
"""The rows' value: not computed (the average over both seats needs none)."""


def _quiet(_: str) -> None:
    pass


def real_tree(game: Game, agent_fractions: Sequence[float], setting: Setting,
              seat: int, first_round: int = 0) -> BettingTree:
    """The real tree with the agent in ``seat`` limited to ``agent_fractions`` (fold, call,
    those realised, all-in) and the responder to the setting's actions (module docstring)
    from ``first_round`` on (before it, to ``agent_fractions`` as well)."""
    agent = limited_actions(agent_fractions, None)
    responder = (full_actions if setting.fractions is None
                 else limited_actions(setting.fractions, None))

    def actions(state: BettingState) -> tuple[AbstractAction, ...]:
        if state.player == seat or state.round < first_round:
            return agent(state)
        return responder(state)

    label = BettingAbstraction(f"{setting.name}-seat{seat}", ((),))
    return build_full_tree(game, actions=actions, label=label)


def _board_buckets(cards: CardAbstraction, hands: Sequence[Sequence[int]], round_: int,
                   board: tuple[int, ...]) -> npt.NDArray[np.int64]:
    used = set(board)
    return np.array([cards.bucket(round_, hole, board) if used.isdisjoint(hole) else -1
                     for hole in hands], dtype=np.int64)


def resolving_table(tree: BettingTree, seat: int, resolver: Resolver, cards: CardAbstraction,
                    deals: rb.Deals, progress: ProgressFn = _quiet
                    ) -> tuple[F64, AssemblyStats]:
    """The re-solving agent in ``seat`` as a table over ``tree`` (Royal's layout with
    ``cards``, lossless), and what assembling it cost (module docstring).

    ``stats.total_exploitability`` weighs each re-solve's accuracy estimate by its board's
    probability (its class's boards): chips per hand of the game.

    Raises:
        UsageError: if the resolver re-solves more than the last round, or the agent plays
            an action the tree lacks.
    """
    game = tree.game
    if not resolver.last_round_only or game.num_rounds != 2:
        raise UsageError("expected a two-round game re-solved on its last round only, "
                         "or on it and its first round over suit classes (Royal)")
    start = time.perf_counter()
    layout = table_layout(tree, tuple(int(b) for b in cards.buckets))
    table = np.zeros(layout.total)
    for node in tree.nodes:  # uniform rows where the agent never arrives
        if not node.is_terminal and node.player == seat:
            k = len(node.children)
            table[int(layout.offsets[node.id]):
                  int(layout.offsets[node.id]) + int(layout.rows[node.id]) * k] = 1.0 / k
    stats = AssemblyStats()
    hands = resolver.hands.cards
    pre = _board_buckets(cards, hands, 0, ())
    nodes = tree.nodes
    solves_before = resolver.solves
    last = [time.perf_counter()]
    per_board = 1.0 / deals.num_boards

    def fill(n: int, decision: Decision, buckets: npt.NDArray[np.int64]) -> list[int]:
        """The decision's rows into the table at node ``n``; the children it plays."""
        node = nodes[n]
        kids = node.children
        k = len(kids)
        off = int(layout.offsets[n])
        index = [list(kids).index(real_child(node, a)) for a in decision.actions]
        for h, b in enumerate(buckets):
            if b >= 0:
                row = np.zeros(k)
                row[index] = decision.probs[h]
                table[off + b * k: off + (b + 1) * k] = row
        used = decision.probs.max(axis=0) > 0
        now = time.perf_counter()
        if now - last[0] > 10:
            last[0] = now
            progress(f"  seat {seat}: {stats.decisions} decisions, "
                     f"{resolver.solves - solves_before} re-solves, {now - start:.0f} s")
        return [kids[i] for i, u in zip(index, used, strict=True) if u]

    flops = [(board.cards, _board_buckets(cards, hands, 1, board.cards),
              len(board.images) * per_board) for board in deals.boards]

    def preflop(n: int, hr: HandResolver) -> None:
        node = nodes[n]
        if node.is_terminal:
            return
        if node.round > 0:  # a flop's start: every board (one per suit class)
            for board, buckets, weight in flops:
                visit(n, hr.copy(), board, buckets, weight)
            return
        kids: Sequence[int] = node.children
        if node.player == seat:
            decision = stats.decide(hr, node.state, (), 1.0)
            stats.first_round_solves += decision.stats.source == "resolve"
            kids = fill(n, decision, pre)
        for i, c in enumerate(kids):
            preflop(c, hr if i == len(kids) - 1 else hr.copy())

    def visit(n: int, hr: HandResolver, board: tuple[int, ...], buckets: npt.NDArray[np.int64],
              weight: float) -> None:
        node = nodes[n]
        if node.is_terminal:
            return
        kids: Sequence[int] = node.children
        if node.player == seat:
            kids = fill(n, stats.decide(hr, node.state, board, weight), buckets)
        for i, c in enumerate(kids):
            visit(c, hr if i == len(kids) - 1 else hr.copy(), board, buckets, weight)

    preflop(0, resolver.new_hand(seat))
    stats.solves = resolver.solves - solves_before
    stats.seconds = time.perf_counter() - start
    return table, stats


@dataclass
class RoyalResolveLab:
    """One blueprint in one setting of Royal: the real trees of both seats."""

    strategy: Strategy
    blueprint: str
    setting: Setting
    trees: tuple[BettingTree, BettingTree]
    cards: CardAbstraction
    deals: rb.Deals
    tables: dict[tuple[str, str, str], tuple[F64, F64]] = field(default_factory=dict)

    @classmethod
    def build(cls, strategy: Strategy, blueprint: str, setting: Setting,
              first_round: int = 0) -> RoyalResolveLab:
        """The lab of ``strategy`` (lossless cards) in ``setting`` (the responder limited to
        the blueprint's own sizes before ``first_round``: :func:`real_tree`).

        Raises:
            UsageError: for a game :mod:`strategies.measure.translation.royal_br` does not
                handle or a blueprint without lossless cards.
        """
        game = strategy.game
        rb.check_game(game)
        if strategy.cards.get("kind") != "lossless":
            raise UsageError(f"expected a blueprint with lossless cards, got "
                             f"{strategy.cards.get('kind')!r}")
        own = stated_fractions(strategy.betting)
        trees = (real_tree(game, own, setting, 0, first_round),
                 real_tree(game, own, setting, 1, first_round))
        return cls(strategy, blueprint, setting, trees, rb.lossless_cards(game),
                   rb.build_deals(game, True))

    def translate(self, mapping: str, purification: str) -> Row:
        """The translating blueprint with ``mapping`` and ``purification``."""
        agent = rb.translated_agent(self.strategy, parse_purification(purification),
                                    cards=self.cards)
        fn = get_mapping(mapping)
        brs = (rb.best_response_value(rb.seat_model(agent, 1, real=self.trees[1]), fn),
               rb.best_response_value(rb.seat_model(agent, 0, real=self.trees[0]), fn))
        return Row(self.setting.name, self.setting.label, self.blueprint, "translate",
                   mapping, purification, "", brs, NO_VALUE)

    def resolve(self, config: ResolveConfig, mapping: str = "rand-pshar",
                purification: str = "none", progress: ProgressFn = _quiet,
                resolver: Resolver | None = None) -> Row:
        """The re-solving agent under ``config`` (reading the blueprint with ``mapping``
        and ``purification``); ``resolver``: one to use instead (same blueprint)."""
        if resolver is None:
            resolver = Resolver(self.strategy, config, mapping=mapping,
                                purification=purification, cards=self.cards)
        t0, s0 = resolving_table(self.trees[0], 0, resolver, self.cards, self.deals, progress)
        t1, s1 = resolving_table(self.trees[1], 1, resolver, self.cards, self.deals, progress)
        self.tables[resolve_key(config, purification)] = (t0, t1)
        fn = get_mapping(mapping)
        brs = (self.table_br(t1, 1, fn), self.table_br(t0, 0, fn))
        extra = {"mode": config.mode, "iterations": config.iterations, **depth_extra(config),
                 "decisions": s0.decisions + s1.decisions, "resolves": s0.solves + s1.solves,
                 "preflop_resolves": s0.first_round_solves + s1.first_round_solves,
                 "assembly_seconds": s0.seconds + s1.seconds,
                 "mean_resolve_ms": 1000 * (s0.solve_seconds + s1.solve_seconds) /
                 max(s0.solves + s1.solves, 1),
                 "max_relative_subgame_exploitability": max(
                     s0.max_relative_exploitability, s1.max_relative_exploitability),
                 "total_subgame_exploitability": s0.total_exploitability +
                 s1.total_exploitability,
                 "total_subgame_exploitability_seat0": s0.total_exploitability,
                 "total_subgame_exploitability_seat1": s1.total_exploitability}
        return Row(self.setting.name, self.setting.label, self.blueprint, "resolve", mapping,
                   purification, config.gadget, brs, NO_VALUE, extra)

    def table_br(self, table: F64, seat: int, mapping: MappingFn) -> float:
        """What a best responder wins against the agent in ``seat`` playing ``table`` (the
        tree has no translation: ``mapping`` is never asked)."""
        agent = rb.table_agent(self.trees[seat], self.cards, table, name="assembled")
        return rb.best_response_value(rb.abstract_seat_model(agent, seat), mapping)
