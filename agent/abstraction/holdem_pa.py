"""Potential-aware hold'em card abstraction: EMD k-means clusters per round.

Role: :class:`PotentialAwareCards` (a :class:`~agent.abstraction.buckets.CardAbstraction`,
spec kind ``"holdem-pa"``) maps own hole cards and the board to a bucket per round. The
clusters are built offline by :mod:`strategies.cards.potential` (``acpc-strategy cards-pa``);
this module holds what the agent needs at decision time and the kernels the builder shares,
so that build and play agree bucket for bucket.

**Per round** (the construction of Johanson et al. 2013 / Ganzfried and Sandholm 2014, written
out here; D = deck size, R = ranks, 4 suits, cards ``rank * 4 + suit``):

* river: a hand's *score* is ``2 * wins + ties`` against every opponent pair of the
  ``D - 7`` unseen cards (exact integers; equity = score / (2 * C(D - 7, 2))). River
  cluster = the number of thresholds ``<= score``; the ``n3 - 1`` thresholds are exact
  percentiles of the score over every real river deal (each deal once).
* turn: the hand's histogram of the river equity over the ``D - 6`` river cards in ``bins``
  equal-width bins (bin = ``min(bins - 1, score * bins // (2 * C(D - 7, 2)))``). Distance:
  the earth mover's distance of 1-D histograms, the L1 distance of the cumulative counts.
* flop: the hand's histogram over the ``D - 5`` turn cards of the TURN CLUSTER; the ground
  distance between turn clusters is 1-D, cluster ``j`` placed at the mean river equity of its
  k-means members (clusters are numbered by it, so positions increase): EMD =
  ``sum_j |CDF_a(j) - CDF_b(j)| * (pos[j + 1] - pos[j])``.
* preflop: 169 (``R * R``) lossless classes, or k-means over the classes' histograms over the
  flop clusters of all ``C(D - 2, 3)`` flops (positions: the flop clusters' mean equities),
  weighted by combinations.

k-means (:func:`strategies.cards.potential.kmeans`): k-means++ from a fixed seed on a sample of
uniformly random real deals, Lloyd iterations until no label changes; then every hand is
assigned to its nearest centroid (ties: lowest index) and clusters are renumbered by their
members' mean equity, bucket 0 weakest. A centroid is kept as integer sums ``S`` of its
members' weighted cumulative counts and the integer weight ``W``; the distance of a hand
with cumulative counts ``A`` is ``(sum_d float(|W * A_d - S_d|) * gap_d) / W``, summed in
order of ``d``, so every machine (and the plain-Python oracle of the tests) gets the very
same numbers.

**Recall.** ``imperfect``: a round's bucket is its own cluster, ``buckets = (n0, n1, n2,
n3)``. ``perfect``: the clusterings are the same (independent per round), and a round's
bucket is the sequence of the clusters so far as one mixed-radix integer, ``b0`` most
significant: ``buckets = (n0, n0 n1, n0 n1 n2, n0 n1 n2 n3)``.

**Suit isomorphism.** Boards of 3 and 4 cards are numbered by their canonical form (the
smallest sorted relabelling of the suits, compared as combination indices): a board's
entry in :func:`board_tables` gives its canonical board id and the suit permutation that
maps it there, and the hole cards are mapped by the same permutation.

**Decision time.** Preflop: a table of the 169 classes. Flop: the stored table
``flop[canonical 3-card board, hole pair]``. Turn: computed on the fly (46 exact river scores
with :func:`agent.abstraction.holdem_buckets.river_score`, histogram, nearest centroid).
River: one exact score and the thresholds. An LRU of 4096 entries caches ``bucket``.
:meth:`PotentialAwareCards.bucket_deals` does many deals at once (numba, parallel) with the
turn table ``turn[canonical 4-card board, hole pair]`` (from the build, or recomputed
from the centroids on first use: same kernel and same numbers as the build).
:meth:`PotentialAwareCards.board_buckets` gives every hole's bucket on one board at once
(sampled LBR's fast path): on the turn each river card's scores of every hole come at
once, by rank class (:func:`river_scores_kernel`), then each hole's histogram and nearest centroid,
the numbers of :meth:`~PotentialAwareCards.bucket`.

Spec (JSON-able; stored in a strategy file as ``cards``)::

    {"kind": "holdem-pa", "buckets": [...], "clusters": [n0, n1, n2, n3],
     "recall": "imperfect" | "perfect", "bins": B, "samples": N, "seed": S,
     "preflop": [169 ints], "flop": TABLE, "turn_sums": [n2 x (B - 1) ints],
     "turn_weights": [n2 ints], "river_thresholds": [n3 - 1 ints]}

with ``TABLE = {"dtype": "uint8"|"uint16", "shape": [boards, pairs], "sha256": hex,
"zlib_b64": base64 of the zlib-compressed little-endian array}``.

Imports numpy, numba, :mod:`agent.handeval` and :mod:`agent.abstraction.holdem_buckets`;
never imported by :mod:`agent.acpc`, ``dealer``, or at import time by
:mod:`agent.abstraction.buckets` (which imports it lazily).
"""

from __future__ import annotations

import hashlib
import math
import os
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, NamedTuple

import numba
import numpy as np
import numpy.typing as npt

from agent.abstraction.holdem_buckets import river_score
from agent.abstraction.holdem_buckets import warm_up as holdem_buckets_warm_up
from agent.abstraction.holdem_pa_spec import (
    NUM_FLOPS,
    buckets_for,
    check_pa_parts,
    check_pa_spec,
    combine_recall,
    encode_table,
)
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game
from agent.handeval import SUIT_BASE, TABLES_7, hand_value
from agent.jit import kernel, parallel_kernel

__all__ = [
    "DECISION_KERNELS",
    "BoardTables",
    "PotentialAwareCards",
    "board_tables",
    "combine_recall",
    "deck_preflop_class",
    "river_scores_kernel",
    "river_scores_on_board",
    "suit_extremes",
    "turn_pass",
]

SUITS: Final = 4
FULL_RANKS: Final = 13
_CACHE_SIZE: Final = 4096
_MASK32: Final = 0xFFFFFFFF

Int = int | np.int64
Int64Array = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
Float64Array = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.integer[Any]]

# Suit permutations, one per row: card c becomes (c // 4) * 4 + row[c % 4].
SUIT_PERMS: Final = np.array(
    [[a, b, c, d] for a in range(4) for b in range(4) for c in range(4) for d in range(4)
     if len({a, b, c, d}) == 4],
    dtype=np.int64,
)
SUIT_PERMS.setflags(write=False)


# --------------------------------------------------------------------------- kernels


@kernel
def _binom(n: Int, k: Int) -> int:
    """``C(n, k)`` (0 if ``k > n`` or ``k < 0``)."""
    if k < 0 or k > n:
        return 0
    value: Int = 1
    for i in range(k):
        value = value * (n - i) // (i + 1)
    return int(value)


@kernel
def _pair_id(a: Int, b: Int) -> int:
    """Colex index of the pair ``{a, b}``: ``C(hi, 2) + lo``."""
    if a > b:
        a, b = b, a
    return int(b * (b - 1) // 2 + a)


@kernel
def comb_index(cards: Int64Array, k: Int) -> int:
    """Colex index ``sum_i C(c_i, i + 1)`` of ``k`` sorted cards."""
    index = 0
    for i in range(k):
        index += _binom(cards[i], i + 1)
    return int(index)


@kernel
def sort_small(a: Int64Array, k: Int) -> None:
    for i in range(1, k):
        value = a[i]
        j = i - 1
        while j >= 0 and a[j] > value:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = value


@kernel
def _board_tables_kernel(
    deck: Int, k: Int, perms: Int64Array, canon: Int64Array, perm_of: Int64Array
) -> None:
    """For every sorted ``k``-subset of ``0..deck-1`` (colex index ``i``): ``canon[i]``,
    the colex index of its smallest relabelling, and ``perm_of[i]``, the first permutation
    reaching it."""
    cards = np.zeros(k, np.int64)
    mapped = np.zeros(k, np.int64)
    for i in range(k):
        cards[i] = i
    while True:
        index = comb_index(cards, k)
        best = -1
        best_p = 0
        for p in range(perms.shape[0]):
            for i in range(k):
                c = cards[i]
                mapped[i] = (c // 4) * 4 + perms[p, c % 4]
            sort_small(mapped, k)
            m = comb_index(mapped, k)
            if best < 0 or m < best:
                best = m
                best_p = p
        canon[index] = best
        perm_of[index] = best_p
        # next combination in colex order: lowest position that can grow
        j = 0
        while j < k - 1 and cards[j] + 1 == cards[j + 1]:
            j += 1
        if j == k - 1 and cards[j] + 1 == deck:
            break
        cards[j] += 1
        for i in range(j):
            cards[i] = i


@kernel
def _unrank_comb(index: Int, k: Int, out: Int64Array) -> None:
    """The sorted ``k`` cards of colex index ``index``."""
    for i in range(k - 1, -1, -1):
        c = i
        while _binom(c + 1, i + 1) <= index:
            c += 1
        out[i] = c
        index -= _binom(c, i + 1)


@kernel
def suit_extremes(suits: Int64Array) -> tuple[int, int]:
    """The scarcest and the richest of the four suits by ``suits`` (a board's count of
    each; the first of equals): two hole cards of the scarcest suit can make no flush
    unless a pair of the richest can, the rank classes' valuation of
    :func:`river_scores_kernel` and of LBR's equities by rank class."""
    scarce = 0
    rich = 0
    for s in range(1, 4):
        if suits[s] < suits[scarce]:
            scarce = s
        if suits[s] > suits[rich]:
            rich = s
    return scarce, rich


@kernel
def _class_values(key5: Int, bits5: Int, scarce: Int, ranks: Int, keys: Int64Array,
                  card_bits: Int64Array, offsets: Int32Array, values: Int32Array,
                  flush_values: Int32Array) -> Int64Array:
    """``[x, y]``: the value on the board (summed ``key5``, ``bits5``) of a hole of ranks
    ``x`` and ``y`` that cannot make a flush, valued with two cards of the board's
    ``scarce`` suit (symmetric)."""
    value = np.empty((ranks, ranks), np.int64)
    for x in range(ranks):
        kx = key5 + keys[x * 4 + scarce]
        bx = bits5 + card_bits[x * 4 + scarce]
        for y in range(x, ranks):
            v = hand_value(kx + keys[y * 4 + scarce], bx + card_bits[y * 4 + scarce], offsets,
                           values, flush_values)  # fmt: skip
            value[x, y] = v
            value[y, x] = v
    return value


@kernel
def _no_flush_scores(
    key5: Int,
    bits5: Int,
    dead: Int,
    scarce: Int,
    ranks: Int,
    keys: Int64Array,
    card_bits: Int64Array,
    offsets: Int32Array,
    values: Int32Array,
    flush_values: Int32Array,
    out: Int64Array,
) -> None:
    """:func:`river_scores_kernel` on a board with at most two cards of any suit: no hole
    can make a flush, so a pair's value is its ranks' (valued with two cards of the
    board's scarcest suit) and its score its rank class's. Per class: the pairs of every
    class below it (twice) and at it, minus the pairs through either of its two cards
    (counted by the other card's rank), plus 1 (the pair itself is taken out twice)."""
    live = np.zeros(ranks, np.int64)
    for c in range(4 * ranks):
        if not (dead >> c) & 1:
            live[c // 4] += 1
    value = _class_values(key5, bits5, scarce, ranks, keys, card_bits, offsets, values,
                          flush_values)  # fmt: skip
    n_classes = ranks * (ranks + 1) // 2
    by_value = np.empty(n_classes, np.int64)  # the classes' values, ascending
    weight = np.empty(n_classes, np.int64)  # their live pairs
    k = 0
    for x in range(ranks):
        for y in range(x, ranks):
            v = value[x, y]
            w = live[x] * (live[x] - 1) // 2 if x == y else live[x] * live[y]
            j = k
            while j > 0 and by_value[j - 1] > v:
                by_value[j] = by_value[j - 1]
                weight[j] = weight[j - 1]
                j -= 1
            by_value[j] = v
            weight[j] = w
            k += 1
    total = np.empty(n_classes, np.int64)  # 2 * pairs below + pairs at each value
    below = 0
    i = 0
    while i < n_classes:
        e = i
        at = 0
        while e < n_classes and by_value[e] == by_value[i]:
            at += weight[e]
            e += 1
        for t in range(i, e):
            total[t] = 2 * below + at
        below += at
        i = e
    score = np.empty((ranks, ranks), np.int64)
    for x in range(ranks):
        for y in range(x, ranks):
            v = value[x, y]
            s = total[np.searchsorted(by_value, v)] + 1
            for z in range(ranks):
                u = value[x, z]
                if u <= v:
                    s -= (live[z] - (z == x)) * (2 if u < v else 1)
                u = value[y, z]
                if u <= v:
                    s -= (live[z] - (z == y)) * (2 if u < v else 1)
            score[x, y] = s
    for b in range(4 * ranks):
        if (dead >> b) & 1:
            continue
        for a in range(b):
            if not (dead >> a) & 1:
                out[b * (b - 1) // 2 + a] = score[a // 4, b // 4]


@kernel
def river_scores_kernel(
    board: Int64Array,
    deck: Int,
    keys: Int64Array,
    card_bits: Int64Array,
    offsets: Int32Array,
    values: Int32Array,
    flush_values: Int32Array,
    packed: Int64Array,
    pair_a: Int64Array,
    pair_b: Int64Array,
    less: Int64Array,
    equal: Int64Array,
    out: Int64Array,
) -> None:
    """``out[pair id]`` = ``2 * wins + ties`` of every hole pair of live cards on a 5-card board.

    The score of :func:`agent.abstraction.holdem_buckets.river_score` for every pair at
    once, by rank class: a pair that cannot make a flush (both cards of a suit the board has
    three of, one of a suit it has four of, any pair on a five-suited board) has its two
    ranks' value (:func:`_no_flush_scores` when no pair can). Otherwise every distinct value
    (the classes' and the flush pairs' own) is ranked, the pairs counted into their value's
    group (a counting sort), and a pair's wins are the pairs below it minus those sharing
    one of its cards (counted per card), ties the same within its group (plus 1: itself is
    subtracted twice). Entries of pairs touching the board are left as they are. Scratch:
    ``packed``, ``pair_a``, ``pair_b`` of ``C(deck - 5, 2)``, ``less``, ``equal`` of
    ``deck`` entries.
    """
    key5 = SUIT_BASE
    bits5 = np.int64(0)
    dead = np.int64(0)
    suits = np.zeros(4, np.int64)
    for i in range(5):
        key5 += keys[board[i]]
        bits5 += card_bits[board[i]]
        dead |= np.int64(1) << board[i]
        suits[board[i] % 4] += 1
    scarce, rich = suit_extremes(suits)
    n_rich = suits[rich]
    ranks = deck // 4
    if n_rich <= 2:
        _no_flush_scores(key5, bits5, dead, scarce, ranks, keys, card_bits, offsets, values,
                         flush_values, out)  # fmt: skip
        return
    class_value = _class_values(key5, bits5, scarce, ranks, keys, card_bits, offsets, values,
                                flush_values).ravel()  # fmt: skip
    distinct = np.empty(ranks * ranks + pair_a.shape[0], np.int64)
    n = 0
    for x in range(ranks):
        for y in range(x, ranks):
            distinct[n] = class_value[x * ranks + y]
            n += 1
    m = 0
    for b in range(deck):
        if (dead >> b) & 1:
            continue
        for a in range(b):
            if (dead >> a) & 1:
                continue
            pair_a[m] = a
            pair_b[m] = b
            if n_rich >= 5 or (n_rich == 4 and (a % 4 == rich or b % 4 == rich)) or (
                a % 4 == rich and b % 4 == rich
            ):
                v = hand_value(key5 + keys[a] + keys[b], bits5 + card_bits[a] + card_bits[b],
                               offsets, values, flush_values)  # fmt: skip
                packed[m] = -1 - v  # its own value
                distinct[n] = v
                n += 1
            else:
                packed[m] = (a // 4) * ranks + b // 4  # its class
            m += 1
    order = np.sort(distinct[:n])
    d = 0
    for i in range(n):
        if i == 0 or order[i] != order[i - 1]:
            order[d] = order[i]
            d += 1
    uniq = order[:d]
    class_rank = np.searchsorted(uniq, class_value)
    count = np.zeros(d + 1, np.int64)
    for j in range(m):
        p = packed[j]
        r = class_rank[p] if p >= 0 else np.searchsorted(uniq, -1 - p)
        packed[j] = r
        count[r + 1] += 1
    for r in range(d):
        count[r + 1] += count[r]
    start = count.copy()
    slot = np.empty(m, np.int64)
    for j in range(m):
        r = packed[j]
        slot[start[r]] = j
        start[r] += 1
    for c in range(deck):
        less[c] = 0
        equal[c] = 0
    less_total = 0
    for r in range(d):
        i = count[r]
        e = count[r + 1]
        for t in range(i, e):
            g = slot[t]
            equal[pair_a[g]] += 1
            equal[pair_b[g]] += 1
        group = e - i
        for t in range(i, e):
            g = slot[t]
            a = pair_a[g]
            b = pair_b[g]
            wins = less_total - less[a] - less[b]
            ties = group - equal[a] - equal[b] + 1
            out[b * (b - 1) // 2 + a] = 2 * wins + ties
        for t in range(i, e):
            g = slot[t]
            a = pair_a[g]
            b = pair_b[g]
            equal[a] = 0
            equal[b] = 0
            less[a] += 1
            less[b] += 1
        less_total += group


@kernel
def centroid_distance(
    cdf: Int64Array, sums: Int64Array, weights: Int64Array, j: Int, gaps: Float64Array
) -> float:
    """EMD of cumulative counts ``cdf`` to centroid ``j``: ``sum_d |W A_d - S_d| gap_d / W``."""
    w = weights[j]
    acc = 0.0
    for d in range(cdf.shape[0]):
        diff = w * cdf[d] - sums[j, d]
        if diff < 0:
            diff = -diff
        acc += float(diff) * gaps[d]
    return acc / float(w)


@kernel
def centroid_means(
    sums: Int64Array, weights: Int64Array, gaps: Float64Array, out: Float64Array
) -> None:
    """``out[j] = sum_d S_jd gap_d / W_j``: with a hand's ``m = sum_d A_d gap_d``,
    ``|m - out[j]|`` is a lower bound of its distance to centroid ``j``."""
    for j in range(sums.shape[0]):
        acc = 0.0
        for d in range(sums.shape[1]):
            acc += float(sums[j, d]) * gaps[d]
        out[j] = acc / float(weights[j])


@kernel
def nearest_centroid(
    cdf: Int64Array, sums: Int64Array, weights: Int64Array, gaps: Float64Array,
    means: Float64Array,
) -> int:
    """Nearest centroid (lowest index on ties) of cumulative counts ``cdf`` (module doc).

    The result of comparing :func:`centroid_distance` to every centroid, found faster: first the
    centroid whose mean is nearest the hand's, then the others, skipping one whose lower
    bound ``|m - means[j]|`` exceeds the best distance by more than float rounding could
    explain (a relative 1e-9), and dropping one as soon as its partial sum (which only
    grows: the terms are >= 0 and rounding is monotone) is past the best, checked every 8
    terms. Ties keep the lowest index.
    """
    dims = cdf.shape[0]
    k = sums.shape[0]
    m = 0.0
    for d in range(dims):
        m += float(cdf[d]) * gaps[d]
    best = 0
    gap_best = abs(m - means[0])
    for j in range(1, k):
        g = abs(m - means[j])
        if g < gap_best:
            gap_best = g
            best = j
    best_d = centroid_distance(cdf, sums, weights, best, gaps)
    for j in range(k):
        if j == best:
            continue
        if abs(m - means[j]) > best_d * (1.0 + 1e-9) + 1e-9:
            continue
        w = weights[j]
        fw = float(w)
        acc = 0.0
        dropped = False
        for d in range(dims):
            diff = w * cdf[d] - sums[j, d]
            if diff < 0:
                diff = -diff
            acc += float(diff) * gaps[d]
            if (d & 7) == 7:
                part = acc / fw
                if part > best_d or (part == best_d and j > best):
                    dropped = True
                    break
        if dropped:
            continue
        dist = acc / fw
        if dist < best_d or (dist == best_d and j < best):
            best = j
            best_d = dist
    return best


@parallel_kernel
def _turn_pass_kernel(
    deck: Int,
    bins: Int,
    workers: Int,
    boards: Int64Array,
    ids: Int64Array,
    mult: Int64Array,
    sample_start: Int64Array,
    sample_pair: Int64Array,
    sums: Int64Array,
    weights: Int64Array,
    gaps: Float64Array,
    keys: Int64Array,
    card_bits: Int64Array,
    offsets: Int32Array,
    values: Int32Array,
    flush_values: Int32Array,
    sample_cdf: Int64Array,
    sample_strength: Int64Array,
    river_counts: Int64Array,
    table: npt.NDArray[np.uint16],
    strength: Int32Array,
    progress: Int64Array,
) -> None:
    """Turn features of every hole pair on the canonical 4-card boards ``boards[ids]``.

    Per board: for each river card, the scores of every hole (:func:`river_scores_kernel`)
    into per-hole bin counts and score sums. Then the sampled hands of the board (rows
    ``sample_start[cid] .. sample_start[cid + 1]`` with pair ids ``sample_pair``) get their
    cumulative counts and score sums; ``river_counts[worker, score] += mult[cid]``; and if
    ``sums`` has rows, every hole's nearest centroid goes to ``table[cid, pair]`` and its
    score sum to ``strength[cid, pair]`` (entries of pairs touching the board: untouched).
    ``progress[worker]`` counts finished boards.
    """
    n_pairs = deck * (deck - 1) // 2
    live = deck - 5
    m = live * (live - 1) // 2
    n_opp2 = (deck - 7) * (deck - 8)  # 2 * C(deck - 7, 2)
    assign = sums.shape[0] > 0
    means = np.zeros(sums.shape[0])
    centroid_means(sums, weights, gaps, means)
    for w in numba.prange(workers):
        packed = np.empty(m, np.int64)
        pair_a = np.empty(m, np.int64)
        pair_b = np.empty(m, np.int64)
        less = np.empty(deck, np.int64)
        equal = np.empty(deck, np.int64)
        scores = np.zeros(n_pairs, np.int64)
        hist = np.zeros((n_pairs, bins), np.int64)
        total = np.zeros(n_pairs, np.int64)
        cdf = np.zeros(bins - 1, np.int64)
        board5 = np.zeros(5, np.int64)
        holes = np.zeros(n_pairs, np.int64)
        hole_a = np.zeros(n_pairs, np.int64)
        hole_b = np.zeros(n_pairs, np.int64)
        for slot_id in range(w, ids.shape[0], workers):
            cid = ids[slot_id]
            dead = np.int64(0)
            for i in range(4):
                board5[i] = boards[cid, i]
                dead |= np.int64(1) << boards[cid, i]
            n_holes = 0
            for b in range(deck):
                if (dead >> b) & 1:
                    continue
                for a in range(b):
                    if (dead >> a) & 1:
                        continue
                    pid = b * (b - 1) // 2 + a
                    holes[n_holes] = pid
                    hole_a[n_holes] = a
                    hole_b[n_holes] = b
                    n_holes += 1
                    total[pid] = 0
                    for x in range(bins):
                        hist[pid, x] = 0
            for river in range(deck):
                if (dead >> river) & 1:
                    continue
                board5[4] = river
                river_scores_kernel(
                    board5, deck, keys, card_bits, offsets, values, flush_values, packed,
                    pair_a, pair_b, less, equal, scores,
                )  # fmt: skip
                for t in range(n_holes):
                    pid = holes[t]
                    if hole_a[t] == river or hole_b[t] == river:
                        continue
                    s = scores[pid]
                    slot = min(s * bins // n_opp2, bins - 1)
                    hist[pid, slot] += 1
                    total[pid] += s
                    river_counts[w, s] += mult[cid]
            for r in range(sample_start[cid], sample_start[cid + 1]):
                pid = sample_pair[r]
                acc = 0
                for x in range(bins - 1):
                    acc += hist[pid, x]
                    sample_cdf[r, x] = acc
                sample_strength[r] = total[pid]
            if assign:
                for t in range(n_holes):
                    pid = holes[t]
                    acc = 0
                    for x in range(bins - 1):
                        acc += hist[pid, x]
                        cdf[x] = acc
                    table[cid, pid] = nearest_centroid(cdf, sums, weights, gaps, means)
                    strength[cid, pid] = total[pid]
            progress[w] += 1


@kernel
def map_pair(a: Int, b: Int, perm: Int64Array) -> int:
    ma = (a // 4) * 4 + perm[a % 4]
    mb = (b // 4) * 4 + perm[b % 4]
    return _pair_id(ma, mb)


@kernel
def canonical_pair(
    hole0: Int,
    hole1: Int,
    board: Int64Array,
    k: Int,
    canon: Int64Array,
    perm_of: Int64Array,
    cid_of: Int64Array,
    perms: Int64Array,
    scratch: Int64Array,
) -> tuple[int, int]:
    """(canonical board id, mapped hole pair id) of hole + ``k`` board cards."""
    for i in range(k):
        scratch[i] = board[i]
    sort_small(scratch, k)
    index = comb_index(scratch, k)
    return int(cid_of[canon[index]]), map_pair(hole0, hole1, perms[perm_of[index]])


@kernel
def preflop_class_kernel(a: Int, b: Int, ranks: Int) -> int:
    ra = a // 4
    rb = b // 4
    hi = max(ra, rb)
    lo = min(ra, rb)
    if hi == lo:
        return int(ranks * hi + hi)
    if a % 4 == b % 4:
        return int(ranks * hi + lo)
    return int(ranks * lo + hi)


@kernel
def _turn_cluster_kernel(
    h0: Int,
    h1: Int,
    board: Int64Array,
    bins: Int,
    sums: Int64Array,
    weights: Int64Array,
    gaps: Float64Array,
    means: Float64Array,
    keys: Int64Array,
    card_bits: Int64Array,
    offsets: Int32Array,
    values: Int32Array,
    flush_values: Int32Array,
    work: Int64Array,
    hist: Int64Array,
    cdf: Int64Array,
) -> int:
    """Turn cluster of hole ``h0 h1`` on a 4-card ``board`` (full deck), on the fly."""
    key4 = SUIT_BASE
    bits4 = np.int64(0)
    dead = (np.int64(1) << h0) | (np.int64(1) << h1)
    for i in range(4):
        key4 += keys[board[i]]
        bits4 += card_bits[board[i]]
        dead |= np.int64(1) << board[i]
    for x in range(bins):
        hist[x] = 0
    for river in range(52):
        if (dead >> river) & 1:
            continue
        s = river_score(
            h0, h1, key4 + keys[river], bits4 + card_bits[river], dead | (np.int64(1) << river),
            keys, card_bits, offsets, values, flush_values, work,
        )  # fmt: skip
        hist[min(s * bins // 1980, bins - 1)] += 1
    acc = 0
    for x in range(bins - 1):
        acc += hist[x]
        cdf[x] = acc
    return nearest_centroid(cdf, sums, weights, gaps, means)


@kernel
def _river_score_of(
    h0: Int,
    h1: Int,
    board: Int64Array,
    keys: Int64Array,
    card_bits: Int64Array,
    offsets: Int32Array,
    values: Int32Array,
    flush_values: Int32Array,
    work: Int64Array,
) -> int:
    key5 = SUIT_BASE
    bits5 = np.int64(0)
    dead = (np.int64(1) << h0) | (np.int64(1) << h1)
    for i in range(5):
        key5 += keys[board[i]]
        bits5 += card_bits[board[i]]
        dead |= np.int64(1) << board[i]
    return river_score(
        h0, h1, key5, bits5, dead, keys, card_bits, offsets, values, flush_values, work
    )


@kernel
def _count_below_or_equal(thresholds: Int64Array, score: Int) -> int:
    n = 0
    for t in thresholds:
        if t <= score:
            n += 1
    return n


@parallel_kernel
def _bucket_deals_kernel(
    holes: Int64Array,
    boards: Int64Array,
    workers: Int,
    preflop: Int64Array,
    canon3: Int64Array,
    perm3: Int64Array,
    cid3: Int64Array,
    flop: npt.NDArray[Any],
    canon4: Int64Array,
    perm4: Int64Array,
    cid4: Int64Array,
    turn: npt.NDArray[np.uint16],
    thresholds: Int64Array,
    perms: Int64Array,
    radix: Int64Array,
    perfect: bool,
    keys: Int64Array,
    card_bits: Int64Array,
    offsets: Int32Array,
    values: Int32Array,
    flush_values: Int32Array,
    out: npt.NDArray[np.uint16],
) -> None:
    """``out[i, r]``: bucket of deal ``i`` in round ``r`` (clusters combined by recall)."""
    n = holes.shape[0]
    for w in numba.prange(workers):
        work = np.zeros(8 * 13, np.int64)
        scratch = np.zeros(5, np.int64)
        clusters = np.zeros(4, np.int64)
        for i in range(w, n, workers):
            h0 = holes[i, 0]
            h1 = holes[i, 1]
            board = boards[i]
            clusters[0] = preflop[preflop_class_kernel(h0, h1, 13)]
            c, p = canonical_pair(h0, h1, board, 3, canon3, perm3, cid3, perms, scratch)
            clusters[1] = flop[c, p]
            c, p = canonical_pair(h0, h1, board, 4, canon4, perm4, cid4, perms, scratch)
            clusters[2] = turn[c, p]
            s = _river_score_of(
                h0, h1, board, keys, card_bits, offsets, values, flush_values, work
            )
            clusters[3] = _count_below_or_equal(thresholds, s)
            acc = 0
            for r in range(4):
                if perfect:
                    acc = acc * radix[r] + clusters[r]
                    out[i, r] = acc
                else:
                    out[i, r] = clusters[r]


@kernel
def _board_clusters_kernel(
    board: Int64Array,
    n_board: Int,
    rows: npt.NDArray[np.bool_],
    bins: Int,
    preflop: Int64Array,
    canon3: Int64Array,
    perm3: Int64Array,
    cid3: Int64Array,
    flop: npt.NDArray[Any],
    perms: Int64Array,
    sums: Int64Array,
    weights: Int64Array,
    gaps: Float64Array,
    means: Float64Array,
    thresholds: Int64Array,
    keys: Int64Array,
    card_bits: Int64Array,
    offsets: Int32Array,
    values: Int32Array,
    flush_values: Int32Array,
    out: Int64Array,
) -> None:
    """``out[r, pair id]``: the cluster in round ``r`` of every hole pair that misses the
    ``n_board`` (0, 3, 4 or 5) cards of ``board``, for the rounds ``r`` with ``rows[r]``
    (the others, and the pairs touching the board, untouched): every hole at once, the
    very numbers of :meth:`PotentialAwareCards.bucket`. The turn's clusters come from the
    scores of every pair on each river card (:func:`river_scores_kernel`, all at once per
    river, instead of :func:`river_score` per hole and river), binned and compared with
    the centroids as :func:`_turn_cluster_kernel` does; the river's from one such pass."""
    dead = np.int64(0)
    for i in range(n_board):
        dead |= np.int64(1) << board[i]
    scratch = np.zeros(5, np.int64)
    if rows[0] or rows[1]:
        for b in range(52):
            for a in range(b):
                if (dead >> a) & 1 or (dead >> b) & 1:
                    continue
                pid = b * (b - 1) // 2 + a
                if rows[0]:
                    out[0, pid] = preflop[preflop_class_kernel(a, b, 13)]
                if rows[1]:
                    c, p = canonical_pair(a, b, board, 3, canon3, perm3, cid3, perms, scratch)
                    out[1, pid] = flop[c, p]
    live = 47
    m = live * (live - 1) // 2
    packed = np.empty(m, np.int64)
    pair_a = np.empty(m, np.int64)
    pair_b = np.empty(m, np.int64)
    less = np.empty(52, np.int64)
    equal = np.empty(52, np.int64)
    scores = np.zeros(1326, np.int64)
    board5 = np.zeros(5, np.int64)
    if rows[2]:
        dead4 = np.int64(0)
        for i in range(4):
            board5[i] = board[i]
            dead4 |= np.int64(1) << board[i]
        hist = np.zeros((1326, bins), np.int64)
        for river in range(52):
            if (dead4 >> river) & 1:
                continue
            board5[4] = river
            river_scores_kernel(board5, 52, keys, card_bits, offsets, values, flush_values,
                                 packed, pair_a, pair_b, less, equal, scores)
            for b in range(52):
                for a in range(b):
                    if (dead >> a) & 1 or (dead >> b) & 1 or a == river or b == river:
                        continue
                    s = scores[b * (b - 1) // 2 + a]
                    hist[b * (b - 1) // 2 + a, min(s * bins // 1980, bins - 1)] += 1
        cdf = np.zeros(bins - 1, np.int64)
        for b in range(52):
            for a in range(b):
                if (dead >> a) & 1 or (dead >> b) & 1:
                    continue
                pid = b * (b - 1) // 2 + a
                acc = 0
                for x in range(bins - 1):
                    acc += hist[pid, x]
                    cdf[x] = acc
                out[2, pid] = nearest_centroid(cdf, sums, weights, gaps, means)
    if rows[3]:
        river_scores_kernel(board, 52, keys, card_bits, offsets, values, flush_values,
                             packed, pair_a, pair_b, less, equal, scores)
        for b in range(52):
            for a in range(b):
                if (dead >> a) & 1 or (dead >> b) & 1:
                    continue
                pid = b * (b - 1) // 2 + a
                out[3, pid] = _count_below_or_equal(thresholds, scores[pid])


# --------------------------------------------------------------------------- tables


DECISION_KERNELS: Final = (_board_tables_kernel, centroid_means, canonical_pair,
                           preflop_class_kernel, _turn_cluster_kernel, _river_score_of,
                           _count_below_or_equal)
"""The kernels an agent playing a potential-aware file compiles (construction and
:meth:`PotentialAwareCards.bucket`), for :func:`agent.agents.policy_kernels`."""


class BoardTables(NamedTuple):
    """Suit-isomorphism tables of the ``k``-card boards of a deck (:func:`board_tables`)."""

    canon: Int64Array
    """Per colex index of a sorted board: the colex index of its canonical form."""
    perm_of: Int64Array
    """Per colex index: the row of :data:`SUIT_PERMS` mapping the board to its canonical form."""
    cid_of: Int64Array
    """Per colex index of a canonical board: its dense id (else -1)."""
    boards: Int64Array
    """Per canonical id: its sorted cards, shape ``(n, k)``."""
    mult: Int64Array
    """Per canonical id: how many boards have this canonical form."""


_BOARD_TABLES: dict[tuple[int, int], BoardTables] = {}


def board_tables(ranks: int, k: int) -> BoardTables:
    """Canonical ``k``-card boards of the deck of ``ranks`` x 4 cards (cached per process)."""
    key = (ranks, k)
    hit = _BOARD_TABLES.get(key)
    if hit is not None:
        return hit
    deck = 4 * ranks
    n = math.comb(deck, k)
    canon = np.zeros(n, np.int64)
    perm_of = np.zeros(n, np.int64)
    _board_tables_kernel(deck, k, SUIT_PERMS, canon, perm_of)
    ids = np.unique(canon)
    cid_of = np.full(n, -1, np.int64)
    cid_of[ids] = np.arange(ids.size)
    boards = np.zeros((ids.size, k), np.int64)
    row = np.zeros(k, np.int64)
    for i, index in enumerate(ids):
        _unrank_comb(int(index), k, row)
        boards[i] = row
    mult = np.bincount(cid_of[canon], minlength=ids.size).astype(np.int64)
    for array in (canon, perm_of, cid_of, boards, mult):
        array.setflags(write=False)
    tables = BoardTables(canon, perm_of, cid_of, boards, mult)
    _BOARD_TABLES[key] = tables
    return tables


def deck_preflop_class(a: int, b: int, ranks: int = FULL_RANKS) -> int:
    """Preflop class of hole ``a b`` in a deck of ``ranks`` ranks: pair ``R r + r``, suited
    ``R hi + lo``, offsuit ``R lo + hi`` (as :func:`holdem_buckets.preflop_class`)."""
    return int(preflop_class_kernel(a, b, ranks))


def river_scores_on_board(board: Sequence[int], ranks: int = FULL_RANKS) -> Int64Array:
    """Scores ``2 * wins + ties`` of every hole pair (colex pair id) on a 5-card board.

    Pairs touching the board get -1.

    Raises:
        AbstractionError: unless ``board`` is 5 distinct cards of the deck.
    """
    deck = 4 * ranks
    cards = _check_cards(board, 5, deck, "board")
    live = deck - 5
    m = live * (live - 1) // 2
    out = np.full(deck * (deck - 1) // 2, -1, np.int64)
    river_scores_kernel(
        cards, deck, *TABLES_7, np.zeros(m, np.int64), np.zeros(m, np.int64),
        np.zeros(m, np.int64), np.zeros(deck, np.int64), np.zeros(deck, np.int64), out,
    )  # fmt: skip
    return out


def _check_cards(cards: Sequence[int], k: int, deck: int, what: str) -> Int64Array:
    values = list(cards)
    if (
        len(values) != k
        or any(isinstance(c, bool) or not isinstance(c, int | np.integer) for c in values)
        or len(set(values)) != k
        or any(not 0 <= c < deck for c in values)
    ):
        raise AbstractionError(
            f"expected {k} distinct {what} cards in 0..{deck - 1}, got {values!r}"
        )
    return np.array(values, np.int64)


class TurnPass(NamedTuple):
    """What :func:`turn_pass` returns."""

    sample_cdf: Int64Array
    sample_strength: Int64Array
    river_counts: Int64Array
    table: npt.NDArray[np.uint16]
    strength: Int32Array


def turn_pass(
    ranks: int,
    bins: int,
    *,
    sample_pairs: Int64Array | None = None,
    sample_boards: Int64Array | None = None,
    sums: Int64Array | None = None,
    weights: Int64Array | None = None,
    workers: int = 2,
    progress: Any = None,
    board_ids: Int64Array | None = None,
) -> TurnPass:
    """Run the turn pass over every canonical 4-card board (:func:`_turn_pass_kernel`).

    ``sample_boards``/``sample_pairs``: canonical board ids and mapped pair ids of sampled
    hands (their features come back in sample order). ``sums``/``weights``: turn centroids
    to assign every hand to (else ``table`` is empty). ``progress(done, total)`` is called
    about every second from the calling thread. ``board_ids``: only these canonical boards
    (the table's other rows stay 0; for tests).
    """
    deck = 4 * ranks
    tables = board_tables(ranks, 4)
    n_boards = tables.boards.shape[0]
    n_pairs = deck * (deck - 1) // 2
    if sample_pairs is None or sample_boards is None:
        sample_pairs = np.zeros(0, np.int64)
        sample_boards = np.zeros(0, np.int64)
    order = np.argsort(sample_boards, kind="stable")
    start = np.searchsorted(sample_boards[order], np.arange(n_boards + 1)).astype(np.int64)
    sorted_pairs = np.ascontiguousarray(sample_pairs[order], dtype=np.int64)
    cdf_sorted = np.zeros((order.size, bins - 1), np.int64)
    strength_sorted = np.zeros(order.size, np.int64)
    n_opp2 = (deck - 7) * (deck - 8)
    river_counts = np.zeros((workers, n_opp2 + 1), np.int64)
    assign = sums is not None and weights is not None
    if assign:
        assert sums is not None and weights is not None
        table = np.zeros((n_boards, n_pairs), np.uint16)
        strength = np.zeros((n_boards, n_pairs), np.int32)
        c_sums = np.ascontiguousarray(sums, dtype=np.int64)
        c_weights = np.ascontiguousarray(weights, dtype=np.int64)
    else:
        table = np.zeros((0, n_pairs), np.uint16)
        strength = np.zeros((0, n_pairs), np.int32)
        c_sums = np.zeros((0, bins - 1), np.int64)
        c_weights = np.zeros(0, np.int64)
    done = np.zeros(workers, np.int64)
    ids = (np.arange(n_boards, dtype=np.int64) if board_ids is None
           else np.ascontiguousarray(board_ids, dtype=np.int64))
    args = (
        deck, bins, workers, tables.boards, ids, tables.mult, start, sorted_pairs, c_sums,
        c_weights, np.ones(bins - 1), *TABLES_7, cdf_sorted, strength_sorted, river_counts,
        table, strength, done,
    )
    if progress is None:
        _turn_pass_kernel(*args)
    else:
        import threading

        thread = threading.Thread(target=_turn_pass_kernel, args=args, daemon=True)
        thread.start()
        while thread.is_alive():
            thread.join(1.0)
            progress(int(done.sum()), ids.size)
    sample_cdf = np.zeros_like(cdf_sorted)
    sample_cdf[order] = cdf_sorted
    sample_strength = np.zeros_like(strength_sorted)
    sample_strength[order] = strength_sorted
    return TurnPass(sample_cdf, sample_strength, river_counts.sum(axis=0), table, strength)


class PotentialAwareCards:
    """Potential-aware EMD buckets (module docstring); build with
    :func:`strategies.cards.potential.build`, rebuild from a spec with :meth:`from_spec`.

    Construction compiles the kernels (or loads them from numba's cache).
    """

    def __init__(
        self,
        *,
        clusters: Sequence[int],
        recall: str,
        bins: int,
        preflop: Sequence[int],
        flop: npt.NDArray[Any],
        turn_sums: npt.NDArray[np.int64],
        turn_weights: npt.NDArray[np.int64],
        river_thresholds: Sequence[int],
        samples: int | None = None,
        seed: int | None = None,
        turn_table: npt.NDArray[np.uint16] | None = None,
    ) -> None:
        """The abstraction from its parts (validated as in :meth:`from_spec`)."""
        parts = check_pa_parts(
            clusters=clusters, recall=recall, bins=bins, preflop=preflop, flop=flop,
            turn_sums=turn_sums, turn_weights=turn_weights, river_thresholds=river_thresholds,
        )  # fmt: skip
        self._clusters: tuple[int, int, int, int] = parts["clusters"]
        n2 = self._clusters[2]
        self._recall = recall
        self._bins = bins
        self._preflop = parts["preflop"]
        b3 = board_tables(FULL_RANKS, 3)
        if b3.boards.shape[0] != NUM_FLOPS:  # the spec module's constant
            raise AssertionError(f"expected {NUM_FLOPS} canonical flops, got {b3.boards.shape[0]}")
        self._flop = parts["flop"]
        self._turn_sums = parts["turn_sums"]
        self._turn_weights = parts["turn_weights"]
        self._thresholds = parts["river_thresholds"]
        self._buckets = buckets_for(self._clusters, recall)
        self._samples = samples
        self._seed = seed
        self._turn_table = turn_table
        self._cache: OrderedDict[tuple[int, tuple[int, ...], tuple[int, ...]], int] = OrderedDict()
        self._work = np.zeros(8 * 13, np.int64)
        self._hist = np.zeros(bins, np.int64)
        self._cdf = np.zeros(bins - 1, np.int64)
        self._scratch = np.zeros(5, np.int64)
        self._gaps = np.ones(bins - 1)
        self._turn_means = np.zeros(n2)
        centroid_means(self._turn_sums, self._turn_weights, self._gaps, self._turn_means)
        self._b3 = b3
        self._b4 = board_tables(FULL_RANKS, 4)
        self.warm_up()

    def warm_up(self) -> None:
        """Compile (or load) the decision-time kernels now (and holdem_buckets', which
        :func:`agent.agents.policy_kernels` lists for every hold'em strategy)."""
        holdem_buckets_warm_up()
        self._clusters_of([0, 1], [2, 3, 4, 5, 6], 3)

    def warm_up_batch(self) -> None:
        """Compile (or load) the parallel kernel of :meth:`bucket_deals` now (a solver's or
        ``acpc-arena warmup``'s work; a playing agent never needs it, so construction does
        not load it nor allocate its turn table)."""
        self.bucket_deals(np.array([[0, 1]], np.int64), np.array([[2, 3, 4, 5, 6]], np.int64),
                          _warm=True)

    @classmethod
    def from_spec(cls, game: Game, spec: dict[str, Any]) -> PotentialAwareCards:
        """Rebuild from a strategy file's ``cards`` spec (validated; one-line errors).

        Raises:
            AbstractionError: if the game is not hold'em or the spec is not a valid
                ``holdem-pa`` spec (naming the bad key).
        """
        return cls(**check_pa_spec(game, spec))

    @property
    def buckets(self) -> tuple[int, ...]:
        """Buckets per round (module docstring, "Recall")."""
        return self._buckets

    @property
    def clusters(self) -> tuple[int, int, int, int]:
        """Clusters per round ``(n0, n1, n2, n3)``."""
        return self._clusters

    @property
    def recall(self) -> str:
        """``"imperfect"`` or ``"perfect"``."""
        return self._recall

    @property
    def spec(self) -> dict[str, Any]:
        """JSON-able description; :meth:`from_spec` rebuilds the same abstraction."""
        spec: dict[str, Any] = {
            "kind": "holdem-pa",
            "buckets": list(self._buckets),
            "clusters": list(self._clusters),
            "recall": self._recall,
            "bins": self._bins,
            "preflop": [int(v) for v in self._preflop],
            "flop": encode_table(self._flop),
            "turn_sums": [int(v) for v in self._turn_sums.ravel()],
            "turn_weights": [int(v) for v in self._turn_weights],
            "river_thresholds": [int(v) for v in self._thresholds],
        }
        if self._samples is not None:
            spec["samples"] = self._samples
        if self._seed is not None:
            spec["seed"] = self._seed
        return spec

    def _clusters_of(self, hole: Sequence[int], board: Sequence[int], round_: int) -> list[int]:
        h0, h1 = int(hole[0]), int(hole[1])
        out = [int(self._preflop[preflop_class_kernel(h0, h1, 13)])]
        cards = np.array(list(board) + [0] * (5 - len(board)), np.int64)
        if round_ >= 1:
            c, p = canonical_pair(h0, h1, cards, 3, self._b3.canon, self._b3.perm_of,
                                   self._b3.cid_of, SUIT_PERMS, self._scratch)
            out.append(int(self._flop[c, p]))
        if round_ >= 2:
            out.append(int(_turn_cluster_kernel(
                h0, h1, cards, self._bins, self._turn_sums, self._turn_weights, self._gaps,
                self._turn_means, *TABLES_7, self._work, self._hist, self._cdf,
            )))  # fmt: skip
        if round_ >= 3:
            s = _river_score_of(h0, h1, cards, *TABLES_7, self._work)
            out.append(int(_count_below_or_equal(self._thresholds, s)))
        return out

    def bucket(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> int:
        """Bucket of own ``hole`` cards and the ``board`` visible in ``round_`` (0..3).

        Raises:
            AbstractionError: for a round outside 0..3, a board of the wrong size, or cards
                that are not distinct indices in 0..51.
        """
        key = (round_, tuple(hole), tuple(board))
        cache = self._cache
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
            return hit
        if isinstance(round_, bool) or not isinstance(round_, int) or not 0 <= round_ <= 3:
            raise AbstractionError(f"expected a hold'em round 0..3, got {round_!r}")
        size = (0, 3, 4, 5)[round_]
        if len(board) != size:
            raise AbstractionError(
                f"expected {size} board cards in round {round_}, got {list(board)!r}"
            )
        _check_cards([*hole, *board], 2 + size, 52, "hole + board")
        clusters = self._clusters_of(hole, board, round_)
        if self._recall == "perfect":
            value = combine_recall(clusters, self._clusters)
        else:
            value = clusters[-1]
        cache[key] = value
        if len(cache) > _CACHE_SIZE:
            cache.popitem(last=False)
        return value

    def board_buckets(self, round_: int, board: Sequence[int]) -> Int64Array:
        """The bucket of every hole pair on ``board`` in ``round_`` at once, by colex pair
        id (``C(hi, 2) + lo``; 1,326 entries), -1 for the pairs touching the board: the
        very values of :meth:`bucket` hole by hole (tested), the board's work shared by
        every hole (the turn: each river's scores once for every hole, not per hole).

        Raises:
            AbstractionError: for a round outside 0..3 or a board that is not distinct
                cards of the deck, as many as the round shows.
        """
        if isinstance(round_, bool) or not isinstance(round_, int) or not 0 <= round_ <= 3:
            raise AbstractionError(f"expected a hold'em round 0..3, got {round_!r}")
        size = (0, 3, 4, 5)[round_]
        cards = np.zeros(5, np.int64)
        if size:
            cards[:size] = _check_cards(board, size, 52, "board")
        elif len(board):
            raise AbstractionError(f"expected no board cards in round 0, got {list(board)!r}")
        rows = np.zeros(4, np.bool_)
        if self._recall == "perfect":
            rows[: round_ + 1] = True
        else:
            rows[round_] = True
        out = np.full((4, 1326), -1, np.int64)
        _board_clusters_kernel(
            cards, size, rows, self._bins, self._preflop, self._b3.canon, self._b3.perm_of,
            self._b3.cid_of, self._flop, SUIT_PERMS, self._turn_sums, self._turn_weights,
            self._gaps, self._turn_means, self._thresholds, *TABLES_7, out,
        )  # fmt: skip
        if self._recall != "perfect":
            own: Int64Array = out[round_]
            return own
        combined = np.full(1326, -1, np.int64)
        for pid in np.flatnonzero(out[round_] >= 0).tolist():
            combined[pid] = combine_recall(out[: round_ + 1, pid].tolist(), self._clusters)
        return combined

    def turn_key(self) -> str:
        """sha256 of what the turn table depends on (bins, centroid sums and weights)."""
        h = hashlib.sha256(f"holdem-pa-turn-v1 bins={self._bins}".encode())
        h.update(self._turn_sums.astype("<i8").tobytes())
        h.update(self._turn_weights.astype("<i8").tobytes())
        return h.hexdigest()

    def turn_table(
        self, *, workers: int = 2, progress: Any = None, cache: str | Path | None = None
    ) -> npt.NDArray[np.uint16]:
        """Turn cluster of every (canonical 4-card board, hole pair); computed once (the
        builder's table if it came from the build).

        ``cache``: an ``.npz`` file (no pickle) to read the table from if it holds this
        abstraction's (:meth:`turn_key`, shape, dtype and range checked), else to write it to
        after computing it.

        Raises:
            AbstractionError: if ``cache`` exists but is not a valid turn table of these
                centroids.
        """
        if self._turn_table is not None:
            return self._turn_table
        shape = (self._b4.boards.shape[0], 1326)
        key = self.turn_key()
        path = Path(cache) if cache is not None else None
        if path is not None and path.exists():
            try:
                with np.load(path, allow_pickle=False) as data:
                    stored_key = str(data["key"])
                    table = np.ascontiguousarray(data["table"])
            except (OSError, ValueError, KeyError) as exc:
                raise AbstractionError(
                    f"expected a holdem-pa turn table .npz in {str(path)!r}, got {exc!r}"
                ) from None
            if stored_key != key:
                raise AbstractionError(
                    f"expected the turn table of centroids {key[:16]} in {str(path)!r}, it "
                    f"holds {stored_key[:16]!r}"
                )
            if table.shape != shape or table.dtype != np.uint16 or (
                    table.size and int(table.max()) >= self._clusters[2]):
                raise AbstractionError(
                    f"expected a uint16 turn table of shape {shape} with values below "
                    f"{self._clusters[2]} in {str(path)!r}, got {table.dtype} {table.shape}"
                )
            self._turn_table = table
            return table
        table = turn_pass(
            FULL_RANKS, self._bins, sums=self._turn_sums, weights=self._turn_weights,
            workers=workers, progress=progress,
        ).table  # fmt: skip
        if path is not None:
            tmp = path.with_name(path.name + ".tmp.npz")
            np.savez_compressed(tmp, key=np.array(key), table=table)
            os.replace(tmp, path)
        self._turn_table = table
        return table

    def bucket_deals(
        self,
        holes: npt.ArrayLike,
        boards: npt.ArrayLike,
        *,
        workers: int = 2,
        turn_cache: str | Path | None = None,
        _warm: bool = False,
    ) -> npt.NDArray[np.uint16]:
        """Buckets of ``N`` deals in all 4 rounds: ``uint16 (N, 4)`` (numba, parallel).

        ``holes`` is ``(N, 2)``, ``boards`` ``(N, 5)`` card indices, every deal 7 distinct
        cards. The first call computes the turn table (:meth:`turn_table`, ``turn_cache``:
        its ``.npz`` cache) unless the abstraction came from the build.

        Raises:
            AbstractionError: for bad shapes or cards.
        """
        h = np.ascontiguousarray(holes, dtype=np.int64)
        b = np.ascontiguousarray(boards, dtype=np.int64)
        if h.ndim != 2 or h.shape[1] != 2 or b.shape != (h.shape[0], 5):
            raise AbstractionError(
                f"expected holes (N, 2) and boards (N, 5), got {h.shape!r} and {b.shape!r}"
            )
        cards = np.concatenate([h, b], axis=1)
        if cards.size and (cards.min() < 0 or cards.max() > 51):
            raise AbstractionError(f"expected cards in 0..51, got {cards.min()!r}..{cards.max()!r}")
        srt = np.sort(cards, axis=1)
        bad = np.nonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))[0]
        if bad.size:
            raise AbstractionError(
                f"expected 7 distinct cards per deal, deal {int(bad[0])} has "
                f"{cards[bad[0]].tolist()!r}"
            )
        if max(self._buckets) > 65535:
            raise AbstractionError(f"expected buckets below 65536 for uint16, got "
                                   f"{list(self._buckets)!r}")
        if _warm:
            turn = np.zeros((self._b4.boards.shape[0], 1326), np.uint16)
        else:
            turn = self.turn_table(workers=workers, cache=turn_cache)
        out = np.zeros((h.shape[0], 4), np.uint16)
        _bucket_deals_kernel(
            h, b, workers, self._preflop, self._b3.canon, self._b3.perm_of, self._b3.cid_of,
            self._flop, self._b4.canon, self._b4.perm_of, self._b4.cid_of, turn,
            self._thresholds, SUIT_PERMS, np.array(self._clusters, np.int64),
            self._recall == "perfect", *TABLES_7, out,
        )  # fmt: skip
        return out
