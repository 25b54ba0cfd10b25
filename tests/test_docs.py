"""The documentation site and README (issues 19 and 29).

* The reference pages (``docs/reference/``) document every command, sub-command and flag:
  each command's argparse parser (the very object its entry point uses) is walked and every
  name looked for in those pages.
* ``mkdocs build --strict`` passes: no broken link or anchor, no missing page, no page left
  out of the nav (``mkdocs.yml`` turns each of those into a warning, strict mode into a
  failure).
* README.md stays a front page: at most 300 lines, the two fresh-machine commands, the test
  command identical to the one ``.ci/run`` runs, every link into ``docs/`` resolving.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
import yaml

from tests.support import ROOT
from tests.support.parsers import PARSERS

DOCS = ROOT / "docs"
README = ROOT / "README.md"


def _walk(prog: str, parser: argparse.ArgumentParser) -> Iterator[tuple[str, str]]:
    """(command, name) for every long option and every subcommand, recursively."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield prog, name
                yield from _walk(f"{prog} {name}", sub)
        for option in action.option_strings:
            if option.startswith("--") and option != "--help":
                yield prog, option


NAMES = sorted({item for prog, make in PARSERS.items() for item in _walk(prog, make())})


@cache
def reference_text() -> str:
    """Every reference page, concatenated."""
    return "\n".join(p.read_text() for p in sorted((DOCS / "reference").glob("*.md")))


def test_every_parser_is_walked() -> None:
    assert len(NAMES) > 100
    assert ("acpc-strategy", "learn-sizes") in NAMES and ("acpc-match", "--plot") in NAMES


@pytest.mark.parametrize(("command", "name"), NAMES, ids=[f"{c}:{n}" for c, n in NAMES])
def test_reference_documents_it(command: str, name: str) -> None:
    text = reference_text()
    if name.startswith("--"):
        pattern = re.escape(name) + r"(?![\w-])"
    else:  # a subcommand, after its parent's last word, alone or in a '|' list
        parent = re.escape(command.split()[-1])
        pattern = parent + r"[ |](?:[\w-]+\|)*" + re.escape(name) + r"(?![\w-])"
    assert re.search(pattern, text), f"docs/reference/ does not mention {command} {name}"


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict",  # not --quiet: it hides warnings
         "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, check=False, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "WARNING" not in out.stderr, out.stderr
    assert (tmp_path / "site" / "reference" / "index.html").is_file()


def test_mkdocs_warns_on_every_kind_of_broken_reference() -> None:
    """What strict mode fails on: broken links and anchors, pages left out of the nav."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert config["strict"] is True and config["docs_dir"] == "docs"
    assert config["validation"] == {"omitted_files": "warn", "absolute_links": "warn",
                                    "unrecognized_links": "warn", "anchors": "warn"}


def _nav_pages(nav: object) -> Iterator[str]:
    if isinstance(nav, str):
        yield nav
    elif isinstance(nav, list):
        for item in nav:
            yield from _nav_pages(item)
    elif isinstance(nav, dict):
        for value in nav.values():
            yield from _nav_pages(value)


def test_the_nav_holds_the_pages_issue_29_names() -> None:
    pages = set(_nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]))
    assert {"index.md", "getting-started.md", "reference/index.md", "background.md",
            "protocol.md", "architecture.md", "reference/limits.md",
            "reference/file-formats.md", "reports/learned-sizes.md", "reports/grafting.md",
            "reports/royal.md", "reports/kuhn100.md", "reports/translation-lab.md",
            "reports/holdem-table.md", "reports/test-suite.md",
            "reports/benchmarks.md"} <= pages
    architecture = (DOCS / "architecture.md").read_text()
    for where in ("acpc_arena.mappings", "agent/abstraction/translation.py",
                  "strategies/solvers/", "strategies/games/", "agent/data/games/",
                  "agent/abstraction/", "strategies/cards/", "jobs/"):
        assert where in architecture, where


def test_readme_is_a_front_page() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 300
    main_job = "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/acpc-match"
    assert f"```sh\n{main_job}\n```" in text
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci.startswith("python3 -m venv .venv && ") and f"```sh\n{ci}\n```" in text


def test_readme_links_into_the_site_resolve() -> None:
    links = re.findall(r"\]\((docs/[^)#\s]+)(?:#([\w-]+))?\)", README.read_text())
    assert len(links) >= 10
    for path, anchor in links:
        target = ROOT / path
        assert target.is_file(), f"README links to {path}, which does not exist"
        if anchor:
            assert "{#" + anchor + "}" in target.read_text(), f"README: no #{anchor} in {path}"
