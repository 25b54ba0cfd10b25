"""Run a duplicate-match plan: resume from the store, play what is left, keep every result.

:func:`run` opens (or creates) the run directory, checks that its manifest is compatible,
plans every match (:mod:`evaluation.match.schedule`), skips the stored ones and plays the rest
on a backend (:mod:`jobs.backends`):

* ``local`` with ``jobs == 1``: one match after another in this process (if this process
  is killed with SIGKILL during a TCP match, that match's dealer and agents finish on
  their own, bounded by the dealer's time limits, and write only to a temporary directory);
* ``local``: a process pool of ``jobs`` workers (spawned, so no state is inherited; each
  watches this process and exits if it dies);
* ``ray``: Ray tasks (the optional extra ``cluster``) on the cluster at ``address`` (or a
  local one). Every node needs acpc-arena installed (and a custom game file at the same
  path; bundled games are found by name); strategy files are shipped through Ray's object
  store as bytes and kept on each node under their sha256
  (:func:`evaluation.match.worker.run_shipped_job_json`), so no shared file system is needed.
  Each task plays its match on its own node's loopback interface; a task whose worker dies
  is retried by Ray (up to 3 times), and a driver that dies loses nothing stored: the same
  command resumes.

All backends run :func:`evaluation.match.worker.run_job_json` with the same JSON payload, so a
plan gives the same matches whatever runs it. At most ``2 * jobs`` matches are in flight;
each result is stored the moment it arrives (:class:`~evaluation.match.store.ResultStore`).
A failed match is recorded as an event (not as a result, so a rerun retries it); once a
variant is blamed for a failure, its remaining matches are skipped in this session.

Imports the stdlib, :mod:`agent`, :mod:`jobs` and :mod:`evaluation.match` (Ray only through
:mod:`jobs`).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent import __version__, exploitconfig
from agent.acpc.gamedef import Game
from agent.agents import policy_kernels
from agent.console import compile_notice
from evaluation.match.report import Progress, Summary, summarize
from evaluation.match.schedule import MatchJob, deal_seed, plan_jobs
from evaluation.match.store import (
    LOGS,
    ResultStore,
    StoreError,
    check_compatible,
    load_manifest,
    now_text,
    save_manifest,
)
from evaluation.match.variants import Variant, check_variant, checksums
from evaluation.match.worker import (
    MatchOutcome,
    MatchSettings,
    allin_values_by_seat,
    init_worker,
    job_payload,
    run_job_json,
    run_shipped_job_json,
)
from jobs.backends import Finished, check_backend, open_jobs


@dataclass
class RunConfig:
    """Everything that defines a run and how to execute it."""

    variants: list[Variant]
    groups: list[tuple[str, ...]]
    game: Game
    settings: MatchSettings
    hands: int
    matches: int
    master_seed: int
    run_dir: Path
    unit: str = "seed"
    jobs: int = 1
    backend: str = "local"
    address: str | None = None
    argv: list[str] = field(default_factory=list)


@dataclass
class RunResult:
    """What a run did and found."""

    summary: Summary
    failures: list[dict[str, Any]]
    skipped: list[str]
    planned: int
    already_done: int
    played: int

    @property
    def complete(self) -> bool:
        """True if every planned match is stored."""
        return self.summary.matches_done == self.planned


def code_version() -> str:
    """``acpc-arena <version>``, plus the git commit (``+dirty``) of a source checkout."""
    text = f"acpc-arena {__version__}"
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return text
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=10, check=True)
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return text
    return f"{text} git {head.stdout.strip()}{'+dirty' if dirty.stdout.strip() else ''}"


def variant_cli_spec(v: Variant) -> str:
    """A ``--variant`` argument that defines ``v``."""
    if v.cmd:
        return f"{v.name}=cmd={shlex.join(v.cmd)}"
    text = f"{v.name}={v.strategy}"
    for key in ("mapping", "purify", "sizes", "seed"):
        value = getattr(v, key)
        if value is not None:
            text += f",{key}={value}"
    if v.exploit is not None:
        text += f",{exploitconfig.key('mode')}={v.exploit}"
        for name, number in v.exploit_options:
            text += f",{exploitconfig.key(name)}={number!r}"
    return text


def settings_key(config: RunConfig) -> str:
    """A short hash of what defines the matches: names the default run directory."""
    data = {
        "game": config.game.fingerprint,
        "hands": config.hands,
        "seed": config.master_seed,
        "limits": [config.settings.t_response_ms, config.settings.t_hand_ms,
                   config.settings.t_per_hand_ms],
        "variants": sorted((v.name, json.dumps(v.identity(), sort_keys=True))
                           for v in config.variants),
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:12]


def build_manifest(config: RunConfig, sums: dict[str, dict[str, str]],
                   version: str) -> dict[str, Any]:
    """The manifest of a run (see :mod:`evaluation.match.store`)."""
    s = config.settings
    reproduce = [
        "acpc-match", "--game", s.game_spec, "--hands", str(config.hands),
        "--matches", str(config.matches), "--seed", str(config.master_seed),
        "--unit", config.unit, "--transport", s.transport,
        "--t-response-ms", str(s.t_response_ms), "--t-hand-ms", str(s.t_hand_ms),
        "--t-per-hand-ms", str(s.t_per_hand_ms), "--run-dir", str(config.run_dir),
    ]
    if s.allin:
        reproduce.append("--allin-ev")
    for v in config.variants:
        reproduce += ["--variant", variant_cli_spec(v)]
    for g in config.groups:
        reproduce += ["--pair", ":".join(g)]
    return {
        "format": "acpc-match-run",
        "version": 1,
        "created_at": now_text(),
        "updated_at": now_text(),
        "command": list(config.argv),
        "reproduce": reproduce,
        "code_version": version,
        "settings": {
            "game": s.game_spec,
            "game_fingerprint": config.game.fingerprint,
            "big_blind": config.game.big_blind,
            "num_players": config.game.num_players,
            "hands": config.hands,
            "matches": config.matches,
            "master_seed": config.master_seed,
            "unit": config.unit,
            "transport": s.transport,
            "t_response_ms": s.t_response_ms,
            "t_hand_ms": s.t_hand_ms,
            "t_per_hand_ms": s.t_per_hand_ms,
            "start_timeout_ms": s.start_timeout_ms,
            "allin_ev": s.allin,
        },
        "variants": {
            v.name: {
                "spec": v.spec,
                "kind": v.kind,
                "cli": variant_cli_spec(v),
                "identity": v.identity(),
                "checksums": sums[v.name],
                "cwd": v.cwd,
            }
            for v in config.variants
        },
        "groups": [list(g) for g in config.groups],
        "deal_seeds": [deal_seed(config.master_seed, k) for k in range(config.matches)],
    }


def prepare_run_dir(config: RunConfig, version: str) -> ResultStore:
    """Create or reopen the run directory; check and update its manifest.

    Raises:
        StoreError: if it cannot be used for this run.
    """
    sums = {v.name: checksums(v) for v in config.variants}
    manifest = build_manifest(config, sums, version)
    try:
        config.run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"could not create the run directory {str(config.run_dir)!r}: "
                         f"{exc.strerror or exc}") from None
    store = ResultStore(config.run_dir)  # locks the directory first
    try:
        _merge_manifest(config, manifest, version)
    except BaseException:
        store.close()
        raise
    return store


def _merge_manifest(config: RunConfig, manifest: dict[str, Any], version: str) -> None:
    old = load_manifest(config.run_dir)
    if old is not None:
        check_compatible(old, manifest)
        manifest["created_at"] = old.get("created_at", manifest["created_at"])
        manifest["variants"] = {**old.get("variants", {}), **manifest["variants"]}
        history = list(old.get("history", []))
        history.append({"at": now_text(), "command": list(config.argv),
                        "code_version": version})
        manifest["history"] = history
    else:
        manifest["history"] = [{"at": now_text(), "command": list(config.argv),
                                "code_version": version}]
    save_manifest(config.run_dir, manifest)


class _Recorder:
    """Stores outcomes as they arrive and decides which pending jobs to skip."""

    def __init__(self, config: RunConfig, store: ResultStore, progress: Progress,
                 version: str, variants: dict[str, Variant]) -> None:
        self.config = config
        self.store = store
        self.progress = progress
        self.version = version
        self.variants = variants
        self.sums = {v.name: checksums(v) for v in config.variants}
        self.failures: list[dict[str, Any]] = []
        self.skipped: list[str] = []
        self.broken: set[str] = set()
        self.played = 0
        g = config.game
        self.game_info = {"spec": config.settings.game_spec, "fingerprint": g.fingerprint,
                          "big_blind": g.big_blind, "num_players": g.num_players}

    def should_skip(self, job: MatchJob) -> bool:
        if any(name in self.broken for name in job.seats):
            self.skipped.append(job.match_id)
            return True
        self.store.record_event(job.match_id, "start")
        return False

    def record(self, job: MatchJob, outcome: MatchOutcome) -> None:
        label = job.match_name
        if outcome.ok:
            self.store.record_match(
                job, outcome, game=self.game_info, settings=self.config.settings.to_json(),
                variants={n: self.variants[n].to_json() for n in job.seats},
                checksums={n: self.sums[n] for n in job.seats}, code_version=self.version,
            )
            self.played += 1
            guard = [(name, n) for name, n in zip(job.seats, outcome.time_guard, strict=False)
                     if n]
            if guard:
                counts = ", ".join(f"{name} {n}" for name, n in guard)
                self.progress.note(f"acpc-match: warning: {label}: decision(s) past the time "
                                   f"guard ({counts}): the results depend on timing")
        else:
            self.store.record_event(job.match_id, "failed", outcome.variant, outcome.error)
            self.failures.append({"match_id": job.match_id, "match": job.match_name,
                                  "variant": outcome.variant, "error": outcome.error})
            if outcome.variant is not None:
                self.broken.add(outcome.variant)
            self.progress.note(f"acpc-match: {label}: {outcome.error}")
        self.progress.advance(label, outcome.hands, outcome.seconds, outcome.ok)

    def finished(self, done: Finished[MatchJob, str]) -> None:
        """Record a job the backend finished (its JSON outcome, or how its worker failed)."""
        if done.ok:
            outcome = MatchOutcome.from_json(json.loads(done.result()))
        else:
            outcome = MatchOutcome(done.job.match_id, False, done.failure,
                                   transport=self.config.settings.transport)
        self.record(done.job, outcome)


def _play(jobs: Sequence[MatchJob], rec: _Recorder, config: RunConfig) -> None:
    """Play ``jobs`` on the run's backend (:func:`jobs.backends.open_jobs`), storing each
    outcome as it arrives.

    Raises:
        UsageError: for bad backend settings.
        RayUnavailable: if ray is not installed.
        RayClusterError: if ``address`` cannot be joined.
    """
    settings = rec.config.settings
    with open_jobs(config.backend, max(1, config.jobs), config.address,
                   initializer=init_worker, initargs=(os.getpid(),)) as backend:
        if not backend.remote:
            backend.run(run_job_json, jobs, rec.finished, skip=rec.should_skip,
                        args=lambda job: (job_payload(job, rec.variants, settings),))
            return
        # Strategy files travel through Ray's object store as plain bytes, once each, and
        # are kept on each node under their sha256 (checked there): no shared file system.
        shipped: dict[str, tuple[str, Any]] = {}
        for v in rec.variants.values():
            if v.kind == "file" and v.strategy is not None and v.strategy not in shipped:
                data = Path(v.strategy).read_bytes()
                shipped[v.strategy] = (hashlib.sha256(data).hexdigest(), backend.share(data))

        def shipped_args(job: MatchJob) -> tuple[Any, ...]:
            files = sorted({rec.variants[n].strategy or "" for n in job.seats} & set(shipped))
            names = json.dumps([[path, shipped[path][0]] for path in files])
            return (job_payload(job, rec.variants, settings), names,
                    *[shipped[path][1] for path in files])

        backend.run(run_shipped_job_json, jobs, rec.finished, skip=rec.should_skip,
                    args=shipped_args)


def fill_allin(store: ResultStore, config: RunConfig, ids: set[str],
               note: Callable[[str], None]) -> None:
    """Compute all-in EV values for stored matches that lack them (from their logs)."""
    for m in store.matches(ids):
        if m.allin_values is not None:
            continue
        path = config.run_dir / m.log_path
        try:
            text = path.read_text(encoding="ascii")
            values = allin_values_by_seat(text, m.seats, config.game,
                                          config.settings.allin_method)
        except (OSError, ValueError) as exc:
            note(f"acpc-match: warning: no all-in EV for {m.match_name}: {exc}")
            continue
        store.set_allin(m.match_id, values)


def run(config: RunConfig, progress: Progress) -> RunResult:
    """Play everything of the plan that is not stored yet; summarize the stored matches.

    Raises:
        StoreError: if the run directory cannot be used.
        RayUnavailable: for ``backend="ray"`` without ray.
    """
    check_backend(config.backend, config.jobs, config.address)
    version = code_version()
    store = prepare_run_dir(config, version)
    try:
        store.begin_session(config.argv)
        jobs = plan_jobs(config.variants, config.groups, master_seed=config.master_seed,
                         matches=config.matches, hands=config.hands)
        done = store.done_ids()
        pending = [j for j in jobs if j.match_id not in done]
        already = len(jobs) - len(pending)
        playing = [v for v in config.variants if v.name in {n for j in pending for n in j.group}]
        kernels = [k for v in playing if v.strategy
                   for k in policy_kernels(v.strategy, config.game)]
        if any(v.exploit is not None for v in playing):
            from agent.strategy import best_response

            kernels += best_response.KERNELS
        with compile_notice("acpc-match", kernels):  # strategies load only if a match is left
            for v in playing:
                check_variant(v, config.settings.game_spec, config.settings.transport)
        progress.start(len(jobs) * config.hands, already * config.hands, len(jobs), already)
        variants = {v.name: v for v in config.variants}
        rec = _Recorder(config, store, progress, version, variants)
        try:
            if pending:
                _play(pending, rec, config)
        finally:
            progress.close()
        ids = {j.match_id for j in jobs}
        if config.settings.allin:
            fill_allin(store, config, ids, progress.note)
        g = config.game
        summary = summarize(
            store.matches(ids), groups=config.groups,
            variants=[v.name for v in config.variants], units_planned=config.matches,
            game=config.settings.game_spec, big_blind=g.big_blind or 1,
            num_players=g.num_players,
            hands_per_match=config.hands, unit=config.unit, allin=config.settings.allin,
        )
        return RunResult(summary, rec.failures, rec.skipped, len(jobs), already, rec.played)
    finally:
        store.close()


__all__ = ["LOGS", "RunConfig", "RunResult", "run"]
