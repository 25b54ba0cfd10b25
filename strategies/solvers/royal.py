"""CFR+ on the public tree for two-round board games with lossless cards (Royal hold'em).

Royal no-limit hold'em has about 16 M ordered deals, more than :mod:`strategies.games.abstract`
enumerates (``MAX_DEALS``). This solver never lists deals. It walks the abstract betting
tree once per board, vectorised over the hands that do not touch the board, exactly like
:mod:`strategies.measure.translation.royal_br`, whose hands, boards and terminal kernel it uses:

- Chance is exact (no sampling): every board is weighted by its suit-isomorphism class,
  one board per class is walked (95 for Royal's 1,140 flops), and the values of the first
  round are the sums over the class's relabelled hands. Valid because the cards are
  lossless up to suit isomorphism (:class:`agent.abstraction.buckets.LosslessCards`,
  which is also the strategy file's card abstraction: the table is the usual layout).
- CFR+ (regret matching+, alternating updates, linear averaging of the strategy): one
  iteration updates position 0 against the current strategy, then position 1 against the
  updated one; each update is one pass over the boards.

:class:`RoyalGame` is a game adapter of the one solver: ``Solver(RoyalGame(game, betting),
"cfr+")`` runs these passes (any other configuration is refused), with the solver's
checkpoints; ``EGTSolver(RoyalGame(game, betting))`` runs the excessive gap technique
(:mod:`strategies.solvers.egt`) on the same tree, each of its products with the payoff
matrix one pass of the same walk (:meth:`RoyalGame.walk`, :class:`RoyalSaddle`);
:meth:`RoyalGame.exploitability` measures a table's abstract-game best responses
(:meth:`strategies.measure.translation.royal_br.RoyalLab.abstract`). A recipe with
``cards="royal"`` names this adapter (:mod:`strategies.solvers.recipe`).

Imports numpy, numba, :mod:`agent` and :mod:`strategies`; never imported by :mod:`agent`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import BettingAbstraction, BettingTree, build_tree
from agent.abstraction.buckets import CardAbstraction
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game, format_gamedef
from agent.jit import kernel
from agent.strategy.fileformat import table_layout
from strategies.measure.translation.royal_br import (
    KIND_FOLD,
    KIND_SHOWDOWN,
    Deals,
    RoyalLab,
    build_deals,
    check_game,
    lossless_cards,
    table_agent,
    terminal_kernel,
)
from strategies.solvers.cfr import FrozenRows, SolverConfig
from strategies.solvers.egt import Saddle, Treeplex
from strategies.solvers.kernels import regret_matching_table

F64 = npt.NDArray[np.float64]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
B1 = npt.NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class TreeArrays:
    """The abstract tree as flat arrays (node ids in pre-order)."""

    player: I32
    kind: I32
    """-1 decision node, else ``KIND_FOLD`` / ``KIND_SHOWDOWN``."""
    on_board: B1
    child_start: I32
    children: I32
    offset: I64
    num_actions: I32
    round: I32
    payoff: F64
    """``[seat, node, 3]``: the seat's chips at a terminal (``[wins, loses, tie]``)."""


def tree_arrays(tree: BettingTree, buckets: tuple[int, ...]) -> TreeArrays:
    """Flatten ``tree`` (its table layout for ``buckets``)."""
    layout = table_layout(tree, buckets)
    n = len(tree.nodes)
    player = np.full(n, -1, dtype=np.int32)
    kind = np.full(n, -1, dtype=np.int32)
    on_board = np.zeros(n, dtype=np.bool_)
    rnd = np.zeros(n, dtype=np.int32)
    payoff = np.zeros((2, n, 3))
    starts = [0]
    kids: list[int] = []
    for node in tree.nodes:
        state = node.state
        rnd[node.id] = state.round
        if node.is_terminal:
            on_board[node.id] = True
            if state.num_folded:
                kind[node.id] = KIND_FOLD
                for s in (0, 1):
                    payoff[s, node.id] = state.payoffs()[s]
            else:
                kind[node.id] = KIND_SHOWDOWN
                for s in (0, 1):
                    for j, (mine, theirs) in enumerate(((1, 0), (0, 1), (0, 0))):
                        ranks = (mine, theirs) if s == 0 else (theirs, mine)
                        payoff[s, node.id, j] = state.payoffs(ranks)[s]
        else:
            player[node.id] = state.player
            on_board[node.id] = state.round > 0
            assert all(c > node.id for c in node.children), "expected the tree in pre-order"
            kids.extend(node.children)
        starts.append(len(kids))
    return TreeArrays(player, kind, on_board, np.array(starts, dtype=np.int32),
                      np.array(kids, dtype=np.int32), np.asarray(layout.offsets),
                      np.asarray(layout.num_actions), rnd, payoff)


# --------------------------------------------------------------------------- kernels


@kernel
def _cfr_board(
    p: int, player: I32, kind: I32, on_board: B1, child_start: I32, children: I32,
    offset: I64, num_actions: I32, rnd: I32, payoff: F64, sigma: F64, hand_bucket: I32,
    cards: I32, order: I64, ranks: I64, w: float, wt: float, reach_own: F64,
    reach_opp: F64, cfv: F64, regret_delta: F64, strat_sum: F64, scratch: F64,
    gradient: bool,
) -> None:
    """Position ``p``'s counterfactual values on one board (weight ``w``: boards of its
    class), its regret and average-strategy increments at its nodes of later rounds.

    With ``gradient`` (EGT's product with ``A``: :meth:`RoyalGame.walk`), ``p``'s own nodes
    do not play ``sigma``: each action's value goes into ``regret_delta`` (weighted by
    ``w``) and the node passes 0 up, so ``regret_delta`` gathers ``p``'s payoff per
    sequence whose last action of ``p`` it is; ``strat_sum`` is left alone."""
    n_hands = cfv.shape[1]
    for h in range(n_hands):
        reach_own[0, h] = 1.0
        reach_opp[0, h] = 1.0
    for n in range(len(player)):
        if kind[n] >= 0:
            continue
        k = num_actions[n]
        r = rnd[n]
        for i in range(k):
            c = children[child_start[n] + i]
            for h in range(n_hands):
                prob = sigma[offset[n] + hand_bucket[r, h] * k + i]
                if player[n] == p:
                    reach_own[c, h] = reach_own[n, h] * prob
                    reach_opp[c, h] = reach_opp[n, h]
                else:
                    reach_own[c, h] = reach_own[n, h]
                    reach_opp[c, h] = reach_opp[n, h] * prob
    for n in range(len(player) - 1, -1, -1):
        if not on_board[n]:
            continue
        if kind[n] >= 0:
            terminal_kernel(reach_opp[n], cards, order, ranks, kind[n] == 2, payoff[n], scratch[0],
                      scratch[1], scratch[2], cfv[n])
            continue
        k = num_actions[n]
        r = rnd[n]
        for h in range(n_hands):
            cfv[n, h] = 0.0
        if player[n] != p:
            for i in range(k):
                c = children[child_start[n] + i]
                for h in range(n_hands):
                    cfv[n, h] += cfv[c, h]
            continue
        if gradient:
            for h in range(n_hands):
                base = offset[n] + hand_bucket[r, h] * k
                for i in range(k):
                    regret_delta[base + i] += w * cfv[children[child_start[n] + i], h]
            continue
        for h in range(n_hands):
            base = offset[n] + hand_bucket[r, h] * k
            v = 0.0
            for i in range(k):
                v += sigma[base + i] * cfv[children[child_start[n] + i], h]
            cfv[n, h] = v
            own = reach_own[n, h] * wt * w
            for i in range(k):
                regret_delta[base + i] += w * (cfv[children[child_start[n] + i], h] - v)
                strat_sum[base + i] += own * sigma[base + i]


@kernel
def _cfr_first_round(
    p: int, player: I32, on_board: B1, child_start: I32, children: I32, offset: I64,
    num_actions: I32, sigma: F64, bucket0: I32, wt: float, reach_own: F64, values: F64,
    regret_delta: F64, strat_sum: F64, gradient: bool,
) -> None:
    """The first round for position ``p`` over every hand: ``values`` holds the boards'
    summed values at the board-dependent nodes on entry. ``gradient``: as
    :func:`_cfr_board`'s, at ``p``'s first-round nodes."""
    n_hands = values.shape[1]
    for h in range(n_hands):
        reach_own[0, h] = 1.0
    for n in range(len(player)):
        if on_board[n]:
            continue
        k = num_actions[n]
        for i in range(k):
            c = children[child_start[n] + i]
            for h in range(n_hands):
                prob = sigma[offset[n] + bucket0[h] * k + i] if player[n] == p else 1.0
                reach_own[c, h] = reach_own[n, h] * prob
    for n in range(len(player) - 1, -1, -1):
        if on_board[n]:
            continue
        k = num_actions[n]
        mine = player[n] == p
        for h in range(n_hands):
            base = offset[n] + bucket0[h] * k
            if gradient and mine:
                for i in range(k):
                    regret_delta[base + i] += values[children[child_start[n] + i], h]
                values[n, h] = 0.0
                continue
            v = 0.0
            for i in range(k):
                cv = values[children[child_start[n] + i], h]
                v += sigma[base + i] * cv if player[n] == p else cv
            values[n, h] = v
            if player[n] == p:
                own = reach_own[n, h] * wt
                for i in range(k):
                    regret_delta[base + i] += values[children[child_start[n] + i], h] - v
                    strat_sum[base + i] += own * sigma[base + i]


@kernel
def _add_images(rows: I32, cfv: F64, images: I32, values: F64) -> None:
    """``values[row, images[j, h]] += cfv[row, h]`` for every board of the class ``j``."""
    for j in range(images.shape[0]):
        for row in rows:
            for h in range(cfv.shape[1]):
                values[row, images[j, h]] += cfv[row, h]


# --------------------------------------------------------------------------- solver


class RoyalGame:
    """The game adapter of a two-round board game's public tree
    (:class:`strategies.solvers.cfr.SolverGame`; module docstring): the one
    :class:`~strategies.solvers.cfr.Solver` with the ``cfr+`` configuration runs CFR+ here.

    Raises:
        UsageError: for a game that is not a two-round board game, or cards that are not
            lossless.
    """

    def __init__(self, game: Game, betting: BettingAbstraction,
                 cards: CardAbstraction | None = None) -> None:
        check_game(game)
        self.game = game
        self.betting = betting
        self.tree = build_tree(game, betting)
        if cards is None:
            cards = lossless_cards(game)
        if cards.spec.get("kind") != "lossless":
            raise UsageError(f"expected lossless cards (suit isomorphism), got "
                             f"{cards.spec.get('kind')!r}")
        self.cards = cards
        self.buckets = tuple(int(b) for b in cards.buckets)
        self.arrays = tree_arrays(self.tree, self.buckets)
        self.layout = table_layout(self.tree, self.buckets)
        self.deals: Deals = build_deals(game, True)
        size = self.layout.total
        owner = np.zeros(size, dtype=np.int32)
        for node in self.tree.nodes:
            if not node.is_terminal:
                start = int(self.layout.offsets[node.id])
                owner[start : start + int(self.layout.rows[node.id]) *
                      len(node.children)] = node.player
        self.owner = owner
        a = self.arrays
        boundary = {int(c) for n in range(len(a.player)) if a.kind[n] < 0 and
                    not a.on_board[n]
                    for c in a.children[a.child_start[n] : a.child_start[n + 1]]
                    if a.on_board[c]}
        self.boundary = np.array(sorted(boundary), dtype=np.int32)
        """Board-dependent nodes whose parent is a first-round decision: the only rows the
        first round reads."""
        self.bucket0 = np.array([cards.bucket(0, [int(c) for c in hand], [])
                                 for hand in self.deals.hand_cards], dtype=np.int32)
        self.board_buckets: list[I32] = []
        for board in self.deals.boards:
            hb = np.empty((2, len(board.hands)), dtype=np.int32)
            for j, h in enumerate(board.hands):
                hole = [int(c) for c in self.deals.hand_cards[h]]
                hb[0, j] = self.bucket0[h]
                hb[1, j] = cards.bucket(1, hole, list(board.cards))
            self.board_buckets.append(hb)

    @property
    def table_size(self) -> int:
        return int(self.layout.total)

    def identity(self) -> dict[str, Any]:
        """What a solver checkpoint must match: the game, both abstractions, the table."""
        return {"game": format_gamedef(self.game), "game_fingerprint": self.game.fingerprint,
                "betting": self.betting.to_json(), "cards": dict(self.cards.spec),
                "table_len": self.table_size}

    def runner(self, config: SolverConfig, frozen: FrozenRows | None) -> _RoyalRunner:
        """CFR+ only: regret matching+, alternating, linear averaging (``cfr+``)."""
        if (config.sampling != "full" or not config.alternating or not config.regret_plus
                or config.discount or config.gamma != 1.0 or frozen is not None):
            raise UsageError(f"expected cfr+ for the public-tree solver, got "
                             f"{config.name!r}")
        return _RoyalRunner(self)

    def average(self, strategy_sum: F64, regrets: F64, frozen: FrozenRows | None) -> F64:
        """The average strategy (rows of no weight uniform)."""
        out = np.empty_like(strategy_sum)
        self.regret_match(strategy_sum, out)
        return out

    def regret_match(self, values: F64, out: F64) -> None:
        """``out``: every row of ``values`` regret-matched (uniform where none positive)."""
        lay = self.layout
        regret_matching_table(values, np.asarray(lay.offsets), np.asarray(lay.rows),
                      np.asarray(lay.num_actions), out)

    def exploitability(self, table: F64) -> tuple[float, float]:
        """Abstract-game best responses ``(br0, br1)`` to ``table`` (chips per hand)."""
        return RoyalLab(table_agent(self.tree, self.cards, table)).abstract().best_responses

    @property
    def num_deals(self) -> int:
        """Ordered deals (hands of both positions and a board), all equally likely."""
        return int(self.deals.num_hands * self.deals.per_hand)

    def walk(self, p: int, sigma: F64, wt: float, delta: F64, strategy_sum: F64, *,
             gradient: bool = False) -> float:
        """One pass over the public tree for position ``p`` against ``sigma`` (behaviour
        probabilities in table layout), every board of a suit class walked once: CFR+'s
        (``delta`` gets ``p``'s regret increments, ``strategy_sum`` its average-strategy
        increments with weight ``wt``) or, with ``gradient``, EGT's product with ``A``
        (``delta`` gets ``p``'s payoff per own sequence, summed over the deals: the
        ``gradient`` of :func:`_cfr_board`). The one walk both solvers run. Returns the
        root's value summed over the hands (with ``gradient``: ``p``'s payoff at the
        terminals it reaches without acting, the empty sequence's)."""
        a = self.arrays
        n = len(a.player)
        values = np.zeros((n, self.deals.num_hands))
        scratch = np.zeros((3, 52))
        for board, hb in zip(self.deals.boards, self.board_buckets, strict=True):
            m = len(board.hands)
            reach_own = np.zeros((n, m))
            reach_opp = np.zeros((n, m))
            cfv = np.zeros((n, m))
            cards = np.ascontiguousarray(self.deals.hand_cards[board.hands])
            _cfr_board(p, a.player, a.kind, a.on_board, a.child_start, a.children, a.offset,
                       a.num_actions, a.round, a.payoff[p], sigma, hb, cards,
                       board.order, board.ranks, float(len(board.images)), wt, reach_own,
                       reach_opp, cfv, delta, strategy_sum, scratch, gradient)
            _add_images(self.boundary, cfv, board.images, values)
        _cfr_first_round(p, a.player, a.on_board, a.child_start, a.children, a.offset,
                         a.num_actions, sigma, self.bucket0, wt,
                         np.zeros((n, self.deals.num_hands)), values, delta, strategy_sum,
                         gradient)
        return float(values[0].sum())

    def egt_saddle(self) -> RoyalSaddle:
        """The sequence-form saddle point for the excessive gap technique
        (:class:`strategies.solvers.egt.EGTSolver`), its products by :meth:`walk`."""
        return RoyalSaddle(self)


class _RoyalRunner:
    """One CFR+ iteration: position 0's pass over the boards, then position 1's against
    the updated strategy; ``sigma`` is the regret matching of the regrets."""

    def __init__(self, game: RoyalGame) -> None:
        self.game = game
        self.sigma = np.zeros(game.table_size)

    def run(self, iterations: int, t0: int, regrets: F64, strategy_sum: F64,
            rng_state: I64) -> float:
        self.game.regret_match(regrets, self.sigma)
        for i in range(iterations):
            wt = float(t0 + i + 1)
            self._pass(0, wt, regrets, strategy_sum)
            self._pass(1, wt, regrets, strategy_sum)
        return 0.0

    def _pass(self, p: int, wt: float, regrets: F64, strategy_sum: F64) -> None:
        g = self.game
        delta = np.zeros_like(regrets)
        g.walk(p, self.sigma, wt, delta, strategy_sum)
        mine = g.owner == p
        regrets[mine] = np.maximum(regrets[mine] + delta[mine], 0.0)
        g.regret_match(regrets, self.sigma)


# --------------------------------------------------------------------------- EGT


class RoyalSaddle(Saddle):
    """The saddle point ``max_x min_y x'Ay`` of a :class:`RoyalGame` without ``A``: a
    product ``A v`` is one :meth:`RoyalGame.walk` with ``gradient`` (the other position's
    behaviour from ``v``), so EGT (:class:`strategies.solvers.egt.EGTSolver`, the steps of
    :func:`strategies.solvers.kernels.egt_advance`) runs on Royal's public tree, five walks
    per try of a step.

    A treeplex's sequences are the position's table entries (``table_index``), its
    information sets the rows of its nodes, children before parents (nodes in reverse
    pre-order); a second-round row's parent sequence is the row of the hand's first-round
    bucket (lossless cards: the second-round bucket determines it). ``A`` is position 0's
    expected payoff (over the equally likely ordered deals, chips per hand). The first
    smoothing starts at a bound on ``max |A_ij|``: the largest payoff times the largest
    probability of a pair of first-round buckets (every deal behind ``A_ij`` has the hands
    of ``i``'s and ``j``'s first-round buckets and reaches one terminal).

    Raises:
        UsageError: if the second-round buckets do not determine the first-round ones.
    """

    def __init__(self, game: RoyalGame) -> None:
        self.game = game
        second_to_first = np.full(game.buckets[1], -1, dtype=np.int64)
        for hb in game.board_buckets:
            seen = second_to_first[hb[1]]
            if ((seen >= 0) & (seen != hb[0])).any():
                raise UsageError("expected second-round buckets that determine the "
                                 "first-round bucket (perfect recall), got one in two")
            second_to_first[hb[1]] = hb[0]
        self.second_to_first = second_to_first
        self.x, self.y = (self._treeplex(p) for p in (0, 1))
        self.seq_parent = tuple(self._seq_parent(tp) for tp in (self.x, self.y))
        """Per position: each sequence's parent sequence (0 for the empty one itself)."""
        self.d_x = self.entropy_range(self.x)
        self.d_y = self.entropy_range(self.y)
        self.scale = self._scale()

    def _treeplex(self, p: int) -> Treeplex:
        g = self.game
        a = g.arrays
        lay = g.layout
        entries = np.flatnonzero(g.owner == p)
        seq_of = np.zeros(g.table_size, dtype=np.int64)
        seq_of[entries] = np.arange(1, len(entries) + 1)
        up = np.full(len(a.player), -1, dtype=np.int64)
        up_action = np.zeros(len(a.player), dtype=np.int64)
        for n in range(len(a.player)):
            for i in range(int(a.child_start[n]), int(a.child_start[n + 1])):
                up[a.children[i]] = n
                up_action[a.children[i]] = i - int(a.child_start[n])
        seq0: list[I64] = []
        ks: list[I64] = []
        parents: list[I64] = []
        for n in range(len(a.player) - 1, -1, -1):  # children before parents
            if a.kind[n] >= 0 or a.player[n] != p:
                continue
            k = int(a.num_actions[n])
            rows = np.arange(int(lay.rows[n]), dtype=np.int64)
            seq0.append(seq_of[int(a.offset[n]) + rows * k])
            ks.append(np.full(len(rows), k, dtype=np.int64))
            cur, m = n, int(up[n])
            while m >= 0 and a.player[m] != p:
                cur, m = m, int(up[m])
            if m < 0:
                parents.append(np.zeros(len(rows), dtype=np.int64))
                continue
            bm = rows if a.round[m] == a.round[n] else self.second_to_first[rows]
            parents.append(seq_of[int(a.offset[m]) + bm * int(a.num_actions[m])
                                  + int(up_action[cur])])
        seq0_all = np.concatenate(seq0) if seq0 else np.zeros(0, dtype=np.int64)
        return Treeplex(seq0=seq0_all, k=np.concatenate(ks) if ks else seq0_all.copy(),
                        parent=np.concatenate(parents) if parents else seq0_all.copy(),
                        weight=np.ones(len(seq0_all)),
                        table_index=np.concatenate([[-1], entries]).astype(np.int64))

    @staticmethod
    def _seq_parent(tp: Treeplex) -> I64:
        out = np.zeros(tp.size, dtype=np.int64)
        first = np.repeat(tp.seq0 - np.cumsum(tp.k) + tp.k, tp.k)
        out[first + np.arange(int(tp.k.sum()))] = np.repeat(tp.parent, tp.k)
        return out

    def _scale(self) -> float:
        g = self.game
        hands = g.deals.hand_cards
        n, b0 = len(hands), g.bucket0
        pairs = np.zeros((g.buckets[0], g.buckets[0]))
        for h in range(n):
            free = ~np.isin(hands, hands[h]).any(axis=1)
            np.add.at(pairs[b0[h]], b0[free], 1.0)
        per_hand = int((~np.isin(hands, hands[0]).any(axis=1)).sum())
        return float(np.abs(g.arrays.payoff).max() * pairs.max() / (n * per_hand))

    def _gradient(self, p: int, plan: F64, out: F64) -> None:
        """``out``: position ``p``'s expected payoff per own sequence against the other
        position's realisation plan ``plan``."""
        g = self.game
        other = self.y if p == 0 else self.x
        parent = plan[self.seq_parent[1 - p]]
        behaviour = np.divide(plan, parent, out=np.zeros_like(plan), where=parent > 0.0)
        sigma = np.zeros(g.table_size)
        sigma[other.table_index[1:]] = behaviour[1:]
        delta = np.zeros(g.table_size)
        root = g.walk(p, sigma, 1.0, delta, np.zeros(0), gradient=True)
        own = self.x if p == 0 else self.y
        out[0] = root / g.num_deals
        out[1:] = delta[own.table_index[1:]] / g.num_deals

    def product_a(self, v: F64, out: F64) -> None:
        self._gradient(0, v, out)

    def product_at(self, v: F64, out: F64) -> None:
        self._gradient(1, v, out)
        np.negative(out, out=out)

    def uniform_table(self) -> F64:
        lay = self.game.layout
        table = np.zeros(self.game.table_size)
        for n in np.flatnonzero(np.asarray(lay.offsets) >= 0):
            k, start = int(lay.num_actions[n]), int(lay.offsets[n])
            table[start : start + int(lay.rows[n]) * k] = 1.0 / k
        return table


# --------------------------------------------------------------------------- recipes


def stored_average(game: RoyalGame, average: F64, dtype: str) -> F64:
    """``average`` as it reads back from a file of ``dtype`` (float32 or uint16)."""
    from agent.strategy.fileformat import quantize_rows

    if dtype == "uint16":
        return quantize_rows(average, game.layout).astype(np.float64)
    return np.asarray(average.astype(np.float32), dtype=np.float64)
