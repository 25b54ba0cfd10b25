"""``acpc-strategy``: build, inspect and measure strategy files.

Commands:

* ``solve --recipe NAME [--iterations N | --minutes M] [--resume]``: run the recipe's
  solver (:mod:`strategies.recipes`) and write the strategy file (``--out``, default
  ``NAME.strat`` here; ``--bundle`` writes the bundled file and its manifest entry).
  ``--iterations`` is the total to reach (default: the recipe's), ``--minutes`` a time
  budget for this run. A progress bar (rich, if installed; plain lines otherwise) shows
  iterations/s and the exploitability whenever it is recomputed. Ctrl-C stops between
  chunks of iterations and writes a checkpoint (``--checkpoint``, default
  ``NAME.ckpt.npz`` here); ``--resume`` continues from it. A finished run also leaves
  its checkpoint, so a later ``--resume --iterations MORE`` extends it.
* ``inspect FILE``: game, abstractions, size, metadata, the abstract-game exploitability and
  a few information sets in readable form (betting, bucket with example cards, action
  probabilities).
* ``exploit FILE [--purify P]``: the abstract-game values, best responses and
  exploitability (:mod:`strategies.best_response` conventions; chips per hand). Files whose
  deals cannot be enumerated (hold'em) get the sampled lower bound of
  :mod:`strategies.sampled_br` (``--train-deals``, ``--test-deals``, seeds, ``--z``), for
  the stored strategy and the file's default purification; ``--record`` writes it into the
  manifest entry of a bundled file.
* ``list``: the bundled files with their manifest figures.
* ``cards [--round flop|turn|river|all] [--buckets N] [--file F]``: E[HS^2] of every
  lossless hold'em class of a round (:mod:`strategies.cardtables`, cached), the exact
  percentile thresholds over all hands, and the share of all hands in each bucket of a
  strategy file's sampled thresholds (default: the bundled hold'em file).
* ``size GAME [--abstraction SPEC] [--json OUT]``: betting sequences, information sets and
  infoset-actions (raw and suit-isomorphic) and the memory of CFR and of a strategy, for
  the full game or a betting abstraction (:mod:`strategies.size`).
* ``translation exploit|best-size|plot``: full-game exploitability of translation mappings
  and purifications in small no-limit games (:mod:`strategies.translation.commands`).

Errors (a bad or corrupt file, an unknown recipe, ...) print ``acpc-strategy: error: ...``
on stderr and exit 1; ``--debug`` shows the traceback. An interrupted ``solve`` exits 130.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import signal
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any, Protocol, TextIO

import numpy as np

from agent.abstraction.actions import ALL_IN
from agent.abstraction.buckets import card_abstraction_from_spec
from agent.abstraction.holdem_buckets import FLOP_RIVERS_PER_TURN
from agent.acpc.betting import ActionKind
from agent.acpc.errors import AcpcError
from agent.acpc.gamedef import Game
from agent.console import positive_int
from agent.strategy.fileformat import Strategy, dump_strategy, load_strategy, quantize_rows
from agent.strategy.purification import Purification, parse_purification
from strategies.best_response import (
    Exploitability,
    exploitability,
    purify_table,
    strategy_table,
)
from strategies.cfr import Solver
from strategies.game import AbstractGame, build_abstract_game, check_enumerable, normalise_rows
from strategies.recipes import DATA_DIR, RECIPES, Recipe, get_recipe, load_manifest, update_manifest
from strategies.sampled_br import (
    DEFAULT_TEST_DEALS,
    DEFAULT_TRAIN_DEALS,
    DEFAULT_Z,
    TEST_SEED,
    TRAIN_SEED,
    SampledExploitability,
)
from strategies.translation import commands as translation_commands

PROG = "acpc-strategy"
CHUNK_SECONDS = 0.25
"""Iterations run in chunks of about this long: Ctrl-C is noticed between chunks."""


# --------------------------------------------------------------------------- progress


class _Progress(Protocol):
    def update(self, iteration: int, rate: float, note: str) -> None: ...

    def close(self) -> None: ...


class _PlainProgress:
    """A line on stderr every ``every`` seconds (when rich is missing or output is piped)."""

    def __init__(self, stream: TextIO, target: int | None, every: float = 10.0) -> None:
        self.stream = stream
        self.target = target
        self.every = every
        self.last = time.monotonic()

    def update(self, iteration: int, rate: float, note: str) -> None:
        now = time.monotonic()
        if now - self.last < self.every:
            return
        self.last = now
        of = f"/{self.target}" if self.target else ""
        extra = f", {note}" if note else ""
        print(f"{PROG}: iteration {iteration}{of}, {rate:,.0f} it/s{extra}", file=self.stream,
              flush=True)

    def close(self) -> None:
        pass


class _RichProgress:
    """A rich progress bar: iterations (or time) done, iterations/s, exploitability."""

    def __init__(self, target: int | None, seconds: float | None, start: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=30),
            TextColumn("{task.fields[done]}"),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[note]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self.by_time = target is None
        self.t0 = time.monotonic()
        self.target = target
        total = float(seconds) if self.by_time and seconds else float(target or 0) or None
        self.task = self.progress.add_task(
            "solving", total=total, completed=0 if self.by_time else start, done="", rate="",
            note="",
        )
        self.progress.start()

    def update(self, iteration: int, rate: float, note: str) -> None:
        completed = time.monotonic() - self.t0 if self.by_time else iteration
        of = f"/{self.target:,}" if self.target else ""
        self.progress.update(self.task, completed=completed, done=f"{iteration:,}{of} it",
                             rate=f"{rate:,.0f} it/s", note=note)

    def close(self) -> None:
        self.progress.stop()


def _make_progress(
    enabled: bool, target: int | None, seconds: float | None, start: int
) -> _Progress:
    if enabled:
        try:
            return _RichProgress(target, seconds, start)
        except ImportError:
            pass
    return _PlainProgress(sys.stderr, target, every=10.0 if enabled else float("inf"))


# --------------------------------------------------------------------------- helpers


def _stored_table(game: AbstractGame, table: Any, dtype: str) -> Any:
    """The table as it will read back from a file of ``dtype`` (float64, rows renormalised
    as :func:`strategies.best_response.strategy_table` reads them)."""
    if dtype == "uint16":
        return normalise_rows(game, quantize_rows(table, game.layout).astype(np.float64))
    return normalise_rows(game, np.asarray(table, dtype=np.float32))


def _figures(result: Exploitability) -> dict[str, Any]:
    kind, value = result.headline
    return {
        "exploitability": value,
        "exploitability_kind": kind,
        "best_responses": list(result.best_responses),
        "game_value": list(result.values),
        "units": "chips per hand",
    }


def _game_for_strategy(strategy: Strategy) -> AbstractGame:
    """The flat abstract game of a loaded strategy file.

    Raises:
        ValueError: if its card abstraction cannot be rebuilt or its deals enumerated.
    """
    check_enumerable(strategy.game)  # before rebuilding possibly costly card tables
    cards = card_abstraction_from_spec(strategy.game, strategy.cards)
    return build_abstract_game(strategy.game, strategy.betting, cards, tree=strategy.tree)


def _describe_game(game: Game) -> str:
    stacks = " ".join(str(s) for s in game.stack) if game.is_nolimit else "-"
    return (f"{game.betting_type.value}, {game.num_players} players, {game.num_rounds} rounds, "
            f"blinds {' '.join(str(b) for b in game.blind)}, stacks {stacks}, deck "
            f"{game.num_ranks} ranks x {game.num_suits} suits, {game.num_hole_cards} hole "
            f"card(s), board {' '.join(str(b) for b in game.num_board_cards)}")


def _action_label(strategy: Strategy, node: int, index: int) -> str:
    act = strategy.tree.nodes[node].actions[index]
    text = str(act.action)
    if act.kind is ActionKind.RAISE and strategy.game.is_nolimit:
        text += "[all-in]" if act.fraction == ALL_IN else f"[{act.fraction:g}p]"
    return text


def _print_exploitability(result: Exploitability, out: TextIO) -> None:
    n = len(result.values)
    for p in range(n):
        print(f"  position {p}: value {result.values[p]:+.6f}, best response "
              f"{result.best_responses[p]:+.6f}, gain {result.gains[p]:.6g}", file=out)
    print(f"  NashConv {result.nash_conv:.6g} chips/hand", file=out)
    if n == 2:
        print(f"  exploitability {result.exploitability:.6g} chips/hand "
              f"((br0 + br1) / 2, {result.exploitability * 1000:.4g} milli-chips/hand)",
              file=out)
    else:
        print(f"  {n} players: NashConv (the sum of the best-response gains) is the figure "
              f"reported", file=out)


# --------------------------------------------------------------------------- commands


def _run(
    solver: Solver, target: int | None, deadline: float | None, *, progress: bool, banner: str
) -> bool:
    """Iterate in short chunks until ``target`` iterations or ``deadline`` (monotonic).

    Ctrl-C (SIGINT) is caught from before the banner is printed until the end, and stops
    the run between chunks. Returns True if it was interrupted.
    """
    stop = False

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        nonlocal stop
        stop = True

    game = solver.game
    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        print(banner, file=sys.stderr, flush=True)
        bar = _make_progress(progress, target, None if deadline is None
                             else deadline - time.monotonic(), solver.iteration)
        chunk = 1
        note = ""
        last_exploit = time.monotonic()
        exploit_cost = 0.0
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
                chunk = max(1, min(int(rate * CHUNK_SECONDS), 1_000_000))
                if time.monotonic() - last_exploit >= max(2.0, 20.0 * exploit_cost):
                    t = time.perf_counter()
                    kind, value = exploitability(game, solver.average_strategy()).headline
                    exploit_cost = time.perf_counter() - t
                    last_exploit = time.monotonic()
                    note = f"{kind} {value:.3g}"
                bar.update(solver.iteration, rate, note)
        finally:
            bar.close()
    finally:
        signal.signal(signal.SIGINT, previous)
    return stop


def _solve(args: argparse.Namespace) -> int:
    recipe: Recipe = get_recipe(args.recipe)
    if not recipe.enumerated:
        from strategies.holdem import solve_recipe  # sampled deals (hold'em)

        return solve_recipe(recipe, args)
    game = recipe.abstract_game()
    out, checkpoint = recipe.solve_paths(args.out, args.bundle, args.checkpoint, args.resume)
    if args.resume:
        solver = Solver.load_checkpoint(checkpoint, game)
    else:
        solver = Solver(game, recipe.solver_config(), seed=recipe.seed)
    deadline = None if args.minutes is None else time.monotonic() + 60.0 * args.minutes
    target: int | None = None
    if args.minutes is None:
        target = args.iterations if args.iterations is not None else recipe.iterations
    solver.warm_up()
    budget = f"{target} iterations" if target is not None else f"{args.minutes:g} minutes"
    stopped = _run(solver, target, deadline, progress=not args.no_progress,
                   banner=f"{PROG}: solving {recipe.name} with {solver.config.name} from "
                   f"iteration {solver.iteration} ({budget}; Ctrl-C writes a checkpoint)")
    extra = {"recipe": recipe.name}
    if stopped:
        solver.save_checkpoint(checkpoint, extra)
        print(f"{PROG}: interrupted at iteration {solver.iteration}: checkpoint written to "
              f"{checkpoint}; continue with --resume", file=sys.stderr)
        return 130
    solver.save_checkpoint(checkpoint, extra)
    average = solver.average_strategy()
    stored = _stored_table(game, average, recipe.dtype)
    result = exploitability(game, stored)
    meta = {
        "solver": solver.config.name,
        "solver_config": solver.config.to_json(),
        "iterations": solver.iteration,
        "seconds": round(solver.seconds, 3),
        "seed": solver.seed,
        "recipe": recipe.name,
        **_figures(result),
    }
    path = dump_strategy(out, game.game, game.betting, game.cards.spec, average,
                         dtype=recipe.dtype, meta=meta, tree=game.tree)
    loaded = load_strategy(path, game.game, tree=game.tree)
    kind, value = result.headline
    print(f"{PROG}: wrote {path} ({path.stat().st_size} bytes): {solver.iteration} iterations "
          f"of {solver.config.name} in {solver.seconds:.1f} s, {kind} {value:.6g} chips/hand, "
          f"game value {', '.join(f'{v:+.6f}' for v in result.values)}")
    if args.bundle:
        path.chmod(0o644)  # package data: readable by everyone (temporary files are 0600)
        entry = {
            "file": path.name,
            "recipe": recipe.name,
            "game": recipe.game,
            "betting": game.betting.name,
            "cards": game.cards.spec,
            "solver": solver.config.name,
            "iterations": solver.iteration,
            "seconds": round(solver.seconds, 2),
            **_figures(result),
            "dtype": recipe.dtype,
            "checksum": loaded.checksum,
            "file_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
            "bytes": path.stat().st_size,
        }
        print(f"{PROG}: manifest updated: {update_manifest(recipe.name, entry)}")
    return 0


def _inspect_sampled(file: str, strategy: Strategy, out: TextIO) -> None:
    """The sampled figures recorded in the manifest for this very file, if any."""
    name = _manifest_name(strategy)
    entry = load_manifest()["files"].get(name, {}) if name is not None else {}
    recorded = entry.get("sampled_best_response") if isinstance(entry, dict) else None
    if not isinstance(recorded, dict) or not recorded:
        print(f"abstract-game figures: not computed here (deals cannot be enumerated); "
              f"`{PROG} exploit {file}` measures a sampled lower bound", file=out)
        return
    print(f"abstract-game figures (sampled lower bound recorded in the manifest for checksum "
          f"{strategy.checksum}; `{PROG} exploit {file}` re-measures):", file=out)
    for purification, figures in recorded.items():
        print(f"  {purification} purification: exploitability >= "
              f"{figures['exploitability']:.4f} +- {figures['exploitability_ci95']:.4f} "
              f"chips/hand ({figures['exploitability_mbb']:.1f} +- "
              f"{figures['exploitability_ci95_mbb']:.1f} mbb/hand), value p0 "
              f"{figures['game_value'][0]:+.4f}; {figures['train_deals']:,} training and "
              f"{figures['test_deals']:,} test deals", file=out)


def _inspect(args: argparse.Namespace) -> int:
    out = sys.stdout
    strategy = load_strategy(args.file)
    game = strategy.game
    print(f"file: {args.file} ({Path(args.file).stat().st_size} bytes, {strategy.table.dtype} "
          f"table)", file=out)
    print(f"game: {_describe_game(game)} (fingerprint {game.fingerprint[:12]})", file=out)
    print(f"betting: {strategy.betting.name} {strategy.betting.to_json()}", file=out)
    print(f"cards: {strategy.cards}", file=out)
    layout = strategy.layout
    decision = int((layout.offsets >= 0).sum())
    print(f"table: {layout.total} values, {int(layout.rows.sum())} information sets, "
          f"{decision} decision nodes of {len(strategy.tree.nodes)}, checksum "
          f"{strategy.checksum}", file=out)
    print("meta:", file=out)
    for key, value in strategy.meta.items():
        print(f"  {key}: {value}", file=out)
    abstract: AbstractGame | None = None
    if _sampled(strategy):
        _inspect_sampled(args.file, strategy, out)
    else:
        try:
            abstract = _game_for_strategy(strategy)
        except ValueError as exc:
            print(f"abstract-game figures: not computed ({exc})", file=out)
    if abstract is not None:
        print("abstract-game figures (chips per hand):", file=out)
        _print_exploitability(exploitability(abstract, strategy_table(abstract, strategy)),
                              out)
    print("sample information sets:", file=out)
    shown = 0
    per_round: dict[int, int] = {}
    for node in strategy.tree.decision_nodes:
        if shown >= args.samples:
            break
        if per_round.get(node.round, 0) >= 2:
            continue
        per_round[node.round] = per_round.get(node.round, 0) + 1
        for bucket in range(min(int(layout.rows[node.id]), 3)):
            if shown >= args.samples:
                break
            row = strategy.row(node.id, bucket)
            probs = "  ".join(f"{_action_label(strategy, node.id, a)} {p:.3f}"
                              for a, p in enumerate(row))
            example = "" if abstract is None else \
                f" ({abstract.describe_bucket(node.round, bucket)})"
            betting = repr(node.state.betting) if node.state.betting else "(start)"
            print(f"  {betting:14} position {node.player} round {node.round} bucket "
                  f"{bucket}{example}: {probs}", file=out)
            shown += 1
    return 0


def _sampled(strategy: Strategy) -> bool:
    """True for files whose deals cannot be enumerated but a sampled best response can
    measure (two players, hold'em card abstraction)."""
    try:
        check_enumerable(strategy.game)
    except ValueError:
        return strategy.game.num_players == 2 and strategy.cards.get("kind") == "holdem"
    return False


def _print_sampled(result: SampledExploitability, out: TextIO) -> None:
    mbb = 1000.0 / result.big_blind
    for p in range(2):
        print(f"  position {p}: value {result.values[p]:+.4f}, best response "
              f"{result.best_responses[p]:+.4f} (se {result.best_response_se[p]:.4f}; "
              f"{result.in_sample[p]:+.4f} on its training deals), gain "
              f"{result.gains[p]:+.4f}", file=out)
    print(f"  exploitability >= {result.exploitability:.4f} +- {result.ci95:.4f} chips/hand "
          f"(95%), {result.mbb:.1f} +- {result.ci95 * mbb:.1f} mbb/hand", file=out)
    print(f"  [{result.purification} purification; best responses learned on "
          f"{result.train_deals:,} deals (pool seed {result.train_seed}, z {result.z:g}), "
          f"evaluated exactly on {result.test_deals:,} other deals (pool seed "
          f"{result.test_seed}); {result.seconds:.1f} s]", file=out)


def _sampled_purifications(strategy: Strategy, spec: str | None) -> list[Purification]:
    """``--purify`` if given, else the stored strategy and the file's default."""
    if spec is not None:
        return [parse_purification(spec)]
    found = [parse_purification("none")]
    default = parse_purification(strategy.default_purification)
    if default != found[0]:
        found.append(default)
    return found


def _exploit_sampled(strategy: Strategy, args: argparse.Namespace) -> int:
    from strategies.sampled_br import KIND, sampled_exploitability

    def say(text: str) -> None:
        print(f"{PROG}: {text}", file=sys.stderr, flush=True)

    if args.record and args.purify is not None and \
            parse_purification(args.purify).kind != "none":
        raise ValueError(f"expected --record without --purify (it records the stored "
                         f"strategy and the file's default purification), got --purify "
                         f"{args.purify!r}")
    say(f"{args.file}: deals cannot be enumerated: sampled abstract-game best response "
        f"(a lower bound on the exploitability; see README)")
    results: dict[str, dict[str, Any]] = {}
    for purification in _sampled_purifications(strategy, args.purify):
        result = sampled_exploitability(
            strategy, purification=purification, train_deals=args.train_deals,
            test_deals=args.test_deals, train_seed=args.train_seed, test_seed=args.test_seed,
            z=args.z, workers=args.workers, log=say)
        print(f"{args.file}: sampled abstract-game figures ({strategy.betting.name}, "
              f"{strategy.cards.get('kind')} cards), chips per hand:")
        _print_sampled(result, sys.stdout)
        results[str(purification)] = result.to_json()
    if args.record:
        name = _manifest_name(strategy)
        if name is None:
            raise ValueError(f"expected a bundled strategy file (its checksum in "
                             f"{DATA_DIR.parent / 'manifest.json'}) for --record, got "
                             f"{args.file!r} with checksum {strategy.checksum}")
        entry = dict(load_manifest()["files"][name])
        stored = results["none"]
        entry.update({
            "exploitability": stored["exploitability"],
            "exploitability_kind": KIND,
            "exploitability_ci95": stored["exploitability_ci95"],
            "game_value": stored["game_value"],
            "sampled_best_response": results,
            "sampled_best_response_command": " ".join([PROG, *sys.argv[1:]]),
        })
        print(f"{PROG}: manifest updated: {update_manifest(name, entry)}")
    return 0


def _manifest_name(strategy: Strategy) -> str | None:
    """The manifest entry of a bundled file with ``strategy``'s checksum, or None."""
    for name, entry in load_manifest().get("files", {}).items():
        if isinstance(entry, dict) and entry.get("checksum") == strategy.checksum:
            return str(name)
    return None


def _exploit(args: argparse.Namespace) -> int:
    strategy = load_strategy(args.file)
    if _sampled(strategy):
        return _exploit_sampled(strategy, args)
    if args.record:
        raise ValueError(f"expected a file measured by sampling for --record (enumerated "
                         f"files get their figures from solve --bundle), got {args.file!r}")
    abstract = _game_for_strategy(strategy)
    purification = parse_purification(args.purify) if args.purify is not None else None
    table = purify_table(abstract.layout, strategy_table(abstract, strategy), purification)
    result = exploitability(abstract, table)
    how = "" if purification is None else f", {purification} purification"
    print(f"{args.file}: abstract-game figures ({strategy.betting.name}, "
          f"{strategy.cards.get('kind')} cards{how}), chips per hand:")
    _print_exploitability(result, sys.stdout)
    return 0


def _list(args: argparse.Namespace) -> int:
    files = load_manifest().get("files", {})
    width = max([6, *(len(str(e.get("solver", ""))) for e in files.values()
                      if isinstance(e, dict))])
    header = (f"{'name':24} {'solver':{width}} {'iterations':>10} {'seconds':>8} "
              f"{'exploitability':>22} {'value p0':>10} {'bytes':>8}")
    print(header)
    for name, recipe in RECIPES.items():
        entry = files.get(name)
        if entry is None or not recipe.bundled_path.exists():
            print(f"{name:24} (not built: acpc-strategy solve --recipe {name} --bundle)")
            continue
        kind = {"nash_conv": "NashConv ", "sampled_lower_bound": "expl >= "}.get(
            str(entry.get("exploitability_kind")), "expl ")
        if entry.get("exploitability") is None:
            figure = "expl n/a"
        else:
            figure = f"{kind}{entry['exploitability']:.3g}"
        value = entry.get("game_value")
        shown = f"{value[0]:>+10.5f}" if value else f"{'n/a':>10}"
        print(f"{name:24} {entry['solver']:{width}} {entry['iterations']:>10} "
              f"{entry['seconds']:>8.1f} {figure:>22} {shown} {entry['bytes']:>8}")
    print(f"(abstract-game figures in chips per hand, 'expl >=': a sampled lower bound; "
          f"files in {DATA_DIR})")
    return 0


# --------------------------------------------------------------------------- cards

_ROUNDS = {"flop": 1, "turn": 2, "river": 3}
_BUNDLED_HOLDEM = "holdem.nolimit.2p.strat"


def _holdem_spec(file: str | None) -> tuple[str, dict[str, Any]] | None:
    """The hold'em card spec of ``file`` (default: the bundled hold'em file, if present)."""
    if file is None:
        path = DATA_DIR / _BUNDLED_HOLDEM
        if not path.exists():
            return None
        file = str(path)
    elif file == "none":
        return None
    strategy = load_strategy(file)
    if strategy.cards.get("kind") != "holdem":
        raise ValueError(
            f"expected a strategy file with a holdem card abstraction, got kind "
            f"{strategy.cards.get('kind')!r} in {file}"
        )
    return file, strategy.cards


def _cards(args: argparse.Namespace) -> int:
    """Strength tables over the lossless classes; exact thresholds; a file's bucket shares."""
    from strategies.cardtables import bucket_shares, cached_strength_table, exact_thresholds

    out = sys.stdout
    rounds = list(_ROUNDS.values()) if args.round == "all" else [_ROUNDS[args.round]]
    spec = _holdem_spec(args.file)
    report: dict[str, Any] = {}
    for r in rounds:
        name = next(k for k, v in _ROUNDS.items() if v == r)
        buckets = args.buckets
        if buckets is None:
            buckets = int(spec[1]["buckets"][r]) if spec is not None else 50
        bar = _PlainTableProgress(name) if not args.no_progress else None
        estimator = args.flop_rivers_per_turn
        if estimator is None:
            estimator = (spec[1].get("flop_rivers_per_turn", FLOP_RIVERS_PER_TURN)
                         if spec is not None else FLOP_RIVERS_PER_TURN)
        table, path, cached = cached_strength_table(
            r, workers=args.workers, progress=bar, flop_rivers_per_turn=estimator
        )
        where = f"from the cache {path}" if cached else (
            f"built in {table.seconds:.1f} s on {args.workers} thread(s), cached in {path}")
        values, weights = table.ehs2, table.hands
        print(f"{name}: {table.classes:,} classes, {table.total_hands:,} hands; E[HS^2] table "
              f"{where}", file=out)
        mean = float(np.dot(values, weights) / table.total_hands)
        print(f"  E[HS^2] over all hands: mean {mean:.6f}, min {values.min():.6f}, max "
              f"{values.max():.6f}, {np.unique(values).size:,} distinct values", file=out)
        exact = exact_thresholds(values, weights, buckets)
        shares = bucket_shares(values, weights, exact)
        print(f"  exact thresholds for {buckets} buckets: {_few(exact)}", file=out)
        print(f"    their shares of all hands: {_share_range(shares, buckets)}", file=out)
        entry: dict[str, Any] = {"classes": table.classes, "hands": table.total_hands,
                                 "buckets": buckets, "thresholds": exact,
                                 "shares": shares.tolist()}
        if spec is not None:
            file, cards = spec
            theirs = [float(x) for x in cards["thresholds"][r - 1]]
            file_shares = bucket_shares(values, weights, theirs)
            print(f"  {Path(file).name} ({len(theirs) + 1} buckets from "
                  f"{cards.get('samples', '?'):,} sampled deals): shares "
                  f"{_share_range(file_shares, len(theirs) + 1)}", file=out)
            entry["file"] = {"path": file, "thresholds": theirs,
                             "shares": file_shares.tolist()}
        report[name] = entry
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
        print(f"wrote {args.json}", file=out)
    return 0


class _PlainTableProgress:
    """A line on stderr about every 10 seconds while a table builds."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.start = time.monotonic()
        self.last = self.start

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last >= 10 or done == total:
            self.last = now
            rate = done / max(now - self.start, 1e-9)
            print(f"{PROG}: {self.name} table {done:,}/{total:,} classes ({rate:,.0f}/s)",
                  file=sys.stderr, flush=True)


def _few(values: Sequence[float]) -> str:
    shown = [f"{v:.5f}" for v in values]
    if len(shown) > 8:
        shown = [*shown[:4], "...", *shown[-3:]]
    return " ".join(shown)


def _share_range(shares: np.ndarray[Any, Any], buckets: int) -> str:
    ideal = 1 / buckets
    worst = float(np.abs(shares - ideal).max())
    return (f"{shares.min():.3%} .. {shares.max():.3%} (ideal {ideal:.3%}; largest "
            f"deviation {worst / ideal:.1%} of the ideal)")


def _size(args: argparse.Namespace) -> int:
    from strategies import size  # the command's whole logic; imported only when run

    return size.run(args.game, abstraction_spec=args.abstraction, json_out=args.json,
                    max_transitions=args.max_transitions, out=sys.stdout)


# --------------------------------------------------------------------------- entry point


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``acpc-strategy``."""
    p = argparse.ArgumentParser(prog=PROG, description="Build, inspect and measure strategy "
                                "files (abstract-game CFR solvers and best responses).")
    p.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("solve", help="run a recipe's solver and write its strategy file")
    s.add_argument("--recipe", required=True, help=f"one of: {', '.join(RECIPES)}")
    budget = s.add_mutually_exclusive_group()
    budget.add_argument("--iterations", type=int, help="total iterations to reach")
    budget.add_argument("--minutes", type=float, help="time budget for this run")
    s.add_argument("--resume", action="store_true", help="continue from the checkpoint")
    s.add_argument("--out", help="strategy file to write (default: NAME.strat here)")
    s.add_argument("--checkpoint", help="checkpoint file (default: NAME.ckpt.npz here)")
    s.add_argument("--bundle", action="store_true",
                   help="write the bundled file (strategies/data) and its manifest entry")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")
    s.add_argument("--workers", type=int, default=1,
                   help="threads building a hold'em deal pool (default 1)")
    s.add_argument("--checkpoint-minutes", type=float, default=10.0,
                   help="hold'em recipes: also write the checkpoint every this many minutes")

    i = sub.add_parser("inspect", help="describe a strategy file")
    i.add_argument("file")
    i.add_argument("--samples", type=int, default=8, help="information sets to show")

    e = sub.add_parser("exploit", help="abstract-game exploitability of a strategy file")
    e.add_argument("file")
    e.add_argument("--purify", default=None, metavar="none|full|threshold:T",
                   help="measure the purified strategy (default: the stored one; hold'em "
                   "files: also the file's default purification)")
    e.add_argument("--train-deals", type=positive_int, default=DEFAULT_TRAIN_DEALS,
                   help=f"hold'em: deals the best responses learn on (default "
                   f"{DEFAULT_TRAIN_DEALS:,})")
    e.add_argument("--test-deals", type=positive_int, default=DEFAULT_TEST_DEALS,
                   help=f"hold'em: deals they are evaluated on (default {DEFAULT_TEST_DEALS:,})")
    e.add_argument("--train-seed", type=int, default=TRAIN_SEED,
                   help=f"hold'em: pool seed of the training deals (default {TRAIN_SEED})")
    e.add_argument("--test-seed", type=int, default=TEST_SEED,
                   help=f"hold'em: pool seed of the test deals (default {TEST_SEED})")
    e.add_argument("--z", type=float, default=DEFAULT_Z,
                   help=f"hold'em: standard errors a deviation must gain by (default "
                   f"{DEFAULT_Z:g})")
    e.add_argument("--workers", type=positive_int, default=os.cpu_count() or 1,
                   help="hold'em: threads (default: the number of cores)")
    e.add_argument("--record", action="store_true",
                   help="write the sampled figures into the manifest entry of this bundled "
                   "file")

    sub.add_parser("list", help="the bundled strategy files and their figures")

    c = sub.add_parser("cards", help="hold'em E[HS^2] tables over the lossless classes, "
                       "exact percentile thresholds, a file's bucket shares")
    c.add_argument("--round", choices=[*_ROUNDS, "all"], default="flop",
                   help="postflop round (default flop; the river's table takes ~1.5 "
                   "minutes on 2 cores, ~6 GB of memory and 2.1 GB of cache)")
    c.add_argument("--buckets", type=positive_int, default=None,
                   help="buckets for the exact thresholds (default: the file's, else 50)")
    c.add_argument("--file", default=None,
                   help="strategy file whose thresholds to measure (default: the bundled "
                   "hold'em file; 'none' for none)")
    c.add_argument("--workers", type=positive_int, default=os.cpu_count() or 1,
                   help="threads building a table (default: the number of cores)")
    c.add_argument("--flop-rivers-per-turn", type=positive_int, default=None,
                   help=f"the flop estimator's river cards per turn card (default: the "
                   f"file's, else {FLOP_RIVERS_PER_TURN})")
    c.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    c.add_argument("--no-progress", action="store_true", help="no progress lines")

    z = sub.add_parser("size", help="betting sequences, information sets, infoset-actions "
                       "and memory of a game (full or abstract)")
    z.add_argument("game", help="a bundled game name or a game definition file")
    z.add_argument("--abstraction", metavar="SPEC", help="a betting abstraction: a preset "
                   "(fcpa, fchpa, ...) or JSON (default: the full game, every legal action)")
    z.add_argument("--json", metavar="OUT", help="also write the figures as JSON")
    z.add_argument("--max-transitions", type=positive_int, default=None,
                   help="refuse counts needing more betting transitions (default 5,000,000)")

    translation_commands.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``acpc-strategy``; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.command == "solve" and args.iterations is not None and args.iterations < 0:
        print(f"{PROG}: error: expected --iterations >= 0, got {args.iterations}",
              file=sys.stderr)
        return 1
    if args.command == "solve" and args.minutes is not None and not args.minutes > 0:
        print(f"{PROG}: error: expected --minutes > 0, got {args.minutes}", file=sys.stderr)
        return 1
    commands = {"solve": _solve, "inspect": _inspect, "exploit": _exploit, "list": _list,
                "cards": _cards, "translation": translation_commands.run, "size": _size}
    try:
        return commands[args.command](args)
    except (AcpcError, ValueError, OSError) as exc:
        if args.debug:
            traceback.print_exc()
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
