"""Lossless suit isomorphism: a dense index of the canonical hands of each round.

Role: :class:`HandIndexer` numbers the classes of hands that differ only by a relabelling
of the suits, densely (``0 .. size(r) - 1``), for any deck of ``num_ranks x num_suits``
cards dealt in rounds of ``cards_per_round[r]`` cards each. A table indexed by it (a
bucket, an equity, a strategy row) stores each class once instead of once per relabelling,
and :meth:`HandIndexer.unindex` gives back a representative of any class.

Cards are ``rank * num_suits + suit`` (the ACPC numbering, :mod:`agent.acpc.cards`). A
hand after round ``r`` is the cards of rounds ``0 .. r`` in deal order; within a round the
order does not matter, across rounds it does: a card dealt on the flop and the same card
dealt on the turn give different classes. Two hands are in one class iff one permutation
of the suits maps each round's cards of one onto that round's cards of the other.

For hold'em two groupings are useful (:func:`holdem_indexer`):

* ``board``: rounds ``(2, n)``, hole cards then the whole visible board as one set. This
  is what an imperfect-recall card abstraction sees (its buckets depend on the hole cards
  and the board, not on which street dealt a board card): 169, 1,286,792, 13,960,050 and
  123,156,254 classes preflop, on the flop, turn and river.
* ``perfect``: rounds ``(2, 3, 1, 1)``, each street its own round: 169, 1,286,792,
  55,190,538 and 2,428,287,420 classes.

**The numbering** (the construction of Waugh, "A Fast and Optimal Hand Isomorphism
Algorithm", 2013, written out here). Per suit, the *pattern* is how many of the suit's
cards each round dealt, ``(m_0, .., m_r)``, and the *configuration* is which ranks:
the rank set ``A_j`` of each round ``j``, disjoint. A configuration's number within its
pattern is mixed radix, round 0 least significant::

    cfg = c_0 + C(N, m_0) * (c_1 + C(N - m_0, m_1) * (c_2 + ...))

where ``c_j`` is the colexicographic rank ``sum_i C(x_i, i + 1)`` of ``A_j`` with each rank
``x`` replaced by its position among the ranks still unused by earlier rounds of the suit
(``N = num_ranks``). A pattern has ``M(p) = prod_j C(N - m_0 - .. - m_{j-1}, m_j)``
configurations.

A class is the multiset of the suits' ``(pattern, cfg)`` pairs. Sorting the suits by
``(pattern, cfg)``, descending, makes it canonical. The multiset of patterns alone is the
class's *suit shape*; shapes are numbered in increasing order of their key (the sorted
pattern codes, pattern code = the counts as base ``B = max(cards_per_round) + 1`` digits,
round 0 most significant) and each has a block of indices starting at its offset. Inside
a shape, the suits sharing one pattern form a group; a group of ``n`` suits with pattern
``p`` has ``C(M(p) + n - 1, n)`` multisets of configurations, numbered by the
combinatorial number system on ``y_0 <= y_1 <= .. <= y_{n-1}`` (the group's cfgs,
ascending): ``sum_j C(y_j + j, j + 1)``. The groups' numbers are combined in mixed radix,
the first (largest) pattern most significant. So::

    index = offset(shape) + mixed radix over groups of multiset numbers

The class's *multiplicity* (how many hands, each round's cards taken as a set, it holds)
is ``S! / prod k!`` over runs of ``k`` suits with equal ``(pattern, cfg)`` (the suit
permutations that fix the hand); summed over a round's classes it is the number of hands,
``prod_j C(deck left, k_j)``.

Speed: :meth:`HandIndexer.index_batch` and :meth:`HandIndexer.unindex_batch` are the fast
paths (millions of hands per second; ``python scripts/bench_isomorphism.py`` measures them,
docs/reports/benchmarks.md); the single-hand methods validate their input and are mostly
Python.

Kernel API (for kernels elsewhere, e.g. :mod:`strategies.cards.tables`): :func:`index_one`
and :func:`unindex_one` over the flat tables of :meth:`HandIndexer.kernel_tables`.

Kernels: :func:`agent.jit.kernel` functions over flat int64 arrays behind validating
public methods. Imports numpy and numba; must never be imported by :mod:`agent.acpc` or
``dealer``.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from agent.acpc.cards import NUM_RANKS, NUM_SUITS
from agent.acpc.errors import AbstractionError
from agent.jit import kernel

__all__ = [
    "HOLDEM_BOARD_CLASSES",
    "HOLDEM_PERFECT_CLASSES",
    "HandIndexer",
    "KernelTables",
    "holdem_indexer",
]

#: Classes per hold'em round, board grouping (hole cards, then the visible board as a set).
HOLDEM_BOARD_CLASSES: Final = (169, 1_286_792, 13_960_050, 123_156_254)
#: Classes per hold'em round, perfect recall (hole, flop, turn, river each a round).
HOLDEM_PERFECT_CLASSES: Final = (169, 1_286_792, 55_190_538, 2_428_287_420)

_MAX_INDEX: Final = 2**62  # every index and intermediate must stay below this (int64)


Int = int | np.int64
Int64Array = npt.NDArray[np.int64]



# --------------------------------------------------------------------------- kernels


@kernel
def _choose(n: Int, k: Int) -> int:
    """``C(n, k)`` for small ``k`` (0 when ``k > n``); exact while the result fits int64."""
    if k < 0 or k > n:
        return 0
    value: Int = 1
    for i in range(k):
        value = value * (n - i) // (i + 1)  # exact: C(n, i) * (n - i) is divisible by i + 1
    return int(value)


@kernel
def _popcount(x: Int) -> int:
    """Set bits of a non-negative int64 (SWAR, no loop)."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return int(((x * 0x0101010101010101) & 0x7FFFFFFFFFFFFFFF) >> 56)


@kernel
def insertion_sort(a: Int64Array, lo: Int, hi: Int) -> None:
    """Sort ``a[lo:hi]`` in place, ascending (a few elements)."""
    for i in range(lo + 1, hi):
        value = a[i]
        j = i - 1
        while j >= lo and a[j] > value:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = value


@kernel
def _sort_suits(code: Int64Array, cfg: Int64Array, n: Int) -> None:
    """Sort ``(code, cfg)`` pairs in place, descending (insertion sort, a few entries)."""
    for i in range(1, n):
        c, g = code[i], cfg[i]
        j = i - 1
        while j >= 0 and (code[j] < c or (code[j] == c and cfg[j] < g)):
            code[j + 1] = code[j]
            cfg[j + 1] = cfg[j]
            j -= 1
        code[j + 1] = c
        cfg[j + 1] = g


@kernel
def index_one(
    cards: Int64Array,
    rounds: Int,
    per_round: Int64Array,
    ranks: Int,
    suits: Int,
    base: Int,
    binom: Int64Array,
    keys: Int64Array,
    offsets: Int64Array,
    group_count: Int64Array,
    group_n: Int64Array,
    group_size: Int64Array,
    scratch: Int64Array,
) -> int:
    """Index of the hand ``cards`` (rounds ``0 .. rounds - 1`` in deal order).

    ``scratch`` holds ``5 * suits`` entries: used rank masks, pattern codes, cfgs, cfg
    radices and this round's rank sets. Returns -1 only if the shape is unknown (the
    wrapper's input checks make that impossible).
    """
    used = scratch[0:suits]
    code = scratch[suits : 2 * suits]
    cfg = scratch[2 * suits : 3 * suits]
    radix = scratch[3 * suits : 4 * suits]
    sets = scratch[4 * suits : 5 * suits]
    for s in range(suits):
        used[s] = 0
        code[s] = 0
        cfg[s] = 0
        radix[s] = 1
    pos = 0
    for r in range(rounds):
        for s in range(suits):
            sets[s] = 0
        for _ in range(per_round[r]):
            card = cards[pos]
            pos += 1
            rank, suit = divmod(card, suits)
            sets[suit] |= np.int64(1) << rank
        for s in range(suits):
            rank_set = sets[s]
            count = 0
            colex = 0
            while rank_set:  # each rank, ascending, at its position among unused ranks
                low = rank_set & -rank_set
                below = low - 1
                count += 1
                colex += binom[_popcount(below) - _popcount(used[s] & below), count]
                rank_set ^= low
            rank_set = sets[s]
            free = ranks - _popcount(used[s])
            cfg[s] += colex * radix[s]
            radix[s] *= binom[free, count]
            used[s] |= rank_set
            code[s] = code[s] * base + count
    _sort_suits(code, cfg, suits)
    key: Int = 0
    shift: Int = 1
    for _ in range(rounds):
        shift *= base
    for s in range(suits):
        key = key * shift + code[s]
    lo = 0
    hi = keys.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    if lo == keys.shape[0] or keys[lo] != key:
        return -1
    shape = lo
    index: Int = 0
    first = 0
    for g in range(group_count[shape]):
        n = group_n[shape, g]
        multiset = 0
        for j in range(n):  # ascending cfgs: the group's last suit first
            multiset += _choose(cfg[first + n - 1 - j] + j, j + 1)
        index = index * group_size[shape, g] + multiset
        first += n
    return int(offsets[shape] + index)


@kernel
def _multiplicity(code: Int64Array, cfg: Int64Array, suits: Int) -> int:
    """Hands in the class of sorted ``(code, cfg)`` pairs: ``S!`` over runs' factorials."""
    value = 1
    for s in range(2, suits + 1):
        value *= s
    run = 1
    for s in range(1, suits + 1):
        if s < suits and code[s] == code[s - 1] and cfg[s] == cfg[s - 1]:
            run += 1
        else:
            for k in range(2, run + 1):
                value //= k
            run = 1
    return value


@kernel
def unindex_one(
    index: Int,
    rounds: Int,
    per_round: Int64Array,
    ranks: Int,
    suits: Int,
    base: Int,
    binom: Int64Array,
    offsets: Int64Array,
    group_count: Int64Array,
    group_n: Int64Array,
    group_code: Int64Array,
    group_options: Int64Array,
    group_size: Int64Array,
    scratch: Int64Array,
    out: Int64Array,
) -> int:
    """Write the canonical hand of class ``index`` into ``out``; return its multiplicity.

    ``out`` gets each round's cards sorted ascending, rounds in order; the suits are
    relabelled so that suit 0 has the largest ``(pattern, cfg)``, then suit 1, and so on.
    ``scratch`` as in :func:`index_one`.
    """
    code = scratch[suits : 2 * suits]
    cfg = scratch[2 * suits : 3 * suits]
    lo = 0
    hi = offsets.shape[0] - 1
    while hi - lo > 1:  # the shape: offsets[lo] <= index < offsets[lo + 1]
        mid = (lo + hi) // 2
        if offsets[mid] <= index:
            lo = mid
        else:
            hi = mid
    shape = lo
    rest = index - offsets[shape]
    groups = group_count[shape]
    first = suits
    for g in range(groups - 1, -1, -1):  # least significant group last in the index
        n = group_n[shape, g]
        first -= n
        multiset = rest % group_size[shape, g]
        rest //= group_size[shape, g]
        for j in range(n - 1, -1, -1):  # largest z with C(z, j + 1) <= multiset
            low = j
            high = group_options[shape, g] + j  # C(high, j + 1) > multiset
            while high - low > 1:
                mid = (low + high) // 2
                if _choose(mid, j + 1) <= multiset:
                    low = mid
                else:
                    high = mid
            multiset -= _choose(low, j + 1)
            cfg[first + n - 1 - j] = low - j
            code[first + n - 1 - j] = group_code[shape, g]
    multiplicity = _multiplicity(code, cfg, suits)
    digits: Int = 1
    for _ in range(rounds - 1):
        digits *= base
    # Decode every suit's configuration round by round; cards go to their round's slots.
    round_start = scratch[4 * suits : 4 * suits + rounds]
    fill = scratch[4 * suits + rounds : 4 * suits + 2 * rounds]
    start = 0
    for r in range(rounds):
        round_start[r] = start
        fill[r] = 0
        start += per_round[r]
    for s in range(suits):
        used: Int = 0
        rest_cfg = cfg[s]
        place: Int = digits
        for r in range(rounds):
            count = (code[s] // place) % base
            place //= base
            free = ranks - _popcount(used)
            options = binom[free, count]
            colex = rest_cfg % options
            rest_cfg //= options
            chosen: Int = 0
            for j in range(count, 0, -1):  # largest position x with C(x, j) <= colex
                x = j - 1
                while x + 1 < free and binom[x + 1, j] <= colex:
                    x += 1
                colex -= binom[x, j]
                # the x-th (0-based) rank not used earlier by this suit
                seen = -1
                for rank in range(ranks):
                    if not (used >> rank) & 1:
                        seen += 1
                        if seen == x:
                            chosen |= np.int64(1) << rank
                            break
            used |= chosen
            for rank in range(ranks):
                if (chosen >> rank) & 1:
                    out[round_start[r] + fill[r]] = rank * suits + s
                    fill[r] += 1
    for r in range(rounds):  # each round's cards ascending
        insertion_sort(out, round_start[r], round_start[r] + per_round[r])
    return multiplicity


@kernel
def _index_batch(
    cards: Int64Array,
    rounds: Int,
    per_round: Int64Array,
    ranks: Int,
    suits: Int,
    base: Int,
    binom: Int64Array,
    keys: Int64Array,
    offsets: Int64Array,
    group_count: Int64Array,
    group_n: Int64Array,
    group_size: Int64Array,
    out: Int64Array,
) -> None:
    """``out[i]``: the index of hand ``cards[i]`` (one hand per row)."""
    scratch = np.zeros(5 * suits + 2 * rounds, np.int64)
    for i in range(cards.shape[0]):
        out[i] = index_one(
            cards[i], rounds, per_round, ranks, suits, base, binom, keys, offsets,
            group_count, group_n, group_size, scratch,
        )  # fmt: skip


@kernel
def _unindex_batch(
    indices: Int64Array,
    rounds: Int,
    per_round: Int64Array,
    ranks: Int,
    suits: Int,
    base: Int,
    binom: Int64Array,
    offsets: Int64Array,
    group_count: Int64Array,
    group_n: Int64Array,
    group_code: Int64Array,
    group_options: Int64Array,
    group_size: Int64Array,
    out: Int64Array,
    multiplicity: Int64Array,
) -> None:
    """Row ``i`` of ``out``: the canonical hand of class ``indices[i]``; and its multiplicity."""
    scratch = np.zeros(5 * suits + 2 * rounds, np.int64)
    for i in range(indices.shape[0]):
        multiplicity[i] = unindex_one(
            indices[i], rounds, per_round, ranks, suits, base, binom, offsets, group_count,
            group_n, group_code, group_options, group_size, scratch, out[i],
        )  # fmt: skip


# --------------------------------------------------------------------------- tables


@dataclass(frozen=True, slots=True)
class _Round:
    """The shapes of the hands after one round, as flat arrays for the kernels."""

    size: int
    keys: Int64Array  # (shapes,) ascending
    offsets: Int64Array  # (shapes + 1,)
    group_count: Int64Array  # (shapes,)
    group_n: Int64Array  # (shapes, suits): suits in each group
    group_code: Int64Array  # (shapes, suits): the group's pattern code
    group_options: Int64Array  # (shapes, suits): M(pattern), configurations of one suit
    group_size: Int64Array  # (shapes, suits): C(M + n - 1, n)


def _compositions(total: int, parts: int) -> list[tuple[int, ...]]:
    """Every way to write ``total`` as ``parts`` non-negative integers, in order."""
    if parts == 1:
        return [(total,)]
    return [
        (first, *rest)
        for first in range(total + 1)
        for rest in _compositions(total - first, parts - 1)
    ]


def _configurations(pattern: Sequence[int], ranks: int) -> int:
    """``M(pattern)``: rank sets of one suit with these counts per round, disjoint."""
    value = 1
    used = 0
    for count in pattern:
        value *= math.comb(ranks - used, count)
        used += count
    return value


def _build_round(per_round: Sequence[int], ranks: int, suits: int, base: int) -> _Round:
    """Enumerate the suit shapes of hands dealt ``per_round`` (module docstring)."""
    rounds = len(per_round)
    shapes: set[tuple[tuple[int, ...], ...]] = set()
    for split in itertools.product(*(_compositions(k, suits) for k in per_round)):
        patterns = [tuple(split[r][s] for r in range(rounds)) for s in range(suits)]
        if all(_configurations(p, ranks) > 0 for p in patterns):
            shapes.add(tuple(sorted(patterns, reverse=True)))

    def code(pattern: tuple[int, ...]) -> int:
        value = 0
        for count in pattern:
            value = value * base + count
        return value

    shift = base**rounds
    keyed = []
    for shape in shapes:
        key = 0
        for pattern in shape:
            key = key * shift + code(pattern)
        keyed.append((key, shape))
    keyed.sort()
    count = len(keyed)
    keys = np.zeros(count, np.int64)
    offsets = np.zeros(count + 1, np.int64)
    group_count = np.zeros(count, np.int64)
    group_n = np.zeros((count, suits), np.int64)
    group_code = np.zeros((count, suits), np.int64)
    group_options = np.zeros((count, suits), np.int64)
    group_size = np.zeros((count, suits), np.int64)
    total = 0
    for i, (key, shape) in enumerate(keyed):
        keys[i] = key
        offsets[i] = total
        size = 1
        runs = Counter(shape)
        for g, pattern in enumerate(sorted(runs, reverse=True)):
            n = runs[pattern]
            options = _configurations(pattern, ranks)
            multisets = math.comb(options + n - 1, n)
            if multisets * (options + n) >= _MAX_INDEX:
                raise AbstractionError(
                    f"expected a deck and deal whose indices fit 62 bits, got {ranks} ranks x "
                    f"{suits} suits dealt {list(per_round)!r}"
                )
            group_count[i] = g + 1
            group_n[i, g] = n
            group_code[i, g] = code(pattern)
            group_options[i, g] = options
            group_size[i, g] = multisets
            size *= multisets
        total += size
        if total >= _MAX_INDEX:
            raise AbstractionError(
                f"expected a deck and deal whose indices fit 62 bits, got {ranks} ranks x "
                f"{suits} suits dealt {list(per_round)!r}"
            )
    offsets[count] = total
    for array in (keys, offsets, group_count, group_n, group_code, group_options, group_size):
        array.setflags(write=False)
    return _Round(
        size=total,
        keys=keys,
        offsets=offsets,
        group_count=group_count,
        group_n=group_n,
        group_code=group_code,
        group_options=group_options,
        group_size=group_size,
    )


# --------------------------------------------------------------------------- public API


class KernelTables(NamedTuple):
    """The flat tables of one round, for numba kernels that call :func:`index_one` or
    :func:`unindex_one` themselves (:meth:`HandIndexer.kernel_tables`); read-only."""

    rounds: int
    per_round: Int64Array
    ranks: int
    suits: int
    base: int
    binom: Int64Array
    keys: Int64Array
    offsets: Int64Array
    group_count: Int64Array
    group_n: Int64Array
    group_code: Int64Array
    group_options: Int64Array
    group_size: Int64Array


def _check_count(name: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not lo <= value <= hi:
        raise AbstractionError(f"expected {name} to be an int in {lo}..{hi}, got {value!r}")
    return int(value)


class HandIndexer:
    """Dense numbering of the suit-isomorphism classes of each round (module docstring).

    ``HandIndexer((2, 3, 1, 1))`` numbers hold'em hands with perfect recall of the streets;
    ``HandIndexer((2, 5))`` numbers (hole cards, river board) pairs. Round ``r``'s classes
    are ``0 .. size(r) - 1``; a hand after round ``r`` is the first
    ``cards_per_round[0] + .. + cards_per_round[r]`` cards of the deal.
    """

    def __init__(
        self,
        cards_per_round: Sequence[int],
        *,
        num_ranks: int = NUM_RANKS,
        num_suits: int = NUM_SUITS,
    ) -> None:
        """Build the tables (milliseconds for hold'em).

        Raises:
            ValueError: unless ``cards_per_round`` is 1..8 positive ints, ``num_ranks`` is
                1..62, ``num_suits`` 1..8, the deal fits the deck, and every index fits 62
                bits.
        """
        self._ranks = _check_count("num_ranks", num_ranks, 1, 62)
        self._suits = _check_count("num_suits", num_suits, 1, 8)
        if not isinstance(cards_per_round, Sequence) or not 1 <= len(cards_per_round) <= 8:
            raise AbstractionError(
                f"expected cards_per_round to be 1..8 card counts, got {cards_per_round!r}"
            )
        per_round = tuple(
            _check_count("every entry of cards_per_round", k, 1, self._ranks * self._suits)
            for k in cards_per_round
        )
        if sum(per_round) > self._ranks * self._suits:
            raise AbstractionError(
                f"expected at most {self._ranks * self._suits} cards in all, got "
                f"cards_per_round {list(per_round)!r}"
            )
        self._per_round = per_round
        self._base = max(per_round) + 1
        if self._base ** (len(per_round) * self._suits) >= _MAX_INDEX:
            raise AbstractionError(
                f"expected fewer rounds or suits (shape keys must fit 62 bits), got "
                f"cards_per_round {list(per_round)!r} with {self._suits} suits"
            )
        binom = np.zeros((self._ranks + 1, self._base), np.int64)
        for n in range(self._ranks + 1):
            for k in range(self._base):
                binom[n, k] = math.comb(n, k)
        binom.setflags(write=False)
        self._binom = binom
        self._per_round_array = np.array(per_round, np.int64)
        self._per_round_array.setflags(write=False)
        self._tables = tuple(
            _build_round(per_round[: r + 1], self._ranks, self._suits, self._base)
            for r in range(len(per_round))
        )
        self._prefix = tuple(itertools.accumulate(per_round))

    def __repr__(self) -> str:
        return (
            f"HandIndexer({list(self._per_round)!r}, num_ranks={self._ranks}, "
            f"num_suits={self._suits})"
        )

    @property
    def cards_per_round(self) -> tuple[int, ...]:
        """Cards dealt in each round."""
        return self._per_round

    @property
    def num_rounds(self) -> int:
        return len(self._per_round)

    @property
    def num_ranks(self) -> int:
        return self._ranks

    @property
    def num_suits(self) -> int:
        return self._suits

    @property
    def sizes(self) -> tuple[int, ...]:
        """Classes after each round."""
        return tuple(t.size for t in self._tables)

    def size(self, round_: int) -> int:
        """Classes of the hands after round ``round_``.

        Raises:
            ValueError: for a round outside ``0 .. num_rounds - 1``.
        """
        return self._tables[self._check_round(round_)].size

    def cards_in(self, round_: int) -> int:
        """Cards in a hand after round ``round_``.

        Raises:
            ValueError: for a round outside ``0 .. num_rounds - 1``.
        """
        return self._prefix[self._check_round(round_)]

    def hands(self, round_: int) -> int:
        """Hands after round ``round_`` (each round's cards a set): the multiplicities' sum.

        Raises:
            ValueError: for a round outside ``0 .. num_rounds - 1``.
        """
        left = self._ranks * self._suits
        value = 1
        for k in self._per_round[: self._check_round(round_) + 1]:
            value *= math.comb(left, k)
            left -= k
        return value

    def round_of(self, num_cards: int) -> int:
        """The round after which a hand holds ``num_cards`` cards.

        Raises:
            ValueError: unless ``num_cards`` is one of :attr:`cards_per_round`'s running sums.
        """
        if num_cards not in self._prefix:
            raise AbstractionError(
                f"expected a hand of {' or '.join(map(str, self._prefix))} cards "
                f"(cards per round {list(self._per_round)!r}), got {num_cards!r} cards"
            )
        return self._prefix.index(num_cards)

    def kernel_tables(self, round_: int) -> KernelTables:
        """The arrays and sizes :func:`index_one` / :func:`unindex_one` take for a round.

        Raises:
            ValueError: for a round outside ``0 .. num_rounds - 1``.
        """
        r = self._check_round(round_)
        t = self._tables[r]
        return KernelTables(
            rounds=r + 1,
            per_round=self._per_round_array,
            ranks=self._ranks,
            suits=self._suits,
            base=self._base,
            binom=self._binom,
            keys=t.keys,
            offsets=t.offsets,
            group_count=t.group_count,
            group_n=t.group_n,
            group_code=t.group_code,
            group_options=t.group_options,
            group_size=t.group_size,
        )

    def index(self, cards: Sequence[int]) -> int:
        """Class of a hand: its cards in deal order, complete rounds only.

        Raises:
            ValueError: unless ``cards`` are distinct card indices of this deck, as many as
                complete rounds hold.
        """
        self._check_hand(cards)
        return int(self.index_batch(np.array([cards], np.int64), check=False)[0])

    def index_rounds(self, cards: Sequence[int]) -> tuple[int, ...]:
        """Class after each complete round of ``cards``: ``index(cards[:cards_in(r)])``.

        Raises:
            ValueError: as :meth:`index`.
        """
        last = self._check_hand(cards)
        return tuple(
            int(self.index_batch(np.array([cards[: self._prefix[r]]]), check=False)[0])
            for r in range(last + 1)
        )

    def unindex(self, round_: int, index: int) -> tuple[int, ...]:
        """The canonical hand of class ``index`` after round ``round_``.

        Each round's cards come ascending; suit 0 is the suit with the most cards in the
        first round where suits differ, and so on (module docstring).

        Raises:
            ValueError: for a round outside ``0 .. num_rounds - 1`` or an index outside
                ``0 .. size(round_) - 1``.
        """
        cards, _ = self.unindex_batch(round_, [self._check_index(round_, index)])
        return tuple(int(c) for c in cards[0])

    def multiplicity(self, round_: int, index: int) -> int:
        """Hands in class ``index`` after round ``round_`` (each round's cards a set).

        Raises:
            ValueError: as :meth:`unindex`.
        """
        _, counts = self.unindex_batch(round_, [self._check_index(round_, index)])
        return int(counts[0])

    def canonical(self, cards: Sequence[int]) -> tuple[int, ...]:
        """The canonical hand of ``cards``' class: ``unindex(round, index(cards))``.

        Raises:
            ValueError: as :meth:`index`.
        """
        index = self.index(cards)  # validates the hand
        return self.unindex(self.round_of(len(cards)), index)

    def index_batch(self, cards: npt.ArrayLike, *, check: bool = True) -> Int64Array:
        """Classes of many hands at once: one hand per row, all after the same round.

        With ``check=False`` the cards are trusted to be distinct cards of this deck (for
        callers that dealt them): a bad row then gives a meaningless index or -1, never an
        out-of-bounds access, and the check's sort is saved.

        Raises:
            ValueError: unless ``cards`` is a 2-D integer array of hands after one round;
                with ``check=True``, also unless every row is distinct cards of this deck.
        """
        array = self._check_batch(cards, check=check)
        round_ = self._prefix.index(array.shape[1])
        table = self._tables[round_]
        out = np.empty(array.shape[0], np.int64)
        _index_batch(
            array, round_ + 1, self._per_round_array, self._ranks, self._suits, self._base,
            self._binom, table.keys, table.offsets, table.group_count, table.group_n,
            table.group_size, out,
        )  # fmt: skip
        return out

    def unindex_batch(self, round_: int, indices: npt.ArrayLike) -> tuple[Int64Array, Int64Array]:
        """Canonical hands (one per row) and multiplicities of many classes of one round.

        Raises:
            ValueError: for a round outside ``0 .. num_rounds - 1``, or indices that are not
                a 1-D integer array in ``0 .. size(round_) - 1``.
        """
        r = self._check_round(round_)
        table = self._tables[r]
        raw = np.asarray(indices)
        if raw.ndim != 1 or (raw.size and raw.dtype.kind not in "iu"):
            raise AbstractionError(
                f"expected a 1-D array of class indices, got {type(indices).__name__} of "
                f"shape {raw.shape} and dtype {raw.dtype}"
            )
        array = np.ascontiguousarray(raw, dtype=np.int64)
        if array.size and (array.min() < 0 or array.max() >= table.size):
            bad = array[(array < 0) | (array >= table.size)][0]
            raise AbstractionError(
                f"expected class indices in 0..{table.size - 1} for round {r}, got {int(bad)!r}"
            )
        out = np.zeros((array.shape[0], self._prefix[r]), np.int64)
        multiplicity = np.zeros(array.shape[0], np.int64)
        _unindex_batch(
            array, r + 1, self._per_round_array, self._ranks, self._suits, self._base,
            self._binom, table.offsets, table.group_count, table.group_n, table.group_code,
            table.group_options, table.group_size, out, multiplicity,
        )  # fmt: skip
        return out, multiplicity

    # ----------------------------------------------------------------------- checks

    def _check_round(self, round_: object) -> int:
        if (
            isinstance(round_, bool)
            or not isinstance(round_, int | np.integer)
            or not 0 <= round_ < len(self._per_round)
        ):
            raise AbstractionError(f"expected a round in 0..{len(self._per_round) - 1}, got "
                                   f"{round_!r}")
        return int(round_)

    def _check_index(self, round_: int, index: object) -> int:
        r = self._check_round(round_)
        size = self._tables[r].size
        if (
            isinstance(index, bool)
            or not isinstance(index, int | np.integer)
            or not 0 <= index < size
        ):
            raise AbstractionError(
                f"expected a class index in 0..{size - 1} for round {r}, got {index!r}"
            )
        return int(index)

    def _check_hand(self, cards: Sequence[int]) -> int:
        deck = self._ranks * self._suits
        seen = 0
        for card in cards:
            if (
                isinstance(card, bool)
                or not isinstance(card, int | np.integer)
                or not 0 <= card < deck
            ):
                raise AbstractionError(
                    f"expected card indices in 0..{deck - 1}, got {card!r} in {list(cards)!r}"
                )
            if (seen >> int(card)) & 1:
                raise AbstractionError(f"expected distinct cards, got {card!r} twice in "
                                       f"{list(cards)!r}")
            seen |= 1 << int(card)
        return self.round_of(len(cards))

    def _check_batch(self, cards: npt.ArrayLike, *, check: bool) -> Int64Array:
        raw = np.asarray(cards)
        if raw.ndim != 2 or (raw.size and raw.dtype.kind not in "iu"):
            raise AbstractionError(
                f"expected a 2-D integer array of hands (one per row), got shape {raw.shape} "
                f"and dtype {raw.dtype}"
            )
        self.round_of(raw.shape[1])
        array = np.ascontiguousarray(raw, dtype=np.int64)
        deck = self._ranks * self._suits
        if array.size == 0 or not check:
            return array
        bad_rows = np.flatnonzero(((array < 0) | (array >= deck)).any(axis=1))
        if bad_rows.size:
            row = int(bad_rows[0])
            raise AbstractionError(
                f"expected card indices in 0..{deck - 1}, got row {row} = {array[row].tolist()!r}"
            )
        ordered = np.sort(array, axis=1)
        dup_rows = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if dup_rows.size:
            row = int(dup_rows[0])
            raise AbstractionError(
                f"expected distinct cards in every hand, got row {row} = {array[row].tolist()!r}"
            )
        return array


_HOLDEM_BOARDS: Final = (0, 3, 4, 5)


def holdem_indexer(recall: Literal["board", "perfect"] = "board", round_: int = 3) -> HandIndexer:
    """The indexer for hold'em hands after betting round ``round_`` (0..3), cached.

    ``recall="board"`` is ``HandIndexer((2, n))`` with ``n`` the board size of the round
    (``HandIndexer((2,))`` preflop): index a hand as ``indexer.index([*hole, *board])``.
    ``recall="perfect"`` is ``HandIndexer((2, 3, 1, 1))`` whatever the round; its round
    ``r`` numbers (hole, flop, turn, river) prefixes.

    Raises:
        ValueError: for another recall or a round outside 0..3.
    """
    if recall not in ("board", "perfect"):
        raise AbstractionError(f"expected recall 'board' or 'perfect', got {recall!r}")
    if isinstance(round_, bool) or round_ not in (0, 1, 2, 3):
        raise AbstractionError(f"expected a hold'em round 0..3, got {round_!r}")
    if recall == "perfect":
        return _cached_indexer((2, 3, 1, 1))
    return _cached_indexer((2,) if round_ == 0 else (2, _HOLDEM_BOARDS[round_]))


_INDEXERS: dict[tuple[int, ...], HandIndexer] = {}


def _cached_indexer(per_round: tuple[int, ...]) -> HandIndexer:
    indexer = _INDEXERS.get(per_round)
    if indexer is None:
        indexer = _INDEXERS[per_round] = HandIndexer(per_round)
    return indexer
