"""OpenSpiel interop: a policy solved here has the same exploitability in OpenSpiel's own
``exploitability`` module (within 1e-9), and a policy solved in OpenSpiel has the same
exploitability here after import; tables survive the round trip."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as spiel_policy
from open_spiel.python.algorithms import cfr as spiel_cfr
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.algorithms import exploitability as spiel_exploitability

from agent.abstraction.actions import PRESETS, BettingTree, build_tree
from agent.abstraction.buckets import LosslessCards, card_abstraction_from_spec
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.agents import resolve_strategy
from agent.data import game_path
from agent.strategy.fileformat import load_strategy
from strategies.cli import main as strategy_main
from strategies.games.abstract import build_abstract_game
from strategies.interop.openspiel import (
    InteropError,
    export_policy,
    import_table,
    info_sets,
    openspiel_exploitability,
    policy_from_openspiel,
    read_policy,
    spiel_game_for,
    tabular_policy,
)
from strategies.measure.best_response import exploitability, strategy_table
from strategies.solvers.cfr import CFRPlusSolver
from tests.support import DATA

TOL = 1e-9


def whole_game(name: str) -> tuple[Game, BettingTree, LosslessCards]:
    game = load_game(name)
    tree = build_tree(game, PRESETS["fcpa"])
    cards = LosslessCards(game)
    return game, tree, cards


@pytest.mark.parametrize("file", ["leduc.limit.2p.strat", "kuhn.limit.3p.strat"])
def test_bundled_files_measure_the_same_in_openspiel_and_come_back(file: str) -> None:
    strategy = load_strategy(resolve_strategy(file))
    cards = card_abstraction_from_spec(strategy.game, strategy.cards)
    abstract = build_abstract_game(strategy.game, strategy.betting, cards, tree=strategy.tree)
    table = strategy_table(abstract, strategy)
    ours = exploitability(abstract, table)
    doc = export_policy(spiel_game_for(strategy.game), strategy.tree, cards, table)
    theirs, nash_conv = openspiel_exploitability(doc)
    assert abs(nash_conv - ours.nash_conv) < TOL
    if strategy.game.num_players == 2:
        assert theirs is not None and abs(theirs - ours.exploitability) < TOL
    # OpenSpiel's whole set of information states, each once
    game = spiel_game_for(strategy.game).load()
    assert set(doc["policy"]) == set(spiel_policy.TabularPolicy(game).state_lookup)
    back = import_table(doc, strategy.tree, cards)
    assert back.disagreement == 0.0
    assert np.abs(back.table - table).max() < 1e-12


def test_a_kuhn_policy_solved_here_measures_the_same_in_openspiel() -> None:
    game = load_game(str(DATA / "kuhn.limit.2p.game"))
    cards = LosslessCards(game)
    abstract = build_abstract_game(game, PRESETS["fcpa"], cards)
    solver = CFRPlusSolver(abstract)
    solver.iterate(200)
    table = solver.average_strategy()
    ours = exploitability(abstract, table)
    doc = export_policy(spiel_game_for(game), abstract.tree, cards, table)
    assert doc["game"] == "kuhn_poker" and doc["parameters"] == {"players": 2}
    theirs, nash_conv = openspiel_exploitability(doc)
    assert theirs is not None and abs(theirs - ours.exploitability) < TOL
    assert abs(nash_conv - ours.nash_conv) < TOL
    # and the game value agrees: OpenSpiel's expected returns of the policy
    spiel_game = pyspiel.load_game("kuhn_poker")
    tab = tabular_policy(doc)
    values = expected_game_score.policy_value(spiel_game.new_initial_state(), [tab, tab])
    assert np.allclose(values, ours.values, atol=TOL)
    # Kuhn's information states are OpenSpiel's 12, with our rows: card then history
    sets = info_sets(spiel_game_for(game), abstract.tree, cards)
    assert sorted(sets) == sorted(["0", "1", "2", "0p", "1p", "2p", "0b", "1b", "2b",
                                   "0pb", "1pb", "2pb"])


@pytest.mark.parametrize(("name", "acpc", "iterations"), [
    ("kuhn_poker", str(DATA / "kuhn.limit.2p.game"), 300),
    ("leduc_poker", "leduc.limit.2p.game", 5),
])
def test_a_policy_solved_in_openspiel_measures_the_same_here(name: str, acpc: str,
                                                             iterations: int) -> None:
    spiel_game = pyspiel.load_game(name)
    solver = spiel_cfr.CFRPlusSolver(spiel_game)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    average = solver.average_policy()
    theirs = spiel_exploitability.exploitability(spiel_game, average)
    doc = policy_from_openspiel(name, 2, average)
    game, tree, cards = whole_game(acpc)
    imported = import_table(doc, tree, cards)
    assert imported.disagreement < 1e-12  # CFR plays suit isomorphs alike
    abstract = build_abstract_game(game, PRESETS["fcpa"], cards, tree=tree)
    ours = exploitability(abstract, imported.table)
    assert abs(ours.exploitability - theirs) < TOL
    assert theirs > 1e-4  # a policy that is not already exact: the figure means something


def test_any_three_player_kuhn_policy_comes_across_exactly() -> None:
    """Kuhn has one suit: every OpenSpiel policy is a strategy of the lossless file."""
    spiel_game = pyspiel.load_game("kuhn_poker", {"players": 3})
    tab = spiel_policy.TabularPolicy(spiel_game)
    rng = np.random.default_rng(3)
    rows = rng.random(tab.action_probability_array.shape) * tab.legal_actions_mask
    tab.action_probability_array[:] = rows / rows.sum(axis=1, keepdims=True)
    theirs = spiel_exploitability.nash_conv(spiel_game, tab)
    doc = policy_from_openspiel("kuhn_poker", 3, tab)
    game, tree, cards = whole_game("kuhn.limit.3p.game")
    imported = import_table(doc, tree, cards)
    assert imported.disagreement == 0.0
    abstract = build_abstract_game(game, PRESETS["fcpa"], cards, tree=tree)
    assert abs(exploitability(abstract, imported.table).nash_conv - theirs) < TOL
    # back out again: the same rows
    again = export_policy(spiel_game_for(game), tree, cards, imported.table)
    for key, row in doc["policy"].items():
        assert np.allclose([p for _, p in again["policy"][key]], [p for _, p in row],
                           atol=1e-15)


def test_a_leduc_policy_that_plays_suit_isomorphs_apart_is_reported() -> None:
    spiel_game = pyspiel.load_game("leduc_poker")
    tab = spiel_policy.TabularPolicy(spiel_game)
    rng = np.random.default_rng(1)
    rows = rng.random(tab.action_probability_array.shape) * tab.legal_actions_mask
    tab.action_probability_array[:] = rows / rows.sum(axis=1, keepdims=True)
    doc = policy_from_openspiel("leduc_poker", 2, tab)
    _, tree, cards = whole_game("leduc.limit.2p.game")
    assert import_table(doc, tree, cards).disagreement > 0.1


def test_the_commands_round_trip_a_file(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "leduc.json"
    assert strategy_main(["export-openspiel", "leduc.limit.2p.strat", "--out", str(out),
                          "--check"]) == 0
    text = capsys.readouterr().out
    assert "936 OpenSpiel information states of leduc_poker" in text
    assert "exploitability ours" in text and "chips per hand in both" in text
    back = tmp_path / "back.strat"
    assert strategy_main(["import-openspiel", str(out), "--out", str(back), "--check"]) == 0
    assert "as stored (float32 probabilities)" in capsys.readouterr().out
    original = load_strategy(resolve_strategy("leduc.limit.2p.strat"))
    again = load_strategy(back)
    assert again.game == original.game
    assert np.abs(again.table.astype(np.float64) - original.table.astype(np.float64)).max() \
        < 1e-6  # float32 storage on both sides


def test_games_and_files_openspiel_does_not_have_are_one_line_errors(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("holdem.nolimit.2p.reverse_blinds.game", "leduc.nolimit.2p.game",
                 "royal.nolimit.2p.game"):
        with pytest.raises(InteropError, match="expected a game OpenSpiel has"):
            spiel_game_for(load_game(name))
    assert strategy_main(["export-openspiel", "leduc.nolimit.2p.fcpa.strat", "--out",
                          str(tmp_path / "x.json"), "--openspiel-game", "leduc_poker"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("acpc-strategy: error: expected a game OpenSpiel has") and \
        "\n" not in err
    bad = tmp_path / "bad.json"
    cases = [
        ("[]", "expected format"),
        (json.dumps({"format": "acpc-arena-openspiel-policy", "version": 2}),
         "expected version 1"),
        (json.dumps({"format": "acpc-arena-openspiel-policy", "version": 1,
                     "game": "go"}), "expected game"),
        (json.dumps({"format": "acpc-arena-openspiel-policy", "version": 1,
                     "game": "kuhn_poker", "policy": {"0": [[0, 0.5], [1, 0.6]]}}),
         "summing to 1"),
        ("{", "expected a JSON policy file"),
    ]
    for text, message in cases:
        bad.write_text(text)
        with pytest.raises(InteropError, match=message):
            read_policy(bad)
    bad.write_text(json.dumps({"format": "acpc-arena-openspiel-policy", "version": 1,
                               "game": "kuhn_poker", "policy": {"0": [[0, 0.5], [1, 0.5]]}}))
    _, tree, cards = whole_game(str(DATA / "kuhn.limit.2p.game"))
    with pytest.raises(InteropError, match="missing"):
        import_table(read_policy(bad), tree, cards)
    assert strategy_main(["import-openspiel", str(bad), "--out", str(tmp_path / "y.strat"),
                          "--game", str(DATA / "kuhn.limit.2p.game")]) == 1
    assert "11 missing" in capsys.readouterr().err


def _policy_text(**fields: object) -> str:
    doc: dict[str, object] = {"format": "acpc-arena-openspiel-policy", "version": 1,
                              "game": "kuhn_poker", "policy": {"0": [[0, 0.5], [1, 0.5]]}}
    doc.update(fields)
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # each used to escape as a traceback: RecursionError, then the int conversion limit
        (_policy_text(source=[]).replace("[]", "[" * 3000 + "]" * 3000),
         "expected a JSON policy file nested at most 32 levels deep"),
        (_policy_text(version=0).replace('"version": 0', '"version": ' + "9" * 5000),
         "expected a JSON policy file, got 'Exceeds the limit"),
        (_policy_text(parameters={"players": 10**400}),
         r"expected parameters \{'players': N\} with N in 2\.\.10, got \{'players': 1000"),
        (_policy_text(parameters={"players": True}), r"with N in 2\.\.10"),
        (_policy_text(policy={"x" * 5000: [[0, 2.0]]}),
         r"summing to 1 for 'xxxx.*\(5,000 characters\), got \[\[0, 2\.0\]\]$"),
    ],
)
def test_hostile_policy_files_are_one_short_line(tmp_path: Path, text: str,
                                                 message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    with pytest.raises(InteropError, match=message) as info:
        read_policy(bad)
    assert len(str(info.value)) < 400


def test_oversized_policy_files_are_refused_before_reading_them_whole(tmp_path: Path) -> None:
    bad = tmp_path / "big.json"
    bad.write_text(_policy_text(source={"pad": "x" * (16 << 20)}))
    with pytest.raises(InteropError, match=r"expected a policy file of at most 16,777,216 "
                       r"bytes, got more"):
        read_policy(bad)


def test_a_policy_naming_another_game_is_refused_before_building_its_tree(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    holdem = game_path("holdem.nolimit.2p.reverse_blinds.game").read_text()
    bad = tmp_path / "bad.json"
    bad.write_text(_policy_text(acpc_game=holdem))

    def no_tree(*args: object, **kwargs: object) -> None:
        raise AssertionError("a tree was built")

    monkeypatch.setattr("agent.abstraction.actions.build_tree", no_tree)
    assert strategy_main(["import-openspiel", str(bad), "--out", str(tmp_path / "y.strat")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("acpc-strategy: error: ") and "\n" not in err
    assert "expected a game OpenSpiel has" in err
