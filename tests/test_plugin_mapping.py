"""A mapping installed as a plug-in (an ``acpc_arena.mappings`` entry point of a tiny
distribution put on ``sys.path``) is used by every consumer of the decision model
(:mod:`agent.decision`): the live agent, the translation lab, an estimator
(``exact-agents``) and LBR (exact and sampled).

The plug-in ``always-a`` reads every bet as the smaller size ``A`` (``f = 1``). Each
consumer must give (a) what it gives with the same function named as ``module:function``
(the plug-in is the mapping used, not a fallback) and (b) something else than with the
file's default, ``rand-pshar`` (the mapping matters there).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.abstraction.translation import get_mapping
from agent.acpc.betting import BettingState
from agent.acpc.dealing import deal_hands
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import view_of
from agent.agents import make_policy
from agent.data import strategy_path
from agent.strategy.fileformat import load_strategy
from agent.strategy.purification import parse_purification
from evaluation.estimators.estimator import group_values, make_model
from evaluation.match.variants import parse_variant
from strategies.measure.sampled_lbr import ChunkPlayer, LbrConfig
from strategies.measure.translation.full_br import AgentLab
from tests.support import random_playout

FILE = "leduc.nolimit.2p.fcpa.strat"
PLUGIN = "always-a"
SAME = "plugmap_h29:always_a"  # the plug-in's function, named as module:function
DEFAULT = "rand-pshar"


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The distribution ``plugmap-h29`` with the entry point ``always-a``, on sys.path."""
    (tmp_path / "plugmap_h29.py").write_text(
        "def always_a(a: float, b: float, x: float) -> float:\n    return 1.0\n")
    info = tmp_path / "plugmap_h29-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugmap-h29\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[acpc_arena.mappings]\n{PLUGIN} = {SAME}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    sys.modules.pop("plugmap_h29", None)


def test_the_plugin_is_found(plugin: None) -> None:
    assert get_mapping(PLUGIN)(0.0, 1.0, 0.5) == 1.0


def _translations(mapping: str) -> list[dict[str, Any]]:
    """The agent's translations over 150 random hands of no-limit Leduc (its trace)."""
    game = load_game("leduc.nolimit.2p.game")
    policy = make_policy(FILE, game, seed=3, mapping=mapping)
    records: list[dict[str, Any]] = []
    policy.trace = records.append  # type: ignore[union-attr]
    rng = random.Random(4)
    for hand in range(150):
        final, _ = random_playout(game, rng)
        deal = next(deal_hands(game, hand))
        s = BettingState.initial(game)
        for a in [a for rnd in final.actions for a in rnd]:
            if s.player == 0:
                policy.act(view_of(0, hand, s, deal.hole, deal.board))
            s = s.apply(a)
    return [t for r in records for t in r["translations"] if "f" in t]


def test_the_agent_uses_the_plugin(plugin: None) -> None:
    mine = _translations(PLUGIN)
    assert mine and all(t["f"] == 1.0 and t["mapping"] == PLUGIN for t in mine)
    # every uncertain reading went to A, the smaller size
    assert all(t["choice"] == "c" for t in mine if t["A"] == 0.0 and t["B"] > t["x"] > 0.0)
    assert any(0.0 < t["f"] < 1.0 for t in _translations(DEFAULT))


def test_the_lab_uses_the_plugin(plugin: None) -> None:
    from strategies.measure.translation.lab import measure_strategy, parse_mappings

    strategy = load_strategy(strategy_path(FILE))
    none = parse_purification("none")
    rows = measure_strategy(strategy, parse_mappings(f"{PLUGIN},{SAME},{DEFAULT}"), ["none"],
                            value=None)
    by = {r.mapping: r.best_responses for r in rows}
    assert by[PLUGIN] == by[SAME] != by[DEFAULT]
    lab = AgentLab(strategy)
    assert lab.measure(get_mapping(PLUGIN), none).best_responses == by[PLUGIN]


def _estimate(mapping: str) -> list[float]:
    game = load_game("leduc.nolimit.2p.game")
    models = (make_model(parse_variant(f"a={FILE},mapping={mapping}"), game),
              make_model(parse_variant("r=builtin:random"), game))
    return group_values(game, models, master_seed=2, units=1, hands=40,
                        group=("a", "r")).values


def test_an_estimator_uses_the_plugin(plugin: None) -> None:
    mine = _estimate(PLUGIN)
    assert mine == _estimate(SAME) != _estimate(DEFAULT)


def test_exact_lbr_uses_the_plugin(plugin: None, tmp_path: Path) -> None:
    from strategies.cli import main

    out = tmp_path / "lbr.json"
    assert main(["lbr", FILE, "--mappings", f"{PLUGIN},{SAME},{DEFAULT}", "--json",
                 str(out)]) == 0
    by = {r["mapping"]: r["lbr"] for r in json.loads(out.read_text())["rows"]}
    assert by[PLUGIN] == by[SAME] != by[DEFAULT]


def _sampled_lbr(mapping: str) -> list[list[float]]:
    player = ChunkPlayer(LbrConfig(spec=FILE, mapping=mapping, seed=6))
    assert player.model.mapping is player.base.mapping  # type: ignore[attr-defined]
    return player.play(0) + player.play(1)


def test_sampled_lbr_uses_the_plugin(plugin: None) -> None:
    mine = _sampled_lbr(PLUGIN)
    assert mine == _sampled_lbr(SAME) != _sampled_lbr(DEFAULT)
