"""CFR+ on the public tree (:mod:`strategies.royal_cfr`).

* On a reduced Royal (8 cards, stacks 4) the regrets and average strategies after a few
  iterations equal the project's enumerated CFR+ (:class:`strategies.cfr.Solver`, same
  flags: alternating, regret matching+, linear averaging), boards grouped by suit classes.
* Its abstract-game exploitability equals the project's best response and falls with
  iterations.
* The Royal recipes exist, are public-tree recipes, and ``solve --recipe`` writes a loadable
  file on the reduced game (via ``--out``) with its exploitability in the header.
"""

from __future__ import annotations

import numpy as np
import pytest

from agent.abstraction.actions import PRESETS
from agent.abstraction.buckets import BlindCards, LosslessCards
from agent.acpc.errors import UsageError
from strategies.best_response import exploitability
from strategies.cfr import Solver
from strategies.game import build_abstract_game
from strategies.recipes import RECIPES
from strategies.royal_cfr import RoyalCfr
from tests.strategies.translation.test_royal_br import small_royal


@pytest.mark.parametrize("betting", ["fcpa", "fchpa"])
def test_equals_enumerated_cfr_plus(betting: str) -> None:
    game = small_royal()
    mine = RoyalCfr(game, PRESETS[betting])
    ref_game = build_abstract_game(game, PRESETS[betting], LosslessCards(game), tree=mine.tree)
    ref = Solver(ref_game, "cfr+")
    scale = ref_game.num_deals  # regrets summed over deals here, deal-weighted there
    for _ in range(8):
        mine.iterate(1)
        ref.iterate(1)
        np.testing.assert_allclose(mine.regrets, ref.regrets * scale, atol=1e-9, rtol=1e-9)
        np.testing.assert_allclose(mine.average(), ref.average_strategy(), atol=1e-9)
        # two actions that tie exactly leave 1e-18 of regret there and 0 here, which flips
        # a row from uniform to one-hot: restart both from the same rounded regrets
        same = np.where(np.abs(mine.regrets) < 1e-9, 0.0, mine.regrets)
        mine.regrets[:] = same
        mine._update_sigma()
        ref.regrets[:] = same / scale
    got = mine.exploitability()
    want = exploitability(ref_game, mine.average()).best_responses
    assert got == pytest.approx(want, abs=1e-12)


def test_converges() -> None:
    solver = RoyalCfr(small_royal(), PRESETS["fcpa"])
    solver.iterate(5)
    early = sum(solver.exploitability()) / 2
    solver.iterate(195)
    late = sum(solver.exploitability()) / 2
    assert late < early / 10
    assert late < 5e-3


def test_recipes_and_errors() -> None:
    names = [n for n, r in RECIPES.items() if r.cards == "royal"]
    assert names == ["royal.nolimit.2p.fcpa", "royal.nolimit.2p.fcha",
                     "royal.nolimit.2p.fcmhpa", "royal.nolimit.2p.fcmhqtpa"]
    sizes = [RECIPES[n].betting_abstraction().sizes(0, 0) for n in names]
    assert sizes == [(1.0,), (0.5,), (1e-9, 0.5, 1.0), (1e-9, 0.25, 0.5, 0.75, 1.0)]
    with pytest.raises(UsageError, match="lossless"):
        RoyalCfr(small_royal(), PRESETS["fcpa"], BlindCards(small_royal()))
