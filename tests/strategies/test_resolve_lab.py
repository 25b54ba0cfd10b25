"""The re-solving lab on a tiny no-limit Leduc (stacks 3): the safety check, the assembled
agent files and the ``resolve-lab`` command.

The blueprints are external-sampling MCCFR solutions of the ``fcpa`` abstraction with three
seeds; the settings are the responder limited to the blueprint's own sizes (pot, all-in)
and to those plus the half pot the agent's abstraction lacks (the published experiment's
shape)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agent.abstraction.actions import parse_betting_abstraction
from agent.abstraction.buckets import LosslessCards
from agent.acpc.errors import StrategyFileError
from agent.acpc.gamedef import parse_gamedef
from agent.resolve import ResolveConfig, Resolver
from agent.strategy.fileformat import Strategy, dump_strategy, load_strategy
from strategies.cli import main
from strategies.games.abstract import AbstractGame, build_abstract_game
from strategies.measure import resolve_lab as rl
from strategies.measure.best_response import best_response
from strategies.solvers.cfr import Solver
from tests.agent.resolve.test_gadgets import TINY

SEEDS = (1, 2, 3)
SAFE = ("resolve", "maxmargin", "reach-maxmargin")


@pytest.fixture(scope="module")
def blueprints(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Strategy]:
    game = parse_gamedef(TINY, "tiny-leduc")
    betting = parse_betting_abstraction("fcpa")
    cards = LosslessCards(game)
    agame = build_abstract_game(game, betting, cards)
    out = {}
    for seed in SEEDS:
        solver = Solver(agame, "mccfr-es", seed=seed)
        solver.iterate(3000)
        path = tmp_path_factory.mktemp("bp") / f"tiny-{seed}.strat"
        dump_strategy(path, game, betting, cards.spec, solver.average_strategy(),
                      tree=agame.tree)
        out[seed] = load_strategy(path)
    return out


def games_for(bp: Strategy, extra: tuple[float, ...]) -> tuple[AbstractGame, AbstractGame]:
    setting = rl.blueprint_setting(bp, "own" if not extra else "own+", extra)
    return rl.responder_game(bp.game, setting, 0), rl.responder_game(bp.game, setting, 1)


def brs(games: tuple[AbstractGame, AbstractGame],
        tables: tuple[np.ndarray, np.ndarray]) -> tuple[float, float]:
    """What the responder in seat q wins against the agent in 1 - q."""
    return (best_response(games[1], tables[1], 0).value,
            best_response(games[0], tables[0], 1).value)


def test_safe_gadgets_are_never_more_exploitable_than_the_translating_blueprint(
        blueprints: dict[int, Strategy]) -> None:
    """Over three blueprints and both settings, in each seat, a best responder wins no more
    against the re-solving agent (each safe gadget) than against the translating blueprint,
    up to what the re-solves' own accuracy estimates leave on the table."""
    gains = []
    for seed, bp in blueprints.items():
        for extra in ((), (0.5,)):
            games = games_for(bp, extra)
            translating = brs(games, tuple(rl.translating_table(bp, games[p], p, "rand-pshar",
                                                                "none") for p in (0, 1)))
            for gadget in SAFE:
                resolver = Resolver(bp, ResolveConfig(gadget=gadget, iterations=100))
                t0, s0 = rl.resolving_table(games[0], 0, resolver)
                t1, s1 = rl.resolving_table(games[1], 1, resolver)
                assert s0.solves > 0 and s1.solves > 0
                got = brs(games, (t0, t1))
                allowance = (s1.total_exploitability, s0.total_exploitability)
                for q in (0, 1):
                    assert got[q] <= translating[q] + allowance[q] + 1e-9, (
                        seed, extra, gadget, q, got[q], translating[q])
                gains.append(translating[0] + translating[1] - got[0] - got[1])
    assert max(gains) > 0.1  # with the half pot the re-solving agent gains a lot


def test_multi_valued_leaves_pass_the_safety_check_where_single_valued_ones_fail(
        blueprints: dict[int, Strategy]) -> None:
    """Depth-limited re-solving (depth 1: every round-0 subgame stops at the board), at
    every decision (mode ``always``, so round 0 is re-solved too): with multi-valued leaves
    each safe gadget is never more exploitable than the translating blueprint (three
    blueprints, both settings, each seat, up to the re-solves' accuracy estimates); with
    single-valued (blueprint) leaves it is, in some case of the ``own`` setting (the
    opponent is assumed to play the blueprint below the leaf: the known flaw the
    multi-valued leaves address; they are not safe in general either:
    docs/reports/resolve-lab.md, depth limits)."""
    unsafe_single = 0
    for bp in blueprints.values():
        for extra in ((), (0.5,)):
            games = games_for(bp, extra)
            translating = brs(games, tuple(rl.translating_table(bp, games[p], p, "rand-pshar",
                                                                "none") for p in (0, 1)))
            for gadget in SAFE:
                for leaf in ("multi", "blueprint") if not extra else ("multi",):
                    resolver = Resolver(bp, ResolveConfig(gadget=gadget, iterations=100,
                                                          mode="always", depth=1, leaf=leaf))
                    t0, s0 = rl.resolving_table(games[0], 0, resolver)
                    t1, s1 = rl.resolving_table(games[1], 1, resolver)
                    got = brs(games, (t0, t1))
                    allowance = (s1.total_exploitability, s0.total_exploitability)
                    worse = [got[q] > translating[q] + allowance[q] + 1e-9 for q in (0, 1)]
                    if leaf == "multi":
                        assert not any(worse), (extra, gadget, got, translating)
                    else:
                        unsafe_single += any(worse)
    assert unsafe_single > 0


def test_agent_files_round_trip(blueprints: dict[int, Strategy], tmp_path: Path) -> None:
    """An assembled agent written as a file and read back (validated) is best-responded to
    the same values by a table rebuilt from the file alone."""
    bp = blueprints[1]
    games = games_for(bp, (0.5,))
    resolver = Resolver(bp, ResolveConfig(gadget="resolve", iterations=50))
    tables = (rl.resolving_table(games[0], 0, resolver)[0],
              rl.resolving_table(games[1], 1, resolver)[0])
    path = tmp_path / "agent.json"
    count = rl.agent_file(path, games, tables, {"agent": "resolve"})
    assert count > 100
    game, rows = rl.read_agent_file(path)
    assert game.fingerprint == bp.game.fingerprint
    assert sum(len(r) for r in rows.values()) == count
    rebuilt = (rl.table_from_file(games[0], 0, rows[0]), rl.table_from_file(games[1], 1, rows[1]))
    np.testing.assert_allclose(brs(games, rebuilt), brs(games, tables), atol=1e-9)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d["seats"]["0"].update({"c|Ks|": {"c": 1.0}}), "expected seat 0 to act"),
    (lambda d: d["seats"]["0"].update({"|Ks|": {"r99": 1.0}}), "expected a legal action"),
    (lambda d: d["seats"]["0"].update({"|Ks|": {"c": 0.5}}), "summing to 1"),
    (lambda d: d["seats"]["0"].update({"|Kx|": {"c": 1.0}}), "expected cards"),
    (lambda d: d["seats"]["0"].update({"|Ks|Kh": {"c": 1.0}}), "board cards"),
    (lambda d: d.update(version=9), "version"),
    (lambda d: d["seats"]["0"].update({"|Ks|": {"c": [[1.0]]}}), "nested at most 4"),
])
def test_agent_files_refuse_bad_input(tmp_path: Path, edit: object, message: str) -> None:
    """A bad agent file gets one line saying what was expected and where."""
    doc = {"format": rl.AGENT_FILE_FORMAT, "version": rl.AGENT_FILE_VERSION, "game": TINY,
           "description": {}, "seats": {"0": {"|Ks|": {"c": 0.25, "r3": 0.75}}, "1": {}}}
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(doc))
    rl.read_agent_file(path)
    edit(doc)  # type: ignore[operator]
    path.write_text(json.dumps(doc))
    with pytest.raises(StrategyFileError, match=message) as err:
        rl.read_agent_file(path)
    assert "\n" not in str(err.value)


def test_resolve_lab_command(blueprints: dict[int, Strategy], tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    """``acpc-strategy resolve-lab`` prints the table and writes CSV, JSON, the PNG and the
    agent files."""
    bp = blueprints[2]
    assert bp.path is not None
    code = main(["resolve-lab", "--blueprint", str(bp.path), "--setting", "own+0.5",
                 "--mappings", "rand-pshar", "--purify", "none", "--gadgets", "resolve",
                 "--resolve-iterations", "30", "--value-iterations", "200", "--out", str(tmp_path),
                 "--agent-files", str(tmp_path / "agents")])
    assert code == 0
    out = capsys.readouterr().out
    assert "translate rand-pshar (none)" in out and "resolve resolve" in out
    records = json.loads((tmp_path / "resolve_lab.json").read_text())
    assert [r["agent"] for r in records] == ["translate", "resolve"]
    assert all(r["exploitability_average"] > -0.01 for r in records)
    assert (tmp_path / "resolve_lab.png").stat().st_size > 1000
    assert len(list((tmp_path / "agents").glob("*.json"))) == 2


def test_settings_parse() -> None:
    from strategies.commands.resolve_lab import parse_setting

    assert parse_setting("own") == ("own", ())
    assert parse_setting("own+0.5,0.75") == ("own+0.5,0.75", (0.5, 0.75))
    assert parse_setting("every-chip") == ("every-chip", None)
    for bad in ("mine", "own+", "own+x", "own+-1"):
        with pytest.raises(ValueError, match="expected a setting"):
            parse_setting(bad)
