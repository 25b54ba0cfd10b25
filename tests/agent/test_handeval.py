"""Hand evaluation, twice on purpose: the pure-Python oracle and the numba kernels.

* the oracle (:mod:`agent.acpc.evaluator`) on hand-picked cases: every category, ties,
  kickers, hands of fewer than five cards (Kuhn, Leduc);
* the kernels (:mod:`agent.handeval`) equal to the oracle, value for value:
  exhaustively on small decks and on every 1..4-card hand of the full deck, and on random
  5-, 6-, 7- and 8-card hands;
* the kernels ordered like two independent evaluators (phevaluator on 250,000, eval7 on
  200,000 random 7-card hands, ties included; a million each took ~100 CPU-s of the suite),
  and like phevaluator on all 2,598,960 5-card hands;
* the tests whose names contain ``small`` run again in a subprocess with
  ``NUMBA_DISABLE_JIT=1``, so the kernels' plain-Python semantics are checked too.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import combinations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent import handeval
from agent.acpc.cards import format_card, make_card, parse_cards
from agent.acpc.evaluator import (
    HandCategory,
    category_of,
    describe_hand,
    rank_hand,
    rank_hand_fast,
)
from tests.support import NO_JIT, run_without_jit

FULL_DECK = list(range(52))
LEDUC_DECK = [make_card(rank, suit) for suit in (2, 3) for rank in (10, 11, 12)]  # Q K A, h s
TEN_TO_ACE_DECK = [make_card(rank, suit) for rank in range(8, 13) for suit in range(4)]


def rank(text: str) -> int:
    return rank_hand(parse_cards(text))


def random_hands(num_hands: int, num_cards: int, seed: int) -> npt.NDArray[np.uint8]:
    """``num_hands`` rows of ``num_cards`` distinct cards, uniformly at random."""
    rng = np.random.default_rng(seed)
    keys = rng.random((num_hands, 52))
    return np.argpartition(keys, num_cards, axis=1)[:, :num_cards].astype(np.uint8)


def all_hands(deck: Sequence[int], num_cards: int) -> npt.NDArray[np.uint8]:
    return np.array(list(combinations(deck, num_cards)), dtype=np.uint8).reshape(-1, num_cards)


def assert_kernels_match_oracle(hands: npt.NDArray[np.uint8]) -> None:
    """evaluate_batch (3 dtypes) and evaluate equal rank_hand on every row."""
    expected = np.array([rank_hand(hand) for hand in hands.tolist()], dtype=np.int64)
    for dtype in (np.uint8, np.int32, np.int64):
        got = handeval.evaluate_batch(hands.astype(dtype))
        bad = np.flatnonzero(got != expected)
        assert bad.size == 0, (
            f"{bad.size} mismatches, first {hands[bad[0]].tolist()}: "
            f"kernel {got[bad[0]]:#x}, oracle {expected[bad[0]]:#x}"
        )
    sample = hands[:: max(1, len(hands) // 500)].tolist()
    assert [handeval.evaluate(hand) for hand in sample] == [rank_hand(h) for h in sample]


# --------------------------------------------------------------------------- the oracle


def test_small_encoding_is_category_and_rank_nibbles() -> None:
    assert rank("AsKsQsJsTs") == 0x8DCBA9  # straight flush A K Q J T (rank + 1 per nibble)
    assert rank("5c4d3h2sAc") == 0x44321D  # the wheel is encoded 5 4 3 2 A
    assert rank("KcKdKhQcQd") == 0x6CCCBB
    assert rank("7s") == 0x060000  # one card, four empty nibbles
    assert rank("AcAd") == 0x1DD000


@pytest.mark.parametrize(
    ("text", "category"),
    [
        ("As9d7c5h3s2dTc", HandCategory.HIGH_CARD),
        ("AsAd7c5h3s2dTc", HandCategory.PAIR),
        ("AsAd7c7h3s2dTc", HandCategory.TWO_PAIR),
        ("AsAdAc7h3s2dTc", HandCategory.THREE_OF_A_KIND),
        ("9s8d7c6h5s2dTc", HandCategory.STRAIGHT),
        ("Ac2d3h4s5cKdKh", HandCategory.STRAIGHT),  # the wheel beats a pair
        ("Ac2d3h4s5c6d6h", HandCategory.STRAIGHT),  # six-high here
        ("As9s7s5s3s2dTc", HandCategory.FLUSH),
        ("AsAdAc7h7s2dTc", HandCategory.FULL_HOUSE),
        ("AsAdAcAh7s2dTc", HandCategory.FOUR_OF_A_KIND),
        ("9s8s7s6s5s2dTc", HandCategory.STRAIGHT_FLUSH),
        ("As2s3s4s5sKdKh", HandCategory.STRAIGHT_FLUSH),
    ],
)
def test_small_categories(text: str, category: HandCategory) -> None:
    assert category_of(rank(text)) is category


def test_small_categories_are_ordered() -> None:
    ladder = [
        "Kd9s7c5h3s",  # high card
        "2c2d3h4s6c",  # pair
        "2c2d3h3s4c",  # two pair
        "2c2d2h3s4c",  # trips
        "Ac2d3h4s5c",  # wheel, the lowest straight
        "2c3d4h5s6c",
        "TcJdQhKsAc",
        "2c3c4c5c7c",  # lowest flush
        "AhKhQhJh9h",
        "2c2d2h3s3c",  # lowest full house
        "AcAdAhKsKc",
        "2c2d2h2s3c",  # lowest quads
        "AcAdAhAsKc",
        "Ac2c3c4c5c",  # steel wheel, the lowest straight flush
        "2c3c4c5c6c",
        "TsJsQsKsAs",
    ]
    values = [rank(text) for text in ladder]
    assert values == sorted(values)
    assert len(set(values)) == len(values)


@pytest.mark.parametrize(
    ("better", "worse"),
    [
        # kickers count, but only five cards in all
        ("AsAd9c8h7s3d2c", "AsAd9c8h6s5d4c"),  # pair: third kicker decides
        ("AhAdKcKs5h5dQc", "AhAdKcKs5h5d2c"),  # two pair + third pair: Q kicker over 5
        ("AhAdKcKs5h5d2c", "AhAdKcKs4h4d3c"),  # the third pair's rank is the kicker
        ("KsKdKc8h7s3d2c", "KsKdKc8h6s5d4c"),  # trips: two kickers
        ("AsAdAcAh6sKdKc", "AsAdAcAh7s2d3c"),  # quads: the best single kicker, from a pair
        ("KsKdKcQhQsQd2c", "KsKdKcJhJsJd2c"),  # trips + trips: K over Q beats K over J
        ("QsQdQcJhJsJd2c", "QsQdQc2h2s3dJc"),  # full house: the pair's rank decides
        ("7s6d5c4h3s2dAc", "6s5d4c3h2sAdKc"),  # 7-high straight beats 6-high
        ("6s5d4c3h2sAdKc", "5s4d3c2hAsKdQc"),  # 6-high straight beats the wheel
        ("Ks9s7s5s4sQdJc", "Ks9s7s5s3sAdAc"),  # flush: fifth card decides
        ("2c3c4c5c6cAsAd", "AhAdAcAsKs2d3d"),  # straight flush beats quads
    ],
)
def test_small_kickers_and_rules(better: str, worse: str) -> None:
    assert rank(better) > rank(worse)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("AsKdQcJh9s3d2c", "AhKcQdJs9h4d3c"),  # only the best five count
        ("AsKsQsJsTs2d3c", "AsKsQsJsTs4h5h"),  # the board plays
        ("AhAdKcKs5h5dQc", "AcAsKhKdQd3h2h"),  # two pair, Q kicker either way
        ("KsKdKcQhQsQd2c", "KhKdKcQhQs3d4c"),  # trips + trips = the best full house
        ("AsAdAcAh7s7d7c", "AsAdAcAh7h2d3c"),  # quads take a single kicker
    ],
)
def test_small_ties(first: str, second: str) -> None:
    assert rank(first) == rank(second)


def test_small_fewer_than_five_cards() -> None:
    # Kuhn: one card, the higher rank wins
    assert rank("Ks") > rank("Qs") > rank("Js")
    assert rank("Kh") == rank("Ks")
    # Leduc: two cards, a pair beats any high card, then both ranks count
    assert rank("KsKh") > rank("AsQh")
    assert rank("AsQh") > rank("KsQh")
    assert rank("KsQh") > rank("KsJh")
    assert rank("AsQh") == rank("AhQs")
    # no straights or flushes below five cards; quads, two pair, trips still count
    assert category_of(rank("2s3s4s5s")) is HandCategory.HIGH_CARD
    assert category_of(rank("AsAhAdAc")) is HandCategory.FOUR_OF_A_KIND
    assert category_of(rank("AsAhKdKc")) is HandCategory.TWO_PAIR
    assert category_of(rank("7s7h7d")) is HandCategory.THREE_OF_A_KIND
    assert rank("AsAh3d") > rank("AsAh2d")


def test_small_eight_cards_flush_and_full_house_together() -> None:
    # 3 hole + 5 board: a flush and a full house (or quads) can coexist; the best wins
    assert category_of(rank("2h3h5h7h9hJhAcAd")) is HandCategory.FLUSH
    assert category_of(rank("2h3h5h7h9h9s9dAc")) is HandCategory.FLUSH
    assert category_of(rank("2h3h5h7h9h9s9d2c")) is HandCategory.FULL_HOUSE
    assert category_of(rank("2h3h5h7h9h9s9d9c")) is HandCategory.FOUR_OF_A_KIND


@pytest.mark.parametrize(
    ("text", "description"),
    [
        ("As9d7c5h3s", "high card, ace"),
        ("KsKd7c5h3s", "pair of kings"),
        ("KsKd5c5h3s", "two pair, kings and fives"),
        ("7s7d7c5h3s", "three of a kind, sevens"),
        ("5c4d3h2sAc", "straight, five high"),
        ("Qs9s7s5s3s", "flush, queen high"),
        ("TsTdTc4h4s", "full house, tens over fours"),
        ("6s6d6c6hAs", "four of a kind, sixes"),
        ("AsKsQsJsTs", "straight flush, ace high"),
        ("2s", "high card, deuce"),
    ],
)
def test_small_describe_hand(text: str, description: str) -> None:
    assert describe_hand(rank(text)) == description


@pytest.mark.parametrize("value", [-1, 9 << 20, 0, (1 << 20) | 0xE0000])
def test_small_describe_hand_rejects_non_values(value: int) -> None:
    with pytest.raises(ValueError, match="rank_hand"):
        describe_hand(value)


@pytest.mark.parametrize(
    "cards",
    [[], list(range(9)), [0, 52], [-1], [3, 3], [True], [1.0]],
    ids=["none", "nine", "52", "negative", "repeat", "bool", "float"],
)
def test_small_invalid_hands_raise(cards: list[int]) -> None:
    with pytest.raises(ValueError, match="expected"):
        rank_hand(cards)
    with pytest.raises(ValueError, match="expected"):
        handeval.evaluate(cards)


# --------------------------------------------------------------------------- kernel = oracle


def test_small_kernels_run_in_the_expected_mode() -> None:
    compiled = hasattr(handeval._evaluate_rows7, "py_func")  # a numba dispatcher
    assert compiled is not NO_JIT


def test_small_leduc_deck_all_hands() -> None:
    for num_cards in (1, 2):
        assert_kernels_match_oracle(all_hands(LEDUC_DECK, num_cards))


def test_small_full_deck_one_and_two_cards() -> None:
    for num_cards in (1, 2):
        assert_kernels_match_oracle(all_hands(FULL_DECK, num_cards))


def test_small_ten_to_ace_deck_five_cards() -> None:
    assert_kernels_match_oracle(all_hands(TEN_TO_ACE_DECK, 5))  # 15,504 hands


def test_small_random_hands_of_every_size() -> None:
    per_size = 20 if NO_JIT else 150  # the kernels as plain Python: 150 a size took 35 s
    # Without the JIT, 8-card hands are left to the compiled run: their tables (built by the
    # same code as the 1-7 card ones, with other multipliers) took 17 s of plain Python.
    for num_cards in range(1, 8 if NO_JIT else 9):
        assert_kernels_match_oracle(random_hands(per_size, num_cards, seed=num_cards))


def test_small_evaluate7_matches_evaluate() -> None:
    hands = random_hands(300, 7, seed=77).tolist()
    assert [handeval.evaluate7(*hand) for hand in hands] == [rank_hand(h) for h in hands]


def test_ten_to_ace_deck_six_and_seven_cards() -> None:
    assert_kernels_match_oracle(all_hands(TEN_TO_ACE_DECK, 6))  # 38,760
    assert_kernels_match_oracle(all_hands(TEN_TO_ACE_DECK, 7))  # 77,520


def test_full_deck_three_and_four_cards() -> None:
    assert_kernels_match_oracle(all_hands(FULL_DECK, 3))  # 22,100
    assert_kernels_match_oracle(all_hands(FULL_DECK, 4))  # 270,725


def test_random_seven_card_hands() -> None:
    assert_kernels_match_oracle(random_hands(30_000, 7, seed=7))


@pytest.mark.parametrize(("num_cards", "num_hands"), [(5, 30_000), (6, 30_000), (8, 20_000)])
def test_random_five_six_and_eight_card_hands(num_cards: int, num_hands: int) -> None:
    assert_kernels_match_oracle(random_hands(num_hands, num_cards, seed=num_cards))


@settings(max_examples=60 if NO_JIT else 300, deadline=None)  # plain Python: 70 s for 300
@given(st.lists(st.integers(0, 51), min_size=1, max_size=7 if NO_JIT else 8, unique=True))
def test_small_any_hand(cards: list[int]) -> None:
    value = rank_hand(cards)
    assert handeval.evaluate(cards) == value
    assert handeval.evaluate(cards[::-1]) == value  # order does not matter
    assert int(handeval.evaluate_batch(np.array([cards], dtype=np.uint8))[0]) == value


# --------------------------------------------------------------------------- kernel API


def test_small_batch_accepts_layouts_and_out() -> None:
    hands = random_hands(200, 7, seed=3)
    expected = handeval.evaluate_batch(hands)
    assert expected.dtype == np.int32 and expected.shape == (200,)
    wide = np.asfortranarray(hands.astype(np.int16))  # converted: other dtype, F order
    assert np.array_equal(handeval.evaluate_batch(wide), expected)
    assert np.array_equal(handeval.evaluate_batch(hands.tolist()), expected)
    out = np.zeros(200, np.int32)
    assert handeval.evaluate_batch(hands, out=out) is out
    assert np.array_equal(out, expected)
    assert handeval.evaluate_batch(np.zeros((0, 5), np.uint8)).shape == (0,)


BAD_CARDS = [
    (dtype, bad) for dtype in (np.uint8, np.int32, np.int64)
    for bad in (52, 63, 64, 255, 256, -1, "repeat")
    # only the bad cards the dtype can hold (uint8 has no 256 and no -1)
    if bad == "repeat" or np.iinfo(dtype).min <= int(bad) <= np.iinfo(dtype).max
]


@pytest.mark.parametrize(("dtype", "bad_card"), BAD_CARDS)
# Without the JIT, an 8-card batch builds the 8-card tables in plain Python (28 s); the
# 7-card ones, built at import, run the same kernels.
@pytest.mark.parametrize("num_cards", [2, 7] if NO_JIT else [2, 7, 8])
def test_small_batch_rejects_bad_cards(dtype: type, num_cards: int, bad_card: int | str) -> None:
    hands = random_hands(20, num_cards, seed=1).astype(np.int64)
    if bad_card == "repeat":
        hands[13, -1] = hands[13, 0]
    else:
        hands[13, 1] = int(bad_card)
    with pytest.raises(ValueError, match="row 13: expected"):
        handeval.evaluate_batch(hands.astype(dtype))
    handeval.evaluate_batch(hands.astype(dtype), check=False)  # garbage in, but no crash


@pytest.mark.parametrize(
    "hands",
    [np.zeros((3,), np.uint8), np.zeros((3, 9), np.uint8), np.zeros((3, 0), np.uint8),
     np.zeros((2, 5)), np.zeros((2, 5), bool)],
    ids=["1-d", "9 cards", "0 cards", "float", "bool"],
)  # fmt: skip
def test_small_batch_rejects_bad_arrays(hands: npt.NDArray[np.generic]) -> None:
    with pytest.raises(ValueError, match="expected"):
        handeval.evaluate_batch(hands)


def test_small_batch_rejects_bad_out() -> None:
    hands = random_hands(4, 5, seed=1)
    for out in (np.zeros(3, np.int32), np.zeros(4, np.int64), np.zeros(8, np.int32)[::2]):
        with pytest.raises(ValueError, match="expected out"):
            handeval.evaluate_batch(hands, out=out)


def test_small_evaluate7_checks_cards() -> None:
    with pytest.raises(ValueError, match=r"0\.\.51"):
        handeval.evaluate7(0, 1, 2, 3, 4, 5, 52)
    with pytest.raises(ValueError, match=r"0\.\.51"):
        handeval.evaluate7(-1, 1, 2, 3, 4, 5, 6)
    with pytest.raises(ValueError, match="distinct"):
        handeval.evaluate7(0, 1, 2, 3, 4, 5, 0)
    with pytest.raises(TypeError):
        handeval.evaluate7(0, 1, 2, 3, 4, 5)  # type: ignore[call-arg]


def test_warm_up_is_idempotent() -> None:
    """With the JIT only: without it, warming up is building every table (8 cards: 28 s)
    in plain Python, which the 7-card tables built at import already do."""
    handeval.warm_up()
    handeval.warm_up()
    assert handeval.evaluate(parse_cards("AsKsQsJsTs")) == rank("AsKsQsJsTs")


# --------------------------------------------------------------------------- other evaluators


def assert_same_order(ours: npt.NDArray[np.int64], theirs: npt.NDArray[np.int64]) -> None:
    """``theirs`` ranks like ``ours`` (larger is better in both), equal exactly when tied."""
    order = np.argsort(ours, kind="stable")
    ours, theirs = ours[order], theirs[order]
    step_ours, step_theirs = np.diff(ours), np.diff(theirs)
    assert np.array_equal(step_ours == 0, step_theirs == 0), "ties differ"
    assert np.all(step_theirs[step_ours > 0] > 0), "order differs"


def phevaluator_values(hands: npt.NDArray[np.uint8]) -> npt.NDArray[np.int64]:
    """phevaluator's ranks, negated so that larger is better."""
    phevaluator = pytest.importorskip("phevaluator")
    # Its integer ids are ours (2c=0, 2d=1, .., As=51); map through the text form anyway.
    ids = np.array([phevaluator.Card(format_card(card)).id_ for card in range(52)])
    evaluate_cards = phevaluator.evaluate_cards
    rows = ids[hands].tolist()
    return -np.array([evaluate_cards(*row) for row in rows], dtype=np.int64)


@pytest.mark.slow
def test_ordering_matches_phevaluator_on_random_seven_card_hands() -> None:
    hands = random_hands(250_000, 7, seed=2024)
    assert_same_order(handeval.evaluate_batch(hands).astype(np.int64), phevaluator_values(hands))


@pytest.mark.slow
def test_ordering_matches_eval7_on_random_seven_card_hands() -> None:
    eval7 = pytest.importorskip("eval7")
    hands = random_hands(200_000, 7, seed=2025)
    deck = [eval7.Card(format_card(card)) for card in range(52)]
    evaluate = eval7.evaluate
    theirs = np.array([evaluate([deck[c] for c in row]) for row in hands.tolist()])
    assert_same_order(handeval.evaluate_batch(hands).astype(np.int64), theirs.astype(np.int64))


@pytest.mark.slow
def test_ordering_matches_phevaluator_on_every_five_card_hand() -> None:
    hands = all_hands(FULL_DECK, 5)  # 2,598,960
    ours = handeval.evaluate_batch(hands)
    assert len(np.unique(ours)) == 7462  # the classic number of five-card hand classes
    assert_same_order(ours.astype(np.int64), phevaluator_values(hands))


# --------------------------------------------------------------------------- no-JIT run


@pytest.mark.skipif(NO_JIT, reason="already running without the JIT")
def test_kernels_as_plain_python() -> None:
    """The ``small`` tests again with NUMBA_DISABLE_JIT=1: the kernels' Python semantics."""
    run_without_jit(__file__)


def test_rank_hand_fast_equals_the_oracle() -> None:
    """The dealer's direct 6-8 card ranking returns exactly the subset oracle's values."""
    for hand in combinations(TEN_TO_ACE_DECK, 7):  # every category but the wheel
        assert rank_hand_fast(hand) == rank_hand(hand), hand
    rng = random.Random(11)
    for n in (1, 2, 5, 6, 7, 8):
        for _ in range(5_000):
            hand = rng.sample(range(52), n)
            assert rank_hand_fast(hand) == rank_hand(hand), hand
    with pytest.raises(ValueError):
        rank_hand_fast([1, 1, 2, 3, 4, 5, 6])
