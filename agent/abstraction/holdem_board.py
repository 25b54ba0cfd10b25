"""Every hold'em hole's bucket on one board at once: :func:`board_buckets`.

What :meth:`~agent.abstraction.holdem_buckets.HoldemCards.bucket` returns hole by hole, with
the board's work shared by every hole: on the turn and river each hole's ``2 * wins + ties``
against the 990 others on a 5-card board comes from the potential-aware module's kernel for
every pair at once (:func:`board_scores`, by
:func:`agent.abstraction.holdem_pa.river_scores_kernel`: by rank class, card removal counted
per card); the turn sums the squares over the 46 rivers (:func:`late_ehs2`). On the flop
each hole's own run-outs
(:func:`agent.abstraction.holdem_buckets.draw_rivers` on its canonical cards) are read from
one table of every hole's score on every turn and river card (:func:`flop_ehs2`), or,
faster, E[HS^2] is read from a flop strength table the caller gives (``flop_values``:
the cached table of :mod:`strategies.cards.tables`). Integer sums divided once, as the
agent's: the same values bit for bit (tested against the hole-by-hole buckets). A
potential-aware abstraction gives every hole's bucket itself
(:meth:`agent.abstraction.holdem_pa.PotentialAwareCards.board_buckets`).

Used by the re-solver (:mod:`agent.resolve.blueprint`: the blueprint's ranges through the
card abstraction) and by sampled LBR (:mod:`strategies.measure.lbr_cards`).

Imports numpy, numba and :mod:`agent.abstraction`, :mod:`agent.handeval`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from agent.abstraction.holdem_buckets import (
    SCORE_SCALE,
    STRENGTH_TABLES,
    HoldemCards,
    canonicalize,
    draw_rivers,
    preflop_class,
    runout_seed,
)
from agent.abstraction.holdem_pa import PotentialAwareCards, river_scores_kernel
from agent.abstraction.isomorphism import holdem_indexer
from agent.jit import kernel

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


@kernel
def _scores_scratch() -> tuple[I64, I64, I64, I64, I64, I64]:
    """:func:`board_scores`' scratch: ``packed``, ``pair_a``, ``pair_b`` (1,081 pairs of
    live cards), ``less``, ``equal`` (52 cards) and ``by_pair`` (1,326 pair ids)."""
    return (np.zeros(1081, np.int64), np.zeros(1081, np.int64), np.zeros(1081, np.int64),
            np.zeros(52, np.int64), np.zeros(52, np.int64), np.zeros(1326, np.int64))


@kernel
def board_scores(board5: I64, holes: I64, keys: I64, card_bits: I64,
                  offsets: npt.NDArray[np.int32], values: npt.NDArray[np.int32],
                  flush_values: npt.NDArray[np.int32], packed: I64, pair_a: I64, pair_b: I64,
                  less: I64, equal: I64, by_pair: I64, out: I64) -> None:
    """``out[i]``: ``2 * wins + ties`` of ``holes[i]`` with the 5-card ``board5`` against
    every hole that misses it and the board (990 in hold'em), the score of
    :func:`agent.abstraction.holdem_buckets.river_score`; -1 for holes touching the board.
    Every pair's score comes from the agent's kernel
    (:func:`agent.abstraction.holdem_pa.river_scores_kernel`, by colex pair id into
    ``by_pair``, 1,326 entries; scratch ``packed``, ``pair_a``, ``pair_b`` of 1,081 and
    ``less``, ``equal`` of 52)."""
    dead = np.int64(0)
    for j in range(5):
        dead |= np.int64(1) << board5[j]
    river_scores_kernel(board5, 52, keys, card_bits, offsets, values, flush_values, packed,
                        pair_a, pair_b, less, equal, by_pair)
    for i in range(holes.shape[0]):
        a = min(holes[i, 0], holes[i, 1])
        b = max(holes[i, 0], holes[i, 1])
        if (dead >> a) & 1 or (dead >> b) & 1:
            out[i] = -1
        else:
            out[i] = by_pair[b * (b - 1) // 2 + a]


@kernel
def late_ehs2(board: I64, holes: I64, keys: I64, card_bits: I64,
                      offsets: npt.NDArray[np.int32], values: npt.NDArray[np.int32],
                      flush_values: npt.NDArray[np.int32], out: F64) -> None:
    """``out[i]``: E[HS^2] of ``holes[i]`` on the 4- or 5-card ``board`` (the turn: every
    river card), the agent's value bit for bit; nan for holes touching the board."""
    n_holes = holes.shape[0]
    dead = np.int64(0)
    board5 = np.zeros(5, np.int64)
    for j in range(board.shape[0]):
        board5[j] = board[j]
        dead |= np.int64(1) << board[j]
    count = np.zeros(n_holes, np.int64)
    total_sq = np.zeros(n_holes, np.int64)
    scores = np.zeros(n_holes, np.int64)
    packed, pair_a, pair_b, less, equal, by_pair = _scores_scratch()
    for river in range(52 if board.shape[0] == 4 else 1):
        if board.shape[0] == 4:
            if (dead >> river) & 1:
                continue
            board5[4] = river
        board_scores(board5, holes, keys, card_bits, offsets, values, flush_values, packed,
                      pair_a, pair_b, less, equal, by_pair, scores)
        for i in range(n_holes):
            if scores[i] >= 0:
                count[i] += 1
                total_sq[i] += scores[i] * scores[i]
    for i in range(n_holes):
        out[i] = total_sq[i] / (count[i] * (SCORE_SCALE * SCORE_SCALE)) if count[i] > 0 \
            else np.nan


@kernel
def flop_ehs2(flop: I64, holes: I64, rivers_per_turn: int, perms: I64, keys: I64,
                      card_bits: I64, offsets: npt.NDArray[np.int32],
                      values: npt.NDArray[np.int32], flush_values: npt.NDArray[np.int32],
                      out: F64) -> None:
    """``out[i]``: E[HS^2] of ``holes[i]`` on the 3-card ``flop``, the agent's estimator
    bit for bit: the score of every hole on every (turn, river) completion once, then each
    hole's own run-outs (:func:`agent.abstraction.holdem_buckets.draw_rivers` on its
    canonical cards, mapped back through the suit relabelling) read from that table; nan
    for holes touching the flop."""
    n_holes = holes.shape[0]
    dead = np.int64(0)
    board5 = np.zeros(5, np.int64)
    for j in range(3):
        board5[j] = flop[j]
        dead |= np.int64(1) << flop[j]
    pair = np.full((52, 52), -1, np.int64)
    n_pairs = 0
    for t in range(52):
        if (dead >> t) & 1:
            continue
        for r in range(t + 1, 52):
            if not (dead >> r) & 1:
                pair[t, r] = n_pairs
                n_pairs += 1
    table = np.zeros((n_pairs, n_holes), np.int64)
    packed, pair_a, pair_b, less, equal, by_pair = _scores_scratch()
    for t in range(52):
        for r in range(t + 1, 52):
            k = pair[t, r]
            if k >= 0:
                board5[3] = t
                board5[4] = r
                board_scores(board5, holes, keys, card_bits, offsets, values, flush_values,
                              packed, pair_a, pair_b, less, equal, by_pair, table[k])
    cards = np.zeros(5, np.int64)
    canon = np.zeros(10, np.int64)
    moved = np.zeros(5, np.int64)
    inverse = np.zeros(4, np.int64)
    rivers = np.zeros(52, np.int64)
    for i in range(n_holes):
        a = holes[i, 0]
        b = holes[i, 1]
        if (dead >> a) & 1 or (dead >> b) & 1:
            out[i] = np.nan
            continue
        cards[0] = a
        cards[1] = b
        for j in range(3):
            cards[2 + j] = flop[j]
        canonicalize(cards, 5, perms, canon)
        for p in range(perms.shape[0]):  # a relabelling that gives the canonical form
            for j in range(5):
                c = cards[j]
                moved[j] = (c // 4) * 4 + perms[p, c % 4]
            if moved[0] > moved[1]:
                moved[0], moved[1] = moved[1], moved[0]
            for x in range(2, 5):
                for y in range(x + 1, 5):
                    if moved[y] < moved[x]:
                        moved[x], moved[y] = moved[y], moved[x]
            same = True
            for j in range(5):
                if moved[j] != canon[j]:
                    same = False
            if same:
                for s in range(4):
                    inverse[perms[p, s]] = s
                break
        state = runout_seed(canon, 5)
        cdead = np.int64(0)
        for j in range(5):
            cdead |= np.int64(1) << canon[j]
        count = 0
        total_sq = 0
        for turn in range(52):
            if (cdead >> turn) & 1:
                continue
            state, k = draw_rivers(state, cdead | (np.int64(1) << turn), rivers_per_turn,
                                   rivers)
            t0 = (turn // 4) * 4 + inverse[turn % 4]
            for j in range(k):
                river = rivers[j]
                r0 = (river // 4) * 4 + inverse[river % 4]
                score = table[pair[min(t0, r0), max(t0, r0)], i]
                count += 1
                total_sq += score * score
        out[i] = total_sq / (count * (SCORE_SCALE * SCORE_SCALE))


def board_buckets(cards: HoldemCards | PotentialAwareCards, round_: int, holes: I64,
                  board: Sequence[int], flop_values: F64 | None = None) -> I64:
    """The agent's bucket of every hole in ``holes`` on ``board`` (-1 for holes touching
    it), all at once: what ``cards.bucket(round_, hole, board)`` returns hole by hole
    (tested equal), with the board's work shared by every hole (module docstring).
    ``flop_values``: E[HS^2] of every flop class of
    :func:`agent.abstraction.isomorphism.holdem_indexer` (``board``, round 1), the cached
    strength table of :mod:`strategies.cards.tables` made with the agent's
    ``flop_rivers_per_turn``; the flop is then read from it instead of computed. A
    potential-aware abstraction gives every hole's bucket itself
    (:meth:`agent.abstraction.holdem_pa.PotentialAwareCards.board_buckets`; ``flop_values``
    unused)."""
    rows = np.ascontiguousarray(holes, dtype=np.int64)
    on_board = np.zeros(max(64, int(rows.max(initial=0)) + 1), dtype=bool)
    on_board[list(board)] = True
    touching = on_board[rows].any(axis=1)
    if isinstance(cards, PotentialAwareCards):
        lo, hi = rows.min(axis=1), rows.max(axis=1)
        mine: I64 = cards.board_buckets(round_, board)[hi * (hi - 1) // 2 + lo]
        mine[touching] = -1
        return mine
    if round_ == 0:
        out = np.array([preflop_class(h) for h in rows.tolist()], dtype=np.int64)
        out[touching] = -1
        return out
    values = np.zeros(rows.shape[0])
    b = np.array(board, dtype=np.int64)
    if len(board) == 3 and flop_values is not None:
        live = np.flatnonzero(~touching)
        hands = np.concatenate([rows[live], np.tile(b, (live.size, 1))], axis=1)
        values[live] = flop_values[holdem_indexer("board", 1).index_batch(hands, check=False)]
        values[touching] = np.nan
    elif len(board) == 3:
        flop_ehs2(b, rows, cards.flop_rivers_per_turn, *STRENGTH_TABLES, values)
    else:
        late_ehs2(b, rows, *STRENGTH_TABLES[1:], values)
    thresholds = np.array(cards.thresholds[round_ - 1], dtype=np.float64)
    out = np.searchsorted(thresholds, values, side="right").astype(np.int64)
    out[touching] = -1
    return out
