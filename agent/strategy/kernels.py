"""numba kernels for strategy tables: the content checksum and the row checks in one pass.

A 1 GB table must be validated in well under a second for hot-swap, so both run over the
raw bytes at memory speed instead of through hashlib and per-node numpy calls.

Checksum ``acpc64x4``: the table bytes, zero-padded to a multiple of 32, are read as
little-endian uint64 words in four interleaved lanes; lane ``i`` starts at
``SEED + i * K`` and takes each of its words as ``h = rotl64(h ^ (w * K1), 29) * K2``;
the result folds the lanes and the byte length with the same step and prints as 16 hex
digits. It detects corruption (every bit of every word feeds the state); it is not a
cryptographic hash. :func:`checksum_py` is the slow pure-Python definition the tests hold
the kernel to.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import numpy.typing as npt

MASK = (1 << 64) - 1
SEED = 0x243F6A8885A308D3
K = 0x9E3779B97F4A7C15
K1 = 0xC2B2AE3D27D4EB4F
K2 = 0x165667B19E3779F9
ROT = 29


def _step_py(h: int, w: int) -> int:
    h ^= (w * K1) & MASK
    h = ((h << ROT) | (h >> (64 - ROT))) & MASK
    return (h * K2) & MASK


def checksum_py(data: bytes) -> str:
    """The reference definition (slow): see the module docstring."""
    padded = data + b"\0" * (-len(data) % 32)
    lanes = [(SEED + i * K) & MASK for i in range(4)]
    for j in range(0, len(padded), 8):
        w = int.from_bytes(padded[j : j + 8], "little")
        lane = (j // 8) % 4
        lanes[lane] = _step_py(lanes[lane], w)
    h = SEED
    for lane_value in lanes:
        h = _step_py(h, lane_value)
    return f"{_step_py(h, len(data)):016x}"


@numba.njit(cache=True, inline="always")
def _step(h: np.uint64, w: np.uint64) -> np.uint64:
    h ^= w * np.uint64(K1)
    h = (h << np.uint64(ROT)) | (h >> np.uint64(64 - ROT))
    return h * np.uint64(K2)


@numba.njit(cache=True)
def _checksum_words(words: npt.NDArray[np.uint64], nbytes: int) -> np.uint64:
    h0 = np.uint64(SEED)
    h1 = np.uint64((SEED + K) & MASK)
    h2 = np.uint64((SEED + 2 * K) & MASK)
    h3 = np.uint64((SEED + 3 * K) & MASK)
    n = words.shape[0]
    for j in range(0, n, 4):
        h0 = _step(h0, words[j])
        h1 = _step(h1, words[j + 1])
        h2 = _step(h2, words[j + 2])
        h3 = _step(h3, words[j + 3])
    h = np.uint64(SEED)
    h = _step(h, h0)
    h = _step(h, h1)
    h = _step(h, h2)
    h = _step(h, h3)
    return _step(h, np.uint64(nbytes))


def table_checksum(table: npt.NDArray[Any]) -> str:
    """``acpc64x4`` of a table's bytes (the array is not copied unless padding is needed)."""
    raw = np.ascontiguousarray(table).view(np.uint8).reshape(-1)
    nbytes = raw.shape[0]
    body = nbytes - nbytes % 32
    words = raw[:body].view("<u8")
    if body != nbytes:
        tail = np.zeros(32, dtype=np.uint8)
        tail[: nbytes - body] = raw[body:]
        words = np.concatenate([words, tail.view("<u8")])
    with np.errstate(over="ignore"):  # uint64 wrap-around is the point (no-JIT runs warn)
        return f"{int(_checksum_words(words, nbytes)):016x}"


@numba.njit(cache=True)
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
    """
    for node in range(offsets.shape[0]):
        start = offsets[node]
        if start < 0:
            continue
        k = num_actions[node]
        for r in range(rows[node]):
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


@numba.njit(cache=True)
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
        index = _check_float_rows(table, offsets, rows, num_actions, tolerance, out)
    return int(index), int(out[0]), float(out[1])
