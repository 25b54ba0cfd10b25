"""Hold'em card abstraction (:mod:`agent.abstraction.holdem_buckets`) and ``builtin:equity``.

* preflop: the 169 classes (13 x 6 + 78 x 4 + 78 x 12 = 1326 combinations), suit
  isomorphism, the documented index order;
* postflop kernels against slow pure-Python oracles built on
  :func:`agent.acpc.evaluator.rank_hand_fast`: river HS exactly, turn E[HS] and E[HS^2]
  exactly (the same integer sums, so bit for bit);
* the flop estimator: deterministic, invariant under card order and suit permutations,
  exact with 46 rivers per turn, and within 4 standard errors of the exact value with the
  default sample (the standard error is computed from the exact per-run-out values);
* thresholds, buckets (in range, monotone, ``searchsorted`` semantics), the spec round
  trip through :func:`card_abstraction_from_spec`, JSON and msgpack, and bad specs;
* ``builtin:equity``: never an illegal action over thousands of random states, and
  ``agent.builtin`` imports neither numpy nor numba;
* the tests whose names contain ``small`` run again in a subprocess with
  ``NUMBA_DISABLE_JIT=1``, so the kernels' plain-Python semantics are checked too.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

import msgpack
import numpy as np
import pytest

from agent import handeval
from agent.abstraction import holdem_buckets as holdem
from agent.abstraction.buckets import card_abstraction_from_spec
from agent.abstraction.holdem_buckets import HoldemCards
from agent.acpc.betting import Action, ActionKind, BettingState
from agent.acpc.cards import parse_cards
from agent.acpc.evaluator import rank_hand_fast
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import MatchState
from tests.support import NO_JIT, run_without_jit

PERMS = list(itertools.permutations(range(4)))
SCALE = 2 * holdem.OPPONENT_HANDS


def relabel(cards: Sequence[int], perm: Sequence[int]) -> list[int]:
    return [(c // 4) * 4 + perm[c % 4] for c in cards]


# --------------------------------------------------------------------------- oracles


def oracle_river_score(hole: Sequence[int], board: Sequence[int]) -> int:
    """2 * wins + ties against every opponent pair, by brute force."""
    dead = {*hole, *board}
    live = [c for c in range(52) if c not in dead]
    ours = rank_hand_fast([*hole, *board])
    score = 0
    for a, b in itertools.combinations(live, 2):
        theirs = rank_hand_fast([a, b, *board])
        score += 2 if ours > theirs else 1 if ours == theirs else 0
    return score


def oracle_turn_moments(hole: Sequence[int], board: Sequence[int]) -> tuple[float, float]:
    """(E[HS], E[HS^2]) over the 46 rivers, as the same integer sums."""
    dead = {*hole, *board}
    scores = [oracle_river_score(hole, [*board, r]) for r in range(52) if r not in dead]
    assert len(scores) == 46
    return sum(scores) / (46 * SCALE), sum(s * s for s in scores) / (46 * SCALE * SCALE)


def flop_runout_hs(hole: Sequence[int], flop: Sequence[int]) -> list[float]:
    """Exact river HS of each of the 1081 run-outs (kernel path, itself oracle-tested)."""
    dead = {*hole, *flop}
    live = [c for c in range(52) if c not in dead]
    return [holdem.hand_strength_moments(hole, [*flop, t, r])[0]
            for t, r in itertools.combinations(live, 2)]  # fmt: skip


# --------------------------------------------------------------------------- preflop


def test_small_preflop_classes_count() -> None:
    counts = Counter(holdem.preflop_class(h) for h in itertools.combinations(range(52), 2))
    assert sorted(counts) == list(range(169))
    by_size = Counter(counts.values())
    assert by_size == {6: 13, 4: 78, 12: 78}
    assert sum(counts.values()) == 1326
    for index, n in counts.items():
        name = holdem.preflop_class_name(index)
        assert n == (6 if len(name) == 2 else 4 if name.endswith("s") else 12), name


def test_small_preflop_suit_isomorphism() -> None:
    """Same class iff the two hands are a suit relabelling (and reordering) of each other."""
    classes: dict[int, frozenset[tuple[int, ...]]] = {}
    for hole in itertools.combinations(range(52), 2):
        index = holdem.preflop_class(hole)
        assert holdem.preflop_class(hole[::-1]) == index
        forms = frozenset(tuple(sorted(relabel(hole, p))) for p in PERMS)
        for form in forms:
            assert holdem.preflop_class(form) == index
        classes.setdefault(index, forms)
        assert classes[index] == forms  # one orbit per class


@pytest.mark.parametrize(
    ("text", "index", "name"),
    [("2c2d", 0, "22"), ("3c2d", 1, "32o"), ("3c2c", 13, "32s"), ("AhAs", 168, "AA"),
     ("AsKs", 167, "AKs"), ("KdAh", 155, "AKo"), ("7h2c", 5 + 0 * 13, "72o"),
     ("Th9h", 8 * 13 + 7, "T9s")],
)  # fmt: skip
def test_small_preflop_index_order(text: str, index: int, name: str) -> None:
    assert holdem.preflop_class(parse_cards(text)) == index
    assert holdem.preflop_class_name(index) == name


def test_small_preflop_rejects_bad_cards() -> None:
    for bad in ([1], [1, 1], [1, 52], [-1, 3], [1, 2, 3]):
        with pytest.raises(ValueError, match="expected"):
            holdem.preflop_class(bad)
    with pytest.raises(ValueError, match=r"0\.\.168"):
        holdem.preflop_class_name(169)


# --------------------------------------------------------------------------- river, turn

CRAFTED_RIVERS = [
    ("AsKs", "QsJsTs2h3d"),  # royal flush
    ("2c3d", "AsKsQsJsTs"),  # royal flush on the board: everyone ties
    ("Ah2h", "KhQh7h5c9d"),  # nut flush, 3-flush board
    ("2h3h", "KhQh7h5h9d"),  # low flush, 4-flush board
    ("7c7d", "7h7s2c2dKc"),  # quads on board with a full board pair
    ("9c8d", "7h6s5c2dKc"),  # straight
    ("Ac2d", "3h4s5c9dKc"),  # wheel
    ("KcKd", "AhAsKsQhQd"),  # full house, paired board
]


def small_random_cases(n: int, n_board: int, seed: int) -> list[tuple[list[int], list[int]]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        cards = rng.sample(range(52), 2 + n_board)
        out.append((cards[:2], cards[2:]))
    return out


def test_small_river_hs_matches_oracle() -> None:
    cases = [(list(parse_cards(h)), list(parse_cards(b))) for h, b in CRAFTED_RIVERS]
    for hole, board in cases[:4] if NO_JIT else cases:
        hs, hs2 = holdem.hand_strength_moments(hole, board)
        score = oracle_river_score(hole, board)
        assert hs == score / SCALE
        assert hs2 == score * score / (SCALE * SCALE)
    assert holdem.hand_strength_moments(*cases[0]) == (1.0, 1.0)
    assert holdem.hand_strength_moments(*cases[1]) == (0.5, 0.25)


def test_river_hs_matches_oracle_on_random_boards() -> None:
    rng = random.Random(5)
    cases = small_random_cases(40, 5, seed=1)
    for _ in range(20):  # boards with three or more cards of one suit: the grouped path
        suit = rng.randrange(4)
        board = rng.sample([r * 4 + suit for r in range(13)], rng.choice((3, 4, 5)))
        rest = [c for c in range(52) if c not in board]
        board += rng.sample(rest, 5 - len(board))
        hole = rng.sample([c for c in rest if c not in board], 2)
        cases.append((hole, board))
    for hole, board in cases:
        score = oracle_river_score(hole, board)
        assert holdem.hand_strength_moments(hole, board)[0] == score / SCALE, (hole, board)


def test_small_turn_matches_oracle() -> None:
    hole, board = list(parse_cards("AhTd")), list(parse_cards("Kh7h2hTc"))  # flush draw
    assert holdem.hand_strength_moments(hole, board) == oracle_turn_moments(hole, board)


def test_turn_matches_oracle_on_random_boards() -> None:
    for hole, board in small_random_cases(3, 4, seed=2):
        assert holdem.hand_strength_moments(hole, board) == oracle_turn_moments(hole, board)


def test_small_exact_values_are_suit_and_order_invariant() -> None:
    rng = random.Random(3)
    for n_board in (5, 4):
        for hole, board in small_random_cases(1 if NO_JIT else 5, n_board, seed=n_board):
            value = holdem.hand_strength_moments(hole, board)
            for perm in rng.sample(PERMS, 2 if NO_JIT else 6):
                h, b = relabel(hole, perm), relabel(board, perm)
                rng.shuffle(b)
                assert holdem.hand_strength_moments(h[::-1], b) == value


# --------------------------------------------------------------------------- flop


def test_small_flop_estimate_is_deterministic_and_isomorphism_invariant() -> None:
    k = 1 if NO_JIT else holdem.FLOP_RIVERS_PER_TURN
    rng = random.Random(4)
    for hole, flop in small_random_cases(2, 3, seed=4):
        value = holdem.hand_strength_moments(hole, flop, flop_rivers_per_turn=k)
        assert holdem.hand_strength_moments(hole, flop, flop_rivers_per_turn=k) == value
        assert 0.0 <= value[1] <= value[0] <= 1.0
        for perm in rng.sample(PERMS, 3):
            h, b = relabel(hole, perm), relabel(flop, perm)
            rng.shuffle(b)
            assert holdem.hand_strength_moments(h[::-1], b, flop_rivers_per_turn=k) == value


def test_flop_with_every_river_is_exact() -> None:
    """46 rivers per turn = every ordered run-out: the mean of the (oracle-tested) turns."""
    for hole, flop in small_random_cases(3, 3, seed=6):
        dead = {*hole, *flop}
        turns = [holdem.hand_strength_moments(hole, [*flop, t]) for t in range(52)
                 if t not in dead]  # fmt: skip
        exact = holdem.hand_strength_moments(hole, flop, flop_rivers_per_turn=46)
        assert exact[0] == pytest.approx(np.mean([t[0] for t in turns]), abs=1e-12)
        assert exact[1] == pytest.approx(np.mean([t[1] for t in turns]), abs=1e-12)


def test_flop_estimate_is_close_to_exact() -> None:
    """Within 4 standard errors, for 10 flops.

    The estimate averages n = 47 * k river HS^2 values, k per turn card drawn without
    replacement. Its standard error is at most sigma / sqrt(n), sigma the standard deviation
    of HS^2 over all 1081 run-outs (stratifying by turn and drawing without replacement only
    lower it), computed here exactly. The draws are fixed by the cards, so this test is
    deterministic; at 4 sigma a correct estimator would fail it for one flop in ~16,000.
    """
    k = holdem.FLOP_RIVERS_PER_TURN
    n = 47 * k
    ratios = []
    for hole, flop in small_random_cases(10, 3, seed=7):
        hs = np.array(flop_runout_hs(hole, flop))
        exact_hs2 = float(np.mean(hs * hs))
        se = float(np.std(hs * hs)) / math.sqrt(n)
        estimate = holdem.hand_strength_moments(hole, flop)
        assert abs(estimate[1] - exact_hs2) <= 4 * se + 1e-12, (hole, flop)
        se_hs = float(np.std(hs)) / math.sqrt(n)
        assert abs(estimate[0] - float(np.mean(hs))) <= 4 * se_hs + 1e-12, (hole, flop)
        ratios.append((estimate[1] - exact_hs2) / se)
    assert math.sqrt(np.mean(np.square(ratios))) < 1.5  # not just each: on the whole ~N(0, 1)


def test_small_moments_reject_bad_input() -> None:
    for hole, board, match in [
        ([0, 1], [2, 3], "3, 4 or 5"),
        ([0, 1], [2, 3, 4, 5, 6, 7], "3, 4 or 5"),
        ([0, 1, 2], [3, 4, 5], "2 hole cards"),
        ([0, 1], [1, 4, 5], "distinct"),
        ([0, 1], [2, 3, 52], "0..51"),
        ([0, 1], [2, 3, True], "0..51"),
    ]:
        with pytest.raises(ValueError, match=match):
            holdem.hand_strength_moments(hole, board)
    for k in (0, 47, 2.0):
        with pytest.raises(ValueError, match="flop_rivers_per_turn"):
            holdem.hand_strength_moments([0, 1], [2, 3, 4], flop_rivers_per_turn=k)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- sampling, buckets


def test_small_sampled_deals_use_the_decision_time_estimator() -> None:
    k = 1
    for round_ in (1, 2, 3):
        n = 2 if NO_JIT else 20
        deals, values = holdem.sample_deals(round_, n, seed=9, flop_rivers_per_turn=k)
        assert deals.shape == (n, 2 + holdem.BOARD_SIZES[round_])
        for deal, value in zip(deals.tolist(), values.tolist(), strict=True):
            assert len(set(deal)) == len(deal)
            assert value == holdem.ehs2(deal[:2], deal[2:], flop_rivers_per_turn=k)
        again = holdem.sample_ehs2(round_, n + 1, seed=9, flop_rivers_per_turn=k)
        assert again[:n].tolist() == values.tolist()  # deal i does not depend on n
        other = holdem.sample_deals(round_, n, seed=10, flop_rivers_per_turn=k)[0]
        assert other.tolist() != deals.tolist()
    with pytest.raises(ValueError, match="round"):
        holdem.sample_ehs2(0, 5)
    with pytest.raises(ValueError, match="seed"):
        holdem.sample_ehs2(1, 5, seed=-1)


def test_sampled_deals_are_uniform() -> None:
    deals, _ = holdem.sample_deals(3, 20_000, seed=1)
    counts = np.bincount(deals.ravel(), minlength=52)
    expected = deals.size / 52
    chi2 = float(np.sum((counts - expected) ** 2 / expected))
    assert chi2 < 120  # 51 degrees of freedom: p ~ 1e-7


def test_small_percentile_thresholds() -> None:
    values = np.arange(100) / 100
    t = holdem.percentile_thresholds(values[::-1], 4)
    assert t == [0.25, 0.5, 0.75]
    buckets = np.searchsorted(t, values, side="right")
    assert np.bincount(buckets).tolist() == [25, 25, 25, 25]
    assert holdem.percentile_thresholds([0.3], 1) == []
    with pytest.raises(ValueError, match="at least 4 values"):
        holdem.percentile_thresholds([0.1, 0.2], 4)


@pytest.fixture(scope="module")
def cards() -> HoldemCards:
    return HoldemCards.build((169, 8, 6, 5), samples=400, seed=7)


def test_build_is_reproducible(cards: HoldemCards) -> None:
    assert cards.buckets == (169, 8, 6, 5)
    assert [len(t) for t in cards.thresholds] == [7, 5, 4]
    again = HoldemCards.build((169, 8, 6, 5), samples=400, seed=7)
    assert again.spec == cards.spec
    other = HoldemCards.build((169, 8, 6, 5), samples=400, seed=8)
    assert other.thresholds != cards.thresholds
    for r, t in enumerate(cards.thresholds, start=1):
        values = holdem.sample_ehs2(r, 400, seed=7)
        assert list(t) == holdem.percentile_thresholds(values, cards.buckets[r])
        if r == 1:  # flop values are all but continuous: equal-count buckets
            counts = np.bincount(np.searchsorted(t, values, side="right"), minlength=8)
            assert counts.tolist() == [50] * 8


def test_buckets_in_range_and_monotone(cards: HoldemCards) -> None:
    for round_ in (1, 2, 3):
        deals, values = holdem.sample_deals(round_, 150, seed=123)
        got = [cards.bucket(round_, d[:2], d[2:]) for d in deals.tolist()]
        assert all(0 <= b < cards.buckets[round_] for b in got)
        t = cards.thresholds[round_ - 1]
        assert got == np.searchsorted(t, values, side="right").tolist()
        order = np.argsort(values, kind="stable")
        assert np.all(np.diff(np.array(got)[order]) >= 0)  # monotone in the metric
        for i, value in enumerate(t):  # a value equal to a threshold is above it
            assert cards.bucket_of_value(round_, value) >= i + 1
            assert cards.bucket_of_value(round_, math.nextafter(value, -1)) <= i
        assert cards.bucket_of_value(round_, 0.0) == int(sum(v <= 0.0 for v in t))
        assert cards.bucket_of_value(round_, 1.0) == len(t)
    for hole in itertools.combinations(range(0, 52, 5), 2):
        assert cards.bucket(0, hole, ()) == holdem.preflop_class(hole)


def test_bucket_rejects_bad_cards_and_caches(cards: HoldemCards) -> None:
    for round_, hole, board, match in [
        (1, [0, 1], [2, 3], "3 board cards in round 1"),
        (0, [0, 1], [2, 3, 4], "0 board cards in round 0"),
        (4, [0, 1], [2, 3, 4, 5, 6], "round 0..3"),
        (3, [0, 1], [2, 3, 4, 5, 5], "distinct"),
        (2, [0, 60], [2, 3, 4, 5], "0..51"),
    ]:
        with pytest.raises(ValueError, match=match):
            cards.bucket(round_, hole, board)
    rng = random.Random(8)
    for _ in range(5000):
        c = rng.sample(range(52), 7)
        assert cards.bucket(3, c[:2], c[2:]) == cards.bucket(3, tuple(c[:2]), tuple(c[2:]))
    assert len(cards._cache) <= 4096


# --------------------------------------------------------------------------- spec


def test_spec_round_trip(nl2: Game, cards: HoldemCards) -> None:
    spec = cards.spec
    assert spec["kind"] == "holdem" and spec["metric"] == "ehs2"
    assert spec["buckets"] == [169, 8, 6, 5] and spec["samples"] == 400 and spec["seed"] == 7
    assert spec["flop_rivers_per_turn"] == holdem.FLOP_RIVERS_PER_TURN
    for text in (json.loads(json.dumps(spec)), msgpack.unpackb(msgpack.packb(spec))):
        rebuilt = card_abstraction_from_spec(nl2, text)
        assert isinstance(rebuilt, HoldemCards)
        assert rebuilt.spec == spec and rebuilt.buckets == cards.buckets
        rng = random.Random(9)
        for round_ in (0, 1, 2, 3):
            for _ in range(10):
                c = rng.sample(range(52), 2 + holdem.BOARD_SIZES[round_])
                assert rebuilt.bucket(round_, c[:2], c[2:]) == cards.bucket(round_, c[:2], c[2:])
    minimal = {k: spec[k] for k in ("kind", "buckets", "metric", "thresholds")}
    assert card_abstraction_from_spec(nl2, minimal).buckets == cards.buckets


def _mutated(spec: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    spec = json.loads(json.dumps(spec))
    target = spec
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return spec


@pytest.mark.parametrize(
    ("path", "value", "match"),
    [
        (("kind",), "holdem2", "kind 'lossless', 'blind', 'holdem'"),
        (("metric",), "ehs", "metric 'ehs2', got 'ehs'"),
        (("metric",), KeyError, "key 'metric', it is missing"),
        (("thresholds",), KeyError, "key 'thresholds', it is missing"),
        (("buckets",), [169, 8, 6], r"buckets \[169, n1, n2, n3\]"),
        (("buckets",), [170, 8, 6, 5], "expected 169 preflop buckets"),
        (("buckets",), [169, 8, 6, 0], "positive bucket counts"),
        (("buckets",), [169, 8, 6, "5"], r"buckets \[169, n1, n2, n3\] \(ints\)"),
        (("buckets",), [169, 9, 6, 5], "expected 8 thresholds for round 1 .9 buckets., got 7"),
        (("thresholds",), [[0.1], [0.2]], "3 lists"),
        (("thresholds", 1), "0.5", "list of thresholds for round 2"),
        (("thresholds", 0, 0), 1.5, r"threshold 0 of round 1 in \[0, 1\], got 1.5"),
        (("thresholds", 0, 0), float("nan"), r"threshold 0 of round 1 in \[0, 1\]"),
        (("thresholds", 2, 1), "x", "a number as threshold 1 of round 3"),
        (("thresholds", 0, 3), 0.0, "sorted thresholds for round 1, got 0.0 after"),
        (("samples",), -3, "'samples' to be a non-negative int"),
        (("seed",), 1.5, "'seed' to be a non-negative int"),
        (("flop_rivers_per_turn",), 0, "flop_rivers_per_turn to be an int in 1..46"),
        (("extra",), 1, "unknown \\['extra'\\]"),
    ],
)
def test_bad_specs_are_rejected(
    nl2: Game, cards: HoldemCards, path: tuple[Any, ...], value: Any, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        card_abstraction_from_spec(nl2, _mutated(cards.spec, path, value))


def test_spec_for_another_game_is_rejected(leduc: Game, cards: HoldemCards) -> None:
    with pytest.raises(ValueError, match=r"expected a hold'em game \(numRanks = 13\)"):
        card_abstraction_from_spec(leduc, cards.spec)
    limit = load_game("holdem.limit.2p.reverse_blinds.game")
    assert card_abstraction_from_spec(limit, cards.spec).buckets == cards.buckets


def test_build_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="samples to be an int >= the largest postflop bucket"):
        HoldemCards.build((169, 50, 50, 50), samples=10)
    with pytest.raises(ValueError, match="169 preflop buckets"):
        HoldemCards.build((100, 5, 5, 5), samples=10)
    with pytest.raises(ValueError, match="seed"):
        HoldemCards.build((169, 5, 5, 5), samples=10, seed=2**32)


# --------------------------------------------------------------------------- preflop equity


def test_small_preflop_equity_kernel_against_an_oracle() -> None:
    """The kernel's Monte-Carlo equity vs a Python one (rank_hand_fast), a few classes."""
    classes = [168, 0, 1]  # AA, 22, 32o
    samples = 300 if NO_JIT else 4000
    holes = holdem._class_representatives()[classes]
    out = np.zeros(len(classes))
    holdem._preflop_equity_kernel(
        holes, samples, 5, *handeval.TABLES_7, out,
    )  # fmt: skip
    rng = random.Random(5)
    for (h0, h1), got in zip(holes.tolist(), out.tolist(), strict=True):
        rest = [c for c in range(52) if c not in (h0, h1)]
        score = 0
        for _ in range(samples):
            o0, o1, *board = rng.sample(rest, 7)
            ours, theirs = rank_hand_fast([h0, h1, *board]), rank_hand_fast([o0, o1, *board])
            score += 2 if ours > theirs else 1 if ours == theirs else 0
        # two independent estimates, each with standard error <= 0.5 / sqrt(samples)
        assert abs(got - score / (2 * samples)) <= 4 * math.sqrt(2) * 0.5 / math.sqrt(samples)


def test_preflop_equity_table() -> None:
    table = holdem.preflop_equity_table()
    assert len(table) == 169 and table is holdem.preflop_equity_table()  # computed once
    known = {"AA": 0.852, "KK": 0.824, "AKs": 0.670, "AKo": 0.654, "22": 0.503, "72o": 0.346}
    index = {holdem.preflop_class_name(i): i for i in range(169)}
    for name, value in known.items():  # published values; standard error here <= 0.0036
        assert abs(table[index[name]] - value) <= 0.015, name
    pairs = [table[14 * r] for r in range(13)]
    assert pairs == sorted(pairs)
    for hi in range(13):
        for lo in range(hi):
            assert table[13 * hi + lo] > table[13 * lo + hi]  # suited beats offsuit


# --------------------------------------------------------------------------- builtin:equity


def _random_states(game: Game, policy: Any, hands: int, seed: int) -> int:
    """Play ``hands`` random hands; at every decision ``policy`` must pick a legal action.

    The action taken is the policy's half of the time and a random legal one otherwise,
    so the states cover raises of every size. Returns the number of decisions checked.
    """
    rng = random.Random(seed)
    decisions = 0
    players = game.num_players
    for hand in range(hands):
        deck = rng.sample(range(52), 2 * players + 5)
        holes = tuple(tuple(deck[2 * p : 2 * p + 2]) for p in range(players))
        board = tuple(deck[2 * players :])
        state = BettingState.initial(game)
        while not state.finished:
            ms = MatchState(state.player, hand, state, holes,
                            board[: game.board_cards_through(state.round)])  # fmt: skip
            action = policy.act(ms)
            assert state.is_legal(action), (str(state), action)
            assert policy.act(ms) == action  # deterministic
            decisions += 1
            if rng.random() < 0.5:
                kind = rng.choice(state.legal_actions())
                bounds = state.raise_bounds()
                if kind is ActionKind.RAISE and bounds is not None and game.is_nolimit:
                    action = Action(kind, rng.randint(*bounds))
                else:
                    action = Action(kind, 0)
            state = state.apply(action)
    return decisions


@pytest.mark.parametrize(
    ("game_name", "hands", "seed"),
    [("holdem.nolimit.2p.reverse_blinds.game", 1200, 1),
     ("holdem.limit.2p.reverse_blinds.game", 300, 2), ("holdem.nolimit.3p.game", 200, 3)],
)  # fmt: skip
def test_equity_policy_is_always_legal(game_name: str, hands: int, seed: int) -> None:
    from agent.builtin import EquityPolicy

    game = load_game(game_name)
    decisions = _random_states(game, EquityPolicy(game), hands, seed=seed)
    assert decisions >= 2 * hands


def test_equity_policy_thresholds(nl2: Game) -> None:
    from agent.agents import make_policy
    from agent.builtin import EquityPolicy

    policy = make_policy("builtin:equity", nl2)
    assert isinstance(policy, EquityPolicy)
    state = BettingState.initial(nl2)
    first = state.player

    def view(state: BettingState, hole: str, board: str = "") -> MatchState:
        holes: list[tuple[int, ...]] = [(), ()]
        holes[state.player] = parse_cards(hole)
        return MatchState(state.player, 0, state, tuple(holes), parse_cards(board))

    action = policy.act(view(state, "AhAs"))  # pot-sized raise: pot 150, call 50 -> to 300
    assert action.kind is ActionKind.RAISE and action.raise_to == 300
    assert policy.act(view(state, "7h2c")).kind is ActionKind.FOLD
    assert policy.act(view(state, "Th9h")).kind is ActionKind.CALL
    after_call = state.apply(Action(ActionKind.CALL, 0))
    assert after_call.player != first
    assert policy.act(view(after_call, "7h2c")).kind is ActionKind.CALL  # a free check
    all_in = state.apply(Action(ActionKind.RAISE, nl2.stack[first]))
    assert policy.act(view(all_in, "AhAs")).kind is ActionKind.CALL  # no raise left
    assert policy.equity(parse_cards("AhAs"), ()) == pytest.approx(0.852, abs=0.015)
    river = policy.equity(parse_cards("AsKs"), parse_cards("QsJsTs2h3d"))
    assert river == 1.0
    with pytest.raises(ValueError, match="hold'em"):
        make_policy("builtin:equity", load_game("leduc.limit.2p.game"))


# --------------------------------------------------------------------------- no JIT on the clock


@pytest.mark.skipif(NO_JIT, reason="needs the JIT")
def test_no_compile_after_warm_up(nl2: Game, cards: HoldemCards) -> None:
    """After warm_up, deciding compiles nothing: every kernel signature already exists."""
    from agent.builtin import EquityPolicy

    holdem.warm_up()
    policy = EquityPolicy(nl2)
    dispatchers = {name: f for name, f in vars(holdem).items() if hasattr(f, "signatures")}
    assert "river_score" in dispatchers and "strength_moments" in dispatchers
    before = {name: len(f.signatures) for name, f in dispatchers.items()}
    rng = random.Random(10)
    for round_ in (0, 1, 2, 3):
        c = rng.sample(range(52), 2 + holdem.BOARD_SIZES[round_])
        cards.bucket(round_, c[:2], c[2:])
        cards.bucket(round_, tuple(np.int64(x) for x in c[:2]), c[2:])  # type: ignore[misc]
        policy.equity(c[:2], c[2:])
    assert {name: len(f.signatures) for name, f in dispatchers.items()} == before


# --------------------------------------------------------------------------- no-JIT run


def test_small_kernels_run_in_the_expected_mode() -> None:
    assert hasattr(holdem.river_score, "py_func") != NO_JIT


@pytest.mark.skipif(NO_JIT, reason="already running without the JIT")
def test_kernels_as_plain_python() -> None:
    """The ``small`` tests again with NUMBA_DISABLE_JIT=1: the kernels' Python semantics."""
    run_without_jit(__file__)
