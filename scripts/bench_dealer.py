"""Benchmark ``acpc-dealer``: hands per second against minimal always-call clients.

``python scripts/bench_dealer.py [--hands 20000] [--players 2|3] [--profile OUT.prof]``

Starts ``acpc-dealer -q`` (a subprocess, real loopback sockets, the log file written as in a
real match) on heads-up no-limit hold'em (``holdem.nolimit.2p.reverse_blinds.game``) or, with
``--players 3``, on ``holdem.nolimit.3p.game``, connects one ``scripts/call_client.py`` per
seat (each its own process; every hand goes to showdown), and prints hands/s measured from
the dealer's ports line to its exit, and the dealer's own CPU time per hand (user + system, a
figure that depends much less on what else the machine is doing). The reference dealer with
its example players does 2,500-4,000 hands/s on a 2-core machine.

``--profile OUT`` runs the dealer under cProfile, writes the stats to ``OUT`` and prints the
top functions by own time (profiling slows the dealer down; the figure is not a benchmark).
``--client agent`` uses ``acpc-agent --strategy builtin:call`` instead of the minimal client.
``--dealer-path DIR`` runs the dealer from another checkout (``DIR`` goes first on its
``PYTHONPATH``), to compare two versions on the same machine and load.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pstats
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GAMES = {2: "holdem.nolimit.2p.reverse_blinds.game", 3: "holdem.nolimit.3p.game"}
CALL_CLIENT = Path(__file__).resolve().parent / "call_client.py"
START_TIMEOUT_S = 30.0


def _client_command(kind: str, game: str, port: int) -> list[str]:
    if kind == "agent":
        return [sys.executable, "-m", "agent.cli", game, "127.0.0.1", str(port),
                "--strategy", "builtin:call", "--quiet"]
    return [sys.executable, str(CALL_CLIENT), game, "127.0.0.1", str(port)]


def run_once(
    hands: int, players: int, seed: int, client: str, profile: Path | None, workdir: Path,
    dealer_path: Path | None = None,
) -> tuple[float, float, str]:
    """Play one match; return ``(seconds, dealer CPU seconds, SCORE line)``.

    Raises:
        RuntimeError: if the dealer or a client fails.
    """
    game = GAMES[players]
    names = [f"C{i + 1}" for i in range(players)]
    prefix = [sys.executable]
    if profile is not None:
        prefix += ["-m", "cProfile", "-o", str(profile)]
    cmd = [*prefix, "-m", "dealer.cli", "bench", game, str(hands), str(seed), *names, "-q",
           "--start_timeout", str(int(START_TIMEOUT_S * 1000))]
    env = dict(os.environ)
    if dealer_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            x for x in (str(dealer_path), env.get("PYTHONPATH", "")) if x
        )
    dealer = subprocess.Popen(cmd, cwd=workdir, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
    clients: list[subprocess.Popen[bytes]] = []
    try:
        assert dealer.stdout is not None
        ports = [int(p) for p in dealer.stdout.readline().split()]
        if len(ports) != players:
            raise RuntimeError(f"expected {players} ports from the dealer, got {ports!r}")
        start = time.perf_counter()
        clients = [subprocess.Popen(_client_command(client, game, port), cwd=ROOT)
                   for port in ports]
        assert dealer.stderr is not None
        out = dealer.stdout.read()  # -q: stdout and stderr stay small; EOF at exit
        err = dealer.stderr.read()
        _, status, usage = os.wait4(dealer.pid, 0)
        elapsed = time.perf_counter() - start
        dealer.returncode = os.waitstatus_to_exitcode(status)
        bad = [c.wait(timeout=30) for c in clients]
        if dealer.returncode != 0 or any(bad):
            raise RuntimeError(f"dealer exit {dealer.returncode}, clients {bad}; stderr:\n{err}")
        print(f"  (dealer user {usage.ru_utime:.2f} s, system {usage.ru_stime:.2f} s)")
        return elapsed, usage.ru_utime + usage.ru_stime, out.strip().splitlines()[-1]
    finally:
        for proc in [dealer, *clients]:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=20000)
    parser.add_argument("--players", type=int, choices=sorted(GAMES), default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--client", choices=("minimal", "agent"), default="minimal")
    parser.add_argument("--repeat", type=int, default=1, help="runs; the best is reported")
    parser.add_argument("--profile", type=Path, default=None,
                        help="run the dealer under cProfile, write the stats here")
    parser.add_argument("--top", type=int, default=30, help="functions shown with --profile")
    parser.add_argument("--dealer-path", type=Path, default=None,
                        help="run the dealer from this checkout instead (for before/after)")
    args = parser.parse_args()
    uvloop = importlib.util.find_spec("uvloop") is not None
    print(f"game {GAMES[args.players]}, {args.hands} hands, {args.client} call clients, "
          f"uvloop {'installed' if uvloop else 'not installed'}")
    best = float("inf")
    with tempfile.TemporaryDirectory(prefix="bench_dealer_") as tmp:
        for _ in range(max(1, args.repeat)):
            profile = args.profile.resolve() if args.profile else None
            seconds, cpu, score = run_once(
                args.hands, args.players, args.seed, args.client, profile, Path(tmp),
                args.dealer_path,
            )
            print(f"  {seconds:.2f} s, {args.hands / seconds:,.0f} hands/s; dealer CPU "
                  f"{cpu:.2f} s = {cpu / args.hands * 1e6:.0f} us/hand  ({score})")
            best = min(best, seconds)
    print(f"best: {args.hands / best:,.0f} hands/s")
    if args.profile is not None:
        stats = pstats.Stats(str(args.profile))
        stats.sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
