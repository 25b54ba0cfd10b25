"""Build the compiled core (``acpc-arena compile``): mypyc on :data:`agent.acpc.native.MODULES`.

The sources are copied to a scratch directory (the modules with the rest of ``agent.acpc``
and the packages' ``__init__`` files, which mypy reads but mypyc does not compile), compiled
there with ``python -m mypyc`` (which needs mypy and a C compiler: ``pip install
'acpc-arena[fast]'`` and gcc or clang), and the extension modules are moved, with a
manifest, into :func:`agent.acpc.native.build_dir` of the sources' key in one rename. A
second build of the same sources replaces the first. Afterwards a fresh interpreter checks
that the build is served (:func:`check_served`).

Progress goes to ``say``; the compile takes about 20 s on one core.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from agent.acpc.errors import AcpcError, UsageError
from agent.acpc.native import (
    BUILD_FORMAT,
    MANIFEST,
    MODULES,
    build_dir,
    build_inputs,
    extension_suffix,
    project_root,
    source_key,
    source_path,
)

COMPILE_TIMEOUT_S = 1800
"""A compile that has not finished after this long is stopped (it takes about 20 s)."""


class BuildError(AcpcError, RuntimeError):
    """mypyc or the C compiler failed; the message ends with their last lines."""


def build(say: Callable[[str], None] = lambda _: None) -> Path:
    """Compile the core for the sources on disk; returns the build's directory.

    Raises:
        UsageError: if mypyc is not installed (one line: what to install).
        BuildError: if the compile fails (with mypyc's last lines).
    """
    if importlib.util.find_spec("mypyc") is None:
        raise UsageError(
            f"expected mypyc (part of mypy) to compile the core: pip install "
            f"'acpc-arena[fast]', got no mypyc for {sys.executable!r}"
        )
    root = project_root()
    key = source_key(root)
    target = build_dir(key)
    target.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="acpc-native-") as tmp:
        scratch = Path(tmp) / "src"
        for rel in build_inputs(root):
            (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / rel, scratch / rel)
        files = [str(source_path(Path("."), m)) for m in MODULES]
        say(f"compiling {len(MODULES)} modules with mypyc (about 20 s) ...")
        env = dict(os.environ, MYPYC_OPT_LEVEL=os.environ.get("MYPYC_OPT_LEVEL", "3"))
        try:
            done = subprocess.run(
                [sys.executable, "-m", "mypyc", *files], cwd=scratch, env=env,
                capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S, check=False,
            )
        except subprocess.TimeoutExpired:
            raise BuildError(f"expected mypyc to finish within {COMPILE_TIMEOUT_S} s, "
                             "got no end; nothing was installed") from None
        if done.returncode != 0:
            tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
            raise BuildError(f"expected mypyc to compile the core, got exit status "
                             f"{done.returncode}; nothing was installed. Its last lines:\n{tail}")
        suffix = extension_suffix()
        groups = sorted(p.name for p in scratch.glob(f"*__mypyc{suffix}"))
        if len(groups) != 1:
            raise BuildError(f"expected one shared library *__mypyc{suffix} from mypyc, got "
                             f"{groups!r}")
        stage = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-", dir=target.parent))
        try:
            modules: dict[str, str] = {}
            for module in MODULES:
                built = source_path(Path("."), module).with_suffix("").as_posix() + suffix
                (stage / built).parent.mkdir(parents=True, exist_ok=True)
                shutil.move(scratch / built, stage / built)
                modules[module] = built
            shutil.move(scratch / groups[0], stage / groups[0])
            manifest = {
                "format": BUILD_FORMAT, "key": key, "python": sys.version.split()[0],
                "group": groups[0][: -len(suffix)], "modules": modules,
                "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            (stage / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n",
                                          encoding="utf-8")
            if target.exists():  # a rebuild of the same sources replaces the old build
                shutil.rmtree(target, ignore_errors=True)
            try:
                os.replace(stage, target)
            except OSError:
                if not (target / MANIFEST).is_file():
                    raise
                # Another compile of the same sources finished first: its build is as good.
                shutil.rmtree(stage, ignore_errors=True)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
    say(f"built in {time.monotonic() - start:.1f} s: {target}")
    return target


CHECK_SCRIPT = (
    "import json, dealer.engine\n"
    "from agent.acpc import native\n"
    "s = native.status()\n"
    "mods = [__import__(m, fromlist=['_']) for m in native.MODULES]\n"
    "print(json.dumps({'active': s.active, 'reason': s.reason,\n"
    "                  'compiled': [m.__name__ for m in mods if native.is_compiled(m)]}))\n"
)
"""Run in a fresh interpreter: what :func:`agent.acpc.native.activate` found there."""


def served(env: dict[str, str] | None = None) -> dict[str, object]:
    """What a fresh interpreter (environment ``env``) found: ``active``, ``reason`` and the
    ``compiled`` modules (names of those loaded from a build).

    Raises:
        BuildError: if that interpreter failed (with its last line).
    """
    done = subprocess.run([sys.executable, "-c", CHECK_SCRIPT], capture_output=True,
                          text=True, env=env, cwd=project_root(), timeout=120, check=False)
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "?"
        raise BuildError(f"expected a fresh interpreter to import the core, got exit status "
                         f"{done.returncode}: {last}")
    got: dict[str, object] = json.loads(done.stdout)
    return got


def check_served(env: dict[str, str] | None = None) -> tuple[bool, str]:
    """Whether a fresh interpreter serves every compiled module, and what it said."""
    try:
        got = served(env)
    except BuildError as exc:
        return False, str(exc)
    compiled = got["compiled"]
    ok = got["active"] is True and isinstance(compiled, list) and sorted(compiled) == sorted(
        MODULES)
    return ok, str(got["reason"])
