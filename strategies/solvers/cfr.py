"""Counterfactual regret minimisation over the flat abstract game: one solver, many flags.

:class:`Solver` is the one base solver (the OpenSpiel shape): behaviour flags in a
:class:`SolverConfig` select vanilla CFR, CFR+, discounted CFR (DCFR, and linear CFR as its
special case), external-sampling Monte Carlo CFR, chance-sampled CFR or Pure CFR, and
:class:`CFRSolver`, :class:`CFRPlusSolver`, :class:`DCFRSolver`, :class:`LinearCFRSolver`,
:class:`ExternalSamplingSolver`, :class:`ChanceSampledSolver` and :class:`PureCFRSolver`
are thin named variants. The API: :meth:`Solver.iterate`,
:meth:`Solver.average_strategy` (the flat table in
:func:`agent.strategy.fileformat.table_layout` order, ready for ``dump_strategy``),
:meth:`Solver.save_checkpoint` / :meth:`Solver.load_checkpoint` (``.npz`` with
``allow_pickle=False``: arrays and a JSON header, never pickle) and a ``seed``.

The flags, per iteration ``t = 1, 2, ...``:

* ``alternating``: one pass per player, each updating only that player's regrets and
  average with the others' *current* strategies already updated in the same iteration
  (OpenSpiel's default); otherwise one simultaneous pass for everybody.
* ``regret_plus``: regret matching+ (cumulative regrets floored at 0 after each pass).
* ``discount`` with ``alpha``/``beta``: after each pass, positive cumulative regrets are
  multiplied by ``t**alpha / (t**alpha + 1)`` and negative ones by
  ``t**beta / (t**beta + 1)`` (Brown and Sandholm 2019, as OpenSpiel applies it).
* ``gamma``: the average strategy weighs iteration ``t`` by ``t**gamma`` (0 = uniform,
  1 = linear as in CFR+, 2 = DCFR's default). Discounting the accumulated average by
  ``(t/(t+1))**gamma`` every iteration gives the same normalised average.
* ``sampling="external"``: external-sampling MCCFR (Lanctot et al. 2009). Each iteration
  runs one traversal per player, the traverser's turn alternating; chance (the whole deal)
  and the other players' actions are sampled from :mod:`strategies.solvers.rng` (MRG32k3a, seeded,
  saved in checkpoints), the traverser's actions are all explored, and the other players'
  average strategies are updated at their sampled nodes. Always alternating.
* ``sampling="chance"``: chance-sampled CFR (Zinkevich et al. 2007; Lanctot et al. 2009):
  each pass draws one deal from the deals' distribution and runs vanilla CFR on that deal
  alone with chance weight 1 (every action of every player explored). Alternating: one
  drawn deal per player's pass; otherwise one deal and one pass for everybody.
* ``sampling="pure"``: Pure CFR (Gibson 2014, the solver of the published Royal study): per
  traversal a deal is drawn and every row entered samples one action from its
  regret-matching strategy (a pure strategy profile); the traverser explores every action
  and adds ``u(a) - u(sampled)`` to its regrets, the node's value being ``u(sampled)``; the
  other players follow their sampled action and count it (``t**gamma``) in their average.
  With integer payoffs the regrets are integers (held exactly in float64). Always
  alternating.
* ``discount_interval`` / ``discount_until`` (external sampling): linear-CFR-style
  discounting as in Pluribus (Brown and Sandholm 2019): after every ``discount_interval``
  iterations, while ``t <= discount_until``, regrets and average sums are multiplied by
  ``k / (k + 1)`` where ``k = t // discount_interval``.

**Game adapters and configurations.** :class:`Solver` runs any :class:`SolverGame` (a small
protocol: table size, checkpoint identity, a :class:`Runner` for a configuration, the
average). Flat games are adapted by :class:`FlatGame`, which runs the kernels of
:mod:`strategies.solvers.kernels` on the game's :class:`~strategies.games.abstract.KernelGame`:
an :class:`~strategies.games.abstract.AbstractGame` (every deal enumerated with its
probability; every sampling, deals drawn from the cumulative distribution), a
:class:`~strategies.solvers.dealpool.PoolGame` (a flat two-player tree and a pool of sampled
deals with precomputed buckets and showdown results; external sampling or Pure CFR only,
deals drawn uniformly: the ``mccfr-es-pool`` variant the hold'em recipes use) or a
continuous game of :mod:`strategies.sizes.learned` (fixed sizes). The learned-size
transformation (:class:`strategies.sizes.learned.LearnedSizes`) and Royal's public tree
(:class:`strategies.solvers.royal.RoyalGame`) are adapters with their own passes. Frozen
rows (:class:`FrozenRows`, strategy grafting) are a configuration of the flat games:
full-width passes hold them at their values, external sampling plays them as chance nodes.
Rows a pool solve never reached average to the regret-matching strategy of their regrets
(uniform without positive regrets), or to the frozen values when there are frozen rows.

Full-width passes are vectorised over chance: one walk of the betting tree per pass, with
every player's reach probability and every player's value held as vectors over all the
enumerated deals (:mod:`strategies.games.abstract`); each deal's row of the table is its bucket's.
Regrets are counterfactual (weighted by chance and the other players' reach); the average
strategy accumulates ``weight * own reach * current strategy`` (OpenSpiel's convention).
A subtree is skipped when every player's reach is zero for every deal (it cannot change
anything). Rows never reached average to uniform.

The kernels live in :mod:`strategies.solvers.kernels` (public, over flat arrays, mutating
preallocated outputs); the solver validates, allocates and times. Each kernel has a slow
pure-Python oracle in ``tests/strategies/test_cfr.py`` (enumerated games),
``tests/strategies/test_holdem_solver.py`` (pool games) and
``tests/strategies/test_pool_grafting.py`` (frozen rows).

Imports :mod:`agent`, numpy, numba and :mod:`strategies` modules; never imported by
:mod:`agent`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, cast, runtime_checkable

import numpy as np
import numpy.typing as npt
from numpy.lib.npyio import NpzFile

from agent.acpc.errors import AcpcError, UsageError
from strategies.cache import write_npz
from strategies.games.abstract import AbstractGame, KernelGame, RowTable, normalise_rows
from strategies.solvers import rng as _rng
from strategies.solvers.kernels import (
    NO_FROZEN,
    NO_INDEX,
    NO_VALUES,
    cfr_run,
    cs_run,
    es_run,
    normalise_or_regrets,
    pure_run,
    regret_matching,
)

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
B = npt.NDArray[np.bool_]

CHECKPOINT_FORMAT = "acpc-arena-checkpoint"
CHECKPOINT_VERSION = 2
"""Version 2 adds the pool identity and ``value_sum``; version 1 files, and version 1 files
of the former hold'em format (:data:`_OLD_POOL_FORMAT`), still load."""
_OLD_POOL_FORMAT = "acpc-arena-holdem-checkpoint"
POOL_SOLVER = "mccfr-es-pool"
"""The variant name of external sampling over a deal pool (the hold'em recipes)."""


class CheckpointError(AcpcError, ValueError):
    """A solver checkpoint is corrupt or belongs to another game, abstraction or solver."""



# --------------------------------------------------------------------------- configuration

Sampling = Literal["full", "external", "chance", "pure"]
SAMPLINGS: tuple[str, ...] = ("full", "external", "chance", "pure")


@dataclass(frozen=True, slots=True)
class SolverConfig:
    """Behaviour flags of :class:`Solver` (see the module docstring)."""

    name: str = "cfr"
    sampling: Sampling = "full"
    alternating: bool = True
    regret_plus: bool = False
    discount: bool = False
    alpha: float = 1.5
    beta: float = 0.0
    gamma: float = 0.0
    discount_interval: int = 0
    discount_until: int = 0

    def __post_init__(self) -> None:
        if self.sampling not in SAMPLINGS:
            raise UsageError(f"expected sampling in {SAMPLINGS}, got {self.sampling!r}")
        if self.sampling in ("external", "pure") and not self.alternating:
            raise UsageError(f"{self.sampling} sampling always alternates: expected "
                             f"alternating=True")
        for key in ("alpha", "beta", "gamma"):
            value = getattr(self, key)
            if not math.isfinite(value):
                raise UsageError(f"expected a finite {key}, got {value!r}")
        if self.gamma < 0:
            raise UsageError(f"expected gamma >= 0, got {self.gamma!r}")
        for key in ("discount_interval", "discount_until"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise UsageError(f"expected a non-negative integer {key}, got {value!r}")
        if self.discount_interval and self.sampling != "external":
            raise UsageError("expected discount_interval only with external sampling")

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict that :meth:`from_json` reads back (the pool variant's is its
        name and discount schedule only)."""
        if self.name == POOL_SOLVER:
            return {"name": self.name, "discount_interval": self.discount_interval,
                    "discount_until": self.discount_until}
        data = dataclasses.asdict(self)
        if not self.discount_interval and not self.discount_until:
            del data["discount_interval"], data["discount_until"]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SolverConfig:
        """Rebuild a configuration from :meth:`to_json`.

        Raises:
            ValueError: for unknown keys or bad values.
        """
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise UsageError(f"expected solver config keys {sorted(known)}, got {sorted(data)}")
        if data.get("name") == POOL_SOLVER:
            return dataclasses.replace(VARIANTS[POOL_SOLVER], **data)
        return cls(**data)


VARIANTS: dict[str, SolverConfig] = {
    "cfr": SolverConfig("cfr"),
    "cfr+": SolverConfig("cfr+", regret_plus=True, gamma=1.0),
    "lcfr": SolverConfig("lcfr", discount=True, alpha=1.0, beta=1.0, gamma=1.0),
    "dcfr": SolverConfig("dcfr", discount=True, alpha=1.5, beta=0.0, gamma=2.0),
    "mccfr-es": SolverConfig("mccfr-es", sampling="external"),
    "cfr-cs": SolverConfig("cfr-cs", sampling="chance"),
    "pure-cfr": SolverConfig("pure-cfr", sampling="pure"),
    POOL_SOLVER: SolverConfig(POOL_SOLVER, sampling="external"),
}
"""The named variants: vanilla CFR, CFR+ (RM+, linear averaging), linear CFR, DCFR(1.5, 0,
2), external-sampling MCCFR, chance-sampled CFR, Pure CFR, and external sampling over a deal
pool (with a discount schedule set by the recipe); all alternate updates."""


def solver_config(spec: str | SolverConfig) -> SolverConfig:
    """A variant name from :data:`VARIANTS`, or a config passed through.

    Raises:
        ValueError: for an unknown name.
    """
    if isinstance(spec, SolverConfig):
        return spec
    try:
        return VARIANTS[spec]
    except KeyError:
        raise UsageError(f"expected a solver in {', '.join(VARIANTS)}, got {spec!r}") from None


# --------------------------------------------------------------------------- game adapters


@dataclass(frozen=True, eq=False)
class FrozenRows:
    """A configuration of :class:`Solver`: rows that play fixed values (strategy grafting).

    ``mask`` is True at every entry of a frozen row, ``values`` (table layout) are what the
    frozen rows play; ``warm > 0`` starts the free entries' regrets and average sums at
    ``warm * values`` (external sampling over a pool only). Full-width solvers hold the
    frozen entries of the current strategy at their values before every pass; external
    sampling treats frozen rows as chance nodes (one action drawn, for either traverser, no
    regret or average update). The average plays the values at frozen rows.
    """

    mask: B
    values: F64
    warm: float = 0.0


class Runner(Protocol):
    """Runs a configured solver's iterations over its own scratch arrays."""

    def run(self, iterations: int, t0: int, regrets: F64, strategy_sum: F64,
            rng_state: I64) -> float:
        """Iterations ``t0 + 1 .. t0 + iterations``, updating the arrays in place; returns
        the sum of position 0's sampled values (0 for full-width passes)."""
        ...


@runtime_checkable
class SolverGame(Protocol):
    """A game adapter: what :class:`Solver` needs of a game. Flat games
    (:class:`~strategies.games.abstract.AbstractGame`,
    :class:`~strategies.solvers.dealpool.PoolGame`, the continuous games of
    :mod:`strategies.sizes.learned`) are adapted by :class:`FlatGame`; the learned-size
    transformation and Royal's public tree bring their own."""

    @property
    def table_size(self) -> int:
        """Values in the regret and average tables."""
        ...

    def identity(self) -> dict[str, Any]:
        """What a checkpoint must match (JSON-able)."""
        ...

    def runner(self, config: SolverConfig, frozen: FrozenRows | None) -> Runner:
        """The iteration loop for ``config`` (raises :class:`UsageError` if unsupported)."""
        ...

    def average(self, strategy_sum: F64, regrets: F64, frozen: FrozenRows | None) -> F64:
        """The average strategy (the solver's output, in strategy-file table layout)."""
        ...


class KernelSource(Protocol):
    """A flat game: its :class:`~strategies.games.abstract.KernelGame` and sizes."""

    @property
    def table_size(self) -> int: ...
    @property
    def num_players(self) -> int: ...
    @property
    def max_depth(self) -> int: ...
    @property
    def max_actions(self) -> int: ...
    @property
    def num_deals(self) -> int: ...
    def kernel_args(self) -> KernelGame: ...
    def identity(self) -> dict[str, Any]: ...


class FlatGame:
    """The adapter of a flat game: the kernels of :mod:`strategies.solvers.kernels`.

    Chance is enumerated when the game's ``deal_prob`` is non-empty (deals drawn from that
    distribution; every sampling), else a pool (deals drawn uniformly; external sampling or
    Pure CFR only).
    """

    def __init__(self, game: KernelSource) -> None:
        self.game = game
        self.g = game.kernel_args()
        self.pool = self.g.deal_prob.shape[0] == 0

    @property
    def table_size(self) -> int:
        return self.game.table_size

    def identity(self) -> dict[str, Any]:
        return self.game.identity()

    def runner(self, config: SolverConfig, frozen: FrozenRows | None) -> Runner:
        if self.pool and config.sampling not in ("external", "pure"):
            raise UsageError(f"expected external sampling or Pure CFR for a deal pool, got "
                             f"solver {config.name!r}")
        if frozen is not None and config.sampling not in ("full", "external"):
            raise UsageError(f"expected a full-width or external-sampling solver with frozen "
                             f"rows, got {config.name!r}")
        if frozen is not None and frozen.warm > 0 and config.sampling != "external":
            raise UsageError(f"expected external sampling for a warm start, got "
                             f"{config.name!r}")
        return KernelRunner(self, config, frozen)

    def average(self, strategy_sum: F64, regrets: F64, frozen: FrozenRows | None) -> F64:
        """Enumerated games: rows normalised, uniform where never reached. Pools: rows never
        reached take the regret matching of their regrets, or with frozen rows the frozen
        values. Frozen rows play their values."""
        g = self.g
        if not self.pool:
            out = normalise_rows(cast(RowTable, self.game), strategy_sum)
        elif frozen is None:
            out = np.empty(self.table_size)
            normalise_or_regrets(g.num_actions, g.offset, g.rows, strategy_sum, regrets, out)
        else:
            out = normalise_or(g, strategy_sum, frozen.values)
        if frozen is not None:
            out[frozen.mask] = frozen.values[frozen.mask]
        return out


def normalise_or(g: KernelGame, sums: F64, fallback: F64) -> F64:
    """Rows of ``sums`` normalised; rows summing to zero take ``fallback``'s."""
    out = fallback.copy()
    for node in np.flatnonzero(g.num_actions > 0):
        k = int(g.num_actions[node])
        o = int(g.offset[node])
        n = int(g.rows[node]) * k
        block = sums[o : o + n].reshape(-1, k)
        total = block.sum(axis=1)
        ok = total > 0
        view = out[o : o + n].reshape(-1, k)
        view[ok] = block[ok] / total[ok, None]
    return out


class KernelRunner:
    """The scratch arrays of one configuration over a flat game, and its run loop."""

    def __init__(self, flat: FlatGame, config: SolverConfig, frozen: FrozenRows | None) -> None:
        game = flat.game
        self.g = flat.g
        self.config = config
        n, depth = game.num_players, game.max_depth + 2
        self._node_at = np.zeros(depth, dtype=np.int64)
        self._next_action = np.zeros(depth, dtype=np.int64)
        self._frozen, self._fixed = NO_FROZEN, NO_VALUES
        self._frozen_index, self._frozen_value = NO_INDEX, NO_VALUES
        if frozen is not None and config.sampling == "full":
            self._frozen_index = np.flatnonzero(frozen.mask).astype(np.int64)
            self._frozen_value = np.ascontiguousarray(frozen.values[self._frozen_index])
        elif frozen is not None:
            self._frozen, self._fixed = frozen.mask, frozen.values
        if config.sampling == "full":
            self._current = np.zeros(game.table_size)
            self._reach = np.zeros((depth, n, game.num_deals))
            self._value = np.zeros((depth, n, game.num_deals))
            self._action_value = np.zeros((depth, game.max_actions, game.num_deals))
            return
        if flat.pool:
            self._cumulative = np.empty(0)
        else:
            cumulative = np.cumsum(self.g.deal_prob)
            cumulative[-1] = 1.0
            self._cumulative = cumulative
        self._sigma = np.zeros((depth, game.max_actions))
        self._utility = np.zeros((depth, game.max_actions))
        self._total = np.zeros(depth)
        self._chosen = np.zeros(depth, dtype=np.int64)
        self._reach = np.zeros((depth, n))
        self._value = np.zeros((depth, n))
        self._action_value = np.zeros((depth, game.max_actions))

    def run(self, iterations: int, t0: int, regrets: F64, strategy_sum: F64,
            rng_state: I64) -> float:
        c = self.config
        if c.sampling == "full":
            cfr_run(self.g, iterations, t0, c.alternating, c.regret_plus, c.discount, c.alpha,
                    c.beta, c.gamma, self._frozen_index, self._frozen_value, regrets,
                    strategy_sum, self._current, self._reach, self._value, self._action_value,
                    self._node_at, self._next_action)
            return 0.0
        if c.sampling == "chance":
            return float(cs_run(self.g, iterations, t0, c.alternating, c.regret_plus,
                                c.discount, c.alpha, c.beta, c.gamma, regrets, strategy_sum,
                                rng_state, self._cumulative, self._sigma, self._reach,
                                self._value, self._action_value, self._node_at,
                                self._next_action))
        if c.sampling == "pure":
            return float(pure_run(self.g, iterations, t0, c.regret_plus, c.discount, c.alpha,
                                  c.beta, c.gamma, regrets, strategy_sum, rng_state,
                                  self._cumulative, self._sigma, self._utility, self._chosen,
                                  self._node_at, self._next_action))
        return float(es_run(self.g, iterations, t0, c.regret_plus, c.discount, c.alpha, c.beta,
                            c.gamma, c.discount_interval, c.discount_until, regrets,
                            strategy_sum, self._frozen, self._fixed, rng_state,
                            self._cumulative, self._sigma, self._utility, self._total,
                            self._node_at, self._next_action))


def adapt(game: SolverGame | KernelSource) -> SolverGame:
    """``game`` if it is a game adapter, else its :class:`FlatGame`."""
    if isinstance(game, SolverGame):
        return game
    return FlatGame(game)


# --------------------------------------------------------------------------- the solver


class Solver:
    """The one solver: a game adapter, behaviour flags, cumulative regrets and average.

    Args:
        game: a game adapter (:class:`SolverGame`) or a flat game, adapted by
            :class:`FlatGame`: the enumerated abstract game
            (:func:`strategies.games.abstract.build_abstract_game`), a pool game
            (:class:`strategies.solvers.dealpool.PoolGame`, external sampling or Pure CFR
            only), a continuous game of :mod:`strategies.sizes.learned`.
        config: a :class:`SolverConfig` or a variant name (``cfr``, ``cfr+``, ``lcfr``,
            ``dcfr``, ``mccfr-es``, ``cfr-cs``, ``pure-cfr``, ``mccfr-es-pool``).
        seed: seeds the sampling generator (ignored by full-width variants, kept anyway).
        frozen: rows that play fixed values (:class:`FrozenRows`; strategy grafting).

    Raises:
        UsageError: for a configuration the game cannot run, or frozen rows that do not fit.
    """

    def __init__(
        self, game: SolverGame | KernelSource, config: SolverConfig | str = "cfr", *,
        seed: int = 0, frozen: FrozenRows | None = None,
    ) -> None:
        self.game = game
        self.adapter = adapt(game)
        self.config = solver_config(config)
        size = self.adapter.table_size
        if frozen is not None:
            mask = np.ascontiguousarray(np.asarray(frozen.mask, dtype=bool).reshape(-1))
            values = np.ascontiguousarray(np.asarray(frozen.values, dtype=np.float64)
                                          .reshape(-1))
            if mask.size != size or values.size != size:
                raise UsageError(f"expected frozen rows and values of {size} entries, got "
                                 f"{mask.size} and {values.size}")
            if not frozen.warm >= 0:
                raise UsageError(f"expected warm >= 0, got {frozen.warm!r}")
            frozen = FrozenRows(mask, values, float(frozen.warm))
        self.frozen = frozen
        self._runner = self.adapter.runner(self.config, frozen)
        self.seed = int(seed)
        self.iteration = 0
        """Iterations done so far."""
        self.seconds = 0.0
        """Wall time spent in :meth:`iterate` (carried over by checkpoints)."""
        self.value_sum = 0.0
        """Sampling: the sum of position 0's sampled traversal values (divide by
        :attr:`iteration` for a running estimate of its game value)."""
        self.regrets = np.zeros(size)
        """Cumulative counterfactual regrets, in table layout."""
        self.strategy_sum = np.zeros(size)
        """Weighted sums of the current strategies (unnormalised average)."""
        if frozen is not None and frozen.warm > 0:
            free = ~frozen.mask
            self.regrets[free] = frozen.warm * frozen.values[free]
            self.strategy_sum[free] = frozen.warm * frozen.values[free]
        self.rng_state = _rng.seed_state(self.seed)

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) the kernels without iterating."""
        self._run(0)

    def iterate(self, iterations: int = 1) -> None:
        """Run ``iterations`` more iterations.

        Raises:
            ValueError: if ``iterations`` is negative.
        """
        if iterations < 0:
            raise UsageError(f"expected a non-negative number of iterations, got {iterations}")
        if iterations == 0:
            return
        start = time.perf_counter()
        self.value_sum += self._run(iterations)
        self.iteration += iterations
        self.seconds += time.perf_counter() - start

    def _run(self, iterations: int) -> float:
        return self._runner.run(iterations, self.iteration, self.regrets, self.strategy_sum,
                                self.rng_state)

    def current_strategy(self) -> F64:
        """The regret-matching strategy the next iteration would play (flat games)."""
        assert isinstance(self.adapter, FlatGame), "expected a flat game"
        out = np.empty(self.adapter.table_size)
        regret_matching(self.adapter.g, self.regrets, out, -1)
        return out

    def average_strategy(self) -> F64:
        """The average strategy: the solver's output, in strategy-file table layout."""
        return self.adapter.average(self.strategy_sum, self.regrets, self.frozen)

    # ----------------------------------------------------------------- checkpoints

    def save_checkpoint(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """Write the solver state to ``path`` (``.npz``, atomically); return the path.

        ``extra`` is JSON-able metadata stored alongside (e.g. the recipe name).
        """
        header = {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            **self.adapter.identity(),
            "config": self.config.to_json(),
            "seed": self.seed,
            "iteration": self.iteration,
            "seconds": self.seconds,
            "value_sum": self.value_sum,
            "extra": extra or {},
        }
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_npz(target, header=np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
                  regrets=self.regrets, strategy_sum=self.strategy_sum,
                  rng_state=self.rng_state)
        return target

    @classmethod
    def load_checkpoint(cls, path: str | Path, game: SolverGame | KernelSource) -> Solver:
        """Resume a solver from :meth:`save_checkpoint` for the same game and abstractions
        (and the same pool).

        Raises:
            CheckpointError: if the file is unreadable, corrupt, or for another game,
                abstraction, pool or table size.
        """
        source = str(path)
        try:
            data = np.load(path, allow_pickle=False)
            if not isinstance(data, NpzFile):
                raise UsageError("not an .npz archive")
            with data:
                arrays = {key: np.array(data[key]) for key in data.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
            raise CheckpointError(f"{source}: cannot read checkpoint: {exc}") from None
        if "header" not in arrays:
            raise CheckpointError(f"{source}: corrupt checkpoint: missing 'header'")
        try:
            header = json.loads(arrays["header"].astype(np.uint8).tobytes().decode())
            if not isinstance(header, dict):
                raise UsageError("the header is not an object")
        except (ValueError, UnicodeDecodeError) as exc:
            raise CheckpointError(f"{source}: corrupt checkpoint header: {exc}") from None
        kind = (header.get("format"), header.get("version"))
        if kind not in ((CHECKPOINT_FORMAT, 1), (CHECKPOINT_FORMAT, CHECKPOINT_VERSION),
                        (_OLD_POOL_FORMAT, 1)):  # e.g. an EGT checkpoint: said before its arrays
            raise CheckpointError(
                f"{source}: expected a {CHECKPOINT_FORMAT} version {CHECKPOINT_VERSION}, got "
                f"{header.get('format')!r} version {header.get('version')!r}"
            )
        for key in ("regrets", "strategy_sum", "rng_state"):
            if key not in arrays:
                raise CheckpointError(f"{source}: corrupt checkpoint: missing {key!r}")
        for key, value in adapt(game).identity().items():
            if header.get(key) != value:
                what = "game" if key.startswith("game") else key
                raise CheckpointError(
                    f"{source}: checkpoint is for another {what}: expected {value!r}, "
                    f"got {header.get(key)!r}"
                )
        try:
            config = SolverConfig.from_json(dict(header["config"]))
            solver = Solver(game, config, seed=int(header["seed"]))
            solver.iteration = int(header["iteration"])
            solver.seconds = float(header["seconds"])
            solver.value_sum = float(header.get("value_sum", 0.0))
            state = _rng.check_state(arrays["rng_state"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"{source}: corrupt checkpoint header: {exc}") from None
        size = solver.adapter.table_size
        for key in ("regrets", "strategy_sum"):
            arr = arrays[key]
            if arr.shape != (size,) or arr.dtype != np.float64:
                raise CheckpointError(
                    f"{source}: corrupt checkpoint: expected {key} of {size} "
                    f"float64 values, got {arr.dtype} {arr.shape}"
                )
            if not np.isfinite(arr).all():
                raise CheckpointError(f"{source}: corrupt checkpoint: {key} is not finite")
        if solver.iteration < 0:
            raise CheckpointError(f"{source}: corrupt checkpoint: iteration {solver.iteration}")
        solver.regrets = np.ascontiguousarray(arrays["regrets"])
        solver.strategy_sum = np.ascontiguousarray(arrays["strategy_sum"])
        solver.rng_state = np.ascontiguousarray(state)
        return solver


class CFRSolver(Solver):
    """Vanilla CFR (alternating updates, uniform averaging)."""

    def __init__(self, game: AbstractGame, *, seed: int = 0) -> None:
        super().__init__(game, VARIANTS["cfr"], seed=seed)


class CFRPlusSolver(Solver):
    """CFR+: regret matching+, alternating updates, linear averaging."""

    def __init__(self, game: AbstractGame, *, seed: int = 0) -> None:
        super().__init__(game, VARIANTS["cfr+"], seed=seed)


class DCFRSolver(Solver):
    """Discounted CFR with parameters ``alpha``, ``beta``, ``gamma`` (defaults 1.5, 0, 2)."""

    def __init__(
        self, game: AbstractGame, *, alpha: float = 1.5, beta: float = 0.0, gamma: float = 2.0,
        seed: int = 0,
    ) -> None:
        config = SolverConfig("dcfr", discount=True, alpha=alpha, beta=beta, gamma=gamma)
        super().__init__(game, config, seed=seed)


class LinearCFRSolver(Solver):
    """Linear CFR: DCFR(1, 1, 1)."""

    def __init__(self, game: AbstractGame, *, seed: int = 0) -> None:
        super().__init__(game, VARIANTS["lcfr"], seed=seed)


class ExternalSamplingSolver(Solver):
    """External-sampling MCCFR (regret matching, uniform averaging; seeded)."""

    def __init__(self, game: AbstractGame, *, seed: int = 0) -> None:
        super().__init__(game, VARIANTS["mccfr-es"], seed=seed)


class ChanceSampledSolver(Solver):
    """Chance-sampled CFR (one drawn deal per pass, alternating, uniform averaging; seeded)."""

    def __init__(self, game: AbstractGame, *, seed: int = 0) -> None:
        super().__init__(game, VARIANTS["cfr-cs"], seed=seed)


class PureCFRSolver(Solver):
    """Pure CFR (sampled pure strategy profiles, integer regrets and counts; seeded)."""

    def __init__(self, game: AbstractGame, *, seed: int = 0) -> None:
        super().__init__(game, VARIANTS["pure-cfr"], seed=seed)
