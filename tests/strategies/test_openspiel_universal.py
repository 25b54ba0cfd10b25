"""OpenSpiel's universal_poker: strategy files of no-limit (and limit) games to and from its
tabular policies, measured by OpenSpiel's own exploitability beside ours."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from open_spiel.python import policy as spiel_policy

from agent.abstraction.actions import PRESETS
from agent.abstraction.buckets import LosslessCards, card_abstraction_from_spec
from agent.acpc.errors import AcpcError
from agent.acpc.gamefiles import load_game
from agent.agents import resolve_strategy
from agent.strategy.fileformat import load_strategy
from strategies.cli import main as strategy_main
from strategies.games.abstract import build_abstract_game
from strategies.interop.openspiel import (
    InteropError,
    export_policy,
    import_table,
    openspiel_exploitability,
    read_policy,
    tabular_policy,
    universal_poker_for,
)
from strategies.measure.best_response import exploitability, strategy_table

TOL = 1e-9


@pytest.mark.parametrize("file", ["leduc.nolimit.2p.fcpa.strat", "leduc.limit.2p.strat"])
def test_a_file_crosses_universal_poker_and_comes_back_exactly(file: str, tmp_path: Path
                                                               ) -> None:
    strategy = load_strategy(resolve_strategy(file))
    cards = card_abstraction_from_spec(strategy.game, strategy.cards)
    abstract = build_abstract_game(strategy.game, strategy.betting, cards, tree=strategy.tree)
    table = strategy_table(abstract, strategy)
    spiel = universal_poker_for(strategy.game, strategy.betting)
    doc = export_policy(spiel, strategy.tree, cards, table)
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(doc))
    doc = read_policy(path)
    # every information state OpenSpiel's TabularPolicy has, each once
    assert set(doc["policy"]) == set(spiel_policy.TabularPolicy(spiel.load()).state_lookup)
    ours = exploitability(abstract, table)
    theirs, nash_conv = openspiel_exploitability(doc)
    assert ours.nash_conv > 0 and abs(nash_conv - ours.nash_conv) < TOL
    assert theirs is not None and abs(theirs - ours.exploitability) < TOL
    back = import_table(doc, strategy.tree, cards)
    assert back.disagreement == 0.0
    assert np.array_equal(back.table, table)  # the same table, bit for bit


def test_a_policy_changed_in_openspiel_changes_the_figures_the_same_way() -> None:
    strategy = load_strategy(resolve_strategy("leduc.nolimit.2p.fcpa.strat"))
    cards = LosslessCards(strategy.game)
    abstract = build_abstract_game(strategy.game, strategy.betting, cards, tree=strategy.tree)
    table = strategy_table(abstract, strategy)
    doc = export_policy(universal_poker_for(strategy.game, strategy.betting), strategy.tree,
                        cards, table)
    tab = tabular_policy(doc)
    tab.action_probability_array[:] = tab.legal_actions_mask / tab.legal_actions_mask.sum(
        axis=1, keepdims=True)  # uniform over the legal actions, in OpenSpiel
    from strategies.interop.openspiel import policy_from_openspiel

    uniform = policy_from_openspiel("universal_poker", 2, tab, game=strategy.game,
                                    betting="fcpa")
    back = import_table(uniform, strategy.tree, cards)
    theirs, _ = openspiel_exploitability(uniform)
    ours = exploitability(abstract, back.table)
    assert ours.exploitability > 1.0  # uniform play is far from the equilibrium
    assert theirs is not None and abs(theirs - ours.exploitability) < TOL


def test_the_commands_export_and_import_no_limit_leduc(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "nl.json"
    assert strategy_main(["export-openspiel", "leduc.nolimit.2p.fcpa.strat", "--out",
                          str(out)]) == 0
    assert ("1152 OpenSpiel information states of universal_poker (bettingAbstraction fcpa)"
            in capsys.readouterr().out)
    back = tmp_path / "back.strat"
    assert strategy_main(["import-openspiel", str(out), "--out", str(back)]) == 0
    assert "(betting fcpa, lossless cards)" in capsys.readouterr().out
    original = load_strategy(resolve_strategy("leduc.nolimit.2p.fcpa.strat"))
    again = load_strategy(back)
    assert again.game == original.game and again.betting == original.betting
    # the export renormalises the file's float32 rows in float64 and the import stores
    # float32 again: a value may move by its last bit, no more
    assert np.allclose(again.table, original.table, rtol=2 ** -23, atol=0)


def test_what_universal_poker_cannot_take_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = load_game("leduc.nolimit.2p.game")
    with pytest.raises(InteropError, match="expected betting fcpa or fchpa"):
        universal_poker_for(game, PRESETS["fcpa3"])  # a raise cap universal_poker has not
    for file, message in [("royal.nolimit.2p.fcpa.strat", "can be walked"),
                          ("holdem.nolimit.2p.strat", "expected betting fcpa or fchpa")]:
        assert strategy_main(["export-openspiel", file, "--out",
                              str(tmp_path / "x.json")]) == 1
        err = capsys.readouterr().err.strip()
        assert err.startswith("acpc-strategy: error: ") and message in err and "\n" not in err
    # parameters that are not the file's own game never reach OpenSpiel (which crashes the
    # process on some, e.g. numRanks 30)
    strategy = load_strategy(resolve_strategy("leduc.nolimit.2p.fcpa.strat"))
    cards = LosslessCards(strategy.game)
    abstract = build_abstract_game(strategy.game, strategy.betting, cards, tree=strategy.tree)
    doc = export_policy(universal_poker_for(strategy.game, strategy.betting), strategy.tree,
                        cards, strategy_table(abstract, strategy))
    bad = tmp_path / "bad.json"
    for change, message in [({"numRanks": 30}, "parameters of its acpc_game"),
                            ({"bettingAbstraction": "fullgame"}, "bettingAbstraction fcpa")]:
        bad.write_text(json.dumps({**doc, "parameters": {**doc["parameters"], **change}}))
        assert strategy_main(["import-openspiel", str(bad), "--out",
                              str(tmp_path / "y.strat")]) == 1
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err
    bad.write_text(json.dumps(doc))
    assert strategy_main(["import-openspiel", str(bad), "--out", str(tmp_path / "y.strat"),
                          "--game", "leduc.nolimit.2p.stack400.game"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.endswith("with {'stack': '400 400'}, got {'stack': '12 12'}") and "\n" not in err
    bad.write_text(json.dumps({**doc, "acpc_game": "GAMEDEF\nnolimit\n"}))
    with pytest.raises(AcpcError, match="acpc_game: missing required line"):
        read_policy(bad)


def test_without_openspiel_the_command_names_the_extra(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pyspiel", None)  # import pyspiel raises ImportError
    assert strategy_main(["export-openspiel", "leduc.nolimit.2p.fcpa.strat", "--out",
                          str(tmp_path / "x.json")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("acpc-strategy: error: expected OpenSpiel installed (pip install "
                          "'acpc-arena[test]'") and "\n" not in err
