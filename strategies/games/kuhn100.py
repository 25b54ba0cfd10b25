"""N-card Kuhn poker (100-card Kuhn by default) and its equal-width card abstractions.

**The game** (docs/background.md, "Testbeds"): two players, cards ``0 .. N-1`` (one deck, no suits;
the higher card wins), each antes 1 and gets one card; one bet of 1 per hand: position 0
checks or bets; after a check position 1 checks or bets; a bet is called or folded. The
betting is exactly the ACPC Kuhn game (:data:`KUHN_GAMEDEF`: limit, blinds 1 1, raise size
1, one raise, position 0 first); only the deck differs. An ACPC game definition cannot hold
the deck: ``numRanks <= 13`` and ``numSuits <= 4`` (:mod:`agent.acpc.gamedef`) allow at most
52 cards, and suits would create ties. So this module builds the game itself: the betting
tree, terminal payoffs and table layout of the ACPC Kuhn game
(:func:`strategies.games.abstract.build_abstract_game` on :data:`KUHN_GAMEDEF`), with the chance
arrays replaced by the ``N (N - 1)`` ordered deals of N-card Kuhn (equally likely). The
result is an ordinary :class:`~strategies.games.abstract.AbstractGame` (a :class:`KuhnGame`), so
every solver of :mod:`strategies.solvers.cfr` and the exact best response of
:mod:`strategies.measure.best_response` run on it unchanged.

**Card abstraction** :class:`EqualWidthCards` with ``k`` buckets of width ``w = N // k``:
card ``c`` is in bucket ``min(c // w, k - 1)`` (the last bucket takes the remainder). For
N = 100: 3 buckets are {0-32, 33-65, 66-99} (33, 33 and 34 cards, as docs/background.md states),
10 buckets are {0-9, ..., 90-99}, 25 buckets are {0-3, ..., 96-99}; ``k = N`` is the full
game (one card per bucket). The *abstract game* is N-card Kuhn in which each player sees
only its bucket (showdowns still compare the real cards).

**Lifting** (:func:`lift`): an abstract strategy plays in the full game by giving every
card its bucket's row; its full-game exploitability is the exact best response in the
full game (:func:`strategies.measure.best_response.exploitability` on the full :class:`KuhnGame`).

Imports numpy and :mod:`agent` / :mod:`strategies.games.abstract`; no numba here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import PRESETS
from agent.abstraction.buckets import BlindCards
from agent.acpc.errors import AbstractionError, UsageError
from agent.acpc.gamedef import Game, parse_gamedef
from agent.strategy.fileformat import table_layout
from strategies.games.abstract import AbstractGame, build_abstract_game

F64 = npt.NDArray[np.float64]

KUHN_GAMEDEF = """GAMEDEF
limit
numPlayers = 2
numRounds = 1
blind = 1 1
raiseSize = 1
firstPlayer = 1
maxRaises = 1
numSuits = 1
numRanks = 3
numHoleCards = 1
numBoardCards = 0
END GAMEDEF
"""
"""The betting of Kuhn poker as an ACPC game (ante 1 as a blind of 1 each, one bet of 1,
position 0 first). Its own three-card deck is replaced here by ``0 .. N-1``."""

DEFAULT_CARDS = 100
MAX_CARDS = 2000
"""Largest deck :func:`build_kuhn` accepts (N (N - 1) deals are enumerated)."""


def kuhn_betting_game() -> Game:
    """The ACPC game whose betting (and three-card deck) is Kuhn poker's."""
    return parse_gamedef(KUHN_GAMEDEF, "kuhn100.KUHN_GAMEDEF")


SPLITS = ("domain", "proportional")
"""How equal-width buckets share a remainder: ``domain`` (docs/background.md: width ``N // k``, the
last bucket takes the rest; 100 cards in 3: 33, 33, 34) or ``proportional`` (card ``c`` in
bucket ``c * k // N``; 100 cards in 3: 34, 33, 33)."""


class EqualWidthCards:
    """``buckets`` equal-width buckets of the cards ``0 .. cards-1`` (see the module
    docstring): card ``c`` is in bucket ``min(c // (cards // buckets), buckets - 1)``, or
    ``c * buckets // cards`` with ``split="proportional"``."""

    def __init__(self, cards: int, buckets: int, split: str = "domain") -> None:
        if not 2 <= cards <= MAX_CARDS:
            raise UsageError(f"expected a deck of 2..{MAX_CARDS} cards, got {cards!r}")
        if not 1 <= buckets <= cards:
            raise UsageError(f"expected 1..{cards} buckets for {cards} cards, got {buckets!r}")
        if split not in SPLITS:
            raise UsageError(f"expected a split in {SPLITS}, got {split!r}")
        self.cards = cards
        self.count = buckets
        self.width = cards // buckets
        self.split = split

    @property
    def buckets(self) -> tuple[int, ...]:
        return (self.count,)

    @property
    def spec(self) -> dict[str, Any]:
        return {"kind": "kuhn-equal-width", "cards": self.cards, "buckets": [self.count],
                "split": self.split}

    def of_card(self, card: int) -> int:
        """The bucket of one card."""
        if not 0 <= card < self.cards:
            raise AbstractionError(f"expected a card in 0..{self.cards - 1}, got {card!r}")
        if self.split == "proportional":
            return card * self.count // self.cards
        return min(card // self.width, self.count - 1)

    def bucket(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> int:
        if round_ != 0 or len(hole) != 1 or board:
            raise AbstractionError(f"expected one hole card in round 0 and no board, got "
                                   f"round {round_!r} hole {list(hole)!r} board {list(board)!r}")
        return self.of_card(int(hole[0]))

    def ranges(self) -> list[tuple[int, int]]:
        """``(first, last)`` card of every bucket, in bucket order."""
        out: list[tuple[int, int]] = []
        for b in range(self.count):
            if self.split == "proportional":
                first = -(-b * self.cards // self.count)
                last = -(-(b + 1) * self.cards // self.count) - 1
            else:
                first = b * self.width
                last = self.cards - 1 if b == self.count - 1 else first + self.width - 1
            out.append((first, last))
        return out


@dataclass(frozen=True, eq=False)
class KuhnGame(AbstractGame):
    """N-card Kuhn with a card abstraction, as the flat arrays of :class:`AbstractGame`."""

    num_cards: int = DEFAULT_CARDS

    @property
    def equal_width(self) -> EqualWidthCards:
        assert isinstance(self.cards, EqualWidthCards)
        return self.cards

    def describe_bucket(self, round_: int, bucket: int) -> str:
        """The cards of a bucket, e.g. ``'33-65'``."""
        first, last = self.equal_width.ranges()[bucket]
        return f"{first}" if first == last else f"{first}-{last}"


def build_kuhn(cards: int = DEFAULT_CARDS, buckets: int | None = None,
               split: str = "domain") -> KuhnGame:
    """N-card Kuhn (``cards`` = N) abstracted to ``buckets`` equal-width buckets (the full
    game, one card per bucket, if None), the remainder shared as ``split`` says.

    Deals are the ordered pairs ``(card of position 0, card of position 1)`` in
    lexicographic order, each with probability ``1 / (N (N - 1))``. Showdown pattern 0 means
    position 0 holds the higher card, pattern 1 position 1.

    Raises:
        UsageError: for a deck or bucket count out of range.
    """
    abstraction = EqualWidthCards(cards, cards if buckets is None else buckets, split)
    game = kuhn_betting_game()
    base = build_abstract_game(game, PRESETS["fcpa"], BlindCards(game))
    layout = table_layout(base.tree, abstraction.buckets)
    first, second = np.meshgrid(np.arange(cards), np.arange(cards), indexing="ij")
    keep = first != second
    deal_cards = np.stack([first[keep], second[keep]], axis=1).astype(np.int32)
    count = len(deal_cards)
    of_card = np.array([abstraction.of_card(c) for c in range(cards)], dtype=np.int32)
    deal_bucket = of_card[deal_cards].reshape(count, 2, 1)
    deal_pattern = (deal_cards[:, 0] < deal_cards[:, 1]).astype(np.int32).reshape(count, 1)
    terminals = [node for node in base.tree.nodes if node.is_terminal]
    term_payoff = np.zeros((len(terminals), 2, 2))
    for t, node in enumerate(terminals):
        assert base.terminal[node.id] == t
        state = node.state
        if state.is_showdown:
            term_payoff[t, 0, :] = state.payoffs([1, 0])
            term_payoff[t, 1, :] = state.payoffs([0, 1])
        else:
            term_payoff[t, :, :] = state.payoffs()
    if base.showdown_sets != ((0, 1),):
        raise UsageError(f"expected Kuhn's one showdown set (0, 1), got {base.showdown_sets!r}")
    fields = {f.name: getattr(base, f.name) for f in dataclasses.fields(AbstractGame)}
    fields.update(
        cards=abstraction,
        layout=layout,
        offset=layout.offsets.astype(np.int64),
        rows=layout.rows.astype(np.int32),
        term_payoff=term_payoff,
        deal_cards=deal_cards,
        deal_prob=np.full(count, 1.0 / count),
        deal_bucket=np.ascontiguousarray(deal_bucket),
        deal_pattern=np.ascontiguousarray(deal_pattern),
    )
    return KuhnGame(**fields, num_cards=cards)


def lift(abstract: KuhnGame, table: npt.ArrayLike, full: KuhnGame) -> F64:
    """The full-game table that plays ``table`` of ``abstract``: every card its bucket's row.

    Raises:
        UsageError: if the games have different decks, the full game is abstracted, or the
            table has the wrong size.
    """
    values = np.asarray(table, dtype=np.float64).reshape(-1)
    if values.shape != (abstract.table_size,):
        raise UsageError(f"expected a table of {abstract.table_size} values, got "
                         f"{values.shape!r}")
    return values[lift_index(abstract, full)]


def lift_index(abstract: KuhnGame, full: KuhnGame) -> npt.NDArray[np.int64]:
    """For every index of a full-game table, the index of ``abstract``'s table it copies
    (card ``c`` at node ``n``, action ``a`` -> ``n``'s row of ``c``'s bucket, action ``a``).

    Raises:
        UsageError: if the games have different decks or the full game is abstracted.
    """
    if abstract.num_cards != full.num_cards or full.equal_width.count != full.num_cards:
        raise UsageError(f"expected an abstraction of the full {full.num_cards}-card game, "
                         f"got {abstract.num_cards} cards and a full game of "
                         f"{full.equal_width.count} buckets")
    of_card = np.array([abstract.equal_width.of_card(c) for c in range(full.num_cards)])
    out = np.empty(full.table_size, dtype=np.int64)
    for node in np.flatnonzero(full.offset >= 0):
        k = int(full.num_actions[node])
        start = int(full.offset[node])
        rows = int(abstract.offset[node]) + of_card[:, None] * k + np.arange(k)[None, :]
        out[start : start + full.num_cards * k] = rows.ravel()
    return out
