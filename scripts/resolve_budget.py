"""The re-solving agent's exploitability against its budget (CFR+ iterations per re-solve).

    python scripts/resolve_budget.py --out scripts/results/resolve-lab/budget \
        [--blueprint fcpa] [--setting own+0.5] [--iterations 30,100,300,1000,3000]

For one blueprint and setting of the re-solving lab (:mod:`strategies.measure.resolve_lab`),
every gadget is assembled and best-responded at each budget; the best translating agent
(every mapping, no purification) is the reference line. Writes ``budget.csv``,
``budget.json`` and ``budget.png``. See docs/reports/resolve-lab.md.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from agent.resolve import GADGETS, ResolveConfig
from strategies.commands.resolve_lab import parse_setting
from strategies.measure import resolve_lab as rl
from strategies.measure.translation import lab as tl
from strategies.measure.translation.plots import pyplot


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--blueprint", default="fcpa")
    p.add_argument("--setting", default="own+0.5")
    p.add_argument("--iterations", default="30,100,300,1000,3000")
    p.add_argument("--value-iterations", type=int, default=2000)
    args = p.parse_args()
    budgets = [int(x) for x in args.iterations.split(",")]
    strategy = tl.load_leduc(args.blueprint)
    label, extra = parse_setting(args.setting)
    setting = rl.Setting(label, None) if extra is None else rl.blueprint_setting(
        strategy, label, extra)
    lab = rl.Lab.build(strategy, args.blueprint, setting, args.value_iterations)
    rows = [lab.translate(m, "none") for m in tl.MAPPINGS]
    best = min(rows, key=lambda r: r.average)
    out: list[rl.Row] = [best]
    for gadget in GADGETS:
        for it in budgets:
            start = time.perf_counter()
            row = lab.resolve(ResolveConfig(gadget=gadget, iterations=it))
            out.append(row)
            print(f"{gadget:16} {it:6d} iterations: {row.average:.5f} "
                  f"({time.perf_counter() - start:.1f} s)", file=sys.stderr, flush=True)
    folder = Path(args.out)
    tl.write_records([r.to_json() for r in out], folder, "budget")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for gadget in GADGETS:
        pts = [(r.extra["iterations"], r.average) for r in out if r.gadget == gadget]
        ax.plot([x for x, _ in pts], [y for _, y in pts], "o-", label=f"re-solve: {gadget}")
    ax.axhline(best.average, color="grey", linestyle="--",
               label=f"translate: {best.mapping} (best mapping)")
    ax.axhline(best.average / 10, color="grey", linestyle=":", label="10x below it")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("CFR+ iterations per re-solve")
    ax.set_ylabel("exploitability, chips per hand (both seats)")
    ax.set_title(f"{args.blueprint}, responder {setting.label}", fontsize=10)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(folder / "budget.png", dpi=110)
    for r in out:
        print(f"{r.agent:9} {r.gadget or r.mapping:16} {r.extra.get('iterations', ''):>6} "
              f"{r.average:.5f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
