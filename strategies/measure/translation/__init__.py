"""Measuring action translation exactly: full-game best responses against translating agents.

Modules: :mod:`.full_br` (two-player no-limit games such as no-limit Leduc: the real tree,
the agent's induced behaviour, the best response), :mod:`.games` (the half-street
clairvoyance and no-limit Kuhn games, their abstract equilibria and exact best responses),
:mod:`.lab` (the experiments: tables, abstraction search, CSV/JSON), :mod:`.plots` (PNGs,
matplotlib) and :mod:`.commands` (``acpc-strategy translation exploit|best-size|plot``).
``scripts/translation_tables.py`` regenerates every table and plot; ``scripts/bench_exploit.py``
times the no-limit Leduc best response.

Imports :mod:`agent` and :mod:`strategies`; never imported by :mod:`agent`.
"""
