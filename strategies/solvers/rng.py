"""A small, portable random stream for the sampling solvers: L'Ecuyer's MRG32k3a.

Sampling kernels draw from this generator instead of numba's or numpy's global state so
that a run is reproducible from its seed, can be checkpointed (six integers) and can be
replayed exactly by a pure-Python oracle in the tests. MRG32k3a combines two
multiple-recursive generators modulo primes just below 2**32; every product fits in a
signed 64-bit integer, so the same arithmetic is exact in numba, in numpy scalars
(``NUMBA_DISABLE_JIT=1``) and in Python integers.

Recurrences (L'Ecuyer, "Good parameters and implementations for combined multiple
recursive random number generators", 1999)::

    x1[n] = (1403580 * x1[n-2] -  810728 * x1[n-3]) mod 4294967087
    x2[n] = ( 527612 * x2[n-1] - 1370589 * x2[n-3]) mod 4294944443
    u[n]  = ((x1[n] - x2[n]) mod 4294967087) / 4294967088     (0 replaced by m1)

The state is an ``int64`` array ``[x1[n-3], x1[n-2], x1[n-1], x2[n-3], x2[n-2], x2[n-1]]``.

Imports numpy and numba only.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agent.acpc.errors import UsageError
from agent.jit import kernel

M1 = 4294967087
M2 = 4294944443
A12 = 1403580
A13N = 810728
A21 = 527612
A23N = 1370589
NORM = 1.0 / (M1 + 1)




def seed_state(seed: int) -> npt.NDArray[np.int64]:
    """A valid generator state derived from any integer ``seed`` (splitmix64 mixing)."""
    mask = (1 << 64) - 1
    x = seed & mask
    out = []
    for i in range(6):
        x = (x + 0x9E3779B97F4A7C15) & mask
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        m = M1 if i < 3 else M2
        out.append(1 + z % (m - 1))
    return np.array(out, dtype=np.int64)


def check_state(state: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """``state`` as an int64 array after checking it is a valid MRG32k3a state.

    Raises:
        ValueError: if it has the wrong shape, values out of range or an all-zero half.
    """
    arr = np.asarray(state)
    if arr.shape != (6,) or arr.dtype.kind not in "iu":
        raise UsageError(f"expected 6 integers for the generator state, got {arr!r}")
    arr = arr.astype(np.int64)
    if (arr < 0).any() or (arr[:3] >= M1).any() or (arr[3:] >= M2).any():
        raise UsageError(f"expected generator state values below the moduli, got {arr!r}")
    if not arr[:3].any() or not arr[3:].any():
        raise UsageError(f"expected a generator state with no all-zero half, got {arr!r}")
    return arr


@kernel
def uniform(state: npt.NDArray[np.int64]) -> float:
    """The next number in (0, 1); advances ``state`` in place."""
    p1 = (A12 * state[1] - A13N * state[0]) % M1
    if p1 < 0:
        p1 += M1
    state[0] = state[1]
    state[1] = state[2]
    state[2] = p1
    p2 = (A21 * state[5] - A23N * state[3]) % M2
    if p2 < 0:
        p2 += M2
    state[3] = state[4]
    state[4] = state[5]
    state[5] = p2
    if p1 > p2:
        return float(p1 - p2) * NORM
    return float(p1 - p2 + M1) * NORM


def uniform_py(state: list[int]) -> float:
    """:func:`uniform` in plain Python integers, on a list state (for oracles and checks)."""
    p1 = (A12 * state[1] - A13N * state[0]) % M1
    state[0], state[1], state[2] = state[1], state[2], p1
    p2 = (A21 * state[5] - A23N * state[3]) % M2
    state[3], state[4], state[5] = state[4], state[5], p2
    if p1 > p2:
        return float(p1 - p2) * NORM
    return float(p1 - p2 + M1) * NORM
