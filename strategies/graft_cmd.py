"""The work behind ``acpc-strategy graft`` and the grafts section of ``inspect``.

``graft --base FILE --partition SPEC --out FILE``: load the base strategy file (two
players, deals enumerable, not itself grafted), parse the partition
(:func:`strategies.grafting.parse_partition`), solve every graft
(:func:`strategies.grafting.graft_strategy`, ``--workers`` processes), print one line per
solved graft on stderr (its NashConv in its graft game), and write the grafted strategy:
an ordinary strategy file with a ``graft`` card spec and ``meta['grafting']`` (partition,
base file and checksum, per-graft iterations, NashConv and seconds).

Imported by :mod:`strategies.cli` only when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from agent.abstraction.buckets import card_abstraction_from_spec
from agent.acpc.errors import UsageError
from agent.strategy.fileformat import Strategy, dump_strategy, load_strategy
from strategies.best_response import strategy_table
from strategies.defaults import PROG
from strategies.game import build_abstract_game, check_enumerable
from strategies.grafting import GraftResult, graft_strategy, parse_partition


def graft(args: argparse.Namespace) -> int:
    """Run ``acpc-strategy graft`` (module docstring).

    Raises:
        UsageError: for a bad base file, partition or option.
    """
    if args.iterations < 0:
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
                             solver=args.solver, workers=args.workers, progress=progress)
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
    print(f"wrote {args.out}: {jobs} graft(s), buckets {grafted.cards['buckets']}, largest "
          f"graft-game NashConv {worst:.3g} chips/hand")
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
            if isinstance(g, dict):
                print(f"  position {g.get('player')} graft {g.get('graft')}: "
                      f"{g.get('iterations')} iterations, graft-game NashConv "
                      f"{float(g.get('nash_conv', float('nan'))):.3g} chips/hand", file=out)
