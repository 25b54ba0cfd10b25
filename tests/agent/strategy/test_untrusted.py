"""Strategy files from strangers (issue 28): a file never names code, its card spec is
bounded and checked once, its whole header is covered by a checksum, and every reader
(``inspect``, the agent, the hot-swap loader, the solvers) accepts exactly the same files."""

from __future__ import annotations

import base64
import re
import shutil
import struct
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import pytest

from agent.abstraction.actions import PRESETS, build_tree
from agent.acpc.errors import AcpcError, StrategyFileError
from agent.acpc.gamedef import Game
from agent.data import strategies_dir
from agent.strategy import fileformat
from agent.strategy.fileformat import MAGIC, dump_strategy, load_strategy, read_header

ROOT = Path(__file__).parents[3]
DATA = strategies_dir()
CARDS = {"kind": "lossless", "buckets": [3, 15]}


def _table(game: Game) -> np.ndarray:
    tree = build_tree(game, PRESETS["fcpa"])
    layout = fileformat.table_layout(tree, tuple(CARDS["buckets"]))
    return np.concatenate([
        np.full(int(layout.rows[n.id]) * len(n.actions), 1.0 / len(n.actions))
        for n in tree.decision_nodes
    ])


@pytest.fixture
def strat(tmp_path: Path, leduc: Game) -> Path:
    return dump_strategy(tmp_path / "s.strat", leduc, PRESETS["fcpa"], CARDS, _table(leduc),
                         meta={"solver": "test"})


def rewrite(path: Path, changes: dict[str, Any] | None = None, *, fix_header: bool = True,
            drop: tuple[str, ...] = ()) -> None:
    """Rewrite ``path``'s header (same table bytes); with ``fix_header`` its header checksum
    is recomputed, so the check under test is the one reached."""
    header, _ = read_header(path)
    raw = path.read_bytes()[header["table_offset"]:]
    header.update(changes or {})
    for key in drop:
        header.pop(key, None)
    if fix_header and "header_checksum" in header:
        header["header_checksum"] = fileformat.header_checksum(header)
    header["table_offset"] = 0
    for _ in range(4):
        packed = msgpack.packb(header, use_bin_type=True)
        offset = -(-(16 + len(packed)) // 64) * 64
        if header["table_offset"] == offset:
            break
        header["table_offset"] = offset
        if fix_header and "header_checksum" in header:
            header["header_checksum"] = fileformat.header_checksum(header)
    packed = msgpack.packb(header, use_bin_type=True)
    pad = b"\0" * (header["table_offset"] - 16 - len(packed))
    path.write_bytes(MAGIC + struct.pack("<Q", len(packed)) + packed + pad + raw)


def inspect_cli(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``acpc-strategy inspect FILE``: its exit status and stderr (in process: an uncaught
    exception fails the test with its traceback)."""
    from strategies.cli import main

    capsys.readouterr()
    status = main(["inspect", str(path), "--samples", "0"])
    return status, capsys.readouterr().err


# ------------------------------------------------------------------ 1. no code from data


@pytest.mark.parametrize("name", ["os:getcwd", "this:x", "agent.abstraction.translation:det_geo"])
def test_a_file_cannot_name_code_as_its_mapping(strat: Path, leduc: Game, name: str) -> None:
    rewrite(strat, {"default_mapping": name})
    for load in (lambda: load_strategy(strat), lambda: _agent(strat, leduc)):
        with pytest.raises(StrategyFileError) as info:
            load()
        text = str(info.value)
        assert "\n" not in text and str(strat) in text and "default_mapping" in text
        assert repr(name) in text


def test_the_user_may_still_type_module_function(strat: Path, leduc: Game) -> None:
    from agent.agents import make_policy

    policy: Any = make_policy(str(strat), leduc, mapping="agent.abstraction.translation:det_geo")
    assert policy.mapping_name == "agent.abstraction.translation:det_geo"
    from agent.abstraction.translation import get_mapping

    with pytest.raises(AcpcError, match=r"f\.strat: default_mapping: expected a built-in"):
        get_mapping("os:getcwd", from_file="f.strat: default_mapping")


def test_a_bad_default_purification_is_refused_at_load(strat: Path) -> None:
    rewrite(strat, {"default_purification": "threshold:7"})
    with pytest.raises(StrategyFileError, match="default_purification: expected a "
                       "purification"):
        load_strategy(strat)


# ------------------------------------------------------------------ 2. card specs


@pytest.mark.parametrize("buckets", [[3, float("inf")], [3, 1e300], [3, 2**40], [3, True],
                                     [3, -15], [3]])
def test_bucket_counts_are_bounded_ints(strat: Path, buckets: list[Any],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    rewrite(strat, {"cards": {"kind": "lossless", "buckets": buckets}})
    with pytest.raises(StrategyFileError, match=r"cards.buckets: expected 2 ints in "
                       r"1\.\.4294967296"):
        load_strategy(strat)
    status, err = inspect_cli(strat, capsys)
    assert status == 1 and err.count("\n") == 1 and "cards.buckets" in err


def test_lossless_counts_equal_the_enumeration(leduc: Game) -> None:
    from agent.abstraction.buckets import LosslessCards, lossless_counts
    from agent.acpc.gamefiles import load_game

    assert lossless_counts(leduc) == LosslessCards(leduc).buckets == (3, 15)
    kuhn = load_game("kuhn.limit.3p.game")
    assert lossless_counts(kuhn) == LosslessCards(kuhn).buckets
    assert lossless_counts(load_game("royal.nolimit.2p.game")) == (25, 7760)  # bundled


@pytest.fixture(scope="module")
def pa_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pa") / "pa.strat"
    shutil.copy(DATA / "holdem.nolimit.2p.pa.strat", path)
    if read_header(path)[0]["version"] < 3:
        fileformat.upgrade_strategy(path)
    return path


def test_a_flop_table_bomb_is_refused_before_it_inflates(tmp_path: Path) -> None:
    path = tmp_path / "bomb.strat"
    shutil.copy(DATA / "holdem.nolimit.2p.pa.strat", path)
    header, _ = read_header(path)
    cards = dict(header["cards"])
    flop = dict(cards["flop"])
    big = 64 << 20  # 64 MB of zeros: 64 KB compressed, 27 times the declared table
    flop["zlib_b64"] = base64.b64encode(zlib.compress(bytes(big), 1)).decode()
    cards["flop"] = flop
    rewrite(path, {"cards": cards})
    tracemalloc.start()
    try:
        with pytest.raises(StrategyFileError, match=r"flop table to hold .* inflates to more"):
            load_strategy(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, peak


def test_a_shifted_threshold_table_is_refused(pa_file: Path, tmp_path: Path) -> None:
    path = tmp_path / "shifted.strat"
    shutil.copy(pa_file, path)
    header, _ = read_header(path)
    cards = dict(header["cards"])
    cards["river_thresholds"] = [v + 1 for v in cards["river_thresholds"]]  # still sorted
    rewrite(path, {"cards": cards}, fix_header=False)
    with pytest.raises(StrategyFileError, match="header checksum mismatch"):
        load_strategy(path)


# ------------------------------------------------------------------ 3. header checksum


@pytest.mark.parametrize("change", [
    {"meta": {"solver": "other"}},
    {"default_mapping": "det-arith"},
    {"default_purification": "full"},
    {"checksum_algorithm": "acpc64x4 "},
])
def test_any_header_change_is_refused(strat: Path, change: dict[str, Any]) -> None:
    load_strategy(strat)
    rewrite(strat, change, fix_header=False)
    with pytest.raises(StrategyFileError, match="header checksum mismatch") as info:
        load_strategy(strat)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("change", "drop", "message"), [
    ({"Meta": {}}, ("meta",), r"unknown \['Meta'\], missing \['meta'\]"),
    ({"extra": 1}, (), r"unknown \['extra'\]"),
    ({}, ("default_mapping",), r"missing \['default_mapping'\]"),
    ({}, ("header_checksum",), r"missing \['header_checksum'\]"),
])
def test_a_version_3_header_has_exactly_its_keys(strat: Path, change: dict[str, Any],
                                                 drop: tuple[str, ...], message: str) -> None:
    rewrite(strat, change, drop=drop)
    with pytest.raises(StrategyFileError, match=message):
        load_strategy(strat)


def test_old_files_load_with_one_note_and_upgrade(strat: Path, leduc: Game,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    rewrite(strat, {"version": 2}, drop=("header_checksum",))
    old_header, _ = read_header(strat)
    table_before = strat.read_bytes()[old_header["table_offset"]:]
    first = load_strategy(strat)
    load_strategy(strat)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "header is not covered by a checksum" in err
    assert str(strat) in err
    from strategies.cli import main

    assert main(["upgrade", str(strat)]) == 0
    assert "upgraded to version 3" in capsys.readouterr().out
    header, _ = read_header(strat)
    assert header["version"] == 3 and header["checksum"] == old_header["checksum"]
    assert header["meta"] == old_header["meta"]
    assert strat.read_bytes()[header["table_offset"]:] == table_before
    again = load_strategy(strat)
    assert again.checksum == first.checksum
    assert not fileformat.upgrade_strategy(strat)  # already version 3: untouched


# ------------------------------------------------------------------ 4. one validation


def _agent(path: Path, game: Game) -> object:
    from agent.agents import make_policy

    return make_policy(str(path), game)


def test_every_reader_gives_the_same_verdict(strat: Path, leduc: Game, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    from agent.strategy.hotswap import load_for_game

    mutants: dict[str, dict[str, Any]] = {
        "good": {},
        "blind kind, lossless counts": {"cards": {"kind": "blind", "buckets": [3, 15]}},
        "unknown kind": {"cards": {"kind": "evil", "buckets": [3, 15]}},
        "unknown card key": {"cards": {**CARDS, "x": 1}},
        "infinite buckets": {"cards": {"kind": "lossless", "buckets": [3, float("inf")]}},
        "code as mapping": {"default_mapping": "os:getcwd"},
        "bad purification": {"default_purification": "bogus"},
        "graft of a bad part": {"cards": {
            "kind": "graft", "buckets": [3, 15],
            "base": {"kind": "lossless", "buckets": [3, 15]},
            "grafts": [{"ranks": "K", "from_round": 1,
                        "cards": {"kind": "evil", "buckets": [1, 1]}}]}},
    }
    good = strat.read_bytes()
    verdicts = {}
    for name, change in mutants.items():
        path = tmp_path / f"{len(verdicts)}.strat"
        path.write_bytes(good)
        rewrite(path, change)
        readers = {
            "load_strategy": lambda p=path: load_strategy(p),
            "load_for_game": lambda p=path: load_for_game(p, leduc),
            "agent": lambda p=path: _agent(p, leduc),
        }
        got = {}
        for reader, call in readers.items():
            try:
                call()
                got[reader] = True
            except AcpcError:
                got[reader] = False
        status, err = inspect_cli(path, capsys)
        assert status in (0, 1) and err.count("\n") == status, (name, err[-500:])
        got["inspect"] = status == 0
        verdicts[name] = got
        assert len(set(got.values())) == 1, (name, got)
    assert verdicts["good"]["inspect"]
    assert sum(v["inspect"] for v in verdicts.values()) == 1, verdicts


def test_a_byte_changed_without_changing_a_value_is_refused(strat: Path) -> None:
    good = strat.read_bytes()
    before, _ = read_header(strat)
    (length,) = struct.unpack("<Q", good[8:16])
    pad = -(16 + length) % 64
    assert pad > 0  # the header of this fixture leaves room: one byte more still fits
    # "version": 3 as a one-byte int8 (0xd0 0x03) instead of a positive fixint: same value
    where = good.index(b"\xa7version\x03", 16, 16 + length)
    header = good[16:where] + b"\xa7version\xd0\x03" + good[where + 9 : 16 + length]
    strat.write_bytes(good[:8] + struct.pack("<Q", length + 1) + header
                      + good[16 + length + 1 :])
    assert read_header(strat)[0] == before  # the same header, other bytes
    with pytest.raises(StrategyFileError, match="corrupt header: its bytes"):
        load_strategy(strat)
    padded = bytearray(good)
    padded[16 + length] = 1  # the zero padding between header and table
    strat.write_bytes(bytes(padded))
    with pytest.raises(StrategyFileError, match="zero padding"):
        load_strategy(strat)
    strat.write_bytes(good)
    load_strategy(strat)


# ------------------------------------------------------------------ messages quote excerpts

LONG = "x" * 100_000
EXCERPT = re.compile(r"\(\d[\d,]* characters\)")


@pytest.mark.parametrize("change", [
    {"cards": LONG},
    {"cards": {"kind": LONG, "buckets": [3, 15]}},
    {"cards": {"kind": "lossless", "buckets": [3] * 30_000}},
    {"cards": {"kind": "lossless", "buckets": [3, 15], LONG: 1}},
    {"cards": {"kind": "rank-groups", "groups": [LONG], "buckets": [1, 2]}},
    {"cards": {"kind": "graft", "base": LONG, "grafts": [], "buckets": [3, 15]}},
    {"cards": {"kind": "graft", "base": CARDS, "grafts": [LONG], "buckets": [3, 15]}},
    {"format": LONG},
    {"game_fingerprint": [1] * 30_000},
    {"checksum": LONG},
    {"dtype": LONG},
    {"checksum_algorithm": LONG},
    {"default_mapping": LONG},
    {"meta": LONG},
    {"default_purification": LONG},
    {LONG: 1},
])
def test_header_values_are_quoted_as_short_excerpts(strat: Path, change: dict[str, Any],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 28 (the fuzzer): a message about a header value quotes at most ~80 characters
    of it with its length, never the whole value (100,000 characters here)."""
    rewrite(strat, change)
    status, err = inspect_cli(strat, capsys)
    assert status == 1
    (line,) = err.splitlines()
    assert "x" * 81 not in line and len(line) < 600 and EXCERPT.search(line), line


def test_holdem_spec_values_are_quoted_as_short_excerpts() -> None:
    from agent.abstraction.buckets import check_card_spec
    from agent.acpc.errors import AbstractionError
    from agent.acpc.gamefiles import load_game

    holdem = load_game("holdem.nolimit.2p.reverse_blinds.game")
    good = {"kind": "holdem", "metric": "ehs2", "buckets": [169, 2, 2, 2],
            "thresholds": [[0.5], [0.5], [0.5]]}
    for change in ({"thresholds": [[0.5], [LONG], [0.5]]}, {"metric": LONG},
                   {"thresholds": [[0.5] * 20_000, [0.5], [0.5]], "buckets": LONG},
                   {"samples": LONG}, {"flop_rivers_per_turn": LONG}):
        with pytest.raises(AbstractionError) as info:
            check_card_spec(holdem, {**good, **change})
        text = str(info.value)
        assert "x" * 81 not in text and len(text) < 300 and EXCERPT.search(text), change


# ------------------------------------------------------------------ the card spec checked once


def test_the_agent_decodes_a_potential_aware_spec_once(pa_file: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading a file for the agent checks its card spec once (``load_strategy``) and builds
    from what that check decoded; a spec not from that check is still checked in full."""
    from agent.abstraction import holdem_pa_spec
    from agent.abstraction.buckets import card_abstraction_from_spec
    from agent.abstraction.deferred import deferred_card_abstraction
    from agent.acpc.errors import AbstractionError
    from agent.strategy.hotswap import load_for_game

    decoded: list[str] = []
    real = holdem_pa_spec.decode_table

    def counting(spec: Any, where: str, shape: tuple[int, ...], limit: int) -> Any:
        decoded.append(where)
        return real(spec, where, shape, limit)

    monkeypatch.setattr(holdem_pa_spec, "decode_table", counting)
    strategy = load_strategy(pa_file)
    assert len(decoded) == 1
    game = strategy.game
    loaded = load_for_game(pa_file, game, defer_cards=True)
    assert len(decoded) == 2  # load_strategy's check, nothing more
    assert loaded.cards.buckets == tuple(strategy.cards["buckets"])
    copy = dict(strategy.cards)  # equal, but not the dict that was checked: checked again
    deferred_card_abstraction(game, copy, strategy.checked_cards)
    assert len(decoded) == 3
    with pytest.raises(AbstractionError, match="bins"):
        card_abstraction_from_spec(game, {**copy, "bins": 1}, strategy.checked_cards)
