"""Pure-Python hand ranking with the reference dealer's semantics (the slow oracle).

``rank_hand(cards)`` is larger for better hands and equal for ties. The best five-card hand
is chosen from the cards; with fewer than five cards every card counts as a kicker and there
are no straights or flushes (they need five cards), so Kuhn is high card and Leduc is "pair
with the board, else high card". Encoding: ``category << 20`` plus up to five 4-bit ranks
(most significant first), categories 0 high card .. 8 straight flush.

Stdlib only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import combinations

HIGH_CARD, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH = range(9)


def _encode(category: int, ranks: Sequence[int]) -> int:
    value = category
    for i in range(5):
        value = (value << 4) | (ranks[i] if i < len(ranks) else 0)
    return value


def _straight_top(ranks: set[int]) -> int:
    for top in range(12, 3, -1):
        if all(r in ranks for r in range(top - 4, top + 1)):
            return top
    if {12, 0, 1, 2, 3} <= ranks:
        return 3
    return -1


def _rank_five_or_fewer(cards: Sequence[int]) -> int:
    ranks = sorted((c // 4 for c in cards), reverse=True)
    counts = Counter(ranks)
    groups = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    order = [r for r, n in groups for _ in range(n)]
    if len(cards) == 5:
        flush = len({c % 4 for c in cards}) == 1
        top = _straight_top(set(ranks)) if len(counts) == 5 else -1
        if top >= 0:
            return _encode(STRAIGHT_FLUSH if flush else STRAIGHT, [top])
        if flush:
            return _encode(FLUSH, ranks)
    shape = [n for _, n in groups]
    if shape[0] == 4:
        category = QUADS
    elif shape[0] == 3 and len(shape) > 1 and shape[1] >= 2:
        category = FULL_HOUSE
    elif shape[0] == 3:
        category = TRIPS
    elif shape[0] == 2 and len(shape) > 1 and shape[1] == 2:
        category = TWO_PAIR
    elif shape[0] == 2:
        category = PAIR
    else:
        category = HIGH_CARD
    return _encode(category, order)


def rank_hand(cards: Sequence[int]) -> int:
    """Strength of the best five-card hand in ``cards`` (1..8 cards); larger is better.

    Raises:
        ValueError: if there are no cards.
    """
    if not cards:
        raise ValueError("expected at least one card, got none")
    if len(cards) <= 5:
        return _rank_five_or_fewer(cards)
    return max(_rank_five_or_fewer(five) for five in combinations(cards, 5))
