"""Where work runs: in this process, a local process pool, or Ray (matches and grafts alike).

* :mod:`jobs.backends`: the one API. :func:`jobs.backends.open_jobs` opens a backend,
  :meth:`jobs.backends.Jobs.run` runs a list of jobs on it and hands each finished one
  (value or counted failure) to one callback in completion order; ``acpc-match``
  (:mod:`evaluation.match.runner`) and ``acpc-strategy graft``
  (:mod:`strategies.grafting`) both use it.
* :mod:`jobs.ray`: the Ray a ``ray`` backend runs on (a cluster by ``--address``, or a
  private one on 127.0.0.1).

A new backend goes in :mod:`jobs.backends`: its name in :data:`BACKENDS` (below), and an
engine class with what ``_Engine`` lists (``worker``: what runs a job, for failure lines;
``window``: jobs in flight at most; ``start(task, args)`` returning a hashable handle;
``wait(handles)`` returning the finished ones, at least one; ``result(handle)``, raising the
job's error; ``stop(handles)`` on abort; ``close()``), chosen in ``Jobs._engine``. A session
it needs for the block (a cluster connection) is opened in :func:`jobs.backends.open_jobs`,
from a module of its own beside :mod:`jobs.ray` if it is more than a few lines. The loop,
the window, ``skip``, the counts and the clean-up on Ctrl-C are the driver's, the same for
every backend.

Layer: above ``agent`` and ``dealer``, below ``strategies`` and ``evaluation``; names only
the standard library and :mod:`agent.acpc.errors` (and ``ray``, lazily)
(``tests/test_layers.py``).
"""

BACKENDS = ("local", "ray")
"""The ``--backend`` choices (here, so the command lines name them without loading a
backend)."""
