"""The house: a drop-in ACPC dealer, its log format, and the log tools.

The dealer itself (:mod:`dealer.engine`, :mod:`dealer.server`, :mod:`dealer.cli`,
:mod:`dealer.logfile`) imports only :mod:`agent.acpc`, never numpy, numba, msgpack or strategy
code; the arena (:mod:`evaluation.match`) may import the agent's library. The layer test checks
``sys.modules``.
"""

import agent.acpc  # noqa: F401  (serves the compiled core, if built, before dealer.engine loads)
