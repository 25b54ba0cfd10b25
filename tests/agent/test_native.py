"""The compiled core (``acpc-arena compile``, :mod:`agent.acpc.native`, :mod:`agent.corebuild`).

One real build (mypyc and gcc, about 20-30 s) into a scratch cache; then, in fresh
interpreters: every compiled module is served from it, ``ACPC_ARENA_NATIVE=0`` turns it off,
a damaged build is not used, and the core's and the dealer's tests (rules, match states,
protocol, the reference logs reproduced byte for byte, the dealer over loopback, resume)
pass on the compiled modules.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent.acpc import native
from agent.acpc.errors import UsageError
from agent.corebuild import build, served
from tests.support import ROOT

COMPILED_SUITE = [
    "tests/agent/acpc",
    "tests/agent/test_handeval.py",
    "tests/dealer/test_dealer.py",
    "tests/dealer/test_fast_path.py",
    "tests/dealer/test_resume.py",
]
"""Run again on the compiled modules (they hold the reference logs and the dealer's tests)."""


def _served(cache: Path, **extra: str) -> dict[str, object]:
    env = {**os.environ, "ACPC_ARENA_CACHE": str(cache)}
    env.pop("ACPC_ARENA_NATIVE", None)
    env.update(extra)
    return served(env)


def test_source_key_follows_every_byte_of_every_source_a_build_reads(tmp_path: Path) -> None:
    inputs = native.build_inputs(ROOT)
    assert {native.source_path(Path("."), m) for m in native.MODULES} <= set(inputs)
    assert Path("agent/acpc/errors.py") in inputs and Path("dealer/__init__.py") in inputs
    for rel in inputs:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, tmp_path / rel)
    key = native.source_key(tmp_path)
    assert key == native.source_key(ROOT)
    for rel in (inputs[0], inputs[-1], Path("agent/acpc/errors.py")):
        data = (tmp_path / rel).read_bytes()
        (tmp_path / rel).write_bytes(data + b"\n")
        assert native.source_key(tmp_path) != key, rel
        (tmp_path / rel).write_bytes(data)
    assert native.source_key(tmp_path) == key
    (tmp_path / "agent" / "acpc" / "cards.py").unlink()
    with pytest.raises(OSError):
        native.source_key(tmp_path)


def test_without_a_build_the_pure_modules_run(tmp_path: Path) -> None:
    got = _served(tmp_path)
    assert got["active"] is False and got["compiled"] == []
    assert "no build for these sources" in str(got["reason"])


def test_compiled_core_is_served_and_passes_the_core_and_dealer_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(cache))
    said: list[str] = []
    directory = build(said.append)
    assert directory == native.build_dir(native.source_key(ROOT))
    assert said[-1].startswith("built in ")
    manifest = json.loads((directory / native.MANIFEST).read_text())
    assert sorted(manifest["modules"]) == sorted(native.MODULES)

    got = _served(cache)
    assert got["active"] is True, got
    assert sorted(got["compiled"]) == sorted(native.MODULES)  # type: ignore[arg-type]
    off = _served(cache, ACPC_ARENA_NATIVE="0")
    assert off["active"] is False and off["compiled"] == []

    env = {**os.environ, "ACPC_ARENA_CACHE": str(cache)}
    env.pop("ACPC_ARENA_NATIVE", None)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", *COMPILED_SUITE, "-q", "-p", "no:cacheprovider",
         "--no-header", "-n", "0"],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=1200, check=False,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and " failed" not in out.stdout

    # A damaged build is not used: the pure modules run and the status says why.
    group = directory / f"{manifest['group']}{native.extension_suffix()}"
    group.write_bytes(b"not a shared library")
    damaged = _served(cache)
    assert damaged["active"] is False and damaged["compiled"] == []
    assert "could not be loaded" in str(damaged["reason"])
    (directory / native.MANIFEST).write_text("{")
    assert "expected a readable manifest.json" in str(_served(cache)["reason"])


def test_compile_without_mypyc_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import agent.corebuild as corebuild

    monkeypatch.setattr(corebuild.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(UsageError, match=r"expected mypyc .*pip install 'acpc-arena\[fast\]'"):
        corebuild.build()


def test_compile_status_says_why_no_build_is_used(tmp_path: Path) -> None:
    env = {**os.environ, "ACPC_ARENA_CACHE": str(tmp_path)}
    env.pop("ACPC_ARENA_NATIVE", None)
    out = subprocess.run([sys.executable, "-m", "dealer.arena", "compile", "--status"],
                         env=env, cwd=ROOT, capture_output=True, text=True, timeout=120,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout == ("compiled core: not in use (no build for these sources (run "
                          "acpc-arena compile))\n")
    off = subprocess.run([sys.executable, "-m", "dealer.arena", "compile", "--status"],
                         env={**env, "ACPC_ARENA_NATIVE": "0"}, cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=False)
    assert off.stdout == "compiled core: not in use (turned off by ACPC_ARENA_NATIVE=0)\n"


def test_a_manifest_is_checked_before_anything_is_loaded(tmp_path: Path) -> None:
    def manifest(**fields: object) -> str:
        data: dict[str, object] = {"format": native.BUILD_FORMAT, "group": "g__mypyc",
                                   "modules": {m: f"{m}.so" for m in native.MODULES}}
        data.update(fields)
        (tmp_path / native.MANIFEST).write_text(json.dumps(data))
        with pytest.raises(native.BuildInvalid) as err:
            native.read_manifest(tmp_path)
        return str(err.value)

    assert "expected build format 1" in manifest(format=2)
    assert "expected the shared library and the modules" in manifest(modules={})
    escaping = {m: "../../elsewhere.so" for m in native.MODULES}
    assert "expected files inside the build" in manifest(modules=escaping)
    assert "got no such file" in manifest()
