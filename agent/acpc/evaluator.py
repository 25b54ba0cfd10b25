"""Showdown hand strength as the reference ACPC dealer ranks it: the slow, clear oracle.

Role: :func:`rank_hand` turns 1 to 8 cards (hold'em 7, 3 hole + 5 board = 8, Leduc 2,
Kuhn 1) into an ``int`` strength, larger is better and equal exactly when the hands tie.
The dealer uses it at showdown; the numba kernels in :mod:`agent.handeval` must
return the very same integers and are tested against it. It is written for obviousness,
not speed: with five or more cards it literally tries every five-card subset (memoising
the value of each rank pattern, of which there are only a few thousand).

Semantics (those of the reference dealer's ``rankHand``):

* With five or more cards the value is that of the best five-card poker hand among them.
  Only five cards ever count, kickers included.
* With fewer than five cards every card counts and there are no straights or flushes
  (both need five cards): one card is a high card, two cards a pair or a high card with
  both ranks compared, four cards may be quads, two pair, trips, a pair or high card.
* Categories, low to high: high card, pair, two pair, three of a kind, straight
  (A-2-3-4-5, the wheel, is the lowest), flush, full house, four of a kind, straight flush.

Encoding (24 bits, always fits an ``int32``)::

    value = category << 20 | n1 << 16 | n2 << 12 | n3 << 8 | n4 << 4 | n5

``category`` is 0 (high card) .. 8 (straight flush), see :class:`HandCategory`. ``n1..n5``
are the ranks of the counted cards plus one (``2`` -> 1 .. ``A`` -> 13), in order of
significance: grouped cards first, biggest group first (quads, or trips then the pair of a
full house, or the higher pair then the lower pair), higher rank first within equal groups,
then the kickers from high to low. A straight lists its cards from the top down, the wheel
as ``5 4 3 2 A``. Fewer than five counted cards leave the trailing nibbles 0. Values are
meant to be compared between hands of the same number of cards, as at any ACPC showdown.

Must not import anything outside the stdlib and :mod:`agent.acpc` (no numpy, no numba);
a test checks ``sys.modules`` in a fresh interpreter.
"""

from __future__ import annotations

import enum
import functools
from collections.abc import Sequence
from itertools import combinations

from agent.acpc.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from agent.acpc.errors import CardError

__all__ = [
    "CATEGORY_SHIFT",
    "MAX_HAND_CARDS",
    "HandCategory",
    "category_of",
    "describe_hand",
    "rank_hand",
    "rank_hand_fast",
]

#: Bit position of the category above the five rank nibbles.
CATEGORY_SHIFT = 20
#: Largest number of cards :func:`rank_hand` accepts.
MAX_HAND_CARDS = 8

_HAND_SIZE = 5
_ACE = NUM_RANKS - 1
_WHEEL = (3, 2, 1, 0, _ACE)  # 5 4 3 2 A, the order in which the wheel is encoded


class HandCategory(enum.IntEnum):
    """Hand categories in increasing strength; the value's bits 20..23."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8


def _encode(category: HandCategory, ranks: Sequence[int]) -> int:
    """Pack a category and up to five ranks (0 = deuce), most significant first."""
    value = int(category)
    for i in range(_HAND_SIZE):
        value = (value << 4) | (ranks[i] + 1 if i < len(ranks) else 0)
    return value


def _straight_order(distinct_ranks: Sequence[int]) -> tuple[int, ...] | None:
    """The five ranks of a straight from the top down, or None if they are no straight.

    Args:
        distinct_ranks: five different ranks in decreasing order.
    """
    if tuple(distinct_ranks) == (_ACE, 3, 2, 1, 0):
        return _WHEEL
    if distinct_ranks[0] - distinct_ranks[4] == _HAND_SIZE - 1:
        return tuple(distinct_ranks)
    return None


@functools.cache
def _rank_all(ranks: tuple[int, ...], flush: bool) -> int:
    """Value of a hand of one to five cards in which every card counts.

    Args:
        ranks: the cards' ranks, high to low.
        flush: whether these are five cards of one suit.

    Memoised: there are only a few thousand rank tuples, and every hand tries 21 of them.
    """
    counts: dict[int, int] = {}
    for rank in ranks:
        counts[rank] = counts.get(rank, 0) + 1
    # Biggest group first, higher rank first among equal groups: exactly the order of
    # significance when every card counts.
    groups = sorted(((count, rank) for rank, count in counts.items()), reverse=True)
    ordered = [rank for count, rank in groups for _ in range(count)]
    shape = [count for count, _ in groups]

    if shape[0] == 4:
        return _encode(HandCategory.FOUR_OF_A_KIND, ordered)
    if shape[:2] == [3, 2]:
        return _encode(HandCategory.FULL_HOUSE, ordered)
    if shape[0] == 3:
        return _encode(HandCategory.THREE_OF_A_KIND, ordered)
    if shape[:2] == [2, 2]:
        return _encode(HandCategory.TWO_PAIR, ordered)
    if shape[0] == 2:
        return _encode(HandCategory.PAIR, ordered)
    if len(ranks) < _HAND_SIZE:
        return _encode(HandCategory.HIGH_CARD, ordered)

    # Five different ranks: the only hands that can be straights or flushes.
    straight = _straight_order(ordered)
    if straight is not None:
        category = HandCategory.STRAIGHT_FLUSH if flush else HandCategory.STRAIGHT
        return _encode(category, straight)
    return _encode(HandCategory.FLUSH if flush else HandCategory.HIGH_CARD, ordered)


def _rank_exactly(hand: Sequence[tuple[int, int]]) -> int:
    """Value of one to five ``(rank, suit)`` pairs, sorted high to low, all of them counting."""
    flush = len(hand) == _HAND_SIZE and len({suit for _, suit in hand}) == 1
    return _rank_all(tuple([rank for rank, _ in hand]), flush)


def _check_cards(cards: Sequence[object]) -> None:
    """Raise ValueError unless ``cards`` are 1..8 distinct card indices (typed ``object``:
    the compiled core, acpc-arena compile, would otherwise trust the annotation)."""
    if not 1 <= len(cards) <= MAX_HAND_CARDS:
        raise CardError(f"expected 1 to {MAX_HAND_CARDS} cards, got {len(cards)}: {cards!r}")
    for card in cards:
        if isinstance(card, bool) or not isinstance(card, int) or not 0 <= card < NUM_CARDS:
            raise CardError(f"expected card indices in 0..{NUM_CARDS - 1}, got {card!r}")
    if len(set(cards)) != len(cards):
        raise CardError(f"expected distinct cards, got {cards!r}")


def rank_hand(cards: Sequence[int]) -> int:
    """Strength of the best hand made from ``cards``; larger is better, equal iff a tie.

    Mirrors the reference dealer's ``rankHand`` (see the module docstring for the rules
    and the encoding).

    Args:
        cards: 1 to 8 distinct card indices (``rank * 4 + suit``), in any order.

    Returns:
        The encoded value, ``0 < value < 2**24``.

    Raises:
        ValueError: if there are not 1..8 cards, a card is not an index in 0..51, or a
            card is repeated.
    """
    _check_cards(cards)
    hand = sorted(((card // NUM_SUITS, card % NUM_SUITS) for card in cards), reverse=True)
    if len(hand) <= _HAND_SIZE:
        return _rank_exactly(hand)
    # The best five-card hand, literally: try every five-card subset (each stays sorted).
    return max(_rank_exactly(five) for five in combinations(hand, _HAND_SIZE))


def _straight_table() -> tuple[int, ...]:
    """For every 13-bit rank mask: the top rank of its best straight (3 = the wheel), or -1."""
    table = []
    for mask in range(1 << NUM_RANKS):
        top = -1
        for high in range(_ACE, 3, -1):
            run = 0b11111 << (high - 4)
            if mask & run == run:
                top = high
                break
        if top < 0 and mask & 0b1000000001111 == 0b1000000001111:
            top = 3
        table.append(top)
    return tuple(table)


_STRAIGHT_TOP = _straight_table()


def _straight_ranks(top: int) -> list[int]:
    return list(_WHEEL) if top == 3 else [top, top - 1, top - 2, top - 3, top - 4]


def _top_ranks(mask: int, count: int, skip: int = -1, skip2: int = -1) -> list[int]:
    out = []
    for r in range(_ACE, -1, -1):
        if mask >> r & 1 and r != skip and r != skip2:
            out.append(r)
            if len(out) == count:
                break
    return out


def rank_hand_fast(cards: Sequence[int]) -> int:
    """The same value as :func:`rank_hand`, computed directly from rank counts and suit masks.

    The dealer's showdowns call this (hold'em hands are 7 cards: much faster than trying
    the 21 five-card subsets). Tested equal to :func:`rank_hand`.

    Raises:
        ValueError: as :func:`rank_hand`.
    """
    if len(cards) <= _HAND_SIZE:
        return rank_hand(cards)
    _check_cards(cards)
    counts = [0] * NUM_RANKS
    suits = [0, 0, 0, 0]
    present = 0
    for card in cards:
        r = card >> 2
        counts[r] += 1
        suits[card & 3] |= 1 << r
        present |= 1 << r
    flush = 0
    for m in suits:
        if m.bit_count() >= _HAND_SIZE:
            top = _STRAIGHT_TOP[m]
            if top >= 0:
                return _encode(HandCategory.STRAIGHT_FLUSH, _straight_ranks(top))
            flush = _encode(HandCategory.FLUSH, _top_ranks(m, _HAND_SIZE))
    quads = trips = -1
    trips2 = -1
    pairs: list[int] = []
    for r in range(_ACE, -1, -1):
        c = counts[r]
        if c == 4 and quads < 0:
            quads = r
        elif c >= 3:
            if trips < 0:
                trips = r
            elif trips2 < 0:
                trips2 = r
        elif c == 2:
            pairs.append(r)
    if quads >= 0:
        return _encode(HandCategory.FOUR_OF_A_KIND, [quads] * 4 + _top_ranks(present, 1, quads))
    if trips >= 0 and (trips2 >= 0 or pairs):
        pair = max(trips2, pairs[0] if pairs else -1)
        return _encode(HandCategory.FULL_HOUSE, [trips] * 3 + [pair] * 2)
    if flush:
        return flush
    top = _STRAIGHT_TOP[present]
    if top >= 0:
        return _encode(HandCategory.STRAIGHT, _straight_ranks(top))
    if trips >= 0:
        return _encode(HandCategory.THREE_OF_A_KIND, [trips] * 3 + _top_ranks(present, 2, trips))
    if len(pairs) >= 2:
        p1, p2 = pairs[0], pairs[1]
        return _encode(HandCategory.TWO_PAIR, [p1, p1, p2, p2] + _top_ranks(present, 1, p1, p2))
    if pairs:
        p = pairs[0]
        return _encode(HandCategory.PAIR, [p, p] + _top_ranks(present, 3, p))
    return _encode(HandCategory.HIGH_CARD, _top_ranks(present, _HAND_SIZE))


def category_of(value: int) -> HandCategory:
    """The category encoded in a value from :func:`rank_hand`.

    Raises:
        ValueError: if the category bits are not a known category.
    """
    try:
        return HandCategory(value >> CATEGORY_SHIFT)
    except ValueError:
        raise CardError(f"expected a hand value from rank_hand(), got {value!r}") from None


_RANK_NAMES = (
    "deuce", "three", "four", "five", "six", "seven", "eight",
    "nine", "ten", "jack", "queen", "king", "ace",
)  # fmt: skip


def _plural(rank: int) -> str:
    name = _RANK_NAMES[rank]
    return name + ("es" if name.endswith("x") else "s")


def describe_hand(value: int) -> str:
    """English description of a value from :func:`rank_hand`.

    Examples: ``'high card, ace'``, ``'pair of kings'``, ``'two pair, kings and fives'``,
    ``'three of a kind, sevens'``, ``'straight, five high'``, ``'flush, queen high'``,
    ``'full house, tens over fours'``, ``'four of a kind, aces'``,
    ``'straight flush, ace high'``. Kickers are not named.

    Raises:
        ValueError: if ``value`` is not a value :func:`rank_hand` can return.
    """
    category = category_of(value)
    nibbles = [(value >> shift) & 0xF for shift in (16, 12, 8, 4, 0)]
    if not 1 <= nibbles[0] <= NUM_RANKS or any(n > NUM_RANKS for n in nibbles):
        raise CardError(f"expected a hand value from rank_hand(), got {value!r}")
    first = nibbles[0] - 1
    if category is HandCategory.HIGH_CARD:
        return f"high card, {_RANK_NAMES[first]}"
    if category is HandCategory.PAIR:
        return f"pair of {_plural(first)}"
    if category is HandCategory.TWO_PAIR:
        return f"two pair, {_plural(first)} and {_plural(nibbles[2] - 1)}"
    if category is HandCategory.THREE_OF_A_KIND:
        return f"three of a kind, {_plural(first)}"
    if category is HandCategory.FULL_HOUSE:
        return f"full house, {_plural(first)} over {_plural(nibbles[3] - 1)}"
    if category is HandCategory.FOUR_OF_A_KIND:
        return f"four of a kind, {_plural(first)}"
    label = category.name.lower().replace("_", " ")
    return f"{label}, {_RANK_NAMES[first]} high"
