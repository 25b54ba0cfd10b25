"""Duplicate matches between agent variants (``acpc-match``).

Modules: :mod:`~dealer.match.variants` (what plays), :mod:`~dealer.match.schedule` (which
matches, which seeds), :mod:`~dealer.match.worker` (play one match over TCP or in-process),
:mod:`~dealer.match.store` (SQLite results, logs, manifest), :mod:`~dealer.match.runner`
(resume, process pool, Ray), :mod:`~dealer.match.report` (statistics, tables, exports,
progress), :mod:`~dealer.match.allin` (all-in EV). Agents come from the agent's library
(:mod:`agent.agents`, never a CLI module). The statistics themselves are :mod:`dealer.stats`.

Nothing here is imported by :mod:`dealer.server` or :mod:`dealer.engine`; importing this
package imports nothing.
"""
