"""The work behind ``acpc-strategy graft`` and the grafts section of ``inspect``.

``graft --base FILE --partition SPEC --out FILE``: load the base strategy file (two
players, deals enumerable, not itself grafted), parse the partition
(:func:`strategies.grafting.exact.parse_partition`), solve every graft
(:func:`strategies.grafting.exact.graft_strategy`, ``--workers`` processes), print one line per
solved graft on stderr (its NashConv in its graft game), and write the grafted strategy:
an ordinary strategy file with a ``graft`` card spec and ``meta['grafting']`` (partition,
base file and checksum, per-graft iterations, NashConv and seconds).

Imported by :mod:`strategies.cli` only when the command runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import shutil
import sys
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from agent.abstraction.buckets import card_abstraction_from_spec
from agent.acpc.errors import UsageError
from agent.strategy.fileformat import Strategy, dump_strategy, load_strategy
from strategies.cache import write_npz
from strategies.commands.defaults import PROG
from strategies.games.abstract import build_abstract_game, check_enumerable
from strategies.grafting.exact import GraftResult, graft_strategy, parse_partition
from strategies.measure.best_response import strategy_table

if TYPE_CHECKING:
    from strategies.grafting.pool import PoolGraftJob, PoolGraftResult


def graft(args: argparse.Namespace) -> int:
    """Run ``acpc-strategy graft`` (module docstring).

    Raises:
        UsageError: for a bad base file, partition or option.
    """
    if args.iterations is not None and args.iterations < 0:
        raise UsageError(f"expected --iterations >= 0, got {args.iterations}")
    if args.workers < 1:
        raise UsageError(f"expected --workers >= 1, got {args.workers}")
    if not args.target > 0:
        raise UsageError(f"expected --target > 0 (chips per hand), got {args.target}")
    base = load_strategy(args.base)
    game = base.game
    if game.num_players != 2:
        raise UsageError(f"{args.base}: expected a 2-player strategy, got "
                         f"{game.num_players} players")
    if base.cards.get("kind") == "graft":
        raise UsageError(f"{args.base}: the base is already grafted: expected an ungrafted "
                         f"base strategy")
    if base.cards.get("kind") == "holdem":
        return graft_holdem(args, base)
    if args.iterations is None:
        args.iterations = 2000
    for name in ("pool_deals", "warm", "discount"):
        if getattr(args, name, None) is not None:
            raise UsageError(f"expected --{name.replace('_', '-')} only with a hold'em base")
    check_enumerable(game)
    cards = card_abstraction_from_spec(game, base.cards)
    table = strategy_table(build_abstract_game(game, base.betting, cards, tree=base.tree), base)
    partition = parse_partition(game, args.partition)
    jobs = len(partition.players) * len(partition.parts)
    quiet = args.no_progress
    if not quiet:
        print(f"{PROG}: grafting {jobs} graft(s) onto {args.base} with {args.solver}, up to "
              f"{args.iterations} iterations each, target NashConv {args.target:g} "
              f"chips/hand, {args.workers} worker(s)", file=sys.stderr, flush=True)

    def progress(result: GraftResult, done: int, total: int) -> None:
        if quiet:
            return
        part = partition.parts[result.graft]
        print(f"{PROG}: graft {done}/{total}: position {result.player}, {part.label}: "
              f"{result.iterations} iterations, NashConv {result.nash_conv:.3g} chips/hand "
              f"({result.seconds:.1f} s)", file=sys.stderr, flush=True)

    grafted = graft_strategy(game, base.betting, cards, table, partition,
                             iterations=args.iterations, target=args.target,
                             solver=args.solver, workers=args.workers, progress=progress,
                             backend=args.backend, address=args.address)
    meta: dict[str, Any] = {
        "solver": args.solver,
        "iterations": max((r.iterations for r in grafted.results), default=0),
        "grafting": {"base": {"file": Path(args.base).name, "checksum": base.checksum,
                              "meta": base.meta},
                     "target": args.target, **grafted.meta()},
    }
    dump_strategy(args.out, game, base.betting, grafted.cards, grafted.table,
                  meta=meta, tree=base.tree)
    worst = max((r.nash_conv for r in grafted.results), default=0.0)
    print(f"{PROG}: wrote {args.out}: {jobs} graft(s), buckets {grafted.cards['buckets']}, "
          f"largest graft-game NashConv {worst:.3g} chips/hand")
    return 0


HOLDEM_ITERATIONS = 10_000_000
"""Default iterations per hold'em graft."""


def _job_key(job: PoolGraftJob, base_checksum: str) -> str:
    """What a kept graft must match: everything the job depends on."""
    text = json.dumps({"base": base_checksum, "fine": job.fine_cards, "parts": job.parts,
                       "pool": [int(job.pool_buckets.shape[0]), job.pool_seed],
                       "player": job.player, "graft": job.graft,
                       "iterations": job.iterations, "config": job.config, "seed": job.seed,
                       "warm": job.warm, "betting": job.betting}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def graft_holdem(args: argparse.Namespace, base: Strategy) -> int:
    """``acpc-strategy graft`` with a hold'em base: pool graft games (module docstring).

    Finished grafts are kept in ``OUT.grafts/`` (``.npz``, no pickle) until the file is
    written, so an interrupted run started again with the same arguments solves only the
    rest.

    Raises:
        UsageError: for bad options or a partition that does not fit.
    """
    from agent.abstraction.holdem_buckets import HoldemCards
    from strategies.grafting.exact import parse_partition
    from strategies.grafting.pool import PoolGraftResult, pool_graft_strategy
    from strategies.measure.sampled_br import strategy_values
    from strategies.solvers.cfr import POOL_SOLVER, solver_config

    game = base.game
    iterations = HOLDEM_ITERATIONS if args.iterations is None else args.iterations
    pool_deals = 1_000_000 if args.pool_deals is None else args.pool_deals
    warm = 0.0 if args.warm is None else args.warm
    if pool_deals < 1 or warm < 0:
        raise UsageError(f"expected --pool-deals >= 1 and --warm >= 0, got {pool_deals}, "
                         f"{warm}")
    interval, until = 0, 0
    if args.discount:
        a, _, b = args.discount.partition(",")
        if not (a.isdigit() and b.isdigit()):
            raise UsageError(f"expected --discount INTERVAL,UNTIL (iterations), got "
                             f"{args.discount!r}")
        interval, until = int(a), int(b)
    config = dataclasses.replace(solver_config(POOL_SOLVER), discount_interval=interval,
                                 discount_until=until)
    partition = parse_partition(game, args.partition)
    if any(not p.classes for p in partition.parts):
        raise UsageError("expected hold'em grafts by preflop 'classes' (e.g. --partition "
                         "holdem-flop:2)")
    cards = HoldemCards.from_spec(game, base.cards)
    table = strategy_values(base, None)
    quiet = args.no_progress
    jobs = len(partition.players) * len(partition.parts)
    keep_dir = Path(f"{args.out}.grafts")

    def say(text: str) -> None:
        if not quiet:
            print(f"{PROG}: {text}", file=sys.stderr, flush=True)

    say(f"grafting {jobs} hold'em graft(s) onto {args.base}: {iterations:,} iterations of "
        f"{POOL_SOLVER} each over {pool_deals:,} deals, cards {partition.cards}, "
        f"{args.workers} worker(s), backend {args.backend} (Ctrl-C keeps finished grafts "
        f"in {keep_dir})")

    def keep(job: PoolGraftJob) -> PoolGraftResult | None:
        path = keep_dir / f"graft-{job.player}-{job.graft}-{_job_key(job, base.checksum)}.npz"
        if not path.exists():
            return None
        with np.load(path, allow_pickle=False) as data:
            info = json.loads(bytes(data["info"]).decode())
            return PoolGraftResult(job.player, job.graft, int(info["iterations"]),
                                   float(info["seconds"]), float(info["value0"]),
                                   np.array(data["index"]), np.array(data["values"]))

    def save(job: PoolGraftJob, result: PoolGraftResult) -> None:
        keep_dir.mkdir(parents=True, exist_ok=True)
        info = {"iterations": result.iterations, "seconds": result.seconds,
                "value0": result.value0}
        write_npz(keep_dir / f"graft-{job.player}-{job.graft}-"
                  f"{_job_key(job, base.checksum)}.npz",
                  info=np.frombuffer(json.dumps(info).encode(), dtype=np.uint8),
                  index=result.index, values=result.values)

    def progress(result: PoolGraftResult, done: int, total: int) -> None:
        part = partition.parts[result.graft]
        say(f"graft {done}/{total}: position {result.player}, {part.label}: "
            f"{result.iterations:,} iterations ({result.seconds:.1f} s), sampled value of "
            f"position 0 {result.value0:+.2f} chips/hand")

    try:
        grafted = pool_graft_strategy(
            game, base.tree, cards, table, partition.parts, partition.cards,
            partition.players, pool_deals=pool_deals, pool_seed=args.pool_seed,
            iterations=iterations, config=config, seed=args.seed, warm=warm,
            workers=args.workers, backend=args.backend, address=args.address,
            pool_workers=args.workers, log=say, progress=progress, keep=keep, save=save,
            verbose=not quiet,
            chunk=max(1, min(iterations // 10, 5_000_000)) if iterations else 1)
    except (KeyboardInterrupt, BrokenProcessPool):
        kept = len(list(keep_dir.glob("graft-*.npz"))) if keep_dir.exists() else 0
        print(f"{PROG}: interrupted: {kept} finished graft(s) kept in {keep_dir}; the same "
              f"command solves the rest", file=sys.stderr)
        return 130
    meta: dict[str, Any] = {
        "solver": POOL_SOLVER,
        "solver_config": config.to_json(),
        "iterations": iterations,
        "grafting": {"base": {"file": Path(args.base).name, "checksum": base.checksum},
                     "partition": {"grafts": [p.to_json() for p in partition.parts],
                                   "cards": partition.cards,
                                   "players": list(partition.players)},
                     "warm": warm, "pool_seed": args.pool_seed, "seed": args.seed,
                     **grafted.meta()},
    }
    dump_strategy(args.out, game, base.betting, grafted.cards, grafted.table,
                  default_purification=base.default_purification, meta=meta, tree=base.tree)
    shutil.rmtree(keep_dir, ignore_errors=True)
    print(f"{PROG}: wrote {args.out}: {jobs} hold'em graft(s), buckets "
          f"{grafted.cards['buckets']}")
    return 0


def print_grafts(strategy: Strategy, out: TextIO) -> None:
    """The grafts of a grafted file (``inspect``): parts, bucket ranges, per-graft figures."""
    cards = strategy.cards
    if cards.get("kind") != "graft":
        return
    from agent.abstraction.graft_cards import GraftCards

    built = card_abstraction_from_spec(strategy.game, cards)
    assert isinstance(built, GraftCards)
    print(f"grafts: base {cards['base']}", file=out)
    rounds = strategy.game.num_rounds
    for j, part in enumerate(built.parts):
        ranges = ", ".join(
            f"round {r}: {lo}..{hi - 1}" if hi > lo else f"round {r}: base"
            for r, (lo, hi) in ((r, built.graft_range(r, j)) for r in range(rounds))
        )
        print(f"  graft {j}: hands with {part.label}, cards {built.inner[j].spec['kind']} "
              f"(buckets {ranges})", file=out)
    info = strategy.meta.get("grafting")
    if isinstance(info, dict):
        base = info.get("base", {})
        if isinstance(base, dict):
            print(f"  base file {base.get('file')} (checksum {base.get('checksum')})", file=out)
        for g in info.get("grafts", []):
            if isinstance(g, dict) and "nash_conv" in g:
                print(f"  position {g.get('player')} graft {g.get('graft')}: "
                      f"{g.get('iterations')} iterations, graft-game NashConv "
                      f"{float(g.get('nash_conv', float('nan'))):.3g} chips/hand", file=out)
            elif isinstance(g, dict):
                print(f"  position {g.get('player')} graft {g.get('graft')}: "
                      f"{g.get('iterations')} iterations of {strategy.meta.get('solver')} "
                      f"({float(g.get('seconds', float('nan'))):.0f} s), sampled graft-game "
                      f"value of position 0 "
                      f"{float(g.get('sampled_value_p0', float('nan'))):+.2f} chips/hand",
                      file=out)
