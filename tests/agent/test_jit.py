"""The project's numba decorators (:mod:`agent.jit`)."""

from __future__ import annotations

import numpy as np
import pytest
from numba.core import types

from agent.jit import kernel
from tests.support import NO_JIT


@pytest.mark.skipif(NO_JIT, reason="numba's signatures exist only with the JIT")
def test_a_kernel_called_with_constants_is_compiled_once_per_type() -> None:
    """numba would compile ``add`` once for ``Literal[int](52)``, once for
    ``Literal[int](7)`` and once for ``int64``; :func:`agent.jit.kernel` types constants
    as their plain type, so one compilation serves all three calls, with the same results.
    (The callers are made here, not at import: each closes over a new ``add_kernel``, so
    each run compiles them, and they type their calls of ``add`` again.)"""

    def add(values: np.ndarray, n: int) -> int:
        return int(values[0]) + n

    add_kernel = kernel(add)

    def with_constants(values: np.ndarray) -> int:
        return add_kernel(values, 52) + add_kernel(values, 7)

    def with_a_variable(values: np.ndarray, m: int) -> int:
        return add_kernel(values, m)

    values = np.arange(3, dtype=np.int64) + 1
    assert kernel(with_constants)(values) == 61
    assert kernel(with_a_variable)(values, 5) == 6
    assert add_kernel.signatures == [(types.int64[::1], types.int64)]
