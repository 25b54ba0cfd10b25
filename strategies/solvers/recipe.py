"""Solving a recipe: one solve loop, one checkpoint, one manifest writer for every recipe.

:func:`solve_recipe` is what ``acpc-strategy solve --recipe NAME`` runs. A recipe's ``cards``
names its game (:data:`RECIPE_GAMES`, a :class:`RecipeGame`): enumerated (lossless cards:
:meth:`Recipe.abstract_game`), sampled (hold'em: :func:`setup_pool_game` builds the card
abstraction, the flat tree and the deal pool, cached) or Royal's public tree
(:class:`strategies.solvers.royal.RoyalGame`); whichever, the one
:class:`strategies.solvers.cfr.Solver` runs on it, through :func:`run_solver` (or, for the
solver ``egt`` on an enumerated game or Royal's public tree,
:class:`strategies.solvers.egt.EGTSolver`, the excessive gap technique, through the same
loop, checkpoint and writer):

* iterations in chunks of about :data:`CHUNK_SECONDS`, until the target iteration count or
  the deadline;
* a progress display (:func:`agent.console.make_progress`) with iterations/s and a note:
  the abstract-game exploitability (enumerated games, recomputed every few seconds but at
  most 5% of the time) or the running estimate of position 0's value (pool games);
* Ctrl-C (SIGINT) stops between chunks; the checkpoint (:meth:`Solver.save_checkpoint`) is
  written then and every ``checkpoint_minutes`` for long solves, so ``--resume`` continues
  any of them. A finished run keeps its checkpoint only when ``--checkpoint`` named it (a
  default ``NAME.ckpt.npz`` is removed: a successful solve leaves only its strategy file).

The strategy file gets the solver's metadata and the figures of the stored table (the
exact exploitability of enumerated and Royal games); ``--bundle`` writes the bundled file and its
manifest entry (:func:`bundle_entry`, figures of an earlier entry for the same table kept).

Imports :mod:`agent` and :mod:`strategies`; never imported by :mod:`agent`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import numpy as np

from agent import console
from agent.abstraction.actions import BettingAbstraction, BettingTree, build_tree
from agent.abstraction.holdem_buckets import HoldemCards, check_holdem_game
from agent.acpc.errors import AbstractionError, UsageError
from agent.acpc.gamedef import Game
from agent.strategy.fileformat import Strategy, dump_strategy, load_strategy, quantize_rows
from strategies.cache import cache_dir
from strategies.commands.defaults import PROG
from strategies.games.abstract import AbstractGame, flatten_tree, normalise_rows
from strategies.measure.best_response import Exploitability, exploitability
from strategies.recipes import Recipe, load_manifest, update_manifest
from strategies.solvers.cfr import KernelSource, Solver, SolverGame
from strategies.solvers.dealpool import PoolCards, PoolGame, cached_pool
from strategies.solvers.egt import EGTSolver, is_egt

if TYPE_CHECKING:
    from agent.abstraction.holdem_pa import PotentialAwareCards

AnySolver = Solver | EGTSolver
"""What :func:`run_solver` iterates: the CFR family's :class:`Solver` or the excessive gap
technique's :class:`strategies.solvers.egt.EGTSolver` (same interface)."""

CHUNK_SECONDS = 0.25
"""Iterations run in chunks of about this long: Ctrl-C is noticed between chunks."""


def say(text: str) -> None:
    """A progress message on stderr, prefixed with the program name."""
    print(f"{PROG}: {text}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the loop


def _progress_line(completed: float, fields: dict[str, str] | Any) -> str:
    note = f", {fields['note']}" if fields.get("note") else ""
    return f"{PROG}: iteration {fields['count']}, {fields['rate']}{note}"


def run_solver(
    solver: AnySolver, target: int | None, deadline: float | None, *, progress: bool,
    banner: str, note: Callable[[AnySolver], str] | None = None, checkpoint: Path | None = None,
    checkpoint_every: float = float("inf"), extra: dict[str, Any] | None = None,
) -> bool:
    """Iterate in short chunks until ``target`` iterations or ``deadline`` (monotonic).

    ``note(solver)`` gives the progress note (called every few seconds, at most 5% of the
    time); ``checkpoint`` is written every ``checkpoint_every`` seconds. Ctrl-C (SIGINT) is
    caught from before the banner is printed until the end, and stops the run between
    chunks. Returns True if it was interrupted.
    """
    stop = False

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        nonlocal stop
        stop = True

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        print(banner, file=sys.stderr, flush=True)
        by_time = target is None
        seconds = None if deadline is None else deadline - time.monotonic()
        total: float | None = seconds if by_time else float(target or 0) or None
        bar = console.make_progress(
            enabled=progress, description="solving", total=total,
            completed=0.0 if by_time else solver.iteration, fields=("count", "rate", "note"),
            line=_progress_line, plain_every=10.0,
        )
        of = "" if target is None else f"/{target:,}"
        chunk = 1
        text = ""
        rate_text = ""
        t0 = time.monotonic()
        last_note = last_save = t0
        note_cost = 0.0
        try:
            while not stop:
                if target is not None and solver.iteration >= target:
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    break
                n = chunk if target is None else min(chunk, target - solver.iteration)
                t = time.perf_counter()
                solver.iterate(n)
                rate = n / max(time.perf_counter() - t, 1e-9)
                rate_text = f"{rate:,.0f} it/s"
                chunk = max(1, min(int(rate * CHUNK_SECONDS), 1_000_000))
                now = time.monotonic()
                if note is not None and now - last_note >= max(2.0, 20.0 * note_cost):
                    t = time.perf_counter()
                    text = note(solver)
                    note_cost = time.perf_counter() - t
                    last_note = time.monotonic()
                if checkpoint is not None and now - last_save >= checkpoint_every:
                    solver.save_checkpoint(checkpoint, extra)
                    last_save = time.monotonic()
                bar.update(now - t0 if by_time else solver.iteration,
                           count=f"{solver.iteration:,}{of} it", rate=rate_text, note=text)
            if note is not None and not stop and solver.iteration > 0:
                # the bar ends on the figure of the iterate the file gets, not on a
                # note a few seconds old (the final line reports the same one)
                text = note(solver)
                bar.update(time.monotonic() - t0 if by_time else solver.iteration,
                           count=f"{solver.iteration:,}{of} it", rate=rate_text, note=text)
        finally:
            bar.close()
    finally:
        signal.signal(signal.SIGINT, previous)
    return stop


def exploitability_note(solver: AnySolver) -> str:
    """The headline exploitability of the current average (enumerated games)."""
    game = solver.game
    assert isinstance(game, AbstractGame)
    kind, value = exploitability(game, solver.average_strategy()).headline
    return f"{kind} {value:.3g}"


def gap_bound_note(solver: AnySolver) -> str:
    """EGT's own bound on its iterates' exploitability (free: no best response), the
    progress note of games whose best response is slow (Royal's)."""
    assert isinstance(solver, EGTSolver)
    return f"exploitability <= {solver.gap_bound() / 2:.3g}"


def value_note(solver: AnySolver) -> str:
    """The running estimate of position 0's value (pool games)."""
    return f"v0 {solver.value_sum / max(solver.iteration, 1):+.1f}"


# --------------------------------------------------------------------------- pool games


@dataclass(frozen=True, eq=False)
class PoolSetup:
    """Everything a sampled (hold'em) recipe solves on."""

    game: Game
    betting: BettingAbstraction
    cards: PoolCards
    pool_game: PoolGame
    cards_seconds: float


def setup_pool_game(recipe: Recipe, *, workers: int = 1,
                    log: Callable[[str], None] | None = None) -> PoolSetup:
    """Build (or load from the cache) the card abstraction, tree and pool of ``recipe``."""
    tell = log or (lambda text: None)
    game = recipe.load_game()
    check_holdem_game(game)
    betting = recipe.betting_abstraction()
    t0 = time.perf_counter()
    cards: PoolCards
    if recipe.cards == "holdem-pa":
        cards = potential_aware_cards(recipe, game, workers=workers, log=tell)
    else:
        cards = HoldemCards.build(recipe.buckets, samples=recipe.card_samples, seed=recipe.seed)
    cards_seconds = time.perf_counter() - t0
    tell(f"card abstraction {list(cards.buckets)} built in {cards_seconds:.1f} s")
    tree = build_tree(game, betting)
    flat = flatten_tree(tree, cards.buckets)
    tell(f"betting tree {betting.name}: {len(tree.nodes)} nodes, "
         f"{int((flat.num_actions > 0).sum())} decisions, table of {flat.table_size} values")
    last = [time.monotonic()]

    def tick(done: int) -> None:
        if time.monotonic() - last[0] >= 10.0:
            last[0] = time.monotonic()
            tell(f"deal pool: {done:,}/{recipe.pool_deals:,} deals")

    pool = cached_pool(cards, recipe.pool_deals, seed=recipe.seed, workers=workers,
                       progress=tick)
    how = f"built in {pool.seconds:.1f} s" if pool.seconds else "loaded from the cache"
    tell(f"deal pool of {pool.size:,} deals {how} ({cache_dir()})")
    return PoolSetup(game, betting, cards, PoolGame(flat, pool), cards_seconds)


def potential_aware_cards(recipe: Recipe, game: Game, *, workers: int = 1,
                          log: Callable[[str], None] | None = None) -> PotentialAwareCards:
    """The recipe's potential-aware abstraction: built (:func:`strategies.cards.potential.build`,
    minutes) or read from the cache, where a build is kept as its spec (JSON) under a name
    hashed from every build parameter."""
    from agent.abstraction.holdem_pa import PotentialAwareCards
    from strategies.cards.potential import build, build_cards

    params = {"kind": "holdem-pa", "clusters": list(recipe.buckets), "recall": recipe.recall,
              "bins": recipe.bins, "samples": recipe.card_samples, "seed": recipe.seed}
    key = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:20]
    path = cache_dir() / f"holdem-pa-{key}.json"
    if path.exists():
        try:
            spec = json.loads(path.read_text(encoding="utf-8"))
            cards = PotentialAwareCards.from_spec(game, spec)
        except (OSError, ValueError, AbstractionError) as exc:  # rebuilt below
            if log:
                log(f"potential-aware cache {path} unusable ({exc}); rebuilding")
        else:
            if [cards.spec.get(k) for k in ("clusters", "recall", "bins", "samples", "seed")] \
                    == [params[k] for k in ("clusters", "recall", "bins", "samples", "seed")]:
                if log:
                    log(f"potential-aware card abstraction loaded from the cache ({path})")
                return cards
    built = build(tuple(recipe.buckets), bins=recipe.bins, samples=recipe.card_samples,
                  seed=recipe.seed, workers=max(1, workers), progress=log)
    cards = build_cards(built, recipe.recall)
    with contextlib.suppress(OSError):  # a read-only cache only costs a rebuild next time
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(cards.spec), encoding="utf-8")
        os.replace(tmp, path)
    return cards


def manifest_cards(spec: dict[str, Any]) -> dict[str, Any]:
    """A card spec as the manifest records it: tables (``zlib_b64``) replaced by their
    sha256, so the manifest stays readable; the file holds the full spec."""
    return {k: ({kk: vv for kk, vv in v.items() if kk != "zlib_b64"} if isinstance(v, dict)
                else v) for k, v in spec.items()}


# --------------------------------------------------------------------------- figures


def stored_table(game: AbstractGame, table: Any, dtype: str) -> Any:
    """The table as it will read back from a file of ``dtype`` (float64, rows renormalised
    as :func:`strategies.measure.best_response.strategy_table` reads them)."""
    if dtype == "uint16":
        return normalise_rows(game, quantize_rows(table, game.layout).astype(np.float64))
    return normalise_rows(game, np.asarray(table, dtype=np.float32))


def figures(result: Exploitability) -> dict[str, Any]:
    """The manifest's and the file's exploitability fields."""
    kind, value = result.headline
    return {
        "exploitability": value,
        "exploitability_kind": kind,
        "best_responses": list(result.best_responses),
        "game_value": list(result.values),
        "units": "chips per hand",
    }


_KEPT_POOL_FIGURES = ("matches", "exploitability", "exploitability_kind", "pool_seconds",
                      "exploitability_ci95", "game_value", "sampled_best_response",
                      "sampled_best_response_command")
"""Figures measured after a pool solve (by matches, a sampled best response) that a new
entry keeps when it is for the very same table."""


def bundle_entry(recipe: Recipe, path: Path, loaded: Strategy, solver: AnySolver,
                 fields: dict[str, Any]) -> dict[str, Any]:
    """The manifest entry of a bundled file: what every entry has, then ``fields``."""
    rest = dict(fields)
    purification = rest.pop("default_purification", None)
    entry: dict[str, Any] = {
        "file": path.name,
        "recipe": recipe.name,
        "game": recipe.game,
        "betting": loaded.betting.name,
        **rest,
        "dtype": recipe.dtype,
    }
    if purification is not None:
        entry["default_purification"] = purification
    entry["checksum"] = loaded.checksum
    entry["file_sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    entry["bytes"] = path.stat().st_size
    if isinstance(solver.game, PoolGame):
        old = load_manifest()["files"].get(recipe.name, {})
        if old.get("checksum") == loaded.checksum:
            for key in _KEPT_POOL_FIGURES:
                if old.get(key) is not None:
                    entry[key] = old[key]
    return entry


# --------------------------------------------------------------------------- recipe games


class RecipeGame:
    """A recipe's game as :func:`solve_recipe` solves and records it. The recipe's ``cards``
    names its kind (:data:`RECIPE_GAMES`): enumerated deals, a hold'em deal pool, or Royal's
    public tree; each gives the solver its game (a flat game or an adapter) and measures
    the stored table."""

    default_purification: str = "none"
    """The file's ``default_purification`` (the recipe's for pool files)."""

    def __init__(self, game: Game, betting: BettingAbstraction, cards: dict[str, Any],
                 tree: BettingTree, solver_game: SolverGame | KernelSource,
                 note: Callable[[AnySolver], str] | None = None) -> None:
        self.game = game
        self.betting = betting
        self.cards = cards
        self.tree = tree
        self.solver_game = solver_game
        self.note = note
        """The progress note (:func:`run_solver`)."""

    def checkpoint_every(self, minutes: float) -> float:
        """Seconds between checkpoints during the run (default: only at the end)."""
        return float("inf")

    def solver_meta(self, solver: AnySolver) -> dict[str, Any]:
        """How the file's and the manifest's ``solver`` fields describe the solver."""
        return {"solver": solver.config.name, "solver_config": solver.config.to_json()}

    def finish(self, recipe: Recipe, solver: AnySolver, average: Any,
               meta: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """Add the figures of the stored table to ``meta``; the manifest fields and the end
        of the summary line."""
        raise NotImplementedError


class EnumeratedRecipe(RecipeGame):
    """Lossless cards, every deal enumerated (:meth:`Recipe.abstract_game`)."""

    def __init__(self, game: AbstractGame) -> None:
        super().__init__(game.game, game.betting, game.cards.spec, game.tree, game,
                         exploitability_note)
        self.abstract = game

    def finish(self, recipe: Recipe, solver: AnySolver, average: Any,
               meta: dict[str, Any]) -> tuple[dict[str, Any], str]:
        result = exploitability(self.abstract, stored_table(self.abstract, average,
                                                            recipe.dtype))
        meta.update(figures(result))
        kind, value = result.headline
        fields = {"cards": self.cards, "solver": solver.config.name,
                  "iterations": solver.iteration, "seconds": round(solver.seconds, 2),
                  **figures(result)}
        return fields, (f", {kind} {value:.6g} chips/hand, game value "
                        f"{', '.join(f'{v:+.6f}' for v in result.values)}")


class PoolRecipe(RecipeGame):
    """Hold'em buckets and a sampled deal pool (:func:`setup_pool_game`)."""

    def __init__(self, recipe: Recipe, setup: PoolSetup) -> None:
        super().__init__(setup.game, setup.betting, setup.cards.spec,
                         setup.pool_game.flat.tree, setup.pool_game, value_note)
        self.setup = setup
        self.default_purification = recipe.purification

    def checkpoint_every(self, minutes: float) -> float:
        return 60.0 * minutes

    def finish(self, recipe: Recipe, solver: AnySolver, average: Any,
               meta: dict[str, Any]) -> tuple[dict[str, Any], str]:
        setup = self.setup
        pool = setup.pool_game.pool
        meta["pool_deals"] = pool.size
        meta["sampled_value_p0"] = solver.value_sum / max(solver.iteration, 1)
        fields = {
            "betting_spec": setup.betting.to_json(),
            "cards": manifest_cards(setup.cards.spec),
            "solver": solver.config.name,
            "solver_config": solver.config.to_json(),
            "iterations": solver.iteration,
            "seconds": round(solver.seconds, 2),
            "card_abstraction_seconds": round(setup.cards_seconds, 2),
            "pool_deals": pool.size,
            "pool_seconds": round(pool.seconds, 2) if pool.seconds else None,
            "exploitability": None,
            "exploitability_kind": "not computed",
            "sampled_value_p0": meta["sampled_value_p0"],
            "units": "chips per hand",
            "default_purification": recipe.purification,
        }
        return fields, ""


class RoyalRecipe(RecipeGame):
    """Lossless cards, CFR+ on the public tree (:class:`strategies.solvers.royal.RoyalGame`)."""

    def __init__(self, recipe: Recipe) -> None:
        from strategies.solvers.royal import RoyalGame

        say(f"{recipe.name}: building the lossless cards and the boards")
        royal = RoyalGame(recipe.load_game(), recipe.betting_abstraction())
        super().__init__(royal.game, royal.betting, royal.cards.spec, royal.tree, royal)
        self.royal = royal

    def solver_meta(self, solver: AnySolver) -> dict[str, Any]:
        if isinstance(solver, EGTSolver):
            return {"solver": "egt (public tree)", "solver_config": solver.config.to_json()}
        return {"solver": "cfr+ (public tree, royal_cfr)"}

    def finish(self, recipe: Recipe, solver: AnySolver, average: Any,
               meta: dict[str, Any]) -> tuple[dict[str, Any], str]:
        from strategies.solvers.royal import stored_average

        br0, br1 = self.royal.exploitability(stored_average(self.royal, average,
                                                            recipe.dtype))
        found: dict[str, Any] = {
            "exploitability": (br0 + br1) / 2, "exploitability_kind": "(br0 + br1) / 2",
            "best_responses": [br0, br1], "units": "chips per hand",
        }
        meta.update(found)
        fields = {"betting_spec": self.betting.to_json(), "cards": self.cards,
                  "solver": meta["solver"], "iterations": solver.iteration,
                  "seconds": round(solver.seconds, 2), **found}
        return fields, (f", abstract-game exploitability {(br0 + br1) / 2:.6g} chips/hand "
                        f"(br0 {br0:.6g}, br1 {br1:.6g})")


RECIPE_GAMES: dict[str, Callable[[Recipe, int], RecipeGame]] = {
    "lossless": lambda recipe, workers: EnumeratedRecipe(recipe.abstract_game()),
    "holdem": lambda recipe, workers: PoolRecipe(
        recipe, setup_pool_game(recipe, workers=workers, log=say)),
    "royal": lambda recipe, workers: RoyalRecipe(recipe),
}
"""The game of a recipe by its ``cards`` kind (``holdem-pa`` is a pool like ``holdem``)."""
RECIPE_GAMES["holdem-pa"] = RECIPE_GAMES["holdem"]


def recipe_game(recipe: Recipe, *, workers: int = 1) -> RecipeGame:
    """The game ``recipe`` names (:data:`RECIPE_GAMES`).

    Raises:
        UsageError: for an unknown kind of cards.
    """
    try:
        make = RECIPE_GAMES[recipe.cards]
    except KeyError:
        raise UsageError(f"expected recipe cards in {sorted(RECIPE_GAMES)}, got "
                         f"{recipe.cards!r}") from None
    return make(recipe, max(1, workers))


# --------------------------------------------------------------------------- the command


def solve_recipe(recipe: Recipe, *, iterations: int | None, minutes: float | None,
                 resume: bool, out: str | None, checkpoint: str | None, bundle: bool,
                 progress: bool, workers: int = 1, checkpoint_minutes: float = 10.0) -> int:
    """Solve ``recipe`` and write its strategy file (and bundle it); the exit status.

    Raises:
        ValueError, CheckpointError, OSError: for bad options, checkpoints or files.
    """
    if bundle and not recipe.bundled:
        raise UsageError(f"recipe {recipe.name!r} is not bundled (its file is over 50 MB): "
                         f"write it with --out F")
    if is_egt(recipe.solver) and recipe.cards not in ("lossless", "royal"):
        raise UsageError(f"expected an enumerated game (lossless cards) or a Royal recipe "
                         f"(public tree) for --solver egt, got cards {recipe.cards!r}")
    rg = recipe_game(recipe, workers=workers)
    out_path, ckpt = recipe.solve_paths(out, bundle, checkpoint, resume)
    deadline = None if minutes is None else time.monotonic() + 60.0 * minutes
    target: int | None = None
    if minutes is None:
        target = iterations if iterations is not None else recipe.iterations
    from strategies.solvers import kernels

    solver: AnySolver
    with console.compile_notice(PROG, [kernels.cfr_run, kernels.es_run, kernels.cs_run,
                                       kernels.pure_run, kernels.egt_run]):
        if isinstance(rg, EnumeratedRecipe | RoyalRecipe) and is_egt(recipe.solver):
            source = rg.abstract if isinstance(rg, EnumeratedRecipe) else rg.royal
            solver = (EGTSolver.load_checkpoint(ckpt, source) if resume
                      else EGTSolver(source, seed=recipe.seed))
        elif resume:
            solver = Solver.load_checkpoint(ckpt, rg.solver_game)
        else:
            solver = Solver(rg.solver_game, recipe.solver_config(), seed=recipe.seed)
        solver.warm_up()
    budget = f"{target} iterations" if target is not None else f"{minutes:g} minutes"
    extra = {"recipe": recipe.name}
    described = rg.solver_meta(solver)
    note = rg.note
    if note is None and isinstance(solver, EGTSolver):
        note = gap_bound_note
    stopped = run_solver(
        solver, target, deadline, progress=progress,
        banner=f"{PROG}: solving {recipe.name} with {described['solver']} from iteration "
        f"{solver.iteration} ({budget}; Ctrl-C writes a checkpoint)",
        note=note, checkpoint=ckpt, extra=extra,
        checkpoint_every=rg.checkpoint_every(checkpoint_minutes),
    )
    if stopped or checkpoint is not None:
        solver.save_checkpoint(ckpt, extra)
    else:
        ckpt.unlink(missing_ok=True)  # a periodic or resumed-from default checkpoint
    if stopped:
        say(f"interrupted at iteration {solver.iteration}: checkpoint written to {ckpt}; "
            f"continue with --resume")
        return 130
    average = solver.average_strategy()
    meta: dict[str, Any] = {
        **described,
        "iterations": solver.iteration,
        "seconds": round(solver.seconds, 3),
        "seed": solver.seed,
        "recipe": recipe.name,
    }
    if isinstance(solver, EGTSolver):
        meta["egt"] = {"mu": list(solver.mu), "tau": solver.tau,
                       "backtracks": solver.backtracks, "gap_bound": solver.gap_bound(),
                       "init_doublings": solver.init_doublings}
    fields, summary = rg.finish(recipe, solver, average, meta)
    path = dump_strategy(out_path, rg.game, rg.betting, rg.cards, average, dtype=recipe.dtype,
                         default_purification=rg.default_purification, meta=meta,
                         tree=rg.tree)
    loaded = load_strategy(path, rg.game, tree=rg.tree)
    print(f"{PROG}: wrote {path} ({path.stat().st_size} bytes): {solver.iteration} "
          f"iterations of {described['solver']} in {solver.seconds:.1f} s{summary}")
    if bundle:
        entry = bundle_entry(recipe, path, loaded, solver, fields)
        print(f"{PROG}: manifest updated: {update_manifest(recipe.name, entry)}")
    return 0
