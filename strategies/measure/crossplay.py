"""Exact two-player evaluations across card abstractions, for games whose deals enumerate.

:mod:`strategies.measure.best_response` measures a table inside *one* abstract game. Grafting and
the Leduc experiment need three more things, all exact over the enumerated deals:

* :func:`cross_value`: position 0's expected winnings when each position plays its own
  table in its own abstract game (different card abstractions, same game, same betting
  abstraction, so the same betting tree and deal order);
* :func:`best_response_value`: the best response of one position that sees the cards
  through any bucketing of its own (``buckets[deal, round]``: e.g. lossless buckets, for
  the best response in the *real* game) and may be *frozen* at some rows (it must play the
  table there: grafting's forced-base nodes, which are chance nodes of a graft game);
* :func:`real_exploitability`: ``(br0 + br1) / 2`` against a lossless best response, i.e.
  the exploitability in the real game when the betting abstraction is the whole game (all
  limit games).

Bottom-up and vectorised over deals (numpy, one Python call per tree node: Leduc's limit
tree has 85 nodes), exact for perfect-recall bucketings (each bucket of a later round lies
inside one bucket of every earlier round). Chips per hand. Pure-Python oracles in
``tests/strategies/test_grafting.py``.

Imports numpy, :mod:`agent` and :mod:`strategies.games.abstract`; never imported by :mod:`agent`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from agent.acpc.errors import UsageError
from strategies.games.abstract import AbstractGame

F64 = npt.NDArray[np.float64]
I32 = npt.NDArray[np.int32]
B = npt.NDArray[np.bool_]


def _check_pair(games: Sequence[AbstractGame]) -> None:
    first = games[0]
    for g in games[1:]:
        if g.game.fingerprint != first.game.fingerprint or g.betting != first.betting \
                or g.num_deals != first.num_deals or g.num_nodes != first.num_nodes:
            raise UsageError("expected abstract games of the same game and betting abstraction")
    if first.num_players != 2:
        raise UsageError(f"expected a 2-player game, got {first.num_players} players")


def _payoff(game: AbstractGame, node: int, position: int) -> F64:
    t = int(game.terminal[node])
    s = int(game.term_set[t])
    if s < 0:
        return np.full(game.num_deals, game.term_payoff[t, 0, position])
    return game.term_payoff[t, game.deal_pattern[:, s], position]


def _children(game: AbstractGame, node: int) -> list[int]:
    start = int(game.child_start[node])
    return [int(c) for c in game.children[start : start + int(game.num_actions[node])]]


def _rows(game: AbstractGame, node: int, position: int) -> npt.NDArray[np.int64]:
    """Per deal: the table index of the first entry of ``position``'s row at ``node``."""
    k = int(game.num_actions[node])
    return game.offset[node] + game.deal_bucket[:, position, game.round[node]].astype(np.int64) * k


def cross_value(
    games: Sequence[AbstractGame], tables: Sequence[npt.ArrayLike]
) -> float:
    """Position 0's expected chips per hand when position ``p`` plays ``tables[p]`` in
    ``games[p]`` (its own card abstraction, read from ``games[p].deal_bucket[:, p]``).

    Raises:
        UsageError: if the games are not of the same game and betting abstraction.
    """
    _check_pair(games)
    arrays = [np.asarray(t, dtype=np.float64).reshape(-1) for t in tables]
    for g, t in zip(games, arrays, strict=True):
        if t.size != g.table_size:
            raise UsageError(f"expected a table of {g.table_size} values, got {t.size}")
    g0 = games[0]

    def walk(node: int, reach: F64) -> F64:
        if g0.terminal[node] >= 0:
            return reach * _payoff(g0, node, 0)
        p = int(g0.player[node])
        g = games[p]
        rows = _rows(g, node, p)
        total = np.zeros(g0.num_deals)
        for a, child in enumerate(_children(g0, node)):
            r = reach * arrays[p][rows + a]
            if r.any():
                total += walk(child, r)
        return total

    return float(walk(0, g0.deal_prob.copy()).sum())


def best_response_value(
    game: AbstractGame,
    table: npt.ArrayLike,
    responder: int,
    *,
    buckets: npt.ArrayLike | None = None,
    frozen: npt.ArrayLike | None = None,
) -> float:
    """The most ``responder`` wins (chips per hand) against the other position's rows of
    ``table`` in ``game``.

    Args:
        game: a two-player abstract game; the other position's buckets are its
            ``deal_bucket``.
        table: a table in ``game``'s layout (the responder's rows matter only if frozen).
        responder: the best-responding position.
        buckets: the responder's bucket per ``[deal, round]`` (default: ``game``'s), any
            perfect-recall bucketing, e.g. lossless buckets for the real game.
        frozen: a boolean per table entry; where the responder's row is frozen (its first
            entry true) it plays ``table`` there instead of choosing (its default bucket
            numbering must then be ``game``'s).

    Raises:
        UsageError: for mismatched shapes.
    """
    if game.num_players != 2:
        raise UsageError(f"expected a 2-player game, got {game.num_players} players")
    values = np.asarray(table, dtype=np.float64).reshape(-1)
    if values.size != game.table_size:
        raise UsageError(f"expected a table of {game.table_size} values, got {values.size}")
    own: I32 = game.deal_bucket[:, responder, :] if buckets is None \
        else np.asarray(buckets, dtype=np.int32)
    if own.shape != (game.num_deals, game.game.num_rounds):
        raise UsageError(f"expected buckets of shape {(game.num_deals, game.game.num_rounds)}, "
                         f"got {own.shape}")
    fixed: B | None = None
    if frozen is not None:
        fixed = np.asarray(frozen, dtype=bool).reshape(-1)
        if fixed.size != game.table_size or buckets is not None:
            raise UsageError("expected a frozen mask of the table's size, with the game's "
                             "own buckets")
    counts = own.max(axis=0) + 1
    deals = np.arange(game.num_deals)

    def walk(node: int, reach: F64) -> F64:
        if game.terminal[node] >= 0:
            return reach * _payoff(game, node, responder)
        p = int(game.player[node])
        kids = _children(game, node)
        if p != responder:
            rows = _rows(game, node, p)
            total = np.zeros(game.num_deals)
            for a, child in enumerate(kids):
                r = reach * values[rows + a]
                if r.any():
                    total += walk(child, r)
            return total
        if not reach.any():
            return np.zeros(game.num_deals)
        k = len(kids)
        child_values = np.stack([walk(child, reach) for child in kids])  # k x deals
        b = own[:, int(game.round[node])]
        sums = np.zeros((int(counts[game.round[node]]), k))
        np.add.at(sums, b, child_values.T)
        best = np.argmax(sums, axis=1)
        chosen = child_values[best[b], deals]
        if fixed is None:
            return chosen
        rows = int(game.offset[node]) + b.astype(np.int64) * k
        is_fixed = fixed[rows]
        if not is_fixed.any():
            return chosen
        mixed = sum(values[rows + a] * child_values[a] for a in range(k))
        return np.where(is_fixed, mixed, chosen)

    return float(walk(0, game.deal_prob.copy()).sum())


def real_exploitability(game: AbstractGame, table: npt.ArrayLike, lossless: AbstractGame) -> float:
    """``(br0 + br1) / 2`` in chips per hand, each best response seeing ``lossless``'s
    buckets (the same game and betting tree, lossless cards): the exploitability in the
    real game when the betting abstraction is the whole game.

    Raises:
        UsageError: if the games do not match.
    """
    _check_pair([game, lossless])
    return 0.5 * sum(
        best_response_value(game, table, p, buckets=lossless.deal_bucket[:, p, :])
        for p in (0, 1)
    )
