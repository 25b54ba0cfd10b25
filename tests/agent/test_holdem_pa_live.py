"""A perfect-recall potential-aware strategy file over real loopback sockets.

Issue 17's acceptance: a ``holdem-pa`` perfect-recall file (buckets = the cluster sequence
so far) plays heads-up no-limit hold'em against ``acpc-dealer`` in both positions with 0
invalid-action warnings from the dealer. The clusters are synthetic (the builder's numbers
are tested against an oracle elsewhere); the file goes through the real spec, the real
loader and the agent's decision-time bucketing.
"""

from __future__ import annotations

from pathlib import Path

from agent.abstraction.actions import PRESETS
from agent.abstraction.holdem_pa import PotentialAwareCards
from agent.acpc.gamefiles import load_game
from tests.agent.abstraction.test_holdem_pa import make_cards
from tests.agent.test_agent_live import run_match, write_strategy

GAME = "holdem.nolimit.2p.reverse_blinds.game"


async def test_perfect_recall_file_plays_a_clean_loopback_match(tmp_path: Path) -> None:
    cards = make_cards("perfect", clusters=(4, 3, 3, 3))
    assert isinstance(cards, PotentialAwareCards) and cards.buckets == (4, 12, 36, 108)
    path = write_strategy(tmp_path / "pa.strat", load_game(GAME), PRESETS["fcpa3"], cards)
    hands = 1000
    ours = ["--strategy", str(path), "--seed", "5", "--mappings", "rand-pshar"]
    err, agent_errs, codes = await run_match(
        tmp_path, GAME, hands, [ours, ["--strategy", "builtin:random", "--seed", "1"]]
    )
    assert "WARNING" not in err, err[:2000]
    assert codes == [0, 0], agent_errs
    assert f"hands {hands}," in agent_errs[0], agent_errs[0]
