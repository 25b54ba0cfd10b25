"""The blueprint as the translating agent plays it, on a re-solver's public tree.

:func:`behaviour` walks a :class:`~agent.resolve.tree.PublicTree` rooted at the start of
the hand with the decision model of :mod:`agent.decision` (the functions the live policy
and every evaluator call: :func:`~agent.decision.standing`,
:func:`~agent.decision.own_moves`, :func:`~agent.decision.read_on_tree`,
:func:`~agent.decision.after_fallback`, :func:`~agent.decision.fallback_action`): along
every public history it keeps, per abstract state the agent may be in (translation draws
split it), the agent's reach for every private hand; at the agent's nodes the blueprint's
row for the hand's bucket (purified) moves that reach to the children its actions realise.
The result is the translating agent's behaviour strategy over the tree's real actions, per
hand: what the re-solver takes as the blueprint's ranges (Bayes over every hand through the
card abstraction), as the strategy the opponent's counterfactual values are computed
against, and as both players' play below a depth limit's leaves (the walk passes a leaf
like a chance node: every continuation alike; :mod:`agent.resolve.depth`).

Imports numpy, :mod:`agent.acpc`, :mod:`agent.abstraction`, :mod:`agent.strategy`,
:mod:`agent.decision` and :mod:`agent.resolve.tree`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import BettingTree
from agent.abstraction.buckets import CardAbstraction
from agent.abstraction.convention import realise_raise_to
from agent.abstraction.holdem_board import board_buckets
from agent.abstraction.holdem_buckets import HoldemCards
from agent.abstraction.holdem_pa import PotentialAwareCards
from agent.abstraction.translation import MappingFn
from agent.acpc.betting import Action, BettingState
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game
from agent.decision import (
    NodeKinds,
    after_fallback,
    fallback_action,
    own_moves,
    read_on_tree,
    standing,
)
from agent.resolve.tree import CHANCE, DECISION, PublicTree
from agent.strategy.fileformat import Strategy
from agent.strategy.kernels import purify_rows
from agent.strategy.purification import Purification

F64 = npt.NDArray[np.float64]
BucketCache = dict[tuple[int, tuple[int, ...]], npt.NDArray[np.int64]]
"""Every hand's bucket per (round, board): shared by the walks of one resolver."""
MAX_BUCKET_CACHE = 256


class _Reader:
    """The translating agent in ``seat`` (the decision model's rules, cached per abstract
    node, bucket and board): one step of its abstract histories over a real decision."""

    def __init__(self, blueprint: Strategy, cards: CardAbstraction, seat: int,
                 mapping: MappingFn, purification: Purification, sizes_in: str,
                 hands: Sequence[Sequence[int]], buckets: BucketCache | None = None) -> None:
        self.atree = blueprint.tree
        self.blueprint = blueprint
        self.cards = cards
        self.seat = seat
        self.mapping = mapping
        self.purification = purification
        self.sizes_in = sizes_in
        self.hands = hands
        self.buckets: BucketCache = {} if buckets is None else buckets
        self.holes: npt.NDArray[np.int64] | None = None
        self.tables: dict[int, F64] = {}
        self.kinds_of: dict[int, NodeKinds] = {}

    def bucket_of(self, round_: int, board: tuple[int, ...]) -> npt.NDArray[np.int64]:
        """Every hand's bucket (-1 where the board blocks it); hold'em's all at once
        (:func:`agent.abstraction.holdem_board.board_buckets`)."""
        got = self.buckets.get((round_, board))
        if got is None:
            if isinstance(self.cards, (HoldemCards, PotentialAwareCards)):
                # every hole at once, the same buckets (agent.abstraction.holdem_board)
                if self.holes is None:
                    self.holes = np.array(self.hands, np.int64)
                got = board_buckets(self.cards, round_, self.holes, board)
            else:
                used = set(board)
                got = np.array([self.cards.bucket(round_, hole, board)
                                if used.isdisjoint(hole) else -1 for hole in self.hands],
                               np.int64)
            if len(self.buckets) >= MAX_BUCKET_CACHE:
                self.buckets.clear()
            self.buckets[(round_, board)] = got
        return got

    def table(self, node_id: int, round_: int) -> F64:
        """``[bucket, k]``: the node's purified rows for every bucket of ``round_`` (the
        agent's rule, :func:`agent.strategy.kernels.purify_rows`), and a last row of zeros
        (indexed by the bucket -1 of a blocked hand)."""
        got = self.tables.get(node_id)
        if got is None:
            n = int(self.cards.buckets[round_])
            rows = self.blueprint.rows(node_id)
            got = np.zeros((n + 1, rows.shape[1]))
            if n:
                got[:n] = purify_rows(rows[:n], self.purification, renormalise=False)
            self.tables[node_id] = got
        return got

    def step(self, states: Mapping[int, F64], real: BettingState, board: tuple[int, ...],
             actions: Sequence[Action], given: F64 | None = None, strict: bool = True
             ) -> tuple[list[dict[int, F64]], F64]:
        """The abstract histories after each of ``actions`` taken at ``real`` (per
        abstract state, the reach of every hand), and ``[hand, k]``: the seat's
        unnormalised probability of each action (zeros at another player's node).

        ``given``: the seat's own rows here (what it really played) instead of the
        blueprint's. ``strict``: an action the blueprint realises that is not among
        ``actions`` raises (a subgame tree must hold them); otherwise it is dropped (the
        real path, where only the real action is followed).

        Raises:
            AbstractionError: (``strict``) a realised action missing from ``actions``.
        """
        n_hands = len(self.hands)
        out: list[dict[int, F64]] = [dict() for _ in actions]
        block = np.zeros((n_hands, len(actions)))
        index = {a: i for i, a in enumerate(actions)}

        def add(i: int, astate: int, weight: F64) -> None:
            cur = out[i].get(astate)
            out[i][astate] = weight.copy() if cur is None else cur + weight

        actor = real.player
        if actor == self.seat and given is not None:
            # the agent played these rows (not the blueprint): its abstract history reads
            # its own real action as it reads an opponent's (agent.decision)
            block[:] = given
            for astate, w in states.items():
                for i, action in enumerate(actions):
                    for f, nxt in _readings(self.atree, astate, real, action, self.mapping,
                                            self.sizes_in, self.kinds_of):
                        add(i, nxt, w * given[:, i] * f)
            return out, block
        for astate, w in states.items():
            why = standing(self.atree, astate, real)
            if why is not None:
                keep = after_fallback(astate, why)
                if actor == self.seat:
                    i = index.get(fallback_action(real, why), -1)
                    if i < 0:
                        if strict:
                            raise AbstractionError(f"expected the fallback action at "
                                                   f"{real.betting!r} in the subgame")
                        continue
                    add(i, keep, w)
                    block[:, i] += w
                else:
                    for i in range(len(actions)):
                        add(i, keep, w)
                continue
            anode = self.atree.nodes[astate]
            if actor == self.seat:
                bk = self.bucket_of(real.round, board)
                for k, (action, achild) in enumerate(own_moves(anode, real)):
                    i = index.get(action, -1)
                    if i < 0:
                        if strict:
                            raise AbstractionError(f"expected the blueprint's action {action} "
                                                   f"at {real.betting!r} to be in the "
                                                   f"subgame")
                        continue
                    probs = self.table(anode.id, real.round)[bk, k]
                    add(i, achild, w * probs)
                    block[:, i] += w * probs
                continue
            for i, action in enumerate(actions):
                for f, nxt in _readings(self.atree, astate, real, action, self.mapping,
                                        self.sizes_in, self.kinds_of):
                    add(i, nxt, w * f)
        return out, block


def behaviour(tree: PublicTree, blueprint: Strategy, cards: CardAbstraction, seat: int,
              mapping: MappingFn, purification: Purification, sizes_in: str,
              overrides: Mapping[int, F64] | None = None,
              start: Mapping[int, F64] | None = None,
              buckets: BucketCache | None = None) -> F64:
    """The translating agent in ``seat``: ``[hand, edge]`` probabilities at its nodes
    (uniform where it never arrives with a hand; other players' nodes hold 0).

    ``buckets``: a cache shared between walks (:data:`BucketCache`).
    ``overrides``: decision nodes of ``seat`` whose behaviour is given (``[hand, k]``
    rows: what the agent really played there); the walk follows them instead of the
    blueprint. ``start``: the agent's abstract histories at the tree's root (per abstract
    state, every hand's reach: :func:`path_states`); without it the tree must start at
    the beginning of the hand.

    Raises:
        AbstractionError: if a realised action is not a child of the tree (the tree was not
            built with the blueprint's fractions).
    """
    if start is None and (tree.states[0].round != 0 or tree.states[0].betting):
        raise AbstractionError("expected a public tree rooted at the start of the hand")
    reader = _Reader(blueprint, cards, seat, mapping, purification, sizes_in,
                     tree.hands.cards, buckets)
    n_hands = len(tree.hands)
    out = np.zeros((n_hands, tree.num_edges))
    held: list[dict[int, F64]] = [dict() for _ in range(tree.num_nodes)]
    held[0] = ({0: np.ones(n_hands)} if start is None else
               {k: np.asarray(v, np.float64).copy() for k, v in start.items()})
    overrides = overrides or {}

    for n in range(tree.num_nodes):
        states = held[n]
        if not states:
            continue
        kind = int(tree.kind[n])
        s = int(tree.child_start[n])
        m = int(tree.num_children[n])
        if kind == CHANCE or tree.leaf[n]:
            # a depth limit's leaf: the first continuation (the others are its copies)
            for c in tree.children[s: s + (1 if tree.leaf[n] else m)]:
                for astate, w in states.items():
                    cur = held[int(c)].get(astate)
                    held[int(c)][astate] = w.copy() if cur is None else cur + w
            continue
        if kind != DECISION:
            continue
        real = tree.states[n]
        given = overrides.get(n) if real.player == seat else None
        after, block = reader.step(states, real, tree.boards[int(tree.board_of[n])],
                                   tree.edge_actions(n), given)
        for i, got in enumerate(after):
            c = int(tree.children[s + i])
            for astate, w in got.items():
                cur = held[c].get(astate)
                held[c][astate] = w if cur is None else cur + w
        if real.player == seat:
            if given is not None:
                out[:, s: s + m] = given
                continue
            total = block.sum(axis=1, keepdims=True)
            np.divide(block, total, out=block, where=total > 0)
            block[total[:, 0] <= 0] = 1.0 / m
            out[:, s: s + m] = block
    return out[:, tree.twin] if tree.depth_limited else out


def path_states(game: Game, blueprint: Strategy, cards: CardAbstraction, seat: int,
                mapping: MappingFn, purification: Purification, sizes_in: str,
                hands: Sequence[Sequence[int]], actions: Sequence[Action],
                board: Sequence[int], buckets: BucketCache | None = None
                ) -> tuple[dict[int, F64], bool]:
    """The translating agent in ``seat`` along one real history: its abstract histories
    after ``actions`` (both players', from the start of the hand; ``board``: the board
    cards dealt by then), per abstract state the reach of every hand in ``hands`` (Bayes
    through the card abstraction: the product of the blueprint's probabilities of the
    seat's real actions, split by the mapping's draws over the other's). Only the real
    path is walked (a hold'em river root, whose earlier boards cannot be enumerated).
    The flag: some action of the *other* player was off the seat's abstraction (a
    translated bet that is not one of its sizes, or read under a fallback).

    Raises:
        AbstractionError: for an illegal action.
    """
    reader = _Reader(blueprint, cards, seat, mapping, purification, sizes_in, hands, buckets)
    states: dict[int, F64] = {0: np.ones(len(hands))}
    state = BettingState.initial(game)
    dealt = tuple(int(c) for c in board)
    off = False
    for action in actions:
        if state.finished:
            raise AbstractionError(f"expected a hand in progress at {state.betting!r}")
        try:
            state.check_action(action)
        except ValueError as exc:
            raise AbstractionError(f"expected a legal action at {state.betting!r}: "
                                   f"{exc}") from None
        here = dealt[: game.board_cards_through(state.round)]
        if state.player != seat and not off:
            off = any(_off_tree(reader, astate, state, action) for astate in states)
        after, _ = reader.step(states, state, here, [action], strict=False)
        states = {k: v for k, v in after[0].items() if v.any()}
        state = state.apply(action)
    return states, off


def _off_tree(reader: _Reader, astate: int, real: BettingState, action: Action) -> bool:
    """True when ``action`` is not exactly one of the abstraction's actions at ``astate``."""
    why = standing(reader.atree, astate, real)
    if why is not None:
        return True
    anode = reader.atree.nodes[astate]
    kinds = reader.kinds_of.get(astate)
    if kinds is None:
        kinds = reader.kinds_of[astate] = NodeKinds.of(anode)
    reading = read_on_tree(anode, kinds, real, action, reader.sizes_in)
    if reading.fallback is not None:
        return True
    if reading.bet is None or reading.bet.all_in:
        return False
    return not (reading.bet.certain and realise_raise_to(real, anode.actions[
        reading.bet.options[reading.bet.low]].fraction) == action.raise_to)


def _readings(atree: BettingTree, astate: int, real: BettingState, action: Action,
              mapping: MappingFn, sizes_in: str, kinds_of: dict[int, NodeKinds]
              ) -> list[tuple[float, int]]:
    """How the agent with its abstract history at ``astate`` reads ``action``: the next
    abstract states with their probabilities (:func:`agent.decision.read_action`)."""
    why = standing(atree, astate, real)
    if why is not None:
        return [(1.0, after_fallback(astate, why))]
    anode = atree.nodes[astate]
    kinds = kinds_of.get(astate)
    if kinds is None:
        kinds = kinds_of[astate] = NodeKinds.of(anode)
    reading = read_on_tree(anode, kinds, real, action, sizes_in)
    return [(f, nxt) for f, nxt in reading.outcomes(mapping) if f > 0.0]
