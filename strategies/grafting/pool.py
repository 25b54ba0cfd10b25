"""Hold'em strategy grafting: graft games over a deal pool, solved by external-sampling MCCFR.

The enumerated grafting of :mod:`strategies.grafting.exact` needs every deal; hold'em's chance is a
sampled :class:`~strategies.solvers.dealpool.DealPool`, so here a graft game is a
:class:`~strategies.solvers.dealpool.PoolGame` and the solver is the pool's external-sampling MCCFR
(``mccfr-es-pool``) with *frozen rows*.

**Partition.** A hold'em graft owns the hands whose preflop class (one of the 169 lossless
classes) is in its group, from round ``from_round`` on (:class:`~agent.abstraction.
graft_cards.GraftPart` with ``classes``). Inside every graft the cards are a finer
:class:`~agent.abstraction.holdem_buckets.HoldemCards` (more E[HS^2] buckets per postflop
round) that *refines* the base's: built from the same ``samples``, ``seed`` and estimator
with a multiple of the base's bucket counts, its percentile thresholds contain the base's,
so every fine bucket lies inside one base bucket (:func:`refinement`). Class groups
(:func:`class_group`): ``pairs``, ``suited``, ``offsuit``, ``all``, or ``equity:I/N``
(the ``I``-th of ``N`` groups of the classes sorted by all-in equity against a random hand,
each group about ``1326 / N`` hands, 0 the weakest); presets ``holdem-flop:N`` and
``holdem-preflop:N`` (``N`` equity groups from round 1 or 0).

**Graft game** (player ``i``, graft ``j``): one pool whose buckets are the fine ones (the
base buckets follow by :func:`refinement`); the opponent sees its base buckets, ``i`` its
base bucket outside graft ``j`` and ``base + fine`` inside (the table has ``base[r] +
fine[r]`` rows per node from ``from_round`` on). ``i``'s base rows are *frozen*: chance
nodes with the base's probabilities (an action drawn from them, no regret and no average
update, for either traverser); ``i``'s graft rows and all the opponent's rows are free
(:class:`strategies.solvers.cfr.Solver` with :class:`~strategies.solvers.cfr.FrozenRows`,
the frozen rows of :func:`strategies.solvers.kernels.es_pass`, checked against a
plain-Python oracle in ``tests/strategies/test_pool_grafting.py``). ``warm`` optionally
starts the free rows at the base's strategy (regrets and average sums ``warm * base``; fine
rows from their base bucket's row) instead of uniform: a heuristic to spend a small budget
improving the base rather than re-solving the opponent from nothing.

**Assembly.** The grafted table (layout of the ``graft`` card kind: base buckets, then each
graft's fine buckets) starts as the base expanded (each fine row a copy of its base
bucket's row, :func:`expand_base`), then takes, for every (player, graft), the graft rows of
that player from its graft game. Rows of a graft never reached in its pool keep the base's.

Imports numpy, numba, :mod:`agent`, :mod:`jobs` and :mod:`strategies`; never imported by
:mod:`agent`.
"""

from __future__ import annotations

import bisect
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.abstraction.actions import BettingTree, build_tree, parse_betting_abstraction
from agent.abstraction.graft_cards import GraftCards, GraftPart
from agent.abstraction.holdem_buckets import (
    NUM_PREFLOP_CLASSES,
    HoldemCards,
    preflop_equity_table,
)
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game, parse_gamedef
from agent.acpc.limits import excerpt
from jobs.backends import run_jobs
from strategies.games.abstract import FlatTree, flatten_tree
from strategies.grafting import graft_workers
from strategies.solvers.cfr import FrozenRows, Solver, solver_config
from strategies.solvers.dealpool import DealPool, PoolGame, cached_pool

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
U16 = npt.NDArray[np.uint16]
B = npt.NDArray[np.bool_]

POOL_PRESETS = ("holdem-flop", "holdem-preflop")


# --------------------------------------------------------------------------- class groups


def _class_hands(index: int) -> int:
    row, col = divmod(index, 13)
    return 6 if row == col else 4 if row > col else 12


def class_group(text: str) -> tuple[int, ...]:
    """The preflop classes a group name stands for (module docstring).

    Raises:
        UsageError: for an unknown name or a bad ``equity:I/N``.
    """
    classes = range(NUM_PREFLOP_CLASSES)
    if text == "all":
        return tuple(classes)
    if text == "pairs":
        return tuple(c for c in classes if c // 13 == c % 13)
    if text == "suited":
        return tuple(c for c in classes if c // 13 > c % 13)
    if text == "offsuit":
        return tuple(c for c in classes if c // 13 < c % 13)
    name, _, rest = text.partition(":")
    i_text, _, n_text = rest.partition("/")
    if name == "equity" and i_text.isdigit() and n_text.isdigit():
        i, n = int(i_text), int(n_text)
        if 1 <= n <= NUM_PREFLOP_CLASSES and 0 <= i < n:
            return equity_groups(n)[i]
    raise UsageError(f"expected a preflop class group ('pairs', 'suited', 'offsuit', 'all', "
                     f"'equity:I/N' with 0 <= I < N), got {text!r}")


def equity_groups(n: int) -> list[tuple[int, ...]]:
    """The 169 classes sorted by all-in equity (ties by index), cut into ``n`` groups of
    about ``1326 / n`` hands each (weakest first)."""
    equity = preflop_equity_table()
    order = sorted(range(NUM_PREFLOP_CLASSES), key=lambda c: (equity[c], c))
    groups: list[list[int]] = [[] for _ in range(n)]
    done = 0
    for c in order:
        g = min(n - 1, (2 * done + _class_hands(c)) * n // (2 * 1326))
        groups[g].append(c)
        done += _class_hands(c)
    return [tuple(sorted(g)) for g in groups]


def expand_class_presets(grafts: object) -> object:
    """Graft items with ``"classes": "GROUP"`` (a string) get the group's list."""
    if not isinstance(grafts, list):
        return grafts
    out = []
    for item in grafts:
        if isinstance(item, dict) and isinstance(item.get("classes"), str):
            item = {**item, "classes": list(class_group(item["classes"]))}
        out.append(item)
    return out


def pool_preset(text: str) -> tuple[GraftPart, ...] | None:
    """``holdem-flop:N`` / ``holdem-preflop:N``: ``N`` equity groups (None: not a preset).

    Raises:
        UsageError: for a bad ``N``.
    """
    name, _, count = text.partition(":")
    if name not in POOL_PRESETS:
        return None
    if not count.isdigit() or not 1 <= int(count) <= 16:
        raise UsageError(f"expected {name}:N with N in 1..16, got {text!r}")
    start = 1 if name == "holdem-flop" else 0
    return tuple(GraftPart("", start, g) for g in equity_groups(int(count)))


# --------------------------------------------------------------------------- refinement


def refinement(base: HoldemCards, fine: HoldemCards) -> tuple[I64, ...]:
    """Per round: the base bucket of every fine bucket.

    Raises:
        UsageError: unless every base threshold is one of the fine ones (and the estimators
            agree), i.e. each fine bucket lies inside one base bucket.
    """
    if base.flop_rivers_per_turn != fine.flop_rivers_per_turn:
        raise UsageError(f"expected the graft's cards to use the base's flop estimator "
                         f"(flop_rivers_per_turn {base.flop_rivers_per_turn}), got "
                         f"{fine.flop_rivers_per_turn}")
    maps = [np.arange(NUM_PREFLOP_CLASSES, dtype=np.int64)]
    for r in (1, 2, 3):
        bt, ft = base.thresholds[r - 1], fine.thresholds[r - 1]
        if not set(bt) <= set(ft):
            raise UsageError(f"expected the graft's cards to refine the base's: round {r} "
                             f"base thresholds are not among the graft's (build them from "
                             f"the base's samples and seed with a multiple of its buckets)")
        out = np.zeros(len(ft) + 1, dtype=np.int64)
        for b in range(1, len(ft) + 1):
            out[b] = bisect.bisect_right(bt, ft[b - 1])
        maps.append(out)
    return tuple(maps)


def fine_cards(base: HoldemCards, spec: dict[str, Any]) -> HoldemCards:
    """The graft cards of a partition's ``cards`` spec: a full ``holdem`` spec, or only
    ``{"kind": "holdem", "buckets": [169, n1, n2, n3]}`` (thresholds built from the base's
    ``samples`` and ``seed``, so they refine it).

    Raises:
        UsageError: for another kind, or cards that do not refine the base's.
    """
    if spec.get("kind") != "holdem":
        raise UsageError(f"expected hold'em graft cards {{'kind': 'holdem', 'buckets': "
                         f"[169, n1, n2, n3]}}, got {excerpt(spec, 200)}")
    if "thresholds" in spec:
        from agent.abstraction.buckets import card_abstraction_from_spec
        from agent.acpc.gamefiles import load_game

        cards = card_abstraction_from_spec(load_game("holdem.nolimit.2p.reverse_blinds.game"),
                                           spec)
        assert isinstance(cards, HoldemCards)
    else:
        extra = set(spec) - {"kind", "buckets"}
        if extra:
            raise UsageError(f"expected hold'em graft cards with 'buckets' only (or a full "
                             f"spec with thresholds), got keys {sorted(extra)!r}")
        samples = base.spec.get("samples")
        seed = base.spec.get("seed")
        if samples is None or seed is None:
            raise UsageError("expected the base's card spec to record 'samples' and 'seed' "
                             "(to build refining graft cards)")
        try:
            cards = HoldemCards.build(tuple(spec.get("buckets", ())), samples=samples,
                                      seed=seed,
                                      flop_rivers_per_turn=base.flop_rivers_per_turn)
        except ValueError as exc:
            raise UsageError(f"partition cards: {exc}") from None
    refinement(base, cards)
    return cards


# --------------------------------------------------------------------------- graft games


@dataclass(frozen=True, eq=False)
class PoolGrafts:
    """Everything the graft games of one partition share."""

    game: Game
    tree: BettingTree
    base: HoldemCards
    fine: HoldemCards
    cards: GraftCards
    """The grafted abstraction (base buckets, then every graft's fine buckets)."""
    pool: DealPool
    """Buckets under ``fine`` (base buckets by :attr:`base_of`)."""
    base_of: tuple[I64, ...]
    base_flat: FlatTree
    grafted_flat: FlatTree

    @property
    def parts(self) -> tuple[GraftPart, ...]:
        return self.cards.parts

    def class_graft(self) -> I64:
        of = self.cards.graft_of_class
        assert of is not None
        return np.asarray(of, dtype=np.int64)

    def base_buckets(self) -> U16:
        fine = self.pool.buckets.astype(np.int64)
        out = np.empty_like(fine)
        for r in range(4):
            out[:, :, r] = self.base_of[r][fine[:, :, r]]
        return out.astype(np.uint16)


def make_pool_grafts(game: Game, tree: BettingTree, base: HoldemCards, fine: HoldemCards,
                     parts: Sequence[GraftPart], pool: DealPool) -> PoolGrafts:
    """Check and join the pieces (``pool`` built under ``fine``).

    Raises:
        UsageError: for parts without classes or a pool of other cards.
    """
    if not parts or any(not p.classes for p in parts):
        raise UsageError("expected hold'em grafts by preflop 'classes'")
    if pool.cards != fine.spec:
        raise UsageError("expected a deal pool built under the graft's cards")
    base_of = refinement(base, fine)
    cards = GraftCards(game, base, parts, [fine] * len(parts))
    return PoolGrafts(game, tree, base, fine, cards, pool, base_of,
                      flatten_tree(tree, base.buckets), flatten_tree(tree, cards.buckets))


def game_buckets(pg: PoolGrafts, graft: int) -> tuple[int, ...]:
    """Buckets per round of the graft game of ``graft``: base, plus fine where it is on."""
    start = pg.parts[graft].from_round
    return tuple(int(pg.base.buckets[r]) + (int(pg.fine.buckets[r]) if r >= start else 0)
                 for r in range(4))


def graft_pool_game(pg: PoolGrafts, player: int, graft: int) -> PoolGame:
    """The graft game of (``player``, ``graft``) as a pool game (module docstring)."""
    base_b = pg.base_buckets()
    fine_b = pg.pool.buckets
    inside = pg.class_graft()[fine_b[:, player, 0].astype(np.int64)] == graft
    buckets = base_b.copy()
    for r in range(pg.parts[graft].from_round, 4):
        shift = int(pg.base.buckets[r])
        buckets[inside, player, r] = fine_b[inside, player, r] + shift
    flat = flatten_tree(pg.tree, game_buckets(pg, graft))
    pool = DealPool(np.ascontiguousarray(buckets), pg.pool.result, pg.pool.seed,
                    {"kind": "graft-game", "player": player, "graft": graft})
    return PoolGame(flat, pool)


def expand_into(pg: PoolGrafts, flat: FlatTree, base_table: F64,
                fine_start: Sequence[int | None]) -> F64:
    """A table in ``flat``'s layout playing the base: rows below the base count are the
    base rows; the fine rows starting at ``fine_start[r]`` copy their base bucket's."""
    src = pg.base_flat
    out = np.empty(flat.table_size)
    for node in np.flatnonzero(flat.num_actions > 0):
        k = int(flat.num_actions[node])
        r = int(flat.round[node])
        nb = int(pg.base.buckets[r])
        rows = np.arange(nb, dtype=np.int64)
        if fine_start[r] is not None:
            rows = np.concatenate([rows, pg.base_of[r]])
        block = base_table[int(src.offset[node]) : int(src.offset[node]) + nb * k]
        o = int(flat.offset[node])
        out[o : o + len(rows) * k] = block.reshape(-1, k)[rows].ravel()
    return out


def expand_base(pg: PoolGrafts, base_table: npt.ArrayLike) -> F64:
    """The grafted-layout table that plays exactly like ``base_table`` (base layout)."""
    src = np.asarray(base_table, dtype=np.float64).reshape(-1)
    if src.size != pg.base_flat.table_size:
        raise UsageError(f"expected a base table of {pg.base_flat.table_size} values, got "
                         f"{src.size}")
    out = np.empty(pg.grafted_flat.table_size)
    flat = pg.grafted_flat
    for node in np.flatnonzero(flat.num_actions > 0):
        k = int(flat.num_actions[node])
        r = int(flat.round[node])
        nb = int(pg.base.buckets[r])
        rows = list(range(nb))
        for j in range(len(pg.parts)):
            lo, hi = pg.cards.graft_range(r, j)
            if hi > lo:
                rows.extend(int(b) for b in pg.base_of[r])
        o, so = int(flat.offset[node]), int(pg.base_flat.offset[node])
        block = src[so : so + nb * k].reshape(-1, k)
        out[o : o + len(rows) * k] = block[np.asarray(rows, dtype=np.int64)].ravel()
    return out


def game_base_table(pg: PoolGrafts, game: PoolGame, graft: int, base_table: F64) -> F64:
    """The base, in the layout of the graft game of ``graft``."""
    start = pg.parts[graft].from_round
    fine_start = [int(pg.base.buckets[r]) if r >= start else None for r in range(4)]
    return expand_into(pg, game.flat, base_table, fine_start)


def frozen_rows(game: PoolGame, player: int, base_counts: Sequence[int]) -> B:
    """Per table entry of a graft game: True at ``player``'s base rows (frozen)."""
    f = game.flat
    mask = np.zeros(f.table_size, dtype=bool)
    for node in np.flatnonzero((f.num_actions > 0) & (f.player == player)):
        k = int(f.num_actions[node])
        o = int(f.offset[node])
        mask[o : o + int(base_counts[int(f.round[node])]) * k] = True
    return mask


def graft_index(pg: PoolGrafts, game: PoolGame, player: int, graft: int) -> tuple[I64, I64]:
    """(entries of the graft game, entries of the grafted table) of ``player``'s rows in
    ``graft``, in the same order."""
    src, dst = [], []
    f, g = game.flat, pg.grafted_flat
    for node in np.flatnonzero((f.num_actions > 0) & (f.player == player)):
        r = int(f.round[node])
        lo, hi = pg.cards.graft_range(r, graft)
        if hi <= lo:
            continue
        k = int(f.num_actions[node])
        nb = int(pg.base.buckets[r])
        a = int(f.offset[node]) + nb * k
        b = int(g.offset[node]) + lo * k
        n = (hi - lo) * k
        src.append(np.arange(a, a + n, dtype=np.int64))
        dst.append(np.arange(b, b + n, dtype=np.int64))
    if not src:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(src), np.concatenate(dst)


# --------------------------------------------------------------------------- jobs


@dataclass(frozen=True)
class PoolGraftJob:
    """One hold'em graft to solve, in JSON-able pieces and arrays (sent to workers)."""

    game_text: str
    betting: dict[str, Any]
    base_cards: dict[str, Any]
    fine_cards: dict[str, Any]
    parts: list[dict[str, Any]]
    pool_buckets: U16
    """The pool's buckets under the fine cards, ``(N, 2, 4)``."""
    pool_result: npt.NDArray[np.int8]
    pool_seed: int
    base_table: F64
    player: int
    graft: int
    iterations: int
    config: dict[str, Any]
    seed: int
    warm: float
    chunk: int = 1_000_000
    verbose: bool = False
    """Print a progress line on stderr after every chunk (from the worker)."""


@dataclass(frozen=True)
class PoolGraftResult:
    """A solved hold'em graft: its rows in the grafted table."""

    player: int
    graft: int
    iterations: int
    seconds: float
    value0: float
    """The running estimate of position 0's value in the graft game (chips per hand)."""
    index: I64
    values: F64

    def summary(self, part: GraftPart) -> dict[str, Any]:
        return {"player": self.player, "graft": self.graft, **part.to_json(),
                "iterations": self.iterations, "seconds": round(self.seconds, 3),
                "sampled_value_p0": self.value0}


def pool_grafts_of(job: PoolGraftJob) -> PoolGrafts:
    """The shared pieces of a job."""
    from agent.abstraction.graft_cards import check_parts

    game = parse_gamedef(job.game_text, "graft job")
    base = HoldemCards.from_spec(game, job.base_cards)
    fine = HoldemCards.from_spec(game, job.fine_cards)
    tree = build_tree(game, parse_betting_abstraction(job.betting))
    pool = DealPool(job.pool_buckets, job.pool_result, job.pool_seed, fine.spec)
    return make_pool_grafts(game, tree, base, fine, check_parts(game, job.parts), pool)


def solve_pool_graft(job: PoolGraftJob, pg: PoolGrafts | None = None,
                     log: Callable[[str], None] | None = None) -> PoolGraftResult:
    """Solve one hold'em graft game for ``job.iterations`` iterations."""
    from strategies.solvers.cfr import SolverConfig

    t0 = time.perf_counter()
    pg = pg or pool_grafts_of(job)
    game = graft_pool_game(pg, job.player, job.graft)
    fixed = game_base_table(pg, game, job.graft, job.base_table)
    frozen = frozen_rows(game, job.player, pg.base.buckets)
    config = SolverConfig.from_json(job.config)
    if config.sampling != "external":
        raise UsageError(f"expected external sampling for a hold'em graft game, got "
                         f"{config.name!r}")
    solver = Solver(game, config, seed=job.seed, frozen=FrozenRows(frozen, fixed, job.warm))
    if log is None and job.verbose:
        def log(text: str) -> None:
            print(f"acpc-strategy: {text}", file=sys.stderr, flush=True)
    while solver.iteration < job.iterations:
        solver.iterate(min(job.chunk, job.iterations - solver.iteration))
        if log is not None:
            log(f"position {job.player} graft {job.graft}: {solver.iteration:,}/"
                f"{job.iterations:,} iterations ({solver.seconds:.0f} s, sampled value of "
                f"position 0 {solver.value_sum / solver.iteration:+.2f})")
    src, dst = graft_index(pg, game, job.player, job.graft)
    table = solver.average_strategy()
    return PoolGraftResult(job.player, job.graft, solver.iteration,
                           time.perf_counter() - t0,
                           solver.value_sum / max(solver.iteration, 1), dst, table[src])


def assemble(pg: PoolGrafts, base_table: npt.ArrayLike,
             results: Sequence[PoolGraftResult]) -> F64:
    """The grafted table: the base expanded, each graft's rows written in."""
    table = expand_base(pg, base_table)
    for r in results:
        table[r.index] = r.values
    return table


def rows_outside(pg: PoolGrafts, players: Sequence[int]) -> B:
    """Per grafted-table entry: True unless it is a grafted position's row in a graft."""
    inside = np.zeros(pg.grafted_flat.table_size, dtype=bool)
    f = pg.grafted_flat
    for node in np.flatnonzero(f.num_actions > 0):
        if int(f.player[node]) not in players:
            continue
        r, k, o = int(f.round[node]), int(f.num_actions[node]), int(f.offset[node])
        for j in range(len(pg.parts)):
            lo, hi = pg.cards.graft_range(r, j)
            inside[o + lo * k : o + hi * k] = True
    return ~inside


# --------------------------------------------------------------------------- the driver


@dataclass(frozen=True)
class PoolGrafted:
    """A grafted hold'em strategy: its card spec, table and per-graft figures."""

    cards: dict[str, Any]
    table: F64
    results: tuple[PoolGraftResult, ...]
    parts: tuple[GraftPart, ...]
    pool_deals: int
    pool_seconds: float

    def meta(self) -> dict[str, Any]:
        return {"grafts": [r.summary(self.parts[r.graft]) for r in self.results],
                "pool_deals": self.pool_deals}


def pool_graft_strategy(
    game: Game, tree: BettingTree, base: HoldemCards, base_table: npt.ArrayLike,
    parts: Sequence[GraftPart], fine_spec: dict[str, Any], players: Sequence[int], *,
    pool_deals: int, pool_seed: int = 0, iterations: int, config: Any = "mccfr-es-pool",
    seed: int = 0, warm: float = 0.0, workers: int = 1, backend: str = "local",
    address: str | None = None, pool_workers: int = 1, chunk: int = 1_000_000,
    verbose: bool = False,
    log: Callable[[str], None] | None = None,
    progress: Callable[[PoolGraftResult, int, int], None] | None = None,
    keep: Callable[[PoolGraftJob], PoolGraftResult | None] | None = None,
    save: Callable[[PoolGraftJob, PoolGraftResult], None] | None = None,
) -> PoolGrafted:
    """Graft ``parts`` onto the hold'em base (module docstring) and assemble the result.

    ``keep(job)`` may return a result already solved (a resumed run), ``save`` stores each
    new one as it finishes.

    Raises:
        UsageError: for bad arguments or cards that do not refine the base's.
    """
    say = log or (lambda text: None)
    if iterations < 0 or pool_deals < 1:
        raise UsageError(f"expected iterations >= 0 and pool deals >= 1, got {iterations}, "
                         f"{pool_deals}")
    fine = fine_cards(base, fine_spec)
    t0 = time.perf_counter()
    pool = cached_pool(fine, pool_deals, seed=pool_seed, workers=pool_workers,
                       progress=lambda n: None)
    pool_seconds = time.perf_counter() - t0
    say(f"deal pool of {pool_deals:,} deals under {list(fine.buckets)} buckets "
        f"({'built' if pool.seconds else 'cached'}, {pool_seconds:.1f} s)")
    pg = make_pool_grafts(game, tree, base, fine, parts, pool)
    table = np.asarray(base_table, dtype=np.float64).reshape(-1)
    if table.size != pg.base_flat.table_size:
        raise UsageError(f"expected a base table of {pg.base_flat.table_size} values, got "
                         f"{table.size}")
    from agent.acpc.gamedef import format_gamedef
    from strategies.solvers.cfr import SolverConfig

    cfg = config if isinstance(config, SolverConfig) else solver_config(config)
    jobs = [
        PoolGraftJob(format_gamedef(game), tree.abstraction.to_json(), base.spec, fine.spec,
                     [p.to_json() for p in pg.parts], pool.buckets, pool.result, pool_seed,
                     table, player, j, iterations, cfg.to_json(), seed + 1000 * player + j,
                     warm, chunk, verbose)
        for player in players for j in range(len(pg.parts))
    ]
    results: list[PoolGraftResult] = []
    todo = []
    for job in jobs:
        old = keep(job) if keep is not None else None
        if old is None:
            todo.append(job)
        else:
            results.append(old)
            say(f"position {job.player} graft {job.graft}: kept from an earlier run")

    def done(result: PoolGraftResult) -> None:
        results.append(result)
        if save is not None:
            save(next(j for j in todo if (j.player, j.graft) == (result.player, result.graft)),
                 result)
        if progress is not None:
            progress(result, len(results), len(jobs))

    run_jobs(solve_pool_graft, todo, lambda finished: done(finished.result()),
             workers=graft_workers(backend, workers), backend=backend, address=address)
    results.sort(key=lambda r: (r.player, r.graft))
    grafted = assemble(pg, table, results)
    return PoolGrafted(pg.cards.spec, grafted, tuple(results), pg.parts, pool_deals,
                       pool_seconds)


# --------------------------------------------------------------------------- measuring


def pool_cards_of(cards: GraftCards) -> HoldemCards:
    """The cards a pool for a grafted hold'em file is built under: the grafts' (every
    graft has the same fine cards, which refine the base's).

    Raises:
        UsageError: for grafts of other kinds or of different cards.
    """
    base = cards.base
    inner = cards.inner
    if not isinstance(base, HoldemCards) or any(not isinstance(c, HoldemCards) for c in inner) \
            or any(c.spec != inner[0].spec for c in inner):
        raise UsageError("expected a grafted hold'em file whose grafts share one holdem card "
                         "abstraction")
    fine = inner[0]
    assert isinstance(fine, HoldemCards)
    refinement(base, fine)
    return fine


def grafted_pool(cards: GraftCards, pool: DealPool) -> DealPool:
    """``pool`` (built under :func:`pool_cards_of`) with the grafted file's buckets, as
    :meth:`GraftCards.bucket` gives them."""
    fine = pool_cards_of(cards)
    assert isinstance(cards.base, HoldemCards)
    base_of = refinement(cards.base, fine)
    of = cards.graft_of_class
    if of is None:
        raise UsageError("expected hold'em grafts by preflop 'classes'")
    graft = np.asarray(of, dtype=np.int64)[pool.buckets[:, :, 0].astype(np.int64)]
    fb = pool.buckets.astype(np.int64)
    out = np.empty_like(fb)
    for r in range(4):
        out[:, :, r] = base_of[r][fb[:, :, r]]
        for j, part in enumerate(cards.parts):
            if r >= part.from_round:
                inside = graft == j
                out[:, :, r][inside] = cards.graft_range(r, j)[0] + fb[:, :, r][inside]
    return DealPool(np.ascontiguousarray(out.astype(np.uint16)), pool.result, pool.seed,
                    cards.spec, pool.seconds)
