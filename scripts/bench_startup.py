"""Benchmark launch to first decision: spawn the real ``acpc-agent`` against a 127.0.0.1
listener, time from the spawn to the action line received.

A minimal in-script dealer listens on 127.0.0.1, reads the agent's version line, sends one
MATCHSTATE where the agent is to act (hand 0, the first decision of the game's first
position to act, fixed hole cards) and waits for the action line; then it closes the
connection and the agent exits (not timed). Runs are interleaved (warm agent, then the C
reference player when ``--reference-player`` is given, and so on), each figure printed as
min / median / max with the load average (``os.getloadavg``) before and after.

* **warm**: numba's cache and acpc-arena's caches (the abstract tree, verified files) as
  this install has them; one untimed run first fills them.
* **cold** (``--cold-runs N``): ``NUMBA_CACHE_DIR`` and ``ACPC_ARENA_CACHE`` pointed at a
  fresh empty directory for each run: numba compiles, the tree is built, the file verified.
* **baseline** (``--baseline DIR``): the same agent command run from another source tree
  (e.g. ``git archive`` of an older commit unpacked in DIR; ``python -m agent.cli`` with
  ``PYTHONPATH=DIR``), interleaved with the warm runs: before / after in one run.
* **floor**: ``python -c "import asyncio, numpy, msgpack"`` spawned the same way (to its
  exit): the interpreter and the imports an agent playing a file cannot do without, under
  the same load.
* **reference** (``--reference-player PATH``): the C example player of the ACPC reference
  (``example_player GAME HOST PORT``) launched the same way with ``--reference-game``
  (default: the bundled game file); the ratio agent / reference is printed.

    .venv/bin/python scripts/bench_startup.py
    .venv/bin/python scripts/bench_startup.py --runs 9 --cold-runs 1 \\
        --reference-player /work/shared/acpc-reference/bin/example_player
    .venv/bin/python scripts/bench_startup.py --strategy builtin:random --runs 5

Imports only the stdlib and :mod:`agent.acpc` (the benchmark itself must not warm anything).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from agent.acpc.betting import BettingState
from agent.acpc.cards import parse_cards
from agent.acpc.gamefiles import bundled_game_path, bundled_games, load_game
from agent.acpc.matchstate import format_matchstate, view_of

GAME = "holdem.nolimit.2p.reverse_blinds.game"
STRATEGY = "holdem.nolimit.2p.strat"
AGENT = Path(sys.executable).with_name("acpc-agent")


def first_state_line(game_name: str) -> bytes:
    """The MATCHSTATE of hand 0 for the first position to act, with fixed cards."""
    game = load_game(game_name)
    state = BettingState.initial(game)
    position = state.player
    deck = parse_cards("AsKdQhJc9s8d7h6c5s4d3h2cAdKh")
    per = game.num_hole_cards
    hole = tuple(tuple(deck[p * per:(p + 1) * per]) for p in range(game.num_players))
    ms = view_of(position, 0, state, hole, ())
    return (format_matchstate(ms) + "\r\n").encode("ascii")


def one_run(command: Sequence[str], line: bytes, env: dict[str, str] | None,
            timeout: float, cwd: Path | None = None) -> float:
    """Seconds from spawning ``command`` (``HOST`` and ``PORT`` in it replaced) to its
    action line."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        start = time.perf_counter()
        argv = [{"HOST": "127.0.0.1", "PORT": str(port)}.get(a, a) for a in command]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, cwd=cwd)
        try:
            while True:
                try:
                    conn, _ = listener.accept()
                    break
                except TimeoutError:
                    if proc.poll() is not None:
                        raise RuntimeError(f"{command[0]} exited ({proc.returncode}) before "
                                           f"connecting") from None
                    if time.perf_counter() - start > timeout:
                        raise
            with conn:
                conn.settimeout(timeout)
                buf = b""
                while b"\n" not in buf:  # the version line
                    chunk = conn.recv(4096)
                    if not chunk:
                        raise RuntimeError("the player closed before its version line")
                    buf += chunk
                conn.sendall(line)
                buf = buf.split(b"\n", 1)[1]
                while b"\n" not in buf:  # the action line
                    chunk = conn.recv(4096)
                    if not chunk:
                        raise RuntimeError("the player closed before answering")
                    buf += chunk
                elapsed = time.perf_counter() - start
                if not buf.startswith(b"MATCHSTATE"):
                    raise RuntimeError(f"expected an action line, got {buf!r}")
            _, err = proc.communicate(timeout=timeout)
        except BaseException:
            proc.kill()
            _, err = proc.communicate()
            sys.stderr.write(err.decode(errors="replace")[-2000:])
            raise
    return elapsed


def describe(name: str, values: list[float]) -> str:
    ms = [v * 1e3 for v in values]
    return (f"{name}: n={len(ms)} min {min(ms):.1f} ms, median {statistics.median(ms):.1f} ms, "
            f"max {max(ms):.1f} ms")


def load_text() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default=GAME, help=f"game (default {GAME})")
    parser.add_argument("--strategy", default=STRATEGY,
                        help=f"the agent's --strategy (default {STRATEGY})")
    parser.add_argument("--runs", type=int, default=7, help="warm runs (default 7)")
    parser.add_argument("--cold-runs", type=int, default=0,
                        help="runs with empty numba and acpc-arena caches (default 0)")
    parser.add_argument("--reference-player", type=Path, default=None,
                        help="the ACPC reference example_player, launched the same way")
    parser.add_argument("--reference-game", type=Path, default=None,
                        help="game file for the reference player (default: the bundled one)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a source tree of another version of acpc-arena to time the "
                        "same way (python -m agent.cli with PYTHONPATH=DIR)")
    parser.add_argument("--agent-arg", action="append", default=[],
                        help="one more argument for acpc-agent (repeatable)")
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args()
    line = first_state_line(args.game)
    agent = [str(AGENT), args.game, "HOST", "PORT", "--strategy", args.strategy, "--quiet",
             *args.agent_arg]
    reference = None
    if args.reference_player is not None:
        game_file = args.reference_game or (
            bundled_game_path(args.game) if args.game in bundled_games() else Path(args.game))
        reference = [str(args.reference_player), str(game_file), "HOST", "PORT"]
    print(f"first state sent: {line.decode().strip()}")
    print(f"agent: {' '.join(agent)}")
    print(f"before: {load_text()}")
    one_run(agent, line, None, args.timeout)  # fills the caches this install keeps
    base_env = None
    base_cmd = [sys.executable, "-m", "agent.cli", *agent[1:]]
    if args.baseline is not None:
        base_env = dict(os.environ, PYTHONPATH=str(args.baseline.resolve()))
        one_run(base_cmd, line, base_env, args.timeout * 5, args.baseline)  # its numba cache
    warm: list[float] = []
    ref: list[float] = []
    floor: list[float] = []
    base: list[float] = []
    for _ in range(args.runs):
        warm.append(one_run(agent, line, None, args.timeout))
        if base_env is not None:
            base.append(one_run(base_cmd, line, base_env, args.timeout, args.baseline))
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import asyncio, numpy, msgpack"], check=True)
        floor.append(time.perf_counter() - start)
        if reference is not None:
            ref.append(one_run(reference, line, None, args.timeout))
    cold: list[float] = []
    for _ in range(args.cold_runs):
        tmp = Path(tempfile.mkdtemp(prefix="bench_startup_"))
        try:
            env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp / "numba"),
                       ACPC_ARENA_CACHE=str(tmp / "acpc"))
            cold.append(one_run(agent, line, env, args.timeout))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(describe("launch -> first decision, warm", warm))
    if base:
        print(describe(f"baseline {args.baseline}", base))
        print(f"ratio baseline / warm (medians): "
              f"{statistics.median(base) / statistics.median(warm):.1f}")
    print(describe("floor: python -c 'import asyncio, numpy, msgpack'", floor))
    if cold:
        print(describe("launch -> first decision, cold (empty caches)", cold))
    if ref:
        print(describe("reference example_player", ref))
        print(f"ratio agent / reference (medians): "
              f"{statistics.median(warm) / statistics.median(ref):.1f}")
    print(f"after: {load_text()}")


if __name__ == "__main__":
    main()
