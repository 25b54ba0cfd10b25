"""Builder of the potential-aware hold'em card abstraction (``acpc-strategy cards-pa``).

Role: :func:`build` makes the clusters of :mod:`agent.abstraction.holdem_pa` (read its
docstring for the definitions) for a deck of ``ranks`` x 4 cards (13 for hold'em; fewer for
the tests' reduced decks, where a plain-Python oracle checks every number), and
:func:`build_cards` wraps a full-deck build as a
:class:`~agent.abstraction.holdem_pa.PotentialAwareCards`.

Steps (each round's k-means on ``samples`` uniformly random real deals of that round, drawn
by a 32-bit generator from ``seed``; :func:`sample_hands`):

1. turn pass A (:func:`agent.abstraction.holdem_pa.turn_pass`): every canonical 4-card
   board, every river card, the exact scores of all hole pairs at once; gives the sampled
   turn hands' histograms and the exact distribution of river scores over all real deals
   (-> the river thresholds);
2. turn k-means (unit ground distance between bins), clusters renumbered by mean equity;
3. turn pass B: every (canonical 4-card board, hole pair) to its nearest turn centroid, and
   its river score sum (the turn table and the turn strengths);
4. flop pass: per canonical 3-card board, turn card and hole, the turn cluster (through the
   suit permutation that canonicalises the 4-card board) -> the flop histograms; k-means
   with ground distances from the turn clusters' mean equities; every flop hand assigned;
5. preflop: the 169 classes, or k-means of the classes' histograms over flop clusters.

Time and memory: docs/reference/acpc-strategy.md (``cards-pa``). Parallel over boards with
``parallel_kernel`` (``--workers`` chunks). Imports numpy, numba and the agent's kernels.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numba
import numpy as np
import numpy.typing as npt

from agent.abstraction.holdem_buckets import hash32, next32
from agent.abstraction.holdem_pa import (
    FULL_RANKS,
    SUIT_PERMS,
    PotentialAwareCards,
    board_tables,
    canonical_pair,
    centroid_distance,
    centroid_means,
    comb_index,
    map_pair,
    nearest_centroid,
    preflop_class_kernel,
    sort_small,
    turn_pass,
)
from agent.abstraction.holdem_pa_spec import check_clusters
from agent.acpc.errors import AbstractionError
from agent.jit import kernel, parallel_kernel

__all__ = ["DEFAULT_MAX_ITER", "DEFAULT_SAMPLES", "PaBuild", "build", "build_cards", "kmeans",
           "sample_hands"]

DEFAULT_SAMPLES: Final = 50_000
DEFAULT_MAX_ITER: Final = 100
_MASK32: Final = 0xFFFFFFFF
_SALT_DEAL: Final = 0x5EED
_SALT_KMEANS: Final = 0xC1A5

Int = int | np.int64
Int64Array = npt.NDArray[np.int64]
Float64Array = npt.NDArray[np.float64]
Progress = Callable[[str], None]


# --------------------------------------------------------------------------- kernels


@kernel
def _sample_kernel(
    deck: Int,
    k: Int,
    seed: Int,
    canon: Int64Array,
    perm_of: Int64Array,
    cid_of: Int64Array,
    perms: Int64Array,
    cards: Int64Array,
    boards: Int64Array,
    pairs: Int64Array,
) -> None:
    """Deal ``i``: ``2 + k`` distinct cards, the generator seeded by ``hash32(seed ^ i)``,
    each card ``(state * deck) >> 32`` of the next state, redrawn while already dealt; its
    canonical board id and mapped hole pair id."""
    scratch = np.zeros(5, np.int64)
    for i in range(cards.shape[0]):
        state = hash32(seed ^ (i & _MASK32))
        dead = np.int64(0)
        for j in range(2 + k):
            while True:
                state = next32(state)
                card = (state * deck) >> 32
                if not (dead >> card) & 1:
                    break
            dead |= np.int64(1) << card
            cards[i, j] = card
        c, p = canonical_pair(
            cards[i, 0], cards[i, 1], cards[i, 2:], k, canon, perm_of, cid_of, perms, scratch
        )
        boards[i] = c
        pairs[i] = p


@parallel_kernel
def _assign_kernel(
    points: Int64Array, sums: Int64Array, weights: Int64Array, gaps: Float64Array,
    labels: Int64Array,
) -> int:
    """``labels[x]`` = nearest centroid of each point; returns how many changed."""
    n = points.shape[0]
    changed = np.zeros(n, np.int64)
    means = np.zeros(sums.shape[0])
    centroid_means(sums, weights, gaps, means)
    for x in numba.prange(n):
        j = nearest_centroid(points[x], sums, weights, gaps, means)
        if j != labels[x]:
            changed[x] = 1
            labels[x] = j
    return int(changed.sum())


@kernel
def _kmeanspp_kernel(
    points: Int64Array,
    weights: Int64Array,
    gaps: Float64Array,
    state: Int,
    sums: Int64Array,
    counts: Int64Array,
    mind: Float64Array,
) -> None:
    """k-means++ (weighted): the first centre drawn by weight, each next one with probability
    ``w D^2`` (``D`` the distance to the nearest centre so far); centres are points
    (``counts = 1``). Draws: ``u = state / 2**32``, the first point whose running sum
    exceeds ``u * total`` (by weight: ``(state * total) >> 32``)."""
    n = points.shape[0]
    k = sums.shape[0]
    total_w = 0
    for x in range(n):
        total_w += weights[x]
    for c in range(k):
        state = next32(state)
        pick = -1
        total = 0.0
        if c > 0:
            for x in range(n):
                total += float(weights[x]) * mind[x] * mind[x]
        if total > 0.0:
            u = (state / 4294967296.0) * total
            acc = 0.0
            for x in range(n):
                p = float(weights[x]) * mind[x] * mind[x]
                acc += p
                if p > 0.0:
                    pick = x
                    if acc > u:
                        break
        else:
            target = (state * total_w) >> 32
            acc_w = 0
            for x in range(n):
                acc_w += weights[x]
                if acc_w > target:
                    pick = x
                    break
        for d in range(points.shape[1]):
            sums[c, d] = points[pick, d]
        counts[c] = 1
        for x in range(n):
            dist = centroid_distance(points[x], sums, counts, c, gaps)
            if c == 0 or dist < mind[x]:
                mind[x] = dist


@kernel
def _update_kernel(
    points: Int64Array, weights: Int64Array, labels: Int64Array, sums: Int64Array,
    counts: Int64Array,
) -> None:
    """New centroids: weighted sums of the members (an empty cluster keeps its centroid)."""
    k, dims = sums.shape
    new_sums = np.zeros((k, dims), np.int64)
    new_counts = np.zeros(k, np.int64)
    for x in range(points.shape[0]):
        j = labels[x]
        w = weights[x]
        new_counts[j] += w
        for d in range(dims):
            new_sums[j, d] += w * points[x, d]
    for j in range(k):
        if new_counts[j] > 0:
            counts[j] = new_counts[j]
            for d in range(dims):
                sums[j, d] = new_sums[j, d]


@parallel_kernel
def _flop_pass_kernel(
    deck: Int,
    workers: Int,
    boards3: Int64Array,
    canon4: Int64Array,
    perm4: Int64Array,
    cid4: Int64Array,
    perms: Int64Array,
    turn: npt.NDArray[np.uint16],
    turn_strength: npt.NDArray[np.int32],
    hist: npt.NDArray[np.uint8],
    strength: Int64Array,
) -> None:
    """``hist[cid, pair, c]``: turn cards giving turn cluster ``c``; ``strength``: the sum of
    the turn hands' river score sums (flop hand on canonical 3-card board ``cid``)."""
    for w in numba.prange(workers):
        four = np.zeros(4, np.int64)
        for cid in range(w, boards3.shape[0], workers):
            dead = np.int64(0)
            for i in range(3):
                dead |= np.int64(1) << boards3[cid, i]
            for t in range(deck):
                if (dead >> t) & 1:
                    continue
                for i in range(3):
                    four[i] = boards3[cid, i]
                four[3] = t
                sort_small(four, 4)
                index = comb_index(four, 4)
                c4 = cid4[canon4[index]]
                perm = perms[perm4[index]]
                both = dead | (np.int64(1) << t)
                for b in range(deck):
                    if (both >> b) & 1:
                        continue
                    for a in range(b):
                        if (both >> a) & 1:
                            continue
                        mp = map_pair(a, b, perm)
                        pid = b * (b - 1) // 2 + a
                        hist[cid, pid, turn[c4, mp]] += 1
                        strength[cid, pid] += turn_strength[c4, mp]


@parallel_kernel
def _flop_assign_kernel(
    deck: Int,
    workers: Int,
    boards3: Int64Array,
    hist: npt.NDArray[np.uint8],
    sums: Int64Array,
    weights: Int64Array,
    gaps: Float64Array,
    table: npt.NDArray[np.uint16],
) -> None:
    dims = sums.shape[1]
    means = np.zeros(sums.shape[0])
    centroid_means(sums, weights, gaps, means)
    for w in numba.prange(workers):
        cdf = np.zeros(dims, np.int64)
        for cid in range(w, boards3.shape[0], workers):
            dead = np.int64(0)
            for i in range(3):
                dead |= np.int64(1) << boards3[cid, i]
            for b in range(deck):
                if (dead >> b) & 1:
                    continue
                for a in range(b):
                    if (dead >> a) & 1:
                        continue
                    pid = b * (b - 1) // 2 + a
                    acc = 0
                    for d in range(dims):
                        acc += hist[cid, pid, d]
                        cdf[d] = acc
                    table[cid, pid] = nearest_centroid(cdf, sums, weights, gaps, means)


# --------------------------------------------------------------------------- steps


def sample_hands(
    ranks: int, k: int, samples: int, seed: int
) -> tuple[Int64Array, Int64Array, Int64Array]:
    """``samples`` uniformly random deals of hole + ``k`` board cards (:func:`_sample_kernel`,
    seeded with ``hash32(hash32(seed) ^ (0x5EED + k))``): cards ``(N, 2 + k)``, canonical
    board ids and mapped pair ids."""
    tables = board_tables(ranks, k)
    cards = np.zeros((samples, 2 + k), np.int64)
    boards = np.zeros(samples, np.int64)
    pairs = np.zeros(samples, np.int64)
    state = int(hash32(hash32(seed & _MASK32) ^ (_SALT_DEAL + k)))
    _sample_kernel(4 * ranks, k, state, tables.canon, tables.perm_of, tables.cid_of, SUIT_PERMS,
                   cards, boards, pairs)
    return cards, boards, pairs


@dataclass(frozen=True)
class KMeansResult:
    """Centroids (integer sums and weights) and labels, clusters numbered by strength."""

    sums: Int64Array
    weights: Int64Array
    labels: Int64Array
    positions: Float64Array
    """Per cluster: its members' mean strength / ``norm`` (increasing)."""
    iterations: int


def kmeans(
    points: Int64Array,
    weights: Int64Array,
    gaps: Float64Array,
    k: int,
    *,
    seed: int,
    salt: int,
    strength: Int64Array,
    norm: int,
    max_iter: int = DEFAULT_MAX_ITER,
) -> KMeansResult:
    """Weighted k-means under the 1-D EMD (module docstring of :mod:`agent.abstraction.holdem_pa`).

    ``points``: cumulative counts ``(N, d)``; ``gaps``: ground distances ``(d,)``. Clusters
    are renumbered by their members' weighted mean ``strength`` (ties: old index; empty
    clusters last) and ``positions`` are those means divided by ``norm``.

    Raises:
        AbstractionError: if there are fewer points than clusters.
    """
    n = points.shape[0]
    if n < k:
        raise AbstractionError(f"expected at least {k} sampled hands for {k} clusters, got {n}")
    sums = np.zeros((k, points.shape[1]), np.int64)
    counts = np.zeros(k, np.int64)
    mind = np.zeros(n)
    state = int(hash32(hash32(seed & _MASK32) ^ salt))
    _kmeanspp_kernel(points, weights, gaps, state, sums, counts, mind)
    labels = np.full(n, -1, np.int64)
    iterations = 0
    for iterations in range(1, max_iter + 1):  # noqa: B007
        if _assign_kernel(points, sums, counts, gaps, labels) == 0:
            break
        _update_kernel(points, weights, labels, sums, counts)
    _assign_kernel(points, sums, counts, gaps, labels)
    key: list[tuple[float, int]] = []
    for j in range(k):
        mask = labels == j
        wsum = int(weights[mask].sum())
        ssum = int((weights[mask] * strength[mask]).sum())
        key.append((ssum / (wsum * norm) if wsum else math.inf, j))
    order = [j for _, j in sorted(key)]
    rank = np.empty(k, np.int64)
    rank[order] = np.arange(k)
    finite = [v for v, _ in sorted(key) if v != math.inf]
    positions = np.array(
        [v if v != math.inf else (finite[-1] if finite else 0.0) for v, _ in sorted(key)]
    )
    return KMeansResult(
        np.ascontiguousarray(sums[order]), np.ascontiguousarray(counts[order]), rank[labels],
        positions, iterations,
    )


def _percentile_scores(counts: Int64Array, n: int) -> list[int]:
    """``n - 1`` thresholds: the score at sorted position ``(i * N) // n``, ``i = 1..n-1``."""
    cum = np.cumsum(counts)
    total = int(cum[-1])
    return [int(np.searchsorted(cum, (i * total) // n, side="right")) for i in range(1, n)]


@dataclass
class PaBuild:
    """Everything a build makes (arrays indexed as in :mod:`agent.abstraction.holdem_pa`)."""

    ranks: int
    clusters: tuple[int, int, int, int]
    bins: int
    samples: int
    seed: int
    river_counts: Int64Array
    river_thresholds: list[int]
    turn: KMeansResult
    turn_table: npt.NDArray[np.uint16]
    turn_strength: npt.NDArray[np.int32]
    flop_hist: npt.NDArray[np.uint8]
    flop_strength: Int64Array
    flop: KMeansResult
    flop_table: npt.NDArray[np.uint16]
    preflop: list[int]
    preflop_positions: list[float]
    seconds: dict[str, float]


def build(
    clusters: tuple[int, int, int, int] | list[int],
    *,
    ranks: int = FULL_RANKS,
    bins: int = 50,
    samples: int = DEFAULT_SAMPLES,
    seed: int = 0,
    workers: int = 2,
    max_iter: int = DEFAULT_MAX_ITER,
    progress: Progress | None = None,
) -> PaBuild:
    """Build the clusters (module docstring) for a deck of ``ranks`` x 4 cards.

    Raises:
        AbstractionError: for bad parameters (one line, before any long work).
    """
    n0, n1, n2, n3 = check_clusters(list(clusters))
    if isinstance(ranks, bool) or not isinstance(ranks, int) or not 3 <= ranks <= FULL_RANKS:
        raise AbstractionError(f"expected ranks in 3..13, got {ranks!r}")
    if n0 > ranks * ranks:
        raise AbstractionError(f"expected at most {ranks * ranks} preflop clusters, got {n0!r}")
    if isinstance(bins, bool) or not isinstance(bins, int) or not 2 <= bins <= 1981:
        raise AbstractionError(f"expected bins to be an int in 2..1981, got {bins!r}")
    if n2 > 255:
        raise AbstractionError(
            f"expected at most 255 turn clusters (the flop histograms take 1,755 x 1,326 x n2 "
            f"bytes), got {n2}"
        )
    most = max(n1, n2)
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < most:
        raise AbstractionError(
            f"expected samples to be an int >= the largest clustered round's count {most}, "
            f"got {samples!r}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= _MASK32:
        raise AbstractionError(f"expected seed in 0..{_MASK32}, got {seed!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise AbstractionError(f"expected workers >= 1, got {workers!r}")
    say = progress or (lambda _msg: None)
    deck = 4 * ranks
    n_opp2 = (deck - 7) * (deck - 8)
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()

    def tick(name: str) -> None:
        nonlocal t0
        now = time.perf_counter()
        seconds[name] = now - t0
        t0 = now

    def board_progress(what: str) -> Callable[[int, int], None]:
        last = [time.perf_counter()]

        def report(done: int, total: int) -> None:
            now = time.perf_counter()
            if now - last[0] >= 10.0:
                last[0] = now
                say(f"{what}: {done}/{total} boards")

        return report

    # 1. turn pass A
    _, t_boards, t_pairs = sample_hands(ranks, 4, samples, seed)
    say(f"turn pass A: {board_tables(ranks, 4).boards.shape[0]} canonical turn boards, "
        f"{samples} sampled hands")
    pass_a = turn_pass(ranks, bins, sample_boards=t_boards, sample_pairs=t_pairs,
                       workers=workers, progress=board_progress("turn pass A") if progress
                       else None)
    counts = pass_a.river_counts
    if (counts % 5).any():
        raise AssertionError("river score counts are not multiples of 5")
    counts = counts // 5
    river_thresholds = _percentile_scores(counts, n3)
    tick("turn_pass_a")
    # 2. turn k-means
    turn = kmeans(
        pass_a.sample_cdf, np.ones(samples, np.int64), np.ones(bins - 1), n2, seed=seed,
        salt=_SALT_KMEANS + 2, strength=pass_a.sample_strength, norm=(deck - 6) * n_opp2,
        max_iter=max_iter,
    )  # fmt: skip
    tick("turn_kmeans")
    say(f"turn k-means: {n2} clusters, {turn.iterations} iterations")
    # 3. turn pass B
    pass_b = turn_pass(ranks, bins, sums=turn.sums, weights=turn.weights, workers=workers,
                       progress=board_progress("turn pass B") if progress else None)
    tick("turn_pass_b")
    # 4. flop
    b3 = board_tables(ranks, 3)
    b4 = board_tables(ranks, 4)
    n_pairs = deck * (deck - 1) // 2
    hist = np.zeros((b3.boards.shape[0], n_pairs, n2), np.uint8)
    fstrength = np.zeros((b3.boards.shape[0], n_pairs), np.int64)
    _flop_pass_kernel(deck, workers, b3.boards, b4.canon, b4.perm_of, b4.cid_of, SUIT_PERMS,
                      pass_b.table, pass_b.strength, hist, fstrength)
    tick("flop_pass")
    _, f_boards, f_pairs = sample_hands(ranks, 3, samples, seed)
    f_points = np.cumsum(hist[f_boards, f_pairs, : n2 - 1].astype(np.int64), axis=1)
    f_gaps = np.ascontiguousarray(np.diff(turn.positions))
    flop = kmeans(
        np.ascontiguousarray(f_points), np.ones(samples, np.int64), f_gaps, n1, seed=seed,
        salt=_SALT_KMEANS + 1, strength=fstrength[f_boards, f_pairs],
        norm=(deck - 5) * (deck - 6) * n_opp2, max_iter=max_iter,
    )  # fmt: skip
    flop_table = np.zeros((b3.boards.shape[0], n_pairs), np.uint16)
    _flop_assign_kernel(deck, workers, b3.boards, hist,
                        flop.sums, flop.weights, f_gaps, flop_table)
    tick("flop")
    say(f"flop k-means: {n1} clusters, {flop.iterations} iterations")
    # 5. preflop
    n_classes = ranks * ranks
    if n0 == n_classes:
        preflop = list(range(n_classes))
        preflop_positions: list[float] = []
    else:
        chist, cstrength, combos = _class_histograms(ranks, b3.boards, b3.mult, flop_table,
                                                     fstrength, n1)
        points = np.cumsum(chist // combos[:, None], axis=1)[:, : n1 - 1]
        pre = kmeans(
            np.ascontiguousarray(points), combos, np.ascontiguousarray(np.diff(flop.positions)),
            n0, seed=seed, salt=_SALT_KMEANS, strength=cstrength // combos,
            norm=math.comb(deck - 2, 3) * (deck - 5) * (deck - 6) * n_opp2, max_iter=max_iter,
        )  # fmt: skip
        preflop = [int(v) for v in pre.labels]
        preflop_positions = [float(v) for v in pre.positions]
    tick("preflop")
    return PaBuild(
        ranks=ranks, clusters=(n0, n1, n2, n3), bins=bins, samples=samples, seed=seed,
        river_counts=counts, river_thresholds=river_thresholds, turn=turn,
        turn_table=pass_b.table, turn_strength=pass_b.strength, flop_hist=hist,
        flop_strength=fstrength, flop=flop, flop_table=flop_table, preflop=preflop,
        preflop_positions=preflop_positions, seconds=seconds,
    )  # fmt: skip



def _class_histograms(
    ranks: int,
    boards3: Int64Array,
    mult: Int64Array,
    flop_table: npt.NDArray[np.uint16],
    fstrength: Int64Array,
    n1: int,
) -> tuple[Int64Array, Int64Array, Int64Array]:
    """Per preflop class: counts of flop clusters over every real flop (summed over the
    class's holes), the strength sum, and the class's number of holes."""
    deck = 4 * ranks
    n_classes = ranks * ranks
    pair_a = np.array([a for b in range(deck) for a in range(b)], np.int64)
    pair_b = np.array([b for b in range(deck) for a in range(b)], np.int64)
    cls = np.array([preflop_class_kernel(a, b, ranks) for a, b in zip(pair_a, pair_b,
                                                                     strict=True)], np.int64)
    combos = np.bincount(cls, minlength=n_classes).astype(np.int64)
    chist = np.zeros((n_classes, n1), np.int64)
    cstrength = np.zeros(n_classes, np.int64)
    for cid in range(boards3.shape[0]):
        board = set(int(c) for c in boards3[cid])
        valid = np.array([a not in board and b not in board for a, b in zip(pair_a, pair_b,
                                                                           strict=True)])
        pids = np.nonzero(valid)[0]
        np.add.at(chist, (cls[pids], flop_table[cid, pids].astype(np.int64)), mult[cid])
        np.add.at(cstrength, cls[pids], mult[cid] * fstrength[cid, pids])
    return chist, cstrength, combos


def build_cards(result: PaBuild, recall: str) -> PotentialAwareCards:
    """The agent's abstraction from a full-deck build (keeps its turn table in memory)."""
    if result.ranks != FULL_RANKS:
        raise AbstractionError(f"expected a full-deck build (13 ranks), got {result.ranks}")
    n1 = result.clusters[1]
    flop = result.flop_table.astype(np.uint8) if n1 <= 256 else result.flop_table
    return PotentialAwareCards(
        clusters=result.clusters, recall=recall, bins=result.bins, preflop=result.preflop,
        flop=flop, turn_sums=result.turn.sums, turn_weights=result.turn.weights,
        river_thresholds=result.river_thresholds, samples=result.samples, seed=result.seed,
        turn_table=result.turn_table,
    )  # fmt: skip
