"""Trusting a table verified before (agent.strategy.verified): skipped only for the very
same file; a changed, touched or corrupted file is checked again; ``verify="full"`` always
checks; the hot-swap uses the same rule."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agent.abstraction.actions import PRESETS
from agent.acpc.errors import StrategyFileError
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.strategy import kernels
from agent.strategy.fileformat import dump_strategy, load_strategy, read_header
from agent.strategy.hotswap import StrategyReloader, load_for_game
from agent.strategy.verified import SETTLE_NS, is_verified, mark_verified
from tests.agent.strategy.test_fileformat import CARDS, random_table


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACPC_ARENA_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts full checks (calls of the checksum kernel's wrapper)."""
    calls: list[int] = []
    real = kernels.table_checksum

    def counting(table: Any) -> str:
        calls.append(1)
        return real(table)

    monkeypatch.setattr(kernels, "table_checksum", counting)
    return calls


LOSSLESS = {"kind": "lossless", "buckets": [3, 15]}  # what load_for_game can rebuild


def _settled_file(path: Path, game: Game, seed: int = 0,
                  cards: dict[str, Any] = CARDS) -> Path:
    dump_strategy(path, game, PRESETS["fcpa"], cards, random_table(game, cards["buckets"], seed))
    time.sleep(SETTLE_NS / 1e9 + 0.02)  # its last change is now old enough to be recorded
    return path


def test_verified_once_then_trusted(tmp_path: Path, leduc: Game, checks: list[int]) -> None:
    path = _settled_file(tmp_path / "a.strat", leduc)
    checks.clear()  # the writer's own checksum
    header, _ = read_header(path)
    assert not is_verified(os.stat(path), header)
    first = load_strategy(path, leduc)
    assert len(checks) == 1 and is_verified(os.stat(path), header)
    second = load_strategy(path, leduc)
    assert len(checks) == 1  # trusted: no second pass
    assert np.array_equal(first.table, second.table) and second.checksum == first.checksum
    load_strategy(path, leduc, verify="full")
    assert len(checks) == 2  # full: always
    with pytest.raises(ValueError, match="expected verify to be one of auto, full"):
        load_strategy(path, leduc, verify="sometimes")


def test_corrupted_table_with_valid_header_is_rejected(tmp_path: Path, leduc: Game) -> None:
    """A verified file corrupted afterwards (header intact, even its mtime put back) is not
    trusted: the write moved its ctime, so the checksum runs and fails."""
    path = _settled_file(tmp_path / "a.strat", leduc)
    load_strategy(path, leduc)
    header, _ = read_header(path)
    before = os.stat(path)
    assert is_verified(before, header)
    data = bytearray(path.read_bytes())
    data[header["table_offset"] + 5] ^= 0x40
    with open(path, "r+b") as f:  # in place: same inode, same size
        f.write(bytes(data))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino, before.st_size, before.st_mtime_ns)
    assert not is_verified(after, header)
    with pytest.raises(StrategyFileError, match="checksum mismatch"):
        load_strategy(path, leduc)


def test_touched_file_is_verified_again(tmp_path: Path, leduc: Game, checks: list[int]) -> None:
    path = _settled_file(tmp_path / "a.strat", leduc)
    checks.clear()
    load_strategy(path, leduc)
    assert len(checks) == 1
    os.utime(path)  # touch: new mtime and ctime, same bytes
    load_strategy(path, leduc)
    assert len(checks) == 2  # checked again (and recorded once settled)
    time.sleep(SETTLE_NS / 1e9 + 0.02)
    load_strategy(path, leduc)  # recorded by now (at this load if the last was too soon)
    settled = len(checks)
    load_strategy(path, leduc)
    assert len(checks) == settled  # trusted again


def test_no_record_for_a_file_changed_during_or_just_before_the_check(
        tmp_path: Path, leduc: Game, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "a.strat"
    dump_strategy(path, leduc, PRESETS["fcpa"], CARDS, random_table(leduc, CARDS["buckets"]))
    header, _ = read_header(path)
    st = os.stat(path)
    real_ns = time.time_ns
    monkeypatch.setattr(time, "time_ns", lambda: st.st_ctime_ns + SETTLE_NS - 1)
    assert not mark_verified(path, st, header)  # changed less than SETTLE_NS ago
    monkeypatch.setattr(time, "time_ns", real_ns)
    time.sleep(SETTLE_NS / 1e9 + 0.02)
    os.utime(path)
    assert not mark_verified(path, st, header)  # changed since st was taken
    time.sleep(SETTLE_NS / 1e9 + 0.02)
    assert mark_verified(path, os.stat(path), header)


def test_hot_swap_trusts_only_verified_files(tmp_path: Path, leduc: Game,
                                             checks: list[int]) -> None:
    first = _settled_file(tmp_path / "a.strat", leduc, seed=1, cards=LOSSLESS)
    checks.clear()
    current = load_for_game(first, leduc)
    assert len(checks) == 1
    swapped: list[Any] = []

    class Target:
        loaded = current

        def swap(self, loaded: Any) -> None:
            swapped.append(loaded)

    log: list[str] = []
    reloader = StrategyReloader(first, leduc, Target(), lambda event, **kw: log.append(event))
    assert asyncio.run(reloader.reload())
    assert len(checks) == 1  # the same, verified file: trusted
    full = StrategyReloader(first, leduc, Target(), lambda event, **kw: log.append(event),
                            verify="full")
    assert asyncio.run(full.reload())
    assert len(checks) == 2
    # a replacement with a valid-looking header and a corrupt table: rejected
    bad = _settled_file(tmp_path / "b.strat", leduc, seed=2, cards=LOSSLESS)
    header, _ = read_header(bad)
    data = bytearray(bad.read_bytes())
    data[header["table_offset"]] ^= 0x01
    bad.write_bytes(bytes(data))
    os.replace(bad, first)
    assert not asyncio.run(reloader.reload())
    assert log[-1] == "strategy_rejected" and len(swapped) == 2


def test_big_files_are_recorded_when_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             checks: list[int]) -> None:
    """dump_strategy checked the rows and hashed the bytes it wrote: above the mmap size it
    records the file, so the first load is trusted."""
    import agent.strategy.fileformat as fileformat

    monkeypatch.setattr(fileformat, "DEFAULT_MMAP_BYTES", 0)
    game = load_game("leduc.limit.2p.game")
    path = dump_strategy(tmp_path / "a.strat", game, PRESETS["fcpa"], CARDS,
                         random_table(game, CARDS["buckets"]))
    header, _ = read_header(path)
    assert is_verified(os.stat(path), header)
    checks.clear()
    load_strategy(path, game)
    assert len(checks) == 0
