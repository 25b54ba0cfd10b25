"""Data files bundled with :mod:`strategies` (read with :mod:`importlib.resources`):
``holdem-preflop-equity.npz``, LBR's exact preflop equities
(:mod:`strategies.measure.preflop_equity`)."""
