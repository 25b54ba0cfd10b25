"""acpc-arena: ACPC poker agents, a drop-in dealer and the tools to measure them.

The shared core lives in :mod:`agent.acpc` (stdlib only, no IO, no clock).
"""

__version__ = "0.1.0"
