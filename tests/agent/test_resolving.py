"""The re-solving agent (``acpc-agent --resolve``, :mod:`agent.resolving`): a short no-limit
Leduc match over loopback against ``acpc-dealer`` with 0 invalid actions and re-solves in
its trace (told by ``acpc-agent explain``); fallbacks to translation counted with their
reason; same seed, same actions; a hot-swapped file rebuilds the re-solver at the next
hand; bad flags and unsupported games get one line."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agent.abstraction.actions import PRESETS
from agent.abstraction.buckets import LosslessCards
from agent.abstraction.translation import get_mapping
from agent.acpc.betting import parse_betting
from agent.acpc.cards import deck_for
from agent.acpc.errors import UsageError
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import MatchState, view_of
from agent.cli import GADGETS, RESOLVE_MODES, main
from agent.data import strategy_path
from agent.explain import main as explain_main
from agent.explain import tell_decision
from agent.resolve import GADGETS as RESOLVER_GADGETS
from agent.resolve import MODES, ResolveConfig
from agent.resolving import EARLIER, FAILED, TIME_BUDGET, ResolvingPolicy, resolve_support
from agent.strategy.hotswap import LoadedStrategy, StrategyReloader, load_for_game
from agent.strategy.purification import parse_purification
from tests.agent.test_agent_live import HOST, run_match, write_strategy

GAME = "leduc.nolimit.2p.game"
FCPA = "leduc.nolimit.2p.fcpa.strat"


@pytest.fixture(scope="module")
def leduc() -> Game:
    return load_game(GAME)


def policy(loaded: LoadedStrategy, config: ResolveConfig, seed: int = 1,
           records: list[dict[str, Any]] | None = None) -> ResolvingPolicy:
    return ResolvingPolicy(loaded, get_mapping("rand-pshar"), parse_purification("none"),
                           config, seed=seed, mapping_name="rand-pshar",
                           trace=None if records is None else records.append)


def ms(game: Game, betting: str, position: int, hand: int) -> MatchState:
    """Position 0 holds the first card of the deck, position 1 the second; board: the
    third."""
    deck = deck_for(game)
    return view_of(position, hand, parse_betting(game, betting), ((deck[0],), (deck[1],)),
                   (deck[2],))


async def test_a_resolving_agent_plays_our_dealer_with_resolves_in_its_trace(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "t.jsonl"
    stats = tmp_path / "stats.json"
    ours = ["--strategy", FCPA, "--resolve", "always", "--resolve-iterations", "30",
            "--seed", "3", "--trace", str(trace), "--stats", str(stats)]
    err, agent_errs, codes = await run_match(
        tmp_path, GAME, 40, [ours, ["--strategy", "builtin:random", "--seed", "4"]])
    assert "WARNING" not in err, err[:2000]  # 0 invalid actions
    assert codes == [0, 0], agent_errs
    summary = agent_errs[0]
    assert "hands 40," in summary and "re-solves " in summary, summary
    counters = json.loads(stats.read_text())
    assert counters["resolves"] > 0 and counters["failed_fallbacks"] == 0
    assert counters["time_budget_fallbacks"] == 0 and counters["illegal_fallbacks"] == 0
    assert f"re-solves {counters['resolves']} " in summary
    records = [json.loads(x) for x in trace.read_text().splitlines()]
    decisions = [r for r in records if r["event"] == "decision"]
    assert len(decisions) == counters["decisions"]
    resolved = [r for r in decisions if r["resolve"]["source"] == "resolve"]
    assert len(resolved) == counters["resolves"] == len(decisions)  # mode always
    assert counters["resolves_always"] == counters["resolves"]
    assert {r["resolve"]["reason"] for r in resolved} == {"always"}
    for r in resolved:
        info = r["resolve"]
        assert info["iterations"] == 30 and info["gadget"] == "reach-maxmargin"
        assert info["nodes"] > 1 and info["hands"] == 6 and info["exploitability"] >= 0
        assert sum(info["probs"]) == pytest.approx(1.0, abs=1e-5)
        assert r["played"] in info["actions"] and r["fallback"] is None
    out, errs = io.StringIO(), io.StringIO()
    assert explain_main([str(trace), "--limit", "3"], out, errs) == 0, errs.getvalue()
    assert "re-solved (always mode, gadget reach-maxmargin): subgame of" in out.getvalue()
    assert "30 CFR+ iterations" in out.getvalue() and "exploitability" in out.getvalue()


async def test_a_holdem_agent_resolves_the_river_over_the_protocol(tmp_path: Path) -> None:
    """Hold'em (the bundled file, ``--resolve round``) against a caller on ``acpc-dealer``:
    every hand reaches the river; before it the agent translates (source
    ``translation``), on it the first decision re-solves the river with every hole pair
    (1,326 hands, those the board blocks out of the gadget), later ones read the plan
    or re-solve; 0 invalid actions, and ``explain`` tells both kinds."""
    game = "holdem.nolimit.2p.reverse_blinds.game"
    trace = tmp_path / "t.jsonl"
    stats = tmp_path / "stats.json"
    ours = ["--strategy", "holdem.nolimit.2p.strat", "--resolve", "round",
            "--resolve-iterations", "4", "--seed", "3", "--trace", str(trace),
            "--stats", str(stats)]
    err, agent_errs, codes = await run_match(
        tmp_path, game, 3, [ours, ["--strategy", "builtin:call"]])
    assert "WARNING" not in err, err[:2000]
    assert codes == [0, 0], agent_errs
    counters = json.loads(stats.read_text())
    assert counters["failed_fallbacks"] == 0 and counters["illegal_fallbacks"] == 0
    decisions = [json.loads(x) for x in trace.read_text().splitlines()]
    decisions = [r for r in decisions if r["event"] == "decision"]
    river = [r for r in decisions if r["betting"].count("/") == 3]
    before = [r for r in decisions if r["betting"].count("/") < 3]
    assert before and all(r["resolve"]["source"] == "translation" for r in before)
    assert "bucket" in before[0]  # the translating record, as without --resolve
    assert counters["translated_rounds"] == len(before)
    assert len({r["hand"] for r in river}) == 3  # the caller takes every hand to the river
    first = {}
    for r in river:
        first.setdefault(r["hand"], r)
    for r in first.values():
        info = r["resolve"]
        assert info["source"] == "resolve" and info["hands"] == 1326
        assert info["reason"] == "new round"
        assert info["live_hands"] <= 1081 and info["iterations"] == 4
        assert r["played"] in info["actions"] and r["fallback"] is None
    assert counters["resolves_new_round"] == 3 and counters["resolves_always"] == 0
    assert counters["resolves"] == 3 + counters["resolves_off_plan"]
    out, errs = io.StringIO(), io.StringIO()
    assert explain_main([str(trace)], out, errs) == 0, errs.getvalue()
    assert "translated: not a re-solved round" in out.getvalue()
    assert "re-solved (round mode, gadget reach-maxmargin): subgame of" in out.getvalue()


def test_fallbacks_to_translation_are_counted_with_their_reason(leduc: Game) -> None:
    """A subgame above the node bound fails (translation plays the rest of the hand); a
    re-solve that cannot run its iterations within the time budget falls back too."""
    loaded = load_for_game(strategy_path(FCPA), leduc)
    records: list[dict[str, Any]] = []
    failing = policy(loaded, ResolveConfig(mode="always", max_nodes=50), records=records)
    first = failing.act(ms(leduc, "", 0, 0))
    assert failing.act(ms(leduc, f"{first}c/", 0, 0)) is not None
    st = failing.stats
    assert (st.failed_fallbacks, st.translated_decisions, st.resolves) == (1, 2, 0)
    assert records[0]["resolve"]["fallback"] == FAILED
    assert "at most 50 public nodes" in records[0]["resolve"]["error"]
    assert records[1]["resolve"]["fallback"] == EARLIER
    assert "node" in records[0] and "raw" in records[0]  # the translating record
    assert "re-solving fell back: re-solve failed" in "\n".join(tell_decision(records[0]))
    # the next hand re-solves again (and fails again: counted once per hand)
    failing.act(ms(leduc, "c", 1, 1))
    assert st.failed_fallbacks == 2

    records.clear()
    slow = policy(loaded, ResolveConfig(mode="always", iterations=1_000_000, seconds=1e-4),
                  records=records)
    slow.act(ms(leduc, "c", 1, 0))
    assert records[0]["resolve"]["fallback"] == TIME_BUDGET
    assert records[0]["resolve"]["iterations"] < 1_000_000
    assert slow.stats.time_budget_fallbacks == 1 and slow.stats.resolves == 0
    assert slow.stats.translated_decisions == 1


def test_same_seed_same_actions(leduc: Game) -> None:
    loaded = load_for_game(strategy_path(FCPA), leduc)
    runs = []
    for _ in range(2):
        p = policy(loaded, ResolveConfig(mode="always", iterations=20), seed=9)
        runs.append([str(p.act(ms(leduc, b, pos, h))) for h, (b, pos) in
                     enumerate([("c", 1), ("r3", 1), ("", 0), ("cc/", 0)] * 2)])
        assert p.stats.resolves == 8
    assert runs[0] == runs[1]


def test_a_depth_limit_is_in_the_trace_and_told(leduc: Game) -> None:
    """``--resolve-depth 1 --resolve-leaf multi``: a round-0 re-solve stops at the board
    (its trace record says so, and ``explain`` tells it); the round-1 re-solve reaches the
    end of the game (depth 1 still, no leaves)."""
    import argparse

    from agent.cli import _resolve_config
    args = argparse.Namespace(resolve="always", resolve_ms=None, gadget="resolve",
                              resolve_iterations=10, resolve_depth=1, resolve_leaf="multi")
    config = _resolve_config(args, leduc)
    assert (config.depth, config.leaf) == (1, "multi")
    loaded = load_for_game(strategy_path(FCPA), leduc)
    records: list[dict[str, Any]] = []
    p = policy(loaded, config, records=records)
    first = p.act(ms(leduc, "", 0, 0))
    p.act(ms(leduc, f"{first}c/", 0, 0))
    info = records[0]["resolve"]
    assert (info["depth"], info["leaf"]) == (1, "multi") and info["leaves"] > 0
    assert "depth limit 1 round(s): " in "\n".join(tell_decision(records[0]))
    assert "multi-valued continuations" in "\n".join(tell_decision(records[0]))
    last = records[-1]["resolve"]
    assert (last["depth"], last["leaf"], last["leaves"]) == (1, "", 0)
    args.resolve_depth = None
    with pytest.raises(UsageError, match="--resolve-leaf only with --resolve-depth"):
        _resolve_config(args, leduc)


def test_a_hot_swap_rebuilds_the_resolver_at_the_next_hand(tmp_path: Path,
                                                          leduc: Game) -> None:
    cards = LosslessCards(leduc)
    live = write_strategy(tmp_path / "live.strat", leduc, PRESETS["fcpa"], cards, "random")
    passive = write_strategy(tmp_path / "passive.strat", leduc, PRESETS["fcpa"], cards,
                             "passive")
    records: list[dict[str, Any]] = []
    p = policy(load_for_game(live, leduc), ResolveConfig(mode="always", iterations=10),
               records=records)
    first = p.resolver
    opened = p.act(ms(leduc, "", 0, 0))
    shutil.copyfile(passive, tmp_path / "next.strat")
    (tmp_path / "next.strat").replace(live)
    logged: list[str] = []
    reloader = StrategyReloader(live, leduc, p, lambda event, **kw: logged.append(event))
    assert asyncio.run(reloader.reload()) and logged == ["strategy_swapped"]
    p.act(ms(leduc, f"{opened}c/", 0, 0))  # the same hand: the old file and resolver
    assert p.resolver is first and p.stats.resolver_builds == 1
    p.act(ms(leduc, "c", 1, 1))  # the next hand: the new file's resolver
    assert p.resolver is not first and p.stats.resolver_builds == 2
    assert p.resolver.blueprint is p.loaded.strategy
    checksums = [r["strategy"] for r in records]
    assert checksums[0] == checksums[1] != checksums[2]
    assert checksums[2] == p.loaded.strategy.checksum[:16]


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["--strategy", FCPA, "--resolve-ms", "50"], 2,
         "acpc-agent: error: --resolve-ms apply only with --resolve MODE"),
        (["--strategy", "builtin:call", "--resolve", "round"], 2,
         "acpc-agent: error: --resolve apply to strategy files, not to the built-in"),
        (["--strategy", FCPA, "--resolve", "round", "--resolve-iterations", "0"], 2,
         "acpc-agent: error: argument --resolve-iterations: expected a positive integer, "
         "got '0'"),  # a bad value: status 2, as every command (1 on main)
        (["--strategy", FCPA, "--resolve", "round", "--resolve-ms", "-5"], 2,
         "acpc-agent: error: argument --resolve-ms: expected a number > 0, got '-5'"),
        (["--strategy", FCPA, "--resolve", "round", "--gadgets", "safe"], 2,
         "argument --gadgets: invalid choice: 'safe'"),
    ],
)
def test_bad_resolve_flags_are_one_line(argv: list[str], code: int, message: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    if code == 2:
        with pytest.raises(SystemExit) as exc:
            main([GAME, HOST, "9", *argv])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert message in err and err.splitlines()[-1].startswith("acpc-agent: error:")
    else:
        assert main([GAME, HOST, "9", *argv]) == 1
        err = capsys.readouterr().err
        assert err == message + "\n"


@pytest.mark.parametrize(
    ("game", "message"),
    [
        ("leduc.limit.2p.game", "acpc-agent: error: expected a two-player no-limit game for "
         "--resolve, got 2 players, limit\n"),
    ],
)
def test_unsupported_games_are_refused_in_one_line(
    game: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([game, HOST, "9", "--strategy", FCPA, "--resolve", "round"]) == 1
    assert capsys.readouterr().err == message
    assert resolve_support(load_game("royal.nolimit.2p.game")) is None  # its last round
    assert resolve_support(load_game("holdem.nolimit.2p.reverse_blinds.game")) is None
    assert resolve_support(load_game("leduc.nolimit.2p.stack400.game")) is None


def test_the_cli_names_match_the_resolver() -> None:
    from agent.cli import RESOLVE_LEAVES
    from agent.resolve.depth import LEAVES

    assert set(RESOLVE_MODES) == set(MODES) and GADGETS == RESOLVER_GADGETS
    assert RESOLVE_LEAVES == LEAVES  # the CLI's copy (parsed without numpy) is the resolver's


@pytest.mark.parametrize(("resolve", "expected"), [
    ("3", "expected 'resolve' to be an object"),
    ('{"probs": ["x"]}', "expected 'resolve' to be an object whose 'probs' is a list of "
                         "numbers"),
])
def test_explain_refuses_a_bad_resolve_field_in_one_line(tmp_path: Path, resolve: str,
                                                        expected: str) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text(f'{{"hand": 0, "event": "decision", "resolve": {resolve}}}\n')
    out, err = io.StringIO(), io.StringIO()
    assert explain_main([str(trace)], out, err) == 1
    assert err.getvalue().startswith(f"acpc-agent explain: error: {trace}:1: {expected}")
    assert err.getvalue().count("\n") == 1


async def test_hot_swap_over_the_protocol_with_resolve(tmp_path: Path, leduc: Game) -> None:
    """``--resolve round --reload``: a file replaced mid-match is played (and re-solved
    from) from a hand boundary on; the summary counts the second resolver."""
    cards = LosslessCards(leduc)
    live = write_strategy(tmp_path / "live.strat", leduc, PRESETS["fcpa"], cards, "random")
    passive = write_strategy(tmp_path / "passive.strat", leduc, PRESETS["fcpa"], cards,
                             "passive", seed=1)
    trace = tmp_path / "t.jsonl"

    async def swap() -> None:
        deadline = asyncio.get_running_loop().time() + 300  # a loaded machine compiles slowly
        while asyncio.get_running_loop().time() < deadline:
            lines = trace.read_text().splitlines() if trace.exists() else []
            if lines and lines[-1].endswith("}") and json.loads(lines[-1])["hand"] >= 30:
                (tmp_path / "next.strat").write_bytes(passive.read_bytes())
                (tmp_path / "next.strat").replace(live)
                return
            await asyncio.sleep(0.01)
        raise AssertionError("hand 30 never came")

    ours = ["--strategy", str(live), "--resolve", "round", "--resolve-iterations", "20",
            "--reload", "--trace", str(trace), "--seed", "1"]
    err, agent_errs, codes = await run_match(
        tmp_path, GAME, 400, [ours, ["--strategy", "builtin:call"]], during=swap())
    assert "WARNING" not in err and codes == [0, 0], agent_errs
    assert "resolvers built 2" in agent_errs[0] and "swaps 1," in agent_errs[0]
    records = [json.loads(x) for x in trace.read_text().splitlines()]
    per_hand: dict[int, set[str]] = {}
    for r in records:
        if r["event"] == "decision":
            per_hand.setdefault(r["hand"], set()).add(r["strategy"])
    assert all(len(v) == 1 for v in per_hand.values()), "a swap happened inside a hand"
    sequence = [next(iter(per_hand[h])) for h in sorted(per_hand)]
    assert len(set(sequence)) == 2 and sequence[0] != sequence[-1]
    switch = sequence.index(sequence[-1])
    assert set(sequence[switch:]) == {sequence[-1]}
