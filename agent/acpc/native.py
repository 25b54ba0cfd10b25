"""The compiled core: mypyc builds of the hot modules, used when one matches the sources.

``acpc-arena compile`` (:mod:`agent.corebuild`) compiles :data:`MODULES` (the rules, match
states, protocol, evaluator, and the dealer's match engine and log lines) with mypyc into
``<cache>/native/<extension suffix>/<key>/``, where ``<cache>`` is ``$ACPC_ARENA_CACHE`` or
``~/.cache/acpc-arena`` and ``<key>`` is :func:`source_key`: a sha256 over the path and the
bytes of every source a build reads (:func:`build_inputs`). Importing :mod:`agent.acpc`
calls :func:`activate`, which computes the key from the sources on disk and, if that build
exists, puts a finder first on ``sys.meta_path`` that loads those modules (and the build's
shared library) from it. So a build runs only for exactly the sources it was compiled from:
after an edit the pure modules run until ``acpc-arena compile`` is run again, and a checkout
with other sources never picks up this build. Nothing else changes: same names, same
behaviour (the core's tests pass compiled), about half the CPU per hand in process
(docs/reports/benchmarks.md).

``ACPC_ARENA_NATIVE=0`` turns it off. A build that cannot be loaded is not used (the pure
modules run; :func:`status` says why). It is all or nothing: the compiled modules call each
other directly, so if any of them was imported before :func:`activate` none is served.

Imports only the stdlib. Reads files (the sources, the build's manifest) and nothing else.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

from agent.acpc.errors import AcpcError

MODULES: tuple[str, ...] = (
    "agent.acpc.cscan",
    "agent.acpc.cards",
    "agent.acpc.gamedef",
    "agent.acpc.betting",
    "agent.acpc.betsize",
    "agent.acpc.dealing",
    "agent.acpc.evaluator",
    "agent.acpc.describe",
    "agent.acpc.matchstate",
    "agent.acpc.protocol",
    "dealer.logfile",
    "dealer.engine",
)
"""What ``acpc-arena compile`` compiles (module names; the sources are beside this package).

Not ``dealer.server``: compiled, it measured only about 3% more hands/s on the wire, and its
tests replace its functions (compiled callers would not see that)."""

BUILD_FORMAT = 1
"""Part of the key: a change of the build's layout or manifest invalidates old builds."""

MANIFEST = "manifest.json"
ENV_SWITCH = "ACPC_ARENA_NATIVE"
NO_BUILD = "no build for these sources (run acpc-arena compile)"


def cache_root() -> Path:
    """``$ACPC_ARENA_CACHE``, else ``~/.cache/acpc-arena`` (see :func:`agent.fileio.cache_dir`)."""
    base = os.environ.get("ACPC_ARENA_CACHE")
    return Path(base) if base else Path.home() / ".cache" / "acpc-arena"


def project_root() -> Path:
    """The directory holding the ``agent`` and ``dealer`` packages."""
    return Path(__file__).resolve().parent.parent.parent


def source_path(root: Path, module: str) -> Path:
    """The source file of ``module`` under ``root``."""
    return root.joinpath(*module.split(".")).with_suffix(".py")


def build_inputs(root: Path) -> list[Path]:
    """Every source a build reads, relative to ``root``: the :data:`MODULES`, the rest of
    ``agent.acpc`` (mypy follows the compiled modules' imports into it, and mypyc may take
    constants from it) and the packages' ``__init__`` files. Sorted; not checked to exist
    (:func:`source_key` reads them).
    """
    wanted = {source_path(root, m).relative_to(root) for m in MODULES}
    for package in {m.rsplit(".", 1)[0] for m in MODULES}:
        parts = package.split(".")
        for i in range(1, len(parts) + 1):
            wanted.add(Path(*parts[:i], "__init__.py"))
    wanted.update(p.relative_to(root) for p in (root / "agent" / "acpc").glob("*.py"))
    return sorted(wanted)


def source_key(root: Path) -> str:
    """sha256 (hex) over :data:`BUILD_FORMAT` and the path and bytes of every
    :func:`build_inputs` file: any edit to what a build reads gives another key.

    Raises:
        OSError: if a source cannot be read.
    """
    digest = hashlib.sha256(f"acpc-arena native {BUILD_FORMAT}\n".encode())
    for rel in build_inputs(root):
        data = (root / rel).read_bytes()
        digest.update(f"{rel.as_posix()} {len(data)}\n".encode())
        digest.update(data)
    return digest.hexdigest()


def extension_suffix() -> str:
    """This interpreter's extension-module suffix (``.cpython-311-x86_64-linux-gnu.so``)."""
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def build_dir(key: str, cache: Path | None = None) -> Path:
    """Where the build for ``key`` lives (for this interpreter's extension suffix)."""
    base = cache_root() if cache is None else cache
    return base / "native" / extension_suffix().strip(".").rsplit(".", 1)[0] / key


class BuildInvalid(AcpcError, ValueError):
    """A build's manifest or files are not what :func:`read_manifest` expects."""


@dataclass(frozen=True, slots=True)
class Status:
    """What :func:`activate` found: ``active`` or, if not, ``reason`` (else what is served)."""

    active: bool
    reason: str


class _Finder:
    """Serves the compiled modules (and the build's shared library) from one build."""

    def __init__(self, paths: dict[str, Path]) -> None:
        self.paths = paths

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        file = self.paths.get(fullname)
        if file is None:
            return None
        return importlib.util.spec_from_file_location(fullname, file)

    def invalidate_caches(self) -> None:
        """Nothing is cached (importlib calls this on every finder)."""


_status = Status(False, "not checked yet")


def read_manifest(directory: Path) -> tuple[str, dict[str, Path]]:
    """The build's shared-library module name and every module's file, checked.

    Raises:
        BuildInvalid: if the manifest is missing, malformed, or names a missing file.
    """
    try:
        data = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BuildInvalid(f"expected a readable {MANIFEST} in {directory}, got {exc}") from None
    if not isinstance(data, dict) or data.get("format") != BUILD_FORMAT:
        got_format = data.get("format") if isinstance(data, dict) else data
        raise BuildInvalid(f"expected build format {BUILD_FORMAT} in {directory / MANIFEST}, "
                           f"got {got_format!r}")
    group = data.get("group")
    files = data.get("modules")
    if not isinstance(group, str) or not isinstance(files, dict) or set(files) != set(MODULES):
        got = sorted(files) if isinstance(files, dict) else files
        raise BuildInvalid(f"expected the shared library and the modules {list(MODULES)} in "
                           f"{directory / MANIFEST}, got {got!r}")
    bad = [rel for rel in files.values() if not isinstance(rel, str) or Path(rel).is_absolute()
           or ".." in Path(rel).parts]
    if bad:
        raise BuildInvalid(f"expected files inside the build in {directory / MANIFEST}, got "
                           f"{bad!r}")
    paths = {name: directory / str(rel) for name, rel in files.items()}
    paths[group] = directory / f"{group}{extension_suffix()}"
    for name, file in paths.items():
        if not file.is_file():
            raise BuildInvalid(f"expected {file} for {name} in the build, got no such file")
    return group, paths


def activate() -> Status:
    """Serve the compiled modules if a build for the current sources exists (see above).

    Never raises: whatever goes wrong leaves the pure modules in place, and the returned
    :class:`Status` (also :func:`status`) says why.
    """
    global _status
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return _status
    try:
        _status = _activate()
    except Exception as exc:  # an optional speed-up must never stop the core from importing
        _status = Status(False, f"the build could not be checked: {exc!r}")
    return _status


def _activate() -> Status:
    if os.environ.get(ENV_SWITCH, "1") == "0":
        return Status(False, f"turned off by {ENV_SWITCH}=0")
    if not build_dir("").is_dir():  # nothing was ever compiled here: skip the hashing
        return Status(False, NO_BUILD)
    try:
        directory = build_dir(source_key(project_root()))
    except OSError as exc:
        return Status(False, f"could not read the core's sources: {exc}")
    if not directory.is_dir():
        return Status(False, NO_BUILD)
    try:
        group, paths = read_manifest(directory)
    except BuildInvalid as exc:
        return Status(False, str(exc))
    early = [m for m in MODULES if m in sys.modules]
    if early:
        return Status(False, f"imported before the build could be served: {early}")
    finder = _Finder(paths)
    sys.meta_path.insert(0, finder)
    try:
        importlib.import_module(group)
    except Exception as exc:  # ImportError for a damaged file; anything its init raises
        sys.meta_path.remove(finder)
        sys.modules.pop(group, None)
        return Status(False, f"the build could not be loaded: {exc}")
    return Status(True, "compiled modules served from the build")


def status() -> Status:
    """What the last :func:`activate` found."""
    return _status


def is_compiled(module: ModuleType) -> bool:
    """True if ``module`` was loaded from a compiled build."""
    return not str(getattr(module, "__file__", "")).endswith(".py")
