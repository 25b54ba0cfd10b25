"""Benchmark sampled LBR against today's LBR itself: the program that ran 6.8 hands/s.

    git worktree add /tmp/lbr-today 194e5fe      # the code before the published settings
    python scripts/bench_lbr_today.py --today /tmp/lbr-today [--rounds 3] [--hands-today 400]
                                      [--hands 4000] [--strategy holdem.nolimit.2p.strat]

Issue 31 asked for "at least 20x today's 6.8 hands/second". ``scripts/bench_lbr.py``
compares the fast path with the hole-by-hole path of the same program (a re-creation of the
old work in every setting); this script runs the old program itself, from a checkout of
commit ``194e5fe`` (the last before LBR's rework), beside the current one, in the same run:
each round runs, one after the other, ``acpc-strategy lbr FILE --hands N --seed S --json``
of today's program (its only menu: bets of 0.5, 1, 2 pots and all-in after the flop,
preflop call, played chips), the current program with the same menu (the default), which
must give every hand the same value, and the current program under each published setting
(``fc``, ``fcpa-tr``, ``56-tr``, ``56-all``) and, under ``fcpa-tr``, the two
potential-aware files. Rates are hands per second of each run's own play clock (the JSON's
``seconds``: start-up and file loading excluded) and per CPU second of play: the process's
CPU minus that of a 20-hand run of the same command (start-up, loading and 20 hands,
measured once after the warm-up), over the hands minus 20. The ratios are against today's
program in the same round, by each measure. Every run is one worker; warm-up runs (not
counted) compile and load first. Run it on an idle machine and state the load (printed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_lbr  # scripts/ is on the path when run as a script

CURRENT = Path(__file__).resolve().parents[1]
RUNS = [("today's menu", "holdem.nolimit.2p.strat", []),
        ("fc", "holdem.nolimit.2p.strat", ["--setting", "fc"]),
        ("fcpa-tr", "holdem.nolimit.2p.strat", ["--setting", "fcpa-tr"]),
        ("56-tr", "holdem.nolimit.2p.strat", ["--setting", "56-tr"]),
        ("56-all", "holdem.nolimit.2p.strat", ["--setting", "56-all"]),
        ("fcpa-tr, pa file", "holdem.nolimit.2p.pa.strat", ["--setting", "fcpa-tr"]),
        ("fcpa-tr, pa.overbet file", "holdem.nolimit.2p.pa.overbet.strat",
         ["--setting", "fcpa-tr"])]


def run(code: Path, strategy: str, flags: list[str], hands: int, seed: int,
        out: Path) -> tuple[dict[str, object], float]:
    """One ``acpc-strategy lbr`` process of the program in ``code``: its JSON and CPU s."""
    env = dict(os.environ, PYTHONPATH=str(code))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", "import sys; from strategies.cli import main; "
                    "sys.exit(main())", "lbr", strategy, "--hands", str(hands), "--seed",
                    str(seed), "--progress", "100000", "--json", str(out), *flags],
                   env=env, check=True, stdout=subprocess.DEVNULL, cwd=code)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    data = json.loads(out.read_text())
    if (code == CURRENT) != ("path" in data):
        which = "the current" if code == CURRENT else "the old"
        raise SystemExit(f"expected {code} to run {which} program, got a JSON with keys "
                         f"{sorted(data)!r}")
    return data, cpu


def spread(values: list[float]) -> str:
    return bench_lbr.spread(values, digits=1)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--today", required=True, type=Path,
                   help="a checkout of the old program (commit 194e5fe)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--hands-today", type=int, default=400,
                   help="hands of today's program per round (default 400)")
    p.add_argument("--hands", type=int, default=4000,
                   help="hands of the current program per run (default 4000)")
    args = p.parse_args()
    if not (args.today / "strategies" / "cli.py").is_file():
        raise SystemExit(f"expected a checkout of acpc-arena at --today, got "
                         f"{str(args.today)!r}")
    load0 = os.getloadavg()
    rates: dict[str, list[float]] = {}
    cpu_rates: dict[str, list[float]] = {}
    ratios: dict[str, list[float]] = {}
    cpu_ratios: dict[str, list[float]] = {}
    mismatches = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        run(args.today, RUNS[0][1], [], 20, 99, out)  # warm-up: kernels, file loading
        for _, strategy, flags in RUNS:
            run(CURRENT, strategy, flags, 20, 99, out)
        # start-up and 20 hands, warm: subtracted from every run's CPU
        start = {"today": run(args.today, RUNS[0][1], [], 20, 99, out)[1]}
        for name, strategy, flags in RUNS:
            start[name] = run(CURRENT, strategy, flags, 20, 99, out)[1]
        for r in range(args.rounds):
            seed = r + 1
            today, cpu = run(args.today, RUNS[0][1], [], args.hands_today, seed, out)
            base = float(today["hands_per_second"])  # type: ignore[arg-type]
            rates.setdefault("today", []).append(base)
            cpu_base = (int(today["hands"]) - 20) / (cpu - start["today"])  # type: ignore[call-overload]
            cpu_rates.setdefault("today", []).append(cpu_base)
            line = [f"round {r + 1}/{args.rounds}: today {base:.1f}"]
            for name, strategy, flags in RUNS:
                now, cpu = run(CURRENT, strategy, flags, args.hands, seed, out)
                if not flags:  # the same menu: the same hands, the same values
                    old = today["values"]
                    new = now["values"][: len(old)]  # type: ignore[index]
                    mismatches += sum(a != b for a, b in zip(old, new, strict=True))  # type: ignore[arg-type]
                rate = float(now["hands_per_second"])  # type: ignore[arg-type]
                rates.setdefault(name, []).append(rate)
                cpu_rate = (int(now["hands"]) - 20) / (cpu - start[name])  # type: ignore[call-overload]
                cpu_rates.setdefault(name, []).append(cpu_rate)
                ratios.setdefault(name, []).append(rate / base)
                cpu_ratios.setdefault(name, []).append(cpu_rate / cpu_base)
                line.append(f"{name} {rate:.0f} ({rate / base:.1f}x)")
            print("  " + ", ".join(line), flush=True)
    load1 = os.getloadavg()
    print(f"today's program: {args.today} ({args.hands_today} hands a round, its menu); "
          f"the current: {CURRENT} ({args.hands} hands a run); {args.rounds} rounds, seeds "
          f"1..{args.rounds}, one worker each")
    print(f"{'':<28} {'hands/s (play clock)':^29}   {'x today (play clock)':^29}   "
          f"{'hands per CPU s of play':^29}   {'x today (CPU)':^29}")
    print(f"{'':<28}" + f" {'min':>9} {'median':>9} {'max':>9}  " * 4)
    for name in ["today"] + [n for n, _, _ in RUNS]:
        ratio = " " * 29 if name == "today" else spread(ratios[name])
        cpu_ratio = "" if name == "today" else spread(cpu_ratios[name])
        print(f"{name:<28} {spread(rates[name])}   {ratio}   {spread(cpu_rates[name])}   "
              f"{cpu_ratio}")
    print(f"hands of today's menu whose value differs between the programs: {mismatches} of "
          f"{args.rounds * args.hands_today}")
    print(bench_lbr.load_line(load0, load1))
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
