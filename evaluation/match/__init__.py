"""Duplicate matches between agent variants (``acpc-match``).

Modules: :mod:`~evaluation.match.variants` (what plays), :mod:`~evaluation.match.schedule` (which
matches, which seeds), :mod:`~evaluation.match.worker` (play one match over TCP or in-process),
:mod:`~evaluation.match.store` (SQLite results, logs, manifest), :mod:`~evaluation.match.runner`
(resume, process pool, Ray), :mod:`~evaluation.match.report` (statistics, tables, exports,
progress), :mod:`~evaluation.estimators.allin` (all-in EV). Agents come from the agent's library
(:mod:`agent.agents`, never a CLI module). The statistics themselves are :mod:`evaluation.stats`.

Nothing here is imported by :mod:`dealer.server` or :mod:`dealer.engine`; importing this
package imports nothing.
"""
