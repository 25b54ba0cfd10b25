"""The house: a drop-in ACPC dealer, its log format, and the log tools.

Imports only :mod:`agent.acpc` (and the stdlib game loader :mod:`agent.games`); never numpy,
numba, msgpack or strategy code. A test checks ``sys.modules``.
"""
