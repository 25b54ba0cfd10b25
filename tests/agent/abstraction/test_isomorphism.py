"""Lossless suit isomorphism (:mod:`agent.abstraction.isomorphism`).

* small decks, every round, exhaustively against a pure-Python oracle (the smallest of the
  suit relabellings of each round's sorted cards): the index is a function of the class,
  takes every value ``0 .. size - 1`` once per class, :meth:`unindex` inverts it, the
  multiplicities are the class sizes and sum to the number of hands;
* hold'em: the class counts of both groupings; the whole flop (25,989,600 hands) against
  the canonical form of :func:`agent.abstraction.holdem_buckets.canonicalize`; the preflop
  classes are :func:`~agent.abstraction.holdem_buckets.preflop_class`'s; turn and river on random
  hands (relabelled and reordered hands keep their index, the class representative is in
  the same class) and on classes (round trips, the first and last class of every shape);
  the multiplicities of every flop and turn class sum to the hands dealt;
* every bad input is a one-line ``ValueError`` naming what was expected and what came;
* the tests whose names contain ``small`` run again with ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Iterator, Sequence

import numba
import numpy as np
import pytest

from agent.abstraction import holdem_buckets as holdem
from agent.abstraction import isomorphism
from agent.abstraction.isomorphism import (
    HOLDEM_BOARD_CLASSES,
    HOLDEM_PERFECT_CLASSES,
    HandIndexer,
    holdem_indexer,
)
from tests.support import NO_JIT, ROOT, run_without_jit

# --------------------------------------------------------------------------- oracle


def oracle_canonical(
    hand: Sequence[int], per_round: Sequence[int], suits: int
) -> tuple[tuple[int, ...], ...]:
    """The smallest relabelling of the hand, each round's cards sorted: one per class."""
    best: tuple[tuple[int, ...], ...] | None = None
    for perm in itertools.permutations(range(suits)):
        form = []
        pos = 0
        for k in per_round:
            form.append(tuple(sorted((c // suits) * suits + perm[c % suits]
                                     for c in hand[pos : pos + k])))  # fmt: skip
            pos += k
        candidate = tuple(form)
        if best is None or candidate < best:
            best = candidate
    assert best is not None
    return best


def all_hands(per_round: Sequence[int], deck: int) -> Iterator[list[int]]:
    """Every hand, each round's cards as an ascending combination."""

    def deal(r: int, used: frozenset[int], hand: list[int]) -> Iterator[list[int]]:
        if r == len(per_round):
            yield hand
            return
        for combo in itertools.combinations([c for c in range(deck) if c not in used],
                                            per_round[r]):  # fmt: skip
            yield from deal(r + 1, used | set(combo), hand + list(combo))

    return deal(0, frozenset(), [])


def relabel(cards: Sequence[int], perm: Sequence[int], suits: int = 4) -> list[int]:
    return [(c // suits) * suits + perm[c % suits] for c in cards]


def shuffle_within_rounds(
    cards: Sequence[int], per_round: Sequence[int], rng: random.Random
) -> list[int]:
    out: list[int] = []
    pos = 0
    for k in per_round:
        part = list(cards[pos : pos + k])
        rng.shuffle(part)
        out += part
        pos += k
    return out


# --------------------------------------------------------------------------- small decks

SMALL_DECKS = [
    ((2, 1, 1), 4, 3),
    ((1, 2), 5, 3),
    ((2, 2), 3, 4),
    ((3,), 6, 2),
    ((1, 1, 1), 3, 3),
    ((2, 3), 3, 4),
    ((1, 1), 4, 1),
    ((1, 2, 1), 6, 2),
]


# Without the JIT, the five decks of up to 108 hands a round (the other three, 12 s in plain
# Python, run the same kernels on more hands).
@pytest.mark.parametrize(("per_round", "ranks", "suits"),
                         [SMALL_DECKS[i] for i in (1, 2, 3, 4, 6)] if NO_JIT else SMALL_DECKS)
def test_small_decks_exhaustively(per_round: tuple[int, ...], ranks: int, suits: int) -> None:
    indexer = HandIndexer(per_round, num_ranks=ranks, num_suits=suits)
    assert indexer.cards_per_round == per_round
    for r in range(len(per_round)):
        prefix = per_round[: r + 1]
        class_of: dict[int, tuple[tuple[int, ...], ...]] = {}
        hands_in: Counter[int] = Counter()
        batch = []
        for hand in all_hands(prefix, ranks * suits):
            index = indexer.index(hand)
            canonical = oracle_canonical(hand, prefix, suits)
            assert class_of.setdefault(index, canonical) == canonical, (hand, index)
            hands_in[index] += 1
            batch.append(hand)
        # one index per class, every index used: the numbering is dense and lossless
        assert sorted(class_of) == list(range(indexer.size(r)))
        assert len(set(class_of.values())) == indexer.size(r)
        assert sum(hands_in.values()) == indexer.hands(r) == len(batch)
        assert indexer.index_batch(batch).tolist() == [indexer.index(h) for h in batch]
        cards, counts = indexer.unindex_batch(r, np.arange(indexer.size(r)))
        for index in range(indexer.size(r)):
            hand = cards[index].tolist()
            assert tuple(hand) == indexer.unindex(r, index)
            assert indexer.index(hand) == index
            assert oracle_canonical(hand, prefix, suits) == class_of[index]
            assert counts[index] == indexer.multiplicity(r, index) == hands_in[index]
            pos = 0
            for k in prefix:  # each round's cards ascending
                assert hand[pos : pos + k] == sorted(hand[pos : pos + k])
                pos += k


def test_small_index_rounds_and_canonical() -> None:
    indexer = HandIndexer((2, 1, 1), num_ranks=4, num_suits=3)
    hand = [11, 3, 6, 7]
    rounds = indexer.index_rounds(hand)
    assert rounds == tuple(indexer.index(hand[: indexer.cards_in(r)]) for r in range(3))
    assert indexer.index_rounds(hand[:3]) == rounds[:2]
    canonical = indexer.canonical(hand)
    assert indexer.index(list(canonical)) == rounds[2]
    assert oracle_canonical(canonical, (2, 1, 1), 3) == oracle_canonical(hand, (2, 1, 1), 3)
    assert indexer.round_of(3) == 1
    assert [indexer.cards_in(r) for r in range(3)] == [2, 3, 4]


def test_small_kernels_run_in_the_expected_mode() -> None:
    assert hasattr(isomorphism.index_one, "py_func") != NO_JIT


# --------------------------------------------------------------------------- hold'em


def test_holdem_class_counts() -> None:
    for r in range(4):
        assert holdem_indexer("board", r).sizes[-1] == HOLDEM_BOARD_CLASSES[r]
    assert holdem_indexer("perfect").sizes == HOLDEM_PERFECT_CLASSES
    assert holdem_indexer("perfect", 1) is holdem_indexer("perfect", 3)
    assert holdem_indexer("board", 2).cards_per_round == (2, 4)
    assert holdem_indexer("board", 0).cards_per_round == (2,)
    assert holdem_indexer("board", 3).hands(1) == math.comb(52, 2) * math.comb(50, 5)
    assert holdem_indexer("perfect").hands(3) == (math.comb(52, 2) * math.comb(50, 3) * 47 * 46)


def test_preflop_classes_are_the_169_classes() -> None:
    indexer = holdem_indexer("board", 0)
    pairs = list(itertools.combinations(range(52), 2))
    indices = indexer.index_batch(pairs).tolist()
    classes = [holdem.preflop_class(p) for p in pairs]
    # the same partition of the 1326 hole pairs: a bijection between the two numberings
    mapping = dict(zip(indices, classes, strict=True))
    assert len(mapping) == len(set(mapping.values())) == 169
    assert all(mapping[i] == c for i, c in zip(indices, classes, strict=True))
    for index in range(169):
        assert holdem.preflop_class(list(indexer.unindex(0, index))) == mapping[index]


@numba.njit(cache=False)
def _check_every_flop(
    per_round: np.ndarray, binom: np.ndarray, keys: np.ndarray, offsets: np.ndarray,
    group_count: np.ndarray, group_n: np.ndarray, group_size: np.ndarray, perms: np.ndarray,
    key_of: np.ndarray,
) -> tuple[int, int]:  # fmt: skip
    """Index every (hole, flop) hand and compare with ``holdem.canonicalize``'s form."""
    cards = np.zeros(5, np.int64)
    form = np.zeros(10, np.int64)
    scratch = np.zeros(28, np.int64)
    hands = 0
    conflicts = 0
    for a in range(52):
        for b in range(a + 1, 52):
            for c in range(52):
                if c in (a, b):
                    continue
                for d in range(c + 1, 52):
                    if d in (a, b):
                        continue
                    for e in range(d + 1, 52):
                        if e in (a, b):
                            continue
                        cards[0], cards[1], cards[2], cards[3], cards[4] = a, b, c, d, e
                        index = isomorphism.index_one(
                            cards, 2, per_round, 13, 4, 4, binom, keys, offsets,
                            group_count, group_n, group_size, scratch,
                        )  # fmt: skip
                        holdem.canonicalize(cards, 5, perms, form)
                        key = 0
                        for j in range(5):
                            key = key * 52 + form[j]
                        if key_of[index] == -1:
                            key_of[index] = key
                        elif key_of[index] != key:
                            conflicts += 1
                        hands += 1
    return hands, conflicts


@pytest.mark.skipif(NO_JIT, reason="26 million hands need the JIT")
def test_every_flop_hand() -> None:
    """All 25,989,600 (hole, flop) hands: index and canonical form determine each other."""
    indexer = holdem_indexer("board", 1)
    t = indexer.kernel_tables(1)
    assert (t.rounds, t.ranks, t.suits, t.base) == (2, 13, 4, 4)
    key_of = np.full(indexer.size(1), -1, np.int64)
    hands, conflicts = _check_every_flop(
        t.per_round, t.binom, t.keys, t.offsets, t.group_count, t.group_n, t.group_size,
        holdem.STRENGTH_TABLES.perms, key_of,
    )  # fmt: skip
    assert hands == indexer.hands(1) == 25_989_600
    assert conflicts == 0  # one canonical form per index
    assert (key_of >= 0).all()  # every index is some hand's
    assert np.unique(key_of).size == 1_286_792  # different indices, different classes
    # the representative of each class is a hand of that class
    cards, counts = indexer.unindex_batch(1, np.arange(indexer.size(1)))
    assert counts.sum() == 25_989_600
    forms = np.zeros(10, np.int64)
    for index in random.Random(5).sample(range(indexer.size(1)), 2000):
        holdem.canonicalize(cards[index], 5, holdem.STRENGTH_TABLES.perms, forms)
        key = 0
        for j in range(5):
            key = key * 52 + int(forms[j])
        assert key == key_of[index]


def random_hands(rng: random.Random, count: int, size: int) -> np.ndarray:
    return np.array([rng.sample(range(52), size) for _ in range(count)], np.int64)


@pytest.mark.parametrize(("recall", "round_"), [("board", 2), ("board", 3), ("perfect", 3)])
def test_turn_and_river_random_hands(recall: str, round_: int) -> None:
    """Relabelled, reordered hands keep their index; the representative is in the class."""
    indexer = holdem_indexer(recall, round_)  # type: ignore[arg-type]
    last = indexer.num_rounds - 1
    size = indexer.cards_in(last)
    rng = random.Random(round_)
    hands = random_hands(rng, 3000, size)
    indices = indexer.index_batch(hands)
    assert ((indices >= 0) & (indices < indexer.size(last))).all()
    moved = np.array([
        shuffle_within_rounds(relabel(h, rng.sample(range(4), 4)), indexer.cards_per_round, rng)
        for h in hands.tolist()
    ])  # fmt: skip
    assert (indexer.index_batch(moved) == indices).all()
    cards, _ = indexer.unindex_batch(last, indices)
    assert (indexer.index_batch(cards) == indices).all()
    for hand, canonical in list(zip(hands.tolist(), cards.tolist(), strict=True))[:300]:
        assert oracle_canonical(hand, indexer.cards_per_round, 4) == oracle_canonical(
            canonical, indexer.cards_per_round, 4
        )
    # hands of different classes get different indices
    pairs = zip(hands.tolist()[:500], indices.tolist()[:500], strict=True)
    forms = {oracle_canonical(h, indexer.cards_per_round, 4): i for h, i in pairs}
    assert len(set(forms.values())) == len(forms)


@pytest.mark.parametrize(("recall", "round_"), [("board", 2), ("board", 3), ("perfect", 3)])
def test_class_round_trips_on_every_shape(recall: str, round_: int) -> None:
    indexer = holdem_indexer(recall, round_)  # type: ignore[arg-type]
    for r in range(indexer.num_rounds):
        offsets = indexer.kernel_tables(r).offsets
        edges = np.concatenate([offsets[:-1], offsets[1:] - 1])
        sample = np.random.default_rng(r).integers(0, indexer.size(r), 20_000)
        indices = np.unique(np.concatenate([edges, sample]))
        cards, counts = indexer.unindex_batch(r, indices)
        assert (indexer.index_batch(cards) == indices).all()
        assert (counts >= 1).all() and (24 % counts == 0).all()
        for hand, count in list(zip(cards.tolist(), counts.tolist(), strict=True))[:200]:
            images = {oracle_key(relabel(hand, p), indexer.cards_per_round[: r + 1])
                      for p in itertools.permutations(range(4))}  # fmt: skip
            assert len(images) == count  # distinct relabellings = hands in the class


def oracle_key(hand: Sequence[int], per_round: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    parts = []
    pos = 0
    for k in per_round:
        parts.append(tuple(sorted(hand[pos : pos + k])))
        pos += k
    return tuple(parts)


def test_every_turn_class_round_trips() -> None:
    """All 13,960,050 turn classes: unindex then index is the identity; sizes sum up."""
    indexer = holdem_indexer("board", 2)
    total = 0
    step = 2_000_000
    for start in range(0, indexer.size(1), step):
        indices = np.arange(start, min(start + step, indexer.size(1)))
        cards, counts = indexer.unindex_batch(1, indices)
        assert (indexer.index_batch(cards, check=False) == indices).all()
        total += int(counts.sum())
    assert total == indexer.hands(1) == math.comb(52, 2) * math.comb(50, 4)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (((),), {}, "expected cards_per_round to be 1..8 card counts, got ()"),
        ((5,), {}, "expected cards_per_round to be 1..8 card counts, got 5"),
        (((2, 0),), {}, "expected every entry of cards_per_round to be an int in 1..52, got 0"),
        (((2, "3"),), {}, "got '3'"),
        (((30, 30),), {}, "expected at most 52 cards in all, got cards_per_round [30, 30]"),
        (((2,),), {"num_ranks": 0}, "expected num_ranks to be an int in 1..62, got 0"),
        (((2,),), {"num_suits": 9}, "expected num_suits to be an int in 1..8, got 9"),
        (((2,),), {"num_suits": True}, "expected num_suits to be an int in 1..8, got True"),
        (((1,) * 8,), {"num_ranks": 13, "num_suits": 8}, "shape keys must fit 62 bits"),
    ],
)
def test_bad_indexer_arguments(args: tuple[object, ...], kwargs: dict[str, object],
                               message: str) -> None:  # fmt: skip
    with pytest.raises(ValueError, match=r"^expected") as info:
        HandIndexer(*args, **kwargs)  # type: ignore[arg-type]
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_bad_hands_and_indices() -> None:
    indexer = holdem_indexer("perfect")
    cases: list[tuple[object, str]] = [
        (lambda: indexer.index([0, 1, 2]), "expected a hand of 2 or 5 or 6 or 7 cards"),
        (lambda: indexer.index([0, 52]), "expected card indices in 0..51, got 52 in [0, 52]"),
        (lambda: indexer.index([0, -1]), "got -1 in [0, -1]"),
        (lambda: indexer.index([7, 7]), "expected distinct cards, got 7 twice in [7, 7]"),
        (lambda: indexer.index([0, 1.0]), "got 1.0 in [0, 1.0]"),
        (lambda: indexer.unindex(4, 0), "expected a round in 0..3, got 4"),
        (lambda: indexer.unindex(0, 169), "expected a class index in 0..168 for round 0, got 169"),
        (lambda: indexer.multiplicity(1, -1), "got -1"),
        (lambda: indexer.size(True), "expected a round in 0..3, got True"),
        (lambda: indexer.index_batch([[0, 1, 2]]), "got 3 cards"),
        (lambda: indexer.index_batch([0, 1]), "expected a 2-D integer array of hands"),
        (lambda: indexer.index_batch([[0.5, 1.0]]), "dtype float64"),
        (lambda: indexer.index_batch([[0, 1], [3, 3]]), "got row 1 = [3, 3]"),
        (lambda: indexer.index_batch([[0, 1], [3, 60]]), "got row 1 = [3, 60]"),
        (lambda: indexer.unindex_batch(0, [[1]]), "expected a 1-D array of class indices"),
        (lambda: indexer.unindex_batch(0, [0, 169]), "got 169"),
        (lambda: holdem_indexer("full"), "expected recall 'board' or 'perfect', got 'full'"),  # type: ignore[arg-type]
        (lambda: holdem_indexer("board", 4), "expected a hold'em round 0..3, got 4"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=r"^expected") as info:
            call()  # type: ignore[operator]
        assert message in str(info.value), str(info.value)
        assert "\n" not in str(info.value)


def test_unchecked_batch_never_fails_on_bad_cards() -> None:
    indexer = holdem_indexer("board", 1)
    out = indexer.index_batch([[0, 0, 1, 2, 3], [60, 1, 2, 3, 4]], check=False)
    assert out.shape == (2,)
    assert indexer.index_batch(np.zeros((0, 5), np.int64)).shape == (0,)


# --------------------------------------------------------------------------- no-JIT run


@pytest.mark.skipif(NO_JIT, reason="already running without the JIT")
def test_kernels_as_plain_python() -> None:
    """The ``small`` tests again with NUMBA_DISABLE_JIT=1: the kernels' Python semantics."""
    run_without_jit(__file__)


def test_docs_example() -> None:
    """The reference's suit-isomorphism example runs as shown (doctest)."""
    import doctest

    text = (ROOT / "docs" / "reference" / "isomorphism.md").read_text()
    start = text.index("# Suit isomorphism")
    block = text[
        text.index("```python\n", start) + 10 : text.index(
            "```\n", text.index("```python\n", start) + 10
        )
    ]
    test = doctest.DocTestParser().get_doctest(block, {}, "isomorphism", "isomorphism.md", 0)
    assert len(test.examples) >= 5
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    result = runner.run(test, out=lambda _: None)
    assert result.failed == 0 and result.attempted == len(test.examples)
