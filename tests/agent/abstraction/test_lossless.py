"""Lossless card abstraction (:class:`agent.abstraction.buckets.LosslessCards`) against a
plain-Python oracle: an observation's canonical form is the smallest, over the 24
relabellings of the four suits, of its groups each sorted; the buckets number the distinct
forms in sorted order."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence

import pytest

from agent.abstraction.buckets import LosslessCards, lossless_counts
from agent.acpc.cards import deck_for
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from tests.support import ROOT

Form = tuple[tuple[int, ...], ...]


def oracle_form(groups: Sequence[Sequence[int]]) -> Form:
    return min(tuple(tuple(sorted((c // 4) * 4 + perm[c % 4] for c in g)) for g in groups)
               for perm in itertools.permutations(range(4)))


def shape(game: Game, round_: int) -> list[int]:
    return [game.num_hole_cards] + [game.num_board_cards[r] for r in range(round_ + 1)]


def every_observation(game: Game, round_: int) -> list[list[tuple[int, ...]]]:
    def deal(left: tuple[int, ...], sizes: list[int]) -> list[list[tuple[int, ...]]]:
        if not sizes:
            return [[]]
        return [[combo, *rest] for combo in itertools.combinations(left, sizes[0])
                for rest in deal(tuple(c for c in left if c not in combo), sizes[1:])]
    return deal(tuple(deck_for(game)), shape(game, round_))


@pytest.fixture(scope="module")
def royal() -> LosslessCards:
    return LosslessCards(load_game("royal.nolimit.2p.game"))


def query(cards: LosslessCards, round_: int, groups: Sequence[Sequence[int]],
          rng: random.Random) -> int:
    hole = list(groups[0])
    rng.shuffle(hole)  # the order within a group is free
    return cards.bucket(round_, hole, [c for g in groups[1:] for c in g])


@pytest.mark.parametrize("name", ["kuhn.limit.3p.game", "leduc.nolimit.2p.game",
                                  "tests/data/tiny3.limit.3p.game",
                                  "tests/data/royal_tiny.nolimit.2p.game"])
def test_every_observation_gets_the_rank_of_its_canonical_form(name: str) -> None:
    game = load_game(ROOT / name if name.startswith("tests/") else name)
    cards, rng = LosslessCards(game), random.Random(0)
    assert cards.buckets == lossless_counts(game)
    for r in range(game.num_rounds):
        observations = every_observation(game, r)
        forms = sorted({oracle_form(obs) for obs in observations})
        assert len(forms) == cards.buckets[r]
        rank = {form: i for i, form in enumerate(forms)}
        for obs in observations:
            assert query(cards, r, obs, rng) == rank[oracle_form(obs)]


def test_royal_buckets_follow_the_order_of_the_canonical_forms(royal: LosslessCards) -> None:
    """Royal's flop has 155,040 observations (the oracle would take seconds of Python):
    its preflop in full, and 1,000 seeded flop observations whose buckets must order as
    their forms do (equal exactly when the forms are), suit relabellings included."""
    game, cards, rng = royal.game, royal, random.Random(1)
    assert cards.buckets == lossless_counts(game) == (25, 7760)
    pre = every_observation(game, 0)
    forms = sorted({oracle_form(obs) for obs in pre})
    assert [query(cards, 0, obs, rng) for obs in pre] == [forms.index(oracle_form(obs))
                                                          for obs in pre]
    deck, seen = deck_for(game), []
    for _ in range(1_000):
        dealt = rng.sample(deck, 5)
        obs = [tuple(dealt[:2]), tuple(dealt[2:])]
        perm = rng.sample(range(4), 4)
        relabelled = [tuple((c // 4) * 4 + perm[c % 4] for c in g) for g in obs]
        bucket = query(cards, 1, obs, rng)
        assert query(cards, 1, relabelled, rng) == bucket
        seen.append((oracle_form(obs), bucket))
    seen.sort()
    for (form_a, a), (form_b, b) in itertools.pairwise(seen):
        assert (a == b) if form_a == form_b else (a < b)
    assert all(0 <= b < 7760 for _, b in seen)


@pytest.mark.parametrize(("round_", "hole", "board"), [
    (1, [51], [47, 43, 39, 35]),   # 1 + 4 cards: the same five as a real flop, grouped wrongly
    (1, [51, 47], [43, 39]),       # a short board
    (1, [51, 51], [43, 39, 35]),   # a card twice
    (1, [51, 0], [43, 39, 35]),    # a card not in Royal's deck
    (1, [51, 64], [43, 39, 35]),   # not a card
    (1, [51, -1], [43, 39, 35]),
    (2, [51, 47], [43, 39, 35]),   # no such round
    (-1, [51, 47], []),
])
def test_cards_not_of_the_game_are_one_line(royal: LosslessCards, round_: int,
                                            hole: list[int], board: list[int]) -> None:
    with pytest.raises(AbstractionError, match=r"^expected cards of this game for round "
                       r"-?\d, got hole \[.*\] board \[.*\]$"):
        royal.bucket(round_, hole, board)
