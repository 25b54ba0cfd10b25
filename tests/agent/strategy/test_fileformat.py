from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest

from agent.abstraction.actions import PRESETS, build_tree
from agent.acpc.errors import StrategyFileError
from agent.acpc.gamedef import Game
from agent.acpc.gamefiles import load_game
from agent.data import strategy_path
from agent.strategy.fileformat import (
    MAGIC,
    QUANT,
    checksum_of_bytes,
    dump_strategy,
    header_checksum,
    load_strategy,
    read_header,
    table_layout,
)
from tests.support import run_without_jit

CARDS = {"kind": "lossless", "buckets": [3, 15]}  # Leduc: private card; private + board


def random_table(game: Game, buckets: list[int], seed: int = 0) -> np.ndarray:
    tree = build_tree(game, PRESETS["fcpa"])
    layout = table_layout(tree, tuple(buckets))
    rng = np.random.default_rng(seed)
    table = np.empty(layout.total)
    for node in tree.decision_nodes:
        k = len(node.actions)
        rows = rng.random((buckets[node.round], k))
        start = layout.offsets[node.id]
        table[start : start + rows.size] = (rows / rows.sum(axis=1, keepdims=True)).ravel()
    return table


@pytest.fixture
def leduc_file(tmp_path: Path, leduc: Game) -> tuple[Path, np.ndarray]:
    table = random_table(leduc, CARDS["buckets"])
    path = dump_strategy(tmp_path / "s.strat", leduc, PRESETS["fcpa"], CARDS, table,
                         meta={"solver": "test"})
    return path, table


def test_round_trip_float32(leduc_file: tuple[Path, np.ndarray], leduc: Game) -> None:
    path, table = leduc_file
    s = load_strategy(path, leduc)
    assert s.table.dtype == np.dtype("<f4")
    assert np.allclose(s.table, table, atol=1e-6)
    assert s.meta["solver"] == "test" and "created" in s.meta and "tool_version" in s.meta
    node = s.tree.decision_nodes[3]
    row = s.row(node.id, 2)
    assert row.sum() == pytest.approx(1.0, abs=1e-6)
    assert len(row) == len(node.actions)
    assert s.default_mapping == "rand-pshar"


def test_round_trip_uint16_rows_sum_exactly(tmp_path: Path, leduc: Game) -> None:
    table = random_table(leduc, CARDS["buckets"], seed=3)
    path = dump_strategy(tmp_path / "q.strat", leduc, PRESETS["fcpa"], CARDS, table,
                         dtype="uint16")
    s = load_strategy(path)
    assert s.table.dtype == np.dtype("<u2")
    assert np.abs(s.table / QUANT - table).max() < 2 / QUANT
    for node in s.tree.decision_nodes:
        for b in range(CARDS["buckets"][node.round]):
            assert s.row(node.id, b).sum() == pytest.approx(1.0, abs=1e-12)


def test_memory_mapped_when_large(leduc_file: tuple[Path, np.ndarray]) -> None:
    path, table = leduc_file
    s = load_strategy(path, mmap_bytes=0)
    import mmap

    base = s.table.base
    assert isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)
    assert not s.table.flags.writeable
    assert np.allclose(s.table, table, atol=1e-6)


def test_dump_is_atomic_and_refuses_bad_tables(tmp_path: Path, leduc: Game) -> None:
    table = random_table(leduc, CARDS["buckets"])
    bad = table.copy()
    bad[5] += 0.5
    with pytest.raises(ValueError, match=r"row \(node \d+, bucket \d+\) sums to"):
        dump_strategy(tmp_path / "x.strat", leduc, PRESETS["fcpa"], CARDS, bad)
    with pytest.raises(ValueError, match="expected a table of"):
        dump_strategy(tmp_path / "x.strat", leduc, PRESETS["fcpa"], CARDS, table[:-1])
    assert not list(tmp_path.iterdir())  # nothing half-written left behind


def rewrite(path: Path, changes: dict[str, Any] | None = None,
            table: bytes | None = None, fix_checksum: bool = True,
            fix_header: bool = True, drop: tuple[str, ...] = ()) -> None:
    """Rewrite a file's header with ``changes``; the table checksum and (``fix_header``)
    the header checksum recomputed, so that the check under test is the one reached."""
    header, _ = read_header(path)
    raw = path.read_bytes()[header["table_offset"]:]
    if table is not None:
        raw = table
    header.update(changes or {})
    if fix_checksum:
        header["checksum"] = checksum_of_bytes(raw)
    for key in drop:
        del header[key]
    if fix_header and "header_checksum" in header:
        header["header_checksum"] = header_checksum(header)
    packed = msgpack.packb(header, use_bin_type=True)
    assert 16 + len(packed) <= header["table_offset"]
    pad = b"\0" * (header["table_offset"] - 16 - len(packed))
    path.write_bytes(MAGIC + struct.pack("<Q", len(packed)) + packed + pad + raw)


def test_each_corruption_has_its_precise_error(
    leduc_file: tuple[Path, np.ndarray], leduc: Game, tmp_path: Path
) -> None:
    path, table = leduc_file
    good = path.read_bytes()

    def expect(message: str, game: Game | None = None) -> None:
        with pytest.raises(StrategyFileError, match=message) as info:
            load_strategy(path, game)
        assert str(path) in str(info.value)
        path.write_bytes(good)

    path.write_bytes(b"PK\x03\x04" + good[4:])
    expect(r"not a strategy file: expected magic b'ACPCSTR1'")
    path.write_bytes(good[:10])
    expect("not a strategy file")
    path.write_bytes(good[:40])
    expect("truncated file: header of")
    path.write_bytes(good[:-7])
    expect("truncated file: .* the table needs")
    path.write_bytes(good + b"junk")
    expect("unexpected bytes after the table")
    rewrite(path, {"format": "something-else"})
    expect("expected format 'acpc-arena-strategy', got 'something-else'")
    rewrite(path, {"version": 99})
    expect("expected format version 1 to 3, got 99")
    rewrite(path, {"table_len": 12})
    expect("table shape: the tree and buckets need")
    rewrite(path, {"cards": {"kind": "lossless", "buckets": [3, 7]}})
    expect(r"cards: expected buckets \[3, 15\] for this game, the spec says \[3, 7\]")
    rewrite(path, {"game_fingerprint": "0" * 64})
    expect("does not match its fingerprint")
    expect("strategy is for another game", load_game("kuhn.limit.3p.game"))
    flipped = bytearray(good)
    flipped[-3] ^= 0x40
    path.write_bytes(bytes(flipped))
    expect("checksum mismatch")
    values = np.asarray(table, dtype="<f4").copy()
    values[7] = np.nan
    rewrite(path, table=values.tobytes())
    expect(r"row \(node \d+ '.*', bucket \d+\) contains nan")
    values = np.asarray(table, dtype="<f4").copy()
    values[7] += 0.25
    rewrite(path, table=values.tobytes())
    expect(r"row \(node \d+ '.*', bucket \d+\) sums to")
    rewrite(path, {"dtype": "float64"})
    expect("expected dtype 'float32' or 'uint16'")
    rewrite(path, {"betting": {"fractions": "x"}})
    expect("corrupt header")
    header, _ = read_header(path)
    del header["checksum"]
    packed = msgpack.packb(header, use_bin_type=True)
    path.write_bytes(MAGIC + struct.pack("<Q", len(packed)) + packed)
    expect("corrupt header: missing 'checksum'")
    path.write_bytes(MAGIC + struct.pack("<Q", 3) + b"\xc1\xc1\xc1")
    expect("corrupt header")
    with pytest.raises(StrategyFileError, match="cannot read strategy file"):
        load_strategy(tmp_path / "missing.strat")


def test_checksum_kernel_equals_its_definition() -> None:
    from agent.strategy.kernels import checksum_py, table_checksum

    rng = np.random.default_rng(9)
    from agent.strategy.kernels import BLOCK

    for n in (0, 1, 7, 8, 31, 32, 33, 100, 4099, BLOCK, BLOCK + 8, 2 * BLOCK + 37):
        data = rng.integers(0, 256, n, dtype=np.uint8)
        assert table_checksum(data) == checksum_py(data.tobytes())
    # every single bit matters
    data = bytearray(rng.integers(0, 256, 96, dtype=np.uint8).tobytes())
    base = checksum_py(bytes(data))
    for bit in range(0, 96 * 8, 7):
        data[bit // 8] ^= 1 << (bit % 8)
        assert checksum_py(bytes(data)) != base
        data[bit // 8] ^= 1 << (bit % 8)
    assert checksum_py(b"") == "89bc15dd01c81cc9"  # pinned: the format depends on it
    assert checksum_py(b"acpc") == "033d88e4f704f051"


def test_kernels_as_plain_python() -> None:
    """Every other test of this file again with NUMBA_DISABLE_JIT=1 (warnings as errors)."""
    run_without_jit(__file__)


def test_version_1_files_still_load(leduc_file: tuple[Path, np.ndarray], leduc: Game) -> None:
    path, table = leduc_file
    assert read_header(path)[0]["version"] == 3
    rewrite(path, {"version": 1}, drop=("header_checksum",))
    loaded = load_strategy(path, leduc)
    assert loaded.header["version"] == 1
    assert np.allclose(loaded.table, table, atol=1e-6)
    bundled = strategy_path("leduc.limit.2p.strat")
    assert read_header(bundled)[0]["version"] == 3  # written as version 1, upgraded
    assert load_strategy(bundled).tree.decision_nodes


def test_version_2_carries_the_richer_spec(tmp_path: Path) -> None:
    from agent.abstraction.actions import parse_betting_abstraction

    nl = load_game("leduc.nolimit.2p.game")
    spec = parse_betting_abstraction(
        '{"name": "asym", "fractions": [[[1.0]]], "max_raises": [2],'
        ' "players": [null, [[[0.5]]]], "sequences": {"c": [0.75], "b1c/": [0.3]}}'
    )
    tree = build_tree(nl, spec)
    layout = table_layout(tree, (3, 15))
    table = np.zeros(layout.total)
    for node in tree.decision_nodes:
        start = layout.offsets[node.id]
        k = len(node.actions)
        table[start : start + k * (3 if node.round == 0 else 15)] = 1.0 / k
    path = dump_strategy(tmp_path / "a.strat", nl, spec, CARDS, table)
    loaded = load_strategy(path, nl)
    assert loaded.betting == spec
    assert [n.history for n in loaded.tree.nodes] == [n.history for n in tree.nodes]
    rewrite(path, {"version": 1}, drop=("header_checksum",))
    with pytest.raises(StrategyFileError, match="version 1 file cannot hold"):
        load_strategy(path, nl)
