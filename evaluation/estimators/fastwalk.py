"""The ``sampled-agents`` walk of strategy files against ``builtin:random`` as a numba
kernel (issue 18, item 4): heads-up no-limit hold'em, the values of the reference walk
(:class:`evaluation.estimators.estimator._JointWalk`) deal by deal.

The hot case of ``acpc-match --estimator sampled-agents`` (the default run: variants of
one hold'em file that differ in the mapping or the purification, each against
``builtin:random``) is walked here: per deal, per seating and per variant, the single
path a sampled walk follows. (The joint walk's sharing of common prefixes buys nothing
at this speed; each variant still gets exactly its own walk's values.)

The kernel runs the agent's own functions, compiled, where they are plain functions numba
can compile: the seven built-in mappings (the one table,
:data:`agent.abstraction.translation.BUILTIN_MAPPINGS`, compiled with a dispatch generated
over its indices: :func:`~agent.abstraction.translation.mapping_kernel`), the bracket of a
bet (:func:`~agent.abstraction.translation.bracket_in`), the purification
(:func:`~agent.strategy.purification.purify_row`) and the draw of an action
(:func:`~agent.strategy.purification.sample_index_in`). It holds one for one, on flat
arrays, the rules whose Python form numba cannot compile (objects, text, hashlib):

* the betting state of :class:`agent.acpc.betting.BettingState` (``initial``,
  ``apply``, ``raise_bounds``, ``can_fold``, the betting text, the payoffs of a fold and
  of a heads-up showdown): the core's engine is immutable objects over tuples and text,
  stdlib only; this is its heads-up no-limit arithmetic over an int64 array;
* the hashed draws (:func:`evaluation.estimators.estimator._hash_u64`): BLAKE2b with an
  8-byte digest (RFC 7693) of ``salt|repr(key)|betting``, the ``repr`` of each deal's keys
  made in Python. A draw's text is the betting so far, which the walk's own earlier draws
  decide, so the draws cannot be made in Python ahead of the walk; the kernel computes
  them (tested against :mod:`hashlib`);
* ``builtin:random``'s kinds (the cumulative weights computed in Python by the
  reference's own arithmetic) and raise sizes;
* :class:`evaluation.estimators.estimator.FileAgent` with its hashed draws: waiting for the
  real round, off-tree check/call, :func:`agent.policy.realise` and the sizes of a bet's
  reading in both size conventions (:func:`agent.abstraction.convention.read_bet`,
  :func:`~agent.abstraction.convention.bracket_sizes`);
* the card buckets: preflop classes and flop buckets computed in Python for all deals at
  once, the turn's and river's and the river odds against random's integrated hole from
  the hand-strength kernel (:func:`agent.abstraction.holdem_buckets.strength_moments`)
  called inside the walk.

The abstract tree is flattened lazily: a node's arrays are filled (from the tree, by the
rules engine) the first time a walk reaches it; the kernel then stops, reports the node,
and the deal is walked again from its start.

Anything outside this case (another game, no cached flop table, ...) is left to the Python
walk: :func:`numba_walk_for` returns None; for a plug-in mapping (which only Python can
run) it also warns (:class:`SlowPathWarning`, one line in ``acpc-match``). The tests
check the values against the Python walk deal by deal (float tolerance 1e-9) for several
seeds, both seatings, both mappings of the default run and more, both size conventions
and the purifications ``none``, ``full`` and a threshold.

Imports numpy, numba (through :mod:`agent.jit`) and :mod:`agent.abstraction.holdem_buckets`
when :func:`load_kernels` runs: only :mod:`evaluation.estimators.estimator` imports this
module, inside a function, once a hold'em file is being walked. Never imports
:mod:`evaluation.estimators.estimator`.
"""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from agent.abstraction.actions import ALL_IN
from agent.abstraction.translation import (
    MAPPING_NAMES,
    MappingFn,
    bracket_in,
    mapping_index,
    mapping_kernel,
)
from agent.abstraction.translation import share_rules as share_translation
from agent.acpc.betting import MAX_ACTIONS_PER_ROUND
from agent.acpc.errors import AbstractionError
from agent.strategy.purification import KINDS, purify_row, sample_index_in
from agent.strategy.purification import share_rules as share_purification

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from agent.abstraction.holdem_buckets import SCRATCH_SIZE, strength_moments

    IntArray = npt.NDArray[np.int64]
    FloatArray = npt.NDArray[np.float64]

FOLD, CALL, RAISE = 0, 1, 2
"""Action kinds in the kernel's arrays."""

SALTS = (b"act0", b"act1", b"see0", b"see1", b"kind", b"size")
"""The hashed draws' salts, by index (:func:`evaluation.estimators.estimator._hash_u64`)."""
_ACT, _SEE, _KIND, _SIZE = 0, 2, 4, 5

OK, NEED_NODE, BAD = 0, 1, 2
"""Kernel status codes: done, a tree node to flatten first, a state the walk rejects."""

MAPPINGS = MAPPING_NAMES
"""The built-in mappings the kernel computes, by index (the translation table's order)."""
PURIFICATIONS = KINDS
"""The purifications by index (:data:`agent.strategy.purification.KINDS`)."""

_ALL_IN = ALL_IN
_MAX_ACTIONS = MAX_ACTIONS_PER_ROUND
_BET_BYTES = 1024

_IV = (0x6A09E667F3BCC908, 0xBB67AE8584CAA73B, 0x3C6EF372FE94F82B, 0xA54FF53A5F1D36F1,
       0x510E527FADE682D1, 0x9B05688C2B3E6C1F, 0x1F83D9ABFB41BD6B, 0x5BE0CD19137E2179)
"""BLAKE2b's initial words (RFC 7693)."""
_SIGMA = (
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
    [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
    [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
    [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
    [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
    [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
    [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
    [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
    [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
    [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
)
"""BLAKE2b's message schedule (RFC 7693)."""

_KERNELS = ("_rotr", "_compress", "blake2b_u64", "deal_cards", "_next_player", "_initial",
            "_num_acting", "_raise_bounds", "_can_fold", "_to_call", "_apply",
            "_showdown_value", "_add_distinct", "_real_sizes", "_hash", "_uniform",
            "_strength", "sampled_values")
"""The module's kernels, plain functions until :func:`load_kernels` wraps them. The
translation and purification rules are not here: the kernels call the agent's own
functions (:func:`~agent.abstraction.translation.bracket_in`,
:func:`~agent.strategy.purification.purify_row`,
:func:`~agent.strategy.purification.sample_index_in`) and the table of mappings compiled
(:data:`_mapping`)."""



def _mapping(which: int, a: float, b: float, x: float) -> float:
    """The built-in mapping of table index ``which`` at ``(A, B, x)``: replaced by
    :func:`load_kernels` with :func:`agent.abstraction.translation.mapping_kernel`."""
    raise AbstractionError("expected the fast walk's kernels loaded (load_kernels)")


class SlowPathWarning(UserWarning):
    """The compiled walk cannot take a case that is otherwise its own (a plug-in mapping):
    the Python walk runs it (the same values, slower). ``acpc-match`` shows it on one
    line."""
_loaded = threading.Lock()
_state = {"loaded": False}


def load_kernels() -> None:
    """Make this module's functions numba kernels (:func:`agent.jit.kernel`, compiled once
    and cached on disk) and give them their globals (``np``, the strength kernel), once.

    Why not at import: every module of :mod:`evaluation.match` loads no numpy or numba when
    imported (the layer rule of ``tests/test_layers.py``); this one loads them when a
    hold'em walk is about to run (:func:`numba_walk_for` calls it first). The kernels
    are the module-level functions, so numba's disk cache knows them.
    """
    with _loaded:
        if _state["loaded"]:
            return
        import numpy

        from agent.abstraction import holdem_buckets
        from agent.jit import kernel

        g = globals()
        g["np"] = numpy
        share_translation()
        share_purification()
        g["_mapping"] = mapping_kernel()
        g["SCRATCH_SIZE"] = holdem_buckets.SCRATCH_SIZE
        g["strength_moments"] = holdem_buckets.strength_moments
        for name in _KERNELS:
            g[name] = kernel(g[name])
        _state["loaded"] = True


def blake2b_tables() -> tuple[Any, Any]:
    """BLAKE2b's initial words (uint64) and message schedule (int64) as the kernels' arrays
    (:func:`blake2b_u64`); loads the kernels."""
    load_kernels()
    return np.array(_IV, dtype=np.uint64), np.array(_SIGMA, dtype=np.int64)


# ------------------------------------------------------------------------- BLAKE2b


def _rotr(x: np.uint64, n: int) -> np.uint64:
    return (x >> np.uint64(n)) | (x << np.uint64(64 - n))


def _compress(h: Any, m: Any, v: Any, iv: Any, sigma: Any, t: int, last: bool) -> None:
    for i in range(8):
        v[i] = h[i]
        v[i + 8] = iv[i]
    v[12] ^= np.uint64(t)
    if last:
        v[14] = ~v[14]
    for r in range(12):
        s = sigma[r % 10]
        for j in range(8):
            if j < 4:
                a, b, c, d = j, j + 4, j + 8, j + 12
            else:
                a = j - 4
                b = 4 + (j - 3) % 4
                c = 8 + (j - 2) % 4
                d = 12 + (j - 1) % 4
            x = m[s[2 * j]]
            y = m[s[2 * j + 1]]
            v[a] = v[a] + v[b] + x
            v[d] = _rotr(v[d] ^ v[a], 32)
            v[c] = v[c] + v[d]
            v[b] = _rotr(v[b] ^ v[c], 24)
            v[a] = v[a] + v[b] + y
            v[d] = _rotr(v[d] ^ v[a], 16)
            v[c] = v[c] + v[d]
            v[b] = _rotr(v[b] ^ v[c], 63)
    for i in range(8):
        h[i] ^= v[i] ^ v[i + 8]


def blake2b_u64(msg: Any, n: int, iv: Any, sigma: Any, work: Any) -> np.uint64:
    """``int.from_bytes(hashlib.blake2b(msg[:n], digest_size=8).digest(), "little")``
    (``n`` >= 1). ``work``: 40 uint64 of scratch."""
    h = work[0:8]
    m = work[8:24]
    v = work[24:40]
    for i in range(8):
        h[i] = iv[i]
    h[0] ^= np.uint64(0x01010008)  # fan-out 1, depth 1, no key, 8-byte digest
    done = 0
    while True:
        size = min(128, n - done)
        for i in range(16):
            m[i] = np.uint64(0)
        for i in range(size):
            m[i // 8] |= np.uint64(msg[done + i]) << np.uint64(8 * (i % 8))
        done += size
        final = done >= n
        _compress(h, m, v, iv, sigma, done, final)
        if final:
            return np.uint64(h[0])


# ------------------------------------------------------------------------- dealing


def deal_cards(seed: int, deck: Any, out: Any) -> None:
    """:func:`agent.acpc.dealing.deal_hands` of ``seed``: the cards of hands
    ``0 .. len(out) - 1`` into the rows of ``out`` (every hole in position order, then
    the board), by MT19937 (``init_genrand``) and the reference draw rule."""
    mask = np.uint64(0xFFFFFFFF)
    mt = np.zeros(624, np.uint64)
    mt[0] = np.uint64(seed)
    for i in range(1, 624):
        prev = mt[i - 1]
        mt[i] = (np.uint64(1812433253) * (prev ^ (prev >> np.uint64(30))) + np.uint64(i)) & mask
    index = 624
    work = np.empty(deck.shape[0], np.int64)
    for h in range(out.shape[0]):
        work[:] = deck
        n = deck.shape[0]
        for j in range(out.shape[1]):
            if index >= 624:
                for i in range(624):
                    y = (mt[i] & np.uint64(0x80000000)) | (mt[(i + 1) % 624]
                                                           & np.uint64(0x7FFFFFFF))
                    v = mt[(i + 397) % 624] ^ (y >> np.uint64(1))
                    if y & np.uint64(1):
                        v ^= np.uint64(0x9908B0DF)
                    mt[i] = v
                index = 0
            y = mt[index]
            index += 1
            y ^= y >> np.uint64(11)
            y ^= (y << np.uint64(7)) & np.uint64(0x9D2C5680)
            y ^= (y << np.uint64(15)) & np.uint64(0xEFC60000)
            y ^= y >> np.uint64(18)
            pick = np.int64(y % np.uint64(n))
            out[h, j] = work[pick]
            n -= 1
            work[pick] = work[n]


# ------------------------------------------------------------------- betting state

# state layout (int64): spent 0-1, folded 2-3, max_spent 4, min_raise_to 5, round 6,
# player 7, finished 8, actions this round 9, betting length 10, round-start spent 11-12
_SP, _FO, _MAX, _MIN, _RD, _PL, _FIN, _NACT, _BLEN, _RS = 0, 2, 4, 5, 6, 7, 8, 9, 10, 11


def _next_player(st: Any, stack: Any, current: int) -> int:
    q = current
    for _ in range(2):
        q = (q + 1) % 2
        if st[_FO + q] == 0 and st[_SP + q] < stack[q]:
            return q
    return -1


def _initial(st: Any, stack: Any, blind: Any, first_player: Any) -> None:
    st[:] = 0
    st[_SP] = blind[0]
    st[_SP + 1] = blind[1]
    mx = max(blind[0], blind[1])
    st[_MAX] = mx
    st[_MIN] = 2 * mx if mx else 1
    st[_PL] = _next_player(st, stack, first_player[0] - 1)


def _num_acting(st: Any, stack: Any) -> int:
    n = 0
    for q in range(2):
        if st[_FO + q] == 0 and st[_SP + q] < stack[q]:
            n += 1
    return n


def _raise_bounds(st: Any, stack: Any, max_raises: Any, kinds: Any, out: Any) -> bool:
    """``BettingState.raise_bounds`` (no-limit) into ``out``; False for None."""
    if st[_FIN]:
        return False
    raises = 0
    for i in range(st[_NACT]):
        if kinds[i] == RAISE:
            raises += 1
    if raises >= max_raises[st[_RD]]:
        return False
    if st[_NACT] + 2 > _MAX_ACTIONS:
        return False
    if _num_acting(st, stack) <= 1:
        return False
    s = stack[st[_PL]]
    if st[_MIN] > s:
        if st[_MAX] >= s:
            return False
        out[0] = s
        out[1] = s
        return True
    out[0] = st[_MIN]
    out[1] = s
    return True


def _can_fold(st: Any, stack: Any) -> bool:
    if st[_FIN]:
        return False
    p = st[_PL]
    return bool(st[_SP + p] != st[_MAX] and st[_SP + p] != stack[p])


def _to_call(st: Any, stack: Any, p: int) -> int:
    return int(max(0, min(st[_MAX], stack[p]) - st[_SP + p]))


def _apply(st: Any, kind: int, size: int, stack: Any, big_blind: int, num_rounds: int,
           first_player: Any, kinds: Any, actors: Any, bet: Any) -> bool:
    """``BettingState._apply_unchecked`` (no-limit, heads-up); False if the betting text
    would overflow."""
    p = st[_PL]
    n = st[_BLEN]
    if n + 16 + num_rounds >= bet.shape[0] or st[_NACT] >= kinds.shape[0]:
        return False
    if kind == FOLD:
        st[_FO + p] = 1
        bet[n] = 102  # f
        n += 1
    elif kind == CALL:
        st[_SP + p] = stack[p] if st[_MAX] > stack[p] else st[_MAX]
        bet[n] = 99  # c
        n += 1
    else:
        if 2 * size - st[_MAX] > st[_MIN]:
            st[_MIN] = 2 * size - st[_MAX]
        st[_MAX] = size
        st[_SP + p] = size
        bet[n] = 114  # r
        n += 1
        digits = 1
        x = size
        while x >= 10:
            x //= 10
            digits += 1
        x = size
        for i in range(digits):
            bet[n + digits - 1 - i] = 48 + x % 10
            x //= 10
        n += digits
    kinds[st[_NACT]] = kind
    actors[st[_NACT]] = p
    st[_NACT] += 1
    acting = _num_acting(st, stack)
    finished = False
    r = st[_RD]
    called = 0
    for i in range(st[_NACT] - 1, -1, -1):
        k = kinds[i]
        if k == FOLD:
            continue
        if st[_SP + actors[i]] < stack[actors[i]]:
            called += 1
        if k == RAISE:
            break
    new_round = False
    if st[_FO] + st[_FO + 1] + 1 >= 2:
        finished = True
    elif called >= acting:
        if acting > 1:
            if r + 1 < num_rounds:
                r += 1
                st[_MIN] = max(1, big_blind) + st[_MAX]
                bet[n] = 47  # /
                n += 1
                st[_RS] = st[_SP]
                st[_RS + 1] = st[_SP + 1]
                new_round = True
            else:
                finished = True
        else:
            finished = True
            last = num_rounds - 1
            while r < last:
                bet[n] = 47
                n += 1
                r += 1
            new_round = True
    st[_RD] = r
    st[_BLEN] = n
    if new_round:
        st[_NACT] = 0
    if finished:
        st[_FIN] = 1
        st[_PL] = -1
    elif st[_NACT] > 0:
        st[_PL] = _next_player(st, stack, actors[st[_NACT] - 1])
    else:
        st[_PL] = _next_player(st, stack, first_player[r] - 1)
    return True


def _showdown_value(spent0: int, spent1: int, rank0: int, rank1: int) -> float:
    """``BettingState._showdown_value`` of position 0, heads-up, nobody folded."""
    if spent0 == 0:
        return 0.0
    if spent1 == 0:  # position 1 put nothing in: only position 0's pot
        return 0.0
    value = 0.0
    s0, s1 = spent0, spent1
    r0, r1 = rank0, rank1
    count = 2
    while True:
        if count == 2:
            size = min(s0, s1)
            win = max(r0, r1)
            winners = (1 if r0 == win else 0) + (1 if r1 == win else 0)
        else:
            size = s0
            win = r0
            winners = 1
        if r0 == win:
            value += float(size * (count - winners)) / float(winners)
        else:
            value -= float(size)
        s0 -= size
        if s0 == 0:
            return value
        if count == 2:
            s1 -= size
            if s1 == 0:
                count = 1


# -------------------------------------------------------------------- the agent


def _add_distinct(tos: Any, idx: Any, n: int, to: int, i: int) -> int:
    """Append raise-to ``to`` (of abstract action ``i``) to the first ``n`` entries of
    ``tos``/``idx`` unless it is there already; returns the new count."""
    for j in range(n):
        if tos[j] == to:
            return n
    tos[n] = to
    idx[n] = i
    return n + 1


def _real_sizes(st: Any, base: int, node: int, nact: Any, akind: Any, afrac: Any,
                call_index: Any, has_raise: bool, bounds: Any, sizes: Any, opts: Any, tos: Any,
                idx: Any) -> int:
    """:func:`agent.abstraction.convention.bracket_sizes` in the ``real`` convention (the
    node's raises realised in the real state, where the player to act raises; merged as
    there) into ``sizes`` and ``opts``; returns their count."""
    all_in = -1
    for i in range(nact[node]):
        if akind[node, i] == RAISE and afrac[node, i] == _ALL_IN:
            all_in = i
            break
    n = 0
    if has_raise:
        lo, hi = bounds[0], bounds[1]
        for i in range(nact[node]):
            if akind[node, i] != RAISE or i == all_in:
                continue
            fr = afrac[node, i]
            if fr == _ALL_IN:
                to = hi
            else:
                to = min(max(math.floor(st[_MAX] + fr * base + 0.5), lo), hi)
            if to == hi and all_in >= 0:
                continue
            n = _add_distinct(tos, idx, n, to, i)
        if all_in >= 0:
            n = _add_distinct(tos, idx, n, hi, all_in)
    for j in range(1, n):  # by raise-to (distinct)
        k = j
        while k > 0 and tos[k - 1] > tos[k]:
            tos[k - 1], tos[k] = tos[k], tos[k - 1]
            idx[k - 1], idx[k] = idx[k], idx[k - 1]
            k -= 1
    sizes[0] = 0.0
    opts[0] = call_index[node]
    for j in range(n):
        sizes[j + 1] = (tos[j] - st[_MAX]) / base
        opts[j + 1] = idx[j]
    return n + 1


def _hash(salt: int, salts: Any, keys: Any, key_at: int, key_len: int, bet: Any, blen: int,
          msg: Any, iv: Any, sigma: Any, work: Any) -> np.uint64:
    """``_hash_u64``: BLAKE2b of ``salt|repr(key)|betting``."""
    n = 0
    for i in range(salts.shape[1]):
        msg[n] = salts[salt, i]
        n += 1
    msg[n] = 124  # |
    n += 1
    for i in range(key_len):
        msg[n] = keys[key_at + i]
        n += 1
    msg[n] = 124
    n += 1
    for i in range(blen):
        msg[n] = bet[i]
        n += 1
    return blake2b_u64(msg, n, iv, sigma, work)


def _uniform(h: np.uint64) -> float:
    return float(h) / 2.0**64


def _strength(hole: Any, board: Any, n_board: int, rivers: int, perms: Any, tkeys: Any,
              card_bits: Any, offsets: Any, values: Any, flush_values: Any, cards: Any,
              scratch: Any, out: Any, moment: int) -> float:
    cards[:] = 0
    cards[0] = hole[0]
    cards[1] = hole[1]
    for i in range(n_board):
        cards[2 + i] = board[i]
    strength_moments(cards, n_board, rivers, perms, tkeys, card_bits, offsets, values,
                     flush_values, scratch, out)
    return float(out[moment])


def sampled_values(
    start: int, holes: Any, boards: Any, pre_bucket: Any, flop_bucket: Any,
    keys: Any, key_at: Any, key_len: Any, salts: Any,
    stack: Any, blind: Any, first_player: Any, max_raises: Any, big_blind: int,
    num_rounds: int, board_through: Any,
    rcum: Any,
    ready: Any, term: Any, nround: Any, nplayer: Any, nact: Any, akind: Any, afrac: Any,
    ax: Any, child: Any, fold_child: Any, call_child: Any, call_index: Any,
    row_offsets: Any, row_k: Any, table: Any, quant: float,
    thresholds: Any, n_thresholds: Any, rivers: int,
    var_mapping: Any, var_purify: Any, var_threshold: Any, var_real: Any,
    perms: Any, tkeys: Any, card_bits: Any, offsets: Any, values: Any, flush_values: Any,
    iv: Any, sigma: Any,
    out: Any, status: Any,
) -> int:
    """Walk deals ``start..`` (every seating and variant) into ``out[deal, seating,
    variant]`` (position 0's chips); returns the first deal not done (all of them, or
    the one where ``status`` says why it stopped: ``NEED_NODE`` with the node, or
    ``BAD``)."""
    st = np.zeros(16, np.int64)
    kinds = np.zeros(_MAX_ACTIONS + 8, np.int64)
    actors = np.zeros(_MAX_ACTIONS + 8, np.int64)
    bet = np.zeros(_BET_BYTES, np.uint8)
    msg = np.zeros(_BET_BYTES + 128, np.uint8)
    work = np.zeros(40, np.uint64)
    bounds = np.zeros(2, np.int64)
    row = np.zeros(akind.shape[1], np.float64)
    sizes = np.zeros(akind.shape[1] + 1, np.float64)
    opts = np.zeros(akind.shape[1] + 1, np.int64)
    tos = np.zeros(akind.shape[1] + 1, np.int64)
    idx = np.zeros(akind.shape[1] + 1, np.int64)
    two = np.zeros(2, np.float64)
    cards = np.zeros(7, np.int64)
    scratch = np.zeros(SCRATCH_SIZE, np.int64)
    mom = np.zeros(2, np.float64)
    buckets = np.zeros(4, np.int64)
    n_var = var_mapping.shape[0]
    status[0] = OK
    for d in range(start, holes.shape[0]):
        for pos in range(2):
            q = 1 - pos
            hole = holes[d, pos]
            buckets[:] = -1
            buckets[0] = pre_bucket[d, pos]
            buckets[1] = flop_bucket[d, pos]
            hs = -1.0
            for var in range(n_var):
                _initial(st, stack, blind, first_player)
                node = 0
                off = False
                while st[_FIN] == 0:
                    p = st[_PL]
                    rd = st[_RD]
                    kind = CALL
                    size = 0
                    if p == pos:
                        if not off:
                            if not ready[node]:
                                status[0] = NEED_NODE
                                status[1] = node
                                return d
                            if not term[node] and nround[node] > rd:
                                pass  # waits for the real round: check/call
                            elif term[node] or nplayer[node] != pos or nround[node] != rd:
                                off = True
                            else:
                                b = buckets[rd]
                                if b < 0:
                                    m = _strength(hole, boards[d], board_through[rd], rivers,
                                                  perms, tkeys, card_bits, offsets, values,
                                                  flush_values, cards, scratch, mom, 1)
                                    b = np.searchsorted(thresholds[rd - 1, :n_thresholds[rd - 1]],
                                                        m, side="right")
                                    buckets[rd] = b
                                k = row_k[node]
                                at = row_offsets[node] + b * k
                                for i in range(k):
                                    row[i] = float(table[at + i])
                                    if quant > 0.0:
                                        row[i] /= quant
                                if not purify_row(row, k, var_purify[var],
                                                  var_threshold[var]):
                                    status[0] = BAD
                                    status[1] = node
                                    return d
                                u = _uniform(_hash(_ACT + pos, salts, keys, key_at[d, 0],
                                                   key_len[d, 0], bet, st[_BLEN], msg, iv,
                                                   sigma, work))
                                i = sample_index_in(row, k, u)
                                ak = akind[node, i]
                                if ak == FOLD:
                                    kind = FOLD if _can_fold(st, stack) else CALL
                                elif ak == RAISE and _raise_bounds(st, stack, max_raises,
                                                                   kinds, bounds):
                                    fr = afrac[node, i]
                                    if fr == _ALL_IN:
                                        to = bounds[1]
                                    else:
                                        base = st[_SP] + st[_SP + 1] + _to_call(st, stack, p)
                                        to = math.floor(st[_MAX] + fr * base + 0.5)
                                        to = min(max(to, bounds[0]), bounds[1])
                                    kind = RAISE
                                    size = to
                                node = child[node, i]
                    else:
                        mask = 2
                        if _can_fold(st, stack):
                            mask |= 1
                        has_raise = _raise_bounds(st, stack, max_raises, kinds, bounds)
                        if has_raise:
                            mask |= 4
                        u = _uniform(_hash(_KIND, salts, keys, key_at[d, 1 + p],
                                           key_len[d, 1 + p], bet, st[_BLEN], msg, iv, sigma,
                                           work))
                        kind = -1
                        last = -1
                        for k2 in range(3):
                            if mask & (1 << k2):
                                last = k2
                                if kind < 0 and u < rcum[mask, k2]:
                                    kind = k2
                        if kind < 0:
                            kind = last
                        if kind == RAISE:
                            h = _hash(_SIZE, salts, keys, key_at[d, 1 + p], key_len[d, 1 + p],
                                      bet, st[_BLEN], msg, iv, sigma, work)
                            span = np.uint64(bounds[1] - bounds[0] + 1)
                            size = bounds[0] + np.int64(h % span)
                        # the agent reads random's action (at the state before it)
                        if not off:
                            if not ready[node]:
                                status[0] = NEED_NODE
                                status[1] = node
                                return d
                            if not term[node] and nround[node] > rd:
                                pass
                            elif term[node] or nplayer[node] != p or nround[node] != rd:
                                off = True
                            elif kind == FOLD:
                                if fold_child[node] >= 0:
                                    node = fold_child[node]
                                else:
                                    off = True
                            elif call_child[node] < 0:
                                status[0] = BAD
                                status[1] = node
                                return d
                            else:
                                n_sizes = 1
                                sizes[0] = 0.0
                                opts[0] = call_index[node]
                                for i in range(nact[node]):
                                    if akind[node, i] == RAISE:
                                        sizes[n_sizes] = ax[node, i]
                                        opts[n_sizes] = i
                                        n_sizes += 1
                                base = st[_SP] + st[_SP + 1] + _to_call(st, stack, p)
                                if kind == CALL or n_sizes == 1:
                                    node = call_child[node]
                                elif base <= 0:
                                    status[0] = BAD
                                    status[1] = node
                                    return d
                                else:
                                    x = (size - st[_MAX]) / base
                                    certain = -1
                                    if var_real[var]:
                                        n_sizes = _real_sizes(st, base, node, nact, akind, afrac,
                                                              call_index, has_raise, bounds,
                                                              sizes, opts, tos, idx)
                                        if has_raise and size == bounds[1]:
                                            for j in range(n_sizes):
                                                if afrac[node, opts[j]] == _ALL_IN:
                                                    certain = j
                                                    break
                                    if certain >= 0:
                                        lo_i, hi_i = certain, certain
                                    else:
                                        lo_i, hi_i = bracket_in(sizes, n_sizes, x)
                                    low = child[node, opts[lo_i]]
                                    if lo_i == hi_i:
                                        node = low
                                    else:
                                        f = _mapping(var_mapping[var], sizes[lo_i],
                                                     sizes[hi_i], x)
                                        two[0] = f
                                        two[1] = 1.0 - f
                                        u = _uniform(_hash(_SEE + pos, salts, keys,
                                                           key_at[d, 0], key_len[d, 0], bet,
                                                           st[_BLEN], msg, iv, sigma, work))
                                        if sample_index_in(two, 2, u) == 0:
                                            node = low
                                        else:
                                            node = child[node, opts[hi_i]]
                    if not _apply(st, kind, size, stack, big_blind, num_rounds, first_player,
                                  kinds, actors, bet):
                        status[0] = BAD
                        status[1] = -1
                        return d
                # the leaf: position 0's chips
                if st[_FO] + st[_FO + 1] > 0:
                    v = -float(st[_SP]) if st[_FO] else 0 + float(st[_SP + 1])
                else:
                    if hs < 0.0:
                        hs = _strength(hole, boards[d], 5, 1, perms, tkeys, card_bits,
                                       offsets, values, flush_values, cards, scratch, mom, 0)
                    hi, lo = (1, 0) if q == 1 else (0, 1)
                    win_pay = _showdown_value(st[_SP], st[_SP + 1], hi, lo)
                    tie_pay = _showdown_value(st[_SP], st[_SP + 1], 0, 0)
                    lose_pay = _showdown_value(st[_SP], st[_SP + 1], lo, hi)
                    v = hs * win_pay + 0.0 * tie_pay + (1.0 - hs) * lose_pay
                out[d, pos, var] = v
    return int(holes.shape[0])


# ---------------------------------------------------------------- the Python side


def preflop_classes(holes: IntArray) -> IntArray:
    """:func:`agent.abstraction.holdem_spec.preflop_class` of many holes at once (one per
    row; the cards are trusted: dealt by the walk): the preflop bucket of
    :class:`~agent.abstraction.holdem_buckets.HoldemCards`."""
    ranks = holes // 4
    hi = ranks.max(axis=1)
    lo = ranks.min(axis=1)
    suited = holes[:, 0] % 4 == holes[:, 1] % 4
    out: IntArray = np.where(suited, 13 * hi + lo, 13 * lo + hi).astype(np.int64)
    return out


class NumbaWalk:
    """The kernel's arrays for some strategy-file agents of one file against
    ``builtin:random`` (:func:`numba_walk_for` says when it applies)."""

    def __init__(self, agents: Sequence[Any], random_weights: dict[Any, float],
                 flop_batch: Callable[[Any, Any], Any]) -> None:
        from agent.acpc.betting import ActionKind

        self.iv, self.sigma = blake2b_tables()
        first = agents[0]
        self.agents = agents
        self.loaded = first.loaded
        self.tree = first.tree
        self.cards = first.loaded.cards
        game = self.tree.game
        self.game = game
        self._kind = {ActionKind.FOLD: FOLD, ActionKind.CALL: CALL, ActionKind.RAISE: RAISE}
        self.var_mapping = np.array([mapping_index(a.mapping) for a in agents], np.int64)
        self.var_purify = np.array([PURIFICATIONS.index(a.purification.kind) for a in agents],
                                   np.int64)
        self.var_threshold = np.array([float(a.purification.threshold) for a in agents],
                                      np.float64)
        self.var_real = np.array([a.sizes_in == "real" for a in agents], np.bool_)
        self.stack = np.array(game.stack, np.int64)
        self.blind = np.array(game.blind, np.int64)
        self.first_player = np.array(game.first_player, np.int64)
        self.max_raises = np.array(game.max_raises, np.int64)
        self.board_through = np.array([game.board_cards_through(r)
                                       for r in range(game.num_rounds)], np.int64)
        # builtin:random's cumulative kind weights by legal mask (fold 1, call 2, raise 4),
        # by RandomAgent.act's own arithmetic
        self.rcum = np.full((8, 3), 2.0, np.float64)
        order = (ActionKind.FOLD, ActionKind.CALL, ActionKind.RAISE)
        for mask in range(8):
            legal = [k for i, k in enumerate(order) if mask & (1 << i)]
            if not legal:
                continue
            weights = [random_weights[k] for k in legal]
            total = math.fsum(weights)
            acc = 0.0
            for k, w in zip(legal, weights, strict=True):
                acc += w / total
                self.rcum[mask, order.index(k)] = acc
        self.salts = np.frombuffer(b"".join(SALTS), np.uint8).reshape(len(SALTS), 4).copy()
        strategy = self.loaded.strategy
        layout = strategy.layout
        self.row_offsets = np.asarray(layout.offsets, np.int64)
        num_actions = np.asarray(layout.num_actions, np.int64)
        self.row_k = num_actions
        n = len(self.row_offsets)
        width = max(1, int(num_actions.max()) if n else 1)
        table = np.asarray(strategy.table).view(np.ndarray)
        self.table = table
        self.quant = 0.0
        from agent.strategy.fileformat import DTYPES, QUANT

        if table.dtype == DTYPES["uint16"]:
            self.quant = float(QUANT)
        self.ready = np.zeros(n, np.bool_)
        self.term = np.zeros(n, np.bool_)
        self.nround = np.zeros(n, np.int64)
        self.nplayer = np.zeros(n, np.int64)
        self.nact = np.zeros(n, np.int64)
        self.akind = np.zeros((n, width), np.int64)
        self.afrac = np.zeros((n, width), np.float64)
        self.ax = np.zeros((n, width), np.float64)
        self.child = np.zeros((n, width), np.int64)
        self.fold_child = np.full(n, -1, np.int64)
        self.call_child = np.full(n, -1, np.int64)
        self.call_index = np.zeros(n, np.int64)
        th = [list(self.cards._thresholds[r]) for r in range(3)]
        self.n_thresholds = np.array([len(t) for t in th], np.int64)
        self.thresholds = np.zeros((3, max(1, *(len(t) for t in th))), np.float64)
        for r, t in enumerate(th):
            self.thresholds[r, :len(t)] = t
        self.rivers = int(self.cards.flop_rivers_per_turn)
        from agent.acpc.cards import deck_for

        self.deck = np.array(deck_for(game), np.int64)
        self.flop_batch = flop_batch
        """The flop buckets of many (hole, flop) hands at once
        (:func:`evaluation.estimators.estimator.flop_bucket_batch` with the cached table)."""
        self.nodes_filled = 0
        self._compiled = False
        """True once :meth:`values` has run the kernel (compiled or loaded from the cache)."""

    def fill(self, node_id: int) -> None:
        """Flatten tree node ``node_id`` (built by the tree on first use)."""
        node = self.tree.nodes[node_id]
        i = node_id
        self.term[i] = node.is_terminal
        self.nround[i] = node.round
        self.nplayer[i] = node.player
        self.nact[i] = len(node.actions)
        if len(node.actions) > self.akind.shape[1]:
            raise AbstractionError(f"expected at most {self.akind.shape[1]} actions at node "
                                   f"{i}, got {len(node.actions)}")
        for j, (a, c) in enumerate(zip(node.actions, node.children, strict=True)):
            k = self._kind[a.action.kind]
            self.akind[i, j] = k
            self.afrac[i, j] = a.fraction
            self.ax[i, j] = a.x
            self.child[i, j] = c
            if k == FOLD:
                self.fold_child[i] = c
            elif k == CALL:
                self.call_child[i] = c
                self.call_index[i] = j
        self.ready[i] = True
        self.nodes_filled += 1

    def deal(self, seed: int, hands: int) -> IntArray:
        """The cards of hands ``0 .. hands - 1`` of deal seed ``seed`` (rows: both holes,
        then the board), as :func:`agent.acpc.dealing.deal_hands` deals them."""
        out = np.zeros((hands, 9), np.int64)
        deal_cards(seed, self.deck, out)
        return out

    def deal_arrays(self, cards: IntArray, keys: Sequence[tuple[int, ...]],
                    ) -> tuple[Any, ...]:
        """The per-deal arrays: holes, boards, preflop and flop buckets, key reprs."""
        n = len(cards)
        holes = np.ascontiguousarray(cards[:, :4]).reshape(n, 2, 2)
        boards = np.ascontiguousarray(cards[:, 4:9])
        pre = preflop_classes(holes.reshape(2 * n, 2)).reshape(n, 2)
        hands = np.concatenate([holes.reshape(2 * n, 2), np.repeat(boards[:, :3], 2, axis=0)],
                               axis=1)
        flop = np.asarray(self.flop_batch(self.cards, hands), np.int64).reshape(n, 2)
        texts = []
        for k in keys:
            texts += [repr(k).encode(), repr((*k, 0)).encode(), repr((*k, 1)).encode()]
        lengths = np.array([len(t) for t in texts], np.int64)
        at = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        blob = np.frombuffer(b"".join(texts), np.uint8).copy()
        return holes, boards, pre, flop, blob, at.reshape(n, 3), lengths.reshape(n, 3)

    def values(self, cards: IntArray, keys: Sequence[tuple[int, ...]]) -> FloatArray:
        """Position 0's chips per deal (``cards``: rows of :meth:`deal`; ``keys``: each
        deal's key for the hashed draws), seating (the agents in position 0, then 1) and
        agent.

        Raises:
            AbstractionError: where the Python walk would raise (an abstract node without
                a call, a row without mass) or the betting outgrows the kernel's buffers.
        """
        holes, boards, pre, flop, blob, at, lengths = self.deal_arrays(cards, keys)
        n = len(cards)
        out = np.zeros((n, 2, len(self.agents)), np.float64)
        status = np.zeros(2, np.int64)
        from agent.abstraction.holdem_buckets import STRENGTH_TABLES

        t = STRENGTH_TABLES
        start = 0
        if not self._compiled:
            from agent.console import compile_notice

            with compile_notice("acpc-match", [sampled_values],
                                hint="about 50 s; later runs load them from numba's cache"):
                start = self._walk(start, holes, boards, pre, flop, blob, at, lengths, t,
                                   out, status)
            self._compiled = True
        while start < n:
            start = self._walk(start, holes, boards, pre, flop, blob, at, lengths, t, out,
                               status)
        return out

    def _walk(self, start: int, holes: Any, boards: Any, pre: Any, flop: Any, blob: Any,
              at: Any, lengths: Any, t: Any, out: Any, status: Any) -> int:
        """One run of the kernel from deal ``start``: it returns where it stopped, after
        filling the tree node it needed (or raising for a stop it does not cover)."""
        start = sampled_values(
            start, holes, boards, pre, flop, blob, at, lengths, self.salts,
            self.stack, self.blind, self.first_player, self.max_raises,
            self.game.big_blind, self.game.num_rounds, self.board_through, self.rcum,
            self.ready, self.term, self.nround, self.nplayer, self.nact, self.akind,
            self.afrac, self.ax, self.child, self.fold_child, self.call_child,
            self.call_index, self.row_offsets, self.row_k, self.table, self.quant,
            self.thresholds, self.n_thresholds, self.rivers,
            self.var_mapping, self.var_purify, self.var_threshold, self.var_real,
            t.perms, t.card_keys, t.card_bits, t.offsets, t.values, t.flush_values,
            self.iv, self.sigma, out, status)
        if status[0] == NEED_NODE:
            self.fill(int(status[1]))
        elif status[0] == BAD:
            raise AbstractionError(f"expected a walk the kernel covers, got a stop at node "
                                   f"{int(status[1])} of deal {start}")
        return start


def plugin_notice(mappings: Sequence[MappingFn]) -> str:
    """The one line saying that the compiled walk cannot take these mappings."""
    names = ", ".join(sorted({repr(getattr(fn, "__name__", str(fn))) for fn in mappings}))
    return (f"mapping {names} is a plug-in, which the compiled sampled-agents walk cannot "
            f"run: the Python walk runs instead (the same values, slower)")


def numba_walk_for(agents: Sequence[Any], random_weights: dict[Any, float],
                   flop_batch: Callable[[Any, Any], Any] | None) -> NumbaWalk | None:
    """The kernel's walk of ``agents`` (:class:`evaluation.estimators.estimator.FileAgent`) against
    ``builtin:random``, or None outside its case (module docstring); ``flop_batch``: the
    flop buckets of many hands from the cached flop table (None: no table)."""
    from agent.abstraction.holdem_buckets import HoldemCards

    if not agents:
        return None
    first = agents[0]
    game = first.tree.game
    if not (game.num_players == 2 and game.is_nolimit and game.num_rounds == 4
            and game.num_hole_cards == 2 and game.num_suits * game.num_ranks == 52
            and [game.board_cards_through(r) for r in range(4)] == [0, 3, 4, 5]
            and all(s > b for s, b in zip(game.stack, game.blind, strict=True))):
        return None
    for a in agents:
        if (a.loaded is not first.loaded or a.cards is not first.cards
                or a.sizes_in not in ("abstract", "real")
                or a.purification.kind not in PURIFICATIONS):
            return None
    if type(first.loaded.cards) is not HoldemCards:
        return None
    plugins = [a.mapping for a in agents if mapping_index(a.mapping) is None]
    if plugins:  # the case is the kernel's but for the plug-in: say so
        warnings.warn(plugin_notice(plugins), SlowPathWarning, stacklevel=2)
        return None
    if first.flop is None or flop_batch is None:
        return None
    load_kernels()
    return NumbaWalk(agents, random_weights, flop_batch)
