"""Benchmark the re-solving agent (``acpc-agent --resolve``) over the protocol: decision
time per action and per hand (p50/p99/max), invalid actions, re-solves and fallbacks.

Plays matches (no-limit Leduc by default; hold'em with ``--game`` and ``--strategy``, whose
re-solver works on the river only): ``acpc-agent --strategy FILE --resolve MODE`` (with its
trace and ``--stats``) against ``--opponent`` (default ``builtin:random``), on our dealer
(``acpc-dealer``) and, with ``--reference-dealer PATH`` (the reference ACPC ``dealer``
binary), on the reference dealer too, the same match (game, hands, seed). Per dealer it
prints: hands, decisions, the re-solving agent's decision times from its trace (``seconds``
of every decision record: from the state's arrival in the policy to the action; per hand:
the sum over the hand's decisions) as p50 / p99 / max in ms, the re-solves and where the
other decisions came from, the fallbacks, the dealer's invalid-action warnings (``WARNING``
lines: must be 0), the agent's chips per hand, and the load average before and after.

The ACPC competition's time limits (the dealer's defaults): ``--t_response`` 600,000 ms per
action, ``--t_hand`` 600,000 ms per hand, ``--t_per_hand`` 7,000 ms per hand on average over
the match; the dealers run with those defaults here, so a match that breaks one fails.

    .venv/bin/python scripts/bench_resolve_agent.py                       # 1,000 hands, ours
    .venv/bin/python scripts/bench_resolve_agent.py --hands 3000 --mode always \\
        --reference-dealer /path/to/acpc-reference/bin/dealer
    .venv/bin/python scripts/bench_resolve_agent.py --resolve-ms 50 --gadgets resolve
    .venv/bin/python scripts/bench_resolve_agent.py --game holdem.nolimit.2p.reverse_blinds.game \
        --strategy holdem.nolimit.2p.strat --hands 3000 --resolve-iterations 50 \
        --reference-dealer /path/to/acpc-reference/bin/dealer --only-reference
    .venv/bin/python scripts/bench_resolve_agent.py --replot OUT   # the PNG again

It writes ``summary.json``, the traces and ``decision_times.png`` (per action and per
hand, the fraction of decisions slower than each time, log-log) to ``--out``.

Not a test (timings depend on the machine and its load); run it with ``nice -n 10`` on a
shared machine and read the load beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HOST = "127.0.0.1"
LIMITS_MS = {"t_response": 600_000, "t_hand": 600_000, "t_per_hand": 7_000}
"""The dealers' default time limits (ms): per action, per hand, per hand on average."""


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by the nearest rank (the client summary's rule)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def play(dealer: list[str], game: str, agent_args: list[str], opponent: list[str],
         workdir: Path) -> tuple[str, str, int]:
    """One match: the dealer's output, the agent's stderr, the opponent's exit status.

    Raises:
        RuntimeError: if the dealer or a player fails.
    """
    proc = subprocess.Popen(dealer, cwd=workdir, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stderr is not None
    ports = proc.stdout.readline().split()
    if len(ports) != 2:
        proc.kill()
        raise RuntimeError(f"expected 2 ports from {dealer[0]}, got {ports!r}")
    base = [sys.executable, "-m", "agent.cli", game, HOST]
    ours = subprocess.Popen([*base, ports[0], *agent_args], cwd=workdir,
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    other = subprocess.Popen([*base, ports[1], *opponent], cwd=workdir,
                             stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    out, err = proc.communicate()
    agent_err = ours.communicate(timeout=60)[1]
    code = other.wait(timeout=60)
    if proc.returncode != 0 or ours.returncode != 0 or code != 0:
        raise RuntimeError(f"{dealer[0]} exit {proc.returncode}, agent {ours.returncode} "
                           f"({agent_err.strip()[-500:]}), opponent {code}: "
                           f"{(out + err)[-1000:]}")
    return out + err, agent_err, code


def report(name: str, trace: Path, stats: dict[str, Any], dealer_out: str,
           agent_err: str, loads: tuple[float, float]) -> dict[str, Any]:
    """Read a match's trace and counters; print and return the figures."""
    per_action: list[float] = []
    per_hand: dict[int, float] = {}
    resolve_ms: list[float] = []
    chips = 0.0
    hands = 0
    for line in trace.read_text().splitlines():
        record = json.loads(line)
        if record.get("event") == "result":
            chips += float(record["chips"])
            hands += 1
            continue
        seconds = float(record["seconds"])
        per_action.append(seconds * 1e3)
        per_hand[record["hand"]] = per_hand.get(record["hand"], 0.0) + seconds * 1e3
        info = record.get("resolve") or {}
        if info.get("source") == "resolve" and not info.get("fallback"):
            resolve_ms.append(seconds * 1e3)
    hand_ms = list(per_hand.values())
    warnings = sum("WARNING" in x for x in dealer_out.splitlines())
    row: dict[str, Any] = {
        "dealer": name, "hands": hands, "decisions": len(per_action),
        "action_ms": [percentile(per_action, q) for q in (0.5, 0.99, 1.0)],
        "hand_ms": [percentile(hand_ms, q) for q in (0.5, 0.99, 1.0)],
        "resolve_ms": [percentile(resolve_ms, q) for q in (0.5, 0.99, 1.0)],
        "resolves": stats.get("resolves"), "plan": stats.get("plan_decisions"),
        "blueprint": stats.get("blueprint_decisions"),
        "translated_rounds": stats.get("translated_rounds"),
        "fallbacks": {k: stats.get(k) for k in ("time_budget_fallbacks", "failed_fallbacks",
                                                "illegal_fallbacks", "timeouts")},
        "invalid_warnings": warnings, "chips_per_hand": chips / hands if hands else 0.0,
        "load": loads, "summary": agent_err.strip().splitlines()[-1:],
    }

    def trio(v: list[float]) -> str:
        return " / ".join(f"{x:.2f}" for x in v)

    print(f"{name}: {hands} hands, {len(per_action)} decisions, invalid-action warnings "
          f"{warnings}, agent {row['chips_per_hand']:+.3f} chips/hand")
    print(f"  per action ms p50 / p99 / max: {trio(row['action_ms'])}")
    print(f"  per hand   ms p50 / p99 / max: {trio(row['hand_ms'])}")
    print(f"  re-solving decisions played ({len(resolve_ms)}) ms p50 / p99 / max: "
          f"{trio(row['resolve_ms'])}")
    print(f"  sources: re-solve {row['resolves']}, plan {row['plan']}, blueprint "
          f"{row['blueprint']}, translated rounds {row['translated_rounds']}; fallbacks "
          f"{row['fallbacks']}")
    print(f"  load average before / after: {loads[0]:.2f} / {loads[1]:.2f}")
    return row


def times(trace: Path) -> tuple[list[float], list[float]]:
    """Per action and per hand decision times (ms) of a trace."""
    per_action: list[float] = []
    per_hand: dict[int, float] = {}
    for line in trace.read_text().splitlines():
        record = json.loads(line)
        if record.get("event") == "decision":
            ms = float(record["seconds"]) * 1e3
            per_action.append(ms)
            per_hand[record["hand"]] = per_hand.get(record["hand"], 0.0) + ms
    return per_action, list(per_hand.values())


def plot(out_dir: Path, title: str) -> Path:
    """``decision_times.png`` in ``out_dir``: the distribution (1 - CDF, log-log) of the
    decision times per action and per hand of every match whose trace is there."""
    from strategies.measure.translation.plots import pyplot

    plt = pyplot()
    rows = json.loads((out_dir / "summary.json").read_text())
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for i, row in enumerate(rows):
        for ax, values in zip(axes, times(out_dir / f"trace{i}.jsonl"), strict=True):
            ordered = sorted(values)
            n = len(ordered)
            ax.step(ordered, [1 - k / n for k in range(n)], where="post",
                    label=f"{row['dealer']} (load {row['load'][0]:.1f})")
    for ax, what in zip(axes, ("per action", "per hand"), strict=True):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"decision time {what} (ms)")
        ax.axvline(LIMITS_MS["t_per_hand"], color="grey", linestyle=":",
                   label="7,000 ms (t_per_hand, an average)")
        ax.legend(fontsize=8)
    axes[0].set_ylabel("fraction slower")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    path = out_dir / "decision_times.png"
    fig.savefig(path, dpi=110)
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--hands", type=int, default=1000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--game", default="leduc.nolimit.2p.game")
    p.add_argument("--strategy", default="leduc.nolimit.2p.fcpa.strat")
    p.add_argument("--mode", default="round", choices=("off-tree", "round", "always"))
    p.add_argument("--gadgets", dest="gadget", default="reach-maxmargin")
    p.add_argument("--resolve-iterations", type=int, default=200)
    p.add_argument("--resolve-ms", type=float, default=None)
    p.add_argument("--opponent", default="builtin:random")
    p.add_argument("--reference-dealer", type=Path, default=None, metavar="PATH",
                   help="the reference ACPC dealer binary: play the same match on it too")
    p.add_argument("--only-reference", action="store_true",
                   help="with --reference-dealer: play the match on the reference dealer only")
    p.add_argument("--out", type=Path, default=None,
                   help="keep traces and a JSON summary here (default: a temporary folder)")
    p.add_argument("--replot", type=Path, default=None, metavar="DIR",
                   help="only draw decision_times.png again from an --out folder")
    args = p.parse_args(argv)
    if args.replot is not None:
        print(plot(args.replot, str(args.replot)))
        return 0
    from agent.acpc.gamefiles import bundled_game_path

    game_path = Path(args.game) if Path(args.game).exists() else bundled_game_path(args.game)
    dealers: list[tuple[str, list[str]]] = [
        ("acpc-dealer", [sys.executable, "-m", "dealer.cli"])]
    if args.reference_dealer is not None:
        if not args.reference_dealer.is_file():
            p.error(f"expected the reference dealer binary, got {str(args.reference_dealer)!r}")
        dealers.append(("reference dealer", [str(args.reference_dealer)]))
        if args.only_reference:
            dealers = dealers[1:]
    elif args.only_reference:
        p.error("expected --reference-dealer PATH with --only-reference")
    out_dir = args.out or Path(tempfile.mkdtemp(prefix="bench-resolve-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    print(f"{args.hands} hands of {game_path.name}, {args.strategy} --resolve {args.mode} "
          f"--gadgets {args.gadget} --resolve-iterations {args.resolve_iterations}"
          + (f" --resolve-ms {args.resolve_ms:g}" if args.resolve_ms else "")
          + f" against {args.opponent}; limits (ms) {LIMITS_MS}")
    rows = []
    for i, (name, prefix) in enumerate(dealers):
        trace = out_dir / f"trace{i}.jsonl"
        stats_path = out_dir / f"stats{i}.json"
        dealer = [*prefix, f"bench{i}", str(game_path), str(args.hands), str(args.seed),
                  "R", "O", "-q"]
        agent = ["--strategy", args.strategy, "--resolve", args.mode, "--gadgets", args.gadget,
                 "--resolve-iterations", str(args.resolve_iterations), "--seed", "1",
                 "--trace", str(trace), "--stats", str(stats_path)]
        if args.resolve_ms:
            agent += ["--resolve-ms", str(args.resolve_ms)]
        before = os.getloadavg()[0]
        start = time.perf_counter()
        dealer_out, agent_err, _ = play(dealer, str(game_path), agent,
                                        ["--strategy", args.opponent, "--seed", "2"], out_dir)
        print(f"[{name}: {time.perf_counter() - start:.1f} s wall]")
        stats = json.loads(stats_path.read_text())
        rows.append(report(name, trace, stats, dealer_out, agent_err,
                           (before, os.getloadavg()[0])))
    (out_dir / "summary.json").write_text(json.dumps(rows, indent=1))
    title = (f"{args.hands} hands, --resolve {args.mode} --resolve-iterations "
             f"{args.resolve_iterations}" + (f" --resolve-ms {args.resolve_ms:g}"
                                             if args.resolve_ms else ""))
    print(f"plot: {plot(out_dir, title)}")
    print(f"traces and summary.json in {out_dir}")
    return 1 if any(r["invalid_warnings"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
