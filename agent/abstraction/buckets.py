"""Card abstraction: map the cards a player sees to a bucket for the current round.

:class:`LosslessCards` is exact up to suit isomorphism: two observations (own hole cards,
board cards by round) that differ only by a permutation of suits get the same bucket. It
enumerates every observation of every round once, so it is for small games (Kuhn, Leduc,
small custom decks); hold'em uses :mod:`agent.abstraction.holdem_buckets` (canonical preflop classes
and E[HS^2] buckets). Buckets are numbered in the sorted order of the canonical forms, so
they are the same on every machine.

Every card abstraction has a JSON-able ``spec`` (stored in strategy files as ``cards``) with
``kind`` and ``buckets`` (per round), and :func:`card_abstraction_from_spec` rebuilds it.
Other kinds: ``holdem-pa`` (:mod:`agent.abstraction.holdem_pa`, potential-aware EMD
clusters), ``rank-groups`` (:mod:`agent.abstraction.rank_cards`, Leduc's private-rank
groups) and ``graft`` (:mod:`agent.abstraction.graft_cards`, a grafted strategy's buckets).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, Protocol

from agent.acpc.cards import deck_for
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game

MAX_OBSERVATIONS = 2_000_000


class CardAbstraction(Protocol):
    """What the policy and the solver need from a card abstraction."""

    @property
    def buckets(self) -> tuple[int, ...]:
        """Buckets per round."""
        ...

    @property
    def spec(self) -> dict[str, Any]:
        """JSON-able description (``kind``, ``buckets``, parameters)."""
        ...

    def bucket(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> int:
        """Bucket of own ``hole`` cards and the ``board`` visible in ``round_``."""
        ...


def _canonical(groups: Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    """The smallest relabelling of the suits of ``groups`` (each group sorted)."""
    best: tuple[tuple[int, ...], ...] | None = None
    for perm in itertools.permutations(range(4)):
        form = tuple(tuple(sorted((c // 4) * 4 + perm[c % 4] for c in g)) for g in groups)
        if best is None or form < best:
            best = form
    assert best is not None
    return best


class LosslessCards:
    """Suit-isomorphic lossless buckets, enumerated up front (small games only)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        deck = deck_for(game)
        self._index: list[dict[tuple[tuple[int, ...], ...], int]] = []
        counts = []
        for r in range(game.num_rounds):
            shape = [game.num_hole_cards] + [game.num_board_cards[i] for i in range(r + 1)]
            forms = set()
            for total, obs in enumerate(_observations(deck, shape), start=1):
                if total > MAX_OBSERVATIONS:
                    raise AbstractionError(
                        f"expected a small game for lossless card abstraction, round {r} has "
                        f"more than {MAX_OBSERVATIONS} observations: use bucketing"
                    )
                forms.add(_canonical(obs))
            index = {form: i for i, form in enumerate(sorted(forms))}
            self._index.append(index)
            counts.append(len(index))
        self._buckets = tuple(counts)
        self._cache: dict[tuple[int, tuple[int, ...], tuple[int, ...]], int] = {}

    @property
    def buckets(self) -> tuple[int, ...]:
        return self._buckets

    @property
    def spec(self) -> dict[str, Any]:
        return {"kind": "lossless", "buckets": list(self._buckets)}

    def bucket(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> int:
        key = (round_, tuple(hole), tuple(board))
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        game = self.game
        groups: list[Sequence[int]] = [hole]
        for r in range(round_ + 1):
            groups.append(board[game.board_start(r) : game.board_cards_through(r)])
        try:
            value = self._index[round_][_canonical(groups)]
        except (KeyError, IndexError):
            raise AbstractionError(
                f"expected cards of this game for round {round_}, got hole {list(hole)!r} "
                f"board {list(board)!r}"
            ) from None
        if len(self._cache) < 100_000:
            self._cache[key] = value
        return value


class BlindCards:
    """One bucket per round: the cards are ignored (a baseline, and for tests)."""

    def __init__(self, game: Game) -> None:
        self._buckets = (1,) * game.num_rounds

    @property
    def buckets(self) -> tuple[int, ...]:
        return self._buckets

    @property
    def spec(self) -> dict[str, Any]:
        return {"kind": "blind", "buckets": list(self._buckets)}

    def bucket(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> int:
        return 0


def _observations(deck: Sequence[int], shape: Sequence[int]) -> Any:
    """Every way to deal groups of sizes ``shape`` from ``deck`` (order within a group free)."""

    def rec(left: tuple[int, ...], i: int) -> Any:
        if i == len(shape):
            yield ()
            return
        for combo in itertools.combinations(left, shape[i]):
            rest = tuple(c for c in left if c not in combo)
            for tail in rec(rest, i + 1):
                yield (combo, *tail)

    yield from rec(tuple(deck), 0)


def card_abstraction_from_spec(game: Game, spec: dict[str, Any]) -> CardAbstraction:
    """Rebuild the card abstraction a strategy file describes.

    Raises:
        ValueError: for an unknown kind or a spec that does not match the game.
    """
    if not isinstance(spec, dict):
        raise AbstractionError(f"expected a card abstraction spec (a JSON object), got {spec!r}")
    kind = spec.get("kind")
    cards: CardAbstraction
    if kind == "lossless":
        cards = LosslessCards(game)
    elif kind == "blind":
        cards = BlindCards(game)
    elif kind == "holdem":
        from agent.abstraction.holdem_buckets import HoldemCards  # numba: only when needed

        cards = HoldemCards.from_spec(game, spec)
    elif kind == "holdem-pa":
        from agent.abstraction.holdem_pa import PotentialAwareCards  # numba: only when needed

        cards = PotentialAwareCards.from_spec(game, spec)
    elif kind == "rank-groups":
        from agent.abstraction.rank_cards import RankGroupCards

        cards = RankGroupCards.from_spec(game, spec)
    elif kind == "graft":
        from agent.abstraction.graft_cards import GraftCards

        cards = GraftCards.from_spec(game, spec, card_abstraction_from_spec)
    else:
        raise AbstractionError(
            f"expected card abstraction kind 'lossless', 'blind', 'holdem', 'holdem-pa', "
            f"'rank-groups' or 'graft', got {kind!r}"
        )
    want = tuple(int(b) for b in spec.get("buckets", ()))
    if want != cards.buckets:
        raise AbstractionError(f"expected buckets {list(cards.buckets)} for this game, the "
                               f"spec says "
                               f"{list(want)}")
    return cards
