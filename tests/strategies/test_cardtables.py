"""Strength tables over the lossless hold'em classes (:mod:`strategies.cards.tables`).

* a class's values are, bit for bit, ``hand_strength_moments`` of any hand in it (random
  hands of every postflop round, mapped through the indexer), and its size the indexer's;
* the builder gives the same table for any number of workers and chunking;
* exact weighted thresholds equal the sampled rule on the repeated list, shares are the
  counts per bucket; bad weights and thresholds are one-line errors;
* the cache: save/load round trip, every corruption rejected, a cached table not rebuilt;
* ``acpc-strategy cards`` on a cached table: the figures printed and written as JSON, the
  bundled file's shares, and its errors.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from agent.abstraction import holdem_buckets as holdem
from agent.abstraction.isomorphism import holdem_indexer
from agent.data import strategy_path
from strategies.cards import tables as cardtables
from strategies.cards.tables import (
    StrengthTable,
    bucket_shares,
    build_strength_table,
    cached_strength_table,
    exact_thresholds,
    load_strength_table,
    save_strength_table,
    strength_values,
)
from strategies.cli import main

BUNDLED = strategy_path("holdem.nolimit.2p.strat")


@pytest.mark.parametrize("round_", [1, 2, 3])
def test_class_values_are_the_agents_values(round_: int) -> None:
    indexer = holdem_indexer("board", round_)
    rng = random.Random(round_)
    for _ in range(60):
        hand = rng.sample(range(52), 2 + holdem.BOARD_SIZES[round_])
        index = indexer.index(hand)
        ehs, ehs2, hands = strength_values(round_, index, index + 1)
        assert (float(ehs[0]), float(ehs2[0])) == holdem.hand_strength_moments(hand[:2], hand[2:])
        assert int(hands[0]) == indexer.multiplicity(1, index)


def test_flop_estimator_parameter_is_used() -> None:
    hand = [48, 49, 0, 17, 34]
    index = holdem_indexer("board", 1).index(hand)
    for k in (1, 46):
        _, ehs2, _ = strength_values(1, index, index + 1, flop_rivers_per_turn=k)
        assert float(ehs2[0]) == holdem.ehs2(hand[:2], hand[2:], flop_rivers_per_turn=k)


def test_builder_is_the_same_for_any_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cardtables, "_CHUNK", 700)
    seen: list[tuple[int, int]] = []
    one = build_strength_table(2, workers=1, stop=3000, progress=lambda d, t: seen.append((d, t)))
    two = build_strength_table(2, workers=2, stop=3000)
    ehs, ehs2, hands = strength_values(2, 0, 3000)
    for table in (one, two):
        assert table.classes == 3000
        assert np.array_equal(table.ehs, ehs) and np.array_equal(table.ehs2, ehs2)
        assert np.array_equal(table.hands, hands)
    assert seen == [(700, 3000), (1400, 3000), (2100, 3000), (2800, 3000), (3000, 3000)]
    assert one.total_hands == int(
        holdem_indexer("board", 2).unindex_batch(1, np.arange(3000))[1].sum()
    )


def test_exact_thresholds_are_the_rule_on_the_repeated_list() -> None:
    rng = np.random.default_rng(3)
    for _ in range(30):
        values = rng.integers(0, 40, rng.integers(1, 200)) / 40  # many ties
        weights = rng.integers(0, 25, values.size)
        weights[0] = max(weights[0], 1)
        total = int(weights.sum())
        for n in sorted({1, 2, 3, 7, min(total, 50)}):
            if n > total:
                continue
            repeated = np.repeat(values, weights)
            assert exact_thresholds(values, weights, n) == holdem.percentile_thresholds(repeated, n)
            t = holdem.percentile_thresholds(repeated, n)
            shares = bucket_shares(values, weights, t)
            counts = np.bincount(np.searchsorted(t, repeated, side="right"), minlength=n)
            assert np.allclose(shares, counts / total) and shares.shape == (n,)


def test_bad_weights_and_thresholds() -> None:
    cases = [
        (lambda: exact_thresholds([0.1, 0.2], [1], 2), "expected one non-negative integer weight"),
        (lambda: exact_thresholds([0.1, 0.2], [1.0, 2.0], 2), "dtype float64"),
        (lambda: exact_thresholds([0.1, 0.2], [1, -1], 1), "expected one non-negative"),
        (lambda: exact_thresholds([0.1, 0.2], [1, 1], 3), "weighted values for 3 buckets, got 2"),
        (lambda: exact_thresholds([0.1], [1], 0), "for 0 buckets"),
        (
            lambda: bucket_shares([0.1], [1], [0.5, 0.2]),
            "expected sorted thresholds, got [0.5, 0.2]",
        ),
        (lambda: bucket_shares([0.1], [0], [0.5]), "expected some positive weight"),
        (lambda: strength_values(4, 0, 1), "expected a postflop round 1..3, got 4"),
        (lambda: strength_values(1, 5, 2), "expected 0 <= start <= stop <= 1286792 (the flop"),
        (lambda: strength_values(1, 0, 1, flop_rivers_per_turn=47), "flop_rivers_per_turn"),
        (lambda: build_strength_table(1, workers=0), "expected workers to be a positive int"),
        (lambda: build_strength_table(1, stop=0), "expected stop in 1..1286792, got 0"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=r"^expected") as info:
            call()
        assert message in str(info.value), str(info.value)


def fake_flop_table(k: int = holdem.FLOP_RIVERS_PER_TURN) -> StrengthTable:
    """A valid-looking full flop table (random values, the true class sizes), built fast."""
    indexer = holdem_indexer("board", 1)
    hands = indexer.unindex_batch(1, np.arange(indexer.size(1)))[1].astype(np.uint8)
    rng = np.random.default_rng(0)
    ehs = rng.random(indexer.size(1))
    ehs2 = ehs * ehs + (ehs - ehs * ehs) * rng.random(indexer.size(1))
    return StrengthTable(1, k, ehs, ehs2, hands)


@pytest.fixture(scope="module")
def fake_flop() -> StrengthTable:
    return fake_flop_table()


def test_cache_round_trip_and_corruption(tmp_path: Path, fake_flop: StrengthTable) -> None:
    path = save_strength_table(fake_flop, tmp_path / "t.npz")
    loaded = load_strength_table(path, 1)
    assert loaded is not None
    assert np.array_equal(loaded.ehs, fake_flop.ehs) and np.array_equal(
        loaded.hands, fake_flop.hands
    )
    assert load_strength_table(path, 1, flop_rivers_per_turn=5) is None  # another estimator
    assert load_strength_table(path, 2) is None
    bad_hands = fake_flop.hands.copy()
    bad_hands[np.flatnonzero(bad_hands == 24)[0]] = 12
    bad_values = fake_flop.ehs2.copy()
    bad_values[7] = np.nan
    for ehs2, hands in ((bad_values, fake_flop.hands), (fake_flop.ehs2, bad_hands)):
        broken = StrengthTable(1, fake_flop.flop_rivers_per_turn, fake_flop.ehs, ehs2, hands)
        assert load_strength_table(save_strength_table(broken, tmp_path / "b.npz"), 1) is None
    truncated = tmp_path / "cut.npz"
    truncated.write_bytes(path.read_bytes()[:1000])
    assert load_strength_table(truncated, 1) is None
    assert load_strength_table(tmp_path / "missing.npz", 1) is None


def test_cached_table_is_not_rebuilt(tmp_path: Path, fake_flop: StrengthTable,
                                     monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    save_strength_table(fake_flop, tmp_path / f"holdem-strength-{fake_flop.key}.npz")

    def refuse(*args: object, **kwargs: object) -> StrengthTable:
        raise AssertionError("rebuilt a cached table")

    monkeypatch.setattr(cardtables, "build_strength_table", refuse)
    table, path, cached = cached_strength_table(1, directory=tmp_path)
    assert cached and path.parent == tmp_path and np.array_equal(table.ehs2, fake_flop.ehs2)


def test_cards_command(
    tmp_path: Path,
    fake_flop: StrengthTable,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path))
    save_strength_table(fake_flop, tmp_path / f"holdem-strength-{fake_flop.key}.npz")
    out_json = tmp_path / "cards.json"
    assert main(["cards", "--round", "flop", "--buckets", "10", "--json", str(out_json)]) == 0
    text = capsys.readouterr().out
    assert "flop: 1,286,792 classes, 25,989,600 hands; E[HS^2] table from the cache" in text
    assert "exact thresholds for 10 buckets" in text
    report = json.loads(out_json.read_text())["flop"]
    assert report["thresholds"] == exact_thresholds(fake_flop.ehs2, fake_flop.hands, 10)
    assert report["hands"] == 25_989_600 and len(report["shares"]) == 10
    if BUNDLED.exists():  # the bundled file's own flop thresholds, measured on this table
        assert "holdem.nolimit.2p.strat (50 buckets from 50,000 sampled deals): shares" in text
        from agent.strategy.fileformat import load_strategy

        theirs = load_strategy(BUNDLED).cards["thresholds"][0]
        assert report["file"]["thresholds"] == theirs
        assert (
            report["file"]["shares"]
            == bucket_shares(fake_flop.ehs2, fake_flop.hands, theirs).tolist()
        )
    assert main(["cards", "--file", "none", "--quiet"]) == 0
    assert "50 buckets" in capsys.readouterr().out


def test_cards_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    leduc = strategy_path("leduc.limit.2p.strat")
    assert main(["cards", "--file", str(leduc)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("acpc-strategy: error: expected a strategy file with a holdem card")
    assert "\n" not in err
    assert main(["cards", "--file", str(tmp_path / "nope.strat")]) == 1
    assert "acpc-strategy: error:" in capsys.readouterr().err
    assert main(["cards", "--flop-rivers-per-turn", "47", "--file", "none"]) == 1
    assert "flop_rivers_per_turn" in capsys.readouterr().err
