"""The card work of sampled LBR (:mod:`strategies.measure.sampled_lbr`): every agent hole at once.

Two questions are asked for every possible agent hole (1,326 in hold'em) many times a hand:

* **its bucket** in the agent's card abstraction (to read the agent's strategy row):
  :func:`hole_buckets`. For hold'em (:class:`~agent.abstraction.holdem_buckets.HoldemCards`)
  one numba kernel computes E[HS^2] of every hole with the very kernel the agent uses
  (:func:`agent.abstraction.holdem_buckets.strength_moments`, same estimator, same bits) and
  the thresholds are applied as :meth:`HoldemCards.bucket_of_value` does (bisect right);
  any other abstraction is asked hole by hole (small games);
* **every hole's bucket on one board at once** (the fast path): :func:`board_buckets`
  (:func:`agent.abstraction.holdem_board.board_buckets`, which the re-solving agent uses
  too: the board's work shared by every hole, the same values bit for bit);
* **LBR's equity against it** with the rest of the board dealt out: :func:`equities`,
  ``(2 * wins + ties) / (2 * boards)`` over the completions of the board that do not use the
  hole's cards. Hold'em: a numba kernel over the 7-card evaluator
  (:func:`agent.handeval.hand_value`); exact enumeration of the completions when there are
  at most :data:`MAX_EXACT_COMPLETIONS` of them (flop: 1,081, turn: 46), else (preflop)
  :data:`PREFLOP_SAMPLES` completions drawn uniformly, seeded (sampled LBR reads hold'em's
  preflop from the exact table of :mod:`strategies.measure.preflop_equity` instead, built
  with :func:`equity_counts` over every board, unless asked for the sampled rule). The
  fast path values one
  hand per *rank class* of the holes and completion (:func:`_class_equity_kernel`: without
  a flush a hand's value is a function of its ranks; blocked completions are taken back
  out per card, flush-capable holes valued alone), the same integer counts as one
  evaluation per hole. Other games: the reference evaluator
  (:func:`agent.acpc.evaluator.rank_hand`) in Python over every completion.

Imports numpy, numba, :mod:`agent`; never imported by :mod:`agent`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from agent.abstraction.buckets import CardAbstraction
from agent.abstraction.holdem_board import board_buckets as board_buckets
from agent.abstraction.holdem_buckets import (
    SCRATCH_SIZE,
    STRENGTH_TABLES,
    HoldemCards,
    preflop_class,
    strength_moments,
)
from agent.abstraction.holdem_pa import suit_extremes
from agent.acpc.cards import deck_for
from agent.acpc.errors import UsageError
from agent.acpc.evaluator import rank_hand
from agent.acpc.gamedef import Game
from agent.handeval import SUIT_BASE, TABLES_7, hand_value
from agent.jit import kernel, nogil_kernel

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


def suit_permutations(holes: I64) -> tuple[I64, I64]:
    """``(cards, moved)`` for the 24 relabellings of hold'em's suits
    (:func:`itertools.permutations` of 0..3, in that order): ``cards[p, c]`` is card ``c``
    with its suit relabelled by permutation ``p`` (rank x 4 + suit), ``moved[p, j]`` the
    row of ``holes`` (every hole, either card order) that hole ``j`` becomes."""
    perms = np.array(list(itertools.permutations(range(4))), dtype=np.int64)
    cards = (np.arange(52)[None, :] // 4) * 4 + perms[:, np.arange(52) % 4]
    index = np.full((52, 52), -1, dtype=np.int64)
    index[holes[:, 0], holes[:, 1]] = np.arange(holes.shape[0])
    index[holes[:, 1], holes[:, 0]] = np.arange(holes.shape[0])
    to = cards[:, holes]  # [perm, hole, 2]
    return cards, index[to[..., 0], to[..., 1]]


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
    n_holes = holes.shape[0]
    hole_key = np.empty(n_holes, np.int64)
    hole_bits = np.empty(n_holes, np.int64)
    hole_mask = np.empty(n_holes, np.int64)
    for i in range(n_holes):
        a = holes[i, 0]
        b = holes[i, 1]
        hole_key[i] = keys[a] + keys[b]
        hole_bits[i] = card_bits[a] + card_bits[b]
        hole_mask[i] = (np.int64(1) << a) | (np.int64(1) << b)
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
        for i in range(n_holes):
            if used & hole_mask[i]:
                continue
            theirs = hand_value(key + hole_key[i], bits + hole_bits[i], offsets, values,
                                flush_values)
            if ours > theirs:
                score[i] += 2
            elif ours == theirs:
                score[i] += 1
            count[i] += 1


@nogil_kernel
def _class_equity_kernel(h0: int, h1: int, board: I64, completions: I64, holes: I64,
                         keys: I64, card_bits: I64, offsets: npt.NDArray[np.int32],
                         values: npt.NDArray[np.int32], flush_values: npt.NDArray[np.int32],
                         score: I64, count: I64) -> None:
    """What :func:`_equity_kernel` adds to ``score`` and ``count``, the same integers, with
    one evaluation per *rank class* of the holes (at most 91 pairs of ranks) per completion
    instead of one per hole. Without a flush a hand's value is a function of its ranks, so
    every hole of a class that cannot make a flush on a completed board has its class's
    value (the class's ranks valued with two cards of the board's scarcest suit, which has
    at most one card: no flush). Per completion each class's outcome is added to the class,
    and, as the re-solver's showdown removes blocked hands with per-card sums, to each of
    the completion's cards by the other rank of the class (and to each pair of its cards):
    a hole takes back, by inclusion-exclusion, the boards that hold one of its cards. Each
    hole that can make a flush (two cards of a suit the board has three of, one of a suit
    it has four of, any hole on a five-suited board) swaps its class's outcome for its own
    evaluation on that board."""
    n_holes = holes.shape[0]
    m = completions.shape[1]
    key0 = SUIT_BASE
    bits0 = np.int64(0)
    suits0 = np.zeros(4, np.int64)
    for j in range(board.shape[0]):
        key0 += keys[board[j]]
        bits0 += card_bits[board[j]]
        suits0[board[j] % 4] += 1
    ours_key = keys[h0] + keys[h1]
    ours_bits = card_bits[h0] + card_bits[h1]
    # each hole's class (lower rank x 13 + higher rank), the classes present, the holes by
    # suit (both cards of it; at least one card of it) as lists
    cls = np.empty(n_holes, np.int64)
    mask = np.empty(n_holes, np.int64)
    seen = np.zeros(169, np.bool_)
    present = np.empty(169, np.int64)
    n_present = 0
    both_n = np.zeros(5, np.int64)
    any_n = np.zeros(5, np.int64)
    for i in range(n_holes):
        a = holes[i, 0]
        b = holes[i, 1]
        q = min(a // 4, b // 4) * 13 + max(a // 4, b // 4)
        cls[i] = q
        mask[i] = (np.int64(1) << a) | (np.int64(1) << b)
        if not seen[q]:
            seen[q] = True
            present[n_present] = q
            n_present += 1
        any_n[a % 4 + 1] += 1
        if a % 4 == b % 4:
            both_n[a % 4 + 1] += 1
        else:
            any_n[b % 4 + 1] += 1
    for s in range(4):
        both_n[s + 1] += both_n[s]
        any_n[s + 1] += any_n[s]
    both = np.empty(max(both_n[4], 1), np.int64)
    anys = np.empty(max(any_n[4], 1), np.int64)
    fill_both = both_n[:4].copy()
    fill_any = any_n[:4].copy()
    for i in range(n_holes):
        a = holes[i, 0]
        b = holes[i, 1]
        anys[fill_any[a % 4]] = i
        fill_any[a % 4] += 1
        if a % 4 == b % 4:
            both[fill_both[a % 4]] = i
            fill_both[a % 4] += 1
        else:
            anys[fill_any[b % 4]] = i
            fill_any[b % 4] += 1
    # per suit and class: the summed keys and bits of the class's two cards in that suit
    class_key = np.zeros((4, n_present), np.int64)
    class_bits = np.zeros((4, n_present), np.int64)
    for s in range(4):
        for k in range(n_present):
            a = (present[k] // 13) * 4 + s
            b = (present[k] % 13) * 4 + s
            class_key[s, k] = keys[a] + keys[b]
            class_bits[s, k] = card_bits[a] + card_bits[b]
    pair_class = np.zeros((13, 13), np.int64)
    for x in range(13):
        for y in range(13):
            pair_class[x, y] = min(x, y) * 13 + max(x, y)
    per_class = np.zeros(169, np.int64)  # each class's outcomes summed over the boards
    outcome = np.zeros(169, np.int64)  # this board's outcome of each class
    by_card = np.zeros((52, 13), np.int64)  # by card and other rank: boards with the card
    by_pair = np.zeros((52, 52), np.int64)  # by pair of cards: boards with both
    card_n = np.zeros(52, np.int64)
    pair_n = np.zeros((52, 52), np.int64)
    fix = np.zeros(n_holes, np.int64)  # flush-capable holes: own minus class outcomes
    suits = np.zeros(4, np.int64)
    for r in range(completions.shape[0]):
        key = key0
        bits = bits0
        used = np.int64(0)
        for s in range(4):
            suits[s] = suits0[s]
        for j in range(m):
            c = completions[r, j]
            key += keys[c]
            bits += card_bits[c]
            used |= np.int64(1) << c
            suits[c % 4] += 1
        ours = hand_value(key + ours_key, bits + ours_bits, offsets, values, flush_values)
        scarce, rich = suit_extremes(suits)
        for k in range(n_present):
            q = present[k]
            theirs = hand_value(key + class_key[scarce, k], bits + class_bits[scarce, k],
                                offsets, values, flush_values)
            o = 2 if ours > theirs else 1 if ours == theirs else 0
            outcome[q] = o
            per_class[q] += o
        for j in range(m):  # the boards each card (and pair of cards) takes out
            c = completions[r, j]
            rc = c // 4
            card_n[c] += 1
            for x in range(13):
                by_card[c, x] += outcome[pair_class[rc, x]]
            for j2 in range(j + 1, m):
                d = completions[r, j2]
                lo = min(c, d)
                hi = max(c, d)
                by_pair[lo, hi] += outcome[pair_class[rc, d // 4]]
                pair_n[lo, hi] += 1
        if suits[rich] >= 3:  # holes that may make a flush: their own value
            flat = suits[rich] == 3
            if flat:
                lo = both_n[rich]
                hi = both_n[rich + 1]
            elif suits[rich] == 4:
                lo = any_n[rich]
                hi = any_n[rich + 1]
            else:
                lo = 0
                hi = n_holes
            for t in range(lo, hi):
                i = both[t] if flat else anys[t] if suits[rich] == 4 else t
                if used & mask[i]:
                    continue
                a = holes[i, 0]
                b = holes[i, 1]
                theirs = hand_value(key + keys[a] + keys[b], bits + card_bits[a] + card_bits[b],
                                    offsets, values, flush_values)
                o = 2 if ours > theirs else 1 if ours == theirs else 0
                fix[i] += o - outcome[cls[i]]
    rows = completions.shape[0]
    for i in range(n_holes):
        a = min(holes[i, 0], holes[i, 1])
        b = max(holes[i, 0], holes[i, 1])
        taken = by_card[a, b // 4] + by_card[b, a // 4] - by_pair[a, b]
        score[i] += per_class[cls[i]] - taken + fix[i]
        count[i] += rows - (card_n[a] + card_n[b] - pair_n[a, b])


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



@kernel
def _smallest_kernel(keys: F64, pool: I64, out: I64) -> None:
    """``out[r]``: the cards of ``pool`` at the ``out.shape[1]`` smallest of ``keys[r]``,
    ascending (``pool`` ascending): an insertion into a short sorted list per key."""
    m = out.shape[1]
    best = np.empty(m)
    at = np.empty(m, np.int64)
    for r in range(keys.shape[0]):
        n = 0
        for i in range(keys.shape[1]):
            k = keys[r, i]
            if n == m and k >= best[m - 1]:
                continue
            j = n if n < m else m - 1
            while j > 0 and best[j - 1] > k:
                best[j] = best[j - 1]
                at[j] = at[j - 1]
                j -= 1
            best[j] = k
            at[j] = i
            if n < m:
                n += 1
        for j in range(m):  # by index, and so by card
            out[r, j] = at[j]
        for x in range(1, m):
            y = x
            while y > 0 and out[r, y - 1] > out[r, y]:
                out[r, y - 1], out[r, y] = out[r, y], out[r, y - 1]
                y -= 1
        for j in range(m):
            out[r, j] = pool[out[r, j]]


@functools.cache
def _sorted_deck(game: Game) -> tuple[int, ...]:
    """``sorted(deck_for(game))``, once per game."""
    return tuple(sorted(deck_for(game)))


@functools.cache
def index_combinations(n: int, m: int) -> I64:
    """``itertools.combinations(range(n), m)`` as rows (read-only, cached)."""
    out = np.array(list(itertools.combinations(range(n), m)), dtype=np.int64).reshape(-1, m)
    out.setflags(write=False)
    return out


def completions(game: Game, dead: Sequence[int], board: Sequence[int],
                rng: np.random.Generator, fast: bool = False) -> I64:
    """``(R, m)``: the ways to deal the ``m`` board cards still to come from the cards not
    in ``dead`` (LBR's hole and the visible ``board``): all of them if at most
    :data:`MAX_EXACT_COMPLETIONS`, else :data:`PREFLOP_SAMPLES` uniform draws from ``rng``
    (each row the cards of the ``m`` smallest of one row of uniform keys). ``fast``: the
    ``m`` smallest found by one kernel (:func:`_smallest_kernel`) instead of
    ``np.argpartition`` and ``np.sort``: the same rows from the same draws (unless two keys
    of a row are equal doubles, which the two may break differently)."""
    m = game.total_board_cards - len(board)
    gone = set(dead) | set(board)
    live = [c for c in (_sorted_deck(game) if fast else sorted(deck_for(game)))
            if c not in gone]
    if m == 0:
        return np.zeros((1, 0), np.int64)
    total = 1
    for i in range(m):
        total = total * (len(live) - i) // (i + 1)
    if total <= MAX_EXACT_COMPLETIONS:
        return np.array(live, dtype=np.int64)[index_combinations(len(live), m)]
    pool = np.array(live, dtype=np.int64)
    # the m smallest of uniform keys: a uniform m-subset per row, one call for all rows
    keys = rng.random((PREFLOP_SAMPLES, pool.size))
    if fast:
        out = np.empty((PREFLOP_SAMPLES, m), np.int64)
        _smallest_kernel(keys, pool, out)
        return out
    return np.sort(pool[np.argpartition(keys, m - 1, axis=1)[:, :m]], axis=1)


def equity_counts(game: Game, hole: Sequence[int], board: Sequence[int], holes: I64,
                  boards: I64, fast: bool = False) -> tuple[I64, I64]:
    """``(score, count)`` per row of ``holes``: ``2 * wins + ties`` of ``hole`` on ``board``
    and the number of completions in ``boards`` that miss that hole's cards (what
    :func:`equities` divides)."""
    score = np.zeros(holes.shape[0], np.int64)
    count = np.zeros(holes.shape[0], np.int64)
    if holes.shape[0] == 0:
        return score, count
    if is_holdem(game):
        run = _class_equity_kernel if fast else _equity_kernel
        run(int(hole[0]), int(hole[1]), np.array(board, dtype=np.int64),
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
    return score, count


def equity_of(score: I64, count: I64) -> F64:
    """``score / (2 * count)``, 0.5 where no completion counts (the one division)."""
    return np.where(count > 0, score / np.maximum(2 * count, 1), 0.5)


def equities(game: Game, hole: Sequence[int], board: Sequence[int], holes: I64,
             boards: I64, fast: bool = False) -> F64:
    """LBR's equity (win + tie / 2) with ``hole`` on ``board`` against each of ``holes``
    (rows, none touching ``hole`` or ``board``), over the completions ``boards`` that miss
    that hole's cards (module docstring). A hole no completion misses gets 0.5. ``fast``
    (hold'em): one evaluation per rank class and completion (:func:`_class_equity_kernel`)
    instead of one per hole; the same integer counts, so the same equities."""
    if holes.shape[0] == 0:
        return np.zeros(0)
    return equity_of(*equity_counts(game, hole, board, holes, boards, fast))
