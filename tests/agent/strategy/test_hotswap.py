"""The hot-swap reloader cannot die of a file (issue 28, item 4).

Any exception while loading a new file (not only the documented errors: ``OverflowError``
from ``cards.buckets = inf``, a ``RuntimeError`` from a loader) is one ``strategy_rejected``
JSON line; the old strategy keeps playing and the next good file is swapped in. Tested on the
reloader alone, with a real agent (client + policy + reloader, a loader that raises
anything) against a real ``acpc-dealer``, and with ``acpc-agent --reload`` itself.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest

from agent.abstraction.actions import PRESETS
from agent.abstraction.buckets import LosslessCards
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.acpc.matchstate import parse_matchstate
from agent.strategy.fileformat import MAGIC, read_header
from agent.strategy.hotswap import LoadedStrategy, StrategyReloader, load_for_game
from tests.agent.test_agent_live import write_strategy
from tests.support.dealer_harness import Dealer, Reply, answer, run_client

GAME = "leduc.limit.2p.game"
HOST = "127.0.0.1"
WAIT_S = 30.0
"""The longest any step may take (a bound, not a timing: the steps take well under 1 s)."""


def with_buckets(good: Path, target: Path, value: float) -> Path:
    """``good`` with ``cards.buckets[0]`` replaced by ``value`` (e.g. ``inf``), table kept."""
    header, _ = read_header(good)
    header["cards"] = dict(header["cards"], buckets=[value, *header["cards"]["buckets"][1:]])
    packed = msgpack.packb(header, use_bin_type=True)
    head = MAGIC + struct.pack("<Q", len(packed)) + packed
    offset = header["table_offset"]
    assert len(head) <= offset
    data = good.read_bytes()
    return _replace(target, head + b"\0" * (offset - len(head)) + data[offset:])


def _replace(target: Path, data: bytes) -> Path:
    """Write ``target`` the way a user swaps a file in: a new file renamed over it."""
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)
    return target


def _checksum(path: Path) -> str:
    return str(read_header(path)[0]["checksum"])


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    game = load_game(GAME)
    cards = LosslessCards(game)
    first = write_strategy(tmp_path / "first.strat", game, PRESETS["fcpa"], cards, "aggressive")
    second = write_strategy(tmp_path / "second.strat", game, PRESETS["fcpa"], cards, "passive")
    live = tmp_path / "live.strat"
    live.write_bytes(first.read_bytes())
    return {"first": first, "second": second, "live": live,
            "inf": with_buckets(first, tmp_path / "inf.strat", math.inf),
            "huge": with_buckets(first, tmp_path / "huge.strat", 1e300)}


class _Target:
    def __init__(self, loaded: LoadedStrategy) -> None:
        self.loaded = loaded

    def swap(self, loaded: LoadedStrategy) -> None:
        self.loaded = loaded


@pytest.mark.parametrize("error", [OverflowError("cannot convert float infinity to integer"),
                                   RuntimeError("a loader bug"), KeyError("buckets")])
async def test_any_loader_error_is_a_rejection(files: dict[str, Path],
                                               error: Exception) -> None:
    game = load_game(GAME)
    target = _Target(load_for_game(files["live"], game))
    events: list[tuple[str, dict[str, Any]]] = []

    def loader(path: Path, g: Game, current: LoadedStrategy | None) -> LoadedStrategy:
        raise error

    reloader = StrategyReloader(files["live"], game, target,
                                lambda event, **kw: events.append((event, kw)), loader=loader)
    old = target.loaded
    assert await reloader.reload() is False
    assert target.loaded is old and reloader.rejections == 1
    [(event, fields)] = events
    assert event == "strategy_rejected"
    assert fields["error"].startswith(type(error).__name__ + ": ")
    reloader.loader = lambda p, g, c: load_for_game(p, g, c)
    _replace(files["live"], files["second"].read_bytes())
    assert await reloader.reload() is True
    assert target.loaded.strategy.checksum == _checksum(files["second"])


async def test_run_reports_when_it_stops(files: dict[str, Path]) -> None:
    """A failure outside loading (here: the log itself fails once) ends the watch with a
    ``reloader_stopped`` line and :attr:`stopped`, not with an exception in the task."""
    game = load_game(GAME)
    target = _Target(load_for_game(files["live"], game))
    events: list[str] = []

    def log(event: str, **fields: Any) -> None:
        events.append(event)
        if event == "strategy_swapped":
            raise RuntimeError("the log is broken")

    reloader = StrategyReloader(files["live"], game, target, log, poll_seconds=0.01)
    task = asyncio.create_task(reloader.run())
    reloader.request()
    await asyncio.wait_for(task, WAIT_S)  # returns: no exception out of the task
    assert events == ["strategy_swapped", "reloader_stopped"]
    assert reloader.stopped == "RuntimeError: the log is broken"


def _pacing_responder(game: Game, pace: dict[str, float]) -> Callable[[str], Reply]:
    """Seat 2: checks/calls; waits ``pace['s']`` at every state (the match lasts while a
    test swaps files, then runs at full speed once the test sets it to 0); counts the states
    in ``pace['states']`` (the match has begun: the agent is connected and watching)."""

    def respond(line: str) -> Reply:
        pace["states"] = pace.get("states", 0) + 1
        ms = parse_matchstate(line, game)
        reply: list[bytes | float] = [pace["s"]] if pace["s"] else []
        if ms.is_to_act:
            reply.append(answer(line, "c"))
        return reply

    return respond


async def _wait_for(what: Callable[[], bool], why: str) -> None:
    for _ in range(int(WAIT_S / 0.01)):
        if what():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{why} never came in {WAIT_S} s")


async def test_live_agent_keeps_playing_through_loader_errors(
    tmp_path: Path, files: dict[str, Path]
) -> None:
    """A real agent (client, strategy policy, reloader) against ``acpc-dealer``: a file whose
    loading raises ``RuntimeError``, then one raising ``OverflowError`` (inf buckets, with
    the real loader), are rejected while the first strategy plays on; the next good file is
    swapped in and played; the match ends cleanly."""
    from agent.agents import make_policy
    from agent.client import play
    from agent.policy import StrategyPolicy

    game = load_game(GAME)
    hands = 600
    pace = {"s": 0.005}
    dealer = await Dealer.start(["live", GAME, str(hands), "3", "S1", "S2", "-q"], tmp_path)
    opponent = asyncio.ensure_future(run_client(dealer.ports[1],
                                                _pacing_responder(game, pace)))
    policy = make_policy(str(files["live"]), game, seed=1)
    assert isinstance(policy, StrategyPolicy)
    events: list[tuple[str, dict[str, Any]]] = []
    broken = files["live"].parent / "broken.strat"
    broken.write_bytes(files["first"].read_bytes() + b"\0")  # a marker for the loader

    def loader(path: Path, g: Game, current: LoadedStrategy | None) -> LoadedStrategy:
        if path.stat().st_size == broken.stat().st_size:
            raise RuntimeError("a loader that fails in an unforeseen way")
        return load_for_game(path, g, current)

    reloader = StrategyReloader(files["live"], game, policy,
                                lambda event, **kw: events.append((event, kw)),
                                poll_seconds=0.02, loader=loader)
    watch = asyncio.create_task(reloader.run())
    agent = asyncio.ensure_future(play(HOST, dealer.ports[0], game, policy))
    try:
        for name, count in (("broken", 1), ("inf", 2)):
            _replace(files["live"], (broken if name == "broken" else files[name]).read_bytes())
            await _wait_for(lambda c=count: reloader.rejections == c, f"rejection {count}")
            assert not agent.done() and not watch.done()
            assert policy.loaded.strategy.checksum == _checksum(files["first"])
        _replace(files["live"], files["second"].read_bytes())
        await _wait_for(lambda: reloader.swaps == 1, "the swap")
        pace["s"] = 0.0
        summary = await asyncio.wait_for(agent, WAIT_S)
        rc, _, err = await dealer.wait(WAIT_S)
        assert not watch.done()  # still watching at the end of the match
    finally:
        watch.cancel()
        opponent.cancel()
        agent.cancel()
    assert rc == 0, err[-2000:]
    assert summary.hands == hands
    kinds = [e for e, _ in events]
    assert kinds == ["strategy_rejected", "strategy_rejected", "strategy_swapped"]
    assert events[0][1]["error"] == "RuntimeError: a loader that fails in an unforeseen way"
    assert events[2][1]["checksum"] == _checksum(files["second"])
    assert policy.loaded.strategy.checksum == _checksum(files["second"])


async def test_acpc_agent_reload_survives_inf_buckets(
    tmp_path: Path, files: dict[str, Path]
) -> None:
    """``acpc-agent --reload`` against ``acpc-dealer``: files with ``cards.buckets`` ``inf``
    and ``1e300`` are rejected (one JSON line each, whatever the loader raises for them), the
    next good file is swapped in, the agent ends the match with its summary and status 0 and
    no traceback."""
    game = load_game(GAME)
    hands = 600
    pace = {"s": 0.005}
    dealer = await Dealer.start(["live", GAME, str(hands), "3", "S1", "S2", "-q"], tmp_path)
    opponent = asyncio.ensure_future(run_client(dealer.ports[1],
                                                _pacing_responder(game, pace)))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agent.cli", GAME, HOST, str(dealer.ports[0]),
        "--strategy", str(files["live"]), "--reload", "--seed", "1",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    lines: list[str] = []

    async def read_stderr() -> None:
        assert proc.stderr is not None
        while raw := await proc.stderr.readline():
            lines.append(raw.decode())

    reader = asyncio.ensure_future(read_stderr())

    def events() -> list[dict[str, Any]]:
        return [json.loads(x) for x in lines if x.startswith("{")]

    try:
        await _wait_for(lambda: pace.get("states", 0) > 0, "the first hand")
        for name, count in (("inf", 1), ("huge", 2)):
            _replace(files["live"], files[name].read_bytes())
            await _wait_for(lambda c=count: sum(e["event"] == "strategy_rejected"
                                                for e in events()) == c,
                            f"rejection {count} (stderr so far: {lines})")
        _replace(files["live"], files["second"].read_bytes())
        await _wait_for(lambda: any(e["event"] == "strategy_swapped" for e in events()),
                        "the swap")
        pace["s"] = 0.0
        rc, _, err = await dealer.wait(WAIT_S)
        code = await asyncio.wait_for(proc.wait(), WAIT_S)
        await asyncio.wait_for(reader, WAIT_S)
    finally:
        opponent.cancel()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    text = "".join(lines)
    assert rc == 0, err[-2000:]
    assert code == 0 and "Traceback" not in text, text
    kinds = [e["event"] for e in events()]
    assert kinds == ["strategy_rejected", "strategy_rejected", "strategy_swapped"], text
    assert events()[2]["checksum"] == _checksum(files["second"])
    summary = lines[-1]
    assert summary.startswith("acpc-agent: hands 600,") and "swaps 1, rejected 2" in summary
