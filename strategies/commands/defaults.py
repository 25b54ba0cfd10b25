"""Defaults the offline commands show in their ``--help``, in one light module.

The modules that use these values import numpy and numba; keeping the values here (stdlib
only) lets ``acpc-strategy`` build its argument parser, and run light commands such as
``list``, without importing either.
"""

from __future__ import annotations

from typing import Final

PROG: Final = "acpc-strategy"
"""The offline tools' command name, for messages."""
TRAIN_SEED: Final = 1
"""Sampled best response: pool seed of the training deals (the solver's pool uses the
recipe seed, 0)."""
TEST_SEED: Final = 2
"""Sampled best response: pool seed of the test deals."""
DEFAULT_TRAIN_DEALS: Final = 500_000
"""Sampled best response: deals the best responses learn on."""
DEFAULT_TEST_DEALS: Final = 200_000
"""Sampled best response: deals they are evaluated on."""
DEFAULT_Z: Final = 2.5
"""Sampled best response: standard errors a deviation from the strategy must gain by on the
training deals."""
TRANSLATION_ITERATIONS: Final = 20_000
"""Translation lab: CFR+ iterations per abstract game of the half-street games."""

SMOOTHING = 10_000
"""``learn-sizes``: the sizing players' smoothing constant ``N`` (the published value)."""
