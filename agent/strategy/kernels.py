"""numba kernels for strategy tables: the content checksum, the row checks in one pass, and
purification of whole tables (:func:`purify_rows`, the agent's one purification rule
compiled), and regret matching of one row (:func:`match_row`: the one copy, which the
offline solvers of :mod:`strategies.solvers.kernels` and the live re-solver of
:mod:`agent.resolve` both run).

A 1 GB table must be validated in well under a second for hot-swap, so both run over the
raw bytes at memory speed instead of through hashlib and per-node numpy calls.

Checksum ``acpc64x4``: the table bytes, zero-padded to a multiple of 32, are cut into
blocks of ``BLOCK`` bytes (the last one shorter); each block is read as little-endian
uint64 words in four interleaved lanes, lane ``i`` starting at ``SEED + i * K`` and taking
each of its words as ``h = rotl64(h ^ (w * K1), 29) * K2``; a block's hash folds its four
lanes with the same step starting from ``SEED``; the checksum folds the block hashes in
order and then the byte length, and prints as 16 hex digits. Blocks are independent, so
the kernel hashes them in parallel. It detects corruption (every bit of every word feeds
the state); it is not a cryptographic hash. :func:`checksum_py` is the slow pure-Python
definition the tests hold the kernel to.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import numpy.typing as npt

from agent.acpc.errors import AbstractionError
from agent.jit import inline_kernel, kernel, parallel_kernel
from agent.strategy.purification import KINDS, Purification, purify_row, share_rules

share_rules()  # the kernels below call purify_row compiled from its one definition

MASK = (1 << 64) - 1
SEED = 0x243F6A8885A308D3
K = 0x9E3779B97F4A7C15
K1 = 0xC2B2AE3D27D4EB4F
K2 = 0x165667B19E3779F9
ROT = 29
BLOCK = 1 << 20


def _step_py(h: int, w: int) -> int:
    h ^= (w * K1) & MASK
    h = ((h << ROT) | (h >> (64 - ROT))) & MASK
    return (h * K2) & MASK


def checksum_py(data: bytes) -> str:
    """The reference definition (slow): see the module docstring."""
    padded = data + b"\0" * (-len(data) % 32)
    h = SEED
    for start in range(0, len(padded), BLOCK):
        block = padded[start : start + BLOCK]
        lanes = [(SEED + i * K) & MASK for i in range(4)]
        for j in range(0, len(block), 8):
            w = int.from_bytes(block[j : j + 8], "little")
            lane = (j // 8) % 4
            lanes[lane] = _step_py(lanes[lane], w)
        b = SEED
        for lane_value in lanes:
            b = _step_py(b, lane_value)
        h = _step_py(h, b)
    return f"{_step_py(h, len(data)):016x}"


@inline_kernel
def _step(h: np.uint64, w: np.uint64) -> np.uint64:
    h ^= w * np.uint64(K1)
    h = (h << np.uint64(ROT)) | (h >> np.uint64(64 - ROT))
    return h * np.uint64(K2)


@kernel
def _block_hash(words: npt.NDArray[np.uint64], lo: int, hi: int) -> np.uint64:
    h0 = np.uint64(SEED)
    h1 = np.uint64((SEED + K) & MASK)
    h2 = np.uint64((SEED + 2 * K) & MASK)
    h3 = np.uint64((SEED + 3 * K) & MASK)
    for j in range(lo, hi, 4):
        h0 = _step(h0, words[j])
        h1 = _step(h1, words[j + 1])
        h2 = _step(h2, words[j + 2])
        h3 = _step(h3, words[j + 3])
    h = np.uint64(SEED)
    h = _step(h, h0)
    h = _step(h, h1)
    h = _step(h, h2)
    return _step(h, h3)


@parallel_kernel
def _checksum_words(
    words: npt.NDArray[np.uint64], tail: npt.NDArray[np.uint64], nbytes: int
) -> np.uint64:
    """``words``: the whole 32-byte groups; ``tail``: the last, zero-padded group (or none)."""
    per_block = BLOCK // 8
    n = words.shape[0] + tail.shape[0]
    blocks = (n + per_block - 1) // per_block
    hashes = np.empty(blocks, dtype=np.uint64)
    body = words.shape[0]
    for b in numba.prange(blocks):
        lo = b * per_block
        hi = min(lo + per_block, n)
        if hi <= body:
            hashes[b] = _block_hash(words, lo, hi)
        else:
            # the last block holds the tail: hash a small copy of it
            buf = np.empty(hi - lo, dtype=np.uint64)
            for j in range(lo, hi):
                buf[j - lo] = words[j] if j < body else tail[j - body]
            hashes[b] = _block_hash(buf, 0, hi - lo)
    h = np.uint64(SEED)
    for b in range(blocks):
        h = _step(h, hashes[b])
    return _step(h, np.uint64(nbytes))


def table_checksum(table: npt.NDArray[Any]) -> str:
    """``acpc64x4`` of a table's bytes (the table itself is never copied)."""
    raw = np.ascontiguousarray(table).view(np.uint8).reshape(-1)
    nbytes = raw.shape[0]
    body = nbytes - nbytes % 32
    words = raw[:body].view("<u8")
    words.flags.writeable = False  # one compiled signature, whether the table is read-only or not
    tail = np.zeros(0, dtype="<u8")
    if body != nbytes:
        pad = np.zeros(32, dtype=np.uint8)
        pad[: nbytes - body] = raw[body:]
        tail = pad.view("<u8")
    with np.errstate(over="ignore"):  # uint64 wrap-around is the point (no-JIT runs warn)
        return f"{int(_checksum_words(words, tail, nbytes)):016x}"


@kernel
def _check_float_node(
    table: npt.NDArray[Any], start: int, rows: int, k: int, tolerance: float,
    out: npt.NDArray[np.float64],
) -> int:
    for r in range(rows):
        base = start + r * k
        total = 0.0
        for a in range(k):
            v = float(table[base + a])
            if not np.isfinite(v):
                out[0] = 1.0
                out[1] = v
                return int(base + a)
            if v < 0.0:
                out[0] = 2.0
                out[1] = v
                return int(base + a)
            total += v
        if abs(total - 1.0) > tolerance:
            out[0] = 3.0
            out[1] = total
            return int(base)
    return -1


@parallel_kernel
def _float_rows_ok(
    table: npt.NDArray[np.float32],
    offsets: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int32],
    num_actions: npt.NDArray[np.int32],
    tolerance: float,
) -> bool:
    """Fast, branch-free path: True iff every value is in [0, 1 + tol] and every row sums to 1.

    NaN fails ``v >= 0``, infinities fail ``v <= 1 + tol``; on False the caller runs
    :func:`_check_float_rows` to name the first offender.
    """
    n = offsets.shape[0]
    bad = 0
    for node in numba.prange(n):
        start = offsets[node]
        if start < 0:
            continue
        k = num_actions[node]
        node_bad = 0
        for r in range(rows[node]):
            base = start + r * k
            total = 0.0
            lo_ok = True
            for a in range(k):
                v = float(table[base + a])
                total += v
                lo_ok &= (v >= 0.0) & (v <= 1.0 + tolerance)
            node_bad += (not lo_ok) | (abs(total - 1.0) > tolerance)
        bad += node_bad
    return bad == 0


@parallel_kernel
def _check_float_rows(
    table: npt.NDArray[np.float32],
    offsets: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int32],
    num_actions: npt.NDArray[np.int32],
    tolerance: float,
    out: npt.NDArray[np.float64],
) -> int:
    """First bad value or row: returns its table index (kind and value in ``out``), or -1.

    ``out[0]``: 1 = not finite, 2 = negative, 3 = row sum off; ``out[1]``: the value/sum.
    Nodes are checked in parallel; the first bad node in id order is reported.
    """
    n = offsets.shape[0]
    found = np.full(n, -1, dtype=np.int64)
    details = np.zeros((n, 2), dtype=np.float64)
    for node in numba.prange(n):
        start = offsets[node]
        if start >= 0:
            found[node] = _check_float_node(
                table, start, rows[node], num_actions[node], tolerance, details[node]
            )
    for node in range(n):
        if found[node] >= 0:
            out[0] = details[node, 0]
            out[1] = details[node, 1]
            return int(found[node])
    return -1


@kernel
def _check_quantized_rows(
    table: npt.NDArray[np.uint16],
    offsets: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int32],
    num_actions: npt.NDArray[np.int32],
    quant: int,
    out: npt.NDArray[np.float64],
) -> int:
    for node in range(offsets.shape[0]):
        start = offsets[node]
        if start < 0:
            continue
        k = num_actions[node]
        for r in range(rows[node]):
            base = start + r * k
            total = 0
            for a in range(k):
                total += int(table[base + a])
            if total != quant:
                out[0] = 3.0
                out[1] = float(total)
                return int(base)
    return -1


def first_bad_row(
    table: npt.NDArray[Any],
    offsets: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int32],
    num_actions: npt.NDArray[np.int32],
    tolerance: float,
    quant: int,
) -> tuple[int, int, float]:
    """``(index, kind, value)`` of the first bad value or row, or ``(-1, 0, 0.0)``."""
    out = np.zeros(2, dtype=np.float64)
    if table.dtype == np.dtype("<u2"):
        index = _check_quantized_rows(table, offsets, rows, num_actions, quant, out)
    else:
        if _float_rows_ok(table, offsets, rows, num_actions, tolerance):
            return -1, 0, 0.0
        index = _check_float_rows(table, offsets, rows, num_actions, tolerance, out)
    return int(index), int(out[0]), float(out[1])


def warm_up() -> None:
    """Compile (or load from numba's cache) every kernel of this module, for the argument
    types strategy files give them (read-only tables and layouts), off any match clock."""

    def frozen(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
        a.flags.writeable = False
        return a

    table_checksum(frozen(np.zeros(40, dtype=np.uint8)))
    offsets = frozen(np.array([0, -1], dtype=np.int64))
    rows = frozen(np.array([1, 0], dtype=np.int32))
    num_actions = frozen(np.array([2, 0], dtype=np.int32))
    for table in (frozen(np.array([0.5, 0.5], dtype="<f4")),
                  frozen(np.array([0.5, 0.6], dtype="<f4")),  # the slow path names the row
                  frozen(np.array([30000, 35535], dtype="<u2"))):
        first_bad_row(table, offsets, rows, num_actions, 1e-3, 65535)


@kernel
def _purify_rows(rows: npt.NDArray[np.float64], kind: int, threshold: float,
                 renormalise: bool) -> None:
    k = rows.shape[1]
    for r in range(rows.shape[0]):
        row = rows[r]
        if purify_row(row, k, kind, threshold) and kind != 0:
            continue  # purify_row's distribution is the result
        if not renormalise:
            continue
        total = 0.0
        for i in range(k):
            total += row[i]
        for i in range(k):
            row[i] = row[i] / total if total != 0.0 else np.nan


def purify_rows(rows: npt.ArrayLike, purification: Purification | None,
                renormalise: bool = True) -> npt.NDArray[np.float64]:
    """Every row of the 2-D ``rows`` purified by the agent's rule
    (:func:`agent.strategy.purification.purify_row`, compiled), in a new float64 array.

    ``none`` (or ``None``) leaves a row as it is, and a row without positive mass is left
    as it is too; with ``renormalise`` such rows are divided by their sum (left to right;
    NaN for a row that sums to 0): the distribution
    :func:`agent.strategy.purification.sample_index` samples from.
    """
    out = np.array(rows, dtype=np.float64, order="C", copy=True)
    if out.ndim != 2:
        raise AbstractionError(f"expected a 2-D array of rows, got shape {out.shape}")
    pur = purification if purification is not None else Purification("none")
    _purify_rows(out, KINDS.index(pur.kind), float(pur.threshold), renormalise)
    return out


@kernel
def match_row(regrets: npt.NDArray[np.float64], start: int, k: int,
              out: npt.NDArray[np.float64]) -> None:
    """Regret matching of one row: ``out[start:start+k]`` from ``regrets[start:start+k]``
    (the positive regrets normalised; uniform where none is positive)."""
    total = 0.0
    for a in range(k):
        r = regrets[start + a]
        if r > 0.0:
            total += r
    if total > 0.0:
        for a in range(k):
            r = regrets[start + a]
            out[start + a] = r / total if r > 0.0 else 0.0
    else:
        for a in range(k):
            out[start + a] = 1.0 / k
