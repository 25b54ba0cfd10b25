"""The private Ray of ``--backend ray`` without ``--address`` (:mod:`jobs.ray`,
shared by ``acpc-match`` and ``acpc-strategy graft``): loopback only, private files.

One real Ray start, as a user gets it: ``acpc-match --backend ray`` in a fresh process
whose environment has none of the tests' Ray variables (``tests/conftest.py`` sets
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` for the test process; a user's shell does not) and
an empty ``HOME``. Once Ray's workers are up, the driver is stopped (SIGSTOP) so that
nothing ends while it is looked at; then, read from ``/proc`` (``/proc/net/{tcp,tcp6,udp,
udp6}`` and each process's ``fd``): every socket that the driver and the processes it
started (GCS, raylet, agents, workers) listen on is on a loopback address; Ray's
directory is a fresh ``/tmp/acpc-ray-*`` made 0700, no file under it can be read by
others, no file under it or in ``HOME`` holds the auth token. The driver is continued, its
table and logs must equal the local backend's, and nothing of the Ray is left at the end
(no process, no directory).

Needs the ``cluster`` extra (``ray``); CI installs it.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from jobs.ray import TEMP_PREFIX
from tests.support import ROOT

pytest.importorskip("ray")

UNSET = ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_AUTH_MODE", "RAY_AUTH_TOKEN",
         "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS")
"""What the tests' environment may carry and a user's does not."""


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    words = raw.decode(errors="replace").split("\0")  # a renamed process: "ray::IDLE   "
    return [w.strip() for w in words if w.strip()]


def _descendants(root: int) -> set[int]:
    """``root`` and every process below it (by parent pid)."""
    parent: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                text = Path(f"/proc/{entry}/stat").read_text()
                parent[int(entry)] = int(text.rsplit(")", 1)[1].split()[1])
    tree = {root}
    while True:
        more = {p for p, pp in parent.items() if pp in tree and p not in tree}
        if not more:
            return tree
        tree |= more


def _address(hexaddr: str) -> str:
    """``/proc/net`` form (32-bit words in host order) to text."""
    raw = b"".join(bytes.fromhex(hexaddr[i:i + 8])[::-1] for i in range(0, len(hexaddr), 8))
    return socket.inet_ntop(socket.AF_INET if len(raw) == 4 else socket.AF_INET6, raw)


def _bound_sockets() -> dict[str, tuple[str, str, int]]:
    """Socket inode -> (protocol, local address, port) for every TCP socket listening and
    every UDP socket bound but not connected, in this network namespace."""
    found = {}
    for proto, state in (("tcp", "0A"), ("tcp6", "0A"), ("udp", "07"), ("udp6", "07")):
        for line in Path(f"/proc/net/{proto}").read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == state:
                addr, port = fields[1].split(":")
                found[fields[9]] = (proto, _address(addr), int(port, 16))
    return found


def _listeners(pids: set[int]) -> list[tuple[int, str, str, str, int]]:
    """(pid, process name, protocol, address, port) of every socket of ``pids`` from
    :func:`_bound_sockets`."""
    bound = _bound_sockets()
    out = []
    for pid in sorted(pids):
        name = (_cmdline(pid) or ["?"])[0]
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    inode = target[len("socket:["):-1] if target.startswith("socket:[") else ""
                    if inode in bound:
                        out.append((pid, name, *bound[inode]))
    return out


def _loopback(text: str) -> bool:
    ip = ipaddress.ip_address(text)
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def _kind(name: str) -> str:
    """Which part of Ray a process is, by its command line's first word."""
    base = os.path.basename(name)
    if base in ("gcs_server", "raylet"):
        return base
    if name in ("ray::IDLE", "ray::run_shipped_job_json"):
        return "worker"
    return name


def _argv(run_dir: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "evaluation.cli", "--game", "leduc.limit.2p.game",
            "--transport", "inproc", "--hands", "300", "--matches", "2", "-v",
            "a=builtin:random", "-v", "b=builtin:random,seed=5", "--run-dir", str(run_dir),
            "--quiet", *more]


def _logs(run_dir: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((run_dir / "logs").glob("*.log"))}


def _wait_for(what: str, check: Callable[[], tuple[bool, object]],
              proc: subprocess.Popen[str], limit: float = 180.0) -> None:
    """Poll ``check`` until it says done; fail if the driver ends first or after ``limit``
    s (with what ``check`` saw last)."""
    deadline = time.monotonic() + limit
    while not (result := check())[0]:
        last = result[1]
        if proc.poll() is not None:
            pytest.fail(f"acpc-match ended before {what}: {proc.communicate()[1][-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {what} within {limit:.0f} s: {last!r}")
        time.sleep(0.02)


@contextlib.contextmanager
def _driver(argv: list[str], env: dict[str, str]
            ) -> Iterator[tuple[subprocess.Popen[str], set[int], list[Path]]]:
    """The driver, the pids of its Ray seen so far and its Ray directory once found: if the
    test fails, whatever is left of them is killed or removed."""
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    seen: set[int] = set()
    private: list[Path] = []
    try:
        yield proc, seen, private
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGCONT)
            proc.kill()
            proc.communicate()
        for pid in seen - {proc.pid}:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for path in private:
            shutil.rmtree(path, ignore_errors=True)


def test_the_private_ray_is_on_loopback_with_private_files(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env.update(HOME=str(home), RAY_USAGE_STATS_ENABLED="0")
    argv = _argv(tmp_path / "ray", "--workers", "2", "--backend", "ray")
    with _driver(argv, env) as (proc, seen, private):
        def connected() -> tuple[bool, object]:  # the driver listens once connected
            seen.update(_descendants(proc.pid))
            names = {(_cmdline(p) or [""])[0] for p in seen}
            worker = any(_kind(name) == "worker" for name in names)
            return worker and bool(_listeners({proc.pid})), names

        _wait_for("connected driver and Ray worker", connected, proc)
        os.kill(proc.pid, signal.SIGSTOP)  # nothing of the run ends while it is looked at
        gcs = next(p for p in seen if _kind((_cmdline(p) or [""])[0]) == "gcs_server")
        log_dir = Path(next(a for a in _cmdline(gcs) if a.startswith("--log_dir="))
                       .split("=", 1)[1])
        private.extend(p for p in log_dir.parents if p.name.startswith(TEMP_PREFIX))
        need = {"driver", "gcs_server", "raylet", "worker", "ray::RuntimeEnvAgent"}

        def all_listening() -> tuple[bool, object]:
            seen.update(_descendants(proc.pid))
            kinds = {"driver" if pid == proc.pid else _kind(name)
                     for pid, name, *_ in _listeners(seen)}
            return need <= kinds, kinds

        _wait_for("listening socket of each Ray part", all_listening, proc)
        listeners = _listeners(seen)
        public = [entry for entry in listeners if not _loopback(entry[3])]
        assert not public, f"not on loopback: {public}"

        assert private, f"Ray's logs are in {log_dir}, not in a fresh /tmp/{TEMP_PREFIX}*"
        info = private[0].stat()
        assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
        files = [p for p in private[0].rglob("*") if p.is_file() and not p.is_symlink()]
        assert len(files) > 5  # Ray's logs and port files
        readable = [(p, oct(p.stat().st_mode)) for p in files if p.stat().st_mode & 0o077]
        assert not readable, f"readable by others: {readable}"
        environ = dict(item.split("=", 1) for item in Path(f"/proc/{gcs}/environ")
                       .read_text().split("\0") if "=" in item)  # as Ray started it
        token = environ.get("RAY_AUTH_TOKEN", "")
        assert environ.get("RAY_AUTH_MODE") == "token" and len(token) >= 32
        holding = [p for p in files + list(home.rglob("*"))
                   if p.is_file() and token.encode() in p.read_bytes()]
        assert not holding, f"the token is in {holding}"
        assert not list(home.iterdir())  # no ~/.ray/auth_token

        os.kill(proc.pid, signal.SIGCONT)
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err
        assert not private[0].exists()
        gone = time.monotonic() + 60
        while (alive := [p for p in seen if Path(f"/proc/{p}").exists()
                         and _cmdline(p)]) and time.monotonic() < gone:
            time.sleep(0.1)
        assert not alive, f"left running: {[_cmdline(p)[:1] for p in alive]}"

    local = subprocess.run(_argv(tmp_path / "local", "--workers", "1"), cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=600, check=False)
    assert local.returncode == 0, local.stderr
    assert out == local.stdout
    assert _logs(tmp_path / "ray") == _logs(tmp_path / "local")
