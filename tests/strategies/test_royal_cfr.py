"""CFR+ on the public tree (:mod:`strategies.solvers.royal`: the one solver over the
:class:`~strategies.solvers.royal.RoyalGame` adapter).

* On a reduced Royal (8 cards, stacks 4) the regrets and average strategies after a few
  iterations equal the project's enumerated CFR+ (:class:`strategies.solvers.cfr.Solver`, same
  flags: alternating, regret matching+, linear averaging), boards grouped by suit classes.
* Its abstract-game exploitability equals the project's best response and falls with
  iterations.
* The Royal recipes exist, are public-tree recipes, and the recipe solve writes a loadable
  file through :func:`strategies.solvers.recipe.solve_recipe` (on the reduced game: the
  solver's average, its exploitability in the header); the adapter refuses every
  configuration but ``cfr+``; the big recipes refuse ``--bundle``; the bundled Royal files
  match their manifest entries.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agent.abstraction.actions import PRESETS
from agent.abstraction.buckets import BlindCards, LosslessCards
from agent.acpc.errors import UsageError
from agent.strategy.fileformat import load_strategy
from strategies.games.abstract import build_abstract_game
from strategies.measure.best_response import exploitability
from strategies.recipes import RECIPES, Recipe, load_manifest
from strategies.solvers.cfr import Solver
from strategies.solvers.recipe import solve_recipe
from strategies.solvers.royal import RoyalGame
from tests.strategies.translation.test_royal_br import SMALL_ROYAL, small_royal


@pytest.mark.parametrize("betting", ["fcpa", "fchpa"])
def test_equals_enumerated_cfr_plus(betting: str) -> None:
    game = small_royal()
    royal = RoyalGame(game, PRESETS[betting])
    mine = Solver(royal, "cfr+")
    ref_game = build_abstract_game(game, PRESETS[betting], LosslessCards(game), tree=royal.tree)
    ref = Solver(ref_game, "cfr+")
    scale = ref_game.num_deals  # regrets summed over deals here, deal-weighted there
    for _ in range(8):
        mine.iterate(1)
        ref.iterate(1)
        np.testing.assert_allclose(mine.regrets, ref.regrets * scale, atol=1e-9, rtol=1e-9)
        np.testing.assert_allclose(mine.average_strategy(), ref.average_strategy(), atol=1e-9)
        # two actions that tie exactly leave 1e-18 of regret there and 0 here, which flips
        # a row from uniform to one-hot: restart both from the same rounded regrets
        same = np.where(np.abs(mine.regrets) < 1e-9, 0.0, mine.regrets)
        mine.regrets[:] = same  # the next iteration regret-matches them afresh
        ref.regrets[:] = same / scale
    got = royal.exploitability(mine.average_strategy())
    want = exploitability(ref_game, mine.average_strategy()).best_responses
    assert got == pytest.approx(want, abs=1e-12)


def test_converges() -> None:
    royal = RoyalGame(small_royal(), PRESETS["fcpa"])
    solver = Solver(royal, "cfr+")
    solver.iterate(5)
    early = sum(royal.exploitability(solver.average_strategy())) / 2
    solver.iterate(195)
    late = sum(royal.exploitability(solver.average_strategy())) / 2
    assert late < early / 10
    assert late < 5e-3


def test_recipes_and_errors() -> None:
    names = [n for n, r in RECIPES.items() if r.cards == "royal"]
    assert names == ["royal.nolimit.2p.fcpa", "royal.nolimit.2p.fcha",
                     "royal.nolimit.2p.fcmhpa", "royal.nolimit.2p.fcmhqtpa"]
    sizes = [RECIPES[n].betting_abstraction().sizes(0, 0) for n in names]
    assert sizes == [(1.0,), (0.5,), (1e-9, 0.5, 1.0), (1e-9, 0.25, 0.5, 0.75, 1.0)]
    with pytest.raises(UsageError, match="lossless"):
        RoyalGame(small_royal(), PRESETS["fcpa"], BlindCards(small_royal()))
    for other in ("cfr", "dcfr", "mccfr-es"):
        with pytest.raises(UsageError, match="expected cfr\\+ for the public-tree solver"):
            Solver(RoyalGame(small_royal(), PRESETS["fcpa"]), other)


def test_solve_recipe_writes_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game_file = tmp_path / "small.game"
    game_file.write_text(SMALL_ROYAL)
    recipe = Recipe("small", str(game_file), "fcpa", "cfr+", 30, cards="royal")
    out = tmp_path / "small.strat"
    ckpt = tmp_path / "small.ckpt.npz"
    assert solve_recipe(recipe, iterations=None, minutes=None, resume=False, out=str(out),
                        checkpoint=str(ckpt), bundle=False, progress=False) == 0
    strategy = load_strategy(out)
    assert strategy.meta["iterations"] == 30 and strategy.cards["kind"] == "lossless"
    royal = RoyalGame(small_royal(), PRESETS["fcpa"])
    solver = Solver(royal, "cfr+")
    solver.iterate(30)
    stored = np.asarray(strategy.table, dtype=np.float64)
    np.testing.assert_allclose(stored, solver.average_strategy(), atol=1e-6)
    assert strategy.meta["best_responses"] == pytest.approx(
        royal.exploitability(solver.average_strategy()), abs=1e-6)
    assert "abstract-game exploitability" in capsys.readouterr().out
    resumed = Solver.load_checkpoint(ckpt, royal)  # the solver's checkpoint, Royal too
    assert resumed.iteration == 30
    np.testing.assert_array_equal(resumed.strategy_sum, solver.strategy_sum)
    big = Recipe("big", str(game_file), "fcpa", "cfr+", 1, cards="royal", bundled=False)
    with pytest.raises(UsageError, match="not bundled"):
        solve_recipe(big, iterations=None, minutes=None, resume=False, out=None,
                     checkpoint=None, bundle=True, progress=False)


@pytest.mark.parametrize("name", ["royal.nolimit.2p.fcpa", "royal.nolimit.2p.fcha"])
def test_bundled_royal_file_matches_manifest(name: str) -> None:
    recipe = RECIPES[name]
    entry = load_manifest()["files"][name]
    strategy = load_strategy(recipe.bundled_path)
    assert strategy.checksum == entry["checksum"]
    assert recipe.bundled_path.stat().st_size == entry["bytes"] <= 50_000_000
    assert strategy.meta["iterations"] == entry["iterations"] == recipe.iterations
    assert strategy.cards == entry["cards"] == {"kind": "lossless", "buckets": [25, 7760]}
    assert strategy.meta["exploitability"] == entry["exploitability"] < 0.002
