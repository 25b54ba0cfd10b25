"""Per-deal standard deviations of plain, all-in EV, exact-agents and AIVAT values on the
logs of an ``acpc-match`` run, and the hands each needs for a 95% interval of +-25 mbb/h
(issue 31, item 2; the table of ``docs/reports/aivat.md``).

    python scripts/aivat_sd.py --game G --run RUN_DIR --seat NAME=SPEC ... --pair A:B ...
        [--exact-agents EA.json] [--walk-samples K] [--no-imaginary] --out OUT.json
    python scripts/aivat_sd.py --plot OUT.png --table OUT.md FROM.json ...

The first form reads every log of the run directory (``acpc-match --estimator aivat`` or a
played run), pairs the hands of equal seed and number (a duplicate deal) and computes, for
``A`` against ``B``: the plain values, the all-in EV values
(:class:`evaluation.estimators.allin.AllinEvaluator`), AIVAT and AIVAT fitted
(:mod:`evaluation.estimators.aivat`, the seats given as known; on hold'em with and without
the batched imaginary observations of :mod:`evaluation.estimators.aivat_imaginary`,
both from one valuation); from ``--exact-agents``
(``acpc-match --estimator exact-agents --json`` on the same seeds) the exact-agents
estimator's per-deal SD (its standard error times the square root of its deals). The
second form draws the SDs of several such files as a bar chart and writes the markdown
table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

from agent.acpc.gamefiles import load_game
from dealer.logfile import parse_header
from evaluation.estimators.aivat import (
    WALK_SAMPLES,
    LoggedValue,
    PlayerResult,
    Valuer,
    by_player,
    feature_names,
    fitted,
    hands_needed,
    models_of,
    sd,
)
from evaluation.estimators.allin import AllinEvaluator, parse_state_line
from evaluation.logtool import iter_log_lines
from evaluation.match.variants import parse_variant
from evaluation.stats import estimate, to_mbb

COLUMNS = ("plain", "all-in EV", "exact-agents", "AIVAT", "AIVAT fitted", "AIVAT imaginary",
           "AIVAT imaginary fitted")


def measure(args: argparse.Namespace) -> int:
    game = load_game(args.game)
    variants = [parse_variant(text) for text in args.seat]
    valuer = Valuer(game, models_of(game, variants), walk_samples=args.walk_samples,
                    batch_walk=not args.no_imaginary)
    imag = feature_names(game).index("imaginary cards")
    allin = AllinEvaluator(game)
    values: list[LoggedValue] = []
    evs: list[LoggedValue] = []
    cpu_aivat = 0.0
    logs = sorted(Path(args.run).rglob("*.log"))
    for i, path in enumerate(logs, start=1):
        lines = list(iter_log_lines(path))
        seed = parse_header(lines[:4], str(path)).seed
        for n, line in enumerate(lines, start=1):
            if not line.startswith("STATE:"):
                continue
            hand = parse_state_line(line, game, f"{path}:{n}")
            start = time.process_time()
            values.append(valuer.hand(hand, seed, f"{path}:{n}"))
            cpu_aivat += time.process_time() - start
            adj = allin.adjusted_values(hand)
            evs.append(LoggedValue(seed, hand.hand, hand.names, hand.values, adj))
        print(f"aivat_sd: {path.name} ({i} of {len(logs)}), AIVAT {cpu_aivat:.0f} CPU s",
              file=sys.stderr, flush=True)
    exact: dict[str, Any] = {}
    if args.exact_agents:
        rows = json.loads(Path(args.exact_agents).read_text())["rows"]
        exact = {r["comparison"]: r for r in rows}
    big = game.big_blind or 1
    players = by_player(values)
    allins = by_player(evs)
    out = []
    for text in args.pair:
        a, b = text.split(":")
        res = players[a]
        # the batched imaginary observations' correction (hold'em) is the "imaginary
        # cards" term: AIVAT without it adds it back, its fit leaves its column out
        terms = res.terms or [[0.0] * (imag + 1) for _ in res.raw]
        shift = [t[imag] for t in terms]
        plain_terms = [[0.0 if k == imag else x for k, x in enumerate(t)] for t in terms]
        without = PlayerResult(a, res.raw, [x + d for x, d in zip(res.aivat, shift,
                                                                   strict=True)],
                               res.hands, plain_terms)
        series = {
            "plain": [to_mbb(v, big) for v in res.raw],
            "all-in EV": [to_mbb(v, big) for v in allins[a].aivat],
            "AIVAT": [to_mbb(v, big) for v in without.aivat],
            "AIVAT fitted": [to_mbb(v, big) for v in fitted(without)],
        }
        if any(shift):
            series["AIVAT imaginary"] = [to_mbb(v, big) for v in res.aivat]
            series["AIVAT imaginary fitted"] = [to_mbb(v, big) for v in fitted(res)]
        row: dict[str, Any] = {"comparison": f"{a} vs {b}", "deals": len(res.raw),
                               "hands": res.hands, "columns": {}}
        for name, xs in series.items():
            e = estimate(xs, res.hands)
            row["columns"][name] = {"mean": e.mean, "half_width": e.half_width,
                                    "sd_per_deal": sd(xs),
                                    "hands_for_25": hands_needed(sd(xs))}
        ea = exact.get(f"{a} vs {b}")
        if ea is not None:
            s = ea["se"] * math.sqrt(ea["units"])
            row["columns"]["exact-agents"] = {
                "mean": ea["mean"], "half_width": 0.5 * (ea["ci_high"] - ea["ci_low"]),
                "sd_per_deal": s, "hands_for_25": hands_needed(s), "deals": ea["units"]}
        out.append(row)
    report = {"game": args.game, "run": args.run, "rows": out,
              "walk_samples": args.walk_samples,
              "aivat_cpu_seconds": cpu_aivat, "value_functions": valuer.kinds,
              "load": os.getloadavg()}
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0


def plot(args: argparse.Namespace) -> int:
    rows = []
    for f in args.files:
        data = json.loads(Path(f).read_text())
        for r in data["rows"]:
            r["comparison"] += f" (K={data.get('walk_samples', WALK_SAMPLES)})"
            rows.append(r)
    lines = ["| comparison | deals | " + " | ".join(f"{c}: SD per deal (hands for +-25)"
                                                   for c in COLUMNS) + " |",
             "|---|---|" + "---|" * len(COLUMNS)]
    for r in rows:
        cells = []
        for c in COLUMNS:
            got = r["columns"].get(c)
            cells.append("-" if got is None else
                         f"{got['sd_per_deal']:,.0f} ({got['hands_for_25']:,.0f})")
        lines.append(f"| {r['comparison']} | {r['deals']} | " + " | ".join(cells) + " |")
    Path(args.table).write_text("\n".join(lines) + "\n", encoding="utf-8")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4.5))
    width = 0.8 / len(COLUMNS)
    for k, c in enumerate(COLUMNS):
        xs = [i + (k - (len(COLUMNS) - 1) / 2) * width for i in range(len(rows))]
        ys = [r["columns"].get(c, {}).get("sd_per_deal", 0.0) for r in rows]
        ax.bar(xs, ys, width, label=c)
    ax.set_xticks(range(len(rows)), [r["comparison"].replace(" (", "\n(") for r in rows])
    ax.set_ylabel("SD per duplicate deal (mbb/h)")
    ax.set_title("Hold'em: per-deal standard deviation by estimator")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.plot, dpi=110)
    print("\n".join(lines))
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game")
    p.add_argument("--run")
    p.add_argument("--seat", action="append", default=[], metavar="NAME=SPEC")
    p.add_argument("--pair", action="append", default=[], metavar="A:B")
    p.add_argument("--exact-agents", default=None)
    p.add_argument("--walk-samples", type=int, default=WALK_SAMPLES)
    p.add_argument("--no-imaginary", action="store_true",
                   help="no batched imaginary observations (hold'em): faster")
    p.add_argument("--out")
    p.add_argument("--plot")
    p.add_argument("--table")
    p.add_argument("files", nargs="*")
    args = p.parse_args()
    return plot(args) if args.plot else measure(args)


if __name__ == "__main__":
    sys.exit(main())
