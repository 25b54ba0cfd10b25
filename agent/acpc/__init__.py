"""The shared ACPC core: game definitions, rules engine, match states, sans-IO protocol.

Everything in this package is pure: stdlib only, no IO, no clock, no randomness of its own
(dealing takes a seed). It must not import numpy, numba, msgpack, asyncio or anything from
``dealer`` or ``strategies``; a test checks ``sys.modules``. The one exception to "no IO" is
:mod:`agent.acpc.gamefiles`, which reads game files (the bundled ones from the data package
:mod:`agent.data`, the only module above the core that the core may name).

Importing it does nothing else: no hashing, no import hook. Its hot modules may have been
compiled with mypyc (``acpc-arena compile``, a build step outside the core), in which case
Python's ordinary import loads the extension modules placed beside their sources.
"""
