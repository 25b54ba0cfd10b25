"""Offline strategy computation: abstract games, CFR solvers, best responses, bundled files.

* :mod:`strategies.games.abstract`: game + betting abstraction + card abstraction -> the flat arrays
  of the abstract game (built on the agent's canonical tree, so layouts are shared);
* :mod:`strategies.solvers.cfr`: one solver with behaviour flags (CFR, CFR+, linear/discounted CFR,
  external-sampling MCCFR) over numba kernels, with checkpoints;
* :mod:`strategies.measure.best_response`: best responses, values and exploitability;
* :mod:`strategies.recipes`: the recipes of the bundled files in ``agent/data/strategies`` and
  their manifest; :mod:`strategies.cli`: the ``acpc-strategy`` command.

``strategies`` may import :mod:`agent`; :mod:`agent` never imports ``strategies``.
"""
