"""The strategy file format: a msgpack header and a raw little-endian probability table.

Layout (all integers little-endian)::

    offset 0   8 bytes   magic  b"ACPCSTR1"
    offset 8   8 bytes   uint64 header length H
    offset 16  H bytes   msgpack map (the header, below)
    ...        padding   zeros up to the next multiple of 64
    T          N * w     the table: float32 (w = 4) or uint16 (w = 2) values

Header keys: ``format`` (``"acpc-arena-strategy"``), ``version`` (3; version 1 files, whose
betting spec has no ``players``/``sequences``, and version 2 files, without
``header_checksum``, still load), ``game`` (the
canonical game definition text) and ``game_fingerprint`` (its sha256), ``betting`` (the
betting abstraction, :meth:`~agent.abstraction.actions.BettingAbstraction.to_json`),
``cards`` (the card abstraction spec; ``buckets`` lists the buckets per round), ``dtype``,
``table_offset`` (T), ``table_len`` (N), ``default_mapping``, ``default_purification``,
``meta`` (solver, iterations, exploitability, created, tool version, free-form extras) and
``checksum`` (the ``acpc64x4`` hash of the table bytes, 16 hex digits, see
:mod:`agent.strategy.kernels`; named in ``checksum_algorithm``) and, from version 3,
``header_checksum`` (:func:`header_checksum`: the sha256 of the canonical msgpack of the
header without that key). A version 3 header has exactly these keys; a missing, unknown or
renamed key, or any changed byte, is refused. An older file (no header checksum) loads with a
one-line note on stderr, once per file, that its header is unprotected;
:func:`upgrade_strategy` (``acpc-strategy upgrade FILE``) rewrites it as version 3 in place,
table bytes unchanged.

Nothing in a header names code: ``default_mapping`` must be a built-in mapping or an
installed entry point (:func:`agent.abstraction.translation.get_mapping` with
``from_file``), ``default_purification`` a purification, ``cards`` a valid card spec
(:func:`agent.abstraction.buckets.check_card_spec`, run on every load, so every reader accepts
the same files).

Rows: the abstract betting tree is enumerated canonically from the game and the betting
abstraction (:func:`~agent.abstraction.actions.build_tree`); for every decision node in id
order and every bucket of the node's round there is one row of ``num_actions`` values, the
probabilities of the node's actions in canonical order. No string keys are stored. A uint16
table is quantized so every row sums to exactly 65535.

:func:`load_strategy` validates everything and raises :class:`StrategyFileError` with a
precise message; tables above ``mmap_bytes`` are memory-mapped, smaller ones read into memory,
both without copying. :func:`dump_strategy` writes to a temporary file and renames it, so a
reader never sees half a file. Never pickle.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import mmap
import os
import struct
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import numpy as np
import numpy.typing as npt

from agent import __version__
from agent.abstraction.actions import (
    BettingAbstraction,
    BettingTree,
    parse_betting_abstraction,
)
from agent.abstraction.buckets import CheckedCards, check_card_spec, checked_card_spec
from agent.abstraction.translation import get_mapping
from agent.abstraction.treecache import load_tree, tree_shape
from agent.acpc.errors import AbstractionError, GameDefError, StrategyFileError, UsageError
from agent.acpc.gamedef import Game, format_gamedef, parse_gamedef
from agent.acpc.limits import excerpt
from agent.fileio import atomic_writer
from agent.strategy.verified import SETTLE_NS, is_verified, mark_verified

CHECKSUM_ALGORITHM = "acpc64x4"

MAGIC = b"ACPCSTR1"
FORMAT_TAG = "acpc-arena-strategy"
FORMAT_VERSION = 3
"""Version 3: the header carries ``header_checksum`` and has a fixed set of keys (2: the
betting spec may hold per-player sizes and per-sequence overrides)."""
READ_VERSIONS = (1, 2, 3)
"""Versions :func:`load_strategy` reads (1 is 2 without the richer betting spec; 1 and 2
have no header checksum)."""
ALIGN = 64
DTYPES: dict[str, np.dtype[Any]] = {"float32": np.dtype("<f4"), "uint16": np.dtype("<u2")}
QUANT = 65535
ROW_TOLERANCE = 1e-3
DEFAULT_MMAP_BYTES = 64 << 20


VERIFY_MODES = ("auto", "full")
"""``load_strategy(verify=...)``: trust a table verified before (``auto``) or not (``full``)."""


def checksum_of_bytes(data: bytes) -> str:
    """The table checksum of raw table bytes."""
    from agent.strategy.kernels import table_checksum  # numba: only when a table is checked

    return table_checksum(np.frombuffer(data, dtype=np.uint8))
MAX_HEADER_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class TableLayout:
    """Where each decision node's rows start in the flat table."""

    offsets: npt.NDArray[np.int64]
    """Per node id: index of its first value, or -1 for a terminal node."""
    num_actions: npt.NDArray[np.int32]
    """Per node id: actions at the node (0 for terminals)."""
    rows: npt.NDArray[np.int32]
    """Per node id: rows (buckets of the node's round; 0 for terminals)."""
    buckets: tuple[int, ...]
    """Buckets per round."""
    total: int
    """Values in the whole table."""


def table_layout(tree: BettingTree, buckets: tuple[int, ...]) -> TableLayout:
    """The canonical layout of a strategy table for ``tree`` and bucket counts per round.

    Raises:
        ValueError: if ``buckets`` does not give a positive count for every round.
    """
    rounds = tree.game.num_rounds
    if len(buckets) != rounds or any(b <= 0 for b in buckets):
        raise UsageError(f"expected {rounds} positive bucket counts, got {excerpt(list(buckets))}")
    key = ("table_layout", tuple(buckets))
    cached = tree.derived.get(key)
    if isinstance(cached, TableLayout):
        return cached
    shape_actions, node_rounds = tree_shape(tree)
    num_actions = shape_actions.copy()
    rows = np.where(num_actions > 0, np.asarray(buckets, dtype=np.int64)[node_rounds], 0)
    sizes = rows * num_actions
    offsets = np.where(num_actions > 0, np.cumsum(sizes) - sizes, -1).astype(np.int64)
    rows = rows.astype(np.int32)
    total = int(sizes.sum())
    for array in (offsets, num_actions, rows):
        array.flags.writeable = False  # shared through the cache
    layout = TableLayout(offsets, num_actions, rows, tuple(buckets), total)
    tree.derived[key] = layout
    return layout


@dataclass(frozen=True)
class Strategy:
    """A loaded, validated strategy file."""

    path: Path | None
    header: dict[str, Any]
    game: Game
    betting: BettingAbstraction
    cards: dict[str, Any]
    tree: BettingTree
    layout: TableLayout
    table: npt.NDArray[Any]
    checksum: str
    checked_cards: CheckedCards | None = field(default=None, repr=False, compare=False)
    """What the load's card check decoded: pass it to
    :func:`~agent.abstraction.buckets.card_abstraction_from_spec` with :attr:`cards` so the
    hold'em tables are not checked and decoded twice (:attr:`cards` must stay unchanged)."""

    @property
    def default_mapping(self) -> str:
        """The file's mapping (checked at load: a built-in or an installed entry point)."""
        return str(self.header.get("default_mapping", "rand-pshar"))

    @property
    def source(self) -> str:
        """The file, as error messages name it."""
        return str(self.path) if self.path is not None else "<strategy>"

    @property
    def default_purification(self) -> str:
        return str(self.header.get("default_purification", "none"))

    @property
    def meta(self) -> dict[str, Any]:
        meta = self.header.get("meta", {})
        return dict(meta) if isinstance(meta, dict) else {}

    def row(self, node_id: int, bucket: int) -> npt.NDArray[np.float64]:
        """The probabilities of ``node_id``'s actions for ``bucket`` (float64, sums to 1)."""
        k = int(self.layout.num_actions[node_id])
        start = int(self.layout.offsets[node_id]) + bucket * k
        values = self.table[start : start + k].astype(np.float64)
        if self.table.dtype == DTYPES["uint16"]:
            values /= QUANT
        return values

    def rows(self, node_id: int) -> npt.NDArray[np.float64]:
        """``[bucket, k]``: :meth:`row` of every bucket of ``node_id`` (float64)."""
        k = int(self.layout.num_actions[node_id])
        start = int(self.layout.offsets[node_id])
        count = int(self.layout.rows[node_id])
        values = self.table[start : start + count * k].astype(np.float64).reshape(count, k)
        if self.table.dtype == DTYPES["uint16"]:
            values /= QUANT
        return values


def _fail(source: str, message: str) -> StrategyFileError:
    return StrategyFileError(f"{source}: {message}")


def quantize_rows(
    table: npt.NDArray[np.floating[Any]], layout: TableLayout
) -> npt.NDArray[np.uint16]:
    """uint16 rows summing to exactly 65535 (the largest entry absorbs the rounding)."""
    out = np.empty(layout.total, dtype="<u2")
    for node_id in np.flatnonzero(layout.offsets >= 0):
        k = int(layout.num_actions[node_id])
        start = int(layout.offsets[node_id])
        count = int(layout.rows[node_id])
        block = np.asarray(table[start : start + count * k], dtype=np.float64).reshape(count, k)
        q = np.rint(block * QUANT).astype(np.int64)
        q[np.arange(count), np.argmax(block, axis=1)] += QUANT - q.sum(axis=1)
        out[start : start + count * k] = q.reshape(-1)
    return out


def dump_strategy(
    path: str | Path,
    game: Game,
    betting: BettingAbstraction,
    cards: Mapping[str, Any],
    table: npt.ArrayLike,
    *,
    dtype: str = "float32",
    default_mapping: str = "rand-pshar",
    default_purification: str = "none",
    meta: Mapping[str, Any] | None = None,
    tree: BettingTree | None = None,
) -> Path:
    """Write a strategy file atomically (temporary file + rename); return its path.

    ``table`` is the flat table in canonical layout (see the module docstring) with rows
    that are probability distributions; ``cards['buckets']`` gives the buckets per round.

    Raises:
        ValueError: if the card spec is one :func:`load_strategy` would refuse
            (:func:`~agent.abstraction.buckets.check_card_spec`), the table does not fit the
            layout or a row is not a distribution.
    """
    if dtype not in DTYPES:
        raise UsageError(f"expected dtype 'float32' or 'uint16', got {excerpt(dtype)}")
    buckets = check_card_spec(game, dict(cards), "cards")  # never write what cannot load
    tree = tree or load_tree(game, betting)
    layout = table_layout(tree, buckets)
    values = np.asarray(table, dtype=np.float64).reshape(-1)
    if values.size != layout.total:
        raise UsageError(
            f"expected a table of {layout.total} values for this game and abstraction, "
            f"got {values.size}"
        )
    _check_rows(values, layout, "table")
    data = (
        quantize_rows(values, layout) if dtype == "uint16" else values.astype("<f4")
    ).tobytes()
    header: dict[str, Any] = {
        "format": FORMAT_TAG,
        "version": FORMAT_VERSION,
        "game": format_gamedef(game),
        "game_fingerprint": game.fingerprint,
        "betting": betting.to_json(),
        "cards": dict(cards),
        "dtype": dtype,
        "table_len": layout.total,
        "default_mapping": default_mapping,
        "default_purification": default_purification,
        "meta": {
            "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "tool_version": f"acpc-arena {__version__}",
            **(dict(meta) if meta else {}),
        },
        "checksum_algorithm": CHECKSUM_ALGORITHM,
        "checksum": checksum_of_bytes(data),
    }
    target = Path(path)
    _write_file(target, header, data)
    if len(data) > DEFAULT_MMAP_BYTES:
        # the rows were checked and the checksum computed from these very bytes: record it,
        # once the file's last change is old enough (agent.strategy.verified), so a big file
        # is not read again just to be checked
        st = os.stat(target)
        wait = SETTLE_NS - (time.time_ns() - st.st_ctime_ns)
        if wait > 0:
            time.sleep(wait / 1e9 + 0.001)
        mark_verified(target, st, header)
    return target


def _write_file(target: Path, header: dict[str, Any], data: bytes | memoryview) -> None:
    """Write ``header`` (completed with ``table_offset``, ``version`` 3 and
    ``header_checksum``) and the table bytes ``data`` atomically."""
    header["version"] = FORMAT_VERSION
    header["header_checksum"] = "0" * 64  # fixed length: the offset does not depend on it
    # table_offset depends on the header's own length: iterate to a fixed point.
    header["table_offset"] = 0
    for _ in range(4):
        packed = msgpack.packb(header, use_bin_type=True)
        offset = -(-(16 + len(packed)) // ALIGN) * ALIGN
        if header["table_offset"] == offset:
            break
        header["table_offset"] = offset
    header["header_checksum"] = header_checksum(header)
    packed = msgpack.packb(header, use_bin_type=True)
    with atomic_writer(target) as f:
        f.write(MAGIC)
        f.write(struct.pack("<Q", len(packed)))
        f.write(packed)
        f.write(b"\0" * (header["table_offset"] - 16 - len(packed)))
        f.write(data)


MAX_HEADER_DEPTH = 64
"""Deepest nesting of maps and lists a header may have (the canonical form recurses)."""


def header_checksum(header: Mapping[str, Any]) -> str:
    """The sha256 (hex) of the canonical msgpack of ``header`` without ``header_checksum``:
    every map's keys sorted, recursively.

    Raises:
        ValueError: for a header nested deeper than :data:`MAX_HEADER_DEPTH`.
    """
    body = {k: v for k, v in header.items() if k != "header_checksum"}
    return hashlib.sha256(msgpack.packb(_canonical(body, 0), use_bin_type=True)).hexdigest()


def _canonical(value: Any, depth: int) -> Any:
    if depth > MAX_HEADER_DEPTH:
        raise UsageError(f"expected a header nested at most {MAX_HEADER_DEPTH} levels deep")
    if isinstance(value, dict):
        return {k: _canonical(value[k], depth + 1)
                for k in sorted(value, key=lambda k: (isinstance(k, bytes), k))}
    if isinstance(value, list | tuple):
        return [_canonical(v, depth + 1) for v in value]
    return value


def upgrade_strategy(path: str | Path) -> bool:
    """Rewrite a version 1 or 2 strategy file as version 3 in place (atomically): the same
    header (``meta`` included) with ``header_checksum`` added, the table bytes and their
    checksum unchanged. The file is loaded and checked in full first. Return False for a
    file already at version 3 (left untouched).

    Raises:
        StrategyFileError: if the file does not load.
    """
    strategy = load_strategy(path, verify="full", note=False)
    if strategy.header["version"] == FORMAT_VERSION:
        return False
    header = dict(strategy.header)
    header.setdefault("default_mapping", strategy.default_mapping)
    header.setdefault("default_purification", strategy.default_purification)
    header.setdefault("meta", {})
    header.setdefault("checksum_algorithm", CHECKSUM_ALGORITHM)
    data = strategy.table.view(np.uint8).data
    _write_file(Path(path), header, data)
    loaded = load_strategy(path, verify="full")
    if loaded.checksum != strategy.checksum:  # pragma: no cover - the bytes were copied
        raise _fail(str(path), "upgrade changed the table checksum")
    return True


_NOTED: set[str] = set()


def _note_unprotected(source: str, version: int) -> None:
    """Say once per file (stderr) that an old file's header is not covered by a checksum."""
    key = os.path.abspath(source)
    if key in _NOTED:
        return
    _NOTED.add(key)
    print(f"note: {source}: version {version} strategy file, its header is not covered by a "
          f"checksum (upgrade it: acpc-strategy upgrade {source})", file=sys.stderr)


def _check_rows(values: npt.NDArray[Any], layout: TableLayout, source: str,
                quantized: bool = False, tree: BettingTree | None = None) -> None:
    """Raise ValueError naming the first row with a non-finite or negative value or a bad sum.

    One numba pass over the table (:func:`agent.strategy.kernels.first_bad_row`).
    """
    from agent.strategy.kernels import first_bad_row  # numba: only when a table is checked

    index, kind, value = first_bad_row(
        values, layout.offsets, layout.rows, layout.num_actions, ROW_TOLERANCE, QUANT
    )
    if index < 0:
        return
    where = _where(layout, index, tree)
    if kind == 1:
        raise UsageError(f"{where} contains {value!r}")
    if kind == 2:
        raise UsageError(f"{where} has a negative value")
    want = f"{QUANT}" if quantized else "1"
    raise UsageError(f"{where} sums to {value!r}, expected {want}")


def _where(layout: TableLayout, index: int, tree: BettingTree | None) -> str:
    """``row (node N 'betting', bucket B)`` of a table index."""
    starts = layout.offsets
    node_id = int(np.flatnonzero((starts >= 0) & (starts <= index))[-1])
    k = int(layout.num_actions[node_id])
    bucket = (index - int(starts[node_id])) // k
    betting = f" {tree.nodes[node_id].state.betting!r}" if tree is not None else ""
    return f"row (node {node_id}{betting}, bucket {bucket})"


def read_header(path: str | Path) -> tuple[dict[str, Any], int]:
    """Read and check the magic and header of a strategy file; return ``(header, size)``.

    Raises:
        StrategyFileError: if the file is missing, not a strategy file or truncated.
    """
    header, st = _read_header_stat(path)
    return header, st.st_size


def _read_header_stat(path: str | Path) -> tuple[dict[str, Any], os.stat_result]:
    """:func:`read_header`, with the ``fstat`` of the file it read."""
    header, st, _ = _read_header_raw(path)
    return header, st


def _read_header_raw(path: str | Path) -> tuple[dict[str, Any], os.stat_result, bytes]:
    """:func:`read_header`, with the ``fstat`` of the file and the header's bytes as stored,
    followed by the padding up to the next multiple of 64 (at most 63 bytes)."""
    source = str(path)
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            size = st.st_size
            head = f.read(16)
            if len(head) < 16 or head[:8] != MAGIC:
                raise _fail(source, f"not a strategy file: expected magic {MAGIC!r} at offset "
                            f"0, got {head[:8]!r}")
            (length,) = struct.unpack("<Q", head[8:16])
            if length > MAX_HEADER_BYTES or 16 + length > size:
                raise _fail(source, f"truncated file: header of {length} bytes does not fit "
                            f"in {size} bytes")
            packed = f.read(length)
            padding = f.read(-(16 + length) % ALIGN)
    except OSError as exc:
        raise _fail(source, f"cannot read strategy file: {exc.strerror or exc}") from None
    try:
        header = msgpack.unpackb(packed, raw=False, strict_map_key=True)
    except (ValueError, msgpack.ExtraData, msgpack.FormatError, msgpack.StackError) as exc:
        raise _fail(source, f"corrupt header: {exc}") from None
    if not isinstance(header, dict):
        raise _fail(source, f"corrupt header: expected a map, got {type(header).__name__}")
    return header, st, packed + padding


_V3_OPTIONAL_IN_OLD: dict[str, type | tuple[type, ...]] = {
    "default_mapping": str,
    "default_purification": str,
    "meta": dict,
    "checksum_algorithm": str,
    "header_checksum": str,
}
"""Keys a version 3 header has beside :data:`_REQUIRED` (older files may lack them)."""

_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "format": str,
    "version": int,
    "game": str,
    "game_fingerprint": str,
    "betting": dict,
    "cards": dict,
    "dtype": str,
    "table_offset": int,
    "table_len": int,
    "checksum": str,
}


def load_strategy(
    path: str | Path,
    expected_game: Game | None = None,
    *,
    mmap_bytes: int = DEFAULT_MMAP_BYTES,
    verify_checksum: bool = True,
    tree: BettingTree | None = None,
    verify: str = "auto",
    note: bool = True,
) -> Strategy:
    """Load and fully validate a strategy file: the one validation every reader uses
    (``acpc-strategy inspect`` and the solvers directly, the agent and its hot-swap
    reloader through :func:`agent.strategy.hotswap.load_for_game`).

    Args:
        path: the file.
        expected_game: if given, the file must be for this game (same fingerprint).
        mmap_bytes: tables larger than this are memory-mapped instead of read.
        verify_checksum: check the sha256 of the table (on by default).
        tree: the abstract tree if the caller already built it for this game and
            abstraction (it is checked to be for the file's game and abstraction).
        verify: ``"auto"``: skip the checksum and row checks of a table that passed them
            before and cannot have changed since (:mod:`agent.strategy.verified`), check
            and record any other; ``"full"``: always check (and record).
        note: print the one-line note (once per file) that a version 1 or 2 header is not
            covered by a checksum.

    Raises:
        StrategyFileError: for a wrong tag or version, another game, a table whose size
            does not fit the tree, NaN values, rows not summing to 1, a truncated file or
            a checksum mismatch, each with a precise message.
    """
    source = str(path)
    if verify not in VERIFY_MODES:
        raise UsageError(f"expected verify to be one of {', '.join(VERIFY_MODES)}, got "
                         f"{verify!r}")
    header, st, stored = _read_header_raw(path)
    size = st.st_size
    for key, kind in _REQUIRED.items():
        if key not in header:
            raise _fail(source, f"corrupt header: missing {key!r}")
        if not isinstance(header[key], kind) or isinstance(header[key], bool):
            raise _fail(source, f"corrupt header: expected {key!r} to be "
                        f"{getattr(kind, '__name__', kind)}, got {excerpt(header[key])}")
    if header["format"] != FORMAT_TAG:
        raise _fail(source, f"expected format {FORMAT_TAG!r}, got {excerpt(header['format'])}")
    if header["version"] not in READ_VERSIONS:
        raise _fail(source, f"expected format version 1 to {FORMAT_VERSION}, got "
                    f"{excerpt(header['version'])} (written by a different acpc-arena?)")
    _check_header_keys(header, source, note, stored)
    if header["version"] == 1 and isinstance(header.get("betting"), dict) and (
        {"players", "sequences"} & set(header["betting"])
    ):
        raise _fail(source, "corrupt header: a version 1 file cannot hold per-player or "
                    "per-sequence bet sizes")
    try:
        game = parse_gamedef(header["game"], f"{source}[game]")
    except GameDefError as exc:
        raise _fail(source, f"corrupt header: {exc}") from None
    if game.fingerprint != header["game_fingerprint"]:
        raise _fail(source, "corrupt header: the game text does not match its fingerprint")
    if expected_game is not None and expected_game.fingerprint != game.fingerprint:
        raise _fail(source, f"strategy is for another game: file game fingerprint "
                    f"{game.fingerprint[:12]}, expected {expected_game.fingerprint[:12]} "
                    f"({_game_summary(game)} vs {_game_summary(expected_game)})")
    cards = dict(header["cards"])
    try:
        checked_cards = checked_card_spec(game, cards, "cards")
    except AbstractionError as exc:
        raise _fail(source, str(exc)) from None
    buckets = checked_cards.buckets
    try:
        get_mapping(header.get("default_mapping", "rand-pshar"),
                    from_file=f"{source}: default_mapping")
        from agent.strategy.purification import parse_purification

        parse_purification(_text(header.get("default_purification", "none")))
    except AbstractionError as exc:
        text = str(exc)
        raise _fail(source, text.removeprefix(f"{source}: ")
                    if "default_mapping" in text else f"default_purification: {text}") from None
    try:
        betting = parse_betting_abstraction(header["betting"])
        if tree is None or tree.game != game or tree.abstraction != betting:
            tree = load_tree(game, betting)
        layout = table_layout(tree, buckets)
    except (KeyError, TypeError, ValueError) as exc:
        raise _fail(source, f"corrupt header: {exc}") from None
    dtype = DTYPES.get(header["dtype"])
    if dtype is None:
        raise _fail(source, f"expected dtype 'float32' or 'uint16', got {excerpt(header['dtype'])}")
    if header["table_len"] != layout.total:
        raise _fail(source, f"table shape: the tree and buckets need {layout.total} values, "
                    f"the header says {header['table_len']}")
    offset = header["table_offset"]
    need = offset + layout.total * dtype.itemsize
    if offset % ALIGN or offset < 16:
        raise _fail(source, f"corrupt header: bad table offset {offset!r}")
    if size < need:
        raise _fail(source, f"truncated file: {size} bytes, the table needs {need}")
    if size > need:
        raise _fail(source, f"corrupt file: {size - need} unexpected bytes after the table")
    table: npt.NDArray[Any]
    nbytes = layout.total * dtype.itemsize
    trusted = verify == "auto" and verify_checksum and is_verified(st, header)
    if nbytes > mmap_bytes:
        # a table to check is read whole anyway (prefaulted); a trusted one is paged in
        # by the kernel's readahead and on first use, so that trusting it costs no pass
        table, table_st = _map_table(Path(path), dtype, offset, layout.total,
                                     populate=not trusted)
    else:
        with open(path, "rb") as f:
            table_st = os.fstat(f.fileno())
            f.seek(offset)
            raw = f.read(nbytes)
        table = np.frombuffer(raw, dtype=dtype)
    if _identity(table_st) != _identity(st):
        raise _fail(source, "the file changed while it was being read (replaced or written "
                    "to); try again")
    if header.get("checksum_algorithm", CHECKSUM_ALGORITHM) != CHECKSUM_ALGORITHM:
        raise _fail(source, f"expected checksum_algorithm {CHECKSUM_ALGORITHM!r}, got "
                    f"{excerpt(header['checksum_algorithm'])}")
    if not trusted:
        from agent.strategy.kernels import table_checksum

        if verify_checksum:
            digest = table_checksum(table)
            if digest != header["checksum"]:
                raise _fail(source, f"checksum mismatch: table {CHECKSUM_ALGORITHM} {digest}, "
                            f"header says {excerpt(header['checksum'])} (corrupt or edited file)")
        try:
            _check_rows(table, layout, source, quantized=dtype == DTYPES["uint16"], tree=tree)
        except ValueError as exc:
            raise _fail(source, str(exc)) from None
        if verify_checksum:
            mark_verified(path, st, header)
    return Strategy(Path(path), header, game, betting, cards, tree, layout, table,
                    header["checksum"], checked_cards)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise AbstractionError(f"expected a string, got {excerpt(value)}")
    return value


def _check_header_keys(header: dict[str, Any], source: str, note: bool, stored: bytes) -> None:
    """Version 3: exactly the known keys, of their types, the header checksum, and the
    header's bytes (``stored``, padding included) exactly as :func:`dump_strategy` encodes
    it; older versions: the optional keys' types, and the note that the header is
    unprotected."""
    for key, kind in _V3_OPTIONAL_IN_OLD.items():
        if key in header and (not isinstance(header[key], kind) or isinstance(header[key], bool)):
            raise _fail(source, f"corrupt header: expected {key!r} to be "
                        f"{getattr(kind, '__name__', kind)}, got {excerpt(header[key])}")
    if header["version"] < 3:
        if "header_checksum" in header:
            raise _fail(source, f"corrupt header: a version {header['version']} file has no "
                        f"'header_checksum'")
        if note:
            _note_unprotected(source, header["version"])
        return
    known = set(_REQUIRED) | set(_V3_OPTIONAL_IN_OLD)
    unknown = sorted(map(str, set(header) - known))
    missing = sorted(known - set(header))
    if unknown or missing:
        raise _fail(source, f"corrupt header: expected exactly the version 3 keys, got "
                    f"unknown {excerpt(unknown)}, missing {excerpt(missing)}")
    try:
        digest = header_checksum(header)
    except UsageError as exc:
        raise _fail(source, f"corrupt header: {exc}") from None
    if digest != header["header_checksum"]:
        raise _fail(source, f"header checksum mismatch: header sha256 {digest[:16]}..., the "
                    f"file says {header['header_checksum'][:16]!r}... (corrupt or edited "
                    f"header)")
    packed = msgpack.packb(header, use_bin_type=True)
    if stored != packed + b"\0" * (len(stored) - len(packed)):
        raise _fail(source, "corrupt header: its bytes or the zero padding after it differ "
                    "from the encoding the header checksum covers (edited file)")


def _map_table(path: Path, dtype: np.dtype[Any], offset: int, count: int, *,
               populate: bool = True) -> tuple[npt.NDArray[Any], os.stat_result]:
    """Memory-map the table read-only; with ``populate`` prefaulted where the OS allows
    (MAP_POPULATE), else with an asynchronous readahead hint (MADV_WILLNEED); with the
    ``fstat`` of the file mapped."""
    flags = mmap.MAP_SHARED | (getattr(mmap, "MAP_POPULATE", 0) if populate else 0)
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        mapped = mmap.mmap(f.fileno(), 0, flags=flags, prot=mmap.PROT_READ)
    if not populate and hasattr(mapped, "madvise") and hasattr(mmap, "MADV_WILLNEED"):
        with contextlib.suppress(OSError):
            mapped.madvise(mmap.MADV_WILLNEED)
    return np.frombuffer(mapped, dtype=dtype, count=count, offset=offset), st


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _game_summary(game: Game) -> str:
    return (f"{game.betting_type.value} {game.num_players}p {game.num_rounds} rounds, "
            f"{game.num_suits}x{game.num_ranks} deck")
