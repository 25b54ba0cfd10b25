"""The ``rank-groups`` and ``graft`` card abstractions: buckets, perfect recall, specs."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from agent.abstraction.buckets import LosslessCards, card_abstraction_from_spec, check_card_spec
from agent.abstraction.graft_cards import GraftCards, GraftPart
from agent.abstraction.rank_cards import RankGroupCards, deck_ranks
from agent.acpc.cards import RANK_CHARS, deck_for, rank_of
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game

GROUPS = (["Q", "K", "A"], ["QK", "A"], ["Q", "KA"])


def observations(game: Game) -> list[tuple[tuple[int], tuple[int]]]:
    deck = deck_for(game)
    return [((h,), (b,)) for h, b in itertools.permutations(deck, 2)]


def test_leduc_deck_ranks(leduc: Game) -> None:
    assert deck_ranks(leduc) == "QKA"


@pytest.mark.parametrize("groups", GROUPS)
def test_rank_groups_buckets_and_perfect_recall(leduc: Game, groups: list[str]) -> None:
    cards = RankGroupCards(leduc, groups)
    assert cards.buckets == (len(groups), 2 * len(groups))
    for hole, board in observations(leduc):
        group = next(i for i, g in enumerate(groups) if RANK_CHARS[rank_of(hole[0])] in g)
        assert cards.bucket(0, hole, ()) == group
        flop = cards.bucket(1, hole, board)
        assert flop // 2 == group  # the preflop bucket is remembered
        assert flop % 2 == (rank_of(hole[0]) == rank_of(board[0]))


@pytest.mark.parametrize("groups", GROUPS)
def test_rank_groups_spec_round_trip(leduc: Game, groups: list[str]) -> None:
    cards = RankGroupCards(leduc, groups)
    again = card_abstraction_from_spec(leduc, cards.spec)
    assert isinstance(again, RankGroupCards) and again.spec == cards.spec
    for hole, board in observations(leduc):
        assert again.bucket(1, hole, board) == cards.bucket(1, hole, board)


@pytest.mark.parametrize(("spec", "words"), [
    ({"kind": "rank-groups", "groups": ["QK", "KA"], "buckets": [2, 4]}, "distinct|exactly"),
    ({"kind": "rank-groups", "groups": ["Q", "K"], "buckets": [2, 4]}, "exactly once"),
    ({"kind": "rank-groups", "groups": ["Q", "K", "2"], "buckets": [3, 6]}, "deck"),
    ({"kind": "rank-groups", "groups": "QKA", "buckets": [1, 2]}, "list"),
    ({"kind": "rank-groups", "buckets": [3, 6]}, "groups"),
    ({"kind": "rank-groups", "groups": ["Q", "K", "A"], "buckets": [3, 5]}, "buckets"),
])
def test_rank_groups_bad_specs(leduc: Game, spec: dict[str, Any], words: str) -> None:
    with pytest.raises(AbstractionError, match=words) as info:
        card_abstraction_from_spec(leduc, spec)
    assert "\n" not in str(info.value)
    with pytest.raises(AbstractionError, match=words):  # the check of a file's spec agrees
        check_card_spec(leduc, spec)


def test_rank_groups_refuse_two_hole_cards(nl2: Game) -> None:
    with pytest.raises(AbstractionError, match="1 hole card"):
        RankGroupCards(nl2, ["23456789TJQKA"])


def graft_spec(leduc: Game, from_round: int = 1) -> dict[str, Any]:
    return {
        "kind": "graft",
        "base": RankGroupCards(leduc, ["QK", "A"]).spec,
        "grafts": [{"ranks": "K", "from_round": from_round,
                    "cards": LosslessCards(leduc).spec},
                   {"ranks": "A", "from_round": 0, "cards": LosslessCards(leduc).spec}],
        "buckets": [2 + (3 if from_round == 0 else 0) + 3, 4 + 15 + 15],
    }


@pytest.mark.parametrize("from_round", [0, 1])
def test_graft_cards_buckets(leduc: Game, from_round: int) -> None:
    cards = card_abstraction_from_spec(leduc, graft_spec(leduc, from_round))
    assert isinstance(cards, GraftCards)
    assert check_card_spec(leduc, graft_spec(leduc, from_round)) == cards.buckets
    assert cards.spec == graft_spec(leduc, from_round)
    base, lossless = cards.base, LosslessCards(leduc)
    for hole, board in observations(leduc):
        rank = RANK_CHARS[rank_of(hole[0])]
        for r, visible in ((0, ()), (1, board)):
            j = cards.graft_of(r, hole)
            want = {"Q": -1, "K": 0 if r >= from_round else -1, "A": 1}[rank]
            assert j == want
            b = cards.bucket(r, hole, visible)
            if j < 0:
                assert b == base.bucket(r, hole, visible) < base.buckets[r]
            else:
                lo, hi = cards.graft_range(r, j)
                assert b == lo + lossless.bucket(r, hole, visible) and lo <= b < hi
                assert lo >= base.buckets[r]
    if from_round == 1:
        assert cards.graft_range(0, 0) == (0, 0)


@pytest.mark.parametrize(("change", "words"), [
    (lambda s: s["grafts"][1].update(ranks="K"), "already in graft"),
    (lambda s: s["grafts"][0].update(from_round=2), "from_round"),
    (lambda s: s["grafts"][0].update(cards={"kind": "graft"}), "other than 'graft'"),
    (lambda s: s.update(base={"kind": "graft"}), "other than 'graft'"),
    (lambda s: s.update(grafts=[]), "non-empty"),
    (lambda s: s["grafts"][0].update(ranks="J"), "deck"),
    (lambda s: s.update(buckets=[1, 2]), "buckets"),
    (lambda s: s["grafts"][0]["cards"].update(buckets=[3, 9]), "buckets"),
])
def test_graft_cards_bad_specs(leduc: Game, change: Any, words: str) -> None:
    spec = graft_spec(leduc)
    change(spec)
    with pytest.raises(AbstractionError, match=words) as info:
        card_abstraction_from_spec(leduc, spec)
    assert "\n" not in str(info.value)
    with pytest.raises(AbstractionError, match=words):  # the check of a file's spec agrees
        check_card_spec(leduc, spec)


def test_graft_part_label() -> None:
    assert GraftPart("A", 1).label == "A from round 1"
    assert GraftPart("A", 1).to_json() == {"ranks": "A", "from_round": 1}
