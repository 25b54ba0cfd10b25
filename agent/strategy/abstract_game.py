"""The abstract game as flat arrays: betting tree, terminal payoffs and chance outcomes.

:func:`build_abstract_game` turns a game definition, a betting abstraction and a card
abstraction into the arrays the solvers (:mod:`strategies.solvers.cfr`) and the best response
(:mod:`strategies.measure.best_response`) walk. The betting tree is
:func:`agent.abstraction.actions.build_tree`, the very enumeration the agent uses at match
time, so node ids, action orders and the strategy table layout
(:func:`agent.strategy.fileformat.table_layout`) are shared by construction.

Chance is enumerated: every deal (hole cards per position, then the board cards of each
round; the order of cards within one group does not matter) with its probability. A deal
gives every position a bucket per round (the card abstraction's ``bucket``) and, for every
set of players that can reach a showdown, the *pattern* of their hand ranks
(:func:`agent.acpc.evaluator.rank_hand_fast`): the ranks replaced by their dense order,
ties kept. A showdown's payoffs depend on the cards only through that pattern, so each
terminal stores one payoff vector per pattern, computed by
:meth:`agent.acpc.betting.BettingState.payoffs` (side pots and split pots exactly as the
dealer scores them). Fold endings store one vector. Everything works for N players.

This is for games whose deals can be enumerated (Kuhn, Leduc, small custom decks: at most
:data:`MAX_DEALS`); games with hold'em decks need sampled chance and lossy buckets.

:class:`FlatTree` is the same betting tree without chance, for two-player games whose deals
are sampled (:mod:`strategies.solvers.dealpool`): per-node arrays and, per terminal, position 0's
payoff for each showdown result (:data:`WIN0`, :data:`WIN1`, :data:`TIE`; a fold ending has
one payoff for all three), from :meth:`agent.acpc.betting.BettingState.payoffs`. Two players,
zero sum: position 1 gets the negative.

Lives in the agent because the exploiting agent (:mod:`agent.exploit`) best responds in
the abstract game during a match; the offline tools import it as
:mod:`strategies.games.abstract`. Imports :mod:`agent` and numpy; no numba here (the
kernels live with the solvers and :mod:`agent.strategy.best_response`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import BettingAbstraction, BettingTree, build_tree
from agent.abstraction.buckets import CardAbstraction, LosslessCards
from agent.acpc.cards import deck_for, format_cards
from agent.acpc.errors import UsageError
from agent.acpc.evaluator import rank_hand_fast
from agent.acpc.gamedef import Game, format_gamedef
from agent.strategy.fileformat import TableLayout, table_layout

MAX_DEALS = 2_000_000
"""Largest number of deals :func:`build_abstract_game` enumerates."""
WIN0: Final = 0
"""Showdown result: position 0 wins."""
WIN1: Final = 1
"""Showdown result: position 1 wins."""
TIE: Final = 2
"""Showdown result: a split pot."""

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

AnyInt = npt.NDArray[np.int32] | npt.NDArray[np.int64]
"""An integer array: the enumerated games use int32, the flat trees of pool games int64
(numba compiles one specialisation per combination)."""


class KernelGame(NamedTuple):
    """The flat game every solver kernel takes as one argument (numba accepts a named tuple;
    build it with :func:`kernel_game`). Per node: ``player`` (-1 at terminals), ``round``,
    ``num_actions``, ``child_start`` (into ``children``), ``offset`` (first table index of its
    rows, -1 at terminals), ``rows``, ``terminal`` (index into the terminal arrays, -1 at
    decisions). Per terminal: ``term_set`` (its showdown set, -1 for folds) and
    ``term_payoff[terminal, pattern, position]``. Chance: ``deal_prob`` (per enumerated
    deal; empty for a pool, whose deals are drawn uniformly), ``deal_bucket[deal, position,
    round]`` and ``deal_pattern[deal, showdown set]``."""

    player: AnyInt
    round: AnyInt
    num_actions: AnyInt
    child_start: AnyInt
    children: AnyInt
    offset: I64
    rows: AnyInt
    terminal: AnyInt
    term_set: AnyInt
    term_payoff: F64
    deal_prob: F64
    deal_bucket: npt.NDArray[Any]
    deal_pattern: npt.NDArray[Any]


def kernel_game(
    *, player: AnyInt, round: AnyInt, num_actions: AnyInt, child_start: AnyInt,
    children: AnyInt, offset: I64, rows: AnyInt, terminal: AnyInt, term_set: AnyInt,
    term_payoff: F64, deal_prob: F64, deal_bucket: npt.NDArray[Any],
    deal_pattern: npt.NDArray[Any],
) -> KernelGame:
    """The one builder of a :class:`KernelGame` (every field by name; arrays kept as given).

    Raises:
        UsageError: if the per-node arrays differ in length or a table offset is not int64.
    """
    nodes = len(player)
    for name, arr in (("round", round), ("num_actions", num_actions),
                      ("child_start", child_start), ("offset", offset), ("rows", rows),
                      ("terminal", terminal)):
        if len(arr) != nodes:
            raise UsageError(f"expected {name} of {nodes} nodes (one per node), got {len(arr)}")
    if offset.dtype != np.int64:
        raise UsageError(f"expected int64 table offsets, got {offset.dtype!r}")
    return KernelGame(player, round, num_actions, child_start, children, offset, rows,
                      terminal, term_set, term_payoff, deal_prob, deal_bucket, deal_pattern)


@dataclass(frozen=True, eq=False)
class AbstractGame:
    """A game with its abstractions, flattened (see the module docstring).

    Per-node arrays are indexed by the node ids of :attr:`tree`; per-deal arrays by deal
    index. A strategy table (or a regret table) is a flat float array in the layout
    :attr:`layout`: the row of node ``n`` and bucket ``b`` starts at
    ``offset[n] + b * num_actions[n]``.
    """

    game: Game
    betting: BettingAbstraction
    cards: CardAbstraction
    tree: BettingTree
    layout: TableLayout
    player: I32
    """Acting position per node, -1 at terminals."""
    round: I32
    """Betting round per node."""
    num_actions: I32
    """Actions per node (0 at terminals)."""
    child_start: I32
    """Per node: index of its first child in :attr:`children`."""
    children: I32
    """Child node ids of every node, in action order, concatenated."""
    offset: I64
    """Per node: first table index of its rows (-1 at terminals)."""
    rows: I32
    """Per node: rows in the table (the buckets of its round; 0 at terminals)."""
    terminal: I32
    """Per node: index into the terminal arrays, -1 at decision nodes."""
    term_set: I32
    """Per terminal: index of its showdown set (column of :attr:`deal_pattern`), -1 for a
    hand that ended by folds."""
    term_payoff: F64
    """``[terminal, pattern, position]``: chips won per position (pattern 0 for folds)."""
    showdown_sets: tuple[tuple[int, ...], ...]
    """The sets of positions that reach some showdown, by index."""
    deal_cards: I32
    """``[deal, card]``: hole cards of position 0, 1, ... then the board, in deal order."""
    deal_prob: F64
    """Probability of each deal."""
    deal_bucket: I32
    """``[deal, position, round]``: the bucket of each position's cards in each round."""
    deal_pattern: I32
    """``[deal, showdown set]``: the rank pattern of the set's hands in that deal."""
    max_depth: int
    """Longest path from the root, in actions."""

    @property
    def num_players(self) -> int:
        """Players in the game."""
        return self.game.num_players

    @property
    def num_nodes(self) -> int:
        """Nodes of the abstract betting tree."""
        return len(self.tree.nodes)

    @property
    def num_deals(self) -> int:
        """Enumerated deals."""
        return len(self.deal_prob)

    @property
    def table_size(self) -> int:
        """Values in a strategy table."""
        return self.layout.total

    @property
    def num_infosets(self) -> int:
        """Rows of the table: (decision node, bucket) pairs."""
        return int(self.rows.sum())

    @property
    def max_actions(self) -> int:
        """Most actions at any node."""
        return int(self.num_actions.max(initial=1))

    @property
    def max_buckets(self) -> int:
        """Most buckets in any round."""
        return max(self.layout.buckets)

    def kernel_args(self) -> KernelGame:
        """The arrays the numba kernels take, as one :class:`KernelGame`."""
        return kernel_game(
            player=self.player, round=self.round, num_actions=self.num_actions,
            child_start=self.child_start, children=self.children, offset=self.offset,
            rows=self.rows, terminal=self.terminal, term_set=self.term_set,
            term_payoff=self.term_payoff, deal_prob=self.deal_prob,
            deal_bucket=self.deal_bucket, deal_pattern=self.deal_pattern,
        )

    def identity(self) -> dict[str, Any]:
        """What a solver checkpoint must match: the game, both abstractions and the table
        size."""
        return {
            "game": format_gamedef(self.game),
            "game_fingerprint": self.game.fingerprint,
            "betting": self.betting.to_json(),
            "cards": dict(self.cards.spec),
            "table_len": self.table_size,
        }

    def deal_groups(self, deal: int) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
        """``(hole cards per position, board)`` of a deal."""
        game = self.game
        row = [int(c) for c in self.deal_cards[deal]]
        h = game.num_hole_cards
        holes = tuple(tuple(row[p * h : (p + 1) * h]) for p in range(game.num_players))
        return holes, tuple(row[game.num_players * h :])

    def describe_bucket(self, round_: int, bucket: int) -> str:
        """An example of the cards in a bucket, e.g. ``'Ks | Qh'`` (hole | board so far)."""
        where = np.argwhere(self.deal_bucket[:, :, round_] == bucket)
        if not len(where):
            return "(no deal)"
        deal, position = (int(x) for x in where[0])
        holes, board = self.deal_groups(deal)
        text = format_cards(holes[position])
        visible = board[: self.game.board_cards_through(round_)]
        return f"{text} | {format_cards(visible)}" if visible else text

    def table_row(self, table: npt.NDArray[Any], node: int, bucket: int) -> npt.NDArray[Any]:
        """The row of ``node`` and ``bucket`` in a flat table (a view)."""
        k = int(self.num_actions[node])
        start = int(self.offset[node]) + bucket * k
        return table[start : start + k]


def _deals(deck: Sequence[int], shape: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """Every deal of groups of sizes ``shape`` from ``deck``, flattened, in a fixed order."""

    def rec(left: tuple[int, ...], i: int) -> Iterator[tuple[int, ...]]:
        if i == len(shape):
            yield ()
            return
        for combo in itertools.combinations(left, shape[i]):
            rest = tuple(c for c in left if c not in combo)
            for tail in rec(rest, i + 1):
                yield combo + tail

    yield from rec(tuple(deck), 0)


def _pattern(ranks: Sequence[int]) -> tuple[int, ...]:
    """Ranks replaced by their dense order (0 = weakest), ties kept."""
    order = {r: i for i, r in enumerate(sorted(set(ranks)))}
    return tuple(order[r] for r in ranks)


def count_deals(game: Game) -> int:
    """Number of deals of ``game``: hole cards per position, then each round's board."""
    left = len(deck_for(game))
    count = 1
    for size in [game.num_hole_cards] * game.num_players + list(game.num_board_cards):
        count *= math.comb(left, size) if size <= left else 0
        left -= size
    return count


def check_enumerable(game: Game, max_deals: int = MAX_DEALS) -> int:
    """:func:`count_deals` after checking the builder can enumerate them.

    Raises:
        ValueError: if the deck is too small or there are more than ``max_deals`` deals.
    """
    count = count_deals(game)
    if count == 0:
        raise UsageError(f"expected a deck with enough cards for a hand, got "
                         f"{len(deck_for(game))} cards for {game.cards_per_hand}")
    if count > max_deals:
        raise UsageError(
            f"expected a game with at most {max_deals} deals to enumerate, got {count}: "
            f"this builder is for small games (Kuhn, Leduc)"
        )
    return count


def enumerate_deals(
    game: Game, cards: CardAbstraction, max_deals: int = MAX_DEALS
) -> tuple[I32, F64, I32, I64]:
    """Every deal of ``game``: ``(cards[deal, card], prob[deal], bucket[deal, position,
    round], rank[deal, position])`` (module docstring; the rank of each position's hole cards
    with the whole board).

    Raises:
        UsageError: if the deals cannot be enumerated or a bucket is out of range.
    """
    n_players, n_rounds = game.num_players, game.num_rounds
    count = check_enumerable(game, max_deals)
    deck = deck_for(game)
    shape = [game.num_hole_cards] * n_players + list(game.num_board_cards)
    need = sum(shape)
    buckets = tuple(int(b) for b in cards.buckets)
    deal_cards = np.array(list(_deals(deck, shape)), dtype=np.int32).reshape(count, need)
    deal_prob = np.full(count, 1.0 / count)
    h = game.num_hole_cards
    deal_bucket = np.zeros((count, n_players, n_rounds), dtype=np.int32)
    hand_rank = np.zeros((count, n_players), dtype=np.int64)
    for d in range(count):
        row = [int(c) for c in deal_cards[d]]
        board = row[n_players * h :]
        for p in range(n_players):
            hole = row[p * h : (p + 1) * h]
            for r in range(n_rounds):
                visible = board[: game.board_cards_through(r)]
                b = cards.bucket(r, hole, visible)
                if not 0 <= b < buckets[r]:
                    raise UsageError(
                        f"expected buckets in 0..{buckets[r] - 1} for round {r}, the card "
                        f"abstraction gave {b} for hole {hole!r} board {visible!r}"
                    )
                deal_bucket[d, p, r] = b
            hand_rank[d, p] = rank_hand_fast(hole + board)
    return deal_cards, deal_prob, deal_bucket, hand_rank


def tree_fields(tree: BettingTree, buckets: Sequence[int]) -> dict[str, Any]:
    """The fields of an :class:`AbstractGame` that come from its betting tree and the
    buckets per round alone: ``tree``, ``layout``, the per-node arrays and ``max_depth``
    (terminal ``i`` is the ``i``-th terminal node in id order)."""
    layout = table_layout(tree, tuple(int(b) for b in buckets))
    nodes = tree.nodes
    n = len(nodes)
    player = np.full(n, -1, dtype=np.int32)
    round_ = np.zeros(n, dtype=np.int32)
    num_actions = np.zeros(n, dtype=np.int32)
    child_start = np.zeros(n, dtype=np.int32)
    children: list[int] = []
    terminal = np.full(n, -1, dtype=np.int32)
    count = 0
    depth = np.zeros(n, dtype=np.int64)
    for node in nodes:
        round_[node.id] = node.round
        child_start[node.id] = len(children)
        children.extend(node.children)
        if node.parent >= 0:
            depth[node.id] = depth[node.parent] + 1
        if node.is_terminal:
            terminal[node.id] = count
            count += 1
        else:
            player[node.id] = node.player
            num_actions[node.id] = len(node.actions)
    return {"tree": tree, "layout": layout, "player": player, "round": round_,
            "num_actions": num_actions, "child_start": child_start,
            "children": np.array(children, dtype=np.int32),
            "offset": layout.offsets.astype(np.int64), "rows": layout.rows.astype(np.int32),
            "terminal": terminal, "max_depth": int(depth.max(initial=0))}


def build_abstract_game(
    game: Game,
    betting: BettingAbstraction,
    cards: CardAbstraction | None = None,
    *,
    tree: BettingTree | None = None,
    max_deals: int = MAX_DEALS,
) -> AbstractGame:
    """Flatten ``game`` with its betting and card abstractions (see the module docstring).

    Args:
        game: the real game.
        betting: the betting abstraction (for limit games any preset gives the whole game).
        cards: the card abstraction; lossless (:class:`LosslessCards`) by default.
        tree: the tree of ``game`` and ``betting`` if already built.
        max_deals: refuse games with more deals than this.

    Raises:
        ValueError: if the deals cannot be enumerated (too many) or the card abstraction
            does not fit the game.
    """
    n_players = game.num_players
    check_enumerable(game, max_deals)
    if cards is None:
        cards = LosslessCards(game)
    if tree is None or tree.game != game or tree.abstraction != betting:
        tree = build_tree(game, betting)
    buckets = tuple(int(b) for b in cards.buckets)

    fields = tree_fields(tree, buckets)
    nodes = tree.nodes
    terminals = [node.id for node in nodes if node.is_terminal]

    # ------------------------------------------------------------------ the deals
    deal_cards, deal_prob, deal_bucket, hand_rank = enumerate_deals(game, cards, max_deals)
    count = len(deal_prob)

    # ------------------------------------------------------------------ showdowns
    sets: dict[tuple[int, ...], int] = {}
    term_set = np.full(len(terminals), -1, dtype=np.int32)
    for t, node_id in enumerate(terminals):
        state = nodes[node_id].state
        if state.is_showdown:
            active = tuple(p for p in range(n_players) if not state.folded[p])
            term_set[t] = sets.setdefault(active, len(sets))
    showdown_sets = tuple(sorted(sets, key=sets.__getitem__))
    deal_pattern = np.zeros((count, max(1, len(sets))), dtype=np.int32)
    patterns: list[list[tuple[int, ...]]] = []
    for s, active in enumerate(showdown_sets):
        index: dict[tuple[int, ...], int] = {}
        for d in range(count):
            key = _pattern([int(hand_rank[d, p]) for p in active])
            deal_pattern[d, s] = index.setdefault(key, len(index))
        patterns.append(sorted(index, key=index.__getitem__))
    width = max([len(p) for p in patterns] + [1])
    term_payoff = np.zeros((len(terminals), width, n_players))
    for t, node_id in enumerate(terminals):
        state = nodes[node_id].state
        s = int(term_set[t])
        if s < 0:
            term_payoff[t, :, :] = state.payoffs()
            continue
        active = showdown_sets[s]
        for i, key in enumerate(patterns[s]):
            ranks = [0] * n_players
            for p, r in zip(active, key, strict=True):
                ranks[p] = r
            term_payoff[t, i, :] = state.payoffs(ranks)

    return AbstractGame(
        game=game,
        betting=betting,
        cards=cards,
        **fields,
        term_set=term_set,
        term_payoff=term_payoff,
        showdown_sets=showdown_sets,
        deal_cards=deal_cards,
        deal_prob=deal_prob,
        deal_bucket=deal_bucket,
        deal_pattern=deal_pattern,
    )


def player_rows(game: AbstractGame, player: int) -> npt.NDArray[np.bool_]:
    """Per table entry: True at the rows of ``player``'s decision nodes."""
    mask = np.zeros(game.table_size, dtype=bool)
    for node in np.flatnonzero((game.offset >= 0) & (game.player == player)):
        start = int(game.offset[node])
        mask[start : start + int(game.rows[node]) * int(game.num_actions[node])] = True
    return mask


class RowTable(Protocol):
    """A table layout by node: what :func:`normalise_rows` reads (an :class:`AbstractGame`,
    a continuous game of :mod:`strategies.sizes.learned`)."""

    @property
    def offset(self) -> I64: ...
    @property
    def num_actions(self) -> npt.NDArray[Any]: ...
    @property
    def rows(self) -> npt.NDArray[Any]: ...
    @property
    def table_size(self) -> int: ...


def normalise_rows(game: RowTable, sums: npt.ArrayLike) -> F64:
    """Each row of ``sums`` (negatives read as 0) divided by its total, in float64; rows
    with no positive total become uniform."""
    values = np.asarray(sums, dtype=np.float64).reshape(-1)
    out = np.empty(game.table_size)
    for node in np.flatnonzero(game.offset >= 0):
        k = int(game.num_actions[node])
        start = int(game.offset[node])
        count = int(game.rows[node])
        block = np.maximum(values[start : start + count * k].reshape(count, k), 0.0)
        total = block.sum(axis=1, keepdims=True)
        safe = np.where(total > 0.0, total, 1.0)
        out[start : start + count * k] = np.where(total > 0.0, block / safe, 1.0 / k).ravel()
    return out


def uniform_table(game: AbstractGame) -> F64:
    """The strategy that plays every abstract action with equal probability."""
    table = np.empty(game.table_size)
    for node in np.flatnonzero(game.offset >= 0):
        k = int(game.num_actions[node])
        start = int(game.offset[node])
        table[start : start + int(game.rows[node]) * k] = 1.0 / k
    return table


# --------------------------------------------------------------------------- flat tree


@dataclass(frozen=True, eq=False)
class FlatTree:
    """The abstract betting tree as flat arrays (see the module docstring)."""

    tree: BettingTree
    layout: TableLayout
    player: I64
    """Per node: the acting position (-1 at terminals)."""
    round: I64
    """Per node: the betting round."""
    num_actions: I64
    """Per node: actions (0 at terminals)."""
    child_start: I64
    """Per node: index of its first child in :attr:`children`."""
    children: I64
    offset: I64
    """Per node: first table index of its rows (-1 at terminals)."""
    term_value: F64
    """Per node, shape ``(nodes, 3)``: position 0's payoff for results WIN0, WIN1, TIE
    (zeros at decision nodes)."""

    @property
    def table_size(self) -> int:
        return self.layout.total

    @property
    def max_depth(self) -> int:
        depth = np.zeros(len(self.player), dtype=np.int64)
        for n in range(len(self.player)):
            s = int(self.child_start[n])
            for c in self.children[s : s + int(self.num_actions[n])]:
                depth[c] = depth[n] + 1
        return int(depth.max())

    def arrays(self) -> tuple[I64, I64, I64, I64, I64, I64, F64]:
        """What the kernels take, in order."""
        return (self.player, self.round, self.num_actions, self.child_start, self.children,
                self.offset, self.term_value)


def flatten_tree(tree: BettingTree, buckets: tuple[int, ...]) -> FlatTree:
    """Flat arrays of ``tree`` for a table with ``buckets`` per round.

    Raises:
        ValueError: unless the game has two players.
    """
    if tree.game.num_players != 2:
        raise UsageError(f"expected a 2-player game, got {tree.game.num_players} players")
    layout = table_layout(tree, buckets)
    n = len(tree.nodes)
    player = np.full(n, -1, dtype=np.int64)
    rnd = np.zeros(n, dtype=np.int64)
    num_actions = np.zeros(n, dtype=np.int64)
    child_start = np.zeros(n, dtype=np.int64)
    children: list[int] = []
    term_value = np.zeros((n, 3))
    for node in tree.nodes:
        rnd[node.id] = node.round
        child_start[node.id] = len(children)
        if node.is_terminal:
            state = node.state
            for result, ranks in ((WIN0, (1, 0)), (WIN1, (0, 1)), (TIE, (0, 0))):
                term_value[node.id, result] = state.payoffs(ranks)[0]
            continue
        player[node.id] = node.player
        num_actions[node.id] = len(node.actions)
        children.extend(node.children)
    offset = np.asarray(layout.offsets, dtype=np.int64).copy()
    return FlatTree(tree, layout, player, rnd, num_actions, child_start,
                    np.asarray(children, dtype=np.int64), offset, term_value)
