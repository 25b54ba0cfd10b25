"""The agent over real loopback sockets against ``acpc-dealer``.

Issue 4's acceptance: strategy agents play full matches (heads-up no-limit hold'em in both
positions, 3-player no-limit, Leduc) with 0 invalid-action warnings from the dealer; hot-swap
mid-match (the next hands use the new file; a corrupt file is rejected and play goes on;
no hand is lost); bad strategy files stop the agent with their precise one-line error.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from agent.abstraction.actions import PRESETS, BettingAbstraction, build_tree
from agent.abstraction.buckets import BlindCards, CardAbstraction, LosslessCards
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.strategy.fileformat import dump_strategy, table_layout
from evaluation.logtool import main as logtool_main
from tests.support.dealer_harness import Dealer

HOST = "127.0.0.1"


def write_strategy(
    path: Path, game: Game, betting: BettingAbstraction, cards: CardAbstraction,
    kind: str = "random", seed: int = 0,
) -> Path:
    tree = build_tree(game, betting)
    layout = table_layout(tree, cards.buckets)
    rng = np.random.default_rng(seed)
    table = np.empty(layout.total)
    for node in tree.decision_nodes:
        k = len(node.actions)
        n = int(layout.rows[node.id])
        if kind == "random":
            rows = rng.random((n, k)) + 0.05
            rows /= rows.sum(axis=1, keepdims=True)
        else:
            rows = np.zeros((n, k))
            rows[:, -1 if kind == "aggressive" else 0] = 1.0
        start = int(layout.offsets[node.id])
        table[start : start + rows.size] = rows.ravel()
    return dump_strategy(path, game, betting, cards.spec, table, tree=tree,
                         meta={"solver": f"test-{kind}"})


async def start_agent(game: str, port: int, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent.cli", game, HOST, str(port), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )


async def run_match(
    tmp_path: Path, game_file: str, hands: int, agents: list[list[str]], seed: int = 11,
    timeout: float = 300.0, during: object = None,
) -> tuple[str, list[str], list[int]]:
    """Dealer + one ``acpc-agent`` per seat; returns (dealer stderr, agent stderrs, codes)."""
    names = [f"S{i + 1}" for i in range(len(agents))]
    dealer = await Dealer.start(["live", game_file, str(hands), str(seed), *names, "-q"],
                                tmp_path)
    procs = [await start_agent(game_file, port, *args)
             for port, args in zip(dealer.ports, agents, strict=True)]
    if during is not None:
        await during  # type: ignore[misc]
    rc, _, err = await dealer.wait(timeout)
    outs = [await asyncio.wait_for(p.communicate(), 60) for p in procs]
    assert rc == 0, err.decode()[-2000:]
    assert (tmp_path / "live.log").read_text().splitlines()[-1].startswith("SCORE:")
    assert logtool_main(["verify", game_file, str(tmp_path / "live.log")]) == 0
    return err.decode(), [o[1].decode() for o in outs], [p.returncode or 0 for p in procs]


@pytest.fixture(scope="module")
def strategies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("strategies")
    nl2 = load_game("holdem.nolimit.2p.reverse_blinds.game")
    nl3 = load_game("holdem.nolimit.3p.game")
    leduc = load_game("leduc.limit.2p.game")
    from agent.abstraction.holdem_buckets import HoldemCards

    holdem_cards = HoldemCards.build((169, 8, 8, 8), samples=2000, seed=3)
    return {
        "nl2": write_strategy(d / "nl2.strat", nl2, PRESETS["fchpa3"], holdem_cards),
        "nl3": write_strategy(d / "nl3.strat", nl3, PRESETS["fcpa3"], BlindCards(nl3)),
        "leduc": write_strategy(d / "leduc.strat", leduc, PRESETS["fcpa"], LosslessCards(leduc)),
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    ("key", "game_file", "hands", "players"),
    [
        ("nl2", "holdem.nolimit.2p.reverse_blinds.game", 1_000, 2),
        ("nl3", "holdem.nolimit.3p.game", 1_000, 3),
        ("leduc", "leduc.limit.2p.game", 2_000, 2),
    ],
)
async def test_strategy_agent_plays_clean_matches(
    tmp_path: Path, strategies: dict[str, Path], key: str, game_file: str, hands: int,
    players: int,
) -> None:
    """Seats rotate every hand, so the strategy agent plays every position."""
    ours = ["--strategy", str(strategies[key]), "--seed", "5", "--mappings", "rand-pshar"]
    others = [["--strategy", "builtin:random", "--seed", str(i)] for i in range(players - 1)]
    err, agent_errs, codes = await run_match(tmp_path, game_file, hands, [ours, *others])
    assert "WARNING" not in err, err[:2000]
    assert codes == [0] * players, agent_errs
    summary = agent_errs[0]
    assert f"hands {hands}," in summary, summary
    if key != "leduc":
        assert "translations " in summary and "translations 0," not in summary, summary


async def _swap_during(trace: Path, target: Path, new: Path, corrupt: bytes) -> None:
    """Swap ``target`` for ``new`` once hand 300 was played, later write a corrupt file."""

    async def wait_for_hand(hand: int) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if trace.exists():
                lines = trace.read_text().splitlines()
                if lines and lines[-1].endswith("}") and json.loads(lines[-1])["hand"] >= hand:
                    return
            await asyncio.sleep(0.01)
        raise AssertionError(f"hand {hand} never came")

    await wait_for_hand(300)
    tmp = target.with_suffix(".tmp")
    tmp.write_bytes(new.read_bytes())
    os.replace(tmp, target)
    await wait_for_hand(1500)
    tmp.write_bytes(corrupt)
    os.replace(tmp, target)


async def test_hot_swap_mid_match(tmp_path: Path) -> None:
    leduc = load_game("leduc.limit.2p.game")
    cards = LosslessCards(leduc)
    live = write_strategy(tmp_path / "live.strat", leduc, PRESETS["fcpa"], cards, "aggressive")
    passive = write_strategy(tmp_path / "passive.strat", leduc, PRESETS["fcpa"], cards,
                             "passive")
    first_checksum = _checksum(live)
    second_checksum = _checksum(passive)
    trace = tmp_path / "trace.jsonl"
    ours = ["--strategy", str(live), "--reload", "--trace", str(trace), "--seed", "1"]
    corrupt = live.read_bytes()[:200]  # truncated
    swapper = _swap_during(trace, live, passive, corrupt)
    err, agent_errs, codes = await run_match(
        tmp_path, "leduc.limit.2p.game", 4000, [ours, ["--strategy", "builtin:call"]],
        during=swapper,
    )
    assert codes == [0, 0], agent_errs
    assert "WARNING" not in err
    records = [r for x in trace.read_text().splitlines()
               if (r := json.loads(x))["event"] == "decision"]
    per_hand: dict[int, set[str]] = {}
    for r in records:
        per_hand.setdefault(r["hand"], set()).add(r["strategy"])
    assert all(len(v) == 1 for v in per_hand.values()), "a swap happened inside a hand"
    sequence = [next(iter(per_hand[h])) for h in sorted(per_hand)]
    switch = sequence.index(second_checksum[:16])
    assert set(sequence[:switch]) == {first_checksum[:16]}
    assert set(sequence[switch:]) == {second_checksum[:16]}
    # the aggressive file raised at every opportunity, the passive one never does
    assert all(r["real"] != "r" for r in records if r["strategy"] == second_checksum[:16])
    lines = [json.loads(x) for x in agent_errs[0].splitlines() if x.startswith("{")]
    events = [x["event"] for x in lines]
    assert events.count("strategy_swapped") == 1 and events.count("strategy_rejected") >= 1
    swapped = next(x for x in lines if x["event"] == "strategy_swapped")
    assert swapped["checksum"] == second_checksum
    rejected = next(x for x in lines if x["event"] == "strategy_rejected")
    assert "truncated file" in rejected["error"] or "corrupt header" in rejected["error"]
    assert "hands 4000," in agent_errs[0]


def _checksum(path: Path) -> str:
    from agent.strategy.fileformat import read_header

    header, _ = read_header(path)
    return str(header["checksum"])


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda b: b[:100], "truncated file"),
        (lambda b: b[:-1] + bytes([b[-1] ^ 1]), "checksum mismatch"),
        (lambda b: b"NOTSTRAT" + b[8:], "not a strategy file"),
    ],
)
def test_bad_strategy_file_stops_the_agent_with_its_error(
    tmp_path: Path, mutate: object, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent.cli import main

    leduc = load_game("leduc.limit.2p.game")
    path = write_strategy(tmp_path / "s.strat", leduc, PRESETS["fcpa"], LosslessCards(leduc))
    path.write_bytes(mutate(path.read_bytes()))  # type: ignore[operator]
    assert main(["leduc.limit.2p.game", HOST, "9", "--strategy", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("acpc-agent: error: ") and message in err
    assert err.count("\n") == 1


def test_strategy_for_another_game_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agent.cli import main

    leduc = load_game("leduc.limit.2p.game")
    path = write_strategy(tmp_path / "s.strat", leduc, PRESETS["fcpa"], LosslessCards(leduc))
    assert main(["kuhn.limit.3p.game", HOST, "9", "--strategy", str(path)]) == 1
    assert "strategy is for another game" in capsys.readouterr().err
