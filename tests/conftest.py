"""Shared fixtures: the bundled games (helpers live in :mod:`tests.support`)."""

from __future__ import annotations

import pytest

from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game


@pytest.fixture(scope="session")
def nl2() -> Game:
    return load_game("holdem.nolimit.2p.reverse_blinds.game")


@pytest.fixture(scope="session")
def leduc() -> Game:
    return load_game("leduc.limit.2p.game")


@pytest.fixture(scope="session")
def kuhn3() -> Game:
    return load_game("kuhn.limit.3p.game")
