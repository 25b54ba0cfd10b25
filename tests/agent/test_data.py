"""The bundled data package (:mod:`agent.data`): every lookup finds the installed files."""

from __future__ import annotations

import json

from agent.acpc.gamefiles import bundled_game_path, load_game
from agent.agents import resolve_strategy
from agent.data import (
    bundled_games,
    bundled_strategies,
    game_path,
    manifest_path,
    strategies_dir,
    strategy_path,
)
from tests.support import ROOT

HERE = ROOT / "agent" / "data"


def test_the_lookups_list_and_find_every_bundled_file() -> None:
    assert bundled_games() == sorted(p.name for p in (HERE / "games").glob("*.game"))
    assert bundled_strategies() == sorted(p.name for p in (HERE / "strategies").glob("*.strat"))
    assert "leduc.limit.2p.game" in bundled_games()
    assert "leduc.limit.2p.strat" in bundled_strategies()
    for name in bundled_games():
        assert game_path(name) == bundled_game_path(name) == HERE / "games" / name
        assert load_game(name).num_players >= 2
    for name in bundled_strategies():
        assert strategy_path(name) == resolve_strategy(name) == HERE / "strategies" / name
        assert strategy_path(name).parent == strategies_dir()
    files = json.loads(manifest_path().read_text(encoding="utf-8"))["files"]
    assert {f"{name}.strat" for name in files} == set(bundled_strategies())
