"""``acpc-strategy lbr FILE``: local best response against a strategy file's agent, valued
exactly in a small no-limit game and set beside the exact best response.

For every mapping x purification asked for: LBR's value in each seat against the agent in
the other seat (the agent as :mod:`strategies.translation.full_br` models the policy), their
average (a lower bound of the agent's exploitability over both seats, chips per hand and
mbb/h), and the exact best response's average (the exploitability itself), so that what LBR
finds can be read against what there is to find. The game must be one the translation lab
enumerates (no-limit, a real betting tree of at most 2,000,000 nodes, deals enumerable:
no-limit Kuhn and Leduc files); anything else is a one-line error before work starts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from agent.abstraction.convention import parse_size_convention
from agent.abstraction.translation import get_mapping
from agent.acpc.errors import UsageError
from agent.agents import resolve_strategy
from agent.strategy.fileformat import load_strategy
from agent.strategy.purification import parse_purification
from strategies.defaults import PROG
from strategies.game import check_enumerable
from strategies.lbr import lbr_value, parse_fractions
from strategies.translation.full_br import AgentLab
from strategies.translation.lab import parse_mappings, parse_purifications


def lbr(args: argparse.Namespace) -> int:
    """Run ``acpc-strategy lbr``."""
    fractions = parse_fractions(args.fractions)
    sizes_in = parse_size_convention(args.sizes_in)
    strategy = load_strategy(resolve_strategy(args.file))
    mappings = parse_mappings(args.mappings) if args.mappings else [
        strategy.default_mapping]
    purifications = parse_purifications(args.purify) if args.purify else [
        str(parse_purification(strategy.default_purification))]
    if not strategy.game.is_nolimit:
        raise UsageError(f"expected a strategy file of a no-limit game (LBR picks bet "
                         f"sizes), got one of a limit game: {args.file!r}")
    check_enumerable(strategy.game)  # hold'em and other big games: refused at once
    start = time.perf_counter()
    lab = AgentLab(strategy, sizes_in=sizes_in)
    lab.models_for(sizes_in)  # build them now, so the line below times them
    print(f"{PROG} lbr: real game {lab.real.num_nodes:,} nodes x {lab.real.num_deals:,} "
          f"deals, agent models built in {time.perf_counter() - start:.1f} s; LBR bets "
          f"{', '.join(f'{f:g}' for f in fractions) or 'none'} pot and all-in")
    big = strategy.game.big_blind or 1
    rows = []
    print(f"{'mapping':<11} {'purify':<14} {'LBR seat 0':>10} {'LBR seat 1':>10} "
          f"{'LBR avg':>9} {'BR avg':>9} {'LBR/BR':>7} {'LBR mbb/h':>10}")
    for pur_name in purifications:
        purification = parse_purification(pur_name)
        for name in mappings:
            fn = get_mapping(name)
            # the agent in seat 1 is met by LBR in seat 0, and vice versa
            results = [lbr_value(lab.real, lab.behaviour(1 - q, fn, purification), q,
                                 fractions) for q in (0, 1)]
            lbr_avg = (results[0].value + results[1].value) / 2
            br_avg = (results[0].best_response + results[1].best_response) / 2
            ratio = lbr_avg / br_avg if br_avg > 0 else float("nan")
            print(f"{name:<11} {pur_name:<14} {results[0].value:>10.4f} "
                  f"{results[1].value:>10.4f} {lbr_avg:>9.4f} {br_avg:>9.4f} {ratio:>7.2f} "
                  f"{1000 * lbr_avg / big:>10.1f}")
            rows.append({"mapping": name, "purify": pur_name, "sizes_in": sizes_in,
                         "lbr": [r.value for r in results],
                         "best_response": [r.best_response for r in results],
                         "lbr_average": lbr_avg, "best_response_average": br_avg})
    print(f"(chips per hand; mbb/h with the big blind of {big:g} chips; LBR seat q "
          f"plays the agent in seat 1 - q; {time.perf_counter() - start:.1f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps({"file": args.file, "fractions": fractions,
                                               "rows": rows}, indent=1))
        print(f"{PROG} lbr: wrote {args.json}", file=sys.stderr)
    return 0
