"""The compiled core, a build step (``acpc-arena compile``): mypyc on :data:`MODULES`, the
extension modules placed beside their sources.

What it builds: the hot modules of the core (rules, cards, dealing, evaluator, match
states, protocol) and the dealer's match engine and log lines, :data:`MODULES`. Not
``dealer.server``: compiled, it measured only about 3% more hands/s on the wire, and its
tests replace its functions (compiled callers would not see that).

Where it goes: in place, as ``mypyc --inplace`` does. Each module's extension
(``agent/acpc/betting.cpython-311-x86_64-linux-gnu.so`` beside ``betting.py``), the one
shared library they call (:data:`GROUP`, ``agent/acpc/compiled__mypyc.<suffix>``) and a
manifest (:data:`MANIFEST_NAME`, beside it) written last. Python's import prefers an
extension module to the source of the same name in the same directory, so from then on every
import of these modules (every command, the tests, worker processes) loads the compiled
ones: no hook, no check, nothing at all happens when the core is imported. Same names, same
behaviour (the core's and the dealer's tests pass compiled), about half the CPU per hand.

Staleness is a build concern too. The manifest records the sha256 of every source the build
read (:func:`build_inputs`) and their key (:func:`source_key`). After an edit or a pull,
Python still loads the old extensions: :func:`status` (``acpc-arena compile --status``)
then says ``stale`` and which sources changed, the test suite refuses to start
(``tests/conftest.py``), and ``acpc-arena compile`` rebuilds or ``acpc-arena compile
--remove`` goes back to the pure modules. A build whose manifest is damaged, or whose files
cannot be loaded, is reported with the reason; the extensions only serve the interpreter
they were built for (another Python ignores them by their suffix and runs the pure modules).

Names ``dealer.engine`` (it builds the dealer too), so it lives above the dealer, beside
``acpc-arena``. Imports only the stdlib; mypyc (the ``fast`` extra) and a C compiler are
needed to build.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from agent.acpc.errors import AcpcError, UsageError

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
"""What ``acpc-arena compile`` compiles (module names)."""

READ_TOO: tuple[str, ...] = ("agent.data",)
"""Modules the compiled ones import from outside their packages: mypy reads them, mypyc
does not compile them."""

GROUP = "agent.acpc.compiled"
"""The mypyc group: its shared library is the module ``agent.acpc.compiled__mypyc``."""

MANIFEST_NAME = "compiled__mypyc.json"
"""The build's manifest, beside the shared library in ``agent/acpc/``."""

BUILD_FORMAT = 2
"""Part of the key and the manifest: a change of the build's layout invalidates old builds."""

COMPILE_TIMEOUT_S = 1800
"""A compile that has not finished after this long is stopped (it took 39 s on 2 cores
at load 5, 2026-11-28)."""

NO_BUILD = "no build: run acpc-arena compile"


class BuildError(AcpcError, RuntimeError):
    """mypyc or the C compiler failed; the message ends with their last lines."""


class BuildInvalid(AcpcError, ValueError):
    """A build's manifest or files are not what :func:`read_manifest` expects."""


def project_root() -> Path:
    """The directory holding the ``agent`` and ``dealer`` packages being imported."""
    import agent
    import dealer

    root = Path(agent.__file__).resolve().parent.parent
    other = Path(dealer.__file__).resolve().parent.parent
    if other != root:
        raise UsageError(f"expected the agent and dealer packages in one directory to compile "
                         f"the core, got {str(root)!r} and {str(other)!r}")
    return root


def source_path(root: Path, module: str) -> Path:
    """The source file of the module ``module`` under ``root``."""
    base = root.joinpath(*module.split("."))
    return base / "__init__.py" if (base / "__init__.py").is_file() else base.with_suffix(".py")


def extension_suffix() -> str:
    """This interpreter's extension-module suffix (``.cpython-311-x86_64-linux-gnu.so``)."""
    return importlib.machinery.EXTENSION_SUFFIXES[0]


def _is_suffix(text: object) -> TypeGuard[str]:
    """An extension-module suffix (``.cpython-311-x86_64-linux-gnu.so``), no path in it."""
    return isinstance(text, str) and re.fullmatch(r"\.[A-Za-z0-9_.-]+\.(so|pyd)", text) \
        is not None and ".." not in text


def _rel(module: str) -> Path:
    return Path(*module.split("."))


def build_inputs(root: Path) -> list[Path]:
    """Every source a build reads, relative to ``root``: the :data:`MODULES`, the rest of
    ``agent.acpc`` (mypy follows the compiled modules' imports into it, and mypyc may take
    constants from it), :data:`READ_TOO` and the packages' ``__init__`` files. Sorted; not
    checked to exist (:func:`source_key` reads them).
    """
    wanted = {_rel(m).with_suffix(".py") for m in MODULES}
    wanted.update(_rel(m) / "__init__.py" for m in READ_TOO)
    for module in (*MODULES, *READ_TOO):
        parts = module.split(".")[:-1]
        for i in range(1, len(parts) + 1):
            wanted.add(Path(*parts[:i], "__init__.py"))
    wanted.update(p.relative_to(root) for p in (root / "agent" / "acpc").glob("*.py"))
    return sorted(wanted)


def _digests(root: Path) -> dict[str, str]:
    return {rel.as_posix(): hashlib.sha256((root / rel).read_bytes()).hexdigest()
            for rel in build_inputs(root)}


def _key(digests: Mapping[str, str]) -> str:
    text = f"acpc-arena compiled core {BUILD_FORMAT}\n" + "".join(
        f"{rel} {digest}\n" for rel, digest in sorted(digests.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def source_key(root: Path) -> str:
    """sha256 (hex) over :data:`BUILD_FORMAT` and the path and bytes of every
    :func:`build_inputs` file: any edit to what a build reads gives another key.

    Raises:
        OSError: if a source cannot be read.
    """
    return _key(_digests(root))


def manifest_path(root: Path) -> Path:
    """Where a build's manifest is under ``root``."""
    return root / _rel(GROUP).parent / MANIFEST_NAME


def build_files(root: Path, suffix: str | None = None) -> dict[str, Path]:
    """The files a build puts under ``root`` (module name -> file), the shared library
    (``GROUP__mypyc``) included, for the extension ``suffix`` (default: this Python's)."""
    ext = extension_suffix() if suffix is None else suffix
    names = (*MODULES, f"{GROUP}__mypyc")
    return {name: root / _rel(name).parent / f"{_rel(name).name}{ext}" for name in names}


@dataclass(frozen=True, slots=True)
class Manifest:
    """A build's manifest, checked (:func:`read_manifest`)."""

    key: str
    suffix: str
    inputs: dict[str, str]
    """Each source the build read (relative path) -> its sha256."""


def read_manifest(root: Path) -> Manifest:
    """The manifest of the build under ``root``, checked: its format, its fields and its
    modules (:func:`check_files` checks the files).

    Raises:
        BuildInvalid: if it is missing or malformed.
    """
    path = manifest_path(root)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BuildInvalid(f"expected a readable {MANIFEST_NAME} in {path.parent}, got "
                           f"{exc}") from None
    if not isinstance(data, dict) or data.get("format") != BUILD_FORMAT:
        got_format = data.get("format") if isinstance(data, dict) else data
        raise BuildInvalid(f"expected build format {BUILD_FORMAT} in {path}, got "
                           f"{got_format!r}")
    key, suffix, inputs, modules = (data.get(k) for k in ("key", "suffix", "inputs",
                                                         "modules"))
    if not isinstance(key, str) or not _is_suffix(suffix) or not isinstance(
            inputs, dict) or not all(isinstance(v, str) for v in inputs.values()):
        raise BuildInvalid(f"expected a key, a suffix and the sources' sha256 in {path}, got "
                           f"{sorted(data)!r}")
    want = {name: file.relative_to(root).as_posix()
            for name, file in build_files(root, suffix).items()}
    if modules != want:
        got = sorted(modules) if isinstance(modules, dict) else modules
        raise BuildInvalid(f"expected the shared library and the modules {list(MODULES)} "
                           f"in {path}, got {got!r}")
    return Manifest(key, suffix, {str(k): str(v) for k, v in inputs.items()})


def check_files(root: Path) -> None:
    """Check that every file of this Python's build under ``root`` is there.

    Raises:
        BuildInvalid: naming the first missing file.
    """
    for name, file in build_files(root).items():
        if not file.is_file():
            raise BuildInvalid(f"expected {file} for {name} in the build, got no such file")


@dataclass(frozen=True, slots=True)
class Status:
    """What :func:`status` found. ``state``: ``none`` (no build: the pure modules run),
    ``in use``, ``stale`` (the sources changed since the build, which Python still loads),
    ``other python`` (a build for another interpreter: this one runs the pure modules) or
    ``damaged`` (a manifest or file is wrong, or the build cannot be loaded)."""

    state: str
    reason: str

    @property
    def ok(self) -> bool:
        """Nothing to fix: no build, or a build in use for exactly these sources."""
        return self.state in ("none", "in use", "other python")


def status(root: Path | None = None, *, load: bool = True,
           env: Mapping[str, str] | None = None) -> Status:
    """Whether the build under ``root`` (default: :func:`project_root`) is what these sources
    compile to, and, with ``load``, that a fresh interpreter (environment ``env``) loads
    every compiled module from it. Never raises for a bad build: the status says why."""
    base = project_root() if root is None else root
    present = [f for f in build_files(base).values() if f.exists()]
    if not manifest_path(base).exists():
        if present:
            return Status("damaged", f"compiled files without a manifest: "
                          f"{[str(f.relative_to(base)) for f in present]} (run acpc-arena "
                          f"compile, or acpc-arena compile --remove)")
        return Status("none", NO_BUILD)
    try:
        manifest = read_manifest(base)
    except BuildInvalid as exc:
        return Status("damaged", f"{exc} (run acpc-arena compile, or acpc-arena compile "
                      f"--remove)")
    if manifest.suffix != extension_suffix():
        return Status("other python", f"the build is for {manifest.suffix}, this Python "
                      f"loads {extension_suffix()}: it runs the pure modules")
    try:
        digests = _digests(base)
    except OSError as exc:
        return Status("damaged", f"could not read the core's sources: {exc}")
    if _key(digests) != manifest.key:
        changed = sorted(set(digests.items()) ^ set(manifest.inputs.items()))
        names = sorted({rel for rel, _ in changed}) or [f"build format {BUILD_FORMAT}"]
        return Status("stale", f"the sources changed since the build ({', '.join(names)}), "
                      f"and Python still loads it: run acpc-arena compile, or acpc-arena "
                      f"compile --remove")
    try:
        check_files(base)
    except BuildInvalid as exc:
        return Status("damaged", f"{exc} (run acpc-arena compile, or acpc-arena compile "
                      f"--remove)")
    if not load:
        return Status("in use", "compiled modules for these sources")
    got = served(base, env)
    if isinstance(got, str):
        return Status("damaged", f"the build could not be loaded: {got} (run acpc-arena "
                      f"compile, or acpc-arena compile --remove)")
    missing = sorted(set(MODULES) - set(got))
    if missing:
        return Status("damaged", f"a fresh interpreter loaded the pure {missing}")
    return Status("in use", "compiled modules for these sources")


CHECK_SCRIPT = (
    "import importlib, json, sys\n"
    "mods = [importlib.import_module(m) for m in json.loads(sys.argv[1])]\n"
    "print(json.dumps([m.__name__ for m in mods\n"
    "                  if not str(getattr(m, '__file__', '')).endswith('.py')]))\n"
)
"""Run in a fresh interpreter: which of the modules it was given were loaded compiled."""


def served(root: Path, env: Mapping[str, str] | None = None) -> list[str] | str:
    """The :data:`MODULES` a fresh interpreter importing from ``root`` (first on its
    ``PYTHONPATH``; environment ``env``) loads compiled, or, if it failed, its last line."""
    base = dict(os.environ if env is None else env)
    base["PYTHONPATH"] = os.pathsep.join(x for x in (str(root), base.get("PYTHONPATH", ""))
                                         if x)
    done = subprocess.run([sys.executable, "-c", CHECK_SCRIPT, json.dumps(list(MODULES))],
                          capture_output=True, text=True, env=base, cwd=root, timeout=120,
                          check=False)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return lines[-1] if lines else f"exit status {done.returncode}"
    got: list[str] = json.loads(done.stdout)
    return got


def is_compiled(module: object) -> bool:
    """True if the imported ``module`` was loaded from an extension module."""
    return not str(getattr(module, "__file__", "")).endswith(".py")


def remove(root: Path | None = None) -> list[Path]:
    """Delete the build under ``root`` (default: :func:`project_root`), for every Python's
    suffix the manifest or this interpreter names; returns what was deleted."""
    base = project_root() if root is None else root
    suffixes = {extension_suffix()}
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):  # no manifest: ours
        theirs = json.loads(manifest_path(base).read_text(encoding="utf-8"))["suffix"]
        if _is_suffix(theirs):
            suffixes.add(theirs)
    gone = []
    for file in [manifest_path(base), *(f for s in sorted(suffixes)
                                          for f in build_files(base, s).values())]:
        if file.is_file():
            file.unlink()
            gone.append(file)
    return gone


SETUP_SCRIPT = """\
import sys
from setuptools import setup
from mypyc.build import mypycify

setup(name="acpc_arena_compiled_core", script_args=["build_ext", "--inplace"],
      ext_modules=mypycify(sys.argv[1:], opt_level="{opt}", group_name="{group}"))
"""


def build(say: Callable[[str], None] = lambda _: None, root: Path | None = None) -> Path:
    """Compile the core's sources under ``root`` (default: :func:`project_root`) and place
    the build beside them (replacing an earlier one); returns the manifest's path.

    Raises:
        UsageError: if mypyc is not installed (one line: what to install).
        BuildError: if the compile fails (with mypyc's last lines); nothing is installed.
    """
    if importlib.util.find_spec("mypyc") is None:
        raise UsageError(
            f"expected mypyc (part of mypy) to compile the core: pip install "
            f"'acpc-arena[fast]', got no mypyc for {sys.executable!r}"
        )
    base = project_root() if root is None else root
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="acpc-compile-") as tmp:
        scratch = Path(tmp)
        for rel in build_inputs(base):
            (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(base / rel, scratch / rel)
        digests = _digests(scratch)  # what is compiled, even if a source changes meanwhile
        (scratch / "setup.py").write_text(SETUP_SCRIPT.format(
            opt=os.environ.get("MYPYC_OPT_LEVEL", "3"), group=GROUP), encoding="utf-8")
        files = [_rel(m).with_suffix(".py").as_posix() for m in MODULES]
        say(f"compiling {len(MODULES)} modules with mypyc (about 40 s) ...")
        try:
            done = subprocess.run(
                [sys.executable, "setup.py", *files], cwd=scratch, capture_output=True,
                text=True, timeout=COMPILE_TIMEOUT_S, check=False,
            )
        except subprocess.TimeoutExpired:
            raise BuildError(f"expected mypyc to finish within {COMPILE_TIMEOUT_S} s, "
                             "got no end; nothing was installed") from None
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise BuildError(f"expected mypyc to compile the core, got exit status "
                             f"{done.returncode}; nothing was installed. Its last lines:\n{tail}")
        built = build_files(scratch)
        missing = [str(f.relative_to(scratch)) for f in built.values() if not f.is_file()]
        if missing:
            raise BuildError(f"expected mypyc to write {missing}, got no such files; nothing "
                             f"was installed")
        remove(base)
        for file in built.values():
            target = base / file.relative_to(scratch)
            staged = target.with_name(f".{target.name}.{os.getpid()}.tmp")
            shutil.copyfile(file, staged)
            os.replace(staged, target)
    manifest = {
        "format": BUILD_FORMAT, "key": _key(digests), "suffix": extension_suffix(),
        "python": sys.version.split()[0],
        "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "modules": {name: file.relative_to(base).as_posix()
                    for name, file in build_files(base).items()},
        "inputs": digests,
    }
    target = manifest_path(base)
    staged = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    staged.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    os.replace(staged, target)
    say(f"built in {time.monotonic() - start:.1f} s: {len(built)} files beside the sources "
        f"under {base}")
    return target
