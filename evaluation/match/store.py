"""The run directory: a SQLite results store, the dealer logs and a JSON manifest.

Layout of ``--run-dir``::

    manifest.json     settings, variants (with checksums), seeds, code version, command
    results.sqlite    one row per finished match, written the moment it finishes
    logs/NAME.log     the dealer log of every finished match
    lock              held (flock) by the runner using the directory

Durability: the log is written to a temporary file, fsynced and renamed; then the match row
(per-hand values by seat, seeds, settings, checksums, code version, the log's path and
sha256, the agents' time-guard counts by seat) is inserted in one transaction, with
``synchronous=FULL`` in WAL mode. A run killed at any moment has either stored a match
completely or not at all, and a rerun skips every stored match (``match_id`` is the
primary key: a match can never be stored twice). The
``events`` table records every start, finish and failure with the session that did it, so
it can be checked that no finished match was ever played again.

Only the runner process writes here; workers return their results as JSON. Nothing is
pickled: values are JSON text in SQLite.

Stdlib only.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from agent.acpc.errors import AcpcError
from agent.fileio import write_atomic
from evaluation.match.schedule import MatchJob, plan_jobs
from evaluation.match.worker import MatchOutcome

SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
DATABASE = "results.sqlite"
LOGS = "logs"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    session INTEGER PRIMARY KEY,
    started_at TEXT NOT NULL,
    argv TEXT NOT NULL,
    pid INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS matches (
    match_id TEXT PRIMARY KEY,
    group_key TEXT NOT NULL,
    unit INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    deal_seed INTEGER NOT NULL,
    seats TEXT NOT NULL,
    agent_seeds TEXT NOT NULL,
    hands INTEGER NOT NULL,
    match_name TEXT NOT NULL,
    game TEXT NOT NULL,
    settings TEXT NOT NULL,
    variants TEXT NOT NULL,
    checksums TEXT NOT NULL,
    code_version TEXT NOT NULL,
    log_path TEXT NOT NULL,
    log_sha256 TEXT NOT NULL,
    hand_values TEXT NOT NULL,
    allin_values TEXT,
    totals TEXT NOT NULL,
    seconds REAL NOT NULL,
    transport TEXT NOT NULL,
    session INTEGER NOT NULL,
    finished_at TEXT NOT NULL,
    time_guard TEXT
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session INTEGER NOT NULL,
    match_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    variant TEXT,
    detail TEXT,
    at TEXT NOT NULL
);
"""


class StoreError(AcpcError, RuntimeError):
    """The run directory cannot be used (unreadable, another schema, other settings)."""


def now_text() -> str:
    """The current UTC time, ISO 8601 to the millisecond."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")


def _lock_run_dir(run_dir: Path) -> IO[str]:
    """Hold an exclusive lock on ``run_dir/lock`` (released by the kernel if we die).

    Raises:
        StoreError: if another runner holds it.
    """
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        f = open(run_dir / "lock", "a+", encoding="ascii")  # noqa: SIM115
    except OSError as exc:
        raise StoreError(f"could not use the run directory {str(run_dir)!r}: "
                         f"{exc.strerror or exc}") from None
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.seek(0)
        holder = f.read().strip() or "?"
        f.close()
        raise StoreError(f"the run directory {str(run_dir)!r} is in use by another acpc-match "
                         f"(pid {holder})") from None
    f.seek(0)
    f.truncate()
    f.write(f"{os.getpid()}\n")
    f.flush()
    return f


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """A finished match as stored."""

    match_id: str
    group: tuple[str, ...]
    unit: int
    rotation: int
    deal_seed: int
    seats: tuple[str, ...]
    hands: int
    match_name: str
    log_path: str
    values: list[list[float]]
    allin_values: list[list[float]] | None
    seconds: float
    session: int
    time_guard: list[int | None] | None = None
    """By seat: the decisions that fell back on the agent's time guard (None per seat when
    unknown; None for a match stored before the counts were kept)."""


class ResultStore:
    """The SQLite store of one run directory (see the module docstring)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.logs = run_dir / LOGS
        self._lock = _lock_run_dir(run_dir)
        try:
            self.logs.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(run_dir / DATABASE, isolation_level=None, timeout=30.0)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=FULL")
            self.db.executescript(_SCHEMA)
            columns = {r[1] for r in self.db.execute("PRAGMA table_info(matches)")}
            if "time_guard" not in columns:  # a run directory from before the counts
                self.db.execute("ALTER TABLE matches ADD COLUMN time_guard TEXT")
            row = self.db.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            if row is None:
                self.db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif row[0] != str(SCHEMA_VERSION):
                raise StoreError(
                    f"{run_dir / DATABASE}: expected results schema {SCHEMA_VERSION}, got "
                    f"{row[0]!r}; use another --run-dir"
                )
        except (OSError, sqlite3.Error) as exc:
            self._lock.close()
            raise StoreError(f"could not open the results store in {str(run_dir)!r}: {exc}") \
                from None
        except StoreError:
            self._lock.close()
            raise
        self.session = 0

    def close(self) -> None:
        """Close the database and release the run directory."""
        self.db.close()
        self._lock.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    def begin_session(self, argv: Sequence[str]) -> int:
        """Record a new session of the runner; returns its number."""
        with self._transaction() as db:
            cur = db.execute(
                "INSERT INTO sessions (started_at, argv, pid) VALUES (?, ?, ?)",
                (now_text(), json.dumps(list(argv)), os.getpid()),
            )
            self.session = int(cur.lastrowid or 0)
        return self.session

    def done_ids(self) -> set[str]:
        """``match_id`` of every stored match."""
        return {r[0] for r in self.db.execute("SELECT match_id FROM matches")}

    def record_event(self, match_id: str, kind: str, variant: str | None = None,
                     detail: str | None = None) -> None:
        """Note a start (``start``), a finish (``done``) or a failure (``failed``)."""
        self.db.execute(
            "INSERT INTO events (session, match_id, kind, variant, detail, at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (self.session, match_id, kind, variant, detail, now_text()),
        )

    def record_match(
        self,
        job: MatchJob,
        outcome: MatchOutcome,
        *,
        game: dict[str, Any],
        settings: dict[str, Any],
        variants: dict[str, Any],
        checksums: dict[str, Any],
        code_version: str,
    ) -> None:
        """Write the log (atomically) and store the finished match in one transaction."""
        data = outcome.log_text.encode("ascii")
        log_path = self.logs / f"{job.match_name}.log"
        write_atomic(log_path, data)
        n = len(job.seats)
        totals = [sum(row[s] for row in outcome.values) for s in range(n)]
        with self._transaction() as db:
            db.execute(
                "INSERT INTO matches VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    job.match_id, job.group_key, job.unit, job.rotation, job.deal_seed,
                    json.dumps(list(job.seats)), json.dumps(list(job.agent_seeds)),
                    job.hands, job.match_name, json.dumps(game), json.dumps(settings),
                    json.dumps(variants), json.dumps(checksums), code_version,
                    str(log_path.relative_to(self.run_dir)),
                    hashlib.sha256(data).hexdigest(),
                    json.dumps(outcome.values),
                    None if outcome.allin_values is None else json.dumps(outcome.allin_values),
                    json.dumps(totals), outcome.seconds, outcome.transport, self.session,
                    now_text(), json.dumps(outcome.time_guard),
                ),
            )
            self.record_event(job.match_id, "done")

    def set_allin(self, match_id: str, values: list[list[float]]) -> None:
        """Store the all-in-EV values of a match computed after the fact."""
        with self._transaction() as db:
            db.execute("UPDATE matches SET allin_values = ? WHERE match_id = ?",
                       (json.dumps(values), match_id))

    def matches(self, ids: set[str] | None = None) -> list[StoredMatch]:
        """The stored matches (all, or those in ``ids``), in ``match_id`` order."""
        rows = self.db.execute(
            "SELECT match_id, group_key, unit, rotation, deal_seed, seats, hands, match_name, "
            "log_path, hand_values, allin_values, seconds, session, time_guard FROM matches "
            "ORDER BY match_id"
        ).fetchall()
        out = []
        for r in rows:
            if ids is not None and r[0] not in ids:
                continue
            out.append(StoredMatch(
                match_id=r[0], group=tuple(r[1].split(",")), unit=r[2], rotation=r[3],
                deal_seed=r[4], seats=tuple(json.loads(r[5])), hands=r[6], match_name=r[7],
                log_path=r[8], values=json.loads(r[9]),
                allin_values=None if r[10] is None else json.loads(r[10]),
                seconds=r[11], session=r[12], time_guard=_time_guard(r[13]),
            ))
        return out


def _time_guard(text: str | None) -> list[int | None] | None:
    """A stored ``time_guard`` column: a JSON list of counts (or nulls) by seat; None for
    a row stored before the counts were kept (or an empty list: a transport that gave
    none)."""
    if text is None:
        return None
    data = json.loads(text)
    if not isinstance(data, list) or not data:
        return None
    return [x if isinstance(x, int) else None for x in data]


# ---------------------------------------------------------------------- manifest


def load_manifest(run_dir: Path) -> dict[str, Any] | None:
    """The run directory's manifest, or None if there is none yet.

    Raises:
        StoreError: if it exists but cannot be read.
    """
    path = run_dir / MANIFEST
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StoreError(f"could not read the manifest {str(path)!r}: {exc}") from None
    if not isinstance(data, dict):
        raise StoreError(f"{path}: expected a JSON object")
    return data


def save_manifest(run_dir: Path, manifest: dict[str, Any]) -> None:
    """Write the manifest atomically."""
    write_atomic(run_dir / MANIFEST,
                 (json.dumps(manifest, indent=2, sort_keys=False) + "\n").encode("utf-8"))


FIXED_KEYS = ("game_fingerprint", "hands", "master_seed", "t_response_ms", "t_hand_ms",
              "t_per_hand_ms")
"""Settings that define the matches: a run directory keeps them for its whole life."""


def check_compatible(old: dict[str, Any], new: dict[str, Any]) -> None:
    """Check that a run directory made with ``old`` can continue with ``new``.

    More units, more variants and other pairs are fine (each match is defined by its own
    seeds); a different game, number of hands, master seed or time limit is not, nor is a
    variant of the same name that plays differently or whose files changed.

    Raises:
        StoreError: naming the first difference.
    """
    old_settings = old.get("settings", {})
    new_settings = new.get("settings", {})
    for key in FIXED_KEYS:
        if old_settings.get(key) != new_settings.get(key):
            raise StoreError(
                f"the run directory was made with {key} = {old_settings.get(key)!r}, this "
                f"run has {new_settings.get(key)!r}: use another --run-dir"
            )
    old_vars = old.get("variants", {})
    for name, info in new.get("variants", {}).items():
        before = old_vars.get(name)
        if before is None:
            continue
        if before.get("identity") != info.get("identity"):
            raise StoreError(
                f"variant {name!r} was {before.get('spec')!r} in this run directory, now "
                f"{info.get('spec')!r}: use another name or another --run-dir"
            )
        if before.get("checksums") != info.get("checksums"):
            raise StoreError(
                f"variant {name!r}: its files changed since the run started (sha256 "
                f"{before.get('checksums')} -> {info.get('checksums')}): use another "
                f"--run-dir"
            )


def planned_matches(config: Any) -> list[StoredMatch]:
    """The stored matches of the jobs a run plans (``config``:
    :class:`evaluation.match.runner.RunConfig`: its variants, groups, seed, matches and
    hands), read from its run directory; what AIVAT and the default table value."""
    jobs = plan_jobs(config.variants, config.groups, master_seed=config.master_seed,
                     matches=config.matches, hands=config.hands)
    store = ResultStore(config.run_dir)
    try:
        return store.matches({j.match_id for j in jobs})
    finally:
        store.close()
