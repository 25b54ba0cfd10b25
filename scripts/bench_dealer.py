"""Benchmark ``acpc-dealer``: hands per second, alone or side by side with the reference C dealer.

``python scripts/bench_dealer.py [--hands 20000] [--players 2|3] [--profile OUT.prof]``

Starts ``acpc-dealer -q`` (a subprocess, real loopback sockets, the log file written as in a
real match) on heads-up no-limit hold'em (``holdem.nolimit.2p.reverse_blinds.game``) or, with
``--players 3``, on ``holdem.nolimit.3p.game``, connects one ``scripts/call_client.py`` per
seat (each its own process; every hand goes to showdown), and prints hands/s measured from
the dealer's ports line to its exit, and the dealer's own CPU time per hand (user + system of
the dealer process from ``wait4``, a figure that depends much less on what else the machine is
doing).

``--reference DEALER --reference-player PLAYER`` (the reference ACPC ``dealer`` and
``example_player`` binaries) compares, in one run, interleaving the sides ``--repeat`` times:

(a) the dealer: our dealer vs the reference dealer, each with the same two (or three)
    reference example players;
(b) the full stack: our dealer with our agents (``acpc-agent --strategy builtin:random``) vs
    the reference dealer with reference example players. Both players play random legal
    actions of the same kind: fold 6% (only facing a bet), call 47%, raise 47% with a no-limit
    raise-to uniform between the legal bounds (``agent/builtin.py``, after the reference
    ``example_player``), so the hands have the same length distribution on both sides.

Every side prints hands/s min/median/max, the dealer's CPU per hand, and the ratio ours / C
of the medians (and the range of the per-round ratios: ours over the C run right next to
it). The load average (``os.getloadavg``) is printed before every run. Client start-up is
inside the measured time on both sides (the C player starts in milliseconds, ours in a few
hundred; over 20,000 hands that is a few percent against us).

``--part engine`` (with or without ``--reference``) also times our match engine alone, in this
process: :class:`~dealer.engine.Match` fed each seat's answer from memory (the same random
player as (b), one line per state), no socket, no event loop, no process start-up. It prints
the engine's CPU per hand and per action (``time.process_time`` around the engine's calls
only, not around the players'): the part of our dealer's user time that is the rules and the
protocol themselves; and, timed apart after the match, ``BettingState.initial`` and the
unchecked apply of the same actions (the most a faster betting state could save). With
``--reference``, (a) runs too, so the reference dealer's whole user
time per hand is printed beside it (``--part engine`` is then (a) plus the engine).

``--part floor`` (with ``--reference``) runs (a) and, beside the reference dealer, a dealer
without rules (``scripts/null_dealer.py``): it plays back the writes our dealer makes in the
same match (our engine's states for random players, with the server's holding of watchers'
states, and its log lines; written by :func:`write_floor_schedule` before the runs) to the
same reference players, with uvloop as our server reads and with blocking sockets. What it
costs is what a Python dealer costs before any rule is applied: the interpreter, the event
loop and the system calls; the rest of our dealer's time is the engine.

``--profile OUT`` runs the dealer under cProfile, writes the stats to ``OUT`` and prints the
top functions by own time (profiling slows the dealer down; the figure is not a benchmark).
``--client agent`` uses ``acpc-agent --strategy builtin:call`` instead of the minimal client.
``--dealer-path DIR`` runs our dealer (and our agents) from another checkout (``DIR`` goes
first on its ``PYTHONPATH``), to compare two versions on the same machine and load.
``--core pure`` runs our side on the pure Python core (from a copy of its sources without
the compiled modules, when ``acpc-arena compile`` placed some beside them), ``--core
compiled`` on the compiled one (an error if that checkout has no build in use for its
sources), ``--core auto`` (the default) on whatever is there; the header says which.
"""

from __future__ import annotations

import argparse
import atexit
import importlib.util
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GAMES = {2: "holdem.nolimit.2p.reverse_blinds.game", 3: "holdem.nolimit.3p.game"}
CALL_CLIENT = Path(__file__).resolve().parent / "call_client.py"
NULL_DEALER = Path(__file__).resolve().parent / "null_dealer.py"
START_TIMEOUT_S = 30.0

ClientCommand = Callable[[int, int], list[str]]
"""(seat, port) -> the command line of one client."""


@dataclass(frozen=True, slots=True)
class Run:
    """One match: wall seconds (ports line to dealer exit), dealer CPU seconds, SCORE line."""

    seconds: float
    cpu: float
    user: float
    client_cpu: float
    """CPU seconds of all clients together (user + system)."""
    score: str
    load: float


def _game_path(players: int) -> Path:
    from agent.acpc.gamefiles import bundled_game_path

    return bundled_game_path(GAMES[players])


def _client_command(kind: str, game: str, port: int) -> list[str]:
    if kind == "agent":
        return [sys.executable, "-m", "agent.cli", game, "127.0.0.1", str(port),
                "--strategy", "builtin:call", "--quiet"]
    return [sys.executable, str(CALL_CLIENT), game, "127.0.0.1", str(port)]


def _env(dealer_path: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if dealer_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            x for x in (str(dealer_path), env.get("PYTHONPATH", "")) if x
        )
    return env


def run_match(
    dealer_cmd: Sequence[str], players: int, clients_for: ClientCommand, workdir: Path,
    env: dict[str, str],
) -> Run:
    """Start a dealer, connect one client per port, wait for the end.

    Raises:
        RuntimeError: if the dealer or a client fails.
    """
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    dealer = subprocess.Popen(list(dealer_cmd), cwd=workdir, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env)
    clients: list[subprocess.Popen[bytes]] = []
    try:
        assert dealer.stdout is not None and dealer.stderr is not None
        ports = [int(p) for p in dealer.stdout.readline().split()]
        if len(ports) != players:
            raise RuntimeError(f"expected {players} ports from the dealer, got {ports!r}")
        start = time.perf_counter()
        clients = [
            # Not cwd=ROOT: `python -m` puts its cwd first on sys.path, ahead of
            # --dealer-path's PYTHONPATH, and our agents would then come from ROOT.
            subprocess.Popen(clients_for(seat, port), cwd=workdir, env=env,
                             stdout=subprocess.DEVNULL)
            for seat, port in enumerate(ports)
        ]
        out = dealer.stdout.read()  # -q: stdout and stderr stay small; EOF at exit
        err = dealer.stderr.read()
        _, status, usage = os.wait4(dealer.pid, 0)
        elapsed = time.perf_counter() - start
        dealer.returncode = os.waitstatus_to_exitcode(status)
        bad = [c.wait(timeout=30) for c in clients]
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        client_cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                      - usage.ru_utime - usage.ru_stime)
        if dealer.returncode != 0 or any(bad):
            raise RuntimeError(
                f"{dealer_cmd[0]}: dealer exit {dealer.returncode}, clients {bad}; stderr:\n"
                f"{err[-2000:]}"
            )
        score = [x for x in (out + err).splitlines() if x.startswith("SCORE:")]
        return Run(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_utime, client_cpu,
                   score[-1] if score else "?", load)
    finally:
        procs: list[subprocess.Popen[Any]] = [dealer, *clients]
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def our_dealer_command(
    game: str, hands: int, seed: int, players: int, profile: Path | None = None
) -> list[str]:
    """``acpc-dealer -q`` for a benchmark match."""
    prefix = [sys.executable]
    if profile is not None:
        prefix += ["-m", "cProfile", "-o", str(profile)]
    names = [f"C{i + 1}" for i in range(players)]
    return [*prefix, "-m", "dealer.cli", "bench", game, str(hands), str(seed), *names, "-q",
            "--start_timeout", str(int(START_TIMEOUT_S * 1000))]


def reference_dealer_command(
    dealer: Path, game: str, hands: int, seed: int, players: int
) -> list[str]:
    """The reference dealer with the same match (it has the same arguments)."""
    names = [f"C{i + 1}" for i in range(players)]
    return [str(dealer), "bench", game, str(hands), str(seed), *names, "-q",
            "--start_timeout", str(int(START_TIMEOUT_S * 1000))]


@dataclass(frozen=True, slots=True)
class EngineRun:
    """The engine alone: CPU seconds inside its calls, hands, actions answered."""

    cpu: float
    hands: int
    actions: int
    states_cpu: float = 0.0
    """CPU seconds of the betting states alone: ``BettingState.initial`` and the unchecked
    apply of every action of the same match, timed after it (the ceiling of what a faster
    state could save)."""


def engine_run(
    players: int, hands: int, seed: int,
    record: Callable[[Any, int, bool], None] | None = None,
) -> EngineRun:
    """Play a match through :class:`~dealer.engine.Match` alone (see the module docstring).

    Every state sent to the seat that must act is answered at once by
    :class:`~agent.builtin.RandomPolicy` (the players of (b)); only the engine's own calls
    (``receive``, ``drain``) are timed. ``record``, if given, is called (untimed) with every
    drained :class:`~dealer.engine.Output`, the seat then to act and whether the match is over.
    """
    from agent.acpc.betting import Action, BettingState, format_action
    from agent.acpc.gamefiles import load_game
    from agent.acpc.matchstate import parse_matchstate
    from agent.builtin import RandomPolicy
    from dealer.engine import Match, MatchConfig, Phase

    name = GAMES[players]
    game = load_game(_game_path(players))
    config = MatchConfig("engine", name, game, hands, seed,
                         tuple(f"C{i + 1}" for i in range(players)), quiet=True)
    now = [0]

    def clock() -> int:  # a clock that never runs out: time limits play no part
        now[0] += 1
        return now[0]

    policies = [RandomPolicy(seed * 100 + s) for s in range(players)]
    match = Match(config, clock)
    match.begin()
    match.connected()
    for seat in range(players):
        match.receive(seat, b"VERSION:2.0.0\r\n")
    cpu = 0.0
    actions = 0
    played: dict[int, list[Action]] = {}
    out = match.drain()
    tick = time.process_time
    while True:
        if record is not None:
            record(out, match.acting_seat, match.phase is Phase.DONE)
        if match.phase is Phase.DONE:
            break
        seat = match.acting_seat
        sent = b"".join(data for s, data in out.to_seat if s == seat)
        line = sent.rstrip(b"\r\n").rsplit(b"\r\n", 1)[-1].decode("ascii")
        if not line:
            raise RuntimeError(f"expected a state for seat {seat + 1}, got {sent!r}")
        action = policies[seat].act(parse_matchstate(line, game))
        played.setdefault(match.hand, []).append(action)
        reply = f"{line}:{format_action(action, game)}\r\n".encode("ascii")
        start = tick()
        match.receive(seat, reply)
        out = match.drain()
        cpu += tick() - start
        actions += 1
    if match.exit_status:
        raise RuntimeError(f"the engine ended with status {match.exit_status}: {out.stderr}")
    initial = BettingState.initial
    start = tick()
    for seq in played.values():
        state = initial(game)
        for action in seq:
            state = state._apply_unchecked(action)
    return EngineRun(cpu, hands, actions, tick() - start)


def write_floor_schedule(path: Path, players: int, hands: int, seed: int) -> int:
    """The writes our dealer makes in one match, for ``null_dealer.py`` (``--part floor``).

    The engine plays the match as in :func:`engine_run`; every drain becomes the server's
    writes: its log lines (one flushed write), then one write to the seat that must act (the
    states held back for it first, then the new ones) after which the dealer waits for that
    seat's reply, while states for a seat that only watches are held back until it must act
    or the match ends (``dealer/server.py`` with the default observer delay). Returns the
    number of records.
    """
    from null_dealer import LOG, REPLY, WRITE, Record, write_schedule

    held: dict[int, list[bytes]] = {}
    records: list[Record] = []

    def record(out: Any, acting: int, done: bool) -> None:
        if out.log:
            records.append((LOG, 0, "".join(out.log).encode("ascii")))
        parts: dict[int, list[bytes]] = {}
        for seat, data in out.to_seat:
            parts.setdefault(seat, []).append(data)
        if done:
            for seat in range(players):
                data = b"".join(held.pop(seat, []) + parts.get(seat, []))
                if data:
                    records.append((WRITE, seat, data))
            return
        for seat, chunks in parts.items():
            if seat != acting:
                held.setdefault(seat, []).extend(chunks)
        records.append((REPLY, acting, b"".join(held.pop(acting, []) + parts.get(acting, []))))

    engine_run(players, hands, seed, record)
    return write_schedule(path, iter(records))


def _engine_line(runs: list[EngineRun]) -> str:
    per_hand = sorted(r.cpu / r.hands * 1e6 for r in runs)
    per_action = statistics.median(r.cpu / r.actions * 1e6 for r in runs)
    length = statistics.median(r.actions / r.hands for r in runs)
    states = statistics.median(r.states_cpu / r.actions * 1e6 for r in runs)
    return (f"  engine alone CPU us/hand min {per_hand[0]:.0f}  median "
            f"{statistics.median(per_hand):.0f}  max {per_hand[-1]:.0f};  "
            f"{per_action:.1f} us/action, {length:.2f} actions/hand; of which betting "
            f"states (initial + apply, timed apart) {states:.1f} us/action")


def _line(label: str, runs: list[Run], hands: int) -> str:
    rates = sorted(hands / r.seconds for r in runs)
    cpu = statistics.median(r.cpu for r in runs) / hands * 1e6
    user = statistics.median(r.user for r in runs) / hands * 1e6
    clients = statistics.median(r.client_cpu for r in runs) / hands * 1e6
    return (f"  {label:<12} hands/s min {rates[0]:7,.0f}  median "
            f"{statistics.median(rates):7,.0f}  max {rates[-1]:7,.0f};  dealer CPU "
            f"{cpu:4.0f} us/hand (user {user:.0f}); clients CPU {clients:4.0f} us/hand")


def choose_core(core: str, dealer_path: Path | None) -> tuple[str | None, Path | None]:
    """Set up ``--core`` before anything imports the core: what our side runs (None if
    ``compiled`` was asked for and no build is in use) and the checkout to run it from
    (``dealer_path``, or for ``pure`` a copy without the compiled modules, first on this
    process's path too)."""
    root = ROOT if dealer_path is None else dealer_path.resolve()
    if core == "pure":
        compiled = [*root.glob("agent/acpc/*.so"), *root.glob("dealer/*.so")]
        if not compiled:
            return "pure Python", dealer_path
        copy = Path(tempfile.mkdtemp(prefix="bench_dealer_pure_"))
        atexit.register(shutil.rmtree, copy, True)
        skip = shutil.ignore_patterns("__pycache__", "*.so", "*.strat", "*.json")
        for package in ("agent", "dealer"):
            shutil.copytree(root / package, copy / package, ignore=skip)
        sys.path.insert(0, str(copy))
        return f"pure Python (a copy of {root} without its compiled modules)", copy
    from evaluation.corebuild import status

    found = status(root)
    if core == "compiled" and found.state != "in use":
        return None, dealer_path
    return ("compiled (acpc-arena compile)" if found.state == "in use"
            else f"pure Python ({found.state}: {found.reason})"), dealer_path


def compare(args: argparse.Namespace) -> int:
    """The side-by-side comparison with the reference (see the module docstring)."""
    game = str(_game_path(args.players))
    ref_dealer: Path = args.reference.resolve()
    ref_player: Path = args.reference_player.resolve()
    env = _env(args.dealer_path)
    hands, players = args.hands, args.players

    def ref_clients(seat: int, port: int) -> list[str]:
        return [str(ref_player), game, "127.0.0.1", str(port)]

    def our_clients(seat: int, port: int) -> list[str]:
        return [sys.executable, "-m", "agent.cli", game, "127.0.0.1", str(port),
                "--strategy", "builtin:random", "--seed", str(args.seed * 100 + seat),
                "--quiet"]

    ours = our_dealer_command(game, hands, args.seed, players)
    ref = reference_dealer_command(ref_dealer, game, hands, args.seed, players)
    sides: dict[str, list[tuple[list[str], ClientCommand]]] = {}
    if args.part in ("both", "dealer", "engine", "floor"):
        sides["(a) dealer, reference players"] = [(ours, ref_clients), (ref, ref_clients)]
    if args.part in ("both", "stack"):
        sides["(b) full stack, random players"] = [(ours, our_clients), (ref, ref_clients)]
    tmp_dir = tempfile.TemporaryDirectory(prefix="bench_dealer_")
    if args.part == "floor":
        schedule = Path(tmp_dir.name) / "floor.schedule"
        count = write_floor_schedule(schedule, players, hands, args.seed)
        print(f"floor: {count} records of our dealer's writes for {hands} hands ({schedule.name})")
        for io in ("uvloop", "blocking"):
            null = [sys.executable, str(NULL_DEALER), str(schedule), "--io", io,
                    "--seats", str(players)]
            sides[f"(f) null dealer ({io}), reference players"] = [
                (null, ref_clients), (ref, ref_clients)]
    results: dict[str, tuple[list[Run], list[Run]]] = {k: ([], []) for k in sides}
    engine: list[EngineRun] = []
    print(f"game {GAMES[players]}, {hands} hands, {args.repeat} rounds (ours, C interleaved); "
          f"uvloop {'installed' if importlib.util.find_spec('uvloop') else 'not installed'}; "
          f"{os.cpu_count()} CPUs")
    with tmp_dir as tmp:
        for k in range(max(1, args.repeat)):
            for label, pair in sides.items():
                order = pair if k % 2 == 0 else pair[::-1]
                for cmd, clients in order:
                    side = 1 if cmd is ref else 0
                    run = run_match(cmd, players, clients, Path(tmp), env)
                    results[label][side].append(run)
                    name = "ours" if side == 0 else "C   "
                    print(f"  round {k + 1} {label[:3]} {name} {hands / run.seconds:7,.0f} "
                          f"hands/s, dealer CPU {run.cpu / hands * 1e6:4.0f} us/hand (user "
                          f"{run.user / hands * 1e6:3.0f}), clients "
                          f"{run.client_cpu / hands * 1e6:4.0f} us/hand, load "
                          f"{run.load:.2f}  ({run.score})", flush=True)
            if args.part == "engine":
                engine.append(engine_run(players, hands, args.seed + k))
                print(_engine_line(engine[-1:]).replace("  engine alone", f"  round {k + 1} "
                      "engine alone", 1), flush=True)
    load = os.getloadavg()
    print(f"\nsummary ({hands} hands per run, load now {load[0]:.2f} {load[1]:.2f} "
          f"{load[2]:.2f}):")
    for label, (mine, theirs) in results.items():
        print(label)
        print(_line("ours", mine, hands))
        print(_line("C reference", theirs, hands))
        med = statistics.median(r.seconds for r in theirs) / statistics.median(
            r.seconds for r in mine)
        per_round = sorted(t.seconds / m.seconds for m, t in zip(mine, theirs, strict=True))
        cpu = statistics.median(r.cpu for r in mine) / statistics.median(r.cpu for r in theirs)
        loads = [r.load for r in mine + theirs]
        print(f"  ratio ours/C hands/s: median {med:.2f} (per round {per_round[0]:.2f}.."
              f"{per_round[-1]:.2f}); dealer CPU ours/C {cpu:.2f}; load during "
              f"{min(loads):.2f}..{max(loads):.2f}")
    if engine:
        print("(c) our engine alone, in process (no sockets, no event loop)")
        print(_engine_line(engine))
        ref_user = statistics.median(r.user for r in results[
            "(a) dealer, reference players"][1]) / hands * 1e6
        mine_us = statistics.median(r.cpu for r in engine) / hands * 1e6
        print(f"  the reference dealer's whole user CPU: {ref_user:.0f} us/hand; engine "
              f"alone / that: {mine_us / ref_user:.1f}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=20000)
    parser.add_argument("--players", type=int, choices=sorted(GAMES), default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--client", choices=("minimal", "agent"), default="minimal")
    parser.add_argument("--repeat", type=int, default=None,
                        help="runs (rounds of both sides with --reference); default 1, 3 with "
                        "--reference")
    parser.add_argument("--profile", type=Path, default=None,
                        help="run the dealer under cProfile, write the stats here")
    parser.add_argument("--top", type=int, default=30, help="functions shown with --profile")
    parser.add_argument("--core", choices=("auto", "pure", "compiled"), default="auto",
                        help="our side on the pure Python core, the compiled one (acpc-arena "
                        "compile), or whatever the install serves")
    parser.add_argument("--dealer-path", type=Path, default=None,
                        help="run the dealer from this checkout instead (for before/after)")
    parser.add_argument("--reference", type=Path, default=None, metavar="DEALER",
                        help="the reference dealer binary: compare against it")
    parser.add_argument("--reference-player", type=Path, default=None, metavar="PLAYER",
                        help="the reference example_player binary (with --reference)")
    parser.add_argument("--part", choices=("both", "dealer", "stack", "engine", "floor"),
                        default="both",
                        help="with --reference: (a) the dealer, (b) the full stack, or both; "
                        "engine: (a) and our engine alone in process (also without "
                        "--reference); floor: (a) and a dealer without rules "
                        "(scripts/null_dealer.py), uvloop and blocking, vs the reference")
    args = parser.parse_args()
    if (args.reference is None) != (args.reference_player is None):
        parser.error("expected --reference and --reference-player together, got one of them")
    for opt in ("reference", "reference_player"):
        path = getattr(args, opt)
        if path is not None and not os.access(path, os.X_OK):
            parser.error(f"--{opt.replace('_', '-')}: expected an executable, got {str(path)!r}")
    core, args.dealer_path = choose_core(args.core, args.dealer_path)
    if core is None:
        parser.error("--core compiled: expected a compiled core in use for this checkout "
                     "(run acpc-arena compile), got none")
    print(f"our core: {core}")
    if args.reference is not None:
        if args.profile is not None:
            parser.error("expected --profile without --reference (profiling is not timing)")
        args.repeat = 3 if args.repeat is None else args.repeat
        return compare(args)
    repeat = 1 if args.repeat is None else args.repeat
    if args.part == "engine":
        runs = [engine_run(args.players, args.hands, args.seed + k) for k in range(repeat)]
        print(f"game {GAMES[args.players]}, {args.hands} hands, load "
              f"{os.getloadavg()[0]:.2f}; our engine alone, in process")
        print(_engine_line(runs))
        return 0
    uvloop = importlib.util.find_spec("uvloop") is not None
    print(f"game {GAMES[args.players]}, {args.hands} hands, {args.client} call clients, "
          f"uvloop {'installed' if uvloop else 'not installed'}")
    best = float("inf")
    game = GAMES[args.players]
    env = _env(args.dealer_path)
    with tempfile.TemporaryDirectory(prefix="bench_dealer_") as tmp:
        for _ in range(max(1, repeat)):
            profile = args.profile.resolve() if args.profile else None
            cmd = our_dealer_command(game, args.hands, args.seed, args.players, profile)
            run = run_match(cmd, args.players,
                            lambda seat, port: _client_command(args.client, game, port),
                            Path(tmp), env)
            print(f"  {run.seconds:.2f} s, {args.hands / run.seconds:,.0f} hands/s; dealer CPU "
                  f"{run.cpu:.2f} s = {run.cpu / args.hands * 1e6:.0f} us/hand (user "
                  f"{run.user / args.hands * 1e6:.0f}), load "
                  f"{run.load:.2f}  ({run.score})")
            best = min(best, run.seconds)
    print(f"best: {args.hands / best:,.0f} hands/s")
    if args.profile is not None:
        stats = pstats.Stats(str(args.profile))
        stats.sort_stats("tottime").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
