"""The Ray that ``--backend ray`` runs on, for ``acpc-match`` and ``acpc-strategy graft`` alike.

:func:`ray_session` is the one way both commands get Ray: it yields the ``ray`` module,
connected to

* the Ray this process is already connected to, if any (left running at the end);
* the cluster at ``address`` (``HOST:PORT``, ``auto``, ``ray://...``): a ``HOST:PORT`` where
  nothing listens is one line at once (:func:`check_reachable`) instead of Ray's minutes of
  retries; the connection is closed at the end, the cluster is left running;
* otherwise a *private* Ray started for the block and stopped at its end. It never joins
  another cluster found on the machine (``address="local"``) and is private to the user:

  - every process of it listens on 127.0.0.1 only: the GCS, the raylet (node manager and
    object manager), the workers and the driver (their gRPC servers), the runtime-env
    agent and the dashboard agent; no dashboard, no Ray client server, no metrics export
    (Ray's metrics agent needs ``ray[default]``; with it, Ray binds it to the node's
    address, 127.0.0.1 here). Ray resolves ``127.0.0.1`` to the machine's network address
    unless ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` was in the environment when ``ray`` was
    *imported*: it is set before this module imports ray, and a Ray imported earlier
    without it is refused (:class:`RayClusterError`) before anything starts;
  - token authentication with a random token (``RAY_AUTH_MODE=token``, ``RAY_AUTH_TOKEN``
    in the environment of this process and Ray's, which only the user can read in
    ``/proc``), never written to a file: Ray's default would write ``~/.ray/auth_token``
    (0644) and reuse it for every later cluster;
  - Ray's temporary directory (sockets, logs, spilled objects) is ``ray/`` inside a fresh
    ``/tmp/acpc-ray-*`` directory made 0700 (Ray makes its own directories 0777, which the
    0700 one above them closes), and Ray starts under umask 077, so the files it writes
    are 0600. The directory is removed at the end (a driver killed with SIGKILL leaves it).

Opened by :func:`jobs.backends.open_jobs` for ``backend="ray"``; imports the standard
library (and :mod:`agent.acpc.errors`) at import time and ``ray`` only inside
:func:`ray_session`.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import secrets
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent.acpc.errors import AcpcError

LOOPBACK = ("127.0.0.1", "::1")
"""The addresses every process of the private Ray listens on."""

PRIVATE_ENV = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_AUTH_MODE": "token",
               "RAY_USAGE_STATS_ENABLED": "0"}
"""What the private Ray's environment gets (with ``RAY_AUTH_TOKEN``)."""

TEMP_PREFIX = "acpc-ray-"
"""The private Ray's directory is ``/tmp/acpc-ray-*`` (short: Ray's socket paths must fit
in 107 bytes)."""

_TOKEN: list[str] = []
"""This process's token for its private Rays (one per process: Ray caches it)."""


class RayUnavailable(AcpcError, ImportError):
    """Ray is not installed."""


class RayClusterError(AcpcError, ConnectionError):
    """The Ray cluster named by ``--address`` cannot be joined, or the private Ray cannot be
    kept on loopback."""


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """For a ``HOST:PORT`` address: fail at once, in one line, if nothing listens there
    (Ray itself would retry for minutes). Other forms (``auto``, ``ray://...``) are left to
    Ray.

    Raises:
        RayClusterError: if the port refuses the connection or does not answer in time.
    """
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "/" in address:
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise RayClusterError(f"expected a running Ray cluster at --address {address!r} "
                              f"(ray start --head on that machine), got: "
                              f"{exc.strerror or exc}") from None


def _import_ray() -> Any:
    try:
        return importlib.import_module("ray")
    except ImportError:
        raise RayUnavailable("expected ray for --backend ray: pip install "
                             "'acpc-arena[cluster]'") from None


@contextlib.contextmanager
def _environ(values: dict[str, str]) -> Iterator[None]:
    """``os.environ`` with ``values`` for the block, as it was afterwards."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def ray_session(address: str | None, num_cpus: int | None) -> Iterator[Any]:
    """The ``ray`` module, connected for the block (module docstring): to the Ray this
    process already has, to the cluster at ``address``, or to a private Ray on 127.0.0.1
    with ``num_cpus`` CPUs (``address=None``; ``num_cpus=None``: Ray's count of this
    machine's).

    Raises:
        RayUnavailable: if ray is not installed.
        RayClusterError: if ``address`` cannot be joined, or a private Ray would not be on
            loopback.
    """
    if address is None:
        if not _TOKEN:
            _TOKEN.append(os.environ.get("RAY_AUTH_TOKEN") or secrets.token_hex(32))
        with _environ({**PRIVATE_ENV, "RAY_AUTH_TOKEN": _TOKEN[0]}):
            ray = _import_ray()  # after the environment: Ray reads it once, at import
            if ray.is_initialized():
                yield ray
                return
            with _private_ray(ray, num_cpus):
                yield ray
        return
    ray = _import_ray()
    if ray.is_initialized():
        yield ray
        return
    check_reachable(address)
    try:
        ray.init(address=address, log_to_driver=False, include_dashboard=False,
                 configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RayClusterError(f"expected a running Ray cluster at --address {address!r} "
                              f"(ray start --head on that machine), got: {first}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


@contextlib.contextmanager
def _private_ray(ray: Any, num_cpus: int | None) -> Iterator[None]:
    """Start the private Ray (module docstring), stop it and remove its directory at the
    end.

    Raises:
        RayClusterError: if Ray would put this node on a network address (``ray`` imported
            before ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` was set).
    """
    resolved = ray.util.get_node_ip_address()  # what Ray makes of 127.0.0.1
    if resolved not in LOOPBACK:
        raise RayClusterError(
            f"expected the private Ray on 127.0.0.1, but Ray would use {resolved!r} (ray was "
            f"imported before RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 was set; set it in the "
            f"environment)")
    base = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir="/tmp" if sys.platform != "win32"
                                 else None))  # 0700
    try:
        mask = os.umask(0o077)  # Ray's processes, and the files they write, inherit it
        try:
            ray.init(address="local", num_cpus=num_cpus, _node_ip_address=resolved,
                     _temp_dir=str(base / "ray"), include_dashboard=False,
                     log_to_driver=False, configure_logging=False)
        finally:
            os.umask(mask)
        try:
            yield
        finally:
            ray.shutdown()
    finally:
        shutil.rmtree(base, ignore_errors=True)
