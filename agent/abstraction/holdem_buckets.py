"""Hold'em card abstraction: lossless preflop classes and E[HS^2] percentile buckets.

Role: :class:`HoldemCards` (a :class:`~agent.abstraction.buckets.CardAbstraction`) maps the
cards one player sees in heads-up hold'em (52-card deck, 2 hole cards, board 0/3/1/1) to a
bucket per round, and the numba kernels behind it also give hand-strength numbers for
baselines (``builtin:equity``).

**Preflop** (round 0) is lossless: the 169 suit-isomorphism classes. With ``hi >= lo`` the
ranks of the two hole cards (0 = deuce .. 12 = ace), the class index is ``13 * row + col``
in the usual 13 x 13 grid, :func:`preflop_class`::

    pair          13 * r  + r     (row == col == r)
    suited        13 * hi + lo    (row > col)
    offsuit       13 * lo + hi    (row < col)

so 0 = 22, 1 = 32o, 13 = 32s, 168 = AA, 167 = AKs, 155 = AKo. Every index in 0..168 is
one class: 13 pairs of 6 combinations, 78 suited of 4, 78 offsuit of 12 (1326 in all).

**Postflop** the metric is E[HS^2] against one uniformly random opponent hand:

* river (5 board cards): ``HS = (wins + ties / 2) / 990`` over the 990 opponent hole pairs
  of the 45 unseen cards, exactly; the metric is ``HS^2``;
* turn: the mean of the river ``HS^2`` over the 46 river cards, exactly;
* flop: exact would take 1081 run-outs x 990 opponents (~1 M evaluations, milliseconds), so
  it is a deterministic Monte-Carlo estimate, stratified by turn card: for each of the 47
  turn cards, ``rivers_per_turn`` distinct river cards drawn without replacement (default
  :data:`FLOP_RIVERS_PER_TURN`), each run-out's river ``HS^2`` exact. The draws come from a
  32-bit generator seeded by a hash of the suit-canonical form of the cards (hole sorted,
  flop sorted, the smallest of the 24 suit relabellings), so the same cards, in any order
  and under any suit permutation, always give the very same value. With
  ``rivers_per_turn = 46`` every ordered (turn, river) pair is used once, i.e. each
  run-out twice, which is the exact value.

A river HS needs far fewer than 990 evaluations: opponent pairs are grouped by their two
ranks and, when the board has three or more cards of one suit, by which of the two cards
are of that suit (the value depends on nothing else): 91 evaluations, or at most 338 with
three or more suited board cards, each counted with its number of pairs
(:func:`river_score`).

Every sum is of integers (``2 * wins + ties``, and its square) and is divided once at the
end, so the values are reproducible bit for bit, with or without the JIT.

**Buckets.** Per postflop round the spec stores sorted thresholds ``t`` (``n - 1`` of them for
``n`` buckets); the bucket of a metric value ``v`` is the number of thresholds ``<= v``,
i.e. ``bisect.bisect_right(t, v)`` = ``np.searchsorted(t, v, side="right")``: bucket ``b``
holds ``t[b - 1] <= v < t[b]``. :meth:`HoldemCards.build` takes the thresholds as
percentiles of the metric over uniformly random deals (hole and board, numba, a fixed seed,
the same estimator as at decision time): with the ``N`` sampled values sorted as ``s``,
``t[i - 1] = s[(i * N) // n]`` for ``i = 1 .. n - 1``. Ties in the metric (river values are
discrete) can leave a bucket empty; that is harmless.

Spec (JSON-able, stored in strategy files as ``cards``)::

    {"kind": "holdem", "buckets": [169, n1, n2, n3], "metric": "ehs2",
     "thresholds": [[...n1 - 1], [...n2 - 1], [...n3 - 1]],
     "samples": N, "seed": S, "flop_rivers_per_turn": K}

``samples`` and ``seed`` record how the thresholds were made; ``flop_rivers_per_turn`` is
the flop estimator's parameter (default :data:`FLOP_RIVERS_PER_TURN` if absent), which must
be the one the thresholds were built with.

Speed: the flop estimate is the costliest bucket (the turn's exact mean next, then the
river and preflop); buckets are cached per (round, hole, board) in an LRU of 4096 entries.
``python scripts/bench_agent.py`` measures decision times (p50 / p99) with a strategy
file. :meth:`HoldemCards.build` spends nearly all its time on the flop. :func:`warm_up`
compiles every kernel (or loads it from numba's on-disk cache), so no JIT compile happens
on a match clock; :class:`HoldemCards` calls it on construction.

Kernels: :func:`agent.jit.kernel` functions over flat integer arrays that mutate
preallocated outputs, behind typed public wrappers that validate. They evaluate hands with
:func:`agent.handeval.hand_value` over :data:`agent.handeval.TABLES_7`. Kernel API (for
kernels elsewhere: :mod:`strategies.solvers.dealpool`, :mod:`strategies.cards.tables`):
:func:`strength_moments` (E[HS] and E[HS^2] of one hand, with ``*STRENGTH_TABLES`` and a
scratch array of :data:`SCRATCH_SIZE`), :func:`draw_cards` and :func:`hash32` (the card
generator), :func:`check_rivers_per_turn`; and, for batched callers that score every hole
of a board at once (:mod:`strategies.measure.lbr_cards`), the flop estimator's run-outs:
:func:`canonicalize`, :func:`runout_seed`, :func:`draw_rivers` and :data:`SCORE_SCALE`.

Imports numpy, numba, :mod:`agent.handeval` and (for a small sort kernel)
:mod:`agent.abstraction.isomorphism`; must never be imported by
:mod:`agent.acpc` or ``dealer`` (nor at import time by :mod:`agent.builtin` or
:mod:`agent.abstraction.buckets`, which import it lazily).
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Final, NamedTuple

import numpy as np
import numpy.typing as npt

from agent import handeval
from agent.abstraction.holdem_spec import (
    BOARD_SIZES,
    FLOP_RIVERS_PER_TURN,
    NUM_PREFLOP_CLASSES,
    check_board,
    check_bucket_counts,
    check_cards,
    check_holdem_game,
    check_holdem_spec,
    check_rivers_per_turn,
    check_thresholds,
    preflop_class,
    preflop_class_name,
)
from agent.abstraction.isomorphism import insertion_sort
from agent.acpc.cards import NUM_CARDS, NUM_RANKS, NUM_SUITS
from agent.acpc.errors import AbstractionError
from agent.acpc.gamedef import Game
from agent.handeval import (
    SUIT_BASE,
    SUIT_SHIFT,
    TABLES_7,
    hand_value,
)
from agent.jit import kernel

__all__ = [
    "BOARD_SIZES",
    "FLOP_RIVERS_PER_TURN",
    "NUM_PREFLOP_CLASSES",
    "OPPONENT_HANDS",
    "PREFLOP_EQUITY_SAMPLES",
    "HoldemCards",
    "check_holdem_game",
    "check_rivers_per_turn",
    "ehs2",
    "hand_strength_moments",
    "percentile_thresholds",
    "preflop_class",
    "preflop_class_name",
    "preflop_equity_table",
    "sample_deals",
    "sample_ehs2",
    "warm_up",
]

#: Opponent hole pairs once 7 cards are known: C(45, 2).
OPPONENT_HANDS: Final = 990
#: Deals per class behind :func:`preflop_equity_table`.
PREFLOP_EQUITY_SAMPLES: Final = 20_000
#: Default deals per postflop round behind :meth:`HoldemCards.build`.
DEFAULT_SAMPLES: Final = 50_000
DEFAULT_SEED: Final = 0

#: A run-out's score ``2 * wins + ties`` is HS * 1980; E[HS^2] = sum of squared scores /
#: (run-outs * SCORE_SCALE ** 2), the integers divided once.
SCORE_SCALE: Final = 2 * OPPONENT_HANDS
_CACHE_SIZE: Final = 4096
_MASK32: Final = 0xFFFFFFFF
_HASH_MUL_1: Final = 0x7FEB352D  # 32-bit hash multipliers below 2**31, so that a product
_HASH_MUL_2: Final = 0x2C1B3C6D  # of a 32-bit value never overflows an int64
_GOLDEN: Final = 0x9E3779B9

# Kernel scratch layout (one int64 array): river work, river candidates, canonical cards
# (and their scratch), sums.
_WORK_SIZE: Final = 8 * NUM_RANKS
_SUMS_AT: Final = _WORK_SIZE + NUM_CARDS + 14
SCRATCH_SIZE: Final = _SUMS_AT + 3
_SUIT_START: Final = 3  # every suit counter of a hand key starts at 3 (handeval)


Int = int | np.int64  # scalars in kernels: Python ints, or numpy's under NUMBA_DISABLE_JIT
Int64Array = npt.NDArray[np.int64]
Int32Array = npt.NDArray[np.int32]
Float64Array = npt.NDArray[np.float64]



# The 24 relabellings of the suits, one per row: card c becomes (c // 4) * 4 + row[c % 4].
_SUIT_PERMS: Final = np.array(list(itertools.permutations(range(NUM_SUITS))), dtype=np.int64)
_SUIT_PERMS.setflags(write=False)


# --------------------------------------------------------------------------- kernels


@kernel
def hash32(x: Int) -> int:
    """A 32-bit integer mix (xorshift-multiply), never 0; products stay below 2**63."""
    x = x & _MASK32
    x ^= x >> 16
    x = (x * _HASH_MUL_1) & _MASK32
    x ^= x >> 15
    x = (x * _HASH_MUL_2) & _MASK32
    x ^= x >> 16
    if x == 0:
        x = _GOLDEN
    return int(x)


@kernel
def next32(x: Int) -> int:
    """One step of Marsaglia's xorshift32 (state in 1 .. 2**32 - 1)."""
    x ^= (x << 13) & _MASK32
    x ^= x >> 17
    x ^= (x << 5) & _MASK32
    return int(x)


@kernel
def _below(x: Int, m: Int) -> int:
    """Map a 32-bit state to 0 .. m - 1 (multiply-shift)."""
    return int((x * m) >> 32)


@kernel
def river_score(
    h0: Int,
    h1: Int,
    key5: Int,
    bits5: Int,
    dead: Int,
    keys: Int64Array,
    card_bits: Int64Array,
    offsets: Int32Array,
    values: Int32Array,
    flush_values: Int32Array,
    work: Int64Array,
) -> int:
    """``2 * wins + ties`` of hole ``h0 h1`` against every opponent pair of live cards.

    The 990 opponent pairs are grouped by what their value depends on: the two ranks and,
    if the board has three or more cards of a suit ``s`` (at most one suit can), which of
    the two cards are of suit ``s`` (a flush in any other suit needs 5 of the 7 cards, and
    the board holds at most 2 of them). Each group is evaluated once with representative
    cards and counted with its number of pairs: 91 evaluations on a board with at most two
    cards of each suit, at most 338 otherwise, instead of 990.

    Args:
        key5, bits5: summed keys (plus the suit base) and bits of the 5 board cards.
        dead: bit mask of the 7 known cards; the other 45 are the opponent's candidates.
        work: scratch of at least :data:`_WORK_SIZE` entries.
    """
    ours = hand_value(
        key5 + keys[h0] + keys[h1], bits5 + card_bits[h0] + card_bits[h1],
        offsets, values, flush_values,
    )  # fmt: skip
    flush_suit = -1
    for suit in range(NUM_SUITS):
        if ((key5 >> (SUIT_SHIFT + 4 * suit)) & 15) >= _SUIT_START + 3:
            flush_suit = suit
    # Per rank: live cards of another suit (count, keys and bits of two of them) and the
    # live card of the flush suit (count 0/1, its key and bits).
    count_o = work[0:13]
    key_o = work[13:26]
    bits_o = work[26:39]
    key_o2 = work[39:52]
    bits_o2 = work[52:65]
    count_s = work[65:78]
    key_s = work[78:91]
    bits_s = work[91:104]
    for rank in range(NUM_RANKS):
        count_o[rank] = 0
        count_s[rank] = 0
    for card in range(NUM_CARDS):
        if (dead >> card) & 1:
            continue
        rank = card // NUM_SUITS
        if card % NUM_SUITS == flush_suit:
            count_s[rank] = 1
            key_s[rank] = keys[card]
            bits_s[rank] = card_bits[card]
        else:
            if count_o[rank] == 0:
                key_o[rank] = keys[card]
                bits_o[rank] = card_bits[card]
            else:
                key_o2[rank] = keys[card]
                bits_o2[rank] = card_bits[card]
            count_o[rank] += 1
    wins = 0
    ties = 0
    for a in range(NUM_RANKS):
        ka = key5 + key_o[a]
        ba = bits5 + bits_o[a]
        # two other-suit cards: a pair of rank a, then ranks a < b
        pairs = count_o[a] * (count_o[a] - 1) // 2
        if pairs > 0:
            value = hand_value(ka + key_o2[a], ba + bits_o2[a], offsets, values, flush_values)
            if value < ours:
                wins += pairs
            elif value == ours:
                ties += pairs
        if count_o[a] > 0:
            for b in range(a + 1, NUM_RANKS):
                pairs = count_o[a] * count_o[b]
                if pairs > 0:
                    value = hand_value(
                        ka + key_o[b], ba + bits_o[b], offsets, values, flush_values
                    )
                    if value < ours:
                        wins += pairs
                    elif value == ours:
                        ties += pairs
        if count_s[a] == 0:
            continue
        ks = key5 + key_s[a]
        bs = bits5 + bits_s[a]
        # the flush-suit card of rank a with an other-suit card of any rank b
        for b in range(NUM_RANKS):
            pairs = count_o[b]
            if pairs > 0:
                value = hand_value(ks + key_o[b], bs + bits_o[b], offsets, values, flush_values)
                if value < ours:
                    wins += pairs
                elif value == ours:
                    ties += pairs
        # two flush-suit cards, ranks a < b
        for b in range(a + 1, NUM_RANKS):
            if count_s[b] > 0:
                value = hand_value(ks + key_s[b], bs + bits_s[b], offsets, values, flush_values)
                if value < ours:
                    wins += 1
                elif value == ours:
                    ties += 1
    return 2 * wins + ties


@kernel
def canonicalize(cards: Int64Array, n: Int, perms: Int64Array, out: Int64Array) -> None:
    """``out[:n]``: the smallest suit relabelling of (sorted hole, sorted board).

    ``cards[:2]`` are the hole cards and ``cards[2:n]`` the board; forms are compared
    lexicographically, hole first. ``out`` needs ``2 * n`` entries (the second half is
    scratch).
    """
    for p in range(perms.shape[0]):
        for i in range(n):
            card = cards[i]
            out[n + i] = (card // NUM_SUITS) * NUM_SUITS + perms[p, card % NUM_SUITS]
        insertion_sort(out, n, n + 2)  # the hole part, then the board part
        insertion_sort(out, n + 2, 2 * n)
        smaller = p == 0
        if not smaller:
            for i in range(n):
                if out[n + i] != out[i]:
                    smaller = out[n + i] < out[i]
                    break
        if smaller:
            for i in range(n):
                out[i] = out[n + i]


@kernel
def runout_seed(canon: Int64Array, n: Int) -> int:
    """The flop estimator's generator state for the canonical cards ``canon[:n]`` (hole,
    then board; :func:`canonicalize`), before the first turn card."""
    state = hash32(_GOLDEN)
    for i in range(n):
        state = hash32(state ^ (canon[i] + 1 + 64 * i))
    return int(state)


@kernel
def draw_rivers(state: Int, with_turn: Int, rivers_per_turn: Int,
                rivers: Int64Array) -> tuple[int, int]:
    """The flop estimator's river cards for one turn card: ``rivers[:k]`` (in draw order)
    drawn without replacement from the cards not in ``with_turn`` (a bit set: hole, board,
    turn); returns ``(new state, k)`` with ``k = min(rivers_per_turn, cards left)``.
    ``rivers`` needs 52 entries. The one definition of the draw, for :func:`_score_sums`
    and for batched callers (sampled LBR's buckets of every hole)."""
    m = 0
    for river in range(NUM_CARDS):
        if not (with_turn >> river) & 1:
            rivers[m] = river
            m += 1
    k = min(rivers_per_turn, m)
    for j in range(k):
        state = next32(state)
        pick = j + _below(state, m - j)
        river = rivers[pick]
        rivers[pick] = rivers[j]
        rivers[j] = river
    return int(state), int(k)


@kernel
def _score_sums(
    cards: Int64Array,
    n_board: Int,
    rivers_per_turn: Int,
    perms: Int64Array,
    keys: Int64Array,
    card_bits: Int64Array,
    offsets: Int32Array,
    values: Int32Array,
    flush_values: Int32Array,
    scratch: Int64Array,
    sums: Int64Array,
) -> None:
    """``sums`` = (run-outs, sum of scores, sum of squared scores) for hole + 3..5 board.

    A score is a run-out's ``2 * wins + ties`` (:func:`river_score`). River: the one
    board. Turn: every river card. Flop: per turn card, ``rivers_per_turn`` river cards drawn
    without replacement by the card-seeded generator (module docstring), on the canonical
    form of the cards. ``scratch`` needs :data:`_SUMS_AT` entries.
    """
    work = scratch[0:_WORK_SIZE]
    rivers = scratch[_WORK_SIZE : _WORK_SIZE + NUM_CARDS]
    canon = scratch[_WORK_SIZE + NUM_CARDS : _WORK_SIZE + NUM_CARDS + 14]
    n = 2 + n_board
    if n_board == 3:
        canonicalize(cards, n, perms, canon)
    else:
        for i in range(n):
            canon[i] = cards[i]
    h0 = canon[0]
    h1 = canon[1]
    dead = np.int64(0)
    key = SUIT_BASE
    bits = np.int64(0)
    for i in range(n):
        dead |= np.int64(1) << canon[i]
        if i >= 2:
            key += keys[canon[i]]
            bits += card_bits[canon[i]]
    count = 0
    total = 0
    total_sq = 0
    if n_board == 5:
        score = river_score(
            h0, h1, key, bits, dead, keys, card_bits, offsets, values, flush_values,
            work,
        )  # fmt: skip
        count, total, total_sq = 1, score, score * score
    elif n_board == 4:
        for river in range(NUM_CARDS):
            if (dead >> river) & 1:
                continue
            score = river_score(
                h0, h1, key + keys[river], bits + card_bits[river],
                dead | (np.int64(1) << river), keys, card_bits, offsets, values,
                flush_values, work,
            )  # fmt: skip
            count += 1
            total += score
            total_sq += score * score
    else:
        state = runout_seed(canon, n)
        for turn in range(NUM_CARDS):
            if (dead >> turn) & 1:
                continue
            with_turn = dead | (np.int64(1) << turn)
            state, k = draw_rivers(state, with_turn, rivers_per_turn, rivers)
            for j in range(k):
                river = rivers[j]
                score = river_score(
                    h0, h1, key + keys[turn] + keys[river],
                    bits + card_bits[turn] + card_bits[river],
                    with_turn | (np.int64(1) << river), keys, card_bits, offsets, values,
                    flush_values, work,
                )  # fmt: skip
                count += 1
                total += score
                total_sq += score * score
    sums[0] = count
    sums[1] = total
    sums[2] = total_sq


@kernel
def strength_moments(
    cards: Int64Array,
    n_board: Int,
    rivers_per_turn: Int,
    perms: Int64Array,
    keys: Int64Array,
    card_bits: Int64Array,
    offsets: Int32Array,
    values: Int32Array,
    flush_values: Int32Array,
    scratch: Int64Array,
    out: Float64Array,
) -> None:
    """``out[0]`` = E[HS], ``out[1]`` = E[HS^2] over the run-outs of :func:`_score_sums`.

    ``scratch`` needs :data:`_SUMS_AT` + 3 entries. The integer sums are divided once, so
    the values are the same bit for bit wherever they are computed.
    """
    sums = scratch[_SUMS_AT : _SUMS_AT + 3]
    _score_sums(
        cards, n_board, rivers_per_turn, perms, keys, card_bits, offsets, values,
        flush_values, scratch, sums,
    )  # fmt: skip
    out[0] = sums[1] / (sums[0] * SCORE_SCALE)
    out[1] = sums[2] / (sums[0] * (SCORE_SCALE * SCORE_SCALE))


@kernel
def draw_cards(state: Int, dead: Int, count: Int, out: Int64Array, start: Int) -> int:
    """Deal ``count`` distinct cards not in ``dead`` into ``out[start:]``; new state."""
    for i in range(count):
        while True:
            state = next32(state)
            card = _below(state, NUM_CARDS)
            if not (dead >> card) & 1:
                break
        dead |= np.int64(1) << card
        out[start + i] = card
    return int(state)


@kernel
def _sample_ehs2_kernel(
    n_board: Int,
    seed: Int,
    rivers_per_turn: Int,
    perms: Int64Array,
    keys: Int64Array,
    card_bits: Int64Array,
    offsets: Int32Array,
    values: Int32Array,
    flush_values: Int32Array,
    scratch: Int64Array,
    deals: Int64Array,
    out: Float64Array,
) -> None:
    """``deals[i]``: the ``i``-th uniformly random deal, ``out[i]``: its E[HS^2].

    A deal is 2 hole cards then ``n_board`` board cards in ``deals[i, :2 + n_board]`` (the
    rest of the row is left as is). Deal ``i`` uses its own generator seeded from
    ``(seed, n_board, i)``, so it does not depend on how many deals are made. ``scratch``
    needs :data:`SCRATCH_SIZE` entries.
    """
    moments = np.zeros(2)
    for i in range(out.shape[0]):
        state = hash32(hash32(hash32(seed) ^ n_board) ^ (i & _MASK32))
        state = hash32(state ^ (i >> 32))
        cards = deals[i]
        draw_cards(state, np.int64(0), 2 + n_board, cards, 0)
        strength_moments(
            cards, n_board, rivers_per_turn, perms, keys, card_bits, offsets, values,
            flush_values, scratch, moments,
        )  # fmt: skip
        out[i] = moments[1]


@kernel
def _preflop_equity_kernel(
    holes: Int64Array,
    samples: Int,
    seed: Int,
    keys: Int64Array,
    card_bits: Int64Array,
    offsets: Int32Array,
    values: Int32Array,
    flush_values: Int32Array,
    out: Float64Array,
) -> None:
    """``out[c]``: all-in equity of ``holes[c]`` against a random hand, ``samples`` deals.

    Each deal is an opponent pair and a 5-card board, uniformly from the 50 other cards;
    equity = (wins + ties / 2) / samples.
    """
    dealt = np.zeros(7, np.int64)
    for c in range(holes.shape[0]):
        h0 = holes[c, 0]
        h1 = holes[c, 1]
        dead = (np.int64(1) << h0) | (np.int64(1) << h1)
        state = hash32(hash32(seed) ^ (c + 1))
        score = 0
        for _ in range(samples):
            state = draw_cards(state, dead, 7, dealt, 0)
            key = SUIT_BASE
            bits = np.int64(0)
            for i in range(2, 7):
                key += keys[dealt[i]]
                bits += card_bits[dealt[i]]
            ours = hand_value(
                key + keys[h0] + keys[h1], bits + card_bits[h0] + card_bits[h1],
                offsets, values, flush_values,
            )  # fmt: skip
            theirs = hand_value(
                key + keys[dealt[0]] + keys[dealt[1]],
                bits + card_bits[dealt[0]] + card_bits[dealt[1]],
                offsets, values, flush_values,
            )  # fmt: skip
            if ours > theirs:
                score += 2
            elif ours == theirs:
                score += 1
        out[c] = score / (2 * samples)


# --------------------------------------------------------------------------- tables



class StrengthTables(NamedTuple):
    """What :func:`strength_moments` takes after its first three arguments (read-only):
    the 24 suit relabellings and :data:`agent.handeval.TABLES_7`."""

    perms: Int64Array
    card_keys: Int64Array
    card_bits: Int64Array
    offsets: Int32Array
    values: Int32Array
    flush_values: Int32Array


STRENGTH_TABLES: Final = StrengthTables(_SUIT_PERMS, *TABLES_7)
"""Pass as ``*STRENGTH_TABLES`` to :func:`strength_moments`."""


# --------------------------------------------------------------------------- public API


def _class_representatives() -> Int64Array:
    """Two hole cards of each preflop class, ``(169, 2)``."""
    holes = np.zeros((NUM_PREFLOP_CLASSES, 2), np.int64)
    for index in range(NUM_PREFLOP_CLASSES):
        row, col = divmod(index, NUM_RANKS)
        hi, lo = max(row, col), min(row, col)
        suit = 0 if row > col else 1  # suited: both clubs; pairs and offsuit: clubs, diamonds
        holes[index] = (hi * NUM_SUITS, lo * NUM_SUITS + suit)
    return holes


def hand_strength_moments(
    hole: Sequence[int],
    board: Sequence[int],
    *,
    flop_rivers_per_turn: int = FLOP_RIVERS_PER_TURN,
) -> tuple[float, float]:
    """``(E[HS], E[HS^2])`` of ``hole`` on a 3-, 4- or 5-card ``board`` (module docstring).

    E[HS] is the all-in equity against a uniformly random hand (exact on the turn and river,
    the deterministic estimate on the flop); E[HS^2] is the bucketing metric.

    Raises:
        ValueError: unless ``hole`` is 2 cards, ``board`` 3..5 cards, all distinct in 0..51,
            and ``flop_rivers_per_turn`` in 1..46.
    """
    if len(board) not in (3, 4, 5):
        raise AbstractionError(f"expected a board of 3, 4 or 5 cards, got {list(board)!r}")
    check_cards(hole, board)
    check_rivers_per_turn(flop_rivers_per_turn)
    cards = np.zeros(7, np.int64)
    cards[:2] = hole
    cards[2 : 2 + len(board)] = board
    out = np.zeros(2)
    strength_moments(
        cards, len(board), flop_rivers_per_turn, *STRENGTH_TABLES,
        np.zeros(SCRATCH_SIZE, np.int64), out,
    )  # fmt: skip
    return float(out[0]), float(out[1])


def ehs2(
    hole: Sequence[int],
    board: Sequence[int],
    *,
    flop_rivers_per_turn: int = FLOP_RIVERS_PER_TURN,
) -> float:
    """E[HS^2] of ``hole`` on a 3-, 4- or 5-card ``board``: the postflop bucketing metric.

    Raises:
        ValueError: as :func:`hand_strength_moments`.
    """
    return hand_strength_moments(hole, board, flop_rivers_per_turn=flop_rivers_per_turn)[1]


def sample_deals(
    round_: int,
    samples: int,
    *,
    seed: int = DEFAULT_SEED,
    flop_rivers_per_turn: int = FLOP_RIVERS_PER_TURN,
) -> tuple[Int64Array, Float64Array]:
    """``samples`` uniformly random deals of postflop round ``round_`` (1..3) and E[HS^2].

    Returns ``(deals, values)``: ``deals`` of shape ``(samples, 2 + board cards)`` (hole
    cards first) and ``values[i]`` = :func:`ehs2` of deal ``i`` with the same estimator.
    Reproducible: deal ``i`` depends only on ``(seed, round_, i)``.

    Raises:
        ValueError: for a round outside 1..3, ``samples < 1``, a seed outside 0..2**32 - 1
            or a bad ``flop_rivers_per_turn``.
    """
    if round_ not in (1, 2, 3):
        raise AbstractionError(f"expected a postflop round 1..3, got {round_!r}")
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise AbstractionError(f"expected samples to be a positive int, got {samples!r}")
    _check_seed(seed)
    check_rivers_per_turn(flop_rivers_per_turn)
    n_board = BOARD_SIZES[round_]
    deals = np.zeros((samples, 7), np.int64)
    out = np.zeros(samples)
    _sample_ehs2_kernel(
        n_board, seed, flop_rivers_per_turn, *STRENGTH_TABLES,
        np.zeros(SCRATCH_SIZE, np.int64), deals, out,
    )  # fmt: skip
    return np.ascontiguousarray(deals[:, : 2 + n_board]), out


def sample_ehs2(
    round_: int,
    samples: int,
    *,
    seed: int = DEFAULT_SEED,
    flop_rivers_per_turn: int = FLOP_RIVERS_PER_TURN,
) -> Float64Array:
    """E[HS^2] of the deals of :func:`sample_deals` (what :meth:`HoldemCards.build` uses).

    Raises:
        ValueError: as :func:`sample_deals`.
    """
    return sample_deals(round_, samples, seed=seed, flop_rivers_per_turn=flop_rivers_per_turn)[1]


def _check_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= _MASK32:
        raise AbstractionError(f"expected seed to be an int in 0..{_MASK32}, got {seed!r}")


def percentile_thresholds(values: npt.ArrayLike, num_buckets: int) -> list[float]:
    """The ``num_buckets - 1`` thresholds splitting ``values`` into equal-count buckets.

    With ``s`` the values sorted and ``N`` their number: ``t[i - 1] = s[(i * N) // n]`` for
    ``i = 1 .. n - 1`` (module docstring).

    Raises:
        ValueError: if ``num_buckets < 1`` or there are fewer values than buckets.
    """
    array = np.sort(np.asarray(values, dtype=np.float64).ravel())
    if num_buckets < 1 or array.size < num_buckets:
        raise AbstractionError(
            f"expected at least {max(num_buckets, 1)} values for {num_buckets} buckets, "
            f"got {array.size}"
        )
    return [float(array[(i * array.size) // num_buckets]) for i in range(1, num_buckets)]


@functools.cache
def preflop_equity_table() -> tuple[float, ...]:
    """All-in equity of each preflop class against a uniformly random hand (169 values).

    A Monte-Carlo estimate with :data:`PREFLOP_EQUITY_SAMPLES` deals per class (standard
    error <= 0.0036) and a fixed seed, so always the same numbers; computed once per
    process, indexed by :func:`preflop_class`.
    """
    out = np.zeros(NUM_PREFLOP_CLASSES)
    _preflop_equity_kernel(
        _class_representatives(), PREFLOP_EQUITY_SAMPLES, DEFAULT_SEED, *TABLES_7, out,
    )  # fmt: skip
    return tuple(float(v) for v in out)


def warm_up() -> None:
    """Compile every kernel of this module (and :mod:`handeval`'s) now, not on a match clock.

    Idempotent; a fraction of a second with numba's on-disk cache warm. The preflop equity
    table is not built here (:func:`preflop_equity_table` is, once, by its users).
    """
    handeval.warm_up()
    hand_strength_moments([0, 1], [2, 3, 4], flop_rivers_per_turn=1)
    hand_strength_moments([0, 1], [2, 3, 4, 5])
    hand_strength_moments([0, 1], [2, 3, 4, 5, 6])
    sample_ehs2(3, 1)
    out = np.zeros(1)
    _preflop_equity_kernel(
        _class_representatives()[:1], 1, 0, *TABLES_7, out
    )


# --------------------------------------------------------------------------- abstraction



class HoldemCards:
    """Hold'em buckets: 169 preflop classes, E[HS^2] percentiles after (module docstring).

    Build new thresholds with :meth:`build`, rebuild from a strategy file's spec with
    :meth:`from_spec`. Construction compiles the kernels (:func:`warm_up`).
    """

    def __init__(
        self,
        thresholds: Sequence[Sequence[float]],
        *,
        flop_rivers_per_turn: int = FLOP_RIVERS_PER_TURN,
        samples: int | None = None,
        seed: int | None = None,
    ) -> None:
        """Use given thresholds (validated as in :meth:`from_spec`).

        Raises:
            ValueError: for thresholds that are not 3 sorted lists of numbers in [0, 1],
                or a bad ``flop_rivers_per_turn``.
        """
        checked = check_thresholds(thresholds)
        check_rivers_per_turn(flop_rivers_per_turn)
        self._thresholds = checked
        self._buckets = (NUM_PREFLOP_CLASSES, *(len(t) + 1 for t in checked))
        self._rivers_per_turn = flop_rivers_per_turn
        self._samples = samples
        self._seed = seed
        self._cache: OrderedDict[tuple[int, tuple[int, ...], tuple[int, ...]], int] = OrderedDict()
        warm_up()

    @classmethod
    def build(
        cls,
        buckets: Sequence[int] = (NUM_PREFLOP_CLASSES, 50, 50, 50),
        *,
        samples: int = DEFAULT_SAMPLES,
        seed: int = DEFAULT_SEED,
        flop_rivers_per_turn: int = FLOP_RIVERS_PER_TURN,
    ) -> HoldemCards:
        """Thresholds as percentiles of E[HS^2] over ``samples`` random deals per round.

        Reproducible for a given ``(buckets, samples, seed, flop_rivers_per_turn)``. Time
        is dominated by the flop and turn rounds.

        Raises:
            ValueError: unless ``buckets`` is ``(169, n1, n2, n3)`` with every ``n >= 1``,
                ``samples >= max(n1, n2, n3)``, and the seed and estimator are valid.
        """
        counts = check_bucket_counts(buckets)
        most = max(counts[1:])
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < most:
            raise AbstractionError(
                f"expected samples to be an int >= the largest postflop bucket count {most}, "
                f"got {samples!r}"
            )
        _check_seed(seed)
        check_rivers_per_turn(flop_rivers_per_turn)
        warm_up()
        thresholds = [
            percentile_thresholds(
                sample_ehs2(r, samples, seed=seed, flop_rivers_per_turn=flop_rivers_per_turn),
                counts[r],
            )
            for r in (1, 2, 3)
        ]
        return cls(
            thresholds, flop_rivers_per_turn=flop_rivers_per_turn, samples=samples, seed=seed
        )

    @classmethod
    def from_spec(cls, game: Game, spec: dict[str, Any]) -> HoldemCards:
        """Rebuild the abstraction a strategy file's ``cards`` spec describes.

        Raises:
            ValueError: if ``game`` is not hold'em, or the spec is not a valid holdem spec
                (kind, metric, 4 bucket counts starting with 169, one sorted list of
                ``n - 1`` thresholds in [0, 1] per postflop round, int ``samples``/``seed``,
                ``flop_rivers_per_turn`` in 1..46), with a message naming the bad key.
        """
        return cls(**check_holdem_spec(game, spec))

    @property
    def buckets(self) -> tuple[int, ...]:
        """Buckets per round: ``(169, n1, n2, n3)``."""
        return self._buckets

    @property
    def thresholds(self) -> tuple[tuple[float, ...], ...]:
        """Sorted thresholds of rounds 1, 2 and 3."""
        return self._thresholds

    @property
    def flop_rivers_per_turn(self) -> int:
        """The flop estimator's river cards per turn card."""
        return self._rivers_per_turn

    @property
    def spec(self) -> dict[str, Any]:
        """JSON-able description; :meth:`from_spec` rebuilds the same abstraction."""
        spec: dict[str, Any] = {
            "kind": "holdem",
            "buckets": list(self._buckets),
            "metric": "ehs2",
            "thresholds": [list(t) for t in self._thresholds],
        }
        if self._samples is not None:
            spec["samples"] = self._samples
        if self._seed is not None:
            spec["seed"] = self._seed
        spec["flop_rivers_per_turn"] = self._rivers_per_turn
        return spec

    def metric(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> float:
        """E[HS^2] of the cards in postflop round ``round_`` (1..3), this estimator.

        Raises:
            ValueError: for a round outside 1..3 or cards that do not fit it.
        """
        if round_ not in (1, 2, 3):
            raise AbstractionError(f"expected a postflop round 1..3, got {round_!r}")
        check_board(round_, board)
        return ehs2(hole, board, flop_rivers_per_turn=self._rivers_per_turn)

    def bucket_of_value(self, round_: int, value: float) -> int:
        """Bucket of a metric value in postflop round ``round_``: thresholds ``<= value``."""
        return bisect.bisect_right(self._thresholds[round_ - 1], value)

    def bucket(self, round_: int, hole: Sequence[int], board: Sequence[int]) -> int:
        """Bucket of own ``hole`` cards and the ``board`` visible in ``round_`` (0..3).

        Raises:
            ValueError: for a round outside 0..3, a board of the wrong size for the round,
                or cards that are not distinct indices in 0..51.
        """
        if round_ == 0:
            check_board(0, board)
            return preflop_class(hole)
        key = (round_, tuple(hole), tuple(board))
        cache = self._cache
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
            return hit
        check_board(round_, board)
        metric = ehs2(hole, board, flop_rivers_per_turn=self._rivers_per_turn)
        value = self.bucket_of_value(round_, metric)
        cache[key] = value
        if len(cache) > _CACHE_SIZE:
            cache.popitem(last=False)
        return value


