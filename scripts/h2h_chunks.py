"""The re-solving agent against the same file translating, in resumable chunks.

Each chunk is one ``acpc-match`` duplicate run (``--pair rs:tr --matches 1 --unit hand``:
both seatings of the same deals, each hand number a unit) with its own master seed
(``--seed0 + k``, which seeds the deals, the translating agent and the re-solving agent's
``--seed``); its summary (mean and standard error in mbb/hand, units, hands, the CPU seconds
of ``acpc-match`` and everything it ran, the wall time, the load average, the time-guard
counts) is appended to ``OUT/results.jsonl`` the moment it finishes. Running the same
command again skips the chunks already in the file (an interrupted chunk resumes from its
own ``--run-dir``, where ``acpc-match`` stored any finished match). A chunk that fails is
tried again (same seed: the same hands) up to ``--retries`` times, and counted.

``summary`` pools the chunks exactly as one run over all their units would: with ``n_i``
units, mean ``m_i`` and standard error ``se_i`` (``acpc-match``'s, from the standard
deviation with ``n - 1``), the sums ``n_i m_i`` and ``(n_i - 1) n_i se_i^2 + n_i m_i^2`` of
the units and their squares give the pooled mean, standard deviation and the Student-t
interval (``df = N - 1``).

    nice -n 19 .venv/bin/python scripts/h2h_chunks.py run --chunks 32 --hands 250 \\
        --seed0 3000 --out scripts/results/resolving-agent/holdem-h2h-16k
    .venv/bin/python scripts/h2h_chunks.py summary \\
        --out scripts/results/resolving-agent/holdem-h2h-16k

Not a test; run it with ``nice -n 19`` on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

GAME = "holdem.nolimit.2p.reverse_blinds.game"
STRATEGY = "holdem.nolimit.2p.strat"


def chunk_command(k: int, seed: int, hands: int, iterations: int, out: Path) -> list[str]:
    """The ``acpc-match`` command of chunk ``k``."""
    venv = Path(sys.executable).parent
    rs = (f"rs=cmd={venv / 'acpc-agent'} --strategy {STRATEGY} --resolve round "
          f"--resolve-iterations {iterations} --seed {seed} {GAME}")
    return [str(venv / "acpc-match"), "--game", GAME, "-v", rs, "-v", f"tr={STRATEGY}",
            "--pair", "rs:tr", "--hands", str(hands), "--matches", "1", "--seed", str(seed),
            "--workers", "1", "--transport", "tcp", "--unit", "hand",
            "--t-response-ms", "3600000", "--t-hand-ms", "3600000",
            "--t-per-hand-ms", "600000", "--start-timeout-ms", "600000",
            "--match-timeout", "86400", "--quiet",
            "--run-dir", str(out / f"chunk{k:03d}"), "--json", str(out / f"chunk{k:03d}.json")]


def done_chunks(results: Path) -> dict[int, dict[str, Any]]:
    """The chunks already in ``results`` (by number)."""
    if not results.exists():
        return {}
    rows = [json.loads(x) for x in results.read_text().splitlines() if x.strip()]
    return {int(r["chunk"]): r for r in rows}


def run(args: argparse.Namespace) -> int:
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results.jsonl"
    for k in range(args.chunks):
        if k in done_chunks(results):
            continue
        seed = args.seed0 + k
        cmd = chunk_command(k, seed, args.hands, args.resolve_iterations, out)
        for attempt in range(args.retries + 1):
            load = os.getloadavg()[0]
            cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.time()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
            if proc.returncode == 0:
                break
            with (out / "failures.log").open("a") as f:
                f.write(f"chunk {k} seed {seed} attempt {attempt}: exit {proc.returncode}: "
                        f"{(proc.stdout + proc.stderr)[-2000:]}\n")
        else:
            print(f"chunk {k}: failed {args.retries + 1} times (failures.log)", flush=True)
            return 1
        data = json.loads((out / f"chunk{k:03d}.json").read_text())
        raw = data["overall"]["rs"]["raw"]
        row = {"chunk": k, "seed": seed, "mean": raw["mean"], "se": raw["se"],
               "units": raw["units"], "hands": raw["hands"], "cpu_seconds": round(cpu, 2),
               "wall_seconds": round(time.time() - start, 1), "load_start": round(load, 2),
               "load_end": round(os.getloadavg()[0], 2), "attempts": attempt + 1,
               "time_guard": data.get("time_guard"),
               "timing_dependent": data.get("timing_dependent"),
               "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        with results.open("a") as f:
            f.write(json.dumps(row) + "\n")
        print(f"chunk {k} (seed {seed}): {raw['mean']:+.1f} mbb/hand over {raw['units']} "
              f"units, {cpu:.0f} CPU s, {row['wall_seconds']:.0f} s wall, load {load:.1f}",
              flush=True)
    return 0


def pooled(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The pooled mean, standard deviation per unit, standard error and 95% Student-t
    interval of the chunks' units (module docstring)."""
    from scipy import stats

    n = sum(int(r["units"]) for r in rows)
    total = sum(r["units"] * r["mean"] for r in rows)
    squares = sum((r["units"] - 1) * r["units"] * r["se"] ** 2 + r["units"] * r["mean"] ** 2
                  for r in rows)
    mean = total / n
    sd = math.sqrt(max(squares - n * mean * mean, 0.0) / (n - 1))
    se = sd / math.sqrt(n)
    half = float(stats.t.ppf(0.975, n - 1)) * se
    p = float(2 * stats.t.sf(abs(mean) / se, n - 1)) if se > 0 else float("nan")
    return {"units": n, "hands": sum(int(r["hands"]) for r in rows), "mean": mean, "sd": sd,
            "se": se, "half_width": half, "p_value": p}


def summary(args: argparse.Namespace) -> int:
    rows = sorted(done_chunks(args.out / "results.jsonl").values(), key=lambda r: r["chunk"])
    if not rows:
        print(f"no chunk finished in {args.out}")
        return 1
    got = pooled(rows)
    cpu = sum(r["cpu_seconds"] for r in rows)
    guards = sum(sum((r.get("time_guard") or {}).values()) for r in rows)
    print(f"{len(rows)} chunks, {got['hands']} hands ({got['units']} units): rs vs tr "
          f"{got['mean']:+.1f} +- {got['half_width']:.1f} mbb/hand (95% Student-t), SD per "
          f"unit {got['sd']:.0f}, p = {got['p_value']:.3f}; {cpu:.0f} CPU s "
          f"({cpu / got['hands']:.3f} per hand), time-guard decisions {guards}")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="play the chunks not yet in OUT/results.jsonl")
    r.add_argument("--chunks", type=int, required=True)
    r.add_argument("--hands", type=int, default=250, help="hands per seating per chunk")
    r.add_argument("--seed0", type=int, required=True)
    r.add_argument("--resolve-iterations", type=int, default=50)
    r.add_argument("--retries", type=int, default=2)
    r.add_argument("--out", type=Path, required=True)
    s = sub.add_parser("summary", help="pool the finished chunks")
    s.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    return run(args) if args.command == "run" else summary(args)


if __name__ == "__main__":
    sys.exit(main())
