"""N-card Kuhn (strategies.games.kuhn100) and the sequence-form LP
(strategies.solvers.sequence_form).

* The builder: with N = 3 it is the ACPC three-card Kuhn game (same tree and layout; the
  solvers give the same regrets); deals, buckets and payoffs of N = 100 equal a direct
  computation from the rules; the bucket boundaries are the stated ones.
* The LP: three-card Kuhn's value is -1/18 and its LP equilibrium has exploitability 0 by
  the exact best response; 100-card Kuhn's LP value equals a converged CFR+ solve (within
  its exploitability), its LP equilibrium has exploitability 0, and the value is near the
  continuous game's -1/18.
* Lifting: an abstract strategy lifted to the full game has the same value there as in the
  abstract game (showdowns use the real cards in both), and its full-game best response is
  at least its abstract one.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from agent.abstraction.actions import PRESETS
from agent.abstraction.buckets import LosslessCards
from strategies.games.abstract import build_abstract_game
from strategies.games.kuhn100 import EqualWidthCards, build_kuhn, lift
from strategies.measure.best_response import expected_values, exploitability
from strategies.solvers.cfr import Solver
from strategies.solvers.sequence_form import SequenceFormError, solve_lp
from tests.support import NO_JIT
from tests.support.cfr_oracle import kuhn2


def test_small_three_cards_is_acpc_kuhn() -> None:
    acpc = build_abstract_game(kuhn2(), PRESETS["fcpa"], LosslessCards(kuhn2()))
    mine = build_kuhn(3)
    assert mine.num_deals == acpc.num_deals == 6
    np.testing.assert_array_equal(mine.offset, acpc.offset)
    np.testing.assert_array_equal(mine.children, acpc.children)
    for variant in ("cfr", "cfr+"):
        a, b = Solver(acpc, variant), Solver(mine, variant)
        a.iterate(7)
        b.iterate(7)
        np.testing.assert_allclose(a.regrets, b.regrets, atol=1e-12)
        np.testing.assert_allclose(a.strategy_sum, b.strategy_sum, atol=1e-12)


def test_deals_buckets_and_payoffs_follow_the_rules() -> None:
    g = build_kuhn(100, 10)
    assert g.num_deals == 9900 and abs(g.deal_prob.sum() - 1.0) < 1e-12
    pairs = {(int(a), int(b)) for a, b in g.deal_cards}
    assert len(pairs) == 9900 and all(a != b for a, b in pairs)
    for d in range(0, g.num_deals, 97):
        c0, c1 = (int(x) for x in g.deal_cards[d])
        assert tuple(g.deal_bucket[d, :, 0]) == (c0 // 10, c1 // 10)
        for node in g.tree.nodes:
            if not node.is_terminal:
                continue
            t = g.terminal[node.id]
            payoff = g.term_payoff[t, g.deal_pattern[d, 0] if g.term_set[t] >= 0 else 0]
            pot = node.state.spent
            if node.state.is_showdown:
                winner = 0 if c0 > c1 else 1
                assert payoff[winner] == pot[1 - winner] and payoff[1 - winner] == -pot[1 - winner]
            else:
                folder = int(np.flatnonzero(node.state.folded)[0])
                assert payoff[folder] == -pot[folder]


def test_bucket_boundaries() -> None:
    assert EqualWidthCards(100, 3).ranges() == [(0, 32), (33, 65), (66, 99)]
    assert EqualWidthCards(100, 10).ranges()[1] == (10, 19)
    assert EqualWidthCards(100, 25).ranges()[-1] == (96, 99)
    assert [EqualWidthCards(100, 25).of_card(c) for c in (0, 3, 4, 99)] == [0, 0, 1, 24]
    assert build_kuhn(100, 3).describe_bucket(0, 2) == "66-99"
    for cards, k in ((100, 3), (100, 7), (10, 4), (100, 25)):
        for split in ("domain", "proportional"):
            ew = EqualWidthCards(cards, k, split)
            seen = [(ew.of_card(c), c) for c in range(cards)]
            assert ew.ranges() == [(min(c for b, c in seen if b == x),
                                    max(c for b, c in seen if b == x)) for x in range(k)]
    assert EqualWidthCards(100, 3, "proportional").ranges() == [(0, 33), (34, 66), (67, 99)]
    with pytest.raises(ValueError, match="buckets"):
        EqualWidthCards(100, 101)
    with pytest.raises(ValueError, match="card in"):
        EqualWidthCards(100, 3).of_card(100)


def test_lp_three_card_kuhn_is_minus_one_eighteenth() -> None:
    for g in (build_abstract_game(kuhn2(), PRESETS["fcpa"], LosslessCards(kuhn2())),
              build_kuhn(3)):
        solution = solve_lp(g)
        assert solution.value == pytest.approx(-1 / 18, abs=1e-9)
        result = exploitability(g, solution.table)
        assert result.exploitability < 1e-9
        assert result.values[0] == pytest.approx(-1 / 18, abs=1e-9)


@pytest.mark.skipif(NO_JIT, reason="slow without the JIT")
def test_lp_value_of_100_card_kuhn_equals_converged_cfr_plus() -> None:
    full = build_kuhn(100)
    solution = solve_lp(full)
    assert exploitability(full, solution.table).exploitability < 1e-9
    solver = Solver(full, "cfr+")
    solver.iterate(3000)
    result = exploitability(full, solver.average_strategy())
    assert result.exploitability < 1e-5
    # the game value lies between what each seat's best response concedes
    assert -result.best_responses[1] - 1e-12 <= solution.value <= result.best_responses[0] + 1e-12
    assert abs(result.values[0] - solution.value) < 2 * result.exploitability
    # many cards approach the continuous Kuhn game, whose value is -1/18 as well
    assert abs(solution.value + 1 / 18) < 2e-3


@pytest.mark.skipif(NO_JIT, reason="slow without the JIT")
@pytest.mark.parametrize("buckets", [3, 25])  # the coarsest and the finest abstraction
def test_abstract_values_and_lifting(buckets: int) -> None:
    full = build_kuhn(100)
    g = build_kuhn(100, buckets)
    solution = solve_lp(g)
    solver = Solver(g, "cfr+")
    solver.iterate(3000)
    abstract = exploitability(g, solver.average_strategy())
    assert abstract.exploitability < 2e-5
    assert abs(abstract.values[0] - solution.value) < 2 * abstract.exploitability
    lifted = lift(g, solver.average_strategy(), full)
    assert expected_values(full, lifted)[0] == pytest.approx(abstract.values[0], abs=1e-12)
    in_full = exploitability(full, lifted)
    assert in_full.best_responses[0] >= abstract.best_responses[0] - 1e-12
    assert in_full.best_responses[1] >= abstract.best_responses[1] - 1e-12


def test_lp_refuses_three_players() -> None:
    from tests.support.cfr_oracle import abstract

    with pytest.raises(ValueError, match="2-player"):
        solve_lp(abstract("kuhn.limit.3p.game"))
    assert issubclass(SequenceFormError, ValueError)


@pytest.mark.skipif(NO_JIT, reason="slow without the JIT")
def test_least_exploitable_abstract_equilibrium() -> None:
    from strategies.games.kuhn100 import lift_index
    from strategies.solvers.sequence_form import best_lifted_equilibrium

    full = build_kuhn(100)
    value = solve_lp(full).value
    same = best_lifted_equilibrium(full, full, lift_index(full, full))
    assert same == pytest.approx((value, -value), abs=1e-8)  # no abstraction: no loss
    for buckets in (3, 25):
        g = build_kuhn(100, buckets)
        least = best_lifted_equilibrium(g, full, lift_index(g, full))
        abstract_value = solve_lp(g).value
        assert least[0] >= abstract_value - 1e-8 and least[1] >= -abstract_value - 1e-8
        assert least[0] >= value - 1e-8 and least[1] >= -value - 1e-8
        # an exact abstract equilibrium concedes at least the least; CFR+'s approximate
        # one (abstract exploitability ~1e-5) up to a little less
        for table, tol in ((solve_lp(g).table, 1e-8), (_cfr_plus(g), 1e-4)):
            found = exploitability(full, lift(g, table, full)).best_responses
            assert found[0] >= least[0] - tol and found[1] >= least[1] - tol


def _cfr_plus(g: object) -> np.ndarray:
    solver = Solver(g, "cfr+")  # type: ignore[arg-type]
    solver.iterate(2000)
    return solver.average_strategy()


@pytest.mark.skipif(NO_JIT, reason="slow without the JIT")
def test_script_writes_tables_and_plots(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "kuhn100_script", Path(__file__).parents[2] / "scripts" / "kuhn100.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    out = tmp_path / "out"
    assert script.main(["--out", str(out), "--cards", "12", "--buckets", "3", "--seconds",
                        "0.05", "--reference-iterations", "50", "--solvers",
                        "cfr,pure-cfr"]) == 0
    values = json.loads((out / "values.json").read_text())
    assert [r["game"] for r in values["rows"]] == ["full", "3"]
    assert values["rows"][0]["value_lp"] == pytest.approx(solve_lp(build_kuhn(12)).value)
    runs = json.loads((out / "convergence.json").read_text())["runs"]
    assert [r["solver"] for r in runs["3"]] == ["cfr", "pure-cfr"]
    assert all(r["exploitability"] for r in runs["full"])
    for name in ("values.md", "convergence_iterations.png", "convergence_seconds.png"):
        assert (out / name).stat().st_size > 0
