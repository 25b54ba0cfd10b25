"""Full-game best response against a translating agent, for small two-player no-limit games.

The *agent* is an abstract strategy (a strategy file's table over its abstract betting tree)
played through an action-translation mapping and a purification, exactly as
:class:`agent.policy.StrategyPolicy` plays it. The *best responder* may take every legal
real action: fold, call and a raise to every whole-chip amount. Its value is computed
exactly (no sampling) in three steps:

1. :func:`build_full_game` enumerates the real game: every legal action at every betting
   state (:func:`build_full_tree`), flattened by
   :func:`strategies.games.abstract.build_abstract_game`
   with lossless cards, so the real game is an ordinary
   :class:`~strategies.games.abstract.AbstractGame`
   whose "abstraction" is the game itself (:data:`EVERY_CHIP` is only its label).
2. :func:`build_agent_model` walks the real tree once and records, along every real
   history, the agent's possible *abstract* histories: pairs (real node, abstract node or
   off-tree) and the edges between them. An edge is certain (a call read as a call, an
   off-tree check/call), an abstract action of the agent's (its probability is the table's,
   for the agent's bucket) or one side of a translation draw (``f(A, B, x)`` to ``A``,
   ``1 - f`` to ``B``). The draws are the agent's private randomness: once drawn they stay
   fixed for the hand (they are part of the abstract history) and the responder does not
   see them. The edges are the decision model's distributions expanded
   (:mod:`agent.decision`, the rules and their fallbacks described and defined once:
   :func:`~agent.decision.standing`, :func:`~agent.decision.own_moves`,
   :func:`~agent.decision.read_on_tree`); the model is built for one size convention.
3. :func:`induced_table` pushes the agent's reach through the edges (a numba kernel over
   flat arrays, in the edges' topological order: no recursion) for every distinct
   observation sequence of the agent (its buckets by round), sums the pairs of each real
   node, and divides child by parent: the agent's *behaviour strategy in the real game*,
   a table of the real game in its own layout. :func:`full_best_response` then runs the
   project's best response (:func:`strategies.measure.best_response.best_response`) against it.

Chips per hand throughout (Leduc's ante is 1 chip). The exploitability of the agent in a
seat needs the value of the *real* game: :func:`real_game_value` estimates it with the
project's DCFR on the real tree and brackets it with the best responses to the solver's
average (``-br[1-p] <= v[p] <= br[p]``); the average over both seats needs no value
(``(br0 + br1) / 2``, the values cancel in a zero-sum game).

Imports numpy, numba, :mod:`agent` and :mod:`strategies`; never imported by :mod:`agent`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import (
    ALL_IN,
    AbstractAction,
    BettingAbstraction,
    BettingTree,
    Node,
)
from agent.abstraction.buckets import CardAbstraction, LosslessCards, card_abstraction_from_spec
from agent.abstraction.convention import DEFAULT_SIZE_CONVENTION, parse_size_convention
from agent.abstraction.translation import MappingFn
from agent.acpc.betsize import pot_fraction
from agent.acpc.betting import CALL, FOLD, Action, ActionKind, BettingState
from agent.acpc.errors import AbstractionError, UsageError
from agent.acpc.gamedef import Game
from agent.decision import (
    NodeKinds,
    after_fallback,
    fallback_action,
    own_moves,
    read_on_tree,
    standing,
)
from agent.jit import kernel
from agent.strategy.fileformat import Strategy
from agent.strategy.purification import Purification
from strategies.games.abstract import AbstractGame, build_abstract_game, uniform_table
from strategies.measure.best_response import best_response, exploitability, strategy_table
from strategies.measure.best_response import purify_table as purify_layout
from strategies.solvers.cfr import Solver

F64 = npt.NDArray[np.float64]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

EVERY_CHIP = BettingAbstraction("every-chip", ((),))
"""Label of the real game's tree (:func:`build_full_tree`); not a buildable abstraction."""

MAX_FULL_NODES = 2_000_000
"""Largest real betting tree :func:`build_full_tree` enumerates."""

EDGE_CERTAIN, EDGE_AGENT, EDGE_TRANSLATION = 0, 1, 2



# --------------------------------------------------------------------------- the real game


def full_actions(state: BettingState) -> tuple[AbstractAction, ...]:
    """Every legal action at ``state``: fold (facing a bet), call, a raise to every chip.

    Raises carry their real pot fraction as ``x`` (and as ``fraction``, except the all-in,
    whose ``fraction`` is :data:`~agent.abstraction.actions.ALL_IN`).
    """
    out: list[AbstractAction] = []
    if state.can_fold():
        out.append(AbstractAction(FOLD, -2.0, -2.0))
    out.append(AbstractAction(CALL, 0.0, 0.0))
    bounds = state.raise_bounds()
    if bounds is not None:
        lo, hi = bounds
        for to in range(lo, hi + 1):
            x = pot_fraction(state, to)
            out.append(AbstractAction(Action(ActionKind.RAISE, to),
                                      ALL_IN if to == hi else x, x))
    return tuple(out)


ActionsFn = Callable[[BettingState], tuple[AbstractAction, ...]]
"""The actions a real tree offers at a state (:func:`full_actions` for the real game)."""


def build_full_tree(game: Game, limit: int = MAX_FULL_NODES,
                    actions: ActionsFn = full_actions,
                    label: BettingAbstraction = EVERY_CHIP) -> BettingTree:
    """The real betting tree of a no-limit game: every legal action, ids in pre-order.

    Children come in the order of :func:`full_actions` (fold, call, raises by amount).
    ``actions`` may offer fewer at some states (a responder limited to some sizes,
    :func:`strategies.measure.resolve_lab.limited_actions`); :func:`real_child` finds a
    child among the actions offered.

    Raises:
        ValueError: for a limit game, or a tree of more than ``limit`` nodes.
    """
    if not game.is_nolimit:
        raise UsageError("expected a no-limit game (a limit game is its own abstraction: "
                         "use strategies.measure.best_response)")
    tree = BettingTree(game, label)
    nodes: list[Node] = []
    tree.nodes = nodes
    kids: list[list[int]] = []
    stack: list[tuple[BettingState, int, int]] = [(BettingState.initial(game), -1, 0)]
    while stack:
        state, parent, depth = stack.pop()
        node = Node(len(nodes), state, parent, depth)
        nodes.append(node)
        kids.append([])
        if len(nodes) > limit:
            raise UsageError(f"expected a real betting tree of at most {limit} nodes, got "
                             f"more: the full-game best response is for small games")
        if parent >= 0:
            kids[parent].append(node.id)
        if state.finished:
            continue
        node.actions = actions(state)
        for act in reversed(node.actions):
            child = state.apply(act.action)
            same_round = child.round == state.round and not child.finished
            raised = act.kind is ActionKind.RAISE
            stack.append((child, node.id, (depth + 1 if raised else depth) if same_round
                          else 0))
    for node, children in zip(nodes, kids, strict=True):
        node.children = tuple(children)
    return tree


def real_child(node: Node, action: Action) -> int:
    """The child of ``node`` (of :func:`build_full_tree`) that ``action`` leads to (found
    among the node's actions where it offers fewer than every legal one).

    Raises:
        UsageError: if the node does not offer ``action``.
    """
    if action.kind is ActionKind.FOLD:
        i = 0
    else:
        first_raise = 1 + int(node.state.can_fold())
        if action.kind is ActionKind.CALL:
            i = first_raise - 1
        else:
            bounds = node.state.raise_bounds()
            i = -1 if bounds is None else first_raise + action.raise_to - bounds[0]
    if 0 <= i < len(node.actions) and node.actions[i].action == action:
        return node.children[i]
    for a, c in zip(node.actions, node.children, strict=True):
        if a.action == action:
            return c
    raise UsageError(f"expected the action {action} among those the real tree offers at "
                     f"{node.state.betting!r}")


@functools.lru_cache(maxsize=4)
def build_full_game(game: Game) -> AbstractGame:
    """The real game flattened (lossless cards): the responder's side of every measurement.

    Cached per game (building Leduc's takes about a second).

    Raises:
        ValueError: if the game is not no-limit, its tree is too big or its deals cannot
            be enumerated.
    """
    tree = build_full_tree(game)
    return build_abstract_game(game, EVERY_CHIP, LosslessCards(game), tree=tree)


# --------------------------------------------------------------------------- the agent model


@dataclass(frozen=True, eq=False)
class AgentModel:
    """The agent's possible abstract histories along the real tree (module docstring).

    Mapping- and table-independent: :func:`induced_table` supplies both.
    """

    real: AbstractGame
    """The real game (:func:`build_full_game`)."""
    agent: AbstractGame
    """The agent's abstract game (its tree and table layout, its card abstraction)."""
    seat: int
    """The agent's position."""
    pair_real: I32
    """Per pair: its real node."""
    pair_abstract: I32
    """Per pair: its abstract node, or :data:`agent.decision.OFF_TREE`."""
    edge_src: I32
    edge_dst: I32
    edge_kind: I32
    """``EDGE_CERTAIN``, ``EDGE_AGENT`` or ``EDGE_TRANSLATION``."""
    edge_index: I64
    """Agent edges: the abstract table index of the action for bucket 0; translation
    edges: ``2 t`` (the ``A`` side of translation ``t``) or ``2 t + 1`` (the ``B`` side)."""
    edge_k: I32
    """Agent edges: actions at the abstract node (the row stride)."""
    edge_round: I32
    """Agent edges: the round (selects the agent's bucket)."""
    translations: F64
    """``[t, 3]``: ``(A, B, x)`` of every translation draw."""
    key_buckets: I32
    """``[key, round]``: the agent's bucket per round of each distinct observation sequence."""
    deal_key: I32
    """Per deal: its observation sequence (row of :attr:`key_buckets`)."""
    rep_key: I32
    """``[round, real bucket]``: an observation sequence with that lossless bucket."""
    sizes_in: str = DEFAULT_SIZE_CONVENTION
    """The agent's size convention."""
    misread_edges: I64 = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))
    """Edges that read an opponent's real all-in as an abstract action other than the
    abstract node's all-in (nodes that have one): see :func:`all_in_misreads`."""

    @property
    def num_pairs(self) -> int:
        return len(self.pair_real)

    @property
    def num_edges(self) -> int:
        return len(self.edge_src)


def agent_game(strategy: Strategy) -> AbstractGame:
    """The flat abstract game of a strategy file (its tree and card abstraction).

    Raises:
        ValueError: if its card abstraction cannot be rebuilt or its deals enumerated.
    """
    cards = card_abstraction_from_spec(strategy.game, strategy.cards)
    return build_abstract_game(strategy.game, strategy.betting, cards, tree=strategy.tree)


@dataclass(frozen=True, eq=False)
class PairGraph:
    """The agent's possible abstract histories along a real tree: pairs and edges.

    The card-independent part of :class:`AgentModel` (its fields of the same names), built
    by :func:`walk_pairs` from the two betting trees alone: no deals are enumerated, so it
    serves games whose deals cannot be (:mod:`strategies.measure.translation.royal_br`).
    """

    pair_real: I32
    pair_abstract: I32
    edge_src: I32
    edge_dst: I32
    edge_kind: I32
    edge_index: I64
    edge_k: I32
    edge_round: I32
    translations: F64
    misread_edges: I64


def walk_pairs(
    rtree: BettingTree, atree: BettingTree, aoffset: I64, seat: int,
    sizes_in: str = DEFAULT_SIZE_CONVENTION,
) -> PairGraph:
    """Walk the real tree ``rtree`` with the agent (tree ``atree``, table offsets
    ``aoffset``) in ``seat``: the pairs and edges of the module docstring's step 2.

    Edges come in topological order (pairs are created in the real tree's pre-order).
    """
    sizes_in = parse_size_convention(sizes_in)
    rnodes = rtree.nodes
    anodes = atree.nodes
    pair_real: list[int] = [0]
    pair_abstract: list[int] = [0]
    src: list[int] = []
    dst: list[int] = []
    kind: list[int] = []
    index: list[int] = []
    ks: list[int] = []
    rounds: list[int] = []
    translations: list[tuple[float, float, float]] = []
    misreads: list[int] = []
    trans_index: dict[tuple[float, float, float], int] = {}
    # pairs of each real node, created while its parent is processed (pre-order ids)
    node_pairs: list[dict[int, int]] = [dict() for _ in rnodes]
    node_pairs[0][0] = 0

    def pair_of(real_node: int, state: int) -> int:
        table = node_pairs[real_node]
        p = table.get(state)
        if p is None:
            p = len(pair_real)
            table[state] = p
            pair_real.append(real_node)
            pair_abstract.append(state)
        return p

    def edge(s: int, d: int, k_: int, i_: int = 0, stride: int = 0, r_: int = 0,
             misread: bool = False) -> None:
        if misread:
            misreads.append(len(src))
        src.append(s)
        dst.append(d)
        kind.append(k_)
        index.append(i_)
        ks.append(stride)
        rounds.append(r_)

    kinds_of: dict[int, NodeKinds] = {}
    for rnode in rnodes:
        if rnode.is_terminal or not node_pairs[rnode.id]:
            continue
        state = rnode.state
        actor = state.player
        rchildren = rnode.children
        ractions = rnode.actions
        bounds = state.raise_bounds()
        for astate, p in list(node_pairs[rnode.id].items()):
            why = standing(atree, astate, state)
            if why is not None:  # the agent waits or is off the tree (agent.decision)
                keep = after_fallback(astate, why)
                if actor == seat:
                    edge(p, pair_of(real_child(rnode, fallback_action(state, why)), keep),
                         EDGE_CERTAIN)
                else:
                    for c in rchildren:
                        edge(p, pair_of(c, keep), EDGE_CERTAIN)
                continue
            anode = anodes[astate]
            if actor == seat:
                k = len(anode.actions)
                for i, (real_action, child) in enumerate(own_moves(anode, state)):
                    edge(p, pair_of(real_child(rnode, real_action), child), EDGE_AGENT,
                         int(aoffset[astate]) + i, k, anode.round)
                continue
            kinds = kinds_of.get(astate)
            if kinds is None:
                kinds = kinds_of[astate] = NodeKinds.of(anode)
            abstract_all_in = next((anode.children[i] for i in kinds.raises
                                    if anode.actions[i].fraction == ALL_IN), None)
            for c, ract in zip(rchildren, ractions, strict=True):
                reading = read_on_tree(anode, kinds, state, ract.action, sizes_in)
                bet = reading.bet
                misread = bet is not None and bounds is not None and \
                    ract.action.raise_to == bounds[1] and abstract_all_in is not None
                if reading.certain:
                    edge(p, pair_of(c, reading.low), EDGE_CERTAIN,
                         misread=misread and reading.low != abstract_all_in)
                    continue
                assert bet is not None
                key = (bet.a, bet.b, bet.x)
                t = trans_index.setdefault(key, len(translations))
                if t == len(translations):
                    translations.append(key)
                edge(p, pair_of(c, reading.low), EDGE_TRANSLATION, 2 * t,
                     misread=misread and reading.low != abstract_all_in)
                edge(p, pair_of(c, reading.high), EDGE_TRANSLATION, 2 * t + 1,
                     misread=misread and reading.high != abstract_all_in)

    return PairGraph(
        pair_real=np.array(pair_real, dtype=np.int32),
        pair_abstract=np.array(pair_abstract, dtype=np.int32),
        edge_src=np.array(src, dtype=np.int32),
        edge_dst=np.array(dst, dtype=np.int32),
        edge_kind=np.array(kind, dtype=np.int32),
        edge_index=np.array(index, dtype=np.int64),
        edge_k=np.array(ks, dtype=np.int32),
        edge_round=np.array(rounds, dtype=np.int32),
        translations=np.array(translations, dtype=np.float64).reshape(-1, 3),
        misread_edges=np.array(misreads, dtype=np.int64),
    )





def build_agent_model(
    real: AbstractGame, agent: AbstractGame, seat: int,
    sizes_in: str = DEFAULT_SIZE_CONVENTION,
) -> AgentModel:
    """Walk the real tree with the agent in ``seat`` (see the module docstring).

    ``sizes_in`` is the agent's size convention (:mod:`agent.abstraction.convention`): the
    opponent's raises are read with :func:`agent.abstraction.convention.read_bet`, the
    function the policy calls.

    Raises:
        ValueError: for another game, a bad seat, a game with more than two players or an
            unknown convention.
    """
    sizes_in = parse_size_convention(sizes_in)
    game = real.game
    if game.num_players != 2:
        raise UsageError(f"expected a two-player game, got {game.num_players} players")
    if agent.game.fingerprint != game.fingerprint:
        raise UsageError("expected the agent's strategy to be for the real game, got another")
    if seat not in (0, 1):
        raise UsageError(f"expected the agent's seat 0 or 1, got {seat!r}")
    if not np.array_equal(real.deal_cards, agent.deal_cards):
        raise UsageError("expected the real and the agent's games to enumerate the same deals")
    graph = walk_pairs(real.tree, agent.tree, agent.offset, seat, sizes_in)
    # the agent's observation sequences (its buckets by round), and one per real bucket
    agent_buckets = np.ascontiguousarray(agent.deal_bucket[:, seat, :])
    key_buckets, deal_key = np.unique(agent_buckets, axis=0, return_inverse=True)
    deal_key = deal_key.reshape(-1)
    n_rounds = game.num_rounds
    rep_key = np.full((n_rounds, real.max_buckets), -1, dtype=np.int32)
    seen: dict[tuple[int, int], tuple[int, ...]] = {}
    for d in range(real.num_deals):
        for r in range(n_rounds):
            b = int(real.deal_bucket[d, seat, r])
            prefix = tuple(int(v) for v in agent_buckets[d, : r + 1])
            if seen.setdefault((r, b), prefix) != prefix:
                raise UsageError(
                    "expected a card abstraction that is a function of the cards up to suit "
                    f"isomorphism, got different buckets for the same cards in round {r}")
            rep_key[r, b] = deal_key[d]
    return AgentModel(
        real=real,
        agent=agent,
        seat=seat,
        pair_real=graph.pair_real,
        pair_abstract=graph.pair_abstract,
        edge_src=graph.edge_src,
        edge_dst=graph.edge_dst,
        edge_kind=graph.edge_kind,
        edge_index=graph.edge_index,
        edge_k=graph.edge_k,
        edge_round=graph.edge_round,
        translations=graph.translations,
        key_buckets=np.ascontiguousarray(key_buckets, dtype=np.int32),
        deal_key=deal_key.astype(np.int32),
        rep_key=rep_key,
        sizes_in=sizes_in,
        misread_edges=graph.misread_edges,
    )


# --------------------------------------------------------------------------- kernels


@kernel
def _forward(
    edge_src: I32, edge_dst: I32, edge_kind: I32, edge_index: I64, edge_k: I32,
    edge_round: I32, trans_prob: F64, table: F64, key_buckets: I32, pair_real: I32,
    weight: F64, node_weight: F64,
) -> None:
    """The agent's reach of every pair and every real node, per observation sequence.

    ``weight[0]`` (the root pair) is 1 and every other row 0 on entry. The edges are in
    topological order (a pair's incoming edges all come before its outgoing ones), so one
    sweep suffices; ``node_weight[real node]`` is the sum over the node's pairs.
    """
    n_keys = weight.shape[1]
    for e in range(len(edge_src)):
        s = edge_src[e]
        t = edge_dst[e]
        kind = edge_kind[e]
        if kind == 0:
            for q in range(n_keys):
                weight[t, q] += weight[s, q]
        elif kind == 1:
            base = edge_index[e]
            k = edge_k[e]
            r = edge_round[e]
            for q in range(n_keys):
                weight[t, q] += weight[s, q] * table[base + key_buckets[q, r] * k]
        else:
            prob = trans_prob[edge_index[e]]
            if prob != 0.0:
                for q in range(n_keys):
                    weight[t, q] += weight[s, q] * prob
    for p in range(weight.shape[0]):
        n = pair_real[p]
        for q in range(n_keys):
            node_weight[n, q] += weight[p, q]


@kernel
def _behaviour(
    seat: int, player: I32, rnd: I32, num_actions: I32, child_start: I32, children: I32,
    offset: I64, rows: I32, rep_key: I32, node_weight: F64, out: F64,
) -> None:
    """The agent's real behaviour strategy: each child's reach over the node's reach.

    Rows the agent never reaches (reach 0, or a bucket with no deal) become uniform.
    """
    for n in range(len(player)):
        if player[n] != seat:
            continue
        k = num_actions[n]
        r = rnd[n]
        for b in range(rows[n]):
            start = offset[n] + b * k
            q = rep_key[r, b]
            total = node_weight[n, q] if q >= 0 else 0.0
            for a in range(k):
                if total > 0.0:
                    out[start + a] = node_weight[children[child_start[n] + a], q] / total
                else:
                    out[start + a] = 1.0 / k


# --------------------------------------------------------------------------- public API


def purify_table(game: AbstractGame, table: F64, purification: Purification) -> F64:
    """``table`` with every row post-processed by ``purification`` (a new array; the agent's
    rule, :func:`strategies.measure.best_response.purify_table`); ``none`` leaves it as it is.

    Raises:
        AbstractionError: for a row without positive mass (unless ``none``).
    """
    if purification.kind == "none":
        return np.array(table, dtype=np.float64)
    out = purify_layout(game.layout, table, purification)
    bad = np.flatnonzero(np.isnan(out))
    if bad.size:
        raise AbstractionError(f"expected a distribution with positive mass in every row, "
                               f"got none at table index {int(bad[0])}")
    return out


def translation_probs(model: AgentModel | PairGraph, mapping: MappingFn) -> F64:
    """``[2 t]``: ``f(A, B, x)`` of translation ``t``; ``[2 t + 1]``: ``1 - f``.

    Raises:
        ValueError: if the mapping returns something outside ``[0, 1]``.
    """
    out = np.empty(2 * len(model.translations))
    for t, (a, b, x) in enumerate(model.translations):
        f = float(mapping(float(a), float(b), float(x)))
        if not 0.0 <= f <= 1.0:
            raise UsageError(f"expected a probability from the mapping for A={a!r}, B={b!r}, "
                             f"x={x!r}, got {f!r}")
        out[2 * t] = f
        out[2 * t + 1] = 1.0 - f
    return out


def _sweep(model: AgentModel, agent_table: F64, mapping: MappingFn) -> tuple[F64, F64]:
    """``(pair weights, real node weights)`` per observation sequence (:func:`_forward`)."""
    n_keys = len(model.key_buckets)
    weight = np.zeros((model.num_pairs, n_keys))
    weight[0] = 1.0
    node_weight = np.zeros((model.real.num_nodes, n_keys))
    _forward(model.edge_src, model.edge_dst, model.edge_kind, model.edge_index, model.edge_k,
             model.edge_round, translation_probs(model, mapping), agent_table,
             model.key_buckets, model.pair_real, weight, node_weight)
    return weight, node_weight


def all_in_misreads(model: AgentModel, agent_table: F64, mapping: MappingFn) -> int:
    """How many times the agent may read an opponent's real all-in as something else.

    The number of (pair, real all-in) situations -- the agent's abstract node (one that has
    an abstract all-in) along a real history it reaches with positive probability, and the
    opponent's all-in there -- times the readings other than the abstract all-in (a
    check/call or a smaller raise) that have positive probability under ``mapping``.
    Always 0 under the ``real`` convention (its all-in rule).

    Raises:
        ValueError: if the table does not fit the agent's abstract game.
    """
    agent_table = np.ascontiguousarray(agent_table, dtype=np.float64)
    if agent_table.shape != (model.agent.table_size,):
        raise UsageError(f"expected an abstract table of {model.agent.table_size} values, got "
                         f"{agent_table.shape}")
    if len(model.misread_edges) == 0:
        return 0
    weight, _ = _sweep(model, agent_table, mapping)
    probs = translation_probs(model, mapping)
    count = 0
    for e in model.misread_edges:
        if model.edge_kind[e] == EDGE_TRANSLATION and probs[model.edge_index[e]] <= 0.0:
            continue
        if weight[model.edge_src[e]].max() > 0.0:
            count += 1
    return count


def induced_table(model: AgentModel, agent_table: F64, mapping: MappingFn) -> F64:
    """The agent's behaviour in the real game, as a table of :attr:`AgentModel.real`.

    ``agent_table`` is the (already purified) abstract table in the agent's layout. The
    responder's rows are uniform (they are ignored by a best response).

    Raises:
        ValueError: if the table does not fit the agent's abstract game.
    """
    agent_table = np.ascontiguousarray(agent_table, dtype=np.float64)
    if agent_table.shape != (model.agent.table_size,):
        raise UsageError(f"expected an abstract table of {model.agent.table_size} values, got "
                         f"{agent_table.shape}")
    real = model.real
    _, node_weight = _sweep(model, agent_table, mapping)
    out = uniform_table(real)
    _behaviour(model.seat, real.player, real.round, real.num_actions, real.child_start,
               real.children, real.offset, real.rows, model.rep_key, node_weight, out)
    return out


def full_best_response(
    model: AgentModel, agent_table: F64, mapping: MappingFn
) -> float:
    """What a best responder in the other seat wins per hand against the agent (chips)."""
    table = induced_table(model, agent_table, mapping)
    return best_response(model.real, table, 1 - model.seat).value


@dataclass(frozen=True)
class RealValue:
    """The real game's value per seat, estimated by a CFR solver (chips per hand)."""

    values: tuple[float, float]
    """Midpoints of the bounds, per seat (they sum to 0)."""
    error: float
    """Half-width of the bounds: the true value is within this of :attr:`values`."""
    iterations: int
    solver: str = "dcfr"


@functools.lru_cache(maxsize=4)
def real_game_value(game: Game, iterations: int = 2000, solver: str = "dcfr") -> RealValue:
    """Bracket the real game's value by solving it with the project's ``solver``.

    With ``sigma`` the solver's average, ``-br[1](sigma) <= v[0] <= br[0](sigma)``.

    Raises:
        ValueError: as :func:`build_full_game`.
    """
    return game_value(build_full_game(game), iterations, solver)


def game_value(real: AbstractGame, iterations: int = 2000, solver: str = "dcfr") -> RealValue:
    """:func:`real_game_value` of any flattened game (e.g. a real game whose players are
    limited to some sizes)."""
    run = Solver(real, solver)
    run.iterate(iterations)
    result = exploitability(real, run.average_strategy())
    br0, br1 = result.best_responses
    lo, hi = -br1, br0
    mid = (lo + hi) / 2
    return RealValue((mid, -mid), (hi - lo) / 2, iterations, solver)


@dataclass(frozen=True)
class SeatFigures:
    """Best responses to an agent in both seats (chips per hand)."""

    best_responses: tuple[float, float]
    """``best_responses[q]``: what a best responder in seat ``q`` wins against the agent
    in the other seat."""
    values: tuple[float, float] | None = None
    """The real game's value per seat, if known."""
    value_error: float = 0.0
    """Uncertainty of :attr:`values`."""

    @property
    def average(self) -> float:
        """``(br0 + br1) / 2``: the exploitability over both seats (no value needed)."""
        return (self.best_responses[0] + self.best_responses[1]) / 2

    def seat(self, p: int) -> float:
        """Exploitability of the agent in seat ``p``: ``br[1-p] - v[1-p]`` (NaN if the
        value is unknown)."""
        if self.values is None:
            return float("nan")
        return self.best_responses[1 - p] - self.values[1 - p]


class AgentLab:
    """Measure one strategy file in the real game under many mappings, purifications and
    size conventions.

    Builds the real game once and both seats' agent models once per size convention (on
    first use); each :meth:`measure` is then a forward sweep and a best response per seat.
    """

    def __init__(
        self, strategy: Strategy, *, cards: CardAbstraction | None = None,
        sizes_in: str = DEFAULT_SIZE_CONVENTION,
    ) -> None:
        self.strategy = strategy
        self.real = build_full_game(strategy.game)
        self.agent = agent_game(strategy) if cards is None else build_abstract_game(
            strategy.game, strategy.betting, cards, tree=strategy.tree)
        self.table = strategy_table(self.agent, strategy)
        self.sizes_in = parse_size_convention(sizes_in)
        """The default convention of :attr:`models` and :meth:`measure`."""
        self._models: dict[str, tuple[AgentModel, AgentModel]] = {}

    def models_for(self, sizes_in: str) -> tuple[AgentModel, AgentModel]:
        """Both seats' agent models under ``sizes_in`` (built on first use)."""
        sizes_in = parse_size_convention(sizes_in)
        if sizes_in not in self._models:
            self._models[sizes_in] = tuple(  # type: ignore[assignment]
                build_agent_model(self.real, self.agent, s, sizes_in) for s in (0, 1))
        return self._models[sizes_in]

    @property
    def models(self) -> tuple[AgentModel, AgentModel]:
        """Both seats' agent models under the lab's default convention."""
        return self.models_for(self.sizes_in)

    def behaviour(self, seat: int, mapping: MappingFn, purification: Purification,
                  sizes_in: str | None = None) -> F64:
        """The agent's behaviour in ``seat`` of the real game (:func:`induced_table`) with
        ``mapping``, ``purification`` and size convention ``sizes_in`` (default: the
        lab's): what LBR and exact head-to-head values play against."""
        models = self.models_for(self.sizes_in if sizes_in is None else sizes_in)
        return induced_table(models[seat], purify_table(self.agent, self.table, purification),
                             mapping)

    def measure(
        self, mapping: MappingFn, purification: Purification, value: RealValue | None = None,
        sizes_in: str | None = None,
    ) -> SeatFigures:
        """Best responses in both seats to the agent with ``mapping``, ``purification`` and
        size convention ``sizes_in`` (default: the lab's)."""
        models = self.models_for(self.sizes_in if sizes_in is None else sizes_in)
        table = purify_table(self.agent, self.table, purification)
        # the agent in seat 1 is exploited by a responder in seat 0, and vice versa
        brs = (full_best_response(models[1], table, mapping),
               full_best_response(models[0], table, mapping))
        if value is None:
            return SeatFigures(brs)
        return SeatFigures(brs, value.values, value.error)

    def misreads(self, mapping: MappingFn, purification: Purification,
                 sizes_in: str | None = None) -> int:
        """:func:`all_in_misreads` of both seats."""
        models = self.models_for(self.sizes_in if sizes_in is None else sizes_in)
        table = purify_table(self.agent, self.table, purification)
        return sum(all_in_misreads(m, table, mapping) for m in models)
