"""The compiled core (``acpc-arena compile``, :mod:`evaluation.corebuild`).

Every build here goes into a scratch copy of the project, never into the checkout under
test. The fast tests check the build's bookkeeping on a copy of the sources it reads with a
hand-made manifest: the key, ``--status`` for no build, a stale and a damaged one,
``--remove``, and the test suite refusing a stale build. The slow ones share one real build
(mypyc and gcc) beside a copy of the project (the ``compiled`` fixture: built once, by
whichever xdist worker comes first); then, in fresh interpreters: every compiled module is
loaded from it, the core's tests and the dealer's engine tests (rules, match states,
protocol, the reference logs reproduced byte for byte, the dealer's reading of every client
line, its fast path) pass on the compiled modules, in four parts that run in parallel,
and, on a copy of the build, an edited source, a damaged shared library or manifest, and
``--remove`` are reported as they should be.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent.acpc.errors import UsageError
from evaluation import corebuild
from evaluation.corebuild import (
    BUILD_FORMAT,
    MANIFEST_NAME,
    MODULES,
    BuildInvalid,
    build,
    build_files,
    build_inputs,
    extension_suffix,
    manifest_path,
    read_manifest,
    served,
    source_key,
    status,
)
from tests.support import ROOT

DEALER_ENGINE = ("(replays_reference_log and (nl1000 or lim2p or nl3p or kuhn3p or short_raise)) "
                 "or reference_transcript or formatted_views or fixups "
                 "or bad_action or state_echo or unrequested or beyond_max_raises "
                 "or fold_when_check or seat_not_to_act or comment_lines")
"""The dealer's tests of its engine and its reading of the clients' lines: reference logs
replayed byte for byte (five of the ten: limit and no-limit, two and three players, a small
deck, a short all-in raise; the source run replays all ten, and the compiled modules are the
same code in every game), the reference transcript, the views it formats, and every
malformed or out-of-turn line. Its tests of processes (random agents in subprocesses,
timeouts, disconnects, signals, resume, the command line) run the same compiled modules
behind process plumbing that mypyc does not touch; they run on the sources only."""

COMPILED_SUITE = [
    ("tests/agent/acpc/test_matchstate.py",),
    ("tests/agent/acpc", "--ignore=tests/agent/acpc/test_matchstate.py"),
    ("tests/dealer/test_dealer.py", "-k", DEALER_ENGINE),
    ("tests/dealer/test_fast_path.py",),
]
"""Run again on the compiled modules, in parts that xdist's workers take in parallel: every
test of the core (rules, match states, protocol), the dealer's engine tests
(:data:`DEALER_ENGINE`) and its fast path (the evaluator's showdowns are checked there
against the reference logs byte for byte). ``tests/agent/test_handeval.py`` is not among
them: in the build's copy of the sources it would recompile its numba kernels (their disk
cache is keyed by path), the slowest part of this test, for an oracle the reference logs
already give."""

ARENA = ("evaluation/__init__.py", "evaluation/arena.py", "evaluation/corebuild.py")


def _copy(root: Path, rels: list[Path] | tuple[str, ...]) -> None:
    for rel in rels:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, root / rel)


def _sources(root: Path) -> Path:
    """A copy of what a build reads, plus the ``acpc-arena`` command: a project to check."""
    _copy(root, build_inputs(ROOT))
    _copy(root, ARENA)
    return root


def _fake_build(root: Path, *, key: str, files: bool = True) -> None:
    """A manifest as the build writes it, as if ``agent/acpc/betting.py`` had changed since
    (and empty stand-ins for its files)."""
    names = {n: f.relative_to(root).as_posix() for n, f in build_files(root).items()}
    inputs = {rel.as_posix(): hashlib.sha256((root / rel).read_bytes()).hexdigest()
              for rel in build_inputs(root)}
    inputs["agent/acpc/betting.py"] = "0" * 64
    manifest = {"format": BUILD_FORMAT, "key": key, "suffix": extension_suffix(),
                "inputs": inputs, "modules": names}
    manifest_path(root).write_text(json.dumps(manifest))
    if files:
        for file in build_files(root).values():
            file.touch()


def _arena(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([sys.executable, "-m", "evaluation.arena", "compile", *args],
                          env=env, cwd=root, capture_output=True, text=True, timeout=120,
                          check=False)


def test_source_key_follows_every_byte_of_every_source_a_build_reads(tmp_path: Path) -> None:
    inputs = build_inputs(ROOT)
    assert {Path(*m.split(".")).with_suffix(".py") for m in MODULES} <= set(inputs)
    assert {Path("agent/acpc/errors.py"), Path("dealer/__init__.py"),
            Path("agent/data/__init__.py")} <= set(inputs)
    _copy(tmp_path, inputs)
    key = source_key(tmp_path)
    assert key == source_key(ROOT)
    for rel in (inputs[0], inputs[-1], Path("agent/acpc/errors.py")):
        data = (tmp_path / rel).read_bytes()
        (tmp_path / rel).write_bytes(data + b"\n")
        assert source_key(tmp_path) != key, rel
        (tmp_path / rel).write_bytes(data)
    assert source_key(tmp_path) == key
    (tmp_path / "agent" / "acpc" / "cards.py").unlink()
    with pytest.raises(OSError):
        source_key(tmp_path)


def test_without_a_build_the_pure_modules_run(tmp_path: Path) -> None:
    root = _sources(tmp_path)
    assert status(root).state == "none"
    assert served(root) == []
    out = _arena(root, "--status")
    assert (out.returncode, out.stdout) == (
        0, "compiled core: not in use (no build: run acpc-arena compile)\n"), out.stderr


def test_status_names_a_stale_or_damaged_build_and_remove_deletes_it(tmp_path: Path) -> None:
    root = _sources(tmp_path)
    _fake_build(root, key="0" * 64)
    out = _arena(root, "--status")
    assert out.returncode == 1
    assert out.stdout == ("compiled core: stale (the sources changed since the build "
                          "(agent/acpc/betting.py), and Python still loads it: run acpc-arena "
                          "compile, or acpc-arena compile --remove)\n"), out.stdout
    _fake_build(root, key=source_key(root))
    manifest_path(root).write_text("{")
    out = _arena(root, "--status")
    assert out.returncode == 1
    assert out.stdout.startswith(f"compiled core: damaged (expected a readable "
                                 f"{MANIFEST_NAME} in "), out.stdout
    manifest_path(root).unlink()
    assert "compiled files without a manifest" in status(root).reason
    _fake_build(root, key="0" * 64)
    out = _arena(root, "--remove")
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stderr == f"acpc-arena compile: removed {len(MODULES) + 2} files\n"
    assert not [f for f in build_files(root).values() if f.exists()]
    assert not manifest_path(root).exists() and status(root).state == "none"


def test_the_test_suite_refuses_a_stale_build(tmp_path: Path) -> None:
    root = _sources(tmp_path)
    _copy(root, ("pyproject.toml", "tests/__init__.py", "tests/conftest.py",
                 "tests/support/__init__.py", "tests/support/numba_lock.py"))
    _fake_build(root, key="0" * 64, files=False)  # stand-in files would not even import
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0",
                          "--collect-only", "-q", "tests/support"], env=env, cwd=root,
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == pytest.ExitCode.USAGE_ERROR, out.stdout + out.stderr
    assert "the compiled core is stale: the sources changed since the build" in out.stderr


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """One real build beside a copy of the project, shared by every test of this module on
    every xdist worker: the first worker to get here builds (under a file lock), the others
    wait and reuse it, so the compiled runs below go to whichever workers are free."""
    shared = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        shared = shared.parent  # the directory every worker's base sits in
    root = shared / "compiled-core" / "project"
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = root.parent / "built"
        if not done.exists():
            if root.exists():
                shutil.rmtree(root)  # an interrupted build
            skip = shutil.ignore_patterns("__pycache__", "*.so", "*.strat", MANIFEST_NAME)
            for package in ("agent", "dealer", "evaluation", "strategies", "jobs", "tests",
                            "scripts"):
                shutil.copytree(ROOT / package, root / package, ignore=skip)
            _copy(root, ("pyproject.toml",))
            said: list[str] = []
            # gcc -O0 (MYPYC_OPT_LEVEL, which `acpc-arena compile` honours): the same
            # modules and semantics in 17 CPU-s instead of 40; the runs below take as long
            previous = os.environ.get("MYPYC_OPT_LEVEL")
            os.environ["MYPYC_OPT_LEVEL"] = "0"
            try:
                assert build(said.append, root) == manifest_path(root)
            finally:
                if previous is None:
                    del os.environ["MYPYC_OPT_LEVEL"]
                else:
                    os.environ["MYPYC_OPT_LEVEL"] = previous
            assert said[-1].startswith("built in ")
            done.write_text(said[-1])
    return root


def test_compiled_core_is_built_and_served(compiled: Path) -> None:
    manifest = json.loads(manifest_path(compiled).read_text())
    assert sorted(manifest["modules"]) == sorted([*MODULES, "agent.acpc.compiled__mypyc"])
    assert status(compiled) == corebuild.Status("in use", "compiled modules for these sources")
    assert sorted(served(compiled)) == sorted(MODULES)


@pytest.mark.parametrize("part", COMPILED_SUITE,
                         ids=["match states", "core", "dealer engine", "dealer fast path"])
def test_compiled_core_passes_the_core_and_dealer_tests(compiled: Path,
                                                        part: tuple[str, ...]) -> None:
    env = {**os.environ, "PYTHONPATH": str(compiled)}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", *part, "-q", "-p", "no:cacheprovider",
         "--no-header", "-n", "0"],
        env=env, cwd=compiled, capture_output=True, text=True, timeout=1200, check=False,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert " passed" in out.stdout and " failed" not in out.stdout


def test_a_changed_or_damaged_build_is_reported_and_removed(compiled: Path,
                                                            tmp_path: Path) -> None:
    root = tmp_path / "project"  # a copy: the shared build stays whole for the other tests
    shutil.copytree(compiled, root, ignore=shutil.ignore_patterns("__pycache__"))
    assert status(root).state == "in use"
    # An edited source: Python would still load the build, and the status says so.
    errors = root / "agent" / "acpc" / "errors.py"
    text = errors.read_text()
    errors.write_text(text + "\n")
    stale = status(root)
    assert stale.state == "stale" and "(agent/acpc/errors.py)" in stale.reason
    errors.write_text(text)
    # A damaged shared library or manifest: refused with the reason.
    group = build_files(root)["agent.acpc.compiled__mypyc"]
    group.write_bytes(b"not a shared library")
    damaged = status(root)
    assert damaged.state == "damaged" and "could not be loaded" in damaged.reason
    assert str(group) in damaged.reason
    manifest_path(root).write_text("{")
    assert f"expected a readable {MANIFEST_NAME}" in status(root).reason
    out = _arena(root, "--remove")
    assert out.returncode == 0 and out.stdout == (
        "compiled core: not in use (no build: run acpc-arena compile)\n"), out.stderr
    assert served(root) == []


def test_compile_without_mypyc_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(UsageError, match=r"expected mypyc .*pip install 'acpc-arena\[fast\]'"):
        build()


def test_a_manifest_is_checked_before_anything_is_loaded(tmp_path: Path) -> None:
    manifest_path(tmp_path).parent.mkdir(parents=True)

    def manifest(**fields: object) -> str:
        data: dict[str, object] = {
            "format": BUILD_FORMAT, "key": "k", "suffix": extension_suffix(), "inputs": {},
            "modules": {n: f.relative_to(tmp_path).as_posix()
                        for n, f in build_files(tmp_path).items()}}
        data.update(fields)
        manifest_path(tmp_path).write_text(json.dumps(data))
        with pytest.raises(BuildInvalid) as err:
            read_manifest(tmp_path)
            corebuild.check_files(tmp_path)
        return str(err.value)

    assert "expected build format 2" in manifest(format=1)
    assert "expected a key, a suffix and the sources' sha256" in manifest(inputs=[])
    assert "expected the shared library and the modules" in manifest(modules={})
    escaping = {m: "../../elsewhere.so" for m in MODULES}
    assert "expected the shared library and the modules" in manifest(modules=escaping)
    assert "got no such file" in manifest()
