"""The potential-aware abstraction's agent side (:mod:`agent.abstraction.holdem_pa`).

A full-deck :class:`PotentialAwareCards` from synthetic parts (a flop table of board
and hole ranks, random turn centroids: the decision-time paths do not care how they were
made; the builder's numbers are checked against an oracle in
``tests/strategies/test_holdem_pa.py``):

* turn clusters computed on the fly at decision time == the builder's turn pass (the same
  kernel the builder's turn table comes from) on the boards of random deals;
* river clusters == the thresholds applied to the exact score of the by-board kernel;
* every round invariant under suit permutation and card order;
* ``bucket_deals`` == ``bucket`` in all 4 rounds, imperfect and perfect recall;
* ``board_buckets`` (every hole on one board at once) == ``bucket`` hole by hole, both
  recalls;
* the spec round trip through ``card_abstraction_from_spec`` (JSON and msgpack), and bad
  specs, cards and shapes as one-line errors.
"""

from __future__ import annotations

import copy
import itertools
import json
import random
from typing import Any

import msgpack
import numpy as np
import pytest

from agent.abstraction import holdem_pa as pa
from agent.abstraction.buckets import card_abstraction_from_spec
from agent.acpc.errors import AbstractionError
from agent.acpc.gamefiles import load_game

CLUSTERS = (8, 6, 5, 4)
BINS = 20
GAME = load_game("holdem.nolimit.2p.reverse_blinds.game")


def make_cards(
    recall: str, turn_table: Any = None, clusters: tuple[int, int, int, int] = CLUSTERS
) -> pa.PotentialAwareCards:
    """Synthetic full-deck parts (also used by the loopback test)."""
    rng = np.random.default_rng(0)
    n_boards = pa.board_tables(13, 3).boards.shape[0]
    # invariant under the suit permutations that fix a canonical board, as a built table is
    ranks = np.array([(a // 4) + 3 * (b // 4) for b in range(52) for a in range(b)])
    flop = ((np.arange(n_boards)[:, None] + ranks[None, :]) % clusters[1]).astype(np.uint8)
    hists = rng.multinomial(46, np.ones(BINS) / BINS, size=clusters[2])
    weights = np.array([1, 2, 3, 1, 2] * clusters[2], np.int64)[: clusters[2]]
    sums = np.cumsum(hists, axis=1)[:, :-1] * weights[:, None]
    thresholds = [int(1980 * (i + 1) / clusters[3]) for i in range(clusters[3] - 1)]
    return pa.PotentialAwareCards(
        clusters=clusters, recall=recall, bins=BINS,
        preflop=[c % clusters[0] for c in range(169)], flop=flop, turn_sums=sums,
        turn_weights=weights, river_thresholds=thresholds, samples=10, seed=1,
        turn_table=turn_table,
    )  # fmt: skip


@pytest.fixture(scope="module")
def deals() -> np.ndarray:
    rng = random.Random(5)
    return np.array([rng.sample(range(52), 7) for _ in range(40)], np.int64)


@pytest.fixture(scope="module")
def turn_table(deals: np.ndarray) -> np.ndarray:
    """The builder's turn pass on the canonical boards of ``deals`` only."""
    t4 = pa.board_tables(13, 4)
    ids = sorted({
        int(t4.cid_of[t4.canon[pa.comb_index(np.sort(d[2:6]), 4)]]) for d in deals
    })
    cards = make_cards("imperfect")
    return pa.turn_pass(13, BINS, sums=cards._turn_sums, weights=cards._turn_weights,
                        board_ids=np.array(ids, np.int64)).table


def split(deal: np.ndarray) -> tuple[list[int], list[int]]:
    return [int(c) for c in deal[:2]], [int(c) for c in deal[2:]]


def test_turn_on_the_fly_equals_the_builders_turn_pass(
    deals: np.ndarray, turn_table: np.ndarray
) -> None:
    cards = make_cards("imperfect")
    t4 = pa.board_tables(13, 4)
    seen = set()
    for deal in deals:
        hole, board = split(deal)
        idx = pa.comb_index(np.array(sorted(board[:4]), np.int64), 4)
        perm = pa.SUIT_PERMS[t4.perm_of[idx]]
        mapped = [(c // 4) * 4 + perm[c % 4] for c in hole]
        want = int(turn_table[t4.cid_of[t4.canon[idx]], pa._pair_id(*mapped)])
        assert cards.bucket(2, hole, board[:4]) == want
        seen.add(want)
    assert len(seen) >= 3  # not a degenerate abstraction


def test_river_cluster_is_the_thresholds_of_the_exact_score(deals: np.ndarray) -> None:
    cards = make_cards("imperfect")
    for deal in deals[:10]:
        hole, board = split(deal)
        score = int(pa.river_scores_on_board(board)[pa._pair_id(*hole)])
        assert cards.bucket(3, hole, board) == sum(t <= score for t in (495, 990, 1485))


def test_every_round_is_invariant_under_suit_permutation_and_card_order(
    deals: np.ndarray,
) -> None:
    cards = make_cards("perfect")
    rng = random.Random(2)
    for deal in deals[:15]:
        hole, board = split(deal)
        perm = rng.choice(list(itertools.permutations(range(4))))
        h2 = [(c // 4) * 4 + perm[c % 4] for c in hole][::-1]
        b2 = [(c // 4) * 4 + perm[c % 4] for c in board]
        flop, rest = b2[:3], b2[3:]
        rng.shuffle(flop)
        b2 = flop + rest
        for r, size in enumerate((0, 3, 4, 5)):
            assert cards.bucket(r, hole, board[:size]) == cards.bucket(r, h2, b2[:size])


@pytest.mark.parametrize("recall", ["imperfect", "perfect"])
def test_bucket_deals_equals_bucket(
    recall: str, deals: np.ndarray, turn_table: np.ndarray
) -> None:
    cards = make_cards(recall, turn_table)
    got = cards.bucket_deals(deals[:, :2], deals[:, 2:])
    assert got.dtype == np.uint16 and got.shape == (len(deals), 4)
    for i, deal in enumerate(deals):
        hole, board = split(deal)
        want = [cards.bucket(r, hole, board[:size]) for r, size in enumerate((0, 3, 4, 5))]
        assert got[i].tolist() == want
    if recall == "perfect":
        assert cards.buckets == (8, 48, 240, 960)
        row = got[0].tolist()
        assert row[1] // CLUSTERS[1] == row[0] and row[3] // CLUSTERS[3] == row[2]
    else:
        assert cards.buckets == CLUSTERS
    assert (got < np.array(cards.buckets)).all()


@pytest.mark.parametrize("recall", ["imperfect", "perfect"])
def test_board_buckets_equal_bucket_hole_by_hole(recall: str, deals: np.ndarray) -> None:
    """Every hole's bucket on a board at once (sampled LBR's fast path) == ``bucket``."""
    cards = make_cards(recall)
    pairs = [(a, b) for b in range(52) for a in range(b)]
    rng = random.Random(4)
    for deal in deals[:2]:
        board = [int(c) for c in deal[2:]]
        for r, size in enumerate((0, 3, 4, 5)):
            got = cards.board_buckets(r, board[:size])
            assert got.shape == (1326,)
            touching = [i for i, p in enumerate(pairs) if set(p) & set(board[:size])]
            assert (got[touching] == -1).all() and (got >= 0).sum() == 1326 - len(touching)
            for i in rng.sample(sorted(set(range(1326)) - set(touching)), 40):
                assert got[i] == cards.bucket(r, list(pairs[i]), board[:size])
    with pytest.raises(AbstractionError, match="expected 4 distinct board cards"):
        cards.board_buckets(2, [0, 1, 2])


@pytest.mark.parametrize("fmt", ["json", "msgpack"])
def test_spec_round_trip(fmt: str, deals: np.ndarray) -> None:
    cards = make_cards("perfect")
    spec = cards.spec
    data = (json.loads(json.dumps(spec)) if fmt == "json"
            else msgpack.unpackb(msgpack.packb(spec, use_bin_type=True), raw=False))
    again = card_abstraction_from_spec(GAME, data)
    assert isinstance(again, pa.PotentialAwareCards)
    assert again.spec == spec
    for deal in deals[:10]:
        hole, board = split(deal)
        for r, size in enumerate((0, 3, 4, 5)):
            assert again.bucket(r, hole, board[:size]) == cards.bucket(r, hole, board[:size])


def _spec_with(spec: dict[str, Any], **changes: Any) -> dict[str, Any]:
    for key, value in changes.items():
        if value is None:
            del spec[key]
        else:
            spec[key] = value
    return spec


def _bad_flop(spec: dict[str, Any], field: str, value: Any) -> dict[str, Any]:
    spec["flop"] = dict(spec["flop"], **{field: value})
    return spec


# Each case names its change; the spec is built in the test, not at collection (building the
# synthetic cards compiles the potential-aware kernels: every xdist worker would wait for
# that before running its first test).
@pytest.mark.parametrize(
    ("change", "match"),
    [
        ((_spec_with, {"kind": "holdem"}), "ehs2|metric|holdem"),
        ((_spec_with, {"extra": 1}), "unknown"),
        ((_spec_with, {"bins": None}), "'bins'"),
        ((_spec_with, {"recall": "partial"}), "recall"),
        ((_spec_with, {"clusters": [8, 6, 5]}), "cluster counts"),
        ((_spec_with, {"turn_weights": [1, 2, 3]}), "turn_weights"),
        ((_spec_with, {"river_thresholds": [1485, 990, 495]}), "sorted river_thresholds"),
        ((_spec_with, {"preflop": [9] * 169}), "preflop"),
        ((_bad_flop, {"field": "sha256", "value": "0" * 64}), "sha256"),
        ((_bad_flop, {"field": "shape", "value": [3, 3]}), "shape"),
        ((_bad_flop, {"field": "dtype", "value": "float32"}), "dtype"),
        ((_bad_flop, {"field": "zlib_b64", "value": "not base64!"}), "zlib_b64"),
        ((_spec_with, {"buckets": [8, 6, 5, 5]}), "expected buckets"),
    ],
    ids=lambda v: v if isinstance(v, str) else str(v[1].get("field", next(iter(v[1])))),
)
def test_bad_specs_are_one_line_errors(change: tuple[Any, dict[str, Any]], match: str,
                                       imperfect_spec: dict[str, Any]) -> None:
    make, changes = change
    spec = make(copy.deepcopy(imperfect_spec), **changes)
    with pytest.raises(AbstractionError, match=match) as info:
        card_abstraction_from_spec(GAME, spec)
    assert "\n" not in str(info.value)


@pytest.fixture(scope="module")
def imperfect_spec() -> dict[str, Any]:
    """The synthetic cards' spec, built once for the cases above."""
    return make_cards("imperfect").spec


def test_flop_values_out_of_range_are_refused() -> None:
    cards = make_cards("imperfect")
    flop = cards._flop.copy()
    flop[0, 0] = CLUSTERS[1]
    spec = cards.spec
    spec["flop"] = pa.encode_table(flop)
    with pytest.raises(AbstractionError, match="values below 6"):
        card_abstraction_from_spec(GAME, spec)


def test_other_games_and_bad_cards_are_one_line_errors() -> None:
    cards = make_cards("imperfect")
    with pytest.raises(AbstractionError, match="hold'em"):
        card_abstraction_from_spec(load_game("leduc.limit.2p.game"), cards.spec)
    with pytest.raises(AbstractionError, match="board cards in round 1"):
        cards.bucket(1, [0, 1], [2, 3])
    with pytest.raises(AbstractionError, match="distinct"):
        cards.bucket(2, [0, 1], [1, 3, 4, 5])
    with pytest.raises(AbstractionError, match=r"round 0\.\.3"):
        cards.bucket(4, [0, 1], [])
    with pytest.raises(AbstractionError, match=r"holes \(N, 2\)"):
        cards.bucket_deals(np.zeros((3, 3)), np.zeros((3, 5)))
    with pytest.raises(AbstractionError, match="7 distinct cards per deal, deal 1"):
        cards.bucket_deals([[0, 1], [2, 2]], [[3, 4, 5, 6, 7], [3, 4, 5, 6, 7]])
    with pytest.raises(AbstractionError, match=r"0\.\.51"):
        cards.bucket_deals([[0, 52]], [[3, 4, 5, 6, 7]])


def test_turn_table_cache_writes_reads_and_checks(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, turn_table: np.ndarray, deals: np.ndarray
) -> None:
    calls = []

    def fake_pass(*args: Any, **kwargs: Any) -> pa.TurnPass:
        calls.append(1)
        return pa.TurnPass(np.zeros((0, 1), np.int64), np.zeros(0, np.int64),
                           np.zeros(1, np.int64), turn_table, np.zeros((0, 0), np.int32))

    monkeypatch.setattr(pa, "turn_pass", fake_pass)
    path = tmp_path / "turn.npz"
    first = make_cards("imperfect")
    want = first.bucket_deals(deals[:, :2], deals[:, 2:], turn_cache=path)
    assert path.exists() and calls == [1]
    again = make_cards("imperfect")
    assert (again.turn_table(cache=path) == turn_table).all() and calls == [1]
    assert (again.bucket_deals(deals[:, :2], deals[:, 2:]) == want).all()
    other = make_cards("imperfect", clusters=(8, 6, 4, 4))
    with pytest.raises(AbstractionError, match="turn table of centroids"):
        other.turn_table(cache=path)
    np.savez(path, key=np.array(first.turn_key()), table=turn_table[:5])
    with pytest.raises(AbstractionError, match="uint16 turn table of shape"):
        make_cards("imperfect").turn_table(cache=path)
    path.write_bytes(b"not an npz")
    with pytest.raises(AbstractionError, match=r"turn table \.npz"):
        make_cards("imperfect").turn_table(cache=path)
