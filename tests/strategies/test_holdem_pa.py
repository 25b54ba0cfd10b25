"""The potential-aware builder (:mod:`strategies.cards.potential`) against a slow oracle.

On a reduced deck (5 ranks x 4 suits, cards 0..19 = deuce..six), a plain-Python oracle
enumerates every deal directly with :func:`agent.acpc.evaluator.rank_hand_fast` (the
stdlib evaluator, not the numba one), memoising by its own suit canonicalisation (min over
the 24 relabellings of sorted tuples), redraws the builder's samples with a Python copy of
the generator, and runs a plain-Python k-means with the same init. It must give the same
river thresholds, sampled features, centroids, positions and the same cluster for EVERY
turn and flop hand and every preflop class. Plus: river scores on the full deck against
direct enumeration, invariance under suit permutation and card order, bad parameters.
"""

from __future__ import annotations

import itertools
import math
import random
from functools import cache
from typing import Any

import numpy as np
import pytest

from agent.abstraction import holdem_pa as pa
from agent.acpc.errors import AbstractionError
from agent.acpc.evaluator import rank_hand_fast
from strategies.cards import potential as builder

RANKS = 5
DECK = 4 * RANKS
N_OPP2 = (DECK - 7) * (DECK - 8)
CLUSTERS = (6, 5, 4, 3)
BINS = 10
SAMPLES = 300
SEED = 7
MASK = 0xFFFFFFFF
PERMS = list(itertools.permutations(range(4)))


# --------------------------------------------------------------------------- oracle


def o_hash32(x: int) -> int:
    x &= MASK
    x ^= x >> 16
    x = (x * 0x7FEB352D) & MASK
    x ^= x >> 15
    x = (x * 0x2C1B3C6D) & MASK
    x ^= x >> 16
    return x or 0x9E3779B9


def o_next(x: int) -> int:
    x ^= (x << 13) & MASK
    x ^= x >> 17
    x ^= (x << 5) & MASK
    return x


def relabel(cards: tuple[int, ...], perm: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted((c // 4) * 4 + perm[c % 4] for c in cards))


@cache
def canon_board(board: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(smallest relabelled sorted board, a permutation reaching it)."""
    return min((relabel(board, p), p) for p in PERMS)


def hand_key(hole: tuple[int, ...], board: tuple[int, ...]) -> tuple[Any, ...]:
    form, perm = canon_board(tuple(sorted(board)))
    return form, relabel(hole, perm)


@cache
def river_scores(board: tuple[int, ...]) -> dict[tuple[int, int], int]:
    """Canonical sorted 5-card board -> {hole pair: 2 * wins + ties}, direct enumeration."""
    live = [c for c in range(DECK) if c not in board]
    value = {p: rank_hand_fast([*p, *board]) for p in itertools.combinations(live, 2)}
    out = {}
    for p, v in value.items():
        s = 0
        for q, w in value.items():
            if set(p) & set(q):
                continue
            s += 2 if v > w else 1 if v == w else 0
        out[p] = s
    return out


def river_score(hole: tuple[int, ...], board: tuple[int, ...]) -> int:
    form, hole_c = hand_key(hole, board)
    return river_scores(form)[tuple(sorted(hole_c))]


@cache
def turn_feature(key: tuple[Any, ...]) -> tuple[tuple[int, ...], int]:
    """(cumulative bin counts without the last, score sum) of a canonical turn hand."""
    board, hole = key
    hist = [0] * BINS
    total = 0
    for r in range(DECK):
        if r in board or r in hole:
            continue
        s = river_score(hole, (*board, r))
        hist[min(BINS - 1, s * BINS // N_OPP2)] += 1
        total += s
    return tuple(itertools.accumulate(hist))[:-1], total


def o_sample(k: int) -> list[tuple[tuple[int, int], tuple[int, ...]]]:
    state0 = o_hash32(o_hash32(SEED) ^ (0x5EED + k))
    out = []
    for i in range(SAMPLES):
        state = o_hash32(state0 ^ i)
        dead: list[int] = []
        while len(dead) < 2 + k:
            state = o_next(state)
            card = (state * DECK) >> 32
            if card not in dead:
                dead.append(card)
        out.append(((dead[0], dead[1]), tuple(dead[2:])))
    return out


def o_distance(a: tuple[int, ...], s: list[int], w: int, gaps: list[float]) -> float:
    acc = 0.0
    for d in range(len(a)):
        acc += float(abs(w * a[d] - s[d])) * gaps[d]
    return acc / float(w)


def o_nearest(a: tuple[int, ...], sums: list[list[int]], ws: list[int], gaps: list[float]) -> int:
    dists = [o_distance(a, sums[j], ws[j], gaps) for j in range(len(sums))]
    return dists.index(min(dists))


def o_kmeans(
    points: list[tuple[int, ...]], weights: list[int], gaps: list[float], k: int, salt: int,
    strength: list[int], norm: int,
) -> tuple[list[list[int]], list[int], list[int], list[float]]:
    state = o_hash32(o_hash32(SEED) ^ salt)
    n = len(points)
    sums: list[list[int]] = []
    ws: list[int] = []
    mind = [0.0] * n
    for c in range(k):
        state = o_next(state)
        total = 0.0
        if c > 0:
            for x in range(n):
                total += float(weights[x]) * mind[x] * mind[x]
        pick = -1
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
            target = (state * sum(weights)) >> 32
            pick = next(x for x in range(n) if sum(weights[: x + 1]) > target)
        sums.append(list(points[pick]))
        ws.append(1)
        for x in range(n):
            dist = o_distance(points[x], sums[c], 1, gaps)
            if c == 0 or dist < mind[x]:
                mind[x] = dist
    labels = [-1] * n
    for _ in range(builder.DEFAULT_MAX_ITER):
        new = [o_nearest(p, sums, ws, gaps) for p in points]
        if new == labels:
            break
        labels = new
        for j in range(k):
            members = [x for x in range(n) if labels[x] == j]
            if members:
                ws[j] = sum(weights[x] for x in members)
                sums[j] = [sum(weights[x] * points[x][d] for x in members)
                           for d in range(len(gaps))]
    labels = [o_nearest(p, sums, ws, gaps) for p in points]
    keys = []
    for j in range(k):
        members = [x for x in range(n) if labels[x] == j]
        wsum = sum(weights[x] for x in members)
        ssum = sum(weights[x] * strength[x] for x in members)
        keys.append((ssum / (wsum * norm) if wsum else math.inf, j))
    order = [j for _, j in sorted(keys)]
    positions = [v for v, _ in sorted(keys)]
    return [sums[j] for j in order], [ws[j] for j in order], order, positions


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def built() -> builder.PaBuild:
    return builder.build(list(CLUSTERS), ranks=RANKS, bins=BINS, samples=SAMPLES, seed=SEED,
                         workers=2)


@pytest.fixture(scope="module")
def oracle_turn(built: builder.PaBuild) -> dict[str, Any]:
    samples = o_sample(4)
    feats = [turn_feature(hand_key(h, b)) for h, b in samples]
    points = [f[0] for f in feats]
    sums, ws, _, positions = o_kmeans(
        points, [1] * SAMPLES, [1.0] * (BINS - 1), CLUSTERS[2], 0xC1A5 + 2,
        [f[1] for f in feats], (DECK - 6) * N_OPP2,
    )  # fmt: skip

    @cache
    def cluster(key: tuple[Any, ...]) -> int:
        return o_nearest(turn_feature(key)[0], sums, ws, [1.0] * (BINS - 1))

    return {"points": points, "sums": sums, "weights": ws, "positions": positions,
            "cluster": cluster}


# --------------------------------------------------------------------------- tests


def test_river_thresholds_equal_the_oracle_over_every_river_deal(built: builder.PaBuild) -> None:
    scores = []
    for board in itertools.combinations(range(DECK), 5):
        form, _ = canon_board(board)
        table = river_scores(form)
        perm = canon_board(board)[1]
        for hole in itertools.combinations([c for c in range(DECK) if c not in board], 2):
            scores.append(table[relabel(hole, perm)])  # type: ignore[index]
    scores.sort()
    n = CLUSTERS[3]
    want = [scores[(i * len(scores)) // n] for i in range(1, n)]
    assert built.river_thresholds == want
    assert int(built.river_counts.sum()) == len(scores)


def test_turn_samples_centroids_and_every_turn_hand_equal_the_oracle(
    built: builder.PaBuild, oracle_turn: dict[str, Any]
) -> None:
    _, boards, pairs = builder.sample_hands(RANKS, 4, SAMPLES, SEED)
    assert [tuple(h) for h, _ in o_sample(4)] == [
        tuple(r[:2]) for r in builder.sample_hands(RANKS, 4, SAMPLES, SEED)[0].tolist()
    ]
    assert built.turn.sums.tolist() == oracle_turn["sums"]
    assert built.turn.weights.tolist() == oracle_turn["weights"]
    assert built.turn.positions.tolist() == oracle_turn["positions"]
    assert list(built.turn.positions) == sorted(built.turn.positions)
    tables = pa.board_tables(RANKS, 4)
    checked = 0
    for cid, board in enumerate(tables.boards.tolist()):
        for hole in itertools.combinations([c for c in range(DECK) if c not in board], 2):
            want = oracle_turn["cluster"](hand_key(hole, tuple(board)))
            assert built.turn_table[cid, pa._pair_id(*hole)] == want, (hole, board)
            checked += 1
    assert checked == tables.boards.shape[0] * math.comb(DECK - 4, 2)
    assert len(set(built.turn_table[boards, pairs].tolist())) == CLUSTERS[2]


def test_flop_and_preflop_equal_the_oracle(
    built: builder.PaBuild, oracle_turn: dict[str, Any]
) -> None:
    turn_cluster = oracle_turn["cluster"]
    n2 = CLUSTERS[2]

    @cache
    def flop_feature(key: tuple[Any, ...]) -> tuple[tuple[int, ...], int]:
        board, hole = key
        hist = [0] * n2
        total = 0
        for t in range(DECK):
            if t in board or t in hole:
                continue
            k4 = hand_key(hole, (*board, t))
            hist[turn_cluster(k4)] += 1
            total += turn_feature(k4)[1]
        return tuple(itertools.accumulate(hist))[:-1], total

    samples = o_sample(3)
    feats = [flop_feature(hand_key(h, b)) for h, b in samples]
    gaps = [b - a for a, b in itertools.pairwise(oracle_turn["positions"])]
    sums, ws, _, positions = o_kmeans(
        [f[0] for f in feats], [1] * SAMPLES, gaps, CLUSTERS[1], 0xC1A5 + 1,
        [f[1] for f in feats], (DECK - 5) * (DECK - 6) * N_OPP2,
    )  # fmt: skip
    assert built.flop.sums.tolist() == sums
    assert built.flop.weights.tolist() == ws
    assert built.flop.positions.tolist() == positions

    @cache
    def flop_cluster(key: tuple[Any, ...]) -> int:
        return o_nearest(flop_feature(key)[0], sums, ws, gaps)

    tables = pa.board_tables(RANKS, 3)
    for cid, board in enumerate(tables.boards.tolist()):
        for hole in itertools.combinations([c for c in range(DECK) if c not in board], 2):
            assert built.flop_table[cid, pa._pair_id(*hole)] == flop_cluster(
                hand_key(hole, tuple(board))), (hole, board)
    # preflop: each class's representative hole over every flop, directly
    classes: dict[int, list[tuple[int, int]]] = {}
    for hole in itertools.combinations(range(DECK), 2):
        classes.setdefault(pa.deck_preflop_class(*hole, ranks=RANKS), []).append(hole)
    assert sorted(classes) == list(range(RANKS * RANKS))
    points, weights, strength = [], [], []
    n1 = CLUSTERS[1]
    for c in range(RANKS * RANKS):
        hole = classes[c][0]
        hist = [0] * n1
        total = 0
        for flop in itertools.combinations([x for x in range(DECK) if x not in hole], 3):
            key = hand_key(hole, flop)
            hist[flop_cluster(key)] += 1
            total += flop_feature(key)[1]
        points.append(tuple(itertools.accumulate(hist))[:-1])
        weights.append(len(classes[c]))
        strength.append(total)
    pre_gaps = [b - a for a, b in itertools.pairwise(positions)]
    p_sums, p_ws, _, _ = o_kmeans(
        points, weights, pre_gaps, CLUSTERS[0], 0xC1A5, strength,
        math.comb(DECK - 2, 3) * (DECK - 5) * (DECK - 6) * N_OPP2,
    )  # fmt: skip
    want = [o_nearest(p, p_sums, p_ws, pre_gaps) for p in points]
    assert built.preflop == want
    assert len(set(want)) == CLUSTERS[0]


def test_builder_is_invariant_under_suit_permutation_and_card_order(
    built: builder.PaBuild,
) -> None:
    rng = random.Random(3)
    t4 = pa.board_tables(RANKS, 4)
    t3 = pa.board_tables(RANKS, 3)
    for _ in range(300):
        cards = rng.sample(range(DECK), 6)
        perm = rng.choice(PERMS)
        moved = [(c // 4) * 4 + perm[c % 4] for c in cards]
        moved_board = moved[2:]
        rng.shuffle(moved_board)
        got = []
        for hole, board in ((cards[:2], cards[2:]), (moved[:2][::-1], moved_board)):
            idx = pa.comb_index(np.array(sorted(board), np.int64), 4)
            p = pa.SUIT_PERMS[t4.perm_of[idx]]
            mapped = [(c // 4) * 4 + p[c % 4] for c in hole]
            got.append(int(built.turn_table[t4.cid_of[t4.canon[idx]], pa._pair_id(*mapped)]))
        assert got[0] == got[1]
        board3 = cards[2:5]
        forms = set()
        for pm in PERMS:
            b = sorted((c // 4) * 4 + pm[c % 4] for c in board3)
            h = [(c // 4) * 4 + pm[c % 4] for c in cards[:2]]
            idx = pa.comb_index(np.array(b, np.int64), 3)
            p = pa.SUIT_PERMS[t3.perm_of[idx]]
            mapped = [(c // 4) * 4 + p[c % 4] for c in h]
            forms.add(int(built.flop_table[t3.cid_of[t3.canon[idx]], pa._pair_id(*mapped)]))
        assert len(forms) == 1


def test_river_scores_on_the_full_deck_equal_direct_enumeration() -> None:
    """Every pair's score, on random boards and on boards where pairs can make a flush
    (three, four and five cards of a suit; a paired one): the kernel values rank classes
    and only the flush pairs alone."""
    rng = random.Random(11)
    boards = [tuple(rng.sample(range(52), 5)) for _ in range(3)]
    boards += [(3, 7, 11, 20, 40), (3, 7, 11, 15, 4), (3, 7, 11, 15, 51), (3, 7, 4, 11, 6)]
    for board in boards:
        got = pa.river_scores_on_board(list(board))
        pairs = list(itertools.combinations([c for c in range(52) if c not in board], 2))
        values = np.array([rank_hand_fast([*p, *board]) for p in pairs])
        masks = np.array([(1 << a) | (1 << b) for a, b in pairs], dtype=np.int64)
        for i, (a, b) in enumerate(pairs):
            other = values[(masks & masks[i]) == 0]
            want = 2 * int((other < values[i]).sum()) + int((other == values[i]).sum())
            assert got[pa._pair_id(a, b)] == want, (board, a, b)
        assert got[pa._pair_id(board[0], board[1])] == -1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"clusters": [6, 5, 4]}, "4 cluster counts"),
        ({"clusters": [6, 0, 4, 3]}, "4 cluster counts"),
        ({"clusters": [26, 5, 4, 3]}, "at most 25 preflop"),
        ({"bins": 1}, "bins"),
        ({"samples": 3}, "samples"),
        ({"seed": -1}, "seed"),
        ({"ranks": 2}, "ranks"),
        ({"workers": 0}, "workers"),
    ],
)
def test_bad_parameters_are_one_line_errors(kwargs: dict[str, Any], match: str) -> None:
    args: dict[str, Any] = {"ranks": RANKS, "bins": BINS, "samples": SAMPLES, "seed": SEED}
    clusters = kwargs.pop("clusters", list(CLUSTERS))
    args.update(kwargs)
    with pytest.raises(AbstractionError, match=match) as info:
        builder.build(clusters, **args)
    assert "\n" not in str(info.value)


_DIGEST_SCRIPT = """
import json
from strategies.cards import potential as b
r = b.build([3, 3, 3, 3], ranks=4, bins=6, samples=100, seed=2, workers=2)
print(json.dumps({"river": r.river_thresholds, "turn": r.turn.sums.tolist(),
                  "turn_table": r.turn_table.tolist(), "flop": r.flop_table.tolist(),
                  "preflop": r.preflop}))
"""


def test_small_build_is_the_same_without_the_jit() -> None:
    """The kernels' plain-Python semantics (NUMBA_DISABLE_JIT=1) give the same build."""
    import json
    import os
    import subprocess
    import sys

    runs = []
    for disable in ("0", "1"):
        env = dict(os.environ, NUMBA_DISABLE_JIT=disable)
        out = subprocess.run([sys.executable, "-c", _DIGEST_SCRIPT], env=env, check=True,
                             capture_output=True, text=True, timeout=300)
        runs.append(json.loads(out.stdout))
    assert runs[0] == runs[1]
    assert len(set(runs[0]["preflop"])) == 3


def test_inspect_summarises_a_holdem_pa_spec_in_a_line() -> None:
    """From what the load's card check decoded (``Strategy.checked_cards``), never from the
    raw header (its flop table is ~100 KB of base64)."""
    from agent.data import strategy_path
    from agent.strategy.fileformat import load_strategy
    from strategies.commands.main import _describe_cards

    strategy = load_strategy(strategy_path("holdem.nolimit.2p.pa.strat"))
    line = _describe_cards(strategy)
    assert len(line) < 400 and "\n" not in line
    assert "[1755, 1326]" in line and "50 turn centroids" in line and "'imperfect'" in line
