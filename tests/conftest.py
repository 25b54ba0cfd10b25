"""Shared fixtures: the bundled games and the reference data made by the real dealer."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.acpc.gamedef import Game
from agent.games import load_game

DATA = Path(__file__).parent / "data"
LOGS = DATA / "logs"

# reference log -> the game it was played in (see tests/data/logs and PROTOCOL.md)
REFERENCE_LOGS = {
    "nl1000.log": "holdem.nolimit.2p.reverse_blinds.game",
    "dupA.log": "holdem.nolimit.2p.reverse_blinds.game",
    "dupB.log": "holdem.nolimit.2p.reverse_blinds.game",
    "lim2p_1000.log": "holdem.limit.2p.reverse_blinds.game",
    "nl3p_1000.log": "holdem.nolimit.3p.game",
    "lim3p_1000.log": "holdem.limit.3p.game",
    "kuhn3p_1000.log": "kuhn.limit.3p.game",
    "leduc_1000.log": "leduc.limit.2p.game",
}


@pytest.fixture(scope="session")
def nl2() -> Game:
    return load_game("holdem.nolimit.2p.reverse_blinds.game")


@pytest.fixture(scope="session")
def leduc() -> Game:
    return load_game("leduc.limit.2p.game")


@pytest.fixture(scope="session")
def kuhn3() -> Game:
    return load_game("kuhn.limit.3p.game")
