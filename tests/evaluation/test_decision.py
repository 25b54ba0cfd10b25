"""``acpc-match``'s default table (:mod:`evaluation.match.decision`) on no-limit Leduc."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.abstraction.translation import get_mapping
from agent.acpc.gamefiles import load_game
from agent.data import strategy_path
from agent.strategy.fileformat import load_strategy
from agent.strategy.purification import parse_purification
from evaluation import cli as matchcli
from strategies.measure.translation.full_br import AgentLab

GAME = "leduc.nolimit.2p.game"
FILE = str(strategy_path("leduc.nolimit.2p.fcpa.strat"))
BASE = ["--game", GAME, "-v", f"a={FILE},mapping=det-arith", "-v",
        f"b={FILE},mapping=rand-pshar", "--hands", "20", "--matches", "1", "--transport",
        "inproc", "--jobs", "1", "--quiet"]


def test_table_columns_and_exact_exploitability(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out_json = tmp_path / "t.json"
    status = matchcli.main([*BASE, "--run-dir", str(tmp_path / "r"), "--json", str(out_json)])
    out, err = capsys.readouterr()
    assert status == 0, err
    table = out[out.index("which variant to ship"):]
    header = table.splitlines()[1].split()
    assert header == ["variant", "vs", "played", "AIVAT", "exploitability"]
    assert "a vs b: not played: both play leduc.nolimit.2p.fcpa.strat" in table
    assert "exact best response" in table
    data = json.loads(out_json.read_text())
    # the uninformative pair is not played: only the two variants against offtree
    assert sorted(tuple(r["group"]) for r in data["results"][::2]) == [
        ("a", "offtree"), ("b", "offtree")]
    decision = data["decision"]
    assert decision["exploitability_method"] == "exact"
    assert decision["not_played"][0]["pair"] == ["a", "b"]
    strategy = load_strategy(Path(FILE))
    lab = AgentLab(strategy)
    purification = parse_purification(strategy.default_purification)
    big = load_game(GAME).big_blind or 1
    got = {}
    for row in decision["rows"]:
        assert row["opponent"] == "offtree"
        assert row["played"]["units"] == 1 and row["aivat"]["deals"] == 20
        mapping = "det-arith" if row["variant"] == "a" else "rand-pshar"
        direct = lab.measure(get_mapping(mapping), purification).average
        assert row["exploitability"]["mbb_per_hand"] == pytest.approx(1000 * direct / big,
                                                                      rel=1e-9, abs=1e-9)
        got[row["variant"]] = row["exploitability"]["mbb_per_hand"]
        assert f"{got[row['variant']]:.1f}" in table
    assert got["a"] > got["b"] > 0  # det-arith is the more exploitable here


def test_table_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_json = tmp_path / "t.json"
    status = matchcli.main([*BASE, "--no-exploitability", "--opponent", "builtin:call",
                            "--run-dir", str(tmp_path / "r"), "--json", str(out_json)])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "(exploitability: off, --no-exploitability)" in out
    decision = json.loads(out_json.read_text())["decision"]
    assert [(r["variant"], r["opponent"]) for r in decision["rows"]] == [("a", "call"),
                                                                         ("b", "call")]
    assert all(r["exploitability"] is None for r in decision["rows"])
    # the table's flags without the table: one line, nothing played
    status = matchcli.main([*BASE, "--pair", "a:b", "--opponent", "builtin:call",
                            "--run-dir", str(tmp_path / "p")])
    _, err = capsys.readouterr()
    assert status == 1 and "expected --opponent only with the default table" in err
    assert not (tmp_path / "p").exists()
