"""The abstract game as flat arrays: :mod:`agent.strategy.abstract_game`, by its offline name.

The builder moved down to the agent (the live exploiting agent, :mod:`agent.exploit`, best
responds in the abstract game during a match); the solvers, the measurements and the
grafting keep importing it from here. Nothing is defined here.
"""

from __future__ import annotations

from agent.strategy.abstract_game import (
    F64,
    I32,
    I64,
    MAX_DEALS,
    TIE,
    WIN0,
    WIN1,
    AbstractGame,
    AnyInt,
    FlatTree,
    KernelGame,
    RowTable,
    build_abstract_game,
    check_enumerable,
    count_deals,
    enumerate_deals,
    flatten_tree,
    kernel_game,
    normalise_rows,
    player_rows,
    uniform_table,
)

__all__ = [
    "F64", "I32", "I64", "MAX_DEALS", "TIE", "WIN0", "WIN1", "AbstractGame", "AnyInt",
    "FlatTree", "KernelGame", "RowTable", "build_abstract_game", "check_enumerable",
    "count_deals", "enumerate_deals", "flatten_tree", "kernel_game", "normalise_rows",
    "player_rows", "uniform_table",
]
