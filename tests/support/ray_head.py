"""A private Ray head on 127.0.0.1 for the tests that need a real cluster.

``ray start --head --block`` runs as a child of the test process, in a session and a temp
directory of its own, and is stopped by signalling it, then its process group: any other Ray on the
machine (a developer's own cluster, another test worker's head) is left alone, which
``ray stop`` would not do. The caller's environment should carry
``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (Ray keeps 127.0.0.1 then) and, for token
authentication, ``RAY_AUTH_MODE=token`` and ``RAY_AUTH_TOKEN``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

RAY = Path(sys.executable).parent / "ray"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ready(port: int) -> bool:
    """True once the head's GCS accepts connections on 127.0.0.1."""
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _stop(head: subprocess.Popen[bytes]) -> None:
    """Stop the head and everything it started (its process group): SIGTERM to ``ray
    start`` alone (it drains the node through the GCS, then stops its processes: 2-3 s; a
    SIGTERM to the whole group kills the GCS first, and the drain then waits 30 s for it),
    then SIGKILL for whatever is left."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(head.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        head.wait(timeout=30)
    time.sleep(1.0)  # let the raylet's children go with it
    with contextlib.suppress(ProcessLookupError):
        os.killpg(head.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        head.wait(timeout=30)


@contextlib.contextmanager
def ray_head(env: Mapping[str, str], log_dir: Path, num_cpus: int = 2,
             timeout: float = 180.0) -> Iterator[str]:
    """A one-node Ray cluster on 127.0.0.1 for the block; yields its address.

    Raises:
        RuntimeError: if the head does not come up within ``timeout`` seconds (with the
            end of its log).
    """
    temp = Path(tempfile.mkdtemp(prefix="ray-", dir="/tmp"))  # short: Ray's socket paths
    port = free_port()
    with (log_dir / "ray-head.log").open("w+") as log:
        head = subprocess.Popen(
            [str(RAY), "start", "--head", "--block", "--node-ip-address", "127.0.0.1",
             "--port", str(port), "--num-cpus", str(num_cpus), "--include-dashboard",
             "false", "--disable-usage-stats", "--temp-dir", str(temp)],
            env=dict(env), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + timeout
            while not _ready(port):
                if head.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"ray start failed:\n{log.read()[-3000:]}")
                time.sleep(0.5)
            yield f"127.0.0.1:{port}"
        finally:
            _stop(head)
            shutil.rmtree(temp, ignore_errors=True)
