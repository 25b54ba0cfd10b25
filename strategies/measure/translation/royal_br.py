"""Exact full-game best response (and head-to-head value) against translating agents in
two-round board games too big to enumerate deal by deal: Royal no-limit hold'em.

:mod:`strategies.measure.translation.full_br` flattens the real game with every deal enumerated,
which Royal (about 16 M ordered deals) does not allow. This module computes the same
quantities from the public tree instead:

- The agent's side is :func:`strategies.measure.translation.full_br.walk_pairs`, the very pair graph
  the lab builds (real node, abstract node or off-tree; certain, agent and translation
  edges): the decision model (:mod:`agent.decision`) expanded. Only real nodes the agent
  reaches appear in it; the responder's value is 0 everywhere else.
- Boards are walked one at a time. On a board, the agent's reach of every pair is a vector
  over the hands that do not touch the board (a numba sweep of the edges in topological
  order); summed per real node it is the agent's reach of that public state.
- The responder's values on the board are computed backwards over the board's public
  states, vectorised over its hands: at a terminal, the agent's reach against each
  responder hand with card removal by inclusion-exclusion over the hand's cards (folds:
  one sum; showdowns: one sweep of the hands sorted by rank), a sum over the children at the
  agent's nodes, a maximum at the responder's own nodes of a later round (it sees the board).
- The first round's values are the boards' values summed (the responder does not see the
  board yet), and its maximum is taken after the sum.
- With a card abstraction that is lossless up to suit isomorphism (the ``lossless`` kind)
  only one board per suit-isomorphism class is walked: the values of the other boards of
  the class are the same vectors with the hands' suits relabelled. Other card abstractions
  walk every board.

Values are chips per hand for the responder, so a best response per seat and the two-seat
average (``(br0 + br1) / 2``, the exploitability over both seats: no game value needed)
follow as in the lab. :func:`head_to_head` gives the exact expected value of one
translating agent against another: the probability of a real history is the product of
the two agents' reaches (each agent's translation draws are its own), summed over boards.

For two-player no-limit games with 1 or 2 hole cards, no board in the first round and one
board round after it (Royal, the Royal-like test decks, no-limit Leduc). Imports numpy,
numba, :mod:`agent` and :mod:`strategies`; never imported by :mod:`agent`.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import BettingTree
from agent.abstraction.buckets import (
    CardAbstraction,
    LosslessCards,
    card_abstraction_from_spec,
)
from agent.abstraction.convention import DEFAULT_SIZE_CONVENTION, parse_size_convention
from agent.abstraction.translation import MappingFn
from agent.acpc.cards import deck_for
from agent.acpc.errors import UsageError
from agent.acpc.evaluator import rank_hand_fast
from agent.acpc.gamedef import Game
from agent.jit import inline_kernel, kernel
from agent.strategy.fileformat import QUANT, Strategy, table_layout
from agent.strategy.purification import Purification
from strategies.measure.best_response import purify_table
from strategies.measure.translation.full_br import (
    EDGE_AGENT,
    EDGE_CERTAIN,
    PairGraph,
    build_full_tree,
    translation_probs,
    walk_pairs,
)

F64 = npt.NDArray[np.float64]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]

ProgressFn = Callable[[int, int], None]
"""Called with (boards done, boards) after each board."""

KIND_AGENT, KIND_RESPONDER, KIND_FOLD, KIND_SHOWDOWN = 0, 1, 2, 3


def _quiet(done: int, total: int) -> None:
    return None


# --------------------------------------------------------------------------- the cards


@dataclass(frozen=True, eq=False)
class Board:
    """One board walked, with the hands that do not touch it."""

    cards: tuple[int, ...]
    hands: I32
    """Global indices (rows of :attr:`Deals.hand_cards`) of the hands off the board."""
    ranks: I64
    """Per local hand: its rank with the board (larger is better)."""
    order: I64
    """Local hands sorted by rank, ascending."""
    images: I32
    """``[board of the class, local hand]``: the global index of the hand with the suits
    relabelled as that board's (row 0 is this board itself)."""


@dataclass(frozen=True, eq=False)
class Deals:
    """The hands and boards of a game, boards grouped by suit isomorphism or not."""

    game: Game
    hand_cards: I32
    """``[hand, card]``: every set of hole cards (sorted), in lexicographic order."""
    boards: tuple[Board, ...]
    isomorphic: bool
    per_hand: int
    """Deals (opponent hands times boards) consistent with one hand."""

    @property
    def num_hands(self) -> int:
        return len(self.hand_cards)

    @property
    def num_boards(self) -> int:
        """Boards in the game (each walked or the image of one walked)."""
        return sum(len(b.images) for b in self.boards)


def check_game(game: Game) -> None:
    """Raise unless ``game`` is one this module handles (module docstring).

    Raises:
        ValueError: for other games.
    """
    if not game.is_nolimit or game.num_players != 2:
        raise UsageError("expected a two-player no-limit game, got "
                         f"{game.num_players} players {'no-limit' if game.is_nolimit else 'limit'}")
    if game.num_rounds != 2 or game.num_board_cards[0] != 0 or game.num_board_cards[1] < 1:
        raise UsageError("expected a game of two rounds with a board only in the second, got "
                         f"board cards {list(game.num_board_cards)!r}")
    if game.num_hole_cards not in (1, 2):
        raise UsageError(f"expected 1 or 2 hole cards, got {game.num_hole_cards}")


@functools.lru_cache(maxsize=8)
def build_deals(game: Game, isomorphic: bool = True) -> Deals:
    """Hands and boards of ``game``; with ``isomorphic`` one board per suit class.

    Raises:
        ValueError: as :func:`check_game`.
    """
    check_game(game)
    deck = deck_for(game)
    k = game.num_hole_cards
    hands = [tuple(h) for h in itertools.combinations(sorted(deck), k)]
    hand_index = {h: i for i, h in enumerate(hands)}
    suits = sorted({c % 4 for c in deck})
    perms: list[dict[int, int]] = [dict(zip(suits, p, strict=True))
                                   for p in itertools.permutations(suits)]

    def relabel(cards: tuple[int, ...], perm: dict[int, int]) -> tuple[int, ...]:
        return tuple(sorted(c - c % 4 + perm[c % 4] for c in cards))

    classes: dict[tuple[int, ...], list[tuple[tuple[int, ...], dict[int, int]]]] = {}
    for board in itertools.combinations(sorted(deck), game.num_board_cards[1]):
        if isomorphic:
            canon = min(relabel(board, p) for p in perms)
            perm = next(p for p in perms if relabel(canon, p) == board)
        else:
            canon, perm = board, {s: s for s in suits}
        classes.setdefault(canon, []).append((board, perm))
    boards = []
    for canon, members in sorted(classes.items()):
        on = set(canon)
        local = [i for i, h in enumerate(hands) if not on.intersection(h)]
        ranks = np.array([rank_hand_fast(list(hands[i]) + list(canon)) for i in local],
                         dtype=np.int64)
        members.sort(key=lambda m: m[0] != canon)  # the board itself first
        images = np.array([[hand_index[relabel(hands[i], perm)] for i in local]
                           for _, perm in members], dtype=np.int32)
        boards.append(Board(canon, np.array(local, dtype=np.int32), ranks,
                            np.argsort(ranks, kind="stable").astype(np.int64), images))
    n = len(deck)
    per_hand = math.comb(n - k, k) * math.comb(n - 2 * k, game.num_board_cards[1])
    return Deals(game, np.array(hands, dtype=np.int32).reshape(-1, k), tuple(boards),
                 isomorphic, per_hand)


# --------------------------------------------------------------------------- agents


@dataclass(frozen=True, eq=False)
class TranslatedAgent:
    """An abstract strategy with its purification applied (the table the agent samples),
    its tree, table offsets and card abstraction."""

    game: Game
    tree: BettingTree
    offsets: I64
    table: F64
    cards: CardAbstraction
    name: str = "agent"

    @property
    def lossless(self) -> bool:
        """Whether the cards are suit-isomorphic lossless buckets (boards may be grouped)."""
        return bool(self.cards.spec.get("kind") == "lossless")


def translated_agent(
    strategy: Strategy, purification: Purification, *, cards: CardAbstraction | None = None,
    name: str | None = None,
) -> TranslatedAgent:
    """The agent of a strategy file with ``purification`` applied to every row.

    Raises:
        ValueError: if the card abstraction cannot be rebuilt.
    """
    if cards is None:
        cards = _cards(strategy.game, strategy.cards)
    layout = table_layout(strategy.tree, tuple(int(b) for b in cards.buckets))
    table = np.asarray(strategy.table, dtype=np.float64)
    if strategy.table.dtype == np.uint16:
        table = table / QUANT
    table = purify_table(layout, table, purification)
    return TranslatedAgent(strategy.game, strategy.tree, np.asarray(layout.offsets), table,
                           cards, name or strategy.betting.name)


def table_agent(tree: BettingTree, cards: CardAbstraction, table: npt.ArrayLike,
                purification: Purification | None = None, name: str = "agent") -> TranslatedAgent:
    """An agent from a raw table in the layout of ``tree`` and ``cards`` (rows renormalised,
    then purified).

    Raises:
        ValueError: if the table has the wrong size.
    """
    layout = table_layout(tree, tuple(int(b) for b in cards.buckets))
    values = np.asarray(table, dtype=np.float64)
    if values.shape != (layout.total,):
        raise UsageError(f"expected a table of {layout.total} values, got {values.shape}")
    return TranslatedAgent(tree.game, tree, np.asarray(layout.offsets),
                           purify_table(layout, values, purification), cards, name)


@functools.lru_cache(maxsize=4)
def lossless_cards(game: Game) -> LosslessCards:
    """:class:`LosslessCards` of ``game``, cached (Royal's takes seconds to enumerate)."""
    return LosslessCards(game)


def _cards(game: Game, spec: dict[str, object]) -> CardAbstraction:
    """The card abstraction of a spec (lossless ones from the cache).

    Raises:
        ValueError: as :func:`agent.abstraction.buckets.card_abstraction_from_spec`.
    """
    if spec.get("kind") == "lossless":
        cards = lossless_cards(game)
        want = spec.get("buckets", ())
        if not isinstance(want, list | tuple) or tuple(int(b) for b in want) != cards.buckets:
            raise UsageError(f"expected buckets {list(cards.buckets)} for this game, the spec "
                             f"says {want!r}")
        return cards
    return card_abstraction_from_spec(game, dict(spec))


@functools.lru_cache(maxsize=4)
def real_tree(game: Game) -> BettingTree:
    """The real betting tree (every whole-chip raise), cached per game."""
    return build_full_tree(game)


@dataclass(frozen=True, eq=False)
class SeatModel:
    """One agent in one seat: its pair graph and the public states it reaches."""

    agent: TranslatedAgent
    seat: int
    graph: PairGraph
    nodes: I32
    """Compact node -> real node id (ascending: parents before children)."""
    pair_node: I32
    """Per pair: its compact node."""
    kind: I32
    """Per compact node: ``KIND_AGENT``, ``KIND_RESPONDER`` (the other seat acts),
    ``KIND_FOLD`` or ``KIND_SHOWDOWN``."""
    on_board: npt.NDArray[np.bool_]
    """Per compact node: its value depends on the board (terminals, later rounds)."""
    child_start: I32
    children: I32
    """Compact children of each node (those the agent reaches), concatenated."""
    payoff: F64
    """``[compact node, 3]``: the *other* seat's chips at a terminal: for a fold
    ``[v, v, v]``; for a showdown ``[it wins, it loses, tie]``."""


def seat_model(agent: TranslatedAgent, seat: int,
               sizes_in: str = DEFAULT_SIZE_CONVENTION, real: BettingTree | None = None
               ) -> SeatModel:
    """Walk the real tree with ``agent`` in ``seat`` (the other seat may bet every chip).

    ``real``: another real tree of the game (:func:`strategies.measure.translation.full_br.
    build_full_tree` with fewer actions, e.g. a responder limited to some sizes); it must
    offer every action the agent plays.

    Raises:
        ValueError: for a bad seat or convention, or a game this module does not handle.
    """
    check_game(agent.game)
    if seat not in (0, 1):
        raise UsageError(f"expected the agent's seat 0 or 1, got {seat!r}")
    rtree = real_tree(agent.game) if real is None else real
    graph = walk_pairs(rtree, agent.tree, agent.offsets, seat, parse_size_convention(sizes_in))
    return _compact(agent, seat, rtree, graph)


def abstract_seat_model(agent: TranslatedAgent, seat: int) -> SeatModel:
    """``agent`` in ``seat`` of its own abstract game: the other seat is restricted to the
    abstract actions (for the abstract-game best response and exploitability).

    Raises:
        ValueError: for a bad seat or a game this module does not handle.
    """
    check_game(agent.game)
    if seat not in (0, 1):
        raise UsageError(f"expected the agent's seat 0 or 1, got {seat!r}")
    tree = agent.tree
    src: list[int] = []
    dst: list[int] = []
    kind: list[int] = []
    index: list[int] = []
    ks: list[int] = []
    rounds: list[int] = []
    for node in tree.nodes:
        if node.is_terminal:
            continue
        mine = node.player == seat
        for i, c in enumerate(node.children):
            assert c > node.id, "expected the tree in pre-order"
            src.append(node.id)
            dst.append(c)
            kind.append(EDGE_AGENT if mine else EDGE_CERTAIN)
            index.append(int(agent.offsets[node.id]) + i if mine else 0)
            ks.append(len(node.children) if mine else 0)
            rounds.append(node.round if mine else 0)
    n = len(tree.nodes)
    graph = PairGraph(
        pair_real=np.arange(n, dtype=np.int32), pair_abstract=np.arange(n, dtype=np.int32),
        edge_src=np.array(src, dtype=np.int32), edge_dst=np.array(dst, dtype=np.int32),
        edge_kind=np.array(kind, dtype=np.int32), edge_index=np.array(index, dtype=np.int64),
        edge_k=np.array(ks, dtype=np.int32), edge_round=np.array(rounds, dtype=np.int32),
        translations=np.zeros((0, 3)), misread_edges=np.zeros(0, dtype=np.int64))
    return _compact(agent, seat, tree, graph)


def _compact(agent: TranslatedAgent, seat: int, tree: BettingTree,
             graph: PairGraph) -> SeatModel:
    """The public states of ``tree`` the graph's pairs reach, with their kinds and payoffs."""
    nodes = np.unique(graph.pair_real).astype(np.int32)
    compact = {int(n): i for i, n in enumerate(nodes)}
    other = 1 - seat
    kind = np.zeros(len(nodes), dtype=np.int32)
    on_board = np.zeros(len(nodes), dtype=np.bool_)
    payoff = np.zeros((len(nodes), 3))
    starts = [0]
    kids: list[int] = []
    for i, n in enumerate(nodes):
        node = tree.nodes[int(n)]
        state = node.state
        if node.is_terminal:
            on_board[i] = True
            if state.num_folded:
                kind[i] = KIND_FOLD
                payoff[i] = state.payoffs()[other]
            else:
                kind[i] = KIND_SHOWDOWN
                for j, ranks in enumerate(((1, 0), (0, 1), (0, 0))):
                    r = (ranks[0], ranks[1]) if other == 0 else (ranks[1], ranks[0])
                    payoff[i, j] = state.payoffs(r)[other]
        else:
            kind[i] = KIND_AGENT if state.player == seat else KIND_RESPONDER
            on_board[i] = state.round > 0
            kids.extend(compact[c] for c in node.children if c in compact)
        starts.append(len(kids))
    return SeatModel(agent, seat, graph, nodes,
                     np.array([compact[int(r)] for r in graph.pair_real], dtype=np.int32),
                     kind, on_board, np.array(starts, dtype=np.int32),
                     np.array(kids, dtype=np.int32), payoff)


# --------------------------------------------------------------------------- kernels


@kernel
def _forward(
    edge_src: I32, edge_dst: I32, edge_kind: I32, edge_index: I64, edge_k: I32,
    edge_round: I32, trans_prob: F64, table: F64, hand_bucket: I32, pair_node: I32,
    weight: F64, reach: F64,
) -> None:
    """The agent's reach of every pair, and summed per compact node, per local hand.

    ``weight`` and ``reach`` are zero on entry; the root pair's row is set here. Edges are
    in topological order. ``hand_bucket[round, hand]`` is the agent's bucket.
    """
    n = weight.shape[1]
    for h in range(n):
        weight[0, h] = 1.0
    for e in range(len(edge_src)):
        s = edge_src[e]
        t = edge_dst[e]
        kind = edge_kind[e]
        if kind == 0:
            for h in range(n):
                weight[t, h] += weight[s, h]
        elif kind == 1:
            base = edge_index[e]
            k = edge_k[e]
            r = edge_round[e]
            for h in range(n):
                w = weight[s, h]
                if w != 0.0:
                    weight[t, h] += w * table[base + hand_bucket[r, h] * k]
        else:
            prob = trans_prob[edge_index[e]]
            if prob != 0.0:
                for h in range(n):
                    weight[t, h] += weight[s, h] * prob
    for p in range(weight.shape[0]):
        c = pair_node[p]
        for h in range(n):
            reach[c, h] += weight[p, h]


@kernel
def terminal_kernel(
    reach: F64, cards: I32, order: I64, ranks: I64, fold: bool, pay: F64,
    card_sum: F64, card_less: F64, card_group: F64, out: F64,
) -> None:
    """``out[h]``: the other seat's chips against ``reach`` (the agent's reach per local
    hand), summed over the agent's hands that share no card with ``h``.

    ``pay`` is ``[wins, loses, tie]`` (all equal for a fold). Card removal by
    inclusion-exclusion: hands sharing no card = all - those holding each of ``h``'s cards
    (+ ``h`` itself, counted twice, with two hole cards). ``card_*`` are scratch arrays
    indexed by card.
    """
    n = len(reach)
    k = cards.shape[1]
    card_sum[:] = 0.0
    total = 0.0
    for h in range(n):
        r = reach[h]
        total += r
        for j in range(k):
            card_sum[cards[h, j]] += r
    if fold:
        for h in range(n):
            free = total
            for j in range(k):
                free -= card_sum[cards[h, j]]
            if k == 2:
                free += reach[h]
            out[h] = pay[0] * free
        return
    card_less[:] = 0.0
    less = 0.0
    i = 0
    while i < n:
        j = i
        while j < n and ranks[order[j]] == ranks[order[i]]:
            j += 1
        card_group[:] = 0.0
        group = 0.0
        for q in range(i, j):
            h = order[q]
            group += reach[h]
            for c in range(k):
                card_group[cards[h, c]] += reach[h]
        for q in range(i, j):
            h = order[q]
            free = total
            below = less
            same = group
            for c in range(k):
                free -= card_sum[cards[h, c]]
                below -= card_less[cards[h, c]]
                same -= card_group[cards[h, c]]
            if k == 2:
                free += reach[h]
                same += reach[h]
            above = free - below - same
            out[h] = pay[0] * below + pay[1] * above + pay[2] * same
        for q in range(i, j):
            h = order[q]
            less += reach[h]
            for c in range(k):
                card_less[cards[h, c]] += reach[h]
        i = j


@inline_kernel
def _combine(c: int, kd: int, child_start: I32, children: I32, values: F64) -> None:
    """``values[c]`` from its children's rows: their sum at a node of kind 0 (the agent's:
    its probabilities are already in the children's reach), else their maximum per hand
    (the responder's choice)."""
    first = True
    for i in range(child_start[c], child_start[c + 1]):
        ch = children[i]
        for h in range(values.shape[1]):
            v = values[ch, h]
            if first:
                values[c, h] = v
            elif kd == 0:
                values[c, h] += v
            elif v > values[c, h]:
                values[c, h] = v
        first = False


@kernel
def _backward(
    kind: I32, on_board: npt.NDArray[np.bool_], child_start: I32, children: I32,
    payoff: F64, reach: F64, cards: I32, order: I64, ranks: I64, values: F64,
    scratch: F64,
) -> None:
    """The other seat's values on one board at every board-dependent compact node.

    Terminals from the agent's ``reach``; the agent's nodes sum their children; the other
    seat's nodes (later rounds: it sees the board) take the maximum per hand. Nodes of the
    first round are left alone (their maximum comes after the sum over boards).
    """
    for c in range(len(kind) - 1, -1, -1):
        if not on_board[c]:
            continue
        kd = kind[c]
        if kd == 2 or kd == 3:
            terminal_kernel(reach[c], cards, order, ranks, kd == 2, payoff[c], scratch[0],
                      scratch[1], scratch[2], values[c])
            continue
        _combine(c, kd, child_start, children, values)


@kernel
def _first_round(kind: I32, on_board: npt.NDArray[np.bool_], child_start: I32,
                 children: I32, values: F64) -> None:
    """The first round's values from the boards' sums (``values`` rows of board nodes)."""
    for c in range(len(kind) - 1, -1, -1):
        if on_board[c]:
            continue
        _combine(c, kind[c], child_start, children, values)


@kernel
def _h2h_board(terminals: I32, a_rows: I32, b_rows: I32, reach_a: F64, reach_b: F64,
               payoff_a: F64, kind_a: I32, cards: I32, order: I64, ranks: I64,
               scratch: F64, out: F64) -> float:
    """Agent B's chips on one board, summed over the real terminals both reach.

    ``payoff_a``/``kind_a`` are A's model's (its ``payoff`` is the other seat's: B's)."""
    total = 0.0
    for i in range(len(terminals)):
        a = a_rows[i]
        b = b_rows[i]
        terminal_kernel(reach_a[a], cards, order, ranks, kind_a[a] == 2, payoff_a[a], scratch[0],
                  scratch[1], scratch[2], out)
        for h in range(len(out)):
            total += reach_b[b, h] * out[h]
    return total


@kernel
def _add_images(rows: I32, local: F64, images: I32, values: F64) -> None:
    """``values[row, images[j, h]] += local[row, h]`` for every board ``j`` of the class."""
    for j in range(images.shape[0]):
        for row in rows:
            for h in range(local.shape[1]):
                values[row, images[j, h]] += local[row, h]


# --------------------------------------------------------------------------- public API


def _boundary(model: SeatModel) -> I32:
    """Board-dependent compact nodes whose parent is a first-round decision node: the
    only rows of the boards' values the first round reads."""
    rows = {int(c) for n in range(len(model.kind))
            if model.kind[n] in (KIND_AGENT, KIND_RESPONDER) and not model.on_board[n]
            for c in model.children[model.child_start[n] : model.child_start[n + 1]]
            if model.on_board[c]}
    return np.array(sorted(rows), dtype=np.int32)


def _hand_buckets(agent: TranslatedAgent, deals: Deals, board: Board) -> I32:
    """``[round, local hand]``: the agent's bucket of each hand on ``board``."""
    out = np.empty((2, len(board.hands)), dtype=np.int32)
    for j, h in enumerate(board.hands):
        hole = [int(c) for c in deals.hand_cards[h]]
        out[0, j] = agent.cards.bucket(0, hole, [])
        out[1, j] = agent.cards.bucket(1, hole, list(board.cards))
    return out


def _agent_reach(model: SeatModel, mapping: MappingFn, deals: Deals, board: Board,
                 probs: F64) -> F64:
    n = len(board.hands)
    weight = np.zeros((len(model.graph.pair_real), n))
    reach = np.zeros((len(model.nodes), n))
    g = model.graph
    _forward(g.edge_src, g.edge_dst, g.edge_kind, g.edge_index, g.edge_k, g.edge_round, probs,
             model.agent.table, _hand_buckets(model.agent, deals, board), model.pair_node,
             weight, reach)
    return reach


def _scratch(game: Game) -> F64:
    return np.zeros((3, 52))


def best_response_value(
    model: SeatModel, mapping: MappingFn, *, isomorphic: bool | None = None,
    progress: ProgressFn = _quiet,
) -> float:
    """What a best responder in the other seat wins per hand (chips) against the agent.

    ``isomorphic`` (default: when the agent's cards are lossless) walks one board per
    suit-isomorphism class.

    Raises:
        ValueError: if the mapping returns something outside ``[0, 1]``.
    """
    iso = model.agent.lossless if isomorphic is None else isomorphic
    deals = build_deals(model.agent.game, iso)
    probs = translation_probs(model.graph, mapping)
    values = np.zeros((len(model.nodes), deals.num_hands))
    scratch = _scratch(deals.game)
    boundary = _boundary(model)
    for i, board in enumerate(deals.boards):
        reach = _agent_reach(model, mapping, deals, board, probs)
        local = np.zeros_like(reach)
        cards = np.ascontiguousarray(deals.hand_cards[board.hands])
        _backward(model.kind, model.on_board, model.child_start, model.children,
                  model.payoff, reach, cards, board.order, board.ranks, local, scratch)
        _add_images(boundary, local, board.images, values)
        progress(i + 1, len(deals.boards))
    _first_round(model.kind, model.on_board, model.child_start, model.children, values)
    return float(values[0].sum()) / (deals.num_hands * deals.per_hand)


def head_to_head(
    a: SeatModel, b: SeatModel, mapping_a: MappingFn, mapping_b: MappingFn, *,
    isomorphic: bool | None = None, progress: ProgressFn = _quiet,
) -> float:
    """Agent ``b``'s exact expected chips per hand against agent ``a`` (other seats).

    Raises:
        ValueError: if both sit in the same seat, or the agents are for different games.
    """
    if a.seat == b.seat:
        raise UsageError(f"expected the agents in different seats, got both in seat {a.seat}")
    if a.agent.game.fingerprint != b.agent.game.fingerprint:
        raise UsageError("expected two agents for the same game, got different games")
    iso = (a.agent.lossless and b.agent.lossless) if isomorphic is None else isomorphic
    deals = build_deals(a.agent.game, iso)
    probs_a = translation_probs(a.graph, mapping_a)
    probs_b = translation_probs(b.graph, mapping_b)
    rows_b = {int(n): i for i, n in enumerate(b.nodes)}
    pairs = [(i, rows_b[int(n)]) for i, n in enumerate(a.nodes)
             if int(n) in rows_b and a.kind[i] in (KIND_FOLD, KIND_SHOWDOWN)]
    terminals = np.array([a.nodes[i] for i, _ in pairs], dtype=np.int32)
    a_rows = np.array([i for i, _ in pairs], dtype=np.int32)
    b_rows = np.array([j for _, j in pairs], dtype=np.int32)
    scratch = _scratch(deals.game)
    total = 0.0
    for i, board in enumerate(deals.boards):
        ra = _agent_reach(a, mapping_a, deals, board, probs_a)
        rb = _agent_reach(b, mapping_b, deals, board, probs_b)
        cards = np.ascontiguousarray(deals.hand_cards[board.hands])
        out = np.zeros(len(board.hands))
        total += len(board.images) * _h2h_board(
            terminals, a_rows, b_rows, ra, rb, a.payoff, a.kind, cards, board.order,
            board.ranks, scratch, out)
        progress(i + 1, len(deals.boards))
    return total / (deals.num_hands * deals.per_hand)


@dataclass(frozen=True)
class RoyalFigures:
    """Best responses to one agent in both seats (chips per hand)."""

    best_responses: tuple[float, float]
    """``best_responses[q]``: what a best responder in seat ``q`` wins against the agent
    in the other seat."""

    @property
    def average(self) -> float:
        """``(br0 + br1) / 2``: the exploitability over both seats (no game value needed)."""
        return (self.best_responses[0] + self.best_responses[1]) / 2


class RoyalLab:
    """One agent's seat models per size convention, and its best responses."""

    def __init__(self, agent: TranslatedAgent) -> None:
        self.agent = agent
        self._models: dict[str, tuple[SeatModel, SeatModel]] = {}

    def models(self, sizes_in: str = DEFAULT_SIZE_CONVENTION) -> tuple[SeatModel, SeatModel]:
        """Both seats' models (built on first use)."""
        sizes_in = parse_size_convention(sizes_in)
        if sizes_in not in self._models:
            self._models[sizes_in] = (seat_model(self.agent, 0, sizes_in),
                                      seat_model(self.agent, 1, sizes_in))
        return self._models[sizes_in]

    def measure(self, mapping: MappingFn, sizes_in: str = DEFAULT_SIZE_CONVENTION,
                progress: ProgressFn = _quiet) -> RoyalFigures:
        """Best responses in both seats to the agent with ``mapping``."""
        m0, m1 = self.models(sizes_in)
        # the agent in seat 1 is exploited by a responder in seat 0, and vice versa
        return RoyalFigures((best_response_value(m1, mapping, progress=progress),
                             best_response_value(m0, mapping, progress=progress)))

    def abstract(self) -> RoyalFigures:
        """Best responses in both seats within the agent's own abstract game."""
        m0, m1 = abstract_seat_model(self.agent, 0), abstract_seat_model(self.agent, 1)
        return RoyalFigures((best_response_value(m1, _no_mapping),
                             best_response_value(m0, _no_mapping)))


def _no_mapping(a: float, b: float, x: float) -> float:
    raise AssertionError("an abstract game has no translation")
