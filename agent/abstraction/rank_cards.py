"""Rank-group card abstraction for one-card games with one board round (Leduc).

Kind ``rank-groups``: the deck's ranks are split into *groups*; in the first round a hand's
bucket is the group of its private card's rank; in the second round it is
``2 * group + paired``, where ``paired`` says whether the private card's rank is on the
board. The second-round bucket determines the first-round one (perfect recall), and
suits never matter.

Spec (JSON, stored in strategy files as ``cards``)::

    {"kind": "rank-groups", "groups": ["Q", "KA"], "buckets": [2, 4]}

``groups`` are strings of rank characters (``23456789TJQKA``) of the game's deck, each rank
in exactly one group, groups in any order (the bucket is the group's index). The Leduc
abstractions of Waugh et al. (2009) in the bundled Leduc deck (ranks Q, K, A: ACPC deals the
top ranks): *J.Q.K* is ``["Q", "K", "A"]``, *JQ.K* ``["QK", "A"]``, *J.QK* ``["Q", "KA"]``.

Stdlib and :mod:`agent.acpc` only; imported by :mod:`agent.abstraction.buckets` when a spec
names this kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agent.acpc.cards import RANK_CHARS, deck_for, rank_of
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game
from agent.acpc.limits import excerpt

KIND = "rank-groups"


def deck_ranks(game: Game) -> str:
    """The rank characters of ``game``'s deck, lowest first (``'QKA'`` for Leduc)."""
    return "".join(RANK_CHARS[r] for r in sorted({rank_of(c) for c in deck_for(game)}))


def check_ranks(game: Game, text: object, where: str) -> str:
    """``text`` if it is a non-empty string of distinct ranks of ``game``'s deck.

    Raises:
        AbstractionError: otherwise, naming ``where``.
    """
    ranks = deck_ranks(game)
    if not isinstance(text, str) or not text:
        raise AbstractionError(f"{where}: expected a string of ranks from {ranks!r}, got "
                               f"{excerpt(text)}")
    for c in text:
        if c not in ranks:
            raise AbstractionError(f"{where}: expected ranks from this game's deck "
                                   f"{ranks!r}, got {c!r} in {excerpt(text)}")
    if len(set(text)) != len(text):
        raise AbstractionError(f"{where}: expected distinct ranks, got {excerpt(text)}")
    return text


class RankGroupCards:
    """Buckets by the private card's rank group, then whether it pairs the board."""

    def __init__(self, game: Game, groups: Sequence[str]) -> None:
        """
        Raises:
            AbstractionError: unless the game has one hole card and at most two rounds
                and ``groups`` partition the deck's ranks.
        """
        if game.num_hole_cards != 1 or game.num_rounds > 2:
            raise AbstractionError(
                f"expected a game with 1 hole card and at most 2 rounds for {KIND!r} cards "
                f"(Leduc-like), got {game.num_hole_cards} hole cards, {game.num_rounds} rounds"
            )
        if isinstance(groups, str) or not isinstance(groups, Sequence) or not groups:
            raise AbstractionError(f"expected 'groups' to be a non-empty list of rank "
                                   f"strings, got {excerpt(groups)}")
        self.game = game
        self.groups = tuple(check_ranks(game, g, f"{KIND} group {i}")
                            for i, g in enumerate(groups))
        ranks = deck_ranks(game)
        joined = "".join(self.groups)
        if sorted(joined) != sorted(ranks):
            raise AbstractionError(f"expected groups covering each rank of {ranks!r} exactly "
                                   f"once, got {list(self.groups)!r}")
        self._group_of = {RANK_CHARS.index(c): i for i, g in enumerate(self.groups) for c in g}
        n = len(self.groups)
        self._buckets = (n,) if game.num_rounds == 1 else (n, 2 * n)

    @classmethod
    def from_spec(cls, game: Game, spec: dict[str, Any]) -> RankGroupCards:
        """Rebuild from :attr:`spec`.

        Raises:
            AbstractionError: for a missing or bad ``groups``.
        """
        if "groups" not in spec:
            raise AbstractionError(f"expected a 'groups' list in the {KIND!r} spec, got "
                                   f"keys {excerpt(sorted(map(str, spec)))}")
        return cls(game, spec["groups"])

    @property
    def buckets(self) -> tuple[int, ...]:
        return self._buckets

    @property
    def spec(self) -> dict[str, Any]:
        return {"kind": KIND, "groups": list(self.groups), "buckets": list(self._buckets)}

    def bucket(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> int:
        try:
            group = self._group_of[rank_of(hole[0])]
        except (KeyError, IndexError):
            raise AbstractionError(f"expected one hole card of this game, got "
                                   f"{list(hole)!r}") from None
        if round_ == 0:
            return group
        rank = rank_of(hole[0])
        paired = any(rank_of(c) == rank for c in board)
        return 2 * group + int(paired)
