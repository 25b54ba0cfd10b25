"""Every hold'em hole's bucket on one board at once: :func:`board_buckets`.

What :meth:`~agent.abstraction.holdem_buckets.HoldemCards.bucket` returns hole by hole, with
the board's work shared by every hole: on the turn and river every hole is valued once per
5-card board (:func:`board_scores`), the values sorted, and each hole's ``2 * wins + ties``
against the 990 others counted with card removal (the holes below it, minus those below it
that share one of its cards); the turn sums the squares over the 46 rivers
(:func:`late_ehs2`). On the flop each hole's own run-outs
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
from agent.abstraction.holdem_pa import PotentialAwareCards
from agent.abstraction.isomorphism import holdem_indexer
from agent.handeval import SUIT_BASE, hand_value
from agent.jit import kernel

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


@kernel
def board_scores(key5: int | np.int64, bits5: int | np.int64, dead5: int | np.int64,
                  holes: I64, keys: I64, card_bits: I64,
                  offsets: npt.NDArray[np.int32], values: npt.NDArray[np.int32],
                  flush_values: npt.NDArray[np.int32], work: I64, less_c: I64,
                  group_c: I64, out: I64) -> None:
    """``out[i]``: ``2 * wins + ties`` of ``holes[i]`` with the 5-card board (summed
    ``key5``, ``bits5``; card set ``dead5``) against every hole that misses it and the
    board (990 in hold'em), the score of
    :func:`agent.abstraction.holdem_buckets.river_score`; -1 for holes touching the board.
    Every hole is valued once and sorted by value, then by hole (a stable radix sort, 8 bits
    a pass: the values are ``category << 20`` plus rank nibbles, so three passes); a hole's
    wins are the holes below it minus those below it that hold one of its cards (card
    removal), ties likewise. ``work`` needs ``4 * len(holes) + 256`` entries, ``less_c``
    and ``group_c`` 64."""
    n_holes = holes.shape[0]
    order = work[:n_holes]
    vals = work[n_holes:2 * n_holes]
    order2 = work[2 * n_holes:3 * n_holes]
    vals2 = work[3 * n_holes:4 * n_holes]
    counts = work[4 * n_holes:4 * n_holes + 256]
    n = 0
    top = np.int64(0)
    for i in range(n_holes):
        a = holes[i, 0]
        b = holes[i, 1]
        if (dead5 >> a) & 1 or (dead5 >> b) & 1:
            out[i] = -1
            continue
        v = np.int64(hand_value(key5 + keys[a] + keys[b], bits5 + card_bits[a] + card_bits[b],
                                offsets, values, flush_values))
        vals[n] = v
        order[n] = i  # ascending: ties stay in hole order through every stable pass
        top |= v
        n += 1
    shift = 0
    while n > 0 and (top >> shift) > 0:
        counts[:] = 0
        for j in range(n):
            counts[(vals[j] >> shift) & 255] += 1
        if counts[(vals[0] >> shift) & 255] != n:  # a pass that moves something
            start = 0
            for d in range(256):
                c = counts[d]
                counts[d] = start
                start += c
            for j in range(n):
                d = (vals[j] >> shift) & 255
                k = counts[d]
                counts[d] = k + 1
                vals2[k] = vals[j]
                order2[k] = order[j]
            for j in range(n):
                vals[j] = vals2[j]
                order[j] = order2[j]
        shift += 8
    less_c[:] = 0
    group_c[:] = 0
    less_total = 0
    g = 0
    while g < n:
        v = vals[g]
        e = g
        while e < n and vals[e] == v:
            i = order[e]
            group_c[holes[i, 0]] += 1
            group_c[holes[i, 1]] += 1
            e += 1
        size = e - g
        for j in range(g, e):
            i = order[j]
            a = holes[i, 0]
            b = holes[i, 1]
            wins = less_total - less_c[a] - less_c[b]
            ties = size - group_c[a] - group_c[b] + 1
            out[i] = 2 * wins + ties
        for j in range(g, e):
            i = order[j]
            a = holes[i, 0]
            b = holes[i, 1]
            less_c[a] += 1
            less_c[b] += 1
            group_c[a] = 0
            group_c[b] = 0
        less_total += size
        g = e


@kernel
def late_ehs2(board: I64, holes: I64, keys: I64, card_bits: I64,
                      offsets: npt.NDArray[np.int32], values: npt.NDArray[np.int32],
                      flush_values: npt.NDArray[np.int32], out: F64) -> None:
    """``out[i]``: E[HS^2] of ``holes[i]`` on the 4- or 5-card ``board`` (the turn: every
    river card), the agent's value bit for bit; nan for holes touching the board."""
    n_holes = holes.shape[0]
    key = SUIT_BASE
    bits = np.int64(0)
    dead = np.int64(0)
    for j in range(board.shape[0]):
        key += keys[board[j]]
        bits += card_bits[board[j]]
        dead |= np.int64(1) << board[j]
    count = np.zeros(n_holes, np.int64)
    total_sq = np.zeros(n_holes, np.int64)
    scores = np.zeros(n_holes, np.int64)
    work = np.zeros(4 * n_holes + 256, np.int64)
    less_c = np.zeros(64, np.int64)
    group_c = np.zeros(64, np.int64)
    for river in range(52 if board.shape[0] == 4 else 1):
        if board.shape[0] == 4:
            if (dead >> river) & 1:
                continue
            board_scores(key + keys[river], bits + card_bits[river],
                          dead | (np.int64(1) << river), holes, keys, card_bits, offsets,
                          values, flush_values, work, less_c, group_c, scores)
        else:
            board_scores(key, bits, dead, holes, keys, card_bits, offsets, values,
                          flush_values, work, less_c, group_c, scores)
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
    key = SUIT_BASE
    bits = np.int64(0)
    dead = np.int64(0)
    for j in range(3):
        key += keys[flop[j]]
        bits += card_bits[flop[j]]
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
    work = np.zeros(4 * n_holes + 256, np.int64)
    less_c = np.zeros(64, np.int64)
    group_c = np.zeros(64, np.int64)
    for t in range(52):
        for r in range(t + 1, 52):
            k = pair[t, r]
            if k >= 0:
                board_scores(key + keys[t] + keys[r], bits + card_bits[t] + card_bits[r],
                              dead | (np.int64(1) << t) | (np.int64(1) << r), holes, keys,
                              card_bits, offsets, values, flush_values, work, less_c,
                              group_c, table[k])
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
