"""The card work of sampled LBR (:mod:`strategies.measure.sampled_lbr`): every agent hole at once.

Two questions are asked for every possible agent hole (1,326 in hold'em) many times a hand:

* **its bucket** in the agent's card abstraction (to read the agent's strategy row):
  :func:`hole_buckets`. For hold'em (:class:`~agent.abstraction.holdem_buckets.HoldemCards`)
  one numba kernel computes E[HS^2] of every hole with the very kernel the agent uses
  (:func:`agent.abstraction.holdem_buckets.strength_moments`, same estimator, same bits) and
  the thresholds are applied as :meth:`HoldemCards.bucket_of_value` does (bisect right);
  any other abstraction is asked hole by hole (small games);
* **LBR's equity against it** with the rest of the board dealt out: :func:`equities`,
  ``(2 * wins + ties) / (2 * boards)`` over the completions of the board that do not use the
  hole's cards. Hold'em: a numba kernel over the 7-card evaluator
  (:func:`agent.handeval.hand_value`); exact enumeration of the completions when there are
  at most :data:`MAX_EXACT_COMPLETIONS` of them (flop: 1,081, turn: 46), else (preflop)
  :data:`PREFLOP_SAMPLES` completions drawn uniformly, seeded. Other games: the reference
  evaluator (:func:`agent.acpc.evaluator.rank_hand`) in Python over every completion.

Imports numpy, numba, :mod:`agent`; never imported by :mod:`agent`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from agent.abstraction.buckets import CardAbstraction
from agent.abstraction.holdem_buckets import (
    SCRATCH_SIZE,
    STRENGTH_TABLES,
    HoldemCards,
    preflop_class,
    strength_moments,
)
from agent.acpc.cards import deck_for
from agent.acpc.errors import UsageError
from agent.acpc.evaluator import rank_hand
from agent.acpc.gamedef import Game
from agent.handeval import SUIT_BASE, TABLES_7, hand_value
from agent.jit import kernel

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

MAX_EXACT_COMPLETIONS = 20_000
"""Board completions enumerated exactly; more (the hold'em preflop: 2,118,760) are sampled."""

PREFLOP_SAMPLES = 2_000
"""Completions drawn when there are more than :data:`MAX_EXACT_COMPLETIONS`."""


def is_holdem(game: Game) -> bool:
    """True for a 52-card game with 2 hole cards and a 5-card board (the kernels' game)."""
    return (game.num_suits, game.num_ranks, game.num_hole_cards, game.total_board_cards) == \
        (4, 13, 2, 5)


def all_holes(game: Game) -> I64:
    """``(H, num_hole_cards)``: every hole of ``game``'s deck, sorted cards, in
    lexicographic order (the range's index)."""
    deck = sorted(deck_for(game))
    return np.array(list(itertools.combinations(deck, game.num_hole_cards)), dtype=np.int64)


# --------------------------------------------------------------------------- kernels


@kernel
def _ehs2_kernel(holes: I64, board: I64, rivers_per_turn: int, perms: I64, keys: I64,
                 card_bits: I64, offsets: npt.NDArray[np.int32],
                 values: npt.NDArray[np.int32], flush_values: npt.NDArray[np.int32],
                 scratch: I64, out: F64) -> None:
    """``out[i]``: E[HS^2] of ``holes[i]`` on ``board`` (3..5 cards), as the agent's."""
    n_board = board.shape[0]
    cards = np.zeros(7, np.int64)
    moments = np.zeros(2)
    for j in range(n_board):
        cards[2 + j] = board[j]
    for i in range(holes.shape[0]):
        cards[0] = holes[i, 0]
        cards[1] = holes[i, 1]
        strength_moments(cards, n_board, rivers_per_turn, perms, keys, card_bits, offsets,
                         values, flush_values, scratch, moments)
        out[i] = moments[1]


@kernel
def _equity_kernel(h0: int, h1: int, board: I64, completions: I64, holes: I64, keys: I64,
                   card_bits: I64, offsets: npt.NDArray[np.int32],
                   values: npt.NDArray[np.int32], flush_values: npt.NDArray[np.int32],
                   score: I64, count: I64) -> None:
    """Per hole ``i``: ``score[i] += 2 * wins + ties`` and ``count[i] += boards`` of hole
    ``h0 h1`` against ``holes[i]`` over the completions (rows) of ``board`` that miss
    ``holes[i]``'s cards."""
    key0 = SUIT_BASE
    bits0 = np.int64(0)
    for j in range(board.shape[0]):
        key0 += keys[board[j]]
        bits0 += card_bits[board[j]]
    for r in range(completions.shape[0]):
        key = key0
        bits = bits0
        used = np.int64(0)
        for j in range(completions.shape[1]):
            c = completions[r, j]
            key += keys[c]
            bits += card_bits[c]
            used |= np.int64(1) << c
        ours = hand_value(key + keys[h0] + keys[h1], bits + card_bits[h0] + card_bits[h1],
                          offsets, values, flush_values)
        for i in range(holes.shape[0]):
            a = holes[i, 0]
            b = holes[i, 1]
            if (used >> a) & 1 or (used >> b) & 1:
                continue
            theirs = hand_value(key + keys[a] + keys[b], bits + card_bits[a] + card_bits[b],
                                offsets, values, flush_values)
            if ours > theirs:
                score[i] += 2
            elif ours == theirs:
                score[i] += 1
            count[i] += 1


# --------------------------------------------------------------------------- public API


def hole_buckets(cards: CardAbstraction, round_: int, holes: I64,
                 board: Sequence[int]) -> I64:
    """The agent's bucket of every hole in ``holes`` (rows; none may touch ``board``) in
    ``round_`` with the visible ``board``: what ``cards.bucket(round_, hole, board)``
    returns, hole by hole (tested), batched for hold'em.

    Raises:
        UsageError: for holes that share a card with the board.
    """
    if holes.shape[0] == 0:
        return np.zeros(0, np.int64)
    if set(board) & set(holes.ravel().tolist()):
        raise UsageError(f"expected holes that miss the board {list(board)!r}, got some "
                         f"that share a card")
    if isinstance(cards, HoldemCards):
        if round_ == 0:
            return np.array([preflop_class(h) for h in holes.tolist()], dtype=np.int64)
        out = np.zeros(holes.shape[0])
        _ehs2_kernel(np.ascontiguousarray(holes, dtype=np.int64),
                     np.array(board, dtype=np.int64), cards.flop_rivers_per_turn,
                     *STRENGTH_TABLES, np.zeros(SCRATCH_SIZE, np.int64), out)
        thresholds = np.array(cards.thresholds[round_ - 1], dtype=np.float64)
        return np.searchsorted(thresholds, out, side="right").astype(np.int64)
    return np.array([cards.bucket(round_, tuple(h), tuple(board)) for h in holes.tolist()],
                    dtype=np.int64)


def completions(game: Game, dead: Sequence[int], board: Sequence[int],
                rng: np.random.Generator) -> I64:
    """``(R, m)``: the ways to deal the ``m`` board cards still to come from the cards not
    in ``dead`` (LBR's hole and the visible ``board``): all of them if at most
    :data:`MAX_EXACT_COMPLETIONS`, else :data:`PREFLOP_SAMPLES` uniform draws from ``rng``."""
    m = game.total_board_cards - len(board)
    live = [c for c in sorted(deck_for(game)) if c not in set(dead) | set(board)]
    if m == 0:
        return np.zeros((1, 0), np.int64)
    total = 1
    for i in range(m):
        total = total * (len(live) - i) // (i + 1)
    if total <= MAX_EXACT_COMPLETIONS:
        return np.array(list(itertools.combinations(live, m)), dtype=np.int64)
    pool = np.array(live, dtype=np.int64)
    return np.sort(np.array([rng.choice(pool, size=m, replace=False)
                             for _ in range(PREFLOP_SAMPLES)], dtype=np.int64), axis=1)


def equities(game: Game, hole: Sequence[int], board: Sequence[int], holes: I64,
             boards: I64) -> F64:
    """LBR's equity (win + tie / 2) with ``hole`` on ``board`` against each of ``holes``
    (rows, none touching ``hole`` or ``board``), over the completions ``boards`` that miss
    that hole's cards (module docstring). A hole no completion misses gets 0.5."""
    score = np.zeros(holes.shape[0], np.int64)
    count = np.zeros(holes.shape[0], np.int64)
    if holes.shape[0] == 0:
        return np.zeros(0)
    if is_holdem(game):
        _equity_kernel(int(hole[0]), int(hole[1]), np.array(board, dtype=np.int64),
                       np.ascontiguousarray(boards, dtype=np.int64),
                       np.ascontiguousarray(holes, dtype=np.int64), *TABLES_7, score, count)
    else:
        for row in boards.tolist():
            full = list(board) + row
            ours = rank_hand(list(hole) + full)
            used = set(row)
            for i, other in enumerate(holes.tolist()):
                if used & set(other):
                    continue
                theirs = rank_hand(other + full)
                score[i] += 2 if ours > theirs else 1 if ours == theirs else 0
                count[i] += 1
    return np.where(count > 0, score / np.maximum(2 * count, 1), 0.5)
