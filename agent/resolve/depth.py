"""Depth-limited subgames: the continuations at the leaves and the blueprint's play in them.

A subgame built with a depth limit (:func:`agent.resolve.tree.build_tree` with ``depth``)
stops at the first node of round ``root.round + depth``: that node is a *leaf*, a decision
of the opponent whose children are copies of the rest of the game, one per continuation
(Brown, Sandholm and Amos 2018, depth-limited solving). In every copy both players' play is
held fixed (frozen rows, the kernels' ``frozen`` nodes): the agent plays its blueprint as
the translating agent plays it (:func:`agent.resolve.blueprint.behaviour`, the same rows
the root's ranges come from), the opponent its blueprint, or a *biased* blueprint: at each
of its decisions the probability of fold (``fold``), of call (``call``) or of every raise
(``raise``) multiplied by :attr:`bias` and the row renormalised (:func:`biased`). Card
chance below the leaf is exact (the copies hold their chance nodes). The opponent chooses
a continuation per hand at the leaf, so the agent must be robust to all of them; with the
blueprint alone (``leaf="blueprint"``) the leaf's values are single-valued, the opponent
being assumed to play the blueprint later (known to be exploitable).

Where the blueprint never reaches a node of a continuation with a hand (the re-solved play
above the leaf is not the blueprint's) the walk has no weight to mix the abstract histories
with: that hand's rows come from a second walk that takes every action of the player's above
the leaves with weight 1 (its abstract histories split by translation only), so every hand
plays its buckets' rows rather than a uniform row (:func:`continuation_rows`).

Imports numpy, :mod:`agent.acpc`, :mod:`agent.strategy` and :mod:`agent.resolve` (tree,
kernels, blueprint).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from agent.abstraction.buckets import CardAbstraction
from agent.abstraction.translation import MappingFn
from agent.acpc.betting import Action, ActionKind
from agent.acpc.errors import UsageError
from agent.resolve import kernels as K
from agent.resolve.blueprint import BucketCache, behaviour
from agent.resolve.tree import DECISION, PublicTree
from agent.strategy.fileformat import Strategy
from agent.strategy.purification import Purification

F64 = npt.NDArray[np.float64]

LEAVES: tuple[str, ...] = ("blueprint", "multi")
"""Leaf kinds: the blueprint's continuation alone, or several (:data:`CONTINUATIONS`)."""
CONTINUATIONS: tuple[str, ...] = ("blueprint", "fold", "call", "raise")
"""The opponent's continuations at a multi-valued leaf: its blueprint and the blueprint
biased towards fold, call or raises."""
DEFAULT_BIAS = 5.0
"""The bias factor of the biased continuations (the published method's)."""
_KINDS = {"fold": ActionKind.FOLD, "call": ActionKind.CALL, "raise": ActionKind.RAISE}


def parse_leaf(name: str) -> str:
    """A leaf kind (:data:`LEAVES`).

    Raises:
        UsageError: for anything else.
    """
    key = str(name).strip().lower()
    if key not in LEAVES:
        raise UsageError(f"expected a leaf kind ({', '.join(LEAVES)}), got {name!r}")
    return key


def check_continuations(names: Sequence[str]) -> tuple[str, ...]:
    """``names`` as a tuple of distinct :data:`CONTINUATIONS`, the blueprint first.

    Raises:
        UsageError: for an empty list, an unknown name, a repeat, or no blueprint first.
    """
    out = tuple(str(x) for x in names) if not isinstance(names, str) else (names,)
    if not out or out[0] != "blueprint" or len(set(out)) != len(out) or \
            any(x not in CONTINUATIONS for x in out):
        raise UsageError(f"expected distinct continuations of {', '.join(CONTINUATIONS)}, "
                         f"the blueprint first, got {names!r}")
    return out


def check_bias(bias: float) -> float:
    """A bias factor: positive and finite.

    Raises:
        UsageError: for anything else.
    """
    if isinstance(bias, bool) or not isinstance(bias, (int, float)) or \
            not (bias > 0 and math.isfinite(bias)):
        raise UsageError(f"expected a positive finite bias factor, got {bias!r}")
    return float(bias)


def biased(tree: PublicTree, rows: F64, label: str, factor: float,
           nodes: npt.NDArray[np.bool_]) -> F64:
    """``rows`` with, at every decision node in ``nodes``, the probability of the edges of
    kind ``label`` (fold, call, raise; ``blueprint``: none) multiplied by ``factor`` and
    each hand's row renormalised (a row the bias cannot change is kept)."""
    out = np.array(rows, dtype=np.float64, copy=True)
    kind = _KINDS.get(label)
    if kind is None:
        return out
    owner = tree.edge_nodes()
    pick = np.array([bool(nodes[owner[e]]) and isinstance(a, Action) and a.kind is kind
                     for e, a in enumerate(tree.actions)], np.bool_)
    if not pick.any():
        return out
    out[:, pick] *= factor
    # every node's row sum, per edge (a node's edges are contiguous, in node order)
    inner = tree.num_children > 0
    sums = np.repeat(np.add.reduceat(out, tree.child_start[inner], axis=1),
                     tree.num_children[inner], axis=1)
    mine = nodes[owner]
    block = out[:, mine]
    total = sums[:, mine]
    out[:, mine] = np.divide(block, total, out=np.zeros_like(block), where=total > 0)
    return out


def continuation_strategy(tree: PublicTree, agent: int, agent_rows: F64, opp_rows: F64,
                          bias: float) -> F64:
    """``[hand, edge]``: the rows of every decision under a leaf (others 0): the agent's
    from ``agent_rows``, the opponent's from ``opp_rows`` biased as its continuation's
    label says (:func:`biased`)."""
    out = np.zeros((len(tree.hands), tree.num_edges))
    owner = tree.edge_nodes()
    decision = tree.kind == DECISION
    for k, label in enumerate(tree.continuations):
        inside = (tree.under == k) & decision
        mine = inside & (tree.player == agent)
        theirs = inside & (tree.player == 1 - agent)
        out[:, mine[owner]] = agent_rows[:, mine[owner]]
        rows = biased(tree, opp_rows, label, bias, theirs)
        out[:, theirs[owner]] = rows[:, theirs[owner]]
    return out


def continuation_rows(tree: PublicTree, blueprint: Strategy, cards: CardAbstraction,
                      seat: int, mapping: MappingFn, purification: Purification,
                      sizes_in: str, overrides: Mapping[int, F64] | None = None,
                      start: Mapping[int, F64] | None = None,
                      buckets: BucketCache | None = None) -> F64:
    """The translating agent in ``seat`` below the leaves (module docstring): the rows of
    :func:`agent.resolve.blueprint.behaviour` (``overrides``, ``start`` and ``buckets`` as
    there), and, for a hand that walk never brings to a node under a leaf, the rows of a
    walk that takes each of the seat's actions above the leaves with weight 1."""
    rows = behaviour(tree, blueprint, cards, seat, mapping, purification, sizes_in,
                     overrides, start, buckets)
    owner = tree.edge_nodes()
    above = (tree.kind == DECISION) & (tree.player == seat) & (tree.under < 0) & ~tree.leaf
    n_hands = len(tree.hands)
    # the seat's reach under the walk (leaf edges taken with weight 1)
    walk = rows.copy()
    leaf_edges = tree.leaf[owner]
    walk[:, leaf_edges] = 1.0
    reach = np.zeros((tree.num_nodes, 2, n_hands))
    reach[0] = 1.0
    K.forward(tree.kind, tree.player, tree.child_start, tree.num_children, tree.children,
              tree.board_of, tree.valid, np.ascontiguousarray(walk), reach)
    below = tree.continuation_nodes() & (tree.player == seat)
    lost = (reach[:, seat, :].T[:, owner] <= 0) & below[owner][None, :]
    lost &= tree.valid[tree.board_of[owner]].T > 0
    if not lost.any():
        return rows
    ones = {int(n): np.ones((n_hands, int(tree.num_children[n])))
            for n in np.flatnonzero(above)}
    wide = behaviour(tree, blueprint, cards, seat, mapping, purification, sizes_in, ones,
                     start, buckets)
    return np.where(lost, wide, rows)
