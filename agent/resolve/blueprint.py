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
card abstraction) and as the strategy the opponent's counterfactual values are computed
against.

Imports numpy, :mod:`agent.acpc`, :mod:`agent.abstraction`, :mod:`agent.strategy`,
:mod:`agent.decision` and :mod:`agent.resolve.tree`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import BettingTree
from agent.abstraction.buckets import CardAbstraction
from agent.abstraction.translation import MappingFn
from agent.acpc.betting import Action, BettingState
from agent.acpc.errors import AbstractionError
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
from agent.strategy.purification import Purification

F64 = npt.NDArray[np.float64]


def behaviour(tree: PublicTree, blueprint: Strategy, cards: CardAbstraction, seat: int,
              mapping: MappingFn, purification: Purification, sizes_in: str,
              overrides: Mapping[int, F64] | None = None) -> F64:
    """The translating agent in ``seat``: ``[hand, edge]`` probabilities at its nodes
    (uniform where it never arrives with a hand; other players' nodes hold 0).

    ``overrides``: decision nodes of ``seat`` whose behaviour is given (``[hand, k]``
    rows: what the agent really played there); the walk follows them instead of the
    blueprint. ``tree`` must start at the beginning of the hand.

    Raises:
        AbstractionError: if a realised action is not a child of the tree (the tree was not
            built with the blueprint's fractions).
    """
    if tree.states[0].round != 0 or tree.states[0].betting:
        raise AbstractionError("expected a public tree rooted at the start of the hand")
    atree = blueprint.tree
    n_hands = len(tree.hands)
    out = np.zeros((n_hands, tree.num_edges))
    held: list[dict[int, F64]] = [dict() for _ in range(tree.num_nodes)]
    held[0][0] = np.ones(n_hands)
    buckets: dict[tuple[int, int], npt.NDArray[np.int64]] = {}
    rows: dict[tuple[int, int], list[float]] = {}
    kinds_of: dict[int, NodeKinds] = {}
    overrides = overrides or {}

    def bucket_of(n: int) -> npt.NDArray[np.int64]:
        r = tree.states[n].round
        b = int(tree.board_of[n])
        got = buckets.get((r, b))
        if got is None:
            board = tree.boards[b]
            got = np.array([cards.bucket(r, hole, board) if tree.valid[b, i] else -1
                            for i, hole in enumerate(tree.hands.cards)], np.int64)
            buckets[(r, b)] = got
        return got

    def row(node_id: int, bucket: int) -> list[float]:
        got = rows.get((node_id, bucket))
        if got is None:
            got = purification.apply([float(p) for p in blueprint.row(node_id, bucket)])
            rows[(node_id, bucket)] = got
        return got

    def add(child: int, astate: int, weight: F64) -> None:
        cur = held[child].get(astate)
        held[child][astate] = weight.copy() if cur is None else cur + weight

    for n in range(tree.num_nodes):
        states = held[n]
        if not states:
            continue
        kind = int(tree.kind[n])
        s = int(tree.child_start[n])
        m = int(tree.num_children[n])
        if kind == CHANCE:
            for c in tree.children[s: s + m]:
                for astate, w in states.items():
                    add(int(c), astate, w)
            continue
        if kind != DECISION:
            continue
        real = tree.states[n]
        actor = real.player
        if actor == seat and n in overrides:
            # the agent played these rows (not the blueprint): its abstract history reads
            # its own real action as it reads an opponent's (agent.decision)
            given = overrides[n]
            out[:, s: s + m] = given
            for astate, w in states.items():
                for i, action in enumerate(tree.edge_actions(n)):
                    for f, nxt in _readings(atree, astate, real, action, mapping, sizes_in,
                                            kinds_of):
                        add(int(tree.children[s + i]), nxt, w * given[:, i] * f)
            continue
        for astate, w in states.items():
            why = standing(atree, astate, real)
            if why is not None:
                keep = after_fallback(astate, why)
                if actor == seat:
                    c = tree.child_for(n, fallback_action(real, why))
                    add(c, keep, w)
                    out[:, s + _edge(tree, n, c)] += w
                else:
                    for c in tree.children[s: s + m]:
                        add(int(c), keep, w)
                continue
            anode = atree.nodes[astate]
            if actor == seat:
                bk = bucket_of(n)
                moves = own_moves(anode, real)
                for i, (action, achild) in enumerate(moves):
                    c = tree.child_for(n, action)
                    if c < 0:
                        raise AbstractionError(f"expected the blueprint's action {action} at "
                                               f"{real.betting!r} to be in the subgame")
                    probs = np.array([row(anode.id, int(b))[i] if b >= 0 else 0.0
                                      for b in bk])
                    add(c, achild, w * probs)
                    out[:, s + _edge(tree, n, c)] += w * probs
                continue
            for i, action in enumerate(tree.edge_actions(n)):
                for f, nxt in _readings(atree, astate, real, action, mapping, sizes_in,
                                        kinds_of):
                    add(int(tree.children[s + i]), nxt, w * f)
        if actor == seat and n not in overrides:
            block = out[:, s: s + m]
            total = block.sum(axis=1, keepdims=True)
            np.divide(block, total, out=block, where=total > 0)
            block[total[:, 0] <= 0] = 1.0 / m
    return out


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


def _edge(tree: PublicTree, n: int, child: int) -> int:
    s = int(tree.child_start[n])
    for i in range(int(tree.num_children[n])):
        if int(tree.children[s + i]) == child:
            return i
    raise AbstractionError(f"expected node {child} to be a child of node {n}")
