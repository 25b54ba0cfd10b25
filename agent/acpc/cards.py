"""Cards as the reference dealer numbers them, and their text form.

A card is an ``int`` ``rank * 4 + suit`` with rank 0 = ``2`` .. 12 = ``A`` and suit
0..3 = ``c d h s`` (the reference ``makeCard``). Text is rank char + suit char (``Ah``).
Pure and stdlib only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from agent.acpc.errors import CardError
from agent.acpc.limits import excerpt

if TYPE_CHECKING:
    from agent.acpc.gamedef import Game

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"
NUM_RANKS = 13
NUM_SUITS = 4
NUM_CARDS = NUM_RANKS * NUM_SUITS

CARD_TEXT: tuple[str, ...] = tuple(r + s for r in RANK_CHARS for s in SUIT_CHARS)
"""Text of every card index (``CARD_TEXT[51] == 'As'``)."""

_RANK_INDEX = {c: i for i, c in enumerate(RANK_CHARS)}
_SUIT_INDEX = {c: i for i, c in enumerate(SUIT_CHARS)}


def make_card(rank: int, suit: int) -> int:
    """Return the reference index of ``rank`` (0 = deuce) and ``suit`` (0 = clubs)."""
    return rank * NUM_SUITS + suit


def rank_of(card: int) -> int:
    """Rank 0..12 of a card index."""
    return card // NUM_SUITS


def suit_of(card: int) -> int:
    """Suit 0..3 of a card index."""
    return card % NUM_SUITS


def parse_card(text: str) -> int:
    """Parse one card such as ``'Ah'``.

    Like the reference ``readCard``, the rank is read case-insensitively as upper case and
    the suit as lower case.

    Raises:
        ValueError: if ``text`` is not exactly one card.
    """
    if len(text) != 2:
        raise CardError(f"expected a card like 'Ah' (rank + suit), got {excerpt(text)}")
    rank = _RANK_INDEX.get(text[0].upper())
    suit = _SUIT_INDEX.get(text[1].lower())
    if rank is None or suit is None:
        raise CardError(f"expected a card like 'Ah' (rank + suit), got {excerpt(text)}")
    return make_card(rank, suit)


def format_card(card: int) -> str:
    """Text of a card index, e.g. ``51 -> 'As'``.

    Raises:
        ValueError: if ``card`` is not in ``0..51``.
    """
    if not 0 <= card < NUM_CARDS:
        raise CardError(f"expected a card index in 0..51, got {excerpt(card)}")
    return RANK_CHARS[card // NUM_SUITS] + SUIT_CHARS[card % NUM_SUITS]


def parse_cards(text: str) -> tuple[int, ...]:
    """Parse a run of cards with no separators, e.g. ``'7d3d' -> (22, 6)``.

    Raises:
        ValueError: if ``text`` is not a whole number of valid cards.
    """
    if len(text) % 2:
        raise CardError(f"expected a run of two-character cards, got {excerpt(text)}")
    return tuple(parse_card(text[i : i + 2]) for i in range(0, len(text), 2))


def format_cards(cards: Iterable[int]) -> str:
    """Concatenated text of several cards.

    Raises:
        IndexError: for a card index outside ``0..51`` (negative indices are not checked).
    """
    return "".join([CARD_TEXT[c] for c in cards])


def deck_for(game: Game) -> list[int]:
    """The reference deck for ``game``, in the reference order.

    Suits ``4 - numSuits .. 3`` in the outer loop, ranks ``13 - numRanks .. 12`` inside
    (mirrors ``dealCards`` in the reference ``game.c``): small decks use the highest ranks
    and the last suits.
    """
    return [
        make_card(r, s)
        for s in range(NUM_SUITS - game.num_suits, NUM_SUITS)
        for r in range(NUM_RANKS - game.num_ranks, NUM_RANKS)
    ]


def in_deck(card: int, game: Game) -> bool:
    """True if ``card`` is one of :func:`deck_for` ``(game)`` (the highest ``numRanks``
    ranks and the last ``numSuits`` suits)."""
    return (
        0 <= card < NUM_CARDS
        and card // NUM_SUITS >= NUM_RANKS - game.num_ranks
        and card % NUM_SUITS >= NUM_SUITS - game.num_suits
    )


def deck_text(game: Game) -> str:
    """The ranks and suits of ``game``'s deck, for messages: ``'ranks QKA, suits hs'``."""
    ranks = RANK_CHARS[NUM_RANKS - game.num_ranks :]
    suits = SUIT_CHARS[NUM_SUITS - game.num_suits :]
    return f"ranks {ranks}, suits {suits}"
