"""Shared fixtures: the bundled games (helpers live in :mod:`tests.support`)."""

from __future__ import annotations

import os

# Ray (the cluster backend's tests) replaces 127.0.0.1 by the machine's own address unless
# told not to: keep every test's traffic, and that of the processes it starts, on loopback.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")

import pytest

from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from evaluation.corebuild import status
from tests.support import ROOT


def pytest_configure(config: pytest.Config) -> None:
    """Refuse to run on a stale or damaged compiled core (``acpc-arena compile``): Python
    would load the old extension modules, not the sources under test."""
    found = status(ROOT, load=False)
    if not found.ok:
        raise pytest.UsageError(f"the compiled core is {found.state}: {found.reason}")


@pytest.fixture(scope="session")
def nl2() -> Game:
    return load_game("holdem.nolimit.2p.reverse_blinds.game")


@pytest.fixture(scope="session")
def leduc() -> Game:
    return load_game("leduc.limit.2p.game")


@pytest.fixture(scope="session")
def kuhn3() -> Game:
    return load_game("kuhn.limit.3p.game")
