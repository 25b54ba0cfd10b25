"""One solver surface (:mod:`strategies.solvers.cfr`, :mod:`strategies.solvers.kernels`).

* The flat game is one named structure built by one function, which checks its arrays.
* External sampling with frozen rows is the one external-sampling kernel: with no row
  frozen it is the plain traversal bit for bit; frozen rows get no regret and no average
  and the average plays their values.
* Each game adapter refuses, in one line, the configurations it cannot run.
* Every recipe's kind of cards names a recipe game (no other branch in ``solve_recipe``).
* No module imports a private name of the solver family's modules.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from agent.abstraction.actions import PRESETS
from agent.acpc.errors import UsageError
from agent.acpc.gamefiles import load_game
from strategies.games.abstract import AbstractGame, build_abstract_game, kernel_game, player_rows
from strategies.recipes import RECIPES, Recipe
from strategies.solvers.cfr import FlatGame, FrozenRows, Solver, SolverGame
from strategies.solvers.recipe import RECIPE_GAMES, recipe_game
from tests.support.cfr_oracle import abstract

ROOT = Path(__file__).parents[2]
FAMILY = ("strategies.solvers", "strategies.games", "strategies.sizes", "strategies.grafting")


def leduc() -> AbstractGame:
    return build_abstract_game(load_game("leduc.limit.2p.game"), PRESETS["fcpa"])


def test_kernel_game_is_one_named_structure_checked_once() -> None:
    game = abstract("kuhn2")
    g = game.kernel_args()
    assert g._fields[:3] == ("player", "round", "num_actions") and len(g) == 13
    assert g.deal_bucket is game.deal_bucket
    fields = g._asdict()
    fields["rows"] = fields["rows"][:-1]
    with pytest.raises(UsageError, match="expected rows of") as info:
        kernel_game(**fields)
    assert len(str(info.value).splitlines()) == 1


def test_external_sampling_with_no_frozen_row_is_the_plain_traversal() -> None:
    game = leduc()
    plain = Solver(game, "mccfr-es", seed=3)
    none = np.zeros(game.table_size, dtype=bool)
    masked = Solver(game, "mccfr-es", seed=3, frozen=FrozenRows(none, np.zeros(none.size)))
    for solver in (plain, masked):
        solver.iterate(200)
    assert np.array_equal(plain.regrets, masked.regrets)
    assert np.array_equal(plain.strategy_sum, masked.strategy_sum)
    assert np.array_equal(plain.rng_state, masked.rng_state)
    assert plain.value_sum == masked.value_sum


def test_frozen_rows_are_chance_nodes_for_external_sampling() -> None:
    game = leduc()
    frozen = player_rows(game, 1)
    values = Solver(game, "cfr+").current_strategy()  # uniform rows
    solver = Solver(game, "mccfr-es", seed=5, frozen=FrozenRows(frozen, values))
    solver.iterate(300)
    assert not solver.regrets[frozen].any() and not solver.strategy_sum[frozen].any()
    assert solver.strategy_sum[~frozen].sum() > 0
    assert np.array_equal(solver.average_strategy()[frozen], values[frozen])


@pytest.mark.parametrize(("config", "warm", "message"), [
    ("pure-cfr", 0.0, "expected a full-width or external-sampling solver with frozen rows"),
    ("cfr+", 1.0, "expected external sampling for a warm start"),
])
def test_flat_games_refuse_what_they_cannot_run(config: str, warm: float, message: str) -> None:
    game = leduc()
    size = game.table_size
    with pytest.raises(UsageError, match=message) as info:
        Solver(game, config, frozen=FrozenRows(np.zeros(size, bool), np.zeros(size), warm))
    assert len(str(info.value).splitlines()) == 1
    with pytest.raises(UsageError, match="expected frozen rows and values of"):
        Solver(game, "cfr+", frozen=FrozenRows(np.zeros(3, bool), np.zeros(3)))
    assert isinstance(FlatGame(game), SolverGame)


def test_every_recipe_names_a_recipe_game() -> None:
    assert {r.cards for r in RECIPES.values()} <= set(RECIPE_GAMES)
    bad = Recipe("x", "leduc.limit.2p.game", "fcpa", "cfr+", 1, cards="tarot")
    with pytest.raises(UsageError, match="expected recipe cards in") as info:
        recipe_game(bad)
    assert len(str(info.value).splitlines()) == 1


def test_no_private_name_of_the_solver_family_is_imported_elsewhere() -> None:
    offenders = []
    for path in sorted([*(ROOT / "strategies").rglob("*.py"), *(ROOT / "scripts").glob("*.py"),
                        *(ROOT / "tests").rglob("*.py")]):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom) or not node.module:
                continue
            if not node.module.startswith(FAMILY) or node.module == module:
                continue
            offenders += [f"{module}: {node.module}.{a.name}" for a in node.names
                          if a.name.startswith("_")]
    assert offenders == []
