"""Play one match of a run: over loopback TCP with real processes, or in-process.

``tcp`` (the default) is the real thing, as the reference ``play_match.pl`` does it:
``acpc-dealer`` (``python -m dealer.cli ... -q``) in a subprocess, then one process per
seat connecting to the port the dealer printed: ``acpc-agent`` for strategy files,
built-ins and bots (``module:Class``, run in the variant's base directory), and an
external command with ``127.0.0.1 PORT`` appended. Agents run in their own sessions
(process groups), so a shell script's children are stopped with it.

``inproc`` runs the same pure engine (:class:`dealer.engine.Match`) against the same
agent code (:class:`agent.acpc.protocol.ClientConnection` and the same policies, built by
:func:`agent.agents.make_policy` with the same seeds) and moves the bytes directly, with a
fake clock by default: for the same seeds the log is byte-identical to the TCP one.

Failures are attributed to a variant where possible (``variant 'x' (seat 2): ...``): the
dealer's ERROR line names the seat, an agent that exits with an error status during the
match is caught at once (its last output lines are quoted), an agent that never connects
is reported after ``start_timeout``. Every wait is bounded by ``match_timeout``.

The worker writes nothing but temporary files: the log text comes back in the
:class:`MatchOutcome`, and the caller stores it. :func:`run_job_json` takes and returns
JSON text, so the process pool and Ray move only strings (never pickled objects of ours).
A pool worker watches its parent (:func:`init_worker`) and exits, stopping its child
processes, if the runner is killed.

Imports the stdlib and :mod:`dealer`; the agent's policy code only inside
:func:`~evaluation.match.variants.make_seat_policy` (in-process matches).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from agent.acpc.betting import Action
from agent.acpc.errors import AcpcError, UsageError
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import MatchState
from agent.acpc.protocol import NEED_DATA, ClientConnection, StateReceived
from agent.fileio import cache_dir
from dealer.engine import Match, MatchConfig, Phase
from dealer.logfile import DEFAULT_T_HAND_MS, DEFAULT_T_PER_HAND_MS
from evaluation.match.schedule import MatchJob
from evaluation.match.variants import Variant, make_seat_policy

HOST = "127.0.0.1"
PORTS_TIMEOUT_S = 30.0
"""How long the dealer may take to print its ports line."""
AGENT_EXIT_GRACE_S = 5.0
"""How long agents may take to exit after the dealer has finished."""
POLL_S = 0.05
TAIL_LINES = 3
TIME_GUARD_MS = 1000.0
"""The agents' time guard (``acpc-agent --time-guard-ms``, its default): a decision slower
than this checks or calls (:mod:`agent.policy`). Every such decision is counted
(:attr:`MatchOutcome.time_guard`): a result that depends on timing. In-process matches on
the fake clock have no guard (no time limit bites there)."""


@dataclass(frozen=True, slots=True)
class MatchSettings:
    """How every match of a run is played (shared by all jobs)."""

    game_spec: str
    """The game as given to the dealer and the agents (a bundled name or an absolute path)."""
    transport: str = "tcp"
    t_response_ms: int = 10_000
    t_hand_ms: int = DEFAULT_T_HAND_MS
    t_per_hand_ms: int = DEFAULT_T_PER_HAND_MS
    start_timeout_ms: int = 30_000
    match_timeout_s: float = 3600.0
    inproc_clock: str = "fake"
    allin: bool = False
    allin_method: str = "auto"

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict."""
        return {
            "game_spec": self.game_spec,
            "transport": self.transport,
            "t_response_ms": self.t_response_ms,
            "t_hand_ms": self.t_hand_ms,
            "t_per_hand_ms": self.t_per_hand_ms,
            "start_timeout_ms": self.start_timeout_ms,
            "match_timeout_s": self.match_timeout_s,
            "inproc_clock": self.inproc_clock,
            "allin": self.allin,
            "allin_method": self.allin_method,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatchSettings:
        """The inverse of :meth:`to_json`."""
        return cls(**data)


@dataclass
class MatchOutcome:
    """What one match produced: the log and values, or an error (naming a variant)."""

    match_id: str
    ok: bool
    error: str = ""
    variant: str | None = None
    """The variant blamed for the error, if one is."""
    log_text: str = ""
    values: list[list[float]] = field(default_factory=list)
    """Chips won per hand, by seat."""
    allin_values: list[list[float]] | None = None
    """The same with all-in hands at their expectation (if requested)."""
    seconds: float = 0.0
    transport: str = ""
    time_guard: list[int | None] = field(default_factory=list)
    """By seat: the decisions that fell back on the agent's time guard (0 for built-ins,
    None when unknown: an external command, or an agent that wrote no counters)."""

    @property
    def hands(self) -> int:
        """Hands played."""
        return len(self.values)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict."""
        return {
            "match_id": self.match_id,
            "ok": self.ok,
            "error": self.error,
            "variant": self.variant,
            "log_text": self.log_text,
            "values": self.values,
            "allin_values": self.allin_values,
            "seconds": self.seconds,
            "transport": self.transport,
            "time_guard": self.time_guard,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MatchOutcome:
        """The inverse of :meth:`to_json`."""
        return cls(**data)


class MatchFailure(AcpcError, RuntimeError):
    """A match could not be completed; ``variant`` is the one to blame, if known."""

    def __init__(self, message: str, variant: str | None = None) -> None:
        super().__init__(message)
        self.variant = variant


# ---------------------------------------------------------------------- log -> values


def values_by_seat(log_text: str, seats: Sequence[str]) -> list[list[float]]:
    """Chips won per hand by seat, from a log's ``STATE`` lines (names must be unique).

    Raises:
        ValueError: if a line names a player that is not seated.
    """
    index = {name: s for s, name in enumerate(seats)}
    out: list[list[float]] = []
    for line in log_text.splitlines():
        if not line.startswith("STATE:"):
            continue
        parts = line.split(":")
        values = parts[4].split("|")
        names = parts[5].split("|")
        row = [0.0] * len(seats)
        for name, value in zip(names, values, strict=True):
            row[index[name]] = float(value)
        out.append(row)
    return out


def allin_values_by_seat(
    log_text: str, seats: Sequence[str], game: Game, method: str = "auto"
) -> list[list[float]]:
    """Like :func:`values_by_seat`, with all-in hands at their expectation."""
    from evaluation.estimators.allin import AllinEvaluator, parse_state_line

    evaluator = AllinEvaluator(game, method)
    index = {name: s for s, name in enumerate(seats)}
    out: list[list[float]] = []
    for line in log_text.splitlines():
        if not line.startswith("STATE:"):
            continue
        hand = parse_state_line(line, game)
        row = [0.0] * len(seats)
        for name, value in zip(hand.names, evaluator.adjusted_values(hand), strict=True):
            row[index[name]] = value
        out.append(row)
    return out


# ---------------------------------------------------------------------- child processes

_CHILDREN: set[int] = set()
"""Process-group ids of the children this worker has started (for the parent watch)."""
_TMPDIRS: set[str] = set()
"""Temporary directories of the matches in progress (removed if the worker is stopped)."""
_CHILDREN_LOCK = threading.Lock()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _watch_parent(parent: int) -> None:
    """Exit (stopping our children) once the runner that started us is gone.

    The loop ends with the process: it returns only by ``os._exit``.
    """
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            _stop_children_and_exit()


def _stop_children_and_exit(signum: int = 0, frame: object = None) -> None:
    """Kill every child process group and leave at once (SIGTERM, or orphaned)."""
    with _CHILDREN_LOCK:
        for pid in list(_CHILDREN):
            _kill_group(pid)
        for path in list(_TMPDIRS):
            shutil.rmtree(path, ignore_errors=True)
    os._exit(1)


def init_worker(parent: int) -> None:
    """Process-pool initializer: watch the parent, stop children on SIGTERM, leave Ctrl-C
    to the runner (which terminates the workers)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_children_and_exit)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _spawn(
    cmd: Sequence[str], cwd: str | None, out: IO[bytes], *, stdout: int | IO[bytes] | None = None
) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        list(cmd), cwd=cwd, stdin=subprocess.DEVNULL,
        stdout=out if stdout is None else stdout, stderr=out, start_new_session=True,
    )
    with _CHILDREN_LOCK:
        _CHILDREN.add(proc.pid)
    return proc


def _reap(proc: subprocess.Popen[bytes], grace: float) -> int:
    """Wait up to ``grace`` seconds, then kill the process group; return the status."""
    try:
        rc = proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        rc = proc.wait()
    else:
        _kill_group(proc.pid)  # children a script left behind
    with _CHILDREN_LOCK:
        _CHILDREN.discard(proc.pid)
    return rc


def _tail(path: Path, lines: int = TAIL_LINES) -> str:
    try:
        text = path.read_bytes()[-4000:].decode("utf-8", "replace")
    except OSError:
        return ""
    kept = [x.strip() for x in text.splitlines() if x.strip()][-lines:]
    return " | ".join(kept)


def _read_line(proc: subprocess.Popen[bytes], timeout: float) -> bytes:
    """The first line of ``proc``'s stdout, waiting at most ``timeout`` seconds."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buf = b""
    deadline = time.monotonic() + timeout
    for _ in range(100_000):
        left = deadline - time.monotonic()
        if left <= 0 or b"\n" in buf:
            break
        ready, _, _ = select.select([fd], [], [], min(left, 0.5))
        if not ready:
            continue
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        buf += chunk
    return buf


def agent_command(
    variant: Variant, settings: MatchSettings, seed: int, port: int,
    stats: Path | None = None,
) -> tuple[list[str], str | None]:
    """The command line and working directory of one seat's agent. ``acpc-agent`` loads
    its kernels before connecting (``--preload``: no decision waits for a load) and writes
    its counters to ``stats`` (``--stats``) if given."""
    kind = variant.kind
    if kind == "cmd":
        return [*variant.cmd, HOST, str(port)], variant.cwd
    assert variant.strategy is not None
    cmd = [sys.executable, "-m", "agent.cli", settings.game_spec, HOST, str(port),
           "--strategy", variant.strategy, "--seed", str(seed), "--quiet",
           "--time-guard-ms", f"{TIME_GUARD_MS:g}"]
    if kind == "file":
        cmd.append("--preload")
    if stats is not None:
        cmd += ["--stats", str(stats)]
    if variant.mapping:
        cmd += ["--mappings", variant.mapping]
    if variant.purify:
        cmd += ["--purify", variant.purify]
    if variant.sizes:
        cmd += ["--sizes-in", variant.sizes]
    cmd += variant.exploit_flags()
    return cmd, variant.cwd if kind == "bot" else None  # a bot imports from its base


_SEAT = re.compile(r"\bseat (\d+)\b")


def _blame(text: str, seats: Sequence[str]) -> tuple[int | None, str | None]:
    m = _SEAT.search(text)
    if m is None:
        return None, None
    seat = int(m.group(1)) - 1
    return (seat, seats[seat]) if 0 <= seat < len(seats) else (None, None)


def play_tcp(
    job: MatchJob, variants: dict[str, Variant], settings: MatchSettings
) -> tuple[str, list[int | None]]:
    """Play one match through ``acpc-dealer`` and agent processes; return the log text
    and each seat's time-guard count (:func:`_read_time_guard`).

    Raises:
        MatchFailure: naming the variant to blame where possible.
    """
    n = len(job.seats)
    with tempfile.TemporaryDirectory(prefix="acpc-match-") as tmp_name:
        with _CHILDREN_LOCK:
            _TMPDIRS.add(tmp_name)
        tmp = Path(tmp_name)
        dealer_err_path = tmp / "dealer.stderr"
        dealer_cmd = [
            sys.executable, "-m", "dealer.cli", job.match_name, settings.game_spec,
            str(job.hands), str(job.deal_seed), *job.seats, "-q",
            "--log-dir", str(tmp),
            "--start_timeout", str(settings.start_timeout_ms),
            "--t_response", str(settings.t_response_ms),
            "--t_hand", str(settings.t_hand_ms),
            "--t_per_hand", str(settings.t_per_hand_ms),
        ]
        agents: list[subprocess.Popen[bytes]] = []
        agent_logs = [tmp / f"seat{s + 1}.out" for s in range(n)]
        agent_stats = [tmp / f"seat{s + 1}.stats.json" for s in range(n)]
        with open(dealer_err_path, "wb") as dealer_err:
            dealer = _spawn(dealer_cmd, None, dealer_err, stdout=subprocess.PIPE)
        try:
            first = _read_line(dealer, PORTS_TIMEOUT_S)
            try:
                ports = [int(p) for p in first.split()]
            except ValueError:
                ports = []
            if len(ports) != n:
                _reap(dealer, 1.0)
                raise MatchFailure(
                    f"the dealer printed no ports line ({first[:100]!r}); its stderr: "
                    f"{_tail(dealer_err_path)}"
                )
            for s, name in enumerate(job.seats):
                cmd, cwd = agent_command(variants[name], settings, job.agent_seeds[s], ports[s],
                                         agent_stats[s])
                with open(agent_logs[s], "wb") as out:
                    try:
                        agents.append(_spawn(cmd, cwd, out))
                    except OSError as exc:
                        raise MatchFailure(
                            f"variant {name!r} (seat {s + 1}): could not start "
                            f"{cmd[0]!r}: {exc.strerror or exc}", name,
                        ) from None
            _wait_match(job, dealer, agents, agent_logs, settings)
            rc = dealer.returncode
            for proc in agents:  # after a failure the agents may never finish by themselves
                _reap(proc, AGENT_EXIT_GRACE_S if rc == 0 else 0.2)
            if rc != 0:
                err = dealer_err_path.read_text("latin-1", "replace")
                errors = [x for x in err.splitlines() if x.startswith("ERROR")]
                line = errors[0] if errors else (err.strip().splitlines() or ["no output"])[-1]
                seat, blamed = _blame(line, job.seats)
                if seat is None or blamed is None:
                    raise MatchFailure(f"the dealer failed (exit {rc}): {line}")
                detail = line.removeprefix("ERROR: ")
                if "timed out waiting for seat" in line:
                    detail = (f"never connected within {settings.start_timeout_ms / 1000:g} s "
                              f"({detail})")
                status = agents[seat].returncode
                tail = _tail(agent_logs[seat])
                extra = f"; agent exit status {status}" if status and status > 0 else ""
                extra += f"; its last output: {tail}" if tail else ""
                raise MatchFailure(
                    f"variant {blamed!r} (seat {seat + 1}): {detail}{extra}", blamed
                )
            log_path = tmp / f"{job.match_name}.log"
            try:
                log_text = log_path.read_text(encoding="ascii")
            except OSError as exc:
                raise MatchFailure(f"the dealer wrote no log {log_path.name}: {exc}") from None
            guard = [None if variants[name].kind == "cmd" else _read_time_guard(agent_stats[s])
                     for s, name in enumerate(job.seats)]
            return log_text, guard
        finally:
            for proc in [dealer, *agents]:
                if proc.poll() is None:
                    _kill_group(proc.pid)
                    proc.wait()
                with _CHILDREN_LOCK:
                    _CHILDREN.discard(proc.pid)
            if dealer.stdout is not None:
                dealer.stdout.close()
            with _CHILDREN_LOCK:
                _TMPDIRS.discard(tmp_name)


def _read_time_guard(path: Path) -> int | None:
    """The time-guard count in an agent's ``--stats`` file (``timeouts``; 0 for a
    built-in, which has no guard), or None if the file is missing or not such a count."""
    try:
        if path.stat().st_size > 4096:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    count = data.get("timeouts", 0) if isinstance(data, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) else None


def _wait_match(
    job: MatchJob,
    dealer: subprocess.Popen[bytes],
    agents: Sequence[subprocess.Popen[bytes]],
    agent_logs: Sequence[Path],
    settings: MatchSettings,
) -> None:
    """Wait for the dealer; fail at once if an agent dies with an error status.

    Raises:
        MatchFailure: an agent failed, or the match took longer than ``match_timeout_s``.
    """
    deadline = time.monotonic() + settings.match_timeout_s
    for _ in range(int(settings.match_timeout_s / POLL_S) + 100):
        try:
            dealer.wait(timeout=POLL_S)
        except subprocess.TimeoutExpired:
            pass
        else:
            return
        for s, proc in enumerate(agents):
            rc = proc.poll()
            if rc:
                name = job.seats[s]
                time.sleep(POLL_S)  # let the dealer finish first if it is about to
                if dealer.poll() is not None:
                    return
                _kill_group(dealer.pid)
                dealer.wait()
                tail = _tail(agent_logs[s])
                raise MatchFailure(
                    f"variant {name!r} (seat {s + 1}): the agent exited with status {rc} "
                    f"during the match" + (f"; its last output: {tail}" if tail else ""),
                    name,
                )
        if time.monotonic() > deadline:
            break
    _kill_group(dealer.pid)
    dealer.wait()
    raise MatchFailure(f"the match did not finish within {settings.match_timeout_s:g} s")


# ---------------------------------------------------------------------- in-process


class FakeClock:
    """A clock for in-process matches: one microsecond per reading, from a fixed start."""

    def __init__(self, start_us: int = 1_000_000_000_000_000) -> None:
        self.now = start_us

    def __call__(self) -> int:
        self.now += 1
        return self.now


def play_inproc(
    job: MatchJob, variants: dict[str, Variant], settings: MatchSettings, game: Game
) -> tuple[str, list[int | None]]:
    """Play one match with the engine and the agents' code in this process; return the log
    and each seat's time-guard count. The policies get the time guard only on the real
    clock (``inproc_clock="real"``): on the fake one no time limit bites.

    Raises:
        MatchFailure: naming the variant whose policy failed, or the engine's error.
    """
    policies: list[Any] = []
    guard = TIME_GUARD_MS / 1000.0 if settings.inproc_clock == "real" else None
    for s, name in enumerate(job.seats):
        try:
            policies.append(make_seat_policy(variants[name], game, job.agent_seeds[s], guard))
        except Exception as exc:
            raise MatchFailure(
                f"variant {name!r} (seat {s + 1}): {type(exc).__name__}: {exc}", name
            ) from None
    config = MatchConfig(
        match_name=job.match_name, game_file=settings.game_spec, game=game,
        num_hands=job.hands, seed=job.deal_seed, seat_names=tuple(job.seats), quiet=True,
        t_response_ms=settings.t_response_ms, t_hand_ms=settings.t_hand_ms,
        t_per_hand_ms=settings.t_per_hand_ms,
    )
    clock: Callable[[], int] = (
        FakeClock() if settings.inproc_clock == "fake" else (lambda: time.time_ns() // 1000)
    )
    match = Match(config, clock)
    match.begin()
    clients = [ClientConnection(game) for _ in job.seats]
    for s, client in enumerate(clients):
        match.receive(s, client.initiate())
    match.connected()
    log: list[str] = []
    stderr: list[str] = []
    acts: list[Callable[[MatchState], Action]] = [p.act for p in policies]
    # told every finished hand, as the live client does (agent.client): an exploiting
    # policy learns from it
    hand_overs: list[Callable[[MatchState], None] | None] = [
        getattr(p, "hand_over", None) for p in policies]
    steps = job.hands * (game.num_rounds * 64 * game.num_players + 8) + 16
    for _ in range(steps):
        out = match.drain()
        log.extend(out.log)
        stderr.extend(out.stderr)
        if match.phase is Phase.DONE:
            break
        if not out.to_seat:
            raise MatchFailure("the in-process match stalled (no state to send)")
        for dest, data in out.to_seat:
            clients[dest].receive_data(data)
        for s, client in enumerate(clients):
            for _ in range(1 << 20):
                event = client.next_event()
                if event is NEED_DATA:
                    break
                if not isinstance(event, StateReceived):
                    continue
                over = hand_overs[s]
                reply = None
                try:
                    if client.is_to_act:
                        reply = client.send_action(acts[s](event.state))
                    elif over is not None and event.state.state.finished:
                        over(event.state)
                except Exception as exc:
                    name = job.seats[s]
                    raise MatchFailure(
                        f"variant {name!r} (seat {s + 1}): {type(exc).__name__}: {exc}",
                        name,
                    ) from None
                if reply is not None:
                    match.receive(s, reply)
    else:
        raise MatchFailure(f"the in-process match did not end within {steps} steps")
    if match.exit_status != 0:
        text = "".join(stderr)
        line = next((x for x in text.splitlines() if x.startswith("ERROR")), text.strip())
        seat, blamed = _blame(line, job.seats)
        raise MatchFailure(
            f"variant {blamed!r} (seat {seat + 1}): {line}" if seat is not None else line,
            blamed,
        )
    counts = [getattr(getattr(p, "stats", None), "timeouts", 0) for p in policies]
    return "".join(log), counts


# ---------------------------------------------------------------------- entry points

_GAMES: dict[str, Game] = {}


def _game(spec: str) -> Game:
    game = _GAMES.get(spec)
    if game is None:
        game = _GAMES[spec] = load_game(spec)
    return game


def run_job(
    job: MatchJob, variants: dict[str, Variant], settings: MatchSettings
) -> MatchOutcome:
    """Play one job and turn whatever happens into a :class:`MatchOutcome`."""
    start = time.perf_counter()
    try:
        game = _game(settings.game_spec)
        if settings.transport == "inproc":
            log_text, guard = play_inproc(job, variants, settings, game)
        else:
            log_text, guard = play_tcp(job, variants, settings)
        values = values_by_seat(log_text, job.seats)
        if len(values) != job.hands:
            raise MatchFailure(f"expected {job.hands} hands in the log, got {len(values)}")
        allin = (
            allin_values_by_seat(log_text, job.seats, game, settings.allin_method)
            if settings.allin else None
        )
    except MatchFailure as exc:
        return MatchOutcome(job.match_id, False, str(exc), exc.variant,
                            seconds=time.perf_counter() - start, transport=settings.transport)
    except Exception as exc:  # a bug or an environment problem: report, do not kill the run
        return MatchOutcome(job.match_id, False, f"{type(exc).__name__}: {exc}",
                            seconds=time.perf_counter() - start, transport=settings.transport)
    return MatchOutcome(
        job.match_id, True, log_text=log_text, values=values, allin_values=allin,
        seconds=time.perf_counter() - start, transport=settings.transport, time_guard=guard,
    )


def run_job_json(payload: str) -> str:
    """:func:`run_job` on JSON text (``job``, ``variants``, ``settings``); JSON back."""
    data = json.loads(payload)
    job = MatchJob.from_json(data["job"])
    variants = {v["name"]: Variant.from_json(v) for v in data["variants"]}
    settings = MatchSettings.from_json(data["settings"])
    return json.dumps(run_job(job, variants, settings).to_json())


def job_payload(job: MatchJob, variants: dict[str, Variant], settings: MatchSettings) -> str:
    """The JSON text :func:`run_job_json` takes for ``job``."""
    return json.dumps({
        "job": job.to_json(),
        "variants": [variants[name].to_json() for name in sorted(set(job.seats))],
        "settings": settings.to_json(),
    })


# --------------------------------------------------------------------------- shipped files


def file_cache_dir() -> Path:
    """Where a worker keeps strategy files shipped to it: ``shipped/`` in the project's
    cache directory (:func:`agent.fileio.cache_dir`)."""
    return cache_dir() / "shipped"


def receive_file(sha256: str, data: bytes, directory: Path | None = None) -> Path:
    """Keep shipped file bytes under their sha256 (checked) and return the local path.

    Raises:
        UsageError: if the bytes do not have that sha256 (a corrupt transfer).
    """
    got = hashlib.sha256(data).hexdigest()
    if got != sha256:
        raise UsageError(f"expected shipped file bytes with sha256 {sha256}, got {got}")
    folder = directory or file_cache_dir()
    target = folder / f"{sha256}.strat"

    def whole() -> bool:
        return target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == sha256

    if not whole():
        folder.mkdir(parents=True, exist_ok=True)
        part = folder / f"{sha256}.{os.getpid()}.part"
        part.write_bytes(data)
        try:
            # a link never replaces the file another worker of this node may be reading
            # (a replace did: its loader saw the file change under it)
            os.link(part, target)
        except FileExistsError:
            if not whole():  # a damaged copy: nobody can be using it
                os.replace(part, target)
        finally:
            part.unlink(missing_ok=True)
    return target


def run_shipped_job_json(payload: str, shipped: str, *blobs: bytes) -> str:
    """:func:`run_job_json` on a node that may not share the driver's file system.

    ``shipped`` is JSON ``[[path, sha256], ...]`` and ``blobs`` the files' bytes in that
    order (Ray hands them over from its object store): each is kept under its sha256
    (:func:`receive_file`) and the variants' strategy paths point there instead.
    """
    names = json.loads(shipped)
    local = {path: str(receive_file(sha, blob)) for (path, sha), blob in
             zip(names, blobs, strict=True)}
    data = json.loads(payload)
    for v in data["variants"]:
        if v.get("strategy") in local:
            v["strategy"] = local[v["strategy"]]
    return run_job_json(json.dumps(data))
