"""Royal's re-solving lab with the off-tree size in every round or on the flop only.

    python scripts/resolve_royal_rounds.py --out scripts/results/resolve-lab/royal-rounds \
        [--blueprint royal-fcpa] [--extra 0.5] [--mappings rand-pshar,rand-arith] \
        [--gadgets resolve] [--iterations 100]

The agent re-solves Royal's flop only and translates preflop
(:mod:`strategies.measure.resolve_royal`). To tell the two apart, the responder may bet the
blueprint's sizes plus ``--extra`` (a) in both rounds (the table's ``own+X`` setting) and
(b) on the flop only (preflop it keeps to the blueprint's sizes): each translating mapping
(no purification) in both, and the re-solving agent (each of ``--gadgets``, none by
default) in (b). Prints the table; writes ``rounds.csv`` and ``rounds.json``. See
docs/reports/resolve-lab.md#royal.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent.resolve import ResolveConfig, parse_gadget
from strategies.commands.resolve_lab import load_blueprint
from strategies.measure import resolve_lab as rl
from strategies.measure import resolve_royal as rr
from strategies.measure.translation import lab as tl


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--blueprint", default="royal-fcpa")
    p.add_argument("--extra", type=float, default=0.5)
    p.add_argument("--mappings", default="rand-pshar,rand-arith")
    p.add_argument("--gadgets", default="")
    p.add_argument("--iterations", type=int, default=100)
    args = p.parse_args()
    strategy = load_blueprint(args.blueprint)
    mappings = tl.parse_mappings(args.mappings)
    gadgets = [parse_gadget(g) for g in args.gadgets.split(",") if g.strip()]
    rows: list[rl.Row] = []
    for first_round, label in ((0, f"own+{args.extra:g}"), (1, f"own+{args.extra:g}@flop")):
        setting = rl.blueprint_setting(strategy, label, (args.extra,))
        lab = rr.RoyalResolveLab.build(strategy, args.blueprint, setting, first_round)
        for m in mappings:
            rows.append(lab.translate(m, "none"))
            print(f"{label} translate {m}: {rows[-1].average:.5f}", file=sys.stderr, flush=True)
        for g in gadgets if first_round == 1 else []:
            rows.append(lab.resolve(ResolveConfig(gadget=g, iterations=args.iterations)))
            print(f"{label} resolve {g}: {rows[-1].average:.5f}", file=sys.stderr, flush=True)
    print(rl.format_table(rows))
    tl.write_records([r.to_json() for r in rows], Path(args.out), "rounds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
