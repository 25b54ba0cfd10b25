"""``acpc-match --backend ray`` on a real Ray cluster, started on 127.0.0.1 by the tests.

A Ray head (``ray start --head --node-ip-address 127.0.0.1``) runs for the module and is
stopped at the end. ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (set for every test process by
``tests/conftest.py``) keeps Ray from replacing 127.0.0.1 by the machine's own address, so
every connection stays on loopback; the head and its drivers share a random token
(``RAY_AUTH_MODE=token``). Every run is checked against ``--backend local`` with the same seeds:
the same final table, the same stored rows, the same logs byte for byte. Strategy files
reach the workers through Ray's object store (kept there under their sha256), and faults
are real: a Ray worker killed mid-run (the task is retried), and the driver killed with
SIGKILL (the same command resumes without repeating or losing a stored match).

Needs the ``cluster`` extra (``ray``); CI installs it, so these tests run there.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.data import strategy_path
from tests.support import ROOT
from tests.support.ray_head import free_port, ray_head

ray = pytest.importorskip("ray")

STRAT = strategy_path("leduc.nolimit.2p.fcpa.strat")
RAY = Path(sys.executable).parent / "ray"
ENV = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
"""What the head, its drivers and the local runs get (the fixture adds the token)."""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A one-node Ray cluster on 127.0.0.1 (2 CPUs, :func:`tests.support.ray_head.ray_head`:
    stopped by its process group, never ``ray stop``); yields its address and the workers'
    cache directory for shipped files."""
    cache = tmp_path_factory.mktemp("worker-cache")
    ENV.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))
    env = {**ENV, "ACPC_ARENA_CACHE": str(cache)}
    try:
        with ray_head(env, tmp_path_factory.mktemp("ray-head")) as address:
            yield address, cache
    except RuntimeError as exc:
        pytest.fail(str(exc))


def _argv(run_dir: Path, strat: Path, *, hands: int = 40, matches: int = 2) -> list[str]:
    return [sys.executable, "-m", "evaluation.cli", "--game", "leduc.nolimit.2p.game",
            "--opponent", "none",  # the default table off: these tests are Ray's
            "-v", f"pshar={strat},mapping=rand-pshar", "-v", f"arith={strat},mapping=det-arith",
            "-v", "rnd=builtin:random", "--hands", str(hands), "--matches", str(matches),
            "--transport", "inproc", "--workers", "2", "--run-dir", str(run_dir), "--quiet"]


def _run(argv: list[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          check=False, env=ENV)


def _rows(run_dir: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(run_dir / "results.sqlite") as db:
        return sorted(db.execute("SELECT match_id, seats, deal_seed, agent_seeds, hands, "
                                 "log_sha256, hand_values, totals FROM matches"))


def _logs(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run_dir / "logs").glob("*.log"))}


def _same_as_local(tmp_path: Path, ray_dir: Path, ray_out: str, strat: Path, **kw: int) -> None:
    local = _run(_argv(tmp_path / "local", strat, **kw))
    assert local.returncode == 0, local.stderr
    assert ray_out == local.stdout
    assert _rows(ray_dir) == _rows(tmp_path / "local")
    assert _logs(ray_dir) == _logs(tmp_path / "local")


def test_results_equal_the_local_backend_and_files_are_shipped(
        tmp_path: Path, cluster: tuple[str, Path]) -> None:
    address, cache = cluster
    strat = tmp_path / "mine.strat"  # a file only the driver knows of
    shutil.copy(STRAT, strat)
    ray_dir = tmp_path / "ray"
    out = _run([*_argv(ray_dir, strat), "--backend", "ray", "--address", address])
    assert out.returncode == 0, out.stderr
    sha = hashlib.sha256(strat.read_bytes()).hexdigest()
    shipped = cache / "shipped" / f"{sha}.strat"
    assert shipped.read_bytes() == strat.read_bytes()  # the workers played this copy
    _same_as_local(tmp_path, ray_dir, out.stdout, strat)


def _stored(run_dir: Path) -> int:
    try:
        with sqlite3.connect(run_dir / "results.sqlite") as db:
            return int(db.execute("SELECT COUNT(*) FROM matches").fetchone()[0])
    except sqlite3.Error:
        return 0


def _ray_worker_pids() -> list[int]:
    out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True,
                         check=True).stdout
    return [int(line.split(None, 1)[0]) for line in out.splitlines()
            if "ray::run_shipped_job_json" in line]


def test_a_killed_ray_worker_is_retried(tmp_path: Path, cluster: tuple[str, Path]) -> None:
    address, _ = cluster
    ray_dir = tmp_path / "ray"
    proc = subprocess.Popen([*_argv(ray_dir, STRAT, hands=400, matches=3), "--backend", "ray",
                             "--address", address], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)
    killed = 0
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None and not killed:
        pids = _ray_worker_pids()
        if pids and _stored(ray_dir) >= 1:
            os.kill(pids[0], signal.SIGKILL)
            killed = pids[0]
        time.sleep(0.05)
    out, _ = proc.communicate(timeout=600)
    assert killed, "no Ray worker was seen running a match"
    if proc.returncode != 0:  # the run may also end short of retries: then re-run resumes
        again = _run([*_argv(ray_dir, STRAT, hands=400, matches=3), "--backend", "ray",
                      "--address", address])
        assert again.returncode == 0, again.stderr
        out = again.stdout
    _same_as_local(tmp_path, ray_dir, out, STRAT, hands=400, matches=3)


def test_a_killed_driver_resumes(tmp_path: Path, cluster: tuple[str, Path]) -> None:
    address, _ = cluster
    ray_dir = tmp_path / "ray"
    argv = [*_argv(ray_dir, STRAT, hands=400, matches=3), "--backend", "ray", "--address",
            address]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=ENV)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None and _stored(ray_dir) < 2:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    kept = _rows(ray_dir)
    assert 2 <= len(kept) < 18
    again = _run(argv)
    assert again.returncode == 0, again.stderr
    rows = _rows(ray_dir)
    assert len(rows) == 18 and set(kept) <= set(rows)  # nothing lost, nothing twice
    _same_as_local(tmp_path, ray_dir, again.stdout, STRAT, hands=400, matches=3)


def test_an_unreachable_cluster_is_one_line_at_once(tmp_path: Path) -> None:
    """Nothing listens at --address: one line and exit 1 in seconds (Ray alone retries for
    minutes)."""
    port = free_port()  # bound, then closed: refuses connections
    argv = [*_argv(tmp_path / "r", STRAT, hands=10, matches=1), "--backend", "ray",
            "--address", f"127.0.0.1:{port}"]
    start = time.monotonic()
    done = _run(argv, timeout=120)
    assert done.returncode == 1, done.stderr
    assert done.stderr.count("\n") == 1
    assert "expected a running Ray cluster at --address " in done.stderr
    assert f"'127.0.0.1:{port}'" in done.stderr
    assert time.monotonic() - start < 60
