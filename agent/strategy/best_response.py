"""Best responses and expected values in the abstract game: the numba kernels and their
typed wrappers.

Measured in the *abstract* game of :mod:`agent.strategy.abstract_game`: the best responder
may use only the abstract actions and sees only its buckets, exactly as a strategy file is
played. All figures are chips per hand (the game's own units), averaged over the enumerated
deals. :func:`best_response` for position ``p`` is the most ``p`` can win on average
against the other positions playing the table (a pure strategy: one-hot rows);
:func:`expected_values` is what every position wins when all play it.

Best responses are computed bottom-up, vectorised over chance: every tree node holds a
vector over deals of the responder's value weighted by chance and the others' reach; at the
responder's nodes each bucket picks the action with the largest sum over its deals. This
is exact for perfect-recall abstractions (lossless buckets are). The kernels are private
:func:`agent.jit.kernel` functions with pure-Python oracles in
``tests/strategies/test_best_response.py``.

They live in the agent because the exploiting agent (:mod:`agent.exploit`) best responds
to its model of the opponent during a match; the offline measurements (exploitability,
:mod:`strategies.measure.best_response`) use the same kernels. Imports numpy, numba and
:mod:`agent`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agent.acpc.errors import UsageError
from agent.jit import kernel
from agent.strategy.abstract_game import AbstractGame, KernelGame, normalise_rows
from agent.strategy.fileformat import DTYPES, QUANT, Strategy, TableLayout
from agent.strategy.kernels import purify_rows
from agent.strategy.purification import Purification

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


# --------------------------------------------------------------------------- kernels


@kernel
def _value_pass(
    g: KernelGame, strategy: F64, value: F64, node_at: I64, next_action: I64, keep: F64
) -> None:
    """Expected payoff of every player for every deal into ``value[0]`` (players x deals);
    with a non-empty ``keep`` (nodes x players x deals) every node's values too.

    Depth-first with an explicit stack: ``value[depth]`` is the frame of the node at that
    depth on the current path.
    """
    (player, rnd, num_actions, child_start, children, offset, _rows, terminal, term_set,
     term_payoff, _deal_prob, deal_bucket, deal_pattern) = g  # fmt: skip
    n_players = value.shape[1]
    n_deals = value.shape[2]
    depth = 0
    node_at[0] = 0
    next_action[0] = -1
    while depth >= 0:
        node = node_at[depth]
        a = next_action[depth]
        k = num_actions[node]
        if a < 0:
            t = terminal[node]
            if t >= 0:
                s = term_set[t]
                for d in range(n_deals):
                    pattern = 0 if s < 0 else deal_pattern[d, s]
                    for q in range(n_players):
                        value[depth, q, d] = term_payoff[t, pattern, q]
                if keep.shape[0] > 0:
                    keep[node] = value[depth]
                depth -= 1
                continue
            for q in range(n_players):
                for d in range(n_deals):
                    value[depth, q, d] = 0.0
            a = 0
        else:
            p = player[node]
            r = rnd[node]
            base = offset[node] + a
            for d in range(n_deals):
                s_a = strategy[base + deal_bucket[d, p, r] * k]
                for q in range(n_players):
                    value[depth, q, d] += s_a * value[depth + 1, q, d]
            a += 1
        if a < k:
            next_action[depth] = a
            node_at[depth + 1] = children[child_start[node] + a]
            next_action[depth + 1] = -1
            depth += 1
            continue
        if keep.shape[0] > 0:
            keep[node] = value[depth]
        depth -= 1


@kernel
def _br_pass(
    g: KernelGame, responder: int, strategy: F64, reach: F64, weighted: F64,
    action_value: F64, totals: F64, best: I64, response: F64, node_at: I64,
    next_action: I64, fallback: F64, z: float, spread: F64,
) -> None:
    """Best response of ``responder``, vectorised over deals, depth-first without recursion.

    ``reach[0]`` holds each deal's probability; ``reach[depth]`` is chance times the other
    players' reach at the node on the path at that depth. The responder's reach-weighted
    value ends in ``weighted[0]`` and its choices (one-hot rows) in ``response``.

    With a non-empty ``fallback`` table (conservative): a row keeps ``fallback``'s unless
    the best action's gain over it, summed over the row's deals, exceeds ``z`` times the
    square root of the sum of the squared per-deal gains (``spread``: scratch per bucket).
    """
    (player, rnd, num_actions, child_start, children, offset, rows, terminal, term_set,
     term_payoff, _deal_prob, deal_bucket, deal_pattern) = g  # fmt: skip
    n_deals = reach.shape[1]
    depth = 0
    node_at[0] = 0
    next_action[0] = -1
    while depth >= 0:
        node = node_at[depth]
        a = next_action[depth]
        p = player[node]
        k = num_actions[node]
        r = rnd[node]
        base = offset[node]
        if a < 0:
            t = terminal[node]
            if t >= 0:
                s = term_set[t]
                for d in range(n_deals):
                    pattern = 0 if s < 0 else deal_pattern[d, s]
                    weighted[depth, d] = reach[depth, d] * term_payoff[t, pattern, responder]
                depth -= 1
                continue
            live = False
            for d in range(n_deals):
                weighted[depth, d] = 0.0
                if reach[depth, d] != 0.0:
                    live = True
            if not live:  # no deal reaches it: worth 0, any choice below is a best one
                depth -= 1
                continue
            a = 0
        else:
            for d in range(n_deals):
                if p == responder:
                    action_value[depth, a, d] = weighted[depth + 1, d]
                else:
                    weighted[depth, d] += weighted[depth + 1, d]
            a += 1
        if a < k:
            next_action[depth] = a
            for d in range(n_deals):
                if p == responder:
                    reach[depth + 1, d] = reach[depth, d]
                else:
                    reach[depth + 1, d] = reach[depth, d] * strategy[
                        base + deal_bucket[d, p, r] * k + a]
            node_at[depth + 1] = children[child_start[node] + a]
            next_action[depth + 1] = -1
            depth += 1
            continue
        if p == responder:
            n_buckets = rows[node]
            for b in range(n_buckets):
                for c in range(k):
                    totals[b, c] = 0.0
            for d in range(n_deals):
                b = deal_bucket[d, p, r]
                for c in range(k):
                    totals[b, c] += action_value[depth, c, d]
            for b in range(n_buckets):
                best[b] = 0
                for c in range(1, k):
                    if totals[b, c] > totals[b, best[b]]:
                        best[b] = c
                for c in range(k):
                    response[base + b * k + c] = 1.0 if c == best[b] else 0.0
            if fallback.shape[0] == 0:
                for d in range(n_deals):
                    weighted[depth, d] = action_value[depth, best[deal_bucket[d, p, r]], d]
                depth -= 1
                continue
            for b in range(n_buckets):
                spread[b] = 0.0
            for d in range(n_deals):  # per deal: the best action's gain over the fallback
                b = deal_bucket[d, p, r]
                row = base + b * k
                gain = action_value[depth, best[b], d]
                for c in range(k):
                    gain -= fallback[row + c] * action_value[depth, c, d]
                spread[b] += gain * gain
            for b in range(n_buckets):
                row = base + b * k
                kept = totals[b, best[b]]
                for c in range(k):
                    kept -= fallback[row + c] * totals[b, c]
                if kept <= z * np.sqrt(spread[b]):
                    best[b] = -1
                    for c in range(k):
                        response[row + c] = fallback[row + c]
            for d in range(n_deals):
                b = deal_bucket[d, p, r]
                if best[b] >= 0:
                    weighted[depth, d] = action_value[depth, best[b], d]
                else:
                    value = 0.0
                    for c in range(k):
                        value += fallback[base + b * k + c] * action_value[depth, c, d]
                    weighted[depth, d] = value
        depth -= 1


KERNELS = (_value_pass, _br_pass)
"""The kernels, for compile notices (:func:`agent.console.compile_notice`)."""


# --------------------------------------------------------------------------- public API


def check_table(game: AbstractGame, table: npt.ArrayLike) -> F64:
    """``table`` as a contiguous float64 array after checking it fits ``game``.

    Raises:
        ValueError: if its size is wrong or it holds negative or non-finite values.
    """
    arr = np.ascontiguousarray(table, dtype=np.float64).reshape(-1)
    if arr.size != game.table_size:
        raise UsageError(f"expected a table of {game.table_size} values, got {arr.size}")
    if not np.isfinite(arr).all() or (arr < 0).any():
        raise UsageError("expected a table of non-negative finite probabilities")
    return arr


def deal_values(game: AbstractGame, table: npt.ArrayLike) -> F64:
    """``[position, deal]``: expected chips of each position for each deal."""
    strategy = check_table(game, table)
    depth = game.max_depth + 2
    value = np.zeros((depth, game.num_players, game.num_deals))
    _value_pass(game.kernel_args(), strategy, value, np.zeros(depth, dtype=np.int64),
                np.zeros(depth, dtype=np.int64), np.zeros((0, 0, 0)))
    out: F64 = value[0].copy()
    return out


def node_values(game: AbstractGame, table: npt.ArrayLike) -> F64:
    """``[node, position, deal]``: expected chips of each position from every node of the
    abstract tree for each deal, when every position plays ``table`` from there on (the same
    pass as :func:`deal_values`, keeping every node's frame)."""
    strategy = check_table(game, table)
    depth = game.max_depth + 2
    value = np.zeros((depth, game.num_players, game.num_deals))
    keep = np.zeros((game.num_nodes, game.num_players, game.num_deals))
    _value_pass(game.kernel_args(), strategy, value, np.zeros(depth, dtype=np.int64),
                np.zeros(depth, dtype=np.int64), keep)
    return keep


def expected_values(game: AbstractGame, table: npt.ArrayLike) -> tuple[float, ...]:
    """Expected chips per hand of each position when every position plays ``table``."""
    return tuple(float(v) for v in deal_values(game, table) @ game.deal_prob)


@dataclass(frozen=True)
class BestResponse:
    """A best response of one position against the others' strategies."""

    player: int
    value: float
    """Expected chips per hand the best response wins."""
    strategy: F64
    """``table`` with ``player``'s rows replaced by the best response (one-hot rows)."""


def best_response(game: AbstractGame, table: npt.ArrayLike, player: int,
                  fallback: npt.ArrayLike | None = None, z: float = 0.0) -> BestResponse:
    """The best response of ``player`` to the other positions playing ``table``.

    With ``fallback`` (a table of ``game``), a *conservative* response: each of
    ``player``'s rows keeps ``fallback``'s unless its best action's gain over it, summed
    over the deals of the row, exceeds ``z`` standard errors (the square root of the sum of
    the squared per-deal gains): what a best response in a *sampled* game may trust beyond
    its deals' luck (:mod:`agent.exploit`). ``value`` is then that strategy's.

    Raises:
        ValueError: for a bad table or position.
    """
    if not 0 <= player < game.num_players:
        raise UsageError(f"expected a position in 0..{game.num_players - 1}, got {player}")
    strategy = check_table(game, table)
    depth = game.max_depth + 2
    reach = np.zeros((depth, game.num_deals))
    reach[0] = game.deal_prob
    weighted = np.zeros((depth, game.num_deals))
    action_value = np.zeros((depth, game.max_actions, game.num_deals))
    totals = np.zeros((game.max_buckets, game.max_actions))
    best = np.zeros(game.max_buckets, dtype=np.int64)
    response = strategy.copy()
    keep = np.zeros(0) if fallback is None else check_table(game, fallback)
    _br_pass(game.kernel_args(), player, strategy, reach, weighted, action_value, totals, best,
             response, np.zeros(depth, dtype=np.int64), np.zeros(depth, dtype=np.int64),
             keep, float(z), np.zeros(game.max_buckets))
    return BestResponse(player, float(weighted[0].sum()), response)


def strategy_table(game: AbstractGame, strategy: Strategy) -> F64:
    """The probabilities of a loaded strategy file as a float64 table of ``game``.

    uint16 values are rescaled and every row is renormalised in float64 (a float32 row sums
    to 1 only within ~1e-7), so values and best responses compare exactly.
    """
    table = np.asarray(strategy.table, dtype=np.float64)
    if strategy.table.dtype == DTYPES["uint16"]:
        table = table / QUANT
    return normalise_rows(game, check_table(game, table))


def purify_table(layout: TableLayout, table: npt.ArrayLike,
                 purification: Purification | None = None) -> F64:
    """``table`` (table layout) with every row purified by the agent's rule and renormalised
    in float64 (:func:`agent.strategy.kernels.purify_rows`, one node's rows at a time).
    ``None`` or ``none``: renormalised only."""
    out = np.array(table, dtype=np.float64)
    for node in np.flatnonzero(layout.offsets >= 0):
        k = int(layout.num_actions[node])
        start = int(layout.offsets[node])
        stop = start + int(layout.rows[node]) * k
        out[start:stop] = purify_rows(out[start:stop].reshape(-1, k), purification).ravel()
    return out
