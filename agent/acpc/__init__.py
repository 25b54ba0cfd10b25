"""The shared ACPC core: game definitions, rules engine, match states, sans-IO protocol.

Everything in this package is pure: stdlib only, no IO, no clock, no randomness of its own
(dealing takes a seed). It must not import numpy, numba, msgpack, asyncio or anything from
``dealer`` or ``strategies``; a test checks ``sys.modules``.

Importing it serves the compiled core when a build for these sources exists
(:mod:`agent.acpc.native`; ``acpc-arena compile``): the one IO the package does on import,
reading its own sources to hash them, and only once such a build was ever made.
"""

from agent.acpc.native import activate as _activate

_activate()
