"""The excessive gap technique (EGT) on the sequence form of a two-player zero-sum game.

The game (any two-player :class:`~strategies.games.abstract.AbstractGame`: Kuhn, Leduc,
N-card Kuhn, their abstractions; perfect recall; or Royal's public tree,
:class:`strategies.solvers.royal.RoyalGame`) is the bilinear saddle point
``max_x min_y x' A y`` over the two players' treeplexes (:mod:`strategies.solvers.sequence_form`:
``x`` position 0's realisation plan, ``y`` position 1's, ``A`` position 0's payoff). With
``f(y) = max_x x'Ay`` and ``phi(x) = min_y x'Ay``, ``f(y) - phi(x)`` is the NashConv of
``(x, y)`` (twice the exploitability) and is 0 exactly at an equilibrium.

**Smoothing.** Each treeplex gets the dilated entropy distance-generating function
``d(x) = sum_j w_j x_{p(j)} sum_a b_ja log b_ja`` (Hoda, Gilpin, Pena and Sandholm 2010;
``b`` the behaviour probabilities, ``p(j)`` the sequence leading to information set ``j``,
weights ``w_j = 1``). Its prox mapping is closed-form: a softmax at every information set,
bottom-up (:func:`strategies.solvers.kernels.treeplex_prox`). ``dbar = d - min d`` ranges over
``[0, D]``. The smoothed functions are ``f_mu(y) = max_x x'Ay - mu_x dbar_x(x)`` and
``phi_mu(x) = min_y x'Ay + mu_y dbar_y(y)``; while the *excessive gap condition*
``f_mu(y) <= phi_mu(x)`` holds, ``f(y) - phi(x) <= mu_x D_x + mu_y D_y``.

**Nesterov's iteration** (Nesterov 2005; the poker form of Hoda et al. 2010 and Gilpin,
Hoda, Pena and Sandholm 2007): start from ``mu_x = mu_y = mu0``, the centre
``xc = argmin d_x``, ``y0 = argmin_y xc'Ay + mu_y d_y(y)`` and ``x0`` the Bregman step
from ``xc`` against ``y0``; ``mu0`` starts at ``max |A_ij|`` (the operator norm of ``A``
from l1 to l-infinity, the strong-convexity moduli taken as 1) and doubles until the
condition holds at ``(x0, y0)``. Each step then shrinks one ``mu`` by ``1 - tau``
(:func:`strategies.solvers.kernels.egt_advance`: two smoothed best responses and one
Bregman step, three products with ``A`` or ``A'``, then two more for the condition). The
published practical schemes, as implemented here:

* *aggressive mu*: ``tau`` starts at :attr:`EGTConfig.tau` (0.5) instead of the theoretical
  ``2 / (k + 3)``; whenever the excessive gap condition fails after a step, the step is
  undone and retried with ``tau`` halved (backtracking); ``tau`` is never raised again;
* *balancing*: each step shrinks the larger of ``mu_x`` and ``mu_y``.

**Where ``A`` comes from** (:class:`Saddle`): the steps are one kernel,
:func:`strategies.solvers.kernels.egt_advance`, that stops for every product with ``A``.
:class:`EGTGame` keeps ``A`` as a sparse matrix (the sequence form of the enumerated deals)
and runs the steps compiled (:func:`strategies.solvers.kernels.egt_run`); Royal's 16 M
deals make that matrix too big, so :class:`strategies.solvers.royal.RoyalSaddle` answers
each product by walking the public tree (:meth:`Saddle.run`, the steps driven from
Python, one walk per product).

The iterates themselves (not an average) converge; :meth:`EGTSolver.average_strategy`
writes their behaviour strategies in the strategy file's table layout (rows no deal
reaches: uniform). One *iteration* is one accepted step; backtracks are counted
(:attr:`EGTSolver.backtracks`). Deterministic: the seed is kept only for the file's
metadata.

Checkpoints are ``.npz`` with a JSON header (never pickle), like the CFR solvers'.

Imports numpy, :mod:`strategies.games.abstract`, :mod:`strategies.solvers.sequence_form` and
:mod:`strategies.solvers.kernels`; never imported by :mod:`agent`.
"""

from __future__ import annotations

import dataclasses
import json
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
from numpy.lib.npyio import NpzFile

from agent.acpc.errors import UsageError
from strategies.cache import write_npz
from strategies.games.abstract import AbstractGame, uniform_table
from strategies.solvers.cfr import CheckpointError
from strategies.solvers.kernels import (
    EGT_DONE,
    EGT_G,
    EGT_IN,
    EGT_ROWS,
    csr_matvec,
    egt_advance,
    egt_gap_values,
    egt_run,
    treeplex_best_response,
    treeplex_gap,
    treeplex_prox,
    treeplex_realise,
)
from strategies.solvers.sequence_form import SequenceForm, SequenceFormError, sequence_form

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

EGT_SOLVER = "egt"
"""The solver name ``acpc-strategy solve --solver egt`` takes."""
CHECKPOINT_FORMAT = "acpc-arena-egt-checkpoint"
CHECKPOINT_VERSION = 1
MAX_INIT_DOUBLINGS = 200
"""How often the initial smoothing may double before the start is declared impossible."""


@dataclass(frozen=True)
class EGTConfig:
    """The step-size scheme of :class:`EGTSolver` (see the module docstring)."""

    name: str = EGT_SOLVER
    tau: float = 0.5
    """The first step's ``tau`` (halved at every failed excessive gap condition)."""
    tau_min: float = 1e-14
    """Below this ``tau`` the solver stops with an error (the condition keeps failing:
    floating-point rounding at a gap near machine precision)."""

    def __post_init__(self) -> None:
        if self.name != EGT_SOLVER:
            raise UsageError(f"expected the EGT solver name {EGT_SOLVER!r}, got {self.name!r}")
        if not (0.0 < self.tau < 1.0):
            raise UsageError(f"expected 0 < tau < 1, got {self.tau!r}")
        if not (0.0 < self.tau_min <= self.tau):
            raise UsageError(f"expected 0 < tau_min <= tau, got {self.tau_min!r}")

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict that :meth:`from_json` reads back."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EGTConfig:
        """Rebuild a configuration from :meth:`to_json`.

        Raises:
            UsageError: for unknown keys or bad values.
        """
        known = {f.name for f in dataclasses.fields(cls)}
        if not isinstance(data, dict) or set(data) - known:
            raise UsageError(f"expected EGT config keys {sorted(known)}, got {data!r}")
        return cls(**data)


@dataclass(frozen=True, eq=False)
class Treeplex:
    """One player's treeplex as the kernels read it (see :mod:`strategies.solvers.kernels`):
    information sets bottom-up, their consecutive action sequences, parents and weights."""

    seq0: I64
    k: I64
    parent: I64
    weight: F64
    table_index: I64
    """The table index (row start + action) of each sequence; -1 for the empty one."""

    @property
    def size(self) -> int:
        """Sequences, the empty one included."""
        return int(self.table_index.shape[0])

    def arrays(self) -> tuple[I64, I64, I64, F64]:
        """``(seq0, k, parent, weight)`` for the kernels."""
        return self.seq0, self.k, self.parent, self.weight


def treeplex(form: SequenceForm, player: int, num_actions_of: dict[int, int]) -> Treeplex:
    """Player ``player``'s treeplex from the sequence form (``num_actions_of[row start]``).

    Raises:
        SequenceFormError: if a row's action sequences are not consecutive.
    """
    index = form.seq_index[player]
    table_index = np.array([-1, *index], dtype=np.int64)
    seq_of = {t: s + 1 for s, t in enumerate(index)}
    row_of_seq: dict[int, int] = {}
    starts = sorted(form.parent[player])
    for start in starts:
        k = num_actions_of[start]
        first = seq_of[start]
        for a in range(k):
            if seq_of.get(start + a) != first + a:
                raise SequenceFormError(f"expected consecutive sequences at row {start} of "
                                        f"position {player}, got {seq_of.get(start + a)!r}")
            row_of_seq[first + a] = start
    depth: dict[int, int] = {}

    def depth_of(start: int) -> int:
        chain = []
        while start not in depth:
            chain.append(start)
            par = form.parent[player][start]
            if par == 0:
                depth[start] = 0
                chain.pop()
                break
            start = row_of_seq[par]
        base = depth[start]
        for i, row in enumerate(reversed(chain), start=1):
            depth[row] = base + i
        return depth[chain[0]] if chain else base

    order = sorted(starts, key=lambda r: (-depth_of(r), r))
    return Treeplex(
        seq0=np.array([seq_of[r] for r in order], dtype=np.int64),
        k=np.array([num_actions_of[r] for r in order], dtype=np.int64),
        parent=np.array([form.parent[player][r] for r in order], dtype=np.int64),
        weight=np.ones(len(order)),
        table_index=table_index,
    )


@dataclass(frozen=True, eq=False)
class CSR:
    """A sparse matrix in compressed rows (what :func:`csr_matvec` reads)."""

    indptr: I64
    indices: I64
    data: F64

    @classmethod
    def of(cls, rows: I64, cols: I64, values: F64, num_rows: int) -> CSR:
        """The matrix with ``M[rows[i], cols[i]] = values[i]`` (each pair once)."""
        order = np.lexsort((cols, rows))
        indptr = np.zeros(num_rows + 1, dtype=np.int64)
        np.add.at(indptr, rows + 1, 1)
        return cls(np.cumsum(indptr).astype(np.int64),
                   np.ascontiguousarray(cols[order], dtype=np.int64),
                   np.ascontiguousarray(values[order], dtype=np.float64))

    def arrays(self) -> tuple[I64, I64, F64]:
        """``(indptr, indices, data)``."""
        return self.indptr, self.indices, self.data


class Saddle:
    """The saddle point ``max_x min_y x'Ay`` as :class:`EGTSolver` reads it: both treeplexes
    (:attr:`x`, :attr:`y`), their entropy ranges, a start for the smoothing (:attr:`scale`)
    and the two products :meth:`product_a` (``A v``) and :meth:`product_at` (``A' v``).
    :class:`EGTGame` keeps ``A`` as a sparse matrix; a game too big for that computes the
    products another way (:class:`strategies.solvers.royal.RoyalSaddle`: by walking a public
    tree). The steps are :func:`strategies.solvers.kernels.egt_advance` either way."""

    x: Treeplex
    y: Treeplex
    scale: float
    """Where the first smoothing starts (it doubles until the condition holds)."""
    d_x: float
    d_y: float

    def product_a(self, v: F64, out: F64) -> None:
        """``out = A v`` (``v`` a realisation plan of position 1)."""
        raise NotImplementedError

    def product_at(self, v: F64, out: F64) -> None:
        """``out = A' v`` (``v`` a realisation plan of position 0)."""
        raise NotImplementedError

    def uniform_table(self) -> F64:
        """The uniform strategy in the file's table layout."""
        raise NotImplementedError

    @staticmethod
    def entropy_range(tp: Treeplex) -> float:
        """``D = -min d`` (``max d = 0`` at every pure strategy)."""
        logb, acc = np.empty(tp.size), np.empty(tp.size)
        return float(treeplex_prox(*tp.arrays(), np.zeros(tp.size), 1.0, logb, False, logb,
                                   acc))

    def smoothed_response(self, tp: Treeplex, g: F64, mu: float,
                          prior: F64 | None = None) -> tuple[F64, F64]:
        """``argmax <g, q> - mu d(q)`` (plus ``mu <grad d(centre), q>`` with ``prior``, the
        centre's log behaviour): its realisation plan and log behaviour."""
        logb, acc, out = np.empty(tp.size), np.empty(tp.size), np.empty(tp.size)
        treeplex_prox(*tp.arrays(), g, mu, prior if prior is not None else logb,
                      prior is not None, logb, acc)
        treeplex_realise(tp.seq0, tp.k, tp.parent, logb, out)
        return out, logb

    def payoff_y(self, x: F64) -> F64:
        """``A' x`` (position 0's payoff per sequence of position 1)."""
        out = np.empty(self.y.size)
        self.product_at(np.ascontiguousarray(x, dtype=np.float64), out)
        return out

    def payoff_x(self, y: F64) -> F64:
        """``A y`` (position 0's payoff per sequence of position 0)."""
        out = np.empty(self.x.size)
        self.product_a(np.ascontiguousarray(y, dtype=np.float64), out)
        return out

    def best_responses(self, x: F64, y: F64) -> tuple[float, float]:
        """``(f(y), phi(x))``: position 0's best-response value against ``y`` and position
        0's value when position 1 best-responds to ``x``."""
        f = treeplex_best_response(self.x.seq0, self.x.k, self.x.parent, self.payoff_x(y),
                                   np.empty(self.x.size))
        phi = -treeplex_best_response(self.y.seq0, self.y.k, self.y.parent, -self.payoff_y(x),
                                      np.empty(self.y.size))
        return float(f), float(phi)

    def plans(self, table: F64) -> tuple[F64, F64]:
        """Both positions' realisation plans of a behaviour strategy in table layout (the
        inverse of :meth:`table` on the rows the positions reach)."""
        out = []
        for tp in (self.x, self.y):
            behaviour = np.ones(tp.size)
            behaviour[1:] = np.asarray(table, dtype=np.float64)[tp.table_index[1:]]
            with np.errstate(divide="ignore"):
                logb = np.log(behaviour)
            plan = np.empty(tp.size)
            treeplex_realise(tp.seq0, tp.k, tp.parent, logb, plan)
            out.append(plan)
        return out[0], out[1]

    def gap_values(self, x: F64, y: F64, mu_x: float, mu_y: float) -> tuple[float, float]:
        """The two sides of the excessive gap condition at ``(x, y)``
        (:func:`strategies.solvers.kernels.treeplex_gap`)."""
        f, phi = treeplex_gap(*self.x.arrays(), *self.y.arrays(), self.payoff_x(y),
                              self.payoff_y(x), mu_x, mu_y, self.d_x, self.d_y,
                              np.empty((2, self.x.size)), np.empty((2, self.y.size)))
        return float(f), float(phi)

    def run(self, iterations: int, x: F64, y: F64, state: F64, counts: I64) -> int:
        """``iterations`` accepted steps of :func:`egt_advance` in place, its requests
        answered by :meth:`product_a` and :meth:`product_at`. Returns 0, or 1 if ``tau``
        fell below ``tau_min``."""
        control = np.zeros(3, dtype=np.int64)
        work_x, work_y = np.empty((EGT_ROWS, self.x.size)), np.empty((EGT_ROWS, self.y.size))
        args = (*self.x.arrays(), *self.y.arrays())
        while True:
            request = egt_advance(iterations, *args, x, y, state, counts, control, work_x,
                                  work_y)
            if request == 0:
                self.product_a(work_y[EGT_IN], work_x[EGT_G])
            elif request == 1:
                self.product_at(work_x[EGT_IN], work_y[EGT_G])
            else:
                return 0 if request == EGT_DONE else 1

    def table(self, x: F64, y: F64) -> F64:
        """Both realisation plans as behaviour strategies in table layout (rows the player
        never reaches, and rows no deal reaches: uniform)."""
        table = self.uniform_table()
        for tp, plan in ((self.x, x), (self.y, y)):
            n = int(tp.seq0.shape[0])
            owner = np.repeat(np.arange(n), tp.k)
            seqs = (np.repeat(tp.seq0 - np.cumsum(tp.k) + tp.k, tp.k)
                    + np.arange(int(tp.k.sum())))
            total = np.bincount(owner, weights=plan[seqs], minlength=n)
            keep = (plan[tp.parent] > 0.0) & (total > 0.0)
            rows = keep[owner]
            table[tp.table_index[seqs[rows]]] = plan[seqs[rows]] / total[owner[rows]]
        return table


class EGTGame(Saddle):
    """The saddle point of a two-player abstract game: both treeplexes, ``A`` and ``A'``
    (sparse).

    Raises:
        SequenceFormError: without perfect recall.
        UsageError: for a game without two players.
    """

    def __init__(self, game: AbstractGame) -> None:
        self.game = game
        form = sequence_form(game)
        num_actions_of: dict[int, int] = {}
        for node in np.flatnonzero(game.offset >= 0):
            k = int(game.num_actions[node])
            start = int(game.offset[node])
            for b in range(int(game.rows[node])):
                num_actions_of[start + b * k] = k
        self.x = treeplex(form, 0, num_actions_of)
        self.y = treeplex(form, 1, num_actions_of)
        n0, n1 = form.shape
        self.a = CSR.of(form.rows, form.cols, form.values, n0)
        self.at = CSR.of(form.cols, form.rows, form.values, n1)
        self.scale = float(np.abs(form.values).max()) if form.values.size else 0.0
        self.d_x = self.entropy_range(self.x)
        self.d_y = self.entropy_range(self.y)

    def kernel_args(self) -> tuple[I64, I64, I64, F64, I64, I64, I64, F64, I64, I64, F64, I64,
                                   I64, F64]:
        """The game's arrays in :func:`egt_run`'s order."""
        return (*self.x.arrays(), *self.y.arrays(), *self.a.arrays(), *self.at.arrays())

    def product_a(self, v: F64, out: F64) -> None:
        csr_matvec(*self.a.arrays(), v, 1.0, out)

    def product_at(self, v: F64, out: F64) -> None:
        csr_matvec(*self.at.arrays(), v, 1.0, out)

    def uniform_table(self) -> F64:
        return uniform_table(self.game)

    def gap_values(self, x: F64, y: F64, mu_x: float, mu_y: float) -> tuple[float, float]:
        f, phi = egt_gap_values(*self.kernel_args(), x, y, mu_x, mu_y, self.d_x, self.d_y)
        return float(f), float(phi)

    def run(self, iterations: int, x: F64, y: F64, state: F64, counts: I64) -> int:
        """:func:`egt_run`: the same steps, the products in CSR, all compiled."""
        return int(egt_run(iterations, *self.kernel_args(), x, y, state, counts))


class SaddleSource(Protocol):
    """A game that gives its own saddle point (too big for a sparse ``A``)."""

    def identity(self) -> dict[str, Any]:
        """What a checkpoint must match."""
        ...

    def egt_saddle(self) -> Saddle:
        """The saddle point :class:`EGTSolver` iterates on."""
        ...


class EGTSolver:
    """Nesterov's excessive gap technique with the aggressive step scheme (module docstring).

    The API follows :class:`strategies.solvers.cfr.Solver`: :meth:`iterate`,
    :meth:`average_strategy`, :meth:`save_checkpoint` / :meth:`load_checkpoint`,
    :attr:`iteration`, :attr:`seconds`, :attr:`seed`, :attr:`config`.

    ``game`` is an enumerated abstract game (its sequence form: :class:`EGTGame`) or any
    game that gives its own saddle point (:class:`SaddleSource`, e.g.
    :class:`strategies.solvers.royal.RoyalGame`, whose products walk Royal's public tree).

    Raises:
        SequenceFormError: without perfect recall; UsageError: not two players.
    """

    def __init__(self, game: AbstractGame | SaddleSource, config: EGTConfig | None = None, *,
                 seed: int = 0) -> None:
        self.game = game
        self.config = config or EGTConfig()
        self.seed = int(seed)
        self.egt: Saddle = EGTGame(game) if isinstance(game, AbstractGame) else game.egt_saddle()
        self.iteration = 0
        """Accepted steps so far."""
        self.seconds = 0.0
        """Wall time spent in :meth:`iterate` and the start (carried over by checkpoints)."""
        self.value_sum = 0.0
        """Unused (the sampling solvers' running value); kept for the common interface."""
        self.counts = np.zeros(4, dtype=np.int64)
        """``[steps, backtracks, shrinks of mu_x, shrinks of mu_y]``."""
        self.init_doublings = 0
        """How often the initial smoothing doubled before the condition held."""
        start = time.perf_counter()
        self.x, self.y, self.state = self._start()
        self.seconds += time.perf_counter() - start

    def _start(self) -> tuple[F64, F64, F64]:
        g = self.egt
        mu = g.scale if g.scale > 0 else 1.0
        centre, centre_log = g.smoothed_response(g.x, np.zeros(g.x.size), 1.0)
        for doublings in range(MAX_INIT_DOUBLINGS):
            y0, _ = g.smoothed_response(g.y, -g.payoff_y(centre), mu)
            x0, _ = g.smoothed_response(g.x, g.payoff_x(y0), mu, centre_log)
            f, phi = g.gap_values(x0, y0, mu, mu)
            if f <= phi + 1e-12 * (1.0 + abs(f) + abs(phi)):
                self.init_doublings = doublings
                state = np.array([mu, mu, self.config.tau, g.d_x, g.d_y, self.config.tau_min])
                return x0, y0, state
            mu *= 2.0
        raise UsageError(f"expected the excessive gap condition to hold at the start within "
                         f"{MAX_INIT_DOUBLINGS} doublings of mu, got none (mu {mu!r})")

    @property
    def mu(self) -> tuple[float, float]:
        """The current smoothing parameters ``(mu_x, mu_y)``."""
        return float(self.state[0]), float(self.state[1])

    @property
    def tau(self) -> float:
        """The current step parameter."""
        return float(self.state[2])

    @property
    def backtracks(self) -> int:
        """Steps undone because the excessive gap condition failed."""
        return int(self.counts[1])

    def gap_bound(self) -> float:
        """``mu_x D_x + mu_y D_y``: the bound on ``f(y) - phi(x)`` the condition gives."""
        return float(self.state[0] * self.state[3] + self.state[1] * self.state[4])

    def nash_conv(self) -> float:
        """``f(y) - phi(x)`` of the current iterates, exactly (twice the exploitability)."""
        f, phi = self.egt.best_responses(self.x, self.y)
        return f - phi

    def value(self) -> float:
        """``x'Ay``: position 0's expected payoff of the current iterates."""
        return float(self.x @ self.egt.payoff_x(self.y))

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) the kernels without iterating."""
        self.egt.run(0, self.x.copy(), self.y.copy(), self.state.copy(), self.counts.copy())

    def iterate(self, iterations: int = 1) -> None:
        """Run ``iterations`` more accepted steps.

        Raises:
            UsageError: if ``iterations`` is negative, or ``tau`` fell below its minimum
                (the iterates are those of the last accepted step).
        """
        if iterations < 0:
            raise UsageError(f"expected a non-negative number of iterations, got {iterations}")
        if iterations == 0:
            return
        start = time.perf_counter()
        before = int(self.counts[0])
        status = self.egt.run(iterations, self.x, self.y, self.state, self.counts)
        self.iteration += int(self.counts[0]) - before
        self.seconds += time.perf_counter() - start
        if status != 0:
            raise UsageError(f"expected the excessive gap condition to hold for some tau >= "
                             f"{self.config.tau_min:g}, got none at iteration "
                             f"{self.iteration} (gap bound {self.gap_bound():.3g})")

    def average_strategy(self) -> F64:
        """The current iterates' behaviour strategies in table layout (EGT's output)."""
        return self.egt.table(self.x, self.y)

    # ----------------------------------------------------------------- checkpoints

    def save_checkpoint(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Write the solver state to ``path`` (``.npz``, atomically); return the path."""
        header = {
            "format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION,
            **self.game.identity(), "config": self.config.to_json(), "seed": self.seed,
            "iteration": self.iteration, "seconds": self.seconds,
            "init_doublings": self.init_doublings, "extra": extra or {},
        }
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_npz(target, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
                  x=self.x, y=self.y, state=self.state, counts=self.counts)
        return target

    @classmethod
    def load_checkpoint(cls, path: str | Path, game: AbstractGame | SaddleSource) -> EGTSolver:
        """Resume from :meth:`save_checkpoint` for the same game and abstraction.

        Raises:
            CheckpointError: if the file is unreadable, corrupt, not an EGT checkpoint, or
                for another game or abstraction.
        """
        source = str(path)
        try:
            data = np.load(path, allow_pickle=False)
            if not isinstance(data, NpzFile):
                raise UsageError("not an .npz archive")
            with data:
                arrays = {key: np.array(data[key]) for key in data.files}
            header = json.loads(arrays["header"].astype(np.uint8).tobytes().decode())
        except KeyError:
            raise CheckpointError(f"{source}: corrupt checkpoint: missing 'header'") from None
        except (OSError, ValueError, EOFError, UnicodeDecodeError, zipfile.BadZipFile,
                zlib.error) as exc:
            raise CheckpointError(f"{source}: cannot read checkpoint: {exc}") from None
        if not isinstance(header, dict) or (header.get("format"), header.get("version")) != (
                CHECKPOINT_FORMAT, CHECKPOINT_VERSION):
            got = header.get("format") if isinstance(header, dict) else header
            raise CheckpointError(f"{source}: expected a {CHECKPOINT_FORMAT} version "
                                  f"{CHECKPOINT_VERSION} (an EGT checkpoint), got {got!r}")
        for key, value in game.identity().items():
            if header.get(key) != value:
                what = "game" if key.startswith("game") else key
                raise CheckpointError(f"{source}: checkpoint is for another {what}: expected "
                                      f"{value!r}, got {header.get(key)!r}")
        try:
            solver = cls(game, EGTConfig.from_json(header["config"]), seed=int(header["seed"]))
            solver.iteration = int(header["iteration"])
            solver.seconds = float(header["seconds"])
            solver.init_doublings = int(header["init_doublings"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"{source}: corrupt checkpoint header: {exc}") from None
        shapes = {"x": (solver.egt.x.size,), "y": (solver.egt.y.size,), "state": (6,),
                  "counts": (4,)}
        for key, shape in shapes.items():
            arr = arrays.get(key)
            kind = np.int64 if key == "counts" else np.float64
            if arr is None or arr.shape != shape or arr.dtype != kind:
                got = None if arr is None else f"{arr.dtype} {arr.shape}"
                raise CheckpointError(f"{source}: corrupt checkpoint: expected {key} of shape "
                                      f"{shape} ({np.dtype(kind).name}), got {got!r}")
            if key != "counts" and not np.isfinite(arr).all():
                raise CheckpointError(f"{source}: corrupt checkpoint: {key} is not finite")
        state = arrays["state"]
        if not (state[0] > 0 and state[1] > 0 and 0 < state[2] < 1) or solver.iteration < 0:
            raise CheckpointError(f"{source}: corrupt checkpoint: state {state.tolist()!r}")
        solver.x = np.ascontiguousarray(arrays["x"])
        solver.y = np.ascontiguousarray(arrays["y"])
        solver.state = np.ascontiguousarray(state)
        solver.counts = np.ascontiguousarray(arrays["counts"])
        return solver


def is_egt(name: str) -> bool:
    """True if ``name`` names this solver (for the commands that dispatch on it)."""
    return name == EGT_SOLVER


__all__ = [
    "CSR",
    "EGT_SOLVER",
    "EGTConfig",
    "EGTGame",
    "EGTSolver",
    "Saddle",
    "SaddleSource",
    "Treeplex",
    "is_egt",
    "treeplex",
]
