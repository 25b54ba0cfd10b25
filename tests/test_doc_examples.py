"""The command examples of README.md and docs/ (issue 32), found by
``scripts/doc_examples.py`` (which also runs the long ones: ``--long``).

* Every example parses with the very parser its command uses, with no deprecation warning:
  a renamed flag, a removed sub-command or an old spelling left in the docs fails here.
* The short ones run, in the order written, in one scratch directory, and exit 0; among
  them README's bundled-name ``acpc-strategy inspect leduc.limit.2p.strat`` (which said "No
  such file or directory" on main).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import pytest

from evaluation import arena, logtool
from strategies import cli as strategy_cli
from tests.support import ROOT
from tests.support.parsers import PARSERS

SCRIPT = ROOT / "scripts" / "doc_examples.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("doc_examples_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


DOC = _script()
EXAMPLES = DOC.examples()
MAINS: dict[str, Callable[[Sequence[str]], int]] = {
    "acpc-strategy": strategy_cli.main, "acpc-log": logtool.main, "acpc-arena": arena.main}


def test_the_examples_are_found() -> None:
    kinds = {e.kind for e in EXAMPLES}
    assert kinds == {"short", "live", "long"} and len(EXAMPLES) >= 50
    assert {e.page for e in EXAMPLES} >= {"README.md", "docs/getting-started.md",
                                          "docs/reference/index.md"}
    lines = {e.line for e in EXAMPLES}
    assert set(DOC.SHORT) <= lines, set(DOC.SHORT) - lines  # the list follows the docs


@pytest.mark.parametrize("example", [e for e in EXAMPLES if "..." not in e.line],
                         ids=lambda e: f"{e.page}:{e.line[:60]}")
def test_every_example_parses_with_todays_flags(example: object,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    command, *argv = example.argv  # type: ignore[attr-defined]
    # a shell variable holding a dealer's port (docs/bots.md reads them from a file)
    argv = ["18791" if re.fullmatch(r"\$\{?\w*port\w*\}?", a, re.I) else a for a in argv]
    if command == "acpc-agent" and argv[:1] == ["explain"]:
        command, argv = "acpc-agent explain", argv[1:]
    try:
        PARSERS[command]().parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"{example.line}: exit {exc.code}: {capsys.readouterr().err}")  # type: ignore[attr-defined]
    assert capsys.readouterr().err == ""  # no deprecated spelling


def test_the_short_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    monkeypatch.chdir(tmp_path)
    for line in DOC.SHORT:
        command, *argv = next(e.argv for e in EXAMPLES if e.line == line)
        status = MAINS[command](argv)
        out, err = capsys.readouterr()
        assert status == 0, f"{line}: exit {status}: {err}"
        if line.startswith("acpc-strategy inspect leduc.limit.2p.strat"):
            assert "leduc.limit.2p.strat" in out and "sample information sets" in out
    assert (tmp_path / "leduc.strat").is_file() and (tmp_path / "nl.log").is_file()
    assert not list(tmp_path.glob("*.ckpt.npz"))  # a finished solve leaves its file only
