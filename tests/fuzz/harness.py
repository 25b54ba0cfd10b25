"""The oracle and the runner: every mutant through its command's ``main(argv)`` in a worker
process with a memory cap, one verdict per mutant.

Verdicts (:func:`classify`): **ACCEPTED** (exit 0); **REJECTED** (exit 1 or 2 with exactly one
``prog: error: ...`` line on stderr and no traceback; for ``acpc-log verify`` also its
documented mismatch report); anything else is a **FAILURE**, with a cause to group by: an
exception escaping ``main`` (its type and the innermost project frame), a traceback printed,
no or several error lines, an exit status outside 0-2, a hang past the per-mutant limit
(``signal.setitimer`` in the worker; the parent kills a worker that does not answer within
the limit plus :data:`GRACE`), memory (``MemoryError`` under the worker's ``RLIMIT_AS``, or a
worker that died), or an error line longer than :data:`MAX_ERROR_LINE` characters (a message
echoing its whole input). Data must not name code: a mutant whose header's
``default_mapping`` names a module function (``attack:mapping-*``) that is accepted, or any
run that imports :data:`CODE_MODULE`, is a FAILURE too.

Memory: the worker sets ``RLIMIT_AS`` (address space, not RSS: numba's LLVM and the thread
stacks reserve address space they never touch, so the cap is the measured baseline of a
worker that has run every seed, :data:`BASELINE_AS`, plus a margin, :data:`DEFAULT_MEMORY`).
An allocation past it raises ``MemoryError`` (or kills the worker in native code); both are
FAILUREs. Polling RSS instead would miss a short spike between two polls.

The worker (``python -m tests.fuzz.harness CONFIG.json``) writes one JSON line per seed (the
unmutated seeds run first: imports, numba loading and each command's first call happen
there, outside the per-mutant limit) and per mutant on a private copy of its stdout; file
descriptors 1 and 2 of the commands go to ``/dev/null`` and a file the parent reads when a
worker dies. A worker that dies or hangs is restarted after the mutant that caused it.
"""

from __future__ import annotations

import contextlib
import faulthandler
import importlib
import io
import json
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tests.fuzz.formats import ENTRIES, FORMATS, ROOT, Seed, build_seeds, make_mutant, mutant_id
from tests.support.numba_lock import share_compilations_if_asked

ACCEPTED, REJECTED, FAILURE = "ACCEPTED", "REJECTED", "FAILURE"
GB = 1 << 30
BASELINE_AS = 0.7 * GB
"""Address space of a worker after every seed ran once (measured: 0.69 GB, ``VmPeak``;
the report gives it, ``worker_baseline_vm_peak_kb``)."""
DEFAULT_MEMORY = 3 * GB
"""The worker's ``RLIMIT_AS``: the baseline plus a margin of 2.3 GB for one mutant (the
issue's 2.3 kB strategy file that builds a tree to 2.6 GB is caught)."""
DEFAULT_LIMIT = 10.0
"""Seconds per mutant."""
GRACE = 20.0
"""Seconds past the limit before the parent kills a worker that does not answer (the
alarm cannot interrupt native code)."""
WARM_TIMEOUT = 900.0
"""Seconds for a worker's start and its seeds (numba may compile kernels the first time)."""
MAX_ERROR_LINE = 1000
"""An error line longer than this echoes its input: a FAILURE (the standard is an excerpt
of ~80 characters)."""

_ERROR_LINE = re.compile(r"^acpc-[\w-]+(?: [\w-]+)?: error: ")
_MISMATCH = re.compile(r"^\S+:\d+: ")
_PROJECT = ("agent", "dealer", "jobs", "strategies", "evaluation")


CODE_MODULE = "this"
"""The module the ``mapping-this`` attack names (importing it prints): imported during a run,
it shows a file made the command run code."""


class Hang(BaseException):
    """Raised by the per-mutant alarm."""


@dataclass
class Outcome:
    id: str
    format: str
    seed: str
    mutation: str
    verdict: str
    cause: str = ""
    detail: str = ""
    exit: int | None = None
    seconds: float = 0.0


def _where(exc: BaseException) -> str:
    """The innermost frame of the project's own code in ``exc``'s traceback."""
    found = "?"
    for frame in traceback.extract_tb(exc.__traceback__):
        rel = os.path.relpath(frame.filename, ROOT)
        if rel.split(os.sep)[0] in _PROJECT:
            found = f"{rel}:{frame.name}"
    return found


def classify(code: int | None, exc: BaseException | None, stderr: str, seed: Seed,
             limit: float) -> tuple[str, str, str]:
    """``(verdict, cause, detail)`` of one run (module docstring)."""
    if isinstance(exc, Hang):
        return FAILURE, f"hang past {limit:g} s", ""
    if exc is not None:
        return FAILURE, f"{type(exc).__name__} at {_where(exc)}", str(exc)[:200]
    if "Traceback (most recent call last)" in stderr:
        last = [line for line in stderr.splitlines() if line and not line.startswith(" ")]
        return FAILURE, "traceback printed: " + (last[-1][:80] if last else "?"), ""
    if code == 0:
        return ACCEPTED, "", ""
    if code not in (1, 2):
        return FAILURE, f"exit status {code!r}", stderr[-200:]
    errors = [line for line in stderr.splitlines() if _ERROR_LINE.match(line)]
    if not errors and seed.mismatch_ok and code == 1 and _MISMATCH.match(stderr):
        longest = max(stderr.splitlines(), key=len)
        if len(longest) > MAX_ERROR_LINE:
            return (FAILURE, f"mismatch report line longer than {MAX_ERROR_LINE} characters",
                    f"{len(longest)} characters: {longest[:200]}")
        return REJECTED, "", stderr.splitlines()[0][:200]
    if len(errors) != 1:
        return FAILURE, f"{len(errors)} error lines (exit {code})", stderr[-300:]
    if len(errors[0]) > MAX_ERROR_LINE:
        return (FAILURE, f"error line longer than {MAX_ERROR_LINE} characters",
                f"{len(errors[0])} characters: {errors[0][:200]}")
    return REJECTED, "", errors[0][:300]


# --------------------------------------------------------------------------- worker side


def _entry(command: str) -> Callable[[list[str]], int]:
    module, _, name = ENTRIES[command].partition(":")
    func: Callable[[list[str]], int] = getattr(importlib.import_module(module), name)
    return func


def agent_start(argv: list[str]) -> int:
    """``acpc-agent GAME HOST PORT --strategy FILE`` up to its match: the real ``main``
    (game and strategy file read, kernels loaded, errors printed as it prints them) with the
    match itself (``agent.cli.run``) replaced by nothing, so no dealer is needed."""
    from unittest import mock

    import agent.cli

    def no_match(main: Any, loop: str = "auto") -> str:
        main.close()
        return "no match (fuzz)"

    with mock.patch.object(agent.cli, "run", no_match):
        return agent.cli.main(argv)


def _on_alarm(signum: int, frame: Any) -> None:
    raise Hang


def run_one(seed: Seed, data: bytes, seeds_dir: Path, work: Path, limit: float,
            mutation: str = "none") -> tuple[str, str, str, int | None, str, str]:
    """Run ``seed``'s command on ``data``: ``(verdict, cause, detail, exit, stdout,
    stderr)``. ``work`` is emptied first. A mutant whose header names code
    (``attack:mapping-*``) must be rejected, and without importing that code."""
    sys.modules.pop(CODE_MODULE, None)
    shutil.rmtree(work, ignore_errors=True)
    out = work / "out"
    out.mkdir(parents=True)
    path = work / seed.file
    path.write_bytes(data)
    text = data.decode("utf-8", "replace").replace("\0", "")
    argv = [a.replace("{file}", str(path)).replace("{out}", str(out))
            .replace("{seeds}", str(seeds_dir)).replace("{text}", text) for a in seed.argv]
    stdout, stderr = io.StringIO(), io.StringIO()
    code: int | None = None
    exc: BaseException | None = None
    signal.signal(signal.SIGALRM, _on_alarm)
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                code = _entry(seed.command)(argv)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) or stop.code is None else 1
        if stop.code is None:
            code = 0
    except BaseException as caught:  # every escape is a verdict
        exc = caught
    err = stderr.getvalue()
    verdict, cause, detail = classify(code, exc, err, seed, limit)
    if verdict != FAILURE and CODE_MODULE in sys.modules:
        verdict, cause = FAILURE, f"data made the command import {CODE_MODULE!r}"
    elif verdict == ACCEPTED and "attack:mapping" in mutation:
        verdict, cause = FAILURE, "accepted a file whose default_mapping names code"
    if exc is not None:
        err += "".join(traceback.format_exception(exc))
    return verdict, cause, detail, code, stdout.getvalue(), err


def _vm_peak_kb() -> int:
    """This process's peak address space (``VmPeak``), in kB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmPeak:"):
            return int(line.split()[1])
    return 0


def _worker(config_path: str) -> int:
    share_compilations_if_asked()  # the suite's other processes may be compiling its kernels
    config = json.loads(Path(config_path).read_text())
    if config["memory"]:
        resource.setrlimit(resource.RLIMIT_AS, (config["memory"], config["memory"]))
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    sys.stdin = io.StringIO()
    faulthandler.enable(file=sys.stderr)
    seeds_dir = Path(config["seeds_dir"])
    listing = seeds_dir / "seeds.json"
    if not listing.exists():  # the first worker writes the seeds; a restarted one reads them
        seeds = build_seeds(seeds_dir, big=config["big"])
        listing.write_text(json.dumps([asdict(s) for s in seeds]))
    seeds = [Seed(**s) for s in json.loads(listing.read_text())]
    work = Path(config["work"])
    limit = float(config["limit"])
    for seed in seeds:
        if seed.format not in config["formats"]:
            continue
        start = time.perf_counter()
        verdict, cause, detail, code, _, _ = run_one(
            seed, (seeds_dir / seed.file).read_bytes(), seeds_dir, work, WARM_TIMEOUT)
        proto.write(json.dumps({"kind": "seed", **asdict(Outcome(
            f"seed:{seed.format}:{seed.name}", seed.format, seed.name, "none", verdict, cause,
            detail, code, time.perf_counter() - start))}) + "\n")
    proto.write(json.dumps({"kind": "ready", "vm_peak_kb": _vm_peak_kb()}) + "\n")
    for ident in config["ids"]:
        mutant = make_mutant(seeds, seeds_dir, ident)
        proto.write(json.dumps({"kind": "start", "id": ident,
                                "mutation": mutant.mutation}) + "\n")
        start = time.perf_counter()
        verdict, cause, detail, code, _, _ = run_one(mutant.seed, mutant.data, seeds_dir, work,
                                                         limit, mutant.mutation)
        proto.write(json.dumps({"kind": "mutant", **asdict(Outcome(
            ident, mutant.seed.format, mutant.seed.name, mutant.mutation, verdict, cause,
            detail, code, time.perf_counter() - start))}) + "\n")
    return 0


# --------------------------------------------------------------------------- parent side


@dataclass
class Report:
    seed: int
    planned: int
    formats: list[str]
    limit: float
    memory: int
    seeds: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    interrupted: bool = False
    seconds: float = 0.0
    restarts: int = 0
    baseline_kb: int = 0
    ready_seconds: float = 0.0
    """From the start to the first worker's first mutant (seeds written and run)."""
    """The worker's peak address space after its seeds (``VmPeak``)."""

    def counts(self) -> dict[str, int]:
        c = Counter(r["verdict"] for r in self.results)
        return {"mutants": len(self.results), "accepted": c[ACCEPTED],
                "rejected": c[REJECTED], "failures": c[FAILURE]}

    def failures(self) -> list[dict[str, Any]]:
        return [r for r in self.results if r["verdict"] == FAILURE]

    def by_format(self) -> dict[str, dict[str, float]]:
        table: dict[str, Counter[str]] = {}
        seconds: dict[str, float] = {}
        for r in self.results:
            table.setdefault(r["format"], Counter())[r["verdict"]] += 1
            seconds[r["format"]] = seconds.get(r["format"], 0.0) + r["seconds"]
        return {f: {"mutants": sum(c.values()), "accepted": c[ACCEPTED],
                    "rejected": c[REJECTED], "failures": c[FAILURE],
                    "seconds": round(seconds[f], 2)}
                for f, c in sorted(table.items())}

    def causes(self) -> dict[str, dict[str, list[str]]]:
        """Failing mutant ids by format, then cause."""
        out: dict[str, dict[str, list[str]]] = {}
        for r in self.failures():
            out.setdefault(r["format"], {}).setdefault(r["cause"], []).append(r["id"])
        return out

    def line(self) -> str:
        c = self.counts()
        return (f"{c['mutants']} of {self.planned} mutants (seed {self.seed}): "
                f"{c['accepted']} accepted, {c['rejected']} rejected, {c['failures']} "
                f"failures, in {self.seconds:.1f} s"
                + (" (interrupted)" if self.interrupted else ""))

    def describe(self) -> str:
        """The counts, then every failing cause with its mutants (id, mutation, detail)."""
        lines = [self.line()]
        bad_seeds = [s for s in self.seeds if s["verdict"] == FAILURE]
        for s in bad_seeds:
            lines.append(f"  SEED {s['id']}: {s['cause']} {s['detail'][:120]}")
        for fmt, causes in self.causes().items():
            for cause, ids in sorted(causes.items(), key=lambda kv: -len(kv[1])):
                lines.append(f"  {fmt}: {cause}: {len(ids)} mutant(s)")
                for r in [r for r in self.failures() if r["id"] in ids][:5]:
                    lines.append(f"    {r['id']} {r['mutation']} {r['detail'][:100]!r}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "planned": self.planned, "formats": self.formats,
                "limit_s": self.limit, "memory_bytes": self.memory, **self.counts(),
                "interrupted": self.interrupted, "seconds": round(self.seconds, 1),
                "worker_restarts": self.restarts,
                "worker_baseline_vm_peak_kb": self.baseline_kb,
                "seconds_to_first_mutant": round(self.ready_seconds, 1),
                "slowest": sorted(self.results, key=lambda r: -r["seconds"])[:10],
                "by_format": self.by_format(),
                "failures_by_format_and_cause": self.causes(),
                "failing_mutants": self.failures(),
                "seeds": self.seeds}


def plan(seed: int, count: int, formats: Sequence[str]) -> list[str]:
    """Mutant ids: the formats in turn."""
    return [mutant_id(formats[i % len(formats)], seed, i // len(formats))
            for i in range(count)]


class _Lines:
    """Lines from a pipe, with a timeout per line."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buffer = fd, b""

    def next(self, timeout: float) -> bytes | None:
        """The next line; ``b""`` at end of file, ``None`` on timeout."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                return None
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return b""
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line


def run(seed: int, count: int, formats: Sequence[str] = FORMATS, *, big: bool = False,
        limit: float = DEFAULT_LIMIT, memory: int = DEFAULT_MEMORY, work: Path | None = None,
        progress: Callable[[Report], None] | None = None,
        ids: Sequence[str] | None = None) -> Report:
    """Run mutants ``0..count-1`` of ``seed`` over ``formats`` (or exactly ``ids``) and
    return the report; Ctrl-C stops it and returns what is done (``interrupted``)."""
    start = time.monotonic()
    todo = list(ids) if ids is not None else plan(seed, count, formats)
    used = sorted({i.split(":")[0] for i in todo}, key=list(FORMATS).index)
    report = Report(seed, len(todo), used, limit, memory)
    own = work is None
    base = Path(tempfile.mkdtemp(prefix="acpc-fuzz-")) if work is None else work
    seeds_dir = base / "seeds"
    warm = True
    proc: subprocess.Popen[bytes] | None = None
    try:
        while todo:
            config = base / "worker.json"
            config.write_text(json.dumps({
                "seeds_dir": str(seeds_dir), "work": str(base / "work"), "limit": limit,
                "memory": memory, "ids": todo, "big": big, "formats": used}))
            err_path = base / "worker.stderr"
            with open(err_path, "wb") as err:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "tests.fuzz.harness", str(config)], cwd=ROOT,
                    stdout=subprocess.PIPE, stderr=err, start_new_session=True)
            assert proc.stdout is not None
            lines = _Lines(proc.stdout.fileno())
            timeout = WARM_TIMEOUT
            current: dict[str, Any] | None = None
            while True:
                raw = lines.next(timeout)
                if not raw:  # the worker died, hung, or finished
                    break
                msg = json.loads(raw)
                kind = msg.pop("kind")
                if kind == "seed":
                    if warm:
                        report.seeds.append(msg)
                elif kind == "ready":
                    if warm:
                        report.baseline_kb = msg["vm_peak_kb"]
                        report.ready_seconds = time.monotonic() - start
                    warm = False
                    timeout = limit + GRACE
                elif kind == "start":
                    current = msg
                else:
                    report.results.append(msg)
                    todo.remove(msg["id"])
                    current = None
                    report.seconds = time.monotonic() - start
                    if progress is not None:
                        progress(report)
            if raw is None:
                os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
            proc = None
            if not todo:
                break
            if timeout == WARM_TIMEOUT:  # no "ready": a seed or the worker's start failed
                raise RuntimeError(f"the fuzz worker failed before its first mutant (status "
                                   f"{code}): {err_path.read_text(errors='replace')[-2000:]}")
            report.restarts += 1
            ident = todo.pop(0)
            tail = err_path.read_text(errors="replace")[-300:]
            fmt = ident.split(":")[0]
            mutation = current["mutation"] if current else "?"
            if raw is None:
                cause = f"hang: no answer in {limit + GRACE:g} s (worker killed)"
            elif code < 0:
                cause = f"worker killed by signal {-code}"
            else:
                cause = f"worker exited with status {code}"
            report.results.append(asdict(Outcome(ident, fmt, "?", mutation, FAILURE, cause,
                                                 tail)))
            if progress is not None:
                progress(report)
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        if proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if own:
            shutil.rmtree(base, ignore_errors=True)
        report.seconds = time.monotonic() - start
    return report


def reproduce(ident: str, *, big: bool = False, limit: float = DEFAULT_LIMIT,
              keep: Path | None = None) -> str:
    """Run one mutant in this process (no memory cap) and tell what happened: its argv,
    verdict, stdout and stderr. ``keep``: also write the mutant there."""
    base = Path(tempfile.mkdtemp(prefix="acpc-fuzz-"))
    try:
        seeds = build_seeds(base / "seeds", big=big)
        mutant = make_mutant(seeds, base / "seeds", ident)
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            (keep / f"{ident.replace(':', '-')}--{mutant.seed.file}").write_bytes(mutant.data)
        verdict, cause, _, code, out, err = run_one(
            mutant.seed, mutant.data, base / "seeds", base / "work", limit, mutant.mutation)
        return (f"{ident}: {mutant.seed.format} seed {mutant.seed.name}, mutation "
                f"{mutant.mutation}\ncommand: {mutant.seed.command} "
                f"{' '.join(a[:60] for a in mutant.seed.argv)}\nverdict: {verdict} {cause} "
                f"(exit {code})\n--- stdout (last 1000)\n{out[-1000:]}\n--- stderr (last "
                f"3000)\n{err[-3000:]}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(_worker(sys.argv[1]))
