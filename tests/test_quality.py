"""Lint and type checks run as tests, so README's one test command covers them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support import ROOT


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, check=False)


def test_ruff_clean() -> None:
    pytest.importorskip("ruff")
    out = _run("ruff", "check", "--no-cache", ".")
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_strict_on_agent_and_dealer() -> None:
    pytest.importorskip("mypy")
    out = _run("mypy", "--strict", "agent", "dealer")
    assert out.returncode == 0, out.stdout + out.stderr
