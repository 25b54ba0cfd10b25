"""Bit-exact dealing: MT19937 seeded with ``init_genrand`` and the reference draw rule.

The reference dealer seeds one MT19937 per match with the classic ``init_genrand(seed)``
(not ``init_by_array``), rebuilds the deck in a fixed order for every hand, and draws every
card of the hand up front: each position's hole cards in position order, then every board
card of every round (docs/protocol.md, section 6). One card is ``i = draw % n; card = deck[i];
deck[i] = deck[n - 1]; n -= 1``. So ``deal_hands(game, seed)`` yields exactly the cards of
the reference for every hand of a match.

Pure and stdlib only: a generator object holds the RNG state; nothing global.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from agent.acpc.cards import deck_for
from agent.acpc.errors import CardError
from agent.acpc.gamedef import Game

_N = 624
_M = 397
_UPPER = 0x80000000
_LOWER = 0x7FFFFFFF
_MATRIX_A = 0x9908B0DF
_MASK32 = 0xFFFFFFFF


class MT19937:
    """The Mersenne Twister of Matsumoto and Nishimura, 32-bit outputs.

    ``MT19937(5489).next_u32()`` is 3499211612, the reference check value.
    """

    __slots__ = ("_index", "_mt")

    def __init__(self, seed: int) -> None:
        if not 0 <= seed <= _MASK32:
            raise CardError(f"expected a seed in 0..{_MASK32}, got {seed!r}")
        mt = [0] * _N
        mt[0] = seed
        for i in range(1, _N):
            prev = mt[i - 1]
            mt[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & _MASK32
        self._mt = mt
        self._index = _N

    def _twist(self) -> None:
        mt = self._mt
        for i in range(_N):
            y = (mt[i] & _UPPER) | (mt[(i + 1) % _N] & _LOWER)
            v = mt[(i + _M) % _N] ^ (y >> 1)
            if y & 1:
                v ^= _MATRIX_A
            mt[i] = v
        self._index = 0

    def next_u32(self) -> int:
        """The next raw 32-bit output (``genrand_int32``)."""
        if self._index >= _N:
            self._twist()
        y = self._mt[self._index]
        self._index += 1
        y ^= y >> 11
        y ^= (y << 7) & 0x9D2C5680
        y ^= (y << 15) & 0xEFC60000
        y ^= y >> 18
        return y


@dataclass(frozen=True, slots=True)
class Deal:
    """The cards of one hand: hole cards by position and the whole board, flat."""

    hole: tuple[tuple[int, ...], ...]
    board: tuple[int, ...]


def deal_hand(game: Game, rng: MT19937) -> Deal:
    """Draw the cards of one hand from ``rng`` (the reference ``dealCards``)."""
    key = (game.num_suits, game.num_ranks)
    full = _DECKS.get(key)
    if full is None:
        full = _DECKS[key] = tuple(deck_for(game))
    deck = list(full)
    n = len(deck)
    drawn: list[int] = []
    for _ in range(game.cards_per_hand):
        i = rng.next_u32() % n
        drawn.append(deck[i])
        n -= 1
        deck[i] = deck[n]
    k = game.num_hole_cards
    hole = tuple(tuple(drawn[p * k : p * k + k]) for p in range(game.num_players))
    return Deal(hole, tuple(drawn[game.num_players * k :]))


_DECKS: dict[tuple[int, int], tuple[int, ...]] = {}
"""(numSuits, numRanks) -> the deck in the reference order (:func:`deck_for`), built once."""


def deal_hands(game: Game, seed: int) -> Iterator[Deal]:
    """Yield the deals of hands 0, 1, 2, ... of a match seeded with ``seed``, forever."""
    rng = MT19937(seed)
    while True:
        yield deal_hand(game, rng)
