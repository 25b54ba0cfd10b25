"""The excessive gap technique on Royal's public tree
(:class:`strategies.solvers.royal.RoyalSaddle`: EGT's products with ``A`` by the walk CFR+
runs, :meth:`strategies.solvers.royal.RoyalGame.walk`).

On a reduced Royal (8 cards, stacks 4), which the project can also enumerate:

* the walk's products ``A y`` and ``A' x`` equal the sparse sequence form's
  (:class:`strategies.solvers.egt.EGTGame` of the enumerated game, sequences matched by their
  table entries), the treeplexes have the same entropy ranges, the start bounds ``max |A_ij|``
  (also without the JIT: the walk's kernels as plain Python); and steps driven from Python
  with the walk's products give the compiled CSR steps' iterates;
* EGT's value and exploitability agree with CFR+'s to tolerance, and its NashConv from the
  walk is the exact abstract best response of its strategy
  (:meth:`strategies.measure.translation.royal_br.RoyalLab.abstract`, independent code);
* ``solve_recipe`` with a Royal recipe and ``solver="egt"`` writes the iterates' file and an
  EGT checkpoint that resumes; ``--solver egt`` is the one solver ``--recipe`` takes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agent.abstraction.actions import PRESETS
from agent.abstraction.buckets import LosslessCards
from agent.strategy.fileformat import load_strategy
from strategies.cli import main
from strategies.games.abstract import build_abstract_game
from strategies.measure.translation.royal_br import RoyalLab, table_agent
from strategies.recipes import Recipe
from strategies.solvers.cfr import Solver
from strategies.solvers.egt import EGTGame, EGTSolver, Treeplex
from strategies.solvers.recipe import solve_recipe
from strategies.solvers.royal import RoyalGame
from tests.strategies.translation.test_royal_br import SMALL_ROYAL, small_royal
from tests.support import run_without_jit

_GAMES: dict[str, tuple[RoyalGame, EGTGame]] = {}


def games(betting: str = "fcpa") -> tuple[RoyalGame, EGTGame]:
    """The reduced Royal's public-tree game and its enumerated sequence form (same tree)."""
    if betting not in _GAMES:
        game = small_royal()
        royal = RoyalGame(game, PRESETS[betting])
        enumerated = build_abstract_game(game, PRESETS[betting], LosslessCards(game),
                                         tree=royal.tree)
        _GAMES[betting] = (royal, EGTGame(enumerated))
    return _GAMES[betting]


def matched(mine: Treeplex, theirs: Treeplex) -> np.ndarray:
    """``theirs``' index of each of ``mine``'s sequences (the same table entry)."""
    where = {int(t): i for i, t in enumerate(theirs.table_index)}
    assert sorted(where) == sorted(int(t) for t in mine.table_index)
    return np.array([where[int(t)] for t in mine.table_index])


def test_small_products_equal_the_sequence_form() -> None:
    royal, sparse = games()
    walk = royal.egt_saddle()
    mx, my = matched(walk.x, sparse.x), matched(walk.y, sparse.y)
    assert (walk.d_x, walk.d_y) == pytest.approx((sparse.d_x, sparse.d_y), rel=1e-12)
    assert sparse.scale <= walk.scale <= 4 * sparse.scale
    rng = np.random.default_rng(5)
    uniform = sparse.plans(sparse.uniform_table())
    for i in range(3):
        x, _ = sparse.smoothed_response(sparse.x, rng.normal(0.0, 1.0, sparse.x.size), 1.0)
        y, _ = sparse.smoothed_response(sparse.y, rng.normal(0.0, 1.0, sparse.y.size), 1.0)
        if i == 0:
            x, y = uniform
        ay, atx = sparse.payoff_x(y), sparse.payoff_y(x)
        assert i > 0 or ay[0] > 0.1  # folds before position 0 acts: the empty sequence
        np.testing.assert_allclose(walk.payoff_x(y[my]), ay[mx], rtol=0, atol=1e-13)
        np.testing.assert_allclose(walk.payoff_y(x[mx]), atx[my], rtol=0, atol=1e-13)


def test_steps_equal_the_compiled_steps() -> None:
    """Steps from the same start: driven from Python with the walk's products, and compiled
    with ``A`` in CSR."""
    royal, sparse = games()
    walk = royal.egt_saddle()
    mx, my = matched(walk.x, sparse.x), matched(walk.y, sparse.y)
    start = EGTSolver(sparse.game)
    x0, y0, state = start.x, start.y, start.state
    runs = []
    for saddle, sx, sy in ((sparse, x0.copy(), y0.copy()), (walk, x0[mx], y0[my])):
        st, counts = state.copy(), np.zeros(4, dtype=np.int64)
        assert saddle.run(60, sx, sy, st, counts) == 0
        runs.append((sx, sy, st, counts))
    (sx, sy, s_state, s_counts), (wx, wy, w_state, w_counts) = runs
    np.testing.assert_array_equal(w_counts, s_counts)
    assert s_counts[0] == 60 and s_counts[1] > 0  # some steps were retried
    np.testing.assert_allclose(w_state, s_state, rtol=1e-9)
    np.testing.assert_allclose(wx, sx[mx], atol=1e-9)
    np.testing.assert_allclose(wy, sy[my], atol=1e-9)


def test_agrees_with_cfr_plus_and_the_exact_best_response() -> None:
    royal, _ = games()
    egt = EGTSolver(royal)
    egt.iterate(300)
    table = egt.average_strategy()
    br0, br1 = RoyalLab(table_agent(royal.tree, royal.cards, table)).abstract().best_responses
    nash_conv = egt.nash_conv()
    assert nash_conv == pytest.approx(br0 + br1, abs=1e-12)  # the exact best response
    assert 0.0 <= nash_conv <= egt.gap_bound()
    cfr = Solver(royal, "cfr+")
    cfr.iterate(200)
    saddle = egt.egt
    x, y = saddle.plans(cfr.average_strategy())
    f, phi = saddle.best_responses(x, y)
    cfr_value = float(x @ saddle.payoff_x(y))
    assert (f - phi) / 2 < 5e-3 and nash_conv / 2 < 5e-3
    assert abs(egt.value() - cfr_value) <= nash_conv + (f - phi)
    assert egt.value() == pytest.approx(cfr_value, abs=5e-3)


def test_solve_recipe_with_egt(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game_file = tmp_path / "small.game"
    game_file.write_text(SMALL_ROYAL)
    recipe = Recipe("small", str(game_file), "fcpa", "egt", 40, cards="royal")
    out, ckpt = tmp_path / "small.strat", tmp_path / "small.ckpt.npz"
    assert solve_recipe(recipe, iterations=None, minutes=None, resume=False, out=str(out),
                        checkpoint=str(ckpt), bundle=False, progress=False) == 0
    strategy = load_strategy(out)
    assert strategy.meta["solver"] == "egt (public tree)" and strategy.meta["iterations"] == 40
    royal, _ = games()
    solver = EGTSolver(royal)
    solver.iterate(40)
    np.testing.assert_allclose(np.asarray(strategy.table, dtype=np.float64),
                               solver.average_strategy(), atol=1e-6)
    assert sum(strategy.meta["best_responses"]) == pytest.approx(solver.nash_conv(), abs=1e-5)
    assert "abstract-game exploitability" in capsys.readouterr().out
    resumed = EGTSolver.load_checkpoint(ckpt, royal)
    assert resumed.iteration == 40
    np.testing.assert_array_equal(resumed.x, solver.x)
    for name, extra, said in (("egt", ["--bundle"], "--bundle writes the recipe's own"),
                              ("cfr", [], "--solver goes with --game")):
        with pytest.raises(SystemExit) as info:
            main(["solve", "--recipe", "royal.nolimit.2p.fcpa", "--solver", name, *extra])
        assert info.value.code == 2 and said in capsys.readouterr().err


def test_kernels_as_plain_python() -> None:
    run_without_jit(__file__)
