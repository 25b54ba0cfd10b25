"""Fast hand evaluation: numba kernels over lookup tables, equal to the oracle's values.

Role: the hot path behind card abstraction, equity and best-response code. Every function
returns exactly the integers of :func:`agent.acpc.evaluator.rank_hand` (same encoding:
``category << 20`` plus five rank nibbles, see that module), so the two are compared value
for value in the tests. Public API (``python scripts/bench_eval.py`` measures the rates,
against phevaluator and eval7; docs/reports/benchmarks.md):

* :func:`evaluate` -- one hand of 1 to 8 cards, validated.
* :func:`evaluate7` -- seven card indices as seven arguments, the fast single call: the
  compiled entry point of a numba kernel, which skips numba's type dispatch. It still
  raises :class:`~agent.acpc.errors.CardError` (a ``ValueError``) for a card outside 0..51
  or a repeated card.
* :func:`evaluate_batch` -- an ``(N, k)`` integer array of hands, ``k`` in 1..8, to an
  ``int32`` array of values; fastest into a reused ``out`` array with ``check=False``.
* Kernel API (for kernels elsewhere, e.g. :mod:`agent.abstraction.holdem_buckets` and
  :mod:`strategies.solvers.dealpool`): :func:`hand_value` of a summed 7-card key, with
  :data:`SUIT_BASE` and the tables :data:`TABLES_7`.
* :func:`warm_up` -- builds every table and compiles every kernel signature, so that no
  JIT compile or table build happens on a match clock.

Method. Each card has a 64-bit key: bits 0..31 hold a rank multiplier ``M[rank]`` and
bits 32..47 hold one 4-bit counter per suit. Summing the keys of a hand (plus 3 in every
suit counter) gives, in one pass,

* a *rank key* that identifies the multiset of ranks: the multipliers were found once by a
  greedy search (each ``M[r]`` is the smallest value keeping the sums of all multisets of
  up to 7, resp. 8, ranks with at most four of a kind distinct within each size);
  :func:`_build_size_tables` re-checks that no two keys collide;
* a flush flag: a suit counter reaches 8 (bit 3 of its nibble) exactly when five or more
  cards share that suit.

Without a flush the value is ``values[offsets[key >> 9] + (key & 511)]``, a perfect hash
by row displacement: rows of 512 keys packed first-fit into one table (fullest rows first;
a row searches on from where the previous row of its size went, which keeps the build
fast for a few % of space). For seven cards that is 49,205 rank multisets in ~93 K slots,
~450 KiB with the offsets, so it lives in L2. With a flush the suit's 13-bit rank mask
indexes 8192 flush / straight-flush values; with eight cards a flush and a full house or
quads can coexist, so there the better of both is taken. There is one table per hand size.

Validation is fused into the kernels: a second per-card table holds
``1 << (16 * suit + rank)``; the sum over a hand has exactly ``k`` bits set iff its ``k``
cards are distinct cards (a repeat carries, a non-card adds 0), one ``popcount``. The
same sum gives the flush suit's rank mask. The per-card tables have 256 entries, indexed
by the low byte of the card, and the hash tables have slack for any sum of ``k`` keys, so
even unchecked garbage never reads out of bounds.

The tables are built at import (the size-7 ones; the others on first use or by
:func:`warm_up`) by numba kernels written independently of the oracle; nothing is written
to disk but numba's own cache. With ``NUMBA_DISABLE_JIT=1`` the same code runs as plain
Python (slowly), which the tests use to check the kernels' semantics.

Imports numpy, numba and :mod:`agent.acpc.cards`; must never be imported by
:mod:`agent.acpc` or ``dealer`` (the shared core stays stdlib only).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple, cast

import numba
import numba.extending
import numpy as np
import numpy.typing as npt

from agent.acpc.cards import NUM_CARDS
from agent.acpc.errors import CardError
from agent.jit import kernel

__all__ = [
    "MAX_HAND_CARDS",
    "evaluate",
    "evaluate7",
    "evaluate_batch",
    "warm_up",
]

MAX_HAND_CARDS: Final = 8




Int = int | np.int64  # scalars in kernels: Python ints, or numpy's under NUMBA_DISABLE_JIT
Int64Array = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]

# Rank multipliers (see the module docstring): sums of up to 7 (resp. 8) of them, at most
# four of each, are distinct within each number of cards. Found by a greedy search.
_RANK_MULTIPLIERS_7: Final = (
    0, 1, 5, 22, 98, 453, 2031, 8698, 22854, 83661, 262349, 636345, 1479181,
)  # fmt: skip
_RANK_MULTIPLIERS_8: Final = (
    0, 1, 5, 22, 98, 453, 2129, 9543, 41368, 147895, 500413, 1674340, 4074503,
)  # fmt: skip

SUIT_SHIFT: Final = 32  # suit counters: one nibble per suit in bits 32..47
SUIT_BASE: Final = 0x3333 << SUIT_SHIFT  # every counter starts at 3 ...
_FLUSH_BITS: Final = 0x8888 << SUIT_SHIFT  # ... so it reaches 8 at the fifth card
_RANK_KEY_MASK: Final = (1 << SUIT_SHIFT) - 1
_ROW_SHIFT: Final = 9  # perfect hash rows of 512 keys
_COL_MASK: Final = (1 << _ROW_SHIFT) - 1

# Encoding shared with agent.acpc.evaluator (kept literal here: the kernels are written
# independently of the oracle).
_CATEGORY_SHIFT: Final = 20
_PAIR: Final = 1
_TWO_PAIR: Final = 2
_TRIPS: Final = 3
_STRAIGHT: Final = 4
_FLUSH: Final = 5
_FULL_HOUSE: Final = 6
_QUADS: Final = 7
_STRAIGHT_FLUSH: Final = 8
_WHEEL_MASK: Final = 0x100F  # A, 5, 4, 3, 2
_WHEEL_NIBBLES: Final = 0x4321D  # 5 4 3 2 A
_NUM_RANK_MASKS: Final = 1 << 13
_NUM_BYTES: Final = 256  # per-card tables are indexed by the card's low byte


# --------------------------------------------------------------------------- table kernels


@kernel
def _straight_top(rank_mask: int) -> int:
    """Rank of the top card of the best straight in a 13-bit rank mask, or -1."""
    for top in range(12, 3, -1):
        run = 0x1F << (top - 4)
        if (rank_mask & run) == run:
            return top
    if (rank_mask & _WHEEL_MASK) == _WHEEL_MASK:
        return 3
    return -1


@kernel
def _straight_value(category: int, top: int) -> int:
    """Encoded straight (or straight flush) whose top card has rank ``top``."""
    if top == 3:
        return (category << _CATEGORY_SHIFT) | _WHEEL_NIBBLES
    value = category
    for rank in range(top, top - 5, -1):
        value = (value << 4) | (rank + 1)
    return value


@kernel
def _fill_flush_values(out: Int32Array) -> None:
    """``out[mask]``: value of the flush made of the ranks in ``mask`` (0 if < 5 bits)."""
    for rank_mask in range(out.shape[0]):
        bits = 0
        for rank in range(13):
            bits += (rank_mask >> rank) & 1
        if bits < 5:
            out[rank_mask] = 0
            continue
        top = _straight_top(rank_mask)
        if top >= 0:
            out[rank_mask] = _straight_value(_STRAIGHT_FLUSH, top)
            continue
        value = _FLUSH
        taken = 0
        for rank in range(12, -1, -1):
            if taken < 5 and (rank_mask >> rank) & 1:
                value = (value << 4) | (rank + 1)
                taken += 1
        out[rank_mask] = value


@kernel
def _highest_rank(counts: Int64Array, lo: int, hi: int, skip: int) -> int:
    """Highest rank other than ``skip`` held ``lo..hi`` times, or -1."""
    for rank in range(12, -1, -1):
        if rank != skip and lo <= counts[rank] <= hi:
            return rank
    return -1


@kernel
def _multiset_value(counts: Int64Array, left: Int64Array) -> int:
    """Value of the best non-flush hand made from a multiset of ranks.

    Args:
        counts: how many cards of each rank (0..4 each, 1..8 in total).
        left: scratch of 13 entries.
    """
    rank_mask = 0
    for rank in range(13):
        left[rank] = counts[rank]
        if counts[rank] > 0:
            rank_mask |= 1 << rank
    # The made part of the hand: up to two groups (rank, size); kickers fill up to five.
    first, first_size, second, second_size = -1, 0, -1, 0
    quads = _highest_rank(counts, 4, 4, -1)
    trips = _highest_rank(counts, 3, 3, -1)
    pair = _highest_rank(counts, 2, 3, trips)  # a second set of trips can be the pair
    if quads >= 0:
        category, first, first_size = _QUADS, quads, 4
    elif trips >= 0 and pair >= 0:
        category, first, first_size, second, second_size = _FULL_HOUSE, trips, 3, pair, 2
    else:
        top = _straight_top(rank_mask)
        if top >= 0:
            return _straight_value(_STRAIGHT, top)
        if trips >= 0:
            category, first, first_size = _TRIPS, trips, 3
        elif pair >= 0:
            low_pair = _highest_rank(counts, 2, 2, pair)
            if low_pair >= 0:
                category, first, first_size = _TWO_PAIR, pair, 2
                second, second_size = low_pair, 2
            else:
                category, first, first_size = _PAIR, pair, 2
        else:
            category = 0
    value = category
    used = 0
    for rank, size in ((first, first_size), (second, second_size)):
        for _ in range(size):
            value = (value << 4) | (rank + 1)
        if size:
            left[rank] -= size
            used += size
    rank = 12
    while used < 5 and rank >= 0:
        if left[rank] > 0:
            value = (value << 4) | (rank + 1)
            left[rank] -= 1
            used += 1
        else:
            rank -= 1
    while used < 5:  # fewer than five cards: empty nibbles
        value <<= 4
        used += 1
    return value


@kernel
def _visit_multisets(
    multipliers: Int64Array, num_cards: int, fill: bool, keys: Int64Array, values: Int32Array
) -> int:
    """Enumerate every multiset of ``num_cards`` ranks with at most four of each.

    Returns how many there are; with ``fill`` also writes each one's rank key (sum of
    multipliers) and non-flush value into ``keys`` and ``values`` (in enumeration order).
    """
    counts = np.zeros(13, np.int64)
    left = np.zeros(13, np.int64)
    prefix = np.zeros(14, np.int64)  # prefix[r] = counts[0] + ... + counts[r - 1]
    found = 0
    rank = 0
    counts[0] = -1
    while rank >= 0:
        if rank == 12:  # the last rank takes whatever is left, if it can
            last = num_cards - prefix[12]
            if 0 <= last <= 4:
                counts[12] = last
                if fill:
                    key = 0
                    for r in range(13):
                        key += counts[r] * multipliers[r]
                    keys[found] = key
                    values[found] = _multiset_value(counts, left)
                found += 1
            counts[12] = 0
            rank -= 1
            continue
        counts[rank] += 1
        total = prefix[rank] + counts[rank]
        if counts[rank] > 4 or total > num_cards:
            counts[rank] = 0
            rank -= 1
            continue
        if num_cards - total > 4 * (12 - rank):  # the higher ranks cannot take the rest
            continue
        prefix[rank + 1] = total
        rank += 1
        counts[rank] = -1
    return found


@kernel
def _next_free(free_from: Int64Array, slot: int) -> int:
    """Smallest free table slot ``>= slot`` (union-find with path halving)."""
    while free_from[slot] != slot:
        free_from[slot] = free_from[free_from[slot]]
        slot = free_from[slot]
    return slot


@kernel
def _pack_rows(sorted_keys: Int64Array, offsets: Int32Array, free_from: Int64Array) -> int:
    """Row-displacement perfect hash: place each row of keys first-fit into one table.

    Row ``key >> _ROW_SHIFT`` gets ``offsets[row]`` such that the slots
    ``offsets[row] + (key & _COL_MASK)`` of all keys are distinct. Fuller rows go first;
    an offset where a key clashes jumps to the next one putting that key on a free slot.

    Args:
        sorted_keys: the keys, strictly increasing.
        offsets: output, one entry per row (at least ``(max key >> _ROW_SHIFT) + 1``).
        free_from: scratch, ``free_from[i] == i`` for every slot (all free); its length
            bounds the table.

    Returns:
        The table length, or -1 if ``free_from`` was too short.
    """
    num_rows = offsets.shape[0]
    limit = free_from.shape[0] - 1
    starts = np.zeros(num_rows + 1, np.int64)
    for key in sorted_keys:
        starts[(key >> _ROW_SHIFT) + 1] += 1
    sizes = starts[1:].copy()
    for row in range(num_rows):
        starts[row + 1] += starts[row]
    order = np.argsort(-sizes, kind="mergesort")
    length = 0
    previous_size = -1
    start = 0
    for row in order:
        if sizes[row] == 0:
            offsets[row] = 0
            continue
        if sizes[row] != previous_size:  # rows of one size: search on from the last one
            previous_size = sizes[row]
            start = 0
        cols = sorted_keys[starts[row] : starts[row + 1]] & _COL_MASK
        offset = start
        fits = False
        while not fits:  # leapfrog: jump to where the first clashing key lands on a free slot
            if offset + cols[-1] >= limit:
                return -1
            fits = True
            for col in cols:
                slot = _next_free(free_from, offset + col)
                if slot != offset + col:
                    offset = slot - col
                    fits = False
                    break
        for col in cols:
            free_from[offset + col] = offset + col + 1
        offsets[row] = offset
        start = offset
        length = max(length, offset + cols[-1] + 1)
    return length


@kernel
def _fill_table(
    keys: Int64Array, values: Int32Array, offsets: Int32Array, table: Int32Array
) -> None:
    """Write every key's value into its slot of the packed table."""
    for i in range(keys.shape[0]):
        key = keys[i]
        table[offsets[key >> _ROW_SHIFT] + (key & _COL_MASK)] = values[i]


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True, slots=True)
class _SizeTables:
    """The lookup tables for hands of one size (arrays are read-only)."""

    card_keys: Int64Array  # by card byte (256): rank multiplier + 1 in the suit's nibble
    offsets: Int32Array  # row displacements of the perfect hash
    values: Int32Array  # non-flush value of each rank multiset, by hash slot


def _read_only(array: npt.NDArray[Any]) -> npt.NDArray[Any]:
    array.setflags(write=False)
    return array


def _build_flush_values() -> Int32Array:
    out = np.zeros(_NUM_RANK_MASKS, np.int32)
    _fill_flush_values(out)
    return cast(Int32Array, _read_only(out))


def _build_card_bits() -> Int64Array:
    """``1 << (16 * suit + rank)`` for each card, 0 for the bytes 52..255 (not cards)."""
    cards = np.arange(NUM_CARDS)
    bits = np.zeros(_NUM_BYTES, np.int64)
    bits[:NUM_CARDS] = np.int64(1) << (16 * (cards % 4) + cards // 4)
    return cast(Int64Array, _read_only(bits))


@functools.cache
def _build_size_tables(num_cards: int) -> _SizeTables:
    """Build (once) the tables for hands of ``num_cards`` cards."""
    multipliers = np.array(
        _RANK_MULTIPLIERS_8 if num_cards == 8 else _RANK_MULTIPLIERS_7, dtype=np.int64
    )
    cards = np.arange(NUM_CARDS)
    card_keys = np.zeros(_NUM_BYTES, np.int64)
    card_keys[:NUM_CARDS] = multipliers[cards // 4] + (
        np.int64(1) << (SUIT_SHIFT + 4 * (cards % 4))
    )

    empty_keys, empty_values = np.zeros(0, np.int64), np.zeros(0, np.int32)
    count = _visit_multisets(multipliers, num_cards, False, empty_keys, empty_values)
    keys = np.zeros(count, np.int64)
    values = np.zeros(count, np.int32)
    _visit_multisets(multipliers, num_cards, True, keys, values)
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    if np.any(keys[1:] == keys[:-1]):  # would mean a wrong multiplier table
        raise AssertionError(f"rank keys collide for {num_cards}-card hands")

    # Slack so that even unchecked garbage (repeated cards, non-cards, which add 0) hashes
    # inside the tables: rows up to num_cards top-rank multipliers, 512 spare slots.
    max_key = num_cards * int(multipliers[-1])
    offsets = np.zeros((max_key >> _ROW_SHIFT) + 1, np.int32)
    scratch = 2 * count + 2 * (_COL_MASK + 1)
    while (length := _pack_rows(keys, offsets, np.arange(scratch, dtype=np.int64))) < 0:
        scratch *= 2
    table = np.zeros(length + _COL_MASK + 1, np.int32)
    _fill_table(keys, values, offsets, table)
    return _SizeTables(
        card_keys=cast(Int64Array, _read_only(card_keys)),
        offsets=cast(Int32Array, _read_only(offsets)),
        values=cast(Int32Array, _read_only(table)),
    )


_FLUSH_VALUES: Final = _build_flush_values()
_CARD_BITS: Final = _build_card_bits()
_TABLES_7: Final = _build_size_tables(7)
# Module-level arrays are frozen into the compiled _evaluate7_kernel as constants.
_CARD_KEYS_7: Final = _TABLES_7.card_keys
_OFFSETS_7: Final = _TABLES_7.offsets
_VALUES_7: Final = _TABLES_7.values


class EvalTables(NamedTuple):
    """The 7-card lookup tables, read-only, for kernels that evaluate hands themselves with
    :func:`hand_value` (pass them as ``*TABLES_7`` or field by field)."""

    card_keys: Int64Array
    """Per card: its key (rank multiplier + one suit counter)."""
    card_bits: Int64Array
    """Per card: ``1 << (16 * suit + rank)``."""
    offsets: Int32Array
    """Row offsets of the perfect hash of rank keys."""
    values: Int32Array
    """Values of the rank multisets (no flush)."""
    flush_values: Int32Array
    """Values of the flush suit's 13-bit rank masks."""


TABLES_7: Final = EvalTables(_CARD_KEYS_7, _CARD_BITS, _OFFSETS_7, _VALUES_7, _FLUSH_VALUES)
"""The size-7 tables behind :func:`evaluate7` and :func:`hand_value`."""


# --------------------------------------------------------------------------- hot kernels


def _popcount_python(x: Int) -> int:
    """Number of set bits: the plain-Python twin of the LLVM ``ctpop`` intrinsic below."""
    return int(x).bit_count()


def _popcount_intrinsic(typingctx: Any, x: Any) -> Any:
    """numba intrinsic: LLVM ``ctpop`` on an integer (one instruction on x86-64)."""
    if not isinstance(x, numba.types.Integer):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.ctpop(args[0])

    return x(x), codegen


# numba has no popcount of its own; under NUMBA_DISABLE_JIT intrinsics cannot run.
_popcount: Callable[[Int], int] = (
    _popcount_python
    if numba.config.DISABLE_JIT  # type: ignore[attr-defined]
    else cast(Callable[[Int], int], numba.extending.intrinsic(_popcount_intrinsic))
)


@kernel
def _flush_mask(key: Int, bits: Int) -> int:
    """13-bit rank mask of the flush suit of a hand whose key flags a flush.

    Args:
        key: the hand's summed card keys.
        bits: the hand's summed card bits (``1 << (16 * suit + rank)`` per card).
    """
    counters = key >> (SUIT_SHIFT + 3)
    suit = 0
    while not (counters >> (4 * suit)) & 1:
        suit += 1
    return int((bits >> (16 * suit)) & (_NUM_RANK_MASKS - 1))


@kernel
def _evaluate_rows(
    hands: npt.NDArray[Any],
    card_keys: Int64Array,
    card_bits: Int64Array,
    offsets: Int32Array,
    values: Int32Array,
    flush_values: Int32Array,
    check: bool,
    out: Int32Array,
) -> int:
    """``out[i]`` = value of ``hands[i]``, for hands of any one size.

    Returns -1, or with ``check`` the first row that holds a card outside 0..51 or a repeated
    card (rows from there on are not evaluated). Never reads out of bounds: cards index the
    256-entry tables by their low byte, and the check rejects the rest.
    """
    num_cards = hands.shape[1]
    for i in range(hands.shape[0]):
        key = SUIT_BASE
        bits = np.int64(0)
        wide = np.int64(0)
        for j in range(num_cards):
            card = np.int64(hands[i, j])
            wide |= card
            key += card_keys[card & 0xFF]
            bits += card_bits[card & 0xFF]
        # Distinct valid cards have distinct bits, so their sum has num_cards bits set; a
        # repeated card carries and a non-card adds 0, leaving fewer.
        if check and ((wide >> 8) != 0 or _popcount(bits) != num_cards):
            return i
        rank_key = key & _RANK_KEY_MASK
        value = values[
            np.uint64(offsets[np.uint64(rank_key >> _ROW_SHIFT)] + (rank_key & _COL_MASK))
        ]
        if key & _FLUSH_BITS:
            # With 8 cards a flush may coexist with a full house or quads: take the best.
            value = max(value, flush_values[_flush_mask(key, bits)])
        out[i] = value
    return -1


@kernel
def _evaluate_rows7(
    hands: npt.NDArray[Any],
    card_keys: Int64Array,
    card_bits: Int64Array,
    offsets: Int32Array,
    values: Int32Array,
    flush_values: Int32Array,
    check: bool,
    out: Int32Array,
) -> int:
    """:func:`_evaluate_rows` unrolled for 7-card hands, where a flush beats any other hand.

    Tuned: the flush test is a branch (taken ~3%), the check sits behind a loop-invariant
    flag that LLVM hoists out of the loop, and table indices are unsigned (no negative-index
    wrap-around code).
    """
    for i in range(hands.shape[0]):
        c0 = np.int64(hands[i, 0])
        c1 = np.int64(hands[i, 1])
        c2 = np.int64(hands[i, 2])
        c3 = np.int64(hands[i, 3])
        c4 = np.int64(hands[i, 4])
        c5 = np.int64(hands[i, 5])
        c6 = np.int64(hands[i, 6])
        if check and (c0 | c1 | c2 | c3 | c4 | c5 | c6) >> 8:
            return i
        c0, c1, c2, c3 = c0 & 0xFF, c1 & 0xFF, c2 & 0xFF, c3 & 0xFF
        c4, c5, c6 = c4 & 0xFF, c5 & 0xFF, c6 & 0xFF
        if check:
            bits = (
                card_bits[c0]
                + card_bits[c1]
                + card_bits[c2]
                + card_bits[c3]
                + card_bits[c4]
                + card_bits[c5]
                + card_bits[c6]
            )
            if _popcount(bits) != 7:
                return i
        key = (
            SUIT_BASE
            + card_keys[c0]
            + card_keys[c1]
            + card_keys[c2]
            + card_keys[c3]
            + card_keys[c4]
            + card_keys[c5]
            + card_keys[c6]
        )
        if key & _FLUSH_BITS:
            bits = (
                card_bits[c0]
                + card_bits[c1]
                + card_bits[c2]
                + card_bits[c3]
                + card_bits[c4]
                + card_bits[c5]
                + card_bits[c6]
            )
            out[i] = flush_values[_flush_mask(key, bits)]
        else:
            rank_key = key & _RANK_KEY_MASK
            row = np.uint64(rank_key >> _ROW_SHIFT)
            out[i] = values[np.uint64(offsets[row] + (rank_key & _COL_MASK))]
    return -1


@kernel
def _evaluate7_kernel(c0: int, c1: int, c2: int, c3: int, c4: int, c5: int, c6: int) -> int:
    """Value of seven cards, checked, with the size-7 tables frozen in as constants."""
    seen = np.int64(0)
    key = SUIT_BASE
    bits = np.int64(0)
    for card in (c0, c1, c2, c3, c4, c5, c6):
        if card < 0 or card >= NUM_CARDS:
            raise CardError("expected card indices in 0..51")
        bit = np.int64(1) << card
        if seen & bit:
            raise CardError("expected 7 distinct cards")
        seen |= bit
        key += _CARD_KEYS_7[card]
        bits += _CARD_BITS[card]
    if key & _FLUSH_BITS:
        return int(_FLUSH_VALUES[_flush_mask(key, bits)])
    rank_key = key & _RANK_KEY_MASK
    return int(_VALUES_7[_OFFSETS_7[rank_key >> _ROW_SHIFT] + (rank_key & _COL_MASK)])


@kernel
def hand_value(
    key: Int, bits: Int, offsets: Int32Array, values: Int32Array, flush_values: Int32Array
) -> int:
    """Kernel: the value (``rank_hand``) of a 7-card hand from its summed keys and bits.

    ``key`` = :data:`SUIT_BASE` plus the ``card_keys`` of the seven cards, ``bits`` the sum
    of their ``card_bits`` (:data:`TABLES_7`); the cards are not checked.
    """
    if key & _FLUSH_BITS:
        return int(flush_values[_flush_mask(key, bits)])
    rank_key = key & _RANK_KEY_MASK
    # unsigned indices: no negative-index wrap-around code
    row = np.uint64(offsets[np.uint64(rank_key >> _ROW_SHIFT)] + (rank_key & _COL_MASK))
    return int(values[row])


# --------------------------------------------------------------------------- public API

_SEVEN_INTS: Final = (numba.int64,) * 7


def _compiled_entry_point(dispatcher: Any, signature: tuple[Any, ...]) -> Callable[..., int]:
    """The compiled function of ``dispatcher`` for ``signature``, without type dispatch.

    Numba's dispatcher spends most of a tiny call typing its arguments; the compiled
    overload's ``entry_point`` (a numba internal, stable for years) skips that and about
    doubles the call rate. Falls back to the dispatcher itself if the attribute is missing
    and to the plain function under ``NUMBA_DISABLE_JIT=1``.
    """
    if not hasattr(dispatcher, "compile"):  # NUMBA_DISABLE_JIT: a plain Python function
        return cast(Callable[..., int], dispatcher)
    dispatcher.compile(signature)
    overload = dispatcher.overloads.get(signature)
    entry_point = getattr(overload, "entry_point", None)
    return cast(Callable[..., int], entry_point if entry_point is not None else dispatcher)


#: ``evaluate7(c0, c1, c2, c3, c4, c5, c6) -> int``: value of seven cards passed as seven
#: card indices; the fast single call. Raises ``ValueError`` if a card is outside 0..51 or
#: repeated. Arguments are converted as numba converts to ``int64`` (``int()``-like: a
#: float is truncated, a non-number raises), so pass ints.
evaluate7: Callable[[int, int, int, int, int, int, int], int] = _compiled_entry_point(
    _evaluate7_kernel, _SEVEN_INTS
)


def _check_hand(cards: Sequence[int]) -> None:
    if not 1 <= len(cards) <= MAX_HAND_CARDS:
        raise CardError(f"expected 1 to {MAX_HAND_CARDS} cards, got {len(cards)}: {cards!r}")
    seen = 0
    for card in cards:
        if isinstance(card, bool) or not isinstance(card, int | np.integer):
            raise CardError(f"expected card indices in 0..51, got {card!r} in {cards!r}")
        if not 0 <= card < NUM_CARDS:
            raise CardError(f"expected card indices in 0..51, got {card!r} in {cards!r}")
        if (seen >> int(card)) & 1:
            raise CardError(f"expected distinct cards, got {card!r} twice in {cards!r}")
        seen |= 1 << int(card)


def evaluate(cards: Sequence[int]) -> int:
    """Value of one hand of 1 to 8 cards; equal to ``agent.acpc.evaluator.rank_hand``.

    Seven ``int`` cards go to :func:`evaluate7`. In a hot loop over 7-card hands call
    :func:`evaluate7` directly, and for many hands use :func:`evaluate_batch`.

    Args:
        cards: distinct card indices (``rank * 4 + suit``), in any order.

    Raises:
        ValueError: if there are not 1..8 cards, a card is not an index in 0..51, or a card
            is repeated.
    """
    if len(cards) == 7 and all(type(card) is int for card in cards):
        return evaluate7(*cards)  # the kernel checks range and repeats
    _check_hand(cards)
    hand = np.array([cards], dtype=np.int64)
    out = np.empty(1, np.int32)
    tables = _build_size_tables(len(cards))
    _evaluate_rows(
        hand, tables.card_keys, _CARD_BITS, tables.offsets, tables.values, _FLUSH_VALUES,
        True, out,
    )  # fmt: skip
    return int(out[0])


_KERNEL_DTYPES: Final = (np.dtype(np.uint8), np.dtype(np.int32), np.dtype(np.int64))


def evaluate_batch(
    hands: npt.ArrayLike, *, check: bool = True, out: Int32Array | None = None
) -> Int32Array:
    """Values of many hands of the same size, one per row.

    Args:
        hands: integer array of shape ``(N, k)``, ``1 <= k <= 8``, one hand of distinct
            card indices per row. ``uint8`` (the fastest: 7 bytes a hand), ``int32`` and
            ``int64`` C-contiguous arrays are used in place; anything else is converted.
        check: verify that every card is in 0..51 and no row repeats a card. It costs about
            a fifth of the time; ``check=False`` is for hands you generated yourself. Bad
            hands then give meaningless values, never a crash or an out-of-bounds read.
        out: optional writable C-contiguous ``int32`` array of shape ``(N,)`` to fill
            instead of allocating one (fresh memory costs page faults, ~8% on big batches).

    Returns:
        ``int32`` array of shape ``(N,)`` with ``rank_hand`` of each row (``out`` if given).

    Raises:
        ValueError: if ``hands`` is not a 2-D integer array with 1..8 columns, ``out`` does
            not fit, or (with ``check``) a row holds an invalid or repeated card.
    """
    array = np.asarray(hands)
    if array.ndim != 2 or not 1 <= array.shape[1] <= MAX_HAND_CARDS:
        raise CardError(
            f"expected an (N, k) array of hands with 1 <= k <= {MAX_HAND_CARDS}, "
            f"got shape {array.shape!r}"
        )
    if array.dtype.kind not in "iu":
        raise CardError(f"expected an integer array of card indices, got dtype {array.dtype}")
    if array.dtype not in _KERNEL_DTYPES:
        array = array.astype(np.int64)
    array = np.ascontiguousarray(array)
    if out is None:
        out = np.empty(array.shape[0], np.int32)
    elif (
        not isinstance(out, np.ndarray)
        or out.dtype != np.int32
        or out.shape != (array.shape[0],)
        or not out.flags.c_contiguous
        or not out.flags.writeable
    ):
        raise CardError(
            f"expected out to be a writable contiguous int32 array of shape "
            f"({array.shape[0]},), got {getattr(out, 'dtype', type(out))!r} "
            f"{getattr(out, 'shape', '')!r}"
        )
    tables = _build_size_tables(array.shape[1])
    kernel = _evaluate_rows7 if array.shape[1] == 7 else _evaluate_rows
    bad = kernel(
        array, tables.card_keys, _CARD_BITS, tables.offsets, tables.values, _FLUSH_VALUES,
        check, out,
    )  # fmt: skip
    if bad >= 0:
        raise CardError(
            f"row {bad}: expected {array.shape[1]} distinct card indices in 0..51, "
            f"got {array[bad].tolist()!r}"
        )
    return out


def warm_up() -> None:
    """Build every table and compile every kernel signature now, not on a match clock.

    Idempotent and cheap once done; with numba's on-disk cache warm it takes a fraction
    of a second. Covers :func:`evaluate`, :func:`evaluate7` and :func:`evaluate_batch` for
    ``uint8``, ``int32`` and ``int64`` hands of every size.
    """
    evaluate7(0, 1, 2, 3, 4, 5, 6)
    for num_cards in range(1, MAX_HAND_CARDS + 1):
        _build_size_tables(num_cards)
        hand = list(range(0, 4 * num_cards, 4))
        for dtype in _KERNEL_DTYPES:
            evaluate_batch(np.array([hand], dtype=dtype))
        evaluate(hand)
